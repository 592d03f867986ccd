//! A blocking controller on the model: std threads and channels, no
//! runtime.
//!
//! One thread reads the engine's stdout: it feeds each event to the
//! [`Conversation`] and sends it to the call waiting on the command it
//! answers or the turn it belongs to; what no call waits on goes to the
//! notices. Callers write under one lock, so the model sees the commands in
//! the order they cross; the state lock is never held across I/O, so the
//! reader never waits on a writer whose pipe is full.

use super::model::{Attribution, Conversation, Owed};
use crate::revision::sealed::FromRead;
use crate::v2::event::EventLine;
use crate::v2::EventLineError;
use crate::v2::{
    Command, CommandErrorCause, CommandReader, Content, Event, EventReadError, JobRecord,
    JobStopOutcome, PredictionOutcome, Refusal, SteerKind, Usage, DEFAULT_MAX_LINE_LEN,
};
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::io::{self, BufReader, Read, Write};
use std::process::{self, Child, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

/// How much of the end of an engine's stderr a [`Stopped`] keeps.
pub const STDERR_TAIL: usize = 4096;

/// How many notices wait to be read before the oldest is dropped.
pub const MAX_NOTICES: usize = 4096;

/// How long, once the engine's stdout has closed, the controller waits for
/// its exit status and the rest of its stderr.
pub(super) const GRACE: Duration = Duration::from_secs(2);

/// An `openseek serve` engine driven over its stdin and stdout, with
/// [`Conversation`]'s rules: every call returns what answers its command.
///
/// - [`Controller::prompt`] returns a [`TurnHandle`]: the turn's typed
///   events in order, its `approval_requested` questions for the caller to
///   answer, and at its end a [`Turn`] (the answer, the abort reason or the
///   failure, and its usage).
/// - [`Controller::steer`], [`jobs_snapshot`](Controller::jobs_snapshot),
///   [`job_stop`](Controller::job_stop), [`predict`](Controller::predict),
///   [`goal`](Controller::goal) and [`compact`](Controller::compact) block
///   until their answer; request ids are minted (`ctl-1`, `ctl-2`, ...).
///   [`Controller::request`] sends any command as built (the caller's own
///   request ids, a tagged steer) and returns its [`Reply`].
/// - A command `openseek serve` declines ([`Command::serve_refusal`]) is
///   refused before it is written ([`ControllerError::Declined`]); a
///   `command_error` that answers a command is that command's
///   [`ControllerError::Refused`].
/// - Events no call waits for (`session_started`, `job_changed`, an auto
///   goal's turns, events that fit no rule, with the reason) are
///   [notices](Controller::notices).
/// - When the engine stops (its stdout closes, or reading it fails), every
///   call still waiting fails with [`ControllerError::Stopped`]: the exit
///   status, the end of its stderr, what was still owed.
///
/// Calls take `&self`: share the controller between threads (in an `Arc`)
/// to steer or cancel while another thread waits on a turn. Without a
/// [timeout](Controller::with_timeout) a call waits as long as the engine
/// runs; with one, no call waits longer than it for the engine's next line.
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
    timeout: Option<Duration>,
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
    /// Request ids minted so far.
    minted: AtomicU64,
}

/// What the reader and the callers share: the model, the calls waiting,
/// the notices, and how the engine stopped.
pub(super) struct State<D> {
    pub(super) conversation: Conversation,
    /// The calls waiting, by the command line they wait on.
    pub(super) waiters: HashMap<u64, Waiter<D>>,
    /// The `compact` whose compaction runs, whatever answers its end.
    compacting: Option<u64>,
    pub(super) notices: VecDeque<Notice>,
    pub(super) notices_dropped: u64,
    /// The engine reads no more commands: after this command line.
    pub(super) stopped_reading: Option<u64>,
    /// A write to the engine's stdin failed (or the controller closed it).
    pub(super) write_failed: Option<Arc<io::Error>>,
    pub(super) stopped: Option<Arc<Stopped>>,
    /// Calls whose answer came but did not decode: each fails with it.
    pub(super) unreadable: HashMap<u64, Arc<Unreadable>>,
}

/// A command line written, and the channel of what answers it when a call
/// waits on it.
type Sent = (u64, Option<Receiver<Answer>>);

/// An event for a waiting call, with what the model made of it.
pub(super) type Answer = (Event, Attribution);

/// The sending end of a waiting call's channel: std's for the blocking
/// controller, tokio's for the async one.
pub(super) trait Deliver {
    /// Whether the call still waits (its receiver is alive).
    fn deliver(&self, answer: Answer) -> bool;
}

impl Deliver for Sender<Answer> {
    fn deliver(&self, answer: Answer) -> bool {
        self.send(answer).is_ok()
    }
}

/// A call waiting: for the events answering its command, and for a prompt
/// also its turn's events.
pub(super) struct Waiter<D> {
    pub(super) tx: D,
    pub(super) turn: bool,
}

/// An engine line that no call waited for: an event that answers no
/// command a call waits on and belongs to no turn one waits on (with its
/// [`violation`](Attribution::violation) when it fits no rule), or a line
/// that is not an event.
#[derive(Debug)]
#[non_exhaustive]
pub struct Notice {
    /// What the model made of the line.
    pub attribution: Attribution,
    /// The event; `None` for a line that is not one.
    pub event: Option<Event>,
    /// Why the line is not an event, when it is not.
    pub error: Option<EventReadError>,
}

