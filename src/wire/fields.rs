//! What a decoding path keeps of a command object: for each key a revision
//! reads, whether it is absent, a string, `true`, `false`, or anything else;
//! and for a key whose value the rules read inside (an array of parts), its
//! items one by one, each an object's fields or a value.
//!
//! Every path (raw bytes, `serde_json::Value`, `Deserialize`) reduces its
//! input to a revision's fields through these types, and the revision's
//! rules decide on them; so the rules never see how the line was read.

/// A string as a decoding path holds it, turned into a `String` only when a
/// command or an error takes ownership of it.
pub(crate) trait WireStr {
    /// Whether the (unescaped) string equals `lit`.
    fn is(&self, lit: &str) -> bool;
    /// The (unescaped) string, owned.
    fn into_string(self) -> String;
    /// The (unescaped) string, borrowed when the path holds it as it is.
    fn as_text(&self) -> std::borrow::Cow<'_, str>;
    /// The (unescaped) string's UTF-8 bytes, borrowed when the path holds
    /// it as it is: for bytes-only readers (base64), without the check
    /// that makes them a `str`.
    fn as_utf8(&self) -> std::borrow::Cow<'_, [u8]> {
        match self.as_text() {
            std::borrow::Cow::Borrowed(s) => std::borrow::Cow::Borrowed(s.as_bytes()),
            std::borrow::Cow::Owned(s) => std::borrow::Cow::Owned(s.into_bytes()),
        }
    }
}

impl WireStr for &str {
    #[inline]
    fn is(&self, lit: &str) -> bool {
        *self == lit
    }
    #[inline]
    fn into_string(self) -> String {
        self.to_owned()
    }
    #[inline]
    fn as_text(&self) -> std::borrow::Cow<'_, str> {
        std::borrow::Cow::Borrowed(self)
    }
}

impl WireStr for String {
    #[inline]
    fn is(&self, lit: &str) -> bool {
        self == lit
    }
    #[inline]
    fn into_string(self) -> String {
        self
    }
    #[inline]
    fn as_text(&self) -> std::borrow::Cow<'_, str> {
        std::borrow::Cow::Borrowed(self)
    }
}

impl WireStr for std::borrow::Cow<'_, str> {
    #[inline]
    fn is(&self, lit: &str) -> bool {
        self == lit
    }
    #[inline]
    fn into_string(self) -> String {
        self.into_owned()
    }
    #[inline]
    fn as_text(&self) -> std::borrow::Cow<'_, str> {
        std::borrow::Cow::Borrowed(self)
    }
}

/// What one known key holds. Only the distinctions the rules draw are kept.
pub(crate) enum Slot<S> {
    Absent,
    Str(S),
    True,
    False,
    /// Present, but a number, `null`, an array or an object. (No rule
    /// reads a command's number since `predict` went, at fdf10827.)
    Other,
}

impl<S> Slot<S> {
    /// The slot's value, leaving it absent.
    #[inline(always)]
    pub(crate) fn take(&mut self) -> Slot<S> {
        std::mem::replace(self, Slot::Absent)
    }

    #[inline]
    pub(crate) fn string(self) -> Option<S> {
        match self {
            Slot::Str(s) => Some(s),
            _ => None,
        }
    }
}

/// The known keys of one revision (or of an object inside an array the
/// rules read), as the scanner fills them: it validates the whole line and
/// hands each top-level key's value to `field`.
pub(crate) trait FieldSet<S> {
    /// Longest known key, in bytes: an escaped key that unescapes to more
    /// cannot be one of ours, so the scanner stops unescaping it there.
    const MAX_KEY_LEN: usize;

    /// The fields kept of an object that is an item of an array key
    /// ([`Field::Array`]); [`NoFields`] for a revision without one.
    type Item: FieldSet<S>;

    /// Fresh, all-absent fields for one such object.
    fn item() -> Self::Item;

    /// Where a key's (unescaped) value goes, or `None` for a key the rules
    /// never read. A duplicate key overwrites: the last one wins, as in the
    /// reference's JSON parser. An array key is named by a number, which
    /// [`FieldSet::items`] takes when the value is an array: the scanner
    /// asks for the items only then, so a line whose array key holds a
    /// string (v2's common `content`) never builds their `dyn` reference.
    fn field(&mut self, key: &[u8]) -> Option<Field<'_, S, usize>>;

    /// The items of the array key `field` named `which`. A field set
    /// without array keys never names one; should it, the array's items
    /// are validated and none is kept.
    fn items(&mut self, which: usize) -> &mut dyn ArrayField<S, Self::Item> {
        let _ = which;
        // A zero-sized value: leaking its box allocates nothing.
        Box::leak(Box::new(NoItems))
    }
}

