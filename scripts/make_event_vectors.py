#!/usr/bin/env python3
"""Regenerate tests/vectors/events.jsonl from the event-direction reference oracle.

    python3 scripts/make_event_vectors.py            # rewrite the vectors file
    python3 scripts/make_event_vectors.py --check    # exit 1 if the file differs

Every candidate below is a `(line, why)` pair; the expected outcome is never
typed by hand: the script runs `oracle-events-next --json` (upstream
openseek's event `parse` + `Event::to_json` @ fdf10827, parse.mbt and
to_json.mbt reconstructed from its API listing, stringified by today's core;
see shared/reference-oracle/next/README.md) over all candidates and writes, per
line, `ok` (the line the engine writes for the event `parse` returned),
`none: true` (JSON, but not an event a client reads) or `not_json: true`,
with `why`. Every OK line is checked to read back to the same event (the
oracle's round trip). The oracle is found at $REFERENCE_ORACLE (default
../shared/reference-oracle) and must be built (build.sh, then build-next.sh).
Upstream's own test expectations (next/upstream_tests_events.py) are
candidates too, and the script stops if the oracle answers one otherwise.

Invalid UTF-8 is not covered: the oracle's driver turns it into U+FFFD before
upstream's code sees the line, so it cannot judge it.
Dev tool only: the crate, its tests and CI never run the oracle. Python 3
standard library only.
"""

import argparse
import json
import sys
from pathlib import Path

sys.dont_write_bytecode = True  # no scripts/__pycache__ entries
sys.path.insert(0, str(Path(__file__).resolve().parent))
from eventlines import (  # noqa: E402
    DATA_VALUES,
    DEFAULTS,
    DROP,
    FIELDS,
    IMAGES,
    INT_EDGES,
    INT_NOT_NUMBERS,
    JOB,
    JOB_BOOLS,
    JOB_COMPONENTS,
    JOB_DATA,
    JOB_STATES,
    JOB_STRING_OPTIONAL,
    JOB_UINT,
    JOB_UINT_OPTIONAL,
    JPEG,
    MEDIA_TYPES,
    NAMES,
    ORACLE_DIR,
    PNG,
    UINT_EDGES,
    UNKNOWN_EVENTS,
    USAGE,
    USAGE_KEYS,
    VARIANTS,
    WEBP,
    WRONG,
    Obj,
    Raw,
    b64,
    base64_near_misses,
    completed,
    dumps,
    img,
    instance,
    job,
    minimal,
    reordered,
    required,
    run_events_oracle,
    txt,
    write,
)
from v2lines import upstream_cases, upstream_holds  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "vectors" / "events.jsonl"
# upstream's own event tests at the pin: (source, line, kind, expected)
UPSTREAM = upstream_cases("upstream_tests_events.py")
MAX_LINE = 4096


