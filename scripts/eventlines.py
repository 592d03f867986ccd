"""Shared pieces of the event-direction dev scripts: a valid instance of each
of the 58 events the engine writes (upstream openseek `Event`, see
shared/reference-oracle/events/README.md), their field types, mutators
(drop a field, retype it, set it to an edge value), JobRecord /
PredictionOutcome / Content builders, a JSON writer that can carry raw number
text and duplicate keys, and a runner for `oracle-events`. Python 3 standard
library only.

Not shipped: `make_event_vectors.py` and `events_differential.py` import it
from `scripts/`. Images and base64 near misses come from `v2lines.py`.
"""

import json
import subprocess
import sys
from pathlib import Path

sys.dont_write_bytecode = True
sys.path.insert(0, str(Path(__file__).resolve().parent))
from v2lines import (  # noqa: E402,F401  (re-exported for the event scripts)
    GIF87,
    GIF89,
    IMAGES,
    JPEG,
    MEDIA_TYPES,
    ORACLE_DIR,
    PNG,
    WEBP,
    b64,
    base64_near_misses,
)

# upstream `parse` + `Event::to_json` @ fdf10827 (event.mbt as stored there,
# parse.mbt and to_json.mbt reconstructed from its API listing; the oracle's
# next/README.md). `oracle-events` is the 642262b0 pin before it.
ORACLE_EVENTS = ORACLE_DIR / "oracle-events-next"


# --- JSON values as written ---------------------------------------------------


class Obj:
    """A JSON object as written: ordered (key, value) pairs, duplicates allowed."""

    def __init__(self, pairs):
        self.pairs = list(pairs)


class Raw:
    """Text written into the line verbatim (numbers like 1e400, -0, 7.0)."""

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return f"Raw({self.text!r})"


def jstr(s, esc=False):
    """A JSON string, non-ASCII raw (as the engine writes it). With `esc`,
    every non-ASCII char is a \\u escape (astral ones as surrogate pairs) and
    `/` is written `\\/`."""
    out = json.dumps(s, ensure_ascii=esc)
    if esc:
        out = out.replace("/", "\\/")
    return out


def write(v, ws="", esc=False):
    """Write a value: dicts, `Obj` (duplicate keys), `Raw` numbers, lists,
    strings, ints, floats, bools, None. `ws` goes after every `:` and `,`."""
    if isinstance(v, Raw):
        return v.text
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, str):
        return jstr(v, esc)
    if isinstance(v, (list, tuple)):
        return "[" + ("," + ws).join(write(x, ws, esc) for x in v) + "]"
    pairs = v.pairs if isinstance(v, Obj) else list(v.items())
    return "{" + ("," + ws).join(jstr(k, esc) + ":" + ws + write(x, ws, esc) for k, x in pairs) + "}"


def dumps(v):
    return write(v)


# --- plausible field values -----------------------------------------------------

JOB = {
    "schema_version": 1,
    "cleanup_error": None,
    "generation": "g-20260701",
    "id": "job-3",
    "revision": 2,
    "command": "cargo test --workspace",
    "description": "run the test suite",
    "cwd": "/home/dev/project",
    "state": {"kind": "running"},
    "started_at_ms": 1751328000000,
    "backgrounded_at_ms": 1751328001500,
    "finished_at_ms": None,
    "last_output_at_ms": 1751328004200,
    "output_file": "job-3.log",
    "output_persistent": True,
    "output_bytes": 4096,
    "output_chars": 4000,
    "output_truncated": False,
    "invalid_utf8": False,
    "output_error": None,
    "persistence_error": None,
}
JOB_DATA = {"tests": {"passed": 41, "failed": 1, "names": ["parse_empty"]}}

# JobRecord fields by how `JobRecord::from_json` reads them (jobs.mbt).
JOB_STRING_OPTIONAL = ["cleanup_error", "description", "cwd", "output_error", "persistence_error"]
JOB_COMPONENTS = ["generation", "id"]  # output_file too, when set
JOB_UINT = ["started_at_ms", "backgrounded_at_ms", "output_bytes", "output_chars"]
JOB_UINT_OPTIONAL = ["finished_at_ms", "last_output_at_ms"]
JOB_BOOLS = ["output_persistent", "output_truncated", "invalid_utf8"]
JOB_STATES = [
    {"kind": "running"},
    {"kind": "stopping"},
    {"kind": "exited", "code": 0},
    {"kind": "exited", "code": 101},
    {"kind": "stopped", "reason": "stopped by user"},
    {"kind": "interrupted"},
]

