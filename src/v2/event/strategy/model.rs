//! The model: upstream's `parse`, stated over a generated line's value
//! (the event table, each kind of field, job records, content, outcomes,
//! usage, and the text upstream writes a job's `data` back as): the
//! outcome [`event_line()`](super::event_line) predicts, a reading of the
//! rules independent of the crate's decoder.

use super::*;

/// What upstream's `parse` makes of a line: the event, or why a client
/// skips it.
pub(super) fn model(top: &Top) -> Result<Event, EventError> {
    let members = match top {
        Top::Object(members) => members,
        Top::Other(J::Obj(members)) => members,
        // `{"":{"":...}}`: an object without `event`.
        Top::Other(J::Nest(depth, true)) if *depth > 0 => return Err(EventError::NoEventName),
        Top::Other(_) => return Err(EventError::NotAnObject),
    };
    let Some(J::Str(name)) = last(members, "event") else {
        return Err(EventError::NoEventName);
    };
    let Some(schema) = SCHEMAS.iter().find(|s| s.name == name) else {
        return Err(EventError::UnknownEvent(name.clone()));
    };
    let mut values = Vec::with_capacity(schema.fields.len());
    for &(field, kind) in schema.fields {
        let event = schema.name;
        values.push(read(kind, last(members, field)).map_err(|why| match why {
            Why::Missing => EventError::MissingField { event, field },
            Why::Wrong(expected) => EventError::WrongType {
                event,
                field,
                expected,
            },
            Why::Invalid(reason) => EventError::InvalidField {
                event,
                field,
                reason,
            },
        })?);
    }
    Ok(build(schema.name, values).expect("the table builds its own events"))
}

/// Why a field is not its kind's.
enum Why {
    Missing,
    Wrong(&'static str),
    Invalid(String),
}

/// The value of a key's last member.
fn last<'j>(members: &'j [(String, J)], key: &str) -> Option<&'j J> {
    members.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v)
}

/// The value of `key` in an object, if `j` is one that has it. (A `Nest`
/// object's only key is `""`, which no rule reads.)
fn get<'j>(j: &'j J, key: &str) -> Option<&'j J> {
    match j {
        J::Obj(members) => last(members, key),
        _ => None,
    }
}

fn is_object(j: &J) -> bool {
    matches!(j, J::Obj(_)) || matches!(j, J::Nest(depth, true) if *depth > 0)
}

fn as_str(j: &J) -> Option<&str> {
    match j {
        J::Str(s) => Some(s),
        _ => None,
    }
}

/// The double a number holds, correctly rounded (`1e400` is infinite).
fn number(j: &J) -> Option<f64> {
    match j {
        J::Num(text) => Some(text.parse().expect("a JSON number")),
        J::Nest(0, _) => Some(0.0),
        _ => None,
    }
}

/// The items of an array, if `j` is one.
fn items(j: &J) -> Option<Vec<J>> {
    match j {
        J::Arr(items) => Some(items.clone()),
        J::Nest(depth, false) if *depth > 0 => Some(vec![if *depth > 1 {
            J::Nest(depth - 1, false)
        } else {
            J::Num("0".into())
        }]),
        _ => None,
    }
}

/// `int`: a number that is a whole number within `Int`.
fn whole_int(x: f64) -> Option<i32> {
    (x.fract() == 0.0 && (-2_147_483_648.0..=2_147_483_647.0).contains(&x)).then_some(x as i32)
}

