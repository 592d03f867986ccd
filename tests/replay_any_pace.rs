//! `replay` at any pace: sessions from `fuzz-engine`'s generator, recorded
//! against `mock-engine --delay 40`, replay clean against the same engine
//! at delays 0, 5, 40 and 300 and with other model text (what only crossed
//! on the pipes set apart, never counted); and planted regressions,
//! recorded and replayed at `--delay 300`, where a line lands where it was
//! sent, each show as a difference under its command.
#![cfg(all(feature = "cli", unix))]

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serve_command::v2::serve::Recorder;
use serve_command::workbench::{sessions, Compare, Comparison, End, Runner, Session, Transcript};
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

#[path = "support/bin.rs"]
mod bin;

use bin::{stdout_of, BIN};

#[path = "support/scratch.rs"]
mod scratch;

use scratch::{file, scratch, Shared};

/// Sessions run at once: they wait on the engine, not on the machine.
const THREADS: usize = 8;

/// The turns: text, an approval, reasoning, and past them the default.
const SCRIPT: &str = concat!(
    r#"{"deltas":["Hel","lo"," there"]}"#,
    "\n",
    r#"{"approval":{"tool_name":"shell","detail":"run cargo test","body":"cargo test"},"deltas":["o","k"]}"#,
    "\n",
    r#"{"reasoning":["Let me ","look"],"deltas":["Done"]}"#,
    "\n",
);

/// The same turns in other words.
const OTHER_TEXT: &str = concat!(
    r#"{"deltas":["Hi"]}"#,
    "\n",
    r#"{"approval":{"tool_name":"shell","detail":"run make","body":"make"},"deltas":["y","e","s"]}"#,
    "\n",
    r#"{"reasoning":["Hm"],"answer":"Sure"}"#,
    "\n",
);

/// `mock-engine --delay MS --predict Thanks! --script SCRIPT`.
fn mock(delay: u64, script: &str) -> Command {
    let mut engine = Command::new(BIN);
    engine.args([
        "mock-engine",
        "--delay",
        &delay.to_string(),
        "--predict",
        "Thanks!",
        "--script",
        script,
    ]);
    engine
}

/// Runs `session` against `engine`, recorded: the recording's bytes, or
/// `None` when the session ran past `bound` (it waits on a point the
/// engine never reaches while it waits on a question: the recording's
/// input never closed, which a replay cannot know).
fn record_within(session: &Session, mut engine: Command, bound: Duration) -> Option<Vec<u8>> {
    let buffer = Shared::default();
    let recorder = Recorder::new(buffer.clone());
    let verdict = Runner::new()
        .timeout(bound)
        .run_recorded(session, &mut engine, &recorder)
        .unwrap();
    let bytes = buffer.0.lock().unwrap().clone();
    (!matches!(verdict.end, End::TimedOut(_))).then_some(bytes)
}

fn record(session: &Session, engine: Command) -> Vec<u8> {
    record_within(session, engine, Duration::from_secs(60)).expect("the session ends")
}

/// `count` sessions of the generator from a fixed seed.
fn generated(count: usize) -> Vec<Session> {
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[57; 32]);
    let mut runner = TestRunner::new_with_rng(Config::default(), rng);
    let strategy = sessions(6);
    (0..count)
        .map(|_| strategy.new_tree(&mut runner).unwrap().current())
        .collect()
}

/// Runs `job(i)` for each `i` below `count`, on `THREADS` threads.
fn each<T: Send>(count: usize, job: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let next = AtomicUsize::new(0);
    let out: Mutex<Vec<(usize, T)>> = Mutex::new(Vec::with_capacity(count));
    std::thread::scope(|scope| {
        for _ in 0..THREADS.min(count) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= count {
                    break;
                }
                let result = job(i);
                out.lock().unwrap().push((i, result));
            });
        }
    });
    let mut out = out.into_inner().unwrap();
    out.sort_by_key(|(i, _)| *i);
    out.into_iter().map(|(_, t)| t).collect()
}