/// How the engine stopped, for every call still waiting then.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Stopped {
    /// Its exit status; `None` for an engine [attached](Controller::attach)
    /// to, or one still running two seconds after its stdout closed.
    pub status: Option<ExitStatus>,
    /// The last [`STDERR_TAIL`] bytes of its stderr (lossy UTF-8); empty
    /// for an attached engine.
    pub stderr: String,
    /// Why reading its stdout ended: `None` when it closed, the error when
    /// a read failed.
    pub read_error: Option<String>,
    /// The command line after which the engine read no more commands, if it
    /// said so (`command_error` `command stream: ...`).
    pub stopped_reading: Option<u64>,
    /// What the engine still owed when it stopped.
    pub owed: Owed,
}

/// An answer that came but does not decode: the line names an event and
/// carries what says which command it answers (its `request_id`, its turn),
/// but is not that event (a field missing, a value of the wrong type).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Unreadable {
    /// The command line it answers (for a turn's event, the prompt's).
    pub command: u64,
    /// Its number among the engine's stdout lines, from 1.
    pub line: u64,
    /// The event it names.
    pub event: String,
    /// Why it is not that event.
    pub error: EventLineError,
}

impl fmt::Display for Unreadable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the engine's answer to command line {} is unreadable: its event line {} ({}) does not decode: {}",
            self.command, self.line, self.event, self.error
        )
    }
}

impl std::error::Error for Unreadable {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

/// Why a call failed.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum ControllerError {
    /// Not written: `openseek serve` declines the command
    /// ([`Command::serve_refusal`]).
    Declined(Refusal),
    /// Not written: the line is longer than the engine reads
    /// ([`DEFAULT_MAX_LINE_LEN`]); the engine would stop reading at it.
    TooLong {
        /// The line's length, its LF excluded.
        len: usize,
    },
    /// Not written: the line holds an LF before its end, so it is more
    /// than one line ([`Controller::send_line`]).
    NotOneLine,
    /// Not written: the engine reads no more commands, after the command
    /// line `after` (which was not JSON).
    StoppedReading {
        /// The last command line it read.
        after: u64,
    },
    /// Writing to the engine's stdin failed (it closed it), or the
    /// controller had closed it.
    WriteFailed(Arc<io::Error>),
    /// The engine answered the command line `command` with `command_error`.
    Refused {
        /// The command line refused.
        command: u64,
        /// Why, as the engine said it.
        cause: CommandErrorCause,
    },
    /// The engine stopped before answering.
    Stopped(Arc<Stopped>),
    /// The engine answered, but with a line that does not decode: the call
    /// fails with it at once rather than wait for another answer.
    Unreadable(Arc<Unreadable>),
    /// The engine wrote nothing for the call within the controller's
    /// timeout.
    Timeout {
        /// The command line waited on; `None` for [`Controller::close`].
        command: Option<u64>,
        /// The timeout.
        after: Duration,
    },
    /// A turn asked a question that [`TurnHandle::wait`] cannot answer:
    /// answer it with [`TurnHandle::wait_with`] or the handle's
    /// [`allow`](TurnHandle::allow) and [`reject`](TurnHandle::reject).
    Unanswered(Approval),
    /// The command is not of the kind the call sends.
    WrongCommand {
        /// What the call sends.
        expected: &'static str,
        /// The command's name.
        got: &'static str,
    },
}

impl fmt::Display for ControllerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ControllerError::Declined(refusal) => {
                write!(f, "not sent: openseek serve declines it ({refusal})")
            }
            ControllerError::TooLong { len } => write!(
                f,
                "not sent: the line is {len} bytes, longer than the engine reads ({DEFAULT_MAX_LINE_LEN})"
            ),
            ControllerError::NotOneLine => f.write_str("not sent: the line holds an LF"),
            ControllerError::StoppedReading { after } => write!(
                f,
                "not sent: the engine reads no more commands after command line {after}"
            ),
            ControllerError::WriteFailed(e) => write!(f, "writing to the engine failed: {e}"),
            ControllerError::Refused { command, cause } => {
                write!(f, "the engine refused command line {command}: {cause}")
            }
            ControllerError::Stopped(stopped) => stopped.fmt(f),
            ControllerError::Unreadable(unreadable) => unreadable.fmt(f),
            ControllerError::Timeout {
                command: Some(n),
                after,
            } => write!(
                f,
                "no answer to command line {n} within {}",
                Secs(*after)
            ),
            ControllerError::Timeout {
                command: None,
                after,
            } => write!(f, "the engine did not stop within {}", Secs(*after)),
            ControllerError::Unanswered(approval) => write!(
                f,
                "the turn asks approval {:?} ({}: {}), which nobody answers",
                approval.id, approval.tool_name, approval.detail
            ),
            ControllerError::WrongCommand { expected, got } => {
                write!(f, "expected a {expected} command, got {got}")
            }
        }
    }
}

impl std::error::Error for ControllerError {
    /// The underlying cause, where there is one: the failed write's
    /// `io::Error`, or why an answer does not decode.
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ControllerError::WriteFailed(e) => Some(e.as_ref()),
            ControllerError::Unreadable(unreadable) => Some(&unreadable.error),
            _ => None,
        }
    }
}

struct Secs(Duration);