/// A field of `kind`, as `parse` reads it.
fn read(kind: Kind, value: Option<&J>) -> Result<Val, Why> {
    match kind {
        Kind::Null | Kind::Omit => return Ok(Val::Opt(value.and_then(as_str).map(str::to_owned))),
        Kind::Default(d) => {
            return Ok(Val::Str(value.and_then(as_str).unwrap_or(d).to_owned()));
        }
        _ => {}
    }
    let value = value.ok_or(Why::Missing)?;
    let wrong = Why::Wrong;
    Ok(match kind {
        Kind::Str => Val::Str(as_str(value).ok_or(wrong("a string"))?.to_owned()),
        Kind::Int => Val::Int(
            number(value)
                .and_then(whole_int)
                .ok_or(wrong("an integer from -2147483648 to 2147483647"))?,
        ),
        Kind::Bool => match value {
            J::Bool(b) => Val::Bool(*b),
            _ => return Err(wrong("true or false")),
        },
        Kind::Names => {
            let names = items(value)
                .and_then(|items| items.iter().map(|i| as_str(i).map(str::to_owned)).collect())
                .ok_or(wrong("an array of strings"))?;
            Val::Names(names)
        }
        Kind::JobEvent => Val::JobKind(
            JOB_KINDS
                .iter()
                .copied()
                .find(|k| as_str(value) == Some(k.as_str()))
                .ok_or(wrong(
                    "one of \"started\", \"updated\", \"finished\", \"failed\"",
                ))?,
        ),
        Kind::Stop => Val::Stop(
            STOP_OUTCOMES
                .iter()
                .copied()
                .find(|k| as_str(value) == Some(k.as_str()))
                .ok_or(wrong(
                    "one of \"stopped\", \"already_terminal\", \"not_found\", \"wrong_runtime\"",
                ))?,
        ),
        Kind::Usage => {
            if !is_object(value) {
                return Err(wrong("an object of five token counts"));
            }
            let mut counts = [0; 5];
            for (count, key) in counts.iter_mut().zip(USAGE_KEYS) {
                *count = get(value, key)
                    .and_then(number)
                    .and_then(whole_int)
                    .filter(|n| *n >= 0)
                    .ok_or_else(|| {
                        Why::Invalid(format!("\"{key}\" must be an integer from 0 to 2147483647"))
                    })?;
            }
            let [p, c, t, h, m] = counts;
            Val::Usage(Usage::new(p, c, t, h, m))
        }
        Kind::Outcome => Val::Outcome(prediction(value).map_err(Why::Invalid)?),
        Kind::Job => Val::Job(Box::new(job(value).map_err(Why::Invalid)?)),
        Kind::Jobs => {
            let items = items(value).ok_or(wrong("an array of job records"))?;
            let mut jobs = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                jobs.push(job(item).map_err(|m| Why::Invalid(format!("job {i}: {m}")))?);
            }
            Val::Jobs(jobs)
        }
        Kind::Content => Val::Content(content(value).map_err(|(path, message)| {
            Why::Invalid(format!(
                "invalid content: JsonDecodeError(({path}, {message}))"
            ))
        })?),
        Kind::Null | Kind::Omit | Kind::Default(_) => unreachable!("read above"),
    })
}

/// `PredictionOutcome::from_json`.
fn prediction(value: &J) -> Result<PredictionOutcome, String> {
    let invalid = || "invalid prediction outcome".to_owned();
    match get(value, "kind").and_then(as_str) {
        Some("completed") => {
            let (Some(text), Some(input), Some(output)) = (
                get(value, "text"),
                get(value, "input_tokens"),
                get(value, "output_tokens"),
            ) else {
                return Err(invalid());
            };
            let text = match text {
                J::Null => None,
                J::Str(t) if !t.is_empty() => Some(t.clone()),
                _ => return Err("text: expected nonempty text or null".to_owned()),
            };
            // `Int::from_json`: any number within `Int`, truncated.
            let tokens = |j: &J, key: &str| {
                number(j)
                    .filter(|x| (-2_147_483_648.0..=2_147_483_647.0).contains(x))
                    .map(|x| x.trunc() as i32)
                    .ok_or_else(|| {
                        format!("{key}: expected an integer from -2147483648 to 2147483647")
                    })
            };
            let input_tokens = tokens(input, "input_tokens")?;
            let output_tokens = tokens(output, "output_tokens")?;
            if input_tokens < 0 || output_tokens < 0 {
                return Err("negative token usage".to_owned());
            }
            Ok(PredictionOutcome::Completed {
                text,
                input_tokens,
                output_tokens,
            })
        }
        Some("skipped") => Ok(PredictionOutcome::Skipped),
        Some("cancelled") => Ok(PredictionOutcome::Cancelled),
        Some("failed") => match get(value, "message") {
            Some(J::Str(m)) => Ok(PredictionOutcome::Failed(m.clone())),
            _ => Err(invalid()),
        },
        _ => Err(invalid()),
    }
}

