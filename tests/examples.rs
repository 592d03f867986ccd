//! The shipped example programs, run as a user runs them: the README's
//! engine on tokio's loop answers as on the std loop, byte for byte; the
//! engine around a model call answers every line as the controller's model
//! says; the line-level controller over tokio prints what the std one
//! prints, against the canned engines and against `serve-command
//! mock-engine`; the README's smallest engine and controller work
//! together; the controller on `v2::serve::Controller` runs clean against
//! the mock engine and one that answers twice, and against each engine of
//! `tests/engines/` exits 1 within seconds with the cause on stderr (as
//! .ci/run checks it too).
#![cfg(feature = "tokio")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

const SESSION: &[u8] = include_bytes!("../examples/session.jsonl");

/// The directory of the example binaries. `cargo test` builds them beside
/// this test's own (`target/debug/examples/`, next to `deps/`), but not
/// when it runs this file alone (`--test examples`), and then a binary may
/// be missing or older than its source: so the examples are built here
/// first, once, with this test's features (a no-op when they are fresh).
fn examples_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let exe = std::env::current_exe().expect("the test's own path");
        // target/<profile>/deps/examples-HASH
        let profile_dir = exe
            .parent()
            .and_then(Path::parent)
            .expect("target/<profile>/");
        let target_dir = profile_dir.parent().expect("target/");
        let features: Vec<&str> = [
            ("tokio", cfg!(feature = "tokio")),
            ("cli", cfg!(feature = "cli")),
            ("workbench", cfg!(feature = "workbench")),
            ("proptest", cfg!(feature = "proptest")),
            ("arbitrary", cfg!(feature = "arbitrary")),
            ("avx2", cfg!(feature = "avx2")),
        ]
        .into_iter()
        .filter_map(|(name, on)| on.then_some(name))
        .collect();
        let mut cargo = Command::new(env!("CARGO"));
        cargo
            .args(["build", "--examples", "--no-default-features", "--features"])
            .arg(features.join(","))
            .arg("--manifest-path")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"))
            .arg("--target-dir")
            .arg(target_dir);
        if profile_dir
            .file_name()
            .is_some_and(|name| name == "release")
        {
            cargo.arg("--release");
        }
        let out = cargo.output().expect("cargo runs");
        assert!(
            out.status.success(),
            "cargo build --examples:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        profile_dir.join("examples")
    })
}

/// An example's binary.
fn example(name: &str) -> PathBuf {
    examples_dir().join(format!("{name}{}", std::env::consts::EXE_SUFFIX))
}

/// Runs `program args` with `stdin` and the environment `env`, to
/// completion, whatever its exit status.
fn output(program: &Path, args: &[&Path], stdin: &[u8], env: &[(&str, &str)]) -> Output {
    let mut child = Command::new(program)
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{}: {e}", program.display()));
    let mut input = child.stdin.take().unwrap();
    let stdin = stdin.to_vec();
    let writer = std::thread::spawn(move || std::io::Write::write_all(&mut input, &stdin));
    let out = child.wait_with_output().unwrap();
    // An engine that stops reading early may close the pipe first.
    let _ = writer.join().unwrap();
    out
}

