//! `decode`: command lines in, the engine's answers out.

use crate::output::{self, io_error, stdout_error};
use crate::revision::{Revision, Summarized, NO_EVENTS_IN_V1};
use crate::size::{self, Size};
use clap::{Args, ValueEnum};
use serve_command::generic::{CommandReader, LineError, ReadError, DEFAULT_MAX_LINE_LEN};
use serve_command::{v1::Command, v2};
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::rc::Rc;

/// Decode command lines as an engine would.
///
/// For each line that is not blank, prints the command's canonical line, or
/// the `command_error` event the engine would answer with. A blank line
/// (only spaces, tabs and CRs) prints nothing: the engine skips it. Unlike
/// the reference engine, which stops reading at a line that is not JSON,
/// this goes on to the end of the input.
///
/// With `--output verdict`, prints instead one line for every input line,
/// blank ones included, in the line protocol that `conform` speaks (the
/// reference oracle's): `OK <canonical line>`, `ERR <message>` (a LF or CR
/// in the message written as `\n`, `\r`), or `NOTJSON` (a blank line too:
/// it is not JSON). A line longer than --max-line-len is not judged and
/// prints `TOOLONG`.
///
/// Lines are read as the revision reads them (`--revision v1`: the first revision's,
/// which knows no `content`, images, tagged steers or job commands) and
/// answered with its canonical lines and error strings.
///
/// With `--serve-policy`, answers as the engine (`openseek serve`) does: a
/// command it declines (v1 and v2: a goal whose text is blank; v2: a
/// command steer with an image) is refused like a line that is not a
/// command, with a `command_error` event (`ERR <message>` as a verdict),
/// and `--summary` counts it apart, as refused by the serve policy.
///
/// Exit status: 0 when every line was a command or blank (with `--output
/// verdict`: always, a refusal is a verdict), 1 when any line was refused,
/// 2 on a usage or I/O error. `--exit-zero` makes it 0 whatever the lines
/// were (2 still means a usage or I/O error), for a pipeline under `set -o
/// pipefail` that only wants the answers. When stdout is closed early (`|
/// head -1`) it stops reading and exits 0.
#[derive(Args)]
#[command(after_help = "Examples:
  serve-command decode session.jsonl
  serve-command decode --summary monday.jsonl tuesday.jsonl
  printf '{\"command\":\"cancel\"}\\n{\"command\":\"nap\"}\\n' | serve-command decode --summary
  serve-command decode -o verdict < lines.txt
  serve-command encode prompt \"look\" --image shot.png | serve-command decode
  serve-command decode --revision v1 seed-session.jsonl")]
