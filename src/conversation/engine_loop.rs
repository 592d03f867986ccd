//! Upstream's serve loop (`internal/openseek/serve/loop.mbt`), as a
//! library: one queue of steps, one consumer, work one at a time. Each
//! rule, with the line of `loop.mbt` it rests on, is in `docs/PROTOCOL.md`
//! ("The engine loop").

use super::engine::{
    lock, Compacted, Control, Engine, EventWriter, Inbox, Lent, Parked, Prediction, Queued,
    RunningCompaction, RunningTurn, WorkError,
};
use super::shared::{loop_settings, Settings};
use crate::v2::{
    AppliedSteerKind, Command, CommandReader, Content, Event, JobRecord, JobStopOutcome,
    PredictionOutcome, ReadError, SteerKind,
};
use std::any::Any;
use std::collections::VecDeque;
use std::io::{self, BufRead, Write};
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::Arc;
use std::thread::Scope;

/// Turns the engine runs on its own toward one auto goal before it waits
/// for the controller (upstream's `GoalAutoContinueMaxTurns`, state.mbt).
pub const GOAL_AUTO_CONTINUE_MAX_TURNS: i32 = 20;

/// The serve loop around an [`Engine`]: it reads the controller's
/// commands, answers what is the loop's to answer, and runs the engine's
/// turns and compactions one at a time, keeping every promise of upstream's
/// `openseek serve`:
///
/// - every line it cannot use is answered at once by one `command_error`
///   (the reader's, or serve's policy's), also while a turn runs; after a
///   line that is not JSON it reads no more, and shuts down as at the end
///   of input;
/// - one turn at a time: a prompt sent while work runs waits, in wire
///   order; `compact` waits behind the turn;
/// - a prompt steer lands in the running turn (or the queued prompt's) at
///   its next step boundary ([`RunningTurn::steers`]), and is dropped
///   (`steer_dropped`) when there is none, or when the turn ends first;
///   command context (`kind: command`) is applied at once when idle and
///   queued otherwise;
/// - `cancel` interrupts the running turn or compaction (`agent_aborted`
///   `interrupted`, `compaction_failed` `cancelled`) and disarms an auto
///   goal; it never starts or withdraws other work;
/// - goals are applied in wire order behind pending work and reported
///   (`goal_updated`) once applied; an auto goal continues turns through
///   [`Engine::continue_goal`];
/// - an approval a turn asks blocks that turn alone until its `approval`
///   arrives, and settles `cancelled` when the turn is cancelled or the
///   input ends;
/// - `jobs_snapshot` is answered at once, `job_stop` on a thread of its
///   own, at any time, even mid-turn;
/// - after a turn that finished with nothing else to run, the engine's
///   one prediction runs on a thread of its own
///   ([`Engine::prediction_source`], [`Engine::predict`]), cancelled
///   silently by a prompt, a steer, `compact`, `cancel`, a goal or the end
///   of input, and written only if still current;
/// - at the end of input, the running work finishes and queued work runs
///   before [`EngineLoop::serve`] returns;
/// - every event is written as one whole line ([`EventWriter`]); a turn
///   that returns, fails or panics gets its terminal event.
///
/// ```
/// use serve_command::v2::serve::{Engine, EngineLoop, RunningTurn, WorkError};
/// use serve_command::v2::Event;
///
/// struct Echo;
///
/// impl Engine for Echo {
///     fn turn(&self, turn: &mut RunningTurn<'_>) -> Result<String, WorkError> {
///         turn.emit(&Event::agent_step(1))?;
///         Ok(format!("You asked: {}", turn.content().to_text()))
///     }
/// }
///
/// # fn main() -> std::io::Result<()> {
/// let input = b"{\"command\":\"prompt\",\"content\":\"hi\"}\n{\"command\":\"jobs_snapshot\"}\n";
/// let mut output = Vec::new();
/// EngineLoop::new(Echo).in_order().serve(&input[..], &mut output)?;
/// assert_eq!(
///     String::from_utf8(output).unwrap(),
///     concat!(
///         "{\"event\":\"agent_step\",\"step\":1}\n",
///         "{\"event\":\"agent_finished\",\"answer\":\"You asked: hi\"}\n",
///         "{\"event\":\"command_error\",\"error\":\"invalid background job command\"}\n",
///     ),
/// );
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct EngineLoop<E> {
    engine: E,
    settings: Settings,
}

