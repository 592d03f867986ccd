//! What a failed read or write means for the exit status, in one place.
//!
//! Nothing here panics: `println!`/`eprintln!` panic when their stream
//! fails (`2>/dev/full`), so every write goes through `Write` and its error
//! is handled.

use std::fmt::Display;
use std::io::{self, Write};
use std::process::ExitCode;

/// Why a subcommand stopped early.
#[derive(Debug)]
pub enum Failure {
    /// Whoever read stdout has gone (`| head -1`): they have what they
    /// wanted, so stop quietly with exit 0.
    Closed,
    /// Exit 2 with `serve-command: <message>` on stderr.
    Error(String),
}

pub type Result<T> = std::result::Result<T, Failure>;

/// `<what>: <error>`, where `what` names the file or stream.
pub fn io_error(what: impl Display, e: &io::Error) -> Failure {
    Failure::Error(format!("{what}: {}", describe(e)))
}

/// A failed write to stdout: quiet when the reader has gone.
pub fn stdout_error(e: io::Error) -> Failure {
    if e.kind() == io::ErrorKind::BrokenPipe {
        Failure::Closed
    } else {
        io_error("stdout", &e)
    }
}

/// An I/O error's message without Rust's ` (os error N)` suffix, which
/// repeats the message as a number.
pub fn describe(e: &io::Error) -> String {
    let text = e.to_string();
    match e.raw_os_error() {
        Some(code) => text
            .strip_suffix(&format!(" (os error {code})"))
            .map_or_else(|| text.clone(), str::to_owned),
        None => text,
    }
}

/// Writes `text` to stderr. A failure there is still a failure (exit 2),
/// though there is nowhere left to say so.
pub fn to_stderr(text: &str) -> Result<()> {
    let mut err = io::stderr().lock();
    err.write_all(text.as_bytes())
        .and_then(|()| err.flush())
        .map_err(|e| io_error("stderr", &e))
}

/// The exit status for a subcommand's result, with its message, if any.
pub fn exit(result: Result<ExitCode>) -> ExitCode {
    match result {
        Ok(code) => code,
        Err(Failure::Closed) => ExitCode::SUCCESS,
        Err(Failure::Error(message)) => {
            // Nothing more to do if stderr fails too.
            let _ = writeln!(io::stderr().lock(), "serve-command: {message}");
            ExitCode::from(2)
        }
    }
}
