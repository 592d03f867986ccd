//! `decode`: command lines in, the engine's answers out.

use clap::Args;
use serve_command::{Command, CommandReader, LineError, ReadError, DEFAULT_MAX_LINE_LEN};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

/// Decode command lines as an engine would, one output line per input line.
///
/// For each line that is not blank, prints the command's canonical line, or
/// the `command_error` event the engine would answer with. Unlike the
/// reference engine, which stops reading at a line that is not JSON, this
/// goes on to the end of the input.
///
/// Exit status: 0 when every line was a command, 1 when any line was
/// refused, 2 on a usage or I/O error.
#[derive(Args)]
#[command(after_help = "Examples:
  serve-command decode session.jsonl
  printf '{\"command\":\"cancel\"}\\n{\"command\":\"nap\"}\\n' | serve-command decode --summary")]
pub struct Decode {
    /// The controller's output to read (default: stdin).
    file: Option<PathBuf>,
    /// Refuse lines longer than this many bytes (LF excluded); a refused
    /// line is skipped without being buffered.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_LINE_LEN)]
    max_line_len: usize,
    /// Print counts per command and per error to stderr at the end.
    #[arg(long)]
    summary: bool,
}

pub fn run(args: Decode) -> io::Result<ExitCode> {
    let input: Box<dyn BufRead> = match &args.file {
        Some(path) => Box::new(BufReader::with_capacity(
            64 * 1024,
            File::open(path)
                .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?,
        )),
        None => Box::new(io::stdin().lock()),
    };
    let mut out = BufWriter::with_capacity(64 * 1024, io::stdout().lock());
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    let mut refused = false;
    for item in CommandReader::with_max_line_len(input, args.max_line_len) {
        match item {
            Ok(command) => {
                command.write_line(&mut out)?;
                if args.summary {
                    *counts.entry(name(&command).to_owned()).or_default() += 1;
                }
            }
            Err(ReadError::Io(e)) => return Err(e),
            Err(error) => {
                refused = true;
                out.write_all(error.event_line().as_bytes())?;
                if args.summary {
                    *counts.entry(error_kind(&error)).or_default() += 1;
                }
            }
        }
    }
    out.flush()?;
    if args.summary {
        let mut err = io::stderr().lock();
        for (what, n) in &counts {
            writeln!(err, "{n:>10}  {what}")?;
        }
    }
    Ok(if refused {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The wire name of a command, for the summary.
fn name(command: &Command) -> &'static str {
    match command {
        Command::Prompt { .. } => "prompt",
        Command::Steer { .. } => "steer",
        Command::Compact => "compact",
        Command::Cancel => "cancel",
        Command::GoalSet { .. } => "goal set",
        Command::GoalClear => "goal clear",
        Command::ApprovalDecision { .. } => "approval",
    }
}

/// An error, grouped for the summary: the wire message, without the parts
/// that differ from line to line (byte offsets, line numbers).
fn error_kind(error: &ReadError) -> String {
    match error {
        ReadError::Line {
            error: LineError::Command(e),
            ..
        } => format!("error: {e}"),
        ReadError::Line {
            error: LineError::Syntax(e),
            ..
        } => format!("error: command stream: {}", e.reason()),
        ReadError::TooLong { max, .. } => {
            format!("error: command stream: line longer than {max} bytes")
        }
        other => format!("error: {other}"),
    }
}
