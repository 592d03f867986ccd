//! The machinery every revision of the wire shares: the line scanner, JSON
//! string writing, the framing of a byte stream into lines, and the readers
//! built on it. No command type lives here.

#[cfg(feature = "tokio")]
pub(crate) mod codec;
pub(crate) mod de;
pub(crate) mod escape;
pub(crate) mod fields;
pub(crate) mod find;
pub(crate) mod framing;
pub(crate) mod message;
pub(crate) mod number;
pub(crate) mod raw_str;
pub(crate) mod read;
pub(crate) mod scan;
pub(crate) mod tree;
