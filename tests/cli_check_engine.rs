//! `serve-command check-engine`, run as a child process against engines
//! built for the purpose: `mock-engine` (every check holds), and small
//! `sh` engines that each break rules (a banner, a wrong message, answers
//! on stderr, reading on, dying on a long line, a stray `command_error`),
//! each caught and named by the first line that fails, or that differ from
//! the reference only where an engine in another language may (another
//! JSON parser's words, a line limit of its own) and conform. The
//! `prediction` check has engines of its own (`tests/engines/predicts-*`,
//! each wrapping the paced mock engine), each breaking one rule of the
//! engine's own prediction.
#![cfg(all(feature = "cli", unix))]

use serde_json::Value;
use std::path::PathBuf;

#[path = "support/bin.rs"]
mod bin;

use bin::{run, BIN};

/// The line checks, which these engines are written to break: the
/// conversation checks have engines of their own (cli_check_conversation.rs).
const LINE_CHECKS: [&str; 14] = [
    "stdout-events",
    "no-stderr-answers",
    "protocol-errors",
    "serve-refusals",
    "not-json",
    "not-json-detail",
    "blank-lines",
    "crlf",
    "split-writes",
    "no-final-lf",
    "long-prompt",
    "line-at-limit",
    "line-over-limit",
    "jobs-snapshot",
];

/// Runs `check-engine [--timeout 60] OPTIONS --check LINE-CHECK... -- sh -c
/// SCRIPT sh BIN` (the script finds the binary as `$1`): its exit code and
/// stdout.
fn check(options: &[&str], script: &str) -> (i32, String) {
    let mut argv = vec!["check-engine"];
    // Room for a debug build on a loaded machine, unless a test says.
    if !options.contains(&"--timeout") {
        argv.extend_from_slice(&["--timeout", "60"]);
    }
    argv.extend_from_slice(options);
    let declared = options.contains(&"--max-line-len");
    for name in LINE_CHECKS {
        if name != "line-over-limit" || declared {
            argv.extend_from_slice(&["--check", name]);
        }
    }
    argv.extend_from_slice(&["--", "sh", "-c", script, "sh", BIN]);
    let out = run(&argv, b"");
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
    )
}

/// The summary's verdict lines, each failure's `why` and the count: what
/// does not depend on the vectors' lines.
fn verdicts(stdout: &str) -> String {
    stdout
        .lines()
        .filter(|l| {
            l.starts_with("PASS")
                || l.starts_with("FAIL")
                || l.starts_with("SKIP")
                || l.starts_with("  why:")
                || l.contains(" checks pass; ")
        })
        .map(|l| format!("{l}\n"))
        .collect()
}

