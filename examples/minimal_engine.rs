//! The smallest real engine: a canned turn on the crate's serve loop, which
//! answers every other command as `openseek serve` does (every line it
//! cannot use with the `command_error` that line is owed, steers, goals,
//! jobs, ...). `examples/engine.rs` is an engine around a model call.
//!
//!     cargo run --example minimal_engine < examples/session.jsonl

use serve_command::v2::serve::{Engine, EngineLoop, RunningTurn, WorkError};
use std::io;

struct Echo;

impl Engine for Echo {
    /// One turn: its answer, for `agent_finished`. A real engine writes
    /// its steps, deltas and tool results with `turn.emit(&event)`.
    fn turn(&self, turn: &mut RunningTurn<'_>) -> Result<String, WorkError> {
        Ok(turn.content().to_text())
    }
}

fn main() -> io::Result<()> {
    // A canned turn takes no time: in order, each command is read once the
    // turn before it has ended, so the output depends on the input alone.
    let stopped = EngineLoop::new(Echo)
        .in_order()
        .serve(io::BufReader::new(io::stdin()), io::stdout())?;
    // After a line that is not JSON, the loop stops reading, as upstream's.
    if let Some(error) = stopped {
        eprintln!("engine: stopping: {error}");
    }
    Ok(())
}
