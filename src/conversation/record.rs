//! A session's recording: every line that crossed between a controller and
//! an engine, both ways, with its time, in the log format of
//! `serve-command tap --log` (which `serve-command trace` reads).
//!
//! [`Recorder`] is fed the lines by whoever sees them cross (a
//! controller); the tap feeds the same judgement ([`Log`], `log.rs`, one
//! piece of code for both) and writes the same records, byte for byte but
//! the times. `log_reader.rs` reads them back. This module is the face of
//! all three for the CLI (`record::{Log, LogReader, ...}`).

pub use super::log::{exit_words, Direction, Log, Logged, Piece, Redact};
pub use super::log_reader::{LogError, LogReader, Record, Wire, MAX_RECORD};
use super::reply::{Options, Sink};
use crate::v2::DEFAULT_MAX_LINE_LEN;
use std::borrow::Cow;
use std::fmt;
use std::io::{self, Write};
use std::process::ExitStatus;
use std::sync::{Arc, Mutex, PoisonError};

/// Writes a session's recording: every line that crosses between a
/// controller and an engine, both ways, with its time, one JSON record per
/// line, in the log format of `serve-command tap --log` (the tap's help
/// gives every field; `serve-command trace` reads it). For the same lines
/// the records are byte for byte the tap's but for their times (`t_ms`,
/// `t_us`: milliseconds and microseconds since the recorder was made): the
/// same judgement (each line's `verdict` and `violations`, each event's
/// `answers` and `turn`), the same escaping (`line_base64` for a line that
/// is not UTF-8) and the same `"line":null` for a line over the limit.
///
/// Its methods take `&self` and it is `Send + Sync`: a controller's writer
/// and its reader threads record into one. Feed it the lines in the order
/// they cross (a refused command line before the `command_error` that
/// answers it); each line's numbers (`n`, per direction, from 1, blank
/// lines counted) are its place in its direction, as the tap numbers them.
///
/// Each record is written whole with one `write_all`, then the writer is
/// flushed, so a recording cut short (the process killed) still reads
/// through `trace` up to its last record. Recording blocks on nothing but
/// the writer: when a write fails, the first error is kept
/// ([`Recorder::error`]) and nothing more is written; no call panics.
///
/// What users typed and what models said can be kept out of the
/// recording with [`Recorder::redact`] (the tap's `--redact`).
///
/// Feature `workbench`: the judgement is the workbench's `Monitor`.
///
/// ```
/// use serve_command::v2::serve::Recorder;
/// use std::sync::{Arc, Mutex};
///
/// #[derive(Clone, Default)]
/// struct Shared(Arc<Mutex<Vec<u8>>>);
/// impl std::io::Write for Shared {
///     fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
///         self.0.lock().unwrap().write(buf)
///     }
///     fn flush(&mut self) -> std::io::Result<()> {
///         Ok(())
///     }
/// }
///
/// let file = Shared::default();
/// let recorder = Recorder::new(file.clone());
/// recorder.command(b"{\"command\":\"jobs_snapshot\",\"request_id\":\"j1\"}\n");
/// recorder.event(b"{\"event\":\"jobs_snapshot\",\"request_id\":\"j1\",\"jobs\":[]}");
/// recorder.finish(None);
/// assert!(recorder.error().is_none());
/// let log = String::from_utf8(file.0.lock().unwrap().clone()).unwrap();
/// let event = log.lines().nth(1).unwrap();
/// assert!(event.starts_with("{\"t_ms\":"));
/// assert!(event.ends_with(
///     r#""dir":"event","n":1,"line":"{\"event\":\"jobs_snapshot\",\"request_id\":\"j1\",\"jobs\":[]}","verdict":"event","answers":1,"turn":null,"violations":[]}"#
/// ));
/// ```
pub struct Recorder {
    inner: Mutex<Inner>,
}

struct Inner {
    log: Log,
    /// `None` once a write has failed, or the recording is finished.
    out: Option<Box<dyn Write + Send>>,
    error: Option<Arc<io::Error>>,
    /// A line and its LF, as the judgement takes it.
    line: Vec<u8>,
    /// The engine's stderr line begun in bytes given to `stderr_bytes`
    /// (at most the limit), and whether it is over the limit (recorded
    /// already; the rest of it up to its LF is dropped).
    stderr: Vec<u8>,
    stderr_long: bool,
}

