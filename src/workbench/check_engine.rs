//! The engine check: `serve-command check-engine` in process.
//!
//! Nothing owed is written here: the lines sent come from the crate's
//! vectors (built in) and what each is owed comes from the crate's own
//! reader (`v2::CommandReader`: a refused line's `event_line()`, a
//! declined command's `serve_refusal_event_line()`, where reading stops),
//! exactly as the tap's [`Monitor`](super::Monitor) judges a live session.
//! What the engine wrote is read as a controller reads it
//! (`v2::EventReader`, `command_error_cause`).

use super::conversation_checks::{self, session_check};
use super::run::{ended, lines, run_program, visible, Feed, Ran, MAX_OUTPUT};
use super::runner::Runner;
use super::session::Session;
use super::verdict::SessionVerdict;
use crate::v2::{
    self, Command, CommandReader, Content, ContentPart, Event, EventReader, Image,
    DEFAULT_MAX_LINE_LEN,
};
use serde_json::Value;
use std::fmt;
use std::io;
use std::process::Stdio;
use std::time::Duration;

/// The crate's vectors, whose lines the checks send; `tests/` ships in the
/// package.
const VECTORS_V2: &str = include_str!("../../tests/vectors/commands-v2.jsonl");
const SERVE_V2: &str = include_str!("../../tests/vectors/serve-v2.jsonl");

/// The line checks, in the order the report lists them.
const LINE_CHECKS: [&str; 14] = [
    "stdout-events",
    "no-stderr-answers",
    "protocol-errors",
    "serve-refusals",
    "not-json",
    "not-json-detail",
    "blank-lines",
    "crlf",
    "split-writes",
    "no-final-lf",
    "long-prompt",
    "line-at-limit",
    "line-over-limit",
    "jobs-snapshot",
];

/// Lines of each list the human summary shows (the report has them all).
const SHOWN_LINES: usize = 20;
/// Characters of one line the summary and the report show.
const SHOWN_CHARS: usize = 300;
/// The last lines of the engine's stderr a failure shows.
const STDERR_TAIL: usize = 20;
/// The engine's stdout lines a failure keeps, the first of them: an engine
/// that floods its stdout with short lines is reported in kilobytes, not in
/// gigabytes.
const RECEIVED_KEPT: usize = 1000;
/// How every error that ends an engine's reading begins; what follows is
/// the engine's own JSON parser's account, which no engine in another
/// language can word as the reference does.
const STREAM: &str = "command stream: ";
/// The length of `long-prompt`'s line, LF excluded: 4 MiB, a prompt with
/// an image as a controller sends one, well within any engine's limit.
const LONG_PROMPT_LEN: usize = 4 << 20;
/// `long-prompt`'s image: a real 1 × 1 PNG, 67 bytes (the text fills the
/// line; an engine passes an image on without decoding its pixels).
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\0\0\0\0\x3a\x7e\x9b\x55\
    \0\0\0\nIDAT\x78\xda\x63\xf8\x0f\0\x01\x01\x01\0\x1c\xb0\x8c\x99\0\0\0\0IEND\xae\x42\x60\x82";

/// Checks an engine binary over its real stdio: what any engine must do
/// whatever its model does, for an engine in any language.
///
/// [`CheckEngine::run`] starts the engine afresh for each scenario, writes
/// the scenario's lines to its stdin, closes it, and reads its stdout and
/// stderr until it exits (or the timeout: then it is killed and judged by
/// what it wrote). Each [`Check`] has a [`Level`]:
///
/// | level | check | what it holds the engine to |
/// | --- | --- | --- |
/// | must | `stdout-events` | every stdout line, in every scenario, an event (no banner, no log line) |
/// | must | `no-stderr-answers` | no answer owed (a `command_error`, a `jobs_snapshot`) missing from stdout and written on stderr instead (the first such stderr line quoted); each scenario check whose only fault is those answers is then not judged, and says so |
/// | must | `protocol-errors` | every line of the crate's vectors that is JSON but not a command: one `command_error` each, with the exact message, in order, and the engine still reading (a `jobs_snapshot` sent after them is answered after their errors) |
/// | must | `serve-refusals` | the same for the commands the serve policy declines (a blank goal, ...) |
/// | must | `not-json` | a line that is not JSON: exactly one `command_error` whose message begins `command stream: `, and no later line answered (reading on is named, with the line that should have stopped it) |
/// | should | `not-json-detail` | that `command_error` is the reference's, word for word (`command stream: expected a string key at byte 1`); not judged when there is none |
/// | must | `blank-lines` | blank lines (spaces, tabs, CRs) skipped, unanswered |
/// | must | `crlf` | lines ending in CRLF read as lines |
/// | must | `split-writes` | lines arriving in many small writes |
/// | must | `no-final-lf` | a last line without LF still read |
/// | must | `long-prompt` | a 4 MiB prompt (a text part and a real PNG image, a line any controller may send) read, and the engine reading on: a `jobs_snapshot` after it answered; an engine that dies, hangs or answers nothing fails, on the line named |
/// | should | `line-at-limit` | a line as long as the engine's limit ([`CheckEngine::max_line_len`], by default 64 MiB, the crate's) read |
/// | must | `line-over-limit` | only with a declared limit: a line one byte over it answered by one `command_error` beginning `command stream: `, and no later line answered |
/// | must | `jobs-snapshot` | `jobs_snapshot` answered by a `jobs_snapshot` event with the same `request_id` |
///
/// `jobs_snapshot` is the probe: every engine answers it at once, with the
/// `request_id` sent. Each scenario's answers are the `command_error`
/// events (compared in order with those owed) and the `jobs_snapshot`
/// events (each owed once, after the errors of the lines before it); other
/// events are the engine's business. An error that ends reading is owed
/// as any message beginning `command stream: `: the rest is the engine's
/// JSON parser's, and only `not-json-detail` asks for the reference's.
///
/// In an engine's own tests (`CARGO_BIN_EXE_<name>` is the engine binary
/// cargo built for them):
///
/// ```no_run
/// use serve_command::workbench::CheckEngine;
/// use std::process::Command;
///
/// # fn main() -> std::io::Result<()> {
/// let report = CheckEngine::new().run(&mut Command::new("./target/debug/my-engine"))?;
/// assert!(report.conforms(), "{report}");
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct CheckEngine {
    timeout: Duration,
    turn_timeout: Duration,
    /// The checks to run, when not all.
    only: Option<Vec<String>>,
    /// The engine's limit on a line's length, when it declared one.
    max_line_len: Option<usize>,
}

impl Default for CheckEngine {
    fn default() -> Self {
        CheckEngine::new()
    }
}

impl CheckEngine {
    /// Every check, 10 seconds per scenario, no line limit declared.
    #[must_use]
    pub fn new() -> CheckEngine {
        CheckEngine {
            timeout: Duration::from_secs(10),
            turn_timeout: Duration::from_secs(10),
            only: None,
            max_line_len: None,
        }
    }

    /// Declares the engine's own limit on a line's length, in bytes
    /// without the LF: `line-at-limit` sends a line of exactly that many,
    /// and `line-over-limit` (run only when a limit is declared: the
    /// reference has none) one byte more, which the engine must answer
    /// with a `command stream: ` error. Undeclared, `line-at-limit` sends
    /// the crate's [`DEFAULT_MAX_LINE_LEN`]. A limit shorter than the probe
    /// line itself is taken as the probe's length; one shorter than
    /// `long-prompt`'s 4 MiB line fails that check, as every engine must
    /// read such a prompt.
    #[must_use]
    pub fn max_line_len(mut self, max: usize) -> CheckEngine {
        self.max_line_len = Some(max);
        self
    }

