//! A recording read as the conversation it holds (what answered each
//! command line, how each turn went, what was owed at the end), the session
//! that sends its command lines again at the same points of the
//! conversation, and the difference between two conversations: what
//! `serve-command replay` runs and prints.

use super::replay::{engine_reads, Reads, RecordingError};
use super::session::{Action, After, Session, Step};
use crate::conversation::record::{LogReader, Wire};
use crate::conversation::{Conversation, Direction, Owed};
use crate::v2::{Command, Event, PredictionOutcome};
use std::fmt::{self, Write as _};
use std::io::BufRead;

/// A recorded session, read: each command line with what answered it and
/// the events of the turn it started, the events that answered nothing,
/// and what was still owed at the end, all as
/// [`Conversation`](crate::v2::serve::Conversation) attributes them.
///
/// Two transcripts of the same command lines compare
/// ([`Transcript::compare`]) command by command and turn by turn, so the
/// order in which a turn's events and a request's reply interleave (a
/// matter of pace) never shows as a difference; and
/// [`Transcript::session`] is the session that sends the recording's
/// command lines again, each at the point of the conversation where it was
/// sent, for the [`Runner`](super::Runner) to run against a new build.
///
/// ```
/// use serve_command::workbench::{Compare, Transcript};
///
/// let recording = concat!(
///     r#"{"dir":"command","n":1,"line":"{\"command\":\"prompt\",\"content\":\"hi\"}"}"#, "\n",
///     r#"{"dir":"event","n":1,"line":"{\"event\":\"agent_step\",\"step\":1}"}"#, "\n",
///     r#"{"dir":"event","n":2,"line":"{\"event\":\"assistant_delta\",\"content\":\"Hel\"}"}"#, "\n",
///     r#"{"dir":"event","n":3,"line":"{\"event\":\"assistant_delta\",\"content\":\"lo\"}"}"#, "\n",
///     r#"{"dir":"event","n":4,"line":"{\"event\":\"agent_finished\",\"answer\":\"Hello\"}"}"#, "\n",
/// );
/// let replayed = concat!(
///     r#"{"dir":"command","n":1,"line":"{\"command\":\"prompt\",\"content\":\"hi\"}"}"#, "\n",
///     r#"{"dir":"event","n":1,"line":"{\"event\":\"agent_step\",\"step\":1}"}"#, "\n",
///     r#"{"dir":"event","n":2,"line":"{\"event\":\"assistant_delta\",\"content\":\"Hi\"}"}"#, "\n",
///     r#"{"dir":"event","n":3,"line":"{\"event\":\"turn_failed\",\"error\":\"overloaded\"}"}"#, "\n",
/// );
/// let recorded = Transcript::read(recording.as_bytes())?;
/// let replayed = Transcript::read(replayed.as_bytes())?;
/// // Model text aside, the turn ended otherwise.
/// let comparison = recorded.compare(&replayed, &Compare::new());
/// assert_eq!(
///     comparison.to_string(),
///     "command 1 (prompt), its turn: - agent_finished  + turn_failed\n"
/// );
/// # Ok::<(), serve_command::workbench::RecordingError>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct Transcript {
    commands: Vec<Held>,
    /// Events that answer no command and belong to no turn.
    outside: Vec<Seen>,
    owed: Owed,
    events: u64,
    violations: Vec<(u64, String)>,
}

/// One command line of a transcript.
#[derive(Clone, Debug)]
struct Held {
    line: Vec<u8>,
    /// Its name, `refused` (a line the engine refuses), `blank`, or
    /// `unread` (sent after the engine stopped reading).
    kind: &'static str,
    /// When it was sent.
    after: After,
    /// An approval answering the k-th question asked: allowed or not.
    approves: Option<(u64, bool)>,
    /// The events that answered it (for a compact: its compaction's).
    answers: Vec<Seen>,
    /// The events of the turn(s) it started.
    turn: Vec<Seen>,
}

