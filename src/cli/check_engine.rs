//! `check-engine`: the workbench's engine check
//! (`serve_command::workbench::CheckEngine`, where every check is
//! documented) on a program named on the command line, its summary on
//! stdout and its report as JSON.

use crate::conform::seconds;
use crate::output::{self, io_error, stdout_error, Failure};
use crate::revision::Revision;
use crate::size::{self, Size};
use clap::Args;
use serde_json::{json, Value};
use serve_command::workbench::{self, Report, Session};
use std::ffi::OsString;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Check an engine over its real stdio: what every engine must do
///
/// Runs ENGINE afresh for each scenario: writes the scenario's lines to its
/// stdin, closes it, and reads its stdout and stderr until it exits (at
/// most --timeout seconds; then it is killed and judged by what it wrote).
/// The checks are what any engine owes whatever its model does; what each
/// line is owed comes from the crate (its reader and serve policy), and the
/// lines from its built-in vectors:
///
///   must   stdout-events    every stdout line, in every scenario, an event
///                           (no banner, no log line)
///   must   no-stderr-answers  no answer owed (a `command_error`, a
///                           `jobs_snapshot`) missing from stdout and written
///                           on stderr instead (the first such stderr line
///                           quoted); a check below whose only fault is
///                           those answers is then not judged
///   must   protocol-errors  every line of the vectors that is JSON but not a
///                           command: one `command_error` each, with the
///                           exact message, in order, and the engine still
///                           reading (a `jobs_snapshot` sent after them is
///                           answered after their errors)
///   must   serve-refusals   the same for the commands the serve policy
///                           declines (a blank goal, ...)
///   must   not-json         a line that is not JSON: exactly one
///                           `command_error` beginning `command stream: `
///                           (the rest is the engine's JSON parser's), and
///                           no later line answered
///   should not-json-detail  that error word for word the reference's
///                           (`command stream: expected a string key at
///                           byte 1`); not judged when there is none
///   must   blank-lines      blank lines (spaces, tabs, CRs) skipped, unanswered
///   must   crlf             lines ending in CRLF read as lines
///   must   split-writes     lines arriving in many small writes
///   must   no-final-lf      a last line without LF still read
///   must   long-prompt      a 4 MiB prompt (a text part and a real PNG
///                           image) read, and a `jobs_snapshot` after it
///                           answered (then a `cancel`): an engine that
///                           dies, hangs or answers nothing on it fails
///   should line-at-limit    a line of exactly --max-line-len bytes (by
///                           default 64 MiB, the crate's limit) read
///   must   line-over-limit  only with --max-line-len: a line one byte
///                           longer answered by one `command_error`
///                           beginning `command stream: `, and no later
///                           line answered
///   must   jobs-snapshot    `jobs_snapshot` answered by a `jobs_snapshot`
///                           event with the same `request_id`
///
/// Then the conversation checks: each a session (a prompt, and commands
/// sent at points of its turn: its first event, its end, a question it
/// asks), every event attributed as it arrives by the crate's model of the
/// serve loop, which says what each answers and which turn it belongs to:
///
///   must   turn-ends        a prompt's turn ends with exactly one terminal
///                           event (agent_finished, turn_failed or
///                           agent_aborted), and no event of it follows
///   must   prompts-queue    prompts sent during a turn each get a turn of
///                           their own, one at a time, none lost
///   must   cancel           cancel during a turn ends it with agent_aborted,
///                           and the engine goes on answering: the turn runs
///                           uncancelled first, to learn its length, then is
///                           cancelled three times in its first third (at
///                           1/8, 1/6 and 1/4 of it); every one answered by
///                           agent_finished or turn_failed fails; a turn too
///                           short to cancel well before its end (under
///                           375 ms), or cancels that came after it ended:
///                           SKIP
///   must   cancel-question  cancel while the turn waits on its approval
///                           question ends it with agent_aborted
///   must   approval         a question is held until its approval command,
///                           and resolved after it
///   must   steer            a prompt steer during a turn is answered by its
///                           submission_id (steer_dropped: SKIP, the turn
///                           ended first)
///   must   command-steer    a command steer during a turn is answered
///   must   goal             every goal command is answered by goal_updated
///   must   compact          compact during a turn is answered after it
///   must   requests         jobs_snapshot and job_stop answered with the
///                           request_id sent, during a turn too
///   must   end-of-input     at the end of input, queued work runs before
///                           the engine exits
///   must   prediction       the engine's own prediction_result comes only
///                           after a turn that ended agent_finished with
///                           nothing left to run, at most once, never
///                           inside a turn; then, a cancel sent at a turn's
///                           end cancels it: one coming well after the
///                           cancel (over 250 ms) fails (waits at most 2 s
///                           after the turn for a prediction: none is SKIP;
///                           a question its turn asks is allowed)
///
/// A check the engine gave no occasion to judge (it never asks approval
/// questions; its turn ended before the steer landed) is SKIP, with why;
/// a SKIP fails nothing. --session FILE judges session files instead (the
/// format is in the guide, "The session format"): each fails on an event
/// that fits no rule or anything owed at the end.
///
/// `jobs_snapshot` is the probe: every engine answers it at once, with the
/// `request_id` sent. Each scenario's answers are the `command_error`
/// events (compared in order with those owed) and the `jobs_snapshot`
/// events (each owed once, after the errors of the lines before it); other
/// events are the engine's business.
///
/// On a terminal, each check is shown as it finishes (the line checks
/// together, once their scenarios ran), its verdict in colour unless
/// NO_COLOR is set; in a pipe or a file nothing is written until the end,
/// and never a colour.
///
/// Prints one line per check, `PASS`, `FAIL` or `SKIP` (not judged), its
/// level and name; under a session file, each point of it the engine never
/// reached (`missed: ...`, on a PASS too); after each failure why, the lines sent, the lines
/// received and the tail of the engine's stderr (at most 20 lines each;
/// --report has every line sent and the first 1,000 received); after a
/// check not judged, why; then a count. --report FILE writes the same as
/// one JSON object:
///
///   {"engine":[ARGS...],"revision":"v2","timeout_secs":S,"turn_timeout_secs":S,
///    "max_line_len":null|N,
///    "checks":[{"name":N,"level":"must"|"should","passed":B,"rule":R,
///               "failure":null|{"why":W,"scenario":N,"sent":[...],
///                 "received":[...],"received_lines":N,"stderr_tail":[...],
///                 "ended":E},
///               "not_judged":null|W,"missed":[...]}],
///    "passed":P,"failed":F,"must_failed":M,"not_judged":J,"conforms":B}
///
/// Exit status: 0 when no `must` check fails (a `should` may fail, a
/// check may be skipped), 1 when one does, 2 on a usage error, a session
/// file it cannot read (the file, the line and why), a report that cannot
/// be written or an engine that cannot be started.
#[derive(Args)]
#[command(
    verbatim_doc_comment,
    after_help = "Examples:
  serve-command check-engine -- serve-command mock-engine
  serve-command check-engine --report check.json -- python3 my_engine.py
  serve-command check-engine --timeout 30 -- openseek serve
  serve-command check-engine --check cancel --check steer -- ./my-engine
  serve-command check-engine --session repro.jsonl -- ./my-engine
  serve-command check-engine --junit check.xml -- serve-command mock-engine --delay 300
  jq '.checks[] | select(.passed | not)' check.json"
)]
pub struct CheckEngine {
    /// Write the results as JSON to FILE (created, or truncated).
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// The engine's own limit on a line's length (LF excluded), if it has
    /// one: line-at-limit sends a line that long and line-over-limit one
    /// byte longer. Bytes, or with KiB, MiB or GiB (`65536`, `8MiB`). One
    /// under 4MiB fails long-prompt, whose line every engine must read.
    /// Without it, line-at-limit sends 64 MiB and line-over-limit is not
    /// run (the reference engine has no limit).
    #[arg(long, value_name = "SIZE", value_parser = size::parse)]
    max_line_len: Option<Size>,
    /// Seconds ENGINE may take for one scenario before it is killed.
    #[arg(long, value_name = "SECS", default_value = "10", value_parser = seconds)]
    timeout: Duration,
    /// Seconds ENGINE may stay silent in a conversation check while it
    /// owes an answer and asks nothing (a tool running, a model thinking)
    /// before it is killed and judged by what it wrote.
    #[arg(long, value_name = "SECS", default_value = "10", value_parser = seconds)]
    turn_timeout: Duration,
    /// Run only this check (repeatable): a name as the summary lists it.
    #[arg(long = "check", value_name = "NAME", conflicts_with = "sessions")]
    only: Vec<String>,
    /// Judge these session files instead of the checks (a reproducer of
    /// fuzz-engine, a hand-written scenario; a folder: each *.jsonl in
    /// it, sorted), each against the model alone: it fails on an event
    /// that fits no rule of the conversation or on anything owed at the
    /// end.
    #[arg(long = "session", value_name = "FILE", num_args = 1..)]
    sessions: Vec<PathBuf>,
    /// Write the results as JUnit XML to FILE (one testcase per check), as
    /// CI systems show them.
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// The engine to check, and its arguments.
    #[arg(last = true, required = true, value_name = "ENGINE")]
    engine: Vec<OsString>,
}

