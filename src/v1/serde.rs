//! `Serialize` and `Deserialize`, over the same wire shape and rules as the
//! byte path.

use crate::v1::encode::Val;
use crate::v1::rules::{self, Fields, Key};
use crate::v1::{Command, SteerKind};
use crate::wire::de::{FieldValue, FromMap};
use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::ser::{Serialize, Serializer};
use std::borrow::Cow;
use std::fmt;

/// One value of the line (`Command`'s `Serialize`, in `revision.rs`, writes
/// the entries).
impl Serialize for Val<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match *self {
            Val::Str(s) => serializer.serialize_str(s),
            Val::Bool(b) => serializer.serialize_bool(b),
        }
    }
}

impl<'de> FromMap<'de> for Command {
    fn not_an_object() -> impl fmt::Display {
        rules::not_an_object()
    }

    fn from_map<A: MapAccess<'de>>(mut map: A) -> Result<Command, A::Error> {
        let mut fields: Fields<Cow<'de, str>> = Fields::new();
        while let Some(FieldKey(key)) = map.next_key()? {
            match key {
                Some(key) => *fields.slot_of(key) = map.next_value::<FieldValue<'de>>()?.0,
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        rules::decide::<_, crate::v1::ParseError>(&mut fields).map_err(de::Error::custom)
    }
}

impl Serialize for SteerKind {
    /// The wire string: `"prompt"` or `"command"`.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for SteerKind {
    /// By the decoder's rule for a `kind` value: `"prompt"` or `"command"`;
    /// another string fails with `unknown steer kind: <it>`, any other
    /// value with `expected a string "kind" field` (custom errors; with
    /// `serde_json`, the position follows).
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let FieldValue(slot) = FieldValue::deserialize(deserializer)?;
        rules::steer_kind(&slot).map_err(de::Error::custom)
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