/// `JobState::from_json`.
fn job_state(value: &J) -> Option<JobState> {
    match get(value, "kind").and_then(as_str)? {
        "running" => Some(JobState::Running),
        "stopping" => Some(JobState::Stopping),
        "interrupted" => Some(JobState::Interrupted),
        "stopped" => match get(value, "reason") {
            Some(J::Str(r)) if !r.is_empty() => Some(JobState::Stopped(r.clone())),
            _ => None,
        },
        "exited" => get(value, "code")
            .and_then(number)
            .and_then(whole_int)
            .map(JobState::Exited),
        _ => None,
    }
}

/// `valid_job_component`.
fn component_ok(s: &str) -> bool {
    (1..=200).contains(&s.len())
        && s != "."
        && s != ".."
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
}

/// `JobRecord::from_json`: its checks in its order, with its messages.
fn job(value: &J) -> Result<JobRecord, String> {
    if !is_object(value) || get(value, "schema_version").and_then(number) != Some(1.0) {
        return Err("expected background job schema version 1".to_owned());
    }
    let field = |name: &str| get(value, name).ok_or_else(|| format!("missing job field: {name}"));
    let string = |name: &str| -> Result<String, String> {
        as_str(field(name)?)
            .map(str::to_owned)
            .ok_or_else(|| format!("{name}: expected a string"))
    };
    let flag = |name: &str| -> Result<bool, String> {
        match field(name)? {
            J::Bool(b) => Ok(*b),
            _ => Err(format!("{name}: expected true or false")),
        }
    };
    let optional = |name: &str| -> Result<Option<String>, String> {
        match get(value, name) {
            None | Some(J::Null) => Ok(None),
            Some(J::Str(s)) => Ok(Some(s.clone())),
            Some(_) => Err(format!("{name}: expected a string or null")),
        }
    };
    let uint = |name: &str| -> Result<i64, String> {
        number(field(name)?)
            .filter(|x| x.fract() == 0.0 && (0.0..=MAX_SAFE as f64).contains(x))
            .map(|x| x as i64)
            .ok_or_else(|| format!("invalid nonnegative job integer: {name}"))
    };
    let optional_uint = |name: &str| -> Result<Option<i64>, String> {
        match get(value, name) {
            None | Some(J::Null) => Ok(None),
            Some(_) => uint(name).map(Some),
        }
    };
    let cleanup_error = optional("cleanup_error")?;
    let data = get(value, "data").and_then(json_text);
    let generation = string("generation")?;
    let id = string("id")?;
    let revision = uint("revision")?;
    let command = string("command")?;
    let description = optional("description")?;
    let cwd = optional("cwd")?;
    let state =
        job_state(field("state")?).ok_or_else(|| "invalid background job state".to_owned())?;
    let started_at_ms = uint("started_at_ms")?;
    let backgrounded_at_ms = uint("backgrounded_at_ms")?;
    let finished_at_ms = optional_uint("finished_at_ms")?;
    let last_output_at_ms = optional_uint("last_output_at_ms")?;
    let output_file = optional("output_file")?;
    let output_persistent = flag("output_persistent")?;
    let output_bytes = uint("output_bytes")?;
    let output_chars = uint("output_chars")?;
    let output_truncated = flag("output_truncated")?;
    let invalid_utf8 = flag("invalid_utf8")?;
    let output_error = optional("output_error")?;
    let persistence_error = optional("persistence_error")?;
    let identity = || "invalid background job identity or count".to_owned();
    let (Ok(revision), Ok(output_chars)) = (i32::try_from(revision), i32::try_from(output_chars))
    else {
        return Err(identity());
    };
    if !(component_ok(&generation)
        && component_ok(&id)
        && revision >= 1
        && output_file.as_deref().is_none_or(component_ok))
    {
        return Err(identity());
    }
    let mut r = JobRecord::new(
        generation,
        id,
        revision,
        command,
        state,
        started_at_ms,
        backgrounded_at_ms,
    );
    r.description = description;
    r.cwd = cwd;
    r.finished_at_ms = finished_at_ms;
    r.last_output_at_ms = last_output_at_ms;
    r.output_file = output_file;
    r.output_persistent = output_persistent;
    r.output_bytes = output_bytes;
    r.output_chars = output_chars;
    r.output_truncated = output_truncated;
    r.invalid_utf8 = invalid_utf8;
    r.output_error = output_error;
    r.persistence_error = persistence_error;
    r.cleanup_error = cleanup_error;
    r.data = data;
    Ok(r)
}

