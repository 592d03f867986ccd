//! [`proptest`](mod@proptest) strategies for the later revision: commands,
//! and near-miss command lines paired with the outcome this crate gives
//! them (feature `proptest`), as [`v1::strategy`](crate::v1::strategy)
//! does for v1's.
//!
//! ```
//! use proptest::prelude::*;
//! use serve_command::v2::{strategy, Command};
//!
//! proptest!(|(cmd in strategy::command())| {
//!     prop_assert_eq!(Command::from_slice(cmd.to_line().as_bytes()), Ok(cmd));
//! });
//! proptest!(|((line, outcome) in strategy::line())| {
//!     let got = Command::from_slice(line.as_bytes()).map_err(|e| e.to_string());
//!     prop_assert_eq!(got, outcome);
//! });
//! ```
//!
//! And for the engine's events, which a controller reads: [`event()`],
//! [`job_record()`], and [`event_line()`], near-miss event lines paired
//! with the outcome upstream's `parse` gives them, predicted by a statement
//! of its rules of their own (not asked of the decoder).
//!
//! ```
//! use proptest::prelude::*;
//! use serve_command::v2::{strategy, Event, EventLineError};
//!
//! proptest!(|(event in strategy::event())| {
//!     prop_assert_eq!(Event::from_slice(event.to_line().as_bytes()), Ok(event));
//! });
//! proptest!(|((line, outcome) in strategy::event_line())| {
//!     let got = Event::from_slice(line.as_bytes());
//!     prop_assert_eq!(got, outcome.map_err(EventLineError::NotAnEvent));
//! });
//! ```

// The events' strategies live beside the events (`src/v2/event/`).
pub use crate::v2::event::strategy::{event, event_line, job_record};

use crate::v1::strategy::{
    bent_lines, field_value, key as v1_key, name as v1_name, wire_string, J,
};
use crate::v1::SteerKind;
use crate::v2::encode::Val;
use crate::v2::{Command, Content, ContentPart, Image};
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;
use proptest::sample::select;
use std::convert::Infallible;

/// The first bytes of each format, and of near misses.
const HEADERS: &[&[u8]] = &[
    b"\x89PNG\r\n\x1a\n",
    b"\xff\xd8\xff",
    b"GIF87a",
    b"GIF89a",
    b"RIFF\0\0\0\0WEBP",
];

/// Bytes that are no image: short or bent headers.
const NOT_IMAGES: &[&[u8]] = &[
    b"",
    b"\x89PNG\r\n\x1a",
    b"\x89PNG\r\n\x1b\n",
    b"\xff\xd8",
    b"GIF88a",
    b"RIFF\0\0\0\0WEBQ",
    b"RIFF\0\0\0WEBP",
    b"BM",
    b"<svg",
];

const MEDIA_TYPES: &[&str] = &[
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/webp",
    "image/PNG",
    "image/jpg",
    "image/svg+xml",
    "",
    "image/png ",
];

/// A small valid image: a format's header, then a few arbitrary bytes.
pub fn image() -> impl Strategy<Value = Image> {
    (select(HEADERS), vec(any::<u8>(), 0..12)).prop_filter_map("a valid image", |(h, tail)| {
        let mut bytes = h.to_vec();
        bytes.extend(tail);
        Image::from_bytes(bytes).ok()
    })
}

/// Content: mostly one text part (what the wire writes as a string), else
/// up to four parts of text and small images, or none.
pub fn content() -> impl Strategy<Value = Content> {
    let part = prop_oneof![
        wire_string().prop_map(ContentPart::Text),
        image().prop_map(ContentPart::Image),
    ];
    prop_oneof![
        2 => wire_string().prop_map(Content::from),
        2 => vec(part, 0..4).prop_map(Content::new),
    ]
}

/// A job component the decoder accepts.
pub(crate) fn component() -> impl Strategy<Value = String> {
    "[A-Za-z0-9._-]{1,12}".prop_map(|s| if s == "." || s == ".." { s + "x" } else { s })
}

