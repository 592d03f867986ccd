//! The smallest real engine: it answers a prompt and `jobs_snapshot`, and
//! every line it cannot use with the `command_error` event that line is
//! owed. `examples/engine.rs` answers every command.
//!
//!     cargo run --example minimal_engine < examples/session.jsonl

use serve_command::v2::{Command, CommandReader, Event};
use std::io::{self, Write};

fn main() -> io::Result<()> {
    let mut stdout = io::stdout().lock();
    for item in CommandReader::new(io::stdin().lock()) {
        // A line that is not a command, and a command the engine declines (a
        // blank goal), get their `command_error` event line, LF included.
        let command = match item {
            Ok(command) => match command.serve_refusal_event_line() {
                Some(refusal) => {
                    stdout.write_all(refusal.as_bytes())?;
                    continue;
                }
                None => command,
            },
            Err(error) => {
                stdout.write_all(error.event_line().as_bytes())?;
                // After a line that is not JSON, the reference engine stops.
                if error.is_stream_error() {
                    break;
                }
                continue;
            }
        };
        let event = match command {
            Command::Prompt { content, .. } => Event::agent_finished(content.to_text()),
            Command::JobsSnapshot { request_id, .. } => Event::jobs_snapshot(request_id, vec![]),
            // `Command` is non-exhaustive: the rest, this engine ignores.
            _ => continue,
        };
        event.write_line(&mut stdout)?;
    }
    stdout.flush()
}