/// A `data` value as upstream keeps it: `None` for `null`, else the text
/// it writes back ([`canonical`]).
pub(super) fn json_text(value: &J) -> Option<JsonText> {
    if matches!(value, J::Null) {
        return None;
    }
    let mut text = String::new();
    canonical(value, &mut text);
    let data: JsonText = text.parse().expect("canonical text is JSON");
    assert_eq!(
        data.as_str(),
        text,
        "JsonText writes a job's data back otherwise than upstream's stringify"
    );
    Some(data)
}

/// The text upstream writes a value back as: compact; an object's keys in
/// the order they first came, each with its last value; strings escaped as
/// its stringify escapes them; numbers as `Double::to_string` writes them
/// (a whole number past 2^53, or a number past a double, as it came).
pub(super) fn canonical(value: &J, out: &mut String) {
    match value {
        J::Null => out.push_str("null"),
        J::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        J::Num(text) => out.push_str(&number_text(text)),
        J::Str(s) => quote(s, out),
        J::Arr(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        J::Obj(members) => {
            let mut kept: Vec<(&str, &J)> = Vec::new();
            for (k, v) in members {
                match kept.iter_mut().find(|(seen, _)| *seen == k) {
                    Some(slot) => slot.1 = v,
                    None => kept.push((k, v)),
                }
            }
            out.push('{');
            for (i, (k, v)) in kept.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                quote(k, out);
                out.push(':');
                canonical(v, out);
            }
            out.push('}');
        }
        J::Nest(depth, object) => {
            let (open, close) = if *object { ("{\"\":", "}") } else { ("[", "]") };
            out.push_str(&open.repeat(*depth));
            out.push('0');
            out.push_str(&close.repeat(*depth));
        }
    }
}

/// A number as upstream writes it back: JavaScript's `Number::toString`
/// (shortest digits; plain from 1e-6 up to 1e21, else `1e+21`, `1.5e-7`;
/// `-0` is `0`), except a whole number past 2^53 or a number past a
/// double, kept as it came.
fn number_text(text: &str) -> String {
    let x: f64 = text.parse().expect("a JSON number");
    let whole = !text.contains(['.', 'e', 'E']);
    if !x.is_finite() || (whole && x.abs() > MAX_SAFE as f64) {
        return text.to_owned();
    }
    if x == 0.0 {
        return "0".to_owned();
    }
    if (1e-6..1e21).contains(&x.abs()) {
        // Rust's `Display` is the shortest digits, never an exponent.
        return format!("{x}");
    }
    let sci = format!("{x:e}");
    match sci.split_once('e') {
        Some((mantissa, exp)) if !exp.starts_with('-') => format!("{mantissa}e+{exp}"),
        _ => sci,
    }
}

