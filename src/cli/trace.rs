//! `trace`: the conversation a log of the wire holds, each event with the
//! command it answers and the turn it belongs to.

use crate::html::Page;
use crate::output::{self, io_error, stdout_error};
use crate::revision::Revision;
use clap::{Args, ValueEnum};
use serve_command::v2::serve::record::{LogError, LogReader, Record, Wire};
use serve_command::v2::serve::{Attribution, Conversation, Direction, Owed};
use serve_command::v2::{Command, CommandReader, ContentPart};
use std::borrow::Cow;
use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

/// How much of a text the text format shows, in characters.
const SHORT: usize = 40;

/// Attribute every event of a log of the wire: the command it answers, the turn it belongs to
///
/// Reads LOG (stdin for none, or `-`), JSON Lines records of the lines
/// that crossed between a controller and an engine, in the order they
/// crossed: `serve-command tap --log` writes one, and so does a
/// controller's `serve_command::v2::serve::Recorder`. Each record is an
/// object with "dir" and, for "command" (the controller's lines) and
/// "event" (the engine's stdout), the line: "line" (its text without LF;
/// `null` for a line over the tap's limit) or "line_base64" (its bytes in
/// base64). An "n", when present, must be the record's place among its
/// direction's records (from 1): a log with records left out cannot be
/// attributed.
/// Other records ("stderr", "exit", "summary", any other "dir") are
/// skipped, and so are blank lines; a log cut short (no "exit" or
/// "summary" at its end) reads as far as it goes. The times ("t_ms", and
/// "t_us" in logs written since the tap added it) are read by --stats
/// only: logs with and without "t_us" read alike.
///
/// Each event is attributed by the model of upstream's serve loop
/// (`serve_command::v2::serve::Conversation`; docs/PROTOCOL.md, "What
/// answers what"): the command line it answers, and the command line that
/// started the turn it belongs to, each by its `n`.
///
/// --format text (the default) writes the conversation as a person reads
/// it, in the order the lines crossed: each command with its number and a
/// short form of the line; each event with its number and name, and the
/// command it answers; the events of a turn indented under `turn of
/// command N:` (repeated with `, continued` after a line outside the
/// turn); and at the end what is still owed.
///
/// --format jsonl writes one record per event line:
///
///   {"n":N,"event":NAME|null,"answers":N|null,"turn":N|null}
///
/// with "violation":REASON after "turn" when the event fits no rule of the
/// serve loop (it is then attributed to nothing); `"event":null` for a line
/// that is not an event. Then one record of what is still owed, each by
/// the `n` of its line:
///
///   {"owed":{"refused":[N,...],"requests":[...],"steers":[...],
///    "goals":[...],"approvals":[...],"running":N|null,"queued":[...]}}
///
/// `refused`: refused command lines no `command_error` answered;
/// `requests`: `jobs_snapshot` and `job_stop` unanswered;
/// `steers`, `goals`: steers and goals unanswered; `approvals`: the
/// `approval_requested` events (event `n`) the controller has not
/// answered; `running`: the command of the turn or compaction that has not
/// ended; `queued`: prompts and compactions that have not started.
///
/// It reads the log as it goes and holds one record at a time.
///
/// --stats writes, instead, what the session felt like, from the records'
/// times ("t_us", or else "t_ms" times 1000) and the same attribution. Per
/// kind of command line (its name: prompt, steer, cancel, compact, goal,
/// approval, jobs_snapshot, job_stop; a
/// refused line is `refused`; blank lines and lines the engine never read
/// are not counted), the time from the command line:
///
///   first        to the first event that answers it or belongs to its
///                turn (a prompt: its turn's first event; a request: its
///                reply; a compact: compaction_started)
///   first delta  a prompt's, to its turn's first assistant_delta or
///                reasoning_delta
///   end          to its end (a prompt: its turn's agent_finished,
///                turn_failed or agent_aborted; a compact: its compaction's
///                end; any other: the event that answers it)
///
/// each as its count and its p50, p95, p99 and max (percentiles by nearest
/// rank: the smallest sample with at least that percent of the samples at
/// or below it), in milliseconds with three decimals. A command line the
/// engine still owes at the end (as the owed record lists it) gives no
/// end sample: it is counted apart, as owed (a running turn's first
/// event still gives its first). Stalls: each gap longer than
/// --stall MS (default 1000) between consecutive events of one turn, with
/// the turn's command line, the events before and after it, and the gap.
/// Text: a table of kind, measure, count, p50, p95, p99, max; then `sent:`
/// per kind, `owed at the end:` per kind with the command lines, and the
/// stalls. --format jsonl: one record per kind, then one per stall:
///
///   {"kind":KIND,"sent":N,"owed":[N,...],"first":M,"first_delta":M,"end":M}
///   {"stall":{"turn":N,"after":N,"before":N,"gap_ms":MS}}
///
/// where M is {"count":N,"p50_ms":MS,"p95_ms":MS,"p99_ms":MS,"max_ms":MS}
/// (null times for no sample), "first_delta" for prompts only, and
/// "after", "before" the events' `n`. It holds the samples and the command
/// lines not yet ended.
///
/// --html FILE writes, instead, one self-contained page of the same
/// attribution (docs/GUIDE.md, "A session's page"): its lanes on a time
/// axis (line order where a record has no time), what stands out counted
/// and listed, each line's text, words and latency, the --stats table.
///
/// Exit status: 0 when the log is read to its end (whatever the events'
/// violations); 2 on a usage error, a log that cannot be read, or a record
/// that is not a JSON object, has no "dir", a command or event record with
/// no line, or a wrong "n"; with --stats, also a command or event record
/// with no time, or with a time before the last one's
/// (`serve-command: trace: LOG: line N: why`, N the record's line in LOG;
/// what was written before it stays written).
#[derive(Args)]
#[command(
    verbatim_doc_comment,
    after_help = "Examples:
  serve-command tap --log wire.jsonl -- openseek serve < session.jsonl
  serve-command trace wire.jsonl
  serve-command trace --format jsonl wire.jsonl | jq -c 'select(.violation)'
  serve-command trace --stats --stall 500 wire.jsonl
  serve-command trace --html session.html wire.jsonl   # open it in a browser"
)]
pub struct Trace {
    /// How to write the conversation: text (for a person) or jsonl.
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = Format::Text)]
    format: Format,
    /// Instead of the conversation, how the session felt: per command
    /// kind, the times to the first answer and to the end, a turn's time
    /// to its first delta, and the stalls.
    #[arg(long)]
    stats: bool,
    /// With --stats: list the gaps between a turn's events longer than MS
    /// milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 1000, requires = "stats")]
    stall: u64,
    /// Instead, write FILE: one self-contained page of the session's
    /// timeline (lanes, each command joined to what answered it, what
    /// stands out, the --stats figures), made from the same attribution.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["format", "stats"])]
    html: Option<PathBuf>,
    /// The log (`-` or none: stdin).
    #[arg(value_name = "LOG")]
    log: Option<PathBuf>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Text,
    Jsonl,
}

