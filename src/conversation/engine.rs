//! What an engine supplies to the serve loop, and what the loop lends a
//! running turn: the [`Engine`] trait, [`RunningTurn`],
//! [`RunningCompaction`] and the [`EventWriter`] every task shares.

use crate::v2::{
    AppliedSteerKind, ApprovalOutcome, Content, Event, JobRecord, JobStopOutcome, PredictionOutcome,
};
use std::collections::VecDeque;
use std::error::Error;
use std::fmt;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

/// A turn's or a compaction's failure, written as its `turn_failed` or
/// `compaction_failed` (its `Display`, as the event's `error`).
pub type WorkError = Box<dyn Error + Send + Sync>;

/// What only the engine knows: how to run a turn, and optionally how to
/// compact, its background jobs, its prediction of the user's next message
/// and its goal judgement.
/// [`EngineLoop`](crate::v2::serve::EngineLoop) does everything else the
/// serve protocol promises (see its docs).
///
/// Every method but [`Engine::turn`] has a default that answers as
/// upstream's loop does with nothing behind it: no jobs (an empty snapshot,
/// `not_found`), no prediction, no compaction
/// (`compaction_failed`), no auto-continuation.
///
/// The loop calls these from several threads at once (a turn, a
/// `job_stop`, a prediction), hence `Sync`: keep mutable state behind a
/// `Mutex` or an atomic.
pub trait Engine: Sync {
    /// Runs one turn for `turn.content()`: write its events with
    /// [`RunningTurn::emit`], take the steers that land in it at each step
    /// boundary ([`RunningTurn::steers`]), ask approvals with
    /// [`RunningTurn::ask`], and stop soon after
    /// [`RunningTurn::is_cancelled`].
    ///
    /// Return the answer, and the loop writes `agent_finished`; an error,
    /// and it writes `turn_failed` with the error's text; once cancelled,
    /// whatever the turn returns, `agent_aborted` `interrupted`. A turn that
    /// panics ends with `turn_failed` and the loop goes on.
    ///
    /// # Errors
    ///
    /// Whatever ended the turn early: it becomes the `turn_failed` event's
    /// `error`.
    fn turn(&self, turn: &mut RunningTurn<'_>) -> Result<String, WorkError>;

    /// Compacts the conversation for a `compact` command. The loop writes
    /// `compaction_started` (unless the engine did, with
    /// [`RunningCompaction::started`]) and `compaction_finished` from what it
    /// returns; `compaction_failed` for an error or a cancel.
    ///
    /// The default fails: `this engine does not compact`.
    ///
    /// # Errors
    ///
    /// Why the compaction failed: the `compaction_failed` event's `error`.
    fn compact(&self, compaction: &RunningCompaction<'_>) -> Result<Compacted, WorkError> {
        let _ = compaction;
        Err("this engine does not compact".into())
    }

    /// The background jobs, for `jobs_snapshot` (answered at once, even
    /// mid-turn). The default: none.
    fn jobs(&self) -> Vec<JobRecord> {
        Vec::new()
    }

    /// Stops a background job, for `job_stop`. The default: `not_found`.
    fn stop_job(&self, generation: &str, job_id: &str) -> JobStopOutcome {
        let _ = (generation, job_id);
        JobStopOutcome::NotFound
    }

    /// Whether to predict the user's next message now, and from which
    /// event: asked on the loop's thread after a turn that ended
    /// `agent_finished` (not one that yielded its context), when nothing
    /// else runs or waits, no goal continues and the input is open, as
    /// upstream's loop starts its one prediction (fdf10827). `Some(n)`
    /// starts [`Engine::predict`] from event sequence `n`; `None`, the
    /// default, predicts nothing.
    ///
    /// `n` is the engine's numbering of its session's events (upstream's
    /// `last_sequence()`), which the loop does not keep. An engine with no
    /// numbering of its own can count the turns that finished: a
    /// controller only uses the number to tell one prediction from the
    /// next (the crate's mock engine does so).
    fn prediction_source(&self) -> Option<i32> {
        None
    }

    /// Predicts what the user types next, on a thread of its own, after
    /// [`Engine::prediction_source`] gave a sequence. Any command that
    /// moves the session on (a prompt, a steer, `compact`, `cancel`, a
    /// goal) or the end of input cancels it, silently:
    /// [`Prediction::is_cancelled`] turns true, so the engine can stop,
    /// and whatever it returns is dropped. Otherwise the loop writes
    /// `prediction_result` with `Completed`, or `Failed` (upstream writes
    /// `failed` only as `prediction storage: <error>`, when saving the
    /// prediction failed); `Skipped` and `Cancelled` are dropped, as
    /// upstream drops a prediction that could not be generated. The
    /// default: `Skipped`.
    fn predict(&self, prediction: &Prediction) -> PredictionOutcome {
        let _ = prediction;
        PredictionOutcome::Skipped
    }

    /// After a turn finished with a goal armed by `goal` with `auto`
    /// standing, whether to go on: `Some(prompt)` runs another turn with it
    /// (the loop writes `goal_continue` and counts the budget, 20 turns as
    /// upstream's, then writes `goal_budget_exhausted`); `None` says the goal
    /// is met and disarms it. Called on the loop's thread: decide quickly.
    /// The default: `None` (an engine that cannot judge never continues on
    /// its own).
    fn continue_goal(&self, goal: &str) -> Option<Content> {
        let _ = goal;
        None
    }
}

/// An engine behind a reference, an `Arc` or a `Box` is the same engine
/// (a test keeps its own handle to read what the engine saw).
macro_rules! engine_behind {
    ($($ty:ty),*) => {$(
        impl<E: Engine + Send + ?Sized> Engine for $ty {
            fn turn(&self, turn: &mut RunningTurn<'_>) -> Result<String, WorkError> {
                (**self).turn(turn)
            }
            fn compact(&self, compaction: &RunningCompaction<'_>) -> Result<Compacted, WorkError> {
                (**self).compact(compaction)
            }
            fn jobs(&self) -> Vec<JobRecord> {
                (**self).jobs()
            }
            fn stop_job(&self, generation: &str, job_id: &str) -> JobStopOutcome {
                (**self).stop_job(generation, job_id)
            }
            fn prediction_source(&self) -> Option<i32> {
                (**self).prediction_source()
            }
            fn predict(&self, prediction: &Prediction) -> PredictionOutcome {
                (**self).predict(prediction)
            }
            fn continue_goal(&self, goal: &str) -> Option<Content> {
                (**self).continue_goal(goal)
            }
        }
    )*};
}

engine_behind!(&E, Arc<E>, Box<E>);

/// What a compaction returns: its range and summary, for
/// `compaction_finished`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Compacted {
    /// The first event sequence the summary covers.
    pub from_sequence: i32,
    /// The last.
    pub to_sequence: i32,
    /// The summary that replaces them.
    pub summary: String,
}