pub fn run(args: CheckEngine, revision: Revision) -> output::Result<ExitCode> {
    if revision == Revision::V1 {
        return Err(Failure::Error(
            "check-engine needs --revision v2: the protocol's first revision is the command half only"
                .to_owned(),
        ));
    }
    let create = |path: &Option<PathBuf>| -> output::Result<Option<(String, std::fs::File)>> {
        match path {
            Some(path) => {
                let name = path.display().to_string();
                let file = std::fs::File::create(path).map_err(|e| io_error(&name, &e))?;
                Ok(Some((name, file)))
            }
            None => Ok(None),
        }
    };
    let sessions = read_sessions(&args.sessions)?;
    let mut report_file = create(&args.report)?;
    let mut junit_file = create(&args.junit)?;
    let shown = args.engine[0].to_string_lossy().into_owned();
    let mut engine = std::process::Command::new(&args.engine[0]);
    engine.args(&args.engine[1..]);
    let mut check = workbench::CheckEngine::new()
        .timeout(args.timeout)
        .turn_timeout(args.turn_timeout);
    if let Some(max) = args.max_line_len {
        check = check.max_line_len(max.0);
    }
    if !args.only.is_empty() {
        let names = check.names();
        if let Some(unknown) = args.only.iter().find(|n| !names.contains(&n.as_str())) {
            if unknown == "line-over-limit" {
                return Err(Failure::Error(
                    "--check line-over-limit: it runs only with --max-line-len (the engine's declared limit)"
                        .to_owned(),
                ));
            }
            return Err(Failure::Error(format!(
                "--check {unknown}: no such check (the checks: {})",
                names.join(", ")
            )));
        }
        check = check.only(args.only.iter().cloned());
    }
    // On a terminal each check is shown as it finishes (coloured unless
    // NO_COLOR); in a pipe, the summary comes whole at the end.
    let terminal = io::stdout().is_terminal();
    let mut stdout_gone = false;
    let each = |check: &workbench::Check| {
        if terminal && !stdout_gone {
            stdout_gone = write_check(check).is_err();
        }
    };
    let report = if sessions.is_empty() {
        check.run_each(&mut engine, each)
    } else {
        check.run_sessions_each(&sessions, &mut engine, each)
    }
    .map_err(|e| io_error(format!("cannot run {shown}"), &e))?;
    if let Some((name, file)) = &mut junit_file {
        let mut out = BufWriter::new(file);
        out.write_all(junit(&report).as_bytes())
            .and_then(|()| out.flush())
            .map_err(|e| io_error(&*name, &e))?;
    }
    if let Some((name, file)) = &mut report_file {
        let value = report_json(&args, &report);
        let mut out = BufWriter::new(file);
        serde_json::to_writer_pretty(&mut out, &value)
            .map_err(io::Error::from)
            .and_then(|()| out.write_all(b"\n"))
            .and_then(|()| out.flush())
            .map_err(|e| io_error(&*name, &e))?;
    }
    let code = if report.conforms() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    };
    let summary = if terminal {
        report.tally()
    } else {
        report.to_string()
    };
    let mut out = io::stdout().lock();
    match out
        .write_all(summary.as_bytes())
        .and_then(|()| out.flush())
        .map_err(stdout_error)
    {
        Ok(()) | Err(Failure::Closed) => Ok(code),
        Err(e) => Err(e),
    }
}