pub struct Decode {
    /// The controller's output to read, each file a stream of its own, in
    /// order (`-` or none: stdin). With several, `--line-numbers` names the
    /// file too (`FILE:N`), and `--summary` totals them all.
    files: Vec<PathBuf>,
    /// Refuse lines longer than this (LF excluded): bytes, or with KiB, MiB
    /// or GiB (`65536`, `64KiB`); a refused line is skipped without being
    /// buffered.
    #[arg(long, value_name = "SIZE", default_value_t = Size(DEFAULT_MAX_LINE_LEN), value_parser = size::parse)]
    max_line_len: Size,
    /// At the end, print to stderr the totals (`N lines: A commands, B
    /// refused (C not JSON, D too long, E not a command), F blank`; with
    /// --serve-policy, `(C not JSON, D too long, E not a command, G by the
    /// serve policy)`: the parts add up to B), then a count per command,
    /// per error and per refusal.
    #[arg(long)]
    summary: bool,
    /// Refuse the commands the engine refuses, as it does.
    #[arg(long)]
    serve_policy: bool,
    /// Prefix each output line with its input line's number (from 1,
    /// blank lines counted) and a tab.
    #[arg(short = 'n', long)]
    line_numbers: bool,
    /// What to print for each line.
    // `--format` was its name: the alias keeps scripts working, hidden
    // because `--format events` read like `--events`.
    #[arg(short, long, value_enum, value_name = "KIND", alias = "format", default_value_t = Output::Wire)]
    output: Output,
    /// Read the engine's events instead, as a controller reads its stdout:
    /// each event's line as upstream writes it, each line that is not an
    /// event's reason on stderr (exit 1 if any); with `--output verdict`,
    /// `OK <line>`, `NONE` (JSON but not an event) or `NOTJSON`, as
    /// `oracle-events` prints them.
    #[arg(long, conflicts_with = "serve_policy")]
    events: bool,
    /// Exit 0 whatever the lines were, refused ones too (2 still means a
    /// usage or I/O error).
    #[arg(long)]
    exit_zero: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Output {
    /// The lines as an engine writes them: the command's canonical line
    /// or a `command_error` event, nothing for a blank line (with
    /// --events: each event's line as upstream writes it).
    // `events` was its name, under `--format`.
    #[value(alias = "events")]
    Wire,
    /// The conformance line protocol: `OK <line>`, `ERR <message>`,
    /// `NOTJSON` or `TOOLONG`, one per input line (with --events: `OK
    /// <line>`, `NONE`, `NOTJSON` or `TOOLONG`).
    Verdict,
}

pub fn run(args: Decode, revision: Revision) -> output::Result<ExitCode> {
    if args.events {
        return match revision {
            Revision::V1 => Err(output::Failure::Error(NO_EVENTS_IN_V1.to_owned())),
            Revision::V2 => run_events(&args),
        };
    }
    match revision {
        Revision::V1 => run_as::<Command>(&args),
        Revision::V2 => run_as::<v2::Command>(&args),
    }
}

/// The one decoding loop, for either revision.
fn run_as<C: Summarized>(args: &Decode) -> output::Result<ExitCode> {
    let mut tally = Tally::default();
    each_line::<C>(args, |out, number, line| {
        let line = if args.serve_policy {
            line.under_serve_policy()
        } else {
            line
        };
        write_line(out, args, number, &line)?;
        tally.add(&line, args.summary);
        Ok(())
    })?;
    if args.summary {
        output::to_stderr(&tally.report(args.serve_policy))?;
    }
    Ok(exit_code(args, tally.refused))
}

/// `--events`: the engine's output read as a controller reads it, each
/// line's event written back as upstream writes it; with `--output
/// verdict`, `oracle-events`'s line protocol (`OK <line>`, `NONE`,
/// `NOTJSON`, and `TOOLONG` over the limit).
fn run_events(args: &Decode) -> output::Result<ExitCode> {
    let (mut events, mut refused, mut blank) = (0u64, 0u64, 0u64);
    let mut kinds: BTreeMap<String, u64> = BTreeMap::new();
    let mut reasons: Vec<String> = Vec::new();
    each_line::<v2::Event>(args, |out, Number(file, number), line| {
        if args.line_numbers && (args.output == Output::Verdict || !matches!(line, Line::Blank)) {
            write!(out, "{}{number}\t", file.unwrap_or(""))?;
        }
        match line {
            Line::Blank => {
                blank += 1;
                if args.output == Output::Verdict {
                    out.write_all(b"NOTJSON\n")?;
                }
            }
            Line::Decoded(Ok(event)) | Line::Refused(event, _) => {
                events += 1;
                *kinds.entry(event.name().to_owned()).or_default() += 1;
                if args.output == Output::Verdict {
                    out.write_all(b"OK ")?;
                }
                event.write_line(&mut *out)?;
            }
            Line::Decoded(Err(error)) => {
                refused += 1;
                let verdict: &[u8] = match &error {
                    v2::EventReadError::TooLong { .. } => b"TOOLONG\n",
                    v2::EventReadError::NotJson { .. } => b"NOTJSON\n",
                    _ => b"NONE\n",
                };
                if args.output == Output::Verdict {
                    out.write_all(verdict)?;
                } else {
                    reasons.push(format!("{}{error}\n", file.unwrap_or("")));
                }
                if args.summary {
                    *kinds
                        .entry(format!("not an event: {}", event_error_kind(&error)))
                        .or_default() += 1;
                }
            }
        }
        // The reasons go to stderr as they come, after the lines before them.
        if !reasons.is_empty() {
            out.flush()?;
            let text: String = reasons.drain(..).collect();
            let mut err = io::stderr().lock();
            err.write_all(text.as_bytes())?;
        }
        Ok(())
    })?;
    if args.summary {
        let mut report = format!(
            "{} lines: {events} events, {refused} not events, {blank} blank\n",
            events + refused + blank
        );
        for (what, n) in &kinds {
            report += &format!("{n:>10}  {what}\n");
        }
        output::to_stderr(&report)?;
    }
    Ok(exit_code(args, refused))
}

/// 1 when a line was refused, unless the output is verdicts (a refusal is
/// then an answer, not a failure) or --exit-zero said so.
fn exit_code(args: &Decode, refused: u64) -> ExitCode {
    if refused > 0 && args.output == Output::Wire && !args.exit_zero {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// A line that is not an event, grouped for the summary: the reason
/// without what differs from line to line.
fn event_error_kind(error: &v2::EventReadError) -> String {
    match error {
        v2::EventReadError::NotAnEvent { error, .. } => match error {
            v2::EventError::UnknownEvent(_) => "unknown event".to_owned(),
            e => e.to_string(),
        },
        v2::EventReadError::NotJson { .. } => "not JSON".to_owned(),
        v2::EventReadError::TooLong { .. } => "too long".to_owned(),
        other => other.to_string(),
    }
}

/// Every line of every input file (stdin for none, or `-`), in order, to
/// `each`, with its number; stdout flushed before each read that would
/// wait. Stops at the first file that cannot be opened or read, after what
/// came before it.
fn each_line<C: serve_command::generic::Message>(
    args: &Decode,
    mut each: impl FnMut(&mut BufWriter<io::StdoutLock<'static>>, Number<'_>, Line<C>) -> io::Result<()>,
) -> output::Result<()> {
    let out = Rc::new(RefCell::new(BufWriter::with_capacity(
        64 * 1024,
        io::stdout().lock(),
    )));
    let stdin = [PathBuf::from("-")];
    let files = if args.files.is_empty() {
        &stdin[..]
    } else {
        &args.files[..]
    };
    for path in files {
        let (name, input): (String, Box<dyn Read>) = if path.as_os_str() == "-" {
            ("stdin".to_owned(), Box::new(io::stdin().lock()))
        } else {
            let name = path.display().to_string();
            // What the files before it gave is still worth having.
            let file = File::open(path).map_err(|e| {
                let _ = out.borrow_mut().flush();
                io_error(&name, &e)
            })?;
            (name, Box::new(file))
        };
        // Named only when there are several: one file's lines are numbered
        // as stdin's are.
        let prefix = (files.len() > 1).then(|| format!("{name}:"));
        let mut lines = Lines::<_, C>::new(input, Rc::clone(&out), args.max_line_len.0);
        for line in &mut lines {
            let (number, line) = match line {
                Ok(line) => line,
                Err(e) => {
                    if let Some(e) = lines.flush_error() {
                        return Err(stdout_error(e));
                    }
                    // What was decoded before the error is still worth having.
                    out.borrow_mut().flush().map_err(stdout_error)?;
                    return Err(io_error(&name, &e));
                }
            };
            each(
                &mut out.borrow_mut(),
                Number(prefix.as_deref(), number),
                line,
            )
            .map_err(stdout_error)?;
        }
    }
    out.borrow_mut().flush().map_err(stdout_error)?;
    Ok(())
}

/// What one physical input line turned into.
enum Line<C: serve_command::generic::Message> {
    /// Only spaces, tabs and CRs: the engine skips it.
    Blank,
    Decoded(Result<C, C::ReadError>),
    /// A command the engine declines, with why (only with --serve-policy).
    Refused(C, &'static str),
}

impl<C: Summarized> Line<C> {
    /// The line as the engine sees it: a command it declines is refused.
    fn under_serve_policy(self) -> Self {
        match self {
            Line::Decoded(Ok(command)) => match command.refusal() {
                Some(message) => Line::Refused(command, message),
                None => Line::Decoded(Ok(command)),
            },
            other => other,
        }
    }
}

/// Every physical line of the input, blank ones included, with its number,
/// each as soon as it is read. The one place where the CLI decodes lines.
struct Lines<W, C> {
    reader: CommandReader<Input<W>, C>,
    /// The input has really ended.
    eof: Rc<Cell<bool>>,
    /// Why the input could not be read: the reader's error item says only
    /// that it failed (its type is the message's), this keeps the error.
    failed: Rc<Cell<Option<io::Error>>>,
}

impl<W: Write, C: serve_command::generic::Message> Lines<W, C> {
    fn new(input: Box<dyn Read>, out: Rc<RefCell<W>>, max: usize) -> Self {
        let eof = Rc::new(Cell::new(false));
        let failed = Rc::new(Cell::new(None));
        let input = Input {
            inner: BufReader::with_capacity(64 * 1024, input),
            out,
            line_ended: false,
            eof: Rc::clone(&eof),
            failed: Rc::clone(&failed),
            flush_error: None,
        };
        Lines {
            reader: CommandReader::with_max_line_len(input, max),
            eof,
            failed,
        }
    }

    /// Why the last read failed, if it was the flush of the output before it.
    fn flush_error(self) -> Option<io::Error> {
        self.reader.into_inner().flush_error
    }
}

impl<W: Write, C: serve_command::generic::Message> Iterator for Lines<W, C> {
    type Item = io::Result<(u64, Line<C>)>;

    fn next(&mut self) -> Option<Self::Item> {
        // `Input` ends the reader's stream after each LF, so each call to
        // the reader reads at most one line: a `None` that counted a line
        // skipped it as blank.
        loop {
            let before = self.reader.line_number();
            match self.reader.next() {
                Some(Err(e)) => {
                    return Some(match self.failed.take() {
                        Some(io) => Err(io),
                        None => Ok((self.reader.line_number(), Line::Decoded(Err(e)))),
                    })
                }
                Some(item) => return Some(Ok((self.reader.line_number(), Line::Decoded(item)))),
                None if self.reader.line_number() > before => {
                    return Some(Ok((self.reader.line_number(), Line::Blank)))
                }
                None if self.eof.get() => return None,
                None => {}
            }
        }
    }
}

/// The input as `Lines` hands it to the `CommandReader`: each line followed
/// by a false end of input, so the reader returns after every line, blank
/// ones included (it skips those without an item, and would otherwise read
/// on); and the output flushed before each read from the OS, so that a
/// program that writes a line and waits for its answer gets it (as the
/// reference oracle answers), while a file or a fast pipe is still answered
/// in big blocks.
struct Input<W> {
    inner: BufReader<Box<dyn Read>>,
    out: Rc<RefCell<W>>,
    /// The reader consumed a LF: the next `fill_buf` is a false end.
    line_ended: bool,
    /// The real end was read.
    eof: Rc<Cell<bool>>,
    /// The read (or the flush before it) failed, and why.
    failed: Rc<Cell<Option<io::Error>>>,
    /// A failed flush: stdout's error, not the input's.
    flush_error: Option<io::Error>,
}

impl<W: Write> Read for Input<W> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.fill_buf()?.read(buf)?;
        self.consume(n);
        Ok(n)
    }
}

impl<W: Write> BufRead for Input<W> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if std::mem::take(&mut self.line_ended) {
            return Ok(&[]);
        }
        if self.inner.buffer().is_empty() {
            if let Err(e) = self.out.borrow_mut().flush() {
                self.flush_error = Some(e);
                self.failed.set(Some(io::Error::other("stdout failed")));
                return Err(io::Error::other("stdout failed"));
            }
        }
        let chunk = match self.inner.fill_buf() {
            Ok(chunk) => chunk,
            Err(e) => {
                let kind = e.kind();
                // The reader retries an interruption: no failure yet.
                if kind != io::ErrorKind::Interrupted {
                    self.failed.set(Some(e));
                }
                return Err(kind.into());
            }
        };
        self.eof.set(chunk.is_empty());
        Ok(chunk)
    }

