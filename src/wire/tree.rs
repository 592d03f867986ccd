//! A whole JSON value as a tree, for messages whose rules read nested
//! values (the engine's events: job records, outcomes, a job's free-form
//! `data`). Built by the line scanner ([`parse`]), so a line is JSON here
//! exactly when it is JSON to the commands' decoder, with the same errors;
//! built iteratively, so no depth of nesting grows the stack.
//!
//! A line's strings stay as the scan left them, unescaped and checked only
//! when a rule reads them (most keys are only compared, and a string the
//! event keeps is built once, straight from the line); numbers keep their
//! source text, read as a double on demand, which upstream's stringify
//! also needs to write a big integer back as it came.

use crate::wire::fields::WireStr;
use crate::wire::raw_str::RawStr;
use std::borrow::Cow;

/// One JSON value of a line.
#[derive(Clone)]
pub(crate) enum Json<'a> {
    Null,
    Bool(bool),
    Num(Num<'a>),
    Str(JStr<'a>),
    Arr(Vec<Json<'a>>),
    /// Members in the line's order, duplicates included: [`Json::get`]
    /// reads a key's last value, as the reference's map keeps it.
    Obj(Vec<(JStr<'a>, Json<'a>)>),
}

/// A string: as a line holds it (escapes and all), or as text.
#[derive(Clone)]
pub(crate) enum JStr<'a> {
    Raw(RawStr<'a>),
    /// From a source other than a line (`Value`, a `Deserializer`).
    Text(Cow<'a, str>),
}

impl JStr<'_> {
    /// Whether the (unescaped) string is `lit`.
    #[inline]
    pub(crate) fn is(&self, lit: &str) -> bool {
        match self {
            JStr::Raw(raw) => raw.is(lit),
            JStr::Text(s) => s == lit,
        }
    }

    /// The (unescaped) string, borrowed unless it held an escape.
    #[inline]
    pub(crate) fn text(&self) -> Cow<'_, str> {
        match self {
            JStr::Raw(raw) => raw.as_text(),
            JStr::Text(s) => Cow::Borrowed(s),
        }
    }

    /// The (unescaped) string, owned: one allocation, from the line.
    #[inline]
    pub(crate) fn to_owned_string(&self) -> String {
        match self {
            JStr::Raw(raw) => raw.into_string(),
            JStr::Text(s) => s.clone().into_owned(),
        }
    }

    /// `f` of the (unescaped) string's bytes, unchecked and uncopied when
    /// the line holds them as they are.
    #[inline]
    pub(crate) fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        match self {
            JStr::Raw(raw) => match raw.plain() {
                Some(bytes) => f(bytes),
                None => f(raw.as_text().as_bytes()),
            },
            JStr::Text(text) => f(text.as_bytes()),
        }
    }

    /// Whether the string is empty (an escape never unescapes to nothing).
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        match self {
            JStr::Raw(raw) => raw.is_empty(),
            JStr::Text(s) => s.is_empty(),
        }
    }
}

impl<'a> WireStr for JStr<'a> {
    #[inline]
    fn is(&self, lit: &str) -> bool {
        JStr::is(self, lit)
    }
    #[inline]
    fn into_string(self) -> String {
        match self {
            JStr::Raw(raw) => raw.into_string(),
            JStr::Text(s) => s.into_owned(),
        }
    }
    #[inline]
    fn as_text(&self) -> Cow<'_, str> {
        self.text()
    }
}

/// A number, by its text as the line spells it.
#[derive(Clone)]
pub(crate) struct Num<'a> {
    pub(crate) text: Cow<'a, str>,
}

impl Num<'_> {
    /// The double the reference reads from the text: the nearest one.
    // Inline: hot in every record's rules, and whether a codegen unit
    // inlines it otherwise moves with unrelated code (callgrind: 3% of the
    // vectors' workload, BENCHMARKS.md "Issue 51").
    #[inline]
    pub(crate) fn value(&self) -> f64 {
        let text = self.text.as_bytes();
        let (negative, digits) = match text.split_first() {
            Some((b'-', rest)) => (true, rest),
            _ => (false, text),
        };
        // Up to 15 digits is exact in a double: most numbers of a line
        // (counts, times in ms) need no float parsing.
        if !digits.is_empty() && digits.len() <= 15 && digits.iter().all(u8::is_ascii_digit) {
            let n = digits
                .iter()
                .fold(0i64, |n, d| n * 10 + i64::from(d - b'0')) as f64;
            return if negative { -n } else { n };
        }
        crate::wire::number::number_value(text)
    }
}

/// A key and its value.
pub(crate) type Member<'a> = (JStr<'a>, Json<'a>);

/// An object's members as the event decoder reads them, in the line's
/// order: `head` then `tail`.
#[derive(Clone, Copy)]
pub(crate) struct Object<'t, 'a> {
    pub(crate) head: &'t [Member<'a>],
    pub(crate) tail: &'t [Member<'a>],
}

