//! What the blocking and the tokio forms share to the letter, written
//! once: the controllers' methods that never wait, expanded in each form's
//! `impl`, with [`Writer`] (how a line is written) and [`Process`] (how an
//! engine's process is spawned, polled and killed) implemented by each; the
//! engine loops' settings. A fix cannot land in one form only.

use super::control::{line_of, lock, Clock};
use super::controller_error::ControllerError;
use super::engine::Parked;
use super::reply::CommandLine;
use crate::v2::Command;
use std::io;
use std::process::ExitStatus;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How often a controller asks whether an engine that closed its stdout
/// has exited: neither form has a wait with a deadline on a child.
pub(super) const POLL: Duration = Duration::from_millis(5);

/// A call waits on a line's answer: for a turn, or not; on which clock.
pub(super) type Waiter = (bool, Clock);

/// A command line written, and the call waiting on it, if one does.
pub(super) type Written<C> = Result<(CommandLine, Option<C>), ControllerError>;

/// How a controller's engine side writes a line; sending a command is
/// written once on it.
pub(super) trait Writer {
    /// The call that waits on a line's answer.
    type Call;

    /// Writes one line, LF included, taken by the state machine under the
    /// writer's lock first; `waiter`: a call waits on its answer (for a
    /// turn, or not; on which clock).
    fn write(
        &self,
        line: Vec<u8>,
        waiter: Option<Waiter>,
        ends_reading: bool,
    ) -> Written<Self::Call>;

    /// Encodes and writes `command`, refusing first what serve declines or
    /// cannot read.
    fn send(&self, command: &Command, waiter: Option<Waiter>) -> Written<Self::Call> {
        self.write(line_of(command)?.into_bytes(), waiter, false)
    }

    /// Closes the engine's stdin, once the lines queued are written.
    fn close_input(&self);
}

/// A spawned engine's process, std's or tokio's.
pub(super) trait Process: Sized {
    /// How it is started.
    type Command;
    /// Its stdin, stdout and stderr.
    type Pipes;

    /// Spawns `command` with its stdin, stdout and stderr piped, in a
    /// process group of its own when `own_group` (on Unix).
    fn spawn_piped(command: &mut Self::Command, own_group: bool) -> io::Result<Self>;

    /// Its process id, while it has one.
    fn pid(&self) -> Option<u32>;

    /// Takes its three pipes, once.
    fn take_pipes(&mut self) -> Option<Self::Pipes>;

    /// Its exit status, if it has exited.
    fn try_wait(&mut self) -> io::Result<Option<ExitStatus>>;

    /// Kills it (the blocking form also reaps it; tokio reaps on its own).
    fn kill_now(&mut self);
}

/// [`Deliver`](super::control::Deliver) and [`Inbox`](super::control::Inbox)
/// for the ends of std's or tokio's channel: alike to the letter, but for
/// the types' names.
macro_rules! channel {
    ($sender:ident, $receiver:ident, $empty_or_closed:ident) => {
        impl Deliver for $sender<Answer> {
            fn deliver(&self, answer: Answer) -> bool {
                self.send(answer).is_ok()
            }
        }

        impl Inbox for $receiver<Answer> {
            fn try_take(&mut self) -> Result<Answer, bool> {
                self.try_recv()
                    .map_err(|e| matches!(e, $empty_or_closed::Disconnected))
            }
        }
    };
}
pub(super) use channel;

/// [`Process`] for the `Child` of `std::process` or `tokio::process`: the
/// two differ only in how a child is killed, `$kill` on `$child`.
macro_rules! process {
    ($($module:ident)::+, |$child:ident| $kill:block) => {
        impl Process for $($module)::+::Child {
            type Command = $($module)::+::Command;
            type Pipes = (
                $($module)::+::ChildStdin,
                $($module)::+::ChildStdout,
                $($module)::+::ChildStderr,
            );

            fn spawn_piped(command: &mut Self::Command, own_group: bool) -> std::io::Result<Self> {
                #[cfg(unix)]
                if own_group {
                    // std's is a trait method, tokio's its own.
                    #[allow(unused_imports)]
                    use std::os::unix::process::CommandExt as _;
                    command.process_group(0);
                }
                #[cfg(not(unix))]
                let _ = own_group;
                let piped = command.stdin(Stdio::piped()).stdout(Stdio::piped());
                piped.stderr(Stdio::piped()).spawn()
            }

            fn pid(&self) -> Option<u32> {
                Some($($module)::+::Child::id(self)).flatten_id()
            }

            fn take_pipes(&mut self) -> Option<Self::Pipes> {
                Some((self.stdin.take()?, self.stdout.take()?, self.stderr.take()?))
            }

            fn try_wait(&mut self) -> std::io::Result<Option<ExitStatus>> {
                $($module)::+::Child::try_wait(self)
            }

            fn kill_now(&mut self) {
                let $child = self;
                $kill
            }
        }
    };
}
pub(super) use process;

