//! The controller on tokio (feature `tokio`): the blocking controller's
//! model, routing and errors, with a reader task and awaited calls.
//!
//! Lines are queued to a writer task under the same lock that feeds the
//! model, so the model sees them in wire order and a call dropped halfway
//! (by `tokio::time::timeout`, say) never leaves half a line on the wire.

use super::controller::{
    blanks, closed, line_of, lock, raw_line, refused, reply_of, unanswered_kind, Answer, Approval,
    Compaction, ControllerError, Deliver, Notice, Reply, State, Steered, Stopped, Turn, TurnLog,
    Waiter, GRACE,
};
use super::model::Owed;
use crate::v2::event::EventLine;
use crate::v2::{
    Command, CommandErrorCause, Content, Event, EventReadError, JobRecord, JobStopOutcome,
    PredictionOutcome, SteerKind, DEFAULT_MAX_LINE_LEN,
};
use crate::wire::framing::Framer;
use std::fmt;
use std::io;
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};
use tokio::sync::Notify;

impl Deliver for UnboundedSender<Answer> {
    fn deliver(&self, answer: Answer) -> bool {
        self.send(answer).is_ok()
    }
}

/// [`Controller`](super::Controller) on tokio: the same calls, awaited,
/// the same [`Turn`], [`Reply`], notices and [`ControllerError`]s.
///
/// Built inside a tokio runtime (its reader and writer are tasks; a
/// spawned engine needs the runtime's I/O and time drivers,
/// `enable_all`). It has no timeout of its own: wrap a call in
/// `tokio::time::timeout`; a call dropped before its answer leaves the
/// answer to the notices, and its line is written whole or not at all.
///
/// ```no_run
/// use serve_command::v2::serve::TokioController;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let engine = TokioController::spawn(tokio::process::Command::new("serve-command").arg("mock-engine"))?;
/// let turn = engine.prompt("hi")?.wait().await?;
/// assert_eq!(turn.answer(), Some("You asked: hi"));
/// assert!(engine.jobs_snapshot().await?.is_empty());
/// engine.close().await?;
/// # Ok(())
/// # }
/// ```
pub struct TokioController {
    inner: Arc<Inner>,
}

/// A line for the writer task, by its command line number.
type Queued = (u64, Vec<u8>);

struct Inner {
    /// The writer task's queue; `None` once the controller closed stdin.
    lines: Mutex<Option<UnboundedSender<Queued>>>,
    state: Mutex<State<UnboundedSender<Answer>>>,
    /// Woken when a notice arrives or the engine stops.
    changed: Notify,
    child: Mutex<Option<tokio::process::Child>>,
    minted: AtomicU64,
}

impl fmt::Debug for Inner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Inner").finish_non_exhaustive()
    }
}

/// No runtime to run the controller's tasks on.
fn no_runtime() -> io::Error {
    io::Error::other("a TokioController is built inside a tokio runtime")
}

impl TokioController {
    /// Spawns `command` as the engine, its stdin, stdout and stderr piped
    /// to the controller (the end of its stderr goes into [`Stopped`]).
    ///
    /// # Errors
    ///
    /// The spawn's, or no tokio runtime.
    pub fn spawn(command: &mut tokio::process::Command) -> io::Result<TokioController> {
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| no_runtime())?;
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        let (Some(stdin), Some(stdout), Some(mut stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            let _ = child.start_kill();
            return Err(io::Error::other("the engine's pipes were not set up"));
        };
        let tail = runtime.spawn(async move {
            let mut tail = Vec::new();
            let mut buf = [0u8; 8192];
            while let Ok(k @ 1..) = stderr.read(&mut buf).await {
                tail.extend_from_slice(&buf[..k]);
                let excess = tail.len().saturating_sub(super::STDERR_TAIL);
                tail.drain(..excess);
            }
            tail
        });
        Ok(TokioController::start(
            &runtime,
            stdin,
            stdout,
            Some(child),
            Some(tail),
        ))
    }

