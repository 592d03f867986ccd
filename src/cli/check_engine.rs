//! `check-engine`: what any engine must do on its real stdio, whatever its
//! model does, checked by running it afresh for each scenario.
//!
//! Nothing owed is written here: the lines sent come from the crate's
//! vectors (built in) and what each is owed comes from the crate's own
//! reader (`v2::CommandReader`: a refused line's `event_line()`, a
//! declined command's `serve_refusal_event_line()`, where reading stops),
//! exactly as `tap` judges a live session. What the engine wrote is read as
//! a controller reads it (`v2::EventReader`, `command_error_cause`).

use crate::conform::{
    self, ended, parse, run_program, seconds, split_lines, visible, Feed, Judge, Ran, SERVE_V2,
    VECTORS_V2,
};
use crate::output::{self, io_error, stdout_error, Failure};
use crate::revision::Revision;
use clap::Args;
use serde_json::{json, Value};
use serve_command::v2::{Command, CommandReader, Event, EventReader, DEFAULT_MAX_LINE_LEN};
use std::ffi::OsString;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::{ExitCode, Stdio};
use std::time::Duration;

/// Lines of each list the human summary shows (the report has them all).
const SHOWN_LINES: usize = 20;
/// Characters of one line the summary and the report show.
const SHOWN_CHARS: usize = 300;
/// The last lines of the engine's stderr a failure shows.
const STDERR_TAIL: usize = 20;

/// Check an engine over its real stdio: what every engine must do
///
/// Runs ENGINE afresh for each scenario: writes the scenario's lines to its
/// stdin, closes it, and reads its stdout and stderr until it exits (at
/// most --timeout seconds; then it is killed and judged by what it wrote).
/// The checks are what any engine owes whatever its model does; what each
/// line is owed comes from the crate (its reader and serve policy), and the
/// lines from its built-in vectors:
///
///   must   protocol-errors  every line of the vectors that is JSON but not a
///                           command: one `command_error` each, with the
///                           exact message, in order, and the engine still
///                           reading (a `jobs_snapshot` sent after them is
///                           answered after their errors)
///   must   serve-refusals   the same for the commands the serve policy
///                           declines (a blank goal, ...)
///   must   not-json         a line that is not JSON: a `command stream: ...`
///                           error, and no later line answered
///   must   blank-lines      blank lines (spaces, tabs, CRs) skipped, unanswered
///   must   crlf             lines ending in CRLF read as lines
///   must   split-writes     lines arriving in many small writes
///   must   no-final-lf      a last line without LF still read
///   should line-at-limit    a line of exactly 64 MiB (the crate's limit) read
///   must   jobs-snapshot    `jobs_snapshot` answered by a `jobs_snapshot`
///                           event with the same `request_id`
///   must   stdout-events    every stdout line, in every scenario, an event
///                           (no banner, no log line)
///   should no-stderr-answers  no owed `command_error` missing from stdout
///                           whose message is on stderr instead
///
/// `jobs_snapshot` is the probe: every engine answers it at once, with the
/// `request_id` sent. Each scenario's answers are the `command_error`
/// events (compared in order with those owed) and the `jobs_snapshot`
/// events (each owed once, after the errors of the lines before it); other
/// events are the engine's business.
///
/// Prints one line per check, `PASS` or `FAIL`, its level and name; after
/// each failure why, the lines sent, the lines received and the tail of
/// the engine's stderr (at most 20 lines each; --report has them all);
/// then a count. --report FILE writes the same as one JSON object:
///
///   {"engine":[ARGS...],"revision":"v2","timeout_secs":S,
///    "checks":[{"name":N,"level":"must"|"should","passed":B,"rule":R,
///               "failure":null|{"why":W,"scenario":N,"sent":[...],
///                 "received":[...],"stderr_tail":[...],"ended":E}}],
///    "passed":P,"failed":F,"must_failed":M,"conforms":B}
///
/// Exit status: 0 when every `must` check passes (a `should` may fail), 1
/// when one does not, 2 on a usage error, a report that cannot be written
/// or an engine that cannot be started.
#[derive(Args)]
#[command(
    verbatim_doc_comment,
    after_help = "Examples:
  serve-command check-engine -- serve-command mock-engine
  serve-command check-engine --report check.json -- python3 my_engine.py
  serve-command check-engine --timeout 30 -- openseek serve
  jq '.checks[] | select(.passed | not)' check.json"
)]
pub struct CheckEngine {
    /// Write the results as JSON to FILE (created, or truncated).
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// Seconds ENGINE may take for one scenario before it is killed.
    #[arg(long, value_name = "SECS", default_value = "10", value_parser = seconds)]
    timeout: Duration,
    /// The engine to check, and its arguments.
    #[arg(last = true, required = true, value_name = "ENGINE")]
    engine: Vec<OsString>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Must,
    Should,
}

