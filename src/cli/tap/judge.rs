//! What the tap reports of each line crossing it: the judgement is the
//! workbench's `Monitor` (the crate's own readers, and the bookkeeping of
//! which answer the engine owes); here it is counted, reported on stderr,
//! one line per violation, and written to the log. Each line also goes to
//! the serve loop's model (`v2::serve::Conversation`), which says what
//! each event answers and which turn it belongs to.

use serve_command::v2::serve::{Attribution, Conversation};
use serve_command::workbench::{Detail, Judged, Kind, Monitor, Violation};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::time::Instant;

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

/// The tap's whole account of a session, shared by its three streams.
pub struct Judge {
    start: Instant,
    monitor: Monitor,
    /// What each event answers, and which turn it belongs to.
    conversation: Conversation,
    /// Lines of the engine's stderr seen so far.
    stderr_lines: u64,
    /// Violations by kind.
    counts: BTreeMap<&'static str, u64>,
    errors: u64,
    notes: u64,
    log: Option<Log>,
    /// A record being written to the log.
    scratch: Vec<u8>,
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
            monitor: Monitor::with_max_line_len(max),
            conversation: Conversation::new(),
            stderr_lines: 0,
            counts: BTreeMap::new(),
            errors: 0,
            notes: 0,
            log: log.map(|(name, file)| Log {
                name,
                out: BufWriter::with_capacity(64 * 1024, file),
            }),
            scratch: Vec::new(),
            finished: false,
        }
    }

    /// Judges one line of `dir`, reports what is wrong with it and logs it.
    pub fn line(&mut self, dir: Dir, piece: Piece<'_>) {
        if self.finished {
            return;
        }
        let mut attribution = None;
        let judged: Judged = match (dir, &piece) {
            (Dir::Command, Piece::Line(bytes)) => {
                self.conversation.command(bytes);
                self.monitor.command(bytes)
            }
            (Dir::Command, Piece::TooLong) => {
                // Refused, and the engine reads no further: what the model
                // does with a line that is not JSON.
                self.conversation.command(NOT_JSON);
                self.monitor.command_too_long()
            }
            (Dir::Event, Piece::Line(bytes)) => {
                attribution = Some(self.conversation.event(bytes));
                self.monitor.event(bytes)
            }
            (Dir::Event, Piece::TooLong) => {
                // Not an event: counted, attributed to nothing.
                attribution = Some(self.conversation.event(b""));
                self.monitor.event_too_long()
            }
            (Dir::Stderr, _) => {
                self.stderr_lines += 1;
                let n = self.stderr_lines;
                self.record("stderr", n, Some(&piece), "text", &[], None, "");
                return;
            }
        };
        self.record(
            dir.name(),
            judged.n,
            Some(&piece),
            judged.verdict.as_str(),
            &judged.violations,
            attribution.as_ref(),
            "",
        );
    }

    /// The engine has exited with `status` (`exit N` or `signal N`, the
    /// tap's exit code `code`): what it still owed, then the summary.
    pub fn finish(&mut self, status: &str, code: u8) {
        if std::mem::replace(&mut self.finished, true) {
            return;
        }
        let found = self.monitor.finish();
        let extra = format!(",\"status\":{},\"code\":{code}", json(status));
        self.record("exit", 0, None, "", &found, None, &extra);

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
        let (commands, events) = self.monitor.lines();
        let stderr = self.stderr_lines;
        self.write_log(
            format!(
            "{{\"t_ms\":{},\"dir\":\"summary\",\"lines\":{{\"command\":{commands},\"event\":{events},\"stderr\":{stderr}}},\"violations\":{{{by_kind}}},\"status\":{},\"code\":{code}}}\n",
            self.t_ms(),
            json(status),
        )
            .as_bytes(),
        );
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

    /// Reports each violation on stderr and writes the line's record; an
    /// event line's record carries its `attribution`.
    #[allow(clippy::too_many_arguments)]
    fn record(
        &mut self,
        dir: &str,
        n: u64,
        piece: Option<&Piece<'_>>,
        verdict: &str,
        found: &[Violation],
        attribution: Option<&Attribution>,
        extra: &str,
    ) {
        let place = || {
            if dir == "exit" {
                "exit".to_owned()
            } else {
                format!("{dir} {n}")
            }
        };
        for v in found {
            let place = place();
            *self.counts.entry(v.kind().as_str()).or_default() += 1;
            let note = if v.kind().is_note() {
                self.notes += 1;
                "note: "
            } else {
                self.errors += 1;
                ""
            };
            report(&format!("tap: {place}: {note}{}\n", v.message()));
        }
        // An event that fits no rule of the serve loop, unless the monitor
        // has said why already: a `command_error` or a reply to a line the
        // engine owes nothing is its `unexpected_answer` or `still_reading`.
        let unattributed = attribution
            .and_then(|a| a.violation.as_deref())
            .filter(|_| {
                !found
                    .iter()
                    .any(|v| matches!(v.kind(), Kind::UnexpectedAnswer | Kind::StillReading))
            });
        if let Some(reason) = unattributed {
            *self.counts.entry(UNATTRIBUTED).or_default() += 1;
            self.errors += 1;
            report(&format!(
                "tap: {}: attributed to nothing: {reason}\n",
                place()
            ));
        }
        if self.log.is_none() {
            return;
        }
        // Built in a buffer kept from record to record: no allocation per
        // line once it has grown to the longest.
        let mut r = std::mem::take(&mut self.scratch);
        r.clear();
        // Writes to a `Vec` cannot fail.
        let _ = write!(r, "{{\"t_ms\":{},\"dir\":\"{dir}\"", self.t_ms());
        if let Some(piece) = piece {
            let _ = write!(r, ",\"n\":{n}");
            match piece {
                Piece::Line(bytes) => {
                    let (text, lf) = match bytes.strip_suffix(b"\n") {
                        Some(text) => (text, true),
                        None => (*bytes, false),
                    };
                    match std::str::from_utf8(text) {
                        Ok(text) => {
                            r.extend_from_slice(b",\"line\":");
                            json_to(&mut r, text);
                        }
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
            number_or_null(&mut r, a.answers);
            r.extend_from_slice(b",\"turn\":");
            number_or_null(&mut r, a.turn);
        }
        r.extend_from_slice(extra.as_bytes());
        r.extend_from_slice(b",\"violations\":[");
        for (i, v) in found.iter().enumerate() {
            let level = if v.kind().is_note() { "note" } else { "error" };
            let comma = if i == 0 { "" } else { "," };
            let _ = write!(
                r,
                "{comma}{{\"kind\":\"{}\",\"level\":\"{level}\",\"message\":",
                v.kind().as_str()
            );
            json_to(&mut r, v.message());
            for (key, detail) in v.details() {
                r.push(b',');
                json_to(&mut r, key);
                r.push(b':');
                match detail {
                    Detail::Text(text) => json_to(&mut r, text),
                    Detail::Number(n) => {
                        let _ = write!(r, "{n}");
                    }
                    _ => r.extend_from_slice(b"null"),
                }
            }
            r.push(b'}');
        }
        if let Some(reason) = unattributed {
            let comma = if found.is_empty() { "" } else { "," };
            let _ = write!(
                r,
                "{comma}{{\"kind\":\"{UNATTRIBUTED}\",\"level\":\"error\",\"message\":"
            );
            json_to(&mut r, &format!("attributed to nothing: {reason}"));
            r.extend_from_slice(b",\"reason\":");
            json_to(&mut r, reason);
            r.push(b'}');
        }
        r.extend_from_slice(b"]}\n");
        self.write_log(&r);
        self.scratch = r;
    }

    fn t_ms(&self) -> u128 {
        self.start.elapsed().as_millis()
    }

    fn write_log(&mut self, record: &[u8]) {
        if let Some(log) = &mut self.log {
            if let Err(e) = log.out.write_all(record) {
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

/// The violation kind of an event that fits no rule of the serve loop.
const UNATTRIBUTED: &str = "unattributed";

/// A line the model reads as not JSON: what a command line over the limit
/// is to the engine (refused, and the end of its reading).
const NOT_JSON: &[u8] = b"x";

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

/// One report line on stderr; nowhere left to say so if that fails.
fn report(line: &str) {
    let _ = io::stderr().lock().write_all(line.as_bytes());
}