pub fn run(args: Trace, revision: Revision) -> output::Result<ExitCode> {
    if revision == Revision::V1 {
        return Err(output::Failure::Error(
            "trace needs --revision v2: the protocol's first revision has no events".to_owned(),
        ));
    }
    let (name, input): (String, Box<dyn Read>) = match &args.log {
        None => ("stdin".to_owned(), Box::new(io::stdin().lock())),
        Some(path) if path.as_os_str() == "-" => ("stdin".to_owned(), Box::new(io::stdin().lock())),
        Some(path) => {
            let name = path.display().to_string();
            let file = File::open(path).map_err(|e| {
                output::Failure::Error(format!("trace: {name}: {}", output::describe(&e)))
            })?;
            (name, Box::new(file))
        }
    };
    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(64 * 1024, stdout.lock());
    // Before reading: a page that cannot be written is said at once.
    let page = match &args.html {
        None => None,
        Some(path) => Some((
            path,
            File::create(path).map_err(|e| io_error(format!("trace: {}", path.display()), &e))?,
        )),
    };
    let stats = (args.stats || page.is_some()).then(|| Stats::new(args.stall));
    let mut trace = Tracer::new(args.format, stats);
    if page.is_some() {
        trace.html = Some(Page::new(name.clone()));
    }
    let read = trace.read(BufReader::with_capacity(64 * 1024, input), &mut out);
    // What was written before a bad record stays written.
    let flushed = out.flush();
    match read {
        Ok(()) => {}
        Err(Stop::Write(e)) => return Err(stdout_error(e)),
        Err(Stop::Read(e)) => return Err(io_error(format!("trace: {name}"), &e)),
        Err(Stop::Record(line, why)) => {
            return Err(output::Failure::Error(format!(
                "trace: {name}: line {line}: {why}"
            )))
        }
    }
    flushed.map_err(stdout_error)?;
    if let Some((path, file)) = page {
        let mut file = BufWriter::with_capacity(64 * 1024, file);
        trace
            .page()
            .and_then(|(page, owed, words, figures)| {
                page.finish(&owed, &words, figures.as_deref(), &mut file)
            })
            .and_then(|()| file.flush())
            .map_err(|e| io_error(format!("trace: {}", path.display()), &e))?;
        return Ok(ExitCode::SUCCESS);
    }
    trace.owed(&mut out).map_err(stdout_error)?;
    out.flush().map_err(stdout_error)?;
    Ok(ExitCode::SUCCESS)
}

