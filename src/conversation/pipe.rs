//! A pipe for an engine in process, closed on drop: std's is above 1.85, UnixStream halves don't close.
//!
//! Why not the OS's: `std::io::pipe` needs Rust 1.87, above the crate's
//! minimum (1.85), and a `UnixStream::pair` end split by `try_clone`
//! stays open while either half lives, so dropping the writer does not
//! close it.
//!
//! [`pipe`] is what [`Controller::attach`](super::Controller::attach)
//! needs to drive an engine on a thread of the same process (an
//! [`EngineLoop`](super::EngineLoop), the workbench's `MockEngine`): two
//! of them, one for the commands and one for the events. Dropping the
//! writer is the end of input for the reader, as closing an OS pipe is;
//! so [`Controller::close`](super::Controller::close) (which drops its
//! writer) reaches the engine as the end of its stdin, and the engine's
//! return (which drops its writer) reaches the controller as the end of
//! its stdout. As an OS pipe, it holds at most [`PIPE_CAPACITY`] bytes: a
//! writer blocks while it is full, so an end that stops reading holds the
//! other back rather than growing memory; and once the reader is dropped
//! a write fails with [`io::ErrorKind::BrokenPipe`].
//!
//! On tokio, `tokio::io::duplex` already closes when a stream is dropped:
//! attach a `TokioController` over two of them (one a direction), each
//! end passed whole, not split.

use std::collections::VecDeque;
use std::fmt;
use std::io::{self, Read, Write};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

/// How many bytes a [`pipe`] holds unread before its writer blocks: 64
/// KiB, a Linux pipe's default.
const PIPE_CAPACITY: usize = 64 * 1024;

/// What the two ends share.
struct Shared {
    state: Mutex<State>,
    /// Signalled when bytes arrive or the writer closes.
    readable: Condvar,
    /// Signalled when bytes are read or the reader closes.
    writable: Condvar,
}

/// The bytes written and not yet read, and which ends are gone.
struct State {
    bytes: VecDeque<u8>,
    writer_closed: bool,
    reader_closed: bool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // No code panics while holding it; a poisoned lock holds a whole
        // state still.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn fmt(&self, name: &str, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.lock();
        f.debug_struct(name)
            .field("buffered", &state.bytes.len())
            .field("writer_closed", &state.writer_closed)
            .field("reader_closed", &state.reader_closed)
            .finish()
    }
}

/// The reading end of a [`pipe`]: reads block until bytes arrive, and
/// read `Ok(0)` once the [`PipeWriter`] is dropped and every byte it wrote
/// has been read.
pub struct PipeReader(Arc<Shared>);

/// The writing end of a [`pipe`]: writes block while the pipe is full
/// (64 KiB unread), and fail with [`io::ErrorKind::BrokenPipe`] once the
/// [`PipeReader`] is dropped. Dropping it is the reader's end of input.
pub struct PipeWriter(Arc<Shared>);

/// An in-memory one-way byte pipe, for an engine and a controller in one
/// process: what the [`PipeWriter`] writes, the [`PipeReader`] reads, in
/// order, and dropping an end is seen at the other (the end of input, or
/// a broken pipe). Both ends are `Send`: each goes to its own thread.
///
/// # Examples
///
/// An engine on a thread, attached over two pipes; closing the
/// controller ends the engine's input, so the engine returns, and its
/// output closes:
///
/// ```
/// use serve_command::v2::serve::{pipe, Controller, Engine, EngineLoop, RunningTurn, WorkError};
/// use std::io::BufReader;
///
/// struct Echo;
///
/// impl Engine for Echo {
///     fn turn(&self, turn: &mut RunningTurn<'_>) -> Result<String, WorkError> {
///         Ok(format!("You said: {}", turn.content().to_text()))
///     }
/// }
///
/// let (commands_in, commands_out) = pipe();
/// let (events_in, events_out) = pipe();
/// let engine = std::thread::spawn(move || {
///     EngineLoop::new(Echo).serve(BufReader::new(commands_in), events_out)
/// });
/// let controller = Controller::attach(events_in, commands_out);
///
/// let turn = controller.prompt("hello")?.wait()?;
/// assert_eq!(turn.answer(), Some("You said: hello"));
///
/// // No exit status for an engine in process: `None`, once its output closed.
/// assert_eq!(controller.close()?, None);
/// assert!(engine.join().unwrap()?.is_none());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[must_use]
pub fn pipe() -> (PipeReader, PipeWriter) {
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            bytes: VecDeque::new(),
            writer_closed: false,
            reader_closed: false,
        }),
        readable: Condvar::new(),
        writable: Condvar::new(),
    });
    (PipeReader(Arc::clone(&shared)), PipeWriter(shared))
}

