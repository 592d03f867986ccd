#!/usr/bin/env python3
"""The v1/v2 compatibility table, computed from the two reference oracles.

    python3 scripts/compat_table.py                    # print the Markdown table
    python3 scripts/compat_table.py --write /tmp/compat.md  # then paste it into the README

Runs a representative line of every canonical shape of each revision (and a
few lines a controller might write to reach both) through `oracle-newest`
(the v1 engine, the crate root's reference) and `oracle-latest-next` (the v2
engine, upstream openseek's protocol @ fdf10827), and prints, per line, what
each engine does with it and what that means. The verdict columns come from
the oracles; the last column is a note written here, and each row states the
outcome kinds the note assumes, which the script checks against the oracles
(so a note cannot silently go stale). Dev tool; Python 3 standard library.
"""

import argparse
import sys
from pathlib import Path

sys.dont_write_bytecode = True  # no scripts/__pycache__ entries for v2lines
sys.path.insert(0, str(Path(__file__).resolve().parent))
from v2lines import JPEG, ORACLE_LATEST, ORACLE_NEWEST, PNG, b64, dumps, run_oracle  # noqa: E402

SMALL_PNG = b64(PNG[:8])  # the bare 8-byte signature: enough for the sniffing
SMALL_JPEG = b64(JPEG[:3])

# (group, line, expected v1 kind, expected v2 kind, what this means)
ROWS = [
    ("v1", {"command": "prompt", "text": "fix it"}, "OK", "OK",
     "Same prompt. A v2 engine re-encodes it with `content`."),
    ("v1", {"command": "prompt", "text": "fix it", "submission_id": "s-1"}, "OK", "OK",
     "Same tagged prompt."),
    ("v1", {"command": "steer", "kind": "prompt", "text": "also this"}, "OK", "OK",
     "Same steer."),
    ("v1", {"command": "steer", "kind": "command", "text": "/diff"}, "OK", "OK",
     "Same command steer."),
    ("v1", {"command": "steer", "text": "also this"}, "OK", "OK",
     "Both read a steer without `kind` as a prompt steer."),
    ("v1", {"command": "compact"}, "OK", "OK", "Unchanged."),
    ("v1", {"command": "cancel"}, "OK", "OK", "Unchanged."),
    ("v1", {"command": "goal", "action": "set", "text": "ship it"}, "OK", "OK", "Unchanged."),
    ("v1", {"command": "goal", "action": "set", "text": "ship it", "auto": True}, "OK", "OK", "Unchanged."),
    ("v1", {"command": "goal", "action": "clear"}, "OK", "OK", "Unchanged."),
    ("v1", {"command": "approval", "id": "ap-1", "allow": True}, "OK", "OK", "Unchanged."),
    ("v1", {"command": "approval", "id": "ap-1", "allow": False}, "OK", "OK", "Unchanged."),
    ("v2", {"command": "prompt", "content": "fix it"}, "ERR", "OK",
     "A v1 engine refuses every `content` line: a v2 controller cannot prompt it."),
    ("v2", {"command": "prompt", "content": "fix it", "submission_id": "s-1"}, "ERR", "OK",
     "Same: refused by v1."),
    ("v2", {"command": "prompt", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}, "ERR", "OK",
     "Multi-part content: v1 refuses."),
    ("v2", {"command": "prompt", "content": [{"type": "text", "text": "what is this?"}, {"type": "image", "media_type": "image/png", "data": SMALL_PNG}]}, "ERR", "OK",
     "Images exist only in v2."),
    ("v2", {"command": "steer", "kind": "prompt", "content": "also this"}, "ERR", "OK",
     "A v2 steer is refused by v1."),
    ("v2", {"command": "steer", "kind": "command", "content": "/diff", "submission_id": "s-2"}, "ERR", "OK",
     "A tagged v2 steer is refused by v1."),
    ("v2", {"command": "jobs_snapshot", "request_id": "r1"}, "ERR", "OK",
     "Job commands are unknown to v1."),
    ("v2", {"command": "job_stop", "request_id": "r1", "generation": "g-1", "job_id": "j-1"}, "ERR", "OK",
     "Job commands are unknown to v1."),
    ("both", {"command": "predict", "request_id": "p-1", "source_sequence": 42}, "ERR", "ERR",
     "642262b0's prediction command, gone since fdf10827 (the engine predicts by itself): unknown to both engines, `unknown command: predict`; `cancel_prediction` likewise."),
    ("both", {"command": "steer", "kind": "command", "text": "/diff", "submission_id": "s-2"}, "OK", "OK",
     "A tagged steer in the legacy `text` form: v2 keeps the tag, a v1 engine accepts the steer and silently loses the tag."),
    ("both", {"command": "prompt", "text": "what is this?", "images": ["data:image/jpeg;base64," + SMALL_JPEG]}, "OK", "OK",
     "Legacy `text` + `images`: v2 attaches the image; a v1 engine reads the text and silently drops the image."),
    ("both", {"command": "prompt", "text": "fix it", "content": "fix it"}, "OK", "OK",
     "`text` and `content` both, equal: each engine reads its own field, the same prompt."),
    ("both", {"command": "prompt", "text": "old", "content": "new"}, "OK", "OK",
     "`text` and `content` differ: the two engines run different prompts. Never write two different texts."),
    ("both", {"command": "prompt", "text": "fix it", "content": 7}, "OK", "ERR",
     "A malformed `content` never falls back to `text` in v2; v1 never looks at it."),
    ("v1", {"command": "prompt", "text": "fix it", "images": "none"}, "OK", "ERR",
     "A field v1 ignored and v2 reads: a v1 line with a stray `images` can be refused by v2."),
    ("v1", {"command": "steer", "text": "also this", "submission_id": 7}, "OK", "ERR",
     "Same for a steer's `submission_id`: v1 never read it, v2 requires a string."),
    ("both", {"command": "steer", "submission_id": 7}, "ERR", "ERR",
     "Both refuse, in different words: v2 checks a steer's `submission_id` first."),
    ("both", {"command": "steer", "content": "x", "kind": "notice"}, "ERR", "ERR",
     "Both refuse, in different words: v1 wants `text` before it looks at `kind`."),
]


