//! Near-miss event lines: a valid event's line bent (a field dropped,
//! retyped, its name or value near an accepted one, noise around it) and
//! the outcome upstream's `parse` gives it, as the model predicts.

use super::*;

/// A near-miss event line, without its LF, and the outcome upstream's
/// `parse` gives it: `Ok(event)`, or `Err` with the [`EventError`] this
/// crate reports for a line a client skips.
///
/// Lines are JSON (never a lone surrogate escape, never a LF; some past
/// serde_json's limits: numbers beyond a double, nesting past 128). They
/// start from a valid event (every one of the table), from a bag of event
/// names and fields, or from a value that is no object, and are bent:
/// fields dropped, set to values of the wrong kind or at the edges of
/// their rules, repeated (the last one wins), renamed, reordered, noise
/// fields added, the event's name bent or dropped; each line written with
/// the commands' styles (whitespace between tokens, keys and strings
/// partly `\u`-escaped). The bends reach into the nested values: integers
/// in every spelling around `Int`'s range, usage counts, prediction
/// outcomes (empty or missing text, counts that truncate, negative ones),
/// job records (schema version, components, revisions, counts and
/// timestamps around 2^31 and 2^53, states, optional fields of the wrong
/// kind, `data` of any JSON), and content (the commands' near misses:
/// parts of unknown type, missing fields, bent base64 and media types).
///
/// The outcome is predicted by this module's own statement of the rules,
/// not asked of [`Event::from_slice`]: a test that compares the two holds
/// the decoder to a second reading.
pub fn event_line() -> impl Strategy<Value = (String, Result<Event, EventError>)> {
    // The six events with nested values are two fifths of the bent lines,
    // not a tenth: their rules are most of the rules.
    // Each event's bends, made once.
    let edits: Vec<BoxedStrategy<Vec<Edit>>> =
        SCHEMAS.iter().map(|s| vec(edit(s), 0..3).boxed()).collect();
    let bent = cases(|s| if nested(s) { 6 } else { 1 })
        .prop_flat_map(move |case| (Just(case.entries), edits[case.index].clone()));
    let object = prop_oneof![
        8 => bent.prop_map(|(mut entries, edits)| {
            for e in edits {
                e.apply(&mut entries);
            }
            entries
        }),
        2 => bag(),
    ];
    let top = prop_oneof![
        12 => object.prop_map(Top::Object),
        1 => not_an_object().prop_map(Top::Other),
    ];
    (top, style()).prop_map(|(top, style)| {
        let line = style.render(&top);
        let outcome = model(&top);
        (line, outcome)
    })
}

/// One change to an object's members.
#[derive(Clone, Debug)]
enum Edit {
    /// Every member of this key, gone.
    Drop(String),
    /// The key's last member holds this value (added when there is none).
    Set(String, J),
    /// The key again with this value: after its last member (so it wins),
    /// or before its first.
    Dup(String, J, bool),
    /// The key's last member renamed.
    Rename(String, String),
    /// A member added at this position.
    Noise(Index, String, J),
    /// Two members swapped.
    Swap(Index, Index),
}

impl Edit {
    fn apply(self, entries: &mut Vec<(String, J)>) {
        let last = |entries: &[(String, J)], key: &str| entries.iter().rposition(|(k, _)| k == key);
        match self {
            Edit::Drop(key) => entries.retain(|(k, _)| *k != key),
            Edit::Set(key, value) => match last(entries, &key) {
                Some(i) => entries[i].1 = value,
                None => entries.push((key, value)),
            },
            Edit::Dup(key, value, after) => {
                let at = if after {
                    last(entries, &key).map_or(entries.len(), |i| i + 1)
                } else {
                    entries.iter().position(|(k, _)| *k == key).unwrap_or(0)
                };
                entries.insert(at, (key, value));
            }
            Edit::Rename(key, to) => {
                if let Some(i) = last(entries, &key) {
                    entries[i].0 = to;
                }
            }
            Edit::Noise(at, key, value) => {
                let at = at.index(entries.len() + 1);
                entries.insert(at, (key, value));
            }
            Edit::Swap(a, b) => {
                if !entries.is_empty() {
                    let (a, b) = (a.index(entries.len()), b.index(entries.len()));
                    entries.swap(a, b);
                }
            }
        }
    }
}

