//! `serve-command check-engine`'s conversation checks, run as a child
//! process against engines that each break one promise: a checker is worth
//! the broken engines it fails. Each engine is the paced mock engine
//! (`mock-engine --delay 200`) wrapped by `sh` in line-buffered filters (a
//! `grep`, a `sed`, a `while read` loop) that break just that promise, and
//! each is caught by the one check that holds the engine to it, with a why
//! that names the broken promise. The mock engine itself passes every check,
//! with unsolicited events between its lines too; `--session` and
//! `--junit` are run on the same engines. Two engines that a check
//! fails for the wrong reason, or passes, are kept as ignored tests, each
//! saying what the check gets wrong.
//!
//! `mawk` (Debian's `awk`) reads its input in blocks whatever `fflush()`
//! does with its output, so no filter here is `awk`: it would hold the
//! engine's lines until it exits.
#![cfg(all(feature = "cli", unix))]

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

#[path = "support/bin.rs"]
mod bin;

use bin::BIN;

/// The paced mock engine, as the scripts below run it (`$1` is the binary).
const MOCK: &str = r#""$1" mock-engine --delay 200"#;

/// The paced mock engine whose first turn asks an approval question (its
/// script, written by [`Scratch::new`], is in the engine's `$TMPDIR`).
const ASKING_MOCK: &str = r#""$1" mock-engine --delay 200 --script "$TMPDIR/approval.jsonl""#;

/// A folder of one test's own, the engine's `$TMPDIR` (where its `mktemp`
/// makes its markers and fifos), removed with what is in it when the test
/// ends. It holds the mock engine's script whose first turn asks an
/// approval question.
struct Scratch(PathBuf);

