//! [`proptest`](mod@proptest) strategies: commands, and near-miss command
//! lines paired with the outcome this crate gives them (feature `proptest`).
//!
//! [`command()`] is for round-trip properties. [`line()`] is for testing a
//! decoder against this one: an engine in any language can be fed its lines
//! through a test harness and its answers compared with the outcome.
//!
//! ```
//! use proptest::prelude::*;
//! use serve_command::v1::{strategy, Command};
//!
//! proptest!(|(cmd in strategy::command())| {
//!     prop_assert_eq!(Command::from_slice(cmd.to_line().as_bytes()), Ok(cmd));
//! });
//! proptest!(|((line, outcome) in strategy::line())| {
//!     // Stand-in for the decoder under test.
//!     let got = Command::from_slice(line.as_bytes()).map_err(|e| e.to_string());
//!     prop_assert_eq!(got, outcome);
//! });
//! ```

use crate::error::LineError;
use crate::v1::encode::Val;
use crate::v1::rules::Key;
use crate::v1::{Command, SteerKind};
use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;
use proptest::sample::{select, Index};
use proptest::string::string_regex;
use std::convert::Infallible;
use std::fmt;
use std::ops::Range;

/// Any command, its strings drawn to stress an encoder: empty, quotes,
/// backslashes, control characters (NUL, LF, CR, tab, U+001F, DEL),
/// non-ASCII, U+2028/U+2029, a BOM, astral characters, and words of the
/// protocol (`"prompt"`, `"clear"`...) where a name is expected.
pub fn command() -> impl Strategy<Value = Command> {
    let kind = prop_oneof![Just(SteerKind::Prompt), Just(SteerKind::Command)];
    prop_oneof![
        (wire_string(), option::of(wire_string())).prop_map(|(text, submission_id)| {
            Command::Prompt {
                text,
                submission_id,
            }
        }),
        (kind, wire_string()).prop_map(|(kind, text)| Command::Steer { kind, text }),
        Just(Command::Compact),
        Just(Command::Cancel),
        (wire_string(), any::<bool>()).prop_map(|(text, auto)| Command::GoalSet { text, auto }),
        Just(Command::GoalClear),
        (wire_string(), any::<bool>())
            .prop_map(|(id, allow)| Command::ApprovalDecision { id, allow }),
    ]
}

/// A near-miss command line, without its LF, and the outcome this crate
/// gives it: `Ok(command)`, or `Err(message)` where `message` is the wire
/// string an engine puts in its `command_error` event (`ParseError`'s
/// `Display`).
///
/// Lines are always JSON (by the protocol's parser: numbers of any size, up
/// to 1024 levels of nesting), never contain a LF, and hold no lone
/// surrogate escape (`"\ud800"`, which today's reference refuses as not
/// JSON, as this crate does, but the early-2026 one read), so every outcome
/// is every reference's.
/// They start from a valid command or from a bag of the protocol's keys, and
/// are then bent: fields dropped, retyped (numbers, `null`, booleans, arrays,
/// objects, numbers too big for an `f64`, nesting past `serde_json`'s 128
/// levels), duplicated (the last one wins), renamed, reordered; unknown
/// command names and near-miss keys (`"Text"`, `"text "`); noise fields;
/// keys and strings partly written as `\u` escapes (`"te\u0078t"` is the
/// key `text`); whitespace (space, tab, CR) between tokens; and values that
/// are not objects at all.
///
/// The outcome is not predicted but asked of [`Command::from_slice`], which
/// the crate's tests hold to the reference.
pub fn line() -> impl Strategy<Value = (String, Result<Command, String>)> {
    let object = prop_oneof![
        3 => command().prop_map(|cmd| entries_of(&cmd)),
        2 => (name(), vec((key(), field_value()), 0..5)).prop_map(|(name, mut rest)| {
            rest.insert(0, ("command".to_owned(), J::Str(name)));
            rest
        }),
        1 => vec((key(), field_value()), 0..6),
    ];
    bent_lines(object, 0..4, not_an_object(), Command::from_slice)
}

