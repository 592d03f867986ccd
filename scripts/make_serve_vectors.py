#!/usr/bin/env python3
"""Regenerate tests/vectors/serve.jsonl (v1) and serve-v2.jsonl (v2): what
`openseek serve` answers for a line, from the reference oracles.

    python3 scripts/make_serve_vectors.py                # rewrite both files
    python3 scripts/make_serve_vectors.py --check        # exit 1 if either differs
    python3 scripts/make_serve_vectors.py --oracle-dir DIR
                                      # default: $REFERENCE_ORACLE, else
                                      # ../shared/reference-oracle

Every candidate below is a `(line, why)` pair, run through both revisions;
no verdict is typed by hand. For each revision the script runs the plain
oracle (`oracle-newest` for v1, `oracle-latest-next` for v2: `Command::parse`
and `to_json`) and the engine's (`oracle-serve-v1`, `oracle-serve-next`: the
same, then serve's own refusals, serve/policy_v1.mbt and policy_v3.mbt, the
latter state.mbt @ fdf10827 as inferred in next/README.md), both with
`--json` (lossless). They agree except where the engine refuses a command
the parser reads; such a vector has the parser's `ok` (the canonical line)
and the engine's message in `refused`:

    {"line": ..., "ok": <canonical line>, "refused": <message>, "why": ...}

Otherwise the format is tests/vectors/commands.jsonl's: `ok`, `error` or
`not_json: true`, and `why`. Any other disagreement between the two oracles
stops the script. Dev tool only: the crate, its tests and CI never run the
oracle. Python 3 standard library only.
"""

import argparse
import json
import os
import sys
from pathlib import Path

sys.dont_write_bytecode = True  # no scripts/__pycache__ entries for v2lines
sys.path.insert(0, str(Path(__file__).resolve().parent))
from v2lines import IMAGES, b64, dumps, run_oracle  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
VECTORS = ROOT / "tests" / "vectors"
# revision: (vectors file, the parser's oracle, the engine's oracle)
REVISIONS = {
    "v1": ("serve.jsonl", "oracle-newest", "oracle-serve-v1"),
    # upstream @ fdf10827 (the oracle's next/README.md)
    "v2": ("serve-v2.jsonl", "oracle-latest-next", "oracle-serve-next"),
}


def img(kind="png"):
    raw, mt = IMAGES[kind]
    return {"type": "image", "media_type": mt, "data": b64(raw)}


def url(kind="png"):
    raw, mt = IMAGES[kind]
    return f"data:{mt};base64,{b64(raw)}"


def txt(t):
    return {"type": "text", "text": t}


# Goal texts: (text, why). Blank to the engine is empty or only "\t\n\r "
# (MoonBit's String::is_blank); everything from the second list is not.
BLANK = [
    ("", "empty"),
    (" ", "one space"),
    ("\t", "one tab"),
    ("\n", "one LF"),
    ("\r", "one CR"),
    ("  ", "two spaces"),
    (" \t\r\n", "space, tab, CR, LF"),
    ("\r\n", "CRLF"),
    ("\n\n\n", "three LFs"),
    ("\t \t", "tabs around a space"),
    (" " * 1000, "1000 spaces"),
]
NOT_BLANK = [
    ("\u3000", "U+3000 ideographic space"),
    ("\u00a0", "U+00A0 no-break space"),
    ("\u000b", "U+000B vertical tab"),
    ("\u000c", "U+000C form feed"),
    ("\u2028", "U+2028 line separator"),
    ("\u2029", "U+2029 paragraph separator"),
    ("\u200b", "U+200B zero-width space"),
    ("\u0085", "U+0085 next line"),
    ("\ufeff", "U+FEFF byte order mark"),
    ("\u1680", "U+1680 ogham space mark"),
    ("\u2003", "U+2003 em space"),
    ("\u0000", "U+0000"),
    ("\u001f", "U+001F unit separator"),
    (" \u00a0 ", "a no-break space between spaces"),
    ("\t\u3000\n", "U+3000 between tab and LF"),
    (" \u000b", "space then vertical tab"),
    (" x ", "a letter between spaces"),
    ("x", "one letter"),
    ("ship it", "an ordinary goal"),
]
# The same texts as escapes in the line (what the JSON parser unescapes).
ESCAPED = [
    ("\\u0020", "escaped space"),
    ("\\u0009", "escaped tab (\\u form)"),
    ("\\u000A", "escaped LF (uppercase hex)"),
    ("\\u000d\\u000a", "escaped CR LF (\\u form)"),
    ("\\t\\n\\r ", "short escapes and a space"),
    ("\\u0020\\t", "escaped space and tab"),
    ("\\u000C", "escaped form feed (\\u form, uppercase hex)"),
    ("\\b", "short escape backspace"),
    ("\\u000B", "escaped vertical tab (uppercase hex)"),
    ("\\u3000", "escaped U+3000"),
    ("\\u00A0", "escaped no-break space"),
    ("\\u2028", "escaped line separator"),
    ("\\/", "escaped slash"),
]


