#!/usr/bin/env python3
"""Regenerate tests/vectors/commands-v2.jsonl from the v2 reference oracle.

    python3 scripts/make_vectors_v2.py            # rewrite the vectors file
    python3 scripts/make_vectors_v2.py --check    # exit 1 if the file differs
    python3 scripts/make_vectors_v2.py --big      # the 5 MiB-limit cases (not stored)

Every candidate below is a `(line, why)` pair; the expected outcome is never
typed by hand: the script runs `oracle-latest-next --json` (the upstream
openseek `Command::parse` + `to_json` @ fdf10827, command.mbt reconstructed
from its API listing; see shared/reference-oracle/next/README.md) over all
candidates and writes, per line, `ok` (the canonical line the oracle
re-encodes to), `error` (its exact message) or `not_json: true`, with `why`.
Upstream's own test expectations (next/upstream_tests_latest.py) are
candidates too, and the script stops if the oracle answers one otherwise.
Same format as tests/vectors/commands.jsonl. Dev tool only: the crate, its
tests and CI never run the oracle. Python 3 standard library only.

`--big` runs lines around the image limit (5 MiB decoded, 6990508 base64
characters) through the oracle and prints the verdicts; they are ~7 MB each,
too big for the vectors file, so a Rust test generates them instead.
"""

import argparse
import json
import sys
from pathlib import Path

sys.dont_write_bytecode = True  # no scripts/__pycache__ entries for v2lines
sys.path.insert(0, str(Path(__file__).resolve().parent))
from v2lines import (  # noqa: E402
    GIF87,
    GIF89,
    IMAGES,
    JPEG,
    MEDIA_TYPES,
    ORACLE_DIR,
    ORACLE_LATEST,
    PNG,
    WEBP,
    b64,
    base64_near_misses,
    dumps,
    run_oracle,
    upstream_cases,
    upstream_holds,
)

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "vectors" / "commands-v2.jsonl"


# upstream's own command tests at the pin: (source, line, kind, expected)
UPSTREAM = upstream_cases("upstream_tests_latest.py")

_DEFAULT = object()  # `None` is a value under test (JSON null)


def img(kind="png", media_type=_DEFAULT, data=_DEFAULT):
    raw, mt = IMAGES[kind]
    return {
        "type": "image",
        "media_type": mt if media_type is _DEFAULT else media_type,
        "data": b64(raw) if data is _DEFAULT else data,
    }


def txt(t):
    return {"type": "text", "text": t}


