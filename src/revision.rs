//! The face every revision's module shows, written once: the shared
//! machinery's names with the revision filled in, and its
//! [`Message`](crate::generic::Message) impl.

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

        impl crate::wire::message::sealed::Sealed for Command {}

        impl crate::wire::message::Revision for Command {}

        impl crate::wire::message::Message for Command {
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
