//! How the runner reaches an engine: its two pipes ([`Pipes`]), over a
//! child's stdio (in a process group of its own, killed with it) or to an
//! engine in process ([`EngineInput`], [`EngineOutput`], on a thread of
//! its own), each stdout line bounded by the line limit and the whole by
//! the runner's bound.

use super::run::ended;
use super::shown::shown;
use super::verdict::{End, EXIT_GRACE};
use crate::v2::{ReadError, DEFAULT_MAX_LINE_LEN};
use std::collections::VecDeque;
use std::io::{self, BufRead, Read, Write};
use std::process::{Child, ExitStatus, Stdio};
use std::sync::{mpsc, Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The last lines of the engine's stderr a verdict keeps.
const STDERR_TAIL: usize = 20;
/// How long its stderr may stay open after it exited (a child of it
/// holding it), before that child is killed with the group.
const STDERR_GRACE: Duration = Duration::from_millis(200);

/// What the runner reads next from the engine.
pub(super) enum Recv {
    /// A line (its LF taken off), kept up to the line limit, and its whole
    /// length.
    Line(Vec<u8>, usize),
    /// Nothing until the time given.
    Quiet,
    /// Its stdout closed.
    Closed,
    /// It wrote more than the runner reads: this many bytes.
    Flooded(u64),
}

/// The two pipes to an engine, as the runner holds them: lines to its
/// stdin (a thread writes them), lines from its stdout (a thread reads
/// them).
pub(super) struct Pipes {
    stdin: Option<mpsc::Sender<Vec<u8>>>,
    stdout: mpsc::Receiver<Out>,
}

impl Pipes {
    pub(super) fn send(&mut self, line: Vec<u8>) {
        // An engine that stopped reading is judged by what it answers.
        if let Some(stdin) = &self.stdin {
            let _ = stdin.send(line);
        }
    }

    pub(super) fn close(&mut self) {
        self.stdin = None;
    }

    pub(super) fn recv(&mut self, until: Instant) -> Recv {
        recv_from(&self.stdout, until)
    }
}

/// One engine, as the runner drives it: a child or one in process.
pub(super) trait Wire {
    fn pipes(&mut self) -> &mut Pipes;
    fn virtual_pauses(&self) -> bool;
    /// Ends the engine (killing it when `kill`, or when it does not exit
    /// soon); how it ended, and its stderr's tail.
    fn finish(&mut self, kill: bool) -> (End, Vec<String>);
}

/// What the stdout reader thread says.
enum Out {
    Line(Vec<u8>, usize),
    Closed,
    Flooded(u64),
}

/// Reads `src` line by line to the channel: each kept up to the line
/// limit, at most `max` bytes in all.
fn read_lines(mut src: impl BufRead, tx: &mpsc::SyncSender<Out>, max: u64) {
    let mut total = 0u64;
    loop {
        let mut line = Vec::new();
        let mut len = 0usize;
        let mut ended = false;
        loop {
            let buf = match src.fill_buf() {
                Ok(buf) => buf,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => &[][..],
            };
            if buf.is_empty() {
                ended = true;
                break;
            }
            let (take, lf) = match memchr::memchr(b'\n', buf) {
                Some(i) => (i, true),
                None => (buf.len(), false),
            };
            let room = DEFAULT_MAX_LINE_LEN.saturating_sub(line.len());
            line.extend_from_slice(&buf[..take.min(room)]);
            len += take;
            src.consume(take + usize::from(lf));
            total += (take + usize::from(lf)) as u64;
            if total > max {
                let _ = tx.send(Out::Flooded(max));
                return;
            }
            if lf {
                break;
            }
        }
        if (len > 0 || !ended) && tx.send(Out::Line(line, len)).is_err() {
            return;
        }
        if ended {
            let _ = tx.send(Out::Closed);
            return;
        }
    }
}

fn recv_from(rx: &mpsc::Receiver<Out>, until: Instant) -> Recv {
    match rx.recv_timeout(until.saturating_duration_since(Instant::now())) {
        Ok(Out::Line(line, len)) => Recv::Line(line, len),
        Ok(Out::Flooded(max)) => Recv::Flooded(max),
        Ok(Out::Closed) | Err(mpsc::RecvTimeoutError::Disconnected) => Recv::Closed,
        Err(mpsc::RecvTimeoutError::Timeout) => Recv::Quiet,
    }
}

/// An engine program over its stdio, in a process group of its own.
pub(super) struct ChildWire {
    child: Child,
    pipes: Pipes,
    stderr: Arc<Mutex<VecDeque<String>>>,
    /// Closes when the engine's stderr has been read to its end.
    stderr_done: mpsc::Receiver<()>,
}

impl ChildWire {
    pub(super) fn spawn(
        engine: &mut std::process::Command,
        max_output: u64,
    ) -> io::Result<ChildWire> {
        engine
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            // Its own group, so that what it starts is killed with it.
            engine.process_group(0);
        }
        let mut child = engine.spawn()?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        let stderr = child.stderr.take().expect("piped");
        let (to_stdin, lines) = mpsc::channel::<Vec<u8>>();
        std::thread::spawn(move || {
            // An engine that stops reading is judged by what it answers.
            let mut stdin = stdin;
            for line in lines {
                if stdin.write_all(&line).and_then(|()| stdin.flush()).is_err() {
                    return;
                }
            }
        });
        let (tx, rx) = mpsc::sync_channel(256);
        std::thread::spawn(move || {
            read_lines(
                io::BufReader::with_capacity(64 << 10, stdout),
                &tx,
                max_output,
            )
        });
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let kept = Arc::clone(&tail);
        let (done, stderr_done) = mpsc::channel::<()>();
        std::thread::spawn(move || {
            let _done = done;
            let src = io::BufReader::new(stderr);
            let (tx, rx) = mpsc::sync_channel(64);
            std::thread::spawn(move || read_lines(src, &tx, u64::MAX));
            for out in rx {
                let Out::Line(line, _) = out else { break };
                let mut tail = kept.lock().unwrap_or_else(PoisonError::into_inner);
                tail.push_back(shown(&line));
                if tail.len() > STDERR_TAIL {
                    tail.pop_front();
                }
            }
        });
        Ok(ChildWire {
            child,
            pipes: Pipes {
                stdin: Some(to_stdin),
                stdout: rx,
            },
            stderr: tail,
            stderr_done,
        })
    }

    fn kill(&mut self) {
        #[cfg(unix)]
        {
            // The whole group: a shell's pipeline, an engine's helpers.
            let _ = std::process::Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", self.child.id())])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
        let _ = self.child.kill();
    }
}

impl Wire for ChildWire {
    fn pipes(&mut self) -> &mut Pipes {
        &mut self.pipes
    }

    fn virtual_pauses(&self) -> bool {
        false
    }

    fn finish(&mut self, kill: bool) -> (End, Vec<String>) {
        self.pipes.close();
        let mut end = None;
        if !kill {
            // Its stdout closed: it is exiting. Polled from 0.1 ms up, so a
            // quick exit costs a session no more than it takes.
            let until = Instant::now() + EXIT_GRACE;
            let mut pause = Duration::from_micros(100);
            while end.is_none() && Instant::now() < until {
                match self.child.try_wait() {
                    Ok(Some(status)) => end = Some(End::Exited(ended(status))),
                    Ok(None) => {
                        std::thread::sleep(pause);
                        pause = (pause * 2).min(Duration::from_millis(5));
                    }
                    Err(e) => end = Some(End::Exited(format!("could not be waited for: {e}"))),
                }
            }
        }
        // An engine that did not exit by itself goes with its group.
        if end.is_none() {
            self.kill();
        }
        let status: Option<ExitStatus> = self.child.wait().ok();
        let end = end.unwrap_or(if kill {
            End::Exited(status.map_or_else(|| "was killed".to_owned(), ended))
        } else {
            End::Lingered
        });
        // Its stderr to the end: at once once it exited, unless something
        // it started still holds stderr open; then that goes too.
        if self.stderr_done.recv_timeout(STDERR_GRACE).is_err() {
            self.kill();
        }
        let tail = self
            .stderr
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .cloned()
            .collect();
        (end, tail)
    }
}

/// The engine's input, in process: the lines the runner sends, then the
/// end of input once it closes.
#[derive(Debug)]
pub struct EngineInput {
    lines: mpsc::Receiver<Vec<u8>>,
    buf: Vec<u8>,
    at: usize,
}

impl Read for EngineInput {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = {
            let buf = self.fill_buf()?;
            let n = buf.len().min(out.len());
            out[..n].copy_from_slice(&buf[..n]);
            n
        };
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for EngineInput {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.at == self.buf.len() {
            match self.lines.recv() {
                Ok(line) => {
                    self.buf = line;
                    self.at = 0;
                }
                Err(_) => return Ok(&[]),
            }
        }
        Ok(&self.buf[self.at..])
    }

    fn consume(&mut self, n: usize) {
        self.at = (self.at + n).min(self.buf.len());
    }
}

/// The engine's output, in process: each line to the runner as it is
/// written.
#[derive(Debug)]
pub struct EngineOutput {
    lines: mpsc::SyncSender<Out>,
    partial: Vec<u8>,
    total: u64,
    max: u64,
}

impl Write for EngineOutput {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.total += bytes.len() as u64;
        if self.total > self.max {
            let _ = self.lines.send(Out::Flooded(self.max));
            return Err(io::ErrorKind::BrokenPipe.into());
        }
        let mut rest = bytes;
        while let Some(i) = memchr::memchr(b'\n', rest) {
            self.partial.extend_from_slice(&rest[..i]);
            let line = std::mem::take(&mut self.partial);
            let len = line.len();
            self.lines
                .send(Out::Line(line, len))
                .map_err(|_| io::Error::from(io::ErrorKind::BrokenPipe))?;
            rest = &rest[i + 1..];
        }
        self.partial.extend_from_slice(rest);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for EngineOutput {
    fn drop(&mut self) {
        if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            let len = line.len();
            let _ = self.lines.send(Out::Line(line, len));
        }
        let _ = self.lines.send(Out::Closed);
    }
}

/// An engine in process, on a thread of its own.
pub(super) struct InProcess {
    pipes: Pipes,
    result: mpsc::Receiver<String>,
    /// Joined once it has returned, so that no thread of a finished run
    /// outlives it (a leak checker sees its thread-locals otherwise).
    thread: Option<std::thread::JoinHandle<()>>,
}

impl InProcess {
    pub(super) fn start<F>(serve: F, max: u64) -> InProcess
    where
        F: FnOnce(EngineInput, EngineOutput) -> io::Result<Option<ReadError>> + Send + 'static,
    {
        let (to_stdin, lines) = mpsc::channel();
        let (tx, rx) = mpsc::sync_channel(256);
        let (done, result) = mpsc::channel();
        let input = EngineInput {
            lines,
            buf: Vec::new(),
            at: 0,
        };
        let output = EngineOutput {
            lines: tx,
            partial: Vec::new(),
            total: 0,
            max,
        };
        let thread = std::thread::spawn(move || {
            let how = match serve(input, output) {
                Ok(None) => "returned at the end of its input".to_owned(),
                Ok(Some(stopped)) => format!("returned after it stopped reading: {stopped}"),
                Err(e) => format!("returned an error: {e}"),
            };
            let _ = done.send(how);
        });
        InProcess {
            pipes: Pipes {
                stdin: Some(to_stdin),
                stdout: rx,
            },
            result,
            thread: Some(thread),
        }
    }
}

impl Wire for InProcess {
    fn pipes(&mut self) -> &mut Pipes {
        &mut self.pipes
    }

    fn virtual_pauses(&self) -> bool {
        true
    }

    fn finish(&mut self, kill: bool) -> (End, Vec<String>) {
        self.pipes.close();
        let wait = if kill { Duration::ZERO } else { EXIT_GRACE };
        let end = match self.result.recv_timeout(wait) {
            Ok(how) => {
                if let Some(thread) = self.thread.take() {
                    let _ = thread.join();
                }
                End::Exited(how)
            }
            Err(_) if kill => End::Exited("was abandoned on its thread".to_owned()),
            Err(_) => End::Lingered,
        };
        (end, Vec::new())
    }
}