impl Level {
    fn name(self) -> &'static str {
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

/// A scenario run: what was sent and what came back.
struct Run {
    scenario: Scenario,
    ran: Ran,
    /// The engine's stdout lines, without LF.
    lines: Vec<Vec<u8>>,
    /// What the crate's reader says the input is owed.
    owed: Vec<Answer>,
}

impl Run {
    fn input(&self) -> Vec<u8> {
        self.scenario.feed.pieces.concat()
    }

    fn ended(&self) -> String {
        match self.ran.status {
            Some(status) => ended(status),
            None if self.ran.overflowed => {
                format!("wrote more than {} MiB; killed", conform::MAX_OUTPUT >> 20)
            }
            None => "did not exit within the timeout; killed".to_owned(),
        }
    }
}

/// One check's outcome.
struct Outcome {
    name: &'static str,
    level: Level,
    rule: String,
    /// Why it failed, and in which run.
    failure: Option<(String, usize)>,
}

pub fn run(args: CheckEngine, revision: Revision) -> output::Result<ExitCode> {
    if revision == Revision::V1 {
        return Err(Failure::Error(
            "check-engine needs --revision v2: the protocol's first revision is the command half only"
                .to_owned(),
        ));
    }
    let mut report = match &args.report {
        Some(path) => {
            let name = path.display().to_string();
            let file = std::fs::File::create(path).map_err(|e| io_error(&name, &e))?;
            Some((name, file))
        }
        None => None,
    };
    let shown = args.engine[0].to_string_lossy().into_owned();
    let mut runs = Vec::new();
    for scenario in scenarios() {
        let feed = Feed {
            pieces: scenario.feed.pieces.clone(),
            pause: scenario.feed.pause,
        };
        let ran = run_program(&args.engine, feed, Stdio::piped(), args.timeout)
            .map_err(|e| io_error(format!("cannot run {shown}"), &e))?;
        let lines = split_lines(&ran.stdout);
        let owed = owed(&scenario.feed.pieces.concat());
        runs.push(Run {
            scenario,
            ran,
            lines,
            owed,
        });
    }
    let outcomes = judge(&runs);

    let mut text = String::new();
    for o in &outcomes {
        let verdict = if o.failure.is_some() { "FAIL" } else { "PASS" };
        text += &format!("{verdict} {:<6} {}\n", o.level.name(), o.name);
        if let Some((why, i)) = &o.failure {
            text += &details(why, &runs[*i]);
        }
    }
    let failed = outcomes.iter().filter(|o| o.failure.is_some()).count();
    let must_failed = outcomes
        .iter()
        .filter(|o| o.failure.is_some() && o.level == Level::Must)
        .count();
    text += &format!(
        "{}/{} checks pass; {}\n",
        outcomes.len() - failed,
        outcomes.len(),
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
    if let Some((name, file)) = &mut report {
        let value = report_json(&args, &outcomes, &runs, failed, must_failed);
        let mut out = BufWriter::new(file);
        serde_json::to_writer_pretty(&mut out, &value)
            .map_err(io::Error::from)
            .and_then(|()| out.write_all(b"\n"))
            .and_then(|()| out.flush())
            .map_err(|e| io_error(&*name, &e))?;
    }
    let code = if must_failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    };
    let mut out = io::stdout().lock();
    match out
        .write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(stdout_error)
    {
        Ok(()) | Err(Failure::Closed) => Ok(code),
        Err(e) => Err(e),
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
    parse(text, Judge::Commands { serve_policy: true })
        .expect("the built-in vectors are valid")
        .into_iter()
        .map(|v| v.line)
        .filter(|line| !line.contains(&b'\n'))
        .filter(|line| {
            CommandReader::with_max_line_len(&line[..], usize::MAX)
                .next()
                .is_some_and(|item| keep(&item))
        })
        .collect()
}

type Item = Result<Command, serve_command::v2::ReadError>;

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

fn scenarios() -> Vec<Scenario> {
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
    let close = line.pop().expect("a JSON object");
    line.resize(DEFAULT_MAX_LINE_LEN - 1, b' ');
    line.push(close);
    out.push(whole(
        "line-at-limit",
        Level::Should,
        format!(
            "a line of exactly {DEFAULT_MAX_LINE_LEN} bytes (64 MiB, the crate's limit; JSON padded with spaces) is read"
        ),
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
        Some(Err(serve_command::generic::ReadError::Line { error, .. })) => Err(error.to_string()),
        Some(Err(e)) => Err(e.to_string()),
        Some(Ok(event)) => Ok(match (event.command_error_cause(), event) {
            (Some(cause), _) => Some(Answer::Error(cause.to_string())),
            (None, Event::JobsSnapshot { request_id, .. }) => Some(Answer::Snapshot(request_id)),
            _ => None,
        }),
    }
}

fn judge(runs: &[Run]) -> Vec<Outcome> {
    let mut outcomes = Vec::new();
    for (i, run) in runs.iter().enumerate() {
        outcomes.push(Outcome {
            name: run.scenario.name,
            level: run.scenario.level,
            rule: run.scenario.rule.clone(),
            failure: answers_differ(run).map(|why| (why, i)),
        });
    }

    let mut stray = None;
    'runs: for (i, run) in runs.iter().enumerate() {
        for (n, line) in run.lines.iter().enumerate() {
            if let Err(why) = read_event(line) {
                stray = Some((
                    format!(
                        "in {}, stdout line {} is not an event ({why}): {}",
                        run.scenario.name,
                        n + 1,
                        shown(line)
                    ),
                    i,
                ));
                break 'runs;
            }
        }
    }
    outcomes.push(Outcome {
        name: "stdout-events",
        level: Level::Must,
        rule: "every line the engine writes on stdout, in every scenario, is an event (no banner, no log line)".to_owned(),
        failure: stray,
    });

    let mut on_stderr = None;
    'runs: for (i, run) in runs.iter().enumerate() {
        let got: Vec<Answer> = run
            .lines
            .iter()
            .filter_map(|l| read_event(l).ok().flatten())
            .collect();
        let stderr = String::from_utf8_lossy(&run.ran.stderr);
        for answer in &run.owed {
            if let Answer::Error(message) = &answer {
                if !got.contains(answer) && stderr.contains(message.as_str()) {
                    on_stderr = Some((
                        format!(
                            "in {}, the owed {} is missing from stdout, and its message is on stderr",
                            run.scenario.name,
                            answer.shown()
                        ),
                        i,
                    ));
                    break 'runs;
                }
            }
        }
    }
    outcomes.push(Outcome {
        name: "no-stderr-answers",
        level: Level::Should,
        rule: "no command_error owed is written on stderr instead of stdout".to_owned(),
        failure: on_stderr,
    });
    outcomes
}

/// Why the answers of `run` are not those owed, if they are not: the
/// `command_error` messages must be those owed, in order; each
/// `jobs_snapshot` owed must come once, after the errors owed for the
/// lines before it; none other may come.
fn answers_differ(run: &Run) -> Option<String> {
    let owed = &run.owed;
    let got: Vec<Answer> = run
        .lines
        .iter()
        .filter_map(|l| read_event(l).ok().flatten())
        .collect();
    let killed = run
        .ran
        .status
        .is_none()
        .then(|| format!(" ({})", run.ended()));
    let why = |what: String| Some(format!("{what}{}", killed.clone().unwrap_or_default()));
    let errors = |answers: &[Answer]| -> Vec<String> {
        answers
            .iter()
            .filter_map(|a| match a {
                Answer::Error(m) => Some(m.clone()),
                Answer::Snapshot(_) => None,
            })
            .collect()
    };
    let (owed_errors, got_errors) = (errors(owed), errors(&got));
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
    run.ran.status.is_none().then(|| run.ended())
}

/// A failure's details in the human summary.
fn details(why: &str, run: &Run) -> String {
    let mut out = format!("  why: {why}\n");
    let sent = split_lines(&run.input());
    out += &listed("sent", &sent, SHOWN_LINES, false);
    out += &listed("received", &run.lines, SHOWN_LINES, false);
    out += &listed(
        "stderr tail",
        &stderr_tail(&run.ran.stderr),
        STDERR_TAIL,
        true,
    );
    out += &format!("  engine: {}\n", run.ended());
    out
}

/// `what (N lines):` and the lines, at most `max` of them (the first, or
/// the last when `tail`).
fn listed(what: &str, lines: &[Vec<u8>], max: usize, tail: bool) -> String {
    let plural = if lines.len() == 1 { "" } else { "s" };
    let mut out = format!("  {what} ({} line{plural}):\n", lines.len());
    let more = lines.len().saturating_sub(max);
    let some = if tail {
        &lines[more..]
    } else {
        &lines[..lines.len() - more]
    };
    if tail && more > 0 {
        out += &format!("    ... {more} more before\n");
    }
    for line in some {
        out += &format!("    {}\n", shown(line));
    }
    if !tail && more > 0 {
        out += &format!("    ... {more} more (all in --report)\n");
    }
    out
}

/// The last [`STDERR_TAIL`] lines of `stderr`.
fn stderr_tail(stderr: &[u8]) -> Vec<Vec<u8>> {
    let lines = split_lines(stderr);
    lines[lines.len().saturating_sub(STDERR_TAIL)..].to_vec()
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

fn report_json(
    args: &CheckEngine,
    outcomes: &[Outcome],
    runs: &[Run],
    failed: usize,
    must_failed: usize,
) -> Value {
    let strings = |lines: &[Vec<u8>]| -> Vec<String> { lines.iter().map(|l| shown(l)).collect() };
    let checks: Vec<Value> = outcomes
        .iter()
        .map(|o| {
            let failure = o.failure.as_ref().map(|(why, i)| {
                let run = &runs[*i];
                json!({
                    "why": why,
                    "scenario": run.scenario.name,
                    "sent": strings(&split_lines(&run.input())),
                    "received": strings(&run.lines),
                    "stderr_tail": strings(&stderr_tail(&run.ran.stderr)),
                    "ended": run.ended(),
                })
            });
            json!({
                "name": o.name,
                "level": o.level.name(),
                "passed": o.failure.is_none(),
                "rule": o.rule,
                "failure": failure,
            })
        })
        .collect();
    json!({
        "engine": args.engine.iter().map(|a| a.to_string_lossy()).collect::<Vec<_>>(),
        "revision": "v2",
        "timeout_secs": args.timeout.as_secs_f64(),
        "checks": checks,
        "passed": outcomes.len() - failed,
        "failed": failed,
        "must_failed": must_failed,
        "conforms": must_failed == 0,
    })
}
