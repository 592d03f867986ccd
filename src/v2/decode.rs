//! `Command::from_slice`: the shared line scanner, then the rules.

use crate::v2::rules::{self, Fields};
use crate::v2::{Command, ParseError};
use crate::wire::scan;
use crate::LineError;

pub(crate) fn from_slice(line: &[u8]) -> Result<Command, LineError<ParseError>> {
    // Filled in place: the fields are never moved until `decide` takes them.
    let mut fields = Fields::new();
    if scan::scan(line, &mut fields)? {
        Ok(rules::decide(&mut fields)?)
    } else {
        Err(rules::not_an_object().into())
    }
}