    /// Drives an engine over any reader of its stdout and writer of its
    /// stdin (a `tokio::io::duplex` pair, a socket). No exit status or
    /// stderr: [`Stopped`] has none.
    ///
    /// # Errors
    ///
    /// No tokio runtime.
    pub fn attach(
        reader: impl AsyncRead + Send + Unpin + 'static,
        writer: impl AsyncWrite + Send + Unpin + 'static,
    ) -> io::Result<TokioController> {
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| no_runtime())?;
        Ok(TokioController::start(&runtime, writer, reader, None, None))
    }

    fn start(
        runtime: &tokio::runtime::Handle,
        writer: impl AsyncWrite + Send + Unpin + 'static,
        reader: impl AsyncRead + Send + Unpin + 'static,
        child: Option<tokio::process::Child>,
        stderr: Option<tokio::task::JoinHandle<Vec<u8>>>,
    ) -> TokioController {
        let (lines, queue) = mpsc::unbounded_channel();
        let inner = Arc::new(Inner {
            lines: Mutex::new(Some(lines)),
            state: Mutex::new(State::new()),
            changed: Notify::new(),
            child: Mutex::new(child),
            minted: AtomicU64::new(0),
        });
        runtime.spawn(write_lines(Arc::clone(&inner), writer, queue));
        runtime.spawn(read_events(Arc::clone(&inner), reader, stderr));
        TokioController { inner }
    }

    /// Sends a `prompt` of `content`; its turn is on the handle.
    ///
    /// # Errors
    ///
    /// Not written, or the engine had stopped.
    pub fn prompt(&self, content: impl Into<Content>) -> Result<TokioTurn, ControllerError> {
        self.submit(Command::prompt(content))
    }

    /// Sends `prompt`, a [`Command::Prompt`] as built (tagged, say).
    ///
    /// # Errors
    ///
    /// As [`TokioController::prompt`];
    /// [`ControllerError::WrongCommand`] for another command.
    pub fn submit(&self, prompt: Command) -> Result<TokioTurn, ControllerError> {
        if !matches!(prompt, Command::Prompt { .. }) {
            return Err(ControllerError::WrongCommand {
                expected: "prompt",
                got: prompt.name(),
            });
        }
        let (command, rx) = self.inner.send(&prompt, Some(true))?;
        Ok(TokioTurn {
            inner: Arc::clone(&self.inner),
            rx,
            log: TurnLog::new(command),
        })
    }

    /// Sends any command but a prompt, as built, and awaits what answers
    /// it (at once for a command with no answer of its own:
    /// [`Reply::Written`]).
    ///
    /// # Errors
    ///
    /// As [`Controller::request`](super::Controller::request), but no
    /// timeout.
    pub async fn request(&self, command: Command) -> Result<Reply, ControllerError> {
        if unanswered_kind(&command)? {
            return Ok(Reply::Written(self.inner.send(&command, None)?.0));
        }
        let (n, rx) = self.inner.send(&command, Some(false))?;
        let mut rx = rx.unwrap_or_else(|| mpsc::unbounded_channel().1);
        loop {
            if let Some(reply) = reply_of(self.inner.recv(&mut rx, n).await?) {
                return Ok(reply);
            }
        }
    }

    /// A steer of `kind` and `content`: applied (in which turn) or dropped.
    ///
    /// # Errors
    ///
    /// As [`TokioController::request`].
    pub async fn steer(
        &self,
        kind: SteerKind,
        content: impl Into<Content>,
    ) -> Result<Steered, ControllerError> {
        match self.request(Command::steer(kind, content)).await? {
            Reply::Steer(steered) => Ok(steered),
            other => Err(mismatch("steer", &other)),
        }
    }

    /// `jobs_snapshot`, with a minted request id.
    ///
    /// # Errors
    ///
    /// As [`TokioController::request`].
    pub async fn jobs_snapshot(&self) -> Result<Vec<JobRecord>, ControllerError> {
        match self.request(Command::jobs_snapshot(self.mint())).await? {
            Reply::Jobs(jobs) => Ok(jobs),
            other => Err(mismatch("jobs_snapshot", &other)),
        }
    }

    /// `job_stop` of the job `job_id` of `generation`, with a minted
    /// request id.
    ///
    /// # Errors
    ///
    /// As [`TokioController::request`].
    pub async fn job_stop(
        &self,
        generation: impl Into<String>,
        job_id: impl Into<String>,
    ) -> Result<JobStopOutcome, ControllerError> {
        let command = Command::job_stop(self.mint(), generation, job_id);
        match self.request(command).await? {
            Reply::JobStop(outcome) => Ok(outcome),
            other => Err(mismatch("job_stop", &other)),
        }
    }

    /// `predict` from event `source_sequence`, with a minted request id.
    ///
    /// # Errors
    ///
    /// As [`TokioController::request`].
    pub async fn predict(
        &self,
        source_sequence: i32,
    ) -> Result<PredictionOutcome, ControllerError> {
        match self
            .request(Command::predict(self.mint(), source_sequence))
            .await?
        {
            Reply::Prediction(outcome) => Ok(outcome),
            other => Err(mismatch("predict", &other)),
        }
    }

    /// A `goal` command: the goal the engine now holds.
    ///
    /// # Errors
    ///
    /// As [`TokioController::request`]; [`ControllerError::WrongCommand`]
    /// for another command.
    pub async fn goal(&self, goal: Command) -> Result<Option<String>, ControllerError> {
        if !matches!(goal, Command::GoalSet { .. } | Command::GoalClear) {
            return Err(ControllerError::WrongCommand {
                expected: "goal",
                got: goal.name(),
            });
        }
        match self.request(goal).await? {
            Reply::Goal(goal) => Ok(goal),
            other => Err(mismatch("goal", &other)),
        }
    }

    /// `compact`: how it came out.
    ///
    /// # Errors
    ///
    /// As [`TokioController::request`].
    pub async fn compact(&self) -> Result<Compaction, ControllerError> {
        match self.request(Command::Compact).await? {
            Reply::Compaction(compaction) => Ok(compaction),
            other => Err(mismatch("compact", &other)),
        }
    }

    /// `cancel`; returns its command line.
    ///
    /// # Errors
    ///
    /// Not written.
    pub fn cancel(&self) -> Result<u64, ControllerError> {
        Ok(self.inner.send(&Command::Cancel, None)?.0)
    }

    /// Writes `line` as it is, as
    /// [`Controller::send_line`](super::Controller::send_line).
    ///
    /// # Errors
    ///
    /// As [`TokioController::request`], and
    /// [`NotOneLine`](ControllerError::NotOneLine).
    pub async fn send_line(
        &self,
        line: &[u8],
    ) -> Result<Option<CommandErrorCause>, ControllerError> {
        let (owned, refused, ends_reading) = raw_line(line)?;
        let (n, rx) = self
            .inner
            .write(owned, refused.then_some(false), ends_reading)?;
        let Some(mut rx) = rx else { return Ok(None) };
        match self.inner.recv(&mut rx, n).await {
            Err(ControllerError::Refused { cause, .. }) => Ok(Some(cause)),
            Err(other) => Err(other),
            Ok(_) => Ok(None),
        }
    }

    /// Takes the notices that arrived.
    #[must_use]
    pub fn notices(&self) -> Vec<Notice> {
        lock(&self.inner.state).notices.drain(..).collect()
    }

    /// The next notice, awaiting one; `None` once the engine has stopped
    /// and none is left.
    pub async fn next_notice(&self) -> Option<Notice> {
        loop {
            let notified = self.inner.changed.notified();
            let mut notified = std::pin::pin!(notified);
            notified.as_mut().enable();
            {
                let mut state = lock(&self.inner.state);
                if let Some(notice) = state.notices.pop_front() {
                    return Some(notice);
                }
                if state.stopped.is_some() {
                    return None;
                }
            }
            notified.await;
        }
    }

    /// How many notices were dropped, oldest first.
    #[must_use]
    pub fn notices_dropped(&self) -> u64 {
        lock(&self.inner.state).notices_dropped
    }

    /// What the engine owes now.
    #[must_use]
    pub fn owed(&self) -> Owed {
        lock(&self.inner.state).conversation.owed()
    }

    /// How the engine stopped, once it has.
    #[must_use]
    pub fn stopped(&self) -> Option<Arc<Stopped>> {
        lock(&self.inner.state).stopped.clone()
    }

    /// Closes the engine's stdin once the lines queued are written, and
    /// awaits the end of its stdout; returns its exit status (`None` for an
    /// attached engine).
    ///
    /// # Errors
    ///
    /// None today; a `Result` as the blocking controller's `close`.
    pub async fn close(self) -> Result<Option<ExitStatus>, ControllerError> {
        *lock(&self.inner.lines) = None;
        Ok(self.inner.stopped().await.status)
    }

    fn mint(&self) -> String {
        format!(
            "ctl-{}",
            self.inner.minted.fetch_add(1, Ordering::Relaxed) + 1
        )
    }
}

