#!/usr/bin/env python3
"""The `<user_shell_command>` envelope, differential: N random requests to
upstream's oracle-shell and to the crate's `serve-command shell`, answers
compared line by line, byte for byte.

    python3 scripts/shell_differential.py -n 100000 --seed 1 \\
        --cmd "target/debug/serve-command shell" \\
        [--oracle /work/shared/reference-oracle/oracle-shell]

The requests (shell/README.md's forms) are encodes and parses of text built
from the envelope's own words: its tags and the delimiters, `exit=`,
`error running shell:`, the truncation preamble's keys (whole, partial,
reordered), LFs, CRs (CRLF, lone, runs), blank lines, blanks, non-ASCII;
valid envelopes, mutated line by line; exit codes of every size and JSON
type (numbers past f64 included), none in about 15%. Upstream's 35042ea4
anchors the close at the end and splits at the first `</command>` line
followed by `<result>`, so the generator also writes those shapes: output
lines that are closing tags, whole envelopes as output (nested), commands
holding `</command>` lines (alone, before `<result>`, before a fake
`exit=`), and envelopes whose tail is doubled, swapped, followed by junk
or blank lines, or whose middle is empty. Every request is JSON: a line that is
not is BADREQ from both, but in the words of each reader (MoonBit's,
serde_json's); see `serve-command shell --help`. No string holds a lone
surrogate (astral chars go as \\u pairs, in 30% of the requests): Rust text
cannot hold one, and upstream's own string functions mishandle it
(`char_length` aborts, "invalid surrogate pair"; `trim_end` after a lone
trailing surrogate drops the CR before it and the surrogate). Exit status
0 when every answer agrees.
"""

import argparse
import json
import os
import random
import shlex
import subprocess
import sys
import tempfile
from collections import Counter

ORACLE = "/work/shared/reference-oracle/oracle-shell"
# Numbers past f64, written into the JSON text in place of these strings.
BIG, NEG_BIG = "\u0000BIG", "\u0000NEG_BIG"

TAGS = ["<user_shell_command>", "<command>", "</command>", "<result>", "</result>", "</user_shell_command>"]
KEYS = ["truncated=", "output_limit_reached=", "shown_chars=", "max_output_chars="]
WORDS = TAGS + KEYS + ["exit=", "error running shell:", "error running shell: ", "exit=0", "exit=cancelled",
                       "truncated=true", "output_limit_reached=true", "ls", "a", "", " ", "\t", "=", "0", "-1"]
CHARS = "ab =\t\r\n" + "é日😀\u0301\u2028\u00a0\u0000\u007f\u001b"


def piece(r):
    k = r.random()
    if k < 0.35:
        return r.choice(WORDS)
    if k < 0.55:
        return r.choice(["\n", "\r", "\r\n", "\n\n", "\r\r\n", "\n\r"])
    if k < 0.8:
        return "".join(r.choice(CHARS) for _ in range(r.randint(1, 4)))
    if k < 0.9:
        return "".join(r.choice("abcxyz ") for _ in range(r.randint(1, 8)))
    # Any scalar value; an astral one travels as a surrogate pair when the
    # request is dumped with \\u escapes.
    c = r.randint(0, 0x10FFFF)
    return chr(c) if not 0xD800 <= c <= 0xDFFF else "\U0001F600"


def text(r, max_pieces=10):
    return "".join(piece(r) for _ in range(r.randint(0, max_pieces)))


def line_text(r):
    """Text made of whole lines, often the envelope's own."""
    lines = []
    for _ in range(r.randint(0, 6)):
        k = r.random()
        if k < 0.3:
            lines.append(r.choice(TAGS + ["exit=0", "error running shell: x"]))
        elif k < 0.45:
            lines.append(r.choice(KEYS) + r.choice(["", "true", "3", "x"]))
        elif k < 0.55:
            lines.append("")
        else:
            lines.append(text(r, 3))
        if r.random() < 0.15:
            lines[-1] += r.choice(["\r", "\r\r"])
    return "\n".join(lines)


PREAMBLE = "truncated=true\noutput_limit_reached=true\nshown_chars=3\nmax_output_chars=3"


# Lines that close an envelope, as output: anchored at the end, they are
# output since 35042ea4 (the first </result> closed the result before).
CLOSINGS = ["</result>", "</user_shell_command>", "</result>\n</user_shell_command>",
            "</result>\n</user_shell_command>\n", "</user_shell_command>\n</result>",
            "</command>\n<result>", "</command>\n<result>\nexit=0", "</result>\n</result>"]


