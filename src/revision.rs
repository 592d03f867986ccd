//! What ties a message type (each revision's command, today's event) to the
//! machinery they share (stream reading, the tokio codec, the CLI):
//! decoding a line, writing one, and what a bad line gives.

use crate::error::{LineError, ReadError};
use std::io;

/// A message type the shared machinery reads and writes, one per line:
/// each revision's command ([`v2::Command`], [`v1::Command`]) and today's
/// event ([`v2::Event`]).
///
/// [`CommandReader`] and `CommandCodec` take it as a type parameter, so the
/// framing, the line limit and the line numbers are the same for every
/// message. What a bad line gives is the message's own: a command's
/// [`ReadError`](crate::generic::ReadError) (with the `command_error` an
/// engine owes for it), an event's
/// [`EventReadError`](crate::v2::EventReadError) (a reason for a
/// controller's log, nothing to answer). Sealed: the crate defines the
/// messages.
///
/// ```
/// use serve_command::generic::{CommandReader, Message};
/// use serve_command::v2;
///
/// // Code for commands and events alike names the message as `M`.
/// fn count<M: Message>(stream: &[u8]) -> usize {
///     CommandReader::<_, M>::new(stream).filter(Result::is_ok).count()
/// }
/// let stream = b"{\"command\":\"cancel\"}\n{\"event\":\"agent_step\",\"step\":1}\n";
/// assert_eq!(count::<v2::Command>(stream), 1);
/// assert_eq!(count::<v2::Event>(stream), 1);
/// ```
///
/// [`v1::Command`]: crate::v1::Command
/// [`v2::Command`]: crate::v2::Command
/// [`v2::Event`]: crate::v2::Event
/// [`CommandReader`]: crate::generic::CommandReader
pub trait Message: Sized + sealed::Sealed {
    /// Why a JSON line is not this message: a revision's `ParseError`
    /// (whose `Display` is the wire string), or
    /// [`EventError`](crate::v2::EventError).
    type ParseError: std::error::Error + Clone + PartialEq + Send + Sync + 'static;

    /// Why one raw line is not this message: not JSON, or not the message.
    type LineError: std::error::Error + Send + Sync + 'static;

    /// What a reader gives for a line it refuses, or when reading fails.
    type ReadError: std::error::Error + Send + Sync + 'static + sealed::FromRead<Self::LineError>;

    /// Decodes one raw line, with or without its LF (the message's
    /// `from_slice`).
    ///
    /// # Errors
    ///
    /// The message's `from_slice` errors: the line is not JSON, or is JSON
    /// but not this message.
    ///
    /// ```
    /// use serve_command::generic::Message;
    /// use serve_command::{v1, v2};
    /// let line = br#"{"command":"prompt","content":"hi"}"#;
    /// assert!(<v2::Command as Message>::decode_line(line).is_ok());
    /// assert_eq!(
    ///     <v1::Command as Message>::decode_line(line).unwrap_err().to_string(),
    ///     "expected a string \"text\" field",
    /// );
    /// ```
    fn decode_line(line: &[u8]) -> Result<Self, Self::LineError>;

    /// Writes the message's wire line, LF included (its `write_line`).
    ///
    /// # Errors
    ///
    /// The first error `out` returns, as it is.
    ///
    /// ```
    /// use serve_command::generic::Message;
    /// use serve_command::v2::Command;
    /// let mut out = Vec::new();
    /// Command::Cancel.encode_line(&mut out)?;
    /// assert_eq!(out, b"{\"command\":\"cancel\"}\n");
    /// # Ok::<(), std::io::Error>(())
    /// ```
    fn encode_line<W: io::Write>(&self, out: W) -> io::Result<()>;
}

/// A revision of the wire, named by its command type: [`v2::Command`]
/// (today's) or [`v1::Command`] (the first revision's). A [`Message`]
/// whose bad lines are [`LineError`] and
/// [`ReadError`](crate::generic::ReadError), each with the
/// `command_error` an engine writes for it.
///
/// The wire itself carries no version: which revision a stream speaks is
/// the two ends' agreement. Sealed: the crate defines the revisions.
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
/// [`v2::Command`]: crate::v2::Command
pub trait Revision:
    Message<
    LineError = LineError<<Self as Message>::ParseError>,
    ReadError = ReadError<<Self as Message>::ParseError>,
>
{
}

pub(crate) mod sealed {
    use std::io;

    pub trait Sealed {}

    /// How the shared reader builds a message's read error: one line's
    /// error with its number, a line over the limit, a failed read.
    pub trait FromRead<L> {
        fn line(line: u64, error: L) -> Self;
        fn too_long(line: u64, max: usize) -> Self;
        fn io(error: io::Error) -> Self;
    }

    impl<E> FromRead<crate::error::LineError<E>> for crate::error::ReadError<E> {
        #[cold]
        fn line(line: u64, error: crate::error::LineError<E>) -> Self {
            crate::error::ReadError::Line { line, error }
        }

        #[cold]
        fn too_long(line: u64, max: usize) -> Self {
            crate::error::ReadError::TooLong { line, max }
        }

        #[cold]
        fn io(error: io::Error) -> Self {
            crate::error::ReadError::Io(error)
        }
    }
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

        impl crate::revision::Revision for Command {}

        impl crate::revision::Message for Command {
            type ParseError = ParseError;
            type LineError = LineError;
            type ReadError = ReadError;

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
