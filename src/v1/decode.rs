//! `Command::from_slice`: the shared line scanner, then the rules.

use crate::v1::rules::{self, Fields};
use crate::v1::Command;
use crate::v1::LineError;
use crate::wire::scan;

pub(crate) fn from_slice(line: &[u8]) -> Result<Command, LineError> {
    // Filled in place: the fields are never moved until `decide` takes them.
    let mut fields = Fields::new();
    if scan::scan(line, &mut fields)? {
        Ok(rules::decide(fields)?)
    } else {
        Err(rules::not_an_object().into())
    }
}

impl Command {
    /// Decodes one raw line, with or without its trailing `"\n"`.
    ///
    /// The line must be JSON as the reference's parser sees it (else
    /// [`LineError::Syntax`]) and a command (else [`LineError::Command`]).
    /// Never builds a `serde_json::Value`; allocates only the strings the
    /// command owns.
    ///
    /// ```
    /// use serve_command::v1::Command;
    /// let cmd = Command::from_slice(b"{\"command\":\"goal\",\"action\":\"clear\"}\n")?;
    /// assert_eq!(cmd, Command::GoalClear);
    /// # Ok::<(), serve_command::v1::LineError>(())
    /// ```
    #[must_use = "a command, or why the line is not one"]
    pub fn from_slice(line: &[u8]) -> Result<Command, LineError> {
        from_slice(line)
    }
}

impl std::str::FromStr for Command {
    type Err = LineError;

    /// Same as [`Command::from_slice`] on the string's bytes.
    fn from_str(line: &str) -> Result<Command, LineError> {
        Command::from_slice(line.as_bytes())
    }
}
