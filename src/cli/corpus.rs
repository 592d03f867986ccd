//! `corpus`: a seed corpus and its expected outcomes, for another fuzzer.

use crate::output::{self, io_error, Failure};
use crate::revision::{canonical, Revision, Summarized};
use clap::Args;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Write a seed corpus for another fuzzer: near-miss command lines and
/// their outcomes.
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
/// commands) and the outcomes its decoder's.
///
/// DIR is created if missing. A DIR that already holds anything is refused,
/// unless --force: then DIR/corpus is emptied first and expected.jsonl
/// replaced (anything else in DIR is left alone).
#[derive(Args)]
#[command(after_help = "Examples:
  serve-command corpus seeds --count 500 --seed 7
  serve-command corpus seeds-v1 --revision v1 --count 500")]
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
}

pub fn run(args: Corpus, revision: Revision) -> output::Result<()> {
    match revision {
        Revision::V1 => write(&args, revision, serve_command::v1::strategy::line()),
        Revision::V2 => write(&args, revision, serve_command::v2::strategy::line()),
    }
}

/// Writes the corpus from `strategy`'s lines and outcomes.
fn write<C: Summarized>(
    args: &Corpus,
    revision: Revision,
    strategy: impl Strategy<Value = (String, Result<C, String>)>,
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
        let (line, outcome) = strategy
            .new_tree(&mut runner)
            .map_err(|e| Failure::Error(format!("generator: {e}")))?
            .current();
        let path = corpus.join(format!("line-{n:06}"));
        fs::write(&path, &line).map_err(|e| io_error(path.display(), &e))?;
        // Keys in the vectors' order: line first.
        let outcome = match outcome {
            Ok(command) => match command.refusal() {
                Some(refused) => format!(
                    "\"ok\":{},\"refused\":{}",
                    json(&canonical(&command)),
                    json(refused)
                ),
                None => format!("\"ok\":{}", json(&canonical(&command))),
            },
            Err(message) => format!("\"error\":{}", json(&message)),
        };
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

fn json(s: &str) -> String {
    serde_json::to_string(s).expect("a string serializes")
}