DROP = object()  # an override that removes the key


def override(base, **kw):
    """A copy of dict `base` with keys replaced in place (order kept), new keys
    appended, and keys set to DROP removed."""
    out = {}
    for k, v in base.items():
        if k in kw:
            if kw[k] is not DROP:
                out[k] = kw[k]
        else:
            out[k] = v
    for k, v in kw.items():
        if k not in base and v is not DROP:
            out[k] = v
    return out


def job(**kw):
    """A valid JobRecord in `to_json` order, with overrides (DROP removes)."""
    return override(JOB, **kw)


def txt(t):
    return {"type": "text", "text": t}


_DEFAULT = object()


def img(kind="png", media_type=_DEFAULT, data=_DEFAULT):
    raw, mt = IMAGES[kind]
    return {
        "type": "image",
        "media_type": mt if media_type is _DEFAULT else media_type,
        "data": b64(raw) if data is _DEFAULT else data,
    }


def completed(text="let me run the tests", input_tokens=120, output_tokens=8):
    return {"kind": "completed", "text": text, "input_tokens": input_tokens, "output_tokens": output_tokens}


USAGE = {
    "prompt_tokens": 1200,
    "completion_tokens": 85,
    "total_tokens": 1285,
    "prompt_cache_hit_tokens": 1024,
    "prompt_cache_miss_tokens": 176,
}
USAGE_KEYS = list(USAGE)

