//! `schema/event-v2.schema.json` and `schema/event-v2.ts`: the engine's
//! events (`serve_command::v2::Event`, upstream's `protocol/event.mbt`,
//! `parse.mbt` and `to_json.mbt`), generated here, checked for staleness,
//! and held to the event vectors (`tests/vectors/events.jsonl`).
//!
//! The files are never edited by hand. Regenerate them with
//! `UPDATE_SCHEMA=1 cargo test -p serve-command-schema-check`.
//!
//! The schema has two roots, each generated from the one table below:
//!
//! - the file's root, the line the engine writes (`Event::to_json`): exact
//!   key sets, every always-written key required, `null` where upstream
//!   writes it, integers in their ranges. Every `ok` vector's canonical line
//!   validates against it, through exactly its own event's shape.
//! - `#/$defs/ReadEvent`, a line a client reads as an event (upstream's
//!   `parse` returns `Some`): unknown keys allowed, a defaulted field may be
//!   absent or anything, the nested values as their `FromJson` reads them.
//!   A vector line validates against it exactly when its verdict is `ok`,
//!   but for the lines in `schema/rejects-events-v2.jsonl`, each with why.
//!
//! What ties the table to the crate: each shape's examples are real `Event`
//! values (an exhaustive `match` names the shape of every variant, so a new
//! one fails the test that meets it), their lines must be canonical, hold
//! exactly the shape's keys in its order (nested values too), and validate
//! against the shape alone.

mod common;

use common::*;
use serde_json::Value;
use serve_command::v2::{
    Content, ContentPart, Event, Image, JobEventKind, JobRecord, JobState, JobStopOutcome,
    JsonText, PredictionOutcome, SubrunStatus, Usage,
};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

const STEM: &str = "event-v2";
const VECTORS: &str = "tests/vectors/events.jsonl";
const REJECTS: &str = "schema/rejects-events-v2.jsonl";

// ---------------------------------------------------------------------------
// The model: how each field is written and read.

