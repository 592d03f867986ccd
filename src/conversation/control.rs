//! The controller's state machine, with no I/O and no runtime: what each
//! line of the engine does to the calls waiting, when a call has waited
//! long enough, and how the engine stopped. The blocking controller
//! (`controller.rs`) and the tokio one (`tokio_controller.rs`) drive it and
//! differ only in how they wait.

use super::controller_error::{ControllerError, Misanswered, Stopped, Unreadable};
use super::model::{Attribution, Conversation};
use super::reply::{
    CommandLine, Compaction, EventLine, Notice, Reply, Sink, Steered, Suggestion, Waiting,
};
use super::tee::LineTee;
use crate::v2::event::EventLine as Item;
use crate::v2::{
    Command, CommandErrorCause, CommandReader, Event, EventReadError, JobRecord, JobStopOutcome,
    DEFAULT_MAX_LINE_LEN,
};
use crate::wire::message::sealed::FromRead;
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::io;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// How many notices wait to be read before the oldest is dropped.
pub const MAX_NOTICES: usize = 4096;

/// How long, once the engine's stdout has closed, the controller waits for
/// its exit status and the rest of its stderr.
pub(super) const GRACE: Duration = Duration::from_secs(2);

/// An event for a waiting call, with what the model made of it.
pub(super) type Answer = (Event, Attribution);

/// The sending end of a waiting call's channel: std's for the blocking
/// controller, tokio's for the async one.
pub(super) trait Deliver {
    /// Whether the call still waits (its receiver is alive).
    fn deliver(&self, answer: Answer) -> bool;
}

/// What starts a call's wait anew.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Clock {
    /// Only its own answer: the engine answers it at once.
    Answer,
    /// Also any event of a turn or a compaction: it waits on work, or
    /// behind work.
    Work,
}

impl Clock {
    /// The clock of a call waiting on `command`.
    pub(super) fn of(command: &Command) -> Clock {
        match command {
            // A goal is applied at the running turn's next step, or
            // behind queued work: it waits on work.
            Command::JobsSnapshot { .. } | Command::JobStop { .. } => Clock::Answer,
            _ => Clock::Work,
        }
    }
}

/// A call waiting: for the events answering its command, and for a prompt
/// also its turn's events.
pub(super) struct Waiter<D> {
    tx: D,
    turn: bool,
    clock: Clock,
    /// When it was sent, or last given an event.
    touched: Instant,
    /// Events given and not yet taken by the caller.
    unread: Arc<AtomicUsize>,
    /// Its command's name, and the events whose violation concerns it:
    /// what would have answered it.
    expects: (&'static str, &'static [&'static str]),
    /// It was given an event.
    heard: bool,
}

/// The command a line holds (its name) and the events that answer it,
/// for a call that waits on it: one of them fitting no rule while the
/// call has heard nothing is the engine answering it wrongly.
fn expects_of(line: &[u8]) -> (&'static str, &'static [&'static str]) {
    const REFUSED: &[&str] = &["command_error"];
    let Some(Ok(command)) = CommandReader::new(line).next() else {
        return ("line", REFUSED);
    };
    let events: &'static [&'static str] = match command {
        Command::Steer { .. } => &["steer_applied", "steer_dropped", "command_error"],
        Command::JobsSnapshot { .. } => &["jobs_snapshot", "command_error"],
        Command::JobStop { .. } => &["job_stop_result", "command_error"],
        Command::GoalSet { .. } | Command::GoalClear => &["goal_updated", "command_error"],
        Command::Compact => &[
            "compaction_started",
            "compaction_finished",
            "compaction_failed",
            "command_error",
        ],
        _ => REFUSED,
    };
    (command.name(), events)
}

/// A waiting call's receiver: std's or tokio's.
pub(super) trait Inbox {
    /// The next answer if one waits; `Err(true)` once the channel has
    /// closed, `Err(false)` while it is only empty.
    fn try_take(&mut self) -> Result<Answer, bool>;
}

/// What a wait does next, decided under the state lock.
pub(super) enum Step {
    /// The call ends: its answer, or its error.
    Done(Result<Answer, ControllerError>),
    /// Its channel closed: the call ends with why
    /// ([`State::ended_error`]).
    Closed,
    /// Wait this long for the next answer.
    Wait(Duration),
}

/// The caller's side of a waiting call.
pub(super) struct Call<R> {
    pub(super) command: CommandLine,
    pub(super) rx: R,
    unread: Arc<AtomicUsize>,
}

/// The command and its unread events; not the channel, whose insides
/// (tokio's show pointers) say nothing to a user.
impl<R> fmt::Debug for Call<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Call")
            .field("command", &self.command)
            .field("unread", &self.unread)
            .finish_non_exhaustive()
    }
}