impl Compacted {
    /// A compaction of `from_sequence..=to_sequence` into `summary`.
    pub fn new(from_sequence: i32, to_sequence: i32, summary: impl Into<String>) -> Compacted {
        Compacted {
            from_sequence,
            to_sequence,
            summary: summary.into(),
        }
    }
}

/// The engine's prediction after a successful idle turn, running.
#[derive(Debug)]
pub struct Prediction {
    pub(crate) source_sequence: i32,
    pub(crate) cancelled: Arc<AtomicBool>,
}

impl Prediction {
    /// The event the prediction starts from ([`Engine::prediction_source`]).
    #[must_use]
    pub fn source_sequence(&self) -> i32 {
        self.source_sequence
    }

    pub(crate) fn answer(&self, outcome: PredictionOutcome) -> Event {
        Event::prediction_result(self.source_sequence, outcome)
    }

    /// Whether a command that moves the session on (or the end of input)
    /// has cancelled it: what it returns is then dropped.
    #[must_use]
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Acquire)
    }
}

/// The engine's stdout, shared: every task of the loop (the reader, the
/// turn, a job's or a prediction's thread) writes through a clone, one
/// whole line per write, flushed, so lines never interleave.
///
/// After a write fails (the controller closed the pipe), every later write
/// fails too, and the loop ends once its work has.
#[derive(Clone)]
pub struct EventWriter<'a> {
    sink: Sink<'a>,
}