    /// How long the engine may take for one scenario before it is killed
    /// and judged by what it wrote until then.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> CheckEngine {
        self.timeout = timeout;
        self
    }

    /// How long the engine may stay silent in a conversation check while
    /// it owes an answer and asks nothing (a turn's silence while a tool
    /// runs): then it is killed and judged by what it wrote. 10 seconds
    /// unless set.
    #[must_use]
    pub fn turn_timeout(mut self, timeout: Duration) -> CheckEngine {
        self.turn_timeout = timeout;
        self
    }

    /// Runs only the checks named (as [`CheckEngine::names`] lists them);
    /// the line checks' scenarios run only when one of them is named.
    #[must_use]
    pub fn only<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> CheckEngine {
        self.only = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Every check's name, in the order the report lists them: the line
    /// checks, then the conversation checks (`line-over-limit` only with a
    /// declared limit).
    #[must_use]
    pub fn names(&self) -> Vec<&'static str> {
        LINE_CHECKS
            .iter()
            .copied()
            .filter(|&n| n != "line-over-limit" || self.max_line_len.is_some())
            .chain(conversation_checks::checks().iter().map(|c| c.name))
            .collect()
    }

    fn wanted(&self, name: &str) -> bool {
        self.only
            .as_ref()
            .is_none_or(|only| only.iter().any(|n| n == name))
    }

    /// The runner the conversation checks and session files run on.
    fn runner(&self) -> Runner {
        Runner::new()
            .timeout(self.timeout)
            .turn_timeout(self.turn_timeout)
    }

    /// Runs session files (reproducers, hand-written scenarios) on
    /// `engine`, each a `must` check named by its name: every event
    /// attributed by the conversation, nothing owed at the end.
    ///
    /// # Errors
    ///
    /// The engine cannot be started.
    pub fn run_sessions(
        &self,
        sessions: &[(String, Session)],
        engine: &mut std::process::Command,
    ) -> io::Result<Report> {
        let runner = self.runner();
        let mut checks = Vec::with_capacity(sessions.len());
        for (name, session) in sessions {
            let verdict = runner.run(session, engine)?;
            checks.push(session_check(name, &verdict));
        }
        Ok(Report { checks })
    }

    /// Runs every check on `engine` (its program, arguments, environment
    /// and directory; its stdio is replaced by pipes), once per scenario.
    ///
    /// # Errors
    ///
    /// The engine cannot be started, or its output cannot be read.
    pub fn run(&self, engine: &mut std::process::Command) -> io::Result<Report> {
        let limit = self.max_line_len.unwrap_or(DEFAULT_MAX_LINE_LEN);
        let mut runs = Vec::new();
        let lines_wanted = LINE_CHECKS.iter().any(|n| self.wanted(n));
        let scenarios = if lines_wanted {
            scenarios(self.max_line_len)
        } else {
            Vec::new()
        };
        for scenario in scenarios {
            let feed = Feed {
                pieces: scenario.feed.pieces.clone(),
                pause: scenario.feed.pause,
            };
            let ran = run_program(engine, feed, Stdio::piped(), self.timeout)?;
            // Judged at once, so that only what the report shows is kept
            // of each run's output.
            runs.push(Run::judged(scenario, &ran, limit));
        }
        let mut checks = judge(&runs);
        checks.retain(|c| self.wanted(&c.name));
        let runner = self.runner();
        for check in conversation_checks::checks() {
            if self.wanted(check.name) {
                checks.push(check.run(&runner, engine)?);
            }
        }
        Ok(Report { checks })
    }
}

/// What [`CheckEngine::run`] found: every check, passed, failed or not
/// judged. `Display` is `check-engine`'s summary: one line per check,
/// `PASS`, `FAIL` or `SKIP` (not judged), its level and name; after each
/// failure why, the lines sent, the lines received and the tail of the
/// engine's stderr (at most 20 lines each); after a check not judged,
/// why; then a count.
#[derive(Clone, Debug)]
pub struct Report {
    checks: Vec<Check>,
}

impl Report {
    /// Every check, in the order of the table on [`CheckEngine`].
    #[must_use]
    pub fn checks(&self) -> &[Check] {
        &self.checks
    }

    /// Whether every `must` check passed or was not judged (a `should`
    /// may fail). A check goes unjudged only because of a `must` that
    /// failed, so an engine with one does not conform.
    #[must_use]
    pub fn conforms(&self) -> bool {
        self.must_failed() == 0
    }

    /// How many checks failed.
    #[must_use]
    pub fn failed(&self) -> usize {
        self.checks.iter().filter(|c| c.failure.is_some()).count()
    }

    /// How many `must` checks failed.
    #[must_use]
    pub fn must_failed(&self) -> usize {
        self.checks
            .iter()
            .filter(|c| c.failure.is_some() && c.level == Level::Must)
            .count()
    }

    /// How many checks were not judged ([`Check::not_judged`]).
    #[must_use]
    pub fn not_judged(&self) -> usize {
        self.checks
            .iter()
            .filter(|c| c.not_judged.is_some())
            .count()
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for check in &self.checks {
            let verdict = match (&check.failure, &check.not_judged) {
                (Some(_), _) => "FAIL",
                (None, Some(_)) => "SKIP",
                (None, None) => "PASS",
            };
            writeln!(f, "{verdict} {:<6} {}", check.level.as_str(), check.name)?;
            if let Some(failure) = &check.failure {
                f.write_str(&details(failure))?;
            }
            if let Some(why) = &check.not_judged {
                writeln!(f, "  why: not judged: {why}")?;
            }
        }
        let (failed, must_failed, not_judged) =
            (self.failed(), self.must_failed(), self.not_judged());
        write!(
            f,
            "{}/{} checks pass; {}",
            self.checks.len() - failed - not_judged,
            self.checks.len(),
            if must_failed == 0 {
                "every must holds".to_owned()
            } else {
                format!(
                    "{must_failed} must check{} fail{}",
                    if must_failed == 1 { "" } else { "s" },
                    if must_failed == 1 { "s" } else { "" }
                )
            }
        )?;
        if not_judged > 0 {
            write!(f, "; {not_judged} not judged")?;
        }
        writeln!(f)
    }
}

/// One check's outcome: passed, failed ([`Check::failure`]) or not judged
/// ([`Check::not_judged`]).
#[derive(Clone, Debug)]
pub struct Check {
    name: String,
    level: Level,
    rule: String,
    failure: Option<Failure>,
    not_judged: Option<String>,
}

impl Check {
    fn new(
        name: &'static str,
        level: Level,
        rule: String,
        outcome: Outcome,
        run: Option<&Run>,
    ) -> Check {
        let (mut failure, mut not_judged) = (None, None);
        match (outcome, run) {
            (Outcome::Pass, _) => {}
            (Outcome::NotJudged(why), _) => not_judged = Some(why),
            (Outcome::Fail(why), Some(run)) => {
                failure = Some(Failure {
                    why,
                    scenario: run.scenario.name.to_owned(),
                    sent: run.sent.clone(),
                    received: run.received.clone(),
                    received_lines: run.received_lines,
                    stderr_tail: run.stderr_tail.clone(),
                    ended: run.ended.clone(),
                });
            }
            (Outcome::Fail(_), None) => unreachable!("a failure is shown by a run"),
        }
        Check {
            name: name.to_owned(),
            level,
            rule,
            failure,
            not_judged,
        }
    }

    /// A check judged elsewhere (a session's), with its failure shown.
    pub(super) fn judged(
        name: &str,
        level: Level,
        rule: String,
        outcome: Outcome,
        failure: Option<Failure>,
    ) -> Check {
        let not_judged = match outcome {
            Outcome::NotJudged(why) => Some(why),
            _ => None,
        };
        Check {
            name: name.to_owned(),
            level,
            rule,
            failure,
            not_judged,
        }
    }

    /// Its name: `protocol-errors`, `not-json`, ... (the table on
    /// [`CheckEngine`]).
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether an engine must pass it, or should.
    #[must_use]
    pub fn level(&self) -> Level {
        self.level
    }

    /// What it holds the engine to, in a sentence.
    #[must_use]
    pub fn rule(&self) -> &str {
        &self.rule
    }

    /// Whether the engine passed it (false when it was not judged).
    #[must_use]
    pub fn passed(&self) -> bool {
        self.failure.is_none() && self.not_judged.is_none()
    }

    /// How the engine failed it, if it did.
    #[must_use]
    pub fn failure(&self) -> Option<&Failure> {
        self.failure.as_ref()
    }

    /// Why it was not judged, if it was not: what it would look at is not
    /// where a controller reads it, which another check fails (`its 382
    /// answers owed are on stderr, not stdout (no-stderr-answers)`).
    #[must_use]
    pub fn not_judged(&self) -> Option<&str> {
        self.not_judged.as_deref()
    }
}