def candidates():
    c = []
    seen = set()

    def add(line, why):
        """Add a candidate; a line already added keeps its first `why`."""
        if not isinstance(line, str):
            line = dumps(line)
        if line not in seen:
            seen.add(line)
            c.append((line, why))

    def job_event(j, kind="updated"):
        return {"event": "job_changed", "kind": kind, "job": j}

    def job_raw(field, text, base=None):
        """A job_changed line whose job has `field` written as raw text."""
        j = dict(base or JOB)
        j[field] = Raw(text)
        return job_event(j)

    # --- every variant: canonical, then reordered with extra keys and spaces --
    for name, fields in VARIANTS:
        add(instance(name), f"{name}: canonical")
    for name, fields in VARIANTS:
        ev = instance(name)
        noisy = Obj(
            [("ts", "2026-07-01T10:00:00Z"), ("level", "INFO")]
            + reordered(ev).pairs
            + [("extra", {"nested": [1, {"x": None}], "event": "agent_step"})]
        )
        add(write(noisy, ws=" "), f"{name}: keys reversed, extra keys, spaces")
    for name, fields in VARIANTS:
        ev = instance(name)
        add(" \t" + write(ev, ws="\t ").replace("{", "{ ", 1) + " \r", f"{name}: tabs, spaces and a trailing CR around the tokens")
    for name, fields in VARIANTS:
        if any(t in ("null", "omit", "dflt") for _, t, _ in fields):
            add(minimal(name), f"{name}: every defaulted field absent")
    add('{"event":"max_steps_exhausted","step":"x","content":null}', "max_steps_exhausted ignores other keys")
    add('{"event":"goal_unblocked","reason":7}', "goal_unblocked ignores other keys")
    add('{"event":"max_steps_exhausted","event":"max_steps_exhausted"}', "a repeated identical event key")

    # --- every required field: missing, and mistyped --------------------------
    for i, (name, fields) in enumerate(VARIANTS):
        for j, (k, t) in enumerate(required(name)):
            add(instance(name, **{k: DROP}), f"{name}: required {k} missing")
            v, why = WRONG[t][(i + j) % len(WRONG[t])]
            add(instance(name, **{k: v}), f"{name}: {k} is {why}")
    # Every wrong type for a representative set.
    for name in ["agent_step", "stream_retry", "tool_result", "approval_requested", "subrun_finished",
                 "workflow_started", "mcp_tools_registered", "job_stop_result", "prediction_result", "usage",
                 "job_changed", "jobs_snapshot", "steer_applied", "mcp_tools_capped", "context_yield"]:
        for i, (k, t) in enumerate(required(name)):
            for j, (v, why) in enumerate(WRONG[t]):
                if (v, why) == WRONG[t][(NAMES.index(name) + i) % len(WRONG[t])]:
                    continue  # already above
                add(instance(name, **{k: v}), f"{name}: {k} is {why}")
    add(instance("tool_result", content=["fn main() {}"]), "tool_result content is a plain string, not Content")
    add(instance("tool_result", content=[txt("x")]), "tool_result content as parts is not a string")
    add(instance("assistant_delta", content=[txt("Hel")]), "assistant_delta content as parts is not a string")
    add(instance("background_notice", content=[]), "background_notice content as an empty array")
    add(instance("mcp_tools_registered", names=[]), "mcp_tools_registered with no names")
    add(instance("mcp_tools_registered", names=["", "é", "a\u0000b"]), "mcp_tools_registered odd names")
    add(instance("mcp_tools_registered", names=["fs__read", 7]), "mcp_tools_registered: a later name is a number")
    add(instance("mcp_tools_registered", names=[["fs__read"]]), "mcp_tools_registered: a nested array")
    add(instance("tool_result", is_error=True, brief=None), "tool_result error with a null brief")
    add(instance("agent_finished", answer=""), "an empty answer is a string")
    add(instance("approval_resolved", outcome="a word from a newer engine"), "approval_resolved outcome is any string")
    add(instance("approval_resolved", outcome=""), "approval_resolved empty outcome")
    add(instance("subrun_started", kind=""), "subrun_started empty kind")
    add(instance("job_stop_result", generation="", job_id="a/b/.."), "job_stop_result generation and job_id are not validated")

    # --- the defaults table ----------------------------------------------------
    for name, k, default in DEFAULTS:
        add(instance(name, **{k: DROP}), f"{name}: {k} absent -> default")
        for v, why in [(None, "null"), (7, "a number"), (True, "true"), ([], "an empty array"), ({}, "an empty object"), (["s"], "an array of a string")]:
            add(instance(name, **{k: v}), f"{name}: {k} is {why} -> default")
        add(instance(name, **{k: ""}), f"{name}: {k} is an empty string, kept")
        add(instance(name, **{k: "x é 😀"}), f"{name}: {k} is any string")
    add(instance("steer_applied", kind="prompt"), "steer_applied kind prompt")
    add(instance("steer_applied", kind="notice"), "steer_applied kind notice")
    add(instance("steer_applied", kind="Prompt"), "steer_applied kind is any string")
    add(instance("mcp_connect_failed", error="unknown error"), "mcp_connect_failed error spelled as the default")
    add('{"event":"mcp_connect_failed","server":"fs","error":"boom","error":null}', "mcp_connect_failed: a last null error -> default")
    add('{"event":"tool_result","tool_call_id":"c","tool_name":"read","is_error":false,"content":"x","brief":"b","brief":7}', "tool_result: a last numeric brief -> null")

    # --- integers ---------------------------------------------------------------
    def int_line(name, k, text):
        return dumps(instance(name, **{k: Raw(text)}))

    for text, why in INT_EDGES + INT_NOT_NUMBERS:
        add(int_line("agent_step", "step", text), f"agent_step step {text}: {why}")
    for name, k in [("goal_continue", "remaining"), ("mcp_tools_capped", "kept"), ("stream_retry", "max_attempts"),
                    ("subrun_finished", "completion_tokens"), ("workflow_started", "child_count"),
                    ("compaction_started", "to_sequence"), ("auto_compaction_finished", "from_sequence"),
                    ("context_yield", "to_sequence"), ("goal_budget_exhausted", "turns"), ("mcp_tools_registered", "servers")]:
        for text in ["-1", "7.0", "-0", "2147483647", "2147483648", "-2147483648", "-2147483649", "1.5", "2147483646.99999999999", '"7"', "1e400"]:
            add(int_line(name, k, text), f"{name} {k} {text}")
    add('{"event":"agent_step","step":1,"step":2}', "duplicate step: the last wins")
    add('{"event":"agent_step","step":1,"step":1.5}', "duplicate step: a last fraction loses")
    add('{"event":"agent_step","step":"1","step":1}', "duplicate step: a last number wins")

    # --- usage ------------------------------------------------------------------
    def usage(**kw):
        u = dict(USAGE)
        for k, v in kw.items():
            if v is DROP:
                del u[k]
            else:
                u[k] = v
        return {"event": "usage", "usage": u}

    zero = {k: 0 for k in USAGE_KEYS}
    add(usage(**zero), "usage: all counters zero")
    add(usage(**{k: 2147483647 for k in USAGE_KEYS}), "usage: all counters at Int max")
    for k in USAGE_KEYS:
        add(usage(**{k: -1}), f"usage: {k} negative")
        add(usage(**{k: DROP}), f"usage: {k} missing")
        add(usage(**{k: Raw("-0")}), f"usage: {k} -0")
        add(usage(**{k: Raw("1.5")}), f"usage: {k} a fraction")
        add(usage(**{k: Raw("2147483648")}), f"usage: {k} Int max + 1")
        add(usage(**{k: Raw("7.0")}), f"usage: {k} 7.0")
    add(usage(prompt_tokens=Raw("-2147483648")), "usage: prompt_tokens Int min")
    add(usage(total_tokens=Raw("-0.0")), "usage: total_tokens -0.0")
    add(usage(completion_tokens="85"), "usage: a string counter")
    add(usage(completion_tokens=None), "usage: a null counter")
    add(usage(reasoning_tokens=12), "usage: an extra counter is ignored")
    add({"event": "usage", "usage": dict(reversed(list(USAGE.items())))}, "usage: counters in reverse order are written in field order")
    add({"event": "usage", **USAGE}, "usage: counters at the top level, no usage object")
    add({"event": "usage", "usage": USAGE, "prompt_tokens": -1}, "usage: a top-level counter is ignored")

    # --- prediction_result --------------------------------------------------------
    # At fdf10827 the engine predicts by itself and writes no `request_id`;
    # a line that still carries one (642262b0's engine, a recording) reads
    # the same, whatever its type, and is written back without it.
    def pred(outcome, seq=42, rid=DROP):
        ev = {"event": "prediction_result", "request_id": rid, "source_sequence": seq, "outcome": outcome}
        return {k: v for k, v in ev.items() if v is not DROP}

    for s in ["0", "-1", "-2147483648", "2147483647", "1.5", "2147483648", "-0", "7.0", '"42"', "null"]:
        add(pred(completed(), seq=Raw(s)), f"prediction_result source_sequence {s}")
    for rid, why in [("pred-7", "a string"), ("", "an empty string"), ("x" * 300, "a 300-char string"),
                     (None, "null"), (7, "a number"), (Raw("1e400"), "1e400"), (True, "true"), (False, "false"),
                     (["x"], "an array"), ([], "an empty array"), ({"s": "x"}, "an object"), ({}, "an empty object"),
                     ("a\nb\u0000", "a string with control characters")]:
        add(pred(completed(), rid=rid), f"prediction_result: an old engine's request_id, {why}, is dropped")
    for outcome, why in [({"kind": "skipped"}, "skipped"), ({"kind": "cancelled"}, "cancelled"),
                         ({"kind": "failed", "message": "prediction storage: disk full"}, "failed")]:
        add(pred(outcome, seq=7, rid="p1"), f"prediction_result: an old engine's {why} answer, request_id dropped")
    add(Obj([("request_id", "p1"), ("outcome", completed()), ("source_sequence", 42), ("event", "prediction_result")]),
        "prediction_result: request_id first, keys reversed")
    add('{"event":"prediction_result","request_id":"p1","request_id":7,"source_sequence":42,"outcome":{"kind":"skipped"}}',
        "prediction_result: a duplicate request_id of two types")
    add('{"event":"prediction_result","source_sequence":42,"outcome":{"kind":"skipped"},"request_id":{"deep":[[[1]]]}}',
        "prediction_result: a nested request_id last")
    add(pred(completed(text=None)), "completed: null text")
    add(pred(completed(text="")), "completed: empty text")
    add(pred(completed(text=" ")), "completed: a blank text")
    add(pred(completed(text=7)), "completed: numeric text")
    add(pred(completed(text=["x"])), "completed: array text")
    add(pred({"kind": "completed", "input_tokens": 1, "output_tokens": 1}), "completed: text missing")
    add(pred({"kind": "completed", "text": "x", "output_tokens": 1}), "completed: input_tokens missing")
    add(pred({"kind": "completed", "text": "x", "input_tokens": 1}), "completed: output_tokens missing")
    add(pred({"output_tokens": 8, "input_tokens": 120, "text": "x", "kind": "completed"}), "completed: keys reversed")
    add(pred(dict(completed(), cost=0.1, kind2="x")), "completed: extra keys")
    for v, why in [("0", "zero"), ("1.5", "a fraction (truncated)"), ("-0.5", "a small negative fraction (truncates to 0)"),
                   ("-1.5", "a negative fraction"), ("-1", "negative"), ("2147483647", "Int max"), ("2147483648", "2^31"),
                   ("2147483647.5", "Int max + 0.5"), ("-2147483648", "Int min"), ("-2147483649", "Int min - 1"),
                   ('"5"', "a string"), ("null", "null"), ("true", "true"), ("1e400", "1e400"), ("-0", "-0"),
                   ("1e-400", "an underflow"), ("5e-324", "the smallest subnormal"), ("0.999999", "just under one"),
                   ("7.0", "7.0"), ("1e2", "1e2"), ("9007199254740993", "2^53 + 1"), ("[1]", "an array")]:
        add(pred(completed(input_tokens=Raw(v))), f"completed: input_tokens {why}")
        add(pred(completed(output_tokens=Raw(v))), f"completed: output_tokens {why}")
    add(pred({"kind": "skipped"}), "skipped")
    add(pred({"kind": "cancelled"}), "cancelled")
    add(pred({"kind": "skipped", "text": 7, "message": None}), "skipped ignores other keys")
    add(pred({"kind": "cancelled", "input_tokens": -1}), "cancelled ignores other keys")
    add(pred({"kind": "failed", "message": "provider timeout"}), "failed with a message")
    add(pred({"kind": "failed", "message": ""}), "failed with an empty message")
    add(pred({"kind": "failed"}), "failed without a message")
    add(pred({"kind": "failed", "message": None}), "failed with a null message")
    add(pred({"kind": "failed", "message": 7}), "failed with a numeric message")
    add(pred({"kind": "failed", "message": "a\nb\u0000"}), "failed with control characters")
    for v, why in [("Completed", "wrong case"), ("complete", "a near miss"), ("", "empty"), (None, "null"), (7, "a number")]:
        add(pred({"kind": v, "text": "x", "input_tokens": 1, "output_tokens": 1}), f"outcome kind {why}")
    add(pred({"text": "x", "input_tokens": 1, "output_tokens": 1}), "outcome kind missing")
    add('{"event":"prediction_result","source_sequence":1,"outcome":{"kind":"failed","kind":"skipped"}}', "outcome: duplicate kind, the last wins")

    # --- JobRecord ------------------------------------------------------------------
    add(job_event(JOB), "job: canonical, no data")
    add(job_event(job(data=JOB_DATA)), "job: with data")
    for kind in ["started", "updated", "finished", "failed"]:
        add(job_event(JOB, kind), f"job_changed kind {kind}")
    full = job(cleanup_error="rm failed", description="d", cwd="/", finished_at_ms=1751328009000,
               output_error="write failed", persistence_error="fsync failed", data={"k": "v"})
    add(job_event(full), "job: every optional field set")
    minimal_job = {k: v for k, v in JOB.items() if k not in JOB_STRING_OPTIONAL + JOB_UINT_OPTIONAL + ["output_file"]}
    add(job_event(minimal_job), "job: every optional field absent")
    add(job_event(dict(reversed(list(full.items())))), "job: keys reversed are written in to_json order")
    add(job_event(job(extra=1, schema="x", kind="started")), "job: extra keys ignored")
    add(job_event(job(state={"kind": "exited", "code": 0, "reason": "x", "extra": [1]})), "job: extra keys in state ignored")
    for k in JOB:
        add(job_event(job(**{k: DROP})), f"job: {k} absent")
        add(job_event(job(**{k: None})), f"job: {k} null")
    for k in JOB_STRING_OPTIONAL + ["command", "output_file"]:
        for v, why in [(7, "a number"), (True, "true"), (["x"], "an array"), ({}, "an object")]:
            add(job_event(job(**{k: v})), f"job: {k} is {why}")
        add(job_event(job(**{k: ""})), f"job: {k} is an empty string")
    add(job_event(job(command="a\u0000b\n\"é😀\\")), "job: command with control and astral characters")
    add(job_event(job(generation=7)), "job: numeric generation")
    add(job_event(job(id=["job-3"])), "job: array id")
    for k in JOB_BOOLS:
        for v, why in [("true", "a string"), (1, "1"), (0, "0")]:
            add(job_event(job(**{k: v})), f"job: {k} is {why}")
        add(job_event(job(**{k: True})), f"job: {k} true")
        add(job_event(job(**{k: False})), f"job: {k} false")
    for v, why in [("1", "1"), ("1.0", "1.0"), ("1e0", "1e0"), ("2", "2"), ("0", "0"), ("-1", "-1"), ('"1"', "a string"),
                   ("true", "true"), ("1.0000000000000001", "rounds to 1"), ("0.9999999999999999", "just under 1")]:
        add(job_raw("schema_version", v), f"job: schema_version {why}")
    for v, why in [("0", "0"), ("1", "1"), ("2147483647", "Int max"), ("2147483648", "2^31"), ("-1", "-1"),
                   ("1.5", "a fraction"), ("2.0", "2.0"), ('"2"', "a string"), ("9007199254740991", "2^53 - 1"),
                   ("9007199254740992", "2^53"), ("1e400", "1e400")]:
        add(job_raw("revision", v), f"job: revision {why}")
    # Every edge on one required field, one optional one and output_chars (also
    # an Int); the others share `job_uint`, so they get the decisive few.
    few = {"0", "9007199254740991", "9007199254740992", "-1", "-0", "1.5", "2147483648", "\"0\""}
    for k in JOB_UINT + JOB_UINT_OPTIONAL:
        for v, why in UINT_EDGES:
            if k in ("started_at_ms", "finished_at_ms", "output_chars") or v in few:
                add(job_raw(k, v), f"job: {k} {why}")
    add(job_raw("output_chars", "2147483647"), "job: output_chars Int max (again, explicit)")
    # Components: generation, id, output_file.
    good = [("a", "one char"), ("x" * 200, "200 chars"), ("...", "three dots"), (".a", "a leading dot"),
            ("a..b", "inner dots"), ("-", "a dash"), ("_", "an underscore"), ("AZaz09-_.", "every allowed class")]
    bad = [("", "empty"), (".", "a dot"), ("..", "dot dot"), ("x" * 201, "201 chars"), ("a/b", "a slash"),
           ("a\\b", "a backslash"), ("a b", "a space"), ("é", "non-ASCII"), ("ａ", "a fullwidth letter"),
           ("a😀", "an astral char"), ("a\u0000", "NUL"), ("a\n", "a trailing LF"), ("a:b", "a colon"),
           ("x" * 199 + "é", "200 chars, one non-ASCII"), ("a+b", "a plus")]
    for k in JOB_COMPONENTS + ["output_file"]:
        for n, (v, why) in enumerate(good + bad):
            if k != "output_file" or n % 2 == 0 or v in ("", ".", "..", "x" * 200, "x" * 201):
                add(job_event(job(**{k: v})), f"job: {k} {why}")
    add('{"event":"job_changed","kind":"updated","job":' + dumps(job(id=Raw('"\\u002e\\u002e"'))) + "}", "job: id .. spelled with escapes")
    add('{"event":"job_changed","kind":"updated","job":' + dumps(job(generation=Raw('"g\\u002d1"'))) + "}", "job: generation g-1 spelled with an escape")
    # States.
    for st in JOB_STATES:
        add(job_event(job(state=st)), f"job: state {st['kind']} {st.get('code', st.get('reason', ''))}".rstrip())
    for st, why in [
        ({"kind": "exited"}, "exited without code"),
        ({"kind": "exited", "code": Raw("1.5")}, "exited with a fractional code"),
        ({"kind": "exited", "code": Raw("1.0")}, "exited with code 1.0"),
        ({"kind": "exited", "code": Raw("-1")}, "exited with code -1"),
        ({"kind": "exited", "code": Raw("-0")}, "exited with code -0"),
        ({"kind": "exited", "code": Raw("2147483647")}, "exited with code Int max"),
        ({"kind": "exited", "code": Raw("2147483648")}, "exited with code 2^31"),
        ({"kind": "exited", "code": Raw("-2147483648")}, "exited with code Int min"),
        ({"kind": "exited", "code": Raw("-2147483649")}, "exited with code Int min - 1"),
        ({"kind": "exited", "code": Raw("2147483646.99999999999")}, "exited with a code rounding to a whole number"),
        ({"kind": "exited", "code": Raw("1e400")}, "exited with code 1e400"),
        ({"kind": "exited", "code": "1"}, "exited with a string code"),
        ({"kind": "exited", "code": None}, "exited with a null code"),
        ({"kind": "stopped"}, "stopped without reason"),
        ({"kind": "stopped", "reason": ""}, "stopped with an empty reason"),
        ({"kind": "stopped", "reason": " "}, "stopped with a blank reason"),
        ({"kind": "stopped", "reason": 7}, "stopped with a numeric reason"),
        ({"kind": "stopped", "reason": None}, "stopped with a null reason"),
        ({"kind": "Running"}, "kind is case-sensitive"),
        ({"kind": "finished"}, "an unknown kind"),
        ({"kind": ""}, "an empty kind"),
        ({"kind": 7}, "a numeric kind"),
        ({}, "an empty state"),
        ({"code": 0}, "a state without kind"),
        ("running", "a bare string state"),
        ([{"kind": "running"}], "an array state"),
        ({"kind": "interrupted", "code": "x", "reason": 7}, "interrupted ignores other keys"),
        ({"kind": "stopping", "kind2": "running"}, "stopping with an extra key"),
    ]:
        add(job_event(job(state=st)), f"job: state {why}")
    add('{"event":"job_changed","kind":"updated","job":' + dumps(job(state=Raw('{"kind":"exited","code":1,"kind":"running"}'))) + "}", "job: state with a duplicate kind, the last wins")
    # data: every JSON kind, and how it is written back.
    for text, why in DATA_VALUES:
        add(job_raw("data", text), f"job: data {why}")
    add(job_raw("data", '"\\ud800"'), "job: data a lone surrogate is not JSON")
    add('{"event":"job_changed","kind":"updated","job":' + dumps(job(data=JOB_DATA)) + ',"job":' + dumps(JOB) + "}", "duplicate job: the last (no data) wins")
    # job not an object.
    for v, why in [([], "an empty array"), ("job", "a string"), (None, "null"), (1, "a number"), ({}, "an empty object"),
                   ({"schema_version": 1}, "only a schema version")]:
        add(job_event(v), f"job is {why}")
    for v, why in [("Started", "wrong case"), ("stopped", "a stop outcome"), ("", "empty"), (7, "a number"), (None, "null"), (["started"], "an array")]:
        add(job_event(JOB, v), f"job_changed kind {why}")
    add({"event": "job_changed", "job": JOB}, "job_changed without kind")
    add({"event": "job_changed", "kind": "started"}, "job_changed without job")

    # --- jobs_snapshot -----------------------------------------------------------
    def snap(jobs, rid="jobs-1"):
        return {"event": "jobs_snapshot", "request_id": rid, "jobs": jobs}

    j2 = job(id="job-4", revision=1, state={"kind": "exited", "code": 1}, finished_at_ms=1751328009000)
    j3 = job(id="job-5", state={"kind": "stopped", "reason": "user"}, output_file=None, data=[1, "two"])
    add(snap([]), "jobs_snapshot with no jobs")
    add(snap([JOB]), "jobs_snapshot with one job")
    add(snap([JOB, j2, j3]), "jobs_snapshot with three jobs")
    add(snap([JOB, job(id="..")]), "jobs_snapshot: the second job is bad")
    add(snap([job(revision=0), JOB]), "jobs_snapshot: the first job is bad")
    add(snap([JOB, None]), "jobs_snapshot: a null job")
    add(snap([JOB, JOB]), "jobs_snapshot: the same job twice")
    add(snap([], rid=""), "jobs_snapshot: empty request_id")
    add(snap({"0": JOB}), "jobs_snapshot: jobs is an object")

    # --- job_stop_result ---------------------------------------------------------
    for o in ["stopped", "already_terminal", "not_found", "wrong_runtime"]:
        add(instance("job_stop_result", outcome=o), f"job_stop_result outcome {o}")
    for o, why in [("Stopped", "wrong case"), ("already-terminal", "a dash"), ("killed", "unknown"), ("", "empty"), (None, "null"), (1, "a number")]:
        add(instance("job_stop_result", outcome=o), f"job_stop_result outcome {why}")

    # --- Content -----------------------------------------------------------------
    def steer(content, **kw):
        return instance("steer_applied", content=content, **kw)

    def dropped(content):
        return instance("steer_dropped", content=content, submission_id=DROP)

    add(steer("do it"), "content: a string")
    add(steer(""), "content: an empty string")
    add(steer([txt("do it")]), "content: one text part is written as a string")
    add(steer([txt("")]), "content: one empty text part is written as an empty string")
    add(steer([txt("a"), txt("b")]), "content: two text parts stay an array")
    add(steer([]), "content: an empty array stays an array")
    add(dropped([]), "steer_dropped: empty content array")
    add(dropped([txt("late")]), "steer_dropped: one text part written as a string")
    add(steer([txt("look"), img("png")]), "content: text then image")
    add(steer([img("png")]), "content: one image stays an array")
    add(dropped([img("jpeg"), txt("x"), img("webp")]), "steer_dropped: images and text")
    for k in IMAGES:
        add(steer([txt("x"), img(k)]), f"content: a valid {k} image")
    add(steer([txt("a"), img("jpeg"), txt("b"), img("gif89a"), img("webp")]), "content: five mixed parts")
    for k in ("png", "jpeg"):
        raw, mt = IMAGES[k]
        for why, data in base64_near_misses(raw):
            add(steer([img(k, data=data)]), f"content: {k} base64 {why}")
    add(steer([img("jpeg", data=b64(JPEG).replace("/", "_").replace("+", "-"))]), "content: URL-safe base64")
    add(steer([img("png", data="")]), "content: empty image data")
    add(steer([img("png", data=b64(b"hello world"))]), "content: text bytes are no image")
    add(steer([img("png", data=b64(PNG[:7]))]), "content: PNG signature one byte short")
    add(steer([img("webp", data=b64(WEBP[:11]))]), "content: WebP header one byte short")
    for mt in MEDIA_TYPES[1:]:
        add(steer([img("png", media_type=mt)]), f"content: PNG bytes declared {mt}")
    for mt, why in [("IMAGE/PNG", "upper case"), ("image/png ", "a trailing space"), ("", "empty"), ("image/jpg", "jpg alias")]:
        add(steer([img("png", media_type=mt)]), f"content: media type {why}")
    for v, why in [(None, "null"), (7, "a number")]:
        add(steer([img("png", media_type=v)]), f"content: image media_type {why}")
        add(steer([img("png", data=v)]), f"content: image data {why}")
    add(steer([{"type": "image", "data": b64(PNG)}]), "content: image without media_type")
    add(steer([{"type": "image", "media_type": "image/png"}]), "content: image without data")
    add(steer([dict(img("png"), extra=[1], text=7)]), "content: extra keys in an image part")
    add(steer([{"type": "text", "text": "a", "media_type": 7}]), "content: extra keys in a text part")
    for v, why in [("text", "a string"), (7, "a number"), (None, "null"), ([txt("a")], "an array"), (True, "true")]:
        add(steer([v]), f"content: a part that is {why}")
    for t, why in [("Text", "wrong case"), ("video", "unknown"), ("", "empty"), (None, "null"), (7, "a number")]:
        add(steer([{"type": t, "text": "a"}]), f"content: part type {why}")
    add(steer([{"text": "a"}]), "content: a part without type")
    add(steer([{"type": "text"}]), "content: a text part without text")
    add(steer([{"type": "text", "text": 7}]), "content: a text part with numeric text")
    add(steer([{"type": "text", "text": None}]), "content: a text part with null text")
    add(steer([txt("a"), {"type": "bad"}]), "content: a later bad part")
    add('{"event":"steer_applied","content":[{"type":"image","media_type":"image\\/jpeg","data":"' + b64(JPEG).replace("/", "\\/") + '"}]}', "content: \\/ escapes in media_type and data")
    add('{"event":"steer_applied","content":[{"type":"text","text":"a","text":"b"}]}', "content: a duplicate text key")

    # --- unknown events, bad event keys, non-objects ---------------------------
    for n in UNKNOWN_EVENTS:
        add({"event": n}, f"unknown event {n!r}")
    add({"event": "fleet_started", "runs": 3, "task": "port it"}, "fleet_started, as older engines wrote it")
    add({"event": "provider_request_timed_out", "attempt": 1}, "provider_request_timed_out, as older engines wrote it")
    for v, why in [(7, "a number"), (None, "null"), (True, "true"), (["agent_step"], "an array"), ({"name": "agent_step"}, "an object")]:
        add({"event": v, "step": 1}, f"event is {why}")
    add({"step": 1}, "no event key")
    add({"Event": "agent_step", "step": 1}, "the event key is case-sensitive")
    add({"type": "agent_step", "step": 1}, "type is not event")
    add({}, "an empty object")
    add([{"event": "agent_step", "step": 1}], "an array holding an event")
    add('"agent_step"', "a string line")
    add("7", "a number line")
    add("null", "a null line")
    add("true", "a true line")
    add("[]", "an empty array line")
    add('{"event":"agent_step","step":1,"event":"agent_finished","answer":"a"}', "duplicate event: the last wins")
    add('{"event":"agent_finished","answer":"a","event":"fleet_started"}', "duplicate event: a last unknown name loses")
    add('{"event":"fleet_started","event":"agent_finished","answer":"a"}', "duplicate event: a last known name wins")
    add('{"event":"agent_finished","answer":"a","event":7}', "duplicate event: a last number loses")
    add('{"\\u0065vent":"agent_step","step":1}', "an escaped event key")
    add('{"event":"agent\\u005fstep","step":1}', "an escaped event name")
    add('{"event":"agent_step","st\\u0065p":1}', "an escaped field key")
    add({"log": {"event": "agent_step", "step": 1}}, "an event nested in an envelope is not read")

    # --- exact text ------------------------------------------------------------------
    for s, why in [
        ("a\u0000b\u001f\u007f\u2028\u2029/\\\"\b\f\n\r\t", "control characters, DEL, U+2028/9, escapes"),
        ("😀 \U00010000 \U0010FFFF", "astral characters"),
        ("日本語 é", "CJK and Latin-1"),
        ("\ufeff", "a BOM inside the string"),
        ("\u0085", "NEL"),
        ("x" * 3000, "3000 chars"),
    ]:
        add(instance("agent_finished", answer=s), f"answer: {why}")
    add('{"event":"agent_finished","answer":"\\u00e9\\u00E9\\/\\ud83d\\ude00\\uD83D\\uDE00"}', "answer: \\u escapes (both cases), \\/ and a surrogate pair")
    add('{"event":"agent_finished","answer":"\\u0000\\u001F\\u007f\\u0080\\u2028"}', "answer: escaped control characters")
    add('{"event":"agent_finished","answer":"\\ud800"}', "answer: a lone high surrogate is not JSON")
    add('{"event":"agent_finished","answer":"\\udc00"}', "answer: a lone low surrogate is not JSON")
    add('{"event":"agent_finished","answer":"\\ud83d\\u0041"}', "answer: a high surrogate before a non-surrogate is not JSON")
    add('{"event":"agent_finished","answer":"\\ude00\\ud83d"}', "answer: a reversed pair is not JSON")
    add('{"event":"agent_finished","answer":"a","x":"\\ud800"}', "a lone surrogate in an ignored key is still not JSON")
    add('{"event":"agent_finished","answer":"a\tb"}', "answer: a raw tab is not JSON")
    add('{"event":"agent_finished","answer":"a\u0001b"}', "answer: a raw control char is not JSON")
    add('{"event":"agent_finished","answer":"a\\xb"}', "answer: an unknown escape is not JSON")
    add('{"event":"agent_finished","answer":"\\u00G9"}', "answer: a bad \\u escape is not JSON")

    # --- not JSON ------------------------------------------------------------------
    add("", "an empty line")
    add(" ", "a blank line")
    add('{"event":"agent_step","step":1', "truncated: no closing brace")
    add('{"event":"agent_step","step":', "truncated after a colon")
    add('{"event":"agent_fin', "truncated inside a string")
    add('{"event":"agent_step","step":1} x', "trailing garbage")
    add('{"event":"agent_step","step":1}{}', "two objects")
    add('{"event":"agent_step","step":1,}', "a trailing comma")
    add('{"event":"mcp_tools_registered","servers":1,"tools":1,"names":["a",]}', "a trailing comma in an array")
    add("{'event':'agent_step','step':1}", "single quotes")
    add('\ufeff{"event":"agent_step","step":1}', "a BOM")
    add('{"event":"agent_step","step":01}', "a leading zero")
    add('{"event":"agent_step","step":+1}', "a plus sign")
    add('{"event":"agent_step","step":.5}', "no integer part")
    add('{"event":"agent_step","step":1.}', "no fraction digits")
    add('{"event":"agent_step","step":NaN}', "NaN")
    add('{"event":"agent_step","step":Infinity}', "Infinity")
    add('{"event":"agent_step","step":0x10}', "hex")
    add('{event:"agent_step","step":1}', "an unquoted key")
    add('{"event":"agent_step" "step":1}', "a missing comma")

    # The oracle's own test lines (events/test_lines.txt), where not already above.
    path = ORACLE_DIR / "events" / "test_lines.txt"
    for i, l in enumerate(path.read_text(encoding="utf-8").split("\n")[:-1], 1):
        add(l, f"oracle's own test line (events/test_lines.txt line {i})")
    # Upstream's own test expectations (next/upstream_tests_events.py), where
    # not already above; `build` checks every one against the oracle.
    for src, l, kind, _ in UPSTREAM:
        add(l, f"upstream test ({src}, {kind})")
    return c


