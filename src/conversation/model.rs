//! The serve loop's bookkeeping, with no I/O: what an event answers and
//! which turn it belongs to.
//!
//! The engine reads commands on one task and runs work on others, so an
//! event says nothing of which commands the engine had read when it wrote
//! it. The model therefore keeps what was sent and not yet answered, in
//! wire order, and lets each event say what it can: a turn's first event
//! starts the oldest queued prompt's turn (one at a time, in wire order), a
//! reply takes the oldest unanswered command it can answer. Every rule, with
//! the line of upstream's `loop.mbt` it rests on, is in `docs/PROTOCOL.md`.

use crate::v2::{AppliedSteerKind, Command, CommandReader, Event, SteerKind};
use std::collections::VecDeque;
use std::fmt;
use std::mem;

/// One `openseek serve` session, as the lines crossing its pipes show it.
///
/// Feed it every line the controller writes ([`Conversation::command`])
/// and every line the engine writes on stdout ([`Conversation::event`]),
/// in the order they cross (as `serve-command tap` logs them). Each event
/// comes back with its [`Attribution`]: the command line it answers and
/// the command line that started the turn it belongs to, by the same
/// numbers the tap's log gives the lines (`n`, per direction, from 1, blank
/// lines counted). [`Conversation::owed`] says what the engine still owes.
///
/// Commands are read as `openseek serve` reads them: a line that is not a
/// command, or that serve's policy declines, is refused and owed one
/// `command_error`; after a line that is not JSON (or over the line limit)
/// the engine reads no further command, so later lines are owed nothing.
///
/// An event that fits no rule (a turn event with no turn running, a reply
/// to a request never sent, a second terminal event) is attributed to
/// nothing and carries a [`violation`](Attribution::violation); the model
/// goes on. No input panics it.
///
/// ```
/// use serve_command::v2::serve::Conversation;
///
/// let mut conversation = Conversation::new();
/// let prompt = conversation.command(b"{\"command\":\"prompt\",\"content\":\"hi\"}\n");
/// let jobs = conversation.command(b"{\"command\":\"jobs_snapshot\",\"request_id\":\"j1\"}\n");
/// let step = conversation.event(b"{\"event\":\"agent_step\",\"step\":1}\n");
/// assert_eq!((step.answers, step.turn), (None, Some(prompt)));
/// // A reply in the middle of the turn belongs to no turn.
/// let snapshot = conversation.event(b"{\"event\":\"jobs_snapshot\",\"request_id\":\"j1\",\"jobs\":[]}\n");
/// assert_eq!((snapshot.answers, snapshot.turn), (Some(jobs), None));
/// let end = conversation.event(b"{\"event\":\"agent_finished\",\"answer\":\"hello\"}\n");
/// assert_eq!((end.answers, end.turn), (None, Some(prompt)));
/// assert!(conversation.owed().is_empty());
/// // The turn has ended: another terminal event fits no rule.
/// let again = conversation.event(b"{\"event\":\"agent_finished\",\"answer\":\"hello\"}\n");
/// assert_eq!(again.turn, None);
/// assert_eq!(
///     again.violation.as_deref(),
///     Some("agent_finished with no turn running (the turn of command 1 ended at event 3)"),
/// );
/// ```
#[derive(Debug, Default, Clone)]
pub struct Conversation {
    /// Lines seen so far in each direction.
    commands: u64,
    events: u64,
    /// The engine stopped reading commands (a line that is not JSON).
    stopped: bool,
    /// Refused command lines not yet answered by a `command_error`.
    refused: VecDeque<u64>,
    /// Requests not yet answered, in wire order.
    requests: Vec<Request>,
    /// Steers not yet answered by `steer_applied` or `steer_dropped`.
    steers: Vec<Steer>,
    /// `goal` commands not yet answered by `goal_updated`.
    goals: VecDeque<(u64, bool)>,
    /// `approval` commands answering an open question, not yet matched by
    /// its `approval_resolved`: at most one per open question.
    approvals: Vec<(String, u64)>,
    /// `approval_requested` events not yet resolved.
    asked: Vec<Asked>,
    /// Prompts and compactions sent whose work has not started.
    queue: VecDeque<Work>,
    /// The work running, as the events show it.
    running: Option<Work>,
    /// The last work that ended, and the event that ended it.
    ended: Option<(Work, u64)>,
    /// `cancel` lines that may still hit work.
    cancels: Vec<u64>,
    /// The `goal` command with `auto` whose goal the engine applied last
    /// (its `goal_updated` came, and no other goal's since): it arms the
    /// engine's own turns. Armed only once applied, so a goal command that
    /// crosses a `goal_continue` does not disown it.
    auto_goal: Option<u64>,
    /// Whether the running turn wrote `context_yield` (its end then
    /// starts no prediction).
    yielded: bool,
    /// What a `prediction_result` now would follow: the engine's own
    /// prediction is owed to no command, so this only decides whether one
    /// may come.
    prediction: PredictionWindow,
    /// Commands read that cancel a prediction upstream (a prompt, a steer,
    /// `compact`, `cancel`, a goal), counted.
    cancellers: u64,
    /// Whether the last prediction attributed came before any cancelling
    /// command was sent after its turn.
    prediction_current: bool,
}