/// `replay --html`: the view of one recording (`sfx` ends its element
/// ids), as `trace --html` draws it; why not, when it cannot be read.
pub fn view(log: impl BufRead, title: &str, sfx: &str, heading: &str) -> Result<String, String> {
    let mut trace = Tracer::new(Format::Text, Some(Stats::new(1000)));
    trace.html = Some(Page::new(title.to_owned()));
    trace.read(log, &mut io::sink()).map_err(|e| match e {
        Stop::Read(e) | Stop::Write(e) => e.to_string(),
        Stop::Record(line, why) => format!("line {line}: {why}"),
    })?;
    let (page, owed, words, figures) = trace.page().map_err(|e| e.to_string())?;
    Ok(page.view(sfx, heading, &owed, &words, figures.as_deref()))
}

/// Why reading the log stopped early.
enum Stop {
    Read(io::Error),
    Write(io::Error),
    /// A bad record: its line in the log, and why.
    Record(u64, String),
}

/// The conversation so far, and what the text format has shown of it.
struct Tracer {
    format: Format,
    conversation: Conversation,
    /// Records of each direction so far.
    commands: u64,
    events: u64,
    /// The command line after which the engine reads no more.
    stopped: Option<u64>,
    /// The turn whose events the text format is indenting, if the last line
    /// written was one of them.
    open_turn: Option<u64>,
    /// The last turn the text format wrote a heading for.
    last_turn: Option<u64>,
    /// With --stats: the figures, and nothing written until the end.
    stats: Option<Stats>,
    /// With --html: the page, written at the end (with the figures, when
    /// every record has a time), and nothing else written.
    html: Option<Page>,
}

/// What the engine made of a command line.
enum Taken<'a> {
    /// Not read: the engine stopped reading at this command line.
    NotRead(u64),
    /// Over the tap's limit: refused, and the end of the engine's reading.
    TooLong,
    Blank,
    /// Refused: not a command.
    NotACommand(&'a [u8]),
    /// Refused by serve's policy: the command's name and why.
    Declined(&'static str, String),
    Read(Command),
}

impl Taken<'_> {
    /// What the page names it: its command's name, or what became of it.
    fn label(&self) -> &'static str {
        match self {
            Taken::NotRead(_) => "not read",
            Taken::Blank => "blank",
            Taken::TooLong | Taken::NotACommand(_) | Taken::Declined(..) => "refused",
            Taken::Read(command) => command.name(),
        }
    }

    /// The kind `--stats` counts it under; `None` for a line the engine
    /// owes nothing (blank, or not read).
    fn kind(&self) -> Option<&'static str> {
        match self {
            Taken::NotRead(_) | Taken::Blank => None,
            Taken::TooLong | Taken::NotACommand(_) | Taken::Declined(..) => Some("refused"),
            Taken::Read(command) => Some(command.name()),
        }
    }
}

impl Tracer {
    fn new(format: Format, stats: Option<Stats>) -> Tracer {
        Tracer {
            stats,
            format,
            conversation: Conversation::new(),
            commands: 0,
            events: 0,
            stopped: None,
            open_turn: None,
            last_turn: None,
            html: None,
        }
    }

    /// Reads every record of `input`, writing the attributions to `out`.
    fn read(&mut self, input: impl BufRead, out: &mut impl Write) -> Result<(), Stop> {
        let mut log = LogReader::new(input);
        while let Some(record) = log.read_record().map_err(|e| match e {
            LogError::Read(e) => Stop::Read(e),
            LogError::Record(at, why) => Stop::Record(at, why),
        })? {
            if let Some(page) = &mut self.html {
                page.time(record.t_us, record.at);
            }
            if let Some(stats) = &mut self.stats {
                match stats.time(&record) {
                    Ok(t) => stats.now = t,
                    // The page does without the figures: its axis is then
                    // line order, as it says.
                    Err(_) if self.html.is_some() => self.stats = None,
                    Err(why) => return Err(Stop::Record(record.at, why)),
                }
            }
            let written = if record.direction == Direction::Command {
                self.command(&record.line, out)
            } else {
                self.event(&record.line, out)
            };
            written.map_err(Stop::Write)?;
        }
        Ok(())
    }