/// One event as the comparison sees it.
#[derive(Clone, Debug)]
struct Seen {
    /// `agent_step`; `agent_finished (undecodable)`; `not an event`.
    kind: Name,
    /// What of it a comparison that normalises keeps (outcomes, the
    /// controller's ids, refusal messages), after its kind.
    detail: String,
    line: Vec<u8>,
    /// For an answer inside a turn: the turn's command.
    turn_of: Option<u64>,
    /// It fits no rule of the serve loop.
    violation: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Name {
    Event(&'static str),
    Unreadable(String),
    NotAnEvent,
}

impl Name {
    fn as_str(&self) -> &str {
        match self {
            Name::Event(name) => name,
            Name::Unreadable(name) => name,
            Name::NotAnEvent => "not an event",
        }
    }
}

impl Transcript {
    /// Reads a recording: a log of `serve-command tap --log`, or a
    /// controller's recording ([`Recorder`](crate::v2::serve::Recorder)).
    ///
    /// # Errors
    ///
    /// A failed read, or a record that is not one (its line, and why), as
    /// `serve-command trace` says it; an event record over the tap's line
    /// limit (`"line":null`) reads as a line that is not an event.
    pub fn read(input: impl BufRead) -> Result<Transcript, RecordingError> {
        let mut log = LogReader::new(input);
        let mut conversation = Conversation::new();
        let mut transcript = Transcript::default();
        // What the last events since the last command line said: the point
        // of the conversation a command line sent now is sent at.
        let mut anchor: Option<After> = None;
        // Per command line, the agent_steps of its turn so far.
        let mut steps: Vec<u64> = Vec::new();
        let mut asked: Vec<String> = Vec::new();
        let mut stopped = false;
        while let Some(record) = log.read_record()? {
            let line = match record.line {
                Wire::Bytes(bytes) => bytes,
                // Over the limit: a line the engine refuses, and an event
                // line that is none.
                Wire::TooLong => b"\x00".to_vec(),
            };
            if record.direction == Direction::Command {
                conversation.command(&line);
                let (kind, approves) = match engine_reads(&line, &mut stopped) {
                    Reads::Unread => ("unread", None),
                    Reads::Blank => ("blank", None),
                    Reads::Refused => ("refused", None),
                    Reads::Command(Command::ApprovalDecision { id, allow }) => {
                        let k = asked.iter().position(|a| *a == id);
                        ("approval", k.map(|k| (k as u64 + 1, allow)))
                    }
                    Reads::Command(command) => (command.name(), None),
                };
                transcript.commands.push(Held {
                    line,
                    kind,
                    after: anchor.take().unwrap_or(After::Now),
                    approves,
                    answers: Vec::new(),
                    turn: Vec::new(),
                });
                steps.push(0);
                continue;
            }
            let (decoded, attribution) = match Event::from_slice(&line) {
                Ok(event) => {
                    let a = conversation.decoded(Some(&event));
                    (Some(event), a)
                }
                Err(_) => (None, conversation.unreadable(&line)),
            };
            transcript.events += 1;
            let kind = match (&decoded, attribution.unreadable) {
                (Some(event), _) => Name::Event(event.name()),
                (None, Some(name)) => Name::Unreadable(name),
                (None, None) => Name::NotAnEvent,
            };
            let name = kind.as_str();
            let violation = attribution.violation.is_some();
            if let Some(why) = attribution.violation {
                transcript.violations.push((attribution.n, why));
            }
            if let Some(Event::ApprovalRequested { id, .. }) = &decoded {
                asked.push(id.clone());
            }
            match (attribution.turn, attribution.answers) {
                (Some(t), _) => {
                    // The model attributes only to command lines it was given.
                    let count = index(t).and_then(|i| steps.get_mut(i));
                    let steps = count.map_or(0, |count| {
                        *count += u64::from(name == "agent_step");
                        *count
                    });
                    let point = match (name, attribution.answers) {
                        ("agent_finished" | "turn_failed" | "agent_aborted", _) => {
                            Some(After::Ended(t))
                        }
                        ("approval_requested", _) => Some(After::Asked(asked.len() as u64)),
                        (_, Some(c)) => Some(After::Answered(c)),
                        ("agent_step", _) => Some(After::Step {
                            turn: Some(t),
                            step: steps,
                        }),
                        _ => None,
                    };
                    // Any other event of the turn (a delta, a tool result)
                    // marks no point: the turn's last one stands, unless a
                    // later point (a reply) came since the last command.
                    anchor = point.or(anchor).or(Some(if steps > 0 {
                        After::Step {
                            turn: Some(t),
                            step: steps,
                        }
                    } else {
                        After::Started(t)
                    }));
                }
                (None, Some(c)) => match name {
                    "compaction_finished" | "compaction_failed" => anchor = Some(After::Ended(c)),
                    "compaction_started" => {}
                    _ => anchor = Some(After::Answered(c)),
                },
                (None, None) => {}
            }
            let seen = Seen {
                detail: decoded.as_ref().map(detail).unwrap_or_default(),
                kind,
                line,
                turn_of: None,
                violation,
            };
            transcript.place(seen, attribution.answers, attribution.turn);
        }
        transcript.owed = conversation.owed();
        Ok(transcript)
    }

    /// Puts an event where it belongs: under the command it answers, in
    /// its turn, or outside both.
    fn place(&mut self, mut seen: Seen, answers: Option<u64>, turn: Option<u64>) {
        // The model attributes only to command lines it was given.
        let turn_at = turn.and_then(index);
        let answer_at = answers.filter(|&c| Some(c) != turn).and_then(index);
        match (answer_at, turn_at) {
            (Some(a), Some(t)) => {
                self.commands[t].turn.push(seen.clone());
                seen.turn_of = turn;
                self.commands[a].answers.push(seen);
            }
            (Some(a), None) => self.commands[a].answers.push(seen),
            (None, Some(t)) => self.commands[t].turn.push(seen),
            (None, None) => self.outside.push(seen),
        }
    }

    /// The session that sends the recording's command lines again, each at
    /// the point of the conversation where the recording sent it: once the
    /// events before it in the recording (since the command line before
    /// it) have come again, anchored on the last of them that marks a
    /// point (a turn's start, its k-th `agent_step` or its end, the answer
    /// of a command, the k-th question asked), never on a count of deltas
    /// or a number of milliseconds. An `approval` answers the question
    /// asked in the same place, by the id the new run's engine gives it.
    #[must_use]
    pub fn session(&self) -> Session {
        Session::new(
            self.commands
                .iter()
                .map(|held| {
                    let action = match held.approves {
                        Some((asked, allow)) => Action::Approve { asked, allow },
                        None => Action::Send(held.line.clone()),
                    };
                    Step::new(held.after, action)
                })
                .collect(),
        )
    }

    /// How many command lines it holds.
    #[must_use]
    pub fn commands(&self) -> u64 {
        self.commands.len() as u64
    }

    /// How many lines of the engine's stdout it holds.
    #[must_use]
    pub fn events(&self) -> u64 {
        self.events
    }

    /// The events that fit no rule of the serve loop: each by its number
    /// among the engine's lines, with why.
    #[must_use]
    pub fn violations(&self) -> &[(u64, String)] {
        &self.violations
    }

    /// Compares this conversation (`-`, the recording) with `other` (`+`,
    /// a new run of the same command lines), as `how` says: per command
    /// line, what answered it; per turn, the sequence of its events; the
    /// events that answered nothing; what was owed at the end.
    #[must_use]
    pub fn compare(&self, other: &Transcript, how: &Compare) -> Comparison {
        let mut differences = Vec::new();
        let count = self.commands.len().max(other.commands.len());
        for i in 0..count {
            let (ours, theirs) = (self.commands.get(i), other.commands.get(i));
            let n = i as u64 + 1;
            let kind = ours.or(theirs).map_or("", |h| h.kind);
            let place = |part| Place::Command {
                n,
                kind: kind.to_owned(),
                part,
            };
            let sent = |held: Option<&Held>| match held {
                Some(h) => vec![format!("sent: {}", h.kind)],
                None => vec!["not sent".to_owned()],
            };
            if ours.map(|h| h.kind) != theirs.map(|h| h.kind) {
                differences.push(Difference::of(place(Part::Sent), sent(ours), sent(theirs)));
                continue;
            }
            let answers = |h: Option<&Held>| how.view(h.map_or(&[][..], |h| &h.answers));
            differences.extend(Difference::between(
                place(Part::Answers),
                answers(ours),
                answers(theirs),
            ));
            let turn = |h: Option<&Held>| how.view(h.map_or(&[][..], |h| &h.turn));
            differences.extend(Difference::between(
                place(Part::Turn),
                turn(ours),
                turn(theirs),
            ));
        }
        differences.extend(Difference::between(
            Place::Outside,
            how.view(&self.outside),
            how.view(&other.outside),
        ));
        differences.extend(Difference::between(
            Place::Owed,
            vec![owed_words(&self.owed)],
            vec![owed_words(&other.owed)],
        ));
        Comparison { differences }
    }
}

/// Command line `n`'s place among a transcript's, counted from 0.
fn index(n: u64) -> Option<usize> {
    usize::try_from(n.checked_sub(1)?).ok()
}

/// What of an event a comparison that normalises keeps, after its kind:
/// what the controller chose (request and submission ids), how a command
/// came out (outcomes, a refusal's message, a steer's kind), never model
/// text, counts or the ids the engine makes up.
fn detail(event: &Event) -> String {
    let quoted = |s: &str| serde_json::to_string(s).unwrap_or_default();
    let with_id = |id: &Option<String>| match id {
        Some(id) => format!(" submission_id {}", quoted(id)),
        None => String::new(),
    };
    match event {
        Event::CommandError { error } => format!(" {}", quoted(error)),
        Event::JobsSnapshot { request_id, .. } => format!(" request_id {}", quoted(request_id)),
        Event::JobStopResult {
            request_id,
            outcome,
            ..
        } => format!(
            " request_id {} outcome {}",
            quoted(request_id),
            outcome.as_str()
        ),
        Event::PredictionResult {
            source_sequence,
            outcome,
        } => {
            let outcome = match outcome {
                PredictionOutcome::Completed { .. } => "completed",
                PredictionOutcome::Skipped => "skipped",
                PredictionOutcome::Cancelled => "cancelled",
                PredictionOutcome::Failed(_) => "failed",
            };
            format!(" source_sequence {source_sequence} outcome {outcome}")
        }
        Event::SteerApplied {
            kind,
            submission_id,
            ..
        } => format!(" kind {}{}", kind.as_str(), with_id(submission_id)),
        Event::SteerDropped { submission_id, .. } => with_id(submission_id),
        Event::ApprovalRequested { tool_name, .. } => format!(" tool {}", quoted(tool_name)),
        Event::ApprovalResolved { outcome, .. } => format!(" outcome {}", outcome.as_str()),
        Event::GoalUpdated { goal } => if goal.is_some() { " set" } else { " cleared" }.to_owned(),
        Event::JobChanged { kind, .. } => format!(" {}", kind.as_str()),
        Event::ToolResult {
            tool_name,
            is_error,
            ..
        } => format!(
            " tool {}{}",
            quoted(tool_name),
            if *is_error { " error" } else { "" }
        ),
        _ => String::new(),
    }
}

/// What is owed, in words that hold across runs (a question by count: its
/// event's number differs).
fn owed_words(owed: &Owed) -> String {
    let mut parts = Vec::new();
    let list = |what: &str, ns: &[u64]| {
        let ns: Vec<String> = ns.iter().map(u64::to_string).collect();
        format!("{what} {}", ns.join(", "))
    };
    if let Some(n) = owed.running {
        parts.push(format!("the work of command {n}"));
    }
    for (what, ns) in [
        ("the queued work of command", &owed.queued),
        ("command_error for command", &owed.refused),
        ("replies to command", &owed.requests),
        ("steer replies to command", &owed.steers),
        ("goal_updated for command", &owed.goals),
    ] {
        if !ns.is_empty() {
            parts.push(list(what, ns));
        }
    }
    if !owed.approvals.is_empty() {
        parts.push(format!("{} open question(s)", owed.approvals.len()));
    }
    if parts.is_empty() {
        "owed nothing".to_owned()
    } else {
        format!("owed {}", parts.join("; "))
    }
}

/// How [`Transcript::compare`] compares: normalised (the default) or
/// exact, and which event kinds it leaves out.
///
/// Normalised, an event is its kind and what a controller acts on: a
/// reply's `request_id` and outcome, a steer's `submission_id` and kind, a
/// refusal's message, an approval's outcome, a tool's name and whether it
/// failed, whether a goal was set or cleared. Model text (deltas,
/// messages, reasoning, answers, errors), usage counts, the ids the engine
/// makes up (approvals, jobs, tool calls, sessions), sequences and times
/// are left out; and deltas, model text, are compared only by which kinds
/// a turn streamed (`assistant_delta… (streamed)`, last in its sequence),
/// not by where they fall: whether a run of them comes before or after a
/// steer lands is the engine's pace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Compare {
    exact: bool,
    ignore: Vec<String>,
}

impl Compare {
    /// Normalised, nothing left out.
    #[must_use]
    pub fn new() -> Compare {
        Compare::default()
    }

