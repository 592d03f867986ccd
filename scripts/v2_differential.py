#!/usr/bin/env python3
"""Differential run for the v2 revision: generated lines through
oracle-latest-next (upstream @ fdf10827) and through a second program,
compared verdict for verdict.

    python3 scripts/v2_differential.py                      # 100000 lines, seed 1
    python3 scripts/v2_differential.py -n 200000 --seed 7
    python3 scripts/v2_differential.py --cmd "PROGRAM ARGS"  # what to compare
    python3 scripts/v2_differential.py --write-lines FILE    # keep the lines
    python3 scripts/v2_differential.py --prediction-share 0.5  # half the lines predict

Generation is deterministic for a seed: near-miss content arrays (parts that
are not objects, unknown or missing types, missing or non-string fields),
images valid and broken (PNG, JPEG, GIF87a/89a, WebP headers; non-canonical
base64: unpadded, over-padded, trailing bits, whitespace, URL-safe, non-ASCII;
unsupported bytes; mismatched and odd media types), legacy `text` + `images`
data URLs, steers with and without tags and kinds, job commands valid and
near-miss, the retired prediction commands (`unknown command` since
fdf10827) with the fields 642262b0's guards read (ids around 128 UTF-16
units in 1- to 4-byte characters; `source_sequence` at the range's ends,
whole numbers spelled with fractions and exponents, decimals that round to
a whole double and ones that do not, overflow, underflow, exponents of 2^32
and 800-digit numbers, non-numbers), the
unchanged commands, noise keys with nested values, `\\u` and
`\\/` escapes, duplicate keys, random whitespace, and a few lines broken so
they are not JSON.

Both programs read the lines on stdin, one per line, and print one line
each: `OK <canonical line>`, `ERR <message>` (LF and CR in it written as
`\\n` `\\r`) or `NOTJSON`, the oracle's own format. The default program is
`cargo run -q --features cli -- decode --revision v2 --format verdict`.
A program may print `SKIP` for a line it cannot judge (a model over
serde_json refuses nesting past 128 and 1e400); those are counted apart.
`scripts/model_v2_verdicts.rs` is such a program for the test model
(tests/support/model_v2.rs); its doc comment says how to build it.
Self-checks (fdf10827): `--cmd <oracle-latest-next>` agrees 100000/100000
(seed 1), and the model 95672/95672 with 4328 skipped (NOTJSON, and what
serde_json refuses); with `--prediction-share 0.5`, 95433/95433, 4567
skipped.
Prints the first 20 disagreements (line, expected, got), `N/M agree`, and the
time each program took. Exit status 1 on any disagreement. Dev tool only;
Python 3 standard library only.
"""

import argparse
import random
import shlex
import subprocess
import sys
import time
from pathlib import Path

sys.dont_write_bytecode = True  # no scripts/__pycache__ entries for v2lines
sys.path.insert(0, str(Path(__file__).resolve().parent))
from v2lines import IMAGES, MEDIA_TYPES, ORACLE_LATEST, b64, base64_near_misses  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CMD = "cargo run -q --features cli -- decode --revision v2 --format verdict"


class Obj:
    """A JSON object as written: ordered (key, value) pairs, duplicates allowed."""

    def __init__(self, pairs):
        self.pairs = list(pairs)


class Raw:
    """Text written into the line verbatim (numbers like 1e400, -0)."""

    def __init__(self, text):
        self.text = text