impl fmt::Display for Secs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.3}s", self.0.as_secs_f64())
    }
}

impl fmt::Display for Stopped {
    /// `the engine stopped (exit status: 3) before answering; stderr ends: ...`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the engine stopped")?;
        match (&self.status, &self.read_error) {
            (Some(status), _) => write!(f, " ({status})")?,
            (None, Some(error)) => write!(f, " (reading its stdout failed: {error})")?,
            (None, None) => f.write_str(" (its stdout closed)")?,
        }
        f.write_str(" before answering")?;
        let tail = self.stderr.trim_end();
        if !tail.is_empty() {
            write!(f, "; stderr ends: {tail}")?;
        }
        Ok(())
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
    /// The command line that started it.
    pub command: u64,
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
    /// `steer_applied`; `turn`: the command line of the turn a prompt
    /// steer landed in.
    Applied {
        /// The turn it landed in.
        turn: Option<u64>,
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

/// What answers a command sent with [`Controller::request`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reply {
    /// `jobs_snapshot`'s records.
    Jobs(Vec<JobRecord>),
    /// `job_stop`'s outcome.
    JobStop(JobStopOutcome),
    /// `predict`'s outcome.
    Prediction(PredictionOutcome),
    /// A steer's.
    Steer(Steered),
    /// A `goal` command's: the goal the engine now holds (`None`: cleared).
    Goal(Option<String>),
    /// A `compact`'s.
    Compaction(Compaction),
    /// `cancel`, `approval` and `cancel_prediction` have no answer of their
    /// own (what a cancel hits ends `agent_aborted` in its turn, an
    /// approval settles in its turn, a cancelled prediction answers through
    /// its `predict`): written, as command line `n`.
    Written(u64),
}

pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The error of a write after the controller closed the engine's stdin.
pub(super) fn closed() -> ControllerError {
    ControllerError::WriteFailed(Arc::new(io::Error::new(
        io::ErrorKind::BrokenPipe,
        "the controller closed the engine's stdin",
    )))
}

/// The error of a call whose channel closed: the engine stopped.
pub(super) fn stopped_error<D: Deliver>(state: &State<D>) -> ControllerError {
    match &state.stopped {
        Some(stopped) => ControllerError::Stopped(Arc::clone(stopped)),
        None => ControllerError::Stopped(Arc::new(state.stopped_now(None, String::new(), None))),
    }
}

/// A `command_error` is the error of the call it answers.
pub(super) fn refused(n: u64, answer: Answer) -> Result<Answer, ControllerError> {
    match answer.0.command_error_cause() {
        Some(cause) => Err(ControllerError::Refused { command: n, cause }),
        None => Ok(answer),
    }
}

/// `command`'s line, unless serve declines it or it is longer than the
/// engine reads.
pub(super) fn line_of(command: &Command) -> Result<String, ControllerError> {
    if let Some(message) = command.serve_refusal() {
        if let Some(refusal) = Refusal::of(message) {
            return Err(ControllerError::Declined(refusal));
        }
    }
    let line = command.to_line();
    let len = line.len() - 1;
    if len > DEFAULT_MAX_LINE_LEN {
        return Err(ControllerError::TooLong { len });
    }
    Ok(line)
}

/// A raw line for [`Controller::send_line`], LF ended: whether the engine
/// refuses it, and whether it reads no command after it.
pub(super) fn raw_line(line: &[u8]) -> Result<(Vec<u8>, bool, bool), ControllerError> {
    let body = line.strip_suffix(b"\n").unwrap_or(line);
    if memchr::memchr(b'\n', body).is_some() {
        return Err(ControllerError::NotOneLine);
    }
    let mut owned = body.to_vec();
    owned.push(b'\n');
    let (refused, ends_reading) = match CommandReader::new(&owned[..]).next() {
        Some(Err(e)) => (true, e.is_stream_error()),
        Some(Ok(command)) => (command.serve_refusal().is_some(), false),
        None => (false, false),
    };
    Ok((owned, refused, ends_reading))
}

/// The commands [`Controller::request`] sends and waits on nothing for.
pub(super) fn unanswered_kind(command: &Command) -> Result<bool, ControllerError> {
    match command {
        Command::Prompt { .. } => Err(ControllerError::WrongCommand {
            expected: "non-prompt",
            got: "prompt",
        }),
        Command::Cancel | Command::ApprovalDecision { .. } | Command::CancelPrediction { .. } => {
            Ok(true)
        }
        _ => Ok(false),
    }
}

/// The reply an event makes to a request; `None` for one that does not
/// end it (`compaction_started`).
pub(super) fn reply_of((event, attribution): Answer) -> Option<Reply> {
    Some(match event {
        Event::JobsSnapshot { jobs, .. } => Reply::Jobs(jobs),
        Event::JobStopResult { outcome, .. } => Reply::JobStop(outcome),
        Event::PredictionResult { outcome, .. } => Reply::Prediction(outcome),
        Event::SteerApplied { .. } => Reply::Steer(Steered::Applied {
            turn: attribution.turn,
        }),
        Event::SteerDropped { .. } => Reply::Steer(Steered::Dropped),
        Event::GoalUpdated { goal } => Reply::Goal(goal),
        Event::CompactionFinished {
            from_sequence,
            to_sequence,
            summary,
        } => Reply::Compaction(Compaction::Finished {
            from_sequence,
            to_sequence,
            summary,
        }),
        Event::CompactionFailed { error } => Reply::Compaction(Compaction::Failed(error)),
        _ => return None,
    })
}

/// How many blank lines a reader skipped before its item, from its line
/// number before (`seen`) and after (`now`).
pub(super) fn blanks<T>(seen: u64, now: u64, item: Option<&Result<T, EventReadError>>) -> u64 {
    let is_line = matches!(
        item,
        Some(
            Ok(_)
                | Err(EventReadError::NotJson { .. }
                    | EventReadError::NotAnEvent { .. }
                    | EventReadError::TooLong { .. })
        )
    );
    now.saturating_sub(seen).saturating_sub(u64::from(is_line))
}

/// A turn's events as they come: what [`Turn`] is made of.
#[derive(Debug)]
pub(super) struct TurnLog {
    pub(super) command: u64,
    events: Vec<Event>,
    usage: Option<Usage>,
    /// Every question the turn asked.
    pub(super) asked: Vec<Approval>,
    /// The ids the controller answered.
    pub(super) answered: Vec<String>,
    pub(super) end: Option<TurnEnd>,
}

impl TurnLog {
    pub(super) fn new(command: u64) -> TurnLog {
        TurnLog {
            command,
            events: Vec::new(),
            usage: None,
            asked: Vec::new(),
            answered: Vec::new(),
            end: None,
        }
    }