impl Read for PipeReader {
    /// Waits until there are bytes to read or the writer is gone; reads
    /// as many as `buf` holds. `Ok(0)` at the end (or for an empty `buf`,
    /// at once).
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let mut state = self.0.lock();
        while state.bytes.is_empty() && !state.writer_closed {
            state = self
                .0
                .readable
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
        let n = buf.len().min(state.bytes.len());
        for (slot, byte) in buf.iter_mut().zip(state.bytes.drain(..n)) {
            *slot = byte;
        }
        drop(state);
        if n > 0 {
            self.0.writable.notify_all();
        }
        Ok(n)
    }
}

impl Write for PipeWriter {
    /// Waits until the pipe has room or the reader is gone; writes as many
    /// bytes as fit (all of them when the reader keeps up).
    ///
    /// # Errors
    ///
    /// [`io::ErrorKind::BrokenPipe`] once the reader is dropped.
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let mut state = self.0.lock();
        loop {
            if state.reader_closed {
                return Err(io::Error::new(
                    io::ErrorKind::BrokenPipe,
                    "the pipe's reader was dropped",
                ));
            }
            if state.bytes.len() < PIPE_CAPACITY {
                break;
            }
            state = self
                .0
                .writable
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
        let n = buf.len().min(PIPE_CAPACITY - state.bytes.len());
        state.bytes.extend(&buf[..n]);
        drop(state);
        self.0.readable.notify_all();
        Ok(n)
    }

    /// Nothing to flush: every byte written is the reader's already.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for PipeReader {
    /// Breaks the pipe: a write waiting, and every later one, fails. The
    /// bytes left unread are freed.
    fn drop(&mut self) {
        let mut state = self.0.lock();
        state.reader_closed = true;
        state.bytes = VecDeque::new();
        drop(state);
        self.0.writable.notify_all();
    }
}

impl Drop for PipeWriter {
    /// Closes the pipe: the reader reads what is left, then `Ok(0)`.
    fn drop(&mut self) {
        self.0.lock().writer_closed = true;
        self.0.readable.notify_all();
    }
}

impl fmt::Debug for PipeReader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt("PipeReader", f)
    }
}

impl fmt::Debug for PipeWriter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt("PipeWriter", f)
    }
}

#[cfg(test)]
mod tests {
    use super::{pipe, PIPE_CAPACITY};
    use std::io::{ErrorKind, Read, Write};
    use std::sync::mpsc;
    use std::thread;
    use std::time::Duration;

    /// How long a blocked end is given to show it is blocked, and the
    /// bound on a wake-up that must come.
    const BLOCKED: Duration = Duration::from_millis(100);
    const WAKES: Duration = Duration::from_secs(5);

    /// What a fact found.
    type Found = Result<(), String>;
    /// A fact: what it says, and its check.
    type Fact = (&'static str, fn() -> Found);

    /// Bytes come out in the order written, across writes and reads of any
    /// size.
    fn in_order() -> Found {
        let (mut reader, mut writer) = pipe();
        let sent: Vec<u8> = (0..=255).cycle().take(10_000).collect();
        let expected = sent.clone();
        let writing = thread::spawn(move || {
            for chunk in sent.chunks(777) {
                writer.write_all(chunk).unwrap();
            }
        });
        let mut got = Vec::new();
        let mut buf = [0; 300];
        loop {
            match reader.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => got.extend_from_slice(&buf[..n]),
                Err(e) => return Err(format!("read failed: {e}")),
            }
        }
        writing.join().unwrap();
        (got == expected)
            .then_some(())
            .ok_or_else(|| format!("read {} bytes, not those written", got.len()))
    }

    /// The writer dropped: what it wrote is read, then `Ok(0)`, and again.
    fn eof_after_drained() -> Found {
        let (mut reader, mut writer) = pipe();
        writer.write_all(b"last words").unwrap();
        drop(writer);
        let mut got = Vec::new();
        reader.read_to_end(&mut got).map_err(|e| e.to_string())?;
        let again = reader.read(&mut [0; 8]).map_err(|e| e.to_string())?;
        (got == b"last words" && again == 0)
            .then_some(())
            .ok_or_else(|| format!("read {got:?}, then {again} bytes"))
    }

    /// The reader dropped: a write fails with `BrokenPipe`, even of what
    /// would fit.
    fn broken_pipe_after_reader_dropped() -> Found {
        let (reader, mut writer) = pipe();
        drop(reader);
        match writer.write(b"x") {
            Err(e) if e.kind() == ErrorKind::BrokenPipe => Ok(()),
            other => Err(format!("the write gave {other:?}")),
        }
    }