def candidates():
    c = []

    def add(line, why):
        if not isinstance(line, str):
            line = dumps(line)
        c.append((line, why))

    P = lambda content, **kw: {"command": "prompt", "content": content, **kw}  # noqa: E731
    S = lambda content, **kw: {"command": "steer", "content": content, **kw}  # noqa: E731

    # --- content: the shapes that decode -------------------------------------
    add(P("do it"), "string content is one text part")
    add(P(""), "empty string content")
    add(P([]), "empty content array stays an array")
    add(P([txt("a")]), "one text part re-encodes as a string")
    add(P([txt("")]), "one empty text part re-encodes as an empty string")
    add(P([txt("a"), txt("b")]), "two text parts stay an array")
    add(P([txt("a"), txt("b"), txt("c")]), "three text parts")
    add(P([txt("look"), img("png")]), "text then image")
    add(P([img("png"), txt("what is this?")]), "image then text")
    add(P([img("png")]), "one image part stays an array")
    add(P([img("png"), img("png")]), "two images")
    for k in IMAGES:
        add(P([txt("x"), img(k)]), f"valid {k} image")
        add(S([img(k)], kind="prompt"), f"steer with a {k} image")
    add(P([txt("a"), img("jpeg"), txt("b"), img("gif89a"), img("webp")]), "five parts, mixed")
    add(P("x", submission_id="s-1"), "tagged prompt with content")
    add(P("x", submission_id=""), "empty submission_id is a tag")
    add(P([txt("a"), img("png")], submission_id="s"), "tagged multi-part prompt")
    add('{"submission_id":"s","content":"x","command":"prompt"}', "keys in any order")
    add(P("x", text="ignored"), "content wins over text")
    add(P("x", text=7), "content wins over a non-string text")
    add(P("x", images=["nope"]), "images are ignored next to content")
    add(P("x", images=7), "a non-array images is ignored next to content")
    add(P("x", kind="command"), "prompt ignores kind")
    add(P([txt("a"), txt("b")], extra={"deep": [1, 2]}), "unknown top-level field")

    # --- content: wrong top-level types ---------------------------------------
    for v, why in [
        (None, "null"),
        (7, "number"),
        (-0.5, "negative fraction"),
        ({}, "empty object"),
        ({"type": "text", "text": "a"}, "a bare part object"),
        (True, "true"),
        (False, "false"),
    ]:
        add(P(v), f"content {why} is neither string nor array")
    add('{"command":"prompt","content":1e400}', "content 1e400 is a number")
    add(S(None), "steer content null")
    add(S(7, kind="command"), "steer content number")

    # --- parts that are not objects -------------------------------------------
    for v, why in [("text", "string"), (1, "number"), (None, "null"), ([txt("a")], "array"), (True, "bool")]:
        add(P([v]), f"part is a {why}")
    add(P([txt("a"), "b"]), "second part is a string")
    add(P([txt("a"), txt("b"), 3]), "third part is a number")

    # --- part type ---------------------------------------------------------------
    for t, why in [
        (None, "null type"),
        (1, "numeric type"),
        ("Text", "type is case-sensitive"),
        ("text ", "type with a trailing space"),
        ("video", "unknown type"),
        ("", "empty type"),
        (["text"], "array type"),
        ({"t": "text"}, "object type"),
        ("a/b~c", "type with pointer characters"),
        ("image_url", "OpenAI-style type"),
    ]:
        add(P([{"type": t, "text": "a"}]), why)
    add(P([{"text": "a"}]), "part without type")
    add(P([{}]), "empty part object")
    add(P([txt("a"), {"text": "b"}]), "second part without type")
    add(P([txt("a"), txt("b"), {"type": "audio"}]), "third part of unknown type")
    add(P([txt(str(i)) for i in range(10)] + [{"type": "x"}]), "eleventh part: a two-digit index")
    add(
        '{"command":"prompt","content":[{"\\u0074ype":"\\u0074ext","text":"a"}]}',
        "type key and value spelled with escapes",
    )
    add('{"command":"prompt","content":[{"type":"t\\u0065xt","text":"\\u0061"},{"type":"im\\u0061ge","media_type":"image\\/png","data":"' + b64(PNG) + '"}]}', "escapes in type, media_type and text")

    # --- text parts -------------------------------------------------------------
    for v, why in [(None, "null"), (7, "number"), (True, "bool"), (["a"], "array"), ({"a": 1}, "object")]:
        add(P([{"type": "text", "text": v}]), f"text part with {why} text")
    add(P([{"type": "text"}]), "text part without text")
    add(P([txt("a"), {"type": "text", "text": 1}]), "second text part with numeric text")
    add(P([txt("a"), txt("b"), {"type": "text"}]), "third text part without text")
    add(P([{"type": "text", "text": "a", "media_type": 5, "data": None}]), "text part ignores image fields")
    add(P([{"type": "text", "text": "a", "extra": {"x": [1, {"y": None}]}}]), "unknown field in a text part")
    add(
        '{"command":"prompt","content":[{"type":"text","text":"a","x":' + "[" * 500 + "]" * 500 + "}]}",
        "deep nesting in an ignored field inside a part",
    )
    add(
        '{"command":"prompt","content":[{"type":"text","text":"a","x":' + "[" * 1021 + "]" * 1021 + "}]}",
        "nesting exactly at the 1024-level limit inside a part",
    )
    add(
        '{"command":"prompt","content":[{"type":"text","text":"a","x":' + "[" * 1022 + "]" * 1022 + "}]}",
        "nesting one past the 1024-level limit inside a part",
    )

    # --- image parts: fields ------------------------------------------------------
    for v, why in [(None, "null"), (7, "number"), (["image/png"], "array"), ({}, "object"), (False, "bool")]:
        add(P([img("png", media_type=v)]), f"image with {why} media_type")
        add(P([img("png", data=v)]), f"image with {why} data")
    add(P([{"type": "image", "data": b64(PNG)}]), "image without media_type")
    add(P([{"type": "image", "media_type": "image/png"}]), "image without data")
    add(P([{"type": "image"}]), "image without either: media_type first")
    add(P([{"type": "image", "media_type": 1, "data": 2}]), "both bad: media_type first")
    add(P([{"type": "image", "media_type": "image/png", "data": "!!"}, {"type": "bad"}]), "first bad part wins")
    add(P([txt("a"), img("png", data="bad")]), "second part is a bad image")
    add(P([txt("a"), txt("b"), img("png", media_type=None)]), "third part: null media_type")
    add(P([img("png", data=b64(PNG)) | {"text": 7, "extra": [[[]]]}]), "unknown fields in an image part")

    # --- image parts: the four image errors ---------------------------------------
    for k, (raw, mt) in IMAGES.items():
        for why, data in base64_near_misses(raw):
            if k in ("png", "jpeg") or why in ("unpadded", "nonzero trailing bits", "space inside"):
                add(P([img(k, data=data)]), f"{k}: {why}")
    add(P([img("jpeg", data=b64(JPEG).replace("/", "_").replace("+", "-"))]), "URL-safe alphabet")
    add(P([img("jpeg", data=b64(JPEG).replace("/", "_").replace("+", "-").rstrip("="))]), "URL-safe, unpadded")
    add(P([img("png", data="")]), "empty data decodes to no bytes: unsupported")
    add(P([img("png", data=b64(b"hello world"))]), "text bytes are no image")
    add(P([img("png", data=b64(PNG[:7]))]), "PNG signature one byte short")
    add(P([img("png", data=b64(PNG[:8]))]), "bare 8-byte PNG signature")
    add(P([img("jpeg", data=b64(b"\xff\xd8"))]), "JPEG needs three bytes")
    add(P([img("jpeg", data=b64(b"\xff\xd8\xff"))]), "bare 3-byte JPEG marker")
    add(P([img("gif89a", data=b64(b"GIF88a" + GIF89[6:]))]), "GIF88a is no GIF")
    add(P([img("gif89a", data=b64(b"gif89a" + GIF89[6:]))]), "GIF signature is case-sensitive")
    add(P([img("gif89a", data=b64(b"GIF87a"))]), "bare GIF87a signature")
    add(P([img("webp", data=b64(WEBP[:11]))]), "WebP header one byte short")
    add(P([img("webp", data=b64(WEBP[:12]))]), "bare 12-byte RIFF....WEBP")
    add(P([img("webp", data=b64(b"RIFF" + WEBP[4:8] + b"WAVE" + WEBP[12:]))]), "RIFF WAVE is no WebP")
    add(P([img("png", data=b64(b"\x00" + PNG))]), "signature not at the start")
    for k, (raw, mt) in IMAGES.items():
        for other in MEDIA_TYPES:
            if other != mt and k != "gif87a":
                add(P([img(k, media_type=other)]), f"{k} bytes declared {other}")
    for mt, why in [
        ("IMAGE/PNG", "upper case"),
        ("image/png ", "trailing space"),
        (" image/png", "leading space"),
        ("image/jpg", "jpg alias"),
        ("image/x-png", "x-png alias"),
        ("", "empty media type"),
        ("image/png; charset=binary", "parameters"),
        ("image/pñg", "non-ASCII media type"),
        ("画像/png", "CJK media type"),
        ("image/png\u2028", "U+2028 in media type"),
        ("image/png\n", "LF in media type"),
        ("image/\"png\"", "quotes in media type"),
        ("😀", "emoji media type"),
    ]:
        add(P([img("png", media_type=mt)]), f"media type mismatch: {why}")
    add(P([img("png", media_type="image/jpeg", data="!!!!")]), "invalid base64 beats mismatch")
    add(P([img("png", media_type="image/jpeg", data=b64(b"abc"))]), "unsupported bytes beat mismatch")
    add(
        '{"command":"prompt","content":[{"type":"image","media_type":"\\u0069mage\\/png","data":"' + b64(PNG) + '"}]}',
        "escaped media_type equals image/png",
    )
    jd = b64(JPEG)
    add(
        '{"command":"prompt","content":[{"type":"image","media_type":"image/jpeg","data":"' + jd.replace("/", "\\/") + '"}]}',
        "\\/ escapes in base64 data",
    )
    add(
        '{"command":"prompt","content":[{"type":"image","media_type":"image/jpeg","data":"' + "".join("\\u%04x" % ord(ch) for ch in jd) + '"}]}',
        "every base64 character escaped",
    )

    # --- duplicate keys ----------------------------------------------------------
    add('{"command":"prompt","content":7,"content":"a"}', "duplicate content: the last wins")
    add('{"command":"prompt","content":"a","content":7}', "duplicate content: a bad last one wins")
    add('{"command":"prompt","content":[{"type":"text","text":"a","text":"b"}]}', "duplicate text in a part")
    add('{"command":"prompt","content":[{"type":"image","type":"text","text":"a"}]}', "duplicate type in a part")
    add('{"command":"prompt","content":[{"type":"text","text":"a","type":"image"}]}', "duplicate type: image wins, needs media_type")
    add('{"command":"prompt","content":[{"type":"image","media_type":"image/jpeg","media_type":"image/png","data":"' + b64(PNG) + '"}]}', "duplicate media_type")
    add('{"command":"prompt","content":[{"type":"image","media_type":"image/png","data":"bad","data":"' + b64(PNG) + '"}]}', "duplicate data: the last is good")
    add('{"command":"steer","command":"prompt","content":"x"}', "duplicate command")
    add('{"command":"prompt","content":"x","submission_id":7,"submission_id":"s"}', "duplicate submission_id")

    # --- escapes in strings -------------------------------------------------------
    add(P("a\u0000b\u001f\u007f\u2028/\\\"\b\f\n\r\t"), "content escapes re-encoded as the reference writes them")
    add('{"command":"prompt","content":"\\/\\u00e9\\ud83d\\ude00"}', "escaped slash, BMP and astral chars")
    add('{"\\u0063ommand":"prompt","\\u0063ontent":"x"}', "keys spelled with escapes")
    add(P([txt("\u0000"), txt("é😀")]), "escapes inside text parts")
    add('{"command":"prompt","content":"\\ud800"}', "lone high surrogate is not JSON here")
    add('{"command":"prompt","content":[{"type":"text","text":"a\\udc00"}]}', "lone low surrogate in a part is not JSON")

    # --- steer --------------------------------------------------------------------
    add(S("x"), "steer without kind is a prompt steer")
    add(S("x", kind="prompt"), "prompt steer")
    add(S("/diff", kind="command"), "command steer")
    add(S("x", submission_id="s-1"), "tagged steer")
    add(S("x", kind="command", submission_id="s-2"), "tagged command steer")
    add(S("x", submission_id=""), "steer: empty submission_id is a tag")
    add(S([txt("a"), txt("b")], kind="command"), "multi-part command steer")
    add(S([txt("a")], submission_id="s"), "one-part steer re-encodes as a string")
    add('{"command":"steer","kind":"command","submission_id":"s","content":"x"}', "steer keys in any order")
    for v, why in [(7, "number"), (None, "null"), (True, "bool"), (["s"], "array"), ({"id": "s"}, "object")]:
        add({"command": "steer", "content": "x", "submission_id": v}, f"steer: {why} submission_id")
    add({"command": "steer", "submission_id": 7}, "steer: submission_id before missing content")
    add({"command": "steer", "submission_id": None, "content": 7}, "steer: submission_id before bad content")
    add({"command": "steer", "submission_id": 1, "content": "x", "kind": 1}, "steer: submission_id before bad kind")
    add({"command": "steer", "content": 7, "kind": "bogus"}, "steer: content before kind")
    add({"command": "steer", "content": [{"type": "x"}], "kind": 7}, "steer: bad part before bad kind")
    add({"command": "steer", "kind": "bogus"}, "steer: missing content before kind")
    for v, why in [
        ("Prompt", "kind is case-sensitive"),
        ("notice", "controllers cannot send a notice"),
        ("", "empty kind"),
        ("command ", "kind with trailing space"),
        ("a\nb", "kind with LF is echoed"),
    ]:
        add(S("x", kind=v), f"steer: {why}")
    for v, why in [(7, "number"), (None, "null"), (True, "bool"), (["prompt"], "array"), ({}, "object")]:
        add(S("x", kind=v), f"steer: {why} kind")
    add({"command": "steer", "text": "x"}, "legacy steer text")
    add({"command": "steer", "text": "x", "kind": "command", "submission_id": "s"}, "legacy tagged command steer")
    add({"command": "steer", "text": 7}, "legacy steer: text not a string")
    add({"command": "steer"}, "steer with nothing")
    add({"command": "steer", "text": "x", "images": ["data:image/png;base64," + b64(PNG)]}, "legacy steer with an image")

    # --- prompt precedence -------------------------------------------------------
    add({"command": "prompt", "content": "x", "submission_id": 7}, "prompt: bad submission_id after good content")
    add({"command": "prompt", "content": 7, "submission_id": 7}, "prompt: content before submission_id")
    add({"command": "prompt", "submission_id": 7}, "prompt: missing text before submission_id")
    add({"command": "prompt", "submission_id": None, "text": "x"}, "prompt: null submission_id with legacy text")
    add({"command": "prompt"}, "prompt with nothing")
    add({"command": "prompt", "text": None}, "prompt: null text")
    add({"command": "prompt", "content": None, "text": "x"}, "null content never falls back to text")
    add({"command": "prompt", "content": [{"type": "x"}], "text": "x"}, "malformed content never falls back to text")
    add({"command": "prompt", "content": [txt("a"), 1], "text": "x", "images": []}, "bad 2nd part, text present")

    # --- legacy text + images ---------------------------------------------------
    add({"command": "prompt", "text": "do it"}, "legacy text alone re-encodes as content")
    add({"command": "prompt", "text": ""}, "legacy empty text")
    add({"command": "prompt", "text": "x", "submission_id": "s"}, "legacy tagged prompt")
    add({"command": "prompt", "text": "x", "images": []}, "empty images list")
    for k, (raw, mt) in IMAGES.items():
        add({"command": "prompt", "text": "x", "images": [f"data:{mt};base64,{b64(raw)}"]}, f"legacy {k} image")
    add(
        {"command": "prompt", "text": "x", "images": ["data:image/png;base64," + b64(PNG), "data:image/jpeg;base64," + b64(JPEG)]},
        "legacy: two images",
    )
    add({"command": "prompt", "text": "x", "images": ["data:image/png;base64," + b64(PNG)], "submission_id": "s"}, "legacy images, tagged")
    for v, why in [
        ("data:image/png;base64," + b64(PNG), "a string"),
        (None, "null"),
        (7, "a number"),
        ({"0": "data:"}, "an object"),
        (True, "a bool"),
        ([7], "an array with a number"),
        ([None], "an array with null"),
        ([["data:image/png;base64," + b64(PNG)]], "a nested array"),
        (["data:image/png;base64," + b64(PNG), 1], "a good URL then a number"),
        ([{"url": "x"}], "an array with an object"),
        (["data:image/png;base64,bad", 7], "a bad URL then a number: the list is read first"),
        (["http://x", None], "a non-data URL then null"),
    ]:
        add({"command": "prompt", "text": "x", "images": v}, f"images is {why}")
    add({"command": "prompt", "text": 7, "images": []}, "legacy: non-string text with images")
    add({"command": "prompt", "images": ["data:image/png;base64," + b64(PNG)]}, "legacy: images without text")
    add({"command": "prompt", "text": "x", "images": [1], "submission_id": 7}, "legacy: images error before submission_id")
    P64 = b64(PNG)
    for url, why in [
        ("http://x/y.png", "an http URL"),
        ("", "an empty URL"),
        ("data:", "bare data:"),
        ("DATA:image/png;base64," + P64, "upper-case scheme"),
        (" data:image/png;base64," + P64, "leading space"),
        ("data:image/png," + P64, "no ;base64,"),
        ("data:image/png;base64" + P64, "no comma"),
        ("data:image/png;BASE64," + P64, "upper-case BASE64"),
        ("data:image/png;charset=x;base64," + P64, "a parameter before ;base64,"),
        ("data:image/png;base64," + P64 + ";base64,AAAA", "split on the first ;base64,"),
        ("data:image/png;base64,;base64," + P64, "empty data before a second ;base64,"),
        ("data:;base64," + P64, "empty media type"),
        ("data:image/png;base64,", "empty data"),
        ("data:image/jpeg;base64," + P64, "media type mismatch"),
        ("data:image/gif;base64," + b64(WEBP), "gif declared, webp bytes"),
        ("data:image/png ;base64," + P64, "media type with a space"),
        ("data:image/pñg;base64," + P64, "non-ASCII media type"),
        ("data:Image/PNG;base64," + P64, "media type case"),
        ("data:image/png;base64," + b64(b"plain text"), "unsupported bytes"),
    ]:
        add({"command": "prompt", "text": "x", "images": [url]}, f"data URL: {why}")
    for why, data in base64_near_misses(PNG):
        add({"command": "prompt", "text": "x", "images": ["data:image/png;base64," + data]}, f"data URL base64: {why}")
    for k in ("jpeg", "gif87a"):  # padded with "==" and "=": the padding rules
        raw, mt = IMAGES[k]
        for why, data in base64_near_misses(raw):
            if "padd" in why or "trailing bits" in why:
                add({"command": "prompt", "text": "x", "images": [f"data:{mt};base64,{data}"]}, f"data URL base64 ({k}): {why}")
    add(
        {"command": "prompt", "text": "x", "images": ["data:image/jpeg;base64," + b64(JPEG).replace("/", "_")]},
        "data URL base64: URL-safe alphabet",
    )
    add(
        {"command": "prompt", "text": "x", "images": ["data:image/png;base64," + P64, "data:image/png;base64,bad"]},
        "data URL: second image bad",
    )
    add(
        {"command": "prompt", "text": "x", "images": ["data:image/png;base64,bad", "data:image/jpeg;base64," + P64]},
        "data URL: first bad image wins",
    )
    add(
        '{"command":"prompt","text":"x","images":["data:image\\/jpeg;base64,' + b64(JPEG).replace("/", "\\/") + '"]}',
        "data URL with \\/ escapes",
    )
    add(
        '{"command":"prompt","text":"x","images":["data:image/png;base64,AA==","data:image/png;base64,AA=="],"images":[]}',
        "duplicate images: the last (empty) wins",
    )

    # --- jobs ----------------------------------------------------------------------
    J = lambda **kw: {"command": "jobs_snapshot", **kw}  # noqa: E731
    K = lambda **kw: {"command": "job_stop", **kw}  # noqa: E731
    add(J(request_id="r1"), "jobs snapshot")
    add(J(request_id="r é/😀 x"), "request_id is any non-empty string")
    add(J(request_id=" "), "a blank request_id is not empty")
    add(J(request_id="r", generation="..", job_id=7, extra=[1]), "jobs_snapshot ignores other fields")
    for v, why in [("", "empty"), (7, "numeric"), (None, "null"), (["r"], "array"), (True, "bool")]:
        add(J(request_id=v), f"jobs_snapshot: {why} request_id")
        add(K(request_id=v, generation="g", job_id="j"), f"job_stop: {why} request_id")
    add(J(), "jobs_snapshot without request_id")
    add('{"command":"jobs_snapshot","request_id":"r","request_id":""}', "jobs_snapshot: duplicate request_id, last empty")
    add('{"command":"jobs_snapshot","request_id":"","request_id":"r"}', "jobs_snapshot: duplicate request_id, last good")
    add('{"command":"jobs_snapshot","\\u0072equest_id":"\\u0072"}', "jobs_snapshot spelled with escapes")
    add(K(request_id="r", generation="g-1", job_id="job_2.log"), "job stop")
    add('{"job_id":"j","generation":"g","request_id":"r","command":"job_stop"}', "job_stop keys in any order")
    add(K(request_id="r", generation="g", job_id="j", extra={"a": [1]}), "job_stop ignores unknown fields")
    good = [
        ("a", "one char"),
        ("...", "three dots"),
        (".a", "leading dot"),
        ("a..b", "inner dots"),
        ("-", "a dash"),
        ("_", "an underscore"),
        ("AZaz09-_.", "every allowed class"),
        ("x" * 200, "200 chars"),
    ]
    bad = [
        ("", "empty"),
        (".", "dot"),
        ("..", "dot dot"),
        ("x" * 201, "201 chars"),
        ("a/b", "a slash"),
        ("/", "only a slash"),
        ("a\\b", "a backslash"),
        ("a b", "a space"),
        (" a", "a leading space"),
        ("a\n", "a trailing LF"),
        ("é", "non-ASCII"),
        ("a😀", "an astral char"),
        ("a:b", "a colon"),
        ("a+b", "a plus"),
        ("a\u0000", "NUL"),
        ("ａ", "fullwidth letter"),
        ("x" * 199 + "é", "200 chars, one non-ASCII"),
        (7, "a number"),
        (None, "null"),
        (["g"], "an array"),
    ]
    for v, why in good:
        add(K(request_id="r", generation=v, job_id="j"), f"generation: {why}")
        add(K(request_id="r", generation="g", job_id=v), f"job_id: {why}")
    for v, why in bad:
        add(K(request_id="r", generation=v, job_id="j"), f"generation: {why}")
        add(K(request_id="r", generation="g", job_id=v), f"job_id: {why}")
    add(K(generation="g", job_id="j"), "job_stop without request_id")
    add(K(request_id="r", job_id="j"), "job_stop without generation")
    add(K(request_id="r", generation="g"), "job_stop without job_id")
    add(K(), "job_stop with nothing")
    add('{"command":"job_stop","request_id":"r","generation":"g","job_id":"\\u002e\\u002e"}', "escaped .. job_id")
    add('{"command":"job_stop","request_id":"r","generation":"g\\/h","job_id":"j"}', "escaped slash in generation")
    add({"command": "Jobs_snapshot", "request_id": "r"}, "job command names are case-sensitive")
    add({"command": "job_stops", "request_id": "r"}, "near-miss job command name")
    add({"command": "jobs", "request_id": "r"}, "unknown jobs command")

    # --- the retired prediction commands ---------------------------------------
    # Upstream command.mbt @ 642262b0 read `predict` (request_id and
    # source_sequence) and `cancel_prediction`; at fdf10827 they are gone and
    # every such line is `unknown command: predict` / `cancel_prediction`,
    # well-formed by the old guards or not. The lines stay, to hold a decoder
    # that still knows them. The oracle's latest/test_lines.txt (pulled in
    # below) has the first 60; these are the number's spellings and edges it
    # does not, and the id's UTF-16 count in escapes and across planes.
    def pred(seq, rid='"p"', name="predict"):
        return '{"command":"%s","request_id":%s,"source_sequence":%s}' % (name, rid, seq)

    for seq, why in [
        ("42", "a plain sequence"),
        ("-0.0", "negative zero as a fraction"),
        ("0e0", "zero with an exponent"),
        ("0.0000000000000000000001e22", "a tiny mantissa scaled to 1"),
        ("1.000", "trailing zeros of a whole number"),
        ("100e-2", "100e-2 is 1"),
        ("2147483647e0", "the maximum with an exponent"),
        ("21474836.47e2", "the maximum with a fraction and an exponent"),
        ("2.147483647e9", "the maximum in scientific notation"),
        ("2.147483648e9", "one past the maximum in scientific notation"),
        ("2147483647.5", "the maximum plus a half"),
        ("2147483646.9999999", "just under the maximum, refused"),
        ("1E2", "capital exponent"),
        ("1e+2", "explicit plus exponent"),
        ("12345678901234567890e-10", "20 digits scaled back into range, not whole"),
        ("12345678900000000000e-10", "20 digits scaled back to a whole number"),
        ("1" + "0" * 400 + "e-400", "401 digits scaled to 1"),
        ("0." + "0" * 400 + "1e401", "a 400-zero fraction scaled to 1"),
        ("1" + "0" * 10000, "10,000 digits: infinity"),
        ("7." + "0" * 10000, "7 with 10,000 zero decimals"),
        ("7." + "0" * 10000 + "1", "7 plus 10^-10001: rounds to 7"),
        ("1e1000000000", "an exponent of 10^9"),
        ("1e-1000000000", "a negative exponent of 10^9"),
        ("5e-324", "the smallest subnormal"),
        ("-2147483647", "the negative maximum"),
        ("-2147483648", "the Int minimum"),
        ("9007199254740993", "2^53 + 1"),
        ("1.7976931348623157e308", "the largest double"),
        ("1e4294967296", "an exponent of 2^32: the reference wraps it to 0"),
        ("1e4294967297", "an exponent of 2^32 + 1: wrapped, 10"),
        ("1e-4294967296", "a negative exponent of 2^32: the reference wraps it, 1"),
        ("1.5e4294967296", "1.5 with a wrapped exponent"),
        ("1e2147483648", "an exponent of 2^31: wrapped negative"),
        ("1e8589934592", "an exponent of 2^33: wrapped to 0"),
        ("1" + "0" * 800 + "e-800", "801 integer digits: the reference drops the 801st from the magnitude"),
        ("1" + "0" * 801 + "e-798", "802 integer digits scaled: the reference reads 10"),
        ("7." + "0" * 900 + "1", "7 plus a digit past the 800 kept"),
    ]:
        add(pred(seq), f"predict: source_sequence {why}")
    for seq, why in [
        ("01", "a leading zero"),
        ("+1", "a plus sign"),
        (".5", "no integer part"),
        ("1.", "no fraction digits"),
        ("1e", "no exponent digits"),
        ("0x10", "hex"),
        ("Infinity", "Infinity"),
        ("NaN", "NaN"),
        ("- 1", "a space after the minus"),
    ]:
        add(pred(seq), f"predict: source_sequence {why} is not JSON")
    add('{"command":"predict","request_id":"p","source_sequence": 7 }', "predict: spaces around the number")
    add('{"command":"predict","request_id":"p","source_sequence":0,"source_sequence":3}', "predict: the last duplicate wins")
    add('{"command":"predict","request_id":"p","source_sequence":3,"source_sequence":"3"}', "predict: a last duplicate string loses")
    add('{"command":"predict","request_id":"","request_id":"p","source_sequence":3}', "predict: the last request_id wins")
    add('{"command":"predict","request_id":"p","source_\\u0073equence":3}', "predict: an escaped key")
    add('{"command":"pr\\u0065dict","request_id":"p","source_sequence":3}', "predict: an escaped name")
    add('{"command":"predict","request_id":"\\u0070","source_sequence":3}', "predict: an escaped id is unescaped")
    add('{"command":"predict","request_id":"p","source_sequence":{"n":1}}', "predict: an object sequence")
    add('{"command":"predict","request_id":{"id":"p"},"source_sequence":1}', "predict: an object id")
    add('{"command":"predict","request_id":"p","source_sequence":1,"content":[{"type":"video"}]}', "predict ignores bad content")
    add('{"command":"predict","request_id":["p"],"source_sequence":1}', "predict: an array id")
    add('{"command":"predict","request_id":false,"source_sequence":1}', "predict: a false id")
    add('{"command":"predict","request_id":"p","source_sequence":false}', "predict: a false sequence")
    add('{"command":"predict","request_id":"p","source_sequence":1,"text":"x","images":7}', "predict ignores text and images")
    for rid, why in [
        ('"' + "é" * 128 + '"', "128 two-byte chars: 128 units"),
        ('"' + "é" * 129 + '"', "129 two-byte chars: 129 units"),
        ('"' + "日" * 128 + '"', "128 three-byte chars: 128 units"),
        ('"' + "日" * 129 + '"', "129 three-byte chars: 129 units"),
        ('"' + "😀" * 64 + '"', "64 astral chars: 128 units"),
        ('"' + "😀" * 65 + '"', "65 astral chars: 130 units"),
        ('"' + "a" * 127 + "😀" + '"', "127 + an astral char: 129 units"),
        ('"' + "\\u0061" * 128 + '"', "128 escaped chars"),
        ('"' + "\\u0061" * 129 + '"', "129 escaped chars"),
        ('"' + "\\ud83d\\ude00" * 64 + '"', "64 escaped surrogate pairs"),
        ('"\\u0000"', "a NUL id"),
        ('"\\n"', "a LF id"),
    ]:
        add(pred(1, rid), f"predict: request_id of {why}")
        add('{"command":"cancel_prediction","request_id":%s}' % rid, f"cancel_prediction: request_id of {why}")
    add('{"command":"cancel_prediction","request_id":"p","source_sequence":0}', "cancel_prediction ignores a bad sequence")
    add('{"command":"cancel_prediction","request_id":[]}', "cancel_prediction: an array id")
    add('{"command":"cancel_prediction","request_id":false}', "cancel_prediction: a false id")
    add('{"command":"Cancel_prediction","request_id":"p"}', "cancel_prediction is case-sensitive")
    add('{"command":"cancel_predictions","request_id":"p"}', "near-miss prediction command name")
    add('{"command":"prediction","request_id":"p","source_sequence":1}', "prediction is no command")

    # --- what stayed the same ----------------------------------------------------
    add({"command": "compact"}, "compact")
    add({"command": "compact", "content": 7, "text": None}, "compact ignores everything else")
    add({"command": "cancel"}, "cancel")
    add({"command": "cancel", "images": "x"}, "cancel ignores images")
    add({"command": "goal", "action": "set", "text": "ship it"}, "goal set")
    add({"command": "goal", "action": "set", "text": "x", "auto": True}, "goal armed")
    add({"command": "goal", "action": "set", "text": "x", "auto": "true"}, "goal auto must be JSON true")
    add({"command": "goal", "action": "set", "text": "  "}, "a blank goal decodes")
    add({"command": "goal", "action": "set", "content": "x"}, "goal has no content")
    add({"command": "goal", "action": "clear"}, "goal clear")
    add({"command": "goal", "action": "toggle"}, "unknown goal action")
    add({"command": "goal"}, "goal without action")
    add({"command": "approval", "id": "ap-1", "allow": True}, "approval allow")
    add({"command": "approval", "id": "ap-1", "allow": False}, "approval deny")
    add({"command": "approval", "id": "ap-1"}, "approval without allow")
    add({"command": "approval", "id": "ap-1", "allow": "yes"}, "approval: string allow")
    add({"command": "approval", "allow": True}, "approval without id")
    add({"command": "approval", "id": 7, "allow": True}, "approval: numeric id")
    add({"command": "inject", "text": "x"}, "unknown command")
    add({"command": ""}, "empty command name")
    add({"command": "a\nb"}, "command name with LF is echoed")
    add({"command": "PROMPT", "content": "x"}, "command names are case-sensitive")
    add({"command": "images"}, "images is no command")
    add({"command": 7}, "numeric command")
    add({"command": None}, "null command")
    add({"content": "x"}, "no command field")
    add(["not an object"], "an array line")
    add('"prompt"', "a string line")
    add("7", "a number line")
    add("null", "a null line")
    add("{}", "an empty object")

    # --- not JSON ---------------------------------------------------------------
    add("", "an empty line")
    add('{"command":"prompt","content":"x"} x', "trailing characters")
    add('{"command":"prompt","content":"x",}', "trailing comma")
    add('{"command":"prompt","content":[{"type":"text","text":"a"},]}', "trailing comma in content")
    add('{"command":"prompt","content":[{"type":"text","text":"a"}', "truncated array")
    add('{"command":"prompt","content":"x', "unterminated string")
    add('\ufeff{"command":"cancel"}', "a BOM")
    add('{"command":"prompt","content":"a\tb"}', "raw tab in a string")
    add("{'command':'cancel'}", "single quotes")
    add('{"command":"prompt","content":[{"type":"image","media_type":"image/png","data":' + b64(PNG) + "}]}", "unquoted base64")
    # The oracle's own upstream-derived test lines, where not already above.
    seen = {l for l, _ in c}
    for name in ("test_lines.txt", "brief_lines.txt"):
        path = ORACLE_DIR / "latest" / name
        for i, l in enumerate(path.read_text(encoding="utf-8").split("\n")[:-1], 1):
            if l not in seen:
                seen.add(l)
                c.append((l, f"oracle's latest/{name} line {i}"))
    # Upstream's own test expectations (next/upstream_tests_latest.py), where
    # not already above; `build` checks every one against the oracle.
    for src, l, kind, _ in UPSTREAM:
        if l not in seen:
            seen.add(l)
            c.append((l, f"upstream test ({src}, {kind})"))
    return c