    fn command(&mut self, line: &Wire, out: &mut impl Write) -> io::Result<()> {
        self.commands += 1;
        let n = self.commands;
        let bytes = match line {
            Wire::Bytes(bytes) => bytes.as_slice(),
            // Refused, and the end of the engine's reading, as for a line
            // that is not JSON.
            Wire::TooLong => b"x",
        };
        self.conversation.command(bytes);
        if self.format == Format::Jsonl && self.stats.is_none() {
            return Ok(());
        }
        let taken = match (self.stopped, line) {
            (Some(k), _) => Taken::NotRead(k),
            (None, Wire::TooLong) => {
                self.stopped = Some(n);
                Taken::TooLong
            }
            (None, Wire::Bytes(bytes)) => match CommandReader::new(&bytes[..]).next() {
                None => Taken::Blank,
                Some(Err(error)) => {
                    if error.is_stream_error() {
                        self.stopped = Some(n);
                    }
                    Taken::NotACommand(bytes)
                }
                Some(Ok(command)) => match command.serve_refusal() {
                    Some(why) => Taken::Declined(command.name(), why.to_string()),
                    None => Taken::Read(command),
                },
            },
        };
        if let Some(stats) = &mut self.stats {
            stats.command(n, taken.kind());
            if self.html.is_none() {
                return Ok(());
            }
        }
        let label = taken.label();
        let short = match taken {
            Taken::NotRead(k) => format!("not read (the engine stopped reading at command {k})"),
            Taken::TooLong => "refused: longer than the tap's line limit".to_owned(),
            Taken::Blank => "blank".to_owned(),
            Taken::NotACommand(bytes) => {
                format!("refused: {}", shorten(&String::from_utf8_lossy(bytes), 60))
            }
            Taken::Declined(name, why) => format!("refused: {name}: {why}"),
            Taken::Read(command) => short(&command),
        };
        if let Some(page) = &mut self.html {
            page.command(n, label, format!("command {n}: {short}"), line);
            return Ok(());
        }
        self.open_turn = None;
        writeln!(out, "command {n}: {short}")
    }

    fn event(&mut self, line: &Wire, out: &mut impl Write) -> io::Result<()> {
        self.events += 1;
        let a = self.conversation.event(match line {
            Wire::Bytes(bytes) => bytes,
            Wire::TooLong => b"",
        });
        if let Some(stats) = &mut self.stats {
            stats.event(&a, &self.conversation);
            if self.html.is_none() {
                return Ok(());
            }
        }
        if let Some(page) = &mut self.html {
            page.event(&a, said(&a), line);
            return Ok(());
        }
        match self.format {
            Format::Jsonl => jsonl(&a, out),
            Format::Text => self.text(&a, out),
        }
    }

    /// One event as a person reads it.
    fn text(&mut self, a: &Attribution, out: &mut impl Write) -> io::Result<()> {
        let said = said(a);
        let (Some(name), Some(turn)) = (a.event, a.turn) else {
            self.open_turn = None;
            return writeln!(out, "{said}");
        };
        let ends = matches!(name, "agent_finished" | "turn_failed" | "agent_aborted");
        if self.open_turn != Some(turn) {
            let continued = if self.last_turn == Some(turn) {
                ", continued"
            } else {
                ""
            };
            writeln!(out, "turn of command {turn}{continued}:")?;
            self.open_turn = Some(turn);
            self.last_turn = Some(turn);
        }
        if ends {
            // An auto goal's next turn has the same command: not a
            // continuation.
            self.last_turn = None;
        }
        writeln!(out, "  {said}")
    }

    /// `--html`: the page, what is still owed at the end (and in the
    /// text format's words) and the figures (when every record has a time).
    fn page(&mut self) -> io::Result<(Page, Owed, String, Option<Vec<u8>>)> {
        let owed = self.conversation.owed();
        let mut words = Vec::new();
        owed_text(&owed, &mut words)?;
        let mut figures = None;
        if let Some(stats) = &mut self.stats {
            stats.owed(&owed);
            let mut jsonl = Vec::new();
            stats.jsonl(&mut jsonl)?;
            figures = Some(jsonl);
        }
        let page = self.html.take().ok_or(io::ErrorKind::InvalidInput)?;
        Ok((
            page,
            owed,
            String::from_utf8_lossy(&words).into_owned(),
            figures,
        ))
    }