impl<R> Call<R> {
    /// The caller took one event.
    pub(super) fn took(&self) {
        self.unread.fetch_sub(1, Ordering::Relaxed);
    }
}

/// What the reader and the callers share: the model, the calls waiting,
/// the notices, and how the engine stopped.
pub(super) struct State<D> {
    pub(super) conversation: Conversation,
    waiters: HashMap<u64, Waiter<D>>,
    /// The `compact` whose compaction runs, whatever answers its end.
    compacting: Option<u64>,
    pub(super) notices: VecDeque<Notice>,
    pub(super) notices_dropped: u64,
    /// The engine reads no more commands: after this command line.
    stopped_reading: Option<u64>,
    /// A write to the engine's stdin failed (or the controller closed it).
    pub(super) write_failed: Option<Arc<io::Error>>,
    pub(super) stopped: Option<Arc<Stopped>>,
    /// Calls given up while their caller was away (an answer that does not
    /// decode, events left unread): each fails with this when it looks.
    failed: HashMap<u64, ControllerError>,
    /// The last event of a turn or a compaction.
    work_seen: Instant,
    /// When the engine's stdout closed: its stop is due within [`GRACE`].
    closed_at: Option<Instant>,
    unread_bound: usize,
    recorder: Option<Box<dyn Sink>>,
    /// The engine's latest prediction, with the model's count of
    /// cancelling commands when it came: current while that count holds.
    suggestion: Option<(Suggestion, u64)>,
    /// The ids of the last [`ANSWERED_IDS`] replies that fit: a reply
    /// repeating one is a second answer, not a wrong one.
    answered_ids: VecDeque<String>,
}

/// How many answered ids are remembered.
const ANSWERED_IDS: usize = 64;

/// The `request_id` or `submission_id` a reply carries.
fn reply_id(event: &Event) -> Option<&str> {
    match event {
        Event::JobsSnapshot { request_id, .. } | Event::JobStopResult { request_id, .. } => {
            Some(request_id)
        }
        Event::SteerApplied { submission_id, .. } | Event::SteerDropped { submission_id, .. } => {
            submission_id.as_deref()
        }
        _ => None,
    }
}

impl<D: Deliver> State<D> {
    pub(super) fn new(unread_bound: usize, recorder: Option<Box<dyn Sink>>) -> State<D> {
        State {
            conversation: Conversation::new(),
            waiters: HashMap::new(),
            compacting: None,
            notices: VecDeque::new(),
            notices_dropped: 0,
            stopped_reading: None,
            write_failed: None,
            stopped: None,
            failed: HashMap::new(),
            work_seen: Instant::now(),
            closed_at: None,
            unread_bound,
            recorder,
            suggestion: None,
            answered_ids: VecDeque::new(),
        }
    }

    /// The engine's latest prediction, unless a command that cancels one
    /// upstream (a prompt, a steer, `compact`, `cancel`, a goal) was sent
    /// since.
    pub(super) fn suggestion(&self) -> Option<Suggestion> {
        self.suggestion
            .as_ref()
            .filter(|(_, count)| *count == self.conversation.cancellers())
            .map(|(suggestion, _)| suggestion.clone())
    }

    /// Takes `line` (LF ended) as written next: refused if no line may be
    /// written now, else fed to the model and the recording, with a call
    /// waiting on it when `waiter` says so (`tx`, a turn or not, its
    /// clock). Done under the lock that orders the writes, so the model
    /// sees the lines in wire order and an answer never comes before its
    /// command. `ends_reading`: the engine reads no command after it.
    pub(super) fn begin<R>(
        &mut self,
        line: &[u8],
        waiter: Option<(D, R, bool, Clock)>,
        ends_reading: bool,
    ) -> Result<(CommandLine, Option<Call<R>>), ControllerError> {
        self.writable()?;
        let n = self.conversation.command(line);
        if let Some(recorder) = &self.recorder {
            recorder.command(line);
        }
        if ends_reading {
            self.stopped_reading = Some(n);
        }
        let call = waiter.map(|(tx, rx, turn, clock)| {
            let unread = Arc::new(AtomicUsize::new(0));
            self.waiters.insert(
                n,
                Waiter {
                    tx,
                    turn,
                    clock,
                    touched: Instant::now(),
                    unread: Arc::clone(&unread),
                    expects: expects_of(line),
                    heard: false,
                },
            );
            Call {
                command: CommandLine(n),
                rx,
                unread,
            }
        });
        Ok((CommandLine(n), call))
    }

