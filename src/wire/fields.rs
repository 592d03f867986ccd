//! What a decoding path keeps of a command object: for each key a revision
//! reads, whether it is absent, a string, `true`, `false`, or anything else.
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

/// The known keys of one revision, as the scanner fills them: it validates
/// the whole line and hands each top-level key's value to `slot`.
pub(crate) trait FieldSet<S> {
    /// Longest known key, in bytes: an escaped key that unescapes to more
    /// cannot be one of ours, so the scanner stops unescaping it there.
    const MAX_KEY_LEN: usize;

    /// The slot for a key (unescaped), or `None` for a key the rules never
    /// read. A duplicate key overwrites: the last one wins, as in the
    /// reference's JSON parser.
    fn slot(&mut self, key: &[u8]) -> Option<&mut Slot<S>>;
}
