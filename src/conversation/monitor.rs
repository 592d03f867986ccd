//! The monitor: what `serve-command tap` makes of each line crossing a
//! live session, in process.
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

use crate::generic::{LineError, ReadError};
use crate::v2::{self, Command, CommandReader, Event, EventReader, DEFAULT_MAX_LINE_LEN};
use std::collections::VecDeque;
use std::fmt;

/// Ids of lines the engine must not read, remembered to catch it reading
/// them anyway: at most this many, so memory stays bounded whatever the
/// controller sends after the engine stopped.
const MAX_UNREAD: usize = 4096;

/// Watches both directions of one session, a line at a time, and names
/// what either side gets wrong: `serve-command tap`'s judgement, for a
/// Rust test that holds both ends of the wire itself.
///
/// Feed it every command line the controller writes ([`Monitor::command`])
/// and every line the engine writes on stdout ([`Monitor::event`]), in the
/// order they cross the wire: a refused command line must be seen before
/// the `command_error` that answers it. Each call judges one line and
/// returns its [`Judged`]: its number in its direction, its [`Verdict`]
/// and the [`Violation`]s it shows. When the engine has exited,
/// [`Monitor::finish`] names the refused lines it never answered.
///
/// ```
/// use serve_command::workbench::{Kind, Monitor, Verdict};
///
/// let mut monitor = Monitor::new();
/// let blank_goal = monitor.command(b"{\"command\":\"goal\",\"action\":\"set\",\"text\":\" \"}\n");
/// assert_eq!(blank_goal.verdict, Verdict::Refused);
/// // The engine answers with another message than it owes.
/// let answer = monitor.event(b"{\"event\":\"command_error\",\"error\":\"bad goal\"}\n");
/// assert_eq!(answer.verdict, Verdict::CommandError);
/// assert_eq!(answer.violations[0].kind(), Kind::WrongAnswer);
/// assert_eq!(
///     answer.violations[0].message(),
///     "the command_error for command 1 says \"bad goal\"; the engine owes \"goal text must not be blank\""
/// );
/// assert!(monitor.finish().is_empty()); // every refused line was answered
/// ```
#[derive(Debug)]
pub struct Monitor {
    max: usize,
    /// Lines seen so far: commands, events.
    lines: [u64; 2],
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
    /// Scratch for a command's canonical line.
    canonical: Vec<u8>,
}

/// A refused command line, waiting for its `command_error`.
#[derive(Debug)]
struct Owed {
    /// Its line number.
    n: u64,
    /// The message the engine owes, verbatim.
    message: String,
    /// The whole event line the engine owes, without its LF.
    event: String,
}

/// The command line at which the engine must stop reading.
#[derive(Debug)]
struct Stop {
    n: u64,
    why: &'static str,
}

/// One line's judgement.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Judged {
    /// The line's number in its direction, from 1 (blank lines counted).
    pub n: u64,
    /// What the line is.
    pub verdict: Verdict,
    /// What is wrong with it, or worth a note, in the order found.
    pub violations: Vec<Violation>,
}

/// What a line is, as the side that reads it must read it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Verdict {
    /// A command line the engine reads and acts on.
    Command,
    /// A command line the engine must refuse: not JSON, not a command,
    /// over the limit, or declined by the serve policy.
    Refused,
    /// A blank line, which the reader skips.
    Blank,
    /// A command line after the one that ends the engine's reading: not
    /// judged.
    Unread,
    /// An engine line that is an event (other than `command_error`).
    Event,
    /// An engine line that is a `command_error`.
    CommandError,
    /// An engine line that is not an event: stray output.
    NotEvent,
}

impl Verdict {
    /// The name the tap's log writes: `command`, `refused`, `blank`,
    /// `unread`, `event`, `command_error` or `not_event`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Command => "command",
            Verdict::Refused => "refused",
            Verdict::Blank => "blank",
            Verdict::Unread => "unread",
            Verdict::Event => "event",
            Verdict::CommandError => "command_error",
            Verdict::NotEvent => "not_event",
        }
    }
}