/// Runs `program args` with `stdin`, to completion: it must succeed.
#[track_caller]
fn run(program: &Path, args: &[&Path], stdin: &[u8]) -> Output {
    let out = output(program, args, stdin, &[]);
    assert!(
        out.status.success(),
        "{}: {:?}\n{}",
        program.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The first ```` ```text ```` block of `text` after `after`.
fn text_block_after<'a>(text: &'a str, after: &str) -> &'a str {
    let rest = &text[text.find(after).expect(after)..];
    let rest = &rest[rest.find("```text\n").expect("a ```text block") + 8..];
    &rest[..rest.find("```\n").expect("an unclosed ```text block")]
}

/// The engine around a model call runs its turns in the background, so
/// what crosses when depends on timing: every event it writes for the
/// session answers what the controller's model of the serve loop says, and
/// nothing is left owed.
#[test]
fn the_engine_around_a_model_call_answers_every_line_of_the_session() {
    use serve_command::v2::serve::Conversation;
    for _ in 0..3 {
        let out = run(&example("engine"), &[], SESSION);
        let mut model = Conversation::new();
        // The session was written before any answer was read.
        for line in SESSION.split_inclusive(|&b| b == b'\n') {
            model.command(line);
        }
        let stdout = String::from_utf8(out.stdout).unwrap();
        for line in stdout.lines() {
            let attribution = model.event(line.as_bytes());
            assert_eq!(attribution.violation, None, "{line}");
        }
        assert!(model.owed().is_empty(), "{:?}\n{stdout}", model.owed());
        assert_eq!(
            String::from_utf8(out.stderr).unwrap(),
            "engine: stopping: line 16: unterminated string at byte 30\n"
        );
    }
}

/// The README's engine on tokio's loop writes what the README's engine
/// writes, byte for byte.
#[test]
fn the_tokio_engine_answers_the_session_as_the_readme_engine() {
    let std = run(&example("minimal_engine"), &[], SESSION);
    let tokio = run(&example("tokio_engine"), &[], SESSION);
    assert_eq!(
        String::from_utf8(tokio.stdout).unwrap(),
        String::from_utf8(std.stdout).unwrap()
    );
    assert_eq!(
        String::from_utf8(tokio.stderr).unwrap(),
        String::from_utf8(std.stderr).unwrap()
    );
}

/// What `examples/event_reader.rs` prints for the canned engines' answers:
/// the steer finds no turn (the canned one has ended), the approval no
/// question, the cancel no work.
const CONTROLLER_ON_ENGINE: &str = "\
agent_finished
steer_dropped
steer_applied
jobs_snapshot
job_stop_result
goal_updated
goal_updated
";

/// Each line-level controller, std and tokio, runs its session against
/// each canned engine, std and tokio, and prints the same lines.
#[test]
fn both_line_level_controllers_print_the_same_for_both_engines() {
    for controller in ["event_reader", "tokio_controller"] {
        for engine in ["minimal_engine", "tokio_engine"] {
            let out = run(&example(controller), &[&example(engine)], b"");
            assert_eq!(
                (
                    String::from_utf8(out.stdout).unwrap(),
                    String::from_utf8(out.stderr).unwrap()
                ),
                (CONTROLLER_ON_ENGINE.to_owned(), String::new()),
                "{controller} on {engine}"
            );
        }
    }
}

/// Against `serve-command mock-engine`, which answers as upstream's serve
/// loop does (a turn streams its deltas; an idle engine drops a prompt
/// steer and has nothing to cancel).
#[cfg(feature = "cli")]
#[test]
fn both_line_level_controllers_run_against_the_mock_engine() {
    let mock = Path::new(env!("CARGO_BIN_EXE_serve-command"));
    for controller in ["event_reader", "tokio_controller"] {
        let out = run(&example(controller), &[mock, Path::new("mock-engine")], b"");
        assert_eq!(
            (
                String::from_utf8(out.stdout).unwrap(),
                String::from_utf8(out.stderr).unwrap()
            ),
            (
                "\
agent_step
assistant_delta
assistant_delta
assistant: You asked: Why does this test fail?
usage
agent_finished
steer_dropped
steer_applied
jobs_snapshot
job_stop_result
goal_updated
goal_updated
"
                .to_owned(),
                String::new()
            ),
            "{controller}"
        );
    }
}

/// The README's smallest controller, on the README's engine and on the
/// same over tokio.
#[test]
fn the_minimal_controller_prints_each_engines_answers() {
    for (engine, printed) in [
        (
            "minimal_engine",
            "answer: Why does this test fail?\njobs_snapshot\n",
        ),
        (
            "tokio_engine",
            "answer: Why does this test fail?\njobs_snapshot\n",
        ),
    ] {
        let out = run(&example("minimal_controller"), &[&example(engine)], b"");
        assert_eq!(String::from_utf8(out.stdout).unwrap(), printed, "{engine}");
        assert_eq!(String::from_utf8(out.stderr).unwrap(), "", "{engine}");
    }
}

/// The README's engine, on the sample session: each prompt's answer, what
/// the serve loop answers for the rest (the steers, the job commands, the
/// goals, a compaction it cannot do), and every refused line's
/// `command_error`, stopping at the line that is not JSON (the last
/// `cancel` goes unanswered); the README shows it (.ci/deps checks it too,
/// from a fresh target dir).
#[test]
fn the_minimal_engine_answers_the_session_as_the_readme_shows() {
    let out = run(&example("minimal_engine"), &[], SESSION);
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        stdout,
        text_block_after(include_str!("../README.md"), "## Set up")
    );
    assert_eq!(
        stdout,
        r#"{"event":"agent_finished","answer":"Why does this test fail?"}
{"event":"steer_dropped","content":"Also keep the public API unchanged"}
{"event":"steer_applied","kind":"command","content":"/diff","submission_id":"sub-2"}
{"event":"jobs_snapshot","request_id":"req-1","jobs":[]}
{"event":"job_stop_result","request_id":"req-2","generation":"g-1","job_id":"job-4","outcome":"not_found"}
{"event":"goal_updated","goal":"cargo test passes"}
{"event":"command_error","error":"goal text must not be blank"}
{"event":"command_error","error":"expected a boolean \"allow\" field"}
{"event":"command_error","error":"unknown steer kind: notice"}
{"event":"agent_finished","answer":"Now explain the change\nin two lines"}
{"event":"compaction_failed","error":"this engine does not compact"}
{"event":"goal_updated","goal":null}
{"event":"command_error","error":"command stream: unterminated string at byte 30"}
"#
    );
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "engine: stopping: line 16: unterminated string at byte 30\n"
    );
}

/// Every engine the crate ships holds to every check `check-engine` makes
/// (.ci/run also runs the binary's `check-engine` on each).
#[cfg(feature = "workbench")]
#[test]
fn every_shipped_engine_passes_every_check() {
    use serve_command::workbench::CheckEngine;
    for engine in ["engine", "tokio_engine", "minimal_engine"] {
        let report = CheckEngine::new()
            // Room for a debug build on a loaded machine.
            .timeout(std::time::Duration::from_secs(60))
            .run(&mut Command::new(example(engine)))
            .unwrap();
        assert_eq!(report.failed(), 0, "{engine}:\n{report}");
    }
}

/// The controller on the serve loop's model (`v2::serve::Controller`),
/// against `serve-command mock-engine`: each call returns what answers
/// its command, typed.
#[cfg(feature = "cli")]
#[test]
fn the_conversation_controller_runs_against_the_mock_engine() {
    let mock = Path::new(env!("CARGO_BIN_EXE_serve-command"));
    let out = run(
        &example("conversation"),
        &[mock, Path::new("mock-engine")],
        b"",
    );
    assert_eq!(
        (
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
            out.status.code()
        ),
        (
            "\
the turn of command line 1: Finished(\"You asked: What is it?\"), Some(Usage { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5, prompt_cache_hit_tokens: 0, prompt_cache_miss_tokens: 3 })
steer: Steer(Dropped)
jobs: []
goal: Some(\"tests pass\")
the turn of command line 5: Finished(\"You asked: Run the tests.\")
prediction: None
refused: Some(NotACommand(UnknownCommand(\"nap\")))
answering nothing: []
exit: Some(0)
"
            .to_owned(),
            String::new(),
            Some(0)
        )
    );
}

/// The same on tokio (`v2::serve::TokioController`): a snapshot awaited
/// while the turn it crossed is still in flight.
#[cfg(feature = "cli")]
#[test]
fn the_tokio_conversation_controller_runs_against_the_mock_engine() {
    let mock = Path::new(env!("CARGO_BIN_EXE_serve-command"));
    let out = run(
        &example("tokio_conversation"),
        &[mock, Path::new("mock-engine")],
        b"",
    );
    assert_eq!(
        (
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
            out.status.code()
        ),
        (
            "\
jobs: []
the turn of command line 1: Finished(\"You asked: What is it?\"), Some(Usage { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5, prompt_cache_hit_tokens: 0, prompt_cache_miss_tokens: 3 })
steer: Steer(Dropped)
goal: Some(\"tests pass\")
the turn of command line 5: Finished(\"You asked: Run the tests.\")
prediction: None
refused: Some(NotACommand(UnknownCommand(\"nap\")))
answering nothing: []
exit: Some(0)
"
            .to_owned(),
            String::new(),
            Some(0)
        )
    );
}

/// The engine around a model call applies a prompt steer sent while its
/// turn streams at a step boundary (`agent_step`, then `steer_applied`,
/// then the steer's words), sent once the turn's first step is out, not
/// after a fixed time.
#[cfg(feature = "workbench")]
#[test]
fn the_engine_around_a_model_call_applies_a_steer_sent_mid_turn() {
    use serve_command::workbench::{Runner, Session};
    // Twenty words, 50 ms each: a second for the steer to land in, on a
    // loaded machine too.
    let session = Session::parse(concat!(
        "{\"send\":{\"command\":\"prompt\",\"content\":\"one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty\"}}\n",
        "{\"after\":{\"step\":1},\"send\":{\"command\":\"steer\",\"content\":\"in French\",\"submission_id\":\"s1\"}}\n",
    ))
    .unwrap();
    let verdict = Runner::new()
        .run(&session, &mut Command::new(example("engine")))
        .unwrap();
    assert!(verdict.holds(), "{verdict}");
    // At step 2: step 1's 21 deltas, then the steer's 3 ("You asked: in
    // French") in a step of their own.
    let mut at_step_2 = vec!["agent_step"];
    at_step_2.extend(["assistant_delta"; 21]);
    at_step_2.extend(["agent_step", "steer_applied"]);
    at_step_2.extend(["assistant_delta"; 3]);
    at_step_2.extend(["assistant_message", "agent_finished"]);
    // On a loaded machine the steer can reach the loop before the engine,
    // descheduled between `agent_step` 1 and asking for its steers, asks:
    // it lands at step 1's boundary, one step of 23 deltas.
    let mut at_step_1 = vec!["agent_step", "steer_applied"];
    at_step_1.extend(["assistant_delta"; 23]);
    at_step_1.extend(["assistant_message", "agent_finished"]);
    let events = verdict.turn_events(1);
    assert!(events == at_step_2 || events == at_step_1, "{verdict}");
    assert_eq!(verdict.answers(2), ["steer_applied"]);
}

/// What `examples/controller.rs` prints for a session that goes as it
/// should.
const CONTROLLER_CLEAN: &str = "\
the turn of command line 1: Finished(\"You asked: Say hi\")
jobs: []
exit: Some(0)
";

/// `tests/engines/NAME`, an engine in POSIX sh.
fn engine_script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/engines")
        .join(name)
}

/// The controller on `v2::serve::Controller` (`examples/controller.rs`)
/// runs its session clean against `serve-command mock-engine`, with no
/// engine named (the mock engine beside it) and named, and against an
/// engine that answers each `jobs_snapshot` twice: the second answer is a
/// notice, and stops nothing. The guide shows what it prints.
#[cfg(all(feature = "cli", unix))]
#[test]
fn the_controller_runs_clean_against_the_mock_engine_and_one_answering_twice() {
    let mock = Path::new(env!("CARGO_BIN_EXE_serve-command"));
    let twice = engine_script("answers-twice");
    let sh = Path::new("sh");
    for args in [
        &[][..],
        &[mock, Path::new("mock-engine")][..],
        &[sh, &twice, mock, Path::new("mock-engine")][..],
    ] {
        let out = run(&example("controller"), args, b"");
        assert_eq!(
            (
                String::from_utf8(out.stdout).unwrap(),
                String::from_utf8(out.stderr).unwrap()
            ),
            (CONTROLLER_CLEAN.to_owned(), String::new()),
            "{args:?}"
        );
    }
    assert_eq!(
        text_block_after(
            include_str!("../docs/GUIDE.md"),
            "cargo run --example controller`\nprints"
        ),
        CONTROLLER_CLEAN,
        "the guide's"
    );
}

