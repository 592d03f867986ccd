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
use crossing::{beaten, crossings, index, streamed, Point, Sent, Timeline, LANDS};
use std::collections::HashMap;
use std::fmt::{self, Write as _};
use std::io::BufRead;
use std::time::Duration;

mod crossing;

/// How long a line anchored on a `prediction_result` waits for it after
/// its turn's end (as a session's `{"predicted":N}`).
const PREDICTED_WITHIN: Duration = Duration::from_secs(2);
/// Events that came this soon after a command line was sent may have been
/// written before the engine read it: the two crossed on the pipes.
const WINDOW: Duration = Duration::from_millis(100);

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
    /// Both directions' lines with their times, as crossings are judged.
    wire: Timeline,
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
    /// Its place among the engine's lines, from 0.
    index: usize,
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
        // Per turn: its events that are not deltas so far, whether a delta
        // came after the last of them, whether it ended.
        let mut turns: HashMap<u64, (u64, bool, bool)> = HashMap::new();
        let mut asked: Vec<String> = Vec::new();
        let mut stopped = false;
        while let Some(record) = log.read_record()? {
            let at = record.t_us;
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
                transcript.wire.sent.push(Sent {
                    kind,
                    at,
                    before: transcript.wire.points.len(),
                });
                transcript.commands.push(Held {
                    line,
                    kind,
                    after: anchor.take().unwrap_or(After::Now),
                    approves,
                    answers: Vec::new(),
                    turn: Vec::new(),
                });
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
            let end = matches!(
                name,
                "agent_finished"
                    | "turn_failed"
                    | "agent_aborted"
                    | "compaction_finished"
                    | "compaction_failed"
            );
            let prediction = name == "prediction_result";
            let work = attribution.turn.or_else(|| {
                attribution
                    .answers
                    .filter(|_| name.starts_with("compaction_"))
            });
            match (attribution.turn, attribution.answers) {
                (Some(t), _) => {
                    let (events, delta, ended) = turns.entry(t).or_default();
                    if end {
                        *ended = true;
                        anchor = Some(After::Ended(t));
                    } else if prediction {
                        // The engine's own, after the turn: a line sent
                        // after it waits for it.
                        anchor = Some(After::Predicted {
                            turn: t,
                            within: PREDICTED_WITHIN,
                        });
                    } else if !*ended {
                        // Deltas are model text: never counted, only
                        // whether a run of them had begun (mid-stream).
                        if matches!(name, "assistant_delta" | "reasoning_delta") {
                            *delta = true;
                        } else {
                            (*events, *delta) = (*events + 1, false);
                        }
                        anchor = Some(if name == "approval_requested" {
                            After::Asked(asked.len() as u64)
                        } else {
                            After::Seen {
                                turn: t,
                                events: *events,
                                delta: *delta,
                            }
                        });
                    }
                }
                (None, Some(c)) => match name {
                    "compaction_finished" | "compaction_failed" => anchor = Some(After::Ended(c)),
                    "compaction_started" => {}
                    // A reply comes at once, at any pace: a point of the
                    // turn that ran meanwhile holds the line better.
                    _ if matches!(anchor, Some(After::Seen { .. } | After::Asked(_))) => {}
                    _ => anchor = Some(After::Answered(c)),
                },
                (None, None) => {}
            }
            transcript.wire.points.push(Point {
                at,
                answers: attribution.answers,
                work,
                end,
                prediction,
                cancelled: matches!(
                    decoded,
                    Some(Event::ApprovalResolved {
                        outcome: crate::v2::ApprovalOutcome::Cancelled,
                        ..
                    })
                ),
            });
            let seen = Seen {
                index: transcript.wire.points.len() - 1,
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
    /// the point of the conversation where the recording sent it, never on
    /// a count of deltas or a number of milliseconds: a line sent while a
    /// turn ran, once the turn wrote as many events that are not deltas as
    /// it had then, and a delta more when its text had begun to stream
    /// since ([`After::Seen`]); after the k-th question asked, that
    /// question; after a turn's end, that end (after its
    /// `prediction_result` when it came first, waiting up to 2 s); after a
    /// reply or a compaction's end, with no event of a turn since the line
    /// before, that. An `approval` answers the question asked in the same
    /// place, by the id the new run's engine gives it.
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
    ///
    /// A difference that is only a crossing on the pipes, in either run,
    /// is set apart ([`Comparison::crossed`]), not counted: a line sent
    /// while a turn ran, when the turn's events that came after it, before
    /// anything answered it or a later line, came in one burst within the
    /// window ([`Compare::window`]; and within the window of the line, once
    /// the turn had begun), at a pace at which that could be (the turn's
    /// events before it no further apart than two windows), so
    /// that the engine may have written them before it read the line (a
    /// `cancel` that could not land because the turn was over, a steer or
    /// goal that came after a step boundary it was meant for). Then the
    /// turn is compared up to that line only, and the line's answers (and
    /// those of the lines sent during that turn) are not compared. And a
    /// `prediction_result` one run has and the other lacks, where the run
    /// that lacks it sent its next line (or closed its input) no later
    /// after the turn's end than the other's prediction came, plus the
    /// window: the line cancelled it.
    #[must_use]
    pub fn compare(&self, other: &Transcript, how: &Compare) -> Comparison {
        let mut comparison = Comparison::default();
        let window = u64::try_from(how.window.as_micros()).unwrap_or(u64::MAX);
        let count = self.commands.len().max(other.commands.len());
        let crossings = crossings(&self.wire, &other.wire, count as u64, window);
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
                comparison.push(
                    Difference::of(place(Part::Sent), sent(ours), sent(theirs)),
                    None,
                );
                continue;
            }
            let answers = |h: Option<&Held>| how.view(h.map_or(&[][..], |h| &h.answers));
            if let Some(d) =
                Difference::between(place(Part::Answers), answers(ours), answers(theirs))
            {
                // Its own crossing, its compaction's, or one of the turn
                // it was sent in.
                let lands = LANDS.contains(&kind);
                let why = crossings
                    .iter()
                    .find(|x| (x.line == n && lands) || (x.turn == n && kind == "compact"))
                    .or_else(|| {
                        crossings.iter().find(|x| {
                            lands && (self.wire.during(x.turn, n) || other.wire.during(x.turn, n))
                        })
                    })
                    .map(|x| x.why(&self.wire, &other.wire));
                comparison.push(d, why);
            }
            let turn = |h: Option<&Held>| how.view(turn_of(h));
            if let Some(d) = Difference::between(place(Part::Turn), turn(ours), turn(theirs)) {
                // Only a prediction differs, and the other line beat it; or
                // only the text, streamed after a line landed.
                let less = |kinds: &[&str]| {
                    let how = kinds.iter().fold(how.clone(), |how, k| how.ignore(*k));
                    how.view(turn_of(ours)) == how.view(turn_of(theirs))
                };
                let beaten = less(&["prediction_result"])
                    .then(|| beaten(&self.wire, &other.wire, n, window));
                let streamed = less(&["assistant_delta", "reasoning_delta"]).then(|| {
                    streamed(&self.wire, &other.wire, n, [&deltas(ours), &deltas(theirs)])
                });
                let why = beaten.flatten().or(streamed.flatten()).or_else(|| {
                    // The first line that crossed it, or an earlier
                    // turn it was queued behind: compared up to there.
                    let first = crossings
                        .iter()
                        .filter(|x| x.turn == n || (x.over && x.turn < n && n < x.line))
                        .min_by_key(|x| x.line)?;
                    let upto = |t: &Transcript, h: Option<&Held>| {
                        let before = t.wire.before(first.line);
                        let seen: Vec<Seen> = h?
                            .turn
                            .iter()
                            .filter(|s| s.index < before)
                            .cloned()
                            .collect();
                        Some(how.view(&seen))
                    };
                    (upto(self, ours) == upto(other, theirs))
                        .then(|| first.why(&self.wire, &other.wire))
                });
                comparison.push(d, why);
            }
        }
        comparison.push_all(Difference::between(
            Place::Outside,
            how.view(&self.outside),
            how.view(&other.outside),
        ));
        comparison.push_all(Difference::between(
            Place::Owed,
            vec![owed_words(&self.owed)],
            vec![owed_words(&other.owed)],
        ));
        comparison
    }
}