    /// Each event byte for byte (its line), no run collapsed.
    #[must_use]
    pub fn exact(mut self, exact: bool) -> Compare {
        self.exact = exact;
        self
    }

    /// Leaves events of this kind (its wire name; `not an event` for lines
    /// that are none) out of the comparison.
    #[must_use]
    pub fn ignore(mut self, event: impl Into<String>) -> Compare {
        self.ignore.push(event.into());
        self
    }

    /// The entries a sequence of events compares as.
    fn view(&self, events: &[Seen]) -> Vec<String> {
        let mut out: Vec<String> = Vec::with_capacity(events.len());
        // Normalised, deltas are model text: where a run of them falls
        // (before or after a steer lands, split by a step) is pace, so
        // only which kinds streamed is compared, once, at the end.
        let mut streamed = [false; 2];
        for seen in events {
            let name = seen.kind.as_str();
            if self.ignore.iter().any(|i| i == name) {
                continue;
            }
            let delta = ["assistant_delta", "reasoning_delta"]
                .iter()
                .position(|d| *d == name);
            if let (false, Some(d), false) = (self.exact, delta, seen.violation) {
                streamed[d] = true;
                continue;
            }
            let mut entry = if self.exact {
                String::from_utf8_lossy(&seen.line).into_owned()
            } else {
                let mut entry = name.to_owned();
                if matches!(seen.kind, Name::Unreadable(_)) {
                    entry.push_str(" (undecodable)");
                }
                entry.push_str(&seen.detail);
                entry
            };
            if seen.violation {
                entry.push_str(" (fits no rule)");
            }
            if let Some(t) = seen.turn_of {
                let _ = write!(entry, " (turn of command {t})");
            }
            out.push(entry);
        }
        for (kind, streamed) in ["assistant_delta", "reasoning_delta"].iter().zip(streamed) {
            if streamed {
                out.push(format!("{kind}… (streamed)"));
            }
        }
        out
    }
}

/// What [`Transcript::compare`] found: every place where the two
/// conversations differ, in command order. Its `Display` is the diff a
/// person reads, `-` the recording and `+` the new run, each difference
/// under its place:
///
/// ```text
/// command 4 (steer): - steer_applied kind prompt (turn of command 1)  + steer_dropped
/// command 5 (prompt), its turn:
///   - agent_finished
///   + turn_failed
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Comparison {
    differences: Vec<Difference>,
}

impl Comparison {
    /// Whether the two conversations are the same, as compared.
    #[must_use]
    pub fn is_same(&self) -> bool {
        self.differences.is_empty()
    }