/// Spawns the engine with its pipes, or kills it if they are missing.
pub(super) fn spawn_piped<P: Process>(
    command: &mut P::Command,
    own_group: bool,
) -> io::Result<(P, P::Pipes, Option<Group>)> {
    let mut child = P::spawn_piped(command, own_group)?;
    // Its process group is its pid (`process_group(0)`).
    let group = if cfg!(unix) && own_group {
        child.pid().map(Group)
    } else {
        None
    };
    match child.take_pipes() {
        Some(pipes) => Ok((child, pipes, group)),
        None => {
            child.kill_now();
            Err(io::Error::other("the engine's pipes were not set up"))
        }
    }
}

/// A process id as std (`u32`) or tokio (`Option<u32>`, `None` once
/// reaped) gives it.
pub(super) trait FlattenId {
    fn flatten_id(self) -> Option<u32>;
}

impl FlattenId for Option<u32> {
    fn flatten_id(self) -> Option<u32> {
        self
    }
}

impl FlattenId for Option<Option<u32>> {
    fn flatten_id(self) -> Option<u32> {
        self.flatten()
    }
}

/// The engine's process group, when the controller gave it one of its own
/// ([`Options::own_group`](super::Options::own_group)): what the engine
/// started is ended with it.
///
/// std has no call that signals a process group, and the crate forbids
/// `unsafe`: the signal is sent by the system's `kill(1)` (POSIX), one
/// short process a signal. Where it is missing, the engine alone is
/// killed, as before.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Group(u32);

impl Group {
    /// `kill -<signal> -- -<group>`: whether some process got it.
    fn signal(self, signal: &str) -> bool {
        std::process::Command::new("kill")
            .arg(signal)
            .arg("--")
            .arg(format!("-{}", self.0))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|status| status.success())
    }

    /// Ends every process left in the group: SIGTERM, then SIGKILL to what
    /// still runs after `grace`. Returns at once when none is left. `reap`
    /// reaps the engine if it has exited (a zombie is still in the group).
    pub(super) fn end(self, grace: std::time::Duration, mut reap: impl FnMut()) {
        if !self.signal("-TERM") {
            return;
        }
        let deadline = std::time::Instant::now() + grace;
        while std::time::Instant::now() < deadline {
            std::thread::sleep(POLL);
            reap();
            if !self.signal("-0") {
                return;
            }
        }
        self.signal("-KILL");
    }
}

/// Whether the engine has exited: `None` while it runs, its status once it
/// has, `Some(None)` when there is no process to ask (an attached engine)
/// or asking failed.
pub(super) fn poll_exit<P: Process>(child: &Mutex<Option<P>>) -> Option<Option<ExitStatus>> {
    match lock(child).as_mut().map(P::try_wait) {
        Some(Ok(None)) => None,
        Some(Ok(status)) => Some(status),
        None | Some(Err(_)) => Some(None),
    }
}

/// Kills a spawned engine that still runs.
pub(super) fn kill<P: Process>(child: &Mutex<Option<P>>) {
    if let Some(child) = lock(child).as_mut() {
        if let Ok(None) = child.try_wait() {
            child.kill_now();
        }
    }
}

