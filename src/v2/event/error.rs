//! Why a line is not an event a client reads, and why an
//! [`EventReader`](crate::v2::EventReader) skipped a line or stopped: the
//! event direction's own errors. None of them is answered on the wire
//! (only an engine answers lines, with `command_error`); each is a reason
//! for a controller's log.

use crate::error::SyntaxError;
use std::{error, fmt, io};

/// Why a JSON line is not an event: where upstream's `parse` answers
/// `None` (a client skips the line), the reason, for a person reading a
/// log. Upstream writes none of these on the wire; the words are this
/// crate's.
///
/// ```
/// use serve_command::v2::{Event, EventError, EventLineError};
/// let err = Event::from_slice(br#"{"event":"agent_step","step":1.5}"#).unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "agent_step: \"step\" must be an integer from -2147483648 to 2147483647",
/// );
/// assert!(matches!(err, EventLineError::NotAnEvent(EventError::WrongType { .. })));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EventError {
    /// The JSON is not an object.
    NotAnObject,
    /// The object has no string `event`.
    NoEventName,
    /// `event` names no event upstream defines (an older engine's, or a
    /// newer one's). Holds the name.
    UnknownEvent(String),
    /// A field the event requires is absent.
    MissingField {
        /// The event's wire name.
        event: &'static str,
        /// The field.
        field: &'static str,
    },
    /// A field holds the wrong kind of value.
    WrongType {
        /// The event's wire name.
        event: &'static str,
        /// The field.
        field: &'static str,
        /// What it must be, e.g. `a string`.
        expected: &'static str,
    },
    /// A nested value (content, a job record, an outcome, usage) breaks
    /// one of its own rules.
    InvalidField {
        /// The event's wire name.
        event: &'static str,
        /// The field.
        field: &'static str,
        /// The rule, as upstream's decoder words it where it has words
        /// (`invalid background job identity or count`).
        reason: String,
    },
}

impl fmt::Display for EventError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EventError::NotAnObject => f.write_str("not an event: the JSON is not an object"),
            EventError::NoEventName => f.write_str("not an event: no string \"event\" field"),
            EventError::UnknownEvent(name) => write!(f, "unknown event: {name}"),
            EventError::MissingField { event, field } => {
                write!(f, "{event}: missing \"{field}\"")
            }
            EventError::WrongType {
                event,
                field,
                expected,
            } => write!(f, "{event}: \"{field}\" must be {expected}"),
            EventError::InvalidField {
                event,
                field,
                reason,
            } => write!(f, "{event}: \"{field}\": {reason}"),
        }
    }
}

impl error::Error for EventError {}

/// Why one line of an engine's stdout is not an event
/// ([`Event::from_slice`](crate::v2::Event::from_slice)).
///
/// Upstream's clients skip such a line: a controller logs it and reads
/// on. `Display` is for that log: `not JSON: <where>` or the
/// [`EventError`].
///
/// ```
/// use serve_command::v2::{Event, EventError, EventLineError};
/// let err = Event::from_slice(b"engine: starting").unwrap_err();
/// assert_eq!(err.to_string(), "not JSON: expected a JSON value at byte 0");
/// let err = Event::from_slice(br#"{"event":"nap"}"#).unwrap_err();
/// assert_eq!(err, EventLineError::NotAnEvent(EventError::UnknownEvent("nap".into())));
/// assert_eq!(err.to_string(), "unknown event: nap");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EventLineError {
    /// The line is not JSON (a banner, a log line, a line cut short).
    NotJson(SyntaxError),
    /// The line is JSON, but not an event upstream's `parse` reads.
    NotAnEvent(EventError),
}

impl fmt::Display for EventLineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EventLineError::NotJson(e) => write!(f, "not JSON: {e}"),
            EventLineError::NotAnEvent(e) => e.fmt(f),
        }
    }
}

impl error::Error for EventLineError {}

impl From<EventError> for EventLineError {
    fn from(e: EventError) -> Self {
        EventLineError::NotAnEvent(e)
    }
}

impl From<SyntaxError> for EventLineError {
    fn from(e: SyntaxError) -> Self {
        EventLineError::NotJson(e)
    }
}