/// A revision's near-miss lines: each `object` bent by a number of
/// mutations in `bends`, now and then (1 in 13) an `other` value that is
/// not an object, written in a drawn [`Style`], and paired with the
/// outcome `decode` gives the line.
pub(crate) fn bent_lines<C: fmt::Debug, E: fmt::Display>(
    object: impl Strategy<Value = Vec<(String, J)>>,
    bends: Range<usize>,
    other: impl Strategy<Value = J>,
    decode: fn(&[u8]) -> Result<C, LineError<E>>,
) -> impl Strategy<Value = (String, Result<C, String>)> {
    let top = prop_oneof![
        12 => (object, vec(mutation(), bends)).prop_map(|(mut entries, mutations)| {
            for m in mutations {
                m.apply(&mut entries);
            }
            Top::Object(entries)
        }),
        1 => other.prop_map(Top::Other),
    ];
    (top, style()).prop_map(move |(top, style)| {
        let line = style.render(&top);
        let outcome = outcome(decode(line.as_bytes()));
        (line, outcome)
    })
}

/// What an engine answers: the command, or its `command_error` message.
fn outcome<C, E: fmt::Display>(decoded: Result<C, LineError<E>>) -> Result<C, String> {
    match decoded {
        Ok(cmd) => Ok(cmd),
        Err(e @ LineError::Parse(_)) => Err(e.to_string()),
        // Never reached (lines are JSON), but if it were, this is the
        // message the engine would send.
        Err(LineError::Syntax(e)) => Err(format!("command stream: {e}")),
    }
}

/// Characters that break naive encoders and decoders.
const TRICKY: &[char] = &[
    '"',
    '\\',
    '/',
    '\n',
    '\r',
    '\t',
    '\0',
    '\u{8}',
    '\u{c}',
    '\u{1f}',
    '\u{7f}',
    '\u{80}',
    '\u{2028}',
    '\u{2029}',
    '\u{feff}',
    '\u{fffd}',
    'é',
    '日',
    '😀',
    '\u{10ffff}',
];

/// The protocol's own words, for strings that are read as names.
const WORDS: &[&str] = &[
    "", "prompt", "steer", "compact", "cancel", "goal", "approval", "command", "set", "clear",
    "notice", "true", "null", " ",
];

pub(crate) fn wire_string() -> impl Strategy<Value = String> {
    let ch = prop_oneof![
        4 => proptest::char::range(' ', '~'),
        2 => select(TRICKY),
        1 => any::<char>(),
    ];
    prop_oneof![
        4 => vec(ch, 0..12).prop_map(String::from_iter),
        1 => select(WORDS).prop_map(str::to_owned),
        1 => any::<String>(),
    ]
}

/// Command names and near misses: case, spacing, a NUL, a Cyrillic `а`.
const NAMES: &[&str] = &[
    "prompt",
    "steer",
    "compact",
    "cancel",
    "goal",
    "approval",
    "Prompt",
    "PROMPT",
    "prompt ",
    " steer",
    "promp",
    "prompts",
    "steer\0",
    "notice",
    "approve",
    "goal_set",
    "set",
    "clear",
    "",
    "canceL",
    "\u{430}pproval",
    "compact\n",
    "event",
];

pub(crate) fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => select(NAMES).prop_map(str::to_owned),
        1 => wire_string(),
    ]
}

/// The protocol's keys, as the rules name them.
const KEYS: &[&str] = &Key::NAME_LIST;

/// Keys that resemble the protocol's, and must be ignored.
const NEAR_KEYS: &[&str] = &[
    "Command",
    "COMMAND",
    "text ",
    "Text",
    "texts",
    "submissionId",
    "submission-id",
    "kind\0",
    "",
    "ID",
    "allow\u{2028}",
    "commands",
    "cmd",
    "event",
    "type",
];

pub(crate) fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => select(KEYS).prop_map(str::to_owned),
        2 => select(NEAR_KEYS).prop_map(str::to_owned),
        1 => wire_string(),
    ]
}

/// A JSON value, owned, before it is written out.
#[derive(Clone, Debug)]
pub(crate) enum J {
    Null,
    Bool(bool),
    /// A number's text, valid by JSON's grammar.
    Num(String),
    Str(String),
    Arr(Vec<J>),
    Obj(Vec<(String, J)>),
    /// This many arrays (or objects, `{"":...}`) nested around `0`.
    Nest(usize, bool),
}

/// Numbers that trip decoders that compute them: past `f64` (serde_json
/// refuses those), past `u64`/`i64`, negative zero, exponents.
const NUMBERS: &[&str] = &[
    "0",
    "-0",
    "1",
    "-1",
    "1.5",
    "1e400",
    "-1e400",
    "1E+2",
    "1e-400",
    "18446744073709551616",
    "-9223372036854775809",
    "123456789012345678901234567890",
    "0.0000000000000000000000000001",
];

/// Nesting depths around `serde_json`'s limit (128) and well below the
/// protocol's (1024), leaving room for the levels around a nested value.
const DEPTHS: &[usize] = &[1, 2, 10, 127, 128, 129, 500, 1000];