#[derive(Clone)]
enum Sink<'a> {
    /// Written in place, under a lock.
    Blocking(Arc<Mutex<Out<'a>>>),
    /// Handed, whole, to the task that writes the tokio loop's output.
    #[cfg(feature = "tokio")]
    Task {
        lines: tokio::sync::mpsc::UnboundedSender<Vec<u8>>,
        failed: Arc<Mutex<Option<io::ErrorKind>>>,
    },
}

struct Out<'a> {
    out: Box<dyn Write + Send + 'a>,
    failed: Option<io::ErrorKind>,
}

impl fmt::Debug for EventWriter<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EventWriter").finish_non_exhaustive()
    }
}

impl<'a> EventWriter<'a> {
    /// A writer over `out`.
    pub fn new(out: impl Write + Send + 'a) -> EventWriter<'a> {
        EventWriter {
            sink: Sink::Blocking(Arc::new(Mutex::new(Out {
                out: Box::new(out),
                failed: None,
            }))),
        }
    }

    /// A writer whose lines go to a task (the tokio loop's), in order;
    /// the task reports a failed write through `failed`.
    #[cfg(feature = "tokio")]
    pub(crate) fn to_task(
        lines: tokio::sync::mpsc::UnboundedSender<Vec<u8>>,
        failed: Arc<Mutex<Option<io::ErrorKind>>>,
    ) -> EventWriter<'a> {
        EventWriter {
            sink: Sink::Task { lines, failed },
        }
    }

    /// Writes `event` as one line, flushed.
    ///
    /// # Errors
    ///
    /// The write's error, or, after one failed, `BrokenPipe`-like errors
    /// of the same kind.
    pub fn write(&self, event: &Event) -> io::Result<()> {
        self.write_line(event.to_line().as_bytes())
    }

    /// Writes one ready line (LF included), flushed.
    pub(crate) fn write_line(&self, line: &[u8]) -> io::Result<()> {
        let failed = |kind| io::Error::new(kind, "an earlier write to the controller failed");
        match &self.sink {
            Sink::Blocking(inner) => {
                let mut out = lock(inner);
                if let Some(kind) = out.failed {
                    return Err(failed(kind));
                }
                let result = out.out.write_all(line).and_then(|()| out.out.flush());
                if let Err(error) = &result {
                    out.failed = Some(error.kind());
                }
                result
            }
            #[cfg(feature = "tokio")]
            Sink::Task {
                lines,
                failed: kind,
            } => {
                if let Some(kind) = *lock(kind) {
                    return Err(failed(kind));
                }
                lines
                    .send(line.to_vec())
                    .map_err(|_| failed(io::ErrorKind::BrokenPipe))
            }
        }
    }

    /// Whether a write has failed.
    pub(crate) fn has_failed(&self) -> bool {
        match &self.sink {
            Sink::Blocking(inner) => lock(inner).failed.is_some(),
            #[cfg(feature = "tokio")]
            Sink::Task { failed, .. } => lock(failed).is_some(),
        }
    }
}

/// Tells the loop a turn waits for an answer (in-order mode).
pub(crate) type Parked<'o> = Arc<dyn Fn() + Send + Sync + 'o>;

/// A poisoned lock still holds sound data here: no user code runs while one
/// of the loop's locks is held.
pub(crate) fn lock<T: ?Sized>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What the loop queues for a running turn to take at its next step
/// boundary (upstream's runtime steering queue).
#[derive(Debug)]
pub(crate) enum Queued {
    Prompt(Content, Option<String>),
    Command(Content, Option<String>),
    /// A goal marker: `None` clears; the goal command's serial.
    Goal(Option<String>, u64),
}

/// The steering queue and the standing goal, shared by the loop and the
/// running turn.
#[derive(Debug, Default)]
pub(crate) struct Inbox {
    pub(crate) state: Mutex<InboxState>,
}

#[derive(Debug, Default)]
pub(crate) struct InboxState {
    pub(crate) queue: VecDeque<Queued>,
    /// The goal standing, and the serial of the command that set it.
    pub(crate) goal: Option<String>,
    pub(crate) goal_serial: u64,
}

