//! The README's engine on tokio: the same canned turn on the crate's serve
//! loop for tokio, which writes what `examples/minimal_engine.rs` writes,
//! byte for byte (tests/examples.rs holds them to it).
//!
//!     cargo run --example tokio_engine --features tokio < examples/session.jsonl
//!
//! An engine's own Cargo.toml needs, for this program:
//!
//!     [dependencies]
//!     serve-command = { version = "0.1", features = ["tokio"] }
//!     tokio = { version = "1", features = ["rt", "io-std"] }

use serve_command::v2::serve::{RunningTurn, TokioEngine, TokioEngineLoop, WorkError};

struct Echo;

impl TokioEngine for Echo {
    /// One turn: its answer, for `agent_finished`. A real engine awaits
    /// its model here, writing its events with `turn.emit(&event)`.
    async fn turn(&self, turn: &mut RunningTurn<'static>) -> Result<String, WorkError> {
        Ok(turn.content().to_text())
    }
}

fn main() -> std::io::Result<()> {
    // One thread serves one pipe (as `#[tokio::main(flavor =
    // "current_thread")]` would, with tokio's `macros` feature).
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()?;
    // A canned turn takes no time: in order, the output depends on the
    // input alone.
    let engine = TokioEngineLoop::new(Echo).in_order();
    let stopped = runtime.block_on(engine.serve(tokio::io::stdin(), tokio::io::stdout()))?;
    if let Some(error) = stopped {
        eprintln!("engine: stopping: {error}");
    }
    Ok(())
}
