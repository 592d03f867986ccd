//! What a session run found ([`SessionVerdict`]): every line sent and
//! received with the model's attribution, what was still owed at the end,
//! how the engine ended, and the broken promises in the protocol's words.

use crate::conversation::{Attribution, Owed};
use std::fmt;
use std::time::Duration;

/// How long an engine may take to exit once its stdout closed (then it
/// is killed: [`End::Lingered`]).
pub(super) const EXIT_GRACE: Duration = Duration::from_secs(2);

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
    pub(super) commands: Vec<CommandSeen>,
}

/// A line the runner sent.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Sent {
    /// Its number among the lines sent, from 1 (as [`Conversation`](crate::v2::serve::Conversation)
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
pub(super) struct CommandSeen {
    /// `prompt`, `steer`, ...; `None` for a line that is not a command.
    pub(super) name: Option<&'static str>,
    /// The answer it is owed, in words: `a steer_applied or steer_dropped
    /// with submission_id "s1"`.
    pub(super) detail: Option<String>,
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
                let received = self
                    .received
                    .get(usize::try_from(n - 1).unwrap_or(usize::MAX));
                if let Some(refused) = received.and_then(|r| self.refused_valid(r, why)) {
                    return refused;
                }
                let name = received
                    .and_then(|r| r.attribution.event)
                    .unwrap_or("an event");
                format!("event {n} ({name}) fits no rule of the conversation: {why}")
            })
            .collect();
        problems.extend(self.not_events.iter().cloned());
        let end = format!("by the end (the engine {})", self.ended());
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

    /// A `command_error` that answers no refused line, said as what it
    /// is: the engine refusing the last valid command sent before it
    /// (`command 3 (steer) is valid but the engine refused it: "..."`).
    fn refused_valid(&self, received: &Received, why: &str) -> Option<String> {
        if received.attribution.event != Some("command_error")
            || !why.starts_with("a command_error with no refused line")
        {
            return None;
        }
        let sent = self
            .sent
            .iter()
            .rev()
            .filter(|s| s.at <= received.at)
            .find(|s| self.command_name(s.n).is_some())?;
        let name = self.command_name(sent.n)?;
        let error = serde_json::from_str::<serde_json::Value>(&received.line)
            .ok()
            .and_then(|v| v.get("error").and_then(|e| e.as_str()).map(str::to_owned))
            .map_or_else(|| received.line.clone(), |e| super::shown::quoted(&e));
        Some(format!(
            "command {} ({name}) is valid but the engine refused it: {error} (event {}, command_error)",
            sent.n, received.attribution.n
        ))
    }

    /// How the engine ended, in words: [`End`]'s, and for an engine killed
    /// silent, or at the session's bound while silent, the command it
    /// wrote nothing after (`was silent since command 5 (cancel): nothing
    /// for 10 s while it owed an answer; killed`).
    #[must_use]
    pub fn ended(&self) -> String {
        let last_heard = self.received.last().map(|r| r.at);
        let since = self
            .sent
            .iter()
            .find(|s| last_heard.is_none_or(|at| s.at >= at))
            .map(|s| {
                let name = self.command_name(s.n).unwrap_or("a line it must refuse");
                format!("command {} ({name})", s.n)
            });
        match (&self.end, since) {
            (End::Silent(d), Some(since)) => format!(
                "was silent since {since}: nothing for {} s while it owed an answer; killed",
                d.as_secs_f64()
            ),
            (End::TimedOut(d), Some(since)) => format!(
                "ran past the session's bound of {} s, silent since {since}; killed",
                d.as_secs_f64()
            ),
            (end, _) => end.to_string(),
        }
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
            self.ended(),
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
