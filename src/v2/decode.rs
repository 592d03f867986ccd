//! `Command::from_slice`: the shared line scanner, then the rules.

use crate::v2::rules;
use crate::v2::{Command, LineError};

crate::revision::decode_methods! {
    revision: "v2",
    rules: rules,
    decide: |fields| Ok(rules::decide(fields)?),
    note: {
        /// Never builds a `serde_json::Value`; allocates only what the
        /// command owns (and a list of the parts while they are checked).
        /// Image data without escapes is decoded straight from the line; an
        /// image that is not one is a [`LineError::Parse`].
    },
    from_slice: {
        /// ```
        /// use serve_command::v2::{Command, ContentPart};
        /// let line = br#"{"command":"prompt","content":[{"type":"text","text":"see"},{"type":"image","media_type":"image/png","data":"iVBORw0KGgo="}]}"#;
        /// let Command::Prompt { content, .. } = Command::from_slice(line)? else { panic!() };
        /// assert!(matches!(content.parts(), [ContentPart::Text(_), ContentPart::Image(_)]));
        /// let err = Command::from_slice(br#"{"command":"job_stop","request_id":"r1","generation":"..","job_id":"j1"}"#).unwrap_err();
        /// assert_eq!(err.to_string(), "invalid background job command");
        /// # Ok::<(), serve_command::v2::LineError>(())
        /// ```
    },
    from_str: {
        /// ```
        /// use serve_command::v2::{Command, LineError, ParseError};
        /// assert_eq!(r#"{"command":"jobs_snapshot","request_id":"r1"}"#.parse(), Ok(Command::jobs_snapshot("r1")));
        /// assert_eq!(
        ///     r#"{"command":"nap"}"#.parse::<Command>(),
        ///     Err(LineError::Parse(ParseError::UnknownCommand("nap".into()))),
        /// );
        /// ```
    },
}
