//! The crate's own engines in process, driven by generated sessions on
//! the workbench's session runner: every event each writes is attributed
//! by the conversation's model, and nothing is owed at the end. This is
//! how an engine's author fuzzes a Rust engine (the guide, "Fuzzing an
//! engine"): put theirs in place of these.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serve_command::v2::serve::{Engine, EngineLoop, RunningTurn, WorkError};
use serve_command::workbench::{MockEngine, Runner, Session};
use std::time::Duration;

/// The README's engine: one canned turn.
struct Echo;

impl Engine for Echo {
    fn turn(&self, turn: &mut RunningTurn<'_>) -> Result<String, WorkError> {
        Ok(turn.content().to_text())
    }
}

fuzz_target!(|session: Session| {
    let runner = Runner::new().turn_timeout(Duration::from_secs(5));
    let verdict = runner.run_with(&session, |input, output| {
        MockEngine::new().serve(input, output)
    });
    assert!(
        verdict.holds(),
        "the mock engine\n{}\n{verdict}",
        session.to_jsonl()
    );
    let verdict = runner.run_with(&session, |input, output| {
        MockEngine::new()
            .delay(Duration::from_millis(1))
            .serve(input, output)
    });
    assert!(
        verdict.holds(),
        "the paced mock engine\n{}\n{verdict}",
        session.to_jsonl()
    );
    let verdict = runner.run_with(&session, |input, output| {
        EngineLoop::new(Echo).serve(input, output)
    });
    assert!(
        verdict.holds(),
        "an engine on the loop\n{}\n{verdict}",
        session.to_jsonl()
    );
});
