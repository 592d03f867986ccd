//! The blocking controller: std threads and channels, no runtime, over the
//! state machine of `control.rs`.
//!
//! One thread reads the engine's stdout and hands each line to the state
//! machine, which sends it to the call waiting on what it answers or to
//! the notices. Callers write under one lock, so the model sees the
//! commands in the order they cross; the state lock is never held across a
//! write to the engine, so the reader never waits on a writer whose pipe is
//! full.

use super::shared::names::*;
use crate::v2::event::EventLine as Item;
use std::io::{self, BufReader, Read, Write};
use std::process;
use std::process::Child;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::sync::{Condvar, PoisonError};
use std::thread;
use std::time::Instant;

/// An `openseek serve` engine driven over its stdin and stdout, with
/// [`Conversation`](super::Conversation)'s rules: every call returns what
/// answers its command, by its deadline.
///
/// - [`Controller::prompt`] returns a [`TurnHandle`]: the turn's typed
///   events in order, its `approval_requested` questions for the caller to
///   answer, and at its end a [`Turn`] (the answer, the abort reason or the
///   failure, and its usage).
/// - [`Controller::steer`], [`jobs_snapshot`](Controller::jobs_snapshot),
///   [`job_stop`](Controller::job_stop),
///   [`goal`](Controller::goal) and [`compact`](Controller::compact) block
///   until their answer; request ids are minted (`ctl-1`, `ctl-2`, ...).
///   [`Controller::request`] sends any command as built (the caller's own
///   request ids, a tagged steer) and returns its [`Reply`].
/// - A command `openseek serve` declines ([`Command::serve_refusal`]) is
///   refused before it is written ([`ControllerError::Declined`]); a
///   `command_error` that answers a command is that command's
///   [`ControllerError::Refused`]; an answer that does not decode is its
///   [`ControllerError::Unreadable`], at once.
/// - No call waits on a silent engine past its [`Limits`]
///   ([`ControllerError::Timeout`], with what it waited for); a turn that
///   streams is never cut off.
/// - Lines no call waits for are [notices](Controller::notices): events
///   (`session_started`, `job_changed`, an auto goal's turns), events that
///   fit no rule (a second reply to one request) with the model's reason,
///   lines that are not events. At most [`MAX_NOTICES`](super::MAX_NOTICES)
///   wait; older ones are dropped and counted.
/// - When the engine stops (it exits, dies mid-line, closes its stdout),
///   every call still waiting fails with [`ControllerError::Stopped`]: the
///   exit status, its last line cut short, the end of its stderr, what was
///   still owed.
///
/// Calls take `&self`: share the controller between threads (in an `Arc`)
/// to steer or cancel while another thread waits on a turn.
///
/// ```no_run
/// use serve_command::v2::serve::Controller;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let engine = Controller::spawn(std::process::Command::new("serve-command").arg("mock-engine"))?;
/// let turn = engine.prompt("hi")?.wait()?;
/// assert_eq!(turn.answer(), Some("You asked: hi"));
/// assert!(engine.jobs_snapshot()?.is_empty());
/// engine.close()?;
/// # Ok(())
/// # }
/// ```
pub struct Controller {
    inner: Arc<Inner>,
    limits: Limits,
    /// `close` ran: dropping has nothing left to do.
    closed: bool,
}

/// What the controller, its handles and its reader thread share.
struct Inner {
    /// The engine's stdin; `None` once closed.
    writer: Mutex<Option<Box<dyn Write + Send>>>,
    state: Mutex<State<Sender<Answer>>>,
    /// Signalled when a notice arrives or the engine stops.
    changed: Condvar,
    /// The engine, when the controller spawned it.
    child: Mutex<Option<Child>>,
    /// Its process group, when it has one of its own.
    group: Option<Group>,
    /// Request ids minted so far.
    minted: AtomicU64,
}

channel!(Sender, Receiver, TryRecvError);

/// A call's channel, on std.
type StdCall = Call<Receiver<Answer>>;

impl Controller {
    /// Spawns `command` as the engine, its stdin, stdout and stderr piped
    /// to the controller (the end of its stderr goes into [`Stopped`]),
    /// with the default [`Limits`].
    ///
    /// # Errors
    ///
    /// The spawn's.
    pub fn spawn(command: &mut process::Command) -> io::Result<Controller> {
        Controller::spawn_with(command, Options::default())
    }

