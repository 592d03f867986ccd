//! The session runner: drives an engine with a [`Session`], judges every
//! event with the model as it arrives, and ends with a [`SessionVerdict`]. The
//! engine checker's conversation checks, the fuzzer and `check-engine
//! --session` all run here; the engine is a child process over its stdio
//! or an engine loop in process.

use super::pipes::{ChildWire, EngineInput, EngineOutput, InProcess, Recv, Wire};
use super::session::{Action, After, Session};
use super::shown::{quoted, shown};
use super::verdict::{CommandSeen, End, Received, Sent, SessionVerdict};
use crate::conversation::{Conversation, Direction, Owed, Recorder};
use crate::v2::{Command, CommandReader, ReadError, SteerKind, DEFAULT_MAX_LINE_LEN};
use std::collections::{HashMap, HashSet};
use std::io;
use std::time::{Duration, Instant};

/// Received lines a verdict keeps, the first of them: an engine that floods
/// its stdout is judged line by line but reported in kilobytes.
const KEPT: usize = 1000;
/// Past this much stdout the engine is killed: no session is owed that much.
const MAX_OUTPUT: u64 = 64 << 20;

/// Runs [`Session`]s against an engine: a program over its stdio
/// ([`Runner::run`]) or an engine loop in process ([`Runner::run_with`]).
///
/// Each line is sent at its point of the conversation, as
/// [`Conversation`] attributes the events that arrive; once the session is
/// sent and the engine owes nothing (or only waits on a question the
/// session leaves open), its stdin is closed, and the runner reads until
/// the engine exits. Two bounds stop it early: the turn timeout (how long
/// the engine may stay silent while it owes something and asks nothing)
/// and the timeout on the whole session; then the engine is killed, with
/// its process group, and judged by what it wrote.
#[derive(Clone, Debug)]
pub struct Runner {
    timeout: Duration,
    turn_timeout: Duration,
    max_output: u64,
}

impl Default for Runner {
    fn default() -> Self {
        Runner::new()
    }
}

impl Runner {
    /// A runner with a 10 s turn timeout and a 60 s bound on a session.
    #[must_use]
    pub fn new() -> Runner {
        Runner {
            timeout: Duration::from_secs(60),
            turn_timeout: Duration::from_secs(10),
            max_output: MAX_OUTPUT,
        }
    }

    /// The bound on a whole session.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Runner {
        self.timeout = timeout;
        self
    }

    /// How long the engine may stay silent while it owes an answer.
    #[must_use]
    pub fn turn_timeout(mut self, timeout: Duration) -> Runner {
        self.turn_timeout = timeout;
        self
    }

    /// How much the engine may write on stdout in one session (64 MiB
    /// unless set): past it, it is killed and judged by what it wrote.
    /// Memory stays within this, or one line of the crate's line limit.
    #[must_use]
    pub fn max_output(mut self, bytes: u64) -> Runner {
        self.max_output = bytes;
        self
    }

    /// Runs `session` against a fresh `engine` (its program, arguments,
    /// environment and directory; its stdio is replaced by pipes).
    ///
    /// # Errors
    ///
    /// The engine cannot be started.
    pub fn run(
        &self,
        session: &Session,
        engine: &mut std::process::Command,
    ) -> io::Result<SessionVerdict> {
        let wire = ChildWire::spawn(engine, self.max_output)?;
        Ok(self.drive(session, wire, None))
    }

    /// Runs `session` against a fresh `engine`, as [`Runner::run`] does,
    /// and records every line that crosses into `recorder` (commands and
    /// stdout events; the recording is finished at the end, its status
    /// unknown): what `serve-command replay --update` keeps as the new
    /// recording, and what it compares with the old.
    ///
    /// # Errors
    ///
    /// The engine cannot be started.
    pub fn run_recorded(
        &self,
        session: &Session,
        engine: &mut std::process::Command,
        recorder: &Recorder,
    ) -> io::Result<SessionVerdict> {
        let wire = ChildWire::spawn(engine, self.max_output)?;
        let verdict = self.drive(session, wire, Some(recorder));
        recorder.finish(None);
        Ok(verdict)
    }

    /// Runs `session` against an engine in process, with no spawn: `serve`
    /// gets the engine's input and output (as
    /// [`EngineLoop::serve`](crate::v2::serve::EngineLoop::serve) takes
    /// them) on a thread of its own. Pauses are virtual: a step after
    /// `{"ms":K}` is taken at once, so a run is fast, and deterministic for
    /// an engine loop [in order](crate::v2::serve::EngineLoop::in_order).
    /// An engine that never ends is left running on its thread when a
    /// bound runs out.
    pub fn run_with<F>(&self, session: &Session, serve: F) -> SessionVerdict
    where
        F: FnOnce(EngineInput, EngineOutput) -> io::Result<Option<ReadError>> + Send + 'static,
    {
        self.drive(session, InProcess::start(serve, self.max_output), None)
    }

    fn drive(
        &self,
        session: &Session,
        mut wire: impl Wire,
        recorder: Option<&Recorder>,
    ) -> SessionVerdict {
        let mut run = Run::new(self, wire.virtual_pauses(), recorder);
        for (i, step) in session.steps().iter().enumerate() {
            if run.stop.is_some() {
                break;
            }
            run.wait_for(&mut wire, i + 1, step.after);
            if run.stop.is_some() {
                break;
            }
            match &step.action {
                Action::Send(line) => run.send(&mut wire, line.clone()),
                Action::Approve { asked, allow } => {
                    let id = run
                        .asked
                        .get(usize::try_from(*asked - 1).unwrap_or(usize::MAX));
                    let id = id
                        .cloned()
                        .unwrap_or_else(|| format!("never-asked-{asked}"));
                    let command = if *allow {
                        Command::allow(id)
                    } else {
                        Command::reject(id)
                    };
                    let mut line = command.to_line().into_bytes();
                    line.pop();
                    run.send(&mut wire, line);
                }
                Action::Close => run.close(&mut wire),
            }
        }
        if !run.closed && run.stop.is_none() {
            // The session is sent: close once nothing more is owed.
            run.settle(&mut wire);
            run.close(&mut wire);
        }
        while run.stop.is_none() && !run.engine_closed {
            run.next(&mut wire, None);
        }
        let killed = run.stop.is_some();
        let (end, stderr_tail) = wire.finish(killed);
        run.verdict(end, stderr_tail)
    }
}

