//! The engine check: `serve-command check-engine` in process.
//!
//! Nothing owed is written here: the lines sent come from the crate's
//! vectors (built in) and what each is owed comes from the crate's own
//! reader (`v2::CommandReader`: a refused line's `event_line()`, a
//! declined command's `serve_refusal_event_line()`, where reading stops),
//! exactly as the tap's [`Monitor`](super::Monitor) judges a live session.
//! What the engine wrote is read as a controller reads it
//! (`v2::EventReader`, `command_error_cause`).

use super::run::{ended, lines, run_program, visible, Feed, Ran, MAX_OUTPUT};
use crate::v2::{self, Command, CommandReader, Event, EventReader, DEFAULT_MAX_LINE_LEN};
use serde_json::Value;
use std::fmt;
use std::io;
use std::process::Stdio;
use std::time::Duration;

/// The crate's vectors, whose lines the checks send; `tests/` ships in the
/// package.
const VECTORS_V2: &str = include_str!("../../tests/vectors/commands-v2.jsonl");
const SERVE_V2: &str = include_str!("../../tests/vectors/serve-v2.jsonl");

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
/// | must | `protocol-errors` | every line of the crate's vectors that is JSON but not a command: one `command_error` each, with the exact message, in order, and the engine still reading (a `jobs_snapshot` sent after them is answered after their errors) |
/// | must | `serve-refusals` | the same for the commands the serve policy declines (a blank goal, ...) |
/// | must | `not-json` | a line that is not JSON: a `command stream: ...` error, and no later line answered |
/// | must | `blank-lines` | blank lines (spaces, tabs, CRs) skipped, unanswered |
/// | must | `crlf` | lines ending in CRLF read as lines |
/// | must | `split-writes` | lines arriving in many small writes |
/// | must | `no-final-lf` | a last line without LF still read |
/// | should | `line-at-limit` | a line as long as the engine's limit ([`CheckEngine::max_line_len`], by default 64 MiB, the crate's) read |
/// | must | `jobs-snapshot` | `jobs_snapshot` answered by a `jobs_snapshot` event with the same `request_id` |
/// | must | `stdout-events` | every stdout line, in every scenario, an event (no banner, no log line) |
/// | should | `no-stderr-answers` | no owed `command_error` missing from stdout whose message is on stderr instead |
///
/// `jobs_snapshot` is the probe: every engine answers it at once, with the
/// `request_id` sent. Each scenario's answers are the `command_error`
/// events (compared in order with those owed) and the `jobs_snapshot`
/// events (each owed once, after the errors of the lines before it); other
/// events are the engine's business.
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
    max_line_len: usize,
}

impl Default for CheckEngine {
    fn default() -> Self {
        CheckEngine::new()
    }
}

impl CheckEngine {
    /// Every check, 10 seconds per scenario.
    #[must_use]
    pub fn new() -> CheckEngine {
        CheckEngine {
            timeout: Duration::from_secs(10),
            max_line_len: DEFAULT_MAX_LINE_LEN,
        }
    }

    /// The engine's own limit on a line's length, in bytes without the LF:
    /// `line-at-limit` sends a line of exactly that many (the default is
    /// the crate's, [`DEFAULT_MAX_LINE_LEN`]; a limit shorter than the
    /// probe line itself is taken as the probe's length).
    #[must_use]
    pub fn max_line_len(mut self, max: usize) -> CheckEngine {
        self.max_line_len = max;
        self
    }

    /// How long the engine may take for one scenario before it is killed
    /// and judged by what it wrote until then.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> CheckEngine {
        self.timeout = timeout;
        self
    }

    /// Runs every check on `engine` (its program, arguments, environment
    /// and directory; its stdio is replaced by pipes), once per scenario.
    ///
    /// # Errors
    ///
    /// The engine cannot be started, or its output cannot be read.
    pub fn run(&self, engine: &mut std::process::Command) -> io::Result<Report> {
        let mut runs = Vec::new();
        for scenario in scenarios(self.max_line_len) {
            let feed = Feed {
                pieces: scenario.feed.pieces.clone(),
                pause: scenario.feed.pause,
            };
            let ran = run_program(engine, feed, Stdio::piped(), self.timeout)?;
            // Judged at once, so that only what the report shows is kept
            // of each run's output.
            runs.push(Run::judged(scenario, &ran));
        }
        Ok(Report {
            checks: judge(&runs),
        })
    }
}

/// What [`CheckEngine::run`] found: every check, passed or not.
/// `Display` is `check-engine`'s summary: one line per check, `PASS` or
/// `FAIL`, its level and name; after each failure why, the lines sent,
/// the lines received and the tail of the engine's stderr (at most 20
/// lines each); then a count.
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

    /// Whether every `must` check passed (a `should` may fail).
    #[must_use]
    pub fn conforms(&self) -> bool {
        self.must_failed() == 0
    }

    /// How many checks failed.
    #[must_use]
    pub fn failed(&self) -> usize {
        self.checks.iter().filter(|c| !c.passed()).count()
    }

    /// How many `must` checks failed.
    #[must_use]
    pub fn must_failed(&self) -> usize {
        self.checks
            .iter()
            .filter(|c| !c.passed() && c.level == Level::Must)
            .count()
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for check in &self.checks {
            let verdict = if check.passed() { "PASS" } else { "FAIL" };
            writeln!(f, "{verdict} {:<6} {}", check.level.as_str(), check.name)?;
            if let Some(failure) = &check.failure {
                f.write_str(&details(failure))?;
            }
        }
        let (failed, must_failed) = (self.failed(), self.must_failed());
        writeln!(
            f,
            "{}/{} checks pass; {}",
            self.checks.len() - failed,
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
        )
    }
}

