//! `serve-command`: the engine's and the controller's view of the serve
//! protocol's command lines, from a shell.
#![forbid(unsafe_code)]

mod conform;
mod corpus;
mod decode;
mod dict;
mod encode;
mod output;
mod revision;
mod shell;

use clap::{Parser, Subcommand};
use std::io::{self, Write};
use std::process::ExitCode;

/// Read and write the command lines of the serve protocol.
#[derive(Parser)]
#[command(
    name = "serve-command",
    version,
    after_help = "Examples:
  serve-command encode prompt \"fix it\" | serve-command decode
  serve-command decode session.jsonl --summary
  serve-command conform -- ./my_impl
  serve-command encode --revision v2 prompt \"what is this?\" --image shot.png"
)]
struct Cli {
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
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return output::exit(usage(&e)),
    };
    output::exit(match cli.command {
        Cmd::Decode(args) => decode::run(args),
        Cmd::Encode(args) => encode::run(args).map(|()| ExitCode::SUCCESS),
        Cmd::Conform(args) => conform::run(args),
        Cmd::Corpus(args) => corpus::run(args).map(|()| ExitCode::SUCCESS),
        Cmd::Dict(args) => dict::run(args).map(|()| ExitCode::SUCCESS),
        Cmd::Shell(args) => shell::run(args).map(|()| ExitCode::SUCCESS),
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
