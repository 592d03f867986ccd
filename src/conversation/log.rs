//! The log format of a session, written: each line that crosses, judged
//! (the tap's [`Monitor`](super::monitor::Monitor)), attributed (the
//! model) and built into its record, with what must not be recorded
//! redacted. The one writer, shared by `serve-command tap --log` and the
//! [`Recorder`](super::Recorder); public for the CLI, not the crate's API.

use super::monitor::{Detail, Kind, Monitor, Violation};
use crate::conversation::{Attribution, Conversation};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::io::Write as _;
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Instant;

/// Which way a line crossed: a record's `dir`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// The controller's line, to the engine's stdin (`"dir":"command"`).
    Command,
    /// The engine's stdout line, to the controller (`"dir":"event"`).
    Event,
    /// The engine's stderr line (`"dir":"stderr"`).
    Stderr,
}

impl Direction {
    /// The record's `dir`: `command`, `event` or `stderr`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Command => "command",
            Direction::Event => "event",
            Direction::Stderr => "stderr",
        }
    }
}

/// `exit N` or `signal N` (a record's `status`), and the exit code that
/// passes it on (128 + N for a signal, as a shell says it).
#[doc(hidden)]
#[must_use]
pub fn exit_words(status: ExitStatus) -> (String, u8) {
    if let Some(code) = status.code() {
        return (
            format!("exit {code}"),
            u8::try_from(code & 0xff).unwrap_or(1),
        );
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            let code = u8::try_from(128 + signal).unwrap_or(255);
            return (format!("signal {signal}"), code);
        }
    }
    (status.to_string(), 1)
}

/// One line as the log takes it.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub enum Piece<'a> {
    /// A whole line, its LF included (absent only on the last line of a
    /// stream).
    Line(&'a [u8]),
    /// A line longer than the limit, not held: `"line":null`.
    TooLong,
}

/// What [`Log::line`] and [`Log::finish`] found, and the records they
/// built.
#[doc(hidden)]
#[derive(Debug)]
pub struct Logged<'a> {
    /// The line's number in its direction; 0 for the end.
    pub n: u64,
    /// What the line shows, in the order the record lists them.
    pub violations: &'a [Violation],
    /// Why an event fits no rule of the serve loop, when it does not and
    /// the violations do not say so already (its `unattributed` violation,
    /// last in the record).
    pub unattributed: Option<&'a str>,
    /// The record (for the end, the `exit` and `summary` records), LF
    /// ended; empty when the log builds none.
    pub record: &'a [u8],
}

/// The records of a session, a line at a time: the judgement
/// (`workbench::Monitor`), the attribution (`Conversation`), the counts,
/// and each record's bytes. The one writer of the log format, shared by
/// `serve-command tap --log` and [`Recorder`]; public for the CLI, not
/// part of the crate's API.
#[doc(hidden)]
#[derive(Debug)]
pub struct Log {
    start: Instant,
    pub(super) max: usize,
    pub(super) monitor: Monitor,
    conversation: Conversation,
    pub(super) stderr_lines: u64,
    /// Violations by kind.
    counts: BTreeMap<&'static str, u64>,
    errors: u64,
    notes: u64,
    /// Build records (not for a tap with no `--log`).
    records: bool,
    /// The last line's violations.
    found: Vec<Violation>,
    unattributed: Option<String>,
    /// The last record(s), in a buffer kept from line to line: no
    /// allocation per line once it has grown to the longest.
    record: Vec<u8>,
    /// What the records' texts are passed through ([`Log::redact`]).
    redact: Option<Redaction>,
}

/// A redaction: a text, with what must not be recorded replaced
/// ([`Log::redact`]); public for the CLI, not part of the crate's API.
#[doc(hidden)]
pub type Redact = dyn Fn(&str) -> Cow<'_, str> + Send + Sync;

/// A [`Redact`], for a `Debug` log.
struct Redaction(Arc<Redact>);

impl fmt::Debug for Redaction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Redaction")
    }
}

/// `f`, as a [`Redact`] (a closure's signature is inferred from the bound).
fn redaction(f: impl Fn(&str) -> Cow<'_, str> + Send + Sync + 'static) -> Arc<Redact> {
    Arc::new(f)
}

