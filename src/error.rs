//! The errors every revision shares: where a line is not JSON at all
//! ([`SyntaxError`]), why one line is not a command ([`LineError`]), and why
//! a stream refused a line or stopped ([`ReadError`]). Each revision brings
//! its own `ParseError`, the wire strings of its rules.
//!
//! Each error either displays its cause or returns it from `source()`, never
//! both: every one here displays its cause, so a chain printer shows each
//! message once.

use crate::wire::escape;
use std::{error, fmt, io};

/// Why a line is not JSON (as the reference's JSON parser sees it), and where.
///
/// `Display` reads `<what> at byte <offset>`, with `offset` counted from the
/// start of the line, zero-based.
///
/// ```
/// use serve_command::v2::{Command, LineError};
/// let Err(LineError::Syntax(e)) = Command::from_slice(br#"{"command":"cancel",}"#) else { panic!() };
/// assert_eq!((e.reason(), e.offset()), ("expected a string key", 20));
/// assert_eq!(e.to_string(), "expected a string key at byte 20");
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct SyntaxError {
    what: &'static str,
    offset: usize,
}

impl SyntaxError {
    #[cold]
    #[inline(never)]
    pub(crate) fn new(what: &'static str, offset: usize) -> Self {
        SyntaxError { what, offset }
    }

    /// Byte offset into the line (zero-based) where the problem was found.
    #[must_use]
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// What is wrong, without the position: `"expected ',' or '}'"`, say.
    #[must_use]
    pub fn reason(&self) -> &'static str {
        self.what
    }
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.what, self.offset)
    }
}

impl fmt::Debug for SyntaxError {
    // Reads well in an `unwrap()` panic: `SyntaxError("expected value" at byte 0)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SyntaxError({:?} at byte {})", self.what, self.offset)
    }
}

impl error::Error for SyntaxError {}

/// Why one raw line did not decode into a command.
///
/// Each revision names it with its own `ParseError` as `E`:
/// [`v2::LineError`](crate::v2::LineError) and
/// [`v1::LineError`](crate::v1::LineError). `Display` is the inner error's,
/// unchanged: this type only says which kind it is.
///
/// ```
/// use serve_command::v2::{Command, LineError, ParseError};
/// let err = Command::from_slice(br#"{"command":"nap"}"#).unwrap_err();
/// assert_eq!(err, LineError::Parse(ParseError::UnknownCommand("nap".into())));
/// assert!(!err.is_stream_error());
/// let err = Command::from_slice(b"{\"command\"").unwrap_err();
/// assert_eq!(err.to_string(), "unexpected end of line at byte 10");
/// assert!(err.is_stream_error());
/// ```
///
/// Another kind may be added, as [`ReadError`] may grow: a `match` needs a
/// `_` arm.
///
/// ```compile_fail,E0004
/// use serve_command::v2::LineError;
/// fn kind(e: &LineError) -> &str {
///     match e {
///         LineError::Syntax(_) => "not JSON",
///         LineError::Parse(_) => "not a command",
///     }
/// }
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LineError<E> {
    /// The line is not JSON. The reference engine answers this with
    /// `command stream: <detail>` and stops reading.
    Syntax(SyntaxError),
    /// The line is JSON, but not a message of the kind read: a command
    /// this revision can read (its `ParseError`, whose `Display` is the wire
    /// string unchanged), or an event (`v2::EventError`, a reason for a log).
    Parse(E),
}

impl<E> LineError<E> {
    /// Whether the engine reports this as `command stream: ...`, the errors
    /// at which the reference engine stops reading: true for a line that is
    /// not JSON, false for one that is JSON but not a command.
    #[must_use]
    pub fn is_stream_error(&self) -> bool {
        matches!(self, LineError::Syntax(_))
    }
}

impl<E: fmt::Display> LineError<E> {
    /// The engine's reply to this line, as one line ending in `"\n"`:
    /// `{"event":"command_error","error":<message>}`, where `<message>` is the
    /// parse error's wire string, or `command stream: <detail>` for a line
    /// that is not JSON. Ready to be written to the engine's stdout as it is.
    #[must_use]
    pub fn event_line(&self) -> String {
        match self {
            LineError::Syntax(e) => escape::event_line(&format!("command stream: {e}")),
            LineError::Parse(e) => escape::event_line(&e.to_string()),
        }
    }
}

impl<E> From<SyntaxError> for LineError<E> {
    fn from(e: SyntaxError) -> Self {
        LineError::Syntax(e)
    }
}

impl<E: fmt::Display> fmt::Display for LineError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LineError::Syntax(e) => e.fmt(f),
            LineError::Parse(e) => e.fmt(f),
        }
    }
}

impl<E: error::Error> error::Error for LineError<E> {
    // Transparent: the inner error is displayed, so its source is ours.
    fn source(&self) -> Option<&(dyn error::Error + 'static)> {
        match self {
            LineError::Syntax(e) => e.source(),
            LineError::Parse(e) => e.source(),
        }
    }
}

