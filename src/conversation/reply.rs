//! What a controller's calls give back: line numbers, turns, replies,
//! notices, and the limits that bound every wait. Shared by the blocking
//! and the tokio controller.

use super::model::Attribution;
use crate::v2::{Event, EventReadError, JobRecord, JobStopOutcome, PredictionOutcome, Usage};
use std::fmt;
use std::process::ExitStatus;
use std::time::Duration;

/// The number of a line the controller wrote to the engine's stdin, from 1,
/// as the tap's log and [`Conversation`](super::Conversation) number them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CommandLine(pub u64);

/// The number of a line the engine wrote on its stdout, from 1, blank
/// lines and lines that are not events counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EventLine(pub u64);

impl CommandLine {
    /// The number.
    #[must_use]
    pub fn get(self) -> u64 {
        self.0
    }
}

impl EventLine {
    /// The number.
    #[must_use]
    pub fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Display for CommandLine {
    /// `command line 3`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "command line {}", self.0)
    }
}

impl fmt::Display for EventLine {
    /// `event line 7`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "event line {}", self.0)
    }
}

/// How long a call waits on a silent engine, and how long closing waits for
/// it to finish. The defaults suit a real model: a request the engine
/// answers at once gets 30 s; a turn, a compaction, a prediction, a steer
/// or a goal (answered at the running turn's next step) gets 10 minutes of
/// silence, since a tool can run that long without an event; a turn still
/// streaming is never cut off.
///
/// ```
/// use serve_command::v2::serve::Limits;
/// use std::time::Duration;
///
/// let limits = Limits::default().stall(Duration::from_secs(60));
/// assert_eq!(limits.answer, Duration::from_secs(30));
/// assert_eq!(limits.stall, Duration::from_secs(60));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// The longest a call waits for an answer the engine gives at once
    /// (`jobs_snapshot`, `job_stop`, a refused line's `command_error`)
    /// with nothing of it arriving.
    pub answer: Duration,
    /// The longest a call on work waits with the engine silent on it: a
    /// turn (its next event, or while queued, an event of the work ahead of
    /// it), a `compact`, a `predict`, a steer or a `goal` (both applied at
    /// the running turn's next step). Each event of the work starts the
    /// wait anew.
    pub stall: Duration,
    /// How long [`close`](super::Controller::close) (and dropping a
    /// controller) leaves the engine to finish its work once its stdin is
    /// closed, before a spawned engine is killed.
    pub close: Duration,
    /// How many events a call holds that its caller has not read (a turn
    /// handle nobody reads); past it the call fails with
    /// [`ControllerError::Unread`](super::ControllerError::Unread) and its
    /// later events are notices. No real turn comes near the default,
    /// 1,048,576.
    pub unread: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            answer: Duration::from_secs(30),
            stall: Duration::from_secs(600),
            close: Duration::from_secs(60),
            unread: 1 << 20,
        }
    }
}

impl Limits {
    /// These limits with `answer` for answers given at once.
    #[must_use]
    pub fn answer(mut self, answer: Duration) -> Limits {
        self.answer = answer;
        self
    }

    /// These limits with `stall` for silence on work.
    #[must_use]
    pub fn stall(mut self, stall: Duration) -> Limits {
        self.stall = stall;
        self
    }

    /// These limits with `close` for the engine to finish once closed.
    #[must_use]
    pub fn close(mut self, close: Duration) -> Limits {
        self.close = close;
        self
    }

    /// These limits with `unread` events held per call.
    #[must_use]
    pub fn unread(mut self, unread: usize) -> Limits {
        self.unread = unread;
        self
    }
}

/// How a controller is set up: its [`Limits`], and (feature `workbench`)
/// where it records its session.
///
/// ```no_run
/// # #[cfg(feature = "workbench")]
/// # fn main() -> std::io::Result<()> {
/// use serve_command::v2::serve::{Controller, Limits, Options, Recorder};
/// use std::time::Duration;
///
/// let options = Options::default()
///     .limits(Limits::default().answer(Duration::from_secs(5)))
///     .record(Recorder::new(std::fs::File::create("session.log")?));
/// let engine = Controller::spawn_with(&mut std::process::Command::new("my-engine"), options)?;
/// # Ok(())
/// # }
/// # #[cfg(not(feature = "workbench"))]
/// # fn main() {}
/// ```
#[derive(Default)]
#[non_exhaustive]
pub struct Options {
    /// The limits of every call.
    pub limits: Limits,
    /// Where both directions are recorded.
    pub(super) recording: Option<Box<dyn Sink>>,
    /// A spawned engine stays in the controller's process group
    /// ([`Options::own_group`]`(false)`).
    pub(super) shared_group: bool,
}

impl fmt::Debug for Options {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Options")
            .field("limits", &self.limits)
            .field("own_group", &!self.shared_group)
            .field("recording", &self.recording.is_some())
            .finish()
    }
}