impl Recorder {
    /// A recorder writing to `writer`, for an engine that reads lines of
    /// at most [`DEFAULT_MAX_LINE_LEN`] bytes; its clock starts now.
    pub fn new(writer: impl Write + Send + 'static) -> Recorder {
        Recorder::with_max_line_len(writer, DEFAULT_MAX_LINE_LEN)
    }

    /// A recorder writing to `writer`, for an engine that reads lines of
    /// at most `max` bytes (LF excluded; `tap --max-line-len`): a longer
    /// line is recorded as the tap records it, `"line":null`, a command
    /// line refused. Its clock starts now.
    pub fn with_max_line_len(writer: impl Write + Send + 'static, max: usize) -> Recorder {
        Recorder {
            inner: Mutex::new(Inner {
                log: Log::new(max, true),
                out: Some(Box::new(writer)),
                error: None,
                line: Vec::new(),
                stderr: Vec::new(),
                stderr_long: false,
            }),
        }
    }

    /// The recorder, with `f` applied to the text it records, so that what
    /// users typed and what models said (secrets, personal data) does not
    /// reach the recording: `f` takes a text and gives it back with what
    /// must not be kept replaced (`Cow::Borrowed` when nothing is). As the
    /// tap's `--redact` does, and with the same code:
    ///
    /// - a line that is a JSON text (a command, an event): `f` is applied
    ///   to the contents of its string values, each unescaped first, and
    ///   a value `f` changes is written back escaped; object keys (the
    ///   protocol's words) and every other byte of the line are kept as
    ///   they are, and a line `f` changes nothing of is recorded byte for
    ///   byte;
    /// - a line that is UTF-8 but not JSON, and a stderr line: `f` is
    ///   applied to the whole of it;
    /// - a line that is not UTF-8 (recorded as `line_base64`) is recorded
    ///   as it is, unredacted;
    /// - the violations' messages and texts (a `not_canonical` line's
    ///   `canonical`, a refused line's `owes`, ...) are redacted as the
    ///   lines are.
    ///
    /// The judgement is made on the lines as they crossed: a record's
    /// `verdict`, `violations` (but their texts), `answers` and `turn` are
    /// what they are without redaction. A redacted recording holds
    /// command lines other than those sent, so `serve-command trace` and
    /// a replay of it read the redacted lines. Given more than once, the
    /// redactions apply in turn, in the order given.
    ///
    /// ```
    /// use serve_command::v2::serve::Recorder;
    /// use std::borrow::Cow;
    /// use std::sync::{Arc, Mutex};
    ///
    /// #[derive(Clone, Default)]
    /// struct Shared(Arc<Mutex<Vec<u8>>>);
    /// impl std::io::Write for Shared {
    ///     fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
    ///         self.0.lock().unwrap().write(buf)
    ///     }
    ///     fn flush(&mut self) -> std::io::Result<()> {
    ///         Ok(())
    ///     }
    /// }
    ///
    /// let file = Shared::default();
    /// let recorder = Recorder::new(file.clone()).redact(|text: &str| {
    ///     if text.contains("hunter2") {
    ///         Cow::Owned(text.replace("hunter2", "[redacted]"))
    ///     } else {
    ///         Cow::Borrowed(text)
    ///     }
    /// });
    /// recorder.command(b"{\"command\":\"prompt\",\"content\":\"my password is hunter2\"}\n");
    /// recorder.stderr(b"login with hunter2");
    /// recorder.finish(None);
    /// let log = String::from_utf8(file.0.lock().unwrap().clone()).unwrap();
    /// let mut records = log.lines();
    /// assert!(records.next().unwrap().ends_with(
    ///     r#""dir":"command","n":1,"line":"{\"command\":\"prompt\",\"content\":\"my password is [redacted]\"}","verdict":"command","violations":[]}"#
    /// ));
    /// assert!(records.next().unwrap().ends_with(
    ///     r#""dir":"stderr","n":1,"line":"login with [redacted]","verdict":"text","violations":[]}"#
    /// ));
    /// assert!(!log.contains("hunter2"));
    /// ```
    #[must_use]
    pub fn redact(mut self, f: impl Fn(&str) -> Cow<'_, str> + Send + Sync + 'static) -> Recorder {
        self.inner
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .log
            .redact(Arc::new(f));
        self
    }

