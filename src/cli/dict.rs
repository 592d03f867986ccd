//! `dict`: the fuzzing dictionary.

use crate::output::{self, stdout_error};
use clap::Args;
use std::io::{self, Write};

/// Print a libFuzzer/AFL dictionary of the protocol's tokens.
#[derive(Args)]
#[command(after_help = "Example:\n  serve-command dict > command.dict")]
pub struct Dict {}

/// The fuzzing dictionary, shared with `fuzz/`.
const DICT: &str = include_str!("../command.dict");

pub fn run(Dict {}: Dict) -> output::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(DICT.as_bytes())
        .and_then(|()| out.flush())
        .map_err(stdout_error)
}
