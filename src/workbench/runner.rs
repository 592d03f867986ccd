//! The session runner: drives an engine with a [`Session`], judges every
//! event with the model as it arrives, and ends with a [`SessionVerdict`]. The
//! engine checker's conversation checks, the fuzzer and `check-engine
//! --session` all run here; the engine is a child process over its stdio
//! or an engine loop in process.

use super::check_engine::{quoted, shown};
use super::run::ended;
use super::session::{Action, After, Session};
use crate::v2::serve::{Attribution, Conversation, Owed};
use crate::v2::{Command, CommandReader, ReadError, SteerKind, DEFAULT_MAX_LINE_LEN};
use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt;
use std::io::{self, BufRead, Read, Write};
use std::process::{Child, ExitStatus, Stdio};
use std::sync::{mpsc, Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Received lines a verdict keeps, the first of them: an engine that floods
/// its stdout is judged line by line but reported in kilobytes.
const KEPT: usize = 1000;
/// Past this much stdout the engine is killed: no session is owed that much.
const MAX_OUTPUT: u64 = 64 << 20;
/// The last lines of the engine's stderr a verdict keeps.
const STDERR_TAIL: usize = 20;
/// How long an engine may take to exit once its stdout closed.
const EXIT_GRACE: Duration = Duration::from_secs(2);
/// How long its stderr may stay open after it exited (a child of it
/// holding it), before that child is killed with the group.
const STDERR_GRACE: Duration = Duration::from_millis(200);

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
        Ok(self.drive(session, wire))
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
        self.drive(session, InProcess::start(serve, self.max_output))
    }

    fn drive(&self, session: &Session, mut wire: impl Wire) -> SessionVerdict {
        let mut run = Run::new(self, wire.virtual_pauses());
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

/// What the runner found: every line sent and received, each event's
/// attribution, what was still owed at the end, and how the engine ended.
///
/// `Display` shows it as a person reads a failure: the broken promises
/// first, then the lines in the order they crossed, each event with what
/// it answers and its turn, then the stderr tail.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct SessionVerdict {
    /// The lines sent, in order.
    pub sent: Vec<Sent>,
    /// The engine's stdout lines, the first 1,000 of them.
    pub received: Vec<Received>,
    /// How many lines the engine wrote on stdout, those `received` leaves
    /// out included.
    pub received_lines: u64,
    /// Each event that fits no rule of the conversation: its number among
    /// the engine's lines, and why (the first 1,000).
    pub violations: Vec<(u64, String)>,
    /// Each stdout line that is not an event, said as a broken promise:
    /// what it would have answered, where it can be read, and why it does
    /// not decode (the first 1,000).
    pub not_events: Vec<String>,
    /// What the engine still owed at the end.
    pub owed: Owed,
    /// Points of the session the engine never reached, each with the
    /// session's line and why; the line was sent then.
    pub missed: Vec<String>,
    /// How the engine ended.
    pub end: End,
    /// The last 20 lines of the engine's stderr.
    pub stderr_tail: Vec<String>,
    /// How long the session took.
    pub elapsed: Duration,
    /// What each command line is, by number: its name and what answers it.
    commands: Vec<CommandSeen>,
}

/// A line the runner sent.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Sent {
    /// Its number among the lines sent, from 1 (as [`Conversation`]
    /// numbers commands).
    pub n: u64,
    /// The line, shown (controls visible, at most 300 characters).
    pub line: String,
    /// When, from the start.
    pub at: Duration,
}

/// A line the engine wrote, with its attribution.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Received {
    /// The line, shown.
    pub line: String,
    /// When, from the start.
    pub at: Duration,
    /// What it answers and which turn it belongs to.
    pub attribution: Attribution,
}

impl Received {
    /// What the model says of the line, as a transcript shows it after the
    /// line: `  [answers 2, turn 1]`, `  [fits no rule]`, or nothing.
    #[must_use]
    pub fn note(&self) -> String {
        let a = &self.attribution;
        let mut note = Vec::new();
        if let Some(k) = a.answers {
            note.push(format!("answers {k}"));
        }
        if let Some(k) = a.turn {
            note.push(format!("turn {k}"));
        }
        if a.violation.is_some() {
            note.push("fits no rule".to_owned());
        }
        if note.is_empty() {
            String::new()
        } else {
            format!("  [{}]", note.join(", "))
        }
    }
}

