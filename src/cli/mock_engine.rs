//! `mock-engine`: the workbench's mock engine (`serve_command::workbench::
//! MockEngine`, where what it answers and why is documented) on stdin and
//! stdout.

use crate::output::{self, io_error, stdout_error};
use crate::revision::Revision;
use clap::Args;
use serve_command::workbench::{MockEngine as Engine, Replay};
use std::fs::File;
use std::io::{self, BufReader};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// A deterministic engine with no model, for controllers' tests
///
/// Reads commands on stdin and writes events on stdout, one JSON line
/// each, as `openseek serve` does: every line it cannot use is answered
/// with the exact `command_error` the crate's reader (or the serve policy)
/// gives, and a line that is not JSON ends reading after its `command
/// stream: ...` answer (and a note on stderr). Each command gets the
/// events a real engine writes for it (`serve-command mock-engine` has no
/// background jobs, no durable session and no model):
///
///   prompt             a turn, from the script (below)
///   steer              `steer_dropped` when no turn is running (a prompt
///                      steer), `steer_applied` for a command steer
///   goal               `goal_updated`
///   approval           `approval_resolved`, when it answers the question
///                      the running turn asked; else nothing
///   cancel             stops a turn waiting for an approval, or a paced one
///                      (`agent_aborted` `interrupted`); else nothing
///   compact            `compaction_started`, `compaction_finished`
///   jobs_snapshot      `jobs_snapshot`, with its `request_id` and no jobs
///   job_stop           `job_stop_result`, `not_found`
///   predict            `command_error` `unknown command: predict`, as any
///   cancel_prediction  command it does not know (gone upstream, fdf10827)
///
/// A turn writes `agent_step` 1, a `reasoning_delta` per reasoning piece,
/// an `assistant_delta` per delta, `reasoning_message` (when it reasoned),
/// `assistant_message`, `usage` and `agent_finished`. Without --script,
/// each turn answers `You asked: <the prompt's text>`, in two deltas.
///
/// --script FILE is JSON Lines, one object per turn: the Nth prompt runs
/// the Nth line's turn (blank lines skipped); prompts past the last line
/// run the default turn. Every key is optional:
///
///   {"deltas":["Hel","lo"]}              the answer's deltas; the answer is
///                                        their concatenation
///   {"answer":"Hello"}                   the answer, in one delta (with
///                                        "deltas", the message may differ)
///   {"reasoning":["Let me ","look"]}     reasoning deltas, then the
///                                        `reasoning_message`
///   {"usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11,
///     "prompt_cache_hit_tokens":0,"prompt_cache_miss_tokens":9}}
///                                        the `usage` event's counts (the
///                                        default: the prompt's words, one
///                                        token per delta)
///   {"fail":"provider error"}            end with `turn_failed` instead of
///                                        an answer
///   {"predict":"Thanks!"}                once the turn finished idle,
///                                        predict this (in place of
///                                        --predict's; with "events" too)
///   {"approval":{"tool_name":"shell","detail":"run cargo test",
///     "body":"cargo test"}}              ask first: `approval_requested`
///                                        (id `approval-N`), then wait for
///                                        its `approval` command; then
///                                        `approval_resolved`, `tool_result`
///                                        (`call-N`; an error when denied),
///                                        `agent_step` 2 and the answer.
///                                        Steers and goals sent meanwhile
///                                        land at the resumption; prompts
///                                        and compactions wait for the
///                                        turn's end; `cancel` aborts it.
///   {"events":[{"event":"agent_step","step":1}, ...]}
///                                        exactly these events, each checked
///                                        as a controller reads it and
///                                        written as the crate writes it
///                                        (no other key with "events")
///
/// --delay MS paces the turns: MS milliseconds between every two events of
/// a turn (and between `compaction_started` and `compaction_finished`),
/// while it reads on, so that a controller's test can land a command in the
/// middle of a turn. A steer or goal that arrives mid-turn lands at the
/// turn's next step boundary, the pause before its next event: `agent_step`
/// N+1 (N its last step), then `steer_applied` (`goal_updated`), then the
/// rest of the turn (one that arrives just before `agent_finished` is
/// settled when the turn ends, a prompt steer dropped); `cancel` cuts the
/// pause short and aborts the turn (`agent_aborted` `interrupted`); requests
/// and refused lines are answered at once, mid-turn; prompts and `compact`
/// wait for the turn's end. An `approval` answers only a question already
/// asked. Without --delay (0), each turn runs to its end, or to its
/// approval question, before the next command is read.
///
/// --predict TEXT predicts the user's next message, as `openseek serve`
/// does by itself after a turn: after every turn that ends
/// `agent_finished` with nothing running or queued and the input open,
/// `{"event":"prediction_result","source_sequence":N,"outcome":{"kind":
/// "completed","text":TEXT,"input_tokens":8,"output_tokens":2}}` (an empty
/// TEXT: `"text":null`), N the number of turns finished so far, from 1
/// (the mock numbers no events; N tells one prediction from the next). A
/// prompt, steer, compact, cancel, goal or the end of input cancels it,
/// silently. Without --delay it comes right after `agent_finished`, before
/// the next command is read; with it, at once, on a thread of its own.
/// Without --predict (and no "predict" in the script) it never predicts.
///
/// The same input and script give the same bytes out: no clock, no random
/// ids; at every delay the same bytes, when nothing but prompts and
/// `compact` arrives mid-turn. At the end of input a turn still waiting
/// has its question withdrawn (`approval_resolved` `cancelled`) and
/// finishes, a paced turn runs to its end; then it exits.
///
/// --replay LOG answers as a recorded session's engine did: LOG is a log
/// of the wire (`serve-command tap --log`, a controller's
/// `serve_command::v2::serve::Recorder`), attributed as `serve-command
/// trace` attributes it. The Nth command of each kind read (prompt, steer,
/// jobs_snapshot, job_stop, goal, compact, approval, cancel, a refused
/// line) gets what the recording's Nth
/// command of that kind got: a prompt its turn's events in order (one
/// turn or compaction at a time, in the order their commands are read); a
/// request its reply at once, with the new command's `request_id`; a
/// refused line its `command_error`; a steer, goal, approval or cancel
/// its answer where the recording had it (inside a turn, the turn waits
/// for the command its next event answers: a turn that asked for an
/// approval waits for it). The engine's own prediction (`prediction_result`)
/// comes after its turn as recorded, unless a prompt, steer, compact,
/// cancel or goal was read since that turn's end, other work waits, or
/// the input ended: then it is left out, as the engine cancels it. Events that answered nothing (session_started,
/// job_changed) come where they came relative to the commands. The pace
/// is the recording's (the gaps between a work's events), or --delay's. A
/// command the recording never saw is answered as the plain mock engine
/// answers it alone, and stderr says so: `mock-engine: command line 7
/// (prompt): not in the recording; answered as the mock engine`.
///
/// Exit status: 0 at the end of input (after a line that is not JSON too,
/// as the reference engine); 2 on a usage error, a script or recording it
/// cannot read (the file and line, and why), or a failed write.
#[derive(Args)]
#[command(
    verbatim_doc_comment,
    after_help = "Examples:
  serve-command mock-engine < examples/session.jsonl
  printf '{\"deltas\":[\"Hel\",\"lo\"]}\\n{\"fail\":\"rate limited\"}\\n' > turns.jsonl
  my-controller --engine 'serve-command mock-engine --script turns.jsonl'
  my-controller --engine 'serve-command mock-engine --delay 200'
  serve-command tap -- serve-command mock-engine < examples/session.jsonl
  serve-command tap --log wire.jsonl -- openseek serve < session.jsonl
  my-controller --engine 'serve-command mock-engine --replay wire.jsonl'"
)]
pub struct MockEngine {
    /// The turns to answer prompts with, one JSON object per line (see
    /// above).
    #[arg(long, value_name = "FILE", conflicts_with = "replay")]
    script: Option<PathBuf>,
    /// Predict TEXT as the user's next message after every turn that
    /// finished idle (see above).
    #[arg(long, value_name = "TEXT", conflicts_with = "replay")]
    predict: Option<String>,
    /// Milliseconds between two events of a turn, read on meanwhile (see
    /// above); 0 runs each turn to its end before the next command is read.
    /// With --replay: in place of the recording's pace.
    #[arg(long, value_name = "MS")]
    delay: Option<u64>,
    /// Answer as the engine of this recorded session did (see above).
    #[arg(long, value_name = "LOG")]
    replay: Option<PathBuf>,
}

