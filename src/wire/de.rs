//! The `Deserialize` side every revision shares: a value reduced to a
//! [`Slot`], borrowing the string from the input when it can.

use crate::wire::fields::Slot;
use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::borrow::Cow;
use std::fmt;

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