/// Where one known key's value goes.
pub(crate) enum Field<'f, S, A> {
    /// A value reduced to a [`Slot`].
    Flat(&'f mut Slot<S>),
    /// A value the rules read inside when it is an array: any other value
    /// goes to `value`, as for a flat key; an array leaves `value` absent
    /// and goes to the [`ArrayField`] that `items` is (or names, for the
    /// scanner: [`FieldSet::field`]), item by item.
    Array { value: &'f mut Slot<S>, items: A },
    /// A string the rules decode whole (v2's image `data`), which the
    /// scanner may decode as it finds it, in an object item of an array key
    /// (at the top level it is read as a flat key). It hands `decode` the
    /// bytes from the opening quote to the next one; when `decode` accepts
    /// them they are the whole string, without escapes, so its own scan is
    /// skipped: `value` takes the string and `decoded` what `decode` made
    /// of it. Otherwise the value is scanned as a flat key's and `decoded`
    /// is `None` (the rules decode the string, and say why it is not
    /// good). `decode` must accept only printable ASCII without a
    /// backslash: then neither an escape nor a control character nor a
    /// byte to check as UTF-8 can be in what it accepted.
    Decoded {
        value: &'f mut Slot<S>,
        decoded: &'f mut Option<Vec<u8>>,
        decode: fn(&[u8]) -> Option<Vec<u8>>,
    },
}

/// The items of an array no rule reads: none is wanted.
struct NoItems;

impl<S, O> ArrayField<S, O> for NoItems {
    fn begin(&mut self) {}
    fn wants_more(&self) -> bool {
        false
    }
    fn item(&mut self, _: Item<S, O>) {}
}

/// One item of an array key: an object's fields, or any other value.
pub(crate) enum Item<S, O> {
    Value(Slot<S>),
    Object(O),
}

/// The items of an array key, which the rules read in order. Each decoding
/// path calls `begin` when the key's value is an array (leaving the key's
/// slot absent, so the rules know the array is the last value the key had),
/// then `item` for each item while `wants_more` (the items after the first
/// one the rules refuse are validated but not kept, so the memory kept is
/// what the command will own).
pub(crate) trait ArrayField<S, O> {
    /// The value is an array; its items follow.
    fn begin(&mut self);
    /// Whether the next item is wanted.
    fn wants_more(&self) -> bool;
    /// The next item.
    fn item(&mut self, item: Item<S, O>);
}

/// The fields of a revision that reads nothing inside arrays.
pub(crate) struct NoFields;

impl<S> FieldSet<S> for NoFields {
    const MAX_KEY_LEN: usize = 0;
    type Item = NoFields;
    #[inline]
    fn item() -> NoFields {
        NoFields
    }
    #[inline]
    fn field(&mut self, _: &[u8]) -> Option<Field<'_, S, usize>> {
        None
    }
}

/// The names of a field set's keys, each found by one lookup in a table
/// of 32 entries (a perfect hash, chosen at compile time by
/// [`KeyTable::new`]): no chain of byte compares, no jump on the key's
/// length, and one branch, taken when the key is one of ours.
///
/// A key is read as two words, which together hold every byte of any key
/// of up to 16 bytes (see [`words`]); the entry its first word hashes to
/// matches when both words and the length are its name's.
pub(crate) struct KeyTable {
    entries: [KeyEntry; KEY_SLOTS],
    mul: u64,
}

const KEY_SLOTS: usize = 32;

#[derive(Clone, Copy)]
struct KeyEntry {
    lo: u64,
    hi: u64,
    /// `u8::MAX` for an empty entry: no key is that long.
    len: u8,
    /// The name's index in the list given to [`KeyTable::new`].
    index: u8,
}

impl KeyTable {
    /// The table of `names` (each 1 to 16 bytes, all different). Fails to
    /// compile when no multiplier in the first few thousand tried hashes
    /// them to different entries, as for two names whose first words are
    /// the same (their first 8 bytes).
    pub(crate) const fn new(names: &[&str]) -> KeyTable {
        const EMPTY: KeyEntry = KeyEntry {
            lo: 0,
            hi: 0,
            len: u8::MAX,
            index: 0,
        };
        assert!(names.len() <= KEY_SLOTS / 2, "too many keys for the table");
        let mut attempt = 0u64;
        'mul: loop {
            assert!(attempt < 4096, "no perfect hash for these keys");
            // Odd multipliers, spread by the golden ratio's.
            let mul = 0x9e37_79b9_7f4a_7c15u64.wrapping_mul(2 * attempt + 1) | 1;
            attempt += 1;
            let mut entries = [EMPTY; KEY_SLOTS];
            let mut k = 0;
            while k < names.len() {
                let name = names[k].as_bytes();
                assert!(!name.is_empty() && name.len() <= 16, "key length");
                let (lo, hi) = const_words(name);
                let at = slot(lo, mul);
                if entries[at].len != u8::MAX {
                    continue 'mul;
                }
                entries[at] = KeyEntry {
                    lo,
                    hi,
                    len: name.len() as u8,
                    index: k as u8,
                };
                k += 1;
            }
            return KeyTable { entries, mul };
        }
    }

    /// The index of `key` among the names, if it is one.
    #[inline(always)]
    pub(crate) fn find(&self, key: &[u8]) -> Option<usize> {
        let (lo, hi) = words(key)?;
        let e = &self.entries[slot(lo, self.mul)];
        (e.lo == lo && e.hi == hi && usize::from(e.len) == key.len())
            .then_some(usize::from(e.index))
    }
}