/// One check's outcome.
#[derive(Clone, Debug)]
pub struct Check {
    name: &'static str,
    level: Level,
    rule: String,
    failure: Option<Failure>,
}

impl Check {
    fn new(
        name: &'static str,
        level: Level,
        rule: String,
        failure: Option<(String, &Run)>,
    ) -> Check {
        let failure = failure.map(|(why, run)| Failure {
            why,
            scenario: run.scenario.name,
            sent: run.sent.clone(),
            received: run.received.clone(),
            received_lines: run.received_lines,
            stderr_tail: run.stderr_tail.clone(),
            ended: run.ended.clone(),
        });
        Check {
            name,
            level,
            rule,
            failure,
        }
    }

    /// Its name: `protocol-errors`, `not-json`, ... (the table on
    /// [`CheckEngine`]).
    #[must_use]
    pub fn name(&self) -> &str {
        self.name
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

    /// Whether the engine passed it.
    #[must_use]
    pub fn passed(&self) -> bool {
        self.failure.is_none()
    }

    /// How the engine failed it, if it did.
    #[must_use]
    pub fn failure(&self) -> Option<&Failure> {
        self.failure.as_ref()
    }
}

/// How an engine failed a [`Check`], in the scenario that showed it. Lines
/// are shown as a person reads them: without their LF, control characters
/// made visible, at most 300 characters of each.
#[derive(Clone, Debug)]
pub struct Failure {
    why: String,
    scenario: &'static str,
    sent: Vec<String>,
    received: Vec<String>,
    received_lines: usize,
    stderr_tail: Vec<String>,
    ended: String,
}

impl Failure {
    /// Why it failed: `command_error 2 says "..."; owed "..."`.
    #[must_use]
    pub fn why(&self) -> &str {
        &self.why
    }

