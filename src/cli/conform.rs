//! `conform`: the conformance vectors, run through another implementation.

use crate::decode::escape_line_breaks;
use crate::output::{self, io_error, stdout_error, Failure};
use crate::revision::{Revision, NO_EVENTS_IN_V1};
use clap::Args;
use serde_json::Value;
use serve_command::workbench::run::{ended, lines, run_program, visible, Feed, MAX_OUTPUT};
use std::ffi::OsString;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};
use std::time::Duration;

/// The crate's own vectors, for each revision; `tests/` ships in the
/// package.
const VECTORS: &str = include_str!("../../tests/vectors/commands.jsonl");
pub(crate) const VECTORS_V2: &str = include_str!("../../tests/vectors/commands-v2.jsonl");
/// The engine's verdicts (`--serve-policy`): the same format, plus
/// `refused` beside `ok` for a command the engine declines.
const SERVE: &str = include_str!("../../tests/vectors/serve.jsonl");
pub(crate) const SERVE_V2: &str = include_str!("../../tests/vectors/serve-v2.jsonl");
/// The engine's events (`--events`): `ok`, `none` or `not_json`, each
/// `oracle-events`' verdict. v2 only: v1 has no events.
const EVENTS: &str = include_str!("../../tests/vectors/events.jsonl");

/// How many disagreements the report shows without --all: enough to see
/// a pattern, few enough that a PROGRAM wrong on every vector (hundreds)
/// does not bury the count.
const SHOWN: usize = 20;

/// Run the conformance vectors through another implementation.
///
/// Starts PROGRAM once, writes every vector's line to its stdin, each with a
/// LF, closes it, and reads PROGRAM's stdout: one line per input line, in
/// the line protocol of `decode --output verdict` (the reference oracle's):
/// `OK <canonical line>`, `ERR <message>` (a LF or CR in the message
/// written as `\n`, `\r`), or `NOTJSON`. A vector with `ok` expects `OK
/// <ok>`; with `error`, `ERR <error>`; with `not_json`, `NOTJSON`. Vectors
/// whose line holds a LF cannot be sent as one line and are skipped, with a
/// note on stderr. PROGRAM's stderr passes through.
///
/// PROGRAM must judge lines as the revision does; without --vectors, the
/// revision's built-in vectors are run (`--revision v1`: the first revision's). A
/// vectors file whose vectors name their `revision` (as `corpus` writes
/// them) is run as that revision, and a --revision that says otherwise is
/// an error.
///
/// With `--serve-policy`, PROGRAM is judged as the engine (`openseek
/// serve`) answers, as `decode --serve-policy` does: the built-in vectors
/// are then the engine's (serve-v2.jsonl, or for v1 serve.jsonl), and a
/// vector with `refused` (a command the engine declines) expects `ERR
/// <refused>`. Without it, such a vector expects `OK <ok>`.
///
/// With `--events`, PROGRAM is judged as a controller reads the engine's
/// events, and speaks the line protocol of `decode --events --output
/// verdict` (the reference `oracle-events`'): `OK <line>` (the line
/// upstream writes for the event read, without LF), `NONE` (JSON, but not
/// an event a client reads) or `NOTJSON`. The built-in vectors are then
/// the events' (events.jsonl); a vector with `ok` expects `OK <ok>`; with
/// `none`, `NONE`; with `not_json`, `NOTJSON`. The protocol's first
/// revision has no events: --events with --revision v1 (or a vectors file
/// that names v1) is an error, and so is --events with --serve-policy (the
/// engine's policy judges commands).
///
/// Prints on stdout each disagreement (the vector's number in the file, its
/// `why`, its line, the expected and the given answer), the first 20 of
/// them unless --all, then, when some were not shown, `and K more
/// disagreements (D in all; --all shows every one)`, then `N/M vectors
/// agree`, M the vectors sent.
///
/// Exit status: 0 when every vector agrees, 1 when any disagrees (0 with
/// --exit-zero, for a pipeline under `set -o pipefail` that only wants the
/// report), 2 on a usage or I/O error, a vectors file that is not valid,
/// or a PROGRAM that misbehaves: one that cannot be started, exits with a
/// status other than 0 or by a signal, runs past --timeout or writes
/// without end (more than 64 MiB; it is killed), or answers another number
/// of lines than it was given.
#[derive(Args)]
#[command(after_help = "Examples:
  serve-command conform -- serve-command decode --output verdict
  serve-command --revision v1 conform -- serve-command --revision v1 decode --output verdict
  serve-command conform --serve-policy -- serve-command decode --serve-policy --output verdict
  serve-command conform --events -- serve-command decode --events --output verdict
  serve-command conform --vectors more.jsonl --timeout 10 -- python3 my_impl.py --verdicts")]
