//! `schema/command.schema.json` and `schema/command.ts`: generated here from
//! the crate's own encoder, checked for staleness, and held to the
//! conformance vectors.
//!
//! The files are never edited by hand. Regenerate them with
//! `UPDATE_SCHEMA=1 cargo test -p serve-command-schema-check`.
//!
//! What ties them to the crate: each shape's examples are real `Command`
//! values (an exhaustive `match` names the shape of every variant, so a new
//! variant does not compile until it has one), the `const`s and `required`
//! lists are read off their `to_line()`, and a test fails when a variant's
//! wire keys and the shape's properties disagree. The descriptions are the
//! reference's reasons (`command.mbt`), written once, below.
//!
//! Each revision of the wire is one `Revision` in `revisions()`. The later
//! one (`v2()`, `schema/command-v2.*`) describes `serve_command::v2`: its
//! examples must be lines that `v2::Command` decodes and writes back
//! unchanged, each decoded to the shape it illustrates (`shape_of_v2`), and
//! every `Arbitrary` v2 command must fit its shape.

mod common;

use common::*;
use serde_json::Value;
use serve_command::v1::{Command, LineError, ParseError, SteerKind};
use serve_command::v2;
use std::collections::BTreeSet;
use std::fmt::Write as _;

// ---------------------------------------------------------------------------
// The revisions and their shapes: the one place the schema is written down.

/// One revision of the wire, and the files generated for it.
struct Revision {
    /// `schema/<stem>.schema.json` and `schema/<stem>.ts`.
    stem: &'static str,
    /// The conformance vectors: every `ok` line must validate, every
    /// `error` fit exactly one message. `None` until the revision has them.
    vectors: Option<&'static str>,
    /// Canonical-looking lines the schema must refuse, in the vectors'
    /// format (`ok`/`error` being what the reference decoder makes of
    /// them). A line with `"ts_accepts": true` is one the TypeScript types
    /// cannot refuse (said in their doc comment).
    rejects: &'static str,
    /// The crate's decoder for this revision, once there is one: each
    /// line's outcome, and the shape of a decoded line.
    decode: Option<Decode>,
    title: &'static str,
    description: &'static str,
    /// The Rust type the shapes come from, named in the files' headers.
    source: &'static str,
    /// Where the decoder is more lenient than the schema.
    lenient: &'static str,
    /// Named types the shapes refer to (`SteerKind`), before the shapes.
    defs: Vec<Def>,
    shapes: Vec<Shape>,
    /// The `command_error` messages, in the decoder's precedence.
    errors: Vec<ErrorMessage>,
    /// Messages no vector earns, and why (checked: a vector for one fails
    /// the test until it is taken off this list).
    unvectored: &'static [(&'static str, &'static str)],
}