# --- the 58 variants --------------------------------------------------------------
#
# Field types (how `parse` reads the field):
#   str      required string (`text`)
#   int      required Int (`int`: a number equal to its own to_int)
#   bool     required Bool
#   null     optional string written as null when absent or not a string
#   omit     optional string omitted when absent or not a string
#   dflt     string defaulted when absent or not a string (the default in DEFAULTS)
#   usage    object of five nonnegative Int counters
#   content  Content (string or parts)
#   job      JobRecord
#   jobs     array of JobRecord
#   outcome  PredictionOutcome
#   jobkind  JobEventKind
#   stopout  JobStopOutcome
#   names    array of strings
VARIANTS = [
    ("job_changed", [("kind", "jobkind", "started"), ("job", "job", JOB)]),
    ("prediction_result", [("source_sequence", "int", 42), ("outcome", "outcome", completed())]),
    ("jobs_snapshot", [("request_id", "str", "jobs-1"), ("jobs", "jobs", [JOB])]),
    ("job_stop_result", [("request_id", "str", "stop-1"), ("generation", "str", "g-20260701"), ("job_id", "str", "job-3"), ("outcome", "stopout", "stopped")]),
    ("agent_setup_failed", [("error", "str", "DEEPSEEK_API_KEY is not set")]),
    ("agent_step", [("step", "int", 3)]),
    ("stream_retry", [("attempt", "int", 2), ("max_attempts", "int", 3), ("reason", "str", "DeepSeek stream transport error: ConnectionClosed")]),
    ("agent_aborted", [("reason", "str", "interrupted")]),
    ("agent_finished", [("answer", "str", "All 42 tests pass.")]),
    ("max_steps_exhausted", []),
    ("turn_failed", [("error", "str", "provider returned 500")]),
    ("assistant_delta", [("content", "str", "Hel")]),
    ("reasoning_delta", [("content", "str", "The user wants")]),
    ("assistant_message", [("content", "str", "Hello! How can I help?")]),
    ("reasoning_message", [("content", "str", "The user wants a greeting.")]),
    ("usage", [("usage", "usage", USAGE)]),
    ("tool_result", [("tool_call_id", "str", "call_1"), ("tool_name", "str", "read"), ("is_error", "bool", False), ("content", "str", "fn main() {}\n"), ("brief", "null", "read src/main.rs")]),
    ("tool_call_decode_error", [("tool_call_id", "str", "call_2"), ("tool_name", "str", "edit"), ("error", "str", "missing field `path`")]),
    ("approval_requested", [("id", "str", "ap-1"), ("tool_name", "str", "shell"), ("detail", "str", "run outside the sandbox"), ("body", "null", "rm -rf target")]),
    ("approval_resolved", [("id", "str", "ap-1"), ("outcome", "str", "allowed_once")]),
    ("steer_applied", [("kind", "dflt", "command"), ("content", "content", "also update the docs"), ("submission_id", "omit", "sub-1")]),
    ("steer_dropped", [("content", "content", "too late"), ("submission_id", "omit", "sub-2")]),
    ("background_notice", [("content", "str", "job 3 exited with code 0")]),
    ("goal_updated", [("goal", "null", "ship the release")]),
    ("goal_blocked", [("reason", "str", "needs an API key")]),
    ("goal_unblocked", []),
    ("goal_check", [("content", "str", "Is the goal met?")]),
    ("goal_reminder", [("content", "str", "Remember the goal: ship the release")]),
    ("goal_continue", [("remaining", "int", 4)]),
    ("goal_budget_exhausted", [("turns", "int", 20)]),
    ("plan_reminder", [("content", "str", "Update the plan before continuing.")]),
    ("compaction_started", [("from_sequence", "int", 1), ("to_sequence", "int", 9)]),
    ("compaction_finished", [("from_sequence", "int", 1), ("to_sequence", "int", 9), ("summary", "str", "We fixed the parser.")]),
    ("compaction_failed", [("error", "str", "cancelled")]),
    ("subrun_started", [("id", "str", "sub-1"), ("kind", "str", "explore"), ("label", "str", "find the config loader")]),
    ("subrun_finished", [("id", "str", "sub-1"), ("status", "str", "finished"), ("steps", "int", 7), ("prompt_tokens", "int", 5120), ("completion_tokens", "int", 430), ("unaccounted", "omit", "result file missing")]),
    ("workflow_started", [("id", "str", "wf-5"), ("journal", "str", "/s/run7-wf-5/journal.jsonl"), ("events", "str", "/s/run7-wf-5/events.jsonl"), ("first_child", "int", 5), ("child_count", "int", 32)]),
    ("workflow_finished", [("id", "str", "wf-5")]),
    ("auto_compaction_started", [("from_sequence", "int", 1), ("to_sequence", "int", 12)]),
    ("auto_compaction_finished", [("from_sequence", "int", 1), ("to_sequence", "int", 12), ("summary", "str", "Earlier turns: set up the repo.")]),
    ("auto_compaction_failed", [("error", "str", "summary request failed")]),
    ("context_yield", [("to_sequence", "int", 30), ("answer", "str", "partial answer")]),
    ("session_started", [("session", "str", "cli-1"), ("session_root", "str", ".openseek/sessions/cli-1"), ("workspace_root", "null", "/home/dev/project")]),
    ("session_error", [("error", "str", "session file is corrupt")]),
    ("workspace_created", [("dir", "str", "/tmp/openseek-ws-1")]),
    ("command_error", [("error", "str", "unknown command: /foo")]),
    ("mcp_config_ignored", [("reason", "str", "no mcp.json")]),
    ("mcp_config_unreadable", [("path", "str", "/home/dev/.openseek/mcp.json"), ("error", "str", "permission denied")]),
    ("mcp_config_invalid", [("path", "str", "/home/dev/.openseek/mcp.json"), ("error", "str", "expected an object")]),
    ("mcp_tools_registered", [("servers", "int", 2), ("tools", "int", 3), ("names", "names", ["fs__read", "fs__write", "git__log"])]),
    ("mcp_tool_duplicate", [("server", "str", "fs"), ("tool", "str", "read")]),
    ("mcp_tool_renamed", [("from", "str", "read"), ("to", "str", "fs__read")]),
    ("mcp_tools_capped", [("server", "str", "fs"), ("kept", "int", 64)]),
    ("mcp_server_skipped_over_cap", [("server", "str", "git")]),
    ("mcp_connect_failed", [("server", "str", "fs"), ("error", "dflt", "spawn failed: ENOENT")]),
    ("mcp_list_tools_failed", [("server", "str", "fs"), ("error", "str", "method not found")]),
    ("mcp_list_tools_timeout", [("server", "str", "fs")]),
    ("mcp_no_tools", [("server", "str", "fs")]),
]
assert len(VARIANTS) == 58 and len({n for n, _ in VARIANTS}) == 58
NAMES = [n for n, _ in VARIANTS]
FIELDS = dict(VARIANTS)

