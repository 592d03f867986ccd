//! `dict`: the fuzzing dictionary.

use crate::output::{self, stdout_error, Failure};
use crate::revision::{Revision, NO_EVENTS_IN_V1};
use clap::Args;
use std::io::{self, Write};

/// Print a libFuzzer/AFL dictionary of the protocol's tokens.
///
/// The revision's tokens: for v2, v1's and its own (`content`, part
/// types, media types, image headers in base64, job commands).
///
/// With `--events`, the tokens of the engine's event lines (v2) instead:
/// every event name, every field key (of the events, job records and
/// their states, prediction outcomes, usage, content parts), every nested
/// kind and outcome, and numbers at the edges of the rules. It is the
/// dictionary of the crate's own event fuzz targets, for a fuzzer of
/// another implementation's event reader (with `corpus --events`).
#[derive(Args)]
#[command(after_help = "Examples:
  serve-command dict > command_v2.dict
  serve-command dict --revision v1 > command.dict
  serve-command dict --events > event_v2.dict")]
pub struct Dict {
    /// Print the event lines' dictionary (v2) instead of the commands'.
    #[arg(long)]
    events: bool,
}

/// The fuzzing dictionaries, shared with `fuzz/`.
const DICT: &str = include_str!("../command.dict");
const DICT_V2: &str = include_str!("../command_v2.dict");
const DICT_EVENTS: &str = include_str!("../event_v2.dict");

pub fn run(args: Dict, revision: Revision) -> output::Result<()> {
    let dict = match (args.events, revision) {
        (true, Revision::V1) => return Err(Failure::Error(NO_EVENTS_IN_V1.to_owned())),
        (true, Revision::V2) => DICT_EVENTS,
        (false, Revision::V1) => DICT,
        (false, Revision::V2) => DICT_V2,
    };
    let mut out = io::stdout().lock();
    out.write_all(dict.as_bytes())
        .and_then(|()| out.flush())
        .map_err(stdout_error)
}