/// A decoder: a line's outcome, and the shape of what it decoded to.
type Decode = fn(&str) -> (Outcome, Option<&'static str>);

/// A named type that is not a command shape.
struct Def {
    name: &'static str,
    description: &'static str,
    ty: Ty,
    /// Extra JSON Schema keywords, for rules TypeScript cannot state.
    extra: Option<J>,
}

/// One member of the `oneOf`: a command's canonical line.
struct Shape {
    /// The Rust variant's name, the `$defs` key and the TypeScript name.
    name: &'static str,
    description: &'static str,
    /// The keys the encoder writes, in its order. Which are required is
    /// read off the examples: those present in every one.
    fields: Vec<Field>,
    /// Canonical lines (without LF) from the crate's encoder, covering
    /// every optional key present and absent.
    examples: Vec<String>,
}

struct Field {
    name: &'static str,
    ty: Ty,
    description: &'static str,
    /// Where the decoder reads more than the schema says (a `$comment`).
    comment: Option<&'static str>,
}

/// The few types the wire needs, each with a JSON Schema and a TypeScript
/// spelling.
enum Ty {
    /// The one value every example holds here (`"command": "prompt"`).
    Const,
    String,
    Bool,
    /// One of these strings.
    Enum(Vec<&'static str>),
    /// A named `Def`.
    Ref(&'static str),
    /// This string.
    Lit(&'static str),
    /// A string with these further JSON Schema keywords (a pattern, a
    /// length); `string` to TypeScript.
    StringWith(J),
    /// One of these named `Def`s.
    OneOf(Vec<&'static str>),
    /// An object of these fields, all required (a `Def`'s type).
    Object(Vec<Field>),
    /// Anything else: its JSON Schema and its TypeScript.
    Raw(J, &'static str),
}

/// A `command_error` message; `{}` stands for the part copied from the line.
struct ErrorMessage {
    template: String,
    description: &'static str,
}

/// The placeholder a message's variable part is rendered with, replaced by
/// `{}` in the template. A character no vector's name contains.
const HOLE: &str = "\u{1}";

fn message(e: ParseError, description: &'static str) -> ErrorMessage {
    ErrorMessage {
        template: e.to_string().replace(HOLE, "{}"),
        description,
    }
}

/// The shape of each variant. `Command` is non-exhaustive, so a new variant
/// reaches the wildcard: every vector, example and `Arbitrary` command goes
/// through here, and one with no shape fails the test that met it.
fn shape_of(cmd: &Command) -> &'static str {
    match cmd {
        Command::Prompt { .. } => "Prompt",
        Command::Steer { .. } => "Steer",
        Command::Compact => "Compact",
        Command::Cancel => "Cancel",
        Command::GoalSet { .. } => "GoalSet",
        Command::GoalClear => "GoalClear",
        Command::ApprovalDecision { .. } => "ApprovalDecision",
        other => panic!(
            "a command with no shape: {other:?}; give it one in schema-check/tests/schema.rs"
        ),
    }
}

fn shape_of_v2(cmd: &v2::Command) -> &'static str {
    match cmd {
        v2::Command::Prompt { .. } => "Prompt",
        v2::Command::Steer { .. } => "Steer",
        v2::Command::Compact => "Compact",
        v2::Command::Cancel => "Cancel",
        v2::Command::JobsSnapshot { .. } => "JobsSnapshot",
        v2::Command::JobStop { .. } => "JobStop",
        v2::Command::GoalSet { .. } => "GoalSet",
        v2::Command::GoalClear => "GoalClear",
        v2::Command::ApprovalDecision { .. } => "ApprovalDecision",
        other => panic!(
            "a v2 command with no shape: {other:?}; give it one in schema-check/tests/schema.rs"
        ),
    }
}

/// Every `SteerKind`. The enum is non-exhaustive: a kind missing here is
/// caught by the `Arbitrary` commands, which the schema must all accept.
fn steer_kinds() -> Vec<SteerKind> {
    vec![SteerKind::Prompt, SteerKind::Command]
}

fn lines(cmds: impl IntoIterator<Item = Command>) -> Vec<String> {
    cmds.into_iter()
        .map(|c| c.to_line().trim_end_matches('\n').to_owned())
        .collect()
}

const COMMAND_NAME: &str = "The command's name. A string naming no command is refused with `unknown command: <name>`; a line without a string `command` with `expected a {\"command\": ...} object`.";

/// The seed's revision: the crate root, `serve_command::v1::Command`.
fn v1() -> Revision {
    let text = || "a".to_owned();
    let field = |name, ty, description| Field {
        name,
        ty,
        description,
        comment: None,
    };
    Revision {
        stem: "command",
        vectors: Some("tests/vectors/commands.jsonl"),
        rejects: "schema/rejects.jsonl",
        decode: Some(decode_v1),
        title: "serve command",
        description: "One command a controller writes to an agent engine's stdin: one JSON object per line, compact, ending in one LF. The engine answers a line it cannot read with a `command_error` event whose `error` is one of the reference's messages (wire contract, byte for byte).",
        source: "serve_command::v1::Command",
        lenient: "The decoder is more lenient, as the README's \"When a field may be absent, and why\" says: a `steer` without `kind` is a prompt steer; `auto` of any type is read, and only `true` arms it; a duplicate key is allowed and the last one wins; unknown fields are ignored wherever they are and whatever they hold.",
        defs: vec![Def {
            name: "SteerKind",
            description: "How a mid-turn steer reaches the model: `prompt`, the text reaches the model as a user message; `command`, the text is a slash command. There is deliberately no `notice`: the engine synthesizes notices for itself, and no controller may send one. Case-sensitive; any other string is refused with `unknown steer kind: <kind>`.",
            ty: Ty::Enum(steer_kinds().into_iter().map(SteerKind::as_str).collect()),
            extra: None,
        }],
        shapes: vec![
            Shape {
                name: "Prompt",
                description: "Start a turn with what the user said.",
                fields: vec![
                    field("command", Ty::Const, COMMAND_NAME),
                    field("text", Ty::String, "What the user said. Required: a prompt without a string `text` is refused with `expected a string \"text\" field`."),
                    field("submission_id", Ty::String, "The submitting controller's tag for this prompt. The engine records it on the turn's durable `User` item, so a delivery can later be reconciled by exact id rather than by matching text. Absent means untagged: the tag arrived long after `prompt`, and every prompt was untagged before it. Present, it must be a string (`null` is not absence): else `expected a string \"submission_id\" field`."),
                ],
                examples: lines([
                    Command::Prompt { text: text(), submission_id: None },
                    Command::Prompt { text: text(), submission_id: Some("s".into()) },
                ]),
            },
            Shape {
                name: "Steer",
                description: "A mid-turn steer: text for the turn that is running.",
                fields: vec![
                    field("command", Ty::Const, COMMAND_NAME),
                    Field {
                        name: "kind",
                        ty: Ty::Ref("SteerKind"),
                        description: "How the steer reaches the model. An encoder always writes it. Present, it must be a string (else `expected a string \"kind\" field`).",
                        comment: Some("The decoder reads a steer without `kind` as a prompt steer: `kind` arrived after `steer`, and a controller older than the field meant exactly that."),
                    },
                    field("text", Ty::String, "The steer's text. Required whatever the kind says, and checked before `kind`: `expected a string \"text\" field`."),
                ],
                examples: lines(steer_kinds().into_iter().map(|kind| Command::Steer { kind, text: text() })),
            },
            Shape {
                name: "Compact",
                description: "Compact the conversation. Every other key is ignored.",
                fields: vec![field("command", Ty::Const, COMMAND_NAME)],
                examples: lines([Command::Compact]),
            },
            Shape {
                name: "Cancel",
                description: "Cancel the running turn. Every other key is ignored.",
                fields: vec![field("command", Ty::Const, COMMAND_NAME)],
                examples: lines([Command::Cancel]),
            },
            Shape {
                name: "GoalSet",
                description: "Set the goal the engine works toward. A blank goal is well-formed: refusing it is the engine's policy, not the wire's.",
                fields: vec![
                    field("command", Ty::Const, COMMAND_NAME),
                    field("action", Ty::Const, "`set` or `clear`; anything else (or `set` without a string `text`) is refused with `expected {\"action\": \"set\", \"text\": ...} or {\"action\": \"clear\"}`."),
                    field("text", Ty::String, "The goal."),
                    Field {
                        name: "auto",
                        ty: Ty::Bool,
                        description: "Arms autonomous continuation toward the goal. A flag with a default, optional since `goal` shipped: absent means false. The canonical encoder writes it only when true: absence is what false has always looked like on this wire.",
                        comment: Some("The decoder accepts `auto` of any type: only JSON `true` arms it; absent, `false`, `null`, `1`, `\"true\"` all read as false."),
                    },
                ],
                examples: lines([
                    Command::GoalSet { text: text(), auto: false },
                    Command::GoalSet { text: text(), auto: true },
                ]),
            },
            Shape {
                name: "GoalClear",
                description: "Clear the goal. Every key but `command` and `action` is ignored.",
                fields: vec![
                    field("command", Ty::Const, COMMAND_NAME),
                    field("action", Ty::Const, "`set` or `clear`; anything else is refused with `expected {\"action\": \"set\", \"text\": ...} or {\"action\": \"clear\"}`."),
                ],
                examples: lines([Command::GoalClear]),
            },
            Shape {
                name: "ApprovalDecision",
                description: "The answer to an `approval_requested` event, addressed by the `id` that event carried. The only command that replies to the engine rather than instructing it, and the only one a controller must send: until it arrives, the asking tool is blocked. Both fields are required: neither has a defensible default.",
                fields: vec![
                    field("command", Ty::Const, COMMAND_NAME),
                    field("id", Ty::String, "The `id` of the `approval_requested` event this answers. Required: an approval with no `id` answers no particular question (`expected a string \"id\" field`)."),
                    field("allow", Ty::Bool, "Whether the single action asked about may go ahead. Required: an approval with no `allow` is a decision that did not decide, and reading it as absent would settle a permission prompt on a guess (`expected a boolean \"allow\" field`, once `id` is a string). A boolean, not a decision vocabulary: there is exactly one grant to express."),
                ],
                examples: lines([
                    Command::ApprovalDecision { id: "i".into(), allow: true },
                    Command::ApprovalDecision { id: "i".into(), allow: false },
                ]),
            },
        ],
        unvectored: &[],
        errors: {
            use ParseError::*;
            vec![
                message(ExpectedText, "`prompt` or `steer` without a string `text` (checked before `kind`)."),
                message(ExpectedSubmissionId, "`prompt` whose `submission_id` is present but not a string (`null` included)."),
                message(UnknownSteerKind(HOLE.into()), "`steer` whose `kind` is a string other than `prompt` or `command` (case-sensitive), quoted verbatim."),
                message(ExpectedKind, "`steer` whose `kind` is present but not a string (`null` included)."),
                message(ExpectedGoal, "`goal` that is neither `{\"action\":\"set\",\"text\":<string>}` nor `{\"action\":\"clear\"}`."),
                message(ExpectedId, "`approval` without a string `id`."),
                message(ExpectedAllow, "`approval` with a string `id` but no boolean `allow`."),
                message(UnknownCommand(HOLE.into()), "A string `command` that names no command, quoted verbatim (even empty or with a newline)."),
                message(ExpectedCommand, "The line is JSON but not an object, or has no string `command`."),
            ]
        },
    }
}

/// The later revision (`serve_command::v2`, issue 11), from the upstream
/// `command.mbt`, `content.mbt`, `image.mbt` and `jobs.mbt`. Until the crate
/// has that module its examples are the reference's own canonical lines
/// (each checked with `oracle-latest`), its rejects' outcomes too; then the
/// examples become `v2::Command` values and `decode` is set, as in `v1()`.
fn v2() -> Revision {
    let field = |name, ty, description| Field {
        name,
        ty,
        description,
        comment: None,
    };
    let content = |description| {
        Field {
        name: "content",
        ty: Ty::Ref("Content"),
        description,
        comment: Some("A line without `content` may carry the legacy `text` (a string) and `images` (an array of `data:<media type>;base64,<data>` URLs) instead; the decoder reads them as content, and the encoder writes `content`. A malformed `content` never falls back to `text`."),
    }
    };
    let submission_id = |description| field("submission_id", Ty::String, description);
    let examples = |lines: &[&str]| lines.iter().map(|l| (*l).to_owned()).collect::<Vec<_>>();
    let v1 = v1();
    let same = |name: &str| {
        let shape = v1.shapes.iter().find(|s| s.name == name).unwrap();
        Shape {
            name: shape.name,
            description: shape.description,
            fields: shape
                .fields
                .iter()
                .map(|f| Field {
                    name: f.name,
                    ty: match &f.ty {
                        Ty::Const => Ty::Const,
                        Ty::String => Ty::String,
                        Ty::Bool => Ty::Bool,
                        Ty::Ref(def) => Ty::Ref(def),
                        _ => unreachable!("v1 has no other field types"),
                    },
                    description: f.description,
                    comment: f.comment,
                })
                .collect(),
            examples: shape.examples.clone(),
        }
    };
    let job_component = "An artifact component, never a path: 1 to 200 of `A-Z`, `a-z`, `0-9`, `.`, `_`, `-`, and neither `.` nor `..`. Anything else is refused with `invalid background job command`.";
    Revision {
        stem: "command-v2",
        vectors: Some("tests/vectors/commands-v2.jsonl"),
        rejects: "schema/rejects-v2.jsonl",
        decode: Some(decode_v2),
        title: "serve command, v2",
        description: "One command a controller writes to an agent engine's stdin, in the later revision of the protocol (content parts and images, tagged steers, background job commands): one JSON object per line, compact, ending in one LF. The wire carries no version. The engine answers a line it cannot read with a `command_error` event whose `error` is one of the reference's messages (wire contract, byte for byte).",
        source: "serve_command::v2::Command",
        lenient: "The decoder is more lenient, as the README's \"When a field may be absent, and why\" says: a `steer` without `kind` is a prompt steer; `auto` of any type is read, and only `true` arms it; `prompt` and `steer` without `content` may carry the legacy `text` and `images`; an array of exactly one text part reads as that text; a duplicate key is allowed and the last one wins; unknown fields are ignored wherever they are and whatever they hold.",
        defs: vec![
            Def {
                name: "SteerKind",
                description: v1.defs[0].description,
                ty: Ty::Enum(steer_kinds().into_iter().map(SteerKind::as_str).collect()),
                extra: None,
            },
            Def {
                name: "Content",
                description: "What a prompt or steer says: a string when it is exactly one text part (so older readers still read plain text), else the array of its parts in order, empty included. The TypeScript type cannot refuse an array of one text part; the schema does.",
                ty: Ty::Raw(
                    obj([(
                        "oneOf",
                        J::Arr(vec![
                            obj([
                                ("type", s("string")),
                                ("description", s("Exactly one text part: its text.")),
                            ]),
                            obj([
                                ("type", s("array")),
                                ("items", obj([("$ref", s("#/$defs/ContentPart"))])),
                                (
                                    "not",
                                    obj([
                                        ("minItems", J::Num(1)),
                                        ("maxItems", J::Num(1)),
                                        ("items", obj([("$ref", s("#/$defs/TextPart"))])),
                                    ]),
                                ),
                                ("description", s("Any other content: its parts in order. One text part alone is written as a string.")),
                                ("$comment", s("The decoder also reads an array of one text part, as that text.")),
                            ]),
                        ]),
                    )]),
                    "string | ContentPart[]",
                ),
                extra: None,
            },
            Def {
                name: "ContentPart",
                description: "One part of a message: text or an image. Any other `type` is refused with `invalid content: JsonDecodeError((/<index>/type, unknown content part type))`.",
                ty: Ty::OneOf(vec!["TextPart", "ImagePart"]),
                extra: None,
            },
            Def {
                name: "TextPart",
                description: "A text part.",
                ty: Ty::Object(vec![
                    field("type", Ty::Lit("text"), "The part's kind."),
                    field("text", Ty::String, "The text."),
                ]),
                extra: None,
            },
            Def {
                name: "ImagePart",
                description: "An image, inline: no path or provider id is needed to replay it. The bytes are at most 5 MiB and must be PNG, JPEG, GIF or WebP, as their first bytes say; `media_type` must be the type the bytes identify. A part that breaks one of these is refused with `invalid content: JsonDecodeError((/<index>, invalid image: <why>))`.",
                ty: Ty::Object(vec![
                    field("type", Ty::Lit("image"), "The part's kind."),
                    Field {
                        name: "media_type",
                        ty: Ty::Ref("ImageMediaType"),
                        description: "The image's media type, which must be the one its bytes identify: else `image declares <declared> but bytes identify <sniffed>`.",
                        comment: None,
                    },
                    Field {
                        name: "data",
                        ty: Ty::StringWith(keywords(vec![
                            ("contentEncoding", s("base64")),
                            ("minLength", J::Num(4)),
                            ("maxLength", J::Num(MAX_IMAGE_BASE64)),
                            ("pattern", s(CANONICAL_BASE64)),
                            ("not", obj([("pattern", s("\\n"))])),
                            ("$comment", s(NEWLINE_GUARD)),
                        ])),
                        description: "The image's bytes in canonical padded base64 (decoding and re-encoding gives the same text back): else `image data must be canonical padded base64`. At most 5 MiB decoded (else `image exceeds the 5 MiB limit`).",
                        comment: None,
                    },
                ]),
                extra: Some(obj([
                    ("$comment", s("The `allOf` is the reference's sniffing of the bytes, on their base64: each media type's signature. `maxLength` is the reference's bound before decoding; a text of that length without padding decodes to one byte over 5 MiB, which it refuses too.")),
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
                ])),
            },
            Def {
                name: "ImageMediaType",
                description: "The image formats the engine reads, each identified by its bytes: else `expected PNG, JPEG, GIF, or WebP image bytes`.",
                ty: Ty::Enum(IMAGE_SIGNATURES.iter().map(|(t, _)| *t).collect()),
                extra: None,
            },
            Def {
                name: "JobComponent",
                description: job_component,
                ty: Ty::StringWith(keywords(vec![
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
                ])),
                extra: None,
            },
        ],
        shapes: vec![
            Shape {
                name: "Prompt",
                description: "Start a turn with what the user said.",
                fields: vec![
                    field("command", Ty::Const, COMMAND_NAME),
                    content("What the user said. Required (or the legacy `text`): else `expected a string \"text\" field`; a malformed one is `invalid content: JsonDecodeError((<path>, <message>))`."),
                    submission_id("The submitting controller's tag for this prompt. The engine records it on the turn's durable `User` item, so a delivery can later be reconciled by exact id rather than by matching text. Absent means untagged: the tag arrived long after `prompt`, and every prompt was untagged before it. Present, it must be a string (`null` is not absence): else `expected a string \"submission_id\" field`."),
                ],
                examples: examples(&[
                    r#"{"command":"prompt","content":"a"}"#,
                    r#"{"command":"prompt","content":"a","submission_id":"s"}"#,
                    r#"{"command":"prompt","content":[{"type":"text","text":"a"},{"type":"image","media_type":"image/png","data":"iVBORw0KGgo="}]}"#,
                    r#"{"command":"prompt","content":[]}"#,
                    r#"{"command":"prompt","content":[{"type":"image","media_type":"image/jpeg","data":"/9j/"},{"type":"image","media_type":"image/gif","data":"R0lGODlh"},{"type":"image","media_type":"image/webp","data":"UklGRgAAAABXRUJQ"}]}"#,
                ]),
            },
            Shape {
                name: "Steer",
                description: "A mid-turn steer: content for the turn that is running.",
                fields: vec![
                    field("command", Ty::Const, COMMAND_NAME),
                    Field {
                        name: "kind",
                        ty: Ty::Ref("SteerKind"),
                        description: "How the steer reaches the model. An encoder always writes it. Present, it must be a string (else `expected a string \"kind\" field`), checked after `submission_id` and `content`.",
                        comment: Some("The decoder reads a steer without `kind` as a prompt steer: `kind` arrived after `steer`, and a controller older than the field meant exactly that."),
                    },
                    content("The steer's content. Required (or the legacy `text`) whatever the kind says: else `expected a string \"text\" field`."),
                    submission_id("The submitting controller's tag for this steer; it follows the steer through the runtime queue, the durable `User` item, and the applied or dropped receipt. Absent means untagged. Present, it must be a string, and it is checked before anything else in `steer`: else `expected a string \"submission_id\" field`."),
                ],
                examples: examples(&[
                    r#"{"command":"steer","kind":"prompt","content":"a"}"#,
                    r#"{"command":"steer","kind":"command","content":"a","submission_id":"s"}"#,
                    r#"{"command":"steer","kind":"prompt","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}"#,
                ]),
            },
            same("Compact"),
            same("Cancel"),
            Shape {
                name: "JobsSnapshot",
                description: "Ask for a snapshot of the background jobs. Anything else under this name is refused with `invalid background job command`.",
                fields: vec![
                    field("command", Ty::Const, COMMAND_NAME),
                    field("request_id", Ty::StringWith(keywords(vec![("minLength", J::Num(1))])), "The controller's id for this request, not empty."),
                ],
                examples: examples(&[r#"{"command":"jobs_snapshot","request_id":"r"}"#]),
            },
            Shape {
                name: "JobStop",
                description: "Stop one background job. Anything else under this name is refused with `invalid background job command`.",
                fields: vec![
                    field("command", Ty::Const, COMMAND_NAME),
                    field("request_id", Ty::StringWith(keywords(vec![("minLength", J::Num(1))])), "The controller's id for this request, not empty."),
                    field("generation", Ty::Ref("JobComponent"), "The job's generation."),
                    field("job_id", Ty::Ref("JobComponent"), "The job's id."),
                ],
                examples: examples(&[
                    r#"{"command":"job_stop","request_id":"r","generation":"g","job_id":"j"}"#,
                    r#"{"command":"job_stop","request_id":"r","generation":"...","job_id":"a.b-c_D9"}"#,
                ]),
            },
            same("GoalSet"),
            same("GoalClear"),
            same("ApprovalDecision"),
        ],
        unvectored: &[(
            "image exceeds the 5 MiB limit",
            "a legacy data URL over 5 MiB: a line of 7 MB, which the vectors file does not hold",
        )],
        errors: {
            let m = |template: &str, description| ErrorMessage {
                template: template.to_owned(),
                description,
            };
            vec![
                m("expected a string \"text\" field", "`prompt` or `steer` with neither `content` nor a string `text`."),
                m("expected a string \"submission_id\" field", "`prompt` or `steer` whose `submission_id` is present but not a string (`null` included); in `steer`, checked first."),
                m("invalid content: JsonDecodeError(({}, {}))", "A `content` that is not content: the JSON pointer to the fault (empty for `content` itself) and what is wrong, e.g. `invalid content: JsonDecodeError((/0/type, unknown content part type))`, `invalid content: JsonDecodeError((/0, invalid image: image data must be canonical padded base64))`."),
                m("expected an array of image URLs", "A legacy `images` that is not an array of strings."),
                m("image exceeds the 5 MiB limit", "A legacy `images` URL whose image is over 5 MiB."),
                m("image data must be canonical padded base64", "A legacy `images` URL that is not `data:<media type>;base64,<canonical padded base64>`."),
                m("expected PNG, JPEG, GIF, or WebP image bytes", "A legacy `images` URL whose bytes are no image the engine reads."),
                m("image declares {} but bytes identify {}", "A legacy `images` URL whose media type is not the one its bytes identify."),
                m("unknown steer kind: {}", "`steer` whose `kind` is a string other than `prompt` or `command` (case-sensitive), quoted verbatim."),
                m("expected a string \"kind\" field", "`steer` whose `kind` is present but not a string (`null` included)."),
                m("invalid background job command", "`jobs_snapshot` or `job_stop` without its fields, or with an empty `request_id` or a `generation` or `job_id` that is not a job component."),
                m("expected {\"action\": \"set\", \"text\": ...} or {\"action\": \"clear\"}", "`goal` that is neither `{\"action\":\"set\",\"text\":<string>}` nor `{\"action\":\"clear\"}`."),
                m("expected a string \"id\" field", "`approval` without a string `id`."),
                m("expected a boolean \"allow\" field", "`approval` with a string `id` but no boolean `allow`."),
                m("unknown command: {}", "A string `command` that names no command, quoted verbatim (even empty or with a newline)."),
                m("expected a {\"command\": ...} object", "The line is JSON but not an object, or has no string `command`."),
            ]
        },
    }
}

/// Every revision the crate speaks.
fn revisions() -> Vec<Revision> {
    vec![v1(), v2()]
}

// ---------------------------------------------------------------------------
// The generator.

impl Shape {
    /// Keys present in every example.
    fn required(&self) -> Vec<&'static str> {
        self.fields
            .iter()
            .map(|f| f.name)
            .filter(|name| self.examples.iter().all(|e| parse(e).get(*name).is_some()))
            .collect()
    }

    /// The one value every example holds at `name`.
    fn constant(&self, name: &str) -> J {
        let values: Vec<Value> = self
            .examples
            .iter()
            .map(|e| parse(e)[name].clone())
            .collect();
        assert!(
            values.windows(2).all(|w| w[0] == w[1]),
            "{}.{name} is Ty::Const but the examples hold {values:?}",
            self.name
        );
        J::from_value(&values[0])
    }
}

fn schema_of(ty: &Ty, shape: Option<&Shape>, name: &str) -> J {
    let refer = |def: &str| obj([("$ref", J::Str(format!("#/$defs/{def}")))]);
    match ty {
        Ty::Const => obj([(
            "const",
            shape.expect("Const is for shape fields").constant(name),
        )]),
        Ty::String => obj([("type", s("string"))]),
        Ty::Bool => obj([("type", s("boolean"))]),
        Ty::Enum(values) => obj([("enum", J::Arr(values.iter().map(|v| s(v)).collect()))]),
        Ty::Ref(def) => refer(def),
        Ty::Lit(value) => obj([("const", s(value))]),
        Ty::StringWith(keywords) => {
            let mut j = obj([("type", s("string"))]);
            j.extend(keywords.clone());
            j
        }
        Ty::OneOf(defs) => obj([("oneOf", J::Arr(defs.iter().map(|d| refer(d)).collect()))]),
        Ty::Object(fields) => obj([
            ("type", s("object")),
            ("properties", properties(fields, None)),
            (
                "required",
                J::Arr(fields.iter().map(|f| s(f.name)).collect()),
            ),
        ]),
        Ty::Raw(schema, _) => schema.clone(),
    }
}

fn properties(fields: &[Field], shape: Option<&Shape>) -> J {
    let mut properties = J::Obj(Vec::new());
    for f in fields {
        let mut p = schema_of(&f.ty, shape, f.name);
        p.push("description", s(f.description));
        if let Some(c) = f.comment {
            p.push("$comment", s(c));
        }
        properties.push(f.name, p);
    }
    properties
}

fn json_schema(rev: &Revision) -> String {
    let mut defs = J::Obj(Vec::new());
    for def in &rev.defs {
        let mut d = obj([("description", s(def.description))]);
        d.extend(schema_of(&def.ty, None, def.name));
        if let Some(extra) = &def.extra {
            d.extend(extra.clone());
        }
        defs.push(def.name, d);
    }
    for shape in &rev.shapes {
        defs.push(
            shape.name,
            obj([
                ("title", s(shape.name)),
                ("description", s(shape.description)),
                ("type", s("object")),
                ("properties", properties(&shape.fields, Some(shape))),
                (
                    "required",
                    J::Arr(shape.required().into_iter().map(s).collect()),
                ),
            ]),
        );
    }
    let one_of = rev
        .shapes
        .iter()
        .map(|shape| obj([("$ref", J::Str(format!("#/$defs/{}", shape.name)))]))
        .collect();
    let root = obj([
        ("$schema", s("https://json-schema.org/draft/2020-12/schema")),
        ("title", s(rev.title)),
        ("description", s(rev.description)),
        ("$comment", J::Str(format!(
            "Generated by schema-check/tests/schema.rs from {}; do not edit. Regenerate: UPDATE_SCHEMA=1 cargo test -p serve-command-schema-check. This schema is what an encoder writes (the canonical line). {} No shape sets `additionalProperties`: unknown fields are allowed.",
            rev.source, rev.lenient
        ))),
        ("type", s("object")),
        ("oneOf", J::Arr(one_of)),
        ("$defs", defs),
    ]);
    let mut out = String::new();
    root.write(0, &mut out);
    out.push('\n');
    out
}

fn ts_of(ty: &Ty, shape: Option<&Shape>, name: &str) -> String {
    match ty {
        Ty::Const => match shape.expect("Const is for shape fields").constant(name) {
            J::Str(v) => serde_json::to_string(&v).unwrap(),
            J::Bool(b) => b.to_string(),
            other => panic!("{other:?}"),
        },
        Ty::String | Ty::StringWith(_) => "string".into(),
        Ty::Bool => "boolean".into(),
        Ty::Enum(values) => values
            .iter()
            .map(|v| serde_json::to_string(v).unwrap())
            .collect::<Vec<_>>()
            .join(" | "),
        Ty::Ref(def) => (*def).into(),
        Ty::Lit(value) => serde_json::to_string(value).unwrap(),
        Ty::OneOf(defs) => defs.join(" | "),
        Ty::Object(_) => panic!("an object is a Def of its own: {name}"),
        Ty::Raw(_, ts) => (*ts).into(),
    }
}

/// An interface's members.
fn ts_fields(fields: &[Field], shape: Option<&Shape>, required: &[&str], out: &mut String) {
    for f in fields {
        let mut doc = f.description.to_owned();
        if let Some(c) = f.comment {
            doc = format!("{doc} {c}");
        }
        doc_comment(&doc, "  ", out);
        let optional = if required.contains(&f.name) { "" } else { "?" };
        writeln!(
            out,
            "  {}{optional}: {};",
            f.name,
            ts_of(&f.ty, shape, f.name)
        )
        .unwrap();
    }
}

/// A TypeScript template literal type; `{}` becomes `${string}`.
fn ts_template(template: &str) -> String {
    let escaped = template
        .replace('\\', "\\\\")
        .replace('`', "\\`")
        .replace("${", "\\${");
    format!("`{}`", escaped.replace("{}", "${string}"))
}

fn typescript(rev: &Revision) -> String {
    let mut out = String::new();
    let header = format!(
        "{}: the canonical lines, as TypeScript types. Generated by schema-check/tests/schema.rs from {}; do not edit. Regenerate: UPDATE_SCHEMA=1 cargo test -p serve-command-schema-check. These types are what an encoder writes. {}",
        rev.title, rev.source, rev.lenient
    );
    doc_comment(&header, "", &mut out);
    for def in &rev.defs {
        out.push('\n');
        doc_comment(def.description, "", &mut out);
        if let Ty::Object(fields) = &def.ty {
            writeln!(out, "export interface {} {{", def.name).unwrap();
            let all: Vec<&str> = fields.iter().map(|f| f.name).collect();
            ts_fields(fields, None, &all, &mut out);
            writeln!(out, "}}").unwrap();
        } else {
            writeln!(
                out,
                "export type {} = {};",
                def.name,
                ts_of(&def.ty, None, def.name)
            )
            .unwrap();
        }
    }
    out.push('\n');
    doc_comment(rev.description, "", &mut out);
    writeln!(out, "export type Command =").unwrap();
    for (n, shape) in rev.shapes.iter().enumerate() {
        let end = if n + 1 == rev.shapes.len() { ";" } else { "" };
        writeln!(out, "  | {}{end}", shape.name).unwrap();
    }
    for shape in &rev.shapes {
        out.push('\n');
        doc_comment(shape.description, "", &mut out);
        writeln!(out, "export interface {} {{", shape.name).unwrap();
        ts_fields(&shape.fields, Some(shape), &shape.required(), &mut out);
        writeln!(out, "}}").unwrap();
    }
    out.push('\n');
    doc_comment(
        "The `error` of a `command_error` event for a line that is JSON but not a command: exactly one of these (wire contract, byte for byte), in the decoder's precedence. `${string}` is copied verbatim from the line.",
        "",
        &mut out,
    );
    writeln!(out, "export type CommandError =").unwrap();
    for (n, e) in rev.errors.iter().enumerate() {
        doc_comment(e.description, "  ", &mut out);
        let end = if n + 1 == rev.errors.len() { ";" } else { "" };
        writeln!(out, "  | {}{end}", ts_template(&e.template)).unwrap();
    }
    out.push('\n');
    doc_comment(
        "The engine's answer to a line it cannot read. A line that is not JSON at all gets `command stream: <what> at byte <offset>` (the reference engine then stops reading).",
        "",
        &mut out,
    );
    writeln!(out, "export interface CommandErrorEvent {{").unwrap();
    writeln!(out, "  event: \"command_error\";").unwrap();
    writeln!(
        out,
        "  error: CommandError | `command stream: ${{string}}`;"
    )
    .unwrap();
    writeln!(out, "}}").unwrap();
    out
}

// ---------------------------------------------------------------------------
// The checks.

#[test]
fn schema_files_are_current() {
    for rev in revisions() {
        check_generated(
            &format!("schema/{}.schema.json", rev.stem),
            &json_schema(&rev),
        );
        check_generated(&format!("schema/{}.ts", rev.stem), &typescript(&rev));
    }
}

/// The validator for one shape alone: the root's `oneOf` narrowed to it.
fn shape_validator(schema: &str, shape: &str) -> jsonschema::Validator {
    let mut schema = parse(schema);
    schema["oneOf"] = serde_json::json!([{ "$ref": format!("#/$defs/{shape}") }]);
    jsonschema::draft202012::new(&schema).expect("the schema compiles")
}

#[test]
fn every_variant_writes_exactly_its_shapes_keys() {
    for rev in revisions() {
        let schema = json_schema(&rev);
        let all = validator(&schema);
        for shape in &rev.shapes {
            assert!(!shape.examples.is_empty(), "{}: no examples", shape.name);
            let fields: Vec<&str> = shape.fields.iter().map(|f| f.name).collect();
            let mut seen = BTreeSet::new();
            for line in &shape.examples {
                let keys = keys_in_order(line);
                // In the encoder's order, each one a field of the shape.
                let positions: Vec<Option<usize>> = keys
                    .iter()
                    .map(|k| fields.iter().position(|f| f == k))
                    .collect();
                assert!(
                    positions.iter().all(Option::is_some)
                        && positions.windows(2).all(|w| w[0] < w[1]),
                    "{}: {line} writes {keys:?}; the shape lists {fields:?}",
                    shape.name
                );
                seen.extend(keys);
                let value = parse(line);
                assert!(all.is_valid(&value), "{}: {line} is not valid", shape.name);
                assert!(
                    shape_validator(&schema, shape.name).is_valid(&value),
                    "{}: {line} is not valid against its own shape",
                    shape.name
                );
            }
            // Every field is written by some example: none is invented.
            let declared: BTreeSet<String> = fields.iter().map(|f| f.to_string()).collect();
            assert_eq!(seen, declared, "{}: examples' keys vs fields", shape.name);
        }
    }
}

#[test]
fn examples_are_canonical_and_decode_to_their_shape() {
    for rev in revisions() {
        let Some(decode) = rev.decode else { continue };
        for shape in &rev.shapes {
            for line in &shape.examples {
                assert_eq!(
                    decode(line),
                    (Outcome::Ok(line.clone()), Some(shape.name)),
                    "{line}"
                );
            }
        }
    }
}

#[test]
fn the_schema_and_the_types_cover_every_variant() {
    // Through the exhaustive `shape_of`: one example of every variant.
    let every = [
        Command::Prompt {
            text: String::new(),
            submission_id: None,
        },
        Command::Steer {
            kind: SteerKind::Prompt,
            text: String::new(),
        },
        Command::Compact,
        Command::Cancel,
        Command::GoalSet {
            text: String::new(),
            auto: false,
        },
        Command::GoalClear,
        Command::ApprovalDecision {
            id: String::new(),
            allow: false,
        },
    ];
    let names: Vec<&str> = v1().shapes.iter().map(|s| s.name).collect();
    assert_eq!(every.iter().map(shape_of).collect::<Vec<_>>(), names);
    let ts = typescript(&v1());
    assert!(ts.contains(
        "export type Command =\n  | Prompt\n  | Steer\n  | Compact\n  | Cancel\n  | GoalSet\n  | GoalClear\n  | ApprovalDecision;\n"
    ));
    assert!(ts.contains("export type SteerKind = \"prompt\" | \"command\";\n"));
}

/// `derive(Arbitrary)` makes every variant and every kind, a new one
/// included: each must have a shape, and its line must validate against
/// that shape alone.
#[test]
fn every_arbitrary_command_fits_its_shape() {
    use arbitrary::{Arbitrary, Unstructured};
    let rev = v1();
    let schema = json_schema(&rev);
    let mut seen = BTreeSet::new();
    let mut kinds = BTreeSet::new();
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    for _ in 0..2000 {
        // xorshift64: a fixed sequence of inputs, the same every run.
        let bytes: Vec<u8> = (0..48)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 56) as u8
            })
            .collect();
        let Ok(cmd) = Command::arbitrary(&mut Unstructured::new(&bytes)) else {
            continue;
        };
        let shape = shape_of(&cmd);
        let line = cmd.to_line();
        assert!(
            shape_validator(&schema, shape).is_valid(&parse(line.trim_end())),
            "{line}"
        );
        if let Command::Steer { kind, .. } = cmd {
            kinds.insert(kind.as_str());
        }
        seen.insert(shape);
    }
    let shapes: BTreeSet<&str> = rev.shapes.iter().map(|s| s.name).collect();
    assert_eq!(seen, shapes);
    let known: BTreeSet<&str> = steer_kinds().into_iter().map(SteerKind::as_str).collect();
    assert_eq!(kinds, known);
}

/// The same for the later revision: every arbitrary `v2::Command` (images
/// included: `Arbitrary` makes only valid ones) fits its shape alone.
#[test]
fn every_arbitrary_v2_command_fits_its_shape() {
    use arbitrary::{Arbitrary, Unstructured};
    let rev = v2();
    let schema = json_schema(&rev);
    // One validator per shape, built once: building one compiles every
    // pattern in the schema.
    let validators: std::collections::BTreeMap<&str, jsonschema::Validator> = rev
        .shapes
        .iter()
        .map(|s| (s.name, shape_validator(&schema, s.name)))
        .collect();
    let mut seen = BTreeSet::new();
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    for _ in 0..2000 {
        let bytes: Vec<u8> = (0..96)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 56) as u8
            })
            .collect();
        let Ok(cmd) = v2::Command::arbitrary(&mut Unstructured::new(&bytes)) else {
            continue;
        };
        let shape = shape_of_v2(&cmd);
        let line = cmd.to_line();
        assert!(
            validators[shape].is_valid(&parse(line.trim_end())),
            "{line}"
        );
        seen.insert(shape);
    }
    let shapes: BTreeSet<&str> = rev.shapes.iter().map(|s| s.name).collect();
    assert_eq!(seen, shapes);
}