    /// [`Controller::spawn`] with `options`: its limits, a recording.
    ///
    /// # Errors
    ///
    /// The spawn's.
    pub fn spawn_with(command: &mut process::Command, options: Options) -> io::Result<Controller> {
        let (child, (stdin, stdout, stderr), group) =
            spawn_piped::<Child>(command, !options.shared_group)?;
        Ok(Controller::start(
            Box::new(stdin),
            stdout,
            Some((child, Box::new(stderr), group)),
            options,
        ))
    }

    /// Drives an engine over any reader of its stdout and writer of its
    /// stdin: a socket, or an engine in the same process over
    /// [`pipe`](super::pipe)s. No exit status or stderr: [`Stopped`] has
    /// none.
    pub fn attach(
        reader: impl Read + Send + 'static,
        writer: impl Write + Send + 'static,
    ) -> Controller {
        Controller::attach_with(reader, writer, Options::default())
    }

    /// [`Controller::attach`] with `options`.
    pub fn attach_with(
        reader: impl Read + Send + 'static,
        writer: impl Write + Send + 'static,
        options: Options,
    ) -> Controller {
        Controller::start(Box::new(writer), reader, None, options)
    }

    fn start(
        writer: Box<dyn Write + Send>,
        reader: impl Read + Send + 'static,
        child: Option<(Child, Box<dyn Read + Send>, Option<Group>)>,
        options: Options,
    ) -> Controller {
        let keep = options.recording.is_some();
        let (child, stderr, group) = match child {
            Some((child, stderr, group)) => (Some(child), Some(stderr), group),
            None => (None, None, None),
        };
        let inner = Arc::new(Inner {
            writer: Mutex::new(Some(writer)),
            state: Mutex::new(State::new(options.limits.unread, options.recording)),
            changed: Condvar::new(),
            child: Mutex::new(child),
            group,
            minted: AtomicU64::new(0),
        });
        let tail = stderr.map(|stderr| {
            let (done, stderr_done) = mpsc::channel::<String>();
            let shared = Arc::clone(&inner);
            let spawned = thread::Builder::new()
                .name("serve-command stderr".into())
                .spawn(move || {
                    let _ = done.send(keep_tail(stderr, &shared));
                });
            (spawned.is_ok(), stderr_done)
        });
        let shared = Arc::clone(&inner);
        // Without the thread nothing is read, so every call would wait for
        // nothing: let the engine be stopped at once instead.
        if let Err(e) = thread::Builder::new()
            .name("serve-command events".into())
            .spawn(move || read_events(&shared, reader, keep, tail.map(|(_, rx)| rx)))
        {
            inner.stop(End {
                read_error: Some(e.to_string()),
                ..End::default()
            });
        }
        Controller {
            inner,
            limits: options.limits,
            closed: false,
        }
    }

    /// The controller with every wait on a silent engine (an answer, a
    /// turn's next event, closing) bounded by `timeout`: [`Limits`] with
    /// `answer`, `stall` and `close` all `timeout`.
    #[must_use]
    pub fn with_timeout(self, timeout: Duration) -> Controller {
        let limits = self.limits.answer(timeout).stall(timeout).close(timeout);
        self.with_limits(limits)
    }

    controller_methods!(Controller, TurnHandle, StdCall);

    /// Sends any command but a prompt, as built, and waits for what answers
    /// it (at once for a command with no answer of its own:
    /// [`Reply::Written`]), within the controller's [`Limits`].
    ///
    /// # Errors
    ///
    /// Not written, [`Refused`](ControllerError::Refused) by the engine,
    /// its answer [`Unreadable`](ControllerError::Unreadable), the engine
    /// [`Stopped`](ControllerError::Stopped) or silent past the limit
    /// ([`Timeout`](ControllerError::Timeout));
    /// [`WrongCommand`](ControllerError::WrongCommand) for a prompt.
    pub fn request(&self, command: Command) -> Result<Reply, ControllerError> {
        let limit = match Clock::of(&command) {
            Clock::Answer => self.limits.answer,
            Clock::Work => self.limits.stall,
        };
        self.request_within(command, limit)
    }

