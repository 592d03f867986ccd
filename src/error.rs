//! The errors a line can earn: the reference's wire strings, and the places
//! where a line is not JSON at all.

use std::fmt;

/// A JSON line that is not a command this protocol can read.
///
/// `Display` is exactly the string the reference's `Command::parse` returns.
/// Those strings are wire contract, not diagnostics: an engine sends them
/// back in a `command_error` event and controllers read them.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ParseError {
    /// `prompt` or `steer` without a string `text`.
    #[error("expected a string \"text\" field")]
    ExpectedText,
    /// `prompt` whose `submission_id` is present but not a string (`null`
    /// included: absent means untagged, `null` means nothing).
    #[error("expected a string \"submission_id\" field")]
    ExpectedSubmissionId,
    /// `steer` whose `kind` is present but not a string (`null` included).
    #[error("expected a string \"kind\" field")]
    ExpectedKind,
    /// `steer` whose `kind` is a string other than `"prompt"` or `"command"`
    /// (case-sensitive). Holds the kind verbatim.
    #[error("unknown steer kind: {0}")]
    UnknownSteerKind(String),
    /// `goal` that is neither `{"action":"set","text":<string>}` nor
    /// `{"action":"clear"}`.
    #[error("expected {{\"action\": \"set\", \"text\": ...}} or {{\"action\": \"clear\"}}")]
    ExpectedGoal,
    /// `approval` without a string `id`.
    #[error("expected a string \"id\" field")]
    ExpectedId,
    /// `approval` with a string `id` but no boolean `allow`.
    #[error("expected a boolean \"allow\" field")]
    ExpectedAllow,
    /// A string `command` that names no command. Holds the name verbatim,
    /// even when it is empty or contains a newline.
    #[error("unknown command: {0}")]
    UnknownCommand(String),
    /// The JSON is not an object, or has no string `command` field.
    #[error("expected a {{\"command\": ...}} object")]
    ExpectedCommand,
}

/// Why a line is not JSON (as the reference's JSON parser sees it), and where.
///
/// `Display` reads `<what> at byte <offset>`, with `offset` counted from the
/// start of the line, zero-based.
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
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// What is wrong, without the position: `"expected ',' or '}'"`, say.
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

impl std::error::Error for SyntaxError {}

/// Why one raw line did not decode into a [`Command`](crate::Command).
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq, Hash)]
pub enum LineError {
    /// The line is not JSON. The reference engine answers this with
    /// `command stream: <detail>` and stops reading.
    #[error("{0}")]
    Syntax(#[from] SyntaxError),
    /// The line is JSON, but not a command this protocol can read. Displays
    /// the wire string unchanged.
    #[error("{0}")]
    Command(#[from] ParseError),
}

impl LineError {
    /// The engine's reply to this line, as one line ending in `"\n"`:
    /// `{"event":"command_error","error":<message>}`, where `<message>` is the
    /// [`ParseError`] string, or `command stream: <detail>` for a line that is
    /// not JSON. Ready to be written to the engine's stdout as it is.
    pub fn event_line(&self) -> String {
        match self {
            LineError::Syntax(e) => crate::encode::event_line(&format!("command stream: {e}")),
            LineError::Command(e) => crate::encode::event_line(&e.to_string()),
        }
    }
}