/// 200 generated sessions recorded at 40 ms replay the same conversation
/// at 0, 5 and 40 ms and with other text, and 25 of them at 300 ms: what
/// differs is only what crossed on the pipes, set apart with why.
#[test]
fn generated_sessions_replay_clean_at_any_pace() {
    let start = Instant::now();
    let dir = scratch("replay-any-pace-generated");
    let script = file(&dir, "script.jsonl", SCRIPT);
    let other = file(&dir, "other.jsonl", OTHER_TEXT);
    // Drawn until 200 recordings ended: a session that waits for a point
    // its engine never reaches, while the engine waits on a question, is
    // killed at its bound.
    let candidates = generated(300);
    let recorded = each(candidates.len(), |i| {
        record_within(&candidates[i], mock(40, &script), Duration::from_secs(5))
            .map(|bytes| (Transcript::read(&bytes[..]).unwrap(), bytes))
    });
    let (sessions, recordings): (Vec<Session>, Vec<(Transcript, Vec<u8>)>) = candidates
        .into_iter()
        .zip(recorded)
        .filter_map(|(s, r)| Some((s, r?)))
        .take(200)
        .unzip();
    assert_eq!(sessions.len(), 200);
    let recorded = start.elapsed();
    // (delay, script, how many of the sessions)
    let runs: Vec<(u64, &str, usize)> = vec![
        (0, &script, 200),
        (5, &script, 200),
        (40, &script, 200),
        (40, &other, 200),
        (300, &script, 25),
    ];
    let jobs: Vec<(usize, u64, &str)> = runs
        .iter()
        .flat_map(|&(delay, script, count)| (0..count).map(move |i| (i, delay, script)))
        .collect();
    let outcomes = each(jobs.len(), |j| {
        let (i, delay, script) = jobs[j];
        let (recording, bytes) = &recordings[i];
        let replayed = record(&recording.session(), mock(delay, script));
        let comparison =
            recording.compare(&Transcript::read(&replayed[..]).unwrap(), &Compare::new());
        let failure = (!comparison.is_same()).then(|| {
            // Both recordings kept, to read with `serve-command trace`.
            let kept = |what: &str, bytes: &[u8]| {
                let path = dir.join(format!("{i}-{delay}-{what}.jsonl"));
                std::fs::write(&path, bytes).unwrap();
                path.display().to_string()
            };
            format!(
                "session {i} at --delay {delay} {} ({} and {}):\n{}{}\nthe session:\n{}",
                if script == other { "(other text)" } else { "" },
                kept("recorded", bytes),
                kept("replayed", &replayed),
                comparison,
                comparison
                    .crossed()
                    .iter()
                    .map(|d| format!("crossed: {d}\n"))
                    .collect::<String>(),
                sessions[i].to_jsonl()
            )
        });
        (failure, comparison.crossed().len())
    });
    let crossed: usize = outcomes.iter().map(|(_, c)| c).sum();
    let failures: Vec<&String> = outcomes.iter().filter_map(|(f, _)| f.as_ref()).collect();
    eprintln!(
        "{} sessions recorded in {:.1?}; {} replays, {crossed} crossings set apart, {} failed, in {:.1?} in all",
        sessions.len(),
        recorded,
        jobs.len(),
        failures.len(),
        start.elapsed()
    );
    assert!(
        failures.is_empty(),
        "{} of {} replays differ; the first:\n{}",
        failures.len(),
        jobs.len(),
        failures
            .iter()
            .take(3)
            .map(|f| f.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// The planted regressions' session: a steer and a request in the first
/// turn, a cancel mid-stream in the second, a third turn.
const PLANTED: &str = r#"{"send":{"command":"prompt","content":"one"}}
{"after":{"step":1},"send":{"command":"steer","content":"shorter","submission_id":"s1"}}
{"send":{"command":"jobs_snapshot","request_id":"j1"}}
{"after":{"ended":1},"send":{"command":"prompt","content":"two"}}
{"after":{"seen":1,"turn":4,"delta":true},"send":{"command":"cancel"}}
{"after":{"ended":4},"send":{"command":"prompt","content":"three"}}
"#;

/// An engine: `mock-engine --delay 300` behind `sh` filters of its input
/// and output.
fn filtered(dir: &Path, name: &str, script: &str, input: &str, output: &str) -> String {
    let engine = file(
        dir,
        name,
        &format!(
            "#!/bin/sh\n{input} | {BIN} mock-engine --delay 300 --script {script} | {output}\n"
        ),
    );
    let chmod = Command::new("chmod")
        .args(["+x", &engine])
        .status()
        .unwrap();
    assert!(chmod.success());
    engine
}

/// Each planted regression, recorded and replayed at 300 ms, shows as a
/// difference under its command, and exits 1.
#[test]
fn planted_regressions_show_under_their_command() {
    let dir = scratch("replay-any-pace-planted");
    let script = file(&dir, "script.jsonl", "{}\n{}\n{}\n");
    let failing = file(
        &dir,
        "failing.jsonl",
        "{}\n{}\n{\"fail\":\"provider error\"}\n",
    );
    let session = Session::parse(PLANTED).unwrap();
    let mut engine = Command::new(BIN);
    engine.args(["mock-engine", "--delay", "300", "--script", &script]);
    let log = file(
        &dir,
        "recording.jsonl",
        &String::from_utf8(record(&session, engine)).unwrap(),
    );
    let cat = "cat";
    let sed = |e: &str| format!("sed -u '{e}'");
    let engines = [
        (
            "failed turn",
            filtered(&dir, "failed", &failing, cat, cat),
            "command 6 (prompt), its turn:
  - assistant_message
  - usage
  - agent_finished
  - assistant_delta… (streamed)
  + turn_failed
replay: LOG: 1 difference (- the recording, + this run; 6 command lines, 18 events recorded, 14 in this run)
",
        ),
        (
            "dropped steer",
            filtered(
                &dir,
                "dropped",
                &script,
                cat,
                &sed(r#"s/{"event":"steer_applied","kind":"prompt",/{"event":"steer_dropped",/"#),
            ),
            r#"command 1 (prompt), its turn: - steer_applied kind prompt submission_id "s1"
command 2 (steer): - steer_applied kind prompt submission_id "s1" (turn of command 1)  + steer_dropped submission_id "s1"
replay: LOG: 2 differences (- the recording, + this run; 6 command lines, 18 events recorded, 18 in this run)
"#,
        ),
        (
            "missing reply",
            filtered(
                &dir,
                "missing",
                &script,
                cat,
                &sed(r#"/"event":"jobs_snapshot"/d"#),
            ),
            r#"command 3 (jobs_snapshot): - jobs_snapshot request_id "j1"
at the end: - owed nothing  + owed replies to command 3
replay: LOG: 2 differences (- the recording, + this run; 6 command lines, 18 events recorded, 17 in this run)
note: this run: the engine was silent for 2 s while it owed an answer; killed
"#,
        ),
        (
            "extra event",
            filtered(
                &dir,
                "extra",
                &script,
                cat,
                &sed(r#"0,/"event":"usage"/{/"event":"usage"/p}"#),
            ),
            "command 1 (prompt), its turn: + usage
replay: LOG: 1 difference (- the recording, + this run; 6 command lines, 18 events recorded, 19 in this run)
",
        ),
        (
            "cancel answered by agent_finished",
            filtered(
                &dir,
                "finished",
                &script,
                cat,
                &sed(r#"s/{"event":"agent_aborted","reason":"interrupted"}/{"event":"agent_finished","answer":""}/"#),
            ),
            "command 4 (prompt), its turn: - agent_aborted  + agent_finished
command 5 (cancel): - agent_aborted (turn of command 4)
replay: LOG: 2 differences (- the recording, + this run; 6 command lines, 18 events recorded, 18 in this run)
",
        ),
        (
            "cancel ignored",
            filtered(
                &dir,
                "ignored",
                &script,
                &sed(r#"/"command":"cancel"/d"#),
                cat,
            ),
            "command 4 (prompt), its turn:
  - agent_aborted
  + assistant_message
  + usage
  + agent_finished
command 5 (cancel): - agent_aborted (turn of command 4)
replay: LOG: 2 differences (- the recording, + this run; 6 command lines, 18 events recorded, 21 in this run)
",
        ),
    ];
    // The recording replays clean against its own engine.
    let mut same = Command::new(BIN);
    same.args(["mock-engine", "--delay", "300", "--script", &script]);
    let outputs = each(engines.len() + 1, |i| match engines.get(i) {
        Some((_, engine, _)) => stdout_of(
            &["replay", &log, "--turn-timeout", "2", "--", engine],
            b"",
            1,
        ),
        None => stdout_of(
            &[
                "replay",
                &log,
                "--",
                BIN,
                "mock-engine",
                "--delay",
                "300",
                "--script",
                &script,
            ],
            b"",
            0,
        ),
    });
    assert_eq!(
        outputs[engines.len()],
        format!("replay: {log}: the same conversation (6 command lines, 18 events recorded, 18 in this run)\n")
    );
    for ((what, _, want), got) in engines.iter().zip(&outputs) {
        assert_eq!(*got, want.replace("LOG", &log), "{what}");
    }
}

// The transcript's anchors and comparisons, through its public face.

/// A recording of these lines: `>` a command line, `<` an event line,
/// each with the milliseconds it came at, when given.
fn recording_at(lines: &[(Option<u64>, &str)]) -> String {
    let (mut commands, mut events) = (0, 0);
    let mut out = String::new();
    for (ms, line) in lines {
        let (dir, n, text) = match line.split_at(1) {
            (">", text) => {
                commands += 1;
                ("command", commands, text)
            }
            (_, text) => {
                events += 1;
                ("event", events, text)
            }
        };
        let text = serde_json::to_string(text).unwrap();
        let at = ms.map_or(String::new(), |ms| format!("\"t_ms\":{ms},"));
        out += &format!("{{{at}\"dir\":\"{dir}\",\"n\":{n},\"line\":{text}}}\n");
    }
    out
}

/// A recording of these lines, with no times.
fn recording(lines: &[&str]) -> String {
    let lines: Vec<(Option<u64>, &str)> = lines.iter().map(|l| (None, *l)).collect();
    recording_at(&lines)
}

fn read(lines: &[&str]) -> Transcript {
    Transcript::read(recording(lines).as_bytes()).unwrap()
}

const PROMPT: &str = r#">{"command":"prompt","content":"hi"}"#;
const STEP1: &str = r#"<{"event":"agent_step","step":1}"#;
const DELTA: &str = r#"<{"event":"assistant_delta","content":"x"}"#;
const DONE: &str = r#"<{"event":"agent_finished","answer":"x"}"#;
const JOBS: &str = r#">{"command":"jobs_snapshot","request_id":"j"}"#;
const SNAPSHOT: &str = r#"<{"event":"jobs_snapshot","request_id":"j","jobs":[]}"#;
const ASKED: &str =
    r#"<{"event":"approval_requested","id":"a-7","tool_name":"shell","detail":"d","body":null}"#;

/// Each command line is sent again at the point of the conversation the
/// recording sent it: while a turn runs, after the same count of its
/// events that are not deltas (and a delta, when a run of them had
/// begun), never after a count of deltas or a time.
#[test]
fn each_line_is_anchored_on_the_last_point_before_it() {
    let table: &[(&[&str], &str)] = &[
        // Nothing came in between: at once.
        (&[PROMPT, JOBS], "{\"send\":{\"command\":\"jobs_snapshot\",\"request_id\":\"j\"}}\n"),
        // A step and deltas after it: mid-stream, after the step and a
        // delta, however many the model writes.
        (
            &[PROMPT, STEP1, DELTA, DELTA, r#">{"command":"cancel"}"#],
            "{\"after\":{\"seen\":1,\"turn\":1,\"delta\":true},\"send\":{\"command\":\"cancel\"}}\n",
        ),
        // Deltas before any other event: after the first delta.
        (
            &[PROMPT, DELTA, r#">{"command":"cancel"}"#],
            "{\"after\":{\"seen\":0,\"turn\":1,\"delta\":true},\"send\":{\"command\":\"cancel\"}}\n",
        ),
        // Late in the turn: after as many of its events, not its step.
        (
            &[
                PROMPT,
                STEP1,
                DELTA,
                r#"<{"event":"assistant_message","content":"x"}"#,
                r#"<{"event":"usage","usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2,"prompt_cache_hit_tokens":0,"prompt_cache_miss_tokens":1}}"#,
                r#">{"command":"goal","action":"set","text":"t"}"#,
            ],
            "{\"after\":{\"seen\":3,\"turn\":1},\"send\":{\"command\":\"goal\",\"action\":\"set\",\"text\":\"t\"}}\n",
        ),
        // The turn's end.
        (
            &[PROMPT, STEP1, DELTA, DONE, PROMPT],
            "{\"after\":{\"ended\":1},\"send\":{\"command\":\"prompt\",\"content\":\"hi\"}}\n",
        ),
        // The engine's prediction after it.
        (
            &[
                PROMPT,
                STEP1,
                DONE,
                r#"<{"event":"prediction_result","source_sequence":1,"outcome":{"kind":"skipped"}}"#,
                PROMPT,
            ],
            "{\"after\":{\"predicted\":1,\"ms\":2000},\"send\":{\"command\":\"prompt\",\"content\":\"hi\"}}\n",
        ),
        // A reply and nothing else since the line before: the reply.
        (
            &[PROMPT, STEP1, JOBS, SNAPSHOT, r#">{"command":"compact"}"#],
            "{\"after\":{\"seen\":1,\"turn\":1},\"send\":{\"command\":\"jobs_snapshot\",\"request_id\":\"j\"}}\n{\"after\":{\"answered\":2},\"send\":{\"command\":\"compact\"}}\n",
        ),
        // A reply and the turn's events: the turn's point.
        (
            &[PROMPT, STEP1, JOBS, SNAPSHOT, DELTA, r#">{"command":"compact"}"#],
            "{\"after\":{\"seen\":1,\"turn\":1},\"send\":{\"command\":\"jobs_snapshot\",\"request_id\":\"j\"}}\n{\"after\":{\"seen\":1,\"turn\":1,\"delta\":true},\"send\":{\"command\":\"compact\"}}\n",
        ),
        (
            &[PROMPT, JOBS, STEP1, SNAPSHOT, r#">{"command":"cancel"}"#],
            "{\"send\":{\"command\":\"jobs_snapshot\",\"request_id\":\"j\"}}\n{\"after\":{\"seen\":1,\"turn\":1},\"send\":{\"command\":\"cancel\"}}\n",
        ),
        // An approval answers the question asked in its place, by the
        // id the new engine gives it.
        (
            &[PROMPT, STEP1, ASKED, r#">{"command":"approval","id":"a-7","allow":false}"#],
            "{\"after\":{\"asked\":1},\"approval\":{\"asked\":1,\"allow\":false}}\n",
        ),
        // An id never asked is sent as it was.
        (
            &[PROMPT, STEP1, r#">{"command":"approval","id":"zz","allow":true}"#],
            "{\"after\":{\"seen\":1,\"turn\":1},\"send\":{\"command\":\"approval\",\"id\":\"zz\",\"allow\":true}}\n",
        ),
        // A compaction's start marks no point; its end does.
        (
            &[
                r#">{"command":"compact"}"#,
                r#"<{"event":"compaction_started","from_sequence":1,"to_sequence":2}"#,
                JOBS,
                r#"<{"event":"compaction_finished","from_sequence":1,"to_sequence":2,"summary":"s"}"#,
                r#">{"command":"job_stop","request_id":"p","generation":"g","job_id":"j"}"#,
            ],
            "{\"send\":{\"command\":\"jobs_snapshot\",\"request_id\":\"j\"}}\n{\"after\":{\"ended\":1},\"send\":{\"command\":\"job_stop\",\"request_id\":\"p\",\"generation\":\"g\",\"job_id\":\"j\"}}\n",
        ),
        // A steer's reply inside the turn is one of its events.
        (
            &[
                PROMPT,
                STEP1,
                r#">{"command":"steer","content":"x"}"#,
                r#"<{"event":"agent_step","step":2}"#,
                r#"<{"event":"steer_applied","kind":"prompt","content":"x"}"#,
                DELTA,
                r#">{"command":"cancel"}"#,
            ],
            "{\"after\":{\"seen\":1,\"turn\":1},\"send\":{\"command\":\"steer\",\"content\":\"x\"}}\n{\"after\":{\"seen\":3,\"turn\":1,\"delta\":true},\"send\":{\"command\":\"cancel\"}}\n",
        ),
        // A step after a reply is the later point.
        (
            &[
                PROMPT,
                STEP1,
                JOBS,
                SNAPSHOT,
                r#"<{"event":"agent_step","step":2}"#,
                r#">{"command":"cancel"}"#,
            ],
            "{\"after\":{\"seen\":1,\"turn\":1},\"send\":{\"command\":\"jobs_snapshot\",\"request_id\":\"j\"}}\n{\"after\":{\"seen\":2,\"turn\":1},\"send\":{\"command\":\"cancel\"}}\n",
        ),
        // Only deltas since the line before: the same point.
        (
            &[PROMPT, STEP1, DELTA, JOBS, DELTA, r#">{"command":"cancel"}"#],
            "{\"after\":{\"seen\":1,\"turn\":1,\"delta\":true},\"send\":{\"command\":\"jobs_snapshot\",\"request_id\":\"j\"}}\n{\"after\":{\"seen\":1,\"turn\":1,\"delta\":true},\"send\":{\"command\":\"cancel\"}}\n",
        ),
        // Events that answer nothing mark no point.
        (
            &[
                r#"<{"event":"session_started","session":"s","session_root":"r","workspace_root":null}"#,
                PROMPT,
            ],
            "{\"send\":{\"command\":\"prompt\",\"content\":\"hi\"}}\n",
        ),
    ];
    for (lines, want) in table {
        let session = read(lines).session().to_jsonl();
        // The first line is the recording's first command, sent at once.
        let rest: String = if lines[0].starts_with('>') && lines.len() > 1 {
            session.split_inclusive('\n').skip(1).collect()
        } else {
            session
        };
        assert_eq!(rest, *want, "{lines:?}");
    }
}

/// A comparison's differences set apart as crossings, as printed.
fn notes(comparison: &Comparison) -> Vec<String> {
    comparison
        .crossed()
        .iter()
        .map(ToString::to_string)
        .collect()
}

/// A recording with times: each line `(ms, line)`, as `recording` reads.
fn timed(lines: &[(u64, &str)]) -> Transcript {
    let lines: Vec<(Option<u64>, &str)> = lines.iter().map(|&(ms, l)| (Some(ms), l)).collect();
    Transcript::read(recording_at(&lines).as_bytes()).unwrap()
}

/// A difference that is only a crossing on the pipes is set apart,
/// with why, not counted; the same difference where the line could
/// have landed is counted.
#[test]
fn crossings_on_the_pipes_are_set_apart() {
    const CANCEL: &str = r#">{"command":"cancel"}"#;
    const ABORTED: &str = r#"<{"event":"agent_aborted","reason":"interrupted"}"#;
    const MESSAGE: &str = r#"<{"event":"assistant_message","content":"x"}"#;
    const PREDICTED: &str =
        r#"<{"event":"prediction_result","source_sequence":1,"outcome":{"kind":"skipped"}}"#;
    // The cancel landed in the recording, at a pace of 40 ms.
    let landed = timed(&[
        (0, PROMPT),
        (0, STEP1),
        (40, DELTA),
        (41, CANCEL),
        (42, ABORTED),
    ]);
    let cancel_crossed = "command 1 (prompt), its turn: - agent_aborted  + assistant_message, agent_finished (command 2 (cancel) and the turn of command 1 crossed on the pipes in this run)";
    /// A new run, the crossings set apart, the differences counted.
    type Row<'a> = (&'a [(u64, &'a str)], &'a [&'a str], &'a str);
    let table: &[Row] = &[
        // Its turn's end came with it: the engine may have written it
        // before it read the cancel.
        (
            &[(0, PROMPT), (0, STEP1), (1, DELTA), (1, CANCEL), (2, MESSAGE), (2, DONE)],
            &[
                cancel_crossed,
                "command 2 (cancel): - agent_aborted (turn of command 1) (command 2 (cancel) and the turn of command 1 crossed on the pipes in this run)",
            ],
            "",
        ),
        // The turn went on 300 ms after it: it was read, and ignored.
        (
            &[(0, PROMPT), (0, STEP1), (40, DELTA), (41, CANCEL), (340, MESSAGE), (640, DONE)],
            &[],
            "command 1 (prompt), its turn:\n  - agent_aborted\n  + assistant_message\n  + agent_finished\ncommand 2 (cancel): - agent_aborted (turn of command 1)\n",
        ),
        // At a pace of 300 ms, a turn that ends at once after the
        // cancel answered it.
        (
            &[(0, PROMPT), (0, STEP1), (300, DELTA), (301, CANCEL), (301, MESSAGE), (302, DONE)],
            &[],
            "command 1 (prompt), its turn:\n  - agent_aborted\n  + assistant_message\n  + agent_finished\ncommand 2 (cancel): - agent_aborted (turn of command 1)\n",
        ),
    ];
    for (replayed, crossed, differences) in table {
        let comparison = landed.compare(&timed(replayed), &Compare::new());
        assert_eq!(notes(&comparison), *crossed, "{replayed:?}");
        assert_eq!(comparison.to_string(), *differences, "{replayed:?}");
    }
    // With no window, nothing is set apart.
    let comparison = landed.compare(
        &timed(table[0].0),
        &Compare::new().window(std::time::Duration::ZERO),
    );
    assert!(comparison.crossed().is_empty() && !comparison.is_same());
    // A prediction the next line beat: set apart; one it had time for
    // and did not come: counted.
    let predicted = timed(&[
        (0, PROMPT),
        (0, STEP1),
        (10, DONE),
        (30, PREDICTED),
        (40, PROMPT),
    ]);
    let beaten = timed(&[(0, PROMPT), (0, STEP1), (10, DONE), (11, PROMPT)]);
    let comparison = predicted.compare(&beaten, &Compare::new());
    assert!(comparison.is_same(), "{comparison}");
    assert_eq!(
        comparison.crossed()[0].to_string(),
        "command 1 (prompt), its turn: - prediction_result source_sequence 1 outcome skipped (the turn's prediction_result and command 2 (prompt) crossed on the pipes in this run)"
    );
    let late = timed(&[(0, PROMPT), (0, STEP1), (10, DONE), (500, PROMPT)]);
    let comparison = predicted.compare(&late, &Compare::new());
    assert_eq!(
        comparison.to_string(),
        "command 1 (prompt), its turn: - prediction_result source_sequence 1 outcome skipped\n"
    );
    // Text the engine streamed before the cancel took hold: pace.
    let quick = timed(&[(0, PROMPT), (0, STEP1), (1, CANCEL), (2, ABORTED)]);
    let streamed = timed(&[
        (0, PROMPT),
        (0, STEP1),
        (1, CANCEL),
        (9, DELTA),
        (9, ABORTED),
    ]);
    let comparison = quick.compare(&streamed, &Compare::new());
    assert!(comparison.is_same(), "{comparison}");
    assert_eq!(
        comparison.crossed()[0].to_string(),
        "command 1 (prompt), its turn: + assistant_delta… (streamed) (command 2 (cancel) and the turn's text crossed on the pipes in this run)"
    );
    // Text before it, in one run only: a difference.
    let early = timed(&[
        (0, PROMPT),
        (0, STEP1),
        (1, DELTA),
        (1, CANCEL),
        (9, ABORTED),
    ]);
    assert!(!quick.compare(&early, &Compare::new()).is_same());
    // No times: no crossing judged.
    let untimed = read(&[PROMPT, STEP1, DELTA, CANCEL, MESSAGE, DONE]);
    assert!(landed
        .compare(&untimed, &Compare::new())
        .crossed()
        .is_empty());
}

/// Two conversations compared: (recording, new run, how, the diff).
#[test]
fn comparisons() {
    let other_jobs = r#"<{"event":"jobs_snapshot","request_id":"k","jobs":[]}"#;
    let failed = r#"<{"event":"turn_failed","error":"boom"}"#;
    let table: &[(&[&str], &[&str], Compare, &str)] = &[
        // A reply that crossed the turn otherwise, and other text: the same.
        (
            &[PROMPT, JOBS, STEP1, DELTA, SNAPSHOT, DONE],
            &[PROMPT, JOBS, SNAPSHOT, STEP1, DELTA, DELTA, r#"<{"event":"agent_finished","answer":"y"}"#],
            Compare::new(),
            "",
        ),
        // Byte for byte, the answer's text shows.
        (
            &[PROMPT, STEP1, DONE],
            &[PROMPT, STEP1, r#"<{"event":"agent_finished","answer":"y"}"#],
            Compare::new().exact(true),
            "command 1 (prompt), its turn: - {\"event\":\"agent_finished\",\"answer\":\"x\"}  + {\"event\":\"agent_finished\",\"answer\":\"y\"}\n",
        ),
        // A turn that ended otherwise; its deltas compared by kind only.
        (
            &[PROMPT, STEP1, DELTA, DONE],
            &[PROMPT, STEP1, failed],
            Compare::new(),
            "command 1 (prompt), its turn:\n  - agent_finished\n  - assistant_delta… (streamed)\n  + turn_failed\n",
        ),
        // Left out: the same.
        (
            &[PROMPT, STEP1, r#"<{"event":"usage","usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2,"prompt_cache_hit_tokens":0,"prompt_cache_miss_tokens":1}}"#, DONE],
            &[PROMPT, STEP1, DONE],
            Compare::new().ignore("usage"),
            "",
        ),
        // A reply that answers nothing, and a request left owed.
        (
            &[JOBS, SNAPSHOT],
            &[JOBS, other_jobs],
            Compare::new(),
            "command 1 (jobs_snapshot): - jobs_snapshot request_id \"j\"\noutside any command: + jobs_snapshot request_id \"k\" (fits no rule)\nat the end: - owed nothing  + owed replies to command 1\n",
        ),
        // An undecodable line naming an event, and a line that is none.
        (
            &[JOBS, SNAPSHOT, "<hello"],
            &[JOBS, r#"<{"event":"jobs_snapshot","request_id":"j"}"#],
            Compare::new(),
            "command 1 (jobs_snapshot): - jobs_snapshot request_id \"j\"  + jobs_snapshot (undecodable)\noutside any command: - not an event\n",
        ),
        // A command line sent as another kind.
        (
            &[JOBS],
            &[PROMPT],
            Compare::new(),
            "command 1 (jobs_snapshot): - sent: jobs_snapshot  + sent: prompt\nat the end: - owed replies to command 1  + owed the queued work of command 1\n",
        ),
    ];
    for (a, b, how, want) in table {
        let comparison = read(a).compare(&read(b), how);
        assert_eq!(comparison.to_string(), *want, "{a:?} vs {b:?}");
        assert_eq!(comparison.is_same(), want.is_empty());
    }
}

/// What fits no rule is kept, by the event's number, with why.
#[test]
fn violations_are_kept_with_their_numbers() {
    let t = read(&[JOBS, SNAPSHOT, DONE]);
    assert_eq!(
        t.violations(),
        [(
            2,
            "agent_finished with no turn running (no prompt was sent)".to_owned()
        )]
    );
}

/// A crossing sets apart only what it explains: the answers of the line
/// that crossed (when it lands in a turn), of a compaction it crossed, and
/// of lines that land sent during a crossed turn (in either run); the
/// turn it crossed, and a turn queued behind it when the line came after
/// that turn's end; never a request's missing reply, nor a compaction or
/// a turn it did not cross.
#[test]
fn a_crossing_sets_apart_only_what_it_explains() {
    const CANCEL: &str = r#">{"command":"cancel"}"#;
    const ABORTED: &str = r#"<{"event":"agent_aborted","reason":"interrupted"}"#;
    const MESSAGE: &str = r#"<{"event":"assistant_message","content":"x"}"#;
    const FAILED: &str = r#"<{"event":"turn_failed","error":"boom"}"#;
    const STEER: &str = r#">{"command":"steer","content":"s","submission_id":"s1"}"#;
    const APPLIED: &str =
        r#"<{"event":"steer_applied","kind":"prompt","content":"s","submission_id":"s1"}"#;
    const DROPPED: &str = r#"<{"event":"steer_dropped","content":"s","submission_id":"s1"}"#;
    const STEP2: &str = r#"<{"event":"agent_step","step":2}"#;
    const COMPACT: &str = r#">{"command":"compact"}"#;
    const STARTED: &str = r#"<{"event":"compaction_started","from_sequence":0,"to_sequence":1}"#;
    const COMPACTED: &str =
        r#"<{"event":"compaction_finished","from_sequence":0,"to_sequence":1,"summary":"s"}"#;
    const NOT_COMPACTED: &str = r#"<{"event":"compaction_failed","error":"cancelled"}"#;
    // The cancel (command 3) crossed turn 1's end in this run, and landed
    // in turn 2, queued behind it.
    let queued: &[(u64, &str)] = &[
        (0, PROMPT),
        (0, PROMPT),
        (0, STEP1),
        (1, DELTA),
        (1, CANCEL),
        (2, MESSAGE),
        (2, DONE),
        (3, STEP1),
        (4, ABORTED),
    ];
    let landed: &[(u64, &str)] = &[
        (0, PROMPT),
        (0, PROMPT),
        (0, STEP1),
        (40, DELTA),
        (41, CANCEL),
        (42, ABORTED),
        (43, STEP1),
        (44, DONE),
    ];
    /// (what, recording, new run, notes set apart, differences counted)
    type Row<'a> = (
        &'a str,
        Vec<(u64, &'a str)>,
        Vec<(u64, &'a str)>,
        &'a [&'a str],
        &'a str,
    );
    let table: &[Row] = &[
        (
            "the queued turn the cancel landed in",
            landed.to_vec(),
            queued.to_vec(),
            &[
                "command 1 (prompt), its turn: - agent_aborted  + assistant_message, agent_finished (command 2 (prompt) and the turn of command 1 crossed on the pipes in the recording)",
                "command 2 (prompt), its turn: - agent_finished  + agent_aborted (command 3 (cancel) and the turn of command 1 crossed on the pipes in this run)",
                "command 3 (cancel): - agent_aborted (turn of command 1)  + agent_aborted (turn of command 2) (command 3 (cancel) and the turn of command 1 crossed on the pipes in this run)",
            ],
            "",
        ),
        (
            "a turn queued after the cancel",
            [landed, &[(45, PROMPT), (45, STEP1), (46, DONE)]].concat(),
            [queued, &[(5, PROMPT), (5, STEP1), (6, FAILED)]].concat(),
            &[
                "command 1 (prompt), its turn: - agent_aborted  + assistant_message, agent_finished (command 2 (prompt) and the turn of command 1 crossed on the pipes in the recording)",
                "command 2 (prompt), its turn: - agent_finished  + agent_aborted (command 3 (cancel) and the turn of command 1 crossed on the pipes in this run)",
                "command 3 (cancel): - agent_aborted (turn of command 1)  + agent_aborted (turn of command 2) (command 3 (cancel) and the turn of command 1 crossed on the pipes in this run)",
            ],
            "command 4 (prompt), its turn: - agent_finished  + turn_failed\n",
        ),
        (
            "a request that crossed a turn, never answered",
            vec![(0, PROMPT), (0, STEP1), (40, DELTA), (41, JOBS), (41, SNAPSHOT), (42, DONE)],
            vec![(0, PROMPT), (0, STEP1), (1, DELTA), (1, JOBS), (2, MESSAGE), (2, DONE)],
            &["command 1 (prompt), its turn: + assistant_message (command 2 (jobs_snapshot) and the turn of command 1 crossed on the pipes in this run)"],
            "command 2 (jobs_snapshot): - jobs_snapshot request_id \"j\"\nat the end: - owed nothing  + owed replies to command 2\n",
        ),
        (
            "a request sent during a turn a cancel crossed, never answered",
            vec![(0, PROMPT), (0, STEP1), (40, DELTA), (41, CANCEL), (41, JOBS), (42, ABORTED), (43, SNAPSHOT)],
            vec![(0, PROMPT), (0, STEP1), (1, DELTA), (1, CANCEL), (1, JOBS), (2, MESSAGE), (2, DONE)],
            &[
                "command 1 (prompt), its turn: - agent_aborted  + assistant_message, agent_finished (command 2 (cancel) and the turn of command 1 crossed on the pipes in this run)",
                "command 2 (cancel): - agent_aborted (turn of command 1) (command 2 (cancel) and the turn of command 1 crossed on the pipes in this run)",
            ],
            "command 3 (jobs_snapshot): - jobs_snapshot request_id \"j\"\nat the end: - owed nothing  + owed replies to command 3\n",
        ),
        (
            "a steer that did not cross, sent during the crossed turn in the recording only",
            vec![(0, PROMPT), (0, STEP1), (10, STEER), (200, STEP2), (200, APPLIED), (201, CANCEL), (202, MESSAGE), (202, DONE)],
            vec![(0, PROMPT), (0, STEP1), (5, MESSAGE), (5, DONE), (10, STEER), (11, DROPPED), (12, CANCEL)],
            &["command 2 (steer): - steer_applied kind prompt submission_id \"s1\" (turn of command 1)  + steer_dropped submission_id \"s1\" (command 3 (cancel) and the turn of command 1 crossed on the pipes in the recording)"],
            // The turn itself differs before the cancel was sent: counted.
            "command 1 (prompt), its turn:\n  - agent_step\n  - steer_applied kind prompt submission_id \"s1\"\n",
        ),
        (
            "a compaction a cancel crossed",
            vec![(0, COMPACT), (0, STARTED), (40, CANCEL), (41, NOT_COMPACTED)],
            vec![(0, COMPACT), (0, STARTED), (1, CANCEL), (2, COMPACTED)],
            &[
                "command 1 (compact): + compaction_finished (command 2 (cancel) and the turn of command 1 crossed on the pipes in this run)",
                "command 2 (cancel): - compaction_failed (command 2 (cancel) and the turn of command 1 crossed on the pipes in this run)",
            ],
            "",
        ),
        (
            "a compaction queued behind a crossed turn",
            vec![(0, PROMPT), (0, STEP1), (40, DELTA), (41, CANCEL), (41, COMPACT), (42, ABORTED), (43, STARTED), (44, COMPACTED)],
            vec![(0, PROMPT), (0, STEP1), (1, DELTA), (1, CANCEL), (1, COMPACT), (2, MESSAGE), (2, DONE), (3, STARTED), (300, NOT_COMPACTED)],
            &[
                "command 1 (prompt), its turn: - agent_aborted  + assistant_message, agent_finished (command 2 (cancel) and the turn of command 1 crossed on the pipes in this run)",
                "command 2 (cancel): - agent_aborted (turn of command 1) (command 2 (cancel) and the turn of command 1 crossed on the pipes in this run)",
            ],
            "command 3 (compact): - compaction_finished  + compaction_failed\n",
        ),
    ];
    for (what, recording, replayed, crossed, differences) in table {
        let comparison = timed(recording).compare(&timed(replayed), &Compare::new());
        assert_eq!(notes(&comparison), *crossed, "{what}");
        assert_eq!(comparison.to_string(), *differences, "{what}");
    }
}
