"""Shared pieces of the v2 dev scripts: minimal image files, base64 near-misses,
and a runner for the reference oracles. Python 3 standard library only.

Not shipped: `make_vectors_v2.py`, `v2_differential.py` and `compat_table.py`
import it from `scripts/`.
"""

import base64
import json
import os
import subprocess
import struct
from pathlib import Path

ORACLE_DIR = Path(
    os.environ.get(
        "REFERENCE_ORACLE",
        Path(__file__).resolve().parent.parent.parent / "shared" / "reference-oracle",
    )
)
if not ORACLE_DIR.is_dir():
    ORACLE_DIR = Path("/work/shared/reference-oracle")
# The v2 engine: upstream openseek @ fdf10827 (the oracle's next/README.md;
# `oracle-latest` is the 642262b0 pin before it, with `predict`).
ORACLE_LATEST = ORACLE_DIR / "oracle-latest-next"
ORACLE_NEWEST = ORACLE_DIR / "oracle-newest"  # the v1 engine (the crate root)

# Real minimal file headers, a few dozen bytes each: the reference sniffs only
# the first 3 to 12 bytes, but a vector that looks like a file reads better.
PNG = (
    b"\x89PNG\r\n\x1a\n"
    + b"\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"
)  # 33 bytes: signature + the IHDR of a 1x1 RGBA image
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00\xff\xd9"  # 22
GIF87 = b"GIF87a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;"
GIF89 = b"GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;"
_VP8L = b"VP8L" + struct.pack("<I", 10) + b"\x2f\x00\x00\x00\x10\x07\x10\x11\x11\x88"
WEBP = b"RIFF" + struct.pack("<I", 4 + len(_VP8L)) + b"WEBP" + _VP8L  # 30 bytes

IMAGES = {
    "png": (PNG, "image/png"),
    "jpeg": (JPEG, "image/jpeg"),
    "gif87a": (GIF87, "image/gif"),
    "gif89a": (GIF89, "image/gif"),
    "webp": (WEBP, "image/webp"),
}
MEDIA_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"]


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def base64_near_misses(data: bytes):
    """(why, text) pairs: strings that are NOT the canonical padded base64 of
    any byte string, derived from the canonical encoding of `data`."""
    s = b64(data)
    out = []
    body = s.rstrip("=")
    pad = len(s) - len(body)
    if pad:
        out.append(("unpadded", body))
        out.append(("one padding char too many", s + "="))
        if pad == 2:
            out.append(("one of two padding chars missing", s[:-1]))
    else:
        out.append(("padding where none belongs", s + "=="))
    # Trailing bits: the last data char before padding carries unused bits
    # that canonical base64 leaves zero.
    if pad:
        alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
        last = alphabet.index(body[-1])
        out.append(("nonzero trailing bits", body[:-1] + alphabet[last | 1] + "=" * pad))
    out.append(("space inside", s[:4] + " " + s[4:]))
    out.append(("LF inside", s[:4] + "\n" + s[4:]))
    out.append(("trailing LF", s + "\n"))
    out.append(("tab inside", s[:8] + "\t" + s[8:]))
    out.append(("CR inside", s[:8] + "\r" + s[8:]))
    out.append(("leading space", " " + s))
    out.append(("padding in the middle", "AA==" + s))
    out.append(("a non-alphabet character", s[:-4] + "*" + s[-3:]))
    out.append(("a non-ASCII character", s[:4] + "\u00e9" + s[5:]))
    out.append(("one char short of a quartet", s[:-1] if not pad else body[:-1]))
    return out


def run_oracle(oracle, lines, json_mode=True):
    """Run one oracle over `lines` (no LF inside). With json_mode, returns a
    list of ("OK", canonical) / ("ERR", message) / ("NOTJSON", None), lossless;
    else the raw output lines."""
    for l in lines:
        assert "\n" not in l, l
    data = "".join(l + "\n" for l in lines).encode("utf-8")
    args = [str(oracle)] + (["--json"] if json_mode else [])
    out = subprocess.run(args, input=data, stdout=subprocess.PIPE, check=True).stdout
    rows = out.decode("utf-8").split("\n")
    assert rows[-1] == "", "oracle output does not end with LF"
    rows = rows[:-1]
    assert len(rows) == len(lines), (len(rows), len(lines))
    if not json_mode:
        return rows
    res = []
    for r in rows:
        v = json.loads(r)
        if v[0] == "OK":
            assert v[2] == "roundtrip-ok", r
            res.append(("OK", v[1]))
        elif v[0] == "ERR":
            res.append(("ERR", v[1]))
        elif v[0] == "NOTJSON":
            res.append(("NOTJSON", None))
        else:
            raise SystemExit(f"oracle said {r}")
    return res


def upstream_cases(name):
    """The `(source, line, kind, expected)` cases of one of the oracle's
    `next/upstream_tests_*.py` (upstream's own test expectations, as lines
    and the answers they assert), read without running the oracle: the
    script's text up to where it starts the oracle. `kind` is `exact`
    (`expected` is the oracle's whole answer), `okrt` (`OK` and the line
    itself, a round trip), `okarray` (that, `content` written as an array),
    `errprefix` (the answer starts with `expected`) or `noenv` (`OK`, no
    log-envelope key written)."""
    text = (ORACLE_DIR / "next" / name).read_text(encoding="utf-8")
    head, sep, _ = text.partition("\ninp = ")
    if not sep:
        raise SystemExit(f"{name}: no `inp = ` line, the format changed")
    scope = {"__file__": str(ORACLE_DIR / "next" / name)}
    exec(compile(head, name, "exec"), scope)  # noqa: S102 (the oracle's own file)
    return scope["cases"]


def upstream_holds(kind, expected, answer):
    """Whether the oracle's plain `answer` (`OK <line>`, `ERR <message>`,
    `NONE`, `NOTJSON`) is what an upstream case of `kind` asserts."""
    if kind in ("exact", "okrt"):
        return answer == expected
    if kind == "okarray":
        return answer == expected and isinstance(json.loads(answer[3:]).get("content"), list)
    if kind == "errprefix":
        return answer.startswith(expected)
    if kind == "noenv":
        return answer.startswith("OK ") and not (
            {"timestamp", "level", "source", "category"} & set(json.loads(answer[3:]))
        )
    raise SystemExit(f"unknown upstream case kind {kind}")


def dumps(v) -> str:
    """A compact JSON line, non-ASCII raw (as a controller would write it)."""
    return json.dumps(v, ensure_ascii=False, separators=(",", ":"))
