//! Engines in process against generated sessions: the way an engine's
//! author fuzzes a Rust engine (the guide, "Fuzzing an engine"), on the
//! crate's own engines. Every event each writes is attributed by the
//! model and nothing is owed at the end, whatever the session.
#![cfg(all(feature = "workbench", feature = "proptest"))]

use proptest::prelude::*;
use serve_command::v2::serve::{Engine, EngineLoop, RunningTurn, WorkError};
use serve_command::workbench::{sessions, MockEngine, Runner};
use std::time::Duration;

/// The README's engine: one canned turn.
struct Echo;

impl Engine for Echo {
    fn turn(&self, turn: &mut RunningTurn<'_>) -> Result<String, WorkError> {
        Ok(turn.content().to_text())
    }
}

fn runner() -> Runner {
    Runner::new().turn_timeout(Duration::from_secs(10))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// The mock engine, in order: deterministic, so a failure shrinks to
    /// a session that fails every time.
    #[test]
    fn the_mock_engine_keeps_every_promise(session in sessions(6)) {
        let verdict = runner().run_with(&session, |input, output| MockEngine::new().serve(input, output));
        prop_assert!(verdict.holds(), "{}\n{verdict}", session.to_jsonl());
    }

    /// The mock engine at a pace, reading commands while its turns run.
    #[test]
    fn the_paced_mock_engine_keeps_every_promise(session in sessions(6)) {
        let verdict = runner().run_with(&session, |input, output| {
            MockEngine::new().delay(Duration::from_millis(2)).serve(input, output)
        });
        prop_assert!(verdict.holds(), "{}\n{verdict}", session.to_jsonl());
    }

    /// An engine on the serve loop, reading commands as they come.
    #[test]
    fn an_engine_on_the_loop_keeps_every_promise(session in sessions(6)) {
        let verdict = runner().run_with(&session, |input, output| EngineLoop::new(Echo).serve(input, output));
        prop_assert!(verdict.holds(), "{}\n{verdict}", session.to_jsonl());
    }
}