/// The entry a key's first word hashes to.
#[inline(always)]
const fn slot(lo: u64, mul: u64) -> usize {
    (lo.wrapping_mul(mul) >> (64 - KEY_SLOTS.trailing_zeros())) as usize
}

/// Two words that hold every byte of a key of 1 to 16 bytes, given its
/// length: its first and last 8 bytes (overlapping when it is shorter than
/// 16); from 4 to 7 bytes, its first and last 4 in one word; under 4, its
/// first, middle and last byte. `None` for a key longer than 16 bytes,
/// which is none of ours.
#[inline(always)]
fn words(key: &[u8]) -> Option<(u64, u64)> {
    let n = key.len();
    if n > 16 {
        return None;
    }
    let four = |b: &[u8; 4]| u64::from(u32::from_le_bytes(*b));
    Some(match (key.first_chunk::<8>(), key.last_chunk::<8>()) {
        (Some(first), Some(last)) => (u64::from_le_bytes(*first), u64::from_le_bytes(*last)),
        _ => match (key.first_chunk::<4>(), key.last_chunk::<4>()) {
            (Some(first), Some(last)) => (four(first) | four(last) << 32, 0),
            _ => match key {
                [] => (0, 0),
                [a, ..] => (
                    u64::from(*a) | u64::from(key[n / 2]) << 8 | u64::from(key[n - 1]) << 16,
                    0,
                ),
            },
        },
    })
}

/// [`words`] at compile time, byte by byte.
const fn const_words(key: &[u8]) -> (u64, u64) {
    const fn le(key: &[u8], at: usize, len: usize) -> u64 {
        let mut w = 0;
        let mut k = 0;
        while k < len {
            w |= (key[at + k] as u64) << (8 * k);
            k += 1;
        }
        w
    }
    let n = key.len();
    if n >= 8 {
        (le(key, 0, 8), le(key, n - 8, 8))
    } else if n >= 4 {
        (le(key, 0, 4) | le(key, n - 4, 4) << 32, 0)
    } else {
        (
            key[0] as u64 | (key[n / 2] as u64) << 8 | (key[n - 1] as u64) << 16,
            0,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::{ArrayField, FieldSet, Item, KeyTable, NoFields, Slot};

    #[test]
    fn a_set_without_array_keys_keeps_no_items() {
        let mut set = NoFields;
        let items: &mut dyn ArrayField<&str, NoFields> = FieldSet::<&str>::items(&mut set, 0);
        items.begin();
        assert!(!items.wants_more());
        items.item(Item::Value(Slot::Str("x")));
        assert!(!items.wants_more());
    }

    const NAMES: &[&str] = &[
        "command",
        "text",
        "submission_id",
        "kind",
        "id",
        "a",
        "abcdefgh",
        // (Not `abcdefghijklmnop`: two names whose first 8 bytes are the
        // same hash alike, and the table fails to compile.)
        "ponmlkjihgfedcba",
    ];
    const TABLE: KeyTable = KeyTable::new(NAMES);

    #[test]
    fn every_name_is_found_at_its_index() {
        for (index, name) in NAMES.iter().enumerate() {
            assert_eq!(TABLE.find(name.as_bytes()), Some(index), "{name}");
        }
    }

    /// Where a key is among the names, byte by byte.
    fn position(key: &[u8]) -> Option<usize> {
        NAMES.iter().position(|name| name.as_bytes() == key)
    }

    #[test]
    fn a_key_that_differs_in_any_byte_or_its_length_is_found_only_if_named() {
        for name in NAMES {
            let name = name.as_bytes();
            for at in 0..name.len() {
                let mut other = name.to_vec();
                other[at] ^= 0x20;
                assert_eq!(TABLE.find(&other), None, "{other:?}");
                let prefix = &name[..at];
                assert_eq!(TABLE.find(prefix), position(prefix), "{prefix:?}");
            }
            let mut longer = name.to_vec();
            longer.push(b'_');
            assert_eq!(TABLE.find(&longer), None, "{longer:?}");
        }
        for key in [
            &b""[..],
            b"ab",
            b"texttext",
            b"commandd",
            b"abcdefghabcdefgh",
            b"abcdefghijklmnop",
            b"ponmlkjihgfedcbaa",
            b"submission_id_and_more",
        ] {
            assert_eq!(TABLE.find(key), None, "{key:?}");
        }
    }
}