/// The controller's methods that never wait; `$turn` is its turn's type,
/// `$call` its waiting call's.
macro_rules! controller_methods {
    ($controller:ident, $turn:ident, $call:ident) => {
        /// The controller with `limits` for every call from now on.
        #[must_use]
        pub fn with_limits(mut self, limits: Limits) -> $controller {
            self.limits = limits;
            self
        }

        /// The limits of its calls.
        #[must_use]
        pub fn limits(&self) -> Limits {
            self.limits
        }

        /// Sends a `prompt` of `content` (text, an image, parts); its turn
        /// is on the handle.
        ///
        /// # Errors
        ///
        /// Not written ([`ControllerError`]'s `Declined`, `TooLong`,
        /// `StoppedReading`, `WriteFailed`), or the engine had stopped.
        pub fn prompt(&self, content: impl Into<Content>) -> Result<$turn, ControllerError> {
            self.submit(Command::prompt(content))
        }

        /// Sends `prompt`, a [`Command::Prompt`] as built (tagged, say).
        ///
        /// # Errors
        ///
        /// As [`prompt`](Self::prompt); [`ControllerError::WrongCommand`]
        /// for another command.
        pub fn submit(&self, prompt: Command) -> Result<$turn, ControllerError> {
            is_prompt(&prompt)?;
            let (command, call) = self.inner.send(&prompt, Some((true, Clock::Work)))?;
            Ok($turn {
                inner: Arc::clone(&self.inner),
                call,
                stall: self.limits.stall,
                log: TurnLog::new(command),
            })
        }

        /// `cancel`: the running turn ends `agent_aborted` (on its handle),
        /// a running compaction fails. Returns its command line.
        ///
        /// # Errors
        ///
        /// Not written.
        pub fn cancel(&self) -> Result<CommandLine, ControllerError> {
            Ok(self.inner.send(&Command::Cancel, None)?.0)
        }

        /// Takes the notices that arrived: events no call waited for,
        /// events that fit no rule, lines that are not events.
        #[must_use]
        pub fn notices(&self) -> Vec<Notice> {
            lock(&self.inner.state).notices.drain(..).collect()
        }

        /// How many notices were dropped, oldest first, because
        /// [`MAX_NOTICES`](super::MAX_NOTICES) waited unread.
        #[must_use]
        pub fn notices_dropped(&self) -> u64 {
            lock(&self.inner.state).notices_dropped
        }

        /// The engine's latest prediction of what the user types next
        /// (it predicts by itself after a turn that finished), while it is
        /// current: a prompt, a steer, `compact`, `cancel` or a goal sent
        /// since clears it, as they cancel the engine's prediction. Each
        /// prediction also arrives as a [`Notice::Prediction`].
        #[must_use]
        pub fn prediction(&self) -> Option<Suggestion> {
            lock(&self.inner.state).suggestion()
        }

        /// What the engine owes now, as the model counts it.
        #[must_use]
        pub fn owed(&self) -> Owed {
            lock(&self.inner.state).conversation.owed()
        }

        /// How the engine stopped, once it has.
        #[must_use]
        pub fn stopped(&self) -> Option<Arc<Stopped>> {
            lock(&self.inner.state).stopped.clone()
        }

        /// Writes `command`, a request: the call that waits on its answer,
        /// or `Err` with [`Reply::Written`] for a command with no answer of
        /// its own.
        fn open_request(&self, command: &Command) -> Result<Result<$call, Reply>, ControllerError> {
            if unanswered_kind(command)? {
                return Ok(Err(Reply::Written(self.inner.send(command, None)?.0)));
            }
            let (_, call) = self
                .inner
                .send(command, Some((false, Clock::of(command))))?;
            // A waiter asked for is always given.
            call.map(Ok).ok_or_else(closed)
        }

        /// Closes the engine's stdin for `close`: the limit the engine has
        /// to exit in.
        fn closing(&mut self) -> Duration {
            self.closed = true;
            self.inner.close_input();
            self.limits.close
        }

        /// `close` waited `limit` in vain: a spawned engine is killed.
        fn gave_up(&self, limit: Duration) -> ControllerError {
            self.inner.kill();
            ControllerError::exit_timeout(limit)
        }

        /// Closes the engine's stdin for `drop`: the engine to reap, and
        /// within what, unless `close` waited already or it is attached.
        fn dropping(&mut self) -> Option<(Arc<Inner>, Duration)> {
            self.inner.close_input();
            if self.closed || lock(&self.inner.child).is_none() {
                return None;
            }
            Some((Arc::clone(&self.inner), self.limits.close))
        }

        /// A request id no other call of this controller uses.
        fn mint(&self) -> String {
            format!(
                "ctl-{}",
                self.inner
                    .minted
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                    + 1
            )
        }
    };
}
pub(super) use controller_methods;

