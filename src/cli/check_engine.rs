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
use serve_command::workbench::{self, Report};
use std::ffi::OsString;
use std::io::{self, BufWriter, Write};
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
///                           answered: an engine that dies, hangs or
///                           answers nothing on it fails
///   should line-at-limit    a line of exactly --max-line-len bytes (by
///                           default 64 MiB, the crate's limit) read
///   must   line-over-limit  only with --max-line-len: a line one byte
///                           longer answered by one `command_error`
///                           beginning `command stream: `, and no later
///                           line answered
///   must   jobs-snapshot    `jobs_snapshot` answered by a `jobs_snapshot`
///                           event with the same `request_id`
///
/// `jobs_snapshot` is the probe: every engine answers it at once, with the
/// `request_id` sent. Each scenario's answers are the `command_error`
/// events (compared in order with those owed) and the `jobs_snapshot`
/// events (each owed once, after the errors of the lines before it); other
/// events are the engine's business.
///
/// Prints one line per check, `PASS`, `FAIL` or `SKIP` (not judged), its
/// level and name; after each failure why, the lines sent, the lines
/// received and the tail of the engine's stderr (at most 20 lines each;
/// --report has every line sent and the first 1,000 received); after a
/// check not judged, why; then a count. --report FILE writes the same as
/// one JSON object:
///
///   {"engine":[ARGS...],"revision":"v2","timeout_secs":S,
///    "max_line_len":null|N,
///    "checks":[{"name":N,"level":"must"|"should","passed":B,"rule":R,
///               "failure":null|{"why":W,"scenario":N,"sent":[...],
///                 "received":[...],"received_lines":N,"stderr_tail":[...],
///                 "ended":E},
///               "not_judged":null|W}],
///    "passed":P,"failed":F,"must_failed":M,"not_judged":J,"conforms":B}
///
/// Exit status: 0 when no `must` check fails (a `should` may fail), 1
/// when one does, 2 on a usage error, a report that cannot be written
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
    let mut report_file = match &args.report {
        Some(path) => {
            let name = path.display().to_string();
            let file = std::fs::File::create(path).map_err(|e| io_error(&name, &e))?;
            Some((name, file))
        }
        None => None,
    };
    let shown = args.engine[0].to_string_lossy().into_owned();
    let mut engine = std::process::Command::new(&args.engine[0]);
    engine.args(&args.engine[1..]);
    let mut check = workbench::CheckEngine::new().timeout(args.timeout);
    if let Some(max) = args.max_line_len {
        check = check.max_line_len(max.0);
    }
    let report = check
        .run(&mut engine)
        .map_err(|e| io_error(format!("cannot run {shown}"), &e))?;
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
    let mut out = io::stdout().lock();
    match out
        .write_all(report.to_string().as_bytes())
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
            })
        })
        .collect();
    json!({
        "engine": args.engine.iter().map(|a| a.to_string_lossy()).collect::<Vec<_>>(),
        "revision": "v2",
        "timeout_secs": args.timeout.as_secs_f64(),
        "max_line_len": args.max_line_len.map(|max| max.0),
        "checks": checks,
        "passed": report.checks().iter().filter(|c| c.passed()).count(),
        "failed": report.failed(),
        "must_failed": report.must_failed(),
        "not_judged": report.not_judged(),
        "conforms": report.conforms(),
    })
}
