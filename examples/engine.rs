//! An engine's command loop, reading stdin the way the reference engine
//! does: blank lines are skipped, each command is acted on (here: printed),
//! a line that is JSON but not a command gets a `command_error` event and
//! reading goes on, and a line that is not JSON gets a `command_error` event
//! and ends the session.
//!
//!     cargo run --example engine < examples/session.jsonl
//!     cargo run --example controller | cargo run --example engine

use serve_command::{CommandReader, LineError, ReadError};
use std::io::{self, Write};

fn main() -> io::Result<()> {
    let mut stdout = io::stdout().lock();
    for item in CommandReader::new(io::stdin().lock()) {
        match item {
            Ok(command) => writeln!(stdout, "{command:?}")?,
            Err(error) => {
                // The event line is ready to write: JSON, one line, LF included.
                stdout.write_all(error.event_line().as_bytes())?;
                let fatal = matches!(
                    error,
                    ReadError::Line {
                        error: LineError::Syntax(_),
                        ..
                    } | ReadError::Io(_)
                );
                if fatal {
                    // As the reference engine: no more commands after a line
                    // that is not JSON; shut down as at end of input.
                    break;
                }
            }
        }
    }
    stdout.flush()
}
