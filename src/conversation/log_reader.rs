//! The log format of a session, read back: each command and event record
//! of a `tap --log` or a [`Recorder`](super::Recorder)'s recording,
//! checked, one at a time. The one reader, shared by `serve-command trace`
//! and the workbench's replay; public for them, not the crate's API.

use super::log::Direction;
use crate::v2::DEFAULT_MAX_LINE_LEN;
use std::io;

/// The longest record [`LogReader`] reads: what the tap writes for a line
/// at the default limit with every byte escaped (`\u0000`, six bytes), and
/// room for the record's other keys. A longer record is an error, never
/// held whole.
#[doc(hidden)]
pub const MAX_RECORD: u64 = 6 * DEFAULT_MAX_LINE_LEN as u64 + 64 * 1024;

/// A line of the wire, as a record holds it.
#[doc(hidden)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Wire {
    /// The line's bytes, without its LF (`line`, or `line_base64`).
    Bytes(Vec<u8>),
    /// Over the tap's limit: not held (`"line":null`).
    TooLong,
}

/// A command or event record of a log, as [`LogReader`] read it.
#[doc(hidden)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// The record's line in the log, from 1.
    pub at: u64,
    /// [`Direction::Command`] or [`Direction::Event`].
    pub direction: Direction,
    /// Its place among its direction's records, from 1.
    pub n: u64,
    /// The line it holds.
    pub line: Wire,
    /// Its time in microseconds since the recording began: `t_us`, or
    /// else `t_ms` times 1000; `None` when neither is a whole number
    /// (times are not checked: a log without them reads all the same).
    pub t_us: Option<u64>,
}

/// Why [`LogReader`] stopped.
#[doc(hidden)]
#[derive(Debug)]
pub enum LogError {
    /// Reading the log failed.
    Read(io::Error),
    /// A bad record: its line in the log, and why.
    Record(u64, String),
}

/// Reads a log of the wire (`tap --log`, a [`Recorder`]'s recording) a
/// record at a time: its command and event records, each checked (a JSON
/// object with a `dir`, a line, the right `n`); other records (`stderr`,
/// `exit`, `summary`, any other `dir`) and blank lines skipped. The one
/// reader of the log format, shared by `serve-command trace` and the
/// workbench's replay; public for them, not part of the crate's API.
#[doc(hidden)]
#[derive(Debug)]
pub struct LogReader<R> {
    input: R,
    buffer: Vec<u8>,
    at: u64,
    commands: u64,
    events: u64,
}

impl<R: io::BufRead> LogReader<R> {
    /// A reader of `input`, from its first line.
    pub fn new(input: R) -> LogReader<R> {
        LogReader {
            input,
            buffer: Vec::new(),
            at: 0,
            commands: 0,
            events: 0,
        }
    }

    /// The next command or event record; `None` at the end of the log.
    ///
    /// # Errors
    ///
    /// A failed read, or a record that is not one (with its line and
    /// why): not JSON, not an object, no `dir`, a command or event record
    /// with no line, or with an `n` that is not its place.
    pub fn read_record(&mut self) -> Result<Option<Record>, LogError> {
        use io::{BufRead as _, Read as _};
        loop {
            self.buffer.clear();
            self.at += 1;
            let at = self.at;
            let read = (&mut self.input)
                .take(MAX_RECORD + 1)
                .read_until(b'\n', &mut self.buffer)
                .map_err(LogError::Read)?;
            if read == 0 {
                return Ok(None);
            }
            if self.buffer.len() as u64 > MAX_RECORD {
                return Err(LogError::Record(
                    at,
                    format!("longer than {MAX_RECORD} bytes, more than any record of the tap"),
                ));
            }
            if self.buffer.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let value: serde_json::Value = serde_json::from_slice(&self.buffer)
                .map_err(|e| LogError::Record(at, format!("not JSON: {e}")))?;
            if let Some(record) = self.record(at, &value)? {
                return Ok(Some(record));
            }
        }
    }

    /// The record `value` is, or `None` for one that is skipped.
    fn record(&mut self, at: u64, value: &serde_json::Value) -> Result<Option<Record>, LogError> {
        use serde_json::Value;
        let why = |why: &str| LogError::Record(at, why.to_owned());
        let Value::Object(fields) = value else {
            return Err(why("not a JSON object"));
        };
        let direction = match fields.get("dir") {
            Some(Value::String(dir)) if dir == "command" => Direction::Command,
            Some(Value::String(dir)) if dir == "event" => Direction::Event,
            Some(Value::String(_)) => return Ok(None),
            Some(_) => return Err(why("\"dir\" is not a string")),
            None => return Err(why("no \"dir\"")),
        };
        let (count, what) = match direction {
            Direction::Command => (self.commands + 1, "command"),
            _ => (self.events + 1, "event"),
        };
        match fields.get("n") {
            None => {}
            Some(n) if n.as_u64() == Some(count) => {}
            Some(n) => {
                return Err(LogError::Record(
                    at,
                    format!(
                        "this {what} record's \"n\" is {n}, but it is {what} {count} of the log: \
                         records left out or reordered cannot be attributed"
                    ),
                ))
            }
        }
        let line = match (fields.get("line"), fields.get("line_base64")) {
            (Some(_), Some(_)) => {
                return Err(why("both \"line\" and \"line_base64\": which is the line?"))
            }
            (Some(Value::String(text)), None) => Wire::Bytes(text.as_bytes().to_vec()),
            (Some(Value::Null), None) => Wire::TooLong,
            (Some(_), None) => return Err(why("\"line\" is not a string or null")),
            (None, Some(Value::String(encoded))) => {
                use base64::Engine;
                match base64::engine::general_purpose::STANDARD.decode(encoded) {
                    Ok(bytes) => Wire::Bytes(bytes),
                    Err(e) => {
                        return Err(LogError::Record(
                            at,
                            format!("\"line_base64\" is not base64: {e}"),
                        ))
                    }
                }
            }
            (None, Some(_)) => return Err(why("\"line_base64\" is not a string")),
            (None, None) => {
                return Err(LogError::Record(
                    at,
                    format!("a {what} record with neither \"line\" nor \"line_base64\""),
                ))
            }
        };
        let t_us = fields.get("t_us").and_then(Value::as_u64).or_else(|| {
            fields
                .get("t_ms")
                .and_then(Value::as_u64)
                .map(|ms| ms.saturating_mul(1000))
        });
        match direction {
            Direction::Command => self.commands = count,
            _ => self.events = count,
        }
        Ok(Some(Record {
            at,
            direction,
            n: count,
            line,
            t_us,
        }))
    }
}