    /// Where the session is recorded, if it is.
    pub(super) fn recorder(&self) -> Option<&dyn Sink> {
        self.recorder.as_deref()
    }

    /// A line that was not written: nothing answers it.
    pub(super) fn unwritten(&mut self, n: CommandLine) {
        self.waiters.remove(&n.0);
    }

    /// Whether a line may be written now.
    pub(super) fn writable(&self) -> Result<(), ControllerError> {
        if let Some(after) = self.stopped_reading {
            return Err(ControllerError::StoppedReading {
                after: CommandLine(after),
            });
        }
        if let Some(stopped) = &self.stopped {
            return Err(ControllerError::Stopped(Arc::clone(stopped)));
        }
        if let Some(e) = &self.write_failed {
            return Err(ControllerError::WriteFailed(Arc::clone(e)));
        }
        Ok(())
    }

    /// When the call on `n` has waited long enough with `limit`: its last
    /// event (or its sending), or for work the last event of any work, plus
    /// `limit`. `None` once nothing is left to wait for (its channel holds
    /// the rest).
    fn deadline(&self, n: CommandLine, limit: Duration) -> Option<Instant> {
        let waiter = self.waiters.get(&n.0)?;
        let since = match waiter.clock {
            Clock::Answer => waiter.touched,
            Clock::Work => waiter.touched.max(self.work_seen),
        };
        // Once stdout has closed the stop is near, with its exit status:
        // the call fails with that rather than with its own limit.
        let stop_due = self.closed_at.map_or(since, |at| at + GRACE + GRACE);
        Some((since + limit).max(stop_due))
    }

    /// The engine's stdout closed: its stop follows within [`GRACE`].
    pub(super) fn stdout_closed(&mut self) {
        self.closed_at = Some(Instant::now());
    }

    /// The next step of `call`'s wait with `limit`. Events are given under
    /// the state lock the caller holds: what the channel holds now is all
    /// there is until it is let go, so the call is never given up with an
    /// answer waiting.
    pub(super) fn step<R: Inbox>(&mut self, call: &mut Call<R>, limit: Duration) -> Step {
        match call.rx.try_take() {
            Ok(answer) => {
                call.took();
                return Step::Done(refused(call.command, answer));
            }
            Err(true) => return Step::Closed,
            Err(false) => {}
        }
        let Some(deadline) = self.deadline(call.command, limit) else {
            return Step::Closed;
        };
        match deadline.checked_duration_since(Instant::now()) {
            Some(left) if !left.is_zero() => Step::Wait(left),
            _ => Step::Done(Err(self.give_up(call.command, limit))),
        }
    }

    /// The call on `n` waited `limit` in silence: it is given up (what
    /// answers it later is a notice), and fails with what it waited for.
    fn give_up(&mut self, n: CommandLine, limit: Duration) -> ControllerError {
        self.waiters.remove(&n.0);
        let owed = self.conversation.owed();
        let waiting = if owed.running == Some(n.0) {
            Waiting::Event
        } else if owed.queued.contains(&n.0) {
            Waiting::Start
        } else {
            Waiting::Answer
        };
        ControllerError::Timeout {
            command: Some(n),
            waiting,
            after: limit,
        }
    }

    /// Why the call on `n` lost its channel: it was given up (its answer
    /// did not decode, its events went unread), a write failed, or the
    /// engine stopped.
    pub(super) fn ended_error(&self, n: CommandLine) -> ControllerError {
        if let Some(error) = self.failed.get(&n.0) {
            return error.clone();
        }
        if let Some(stopped) = &self.stopped {
            return ControllerError::Stopped(Arc::clone(stopped));
        }
        match &self.write_failed {
            Some(e) => ControllerError::WriteFailed(Arc::clone(e)),
            None => ControllerError::Stopped(Arc::new(self.stopped_now(End::default()))),
        }
    }