def candidates():
    c = []

    def add(line, why):
        if not isinstance(line, str):
            line = dumps(line)
        c.append((line, why))

    G = lambda text, **kw: {"command": "goal", "action": "set", "text": text, **kw}  # noqa: E731

    # --- goal set: the blank test, text by text --------------------------------
    for text, why in BLANK + NOT_BLANK:
        add(G(text), f"goal set, text {why}")
    for text, why in ESCAPED:
        add('{"command":"goal","action":"set","text":"' + text + '"}', f"goal set, text {why}")
    # Raw controls inside the string, as the parser sees them.
    add('{"command":"goal","action":"set","text":"\t"}', "goal set, a raw tab inside the string")
    add('{"command":"goal","action":"set","text":" \r "}', "goal set, a raw CR inside the string")
    add('{"command":"goal","action":"set","text":"\v"}', "goal set, a raw vertical tab inside the string")
    add('{"command":"goal","action":"set","text":"\f"}', "goal set, a raw form feed inside the string")
    # `auto` does not change the verdict.
    for text, why in [("", "empty"), (" ", "one space"), ("\t\n", "tab LF"), ("\u3000", "U+3000"), ("go", "a word")]:
        for auto in (True, False):
            add(G(text, auto=auto), f"goal set, text {why}, auto {str(auto).lower()}")
    add(G(" ", auto="true"), "goal set, blank, auto the string \"true\" (not armed)")
    add(G(" ", auto=None), "goal set, blank, auto null")
    add('{"auto":true,"text":"  ","action":"set","command":"goal"}', "goal set, blank, keys in another order")
    add('  {"command" : "goal" , "action" : "set" , "text" : "\\t" }  ', "goal set, blank, whitespace around tokens")
    add('{"command":"goal","action":"set","text":"x","text":" "}', "goal set, duplicate text: the blank one is last")
    add('{"command":"goal","action":"set","text":" ","text":"x"}', "goal set, duplicate text: the blank one is first")
    add(G(" ", extra={"text": "x"}), "goal set, blank, a nested text is not the goal's")
    # The engine refuses only what parses: these are parse errors.
    add({"command": "goal", "action": "set"}, "goal set without text")
    add({"command": "goal", "action": "set", "text": None}, "goal set, text null")
    add({"command": "goal", "action": "set", "text": 0}, "goal set, text a number")
    add({"command": "goal", "action": "set", "text": [" "]}, "goal set, text an array")
    add({"command": "goal", "action": "SET", "text": " "}, "goal action SET, blank text")
    add({"command": "goal", "action": " ", "text": " "}, "goal action blank, blank text")
    add({"command": "goal", "text": " "}, "goal without action, blank text")
    # goal clear has no text to refuse.
    add({"command": "goal", "action": "clear"}, "goal clear")
    add({"command": "goal", "action": "clear", "text": ""}, "goal clear with an empty text")
    add({"command": "goal", "action": "clear", "text": " ", "auto": True}, "goal clear with a blank text and auto")

    # --- blank text elsewhere is not refused -------------------------------------
    add({"command": "prompt", "text": ""}, "prompt, empty text")
    add({"command": "prompt", "text": " \t"}, "prompt, blank text")
    add({"command": "prompt", "content": "  "}, "prompt, blank content")
    add({"command": "steer", "text": " "}, "steer, blank text")
    add({"command": "steer", "kind": "command", "text": "\n"}, "command steer, blank text")
    add({"command": "steer", "kind": "command", "content": ""}, "command steer, empty content")
    add({"command": "approval", "id": " ", "allow": True}, "approval, blank id")

    # --- steers with images: content parts ----------------------------------------
    kinds = [("command", "command steer"), ("prompt", "prompt steer"), (None, "steer without kind")]
    for kind, who in kinds:
        k = {"kind": kind} if kind else {}
        add({"command": "steer", **k, "content": [img()]}, f"{who}, one image part")
        add({"command": "steer", **k, "content": [txt("ls"), img()]}, f"{who}, text then image")
        add({"command": "steer", **k, "content": [img(), txt("ls")]}, f"{who}, image then text")
        add({"command": "steer", **k, "content": [txt("a"), img("jpeg"), img("gif89a")]}, f"{who}, text and two images")
        add({"command": "steer", **k, "content": [txt("a"), txt("b")]}, f"{who}, two text parts")
        add({"command": "steer", **k, "content": [txt("ls")]}, f"{who}, one text part")
        add({"command": "steer", **k, "content": []}, f"{who}, empty content array")
        add({"command": "steer", **k, "content": "ls"}, f"{who}, string content")
    for kind in ("webp", "gif87a"):
        add({"command": "steer", "kind": "command", "content": [img(kind)]}, f"command steer, one {kind} image")
    add({"command": "steer", "kind": "command", "content": [img()], "submission_id": "s-1"}, "tagged command steer with an image")
    add({"command": "steer", "content": [img()], "kind": "command"}, "command steer with an image, kind last")
    add('{"command":"steer","kind":"prompt","content":[' + dumps(img()) + '],"kind":"command"}', "duplicate kind: command is last")
    add('{"command":"steer","kind":"command","content":[' + dumps(img()) + '],"kind":"prompt"}', "duplicate kind: prompt is last")
    add('{"command":"steer","kind":"command","content":[' + dumps(img()) + '],"content":"ls"}', "duplicate content: text is last")
    # Parse errors come first: the engine never sees these commands.
    add({"command": "steer", "kind": "command", "content": [{"type": "image", "media_type": "image/png", "data": "iVBORw0KGgo"}]}, "command steer, image with unpadded base64")
    add({"command": "steer", "kind": "command", "content": [{"type": "image", "media_type": "image/jpeg", "data": b64(IMAGES["png"][0])}]}, "command steer, PNG declared image/jpeg")
    add({"command": "steer", "kind": "command", "content": [img(), 7]}, "command steer, image then a number")
    add({"command": "steer", "kind": "Command", "content": [img()]}, "steer kind Command, with an image")
    add({"command": "steer", "kind": "notice", "content": [img()]}, "steer kind notice, with an image")
    add({"command": "steer", "kind": "command", "content": [img()], "submission_id": 1}, "command steer with an image, numeric tag")

    # --- steers with images: legacy text + images ----------------------------------
    for kind, who in kinds:
        k = {"kind": kind} if kind else {}
        add({"command": "steer", **k, "text": "ls", "images": [url()]}, f"{who}, legacy text and one image")
        add({"command": "steer", **k, "text": "ls", "images": [url("jpeg"), url("webp")]}, f"{who}, legacy text and two images")
        add({"command": "steer", **k, "text": "ls", "images": []}, f"{who}, legacy text and no images")
    add({"command": "steer", "kind": "command", "text": "", "images": [url()]}, "command steer, legacy empty text and an image")
    add({"command": "steer", "kind": "command", "text": "ls", "images": None}, "command steer, legacy images null")
    add({"command": "steer", "kind": "command", "text": "ls", "images": "x"}, "command steer, legacy images a string")
    add({"command": "steer", "kind": "command", "text": "ls", "images": ["http://x/y.png"]}, "command steer, legacy image not a data URL")
    add({"command": "steer", "kind": "command", "text": "ls", "images": [url()], "submission_id": "s"}, "tagged command steer, legacy image")
    add({"command": "steer", "kind": "command", "content": "ls", "images": [url()]}, "command steer, string content beside legacy images")
    add({"command": "steer", "kind": "command", "content": [txt("ls")], "images": [url()]}, "command steer, text parts beside legacy images")
    add({"command": "steer", "kind": "command", "images": [url()]}, "command steer, images without text")

    # --- prompts with images: never refused -----------------------------------------
    add({"command": "prompt", "content": [img()]}, "prompt, one image part")
    add({"command": "prompt", "content": [txt("see"), img()]}, "prompt, text and image")
    add({"command": "prompt", "text": "see", "images": [url()]}, "prompt, legacy text and image")
    add({"command": "prompt", "content": [img()], "submission_id": "s"}, "tagged prompt, image part")

    # --- the other commands, untouched ---------------------------------------------
    add({"command": "compact"}, "compact")
    add({"command": "cancel"}, "cancel")
    add({"command": "approval", "id": "a1", "allow": False}, "approval")
    add({"command": "jobs_snapshot", "request_id": " "}, "jobs_snapshot, blank request_id")
    add({"command": "job_stop", "request_id": "r", "generation": "g1", "job_id": "j1"}, "job_stop")

    # --- lines that are not commands: the protocol's verdict --------------------------
    add("", "empty line")
    add("   ", "blank line")
    add("not json", "not JSON")
    add('{"command":"goal","action":"set","text":" "', "a blank goal cut short")
    add('{"command":"goal","action":"set","text":" "}x', "a blank goal and a stray letter")
    add('"goal text must not be blank"', "the message itself, a JSON string")
    add("[]", "an array")
    add("null", "null")
    add({"text": " "}, "no command")
    add({"command": "nap", "text": " "}, "unknown command, blank text")
    add({"command": " "}, "blank command name")
    return c