# The top-level defaults (README "defaults" table): (event, field, default).
# `None` means "null" for the `null` type and "omitted" for the `omit` type.
DEFAULTS = [
    ("steer_applied", "kind", "prompt"),
    ("steer_applied", "submission_id", None),
    ("steer_dropped", "submission_id", None),
    ("tool_result", "brief", None),
    ("approval_requested", "body", None),
    ("goal_updated", "goal", None),
    ("session_started", "workspace_root", None),
    ("subrun_finished", "unaccounted", None),
    ("mcp_connect_failed", "error", "unknown error"),
]
DEFAULTED_TYPES = ("null", "omit", "dflt")

UNKNOWN_EVENTS = [
    "fleet_started",
    "provider_request_timed_out",
    "from_a_newer_engine",
    "",
    "Agent_step",
    "agent_step ",
    " agent_step",
    "AGENT_STEP",
    "agent-step",
    "agentStep",
    "job_change",
    "jobs_snapshots",
    "usage\u0000",
    "prediction",
    "event",
]


def instance(name, **kw):
    """The canonical event: `event` first, then every field in `to_json`
    order, optional ones set. Overrides keep the key's place; DROP removes."""
    base = {"event": name}
    for k, _, v in FIELDS[name]:
        base[k] = v
    return override(base, **kw)


def minimal(name):
    """The event with every defaulted field left out."""
    return instance(name, **{k: DROP for k, t, _ in FIELDS[name] if t in DEFAULTED_TYPES})


def required(name):
    return [(k, t) for k, t, _ in FIELDS[name] if t not in DEFAULTED_TYPES]


def reordered(d):
    """The same pairs in reverse order (so `event` comes last)."""
    return Obj(list(d.items())[::-1])


# Values of the wrong JSON type for a field of each type, as (value, why).
WRONG = {
    "str": [(7, "a number"), (None, "null"), (True, "true"), (["x"], "an array"), ({"s": "x"}, "an object")],
    "int": [("7", "a numeric string"), (None, "null"), (True, "true"), ([7], "an array"), ({"n": 7}, "an object"), (Raw("1.5"), "a fraction")],
    "bool": [("true", "the string true"), (1, "the number 1"), (None, "null"), (0, "the number 0"), ([True], "an array")],
    "null": [(7, "a number"), (True, "true"), ([], "an empty array"), ({}, "an empty object"), (None, "null")],
    "omit": [(7, "a number"), (None, "null"), (False, "false"), (["s"], "an array"), ({}, "an empty object")],
    "dflt": [(None, "null"), (7, "a number"), (True, "true"), (["x"], "an array"), ({}, "an empty object")],
    "usage": [(None, "null"), ([1200, 85, 1285, 1024, 176], "an array of counters"), ("1285", "a string"), (7, "a number"), ({}, "an empty object")],
    "content": [(None, "null"), (7, "a number"), ({"type": "text", "text": "x"}, "a bare part object"), (True, "true"), ({}, "an empty object")],
    "job": [(None, "null"), ([JOB], "an array holding a job"), ("job-3", "a string"), (7, "a number"), ({}, "an empty object")],
    "jobs": [(None, "null"), (JOB, "a bare job object"), ("[]", "a string"), ([None], "an array holding null"), ([7], "an array holding a number")],
    "outcome": [(None, "null"), ("completed", "a bare kind string"), ({}, "an empty object"), (7, "a number"), ([{"kind": "skipped"}], "an array")],
    "jobkind": [("Started", "wrong case"), ("start", "a near miss"), (7, "a number"), (None, "null"), ({"kind": "started"}, "an object")],
    "stopout": [("Stopped", "wrong case"), ("killed", "an unknown outcome"), (7, "a number"), (None, "null"), (["stopped"], "an array")],
    "names": [("fs__read", "a string"), (None, "null"), ([7], "an array holding a number"), ([None], "an array holding null"), ({"0": "x"}, "an object")],
}

