//! The `serde_json::Value` path: the reference's `parse` and `to_json`.

use crate::v2::encode::Val;
use crate::v2::rules::{self, Fields, Key, PartFields};
use crate::v2::{Command, Content, ContentPart, ParseError};
use crate::wire::fields::{ArrayField, Field, Item, Slot};
use serde_json::{Map, Value};

pub(crate) fn parse(value: &Value) -> Result<Command, ParseError> {
    let Value::Object(map) = value else {
        return Err(rules::not_an_object());
    };
    let mut fields = Fields::new();
    for (key, value) in map {
        let Some(key) = Key::from_bytes(key.as_bytes()) else {
            continue;
        };
        match fields.field_of(key) {
            // (Only an item's field is decoded while it is read, and only
            // by the line scanner.)
            Field::Flat(slot) | Field::Decoded { value: slot, .. } => *slot = slot_of(value),
            Field::Array { value: slot, items } => feed(slot, items, value),
        }
    }
    rules::decide(&mut fields)
}

fn slot_of(value: &Value) -> Slot<&str> {
    match value {
        Value::String(s) => Slot::Str(s.as_str()),
        Value::Bool(true) => Slot::True,
        Value::Bool(false) => Slot::False,
        _ => Slot::Other,
    }
}

/// An array key's value: a slot, or, for an array, its items while the
/// rules want them.
fn feed<'v>(
    slot: &mut Slot<&'v str>,
    array: &mut dyn ArrayField<&'v str, PartFields<&'v str>>,
    value: &'v Value,
) {
    let Value::Array(items) = value else {
        *slot = slot_of(value);
        return;
    };
    *slot = Slot::Absent;
    array.begin();
    for item in items {
        if !array.wants_more() {
            return;
        }
        array.item(match item {
            Value::Object(map) => {
                let mut part = PartFields::new();
                for (key, value) in map {
                    if let Some(slot) = part.slot(key.as_bytes()) {
                        *slot = slot_of(value);
                    }
                }
                Item::Object(part)
            }
            other => Item::Value(slot_of(other)),
        });
    }
}

fn content_json(content: &Content) -> Value {
    if let Some(text) = content.as_single_text() {
        return Value::String(text.to_owned());
    }
    let part = |part: &ContentPart| {
        let mut map = Map::new();
        match part {
            ContentPart::Text(text) => {
                map.insert("type".into(), "text".into());
                map.insert("text".into(), text.as_str().into());
            }
            ContentPart::Image(image) => {
                map.insert("type".into(), "image".into());
                map.insert("media_type".into(), image.media_type().into());
                map.insert("data".into(), image.to_base64().into());
            }
        }
        Value::Object(map)
    };
    Value::Array(content.iter().map(part).collect())
}

/// One value of the line, as JSON.
fn value_of(val: Val<'_>) -> Value {
    match val {
        Val::Str(s) => Value::String(s.to_owned()),
        Val::Bool(b) => Value::Bool(b),
        Val::Content(c) => content_json(c),
    }
}

crate::revision::json_methods! {
    parse: parse,
    value: value_of,
    from_json: {
        /// ```
        /// use serve_command::v2::{Command, Content, ParseError};
        /// let v = serde_json::json!({"command": "prompt", "text": "hi"});
        /// assert_eq!(Command::from_json(&v), Ok(Command::prompt(Content::from("hi"))));
        /// let v = serde_json::json!({"command": "prompt", "content": 7, "text": "hi"});
        /// assert_eq!(
        ///     Command::from_json(&v).unwrap_err().to_string(),
        ///     "invalid content: JsonDecodeError((, expected content string or array))",
        /// );
        /// ```
    },
    to_json: {
        /// ```
        /// use serve_command::v2::Command;
        /// let cmd = Command::jobs_snapshot("r1");
        /// assert_eq!(cmd.to_json(), serde_json::json!({"command": "jobs_snapshot", "request_id": "r1"}));
        /// assert_eq!(Command::from_json(&cmd.to_json()), Ok(cmd));
        /// ```
    },
}