/// A change to `key`, with values from `value`.
fn field_edit(key: &'static str, value: BoxedStrategy<J>) -> BoxedStrategy<Edit> {
    prop_oneof![
        2 => Just(Edit::Drop(key.to_owned())),
        4 => value.clone().prop_map(move |v| Edit::Set(key.to_owned(), v)),
        2 => (value, any::<bool>()).prop_map(move |(v, after)| Edit::Dup(key.to_owned(), v, after)),
        1 => noise_key().prop_map(move |to| Edit::Rename(key.to_owned(), to)),
    ]
    .boxed()
}

/// A member no event reads, or one some event does.
fn noise_key() -> BoxedStrategy<String> {
    let fields: Vec<&'static str> = SCHEMAS
        .iter()
        .flat_map(|s| s.fields.iter().map(|&(f, _)| f))
        .collect();
    prop_oneof![
        3 => v1_key(),
        1 => select(fields).prop_map(str::to_owned),
        1 => select(&["Event", "event ", "events", "EVENT", "kind", "type"][..]).prop_map(str::to_owned),
    ]
    .boxed()
}

/// A change to an event's line: to one of its fields (mostly), its name,
/// or its members' order, or noise.
fn edit(schema: &'static Schema) -> BoxedStrategy<Edit> {
    let mut arms: Vec<(u32, BoxedStrategy<Edit>)> = vec![
        (1, field_edit("event", name_value())),
        (
            1,
            (any::<Index>(), noise_key(), field_value())
                .prop_map(|(at, k, v)| Edit::Noise(at, k, v))
                .boxed(),
        ),
        (
            1,
            (any::<Index>(), any::<Index>())
                .prop_map(|(a, b)| Edit::Swap(a, b))
                .boxed(),
        ),
    ];
    if !schema.fields.is_empty() {
        // A field with a nested value (its own rules) is bent the most,
        // then the kinds few events have; strings and integers, which
        // most events have, the least.
        let fields = schema
            .fields
            .iter()
            .map(|&(field, kind)| {
                let weight = match kind {
                    _ if nested_kind(kind) => 4,
                    Kind::Str | Kind::Int => 1,
                    _ => 3,
                };
                (weight, field_edit(field, near(kind)))
            })
            .collect();
        arms.push((8, Union::new_weighted(fields).boxed()));
    }
    Union::new_weighted(arms).boxed()
}

/// An `event` value: a name, a near miss of one, or no string.
fn name_value() -> BoxedStrategy<J> {
    let names: Vec<&'static str> = SCHEMAS.iter().map(|s| s.name).collect();
    let bent = (select(names.clone()), 0u8..6).prop_map(|(name, how)| match how {
        0 => name.to_uppercase(),
        1 => format!("{name} "),
        2 => format!(" {name}"),
        3 => name[..name.len() - 1].to_owned(),
        4 => name.replace('_', "-"),
        _ => format!("{name}\0"),
    });
    prop_oneof![
        4 => select(names).prop_map(|n| J::Str(n.to_owned())),
        2 => bent.prop_map(J::Str),
        1 => select(&["", "event", "fleet_started", "prompt", "command_errors"][..])
            .prop_map(|n| J::Str(n.to_owned())),
        1 => wire_string().prop_map(J::Str),
        1 => field_value(),
    ]
    .boxed()
}