/// The kinds of [`Violation`]; [`Kind::is_note`] says which are only notes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Kind {
    /// A command line the engine must refuse; details: `owes`, the event
    /// line it owes.
    Refused,
    /// (Note) a command the engine reads, on a line that is not the one the
    /// crate writes for it (extra keys, legacy `text`, another key order);
    /// details: `canonical`.
    NotCanonical,
    /// (Note) a line ending in CRLF.
    Crlf,
    /// (Note) a blank line, which the reader skips.
    Blank,
    /// A line starting with a UTF-8 BOM.
    Bom,
    /// A line longer than the limit; details: `max`.
    TooLong,
    /// An engine stdout line that is not an event; details: `reason`.
    Stray,
    /// A `command_error` whose message differs from what the engine owes
    /// the refused line it answers; details: `command_n`, `owed`, `got`.
    WrongAnswer,
    /// A `command_error` with no refused line to answer; details: `got`.
    UnexpectedAnswer,
    /// A refused line the engine never answered (from
    /// [`Monitor::finish`]); details: `command_n`, `owed`.
    Unanswered,
    /// The engine read on after a command line that ends its reading (not
    /// JSON, or over the limit); details: `command_n`, `stopped_at`.
    StillReading,
}

impl Kind {
    /// The name the tap writes: `refused`, `not_canonical`, `crlf`,
    /// `blank`, `bom`, `too_long`, `stray`, `wrong_answer`,
    /// `unexpected_answer`, `unanswered`, `still_reading`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Refused => "refused",
            Kind::NotCanonical => "not_canonical",
            Kind::Crlf => "crlf",
            Kind::Blank => "blank",
            Kind::Bom => "bom",
            Kind::TooLong => "too_long",
            Kind::Stray => "stray",
            Kind::WrongAnswer => "wrong_answer",
            Kind::UnexpectedAnswer => "unexpected_answer",
            Kind::Unanswered => "unanswered",
            Kind::StillReading => "still_reading",
        }
    }

    /// Whether it is a note (nothing is wrong, but a reader may want to
    /// know): `not_canonical`, `crlf` and `blank`. The rest are errors.
    #[must_use]
    pub fn is_note(self) -> bool {
        matches!(self, Kind::NotCanonical | Kind::Crlf | Kind::Blank)
    }
}

/// One thing wrong with a line, or worth a note.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    kind: Kind,
    message: String,
    details: Vec<(&'static str, Detail)>,
}

/// A detail of a [`Violation`], by the key the tap's log writes it under.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Detail {
    /// A line or a message, verbatim.
    Text(String),
    /// A line number or a limit.
    Number(u64),
}

impl Violation {
    fn new(kind: Kind, message: String) -> Self {
        Violation {
            kind,
            message,
            details: Vec::new(),
        }
    }

    fn with(mut self, key: &'static str, value: &str) -> Self {
        self.details.push((key, Detail::Text(value.to_owned())));
        self
    }

    fn with_number(mut self, key: &'static str, value: u64) -> Self {
        self.details.push((key, Detail::Number(value)));
        self
    }

