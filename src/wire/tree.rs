//! A whole JSON value as a tree, for messages whose rules read nested
//! values (the engine's events: job records, outcomes, a job's free-form
//! `data`). Built by the line scanner ([`parse`]), so a line is JSON here
//! exactly when it is JSON to the commands' decoder, with the same errors;
//! built iteratively, so no depth of nesting grows the stack.
//!
//! Strings borrow from the line unless they hold an escape; numbers keep
//! their source text beside their value, which upstream's stringify needs
//! to write a big integer back as it came.

use std::borrow::Cow;

pub(crate) use crate::wire::scan::parse_tree as parse;

/// One JSON value of a line.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Json<'a> {
    Null,
    Bool(bool),
    Num(Num<'a>),
    Str(Cow<'a, str>),
    Arr(Vec<Json<'a>>),
    /// Members in the line's order, duplicates included: [`Json::get`]
    /// reads a key's last value, as the reference's map keeps it.
    Obj(Vec<(Cow<'a, str>, Json<'a>)>),
}

/// A number: its text as the line spells it, and the double the reference
/// reads from it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Num<'a> {
    pub(crate) text: Cow<'a, str>,
    pub(crate) value: f64,
}

impl<'a> Json<'a> {
    /// The value of `key` in an object (its last, if repeated); `None` for
    /// a missing key or a value that is not an object.
    pub(crate) fn get(&self, key: &str) -> Option<&Json<'a>> {
        match self {
            Json::Obj(members) => members.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The string this value is, if it is one.
    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Json::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The members of an object, with each key's last value only, in the
    /// order the reference's map keeps them: a key where it first appeared.
    pub(crate) fn members(&self) -> Vec<(&str, &Json<'a>)> {
        use std::collections::hash_map::{Entry, HashMap};
        let Json::Obj(members) = self else {
            return Vec::new();
        };
        let mut out: Vec<(&str, &Json<'a>)> = Vec::with_capacity(members.len());
        // Where each key stands in `out`: linear in the keys, as the
        // reference's hash map is (a search of `out` made an object of
        // 60,000 keys take a minute).
        let mut at: HashMap<&str, usize> = HashMap::with_capacity(members.len());
        for (key, value) in members {
            match at.entry(key) {
                Entry::Occupied(slot) => out[*slot.get()].1 = value,
                Entry::Vacant(slot) => {
                    slot.insert(out.len());
                    out.push((key, value));
                }
            }
        }
        out
    }
}
