#!/usr/bin/env python3
"""Differential check of the schemas against the reference oracles (a
development tool: needs ../shared/reference-oracle, built, or
$REFERENCE_ORACLE, and python3's jsonschema; CI runs neither). v2 is
upstream @ fdf10827 (`oracle-latest-next`).

    python3 schema/differential.py [N]    # N lines per revision, default 20000

Generates near-miss command lines for each revision, runs them through that
revision's oracle, and checks three things: every canonical line the oracle
writes validates against the schema, every input line the schema accepts the
oracle decodes, and every message the oracle writes fits exactly one member
of the TypeScript `CommandError`.
"""
import base64, json, os, random, re, subprocess, sys
import jsonschema

HERE = os.path.dirname(os.path.abspath(__file__))
ORACLES = os.environ.get("REFERENCE_ORACLE", os.path.join(HERE, "..", "..", "shared", "reference-oracle"))
if not os.path.isdir(ORACLES):
    ORACLES = "/work/shared/reference-oracle"
IMAGES = {"image/png": b"\x89PNG\r\n\x1a\n", "image/jpeg": b"\xff\xd8\xff",
          "image/gif": b"GIF89a", "image/webp": b"RIFF\0\0\0\0WEBP"}
ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
def rstr():
    return random.choice(["", "a", "x y", ".", "..", "...", "a/b", "A-z_0.9", "é", "j"*200, "j"*201, "\n", "notice", "prompt", "command", "Prompt"])
def rval():
    return random.choice([None, True, False, 0, 7, 1.5, "", "x", [], {}, ["x"], {"a": 1}, rstr()])
def image():
    mt = random.choice(list(IMAGES) + ["image/svg+xml", "image/PNG", ""])
    raw = IMAGES.get(mt, random.choice(list(IMAGES.values())))
    if random.random() < 0.3: raw = random.choice(list(IMAGES.values()))
    raw = raw + bytes(random.randrange(256) for _ in range(random.randrange(4)))
    data = base64.b64encode(raw).decode()
    r = random.random()
    if r < 0.1: data = data.rstrip("=")
    elif r < 0.2 and data.endswith("="):
        i = data.index("=") - 1; c = data[i]; alph = ALPHABET
        data = data[:i] + alph[(alph.index(c) + 1) % 64] + data[i+1:]
    elif r < 0.25: data = "AAAA"
    p = {"type": "image", "media_type": mt, "data": data}
    if random.random() < 0.1: del p[random.choice(list(p))]
    if random.random() < 0.05: p[random.choice(list(p))] = rval()
    return p
def part():
    if random.random() < 0.5:
        p = {"type": "text", "text": rstr()}
        if random.random() < 0.1: p["text"] = rval()
        if random.random() < 0.05: p["type"] = random.choice(["video", "Text", None])
        return p
    return image()
def content():
    r = random.random()
    if r < 0.3: return rstr()
    if r < 0.9: return [part() for _ in range(random.randrange(4))]
    return rval()
def cmd(rev):
    c = random.choice(["prompt", "steer", "compact", "cancel", "goal", "approval", "jobs_snapshot", "job_stop", "predict", "cancel_prediction", "nap"] if rev == "v2" else ["prompt", "steer", "compact", "cancel", "goal", "approval", "nap"])
    o = {"command": c}
    text = "content" if rev == "v2" and random.random() < 0.8 else "text"
    if c in ("prompt", "steer"):
        if c == "steer" and random.random() < 0.8: o["kind"] = random.choice(["prompt", "command", "notice", None, 1])
        o[text] = content() if text == "content" else rstr()
        if random.random() < 0.4: o["submission_id"] = random.choice(["s", "", None, 7])
        if text == "text" and random.random() < 0.2: o["images"] = random.choice([["data:image/png;base64,iVBORw0KGgo="], "x", [7]])
    elif c == "goal":
        o["action"] = random.choice(["set", "clear", "toggle", None])
        if random.random() < 0.8: o["text"] = random.choice([rstr(), 7, None])
        if random.random() < 0.4: o["auto"] = random.choice([True, False, None, 1, "true"])
    elif c == "approval":
        if random.random() < 0.9: o["id"] = random.choice(["a", "", 7, None])
        if random.random() < 0.9: o["allow"] = random.choice([True, False, "true", None, 0])
    elif c in ("jobs_snapshot", "job_stop"):
        if random.random() < 0.9: o["request_id"] = random.choice(["r", "", 7])
        if c == "job_stop":
            for k in ("generation", "job_id"):
                if random.random() < 0.9: o[k] = random.choice([rstr(), 7])
    elif c in ("predict", "cancel_prediction"):
        # Retired at fdf10827 (the engine predicts by itself): `unknown
        # command`, however well formed by 642262b0's rules.
        if random.random() < 0.9: o["request_id"] = random.choice(["p", "", "p" * 129, 7])
        if c == "predict" and random.random() < 0.9: o["source_sequence"] = random.choice([1, 0, 2147483647, 1.5, "1"])
    if random.random() < 0.1: o["extra"] = rval()
    if random.random() < 0.1 and len(o) > 1:
        k = random.choice([k for k in o if k != "command"]); del o[k]
    return o


def error_patterns(stem):
    """The `CommandError` members of schema/<stem>.ts as regular expressions."""
    ts = open(os.path.join(HERE, stem + ".ts")).read()
    union = ts[ts.index("export type CommandError ="):]
    union = union[:union.index(";\n")]
    members = re.findall(r"^  \| `(.*)`$", union, re.M)
    def regex(member):
        member = member.replace("\\`", "`").replace("\\$", "$").replace("\\\\", "\\")
        return re.compile(".*".join(re.escape(p) for p in member.split("${string}")), re.S)
    return [regex(m) for m in members]


def check(rev, stem, oracle, n):
    lines = [json.dumps(cmd(rev), ensure_ascii=False) for _ in range(n)]
    out = subprocess.run([os.path.join(ORACLES, oracle)], input="\n".join(lines) + "\n",
                         capture_output=True, text=True, check=True).stdout.splitlines()
    assert len(out) == len(lines)
    schema = json.load(open(os.path.join(HERE, stem + ".schema.json")))
    validator = jsonschema.Draft202012Validator(schema)
    patterns = error_patterns(stem)
    oks = accepted = errors = problems = 0
    for line, verdict in zip(lines, out):
        if verdict.startswith("ERR "):
            errors += 1
            message = verdict[4:].replace("\\n", "\n").replace("\\r", "\r")
            fitting = [p.pattern for p in patterns if p.fullmatch(message)]
            if len(fitting) != 1:
                problems += 1
                print(f"{stem}: {message!r} fits {len(fitting)} CommandError members")
        if verdict.startswith("OK "):
            oks += 1
            for error in validator.iter_errors(json.loads(verdict[3:])):
                problems += 1
                print(f"{stem}: canonical line invalid: {verdict[3:]}: {error.message}")
                break
        if validator.is_valid(json.loads(line)):
            accepted += 1
            if not verdict.startswith("OK "):
                problems += 1
                print(f"{stem}: schema accepts a refused line: {line} -> {verdict}")
    print(f"{stem}: {n} lines; {oks} OK from {oracle}, each must validate; "
          f"{accepted} accepted by the schema, each must be OK; "
          f"{errors} ERR, each must fit one of {len(patterns)} messages; problems: {problems}")
    return problems


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    random.seed(1)
    bad = check("v1", "command", "oracle-newest", n) + check("v2", "command-v2", "oracle-latest-next", n)
    sys.exit(1 if bad else 0)