impl Log {
    /// A log for an engine reading lines of at most `max` bytes; its clock
    /// starts now. With `records` false it only judges and counts.
    #[must_use]
    pub fn new(max: usize, records: bool) -> Log {
        Log {
            start: Instant::now(),
            max,
            monitor: Monitor::with_max_line_len(max),
            conversation: Conversation::new(),
            stderr_lines: 0,
            counts: BTreeMap::new(),
            errors: 0,
            notes: 0,
            records,
            found: Vec::new(),
            unattributed: None,
            record: Vec::new(),
            redact: None,
        }
    }

    /// Passes the text of each record through `f` before it is written
    /// (after any redaction given before): [`Recorder::redact`] says
    /// what is redacted and how. The judgement is made on the lines as
    /// they crossed.
    pub fn redact(&mut self, f: Arc<Redact>) {
        self.redact = Some(Redaction(match self.redact.take() {
            None => f,
            Some(Redaction(first)) => redaction(move |text| match first(text) {
                Cow::Borrowed(text) => f(text),
                Cow::Owned(text) => Cow::Owned(f(&text).into_owned()),
            }),
        }));
    }

    /// Judges one line of `direction`, counts what it shows and builds its
    /// record.
    pub fn line(&mut self, direction: Direction, piece: Piece<'_>) -> Logged<'_> {
        let mut attribution = None;
        let judged = match (direction, piece) {
            (Direction::Command, Piece::Line(bytes)) => {
                self.conversation.command(bytes);
                self.monitor.command(bytes)
            }
            (Direction::Command, Piece::TooLong) => {
                // Refused, and the engine reads no further: what the model
                // does with a line that is not JSON.
                self.conversation.command(NOT_JSON);
                self.monitor.command_too_long()
            }
            (Direction::Event, Piece::Line(bytes)) => {
                attribution = Some(self.conversation.event(bytes));
                self.monitor.event(bytes)
            }
            (Direction::Event, Piece::TooLong) => {
                // Not an event: counted, attributed to nothing.
                attribution = Some(self.conversation.event(b""));
                self.monitor.event_too_long()
            }
            (Direction::Stderr, _) => {
                self.stderr_lines += 1;
                self.found.clear();
                self.unattributed = None;
                let n = self.stderr_lines;
                self.build("stderr", n, Some(piece), "text", None, "");
                return self.logged(n);
            }
        };
        self.found = judged.violations;
        // An event that fits no rule of the serve loop, unless the monitor
        // has said why already: a `command_error` or a reply to a line the
        // engine owes nothing is its `unexpected_answer` or `still_reading`.
        self.unattributed = attribution
            .as_ref()
            .and_then(|a| a.violation.clone())
            .filter(|_| {
                !self
                    .found
                    .iter()
                    .any(|v| matches!(v.kind(), Kind::UnexpectedAnswer | Kind::StillReading))
            });
        self.count();
        self.build(
            direction.as_str(),
            judged.n,
            Some(piece),
            judged.verdict.as_str(),
            attribution.as_ref(),
            "",
        );
        self.logged(judged.n)
    }

    /// The engine has stopped with `status` (`exit N` or `signal N`, and
    /// the exit code that passes it on; `None` when not known): what it
    /// still owed (the `exit` record), then the `summary`.
    pub fn finish(&mut self, status: Option<(&str, u8)>) -> Logged<'_> {
        self.found = self.monitor.finish();
        self.unattributed = None;
        self.count();
        let (status, code) = match status {
            Some((status, code)) => (json(status), code.to_string()),
            None => ("null".to_owned(), "null".to_owned()),
        };
        let extra = format!(",\"status\":{status},\"code\":{code}");
        self.build("exit", 0, None, "", None, &extra);
        if self.records {
            let mut by_kind = String::new();
            for (kind, count) in &self.counts {
                let comma = if by_kind.is_empty() { "" } else { "," };
                by_kind += &format!("{comma}{}:{count}", json(kind));
            }
            let (commands, events) = self.monitor.lines();
            let stderr = self.stderr_lines;
            self.time();
            // Writes to a `Vec` cannot fail.
            let _ = writeln!(
                self.record,
                ",\"dir\":\"summary\",\"lines\":{{\"command\":{commands},\"event\":{events},\"stderr\":{stderr}}},\"violations\":{{{by_kind}}},\"status\":{status},\"code\":{code}}}",
            );
        }
        self.logged(0)
    }