/// How an engine's session ended.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum End {
    /// It exited (or, in process, returned): how.
    Exited(String),
    /// It stayed silent past the turn timeout while it owed an answer, and
    /// was killed.
    Silent(Duration),
    /// The session ran past its bound, and the engine was killed.
    TimedOut(Duration),
    /// It wrote more than this many bytes on stdout, and was killed.
    Flooded(u64),
    /// Its stdout closed, but it did not exit; it was killed.
    Lingered,
    /// It owed nothing and its stdin was closed, but it neither exited nor
    /// closed its stdout within the turn timeout; it was killed.
    NoExit(Duration),
}

impl fmt::Display for End {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            End::Exited(how) => f.write_str(how),
            End::Silent(d) => write!(
                f,
                "was silent for {} s while it owed an answer; killed",
                d.as_secs_f64()
            ),
            End::TimedOut(d) => write!(
                f,
                "ran past the session's bound of {} s; killed",
                d.as_secs_f64()
            ),
            End::Flooded(max) => write!(f, "wrote more than {max} bytes on stdout; killed"),
            End::NoExit(d) => write!(
                f,
                "did not exit within {} s of the end of its input, with nothing owed; killed",
                d.as_secs_f64()
            ),
            End::Lingered => write!(
                f,
                "closed its stdout but did not exit within {} s; killed",
                EXIT_GRACE.as_secs()
            ),
        }
    }
}

/// What one command line is, for the words of a failure.
#[derive(Clone, Debug)]
struct CommandSeen {
    /// `prompt`, `steer`, ...; `None` for a line that is not a command.
    name: Option<&'static str>,
    /// The answer it is owed, in words: `a steer_applied or steer_dropped
    /// with submission_id "s1"`.
    detail: Option<String>,
}

impl SessionVerdict {
    /// Whether the engine kept every promise: no event that fits no rule,
    /// nothing owed at the end.
    #[must_use]
    pub fn holds(&self) -> bool {
        self.violations.is_empty() && self.owed.is_empty()
    }

    /// The broken promises, each in the words of the protocol: the events
    /// that fit no rule, then what was still owed at the end (`command 3
    /// (prompt): its turn never ended: no agent_finished, turn_failed or
    /// agent_aborted by the end (the engine exited with status 0)`).
    #[must_use]
    pub fn problems(&self) -> Vec<String> {
        let mut problems: Vec<String> = self
            .violations
            .iter()
            .map(|(n, why)| {
                let name = self
                    .received
                    .get(usize::try_from(n - 1).unwrap_or(usize::MAX))
                    .and_then(|r| r.attribution.event)
                    .unwrap_or("an event");
                format!("event {n} ({name}) fits no rule of the conversation: {why}")
            })
            .collect();
        problems.extend(self.not_events.iter().cloned());
        let end = format!("by the end (the engine {})", self.end);
        let owed = &self.owed;
        if let Some(n) = owed.running {
            problems.push(match self.command_name(n) {
                Some("compact") => format!(
                    "command {n} (compact): its compaction never ended: no compaction_finished or compaction_failed {end}"
                ),
                _ => format!(
                    "command {n} (prompt): its turn never ended: no agent_finished, turn_failed or agent_aborted {end}"
                ),
            });
        }
        for &n in &owed.queued {
            problems.push(match self.command_name(n) {
                Some("compact") => format!(
                    "command {n} (compact): never answered: no compaction_started, compaction_finished or compaction_failed {end}"
                ),
                _ => format!("command {n} (prompt): its turn never started: no event of it {end}"),
            });
        }
        for &n in owed.steers.iter().chain(&owed.goals).chain(&owed.requests) {
            let name = self.command_name(n).unwrap_or("command");
            let detail = self.detail(n).unwrap_or("an answer");
            problems.push(format!(
                "command {n} ({name}): never answered: no {detail} {end}"
            ));
        }
        for &n in &owed.refused {
            problems.push(format!(
                "command {n}: a line the engine must refuse, but no command_error answered it {end}"
            ));
        }
        match &self.end {
            End::Flooded(_) => problems.push(format!("the engine {}", self.end)),
            End::Lingered => problems.push(format!("the engine {}", self.end)),
            End::NoExit(_) => problems.push(format!("the engine {}", self.end)),
            _ => {}
        }
        problems
    }