/// How an engine failed a [`Check`], in the scenario that showed it. Lines
/// are shown as a person reads them: without their LF, control characters
/// made visible, at most 300 characters of each.
#[derive(Clone, Debug)]
pub struct Failure {
    why: String,
    scenario: String,
    sent: Vec<String>,
    received: Vec<String>,
    received_lines: usize,
    stderr_tail: Vec<String>,
    ended: String,
}

impl Failure {
    /// A session's failure: the lines sent, and those received with what
    /// each answers and its turn.
    pub(super) fn of_session(why: String, scenario: &str, verdict: &SessionVerdict) -> Failure {
        Failure {
            why,
            scenario: scenario.to_owned(),
            sent: verdict
                .sent
                .iter()
                .map(|s| format!("{:>3}  {}", s.n, s.line))
                .collect(),
            received: verdict
                .received
                .iter()
                .map(|r| format!("{:>3}  {}{}", r.attribution.n, r.line, r.note()))
                .collect(),
            received_lines: usize::try_from(verdict.received_lines).unwrap_or(usize::MAX),
            stderr_tail: verdict.stderr_tail.clone(),
            ended: verdict.end.to_string(),
        }
    }

    /// Why it failed: `command_error 2 says "..."; owed "..."`.
    #[must_use]
    pub fn why(&self) -> &str {
        &self.why
    }

    /// The scenario (a check's name) whose run showed it.
    #[must_use]
    pub fn scenario(&self) -> &str {
        &self.scenario
    }

    /// Every line the scenario sent.
    #[must_use]
    pub fn sent(&self) -> &[String] {
        &self.sent
    }

    /// The lines the engine wrote on stdout: all of them, or the first
    /// 1,000 of an engine that wrote more ([`Failure::received_lines`]).
    #[must_use]
    pub fn received(&self) -> &[String] {
        &self.received
    }

    /// How many lines the engine wrote on stdout, those
    /// [`Failure::received`] leaves out included.
    #[must_use]
    pub fn received_lines(&self) -> usize {
        self.received_lines
    }

    /// The last 20 lines the engine wrote on stderr.
    #[must_use]
    pub fn stderr_tail(&self) -> &[String] {
        &self.stderr_tail
    }

    /// How the engine ended: `exited with status 0`, `was killed by signal
    /// 9`, `did not exit within the timeout; killed`.
    #[must_use]
    pub fn ended(&self) -> &str {
        &self.ended
    }
}

/// Why, the lines sent and received, the stderr tail and how the engine
/// ended, as the summary shows a failure under its check.
impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&details(self))
    }
}

/// How much a check matters: an engine conforms when every `Must` holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Level {
    /// Every engine must: a failure means a controller cannot rely on it.
    Must,
    /// Every engine should: a failure is worth fixing, but the engine
    /// still conforms.
    Should,
}

impl Level {
    /// `must` or `should`, as the report writes it.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Must => "must",
            Level::Should => "should",
        }
    }
}

/// What a check concluded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Outcome {
    Pass,
    Fail(String),
    /// Not judged, and why: what it looks at went where another check
    /// fails it.
    NotJudged(String),
}

/// One run of the engine: the lines fed, in what pieces.
struct Scenario {
    name: &'static str,
    level: Level,
    rule: String,
    feed: Feed,
    /// The long line the scenario is about, its number and what it is: a
    /// failure names it, and how the engine ended on it.
    long: Option<(u64, String)>,
    /// Why the check fails whatever the engine does (its declared limit is
    /// shorter than a line every engine must read).
    fails: Option<String>,
}

/// What the engine owes, or gave, that the checks look at.
#[derive(Clone, PartialEq, Eq, Debug)]
enum Answer {
    /// A `command_error` with this message.
    Error(String),
    /// Owed only: a `command_error` that ends reading, any message
    /// beginning [`STREAM`]; this one is the crate's.
    Stream(String),
    /// A `jobs_snapshot` with this `request_id`.
    Snapshot(String),
}

impl Answer {
    fn shown(&self) -> String {
        match self {
            Answer::Error(m) => format!("command_error {}", quoted(m)),
            Answer::Stream(m) => format!("command_error {}", quoted(m)),
            Answer::Snapshot(id) => format!("jobs_snapshot {}", quoted(id)),
        }
    }

    /// An owed `command_error`'s message as a failure states it.
    fn owed_message(&self) -> String {
        match self {
            Answer::Stream(m) => format!(
                "one that begins {} (this crate's: {})",
                quoted(STREAM),
                quoted(m)
            ),
            Answer::Error(m) | Answer::Snapshot(m) => quoted(m),
        }
    }

    fn is_error(&self) -> bool {
        !matches!(self, Answer::Snapshot(_))
    }

    /// Whether `got`, an answer the engine wrote, is this owed one.
    fn accepts(&self, got: &Answer) -> bool {
        match (self, got) {
            (Answer::Stream(_), Answer::Error(m)) => m.starts_with(STREAM),
            _ => self == got,
        }
    }
}

/// What a scenario's input is owed, as the crate's reader reads it at the
/// engine's limit.
struct Owed {
    /// In order, up to and including the line that stops reading.
    answers: Vec<Answer>,
    stop: Option<Stop>,
}

/// The line at which reading stops, and what reading on would show.
struct Stop {
    /// What it is: `a line that is not JSON (line 2: {x)`, `a line over
    /// its declared limit of 5 bytes (line 1, 6 bytes)`.
    what: String,
    /// For a line over the limit: what it would be answered, read as a
    /// command.
    read: Option<Answer>,
    /// What the lines after it would be answered, with their numbers.
    after: Vec<(u64, Answer)>,
}

/// A scenario run, judged: what each check needs of it, and what a
/// failure shows. The engine's output itself is not kept.
struct Run {
    scenario: Scenario,
    /// The scenario's own check.
    outcome: Outcome,
    /// The first stdout line that is not an event, and why.
    stray: Option<String>,
    /// The owed `command_error`s missing from stdout and on stderr: why
    /// `no-stderr-answers` fails.
    on_stderr: Option<String>,
    /// The `command stream: ` error the engine answered the line that ends
    /// reading with, if it did on stdout, and the crate's.
    stream: Option<(Option<String>, String)>,
    /// The lines sent, shown.
    sent: Vec<String>,
    /// The first [`RECEIVED_KEPT`] stdout lines, shown.
    received: Vec<String>,
    /// How many lines the engine wrote on stdout.
    received_lines: usize,
    stderr_tail: Vec<String>,
    ended: String,
}