impl<E: Engine> EngineLoop<E> {
    /// The loop around `engine`, reading commands as they come.
    pub fn new(engine: E) -> EngineLoop<E> {
        let settings = Settings::default();
        EngineLoop { engine, settings }
    }

    loop_settings!(EngineLoop);

    /// Serves the commands of `input`, writing events to `output`, until
    /// the end of input (or a line after which an engine reads no more) and
    /// the end of the work it leaves; returns the reader's error that
    /// stopped reading early, if one did (already answered on `output`).
    ///
    /// # Errors
    ///
    /// A failed write to `output`: the loop stops reading and returns it
    /// once the running work has ended.
    pub fn serve<'o>(
        &self,
        input: impl BufRead + Send,
        output: impl Write + Send + 'o,
    ) -> io::Result<Option<ReadError>> {
        let out = EventWriter::new(output);
        let reader = CommandReader::with_max_line_len(input, self.settings.max_line_len);
        std::thread::scope(|scope| {
            let (steps, rx) = mpsc::channel();
            let park = steps.clone();
            let parked = self.settings.parked(move || {
                let _ = park.send(Step::Parked);
            });
            let driver = ThreadDriver {
                engine: &self.engine,
                scope,
                steps: steps.clone(),
                in_order: self.settings.in_order,
            };
            let mut pump = Pump::new(driver, out.clone(), parked);
            let stopped = if self.settings.in_order {
                let stopped = read(reader, &out, |command| {
                    pump.step(Step::Wire(command));
                    while pump.busy() {
                        let Ok(step) = rx.recv() else { break };
                        pump.step(step);
                    }
                    // What the helpers run in order sent meanwhile.
                    while let Ok(step) = rx.try_recv() {
                        pump.step(step);
                    }
                    !out.has_failed()
                });
                pump.step(Step::Shutdown);
                stopped
            } else {
                let reader_out = out.clone();
                let reading = scope.spawn(move || {
                    let stopped = read(reader, &reader_out, |command| {
                        steps.send(Step::Wire(command)).is_ok() && !reader_out.has_failed()
                    });
                    let _ = steps.send(Step::Shutdown);
                    stopped
                });
                while !pump.done() {
                    let Ok(step) = rx.recv() else { break };
                    pump.step(step);
                }
                reading.join().unwrap_or(None)
            };
            while !pump.done() {
                let Ok(step) = rx.recv() else { break };
                pump.step(step);
            }
            drop(pump);
            if let Some(kind) = out_failed(&out) {
                return Err(io::Error::new(kind, "writing to the controller failed"));
            }
            Ok(stopped)
        })
    }
}

fn out_failed(out: &EventWriter<'_>) -> Option<io::ErrorKind> {
    out.has_failed().then_some(io::ErrorKind::BrokenPipe)
}

/// Reads commands as `openseek serve` does (loop.mbt 210-222): a refused
/// line is answered here at once; a command goes to `take` (which says
/// whether to read on); after a line that is not JSON, reading stops.
fn read(
    reader: CommandReader<impl BufRead>,
    out: &EventWriter<'_>,
    mut take: impl FnMut(Command) -> bool,
) -> Option<ReadError> {
    for item in reader {
        match classify(item, out) {
            Flow::Command(command) => {
                if !take(command) {
                    return None;
                }
            }
            Flow::Answered => {}
            Flow::Stop(stopped) => return stopped,
        }
    }
    None
}

