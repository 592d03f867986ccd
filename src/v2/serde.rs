//! `Serialize` and `Deserialize`, over the same wire shape and rules as the
//! byte path.

use crate::v2::encode::Val;
use crate::v2::rules::{self, Fields, Key, PartFields, PartList};
use crate::v2::{Command, Content, ContentPart, Image};
use crate::wire::de::{FieldValue, FromMap};
use crate::wire::fields::{ArrayField, Field, Item, Slot};
use base64::display::Base64Display;
use base64::engine::general_purpose::STANDARD;
use serde::de::{
    self, Deserialize, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor,
};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use std::borrow::Cow;
use std::fmt;

/// One value of the line (`Command`'s `Serialize`, in `revision.rs`, writes
/// the entries).
impl Serialize for Val<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match *self {
            Val::Str(s) => serializer.serialize_str(s),
            Val::Bool(b) => serializer.serialize_bool(b),
            Val::Content(c) => c.serialize(serializer),
        }
    }
}

impl Serialize for Content {
    /// A string for exactly one text part, else the array of parts.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if let Some(text) = self.as_single_text() {
            return serializer.serialize_str(text);
        }
        let mut seq = serializer.serialize_seq(Some(self.parts().len()))?;
        for part in self {
            seq.serialize_element(part)?;
        }
        seq.end()
    }
}

impl Serialize for ContentPart {
    /// `{"type":"text","text":T}` or
    /// `{"type":"image","media_type":M,"data":<base64>}`.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ContentPart::Text(text) => {
                let mut map = serializer.serialize_map(Some(2))?;
                map.serialize_entry("type", "text")?;
                map.serialize_entry("text", text)?;
                map.end()
            }
            ContentPart::Image(image) => {
                let mut map = serializer.serialize_map(Some(3))?;
                map.serialize_entry("type", "image")?;
                map.serialize_entry("media_type", image.media_type())?;
                map.serialize_entry("data", &Base64(image))?;
                map.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for Content {
    /// A string (one text part) or an array of parts, by the decoder's
    /// rules for a `content` value. Anything else fails with a custom error
    /// whose message is the wire string the line would get, e.g.
    /// `invalid content: JsonDecodeError((/0/type, unknown content part
    /// type))` (`serde_json` appends the position).
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut value = Slot::Absent;
        let mut parts = PartList::new();
        ArraySeed {
            value: &mut value,
            items: &mut parts,
        }
        .deserialize(deserializer)?;
        rules::content_alone(value, parts).map_err(de::Error::custom)
    }
}

impl<'de> Deserialize<'de> for ContentPart {
    /// `{"type":"text","text":T}` or
    /// `{"type":"image","media_type":M,"data":<base64>}` (other keys
    /// ignored), by the decoder's rules for an item of `content`. Anything
    /// else fails with a custom error whose message is the wire string, its
    /// path relative to the part: `invalid content: JsonDecodeError((/type,
    /// unknown content part type))`, say.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let item = deserializer.deserialize_any(ItemVisitor)?;
        rules::part_alone(item).map_err(de::Error::custom)
    }
}

impl Serialize for Image {
    /// `{"media_type":M,"data":<base64>}`: an image part's fields, without
    /// its `type`.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("media_type", self.media_type())?;
        map.serialize_entry("data", &Base64(self))?;
        map.end()
    }
}

impl<'de> Deserialize<'de> for Image {
    /// `{"media_type":M,"data":<base64>}` (other keys ignored, so an image
    /// part reads as its image), checked as [`Image::from_base64`] checks
    /// it: an image it refuses fails with a custom error whose message is
    /// the [`ImageError`](crate::v2::ImageError)'s, as the wire words it.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ImageVisitor;
        impl<'de> Visitor<'de> for ImageVisitor {
            type Value = Image;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an image object, {\"media_type\": ..., \"data\": ...}")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Image, A::Error> {
                let (mut media_type, mut data) = (None, None);
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    match &*key {
                        "media_type" => media_type = Some(map.next_value::<Cow<'de, str>>()?),
                        "data" => data = Some(map.next_value::<Cow<'de, str>>()?),
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                let media_type =
                    media_type.ok_or_else(|| de::Error::missing_field("media_type"))?;
                let data = data.ok_or_else(|| de::Error::missing_field("data"))?;
                Image::from_base64(&media_type, &data).map_err(de::Error::custom)
            }
        }
        deserializer.deserialize_map(ImageVisitor)
    }
}

/// An image's bytes as base64, streamed into the serializer.
struct Base64<'a>(&'a Image);

impl Serialize for Base64<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&Base64Display::new(self.0.bytes(), &STANDARD))
    }
}

impl<'de> FromMap<'de> for Command {
    fn not_an_object() -> impl fmt::Display {
        rules::not_an_object()
    }