impl Run {
    /// `scenario`'s run judged by what the engine wrote: each stdout line
    /// read once, as it is reached; what is owed read at `limit`.
    fn judged(scenario: Scenario, ran: &Ran, limit: usize) -> Run {
        let name = scenario.name;
        let input = scenario.feed.pieces.concat();
        let owed = owed(&input, limit);
        let ended = match ran.status {
            Some(status) => ended(status),
            None if ran.overflowed => {
                format!("wrote more than {} MiB; killed", MAX_OUTPUT >> 20)
            }
            None => "did not exit within the timeout; killed".to_owned(),
        };
        let (mut got, mut stray, mut received, mut received_lines) =
            (Vec::new(), None, Vec::new(), 0);
        for (n, line) in lines(&ran.stdout).enumerate() {
            received_lines += 1;
            if received.len() < RECEIVED_KEPT {
                received.push(shown(line));
            }
            match read_event(line) {
                Ok(answer) => got.extend(answer),
                Err(why) if stray.is_none() => {
                    stray = Some(format!(
                        "in {name}, stdout line {} is not an event ({why}): {}",
                        n + 1,
                        shown(line)
                    ));
                }
                Err(_) => {}
            }
        }
        let killed = ran.status.is_none().then_some(ended.as_str());

        // Answers on stderr: taken out of what is owed, so that the one
        // cause is named once, by `no-stderr-answers`.
        let moved = on_stderr(&owed.answers, &got, &ran.stderr);
        let kept: Vec<Answer> = owed
            .answers
            .iter()
            .enumerate()
            .filter(|(i, _)| !moved.iter().any(|(j, _)| j == i))
            .map(|(_, a)| a.clone())
            .collect();
        let on_stderr = moved.first().map(|(_, (n, line))| {
            format!(
                "in {name}, the answers went to stderr, not stdout: {} of the {} owed {} missing from stdout and on stderr, the first as stderr line {n}: {line}",
                moved.len(),
                owed.answers.len(),
                if moved.len() == 1 { "is" } else { "are" },
            )
        });

        let differs = match (&scenario.fails, read_on(&owed, &kept, &got)) {
            (Some(why), _) => Some(why.clone()),
            (None, Some(why)) => with_end(why, killed),
            (None, None) => match &scenario.long {
                Some((line, what)) => on_long_line(*line, what, &kept, &got, ran, &ended),
                None => answers_differ(&kept, &got, killed),
            },
        };
        let outcome = match (differs, moved.len()) {
            (Some(why), _) => Outcome::Fail(why),
            (None, 0) => Outcome::Pass,
            (None, 1) => Outcome::NotJudged(
                "its answer owed is on stderr, not stdout (no-stderr-answers)".to_owned(),
            ),
            (None, n) => Outcome::NotJudged(format!(
                "its {n} answers owed are on stderr, not stdout (no-stderr-answers)"
            )),
        };

        // The engine's answer to the line that ends reading, where the
        // crate's is: the k-th error owed is the k-th written (none when
        // it went to stderr).
        let errors: Vec<&String> = got
            .iter()
            .filter_map(|a| match a {
                Answer::Error(m) => Some(m),
                _ => None,
            })
            .collect();
        let said = kept
            .iter()
            .filter(|a| a.is_error())
            .position(|a| matches!(a, Answer::Stream(_)))
            .and_then(|k| errors.get(k))
            .filter(|said| said.starts_with(STREAM))
            .map(|said| (*said).clone());
        let stream = owed.answers.iter().find_map(|a| match a {
            Answer::Stream(m) => Some((said.clone(), m.clone())),
            _ => None,
        });

        Run {
            outcome,
            stray,
            on_stderr,
            stream,
            sent: lines(&input).map(shown).collect(),
            received,
            received_lines,
            stderr_tail: stderr_tail(&ran.stderr),
            ended,
            scenario,
        }
    }
}

/// `why`, and how a killed engine ended when it was.
fn with_end(why: String, killed: Option<&str>) -> Option<String> {
    Some(match killed {
        Some(how) => format!("{why} ({how})"),
        None => why,
    })
}

/// Why a scenario about a long line fails, naming the line, and how the
/// engine ended when it did not exit cleanly: `the engine died on line 1,
/// a prompt of 4194304 bytes with a PNG image (it exited with status 1):
/// no jobs_snapshot answered request_id "..."`; `on line 1, ...: ...` when
/// it exited cleanly but an answer owed is missing.
fn on_long_line(
    line: u64,
    what: &str,
    owed: &[Answer],
    got: &[Answer],
    ran: &Ran,
    ended: &str,
) -> Option<String> {
    let killed = ran.status.is_none().then_some(ended);
    let Some(why) = answers_differ(owed, got, None) else {
        return killed.map(str::to_owned);
    };
    let verb = match ran.status {
        Some(status) if status.success() => None,
        Some(_) => Some("died"),
        None if ran.overflowed => Some("failed"),
        None => Some("hung"),
    };
    // An engine that ended cleanly is named with the line only when an
    // answer owed is missing: a stray answer is not the line's doing.
    let missing = owed.iter().any(|a| !got.iter().any(|g| a.accepts(g)));
    Some(match verb {
        Some(verb) => format!("the engine {verb} on line {line}, {what} (it {ended}): {why}"),
        None if missing => format!("on line {line}, {what}: {why}"),
        None => why,
    })
}

/// The answers owed (their index in `owed`) missing from stdout and found
/// on stderr, with that stderr line's number and text: an engine that
/// writes its answers as a log. An answer is found as an event after any
/// prefix (`answer: {"event":"command_error",...}`), or a `command_error`'s
/// message as a line or after a `: ` in it (`error: goal text must not be
/// blank`); one that ends reading as any line holding `command stream: `,
/// as its detail is the engine's. One pass over stderr, whatever its size
/// (up to 64 MiB) and however many answers are owed.
fn on_stderr(owed: &[Answer], got: &[Answer], stderr: &[u8]) -> Vec<(usize, (usize, String))> {
    use std::collections::{HashMap, VecDeque};
    type Waiting<'a> = HashMap<&'a str, VecDeque<usize>>;
    /// The first answer waiting for `key`, taken.
    fn first(of: &mut Waiting<'_>, key: &str) -> Option<usize> {
        let waiting = of.get_mut(key)?;
        let i = waiting.pop_front();
        if waiting.is_empty() {
            of.remove(key);
        }
        i
    }
    // Each missing answer by its message or `request_id`, in order.
    let (mut errors, mut snapshots, mut stream) = (Waiting::new(), Waiting::new(), None);
    for (i, answer) in owed.iter().enumerate() {
        if got.iter().any(|g| answer.accepts(g)) {
            continue;
        }
        match answer {
            Answer::Error(m) => errors.entry(m).or_default().push_back(i),
            Answer::Snapshot(id) => snapshots.entry(id).or_default().push_back(i),
            Answer::Stream(_) => stream = stream.or(Some(i)),
        }
    }
    let mut found = Vec::new();
    for (n, line) in lines(stderr).enumerate() {
        if errors.is_empty() && snapshots.is_empty() && stream.is_none() {
            break;
        }
        let text = String::from_utf8_lossy(line);
        let mut take = |i: Option<usize>| {
            if let Some(i) = i {
                found.push((i, (n + 1, shown(line))));
            }
        };
        if text.contains(STREAM) {
            take(stream.take());
        }
        // The event after any prefix: a command logged is none.
        match text.find('{').map(|at| read_event(&text.as_bytes()[at..])) {
            Some(Ok(Some(Answer::Error(m)))) => take(first(&mut errors, &m)),
            Some(Ok(Some(Answer::Snapshot(id)))) => take(first(&mut snapshots, &id)),
            _ => {}
        }
        // A message, as the line or after a `: ` in it; a line longer than
        // any message the crate writes is a log line, or data.
        if text.len() <= 64 << 10 {
            let text = text.trim_end_matches('\r');
            let starts = std::iter::once(0).chain(text.match_indices(": ").map(|(at, _)| at + 2));
            for at in starts {
                take(first(&mut errors, &text[at..]));
            }
        }
    }
    found.sort_unstable();
    found
}

/// Why the answers show the engine reading past the line that stops
/// reading: it answered that line as a command (a line over the limit), or
/// a line after it.
fn read_on(owed: &Owed, kept: &[Answer], got: &[Answer]) -> Option<String> {
    let stop = owed.stop.as_ref()?;
    if let Some(answer) = stop.read.as_ref().filter(|a| got.contains(a)) {
        return Some(format!(
            "the engine read {} as a command: it answered {}",
            stop.what,
            answer.shown()
        ));
    }
    let owed_errors = kept.iter().filter(|a| a.is_error()).count();
    let extra: Vec<&Answer> = got
        .iter()
        .filter(|a| a.is_error())
        .skip(owed_errors)
        .collect();
    stop.after.iter().find_map(|(n, answer)| {
        let seen = match answer {
            Answer::Snapshot(_) => got.contains(answer) && !kept.contains(answer),
            _ => extra.iter().any(|e| answer.accepts(e)),
        };
        seen.then(|| {
            format!(
                "the engine read on after {}: it answered line {n} with {}",
                stop.what,
                answer.shown()
            )
        })
    })
}

/// A `jobs_snapshot` line with `id`, LF excluded: the probe.
fn snapshot(id: &str) -> Vec<u8> {
    line_of(&Command::jobs_snapshot(id))
}

/// `command`'s line, LF excluded.
fn line_of(command: &Command) -> Vec<u8> {
    let mut line = Vec::new();
    command.write_line(&mut line).expect("writing to a Vec");
    line.pop();
    line
}