class Gen:
    def __init__(self, seed, prediction_share=0.0):
        self.r = random.Random(seed)
        # The share of lines that are the retired prediction commands on top
        # of the mix's own (0: the mix alone, whose lines are as before).
        self.prediction_share = prediction_share

    def chance(self, p):
        return self.r.random() < p

    def pick(self, xs):
        return xs[self.r.randrange(len(xs))]

    # --- writing JSON, with escapes, whitespace, key order -----------------
    def ws(self):
        return self.pick(["", "", "", "", " ", "\t", "  ", "\r"]) if self.escapes else ""

    def string(self, s):
        out = ['"']
        for ch in s:
            o = ord(ch)
            if ch == '"':
                out.append('\\"')
            elif ch == "\\":
                out.append("\\\\")
            elif o < 0x20:
                out.append(self.pick(["\\u%04x" % o, "\\u%04X" % o]) if ch not in "\n\t" else self.pick(["\\n" if ch == "\n" else "\\t", "\\u%04x" % o]))
            elif self.escapes and ch == "/" and self.chance(0.5):
                out.append("\\/")
            elif self.escapes and self.chance(0.04):
                if o > 0xFFFF:
                    v = o - 0x10000
                    out.append("\\u%04x\\u%04x" % (0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF)))
                else:
                    out.append(self.pick(["\\u%04x", "\\u%04X"]) % o)
            else:
                out.append(ch)
        out.append('"')
        return "".join(out)

    def write(self, v):
        if isinstance(v, Raw):
            return v.text
        if v is None:
            return "null"
        if v is True:
            return "true"
        if v is False:
            return "false"
        if isinstance(v, (int, float)):
            return repr(v)
        if isinstance(v, str):
            return self.string(v)
        if isinstance(v, list):
            return "[" + ",".join(self.ws() + self.write(x) + self.ws() for x in v) + "]"
        if isinstance(v, Obj):
            return "{" + ",".join(self.ws() + self.string(k) + self.ws() + ":" + self.ws() + self.write(x) + self.ws() for k, x in v.pairs) + "}"
        raise TypeError(v)

    def obj(self, pairs, noise=0.25, dup=0.08, shuffle=0.3):
        """An object from pairs, maybe with noise keys, duplicates, shuffled."""
        pairs = [p for p in pairs if p is not None]
        if self.chance(noise):
            for _ in range(self.r.randint(1, 3)):
                pairs.insert(self.r.randint(0, len(pairs)), (self.noise_key(), self.any_value(3)))
        if pairs and self.chance(dup):
            k, v = self.pick(pairs)
            other = self.any_value(1) if self.chance(0.5) else v
            # The duplicate goes before or after: the last one wins.
            i = self.r.randint(0, len(pairs))
            pairs.insert(i, (k, other))
        if self.chance(shuffle):
            self.r.shuffle(pairs)
        return Obj(pairs)

    # --- values ----------------------------------------------------------------
    def noise_key(self):
        return self.pick(["x", "extra", "meta", "Text", "CONTENT", "kind2", "type_", "data", "url", "images", "ts", "é", "a/b", "", "text", "media_type", "id", "allow", "auto", "action"])

    def text(self):
        return self.pick([
            "", "x", "do it", "fix the failing test", "  ", "a\nb", "tab\there", 'quote " and \\ slash /',
            "é", "日本語", "😀", "\u2028", "\u007f", "\u0000", "/diff", "data:image/png;base64,AAAA",
            "x" * self.r.randint(0, 300),
        ])

    def any_value(self, depth):
        k = self.r.randrange(12 if depth > 0 else 8)
        if k == 0:
            return None
        if k == 1:
            return self.chance(0.5)
        if k == 2:
            return self.r.randint(-5, 10**6)
        if k == 3:
            return Raw(self.pick(["1e400", "-0", "0.5", "-1.5E-3", "1E2", "123456789012345678901234567890"]))
        if k in (4, 5, 6, 7):
            return self.text()
        if k in (8, 9):
            return [self.any_value(depth - 1) for _ in range(self.r.randint(0, 3))]
        if k == 10 and self.chance(0.05):
            d = self.r.randint(1, 140)  # serde_json stops at 128; the reference at 1024
            return Raw("[" * d + "]" * d)
        return self.obj([(self.noise_key(), self.any_value(depth - 1)) for _ in range(self.r.randint(0, 3))], noise=0)

    def image_bytes(self):
        kind = self.pick(list(IMAGES))
        raw, mt = IMAGES[kind]
        roll = self.r.random()
        if roll < 0.6:
            raw = raw[: self.r.randint(min(len(raw), 12), len(raw))] + bytes(self.r.randrange(256) for _ in range(self.r.randint(0, 8)))
        elif roll < 0.8:
            # A signature near-miss: cut short or one byte changed.
            raw = bytearray(raw[:12])
            if self.chance(0.5):
                raw = raw[: self.r.randint(0, 11)]
            elif raw:
                raw[self.r.randrange(len(raw))] ^= 1 << self.r.randrange(8)
            raw = bytes(raw)
            mt = self.pick(MEDIA_TYPES)
        elif roll < 0.9:
            raw = bytes(self.r.randrange(256) for _ in range(self.r.randint(0, 20)))
            mt = self.pick(MEDIA_TYPES)
        return raw, mt

    def media_type(self, sniffed):
        roll = self.r.random()
        if roll < 0.7:
            return sniffed
        if roll < 0.9:
            return self.pick(MEDIA_TYPES)
        return self.pick(["IMAGE/PNG", "image/jpg", "", " image/png", "image/png ", "image/pñg", "画像/gif", "image/png;x=y", "image/webp\n", "😀"])

    def b64_data(self, raw):
        if self.chance(0.75):
            return b64(raw)
        misses = base64_near_misses(raw) if raw else [("empty", ""), ("junk", "=")]
        misses.append(("url-safe", b64(raw).replace("+", "-").replace("/", "_")))
        misses.append(("junk", self.pick(["!!", "AA", "A", "====", "QQ==QQ==", "Zh=="])))
        return self.pick(misses)[1]

    def image_part(self):
        raw, mt = self.image_bytes()
        media = self.media_type(mt)
        data = self.b64_data(raw)
        pairs = [("type", "image"), ("media_type", media), ("data", data)]
        roll = self.r.random()
        if roll < 0.05:
            pairs[1] = ("media_type", self.any_value(1))
        elif roll < 0.1:
            pairs[2] = ("data", self.any_value(1))
        elif roll < 0.13:
            del pairs[self.r.randint(1, 2)]
        return self.obj(pairs, noise=0.15)

    def text_part(self):
        pairs = [("type", "text"), ("text", self.text())]
        roll = self.r.random()
        if roll < 0.08:
            pairs[1] = ("text", self.any_value(1))
        elif roll < 0.12:
            del pairs[1]
        return self.obj(pairs, noise=0.15)

    def part(self):
        roll = self.r.random()
        if roll < 0.45:
            return self.text_part()
        if roll < 0.85:
            return self.image_part()
        if roll < 0.93:
            t = self.pick([None, 1, "Text", "video", "", "image ", ["text"], "IMAGE", "input_text"])
            return self.obj([("type", t), ("text", "x")] if self.chance(0.7) else [("text", "x")])
        return self.any_value(1)

    def content(self):
        roll = self.r.random()
        if roll < 0.3:
            return self.text()
        if roll < 0.9:
            n = self.pick([0, 1, 1, 1, 2, 2, 3, 4, 11])
            return [self.part() for _ in range(n)]
        return self.any_value(1)

    def data_url(self):
        raw, mt = self.image_bytes()
        media = self.media_type(mt)
        data = self.b64_data(raw)
        roll = self.r.random()
        if roll < 0.85:
            return f"data:{media};base64,{data}"
        return self.pick([
            f"DATA:{media};base64,{data}", f"data:{media},{data}", f"data:{media};base64{data}",
            f"data:{media};base64,{data};base64,AAAA", f"data:;base64,{data}", "http://x/y.png", "",
            f"data:{media};charset=x;base64,{data}",
        ])

    def message_fields(self):
        """content, or legacy text (+ images), or neither, or both."""
        roll = self.r.random()
        if roll < 0.6:
            f = [("content", self.content())]
            if self.chance(0.1):
                f.append(("text", self.text() if self.chance(0.5) else self.any_value(1)))
            return f
        if roll < 0.92:
            f = [("text", self.text() if self.chance(0.9) else self.any_value(1))]
            r2 = self.r.random()
            if r2 < 0.5:
                f.append(("images", [self.data_url() for _ in range(self.pick([0, 1, 1, 2, 3]))]))
            elif r2 < 0.6:
                f.append(("images", self.any_value(2)))
            return f
        return []

    def tag(self):
        roll = self.r.random()
        if roll < 0.5:
            return None
        if roll < 0.85:
            return ("submission_id", self.pick(["s-1", "", "sub é", "x" * 50]))
        return ("submission_id", self.any_value(1))

    def prompt(self):
        return self.obj([("command", "prompt")] + self.message_fields() + [self.tag()])

    def steer(self):
        kind = None
        roll = self.r.random()
        if roll < 0.35:
            kind = ("kind", "prompt")
        elif roll < 0.7:
            kind = ("kind", "command")
        elif roll < 0.85:
            kind = ("kind", self.pick(["Prompt", "notice", "", "command ", "cmd"]))
        elif roll < 0.9:
            kind = ("kind", self.any_value(1))
        return self.obj([("command", "steer"), kind] + self.message_fields() + [self.tag()])

    def component(self):
        roll = self.r.random()
        if roll < 0.6:
            alphabet = "abcXYZ019-_."
            return "".join(self.pick(alphabet) for _ in range(self.pick([1, 2, 5, 12, 199, 200, 200, 201, 202])))
        if roll < 0.75:
            return self.pick(["", ".", "..", "...", "a..b", "-", "_"])
        if roll < 0.92:
            base = "job-" + str(self.r.randint(0, 999))
            i = self.r.randint(0, len(base))
            return base[:i] + self.pick(["/", "\\", " ", "é", "😀", ":", "+", "\n", "\u0000", "ａ", "*"]) + base[i:]
        return self.any_value(1)

    def job(self):
        rid = self.pick(["r1", "r", " ", "é", ""]) if self.chance(0.9) else self.any_value(1)
        pairs = [("request_id", rid)] if self.chance(0.93) else []
        if self.chance(0.5):
            return self.obj([("command", "jobs_snapshot")] + pairs)
        for k in ("generation", "job_id"):
            if self.chance(0.96):
                pairs.append((k, self.component()))
        return self.obj([("command", self.pick(["job_stop"] * 9 + ["jobs_snapshot"]))] + pairs)

    def prediction_id(self):
        roll = self.r.random()
        if roll < 0.55:
            return self.pick(["p", "p-1", " ", "é", "日本", "😀", "a\nb", "\u0000"])
        if roll < 0.85:
            # Around the 128-UTF-16-unit limit, in 1-, 2-, 3- and 4-byte chars.
            ch = self.pick(["a", "é", "日", "😀"])
            units = 2 if ch == "😀" else 1
            n = self.r.randint(126, 130) // units
            s = ch * n
            if self.chance(0.3):
                s = "a" * self.r.randint(125, 128) + "😀"
            return s
        if roll < 0.9:
            return ""
        return self.any_value(1)

    def sequence(self):
        roll = self.r.random()
        if roll < 0.35:
            return Raw(self.pick([
                "0", "-0", "0.0", "-0.0", "0e0", "1", "-1", "1.0", "1e0", "1E+0", "10e-1", "0.1e1", "2.5e1",
                "1.5", "0.5", "2147483647", "2147483647.0", "2147483648", "-2147483648", "4294967297",
                "2147483646.99999999999", "2147483647.00000000001", "2147483647.0000001", "2147483647.0000003",
                "2147483647.4999999", "2147483646.5", "0.99999999999999999", "1.00000000000000001",
                "1.0000000000000002", "0.9999999999999999", "1e400", "-1e400", "1e-400", "1e308", "5e-324",
                "2.147483647e9", "2.147483648e9", "21474836.47e2", "9007199254740993",
                "1" + "0" * self.r.randint(10, 400) + "e-" + str(self.r.randint(8, 400)),
                "0." + "0" * self.r.randint(0, 30) + "1e" + str(self.r.randint(1, 40)),
            ]))
        if roll < 0.6:
            return self.r.randint(1, 2147483647)
        if roll < 0.7:
            return self.r.randint(-(2**40), 2**40)
        if roll < 0.8:
            # A whole number in or near range, with a fraction of zeros or not.
            n = self.r.randint(0, 2**31 + 5)
            return Raw(f"{n}." + self.pick(["0", "00", "000000000000", "5", "0000001", "9999999999", "1"]))
        if roll < 0.87:
            mantissa = self.r.randint(1, 10**9)
            exp = self.r.randint(-12, 12)
            return Raw(f"{mantissa}e{exp}" if self.chance(0.5) else f"{mantissa}E{exp:+d}")
        if roll < 0.9:
            # The reference's quirks: an exponent it wraps to 32 bits, and
            # integer digits past the 800 it keeps.
            m = str(self.r.randint(1, 99999))
            if self.chance(0.5):
                e = self.pick([2**32, 2**32 + 1, 2**33, 2**31, 2**32 * self.r.randint(1, 1000) + self.r.randint(-3, 3)])
                return Raw(f"{m}e{self.pick(['', '+', '-'])}{e}")
            n = self.r.randint(780, 1100)
            return Raw(f"{m}{'0' * n}e-{n + self.r.randint(-4, 4)}")
        return self.any_value(1)

    def prediction(self):
        name = self.pick(["predict"] * 6 + ["cancel_prediction"] * 3 + ["Predict", "prediction", "cancel_predict"])
        pairs = [("command", name)]
        if self.chance(0.93):
            pairs.append(("request_id", self.prediction_id()))
        if self.chance(0.93 if name == "predict" else 0.2):
            pairs.append(("source_sequence", self.sequence()))
        return self.obj(pairs)

    def other(self):
        roll = self.r.random()
        if roll < 0.15:
            return self.obj([("command", self.pick(["compact", "cancel"]))])
        if roll < 0.45:
            action = self.pick(["set", "set", "clear", "toggle", None, 1])
            pairs = [("command", "goal"), ("action", action) if action is not None else None]
            if self.chance(0.8):
                pairs.append(("text", self.text() if self.chance(0.85) else self.any_value(1)))
            if self.chance(0.4):
                pairs.append(("auto", self.pick([True, False, None, "true", 1])))
            return self.obj(pairs)
        if roll < 0.75:
            pairs = [("command", "approval")]
            if self.chance(0.85):
                pairs.append(("id", "ap-1" if self.chance(0.85) else self.any_value(1)))
            if self.chance(0.85):
                pairs.append(("allow", self.pick([True, False, True, False, "yes", None, 1])))
            return self.obj(pairs)
        if roll < 0.9:
            return self.obj([("command", self.pick(["inject", "", "PROMPT", "Steer", "jobs", "job_stops", "a\nb", "images", "content"]))] + self.message_fields())
        return self.pick([self.any_value(2), self.obj([("text", "x")]), self.obj([("command", self.any_value(1))])])

    def line(self):
        self.escapes = self.chance(0.2)
        if self.prediction_share and self.chance(self.prediction_share):
            return self.finish(self.prediction())
        roll = self.r.random()
        if roll < 0.3:
            v = self.prompt()
        elif roll < 0.5:
            v = self.steer()
        elif roll < 0.68:
            v = self.job()
        elif roll < 0.85:
            v = self.prediction()
        else:
            v = self.other()
        return self.finish(v)

    def finish(self, v):
        """`v` written as a line, now and then broken so it is not JSON."""
        s = self.write(v)
        if self.chance(0.02):
            # Not JSON (mostly): cut, doubled, or a stray character.
            roll = self.r.random()
            if roll < 0.4 and len(s) > 1:
                s = s[: self.r.randrange(1, len(s))]
            elif roll < 0.7:
                i = self.r.randrange(len(s) + 1)
                s = s[:i] + self.pick([",", "}", "]", "'", "x", "\u0001", "\\"]) + s[i:]
            else:
                s = s + self.pick([" x", ",", "{}", " "])
        return s.replace("\n", "\\n")  # a line never holds a raw LF


