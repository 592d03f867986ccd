//! `Command::from_slice`: the shared line scanner, then the rules.

use crate::v1::rules;
use crate::v1::{Command, LineError};

crate::revision::decode_methods! {
    revision: "v1",
    rules: rules,
    // Generic in its error: the command is built straight into the
    // line's result (see its note).
    decide: rules::decide,
    note: {
        /// The line must be JSON as the reference's parser sees it (else
        /// [`LineError::Syntax`]) and a command (else [`LineError::Parse`]).
        /// Never builds a `serde_json::Value`; allocates only the strings the
        /// command owns.
    },
    from_slice: {
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
    },
    from_str: {
        /// ```
        /// use serve_command::v1::{Command, LineError, ParseError};
        /// assert_eq!(r#"{"command":"cancel"}"#.parse(), Ok(Command::Cancel));
        /// assert_eq!(
        ///     r#"{"command":"nap"}"#.parse::<Command>(),
        ///     Err(LineError::Parse(ParseError::UnknownCommand("nap".into()))),
        /// );
        /// ```
    },
}
