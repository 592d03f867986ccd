//! The line checks' scenarios: the lines each sends, built from the vectors.
//!
//! Each is one run of the engine: the lines fed, from the crate's vectors
//! (built in), and in what pieces.

use super::report::Level;
use super::run::Feed;
use crate::v2::{self, Command, CommandReader, Content, ContentPart, Image, DEFAULT_MAX_LINE_LEN};
use serde_json::Value;
use std::time::Duration;

/// The crate's vectors, whose lines the checks send; `tests/` ships in the
/// package.
const VECTORS_V2: &str = include_str!("../../tests/vectors/commands-v2.jsonl");
const SERVE_V2: &str = include_str!("../../tests/vectors/serve-v2.jsonl");
/// The length of `long-prompt`'s line, LF excluded: 4 MiB, a prompt with
/// an image as a controller sends one, well within any engine's limit.
const LONG_PROMPT_LEN: usize = 4 << 20;
/// How long `long-prompt` waits at most, after its jobs_snapshot is
/// written, for its answer before it sends its `cancel`.
const CANCEL_AFTER: Duration = Duration::from_secs(2);
/// `long-prompt`'s image: a real 1 × 1 PNG, 67 bytes (the text fills the
/// line; an engine passes an image on without decoding its pixels).
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\0\0\0\0\x3a\x7e\x9b\x55\
    \0\0\0\nIDAT\x78\xda\x63\xf8\x0f\0\x01\x01\x01\0\x1c\xb0\x8c\x99\0\0\0\0IEND\xae\x42\x60\x82";

/// One run of the engine: the lines fed, in what pieces.
pub(super) struct Scenario {
    pub(super) name: &'static str,
    pub(super) level: Level,
    pub(super) rule: String,
    pub(super) feed: Feed,
    /// The long line the scenario is about, its number and what it is: a
    /// failure names it, and how the engine ended on it.
    pub(super) long: Option<(u64, String)>,
    /// Why the check fails whatever the engine does (its declared limit is
    /// shorter than a line every engine must read).
    pub(super) fails: Option<String>,
}

/// A `jobs_snapshot` line with `id`, LF excluded: the probe.
fn snapshot(id: &str) -> Vec<u8> {
    line_of(&Command::jobs_snapshot(id))
}

/// `command`'s line, LF excluded.
fn line_of(command: &Command) -> Vec<u8> {
    let mut line = Vec::new();
    command.write_line(&mut line).expect("writing to a Vec");
    line.pop();
    line
}

/// `long-prompt`'s line: a prompt of exactly [`LONG_PROMPT_LEN`] bytes,
/// LF excluded, a text part and a real PNG image, the text filling what
/// the image leaves.
fn long_prompt() -> Vec<u8> {
    let image = Image::from_bytes(PNG.to_vec()).expect("a PNG");
    let line = |text: String| {
        line_of(&Command::prompt(Content::new(vec![
            ContentPart::from(text),
            ContentPart::from(image.clone()),
        ])))
    };
    let bare = line(String::new()).len();
    let text: String = "check-engine: a prompt of 4 MiB, as a controller may send one. "
        .chars()
        .cycle()
        .take(LONG_PROMPT_LEN - bare)
        .collect();
    line(text)
}

/// The vectors' lines (those that fit on one line) that the crate's reader
/// judges as `keep` says, in the vectors' order.
fn vector_lines(text: &str, keep: impl Fn(&Item) -> bool) -> Vec<Vec<u8>> {
    text.lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter_map(|vector| {
            use base64::Engine;
            match (vector.get("line"), vector.get("line_base64")) {
                (Some(Value::String(line)), _) => Some(line.as_bytes().to_vec()),
                (_, Some(Value::String(b64))) => {
                    base64::engine::general_purpose::STANDARD.decode(b64).ok()
                }
                _ => None,
            }
        })
        .filter(|line| !line.contains(&b'\n'))
        .filter(|line| {
            CommandReader::with_max_line_len(&line[..], usize::MAX)
                .next()
                .is_some_and(|item| keep(&item))
        })
        .collect()
}

type Item = Result<Command, v2::ReadError>;

/// JSON, but not a command: refused, and reading goes on.
fn protocol_error(item: &Item) -> bool {
    matches!(item, Err(e) if !e.is_stream_error())
}

/// A command the serve policy declines.
fn declined(item: &Item) -> bool {
    matches!(item, Ok(command) if command.serve_refusal().is_some())
}

