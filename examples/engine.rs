//! An engine around a model call, on the crate's serve loop: a turn is
//! steps, a model call each, streaming its answer as deltas at a pace a
//! person sees; a prompt steer sent while it streams lands at the next
//! step, and `cancel` stops it; the loop answers everything else (refused
//! lines at once, even mid-turn; prompts queued one turn at a time; jobs,
//! goals, approvals, compaction) as `openseek serve` does.
//!
//!     cargo run --example engine < examples/session.jsonl
//!     cargo run --example controller -- cargo run -q --example engine

use serve_command::v2::serve::{Engine, EngineLoop, RunningTurn, StepInput, WorkError};
use serve_command::v2::Event;
use std::{io, time::Duration};

struct Model;

impl Engine for Model {
    fn turn(&self, turn: &mut RunningTurn<'_>) -> Result<String, WorkError> {
        let mut ask = turn.content().to_text();
        let mut answer = String::new();
        for step in 1.. {
            turn.emit(&Event::agent_step(step))?;
            // The step boundary: the prompt steers sent since the last one.
            for input in turn.steers()? {
                if let StepInput::Prompt(more) = input {
                    ask = format!("{ask}\n{}", more.to_text());
                }
            }
            for word in model(&ask) {
                // The model's latency, cut short by `cancel`.
                if turn.wait_cancelled(Duration::from_millis(50)) {
                    return Err("cancelled".into());
                }
                turn.emit(&Event::assistant_delta(word.as_str()))?;
                answer.push_str(&word);
            }
            // Another step only for what was steered while this one ran.
            if !turn.steers_waiting() {
                break;
            }
            ask.clear();
        }
        turn.emit(&Event::assistant_message(answer.as_str()))?;
        Ok(answer)
    }
}

/// The model call, streamed: here, the prompt's words echoed back
/// (nothing to a step with no prompt, only command context).
fn model(prompt: &str) -> impl Iterator<Item = String> + '_ {
    let echo = (!prompt.is_empty()).then(|| "You asked:".to_owned());
    let words = prompt.split_whitespace().map(|word| format!(" {word}"));
    echo.into_iter().chain(words)
}

fn main() -> io::Result<()> {
    let stopped = EngineLoop::new(Model).serve(io::BufReader::new(io::stdin()), io::stdout())?;
    if let Some(error) = stopped {
        eprintln!("engine: stopping: {error}");
    }
    Ok(())
}