    /// What is still owed at the end of the log; with --stats, the
    /// figures instead.
    fn owed(&mut self, out: &mut impl Write) -> io::Result<()> {
        let owed = self.conversation.owed();
        if let Some(stats) = &mut self.stats {
            stats.owed(&owed);
            return match self.format {
                Format::Jsonl => stats.jsonl(out),
                Format::Text => stats.text(out),
            };
        }
        match self.format {
            Format::Jsonl => owed_jsonl(&owed, out),
            Format::Text => owed_text(&owed, out),
        }
    }
}

/// An event as the text format says it (under its turn's heading).
fn said(a: &Attribution) -> String {
    let Some(name) = a.event else {
        return format!("event {}: not an event", a.n);
    };
    let mut said = format!("event {}: {name}", a.n);
    if let Some(reason) = &a.violation {
        said += &format!(", attributed to nothing: {reason}");
    }
    if let Some(k) = a.answers {
        said += &format!(", answers command {k}");
    }
    if a.turn.is_some() && matches!(name, "agent_finished" | "turn_failed" | "agent_aborted") {
        said += "; the turn ends";
    }
    said
}

fn jsonl(a: &Attribution, out: &mut impl Write) -> io::Result<()> {
    write!(out, "{{\"n\":{},\"event\":", a.n)?;
    match a.event {
        Some(name) => write!(out, "\"{name}\"")?,
        None => out.write_all(b"null")?,
    }
    write!(
        out,
        ",\"answers\":{},\"turn\":{}",
        number_or_null(a.answers),
        number_or_null(a.turn)
    )?;
    if let Some(reason) = &a.violation {
        write!(out, ",\"violation\":{}", json(reason))?;
    }
    out.write_all(b"}\n")
}

fn owed_jsonl(owed: &Owed, out: &mut impl Write) -> io::Result<()> {
    let list = |ns: &[u64]| {
        let ns: Vec<String> = ns.iter().map(u64::to_string).collect();
        format!("[{}]", ns.join(","))
    };
    writeln!(
        out,
        "{{\"owed\":{{\"refused\":{},\"requests\":{},\"steers\":{},\"goals\":{},\"approvals\":{},\"running\":{},\"queued\":{}}}}}",
        list(&owed.refused),
        list(&owed.requests),
        list(&owed.steers),
        list(&owed.goals),
        list(&owed.approvals),
        number_or_null(owed.running),
        list(&owed.queued),
    )
}

/// What is still owed, in words (`owed: nothing`, or `owed:` and a line
/// per kind): `trace`'s end, and `tap`'s at the engine's exit.
pub(crate) fn owed_text(owed: &Owed, out: &mut impl Write) -> io::Result<()> {
    if owed.is_empty() {
        return writeln!(out, "owed: nothing");
    }
    let list = |ns: &[u64]| {
        let ns: Vec<String> = ns.iter().map(u64::to_string).collect();
        ns.join(", ")
    };
    writeln!(out, "owed:")?;
    let mut item = |owed: &[u64], what: &str| {
        if owed.is_empty() {
            Ok(())
        } else {
            writeln!(out, "  {what} {}", list(owed))
        }
    };
    item(&owed.refused, "a command_error to refused command")?;
    item(&owed.requests, "a reply to command")?;
    item(&owed.steers, "steer_applied or steer_dropped to command")?;
    item(&owed.goals, "goal_updated to command")?;
    item(
        &owed.approvals,
        "the controller's approval, asked for by event",
    )?;
    if let Some(k) = owed.running {
        item(&[k], "the end of the work of command")?;
    }
    item(&owed.queued, "the work, not started, of command")
}

/// A command in a few words: its name and what tells it apart.
fn short(command: &Command) -> String {
    let tag = |id: &Option<String>| {
        id.as_deref()
            .map_or_else(String::new, |id| format!(" submission_id {}", json(id)))
    };
    match command {
        Command::Prompt {
            content,
            submission_id,
            ..
        } => {
            let images = content
                .iter()
                .filter(|part| matches!(part, ContentPart::Image(_)))
                .count();
            let images = match images {
                0 => String::new(),
                1 => " and an image".to_owned(),
                n => format!(" and {n} images"),
            };
            format!(
                "prompt {}{images}{}",
                json(&shorten(&content.to_text(), SHORT)),
                tag(submission_id)
            )
        }
        Command::Steer {
            kind,
            content,
            submission_id,
            ..
        } => format!(
            "steer {} {}{}",
            kind.as_str(),
            json(&shorten(&content.to_text(), SHORT)),
            tag(submission_id)
        ),
        Command::JobsSnapshot { request_id, .. } => format!("jobs_snapshot {}", json(request_id)),
        Command::JobStop {
            request_id,
            generation,
            job_id,
            ..
        } => format!("job_stop {} of job {generation}/{job_id}", json(request_id)),
        Command::GoalSet { text, auto, .. } => format!(
            "goal set {}{}",
            json(&shorten(text, SHORT)),
            if *auto { ", auto" } else { "" }
        ),
        Command::GoalClear => "goal clear".to_owned(),
        Command::ApprovalDecision { id, allow, .. } => format!(
            "approval {} {}",
            json(id),
            if *allow { "allow" } else { "reject" }
        ),
        other => other.name().to_owned(),
    }
}