/// What a step boundary hands the model: the steers that landed, in wire
/// order (their `steer_applied` or `goal_updated` already written).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StepInput {
    /// A prompt steer: more from the user, for this turn.
    Prompt(Content),
    /// Command context (`kind: command`): local output to add to the
    /// conversation.
    Command(Content),
    /// The goal now standing (`None`: cleared).
    Goal(Option<String>),
}

/// An approval question a turn asks ([`RunningTurn::ask`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Question {
    /// The tool that asks.
    pub tool_name: String,
    /// What it wants to do, for a person.
    pub detail: String,
    /// The full request (a command line, a diff), if any.
    pub body: Option<String>,
}

impl Question {
    /// A question from `tool_name` about `detail`, with no body.
    pub fn new(tool_name: impl Into<String>, detail: impl Into<String>) -> Question {
        Question {
            tool_name: tool_name.into(),
            detail: detail.into(),
            body: None,
        }
    }

    /// The same question with `body`.
    #[must_use]
    pub fn body(mut self, body: impl Into<String>) -> Question {
        self.body = Some(body.into());
        self
    }
}

/// How an approval question settled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Decision {
    /// The controller allowed it (`approval_resolved` `allowed_once`).
    Allowed,
    /// The controller rejected it (`rejected`).
    Rejected,
    /// The turn was cancelled first (`cancelled`): stop the turn.
    Cancelled,
    /// The controller's input ended first, so nobody is left to answer
    /// (`cancelled`): the tool should not run, the turn may finish.
    Withdrawn,
}

impl Decision {
    /// Whether the tool may run.
    #[must_use]
    pub fn is_allowed(self) -> bool {
        self == Decision::Allowed
    }

    fn outcome(self) -> ApprovalOutcome {
        match self {
            Decision::Allowed => ApprovalOutcome::AllowedOnce,
            Decision::Rejected => ApprovalOutcome::Rejected,
            Decision::Cancelled | Decision::Withdrawn => ApprovalOutcome::Cancelled,
        }
    }
}

/// A unit of work's link to the loop: cancel, withdraw, and the questions
/// it waits on.
#[derive(Debug, Default)]
pub(crate) struct Control {
    pub(crate) state: Mutex<ControlState>,
    pub(crate) wake: Condvar,
    /// The same wake-up, for a turn on tokio.
    #[cfg(feature = "tokio")]
    pub(crate) notify: tokio::sync::Notify,
}

#[derive(Debug, Default)]
pub(crate) struct ControlState {
    pub(crate) cancelled: bool,
    pub(crate) withdrawn: bool,
    /// Open questions by id, and the controller's answer once given.
    pub(crate) questions: Vec<(String, Option<bool>)>,
}

impl Control {
    fn wake_all(&self) {
        self.wake.notify_all();
        #[cfg(feature = "tokio")]
        self.notify.notify_waiters();
    }

    pub(crate) fn cancel(&self) {
        lock(&self.state).cancelled = true;
        self.wake_all();
    }

    pub(crate) fn withdraw(&self) {
        lock(&self.state).withdrawn = true;
        self.wake_all();
    }

    /// How the question `id` has settled, if it has.
    fn decision(state: &ControlState, id: &str, write_failed: bool) -> Option<Decision> {
        let answer = state
            .questions
            .iter()
            .find(|(q, _)| q == id)
            .and_then(|(_, a)| *a);
        match answer {
            Some(true) => Some(Decision::Allowed),
            Some(false) => Some(Decision::Rejected),
            None if state.cancelled => Some(Decision::Cancelled),
            None if state.withdrawn || write_failed => Some(Decision::Withdrawn),
            None => None,
        }
    }

    /// Answers the open question `id`; whether one was open.
    pub(crate) fn settle(&self, id: &str, allow: bool) -> bool {
        let mut state = lock(&self.state);
        let open = state
            .questions
            .iter_mut()
            .find(|(q, answer)| q == id && answer.is_none());
        let Some((_, answer)) = open else {
            return false;
        };
        *answer = Some(allow);
        drop(state);
        self.wake_all();
        true
    }

    fn is_cancelled(&self) -> bool {
        lock(&self.state).cancelled
    }