    /// [`Controller::request`], waiting at most `limit` on a silent engine
    /// (for work: on the engine's silence about all work).
    ///
    /// # Errors
    ///
    /// As [`Controller::request`].
    pub fn request_within(
        &self,
        command: Command,
        limit: Duration,
    ) -> Result<Reply, ControllerError> {
        match self.open_request(&command)? {
            Err(written) => Ok(written),
            // `compaction_started` is no reply: the end follows.
            Ok(mut call) => loop {
                if let Some(reply) = reply_of(self.inner.recv(&mut call, limit)?) {
                    return Ok(reply);
                }
            },
        }
    }

    /// A steer of `kind` and `content`: applied (in which turn) or dropped.
    /// A tagged steer: [`Controller::request`].
    ///
    /// # Errors
    ///
    /// As [`Controller::request`].
    pub fn steer(
        &self,
        kind: SteerKind,
        content: impl Into<Content>,
    ) -> Result<Steered, ControllerError> {
        steered(self.request(Command::steer(kind, content))?)
    }

    /// `jobs_snapshot`, with a minted request id: every background job.
    ///
    /// # Errors
    ///
    /// As [`Controller::request`].
    pub fn jobs_snapshot(&self) -> Result<Vec<JobRecord>, ControllerError> {
        jobs(self.request(Command::jobs_snapshot(self.mint()))?)
    }

    /// `job_stop` of the job `job_id` of `generation`, with a minted
    /// request id.
    ///
    /// # Errors
    ///
    /// As [`Controller::request`].
    pub fn job_stop(
        &self,
        generation: impl Into<String>,
        job_id: impl Into<String>,
    ) -> Result<JobStopOutcome, ControllerError> {
        job_stopped(self.request(Command::job_stop(self.mint(), generation, job_id))?)
    }

    /// A `goal` command ([`Command::goal_set`], [`Command::goal_set_auto`],
    /// [`Command::GoalClear`]): the goal the engine now holds. An auto
    /// goal's own turns are [notices](Controller::notices), their `turn`
    /// this command's line.
    ///
    /// # Errors
    ///
    /// As [`Controller::request`]; [`ControllerError::WrongCommand`] for
    /// another command.
    pub fn goal(&self, goal: Command) -> Result<Option<String>, ControllerError> {
        is_goal(&goal)?;
        goal_held(self.request(goal)?)
    }

    /// `compact`, queued behind the work before it: how it came out.
    ///
    /// # Errors
    ///
    /// As [`Controller::request`].
    pub fn compact(&self) -> Result<Compaction, ControllerError> {
        compacted(self.request(Command::Compact)?)
    }

    /// Writes `line` (an LF is added when it has none) as it is, for a line
    /// that may not be a command: returns the `command_error` that answers
    /// it when the engine refuses it, `None` when the engine reads it as a
    /// command (whose answers are then notices). After a line that is not
    /// JSON the engine reads no more, and later calls fail
    /// [`StoppedReading`](ControllerError::StoppedReading).
    ///
    /// # Errors
    ///
    /// As [`Controller::request`], and [`NotOneLine`](ControllerError::NotOneLine).
    pub fn send_line(&self, line: &[u8]) -> Result<Option<CommandErrorCause>, ControllerError> {
        let (owned, refused, ends_reading) = raw_line(line)?;
        let waiter = refused.then_some((false, Clock::Answer));
        let (_, call) = self.inner.write(owned, waiter, ends_reading)?;
        match call {
            None => Ok(None),
            Some(mut call) => refusal_of(self.inner.recv(&mut call, self.limits.answer)),
        }
    }

