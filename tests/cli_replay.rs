//! `serve-command replay`: a session recorded from `mock-engine --delay`
//! (prompts, a steer mid-turn, requests, a goal, a refused line, an
//! approval, a compaction) run again against engines that hold the same
//! conversation (the same engine, at another pace, with other model text,
//! the recording replayed by `mock-engine --replay`) and against engines
//! that do not (a second turn that fails, steers refused), each
//! difference placed under its command.
#![cfg(all(feature = "cli", unix))]

use serve_command::v2::serve::Recorder;
use serve_command::workbench::{Runner, Session};
use std::path::Path;
use std::process::Command;

#[path = "support/bin.rs"]
mod bin;

use bin::{run, stdout_of, BIN};

#[path = "support/scratch.rs"]
mod scratch;

use scratch::{file, scratch, Shared};

/// The turns: the first streams three deltas, the second asks an approval.
const SCRIPT: &str = concat!(
    r#"{"deltas":["Hel","lo"," there"]}"#,
    "\n",
    r#"{"approval":{"tool_name":"shell","detail":"run cargo test","body":"cargo test"}}"#,
    "\n",
);

/// The recorded session, each line at a point of the conversation.
const SESSION: &str = r#"{"send":{"command":"prompt","content":"one"}}
{"after":{"step":1},"send":{"command":"steer","content":"shorter","submission_id":"s1"}}
{"send":{"command":"jobs_snapshot","request_id":"j1"}}
{"after":{"ended":1},"send":{"command":"prompt","content":"two"}}
{"approval":{"asked":1,"allow":true}}
{"after":{"ended":4},"send":{"command":"goal","action":"set","text":"ship it"}}
{"after":{"answered":6},"send":{"command":"compact"}}
{"after":{"ended":7},"send":{"command":"job_stop","request_id":"p1","generation":"g-1","job_id":"job-1"}}
{"send":{"command":"bogus"}}
"#;

/// Records SESSION against `mock-engine --delay 20 --script SCRIPT`, into
/// `dir/recording.jsonl`; gives its path and the script's.
fn record(dir: &Path) -> (String, String) {
    let script = file(dir, "script.jsonl", SCRIPT);
    let buffer = Shared::default();
    let recorder = Recorder::new(buffer.clone());
    let verdict = Runner::new()
        .run_recorded(
            &Session::parse(SESSION).unwrap(),
            Command::new(BIN).args(["mock-engine", "--delay", "20", "--script", &script]),
            &recorder,
        )
        .unwrap();
    assert!(verdict.missed.is_empty(), "{:?}", verdict.missed);
    let recording = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
    (file(dir, "recording.jsonl", &recording), script)
}

/// `replay LOG [flags] -- ENGINE...`: its stdout, after asserting `status`.
#[track_caller]
fn replay(log: &str, flags: &[&str], engine: &[&str], status: i32) -> String {
    let mut args = vec!["replay", log];
    args.extend_from_slice(flags);
    args.push("--");
    args.extend_from_slice(engine);
    stdout_of(&args, b"", status)
}

/// The summary line when they agree, with the recording's counts.
fn same(log: &str, events: u64) -> String {
    format!(
        "replay: {log}: the same conversation (9 command lines, 25 events recorded, {events} in this run)\n"
    )
}

