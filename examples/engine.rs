//! An engine's command loop in today's protocol (`v2`), reading stdin the
//! way the reference engine does and answering on stdout with real events,
//! one line each: blank lines are skipped; each command is acted on (here,
//! with a canned answer in place of a model); a line that is JSON but not
//! a command, or a command the engine itself refuses (a blank goal), gets
//! a `command_error` event and reading goes on; a line that is not JSON
//! (or too long, or a failed read) gets a `command_error` event and ends
//! the session.
//!
//!     cargo run --example engine < examples/session.jsonl
//!     cargo run --example controller -- cargo run -q --example engine
//!
//! `session.jsonl` ends with a line that was cut off mid-string, then one
//! more `cancel`: the engine answers the cut line and stops, so that last
//! `cancel` gets no answer, and the engine says why on stderr.

use serve_command::v2::{
    ApprovalOutcome, Command, CommandReader, Event, JobStopOutcome, PredictionOutcome,
};
use std::io::{self, Write};

fn main() -> io::Result<()> {
    let mut stdout = io::stdout().lock();
    for item in CommandReader::new(io::stdin().lock()) {
        match item {
            Ok(command) => {
                // A well-formed command the engine declines (a blank goal,
                // a command steer with an image) is answered as a bad line is.
                if let Some(event) = command.serve_refusal_event_line() {
                    stdout.write_all(event.as_bytes())?;
                    continue;
                }
                for event in answer(command) {
                    // One write per line: a line never interleaves.
                    event.write_line(&mut stdout)?;
                }
            }
            Err(error) => {
                // The event line is ready to write: JSON, one line, LF included.
                stdout.write_all(error.event_line().as_bytes())?;
                if error.is_stream_error() {
                    // As the reference engine: no more commands after a line
                    // that is not JSON; shut down as at end of input.
                    stdout.flush()?;
                    eprintln!("engine: stopping: {error}");
                    break;
                }
            }
        }
    }
    stdout.flush()
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