impl Options {
    /// These options with `limits`.
    #[must_use]
    pub fn limits(mut self, limits: Limits) -> Options {
        self.limits = limits;
        self
    }

    /// Whether a spawned engine runs in a process group of its own (on
    /// Unix; the default: `true`). Closing or dropping the controller then
    /// ends what the engine started too (a tool's shell, a background
    /// job): once the engine has exited, or its [`Limits::close`] has run
    /// out, every process left in its group gets SIGTERM, and SIGKILL two
    /// seconds later. Nothing is left behind.
    ///
    /// The consequence: Ctrl-C at a terminal reaches the controller's
    /// group, not the engine's. The controller's own exit ends the engine
    /// (by dropping it, or by closing its stdin: a controller killed by a
    /// signal runs no `Drop`, and the engine sees only the end of its
    /// input). `false` keeps the engine in the controller's group, where
    /// Ctrl-C reaches it directly, and only the engine is killed.
    /// `attach` starts no process and can do neither.
    #[must_use]
    pub fn own_group(mut self, own: bool) -> Options {
        self.shared_group = !own;
        self
    }
}

/// Where a controller records its session: the workbench's
/// [`Recorder`](super::Recorder), behind a trait so that the controller
/// does not depend on the workbench.
pub(crate) trait Sink: Send + Sync {
    /// A command line as written.
    fn command(&self, line: &[u8]);
    /// A line of the engine's stdout; `lf`: it ended with one.
    fn event(&self, line: &[u8], lf: bool);
    /// A line of the engine's stderr; `lf`: it ended with one.
    fn stderr(&self, line: &[u8], lf: bool);
    /// The engine stopped, with this exit status if known.
    fn finish(&self, status: Option<ExitStatus>);
}

/// What a call waited for when its limit ran out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Waiting {
    /// The answer to a request.
    Answer,
    /// A queued prompt's turn to start, or a queued `compact`'s
    /// compaction.
    Start,
    /// The running turn's next event (or a compaction's end).
    Event,
    /// The engine to exit, its stdin closed.
    Exit,
}

impl fmt::Display for Waiting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Waiting::Answer => "its answer",
            Waiting::Start => "its work to start",
            Waiting::Event => "the next event of its work",
            Waiting::Exit => "the engine to exit",
        })
    }
}

/// A question a turn asks (`approval_requested`): may the tool go ahead?
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Approval {
    /// The id an `approval` command answers.
    pub id: String,
    /// The tool asking.
    pub tool_name: String,
    /// What would be granted.
    pub detail: String,
    /// What would run, verbatim, if the engine said.
    pub body: Option<String>,
}

/// How a turn ended: its terminal event.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TurnEnd {
    /// `agent_finished`, with the answer.
    Finished(String),
    /// `agent_aborted`, with the reason.
    Aborted(String),
    /// `turn_failed`, with the error.
    Failed(String),
}

/// A turn that has ended.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Turn {
    /// The prompt that started it.
    pub command: CommandLine,
    /// Its events in order, the terminal one last.
    pub events: Vec<Event>,
    /// How it ended.
    pub end: TurnEnd,
    /// Its last `usage`, if it wrote one.
    pub usage: Option<Usage>,
    /// The questions it asked that the controller never answered (the
    /// engine settled them: a cancel, a shutdown).
    pub unanswered: Vec<Approval>,
}

impl Turn {
    /// The answer, for a turn that finished.
    #[must_use]
    pub fn answer(&self) -> Option<&str> {
        match &self.end {
            TurnEnd::Finished(answer) => Some(answer),
            _ => None,
        }
    }
}

/// How a steer came out.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Steered {
    /// `steer_applied`; `turn`: the prompt of the turn it landed in.
    Applied {
        /// The turn it landed in.
        turn: Option<CommandLine>,
    },
    /// `steer_dropped`: no turn to land in.
    Dropped,
}

/// How a `compact` came out.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Compaction {
    /// `compaction_finished`.
    Finished {
        /// The first event compacted.
        from_sequence: i32,
        /// The last.
        to_sequence: i32,
        /// What replaces them.
        summary: String,
    },
    /// `compaction_failed` (also a compaction a `cancel` stopped).
    Failed(String),
}

/// What answers a command sent with [`Controller::request`](super::Controller::request).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reply {
    /// `jobs_snapshot`'s records.
    Jobs(Vec<JobRecord>),
    /// `job_stop`'s outcome.
    JobStop(JobStopOutcome),
    /// A steer's.
    Steer(Steered),
    /// A `goal` command's: the goal the engine now holds (`None`: cleared).
    Goal(Option<String>),
    /// A `compact`'s.
    Compaction(Compaction),
    /// `cancel` and `approval` have no answer of their own (what a cancel
    /// hits ends `agent_aborted` in its turn, an approval settles in its
    /// turn): written, as this command line.
    Written(CommandLine),
}

