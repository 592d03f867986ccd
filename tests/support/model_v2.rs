//! Test-only reference model of the v2 ("latest") protocol revision: a
//! literal transliteration of upstream openseek's `Command::parse`,
//! `parse_steer`, `parse_command_content` (protocol/command.mbt,
//! reconstructed from the API listing @ fdf10827: 642262b0's without
//! `predict` and `cancel_prediction`, which fall to `unknown command: ..`),
//! `Content` / `ContentPart` `FromJson` and `ToJson` (protocol/content.mbt),
//! `Image::from_base64` / `from_bytes` / `from_data_url` (protocol/image.mbt)
//! and `valid_job_component` (protocol/jobs.mbt), over `serde_json::Value`,
//! one Rust arm per MoonBit arm and in the same order. The sources are in
//! shared/reference-oracle/next/upstream-latest/. Deliberately independent of
//! the crate under test: it shares no code with `serve_command`.
//!
//! A MoonBit map pattern `{ "k": P, .. }` matches when the line is an object
//! whose key `k` is present and matches `P`. A duplicate key has already been
//! resolved (the last one wins) by the JSON parser, as serde_json's `Map`
//! does when it builds a `Value` (`insert` replaces; with `preserve_order`
//! the entry keeps its first position, which nothing here reads: `parse`
//! never looks at field order).

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serde_json::{Map, Value};

/// `ContentPart`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelPart {
    Text(String),
    /// `Image { media_type, bytes }`: the sniffed media type (which equals the
    /// declared one) and the decoded bytes.
    Image {
        media_type: String,
        bytes: Vec<u8>,
    },
}

/// `Content(Array[ContentPart])`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelContent(pub Vec<ModelPart>);

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelCommand {
    Prompt {
        content: ModelContent,
        submission_id: Option<String>,
    },
    /// `kind` is `"prompt"` or `"command"`.
    Steer {
        kind: &'static str,
        content: ModelContent,
        submission_id: Option<String>,
    },
    Compact,
    Cancel,
    JobsSnapshot {
        request_id: String,
    },
    JobStop {
        request_id: String,
        generation: String,
        job_id: String,
    },
    GoalSet {
        text: String,
        auto: bool,
    },
    GoalClear,
    ApprovalDecision {
        id: String,
        allow: bool,
    },
}

use ModelCommand::*;

/// `@json.JsonDecodeError((path, message))`, `path` already shown as the
/// core's `JsonPath` Show writes it: `""` for the root, `/0`, `/0/type`.
type DecodeError = (String, String);

/// `ImageError` as its `Show` writes it.
const TOO_LARGE: &str = "image exceeds the 5 MiB limit";
const INVALID_BASE64: &str = "image data must be canonical padded base64";
const UNSUPPORTED: &str = "expected PNG, JPEG, GIF, or WebP image bytes";

/// `line["k"]`, or `None` when the line is not an object or lacks `k`.
fn field<'a>(line: &'a Value, k: &str) -> Option<&'a Value> {
    line.as_object().and_then(|o| o.get(k))
}

/// `line["k"]` when it is a `String(_)`.
fn string<'a>(line: &'a Value, k: &str) -> Option<&'a str> {
    field(line, k).and_then(Value::as_str)
}