/// Values for a field of `kind`: right, at the edges of its rules, or of
/// another kind.
fn near(kind: Kind) -> BoxedStrategy<J> {
    let junk = || field_value().boxed();
    match kind {
        Kind::Str | Kind::Null | Kind::Omit | Kind::Default(_) => prop_oneof![
            3 => wire_string().prop_map(J::Str),
            1 => junk(),
        ]
        .boxed(),
        Kind::Int => prop_oneof![
            3 => int_text().prop_map(J::Num),
            1 => Just(J::Str("7".into())),
            1 => junk(),
        ]
        .boxed(),
        Kind::Bool => prop_oneof![
            2 => any::<bool>().prop_map(J::Bool),
            1 => junk(),
        ]
        .boxed(),
        Kind::Content => crate::v2::strategy::content_value(),
        Kind::Usage => usage_near(),
        Kind::Job => record_near(),
        Kind::Jobs => prop_oneof![
            4 => vec(prop_oneof![4 => record_near(), 1 => junk()], 0..3).prop_map(J::Arr),
            1 => junk(),
        ]
        .boxed(),
        Kind::JobEvent => prop_oneof![
            4 => select(&["started", "updated", "finished", "failed", "Started", "start", "", "stopped", "failed "][..])
                .prop_map(|s| J::Str(s.to_owned())),
            1 => junk(),
        ]
        .boxed(),
        Kind::Stop => prop_oneof![
            4 => select(&["stopped", "already_terminal", "not_found", "wrong_runtime", "Stopped", "already-terminal", "", "started"][..])
                .prop_map(|s| J::Str(s.to_owned())),
            1 => junk(),
        ]
        .boxed(),
        Kind::Outcome => outcome_near(),
        Kind::Names => prop_oneof![
            3 => vec(wire_string().prop_map(J::Str), 0..4).prop_map(J::Arr),
            1 => vec(field_value(), 1..3).prop_map(J::Arr),
            1 => junk(),
        ]
        .boxed(),
    }
}

/// `Int` texts at the edges: both ends of the range and just past them,
/// whole numbers spelled as fractions and exponents, fractions, overflow.
const INT_EDGES: &[&str] = &[
    "-2147483648",
    "-2147483649",
    "-2147483648.0",
    "-2147483648.5",
    "-1",
    "-1.5",
    "-0.0",
    "-1e0",
    "-2147483647.9",
    "-1e400",
    "2147483647",
    "2147483648",
    "7.0",
    "7e0",
    "0.7e1",
    "7.5",
];

fn int_text() -> BoxedStrategy<String> {
    prop_oneof![
        3 => crate::v2::strategy::sequence_text(),
        2 => select(INT_EDGES).prop_map(str::to_owned),
        1 => any::<i32>().prop_map(|n| n.to_string()),
    ]
    .boxed()
}

/// Counts that are right, and ones at the edges of 0 to 2^31 - 1.
const COUNT_EDGES: &[&str] = &[
    "0",
    "-0",
    "0.0",
    "-1",
    "1.0",
    "1e0",
    "1.5",
    "-0.5",
    "0.5",
    "2147483647",
    "2147483647.5",
    "2147483648",
    "-2147483648",
    "-2147483649",
    "1e400",
    "1e9",
    "1e10",
];

fn count_near() -> BoxedStrategy<J> {
    prop_oneof![
        4 => count_value().prop_map(num),
        2 => select(COUNT_EDGES).prop_map(|t| J::Num(t.to_owned())),
        1 => (i32::MIN..0).prop_map(num),
        1 => Just(J::Str("3".into())),
        1 => field_value(),
    ]
    .boxed()
}

/// A `usage` value: five counts, one of them bent, dropped or moved, with
/// noise; or no object.
fn usage_near() -> BoxedStrategy<J> {
    prop_oneof![
        4 => (
            vec(count_near(), 5),
            option::of(any::<Index>()),
            option::of((any::<Index>(), any::<Index>())),
            option::of((v1_key(), field_value())),
        )
            .prop_map(|(counts, drop, swap, noise)| {
                let mut entries: Vec<(String, J)> = USAGE_KEYS
                    .iter()
                    .map(|k| (*k).to_owned())
                    .zip(counts)
                    .collect();
                if let Some(i) = drop {
                    entries.remove(i.index(entries.len()));
                }
                if let Some((a, b)) = swap {
                    Edit::Swap(a, b).apply(&mut entries);
                }
                if let Some((k, v)) = noise {
                    entries.push((k, v));
                }
                J::Obj(entries)
            }),
        1 => field_value(),
    ]
    .boxed()
}

