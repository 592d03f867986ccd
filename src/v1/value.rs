//! The `serde_json::Value` path: the reference's `parse` and `to_json`.

use crate::v1::encode::Val;
use crate::v1::rules::{self, Fields};
use crate::v1::{Command, ParseError};
use crate::wire::fields::Slot;
use serde_json::{Map, Value};
use std::convert::Infallible;

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

pub(crate) fn to_json(cmd: &Command) -> Value {
    let mut map = Map::new();
    let Ok(()) = cmd.entries(|key, val| -> Result<(), Infallible> {
        let value = match val {
            Val::Str(s) => Value::String(s.to_owned()),
            Val::Bool(b) => Value::Bool(b),
        };
        map.insert(key.to_owned(), value);
        Ok(())
    });
    Value::Object(map)
}

impl Command {
    /// Decodes a JSON value, exactly as the reference's `Command::parse`
    /// (the pair of [`Command::to_json`]).
    ///
    /// # Errors
    ///
    /// The [`ParseError`] a line holding `value` gets: a value that is not
    /// an object is [`ParseError::ExpectedCommand`].
    ///
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
    #[must_use = "a command, or why the value is not one"]
    #[doc(alias = "parse")]
    pub fn from_json(value: &serde_json::Value) -> Result<Command, ParseError> {
        parse(value)
    }

    /// The command as a JSON object with the keys and values of
    /// [`Command::to_line`] (the reference's `to_json`).
    ///
    /// A `serde_json::Value` object does not keep its keys in order unless
    /// `serde_json`'s `preserve_order` feature is on: printed, it has the
    /// keys sorted (`{"action":"set","auto":true,"command":"goal",...}`).
    /// For the canonical line, use [`Command::to_line`],
    /// [`Command::write_line`], or `serde_json::to_string(&command)`
    /// (`Serialize` writes the wire's key order).
    ///
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
    #[must_use]
    pub fn to_json(&self) -> serde_json::Value {
        to_json(self)
    }
}