    /// The scenario (a check's name) whose run showed it.
    #[must_use]
    pub fn scenario(&self) -> &str {
        self.scenario
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

/// One run of the engine: the lines fed, in what pieces.
struct Scenario {
    name: &'static str,
    level: Level,
    rule: String,
    feed: Feed,
}

/// What the engine owes, or gave, that the checks look at.
#[derive(Clone, PartialEq, Eq, Debug)]
enum Answer {
    /// A `command_error` with this message.
    Error(String),
    /// A `jobs_snapshot` with this `request_id`.
    Snapshot(String),
}

impl Answer {
    fn shown(&self) -> String {
        match self {
            Answer::Error(m) => format!("command_error {}", quoted(m)),
            Answer::Snapshot(id) => format!("jobs_snapshot {}", quoted(id)),
        }
    }
}

/// A scenario run, judged: what each check needs of it, and what a
/// failure shows. The engine's output itself is not kept.
struct Run {
    scenario: Scenario,
    /// Why the answers are not those owed ([`answers_differ`]).
    differs: Option<String>,
    /// The first stdout line that is not an event, and why.
    stray: Option<String>,
    /// The first owed `command_error` missing from stdout and on stderr.
    on_stderr: Option<String>,
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
    /// read once, as it is reached.
    fn judged(scenario: Scenario, ran: &Ran) -> Run {
        let name = scenario.name;
        let input = scenario.feed.pieces.concat();
        let owed = owed(&input);
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
        let stderr = String::from_utf8_lossy(&ran.stderr);
        let on_stderr = owed.iter().find_map(|answer| match answer {
            Answer::Error(message)
                if !got.contains(answer) && stderr.contains(message.as_str()) =>
            {
                Some(format!(
                    "in {name}, the owed {} is missing from stdout, and its message is on stderr",
                    answer.shown()
                ))
            }
            _ => None,
        });
        Run {
            differs: answers_differ(&owed, &got, killed),
            stray,
            on_stderr,
            sent: lines(&input).map(shown).collect(),
            received,
            received_lines,
            stderr_tail: stderr_tail(&ran.stderr),
            ended,
            scenario,
        }
    }
}

/// A `jobs_snapshot` line with `id`, LF excluded: the probe.
fn snapshot(id: &str) -> Vec<u8> {
    let mut line = Vec::new();
    Command::jobs_snapshot(id)
        .write_line(&mut line)
        .expect("writing to a Vec");
    line.pop();
    line
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

fn scenarios(max_line_len: usize) -> Vec<Scenario> {
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
        "a line that is not JSON is answered by a command_error `command stream: ...`, and no line after it is answered".to_owned(),
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
    });

    let mut input = joined(&[error], b"\n");
    input.extend(snapshot("check-engine-no-lf"));
    out.push(whole(
        "no-final-lf",
        Level::Must,
        "a last line without LF is read at the end of input".to_owned(),
        input,
    ));

    let mut line = snapshot("check-engine-at-limit");
    let len = max_line_len.max(line.len());
    let close = line.pop().expect("a JSON object");
    line.resize(len - 1, b' ');
    line.push(close);
    out.push(whole(
        "line-at-limit",
        Level::Should,
        if len == DEFAULT_MAX_LINE_LEN {
            format!(
                "a line of exactly {len} bytes (64 MiB, the crate's limit; JSON padded with spaces) is read"
            )
        } else {
            format!(
                "a line of exactly {len} bytes (the engine's limit, as given; JSON padded with spaces) is read"
            )
        },
        joined(&[line], b"\n"),
    ));

    out.push(whole(
        "jobs-snapshot",
        Level::Must,
        "jobs_snapshot is answered by a jobs_snapshot event with the same request_id".to_owned(),
        joined(&[snapshot("check-engine-snapshot")], b"\n"),
    ));
    out
}

/// What the crate's reader says `input` is owed, in order: up to and
/// including the line that stops reading.
fn owed(input: &[u8]) -> Vec<Answer> {
    let mut answers = Vec::new();
    for item in CommandReader::new(input) {
        match item {
            Ok(Command::JobsSnapshot { request_id, .. }) => {
                answers.push(Answer::Snapshot(request_id))
            }
            Ok(command) => {
                if let Some(line) = command.serve_refusal_event_line() {
                    answers.push(Answer::Error(message_of(&line)));
                }
            }
            Err(e) => {
                answers.push(Answer::Error(message_of(&e.event_line())));
                if e.is_stream_error() {
                    break;
                }
            }
        }
    }
    answers
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
    let mut outcomes = Vec::new();
    for run in runs {
        outcomes.push(Check::new(
            run.scenario.name,
            run.scenario.level,
            run.scenario.rule.clone(),
            run.differs.clone().map(|why| (why, run)),
        ));
    }
    // The first run, in order, that shows it.
    let first = |of: fn(&Run) -> &Option<String>| {
        runs.iter()
            .find_map(|run| of(run).clone().map(|why| (why, run)))
    };
    outcomes.push(Check::new(
        "stdout-events",
        Level::Must,
        "every line the engine writes on stdout, in every scenario, is an event (no banner, no log line)".to_owned(),
        first(|run| &run.stray),
    ));
    outcomes.push(Check::new(
        "no-stderr-answers",
        Level::Should,
        "no command_error owed is written on stderr instead of stdout".to_owned(),
        first(|run| &run.on_stderr),
    ));
    outcomes
}

/// Why the answers `got` are not those `owed`, if they are not: the
/// `command_error` messages must be those owed, in order; each
/// `jobs_snapshot` owed must come once, after the errors owed for the
/// lines before it; none other may come. An engine that was `killed`
/// (how, said) fails for that if for nothing else.
fn answers_differ(owed: &[Answer], got: &[Answer], killed: Option<&str>) -> Option<String> {
    let why = |what: String| {
        Some(match killed {
            Some(how) => format!("{what} ({how})"),
            None => what,
        })
    };
    let errors = |answers: &[Answer]| -> Vec<String> {
        answers
            .iter()
            .filter_map(|a| match a {
                Answer::Error(m) => Some(m.clone()),
                Answer::Snapshot(_) => None,
            })
            .collect()
    };
    let (owed_errors, got_errors) = (errors(owed), errors(got));
    for (k, want) in owed_errors.iter().enumerate() {
        match got_errors.get(k) {
            None => {
                return why(format!(
                    "command_error {} of {} owed never came: {}",
                    k + 1,
                    owed_errors.len(),
                    quoted(want)
                ))
            }
            Some(m) if m != want => {
                return why(format!(
                    "command_error {} says {}; owed {}",
                    k + 1,
                    quoted(m),
                    quoted(want)
                ))
            }
            Some(_) => {}
        }
    }
    if let Some(extra) = got_errors.get(owed_errors.len()) {
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
            Answer::Error(_) => errors_before += 1,
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
                        let before = got[..i]
                            .iter()
                            .filter(|a| matches!(a, Answer::Error(_)))
                            .count();
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
    if let Some(extra) = got.iter().find(|a| !owed.contains(a)) {
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
fn shown(line: &[u8]) -> String {
    let text = visible(&line[..line.len().min(4 * SHOWN_CHARS)]);
    match text.char_indices().nth(SHOWN_CHARS) {
        Some((i, _)) => format!("{}... ({} bytes)", &text[..i], line.len()),
        None if line.len() > 4 * SHOWN_CHARS => format!("{text}... ({} bytes)", line.len()),
        None => text,
    }
}

fn quoted(s: &str) -> String {
    serde_json::to_string(s).expect("a string serializes")
}

#[cfg(test)]
mod tests {
    use super::{answers_differ, listed, shown, stderr_tail, Answer};

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
}
