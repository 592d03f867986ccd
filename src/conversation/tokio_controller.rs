//! The controller on tokio (feature `tokio`): the blocking controller's
//! model, routing and errors, with a reader task and awaited calls.
//!
//! Lines are queued to a writer task under the same lock that feeds the
//! model, so the model sees them in wire order and a call dropped halfway
//! (by `tokio::time::timeout`, say) never leaves half a line on the wire.

use super::shared::names::*;
use crate::v2::event::EventLine;
use crate::v2::{EventReadError, DEFAULT_MAX_LINE_LEN};
use crate::wire::framing::Framer;
use std::io;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::process::Child;
use tokio::sync::mpsc::{self, error::TryRecvError, UnboundedReceiver, UnboundedSender};
use tokio::sync::Notify;

channel!(UnboundedSender, UnboundedReceiver, TryRecvError);

/// [`Controller`](super::Controller) on tokio: the same calls, awaited,
/// the same [`Limits`], [`Turn`], [`Reply`], notices and
/// [`ControllerError`]s, from the same state machine.
///
/// Built inside a tokio runtime (its reader and writer are tasks; a
/// spawned engine needs the runtime's I/O and time drivers,
/// `enable_all`). A call's future dropped before its answer (by
/// `tokio::time::timeout`, a `select!`) leaves the controller as it was:
/// its line is written whole or not at all, and its answer, when it comes,
/// is a notice.
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
    limits: Limits,
    closed: bool,
}

/// A line for the writer task, by its command line number.
type Queued = (CommandLine, Vec<u8>);

struct Inner {
    /// The writer task's queue; `None` once the controller closed stdin.
    lines: Mutex<Option<UnboundedSender<Queued>>>,
    state: Mutex<State<UnboundedSender<Answer>>>,
    /// Woken when a notice arrives or the engine stops.
    changed: Notify,
    child: Mutex<Option<Child>>,
    /// Its process group, when it has one of its own.
    group: Option<Group>,
    /// The task keeping the end of a spawned engine's stderr.
    stderr: Mutex<Option<tokio::task::JoinHandle<String>>>,
    minted: AtomicU64,
}

impl fmt::Debug for Inner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Inner").finish_non_exhaustive()
    }
}