/// `long-prompt`'s line: a prompt of exactly [`LONG_PROMPT_LEN`] bytes,
/// LF excluded, a text part and a real PNG image, the text filling what
/// the image leaves.
fn long_prompt() -> Vec<u8> {
    let image = Image::from_bytes(PNG.to_vec()).expect("a PNG");
    let line = |text: String| {
        line_of(&Command::prompt(Content::new(vec![
            ContentPart::from(text),
            ContentPart::from(image.clone()),
        ])))
    };
    let bare = line(String::new()).len();
    let text: String = "check-engine: a prompt of 4 MiB, as a controller may send one. "
        .chars()
        .cycle()
        .take(LONG_PROMPT_LEN - bare)
        .collect();
    line(text)
}

/// The vectors' lines (those that fit on one line) that the crate's reader
/// judges as `keep` says, in the vectors' order.
fn vector_lines(text: &str, keep: impl Fn(&Item) -> bool) -> Vec<Vec<u8>> {
    text.lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter_map(|vector| {
            use base64::Engine;
            match (vector.get("line"), vector.get("line_base64")) {
                (Some(Value::String(line)), _) => Some(line.as_bytes().to_vec()),
                (_, Some(Value::String(b64))) => {
                    base64::engine::general_purpose::STANDARD.decode(b64).ok()
                }
                _ => None,
            }
        })
        .filter(|line| !line.contains(&b'\n'))
        .filter(|line| {
            CommandReader::with_max_line_len(&line[..], usize::MAX)
                .next()
                .is_some_and(|item| keep(&item))
        })
        .collect()
}

type Item = Result<Command, v2::ReadError>;

/// JSON, but not a command: refused, and reading goes on.
fn protocol_error(item: &Item) -> bool {
    matches!(item, Err(e) if !e.is_stream_error())
}

/// A command the serve policy declines.
fn declined(item: &Item) -> bool {
    matches!(item, Ok(command) if command.serve_refusal().is_some())
}

/// Not JSON: refused, and reading stops.
fn not_json(item: &Item) -> bool {
    matches!(item, Err(e) if e.is_stream_error())
}

/// `lines`, each with `end` after it.
fn joined(lines: &[Vec<u8>], end: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for line in lines {
        out.extend_from_slice(line);
        out.extend_from_slice(end);
    }
    out
}

/// `line`, a JSON object, padded with spaces before its `}` to `len`
/// bytes (or left as it is when it is longer).
fn padded(mut line: Vec<u8>, len: usize) -> Vec<u8> {
    let len = len.max(line.len());
    let close = line.pop().expect("a JSON object");
    line.resize(len - 1, b' ');
    line.push(close);
    line
}

/// The scenarios, in the order of the table on [`CheckEngine`], for an
/// engine that declared the limit `declared`, if it did.
fn scenarios(declared: Option<usize>) -> Vec<Scenario> {
    let limit = declared.unwrap_or(DEFAULT_MAX_LINE_LEN);
    let errors = vector_lines(VECTORS_V2, protocol_error);
    let refusals = vector_lines(SERVE_V2, declined);
    let refused = refusals[0].clone();
    let error = errors[0].clone();
    // The shortest, for a readable report.
    let bad = vector_lines(VECTORS_V2, not_json)
        .into_iter()
        .min_by_key(Vec::len)
        .expect("the vectors have lines that are not JSON");
    let whole = |name, level, rule: String, input: Vec<u8>| Scenario {
        name,
        level,
        rule,
        feed: Feed::whole(input),
        long: None,
        fails: None,
    };
    let mut out = Vec::new();

    let mut lines = errors.clone();
    lines.push(snapshot("check-engine-after-errors"));
    out.push(whole(
        "protocol-errors",
        Level::Must,
        format!(
            "each of the vectors' {} lines that are JSON but not a command is answered by one command_error with its exact message, in order, and the engine reads on",
            errors.len()
        ),
        joined(&lines, b"\n"),
    ));

    let mut lines = refusals.clone();
    lines.push(snapshot("check-engine-after-refusals"));
    out.push(whole(
        "serve-refusals",
        Level::Must,
        format!(
            "each of the vectors' {} commands the serve policy declines is answered by one command_error with its exact message, in order, and the engine reads on",
            refusals.len()
        ),
        joined(&lines, b"\n"),
    ));

    out.push(whole(
        "not-json",
        Level::Must,
        "a line that is not JSON is answered by exactly one command_error whose message begins `command stream: ` (the rest is the engine's JSON parser's), and no line after it is answered".to_owned(),
        joined(
            &[
                snapshot("check-engine-before"),
                bad,
                snapshot("check-engine-unread"),
                refused.clone(),
            ],
            b"\n",
        ),
    ));

    let mut input = b"\n \n\t\r\n".to_vec();
    input.extend(joined(&[snapshot("check-engine-blank-1")], b"\n"));
    input.extend_from_slice(b"\n   \n");
    input.extend(joined(
        &[refused.clone(), snapshot("check-engine-blank-2")],
        b"\n",
    ));
    out.push(whole(
        "blank-lines",
        Level::Must,
        "blank lines (of spaces, tabs and CRs) are skipped, unanswered".to_owned(),
        input,
    ));

    out.push(whole(
        "crlf",
        Level::Must,
        "lines ending in CRLF are read as lines (the CR is JSON whitespace)".to_owned(),
        joined(
            &[
                snapshot("check-engine-crlf-1"),
                error.clone(),
                snapshot("check-engine-crlf-2"),
            ],
            b"\r\n",
        ),
    ));

    let input = joined(
        &[
            snapshot("check-engine-split-1"),
            refused.clone(),
            snapshot("check-engine-split-2"),
        ],
        b"\n",
    );
    let mut pieces = Vec::new();
    let mut rest = &input[..];
    for size in [1, 2, 3, 5, 8].into_iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let (piece, tail) = rest.split_at(size.min(rest.len()));
        pieces.push(piece.to_vec());
        rest = tail;
    }
    out.push(Scenario {
        name: "split-writes",
        level: Level::Must,
        rule: format!(
            "lines arriving in {} writes of 1 to 8 bytes, 2 ms apart, are read whole",
            pieces.len()
        ),
        feed: Feed {
            pieces,
            pause: Duration::from_millis(2),
        },
        long: None,
        fails: None,
    });

    let mut input = joined(&[error], b"\n");
    input.extend(snapshot("check-engine-no-lf"));
    out.push(whole(
        "no-final-lf",
        Level::Must,
        "a last line without LF is read at the end of input".to_owned(),
        input,
    ));

    // A `cancel` last: an engine with a model need not run the turn out.
    let prompt = long_prompt();
    let what = format!("a prompt of {} bytes with a PNG image", prompt.len());
    out.push(Scenario {
        fails: (prompt.len() > limit).then(|| {
            format!(
                "the declared limit, {limit} bytes, is shorter than line 1, {what}, a line every engine must read"
            )
        }),
        long: Some((1, what)),
        ..whole(
            "long-prompt",
            Level::Must,
            format!(
                "a prompt of {} bytes (4 MiB: a text part and a real PNG image), a line every engine meets, is read, and the engine reads on: a jobs_snapshot after it is answered",
                prompt.len()
            ),
            joined(
                &[
                    prompt,
                    snapshot("check-engine-long-prompt"),
                    line_of(&Command::Cancel),
                ],
                b"\n",
            ),
        )
    });

    let line = padded(snapshot("check-engine-at-limit"), limit);
    let len = line.len();
    let (rule, what) = match declared {
        None => (
            format!("a line of exactly {len} bytes (64 MiB, the crate's limit; JSON padded with spaces) is read"),
            format!("a line of {len} bytes, the crate's limit"),
        ),
        Some(_) => (
            format!("a line of exactly {len} bytes (the engine's limit, as declared; JSON padded with spaces) is read"),
            format!("a line of {len} bytes, the declared limit"),
        ),
    };
    out.push(Scenario {
        long: Some((1, what)),
        ..whole("line-at-limit", Level::Should, rule, joined(&[line], b"\n"))
    });

    if let Some(max) = declared {
        let line = padded(snapshot("check-engine-over-limit"), max.saturating_add(1));
        let len = line.len();
        out.push(Scenario {
            long: Some((1, format!("a line of {len} bytes, over the declared limit of {max}"))),
            ..whole(
                "line-over-limit",
                Level::Must,
                format!(
                    "a line of {len} bytes, over the declared limit of {max}, is answered by one command_error whose message begins `command stream: `, and no line after it is answered"
                ),
                joined(&[line, snapshot("check-engine-over-limit-unread")], b"\n"),
            )
        });
    }

    out.push(whole(
        "jobs-snapshot",
        Level::Must,
        "jobs_snapshot is answered by a jobs_snapshot event with the same request_id".to_owned(),
        joined(&[snapshot("check-engine-snapshot")], b"\n"),
    ));
    out
}