/// A prediction outcome: a kind, right or not, with each of its fields
/// there or not, right, at the edges of its rules or of another kind.
fn outcome_near() -> BoxedStrategy<J> {
    let kind = prop_oneof![
        // `completed` has the most rules.
        4 => Just(J::Str("completed".into())),
        3 => select(&["skipped", "cancelled", "failed"][..]).prop_map(|s| J::Str(s.to_owned())),
        1 => select(&["Completed", "complete", "", "failed "][..]).prop_map(|s| J::Str(s.to_owned())),
        1 => field_value(),
    ];
    let text = prop_oneof![
        2 => Just(J::Null),
        3 => nonempty().prop_map(J::Str),
        1 => Just(J::Str(String::new())),
        1 => field_value(),
    ];
    let message = prop_oneof![3 => wire_string().prop_map(J::Str), 1 => field_value()];
    prop_oneof![
        1 => outcome().prop_map(|(_, j)| j),
        4 => (
            option::weighted(0.95, kind),
            option::weighted(0.85, text),
            option::weighted(0.9, count_near()),
            option::weighted(0.9, count_near()),
            option::of(message),
            option::of((any::<Index>(), any::<Index>())),
        )
            .prop_map(|(kind, text, input, output, message, swap)| {
                let mut entries = Vec::new();
                for (k, v) in [
                    ("kind", kind),
                    ("text", text),
                    ("input_tokens", input),
                    ("output_tokens", output),
                    ("message", message),
                ] {
                    if let Some(v) = v {
                        entries.push((k.to_owned(), v));
                    }
                }
                if let Some((a, b)) = swap {
                    Edit::Swap(a, b).apply(&mut entries);
                }
                J::Obj(entries)
            }),
        1 => field_value(),
    ]
    .boxed()
}

/// A job record's members, in `to_json`'s order.
const RECORD_FIELDS: &[&str] = &[
    "schema_version",
    "cleanup_error",
    "generation",
    "id",
    "revision",
    "command",
    "description",
    "cwd",
    "state",
    "started_at_ms",
    "backgrounded_at_ms",
    "finished_at_ms",
    "last_output_at_ms",
    "output_file",
    "output_persistent",
    "output_bytes",
    "output_chars",
    "output_truncated",
    "invalid_utf8",
    "output_error",
    "persistence_error",
    "data",
];

/// Texts around a job's integers: 0 and its spellings, the ends of 2^31
/// and 2^53, fractions, negatives, overflow.
const UINT_EDGES: &[&str] = &[
    "0",
    "-0",
    "0.0",
    "1",
    "-1",
    "1.5",
    "1e3",
    "2147483647",
    "2147483648",
    "4294967296",
    "9007199254740991",
    "9007199254740991.0",
    "9007199254740992",
    "9007199254740993",
    "1e16",
    "1e400",
    "-1e400",
    "1e-400",
];

/// `schema_version`s: 1 in every spelling, and others.
const VERSIONS: &[&str] = &[
    "1",
    "1.0",
    "1e0",
    "10e-1",
    "0.99999999999999999",
    "1.0000000000000001",
    "2",
    "0",
    "-1",
    "1.5",
];

/// Values for a record's member `field`.
fn record_field_near(field: &'static str) -> BoxedStrategy<J> {
    let junk = || field_value().boxed();
    match field {
        "schema_version" => prop_oneof![
            4 => select(VERSIONS).prop_map(|t| J::Num(t.to_owned())),
            1 => Just(J::Str("1".into())),
            1 => junk(),
        ]
        .boxed(),
        "generation" | "id" | "output_file" => prop_oneof![
            3 => crate::v2::strategy::component().prop_map(J::Str),
            2 => select(&["", ".", "..", "...", "a/b", "é", "a b", "../x", ".x", "-"][..])
                .prop_map(|s| J::Str(s.to_owned())),
            1 => (199usize..=202).prop_map(|n| J::Str("x".repeat(n))),
            1 => Just(J::Null),
            1 => junk(),
        ]
        .boxed(),
        "revision" | "output_chars" | "started_at_ms" | "backgrounded_at_ms" | "finished_at_ms"
        | "last_output_at_ms" | "output_bytes" => prop_oneof![
            3 => select(UINT_EDGES).prop_map(|t| J::Num(t.to_owned())),
            2 => safe_value().prop_map(num),
            1 => Just(J::Null),
            1 => junk(),
        ]
        .boxed(),
        "output_persistent" | "output_truncated" | "invalid_utf8" => prop_oneof![
            2 => any::<bool>().prop_map(J::Bool),
            1 => junk(),
        ]
        .boxed(),
        "state" => state_near(),
        "data" => prop_oneof![3 => data_value(), 1 => Just(J::Null)].boxed(),
        _ => prop_oneof![
            3 => wire_string().prop_map(J::Str),
            1 => Just(J::Null),
            1 => junk(),
        ]
        .boxed(),
    }
}

