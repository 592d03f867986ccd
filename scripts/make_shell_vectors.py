#!/usr/bin/env python3
"""Writes tests/vectors/shell.jsonl: `<user_shell_command>` cases, each
answered by upstream's own code (oracle-shell), never by hand.

    python3 scripts/make_shell_vectors.py ORACLE_SHELL [OUT]
    ORACLE_SHELL=.../oracle-shell python3 scripts/make_shell_vectors.py

One object a line: {"request": R, "answer": A, "why": W}, R exactly an
oracle-shell request, A exactly its answer (shell/README.md). The first
cases are upstream's own tests (shell/test_requests.jsonl, in that file's
order); the rest are edge cases of the text protocol.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def env(command, body, tail="\n</result>\n</user_shell_command>"):
    """An envelope with `body` between <result> and </result>."""
    return f"<user_shell_command>\n<command>\n{command}\n</command>\n<result>\n{body}{tail}"


def enc(command, exit_code, text, limit):
    return {"encode": command, "exit_code": exit_code, "text": text, "output_limit_reached": limit}


def err(command, message):
    return {"encode": command, "error": message}


def par(content):
    return {"parse": content}


OK = env("ls", "exit=0\na")  # a well-formed envelope to vary

CASES = [
    # --- encode: the result header
    (enc("true", 0, "", False), "exit 0, empty text: one empty output line"),
    (enc("false", 1, "", False), "a non-zero code"),
    (enc("kill", -9, "x", False), "a negative code"),
    (enc("big", 2147483647, "x", False), "the largest i32"),
    (enc("small", -2147483648, "x", False), "the smallest i32"),
    (enc("t", 255, "x", True), "truncated with a code: exit=255 then the preamble"),
    (enc("t", None, "", True), "truncated, no code, empty text: shown_chars=0"),
    (enc("t", -1, "ab", True), "truncated with a negative code"),
    (enc("t", 0, "é", True), "shown_chars counts scalar values: é is 1, not 2 bytes"),
    (enc("t", 0, "😀😀", True), "an astral char is 1, not 2 UTF-16 units"),
    (enc("t", 0, "e\u0301", True), "a combining mark is its own scalar value: 2"),
    (enc("t", 0, "a\nb\r\nc", True), "LFs and CRs count as chars: 6"),
    (enc("t", 0, "x" * 1000, True), "shown_chars with four digits"),
    (enc("t", None, "abc", False), "not truncated, no code: exit=cancelled (35042ea4; it was exit=0)"),
    # --- encode: nothing is escaped
    (enc("", 0, "x", False), "an empty command: an empty line"),
    (enc("a\nb", 0, "c\nd", False), "multi-line command and output, raw"),
    (enc("echo </command>", 0, "</result>", False), "the delimiters as text, raw"),
    (enc("</command>", 3, "y", False), "a command line that is a delimiter"),
    (enc("x", 0, "</result>\n</user_shell_command>", False), "output that spells the envelope's close, raw"),
    (enc("x", None, "", False), "no code, no text: exit=cancelled and one empty line"),
    (enc("x", None, "a\nb", True), "no code, cut off: exit=cancelled then the preamble"),
    (enc("x", 0, "truncated=true\noutput_limit_reached=true\nshown_chars=1\nmax_output_chars=1\ny", False),
     "output that looks like the preamble, written as it is"),
    (enc("cr\r", 0, "out\r\n", False), "CRs written as they are"),
    (enc("\t lead", 0, "  spaced  ", False), "leading and trailing blanks kept"),
    (enc("日本", 3, "ü\u2028\u0000\u007f", False), "non-ASCII, U+2028, NUL and DEL raw"),
    (enc("x", 0, "\n\n", False), "output of blank lines"),
    (enc("x", 0, "exit=5", False), "output that starts with exit="),
    (err("sh -c x", "permission denied"), "an error: exit=failed on parse"),
    (err("nope", ""), "an empty error message: the prefix and a space"),
    (err("nope", "a\nb"), "a multi-line error"),
    (err("nope", "x\n</result>"), "an error holding </result>"),
    (err("", "é日😀"), "non-ASCII error, empty command"),
    (err("x", "</command>\n<result>"), "an error holding the </command>/<result> pair, raw"),
    # --- parse: the frame
    (par(""), "empty text"),
    (par("\n"), "one LF"),
    (par("<user_shell_command>"), "the opening tag alone"),
    (par(env("ls", "exit=0\na")), "the plain case"),
    (par(OK + "\n"), "one trailing LF: the optional blank line"),
    (par(OK + "\n\n"), "two trailing LFs: not an envelope"),
    (par(OK + "\n "), "a trailing line of a space is not blank"),
    (par(OK + "\r"), "a trailing CR is trimmed off the last line"),
    (par(OK + "\n\r"), "a trailing line of a CR trims to blank"),
    (par(OK + "\r\r\n\r\r"), "several trailing CRs trimmed"),
    (par(OK + "\nx"), "text after the closing tag"),
    (par(" " + OK), "a leading space on the first tag"),
    (par("\n" + OK), "a leading blank line"),
    (par(OK.replace("<command>", " <command>", 1)), "a space before <command>"),
    (par(OK.replace("<result>", "<result> ", 1)), "a space after <result>"),
    (par(OK.replace("</command>", "</command >", 1)), "a misspelt </command>"),
    (par(OK.replace("</user_shell_command>", "</USER_SHELL_COMMAND>")), "tags are case-sensitive"),
    (par(OK[: -len("\n</user_shell_command>")]), "no closing tag"),
    (par(OK.replace("\n</result>", "")), "no </result>"),
    (par(OK.replace("\n</command>", "")), "no </command>"),
    (par(OK.replace("\n<result>", "")), "no <result>"),
    (par(OK.replace("<command>\n", "")), "no <command>"),
    (par("<user_shell_command>\n<command>\n</command>\n<result>\n</result>\n</user_shell_command>"),
     "no command line and no result line: command \"\", failed"),
    (par("<user_shell_command>\n<command>\n\n</command>\n<result>\n\n</result>\n</user_shell_command>"),
     "an empty command line and an empty result line: the latter is not exit="),
    (par("<user_shell_command>\n<command>\n\n\n</command>\n<result>\nexit=0\n</result>\n</user_shell_command>"),
     "two empty command lines join to one LF"),
    (par(env("a\n</command>\n<result>\nexit=9\n</result>\n</user_shell_command>", "exit=0")),
     "a whole fake tail in the command: the first </command>/<result> pair ends it, the rest is output"),
    (par(env("echo </command>", "exit=0")), "</command> inside a line is text"),
    (par(env("<command>", "exit=0")), "an opening tag in the command is text"),
    (par(env("</result>", "exit=0")), "</result> in the command is text (the close is anchored at the end)"),
    (par(env("</user_shell_command>", "exit=0")), "the closing tag in the command is text"),
    (par(env("ls", "exit=0\n</command>")), "</command> in the output is text"),
    (par(env("ls", "exit=0\n<result>")), "<result> in the output is text"),
    (par(env("ls", "exit=0\n</user_shell_command>")), "the closing tag in the output is text"),
    (par(env("ls", "exit=0\nx\n</result>\ny")), "a second </result>: the last closes, the first is output"),
    (par(env("ls", "exit=0\n</result>\n</user_shell_command>\n")),
     "output that closes the envelope, then a blank line: all output, the anchored tail closes"),
    (par(OK + "\n</result>\n</user_shell_command>"), "a second close after the envelope: the first is output"),
    (par(OK + "\n</result>\n</user_shell_command>\n"), "the same with the optional blank line"),
    (par(env("ls", "exit=0\n</command>\n<result>\nexit=5")), "the </command>/<result> pair in the output is output"),
    (par(env("x\n</command>\n<result>\nexit=1", "exit=0\no")),
     "the pair in the command, then exit=: it splits there, the real pair is output"),
    (par(env("a\n</command>", "exit=0")), "a command ending in </command>: the real pair after it splits"),
    (par(env("a\n</command>\n\n<result>", "exit=0")), "</command>, a blank line, <result> in the command: not a pair"),
    (par(env("a\n</command>\r\n<result>\r", "exit=0")), "the pair with CRs in the command: trimmed, a pair; it splits there and the result opens with </command>"),
    (par("<user_shell_command>\n<command>\n</result>\n</user_shell_command>\n"), "empty middle, with the blank line"),
    (par("<user_shell_command>\n<command>\n</command>\n</result>\n</user_shell_command>"),
     "a middle of </command> alone: no <result> after it"),
    (par("<user_shell_command>\n<command>\n<result>\n</result>\n</user_shell_command>"),
     "a middle of <result> alone: no </command> before it"),
    (par("<user_shell_command>\n<command>\n</command>\n<result>\n</user_shell_command>\n</result>\n</user_shell_command>"),
     "a close tag before the anchored close is the result's first line: not exit="),
    (par("<user_shell_command>\n<command>\n</command>\n<result>\nexit=0\n</result>\n</user_shell_command>\r\n\r"),
     "a CRLF then a CR after the close: trimmed to one blank line"),
    (par(OK + "\n\n</result>\n</user_shell_command>"), "junk between two closes is output"),
    (par(OK.replace("</result>\n</user_shell_command>", "</user_shell_command>\n</result>") + "\n"),
     "close tags swapped, then the blank line"),
    (par(env("ls", "exit=0\n x </result>")), "</result> inside a line is text"),
    # --- parse: CRs
    (par(OK.replace("\n", "\r\n")), "CRLF everywhere"),
    (par(OK.replace("\n", "\r\r\n")), "two CRs before every LF"),
    (par(OK.replace("\n", "\r")), "lone CRs do not split lines"),
    (par(env("a\rb", "exit=0\nc\rd")), "a CR inside a line is kept"),
    (par(env("a\r", "exit=0\r\nb\r")), "trailing CRs of command and output lines dropped"),
    (par(env("\r", "exit=0\n\r")), "lines of only a CR become empty"),
    (par(env("a\r\nb\r", "exit=0")), "a CRLF command joins with LF"),
    (par(env("ls", "exit=0\r\r\r")), "exit= with trailing CRs: exit 0"),
    (par(env("ls", "exit=\r1")), "a CR in the exit token is kept"),
    (par(OK.replace("</command>", "</command>\r\r")), "a closing tag with trailing CRs still closes"),
    (par(OK.replace("<user_shell_command>", "<user_shell_command>\r", 1)), "the first tag with a CR"),
    (par(OK.replace("<command>", "\r<command>", 1)), "a leading CR is not trimmed"),
    # --- parse: the result's first line
    (par(env("ls", "exit=0")), "exit and no output"),
    (par(env("ls", "exit=")), "exit= with no token: exit \"\""),
    (par(env("ls", "exit=-1")), "a negative exit"),
    (par(env("ls", "exit=99999999999999999999")), "an exit past i64: kept as text"),
    (par(env("ls", "exit=cancelled")), "exit=cancelled without the preamble"),
    (par(env("ls", "exit=failed")), "exit=failed spelt out"),
    (par(env("ls", "exit= 0 ")), "spaces in the token kept"),
    (par(env("ls", "exit=0=1")), "an = in the token kept"),
    (par(env("ls", "exit=日本")), "a non-ASCII token"),
    (par(env("ls", "exit=0\nexit=1")), "a second exit= is output"),
    (par(env("ls", "EXIT=0")), "exit= is case-sensitive"),
    (par(env("ls", " exit=0")), "a space before exit=: not an envelope"),
    (par(env("ls", "exit 0")), "exit without =: not an envelope"),
    (par(env("ls", "exit")), "exit alone: not an envelope"),
    (par(env("ls", "")), "one empty result line: not exit="),
    (par(env("ls", "\nexit=0")), "an empty line before exit="),
    (par(env("ls", "error running shell: boom")), "the error line"),
    (par(env("ls", "error running shell:")), "the error prefix alone"),
    (par(env("ls", "error running shell:x\nexit=0")), "the error without a space; every line is output"),
    (par(env("ls", "error running shell: a\ntruncated=true\noutput_limit_reached=true\nshown_chars=1\nmax_output_chars=1")),
     "an error followed by a preamble: no preamble is stripped"),
    (par(env("ls", "error running shell")), "the error prefix without the colon"),
    (par(env("ls", "Error running shell: x")), "the error prefix is case-sensitive"),
    (par(env("ls", "error running shell: x\r")), "the error line's CR trimmed"),
    # --- parse: the truncation preamble
    (par(env("ls", "exit=0\ntruncated=true\noutput_limit_reached=true\nshown_chars=3\nmax_output_chars=3\nabc")),
     "the preamble after exit=0"),
    (par(env("ls", "exit=0\ntruncated=true\noutput_limit_reached=true\nshown_chars=3\nmax_output_chars=3")),
     "the preamble and no output"),
    (par(env("ls", "exit=0\ntruncated=\noutput_limit_reached=\nshown_chars=\nmax_output_chars=")),
     "the keys with empty values: still the preamble"),
    (par(env("ls", "exit=0\ntruncated=false\noutput_limit_reached=false\nshown_chars=-1\nmax_output_chars=9\nx")),
     "only the keys count, not the values"),
    (par(env("ls", "exit=0\ntruncated=true\noutput_limit_reached=true\nshown_chars=3")),
     "three of four lines: output, not a preamble"),
    (par(env("ls", "exit=0\ntruncated=true\noutput_limit_reached=true\nmax_output_chars=3\nshown_chars=3")),
     "the last two keys swapped"),
    (par(env("ls", "exit=0\noutput_limit_reached=true\ntruncated=true\nshown_chars=3\nmax_output_chars=3")),
     "the first two keys swapped"),
    (par(env("ls", "exit=0\ntruncated=true\n\noutput_limit_reached=true\nshown_chars=3\nmax_output_chars=3")),
     "a blank line inside the preamble"),
    (par(env("ls", "exit=0\n truncated=true\noutput_limit_reached=true\nshown_chars=3\nmax_output_chars=3")),
     "a leading space on a key"),
    (par(env("ls", "exit=0\ntruncated=true\r\noutput_limit_reached=true\r\nshown_chars=3\r\nmax_output_chars=3\r\nx\r")),
     "the preamble in CRLF"),
    (par(env("ls", "exit=0\ntruncated\noutput_limit_reached=true\nshown_chars=3\nmax_output_chars=3")),
     "a key without =: not the preamble"),
    (par(env("ls", "exit=0\ntruncated=true\noutput_limit_reached=true\nshown_chars=3\nmax_output_chars=3\n"
                   "truncated=true\noutput_limit_reached=true\nshown_chars=3\nmax_output_chars=3\nz")),
     "two preambles: only the first is stripped"),
    (par(env("ls", "exit=0\nx\ntruncated=true\noutput_limit_reached=true\nshown_chars=3\nmax_output_chars=3")),
     "a preamble after the first output line is output"),
    (par(env("ls", "exit=0\ntruncated=true")), "a lone truncated=true is output"),
    (par(env("ls", "truncated=true\noutput_limit_reached=true\nshown_chars=3\nmax_output_chars=3")),
     "the preamble without exit=: not an envelope"),
    (par(env("ls", "exit=cancelled\ntruncated=true\noutput_limit_reached=true\nshown_chars=0\nmax_output_chars=0\n")),
     "a cancelled run with one empty output line"),
    (par(env("ls", "exit=0\ntruncated=trueXoutput_limit_reached=true\nshown_chars=3\nmax_output_chars=3\nq\nr")),
     "two keys on one line: three lines short"),
    # --- parse: odd content
    (par(env("日本語 😀", "exit=0\nü\u2028\u0000")), "non-ASCII, U+2028, NUL"),
    (par(env("\t", "exit=0\n\t")), "tabs are not trimmed"),
    (par(env(" ", "exit=0\n ")), "spaces are not trimmed"),
    (par(env("ls", "exit=0\n\n\n")), "output of three empty lines"),
    (par(env("ls", "exit=0\n" + "\n".join(str(i) for i in range(30)))), "thirty output lines"),
    (par("<user_shell_command>\n<command>\nls\n</command>\n<result>\nexit=0\n</result>"), "the last tag missing"),
    (par("<user_shell_command>\n<command>\nls\n</command>\n<result>\nexit=0\n</result>\n</user_shell_command>\n</user_shell_command>"),
     "the closing tag twice"),
    (par("<user_shell_command>\n<command>\nls\n</command>\n\n<result>\nexit=0\n</result>\n</user_shell_command>"),
     "a blank line between </command> and <result>"),
    (par("<user_shell_command>\n\n<command>\nls\n</command>\n<result>\nexit=0\n</result>\n</user_shell_command>"),
     "a blank line after the first tag"),
    (par("<user_shell_command>\n<command>\nls\n</command>\n<result>\nexit=0\n</result>\n\n</user_shell_command>"),
     "a blank line before the closing tag"),
    (par("<user_shell_command><command>\nls\n</command>\n<result>\nexit=0\n</result>\n</user_shell_command>"),
     "two tags on one line"),
    (par("<user_shell_command>\n<command>\nls\n</command>\n<result>\nexit=0\n</result></user_shell_command>"),
     "the last two tags on one line"),
    (par("<user_shell_command>\n<command>\nls\n</command>\n<result>\nexit=0\n</result>\n</user_shell_command>\n\r\n"),
     "a blank line, then a CRLF: two lines too many"),
    (par("please run <user_shell_command> for me"), "a prompt mentioning the tag"),
]

# Round trips: what encode writes, parsed back (the answer shows where the
# envelope gives back its input and where it cannot).
ROUND_TRIPS = [
    (enc("printf 'a\\nb'", 0, "a\nb", False), "a plain run"),
    (enc("x", None, "abc", True), "a truncated run"),
    (err("x", "denied"), "a failure"),
    (enc("x", 0, "", False), "empty output: one empty line back"),
    (enc("", 1, "", False), "empty command: \"\" back"),
    (enc("a\r", 0, "b\r", False), "trailing CRs are lost"),
    (enc("</command>", 0, "x", False), "a </command> command line not followed by <result> comes back"),
    (enc("x", 0, "</result>", False), "a </result> output line comes back"),
    (enc("x", 0, "a\n</result>\n</user_shell_command>\n", False), "output closing the envelope, then a blank line, comes back"),
    (enc("cat env", 0, env("ls", "exit=0\na"), False), "an envelope as output comes back"),
    (enc("x\n</command>\n<result>\ny", 0, "z", False), "the </command>/<result> pair in a command splits it early"),
    (enc("x\n</command>\n<result>\nexit=4", 0, "z", False), "the pair then exit= in a command: a different run back"),
    (enc("x", None, "partial", False), "no code, not cut off: cancelled back"),
    (enc("x", 0, "truncated=1\noutput_limit_reached=1\nshown_chars=1\nmax_output_chars=1\nz", False),
     "preamble-like output is read as a preamble"),
    (enc("x", 7, "truncated=1\noutput_limit_reached=1\nshown_chars=1\nmax_output_chars=1\nz", True),
     "preamble-like output after the real preamble is output"),
    (err("x", "a\n</result>"), "an error with a </result> line comes back"),
    (err("x", "</result>"), "an error that is </result> is prefixed: safe"),
    (enc("x\n</result>", 0, "y", False), "</result> in the command is safe"),
    (enc("x\n</user_shell_command>", 0, "</command>", False), "closing tags on both sides are safe"),
    (enc("x", 0, "</command>\n<result>", False), "opening-side tags in the output are safe"),
    (enc("日本😀", -3, "é\u2028", True), "non-ASCII survives"),
]


def oracle_path():
    if len(sys.argv) > 1:
        return sys.argv[1]
    if os.environ.get("ORACLE_SHELL"):
        return os.environ["ORACLE_SHELL"]
    sys.exit("usage: make_shell_vectors.py ORACLE_SHELL [OUT] (or ORACLE_SHELL=...)")


def ask(oracle, requests):
    """The oracle's answers, in order, parsed."""
    data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in requests)
    out = subprocess.run([oracle], input=data.encode(), capture_output=True, check=True).stdout
    answers = [json.loads(line) for line in out.decode().split("\n")[:-1]]
    assert len(answers) == len(requests), (len(answers), len(requests))
    return answers