/// `Command::parse`: the decoded command, or the wire error string.
pub fn model_parse(line: &Value) -> Result<ModelCommand, String> {
    let s = |k| string(line, k);
    match s("command") {
        // { "command": "prompt", .. }
        Some("prompt") => {
            let content = parse_command_content(line)?;
            let submission_id = match field(line, "submission_id") {
                Some(Value::String(id)) => Some(id.clone()),
                Some(_) => return Err("expected a string \"submission_id\" field".into()),
                None => None,
            };
            Ok(Prompt {
                content,
                submission_id,
            })
        }
        // { "command": "steer", .. }
        Some("steer") => parse_steer(line),
        // { "command": "jobs_snapshot", "request_id": String(request_id), .. }
        //   if !request_id.is_empty()
        Some("jobs_snapshot") if s("request_id").is_some_and(|r| !r.is_empty()) => {
            Ok(JobsSnapshot {
                request_id: s("request_id").unwrap_or_default().into(),
            })
        }
        // { "command": "job_stop", "request_id": String(..), "generation":
        //   String(..), "job_id": String(..), .. } if the guard holds
        Some("job_stop")
            if matches!(
                (s("request_id"), s("generation"), s("job_id")),
                (Some(r), Some(g), Some(j))
                    if !r.is_empty() && valid_job_component(g) && valid_job_component(j)
            ) =>
        {
            Ok(JobStop {
                request_id: s("request_id").unwrap_or_default().into(),
                generation: s("generation").unwrap_or_default().into(),
                job_id: s("job_id").unwrap_or_default().into(),
            })
        }
        // { "command": "jobs_snapshot" | "job_stop", .. }
        Some("jobs_snapshot" | "job_stop") => Err("invalid background job command".into()),
        Some("compact") => Ok(Compact),
        Some("cancel") => Ok(Cancel),
        Some("goal") => match (s("action"), s("text")) {
            // { .., "action": "set", "text": String(text), "auto": true, .. }
            // and the same without `auto`: only JSON `true` arms it.
            (Some("set"), Some(text)) => Ok(GoalSet {
                text: text.into(),
                auto: field(line, "auto") == Some(&Value::Bool(true)),
            }),
            (Some("clear"), _) => Ok(GoalClear),
            _ => Err(
                "expected {\"action\": \"set\", \"text\": ...} or {\"action\": \"clear\"}".into(),
            ),
        },
        Some("approval") => match (s("id"), field(line, "allow").and_then(Value::as_bool)) {
            (Some(id), Some(allow)) => Ok(ApprovalDecision {
                id: id.into(),
                allow,
            }),
            (Some(_), None) => Err("expected a boolean \"allow\" field".into()),
            (None, _) => Err("expected a string \"id\" field".into()),
        },
        // { "command": String(other), .. }
        Some(other) => Err(format!("unknown command: {other}")),
        // _
        None => Err("expected a {\"command\": ...} object".into()),
    }
}

/// `parse_steer`: `submission_id`, then content, then `kind`.
fn parse_steer(line: &Value) -> Result<ModelCommand, String> {
    let submission_id = match field(line, "submission_id") {
        Some(Value::String(id)) => Some(id.clone()),
        Some(_) => return Err("expected a string \"submission_id\" field".into()),
        None => None,
    };
    let content = parse_command_content(line)?;
    let kind = match field(line, "kind") {
        Some(Value::String(k)) if k == "prompt" => "prompt",
        Some(Value::String(k)) if k == "command" => "command",
        Some(Value::String(other)) => return Err(format!("unknown steer kind: {other}")),
        Some(_) => return Err("expected a string \"kind\" field".into()),
        None => "prompt",
    };
    Ok(Steer {
        kind,
        content,
        submission_id,
    })
}

/// `parse_command_content`: `content` when present (never falling back),
/// else the legacy `text` with its optional `images` data URLs.
fn parse_command_content(line: &Value) -> Result<ModelContent, String> {
    if let Some(value) = field(line, "content") {
        return content_from_json(value)
            .map_err(|(path, msg)| format!("invalid content: JsonDecodeError(({path}, {msg}))"));
    }
    let Some(text) = string(line, "text") else {
        return Err("expected a string \"text\" field".into());
    };
    // `@json.from_json` into `Array[String]`: the whole list is read (and
    // refused as a whole) before any URL is looked at.
    let urls: Vec<&str> = match field(line, "images") {
        Some(Value::Array(items)) => items
            .iter()
            .map(Value::as_str)
            .collect::<Option<_>>()
            .ok_or("expected an array of image URLs")?,
        Some(_) => return Err("expected an array of image URLs".into()),
        None => Vec::new(),
    };
    let mut parts = vec![ModelPart::Text(text.into())];
    for url in urls {
        parts.push(image_from_data_url(url)?);
    }
    Ok(ModelContent(parts))
}

