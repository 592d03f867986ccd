//! `command_error`'s message, read back: why the engine could not use a
//! line. Written by the same code that writes the engine's side
//! ([`LineError::event_line`](crate::generic::LineError::event_line),
//! `ReadError::event_line`, `Command::serve_refusal_event_line`), and a
//! test holds every message the crate writes to the cause it came from.

use crate::refusal::Refusal;
use crate::v2::ParseError;
use std::fmt;

/// Why an engine answered a line with `command_error`, from the event's
/// `error` ([`Event::command_error_cause`](crate::v2::Event::command_error_cause)).
///
/// `Display` is the message again, verbatim; `FromStr` reads any message
/// (what it does not know is [`CommandErrorCause::Unknown`]).
///
/// ```
/// use serve_command::v2::{CommandErrorCause, Event, ParseError, Refusal};
/// let event: Event = r#"{"event":"command_error","error":"unknown command: nap"}"#.parse()?;
/// assert_eq!(
///     event.command_error_cause(),
///     Some(CommandErrorCause::NotACommand(ParseError::UnknownCommand("nap".into()))),
/// );
/// let cause: CommandErrorCause = "goal text must not be blank".parse().unwrap();
/// assert_eq!(cause, CommandErrorCause::Refused(Refusal::BlankGoal));
/// let cause: CommandErrorCause = "command stream: unterminated string at byte 30".parse().unwrap();
/// assert!(cause.engine_stopped());
/// # Ok::<(), serve_command::v2::EventLineError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CommandErrorCause {
    /// The line was JSON but not a command: the revision's error, whose
    /// `Display` is the message. The engine reads on.
    NotACommand(ParseError),
    /// The line was a command the engine declines (`openseek serve`'s own
    /// rules). The engine reads on.
    Refused(Refusal),
    /// `command stream: <detail>`: the line was not JSON (or was over the
    /// engine's limit, or its read failed), and the engine reads no
    /// further command. Holds the detail.
    StreamEnded(String),
    /// A message this crate does not know (a newer engine's), verbatim.
    Unknown(String),
}

/// The prefix of the messages after which the engine stops reading.
pub(crate) const STREAM: &str = "command stream: ";

impl CommandErrorCause {
    /// Whether the engine has stopped reading commands: after this, a
    /// controller's lines go nowhere.
    #[must_use]
    pub fn engine_stopped(&self) -> bool {
        matches!(self, CommandErrorCause::StreamEnded(_))
    }
}

impl fmt::Display for CommandErrorCause {
    /// The message, as the engine wrote it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CommandErrorCause::NotACommand(e) => fmt::Display::fmt(e, f),
            CommandErrorCause::Refused(r) => f.write_str(r.as_str()),
            CommandErrorCause::StreamEnded(detail) => write!(f, "{STREAM}{detail}"),
            CommandErrorCause::Unknown(message) => f.write_str(message),
        }
    }
}

impl std::str::FromStr for CommandErrorCause {
    type Err = std::convert::Infallible;

    /// Reads any message: every one the crate writes gives its cause back,
    /// anything else is [`CommandErrorCause::Unknown`].
    fn from_str(message: &str) -> Result<CommandErrorCause, Self::Err> {
        Ok(if let Some(detail) = message.strip_prefix(STREAM) {
            CommandErrorCause::StreamEnded(detail.to_owned())
        } else if let Some(refusal) = Refusal::of(message) {
            CommandErrorCause::Refused(refusal)
        } else {
            match message.parse::<ParseError>() {
                Ok(e) => CommandErrorCause::NotACommand(e),
                Err(unknown) => CommandErrorCause::Unknown(unknown.into_string()),
            }
        })
    }
}

impl crate::v2::Event {
    /// Why the engine refused a line, for a `command_error` event; `None`
    /// for any other event.
    #[must_use]
    pub fn command_error_cause(&self) -> Option<CommandErrorCause> {
        match self {
            crate::v2::Event::CommandError { error } => {
                let Ok(cause) = error.parse();
                Some(cause)
            }
            _ => None,
        }
    }
}

impl From<CommandErrorCause> for crate::v2::Event {
    /// The `command_error` event that carries `cause`.
    fn from(cause: CommandErrorCause) -> Self {
        crate::v2::Event::command_error(cause.to_string())
    }
}