    /// Takes the turn's next event.
    pub(super) fn take(&mut self, event: &Event) {
        match event {
            Event::ApprovalRequested {
                id,
                tool_name,
                detail,
                body,
            } => self.asked.push(Approval {
                id: id.clone(),
                tool_name: tool_name.clone(),
                detail: detail.clone(),
                body: body.clone(),
            }),
            Event::Usage { usage } => self.usage = Some(*usage),
            Event::AgentFinished { answer } => self.end = Some(TurnEnd::Finished(answer.clone())),
            Event::AgentAborted { reason } => self.end = Some(TurnEnd::Aborted(reason.clone())),
            Event::TurnFailed { error } => self.end = Some(TurnEnd::Failed(error.clone())),
            _ => {}
        }
        self.events.push(event.clone());
    }

    /// The next question asked from `*i` on that the controller has not
    /// answered.
    pub(super) fn next_open(&self, i: &mut usize) -> Option<Approval> {
        while let Some(approval) = self.asked.get(*i) {
            *i += 1;
            if !self.answered.contains(&approval.id) {
                return Some(approval.clone());
            }
        }
        None
    }

    /// The turn, once it has ended.
    pub(super) fn into_turn(self) -> Turn {
        let unanswered = self
            .asked
            .iter()
            .filter(|a| !self.answered.contains(&a.id))
            .cloned()
            .collect();
        Turn {
            command: self.command,
            events: self.events,
            end: self.end.unwrap_or(TurnEnd::Failed(String::new())),
            usage: self.usage,
            unanswered,
        }
    }
}

impl Controller {
    /// Spawns `command` as the engine, its stdin, stdout and stderr piped
    /// to the controller (the end of its stderr goes into [`Stopped`]).
    ///
    /// # Errors
    ///
    /// The spawn's.
    pub fn spawn(command: &mut process::Command) -> io::Result<Controller> {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(io::Error::other("the engine's pipes were not set up"));
        };
        let tail = Arc::new(Mutex::new(Vec::new()));
        let (done, stderr_done) = mpsc::channel::<()>();
        let kept = Arc::clone(&tail);
        thread::Builder::new()
            .name("serve-command stderr".into())
            .spawn(move || keep_tail(stderr, &kept, done))?;
        Ok(Controller::start(
            Box::new(stdin),
            stdout,
            Some(child),
            Some((tail, stderr_done)),
        ))
    }

    /// Drives an engine over any reader of its stdout and writer of its
    /// stdin: a socket, pipes, or the workbench's `MockEngine` (feature
    /// `workbench`) in a thread. No exit status or stderr: [`Stopped`] has
    /// none.
    pub fn attach(
        reader: impl Read + Send + 'static,
        writer: impl Write + Send + 'static,
    ) -> Controller {
        Controller::start(Box::new(writer), reader, None, None)
    }

    fn start(
        writer: Box<dyn Write + Send>,
        reader: impl Read + Send + 'static,
        child: Option<Child>,
        stderr: Option<StderrTail>,
    ) -> Controller {
        let inner = Arc::new(Inner {
            writer: Mutex::new(Some(writer)),
            state: Mutex::new(State::new()),
            changed: Condvar::new(),
            child: Mutex::new(child),
            minted: AtomicU64::new(0),
        });
        let shared = Arc::clone(&inner);
        // Without the thread nothing is read, so every call would wait for
        // nothing: let the engine be stopped at once instead.
        if let Err(e) = thread::Builder::new()
            .name("serve-command events".into())
            .spawn(move || read_events(&shared, reader, stderr))
        {
            inner.stop(None, String::new(), Some(e.to_string()));
        }
        Controller {
            inner,
            timeout: None,
        }
    }