    /// Records a command line as the controller wrote it, its LF included
    /// or not: a line either way (bytes holding more than one line are
    /// recorded as their lines).
    pub fn command(&self, line: &[u8]) {
        self.lines(Direction::Command, line);
    }

    /// Records a line of the engine's stdout as read, without its LF (one
    /// at its end is dropped): blank lines too, each is numbered.
    pub fn event(&self, line: &[u8]) {
        self.lines(Direction::Event, line);
    }

    /// Records a line of the engine's stderr, without its LF (one at its
    /// end is dropped).
    pub fn stderr(&self, line: &[u8]) {
        self.lines(Direction::Stderr, line);
    }

    /// Records the engine's stderr from its bytes as read, in chunks of any
    /// size (for a reader that does not split it into lines): each line
    /// when its LF comes, as the tap does: a line over the limit is
    /// recorded (`"line":null`) as soon as it is over, never held whole;
    /// a last line without LF is recorded by [`finish`](Recorder::finish).
    /// Use it or [`stderr`](Recorder::stderr), not both.
    pub fn stderr_bytes(&self, bytes: &[u8]) {
        let mut inner = lock(&self.inner);
        if inner.out.is_none() {
            return;
        }
        let max = inner.log.max;
        let mut pending = std::mem::take(&mut inner.stderr);
        let mut rest = bytes;
        loop {
            let (part, lf) = match memchr::memchr(b'\n', rest) {
                Some(i) => (&rest[..i], Some(i)),
                None => (rest, None),
            };
            if inner.stderr_long {
                // Dropped: the line was recorded when it went over.
            } else if pending.len() + part.len() > max {
                inner.record(Direction::Stderr, Piece::TooLong);
                pending.clear();
                inner.stderr_long = true;
            } else {
                pending.extend_from_slice(part);
            }
            let Some(i) = lf else { break };
            if !std::mem::take(&mut inner.stderr_long) {
                pending.push(b'\n');
                inner.record(Direction::Stderr, Piece::Line(&pending));
                pending.clear();
            }
            rest = &rest[i + 1..];
        }
        inner.stderr = pending;
    }

    /// Records a line of `direction` that was over the limit and was not
    /// held: `"line":null` (for a reader that keeps only the limit).
    pub(crate) fn too_long(&self, direction: Direction) {
        let mut inner = lock(&self.inner);
        if inner.out.is_some() {
            inner.record(direction, Piece::TooLong);
        }
    }

    /// Records the last line of `direction` when its stream ended without a
    /// LF after it (the engine died mid-line): `"lf":false`.
    pub fn unterminated(&self, direction: Direction, line: &[u8]) {
        let mut inner = lock(&self.inner);
        if inner.out.is_none() {
            return;
        }
        let piece = if line.len() > inner.log.max {
            Piece::TooLong
        } else {
            Piece::Line(line)
        };
        inner.record(direction, piece);
    }

    /// Ends the recording once the engine has stopped, with what the tap
    /// writes then: the last line given to
    /// [`stderr_bytes`](Recorder::stderr_bytes) if it had no LF, the `exit`
    /// record (the refused lines it never answered) and the `summary`. `status` is the engine's exit status:
    /// `None` when it is not known (an engine attached to rather than
    /// spawned, or one still running), written `"status":null,"code":null`.
    /// Nothing is recorded after it. A recording never finished (cut
    /// short) reads through `trace` all the same.
    pub fn finish(&self, status: Option<ExitStatus>) {
        let mut inner = lock(&self.inner);
        if inner.out.is_none() {
            return;
        }
        let pending = std::mem::take(&mut inner.stderr);
        if !pending.is_empty() {
            inner.record(Direction::Stderr, Piece::Line(&pending));
        }
        let said = status.map(exit_words);
        let Inner {
            log, out, error, ..
        } = &mut *inner;
        let logged = log.finish(said.as_ref().map(|(s, code)| (s.as_str(), *code)));
        write(out, error, logged.record);
        inner.out = None;
    }