/// A job state: right, bent (an empty or missing reason, a code out of
/// `Int` or of another kind, an unknown kind), or no object.
fn state_near() -> BoxedStrategy<J> {
    let kind = prop_oneof![
        5 => select(&["running", "stopping", "interrupted", "exited", "stopped"][..])
            .prop_map(|s| J::Str(s.to_owned())),
        1 => select(&["Running", "", "done", "exit"][..]).prop_map(|s| J::Str(s.to_owned())),
        1 => field_value(),
    ];
    let code = prop_oneof![3 => int_text().prop_map(J::Num), 1 => field_value()];
    let reason = prop_oneof![
        3 => wire_string().prop_map(J::Str),
        1 => Just(J::Str(String::new())),
        1 => field_value(),
    ];
    prop_oneof![
        2 => state().prop_map(|(_, j)| j),
        3 => (option::weighted(0.9, kind), option::of(code), option::of(reason)).prop_map(
            |(kind, code, reason)| {
                let mut entries = Vec::new();
                for (k, v) in [("kind", kind), ("code", code), ("reason", reason)] {
                    if let Some(v) = v {
                        entries.push((k.to_owned(), v));
                    }
                }
                J::Obj(entries)
            }
        ),
        1 => field_value(),
    ]
    .boxed()
}

/// A job record: valid, or bent in up to three members; or no object.
fn record_near() -> BoxedStrategy<J> {
    let edit = Union::new_weighted(RECORD_FIELDS.iter().map(|&field| {
        let value = record_field_near(field);
        // The members with rules of their own are bent the most.
        let weight = match field {
            "state" => 4,
            "schema_version" | "generation" | "id" | "revision" | "output_chars"
            | "output_file" | "data" => 2,
            _ => 1,
        };
        (weight, prop_oneof![
            2 => Just(Edit::Drop(field.to_owned())),
            5 => value.clone().prop_map(move |v| Edit::Set(field.to_owned(), v)),
            1 => (value, any::<bool>()).prop_map(move |(v, after)| Edit::Dup(field.to_owned(), v, after)),
            1 => (any::<Index>(), v1_key(), field_value()).prop_map(|(at, k, v)| Edit::Noise(at, k, v)),
        ])
    }).collect());
    prop_oneof![
        6 => (record(), vec(edit, 0..3)).prop_map(|((_, j), edits)| {
            let J::Obj(mut entries) = j else {
                return j;
            };
            for e in edits {
                e.apply(&mut entries);
            }
            J::Obj(entries)
        }),
        1 => field_value(),
    ]
    .boxed()
}

/// An event's name (or a near miss of one) and a few fields of any event,
/// with values for their kind or of another.
fn bag() -> BoxedStrategy<Vec<(String, J)>> {
    let mut fields: Vec<(&'static str, Kind)> = SCHEMAS
        .iter()
        .flat_map(|s| s.fields.iter().copied())
        .collect();
    fields.sort_by_key(|&(f, kind)| (f, format!("{kind:?}")));
    fields.dedup();
    let any_field = Union::new(
        fields
            .into_iter()
            .map(|(f, kind)| (Just(f.to_owned()), near(kind))),
    );
    let field = prop_oneof![
        4 => any_field,
        1 => (v1_key(), field_value()),
    ];
    (name_value(), vec(field, 0..5))
        .prop_map(|(name, mut rest)| {
            rest.insert(0, ("event".to_owned(), name));
            rest
        })
        .boxed()
}

/// A line that is not an object: a scalar, an array (one holding an
/// event), an event's line quoted as a string; now and then an object
/// (a value nested in objects, one of noise keys) after all.
fn not_an_object() -> BoxedStrategy<J> {
    prop_oneof![
        3 => field_value(),
        1 => case().prop_map(|c| J::Arr(vec![J::Obj(c.entries)])),
        1 => event().prop_map(|e| J::Str(e.to_string())),
    ]
    .boxed()
}
