//! `shell`: the `<user_shell_command>` envelope as an oracle, in
//! `oracle-shell`'s request and answer protocol.

use crate::output::{self, io_error, stdout_error};
use clap::Args;
use serde_json::Value;
use serve_command::shell::{self, ShellOutput};
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::path::PathBuf;

/// Encode and parse `!` command envelopes (`<user_shell_command>`), one JSON request per line
///
/// One JSON answer per request, in the protocol of upstream's envelope
/// checker, with the same answers byte for byte: for testing another
/// language's implementation against this one. The envelope is the same
/// text in both revisions (a command steer's `text` in v1, its `content`
/// in v2), so `shell` takes no `--revision`.
///
/// Requests:
///   {"encode": COMMAND, "exit_code": N or null, "text": T, "output_limit_reached": B}
///   {"encode": COMMAND, "error": MESSAGE}
///   {"parse": CONTENT}
///
/// Answers:
///   ["ENCODED", ENVELOPE]
///   ["PARSED", COMMAND, EXIT, [LINE, ...], OUTPUT_LIMIT_REACHED]
///   ["NONE"]            (not an envelope)
///   ["BADREQ", WHY]     (the request is not one of these)
///
/// Requests are read as upstream's checker reads them: an `exit_code` that
/// is not a number is no code, a number is truncated toward zero and
/// saturated to 32 bits; an `output_limit_reached` other than `true` is
/// false; a request with `encode` and a string `error` is an error's; a
/// number past f64 is infinite (and saturates); a lone surrogate escape is
/// U+FFFD (as the oracle writes it). A line that is not JSON is `BADREQ`
/// with serde_json's reason (the oracle's words differ), but for an empty
/// line or JSON cut short: `Unexpected end of file`.
///
/// Each answer is written before the next request is read, when no more
/// input is waiting. Exit status: 0, or 2 on an I/O error.
#[derive(Args)]
// Verbatim: clap would run the request and answer lists into one paragraph.
#[command(
    verbatim_doc_comment,
    after_help = "Examples:
  echo '{\"encode\":\"ls\",\"exit_code\":0,\"text\":\"a\",\"output_limit_reached\":false}' | serve-command shell
  echo '{\"parse\":\"just a prompt\"}' | serve-command shell
  serve-command shell requests.jsonl > answers.jsonl"
)]
pub struct Shell {
    /// The requests to read (`-` or none: stdin).
    file: Option<PathBuf>,
}

pub fn run(args: Shell) -> output::Result<()> {
    let (name, input): (String, Box<dyn Read>) = match &args.file {
        Some(path) if path.as_os_str() != "-" => {
            let name = path.display().to_string();
            let file = File::open(path).map_err(|e| io_error(&name, &e))?;
            (name, Box::new(file))
        }
        _ => ("stdin".to_owned(), Box::new(io::stdin().lock())),
    };
    let mut input = BufReader::with_capacity(64 * 1024, input);
    let mut out = BufWriter::with_capacity(64 * 1024, io::stdout().lock());
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = input
            .read_until(b'\n', &mut line)
            .map_err(|e| io_error(&name, &e))?;
        if n == 0 {
            break;
        }
        if line.last() == Some(&b'\n') {
            line.pop();
            if line.last() == Some(&b'\r') {
                line.pop();
            }
        }
        // The oracle's reader decodes UTF-8 replacing what is not.
        let request = String::from_utf8_lossy(&line);
        out.write_all(answer(&request).as_bytes())
            .and_then(|()| out.write_all(b"\n"))
            .map_err(stdout_error)?;
        if input.buffer().is_empty() {
            out.flush().map_err(stdout_error)?;
        }
    }
    out.flush().map_err(stdout_error)
}