/// One session in progress.
struct Run<'r> {
    conversation: Conversation,
    /// Where every line that crosses is recorded, if anywhere.
    recorder: Option<&'r Recorder>,
    start: Instant,
    deadline: Instant,
    turn_timeout: Duration,
    virtual_pauses: bool,
    /// When the engine last wrote a line, or when a line was last sent.
    heard: Instant,
    /// When the last line was sent (a pause counts from it).
    last_sent: Instant,
    sent: Vec<Sent>,
    commands: Vec<CommandSeen>,
    last_prompt: Option<u64>,
    received: Vec<Received>,
    received_lines: u64,
    violations: Vec<(u64, String)>,
    not_events: Vec<String>,
    /// The ids of the questions the engine asked, in order.
    asked: Vec<String>,
    /// Per prompt, the events of its turn so far and its `agent_step`s.
    turns: HashMap<u64, (u64, u64)>,
    /// Per prompt, its turn's events that are not deltas so far (its
    /// `prediction_result` aside), and whether a delta came after the last.
    seen: HashMap<u64, (u64, bool)>,
    /// When each work a step waits on for a prediction was first seen
    /// done.
    done_at: HashMap<u64, Instant>,
    /// The command lines sent when the last `prediction_result` came.
    predicted: Option<u64>,
    answered: HashSet<u64>,
    missed: Vec<String>,
    closed: bool,
    engine_closed: bool,
    /// Why the engine is killed, once a bound ran out.
    stop: Option<End>,
}

