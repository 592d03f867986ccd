//! The `serde_json::Value` path: the reference's `parse` and `to_json`.

use crate::v1::encode::Val;
use crate::v1::rules::{self, Fields};
use crate::v1::{Command, ParseError};
use crate::wire::fields::Slot;
use serde_json::Value;

pub(crate) fn parse(value: &Value) -> Result<Command, ParseError> {
    let Value::Object(map) = value else {
        return Err(rules::not_an_object());
    };
    let mut fields = Fields::new();
    for (key, value) in map {
        if let Some(slot) = fields.slot(key.as_bytes()) {
            *slot = match value {
                Value::String(s) => Slot::Str(s.as_str()),
                Value::Bool(true) => Slot::True,
                Value::Bool(false) => Slot::False,
                _ => Slot::Other,
            };
        }
    }
    rules::decide(&mut fields)
}

/// One value of the line, as JSON.
fn value_of(val: Val<'_>) -> Value {
    match val {
        Val::Str(s) => Value::String(s.to_owned()),
        Val::Bool(b) => Value::Bool(b),
    }
}

crate::revision::json_methods! {
    parse: parse,
    value: value_of,
    from_json: {
        /// ```
        /// use serve_command::v1::{Command, ParseError};
        /// let v = serde_json::json!({"command": "steer", "text": "look at tests"});
        /// assert_eq!(
        ///     Command::from_json(&v),
        ///     Ok(Command::Steer { kind: serve_command::v1::SteerKind::Prompt, text: "look at tests".into() }),
        /// );
        /// let v = serde_json::json!({"command": "approval", "id": "a1"});
        /// assert_eq!(Command::from_json(&v), Err(ParseError::ExpectedAllow));
        /// ```
    },
    to_json: {
        /// ```
        /// use serve_command::v1::Command;
        /// let cmd = Command::GoalSet { text: "ship".into(), auto: true };
        /// assert_eq!(cmd.to_json()["auto"], true);
        /// assert_eq!(
        ///     serde_json::to_string(&cmd.to_json())?,
        ///     r#"{"action":"set","auto":true,"command":"goal","text":"ship"}"#,
        /// );
        /// assert_eq!(serde_json::to_string(&cmd)? + "\n", cmd.to_line());
        /// # Ok::<(), serde_json::Error>(())
        /// ```
    },
}
