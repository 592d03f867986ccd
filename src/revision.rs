//! What ties a revision of the wire to the machinery every revision shares
//! (stream reading, the tokio codec, the CLI): decoding a line and writing one.

use crate::LineError;
use std::io;

/// A revision of the wire, named by its command type: [`Command`] (the
/// seed's revision, at the crate root) or [`v2::Command`].
///
/// [`CommandReader`] and `CommandCodec` take it as a type parameter, so the
/// framing, the line limit and the line numbers are the same for every
/// revision. The wire itself carries no version: which revision a stream
/// speaks is the two ends' agreement. Sealed: the crate defines the
/// revisions.
///
/// [`Command`]: crate::Command
/// [`CommandReader`]: crate::CommandReader
/// [`v2::Command`]: crate::v2::Command
pub trait Revision: Sized + sealed::Sealed {
    /// Why a JSON line is not a command of this revision; `Display` is the
    /// wire string.
    type ParseError: std::error::Error + Clone + PartialEq + Send + Sync + 'static;

    /// Decodes one raw line, with or without its LF (the revision's
    /// `from_slice`).
    fn decode_line(line: &[u8]) -> Result<Self, LineError<Self::ParseError>>;

    /// Writes the command's wire line, LF included (the revision's
    /// `write_line`).
    fn encode_line<W: io::Write>(&self, out: W) -> io::Result<()>;
}

pub(crate) mod sealed {
    pub trait Sealed {}
}