    fn wait_cancelled(&self, timeout: Duration) -> bool {
        let state = lock(&self.state);
        let (state, _) = self
            .wake
            .wait_timeout_while(state, timeout, |s| !s.cancelled)
            .unwrap_or_else(PoisonError::into_inner);
        state.cancelled
    }
}

/// What the loop lends a unit of work.
pub(crate) struct Lent<'a> {
    pub(crate) out: EventWriter<'a>,
    pub(crate) control: Arc<Control>,
    pub(crate) inbox: Arc<Inbox>,
    /// Questions asked so far, over the loop (ids `approval-N`).
    pub(crate) asked: Arc<AtomicU64>,
    /// Tells the loop a turn waits for an answer (in-order mode).
    pub(crate) parked: Option<Parked<'a>>,
}

/// The turn the engine runs ([`Engine::turn`]): its prompt, and the
/// loop's services for it.
pub struct RunningTurn<'a> {
    pub(crate) content: Content,
    pub(crate) submission_id: Option<String>,
    pub(crate) lent: Lent<'a>,
    /// The turn wrote its own terminal event.
    pub(crate) ended: bool,
    /// The end it wrote was `agent_finished` (a clean finish, which an
    /// auto goal continues after).
    pub(crate) finished: bool,
    /// It wrote `context_yield`: its end starts no prediction.
    pub(crate) yielded: bool,
    /// The end it wrote, held for the loop to write when it takes the
    /// turn's end: no command the engine reads after the end is written
    /// is then taken before it (a steer would otherwise be drained at the
    /// end, as though sent before it).
    pub(crate) own_end: Option<Event>,
    /// The mock engine's literal turns: exactly the script's events.
    pub(crate) literal: bool,
}

impl fmt::Debug for RunningTurn<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunningTurn")
            .field("content", &self.content)
            .field("submission_id", &self.submission_id)
            .finish_non_exhaustive()
    }
}

impl<'a> RunningTurn<'a> {
    /// The prompt's content (for a turn the engine continues a goal with,
    /// the prompt [`Engine::continue_goal`] gave).
    #[must_use]
    pub fn content(&self) -> &Content {
        &self.content
    }

    /// The prompt's `submission_id`, if it had one.
    #[must_use]
    pub fn submission_id(&self) -> Option<&str> {
        self.submission_id.as_deref()
    }

    /// Writes one of the turn's events (a step, a delta, a message, usage,
    /// a tool result, ...).
    ///
    /// The loop writes the turn's end from what [`Engine::turn`] returns; a
    /// turn that writes its own (`agent_finished`, `turn_failed` or
    /// `agent_aborted`) ends there, and the loop writes no other. After
    /// that, and for the events only the loop writes (`steer_*`,
    /// `goal_updated`, `approval_*`, `command_error`, ...), this fails with
    /// `InvalidInput` and writes nothing.
    ///
    /// # Errors
    ///
    /// `InvalidInput` as above, or the write's error.
    pub fn emit(&mut self, event: &Event) -> io::Result<()> {
        self.yielded |= matches!(event, Event::ContextYield { .. });
        if !self.literal {
            if self.ended {
                return Err(refused(event, "the turn has ended"));
            }
            if loop_only(event) {
                return Err(refused(event, "the serve loop writes it"));
            }
            self.ended = is_terminal(event);
            self.finished = matches!(event, Event::AgentFinished { .. });
            if self.ended {
                self.own_end = Some(event.clone());
                return Ok(());
            }
        }
        self.lent.out.write(event)
    }

