//! `replay`: a recorded session run again against an engine, the two
//! conversations compared by the model.

use crate::output::{self, io_error, stdout_error, Failure};
use crate::revision::Revision;
use clap::{Args, ValueEnum};
use serde_json::json;
use serve_command::v2::serve::Recorder;
use serve_command::v2::Event;
use serve_command::workbench::{
    Compare, Comparison, End, Part, Place, Runner, SessionVerdict, Transcript,
};
use std::ffi::OsString;
use std::fs::File;
use std::io::{self, BufReader, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// Run a recorded session again against an engine, and compare the two conversations
///
/// Reads LOG, a recording (`serve-command tap --log`, or a controller's
/// `serve_command::v2::serve::Recorder`), as `trace` reads it, and sends
/// its command lines to a fresh ENGINE, each at the point of the
/// conversation where the recording sent it, never on a count of deltas or
/// on milliseconds, so an engine at another pace, or with other model
/// text, gets each line at the same point: a line sent while a turn ran,
/// once that turn wrote as many events that are not deltas as it had then
/// (its steps, messages, usage, the answers it carries), and when deltas
/// had begun to stream since, once one has; a line sent after a turn's
/// end, after that end (after the engine's prediction_result when it came
/// before the line, waiting up to 2 s for it); otherwise after the answer
/// of the command it came after. An approval answers the question asked at
/// the same place, by the id the new engine gives it. Once every line is
/// sent and nothing is owed, ENGINE's stdin is closed.
///
/// Then the two conversations, each attributed by the model of the serve
/// loop (`trace`'s), are compared: per command line, what answered it; per
/// turn, the sequence of its events; the events that answered nothing;
/// what was owed at the end. The order in which a turn and a reply
/// interleave is a matter of pace and never a difference. Model text
/// (deltas, messages, reasoning, answers, errors), usage counts, the ids
/// the engine makes up (approvals, jobs, tool calls, sessions), sequences
/// and times are normalised, and a run of deltas counts as one, unless
/// --exact compares each event's line byte for byte.
///
/// Output: when they agree, one line; otherwise each difference under its
/// command, `-` the recording and `+` this run:
///
///   command 4 (steer): - steer_applied kind prompt (turn of command 1)  + steer_dropped
///   command 5 (prompt), its turn:
///     - agent_finished
///     + turn_failed
///
/// then a summary line, and notes. What is only a crossing on the pipes, in
/// either run, is not counted, and is shown as a note `crossed: not
/// compared`: a line whose turn's events came in one burst within 100 ms
/// after it (before anything answered it), so that the engine may have
/// written them before it read the line (a cancel the turn's end beat; a
/// steer or goal that missed its step; text streamed before a cancel took
/// hold), at a pace at which that can be (the turn's events before it no
/// more than 200 ms apart); then its turn is compared up to that line, and
/// what answered the lines sent during it is not compared; and a
/// prediction_result one run has and the other lacks, where the other's
/// next line (or the end of its input) came first. Notes also say what the
/// recording held that fits no rule (replayed as it was), a point of the recording the new run never
/// reached (the line sent then), and how the engine ended when it did not
/// exit (killed for silence or for the session's bound).
///
/// --format jsonl writes instead one record per difference,
/// {"command":N|null,"kind":K|null,"part":"sent"|"answers"|"turn"|"outside"|"owed",
/// "recorded":[...],"replayed":[...]}, then
/// {"same":B,"differences":N,"commands":N,"events":{"recorded":N,"replayed":N},
/// "notes":[...],"updated":B}.
///
/// Exit status: 0 the same conversation, crossings aside (or --update
/// wrote it); 1 they differ; 2 a usage error, a recording that cannot be read (its line and
/// why) or an engine that cannot be started.
#[derive(Args, Debug)]
#[command(after_help = "Examples:
  serve-command tap --log wire.jsonl -- openseek serve      # record a session
  serve-command replay wire.jsonl -- ./target/release/my-engine
  serve-command replay wire.jsonl --ignore usage -- ./my-engine
  serve-command replay wire.jsonl --update -- ./my-engine   # accept the new run")]
pub struct Replay {
    /// The recording.
    #[arg(value_name = "LOG")]
    log: PathBuf,
    /// Compare each event's line byte for byte, no text normalised, no run
    /// of deltas collapsed.
    #[arg(long)]
    exact: bool,
    /// Leave events of this kind out of the comparison (repeatable): an
    /// event's wire name, or `not an event`.
    #[arg(long = "ignore", value_name = "EVENT")]
    ignore: Vec<String>,
    /// Write this run as the new recording, over LOG, once the difference
    /// is accepted (exit 0).
    #[arg(long)]
    update: bool,
    /// With --update, replace matches of REGEX in this run's recorded text
    /// (JSON string values, as `tap --redact` does) with `[redacted]`
    /// before it reaches the file (repeatable). The comparison reads this
    /// run as written, so a recording made with the same --redact compares
    /// alike.
    #[arg(long = "redact", value_name = "REGEX", requires = "update")]
    redact: Vec<String>,
    /// text (default), or jsonl for programs.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// Seconds the whole run may take before ENGINE is killed.
    #[arg(long, value_name = "SECS", default_value = "60", value_parser = seconds)]
    timeout: Duration,
    /// Seconds ENGINE may stay silent while it owes an answer and asks
    /// nothing, before it is killed.
    #[arg(long, value_name = "SECS", default_value = "10", value_parser = seconds)]
    turn_timeout: Duration,
    /// Also write FILE: one page of the two conversations, two timelines
    /// aligned by command, each difference marked under its command in the
    /// report's words (crossings as such).
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// The engine, and its arguments.
    #[arg(last = true, required = true, value_name = "ENGINE")]
    engine: Vec<OsString>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    Text,
    Jsonl,
}

fn seconds(text: &str) -> Result<Duration, String> {
    let secs: f64 = text
        .parse()
        .map_err(|_| format!("{text:?} is not a number of seconds"))?;
    if secs.is_finite() && secs > 0.0 && secs <= 86_400.0 {
        Ok(Duration::from_secs_f64(secs))
    } else {
        Err(format!("{text} is not between 0 and 86400 seconds"))
    }
}

/// A recording in memory, written by the recorder and read back.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

pub fn run(args: Replay, revision: Revision) -> output::Result<ExitCode> {
    if revision == Revision::V1 {
        return Err(Failure::Error(
            "replay needs --revision v2: the protocol's first revision is the command half only"
                .to_owned(),
        ));
    }
    if let Some(unknown) = args
        .ignore
        .iter()
        .find(|name| name.as_str() != "not an event" && !Event::NAMES.contains(&name.as_str()))
    {
        return Err(Failure::Error(format!(
            "--ignore {unknown}: no such event (an event's wire name, such as usage, or `not an event`)"
        )));
    }
    let redact = crate::redact::redactor(&args.redact).map_err(Failure::Error)?;
    let name = args.log.display().to_string();
    let file = File::open(&args.log).map_err(|e| io_error(&name, &e))?;
    let recorded = Transcript::read(BufReader::new(file)).map_err(|e| match e.line() {
        Some(line) => Failure::Error(format!("{name}:{line}: {}", e.reason())),
        None => Failure::Error(format!("{name}: {}", e.reason())),
    })?;

    let shown = args.engine[0].to_string_lossy().into_owned();
    let mut engine = std::process::Command::new(&args.engine[0]);
    engine.args(&args.engine[1..]);
    let buffer = Shared::default();
    let mut recorder = Recorder::new(buffer.clone());
    if let Some(redact) = redact {
        // Compared as written: a recording made with the same --redact
        // compares alike.
        recorder = recorder.redact(move |text: &str| redact(text));
    }
    let runner = Runner::new()
        .timeout(args.timeout)
        .turn_timeout(args.turn_timeout);
    let verdict = runner
        .run_recorded(&recorded.session(), &mut engine, &recorder)
        .map_err(|e| io_error(format!("cannot run {shown}"), &e))?;
    let new_recording =
        std::mem::take(&mut *buffer.0.lock().unwrap_or_else(PoisonError::into_inner));
    let replayed = Transcript::read(&new_recording[..])
        .map_err(|e| Failure::Error(format!("this run's recording: {e}")))?;

    let mut how = Compare::new().exact(args.exact);
    for kind in &args.ignore {
        how = how.ignore(kind.clone());
    }
    let comparison = recorded.compare(&replayed, &how);
    let mut notes: Vec<String> = comparison
        .crossed()
        .iter()
        .map(|d| format!("crossed: not compared: {d}"))
        .collect();
    notes.extend(self::notes(&recorded, &verdict));

    // Read before --update writes over it.
    let recorded_log = match &args.html {
        Some(_) => Some(std::fs::read(&args.log).map_err(|e| io_error(&name, &e))?),
        None => None,
    };
    let updated = args.update;
    if updated {
        let mut out = File::create(&args.log).map_err(|e| io_error(&name, &e))?;
        out.write_all(&new_recording)
            .and_then(|()| out.flush())
            .map_err(|e| io_error(&name, &e))?;
    }

    let outcome = Outcome {
        recorded: &recorded,
        replayed: &replayed,
        comparison: &comparison,
        notes: &notes,
        updated,
    };
    let report = match args.format {
        Format::Text => outcome.text(&name),
        Format::Jsonl => outcome.jsonl(),
    };
    if let (Some(path), Some(log)) = (&args.html, &recorded_log) {
        html(
            path,
            &name,
            log,
            &new_recording,
            &comparison,
            &outcome.text(&name),
        )?;
    }
    let mut stdout = io::stdout().lock();
    match stdout
        .write_all(report.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(stdout_error)
    {
        Ok(()) | Err(Failure::Closed) => {}
        Err(e) => return Err(e),
    }
    Ok(if comparison.is_same() || updated {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// `--html FILE`: each run's view as `trace --html` draws it, under the
/// differences (and crossings) by command, in the report's words.
fn html(
    path: &std::path::Path,
    name: &str,
    recorded: &[u8],
    replayed: &[u8],
    comparison: &Comparison,
    report: &str,
) -> output::Result<()> {
    let view = |log: &[u8], sfx: &str, heading: &str| {
        crate::trace::view(log, name, sfx, heading)
            .map_err(|e| Failure::Error(format!("{name}: {e}")))
    };
    let recorded = view(
        recorded,
        "-recorded",
        "<h2 class=\"run-title\">The recording</h2>",
    )?;
    let replayed = view(
        replayed,
        "-replayed",
        "<h2 class=\"run-title\">This run</h2>",
    )?;
    let differences: Vec<_> = (comparison.differences().iter().map(|d| (d, false)))
        .chain(comparison.crossed().iter().map(|d| (d, true)))
        .map(|(d, crossed)| {
            let n = match d.place {
                Place::Command { n, .. } => Some(n),
                _ => None,
            };
            (n, d.to_string(), crossed)
        })
        .collect();
    let shown = path.display().to_string();
    let mut out = io::BufWriter::new(File::create(path).map_err(|e| io_error(&shown, &e))?);
    crate::html::write_replay(
        &mut out,
        &format!("replay of {name}"),
        report,
        &differences,
        recorded,
        replayed,
    )
    .and_then(|()| out.flush())
    .map_err(|e| io_error(&shown, &e))
}

/// What the summary adds: the recording's own violations, points the new
/// run never reached, and an engine that did not exit.
fn notes(recorded: &Transcript, verdict: &SessionVerdict) -> Vec<String> {
    let mut notes = Vec::new();
    let violations = recorded.violations();
    if !violations.is_empty() {
        let (events, fit, were) = if violations.len() == 1 {
            ("event", "fits", "it was")
        } else {
            ("events", "fit", "they were")
        };
        notes.push(format!(
            "the recording holds {} {events} that {fit} no rule, sent again as {were} (first: event {}: {})",
            violations.len(),
            violations[0].0,
            violations[0].1
        ));
    }
    for missed in &verdict.missed {
        notes.push(format!("this run: {missed}"));
    }
    match &verdict.end {
        End::Exited(how) if how == "exited with status 0" => {}
        end => notes.push(format!("this run: the engine {end}")),
    }
    notes
}

/// What the run came to, reported as text or as JSON lines.
#[derive(Clone, Copy)]
struct Outcome<'a> {
    recorded: &'a Transcript,
    replayed: &'a Transcript,
    comparison: &'a Comparison,
    notes: &'a [String],
    updated: bool,
}

impl Outcome<'_> {
    /// The report for a person: the differences under their places, a
    /// summary line, the notes.
    fn text(&self, name: &str) -> String {
        let (commands, recorded) = (self.recorded.commands(), self.recorded.events());
        let events = format!(
            "{commands} command line{}, {recorded} event{} recorded, {} in this run",
            if commands == 1 { "" } else { "s" },
            if recorded == 1 { "" } else { "s" },
            self.replayed.events()
        );
        let mut out = self.comparison.to_string();
        let count = self.comparison.differences().len();
        if count == 0 {
            out.push_str(&format!(
                "replay: {name}: the same conversation ({events})\n"
            ));
        } else {
            out.push_str(&format!(
                "replay: {name}: {count} difference{} (- the recording, + this run; {events})\n",
                if count == 1 { "" } else { "s" }
            ));
        }
        for note in self.notes {
            out.push_str(&format!("note: {note}\n"));
        }
        if self.updated {
            out.push_str(&format!("replay: {name} now holds this run\n"));
        }
        out
    }

    /// The report for a program: a record per difference, then the summary.
    fn jsonl(&self) -> String {
        let mut out = String::new();
        for d in self.comparison.differences() {
            let (command, kind, part) = match &d.place {
                Place::Command { n, kind, part } => (
                    Some(*n),
                    Some(kind.clone()),
                    match part {
                        Part::Sent => "sent",
                        Part::Answers => "answers",
                        _ => "turn",
                    },
                ),
                Place::Outside => (None, None, "outside"),
                _ => (None, None, "owed"),
            };
            out.push_str(
                &json!({
                    "command": command,
                    "kind": kind,
                    "part": part,
                    "recorded": d.recorded,
                    "replayed": d.replayed,
                })
                .to_string(),
            );
            out.push('\n');
        }
        out.push_str(
            &json!({
                "same": self.comparison.is_same(),
                "differences": self.comparison.differences().len(),
                "commands": self.recorded.commands(),
                "events": {"recorded": self.recorded.events(), "replayed": self.replayed.events()},
                "notes": self.notes,
                "updated": self.updated,
            })
            .to_string(),
        );
        out.push('\n');
        out
    }
}