impl Scratch {
    fn new(test: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!(
            "serve-command-check-conversation-{}-{test}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let scratch = Scratch(dir);
        scratch.write("approval.jsonl", "{\"approval\":{}}\n");
        scratch
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    /// Writes `text` to the file `name` in it: its path, as a string.
    fn write(&self, name: &str, text: &str) -> String {
        let path = self.path(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_owned()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs the binary with `args`, its stdin empty, with `$TMPDIR` the
/// scratch folder.
fn run_in(scratch: &Scratch, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env("TMPDIR", &scratch.0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .expect("the binary runs")
}

/// Runs `check-engine --timeout 60 --turn-timeout 2 OPTIONS -- sh -c SCRIPT
/// sh BIN` (the script finds the binary as `$1`): its exit code and stdout.
/// The session's bound leaves room for a debug build on a loaded machine;
/// the turn timeout keeps an engine that owes an answer and is silent
/// from holding a test up.
fn check_with(scratch: &Scratch, options: &[&str], script: &str) -> (i32, String) {
    let mut argv = vec!["check-engine", "--timeout", "60", "--turn-timeout", "2"];
    argv.extend_from_slice(options);
    argv.extend_from_slice(&["--", "sh", "-c", script, "sh", BIN]);
    let out = run_in(scratch, &argv);
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

/// Runs the one check `name` on the engine `script`.
fn check(scratch: &Scratch, name: &str, script: &str) -> (i32, String) {
    check_with(scratch, &["--check", name], script)
}

/// The summary's first two lines: the verdict and its why.
fn first_two(stdout: &str) -> String {
    stdout.lines().take(2).map(|l| format!("{l}\n")).collect()
}

/// Asserts that the one check `name` fails `script`'s engine (exit status
/// 1) with this why; its stdout.
#[track_caller]
fn fails(test: &str, name: &str, script: &str, why: &str) -> String {
    let scratch = Scratch::new(test);
    let (code, stdout) = check(&scratch, name, script);
    assert_eq!(
        (code, first_two(&stdout)),
        (1, format!("FAIL must   {name}\n  why: {why}\n")),
        "{stdout}"
    );
    assert!(
        stdout.ends_with("0/1 checks pass; 1 must check fails\n"),
        "{stdout}"
    );
    stdout
}

/// The why of an engine killed while it owed an answer and said nothing.
const SILENT: &str = "(the engine was silent for 2 s while it owed an answer; killed)";

// turn-ends

#[test]
fn a_turn_that_never_ends_fails_turn_ends() {
    fails(
        "never-ends",
        "turn-ends",
        &format!(r#"{MOCK} | grep --line-buffered -v '"event":"agent_finished"'"#),
        &format!("command 1 (prompt): its turn never ended: no agent_finished, turn_failed or agent_aborted by the end {SILENT}"),
    );
}

#[test]
fn a_turn_that_ends_twice_fails_turn_ends() {
    // Each agent_finished line printed twice.
    fails(
        "ends-twice",
        "turn-ends",
        &format!(r#"{MOCK} | sed -u '/"event":"agent_finished"/p'"#),
        "event 7 (agent_finished) fits no rule of the conversation: agent_finished with no turn running (the turn of command 1 ended at event 6)",
    );
}

#[test]
fn an_event_of_a_turn_after_its_end_fails_turn_ends() {
    fails(
        "late-event",
        "turn-ends",
        &format!(
            r#"{MOCK} | sed -u '/"event":"agent_finished"/a {{"event":"assistant_delta","content":"late"}}'"#
        ),
        "event 7 (assistant_delta) fits no rule of the conversation: assistant_delta with no turn running (the turn of command 1 ended at event 6)",
    );
}

// prompts-queue

#[test]
fn a_prompt_lost_while_a_turn_runs_fails_prompts_queue() {
    // The second prompt line never reaches the engine.
    let stdout = fails(
        "lost-prompt",
        "prompts-queue",
        &format!(
            r#"n=0; while IFS= read -r line; do case $line in *'"command":"prompt"'*) n=$((n + 1)); [ "$n" -eq 2 ] && continue;; esac; printf '%s\n' "$line"; done | {MOCK}"#
        ),
        &format!("prompts were lost: 3 were sent, 2 turns ran (turns are told apart by order, so the last prompt is the one owed): command 3 (prompt): its turn never started: no event of it by the end {SILENT}"),
    );
    // Turns carry no prompt's number: the one that ran second is counted
    // the second prompt's, though it answers the third; the why says so.
    assert!(
        stdout.contains(
            "      9  {\"event\":\"assistant_delta\",\"content\":\"Third: say three\"}  [turn 2]\n"
        ),
        "{stdout}"
    );
}

// cancel

/// What the cancel check says of an engine whose cancelled turns end
/// `agent_finished`, up to the measured numbers.
const CANCEL_FINISHED: &str = "command 3 (cancel): 3 of 3 cancels sent in the first third of the turn's uncancelled length were answered by agent_finished, not agent_aborted (the turn of command 1 ran ";

/// Asserts that the cancel check fails `script`'s engine with a why that
/// begins `why`; that why.
#[track_caller]
fn fails_cancel(test: &str, script: &str, why: &str) -> String {
    let scratch = Scratch::new(test);
    let (code, stdout) = check(&scratch, "cancel", script);
    assert_eq!(code, 1, "{stdout}");
    let said = stdout
        .lines()
        .nth(1)
        .and_then(|l| l.strip_prefix("  why: "))
        .unwrap_or_default();
    assert!(stdout.starts_with("FAIL must   cancel\n"), "{stdout}");
    assert!(said.starts_with(why), "{stdout}");
    said.to_owned()
}

#[test]
fn an_engine_ignoring_cancel_fails_cancel() {
    // Each cancelled turn runs to its end, long after its cancel.
    fails_cancel(
        "ignores-cancel",
        &format!(r#"grep --line-buffered -v '"command":"cancel"' | {MOCK}"#),
        CANCEL_FINISHED,
    );
}

#[test]
fn an_engine_answering_cancel_with_agent_finished_fails_cancel() {
    // Each cancelled turn ends at once, but says agent_finished: no single
    // run tells it from a cancel that crossed the turn's end; three cancels
    // early in a turn whose length was measured do.
    let why = fails_cancel(
        "cancel-finishes",
        &format!(
            r#"{}/tests/engines/cancel-finishes {MOCK}"#,
            env!("CARGO_MANIFEST_DIR")
        ),
        CANCEL_FINISHED,
    );
    assert!(why.ends_with(" ms after each)"), "{why}");
}

#[test]
fn an_engine_silent_after_cancel_fails_cancel() {
    // The input loop marks the cancel as it passes; the output loop writes
    // nothing once it is marked.
    let stdout = fails(
        "silent-after-cancel",
        "cancel",
        &format!(
            r#"d=$(mktemp -d); while IFS= read -r line; do case $line in *'"command":"cancel"'*) : > "$d/cancelled";; esac; printf '%s\n' "$line"; done | {MOCK} | while IFS= read -r line; do [ -e "$d/cancelled" ] || printf '%s\n' "$line"; done"#
        ),
        "command 1 (prompt): its turn never ended: no agent_finished, turn_failed or agent_aborted by the end (the engine was silent since command 3 (cancel): nothing for 2 s while it owed an answer; killed)",
    );
    assert!(
        stdout.contains(
            "  received (2 lines):\n      1  {\"event\":\"agent_step\",\"step\":1}  [turn 1]\n"
        ),
        "{stdout}"
    );
}

#[test]
fn an_engine_frozen_at_a_cancel_fails_cancel_by_name_and_passes_long_prompt() {
    // long-prompt sends its trailing cancel only once its jobs_snapshot is
    // answered: the freeze is the cancel check's to name, on the cancel.
    let scratch = Scratch::new("freezes-at-cancel");
    let engine = format!(
        r#"{}/tests/engines/freezes-at-cancel {MOCK}"#,
        env!("CARGO_MANIFEST_DIR")
    );
    let (code, stdout) = check_with(
        &scratch,
        &["--check", "long-prompt", "--check", "cancel"],
        &engine,
    );
    assert_eq!(
        (code, stdout.lines().take(3).collect::<Vec<_>>()),
        (
            1,
            vec![
                "PASS must   long-prompt",
                "FAIL must   cancel",
                "  why: command 1 (prompt): its turn never ended: no agent_finished, turn_failed or agent_aborted by the end (the engine was silent since command 3 (cancel): nothing for 2 s while it owed an answer; killed)",
            ]
        ),
        "{stdout}"
    );
}

#[test]
fn an_engine_silent_when_the_session_bound_runs_out_is_named_silent_since_its_command() {
    // The session's bound (5 s) runs out before the turn timeout (30 s):
    // the end still names the command the engine fell silent after.
    let scratch = Scratch::new("freezes-at-cancel-bound");
    let engine = format!(
        r#"{}/tests/engines/freezes-at-cancel {MOCK}"#,
        env!("CARGO_MANIFEST_DIR")
    );
    let out = run_in(
        &scratch,
        &[
            "check-engine",
            "--timeout",
            "5",
            "--turn-timeout",
            "30",
            "--check",
            "cancel",
            "--",
            "sh",
            "-c",
            &engine,
            "sh",
            BIN,
        ],
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        (out.status.code(), first_two(&stdout)),
        (
            Some(1),
            "FAIL must   cancel\n  why: command 1 (prompt): its turn never ended: no agent_finished, turn_failed or agent_aborted by the end (the engine ran past the session's bound of 5 s, silent since command 3 (cancel); killed)\n".to_owned()
        ),
        "{stdout}"
    );
}

#[test]
fn a_valid_steer_answered_by_command_error_fails_steer() {
    fails(
        "refuses-steer",
        "steer",
        &format!(r#"{}/tests/engines/refuses-steer {MOCK}"#, env!("CARGO_MANIFEST_DIR")),
        "command 2 (steer) is valid but the engine refused it: \"steer is not supported\" (event 2, command_error)",
    );
}

// cancel-question

#[test]
fn a_cancelled_question_reported_as_a_clean_end_fails_cancel_question() {
    fails(
        "cancel-question",
        "cancel-question",
        &format!(
            r#"{ASKING_MOCK} | sed -u 's/{{"event":"agent_aborted","reason":"interrupted"}}/{{"event":"agent_finished","answer":""}}/'"#
        ),
        "command 2 (cancel): the turn of command 1 waited on its approval question and ended with agent_finished, not agent_aborted",
    );
}

// approval

#[test]
fn a_question_never_resolved_fails_approval() {
    fails(
        "never-resolved",
        "approval",
        &format!(r#"{ASKING_MOCK} | grep --line-buffered -v '"event":"approval_resolved"'"#),
        "command 2 (approval): its question was never resolved: no approval_resolved by the end (the engine exited with status 0)",
    );
}

/// The question resolved under another id, after its approval command: the
/// model says so (`--session` with the same lines does), but the approval
/// check reads every approval_resolved that answers no command as one sent
/// before the approval command, and says the question was resolved "before
/// its approval command was sent", which is not what happened.
#[test]
fn a_question_resolved_under_another_id_fails_approval() {
    fails(
        "other-id",
        "approval",
        &format!(
            r#"{ASKING_MOCK} | sed -u '/"event":"approval_resolved"/s/"id":"approval-1"/"id":"approval-2"/'"#
        ),
        "event 3 (approval_resolved) fits no rule of the conversation: approval_resolved for \"approval-2\", which no unsettled approval_requested asked",
    );
}

// steer, command-steer

#[test]
fn prompt_steers_never_answered_fail_steer() {
    fails(
        "steer",
        "steer",
        &format!(r#"{MOCK} | grep --line-buffered -v '"event":"steer_'"#),
        &format!("command 2 (steer): never answered: no steer_applied or steer_dropped with submission_id \"check-steer-1\" by the end {SILENT}"),
    );
}

#[test]
fn command_steers_never_answered_fail_command_steer() {
    fails(
        "command-steer",
        "command-steer",
        &format!(
            r#"{MOCK} | grep --line-buffered -v '"event":"steer_applied","kind":"command"'"#
        ),
        &format!("command 2 (steer): never answered: no steer_applied (kind command) with submission_id \"check-steer-2\" by the end {SILENT}"),
    );
}

// goal, compact

#[test]
fn goals_never_answered_fail_goal() {
    fails(
        "goal",
        "goal",
        &format!(r#"{MOCK} | grep --line-buffered -v '"event":"goal_updated"'"#),
        "command 1 (goal): never answered: no goal_updated by the end (the engine was silent since command 1 (goal): nothing for 2 s while it owed an answer; killed)",
    );
}

#[test]
fn a_compaction_that_never_ends_fails_compact() {
    fails(
        "compact",
        "compact",
        &format!(r#"{MOCK} | grep --line-buffered -v '"event":"compaction_finished"'"#),
        &format!("command 2 (compact): its compaction never ended: no compaction_finished or compaction_failed by the end {SILENT}"),
    );
}

// requests

/// Every reply's request_id rewritten. The first caught is the
/// jobs_snapshot's, event 2 or 3: where it falls among the turn's events
/// depends on timing.
#[test]
fn a_reply_with_another_request_id_fails_requests() {
    let scratch = Scratch::new("request-id");
    let (code, stdout) = check(
        &scratch,
        "requests",
        &format!(r#"{MOCK} | sed -u 's/"request_id":"/"request_id":"x-/'"#),
    );
    let why = |n: u32| {
        format!("FAIL must   requests\n  why: event {n} (jobs_snapshot) fits no rule of the conversation: jobs_snapshot answers no jobs_snapshot command: none unanswered with request_id \"x-check-jobs-1\"\n")
    };
    assert_eq!(code, 1, "{stdout}");
    let first = first_two(&stdout);
    assert!(first == why(2) || first == why(3), "{stdout}");
    assert!(
        stdout.ends_with("0/1 checks pass; 1 must check fails\n"),
        "{stdout}"
    );
}

// end-of-input

/// At the end of its input, the engine exits, with status 0, as soon as
/// its first turn has begun: the mock reads a fifo that never ends and is
/// killed, so the work queued never runs. (Killed once its first event is
/// out, not at once: the verdict is then the same whatever the timing.)
const EXITS_AT_END_OF_INPUT: &str = r#"d=$(mktemp -d); mkfifo "$d/in"
{ "$1" mock-engine --delay 200 < "$d/in" & echo $! > "$d/pid"; wait; } | while IFS= read -r line; do printf '%s\n' "$line"; : > "$d/started"; done &
exec 3>"$d/in"; cat >&3
until [ -e "$d/started" ]; do sleep 0.01; done
kill "$(cat "$d/pid")"; wait"#;

#[test]
fn an_engine_exiting_before_its_queued_work_fails_end_of_input() {
    fails(
        "end-of-input",
        "end-of-input",
        EXITS_AT_END_OF_INPUT,
        "command 1 (prompt): its turn never ended: no agent_finished, turn_failed or agent_aborted by the end (the engine exited with status 0)",
    );
}

// The baseline: engines that keep every promise.

const LINE_CHECKS_PASS: &str = "\
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
";

#[test]
fn the_paced_mock_asking_approval_passes_every_check() {
    let scratch = Scratch::new("baseline");
    let (code, stdout) = check_with(&scratch, &[], ASKING_MOCK);
    assert_eq!(
        (code, stdout.as_str()),
        (
            0,
            format!(
                "{LINE_CHECKS_PASS}\
PASS must   turn-ends
PASS must   prompts-queue
PASS must   cancel
PASS must   cancel-question
PASS must   approval
PASS must   steer
PASS must   command-steer
PASS must   goal
PASS must   compact
PASS must   requests
PASS must   end-of-input
SKIP must   prediction
  why: not judged: the engine never predicted after a finished idle turn (no prediction_result within 2 s of its end)
24/25 checks pass; every must holds; 1 not judged
"
            )
            .as_str()
        )
    );
}

#[test]
fn unsolicited_background_notices_pass_every_must() {
    // One before any command, one after each line: idle and mid-turn.
    let scratch = Scratch::new("notices");
    let (code, stdout) = check_with(
        &scratch,
        &[],
        &format!(
            r#"echo '{{"event":"background_notice","content":"engine ready"}}'; {MOCK} | sed -u 'a {{"event":"background_notice","content":"indexing the repository"}}'"#
        ),
    );
    assert_eq!(
        (code, stdout.as_str()),
        (
            0,
            format!(
                "{LINE_CHECKS_PASS}\
PASS must   turn-ends
PASS must   prompts-queue
PASS must   cancel
SKIP must   cancel-question
  why: not judged: the engine asked no approval question
SKIP must   approval
  why: not judged: the engine asked no approval question
PASS must   steer
PASS must   command-steer
PASS must   goal
PASS must   compact
PASS must   requests
PASS must   end-of-input
SKIP must   prediction
  why: not judged: the engine never predicted after a finished idle turn (no prediction_result within 2 s of its end)
22/25 checks pass; every must holds; 3 not judged
"
            )
            .as_str()
        )
    );
}

// --session

/// A prompt and a goal set during its turn.
const SESSION: &str = concat!(
    "# a goal set during a turn\n",
    r#"{"send":{"command":"prompt","content":"Say hello"}}"#,
    "\n",
    r#"{"after":{"started":1},"send":{"command":"goal","action":"set","text":"be brief"}}"#,
    "\n",
);

#[test]
fn a_session_file_passes_the_mock_and_fails_a_turn_that_never_ends() {
    let scratch = Scratch::new("session");
    let file = scratch.write("goal.jsonl", SESSION);
    let (code, stdout) = check_with(&scratch, &["--session", &file], MOCK);
    assert_eq!(
        (code, stdout),
        (
            0,
            format!("PASS must   {file}\n1/1 checks pass; every must holds\n")
        )
    );
    let (code, stdout) = check_with(
        &scratch,
        &["--session", &file],
        &format!(r#"{MOCK} | grep --line-buffered -v '"event":"agent_finished"'"#),
    );
    assert_eq!(
        (code, first_two(&stdout)),
        (
            1,
            format!("FAIL must   {file}\n  why: command 1 (prompt): its turn never ended: no agent_finished, turn_failed or agent_aborted by the end {SILENT}\n")
        ),
        "{stdout}"
    );
    assert!(
        stdout.ends_with("0/1 checks pass; 1 must check fails\n"),
        "{stdout}"
    );
}

#[test]
fn a_point_never_reached_is_shown_on_a_pass_too() {
    // The unpaced mock's turn has one step: the cancel waiting for its
    // second is sent at the turn's end, and the session still passes.
    let scratch = Scratch::new("session-missed");
    let file = scratch.write(
        "missed.jsonl",
        "{\"send\":{\"command\":\"prompt\",\"content\":\"hi\"}}\n{\"after\":{\"step\":2},\"send\":{\"command\":\"cancel\"}}\n",
    );
    let (code, stdout) = check_with(&scratch, &["--session", &file], r#""$1" mock-engine"#);
    assert_eq!(
        (code, stdout),
        (
            0,
            format!("PASS must   {file}\n  missed: step 2: the turn of command 1 ended after 1 agent_step, before step 2; sent then\n1/1 checks pass; every must holds\n")
        )
    );
}

#[test]
fn a_session_folder_runs_each_jsonl_file_in_sorted_order() {
    let scratch = Scratch::new("session-folder");
    std::fs::create_dir(scratch.path("sessions")).unwrap();
    let b = scratch.write("sessions/b.jsonl", SESSION);
    let a = scratch.write(
        "sessions/a.jsonl",
        "{\"send\":{\"command\":\"jobs_snapshot\",\"request_id\":\"r-1\"}}\n",
    );
    scratch.write("sessions/notes.txt", "not a session\n");
    let folder = scratch.path("sessions");
    let (code, stdout) = check_with(&scratch, &["--session", folder.to_str().unwrap()], MOCK);
    assert_eq!(
        (code, stdout),
        (
            0,
            format!("PASS must   {a}\nPASS must   {b}\n2/2 checks pass; every must holds\n")
        )
    );
}

#[test]
fn usage_errors_and_an_engine_that_cannot_start_exit_2() {
    let scratch = Scratch::new("usage");
    let bad = scratch.write(
        "bad.jsonl",
        concat!(
            r#"{"send":{"command":"prompt","content":"Say hello"}}"#,
            "\n",
            r#"{"after":{"ended":2},"send":{"command":"cancel"}}"#,
            "\n",
        ),
    );
    let good = scratch.write("good.jsonl", SESSION);
    // Read before any engine runs: this one would leave a mark.
    let marks = r#"touch "$TMPDIR/ran""#;
    let cases: Vec<(Vec<&str>, String)> = vec![
        (
            vec!["check-engine", "--session", &good, &bad, "--", "sh", "-c", marks],
            format!("serve-command: {bad}:2: \"after\": \"ended\" names command 2, but only 1 was sent before this line\n"),
        ),
        (
            vec!["check-engine", "--check", "nope", "--", "sh", "-c", marks],
            "serve-command: --check nope: no such check (the checks: stdout-events, no-stderr-answers, protocol-errors, serve-refusals, not-json, not-json-detail, blank-lines, crlf, split-writes, no-final-lf, long-prompt, line-at-limit, jobs-snapshot, turn-ends, prompts-queue, cancel, cancel-question, approval, steer, command-steer, goal, compact, requests, end-of-input, prediction)\n".to_owned(),
        ),
        (
            vec!["check-engine", "--check", "turn-ends", "--", "/nonexistent/engine"],
            "serve-command: cannot run /nonexistent/engine: No such file or directory\n".to_owned(),
        ),
        (
            vec!["check-engine", "--session", &good, "--", "/nonexistent/engine"],
            "serve-command: cannot run /nonexistent/engine: No such file or directory\n".to_owned(),
        ),
    ];
    for (args, stderr) in cases {
        let out = run_in(&scratch, &args);
        assert_eq!(
            (
                out.status.code(),
                String::from_utf8(out.stdout).unwrap(),
                String::from_utf8(out.stderr).unwrap()
            ),
            (Some(2), String::new(), stderr),
            "{args:?}"
        );
    }
    assert!(!scratch.path("ran").exists());
}

// --junit

#[test]
fn junit_holds_the_failure_of_an_engine_ignoring_cancel() {
    let scratch = Scratch::new("junit");
    let xml = scratch.path("check.xml");
    let (code, stdout) = check_with(
        &scratch,
        &[
            "--check",
            "cancel",
            "--check",
            "turn-ends",
            "--junit",
            xml.to_str().unwrap(),
        ],
        &format!(r#"grep --line-buffered -v '"command":"cancel"' | {MOCK}"#),
    );
    assert_eq!(
        (code, stdout.lines().take(2).collect::<Vec<_>>().join("\n")),
        (1, "PASS must   turn-ends\nFAIL must   cancel".to_owned()),
        "{stdout}"
    );
    let why = stdout
        .lines()
        .nth(2)
        .and_then(|l| l.strip_prefix("  why: "))
        .unwrap();
    assert!(why.starts_with(CANCEL_FINISHED), "{stdout}");
    let why = why.replace('\'', "&apos;");
    let xml = std::fs::read_to_string(&xml).unwrap();
    assert!(
        xml.starts_with(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite name=\"check-engine\" tests=\"2\" failures=\"1\" skipped=\"0\">\n    <testcase classname=\"check-engine.must\" name=\"turn-ends\"></testcase>\n"
        ),
        "{xml}"
    );
    assert_eq!(xml.matches("<failure message=").count(), 1, "{xml}");
    assert!(
        xml.contains(&format!(
            "    <testcase classname=\"check-engine.must\" name=\"cancel\">\n      <failure message=\"{why}\">  why: {why}\n"
        )),
        "{xml}"
    );
    assert!(xml.ends_with("</testsuite>\n</testsuites>\n"), "{xml}");
    assert_eq!(xml.matches("<testcase ").count(), 2, "{xml}");
}
