//! `serve-command`: the engine's and the controller's view of the serve
//! protocol's command lines, from a shell.
#![forbid(unsafe_code)]

mod corpus;
mod decode;
mod dict;
mod encode;

use clap::{Parser, Subcommand};
use std::io;
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
    Decode(decode::Decode),
    #[command(subcommand)]
    Encode(encode::Encode),
    Corpus(corpus::Corpus),
    Dict(dict::Dict),
}

fn main() -> ExitCode {
    let result: io::Result<ExitCode> = match Cli::parse().command {
        Cmd::Decode(args) => decode::run(args),
        Cmd::Encode(cmd) => encode::run(cmd).map(|()| ExitCode::SUCCESS),
        Cmd::Corpus(args) => corpus::run(args).map(|()| ExitCode::SUCCESS),
        Cmd::Dict(args) => dict::run(args).map(|()| ExitCode::SUCCESS),
    };
    result.unwrap_or_else(|e| {
        eprintln!("serve-command: {e}");
        ExitCode::from(2)
    })
}