/// `text`'s first `max` characters, and `...` when there were more.
fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}...", text[..end].trim_end()),
        None => text.to_owned(),
    }
}

fn number_or_null(n: Option<u64>) -> String {
    n.map_or_else(|| "null".to_owned(), |n| n.to_string())
}

/// A JSON string.
fn json(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// `--stats`: the times of the session, from the records' times, each
/// command line's answers as the model attributes them.
struct Stats {
    /// The stall threshold, in microseconds: longer gaps are listed.
    stall: u64,
    /// The current record's time, in microseconds.
    now: u64,
    /// The last record's time and its line in the log.
    last: Option<(u64, u64)>,
    /// The figures of each kind, in the order first seen.
    kinds: Vec<Kind>,
    /// The command lines read whose end has not come, by their `n`.
    pending: HashMap<u64, Pending>,
    /// Each running turn's last event, by the turn's command.
    turns: HashMap<u64, Last>,
    /// The compaction running, by its command, since its
    /// `compaction_started`.
    compacting: Option<u64>,
    stalls: Vec<Stall>,
}

/// The figures of one kind of command line, each sample in microseconds.
struct Kind {
    name: &'static str,
    sent: u64,
    first: Vec<u64>,
    /// Prompts only.
    delta: Vec<u64>,
    end: Vec<u64>,
    /// The command lines the engine still owes at the end.
    owed: Vec<u64>,
}

/// A command line read whose end has not come.
struct Pending {
    /// Its kind, in `Stats::kinds`.
    kind: usize,
    /// When it was sent.
    t: u64,
    answered: bool,
    delta: bool,
}

/// A turn's last event so far.
struct Last {
    t: u64,
    n: u64,
    name: Cow<'static, str>,
}

/// A gap longer than the threshold between two events of a turn.
struct Stall {
    turn: u64,
    after: u64,
    after_name: Cow<'static, str>,
    before: u64,
    before_name: Cow<'static, str>,
    gap: u64,
}

/// The order kinds are written in; any other after them, then `refused`.
const KINDS: [&str; 8] = [
    "prompt",
    "steer",
    "cancel",
    "compact",
    "goal",
    "approval",
    "jobs_snapshot",
    "job_stop",
];

impl Stats {
    fn new(stall_ms: u64) -> Stats {
        Stats {
            stall: stall_ms.saturating_mul(1000),
            now: 0,
            last: None,
            kinds: Vec::new(),
            pending: HashMap::new(),
            turns: HashMap::new(),
            compacting: None,
            stalls: Vec::new(),
        }
    }

    /// The time of `record`, in microseconds; an error when it has none,
    /// or one before the last record's.
    fn time(&mut self, record: &Record) -> Result<u64, String> {
        let t = record.t_us.ok_or(
            "no time: --stats needs a whole number \"t_us\" (or \"t_ms\") in every command and \
             event record",
        )?;
        if let Some((last, at)) = self.last {
            if t < last {
                return Err(format!(
                    "its time ({t} us) is before line {at}'s ({last} us): records reordered \
                     cannot be timed"
                ));
            }
        }
        self.last = Some((t, record.at));
        Ok(t)
    }

    /// A command line sent now, of `kind` (`None`: owed nothing).
    fn command(&mut self, n: u64, kind: Option<&'static str>) {
        let Some(name) = kind else { return };
        let kind = match self.kinds.iter().position(|k| k.name == name) {
            Some(i) => i,
            None => {
                self.kinds.push(Kind {
                    name,
                    sent: 0,
                    first: Vec::new(),
                    delta: Vec::new(),
                    end: Vec::new(),
                    owed: Vec::new(),
                });
                self.kinds.len() - 1
            }
        };
        self.kinds[kind].sent += 1;
        self.pending.insert(
            n,
            Pending {
                kind,
                t: self.now,
                answered: false,
                delta: false,
            },
        );
    }

    /// The kind of the command line `n`, while its end has not come.
    fn kind_of(&self, n: u64) -> Option<&'static str> {
        self.pending.get(&n).map(|p| self.kinds[p.kind].name)
    }

    /// An event, as the model attributed it: an event attributed to nothing
    /// answers nothing and belongs to no turn.
    fn event(&mut self, a: &Attribution, conversation: &Conversation) {
        if a.violation.is_some() {
            return;
        }
        let t = self.now;
        let name: Option<&str> = a.event.or(a.unreadable.as_deref());
        // The first event that answers a command line, or belongs to its
        // turn, is its first answer.
        for k in [a.answers, a.turn].into_iter().flatten() {
            if let Some(p) = self.pending.get_mut(&k) {
                if !p.answered {
                    p.answered = true;
                    self.kinds[p.kind].first.push(t - p.t);
                }
            }
        }
        let ends_turn = matches!(
            name,
            Some("agent_finished" | "turn_failed" | "agent_aborted")
        );
        match name {
            Some("assistant_delta" | "reasoning_delta") => {
                if let Some(p) = a.turn.and_then(|k| self.pending.get_mut(&k)) {
                    if !p.delta && self.kinds[p.kind].name == "prompt" {
                        p.delta = true;
                        self.kinds[p.kind].delta.push(t - p.t);
                    }
                }
            }
            Some("compaction_started") => self.compacting = a.answers,
            Some("compaction_finished" | "compaction_failed") => {
                let running = self.compacting.take();
                // A compaction_failed that a cancel hit answers the cancel:
                // the compaction that ended is the one running, or else
                // the one the model no longer owes.
                let k = match a.answers {
                    Some(k) if self.kind_of(k) == Some("compact") => Some(k),
                    _ => running.or_else(|| {
                        let owed = conversation.owed();
                        self.pending
                            .iter()
                            .filter(|&(&k, p)| {
                                self.kinds[p.kind].name == "compact"
                                    && owed.running != Some(k)
                                    && !owed.queued.contains(&k)
                            })
                            .map(|(&k, _)| k)
                            .max()
                    }),
                };
                if let Some(k) = k {
                    self.end(k, t);
                }
            }
            _ => {}
        }
        // A reply, a command_error, goal_updated, a steer's answer, the
        // resolution of an approval, the abort a cancel caused: the end.
        if let Some(k) = a.answers {
            if !matches!(self.kind_of(k), Some("prompt" | "compact")) {
                self.end(k, t);
            }
        }
        // The engine's own prediction follows its turn's end: no part of
        // the turn's pace.
        if name == Some("prediction_result") {
            return;
        }
        let Some(turn) = a.turn else { return };
        if ends_turn && self.kind_of(turn) == Some("prompt") {
            self.end(turn, t);
        }
        let name: Cow<'static, str> = match (a.event, &a.unreadable) {
            (Some(name), _) => Cow::Borrowed(name),
            (None, Some(name)) => Cow::Owned(name.clone()),
            (None, None) => Cow::Borrowed("not an event"),
        };
        if let Some(last) = self.turns.get(&turn) {
            let gap = t - last.t;
            if gap > self.stall {
                self.stalls.push(Stall {
                    turn,
                    after: last.n,
                    after_name: last.name.clone(),
                    before: a.n,
                    before_name: name.clone(),
                    gap,
                });
            }
        }
        if ends_turn {
            // An auto goal's next turn has the same command: a new turn.
            self.turns.remove(&turn);
        } else {
            self.turns.insert(turn, Last { t, n: a.n, name });
        }
    }

    /// The end of command line `k` came now (its first answer too, if it
    /// had none).
    fn end(&mut self, k: u64, t: u64) {
        let Some(p) = self.pending.remove(&k) else {
            return;
        };
        let kind = &mut self.kinds[p.kind];
        if !p.answered {
            kind.first.push(t - p.t);
        }
        kind.end.push(t - p.t);
    }

    /// What the engine still owes at the end, each under its kind.
    fn owed(&mut self, owed: &Owed) {
        for k in owed.commands() {
            if let Some(p) = self.pending.get(&k) {
                self.kinds[p.kind].owed.push(k);
            }
        }
        for kind in &mut self.kinds {
            kind.owed.sort_unstable();
            kind.first.sort_unstable();
            kind.delta.sort_unstable();
            kind.end.sort_unstable();
        }
        let rank = |name: &str| match KINDS.iter().position(|k| *k == name) {
            Some(i) => i,
            None if name == "refused" => KINDS.len() + 1,
            None => KINDS.len(),
        };
        self.kinds
            .sort_by(|a, b| (rank(a.name), a.name).cmp(&(rank(b.name), b.name)));
    }

    /// Each kind's measures: their names in each format, and the samples.
    fn measures(kind: &Kind) -> Vec<(&'static str, &'static str, &[u64])> {
        let mut measures = vec![("first", "first", kind.first.as_slice())];
        if kind.name == "prompt" {
            measures.push(("first delta", "first_delta", kind.delta.as_slice()));
        }
        measures.push(("end", "end", kind.end.as_slice()));
        measures
    }

    fn text(&self, out: &mut impl Write) -> io::Result<()> {
        let width = self
            .kinds
            .iter()
            .map(|k| k.name.len())
            .max()
            .unwrap_or(0)
            .max(4);
        writeln!(
            out,
            "{:<width$}  {:<11}  {:>5}  {:>12}  {:>12}  {:>12}  {:>12}",
            "kind", "measure", "count", "p50", "p95", "p99", "max"
        )?;
        for kind in &self.kinds {
            for (measure, _, samples) in Stats::measures(kind) {
                write!(
                    out,
                    "{:<width$}  {measure:<11}  {:>5}",
                    kind.name,
                    samples.len()
                )?;
                for p in [50, 95, 99, 100] {
                    let time =
                        percentile(samples, p).map_or_else(|| "-".to_owned(), |t| ms(t) + "ms");
                    write!(out, "  {time:>12}")?;
                }
                writeln!(out)?;
            }
        }
        let sent: Vec<String> = self
            .kinds
            .iter()
            .map(|k| format!("{} {}", k.name, k.sent))
            .collect();
        writeln!(
            out,
            "sent: {}",
            if sent.is_empty() {
                "nothing".to_owned()
            } else {
                sent.join(", ")
            }
        )?;
        let owed: Vec<String> = self
            .kinds
            .iter()
            .filter(|k| !k.owed.is_empty())
            .map(|k| {
                let lines: Vec<String> = k.owed.iter().map(u64::to_string).collect();
                format!(
                    "{} {} (command{} {})",
                    k.name,
                    k.owed.len(),
                    if k.owed.len() == 1 { "" } else { "s" },
                    lines.join(", ")
                )
            })
            .collect();
        writeln!(
            out,
            "owed at the end: {}",
            if owed.is_empty() {
                "nothing".to_owned()
            } else {
                owed.join(", ")
            }
        )?;
        let over = ms(self.stall);
        if self.stalls.is_empty() {
            return writeln!(out, "stalls over {over}ms: none");
        }
        writeln!(out, "stalls over {over}ms: {}", self.stalls.len())?;
        for s in &self.stalls {
            writeln!(
                out,
                "  the turn of command {}: {}ms from event {} ({}) to event {} ({})",
                s.turn,
                ms(s.gap),
                s.after,
                s.after_name,
                s.before,
                s.before_name
            )?;
        }
        Ok(())
    }

    fn jsonl(&self, out: &mut impl Write) -> io::Result<()> {
        for kind in &self.kinds {
            let owed: Vec<String> = kind.owed.iter().map(u64::to_string).collect();
            write!(
                out,
                "{{\"kind\":{},\"sent\":{},\"owed\":[{}]",
                json(kind.name),
                kind.sent,
                owed.join(",")
            )?;
            for (_, key, samples) in Stats::measures(kind) {
                write!(out, ",\"{key}\":{{\"count\":{}", samples.len())?;
                for (p, name) in [(50, "p50"), (95, "p95"), (99, "p99"), (100, "max")] {
                    let time = percentile(samples, p).map_or_else(|| "null".to_owned(), ms);
                    write!(out, ",\"{name}_ms\":{time}")?;
                }
                out.write_all(b"}")?;
            }
            out.write_all(b"}\n")?;
        }
        for s in &self.stalls {
            writeln!(
                out,
                "{{\"stall\":{{\"turn\":{},\"after\":{},\"before\":{},\"gap_ms\":{}}}}}",
                s.turn,
                s.after,
                s.before,
                ms(s.gap)
            )?;
        }
        Ok(())
    }
}

/// The `p`th percentile of `sorted` by nearest rank: the smallest sample
/// with at least `p` percent of the samples at or below it (`p` 100: the
/// largest); `None` for no samples.
fn percentile(sorted: &[u64], p: usize) -> Option<u64> {
    let rank = (p * sorted.len()).div_ceil(100).max(1);
    sorted.get(rank - 1).copied()
}

/// Microseconds as milliseconds with three decimals.
fn ms(us: u64) -> String {
    format!("{}.{:03}", us / 1000, us % 1000)
}
