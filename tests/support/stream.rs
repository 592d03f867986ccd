//! Fixtures shared by the stream tests (`tests/read.rs`, `tests/codec.rs`):
//! the framing rules are one implementation, so both readers are held to the
//! same session and the same expected items.

use serve_command::v1::{Command, LineError, ParseError, ReadError, SteerKind};
use std::io;

/// An item, in a form tests can compare exactly (`io::Error` has no `==`).
#[derive(Debug, Clone, PartialEq)]
pub enum Got {
    Cmd(Command),
    /// `ReadError::Line` with a `ParseError`.
    Refused(u64, ParseError),
    /// `ReadError::Line` with a `SyntaxError`, as displayed.
    NotJson(u64, String),
    TooLong(u64, usize),
    Io(io::ErrorKind, String),
}

pub fn got(item: Result<Command, ReadError>) -> Got {
    match item {
        Ok(cmd) => Got::Cmd(cmd),
        Err(ReadError::Line {
            line,
            error: LineError::Parse(e),
        }) => Got::Refused(line, e),
        Err(ReadError::Line {
            line,
            error: LineError::Syntax(e),
        }) => Got::NotJson(line, e.to_string()),
        Err(ReadError::TooLong { line, max }) => Got::TooLong(line, max),
        Err(ReadError::Io(e)) => Got::Io(e.kind(), e.to_string()),
        Err(other) => panic!("unexpected item {other:?}"),
    }
}

/// A session as a controller might write it, with every kind of line.
pub const SESSION: &[u8] = b"{\"command\":\"prompt\",\"text\":\"fix the build \xc3\xa9\",\"submission_id\":\"s1\"}\n\
\r\n\
  \t \n\
{\"command\":\"steer\",\"kind\":\"command\",\"text\":\"/compact\"}\r\n\
not json\n\
{\"command\":\"dance\"}\n\
xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n\
{\"command\":\"prompt\",\"text\":\"\xff\"}\n\
\n\
{\"command\":\"goal\",\"action\":\"set\",\"text\":\"ship it\",\"auto\":true}\n\
{\"command\":\"cancel\"}";

pub fn session_items() -> Vec<(u64, Got)> {
    use Got::*;
    vec![
        (
            1,
            Cmd(Command::Prompt {
                text: "fix the build é".into(),
                submission_id: Some("s1".into()),
            }),
        ),
        (
            4,
            Cmd(Command::Steer {
                kind: SteerKind::Command,
                text: "/compact".into(),
            }),
        ),
        (5, NotJson(5, "expected a JSON value at byte 0".into())),
        (6, Refused(6, ParseError::UnknownCommand("dance".into()))),
        (7, TooLong(7, 80)),
        (8, NotJson(8, "invalid UTF-8 at byte 28".into())),
        (
            10,
            Cmd(Command::GoalSet {
                text: "ship it".into(),
                auto: true,
            }),
        ),
        (11, Cmd(Command::Cancel)),
    ]
}