def vector(line, why, verdict):
    kind, value = verdict
    v = {"line": line}
    if kind == "OK":
        v["ok"] = value
    elif kind == "NONE":
        v["none"] = True
    else:
        v["not_json"] = True
    v["why"] = why
    return json.dumps(v, ensure_ascii=False)


def build():
    cands = candidates()
    lines = [l for l, _ in cands]
    seen, dup = set(), []
    for l in lines:
        if l in seen:
            dup.append(l)
        seen.add(l)
    if dup:
        raise SystemExit(f"duplicate candidates: {dup[:3]}")
    long = [l for l in lines if len(l.encode("utf-8")) > MAX_LINE]
    if long:
        raise SystemExit(f"{len(long)} candidates longer than {MAX_LINE} bytes: {long[0][:200]}")
    verdicts = run_events_oracle(lines)
    # Every upstream expectation holds for the oracle, or the pin is wrong.
    answers = dict(zip(lines, run_events_oracle(lines, json_mode=False)))
    wrong = [(src, l, kind, exp, answers[l]) for src, l, kind, exp in UPSTREAM
             if not upstream_holds(kind, exp, answers[l])]
    if wrong:
        raise SystemExit(f"{len(wrong)} upstream expectations fail, e.g. {wrong[:3]}")
    return "".join(vector(l, w, v) + "\n" for (l, w), v in zip(cands, verdicts)), cands, verdicts