fn report_json(args: &CheckEngine, report: &Report) -> Value {
    let checks: Vec<Value> = report
        .checks()
        .iter()
        .map(|check| {
            let failure = check.failure().map(|failure| {
                json!({
                    "why": failure.why(),
                    "scenario": failure.scenario(),
                    "sent": failure.sent(),
                    "received": failure.received(),
                    "received_lines": failure.received_lines(),
                    "stderr_tail": failure.stderr_tail(),
                    "ended": failure.ended(),
                })
            });
            json!({
                "name": check.name(),
                "level": check.level().as_str(),
                "passed": check.passed(),
                "rule": check.rule(),
                "failure": failure,
                "not_judged": check.not_judged(),
                "missed": check.missed(),
            })
        })
        .collect();
    json!({
        "engine": args.engine.iter().map(|a| a.to_string_lossy()).collect::<Vec<_>>(),
        "revision": "v2",
        "timeout_secs": args.timeout.as_secs_f64(),
        "turn_timeout_secs": args.turn_timeout.as_secs_f64(),
        "max_line_len": args.max_line_len.map(|max| max.0),
        "checks": checks,
        "passed": report.checks().iter().filter(|c| c.passed()).count(),
        "failed": report.failed(),
        "must_failed": report.must_failed(),
        "not_judged": report.not_judged(),
        "conforms": report.conforms(),
    })
}