def vector(line, why, verdict):
    kind, value = verdict
    v = {"line": line}
    if kind == "OK":
        v["ok"] = value
    elif kind == "ERR":
        v["error"] = value
    else:
        v["not_json"] = True
    v["why"] = why
    return json.dumps(v, ensure_ascii=False)


def build():
    cands = candidates()
    lines = [l for l, _ in cands]
    dup = {l for l in lines if lines.count(l) > 1}
    if dup:
        raise SystemExit(f"duplicate candidates: {sorted(dup)[:3]}")
    verdicts = run_oracle(ORACLE_LATEST, lines)
    # Every upstream expectation holds for the oracle, or the pin is wrong.
    answers = dict(zip(lines, run_oracle(ORACLE_LATEST, lines, json_mode=False)))
    wrong = [(src, l, kind, exp, answers[l]) for src, l, kind, exp in UPSTREAM
             if not upstream_holds(kind, exp, answers[l])]
    if wrong:
        raise SystemExit(f"{len(wrong)} upstream expectations fail, e.g. {wrong[:3]}")
    return "".join(vector(l, w, v) + "\n" for (l, w), v in zip(cands, verdicts)), verdicts


def big():
    """The image limit at full size: printed, never stored."""
    limit = (5 * 1024 * 1024 + 2) // 3 * 4  # 6990508 base64 characters
    at_limit = b64(PNG + b"\x00" * (5 * 1024 * 1024 - len(PNG)))  # 5242880 bytes, one '='
    over_bytes = b64(PNG + b"\x00" * (5 * 1024 * 1024 + 1 - len(PNG)))  # 5242881 bytes, no '='
    over_len = b64(PNG + b"\x00" * (5 * 1024 * 1024 + 2 - len(PNG)))  # 5242882 bytes: 6990512 chars
    assert len(at_limit) == limit and at_limit.endswith("A=") and not at_limit.endswith("==")
    assert len(over_bytes) == limit and not over_bytes.endswith("=")
    cases = [
        ("6990508 chars, 5242880 bytes (exactly 5 MiB)", at_limit),
        ("6990508 chars, canonical, 5242881 bytes", over_bytes),
        ("6990512 chars, canonical, 5242882 bytes", over_len),
        ("6990509 chars: at-limit data + '='", at_limit + "="),
        ("6990509 chars: at-limit data + 'A'", at_limit + "A"),
        ("6990508 chars of '!' (length passes, base64 fails)", "!" * limit),
        ("6990509 chars of '!' (length fails first)", "!" * (limit + 1)),
        ("6990507 ASCII + one astral char = 6990509 UTF-16 units, 6990508 code points", "A" * (limit - 1) + "\U0001F600"),
        ("3495255 x U+00E9 = 3495255 UTF-16 units, 6990510 UTF-8 bytes", "\u00e9" * (limit // 2 + 1)),
        ("6990508 x 'A': canonical, 5242881 zero bytes (size before sniffing)", "A" * limit),
        ("6990507 x 'A' + '!': not base64 (base64 before decoded size)", "A" * (limit - 1) + "!"),
        ("6990506 x 'A' + '==': 5242879 zero bytes, unsupported", "A" * (limit - 2) + "=="),
        ("5 MiB JPEG declared image/png", b64(JPEG + b"\x00" * (5 * 1024 * 1024 - len(JPEG)))),
    ]
    lines = []
    for why, data in cases:
        mt = "image/png"
        lines.append(dumps({"command": "prompt", "content": [{"type": "image", "media_type": mt, "data": data}]}))
        lines.append(dumps({"command": "prompt", "text": "x", "images": [f"data:{mt};base64,{data}"]}))
    verdicts = run_oracle(ORACLE_LATEST, lines)
    for i, (why, data) in enumerate(cases):
        for j, path in enumerate(("content", "legacy images")):
            kind, value = verdicts[2 * i + j]
            shown = value if kind != "OK" else f"OK ({len(value)} chars)"
            print(f"{why} [{path}]: {kind} {shown if kind != 'OK' else ''}".rstrip())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="compare with the file instead of writing it")
    ap.add_argument("--big", action="store_true", help="run the 5 MiB-limit cases, print verdicts")
    args = ap.parse_args()
    if args.big:
        big()
        return
    text, verdicts = build()
    counts = {}
    for k, _ in verdicts:
        counts[k] = counts.get(k, 0) + 1
    if args.check:
        if OUT.read_text(encoding="utf-8") != text:
            raise SystemExit(f"{OUT} is stale: rerun scripts/make_vectors_v2.py")
        print(f"{OUT.name} up to date ({len(verdicts)} vectors)")
        return
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {len(verdicts)} vectors to {OUT}: {counts}")


if __name__ == "__main__":
    main()