/// A JSON string as upstream writes it: `\"` `\\` `\n` `\r` `\t` `\b` `\f`,
/// other controls as `\u00xx`, everything else as it is.
fn quote(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A part of content, its shape right, its image not yet decoded.
enum Part {
    Text(String),
    Image { media_type: String, data: String },
}

/// The commands' content rules: the content, or the error's path and
/// message.
fn content(value: &J) -> Result<Content, (String, String)> {
    if let J::Str(text) = value {
        return Ok(Content::from(text.clone()));
    }
    let Some(items) = items(value) else {
        return Err((String::new(), "expected content string or array".into()));
    };
    let mut parts = Vec::new();
    let mut refused = None;
    for (index, item) in items.iter().enumerate() {
        let field = |name: &str| get(item, name).and_then(as_str).map(str::to_owned);
        let at = |what: &str| format!("/{index}{what}");
        let part = if !is_object(item) {
            Err((at(""), "expected content part object"))
        } else {
            match field("type").as_deref() {
                Some("text") => field("text")
                    .map(Part::Text)
                    .ok_or((at("/text"), "String::from_json: expected string")),
                Some("image") => match (field("media_type"), field("data")) {
                    (None, _) => Err((at("/media_type"), "String::from_json: expected string")),
                    (_, None) => Err((at("/data"), "String::from_json: expected string")),
                    (Some(media_type), Some(data)) => Ok(Part::Image { media_type, data }),
                },
                _ => Err((at("/type"), "unknown content part type")),
            }
        };
        match part {
            Ok(p) => parts.push(p),
            Err((path, message)) => {
                refused = Some((path, message.to_owned()));
                break;
            }
        }
    }
    let mut out = Vec::with_capacity(parts.len());
    for (index, part) in parts.into_iter().enumerate() {
        out.push(match part {
            Part::Text(text) => ContentPart::Text(text),
            Part::Image { media_type, data } => ContentPart::Image(
                image(&media_type, &data)
                    .map_err(|e| (format!("/{index}"), format!("invalid image: {e}")))?,
            ),
        });
    }
    match refused {
        Some(e) => Err(e),
        None => Ok(Content::new(out)),
    }
}

/// `Image::from_base64`, in its order: the length, canonical padded
/// base64, the bytes' size and format, the declared type.
fn image(media_type: &str, data: &str) -> Result<Image, String> {
    if data.encode_utf16().count() > MAX_BASE64_LEN {
        return Err("image exceeds the 5 MiB limit".into());
    }
    let bytes = STANDARD
        .decode(data)
        .ok()
        .filter(|bytes| STANDARD.encode(bytes) == data)
        .ok_or("image data must be canonical padded base64")?;
    if bytes.len() > MAX_IMAGE_BYTES {
        return Err("image exceeds the 5 MiB limit".into());
    }
    let sniffed = match bytes.as_slice() {
        [0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n', ..] => "image/png",
        [0xff, 0xd8, 0xff, ..] => "image/jpeg",
        [b'G', b'I', b'F', b'8', b'7' | b'9', b'a', ..] => "image/gif",
        [b'R', b'I', b'F', b'F', _, _, _, _, b'W', b'E', b'B', b'P', ..] => "image/webp",
        _ => return Err("expected PNG, JPEG, GIF, or WebP image bytes".into()),
    };
    if sniffed != media_type {
        return Err(format!(
            "image declares {media_type} but bytes identify {sniffed}"
        ));
    }
    let image = Image::from_bytes(bytes).expect("bytes of a known format");
    assert_eq!(image.media_type(), sniffed);
    Ok(image)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_as_upstream_writes_them() {
        for (text, written) in [
            ("7", "7"),
            ("7.0", "7"),
            ("-0", "0"),
            ("1.50", "1.5"),
            ("1e0", "1"),
            ("0.000001", "0.000001"),
            ("1e-7", "1e-7"),
            ("1.5e-7", "1.5e-7"),
            ("1e21", "1e+21"),
            ("1e20", "100000000000000000000"),
            ("-2.5e30", "-2.5e+30"),
            ("9007199254740991", "9007199254740991"),
            ("9007199254740993", "9007199254740993"),
            ("9007199254740993.0", "9007199254740992"),
            ("1e400", "1e400"),
            ("1e-400", "0"),
            (
                "123456789012345678901234567890",
                "123456789012345678901234567890",
            ),
        ] {
            assert_eq!(number_text(text), written, "{text}");
            let data: JsonText = text.parse().unwrap();
            assert_eq!(data.as_str(), written, "JsonText of {text}");
        }
    }
}