    /// The first error writing the recording; after it nothing more was
    /// written.
    #[must_use]
    pub fn error(&self) -> Option<Arc<io::Error>> {
        lock(&self.inner).error.clone()
    }

    fn lines(&self, direction: Direction, bytes: &[u8]) {
        let mut inner = lock(&self.inner);
        if inner.out.is_none() {
            return;
        }
        let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
        for text in bytes.split(|&b| b == b'\n') {
            inner.line(direction, text);
        }
    }
}

impl Options {
    /// These options recording the session to `recorder`, in the log
    /// format of `serve-command tap --log` (`serve-command trace` reads
    /// it): each line as it crosses, in the order the controller's model
    /// takes them, so `trace` attributes every event as the controller did.
    #[must_use]
    pub fn record(mut self, recorder: Recorder) -> Options {
        self.recording = Some(Box::new(recorder));
        self
    }
}

impl Inner {
    /// Records `text`, a whole line without its LF.
    fn line(&mut self, direction: Direction, text: &[u8]) {
        let mut line = std::mem::take(&mut self.line);
        let piece = if text.len() > self.log.max {
            Piece::TooLong
        } else {
            line.clear();
            line.extend_from_slice(text);
            line.push(b'\n');
            Piece::Line(&line)
        };
        self.record(direction, piece);
        self.line = line;
    }

    /// Judges `piece` and writes its record.
    fn record(&mut self, direction: Direction, piece: Piece<'_>) {
        // The record is built in the log's buffer, and written from it.
        let logged = self.log.line(direction, piece);
        write(&mut self.out, &mut self.error, logged.record);
    }
}

/// Writes `record` whole and flushes it; on an error, keeps it and writes
/// no more.
fn write(
    out: &mut Option<Box<dyn Write + Send>>,
    error: &mut Option<Arc<io::Error>>,
    record: &[u8],
) {
    if let Some(w) = out {
        if let Err(e) = w.write_all(record).and_then(|()| w.flush()) {
            *out = None;
            *error = Some(Arc::new(e));
        }
    }
}

impl fmt::Debug for Recorder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inner = lock(&self.inner);
        let (commands, events) = inner.log.monitor.lines();
        f.debug_struct("Recorder")
            .field("commands", &commands)
            .field("events", &events)
            .field("stderr", &inner.log.stderr_lines)
            .field("writing", &inner.out.is_some())
            .field("error", &inner.error)
            .finish_non_exhaustive()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Sink for Recorder {
    fn command(&self, line: &[u8]) {
        Recorder::command(self, line);
    }

    fn event(&self, line: &[u8], lf: bool) {
        if lf {
            Recorder::event(self, line);
        } else {
            self.unterminated(Direction::Event, line);
        }
    }

    fn stderr(&self, line: &[u8], lf: bool) {
        if lf {
            Recorder::stderr(self, line);
        } else {
            self.unterminated(Direction::Stderr, line);
        }
    }

    fn finish(&self, status: Option<ExitStatus>) {
        Recorder::finish(self, status);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A recorder's redactions apply in the order given, to what it writes.
    #[test]
    fn a_recorders_redactions_apply_in_turn() {
        #[derive(Clone, Default)]
        struct Shared(Arc<Mutex<Vec<u8>>>);
        impl Write for Shared {
            fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
                lock(&self.0).extend_from_slice(buf);
                Ok(buf.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let file = Shared::default();
        let recorder = Recorder::new(file.clone())
            .redact(|text: &str| Cow::Owned(text.replace('x', "y")))
            .redact(|text: &str| Cow::Owned(text.replace('y', "z")));
        recorder.stderr(b"xyw");
        let log = String::from_utf8(lock(&file.0).clone()).unwrap();
        assert!(
            log.contains(r#""dir":"stderr","n":1,"line":"zzw""#),
            "{log}"
        );
    }
}
