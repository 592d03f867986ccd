//! What the blocking and the tokio controller share to the letter, the
//! methods that never wait, written once: each form expands these macros
//! in its own `impl`, and implements [`Writer`] with how it writes a line,
//! so a fix cannot land in one form only.

use super::control::{line_of, Clock};
use super::controller_error::ControllerError;
use super::reply::CommandLine;
use crate::v2::Command;

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
        waiter: Option<(bool, Clock)>,
        ends_reading: bool,
    ) -> Result<(CommandLine, Option<Self::Call>), ControllerError>;

    /// Encodes and writes `command`, refusing first what serve declines or
    /// cannot read.
    fn send(
        &self,
        command: &Command,
        waiter: Option<(bool, Clock)>,
    ) -> Result<(CommandLine, Option<Self::Call>), ControllerError> {
        self.write(line_of(command)?.into_bytes(), waiter, false)
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
