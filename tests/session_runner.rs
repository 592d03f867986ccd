//! The session runner: sessions driven against an engine in process and
//! over a child's stdio, each event attributed as it arrives, and the
//! broken promises named in the protocol's words.
#![cfg(feature = "workbench")]

use serve_command::workbench::{End, EngineOutput, MockEngine, Runner, Session};
use std::io::{self, Write};
use std::time::Duration;

fn session(text: &str) -> Session {
    Session::parse(text).unwrap()
}

fn runner() -> Runner {
    Runner::new()
        .turn_timeout(Duration::from_millis(500))
        .timeout(Duration::from_secs(30))
}

/// The mock engine's output with every line holding `drop` left out.
struct Without(EngineOutput, &'static str);

impl Write for Without {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let text = String::from_utf8_lossy(bytes);
        if !text.contains(self.1) {
            self.0.write_all(bytes)?;
        }
        Ok(bytes.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

#[test]
fn a_session_in_process_is_attributed_line_by_line() {
    let verdict = runner().run_with(
        &session(concat!(
            "{\"send\":{\"command\":\"prompt\",\"content\":\"hi\"}}\n",
            "{\"after\":{\"ended\":1},\"send\":{\"command\":\"jobs_snapshot\",\"request_id\":\"r1\"}}\n",
        )),
        |input, output| MockEngine::new().serve(input, output),
    );
    assert!(verdict.holds(), "{verdict}");
    assert_eq!(
        verdict.turn_events(1),
        [
            "agent_step",
            "assistant_delta",
            "assistant_delta",
            "assistant_message",
            "usage",
            "agent_finished"
        ]
    );
    assert_eq!(verdict.answers(2), ["jobs_snapshot"]);
    assert_eq!(
        verdict.end,
        End::Exited("returned at the end of its input".to_owned())
    );
    println!("{verdict}");
}

#[test]
fn a_turn_that_never_ends_is_named() {
    let verdict = runner().run_with(
        &session("{\"send\":{\"command\":\"prompt\",\"content\":\"hi\"}}\n"),
        |input, output| MockEngine::new().serve(input, Without(output, "agent_finished")),
    );
    assert_eq!(
        verdict.problems(),
        ["command 1 (prompt): its turn never ended: no agent_finished, turn_failed or agent_aborted by the end (the engine was silent for 0.5 s while it owed an answer; killed)"]
    );
    // As a person reads it: the why, the session line by line with its
    // time (left out here), how the engine ended and after how long.
    let shown = verdict.to_string();
    let lines: Vec<&str> = shown
        .lines()
        .map(|l| l.trim_start().split_once("s  ").map_or(l, |(_, rest)| rest))
        .collect();
    assert_eq!(
        lines[..4],
        [
            "why: command 1 (prompt): its turn never ended: no agent_finished, turn_failed or agent_aborted by the end (the engine was silent for 0.5 s while it owed an answer; killed)",
            "the session (1 sent, 5 received; > sent, < received, [what each event answers, its turn]):",
            r#"> 1   {"command":"prompt","content":"hi"}"#,
            r#"< 1   {"event":"agent_step","step":1}  [turn 1]"#,
        ],
        "{shown}"
    );
    assert_eq!(lines.len(), 9, "{shown}");
    assert!(
        lines[8]
            .starts_with("the engine was silent for 0.5 s while it owed an answer; killed after "),
        "{shown}"
    );
}

/// A point the engine never reaches is missed, said with why, and the line
/// is sent then: the mock's turn has one step, not two.
#[test]
fn a_point_never_reached_is_missed_and_the_line_sent_then() {
    let verdict = runner().run_with(
        &session(concat!(
            "{\"send\":{\"command\":\"prompt\",\"content\":\"hi\"}}\n",
            "{\"after\":{\"step\":2},\"send\":{\"command\":\"jobs_snapshot\",\"request_id\":\"r1\"}}\n",
            "{\"after\":{\"asked\":1},\"send\":{\"command\":\"goal\",\"action\":\"clear\"}}\n",
            "{\"after\":{\"answered\":1},\"send\":{\"command\":\"cancel\"}}\n",
            "{\"after\":{\"answered\":4},\"send\":{\"command\":\"compact\"}}\n",
        )),
        |input, output| MockEngine::new().serve(input, output),
    );
    assert_eq!(
        verdict.missed,
        [
            "step 2: the turn of command 1 ended after 1 agent_step, before step 2; sent then",
            "step 3: the engine asked 0 questions, not 1, and has no work left; sent then",
            "step 5: command 4 is owed no answer; sent then",
        ]
    );
    assert!(verdict.holds(), "{verdict}");
    assert_eq!(verdict.answers(2), ["jobs_snapshot"]);
    assert_eq!(verdict.answers(3), ["goal_updated"]);
}

/// An approval answers the k-th question by the id the engine gave it.
#[test]
fn an_approval_is_sent_with_the_id_the_engine_gave() {
    let verdict = runner().run_with(
        &session(concat!(
            "{\"send\":{\"command\":\"prompt\",\"content\":\"run it\"}}\n",
            "{\"approval\":{\"asked\":1,\"allow\":false}}\n",
        )),
        |input, output| {
            MockEngine::with_script("{\"approval\":{}}")
                .unwrap()
                .serve(input, output)
        },
    );
    assert!(verdict.holds(), "{verdict}");
    assert_eq!(
        verdict.sent[1].line,
        "{\"command\":\"approval\",\"id\":\"approval-1\",\"allow\":false}"
    );
    assert_eq!(verdict.answers(2), ["approval_resolved"]);
}

/// A pause counts from the line before it (a lower bound: a loaded
/// machine may take longer, never shorter).
#[cfg(unix)]
#[test]
fn a_pause_waits_at_least_its_milliseconds() {
    let verdict = runner()
        .run(
            &session(concat!(
                "{\"send\":{\"command\":\"jobs_snapshot\",\"request_id\":\"r1\"}}\n",
                "{\"after\":{\"ms\":300},\"send\":{\"command\":\"jobs_snapshot\",\"request_id\":\"r2\"}}\n",
            )),
            std::process::Command::new(env!("CARGO_BIN_EXE_serve-command")).arg("mock-engine"),
        )
        .unwrap();
    assert!(verdict.holds(), "{verdict}");
    assert_eq!(verdict.sent.len(), 2);
    assert!(verdict.sent[1].at - verdict.sent[0].at >= Duration::from_millis(300));
}

/// An engine that cannot be started is the OS's error.
#[test]
fn an_engine_that_cannot_start_is_an_error() {
    let error = runner()
        .run(
            &session("{\"send\":{\"command\":\"cancel\"}}\n"),
            &mut std::process::Command::new("/nonexistent/engine"),
        )
        .unwrap_err();
    assert_eq!(error.kind(), io::ErrorKind::NotFound);
}

/// An engine that floods its stdout is killed at the bound and judged by
/// what it wrote; one that writes one endless line too; the memory kept is
/// the bound's, not the flood's.
#[cfg(unix)]
#[test]
fn a_flood_is_killed_at_the_bound() {
    let floods = [
        "yes '{\"event\":\"background_notice\",\"content\":\"x\"}'",
        "tr '\\0' a < /dev/zero",
    ];
    for flood in floods {
        let verdict = runner()
            .max_output(1 << 20)
            .run(
                &session("{\"send\":{\"command\":\"jobs_snapshot\",\"request_id\":\"r1\"}}\n"),
                std::process::Command::new("sh").args(["-c", flood]),
            )
            .unwrap();
        assert_eq!(verdict.end, End::Flooded(1 << 20), "{flood}");
        assert_eq!(
            verdict.problems(),
            [
                "command 1 (jobs_snapshot): never answered: no jobs_snapshot with request_id \"r1\" by the end (the engine wrote more than 1048576 bytes on stdout; killed)",
                "the engine wrote more than 1048576 bytes on stdout; killed",
            ],
            "{flood}"
        );
        assert!(verdict.received.len() <= 1000, "{flood}");
    }
}

/// An engine that does not exit at the end of its input is killed with
/// its process group, and said not to have exited.
#[cfg(unix)]
#[test]
fn an_engine_that_never_exits_is_killed_with_its_group() {
    let dir = std::env::temp_dir().join(format!("serve-command-runner-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pid_file = dir.join("sleeper.pid");
    let verdict = runner()
        .run(
            &session("{\"send\":{\"command\":\"cancel\"}}\n"),
            std::process::Command::new("sh").args([
                "-c",
                "sleep 60 & echo $! > \"$1\"; cat > /dev/null; wait",
                "sh",
                pid_file.to_str().unwrap(),
            ]),
        )
        .unwrap();
    assert_eq!(verdict.end, End::NoExit(Duration::from_millis(500)));
    assert_eq!(
        verdict.problems(),
        ["the engine did not exit within 0.5 s of the end of its input, with nothing owed; killed"]
    );
    // The sleeper, a child of the engine, went with it.
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    let proc = format!("/proc/{}", pid.trim());
    let gone = (0..200).any(|_| {
        let state = std::fs::read_to_string(format!("{proc}/stat")).unwrap_or_default();
        // Gone, or a zombie waiting to be reaped.
        let done = state.is_empty() || state.split(' ').nth(2) == Some("Z");
        if !done {
            std::thread::sleep(Duration::from_millis(10));
        }
        done
    });
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(gone, "{proc} still runs");
}

/// A reply that does not decode answers its request all the same, and the
/// verdict says which command's answer is unreadable, and why; a line that
/// names no event is stray output.
#[cfg(unix)]
#[test]
fn an_unreadable_answer_is_named_with_the_command_it_answers() {
    let verdict = runner()
        .run(
            &session("{\"send\":{\"command\":\"jobs_snapshot\",\"request_id\":\"r1\"}}\n"),
            std::process::Command::new("sh").args([
                "-c",
                "read -r line; echo 'engine ready'; echo '{\"event\":\"jobs_snapshot\",\"request_id\":\"r1\"}'; cat >/dev/null",
            ]),
        )
        .unwrap();
    assert_eq!(
        verdict.problems(),
        [
            "stdout line 1 is not an event: not JSON: expected a JSON value at byte 0",
            "event 2 (jobs_snapshot) answers command 1 but does not decode: jobs_snapshot: missing \"jobs\"",
        ]
    );
}