/// The engine's own prediction of what the user types next
/// (`prediction_result`), written after a turn that finished when nothing
/// else was left to run.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Suggestion {
    /// The event sequence of the conversation it predicts from.
    pub source_sequence: i32,
    /// `Completed` with the text, or `Failed` when the engine could not
    /// save it.
    pub outcome: PredictionOutcome,
    /// The prompt of the turn it follows.
    pub turn: Option<CommandLine>,
    /// Its line among the engine's.
    pub line: EventLine,
}

impl Suggestion {
    /// The predicted text, for a completed prediction that has one.
    #[must_use]
    pub fn text(&self) -> Option<&str> {
        match &self.outcome {
            PredictionOutcome::Completed { text, .. } => text.as_deref(),
            _ => None,
        }
    }
}

/// An engine line that no call waited for.
#[derive(Debug)]
#[non_exhaustive]
pub enum Notice {
    /// An event that answers no command a call waits on and belongs to no
    /// turn one waits on: `session_started`, `job_changed`, an auto goal's
    /// turns, an answer whose call was dropped.
    Event {
        /// The event.
        event: Event,
        /// What the model made of it.
        attribution: Attribution,
    },
    /// The engine's own prediction of the user's next message, after a
    /// turn that finished: it answers no command. The latest one still
    /// current is also at hand through the controller's `prediction()`.
    Prediction {
        /// The prediction.
        suggestion: Suggestion,
        /// What the model made of it (`turn`: the turn it follows).
        attribution: Attribution,
    },
    /// An event that fits no rule of the conversation (a second reply to
    /// one request, a turn event with no turn running): the model's reason.
    /// Nothing stops for it.
    Violation {
        /// The event.
        event: Event,
        /// Why it fits no rule.
        reason: String,
        /// What the model made of it.
        attribution: Attribution,
    },
    /// A line that is not an event (not JSON, no event of today's
    /// revision, or one that does not decode and answers no call waiting).
    NotAnEvent {
        /// Its number among the engine's lines.
        line: EventLine,
        /// Why it is not an event.
        error: EventReadError,
        /// What the model made of it.
        attribution: Attribution,
    },
}

impl Notice {
    /// What the model made of the line.
    #[must_use]
    pub fn attribution(&self) -> &Attribution {
        match self {
            Notice::Event { attribution, .. }
            | Notice::Prediction { attribution, .. }
            | Notice::Violation { attribution, .. }
            | Notice::NotAnEvent { attribution, .. } => attribution,
        }
    }

    /// The event, for a line that is one (but a prediction's, which is
    /// [`Notice::Prediction`]'s `suggestion`).
    #[must_use]
    pub fn event(&self) -> Option<&Event> {
        match self {
            Notice::Event { event, .. } | Notice::Violation { event, .. } => Some(event),
            Notice::Prediction { .. } | Notice::NotAnEvent { .. } => None,
        }
    }
}

impl Notice {
    /// Why the line is not an event, for one that is not.
    #[must_use]
    pub fn error(&self) -> Option<&EventReadError> {
        match self {
            Notice::NotAnEvent { error, .. } => Some(error),
            Notice::Event { .. } | Notice::Prediction { .. } | Notice::Violation { .. } => None,
        }
    }

    /// The event, for a line that is one.
    #[must_use]
    pub fn into_event(self) -> Option<Event> {
        match self {
            Notice::Event { event, .. } | Notice::Violation { event, .. } => Some(event),
            Notice::Prediction { suggestion, .. } => Some(Event::prediction_result(
                suggestion.source_sequence,
                suggestion.outcome,
            )),
            Notice::NotAnEvent { .. } => None,
        }
    }
}

impl fmt::Display for Notice {
    /// `event line 4 (job_changed)`, `event line 9 (jobs_snapshot) fits no
    /// rule: ...`, `event line 2 is not an event: ...`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Notice::Event { event, attribution } => {
                write!(f, "{} ({})", EventLine(attribution.n), event.name())
            }
            Notice::Prediction { attribution, .. } => {
                write!(f, "{} (prediction_result)", EventLine(attribution.n))
            }
            Notice::Violation {
                event,
                reason,
                attribution,
            } => write!(
                f,
                "{} ({}) fits no rule: {reason}",
                EventLine(attribution.n),
                event.name()
            ),
            Notice::NotAnEvent { line, error, .. } => {
                write!(f, "{line} is not an event: {error}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Options show their limits and whether they record, not the sink.
    #[test]
    fn options_debug_shows_the_limits_and_whether_they_record() {
        assert_eq!(
            format!("{:?}", Options::default()),
            "Options { limits: Limits { answer: 30s, stall: 600s, close: 60s, unread: 1048576 }, own_group: true, recording: false }"
        );
    }

    #[cfg(feature = "workbench")]
    #[test]
    fn options_debug_says_when_they_record() {
        let options = Options::default().record(crate::conversation::Recorder::new(Vec::new()));
        assert!(format!("{options:?}").ends_with(", recording: true }"));
    }
}
