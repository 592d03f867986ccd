#!/usr/bin/env python3
"""Differential run for what `openseek serve` answers: generated lines
through the engine's oracle (`oracle-serve-next` for v2, upstream @
fdf10827; `oracle-serve-v1` for v1) and through a second program, compared
verdict for verdict.

    python3 scripts/serve_differential.py --revision v2          # 100000 lines, seed 1
    python3 scripts/serve_differential.py --revision v1 -n 200000 --seed 7
    python3 scripts/serve_differential.py --revision v2 --cmd "PROGRAM ARGS"
    python3 scripts/serve_differential.py --write-lines FILE      # keep the lines

The lines are scripts/v2_differential.py's mix (content arrays and their
near misses, images valid and broken, legacy `text` + `images`, tags, job
commands, the unchanged commands, noise keys, escapes, duplicate keys, lines
that are not JSON), with what the engine refuses weighted in: goal texts of
every kind of whitespace (tab, LF, CR and space, alone and mixed, and the
characters that are not blank to the engine: U+3000, NBSP, VT, FF, U+2028,
U+200B, U+0085, U+FEFF, ...), written raw or as `\\uXXXX` and short
escapes, with `auto` and duplicate keys; steers of each kind with valid
images in `content` and in legacy `images` (and empty `images`); for v1,
more legacy `text` messages. Deterministic for a seed and revision.

Both programs read the lines on stdin, one per line, and print one line
each: `OK <canonical line>`, `ERR <message>` (a parse error, or the
engine's refusal of a command; LF and CR written as `\\n` `\\r`) or
`NOTJSON`, the oracle's own format. The default program is
`cargo run -q --features cli -- decode --revision REV --serve-policy --format verdict`.
Until that flag exists, `--cmd` takes any program of the same protocol
(a scratch binary over `Command::from_slice` and `serve_refusal`).
Self-checks (seed 1, 100000 lines): the oracle against itself agrees on
every line; the plain parser (`oracle-latest-next`, `oracle-newest`)
disagrees on 17331 (v2) and 10851 (v1) lines, and a refusal written with
`str::trim` on 4830 (v1): the refusals, and the whitespace that is not
blank, are exercised. Prints the
first 20 disagreements (line, expected, got), the oracle's verdicts by kind
(refusals by message), `N/M agree`, and the time each program took. Exit
status 1 on any disagreement. Dev tool only; Python 3 standard library only.
"""

import argparse
import os
import sys
from pathlib import Path

sys.dont_write_bytecode = True  # no scripts/__pycache__ entries
sys.path.insert(0, str(Path(__file__).resolve().parent))
from v2_differential import Gen, run  # noqa: E402
from v2lines import IMAGES, b64  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
# v2: upstream @ fdf10827 (the oracle's next/README.md)
ENGINES = {"v1": "oracle-serve-v1", "v2": "oracle-serve-next"}
DEFAULT_CMD = "cargo run -q --features cli -- decode --revision {revision} --serve-policy --format verdict"

BLANK_CHARS = [" ", "\t", "\n", "\r"]
# Whitespace to someone, but not blank to the engine (String::is_blank).
NOT_BLANK_CHARS = [
    "\u3000", "\u00a0", "\u000b", "\u000c", "\u2028", "\u2029", "\u200b", "\u0085", "\ufeff",
    "\u1680", "\u2000", "\u2003", "\u200a", "\u202f", "\u205f", "\u180e", "\u0000", "\u0008",
    "\u001c", "\u001f", "\u007f", "x", ".", "😀",
]