    /// Where they differ, in command order, then the events outside any,
    /// then what was owed.
    #[must_use]
    pub fn differences(&self) -> &[Difference] {
        &self.differences
    }
}

impl fmt::Display for Comparison {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for difference in &self.differences {
            writeln!(f, "{difference}")?;
        }
        Ok(())
    }
}

/// One place where two conversations differ: the entries of the
/// recording (`-`) and of the new run (`+`) between what the two have in
/// common before and after.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Difference {
    /// Where.
    pub place: Place,
    /// The recording's entries there (none: the new run added some).
    pub recorded: Vec<String>,
    /// The new run's entries there (none: the recording's are missing).
    pub replayed: Vec<String>,
}

/// Where a [`Difference`] is.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Place {
    /// Command line `n` (of kind `kind`: its name, `refused`, `blank` or
    /// `unread`).
    Command {
        /// Its number, from 1.
        n: u64,
        /// Its kind.
        kind: String,
        /// Which of its parts.
        part: Part,
    },
    /// The events that answered nothing and belonged to no turn.
    Outside,
    /// What was owed at the end.
    Owed,
}

/// Which part of a command line a [`Place`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Part {
    /// Whether it was sent, and as what.
    Sent,
    /// The events that answered it.
    Answers,
    /// The events of the turn it started.
    Turn,
}