/// Not JSON: refused, and reading stops.
fn not_json(item: &Item) -> bool {
    matches!(item, Err(e) if e.is_stream_error())
}

/// `lines`, each with `end` after it.
fn joined(lines: &[Vec<u8>], end: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for line in lines {
        out.extend_from_slice(line);
        out.extend_from_slice(end);
    }
    out
}

/// `line`, a JSON object, padded with spaces before its `}` to `len`
/// bytes (or left as it is when it is longer).
fn padded(mut line: Vec<u8>, len: usize) -> Vec<u8> {
    let len = len.max(line.len());
    let close = line.pop().expect("a JSON object");
    line.resize(len - 1, b' ');
    line.push(close);
    line
}

/// The scenarios, in the order of the table on
/// [`CheckEngine`](super::CheckEngine), for an
/// engine that declared the limit `declared`, if it did.
pub(super) fn scenarios(declared: Option<usize>) -> Vec<Scenario> {
    let limit = declared.unwrap_or(DEFAULT_MAX_LINE_LEN);
    // Only lines every engine reads: one over the engine's limit ends its
    // reading, and past the 4 MiB of `long-prompt` a line's length is
    // `line-at-limit`'s business (a should), not these musts'.
    let fits = |lines: Vec<Vec<u8>>| -> Vec<Vec<u8>> {
        let max = limit.min(LONG_PROMPT_LEN);
        lines.into_iter().filter(|l| l.len() <= max).collect()
    };
    let all_errors = vector_lines(VECTORS_V2, protocol_error);
    let all_refusals = vector_lines(SERVE_V2, declined);
    let refused = all_refusals[0].clone();
    let error = all_errors[0].clone();
    let errors = fits(all_errors);
    let refusals = fits(all_refusals);
    // The shortest, for a readable report.
    let bad = vector_lines(VECTORS_V2, not_json)
        .into_iter()
        .min_by_key(Vec::len)
        .expect("the vectors have lines that are not JSON");
    let whole = |name, level, rule: String, input: Vec<u8>| Scenario {
        name,
        level,
        rule,
        feed: Feed::whole(input),
        long: None,
        fails: None,
    };
    let mut out = Vec::new();

    let mut lines = errors.clone();
    lines.push(snapshot("check-engine-after-errors"));
    out.push(whole(
        "protocol-errors",
        Level::Must,
        format!(
            "each of the vectors' {} lines that are JSON but not a command is answered by one command_error with its exact message, in order, and the engine reads on",
            errors.len()
        ),
        joined(&lines, b"\n"),
    ));

    let mut lines = refusals.clone();
    lines.push(snapshot("check-engine-after-refusals"));
    out.push(whole(
        "serve-refusals",
        Level::Must,
        format!(
            "each of the vectors' {} commands the serve policy declines is answered by one command_error with its exact message, in order, and the engine reads on",
            refusals.len()
        ),
        joined(&lines, b"\n"),
    ));

    out.push(whole(
        "not-json",
        Level::Must,
        "a line that is not JSON is answered by exactly one command_error whose message begins `command stream: ` (the rest is the engine's JSON parser's), and no line after it is answered".to_owned(),
        joined(
            &[
                snapshot("check-engine-before"),
                bad,
                snapshot("check-engine-unread"),
                refused.clone(),
            ],
            b"\n",
        ),
    ));

    let mut input = b"\n \n\t\r\n".to_vec();
    input.extend(joined(&[snapshot("check-engine-blank-1")], b"\n"));
    input.extend_from_slice(b"\n   \n");
    input.extend(joined(
        &[refused.clone(), snapshot("check-engine-blank-2")],
        b"\n",
    ));
    out.push(whole(
        "blank-lines",
        Level::Must,
        "blank lines (of spaces, tabs and CRs) are skipped, unanswered".to_owned(),
        input,
    ));

    out.push(whole(
        "crlf",
        Level::Must,
        "lines ending in CRLF are read as lines (the CR is JSON whitespace)".to_owned(),
        joined(
            &[
                snapshot("check-engine-crlf-1"),
                error.clone(),
                snapshot("check-engine-crlf-2"),
            ],
            b"\r\n",
        ),
    ));

    let input = joined(
        &[
            snapshot("check-engine-split-1"),
            refused.clone(),
            snapshot("check-engine-split-2"),
        ],
        b"\n",
    );
    let mut pieces = Vec::new();
    let mut rest = &input[..];
    for size in [1, 2, 3, 5, 8].into_iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let (piece, tail) = rest.split_at(size.min(rest.len()));
        pieces.push(piece.to_vec());
        rest = tail;
    }
    out.push(Scenario {
        name: "split-writes",
        level: Level::Must,
        rule: format!(
            "lines arriving in {} writes of 1 to 8 bytes, 2 ms apart, are read whole",
            pieces.len()
        ),
        feed: Feed {
            pieces,
            pause: Duration::from_millis(2),
            until: None,
        },
        long: None,
        fails: None,
    });

    let mut input = joined(&[error], b"\n");
    input.extend(snapshot("check-engine-no-lf"));
    out.push(whole(
        "no-final-lf",
        Level::Must,
        "a last line without LF is read at the end of input".to_owned(),
        input,
    ));

    // A `cancel` last, so that an engine with a model need not run the
    // turn out; sent once the jobs_snapshot is answered (or 2 s after), so
    // that an engine that stops answering at a `cancel` fails the cancel
    // check, named, not this one.
    let prompt = long_prompt();
    let what = format!("a prompt of {} bytes with a PNG image", prompt.len());
    out.push(Scenario {
        fails: (prompt.len() > limit).then(|| {
            format!(
                "the declared limit, {limit} bytes, is shorter than line 1, {what}, a line every engine must read"
            )
        }),
        long: Some((1, what)),
        feed: Feed {
            pieces: vec![
                joined(&[prompt, snapshot("check-engine-long-prompt")], b"\n"),
                joined(&[line_of(&Command::Cancel)], b"\n"),
            ],
            pause: CANCEL_AFTER,
            until: Some(b"\"check-engine-long-prompt\"".to_vec()),
        },
        ..whole(
            "long-prompt",
            Level::Must,
            format!(
                "a prompt of {} bytes (4 MiB: a text part and a real PNG image), a line every engine meets, is read, and the engine reads on: a jobs_snapshot after it is answered",
                LONG_PROMPT_LEN
            ),
            Vec::new(),
        )
    });

    let line = padded(snapshot("check-engine-at-limit"), limit);
    let len = line.len();
    let (rule, what) = match declared {
        None => (
            format!("a line of exactly {len} bytes (64 MiB, the crate's limit; JSON padded with spaces) is read"),
            format!("a line of {len} bytes, the crate's limit"),
        ),
        Some(_) => (
            format!("a line of exactly {len} bytes (the engine's limit, as declared; JSON padded with spaces) is read"),
            format!("a line of {len} bytes, the declared limit"),
        ),
    };
    out.push(Scenario {
        long: Some((1, what)),
        ..whole("line-at-limit", Level::Should, rule, joined(&[line], b"\n"))
    });

    if let Some(max) = declared {
        let line = padded(snapshot("check-engine-over-limit"), max.saturating_add(1));
        let len = line.len();
        out.push(Scenario {
            long: Some((1, format!("a line of {len} bytes, over the declared limit of {max}"))),
            ..whole(
                "line-over-limit",
                Level::Must,
                format!(
                    "a line of {len} bytes, over the declared limit of {max}, is answered by one command_error whose message begins `command stream: `, and no line after it is answered"
                ),
                joined(&[line, snapshot("check-engine-over-limit-unread")], b"\n"),
            )
        });
    }

    out.push(whole(
        "jobs-snapshot",
        Level::Must,
        "jobs_snapshot is answered by a jobs_snapshot event with the same request_id".to_owned(),
        joined(&[snapshot("check-engine-snapshot")], b"\n"),
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::{long_prompt, LONG_PROMPT_LEN, PNG};
    use crate::v2::{Command, CommandReader, ContentPart};

    /// `long-prompt`'s line is exactly 4 MiB, a prompt the crate reads,
    /// of a text part and the PNG.
    #[test]
    fn the_long_prompt_is_a_4_mib_prompt_with_a_png() {
        let line = long_prompt();
        assert_eq!(line.len(), LONG_PROMPT_LEN);
        let command = CommandReader::new(&line[..]).next().unwrap().unwrap();
        let Command::Prompt { content, .. } = command else {
            panic!("not a prompt")
        };
        let parts = content.parts();
        assert!(
            matches!(&parts[0], ContentPart::Text(t) if t.starts_with("check-engine: a prompt of 4 MiB"))
        );
        assert!(matches!(&parts[1], ContentPart::Image(i) if i.bytes() == PNG));
        assert_eq!(parts.len(), 2);
    }
}
