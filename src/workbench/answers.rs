//! What a line check's input is owed, and what the engine answered.
//!
//! What is owed is read by the crate's own reader, at the engine's limit;
//! what the engine's stdout lines answer is read as a controller reads it.

use super::shown::{quoted, shown};
use crate::v2::{self, Command, CommandReader, Event, EventReader};

/// How every error that ends an engine's reading begins; what follows is
/// the engine's own JSON parser's account, which no engine in another
/// language can word as the reference does.
pub(super) const STREAM: &str = "command stream: ";

/// What the engine owes, or gave, that the checks look at.
#[derive(Clone, PartialEq, Eq, Debug)]
pub(super) enum Answer {
    /// A `command_error` with this message.
    Error(String),
    /// Owed only: a `command_error` that ends reading, any message
    /// beginning [`STREAM`]; this one is the crate's.
    Stream(String),
    /// A `jobs_snapshot` with this `request_id`.
    Snapshot(String),
}

impl Answer {
    pub(super) fn shown(&self) -> String {
        match self {
            Answer::Error(m) => format!("command_error {}", quoted(m)),
            Answer::Stream(m) => format!("command_error {}", quoted(m)),
            Answer::Snapshot(id) => format!("jobs_snapshot {}", quoted(id)),
        }
    }

    /// An owed `command_error`'s message as a failure states it.
    pub(super) fn owed_message(&self) -> String {
        match self {
            Answer::Stream(m) => format!(
                "one that begins {} (this crate's: {})",
                quoted(STREAM),
                quoted(m)
            ),
            Answer::Error(m) | Answer::Snapshot(m) => quoted(m),
        }
    }

    pub(super) fn is_error(&self) -> bool {
        !matches!(self, Answer::Snapshot(_))
    }

    /// Whether `got`, an answer the engine wrote, is this owed one.
    pub(super) fn accepts(&self, got: &Answer) -> bool {
        match (self, got) {
            (Answer::Stream(_), Answer::Error(m)) => m.starts_with(STREAM),
            _ => self == got,
        }
    }
}

/// What a scenario's input is owed, as the crate's reader reads it at the
/// engine's limit.
pub(super) struct Owed {
    /// In order, up to and including the line that stops reading.
    pub(super) answers: Vec<Answer>,
    pub(super) stop: Option<Stop>,
}

/// The line at which reading stops, and what reading on would show.
pub(super) struct Stop {
    /// What it is: `a line that is not JSON (line 2: {x)`, `a line over
    /// its declared limit of 5 bytes (line 1, 6 bytes)`.
    pub(super) what: String,
    /// For a line over the limit: what it would be answered, read as a
    /// command.
    pub(super) read: Option<Answer>,
    /// What the lines after it would be answered, with their numbers.
    pub(super) after: Vec<(u64, Answer)>,
}

/// The answer the crate owes `command`, if any.
fn answer_to(command: &Command) -> Option<Answer> {
    match command {
        Command::JobsSnapshot { request_id, .. } => Some(Answer::Snapshot(request_id.clone())),
        command => command
            .serve_refusal_event_line()
            .map(|line| Answer::Error(message_of(&line))),
    }
}

/// What the crate's reader, at `limit`, says `input` is owed, in order: up
/// to and including the line that stops reading; and what reading on would
/// show.
pub(super) fn owed(input: &[u8], limit: usize) -> Owed {
    let mut answers = Vec::new();
    let mut reader = CommandReader::with_max_line_len(input, limit);
    while let Some(item) = reader.next() {
        match item {
            Ok(command) => answers.extend(answer_to(&command)),
            Err(e) if e.is_stream_error() => {
                answers.push(Answer::Stream(message_of(&e.event_line())));
                let stop = stopped_at(input, reader.line_number(), limit, &e);
                return Owed {
                    answers,
                    stop: Some(stop),
                };
            }
            Err(e) => answers.push(Answer::Error(message_of(&e.event_line()))),
        }
    }
    Owed {
        answers,
        stop: None,
    }
}

