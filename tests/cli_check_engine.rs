//! `serve-command check-engine`, run as a child process against engines
//! built for the purpose: `mock-engine` (every check holds), and small
//! `sh` engines that each break rules (a banner, a wrong message, answers
//! on stderr, reading on, dying on a long line, a stray `command_error`),
//! each caught and named.
#![cfg(all(feature = "cli", unix))]

use serde_json::Value;
use std::path::PathBuf;

#[path = "support/bin.rs"]
mod bin;

use bin::{run, BIN};

/// Runs `check-engine [--timeout 60] OPTIONS -- sh -c SCRIPT sh BIN` (the script finds the
/// binary as `$1`): its exit code and stdout.
fn check(options: &[&str], script: &str) -> (i32, String) {
    let mut argv = vec!["check-engine"];
    // Room for a debug build on a loaded machine, unless a test says.
    if !options.contains(&"--timeout") {
        argv.extend_from_slice(&["--timeout", "60"]);
    }
    argv.extend_from_slice(options);
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
                || l.starts_with("  why:")
                || l.contains(" checks pass; ")
        })
        .map(|l| format!("{l}\n"))
        .collect()
}

const ALL_PASS: &str = "\
PASS must   protocol-errors
PASS must   serve-refusals
PASS must   not-json
PASS must   blank-lines
PASS must   crlf
PASS must   split-writes
PASS must   no-final-lf
PASS should line-at-limit
PASS must   jobs-snapshot
PASS must   stdout-events
PASS should no-stderr-answers
11/11 checks pass; every must holds
";

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
        r#"FAIL must   protocol-errors
  why: command_error 1 of 382 owed never came: "invalid content: JsonDecodeError((, expected content string or array))"
FAIL must   serve-refusals
  why: command_error 1 of 42 owed never came: "goal text must not be blank"
FAIL must   not-json
  why: command_error 1 of 1 owed never came: "command stream: expected a string key at byte 1"
FAIL must   blank-lines
  why: command_error 1 of 1 owed never came: "goal text must not be blank"
FAIL must   crlf
  why: command_error 1 of 1 owed never came: "invalid content: JsonDecodeError((, expected content string or array))"
FAIL must   split-writes
  why: command_error 1 of 1 owed never came: "goal text must not be blank"
FAIL must   no-final-lf
  why: command_error 1 of 1 owed never came: "invalid content: JsonDecodeError((, expected content string or array))"
FAIL should line-at-limit
  why: no jobs_snapshot answered request_id "check-engine-at-limit"
FAIL must   jobs-snapshot
  why: no jobs_snapshot answered request_id "check-engine-snapshot"
PASS must   stdout-events
PASS should no-stderr-answers
2/11 checks pass; 8 must checks fail
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
PASS must   stdout-events
"#
        ),
        "{stdout}"
    );
    // The 382 lines sent are cut to 20 in the summary.
    assert!(stdout.contains("  sent (383 lines):\n"), "{stdout}");
    assert!(
        stdout.contains("    ... 363 more (all in the report)\n"),
        "{stdout}"
    );
}