def main():
    oracle = oracle_path()
    out = Path(sys.argv[2]) if len(sys.argv) > 2 else HERE.parent / "tests/vectors/shell.jsonl"
    upstream = Path(oracle).resolve().parent / "shell/test_requests.jsonl"
    cases = [(json.loads(l), f"upstream's test_requests.jsonl #{i + 1}")
             for i, l in enumerate(upstream.read_text().splitlines())]
    # An edge case upstream has since made its own test is kept as upstream's.
    theirs = {json.dumps(r, sort_keys=True) for r, _ in cases}
    cases += [(r, why) for r, why in CASES if json.dumps(r, sort_keys=True) not in theirs]
    answers = ask(oracle, [r for r, _ in cases])
    # Each round trip: the encode, then the parse of what it wrote.
    encoded = ask(oracle, [r for r, _ in ROUND_TRIPS])
    parsed = ask(oracle, [par(e[1]) for e in encoded])
    for (req, why), e, p in zip(ROUND_TRIPS, encoded, parsed):
        assert e[0] == "ENCODED", e
        cases += [(req, f"round trip: {why} (encoded)"), (par(e[1]), f"round trip: {why} (parsed back)")]
        answers += [e, p]
    assert len(answers) == len(cases)
    seen = set()
    lines = []
    for (req, why), ans in zip(cases, answers):
        key = json.dumps(req, sort_keys=True)
        assert key not in seen, f"duplicate request: {req}"
        seen.add(key)
        assert ans[0] != "BADREQ", (req, ans)
        lines.append(json.dumps({"request": req, "answer": ans, "why": why}, ensure_ascii=False))
    out.write_text("\n".join(lines) + "\n")
    print(f"{out}: {len(lines)} vectors")


if __name__ == "__main__":
    main()