def output(r, depth=0):
    t = line_text(r) if r.random() < 0.6 else text(r)
    if r.random() < 0.15:
        t = PREAMBLE + "\n" + t
    elif r.random() < 0.1:
        lines = PREAMBLE.split("\n")
        r.shuffle(lines)
        t = "\n".join(lines[: r.randint(1, 4)]) + "\n" + t
    k = r.random()
    if k < 0.15:
        # Closing tags among the output lines.
        lines = t.split("\n")
        for _ in range(r.randint(1, 3)):
            lines.insert(r.randrange(len(lines) + 1), r.choice(CLOSINGS))
        t = "\n".join(lines)
    elif k < 0.2:
        t += "\n" + r.choice(CLOSINGS)
    elif k < 0.25 and depth < 2:
        # `cat` of an envelope: a whole one as output.
        inner = envelope(r, depth + 1)
        t = r.choice([inner, t + "\n" + inner, inner + "\n" + t])
    return t


def command_text(r):
    """A command, now and then holding `</command>` lines."""
    c = line_text(r) if r.random() < 0.5 else text(r, 4)
    k = r.random()
    if k < 0.2:
        lines = c.split("\n")
        extra = r.choice(["</command>", "</command>", "</command>\n<result>", "</command>\n<result>\nexit=1",
                          "</command>\n\n<result>", "</command>\r\n<result>\r", "</command>\n</command>",
                          "</result>\n</user_shell_command>"])
        lines.insert(r.randrange(len(lines) + 1), extra)
        c = "\n".join(lines)
    return c


def exit_code(r):
    k = r.random()
    if k < 0.15:
        return None
    if k < 0.6:
        return r.randint(-3, 3)
    if k < 0.75:
        return r.randint(-300, 300)
    if k < 0.85:
        return r.choice([2**31 - 1, -(2**31), 2**31, -(2**31) - 1, 2**53 + 1, -(2**63), 2**64, 10**20])
    if k < 0.92:
        return r.choice([0.5, -0.5, 1.9, -1.9, 1e10, -1e10, 1e300, -0.0, 2.5e-8, 255.0, BIG, NEG_BIG])
    return r.choice([True, False, "3", "0", [], {}, [1]])


def encode_request(r):
    command = command_text(r) if r.random() < 0.5 else text(r)
    if r.random() < 0.25:
        return {"encode": command, "error": line_text(r) if r.random() < 0.5 else text(r)}
    limit = r.random() < 0.4
    if r.random() < 0.05:
        limit = r.choice([1, 0, "true", None, [], {}])
    return {"encode": command, "exit_code": exit_code(r), "text": output(r), "output_limit_reached": limit}


def envelope(r, depth=0):
    """A well-formed envelope, as upstream's encode writes one."""
    command = command_text(r)
    k = r.random()
    if k < 0.2:
        body = "error running shell: " + text(r, 4)
    else:
        code = r.choice(["0", "1", "-9", "cancelled", "", str(r.randint(-10**12, 10**12))])
        body = "exit=" + code
        if r.random() < 0.4:
            body += "\n" + PREAMBLE
        body += "\n" + output(r, depth)
    if k > 0.95:
        body = ""
    e = f"<user_shell_command>\n<command>\n{command}\n</command>\n<result>\n{body}\n</result>\n</user_shell_command>"
    if depth == 0 and r.random() < 0.1:
        # The tail's boundaries: doubled, swapped, junk or blanks after it.
        e += r.choice(["\n</result>\n</user_shell_command>", "\n</result>\n</user_shell_command>\n",
                       "\n</user_shell_command>", "\nx", "\n\n", "\n\n\n", "\n</result>"])
    elif depth == 0 and r.random() < 0.05:
        e = e[: -len("</result>\n</user_shell_command>")] + "</user_shell_command>\n</result>"
    if r.random() < 0.2:
        e += r.choice(["\n", "\r", "\r\n", "\n\n", "\n ", "\n\r", "\r\r\n"])
    if r.random() < 0.1:
        e = e.replace("\n", "\r\n")
    return e


def mutate(r, s):
    lines = s.split("\n")
    for _ in range(r.randint(1, 3)):
        k = r.random()
        i = r.randrange(len(lines) + 1)
        if k < 0.2:
            lines.insert(i, r.choice(TAGS + KEYS + ["", "exit=0", "\r"]))
        elif k < 0.35 and lines:
            del lines[min(i, len(lines) - 1)]
        elif k < 0.5 and lines:
            j = min(i, len(lines) - 1)
            lines[j] += r.choice(["\r", " ", "x", "\r\r"])
        elif k < 0.6 and lines:
            j = min(i, len(lines) - 1)
            lines[j] = r.choice([" ", "\t", "\r"]) + lines[j]
        elif k < 0.7 and len(lines) > 1:
            a, b = r.randrange(len(lines)), r.randrange(len(lines))
            lines[a], lines[b] = lines[b], lines[a]
        elif k < 0.8 and lines:
            j = min(i, len(lines) - 1)
            lines[j] = lines[j][: r.randint(0, len(lines[j]))]
        elif k < 0.9 and lines:
            j = min(i, len(lines) - 1)
            lines[j] = lines[j].upper() if r.random() < 0.5 else lines[j].replace("_", "-")
        else:
            lines.insert(i, text(r, 3))
    return "\n".join(lines)