    /// The controller with every call bounded: none waits longer than
    /// `timeout` for the engine's next line it needs
    /// ([`ControllerError::Timeout`]). Writing is not bounded: an engine
    /// that stops reading its stdin without exiting holds a call writing
    /// more than its pipe buffers (64 KiB on Linux) until it exits.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Controller {
        self.timeout = Some(timeout);
        self
    }

    /// Sends a `prompt` of `content` (text, an image, parts); its turn is on
    /// the handle.
    ///
    /// # Errors
    ///
    /// Not written ([`ControllerError`]'s `Declined`, `TooLong`,
    /// `StoppedReading`, `WriteFailed`), or the engine had stopped.
    pub fn prompt(&self, content: impl Into<Content>) -> Result<TurnHandle, ControllerError> {
        self.submit(Command::prompt(content))
    }

    /// Sends `prompt`, a [`Command::Prompt`] as built (tagged, say).
    ///
    /// # Errors
    ///
    /// As [`Controller::prompt`]; [`ControllerError::WrongCommand`] for
    /// another command.
    pub fn submit(&self, prompt: Command) -> Result<TurnHandle, ControllerError> {
        if !matches!(prompt, Command::Prompt { .. }) {
            return Err(ControllerError::WrongCommand {
                expected: "prompt",
                got: prompt.name(),
            });
        }
        let (command, rx) = self.inner.send(&prompt, Some(true))?;
        Ok(TurnHandle {
            inner: Arc::clone(&self.inner),
            rx: rx.unwrap_or_else(|| mpsc::channel().1),
            timeout: self.timeout,
            log: TurnLog::new(command),
        })
    }

    /// Sends any command but a prompt, as built, and waits for what answers
    /// it (at once for a command with no answer of its own: [`Reply::Written`]).
    ///
    /// # Errors
    ///
    /// Not written, [`Refused`](ControllerError::Refused) by the engine,
    /// [`Stopped`](ControllerError::Stopped) or
    /// [`Timeout`](ControllerError::Timeout) before the answer;
    /// [`WrongCommand`](ControllerError::WrongCommand) for a prompt.
    pub fn request(&self, command: Command) -> Result<Reply, ControllerError> {
        if unanswered_kind(&command)? {
            return Ok(Reply::Written(self.inner.send(&command, None)?.0));
        }
        let (n, rx) = self.inner.send(&command, Some(false))?;
        let rx = rx.unwrap_or_else(|| mpsc::channel().1);
        loop {
            // `compaction_started` is no reply: the end follows.
            if let Some(reply) = reply_of(self.inner.recv(&rx, n, self.timeout)?) {
                return Ok(reply);
            }
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
        match self.request(Command::steer(kind, content))? {
            Reply::Steer(steered) => Ok(steered),
            other => Err(mismatch("steer", &other)),
        }
    }

    /// `jobs_snapshot`, with a minted request id: every background job.
    ///
    /// # Errors
    ///
    /// As [`Controller::request`].
    pub fn jobs_snapshot(&self) -> Result<Vec<JobRecord>, ControllerError> {
        match self.request(Command::jobs_snapshot(self.mint()))? {
            Reply::Jobs(jobs) => Ok(jobs),
            other => Err(mismatch("jobs_snapshot", &other)),
        }
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
        match self.request(Command::job_stop(self.mint(), generation, job_id))? {
            Reply::JobStop(outcome) => Ok(outcome),
            other => Err(mismatch("job_stop", &other)),
        }
    }

    /// `predict` from event `source_sequence`, with a minted request id.
    ///
    /// # Errors
    ///
    /// As [`Controller::request`].
    pub fn predict(&self, source_sequence: i32) -> Result<PredictionOutcome, ControllerError> {
        match self.request(Command::predict(self.mint(), source_sequence))? {
            Reply::Prediction(outcome) => Ok(outcome),
            other => Err(mismatch("predict", &other)),
        }
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
        if !matches!(goal, Command::GoalSet { .. } | Command::GoalClear) {
            return Err(ControllerError::WrongCommand {
                expected: "goal",
                got: goal.name(),
            });
        }
        match self.request(goal)? {
            Reply::Goal(goal) => Ok(goal),
            other => Err(mismatch("goal", &other)),
        }
    }

    /// `compact`, queued behind the work before it: how it came out.
    ///
    /// # Errors
    ///
    /// As [`Controller::request`].
    pub fn compact(&self) -> Result<Compaction, ControllerError> {
        match self.request(Command::Compact)? {
            Reply::Compaction(compaction) => Ok(compaction),
            other => Err(mismatch("compact", &other)),
        }
    }

    /// `cancel`: the running turn ends `agent_aborted` (on its handle), a
    /// running compaction fails. Returns its command line.
    ///
    /// # Errors
    ///
    /// Not written.
    pub fn cancel(&self) -> Result<u64, ControllerError> {
        Ok(self.inner.send(&Command::Cancel, None)?.0)
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
        let (n, rx) = self
            .inner
            .write(&owned, refused.then_some(false), ends_reading)?;
        let Some(rx) = rx else { return Ok(None) };
        match self.inner.recv(&rx, n, self.timeout) {
            Err(ControllerError::Refused { cause, .. }) => Ok(Some(cause)),
            Err(other) => Err(other),
            // Only a `command_error` answers a refused line.
            Ok(_) => Ok(None),
        }
    }

    /// Takes the notices that arrived: events no call waited for, lines
    /// that are not events.
    #[must_use]
    pub fn notices(&self) -> Vec<Notice> {
        lock(&self.inner.state).notices.drain(..).collect()
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

    /// How many notices were dropped, oldest first, because
    /// [`MAX_NOTICES`] waited unread.
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

    /// Closes the engine's stdin (it finishes its work and exits, as
    /// `openseek serve` does) and waits until its stdout closes; returns
    /// its exit status (`None` for an attached engine).
    ///
    /// # Errors
    ///
    /// [`ControllerError::Timeout`] when it did not stop within the
    /// timeout; the engine is then killed.
    pub fn close(self) -> Result<Option<ExitStatus>, ControllerError> {
        *lock(&self.inner.writer) = None;
        let deadline = self.timeout.map(|t| Instant::now() + t);
        let mut state = lock(&self.inner.state);
        loop {
            if let Some(stopped) = &state.stopped {
                return Ok(stopped.status);
            }
            state = match deadline {
                None => self
                    .inner
                    .changed
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner),
                Some(deadline) => {
                    let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                        return Err(ControllerError::Timeout {
                            command: None,
                            after: self.timeout.unwrap_or_default(),
                        });
                    };
                    self.inner
                        .changed
                        .wait_timeout(state, left)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0
                }
            };
        }
    }

    /// A request id no other call of this controller uses.
    fn mint(&self) -> String {
        format!(
            "ctl-{}",
            self.inner.minted.fetch_add(1, Ordering::Relaxed) + 1
        )
    }
}