def verdict(kind, value):
    if kind == "OK":
        return f"accepts: `{value}`"
    if kind == "ERR":
        return f'refuses: "{value}"'
    return "not JSON"


def table():
    rows = sorted(ROWS, key=lambda r: ["v1", "v2", "both"].index(r[0]))  # stable
    lines = [dumps(line) for _, line, *_ in rows]
    v1 = run_oracle(ORACLE_NEWEST, lines)
    v2 = run_oracle(ORACLE_LATEST, lines)
    out = [
        "| written by | line | v1 engine (`oracle-newest`) | v2 engine (`oracle-latest-next`) | what this means |",
        "| --- | --- | --- | --- | --- |",
    ]
    stale = []
    for (group, _, e1, e2, note), line, (k1, m1), (k2, m2) in zip(rows, lines, v1, v2):
        if (k1, k2) != (e1, e2):
            stale.append(f"{line}: expected {e1}/{e2}, oracles say {k1}/{k2}")
        if k1 == "OK" and k2 == "OK" and m1 == m2:
            v2cell = "accepts: the same line"
        else:
            v2cell = verdict(k2, m2)
        who = {"v1": "v1 controller", "v2": "v2 controller", "both": "either"}[group]
        out.append(f"| {who} | `{line}` | {verdict(k1, m1)} | {v2cell} | {note} |")
    if stale:
        raise SystemExit("notes no longer match the oracles:\n" + "\n".join(stale))
    return "\n".join(out) + "\n"


ADVICE = """\
## What to run (advice to an engine author)

- Run the v2 revision (`serve_command::v2`). A v2 engine reads every line a
  v1 engine accepts the same way, unless the line carries one of the three
  fields v1 ignored and v2 reads: `content`, `images`, or a steer's
  `submission_id` (checked over the v1 and v2 vectors and 100000 generated
  lines: 8629 v1-accepted lines without those fields, none read
  differently). A v1 engine refuses every line a v2 controller writes with
  `content`: `expected a string "text" field`.
- Keep the v1 revision only to reproduce an old engine byte for byte: it is
  the only one whose canonical lines still use `text`, which an engine that
  logs or replays lines to a v1 consumer needs.
- Do not treat the canonical re-encoding as the input: a v2 engine writes
  `content` for a line that said `text`, and a v1 engine drops `images` and
  a steer's `submission_id` without an error. Compare decoded commands, not
  lines, across revisions.
- The wire carries no version. An engine cannot tell a v1 controller from a
  v2 one except by which fields a line uses, and it does not need to: v2
  reads both forms.
- A controller that must drive engines of either revision writes the legacy
  `text` form: both accept it. What it cannot get from a v1 engine is
  images, tags on steers and the job commands; a v1 engine answers a job
  command with `unknown command: jobs_snapshot`, which is how a controller
  can tell it is talking to one.
- Never write both `text` and `content` with different texts: each engine
  reads its own field and they run different prompts.
- Error strings changed in a few places (a steer's bad `submission_id` is
  reported before its missing text in v2; content errors are
  `invalid content: JsonDecodeError((<path>, <message>))`): a controller that
  matches on `command_error` text must know which engine it talks to.
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", metavar="FILE", help="write the table and the advice to FILE")
    args = ap.parse_args()
    t = table()
    if args.write:
        head = (
            "# v1 and v2: what each engine does with the other's lines\n\n"
            "Generated by `python3 scripts/compat_table.py --write FILE` from\n"
            "`oracle-newest` (v1, the seed's `command.mbt`) and `oracle-latest-next` (v2,\n"
            "upstream openseek's `command.mbt` @ fdf10827). \"accepts\" shows the canonical\n"
            "line the engine re-encodes the command to.\n\n"
        )
        Path(args.write).write_text(head + t + "\n" + ADVICE, encoding="utf-8")
    else:
        sys.stdout.write(t)


if __name__ == "__main__":
    main()