#[derive(Debug, PartialEq)]
enum Outcome {
    Ok(String),
    Error(String),
    NotJson,
}

struct Vector {
    line: String,
    expected: Outcome,
    why: String,
}

/// The vectors whose line is text. Those given as raw bytes (`line_base64`:
/// invalid UTF-8, a BOM, a NUL) are never JSON, so no schema speaks of them.
fn read_vectors(relative: &str) -> Vec<Vector> {
    let text = std::fs::read_to_string(root().join(relative)).unwrap();
    text.lines()
        .map(parse)
        .filter(|v| v.get("line_base64").is_none())
        .map(|v| {
            let l = &v;
            let expected = if let Some(ok) = v["ok"].as_str() {
                Outcome::Ok(ok.to_owned())
            } else if let Some(e) = v["error"].as_str() {
                Outcome::Error(e.to_owned())
            } else {
                assert_eq!(v["not_json"], true, "{l}");
                Outcome::NotJson
            };
            Vector {
                line: v["line"].as_str().expect("line or line_base64").to_owned(),
                expected,
                why: v["why"].as_str().unwrap().to_owned(),
            }
        })
        .collect()
}

fn decode_v2(line: &str) -> (Outcome, Option<&'static str>) {
    match v2::Command::from_slice(line.as_bytes()) {
        Ok(cmd) => (
            Outcome::Ok(cmd.to_line().trim_end_matches('\n').to_owned()),
            Some(shape_of_v2(&cmd)),
        ),
        Err(v2::LineError::Parse(e)) => (Outcome::Error(e.to_string()), None),
        Err(v2::LineError::Syntax(_)) => (Outcome::NotJson, None),
        Err(e) => panic!("a kind of error the schema does not know: {e:?}"),
    }
}