impl Drop for Controller {
    /// Closes the engine's stdin and kills an engine the controller spawned
    /// that still runs: [`Controller::close`] lets it finish.
    fn drop(&mut self) {
        *lock(&self.inner.writer) = None;
        if let Some(child) = lock(&self.inner.child).as_mut() {
            if let Ok(None) = child.try_wait() {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }
}

impl fmt::Debug for Controller {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Controller")
            .field("timeout", &self.timeout)
            .field("owed", &self.owed())
            .finish_non_exhaustive()
    }
}

/// An answer that does not fit the call: the model attributes only events
/// of the command's kind to it, so this is a bug, reported rather than a
/// panic.
pub(super) fn mismatch(call: &'static str, reply: &Reply) -> ControllerError {
    ControllerError::WrongCommand {
        expected: call,
        got: match reply {
            Reply::Jobs(_) => "jobs_snapshot",
            Reply::JobStop(_) => "job_stop",
            Reply::Prediction(_) => "predict",
            Reply::Steer(_) => "steer",
            Reply::Goal(_) => "goal",
            Reply::Compaction(_) => "compact",
            Reply::Written(_) => "cancel",
        },
    }
}

impl Inner {
    /// Encodes and writes `command`, refusing first what serve declines or
    /// cannot read.
    fn send(&self, command: &Command, waiter: Option<bool>) -> Result<Sent, ControllerError> {
        self.write(line_of(command)?.as_bytes(), waiter, false)
    }