/// A turn's methods that never wait.
macro_rules! turn_methods {
    ($turn:ident) => {
        /// The prompt's command line.
        #[must_use]
        pub fn command(&self) -> CommandLine {
            self.log.command
        }

        /// The turn with `stall` as its [`Limits::stall`]: the longest the
        /// engine may be silent on it (while it runs, or while it waits
        /// behind other work) before a call on it fails.
        #[must_use]
        pub fn stall(mut self, stall: Duration) -> $turn {
            self.stall = stall;
            self
        }

        /// Allows the tool call the question `id` asked about.
        ///
        /// # Errors
        ///
        /// Not written.
        pub fn allow(&mut self, id: &str) -> Result<(), ControllerError> {
            self.decide(id, Decision::Allowed)
        }

        /// Rejects the tool call the question `id` asked about.
        ///
        /// # Errors
        ///
        /// Not written.
        pub fn reject(&mut self, id: &str) -> Result<(), ControllerError> {
            self.decide(id, Decision::Rejected)
        }

        /// Answers the question `id` as `decision` says:
        /// [`Allowed`](Decision::Allowed) and [`Rejected`](Decision::Rejected)
        /// answer it, [`Cancelled`](Decision::Cancelled) cancels the turn,
        /// [`Withdrawn`](Decision::Withdrawn) leaves it open.
        ///
        /// # Errors
        ///
        /// Not written.
        pub fn decide(&mut self, id: &str, decision: Decision) -> Result<(), ControllerError> {
            if let Some(command) = self.log.answer(id, decision) {
                self.inner.send(&command, None)?;
            }
            Ok(())
        }

        /// Answers, as `decide` says, the questions the turn has asked so
        /// far and not yet had answered.
        fn answer_questions(
            &mut self,
            decide: &mut Option<impl FnMut(&Approval) -> Decision>,
        ) -> Result<(), ControllerError> {
            while let Some(command) = self.log.next_answer(decide)? {
                self.inner.send(&command, None)?;
            }
            Ok(())
        }
    };
}
pub(super) use turn_methods;

/// A controller's `Debug`: its limits and what the engine owes.
macro_rules! controller_debug {
    ($controller:ident) => {
        impl fmt::Debug for $controller {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($controller))
                    .field("limits", &self.limits)
                    .field("owed", &self.owed())
                    .finish_non_exhaustive()
            }
        }
    };
}
pub(super) use controller_debug;

/// How an engine loop reads, set by its builder methods
/// ([`loop_settings!`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct Settings {
    /// Read the next command only once the running turn is parked.
    pub(super) in_order: bool,
    /// The longest command line read.
    pub(super) max_line_len: usize,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            in_order: false,
            max_line_len: crate::v2::DEFAULT_MAX_LINE_LEN,
        }
    }
}

impl Settings {
    /// What a turn calls when it has run as far as it can, in order: `park`
    /// tells the loop.
    pub(super) fn parked<'o>(&self, park: impl Fn() + Send + Sync + 'o) -> Option<Parked<'o>> {
        self.in_order.then(|| Arc::new(park) as Parked<'o>)
    }
}

/// An engine loop's builder methods; `$loop` is its type.
macro_rules! loop_settings {
    ($loop:ident) => {
        /// Reads the next command only once the running turn has run as far
        /// as it can (to its end, or to a question it waits on): what the
        /// loop writes then depends on its input alone, never on timing. For
        /// tests, scripted engines (the mock engine) and canned turns; an
        /// engine around a model leaves it off, so that `cancel`, steers and
        /// refused lines are read while a turn streams.
        #[must_use]
        pub fn in_order(mut self) -> $loop<E> {
            self.settings.in_order = true;
            self
        }

        /// Refuses command lines longer than `max` bytes (a
        /// `command_error`, and reading stops, as for a line that is not
        /// JSON); the default is the reader's, 64 MiB, as upstream's.
        #[must_use]
        pub fn max_line_len(mut self, max: usize) -> $loop<E> {
            self.settings.max_line_len = max;
            self
        }
    };
}
pub(super) use loop_settings;