    /// What kind of violation it is.
    #[must_use]
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// What is wrong, for a person: `refused; the engine owes
    /// {"event":"command_error",...}`. Also its `Display`.
    #[must_use]
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Its details, in order, each under the key the tap's log writes
    /// (each [`Kind`] lists its own).
    #[must_use]
    pub fn details(&self) -> &[(&'static str, Detail)] {
        &self.details
    }

    /// The detail under `key`, if it has one.
    #[must_use]
    pub fn detail(&self, key: &str) -> Option<&Detail> {
        self.details.iter().find(|(k, _)| *k == key).map(|(_, d)| d)
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl Default for Monitor {
    fn default() -> Self {
        Monitor::new()
    }
}

impl Monitor {
    /// A monitor for a session whose engine reads lines of at most
    /// [`DEFAULT_MAX_LINE_LEN`] bytes, the crate's reader's limit.
    #[must_use]
    pub fn new() -> Monitor {
        Monitor::with_max_line_len(DEFAULT_MAX_LINE_LEN)
    }

    /// A monitor for an engine that reads lines of at most `max` bytes (LF
    /// excluded): a longer command line is refused as the crate's reader
    /// with that limit refuses it, and ends the engine's reading.
    #[must_use]
    pub fn with_max_line_len(max: usize) -> Monitor {
        Monitor {
            max,
            lines: [0; 2],
            owed: VecDeque::new(),
            stop: None,
            unread_refused: VecDeque::new(),
            unread_ids: VecDeque::new(),
            canonical: Vec::new(),
        }
    }

    /// Judges the controller's next line, as the engine must read it:
    /// `line` with its LF (without one only as the last line of a stream).
    pub fn command(&mut self, line: &[u8]) -> Judged {
        if content_len(line) > self.max {
            return self.command_too_long();
        }
        let n = self.next(0);
        let mut found = Vec::new();
        framing(line, &mut found);
        let verdict = self.judge_command(n, line, &mut found);
        Judged {
            n,
            verdict,
            violations: found,
        }
    }

    /// Judges the controller's next line when it is longer than the limit,
    /// for a caller that does not hold it whole (the tap forwards such a
    /// line in pieces).
    pub fn command_too_long(&mut self) -> Judged {
        let n = self.next(0);
        let mut found = Vec::new();
        let verdict = if self.stop.is_some() {
            self.unread(n, None);
            Verdict::Unread
        } else {
            let owed = v2::ReadError::TooLong {
                line: n,
                max: self.max,
            };
            found.push(too_long(self.max));
            self.owe(n, &owed.event_line(), Some("over the limit"), &mut found);
            Verdict::Refused
        };
        Judged {
            n,
            verdict,
            violations: found,
        }
    }

    /// Judges the engine's next stdout line, as a controller must read it:
    /// `line` with its LF (without one only as the last line of a stream).
    pub fn event(&mut self, line: &[u8]) -> Judged {
        if content_len(line) > self.max {
            return self.event_too_long();
        }
        let n = self.next(1);
        let mut found = Vec::new();
        framing(line, &mut found);
        let verdict = self.judge_event(line, &mut found);
        Judged {
            n,
            verdict,
            violations: found,
        }
    }

    /// Judges the engine's next stdout line when it is longer than the
    /// limit, for a caller that does not hold it whole.
    pub fn event_too_long(&mut self) -> Judged {
        let n = self.next(1);
        Judged {
            n,
            verdict: Verdict::NotEvent,
            violations: vec![
                too_long(self.max),
                stray(&format!("longer than {} bytes", self.max)),
            ],
        }
    }

    /// The engine has exited: the refused lines it never answered, oldest
    /// first, each an [`Kind::Unanswered`] violation. Forgets them.
    pub fn finish(&mut self) -> Vec<Violation> {
        std::mem::take(&mut self.owed)
            .into_iter()
            .map(|owed| {
                Violation::new(
                    Kind::Unanswered,
                    format!(
                        "command {} was refused and never answered; the engine owed {}",
                        owed.n, owed.event
                    ),
                )
                .with_number("command_n", owed.n)
                .with("owed", &owed.event)
            })
            .collect()
    }

    /// Lines judged so far: the controller's and the engine's.
    #[must_use]
    pub fn lines(&self) -> (u64, u64) {
        (self.lines[0], self.lines[1])
    }

    fn next(&mut self, dir: usize) -> u64 {
        self.lines[dir] += 1;
        self.lines[dir]
    }

    /// A command line, read as the engine must read it.
    fn judge_command(&mut self, n: u64, bytes: &[u8], found: &mut Vec<Violation>) -> Verdict {
        let item = CommandReader::with_max_line_len(bytes, usize::MAX).next();
        if self.stop.is_some() {
            // The engine must not read it: nothing to report, but what it
            // would be answered with is kept, to catch the engine reading it.
            match item {
                None => {}
                Some(Ok(command)) if command.serve_refusal().is_none() => {
                    self.unread(n, Some(&command));
                }
                Some(_) => self.unread(n, None),
            }
            found.clear();
            return Verdict::Unread;
        }
        match item {
            None => {
                found.push(Violation::new(
                    Kind::Blank,
                    "blank line; the engine skips it".to_owned(),
                ));
                Verdict::Blank
            }
            Some(Ok(command)) => match command.serve_refusal_event_line() {
                Some(event) => {
                    self.owe(n, &event, None, found);
                    Verdict::Refused
                }
                None => {
                    self.canonical(&command, bytes, found);
                    Verdict::Command
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
                Verdict::Refused
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
            Violation::new(Kind::Refused, format!("refused; the engine owes {event}"))
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
                Violation::new(
                    Kind::NotCanonical,
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
    fn judge_event(&mut self, bytes: &[u8], found: &mut Vec<Violation>) -> Verdict {
        match EventReader::with_max_line_len(bytes, usize::MAX).next() {
            None => {
                found.push(Violation::new(
                    Kind::Blank,
                    "blank line; a controller skips it".to_owned(),
                ));
                Verdict::Blank
            }
            Some(Err(error)) => {
                let reason = match &error {
                    v2::EventReadError::NotJson { error, .. } => format!("not JSON: {error}"),
                    v2::EventReadError::NotAnEvent { error, .. } => error.to_string(),
                    other => other.to_string(),
                };
                found.push(stray(&reason));
                Verdict::NotEvent
            }
            Some(Ok(event)) => match event.command_error_cause() {
                Some(cause) => {
                    self.answer(&cause.to_string(), found);
                    Verdict::CommandError
                }
                None => {
                    self.read_on(&event, found);
                    Verdict::Event
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
                    Violation::new(
                        Kind::WrongAnswer,
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
                Violation::new(
                    Kind::UnexpectedAnswer,
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
        Violation::new(
            Kind::StillReading,
            format!(
                "the engine read on after command {stop} ({why}): this {what} answers command {n}"
            ),
        )
        .with_number("command_n", n)
        .with_number("stopped_at", stop)
    }
}

/// A line's length without its LF.
fn content_len(line: &[u8]) -> usize {
    line.len() - usize::from(line.ends_with(b"\n"))
}

/// CRLF and a BOM, which the readers see only as what they make of them (a
/// CR is JSON whitespace, a BOM is not JSON).
fn framing(bytes: &[u8], found: &mut Vec<Violation>) {
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        found.push(Violation::new(
            Kind::Bom,
            "starts with a UTF-8 BOM, which is not JSON".to_owned(),
        ));
    }
    if bytes.ends_with(b"\r\n") {
        found.push(Violation::new(
            Kind::Crlf,
            "ends in CRLF; the CR is read as JSON whitespace".to_owned(),
        ));
    }
}

fn too_long(max: usize) -> Violation {
    Violation::new(
        Kind::TooLong,
        format!("longer than {max} bytes, the line limit"),
    )
    .with_number("max", max as u64)
}

fn stray(reason: &str) -> Violation {
    Violation::new(Kind::Stray, format!("stray output, not an event: {reason}"))
        .with("reason", reason)
}

/// The event that answers `command` and the id it carries back, for the
/// commands whose answer names them.
fn answered_by(command: &Command) -> Option<(&'static str, &str)> {
    match command {
        Command::JobsSnapshot { request_id, .. } => Some(("jobs_snapshot", request_id)),
        Command::JobStop { request_id, .. } => Some(("job_stop_result", request_id)),
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

/// At most 200 characters of `text` for a person (the detail holds it
/// whole).
fn shorten(text: &str) -> String {
    match text.char_indices().nth(200) {
        Some((i, _)) => format!("{}... ({} bytes)", &text[..i], text.len()),
        None => text.to_owned(),
    }
}
