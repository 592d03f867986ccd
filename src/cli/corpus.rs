//! `corpus`: a seed corpus and its expected outcomes, for another fuzzer.

use clap::Args;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

/// Write a seed corpus for another fuzzer: near-miss command lines and
/// their outcomes.
///
/// Writes DIR/corpus/line-NNNNNN, one line per file (libFuzzer/AFL style),
/// and DIR/expected.jsonl, one `{"line":..,"ok":..}` or
/// `{"line":..,"error":..}` per line, in the conformance vectors' format.
/// The same seed writes the same files.
#[derive(Args)]
#[command(after_help = "Example:\n  serve-command corpus seeds --count 500 --seed 7")]
pub struct Corpus {
    /// Folder to write into (created if missing).
    dir: PathBuf,
    /// How many lines.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    count: usize,
    /// Seed for the generator.
    #[arg(long, value_name = "S", default_value_t = 0)]
    seed: u64,
}

pub fn run(args: Corpus) -> io::Result<()> {
    use proptest::strategy::{Strategy, ValueTree};
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

    let mut seed = [0u8; 32];
    seed[..8].copy_from_slice(&args.seed.to_le_bytes());
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &seed);
    let mut runner = TestRunner::new_with_rng(Config::default(), rng);
    let strategy = serve_command::strategy::line();

    let corpus = args.dir.join("corpus");
    std::fs::create_dir_all(&corpus)?;
    let mut expected = BufWriter::new(File::create(args.dir.join("expected.jsonl"))?);
    for n in 0..args.count {
        let (line, outcome) = strategy
            .new_tree(&mut runner)
            .map_err(|e| io::Error::other(format!("generator: {e}")))?
            .current();
        std::fs::write(corpus.join(format!("line-{n:06}")), &line)?;
        // Keys in the vectors' order: line first.
        let (key, value) = match outcome {
            Ok(command) => ("ok", command.to_line().trim_end_matches('\n').to_owned()),
            Err(message) => ("error", message),
        };
        let json = |s: &str| serde_json::to_string(s).map_err(io::Error::other);
        writeln!(
            expected,
            "{{\"line\":{},\"{key}\":{}}}",
            json(&line)?,
            json(&value)?
        )?;
    }
    expected.flush()
}
