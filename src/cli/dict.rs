//! `dict`: the fuzzing dictionary.

use crate::output::{self, stdout_error};
use crate::revision::Revision;
use clap::Args;
use std::io::{self, Write};

/// Print a libFuzzer/AFL dictionary of the protocol's tokens.
///
/// The revision's tokens: for v2, v1's and its own (`content`, part
/// types, media types, image headers in base64, job and prediction
/// commands).
#[derive(Args)]
#[command(after_help = "Examples:
  serve-command dict > command_v2.dict
  serve-command dict --revision v1 > command.dict")]
pub struct Dict {}

/// The fuzzing dictionaries, shared with `fuzz/`.
const DICT: &str = include_str!("../command.dict");
const DICT_V2: &str = include_str!("../command_v2.dict");

pub fn run(_: Dict, revision: Revision) -> output::Result<()> {
    let dict = match revision {
        Revision::V1 => DICT,
        Revision::V2 => DICT_V2,
    };
    let mut out = io::stdout().lock();
    out.write_all(dict.as_bytes())
        .and_then(|()| out.flush())
        .map_err(stdout_error)
}