fn decode_v1(line: &str) -> (Outcome, Option<&'static str>) {
    match Command::from_slice(line.as_bytes()) {
        Ok(cmd) => (
            Outcome::Ok(cmd.to_line().trim_end_matches('\n').to_owned()),
            Some(shape_of(&cmd)),
        ),
        Err(LineError::Parse(e)) => (Outcome::Error(e.to_string()), None),
        Err(LineError::Syntax(_)) => (Outcome::NotJson, None),
        Err(e) => panic!("a kind of error the schema does not know: {e:?}"),
    }
}

#[test]
fn every_ok_vector_validates_against_its_shape_only() {
    for rev in revisions() {
        let Some(vectors) = rev.vectors else { continue };
        let schema = json_schema(&rev);
        let all = validator(&schema);
        let shapes: Vec<(&str, jsonschema::Validator)> = rev
            .shapes
            .iter()
            .map(|shape| (shape.name, shape_validator(&schema, shape.name)))
            .collect();
        let mut checked = 0;
        for v in read_vectors(vectors) {
            let Outcome::Ok(canonical) = &v.expected else {
                continue;
            };
            let value = parse(canonical);
            let errors: Vec<String> = all.iter_errors(&value).map(|e| e.to_string()).collect();
            assert!(errors.is_empty(), "{}: {canonical}: {errors:?}", v.why);
            // Exactly one shape takes it, and it is the decoded command's.
            let taken: Vec<&str> = shapes
                .iter()
                .filter(|(_, validator)| validator.is_valid(&value))
                .map(|(name, _)| *name)
                .collect();
            assert_eq!(taken.len(), 1, "{}: {canonical}: {taken:?}", v.why);
            if let Some(decode) = rev.decode {
                assert_eq!(
                    decode(canonical).1,
                    Some(taken[0]),
                    "{}: {canonical}",
                    v.why
                );
            }
            checked += 1;
        }
        assert!(checked > 0, "{vectors}: no ok vectors");
    }
}