    /// One item of the engine's stdout, after the `blanks` blank lines the
    /// reader skipped before it (the model counts them, as the tap numbers
    /// lines); `raw`: the lines as read, for the recording.
    pub(super) fn line(
        &mut self,
        blanks: u64,
        item: Result<Item, EventReadError>,
        n: u64,
        raw: &mut LineTee,
    ) {
        if let Some(recorder) = &self.recorder {
            for (line, lf) in raw.take_through(n) {
                recorder.event(&line, lf);
            }
        }
        for _ in 0..blanks {
            self.conversation.decoded(None);
        }
        match item {
            Ok(Item(Ok(event))) => self.route(event),
            Ok(Item(Err((error, line)))) => {
                let attribution = self.conversation.unreadable(&line);
                if attribution.turn.is_some() {
                    self.work_seen = Instant::now();
                }
                let waiting = [attribution.answers, attribution.turn]
                    .into_iter()
                    .flatten()
                    .find(|k| self.waiters.contains_key(k));
                match (waiting, attribution.unreadable.clone()) {
                    (Some(k), Some(event)) => {
                        let unreadable = Unreadable {
                            command: CommandLine(k),
                            line: EventLine(attribution.n),
                            event,
                            error,
                        };
                        self.fail(k, ControllerError::Unreadable(Arc::new(unreadable)));
                    }
                    _ => self.notice(Notice::NotAnEvent {
                        line: EventLine(attribution.n),
                        error: <EventReadError as FromRead<_>>::line(n, error),
                        attribution,
                    }),
                }
            }
            Err(error) => {
                let attribution = self.conversation.decoded(None);
                self.notice(Notice::NotAnEvent {
                    line: EventLine(attribution.n),
                    error,
                    attribution,
                });
            }
        }
    }

    /// Gives up the call on `k` with `error`: dropping its sender wakes it,
    /// and it finds why here.
    fn fail(&mut self, k: u64, error: ControllerError) {
        self.failed.insert(k, error);
        self.waiters.remove(&k);
    }

    /// The engine stopped: every call still waiting fails with this (its
    /// receiver sees the channel close, and reads `stopped`).
    pub(super) fn stop(&mut self, end: End) {
        if let Some(recorder) = &self.recorder {
            recorder.finish(end.status);
        }
        let stopped = self.stopped_now(end);
        self.stopped = Some(Arc::new(stopped));
        self.waiters.clear();
    }

