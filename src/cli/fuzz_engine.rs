//! `fuzz-engine`: the workbench's fuzzer (`serve_command::workbench::
//! Fuzzer`) against a program named on the command line, its finding
//! shrunk and written as a session file that `check-engine --session`
//! reruns.

use crate::conform::seconds;
use crate::output::{self, io_error, stdout_error, Failure};
use crate::revision::Revision;
use clap::Args;
use serve_command::workbench::{Budget, Fuzzer, Progress, Runner};
use std::ffi::OsString;
use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Fuzz an engine: generated sessions, judged by the conversation's model
///
/// Generates sessions (every command kind: prompts, steers, cancel, goals,
/// compact, approvals answering the engine's questions, the job commands,
/// lines the engine must refuse; each sent at a point
/// of the conversation: at once, once a turn started or wrote its k-th
/// agent_step, once an earlier command was answered or its turn ended,
/// after a pause), runs each against a fresh ENGINE over its stdio, and
/// judges every event with the crate's model of the serve loop. The first
/// session that breaks a promise (an event that fits no rule, an answer
/// still owed at the end, an engine that does not exit at the end of its
/// input) is shrunk, within --shrink-runs runs, to the smallest session
/// that breaks it the same way; that session is rerun to confirm, written
/// to --repro, and printed with its verdict and the command that reruns
/// it.
///
/// The model cannot tell a cancel that crossed a turn's end on the pipes
/// from one the engine answered with `agent_finished`: the campaign learns
/// how long the engine's turns run uncancelled (the median of those it
/// saw) and finds an engine whose turns end `agent_finished` or
/// `turn_failed` after 3 cancels sent in the first third of that length,
/// none `agent_aborted` (`check-engine --check cancel` judges it).
///
/// --time bounds the whole run: sessions are generated for the first
/// three quarters of it, and a finding is shrunk and rerun in what is left
/// (at most --shrink-runs runs); no session runs past the end.
///
/// The campaign is reproducible from its --seed (chosen and printed when
/// not given) as far as the engine's own timing allows. On a terminal,
/// stderr shows progress: sessions run, per second, and how many rows of
/// the model's table (what answered each command kind, how turns ended)
/// the campaign has seen.
///
/// Exit status: 0 when nothing was found, 1 on a finding, 2 on a usage
/// error, an engine that cannot be started or a reproducer that cannot be
/// written.
#[derive(Args)]
#[command(
    verbatim_doc_comment,
    after_help = "Examples:
  serve-command fuzz-engine --time 60 -- ./my-engine
  serve-command fuzz-engine --seed 7 --sessions 500 --repro repro.jsonl -- python3 engine.py
  serve-command check-engine --session repro.jsonl -- ./my-engine"
)]
pub struct FuzzEngine {
    /// The seed of the generator (a whole number); chosen when not given.
    #[arg(long)]
    seed: Option<u64>,
    /// Run for this many seconds in all, shrinking included: sessions for
    /// the first three quarters, a finding shrunk in the rest (the
    /// default: 60 unless --sessions).
    #[arg(long, value_name = "SECS", value_parser = seconds, conflicts_with = "sessions")]
    time: Option<Duration>,
    /// Run this many sessions (a count: load cannot change what is run).
    #[arg(long, value_name = "N")]
    sessions: Option<u64>,
    /// Write the shrunk session here (default: fuzz-repro.jsonl).
    #[arg(long, value_name = "FILE", default_value = "fuzz-repro.jsonl")]
    repro: PathBuf,
    /// The most command lines in a generated session.
    #[arg(long, value_name = "N", default_value = "6")]
    max_commands: usize,
    /// The most runs spent shrinking a finding.
    #[arg(long, value_name = "N", default_value = "300")]
    shrink_runs: u32,
    /// Seconds ENGINE may stay silent while it owes an answer.
    #[arg(long, value_name = "SECS", default_value = "2", value_parser = seconds)]
    turn_timeout: Duration,
    /// Seconds one session may take in all.
    #[arg(long, value_name = "SECS", default_value = "30", value_parser = seconds)]
    timeout: Duration,
    /// The engine to fuzz, and its arguments.
    #[arg(last = true, required = true, value_name = "ENGINE")]
    engine: Vec<OsString>,
}