/// Any command the decoder reads back: strings drawn to stress an encoder,
/// content of text and small valid images, valid job fields.
pub fn command() -> impl Strategy<Value = Command> {
    let kind = prop_oneof![Just(SteerKind::Prompt), Just(SteerKind::Command)];
    let request_id = || wire_string().prop_map(|s| if s.is_empty() { "r".into() } else { s });
    prop_oneof![
        (content(), option::of(wire_string())).prop_map(|(content, submission_id)| {
            Command::Prompt {
                content,
                submission_id,
            }
        }),
        (kind, content(), option::of(wire_string())).prop_map(|(kind, content, submission_id)| {
            Command::Steer {
                kind,
                content,
                submission_id,
            }
        }),
        Just(Command::Compact),
        Just(Command::Cancel),
        request_id().prop_map(|request_id| Command::JobsSnapshot { request_id }),
        (request_id(), component(), component()).prop_map(|(request_id, generation, job_id)| {
            Command::JobStop {
                request_id,
                generation,
                job_id,
            }
        }),
        (wire_string(), any::<bool>()).prop_map(|(text, auto)| Command::GoalSet { text, auto }),
        Just(Command::GoalClear),
        (wire_string(), any::<bool>())
            .prop_map(|(id, allow)| Command::ApprovalDecision { id, allow }),
    ]
    // Boxed: with ten arms or fewer `prop_oneof!` keeps every arm's value
    // tree inline, and the near-miss lines nest this in enough strategies
    // to overflow a test thread's stack in a debug build.
    .boxed()
}

/// A `request_id` the old `predict` (642262b0) accepted: 1 to 128 UTF-16
/// code units, at the limit now and then. Today such a line is
/// `unknown command: predict` all the same: these lines are the old
/// guards, kept so a decoder that still knows them is caught.
fn prediction_id() -> impl Strategy<Value = String> {
    let at_limit = prop_oneof![
        Just("p".repeat(128)),
        Just(format!("{}\u{1F600}", "p".repeat(126))),
        Just("\u{1F600}".repeat(64)),
    ];
    prop_oneof![
        8 => wire_string().prop_map(|s| {
            let mut id = String::new();
            for c in s.chars() {
                if id.encode_utf16().count() + c.len_utf16() > 128 {
                    break;
                }
                id.push(c);
            }
            if id.is_empty() { "p".into() } else { id }
        }),
        1 => at_limit,
    ]
}

/// A near-miss v2 line, without its LF, and the outcome this crate gives
/// it: `Ok(command)` or `Err(message)`, the `command_error` wire string.
///
/// Lines are JSON (never a lone surrogate escape, never a LF). Besides the
/// v1 strategy's bends (fields dropped, retyped, duplicated, renamed,
/// reordered, escaped, spaced), they hold content arrays with parts that
/// are not objects, of unknown or missing type, with missing or non-string
/// fields; images valid and broken (unpadded, over-padded, trailing bits,
/// URL-safe, spaces, non-ASCII base64; bytes of no format; another media
/// type); legacy `text` with data-URL `images`, good and bad; job
/// commands with empty, `.`, `..`, 201-character and non-ASCII fields; and
/// the retired prediction commands (`unknown command` since fdf10827) with
/// the fields their old guards read: ids around 128 UTF-16 units and
/// `source_sequence`s around the edges of 1 to 2147483647, whole and not,
/// in every spelling JSON allows.
pub fn line() -> impl Strategy<Value = (String, Result<Command, String>)> {
    let object = prop_oneof![
        3 => command().prop_map(|cmd| entries_of(&cmd)),
        3 => message_line(),
        2 => job_line(),
        2 => prediction_line(),
        2 => (name(), vec((key(), field_value()), 0..5)).prop_map(|(name, mut rest)| {
            rest.insert(0, ("command".to_owned(), J::Str(name)));
            rest
        }),
        1 => vec((key(), value()), 0..6),
    ];
    bent_lines(object, 0..3, field_value(), Command::from_slice)
}