    /// The command line `n`'s name (`prompt`, `steer`), if it is a
    /// command the engine reads; `None` for a refused line.
    #[must_use]
    pub fn command_name(&self, n: u64) -> Option<&'static str> {
        self.seen(n).and_then(|c| c.name)
    }

    fn detail(&self, n: u64) -> Option<&str> {
        self.seen(n).and_then(|c| c.detail.as_deref())
    }

    fn seen(&self, n: u64) -> Option<&CommandSeen> {
        self.commands.get(usize::try_from(n.checked_sub(1)?).ok()?)
    }

    /// The received events attributed to command `n`'s turn, by name.
    #[must_use]
    pub fn turn_events(&self, n: u64) -> Vec<&'static str> {
        self.received
            .iter()
            .filter(|r| r.attribution.turn == Some(n))
            .filter_map(|r| r.attribution.event)
            .collect()
    }

    /// The received events answering command `n`, by name.
    #[must_use]
    pub fn answers(&self, n: u64) -> Vec<&'static str> {
        self.received
            .iter()
            .filter(|r| r.attribution.answers == Some(n))
            .filter_map(|r| r.attribution.event)
            .collect()
    }

    /// The session as it crossed: every line sent and received in order,
    /// each event with what it answers and its turn.
    #[must_use]
    pub fn transcript(&self) -> Vec<String> {
        let mut lines = Vec::new();
        let (mut s, mut r) = (self.sent.iter().peekable(), self.received.iter().peekable());
        loop {
            let sent_first = match (s.peek(), r.peek()) {
                (Some(a), Some(b)) => a.at <= b.at,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => break,
            };
            if sent_first {
                let sent = s.next().expect("peeked");
                lines.push(format!(
                    "{:>7.3}s  > {:<3} {}",
                    sent.at.as_secs_f64(),
                    sent.n,
                    sent.line
                ));
            } else {
                let got = r.next().expect("peeked");
                lines.push(format!(
                    "{:>7.3}s  < {:<3} {}{}",
                    got.at.as_secs_f64(),
                    got.attribution.n,
                    got.line,
                    got.note()
                ));
            }
        }
        if self.received_lines > self.received.len() as u64 {
            lines.push(format!(
                "           ({} more lines received)",
                self.received_lines - self.received.len() as u64
            ));
        }
        lines
    }
}

impl fmt::Display for SessionVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for problem in self.problems() {
            writeln!(f, "why: {problem}")?;
        }
        for missed in &self.missed {
            writeln!(f, "missed: {missed}")?;
        }
        writeln!(
            f,
            "the session ({} sent, {} received; > sent, < received, [what each event answers, its turn]):",
            self.sent.len(),
            self.received_lines
        )?;
        for line in self.transcript() {
            writeln!(f, "  {line}")?;
        }
        writeln!(
            f,
            "the engine {} after {:.3} s",
            self.end,
            self.elapsed.as_secs_f64()
        )?;
        if !self.stderr_tail.is_empty() {
            writeln!(f, "its stderr, the last {} lines:", self.stderr_tail.len())?;
            for line in &self.stderr_tail {
                writeln!(f, "  {line}")?;
            }
        }
        Ok(())
    }
}

/// One session in progress.
struct Run {
    conversation: Conversation,
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
    answered: HashSet<u64>,
    missed: Vec<String>,
    closed: bool,
    engine_closed: bool,
    /// Why the engine is killed, once a bound ran out.
    stop: Option<End>,
}

impl Run {
    fn new(runner: &Runner, virtual_pauses: bool) -> Run {
        let start = Instant::now();
        Run {
            conversation: Conversation::new(),
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
            answered: HashSet::new(),
            missed: Vec::new(),
            closed: false,
            engine_closed: false,
            stop: None,
        }
    }

