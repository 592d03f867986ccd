#!/usr/bin/env python3
"""Differential run for the event direction: generated engine lines through
oracle-events-next (upstream @ fdf10827) and through a second program,
compared verdict for verdict.

    python3 scripts/events_differential.py                      # 100000 lines, seed 1
    python3 scripts/events_differential.py -n 200000 --seed 7
    python3 scripts/events_differential.py --cmd "PROGRAM ARGS"  # what to compare
    python3 scripts/events_differential.py --write-lines FILE    # keep the lines
    python3 scripts/events_differential.py --oracle-only         # coverage: verdicts per event

Generation is deterministic for a seed: each of the 58 events upstream's
`parse` reads (scripts/eventlines.py), with plausible values, then mutated one
field at a time (dropped, given the wrong JSON type, or set to an edge value:
integers spelled 7.0 / 1e0 / -0, at and past the Int range, fractions that
round to a whole number and ones that do not, 1e400, exponents of 2^32);
the defaulted fields absent, null or mistyped; JobRecords at their edges
(components of 200/201 chars, `.`/`..`, odd characters; revision, the
Int64 counters and output_chars at their limits; every JobState; `data` of
any JSON: big integers, 1e400, floats, escaped strings, duplicate keys);
PredictionOutcomes (null/empty text, truncated tokens, negatives), and half
the `prediction_result` lines with an older engine's `request_id` of any
type (read and dropped since fdf10827); Content
strings and parts with images valid and broken (v2lines.py's headers and
base64 near misses); unknown event names (`fleet_started`, ...), `event` not
a string, non-objects; and, across all of it, noise keys with nested values,
duplicate keys, shuffled keys, random whitespace, `\\u` and `\\/` escapes,
lone surrogates and a few lines broken so they are not JSON.

Both programs read the lines on stdin, one per line, and print one line
each: `OK <the line the engine writes>`, `NONE` or `NOTJSON`, the oracle's
own plain format. The default program is
`target/debug/serve-command decode --events --format verdict` (run from the
repository root). Prints the first 20 disagreements (line, expected, got),
the oracle's verdict counts, the time each program took and `N/M agree`;
exit status 1 on any disagreement. `--oracle-only` runs just the oracle
(--json, so every OK line's round trip is checked too) and prints, per
generated event name, how many lines came out OK, NONE and NOTJSON.
The oracle is found at $REFERENCE_ORACLE (default ../shared/reference-oracle)
and must be built (build.sh, then build-next.sh). Dev tool only; Python 3 standard
library only.
"""

import argparse
import json
import random
import subprocess
import sys
import time
from pathlib import Path

sys.dont_write_bytecode = True  # no scripts/__pycache__ entries
sys.path.insert(0, str(Path(__file__).resolve().parent))
from eventlines import (  # noqa: E402
    DATA_VALUES,
    DEFAULTED_TYPES,
    FIELDS,
    IMAGES,
    INT_EDGES,
    JOB,
    JOB_STATES,
    MEDIA_TYPES,
    NAMES,
    ORACLE_EVENTS,
    UINT_EDGES,
    UNKNOWN_EVENTS,
    USAGE_KEYS,
    WRONG,
    Obj,
    Raw,
    b64,
    base64_near_misses,
    check_oracle,
)

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CMD = "target/debug/serve-command decode --events --format verdict"

# Labels for lines that are not one of the 58 events.
UNKNOWN, NOT_STRING, NO_EVENT, NOT_OBJECT = "(unknown event)", "(event not a string)", "(no event key)", "(not an object)"