pub fn run(args: FuzzEngine, revision: Revision) -> output::Result<ExitCode> {
    if revision == Revision::V1 {
        return Err(Failure::Error(
            "fuzz-engine needs --revision v2: the protocol's first revision has no events"
                .to_owned(),
        ));
    }
    let seed = args.seed.unwrap_or_else(|| {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
    });
    let budget = match (args.sessions, args.time) {
        (Some(n), _) => Budget::Sessions(n),
        (None, Some(d)) => Budget::Time(d),
        (None, None) => Budget::Time(Duration::from_secs(60)),
    };
    let shown = args.engine[0].to_string_lossy().into_owned();
    let mut engine = std::process::Command::new(&args.engine[0]);
    engine.args(&args.engine[1..]);
    let runner = Runner::new()
        .turn_timeout(args.turn_timeout)
        .timeout(args.timeout);
    let terminal = io::stderr().is_terminal();
    output::to_stderr(&format!("fuzz-engine: seed {seed}\n"))?;
    // Under --time no session runs past the budget's end.
    let deadline = match budget {
        Budget::Time(d) => Some(Instant::now() + d),
        _ => None,
    };
    let campaign = Fuzzer::new(seed)
        .max_commands(args.max_commands)
        .shrink_runs(args.shrink_runs)
        .run(
            budget,
            |session| match deadline {
                Some(end) => {
                    let left = end.saturating_duration_since(Instant::now());
                    runner
                        .clone()
                        .timeout(args.timeout.min(left.max(Duration::from_millis(100))))
                        .run(session, &mut engine)
                }
                None => runner.run(session, &mut engine),
            },
            |progress| {
                if terminal && (progress.sessions % 10 == 0 || progress.sessions == 1) {
                    let _ = io::stderr().write_all(progress_line(progress).as_bytes());
                }
            },
        )
        .map_err(|e| io_error(format!("cannot run {shown}"), &e))?;
    if terminal {
        output::to_stderr("\n")?;
    }
    let progress = &campaign.progress;
    let summary = format!(
        "{} sessions in {:.1} s ({:.1}/s), {} rows of the model's table seen: {}",
        progress.sessions,
        progress.elapsed.as_secs_f64(),
        rate(progress),
        progress.rows.len(),
        progress.rows.iter().cloned().collect::<Vec<_>>().join(", ")
    );
    let mut out = String::new();
    let code = match &campaign.finding {
        None => {
            out += &format!("no finding: {summary}\n");
            ExitCode::SUCCESS
        }
        Some(finding) => {
            let name = args.repro.display().to_string();
            std::fs::write(&args.repro, finding.session.to_jsonl())
                .map_err(|e| io_error(&name, &e))?;
            out += &format!("FOUND: {}\n", finding.why);
            out += &format!(
                "{}{}\n",
                if finding.check.is_some() {
                    "judged over the campaign's cancels, not shrunk: the last session that showed one".to_owned()
                } else {
                    format!(
                        "shrunk from {} to {} command lines in {} runs",
                        finding.found.commands(),
                        finding.session.commands(),
                        finding.shrink_runs
                    )
                },
                if finding.confirmed {
                    "; a rerun fails the same way"
                } else if !finding.rerun {
                    "; not rerun: the time ran out"
                } else {
                    "; a rerun did NOT fail the same way (the engine's timing decides it)"
                }
            );
            out += &format!("the session, written to {name}:\n");
            for line in finding.session.to_jsonl().lines() {
                out += &format!("  {line}\n");
            }
            out += &format!("its verdict:\n{}", indent(&finding.verdict.to_string()));
            let engine = args
                .engine
                .iter()
                .map(|a| shell_word(&a.to_string_lossy()))
                .collect::<Vec<_>>()
                .join(" ");
            out += &match finding.check {
                // The model alone passes the session: the check judges it.
                Some(check) => format!(
                    "judge it: serve-command check-engine --check {check} -- {engine}\n"
                ),
                None => format!(
                    "rerun it: serve-command check-engine --turn-timeout {} --timeout {} --session {name} -- {engine}\n",
                    args.turn_timeout.as_secs_f64(),
                    args.timeout.as_secs_f64(),
                ),
            };
            out += &format!("seed {seed}: {summary}\n");
            ExitCode::from(1)
        }
    };
    let mut stdout = io::stdout().lock();
    match stdout
        .write_all(out.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(stdout_error)
    {
        Ok(()) | Err(Failure::Closed) => Ok(code),
        Err(e) => Err(e),
    }
}

fn rate(progress: &Progress) -> f64 {
    let secs = progress.elapsed.as_secs_f64();
    if secs > 0.0 {
        progress.sessions as f64 / secs
    } else {
        0.0
    }
}

fn progress_line(progress: &Progress) -> String {
    format!(
        "\r{} sessions, {:.1}/s, {} rows of the model's table seen",
        progress.sessions,
        rate(progress),
        progress.rows.len()
    )
}

/// An argument as a POSIX shell reads it back: as it is when it holds
/// nothing the shell would take apart, else in single quotes.
fn shell_word(arg: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-./=:,+@%".contains(c);
    if !arg.is_empty() && arg.chars().all(plain) {
        arg.to_owned()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {l}\n")).collect()
}