    /// Lines judged so far: commands, events, stderr.
    #[must_use]
    pub fn lines(&self) -> (u64, u64, u64) {
        let (commands, events) = self.monitor.lines();
        (commands, events, self.stderr_lines)
    }

    /// Violations so far by kind (`unattributed` included), in the order of
    /// their names.
    #[must_use]
    pub fn counts(&self) -> &BTreeMap<&'static str, u64> {
        &self.counts
    }

    /// Violations so far that are errors, and that are notes.
    #[must_use]
    pub fn errors_and_notes(&self) -> (u64, u64) {
        (self.errors, self.notes)
    }

    fn logged(&self, n: u64) -> Logged<'_> {
        Logged {
            n,
            violations: &self.found,
            unattributed: self.unattributed.as_deref(),
            record: &self.record,
        }
    }

    fn count(&mut self) {
        for v in &self.found {
            *self.counts.entry(v.kind().as_str()).or_default() += 1;
            if v.kind().is_note() {
                self.notes += 1;
            } else {
                self.errors += 1;
            }
        }
        if self.unattributed.is_some() {
            *self.counts.entry(UNATTRIBUTED).or_default() += 1;
            self.errors += 1;
        }
    }

    /// Starts a record in the buffer: `{"t_ms":MS,"t_us":US`.
    fn time(&mut self) {
        let t = self.start.elapsed();
        // Writes to a `Vec` cannot fail.
        let _ = write!(
            self.record,
            "{{\"t_ms\":{},\"t_us\":{}",
            t.as_millis(),
            t.as_micros()
        );
    }

    /// The record of a line (`piece`) or of the end (none), with the
    /// violations found; an event line's carries its `attribution`.
    fn build(
        &mut self,
        dir: &str,
        n: u64,
        piece: Option<Piece<'_>>,
        verdict: &str,
        attribution: Option<&Attribution>,
        extra: &str,
    ) {
        self.record.clear();
        if !self.records {
            return;
        }
        self.time();
        let r = &mut self.record;
        let redact = self.redact.as_ref().map(|r| &*r.0);
        // Writes to a `Vec` cannot fail.
        let _ = write!(r, ",\"dir\":\"{dir}\"");
        if let Some(piece) = piece {
            let _ = write!(r, ",\"n\":{n}");
            match piece {
                Piece::Line(bytes) => {
                    let (text, lf) = match bytes.strip_suffix(b"\n") {
                        Some(text) => (text, true),
                        None => (bytes, false),
                    };
                    match std::str::from_utf8(text) {
                        Ok(text) => {
                            r.extend_from_slice(b",\"line\":");
                            match redact {
                                None => json_to(r, text),
                                Some(f) if dir == Direction::Stderr.as_str() => {
                                    json_to(r, &f(text));
                                }
                                Some(f) => json_to(r, &redact_line(f, text)),
                            }
                        }
                        // Left as it is, redaction or not: `f` takes text.
                        Err(_) => {
                            use base64::Engine;
                            r.extend_from_slice(b",\"line_base64\":\"");
                            r.extend_from_slice(
                                base64::engine::general_purpose::STANDARD
                                    .encode(text)
                                    .as_bytes(),
                            );
                            r.push(b'"');
                        }
                    }
                    if !lf {
                        r.extend_from_slice(b",\"lf\":false");
                    }
                }
                Piece::TooLong => r.extend_from_slice(b",\"line\":null"),
            }
            let _ = write!(r, ",\"verdict\":\"{verdict}\"");
        }
        if let Some(a) = attribution {
            r.extend_from_slice(b",\"answers\":");
            number_or_null(r, a.answers);
            r.extend_from_slice(b",\"turn\":");
            number_or_null(r, a.turn);
        }
        r.extend_from_slice(extra.as_bytes());
        r.extend_from_slice(b",\"violations\":[");
        for (i, v) in self.found.iter().enumerate() {
            let level = if v.kind().is_note() { "note" } else { "error" };
            let comma = if i == 0 { "" } else { "," };
            let _ = write!(
                r,
                "{comma}{{\"kind\":\"{}\",\"level\":\"{level}\",\"message\":",
                v.kind().as_str()
            );
            json_to(r, &redact_text(redact, v.message()));
            for (key, detail) in v.details() {
                r.push(b',');
                json_to(r, key);
                r.push(b':');
                match detail {
                    // A line (`canonical`, `owes`) or a message.
                    Detail::Text(text) => match redact {
                        Some(f) => json_to(r, &redact_line(f, text)),
                        None => json_to(r, text),
                    },
                    Detail::Number(n) => {
                        let _ = write!(r, "{n}");
                    }
                }
            }
            r.push(b'}');
        }
        if let Some(reason) = &self.unattributed {
            let comma = if self.found.is_empty() { "" } else { "," };
            let _ = write!(
                r,
                "{comma}{{\"kind\":\"{UNATTRIBUTED}\",\"level\":\"error\",\"message\":"
            );
            let reason = redact_text(redact, reason);
            json_to(r, &format!("attributed to nothing: {reason}"));
            r.extend_from_slice(b",\"reason\":");
            json_to(r, &reason);
            r.push(b'}');
        }
        r.extend_from_slice(b"]}\n");
    }
}

