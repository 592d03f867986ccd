//! Why a JSON line is not an event a client reads.

use std::fmt;

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
/// assert!(matches!(err, EventLineError::Parse(EventError::WrongType { .. })));
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

impl std::error::Error for EventError {}

impl From<EventError> for crate::error::LineError<EventError> {
    fn from(e: EventError) -> Self {
        crate::error::LineError::Parse(e)
    }
}