    /// A writer blocked on a full pipe (64 KiB unread) goes on once the
    /// reader reads.
    fn full_writer_wakes_on_read() -> Found {
        let (mut reader, mut writer) = pipe();
        writer.write_all(&vec![7; PIPE_CAPACITY]).unwrap();
        let (done, wrote) = mpsc::channel();
        let writing = thread::spawn(move || {
            let result = writer.write(b"more");
            let _ = done.send(());
            result.map_err(|e| e.to_string())
        });
        if wrote.recv_timeout(BLOCKED).is_ok() {
            return Err("a write to a full pipe did not block".into());
        }
        let mut buf = [0; 1024];
        reader.read_exact(&mut buf).unwrap();
        if wrote.recv_timeout(WAKES).is_err() {
            return Err("the blocked writer did not wake on a read".into());
        }
        match writing.join().unwrap() {
            Ok(4) => Ok(()),
            other => Err(format!("the woken write gave {other:?}")),
        }
    }

    /// A writer blocked on a full pipe fails with `BrokenPipe` once the
    /// reader is dropped.
    fn full_writer_wakes_on_reader_dropped() -> Found {
        let (reader, mut writer) = pipe();
        writer.write_all(&vec![7; PIPE_CAPACITY]).unwrap();
        let writing = thread::spawn(move || writer.write(b"more").map_err(|e| e.kind()));
        thread::sleep(BLOCKED);
        drop(reader);
        match writing.join().unwrap() {
            Err(ErrorKind::BrokenPipe) => Ok(()),
            other => Err(format!("the woken write gave {other:?}")),
        }
    }

    /// A reader blocked on an empty pipe reads `Ok(0)` once the writer is
    /// dropped.
    fn blocked_reader_wakes_on_writer_dropped() -> Found {
        let (mut reader, writer) = pipe();
        let (done, read) = mpsc::channel();
        let reading = thread::spawn(move || {
            let result = reader.read(&mut [0; 16]);
            let _ = done.send(());
            result.map_err(|e| e.to_string())
        });
        if read.recv_timeout(BLOCKED).is_ok() {
            return Err("a read of an empty pipe did not block".into());
        }
        drop(writer);
        if read.recv_timeout(WAKES).is_err() {
            return Err("the blocked reader did not wake at the writer's drop".into());
        }
        match reading.join().unwrap() {
            Ok(0) => Ok(()),
            other => Err(format!("the woken read gave {other:?}")),
        }
    }

    /// A read into an empty buffer returns 0 at once, though the pipe is
    /// empty and its writer alive.
    fn empty_buffer_reads_zero_at_once() -> Found {
        let (mut reader, writer) = pipe();
        let (done, read) = mpsc::channel();
        thread::spawn(move || {
            let _ = done.send(reader.read(&mut []).map_err(|e| e.to_string()));
        });
        let got = read.recv_timeout(WAKES);
        drop(writer);
        match got {
            Ok(Ok(0)) => Ok(()),
            Ok(other) => Err(format!("the read gave {other:?}")),
            Err(_) => Err("the read blocked".into()),
        }
    }

    /// Both ends are `Send` and `Debug`, and say what they hold.
    fn ends_are_send_and_debug() -> Found {
        fn send<T: Send + std::fmt::Debug>(t: &T) -> String {
            format!("{t:?}")
        }
        let (reader, mut writer) = pipe();
        writer.write_all(b"abc").unwrap();
        let shown = (send(&reader), send(&writer));
        let expected = (
            "PipeReader { buffered: 3, writer_closed: false, reader_closed: false }",
            "PipeWriter { buffered: 3, writer_closed: false, reader_closed: false }",
        );
        (shown.0 == expected.0 && shown.1 == expected.1)
            .then_some(())
            .ok_or_else(|| format!("shown as {shown:?}"))
    }

    #[test]
    fn the_pipe_s_facts() {
        let facts: [Fact; 8] = [
            ("bytes come out in order", in_order),
            (
                "EOF after the writer dropped and drained",
                eof_after_drained,
            ),
            (
                "BrokenPipe after the reader dropped",
                broken_pipe_after_reader_dropped,
            ),
            ("a full writer wakes on a read", full_writer_wakes_on_read),
            (
                "a full writer wakes on the reader's drop",
                full_writer_wakes_on_reader_dropped,
            ),
            (
                "a blocked reader wakes on the writer's drop",
                blocked_reader_wakes_on_writer_dropped,
            ),
            (
                "an empty buffer reads 0 at once",
                empty_buffer_reads_zero_at_once,
            ),
            ("the ends are Send and Debug", ends_are_send_and_debug),
        ];
        let failed: Vec<String> = facts
            .iter()
            .filter_map(|(fact, check)| check().err().map(|why| format!("{fact}: {why}")))
            .collect();
        assert!(failed.is_empty(), "{failed:#?}");
    }
}