pub struct Conform {
    /// Vectors to run, in the format of the crate's tests/vectors/*.jsonl
    /// (default: the revision's, built in: commands-v2.jsonl, or for v1
    /// commands.jsonl; with --events, events.jsonl). `serve-command
    /// corpus` writes such a file (`corpus --events`, of event lines).
    #[arg(long, value_name = "FILE")]
    vectors: Option<PathBuf>,
    /// Expect the engine's refusals (and by default run its vectors).
    #[arg(long)]
    serve_policy: bool,
    /// Run event vectors: PROGRAM reads the engine's events, answering
    /// `OK <line>`, `NONE` or `NOTJSON` as `oracle-events` does.
    #[arg(long, conflicts_with = "serve_policy")]
    events: bool,
    /// Show every disagreement, not only the first 20.
    #[arg(long)]
    all: bool,
    /// Exit 0 whatever the vectors' agreement (2 still means a usage or
    /// I/O error, or a PROGRAM that misbehaves).
    #[arg(long)]
    exit_zero: bool,
    /// Seconds PROGRAM may take for all the vectors before it is killed.
    #[arg(long, value_name = "SECS", default_value = "60", value_parser = seconds)]
    timeout: Duration,
    /// The implementation to test, and its arguments.
    #[arg(last = true, required = true, value_name = "PROGRAM")]
    program: Vec<OsString>,
}

pub(crate) fn seconds(s: &str) -> Result<Duration, String> {
    s.parse::<f64>()
        .ok()
        .and_then(|secs| Duration::try_from_secs_f64(secs).ok())
        .filter(|d| !d.is_zero())
        .ok_or_else(|| format!("not a positive number of seconds: {s}"))
}

/// What the vectors' outcomes are outcomes of, and so what PROGRAM is
/// asked: the one thing that differs between the commands' runs and the
/// events'. Everything else (sending, timing, the report) is shared.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Judge {
    /// Command lines, as the revision's decoder judges them (`OK`, `ERR`,
    /// `NOTJSON`); with `serve_policy`, as the engine does, a `refused`
    /// expecting its refusal.
    Commands { serve_policy: bool },
    /// The engine's event lines, as a controller reads them (`OK`, `NONE`,
    /// `NOTJSON`).
    Events,
}

/// One test case: what to send, and what to expect back.
pub(crate) struct Vector {
    /// Its line in the vectors file, from 1.
    pub number: usize,
    pub line: Vec<u8>,
    /// The line as the report shows it: its field, as in the file.
    shown: String,
    /// The expected answer, without LF.
    expected: String,
    why: Option<String>,
    /// The revision whose outcome `expected` is, if the vector says.
    revision: Option<Revision>,
}

impl Vector {
    fn title(&self) -> String {
        match &self.why {
            Some(why) => format!("vector {}: {why}", self.number),
            None => format!("vector {}", self.number),
        }
    }
}