/// The answer to one request line, as `oracle-shell` writes it (compact
/// JSON, non-ASCII as it is: serde_json's writer).
fn answer(request: &str) -> String {
    let value: Value = match serde_json::from_str(request) {
        Ok(value) => value,
        Err(e) if e.is_eof() => return badreq("Unexpected end of file"),
        Err(e) => match as_serde_reads(request).and_then(|r| serde_json::from_str(&r).ok()) {
            Some(value) => value,
            None => return badreq(&e.to_string()),
        },
    };
    let string = |key: &str| value.get(key).and_then(Value::as_str);
    let json = if let (Some(command), Some(error)) = (string("encode"), string("error")) {
        serde_json::to_string(&("ENCODED", shell::encode(command, Err(error))))
    } else if let (Some(command), Some(exit_code), Some(text), Some(limit)) = (
        string("encode"),
        value.get("exit_code"),
        string("text"),
        value.get("output_limit_reached"),
    ) {
        let output = ShellOutput::new(
            // The oracle's `Double::to_int`: toward zero, saturating (what
            // `as` does).
            exit_code.as_f64().map(|n| n as i32),
            text,
            limit == &Value::Bool(true),
        );
        serde_json::to_string(&("ENCODED", shell::encode(command, Ok(&output))))
    } else if let Some(content) = string("parse") {
        match shell::parse(content) {
            None => serde_json::to_string(&["NONE"]),
            Some(p) => serde_json::to_string(&(
                "PARSED",
                p.command,
                p.exit,
                p.output,
                p.output_limit_reached,
            )),
        }
    } else {
        return badreq("unknown request");
    };
    // Strings, arrays and bools always serialize.
    json.unwrap_or_default()
}

/// The request with what the oracle's reader takes and serde_json refuses
/// made into what serde_json reads to the same answer; `None` if there is
/// none. A lone surrogate escape becomes `\ufffd` (one char either way, and
/// the oracle's UTF-8 output writes it as U+FFFD); a number past `f64`
/// (infinite to the oracle), the largest finite one of its sign (both
/// saturate as an exit code).
fn as_serde_reads(request: &str) -> Option<String> {
    let b = request.as_bytes();
    let mut out = String::with_capacity(request.len());
    let mut changed = false;
    let mut copied = 0;
    let mut i = 0;
    let mut in_string = false;
    let hex = |at: usize| -> Option<u32> {
        let digits = request.get(at..at + 4)?;
        if digits.bytes().all(|c| c.is_ascii_hexdigit()) {
            u32::from_str_radix(digits, 16).ok()
        } else {
            None
        }
    };
    while i < b.len() {
        match b[i] {
            b'"' => {
                in_string = !in_string;
                i += 1;
            }
            b'\\' if in_string => {
                if b.get(i + 1) == Some(&b'u') {
                    match hex(i + 2) {
                        Some(0xD800..=0xDBFF)
                            if request.get(i + 6..i + 8) == Some("\\u")
                                && matches!(hex(i + 8), Some(0xDC00..=0xDFFF)) =>
                        {
                            i += 12;
                        }
                        Some(0xD800..=0xDFFF) => {
                            out.push_str(&request[copied..i]);
                            out.push_str("\\ufffd");
                            changed = true;
                            i += 6;
                            copied = i;
                        }
                        _ => i += 2,
                    }
                } else {
                    i += 2;
                }
            }
            b'-' | b'0'..=b'9' if !in_string => {
                let end = b[i..]
                    .iter()
                    .position(|c| !matches!(c, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
                    .map_or(b.len(), |n| i + n);
                let token = &request[i..end];
                if token.parse::<f64>().is_ok_and(f64::is_infinite) {
                    out.push_str(&request[copied..i]);
                    out.push_str(if b[i] == b'-' {
                        "-1.7976931348623157e308"
                    } else {
                        "1.7976931348623157e308"
                    });
                    changed = true;
                    copied = end;
                }
                i = end;
            }
            _ => i += 1,
        }
    }
    out.push_str(request.get(copied..)?);
    changed.then_some(out)
}

fn badreq(why: &str) -> String {
    serde_json::to_string(&("BADREQ", why)).unwrap_or_default()
}