/// Against each engine of `tests/engines/` that misbehaves, the controller
/// exits 1 within seconds, its stderr naming the cause: the exit status,
/// the line cut short and the engine's last words; an engine that closed
/// its stdout but runs; the work still owed; the answer that does not
/// decode; the silence past the stall limit, which the example takes from
/// `SERVE_COMMAND_STALL_MS` (for that engine alone: on a loaded machine, a
/// limit that short could run out before another engine has even read its
/// prompt). The guide shows
/// what it says against each but the engine that exits unanswered.
#[cfg(unix)]
#[test]
fn the_controller_names_the_cause_against_each_misbehaving_engine() {
    let cases: [(&str, &[&str]); 5] = [
        (
            "dies-mid-line",
            &[
                "exit status: 3",
                "its last line was cut short: {\"event\":\"assistant_delta\"",
                "stderr ends: engine: out of memory",
            ],
        ),
        (
            "closes-stdout",
            &["closed its stdout before answering, and still runs"],
        ),
        (
            "exits-unanswered",
            &["exit status: 0", "before answering; it still owed"],
        ),
        (
            "undecodable-answer",
            &[
                "answer to command line 2 is unreadable",
                "(jobs_snapshot) does not decode",
                "missing \"jobs\"",
            ],
        ),
        (
            "never-answers",
            &["command line 1: the engine was silent for 0.500s"],
        ),
    ];
    for (name, words) in cases {
        let stall = if name == "never-answers" {
            "500"
        } else {
            "600000"
        };
        let started = std::time::Instant::now();
        let out = output(
            &example("controller"),
            &[Path::new("sh"), &engine_script(name)],
            b"",
            &[("SERVE_COMMAND_STALL_MS", stall)],
        );
        let took = started.elapsed();
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(1), "{name}: {stderr}");
        assert!(stderr.starts_with("controller: "), "{name}: {stderr}");
        for word in words {
            assert!(stderr.contains(word), "{name}: no {word:?} in {stderr}");
        }
        // The engine that closes its stdout is given two seconds to exit.
        assert!(took.as_secs() < 20, "{name}: {took:?}");
        if name != "exits-unanswered" {
            assert!(
                include_str!("../docs/GUIDE.md").contains(&stderr),
                "the guide shows what it says against {name}: {stderr}"
            );
        }
    }
}