    fn stopped_now(&self, end: End) -> Stopped {
        Stopped {
            status: end.status,
            still_running: end.still_running,
            stderr: end.stderr,
            read_error: end.read_error,
            partial_line: end.partial_line,
            stopped_reading: self.stopped_reading.map(CommandLine),
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
        if let Some(reason) = attribution.violation.clone() {
            // A second answer to a command already answered is a notice; an
            // id no answer had is a wrong answer to the call waiting.
            let repeated =
                reply_id(&event).is_some_and(|id| self.answered_ids.iter().any(|a| a == id));
            if !repeated {
                self.misanswered(event.name(), &reason, &attribution);
            }
            self.notice(Notice::Violation {
                event,
                reason,
                attribution,
            });
            return;
        }
        if let Event::PredictionResult {
            source_sequence,
            outcome,
        } = event
        {
            let suggestion = Suggestion {
                source_sequence,
                outcome,
                turn: attribution.turn.map(CommandLine),
                line: EventLine(attribution.n),
            };
            if self.conversation.prediction_current() {
                self.suggestion = Some((suggestion.clone(), self.conversation.cancellers()));
            }
            self.notice(Notice::Prediction {
                suggestion,
                attribution,
            });
            return;
        }
        if let (Some(id), Some(_)) = (reply_id(&event), attribution.answers) {
            if self.answered_ids.len() == ANSWERED_IDS {
                self.answered_ids.pop_front();
            }
            self.answered_ids.push_back(id.to_owned());
        }
        let compaction_end = matches!(
            event,
            Event::CompactionFinished { .. } | Event::CompactionFailed { .. }
        );
        if attribution.turn.is_some()
            || compaction_end
            || matches!(event, Event::CompactionStarted { .. })
        {
            self.work_seen = Instant::now();
        }
        // (command line, the call's last event, deliver to a turn only)
        let mut targets: [Option<(u64, bool, bool)>; 3] = [None; 3];
        if let Some(k) = attribution.answers {
            let started = matches!(event, Event::CompactionStarted { .. });
            if started {
                self.compacting = Some(k);
            }
            targets[0] = Some((k, !started, false));
        }
        if compaction_end {
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
            delivered |= self.deliver(k, last, turn_only, &event, &attribution);
        }
        if !delivered {
            self.notice(Notice::Event { event, attribution });
        }
    }

    /// Gives `event` to the call on `k`, if one waits for it; whether it
    /// took it.
    fn deliver(
        &mut self,
        k: u64,
        last: bool,
        turn_only: bool,
        event: &Event,
        attribution: &Attribution,
    ) -> bool {
        let Some(waiter) = self.waiters.get_mut(&k) else {
            return false;
        };
        if turn_only && !waiter.turn {
            return false;
        }
        if waiter.unread.load(Ordering::Relaxed) >= self.unread_bound {
            let bound = self.unread_bound;
            self.fail(
                k,
                ControllerError::Unread {
                    command: CommandLine(k),
                    bound,
                },
            );
            return false;
        }
        waiter.unread.fetch_add(1, Ordering::Relaxed);
        waiter.heard = true;
        let sent = waiter.tx.deliver((event.clone(), attribution.clone()));
        waiter.touched = Instant::now();
        if last || !sent {
            self.waiters.remove(&k);
        }
        sent
    }

    /// An `event` that fits no rule, for `reason`: the oldest call that
    /// has heard nothing and that such an event would have answered fails
    /// now, saying so, rather than waiting out its limit.
    fn misanswered(&mut self, event: &'static str, reason: &str, attribution: &Attribution) {
        let waiting = self
            .waiters
            .iter()
            .filter(|(_, w)| !w.heard && w.expects.1.contains(&event))
            .map(|(&k, w)| (k, w.expects.0))
            .min();
        if let Some((k, name)) = waiting {
            let misanswered = Misanswered {
                command: CommandLine(k),
                name,
                line: EventLine(attribution.n),
                event,
                reason: reason.to_owned(),
            };
            self.fail(k, ControllerError::Misanswered(Arc::new(misanswered)));
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

/// How the engine's stdout ended, as its reader saw it.
#[derive(Debug, Default)]
pub(super) struct End {
    pub(super) status: Option<ExitStatus>,
    pub(super) still_running: bool,
    pub(super) stderr: String,
    pub(super) read_error: Option<String>,
    pub(super) partial_line: Option<String>,
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

/// A `command_error` is the error of the call it answers.
pub(super) fn refused(n: CommandLine, answer: Answer) -> Result<Answer, ControllerError> {
    match answer.0.command_error_cause() {
        Some(cause) => Err(ControllerError::Refused { command: n, cause }),
        None => Ok(answer),
    }
}

/// `command`'s line, unless serve declines it or it is longer than the
/// engine reads.
pub(super) fn line_of(command: &Command) -> Result<String, ControllerError> {
    if let Some(refusal) = command.serve_refusal() {
        return Err(ControllerError::Declined(refusal));
    }
    let line = command.to_line();
    let len = line.len() - 1;
    if len > DEFAULT_MAX_LINE_LEN {
        return Err(ControllerError::TooLong { len });
    }
    Ok(line)
}

/// A raw line for `send_line`, LF ended: whether the engine refuses it,
/// and whether it reads no command after it.
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

/// What `send_line` makes of the first answer to a refused line.
pub(super) fn refusal_of(
    answer: Result<Answer, ControllerError>,
) -> Result<Option<CommandErrorCause>, ControllerError> {
    match answer {
        Err(ControllerError::Refused { cause, .. }) => Ok(Some(cause)),
        Err(other) => Err(other),
        // Only a `command_error` answers a refused line.
        Ok(_) => Ok(None),
    }
}

/// The commands `request` sends and waits on nothing for.
pub(super) fn unanswered_kind(command: &Command) -> Result<bool, ControllerError> {
    match command {
        Command::Prompt { .. } => Err(ControllerError::WrongCommand {
            expected: "non-prompt",
            got: "prompt",
        }),
        Command::Cancel | Command::ApprovalDecision { .. } => Ok(true),
        _ => Ok(false),
    }
}

/// A prompt, or the error of a call that sends one.
pub(super) fn is_prompt(command: &Command) -> Result<(), ControllerError> {
    match command {
        Command::Prompt { .. } => Ok(()),
        other => Err(ControllerError::WrongCommand {
            expected: "prompt",
            got: other.name(),
        }),
    }
}

/// A goal command, or the error of a call that sends one.
pub(super) fn is_goal(command: &Command) -> Result<(), ControllerError> {
    match command {
        Command::GoalSet { .. } | Command::GoalClear => Ok(()),
        other => Err(ControllerError::WrongCommand {
            expected: "goal",
            got: other.name(),
        }),
    }
}

/// The reply an event makes to a request; `None` for one that does not
/// end it (`compaction_started`).
pub(super) fn reply_of((event, attribution): Answer) -> Option<Reply> {
    Some(match event {
        Event::JobsSnapshot { jobs, .. } => Reply::Jobs(jobs),
        Event::JobStopResult { outcome, .. } => Reply::JobStop(outcome),
        Event::SteerApplied { .. } => Reply::Steer(Steered::Applied {
            turn: attribution.turn.map(CommandLine),
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

/// The typed calls' replies: each takes its own kind of [`Reply`]; any
/// other is a mismatch, named by the call's command.
macro_rules! typed_replies {
    ($($name:ident: $kind:ident -> $ty:ty, $command:literal;)*) => {$(
        pub(super) fn $name(reply: Reply) -> Result<$ty, ControllerError> {
            match reply {
                Reply::$kind(it) => Ok(it),
                other => Err(mismatch($command, &other)),
            }
        }
    )*};
}

typed_replies! {
    steered: Steer -> Steered, "steer";
    jobs: Jobs -> Vec<JobRecord>, "jobs_snapshot";
    job_stopped: JobStop -> JobStopOutcome, "job_stop";
    goal_held: Goal -> Option<String>, "goal";
    compacted: Compaction -> Compaction, "compact";
}

/// An answer that does not fit the call: the model attributes only events
/// of the command's kind to it, so this is a bug, reported rather than a
/// panic.
fn mismatch(call: &'static str, reply: &Reply) -> ControllerError {
    ControllerError::WrongCommand {
        expected: call,
        got: match reply {
            Reply::Jobs(_) => "jobs_snapshot",
            Reply::JobStop(_) => "job_stop",
            Reply::Steer(_) => "steer",
            Reply::Goal(_) => "goal",
            Reply::Compaction(_) => "compact",
            Reply::Written(_) => "cancel",
        },
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_at_the_limit_is_sent_and_one_byte_more_is_not() {
        // `{"command":"prompt","content":"..."}`: 33 bytes around the text.
        let at = "x".repeat(DEFAULT_MAX_LINE_LEN - 33);
        let line = line_of(&Command::prompt(at.as_str())).map(|l| l.len());
        assert_eq!(line.ok(), Some(DEFAULT_MAX_LINE_LEN + 1));
        let over = "x".repeat(DEFAULT_MAX_LINE_LEN - 32);
        match line_of(&Command::prompt(over.as_str())) {
            Err(ControllerError::TooLong { len }) => assert_eq!(len, DEFAULT_MAX_LINE_LEN + 1),
            other => panic!("{:?}", other.map(|l| l.len())),
        }
    }

    /// What a waiting call takes as its answer, per command: an event
    /// of these fitting no rule, before anything else came, is the engine
    /// answering it wrongly.
    #[test]
    fn the_events_that_answer_each_command() {
        let table: &[(&str, (&str, &[&str]))] = &[
            (
                r#"{"command":"steer","content":"x"}"#,
                (
                    "steer",
                    &["steer_applied", "steer_dropped", "command_error"],
                ),
            ),
            (
                r#"{"command":"jobs_snapshot","request_id":"j"}"#,
                ("jobs_snapshot", &["jobs_snapshot", "command_error"]),
            ),
            (
                r#"{"command":"job_stop","request_id":"s","generation":"g","job_id":"job-1"}"#,
                ("job_stop", &["job_stop_result", "command_error"]),
            ),
            (
                r#"{"command":"goal","action":"set","text":"ship"}"#,
                ("goal", &["goal_updated", "command_error"]),
            ),
            (
                r#"{"command":"goal","action":"clear"}"#,
                ("goal", &["goal_updated", "command_error"]),
            ),
            (
                r#"{"command":"compact"}"#,
                (
                    "compact",
                    &[
                        "compaction_started",
                        "compaction_finished",
                        "compaction_failed",
                        "command_error",
                    ],
                ),
            ),
            (
                r#"{"command":"prompt","content":"hi"}"#,
                ("prompt", &["command_error"]),
            ),
            (r#"{"command":"nope"}"#, ("line", &["command_error"])),
            ("{x", ("line", &["command_error"])),
        ];
        for &(line, want) in table {
            assert_eq!(expects_of(line.as_bytes()), want, "{line}");
        }
    }

    /// The id a reply carries, by which a wrong answer is told from a
    /// repeated one.
    #[test]
    fn the_id_each_reply_carries() {
        let table: &[(&str, Option<&str>)] = &[
            (
                r#"{"event":"jobs_snapshot","request_id":"j","jobs":[]}"#,
                Some("j"),
            ),
            (
                r#"{"event":"job_stop_result","request_id":"s","generation":"g","job_id":"job-1","outcome":"not_found"}"#,
                Some("s"),
            ),
            (
                r#"{"event":"steer_applied","kind":"prompt","content":"x","submission_id":"s1"}"#,
                Some("s1"),
            ),
            (
                r#"{"event":"steer_applied","kind":"prompt","content":"x"}"#,
                None,
            ),
            (
                r#"{"event":"steer_dropped","content":"x","submission_id":"s2"}"#,
                Some("s2"),
            ),
            (r#"{"event":"goal_updated","goal":null}"#, None),
        ];
        for &(line, id) in table {
            let event = Event::from_slice(line.as_bytes()).unwrap();
            assert_eq!(reply_id(&event), id, "{line}");
        }
    }

    /// The ids of answered requests are remembered, the last 64: a
    /// repeated answer to one of them is a notice, not a wrong answer.
    #[test]
    fn the_last_64_answered_ids_are_remembered() {
        use std::sync::mpsc;
        let mut state: State<mpsc::Sender<Answer>> = State::new(8, None);
        let mut tee = LineTee::new(false);
        for k in 1..=65u64 {
            let id = k.to_string();
            let line = format!("{{\"command\":\"jobs_snapshot\",\"request_id\":\"{id}\"}}\n");
            state
                .begin::<mpsc::Receiver<Answer>>(line.as_bytes(), None, false)
                .unwrap();
            let reply = Event::JobsSnapshot {
                request_id: id,
                jobs: Vec::new(),
            };
            state.line(0, Ok(Item(Ok(reply))), k, &mut tee);
            if k == 2 {
                assert_eq!(state.answered_ids, ["1", "2"]);
            }
        }
        let kept: Vec<String> = (2..=65).map(|k| k.to_string()).collect();
        assert_eq!(state.answered_ids, kept);
    }

    #[test]
    fn a_call_answered_or_left_is_forgotten() {
        use std::sync::mpsc;
        let mut state: State<mpsc::Sender<Answer>> = State::new(8, None);
        let mut tee = LineTee::new(false);
        let (tx, rx) = mpsc::channel();
        let line = b"{\"command\":\"jobs_snapshot\",\"request_id\":\"r\"}\n";
        let (n, call) = state
            .begin(line, Some((tx, rx, false, Clock::Answer)), false)
            .unwrap();
        assert_eq!((n, state.waiters.len()), (CommandLine(1), 1));
        let reply = Event::JobsSnapshot {
            request_id: "r".into(),
            jobs: Vec::new(),
        };
        state.line(0, Ok(Item(Ok(reply))), 1, &mut tee);
        assert!(state.waiters.is_empty(), "its answer ended the call");
        assert!(call.is_some_and(|call| call.rx.try_recv().is_ok()));
        // A call whose caller left: the first event it would take ends it.
        let (tx, rx) = mpsc::channel();
        let line = b"{\"command\":\"prompt\",\"content\":\"hi\"}\n";
        state
            .begin(line, Some((tx, rx, true, Clock::Work)), false)
            .unwrap();
        state.line(0, Ok(Item(Ok(Event::agent_step(1)))), 2, &mut tee);
        assert!(state.waiters.is_empty(), "the turn's caller left");
        assert_eq!(state.notices.len(), 1);
    }
}