/// Why a [`CommandReader`](crate::generic::CommandReader) (or
/// `CommandCodec`) refused a line, or stopped.
///
/// Each revision names it with its own `ParseError` as `E`:
/// [`v2::ReadError`](crate::v2::ReadError) and
/// [`v1::ReadError`](crate::v1::ReadError).
///
/// Line numbers are 1-based and count every physical line, blank ones
/// included, as an editor would.
///
/// ```
/// use serve_command::v2::{CommandReader, ReadError};
/// let mut reader = CommandReader::new(&b"\n{\"command\":\"nap\"}\n"[..]);
/// let err = reader.next().unwrap().unwrap_err();
/// assert!(matches!(err, ReadError::Line { line: 2, .. }));
/// assert_eq!(err.to_string(), "line 2: unknown command: nap");
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum ReadError<E> {
    /// The line is not a command. The stream goes on with the next line.
    ///
    /// Displays as `line <line>: <error>`.
    Line {
        /// The line's number.
        line: u64,
        /// Why it is not a command.
        error: LineError<E>,
    },
    /// The line is longer than `max` bytes (its LF excluded; a CR before it
    /// counts). It was skipped without being buffered; the stream goes on
    /// with the next line.
    ///
    /// Displays as `line <line> is longer than <max> bytes`.
    TooLong {
        /// The line's number.
        line: u64,
        /// The limit it broke.
        max: usize,
    },
    /// Reading the underlying stream failed. A [`CommandReader`] ends after
    /// this item; a line it had begun is lost.
    ///
    /// Displays as `read failed: <the I/O error>`.
    ///
    /// [`CommandReader`]: crate::generic::CommandReader
    Io(io::Error),
}

impl<E> ReadError<E> {
    /// Whether the engine reports this as `command stream: ...`, the errors
    /// at which the reference engine stops reading: a line that is not JSON,
    /// a line over the limit, a failed read. False for a line that is JSON
    /// but not a command, after which the engine reads on.
    ///
    /// ```
    /// use serve_command::v2::CommandReader;
    /// let mut reader = CommandReader::new(&b"{\"command\":\"nap\"}\nnot json\n"[..]);
    /// assert!(!reader.next().unwrap().unwrap_err().is_stream_error());
    /// assert!(reader.next().unwrap().unwrap_err().is_stream_error());
    /// ```
    #[must_use]
    pub fn is_stream_error(&self) -> bool {
        match self {
            ReadError::Line { error, .. } => error.is_stream_error(),
            ReadError::TooLong { .. } | ReadError::Io(_) => true,
        }
    }
}

impl<E: fmt::Display> ReadError<E> {
    /// The engine's reply, as one line ending in `"\n"`, ready to be written
    /// to stdout: `{"event":"command_error","error":<message>}`.
    ///
    /// `<message>` is [`LineError::event_line`]'s: the parse error's wire
    /// string for a line that is JSON but not a command, `command stream:
    /// <syntax error>` for one that is not JSON. For the other variants it
    /// is `command stream: ` followed by the error's `Display`:
    /// `command stream: line 3 is longer than 65536 bytes`,
    /// `command stream: read failed: <the I/O error>`.
    ///
    /// ```
    /// use serve_command::v2::ReadError;
    /// let e = ReadError::TooLong { line: 3, max: 65536 };
    /// assert_eq!(
    ///     e.event_line(),
    ///     "{\"event\":\"command_error\",\"error\":\"command stream: line 3 is longer than 65536 bytes\"}\n",
    /// );
    /// ```
    #[must_use]
    pub fn event_line(&self) -> String {
        match self {
            // The line number stays out: the reference's message has none.
            ReadError::Line { error, .. } => error.event_line(),
            ReadError::TooLong { .. } | ReadError::Io(_) => {
                escape::event_line(&format!("command stream: {self}"))
            }
        }
    }
}

impl<E: fmt::Display> fmt::Display for ReadError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Line { line, error } => write!(f, "line {line}: {error}"),
            ReadError::TooLong { line, max } => write!(f, "line {line} is longer than {max} bytes"),
            ReadError::Io(e) => write!(f, "read failed: {e}"),
        }
    }
}

impl<E: error::Error> error::Error for ReadError<E> {
    // Each variant displays its cause, so the chain goes on from the cause's
    // own source.
    fn source(&self) -> Option<&(dyn error::Error + 'static)> {
        match self {
            ReadError::Line { error, .. } => error.source(),
            ReadError::TooLong { .. } => None,
            ReadError::Io(e) => e.source(),
        }
    }
}

/// A `command_error` message that names no revision's `ParseError`: a
/// `command stream: ...` message, another revision's string, or text that
/// is not the protocol's. It keeps the text, so a controller can still
/// show or log what the engine said.
///
/// `Display` reads `not one of the protocol's command error messages:
/// <the text as a Rust string literal>` (quoted, control characters
/// escaped).
///
/// ```
/// use serve_command::v2::ParseError;
/// let err = "command stream: line 3 is longer than 8 bytes".parse::<ParseError>().unwrap_err();
/// assert_eq!(err.as_str(), "command stream: line 3 is longer than 8 bytes");
/// assert_eq!(
///     err.to_string(),
///     "not one of the protocol's command error messages: \"command stream: line 3 is longer than 8 bytes\"",
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UnknownMessage(String);

impl UnknownMessage {
    #[cold]
    pub(crate) fn new(message: &str) -> Self {
        UnknownMessage(message.to_owned())
    }

    /// The message, verbatim.
    ///
    /// ```
    /// use serve_command::v1::ParseError;
    /// assert_eq!("nap".parse::<ParseError>().unwrap_err().as_str(), "nap");
    /// ```
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The message, verbatim and owned.
    ///
    /// ```
    /// use serve_command::v1::ParseError;
    /// assert_eq!("nap".parse::<ParseError>().unwrap_err().into_string(), "nap");
    /// ```
    #[must_use]
    pub fn into_string(self) -> String {
        self.0
    }
}

impl fmt::Display for UnknownMessage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "not one of the protocol's command error messages: {:?}",
            self.0
        )
    }
}

impl error::Error for UnknownMessage {}
