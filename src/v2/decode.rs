//! `Command::from_slice`: the shared line scanner, then the rules.

use crate::v2::rules::{self, Fields};
use crate::v2::Command;
use crate::v2::LineError;
use crate::wire::scan;

pub(crate) fn from_slice(line: &[u8]) -> Result<Command, LineError> {
    // Filled in place: the fields are never moved until `decide` takes them.
    let mut fields = Fields::new();
    if scan::scan(line, &mut fields)? {
        Ok(rules::decide(&mut fields)?)
    } else {
        Err(rules::not_an_object().into())
    }
}

impl Command {
    /// Decodes one raw line, with or without its trailing `"\n"`. Never
    /// builds a `serde_json::Value`; allocates only what the command owns
    /// (and a list of the parts while they are checked). Image data without
    /// escapes is decoded straight from the line.
    ///
    /// # Errors
    ///
    /// [`LineError::Syntax`] when the line is not JSON (what is wrong and
    /// at which byte), [`LineError::Parse`] with the wire's
    /// [`ParseError`](crate::v2::ParseError) when it is JSON but not a
    /// command (an image that is not one included).
    ///
    /// ```
    /// use serve_command::v2::{Command, ContentPart};
    /// let line = br#"{"command":"prompt","content":[{"type":"text","text":"see"},{"type":"image","media_type":"image/png","data":"iVBORw0KGgo="}]}"#;
    /// let Command::Prompt { content, .. } = Command::from_slice(line)? else { panic!() };
    /// assert!(matches!(content.parts(), [ContentPart::Text(_), ContentPart::Image(_)]));
    /// let err = Command::from_slice(br#"{"command":"job_stop","request_id":"r1","generation":"..","job_id":"j1"}"#).unwrap_err();
    /// assert_eq!(err.to_string(), "invalid background job command");
    /// # Ok::<(), serve_command::v2::LineError>(())
    /// ```
    #[must_use = "a command, or why the line is not one"]
    pub fn from_slice(line: &[u8]) -> Result<Command, LineError> {
        from_slice(line)
    }
}

impl std::str::FromStr for Command {
    type Err = LineError;

    /// Same as [`Command::from_slice`] on the string's bytes.
    ///
    /// # Errors
    ///
    /// As [`Command::from_slice`]: [`LineError::Syntax`] for a line that is
    /// not JSON, [`LineError::Parse`] for one that is not a command.
    ///
    /// ```
    /// use serve_command::v2::{Command, LineError, ParseError};
    /// assert_eq!(r#"{"command":"jobs_snapshot","request_id":"r1"}"#.parse(), Ok(Command::jobs_snapshot("r1")));
    /// assert_eq!(
    ///     r#"{"command":"nap"}"#.parse::<Command>(),
    ///     Err(LineError::Parse(ParseError::UnknownCommand("nap".into()))),
    /// );
    /// ```
    fn from_str(line: &str) -> Result<Command, LineError> {
        Command::from_slice(line.as_bytes())
    }
}
