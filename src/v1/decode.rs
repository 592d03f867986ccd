//! `Command::from_slice`: the shared line scanner, then the rules.

use crate::v1::rules::{self, Fields};
use crate::v1::Command;
use crate::v1::LineError;
use crate::wire::scan;

pub(crate) fn from_slice(line: &[u8]) -> Result<Command, LineError> {
    // Filled in place: the fields are never moved until `decide` takes them.
    let mut fields = Fields::new();
    if scan::scan(line, &mut fields)? {
        rules::decide(&mut fields)
    } else {
        Err(rules::not_an_object().into())
    }
}

impl Command {
    /// Decodes one raw line, with or without its trailing `"\n"`.
    ///
    /// The line must be JSON as the reference's parser sees it (else
    /// [`LineError::Syntax`]) and a command (else [`LineError::Parse`]).
    /// Never builds a `serde_json::Value`; allocates only the strings the
    /// command owns.
    ///
    /// # Errors
    ///
    /// [`LineError::Syntax`] when the line is not JSON (what is wrong and
    /// at which byte), [`LineError::Parse`] with the wire's
    /// [`ParseError`](crate::v1::ParseError) when it is JSON but not a
    /// command.
    ///
    /// ```
    /// use serve_command::v1::{Command, LineError, ParseError};
    /// let cmd = Command::from_slice(b"{\"command\":\"goal\",\"action\":\"clear\"}\n")?;
    /// assert_eq!(cmd, Command::GoalClear);
    /// assert_eq!(
    ///     Command::from_slice(br#"{"command":"approval","id":"a1"}"#),
    ///     Err(LineError::Parse(ParseError::ExpectedAllow)),
    /// );
    /// assert_eq!(Command::from_slice(b"{\"command\"").unwrap_err().to_string(), "unexpected end of line at byte 10");
    /// # Ok::<(), LineError>(())
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
    /// use serve_command::v1::{Command, LineError, ParseError};
    /// assert_eq!(r#"{"command":"cancel"}"#.parse(), Ok(Command::Cancel));
    /// assert_eq!(
    ///     r#"{"command":"nap"}"#.parse::<Command>(),
    ///     Err(LineError::Parse(ParseError::UnknownCommand("nap".into()))),
    /// );
    /// ```
    fn from_str(line: &str) -> Result<Command, LineError> {
        Command::from_slice(line.as_bytes())
    }
}