    /// Writes one line, LF included: fed to the model and its waiter
    /// registered (`Some(turn)`) before it is written, under the writer's
    /// lock, so the model sees the lines in wire order and an answer never
    /// arrives before its command. `ends_reading`: the engine reads no
    /// command after it.
    fn write(
        &self,
        line: &[u8],
        waiter: Option<bool>,
        ends_reading: bool,
    ) -> Result<Sent, ControllerError> {
        let mut writer = lock(&self.writer);
        let (n, rx) = {
            let mut state = lock(&self.state);
            state.writable()?;
            if writer.is_none() {
                return Err(closed());
            }
            let n = state.conversation.command(line);
            let rx = waiter.map(|turn| {
                let (tx, rx) = mpsc::channel();
                state.waiters.insert(n, Waiter { tx, turn });
                rx
            });
            if ends_reading {
                state.stopped_reading = Some(n);
            }
            (n, rx)
        };
        let result = match writer.as_mut() {
            Some(w) => w.write_all(line).and_then(|()| w.flush()),
            None => Ok(()),
        };
        let Err(error) = result else {
            return Ok((n, rx));
        };
        *writer = None;
        drop(writer);
        let error = Arc::new(error);
        let mut state = lock(&self.state);
        state.waiters.remove(&n);
        state.write_failed = Some(Arc::clone(&error));
        // The engine has most likely exited: its status says more than the
        // broken pipe, if the reader sees it stop soon.
        let deadline = Instant::now() + GRACE;
        loop {
            if let Some(stopped) = &state.stopped {
                return Err(ControllerError::Stopped(Arc::clone(stopped)));
            }
            let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                return Err(ControllerError::WriteFailed(error));
            };
            state = self
                .changed
                .wait_timeout(state, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// The next event for the call waiting on command line `n`; a
    /// `command_error` is the call's error.
    fn recv(
        &self,
        rx: &Receiver<(Event, Attribution)>,
        n: u64,
        timeout: Option<Duration>,
    ) -> Result<(Event, Attribution), ControllerError> {
        let got = match timeout {
            Some(after) => rx.recv_timeout(after).map_err(|e| match e {
                RecvTimeoutError::Timeout => ControllerError::Timeout {
                    command: Some(n),
                    after,
                },
                RecvTimeoutError::Disconnected => self.ended_error(n),
            }),
            None => rx.recv().map_err(|_| self.ended_error(n)),
        };
        refused(n, got?)
    }

    /// Why the call waiting on command line `n` lost its channel: its
    /// answer did not decode, or the engine stopped.
    fn ended_error(&self, n: u64) -> ControllerError {
        let state = lock(&self.state);
        match state.unreadable.get(&n) {
            Some(unreadable) => ControllerError::Unreadable(Arc::clone(unreadable)),
            None => stopped_error(&state),
        }
    }

    /// The engine stopped: every call still waiting fails with this.
    fn stop(&self, status: Option<ExitStatus>, stderr: String, read_error: Option<String>) {
        lock(&self.state).stop(status, stderr, read_error);
        self.changed.notify_all();
    }

    /// The exit status of a spawned engine, if it exits before `deadline`.
    fn exit_status(&self, deadline: Instant) -> Option<ExitStatus> {
        loop {
            match lock(&self.child).as_mut()?.try_wait() {
                Ok(Some(status)) => return Some(status),
                Ok(None) => {}
                Err(_) => return None,
            }
            if Instant::now() >= deadline {
                return None;
            }
            thread::sleep(Duration::from_millis(5));
        }
    }
}

impl<D: Deliver> State<D> {
    pub(super) fn new() -> State<D> {
        State {
            conversation: Conversation::new(),
            waiters: HashMap::new(),
            compacting: None,
            notices: VecDeque::new(),
            notices_dropped: 0,
            stopped_reading: None,
            write_failed: None,
            stopped: None,
            unreadable: HashMap::new(),
        }
    }

    /// Whether a line may be written now.
    pub(super) fn writable(&self) -> Result<(), ControllerError> {
        if let Some(after) = self.stopped_reading {
            return Err(ControllerError::StoppedReading { after });
        }
        if let Some(stopped) = &self.stopped {
            return Err(ControllerError::Stopped(Arc::clone(stopped)));
        }
        if let Some(e) = &self.write_failed {
            return Err(ControllerError::WriteFailed(Arc::clone(e)));
        }
        Ok(())
    }

    /// One item of the engine's stdout, after the `blanks` blank lines the
    /// reader skipped before it (the model counts them, as the tap numbers
    /// lines).
    pub(super) fn line(&mut self, blanks: u64, item: Result<EventLine, EventReadError>, n: u64) {
        for _ in 0..blanks {
            self.conversation.decoded(None);
        }
        match item {
            Ok(EventLine(Ok(event))) => self.route(event),
            Ok(EventLine(Err((error, line)))) => {
                let attribution = self.conversation.unreadable(&line);
                self.unreadable_line(attribution, error, n);
            }
            Err(error) => {
                let attribution = self.conversation.decoded(None);
                self.notice(Notice {
                    attribution,
                    event: None,
                    error: Some(error),
                });
            }
        }
    }

    /// A line that names an event but is not one: the call waiting on
    /// what the model says it answers (or on its turn) fails with it;
    /// otherwise it is a notice.
    fn unreadable_line(&mut self, attribution: Attribution, error: EventLineError, n: u64) {
        let waiting = [attribution.answers, attribution.turn]
            .into_iter()
            .flatten()
            .find(|k| self.waiters.contains_key(k));
        let (Some(k), Some(name)) = (waiting, attribution.unreadable.clone()) else {
            self.notice(Notice {
                attribution,
                event: None,
                error: Some(<EventReadError as FromRead<EventLineError>>::line(n, error)),
            });
            return;
        };
        let unreadable = Unreadable {
            command: k,
            line: attribution.n,
            event: name,
            error,
        };
        self.unreadable.insert(k, Arc::new(unreadable));
        // Dropping its sender wakes the call, which finds why here.
        self.waiters.remove(&k);
    }

    /// The engine stopped: every call still waiting fails with this (its
    /// receiver sees the channel close, and reads `stopped`).
    pub(super) fn stop(
        &mut self,
        status: Option<ExitStatus>,
        stderr: String,
        read_error: Option<String>,
    ) {
        let stopped = self.stopped_now(status, stderr, read_error);
        self.stopped = Some(Arc::new(stopped));
        self.waiters.clear();
    }

    /// How the engine stands now, as a stop.
    pub(super) fn stopped_now(
        &self,
        status: Option<ExitStatus>,
        stderr: String,
        read_error: Option<String>,
    ) -> Stopped {
        Stopped {
            status,
            stderr,
            read_error,
            stopped_reading: self.stopped_reading,
            owed: self.conversation.owed(),
        }
    }

    /// Attributes `event` and hands it to the calls waiting on what it
    /// answers and the turn it belongs to, or to the notices.
    fn route(&mut self, event: Event) {
        let attribution = self.conversation.decoded(Some(&event));
        if let Some(cause) = event.command_error_cause() {
            if cause.engine_stopped() {
                self.stopped_reading = self.stopped_reading.or(attribution.answers);
            }
        }
        let mut targets: [Option<(u64, bool, bool)>; 3] = [None; 3];
        // (command line, the call's last event, deliver to a turn only)
        if let Some(k) = attribution.answers {
            let started = matches!(event, Event::CompactionStarted { .. });
            if started {
                self.compacting = Some(k);
            }
            targets[0] = Some((k, !started, false));
        }
        if matches!(
            event,
            Event::CompactionFinished { .. } | Event::CompactionFailed { .. }
        ) {
            // A compaction a cancel stopped answers the cancel; its
            // `compact` call waits for its end all the same.
            targets[1] = self.compacting.take().map(|k| (k, true, false));
        }
        if let Some(t) = attribution.turn {
            let ends = matches!(
                event,
                Event::AgentFinished { .. } | Event::AgentAborted { .. } | Event::TurnFailed { .. }
            );
            targets[2] = Some((t, ends, true));
        }
        let mut delivered = false;
        for (i, target) in targets.iter().enumerate() {
            let Some((k, last, turn_only)) = *target else {
                continue;
            };
            if targets[..i].iter().flatten().any(|&(j, ..)| j == k) {
                continue;
            }
            let Some(waiter) = self.waiters.get(&k) else {
                continue;
            };
            if turn_only && !waiter.turn {
                continue;
            }
            let sent = waiter.tx.deliver((event.clone(), attribution.clone()));
            delivered |= sent;
            if last || !sent {
                self.waiters.remove(&k);
            }
        }
        if !delivered {
            self.notice(Notice {
                attribution,
                event: Some(event),
                error: None,
            });
        }
    }

    fn notice(&mut self, notice: Notice) {
        if self.notices.len() == MAX_NOTICES {
            self.notices.pop_front();
            self.notices_dropped += 1;
        }
        self.notices.push_back(notice);
    }
}

/// The end of a spawned engine's stderr, and the channel that closes when
/// it has been read to its end.
type StderrTail = (Arc<Mutex<Vec<u8>>>, Receiver<()>);

/// Reads `stderr` to its end, keeping its last [`STDERR_TAIL`] bytes.
fn keep_tail(mut stderr: impl Read, tail: &Mutex<Vec<u8>>, done: Sender<()>) {
    let mut buf = [0u8; 8192];
    loop {
        match stderr.read(&mut buf) {
            Ok(0) => break,
            Ok(k) => {
                let mut tail = lock(tail);
                tail.extend_from_slice(&buf[..k]);
                let excess = tail.len().saturating_sub(STDERR_TAIL);
                tail.drain(..excess);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    drop(done);
}

/// The reader thread: every line of the engine's stdout, in order, through
/// the model to whoever waits; at its end, the engine stopped.
fn read_events(inner: &Inner, stdout: impl Read, stderr: Option<StderrTail>) {
    let mut reader = crate::wire::read::CommandReader::<_, EventLine>::new(BufReader::new(stdout));
    let mut seen = 0u64;
    let read_error = loop {
        let item = reader.next();
        let now = reader.line_number();
        let skipped = blanks(seen, now, item.as_ref());
        seen = now.max(seen);
        match item {
            None => break None,
            Some(Err(EventReadError::Io(e))) => break Some(e.to_string()),
            Some(item) => lock(&inner.state).line(skipped, item, now),
        }
        inner.changed.notify_all();
    };
    let deadline = Instant::now() + GRACE;
    let status = inner.exit_status(deadline);
    let stderr = match stderr {
        None => String::new(),
        Some((tail, done)) => {
            let left = deadline.saturating_duration_since(Instant::now());
            let _ = done.recv_timeout(left);
            let tail = lock(&tail);
            String::from_utf8_lossy(&tail).into_owned()
        }
    };
    inner.stop(status, stderr, read_error);
}

/// A prompt's turn as it runs: its events in order
/// ([`next_event`](TurnHandle::next_event)), its questions to answer
/// ([`allow`](TurnHandle::allow), [`reject`](TurnHandle::reject)), and at
/// its end the [`Turn`] ([`wait`](TurnHandle::wait),
/// [`wait_with`](TurnHandle::wait_with)).
#[derive(Debug)]
pub struct TurnHandle {
    inner: Arc<Inner>,
    rx: Receiver<Answer>,
    timeout: Option<Duration>,
    log: TurnLog,
}

impl fmt::Debug for Inner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Inner").finish_non_exhaustive()
    }
}

impl TurnHandle {
    /// The prompt's command line.
    #[must_use]
    pub fn command(&self) -> u64 {
        self.log.command
    }

    /// The turn's next event, waiting for it; `None` once the turn has
    /// ended. An `approval_requested` blocks the turn until it is answered
    /// ([`allow`](TurnHandle::allow), [`reject`](TurnHandle::reject)).
    ///
    /// # Errors
    ///
    /// The prompt [`Refused`](ControllerError::Refused), the engine
    /// [`Stopped`](ControllerError::Stopped), or a
    /// [`Timeout`](ControllerError::Timeout).
    pub fn next_event(&mut self) -> Result<Option<Event>, ControllerError> {
        if self.log.end.is_some() {
            return Ok(None);
        }
        let (event, _) = self.inner.recv(&self.rx, self.log.command, self.timeout)?;
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
        self.run(None::<fn(&Approval) -> bool>)
    }

    /// Waits for the turn's end, answering each question it asks with
    /// `decide` (`true`: allow).
    ///
    /// # Errors
    ///
    /// As [`TurnHandle::next_event`].
    pub fn wait_with(self, decide: impl FnMut(&Approval) -> bool) -> Result<Turn, ControllerError> {
        self.run(Some(decide))
    }

    fn run(
        mut self,
        mut decide: Option<impl FnMut(&Approval) -> bool>,
    ) -> Result<Turn, ControllerError> {
        // `wait_with` answers the questions asked before it (through
        // `next_event`) and left open; `wait` leaves them to the caller,
        // who saw them.
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
            if self.next_event()?.is_none() {
                return Ok(self.log.into_turn());
            }
        }
    }
}