def summary(cands, verdicts):
    counts = {}
    for k, _ in verdicts:
        counts[k] = counts.get(k, 0) + 1
    per = {n: {"OK": 0, "NONE": 0, "NOTJSON": 0} for n in NAMES}
    for (line, _), (k, _) in zip(cands, verdicts):
        try:
            v = json.loads(line)
        except ValueError:
            continue
        if isinstance(v, dict) and isinstance(v.get("event"), str) and v["event"] in per:
            per[v["event"]][k] += 1
    return counts, per


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="compare with the file instead of writing it")
    ap.add_argument("--coverage", action="store_true", help="also print OK/NONE counts per event name")
    args = ap.parse_args()
    text, cands, verdicts = build()
    counts, per = summary(cands, verdicts)
    if args.coverage:
        for n in NAMES:
            print(f"{n:30} OK {per[n]['OK']:4}  NONE {per[n]['NONE']:4}")
    if args.check:
        if not OUT.exists() or OUT.read_text(encoding="utf-8") != text:
            raise SystemExit(f"{OUT} is stale: rerun scripts/make_event_vectors.py")
        print(f"{OUT.name} up to date ({len(verdicts)} vectors)")
        return
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {len(verdicts)} vectors to {OUT}: {counts}")


if __name__ == "__main__":
    main()