const NAMES: &[&str] = &[
    "jobs_snapshot",
    "job_stop",
    "jobs",
    "job_stop ",
    "Job_stop",
    "predict",
    "cancel_prediction",
    "Predict",
    "prediction",
    "cancel_predict",
];

fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => v1_name(),
        1 => select(NAMES).prop_map(str::to_owned),
    ]
}

const KEYS: &[&str] = &[
    "content",
    "images",
    "request_id",
    "generation",
    "job_id",
    "source_sequence",
    "submission_id",
    "type",
    "media_type",
    "data",
    "Content",
    "image",
];

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        2 => v1_key(),
        1 => select(KEYS).prop_map(str::to_owned),
    ]
}

/// Any value, with this revision's structures among them.
fn value() -> BoxedStrategy<J> {
    prop_oneof![
        3 => field_value(),
        1 => content_value(),
        1 => images_value(),
    ]
    .boxed()
}

/// Base64 that is not canonical padded base64 of these bytes, or is.
fn data(bytes: Vec<u8>, bend: u8) -> String {
    let good = STANDARD.encode(&bytes);
    match bend % 12 {
        0 => good.trim_end_matches('=').to_owned(),
        1 => format!("{good}="),
        2 => format!("{good}===="),
        3 if good.ends_with("=") => {
            // Nonzero trailing bits before the padding.
            let mut b = good.into_bytes();
            let i = b.iter().position(|&c| c == b'=').unwrap_or(1) - 1;
            b[i] = if b[i] == b'B' { b'C' } else { b'B' };
            String::from_utf8(b).unwrap_or_default()
        }
        4 => good.replace('+', "-").replace('/', "_") + "-_",
        5 => format!(" {good}"),
        6 => format!("{good}\n"),
        7 => format!("é{good}"),
        8 => good.to_lowercase(),
        _ => good,
    }
}

fn image_bytes() -> impl Strategy<Value = Vec<u8>> {
    let head = prop_oneof![4 => select(HEADERS), 1 => select(NOT_IMAGES)];
    (head, vec(any::<u8>(), 0..10)).prop_map(|(h, tail)| {
        let mut b = h.to_vec();
        b.extend(tail);
        b
    })
}

fn media_type() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => select(MEDIA_TYPES).prop_map(str::to_owned),
        1 => wire_string(),
    ]
}

/// A data string: mostly good, often bent.
fn data_value() -> BoxedStrategy<String> {
    (
        image_bytes(),
        prop_oneof![2 => Just(255u8), 1 => any::<u8>()],
    )
        .prop_map(|(bytes, bend)| data(bytes, bend))
        .boxed()
}

/// An image part whose media type usually matches its bytes.
fn image_part() -> BoxedStrategy<J> {
    (
        image_bytes(),
        prop_oneof![3 => Just(255u8), 1 => any::<u8>()],
        prop_oneof![3 => Just(None), 1 => media_type().prop_map(Some)],
    )
        .prop_map(|(bytes, bend, declared)| {
            let sniffed = Image::from_bytes(bytes.clone())
                .map(|i| i.media_type())
                .unwrap_or("image/png");
            J::Obj(vec![
                ("type".into(), J::Str("image".into())),
                (
                    "media_type".into(),
                    J::Str(declared.unwrap_or_else(|| sniffed.to_owned())),
                ),
                ("data".into(), J::Str(data(bytes, bend))),
            ])
        })
        .boxed()
}

/// A content part, or a near miss of one.
fn part_value() -> BoxedStrategy<J> {
    let part_key = select(&["type", "text", "media_type", "data", "Type", "kind"][..]);
    let part_field = prop_oneof![
        2 => select(&["text", "image", "Text", "", "images"][..]).prop_map(|s| J::Str(s.into())),
        2 => wire_string().prop_map(J::Str),
        1 => data_value().prop_map(J::Str),
        1 => media_type().prop_map(J::Str),
        2 => field_value(),
    ];
    prop_oneof![
        4 => wire_string().prop_map(|t| J::Obj(vec![
            ("type".into(), J::Str("text".into())),
            ("text".into(), J::Str(t)),
        ])),
        4 => image_part(),
        3 => vec((part_key.prop_map(str::to_owned), part_field), 0..5).prop_map(J::Obj),
        1 => field_value(),
    ]
    .boxed()
}