    fn send(&mut self, wire: &mut impl Wire, line: Vec<u8>) {
        let n = self.conversation.command(&line);
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
                if self.turns.get(&n).is_some_and(|t| t.0 >= 1) {
                    Some(Ok(()))
                } else if !self.is_work(n) {
                    Some(Err(format!(
                        "command {n} is not a prompt the engine reads: it has no turn"
                    )))
                } else if self.work_done(n) {
                    Some(Err(format!(
                        "the turn of command {n} ended before it wrote an event"
                    )))
                } else {
                    None
                }
            }
            After::Step { turn, step } => {
                let Some(n) = turn.or(self.last_prompt) else {
                    return Some(Err(
                        "no prompt was sent before it: no turn to count steps of".to_owned(),
                    ));
                };
                let steps = self.turns.get(&n).map_or(0, |t| t.1);
                if steps >= step {
                    Some(Ok(()))
                } else if !self.is_work(n) {
                    Some(Err(format!(
                        "command {n} is not a prompt the engine reads: it has no turn"
                    )))
                } else if self.work_done(n) {
                    Some(Err(format!(
                        "the turn of command {n} ended after {steps} agent_step{}, before step {step}",
                        if steps == 1 { "" } else { "s" }
                    )))
                } else {
                    None
                }
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
        }
        if let Some(n) = attribution.answers {
            self.answered.insert(n);
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
        Command::Predict { request_id, .. } => {
            format!("prediction_result with request_id {}", quoted(request_id))
        }
        _ => return None,
    })
}

/// What the runner reads next from the engine.
enum Recv {
    /// A line (its LF taken off), kept up to the line limit, and its whole
    /// length.
    Line(Vec<u8>, usize),
    /// Nothing until the time given.
    Quiet,
    /// Its stdout closed.
    Closed,
    /// It wrote more than the runner reads: this many bytes.
    Flooded(u64),
}

/// The two pipes to an engine, as the runner holds them: lines to its
/// stdin (a thread writes them), lines from its stdout (a thread reads
/// them).
struct Pipes {
    stdin: Option<mpsc::Sender<Vec<u8>>>,
    stdout: mpsc::Receiver<Out>,
}

impl Pipes {
    fn send(&mut self, line: Vec<u8>) {
        // An engine that stopped reading is judged by what it answers.
        if let Some(stdin) = &self.stdin {
            let _ = stdin.send(line);
        }
    }

    fn close(&mut self) {
        self.stdin = None;
    }

    fn recv(&mut self, until: Instant) -> Recv {
        recv_from(&self.stdout, until)
    }
}

/// One engine, as the runner drives it: a child or one in process.
trait Wire {
    fn pipes(&mut self) -> &mut Pipes;
    fn virtual_pauses(&self) -> bool;
    /// Ends the engine (killing it when `kill`, or when it does not exit
    /// soon); how it ended, and its stderr's tail.
    fn finish(&mut self, kill: bool) -> (End, Vec<String>);
}

/// What the stdout reader thread says.
enum Out {
    Line(Vec<u8>, usize),
    Closed,
    Flooded(u64),
}

/// Reads `src` line by line to the channel: each kept up to the line
/// limit, at most `max` bytes in all.
fn read_lines(mut src: impl BufRead, tx: &mpsc::SyncSender<Out>, max: u64) {
    let mut total = 0u64;
    loop {
        let mut line = Vec::new();
        let mut len = 0usize;
        let mut ended = false;
        loop {
            let buf = match src.fill_buf() {
                Ok(buf) => buf,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => &[][..],
            };
            if buf.is_empty() {
                ended = true;
                break;
            }
            let (take, lf) = match memchr::memchr(b'\n', buf) {
                Some(i) => (i, true),
                None => (buf.len(), false),
            };
            let room = DEFAULT_MAX_LINE_LEN.saturating_sub(line.len());
            line.extend_from_slice(&buf[..take.min(room)]);
            len += take;
            src.consume(take + usize::from(lf));
            total += (take + usize::from(lf)) as u64;
            if total > max {
                let _ = tx.send(Out::Flooded(max));
                return;
            }
            if lf {
                break;
            }
        }
        if (len > 0 || !ended) && tx.send(Out::Line(line, len)).is_err() {
            return;
        }
        if ended {
            let _ = tx.send(Out::Closed);
            return;
        }
    }
}