impl Drop for TokioController {
    /// Closes the engine's stdin and kills an engine the controller
    /// spawned that still runs: [`TokioController::close`] lets it finish.
    fn drop(&mut self) {
        *lock(&self.inner.lines) = None;
        if let Some(child) = lock(&self.inner.child).as_mut() {
            if let Ok(None) = child.try_wait() {
                let _ = child.start_kill();
            }
        }
    }
}

impl fmt::Debug for TokioController {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokioController")
            .field("owed", &self.owed())
            .finish_non_exhaustive()
    }
}

fn mismatch(call: &'static str, reply: &Reply) -> ControllerError {
    super::controller::mismatch(call, reply)
}

type Sent = (u64, Option<UnboundedReceiver<Answer>>);

impl Inner {
    fn send(&self, command: &Command, waiter: Option<bool>) -> Result<Sent, ControllerError> {
        self.write(line_of(command)?.into_bytes(), waiter, false)
    }

    /// Queues one line, LF included, fed to the model and its waiter
    /// registered under the queue's lock: the model sees the lines in the
    /// order the writer task writes them.
    fn write(
        &self,
        line: Vec<u8>,
        waiter: Option<bool>,
        ends_reading: bool,
    ) -> Result<Sent, ControllerError> {
        let lines = lock(&self.lines);
        let Some(queue) = lines.as_ref() else {
            return Err(closed());
        };
        let mut state = lock(&self.state);
        state.writable()?;
        let n = state.conversation.command(&line);
        let rx = waiter.map(|turn| {
            let (tx, rx) = mpsc::unbounded_channel();
            state.waiters.insert(n, Waiter { tx, turn });
            rx
        });
        if ends_reading {
            state.stopped_reading = Some(n);
        }
        if queue.send((n, line)).is_err() {
            // The writer task has ended: a write failed.
            state.waiters.remove(&n);
            return Err(state.writable().err().unwrap_or_else(closed));
        }
        Ok((n, rx))
    }

