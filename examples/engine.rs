//! An engine around a model call, on the crate's serve loop: a turn streams
//! its answer as deltas, takes the steers sent meanwhile at its step
//! boundary, and stops when cancelled; the loop answers everything else
//! (refused lines at once, even mid-turn; prompts queued one turn at a
//! time; jobs, goals, approvals, compaction) as `openseek serve` does.
//!
//!     cargo run --example engine < examples/session.jsonl
//!     cargo run --example controller -- cargo run -q --example engine

use serve_command::v2::serve::{Engine, EngineLoop, RunningTurn, StepInput, WorkError};
use serve_command::v2::Event;
use std::{io, time::Duration};

struct Model;

impl Engine for Model {
    fn turn(&self, turn: &mut RunningTurn<'_>) -> Result<String, WorkError> {
        let mut prompt = turn.content().to_text();
        turn.emit(&Event::agent_step(1))?;
        // The step boundary: prompt steers sent since the prompt land here.
        for input in turn.steers()? {
            if let StepInput::Prompt(more) = input {
                prompt = format!("{prompt}\n{}", more.to_text());
            }
        }
        let mut answer = String::new();
        for word in model(&prompt) {
            // The model's latency, cut short by `cancel`.
            if turn.wait_cancelled(Duration::from_millis(20)) {
                return Err("cancelled".into());
            }
            turn.emit(&Event::assistant_delta(word.as_str()))?;
            answer.push_str(&word);
        }
        turn.emit(&Event::assistant_message(answer.as_str()))?;
        Ok(answer)
    }
}

/// The model call, streamed: here, the prompt's words echoed back.
fn model(prompt: &str) -> impl Iterator<Item = String> + '_ {
    let echo = std::iter::once("You asked:".to_owned());
    echo.chain(prompt.split_whitespace().map(|word| format!(" {word}")))
}

fn main() -> io::Result<()> {
    let stopped = EngineLoop::new(Model).serve(io::BufReader::new(io::stdin()), io::stdout())?;
    if let Some(error) = stopped {
        eprintln!("engine: stopping: {error}");
    }
    Ok(())
}
