//! Reading commands from a byte stream, as an engine reads its stdin.

use crate::framing::Framer;
use crate::{Command, LineError};
use std::io::{self, BufRead};

/// The longest line, in bytes and without its LF, that [`CommandReader::new`]
/// reads: 64 MiB. Longer lines are refused with [`ReadError::TooLong`].
pub const DEFAULT_MAX_LINE_LEN: usize = 64 * 1024 * 1024;

/// Why a [`CommandReader`] (or `CommandCodec`) refused a line, or stopped.
///
/// Line numbers are 1-based and count every physical line, blank ones
/// included, as an editor would.
#[derive(thiserror::Error, Debug)]
#[non_exhaustive]
pub enum ReadError {
    /// The line is not a command. The stream goes on with the next line.
    ///
    /// Displays as `line <line>: <error>`.
    #[error("line {line}: {error}")]
    Line {
        /// The line's number.
        line: u64,
        /// Why it is not a command.
        #[source]
        error: LineError,
    },
    /// The line is longer than `max` bytes (its LF excluded; a CR before it
    /// counts). It was skipped without being buffered; the stream goes on
    /// with the next line.
    ///
    /// Displays as `line <line> is longer than <max> bytes`.
    #[error("line {line} is longer than {max} bytes")]
    TooLong {
        /// The line's number.
        line: u64,
        /// The limit it broke.
        max: usize,
    },
    /// Reading the underlying stream failed. A [`CommandReader`] ends after
    /// this item; a line it had begun is lost.
    ///
    /// Displays as `read failed: <the I/O error>`.
    #[error("read failed: {0}")]
    Io(#[source] io::Error),
}

impl ReadError {
    /// The engine's reply, as one line ending in `"\n"`, ready to be written
    /// to stdout: `{"event":"command_error","error":<message>}`.
    ///
    /// `<message>` is [`LineError::event_line`]'s: the [`ParseError`] string
    /// for a line that is JSON but not a command, `command stream: <syntax
    /// error>` for one that is not JSON. For the other variants it is
    /// `command stream: ` followed by the error's `Display`:
    /// `command stream: line 3 is longer than 65536 bytes`,
    /// `command stream: read failed: <the I/O error>`.
    ///
    /// ```
    /// use serve_command::ReadError;
    /// let e = ReadError::TooLong { line: 3, max: 65536 };
    /// assert_eq!(
    ///     e.event_line(),
    ///     "{\"event\":\"command_error\",\"error\":\"command stream: line 3 is longer than 65536 bytes\"}\n",
    /// );
    /// ```
    ///
    /// [`ParseError`]: crate::ParseError
    pub fn event_line(&self) -> String {
        match self {
            // The line number stays out: the reference's message has none.
            ReadError::Line { error, .. } => error.event_line(),
            ReadError::TooLong { .. } | ReadError::Io(_) => {
                crate::encode::event_line(&format!("command stream: {self}"))
            }
        }
    }
}

/// Reads commands from a [`BufRead`], one per line, as the reference engine
/// reads its stdin, but with a limit on line length.
///
/// An iterator of `Result<Command, ReadError>`:
/// - a line of only spaces, tabs and CRs is skipped, with no item;
/// - a line that is not a command is an `Err(ReadError::Line)`, and reading
///   goes on (the reference engine stops at a line that is not JSON; an
///   engine that wants that stops itself);
/// - a line longer than the limit is one `Err(ReadError::TooLong)`, given as
///   soon as the limit is passed; its bytes are dropped up to its LF without
///   being buffered, and the next line is read as usual;
/// - the last line is read even without a final LF;
/// - [`io::ErrorKind::Interrupted`] is retried; any other read error is an
///   `Err(ReadError::Io)` and the last item.
///
/// Memory stays within the limit plus the `BufRead`'s own buffer, whatever
/// the input, and the items do not depend on how the input is chunked.
///
/// ```
/// use serve_command::{Command, CommandReader, ReadError};
/// let input = b"{\"command\":\"cancel\"}\n\n not json\n{\"command\":\"compact\"}";
/// let mut reader = CommandReader::new(&input[..]);
/// assert_eq!(reader.next().unwrap()?, Command::Cancel);
/// let err = reader.next().unwrap().unwrap_err();
/// assert!(matches!(err, ReadError::Line { line: 3, .. }));
/// assert_eq!(err.event_line(), "{\"event\":\"command_error\",\"error\":\"command stream: expected a JSON value at byte 1\"}\n");
/// assert_eq!(reader.next().unwrap()?, Command::Compact);
/// assert!(reader.next().is_none());
/// # Ok::<(), ReadError>(())
/// ```
#[derive(Debug)]
pub struct CommandReader<R> {
    inner: R,
    framer: Framer,
    /// An I/O error was handed out: the iterator is over.
    failed: bool,
}

impl<R: BufRead> CommandReader<R> {
    /// A reader with the limit [`DEFAULT_MAX_LINE_LEN`].
    pub fn new(inner: R) -> Self {
        Self::with_max_line_len(inner, DEFAULT_MAX_LINE_LEN)
    }

    /// A reader that refuses lines longer than `max` bytes, LF excluded.
    /// With `max` 0 every line that is not empty is refused.
    pub fn with_max_line_len(inner: R, max: usize) -> Self {
        CommandReader {
            inner,
            framer: Framer::new(max),
            failed: false,
        }
    }

    /// How many physical lines have been consumed, blank ones included: after
    /// an item, the number of its line. A too-long line counts from the
    /// moment it is reported; a line still without its LF does not count.
    pub fn line_number(&self) -> u64 {
        self.framer.line_number()
    }

    /// The limit on line length, in bytes without the LF.
    pub fn max_line_len(&self) -> usize {
        self.framer.max_line_len()
    }

    /// The underlying reader. Right after an item it is positioned just past
    /// that item's LF; the bytes of a line not yet complete are lost.
    pub fn into_inner(self) -> R {
        self.inner
    }
}

impl<R: BufRead> Iterator for CommandReader<R> {
    type Item = Result<Command, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        loop {
            let chunk = match self.inner.fill_buf() {
                Ok(chunk) => chunk,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.failed = true;
                    return Some(Err(ReadError::Io(e)));
                }
            };
            if chunk.is_empty() {
                // Not fused: a terminal's stdin can be read again after ^D.
                return self.framer.finish();
            }
            let (used, item) = self.framer.feed(chunk);
            self.inner.consume(used);
            if item.is_some() {
                return item;
            }
        }
    }
}
