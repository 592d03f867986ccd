#!/usr/bin/env python3
"""Run the conformance vectors through the reference oracle and compare.

    python3 scripts/vectors_vs_oracle.py /path/to/oracle-newest

The oracle (a development tool, not needed by the crate, its tests or CI)
prints one line per input line: `OK <canonical line>`, `ERR <message>`
(LF and CR in it as \\n and \\r) or `NOTJSON`. Vectors it cannot judge are
skipped and counted: lines that are not UTF-8 (its Node driver turns
invalid bytes into U+FFFD first) and lines holding an LF (it reads one
line per input line). Exit status 1 on any mismatch.
"""
import base64
import json
import subprocess
import sys
from pathlib import Path

VECTORS = Path(__file__).resolve().parent.parent / "tests/vectors/commands.jsonl"


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    judged, lines, skipped = [], [], 0
    # split("\n"), not splitlines(): some vectors hold a raw U+2028.
    for text in VECTORS.read_text(encoding="utf-8").rstrip("\n").split("\n"):
        v = json.loads(text)
        raw = v["line"].encode() if "line" in v else base64.b64decode(v["line_base64"], validate=True)
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            skipped += 1
            continue
        if b"\n" in raw:
            skipped += 1
            continue
        judged.append(v)
        lines.append(raw)
    out = subprocess.run(
        [sys.argv[1]], input=b"".join(l + b"\n" for l in lines), capture_output=True, check=True
    ).stdout.decode("utf-8").split("\n")
    bad = 0
    for v, raw, got in zip(judged, lines, out):
        if "ok" in v:
            want = "OK " + v["ok"]
        elif "error" in v:
            want = "ERR " + v["error"].replace("\n", "\\n").replace("\r", "\\r")
        else:
            want = "NOTJSON"
        if got != want:
            bad += 1
            print(f"MISMATCH {v['why']}: {raw!r}\n  vector {want!r}\n  oracle {got!r}")
    print(f"{len(judged)} vectors judged by the oracle, {bad} mismatches, {skipped} it cannot judge")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