impl Difference {
    fn of(place: Place, recorded: Vec<String>, replayed: Vec<String>) -> Difference {
        Difference {
            place,
            recorded,
            replayed,
        }
    }

    /// The difference between two sequences, with what they share at both
    /// ends left out; `None` when they are the same.
    fn between(place: Place, mut a: Vec<String>, mut b: Vec<String>) -> Option<Difference> {
        if a == b {
            return None;
        }
        let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
        a.drain(..prefix);
        b.drain(..prefix);
        let suffix = a
            .iter()
            .rev()
            .zip(b.iter().rev())
            .take_while(|(x, y)| x == y)
            .count();
        a.truncate(a.len() - suffix);
        b.truncate(b.len() - suffix);
        Some(Difference::of(place, a, b))
    }
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::Command { n, kind, part } => {
                write!(f, "command {n} ({kind})")?;
                match part {
                    Part::Sent | Part::Answers => Ok(()),
                    Part::Turn => f.write_str(", its turn"),
                }
            }
            Place::Outside => f.write_str("outside any command"),
            Place::Owed => f.write_str("at the end"),
        }
    }
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:", self.place)?;
        if self.recorded.len() <= 1 && self.replayed.len() <= 1 {
            // One entry each way (or none): one line, as a person scans it.
            if let Some(entry) = self.recorded.first() {
                write!(f, " - {entry}")?;
            }
            if let Some(entry) = self.replayed.first() {
                let sep = if self.recorded.is_empty() { " " } else { "  " };
                write!(f, "{sep}+ {entry}")?;
            }
            return Ok(());
        }
        for entry in &self.recorded {
            write!(f, "\n  - {entry}")?;
        }
        for entry in &self.replayed {
            write!(f, "\n  + {entry}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{Compare, Transcript};

    /// A recording of these lines: `>` a command line, `<` an event line.
    fn recording(lines: &[&str]) -> String {
        let (mut commands, mut events) = (0, 0);
        let mut out = String::new();
        for line in lines {
            let (dir, n, text) = match line.split_at(1) {
                (">", text) => {
                    commands += 1;
                    ("command", commands, text)
                }
                (_, text) => {
                    events += 1;
                    ("event", events, text)
                }
            };
            let text = serde_json::to_string(text).unwrap();
            out += &format!("{{\"dir\":\"{dir}\",\"n\":{n},\"line\":{text}}}\n");
        }
        out
    }

    fn read(lines: &[&str]) -> Transcript {
        Transcript::read(recording(lines).as_bytes()).unwrap()
    }

    const PROMPT: &str = r#">{"command":"prompt","content":"hi"}"#;
    const STEP1: &str = r#"<{"event":"agent_step","step":1}"#;
    const DELTA: &str = r#"<{"event":"assistant_delta","content":"x"}"#;
    const DONE: &str = r#"<{"event":"agent_finished","answer":"x"}"#;
    const JOBS: &str = r#">{"command":"jobs_snapshot","request_id":"j"}"#;
    const SNAPSHOT: &str = r#"<{"event":"jobs_snapshot","request_id":"j","jobs":[]}"#;
    const ASKED: &str = r#"<{"event":"approval_requested","id":"a-7","tool_name":"shell","detail":"d","body":null}"#;

    /// Each command line is sent again at the point of the conversation the
    /// recording sent it: after the last event since the command line
    /// before it that marks a point, never after a count of deltas.
    #[test]
    fn each_line_is_anchored_on_the_last_point_before_it() {
        let table: &[(&[&str], &str)] = &[
            // Nothing came in between: at once.
            (&[PROMPT, JOBS], "{\"send\":{\"command\":\"jobs_snapshot\",\"request_id\":\"j\"}}\n"),
            // A step and deltas after it: the step.
            (
                &[PROMPT, STEP1, DELTA, DELTA, r#">{"command":"cancel"}"#],
                "{\"after\":{\"step\":1,\"turn\":1},\"send\":{\"command\":\"cancel\"}}\n",
            ),
            // Deltas before any step: the turn's start.
            (
                &[PROMPT, DELTA, r#">{"command":"cancel"}"#],
                "{\"after\":{\"started\":1},\"send\":{\"command\":\"cancel\"}}\n",
            ),
            // The turn's end.
            (
                &[PROMPT, STEP1, DELTA, DONE, PROMPT],
                "{\"after\":{\"ended\":1},\"send\":{\"command\":\"prompt\",\"content\":\"hi\"}}\n",
            ),
            // A reply, even mid-turn, is a point of its own.
            (
                &[PROMPT, STEP1, JOBS, SNAPSHOT, DELTA, r#">{"command":"compact"}"#],
                "{\"after\":{\"step\":1,\"turn\":1},\"send\":{\"command\":\"jobs_snapshot\",\"request_id\":\"j\"}}\n{\"after\":{\"answered\":2},\"send\":{\"command\":\"compact\"}}\n",
            ),
            // An approval answers the question asked in its place, by the
            // id the new engine gives it.
            (
                &[PROMPT, STEP1, ASKED, r#">{"command":"approval","id":"a-7","allow":false}"#],
                "{\"after\":{\"asked\":1},\"approval\":{\"asked\":1,\"allow\":false}}\n",
            ),
            // An id never asked is sent as it was.
            (
                &[PROMPT, STEP1, r#">{"command":"approval","id":"zz","allow":true}"#],
                "{\"after\":{\"step\":1,\"turn\":1},\"send\":{\"command\":\"approval\",\"id\":\"zz\",\"allow\":true}}\n",
            ),
            // A compaction's start marks no point; its end does.
            (
                &[
                    r#">{"command":"compact"}"#,
                    r#"<{"event":"compaction_started","from_sequence":1,"to_sequence":2}"#,
                    JOBS,
                    r#"<{"event":"compaction_finished","from_sequence":1,"to_sequence":2,"summary":"s"}"#,
                    r#">{"command":"job_stop","request_id":"p","generation":"g","job_id":"j"}"#,
                ],
                "{\"send\":{\"command\":\"jobs_snapshot\",\"request_id\":\"j\"}}\n{\"after\":{\"ended\":1},\"send\":{\"command\":\"job_stop\",\"request_id\":\"p\",\"generation\":\"g\",\"job_id\":\"j\"}}\n",
            ),
            // A steer's reply inside the turn is the point after it.
            (
                &[
                    PROMPT,
                    STEP1,
                    r#">{"command":"steer","content":"x"}"#,
                    r#"<{"event":"agent_step","step":2}"#,
                    r#"<{"event":"steer_applied","kind":"prompt","content":"x"}"#,
                    DELTA,
                    r#">{"command":"cancel"}"#,
                ],
                "{\"after\":{\"step\":1,\"turn\":1},\"send\":{\"command\":\"steer\",\"content\":\"x\"}}\n{\"after\":{\"answered\":2},\"send\":{\"command\":\"cancel\"}}\n",
            ),
            // A step after a reply is the later point.
            (
                &[
                    PROMPT,
                    STEP1,
                    JOBS,
                    SNAPSHOT,
                    r#"<{"event":"agent_step","step":2}"#,
                    r#">{"command":"cancel"}"#,
                ],
                "{\"after\":{\"step\":1,\"turn\":1},\"send\":{\"command\":\"jobs_snapshot\",\"request_id\":\"j\"}}\n{\"after\":{\"step\":2,\"turn\":1},\"send\":{\"command\":\"cancel\"}}\n",
            ),
            // Only deltas since the line before: the turn's last step.
            (
                &[PROMPT, STEP1, DELTA, JOBS, DELTA, r#">{"command":"cancel"}"#],
                "{\"after\":{\"step\":1,\"turn\":1},\"send\":{\"command\":\"jobs_snapshot\",\"request_id\":\"j\"}}\n{\"after\":{\"step\":1,\"turn\":1},\"send\":{\"command\":\"cancel\"}}\n",
            ),
            // Events that answer nothing mark no point.
            (
                &[
                    r#"<{"event":"session_started","session":"s","session_root":"r","workspace_root":null}"#,
                    PROMPT,
                ],
                "{\"send\":{\"command\":\"prompt\",\"content\":\"hi\"}}\n",
            ),
        ];
        for (lines, want) in table {
            let session = read(lines).session().to_jsonl();
            // The first line is the recording's first command, sent at once.
            let rest: String = if lines[0].starts_with('>') && lines.len() > 1 {
                session.split_inclusive('\n').skip(1).collect()
            } else {
                session
            };
            assert_eq!(rest, *want, "{lines:?}");
        }
    }

    /// A refused line, a blank one, and lines after one that stopped the
    /// engine's reading keep their kind.
    #[test]
    fn kinds_of_lines_the_engine_does_not_use() {
        let blank_goal = r#">{"command":"goal","action":"set","text":" "}"#;
        let t = read(&[r#">{"command":"nope"}"#, blank_goal, ">", ">{x", PROMPT]);
        let kinds: Vec<&str> = t.commands.iter().map(|c| c.kind).collect();
        assert_eq!(kinds, ["refused", "refused", "blank", "refused", "unread"]);
        assert_eq!((t.commands(), t.events()), (5, 0));
    }

    /// Two conversations compared: (recording, new run, how, the diff).
    #[test]
    fn comparisons() {
        let other_jobs = r#"<{"event":"jobs_snapshot","request_id":"k","jobs":[]}"#;
        let failed = r#"<{"event":"turn_failed","error":"boom"}"#;
        let table: &[(&[&str], &[&str], Compare, &str)] = &[
            // A reply that crossed the turn otherwise, and other text: the same.
            (
                &[PROMPT, JOBS, STEP1, DELTA, SNAPSHOT, DONE],
                &[PROMPT, JOBS, SNAPSHOT, STEP1, DELTA, DELTA, r#"<{"event":"agent_finished","answer":"y"}"#],
                Compare::new(),
                "",
            ),
            // Byte for byte, the answer's text shows.
            (
                &[PROMPT, STEP1, DONE],
                &[PROMPT, STEP1, r#"<{"event":"agent_finished","answer":"y"}"#],
                Compare::new().exact(true),
                "command 1 (prompt), its turn: - {\"event\":\"agent_finished\",\"answer\":\"x\"}  + {\"event\":\"agent_finished\",\"answer\":\"y\"}\n",
            ),
            // A turn that ended otherwise; its deltas compared by kind only.
            (
                &[PROMPT, STEP1, DELTA, DONE],
                &[PROMPT, STEP1, failed],
                Compare::new(),
                "command 1 (prompt), its turn:\n  - agent_finished\n  - assistant_delta… (streamed)\n  + turn_failed\n",
            ),
            // Left out: the same.
            (
                &[PROMPT, STEP1, r#"<{"event":"usage","usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2,"prompt_cache_hit_tokens":0,"prompt_cache_miss_tokens":1}}"#, DONE],
                &[PROMPT, STEP1, DONE],
                Compare::new().ignore("usage"),
                "",
            ),
            // A reply that answers nothing, and a request left owed.
            (
                &[JOBS, SNAPSHOT],
                &[JOBS, other_jobs],
                Compare::new(),
                "command 1 (jobs_snapshot): - jobs_snapshot request_id \"j\"\noutside any command: + jobs_snapshot request_id \"k\" (fits no rule)\nat the end: - owed nothing  + owed replies to command 1\n",
            ),
            // An undecodable line naming an event, and a line that is none.
            (
                &[JOBS, SNAPSHOT, "<hello"],
                &[JOBS, r#"<{"event":"jobs_snapshot","request_id":"j"}"#],
                Compare::new(),
                "command 1 (jobs_snapshot): - jobs_snapshot request_id \"j\"  + jobs_snapshot (undecodable)\noutside any command: - not an event\n",
            ),
            // A command line sent as another kind.
            (
                &[JOBS],
                &[PROMPT],
                Compare::new(),
                "command 1 (jobs_snapshot): - sent: jobs_snapshot  + sent: prompt\nat the end: - owed replies to command 1  + owed the queued work of command 1\n",
            ),
        ];
        for (a, b, how, want) in table {
            let comparison = read(a).compare(&read(b), how);
            assert_eq!(comparison.to_string(), *want, "{a:?} vs {b:?}");
            assert_eq!(comparison.is_same(), want.is_empty());
        }
    }

    /// What fits no rule is kept, by the event's number, with why.
    #[test]
    fn violations_are_kept_with_their_numbers() {
        let t = read(&[JOBS, SNAPSHOT, DONE]);
        assert_eq!(
            t.violations(),
            [(
                2,
                "agent_finished with no turn running (no prompt was sent)".to_owned()
            )]
        );
    }

    /// What a normalised comparison keeps of each event, after its kind:
    /// what a controller acts on, never model text or the engine's ids.
    #[test]
    fn the_detail_each_event_keeps() {
        let table: &[(&str, &str)] = &[
            (
                r#"{"event":"command_error","error":"unknown command: x"}"#,
                r#" "unknown command: x""#,
            ),
            (
                r#"{"event":"jobs_snapshot","request_id":"j","jobs":[]}"#,
                r#" request_id "j""#,
            ),
            (
                r#"{"event":"job_stop_result","request_id":"s","generation":"g1","job_id":"job-1","outcome":"not_found"}"#,
                r#" request_id "s" outcome not_found"#,
            ),
            (
                r#"{"event":"prediction_result","source_sequence":1,"outcome":{"kind":"skipped"}}"#,
                r#" source_sequence 1 outcome skipped"#,
            ),
            (
                r#"{"event":"prediction_result","source_sequence":1,"outcome":{"kind":"completed","text":"hi","input_tokens":1,"output_tokens":1}}"#,
                r#" source_sequence 1 outcome completed"#,
            ),
            (
                r#"{"event":"prediction_result","source_sequence":1,"outcome":{"kind":"cancelled"}}"#,
                r#" source_sequence 1 outcome cancelled"#,
            ),
            (
                r#"{"event":"prediction_result","source_sequence":1,"outcome":{"kind":"failed","message":"m"}}"#,
                r#" source_sequence 1 outcome failed"#,
            ),
            (
                r#"{"event":"steer_applied","kind":"command","content":"x","submission_id":"s1"}"#,
                r#" kind command submission_id "s1""#,
            ),
            (
                r#"{"event":"steer_applied","kind":"prompt","content":"x"}"#,
                " kind prompt",
            ),
            (
                r#"{"event":"steer_dropped","content":"x","submission_id":"s2"}"#,
                r#" submission_id "s2""#,
            ),
            (r#"{"event":"steer_dropped","content":"x"}"#, ""),
            (
                r#"{"event":"approval_requested","id":"a","tool_name":"shell","detail":"d","body":null}"#,
                r#" tool "shell""#,
            ),
            (
                r#"{"event":"approval_resolved","id":"a","outcome":"denied"}"#,
                " outcome denied",
            ),
            (r#"{"event":"goal_updated","goal":"ship"}"#, " set"),
            (r#"{"event":"goal_updated","goal":null}"#, " cleared"),
            (
                r#"{"event":"job_changed","kind":"failed","job":{"schema_version":1,"cleanup_error":null,"generation":"g-20260701","id":"job-3","revision":2,"command":"cargo test --workspace","description":"run the test suite","cwd":"/home/dev/project","state":{"kind":"running"},"started_at_ms":1751328000000,"backgrounded_at_ms":1751328001500,"finished_at_ms":null,"last_output_at_ms":1751328004200,"output_file":"job-3.log","output_persistent":true,"output_bytes":4096,"output_chars":4000,"output_truncated":false,"invalid_utf8":false,"output_error":null,"persistence_error":null}}"#,
                " failed",
            ),
            (
                r#"{"event":"tool_result","tool_call_id":"c","tool_name":"shell","is_error":true,"content":"x","brief":null}"#,
                r#" tool "shell" error"#,
            ),
            (
                r#"{"event":"tool_result","tool_call_id":"c","tool_name":"read","is_error":false,"content":"x","brief":null}"#,
                r#" tool "read""#,
            ),
            (r#"{"event":"agent_finished","answer":"x"}"#, ""),
        ];
        for (line, want) in table {
            let event = crate::v2::Event::from_slice(line.as_bytes())
                .unwrap_or_else(|e| panic!("{line}: {e}"));
            assert_eq!(super::detail(&event), *want, "{line}");
        }
    }
}