# Spellings of numbers for an `int` field, as (text, why). The verdict is the
# oracle's; these are the edges `int` (value == value.to_int()) turns on.
INT_EDGES = [
    ("0", "zero"),
    ("7", "seven"),
    ("7.0", "a whole number with a fraction"),
    ("7.000000", "trailing zeros"),
    ("1e0", "an exponent"),
    ("7E0", "a capital exponent"),
    ("0.7e1", "a fraction scaled to a whole number"),
    ("700e-2", "a negative exponent to a whole number"),
    ("-0", "minus zero"),
    ("-0.0", "minus zero as a fraction"),
    ("-1", "minus one"),
    ("2147483647", "Int max"),
    ("2147483648", "Int max + 1"),
    ("-2147483648", "Int min"),
    ("-2147483649", "Int min - 1"),
    ("4294967296", "2^32"),
    ("9007199254740993", "2^53 + 1 (kept as source text)"),
    ("1.5", "a fraction"),
    ("-0.5", "a negative fraction"),
    ("0.1", "a small fraction"),
    ("2147483646.99999999999", "rounds to a whole number near Int max"),
    ("2147483647.4", "Int max plus a fraction"),
    ("2147483647.0000001", "Int max plus a tiny fraction"),
    ("1e400", "beyond Double range"),
    ("-1e400", "beyond Double range, negative"),
    ("1e-400", "underflows to zero"),
    ("5e-324", "the smallest subnormal"),
    ("1e1000000000", "an exponent of 10^9"),
    ("1e4294967296", "an exponent of 2^32"),
    ("1e4294967297", "an exponent of 2^32 + 1"),
    ("1E+2", "an explicit plus exponent"),
    ("123456789012345678901234567890", "30 digits"),
]
INT_NOT_NUMBERS = [("\"7\"", "the string \"7\""), ("null", "null"), ("true", "true"), ("false", "false"), ("[7]", "an array"), ("{}", "an object")]

# Values for a JobRecord integer read by `job_uint` ([0, 2^53-1], whole).
UINT_EDGES = [
    ("0", "zero"),
    ("1", "one"),
    ("9007199254740991", "2^53 - 1"),
    ("9007199254740992", "2^53"),
    ("9007199254740993", "2^53 + 1"),
    ("-1", "negative"),
    ("-0", "minus zero"),
    ("1.5", "a fraction"),
    ("1e3", "an exponent"),
    ("1751328000000.0", "a whole number with a fraction"),
    ("1e400", "beyond Double range"),
    ("2147483647", "Int max"),
    ("2147483648", "Int max + 1"),
    ("\"0\"", "a string"),
    ("true", "true"),
]