/// A `content` value: a string, an array of parts, or neither.
pub(crate) fn content_value() -> BoxedStrategy<J> {
    prop_oneof![
        2 => wire_string().prop_map(J::Str),
        5 => vec(part_value(), 0..4).prop_map(J::Arr),
        1 => field_value(),
    ]
    .boxed()
}

/// A data URL, or a near miss of one.
fn url_value() -> BoxedStrategy<J> {
    (data_value(), media_type(), any::<u8>())
        .prop_map(|(data, mt, bend)| {
            J::Str(match bend % 8 {
                0 => format!("data:{mt},{data}"),
                1 => format!("DATA:{mt};base64,{data}"),
                2 => format!("{mt};base64,{data}"),
                3 => format!("data:{mt};base64,{data};base64,"),
                _ => format!("data:{mt};base64,{data}"),
            })
        })
        .boxed()
}

fn images_value() -> BoxedStrategy<J> {
    prop_oneof![
        5 => vec(prop_oneof![6 => url_value(), 1 => field_value()], 0..3).prop_map(J::Arr),
        1 => field_value(),
    ]
    .boxed()
}

/// A `prompt` or `steer` line with content, legacy text and images, or
/// both, and the fields around them.
fn message_line() -> BoxedStrategy<Vec<(String, J)>> {
    (
        select(&["prompt", "steer"][..]),
        option::of(content_value()),
        option::of(prop_oneof![3 => wire_string().prop_map(J::Str), 1 => field_value()]),
        option::of(images_value()),
        option::of(prop_oneof![3 => wire_string().prop_map(J::Str), 1 => field_value()]),
        option::of(prop_oneof![
            3 => select(&["prompt", "command", "notice"][..]).prop_map(|s| J::Str(s.into())),
            1 => field_value(),
        ]),
    )
        .prop_map(|(name, content, text, images, tag, kind)| {
            let mut out = vec![("command".to_owned(), J::Str(name.into()))];
            for (k, v) in [
                ("content", content),
                ("text", text),
                ("images", images),
                ("submission_id", tag),
                ("kind", kind),
            ] {
                if let Some(v) = v {
                    out.push((k.to_owned(), v));
                }
            }
            out
        })
        .boxed()
}

/// A job command line, its fields valid or near misses.
fn job_line() -> BoxedStrategy<Vec<(String, J)>> {
    let field = prop_oneof![
        3 => component().prop_map(J::Str),
        2 => select(&["", ".", "..", "...", "a/b", "é", "a b", "../x"][..])
            .prop_map(|s| J::Str(s.into())),
        1 => (199usize..=202).prop_map(|n| J::Str("x".repeat(n))),
        1 => wire_string().prop_map(J::Str),
        1 => field_value(),
    ];
    (
        select(&["jobs_snapshot", "job_stop"][..]),
        vec(
            (select(&["request_id", "generation", "job_id"][..]), field),
            0..4,
        ),
    )
        .prop_map(|(name, fields)| {
            let mut out = vec![("command".to_owned(), J::Str(name.into()))];
            out.extend(fields.into_iter().map(|(k, v)| (k.to_owned(), v)));
            out
        })
        .boxed()
}

/// `source_sequence` texts at the rule's edges: zero and its spellings,
/// whole numbers written as fractions and exponents, the ends of the range
/// and just past them, decimals that round to a whole double and ones that
/// do not, overflow and underflow.
const SEQUENCES: &[&str] = &[
    "0",
    "-0",
    "0.0",
    "0e5",
    "1",
    "-1",
    "1.0",
    "1e0",
    "1E+0",
    "10e-1",
    "0.1e1",
    "1.5",
    "0.5",
    "2.5e1",
    "1e9",
    "1e10",
    "2147483646",
    "2147483647",
    "2147483647.0",
    "2147483648",
    "-2147483648",
    "4294967297",
    "2147483646.99999999999",
    "2147483647.0000001",
    "2147483647.0000003",
    "2147483647.4999999",
    "2147483646.5",
    "0.99999999999999999",
    "1.00000000000000001",
    "1.0000000000000002",
    "0.9999999999999999",
    "1e400",
    "-1e400",
    "1e-400",
    "1e308",
    "123456789012345678901234567890e-29",
    "100000000000000000000000000000000000000000e-41",
];