    /// The next event for the call waiting on command line `n`.
    async fn recv(
        &self,
        rx: &mut UnboundedReceiver<Answer>,
        n: u64,
    ) -> Result<Answer, ControllerError> {
        match rx.recv().await {
            Some(answer) => refused(n, answer),
            // The channel closes when the answer did not decode, when the
            // engine stops, or when a write failed: then the stop (with
            // its status) is most likely near.
            None => {
                if let Some(unreadable) = lock(&self.state).unreadable.get(&n) {
                    return Err(ControllerError::Unreadable(Arc::clone(unreadable)));
                }
                let stopped = tokio::time::timeout(GRACE, self.stopped()).await;
                match stopped {
                    Ok(stopped) => Err(ControllerError::Stopped(stopped)),
                    Err(_) => {
                        let state = lock(&self.state);
                        Err(state
                            .writable()
                            .err()
                            .unwrap_or_else(|| super::controller::stopped_error(&state)))
                    }
                }
            }
        }
    }

    /// Awaits the engine's stop.
    async fn stopped(&self) -> Arc<Stopped> {
        loop {
            let notified = self.changed.notified();
            let mut notified = std::pin::pin!(notified);
            notified.as_mut().enable();
            if let Some(stopped) = &lock(&self.state).stopped {
                return Arc::clone(stopped);
            }
            notified.await;
        }
    }

