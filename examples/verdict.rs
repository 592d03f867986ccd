//! Reads lines on stdin and prints one verdict per line, in the reference
//! oracle's format: `OK <canonical line>`, `ERR <message>` (LF and CR in it
//! written as `\n` and `\r`) or `NOTJSON`. For differential runs against
//! `oracle-newest` (`--revision v1`, the default) or `oracle-latest`
//! (`--revision v2`):
//!
//! ```text
//! cargo run -q --release --example verdict -- --revision v2 < lines
//! python3 scripts/v2_differential.py --cmd "target/release/examples/verdict --revision v2"
//! ```

use serve_command::{v2, Command, LineError};
use std::fmt::Display;
use std::io::{self, BufWriter, Read, Write};

fn verdict<E: Display>(out: &mut impl Write, r: Result<String, LineError<E>>) -> io::Result<()> {
    match r {
        Ok(line) => {
            out.write_all(b"OK ")?;
            out.write_all(line.as_bytes())
        }
        Err(LineError::Command(e)) => {
            let message = e.to_string().replace('\n', "\\n").replace('\r', "\\r");
            writeln!(out, "ERR {message}")
        }
        Err(LineError::Syntax(_)) => out.write_all(b"NOTJSON\n"),
    }
}

fn main() -> io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let v2 = match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        [] | ["--revision", "v1"] => false,
        ["--revision", "v2"] => true,
        _ => {
            eprintln!("usage: verdict [--revision v1|v2] < lines");
            std::process::exit(2);
        }
    };
    let mut input = Vec::new();
    io::stdin().lock().read_to_end(&mut input)?;
    let mut out = BufWriter::new(io::stdout().lock());
    let mut lines: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
    // The text after the last LF is a line only when it is not empty.
    if lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    for line in lines {
        if v2 {
            verdict(&mut out, v2::Command::from_slice(line).map(|c| c.to_line()))?;
        } else {
            verdict(&mut out, Command::from_slice(line).map(|c| c.to_line()))?;
        }
    }
    out.flush()
}