/// A `source_sequence` text: an edge, a whole number in or out of range, or
/// one spelled with a fraction or an exponent.
pub(crate) fn sequence_text() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => select(SEQUENCES).prop_map(str::to_owned),
        2 => (1..=i32::MAX).prop_map(|n| n.to_string()),
        1 => any::<i64>().prop_map(|n| n.to_string()),
        1 => (1..=i32::MAX, 0u8..4).prop_map(|(n, zeros)| format!("{n}.{}", "0".repeat(usize::from(zeros) + 1))),
        1 => (1u32..=999_999, 0u32..12).prop_map(|(n, e)| format!("{n}e{e}")),
        1 => (1u32..=999_999, 1usize..7).prop_map(|(n, places)| {
            let digits = format!("{n:0>7}");
            let (whole, frac) = digits.split_at(7 - places);
            // JSON allows no leading zero.
            let whole = whole.trim_start_matches('0');
            format!("{}.{frac}", if whole.is_empty() { "0" } else { whole })
        }),
    ]
}

/// A retired prediction command line, its fields as the old guards would
/// have taken them or near misses: each is `unknown command` now.
fn prediction_line() -> BoxedStrategy<Vec<(String, J)>> {
    let id = prop_oneof![
        4 => prediction_id().prop_map(J::Str),
        1 => (126usize..=130).prop_map(|n| J::Str("p".repeat(n))),
        1 => (62usize..=66).prop_map(|n| J::Str("\u{1F600}".repeat(n))),
        1 => Just(J::Str(String::new())),
        1 => field_value(),
    ];
    let sequence = prop_oneof![
        5 => sequence_text().prop_map(J::Num),
        1 => field_value(),
    ];
    (
        select(&["predict", "cancel_prediction"][..]),
        option::of(id),
        option::of(sequence),
        any::<bool>(),
    )
        .prop_map(|(name, id, sequence, sequence_first)| {
            let mut fields: Vec<(String, J)> = Vec::new();
            if let Some(id) = id {
                fields.push(("request_id".into(), id));
            }
            if let Some(sequence) = sequence {
                fields.push(("source_sequence".into(), sequence));
            }
            if sequence_first {
                fields.reverse();
            }
            let mut out = vec![("command".to_owned(), J::Str(name.into()))];
            out.extend(fields);
            out
        })
        .boxed()
}

/// The command's wire entries, in the encoder's order.
fn entries_of(cmd: &Command) -> Vec<(String, J)> {
    let mut out = Vec::new();
    let Ok(()) = cmd.entries(|key, val| -> Result<(), Infallible> {
        let value = match val {
            Val::Str(s) => J::Str(s.to_owned()),
            Val::Bool(b) => J::Bool(b),
            Val::Content(c) => content_j(c),
        };
        out.push((key.to_owned(), value));
        Ok(())
    });
    out
}

pub(crate) fn content_j(content: &Content) -> J {
    if let Some(text) = content.as_single_text() {
        return J::Str(text.to_owned());
    }
    J::Arr(
        content
            .iter()
            .map(|part| match part {
                ContentPart::Text(text) => J::Obj(vec![
                    ("type".into(), J::Str("text".into())),
                    ("text".into(), J::Str(text.clone())),
                ]),
                ContentPart::Image(image) => J::Obj(vec![
                    ("type".into(), J::Str("image".into())),
                    ("media_type".into(), J::Str(image.media_type().into())),
                    ("data".into(), J::Str(image.to_base64())),
                ]),
            })
            .collect(),
    )
}