impl<'t, 'a> Object<'t, 'a> {
    /// A tree's object.
    pub(crate) fn of(members: &'t [Member<'a>]) -> Object<'t, 'a> {
        Object {
            head: members,
            tail: &[],
        }
    }

    /// The value of `key` (its last, if repeated).
    #[inline]
    pub(crate) fn get(self, key: &str) -> Option<&'t Json<'a>> {
        let last = |members: &'t [Member<'a>]| {
            members
                .iter()
                .rev()
                .find(|(k, _)| k.is(key))
                .map(|(_, v)| v)
        };
        last(self.tail).or_else(|| last(self.head))
    }
}

/// How many of a line's top-level members are kept on the stack: every
/// event has fewer fields but a job record, so only padding spills.
const INLINE: usize = 8;

/// A member that owns nothing: what an unused stack slot holds.
const NOTHING: Member<'static> = (JStr::Text(Cow::Borrowed("")), Json::Null);

/// A line's top-level members, as
/// [`parse_object`](crate::wire::scan::parse_object) keeps them: the first
/// [`INLINE`] on the stack, the rest in a vector. A small event's decode
/// then allocates only what the event owns.
pub(crate) struct Members<'a> {
    /// Not dropped whole: only the first `n` can own anything, and a drop
    /// of every slot cost more than the allocation it saves.
    inline: std::mem::ManuallyDrop<[Member<'a>; INLINE]>,
    n: usize,
    spill: Vec<Member<'a>>,
}

impl<'a> Members<'a> {
    pub(crate) fn new() -> Members<'a> {
        Members {
            inline: std::mem::ManuallyDrop::new([NOTHING; INLINE]),
            n: 0,
            spill: Vec::new(),
        }
    }

    #[inline]
    pub(crate) fn push(&mut self, member: Member<'a>) {
        match self.inline.get_mut(self.n) {
            Some(slot) => {
                // The slot held `NOTHING`: there is nothing to drop.
                std::mem::forget(std::mem::replace(slot, member));
                self.n += 1;
            }
            None => self.spill.push(member),
        }
    }

    pub(crate) fn object(&self) -> Object<'_, 'a> {
        Object {
            head: &self.inline[..self.n],
            tail: &self.spill,
        }
    }
}

impl Drop for Members<'_> {
    fn drop(&mut self) {
        // What the used slots own is dropped here; the rest own nothing.
        for slot in &mut self.inline[..self.n] {
            *slot = NOTHING;
        }
    }
}

impl<'a> Json<'a> {
    /// The value of `key` in an object (its last, if repeated); `None` for
    /// a missing key or a value that is not an object.
    pub(crate) fn get(&self, key: &str) -> Option<&Json<'a>> {
        match self {
            Json::Obj(members) => members
                .iter()
                .rev()
                .find(|(k, _)| k.is(key))
                .map(|(_, v)| v),
            _ => None,
        }
    }

    /// Each of `keys`' value in an object (its last, if repeated), in one
    /// pass over its members: for a record whose rules read every field.
    #[inline]
    pub(crate) fn pick<'t, const N: usize>(
        &'t self,
        keys: &[&str; N],
    ) -> [Option<&'t Json<'a>>; N] {
        let mut out = [None; N];
        let Json::Obj(members) = self else {
            return out;
        };
        for (key, value) in members {
            let at = key.with_bytes(|key| keys.iter().position(|k| k.as_bytes() == key));
            if let Some(at) = at {
                out[at] = Some(value);
            }
        }
        out
    }

    /// The string this value is, if it is one.
    #[inline]
    pub(crate) fn as_jstr(&self) -> Option<&JStr<'a>> {
        match self {
            Json::Str(s) => Some(s),
            _ => None,
        }
    }

    /// Whether this value is the string `lit`.
    #[inline]
    pub(crate) fn is_str(&self, lit: &str) -> bool {
        matches!(self, Json::Str(s) if s.is(lit))
    }

    /// The string this value is, owned, if it is one.
    #[inline]
    pub(crate) fn string(&self) -> Option<String> {
        self.as_jstr().map(JStr::to_owned_string)
    }

    /// The members of an object, with each key's last value only, in the
    /// order the reference's map keeps them: a key where it first appeared.
    pub(crate) fn members(&self) -> Vec<(Cow<'_, str>, &Json<'a>)> {
        use std::collections::hash_map::{Entry, HashMap};
        let Json::Obj(members) = self else {
            return Vec::new();
        };
        let mut out: Vec<(Cow<'_, str>, &Json<'a>)> = Vec::with_capacity(members.len());
        // Where each key stands in `out`: linear in the keys, as the
        // reference's hash map is (a search of `out` made an object of
        // 60,000 keys take a minute).
        let mut at: HashMap<Cow<'_, str>, usize> = HashMap::with_capacity(members.len());
        for (key, value) in members {
            match at.entry(key.text()) {
                Entry::Occupied(slot) => out[*slot.get()].1 = value,
                Entry::Vacant(slot) => {
                    out.push((slot.key().clone(), value));
                    slot.insert(out.len() - 1);
                }
            }
        }
        out
    }
}
