//! The engine check's face: [`CheckEngine`], which runs the checks and
//! gives their [`Report`](super::Report) (`report.rs`).
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
use super::report::{Check, Report};
use super::runner::Runner;
use super::session::Session;
use crate::v2::DEFAULT_MAX_LINE_LEN;
use std::io;
use std::time::Duration;

/// Checks an engine binary over its real stdio: what any engine must do
/// whatever its model does, for an engine in any language.
///
/// [`CheckEngine::run`] starts the engine afresh for each scenario, writes
/// the scenario's lines to its stdin, closes it, and reads its stdout and
/// stderr until it exits (or the timeout: then it is killed and judged by
/// what it wrote). Each [`Check`](super::Check) has a [`Level`](super::Level):
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
/// | must | `long-prompt` | a 4 MiB prompt (a text part and a real PNG image, a line any controller may send) read, and the engine reading on: a `jobs_snapshot` after it answered (a `cancel` follows once it is, or after 2 s, so that the turn need not run out); an engine that dies, hangs or answers nothing fails, on the line named |
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
        self.run_sessions_each(sessions, engine, |_| {})
    }

    /// [`CheckEngine::run_sessions`], telling `each` every check as it
    /// finishes (what `check-engine` shows on a terminal).
    ///
    /// # Errors
    ///
    /// The engine cannot be started.
    pub fn run_sessions_each(
        &self,
        sessions: &[(String, Session)],
        engine: &mut std::process::Command,
        mut each: impl FnMut(&Check),
    ) -> io::Result<Report> {
        let runner = self.runner();
        let mut checks = Vec::with_capacity(sessions.len());
        for (name, session) in sessions {
            let verdict = runner.run(session, engine)?;
            let check = session_check(name, &verdict);
            each(&check);
            checks.push(check);
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
        self.run_each(engine, |_| {})
    }

    /// [`CheckEngine::run`], telling `each` every check as it finishes
    /// (the line checks together, once their scenarios have run; then each
    /// conversation check): what `check-engine` shows on a terminal.
    ///
    /// # Errors
    ///
    /// The engine cannot be started, or its output cannot be read.
    pub fn run_each(
        &self,
        engine: &mut std::process::Command,
        mut each: impl FnMut(&Check),
    ) -> io::Result<Report> {
        let limit = self.max_line_len.unwrap_or(DEFAULT_MAX_LINE_LEN);
        let lines_wanted = LINE_CHECKS.iter().any(|n| self.wanted(n));
        let mut checks = if lines_wanted {
            line_checks::run(engine, self.max_line_len, limit, self.timeout)?
        } else {
            Vec::new()
        };
        checks.retain(|c| self.wanted(c.name()));
        checks.iter().for_each(&mut each);
        let runner = self.runner();
        for check in conversation_checks::checks() {
            if self.wanted(check.name) {
                let check = check.run(&runner, engine)?;
                each(&check);
                checks.push(check);
            }
        }
        Ok(Report { checks })
    }
}