/// A call's channel, on tokio.
type TokioCall = Call<UnboundedReceiver<Answer>>;

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
        TokioController::spawn_with(command, Options::default())
    }

    /// [`TokioController::spawn`] with `options`: its limits, a recording.
    ///
    /// # Errors
    ///
    /// The spawn's, or no tokio runtime.
    pub fn spawn_with(
        command: &mut tokio::process::Command,
        options: Options,
    ) -> io::Result<TokioController> {
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| no_runtime())?;
        let (child, (stdin, stdout, mut stderr), group) =
            spawn_piped::<Child>(command, !options.shared_group)?;
        let controller =
            TokioController::start(&runtime, stdin, stdout, Some((child, group)), options);
        let inner = Arc::clone(&controller.inner);
        let tail = runtime.spawn(async move {
            let mut tail = StderrTail::default();
            let mut buf = [0u8; 8192];
            while let Ok(k @ 1..) = stderr.read(&mut buf).await {
                tail.saw(&buf[..k], lock(&inner.state).recorder());
            }
            let state = lock(&inner.state);
            tail.finish(state.recorder())
        });
        *lock(&controller.inner.stderr) = Some(tail);
        Ok(controller)
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
        TokioController::attach_with(reader, writer, Options::default())
    }

    /// [`TokioController::attach`] with `options`.
    ///
    /// # Errors
    ///
    /// No tokio runtime.
    pub fn attach_with(
        reader: impl AsyncRead + Send + Unpin + 'static,
        writer: impl AsyncWrite + Send + Unpin + 'static,
        options: Options,
    ) -> io::Result<TokioController> {
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| no_runtime())?;
        Ok(TokioController::start(
            &runtime, writer, reader, None, options,
        ))
    }

    controller_methods!(TokioController, TokioTurn, TokioCall);

    fn start(
        runtime: &tokio::runtime::Handle,
        writer: impl AsyncWrite + Send + Unpin + 'static,
        reader: impl AsyncRead + Send + Unpin + 'static,
        child: Option<(Child, Option<Group>)>,
        options: Options,
    ) -> TokioController {
        let keep = options.recording.is_some();
        let (child, group) = child.map_or((None, None), |(child, group)| (Some(child), group));
        let (lines, queue) = mpsc::unbounded_channel();
        let inner = Arc::new(Inner {
            lines: Mutex::new(Some(lines)),
            state: Mutex::new(State::new(options.limits.unread, options.recording)),
            changed: Notify::new(),
            child: Mutex::new(child),
            group,
            stderr: Mutex::new(None),
            minted: AtomicU64::new(0),
        });
        runtime.spawn(write_lines(Arc::clone(&inner), writer, queue));
        runtime.spawn(read_events(Arc::clone(&inner), reader, keep));
        TokioController {
            inner,
            limits: options.limits,
            closed: false,
        }
    }

    /// Sends any command but a prompt, as built, and awaits what answers
    /// it (at once for a command with no answer of its own:
    /// [`Reply::Written`]), within the controller's [`Limits`].
    ///
    /// # Errors
    ///
    /// As [`Controller::request`](super::Controller::request).
    pub async fn request(&self, command: Command) -> Result<Reply, ControllerError> {
        let limit = match Clock::of(&command) {
            Clock::Answer => self.limits.answer,
            Clock::Work => self.limits.stall,
        };
        self.request_within(command, limit).await
    }

    /// [`TokioController::request`], waiting at most `limit` on a silent
    /// engine.
    ///
    /// # Errors
    ///
    /// As [`Controller::request`](super::Controller::request).
    pub async fn request_within(
        &self,
        command: Command,
        limit: Duration,
    ) -> Result<Reply, ControllerError> {
        let mut call = match self.open_request(&command)? {
            Ok(call) => call,
            Err(written) => return Ok(written),
        };
        loop {
            if let Some(reply) = reply_of(self.inner.recv(&mut call, limit).await?) {
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
        steered(self.request(Command::steer(kind, content)).await?)
    }

    /// `jobs_snapshot`, with a minted request id.
    ///
    /// # Errors
    ///
    /// As [`TokioController::request`].
    pub async fn jobs_snapshot(&self) -> Result<Vec<JobRecord>, ControllerError> {
        jobs(self.request(Command::jobs_snapshot(self.mint())).await?)
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
        job_stopped(self.request(command).await?)
    }

    /// A `goal` command: the goal the engine now holds.
    ///
    /// # Errors
    ///
    /// As [`TokioController::request`]; [`ControllerError::WrongCommand`]
    /// for another command.
    pub async fn goal(&self, goal: Command) -> Result<Option<String>, ControllerError> {
        is_goal(&goal)?;
        goal_held(self.request(goal).await?)
    }

    /// `compact`: how it came out.
    ///
    /// # Errors
    ///
    /// As [`TokioController::request`].
    pub async fn compact(&self) -> Result<Compaction, ControllerError> {
        compacted(self.request(Command::Compact).await?)
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
        let waiter = refused.then_some((false, Clock::Answer));
        let (_, call) = self.inner.write(owned, waiter, ends_reading)?;
        match call {
            None => Ok(None),
            Some(mut call) => refusal_of(self.inner.recv(&mut call, self.limits.answer).await),
        }
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

    /// Closes the engine's stdin once the lines queued are written, and
    /// awaits the end of its stdout, at most [`Limits::close`]; returns its
    /// exit status (`None` for an attached engine).
    ///
    /// # Errors
    ///
    /// [`ControllerError::Timeout`] when it did not stop in time: a spawned
    /// engine is then killed.
    pub async fn close(mut self) -> Result<Option<ExitStatus>, ControllerError> {
        let limit = self.closing();
        let exited = tokio::time::timeout(limit, self.inner.exited()).await;
        exited.map_err(|_| self.gave_up(limit))
    }
}

impl Drop for TokioController {
    /// Closes the engine's stdin; a spawned engine that has not stopped
    /// within [`Limits::close`] is then killed, by a task of its own (at
    /// once when the runtime is gone). [`TokioController::close`] awaits it
    /// instead.
    fn drop(&mut self) {
        let Some((inner, limit)) = self.dropping() else {
            return;
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    if tokio::time::timeout(limit, inner.exited()).await.is_err() {
                        inner.kill();
                    }
                });
            }
            Err(_) => self.inner.kill(),
        }
    }
}