pub fn run(args: MockEngine, revision: Revision) -> output::Result<ExitCode> {
    if revision == Revision::V1 {
        return Err(output::Failure::Error(
            "mock-engine needs --revision v2: the protocol's first revision has no events"
                .to_owned(),
        ));
    }
    if let Some(path) = &args.replay {
        return replay(path, args.delay);
    }
    let engine = match &args.script {
        Some(path) => {
            let name = path.display().to_string();
            let text = std::fs::read_to_string(path).map_err(|e| io_error(&name, &e))?;
            Engine::with_script(&text).map_err(|e| {
                output::Failure::Error(format!("{name}:{}: {}", e.line(), e.reason()))
            })?
        }
        None => Engine::new(),
    }
    .delay(Duration::from_millis(args.delay.unwrap_or(0)));
    let engine = match args.predict {
        Some(text) => engine.predict(text),
        None => engine,
    };
    // The serve loop writes one whole line at a time and flushes it.
    let stopped = engine
        .serve(BufReader::new(io::stdin()), io::stdout())
        .map_err(stdout_error)?;
    if let Some(why) = stopped {
        output::to_stderr(&format!("mock-engine: stopping: {why}\n"))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `--replay LOG`: the recording's engine on stdin and stdout.
fn replay(path: &Path, delay: Option<u64>) -> output::Result<ExitCode> {
    let name = path.display().to_string();
    let file = File::open(path).map_err(|e| io_error(format!("mock-engine: {name}"), &e))?;
    let mut engine = Replay::read(BufReader::new(file))
        .map_err(|e| output::Failure::Error(format!("mock-engine: {name}: {e}")))?
        .notes(|note| {
            // A note that cannot be written is no reason to stop answering.
            let _ = output::to_stderr(&format!("mock-engine: {note}\n"));
        });
    if let Some(ms) = delay {
        engine = engine.delay(Duration::from_millis(ms));
    }
    let stopped = engine
        .serve(BufReader::new(io::stdin()), io::stdout())
        .map_err(stdout_error)?;
    if let Some(why) = stopped {
        output::to_stderr(&format!("mock-engine: stopping: {why}\n"))?;
    }
    Ok(ExitCode::SUCCESS)
}
