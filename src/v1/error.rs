//! v1's wire strings: why a JSON line is not a command.

use crate::error::UnknownMessage;
use std::fmt;
use std::str::FromStr;

// The messages both revisions write, here once: `v2::ParseError`'s
// `Display` writes its shared variants with these too.
pub(crate) const EXPECTED_TEXT: &str = "expected a string \"text\" field";
pub(crate) const EXPECTED_SUBMISSION_ID: &str = "expected a string \"submission_id\" field";
pub(crate) const EXPECTED_KIND: &str = "expected a string \"kind\" field";
pub(crate) const UNKNOWN_STEER_KIND: &str = "unknown steer kind: ";
pub(crate) const EXPECTED_GOAL: &str =
    "expected {\"action\": \"set\", \"text\": ...} or {\"action\": \"clear\"}";
pub(crate) const EXPECTED_ID: &str = "expected a string \"id\" field";
pub(crate) const EXPECTED_ALLOW: &str = "expected a boolean \"allow\" field";
pub(crate) const UNKNOWN_COMMAND: &str = "unknown command: ";
pub(crate) const EXPECTED_COMMAND: &str = "expected a {\"command\": ...} object";

/// A JSON line that is not a command this protocol can read.
///
/// `Display` is exactly the string the reference's `Command::parse` returns.
/// Those strings are wire contract, not diagnostics: an engine sends them
/// back in a `command_error` event and controllers read them.
///
/// ```
/// use serve_command::v1::{Command, ParseError};
/// let v = serde_json::json!({"command": "steer", "text": "x", "kind": "notice"});
/// let err = Command::from_json(&v).unwrap_err();
/// assert_eq!(err, ParseError::UnknownSteerKind("notice".into()));
/// assert_eq!(err.to_string(), "unknown steer kind: notice");
/// assert_eq!("unknown steer kind: notice".parse(), Ok(err));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ParseError {
    /// `prompt` or `steer` without a string `text`.
    ExpectedText,
    /// `prompt` whose `submission_id` is present but not a string (`null`
    /// included: absent means untagged, `null` means nothing).
    ExpectedSubmissionId,
    /// `steer` whose `kind` is present but not a string (`null` included).
    ExpectedKind,
    /// `steer` whose `kind` is a string other than `"prompt"` or `"command"`
    /// (case-sensitive). Holds the kind verbatim.
    UnknownSteerKind(String),
    /// `goal` that is neither `{"action":"set","text":<string>}` nor
    /// `{"action":"clear"}`.
    ExpectedGoal,
    /// `approval` without a string `id`.
    ExpectedId,
    /// `approval` with a string `id` but no boolean `allow`.
    ExpectedAllow,
    /// A string `command` that names no command. Holds the name verbatim,
    /// even when it is empty or contains a newline.
    UnknownCommand(String),
    /// The JSON is not an object, or has no string `command` field.
    ExpectedCommand,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::ExpectedText => f.write_str(EXPECTED_TEXT),
            ParseError::ExpectedSubmissionId => f.write_str(EXPECTED_SUBMISSION_ID),
            ParseError::ExpectedKind => f.write_str(EXPECTED_KIND),
            ParseError::UnknownSteerKind(kind) => write!(f, "{UNKNOWN_STEER_KIND}{kind}"),
            ParseError::ExpectedGoal => f.write_str(EXPECTED_GOAL),
            ParseError::ExpectedId => f.write_str(EXPECTED_ID),
            ParseError::ExpectedAllow => f.write_str(EXPECTED_ALLOW),
            ParseError::UnknownCommand(name) => write!(f, "{UNKNOWN_COMMAND}{name}"),
            ParseError::ExpectedCommand => f.write_str(EXPECTED_COMMAND),
        }
    }
}

impl std::error::Error for ParseError {}

impl FromStr for ParseError {
    type Err = UnknownMessage;

    /// The error a wire string names, for a controller reading
    /// `command_error` events: each of the nine messages (with any payload
    /// after `unknown command: ` or `unknown steer kind: `, verbatim) gives
    /// its variant back; anything else is an [`UnknownMessage`].
    ///
    /// # Errors
    ///
    /// [`UnknownMessage`], holding `message`, for a message that is none of
    /// this revision's.
    ///
    /// ```
    /// use serve_command::v1::ParseError;
    /// assert_eq!("unknown command: nap".parse(), Ok(ParseError::UnknownCommand("nap".into())));
    /// assert_eq!("expected a string \"id\" field".parse(), Ok(ParseError::ExpectedId));
    /// assert!("command stream: unterminated string at byte 3".parse::<ParseError>().is_err());
    /// ```
    fn from_str(message: &str) -> Result<ParseError, UnknownMessage> {
        if let Some(name) = message.strip_prefix(UNKNOWN_COMMAND) {
            return Ok(ParseError::UnknownCommand(name.to_owned()));
        }
        if let Some(kind) = message.strip_prefix(UNKNOWN_STEER_KIND) {
            return Ok(ParseError::UnknownSteerKind(kind.to_owned()));
        }
        [
            ParseError::ExpectedText,
            ParseError::ExpectedSubmissionId,
            ParseError::ExpectedKind,
            ParseError::ExpectedGoal,
            ParseError::ExpectedId,
            ParseError::ExpectedAllow,
            ParseError::ExpectedCommand,
        ]
        .into_iter()
        .find(|e| e.to_string() == message)
        .ok_or_else(|| UnknownMessage::new(message))
    }
}