/// What the reader does with one item.
pub(crate) enum Flow {
    /// A command for the loop.
    Command(Command),
    /// A refused line, answered.
    Answered,
    /// Reading ends: after a line that is not JSON (its error), or a
    /// failed write.
    Stop(Option<ReadError>),
}

/// Answers a refused line at once (the reader's own `command_error`, or
/// serve's policy's), and says whether to read on.
pub(crate) fn classify(item: Result<Command, ReadError>, out: &EventWriter<'_>) -> Flow {
    match item {
        Ok(command) => match command.serve_refusal_event_line() {
            Some(line) => match out.write_line(line.as_bytes()) {
                Ok(()) => Flow::Answered,
                Err(_) => Flow::Stop(None),
            },
            None => Flow::Command(command),
        },
        Err(error) => {
            let written = out.write_line(error.event_line().as_bytes());
            if error.is_stream_error() {
                Flow::Stop(Some(error))
            } else if written.is_err() {
                Flow::Stop(None)
            } else {
                Flow::Answered
            }
        }
    }
}

/// What runs the loop's work: threads, or tokio tasks. Each unit of work
/// ends by sending its `Step` back to the loop.
pub(crate) trait Driver<'o> {
    fn jobs(&self) -> Vec<JobRecord>;
    fn continue_goal(&self, goal: &str) -> Option<Content>;
    fn prediction_source(&self) -> Option<i32>;
    fn start_turn(&mut self, turn: RunningTurn<'o>);
    fn start_compaction(&mut self, compaction: RunningCompaction<'o>);
    fn stop_job(&mut self, out: EventWriter<'o>, request: JobStop);
    fn predict(&mut self, prediction: Prediction);
}

/// A `job_stop` command's fields.
pub(crate) struct JobStop {
    pub(crate) request_id: String,
    pub(crate) generation: String,
    pub(crate) job_id: String,
}

impl JobStop {
    pub(crate) fn answer(self, outcome: JobStopOutcome) -> Event {
        Event::job_stop_result(self.request_id, self.generation, self.job_id, outcome)
    }
}

/// A turn's terminal event from how it ended, unless it wrote its own,
/// for the loop to write when it takes the turn's end (so no command read
/// after the end was written is taken before it); and whether it finished
/// cleanly (what auto-continuation and the prediction key off).
pub(crate) fn end_turn(
    turn: &mut RunningTurn<'_>,
    result: Result<Result<String, WorkError>, Box<dyn Any + Send>>,
) -> Step {
    let end = match result {
        _ if turn.ended || turn.literal => turn.own_end.take(),
        _ if turn.is_cancelled() => Some(Event::agent_aborted("interrupted")),
        Ok(Ok(answer)) => Some(Event::agent_finished(answer)),
        Ok(Err(error)) => Some(Event::turn_failed(error.to_string())),
        Err(panic) => Some(Event::turn_failed(panic_message("turn", &*panic))),
    };
    // It wrote its own end: finished if that was `agent_finished`.
    let finished = end.as_ref().map_or(turn.finished, |event| {
        matches!(event, Event::AgentFinished { .. })
    });
    Step::TurnDone {
        finished,
        end,
        yielded: turn.yielded,
    }
}

/// Writes a compaction's end from how it ended.
pub(crate) fn end_compaction(
    compaction: &RunningCompaction<'_>,
    result: Result<Result<Compacted, WorkError>, Box<dyn Any + Send>>,
) {
    let out = &compaction.lent.out;
    let _ = match result {
        _ if compaction.is_cancelled() => out.write(&Event::compaction_failed("cancelled")),
        Ok(Ok(Compacted {
            from_sequence,
            to_sequence,
            summary,
        })) => compaction
            .started(from_sequence, to_sequence)
            .and_then(|()| {
                out.write(&Event::compaction_finished(
                    from_sequence,
                    to_sequence,
                    summary,
                ))
            }),
        Ok(Err(error)) => out.write(&Event::compaction_failed(error.to_string())),
        Err(panic) => out.write(&Event::compaction_failed(panic_message(
            "compaction",
            &*panic,
        ))),
    };
}

/// The blocking loop's work: scoped threads, so the engine and the output
/// may be borrowed.
struct ThreadDriver<'scope, 'env, 'e, E> {
    engine: &'e E,
    scope: &'scope Scope<'scope, 'env>,
    steps: Sender<Step>,
    in_order: bool,
}

impl<'scope, 'env, 'e: 'scope, 'o: 'scope, E: Engine> Driver<'o>
    for ThreadDriver<'scope, 'env, 'e, E>
{
    fn jobs(&self) -> Vec<JobRecord> {
        self.engine.jobs()
    }

    fn continue_goal(&self, goal: &str) -> Option<Content> {
        self.engine.continue_goal(goal)
    }

    fn prediction_source(&self) -> Option<i32> {
        self.engine.prediction_source()
    }

    fn start_turn(&mut self, mut turn: RunningTurn<'o>) {
        let (engine, steps) = (self.engine, self.steps.clone());
        self.scope.spawn(move || {
            let result = panic::catch_unwind(AssertUnwindSafe(|| engine.turn(&mut turn)));
            let _ = steps.send(end_turn(&mut turn, result));
        });
    }

    fn start_compaction(&mut self, compaction: RunningCompaction<'o>) {
        let (engine, steps) = (self.engine, self.steps.clone());
        self.scope.spawn(move || {
            let result = panic::catch_unwind(AssertUnwindSafe(|| engine.compact(&compaction)));
            end_compaction(&compaction, result);
            let _ = steps.send(Step::CompactDone);
        });
    }

    fn stop_job(&mut self, out: EventWriter<'o>, request: JobStop) {
        let engine = self.engine;
        self.helper(move || {
            let outcome = engine.stop_job(&request.generation, &request.job_id);
            let _ = out.write(&request.answer(outcome));
        });
    }

    fn predict(&mut self, prediction: Prediction) {
        let (engine, steps) = (self.engine, self.steps.clone());
        self.helper(move || {
            // A panic is a prediction that failed to generate: upstream
            // drops those unwritten.
            let outcome = panic::catch_unwind(AssertUnwindSafe(|| engine.predict(&prediction)))
                .unwrap_or(PredictionOutcome::Skipped);
            let _ = steps.send(Step::Predicted(prediction, outcome));
        });
    }
}

impl<'scope, 'env, 'e, E> ThreadDriver<'scope, 'env, 'e, E> {
    /// Answers a request on a thread of its own (upstream spawns a task for
    /// each), or at once in order. The scope joins it.
    fn helper(&mut self, job: impl FnOnce() + Send + 'scope) {
        if self.in_order {
            job();
        } else {
            self.scope.spawn(job);
        }
    }
}

/// One step for the loop's single consumer (upstream's `ServeStep`).
#[derive(Debug)]
pub(crate) enum Step {
    Wire(Command),
    TurnDone {
        finished: bool,
        /// The terminal event to write, unless the turn wrote its own.
        end: Option<Event>,
        /// The turn wrote `context_yield`.
        yielded: bool,
    },
    CompactDone,
    /// A turn waits for an approval (read only in in-order mode).
    Parked,
    /// A prediction's outcome, from its own thread or task.
    Predicted(Prediction, PredictionOutcome),
    Shutdown,
}

/// Work queued behind the active work (upstream's `PendingWork`).
enum Pending {
    Prompt(Content, Option<String>),
    Compact,
    /// A goal command, the command context queued before it, whether it
    /// set `auto`, and its serial.
    Goal(Option<String>, Vec<Queued>, bool, u64),
    /// Context that arrived after a queued goal.
    Context(Queued),
}

enum ActiveKind {
    Turn,
    Compaction,
}

struct Active {
    kind: ActiveKind,
    control: Arc<Control>,
}

/// The loop's state, owned by its one consumer.
pub(crate) struct Pump<'o, D> {
    driver: D,
    out: EventWriter<'o>,
    parked_signal: Option<Parked<'o>>,
    inbox: Arc<Inbox>,
    asked: Arc<AtomicU64>,
    active: Option<Active>,
    /// A turn waits for an answer (in-order mode).
    parked: bool,
    pending: VecDeque<Pending>,
    shutting_down: bool,
    done: bool,
    /// Goal auto-continuation (loop.mbt's `goal_auto_*`): the intent waiting to be
    /// applied, the goal armed, the turns left, and whether it was armed at
    /// this boundary (its first turn is the controller's).
    auto_pending: Option<(String, u64)>,
    auto_target: Option<String>,
    turns_remaining: i32,
    promoted_this_boundary: bool,
    /// Counts goal commands and cancels: a queued auto goal arms only if no
    /// later one superseded it.
    serial: u64,
    /// The prediction running: its source sequence and cancel flag.
    prediction: Option<(i32, Arc<AtomicBool>)>,
}

