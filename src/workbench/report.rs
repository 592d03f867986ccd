//! The [`Report`](super::Report) of an engine check: each [`Check`], its
//! [`Level`], and its [`Failure`] in words the engine's author acts on.

use super::shown::listed;
use super::verdict::SessionVerdict;
use std::fmt;

/// What [`CheckEngine::run`](super::CheckEngine::run) found: every check, passed, failed or not
/// judged. `Display` is `check-engine`'s summary: one line per check,
/// `PASS`, `FAIL` or `SKIP` (not judged), its level and name; after each
/// failure why, the lines sent, the lines received and the tail of the
/// engine's stderr (at most 20 lines each); after a check not judged,
/// why; then a count.
#[derive(Clone, Debug)]
pub struct Report {
    pub(super) checks: Vec<Check>,
}

impl Report {
    /// Every check, in the order of the table on [`CheckEngine`](super::CheckEngine).
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

impl Report {
    /// The summary's last line, LF ended: `24/25 checks pass; every must
    /// holds; 1 not judged`.
    #[must_use]
    pub fn tally(&self) -> String {
        let (failed, must_failed, not_judged) =
            (self.failed(), self.must_failed(), self.not_judged());
        let mut out = format!(
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
        );
        if not_judged > 0 {
            out += &format!("; {not_judged} not judged");
        }
        out.push('\n');
        out
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for check in &self.checks {
            write!(f, "{check}")?;
        }
        f.write_str(&self.tally())
    }
}

/// A check as the summary shows it: its verdict, level and name, the
/// points its session never reached, and after a failure why and its
/// details, after a check not judged why.
impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} {:<6} {}",
            self.verdict(),
            self.level.as_str(),
            self.name
        )?;
        for missed in &self.missed {
            writeln!(f, "  missed: {missed}")?;
        }
        if let Some(failure) = &self.failure {
            f.write_str(&details(failure))?;
        }
        if let Some(why) = &self.not_judged {
            writeln!(f, "  why: not judged: {why}")?;
        }
        Ok(())
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
    missed: Vec<String>,
}

impl Check {
    /// The same check, with the points of its session the engine never
    /// reached shown under it, whatever its verdict.
    pub(super) fn with_missed(mut self, missed: Vec<String>) -> Check {
        self.missed = missed;
        self
    }

    /// The points of a session file the engine never reached (`step 2: the
    /// turn of command 1 ended before it wrote an event; sent then`),
    /// shown under its check on a PASS too: the session did not test what
    /// it was written for. Empty for the built-in checks.
    #[must_use]
    pub fn missed(&self) -> &[String] {
        &self.missed
    }

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
            missed: Vec::new(),
        }
    }

    /// Its name: `protocol-errors`, `not-json`, ... (the table on
    /// [`CheckEngine`](super::CheckEngine)).
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

    /// `PASS`, `FAIL` or `SKIP` (not judged), as the summary writes it.
    #[must_use]
    pub fn verdict(&self) -> &'static str {
        match (&self.failure, &self.not_judged) {
            (Some(_), _) => "FAIL",
            (None, Some(_)) => "SKIP",
            (None, None) => "PASS",
        }
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
            ended: verdict.ended(),
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