/// `revision`: the one said on the command line, if it was.
pub fn run(args: Conform, revision: Option<Revision>) -> output::Result<ExitCode> {
    let judge = if args.events {
        if revision == Some(Revision::V1) {
            return Err(Failure::Error(NO_EVENTS_IN_V1.to_owned()));
        }
        Judge::Events
    } else {
        Judge::Commands {
            serve_policy: args.serve_policy,
        }
    };
    let (name, text) = match &args.vectors {
        Some(path) => {
            let name = path.display().to_string();
            let text = std::fs::read_to_string(path).map_err(|e| io_error(&name, &e))?;
            (name, text)
        }
        None => {
            let (file, text) = match (judge, revision.unwrap_or(Revision::V2)) {
                (Judge::Events, _) => ("events.jsonl", EVENTS),
                (Judge::Commands { serve_policy }, Revision::V1) if serve_policy => {
                    ("serve.jsonl", SERVE)
                }
                (Judge::Commands { serve_policy }, Revision::V2) if serve_policy => {
                    ("serve-v2.jsonl", SERVE_V2)
                }
                (Judge::Commands { .. }, Revision::V1) => ("commands.jsonl", VECTORS),
                (Judge::Commands { .. }, Revision::V2) => ("commands-v2.jsonl", VECTORS_V2),
            };
            (format!("tests/vectors/{file} (built in)"), text.to_owned())
        }
    };
    let vectors = parse(&text, judge).map_err(|e| Failure::Error(format!("{name}: {e}")))?;
    // A file's vectors are the outcomes of one revision, the one PROGRAM
    // is judged as: a --revision that says otherwise is a mistake.
    let named = file_revision(&vectors).map_err(|e| Failure::Error(format!("{name}: {e}")))?;
    if let (Judge::Events, Some((Revision::V1, number))) = (judge, named) {
        return Err(Failure::Error(format!(
            "{name}: its vectors are v1's (line {number} says so), but the protocol's first revision has no events"
        )));
    }
    if let (Some((file, number)), Some(said)) = (named, revision) {
        if file != said {
            return Err(Failure::Error(format!(
                "{name}: its vectors are {}'s (line {number} says so), but --revision {} was given",
                file.name(),
                said.name()
            )));
        }
    }
    let (sent, skipped): (Vec<Vector>, Vec<Vector>) =
        vectors.into_iter().partition(|v| !v.line.contains(&b'\n'));
    let mut input = Vec::new();
    for v in &sent {
        input.extend_from_slice(&v.line);
        input.push(b'\n');
    }
    // Notes first: they hold whatever PROGRAM does.
    let mut notes = String::new();
    for v in &skipped {
        let why = v.why.as_ref().map(|why| format!(" ({why})"));
        notes += &format!(
            "skipped vector {}{}: its line holds a LF, which the line protocol cannot carry\n",
            v.number,
            why.unwrap_or_default()
        );
    }
    output::to_stderr(&notes)?;
    let answers = answers(&args.program, input, sent.len(), args.timeout)?;

    let mut report = String::new();
    let mut agree = 0;
    let mut disagree = 0;
    for (v, got) in sent.iter().zip(&answers) {
        if got.as_slice() == v.expected.as_bytes() {
            agree += 1;
            continue;
        }
        disagree += 1;
        if disagree > SHOWN && !args.all {
            continue;
        }
        report += &format!(
            "{}\n  line:     {}\n  expected: {}\n  got:      {}\n",
            v.title(),
            v.shown,
            v.expected,
            visible(got)
        );
    }
    if disagree > SHOWN && !args.all {
        let more = disagree - SHOWN;
        let noun = if more == 1 {
            "disagreement"
        } else {
            "disagreements"
        };
        report += &format!("and {more} more {noun} ({disagree} in all; --all shows every one)\n");
    }
    report += &format!("{agree}/{} vectors agree\n", sent.len());
    let code = if agree == sent.len() || args.exit_zero {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    };
    let mut out = BufWriter::new(io::stdout().lock());
    match out
        .write_all(report.as_bytes())
        .and_then(|()| out.flush())
        .map_err(stdout_error)
    {
        // Nobody reads the report: the status still tells.
        Ok(()) | Err(Failure::Closed) => Ok(code),
        Err(e) => Err(e),
    }
}

/// The vectors in `text`, one JSON object per line (blank lines skipped),
/// their outcomes read as `judge` says.
pub(crate) fn parse(text: &str, judge: Judge) -> Result<Vec<Vector>, String> {
    let mut vectors = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let number = i + 1;
        let v = vector(number, line, judge).map_err(|e| format!("line {number}: {e}"))?;
        vectors.push(v);
    }
    Ok(vectors)
}

fn vector(number: usize, text: &str, judge: Judge) -> Result<Vector, String> {
    let value: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let object = value.as_object().ok_or("not a JSON object")?;
    let string = |key: &str| match object.get(key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.as_str())),
        Some(_) => Err(format!("\"{key}\" is not a string")),
    };
    let (line, shown) = match (string("line")?, string("line_base64")?) {
        (Some(line), None) => (line.as_bytes().to_vec(), json(line)),
        (None, Some(b64)) => (
            base64(b64).map_err(|e| format!("\"line_base64\" is not base64: {e}"))?,
            format!("base64 {b64}"),
        ),
        _ => return Err("needs exactly one of \"line\" and \"line_base64\"".into()),
    };
    // `true`, or absent.
    let flag = |key: &str| match object.get(key) {
        None => Ok(false),
        Some(Value::Bool(true)) => Ok(true),
        Some(_) => Err(format!("\"{key}\" is not true")),
    };
    let expected = match judge {
        Judge::Commands { serve_policy } => {
            if object.contains_key("none") {
                return Err(
                    "\"none\" is an event vector's outcome (run event vectors with --events)"
                        .into(),
                );
            }
            let not_json = flag("not_json")?;
            let refused = string("refused")?;
            match (string("ok")?, string("error")?, not_json) {
                (Some(ok), None, false) => match refused {
                    Some(refused) if serve_policy => {
                        format!("ERR {}", escape_line_breaks(refused))
                    }
                    _ => format!("OK {ok}"),
                },
                _ if refused.is_some() => {
                    return Err("\"refused\" needs \"ok\": the engine refuses only commands".into())
                }
                (None, Some(error), false) => format!("ERR {}", escape_line_breaks(error)),
                (None, None, true) => "NOTJSON".to_owned(),
                _ => return Err("needs exactly one of \"ok\", \"error\" and \"not_json\"".into()),
            }
        }
        Judge::Events => {
            if let Some(key) = ["error", "refused"]
                .into_iter()
                .find(|&key| object.contains_key(key))
            {
                return Err(format!(
                    "\"{key}\" is a command vector's outcome (run command vectors without --events)"
                ));
            }
            match (string("ok")?, flag("none")?, flag("not_json")?) {
                (Some(ok), false, false) => format!("OK {ok}"),
                (None, true, false) => "NONE".to_owned(),
                (None, false, true) => "NOTJSON".to_owned(),
                _ => return Err("needs exactly one of \"ok\", \"none\" and \"not_json\"".into()),
            }
        }
    };
    let revision = match string("revision")? {
        None => None,
        Some("v1") => Some(Revision::V1),
        Some("v2") => Some(Revision::V2),
        Some(other) => {
            return Err(format!(
                "\"revision\" is {}, not \"v1\" or \"v2\"",
                json(other)
            ))
        }
    };
    Ok(Vector {
        number,
        line,
        shown,
        expected,
        why: string("why")?.map(str::to_owned),
        revision,
    })
}