def generate(n, seed, prediction_share=0.0):
    g = Gen(seed, prediction_share)
    return [g.line() for _ in range(n)]


def run(cmd, lines, cwd):
    data = "".join(l + "\n" for l in lines).encode("utf-8")
    t0 = time.monotonic()
    out = subprocess.run(cmd, input=data, stdout=subprocess.PIPE, cwd=cwd, shell=isinstance(cmd, str)).stdout
    return out.decode("utf-8", errors="replace").split("\n")[: len(lines)], time.monotonic() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=100_000, help="lines to generate (default 100000)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cmd", default=DEFAULT_CMD, help=f"program to compare (default: {DEFAULT_CMD})")
    ap.add_argument("--write-lines", metavar="FILE", help="also write the generated lines to FILE")
    ap.add_argument("--prediction-share", type=float, default=0.0, metavar="P",
                    help="make a share P of the lines retired prediction commands, on top of the mix's own")
    args = ap.parse_args()

    lines = generate(args.n, args.seed, args.prediction_share)
    if args.write_lines:
        Path(args.write_lines).write_text("".join(l + "\n" for l in lines), encoding="utf-8")
    expected, t_oracle = run([str(ORACLE_LATEST)], lines, ROOT)
    got, t_other = run(args.cmd, lines, ROOT)
    got += ["<missing>"] * (len(lines) - len(got))

    kinds = {}
    for e in expected:
        k = e.split(" ", 1)[0]
        kinds[k] = kinds.get(k, 0) + 1
    agree = skipped = 0
    shown = []
    for line, e, g in zip(lines, expected, got):
        if g == "SKIP":
            skipped += 1
        elif e == g:
            agree += 1
        elif len(shown) < 20:
            shown.append((line, e, g))
    total = len(lines) - skipped
    for line, e, g in shown:
        cut = lambda s: s if len(s) <= 400 else s[:400] + f"... ({len(s)} chars)"  # noqa: E731
        print(f"line:     {cut(line)}\nexpected: {cut(e)}\ngot:      {cut(g)}\n")
    print(f"oracle verdicts: {kinds}")
    print(f"{ORACLE_LATEST.name}: {t_oracle:.1f} s; {args.cmd}: {t_other:.1f} s")
    if skipped:
        print(f"{skipped} lines skipped by the program")
    print(f"{agree}/{total} agree")
    sys.exit(0 if agree == total else 1)


if __name__ == "__main__":
    main()