    fn consume(&mut self, n: usize) {
        // The reader consumes up to and including a LF, never past it.
        self.line_ended = n > 0 && self.inner.buffer().get(n - 1) == Some(&b'\n');
        self.inner.consume(n);
    }
}

/// A line's number in its file, after the file's name when there are
/// several (`session.jsonl:3`).
struct Number<'a>(Option<&'a str>, u64);

fn write_line<C: Summarized>(
    out: &mut impl Write,
    args: &Decode,
    Number(file, number): Number<'_>,
    line: &Line<C>,
) -> io::Result<()> {
    if args.output == Output::Wire && matches!(line, Line::Blank) {
        return Ok(());
    }
    if args.line_numbers {
        write!(out, "{}{number}\t", file.unwrap_or(""))?;
    }
    match (args.output, line) {
        (Output::Wire, Line::Blank) => Ok(()),
        (Output::Wire, Line::Decoded(Ok(command))) => command.encode_line(out),
        (Output::Wire, Line::Decoded(Err(error))) => out.write_all(error.event_line().as_bytes()),
        (Output::Wire, Line::Refused(command, _)) => {
            let event = command.refusal_event_line().expect("a refused command");
            out.write_all(event.as_bytes())
        }
        (Output::Verdict, Line::Refused(_, message)) => {
            writeln!(out, "ERR {}", escape_line_breaks(message))
        }
        (Output::Verdict, Line::Decoded(Ok(command))) => {
            out.write_all(b"OK ")?;
            command.encode_line(out)
        }
        (
            Output::Verdict,
            Line::Decoded(Err(ReadError::Line {
                error: LineError::Parse(e),
                ..
            })),
        ) => {
            writeln!(out, "ERR {}", escape_line_breaks(&e.to_string()))
        }
        (Output::Verdict, Line::Decoded(Err(ReadError::TooLong { .. }))) => {
            out.write_all(b"TOOLONG\n")
        }
        // Not JSON. (`ReadError::Io` ends `lines` before it gets here.)
        (Output::Verdict, _) => out.write_all(b"NOTJSON\n"),
    }
}