/// Why an [`EventReader`](crate::v2::EventReader) (or `EventCodec`)
/// skipped a line of an engine's stdout, or stopped.
///
/// What a controller does with each: a line that is not an event
/// ([`NotJson`](EventReadError::NotJson),
/// [`NotAnEvent`](EventReadError::NotAnEvent),
/// [`TooLong`](EventReadError::TooLong)) is logged and skipped, as
/// upstream's own readers ignore a line they cannot read; the reader has
/// already moved on to the next line. Only [`Io`](EventReadError::Io)
/// ends the stream: the engine's stdout can no longer be read.
///
/// Line numbers are 1-based and count every physical line, blank ones
/// included.
///
/// ```
/// use serve_command::v2::{Event, EventReadError, EventReader};
/// let stdout = b"engine v1.2 starting\n{\"event\":\"agent_step\",\"step\":1}\n";
/// let mut events = EventReader::new(&stdout[..]);
/// let err = events.next().unwrap().unwrap_err();
/// assert!(matches!(err, EventReadError::NotJson { line: 1, .. }));
/// assert_eq!(err.to_string(), "line 1: not JSON: expected a JSON value at byte 0");
/// assert!(!err.is_io());
/// assert_eq!(events.next().unwrap()?, Event::agent_step(1));
/// # Ok::<(), EventReadError>(())
/// ```
///
/// A controller answers nothing: there is no `command_error` line to
/// write for an event line, and no "stream error" that would mean stop.
///
/// ```compile_fail,E0599
/// let e = serve_command::v2::EventReadError::TooLong { line: 1, max: 8 };
/// let _ = e.event_line();
/// ```
///
/// ```compile_fail,E0599
/// let e = serve_command::v2::EventReadError::TooLong { line: 1, max: 8 };
/// let _ = e.is_stream_error();
/// ```
///
/// ```compile_fail,E0599
/// let e = serve_command::v2::Event::from_slice(b"not json").unwrap_err();
/// let _ = e.event_line();
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum EventReadError {
    /// The line is not JSON. Reading goes on with the next line.
    ///
    /// Displays as `line <line>: not JSON: <where>`.
    NotJson {
        /// The line's number.
        line: u64,
        /// Where the JSON broke.
        error: SyntaxError,
    },
    /// The line is JSON, but not an event. Reading goes on with the next
    /// line.
    ///
    /// Displays as `line <line>: <error>`.
    NotAnEvent {
        /// The line's number.
        line: u64,
        /// Why it is not an event.
        error: EventError,
    },
    /// The line is longer than `max` bytes (its LF excluded). It was
    /// skipped without being buffered; reading goes on with the next line.
    ///
    /// Displays as `line <line> is longer than <max> bytes`.
    TooLong {
        /// The line's number.
        line: u64,
        /// The limit it broke.
        max: usize,
    },
    /// Reading the engine's stdout failed. The reader ends after this
    /// item; a line it had begun is lost.
    ///
    /// Displays as `read failed: <the I/O error>`.
    Io(io::Error),
}

impl EventReadError {
    /// The number of the line skipped; `None` for a failed read.
    ///
    /// ```
    /// use serve_command::v2::EventReadError;
    /// assert_eq!(EventReadError::TooLong { line: 7, max: 8 }.line(), Some(7));
    /// ```
    #[must_use]
    pub fn line(&self) -> Option<u64> {
        match self {
            EventReadError::NotJson { line, .. }
            | EventReadError::NotAnEvent { line, .. }
            | EventReadError::TooLong { line, .. } => Some(*line),
            EventReadError::Io(_) => None,
        }
    }

    /// Whether reading failed, so the stream has ended: the only error
    /// after which an [`EventReader`](crate::v2::EventReader) gives no
    /// more items. Every other error is one skipped line.
    ///
    /// ```
    /// use serve_command::v2::EventReadError;
    /// assert!(!EventReadError::TooLong { line: 7, max: 8 }.is_io());
    /// assert!(EventReadError::Io(std::io::ErrorKind::BrokenPipe.into()).is_io());
    /// ```
    #[must_use]
    pub fn is_io(&self) -> bool {
        matches!(self, EventReadError::Io(_))
    }
}

impl fmt::Display for EventReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EventReadError::NotJson { line, error } => write!(f, "line {line}: not JSON: {error}"),
            EventReadError::NotAnEvent { line, error } => write!(f, "line {line}: {error}"),
            EventReadError::TooLong { line, max } => {
                write!(f, "line {line} is longer than {max} bytes")
            }
            EventReadError::Io(e) => write!(f, "read failed: {e}"),
        }
    }
}

impl error::Error for EventReadError {
    // Each variant displays its cause, so the chain goes on from the
    // cause's own source.
    fn source(&self) -> Option<&(dyn error::Error + 'static)> {
        match self {
            EventReadError::Io(e) => e.source(),
            _ => None,
        }
    }
}

impl crate::wire::message::sealed::FromRead<EventLineError> for EventReadError {
    #[cold]
    fn line(line: u64, error: EventLineError) -> Self {
        match error {
            EventLineError::NotJson(error) => EventReadError::NotJson { line, error },
            EventLineError::NotAnEvent(error) => EventReadError::NotAnEvent { line, error },
        }
    }

    #[cold]
    fn too_long(line: u64, max: usize) -> Self {
        EventReadError::TooLong { line, max }
    }

    #[cold]
    fn io(error: io::Error) -> Self {
        EventReadError::Io(error)
    }
}
