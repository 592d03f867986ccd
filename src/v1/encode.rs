//! Writing the seed revision's wire line: compact JSON in the reference's key
//! order (from [`Command::entries`]), one `\n` at the end.

use crate::v1::command::{Command, Val};
use crate::wire::escape::{self, write_str, Len, Sink};
use std::io;

/// Writes `cmd` as its wire line, LF included.
pub(crate) fn write_command<K: Sink>(cmd: &Command, k: &mut K) -> Result<(), K::Error> {
    let mut first = true;
    // Inlined at each entry, so that every key and bracket is a copy of a
    // length known at compile time (no call); only strings are scanned.
    cmd.entries(
        #[inline(always)]
        |key, val| {
            k.put(if first { "{\"" } else { ",\"" })?;
            first = false;
            k.put(key)?;
            k.put("\":")?;
            match val {
                Val::Str(s) => write_str(k, s),
                Val::Bool(b) => k.put(if b { "true" } else { "false" }),
            }
        },
    )?;
    k.put("}\n")
}

/// The wire line in a `String` allocated once, at its exact length.
pub(crate) fn to_line(cmd: &Command) -> String {
    let mut len = Len(0);
    let Ok(()) = write_command(cmd, &mut len);
    let mut line = String::with_capacity(len.0);
    let Ok(()) = write_command(cmd, &mut line);
    line
}

/// The wire line to `out`, in one `write_all` up to 8 KiB and one per 8 KiB
/// beyond at most, without allocating.
pub(crate) fn write_line<W: io::Write>(cmd: &Command, out: W) -> io::Result<()> {
    escape::write_line(out, |k| write_command(cmd, k), |k| write_command(cmd, k))
}
