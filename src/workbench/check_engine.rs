//! The engine check's face: [`CheckEngine`] and the [`Report`] of each [`Check`].
//!
//! `serve-command check-engine` in process: [`CheckEngine`] runs the
//! checks, and its [`Report`] tells how each went.
//!
//! Nothing owed is written here: the lines sent come from the crate's
//! vectors (built in) and what each is owed comes from the crate's own
//! reader (`v2::CommandReader`: a refused line's `event_line()`, a
//! declined command's `serve_refusal_event_line()`, where reading stops),
//! exactly as the tap's [`Monitor`](super::Monitor) judges a live session.
//! What the engine wrote is read as a controller reads it
//! (`v2::EventReader`, `command_error_cause`). The line checks are in
//! `line_checks` (their scenarios in `line_scenarios`, what each line is
//! owed in `answers`), the conversation checks in `conversation_checks`,
//! and how a report shows a line in `shown`.

use super::conversation_checks::{self, session_check};
use super::line_checks::{self, LINE_CHECKS};
use super::runner::Runner;
use super::session::Session;
use super::shown::listed;
use super::verdict::SessionVerdict;
use crate::v2::DEFAULT_MAX_LINE_LEN;
use std::fmt;
use std::io;
use std::time::Duration;

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
        let lines_wanted = LINE_CHECKS.iter().any(|n| self.wanted(n));
        let mut checks = if lines_wanted {
            line_checks::run(engine, self.max_line_len, limit, self.timeout)?
        } else {
            Vec::new()
        };
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
    /// A check judged elsewhere (a line check's, a session's), with its
    /// failure shown.
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
    /// A failure shown by the lines of `scenario`'s run.
    pub(super) fn new(
        why: String,
        scenario: String,
        sent: Vec<String>,
        received: Vec<String>,
        received_lines: usize,
        stderr_tail: Vec<String>,
        ended: String,
    ) -> Failure {
        Failure {
            why,
            scenario,
            sent,
            received,
            received_lines,
            stderr_tail,
            ended,
        }
    }

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