/// The stop at `line` of `input`, why `error`, and what each line after it
/// would be answered, up to the next line that stops reading.
fn stopped_at(input: &[u8], line: u64, limit: usize, error: &v2::ReadError) -> Stop {
    let mut start = 0;
    for _ in 1..line {
        start += input[start..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(input.len() - start, |i| i + 1);
    }
    let end = input[start..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(input.len(), |i| start + i);
    let stopped = &input[start..end];
    let (what, read) = match error {
        v2::ReadError::TooLong { max, .. } => (
            format!(
                "a line over its declared limit of {max} bytes (line {line}, {} bytes)",
                stopped.len()
            ),
            CommandReader::with_max_line_len(stopped, usize::MAX)
                .next()
                .and_then(Result::ok)
                .and_then(|command| answer_to(&command)),
        ),
        _ => (
            format!("a line that is not JSON (line {line}: {})", shown(stopped)),
            None,
        ),
    };
    let mut after = Vec::new();
    let mut reader = CommandReader::with_max_line_len(input.get(end + 1..).unwrap_or(&[]), limit);
    while let Some(item) = reader.next() {
        let n = line + reader.line_number();
        match item {
            Ok(command) => after.extend(answer_to(&command).map(|a| (n, a))),
            Err(e) if e.is_stream_error() => {
                // Its detail is the engine's own, as any stream error's.
                after.push((n, Answer::Stream(message_of(&e.event_line()))));
                break;
            }
            Err(e) => after.push((n, Answer::Error(message_of(&e.event_line())))),
        }
    }
    Stop { what, read, after }
}

/// The message of a `command_error` event line the crate wrote.
fn message_of(line: &str) -> String {
    Event::from_slice(line.trim_end().as_bytes())
        .ok()
        .and_then(|e| e.command_error_cause())
        .map(|cause| cause.to_string())
        .expect("the crate writes command_error events")
}

/// An engine line as a controller reads it: `Ok(None)` for a blank line or
/// an event the checks do not look at, `Err` for a line that is not an
/// event.
pub(super) fn read_event(line: &[u8]) -> Result<Option<Answer>, String> {
    match EventReader::with_max_line_len(line, usize::MAX).next() {
        None => Ok(None),
        // Its line number is the reader's, always 1 here: left out.
        Some(Err(v2::EventReadError::NotJson { error, .. })) => Err(error.to_string()),
        Some(Err(v2::EventReadError::NotAnEvent { error, .. })) => Err(error.to_string()),
        Some(Err(e)) => Err(e.to_string()),
        Some(Ok(event)) => Ok(match (event.command_error_cause(), event) {
            (Some(cause), _) => Some(Answer::Error(cause.to_string())),
            (None, Event::JobsSnapshot { request_id, .. }) => Some(Answer::Snapshot(request_id)),
            _ => None,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::{owed, Answer};

    /// What a line that stops reading is owed, and what reading on would
    /// show: the lines after it, each with its number and answer, up to
    /// the next stop; a line over the limit, what it would get as read.
    #[test]
    fn a_stop_names_its_line_and_what_reading_on_would_show() {
        use Answer::{Error as E, Snapshot as S, Stream as C};
        let owed = owed(
            b"{\"command\":\"jobs_snapshot\",\"request_id\":\"a\"}\n\n{x\n\n{\"command\":\"jobs_snapshot\",\"request_id\":\"b\"}\n{\"command\":\"nap\"}\n]\n{\"command\":\"jobs_snapshot\",\"request_id\":\"c\"}\n",
            1000,
        );
        assert_eq!(
            owed.answers,
            [
                S("a".into()),
                C("command stream: expected a string key at byte 1".into())
            ]
        );
        let stop = owed.stop.unwrap();
        assert_eq!(stop.what, "a line that is not JSON (line 3: {x)");
        assert_eq!(stop.read, None);
        assert_eq!(
            stop.after,
            [
                (5, S("b".into())),
                (6, E("unknown command: nap".into())),
                (
                    7,
                    C("command stream: expected a JSON value at byte 0".into())
                ),
            ]
        );

        let line = b"{\"command\":\"jobs_snapshot\",\"request_id\":\"over\"}";
        let mut input = line.to_vec();
        input.extend_from_slice(b"\n{\"command\":\"jobs_snapshot\",\"request_id\":\"n\"}");
        let owed = super::owed(&input, line.len() - 1);
        assert_eq!(
            owed.answers,
            [C(format!(
                "command stream: line 1 is longer than {} bytes",
                line.len() - 1
            ))]
        );
        let stop = owed.stop.unwrap();
        assert_eq!(
            stop.what,
            format!(
                "a line over its declared limit of {} bytes (line 1, {} bytes)",
                line.len() - 1,
                line.len()
            )
        );
        assert_eq!(stop.read, Some(S("over".into())));
        assert_eq!(stop.after, [(2, S("n".into()))]);
        assert!(super::owed(&input, line.len()).stop.is_none());
    }
}