def parse_request(r):
    k = r.random()
    if k < 0.35:
        content = envelope(r)
    elif k < 0.8:
        content = mutate(r, envelope(r))
    elif k < 0.85:
        content = "<user_shell_command>\n<command>\n" + line_text(r)
    elif k < 0.9:
        # The anchored ends around a small middle, empty or not.
        middle = r.choice(["", "</command>\n<result>\n", "</command>\n", "<result>\n", "</command>\n<result>\nexit=0\n",
                           "x\n</command>\n<result>\nexit=0\n", "</command>\n<result>\n</user_shell_command>\n"])
        content = "<user_shell_command>\n<command>\n" + middle + "</result>\n</user_shell_command>" + \
            r.choice(["", "\n", "\n\n", "\r\n\r", "\nx"])
    else:
        content = text(r, 20)
    return {"parse": content}


def odd_request(r):
    """Shapes the oracle's reader answers by its own rules."""
    return r.choice([
        {"parse": 1},
        {"parse": None},
        {"encode": "x", "text": "t", "output_limit_reached": True},
        {"encode": "x", "exit_code": 1, "output_limit_reached": True},
        {"encode": "x", "exit_code": 1, "text": "t"},
        {"encode": 1, "error": "e"},
        {"encode": "x", "error": 1, "exit_code": 2, "text": "t", "output_limit_reached": True},
        {"encode": "x", "error": "e", "parse": "p"},
        {"parse": envelope(r), "encode": 1},
        {"encode": "x", "exit_code": None, "text": None, "output_limit_reached": False},
        {},
        [],
        [{"parse": "x"}],
        "parse",
        7,
        None,
        True,
    ])


def request(r):
    k = r.random()
    if k < 0.45:
        return encode_request(r)
    if k < 0.98:
        return parse_request(r)
    return odd_request(r)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=100000, help="how many requests")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cmd", required=True, help="the implementation under test, e.g. 'target/debug/serve-command shell'")
    ap.add_argument("--oracle", default=os.environ.get("ORACLE_SHELL", ORACLE))
    ap.add_argument("--show", type=int, default=10, help="disagreements to print")
    args = ap.parse_args()

    r = random.Random(args.seed)
    reqs = [request(r) for _ in range(args.n)]
    lines = []
    for q in reqs:
        # Raw non-ASCII and \u escapes (surrogate pairs included) both.
        dumped = json.dumps(q, ensure_ascii=r.random() < 0.3, separators=r.choice([(",", ":"), (", ", ": ")]))
        dumped = dumped.replace(json.dumps(BIG), "1e400").replace(json.dumps(NEG_BIG), "-1E+999")
        lines.append(dumped)
    data = ("\n".join(lines) + "\n").encode()
    with tempfile.TemporaryFile() as f:
        f.write(data)
        answers = {}
        for name, cmd in [("oracle", [args.oracle]), ("crate", shlex.split(args.cmd))]:
            f.seek(0)
            p = subprocess.run(cmd, stdin=f, capture_output=True, check=False)
            if p.returncode != 0:
                sys.exit(f"{name} ({' '.join(cmd)}) exited {p.returncode}: {p.stderr.decode(errors='replace')[:500]}")
            answers[name] = p.stdout.split(b"\n")
    want, got = answers["oracle"], answers["crate"]
    if want[-1] != b"" or got[-1] != b"":
        sys.exit("an answer stream does not end in LF")
    want, got = want[:-1], got[:-1]
    if len(want) != args.n or len(got) != args.n:
        sys.exit(f"answers: oracle {len(want)}, crate {len(got)}, for {args.n} requests")

    kinds = Counter()
    tags = Counter()
    bad = 0
    for q, a, b in zip(reqs, want, got):
        kind = ("encode-error" if "error" in q else "encode") if isinstance(q, dict) and "encode" in q else \
            "parse" if isinstance(q, dict) and "parse" in q else "other"
        kinds[kind] += 1
        tags[json.loads(a)[0]] += 1
        if a != b:
            bad += 1
            if bad <= args.show:
                print(f"DISAGREE {json.dumps(q)}\n  oracle {a.decode()}\n  crate  {b.decode()}")
    print(f"requests: {args.n} ({', '.join(f'{k} {v}' for k, v in sorted(kinds.items()))})")
    print(f"oracle answers: {', '.join(f'{k} {v}' for k, v in sorted(tags.items()))}")
    print(f"agree: {args.n - bad}, disagree: {bad}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
