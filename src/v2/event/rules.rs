//! The event direction's rules, written once: how upstream's `parse`
//! reads each kind of field (`text`, `int`, `bool`, and the nested values'
//! own `FromJson`), over a line's JSON tree. `Event::from_slice`, `FromStr`
//! and `from_json` all come here.

use crate::v2::event::EventError;
use crate::v2::rules as command_rules;
use crate::v2::Content;
use crate::wire::fields::{ArrayField, Item, Slot};
use crate::wire::tree::{JStr, Json, Object};

/// Why a value is not the field's: the wrong kind of value, or a value of
/// the right kind that breaks a rule (in upstream's words where it has any).
pub(crate) enum Why {
    Wrong,
    Invalid(String),
}

/// A kind of field value, read as upstream's `parse` reads it.
pub(crate) trait FieldValue: Sized {
    /// What the value must be, for [`EventError::WrongType`].
    const EXPECTED: &'static str;
    fn read(value: &Json<'_>) -> Result<Self, Why>;
}

/// A required field: absent is [`EventError::MissingField`].
pub(crate) fn required<T: FieldValue>(
    object: Object<'_, '_>,
    event: &'static str,
    field: &'static str,
) -> Result<T, EventError> {
    let value = object
        .get(field)
        .ok_or(EventError::MissingField { event, field })?;
    T::read(value).map_err(|why| match why {
        Why::Wrong => EventError::WrongType {
            event,
            field,
            expected: T::EXPECTED,
        },
        Why::Invalid(reason) => EventError::InvalidField {
            event,
            field,
            reason,
        },
    })
}

/// Upstream's `text` for an optional field: the string, or `None` when the
/// key is absent or holds anything else.
pub(crate) fn text(object: Object<'_, '_>, field: &str) -> Option<String> {
    object.get(field).and_then(Json::string)
}

impl FieldValue for String {
    const EXPECTED: &'static str = "a string";
    fn read(value: &Json<'_>) -> Result<String, Why> {
        value.string().ok_or(Why::Wrong)
    }
}

impl FieldValue for bool {
    const EXPECTED: &'static str = "true or false";
    fn read(value: &Json<'_>) -> Result<bool, Why> {
        match value {
            Json::Bool(b) => Ok(*b),
            _ => Err(Why::Wrong),
        }
    }
}

impl FieldValue for i32 {
    const EXPECTED: &'static str = "an integer from -2147483648 to 2147483647";
    /// Upstream's `int`: a number equal to its own truncation to `Int`
    /// (`7.0` and `1e0` are 7, `-0` is 0; `1.5` and `2147483648` are not).
    fn read(value: &Json<'_>) -> Result<i32, Why> {
        number(value).and_then(int).ok_or(Why::Wrong)
    }
}

/// The double a number holds.
pub(crate) fn number(value: &Json<'_>) -> Option<f64> {
    match value {
        Json::Num(n) => Some(n.value()),
        _ => None,
    }
}

/// `Double::to_int` (truncating, saturating) and back: the integer, if the
/// double is one within `Int`'s range.
pub(crate) fn int(x: f64) -> Option<i32> {
    // `as` truncates and saturates as `to_int` does (NaN is 0, and 0.0 is
    // not NaN).
    let n = x as i32;
    (f64::from(n) == x).then_some(n)
}

/// The bundled core's `Int::from_json`: a number within `Int`'s range,
/// truncated toward zero (`1.5` reads as 1, `-0.5` as 0).
pub(crate) fn int_from_json(value: &Json<'_>) -> Option<i32> {
    let x = number(value)?;
    (-2_147_483_648.0..=2_147_483_647.0)
        .contains(&x)
        .then_some(x as i32)
}

impl FieldValue for Vec<String> {
    const EXPECTED: &'static str = "an array of strings";
    fn read(value: &Json<'_>) -> Result<Vec<String>, Why> {
        let Json::Arr(items) = value else {
            return Err(Why::Wrong);
        };
        items.iter().map(String::read).collect()
    }
}

impl FieldValue for Content {
    const EXPECTED: &'static str = "content: a string or an array of parts";
    /// The commands' content rules (`Content::from_json`), fed from the tree
    /// as the `Value` path feeds them: one rule set for both directions.
    fn read(value: &Json<'_>) -> Result<Content, Why> {
        let mut slot = Slot::Absent;
        let mut parts = command_rules::PartList::new();
        match value {
            Json::Arr(items) => {
                let array: &mut dyn ArrayField<JStr<'_>, command_rules::PartFields<JStr<'_>>> =
                    &mut parts;
                array.begin();
                for item in items {
                    if !array.wants_more() {
                        break;
                    }
                    array.item(match item {
                        Json::Obj(members) => {
                            let mut part = command_rules::PartFields::new();
                            for (key, value) in members {
                                if let Some(slot) = part.slot(key.text().as_bytes()) {
                                    *slot = slot_of(value);
                                }
                            }
                            Item::Object(part)
                        }
                        other => Item::Value(slot_of(other)),
                    });
                }
            }
            other => slot = slot_of(other),
        }
        command_rules::content_alone(slot, parts).map_err(|e| Why::Invalid(e.to_string()))
    }
}

/// A tree value as the commands' rules take a field.
fn slot_of<'a>(value: &Json<'a>) -> Slot<JStr<'a>> {
    match value {
        Json::Str(s) => Slot::Str(s.clone()),
        Json::Bool(true) => Slot::True,
        Json::Bool(false) => Slot::False,
        _ => Slot::Other,
    }
}