    /// The next notice, waiting up to `timeout` for one; `None` if none
    /// came (or the engine stopped with none left).
    #[must_use]
    pub fn next_notice(&self, timeout: Duration) -> Option<Notice> {
        let deadline = Instant::now() + timeout;
        let mut state = lock(&self.inner.state);
        loop {
            if let Some(notice) = state.notices.pop_front() {
                return Some(notice);
            }
            let left = deadline.checked_duration_since(Instant::now())?;
            if state.stopped.is_some() || left.is_zero() {
                return None;
            }
            state = self
                .inner
                .changed
                .wait_timeout(state, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// Closes the engine's stdin (it finishes its work and exits, as
    /// `openseek serve` does) and waits until its stdout closes, at most
    /// [`Limits::close`]; returns its exit status (`None` for an attached
    /// engine).
    ///
    /// # Errors
    ///
    /// [`ControllerError::Timeout`] when it did not stop in time: a spawned
    /// engine is then killed.
    pub fn close(mut self) -> Result<Option<ExitStatus>, ControllerError> {
        let limit = self.closing();
        match self.inner.wait_exit(Instant::now() + limit) {
            Some(status) => Ok(status),
            None => Err(self.gave_up(limit)),
        }
    }
}

impl Drop for Controller {
    /// Closes the engine's stdin; a spawned engine that has not stopped
    /// within [`Limits::close`] is then killed, by a thread of its own, so
    /// dropping never blocks. [`Controller::close`] waits for it instead.
    fn drop(&mut self) {
        let Some((inner, limit)) = self.dropping() else {
            return;
        };
        let reaper = move || {
            if inner.wait_exit(Instant::now() + limit).is_none() {
                inner.kill();
            }
        };
        if thread::Builder::new()
            .name("serve-command reaper".into())
            .spawn(reaper)
            .is_err()
        {
            self.inner.kill();
        }
    }
}

controller_debug!(Controller);

impl fmt::Debug for Inner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Inner").finish_non_exhaustive()
    }
}

impl Writer for Inner {
    type Call = StdCall;

    fn write(&self, line: Vec<u8>, waiter: Option<Waiter>, ends_reading: bool) -> Written<StdCall> {
        let mut writer = lock(&self.writer);
        if writer.is_none() {
            return Err(closed());
        }
        let waiter = waiter.map(|(turn, clock)| {
            let (tx, rx) = mpsc::channel();
            (tx, rx, turn, clock)
        });
        let (n, call) = lock(&self.state).begin(&line, waiter, ends_reading)?;
        let result = match writer.as_mut() {
            Some(w) => w.write_all(&line).and_then(|()| w.flush()),
            None => Ok(()),
        };
        let Err(error) = result else {
            return Ok((n, call));
        };
        *writer = None;
        drop(writer);
        let error = Arc::new(error);
        {
            let mut state = lock(&self.state);
            state.unwritten(n);
            state.write_failed = Some(Arc::clone(&error));
        }
        // The engine has most likely exited: its status says more than the
        // broken pipe, if the reader sees it stop soon.
        match self.wait_stopped(Instant::now() + GRACE) {
            Some(stopped) => Err(ControllerError::Stopped(stopped)),
            None => Err(ControllerError::WriteFailed(error)),
        }
    }
    fn close_input(&self) {
        *lock(&self.writer) = None;
    }
}

impl Inner {
    /// The next event for `call`, the engine silent on it at most `limit`;
    /// a `command_error` is the call's error.
    fn recv(&self, call: &mut StdCall, limit: Duration) -> Result<Answer, ControllerError> {
        loop {
            // Bound first: the guard must be let go before an arm locks.
            let step = lock(&self.state).step(call, limit);
            let left = match step {
                Step::Done(done) => return done,
                Step::Closed => return Err(lock(&self.state).ended_error(call.command)),
                Step::Wait(left) => left,
            };
            match call.rx.recv_timeout(left) {
                Ok(answer) => {
                    call.took();
                    return refused(call.command, answer);
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(lock(&self.state).ended_error(call.command))
                }
            }
        }
    }

    /// The engine stopped: every call still waiting fails with this.
    fn stop(&self, end: End) {
        lock(&self.state).stop(end);
        self.changed.notify_all();
    }

