//! `serve-command`: the engine's and the controller's view of the serve
//! protocol's lines (commands, and today's events), from a shell.
#![forbid(unsafe_code)]

mod check_engine;
mod conform;
mod corpus;
mod decode;
mod dict;
mod encode;
mod fuzz_engine;
mod html;
mod mock_engine;
mod output;
mod redact;
mod replay;
mod revision;
mod shell;
mod size;
mod tap;
mod trace;

use clap::{Parser, Subcommand};
use revision::Revision;
use std::io::{self, Write};
use std::process::ExitCode;

/// What `--version` prints after the version: the upstream sources each
/// rule set follows, so that a disagreement can be traced to upstream
/// having moved or to this crate being wrong. docs/PROTOCOL.md ("What this
/// crate follows") lists the same, and a test holds the two together.
macro_rules! upstream {
    () => {
        "follows upstream openseek (moonbitlang/openseek):
  v2 commands     protocol/command.mbt, reconstructed from the API listing @ fdf10827
  v2 content      protocol/content.mbt @ 004077e3
  v2 images       protocol/image.mbt @ 0f65a2c1
  v2 job ids      protocol/jobs.mbt (valid_job_component) @ fe7362d3
  serve policy    internal/openseek/serve/state.mbt, reconstructed from the API listing @ fdf10827 (v1: @ 36797574)
  serve loop      internal/openseek/serve/loop.mbt @ fdf10827 (the engine's own prediction)
  shell envelope  protocol/command_context/command_context.mbt @ 35042ea4
  v2 events       protocol/event.mbt @ fdf10827; parse.mbt, to_json.mbt reconstructed from the API listing @ fdf10827
  v2 job records  protocol/jobs.mbt @ 847272fd
  v2 predictions  protocol/prediction.mbt @ fdf10827
  v2 usage        protocol/usage.mbt @ 0ec98bd7
  JSON syntax     moonbitlang/core json @ aced026
  v1 commands     the protocol's first revision, frozen (protocol/command.mbt before content parts)"
    };
}

/// Read and write the command lines of the serve protocol.
#[derive(Parser)]
#[command(
    name = "serve-command",
    version,
    long_version = concat!(env!("CARGO_PKG_VERSION"), "\n", upstream!()),
    after_help = "Revisions (--revision, before or after the subcommand; the wire carries no
version, so both ends must agree on one):
  v2  Upstream openseek's protocol today (serve_command::v2), the default:
      messages carry `content` (text and image parts), steers may be tagged,
      `jobs_snapshot` and `job_stop` are commands, and the engine predicts
      the next message itself after a turn (`prediction_result`).
  v1  The protocol's first revision, before content parts: messages carry `text`.

Examples:
  serve-command encode prompt \"what is this?\" --image shot.png | serve-command decode
  serve-command decode session.jsonl --summary
  serve-command conform -- ./my_impl
  serve-command tap --log wire.jsonl -- openseek serve
  serve-command trace wire.jsonl
  serve-command replay wire.jsonl -- ./my_engine
  serve-command mock-engine --script turns.jsonl < session.jsonl
  serve-command check-engine --report check.json -- ./my_engine
  serve-command fuzz-engine --time 60 -- ./my_engine
  serve-command --revision v1 encode prompt \"fix it\""
)]
struct Cli {
    /// Which revision of the wire to speak: v2 (default) or v1.
    #[arg(short, long, value_enum, global = true, hide_possible_values = true)]
    revision: Option<Revision>,
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    Decode(decode::Decode),
    Encode(encode::Encode),
    Conform(conform::Conform),
    Corpus(corpus::Corpus),
    Dict(dict::Dict),
    Shell(shell::Shell),
    Tap(tap::Tap),
    Trace(trace::Trace),
    Replay(replay::Replay),
    MockEngine(mock_engine::MockEngine),
    CheckEngine(check_engine::CheckEngine),
    FuzzEngine(fuzz_engine::FuzzEngine),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return output::exit(usage(&e)),
    };
    // `conform` and `shell` need to know whether it was said: a vectors
    // file names its own revision, and the envelope has none.
    let revision = cli.revision.unwrap_or(Revision::V2);
    output::exit(match cli.command {
        Cmd::Decode(args) => decode::run(args, revision),
        Cmd::Encode(args) => encode::run(args, revision),
        Cmd::Conform(args) => conform::run(args, cli.revision),
        Cmd::Corpus(args) => corpus::run(args, revision).map(|()| ExitCode::SUCCESS),
        Cmd::Dict(args) => dict::run(args, revision).map(|()| ExitCode::SUCCESS),
        // The envelope is the same text in both revisions: a revision
        // asked for would mean nothing, so it is refused, not ignored.
        Cmd::Shell(_) if cli.revision.is_some() => Err(output::Failure::Error(
            "shell takes no --revision: the envelope is the same in both revisions".to_owned(),
        )),
        Cmd::Shell(args) => shell::run(args).map(|()| ExitCode::SUCCESS),
        Cmd::Tap(args) => tap::run(args, revision),
        Cmd::Trace(args) => trace::run(args, revision),
        Cmd::Replay(args) => replay::run(args, revision),
        Cmd::MockEngine(args) => mock_engine::run(args, revision),
        Cmd::CheckEngine(args) => check_engine::run(args, revision),
        Cmd::FuzzEngine(args) => fuzz_engine::run(args, revision),
    })
}

/// `--help`, `--version` (on stdout, exit 0) or a usage error (on stderr,
/// exit 2), printed by clap but with its write errors handled here:
/// `clap::Error::exit` would ignore them.
fn usage(e: &clap::Error) -> output::Result<ExitCode> {
    let code = ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
    let printed = e.print();
    if e.use_stderr() {
        printed.map_err(|io| output::io_error("stderr", &io))?;
    } else {
        printed
            .and_then(|()| io::stdout().flush())
            .map_err(output::stdout_error)?;
    }
    Ok(code)
}