pub(crate) fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        2 => select(NUMBERS).prop_map(str::to_owned),
        1 => string_regex(r"-?(0|[1-9][0-9]{0,40})(\.[0-9]{1,10})?([eE][+-]?[0-9]{1,4})?")
            .expect("the regex is valid"),
    ]
}

/// Any value a field might hold, the right type or not.
pub(crate) fn field_value() -> impl Strategy<Value = J> {
    let leaf = prop_oneof![
        2 => select(WORDS).prop_map(|w| J::Str(w.to_owned())),
        2 => wire_string().prop_map(J::Str),
        2 => any::<bool>().prop_map(J::Bool),
        1 => Just(J::Null),
        1 => number().prop_map(J::Num),
        1 => (select(DEPTHS), any::<bool>()).prop_map(|(d, obj)| J::Nest(d, obj)),
    ];
    // At most 3 levels here, plus a `Nest` of 1000 and the line's own
    // object: still under 1024.
    let nested = leaf.clone().prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..3).prop_map(J::Arr),
            vec((key(), inner), 0..3).prop_map(J::Obj),
        ]
    });
    // Mostly scalars: a field that holds a container is one near miss
    // among many.
    prop_oneof![4 => leaf, 1 => nested]
}

/// A top-level value that is not an object, some of them holding one.
fn not_an_object() -> impl Strategy<Value = J> {
    prop_oneof![
        Just(J::Null),
        any::<bool>().prop_map(J::Bool),
        number().prop_map(J::Num),
        // A command line, quoted: a string, not an object.
        command().prop_map(|c| J::Str(c.to_line())),
        command().prop_map(|c| J::Arr(vec![J::Obj(entries_of(&c))])),
        Just(J::Arr(vec![])),
        (select(DEPTHS), any::<bool>()).prop_map(|(d, obj)| J::Nest(d, obj)),
    ]
}

/// The command's wire entries, in the encoder's order.
fn entries_of(cmd: &Command) -> Vec<(String, J)> {
    let mut out = Vec::new();
    let Ok(()) = cmd.entries(|key, val| -> Result<(), Infallible> {
        let value = match val {
            Val::Str(s) => J::Str(s.to_owned()),
            Val::Bool(b) => J::Bool(b),
        };
        out.push((key.to_owned(), value));
        Ok(())
    });
    out
}

/// One change to a line's fields, at the field `at` picks.
#[derive(Clone, Debug)]
pub(crate) struct Mutation {
    at: Pick,
    op: Op,
}

/// A field: the `index`th, counting only fields other than `command` when
/// `spare_command` is set and there are any (else the line is mostly
/// "no command", which hides the other errors).
#[derive(Clone, Debug)]
struct Pick {
    index: Index,
    spare_command: bool,
}

#[derive(Clone, Debug)]
enum Op {
    Drop,
    /// Replace the value (often by one of the wrong type).
    Retype(J),
    /// Repeat the key with another value, before or after it.
    Duplicate(J, bool),
    Rename(String),
    /// A field at this position (usually a noise field).
    Insert(String, J),
    /// Swap with the field this index picks among all.
    Swap(Index),
}

pub(crate) fn mutation() -> impl Strategy<Value = Mutation> {
    let op = prop_oneof![
        Just(Op::Drop),
        field_value().prop_map(Op::Retype),
        (field_value(), any::<bool>()).prop_map(|(v, after)| Op::Duplicate(v, after)),
        key().prop_map(Op::Rename),
        (key(), field_value()).prop_map(|(k, v)| Op::Insert(k, v)),
        any::<Index>().prop_map(Op::Swap),
    ];
    let spare_command = prop_oneof![3 => Just(true), 1 => Just(false)];
    (any::<Index>(), spare_command, op).prop_map(|(index, spare_command, op)| Mutation {
        at: Pick {
            index,
            spare_command,
        },
        op,
    })
}

impl Pick {
    fn of(&self, entries: &[(String, J)]) -> Option<usize> {
        let others = || (0..entries.len()).filter(|&i| entries[i].0 != "command");
        let n = if self.spare_command {
            others().count()
        } else {
            0
        };
        if n > 0 {
            others().nth(self.index.index(n))
        } else if entries.is_empty() {
            None
        } else {
            Some(self.index.index(entries.len()))
        }
    }
}

