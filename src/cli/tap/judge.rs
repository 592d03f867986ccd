//! What the tap makes of each line crossing it: a verdict, the violations
//! it shows, the answers the engine owes and whether it gave them, reported
//! on stderr and in the log.
//!
//! Every verdict comes from the crate's own readers, never from rules
//! written again here: a command line is read by `v2::CommandReader` (the
//! engine's framing: blank lines, CRs) and, when it is a command, judged by
//! `serve_refusal_event_line` (the engine's own refusals); what a refused
//! line is owed is the reader's `event_line()`; an engine line is read by
//! `v2::EventReader`, as a controller reads it, and a `command_error`'s
//! message by `Event::command_error_cause`. What is left here is
//! bookkeeping: which refused line each `command_error` answers (the
//! engine owes one per refused line, in order), and where the engine must
//! stop reading.

use serve_command::generic::{LineError, ReadError};
use serve_command::v2::{Command, CommandReader, Event, EventReader};
use std::collections::{BTreeMap, VecDeque};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::time::Instant;

/// Ids of lines the engine must not read, remembered to catch it reading
/// them anyway: at most this many, so memory stays bounded whatever the
/// controller sends after the engine stopped.
const MAX_UNREAD: usize = 4096;

/// Which stream a line crossed.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    /// The controller's line, to the engine's stdin.
    Command,
    /// The engine's stdout line, to the controller.
    Event,
    /// The engine's stderr line, passed through.
    Stderr,
}