#[test]
fn the_same_engine_at_its_pace_at_another_and_with_other_text_holds_the_same_conversation() {
    let dir = scratch("replay-same");
    let (log, script) = record(&dir);
    // The recording holds what the session was for.
    let trace = stdout_of(&["trace", &log], b"", 0);
    for line in [
        "  event 4: steer_applied, answers command 2",
        "  event 13: approval_resolved, answers command 5",
        "event 21: goal_updated, answers command 6",
        "event 22: compaction_started, answers command 7",
        "command 9: refused: {\"command\":\"bogus\"}",
        "owed: nothing",
    ] {
        assert!(trace.lines().any(|l| l == line), "{line}\n{trace}");
    }
    let mock = |delay: &'static str, script: &str| -> Vec<String> {
        vec![
            BIN.to_owned(),
            "mock-engine".to_owned(),
            "--delay".to_owned(),
            delay.to_owned(),
            "--script".to_owned(),
            script.to_owned(),
        ]
    };
    let as_strs = |v: &[String]| {
        v.iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join("\u{0}")
    };
    let other_text = file(
        &dir,
        "other.jsonl",
        concat!(
            r#"{"deltas":["Hi"]}"#,
            "\n",
            r#"{"approval":{"tool_name":"shell","detail":"run make","body":"make"},"deltas":["o","k","!"]}"#,
            "\n"
        ),
    );
    for (engine, events) in [
        (mock("20", &script), 25),
        (mock("10", &script), 25),
        (mock("10", &other_text), 24),
    ] {
        let joined = as_strs(&engine);
        let engine: Vec<&str> = joined.split('\u{0}').collect();
        assert_eq!(
            replay(&log, &[], &engine, 0),
            same(&log, events),
            "{engine:?}"
        );
    }
    // What the session felt like: every kind timed, from the recording.
    let stats = stdout_of(&["trace", "--stats", &log], b"", 0);
    let rows: Vec<String> = stats
        .lines()
        .skip(1)
        .take_while(|l| !l.starts_with("sent:"))
        .map(|l| {
            l.split_whitespace()
                .take_while(|w| !w.ends_with("ms"))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    assert_eq!(
        rows,
        [
            "prompt first 2",
            "prompt first delta 2",
            "prompt end 2",
            "steer first 1",
            "steer end 1",
            "compact first 1",
            "compact end 1",
            "goal first 1",
            "goal end 1",
            "approval first 1",
            "approval end 1",
            "jobs_snapshot first 1",
            "jobs_snapshot end 1",
            "job_stop first 1",
            "job_stop end 1",
            "refused first 1",
            "refused end 1",
        ]
    );
    assert!(stats.starts_with(
        "kind           measure      count           p50           p95           p99           max\n"
    ));
    assert!(stats.contains(
        "\nsent: prompt 2, steer 1, compact 1, goal 1, approval 1, jobs_snapshot 1, job_stop 1, refused 1\nowed at the end: nothing\n"
    ));
    // The recording, answered by the mock engine made from it.
    assert_eq!(
        replay(&log, &[], &[BIN, "mock-engine", "--replay", &log], 0),
        same(&log, 25)
    );
}

#[test]
fn a_second_turn_that_fails_shows_under_its_command() {
    let dir = scratch("replay-fails");
    let (log, _) = record(&dir);
    let failing = file(
        &dir,
        "failing.jsonl",
        concat!(
            r#"{"deltas":["Hel","lo"]}"#,
            "\n",
            r#"{"fail":"provider error"}"#,
            "\n"
        ),
    );
    let engine = [BIN, "mock-engine", "--delay", "10", "--script", &failing];
    assert_eq!(
        replay(&log, &[], &engine, 1),
        format!(
            "command 4 (prompt), its turn:
  - approval_requested tool \"shell\"
  - approval_resolved outcome allowed_once
  - tool_result tool \"shell\"
  - agent_step
  - assistant_message
  - usage
  - agent_finished
  - assistant_delta… (streamed)
  + turn_failed
command 5 (approval): - approval_resolved outcome allowed_once (turn of command 4)
replay: {log}: 2 differences (- the recording, + this run; 9 command lines, 25 events recorded, 16 in this run)
note: this run: step 5: the engine asked 0 questions, not 1, and has no work left; sent then
"
        )
    );
    // For programs: one record per difference, then the summary.
    let jsonl = replay(&log, &["--format", "jsonl"], &engine, 1);
    let lines: Vec<&str> = jsonl.lines().collect();
    assert_eq!(lines.len(), 3, "{jsonl}");
    assert_eq!(
        lines[1],
        r#"{"command":5,"kind":"approval","part":"answers","recorded":["approval_resolved outcome allowed_once (turn of command 4)"],"replayed":[]}"#
    );
    assert_eq!(
        lines[2],
        r#"{"commands":9,"differences":2,"events":{"recorded":25,"replayed":16},"notes":["this run: step 5: the engine asked 0 questions, not 1, and has no work left; sent then"],"same":false,"updated":false}"#
    );
    // Accepted: the failing run is the recording now, and holds.
    let updated = replay(&log, &["--update"], &engine, 0);
    assert!(
        updated.ends_with(&format!("replay: {log} now holds this run\n")),
        "{updated}"
    );
    assert_eq!(
        replay(&log, &[], &engine, 0),
        format!(
            "replay: {log}: the same conversation (9 command lines, 16 events recorded, 16 in this run)\n"
        )
    );
}

#[test]
fn an_engine_that_refuses_steers_shows_under_the_steer() {
    let dir = scratch("replay-steers");
    let (log, script) = record(&dir);
    // The mock engine behind a filter that renames the steer command, so
    // the engine refuses it as unknown.
    let engine = file(
        &dir,
        "no-steers",
        &format!(
            "#!/bin/sh\nsed -u 's/\"command\":\"steer\"/\"command\":\"nudge\"/' | exec {BIN} mock-engine --delay 20 --script {script}\n"
        ),
    );
    let chmod = Command::new("chmod")
        .args(["+x", &engine])
        .status()
        .unwrap();
    assert!(chmod.success());
    assert_eq!(
        replay(&log, &["--turn-timeout", "1"], &[&engine], 1),
        format!(
            "command 1 (prompt), its turn:
  - agent_step
  - steer_applied kind prompt submission_id \"s1\"
command 2 (steer): - steer_applied kind prompt submission_id \"s1\" (turn of command 1)
outside any command: + command_error \"unknown command: nudge\" (fits no rule)
at the end: - owed nothing  + owed steer replies to command 2
replay: {log}: 4 differences (- the recording, + this run; 9 command lines, 25 events recorded, 24 in this run)
note: this run: the engine was silent for 1 s while it owed an answer; killed
"
        )
    );
}

#[test]
fn exact_compares_lines_and_ignore_leaves_a_kind_out() {
    let dir = scratch("replay-exact");
    let (log, _) = record(&dir);
    let other = file(&dir, "other.jsonl", concat!(r#"{"deltas":["Hi"]}"#, "\n"));
    let engine = [BIN, "mock-engine", "--delay", "10", "--script", &other];
    let exact = replay(
        &log,
        &["--exact", "--ignore", "assistant_delta"],
        &engine,
        1,
    );
    assert!(
        exact.starts_with(
            "command 1 (prompt), its turn:
  - {\"event\":\"assistant_message\",\"content\":\"Hello there\"}
  - {\"event\":\"usage\",\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":3,\"total_tokens\":4,\"prompt_cache_hit_tokens\":0,\"prompt_cache_miss_tokens\":1}}
  - {\"event\":\"agent_finished\",\"answer\":\"Hello there\"}
  + {\"event\":\"assistant_message\",\"content\":\"Hi\"}"
        ),
        "{exact}"
    );
    // The second turn is the default one now: no approval asked.
    assert!(
        exact.contains("command 5 (approval): - {\"event\":\"approval_resolved\""),
        "{exact}"
    );
}

#[test]
fn a_recording_that_cannot_be_read_or_a_bad_flag_is_a_usage_error() {
    let dir = scratch("replay-bad");
    let engine = [BIN, "mock-engine"];
    let table: &[(&str, &[&str], String)] = &[
        (
            "{\"dir\":\"command\",\"n\":1,\"line\":\"{}\"}\n{oops\n",
            &[],
            "not JSON: key must be a string at line 1 column 2".to_owned(),
        ),
        (
            "{\"dir\":\"command\",\"n\":2,\"line\":\"{}\"}\n",
            &[],
            "this command record's \"n\" is 2, but it is command 1 of the log: records left out or reordered cannot be attributed".to_owned(),
        ),
    ];
    for (text, flags, why) in table {
        let log = file(&dir, "bad.jsonl", text);
        let mut args = vec!["replay", &log];
        args.extend_from_slice(flags);
        args.push("--");
        args.extend_from_slice(&engine);
        let out = run(&args, b"");
        assert_eq!(out.status.code(), Some(2));
        let line = if why.starts_with("not JSON") { 2 } else { 1 };
        assert_eq!(
            String::from_utf8(out.stderr).unwrap(),
            format!("serve-command: {log}:{line}: {why}\n")
        );
    }
    let log = file(&dir, "ok.jsonl", "");
    let out = run(&["replay", &log, "--ignore", "usages", "--", BIN], b"");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "serve-command: --ignore usages: no such event (an event's wire name, such as usage, or `not an event`)\n"
    );
}

#[test]
fn an_engine_that_dies_mid_session_shows_what_never_came() {
    let dir = scratch("replay-dies");
    let (log, script) = record(&dir);
    // The first three command lines, then the engine exits 3.
    let engine = file(
        &dir,
        "dies",
        &format!(
            "#!/bin/sh\n{{ for i in 1 2 3; do IFS= read -r line; printf '%s\\n' \"$line\"; done; }} | {BIN} mock-engine --delay 20 --script {script}\nexit 3\n"
        ),
    );
    let chmod = Command::new("chmod")
        .args(["+x", &engine])
        .status()
        .unwrap();
    assert!(chmod.success());
    let out = replay(&log, &[], &[&engine], 1);
    assert!(
        out.starts_with(
            "command 4 (prompt), its turn:
  - agent_step
  - approval_requested tool \"shell\"
"
        ),
        "{out}"
    );
    assert!(
        out.contains("\ncommand 6 (goal): - goal_updated set\ncommand 7 (compact):\n  - compaction_started\n  - compaction_finished\n"),
        "{out}"
    );
    assert!(
        out.ends_with("note: this run: the engine exited with status 3\n"),
        "{out}"
    );
}

#[test]
fn update_with_redact_keeps_the_matches_out_of_the_new_recording() {
    let dir = scratch("replay-redact");
    let (log, script) = record(&dir);
    let engine = [BIN, "mock-engine", "--delay", "10", "--script", &script];
    let out = replay(&log, &["--update", "--redact", "Hel+o"], &engine, 0);
    assert!(
        out.ends_with(&format!("replay: {log} now holds this run\n")),
        "{out}"
    );
    let recording = std::fs::read_to_string(&log).unwrap();
    assert!(!recording.contains("Hello"), "{recording}");
    assert!(
        recording
            .contains(r#""line":"{\"event\":\"agent_finished\",\"answer\":\"[redacted] there\"}""#),
        "{recording}"
    );
    // Compared as written, the redacted recording holds.
    assert_eq!(
        replay(&log, &["--update", "--redact", "Hel+o"], &engine, 0),
        format!("replay: {log}: the same conversation (9 command lines, 25 events recorded, 25 in this run)\nreplay: {log} now holds this run\n")
    );
    // --redact only with --update.
    let out = run(&["replay", &log, "--redact", "x", "--", BIN], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8(out.stderr).unwrap().contains("--update"),);
}

#[test]
fn a_recording_with_violations_replays_them_and_says_so() {
    let dir = scratch("replay-violations");
    // The engine answered the request, then wrote a turn's end with no turn.
    let log = file(
        &dir,
        "recording.jsonl",
        concat!(
            r#"{"dir":"command","n":1,"line":"{\"command\":\"jobs_snapshot\",\"request_id\":\"j\"}"}"#,
            "\n",
            r#"{"dir":"event","n":1,"line":"{\"event\":\"jobs_snapshot\",\"request_id\":\"j\",\"jobs\":[]}"}"#,
            "\n",
            r#"{"dir":"event","n":2,"line":"{\"event\":\"agent_finished\",\"answer\":\"x\"}"}"#,
            "\n",
        ),
    );
    assert_eq!(
        replay(&log, &[], &[BIN, "mock-engine"], 1),
        format!(
            "outside any command: - agent_finished (fits no rule)
replay: {log}: 1 difference (- the recording, + this run; 1 command line, 2 events recorded, 1 in this run)
note: the recording holds 1 event that fits no rule, sent again as it was (first: event 2: agent_finished with no turn running (no prompt was sent))
"
        )
    );
}

/// A controller's cancel sent while the text streams, and a goal set late
/// in a turn, recorded at a pace (issue 57): replayed at the same points
/// (after as many of the turn's events that are not deltas, and a delta
/// when the text had begun), the same conversation at any pace and with
/// other text; against the unpaced mock, which ends each turn before it
/// reads a line, the difference is only a crossing on the pipes, shown as
/// a note and not counted.
#[test]
fn a_cancel_mid_stream_and_a_late_goal_replay_at_their_points() {
    let dir = scratch("replay-points");
    let script = file(
        &dir,
        "script.jsonl",
        concat!(
            r#"{"deltas":["a","b","c","d"]}"#,
            "\n",
            r#"{"deltas":["e","f"]}"#,
            "\n"
        ),
    );
    // At 80 ms a step: the cancel 200 ms into the first turn, after its
    // second delta; the goal 360 ms into the second, after its usage.
    let session = Session::parse(concat!(
        r#"{"send":{"command":"prompt","content":"one"}}"#,
        "\n",
        r#"{"after":{"ms":200},"send":{"command":"cancel"}}"#,
        "\n",
        r#"{"after":{"ended":1},"send":{"command":"prompt","content":"two"}}"#,
        "\n",
        r#"{"after":{"ms":360},"send":{"command":"goal","action":"set","text":"ship"}}"#,
        "\n",
    ))
    .unwrap();
    let buffer = Shared::default();
    let recorder = Recorder::new(buffer.clone());
    Runner::new()
        .run_recorded(
            &session,
            Command::new(BIN).args(["mock-engine", "--delay", "80", "--script", &script]),
            &recorder,
        )
        .unwrap();
    let recording = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
    let log = file(&dir, "recording.jsonl", &recording);
    // The recording holds a cancel that landed mid-stream.
    let trace = stdout_of(&["trace", &log], b"", 0);
    assert!(
        trace.contains("agent_aborted, answers command 2"),
        "{trace}"
    );
    // And a goal set in the pause before the second turn's end, settled
    // when it ended (an earlier point would apply it mid-turn: a step more).
    assert!(
        trace.contains("  event 9: usage\ncommand 4: goal set \"ship\"\n"),
        "{trace}"
    );
    let other = file(
        &dir,
        "other.jsonl",
        "{\"deltas\":[\"x\",\"y\",\"z\"]}\n{\"answer\":\"w\"}\n",
    );
    for (delay, script) in [
        ("40", &script),
        ("5", &script),
        ("300", &script),
        ("40", &other),
    ] {
        let out = replay(
            &log,
            &[],
            &[BIN, "mock-engine", "--delay", delay, "--script", script],
            0,
        );
        assert!(
            out.starts_with(&format!("replay: {log}: the same conversation ("))
                && out.lines().count() == 1,
            "--delay {delay} --script {script}: {out}"
        );
    }
    // Unpaced, every line crosses the turn it was meant for: set apart.
    let out = replay(&log, &[], &[BIN, "mock-engine", "--script", &script], 0);
    let notes: Vec<&str> = out.lines().skip(1).collect();
    assert_eq!(
        notes,
        [
            "note: crossed: not compared: command 1 (prompt), its turn: - agent_aborted  + assistant_message, usage, agent_finished (command 2 (cancel) and the turn of command 1 crossed on the pipes in this run)",
            "note: crossed: not compared: command 2 (cancel): - agent_aborted (turn of command 1) (command 2 (cancel) and the turn of command 1 crossed on the pipes in this run)",
        ],
        "{out}"
    );
}