/// `Content::from_json(json, path=Root)`.
fn content_from_json(json: &Value) -> Result<ModelContent, DecodeError> {
    match json {
        Value::String(text) => Ok(ModelContent(vec![ModelPart::Text(text.clone())])),
        // `Array[ContentPart]::from_json`: each part at path `/i`, the first
        // error ends it.
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, x)| part_from_json(x, &format!("/{i}")))
            .collect::<Result<_, _>>()
            .map(ModelContent),
        _ => Err(("".into(), "expected content string or array".into())),
    }
}

/// `ContentPart::from_json(json, path)`.
fn part_from_json(json: &Value, path: &str) -> Result<ModelPart, DecodeError> {
    let Value::Object(fields) = json else {
        return Err((path.into(), "expected content part object".into()));
    };
    match fields.get("type") {
        Some(Value::String(t)) if t == "text" => {
            Ok(ModelPart::Text(string_from_json(fields, "text", path)?))
        }
        Some(Value::String(t)) if t == "image" => {
            let media_type = string_from_json(fields, "media_type", path)?;
            let data = string_from_json(fields, "data", path)?;
            image_from_base64(&media_type, &data)
                .map_err(|e| (path.into(), format!("invalid image: {e}")))
        }
        _ => Err((format!("{path}/type"), "unknown content part type".into())),
    }
}

/// `String::from_json(fields.get(key).unwrap_or(null), path=path.add_key(key))`.
/// (The keys here contain neither `~` nor `/`, so the JSON Pointer escaping of
/// the core's `JsonPath` Show never applies.)
fn string_from_json(
    fields: &Map<String, Value>,
    key: &str,
    path: &str,
) -> Result<String, DecodeError> {
    match fields.get(key) {
        Some(Value::String(s)) => Ok(s.clone()),
        _ => Err((
            format!("{path}/{key}"),
            "String::from_json: expected string".into(),
        )),
    }
}

/// Upstream's `(5 * 1024 * 1024 + 2) / 3 * 4` (6990508): the longest base64
/// text that can hold 5 MiB, in UTF-16 code units (MoonBit's
/// `StringView::length`).
const MAX_BASE64_LEN: usize = (5 * 1024 * 1024usize).div_ceil(3) * 4;

/// `Image::from_base64`.
fn image_from_base64(media_type: &str, data: &str) -> Result<ModelPart, String> {
    if data.encode_utf16().count() > MAX_BASE64_LEN {
        return Err(TOO_LARGE.into());
    }
    // `@base64.decode` then "re-encode and compare": only canonical padded
    // text survives both (the STANDARD engine alone already insists on it).
    let bytes = STANDARD.decode(data).map_err(|_| INVALID_BASE64)?;
    if STANDARD.encode(&bytes) != data {
        return Err(INVALID_BASE64.into());
    }
    let sniffed = image_from_bytes(&bytes)?;
    if sniffed != media_type {
        return Err(format!(
            "image declares {media_type} but bytes identify {sniffed}"
        ));
    }
    Ok(ModelPart::Image {
        media_type: sniffed.into(),
        bytes,
    })
}

/// `Image::from_bytes`: the size limit, then the four signatures.
fn image_from_bytes(bytes: &[u8]) -> Result<&'static str, String> {
    if bytes.len() > 5 * 1024 * 1024 {
        return Err(TOO_LARGE.into());
    }
    match bytes {
        [0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n', ..] => Ok("image/png"),
        [0xff, 0xd8, 0xff, ..] => Ok("image/jpeg"),
        [b'G', b'I', b'F', b'8', b'7' | b'9', b'a', ..] => Ok("image/gif"),
        [b'R', b'I', b'F', b'F', _, _, _, _, b'W', b'E', b'B', b'P', ..] => Ok("image/webp"),
        _ => Err(UNSUPPORTED.into()),
    }
}

