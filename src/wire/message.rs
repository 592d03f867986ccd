//! What ties a message type (each revision's command, today's event) to the
//! machinery they share (stream reading, the tokio codec, the CLI):
//! decoding a line, writing one, and what a bad line gives. The trait sits
//! here, below the readers that take it; each message implements it
//! above (`revision.rs`'s `face!`, `v2::event`).

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

/// [`Message`] for a type whose own `from_slice` and `write_line` read and
/// write its line: each revision's command (`face!`) and the event.
macro_rules! message_by_line {
    ($(#[$doc:meta])* $ty:ident, $parse:ty, $line:ty, $read:ty) => {
        impl $crate::wire::message::sealed::Sealed for $ty {}

        $(#[$doc])*
        impl $crate::wire::message::Message for $ty {
            type ParseError = $parse;
            type LineError = $line;
            type ReadError = $read;

            #[inline]
            fn decode_line(line: &[u8]) -> Result<$ty, $line> {
                $ty::from_slice(line)
            }

            #[inline]
            fn encode_line<W: std::io::Write>(&self, out: W) -> std::io::Result<()> {
                self.write_line(out)
            }
        }
    };
}
pub(crate) use message_by_line;