impl Dir {
    fn name(self) -> &'static str {
        match self {
            Dir::Command => "command",
            Dir::Event => "event",
            Dir::Stderr => "stderr",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// One line as the splitter hands it over.
pub enum Piece<'a> {
    /// A whole line, its LF included (absent only on the last line of a
    /// stream).
    Line(&'a [u8]),
    /// A line longer than the limit: reported as soon as it is, and
    /// forwarded in pieces, never held whole.
    TooLong,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Error,
    Note,
}

/// One thing wrong with a line, or worth a note.
struct Violation {
    kind: &'static str,
    level: Level,
    /// What stderr says after `tap: <where>: ` (and `note: `).
    message: String,
    /// More members for the log's object, each `,"key":value`.
    fields: String,
}

impl Violation {
    fn error(kind: &'static str, message: String) -> Self {
        Violation {
            kind,
            level: Level::Error,
            message,
            fields: String::new(),
        }
    }

    fn note(kind: &'static str, message: String) -> Self {
        Violation {
            level: Level::Note,
            ..Violation::error(kind, message)
        }
    }

    fn with(mut self, key: &str, value: &str) -> Self {
        self.fields += &format!(",{}:{}", json(key), json(value));
        self
    }

    fn with_number(mut self, key: &str, value: u64) -> Self {
        self.fields += &format!(",{}:{value}", json(key));
        self
    }
}

/// A refused command line, waiting for its `command_error`.
struct Owed {
    /// Its line number.
    n: u64,
    /// The message the engine owes, verbatim.
    message: String,
    /// The whole event line the engine owes, without its LF.
    event: String,
}

/// The command line at which the engine must stop reading.
struct Stop {
    n: u64,
    why: &'static str,
}

/// The tap's whole judgement of a session, shared by its three streams.
pub struct Judge {
    start: Instant,
    max: usize,
    /// Lines seen so far in each direction.
    lines: [u64; 3],
    /// Refused command lines not yet answered, oldest first.
    owed: VecDeque<Owed>,
    stop: Option<Stop>,
    /// Lines after the stop that the engine would refuse, were it still
    /// reading: a `command_error` after the stop's answer answers one.
    unread_refused: VecDeque<u64>,
    /// The ids (`request_id`, an approval's `id`, a steer's
    /// `submission_id`) of lines after the stop, by the event that answers
    /// them, with their line numbers.
    unread_ids: VecDeque<(&'static str, String, u64)>,
    /// Violations by kind.
    counts: BTreeMap<&'static str, u64>,
    errors: u64,
    notes: u64,
    log: Option<Log>,
    /// Scratch for a command's canonical line.
    canonical: Vec<u8>,
    /// The summary is written: nothing more is judged.
    finished: bool,
}

struct Log {
    name: String,
    out: BufWriter<File>,
}

impl Judge {
    pub fn new(max: usize, log: Option<(String, File)>) -> Self {
        Judge {
            start: Instant::now(),
            max,
            lines: [0; 3],
            owed: VecDeque::new(),
            stop: None,
            unread_refused: VecDeque::new(),
            unread_ids: VecDeque::new(),
            counts: BTreeMap::new(),
            errors: 0,
            notes: 0,
            log: log.map(|(name, file)| Log {
                name,
                out: BufWriter::with_capacity(64 * 1024, file),
            }),
            canonical: Vec::new(),
            finished: false,
        }
    }

    /// Judges one line of `dir`, reports what is wrong with it and logs it.
    pub fn line(&mut self, dir: Dir, piece: Piece<'_>) {
        if self.finished {
            return;
        }
        self.lines[dir.index()] += 1;
        let n = self.lines[dir.index()];
        let mut violations = Vec::new();
        if let Piece::Line(bytes) = piece {
            if dir != Dir::Stderr {
                framing(bytes, &mut violations);
            }
        }
        let verdict = match dir {
            Dir::Command => self.command(n, &piece, &mut violations),
            Dir::Event => self.event(&piece, &mut violations),
            Dir::Stderr => "text",
        };
        self.record(dir.name(), n, Some(&piece), verdict, &violations, "");
    }

    /// A command line, read as the engine must read it.
    fn command(&mut self, n: u64, piece: &Piece<'_>, found: &mut Vec<Violation>) -> &'static str {
        let bytes = match piece {
            Piece::Line(bytes) => bytes,
            Piece::TooLong => {
                let owed = serve_command::v2::ReadError::TooLong {
                    line: n,
                    max: self.max,
                };
                if self.stop.is_some() {
                    self.unread(n, None);
                    return "unread";
                }
                found.push(too_long(self.max));
                self.owe(n, &owed.event_line(), Some("over the limit"), found);
                return "refused";
            }
        };
        let item = CommandReader::with_max_line_len(*bytes, usize::MAX).next();
        if self.stop.is_some() {
            // The engine must not read it: nothing to report, but what it
            // would be answered with is kept, to catch the engine reading it.
            match item {
                None => {}
                Some(Ok(command)) if command.serve_refusal().is_none() => {
                    self.unread(n, Some(&command))
                }
                Some(_) => self.unread(n, None),
            }
            found.clear();
            return "unread";
        }
        match item {
            None => {
                found.push(Violation::note(
                    "blank",
                    "blank line; the engine skips it".to_owned(),
                ));
                "blank"
            }
            Some(Ok(command)) => match command.serve_refusal_event_line() {
                Some(event) => {
                    self.owe(n, &event, None, found);
                    "refused"
                }
                None => {
                    self.canonical(&command, bytes, found);
                    "command"
                }
            },
            Some(Err(error)) => {
                let stop = error.is_stream_error().then_some(match &error {
                    ReadError::Line {
                        error: LineError::Syntax(_),
                        ..
                    } => "not JSON",
                    _ => "a stream error",
                });
                self.owe(n, &error.event_line(), stop, found);
                "refused"
            }
        }
    }

    /// A refused line: the engine owes `event` (a line, LF included) and,
    /// when `stop` says why, reads no further command.
    fn owe(&mut self, n: u64, event: &str, stop: Option<&'static str>, found: &mut Vec<Violation>) {
        let event = event.trim_end_matches('\n').to_owned();
        let message = Event::from_slice(event.as_bytes())
            .ok()
            .and_then(|e| e.command_error_cause())
            .map(|cause| cause.to_string())
            .unwrap_or_default();
        found.push(
            Violation::error("refused", format!("refused; the engine owes {event}"))
                .with("owes", &event),
        );
        self.owed.push_back(Owed { n, message, event });
        if let Some(why) = stop {
            self.stop = Some(Stop { n, why });
        }
    }

    /// A command the engine acts on: a note when its line is not the one
    /// the crate writes for it.
    fn canonical(&mut self, command: &Command, bytes: &[u8], found: &mut Vec<Violation>) {
        self.canonical.clear();
        if command.write_line(&mut self.canonical).is_err() {
            return;
        }
        let line = bytes.strip_suffix(b"\n");
        // A CRLF is reported as such, not again here.
        let line = match line {
            Some(line) => line.strip_suffix(b"\r").unwrap_or(line),
            None => bytes,
        };
        let canonical = &self.canonical[..self.canonical.len() - 1];
        if line != canonical {
            let canonical = String::from_utf8_lossy(canonical).into_owned();
            found.push(
                Violation::note(
                    "not_canonical",
                    format!(
                        "not canonical (extra keys, legacy fields, another key order or spacing); the crate writes {}",
                        shorten(&canonical)
                    ),
                )
                .with("canonical", &canonical),
            );
        }
    }

    /// A line after the stop: what would show the engine read it.
    fn unread(&mut self, n: u64, command: Option<&Command>) {
        match (command, command.and_then(answered_by)) {
            (_, Some((kind, id))) if self.unread_ids.len() < MAX_UNREAD => {
                self.unread_ids.push_back((kind, id.to_owned(), n));
            }
            (None, _) if self.unread_refused.len() < MAX_UNREAD => {
                self.unread_refused.push_back(n);
            }
            _ => {}
        }
    }

    /// An engine line, read as a controller must read it.
    fn event(&mut self, piece: &Piece<'_>, found: &mut Vec<Violation>) -> &'static str {
        let Piece::Line(bytes) = piece else {
            found.push(too_long(self.max));
            found.push(stray(&format!("longer than {} bytes", self.max)));
            return "not_event";
        };
        match EventReader::with_max_line_len(*bytes, usize::MAX).next() {
            None => {
                found.push(Violation::note(
                    "blank",
                    "blank line; a controller skips it".to_owned(),
                ));
                "blank"
            }
            Some(Err(error)) => {
                let reason = match &error {
                    ReadError::Line {
                        error: LineError::Syntax(e),
                        ..
                    } => format!("not JSON: {e}"),
                    ReadError::Line { error, .. } => error.to_string(),
                    other => other.to_string(),
                };
                found.push(stray(&reason));
                "not_event"
            }
            Some(Ok(event)) => match event.command_error_cause() {
                Some(cause) => {
                    self.answer(&cause.to_string(), found);
                    "command_error"
                }
                None => {
                    self.read_on(&event, found);
                    "event"
                }
            },
        }
    }

    /// A `command_error` with `message`: the answer to the oldest refused
    /// line not yet answered.
    fn answer(&mut self, message: &str, found: &mut Vec<Violation>) {
        if let Some(owed) = self.owed.pop_front() {
            if owed.message != message {
                found.push(
                    Violation::error(
                        "wrong_answer",
                        format!(
                            "the command_error for command {} says {}; the engine owes {}",
                            owed.n,
                            json(message),
                            json(&owed.message)
                        ),
                    )
                    .with_number("command_n", owed.n)
                    .with("owed", &owed.message)
                    .with("got", message),
                );
            }
        } else if let Some(n) = self.unread_refused.pop_front() {
            found.push(self.read_on_violation(n, "command_error"));
        } else {
            found.push(
                Violation::error(
                    "unexpected_answer",
                    format!(
                        "a command_error with no refused line to answer: {}",
                        json(message)
                    ),
                )
                .with("got", message),
            );
        }
    }

    /// Any other event: whether it answers a line the engine must not have
    /// read.
    fn read_on(&mut self, event: &Event, found: &mut Vec<Violation>) {
        if self.unread_ids.is_empty() {
            return;
        }
        let Some((kind, id)) = answers(event) else {
            return;
        };
        let Some(i) = self
            .unread_ids
            .iter()
            .position(|(k, i, _)| *k == kind && i == id)
        else {
            return;
        };
        if let Some((_, _, n)) = self.unread_ids.remove(i) {
            found.push(self.read_on_violation(n, event.name()));
        }
    }

    fn read_on_violation(&self, n: u64, what: &str) -> Violation {
        let (stop, why) = self.stop.as_ref().map_or((0, "not JSON"), |s| (s.n, s.why));
        Violation::error(
            "still_reading",
            format!(
                "the engine read on after command {stop} ({why}): this {what} answers command {n}"
            ),
        )
        .with_number("command_n", n)
        .with_number("stopped_at", stop)
    }

    /// The engine has exited with `status` (`exit N` or `signal N`, the
    /// tap's exit code `code`): what it still owed, then the summary.
    pub fn finish(&mut self, status: &str, code: u8) {
        if std::mem::replace(&mut self.finished, true) {
            return;
        }
        let mut found = Vec::new();
        for owed in std::mem::take(&mut self.owed) {
            found.push(
                Violation::error(
                    "unanswered",
                    format!(
                        "command {} was refused and never answered; the engine owed {}",
                        owed.n, owed.event
                    ),
                )
                .with_number("command_n", owed.n)
                .with("owed", &owed.event),
            );
        }
        let extra = format!(",\"status\":{},\"code\":{code}", json(status));
        self.record("exit", 0, None, "", &found, &extra);

        let mut by_kind = String::new();
        let mut said = String::new();
        for (kind, count) in &self.counts {
            by_kind += &format!(
                "{}{}:{count}",
                if by_kind.is_empty() { "" } else { "," },
                json(kind)
            );
            said += &format!("{}{count} {kind}", if said.is_empty() { "" } else { ", " });
        }
        let [commands, events, stderr] = self.lines;
        self.write_log(&format!(
            "{{\"t_ms\":{},\"dir\":\"summary\",\"lines\":{{\"command\":{commands},\"event\":{events},\"stderr\":{stderr}}},\"violations\":{{{by_kind}}},\"status\":{},\"code\":{code}}}\n",
            self.t_ms(),
            json(status),
        ));
        let plural = |n: u64, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
        let verdict = if said.is_empty() {
            "no violations".to_owned()
        } else {
            format!(
                "{}, {} ({said})",
                plural(self.errors, "error"),
                plural(self.notes, "note")
            )
        };
        report(&format!(
            "tap: summary: {}, {}, {}; {verdict}; the engine's {status}\n",
            plural(commands, "command line"),
            plural(events, "event line"),
            plural(stderr, "stderr line"),
        ));
        self.flush_log();
    }

    /// Reports each violation on stderr and writes the line's record.
    fn record(
        &mut self,
        dir: &str,
        n: u64,
        piece: Option<&Piece<'_>>,
        verdict: &str,
        found: &[Violation],
        extra: &str,
    ) {
        for v in found {
            let place = if dir == "exit" {
                "exit".to_owned()
            } else {
                format!("{dir} {n}")
            };
            *self.counts.entry(v.kind).or_default() += 1;
            let note = match v.level {
                Level::Error => {
                    self.errors += 1;
                    ""
                }
                Level::Note => {
                    self.notes += 1;
                    "note: "
                }
            };
            report(&format!("tap: {place}: {note}{}\n", v.message));
        }
        if self.log.is_none() {
            return;
        }
        let mut record = format!("{{\"t_ms\":{},\"dir\":\"{dir}\"", self.t_ms());
        match piece {
            None => {}
            Some(piece) => {
                record += &format!(",\"n\":{n}");
                match piece {
                    Piece::Line(bytes) => {
                        let (text, lf) = match bytes.strip_suffix(b"\n") {
                            Some(text) => (text, true),
                            None => (*bytes, false),
                        };
                        match std::str::from_utf8(text) {
                            Ok(text) => record += &format!(",\"line\":{}", json(text)),
                            Err(_) => {
                                use base64::Engine;
                                let b64 = base64::engine::general_purpose::STANDARD.encode(text);
                                record += &format!(",\"line_base64\":\"{b64}\"");
                            }
                        }
                        if !lf {
                            record += ",\"lf\":false";
                        }
                    }
                    Piece::TooLong => record += ",\"line\":null",
                }
                record += &format!(",\"verdict\":\"{verdict}\"");
            }
        }
        record += extra;
        record += ",\"violations\":[";
        for (i, v) in found.iter().enumerate() {
            let level = match v.level {
                Level::Error => "error",
                Level::Note => "note",
            };
            record += &format!(
                "{}{{\"kind\":\"{}\",\"level\":\"{level}\",\"message\":{}{}}}",
                if i == 0 { "" } else { "," },
                v.kind,
                json(&v.message),
                v.fields
            );
        }
        record += "]}\n";
        self.write_log(&record);
    }

    fn t_ms(&self) -> u128 {
        self.start.elapsed().as_millis()
    }

    fn write_log(&mut self, record: &str) {
        if let Some(log) = &mut self.log {
            if let Err(e) = log.out.write_all(record.as_bytes()) {
                self.log_failed(&e);
            }
        }
    }

    /// Writes what the log holds, as the tap is about to wait for input.
    pub fn flush_log(&mut self) {
        if let Some(log) = &mut self.log {
            if let Err(e) = log.out.flush() {
                self.log_failed(&e);
            }
        }
    }

    /// The log cannot be written: said once, and the session goes on
    /// without it.
    fn log_failed(&mut self, e: &io::Error) {
        if let Some(log) = self.log.take() {
            report(&format!(
                "tap: {}: {}; no more is logged\n",
                log.name,
                crate::output::describe(e)
            ));
        }
    }
}

/// CRLF and a BOM, which the readers see only as what they make of them (a
/// CR is JSON whitespace, a BOM is not JSON).
fn framing(bytes: &[u8], found: &mut Vec<Violation>) {
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        found.push(Violation::error(
            "bom",
            "starts with a UTF-8 BOM, which is not JSON".to_owned(),
        ));
    }
    if bytes.ends_with(b"\r\n") {
        found.push(Violation::note(
            "crlf",
            "ends in CRLF; the CR is read as JSON whitespace".to_owned(),
        ));
    }
}

fn too_long(max: usize) -> Violation {
    Violation::error(
        "too_long",
        format!("longer than {max} bytes (--max-line-len)"),
    )
    .with_number("max", max as u64)
}

fn stray(reason: &str) -> Violation {
    Violation::error("stray", format!("stray output, not an event: {reason}"))
        .with("reason", reason)
}

/// The event that answers `command` and the id it carries back, for the
/// commands whose answer names them.
fn answered_by(command: &Command) -> Option<(&'static str, &str)> {
    match command {
        Command::JobsSnapshot { request_id, .. } => Some(("jobs_snapshot", request_id)),
        Command::JobStop { request_id, .. } => Some(("job_stop_result", request_id)),
        Command::Predict { request_id, .. } => Some(("prediction_result", request_id)),
        Command::ApprovalDecision { id, .. } => Some(("approval_resolved", id)),
        Command::Steer {
            submission_id: Some(id),
            ..
        } => Some(("steer", id)),
        _ => None,
    }
}

/// The other half of [`answered_by`]: which command an event answers, by
/// the id it carries.
fn answers(event: &Event) -> Option<(&'static str, &str)> {
    match event {
        Event::JobsSnapshot { request_id, .. } => Some(("jobs_snapshot", request_id)),
        Event::JobStopResult { request_id, .. } => Some(("job_stop_result", request_id)),
        Event::PredictionResult { request_id, .. } => Some(("prediction_result", request_id)),
        Event::ApprovalResolved { id, .. } => Some(("approval_resolved", id)),
        Event::SteerApplied {
            submission_id: Some(id),
            ..
        }
        | Event::SteerDropped {
            submission_id: Some(id),
            ..
        } => Some(("steer", id)),
        _ => None,
    }
}

/// A JSON string.
fn json(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// At most 200 characters of `text` for stderr (the log holds it whole).
fn shorten(text: &str) -> String {
    match text.char_indices().nth(200) {
        Some((i, _)) => format!("{}... ({} bytes)", &text[..i], text.len()),
        None => text.to_owned(),
    }
}

/// One report line on stderr; nowhere left to say so if that fails.
fn report(line: &str) {
    let _ = io::stderr().lock().write_all(line.as_bytes());
}
