//! An engine's command loop in today's protocol (`v2`), reading stdin the
//! way the reference engine does: blank lines are skipped; each command is
//! acted on (here: printed); a line that is JSON but not a command, or a
//! command the engine itself refuses (a blank goal), gets a
//! `command_error` event and reading goes on; a line that is not JSON (or
//! too long, or a failed read) gets a `command_error` event and ends the
//! session.
//!
//!     cargo run --example engine < examples/session.jsonl
//!     cargo run --example controller | cargo run --example engine
//!
//! `session.jsonl` ends with a line that was cut off mid-string, then one
//! more `cancel`: the engine answers the cut line and stops, so that last
//! `cancel` gets no output, and the engine says why on stderr.

use serve_command::v2::{Command, CommandReader};
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
                match command {
                    Command::Cancel => writeln!(stdout, "cancelling the turn")?,
                    // `Command` is non-exhaustive: a command this engine does
                    // not know yet is handled like any other it only echoes.
                    command => writeln!(stdout, "{command:?}")?,
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