impl<'o, D: Driver<'o>> Pump<'o, D> {
    pub(crate) fn new(driver: D, out: EventWriter<'o>, parked_signal: Option<Parked<'o>>) -> Self {
        Pump {
            driver,
            out,
            parked_signal,
            inbox: Arc::default(),
            asked: Arc::default(),
            active: None,
            parked: false,
            pending: VecDeque::new(),
            shutting_down: false,
            done: false,
            auto_pending: None,
            auto_target: None,
            turns_remaining: 0,
            promoted_this_boundary: false,
            serial: 0,
            prediction: None,
        }
    }

    /// The driver, once the loop is done (to await its helpers).
    #[cfg(feature = "tokio")]
    pub(crate) fn driver_mut(&mut self) -> &mut D {
        &mut self.driver
    }

    /// Whether the loop is done: the input ended and its work with it.
    pub(crate) fn done(&self) -> bool {
        self.done
    }

    /// In order: whether the work has more to run before the next command
    /// is read (it has neither ended nor stopped at a question).
    pub(crate) fn busy(&self) -> bool {
        self.active.is_some() && !self.parked
    }

    fn write(&self, event: &Event) {
        // A failed write is remembered by the writer; the loop ends once
        // its work has.
        let _ = self.out.write(event);
    }

    pub(crate) fn step(&mut self, step: Step) {
        match step {
            Step::Wire(command) => self.command(command),
            Step::Predicted(prediction, outcome) => {
                // loop.mbt @ fdf10827 PredictionDone: written only if it is
                // still the pending one (a command that moves the session
                // on cancels it first), and only `completed`, or `failed`
                // when saving it failed; the rest is dropped, silently.
                let current = self
                    .prediction
                    .as_ref()
                    .is_some_and(|p| Arc::ptr_eq(&p.1, &prediction.cancelled));
                if current {
                    self.prediction = None;
                    if matches!(
                        outcome,
                        PredictionOutcome::Completed { .. } | PredictionOutcome::Failed(_)
                    ) {
                        self.write(&prediction.answer(outcome));
                    }
                }
            }
            Step::Parked => self.parked = true,
            Step::TurnDone {
                finished,
                end,
                yielded,
            } => {
                if let Some(end) = end {
                    self.write(&end);
                }
                self.turn_done(finished, yielded);
            }
            Step::CompactDone => {
                self.end_active();
                self.start_next_pending();
                // Left idle: context deferred during the compaction has no
                // turn to take it (loop.mbt CompactDone).
                if self.active.is_none() {
                    self.drain_idle();
                }
                self.maybe_exit();
            }
            Step::Shutdown => {
                self.cancel_prediction();
                self.shutting_down = true;
                // Nobody is left to answer a question.
                if let Some(active) = &self.active {
                    active.control.withdraw();
                }
                self.parked = false;
                self.maybe_exit();
            }
        }
    }

    fn maybe_exit(&mut self) {
        if self.shutting_down && self.active.is_none() && self.pending.is_empty() {
            self.done = true;
        }
    }

    fn command(&mut self, command: Command) {
        // What changes the conversation cancels the prediction, silently
        // (loop.mbt @ fdf10827, before each step); `jobs_snapshot`,
        // `job_stop` and `approval` do not.
        if matches!(
            command,
            Command::Prompt { .. }
                | Command::Steer { .. }
                | Command::Compact
                | Command::Cancel
                | Command::GoalSet { .. }
                | Command::GoalClear
        ) {
            self.cancel_prediction();
        }
        match command {
            Command::Prompt {
                content,
                submission_id,
                ..
            } => {
                if self.active.is_some() {
                    self.pending
                        .push_back(Pending::Prompt(content, submission_id));
                } else {
                    self.start_turn(content, submission_id);
                }
            }
            Command::Steer {
                kind: SteerKind::Prompt,
                content,
                submission_id,
                ..
            } => {
                if matches!(
                    self.active,
                    Some(Active {
                        kind: ActiveKind::Turn,
                        ..
                    })
                ) || self.has_pending_prompt()
                {
                    self.queue_steer(Queued::Prompt(content, submission_id));
                } else {
                    // An idle engine never turns a steer into a prompt.
                    self.write(&Event::steer_dropped(content, submission_id));
                }
            }
            Command::Steer {
                content,
                submission_id,
                ..
            } => {
                let input = Queued::Command(content, submission_id);
                if self.has_pending_goal() {
                    self.pending.push_back(Pending::Context(input));
                } else if self.active.is_some() || self.has_pending_prompt() {
                    self.queue_steer(input);
                } else {
                    self.apply_idle(input);
                }
            }
            Command::JobsSnapshot { request_id, .. } => {
                self.write(&Event::jobs_snapshot(request_id, self.driver.jobs()));
            }
            Command::JobStop {
                request_id,
                generation,
                job_id,
                ..
            } => {
                let request = JobStop {
                    request_id,
                    generation,
                    job_id,
                };
                self.driver.stop_job(self.out.clone(), request);
            }
            Command::Cancel => {
                // A cancel stops the autonomous loop too (loop.mbt Cancel).
                self.serial += 1;
                self.auto_pending = None;
                self.auto_target = None;
                self.turns_remaining = 0;
                match &self.active {
                    Some(active) => {
                        active.control.cancel();
                        self.parked = false;
                    }
                    None => {
                        if let Some(i) = self
                            .pending
                            .iter()
                            .position(|p| matches!(p, Pending::Prompt(..)))
                        {
                            self.pending.remove(i);
                        }
                    }
                }
            }
            Command::ApprovalDecision { id, allow, .. } => {
                // Never queued: the tool it answers is already blocked on it.
                if let Some(active) = &self.active {
                    if active.control.settle(&id, allow) {
                        self.parked = false;
                    }
                }
            }
            Command::Compact => {
                if self.active.is_some() {
                    self.pending.push_back(Pending::Compact);
                } else {
                    self.start_compaction();
                }
            }
            Command::GoalSet { text, auto, .. } => self.goal(Some(text), auto),
            Command::GoalClear => self.goal(None, false),
        }
    }

    /// After a successful idle turn (loop.mbt @ fdf10827, the end of the
    /// `TurnDone` arm), the engine's one prediction, on a thread (or task)
    /// of its own, if the engine gives a source sequence.
    fn start_prediction(&mut self) {
        let Some(source_sequence) = self.driver.prediction_source() else {
            return;
        };
        self.cancel_prediction();
        let cancelled = Arc::new(AtomicBool::new(false));
        self.prediction = Some((source_sequence, Arc::clone(&cancelled)));
        self.driver.predict(Prediction {
            source_sequence,
            cancelled,
        });
    }

    /// Cancels the prediction running: nothing is written for it.
    fn cancel_prediction(&mut self) {
        if let Some((_, cancelled)) = self.prediction.take() {
            cancelled.store(true, Ordering::Release);
        }
    }

    /// A goal command (loop.mbt Goal): applied behind pending work, steered
    /// into a running turn, or applied at once.
    fn goal(&mut self, goal: Option<String>, auto: bool) {
        self.serial += 1;
        let serial = self.serial;
        self.auto_pending = match (&goal, auto) {
            (Some(text), true) => Some((text.clone(), serial)),
            _ => None,
        };
        self.auto_target = None;
        self.turns_remaining = 0;
        let compacting = matches!(
            self.active,
            Some(Active {
                kind: ActiveKind::Compaction,
                ..
            })
        );
        if !self.pending.is_empty() || compacting {
            // The queued entry owns its auto intent.
            self.auto_pending = None;
            let turn_ahead = matches!(
                self.active,
                Some(Active {
                    kind: ActiveKind::Turn,
                    ..
                })
            ) || self.has_pending_prompt();
            let context = if turn_ahead {
                Vec::new()
            } else {
                self.take_context_before_goal()
            };
            self.pending
                .push_back(Pending::Goal(goal, context, auto, serial));
        } else if self.active.is_some() {
            self.queue_steer(Queued::Goal(goal, serial));
        } else {
            self.apply_goal(goal, serial);
            self.maybe_promote(false);
        }
    }

    /// The queued command context before the first queued prompt steer.
    fn take_context_before_goal(&mut self) -> Vec<Queued> {
        let mut inbox = lock(&self.inbox.state);
        let boundary = inbox
            .queue
            .iter()
            .position(|q| matches!(q, Queued::Prompt(..)))
            .unwrap_or(inbox.queue.len());
        inbox.queue.drain(..boundary).collect()
    }

    fn queue_steer(&self, input: Queued) {
        lock(&self.inbox.state).queue.push_back(input);
    }

    fn has_pending_prompt(&self) -> bool {
        self.pending
            .iter()
            .any(|p| matches!(p, Pending::Prompt(..)))
    }

    fn has_pending_goal(&self) -> bool {
        self.pending.iter().any(|p| matches!(p, Pending::Goal(..)))
    }

    /// Writes `goal_updated` and makes `goal` the one standing.
    fn apply_goal(&self, goal: Option<String>, serial: u64) {
        let mut inbox = lock(&self.inbox.state);
        inbox.goal.clone_from(&goal);
        inbox.goal_serial = serial;
        self.write(&Event::goal_updated(goal));
    }

    /// Arms a pending auto intent once its goal stands.
    fn maybe_promote(&mut self, defer_continue: bool) {
        let Some((text, serial)) = &self.auto_pending else {
            return;
        };
        let stands = {
            let inbox = lock(&self.inbox.state);
            inbox.goal.as_deref() == Some(text.as_str()) && inbox.goal_serial >= *serial
        };
        if stands {
            let text = text.clone();
            self.arm(text, defer_continue);
        }
    }

    fn arm(&mut self, text: String, defer_continue: bool) {
        self.auto_target = Some(text);
        self.turns_remaining = GOAL_AUTO_CONTINUE_MAX_TURNS;
        self.auto_pending = None;
        if defer_continue {
            self.promoted_this_boundary = true;
        }
    }

    /// An input applied with no turn to take it (loop.mbt
    /// `apply_idle_context_input`).
    fn apply_idle(&mut self, input: Queued) {
        match input {
            Queued::Prompt(content, submission_id) => {
                self.write(&Event::steer_dropped(content, submission_id));
            }
            Queued::Command(content, submission_id) => {
                self.write(&Event::steer_applied(
                    AppliedSteerKind::Command,
                    content,
                    submission_id,
                ));
            }
            Queued::Goal(goal, serial) => {
                self.apply_goal(goal, serial);
                self.maybe_promote(true);
            }
        }
    }

    /// Steers left when work ends: prompt steers dropped, the rest applied.
    fn drain_idle(&mut self) {
        let queued: Vec<Queued> = lock(&self.inbox.state).queue.drain(..).collect();
        for input in queued {
            self.apply_idle(input);
        }
    }

    fn start_next_pending(&mut self) {
        while self.active.is_none() {
            let Some(next) = self.pending.pop_front() else {
                break;
            };
            match next {
                Pending::Prompt(content, submission_id) => self.start_turn(content, submission_id),
                Pending::Compact => self.start_compaction(),
                Pending::Context(input) => self.apply_idle(input),
                Pending::Goal(goal, context, auto, serial) => {
                    for input in context {
                        self.apply_idle(input);
                    }
                    let text = goal.clone();
                    self.apply_goal(goal, serial);
                    if let (true, true, Some(text)) = (auto, serial == self.serial, text) {
                        self.arm(text, true);
                    }
                }
            }
        }
    }

    fn turn_done(&mut self, finished: bool, yielded: bool) {
        self.promoted_this_boundary = false;
        self.drain_idle();
        self.end_active();
        self.start_next_pending();
        self.maybe_promote(false);
        let standing = lock(&self.inbox.state).goal.clone();
        let armed = self.auto_target.is_some()
            && standing == self.auto_target
            && !self.promoted_this_boundary;
        let idle = self.active.is_none() && self.pending.is_empty();
        if armed && finished && idle && !self.shutting_down {
            let goal = standing.unwrap_or_default();
            if self.turns_remaining > 0 {
                match self.driver.continue_goal(&goal) {
                    Some(prompt) => {
                        self.turns_remaining -= 1;
                        self.write(&Event::goal_continue(self.turns_remaining));
                        self.start_turn(prompt, None);
                    }
                    // Met: nothing left to continue toward.
                    None => self.auto_target = None,
                }
            } else {
                self.auto_target = None;
                self.write(&Event::goal_budget_exhausted(GOAL_AUTO_CONTINUE_MAX_TURNS));
            }
        }
        // A successful, idle turn owns its one prediction; queued work and
        // goal continuation come first (loop.mbt @ fdf10827).
        if finished
            && !yielded
            && self.active.is_none()
            && self.pending.is_empty()
            && !self.shutting_down
        {
            self.start_prediction();
        }
        self.maybe_exit();
    }

    fn end_active(&mut self) {
        self.active = None;
        self.parked = false;
    }

    fn lend(&self, control: &Arc<Control>) -> Lent<'o> {
        Lent {
            out: self.out.clone(),
            control: Arc::clone(control),
            inbox: Arc::clone(&self.inbox),
            asked: Arc::clone(&self.asked),
            parked: self.parked_signal.clone(),
        }
    }

    fn new_control(&self) -> Arc<Control> {
        let control = Arc::new(Control::default());
        if self.shutting_down {
            control.withdraw();
        }
        control
    }

    fn start_turn(&mut self, content: Content, submission_id: Option<String>) {
        let control = self.new_control();
        let turn = RunningTurn {
            content,
            submission_id,
            lent: self.lend(&control),
            ended: false,
            finished: false,
            yielded: false,
            own_end: None,
            literal: false,
        };
        self.active = Some(Active {
            kind: ActiveKind::Turn,
            control,
        });
        self.driver.start_turn(turn);
    }

    fn start_compaction(&mut self) {
        let control = self.new_control();
        let compaction = RunningCompaction {
            lent: self.lend(&control),
            started: AtomicBool::new(false),
        };
        self.active = Some(Active {
            kind: ActiveKind::Compaction,
            control,
        });
        self.driver.start_compaction(compaction);
    }
}

pub(crate) fn panic_message(what_panicked: &str, panic: &(dyn std::any::Any + Send)) -> String {
    let what = panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str));
    match what {
        Some(what) => format!("the {what_panicked} panicked: {what}"),
        None => format!("the {what_panicked} panicked"),
    }
}
