//! What the tap reports of each line crossing it: the judgement and the
//! log's records are the crate's (`v2::serve::record::Log`, which the
//! controller's `Recorder` writes with too: the workbench's `Monitor`, the
//! serve loop's model `v2::serve::Conversation`, the counts); here each
//! violation is reported on stderr, one line each, the records written to
//! the log file, and the engine's stderr lines passed on between the
//! reports, in the order they were read.

use serve_command::v2::serve::record::{Direction, Log, Logged, Piece, Redact};
use serve_command::v2::serve::Conversation;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::sync::Arc;

/// The tap's whole account of a session, shared by its three streams.
pub struct Judge {
    log: Log,
    out: Option<LogFile>,
    /// The engine's stderr, as passed on, ends mid-line: a report starts a
    /// line of its own.
    mid_line: bool,
    /// The tap's stderr failed: the engine's is no longer passed on.
    stderr_gone: bool,
    /// The summary is written: nothing more is judged.
    finished: bool,
    /// The serve loop's model, fed as the log's is: what the engine still
    /// owes at its exit.
    conversation: Conversation,
}

struct LogFile {
    name: String,
    out: BufWriter<File>,
}

impl Judge {
    /// A judge of lines of at most `max` bytes, logging to `log` with
    /// each record's text passed through `redact`.
    pub fn new(max: usize, log: Option<(String, File)>, redact: Option<Arc<Redact>>) -> Self {
        let mut judged = Log::new(max, log.is_some());
        if let Some(f) = redact {
            judged.redact(f);
        }
        Judge {
            log: judged,
            out: log.map(|(name, file)| LogFile {
                name,
                out: BufWriter::with_capacity(64 * 1024, file),
            }),
            mid_line: false,
            stderr_gone: false,
            finished: false,
            conversation: Conversation::new(),
        }
    }

    /// Judges one line of `direction`, reports what is wrong with it and logs it.
    pub fn line(&mut self, direction: Direction, piece: Piece<'_>) {
        if self.finished {
            return;
        }
        match (direction, &piece) {
            (Direction::Command, Piece::Line(bytes)) => {
                self.conversation.command(bytes);
            }
            // Refused, and the engine reads no further (as the log's model).
            (Direction::Command, Piece::TooLong) => {
                self.conversation.command(b"{");
            }
            (Direction::Event, Piece::Line(bytes)) => {
                self.conversation.event(bytes);
            }
            (Direction::Event, Piece::TooLong) => {
                self.conversation.event(b"");
            }
            _ => {}
        }
        let logged = self.log.line(direction, piece);
        let failed = write(&mut self.out, &logged);
        if !logged.violations.is_empty() || logged.unattributed.is_some() {
            let place = format!("{} {}", direction.as_str(), logged.n);
            report_found(&place, &logged, &mut self.mid_line);
        }
        self.log_failed(failed);
    }

    /// Passes on bytes of the engine's stderr: false once the tap's own
    /// stderr has failed.
    pub fn pass_stderr(&mut self, bytes: &[u8]) -> bool {
        if self.stderr_gone {
            return false;
        }
        if bytes.is_empty() {
            return true;
        }
        let mut err = io::stderr().lock();
        match err.write_all(bytes).and_then(|()| err.flush()) {
            Ok(()) => {
                self.mid_line = !bytes.ends_with(b"\n");
                true
            }
            Err(_) => {
                self.stderr_gone = true;
                false
            }
        }
    }

    /// The engine has exited with `status` (`exit N` or `signal N`, the
    /// tap's exit code `code`): what it still owed, then the summary.
    pub fn finish(&mut self, status: &str, code: u8) {
        if std::mem::replace(&mut self.finished, true) {
            return;
        }
        let logged = self.log.finish(Some((status, code)));
        let failed = write(&mut self.out, &logged);
        report_found("exit", &logged, &mut self.mid_line);
        self.log_failed(failed);
        let owed = self.conversation.owed();
        if !owed.is_empty() {
            // As `trace` ends: each thing owed, by the command it answers.
            let mut words = Vec::new();
            let _ = crate::trace::owed_text(&owed, &mut words);
            let words = String::from_utf8_lossy(&words);
            let said: String = words
                .lines()
                .map(|l| match l.strip_prefix("owed:") {
                    Some(rest) => format!("tap: owed at the engine's exit:{rest}\n"),
                    None => format!("tap: {l}\n"),
                })
                .collect();
            report(&said, &mut self.mid_line);
        }

        let said = self
            .log
            .counts()
            .iter()
            .map(|(kind, count)| format!("{count} {kind}"))
            .collect::<Vec<_>>()
            .join(", ");
        let (commands, events, stderr) = self.log.lines();
        let (errors, notes) = self.log.errors_and_notes();
        let plural = |n: u64, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
        let verdict = if said.is_empty() {
            "no violations".to_owned()
        } else {
            format!(
                "{}, {} ({said})",
                plural(errors, "error"),
                plural(notes, "note")
            )
        };
        report(
            &format!(
                "tap: summary: {}, {}, {}; {verdict}; the engine's {status}\n",
                plural(commands, "command line"),
                plural(events, "event line"),
                plural(stderr, "stderr line"),
            ),
            &mut self.mid_line,
        );
        self.flush_log();
    }

    /// Writes what the log holds, as the tap is about to wait for input.
    pub fn flush_log(&mut self) {
        let failed = match &mut self.out {
            Some(log) => log.out.flush().err(),
            None => None,
        };
        self.log_failed(failed);
    }

    /// The log cannot be written: said once, and the session goes on
    /// without it.
    fn log_failed(&mut self, e: Option<io::Error>) {
        let Some(e) = e else { return };
        if let Some(log) = self.out.take() {
            report(
                &format!(
                    "tap: {}: {}; no more is logged\n",
                    log.name,
                    crate::output::describe(&e)
                ),
                &mut self.mid_line,
            );
        }
    }
}

/// Writes `logged`'s record to the log; the error when that fails.
fn write(out: &mut Option<LogFile>, logged: &Logged<'_>) -> Option<io::Error> {
    let log = out.as_mut()?;
    log.out.write_all(logged.record).err()
}

/// Reports each violation of `logged` on stderr, one line each.
fn report_found(place: &str, logged: &Logged<'_>, mid_line: &mut bool) {
    for v in logged.violations {
        let note = if v.kind().is_note() { "note: " } else { "" };
        report(&format!("tap: {place}: {note}{}\n", v.message()), mid_line);
    }
    if let Some(reason) = logged.unattributed {
        report(
            &format!("tap: {place}: attributed to nothing: {reason}\n"),
            mid_line,
        );
    }
}

/// One report line on stderr, on a line of its own after the engine's
/// stderr ended mid-line; nowhere left to say so if that fails.
fn report(line: &str, mid_line: &mut bool) {
    let mut err = io::stderr().lock();
    if std::mem::take(mid_line) {
        let _ = err.write_all(b"\n");
    }
    let _ = err.write_all(line.as_bytes());
}
