//! `corpus`: a seed corpus and its expected outcomes, for another fuzzer.

use crate::output::{self, io_error, Failure};
use crate::revision::{canonical, Revision, Summarized, NO_EVENTS_IN_V1};
use clap::Args;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serve_command::v2::{Event, EventError, EventLineError};
use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Write a seed corpus for another fuzzer: near-miss command or event lines
/// and their outcomes.
///
/// Writes DIR/corpus/line-000000, line-000001, ..., one line per file
/// without its LF (libFuzzer/AFL style), and DIR/expected.jsonl, one
/// `{"line":..,"ok":..,"revision":..}` or
/// `{"line":..,"error":..,"revision":..}` per line, in the conformance
/// vectors' format. Every line is JSON; `ok` is the canonical line, `error`
/// the wire message, `revision` the one they are the outcomes of (`conform
/// --vectors` reads it back); a command the engine declines has its message
/// in `refused` too (for `conform --serve-policy`). The same seed, count
/// and revision write the same files.
///
/// The lines are the revision's near misses (for v2: content arrays,
/// images valid and broken, data-URL `images`, tagged steers, job
/// commands, and the retired `predict` and `cancel_prediction` with the
/// fields their old guards read, each `unknown command` since upstream
/// fdf10827) and the outcomes its decoder's.
///
/// With `--events`, the lines are the engine's events instead, for an
/// implementation of the other direction (a controller's reader): near
/// misses of every event upstream defines (fields dropped, of the wrong
/// kind, at the edges of their rules, repeated; job records, prediction
/// outcomes, usage and content bent within; unknown events), each outcome
/// as the crate's event decoder judges it, in the event vectors' format:
/// `{"line":..,"ok":..,"revision":"v2"}` (the line upstream writes for the
/// event) or `{"line":..,"none":true,"why":..,"revision":"v2"}` (JSON, but
/// not an event a client reads; `why` is this crate's reason, for a
/// person). `conform --events --vectors DIR/expected.jsonl` runs them, and
/// `dict --events` prints the event fuzzing dictionary. v1 has no events.
///
/// DIR is created if missing. A DIR that already holds anything is refused,
/// unless --force: then DIR/corpus is emptied first and expected.jsonl
/// replaced (anything else in DIR is left alone).
#[derive(Args)]
#[command(after_help = "Examples:
  serve-command corpus seeds --count 500 --seed 7
  serve-command corpus seeds-v1 --revision v1 --count 500
  serve-command corpus event-seeds --events --count 500 --seed 7")]
pub struct Corpus {
    /// Folder to write into.
    dir: PathBuf,
    /// How many lines.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    count: usize,
    /// Seed for the generator.
    #[arg(long, value_name = "S", default_value_t = 0)]
    seed: u64,
    /// Write into a DIR that already holds files, emptying DIR/corpus first.
    #[arg(long)]
    force: bool,
    /// Write the engine's event lines (v2) instead of command lines.
    #[arg(long)]
    events: bool,
}

pub fn run(args: Corpus, revision: Revision) -> output::Result<()> {
    match (args.events, revision) {
        (true, Revision::V1) => Err(Failure::Error(NO_EVENTS_IN_V1.to_owned())),
        (true, Revision::V2) => write(
            &args,
            revision,
            serve_command::v2::strategy::event_line(),
            event_outcome,
        ),
        (false, Revision::V1) => write(
            &args,
            revision,
            serve_command::v1::strategy::line(),
            command_outcome,
        ),
        (false, Revision::V2) => write(
            &args,
            revision,
            serve_command::v2::strategy::line(),
            command_outcome,
        ),
    }
}

/// Writes the corpus from `strategy`'s lines, each record's outcome
/// members (after `line`, before `revision`) written by `outcome`.
fn write<T>(
    args: &Corpus,
    revision: Revision,
    strategy: impl Strategy<Value = (String, T)>,
    outcome: impl Fn(&str, T) -> String,
) -> output::Result<()> {
    let mut seed = [0u8; 32];
    seed[..8].copy_from_slice(&args.seed.to_le_bytes());
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &seed);
    let mut runner = TestRunner::new_with_rng(Config::default(), rng);

    let corpus = args.dir.join("corpus");
    prepare(&args.dir, &corpus, args.force)?;
    let expected_path = args.dir.join("expected.jsonl");
    let failed = |e| io_error(expected_path.display(), &e);
    let mut expected = BufWriter::new(File::create(&expected_path).map_err(failed)?);
    for n in 0..args.count {
        let (line, generated) = strategy
            .new_tree(&mut runner)
            .map_err(|e| Failure::Error(format!("generator: {e}")))?
            .current();
        let path = corpus.join(format!("line-{n:06}"));
        fs::write(&path, &line).map_err(|e| io_error(path.display(), &e))?;
        // Keys in the vectors' order: line first.
        let outcome = outcome(&line, generated);
        writeln!(
            expected,
            "{{\"line\":{},{outcome},\"revision\":\"{}\"}}",
            json(&line),
            revision.name()
        )
        .map_err(failed)?;
    }
    expected.flush().map_err(failed)
}

/// Makes `dir` ready: new or empty, or, with `force`, its `corpus` emptied,
/// so that no file of an earlier run is left beside the new ones.
fn prepare(dir: &Path, corpus: &Path, force: bool) -> output::Result<()> {
    let holds_files = match fs::read_dir(dir) {
        Ok(mut entries) => entries.next().is_some(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(e) => return Err(io_error(dir.display(), &e)),
    };
    if holds_files {
        if !force {
            return Err(Failure::Error(format!(
                "{}: already holds files (--force empties {} and replaces expected.jsonl)",
                dir.display(),
                corpus.display()
            )));
        }
        match fs::remove_dir_all(corpus) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_error(corpus.display(), &e)),
        }
    }
    fs::create_dir_all(corpus).map_err(|e| io_error(corpus.display(), &e))
}

/// A command line's outcome members, as the revision's decoder gave it
/// (the commands' strategy asks it): `ok`, with `refused` if the engine
/// declines it, or `error`.
fn command_outcome<C: Summarized>(_line: &str, outcome: Result<C, String>) -> String {
    match outcome {
        Ok(command) => match command.refusal() {
            Some(refused) => format!(
                "\"ok\":{},\"refused\":{}",
                json(&canonical(&command)),
                json(refused)
            ),
            None => format!("\"ok\":{}", json(&canonical(&command))),
        },
        Err(message) => format!("\"error\":{}", json(&message)),
    }
}

/// An event line's outcome members, as the crate's event decoder judges
/// the line: `ok`, the line upstream writes for the event; `none` and the
/// reason as `why`; or `not_json` and its reason (the strategy writes
/// JSON, but the decoder has the last word). The strategy's own predicted
/// outcome is not used: the vectors hold what the crate's decoder says,
/// as `decode --events --output verdict` answers.
fn event_outcome(line: &str, _predicted: Result<Event, EventError>) -> String {
    match Event::from_slice(line.as_bytes()) {
        Ok(event) => format!("\"ok\":{}", json(&event.to_string())),
        Err(EventLineError::NotAnEvent(e)) => {
            format!("\"none\":true,\"why\":{}", json(&e.to_string()))
        }
        Err(e) => format!("\"not_json\":true,\"why\":{}", json(&e.to_string())),
    }
}

fn json(s: &str) -> String {
    serde_json::to_string(s).expect("a string serializes")
}