#[test]
fn a_banner_on_stdout_fails_stdout_events() {
    let (code, stdout) = check(&[], r#"echo "engine v1.0 ready"; exec "$1" mock-engine"#);
    assert_eq!(code, 1);
    assert_eq!(
        verdicts(&stdout),
        ALL_PASS
            .replace(
                "PASS must   stdout-events\n",
                "FAIL must   stdout-events\n  why: in protocol-errors, stdout line 1 is not an event (expected a JSON value at byte 0): engine v1.0 ready\n"
            )
            .replace("11/11 checks pass; every must holds", "10/11 checks pass; 1 must check fails")
    );
    assert!(stdout.contains("  received ("), "{stdout}");
    assert!(stdout.contains("\n    engine v1.0 ready\n"), "{stdout}");
}

#[test]
fn an_engine_dying_on_a_long_line_fails_line_at_limit() {
    // Dies (says so on stderr, and stops reading) at a line over 1 MB;
    // `cut` spares `awk` holding 64 MiB.
    let (code, stdout) = check(
        &[],
        r#"cut -c1-1000001 | awk 'length($0) > 1000000 { print "panicked: line too long" > "/dev/stderr"; exit 1 } { print; fflush() }' | "$1" mock-engine"#,
    );
    // A `should`: the engine still conforms.
    assert_eq!(code, 0);
    assert_eq!(
        verdicts(&stdout),
        ALL_PASS
            .replace(
                "PASS should line-at-limit\n",
                "FAIL should line-at-limit\n  why: no jobs_snapshot answered request_id \"check-engine-at-limit\"\n"
            )
            .replace("11/11 checks pass; every must holds", "10/11 checks pass; every must holds")
    );
    assert!(
        stdout.contains("  stderr tail (1 line):\n    panicked: line too long\n"),
        "{stdout}"
    );
}

#[test]
fn line_at_limit_sends_a_line_as_long_as_the_limit_given() {
    // The engine of the test above, told its own limit: it reads the line.
    let path = std::env::temp_dir().join(format!(
        "serve-command-check-engine-limit-{}.json",
        std::process::id()
    ));
    let (code, stdout) = check(
        &[
            "--max-line-len",
            "1000000",
            "--report",
            path.to_str().unwrap(),
        ],
        r#"cut -c1-1000001 | awk 'length($0) > 1000000 { print "panicked: line too long" > "/dev/stderr"; exit 1 } { print; fflush() }' | "$1" mock-engine"#,
    );
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!((code, verdicts(&stdout)), (0, ALL_PASS.to_owned()));
    assert_eq!(report["max_line_len"], 1_000_000);
    assert_eq!(
        report["checks"][7]["rule"],
        "a line of exactly 1000000 bytes (the engine's limit, as given; JSON padded with spaces) is read"
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
        "FAIL must   protocol-errors\n{}FAIL must   serve-refusals\n{}FAIL must   not-json\n{}FAIL must   blank-lines\n{}FAIL must   crlf\n{}FAIL must   split-writes\n{}FAIL must   no-final-lf\n{}FAIL should line-at-limit\n{not_owed}FAIL must   jobs-snapshot\n{not_owed}PASS must   stdout-events\nPASS should no-stderr-answers\n2/11 checks pass; 8 must checks fail\n",
        says(content),
        says(blank),
        says("command stream: expected a string key at byte 1"),
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
    let mut expected = ALL_PASS.to_owned();
    for name in ["serve-refusals", "blank-lines", "split-writes"] {
        expected = expected.replace(
            &format!("PASS must   {name}\n"),
            &format!("FAIL must   {name}\n{why}"),
        );
    }
    let expected = expected.replace(
        "11/11 checks pass; every must holds",
        "8/11 checks pass; 3 must checks fail",
    );
    assert_eq!(verdicts(&stdout), expected);
}

#[test]
fn answers_on_stderr_fail_and_are_named() {
    // stdout and stderr swapped: every answer on stderr, the engine's note
    // on stdout.
    let (code, stdout) = check(&[], r#"exec "$1" mock-engine 3>&1 1>&2 2>&3"#);
    assert_eq!(code, 1);
    let verdicts = verdicts(&stdout);
    assert!(
        verdicts.contains(
            "FAIL should no-stderr-answers\n  why: in protocol-errors, the owed command_error \"invalid content: JsonDecodeError((, expected content string or array))\" is missing from stdout, and its message is on stderr\n"
        ),
        "{verdicts}"
    );
    assert!(
        verdicts.contains(
            "FAIL must   stdout-events\n  why: in not-json, stdout line 1 is not an event (expected a JSON value at byte 0): mock-engine: stopping: line 2: expected a string key at byte 1\n"
        ),
        "{verdicts}"
    );
    assert!(
        verdicts.ends_with("0/11 checks pass; 9 must checks fail\n"),
        "{verdicts}"
    );
}

#[test]
fn an_engine_reading_on_after_a_line_that_is_not_json_fails_not_json() {
    // A fresh mock engine per line: nothing stops it. `cut` keeps the
    // shell from reading a 64 MiB line byte by byte, and cuts it.
    let (code, stdout) = check(
        &[],
        r#"cut -c1-100000 | while IFS= read -r line; do printf '%s\n' "$line" | "$1" mock-engine 2>/dev/null; done"#,
    );
    assert_eq!(code, 1);
    assert_eq!(
        verdicts(&stdout),
        r#"PASS must   protocol-errors
PASS must   serve-refusals
FAIL must   not-json
  why: command_error 2 was not owed (1 owed): "goal text must not be blank"
PASS must   blank-lines
PASS must   crlf
PASS must   split-writes
PASS must   no-final-lf
FAIL should line-at-limit
  why: command_error 1 was not owed (0 owed): "command stream: unexpected end of line at byte 100000"
PASS must   jobs-snapshot
PASS must   stdout-events
PASS should no-stderr-answers
9/11 checks pass; 1 must check fails
"#
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
            "passed",
            "revision",
            "timeout_secs"
        ]
    );
    assert_eq!(report["engine"][0], "sh");
    assert_eq!(report["engine"][4], BIN);
    assert_eq!(report["revision"], "v2");
    assert_eq!(report["timeout_secs"], 60.0);
    assert_eq!(report["max_line_len"], 67_108_864);
    assert_eq!(
        (
            &report["passed"],
            &report["failed"],
            &report["must_failed"],
            &report["conforms"]
        ),
        (&2.into(), &9.into(), &8.into(), &false.into())
    );
    let checks = report["checks"].as_array().unwrap();
    // The same checks as the summary, in its order, with the same verdicts.
    let summary: Vec<String> = checks
        .iter()
        .map(|c| {
            format!(
                "{} {:<6} {}",
                if c["passed"] == true { "PASS" } else { "FAIL" },
                c["level"].as_str().unwrap(),
                c["name"].as_str().unwrap()
            )
        })
        .collect();
    let printed: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("PASS") || l.starts_with("FAIL"))
        .collect();
    assert_eq!(summary, printed);
    for c in checks {
        assert_eq!(keys(c), ["failure", "level", "name", "passed", "rule"]);
        assert!(c["rule"].as_str().is_some_and(|r| !r.is_empty()));
        assert_eq!(c["failure"].is_null(), c["passed"] == true);
    }
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
    assert_eq!(errors["failure"]["sent"].as_array().unwrap().len(), 383);
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
