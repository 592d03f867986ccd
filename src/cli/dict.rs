//! `dict`: the fuzzing dictionary.

use crate::output::{self, stdout_error};
use crate::revision::Revision;
use clap::Args;
use std::io::{self, Write};

/// Print a libFuzzer/AFL dictionary of the protocol's tokens.
///
/// With `--revision v2`, the later revision's dictionary: the seed's tokens
/// and its own (`content`, part types, media types, image headers in
/// base64, job commands).
#[derive(Args)]
#[command(after_help = "Examples:
  serve-command dict > command.dict
  serve-command dict --revision v2 > command_v2.dict")]
pub struct Dict {
    /// Which revision's tokens.
    #[arg(long, value_enum, default_value_t = Revision::V1)]
    revision: Revision,
}

/// The fuzzing dictionaries, shared with `fuzz/`.
const DICT: &str = include_str!("../command.dict");
const DICT_V2: &str = include_str!("../command_v2.dict");

pub fn run(args: Dict) -> output::Result<()> {
    let dict = match args.revision {
        Revision::V1 => DICT,
        Revision::V2 => DICT_V2,
    };
    let mut out = io::stdout().lock();
    out.write_all(dict.as_bytes())
        .and_then(|()| out.flush())
        .map_err(stdout_error)
}
