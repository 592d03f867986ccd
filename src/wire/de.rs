//! The `Deserialize` side every revision shares: the command visitor, which
//! refuses anything but an object with the revision's wire string, and a
//! value reduced to a [`Slot`], borrowing the string from the input when it
//! can. A revision adds only how it reads the object ([`FromMap`]).

use crate::wire::fields::Slot;
use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

/// A revision's command, read from a map by the revision's rules.
pub(crate) trait FromMap<'de>: Sized {
    /// The wire string for a value that is not an object.
    fn not_an_object() -> impl fmt::Display;
    /// The command the object's keys make, or the wire string of why not
    /// (as a custom error, to which `serde_json` appends the position).
    fn from_map<A: MapAccess<'de>>(map: A) -> Result<Self, A::Error>;
}

/// `Deserialize::deserialize` for a revision's command.
pub(crate) fn deserialize_command<'de, C: FromMap<'de>, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<C, D::Error> {
    deserializer.deserialize_any(CommandVisitor(PhantomData))
}

struct CommandVisitor<C>(PhantomData<C>);

impl<C> CommandVisitor<C> {
    fn not_an_object<'de, E: de::Error>() -> Result<C, E>
    where
        C: FromMap<'de>,
    {
        Err(E::custom(C::not_an_object()))
    }
}

impl<'de, C: FromMap<'de>> Visitor<'de> for CommandVisitor<C> {
    type Value = C;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a {\"command\": ...} object")
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<C, A::Error> {
        C::from_map(map)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<C, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Self::not_an_object()
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<C, E> {
        Self::not_an_object()
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<C, E> {
        Self::not_an_object()
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<C, E> {
        Self::not_an_object()
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<C, E> {
        Self::not_an_object()
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<C, E> {
        Self::not_an_object()
    }
    fn visit_unit<E: de::Error>(self) -> Result<C, E> {
        Self::not_an_object()
    }
}

/// A value, reduced to what the rules distinguish: a string (borrowed from
/// the input when the deserializer can), `true`, `false`, or anything else.
pub(crate) struct FieldValue<'de>(pub(crate) Slot<Cow<'de, str>>);

impl<'de> Deserialize<'de> for FieldValue<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ValueVisitor)
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = FieldValue<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Self::Value, E> {
        Ok(FieldValue(Slot::Str(Cow::Borrowed(s))))
    }
    fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
        Ok(FieldValue(Slot::Str(Cow::Owned(s.to_owned()))))
    }
    fn visit_string<E>(self, s: String) -> Result<Self::Value, E> {
        Ok(FieldValue(Slot::Str(Cow::Owned(s))))
    }
    fn visit_bool<E>(self, b: bool) -> Result<Self::Value, E> {
        Ok(FieldValue(if b { Slot::True } else { Slot::False }))
    }
    // A number: no rule reads its value.
    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(FieldValue(Slot::Other))
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(FieldValue(Slot::Other))
    }
    fn visit_i128<E>(self, _: i128) -> Result<Self::Value, E> {
        Ok(FieldValue(Slot::Other))
    }
    fn visit_u128<E>(self, _: u128) -> Result<Self::Value, E> {
        Ok(FieldValue(Slot::Other))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(FieldValue(Slot::Other))
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(FieldValue(Slot::Other))
    }
    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(FieldValue(Slot::Other))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(FieldValue(Slot::Other))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(FieldValue(Slot::Other))
    }
}