/// What both forms name, imported once by each (`use super::shared::names::*`):
/// the state machine's pieces, the replies and the macros above.
pub(super) mod names {
    pub(in crate::conversation) use crate::conversation::control::{
        blanks, closed, compacted, goal_held, is_goal, is_prompt, job_stopped, jobs, lock,
        raw_line, refusal_of, refused, reply_of, steered, unanswered_kind, Answer, Call, Clock,
        Deliver, End, Inbox, State, Step, GRACE,
    };
    pub(in crate::conversation) use crate::conversation::controller_error::{
        ControllerError, Stopped,
    };
    pub(in crate::conversation) use crate::conversation::engine::Decision;
    pub(in crate::conversation) use crate::conversation::model::Owed;
    pub(in crate::conversation) use crate::conversation::reply::{
        Approval, CommandLine, Compaction, Limits, Notice, Options, Reply, Steered, Suggestion,
        Turn,
    };
    pub(in crate::conversation) use crate::conversation::shared::{
        channel, controller_debug, controller_methods, kill, poll_exit, process, spawn_piped,
        turn_methods, FlattenId, Group, Process, Waiter, Writer, Written, POLL,
    };
    pub(in crate::conversation) use crate::conversation::tee::{LineTee, StderrTail};
    pub(in crate::conversation) use crate::conversation::turn_log::TurnLog;
    pub(in crate::conversation) use crate::v2::{
        Command, CommandErrorCause, Content, Event, JobRecord, JobStopOutcome, SteerKind,
    };
    pub(in crate::conversation) use std::fmt;
    pub(in crate::conversation) use std::process::{ExitStatus, Stdio};
    pub(in crate::conversation) use std::sync::atomic::AtomicU64;
    pub(in crate::conversation) use std::sync::{Arc, Mutex};
    pub(in crate::conversation) use std::time::Duration;
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::Group;
    use std::os::unix::process::CommandExt;
    use std::path::Path;
    use std::process::{Child, Command};
    use std::time::{Duration, Instant};

    /// `script` (`$1` is `marker`) as the leader of a process group of its
    /// own, once it wrote `$1.ready`.
    fn leader(script: &str, marker: &Path) -> Child {
        let child = Command::new("sh")
            .arg("-c")
            .arg(script)
            .arg("sh")
            .arg(marker)
            .process_group(0)
            .spawn()
            .unwrap();
        let ready = marker.with_extension("ready");
        let deadline = Instant::now() + Duration::from_secs(10);
        while !ready.exists() {
            assert!(Instant::now() < deadline, "{script} never got ready");
            std::thread::sleep(Duration::from_millis(5));
        }
        child
    }

    /// A group is sent SIGTERM first, and `end` returns as soon as none of
    /// it is left; what ignores SIGTERM gets SIGKILL after the grace.
    #[test]
    fn a_group_gets_sigterm_then_sigkill_after_the_grace() {
        let dir =
            std::env::temp_dir().join(format!("serve-command-group-end-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();

        let term = dir.join("term");
        let mut polite = leader(
            r#"trap 'echo term > "$1"; exit 0' TERM; : > "$1.ready"; while :; do sleep 0.05; done"#,
            &term,
        );
        let start = Instant::now();
        Group(polite.id()).end(Duration::from_secs(20), || {
            let _ = polite.try_wait();
        });
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{:?}",
            start.elapsed()
        );
        assert_eq!(std::fs::read_to_string(&term).unwrap(), "term\n");
        assert_eq!(polite.wait().unwrap().code(), Some(0));

        let mut stubborn = leader(
            r#"trap '' TERM; : > "$1.ready"; while :; do sleep 0.05; done"#,
            &dir.join("stubborn"),
        );
        let start = Instant::now();
        Group(stubborn.id()).end(Duration::from_millis(300), || {
            let _ = stubborn.try_wait();
        });
        assert!(start.elapsed() >= Duration::from_millis(300));
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(stubborn.wait().unwrap().signal(), Some(9));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
