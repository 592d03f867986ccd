//! `serve-command`: the engine's and the controller's view of the serve
//! protocol's command lines, from a shell.
#![forbid(unsafe_code)]

use clap::{Args, Parser, Subcommand, ValueEnum};
use serve_command::{
    Command, CommandReader, LineError, ReadError, SteerKind, DEFAULT_MAX_LINE_LEN,
};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

/// Read and write the command lines of the serve protocol.
#[derive(Parser)]
#[command(
    name = "serve-command",
    version,
    after_help = "Examples:
  serve-command encode prompt \"fix it\" | serve-command decode
  serve-command decode session.jsonl --summary"
)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    Decode(Decode),
    #[command(subcommand)]
    Encode(Encode),
    Corpus(Corpus),
    Dict(Dict),
}

/// Decode command lines as an engine would, one output line per input line.
///
/// For each line that is not blank, prints the command's canonical line, or
/// the `command_error` event the engine would answer with. Unlike the
/// reference engine, which stops reading at a line that is not JSON, this
/// goes on to the end of the input.
///
/// Exit status: 0 when every line was a command, 1 when any line was
/// refused, 2 on a usage or I/O error.
#[derive(Args)]
#[command(after_help = "Examples:
  serve-command decode session.jsonl
  printf '{\"command\":\"cancel\"}\\n{\"command\":\"nap\"}\\n' | serve-command decode --summary")]
struct Decode {
    /// The controller's output to read (default: stdin).
    file: Option<PathBuf>,
    /// Refuse lines longer than this many bytes (LF excluded); a refused
    /// line is skipped without being buffered.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_LINE_LEN)]
    max_line_len: usize,
    /// Print counts per command and per error to stderr at the end.
    #[arg(long)]
    summary: bool,
}

/// Encode one command as the line a controller writes (LF included).
///
/// A TEXT of `-` is read from stdin verbatim, less one trailing LF. A TEXT
/// that starts with `-` goes after `--`.
#[derive(Subcommand)]
#[command(after_help = "Examples:
  serve-command encode prompt \"fix the build\" --submission-id sub-1
  git diff | serve-command encode steer - --kind prompt
  serve-command encode approval appr-7 --deny")]
enum Encode {
    /// A prompt: `{"command":"prompt","text":TEXT}`.
    #[command(
        after_help = "Example:\n  serve-command encode prompt \"fix it\" --submission-id sub-1"
    )]
    Prompt {
        /// The prompt's text (`-`: stdin).
        text: String,
        /// Tag the prompt, to reconcile its delivery by exact id.
        #[arg(long, value_name = "ID")]
        submission_id: Option<String>,
    },
    /// A mid-turn steer.
    #[command(after_help = "Example:\n  serve-command encode steer /diff --kind command")]
    Steer {
        /// The steer's text (`-`: stdin).
        text: String,
        /// How the steer reaches the model.
        #[arg(long, value_enum, default_value_t = Kind::Prompt)]
        kind: Kind,
    },
    /// Compact the conversation.
    #[command(after_help = "Example:\n  serve-command encode compact")]
    Compact,
    /// Cancel the running turn.
    #[command(after_help = "Example:\n  serve-command encode cancel")]
    Cancel,
    /// Set or clear the goal.
    #[command(subcommand)]
    Goal(Goal),
    /// Answer an `approval_requested` event.
    #[command(after_help = "Example:\n  serve-command encode approval appr-7 --allow")]
    Approval {
        /// The `id` of the `approval_requested` event.
        id: String,
        #[command(flatten)]
        decision: Decision,
    },
}

#[derive(Subcommand)]
#[command(after_help = "Examples:
  serve-command encode goal set \"cargo test passes\" --auto
  serve-command encode goal clear")]
enum Goal {
    /// Set the goal.
    #[command(
        after_help = "Example:\n  serve-command encode goal set \"cargo test passes\" --auto"
    )]
    Set {
        /// The goal (`-`: stdin).
        text: String,
        /// Arm autonomous continuation toward the goal.
        #[arg(long)]
        auto: bool,
    },
    /// Clear the goal.
    #[command(after_help = "Example:\n  serve-command encode goal clear")]
    Clear,
}

#[derive(Args)]
#[group(required = true, multiple = false)]
struct Decision {
    /// Allow the action.
    #[arg(long)]
    allow: bool,
    /// Deny the action.
    #[arg(long)]
    deny: bool,
}

#[derive(Clone, Copy, ValueEnum)]
enum Kind {
    Prompt,
    Command,
}

/// Write a seed corpus for another fuzzer: near-miss command lines and
/// their outcomes.
///
/// Writes DIR/corpus/line-NNNNNN, one line per file (libFuzzer/AFL style),
/// and DIR/expected.jsonl, one `{"line":..,"ok":..}` or
/// `{"line":..,"error":..}` per line, in the conformance vectors' format.
/// The same seed writes the same files.
#[derive(Args)]
#[command(after_help = "Example:\n  serve-command corpus seeds --count 500 --seed 7")]
struct Corpus {
    /// Folder to write into (created if missing).
    dir: PathBuf,
    /// How many lines.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    count: usize,
    /// Seed for the generator.
    #[arg(long, value_name = "S", default_value_t = 0)]
    seed: u64,
}