    /// The exit status of a spawned engine, if it exits within [`GRACE`].
    async fn exit_status(&self) -> Option<ExitStatus> {
        let deadline = tokio::time::Instant::now() + GRACE;
        loop {
            match lock(&self.child).as_mut()?.try_wait() {
                Ok(Some(status)) => return Some(status),
                Ok(None) => {}
                Err(_) => return None,
            }
            if tokio::time::Instant::now() >= deadline {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

/// The writer task: each queued line, whole, in order. A failed write
/// ends it; the calls waiting on lines not written fail.
async fn write_lines(
    inner: Arc<Inner>,
    mut writer: impl AsyncWrite + Unpin,
    mut queue: UnboundedReceiver<Queued>,
) {
    while let Some((n, line)) = queue.recv().await {
        let written = match writer.write_all(&line).await {
            Ok(()) => writer.flush().await,
            Err(e) => Err(e),
        };
        if let Err(error) = written {
            queue.close();
            let mut state = lock(&inner.state);
            state.write_failed = Some(Arc::new(error));
            // The line that failed and those queued behind it never reach
            // the engine: nothing answers them.
            state.waiters.remove(&n);
            while let Ok((n, _)) = queue.try_recv() {
                state.waiters.remove(&n);
            }
            drop(state);
            inner.changed.notify_waiters();
            return;
        }
    }
    // Closed by the controller: dropping the writer closes the stdin.
    let _ = writer.shutdown().await;
}

/// The reader task: every line of the engine's stdout, in order, through
/// the model to whoever waits; at its end, the engine stopped.
async fn read_events(
    inner: Arc<Inner>,
    mut stdout: impl AsyncRead + Unpin,
    stderr: Option<tokio::task::JoinHandle<Vec<u8>>>,
) {
    let mut framer = Framer::new(DEFAULT_MAX_LINE_LEN);
    let mut buf = vec![0u8; 64 * 1024];
    let (mut filled, mut start) = (0, 0);
    let mut seen = 0u64;
    let mut eof = false;
    let read_error = loop {
        let item: Option<Result<EventLine, EventReadError>> = if start < filled {
            let (used, item) = framer.feed::<EventLine>(&buf[start..filled]);
            start += used;
            match item {
                Some(item) => Some(item),
                None => continue,
            }
        } else if eof {
            match framer.finish::<EventLine>() {
                Some(item) => Some(item),
                None => break None,
            }
        } else {
            match stdout.read(&mut buf).await {
                Ok(0) => {
                    eof = true;
                    continue;
                }
                Ok(k) => {
                    (filled, start) = (k, 0);
                    continue;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => break Some(e.to_string()),
            }
        };
        let now = framer.line_number();
        let skipped = blanks(seen, now, item.as_ref());
        seen = now.max(seen);
        if let Some(item) = item {
            lock(&inner.state).line(skipped, item, now);
        }
        inner.changed.notify_waiters();
    };
    let status = inner.exit_status().await;
    let stderr = match stderr {
        None => String::new(),
        Some(tail) => match tokio::time::timeout(GRACE, tail).await {
            Ok(Ok(tail)) => String::from_utf8_lossy(&tail).into_owned(),
            _ => String::new(),
        },
    };
    lock(&inner.state).stop(status, stderr, read_error);
    inner.changed.notify_waiters();
}

/// A prompt's turn as it runs, on tokio: as
/// [`TurnHandle`](super::TurnHandle), awaited.
#[derive(Debug)]
pub struct TokioTurn {
    inner: Arc<Inner>,
    rx: Option<UnboundedReceiver<Answer>>,
    log: TurnLog,
}

impl TokioTurn {
    /// The prompt's command line.
    #[must_use]
    pub fn command(&self) -> u64 {
        self.log.command
    }

    /// The turn's next event; `None` once it has ended.
    ///
    /// # Errors
    ///
    /// The prompt refused, or the engine stopped.
    pub async fn next_event(&mut self) -> Result<Option<Event>, ControllerError> {
        if self.log.end.is_some() {
            return Ok(None);
        }
        let Some(rx) = self.rx.as_mut() else {
            return Ok(None);
        };
        let (event, _) = self.inner.recv(rx, self.log.command).await?;
        self.log.take(&event);
        Ok(Some(event))
    }

    /// Allows the tool call the question `id` asked about.
    ///
    /// # Errors
    ///
    /// Not written.
    pub fn allow(&mut self, id: &str) -> Result<(), ControllerError> {
        self.answer(Command::allow(id), id)
    }

    /// Rejects the tool call the question `id` asked about.
    ///
    /// # Errors
    ///
    /// Not written.
    pub fn reject(&mut self, id: &str) -> Result<(), ControllerError> {
        self.answer(Command::reject(id), id)
    }

    fn answer(&mut self, command: Command, id: &str) -> Result<(), ControllerError> {
        self.inner.send(&command, None)?;
        self.log.answered.push(id.to_owned());
        Ok(())
    }

    /// Awaits the turn's end, for a turn that asks nothing.
    ///
    /// # Errors
    ///
    /// As [`TurnHandle::wait`](super::TurnHandle::wait).
    pub async fn wait(self) -> Result<Turn, ControllerError> {
        self.run(None::<fn(&Approval) -> bool>).await
    }

    /// Awaits the turn's end, answering each question with `decide`
    /// (`true`: allow).
    ///
    /// # Errors
    ///
    /// As [`TokioTurn::next_event`].
    pub async fn wait_with(
        self,
        decide: impl FnMut(&Approval) -> bool,
    ) -> Result<Turn, ControllerError> {
        self.run(Some(decide)).await
    }

    async fn run(
        mut self,
        mut decide: Option<impl FnMut(&Approval) -> bool>,
    ) -> Result<Turn, ControllerError> {
        let mut i = if decide.is_some() {
            0
        } else {
            self.log.asked.len()
        };
        loop {
            while let Some(approval) = self.log.next_open(&mut i) {
                match decide.as_mut().map(|decide| decide(&approval)) {
                    Some(true) => self.allow(&approval.id)?,
                    Some(false) => self.reject(&approval.id)?,
                    None => return Err(ControllerError::Unanswered(approval)),
                }
            }
            if self.next_event().await?.is_none() {
                return Ok(self.log.into_turn());
            }
        }
    }
}
