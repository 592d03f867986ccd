//! `serve-command fuzz-engine`: a campaign finds each planted fault in an
//! engine (the mock engine behind a filter that breaks one promise),
//! shrinks it to one command line, and writes a reproducer that
//! `check-engine --session` fails; against the mock engine itself it finds
//! nothing. `--sessions` is a count, so load cannot change what is run.
#![cfg(all(feature = "cli", unix))]

#[path = "support/bin.rs"]
mod bin;

use bin::{run, BIN};
use std::path::PathBuf;

/// A file in a fresh temporary folder of this test's.
fn temp(test: &str, name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("serve-command-fuzz-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// `fuzz-engine --seed 1 --sessions 50 --repro REPRO -- sh -c 'mock-engine | FILTER'`:
/// its exit code, stdout and the reproducer written.
fn fuzz(test: &str, filter: &str) -> (i32, String, String, PathBuf) {
    let repro = temp(test, "repro.jsonl");
    let script = format!("\"$1\" mock-engine | {filter}");
    let out = run(
        &[
            "fuzz-engine",
            "--seed",
            "1",
            "--sessions",
            "50",
            "--turn-timeout",
            "0.3",
            "--repro",
            repro.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            &script,
            "sh",
            BIN,
        ],
        b"",
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "fuzz-engine: seed 1\n"
    );
    let written = std::fs::read_to_string(&repro).unwrap_or_default();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        written,
        repro,
    )
}

/// `check-engine --session REPRO` on the same engine fails the session.
fn rerun_fails(repro: &std::path::Path, filter: &str, why: &str) {
    let script = format!("\"$1\" mock-engine | {filter}");
    let out = run(
        &[
            "check-engine",
            "--turn-timeout",
            "0.3",
            "--session",
            repro.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            &script,
            "sh",
            BIN,
        ],
        b"",
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let head: Vec<&str> = stdout.lines().take(2).collect();
    assert_eq!(
        head,
        [
            format!("FAIL must   {}", repro.display()),
            format!("  why: {why}")
        ]
    );
}

/// The first lines of a finding: what, and how far it shrank.
fn head(stdout: &str, lines: usize) -> String {
    stdout
        .lines()
        .take(lines)
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn a_dropped_terminal_event_is_found_and_shrunk_to_one_prompt() {
    let filter = r#"grep --line-buffered -v '"event":"agent_finished"'"#;
    let (code, stdout, repro, path) = fuzz("dropped", filter);
    assert_eq!(code, 1, "{stdout}");
    assert_eq!(
        head(&stdout, 2),
        "FOUND: command 1 (prompt): its turn never ended: no agent_finished, turn_failed or agent_aborted by the end (the engine was silent for 0.3 s while it owed an answer; killed)\n\
         shrunk from 3 to 1 command lines in 7 runs; a rerun fails the same way\n"
    );
    assert_eq!(
        repro,
        "{\"send\":{\"command\":\"prompt\",\"content\":\"Say hi\"}}\n"
    );
    assert!(stdout.contains(&format!(
        "rerun it: serve-command check-engine --turn-timeout 0.3 --timeout 30 --session {} -- sh -c '\"$1\" mock-engine | grep --line-buffered -v '\\''\"event\":\"agent_finished\"'\\''' sh {BIN}\n",
        path.display()
    )), "{stdout}");
    rerun_fails(&path, filter, "command 1 (prompt): its turn never ended: no agent_finished, turn_failed or agent_aborted by the end (the engine was silent for 0.3 s while it owed an answer; killed)");
}

#[test]
fn an_event_after_its_turns_end_is_found_and_shrunk_to_one_prompt() {
    let filter = r#"sed -u 's/^{"event":"agent_finished".*$/&\n{"event":"assistant_delta","content":"late"}/'"#;
    let (code, stdout, repro, path) = fuzz("late", filter);
    assert_eq!(code, 1, "{stdout}");
    assert_eq!(
        head(&stdout, 2),
        "FOUND: event 7 (assistant_delta) fits no rule of the conversation: assistant_delta with no turn running (the turn of command 1 ended at event 6)\n\
         shrunk from 3 to 1 command lines in 7 runs; a rerun fails the same way\n"
    );
    assert_eq!(
        repro,
        "{\"send\":{\"command\":\"prompt\",\"content\":\"Say hi\"}}\n"
    );
    rerun_fails(&path, filter, "event 7 (assistant_delta) fits no rule of the conversation: assistant_delta with no turn running (the turn of command 1 ended at event 6)");
}

#[test]
fn a_reply_with_another_request_id_is_found_and_shrunk_to_one_request() {
    let filter = r#"sed -u 's/"request_id":"/"request_id":"x-/'"#;
    let (code, stdout, repro, path) = fuzz("request-id", filter);
    assert_eq!(code, 1, "{stdout}");
    assert_eq!(
        head(&stdout, 2),
        "FOUND: event 1 (jobs_snapshot) fits no rule of the conversation: jobs_snapshot answers no jobs_snapshot command: none unanswered with request_id \"x-req-1\"\n\
         shrunk from 3 to 1 command lines in 13 runs; a rerun fails the same way\n"
    );
    assert_eq!(
        repro,
        "{\"send\":{\"command\":\"jobs_snapshot\",\"request_id\":\"req-1\"}}\n"
    );
    rerun_fails(&path, filter, "event 1 (jobs_snapshot) fits no rule of the conversation: jobs_snapshot answers no jobs_snapshot command: none unanswered with request_id \"x-req-1\"");
}

#[test]
fn the_mock_engine_gives_no_finding() {
    let repro = temp("none", "repro.jsonl");
    let out = run(
        &[
            "fuzz-engine",
            "--seed",
            "1",
            "--sessions",
            "40",
            "--repro",
            repro.to_str().unwrap(),
            "--",
            BIN,
            "mock-engine",
        ],
        b"",
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.starts_with("no finding: 40 sessions in "),
        "{stdout}"
    );
    assert!(!repro.exists());
}

/// The broken test engine `tests/engines/NAME`, wrapping the paced mock
/// engine: `fuzz-engine --seed 1 OPTIONS -- NAME BIN mock-engine --delay 300`
/// (or the paced mock itself, with no name): its exit code and stdout.
fn fuzz_paced(test: &str, name: Option<&str>, options: &[&str]) -> (i32, String) {
    let repro = temp(test, "repro.jsonl");
    let wrapper = name.map(|n| format!("{}/tests/engines/{n}", env!("CARGO_MANIFEST_DIR")));
    let mut argv = vec![
        "fuzz-engine",
        "--seed",
        "1",
        "--repro",
        repro.to_str().unwrap(),
    ];
    argv.extend_from_slice(options);
    argv.push("--");
    argv.extend(wrapper.as_deref());
    argv.extend_from_slice(&[BIN, "mock-engine", "--delay", "300"]);
    let out = run(&argv, b"");
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
    )
}

#[test]
fn an_engine_answering_cancel_with_agent_finished_is_found() {
    let (code, stdout) = fuzz_paced(
        "cancel-finishes",
        Some("cancel-finishes"),
        &["--sessions", "60"],
    );
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.starts_with("FOUND: 3 of 3 cancels sent in the first third of the turn's uncancelled length were answered by agent_finished, not agent_aborted (the engine's turns ran "),
        "{stdout}"
    );
    assert!(
        stdout.contains("judged over the campaign's cancels, not shrunk: the last session that showed one; a rerun fails the same way\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("judge it: serve-command check-engine --check cancel -- "),
        "{stdout}"
    );
}

#[test]
fn the_paced_mock_engine_gives_no_cancel_finding() {
    // Its cancels land (agent_aborted): as many sessions as find the
    // broken engine above, and more.
    let (code, stdout) = fuzz_paced("paced", None, &["--sessions", "20"]);
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("cancel → agent_aborted"), "{stdout}");
}

#[test]
fn time_bounds_the_whole_run_shrinking_included() {
    // An engine whose every turn is silent: each session waits out its
    // turn timeout, and shrinking would take 300 runs of them.
    let start = std::time::Instant::now();
    let repro = temp("time", "repro.jsonl");
    let out = run(
        &[
            "fuzz-engine",
            "--seed",
            "1",
            "--time",
            "4",
            "--turn-timeout",
            "1",
            "--repro",
            repro.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            r#""$1" mock-engine | grep --line-buffered -v '"event":"agent_finished"'"#,
            "sh",
            BIN,
        ],
        b"",
    );
    let took = start.elapsed();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        took < std::time::Duration::from_secs(7),
        "{took:?}\n{stdout}"
    );
}

#[test]
fn usage_errors_and_an_engine_that_cannot_start_exit_2() {
    let table: &[(&[&str], &str)] = &[
        (&["fuzz-engine", "--sessions", "x", "--", "true"], "error: invalid value 'x' for '--sessions <N>'"),
        (&["fuzz-engine", "--sessions", "1", "--time", "1", "--", "true"], "error: the argument '--sessions <N>' cannot be used with '--time <SECS>'"),
        (&["fuzz-engine", "--seed", "1", "--sessions", "1", "--", "/nonexistent/engine"], "fuzz-engine: seed 1\nserve-command: cannot run /nonexistent/engine: No such file or directory"),
        (&["--revision", "v1", "fuzz-engine", "--", "true"], "serve-command: fuzz-engine needs --revision v2: the protocol's first revision has no events"),
    ];
    for (args, want) in table {
        let out = run(args, b"");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.starts_with(want), "{args:?}: {stderr}");
    }
}