/// Whether the engine may write its own `prediction_result` now
/// (loop.mbt @ fdf10827: one prediction after a turn that ended
/// `agent_finished` with nothing else to run, cancelled by any command
/// that moves the session on).
#[derive(Clone, Debug, Default)]
enum PredictionWindow {
    /// No turn has ended yet.
    #[default]
    None,
    /// The turn of this command finished: one prediction may follow. The
    /// second number is the count of command lines sent when its end was
    /// seen: a steer or goal answered now and sent later shows that the
    /// engine read a command that cancels the prediction; one sent before
    /// may have been drained at the turn's end, before the prediction
    /// started. The third is the count of cancelling commands then: a
    /// prediction that comes after more were sent crossed them, and is
    /// stale (though no fault).
    Open(u64, u64, u64),
    /// Why none may come now (formatted only for a violation: this is
    /// set once a turn, on the hot path).
    Closed(Closed),
}

/// Why no prediction may come now.
#[derive(Clone, Copy, Debug)]
enum Closed {
    /// The turn of this command ended with this event (`n`), not
    /// `agent_finished`.
    EndedWith(u64, &'static str, u64),
    /// The turn of this command yielded its context.
    Yielded(u64),
    /// The compaction of this command was the last work.
    Compaction(u64),
    /// The turn of this command had its prediction (event `n`).
    Had(u64, u64),
    /// The engine read command `k` (its event `name`, number `n`) after
    /// the turn of this command ended.
    Read {
        k: u64,
        name: &'static str,
        n: u64,
        turn: u64,
    },
}

impl fmt::Display for Closed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Closed::EndedWith(turn, name, n) => write!(
                f,
                "the turn of command {turn} ended with {name} (event {n}), not agent_finished"
            ),
            Closed::Yielded(turn) => {
                write!(f, "the turn of command {turn} ended by yielding its context")
            }
            Closed::Compaction(k) => write!(
                f,
                "the last work was the compaction of command {k}, which no prediction follows"
            ),
            Closed::Had(turn, n) => write!(
                f,
                "the turn of command {turn} already had its prediction (event {n})"
            ),
            Closed::Read { k, name, n, turn } => write!(
                f,
                "the engine read command {k} (its {name} is event {n}) after the turn of command {turn} ended, which cancels the prediction"
            ),
        }
    }
}

/// The attribution of one line of the engine's stdout.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Attribution {
    /// The line's number among the engine's lines, from 1 (blank lines and
    /// lines that are not events counted), as the tap's log numbers it.
    pub n: u64,
    /// The event's wire name; `None` for a line that is not an event.
    pub event: Option<&'static str>,
    /// The number of the command line this event replies to.
    pub answers: Option<u64>,
    /// The number of the command line that started the turn this event
    /// belongs to: a `prompt`, or for a turn the engine started on its own
    /// (`goal_continue`), the `goal` command with `auto` that armed it.
    pub turn: Option<u64>,
    /// Why the event fits no rule, when it does not; it is then attributed
    /// to nothing.
    pub violation: Option<String>,
    /// For a line that names an event but is not one (a field missing, a
    /// value of the wrong type): the name it gives. `event` is then `None`,
    /// and the line is attributed by what can still be read of it (the
    /// name, its `request_id`, `submission_id` or approval `id`): an
    /// unreadable `jobs_snapshot` still answers its request, an unreadable
    /// `agent_finished` still ends its turn.
    pub unreadable: Option<String>,
}