/// `Image::from_data_url`: `data:` prefix, then split at the FIRST `;base64,`.
fn image_from_data_url(url: &str) -> Result<ModelPart, String> {
    let Some((media_type, data)) = url
        .strip_prefix("data:")
        .and_then(|v| v.split_once(";base64,"))
    else {
        return Err(INVALID_BASE64.into());
    };
    image_from_base64(media_type, data)
}

/// `valid_job_component`: 1 to 200 of `[A-Za-z0-9._-]`, not `.` or `..`.
/// (`String::length` counts UTF-16 units, but any non-ASCII character fails
/// the character test anyway, so counting bytes here gives the same answer.)
pub fn valid_job_component(value: &str) -> bool {
    !value.is_empty()
        && value != "."
        && value != ".."
        && value.len() <= 200
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
}

/// A JSON string as the reference's `stringify` writes it; serde_json's
/// escaping is the same (`\"` `\\` `\b` `\f` `\n` `\r` `\t`, other controls
/// as lowercase `\u00xx`, everything else raw).
fn q(s: &str) -> String {
    serde_json::to_string(s).expect("a str always serializes")
}

/// `Content::to_json`: exactly one text part is a string, else the array.
fn content_json(c: &ModelContent) -> String {
    if let [ModelPart::Text(text)] = c.0.as_slice() {
        return q(text);
    }
    let parts: Vec<String> =
        c.0.iter()
            .map(|p| match p {
                ModelPart::Text(text) => format!(r#"{{"type":"text","text":{}}}"#, q(text)),
                ModelPart::Image { media_type, bytes } => format!(
                    r#"{{"type":"image","media_type":{},"data":{}}}"#,
                    q(media_type),
                    q(&STANDARD.encode(bytes))
                ),
            })
            .collect();
    format!("[{}]", parts.join(","))
}

/// `Command::to_json(..).stringify()`, without the trailing LF, keys in the
/// order upstream's map literals insert them.
pub fn model_to_line(c: &ModelCommand) -> String {
    let tag = |id: &Option<String>| match id {
        Some(id) => format!(r#","submission_id":{}"#, q(id)),
        None => String::new(),
    };
    match c {
        Prompt {
            content,
            submission_id,
        } => format!(
            r#"{{"command":"prompt","content":{}{}}}"#,
            content_json(content),
            tag(submission_id)
        ),
        Steer {
            kind,
            content,
            submission_id,
        } => format!(
            r#"{{"command":"steer","kind":{},"content":{}{}}}"#,
            q(kind),
            content_json(content),
            tag(submission_id)
        ),
        JobsSnapshot { request_id } => format!(
            r#"{{"command":"jobs_snapshot","request_id":{}}}"#,
            q(request_id)
        ),
        JobStop {
            request_id,
            generation,
            job_id,
        } => format!(
            r#"{{"command":"job_stop","request_id":{},"generation":{},"job_id":{}}}"#,
            q(request_id),
            q(generation),
            q(job_id)
        ),
        Compact => r#"{"command":"compact"}"#.into(),
        Cancel => r#"{"command":"cancel"}"#.into(),
        GoalSet { text, auto: true } => format!(
            r#"{{"command":"goal","action":"set","text":{},"auto":true}}"#,
            q(text)
        ),
        GoalSet { text, auto: false } => {
            format!(r#"{{"command":"goal","action":"set","text":{}}}"#, q(text))
        }
        GoalClear => r#"{"command":"goal","action":"clear"}"#.into(),
        ApprovalDecision { id, allow } => format!(
            r#"{{"command":"approval","id":{},"allow":{}}}"#,
            q(id),
            allow
        ),
    }
}

/// What the oracle prints for a JSON line: `Ok(canonical line without LF)`
/// after `OK`, or `Err(message)` after `ERR`.
pub fn model_v2(line: &Value) -> Result<String, String> {
    model_parse(line).map(|c| model_to_line(&c))
}