    /// How the engine stopped, once it has, if before `deadline`.
    fn wait_stopped(&self, deadline: Instant) -> Option<Arc<Stopped>> {
        let mut state = lock(&self.state);
        loop {
            if let Some(stopped) = &state.stopped {
                return Some(Arc::clone(stopped));
            }
            let left = deadline.checked_duration_since(Instant::now())?;
            state = self
                .changed
                .wait_timeout(state, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// Once the engine has stopped and (spawned) exited, if before
    /// `deadline`: its exit status. An engine that closed its stdout but
    /// still runs has stopped for the calls, not yet exited.
    ///
    /// An engine in a group of its own is waited on by its exit, not by its
    /// stdout: a process it started may hold that open. Once it exits, what
    /// it left in its group is ended, and its stdout closes with them.
    fn wait_exit(&self, deadline: Instant) -> Option<Option<ExitStatus>> {
        if self.group.is_some() {
            let status = self.exit_status(deadline)?;
            self.end_group();
            // The reader sees stdout close now, and finishes the recording.
            let _ = self.wait_stopped(Instant::now() + GRACE);
            return Some(Some(status));
        }
        let stopped = self.wait_stopped(deadline)?;
        if !stopped.still_running {
            return Some(stopped.status);
        }
        self.exit_status(deadline).map(Some)
    }

    /// Kills a spawned engine that still runs, and what it started: its
    /// group gets SIGTERM, and SIGKILL after [`GRACE`].
    fn kill(&self) {
        self.end_group();
        kill(&self.child);
    }

    /// Ends what the engine left running in its group, if it has one.
    fn end_group(&self) {
        if let Some(group) = self.group {
            group.end(GRACE, || {
                let _ = poll_exit(&self.child);
            });
        }
    }

    /// The exit status of a spawned engine, if it exits before `deadline`.
    fn exit_status(&self, deadline: Instant) -> Option<ExitStatus> {
        loop {
            if let Some(status) = poll_exit(&self.child) {
                return status;
            }
            if Instant::now() >= deadline {
                return None;
            }
            thread::sleep(POLL);
        }
    }
}

process!(std::process, |child| {
    let _ = child.kill();
    let _ = child.wait();
});

/// Reads `stderr` to its end through `tail`; returns the tail.
fn keep_tail(mut stderr: impl Read, inner: &Inner) -> String {
    let mut tail = StderrTail::default();
    let mut buf = [0u8; 8192];
    loop {
        match stderr.read(&mut buf) {
            Ok(0) => break,
            Ok(k) => {
                let state = lock(&inner.state);
                tail.saw(&buf[..k], state.recorder());
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    let state = lock(&inner.state);
    tail.finish(state.recorder())
}

/// Wraps the engine's stdout to show each chunk read to a [`LineTee`].
struct Teed<R> {
    inner: R,
    tee: std::rc::Rc<std::cell::RefCell<LineTee>>,
}

impl<R: Read> Read for Teed<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let k = self.inner.read(buf)?;
        self.tee.borrow_mut().saw(&buf[..k]);
        Ok(k)
    }
}

/// The reader thread: every line of the engine's stdout, in order, through
/// the state machine to whoever waits; at its end, the engine stopped.
fn read_events(inner: &Inner, stdout: impl Read, keep: bool, stderr: Option<Receiver<String>>) {
    let tee = std::rc::Rc::new(std::cell::RefCell::new(LineTee::new(keep)));
    let teed = Teed {
        inner: stdout,
        tee: std::rc::Rc::clone(&tee),
    };
    let mut reader = crate::wire::read::CommandReader::<_, Item>::new(BufReader::new(teed));
    let mut seen = 0u64;
    let read_error = loop {
        let item = reader.next();
        let now = reader.line_number();
        let skipped = blanks(seen, now, item.as_ref());
        seen = now.max(seen);
        match item {
            None => break None,
            Some(Err(crate::v2::EventReadError::Io(e))) => break Some(e.to_string()),
            Some(item) => lock(&inner.state).line(skipped, item, now, &mut tee.borrow_mut()),
        }
        inner.changed.notify_all();
    };
    // Calls still waiting wait for the stop the grace brings, not fail
    // on their own limit meanwhile.
    lock(&inner.state).stdout_closed();
    let deadline = Instant::now() + GRACE;
    let status = inner.exit_status(deadline);
    let spawned = lock(&inner.child).is_some();
    let stderr = match stderr {
        None => String::new(),
        Some(done) => {
            let left = deadline.saturating_duration_since(Instant::now());
            done.recv_timeout(left).unwrap_or_default()
        }
    };
    let partial_line = tee.borrow().partial();
    inner.stop(End {
        status,
        still_running: spawned && status.is_none() && read_error.is_none(),
        stderr,
        read_error,
        partial_line,
    });
}

/// A prompt's turn as it runs: its events in order
/// ([`next_event`](TurnHandle::next_event)), its questions to answer
/// ([`allow`](TurnHandle::allow), [`reject`](TurnHandle::reject)), and at
/// its end the [`Turn`] ([`wait`](TurnHandle::wait),
/// [`wait_with`](TurnHandle::wait_with)).
///
/// Dropping it gives the turn up: its later events are notices.
#[derive(Debug)]
pub struct TurnHandle {
    inner: Arc<Inner>,
    call: Option<StdCall>,
    stall: Duration,
    log: TurnLog,
}

impl TurnHandle {
    turn_methods!(TurnHandle);

    /// The turn's next event, waiting for it; `None` once the turn has
    /// ended. An `approval_requested` blocks the turn until it is answered
    /// ([`allow`](TurnHandle::allow), [`reject`](TurnHandle::reject)).
    ///
    /// # Errors
    ///
    /// The prompt [`Refused`](ControllerError::Refused), an event of it
    /// [`Unreadable`](ControllerError::Unreadable), the engine
    /// [`Stopped`](ControllerError::Stopped), or silent on it past its
    /// stall limit ([`Timeout`](ControllerError::Timeout)).
    pub fn next_event(&mut self) -> Result<Option<Event>, ControllerError> {
        if self.log.end.is_some() {
            return Ok(None);
        }
        let Some(call) = &mut self.call else {
            return Ok(None);
        };
        let (event, _) = self.inner.recv(call, self.stall)?;
        self.log.take(&event);
        Ok(Some(event))
    }

    /// Waits for the turn's end, for a turn that asks nothing (questions
    /// already seen through [`next_event`](TurnHandle::next_event) are the
    /// caller's, and left as they are).
    ///
    /// # Errors
    ///
    /// As [`TurnHandle::next_event`], and
    /// [`Unanswered`](ControllerError::Unanswered) when the turn asks a
    /// question (the engine waits for its answer: answer it with
    /// [`wait_with`](TurnHandle::wait_with), or cancel the turn).
    pub fn wait(self) -> Result<Turn, ControllerError> {
        self.run(None::<fn(&Approval) -> Decision>)
    }

    /// Waits for the turn's end, answering each question it asks with
    /// `decide`'s [`Decision`] (a question left open,
    /// [`Withdrawn`](Decision::Withdrawn), fails the wait
    /// [`Unanswered`](ControllerError::Unanswered)).
    ///
    /// # Errors
    ///
    /// As [`TurnHandle::next_event`].
    pub fn wait_with(
        self,
        decide: impl FnMut(&Approval) -> Decision,
    ) -> Result<Turn, ControllerError> {
        self.run(Some(decide))
    }

    fn run<D>(mut self, mut decide: Option<D>) -> Result<Turn, ControllerError>
    where
        D: FnMut(&Approval) -> Decision,
    {
        self.log.start_wait(decide.is_some());
        self.answer_questions(&mut decide)?;
        while self.next_event()?.is_some() {
            self.answer_questions(&mut decide)?;
        }
        Ok(self.log.into_turn())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// A stderr that gives its script's reads, then its end.
    struct Script(VecDeque<io::Result<&'static [u8]>>);

    impl Read for Script {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            match self.0.pop_front() {
                Some(Ok(bytes)) => {
                    buf[..bytes.len()].copy_from_slice(bytes);
                    Ok(bytes.len())
                }
                Some(Err(e)) => Err(e),
                None => Ok(0),
            }
        }
    }

    fn inner() -> Inner {
        Inner {
            writer: Mutex::new(None),
            state: Mutex::new(State::new(Limits::default().unread, None)),
            changed: Condvar::new(),
            child: Mutex::new(None),
            group: None,
            minted: AtomicU64::new(0),
        }
    }

    /// An interrupted read of the engine's stderr is read again; any other
    /// error ends the tail where it stands.
    #[test]
    fn the_stderr_tail_reads_on_after_an_interrupt_and_ends_at_an_error() {
        let interrupted = || Err(io::ErrorKind::Interrupted.into());
        let script = Script(VecDeque::from([
            interrupted(),
            Ok(&b"boom\n"[..]),
            interrupted(),
            Ok(&b"again\n"[..]),
            Err(io::Error::other("gone")),
            Ok(&b"never read\n"[..]),
        ]));
        assert_eq!(keep_tail(script, &inner()), "boom\nagain\n");
    }
}