def vector(line, why, parsed, served):
    """One vector from the parser's verdict and the engine's."""
    v = {"line": line}
    if parsed == served:
        kind, value = parsed
        if kind == "OK":
            v["ok"] = value
        elif kind == "ERR":
            v["error"] = value
        else:
            v["not_json"] = True
    elif parsed[0] == "OK" and served[0] == "ERR":
        v["ok"] = parsed[1]
        v["refused"] = served[1]
    else:
        raise SystemExit(f"oracles disagree beyond a refusal on {line!r}: {parsed} vs {served}")
    v["why"] = why
    return json.dumps(v, ensure_ascii=False)


def build(oracle_dir, revision):
    _, parser, engine = REVISIONS[revision]
    cands = candidates()
    lines = [l for l, _ in cands]
    dup = {l for l in lines if lines.count(l) > 1}
    if dup:
        raise SystemExit(f"duplicate candidates: {sorted(dup)[:3]}")
    parsed = run_oracle(oracle_dir / parser, lines)
    served = run_oracle(oracle_dir / engine, lines)
    rows = [vector(l, w, p, s) for (l, w), p, s in zip(cands, parsed, served)]
    counts = {}
    for r in rows:
        v = json.loads(r)
        k = "refused" if "refused" in v else next(k for k in ("ok", "error", "not_json") if k in v)
        counts[k] = counts.get(k, 0) + 1
    return "".join(r + "\n" for r in rows), counts


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="compare with the files instead of writing them")
    default = os.environ.get("REFERENCE_ORACLE", str(ROOT.parent / "shared" / "reference-oracle"))
    ap.add_argument("--oracle-dir", default=default, help=f"the built reference oracles (default {default})")
    args = ap.parse_args()
    oracle_dir = Path(args.oracle_dir)
    stale = False
    for revision, (name, _, _) in REVISIONS.items():
        text, counts = build(oracle_dir, revision)
        out = VECTORS / name
        n = sum(counts.values())
        if args.check:
            if out.read_text(encoding="utf-8") != text:
                print(f"{out} is stale: rerun scripts/make_serve_vectors.py")
                stale = True
            else:
                print(f"{name} up to date ({n} vectors)")
        else:
            out.write_text(text, encoding="utf-8")
            print(f"wrote {n} vectors to {out}: {counts}")
    sys.exit(1 if stale else 0)


if __name__ == "__main__":
    main()