#[test]
fn wrong_canonical_lines_are_rejected() {
    for rev in revisions() {
        let all = validator(&json_schema(&rev));
        let rejects = read_vectors(rev.rejects);
        assert!(rejects.len() >= 12, "{}", rev.rejects);
        for v in rejects {
            assert!(
                !all.is_valid(&parse(&v.line)),
                "{}: the schema accepts {}",
                v.why,
                v.line
            );
            // A refused one's message is one of the revision's.
            if let Outcome::Error(message) = &v.expected {
                let fitting = rev.errors.iter().filter(|e| fits(&e.template, message));
                assert_eq!(fitting.count(), 1, "{}: {message:?}", v.why);
            }
            // What a lenient one decodes to is canonical.
            if let Outcome::Ok(canonical) = &v.expected {
                assert!(all.is_valid(&parse(canonical)), "{}: {canonical}", v.why);
            }
            // What the decoder makes of it is recorded exactly: most are
            // refused, the lenient ones (the schema's `$comment`) are read.
            if let Some(decode) = rev.decode {
                assert_eq!(decode(&v.line).0, v.expected, "{}: {}", v.why, v.line);
            }
        }
    }
}

#[test]
fn a_line_the_schema_accepts_is_a_command() {
    // The schema is stricter than the decoder, never looser: whatever it
    // accepts (unknown fields, any key order, duplicates) decodes.
    for rev in revisions() {
        let Some(vectors) = rev.vectors else { continue };
        let all = validator(&json_schema(&rev));
        let mut accepted = 0;
        for v in read_vectors(vectors) {
            // serde_json refuses a few lines the reference reads (`1e400`);
            // the schema has nothing to say about those.
            let Ok(value) = serde_json::from_str::<Value>(&v.line) else {
                continue;
            };
            // A number the reference reads by its quirks (a 32-bit
            // exponent, 800 integer digits): serde_json reads it otherwise.
            if v.why.ends_with("(serde_json reads it otherwise)") {
                continue;
            }
            if all.is_valid(&value) {
                assert!(
                    matches!(v.expected, Outcome::Ok(_)),
                    "{}: {}",
                    v.why,
                    v.line
                );
                accepted += 1;
            }
        }
        assert!(accepted > 0, "{vectors}");
    }
}