class ServeGen(Gen):
    def __init__(self, seed, revision, prediction_share=0.0):
        super().__init__(seed, prediction_share)
        self.revision = revision

    # --- writing: every form a blank character can take in a JSON string ----
    def string(self, s):
        if not self.escapes:
            return super().string(s)
        out = []
        for ch in s:
            forms = {
                " ": [" ", " ", "\\u0020"],
                "\t": ["\\t", "\\u0009"],
                "\n": ["\\n", "\\u000a", "\\u000A"],
                "\r": ["\\r", "\\u000d", "\\u000D"],
                "\u000c": ["\\f", "\\u000c", "\\u000C"],
                "\u0008": ["\\b", "\\u0008"],
                "\u000b": ["\\u000b", "\\u000B"],
            }.get(ch)
            out.append(self.pick(forms) if forms else super().string(ch)[1:-1])
        return '"' + "".join(out) + '"'

    # --- values ---------------------------------------------------------------
    def whitespace(self):
        roll = self.r.random()
        if roll < 0.1:
            return ""
        s = [self.pick(BLANK_CHARS) for _ in range(self.pick([1, 1, 2, 3, 5, 8, 40]))]
        if roll < 0.55:
            # One character that is not blank, somewhere among blank ones.
            s.insert(self.r.randint(0, len(s)), self.pick(NOT_BLANK_CHARS))
        return "".join(s)

    def text(self):
        return self.whitespace() if self.chance(0.3) else super().text()

    def good_image_part(self):
        raw, mt = IMAGES[self.pick(list(IMAGES))]
        return self.obj([("type", "image"), ("media_type", mt), ("data", b64(raw))], noise=0.1)

    def good_data_url(self):
        raw, mt = IMAGES[self.pick(list(IMAGES))]
        return f"data:{mt};base64,{b64(raw)}"

    def message_fields(self):
        if self.revision == "v1" and self.chance(0.6):
            f = [("text", self.text() if self.chance(0.95) else self.any_value(1))]
            if self.chance(0.3):
                f.append(("images", [self.good_data_url() for _ in range(self.pick([0, 1, 2]))]))
            return f
        return super().message_fields()

    # --- what the engine refuses ------------------------------------------------
    def goal(self):
        roll = self.r.random()
        if roll < 0.8:
            pairs = [("command", "goal"), ("action", "set"), ("text", self.whitespace() if self.chance(0.7) else self.text())]
        elif roll < 0.9:
            pairs = [("command", "goal"), ("action", "clear")]
            if self.chance(0.5):
                pairs.append(("text", self.whitespace()))
        else:
            pairs = [("command", "goal"), ("action", self.pick(["set", "SET", " ", None, "clear "])), ("text", self.whitespace())]
            if self.chance(0.3):
                pairs.append(("text", self.any_value(1)))
        if self.chance(0.5):
            pairs.append(("auto", self.pick([True, False, True, None, "true", 1])))
        return self.obj(pairs, noise=0.15, dup=0.1)

    def image_steer(self):
        kind = self.pick([("kind", "command")] * 6 + [("kind", "prompt"), None, ("kind", "Command")])
        roll = self.r.random()
        if roll < 0.45:
            parts = [self.good_image_part() if self.chance(0.5) else self.text_part() for _ in range(self.pick([0, 1, 1, 2, 3]))]
            if self.chance(0.1):
                parts.append(self.image_part())  # maybe broken: a parse error comes first
            fields = [("content", parts)]
        elif roll < 0.85:
            fields = [("text", self.text()), ("images", [self.good_data_url() for _ in range(self.pick([0, 0, 1, 1, 2]))])]
        else:
            fields = [("content", self.content()), ("images", [self.good_data_url()])]
        return self.obj([("command", "steer"), kind] + fields + [self.tag()], noise=0.15)

    def line(self):
        self.escapes = self.chance(0.3)
        roll = self.r.random()
        if roll < 0.3:
            v = self.goal()
        elif roll < 0.55:
            v = self.image_steer()
        else:
            return super().line()  # the ordinary mix
        s = self.write(v)
        if self.chance(0.02):
            roll = self.r.random()
            if roll < 0.4 and len(s) > 1:
                s = s[: self.r.randrange(1, len(s))]
            elif roll < 0.7:
                i = self.r.randrange(len(s) + 1)
                s = s[:i] + self.pick([",", "}", "]", "'", "x", "\u0001", "\\", "\t"]) + s[i:]
            else:
                s = s + self.pick([" x", ",", "{}", " "])
        return s.replace("\n", "\\n")  # a line never holds a raw LF


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=100_000, help="lines to generate (default 100000)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--revision", choices=sorted(ENGINES), default="v2")
    ap.add_argument("--cmd", help=f"program to compare (default: {DEFAULT_CMD})")
    default = os.environ.get("REFERENCE_ORACLE", str(ROOT.parent / "shared" / "reference-oracle"))
    ap.add_argument("--oracle-dir", default=default, help=f"the built reference oracles (default {default})")
    ap.add_argument("--write-lines", metavar="FILE", help="also write the generated lines to FILE")
    ap.add_argument("--prediction-share", type=float, default=0.0, metavar="P",
                    help="of the ordinary mix's lines, make a share P retired prediction commands on top of its own")
    args = ap.parse_args()
    cmd = args.cmd or DEFAULT_CMD.format(revision=args.revision)
    oracle = Path(args.oracle_dir) / ENGINES[args.revision]

    g = ServeGen(args.seed, args.revision, args.prediction_share)
    lines = [g.line() for _ in range(args.n)]
    if args.write_lines:
        Path(args.write_lines).write_text("".join(l + "\n" for l in lines), encoding="utf-8")
    expected, t_oracle = run([str(oracle)], lines, ROOT)
    got, t_other = run(cmd, lines, ROOT)
    got += ["<missing>"] * (len(lines) - len(got))

    refusals = {"ERR goal text must not be blank", "ERR command steering does not accept images"}
    kinds = {}
    for e in expected:
        k = e if e in refusals else e.split(" ", 1)[0]
        kinds[k] = kinds.get(k, 0) + 1
    agree = 0
    shown = []
    for line, e, g_ in zip(lines, expected, got):
        if e == g_:
            agree += 1
        elif len(shown) < 20:
            shown.append((line, e, g_))
    for line, e, g_ in shown:
        cut = lambda s: s if len(s) <= 400 else s[:400] + f"... ({len(s)} chars)"  # noqa: E731
        print(f"line:     {cut(line)}\nexpected: {cut(e)}\ngot:      {cut(g_)}\n")
    print(f"{oracle.name} verdicts: {kinds}")
    print(f"{oracle.name}: {t_oracle:.1f} s; {cmd}: {t_other:.1f} s")
    print(f"{agree}/{len(lines)} agree")
    sys.exit(0 if agree == len(lines) else 1)


if __name__ == "__main__":
    main()
