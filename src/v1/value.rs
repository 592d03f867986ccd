//! The `serde_json::Value` path: the reference's `parse` and `to_json`.

use crate::v1::command::Val;
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
    rules::decide(fields)
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