/// The violation kind of an event that fits no rule of the serve loop.
const UNATTRIBUTED: &str = "unattributed";

/// A line the model reads as not JSON: what a command line over the limit
/// is to the engine (refused, and the end of its reading).
const NOT_JSON: &[u8] = b"x";

/// `text` through `f`, when there is one.
fn redact_text<'a>(f: Option<&Redact>, text: &'a str) -> Cow<'a, str> {
    match f {
        Some(f) => f(text),
        None => Cow::Borrowed(text),
    }
}

/// `line` as recorded with the redaction `f`: when it is a JSON text, `f`
/// applied to the contents of its string values (not its object keys, the
/// protocol's words), each unescaped, and written back escaped when `f`
/// changed it, every other byte kept; otherwise `f` applied to the whole.
fn redact_line<'a>(f: &Redact, line: &'a str) -> Cow<'a, str> {
    if serde_json::from_str::<serde::de::IgnoredAny>(line).is_err() {
        return f(line);
    }
    let bytes = line.as_bytes();
    // `line[..copied]` is in `out`, once a value has changed.
    let mut out = String::new();
    let mut copied = 0;
    let mut at = 0;
    while let Some(start) = memchr::memchr(b'"', &bytes[at..]).map(|i| at + i) {
        // The line is JSON: outside a string, a quote starts one, and it
        // ends at the next quote not escaped.
        let mut end = start + 1;
        while bytes[end] != b'"' {
            end += if bytes[end] == b'\\' { 2 } else { 1 };
        }
        at = end + 1;
        let key = line[at..]
            .trim_start_matches([' ', '\t', '\n', '\r'])
            .starts_with(':');
        if key {
            continue;
        }
        if let Some(value) = redact_literal(f, &line[start..at]) {
            out.push_str(&line[copied..start]);
            out.push_str(&value);
            copied = at;
        }
    }
    if copied == 0 {
        return Cow::Borrowed(line);
    }
    out.push_str(&line[copied..]);
    Cow::Owned(out)
}

/// The JSON string `literal` (quotes included) redacted by `f`, escaped;
/// `None` when `f` changes nothing.
fn redact_literal(f: &Redact, literal: &str) -> Option<String> {
    let raw = &literal[1..literal.len() - 1];
    let text = if raw.contains('\\') {
        // A lone surrogate (`\ud800`) cannot be unescaped: its text is
        // redacted as written, escapes and all.
        serde_json::from_str::<String>(literal).map_or(Cow::Borrowed(raw), Cow::Owned)
    } else {
        Cow::Borrowed(raw)
    };
    let redacted = f(&text);
    (*redacted != *text).then(|| json(&redacted))
}

/// `n`, or `null`.
fn number_or_null(out: &mut Vec<u8>, n: Option<u64>) {
    match n {
        // Writes to a `Vec` cannot fail.
        Some(n) => {
            let _ = write!(out, "{n}");
        }
        None => out.extend_from_slice(b"null"),
    }
}