const ALL_PASS: &str = "\
PASS must   stdout-events
PASS must   no-stderr-answers
PASS must   protocol-errors
PASS must   serve-refusals
PASS must   not-json
PASS should not-json-detail
PASS must   blank-lines
PASS must   crlf
PASS must   split-writes
PASS must   no-final-lf
PASS must   long-prompt
PASS should line-at-limit
PASS must   jobs-snapshot
PASS must   turn-ends
PASS must   prompts-queue
SKIP must   cancel
  why: not judged: the turn of command 1 ran uncancelled for less than 375 ms, too short to send a cancel well before its end (it and the turn's last events may cross on the pipes for 250 ms): the cancel sent at its start was answered by agent_finished
SKIP must   cancel-question
  why: not judged: the engine asked no approval question
SKIP must   approval
  why: not judged: the engine asked no approval question
SKIP must   steer
  why: not judged: the steer was dropped (steer_dropped): the turn ended before a step boundary took it, which is right, so there is no landing to judge
PASS must   command-steer
PASS must   goal
PASS must   compact
PASS must   requests
PASS must   end-of-input
SKIP must   prediction
  why: not judged: the engine never predicted after a finished idle turn (no prediction_result within 2 s of its end)
20/25 checks pass; every must holds; 5 not judged
";

/// What the line checks alone say of an engine that keeps every rule.
const LINES_PASS: &str = "\
PASS must   stdout-events
PASS must   no-stderr-answers
PASS must   protocol-errors
PASS must   serve-refusals
PASS must   not-json
PASS should not-json-detail
PASS must   blank-lines
PASS must   crlf
PASS must   split-writes
PASS must   no-final-lf
PASS must   long-prompt
PASS should line-at-limit
PASS must   jobs-snapshot
13/13 checks pass; every must holds
";

/// The first line of the summary that is not `PASS`, and the one after it
/// (its `why`): what a person reads first.
fn first_failure(stdout: &str) -> String {
    let mut lines = stdout.lines().skip_while(|l| l.starts_with("PASS"));
    format!(
        "{}\n{}\n",
        lines.next().unwrap_or_default(),
        lines.next().unwrap_or_default()
    )
}

/// The engine `tests/engines/NAME`.
fn engine(name: &str) -> String {
    format!("{}/tests/engines/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// Runs `check-engine --timeout 60 --check prediction -- ENGINE...`: its
/// exit code and the summary's first two lines (the verdict and its why).
fn prediction(engine: &[&str]) -> (i32, String) {
    let mut argv = vec![
        "check-engine",
        "--timeout",
        "60",
        "--check",
        "prediction",
        "--",
    ];
    argv.extend_from_slice(engine);
    let out = run(&argv, b"");
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let first: String = stdout.lines().take(2).map(|l| format!("{l}\n")).collect();
    (out.status.code().unwrap(), first)
}

#[test]
fn the_predicting_mock_engine_passes_prediction() {
    let (code, first) = prediction(&[BIN, "mock-engine", "--delay", "100", "--predict", "Thanks!"]);
    assert_eq!(
        (code, first.as_str()),
        (
            0,
            "PASS must   prediction\n1/1 checks pass; every must holds\n"
        )
    );
}

#[test]
fn a_prediction_inside_a_turn_fails_prediction() {
    let inside = engine("predicts-in-turn");
    let (code, first) = prediction(&[&inside, BIN, "mock-engine", "--delay", "200"]);
    assert_eq!(code, 1);
    assert_eq!(
        first,
        "FAIL must   prediction\n  why: event 2 (prediction_result) fits no rule of the conversation: prediction_result while the turn of command 1 runs: the engine predicts only between turns\n"
    );
}

#[test]
fn a_prediction_after_a_failed_turn_fails_prediction() {
    let script = std::env::temp_dir().join(format!(
        "serve-command-check-engine-fail-{}.jsonl",
        std::process::id()
    ));
    std::fs::write(&script, "{\"fail\":\"provider error\"}\n").unwrap();
    let after = engine("predicts-after-failure");
    let (code, first) = prediction(&[
        &after,
        BIN,
        "mock-engine",
        "--delay",
        "200",
        "--script",
        script.to_str().unwrap(),
    ]);
    std::fs::remove_file(&script).unwrap();
    assert_eq!(code, 1);
    assert_eq!(
        first,
        "FAIL must   prediction\n  why: event 3 (prediction_result) fits no rule of the conversation: prediction_result where none may come: the turn of command 1 ended with turn_failed (event 2), not agent_finished\n"
    );
}

#[test]
fn two_predictions_after_one_turn_fail_prediction() {
    let twice = engine("predicts-twice");
    let (code, first) = prediction(&[
        &twice,
        BIN,
        "mock-engine",
        "--delay",
        "200",
        "--predict",
        "hi",
    ]);
    assert_eq!(code, 1);
    assert_eq!(
        first,
        "FAIL must   prediction\n  why: event 8 (prediction_result) fits no rule of the conversation: prediction_result where none may come: the turn of command 1 already had its prediction (event 7)\n"
    );
}

/// No event shows that the engine read an idle cancel: a prediction that
/// comes well after it was sent is judged by time. (How long after
/// depends on the machine: only the words around it are asserted.)
#[test]
fn a_prediction_after_a_cancel_fails_prediction() {
    let late = engine("predicts-after-cancel");
    let (code, first) = prediction(&[
        &late,
        BIN,
        "mock-engine",
        "--delay",
        "200",
        "--predict",
        "hi",
    ]);
    assert_eq!(code, 1);
    let (head, tail) = first
        .split_once(" ms after ")
        .unwrap_or_else(|| panic!("{first}"));
    assert_eq!(
        head.trim_end_matches(|c: char| c.is_ascii_digit()),
        "FAIL must   prediction\n  why: command 3 (cancel): event 7 (prediction_result) came ",
        "{first}"
    );
    let ms: u64 = head.rsplit(' ').next().unwrap().parse().unwrap();
    assert!(ms >= 250, "{first}");
    assert_eq!(
        tail,
        "the idle cancel sent at the end of the turn of command 1, well after the 250 ms in which the two may cross on the pipes: a cancel (as a prompt, a steer, compact or a goal) cancels the engine's prediction, which is then never written\n"
    );
}

#[test]
fn passes_on_mock_engine() {
    let out = run(
        &["check-engine", "--timeout", "60", "--", BIN, "mock-engine"],
        b"",
    );
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        ALL_PASS,
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stderr.is_empty());
    assert_eq!(out.status.code(), Some(0));
}

/// The guide (docs/GUIDE.md) shows the mock engine's run as it is.
#[test]
fn the_readme_shows_the_run_on_mock_engine() {
    let readme = include_str!("../docs/GUIDE.md");
    let shown: String = ALL_PASS.lines().map(|l| format!("  # {l}\n")).collect();
    assert!(
        readme.contains(&format!(
            "  serve-command check-engine -- serve-command mock-engine\n{shown}  ```\n"
        )),
        "{shown}"
    );
}

#[test]
fn an_engine_that_answers_nothing_fails_every_answer_check() {
    let (code, stdout) = check(&[], "cat >/dev/null; echo 'engine: no answers' >&2");
    assert_eq!(code, 1);
    assert_eq!(
        verdicts(&stdout),
        r#"PASS must   stdout-events
PASS must   no-stderr-answers
FAIL must   protocol-errors
  why: command_error 1 of 477 owed never came: "invalid content: JsonDecodeError((, expected content string or array))"
FAIL must   serve-refusals
  why: command_error 1 of 42 owed never came: "goal text must not be blank"
FAIL must   not-json
  why: command_error 1 of 1 owed never came: one that begins "command stream: " (this crate's: "command stream: expected a string key at byte 1")
SKIP should not-json-detail
  why: not judged: no command_error beginning "command stream: " answered the line that is not JSON on stdout (not-json)
FAIL must   blank-lines
  why: command_error 1 of 1 owed never came: "goal text must not be blank"
FAIL must   crlf
  why: command_error 1 of 1 owed never came: "invalid content: JsonDecodeError((, expected content string or array))"
FAIL must   split-writes
  why: command_error 1 of 1 owed never came: "goal text must not be blank"
FAIL must   no-final-lf
  why: command_error 1 of 1 owed never came: "invalid content: JsonDecodeError((, expected content string or array))"
FAIL must   long-prompt
  why: on line 1, a prompt of 4194304 bytes with a PNG image: no jobs_snapshot answered request_id "check-engine-long-prompt"
FAIL should line-at-limit
  why: on line 1, a line of 67108864 bytes, the crate's limit: no jobs_snapshot answered request_id "check-engine-at-limit"
FAIL must   jobs-snapshot
  why: no jobs_snapshot answered request_id "check-engine-snapshot"
2/13 checks pass; 9 must checks fail; 1 not judged
"#
    );
    // A failure in full: why, the lines sent, those received, the stderr
    // tail and how the engine ended.
    assert!(
        stdout.contains(
            r#"FAIL must   jobs-snapshot
  why: no jobs_snapshot answered request_id "check-engine-snapshot"
  sent (1 line):
    {"command":"jobs_snapshot","request_id":"check-engine-snapshot"}
  received (0 lines):
  stderr tail (1 line):
    engine: no answers
  engine: exited with status 0
2/13 checks pass; 9 must checks fail; 1 not judged
"#
        ),
        "{stdout}"
    );
    // The 477 lines sent are cut to 20 in the summary.
    assert!(stdout.contains("  sent (478 lines):\n"), "{stdout}");
    assert!(
        stdout.contains("    ... 458 more (all in the report)\n"),
        "{stdout}"
    );
}

#[test]
fn a_banner_on_stdout_fails_stdout_events() {
    let (code, stdout) = check(&[], r#"echo "engine v1.0 ready"; exec "$1" mock-engine"#);
    assert_eq!(code, 1);
    assert_eq!(
        verdicts(&stdout),
        LINES_PASS
            .replace(
                "PASS must   stdout-events\n",
                "FAIL must   stdout-events\n  why: in protocol-errors, stdout line 1 is not an event (expected a JSON value at byte 0): engine v1.0 ready\n"
            )
            .replace("13/13 checks pass; every must holds", "12/13 checks pass; 1 must check fails")
    );
    assert!(stdout.contains("  received ("), "{stdout}");
    assert!(stdout.contains("\n    engine v1.0 ready\n"), "{stdout}");
}

/// Dies (says so on stderr, stops reading and is killed) at a line over 1
/// MB: `cut` spares `awk` holding 64 MiB, and the kill makes the engine's
/// own status that of a process that died.
const DIES_OVER_1_MB: &str = r#"cut -c1-1000001 | (awk 'length($0) > 1000000 { print "panicked: line too long" > "/dev/stderr"; exit 1 } { print; fflush() }' || kill -KILL $$) | "$1" mock-engine"#;

#[test]
fn an_engine_dying_on_a_4_mib_prompt_fails_long_prompt_first() {
    let (code, stdout) = check(&[], DIES_OVER_1_MB);
    assert_eq!(code, 1);
    assert_eq!(
        first_failure(&stdout),
        "FAIL must   long-prompt\n  why: the engine died on line 1, a prompt of 4194304 bytes with a PNG image (it was killed by signal 9): no jobs_snapshot answered request_id \"check-engine-long-prompt\"\n"
    );
    assert_eq!(
        verdicts(&stdout),
        LINES_PASS
            .replace(
                "PASS must   long-prompt\n",
                "FAIL must   long-prompt\n  why: the engine died on line 1, a prompt of 4194304 bytes with a PNG image (it was killed by signal 9): no jobs_snapshot answered request_id \"check-engine-long-prompt\"\n"
            )
            .replace(
                "PASS should line-at-limit\n",
                "FAIL should line-at-limit\n  why: the engine died on line 1, a line of 67108864 bytes, the crate's limit (it was killed by signal 9): no jobs_snapshot answered request_id \"check-engine-at-limit\"\n"
            )
            .replace("13/13 checks pass; every must holds", "11/13 checks pass; 1 must check fails")
    );
    assert!(
        stdout.contains("  stderr tail (1 line):\n    panicked: line too long\n  engine: was killed by signal 9\n"),
        "{stdout}"
    );
}

/// An engine with a limit of its own, 5 MiB: a line over it is answered
/// with a `command stream: ` error (the mock engine's for the line that
/// stands in for it) and nothing after it is read.
const LIMIT_5_MIB: &str = r#"cut -c1-5242882 | awk 'length($0) > 5242880 { print "x"; exit } { print; fflush() }' | "$1" mock-engine"#;

#[test]
fn a_declared_limit_is_sent_at_and_one_byte_over() {
    let path = std::env::temp_dir().join(format!(
        "serve-command-check-engine-limit-{}.json",
        std::process::id()
    ));
    let (code, stdout) = check(
        &["--max-line-len", "5MiB", "--report", path.to_str().unwrap()],
        LIMIT_5_MIB,
    );
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(
        (code, verdicts(&stdout)),
        (
            0,
            LINES_PASS
                .replace(
                    "PASS should line-at-limit\n",
                    "PASS should line-at-limit\nPASS must   line-over-limit\n"
                )
                .replace("13/13", "14/14")
        )
    );
    assert_eq!(report["max_line_len"], 5_242_880);
    let rules: Vec<(&str, &str)> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["name"].as_str().unwrap().starts_with("line-"))
        .map(|c| (c["name"].as_str().unwrap(), c["rule"].as_str().unwrap()))
        .collect();
    assert_eq!(
        rules,
        [
            ("line-at-limit", "a line of exactly 5242880 bytes (the engine's limit, as declared; JSON padded with spaces) is read"),
            ("line-over-limit", "a line of 5242881 bytes, over the declared limit of 5242880, is answered by one command_error whose message begins `command stream: `, and no line after it is answered"),
        ]
    );
}

#[test]
fn a_line_over_the_declared_limit_read_or_dying_fails_line_over_limit() {
    // The mock engine's own limit is 64 MiB: it reads the line.
    let (code, stdout) = check(&["--max-line-len", "5MiB"], r#"exec "$1" mock-engine"#);
    assert_eq!(code, 1);
    assert_eq!(
        first_failure(&stdout),
        "FAIL must   line-over-limit\n  why: the engine read a line over its declared limit of 5242880 bytes (line 1, 5242881 bytes) as a command: it answered jobs_snapshot \"check-engine-over-limit\"\n"
    );
    assert!(
        stdout.ends_with("13/14 checks pass; 1 must check fails\n"),
        "{stdout}"
    );
    // Dies at the line over 5 MiB, as the engine of `DIES_OVER_1_MB`.
    let dies = r#"cut -c1-5242882 | (awk 'length($0) > 5242880 { print "panicked: line too long" > "/dev/stderr"; exit 1 } { print; fflush() }' || kill -KILL $$) | "$1" mock-engine"#;
    let (code, stdout) = check(&["--max-line-len", "5MiB"], dies);
    assert_eq!(code, 1);
    assert_eq!(
        first_failure(&stdout),
        "FAIL must   line-over-limit\n  why: the engine died on line 1, a line of 5242881 bytes, over the declared limit of 5242880 (it was killed by signal 9): command_error 1 of 1 owed never came: one that begins \"command stream: \" (this crate's: \"command stream: line 1 is longer than 5242880 bytes\")\n"
    );
}

#[test]
fn a_declared_limit_under_4_mib_fails_long_prompt() {
    // The engine of the test above with a limit of 1 MB: it refuses the
    // prompt as its limit says, but every engine must read it.
    let (code, stdout) = check(
        &["--max-line-len", "1000000"],
        &LIMIT_5_MIB
            .replace("5242882", "1000002")
            .replace("5242880", "1000000"),
    );
    assert_eq!(code, 1);
    assert_eq!(
        verdicts(&stdout),
        LINES_PASS
            .replace(
                "PASS must   long-prompt\n",
                "FAIL must   long-prompt\n  why: the declared limit, 1000000 bytes, is shorter than line 1, a prompt of 4194304 bytes with a PNG image, a line every engine must read\n"
            )
            .replace(
                "PASS should line-at-limit\n",
                "PASS should line-at-limit\nPASS must   line-over-limit\n"
            )
            .replace("13/13 checks pass; every must holds", "13/14 checks pass; 1 must check fails")
    );
}

#[test]
fn a_stray_command_error_fails_every_check_of_the_answers() {
    let (code, stdout) = check(
        &[],
        r#"echo '{"event":"command_error","error":"engine warming up"}'; exec "$1" mock-engine"#,
    );
    assert_eq!(code, 1);
    let says = |owed: &str| {
        format!("  why: command_error 1 says \"engine warming up\"; owed \"{owed}\"\n")
    };
    let content = "invalid content: JsonDecodeError((, expected content string or array))";
    let blank = "goal text must not be blank";
    let not_owed = "  why: command_error 1 was not owed (0 owed): \"engine warming up\"\n";
    let expected = format!(
        "PASS must   stdout-events\nPASS must   no-stderr-answers\nFAIL must   protocol-errors\n{}FAIL must   serve-refusals\n{}FAIL must   not-json\n{}SKIP should not-json-detail\n  why: not judged: no command_error beginning \"command stream: \" answered the line that is not JSON on stdout (not-json)\nFAIL must   blank-lines\n{}FAIL must   crlf\n{}FAIL must   split-writes\n{}FAIL must   no-final-lf\n{}FAIL must   long-prompt\n{not_owed}FAIL should line-at-limit\n{not_owed}FAIL must   jobs-snapshot\n{not_owed}2/13 checks pass; 9 must checks fail; 1 not judged\n",
        says(content),
        says(blank),
        "  why: command_error 1 says \"engine warming up\"; owed one that begins \"command stream: \" (this crate's: \"command stream: expected a string key at byte 1\")\n",
        says(blank),
        says(content),
        says(blank),
        says(content),
    );
    assert_eq!(verdicts(&stdout), expected);
}

#[test]
fn a_wrong_message_fails_the_checks_that_send_its_line() {
    let (code, stdout) = check(
        &[],
        r#""$1" mock-engine | sed 's/goal text must not be blank/goal text is blank/'"#,
    );
    assert_eq!(code, 1);
    let why = "  why: command_error 1 says \"goal text is blank\"; owed \"goal text must not be blank\"\n";
    let mut expected = LINES_PASS.to_owned();
    for name in ["serve-refusals", "blank-lines", "split-writes"] {
        expected = expected.replace(
            &format!("PASS must   {name}\n"),
            &format!("FAIL must   {name}\n{why}"),
        );
    }
    let expected = expected.replace(
        "13/13 checks pass; every must holds",
        "10/13 checks pass; 3 must checks fail",
    );
    assert_eq!(verdicts(&stdout), expected);
}

#[test]
fn answers_on_stderr_fail_one_must_that_quotes_them() {
    // Every command_error on stderr, as a log; the other events on stdout.
    let (code, stdout) = check(
        &[],
        r#""$1" mock-engine | awk '/"event":"command_error"/ { print > "/dev/stderr"; next } { print }'"#,
    );
    assert_eq!(code, 1);
    let why = "  why: in protocol-errors, the answers went to stderr, not stdout: 477 of the 478 owed are missing from stdout and on stderr, the first as stderr line 1: {\"event\":\"command_error\",\"error\":\"invalid content: JsonDecodeError((, expected content string or array))\"}\n";
    assert_eq!(
        first_failure(&stdout),
        format!("FAIL must   no-stderr-answers\n{why}")
    );
    let skip = |name: &str, owed: &str| {
        format!("SKIP must   {name}\n  why: not judged: its {owed} on stderr, not stdout (no-stderr-answers)\n")
    };
    let one = "answer owed is";
    assert_eq!(
        verdicts(&stdout),
        format!(
            "PASS must   stdout-events\nFAIL must   no-stderr-answers\n{why}{}{}{}SKIP should not-json-detail\n  why: not judged: no command_error beginning \"command stream: \" answered the line that is not JSON on stdout (not-json)\n{}{}{}{}PASS must   long-prompt\nPASS should line-at-limit\nPASS must   jobs-snapshot\n4/13 checks pass; 1 must check fails; 8 not judged\n",
            skip("protocol-errors", "477 answers owed are"),
            skip("serve-refusals", "42 answers owed are"),
            skip("not-json", one),
            skip("blank-lines", one),
            skip("crlf", one),
            skip("split-writes", one),
            skip("no-final-lf", one),
        )
    );
}

#[test]
fn answers_swapped_with_a_log_fail_stdout_events_and_no_stderr_answers() {
    // stdout and stderr swapped: every answer on stderr, the engine's note
    // on stdout.
    let (code, stdout) = check(&[], r#"exec "$1" mock-engine 3>&1 1>&2 2>&3"#);
    assert_eq!(code, 1);
    let verdicts = verdicts(&stdout);
    assert!(
        verdicts.starts_with(
            "FAIL must   stdout-events\n  why: in not-json, stdout line 1 is not an event (expected a JSON value at byte 0): mock-engine: stopping: line 2: expected a string key at byte 1\nFAIL must   no-stderr-answers\n  why: in protocol-errors, the answers went to stderr, not stdout: 478 of the 478 owed are missing from stdout and on stderr, the first as stderr line 1: {\"event\":\"command_error\",\"error\":\"invalid content: JsonDecodeError((, expected content string or array))\"}\n"
        ),
        "{verdicts}"
    );
    assert!(
        verdicts.ends_with("0/13 checks pass; 2 must checks fail; 11 not judged\n"),
        "{verdicts}"
    );
}

#[test]
fn an_engine_reading_on_after_a_line_that_is_not_json_fails_not_json() {
    // A fresh mock engine per line: nothing stops it. `cut` spares `awk`
    // holding 64 MiB, and cuts that line.
    let (code, stdout) = check(
        &[],
        r#"cut -c1-4194304 | awk -v bin="$1" '{ cmd = "\"" bin "\" mock-engine 2>/dev/null"; print | cmd; close(cmd) }'"#,
    );
    assert_eq!(code, 1);
    let why = "  why: the engine read on after a line that is not JSON (line 2: {'command':'cancel'}): it answered line 3 with jobs_snapshot \"check-engine-unread\"\n";
    assert_eq!(
        first_failure(&stdout),
        format!("FAIL must   not-json\n{why}")
    );
    assert_eq!(
        verdicts(&stdout),
        LINES_PASS
            .replace("PASS must   not-json\n", &format!("FAIL must   not-json\n{why}"))
            .replace(
                "PASS should line-at-limit\n",
                "FAIL should line-at-limit\n  why: on line 1, a line of 67108864 bytes, the crate's limit: command_error 1 was not owed (0 owed): \"command stream: unexpected end of line at byte 4194304\"\n"
            )
            .replace("13/13 checks pass; every must holds", "11/13 checks pass; 1 must check fails")
    );
}

/// An engine in another language answers a line that is not JSON with its
/// own parser's words after `command stream: `, as Python's `json` does:
/// every `must` holds, and only `not-json-detail` asks for the reference's.
#[test]
fn another_json_parsers_words_pass_every_must() {
    let (code, stdout) = check(
        &[],
        r#""$1" mock-engine | sed 's/"command stream: [^"]*"/"command stream: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"/'"#,
    );
    assert_eq!(code, 0);
    assert_eq!(
        verdicts(&stdout),
        LINES_PASS
            .replace(
                "PASS should not-json-detail\n",
                "FAIL should not-json-detail\n  why: the line that is not JSON is answered \"command stream: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)\"; the reference answers \"command stream: expected a string key at byte 1\"\n"
            )
            .replace("13/13 checks pass; every must holds", "12/13 checks pass; every must holds")
    );
}

#[test]
fn the_report_holds_the_same_as_json() {
    let path = std::env::temp_dir().join(format!(
        "serve-command-check-engine-{}.json",
        std::process::id()
    ));
    let path_arg = path.to_str().unwrap();
    let (code, stdout) = check(
        &["--report", path_arg],
        "cat >/dev/null; echo 'engine: no answers' >&2",
    );
    assert_eq!(code, 1);
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    std::fs::remove_file(&path).unwrap();
    let keys = |v: &Value| -> Vec<String> { v.as_object().unwrap().keys().cloned().collect() };
    assert_eq!(
        keys(&report),
        [
            "checks",
            "conforms",
            "engine",
            "failed",
            "max_line_len",
            "must_failed",
            "not_judged",
            "passed",
            "revision",
            "timeout_secs",
            "turn_timeout_secs"
        ]
    );
    assert_eq!(report["engine"][0], "sh");
    assert_eq!(report["engine"][4], BIN);
    assert_eq!(report["revision"], "v2");
    assert_eq!(report["timeout_secs"], 60.0);
    assert_eq!(report["turn_timeout_secs"], 10.0);
    // No limit declared.
    assert_eq!(report["max_line_len"], Value::Null);
    assert_eq!(
        (
            &report["passed"],
            &report["failed"],
            &report["must_failed"],
            &report["not_judged"],
            &report["conforms"]
        ),
        (&2.into(), &10.into(), &9.into(), &1.into(), &false.into())
    );
    let checks = report["checks"].as_array().unwrap();
    // The same checks as the summary, in its order, with the same verdicts.
    let summary: Vec<String> = checks
        .iter()
        .map(|c| {
            format!(
                "{} {:<6} {}",
                match (c["passed"] == true, c["not_judged"].is_null()) {
                    (true, _) => "PASS",
                    (false, true) => "FAIL",
                    (false, false) => "SKIP",
                },
                c["level"].as_str().unwrap(),
                c["name"].as_str().unwrap()
            )
        })
        .collect();
    let printed: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("PASS") || l.starts_with("FAIL") || l.starts_with("SKIP"))
        .collect();
    assert_eq!(summary, printed);
    for c in checks {
        assert_eq!(
            keys(c),
            [
                "failure",
                "level",
                "missed",
                "name",
                "not_judged",
                "passed",
                "rule"
            ]
        );
        assert!(c["rule"].as_str().is_some_and(|r| !r.is_empty()));
        // Exactly one of passed, failed, not judged.
        let outcomes = [
            c["passed"] == true,
            !c["failure"].is_null(),
            !c["not_judged"].is_null(),
        ];
        assert_eq!(outcomes.iter().filter(|&&o| o).count(), 1, "{c}");
    }
    let detail = checks
        .iter()
        .find(|c| c["name"] == "not-json-detail")
        .unwrap();
    assert_eq!(
        detail["not_judged"],
        "no command_error beginning \"command stream: \" answered the line that is not JSON on stdout (not-json)"
    );
    let snapshot = checks
        .iter()
        .find(|c| c["name"] == "jobs-snapshot")
        .unwrap();
    assert_eq!(
        snapshot["failure"],
        serde_json::json!({
            "why": "no jobs_snapshot answered request_id \"check-engine-snapshot\"",
            "scenario": "jobs-snapshot",
            "sent": ["{\"command\":\"jobs_snapshot\",\"request_id\":\"check-engine-snapshot\"}"],
            "received": [],
            "received_lines": 0,
            "stderr_tail": ["engine: no answers"],
            "ended": "exited with status 0",
        })
    );
    // The report has every line sent, not the summary's first 20.
    let errors = checks
        .iter()
        .find(|c| c["name"] == "protocol-errors")
        .unwrap();
    assert_eq!(errors["failure"]["sent"].as_array().unwrap().len(), 478);
}

#[test]
fn an_engine_past_the_timeout_is_killed_and_judged() {
    let (code, stdout) = check(&["--timeout", "0.2"], "exec sleep 30");
    assert_eq!(code, 1);
    assert!(
        stdout.contains(
            "FAIL must   jobs-snapshot\n  why: no jobs_snapshot answered request_id \"check-engine-snapshot\" (did not exit within the timeout; killed)\n"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("  engine: did not exit within the timeout; killed\n"));
}

#[test]
fn usage_errors_and_an_engine_that_cannot_start_exit_2() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["check-engine", "--", "/nonexistent/engine"],
            "serve-command: cannot run /nonexistent/engine: No such file or directory\n",
        ),
        (
            &["--revision", "v1", "check-engine", "--", "true"],
            "serve-command: check-engine needs --revision v2: the protocol's first revision is the command half only\n",
        ),
        (
            &["check-engine", "--timeout", "0", "--", "true"],
            "",
        ),
        (&["check-engine"], ""),
    ];
    for &(args, stderr) in cases {
        let out = run(args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        if stderr.is_empty() {
            assert!(err.starts_with("error: "), "{args:?}: {err}");
        } else {
            assert_eq!(err, stderr, "{args:?}");
        }
    }
}

#[test]
fn the_report_that_cannot_be_written_exits_2_before_any_engine_runs() {
    let dir: PathBuf = std::env::temp_dir().join("serve-command-check-engine-no-such-dir");
    let path = dir.join("x").join("report.json");
    let out = run(
        &[
            "check-engine",
            "--report",
            path.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            "echo ran >&2",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.starts_with("serve-command: "), "{err}");
}

// On a terminal (script(1) from util-linux gives the binary one): each
// check as it finishes, its verdict in colour; NO_COLOR and a pipe get the
// same words with none.

/// `check-engine ARGS` run by `script -qec` on a pseudo-terminal, with
/// `env` set: the child, its stdout piped (the terminal's output, CRLF).
fn on_terminal(args: &str, env: &[(&str, &str)]) -> std::process::Child {
    let mut command = std::process::Command::new("script");
    command
        .args(["-qec", &format!("{BIN} check-engine {args}"), "/dev/null"])
        .env_remove("NO_COLOR")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    for (k, v) in env {
        command.env(k, v);
    }
    command.spawn().expect("script(1) runs")
}

#[test]
fn a_terminal_shows_each_check_as_it_finishes_in_colour() {
    use std::io::BufRead;
    // The paced mock's cancel check measures a turn of 1.5 s, then cancels
    // three: turn-ends is shown while it runs.
    let mut child = on_terminal(
        &format!("--check turn-ends --check cancel -- {BIN} mock-engine --delay 300"),
        &[],
    );
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    assert_eq!(first, "\x1b[1m\x1b[32mPASS\x1b[0m must   turn-ends\r\n");
    assert!(child.try_wait().unwrap().is_none(), "shown only at the end");
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(
        rest,
        "\x1b[1m\x1b[32mPASS\x1b[0m must   cancel\r\n2/2 checks pass; every must holds\r\n"
    );
}

#[test]
fn no_color_and_a_pipe_get_no_colour() {
    let child = on_terminal(
        &format!("--check turn-ends -- {BIN} mock-engine"),
        &[("NO_COLOR", "1")],
    );
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "PASS must   turn-ends\r\n1/1 checks pass; every must holds\r\n"
    );
    let out = run(
        &[
            "check-engine",
            "--check",
            "turn-ends",
            "--",
            BIN,
            "mock-engine",
        ],
        b"",
    );
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "PASS must   turn-ends\n1/1 checks pass; every must holds\n"
    );
}