    /// A clone of the loop's event writer, for a thread of the turn's own;
    /// it writes any event, so keep it to the turn's.
    #[must_use]
    pub fn writer(&self) -> EventWriter<'a> {
        self.lent.out.clone()
    }

    /// The step boundary: takes the steers that landed in this turn since
    /// the last boundary (or, at its first, that were sent for it while it
    /// waited), in wire order, and writes `steer_applied` for each steer and
    /// `goal_updated` for each goal command. Steers the turn never takes are
    /// answered when it ends: a prompt steer is dropped, command context
    /// applied.
    ///
    /// # Errors
    ///
    /// `InvalidInput` once the turn has written its own end (the steers
    /// are left for the loop); a failed write (the inputs are taken all
    /// the same).
    pub fn steers(&mut self) -> io::Result<Vec<StepInput>> {
        if self.ended && !self.literal {
            return Err(ended("take steers"));
        }
        let mut taken = Vec::new();
        let mut result = Ok(());
        let mut inbox = lock(&self.lent.inbox.state);
        while let Some(queued) = inbox.queue.pop_front() {
            let (event, input) = match queued {
                Queued::Prompt(content, submission_id) => (
                    Event::steer_applied(AppliedSteerKind::Prompt, content.clone(), submission_id),
                    StepInput::Prompt(content),
                ),
                Queued::Command(content, submission_id) => (
                    Event::steer_applied(AppliedSteerKind::Command, content.clone(), submission_id),
                    StepInput::Command(content),
                ),
                Queued::Goal(goal, serial) => {
                    inbox.goal.clone_from(&goal);
                    inbox.goal_serial = serial;
                    (Event::goal_updated(goal.clone()), StepInput::Goal(goal))
                }
            };
            // Written under the inbox's lock: the loop's own drain at the
            // turn's end cannot overtake these lines.
            result = result.and(self.lent.out.write(&event));
            taken.push(input);
        }
        drop(inbox);
        result.map(|()| taken)
    }

    /// Whether a step boundary now would apply anything: steers or goals
    /// have landed in this turn that [`RunningTurn::steers`] would take
    /// (and none once the turn has written its own end). It takes
    /// nothing: a turn that paces its steps asks it to decide whether to
    /// open a step for them.
    #[must_use]
    pub fn steers_waiting(&self) -> bool {
        if self.ended && !self.literal {
            return false;
        }
        !lock(&self.lent.inbox.state).queue.is_empty()
    }

    /// Asks the controller a question (`approval_requested`, id
    /// `approval-N`) and blocks this turn alone until it settles: the
    /// controller's `approval` with that id, the turn's cancel, or the end
    /// of the controller's input; the loop writes `approval_resolved` with
    /// the outcome. Asked after the turn was cancelled, it writes nothing
    /// and returns [`Decision::Cancelled`].
    ///
    /// # Errors
    ///
    /// A failed write of either event; `InvalidInput` once the turn has
    /// written its own end.
    pub fn ask(&mut self, question: Question) -> io::Result<Decision> {
        let Some((id, asked)) = self.open(question)? else {
            return Ok(Decision::Cancelled);
        };
        let control = &self.lent.control;
        let mut state = lock(&control.state);
        let decision = loop {
            if let Some(decision) = Control::decision(&state, &id, asked.is_err()) {
                break decision;
            }
            state = control
                .wake
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        };
        drop(state);
        self.close(id, asked, decision)
    }

    /// [`RunningTurn::ask`] for a turn on tokio: the same question, awaited.
    ///
    /// # Errors
    ///
    /// A failed write of either event; `InvalidInput` once the turn has
    /// written its own end.
    #[cfg(feature = "tokio")]
    pub async fn ask_async(&mut self, question: Question) -> io::Result<Decision> {
        let Some((id, asked)) = self.open(question)? else {
            return Ok(Decision::Cancelled);
        };
        let control = Arc::clone(&self.lent.control);
        let decision = loop {
            // Enabled before the check: a wake-up between the two is kept.
            let mut notified = std::pin::pin!(control.notify.notified());
            notified.as_mut().enable();
            let settled = Control::decision(&lock(&control.state), &id, asked.is_err());
            if let Some(decision) = settled {
                break decision;
            }
            notified.await;
        };
        self.close(id, asked, decision)
    }

    /// Opens a question and asks it; `None` once cancelled.
    fn open(&mut self, question: Question) -> io::Result<Option<(String, io::Result<()>)>> {
        if self.ended && !self.literal {
            return Err(ended("ask"));
        }
        let lent = &self.lent;
        let n = lent.asked.fetch_add(1, Ordering::Relaxed) + 1;
        let id = format!("approval-{n}");
        {
            let mut state = lock(&lent.control.state);
            if state.cancelled {
                return Ok(None);
            }
            // Open before it is asked: an answer can only follow the line.
            state.questions.push((id.clone(), None));
        }
        let asked = lent.out.write(&Event::approval_requested(
            id.as_str(),
            question.tool_name,
            question.detail,
            question.body,
        ));
        if let Some(parked) = &lent.parked {
            parked();
        }
        Ok(Some((id, asked)))
    }

    /// Closes a settled question and writes how it settled.
    fn close(
        &mut self,
        id: String,
        asked: io::Result<()>,
        decision: Decision,
    ) -> io::Result<Decision> {
        lock(&self.lent.control.state)
            .questions
            .retain(|(q, _)| *q != id);
        asked?;
        self.lent
            .out
            .write(&Event::approval_resolved(id, decision.outcome()))?;
        Ok(decision)
    }

    /// Whether the controller cancelled this turn: stop soon, whatever the
    /// turn returns, the loop writes `agent_aborted` `interrupted`.
    #[must_use]
    pub fn is_cancelled(&self) -> bool {
        self.lent.control.is_cancelled()
    }

    /// Waits up to `timeout` for a cancel (a pause that a cancel cuts
    /// short); whether the turn is cancelled.
    pub fn wait_cancelled(&self, timeout: Duration) -> bool {
        self.lent.control.wait_cancelled(timeout)
    }

    /// Completes when the controller cancels this turn: race it with the
    /// model call (`tokio::select!`), for a turn on tokio.
    #[cfg(feature = "tokio")]
    pub async fn cancelled(&self) {
        let control = &self.lent.control;
        loop {
            let mut notified = std::pin::pin!(control.notify.notified());
            notified.as_mut().enable();
            if control.is_cancelled() {
                return;
            }
            notified.await;
        }
    }

    /// The mock engine's literal turns write exactly their script.
    #[cfg(feature = "workbench")]
    pub(crate) fn write_literally(&mut self) {
        self.literal = true;
    }
}