/// Does `message` fit `template`, each `{}` of which stands for any string?
fn fits(template: &str, message: &str) -> bool {
    let parts: Vec<&str> = template.split("{}").collect();
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if parts.len() == 1 {
        return template == message;
    }
    if message.len() < first.len() + last.len()
        || !message.starts_with(first)
        || !message.ends_with(last)
    {
        return false;
    }
    // The middle parts in order, each as early as it can be: if any
    // placement fits, this one does.
    let mut rest = &message[first.len()..message.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

#[test]
fn every_error_vector_fits_exactly_one_message_and_every_message_is_used() {
    for rev in revisions() {
        let Some(vectors) = rev.vectors else { continue };
        let mut used = vec![0; rev.errors.len()];
        for v in read_vectors(vectors) {
            let Outcome::Error(message) = &v.expected else {
                continue;
            };
            let fitting: Vec<usize> = (0..rev.errors.len())
                .filter(|&n| fits(&rev.errors[n].template, message))
                .collect();
            assert_eq!(fitting.len(), 1, "{}: {message:?} fits {fitting:?}", v.why);
            used[fitting[0]] += 1;
        }
        let unused: Vec<&str> = (0..used.len())
            .filter(|&n| used[n] == 0)
            .map(|n| rev.errors[n].template.as_str())
            .collect();
        let excused: Vec<&str> = rev.unvectored.iter().map(|(m, _)| *m).collect();
        assert_eq!(unused, excused, "{vectors}: messages no vector earns");
    }
    assert_eq!(v1().errors.len(), 9);
}

#[test]
fn message_templates_and_their_typescript() {
    let table = [
        (
            "expected a string \"text\" field",
            "`expected a string \"text\" field`",
        ),
        ("unknown steer kind: {}", "`unknown steer kind: ${string}`"),
        ("unknown command: {}", "`unknown command: ${string}`"),
        (
            "expected a {\"command\": ...} object",
            "`expected a {\"command\": ...} object`",
        ),
        ("a `b` \\ ${c}", "`a \\`b\\` \\\\ \\${c}`"),
    ];
    for (template, ts) in table {
        assert_eq!(ts_template(template), ts);
    }
    let templates: Vec<String> = v1().errors.into_iter().map(|e| e.template).collect();
    assert_eq!(templates[2], "unknown steer kind: {}");
    assert_eq!(templates[7], "unknown command: {}");
    assert!(fits("unknown command: {}", "unknown command: "));
    assert!(!fits("unknown command: {}", "unknown command"));
    let two = "image declares {} but bytes identify {}";
    assert!(fits(
        two,
        "image declares image/jpeg but bytes identify image/png"
    ));
    assert!(fits(two, "image declares  but bytes identify "));
    assert!(fits(
        two,
        "image declares a but bytes identify b but bytes identify c"
    ));
    assert!(!fits(
        two,
        "image declares image/jpeg but bytes are image/png"
    ));
    assert!(!fits(
        "expected a string \"id\" field",
        "expected a string \"id\" field!"
    ));
}