impl<'r> Run<'r> {
    fn new(runner: &Runner, virtual_pauses: bool, recorder: Option<&'r Recorder>) -> Run<'r> {
        let start = Instant::now();
        Run {
            conversation: Conversation::new(),
            recorder,
            start,
            deadline: start + runner.timeout,
            turn_timeout: runner.turn_timeout,
            virtual_pauses,
            heard: start,
            last_sent: start,
            sent: Vec::new(),
            commands: Vec::new(),
            last_prompt: None,
            received: Vec::new(),
            received_lines: 0,
            violations: Vec::new(),
            not_events: Vec::new(),
            asked: Vec::new(),
            turns: HashMap::new(),
            seen: HashMap::new(),
            done_at: HashMap::new(),
            predicted: None,
            answered: HashSet::new(),
            missed: Vec::new(),
            closed: false,
            engine_closed: false,
            stop: None,
        }
    }

    fn send(&mut self, wire: &mut impl Wire, line: Vec<u8>) {
        let n = self.conversation.command(&line);
        if let Some(recorder) = self.recorder {
            recorder.command(&line);
        }
        let command = match CommandReader::new(&line[..]).next() {
            Some(Ok(command)) if command.serve_refusal().is_none() => Some(command),
            _ => None,
        };
        if matches!(command, Some(Command::Prompt { .. })) {
            self.last_prompt = Some(n);
        }
        self.commands.push(CommandSeen {
            name: command.as_ref().map(Command::name),
            detail: command.as_ref().and_then(owed_answer),
        });
        let now = Instant::now();
        self.sent.push(Sent {
            n,
            line: shown(&line),
            at: now - self.start,
        });
        self.last_sent = now;
        self.heard = now;
        let mut line = line;
        line.push(b'\n');
        wire.pipes().send(line);
    }

    fn close(&mut self, wire: &mut impl Wire) {
        if !self.closed {
            self.closed = true;
            self.heard = Instant::now();
            wire.pipes().close();
        }
    }

    /// What the engine owes, less the questions it waits on (the
    /// controller owes those): `None` when it waits on one.
    fn engine_owes(&self) -> bool {
        let owed = self.conversation.owed();
        owed.approvals.is_empty()
            && !Owed {
                approvals: Vec::new(),
                ..owed
            }
            .is_empty()
    }

    /// Whether work `n` (a prompt or `compact`) is done or never was work.
    fn work_done(&self, n: u64) -> bool {
        let owed = self.conversation.owed();
        owed.running != Some(n) && !owed.queued.contains(&n)
    }

    fn is_work(&self, n: u64) -> bool {
        let seen = usize::try_from(n - 1)
            .ok()
            .and_then(|i| self.commands.get(i));
        matches!(seen.and_then(|c| c.name), Some("prompt" | "compact"))
    }

    /// Whether `after` holds now: `Some(Ok)` it does, `Some(Err(why))` it
    /// never will, `None` not yet.
    fn reached(&self, after: After) -> Option<Result<(), String>> {
        let idle = || {
            let owed = self.conversation.owed();
            owed.running.is_none() && owed.queued.is_empty() && owed.approvals.is_empty()
        };
        match after {
            After::Now => Some(Ok(())),
            After::Pause(d) => {
                (self.virtual_pauses || Instant::now() >= self.last_sent + d).then_some(Ok(()))
            }
            After::Started(n) => {
                let started = self.turns.get(&n).is_some_and(|t| t.0 >= 1);
                self.in_turn(n, started, || {
                    format!("the turn of command {n} ended before it wrote an event")
                })
            }
            After::Step { turn, step } => {
                let Some(n) = turn.or(self.last_prompt) else {
                    return Some(Err(
                        "no prompt was sent before it: no turn to count steps of".to_owned(),
                    ));
                };
                let steps = self.turns.get(&n).map_or(0, |t| t.1);
                self.in_turn(n, steps >= step, || {
                    format!(
                        "the turn of command {n} ended after {steps} agent_step{}, before step {step}",
                        if steps == 1 { "" } else { "s" }
                    )
                })
            }
            After::Seen {
                turn,
                events,
                delta,
            } => {
                let (count, since) = self.seen.get(&turn).copied().unwrap_or_default();
                let reached = count > events || (count == events && (since || !delta));
                self.in_turn(turn, reached, || {
                    format!(
                        "the turn of command {turn} ended after {count} event{} that {} not deltas, before {events}{}",
                        if count == 1 { "" } else { "s" },
                        if count == 1 { "is" } else { "are" },
                        if delta { " and a delta after them" } else { "" }
                    )
                })
            }
            After::Answered(n) | After::Ended(n) => {
                let work = self.is_work(n);
                if (work && self.work_done(n))
                    || (matches!(after, After::Answered(_)) && self.answered.contains(&n))
                {
                    Some(Ok(()))
                } else if !work && matches!(after, After::Ended(_)) {
                    Some(Err(format!("command {n} is not a prompt or compact the engine reads: it has no work to end")))
                } else if !work && !self.owes(n) {
                    Some(Err(format!("command {n} is owed no answer")))
                } else {
                    None
                }
            }
            After::Predicted { turn, within } => {
                if self.predicted.is_some_and(|sent| sent >= turn) {
                    Some(Ok(()))
                } else if !self.is_work(turn) {
                    Some(Err(format!(
                        "command {turn} is not a prompt the engine reads: it has no turn"
                    )))
                } else if !self.work_done(turn) && !self.conversation.owed().approvals.is_empty() {
                    Some(Err(format!(
                        "the turn of command {turn} waits on an approval question no step answers, so no prediction can follow it yet"
                    )))
                } else if self
                    .done_at
                    .get(&turn)
                    .is_some_and(|&done| Instant::now() >= done + within)
                {
                    Some(Err(format!(
                        "no prediction_result came within {} ms of the end of the turn of command {turn}",
                        within.as_millis()
                    )))
                } else {
                    None
                }
            }
            After::Asked(k) => {
                if self.asked.len() as u64 >= k {
                    Some(Ok(()))
                } else if idle() {
                    Some(Err(format!(
                        "the engine asked {} question{}, not {k}, and has no work left",
                        self.asked.len(),
                        if self.asked.len() == 1 { "" } else { "s" }
                    )))
                } else {
                    None
                }
            }
        }
    }

    /// A point in command `n`'s turn: `reached`, or never to be (no turn,
    /// or it ended first, as `ended` says), or not yet.
    fn in_turn(
        &self,
        n: u64,
        reached: bool,
        ended: impl FnOnce() -> String,
    ) -> Option<Result<(), String>> {
        if reached {
            Some(Ok(()))
        } else if !self.is_work(n) {
            Some(Err(format!(
                "command {n} is not a prompt the engine reads: it has no turn"
            )))
        } else if self.work_done(n) {
            Some(Err(ended()))
        } else {
            None
        }
    }

    /// Whether the engine owes command `n` an answer.
    fn owes(&self, n: u64) -> bool {
        let owed = self.conversation.owed();
        [&owed.refused, &owed.requests, &owed.steers, &owed.goals]
            .iter()
            .any(|list| list.contains(&n))
            || owed.running == Some(n)
            || owed.queued.contains(&n)
    }

    /// Reads events until step `line` (the session's) may be taken.
    fn wait_for(&mut self, wire: &mut impl Wire, line: usize, after: After) {
        loop {
            if let After::Predicted { turn, .. } = after {
                if self.is_work(turn) && self.work_done(turn) {
                    self.done_at.entry(turn).or_insert_with(Instant::now);
                }
            }
            match self.reached(after) {
                Some(Ok(())) => return,
                Some(Err(why)) => {
                    self.missed.push(format!("step {line}: {why}; sent then"));
                    return;
                }
                None => {}
            }
            if self.engine_closed {
                self.missed.push(format!(
                    "step {line}: the engine closed its stdout first; sent then"
                ));
                return;
            }
            let pause = match after {
                After::Pause(d) => Some(self.last_sent + d),
                After::Predicted { turn, within } => self.done_at.get(&turn).map(|&t| t + within),
                _ => None,
            };
            self.next(wire, pause);
            if self.stop.is_some() {
                return;
            }
        }
    }

    /// Reads events until the engine owes nothing, or only waits on a
    /// question.
    fn settle(&mut self, wire: &mut impl Wire) {
        while self.engine_owes() && !self.engine_closed && self.stop.is_none() {
            self.next(wire, None);
        }
    }

    /// Reads the next line, or waits until `until`; stops the session when
    /// a bound runs out.
    fn next(&mut self, wire: &mut impl Wire, until: Option<Instant>) {
        let silence = self.heard + self.turn_timeout;
        let mut wake = self.deadline.min(silence);
        if let Some(until) = until {
            wake = wake.min(until);
        }
        match wire.pipes().recv(wake) {
            Recv::Line(line, len) => {
                self.heard = Instant::now();
                self.event(&line, len);
            }
            Recv::Quiet => {
                let now = Instant::now();
                // Silence first: when both bounds run out together, it is
                // the more precise cause.
                if now >= silence && (self.engine_owes() || self.closed) {
                    // Silence is a fault only while an answer is owed and
                    // no question waits on the controller; after stdin
                    // closed, an engine that owes nothing must exit.
                    self.stop = Some(if self.engine_owes() {
                        End::Silent(self.turn_timeout)
                    } else {
                        End::NoExit(self.turn_timeout)
                    });
                } else if now >= self.deadline {
                    self.stop = Some(End::TimedOut(self.deadline - self.start));
                } else if now >= silence {
                    // Nothing owed, nothing asked: quiet is right.
                    self.heard = now;
                }
            }
            Recv::Closed => self.engine_closed = true,
            Recv::Flooded(max) => self.stop = Some(End::Flooded(max)),
        }
    }

    fn event(&mut self, line: &[u8], len: usize) {
        self.received_lines += 1;
        if let Some(recorder) = self.recorder {
            if len > DEFAULT_MAX_LINE_LEN {
                recorder.too_long(Direction::Event);
            } else {
                recorder.event(line);
            }
        }
        let attribution = if len > DEFAULT_MAX_LINE_LEN {
            self.conversation.decoded(None)
        } else {
            self.conversation.event(line)
        };
        if let Some(n) = attribution.turn {
            let seen = self.turns.entry(n).or_default();
            seen.0 += 1;
            if attribution.event == Some("agent_step") {
                seen.1 += 1;
            }
            let seen = self.seen.entry(n).or_default();
            match attribution.event.or(attribution.unreadable.as_deref()) {
                Some("assistant_delta" | "reasoning_delta") => seen.1 = true,
                Some("prediction_result") => {}
                _ => *seen = (seen.0 + 1, false),
            }
        }
        if let Some(n) = attribution.answers {
            self.answered.insert(n);
        }
        if attribution.event == Some("prediction_result") {
            self.predicted = Some(self.sent.len() as u64);
        }
        if attribution.event == Some("approval_requested") {
            if let Ok(crate::v2::Event::ApprovalRequested { id, .. }) =
                crate::v2::Event::from_slice(line)
            {
                self.asked.push(id);
            }
        }
        if attribution.event.is_none() && self.not_events.len() < KEPT {
            let why = if len > DEFAULT_MAX_LINE_LEN {
                format!("{len} bytes, over the line limit")
            } else {
                match crate::v2::Event::from_slice(line) {
                    Err(e) => e.to_string(),
                    Ok(_) => "blank".to_owned(),
                }
            };
            let n = attribution.n;
            self.not_events.push(
                match (
                    &attribution.unreadable,
                    attribution.answers,
                    attribution.turn,
                ) {
                    (Some(name), Some(k), _) => {
                        format!("event {n} ({name}) answers command {k} but does not decode: {why}")
                    }
                    (Some(name), None, Some(t)) => format!(
                        "event {n} ({name}) of the turn of command {t} does not decode: {why}"
                    ),
                    _ => format!("stdout line {n} is not an event: {why}"),
                },
            );
        }
        if let Some(why) = &attribution.violation {
            if self.violations.len() < KEPT {
                self.violations.push((attribution.n, why.clone()));
            }
        }
        if self.received.len() < KEPT {
            let mut shown_line = shown(line);
            if len > line.len() {
                shown_line.push_str(&format!(" ({len} bytes, over the line limit)"));
            }
            self.received.push(Received {
                line: shown_line,
                at: self.heard - self.start,
                attribution,
            });
        }
    }

    fn verdict(self, end: End, stderr_tail: Vec<String>) -> SessionVerdict {
        let end = self.stop.clone().unwrap_or(end);
        let owed = self.conversation.owed();
        SessionVerdict {
            sent: self.sent,
            received: self.received,
            received_lines: self.received_lines,
            violations: self.violations,
            not_events: self.not_events,
            owed,
            missed: self.missed,
            end,
            stderr_tail,
            elapsed: self.start.elapsed(),
            commands: self.commands,
        }
    }
}

/// The answer a command is owed, in words, for those answered by one
/// event of their own.
fn owed_answer(command: &Command) -> Option<String> {
    Some(match command {
        // A command steer is always applied, never dropped.
        Command::Steer {
            kind,
            submission_id,
            ..
        } => {
            let answer = match kind {
                SteerKind::Command => "steer_applied (kind command)",
                _ => "steer_applied or steer_dropped",
            };
            match submission_id {
                Some(id) => format!("{answer} with submission_id {}", quoted(id)),
                None => answer.to_owned(),
            }
        }
        Command::GoalSet { .. } | Command::GoalClear => "goal_updated".to_owned(),
        Command::JobsSnapshot { request_id } => {
            format!("jobs_snapshot with request_id {}", quoted(request_id))
        }
        Command::JobStop { request_id, .. } => {
            format!("job_stop_result with request_id {}", quoted(request_id))
        }
        _ => return None,
    })
}
