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
    /// Present, but a number, `null`, an array or an object.
    Other,
}

impl<S> Slot<S> {
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
    /// reference's JSON parser.
    fn field(&mut self, key: &[u8]) -> Option<Field<'_, S, Self::Item>>;
}

/// Where one known key's value goes.
pub(crate) enum Field<'f, S, O> {
    /// A value reduced to a [`Slot`].
    Flat(&'f mut Slot<S>),
    /// A value the rules read inside when it is an array: any other value
    /// goes to `value`, as for a flat key; an array leaves `value` absent
    /// and goes to `items`, item by item.
    Array {
        value: &'f mut Slot<S>,
        items: &'f mut dyn ArrayField<S, O>,
    },
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
    fn field(&mut self, _: &[u8]) -> Option<Field<'_, S, NoFields>> {
        None
    }
}