fn recv_from(rx: &mpsc::Receiver<Out>, until: Instant) -> Recv {
    match rx.recv_timeout(until.saturating_duration_since(Instant::now())) {
        Ok(Out::Line(line, len)) => Recv::Line(line, len),
        Ok(Out::Flooded(max)) => Recv::Flooded(max),
        Ok(Out::Closed) | Err(mpsc::RecvTimeoutError::Disconnected) => Recv::Closed,
        Err(mpsc::RecvTimeoutError::Timeout) => Recv::Quiet,
    }
}

/// An engine program over its stdio, in a process group of its own.
struct ChildWire {
    child: Child,
    pipes: Pipes,
    stderr: Arc<Mutex<VecDeque<String>>>,
    /// Closes when the engine's stderr has been read to its end.
    stderr_done: mpsc::Receiver<()>,
}

impl ChildWire {
    fn spawn(engine: &mut std::process::Command, max_output: u64) -> io::Result<ChildWire> {
        engine
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            // Its own group, so that what it starts is killed with it.
            engine.process_group(0);
        }
        let mut child = engine.spawn()?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        let stderr = child.stderr.take().expect("piped");
        let (to_stdin, lines) = mpsc::channel::<Vec<u8>>();
        std::thread::spawn(move || {
            // An engine that stops reading is judged by what it answers.
            let mut stdin = stdin;
            for line in lines {
                if stdin.write_all(&line).and_then(|()| stdin.flush()).is_err() {
                    return;
                }
            }
        });
        let (tx, rx) = mpsc::sync_channel(256);
        std::thread::spawn(move || {
            read_lines(
                io::BufReader::with_capacity(64 << 10, stdout),
                &tx,
                max_output,
            )
        });
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let kept = Arc::clone(&tail);
        let (done, stderr_done) = mpsc::channel::<()>();
        std::thread::spawn(move || {
            let _done = done;
            let src = io::BufReader::new(stderr);
            let (tx, rx) = mpsc::sync_channel(64);
            std::thread::spawn(move || read_lines(src, &tx, u64::MAX));
            for out in rx {
                let Out::Line(line, _) = out else { break };
                let mut tail = kept.lock().unwrap_or_else(PoisonError::into_inner);
                tail.push_back(shown(&line));
                if tail.len() > STDERR_TAIL {
                    tail.pop_front();
                }
            }
        });
        Ok(ChildWire {
            child,
            pipes: Pipes {
                stdin: Some(to_stdin),
                stdout: rx,
            },
            stderr: tail,
            stderr_done,
        })
    }

    fn kill(&mut self) {
        #[cfg(unix)]
        {
            // The whole group: a shell's pipeline, an engine's helpers.
            let _ = std::process::Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", self.child.id())])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
        let _ = self.child.kill();
    }
}

impl Wire for ChildWire {
    fn pipes(&mut self) -> &mut Pipes {
        &mut self.pipes
    }

    fn virtual_pauses(&self) -> bool {
        false
    }

    fn finish(&mut self, kill: bool) -> (End, Vec<String>) {
        self.pipes.close();
        let mut end = None;
        if !kill {
            // Its stdout closed: it is exiting. Polled from 0.1 ms up, so a
            // quick exit costs a session no more than it takes.
            let until = Instant::now() + EXIT_GRACE;
            let mut pause = Duration::from_micros(100);
            while end.is_none() && Instant::now() < until {
                match self.child.try_wait() {
                    Ok(Some(status)) => end = Some(End::Exited(ended(status))),
                    Ok(None) => {
                        std::thread::sleep(pause);
                        pause = (pause * 2).min(Duration::from_millis(5));
                    }
                    Err(e) => end = Some(End::Exited(format!("could not be waited for: {e}"))),
                }
            }
        }
        // An engine that did not exit by itself goes with its group.
        if end.is_none() {
            self.kill();
        }
        let status: Option<ExitStatus> = self.child.wait().ok();
        let end = end.unwrap_or(if kill {
            End::Exited(status.map_or_else(|| "was killed".to_owned(), ended))
        } else {
            End::Lingered
        });
        // Its stderr to the end: at once once it exited, unless something
        // it started still holds stderr open; then that goes too.
        if self.stderr_done.recv_timeout(STDERR_GRACE).is_err() {
            self.kill();
        }
        let tail = self
            .stderr
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .cloned()
            .collect();
        (end, tail)
    }
}