/// The revision the vectors name, and the first line that names it; an
/// error if two name different ones (one PROGRAM speaks one revision).
fn file_revision(vectors: &[Vector]) -> Result<Option<(Revision, usize)>, String> {
    let mut named = vectors
        .iter()
        .filter_map(|v| v.revision.map(|r| (r, v.number)));
    let Some(first) = named.next() else {
        return Ok(None);
    };
    match named.find(|&(r, _)| r != first.0) {
        Some((other, number)) => Err(format!(
            "line {number}: \"revision\" is \"{}\", but line {} says \"{}\"",
            other.name(),
            first.1,
            first.0.name()
        )),
        None => Ok(Some(first)),
    }
}

fn json(s: &str) -> String {
    serde_json::to_string(s).expect("a string serializes")
}

/// Runs `program` on `input` and returns its answer lines (without LF),
/// or says how it misbehaved.
fn answers(
    program: &[OsString],
    input: Vec<u8>,
    expected_lines: usize,
    timeout: Duration,
) -> output::Result<Vec<Vec<u8>>> {
    let shown = program[0].to_string_lossy().into_owned();
    let misbehaved = |what: String| Failure::Error(format!("{shown} {what}"));
    let mut command = Command::new(&program[0]);
    command.args(&program[1..]);
    let ran = run_program(&mut command, Feed::whole(input), Stdio::inherit(), timeout)
        .map_err(|e| io_error(&shown, &e))?;
    if ran.overflowed {
        return Err(misbehaved(format!(
            "wrote more than {} MiB for {expected_lines} lines; killed it",
            MAX_OUTPUT >> 20
        )));
    }
    let Some(status) = ran.status else {
        return Err(misbehaved(format!(
            "did not finish within {timeout:?}; killed it"
        )));
    };
    // Counted before they are copied: 64 MiB of short lines would be
    // gigabytes as a `Vec` each.
    let count = lines(&ran.stdout).count();
    if !status.success() {
        return Err(misbehaved(format!(
            "{} (after {count} of {expected_lines} lines)",
            ended(status),
        )));
    }
    if count != expected_lines {
        return Err(misbehaved(format!(
            "answered {count} lines for {expected_lines}"
        )));
    }
    Ok(lines(&ran.stdout).map(<[u8]>::to_vec).collect())
}

/// Standard base64 (RFC 4648, `+/`, padded), strictly, as the `base64`
/// crate's standard engine decodes it: no whitespace, no missing padding,
/// no stray bits.
fn base64(text: &str) -> Result<Vec<u8>, String> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_base64_is_decoded_strictly() {
        let table: &[(&str, Result<&[u8], &str>)] = &[
            ("", Ok(b"")),
            ("Zg==", Ok(b"f")),
            ("Zm8=", Ok(b"fo")),
            ("Zm9v", Ok(b"foo")),
            ("Zm9vYmFy", Ok(b"foobar")),
            ("/w==", Ok(b"\xff")),
            ("77u/", Ok(b"\xef\xbb\xbf")),
            ("+/+/", Ok(b"\xfb\xff\xbf")),
            ("AA0K", Ok(b"\x00\r\n")),
            ("Zg", Err("Invalid padding")),
            ("Zg=", Err("Invalid padding")),
            ("Zg==Zg==", Err("Invalid symbol 61, offset 2.")),
            ("Z===", Err("Invalid symbol 61, offset 1.")),
            ("Zm 9", Err("Invalid symbol 32, offset 2.")),
            ("Zm-_", Err("Invalid symbol 45, offset 2.")),
            ("Zh==", Err("Invalid last symbol 104, offset 1.")),
            ("Zm9=", Err("Invalid last symbol 57, offset 2.")),
        ];
        for &(text, expected) in table {
            assert_eq!(
                base64(text).as_deref(),
                expected.map_err(str::to_owned).as_deref(),
                "{text:?}"
            );
        }
    }
}