/// The kinds of top-level field, each with its written and its read form.
#[derive(Clone, Copy)]
enum Ty {
    /// A string (upstream's `text`).
    Str,
    /// An `Int` (upstream's `int`): `#/$defs/Int`.
    Int,
    /// `true` or `false` (upstream's `bool`).
    Bool,
    /// A `String?` written `null` when absent; `parse` defaults it.
    NullStr,
    /// A `String?` whose key is left out when absent; `parse` defaults it.
    OmitStr,
    /// A `String` that `parse` defaults to this when absent or not a string.
    Default(&'static str),
    /// A named type, as its own `ToJson` writes it and `FromJson` reads it.
    Ref(&'static str),
    /// An array of strings.
    Strings,
    /// An array of a named type.
    Array(&'static str),
}

/// One key of an object, in both forms.
struct Member {
    name: &'static str,
    /// Its schema in a written line.
    write: J,
    /// Written in every line (else only when it has a value).
    always: bool,
    /// Its schema for a reader.
    read: J,
    /// A reader needs it (else a default stands in for it).
    needed: bool,
    /// Its TypeScript type, written form.
    ts: String,
    description: Option<String>,
    /// Where the reader takes more than the writer writes.
    comment: Option<&'static str>,
    /// The named type it holds (itself or as array items), for the
    /// key-order walk.
    nested: Option<&'static str>,
}

/// A named type the events hold.
struct Def {
    name: &'static str,
    description: &'static str,
    body: Body,
}

enum Body {
    /// An object of these keys.
    Object(Vec<Member>),
    /// One of these objects (its description and keys).
    Union(Vec<(&'static str, Vec<Member>)>),
    /// A schema of its own: written, read (`None`: the same), TypeScript,
    /// and the named type of its array items, if it can be an array.
    Raw {
        write: J,
        read: Option<J>,
        ts: &'static str,
        items: Option<&'static str>,
    },
}

/// One event: its line.
struct Shape {
    /// The variant, the `$defs` key (`Read` + it for the reader's form) and
    /// the TypeScript name.
    name: &'static str,
    /// `"event"`'s value.
    event: &'static str,
    description: &'static str,
    /// After `event`, in the order `to_json` writes them.
    members: Vec<Member>,
    /// Events from the crate, covering each optional key present and
    /// absent and each nested form.
    examples: Vec<Event>,
}

fn refer(def: &str) -> J {
    J::Obj(vec![("$ref".to_owned(), J::Str(format!("#/$defs/{def}")))])
}

/// The reader's name of a named type: `Read` + it when the two differ.
fn read_name(def: &str) -> String {
    match defs().iter().find(|d| d.name == def) {
        Some(Def {
            body: Body::Raw { read: None, .. },
            ..
        }) => def.to_owned(),
        Some(_) => format!("Read{def}"),
        None => panic!("no def {def}"),
    }
}

const INT_MIN: i64 = -2_147_483_648;
const INT_MAX: i64 = 2_147_483_647;
const UINT53_MAX: i64 = 9_007_199_254_740_991;

fn integer(min: i64, max: i64) -> J {
    obj([
        ("type", s("integer")),
        ("minimum", J::Num(min)),
        ("maximum", J::Num(max)),
    ])
}

/// A member of a top-level shape, from its kind.
fn field(name: &'static str, ty: Ty, description: Option<&'static str>) -> Member {
    let string = || obj([("type", s("string"))]);
    let anything = || J::Obj(Vec::new());
    let strings = || obj([("type", s("array")), ("items", string())]);
    let array = |def: &str| obj([("type", s("array")), ("items", refer(def))]);
    let mut doc: Option<String> = description.map(str::to_owned);
    let mut add = |more: String| {
        doc = Some(match doc.take() {
            Some(d) => format!("{d} {more}"),
            None => more,
        })
    };
    let (write, always, read, needed, ts, comment, nested) = match ty {
        Ty::Str => (
            string(),
            true,
            string(),
            true,
            "string".to_owned(),
            None,
            None,
        ),
        Ty::Int => (
            refer("Int"),
            true,
            refer("Int"),
            true,
            "Int".into(),
            None,
            None,
        ),
        Ty::Bool => {
            let b = obj([("type", s("boolean"))]);
            (b.clone(), true, b, true, "boolean".into(), None, None)
        }
        Ty::NullStr => {
            add("Always written: `null` when there is none.".into());
            (
                obj([("type", J::Arr(vec![s("string"), s("null")]))]),
                true,
                anything(),
                false,
                "string | null".into(),
                Some("A reader takes the key absent, `null`, or holding anything but a string as none: the field postdates its event, so older engines leave it out."),
                None,
            )
        }
        Ty::OmitStr => {
            add("Written only when there is one: the key is left out otherwise.".into());
            (
                string(),
                false,
                anything(),
                false,
                "string".into(),
                Some("A reader takes the key absent, `null`, or holding anything but a string as none."),
                None,
            )
        }
        Ty::Default(d) => {
            add(format!(
                "Always written. A reader takes the key absent or holding anything but a string as `{d}`."
            ));
            (
                string(),
                true,
                anything(),
                false,
                "string".into(),
                Some("The reader's default covers any value here."),
                None,
            )
        }
        Ty::Ref(def) => (
            refer(def),
            true,
            refer(&read_name(def)),
            true,
            def.to_owned(),
            None,
            Some(def),
        ),
        Ty::Strings => (
            strings(),
            true,
            strings(),
            true,
            "string[]".into(),
            None,
            None,
        ),
        Ty::Array(def) => (
            array(def),
            true,
            array(&read_name(def)),
            true,
            format!("{def}[]"),
            None,
            Some(def),
        ),
    };
    Member {
        name,
        write,
        always,
        read,
        needed,
        ts,
        description: doc,
        comment,
        nested,
    }
}

/// A member of a nested object whose two forms are given.
#[allow(clippy::too_many_arguments)]
fn member(
    name: &'static str,
    write: J,
    always: bool,
    read: J,
    needed: bool,
    ts: &str,
    description: &'static str,
    comment: Option<&'static str>,
) -> Member {
    Member {
        name,
        write,
        always,
        read,
        needed,
        ts: ts.to_owned(),
        description: Some(description.to_owned()),
        comment,
        nested: None,
    }
}

/// A member written and read alike, always there.
fn same(name: &'static str, schema: J, ts: &str, description: &'static str) -> Member {
    member(
        name,
        schema.clone(),
        true,
        schema,
        true,
        ts,
        description,
        None,
    )
}

fn kind(value: &'static str) -> Member {
    same(
        "kind",
        obj([("const", s(value))]),
        &serde_json::to_string(value).unwrap(),
        "The variant.",
    )
}

// ---------------------------------------------------------------------------
// The named types.

fn defs() -> Vec<Def> {
    let string = || obj([("type", s("string"))]);
    let null_or = |j: J| obj([("anyOf", J::Arr(vec![obj([("type", s("null"))]), j]))]);
    let uint53 = || integer(0, UINT53_MAX);
    let optional_str = |name: &'static str, description: &'static str| {
        member(
            name,
            obj([("type", J::Arr(vec![s("string"), s("null")]))]),
            true,
            obj([("type", J::Arr(vec![s("string"), s("null")]))]),
            false,
            "string | null",
            description,
            Some("A reader takes the key absent as `null`."),
        )
    };
    let optional_ms = |name: &'static str, description: &'static str| {
        let j = obj([
            ("type", J::Arr(vec![s("integer"), s("null")])),
            ("minimum", J::Num(0)),
            ("maximum", J::Num(UINT53_MAX)),
        ]);
        member(
            name,
            j.clone(),
            true,
            j,
            false,
            "number | null",
            description,
            Some("A reader takes the key absent as `null`."),
        )
    };
    let component = || refer("JobComponent");
    vec![
        Def {
            name: "Int",
            description: "An `Int` as upstream's `int` reads it: a number whose value is a whole number from -2147483648 to 2147483647. The engine writes it in plain digits; a reader also takes `7.0`, `7e0`, `-0` (0) and a number that rounds to a whole double (`2147483646.99999999999`), but not `1.5`, `2147483648` or `\"7\"`.",
            body: Body::Raw {
                write: integer(INT_MIN, INT_MAX),
                read: None,
                ts: "number",
                items: None,
            },
        },
        Def {
            name: "JobComponent",
            description: "An artifact component, never a path: 1 to 200 of `A-Z`, `a-z`, `0-9`, `.`, `_`, `-`, and neither `.` nor `..`. A job record with any other `generation`, `id` or `output_file` is no job record, and its event is none.",
            body: Body::Raw {
                write: {
                    let mut j = obj([("type", s("string"))]);
                    j.extend(keywords(vec![
                        ("pattern", s("^[A-Za-z0-9._-]{1,200}$")),
                        (
                            "not",
                            obj([(
                                "anyOf",
                                J::Arr(vec![
                                    obj([("enum", J::Arr(vec![s("."), s("..")]))]),
                                    obj([("pattern", s("\\n"))]),
                                ]),
                            )]),
                        ),
                        ("$comment", s(NEWLINE_GUARD)),
                    ]));
                    j
                },
                read: None,
                ts: "string",
                items: None,
            },
        },
        Def {
            name: "JobEventKind",
            description: "What a `job_changed` reports. Exactly one of these strings.",
            body: Body::Raw {
                write: obj([("enum", J::Arr(vec![s("started"), s("updated"), s("finished"), s("failed")]))]),
                read: None,
                ts: "\"started\" | \"updated\" | \"finished\" | \"failed\"",
                items: None,
            },
        },
        Def {
            name: "JobStopOutcome",
            description: "How a `job_stop` came out. Exactly one of these strings.",
            body: Body::Raw {
                write: obj([("enum", J::Arr(vec![s("stopped"), s("already_terminal"), s("not_found"), s("wrong_runtime")]))]),
                read: None,
                ts: "\"stopped\" | \"already_terminal\" | \"not_found\" | \"wrong_runtime\"",
                items: None,
            },
        },
        Def {
            name: "JobState",
            description: "A background job's state, by `kind`. `interrupted` means its owner disappeared; it does not assert that every descendant process was terminated. A reader ignores keys its kind does not read; any other `kind`, an `exited` without an `Int` `code` or a `stopped` without a non-empty string `reason` is no state.",
            body: Body::Union(vec![
                ("Running.", vec![kind("running")]),
                ("Being stopped.", vec![kind("stopping")]),
                ("Exited with `code`.", vec![
                    kind("exited"),
                    same("code", refer("Int"), "Int", "The exit code, an `Int`."),
                ]),
                ("Stopped, for `reason`.", vec![
                    kind("stopped"),
                    same("reason", obj([("type", s("string")), ("minLength", J::Num(1))]), "string", "Why, not empty."),
                ]),
                ("Its owner disappeared.", vec![kind("interrupted")]),
            ]),
        },
        Def {
            name: "JobRecord",
            description: "A durable background execution record (schema version 1), written with all its keys but `data`, `null` for each optional value that is absent. A reader takes an optional key absent as `null`, and ignores keys it does not read.",
            body: Body::Object(vec![
                same("schema_version", obj([("const", J::Num(1))]), "1", "Always 1."),
                optional_str("cleanup_error", "Why cleaning up failed, if it did."),
                same("generation", component(), "string", "The engine generation that owns the job."),
                same("id", component(), "string", "The job's id."),
                same("revision", integer(1, INT_MAX), "number", "How many times the record changed: from 1 to 2147483647."),
                same("command", string(), "string", "The shell command."),
                optional_str("description", "What the job is for, if said."),
                optional_str("cwd", "Where it runs, if said."),
                Member {
                    nested: Some("JobState"),
                    ..member("state", refer("JobState"), true, refer("ReadJobState"), true, "JobState", "Running, stopping, or how it ended.", None)
                },
                same("started_at_ms", uint53(), "number", "Milliseconds since the epoch: a whole number from 0 to 2^53 - 1."),
                same("backgrounded_at_ms", uint53(), "number", "When it went to the background, likewise."),
                optional_ms("finished_at_ms", "When it finished, if it has."),
                optional_ms("last_output_at_ms", "When it last wrote output, if it has."),
                member(
                    "output_file",
                    null_or(component()),
                    true,
                    null_or(component()),
                    false,
                    "string | null",
                    "Its output file, a basename relative to `jobs/<generation>` (a job component), if kept.",
                    Some("A reader takes the key absent as `null`."),
                ),
                same("output_persistent", obj([("type", s("boolean"))]), "boolean", "Whether the output file outlives the session."),
                same("output_bytes", uint53(), "number", "Output bytes so far: from 0 to 2^53 - 1."),
                same("output_chars", integer(0, INT_MAX), "number", "Output characters so far: from 0 to 2147483647."),
                same("output_truncated", obj([("type", s("boolean"))]), "boolean", "Whether the output was cut."),
                same("invalid_utf8", obj([("type", s("boolean"))]), "boolean", "Whether the output held invalid UTF-8."),
                optional_str("output_error", "Why the output could not be read, if it could not."),
                optional_str("persistence_error", "Why the output could not be kept, if it could not."),
                member(
                    "data",
                    obj([("not", obj([("type", s("null"))]))]),
                    false,
                    J::Obj(Vec::new()),
                    false,
                    "Exclude<JsonValue, null>",
                    "Structured results kept with the job, any JSON but `null`; the key is left out when there are none. Upstream writes it back as it read it, re-serialized: keys in the order they first came (a repeated key keeps its last value), numbers as `Double::to_string` writes them (`1.50` is `1.5`), an integer beyond 2^53 - 1 or a number beyond a double as its source text.",
                    Some("A reader takes the key absent or `null` as none."),
                ),
            ]),
        },
        Def {
            name: "PredictionOutcome",
            description: "How the engine's prediction came out, by `kind`. Since fdf10827 the engine writes only `completed`, and `failed` when it could not store the prediction; `skipped` and `cancelled` (an older engine's) still read. A reader ignores keys its kind does not read; any other `kind` is no outcome.",
            body: Body::Union(vec![
                ("A prediction was made (or found nothing to say: `text` null).", vec![
                    kind("completed"),
                    member(
                        "text",
                        obj([("anyOf", J::Arr(vec![obj([("type", s("null"))]), obj([("type", s("string")), ("minLength", J::Num(1))])]))]),
                        true,
                        obj([("anyOf", J::Arr(vec![obj([("type", s("null"))]), obj([("type", s("string")), ("minLength", J::Num(1))])]))]),
                        true,
                        "string | null",
                        "The predicted text, not empty, or `null` for none. Required: written `null`, never left out.",
                        None,
                    ),
                    token_count("input_tokens", "Prompt tokens spent."),
                    token_count("output_tokens", "Tokens generated."),
                ]),
                ("The prediction was skipped.", vec![kind("skipped")]),
                ("The prediction was cancelled.", vec![kind("cancelled")]),
                ("The prediction failed, with `message`.", vec![
                    kind("failed"),
                    same("message", string(), "string", "Why."),
                ]),
            ]),
        },
        Def {
            name: "TokenUsage",
            description: "A model response's token counts (upstream's `Usage`; `serve_command::v2::Usage`): five `Int`s, each at least 0, every one required.",
            body: Body::Object(
                [
                    ("prompt_tokens", "Tokens in the prompt."),
                    ("completion_tokens", "Tokens generated."),
                    ("total_tokens", "Their sum, as the provider counts it."),
                    ("prompt_cache_hit_tokens", "Prompt tokens served from the provider's cache."),
                    ("prompt_cache_miss_tokens", "Prompt tokens not in it."),
                ]
                .into_iter()
                .map(|(name, description)| same(name, integer(0, INT_MAX), "number", description))
                .collect(),
            ),
        },
        Def {
            name: "Content",
            description: "What a steer said: a string when it is exactly one text part (so older readers still read plain text), else the array of its parts in order, empty included. A reader also takes an array of one text part, as that text. The TypeScript type cannot refuse an array of one text part; the written schema does.",
            body: Body::Raw {
                write: obj([(
                    "oneOf",
                    J::Arr(vec![
                        obj([("type", s("string")), ("description", s("Exactly one text part: its text."))]),
                        obj([
                            ("type", s("array")),
                            ("items", refer("ContentPart")),
                            (
                                "not",
                                obj([
                                    ("minItems", J::Num(1)),
                                    ("maxItems", J::Num(1)),
                                    ("items", refer("TextPart")),
                                ]),
                            ),
                            ("description", s("Any other content: its parts in order. One text part alone is written as a string.")),
                        ]),
                    ]),
                )]),
                read: Some(obj([(
                    "oneOf",
                    J::Arr(vec![
                        obj([("type", s("string"))]),
                        obj([("type", s("array")), ("items", refer("ReadContentPart"))]),
                    ]),
                )])),
                ts: "string | ContentPart[]",
                items: Some("ContentPart"),
            },
        },
        Def {
            name: "ContentPart",
            description: "One part of a message: text or an image, by `type`. A reader ignores the keys its type does not read; any other `type`, or a part that is not an object, is no content.",
            body: Body::Raw {
                write: obj([("oneOf", J::Arr(vec![refer("TextPart"), refer("ImagePart")]))]),
                read: Some(obj([("oneOf", J::Arr(vec![refer("ReadTextPart"), refer("ReadImagePart")]))])),
                ts: "TextPart | ImagePart",
                items: None,
            },
        },
        Def {
            name: "TextPart",
            description: "A text part.",
            body: Body::Object(vec![
                same("type", obj([("const", s("text"))]), "\"text\"", "The part's kind."),
                same("text", string(), "string", "The text."),
            ]),
        },
        Def {
            name: "ImagePart",
            description: "An image, inline: its bytes at most 5 MiB, PNG, JPEG, GIF or WebP as their first bytes say, and `media_type` the type they identify. A part that breaks one of these makes its event none.",
            body: Body::Object(vec![
                same("type", obj([("const", s("image"))]), "\"image\"", "The part's kind."),
                same(
                    "media_type",
                    obj([("enum", J::Arr(IMAGE_SIGNATURES.iter().map(|(t, _)| s(t)).collect()))]),
                    &IMAGE_SIGNATURES.iter().map(|(t, _)| format!("\"{t}\"")).collect::<Vec<_>>().join(" | "),
                    "The image's media type, the one its bytes identify.",
                ),
                same(
                    "data",
                    {
                        let mut j = obj([("type", s("string"))]);
                        j.extend(keywords(vec![
                            ("contentEncoding", s("base64")),
                            ("minLength", J::Num(4)),
                            ("maxLength", J::Num(MAX_IMAGE_BASE64)),
                            ("pattern", s(CANONICAL_BASE64)),
                            ("not", obj([("pattern", s("\\n"))])),
                            (
                                "if",
                                obj([("minLength", J::Num(MAX_IMAGE_BASE64))]),
                            ),
                            ("then", obj([("pattern", s("=$"))])),
                            ("$comment", s(&format!("{NEWLINE_GUARD} `maxLength` is the reference's bound before decoding; a text of that length decodes to one byte over 5 MiB unless it ends in padding (`if`/`then`)."))),
                        ]));
                        j
                    },
                    "string",
                    "The bytes in canonical padded base64 (decoding and re-encoding gives the same text back), at most 5 MiB decoded.",
                ),
            ]),
        },
    ]
}

/// `Int::from_json` (truncating) then at least 0: on the wire, the written
/// integer; for a reader, any number above -1 up to 2147483647.
fn token_count(name: &'static str, description: &'static str) -> Member {
    member(
        name,
        integer(0, INT_MAX),
        true,
        obj([
            ("type", s("number")),
            ("exclusiveMinimum", J::Num(-1)),
            ("maximum", J::Num(INT_MAX)),
        ]),
        true,
        "number",
        description,
        Some("A reader reads it through the bundled core's `Int::from_json`, which takes any number from -2147483648 to 2147483647 and truncates it toward zero (`1.5` is 1, `-0.5` is 0), then needs it at least 0: any number above -1 up to 2147483647."),
    )
}

/// The `ImagePart`'s sniffing, on both forms: each media type's signature.
fn image_extra() -> J {
    obj([
        ("$comment", s("The `allOf` is the reference's sniffing of the bytes, on their base64: each media type's signature.")),
        (
            "allOf",
            J::Arr(
                IMAGE_SIGNATURES
                    .iter()
                    .map(|(media_type, signature)| {
                        obj([
                            ("if", obj([("properties", obj([("media_type", obj([("const", s(media_type))]))]))])),
                            ("then", obj([("properties", obj([("data", obj([("pattern", s(signature))]))]))])),
                        ])
                    })
                    .collect(),
            ),
        ),
    ])
}

// ---------------------------------------------------------------------------
// The events, in the order of upstream's `to_json`.

fn png() -> Image {
    Image::from_base64("image/png", "iVBORw0KGgo=").unwrap()
}

fn job(state: JobState) -> JobRecord {
    JobRecord::new(
        "g-1",
        "job-1",
        1,
        "cargo test",
        state,
        1_751_328_000_000,
        1_751_328_001_500,
    )
}

/// Every optional value set, `data` too.
fn full_job() -> JobRecord {
    let mut j = job(JobState::Exited(-1));
    j.revision = 2_147_483_647;
    j.description = Some("d".into());
    j.cwd = Some("/w".into());
    j.finished_at_ms = Some(9_007_199_254_740_991);
    j.last_output_at_ms = Some(0);
    j.output_file = Some("job-1.log".into());
    j.output_persistent = true;
    j.output_bytes = 4096;
    j.output_chars = 4000;
    j.output_truncated = true;
    j.invalid_utf8 = true;
    j.output_error = Some("e".into());
    j.persistence_error = Some("p".into());
    j.cleanup_error = Some("c".into());
    j.data = Some(r#"{"b":1.5,"a":[true,null,"x"]}"#.parse::<JsonText>().unwrap());
    j
}

fn shapes() -> Vec<Shape> {
    use Ty::*;
    let f = |name, ty| field(name, ty, None);
    let fd = |name, ty, d| field(name, ty, Some(d));
    let text_or = |t: &str| Some(t.to_owned());
    vec![
        Shape {
            name: "JobChanged",
            event: "job_changed",
            description: "A background job started, changed, finished or failed. Job events are session-scoped and may arrive between turns.",
            members: vec![f("kind", Ref("JobEventKind")), f("job", Ref("JobRecord"))],
            examples: vec![
                Event::job_changed(JobEventKind::Started, job(JobState::Running)),
                Event::job_changed(JobEventKind::Updated, job(JobState::Stopping)),
                Event::job_changed(JobEventKind::Finished, full_job()),
                Event::job_changed(JobEventKind::Failed, job(JobState::Stopped("killed".into()))),
                Event::job_changed(JobEventKind::Finished, job(JobState::Interrupted)),
            ],
        },
        Shape {
            name: "PredictionResult",
            event: "prediction_result",
            description: "The engine's own prediction of the user's next message, answering no command: after a turn that ended `agent_finished`, with nothing else running or queued, written only if no command moved the session on. A line that still carries an older engine's `request_id` (of any type) reads the same, the key ignored.",
            members: vec![
                fd("source_sequence", Int, "The sequence number of the session's last event when the prediction started: any `Int` (0 and below too)."),
                f("outcome", Ref("PredictionOutcome")),
            ],
            examples: vec![
                Event::prediction_result(42, PredictionOutcome::Completed { text: text_or("next"), input_tokens: 120, output_tokens: 8 }),
                Event::prediction_result(-1, PredictionOutcome::Completed { text: None, input_tokens: 0, output_tokens: 2_147_483_647 }),
                Event::prediction_result(0, PredictionOutcome::Skipped),
                Event::prediction_result(1, PredictionOutcome::Cancelled),
                Event::prediction_result(1, PredictionOutcome::Failed("timeout".into())),
            ],
        },
        Shape {
            name: "JobsSnapshot",
            event: "jobs_snapshot",
            description: "The answer to a `jobs_snapshot` command: every background job.",
            members: vec![
                fd("request_id", Str, "The `request_id` of the command it answers."),
                f("jobs", Array("JobRecord")),
            ],
            examples: vec![
                Event::jobs_snapshot("r", Vec::<JobRecord>::new()),
                Event::jobs_snapshot("r", vec![job(JobState::Running), full_job()]),
            ],
        },
        Shape {
            name: "JobStopResult",
            event: "job_stop_result",
            description: "The answer to a `job_stop` command.",
            members: vec![
                fd("request_id", Str, "The `request_id` of the command it answers."),
                fd("generation", Str, "The command's `generation`, any string."),
                fd("job_id", Str, "The command's `job_id`, any string."),
                f("outcome", Ref("JobStopOutcome")),
            ],
            examples: vec![
                Event::job_stop_result("r", "g", "j", JobStopOutcome::Stopped),
                Event::job_stop_result("r", "", "../x", JobStopOutcome::AlreadyTerminal),
                Event::job_stop_result("r", "g", "j", JobStopOutcome::NotFound),
                Event::job_stop_result("r", "g", "j", JobStopOutcome::WrongRuntime),
            ],
        },
        Shape {
            name: "AgentSetupFailed",
            event: "agent_setup_failed",
            description: "The agent could not be set up.",
            members: vec![f("error", Str)],
            examples: vec![Event::agent_setup_failed("no key")],
        },
        Shape {
            name: "AgentStep",
            event: "agent_step",
            description: "A step of the turn began.",
            members: vec![f("step", Int)],
            examples: vec![Event::agent_step(1), Event::agent_step(-2_147_483_648)],
        },
        Shape {
            name: "StreamRetry",
            event: "stream_retry",
            description: "The current step's provider request failed, and attempt `attempt` of `max_attempts` is about to be made: a controller may discard the failed attempt's live output. Transient: never part of the session's record.",
            members: vec![f("attempt", Int), f("max_attempts", Int), f("reason", Str)],
            examples: vec![Event::stream_retry(2, 5, "overloaded")],
        },
        Shape {
            name: "AgentAborted",
            event: "agent_aborted",
            description: "The turn was aborted.",
            members: vec![f("reason", Str)],
            examples: vec![Event::agent_aborted("cancelled")],
        },
        Shape {
            name: "AgentFinished",
            event: "agent_finished",
            description: "The turn finished with an answer.",
            members: vec![f("answer", Str)],
            examples: vec![Event::agent_finished("done")],
        },
        Shape {
            name: "MaxStepsExhausted",
            event: "max_steps_exhausted",
            description: "The turn used every step it had.",
            members: vec![],
            examples: vec![Event::max_steps_exhausted()],
        },
        Shape {
            name: "TurnFailed",
            event: "turn_failed",
            description: "The turn failed.",
            members: vec![f("error", Str)],
            examples: vec![Event::turn_failed("e")],
        },
        Shape {
            name: "AssistantDelta",
            event: "assistant_delta",
            description: "A fragment of the assistant's message, as it streams.",
            members: vec![f("content", Str)],
            examples: vec![Event::assistant_delta("Hel")],
        },
        Shape {
            name: "ReasoningDelta",
            event: "reasoning_delta",
            description: "A fragment of the provider's reasoning, as it streams; the whole reasoning still comes once as `reasoning_message`.",
            members: vec![f("content", Str)],
            examples: vec![Event::reasoning_delta("hm")],
        },
        Shape {
            name: "AssistantMessage",
            event: "assistant_message",
            description: "The assistant's whole message.",
            members: vec![f("content", Str)],
            examples: vec![Event::assistant_message("Hello")],
        },
        Shape {
            name: "ReasoningMessage",
            event: "reasoning_message",
            description: "The provider's whole reasoning.",
            members: vec![f("content", Str)],
            examples: vec![Event::reasoning_message("because")],
        },
        Shape {
            name: "Usage",
            event: "usage",
            description: "A model response's token counts.",
            members: vec![f("usage", Ref("TokenUsage"))],
            examples: vec![Event::usage(Usage::new(10, 2, 12, 8, 2))],
        },
        Shape {
            name: "ToolResult",
            event: "tool_result",
            description: "A tool call's result.",
            members: vec![
                f("tool_call_id", Str),
                f("tool_name", Str),
                f("is_error", Bool),
                f("content", Str),
                fd("brief", NullStr, "A short summary of the result, if the tool gave one."),
            ],
            examples: vec![
                Event::tool_result("c1", "shell", "ok", text_or("ran")),
                Event::tool_error("c1", "shell", "", None),
            ],
        },
        Shape {
            name: "ToolCallDecodeError",
            event: "tool_call_decode_error",
            description: "A tool call whose arguments did not decode.",
            members: vec![f("tool_call_id", Str), f("tool_name", Str), f("error", Str)],
            examples: vec![Event::tool_call_decode_error("c1", "shell", "bad json")],
        },
        Shape {
            name: "ApprovalRequested",
            event: "approval_requested",
            description: "A tool asks for permission and is blocked until an `approval` command with this `id` comes back: the one event a controller must answer. `detail` says what would be granted, `body` what would run.",
            members: vec![
                fd("id", Str, "Minted by the engine, unique within one engine process."),
                f("tool_name", Str),
                fd("detail", Str, "What would be granted."),
                fd("body", NullStr, "What would run, verbatim."),
            ],
            examples: vec![
                Event::approval_requested("a1", "mbtx", "write", text_or("prog")),
                Event::approval_requested("a1", "mbtx", "write", None::<String>),
            ],
        },
        Shape {
            name: "ApprovalResolved",
            event: "approval_resolved",
            description: "How a requested approval settled, with or without the controller's answer: a controller retires the prompt it shows.",
            members: vec![
                f("id", Str),
                fd("outcome", Str, "Any string (`allowed_once`, `rejected` or `cancelled` today): a newer engine may settle with a word an older reader never heard of."),
            ],
            examples: vec![Event::approval_resolved("a1", "allowed_once")],
        },
        Shape {
            name: "SteerApplied",
            event: "steer_applied",
            description: "A steer was applied to the running turn.",
            members: vec![
                fd("kind", Default("prompt"), "How the steer reached the model: any string (`prompt` or `command` today)."),
                f("content", Ref("Content")),
                fd("submission_id", OmitStr, "The steer's `submission_id`, if it had one."),
            ],
            examples: vec![
                Event::steer_applied("prompt", "go on", None::<String>),
                Event::steer_applied("command", Content::new(vec![ContentPart::from("look"), png().into()]), text_or("s1")),
                Event::steer_applied("x", Content::new(Vec::new()), None::<String>),
            ],
        },
        Shape {
            name: "SteerDropped",
            event: "steer_dropped",
            description: "A steer was dropped.",
            members: vec![
                f("content", Ref("Content")),
                fd("submission_id", OmitStr, "The steer's `submission_id`, if it had one."),
            ],
            examples: vec![
                Event::steer_dropped("late", None::<String>),
                Event::steer_dropped(Content::from(png()), text_or("s2")),
            ],
        },
        Shape {
            name: "BackgroundNotice",
            event: "background_notice",
            description: "A notice from the background.",
            members: vec![f("content", Str)],
            examples: vec![Event::background_notice("job done")],
        },
        Shape {
            name: "GoalUpdated",
            event: "goal_updated",
            description: "The goal changed.",
            members: vec![fd("goal", NullStr, "The goal; `null` when it was cleared.")],
            examples: vec![Event::goal_updated(text_or("ship")), Event::goal_updated(None::<String>)],
        },
        Shape {
            name: "GoalBlocked",
            event: "goal_blocked",
            description: "The goal is blocked.",
            members: vec![f("reason", Str)],
            examples: vec![Event::goal_blocked("needs input")],
        },
        Shape {
            name: "GoalUnblocked",
            event: "goal_unblocked",
            description: "The goal is no longer blocked.",
            members: vec![],
            examples: vec![Event::goal_unblocked()],
        },
        Shape {
            name: "GoalCheck",
            event: "goal_check",
            description: "The goal's check.",
            members: vec![f("content", Str)],
            examples: vec![Event::goal_check("tests pass?")],
        },
        Shape {
            name: "GoalReminder",
            event: "goal_reminder",
            description: "A reminder of the goal.",
            members: vec![f("content", Str)],
            examples: vec![Event::goal_reminder("ship")],
        },
        Shape {
            name: "GoalContinue",
            event: "goal_continue",
            description: "The goal goes on, with `remaining` turns.",
            members: vec![f("remaining", Int)],
            examples: vec![Event::goal_continue(3)],
        },
        Shape {
            name: "GoalBudgetExhausted",
            event: "goal_budget_exhausted",
            description: "The goal used its `turns`.",
            members: vec![f("turns", Int)],
            examples: vec![Event::goal_budget_exhausted(10)],
        },
        Shape {
            name: "PlanReminder",
            event: "plan_reminder",
            description: "A reminder of the plan.",
            members: vec![f("content", Str)],
            examples: vec![Event::plan_reminder("step 2")],
        },
        Shape {
            name: "CompactionStarted",
            event: "compaction_started",
            description: "A compaction began.",
            members: vec![f("from_sequence", Int), f("to_sequence", Int)],
            examples: vec![Event::compaction_started(1, 9)],
        },
        Shape {
            name: "CompactionFinished",
            event: "compaction_finished",
            description: "A compaction finished.",
            members: vec![f("from_sequence", Int), f("to_sequence", Int), f("summary", Str)],
            examples: vec![Event::compaction_finished(1, 9, "so far")],
        },
        Shape {
            name: "CompactionFailed",
            event: "compaction_failed",
            description: "A compaction failed, or was cancelled: how loudly to show it is the client's call.",
            members: vec![f("error", Str)],
            examples: vec![Event::compaction_failed("cancelled")],
        },
        Shape {
            name: "SubrunStarted",
            event: "subrun_started",
            description: "A nested sub-run (a review, an explore) began inside this run.",
            members: vec![
                fd("id", Str, "Unique within the stream: it pairs the start with its finish."),
                fd("kind", Str, "The surface (`review`, `explore`)."),
                fd("label", Str, "A short, display-bounded string."),
            ],
            examples: vec![Event::subrun_started("s1", "review", "diff")],
        },
        Shape {
            name: "SubrunFinished",
            event: "subrun_finished",
            description: "The paired completion of a sub-run, on success, failure and cancellation, before the parent turn's own terminal event.",
            members: vec![
                f("id", Str),
                fd("status", Str, "The sub-run's terminal in snake_case (`captured`, `no_report`, `max_steps`, `context_yield`, `timed_out`, `failed`, `cancelled`)."),
                f("steps", Int),
                f("prompt_tokens", Int),
                f("completion_tokens", Int),
                fd("unaccounted", OmitStr, "Why the counts may fall short of the child's spend; absent, they are the child's own account."),
            ],
            examples: vec![
                Event::subrun_finished("s1", SubrunStatus::Captured).steps(3).tokens(100, 20).build(),
                Event::subrun_finished("s1", SubrunStatus::Cancelled).unaccounted("no result").build(),
            ],
        },
        Shape {
            name: "WorkflowStarted",
            event: "workflow_started",
            description: "A `mbtx` snippet started a workflow, a run that delegates to child agents of its own.",
            members: vec![
                f("id", Str),
                fd("journal", Str, "The absolute path of its append-only JSONL ledger of resolved calls."),
                fd("events", Str, "The absolute path of the sidecar that reports each launch when it starts."),
                fd("first_child", Int, "The first reserved child ordinal: the run's child sessions are `<parent>-sr-N` for N from `first_child` below `first_child + child_count`."),
                f("child_count", Int),
            ],
            examples: vec![Event::workflow_started("w1", "/j.jsonl", "/e.jsonl").children(4, 2).build()],
        },
        Shape {
            name: "WorkflowFinished",
            event: "workflow_finished",
            description: "The paired completion of a workflow, on every exit of its snippet.",
            members: vec![f("id", Str)],
            examples: vec![Event::workflow_finished("w1")],
        },
        Shape {
            name: "AutoCompactionStarted",
            event: "auto_compaction_started",
            description: "An automatic compaction began.",
            members: vec![f("from_sequence", Int), f("to_sequence", Int)],
            examples: vec![Event::auto_compaction_started(1, 9)],
        },
        Shape {
            name: "AutoCompactionFinished",
            event: "auto_compaction_finished",
            description: "An automatic compaction finished.",
            members: vec![f("from_sequence", Int), f("to_sequence", Int), f("summary", Str)],
            examples: vec![Event::auto_compaction_finished(1, 9, "so far")],
        },
        Shape {
            name: "AutoCompactionFailed",
            event: "auto_compaction_failed",
            description: "An automatic compaction failed.",
            members: vec![f("error", Str)],
            examples: vec![Event::auto_compaction_failed("e")],
        },
        Shape {
            name: "ContextYield",
            event: "context_yield",
            description: "The context yielded.",
            members: vec![f("to_sequence", Int), f("answer", Str)],
            examples: vec![Event::context_yield(9, "a")],
        },
        Shape {
            name: "SessionStarted",
            event: "session_started",
            description: "The session began.",
            members: vec![
                f("session", Str),
                f("session_root", Str),
                fd("workspace_root", NullStr, "The workspace's root, if there is one."),
            ],
            examples: vec![
                Event::session_started("s", "/r", text_or("/w")),
                Event::session_started("s", "/r", None::<String>),
            ],
        },
        Shape {
            name: "SessionError",
            event: "session_error",
            description: "The session failed.",
            members: vec![f("error", Str)],
            examples: vec![Event::session_error("e")],
        },
        Shape {
            name: "WorkspaceCreated",
            event: "workspace_created",
            description: "A workspace was created.",
            members: vec![f("dir", Str)],
            examples: vec![Event::workspace_created("/w")],
        },
        Shape {
            name: "CommandError",
            event: "command_error",
            description: "A command line the engine could not use, and why: the `command_error` of the command schemas.",
            members: vec![fd("error", Str, "Why: one of the command schemas' `CommandError` messages, or `command stream: ...` for a line that is not JSON.")],
            examples: vec![Event::command_error("unknown command: x")],
        },
        Shape {
            name: "McpConfigIgnored",
            event: "mcp_config_ignored",
            description: "The MCP configuration was ignored.",
            members: vec![f("reason", Str)],
            examples: vec![Event::mcp_config_ignored("r")],
        },
        Shape {
            name: "McpConfigUnreadable",
            event: "mcp_config_unreadable",
            description: "The MCP configuration could not be read.",
            members: vec![f("path", Str), f("error", Str)],
            examples: vec![Event::mcp_config_unreadable("/m.json", "e")],
        },
        Shape {
            name: "McpConfigInvalid",
            event: "mcp_config_invalid",
            description: "The MCP configuration is invalid.",
            members: vec![f("path", Str), f("error", Str)],
            examples: vec![Event::mcp_config_invalid("/m.json", "e")],
        },
        Shape {
            name: "McpToolsRegistered",
            event: "mcp_tools_registered",
            description: "MCP tools were registered.",
            members: vec![f("servers", Int), f("tools", Int), f("names", Strings)],
            examples: vec![
                Event::mcp_tools_registered(1, 2, vec!["a".to_owned(), "b".to_owned()]),
                Event::mcp_tools_registered(0, 0, Vec::<String>::new()),
            ],
        },
        Shape {
            name: "McpToolDuplicate",
            event: "mcp_tool_duplicate",
            description: "Two MCP servers offer a tool of one name.",
            members: vec![f("server", Str), f("tool", Str)],
            examples: vec![Event::mcp_tool_duplicate("s", "t")],
        },
        Shape {
            name: "McpToolRenamed",
            event: "mcp_tool_renamed",
            description: "An MCP tool was renamed.",
            members: vec![f("from", Str), f("to", Str)],
            examples: vec![Event::mcp_tool_renamed("a", "b")],
        },
        Shape {
            name: "McpToolsCapped",
            event: "mcp_tools_capped",
            description: "An MCP server's tools were capped at `kept`.",
            members: vec![f("server", Str), f("kept", Int)],
            examples: vec![Event::mcp_tools_capped("s", 64)],
        },
        Shape {
            name: "McpServerSkippedOverCap",
            event: "mcp_server_skipped_over_cap",
            description: "An MCP server was skipped, over the cap.",
            members: vec![f("server", Str)],
            examples: vec![Event::mcp_server_skipped_over_cap("s")],
        },
        Shape {
            name: "McpConnectFailed",
            event: "mcp_connect_failed",
            description: "An MCP server could not be reached.",
            members: vec![
                f("server", Str),
                fd("error", Default("unknown error"), "The connect failure's text: the spawn or transport error, a handshake error, or the handshake timeout. Engines before 2026-09-04 wrote `null` when there was none."),
            ],
            examples: vec![Event::mcp_connect_failed("s", "timeout")],
        },
        Shape {
            name: "McpListToolsFailed",
            event: "mcp_list_tools_failed",
            description: "Listing an MCP server's tools failed.",
            members: vec![f("server", Str), f("error", Str)],
            examples: vec![Event::mcp_list_tools_failed("s", "e")],
        },
        Shape {
            name: "McpListToolsTimeout",
            event: "mcp_list_tools_timeout",
            description: "Listing an MCP server's tools timed out.",
            members: vec![f("server", Str)],
            examples: vec![Event::mcp_list_tools_timeout("s")],
        },
        Shape {
            name: "McpNoTools",
            event: "mcp_no_tools",
            description: "An MCP server offers no tools.",
            members: vec![f("server", Str)],
            examples: vec![Event::mcp_no_tools("s")],
        },
    ]
}

/// The shape of each variant. `Event` is non-exhaustive: a new variant
/// reaches the wildcard, and every example and vector goes through here.
fn shape_of(event: &Event) -> &'static str {
    match event {
        Event::JobChanged { .. } => "JobChanged",
        Event::PredictionResult { .. } => "PredictionResult",
        Event::JobsSnapshot { .. } => "JobsSnapshot",
        Event::JobStopResult { .. } => "JobStopResult",
        Event::AgentSetupFailed { .. } => "AgentSetupFailed",
        Event::AgentStep { .. } => "AgentStep",
        Event::StreamRetry { .. } => "StreamRetry",
        Event::AgentAborted { .. } => "AgentAborted",
        Event::AgentFinished { .. } => "AgentFinished",
        Event::MaxStepsExhausted => "MaxStepsExhausted",
        Event::TurnFailed { .. } => "TurnFailed",
        Event::AssistantDelta { .. } => "AssistantDelta",
        Event::ReasoningDelta { .. } => "ReasoningDelta",
        Event::AssistantMessage { .. } => "AssistantMessage",
        Event::ReasoningMessage { .. } => "ReasoningMessage",
        Event::Usage { .. } => "Usage",
        Event::ToolResult { .. } => "ToolResult",
        Event::ToolCallDecodeError { .. } => "ToolCallDecodeError",
        Event::ApprovalRequested { .. } => "ApprovalRequested",
        Event::ApprovalResolved { .. } => "ApprovalResolved",
        Event::SteerApplied { .. } => "SteerApplied",
        Event::SteerDropped { .. } => "SteerDropped",
        Event::BackgroundNotice { .. } => "BackgroundNotice",
        Event::GoalUpdated { .. } => "GoalUpdated",
        Event::GoalBlocked { .. } => "GoalBlocked",
        Event::GoalUnblocked => "GoalUnblocked",
        Event::GoalCheck { .. } => "GoalCheck",
        Event::GoalReminder { .. } => "GoalReminder",
        Event::GoalContinue { .. } => "GoalContinue",
        Event::GoalBudgetExhausted { .. } => "GoalBudgetExhausted",
        Event::PlanReminder { .. } => "PlanReminder",
        Event::CompactionStarted { .. } => "CompactionStarted",
        Event::CompactionFinished { .. } => "CompactionFinished",
        Event::CompactionFailed { .. } => "CompactionFailed",
        Event::SubrunStarted { .. } => "SubrunStarted",
        Event::SubrunFinished { .. } => "SubrunFinished",
        Event::WorkflowStarted { .. } => "WorkflowStarted",
        Event::WorkflowFinished { .. } => "WorkflowFinished",
        Event::AutoCompactionStarted { .. } => "AutoCompactionStarted",
        Event::AutoCompactionFinished { .. } => "AutoCompactionFinished",
        Event::AutoCompactionFailed { .. } => "AutoCompactionFailed",
        Event::ContextYield { .. } => "ContextYield",
        Event::SessionStarted { .. } => "SessionStarted",
        Event::SessionError { .. } => "SessionError",
        Event::WorkspaceCreated { .. } => "WorkspaceCreated",
        Event::CommandError { .. } => "CommandError",
        Event::McpConfigIgnored { .. } => "McpConfigIgnored",
        Event::McpConfigUnreadable { .. } => "McpConfigUnreadable",
        Event::McpConfigInvalid { .. } => "McpConfigInvalid",
        Event::McpToolsRegistered { .. } => "McpToolsRegistered",
        Event::McpToolDuplicate { .. } => "McpToolDuplicate",
        Event::McpToolRenamed { .. } => "McpToolRenamed",
        Event::McpToolsCapped { .. } => "McpToolsCapped",
        Event::McpServerSkippedOverCap { .. } => "McpServerSkippedOverCap",
        Event::McpConnectFailed { .. } => "McpConnectFailed",
        Event::McpListToolsFailed { .. } => "McpListToolsFailed",
        Event::McpListToolsTimeout { .. } => "McpListToolsTimeout",
        Event::McpNoTools { .. } => "McpNoTools",
        other => {
            panic!("an event with no shape: {other:?}; give it one in schema-check/tests/events.rs")
        }
    }
}

// ---------------------------------------------------------------------------
// The generator.

const TITLE: &str = "serve event, v2";

const DESCRIPTION: &str = "One event an agent engine (`openseek serve`) writes on its stdout: one JSON object per line, compact, ending in one LF, its `event` naming one of 58 events. This file holds two schemas. (a) The root: the line the engine writes for an event (upstream's `Event::to_json`, stringified), the canonical line: exactly its event's keys (`additionalProperties: false` everywhere but a job's free-form `data`), every key the engine always writes required, `null` where it writes `null`, integers in their ranges, and the nested job records, job states, prediction outcomes, token usage and content in the shapes their `to_json` writes. (b) `#/$defs/ReadEvent` (`{\"$ref\": \"event-v2.schema.json#/$defs/ReadEvent\"}`): a line a client reads as an event (upstream's `parse` returns one rather than `None`): keys it does not read are ignored, wherever they are; a field `parse` defaults may be absent or hold anything; the nested values as their `FromJson` reads them. Every line valid against (a) is valid against (b).";

const NOT_CHECKED: &str = "Not checked by (a): the key order (`event` first, then each shape's properties in the order listed, which is `to_json`'s, nested objects too); the numbers' spelling (the engine writes plain digits, `7`, where `integer` also takes `7.0` or `7e0`) and every other byte of the text (compactness, string escapes, the final LF, a duplicate key); how a job's `data` is re-serialized (the schema says only that it is not `null`). Not checked by (b): a duplicate key (`parse` takes the last value, as most JSON parsers do); numbers as upstream reads them: the nearest double, correctly rounded (a validator that keeps more precision sees `2147483646.99999999999` as no integer), and a decimal exponent kept in 32 bits, which wraps (`1e4294967296` reads as 1, where the schema sees an integer beyond every range: schema/rejects-events-v2.jsonl); a line that is not UTF-8 or holds a lone surrogate escape (not JSON to upstream's parser); the line limit of a reader. Neither checks an image's bytes beyond their base64 text: the signatures are checked on the text, the 5 MiB limit as the text's length, both exact.";

fn properties(members: &[Member], read: bool) -> J {
    let mut properties = J::Obj(Vec::new());
    for m in members {
        let mut p = if read {
            m.read.clone()
        } else {
            m.write.clone()
        };
        if let Some(d) = &m.description {
            p.push("description", J::Str(d.clone()));
        }
        if read {
            if let Some(c) = m.comment {
                p.push("$comment", s(c));
            }
        }
        properties.push(m.name, p);
    }
    properties
}

fn object(members: &[Member], read: bool) -> J {
    let required: Vec<J> = members
        .iter()
        .filter(|m| if read { m.needed } else { m.always })
        .map(|m| s(m.name))
        .collect();
    let mut j = obj([
        ("type", s("object")),
        ("properties", properties(members, read)),
        ("required", J::Arr(required)),
    ]);
    if !read {
        j.push("additionalProperties", J::Bool(false));
    }
    j
}

/// A shape's members with `event` first.
fn with_event(shape: &Shape) -> Vec<Member> {
    let name = serde_json::to_string(shape.event).unwrap();
    let mut all = vec![Member {
        ts: name,
        ..same(
            "event",
            obj([("const", s(shape.event))]),
            "",
            "The event's name.",
        )
    }];
    all.extend(shape.members.iter().map(|m| Member {
        write: m.write.clone(),
        read: m.read.clone(),
        ts: m.ts.clone(),
        description: m.description.clone(),
        ..*m
    }));
    all
}

fn json_schema() -> String {
    let shapes = shapes();
    let mut defs_j = J::Obj(Vec::new());
    let roots = |read: bool| {
        J::Arr(
            shapes
                .iter()
                .map(|sh| {
                    refer(&if read {
                        format!("Read{}", sh.name)
                    } else {
                        sh.name.to_owned()
                    })
                })
                .collect(),
        )
    };
    defs_j.push(
        "ReadEvent",
        obj([
            ("title", s("ReadEvent")),
            ("description", s("(b) A line a client reads as an event: what upstream's `parse` takes. A line whose `event` is no string or names no event is none: a reader ignores it, as it ignores every line that is not an event (an engine newer than the reader may write events it does not know). Validate against `{\"$ref\": \"event-v2.schema.json#/$defs/ReadEvent\"}`.")),
            ("type", s("object")),
            ("oneOf", roots(true)),
        ]),
    );
    for def in defs() {
        let forms: Vec<(String, J)> = match &def.body {
            Body::Raw { write, read, .. } => {
                let mut v = vec![(def.name.to_owned(), write.clone())];
                if let Some(read) = read {
                    v.push((format!("Read{}", def.name), read.clone()));
                }
                v
            }
            Body::Object(members) => vec![
                (def.name.to_owned(), object(members, false)),
                (format!("Read{}", def.name), object(members, true)),
            ],
            Body::Union(variants) => [false, true]
                .into_iter()
                .map(|read| {
                    let one_of = variants
                        .iter()
                        .map(|(description, members)| {
                            let mut o = obj([("description", s(description))]);
                            o.extend(object(members, read));
                            o
                        })
                        .collect();
                    let name = if read {
                        format!("Read{}", def.name)
                    } else {
                        def.name.to_owned()
                    };
                    (name, obj([("oneOf", J::Arr(one_of))]))
                })
                .collect(),
        };
        for (n, (name, form)) in forms.into_iter().enumerate() {
            let description = if n == 0 {
                def.description.to_owned()
            } else {
                format!("As a reader takes it. {}", def.description)
            };
            let mut d = obj([("description", J::Str(description))]);
            d.extend(form);
            if def.name == "ImagePart" {
                d.extend(image_extra());
            }
            defs_j.push(&name, d);
        }
    }
    for read in [false, true] {
        for shape in &shapes {
            let name = if read {
                format!("Read{}", shape.name)
            } else {
                shape.name.to_owned()
            };
            let mut d = obj([
                ("title", J::Str(name.clone())),
                ("description", s(shape.description)),
            ]);
            d.extend(object(&with_event(shape), read));
            defs_j.push(&name, d);
        }
    }
    let root = obj([
        ("$schema", s("https://json-schema.org/draft/2020-12/schema")),
        ("title", s(TITLE)),
        ("description", s(DESCRIPTION)),
        (
            "$comment",
            J::Str(format!(
                "Generated by schema-check/tests/events.rs from serve_command::v2::Event; do not edit. Regenerate: UPDATE_SCHEMA=1 cargo test -p serve-command-schema-check. The root is (a), what the engine writes; `#/$defs/ReadEvent` is (b), what a client reads; each event's shape is `#/$defs/<Variant>` in (a) and `#/$defs/Read<Variant>` in (b), each named type likewise when its two forms differ. {NOT_CHECKED}"
            )),
        ),
        ("type", s("object")),
        ("oneOf", roots(false)),
        ("$defs", defs_j),
    ]);
    let mut out = String::new();
    root.write(0, &mut out);
    out.push('\n');
    out
}

fn ts_members(members: &[Member], out: &mut String) {
    for m in members {
        if let Some(d) = &m.description {
            doc_comment(d, "  ", out);
        }
        let optional = if m.always { "" } else { "?" };
        writeln!(out, "  {}{optional}: {};", m.name, m.ts).unwrap();
    }
}

fn typescript() -> String {
    let shapes = shapes();
    let mut out = String::new();
    doc_comment(
        &format!("{TITLE}: the lines the engine writes, as TypeScript types. Generated by schema-check/tests/events.rs from serve_command::v2::Event; do not edit. Regenerate: UPDATE_SCHEMA=1 cargo test -p serve-command-schema-check. These types are the canonical line, event-v2.schema.json's root (a): exactly each event's keys (object literals are checked for them), `null` where it is written, a key marked `?` left out when it has no value. A client that reads a line as upstream's `parse` does (event-v2.schema.json's `#/$defs/ReadEvent`) and applies its defaults holds one of these. The types do not check what a pattern, a range or an array's length says (a job component, an integer's range, an image's base64, content of one text part written as an array): the schema does."),
        "",
        &mut out,
    );
    out.push('\n');
    doc_comment("Any JSON value: a job's free-form `data`.", "", &mut out);
    writeln!(
        out,
        "export type JsonValue =\n  | null\n  | boolean\n  | number\n  | string\n  | JsonValue[]\n  | {{ [key: string]: JsonValue }};"
    )
    .unwrap();
    for def in defs() {
        out.push('\n');
        doc_comment(def.description, "", &mut out);
        match &def.body {
            Body::Raw { ts, .. } => writeln!(out, "export type {} = {ts};", def.name).unwrap(),
            Body::Object(members) => {
                writeln!(out, "export interface {} {{", def.name).unwrap();
                ts_members(members, &mut out);
                writeln!(out, "}}").unwrap();
            }
            Body::Union(variants) => {
                writeln!(out, "export type {} =", def.name).unwrap();
                for (n, (description, members)) in variants.iter().enumerate() {
                    doc_comment(description, "  ", &mut out);
                    let fields: Vec<String> = members
                        .iter()
                        .map(|m| format!("{}: {}", m.name, m.ts))
                        .collect();
                    let end = if n + 1 == variants.len() { ";" } else { "" };
                    writeln!(out, "  | {{ {} }}{end}", fields.join("; ")).unwrap();
                }
            }
        }
    }
    out.push('\n');
    doc_comment(
        DESCRIPTION.split(" This file holds").next().unwrap(),
        "",
        &mut out,
    );
    writeln!(out, "export type Event =").unwrap();
    for (n, shape) in shapes.iter().enumerate() {
        let end = if n + 1 == shapes.len() { ";" } else { "" };
        writeln!(out, "  | {}{end}", shape.name).unwrap();
    }
    out.push('\n');
    doc_comment("Every event's name.", "", &mut out);
    writeln!(out, "export type EventName = Event[\"event\"];").unwrap();
    for shape in &shapes {
        out.push('\n');
        doc_comment(shape.description, "", &mut out);
        writeln!(out, "export interface {} {{", shape.name).unwrap();
        ts_members(&with_event(shape), &mut out);
        writeln!(out, "}}").unwrap();
    }
    out
}

// ---------------------------------------------------------------------------
// The checks.

#[test]
fn schema_files_are_current() {
    check_generated(&format!("schema/{STEM}.schema.json"), &json_schema());
    check_generated(&format!("schema/{STEM}.ts"), &typescript());
}

/// The written form (a): the file's root.
fn written() -> jsonschema::Validator {
    validator(&json_schema())
}

/// The reader's form (b): `#/$defs/ReadEvent`.
fn readable() -> jsonschema::Validator {
    rooted("ReadEvent")
}

/// The schema with its root narrowed to one `$defs` entry.
fn rooted(def: &str) -> jsonschema::Validator {
    let mut schema = parse(&json_schema());
    schema["oneOf"] = serde_json::json!([{ "$ref": format!("#/$defs/{def}") }]);
    jsonschema::draft202012::new(&schema).expect("the schema compiles")
}

/// A JSON value with every object's keys in their order, as written.
#[derive(Debug)]
enum Ordered {
    Obj(Vec<(String, Ordered)>),
    Arr(Vec<Ordered>),
    Str(String),
    Leaf,
}

impl<'de> serde::Deserialize<'de> for Ordered {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Ordered;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("JSON")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Ordered, A::Error> {
                let mut entries = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    entries.push((key, map.next_value::<Ordered>()?));
                }
                Ok(Ordered::Obj(entries))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Ordered, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element::<Ordered>()? {
                    items.push(item);
                }
                Ok(Ordered::Arr(items))
            }
            fn visit_str<E>(self, v: &str) -> Result<Ordered, E> {
                Ok(Ordered::Str(v.to_owned()))
            }
            fn visit_string<E>(self, v: String) -> Result<Ordered, E> {
                Ok(Ordered::Str(v))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Ordered, E> {
                Ok(Ordered::Leaf)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Ordered, E> {
                Ok(Ordered::Leaf)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Ordered, E> {
                Ok(Ordered::Leaf)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Ordered, E> {
                Ok(Ordered::Leaf)
            }
            fn visit_unit<E>(self) -> Result<Ordered, E> {
                Ok(Ordered::Leaf)
            }
        }
        d.deserialize_any(V)
    }
}

/// Each object's keys, from `members` in their order, and every key seen
/// recorded under `at` (a def or shape name, `#` and the variant's index for
/// a union's variant).
fn walk_members(
    at: &str,
    members: &[Member],
    value: &Ordered,
    seen: &mut BTreeMap<String, BTreeSet<String>>,
) {
    let Ordered::Obj(entries) = value else {
        panic!("{at}: not an object: {value:?}")
    };
    let names: Vec<&str> = members.iter().map(|m| m.name).collect();
    let positions: Vec<Option<usize>> = entries
        .iter()
        .map(|(k, _)| names.iter().position(|n| n == k))
        .collect();
    assert!(
        positions.iter().all(Option::is_some) && positions.windows(2).all(|w| w[0] < w[1]),
        "{at}: writes {:?}; the shape lists {names:?}",
        entries.iter().map(|(k, _)| k).collect::<Vec<_>>()
    );
    for (key, item) in entries {
        seen.entry(at.to_owned()).or_default().insert(key.clone());
        let m = members.iter().find(|m| m.name == key).unwrap();
        if let Some(def) = m.nested {
            match item {
                Ordered::Arr(items) if m.ts.ends_with("[]") => {
                    for item in items {
                        walk_def(def, item, seen);
                    }
                }
                item => walk_def(def, item, seen),
            }
        }
    }
}

fn walk_def(name: &str, value: &Ordered, seen: &mut BTreeMap<String, BTreeSet<String>>) {
    let defs = defs();
    let def = defs.iter().find(|d| d.name == name).unwrap();
    match &def.body {
        Body::Object(members) => walk_members(name, members, value, seen),
        Body::Union(variants) => {
            let Ordered::Obj(entries) = value else {
                panic!("{name}: {value:?}")
            };
            let kind = entries.iter().find_map(|(k, v)| match v {
                Ordered::Str(v) if k == "kind" => Some(v.clone()),
                _ => None,
            });
            let n = variants
                .iter()
                .position(|(_, members)| {
                    members.iter().any(|m| {
                        m.name == "kind"
                            && m.ts == serde_json::to_string(kind.as_deref().unwrap_or("")).unwrap()
                    })
                })
                .unwrap_or_else(|| panic!("{name}: no variant of kind {kind:?}"));
            walk_members(&format!("{name}#{n}"), &variants[n].1, value, seen);
        }
        Body::Raw { items, .. } => {
            if let (Some(items), Ordered::Arr(values)) = (items, value) {
                for v in values {
                    walk_part(items, v, seen);
                }
            }
        }
    }
}

/// A content part: its members by `type`.
fn walk_part(name: &str, value: &Ordered, seen: &mut BTreeMap<String, BTreeSet<String>>) {
    assert_eq!(name, "ContentPart");
    let Ordered::Obj(entries) = value else {
        panic!("{name}: {value:?}")
    };
    let ty = entries.iter().find_map(|(k, v)| match v {
        Ordered::Str(v) if k == "type" => Some(v.as_str()),
        _ => None,
    });
    match ty {
        Some("text") => walk_def("TextPart", value, seen),
        Some("image") => walk_def("ImagePart", value, seen),
        other => panic!("a part of type {other:?}"),
    }
}

/// Checks a canonical line's keys and their order against `shape`, nested
/// values too, recording the keys seen.
fn walk_line(shape: &Shape, line: &str, seen: &mut BTreeMap<String, BTreeSet<String>>) {
    let value: Ordered = serde_json::from_str(line).expect("a canonical line serde_json reads");
    walk_members(shape.name, &with_event(shape), &value, seen);
}

/// Every key of every shape, nested ones too: `(where, key)`.
fn every_key() -> BTreeMap<String, BTreeSet<String>> {
    let mut all: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for shape in shapes() {
        all.insert(
            shape.name.to_owned(),
            with_event(&shape)
                .iter()
                .map(|m| m.name.to_owned())
                .collect(),
        );
    }
    for def in defs() {
        match &def.body {
            Body::Object(members) => {
                all.insert(
                    def.name.to_owned(),
                    members.iter().map(|m| m.name.to_owned()).collect(),
                );
            }
            Body::Union(variants) => {
                for (n, (_, members)) in variants.iter().enumerate() {
                    all.insert(
                        format!("{}#{n}", def.name),
                        members.iter().map(|m| m.name.to_owned()).collect(),
                    );
                }
            }
            Body::Raw { .. } => {}
        }
    }
    all
}

#[test]
fn every_example_is_canonical_and_writes_exactly_its_shapes_keys() {
    let shapes = shapes();
    let all = written();
    let read = readable();
    let mut seen = BTreeMap::new();
    for shape in &shapes {
        assert!(!shape.examples.is_empty(), "{}: no examples", shape.name);
        let alone = rooted(shape.name);
        for event in &shape.examples {
            assert_eq!(shape_of(event), shape.name, "{event:?}");
            assert_eq!(event.name(), shape.event);
            let line = event.to_line();
            let line = line.trim_end_matches('\n');
            // Canonical: it reads back as itself.
            let back = Event::from_slice(line.as_bytes()).expect("an example reads back");
            assert_eq!(&back, event, "{line}");
            walk_line(shape, line, &mut seen);
            let value = parse(line);
            let errors: Vec<String> = all.iter_errors(&value).map(|e| e.to_string()).collect();
            assert!(errors.is_empty(), "{line}: {errors:?}");
            assert!(
                alone.is_valid(&value),
                "{}: {line} is not valid against its own shape",
                shape.name
            );
            assert!(read.is_valid(&value), "{line} is not readable");
        }
    }
    // Every key the shapes list is written by some example: none is
    // invented.
    assert_eq!(seen, every_key());
}

#[test]
fn the_schema_and_the_types_cover_every_variant() {
    let names: Vec<&str> = shapes().iter().map(|s| s.name).collect();
    assert_eq!(names.len(), 58);
    assert_eq!(names.iter().collect::<BTreeSet<_>>().len(), 58);
    let events: BTreeSet<&str> = shapes().iter().map(|s| s.event).collect();
    assert_eq!(events.len(), 58);
    let ts = typescript();
    let union = format!(
        "export type Event =\n{};\n",
        names
            .iter()
            .map(|n| format!("  | {n}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(ts.contains(&union));
}

enum Verdict {
    Ok(String),
    None,
    NotJson,
}

struct Vector {
    line: String,
    verdict: Verdict,
    why: String,
}

fn read_vectors() -> Vec<Vector> {
    let text = std::fs::read_to_string(root().join(VECTORS)).unwrap();
    text.lines()
        .map(|l| {
            let v = parse(l);
            let verdict = if let Some(ok) = v["ok"].as_str() {
                Verdict::Ok(ok.to_owned())
            } else if v["none"] == true {
                Verdict::None
            } else {
                assert_eq!(v["not_json"], true, "{l}");
                Verdict::NotJson
            };
            Vector {
                line: v["line"].as_str().expect("a line").to_owned(),
                verdict,
                why: v["why"].as_str().unwrap().to_owned(),
            }
        })
        .collect()
}

/// Every `ok` vector's canonical line validates against (a), through
/// exactly one shape: the one of the event the crate decodes it to.
#[test]
fn every_canonical_line_validates_against_its_shape_only() {
    let all = written();
    let shapes = shapes();
    let alone: Vec<(&str, jsonschema::Validator)> =
        shapes.iter().map(|s| (s.name, rooted(s.name))).collect();
    let mut checked = 0;
    let mut seen = BTreeMap::new();
    for v in read_vectors() {
        let Verdict::Ok(canonical) = &v.verdict else {
            continue;
        };
        // A job's `data` may hold a number beyond a double, which upstream
        // writes back as its source text.
        let value = value_of(canonical).expect("a canonical line is JSON");
        let errors: Vec<String> = all.iter_errors(&value).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{}: {canonical}: {errors:?}", v.why);
        let taken: Vec<&str> = alone
            .iter()
            .filter(|(_, validator)| validator.is_valid(&value))
            .map(|(name, _)| *name)
            .collect();
        let event = Event::from_slice(canonical.as_bytes()).expect("a canonical line reads");
        assert_eq!(taken, [shape_of(&event)], "{}: {canonical}", v.why);
        let shape = shapes.iter().find(|s| s.name == taken[0]).unwrap();
        walk_line(shape, &stand_in(canonical), &mut seen);
        checked += 1;
    }
    assert_eq!(checked, CANONICAL_CHECKED, "ok vectors");
}

/// How many `ok` vectors there are, each canonical line validated.
const CANONICAL_CHECKED: usize = 830;

/// A number beyond a double's range (`1e400`), which serde_json refuses,
/// replaced by a double of its sign beyond every bound the schema sets
/// (`1e300`, an integer too): every keyword here judges the two alike, as
/// JSON Schema's numbers are exact. Upstream reads such a number as
/// infinity (or, with an exponent past 32 bits, otherwise: the exceptions).
fn stand_in(line: &str) -> String {
    let bytes = line.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    let mut in_string = false;
    while i < bytes.len() {
        let c = bytes[i];
        if in_string {
            if c == b'\\' {
                let end = (i + 2).min(bytes.len());
                out.extend_from_slice(&bytes[i..end]);
                i = end;
                continue;
            }
            in_string = c != b'"';
        } else if c == b'"' {
            in_string = true;
        } else if c == b'-' || c.is_ascii_digit() {
            let end = bytes[i..]
                .iter()
                .position(|b| !(b.is_ascii_digit() || b"+-.eE".contains(b)))
                .map_or(bytes.len(), |n| i + n);
            let token = &line[i..end];
            match token.parse::<f64>() {
                Ok(x) if x.is_infinite() => {
                    out.extend_from_slice(if x < 0.0 { b"-1e300" } else { b"1e300" })
                }
                _ => out.extend_from_slice(token.as_bytes()),
            }
            i = end;
            continue;
        }
        out.push(c);
        i += 1;
    }
    String::from_utf8(out).expect("replaced only ASCII")
}

/// A vector line as serde_json reads it, numbers beyond a double stood in
/// for; `None` for a line it cannot read at all.
fn value_of(line: &str) -> Option<Value> {
    serde_json::from_str(line)
        .or_else(|_| serde_json::from_str(&stand_in(line)))
        .ok()
}

#[test]
fn numbers_beyond_a_double_are_stood_in_for() {
    assert_eq!(
        stand_in(r#"{"a":1e400,"b":"1e400","c":[-1E+999,1.5,-0],"d":"\"2e308"}"#),
        r#"{"a":1e300,"b":"1e400","c":[-1e300,1.5,-0],"d":"\"2e308"}"#
    );
    assert_eq!(stand_in("{\"é\":2e308}"), "{\"é\":1e300}");
}

fn verdict_name(v: &Verdict) -> &'static str {
    match v {
        Verdict::Ok(_) => "ok",
        Verdict::None => "none",
        Verdict::NotJson => "not_json",
    }
}

/// Every vector line validates against (b) exactly when upstream reads it
/// as an event, but for the lines `schema/rejects-events-v2.jsonl` lists,
/// each with why, each with the vector's own verdict. A line serde_json
/// cannot read even with its numbers stood in for is one upstream does not
/// read either (`not_json`): no schema speaks of it.
#[test]
fn a_line_validates_against_the_reader_schema_exactly_when_it_is_an_event() {
    let read = readable();
    let listed: Vec<Value> = std::fs::read_to_string(root().join(REJECTS))
        .unwrap()
        .lines()
        .map(parse)
        .collect();
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut disagreeing: BTreeMap<String, &'static str> = BTreeMap::new();
    let vectors = read_vectors();
    for v in &vectors {
        let verdict = verdict_name(&v.verdict);
        let Some(value) = value_of(&v.line) else {
            assert!(
                matches!(v.verdict, Verdict::NotJson),
                "{}: serde_json cannot read it",
                v.why
            );
            *counts.entry("not JSON to either".into()).or_default() += 1;
            continue;
        };
        assert!(
            !matches!(v.verdict, Verdict::NotJson),
            "{}: serde_json reads it",
            v.why
        );
        let valid = read.is_valid(&value);
        *counts
            .entry(format!(
                "{verdict}, schema {}",
                if valid { "accepts" } else { "refuses" }
            ))
            .or_default() += 1;
        if valid != matches!(v.verdict, Verdict::Ok(_)) {
            disagreeing.insert(v.line.clone(), verdict);
        }
    }
    let mut exceptions = BTreeMap::new();
    for entry in &listed {
        let line = entry["line"].as_str().expect("a line").to_owned();
        let why = entry["why"].as_str().unwrap_or_default();
        assert!(!why.is_empty(), "{line}: no why");
        // As the vectors file has it.
        let vector = vectors
            .iter()
            .find(|v| v.line == line)
            .unwrap_or_else(|| panic!("{line}: no such vector"));
        match &vector.verdict {
            Verdict::Ok(ok) => assert_eq!(entry["ok"].as_str(), Some(ok.as_str()), "{line}"),
            Verdict::None => assert_eq!(entry["none"], true, "{line}"),
            Verdict::NotJson => assert_eq!(entry["not_json"], true, "{line}"),
        }
        exceptions.insert(line, verdict_name(&vector.verdict));
    }
    assert_eq!(
        listed.len(),
        exceptions.len(),
        "{REJECTS}: a line listed twice"
    );
    assert_eq!(
        disagreeing, exceptions,
        "the lines where the reader's schema and upstream disagree, vs {REJECTS}"
    );
    let judged: usize = counts
        .iter()
        .filter(|(k, _)| k.contains("schema"))
        .map(|(_, n)| n)
        .sum();
    assert_eq!(
        (vectors.len(), judged, exceptions.len()),
        (VECTORS_ALL, VECTORS_JUDGED, EXCEPTIONS),
        "{counts:?}"
    );
}

/// The vectors, those that are JSON to serde_json (numbers stood in for)
/// and so judged by the schema, and the exceptions among them.
const VECTORS_ALL: usize = 1776;
const VECTORS_JUDGED: usize = 1740;
const EXCEPTIONS: usize = 2;

/// A value with every number as a double: the written schema cannot tell
/// `7` from `7.0`, nor can this comparison.
fn numbers_as_doubles(v: &Value) -> Value {
    match v {
        Value::Number(n) => serde_json::json!(n.as_f64().unwrap()),
        Value::Array(items) => Value::Array(items.iter().map(numbers_as_doubles).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), numbers_as_doubles(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// (a) is exact: a vector line it accepts is an event, and the very value
/// of its canonical line (keys in any order, numbers however spelled).
#[test]
fn a_line_the_written_schema_accepts_is_its_own_canonical_line() {
    let all = written();
    let mut accepted = 0;
    for v in read_vectors() {
        let Some(value) = value_of(&v.line) else {
            continue;
        };
        if !all.is_valid(&value) {
            continue;
        }
        let Verdict::Ok(canonical) = &v.verdict else {
            panic!(
                "{}: the written schema accepts {}, which is no event",
                v.why, v.line
            )
        };
        let canonical = value_of(canonical).unwrap();
        assert_eq!(
            numbers_as_doubles(&value),
            numbers_as_doubles(&canonical),
            "{}",
            v.why
        );
        accepted += 1;
    }
    assert_eq!(accepted, WRITTEN_ACCEPTED);
}

/// Standard padded base64, for the images too large for `Image`.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            out.push(if i <= chunk.len() {
                char::from(ALPHABET[(n >> (18 - 6 * i) & 63) as usize])
            } else {
                '='
            });
        }
    }
    out
}

/// How many vector lines the written schema accepts: the canonical ones
/// (most `ok` lines are their own canonical line) and those canonical but
/// for key order or a number's spelling.
const WRITTEN_ACCEPTED: usize = 562;

/// The 5 MiB limit, on lines too long for the vectors file: the longest
/// text is an image only when it ends in padding (5 MiB exactly; unpadded
/// it is 5 MiB and one byte), and a longer one is none.
#[test]
fn the_image_limit_is_exact() {
    for bytes in [
        &b"\x89PNG\r\n\x1a\n"[..],
        b"\xff\xd8\xff\x00",
        b"GIF89a\x01",
    ] {
        let image = Image::from_bytes(bytes.to_vec()).unwrap();
        assert_eq!(base64(bytes), image.to_base64());
    }
    let read = readable();
    let all = written();
    let line = |len: usize| {
        let mut bytes = b"\x89PNG\r\n\x1a\n".to_vec();
        bytes.resize(len, 0);
        let data = base64(&bytes);
        let line = format!(
            r#"{{"event":"steer_dropped","content":[{{"type":"image","media_type":"image/png","data":"{data}"}}]}}"#
        );
        (data.len(), line)
    };
    let max = 5 * 1024 * 1024;
    let longest = usize::try_from(MAX_IMAGE_BASE64).unwrap();
    use std::cmp::Ordering::{Equal, Greater, Less};
    for (len, text, event) in [
        (max - 2, Less, true),
        (max, Equal, true),
        (max + 1, Equal, false),
        (max + 2, Greater, false),
    ] {
        let (data_len, l) = line(len);
        assert_eq!(data_len.cmp(&longest), text, "{len}");
        let value = parse(&l);
        assert_eq!(
            Event::from_slice(l.as_bytes()).is_ok(),
            event,
            "{len} bytes"
        );
        assert_eq!(read.is_valid(&value), event, "{len} bytes");
        assert_eq!(all.is_valid(&value), event, "{len} bytes");
    }
}