/// The events of a command line's turn.
fn turn_of(held: Option<&Held>) -> &[Seen] {
    held.map_or(&[][..], |h| &h.turn)
}

/// The deltas of a command line's turn, each by its index and kind.
fn deltas(held: Option<&Held>) -> Vec<(usize, &str)> {
    let delta = |s: &&Seen| s.kind.as_str().ends_with("_delta");
    let turn = turn_of(held).iter().filter(delta);
    turn.map(|s| (s.index, s.kind.as_str())).collect()
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
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Compare {
    exact: bool,
    ignore: Vec<String>,
    window: Duration,
}

impl Default for Compare {
    fn default() -> Compare {
        Compare {
            exact: false,
            ignore: Vec::new(),
            window: WINDOW,
        }
    }
}

impl Compare {
    /// Normalised, nothing left out, a 100 ms window for crossings.
    #[must_use]
    pub fn new() -> Compare {
        Compare::default()
    }

    /// How soon after a line the events that may have been written before
    /// the engine read it come (100 ms unless set): a difference they make
    /// is a crossing on the pipes, set apart, not counted
    /// ([`Transcript::compare`] says when). Zero sets none apart.
    #[must_use]
    pub fn window(mut self, window: Duration) -> Compare {
        self.window = window;
        self
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
    crossed: Vec<Difference>,
}

impl Comparison {
    /// Counts `difference`, or sets it apart as a crossing, `why`.
    fn push(&mut self, mut difference: Difference, why: Option<String>) {
        match why {
            Some(why) => {
                difference.crossed = Some(why);
                self.crossed.push(difference);
            }
            None => self.differences.push(difference),
        }
    }

    fn push_all(&mut self, difference: Option<Difference>) {
        self.differences.extend(difference);
    }

    /// The differences that are only a crossing on the pipes (each with
    /// why, [`Difference::crossed`]): not counted, not compared, but shown
    /// (`serve-command replay` prints each as a note, `crossed: not
    /// compared`).
    #[must_use]
    pub fn crossed(&self) -> &[Difference] {
        &self.crossed
    }

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
    /// For a difference set apart ([`Comparison::crossed`]): which line
    /// crossed what on the pipes, in which run.
    pub crossed: Option<String>,
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
            crossed: None,
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
        if let Some(why) = &self.crossed {
            // One line, as a note.
            if !self.recorded.is_empty() {
                write!(f, " - {}", self.recorded.join(", "))?;
            }
            if !self.replayed.is_empty() {
                let sep = if self.recorded.is_empty() { " " } else { "  " };
                write!(f, "{sep}+ {}", self.replayed.join(", "))?;
            }
            return write!(f, " ({why})");
        }
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
    use super::Transcript;

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
