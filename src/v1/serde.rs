//! `Serialize` and `Deserialize`, over the same wire shape and rules as the
//! byte path.

use crate::v1::command::Val;
use crate::v1::rules::{self, Fields, Key};
use crate::v1::Command;
use crate::wire::de::FieldValue;
use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, Serializer};
use std::borrow::Cow;
use std::convert::Infallible;
use std::fmt;

impl Serialize for Command {
    /// Writes the wire object; with `serde_json`, exactly
    /// [`Command::to_line`]'s bytes without the LF.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut len = 0;
        let Ok(()) = self.entries(|_, _| -> Result<(), Infallible> {
            len += 1;
            Ok(())
        });
        let mut map = serializer.serialize_map(Some(len))?;
        self.entries(|key, val| match val {
            Val::Str(s) => map.serialize_entry(key, s),
            Val::Bool(b) => map.serialize_entry(key, &b),
        })?;
        map.end()
    }
}

impl<'de> Deserialize<'de> for Command {
    /// Decodes by the same rules as [`Command::parse`]. A JSON value that is
    /// not a command fails with a custom error whose message is the wire
    /// string (`serde_json` appends the position).
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(CommandVisitor)
    }
}

struct CommandVisitor;

fn not_an_object<E: de::Error>() -> Result<Command, E> {
    Err(E::custom(rules::not_an_object()))
}

impl<'de> Visitor<'de> for CommandVisitor {
    type Value = Command;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a {\"command\": ...} object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Command, A::Error> {
        let mut fields: Fields<Cow<'de, str>> = Fields::new();
        while let Some(FieldKey(key)) = map.next_key()? {
            match key {
                Some(key) => *fields.slot_of(key) = map.next_value::<FieldValue<'de>>()?.0,
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        rules::decide(fields).map_err(de::Error::custom)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Command, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        not_an_object()
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Command, E> {
        not_an_object()
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Command, E> {
        not_an_object()
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Command, E> {
        not_an_object()
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Command, E> {
        not_an_object()
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Command, E> {
        not_an_object()
    }
    fn visit_unit<E: de::Error>(self) -> Result<Command, E> {
        not_an_object()
    }
}

/// A key, reduced to the one the rules read, if any.
struct FieldKey(Option<Key>);

impl<'de> Deserialize<'de> for FieldKey {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = FieldKey;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string key")
            }
            fn visit_str<E: de::Error>(self, key: &str) -> Result<FieldKey, E> {
                Ok(FieldKey(Key::from_bytes(key.as_bytes())))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}