/// What the engine still owes the controller, each by the number of the
/// line owed, oldest first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Owed {
    /// Refused command lines not yet answered by a `command_error`.
    pub refused: Vec<u64>,
    /// `jobs_snapshot` and `job_stop` commands not yet answered.
    pub requests: Vec<u64>,
    /// Steers neither applied nor dropped yet.
    pub steers: Vec<u64>,
    /// `goal` commands not yet answered by `goal_updated`.
    pub goals: Vec<u64>,
    /// `approval_requested` events (by their number among the engine's
    /// lines) that the controller has not answered and that have not
    /// settled.
    pub approvals: Vec<u64>,
    /// The command line of the turn (or compaction) that is running and has
    /// not ended.
    pub running: Option<u64>,
    /// Prompts and `compact` commands whose work has not started.
    pub queued: Vec<u64>,
}

impl Owed {
    /// Whether nothing is owed.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        *self == Owed::default()
    }

    /// Every command line owed something, kind by kind (refused lines,
    /// requests, steers, goals, the running work, the queued work); the
    /// approval questions, which are event lines, are left out.
    pub fn commands(&self) -> impl Iterator<Item = u64> + '_ {
        self.refused
            .iter()
            .chain(&self.requests)
            .chain(&self.steers)
            .chain(&self.goals)
            .chain(&self.running)
            .chain(&self.queued)
            .copied()
    }
}

/// The commands answered by `request_id`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    JobsSnapshot,
    JobStop,
}

impl Kind {
    fn command(self) -> &'static str {
        match self {
            Kind::JobsSnapshot => "jobs_snapshot",
            Kind::JobStop => "job_stop",
        }
    }
}

#[derive(Clone, Debug)]
struct Request {
    kind: Kind,
    id: String,
    n: u64,
}

#[derive(Clone, Debug)]
struct Steer {
    kind: SteerKind,
    id: Option<String>,
    n: u64,
}

#[derive(Clone, Debug)]
struct Asked {
    id: String,
    /// The `approval_requested` event's number.
    n: u64,
    turn: u64,
}

/// Work the engine runs one at a time, by the command line it belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Work {
    Turn(u64),
    Compaction(u64),
}

impl Work {
    fn n(self) -> u64 {
        match self {
            Work::Turn(n) | Work::Compaction(n) => n,
        }
    }

    fn describe(self) -> String {
        match self {
            Work::Turn(n) => format!("the turn of command {n}"),
            Work::Compaction(n) => format!("the compaction of command {n}"),
        }
    }
}

