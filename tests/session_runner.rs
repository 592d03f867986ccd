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
    println!("{verdict}");
}