    fn from_map<A: MapAccess<'de>>(mut map: A) -> Result<Command, A::Error> {
        let mut fields: Fields<Cow<'de, str>> = Fields::new();
        while let Some(KeyName(key)) = map.next_key()? {
            match key.and_then(|k| Key::from_bytes(k.as_bytes())) {
                Some(key) => match fields.field_of(key) {
                    // (Only an item's field is decoded while it is read,
                    // and only by the line scanner.)
                    Field::Flat(slot) | Field::Decoded { value: slot, .. } => {
                        *slot = map.next_value::<FieldValue<'de>>()?.0
                    }
                    Field::Array { value, items } => {
                        map.next_value_seed(ArraySeed { value, items })?
                    }
                },
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        rules::decide(&mut fields).map_err(de::Error::custom)
    }
}

/// A key, reduced to its name when it is one the rules read (in the
/// command object or in a content part).
struct KeyName(Option<&'static str>);

impl<'de> Deserialize<'de> for KeyName {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = KeyName;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string key")
            }
            fn visit_str<E: de::Error>(self, key: &str) -> Result<KeyName, E> {
                let names = Key::NAME_LIST
                    .into_iter()
                    .chain(PartFields::<()>::NAME_LIST);
                Ok(KeyName(names.into_iter().find(|name| *name == key)))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

type Array<'a, 'de> = &'a mut dyn ArrayField<Cow<'de, str>, PartFields<Cow<'de, str>>>;

/// An array key's value: a slot, or, for an array, its items fed to the
/// key's [`ArrayField`].
struct ArraySeed<'a, 'de> {
    value: &'a mut Slot<Cow<'de, str>>,
    items: Array<'a, 'de>,
}

impl<'de> DeserializeSeed<'de> for ArraySeed<'_, 'de> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(SlotVisitor {
            value: self.value,
            array: self.items,
        })
    }
}

struct SlotVisitor<'a, 'de> {
    value: &'a mut Slot<Cow<'de, str>>,
    array: Array<'a, 'de>,
}

impl<'de> SlotVisitor<'_, 'de> {
    fn set<E>(self, slot: Slot<Cow<'de, str>>) -> Result<(), E> {
        *self.value = slot;
        Ok(())
    }
}

impl<'de> Visitor<'de> for SlotVisitor<'_, 'de> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<(), E> {
        self.set(Slot::Str(Cow::Borrowed(s)))
    }
    fn visit_str<E>(self, s: &str) -> Result<(), E> {
        self.set(Slot::Str(Cow::Owned(s.to_owned())))
    }
    fn visit_string<E>(self, s: String) -> Result<(), E> {
        self.set(Slot::Str(Cow::Owned(s)))
    }
    fn visit_bool<E>(self, b: bool) -> Result<(), E> {
        self.set(if b { Slot::True } else { Slot::False })
    }
    // Only `content` and `images` come here, and neither reads a number.
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        self.set(Slot::Other)
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        self.set(Slot::Other)
    }
    fn visit_i128<E>(self, _: i128) -> Result<(), E> {
        self.set(Slot::Other)
    }
    fn visit_u128<E>(self, _: u128) -> Result<(), E> {
        self.set(Slot::Other)
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        self.set(Slot::Other)
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        self.set(Slot::Other)
    }
    fn visit_none<E>(self) -> Result<(), E> {
        self.set(Slot::Other)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        self.set(Slot::Other)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        *self.value = Slot::Absent;
        let array = self.array;
        array.begin();
        while seq
            .next_element_seed(ItemSeed { array: &mut *array })?
            .is_some()
        {}
        Ok(())
    }
}

/// One item of an array key: reduced and handed over while the rules want
/// items, skipped after.
struct ItemSeed<'a, 'de> {
    array: Array<'a, 'de>,
}

impl<'de> DeserializeSeed<'de> for ItemSeed<'_, 'de> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        if !self.array.wants_more() {
            deserializer.deserialize_ignored_any(IgnoredAny)?;
            return Ok(());
        }
        let item = deserializer.deserialize_any(ItemVisitor)?;
        self.array.item(item);
        Ok(())
    }
}

struct ItemVisitor;

type PartItem<'de> = Item<Cow<'de, str>, PartFields<Cow<'de, str>>>;

impl<'de> Visitor<'de> for ItemVisitor {
    type Value = PartItem<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<PartItem<'de>, E> {
        Ok(Item::Value(Slot::Str(Cow::Borrowed(s))))
    }
    fn visit_str<E>(self, s: &str) -> Result<PartItem<'de>, E> {
        Ok(Item::Value(Slot::Str(Cow::Owned(s.to_owned()))))
    }
    fn visit_string<E>(self, s: String) -> Result<PartItem<'de>, E> {
        Ok(Item::Value(Slot::Str(Cow::Owned(s))))
    }
    fn visit_bool<E>(self, b: bool) -> Result<PartItem<'de>, E> {
        Ok(Item::Value(if b { Slot::True } else { Slot::False }))
    }
    fn visit_i64<E>(self, _: i64) -> Result<PartItem<'de>, E> {
        Ok(Item::Value(Slot::Other))
    }
    fn visit_u64<E>(self, _: u64) -> Result<PartItem<'de>, E> {
        Ok(Item::Value(Slot::Other))
    }
    fn visit_i128<E>(self, _: i128) -> Result<PartItem<'de>, E> {
        Ok(Item::Value(Slot::Other))
    }
    fn visit_u128<E>(self, _: u128) -> Result<PartItem<'de>, E> {
        Ok(Item::Value(Slot::Other))
    }
    fn visit_f64<E>(self, _: f64) -> Result<PartItem<'de>, E> {
        Ok(Item::Value(Slot::Other))
    }
    fn visit_unit<E>(self) -> Result<PartItem<'de>, E> {
        Ok(Item::Value(Slot::Other))
    }
    fn visit_none<E>(self) -> Result<PartItem<'de>, E> {
        Ok(Item::Value(Slot::Other))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<PartItem<'de>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Item::Value(Slot::Other))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<PartItem<'de>, A::Error> {
        let mut part = PartFields::new();
        while let Some(KeyName(key)) = map.next_key()? {
            match key.and_then(|k| part.slot(k.as_bytes())) {
                Some(slot) => *slot = map.next_value::<FieldValue<'de>>()?.0,
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Item::Object(part))
    }
}
