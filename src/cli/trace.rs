//! `trace`: the conversation a log of the wire holds, each event with the
//! command it answers and the turn it belongs to.

use crate::output::{self, io_error, stdout_error};
use crate::revision::Revision;
use clap::{Args, ValueEnum};
use serve_command::v2::serve::record::{LogError, LogReader, Wire};
use serve_command::v2::serve::{Attribution, Conversation, Direction, Owed};
use serve_command::v2::{Command, CommandReader, ContentPart};
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
/// "t_us" in logs written since the tap added it) are not read: logs with
/// and without "t_us" read alike.
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
/// `requests`: `jobs_snapshot`, `job_stop` and `predict` unanswered;
/// `steers`, `goals`: steers and goals unanswered; `approvals`: the
/// `approval_requested` events (event `n`) the controller has not
/// answered; `running`: the command of the turn or compaction that has not
/// ended; `queued`: prompts and compactions that have not started.
///
/// It reads the log as it goes and holds one record at a time.
///
/// Exit status: 0 when the log is read to its end (whatever the events'
/// violations); 2 on a usage error, a log that cannot be read, or a record
/// that is not a JSON object, has no "dir", a command or event record with
/// no line, or a wrong "n" (`serve-command: trace: LOG: line N: why`, N
/// the record's line in LOG; what was written before it stays written).
#[derive(Args)]
#[command(
    verbatim_doc_comment,
    after_help = "Examples:
  serve-command tap --log wire.jsonl -- openseek serve < session.jsonl
  serve-command trace wire.jsonl
  serve-command trace --format jsonl wire.jsonl | jq -c 'select(.violation)'"
)]
pub struct Trace {
    /// How to write the conversation: text (for a person) or jsonl.
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = Format::Text)]
    format: Format,
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
    let mut trace = Tracer::new(args.format);
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
    trace.owed(&mut out).map_err(stdout_error)?;
    out.flush().map_err(stdout_error)?;
    Ok(ExitCode::SUCCESS)
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
}

impl Tracer {
    fn new(format: Format) -> Tracer {
        Tracer {
            format,
            conversation: Conversation::new(),
            commands: 0,
            events: 0,
            stopped: None,
            open_turn: None,
            last_turn: None,
        }
    }

    /// Reads every record of `input`, writing the attributions to `out`.
    fn read(&mut self, input: impl BufRead, out: &mut impl Write) -> Result<(), Stop> {
        let mut log = LogReader::new(input);
        while let Some(record) = log.read_record().map_err(|e| match e {
            LogError::Read(e) => Stop::Read(e),
            LogError::Record(at, why) => Stop::Record(at, why),
        })? {
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
        if self.format == Format::Jsonl {
            return Ok(());
        }
        let short = match (self.stopped, line) {
            (Some(k), _) => format!("not read (the engine stopped reading at command {k})"),
            (None, Wire::TooLong) => {
                self.stopped = Some(n);
                "refused: longer than the tap's line limit".to_owned()
            }
            (None, Wire::Bytes(bytes)) => match CommandReader::new(&bytes[..]).next() {
                None => "blank".to_owned(),
                Some(Err(error)) => {
                    if error.is_stream_error() {
                        self.stopped = Some(n);
                    }
                    format!("refused: {}", shorten(&String::from_utf8_lossy(bytes), 60))
                }
                Some(Ok(command)) => match command.serve_refusal() {
                    Some(why) => format!("refused: {}: {why}", command.name()),
                    None => short(&command),
                },
            },
        };
        self.open_turn = None;
        writeln!(out, "command {n}: {short}")
    }

    fn event(&mut self, line: &Wire, out: &mut impl Write) -> io::Result<()> {
        self.events += 1;
        let a = self.conversation.event(match line {
            Wire::Bytes(bytes) => bytes,
            Wire::TooLong => b"",
        });
        match self.format {
            Format::Jsonl => jsonl(&a, out),
            Format::Text => self.text(&a, out),
        }
    }

    /// One event as a person reads it.
    fn text(&mut self, a: &Attribution, out: &mut impl Write) -> io::Result<()> {
        let Some(name) = a.event else {
            self.open_turn = None;
            return writeln!(out, "event {}: not an event", a.n);
        };
        let mut said = format!("event {}: {name}", a.n);
        if let Some(reason) = &a.violation {
            said += &format!(", attributed to nothing: {reason}");
        }
        if let Some(k) = a.answers {
            said += &format!(", answers command {k}");
        }
        let Some(turn) = a.turn else {
            self.open_turn = None;
            return writeln!(out, "{said}");
        };
        let ends = matches!(name, "agent_finished" | "turn_failed" | "agent_aborted");
        if ends {
            said += "; the turn ends";
        }
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

    /// What is still owed at the end of the log.
    fn owed(&self, out: &mut impl Write) -> io::Result<()> {
        let owed = self.conversation.owed();
        match self.format {
            Format::Jsonl => owed_jsonl(&owed, out),
            Format::Text => owed_text(&owed, out),
        }
    }
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

fn owed_text(owed: &Owed, out: &mut impl Write) -> io::Result<()> {
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
        Command::Predict { request_id, .. } => format!("predict {}", json(request_id)),
        Command::CancelPrediction { request_id, .. } => {
            format!("cancel_prediction {}", json(request_id))
        }
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
