//! What ties a revision of the wire to the machinery every revision shares
//! (stream reading, the tokio codec, the CLI): decoding a line and writing one.

use crate::error::LineError;
use std::io;

/// A revision of the wire, named by its command type: [`v2::Command`]
/// (today's) or [`v1::Command`] (the first revision's).
///
/// [`CommandReader`] and `CommandCodec` take it as a type parameter, so the
/// framing, the line limit and the line numbers are the same for every
/// revision. The wire itself carries no version: which revision a stream
/// speaks is the two ends' agreement. Sealed: the crate defines the
/// revisions.
///
/// ```
/// use serve_command::generic::{CommandReader, Revision};
/// use serve_command::v2;
///
/// // Code for either revision names it as `C`.
/// fn first<C: Revision>(stream: &[u8]) -> Option<C> {
///     CommandReader::<_, C>::new(stream).next()?.ok()
/// }
/// assert_eq!(first::<v2::Command>(b"{\"command\":\"cancel\"}\n"), Some(v2::Command::Cancel));
/// ```
///
/// [`v1::Command`]: crate::v1::Command
/// [`CommandReader`]: crate::generic::CommandReader
/// [`v2::Command`]: crate::v2::Command
pub trait Revision: Sized + sealed::Sealed {
    /// Why a JSON line is not a command of this revision; `Display` is the
    /// wire string.
    type ParseError: std::error::Error + Clone + PartialEq + Send + Sync + 'static;

    /// Decodes one raw line, with or without its LF (the revision's
    /// `from_slice`).
    ///
    /// # Errors
    ///
    /// The revision's `from_slice` errors: [`LineError::Syntax`] for a line
    /// that is not JSON, [`LineError::Parse`] for one that is not a
    /// command of this revision.
    ///
    /// ```
    /// use serve_command::generic::Revision;
    /// use serve_command::{v1, v2};
    /// let line = br#"{"command":"prompt","content":"hi"}"#;
    /// assert!(<v2::Command as Revision>::decode_line(line).is_ok());
    /// assert_eq!(
    ///     <v1::Command as Revision>::decode_line(line).unwrap_err().to_string(),
    ///     "expected a string \"text\" field",
    /// );
    /// ```
    fn decode_line(line: &[u8]) -> Result<Self, LineError<Self::ParseError>>;

    /// Writes the command's wire line, LF included (the revision's
    /// `write_line`).
    ///
    /// # Errors
    ///
    /// The first error `out` returns, as it is.
    ///
    /// ```
    /// use serve_command::generic::Revision;
    /// use serve_command::v2::Command;
    /// let mut out = Vec::new();
    /// Command::Cancel.encode_line(&mut out)?;
    /// assert_eq!(out, b"{\"command\":\"cancel\"}\n");
    /// # Ok::<(), std::io::Error>(())
    /// ```
    fn encode_line<W: io::Write>(&self, out: W) -> io::Result<()>;
}

pub(crate) mod sealed {
    pub trait Sealed {}
}

/// The names every revision's module exports for the shared machinery, each
/// the generic type with the revision filled in, and the revision's
/// `Revision` impl: written once here, so `v1` and `v2` are complete faces
/// named alike.
macro_rules! face {
    ($rev:literal) => {
        pub use crate::error::{SyntaxError, UnknownMessage};
        pub use crate::wire::read::DEFAULT_MAX_LINE_LEN;

        #[doc = concat!("Why one raw line is not a ", $rev, " command: not JSON, or not a command.")]
        ///
        /// [`generic::LineError`](crate::generic::LineError) with this
        /// revision's [`ParseError`].
        ///
        /// ```
        #[doc = concat!("use serve_command::", $rev, "::{Command, LineError, ParseError};")]
        /// let err = Command::from_slice(br#"{"command":"nap"}"#).unwrap_err();
        /// assert_eq!(err, LineError::Parse(ParseError::UnknownCommand("nap".into())));
        /// assert_eq!(err.event_line(), "{\"event\":\"command_error\",\"error\":\"unknown command: nap\"}\n");
        /// ```
        pub type LineError = crate::error::LineError<ParseError>;

        #[doc = concat!("Why a ", $rev, " [`CommandReader`] or `CommandCodec` refused a line, or stopped.")]
        ///
        /// [`generic::ReadError`](crate::generic::ReadError) with this
        /// revision's [`ParseError`].
        ///
        /// ```
        #[doc = concat!("use serve_command::", $rev, "::{CommandReader, ReadError};")]
        /// let mut reader = CommandReader::with_max_line_len(&b"{\"command\":\"cancel\"}\n"[..], 8);
        /// let err = reader.next().unwrap().unwrap_err();
        /// assert!(matches!(err, ReadError::TooLong { line: 1, max: 8 }));
        /// ```
        pub type ReadError = crate::error::ReadError<ParseError>;

        #[doc = concat!("Reads ", $rev, " commands from a [`BufRead`](std::io::BufRead), one per line, as an engine reads its stdin.")]
        ///
        /// [`generic::CommandReader`](crate::generic::CommandReader) with
        /// this revision's [`Command`]: an iterator of
        /// `Result<Command, ReadError>` that skips blank lines, goes on after
        /// a bad line, and refuses lines over a limit
        /// ([`DEFAULT_MAX_LINE_LEN`] for `new`) without buffering them.
        ///
        /// ```
        #[doc = concat!("use serve_command::", $rev, "::{Command, CommandReader};")]
        /// let stdin = &b"{\"command\":\"cancel\"}\n\nnot json\n"[..];
        /// let mut reader = CommandReader::new(stdin);
        /// assert_eq!(reader.next().unwrap().unwrap(), Command::Cancel);
        /// let err = reader.next().unwrap().unwrap_err();
        /// assert_eq!(err.to_string(), "line 3: expected a JSON value at byte 0");
        /// assert!(reader.next().is_none());
        /// ```
        pub type CommandReader<R> = crate::wire::read::CommandReader<R, Command>;

        #[doc = concat!("A `tokio_util::codec` codec for ", $rev, " command lines (feature `tokio`).")]
        ///
        /// [`generic::CommandCodec`](crate::generic::CommandCodec) with this
        /// revision's [`Command`]: the same framing as [`CommandReader`],
        /// for `FramedRead` and `FramedWrite`.
        ///
        /// ```
        #[doc = concat!("use serve_command::", $rev, "::{Command, CommandCodec};")]
        /// use tokio_util::codec::{Decoder, Encoder};
        /// let mut codec = CommandCodec::default();
        /// let mut buf = bytes::BytesMut::new();
        /// codec.encode(Command::Cancel, &mut buf)?;
        /// assert_eq!(&buf[..], b"{\"command\":\"cancel\"}\n");
        /// assert_eq!(codec.decode(&mut buf)?.unwrap().unwrap(), Command::Cancel);
        /// # Ok::<(), std::io::Error>(())
        /// ```
        #[cfg(feature = "tokio")]
        pub type CommandCodec = crate::wire::codec::CommandCodec<Command>;

        impl crate::revision::sealed::Sealed for Command {}

        impl crate::revision::Revision for Command {
            type ParseError = ParseError;

            #[inline]
            fn decode_line(line: &[u8]) -> Result<Command, LineError> {
                Command::from_slice(line)
            }

            #[inline]
            fn encode_line<W: std::io::Write>(&self, out: W) -> std::io::Result<()> {
                self.write_line(out)
            }
        }
    };
}
pub(crate) use face;