/// Writes `check` as the summary shows it, its verdict coloured (PASS
/// green, FAIL red, SKIP yellow) where anstream finds colour wanted: on a
/// terminal, with no NO_COLOR.
fn write_check(check: &workbench::Check) -> io::Result<()> {
    use anstyle::{AnsiColor, Style};
    let colour = match check.verdict() {
        "PASS" => AnsiColor::Green,
        "FAIL" => AnsiColor::Red,
        _ => AnsiColor::Yellow,
    };
    let style = Style::new().fg_color(Some(colour.into())).bold();
    let text = check.to_string();
    let rest = text.get(4..).unwrap_or_default();
    let mut out = anstream::stdout().lock();
    write!(out, "{style}{}{style:#}{rest}", check.verdict())?;
    out.flush()
}

/// The session files named: each file, and each `*.jsonl` of a folder,
/// sorted; read whole before any engine runs, so a bad line is a usage
/// error naming the file and line.
fn read_sessions(paths: &[PathBuf]) -> output::Result<Vec<(String, Session)>> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let name = path.display().to_string();
            let mut found: Vec<PathBuf> = std::fs::read_dir(path)
                .map_err(|e| io_error(&name, &e))?
                .filter_map(|entry| entry.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
                .collect();
            found.sort();
            if found.is_empty() {
                return Err(Failure::Error(format!(
                    "{name}: no *.jsonl session file in it"
                )));
            }
            files.extend(found);
        } else {
            files.push(path.clone());
        }
    }
    let mut sessions = Vec::with_capacity(files.len());
    for file in files {
        let name = file.display().to_string();
        let text = std::fs::read_to_string(&file).map_err(|e| io_error(&name, &e))?;
        let session = Session::parse(&text)
            .map_err(|e| Failure::Error(format!("{name}:{}: {}", e.line(), e.reason())))?;
        sessions.push((name, session));
    }
    Ok(sessions)
}

/// The report as JUnit XML: a testsuite of one testcase per check, a
/// failure with its why and details, a check not judged as skipped.
fn junit(report: &Report) -> String {
    let checks = report.checks();
    let mut out = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite name=\"check-engine\" tests=\"{}\" failures=\"{}\" skipped=\"{}\">\n",
        checks.len(),
        report.failed(),
        report.not_judged()
    );
    for check in checks {
        out += &format!(
            "    <testcase classname=\"check-engine.{}\" name=\"{}\">",
            check.level().as_str(),
            xml(check.name())
        );
        if let Some(failure) = check.failure() {
            out += &format!(
                "\n      <failure message=\"{}\">{}</failure>\n    ",
                xml(failure.why()),
                xml(&failure.to_string())
            );
        } else if let Some(why) = check.not_judged() {
            out += &format!("\n      <skipped message=\"{}\"/>\n    ", xml(why));
        }
        out += "</testcase>\n";
    }
    out += "  </testsuite>\n</testsuites>\n";
    out
}

/// Text for XML, in an attribute or an element: the five markup
/// characters escaped, and the controls XML 1.0 cannot hold as U+FFFD.
fn xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' | '\t' | '\r' => out.push(c),
            c if c.is_control() => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}