/// A message on one line, as the reference oracle writes it: LF as `\n`,
/// CR as `\r` (a backslash itself stays as it is).
pub fn escape_line_breaks(message: &str) -> String {
    message.replace('\n', "\\n").replace('\r', "\\r")
}

/// The counts `--summary` prints.
#[derive(Default)]
struct Tally {
    lines: u64,
    commands: u64,
    refused: u64,
    not_json: u64,
    too_long: u64,
    /// JSON, but not a command of the revision.
    not_command: u64,
    /// Commands the engine declines (with --serve-policy), counted in
    /// `refused` too.
    by_policy: u64,
    blank: u64,
    /// Per command and per error, only with `--summary`.
    kinds: BTreeMap<String, u64>,
}

impl Tally {
    fn add<C: Summarized>(&mut self, line: &Line<C>, per_kind: bool) {
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
                command.label().to_owned()
            }
            Line::Decoded(Err(error)) => {
                self.refused += 1;
                match error {
                    ReadError::Line {
                        error: LineError::Syntax(_),
                        ..
                    } => self.not_json += 1,
                    ReadError::TooLong { .. } => self.too_long += 1,
                    _ => self.not_command += 1,
                }
                if !per_kind {
                    return;
                }
                error_kind(error)
            }
            Line::Refused(_, message) => {
                self.refused += 1;
                self.by_policy += 1;
                if !per_kind {
                    return;
                }
                format!("refused: {message}")
            }
        };
        *self.kinds.entry(kind).or_default() += 1;
    }

    /// `serve_policy`: say how many the policy refused.
    fn report(&self, serve_policy: bool) -> String {
        let by_policy = if serve_policy {
            format!(", {} by the serve policy", self.by_policy)
        } else {
            String::new()
        };
        let mut report = format!(
            "{} lines: {} commands, {} refused ({} not JSON, {} too long, {} not a command{by_policy}), {} blank\n",
            self.lines,
            self.commands,
            self.refused,
            self.not_json,
            self.too_long,
            self.not_command,
            self.blank
        );
        for (what, n) in &self.kinds {
            report += &format!("{n:>10}  {what}\n");
        }
        report
    }
}

/// An error, grouped for the summary: the wire message, without the parts
/// that differ from line to line (byte offsets, line numbers).
fn error_kind<E: std::fmt::Display>(error: &ReadError<E>) -> String {
    match error {
        ReadError::Line {
            error: LineError::Parse(e),
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
