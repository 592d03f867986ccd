//! `decode`: command lines in, the engine's answers out.

use crate::output::{self, io_error, stdout_error};
use clap::Args;
use serve_command::{Command, CommandReader, LineError, ReadError, DEFAULT_MAX_LINE_LEN};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

/// Decode command lines as an engine would.
///
/// For each line that is not blank, prints the command's canonical line, or
/// the `command_error` event the engine would answer with. A blank line
/// (only spaces, tabs and CRs) prints nothing: the engine skips it. Unlike
/// the reference engine, which stops reading at a line that is not JSON,
/// this goes on to the end of the input.
///
/// Exit status: 0 when every line was a command or blank, 1 when any line
/// was refused, 2 on a usage or I/O error. When stdout is closed early
/// (`| head -1`) it stops reading and exits 0.
#[derive(Args)]
#[command(after_help = "Examples:
  serve-command decode session.jsonl
  printf '{\"command\":\"cancel\"}\\n{\"command\":\"nap\"}\\n' | serve-command decode --summary")]
pub struct Decode {
    /// The controller's output to read (`-` or none: stdin).
    file: Option<PathBuf>,
    /// Refuse lines longer than this many bytes (LF excluded); a refused
    /// line is skipped without being buffered.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_LINE_LEN)]
    max_line_len: usize,
    /// At the end, print to stderr the totals (`N lines: A commands, B
    /// refused (C not JSON, D too long), E blank`), then a count per
    /// command and per error.
    #[arg(long)]
    summary: bool,
    /// Prefix each output line with its input line's number (from 1,
    /// blank lines counted) and a tab.
    #[arg(long)]
    line_numbers: bool,
}

pub fn run(args: Decode) -> output::Result<ExitCode> {
    let (name, input): (String, Box<dyn BufRead>) = match &args.file {
        Some(path) if path.as_os_str() != "-" => {
            let name = path.display().to_string();
            let file = File::open(path).map_err(|e| io_error(&name, &e))?;
            (name, Box::new(BufReader::with_capacity(64 * 1024, file)))
        }
        _ => ("stdin".to_owned(), Box::new(io::stdin().lock())),
    };
    let mut out = BufWriter::with_capacity(64 * 1024, io::stdout().lock());
    let mut tally = Tally::default();
    for line in lines(input, args.max_line_len) {
        let (number, line) = match line {
            Ok(line) => line,
            Err(e) => {
                // What was decoded before the error is still worth having.
                out.flush().map_err(stdout_error)?;
                return Err(io_error(&name, &e));
            }
        };
        write_line(&mut out, &args, number, &line).map_err(stdout_error)?;
        tally.add(&line, args.summary);
    }
    out.flush().map_err(stdout_error)?;
    drop(out);
    if args.summary {
        output::to_stderr(&tally.report())?;
    }
    Ok(if tally.refused > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// What one physical input line turned into.
enum Line {
    /// Only spaces, tabs and CRs: the engine skips it.
    Blank,
    Decoded(Result<Command, ReadError>),
}

/// Every physical line of `input`, blank ones included, with its number.
/// The one place where the CLI decodes lines.
fn lines(input: impl BufRead, max: usize) -> impl Iterator<Item = io::Result<(u64, Line)>> {
    let mut reader = CommandReader::with_max_line_len(input, max);
    // Lines handed out so far; the reader's next item, held back while the
    // blank lines before it are handed out.
    let mut done = 0u64;
    let mut next: Option<(u64, Result<Command, ReadError>)> = None;
    let mut ended = false;
    std::iter::from_fn(move || loop {
        if let Some((number, _)) = &next {
            done += 1;
            if done < *number {
                return Some(Ok((done, Line::Blank)));
            }
            let (number, item) = next.take()?;
            return Some(Ok((number, Line::Decoded(item))));
        }
        if ended {
            // Blank lines at the end: the reader counted them.
            if done < reader.line_number() {
                done += 1;
                return Some(Ok((done, Line::Blank)));
            }
            return None;
        }
        match reader.next() {
            None => ended = true,
            Some(Err(ReadError::Io(e))) => {
                ended = true;
                done = u64::MAX;
                return Some(Err(e));
            }
            Some(item) => next = Some((reader.line_number(), item)),
        }
    })
}

fn write_line(out: &mut impl Write, args: &Decode, number: u64, line: &Line) -> io::Result<()> {
    let line = match line {
        Line::Blank => return Ok(()),
        Line::Decoded(line) => line,
    };
    if args.line_numbers {
        write!(out, "{number}\t")?;
    }
    match line {
        Ok(command) => command.write_line(out),
        Err(error) => out.write_all(error.event_line().as_bytes()),
    }
}

/// The counts `--summary` prints.
#[derive(Default)]
struct Tally {
    lines: u64,
    commands: u64,
    refused: u64,
    not_json: u64,
    too_long: u64,
    blank: u64,
    /// Per command and per error, only with `--summary`.
    kinds: BTreeMap<String, u64>,
}

impl Tally {
    fn add(&mut self, line: &Line, per_kind: bool) {
        self.lines += 1;
        let kind = match line {
            Line::Blank => {
                self.blank += 1;
                return;
            }
            Line::Decoded(Ok(command)) => {
                self.commands += 1;
                if !per_kind {
                    return;
                }
                name(command).to_owned()
            }
            Line::Decoded(Err(error)) => {
                self.refused += 1;
                match error {
                    ReadError::Line {
                        error: LineError::Syntax(_),
                        ..
                    } => self.not_json += 1,
                    ReadError::TooLong { .. } => self.too_long += 1,
                    _ => {}
                }
                if !per_kind {
                    return;
                }
                error_kind(error)
            }
        };
        *self.kinds.entry(kind).or_default() += 1;
    }

    fn report(&self) -> String {
        let mut report = format!(
            "{} lines: {} commands, {} refused ({} not JSON, {} too long), {} blank\n",
            self.lines, self.commands, self.refused, self.not_json, self.too_long, self.blank
        );
        for (what, n) in &self.kinds {
            report += &format!("{n:>10}  {what}\n");
        }
        report
    }
}

/// The wire name of a command, for the summary; goal's two actions apart.
fn name(command: &Command) -> &'static str {
    #[allow(unreachable_patterns)] // `Command` is to become `#[non_exhaustive]`.
    match command {
        Command::Prompt { .. } => "prompt",
        Command::Steer { .. } => "steer",
        Command::Compact => "compact",
        Command::Cancel => "cancel",
        Command::GoalSet { .. } => "goal set",
        Command::GoalClear => "goal clear",
        Command::ApprovalDecision { .. } => "approval",
        _ => "other command",
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