/// The engine's input, in process: the lines the runner sends, then the
/// end of input once it closes.
#[derive(Debug)]
pub struct EngineInput {
    lines: mpsc::Receiver<Vec<u8>>,
    buf: Vec<u8>,
    at: usize,
}

impl Read for EngineInput {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = {
            let buf = self.fill_buf()?;
            let n = buf.len().min(out.len());
            out[..n].copy_from_slice(&buf[..n]);
            n
        };
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for EngineInput {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.at == self.buf.len() {
            match self.lines.recv() {
                Ok(line) => {
                    self.buf = line;
                    self.at = 0;
                }
                Err(_) => return Ok(&[]),
            }
        }
        Ok(&self.buf[self.at..])
    }

    fn consume(&mut self, n: usize) {
        self.at = (self.at + n).min(self.buf.len());
    }
}

/// The engine's output, in process: each line to the runner as it is
/// written.
#[derive(Debug)]
pub struct EngineOutput {
    lines: mpsc::SyncSender<Out>,
    partial: Vec<u8>,
    total: u64,
    max: u64,
}

impl Write for EngineOutput {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.total += bytes.len() as u64;
        if self.total > self.max {
            let _ = self.lines.send(Out::Flooded(self.max));
            return Err(io::ErrorKind::BrokenPipe.into());
        }
        let mut rest = bytes;
        while let Some(i) = memchr::memchr(b'\n', rest) {
            self.partial.extend_from_slice(&rest[..i]);
            let line = std::mem::take(&mut self.partial);
            let len = line.len();
            self.lines
                .send(Out::Line(line, len))
                .map_err(|_| io::Error::from(io::ErrorKind::BrokenPipe))?;
            rest = &rest[i + 1..];
        }
        self.partial.extend_from_slice(rest);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for EngineOutput {
    fn drop(&mut self) {
        if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            let len = line.len();
            let _ = self.lines.send(Out::Line(line, len));
        }
        let _ = self.lines.send(Out::Closed);
    }
}

/// An engine in process, on a thread of its own.
struct InProcess {
    pipes: Pipes,
    result: mpsc::Receiver<String>,
    /// Joined once it has returned, so that no thread of a finished run
    /// outlives it (a leak checker sees its thread-locals otherwise).
    thread: Option<std::thread::JoinHandle<()>>,
}

impl InProcess {
    fn start<F>(serve: F, max: u64) -> InProcess
    where
        F: FnOnce(EngineInput, EngineOutput) -> io::Result<Option<ReadError>> + Send + 'static,
    {
        let (to_stdin, lines) = mpsc::channel();
        let (tx, rx) = mpsc::sync_channel(256);
        let (done, result) = mpsc::channel();
        let input = EngineInput {
            lines,
            buf: Vec::new(),
            at: 0,
        };
        let output = EngineOutput {
            lines: tx,
            partial: Vec::new(),
            total: 0,
            max,
        };
        let thread = std::thread::spawn(move || {
            let how = match serve(input, output) {
                Ok(None) => "returned at the end of its input".to_owned(),
                Ok(Some(stopped)) => format!("returned after it stopped reading: {stopped}"),
                Err(e) => format!("returned an error: {e}"),
            };
            let _ = done.send(how);
        });
        InProcess {
            pipes: Pipes {
                stdin: Some(to_stdin),
                stdout: rx,
            },
            result,
            thread: Some(thread),
        }
    }
}

impl Wire for InProcess {
    fn pipes(&mut self) -> &mut Pipes {
        &mut self.pipes
    }

    fn virtual_pauses(&self) -> bool {
        true
    }

    fn finish(&mut self, kill: bool) -> (End, Vec<String>) {
        self.pipes.close();
        let wait = if kill { Duration::ZERO } else { EXIT_GRACE };
        let end = match self.result.recv_timeout(wait) {
            Ok(how) => {
                if let Some(thread) = self.thread.take() {
                    let _ = thread.join();
                }
                End::Exited(how)
            }
            Err(_) if kill => End::Exited("was abandoned on its thread".to_owned()),
            Err(_) => End::Lingered,
        };
        (end, Vec::new())
    }
}