controller_debug!(TokioController);

impl Writer for Inner {
    type Call = TokioCall;

    /// Queues the line under the queue's lock: the model sees the lines in
    /// the order the writer task writes them.
    fn write(
        &self,
        line: Vec<u8>,
        waiter: Option<Waiter>,
        ends_reading: bool,
    ) -> Written<TokioCall> {
        let lines = lock(&self.lines);
        let Some(queue) = lines.as_ref() else {
            return Err(closed());
        };
        let waiter = waiter.map(|(turn, clock)| {
            let (tx, rx) = mpsc::unbounded_channel();
            (tx, rx, turn, clock)
        });
        let mut state = lock(&self.state);
        let (n, call) = state.begin(&line, waiter, ends_reading)?;
        if queue.send((n, line)).is_err() {
            // The writer task has ended: a write failed.
            state.unwritten(n);
            return Err(state.writable().err().unwrap_or_else(closed));
        }
        Ok((n, call))
    }

    fn close_input(&self) {
        *lock(&self.lines) = None;
    }
}

impl Inner {
    /// The next event for `call`, the engine silent on it at most `limit`.
    async fn recv(&self, call: &mut TokioCall, limit: Duration) -> Result<Answer, ControllerError> {
        loop {
            let step = lock(&self.state).step(call, limit);
            let left = match step {
                Step::Done(done) => return done,
                Step::Closed => return Err(self.ended_error(call.command).await),
                Step::Wait(left) => left,
            };
            if let Ok(got) = tokio::time::timeout(left, call.rx.recv()).await {
                let Some(answer) = got else {
                    return Err(self.ended_error(call.command).await);
                };
                call.took();
                return refused(call.command, answer);
            }
        }
    }

    /// Why a call's channel closed: its answer did not decode, its events
    /// went unread, a write failed (the stop, with its status, is then most
    /// likely near), or the engine stopped.
    async fn ended_error(&self, n: CommandLine) -> ControllerError {
        let error = lock(&self.state).ended_error(n);
        if !matches!(error, ControllerError::WriteFailed(_)) {
            return error;
        }
        match tokio::time::timeout(GRACE, self.stopped()).await {
            Ok(stopped) => ControllerError::Stopped(stopped),
            Err(_) => error,
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

    /// Awaits the engine's stop and (spawned) exit: its exit status. An
    /// engine that closed its stdout but still runs has stopped for the
    /// calls, not yet exited.
    ///
    /// An engine in a group of its own is awaited by its exit, not by its
    /// stdout: a process it started may hold that open. Once it exits, what
    /// it left in its group is ended, and its stdout closes with them.
    async fn exited(&self) -> Option<ExitStatus> {
        if self.group.is_some() {
            let status = self.exit().await;
            self.end_group().await;
            let _ = tokio::time::timeout(GRACE, self.stopped()).await;
            return status;
        }
        let stopped = self.stopped().await;
        if !stopped.still_running {
            return stopped.status;
        }
        self.exit().await
    }

    /// A spawned engine's exit status, once it exits (`None` at once for
    /// an attached one).
    async fn exit(&self) -> Option<ExitStatus> {
        loop {
            match poll_exit(&self.child) {
                Some(status) => return status,
                None => tokio::time::sleep(POLL).await,
            }
        }
    }

    /// Kills a spawned engine that still runs; what it started gets
    /// SIGTERM, and SIGKILL after [`GRACE`], from a blocking task of its
    /// own (the signals are processes to wait on).
    fn kill(&self) {
        if let Some(group) = self.group {
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                runtime.spawn_blocking(move || group.end(GRACE, || {}));
            } else {
                group.end(GRACE, || {
                    let _ = poll_exit(&self.child);
                });
            }
        }
        kill(&self.child);
    }

    /// Ends what the engine left running in its group, if it has one.
    async fn end_group(&self) {
        if let Some(group) = self.group {
            let _ = tokio::task::spawn_blocking(move || group.end(GRACE, || {})).await;
        }
    }

    /// The exit status of a spawned engine, if it exits within [`GRACE`].
    async fn exit_status(&self) -> Option<ExitStatus> {
        tokio::time::timeout(GRACE, self.exit())
            .await
            .unwrap_or(None)
    }
}

process!(tokio::process, |child| {
    let _ = child.start_kill();
});

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
            state.unwritten(n);
            while let Ok((n, _)) = queue.try_recv() {
                state.unwritten(n);
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
/// the state machine to whoever waits; at its end, the engine stopped.
async fn read_events(inner: Arc<Inner>, mut stdout: impl AsyncRead + Unpin, keep: bool) {
    let mut framer = Framer::new(DEFAULT_MAX_LINE_LEN);
    let mut tee = LineTee::new(keep);
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
                    tee.saw(&buf[..k]);
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
            lock(&inner.state).line(skipped, item, now, &mut tee);
        }
        inner.changed.notify_waiters();
    };
    // One grace for the exit status and the rest of stderr, as the
    // blocking controller's.
    let grace = tokio::time::Instant::now() + GRACE;
    lock(&inner.state).stdout_closed();
    let status = inner.exit_status().await;
    let spawned = lock(&inner.child).is_some();
    let stderr_task = lock(&inner.stderr).take();
    let stderr = match stderr_task {
        None => String::new(),
        Some(tail) => match tokio::time::timeout_at(grace, tail).await {
            Ok(Ok(tail)) => tail,
            _ => String::new(),
        },
    };
    lock(&inner.state).stop(End {
        status,
        still_running: spawned && status.is_none() && read_error.is_none(),
        stderr,
        read_error,
        partial_line: tee.partial(),
    });
    inner.changed.notify_waiters();
}