/// The answer the crate owes `command`, if any.
fn answer_to(command: &Command) -> Option<Answer> {
    match command {
        Command::JobsSnapshot { request_id, .. } => Some(Answer::Snapshot(request_id.clone())),
        command => command
            .serve_refusal_event_line()
            .map(|line| Answer::Error(message_of(&line))),
    }
}

/// What the crate's reader, at `limit`, says `input` is owed, in order: up
/// to and including the line that stops reading; and what reading on would
/// show.
fn owed(input: &[u8], limit: usize) -> Owed {
    let mut answers = Vec::new();
    let mut reader = CommandReader::with_max_line_len(input, limit);
    while let Some(item) = reader.next() {
        match item {
            Ok(command) => answers.extend(answer_to(&command)),
            Err(e) if e.is_stream_error() => {
                answers.push(Answer::Stream(message_of(&e.event_line())));
                let stop = stopped_at(input, reader.line_number(), limit, &e);
                return Owed {
                    answers,
                    stop: Some(stop),
                };
            }
            Err(e) => answers.push(Answer::Error(message_of(&e.event_line()))),
        }
    }
    Owed {
        answers,
        stop: None,
    }
}

/// The stop at `line` of `input`, why `error`, and what each line after it
/// would be answered, up to the next line that stops reading.
fn stopped_at(input: &[u8], line: u64, limit: usize, error: &v2::ReadError) -> Stop {
    let mut start = 0;
    for _ in 1..line {
        start += input[start..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(input.len() - start, |i| i + 1);
    }
    let end = input[start..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(input.len(), |i| start + i);
    let stopped = &input[start..end];
    let (what, read) = match error {
        v2::ReadError::TooLong { max, .. } => (
            format!(
                "a line over its declared limit of {max} bytes (line {line}, {} bytes)",
                stopped.len()
            ),
            CommandReader::with_max_line_len(stopped, usize::MAX)
                .next()
                .and_then(Result::ok)
                .and_then(|command| answer_to(&command)),
        ),
        _ => (
            format!("a line that is not JSON (line {line}: {})", shown(stopped)),
            None,
        ),
    };
    let mut after = Vec::new();
    let mut reader = CommandReader::with_max_line_len(input.get(end + 1..).unwrap_or(&[]), limit);
    while let Some(item) = reader.next() {
        let n = line + reader.line_number();
        match item {
            Ok(command) => after.extend(answer_to(&command).map(|a| (n, a))),
            Err(e) if e.is_stream_error() => {
                // Its detail is the engine's own, as any stream error's.
                after.push((n, Answer::Stream(message_of(&e.event_line()))));
                break;
            }
            Err(e) => after.push((n, Answer::Error(message_of(&e.event_line())))),
        }
    }
    Stop { what, read, after }
}

/// The message of a `command_error` event line the crate wrote.
fn message_of(line: &str) -> String {
    Event::from_slice(line.trim_end().as_bytes())
        .ok()
        .and_then(|e| e.command_error_cause())
        .map(|cause| cause.to_string())
        .expect("the crate writes command_error events")
}

/// An engine line as a controller reads it: `Ok(None)` for a blank line or
/// an event the checks do not look at, `Err` for a line that is not an
/// event.
fn read_event(line: &[u8]) -> Result<Option<Answer>, String> {
    match EventReader::with_max_line_len(line, usize::MAX).next() {
        None => Ok(None),
        // Its line number is the reader's, always 1 here: left out.
        Some(Err(v2::EventReadError::NotJson { error, .. })) => Err(error.to_string()),
        Some(Err(v2::EventReadError::NotAnEvent { error, .. })) => Err(error.to_string()),
        Some(Err(e)) => Err(e.to_string()),
        Some(Ok(event)) => Ok(match (event.command_error_cause(), event) {
            (Some(cause), _) => Some(Answer::Error(cause.to_string())),
            (None, Event::JobsSnapshot { request_id, .. }) => Some(Answer::Snapshot(request_id)),
            _ => None,
        }),
    }
}

fn judge(runs: &[Run]) -> Vec<Check> {
    // The first run, in order, that shows it.
    let first = |of: fn(&Run) -> &Option<String>| {
        runs.iter()
            .find_map(|run| of(run).clone().map(|why| (why, run)))
    };
    let across = |name, rule: &str, found: Option<(String, &Run)>| match found {
        Some((why, run)) => Check::new(
            name,
            Level::Must,
            rule.to_owned(),
            Outcome::Fail(why),
            Some(run),
        ),
        None => Check::new(name, Level::Must, rule.to_owned(), Outcome::Pass, None),
    };
    let mut checks = vec![
        across(
            "stdout-events",
            "every line the engine writes on stdout, in every scenario, is an event (no banner, no log line)",
            first(|run| &run.stray),
        ),
        across(
            "no-stderr-answers",
            "no answer owed (a command_error, a jobs_snapshot) is written on stderr instead of stdout",
            first(|run| &run.on_stderr),
        ),
    ];
    for run in runs {
        let scenario = &run.scenario;
        checks.push(Check::new(
            scenario.name,
            scenario.level,
            scenario.rule.clone(),
            run.outcome.clone(),
            Some(run),
        ));
        if scenario.name == "not-json" {
            let (outcome, rule) = not_json_detail(run);
            checks.push(Check::new(
                "not-json-detail",
                Level::Should,
                rule,
                outcome,
                Some(run),
            ));
        }
    }
    checks
}

/// `not-json-detail`, judged on `not-json`'s run: the engine's `command
/// stream: ` error word for word the reference's.
fn not_json_detail(run: &Run) -> (Outcome, String) {
    let (said, owed) = run
        .stream
        .clone()
        .expect("not-json owes a command stream error");
    let rule = format!(
        "the command_error for the line that is not JSON is the reference's word for word: {}",
        quoted(&owed)
    );
    let outcome = match said {
        None => Outcome::NotJudged(
            "no command_error beginning \"command stream: \" answered the line that is not JSON on stdout (not-json)".to_owned(),
        ),
        Some(said) if said == owed => Outcome::Pass,
        Some(said) => Outcome::Fail(format!(
            "the line that is not JSON is answered {}; the reference answers {}",
            quoted(&said),
            quoted(&owed)
        )),
    };
    (outcome, rule)
}

/// Why the answers `got` are not those `owed`, if they are not: the
/// `command_error` messages must be those owed, in order (one that ends
/// reading any beginning `command stream: `); each `jobs_snapshot` owed
/// must come once, after the errors owed for the lines before it; none
/// other may come. An engine that was `killed` (how, said) fails for that
/// if for nothing else.
fn answers_differ(owed: &[Answer], got: &[Answer], killed: Option<&str>) -> Option<String> {
    let why = |what: String| with_end(what, killed);
    let owed_errors: Vec<&Answer> = owed.iter().filter(|a| a.is_error()).collect();
    let got_errors: Vec<&Answer> = got.iter().filter(|a| a.is_error()).collect();
    for (k, want) in owed_errors.iter().enumerate() {
        match got_errors.get(k) {
            None => {
                return why(format!(
                    "command_error {} of {} owed never came: {}",
                    k + 1,
                    owed_errors.len(),
                    want.owed_message()
                ))
            }
            Some(said) if !want.accepts(said) => {
                let (Answer::Error(m) | Answer::Stream(m) | Answer::Snapshot(m)) = said;
                return why(format!(
                    "command_error {} says {}; owed {}",
                    k + 1,
                    quoted(m),
                    want.owed_message()
                ));
            }
            Some(_) => {}
        }
    }
    if let Some(Answer::Error(extra) | Answer::Stream(extra) | Answer::Snapshot(extra)) =
        got_errors.get(owed_errors.len())
    {
        return why(format!(
            "command_error {} was not owed ({} owed): {}",
            owed_errors.len() + 1,
            owed_errors.len(),
            quoted(extra)
        ));
    }
    let mut errors_before = 0;
    for answer in owed {
        match answer {
            Answer::Error(_) | Answer::Stream(_) => errors_before += 1,
            Answer::Snapshot(id) => {
                let at: Vec<usize> = got
                    .iter()
                    .enumerate()
                    .filter(|(_, a)| *a == answer)
                    .map(|(i, _)| i)
                    .collect();
                match at[..] {
                    [] => {
                        return why(format!(
                            "no jobs_snapshot answered request_id {}",
                            quoted(id)
                        ))
                    }
                    [i] => {
                        let before = got[..i].iter().filter(|a| a.is_error()).count();
                        if before < errors_before {
                            return why(format!(
                                "the jobs_snapshot for {} came after {before} command_errors, before the {errors_before} owed for the lines sent before it",
                                quoted(id)
                            ));
                        }
                    }
                    _ => {
                        return why(format!(
                            "request_id {} was answered {} times",
                            quoted(id),
                            at.len()
                        ))
                    }
                }
            }
        }
    }
    // Every error came as owed: what is left is a snapshot.
    if let Some(extra) = got.iter().find(|a| !owed.contains(a) && !a.is_error()) {
        return why(format!(
            "{} answers no line the engine reads",
            extra.shown()
        ));
    }
    killed.map(str::to_owned)
}

/// A failure's details in the human summary.
fn details(failure: &Failure) -> String {
    let mut out = format!("  why: {}\n", failure.why);
    out += &listed("sent", &failure.sent, failure.sent.len());
    out += &listed("received", &failure.received, failure.received_lines);
    let tail = &failure.stderr_tail;
    out += &listed("stderr tail", tail, tail.len());
    out += &format!("  engine: {}\n", failure.ended);
    out
}

// The stderr tail is shown whole.
const _: () = assert!(STDERR_TAIL <= SHOWN_LINES);

/// `what (N lines):` and the first [`SHOWN_LINES`] of `lines`, of `total`
/// (more than `lines` when the report keeps only some).
fn listed(what: &str, lines: &[String], total: usize) -> String {
    let plural = if total == 1 { "" } else { "s" };
    let mut out = format!("  {what} ({total} line{plural}):\n");
    let some = &lines[..lines.len().min(SHOWN_LINES)];
    for line in some {
        out += &format!("    {line}\n");
    }
    let more = total - some.len();
    if more > 0 {
        if total == lines.len() {
            out += &format!("    ... {more} more (all in the report)\n");
        } else {
            out += &format!(
                "    ... {more} more (the first {} in the report)\n",
                lines.len()
            );
        }
    }
    out
}

/// The last [`STDERR_TAIL`] lines of `stderr`, shown.
fn stderr_tail(stderr: &[u8]) -> Vec<String> {
    let mut tail = std::collections::VecDeque::with_capacity(STDERR_TAIL + 1);
    for line in lines(stderr) {
        tail.push_back(line);
        if tail.len() > STDERR_TAIL {
            tail.pop_front();
        }
    }
    tail.iter().map(|l| shown(l)).collect()
}

/// A line as the summary and the report show it: control characters made
/// visible, at most [`SHOWN_CHARS`] characters of it (a line of 64 MiB is
/// not copied whole).
pub(super) fn shown(line: &[u8]) -> String {
    let text = visible(&line[..line.len().min(4 * SHOWN_CHARS)]);
    match text.char_indices().nth(SHOWN_CHARS) {
        Some((i, _)) => format!("{}... ({} bytes)", &text[..i], line.len()),
        None if line.len() > 4 * SHOWN_CHARS => format!("{text}... ({} bytes)", line.len()),
        None => text,
    }
}

pub(super) fn quoted(s: &str) -> String {
    serde_json::to_string(s).expect("a string serializes")
}

#[cfg(test)]
mod tests {
    /// The names [`super::CheckEngine::only`] takes are the report's, in
    /// its order.
    #[test]
    fn the_line_checks_are_listed_in_the_reports_order() {
        let mut names = vec!["stdout-events", "no-stderr-answers"];
        for scenario in super::scenarios(Some(1 << 23)) {
            names.push(scenario.name);
            if scenario.name == "not-json" {
                names.push("not-json-detail");
            }
        }
        assert_eq!(names, super::LINE_CHECKS);
    }

    use super::{
        answers_differ, listed, long_prompt, on_stderr, owed, read_on, shown, stderr_tail, Answer,
        LONG_PROMPT_LEN, PNG,
    };
    use crate::v2::{Command, CommandReader, ContentPart};

    /// A line is shown with its controls visible and cut after 300
    /// characters, or after 1,200 bytes of fewer characters, its length
    /// said when cut.
    #[test]
    fn a_line_is_shown_cut_at_300_characters_or_1200_bytes() {
        let x301 = "x".repeat(301);
        let emoji300 = "😀".repeat(300);
        let emoji301 = "😀".repeat(301);
        let cases: &[(&str, String)] = &[
            ("plain", "plain".to_owned()),
            ("a\r", "a\\r".to_owned()),
            (&x301, format!("{}... (301 bytes)", "x".repeat(300))),
            (&emoji300, emoji300.clone()),
            (&emoji301, format!("{emoji300}... (1204 bytes)")),
        ];
        for (line, want) in cases {
            assert_eq!(shown(line.as_bytes()), *want, "{line:?}");
        }
    }

    /// A list shows its first 20 lines and says how many more there are,
    /// and whether the report has them all.
    #[test]
    fn a_list_shows_twenty_lines_and_counts_the_rest() {
        let lines = |n: usize| (1..=n).map(|i| i.to_string()).collect::<Vec<_>>();
        let shown = |n: usize| (1..=n).map(|i| format!("    {i}\n")).collect::<String>();
        let cases: &[(Vec<String>, usize, String)] = &[
            (lines(0), 0, "  sent (0 lines):\n".to_owned()),
            (lines(1), 1, format!("  sent (1 line):\n{}", shown(1))),
            (lines(20), 20, format!("  sent (20 lines):\n{}", shown(20))),
            (
                lines(25),
                25,
                format!(
                    "  sent (25 lines):\n{}    ... 5 more (all in the report)\n",
                    shown(20)
                ),
            ),
            (
                lines(25),
                30,
                format!(
                    "  sent (30 lines):\n{}    ... 10 more (the first 25 in the report)\n",
                    shown(20)
                ),
            ),
        ];
        for (kept, total, want) in cases {
            assert_eq!(listed("sent", kept, *total), *want, "{total}");
        }
    }

    /// Why answers differ from those owed, each rule's message exactly.
    #[test]
    fn answers_differ_says_which_rule_they_break() {
        use Answer::{Error as E, Snapshot as S};
        let (a, b) = (|| E("a".into()), || E("b".into()));
        let (s, t) = (|| S("s".into()), || S("t".into()));
        let c = || Answer::Stream("command stream: x".into());
        let cases: Vec<(Vec<Answer>, Vec<Answer>, Option<&str>)> = vec![
            (vec![a(), s()], vec![a(), s()], None),
            (vec![a()], vec![], Some("command_error 1 of 1 owed never came: \"a\"")),
            (vec![a()], vec![b()], Some("command_error 1 says \"b\"; owed \"a\"")),
            (vec![], vec![a()], Some("command_error 1 was not owed (0 owed): \"a\"")),
            (
                vec![a(), s()],
                vec![s(), a()],
                Some("the jobs_snapshot for \"s\" came after 0 command_errors, before the 1 owed for the lines sent before it"),
            ),
            (vec![s()], vec![], Some("no jobs_snapshot answered request_id \"s\"")),
            (vec![s()], vec![s(), s()], Some("request_id \"s\" was answered 2 times")),
            (vec![s()], vec![s(), t()], Some("jobs_snapshot \"t\" answers no line the engine reads")),
            // An error that ends reading: any message that begins
            // `command stream: `, the crate's shown when another came.
            (vec![s(), c()], vec![s(), E("command stream: Expecting value".into())], None),
            (
                vec![c()],
                vec![a()],
                Some("command_error 1 says \"a\"; owed one that begins \"command stream: \" (this crate's: \"command stream: x\")"),
            ),
            (
                vec![c()],
                vec![],
                Some("command_error 1 of 1 owed never came: one that begins \"command stream: \" (this crate's: \"command stream: x\")"),
            ),
        ];
        for (owed, got, want) in &cases {
            assert_eq!(
                answers_differ(owed, got, None).as_deref(),
                *want,
                "{owed:?} {got:?}"
            );
        }
        // A killed engine fails for that, and any other failure says it.
        let killed = Some("did not exit within the timeout; killed");
        assert_eq!(answers_differ(&[s()], &[s()], killed).as_deref(), killed);
        assert_eq!(
            answers_differ(&[a()], &[], killed).as_deref(),
            Some("command_error 1 of 1 owed never came: \"a\" (did not exit within the timeout; killed)")
        );
    }

    /// The stderr tail is the last 20 lines, or all of fewer.
    #[test]
    fn the_stderr_tail_is_the_last_twenty_lines() {
        let numbered =
            |from: usize, to: usize| (from..=to).map(|i| i.to_string()).collect::<Vec<_>>();
        let stderr = |n: usize| {
            numbered(1, n)
                .iter()
                .map(|l| format!("{l}\n"))
                .collect::<String>()
        };
        assert_eq!(stderr_tail(stderr(25).as_bytes()), numbered(6, 25));
        assert_eq!(stderr_tail(stderr(20).as_bytes()), numbered(1, 20));
        assert_eq!(stderr_tail(b"only, no LF"), ["only, no LF"]);
        assert_eq!(stderr_tail(b""), Vec::<String>::new());
    }

    /// What a line that stops reading is owed, and what reading on would
    /// show: the lines after it, each with its number and answer, up to
    /// the next stop; a line over the limit, what it would get as read.
    #[test]
    fn a_stop_names_its_line_and_what_reading_on_would_show() {
        use Answer::{Error as E, Snapshot as S, Stream as C};
        let owed = owed(
            b"{\"command\":\"jobs_snapshot\",\"request_id\":\"a\"}\n\n{x\n\n{\"command\":\"jobs_snapshot\",\"request_id\":\"b\"}\n{\"command\":\"nap\"}\n]\n{\"command\":\"jobs_snapshot\",\"request_id\":\"c\"}\n",
            1000,
        );
        assert_eq!(
            owed.answers,
            [
                S("a".into()),
                C("command stream: expected a string key at byte 1".into())
            ]
        );
        let stop = owed.stop.unwrap();
        assert_eq!(stop.what, "a line that is not JSON (line 3: {x)");
        assert_eq!(stop.read, None);
        assert_eq!(
            stop.after,
            [
                (5, S("b".into())),
                (6, E("unknown command: nap".into())),
                (
                    7,
                    C("command stream: expected a JSON value at byte 0".into())
                ),
            ]
        );

        let line = b"{\"command\":\"jobs_snapshot\",\"request_id\":\"over\"}";
        let mut input = line.to_vec();
        input.extend_from_slice(b"\n{\"command\":\"jobs_snapshot\",\"request_id\":\"n\"}");
        let owed = super::owed(&input, line.len() - 1);
        assert_eq!(
            owed.answers,
            [C(format!(
                "command stream: line 1 is longer than {} bytes",
                line.len() - 1
            ))]
        );
        let stop = owed.stop.unwrap();
        assert_eq!(
            stop.what,
            format!(
                "a line over its declared limit of {} bytes (line 1, {} bytes)",
                line.len() - 1,
                line.len()
            )
        );
        assert_eq!(stop.read, Some(S("over".into())));
        assert_eq!(stop.after, [(2, S("n".into()))]);
        assert!(super::owed(&input, line.len()).stop.is_none());
    }

    /// Reading on is named by the first line after the stop that was
    /// answered, or by the stop line itself answered as a command.
    #[test]
    fn reading_on_is_named_by_the_first_line_answered_after_the_stop() {
        use Answer::{Error as E, Snapshot as S};
        let input =
            b"{x\n{\"command\":\"nap\"}\n{\"command\":\"jobs_snapshot\",\"request_id\":\"b\"}\n";
        let owed = owed(input, 1000);
        let stream = E("command stream: oops".into());
        let nap = E("unknown command: nap".into());
        let cases: Vec<(Vec<Answer>, Option<&str>)> = vec![
            (vec![stream.clone()], None),
            (
                vec![stream.clone(), nap.clone(), S("b".into())],
                Some("the engine read on after a line that is not JSON (line 1: {x): it answered line 2 with command_error \"unknown command: nap\""),
            ),
            (
                vec![stream.clone(), S("b".into())],
                Some("the engine read on after a line that is not JSON (line 1: {x): it answered line 3 with jobs_snapshot \"b\""),
            ),
            // An extra error that answers no line after: another rule's.
            (vec![stream.clone(), E("x".into())], None),
        ];
        for (got, want) in &cases {
            assert_eq!(
                read_on(&owed, &owed.answers, got).as_deref(),
                *want,
                "{got:?}"
            );
        }
        let over = owed_over_limit();
        assert_eq!(
            read_on(&over, &over.answers, &[S("over".into())]).as_deref(),
            Some("the engine read a line over its declared limit of 10 bytes (line 1, 47 bytes) as a command: it answered jobs_snapshot \"over\"")
        );
    }

    fn owed_over_limit() -> super::Owed {
        owed(
            b"{\"command\":\"jobs_snapshot\",\"request_id\":\"over\"}\n",
            10,
        )
    }

    /// An answer owed missing from stdout is looked for on stderr: as an
    /// event after any prefix, an error's message as the line or after a
    /// `: `, a `command stream: ` one by that beginning; the first stderr
    /// line holding each is named, and a command logged is no answer.
    #[test]
    fn answers_on_stderr_are_found_as_events_or_messages() {
        use Answer::{Error as E, Snapshot as S, Stream as C};
        let owed = [
            E("expected a string \"text\" field".into()),
            S("s".into()),
            E("goal text must not be blank".into()),
            C("command stream: expected a string key at byte 1".into()),
            S("t".into()),
            E("goal text must not be blank".into()),
            S("u".into()),
            E("unknown command: nap".into()),
        ];
        let stderr = b"read {\"command\":\"jobs_snapshot\",\"request_id\":\"t\"}\n\
            log: {\"event\":\"command_error\",\"error\":\"expected a string \\\"text\\\" field\"}\n\
            error: goal text must not be blank\n\
            goal text must not be blank\r\n\
            engine: stopping: command stream: Expecting value\n\
            {\"event\":\"jobs_snapshot\",\"request_id\":\"t\",\"jobs\":[]}\n\
            unknown command: nap, said the engine\n";
        assert_eq!(
            on_stderr(&owed, &[S("s".into())], stderr),
            [
                (0, (2, "log: {\"event\":\"command_error\",\"error\":\"expected a string \\\"text\\\" field\"}".to_owned())),
                (2, (3, "error: goal text must not be blank".to_owned())),
                (3, (5, "engine: stopping: command stream: Expecting value".to_owned())),
                (4, (6, "{\"event\":\"jobs_snapshot\",\"request_id\":\"t\",\"jobs\":[]}".to_owned())),
                (5, (4, "goal text must not be blank\\r".to_owned())),
            ]
        );
        // Answered on stdout: not looked for.
        let got = [
            E("goal text must not be blank".into()),
            E("command stream: x".into()),
        ];
        assert_eq!(on_stderr(&owed[2..4], &got, stderr), []);
        assert_eq!(on_stderr(&owed, &[], b"nothing here\n"), []);
    }

    /// `long-prompt`'s line is exactly 4 MiB, a prompt the crate reads,
    /// of a text part and the PNG.
    #[test]
    fn the_long_prompt_is_a_4_mib_prompt_with_a_png() {
        let line = long_prompt();
        assert_eq!(line.len(), LONG_PROMPT_LEN);
        let command = CommandReader::new(&line[..]).next().unwrap().unwrap();
        let Command::Prompt { content, .. } = command else {
            panic!("not a prompt")
        };
        let parts = content.parts();
        assert!(
            matches!(&parts[0], ContentPart::Text(t) if t.starts_with("check-engine: a prompt of 4 MiB"))
        );
        assert!(matches!(&parts[1], ContentPart::Image(i) if i.bytes() == PNG));
        assert_eq!(parts.len(), 2);
    }
}