# Any JSON, for `data` and ignored keys.
DATA_VALUES = [
    ("null", "null (no data)"),
    ("true", "true"),
    ("false", "false"),
    ("0", "zero"),
    ("7", "an integer"),
    ("-7", "a negative integer"),
    ("1.50", "1.50"),
    ("1.0", "1.0"),
    ("1e21", "1e21"),
    ("1e+21", "1e+21"),
    ("1E5", "1E5"),
    ("1e20", "1e20"),
    ("100000000000000000000", "1e20 in digits"),
    ("1000000000000000000000", "1e21 in digits"),
    ("1e-7", "1e-7"),
    ("0.000001", "0.000001"),
    ("1e-6", "1e-6"),
    ("0.00001", "0.00001"),
    ("123e-2", "123e-2"),
    ("0.1", "0.1"),
    ("0.30000000000000004", "0.30000000000000004"),
    ("-0", "-0"),
    ("-0.0", "-0.0"),
    ("9007199254740991", "2^53 - 1"),
    ("9007199254740992", "2^53"),
    ("9007199254740993", "2^53 + 1"),
    ("-9007199254740993", "-(2^53 + 1)"),
    ("9007199254740993.0", "2^53 + 1 with a fraction"),
    ("123456789012345678901234567890", "30 digits"),
    ("-123456789012345678901234567890", "30 digits, negative"),
    ("12345678901234567890.5", "20 digits and a fraction"),
    ("12345678901234567890123.0", "23 digits and a fraction"),
    ("1e400", "1e400"),
    ("-1e400", "-1e400"),
    ("2e308", "2e308"),
    ("1.7976931348623157e308", "the largest double"),
    ("1e-400", "1e-400"),
    ("5e-324", "the smallest subnormal"),
    ("1.5e300", "1.5e300"),
    ("1E400", "1E400"),
    ("1.5e400", "1.5e400"),
    ("-1e-400", "-1e-400"),
    ("0e0", "0e0"),
    ("1e16", "1e16"),
    ("4.35", "4.35"),
    ("12345678901234567890", "20 digits"),
    ("-9007199254740992", "-(2^53)"),
    ("123456.789", "123456.789"),
    ('""', "an empty string"),
    ('"a\\u0001\\u001f\\b\\f\\n\\r\\t\\u007f b"', "control characters and DEL"),
    ('"\\u0000"', "NUL"),
    ('"\\u00e9 \\u00E9 \u00e9"', "\\u00e9, \\u00E9 and a raw e-acute"),
    ('"\\/ /"', "an escaped and a raw slash"),
    ('"\\ud83d\\ude00 \U0001F600"', "an emoji escaped and raw"),
    ('"\\u2028\\u2029"', "U+2028 and U+2029"),
    ('"\\"\\\\"', "quote and backslash"),
    ('"</script>"', "a closing script tag"),
    ('"\\ufeff"', "a BOM inside a string"),
    ("[]", "an empty array"),
    ("{}", "an empty object"),
    ('[1,{"x":[]},null,true,false,""]', "a mixed array"),
    ('{"a":{"b":{"c":[1,[2,[3,{"d":null}]]]}}}', "nested objects and arrays"),
    ('{"a":1,"a":2,"b":3}', "a duplicate key: the last wins"),
    ('{"b":1,"a":2,"b":3}', "a duplicate key after another key"),
    ('{"a":{"a":1,"a":[1,1.50]}}', "a nested duplicate key"),
    ('{"z":1,"a":2,"m":3}', "keys kept in written order"),
    ('{"\\u0061":1,"a":2}', "an escaped duplicate key"),
    ('{"":0,"\\u0000":1}', "an empty key and a NUL key"),
    ('{"x":[' + ",".join(["1.50"] * 4) + "]}", "numbers inside an array"),
]


# --- running the oracle ---------------------------------------------------------


def check_oracle():
    if not (ORACLE_DIR / "build" / "events_next_mod.mjs").is_file():
        raise SystemExit(
            f"{ORACLE_EVENTS} is not built ({ORACLE_DIR}/build/events_next_mod.mjs is missing): "
            "run build.sh, then build-next.sh there, or point REFERENCE_ORACLE at a built copy"
        )


def run_events_oracle(lines, json_mode=True):
    """Run oracle-events over `lines` (no LF inside). With json_mode, returns
    ("OK", line) / ("NONE", None) / ("NOTJSON", message) per line, lossless,
    and checks that every OK line round-trips; else the raw output lines."""
    check_oracle()
    for l in lines:
        assert "\n" not in l, l
    data = "".join(l + "\n" for l in lines).encode("utf-8")
    args = [str(ORACLE_EVENTS)] + (["--json"] if json_mode else [])
    out = subprocess.run(args, input=data, stdout=subprocess.PIPE, check=True).stdout
    rows = out.decode("utf-8").split("\n")
    assert rows[-1] == "", "oracle output does not end with LF"
    rows = rows[:-1]
    assert len(rows) == len(lines), (len(rows), len(lines))
    if not json_mode:
        return rows
    res = []
    for line, r in zip(lines, rows):
        v = json.loads(r)
        if v[0] == "OK":
            if v[2] != "roundtrip-ok":
                raise SystemExit(f"oracle: {line!r} -> {r} (no round trip)")
            res.append(("OK", v[1]))
        elif v[0] == "NONE":
            res.append(("NONE", None))
        elif v[0] == "NOTJSON":
            res.append(("NOTJSON", v[1]))
        else:
            raise SystemExit(f"oracle said {r} for {line!r}")
    return res