/// Print a libFuzzer/AFL dictionary of the protocol's tokens.
#[derive(Args)]
#[command(after_help = "Example:\n  serve-command dict > command.dict")]
struct Dict {}

fn main() -> ExitCode {
    let result = match Cli::parse().command {
        Cmd::Decode(args) => decode(args),
        Cmd::Encode(cmd) => encode(cmd).map(|()| ExitCode::SUCCESS),
        Cmd::Corpus(args) => corpus(args).map(|()| ExitCode::SUCCESS),
        Cmd::Dict(Dict {}) => io::stdout()
            .write_all(DICT.as_bytes())
            .map(|()| ExitCode::SUCCESS),
    };
    result.unwrap_or_else(|e| {
        eprintln!("serve-command: {e}");
        ExitCode::from(2)
    })
}

fn decode(args: Decode) -> io::Result<ExitCode> {
    let input: Box<dyn BufRead> = match &args.file {
        Some(path) => Box::new(BufReader::with_capacity(
            64 * 1024,
            File::open(path)
                .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?,
        )),
        None => Box::new(io::stdin().lock()),
    };
    let mut out = BufWriter::with_capacity(64 * 1024, io::stdout().lock());
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    let mut refused = false;
    for item in CommandReader::with_max_line_len(input, args.max_line_len) {
        match item {
            Ok(command) => {
                command.write_line(&mut out)?;
                if args.summary {
                    *counts.entry(name(&command).to_owned()).or_default() += 1;
                }
            }
            Err(ReadError::Io(e)) => return Err(e),
            Err(error) => {
                refused = true;
                out.write_all(error.event_line().as_bytes())?;
                if args.summary {
                    *counts.entry(error_kind(&error)).or_default() += 1;
                }
            }
        }
    }
    out.flush()?;
    if args.summary {
        let mut err = io::stderr().lock();
        for (what, n) in &counts {
            writeln!(err, "{n:>10}  {what}")?;
        }
    }
    Ok(if refused {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The wire name of a command, for the summary.
fn name(command: &Command) -> &'static str {
    match command {
        Command::Prompt { .. } => "prompt",
        Command::Steer { .. } => "steer",
        Command::Compact => "compact",
        Command::Cancel => "cancel",
        Command::GoalSet { .. } => "goal set",
        Command::GoalClear => "goal clear",
        Command::ApprovalDecision { .. } => "approval",
    }
}

/// An error, grouped for the summary: the wire message, without the parts
/// that differ from line to line (byte offsets, line numbers).
fn error_kind(error: &ReadError) -> String {
    match error {
        ReadError::Line {
            error: LineError::Command(e),
            ..
        } => format!("error: {e}"),
        ReadError::Line {
            error: LineError::Syntax(e),
            ..
        } => format!("error: command stream: {}", e.reason()),
        ReadError::TooLong { max, .. } => {
            format!("error: command stream: line longer than {max} bytes")
        }
        other => format!("error: {other}"),
    }
}

fn encode(cmd: Encode) -> io::Result<()> {
    let command = match cmd {
        Encode::Prompt {
            text,
            submission_id,
        } => Command::Prompt {
            text: text_arg(text)?,
            submission_id,
        },
        Encode::Steer { text, kind } => Command::Steer {
            kind: match kind {
                Kind::Prompt => SteerKind::Prompt,
                Kind::Command => SteerKind::Command,
            },
            text: text_arg(text)?,
        },
        Encode::Compact => Command::Compact,
        Encode::Cancel => Command::Cancel,
        Encode::Goal(Goal::Set { text, auto }) => Command::GoalSet {
            text: text_arg(text)?,
            auto,
        },
        Encode::Goal(Goal::Clear) => Command::GoalClear,
        Encode::Approval { id, decision } => Command::ApprovalDecision {
            id,
            allow: decision.allow,
        },
    };
    let mut out = io::stdout().lock();
    command.write_line(&mut out)?;
    out.flush()
}

/// A TEXT argument; `-` reads stdin verbatim, less one trailing LF.
fn text_arg(text: String) -> io::Result<String> {
    if text != "-" {
        return Ok(text);
    }
    let mut bytes = Vec::new();
    io::stdin().lock().read_to_end(&mut bytes)?;
    if bytes.last() == Some(&b'\n') {
        bytes.pop();
    }
    String::from_utf8(bytes).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("stdin is not UTF-8 (byte {})", e.utf8_error().valid_up_to()),
        )
    })
}

/// The fuzzing dictionary, shared with `fuzz/`.
const DICT: &str = include_str!("command.dict");

fn corpus(args: Corpus) -> io::Result<()> {
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