class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)
        self.escapes = False

    def chance(self, p):
        return self.r.random() < p

    def pick(self, xs):
        return xs[self.r.randrange(len(xs))]

    # --- writing JSON, with escapes, whitespace, key order -----------------
    def ws(self):
        return self.pick(["", "", "", "", " ", "\t", "  ", "\r", " \r "]) if self.escapes else ""

    def string(self, s):
        out = ['"']
        for ch in s:
            o = ord(ch)
            if ch == '"':
                out.append('\\"')
            elif ch == "\\":
                out.append("\\\\")
            elif o < 0x20:
                short = {"\n": "\\n", "\t": "\\t", "\r": "\\r", "\b": "\\b", "\f": "\\f"}.get(ch)
                out.append(self.pick([short, "\\u%04x" % o]) if short else self.pick(["\\u%04x" % o, "\\u%04X" % o]))
            elif self.escapes and ch == "/" and self.chance(0.5):
                out.append("\\/")
            elif self.escapes and self.chance(0.05):
                if o > 0xFFFF:
                    v = o - 0x10000
                    out.append(self.pick(["\\u%04x\\u%04x", "\\u%04X\\u%04X"]) % (0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF)))
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
        if isinstance(v, dict):
            v = Obj(v.items())
        if isinstance(v, Obj):
            return "{" + ",".join(self.ws() + self.string(k) + self.ws() + ":" + self.ws() + self.write(x) + self.ws() for k, x in v.pairs) + "}"
        raise TypeError(v)

    def obj(self, pairs, noise=0.2, dup=0.06, shuffle=0.25):
        """An object from pairs, maybe with noise keys, duplicates, shuffled."""
        pairs = [p for p in pairs if p is not None]
        if self.chance(noise):
            for _ in range(self.r.randint(1, 3)):
                pairs.insert(self.r.randint(0, len(pairs)), (self.noise_key(), self.any_value(3)))
        if pairs and self.chance(dup):
            k, v = self.pick(pairs)
            other = self.any_value(1) if self.chance(0.5) else v
            # The duplicate goes before or after: the last one wins.
            pairs.insert(self.r.randint(0, len(pairs)), (k, other))
        if self.chance(shuffle):
            self.r.shuffle(pairs)
        return Obj(pairs)

    # --- free values --------------------------------------------------------
    def noise_key(self):
        return self.pick(["x", "extra", "ts", "level", "source", "Event", "type", "kind2", "meta", "é", "a/b", "",
                          "data", "id", "content", "text", "message", "code", "reason", "schema"])

    def text(self):
        return self.pick([
            "", "x", "done", "fix the failing test", "  ", "a\nb", "tab\there", 'quote " and \\ slash /',
            "é", "日本語", "😀", "\U0010FFFF", "\u2028", "\u007f", "\u0000", "\u001f", "\ufeff", "/diff",
            "unknown error", "prompt", "started", "stopped", "running", "image/png",
            "x" * self.r.randint(0, 200),
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
            return Raw(self.pick(DATA_VALUES)[0])
        if k in (4, 5, 6):
            return self.text()
        if k == 7:
            return Raw(self.pick(['"\\ud800"', '"\\udc00x"', '"\\u00e9\\/"', '"\\ud83d\\ude00"', "-0", "1E5", "1e400"]))
        if k in (8, 9):
            return [self.any_value(depth - 1) for _ in range(self.r.randint(0, 3))]
        return self.obj([(self.noise_key(), self.any_value(depth - 1)) for _ in range(self.r.randint(0, 3))], noise=0)

    def wrong(self, t):
        """A value of the wrong JSON type for a field of type `t`."""
        if self.chance(0.7):
            return self.pick(WRONG[t])[0]
        v = self.any_value(1)
        return v

    # --- typed values ---------------------------------------------------------
    def int_value(self, nonneg=False):
        roll = self.r.random()
        if roll < 0.55:
            return self.r.randint(0, 100)
        if roll < 0.7:
            return self.r.randint(0 if nonneg else -1000, 2**31 - 1)
        if roll < 0.8:
            n = self.r.randint(0, 10**6)
            return Raw(self.pick([f"{n}.0", f"{n}e0", f"{n}.000", f"{n}E+0", f"{n}0e-1"]))
        return self.int_edge()

    def int_edge(self):
        if self.chance(0.8):
            return Raw(self.pick(INT_EDGES)[0])
        return Raw(self.pick([
            str(self.r.randint(-(2**40), 2**40)),
            f"{self.r.randint(0, 2**31)}.{self.pick(['5', '0000001', '9999999999', '00'])}",
            f"{self.r.randint(1, 99)}e{self.pick([2**32, 2**32 + 1, 2**31, -(2**32), 10**9])}",
            f"{self.r.randint(1, 10**6)}e-{self.r.randint(1, 12)}",
            "-" + str(self.r.randint(1, 2**31 + 2)),
        ]))

    def uint_text(self):
        roll = self.r.random()
        if roll < 0.7:
            return self.r.randint(0, 1751328000000 * 2)
        if roll < 0.8:
            return self.r.randint(0, 5000)
        return Raw(self.pick(UINT_EDGES)[0])

    def component(self):
        roll = self.r.random()
        if roll < 0.75:
            return self.pick(["job-3", "g-20260701", "job_2.log", "a", "out.txt", "J-9", "..a", "x" * 200])
        if roll < 0.85:
            alphabet = "abcXYZ019-_."
            return "".join(self.pick(alphabet) for _ in range(self.pick([1, 2, 12, 199, 200, 201])))
        if roll < 0.9:
            return self.pick(["", ".", "..", "...", "-", "_"])
        base = "job-" + str(self.r.randint(0, 999))
        i = self.r.randint(0, len(base))
        return base[:i] + self.pick(["/", "\\", " ", "é", "😀", ":", "+", "\n", "\u0000", "ａ", "*"]) + base[i:]

    def job_state(self):
        roll = self.r.random()
        if roll < 0.85:
            st = dict(self.pick(JOB_STATES))
            if st["kind"] == "exited":
                st["code"] = self.pick([0, 1, 2, 101, 137, -1, 255])
            if st["kind"] == "stopped":
                st["reason"] = self.pick(["stopped by user", "timeout", " ", "é"])
            return self.obj(list(st.items()), noise=0.1, dup=0.03)
        if roll < 0.91:
            return {"kind": "exited", "code": self.int_edge()}
        if roll < 0.96:
            return self.pick([{"kind": "exited"}, {"kind": "stopped", "reason": ""}, {"kind": "stopped"},
                              {"kind": "stopped", "reason": 7}, {"kind": "Running"}, {"kind": "finished"},
                              {}, {"kind": None}, "running"])
        return self.any_value(1)

    def job(self):
        """A JobRecord: plausible, then maybe one field mutated."""
        fields = {
            "schema_version": 1,
            "cleanup_error": self.pick([None, None, None, "rm failed"]),
            "generation": self.component() if self.chance(0.2) else "g-20260701",
            "id": self.component() if self.chance(0.2) else "job-%d" % self.r.randint(1, 99),
            "revision": self.r.randint(1, 50),
            "command": self.pick(["cargo test", "npm run build", "sleep 10", "", "é 😀 \u0000"]),
            "description": self.pick([None, "run the tests", ""]),
            "cwd": self.pick([None, "/home/dev/project", "."]),
            "state": self.job_state(),
            "started_at_ms": self.uint_text(),
            "backgrounded_at_ms": self.uint_text(),
            "finished_at_ms": self.pick([None, None, self.uint_text()]),
            "last_output_at_ms": self.pick([None, self.uint_text()]),
            "output_file": self.pick([None, "job-3.log", "out.txt", self.component()]),
            "output_persistent": self.chance(0.5),
            "output_bytes": self.uint_text(),
            "output_chars": self.pick([self.r.randint(0, 4000), self.r.randint(0, 2**31 - 1), Raw(self.pick(["2147483647", "2147483648", "0", "-0", "1.5", "9007199254740991"]))]),
            "output_truncated": self.chance(0.2),
            "invalid_utf8": self.chance(0.1),
            "output_error": self.pick([None, None, "write failed"]),
            "persistence_error": self.pick([None, None, "fsync failed"]),
        }
        if self.chance(0.35):
            fields["data"] = self.any_value(3)
        pairs = list(fields.items())
        # Optional fields sometimes left out instead of null.
        pairs = [(k, v) for k, v in pairs if not (v is None and self.chance(0.4))]
        if self.chance(0.25):
            i = self.r.randrange(len(pairs))
            k, v = pairs[i]
            roll = self.r.random()
            if roll < 0.35:
                del pairs[i]
            elif roll < 0.7:
                pairs[i] = (k, self.any_value(1))
            else:
                edge = {
                    "schema_version": lambda: Raw(self.pick(["1.0", "1e0", "2", "0", '"1"', "-1"])),
                    "revision": lambda: Raw(self.pick(["0", "1", "2147483647", "2147483648", "-1", "1.5", "2.0"])),
                }.get(k, lambda: Raw(self.pick(UINT_EDGES)[0]) if k.endswith(("_ms", "_bytes", "_chars")) else self.component())
                pairs[i] = (k, edge())
        return self.obj(pairs, noise=0.1, dup=0.03, shuffle=0.2)

    def outcome(self):
        roll = self.r.random()
        if roll < 0.55:
            pairs = [("kind", "completed")]
            if self.chance(0.96):
                pairs.append(("text", self.pick([None, "let me run the tests", "x", "", " ", "é😀", 7])))
            for k in ("input_tokens", "output_tokens"):
                if self.chance(0.96):
                    if self.chance(0.75):
                        pairs.append((k, self.r.randint(0, 5000)))
                    else:
                        pairs.append((k, Raw(self.pick(["1.5", "-0.5", "-1", "-1.5", "2147483647", "2147483648", "2147483647.5",
                                                        "-2147483648", '"5"', "null", "-0", "0.999", "1e400", "5e-324", "7.0", "1e2"]))))
            return self.obj(pairs, noise=0.15, dup=0.04)
        if roll < 0.7:
            return self.obj([("kind", self.pick(["skipped", "cancelled"]))], noise=0.3)
        if roll < 0.85:
            pairs = [("kind", "failed")]
            if self.chance(0.85):
                pairs.append(("message", self.pick(["provider timeout", "", "a\nb", None, 7])))
            return self.obj(pairs, noise=0.15)
        if roll < 0.93:
            return self.obj([("kind", self.pick(["Completed", "complete", "", None, 7, "failure"])), ("text", "x"),
                             ("input_tokens", 1), ("output_tokens", 1)])
        return self.any_value(1)

    def image_bytes(self):
        kind = self.pick(list(IMAGES))
        raw, mt = IMAGES[kind]
        roll = self.r.random()
        if roll < 0.6:
            raw = raw + bytes(self.r.randrange(256) for _ in range(self.r.randint(0, 8)))
        elif roll < 0.8:
            raw = bytearray(raw[:12])
            if self.chance(0.5):
                raw = raw[: self.r.randint(0, 11)]
            elif raw:
                raw[self.r.randrange(len(raw))] ^= 1 << self.r.randrange(8)
            raw = bytes(raw)
        elif roll < 0.85:
            raw = bytes(self.r.randrange(256) for _ in range(self.r.randint(0, 20)))
        return raw, mt

    def image_part(self):
        raw, mt = self.image_bytes()
        roll = self.r.random()
        media = mt if roll < 0.8 else self.pick(MEDIA_TYPES + ["IMAGE/PNG", "image/jpg", "", "image/png ", "é"])
        if self.chance(0.8):
            data = b64(raw)
        else:
            misses = base64_near_misses(raw) if raw else [("empty", "")]
            misses.append(("url-safe", b64(raw).replace("+", "-").replace("/", "_")))
            data = self.pick(misses)[1]
        pairs = [("type", "image"), ("media_type", media), ("data", data)]
        roll = self.r.random()
        if roll < 0.04:
            pairs[1] = ("media_type", self.any_value(1))
        elif roll < 0.08:
            pairs[2] = ("data", self.any_value(1))
        elif roll < 0.1:
            del pairs[self.r.randint(1, 2)]
        return self.obj(pairs, noise=0.1, dup=0.02)

    def part(self):
        roll = self.r.random()
        if roll < 0.55:
            pairs = [("type", "text"), ("text", self.text())]
            if self.chance(0.06):
                pairs[1] = ("text", self.any_value(1))
            elif self.chance(0.03):
                del pairs[1]
            return self.obj(pairs, noise=0.1, dup=0.02)
        if roll < 0.92:
            return self.image_part()
        if roll < 0.97:
            return self.obj([("type", self.pick([None, 1, "Text", "video", "", "IMAGE"])), ("text", "x")])
        return self.any_value(1)

    def content(self):
        roll = self.r.random()
        if roll < 0.4:
            return self.text()
        if roll < 0.97:
            return [self.part() for _ in range(self.pick([0, 1, 1, 1, 2, 2, 3, 5]))]
        return self.any_value(1)

    def usage(self):
        pairs = []
        for k in USAGE_KEYS:
            roll = self.r.random()
            if roll < 0.93:
                pairs.append((k, self.r.randint(0, 200000)))
            elif roll < 0.98:
                pairs.append((k, Raw(self.pick(["-1", "-0", "1.5", "7.0", "2147483647", "2147483648", "1e2", '"5"', "null"]))))
        return self.obj(pairs, noise=0.1, dup=0.03)

    def names(self):
        names = [self.pick(["fs__read", "fs__write", "git__log", "", "é"]) for _ in range(self.r.randint(0, 4))]
        if self.chance(0.05):
            names.insert(self.r.randint(0, len(names)), self.any_value(1))
        return names

    def value(self, t):
        """A (mostly) valid value for a field of type `t`."""
        if t in ("str", "null", "omit", "dflt"):
            return self.text()
        if t == "int":
            return self.int_value()
        if t == "bool":
            return self.chance(0.5)
        if t == "usage":
            return self.usage()
        if t == "content":
            return self.content()
        if t == "job":
            return self.job()
        if t == "jobs":
            return [self.job() for _ in range(self.pick([0, 1, 1, 2, 3]))]
        if t == "outcome":
            return self.outcome()
        if t == "jobkind":
            return self.pick(["started", "updated", "finished", "failed"]) if self.chance(0.93) else self.pick(["Started", "stopped", "", 7, None])
        if t == "stopout":
            return self.pick(["stopped", "already_terminal", "not_found", "wrong_runtime"]) if self.chance(0.93) else self.pick(["Stopped", "killed", "", 7, None])
        if t == "names":
            return self.names()
        raise ValueError(t)

    def edge(self, t):
        if t == "int":
            return self.int_edge()
        if t == "str":
            return self.pick(["", "\u0000", "😀" * 3, "x" * 500, "a\u2028b"])
        return self.value(t)

    # --- lines ------------------------------------------------------------------
    def event(self, name):
        pairs = [("event", name)]
        for k, t, _ in FIELDS[name]:
            if t in DEFAULTED_TYPES:
                roll = self.r.random()
                if roll < 0.6:
                    pairs.append((k, self.text()))
                elif roll < 0.85:
                    continue
                else:
                    pairs.append((k, self.wrong(t)))
            else:
                pairs.append((k, self.value(t)))
        if name == "prediction_result" and self.chance(0.5):
            # An older engine's (642262b0's) `request_id`: read and dropped
            # since fdf10827, whatever its type, wherever it stands.
            rid = self.pick(["p1", "pred-7", "", " "]) if self.chance(0.6) else self.any_value(2)
            pairs.insert(self.r.randint(1, len(pairs)), ("request_id", rid))
        fields = [i for i in range(1, len(pairs)) if pairs[i][0] != "request_id"]
        for _ in range(self.pick([0, 0, 0, 0, 1, 1, 2]) if fields else 0):
            i = self.pick(fields)
            if i >= len(pairs):
                continue
            k, _ = pairs[i]
            t = dict((f, ty) for f, ty, _ in FIELDS[name]).get(k)
            if t is None:
                continue
            roll = self.r.random()
            if roll < 0.35:
                del pairs[i]
                fields = [j for j in range(1, len(pairs))]
                if not fields:
                    break
            elif roll < 0.7:
                pairs[i] = (k, self.wrong(t))
            else:
                pairs[i] = (k, self.edge(t))
        if self.chance(0.08):
            # The name itself: a near miss, dropped, or a later duplicate
            # `event` (the last one wins), right or wrong.
            roll = self.r.random()
            near = [name.upper(), name + " ", name[:-1], name.replace("_", "-"), name.title(), name + "_v2"]
            if roll < 0.4:
                pairs[0] = ("event", self.pick(near))
            elif roll < 0.55:
                del pairs[0]
            else:
                pairs.append(("event", self.pick(near + [name, self.pick(NAMES), None, 7])))
        return self.obj(pairs)

    def line(self):
        """One line and its label (the event name it was made from)."""
        self.escapes = self.chance(0.2)
        roll = self.r.random()
        if roll < 0.9:
            label = self.pick(NAMES)
            v = self.event(label)
        elif roll < 0.94:
            label = UNKNOWN
            v = self.obj([("event", self.pick(UNKNOWN_EVENTS))] + [(self.noise_key(), self.any_value(1)) for _ in range(self.r.randint(0, 3))])
        elif roll < 0.96:
            label = NOT_STRING
            v = self.obj([("event", self.pick([None, 7, True, ["agent_step"], {"name": "agent_step"}])), ("step", 1)])
        elif roll < 0.98:
            label = NO_EVENT
            v = self.obj([(self.noise_key(), self.any_value(1)) for _ in range(self.r.randint(0, 3))] + [("step", 1), ("answer", "x")])
        else:
            label = NOT_OBJECT
            v = self.pick([[self.event(self.pick(NAMES))], self.text(), self.r.randint(-9, 9), None, True, [], self.any_value(2)])
            if isinstance(v, Obj):
                label = NO_EVENT if not any(k == "event" for k, _ in v.pairs) else UNKNOWN
        s = self.write(v)
        if self.escapes and self.chance(0.5):
            s = self.ws() + s + self.ws()
        if self.chance(0.02):
            # Not JSON (mostly): cut, a stray character, or trailing junk.
            roll = self.r.random()
            if roll < 0.4 and len(s) > 1:
                s = s[: self.r.randrange(1, len(s))]
            elif roll < 0.7:
                i = self.r.randrange(len(s) + 1)
                s = s[:i] + self.pick([",", "}", "]", "'", "x", "\u0001", "\\", '"']) + s[i:]
            else:
                s = s + self.pick([" x", ",", "{}", "]"])
        return s.replace("\n", "\\n"), label  # a line never holds a raw LF


def generate(n, seed):
    g = Gen(seed)
    return [g.line() for _ in range(n)]


def run(cmd, lines, cwd):
    data = "".join(l + "\n" for l in lines).encode("utf-8")
    t0 = time.monotonic()
    out = subprocess.run(cmd, input=data, stdout=subprocess.PIPE, cwd=cwd, shell=isinstance(cmd, str)).stdout
    return out.decode("utf-8", errors="replace").split("\n")[: len(lines)], time.monotonic() - t0


def oracle_only(lines, labels):
    check_oracle()
    rows, t = run([str(ORACLE_EVENTS), "--json"], lines, ROOT)
    order = NAMES + [UNKNOWN, NOT_STRING, NO_EVENT, NOT_OBJECT]
    table = {k: {"OK": 0, "NONE": 0, "NOTJSON": 0} for k in order}
    totals = {"OK": 0, "NONE": 0, "NOTJSON": 0}
    bad = []
    for line, label, r in zip(lines, labels, rows):
        v = json.loads(r)
        table[label][v[0]] += 1
        totals[v[0]] += 1
        if v[0] == "OK" and v[2] != "roundtrip-ok":
            bad.append((line, r))
    print(f"{'generated as':30} {'OK':>6} {'NONE':>6} {'NOTJSON':>7}")
    for k in order:
        c = table[k]
        print(f"{k:30} {c['OK']:6} {c['NONE']:6} {c['NOTJSON']:7}")
    print(f"{'total':30} {totals['OK']:6} {totals['NONE']:6} {totals['NOTJSON']:7}")
    thin = [k for k in NAMES if table[k]["OK"] < 100 or table[k]["NONE"] < 100]
    if thin:
        print(f"fewer than 100 OK or NONE: {', '.join(thin)}")
    for line, r in bad[:20]:
        print(f"no round trip: {line}\n  {r}")
    print(f"{ORACLE_EVENTS.name} --json: {len(lines)} lines in {t:.1f} s; {len(bad)} OK lines without a round trip")
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=100_000, help="lines to generate (default 100000)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cmd", default=DEFAULT_CMD, help=f"program to compare (default: {DEFAULT_CMD})")
    ap.add_argument("--write-lines", metavar="FILE", help="also write the generated lines to FILE")
    ap.add_argument("--oracle-only", action="store_true", help="run only the oracle; print verdicts per event")
    args = ap.parse_args()

    generated = generate(args.n, args.seed)
    lines = [l for l, _ in generated]
    if args.write_lines:
        Path(args.write_lines).write_text("".join(l + "\n" for l in lines), encoding="utf-8")
    if args.oracle_only:
        sys.exit(oracle_only(lines, [lab for _, lab in generated]))

    check_oracle()
    expected, t_oracle = run([str(ORACLE_EVENTS)], lines, ROOT)
    got, t_other = run(args.cmd, lines, ROOT)
    got += ["<missing>"] * (len(lines) - len(got))

    kinds = {}
    for e in expected:
        k = e.split(" ", 1)[0]
        kinds[k] = kinds.get(k, 0) + 1
    agree = 0
    shown = []
    for line, e, g in zip(lines, expected, got):
        if e == g:
            agree += 1
        elif len(shown) < 20:
            shown.append((line, e, g))
    for line, e, g in shown:
        cut = lambda s: s if len(s) <= 400 else s[:400] + f"... ({len(s)} chars)"  # noqa: E731
        print(f"line:     {cut(line)}\nexpected: {cut(e)}\ngot:      {cut(g)}\n")
    print(f"oracle verdicts: {kinds}")
    print(f"{ORACLE_EVENTS.name}: {t_oracle:.1f} s; {args.cmd}: {t_other:.1f} s")
    print(f"{agree}/{len(lines)} agree")
    sys.exit(0 if agree == len(lines) else 1)


if __name__ == "__main__":
    main()