/// A JSON string.
fn json(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// `s` as a JSON string, appended to `out`.
fn json_to(out: &mut Vec<u8>, s: &str) {
    // Writing to a `Vec` cannot fail.
    let _ = serde_json::to_writer(out, s);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::v2::DEFAULT_MAX_LINE_LEN;

    /// `from` replaced by `[redacted]`, as the tap's `--redact` does.
    fn replacing(from: &'static str) -> Arc<Redact> {
        redaction(move |text| {
            if text.contains(from) {
                Cow::Owned(text.replace(from, "[redacted]"))
            } else {
                Cow::Borrowed(text)
            }
        })
    }

    /// The records of `lines` with the redaction, each without its times.
    fn records(f: Option<Arc<Redact>>, lines: &[(Direction, &[u8])]) -> Vec<String> {
        let mut log = Log::new(DEFAULT_MAX_LINE_LEN, true);
        if let Some(f) = f {
            log.redact(f);
        }
        lines
            .iter()
            .map(|&(direction, line)| {
                let record = log.line(direction, Piece::Line(line)).record;
                let record = std::str::from_utf8(record).unwrap();
                let rest = &record[record.find(",\"dir\"").unwrap()..];
                rest.to_owned()
            })
            .collect()
    }

    /// `(key, text)` of the record's line: `line` or `line_base64`.
    fn line_of(record: &str) -> (&'static str, String) {
        let value: serde_json::Value = serde_json::from_str(record).unwrap();
        for key in ["line", "line_base64"] {
            if let Some(text) = value.get(key) {
                return (key, text.as_str().unwrap().to_owned());
            }
        }
        panic!("no line: {record}");
    }

    #[test]
    fn a_redaction_rewrites_the_string_values_of_a_json_line_and_the_whole_of_other_text() {
        use Direction::{Command, Event, Stderr};
        // (direction, line, what is replaced, the record's line)
        type Case<'a> = (Direction, &'a [u8], &'a str, (&'a str, &'a str));
        let table: &[Case<'_>] = &[
            // A value.
            (
                Command,
                br#"{"command":"prompt","content":"my secret plan"}"#,
                "secret",
                ("line", r#"{"command":"prompt","content":"my [redacted] plan"}"#),
            ),
            // A key that matches is a protocol word: kept; the value is not.
            (
                Command,
                br#"{"command":"prompt","content":"content here"}"#,
                "content",
                ("line", r#"{"command":"prompt","content":"[redacted] here"}"#),
            ),
            // Unescaped, redacted, written back escaped as the crate
            // escapes (`\u00e9` is `é` then).
            (
                Command,
                br#"{"command":"prompt","content":"say \"secret\"\nto caf\u00e9"}"#,
                "secret",
                ("line", r#"{"command":"prompt","content":"say \"[redacted]\"\nto café"}"#),
            ),
            // Escapes in a value that does not match: kept as written, as
            // is every other value, key and space of the line.
            (
                Command,
                br#"{"command":"prompt" , "content":"a secret \"x\" caf\u00e9\/","k" :  "caf\u00e9\/"}"#,
                "secret",
                ("line", r#"{"command":"prompt" , "content":"a [redacted] \"x\" café/","k" :  "caf\u00e9\/"}"#),
            ),
            // Nothing matches: byte for byte, odd spacing and key order too.
            (
                Command,
                b"{ \"content\" : \"hi\\u00e9\",\t\"command\":\"prompt\" }\r",
                "secret",
                ("line", "{ \"content\" : \"hi\\u00e9\",\t\"command\":\"prompt\" }\r"),
            ),
            // Strings in arrays and nested objects are values too; a
            // string that is the whole line as well.
            (
                Event,
                br#"{"event":"x","a":["secret",{"secret":"secret"}],"b":"secret"}"#,
                "secret",
                ("line", r#"{"event":"x","a":["[redacted]",{"secret":"[redacted]"}],"b":"[redacted]"}"#),
            ),
            (Event, br#""a secret""#, "secret", ("line", r#""a [redacted]""#)),
            // A lone surrogate cannot be unescaped: its value is redacted
            // as written.
            (
                Event,
                br#"{"event":"x","a":"\ud800 secret"}"#,
                "secret",
                ("line", r#"{"event":"x","a":"\\ud800 [redacted]"}"#),
            ),
            // Not JSON, but UTF-8: the whole of it.
            (
                Command,
                br#"secret: {"secret":1"#,
                "secret",
                ("line", r#"[redacted]: {"[redacted]":1"#),
            ),
            // Not UTF-8: as it is.
            (Command, b"secret \xff", "secret", ("line_base64", "c2VjcmV0IP8=")),
            // stderr: the whole of it, JSON or not.
            (
                Stderr,
                br#"{"secret":"secret"}"#,
                "secret",
                ("line", r#"{"[redacted]":"[redacted]"}"#),
            ),
        ];
        for &(direction, line, from, (key, expected)) in table {
            let mut with_lf = line.to_vec();
            with_lf.push(b'\n');
            let record = &records(Some(replacing(from)), &[(direction, &with_lf)])[0];
            let said = String::from_utf8_lossy(line);
            let record = format!("{{\"t_us\":0{record}");
            assert_eq!(line_of(&record), (key, expected.to_owned()), "{said}");
        }
    }

    #[test]
    fn a_redacted_record_is_the_same_record_but_its_texts() {
        use Direction::{Command, Event};
        // The escapes are not canonical: the note's message and its
        // `canonical` (the line as the crate writes it) are redacted too.
        let line: &[u8] =
            b"{\"command\":\"prompt\",\"content\":\"say \\\"secret\\\"\\nto caf\\u00e9\"}\n";
        assert_eq!(
            records(Some(replacing("secret")), &[(Command, line)]),
            [
                r#","dir":"command","n":1,"line":"{\"command\":\"prompt\",\"content\":\"say \\\"[redacted]\\\"\\nto café\"}","verdict":"command","violations":[{"kind":"not_canonical","level":"note","message":"not canonical (extra keys, legacy fields, another key order or spacing); the crate writes {\"command\":\"prompt\",\"content\":\"say \\\"[redacted]\\\"\\nto café\"}","canonical":"{\"command\":\"prompt\",\"content\":\"say \\\"[redacted]\\\"\\nto café\"}"}]}
"#
            ]
        );
        // A refused line's `owes` and message.
        assert_eq!(
            records(Some(replacing("JSON")), &[(Command, b"secret\n")]),
            [
                r#","dir":"command","n":1,"line":"secret","verdict":"refused","violations":[{"kind":"refused","level":"error","message":"refused; the engine owes {\"event\":\"command_error\",\"error\":\"command stream: expected a [redacted] value at byte 0\"}","owes":"{\"event\":\"command_error\",\"error\":\"command stream: expected a [redacted] value at byte 0\"}"}]}
"#
            ]
        );
        // The judgement is the lines' as they crossed: redacted, the
        // command would be refused, and the event would be stray,
        // attributed to nothing.
        let session: &[(Direction, &[u8])] = &[
            (
                Command,
                b"{\"command\":\"jobs_snapshot\",\"request_id\":\"j1\"}\n",
            ),
            (
                Event,
                b"{\"event\":\"jobs_snapshot\",\"request_id\":\"j1\",\"jobs\":[]}\n",
            ),
        ];
        assert_eq!(
            records(Some(replacing("jobs_snapshot")), session),
            [
                r#","dir":"command","n":1,"line":"{\"command\":\"[redacted]\",\"request_id\":\"j1\"}","verdict":"command","violations":[]}
"#,
                r#","dir":"event","n":1,"line":"{\"event\":\"[redacted]\",\"request_id\":\"j1\",\"jobs\":[]}","verdict":"event","answers":1,"turn":null,"violations":[]}
"#,
            ]
        );
        // Without a redaction, or with one that changes nothing, the
        // records are the lines'.
        let plain = [
            r#","dir":"command","n":1,"line":"{\"command\":\"jobs_snapshot\",\"request_id\":\"j1\"}","verdict":"command","violations":[]}
"#,
            r#","dir":"event","n":1,"line":"{\"event\":\"jobs_snapshot\",\"request_id\":\"j1\",\"jobs\":[]}","verdict":"event","answers":1,"turn":null,"violations":[]}
"#,
        ];
        assert_eq!(records(None, session), plain);
        assert_eq!(records(Some(replacing("secret")), session), plain);
    }

    #[test]
    fn redactions_given_in_turn_apply_in_turn() {
        let mut log = Log::new(DEFAULT_MAX_LINE_LEN, true);
        log.redact(replacing("ab"));
        // Sees the first's output: `[redacted]c` holds no `abc`, but `]c`.
        log.redact(replacing("]c"));
        let record = log
            .line(Direction::Stderr, Piece::Line(b"abc ab xy\n"))
            .record;
        let (_, line) = line_of(std::str::from_utf8(record).unwrap());
        assert_eq!(line, "[redacted[redacted] [redacted] xy");
    }
}
