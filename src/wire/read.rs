//! Reading commands from a byte stream, as an engine reads its stdin:
//! written once, for every revision.

use crate::wire::framing::{Framer, Item};
use crate::wire::message::sealed::FromRead;
use crate::wire::message::Message;
use std::fmt;
use std::io::{self, BufRead};
use std::marker::PhantomData;

/// The longest line, in bytes and without its LF, that [`CommandReader::new`]
/// reads: 64 MiB. Longer lines are refused with
/// [`ReadError::TooLong`](crate::generic::ReadError::TooLong) (an event
/// line with [`EventReadError::TooLong`](crate::v2::EventReadError::TooLong)).
///
/// ```
/// assert_eq!(serve_command::v2::DEFAULT_MAX_LINE_LEN, 67_108_864);
/// ```
pub const DEFAULT_MAX_LINE_LEN: usize = 64 * 1024 * 1024;

/// Reads commands from a [`BufRead`], one per line, as the reference engine
/// reads its stdin, but with a limit on line length.
///
/// An engine names its revision: [`v2::CommandReader`] (today's protocol)
/// or [`v1::CommandReader`] (the first revision's), aliases of this type with `C`
/// filled in. `C` is the revision's command type; code that handles either
/// revision stays generic over [`Revision`](crate::generic::Revision). A
/// controller reads events with [`v2::EventReader`], this type with
/// [`v2::Event`] filled in, whose errors are its own
/// ([`v2::EventReadError`]).
///
/// For commands, an iterator of `Result<C, ReadError<C::ParseError>>`:
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
/// [`v1::CommandReader`]: crate::v1::CommandReader
/// [`v2::CommandReader`]: crate::v2::CommandReader
/// [`v2::EventReader`]: crate::v2::EventReader
/// [`v2::Event`]: crate::v2::Event
/// [`v2::EventReadError`]: crate::v2::EventReadError
///
/// ```
/// use serve_command::v2::{Command, CommandReader, ReadError};
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
pub struct CommandReader<R, C> {
    inner: R,
    framer: Framer,
    /// An I/O error was handed out: the iterator is over.
    failed: bool,
    revision: PhantomData<fn() -> C>,
}

impl<R: BufRead, C: Message> CommandReader<R, C> {
    /// A reader with the limit [`DEFAULT_MAX_LINE_LEN`].
    #[must_use]
    pub fn new(inner: R) -> Self {
        Self::with_max_line_len(inner, DEFAULT_MAX_LINE_LEN)
    }

    /// A reader that refuses lines longer than `max` bytes, LF excluded.
    /// With `max` 0 every line that is not empty is refused.
    #[must_use]
    pub fn with_max_line_len(inner: R, max: usize) -> Self {
        CommandReader {
            inner,
            framer: Framer::new(max),
            failed: false,
            revision: PhantomData,
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

impl<R: BufRead, C: Message> Iterator for CommandReader<R, C> {
    type Item = Item<C>;

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
                    return Some(Err(FromRead::io(e)));
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

impl<R: fmt::Debug, C> fmt::Debug for CommandReader<R, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CommandReader")
            .field("inner", &self.inner)
            .field("framer", &self.framer)
            .field("failed", &self.failed)
            .finish()
    }
}