/// What an event is, for attribution.
enum Role<'a> {
    CommandError,
    Reply(Kind, &'a str),
    /// `steer_applied` (with the kind it names) or `steer_dropped`.
    Steer {
        applied: Option<&'a str>,
        id: Option<&'a str>,
    },
    Goal,
    Compaction(Phase),
    ApprovalRequested(&'a str),
    ApprovalResolved(&'a str),
    Terminal {
        aborted: bool,
    },
    InTurn,
    GoalContinue,
    /// The engine's own `prediction_result`.
    Prediction,
    /// `context_yield`: a turn event, whose turn then starts no prediction.
    ContextYield,
    Other,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Started,
    Finished,
    Failed,
}

type Verdict = Result<(Option<u64>, Option<u64>), String>;

impl Conversation {
    /// A conversation before any line.
    #[must_use]
    pub fn new() -> Conversation {
        Conversation::default()
    }

    /// The controller's next line (its LF optional), read as `openseek
    /// serve` reads it; returns its number among the controller's lines.
    pub fn command(&mut self, line: &[u8]) -> u64 {
        self.commands += 1;
        let n = self.commands;
        if self.stopped {
            // The engine never reads it: it is owed nothing.
            return n;
        }
        match CommandReader::new(line).next() {
            None => {}
            Some(Err(error)) => {
                self.refused.push_back(n);
                self.stopped = error.is_stream_error();
            }
            Some(Ok(command)) if command.serve_refusal().is_some() => self.refused.push_back(n),
            Some(Ok(command)) => self.read(n, command),
        }
        n
    }

    /// A command the engine acts on.
    fn read(&mut self, n: u64, command: Command) {
        let request = |kind, id: String| Request { kind, id, n };
        if matches!(
            command,
            Command::Prompt { .. }
                | Command::Steer { .. }
                | Command::Compact
                | Command::Cancel
                | Command::GoalSet { .. }
                | Command::GoalClear
        ) {
            self.cancellers += 1;
        }
        match command {
            Command::Prompt { .. } => self.queue.push_back(Work::Turn(n)),
            Command::Compact => self.queue.push_back(Work::Compaction(n)),
            Command::Cancel => self.cancels.push(n),
            Command::Steer {
                kind,
                submission_id,
                ..
            } => self.steers.push(Steer {
                kind,
                id: submission_id,
                n,
            }),
            Command::JobsSnapshot { request_id } => {
                self.requests.push(request(Kind::JobsSnapshot, request_id));
            }
            Command::JobStop { request_id, .. } => {
                self.requests.push(request(Kind::JobStop, request_id));
            }
            Command::GoalSet { auto, .. } => {
                self.goals.push_back((n, auto));
            }
            Command::GoalClear => {
                self.goals.push_back((n, false));
            }
            // Only an answer to a question still open is kept, the first
            // one: the engine ignores any other, and keeping them would let
            // a stream of stray answers grow the model without bound.
            Command::ApprovalDecision { id, .. } => {
                let open = self.asked.iter().any(|a| a.id == id);
                if open && !self.approvals.iter().any(|(a, _)| *a == id) {
                    self.approvals.push((id, n));
                }
            }
        }
    }

    /// The engine's next stdout line (its LF optional): what it answers and
    /// which turn it belongs to.
    pub fn event(&mut self, line: &[u8]) -> Attribution {
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        match Event::from_slice(line) {
            Ok(event) => self.decoded(Some(&event)),
            Err(_) => self.unreadable(line),
        }
    }

    /// The engine's next stdout line, which is not an event: counted, and
    /// when it is a JSON object naming an event, attributed by what can
    /// still be read of it ([`Attribution::unreadable`]); otherwise
    /// attributed to nothing.
    pub fn unreadable(&mut self, line: &[u8]) -> Attribution {
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        let mut attribution = self.decoded(None);
        let Ok(serde_json::Value::Object(object)) = serde_json::from_slice(line) else {
            return attribution;
        };
        let Some(seen) = Seen::of_json(&object) else {
            return attribution;
        };
        attribution.unreadable = Some(seen.name.to_owned());
        match self.attribute(attribution.n, &seen) {
            Ok((answers, turn)) => {
                attribution.answers = answers;
                attribution.turn = turn;
            }
            Err(reason) => attribution.violation = Some(reason),
        }
        attribution
    }

    /// The engine's next stdout line, already decoded: `None` for a line
    /// that is not an event (blank, not JSON, not an event), which is
    /// counted and attributed to nothing. For a reader that decodes each
    /// line once (the [`Controller`](crate::v2::serve::Controller)).
    pub fn decoded(&mut self, event: Option<&Event>) -> Attribution {
        self.events += 1;
        let n = self.events;
        let mut attribution = Attribution {
            n,
            event: None,
            answers: None,
            turn: None,
            violation: None,
            unreadable: None,
        };
        // A line that is not an event is stray output: nothing to attribute.
        let Some(event) = event else {
            return attribution;
        };
        attribution.event = Some(event.name());
        match self.attribute(n, &Seen::of_event(event)) {
            Ok((answers, turn)) => {
                attribution.answers = answers;
                attribution.turn = turn;
            }
            Err(reason) => attribution.violation = Some(reason),
        }
        attribution
    }

    /// How many commands that cancel an engine's prediction (a prompt, a
    /// steer, `compact`, `cancel`, a goal) the engine has been sent.
    pub(crate) fn cancellers(&self) -> u64 {
        self.cancellers
    }

    /// Whether the `prediction_result` just attributed is still current:
    /// no command that cancels it was sent since its turn ended, and none
    /// sent before is still waiting to be taken (a queued prompt, a steer,
    /// a goal). One that crossed such a command is no fault, but the
    /// session has moved on.
    pub(crate) fn prediction_current(&self) -> bool {
        self.prediction_current
    }

    /// What the engine still owes, now.
    #[must_use]
    pub fn owed(&self) -> Owed {
        Owed {
            refused: self.refused.iter().copied().collect(),
            requests: self.requests.iter().map(|r| r.n).collect(),
            steers: self.steers.iter().map(|s| s.n).collect(),
            goals: self.goals.iter().map(|&(n, _)| n).collect(),
            approvals: self
                .asked
                .iter()
                .filter(|a| !self.approvals.iter().any(|(id, _)| *id == a.id))
                .map(|a| a.n)
                .collect(),
            running: self.running.map(Work::n),
            queued: self.queue.iter().map(|w| w.n()).collect(),
        }
    }

    /// Attributes one event, changing nothing when it fits no rule.
    fn attribute(&mut self, n: u64, seen: &Seen<'_>) -> Verdict {
        let name = seen.name;
        let Some(role) = seen.role() else {
            return Err(format!("{name} without the id that says what it answers"));
        };
        match role {
            Role::CommandError => match self.refused.pop_front() {
                Some(k) => Ok((Some(k), None)),
                None => Err("a command_error with no refused line left to answer".to_owned()),
            },
            Role::Reply(kind, id) => {
                let i = self
                    .requests
                    .iter()
                    .position(|r| r.kind == kind && r.id == id)
                    .ok_or_else(|| {
                        format!(
                            "{name} answers no {} command: none unanswered with request_id {}",
                            kind.command(),
                            quote(id)
                        )
                    })?;
                Ok((Some(self.requests.remove(i).n), None))
            }
            Role::Steer { applied, id } => self.steer(name, applied, id),
            Role::Goal => match self.goals.pop_front() {
                Some((k, auto)) => {
                    self.auto_goal = auto.then_some(k);
                    self.read_after_end(k, "goal_updated", n);
                    Ok((Some(k), None))
                }
                None => Err("goal_updated with no goal command left to answer".to_owned()),
            },
            Role::Compaction(phase) => self.compaction(name, phase),
            Role::ApprovalRequested(id) => {
                let turn = self.turn(name)?;
                self.asked.push(Asked {
                    id: id.to_owned(),
                    n,
                    turn,
                });
                Ok((None, Some(turn)))
            }
            Role::ApprovalResolved(id) => {
                let i = self.asked.iter().position(|a| a.id == id).ok_or_else(|| {
                    format!(
                        "approval_resolved for {}, which no unsettled approval_requested asked",
                        quote(id)
                    )
                })?;
                let asked = self.asked.remove(i);
                let answers = self
                    .approvals
                    .iter()
                    .position(|(a, _)| *a == id)
                    .map(|i| self.approvals.remove(i).1);
                Ok((answers, Some(asked.turn)))
            }
            Role::Terminal { aborted } => {
                let turn = self.turn(name)?;
                self.running = None;
                self.ended = Some((Work::Turn(turn), n));
                // loop.mbt @ fdf10827: only a turn whose last item is
                // `Terminal(Finished(_))` is followed by a prediction.
                self.prediction = if aborted {
                    PredictionWindow::Closed(Closed::EndedWith(turn, "agent_aborted", n))
                } else if name != "agent_finished" {
                    PredictionWindow::Closed(Closed::EndedWith(turn, "turn_failed", n))
                } else if mem::take(&mut self.yielded) {
                    PredictionWindow::Closed(Closed::Yielded(turn))
                } else {
                    PredictionWindow::Open(turn, self.commands, self.cancellers)
                };
                // Every cancel left is newer than the turn's command
                // (`start` retired the older ones): the oldest is the one
                // that hit it.
                let answers = (aborted && !self.cancels.is_empty()).then(|| self.cancels.remove(0));
                Ok((answers, Some(turn)))
            }
            Role::InTurn => Ok((None, Some(self.turn(name)?))),
            Role::ContextYield => {
                let turn = self.turn(name)?;
                self.yielded = true;
                Ok((None, Some(turn)))
            }
            Role::Prediction => self.prediction(n),
            Role::GoalContinue => {
                if let Some(work) = self.running {
                    return Err(format!("goal_continue while {} runs", work.describe()));
                }
                let goal = self
                    .auto_goal
                    .ok_or("goal_continue with no goal command that set auto")?;
                self.start(Work::Turn(goal));
                Ok((None, None))
            }
            Role::Other => Ok((None, None)),
        }
    }

    /// The running turn, starting the oldest queued prompt's turn when none
    /// runs (compactions queued before it ended without a word).
    fn turn(&mut self, name: &str) -> Result<u64, String> {
        match self.running {
            Some(Work::Turn(k)) => return Ok(k),
            Some(work) => return Err(format!("{name} while {} runs", work.describe())),
            None => {}
        }
        let Some(i) = self.queue.iter().position(|w| matches!(w, Work::Turn(_))) else {
            return Err(match self.ended {
                Some((work, e)) => format!(
                    "{name} with no turn running ({} ended at event {e})",
                    work.describe()
                ),
                None => format!("{name} with no turn running (no prompt was sent)"),
            });
        };
        self.queue.drain(..i);
        let work = self.queue.pop_front().unwrap_or(Work::Turn(0));
        self.start(work);
        Ok(work.n())
    }

    /// `work` starts: a cancel read before its command can no longer hit it.
    fn start(&mut self, work: Work) {
        self.yielded = false;
        self.running = Some(work);
        self.cancels.retain(|&c| c > work.n());
    }

    fn steer(&mut self, name: &str, applied: Option<&str>, id: Option<&str>) -> Verdict {
        // A steer without a tag is answered without one; `kind` says which
        // steers can be (`steer_dropped`: prompt steers only).
        let applied = applied.map(AppliedSteerKind::from);
        let kind = match applied {
            None | Some(AppliedSteerKind::Prompt) => Some(SteerKind::Prompt),
            Some(AppliedSteerKind::Command) => Some(SteerKind::Command),
            Some(_) => None,
        };
        let i = self
            .steers
            .iter()
            .position(|s| s.id.as_deref() == id && kind.is_none_or(|k| k == s.kind))
            .ok_or_else(|| match id {
                Some(id) => format!(
                    "{name} answers no steer: none unanswered with submission_id {}",
                    quote(id)
                ),
                None => format!("{name} answers no steer: none unanswered without a submission_id"),
            })?;
        // A prompt steer applied lands inside a turn (the running one, or
        // the queued prompt's, at its first step).
        let turn = match applied {
            Some(AppliedSteerKind::Prompt) => Some(self.turn(name)?),
            _ => None,
        };
        let k = self.steers.remove(i).n;
        let name = if applied.is_some() {
            "steer_applied"
        } else {
            "steer_dropped"
        };
        self.read_after_end(k, name, self.events);
        Ok((Some(k), turn))
    }

    /// An event answering command `k`, which cancels a prediction when the
    /// engine reads it: if `k` was sent after the turn's end was seen, the
    /// engine read it after the prediction could start, so none may come
    /// now. (One sent before may have been taken at the turn's end, before
    /// the prediction started: that proves nothing.)
    fn read_after_end(&mut self, k: u64, name: &'static str, n: u64) {
        if let PredictionWindow::Open(turn, sent, _) = self.prediction {
            if k > sent {
                self.prediction = PredictionWindow::Closed(Closed::Read { k, name, n, turn });
            }
        }
    }

    /// The engine's own `prediction_result`: it belongs to the turn it
    /// follows, answers no command, and may come once after a turn that
    /// finished, before anything shows the engine moved on.
    fn prediction(&mut self, n: u64) -> Verdict {
        if let Some(work) = self.running {
            return Err(format!(
                "prediction_result while {} runs: the engine predicts only between turns",
                work.describe()
            ));
        }
        match mem::take(&mut self.prediction) {
            PredictionWindow::Open(turn, _, cancellers) => {
                // Stale when a command that moves the session on was sent
                // since the turn's end, or was sent before it and is still
                // unanswered (a prompt or compact queued, a steer or goal
                // not yet taken): the engine predicted before reading it.
                self.prediction_current = cancellers == self.cancellers
                    && self.queue.is_empty()
                    && self.steers.is_empty()
                    && self.goals.is_empty();
                self.prediction = PredictionWindow::Closed(Closed::Had(turn, n));
                Ok((None, Some(turn)))
            }
            PredictionWindow::Closed(why) => {
                self.prediction = PredictionWindow::Closed(why);
                Err(format!("prediction_result where none may come: {why}"))
            }
            PredictionWindow::None => Err("prediction_result before any turn finished".to_owned()),
        }
    }

    fn compaction(&mut self, name: &str, phase: Phase) -> Verdict {
        let k = match self.running {
            Some(Work::Compaction(k)) if phase != Phase::Started => k,
            Some(work) => return Err(format!("{name} while {} runs", work.describe())),
            None => match self.queue.front() {
                Some(&Work::Compaction(k)) => {
                    self.queue.pop_front();
                    self.start(Work::Compaction(k));
                    k
                }
                Some(&Work::Turn(k)) => {
                    return Err(format!("{name} before the turn of command {k} ran"))
                }
                None => return Err(format!("{name} with no compact command waiting")),
            },
        };
        if phase == Phase::Started {
            return Ok((Some(k), None));
        }
        self.running = None;
        self.ended = Some((Work::Compaction(k), self.events));
        // CompactDone starts no prediction.
        self.prediction = PredictionWindow::Closed(Closed::Compaction(k));
        let answers = if phase == Phase::Failed && !self.cancels.is_empty() {
            self.cancels.remove(0)
        } else {
            k
        };
        Ok((Some(answers), None))
    }
}

/// What the model reads of an event line: its name and the ids that say
/// what it answers. Read from a decoded [`Event`], or from what is left of
/// a line that did not decode ([`Seen::of_json`]): one rule for both.
#[derive(Default)]
struct Seen<'a> {
    name: &'a str,
    request_id: Option<&'a str>,
    submission_id: Option<&'a str>,
    /// `steer_applied`'s `kind` (`prompt` when absent, as upstream's default).
    kind: Option<&'a str>,
    /// An approval's `id`.
    id: Option<&'a str>,
}

impl<'a> Seen<'a> {
    fn of_event(event: &'a Event) -> Seen<'a> {
        let mut seen = Seen {
            name: event.name(),
            ..Seen::default()
        };
        match event {
            Event::JobsSnapshot { request_id, .. } | Event::JobStopResult { request_id, .. } => {
                seen.request_id = Some(request_id)
            }
            Event::SteerApplied {
                kind,
                submission_id,
                ..
            } => {
                seen.kind = Some(kind.as_str());
                seen.submission_id = submission_id.as_deref();
            }
            Event::SteerDropped { submission_id, .. } => {
                seen.submission_id = submission_id.as_deref();
            }
            Event::ApprovalRequested { id, .. } | Event::ApprovalResolved { id, .. } => {
                seen.id = Some(id);
            }
            _ => {}
        }
        seen
    }

    /// What can still be read of a line that is a JSON object naming an
    /// event but is not one (a field missing, a value of the wrong type):
    /// its name and those of its ids that are strings.
    fn of_json(object: &'a serde_json::Map<String, serde_json::Value>) -> Option<Seen<'a>> {
        let text = |key: &str| object.get(key).and_then(serde_json::Value::as_str);
        Some(Seen {
            name: text("event")?,
            request_id: text("request_id"),
            submission_id: text("submission_id"),
            kind: text("kind").or(Some("prompt")),
            id: text("id"),
        })
    }

    /// What the event is, for attribution; `None` where an id the rule
    /// needs is missing (only a line that did not decode lacks one).
    fn role(&self) -> Option<Role<'a>> {
        Some(match self.name {
            "command_error" => Role::CommandError,
            "jobs_snapshot" => Role::Reply(Kind::JobsSnapshot, self.request_id?),
            "job_stop_result" => Role::Reply(Kind::JobStop, self.request_id?),
            "prediction_result" => Role::Prediction,
            "context_yield" => Role::ContextYield,
            "steer_applied" => Role::Steer {
                applied: Some(self.kind.unwrap_or("prompt")),
                id: self.submission_id,
            },
            "steer_dropped" => Role::Steer {
                applied: None,
                id: self.submission_id,
            },
            "goal_updated" => Role::Goal,
            "compaction_started" => Role::Compaction(Phase::Started),
            "compaction_finished" => Role::Compaction(Phase::Finished),
            "compaction_failed" => Role::Compaction(Phase::Failed),
            "approval_requested" => Role::ApprovalRequested(self.id?),
            "approval_resolved" => Role::ApprovalResolved(self.id?),
            "agent_finished" | "turn_failed" => Role::Terminal { aborted: false },
            "agent_aborted" => Role::Terminal { aborted: true },
            "goal_continue" => Role::GoalContinue,
            "agent_step"
            | "stream_retry"
            | "assistant_delta"
            | "reasoning_delta"
            | "assistant_message"
            | "reasoning_message"
            | "usage"
            | "tool_result"
            | "tool_call_decode_error"
            | "max_steps_exhausted"
            | "goal_blocked"
            | "goal_unblocked"
            | "goal_check"
            | "goal_reminder"
            | "plan_reminder"
            | "subrun_started"
            | "subrun_finished"
            | "workflow_started"
            | "workflow_finished"
            | "auto_compaction_started"
            | "auto_compaction_finished"
            | "auto_compaction_failed" => Role::InTurn,
            _ => Role::Other,
        })
    }
}

/// A JSON string, for a message.
fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}