/// A prompt's turn as it runs, on tokio: as
/// [`TurnHandle`](super::TurnHandle), awaited. Dropping it gives the turn
/// up: its later events are notices.
#[derive(Debug)]
pub struct TokioTurn {
    inner: Arc<Inner>,
    call: Option<TokioCall>,
    stall: Duration,
    log: TurnLog,
}

impl TokioTurn {
    turn_methods!(TokioTurn);

    /// The turn's next event; `None` once it has ended.
    ///
    /// # Errors
    ///
    /// As [`TurnHandle::next_event`](super::TurnHandle::next_event).
    pub async fn next_event(&mut self) -> Result<Option<Event>, ControllerError> {
        if self.log.end.is_some() {
            return Ok(None);
        }
        let Some(call) = self.call.as_mut() else {
            return Ok(None);
        };
        let (event, _) = self.inner.recv(call, self.stall).await?;
        self.log.take(&event);
        Ok(Some(event))
    }

    /// Awaits the turn's end, for a turn that asks nothing.
    ///
    /// # Errors
    ///
    /// As [`TurnHandle::wait`](super::TurnHandle::wait).
    pub async fn wait(self) -> Result<Turn, ControllerError> {
        self.run(None::<fn(&Approval) -> Decision>).await
    }

    /// Awaits the turn's end, answering each question with `decide`'s
    /// [`Decision`], as [`TurnHandle::wait_with`](super::TurnHandle::wait_with).
    ///
    /// # Errors
    ///
    /// As [`TokioTurn::next_event`].
    pub async fn wait_with(
        self,
        decide: impl FnMut(&Approval) -> Decision,
    ) -> Result<Turn, ControllerError> {
        self.run(Some(decide)).await
    }

    async fn run<D>(mut self, mut decide: Option<D>) -> Result<Turn, ControllerError>
    where
        D: FnMut(&Approval) -> Decision,
    {
        self.log.start_wait(decide.is_some());
        self.answer_questions(&mut decide)?;
        while self.next_event().await?.is_some() {
            self.answer_questions(&mut decide)?;
        }
        Ok(self.log.into_turn())
    }
}