/// The compaction the engine runs ([`Engine::compact`]).
pub struct RunningCompaction<'a> {
    pub(crate) lent: Lent<'a>,
    pub(crate) started: AtomicBool,
}

impl fmt::Debug for RunningCompaction<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunningCompaction").finish_non_exhaustive()
    }
}

impl RunningCompaction<'_> {
    /// Writes `compaction_started` now, for a compaction that takes time
    /// (otherwise the loop writes it with `compaction_finished`).
    ///
    /// # Errors
    ///
    /// The write's error.
    pub fn started(&self, from_sequence: i32, to_sequence: i32) -> io::Result<()> {
        if self.started.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        self.lent
            .out
            .write(&Event::compaction_started(from_sequence, to_sequence))
    }

    /// Whether the controller cancelled it: the loop writes
    /// `compaction_failed` `cancelled`, whatever it returns.
    #[must_use]
    pub fn is_cancelled(&self) -> bool {
        self.lent.control.is_cancelled()
    }

    /// Waits up to `timeout` for a cancel; whether it is cancelled.
    pub fn wait_cancelled(&self, timeout: Duration) -> bool {
        self.lent.control.wait_cancelled(timeout)
    }
}

fn ended(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("a turn cannot {what}: the turn has ended"),
    )
}

fn refused(event: &Event, why: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("a turn cannot write {}: {why}", event.name()),
    )
}

pub(crate) fn is_terminal(event: &Event) -> bool {
    matches!(
        event,
        Event::AgentFinished { .. } | Event::TurnFailed { .. } | Event::AgentAborted { .. }
    )
}

/// The events that answer commands or settle the loop's own state: only
/// the loop writes them, so the conversation keeps its order.
fn loop_only(event: &Event) -> bool {
    matches!(
        event,
        Event::CommandError { .. }
            | Event::SteerApplied { .. }
            | Event::SteerDropped { .. }
            | Event::GoalUpdated { .. }
            | Event::GoalContinue { .. }
            | Event::GoalBudgetExhausted { .. }
            | Event::ApprovalRequested { .. }
            | Event::ApprovalResolved { .. }
            | Event::JobsSnapshot { .. }
            | Event::JobStopResult { .. }
            | Event::PredictionResult { .. }
            | Event::CompactionStarted { .. }
            | Event::CompactionFinished { .. }
            | Event::CompactionFailed { .. }
    )
}
