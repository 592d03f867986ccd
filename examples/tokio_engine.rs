//! The engine of `examples/engine.rs` over tokio: the same events for the
//! same commands (tests/examples.rs holds the two to the same bytes),
//! with commands read by `CommandCodec` through a `FramedRead` on tokio's
//! stdin.
//!
//!     cargo run --example tokio_engine --features tokio < examples/session.jsonl
//!
//! An engine's own Cargo.toml needs, for this program:
//!
//!     [dependencies]
//!     serve-command = { version = "0.1", features = ["tokio"] }
//!     tokio = { version = "1", features = ["rt", "io-std", "io-util"] }
//!     tokio-util = { version = "0.7", features = ["codec"] }
//!     futures-util = { version = "0.3", default-features = false }

use futures_util::StreamExt;
use serve_command::v2::{
    ApprovalOutcome, Command, CommandCodec, Event, JobStopOutcome, PredictionOutcome,
};
use tokio::io::AsyncWriteExt;
use tokio_util::codec::FramedRead;

fn main() -> std::io::Result<()> {
    // One thread serves one pipe (as `#[tokio::main(flavor =
    // "current_thread")]` would, with tokio's `macros` feature).
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()?;
    runtime.block_on(serve())
}

async fn serve() -> std::io::Result<()> {
    let mut stdout = tokio::io::stdout();
    let mut commands = FramedRead::new(tokio::io::stdin(), CommandCodec::new());
    // `item?` fails only when reading stdin fails; a bad line is an item,
    // `Ok(Err(ReadError))`, so one bad line does not end the stream.
    while let Some(item) = commands.next().await {
        match item? {
            Ok(command) => {
                // A well-formed command the engine declines (a blank goal,
                // a command steer with an image) is answered as a bad line is.
                if let Some(event) = command.serve_refusal_event_line() {
                    stdout.write_all(event.as_bytes()).await?;
                    continue;
                }
                for event in answer(command) {
                    // One write per line: a line never interleaves.
                    stdout.write_all(event.to_line().as_bytes()).await?;
                }
            }
            Err(error) => {
                // The event line is ready to write: JSON, one line, LF included.
                stdout.write_all(error.event_line().as_bytes()).await?;
                if error.is_stream_error() {
                    // As the reference engine: no more commands after a line
                    // that is not JSON; shut down as at end of input.
                    stdout.flush().await?;
                    eprintln!("engine: stopping: {error}");
                    break;
                }
            }
        }
    }
    stdout.flush().await
}

/// The events a command gets here. A real engine runs a turn for a prompt;
/// this one answers at once.
fn answer(command: Command) -> Vec<Event> {
    match command {
        Command::Prompt { content, .. } => {
            let answer = format!("You asked: {}", content.to_text());
            vec![
                Event::agent_step(1),
                Event::assistant_message(answer.clone()),
                Event::agent_finished(answer),
            ]
        }
        Command::Steer {
            kind,
            content,
            submission_id,
            ..
        } => vec![Event::steer_applied(kind, content, submission_id)],
        Command::JobsSnapshot { request_id, .. } => vec![Event::jobs_snapshot(request_id, vec![])],
        Command::JobStop {
            request_id,
            generation,
            job_id,
            ..
        } => vec![Event::job_stop_result(
            request_id,
            generation,
            job_id,
            JobStopOutcome::NotFound,
        )],
        Command::GoalSet { text, .. } => vec![Event::goal_updated(Some(text))],
        Command::GoalClear => vec![Event::goal_updated(None)],
        Command::ApprovalDecision { id, allow, .. } => {
            let outcome = if allow {
                ApprovalOutcome::AllowedOnce
            } else {
                ApprovalOutcome::Rejected
            };
            vec![Event::approval_resolved(id, outcome)]
        }
        Command::Predict {
            request_id,
            source_sequence,
            ..
        } => vec![Event::prediction_result(
            request_id,
            source_sequence,
            PredictionOutcome::Skipped,
        )],
        Command::Compact => vec![
            Event::compaction_started(0, 0),
            Event::compaction_finished(0, 0, "nothing yet"),
        ],
        Command::Cancel => vec![Event::agent_aborted("cancelled")],
        // `Command` is non-exhaustive: what this engine does not know yet
        // (and `cancel_prediction`, which upstream answers with nothing) gets
        // no event.
        _ => vec![],
    }
}