impl Mutation {
    pub(crate) fn apply(self, entries: &mut Vec<(String, J)>) {
        if let Op::Insert(key, value) = self.op {
            let at = self.at.index.index(entries.len() + 1);
            entries.insert(at, (key, value));
            return;
        }
        let Some(i) = self.at.of(entries) else {
            return;
        };
        match self.op {
            Op::Drop => {
                entries.remove(i);
            }
            Op::Retype(value) => entries[i].1 = value,
            Op::Duplicate(value, after) => {
                let key = entries[i].0.clone();
                entries.insert(if after { i + 1 } else { i }, (key, value));
            }
            Op::Rename(key) => entries[i].0 = key,
            Op::Insert(..) => {}
            Op::Swap(j) => {
                let j = j.index(entries.len());
                entries.swap(i, j);
            }
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) enum Top {
    Object(Vec<(String, J)>),
    Other(J),
}

/// How a line is written: the whitespace between tokens, and which
/// characters of keys and strings are written as `\u` escapes.
#[derive(Clone, Debug)]
pub(crate) struct Style {
    /// Used in turn, one per gap between tokens; none when empty.
    ws: Vec<&'static str>,
    /// Bit `i % 64` set: the `i`th character of a key is `\u`-escaped.
    key_escapes: u64,
    /// The same for string values.
    str_escapes: u64,
}

pub(crate) fn style() -> impl Strategy<Value = Style> {
    let ws = select(&["", " ", "\t", "\r", "  ", " \t\r "][..]);
    let escapes = prop_oneof![6 => Just(0u64), 1 => any::<u64>(), 1 => Just(u64::MAX)];
    (
        prop_oneof![2 => Just(vec![]), 1 => vec(ws, 1..6)],
        escapes.clone(),
        escapes,
    )
        .prop_map(|(ws, key_escapes, str_escapes)| Style {
            ws,
            key_escapes,
            str_escapes,
        })
}

impl Style {
    pub(crate) fn render(&self, top: &Top) -> String {
        let mut w = Writer {
            style: self,
            out: String::new(),
            gaps: 0,
        };
        w.gap();
        match top {
            Top::Object(entries) => w.object(entries),
            Top::Other(value) => w.value(value),
        }
        w.gap();
        w.out
    }
}

struct Writer<'s> {
    style: &'s Style,
    out: String,
    gaps: usize,
}

impl Writer<'_> {
    fn gap(&mut self) {
        let ws = &self.style.ws;
        if !ws.is_empty() {
            self.out.push_str(ws[self.gaps % ws.len()]);
            self.gaps += 1;
        }
    }

    fn object(&mut self, entries: &[(String, J)]) {
        self.out.push('{');
        for (i, (key, value)) in entries.iter().enumerate() {
            if i > 0 {
                self.gap();
                self.out.push(',');
            }
            self.gap();
            self.string(key, self.style.key_escapes);
            self.gap();
            self.out.push(':');
            self.gap();
            self.value(value);
        }
        self.gap();
        self.out.push('}');
    }

    fn value(&mut self, value: &J) {
        match value {
            J::Null => self.out.push_str("null"),
            J::Bool(b) => self.out.push_str(if *b { "true" } else { "false" }),
            J::Num(n) => self.out.push_str(n),
            J::Str(s) => self.string(s, self.style.str_escapes),
            J::Arr(items) => {
                self.out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.out.push(',');
                        self.gap();
                    }
                    self.value(item);
                }
                self.out.push(']');
            }
            J::Obj(entries) => self.object(entries),
            J::Nest(depth, obj) => {
                let (open, close) = if *obj { ("{\"\":", "}") } else { ("[", "]") };
                self.out.push_str(&open.repeat(*depth));
                self.out.push('0');
                self.out.push_str(&close.repeat(*depth));
            }
        }
    }

    /// A JSON string; characters whose bit is set in `escapes` as `\u`
    /// escapes (surrogate pairs for astral ones), the rest as an encoder
    /// would write them.
    fn string(&mut self, s: &str, escapes: u64) {
        let out = &mut self.out;
        out.push('"');
        for (i, c) in s.chars().enumerate() {
            if escapes >> (i % 64) & 1 == 1 {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    // Alternate the hex digits' case: both are valid.
                    out.push_str(&if i % 2 == 0 {
                        format!("\\u{unit:04x}")
                    } else {
                        format!("\\u{unit:04X}")
                    });
                }
                continue;
            }
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\u{8}' => out.push_str("\\b"),
                '\u{c}' => out.push_str("\\f"),
                c if c < ' ' => out.push_str(&format!("\\u{:04x}", u32::from(c))),
                c => out.push(c),
            }
        }
        out.push('"');
    }
}
