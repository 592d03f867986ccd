//! Splitting a byte stream into command lines: the one state machine behind
//! both [`CommandReader`](crate::CommandReader) and `CommandCodec`, for
//! every revision (the revision only decodes the finished line).
//!
//! It is fed byte slices in whatever pieces they arrive and gives back one
//! item per line that needs one: blank lines are skipped, an over-long line
//! is reported once and then discarded without being buffered. Every chunking
//! of the same bytes yields the same items, with the same line numbers.

use crate::wire::find;
use crate::wire::message::sealed::FromRead;
use crate::wire::message::Message;
use std::fmt;

/// What one line turns into.
pub(crate) type Item<C> = Result<C, <C as Message>::ReadError>;

/// Line-buffer capacity kept from one line to the next. A bigger buffer is
/// released after its line, so one huge prompt does not pin its memory for
/// the rest of a long session.
const KEEP_CAPACITY: usize = 64 * 1024;

#[derive(Clone)]
pub(crate) struct Framer {
    /// The current line's bytes so far, when it spans more than one chunk.
    /// Never longer, nor with more capacity, than `max`.
    partial: Vec<u8>,
    /// Physical lines ended or reported so far.
    line: u64,
    max: usize,
    /// The current line was reported as too long; its bytes are being
    /// dropped up to its LF.
    discarding: bool,
}

impl Framer {
    pub(crate) fn new(max: usize) -> Self {
        Framer {
            partial: Vec::new(),
            line: 0,
            max,
            discarding: false,
        }
    }

    pub(crate) fn line_number(&self) -> u64 {
        self.line
    }

    pub(crate) fn max_line_len(&self) -> usize {
        self.max
    }

    /// Takes a prefix of `chunk` (all of it, or up to and including a LF;
    /// never nothing unless `chunk` is empty) and returns its length, with
    /// the item that prefix completed, if any.
    #[inline]
    pub(crate) fn feed<C: Message>(&mut self, chunk: &[u8]) -> (usize, Option<Item<C>>) {
        let lf = find::lf(chunk);
        if let Some(i) = lf {
            // The common line: whole in this chunk, with nothing held before
            // it and nothing being dropped. Decoded in place, not copied.
            if self.partial.is_empty() && !self.discarding && i <= self.max {
                self.line += 1;
                return (i + 1, decode(&chunk[..i], self.line));
            }
        }
        self.feed_rest(chunk, lf)
    }

    /// [`Framer::feed`] for every other case: a line that spans chunks, is
    /// too long, or is being dropped.
    #[inline(never)]
    fn feed_rest<C: Message>(
        &mut self,
        chunk: &[u8],
        lf: Option<usize>,
    ) -> (usize, Option<Item<C>>) {
        if self.discarding {
            return match lf {
                Some(i) => {
                    self.discarding = false;
                    (i + 1, None)
                }
                None => (chunk.len(), None),
            };
        }
        match lf {
            Some(i) => (i + 1, self.end_line(&chunk[..i])),
            None if self.partial.len().saturating_add(chunk.len()) > self.max => {
                // Reported now rather than at its LF, which may never come.
                // The line is counted now too, so the item's number is the
                // reader's `line_number()` as it hands the item out.
                self.line += 1;
                self.discarding = true;
                self.reset_partial();
                (chunk.len(), Some(Err(self.too_long::<C>())))
            }
            None => {
                self.push(chunk);
                (chunk.len(), None)
            }
        }
    }

    /// End of input: the unterminated last line, if there is one.
    pub(crate) fn finish<C: Message>(&mut self) -> Option<Item<C>> {
        if self.discarding {
            // Already counted and reported.
            self.discarding = false;
            return None;
        }
        if self.partial.is_empty() {
            return None;
        }
        self.end_line(&[])
    }

    /// The current line ends with `tail` (its LF, if any, excluded).
    fn end_line<C: Message>(&mut self, tail: &[u8]) -> Option<Item<C>> {
        self.line += 1;
        let item = if self.partial.len().saturating_add(tail.len()) > self.max {
            Some(Err(self.too_long::<C>()))
        } else if self.partial.is_empty() {
            // The whole line is in this chunk: decoded in place, not copied.
            decode(tail, self.line)
        } else {
            self.push(tail);
            decode(&self.partial, self.line)
        };
        self.reset_partial();
        item
    }

    fn too_long<C: Message>(&self) -> C::ReadError {
        C::ReadError::too_long(self.line, self.max)
    }

    /// Appends to `partial`, which callers have checked stays within `max`.
    fn push(&mut self, bytes: &[u8]) {
        let need = self.partial.len() + bytes.len();
        if need > self.partial.capacity() {
            // Vec's own doubling could reserve up to twice `max`: grow the
            // same way, but never past `max`.
            let cap = need
                .max(self.partial.capacity().saturating_mul(2))
                .min(self.max);
            self.partial.reserve_exact(cap - self.partial.len());
        }
        self.partial.extend_from_slice(bytes);
    }

    fn reset_partial(&mut self) {
        self.partial.clear();
        self.partial.shrink_to(KEEP_CAPACITY);
    }
}

impl fmt::Debug for Framer {
    // The buffered bytes can be megabytes: their count is what helps.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Framer")
            .field("line", &self.line)
            .field("max", &self.max)
            .field("buffered", &self.partial.len())
            .field("discarding", &self.discarding)
            .finish()
    }
}

/// One complete line, LF excluded: nothing if it is blank (as the reference
/// skips it), else the command or why it is not one.
fn decode<C: Message>(line: &[u8], number: u64) -> Option<Item<C>> {
    if line.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r')) {
        return None;
    }
    Some(C::decode_line(line).map_err(|error| FromRead::line(number, error)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::v1::Command;

    /// Feeds `chunk` whole, checking the buffer bound after every step.
    #[track_caller]
    fn feed_all(f: &mut Framer, mut chunk: &[u8], items: &mut Vec<String>) {
        while !chunk.is_empty() {
            let (n, item) = f.feed::<Command>(chunk);
            assert!(n > 0 && n <= chunk.len());
            chunk = &chunk[n..];
            assert!(
                f.partial.capacity() <= f.max.max(KEEP_CAPACITY),
                "capacity {} over max {}",
                f.partial.capacity(),
                f.max
            );
            items.extend(item.map(|i| format!("{i:?}")));
        }
    }

    #[test]
    fn buffer_never_outgrows_max() {
        // Not a power of two, so unchecked doubling would overshoot it.
        let max = 1_000_000;
        let mut f = Framer::new(max);
        let mut items = Vec::new();
        // A line of exactly `max` bytes in 1000-byte pieces is buffered...
        let piece = [b' '; 1000];
        feed_all(&mut f, b"{\"command\":\"prompt\",\"text\":\"", &mut items);
        let text = max - 30;
        for _ in 0..text / 1000 {
            feed_all(&mut f, &piece, &mut items);
        }
        feed_all(&mut f, &piece[..text % 1000], &mut items);
        assert_eq!(f.partial.len(), max - 2);
        feed_all(&mut f, b"\"}\n", &mut items);
        // ...and its buffer released after it.
        assert!(f.partial.capacity() <= KEEP_CAPACITY);
        // A line of 8 MiB never gets buffered past `max`.
        let piece = [b'a'; 8192];
        for _ in 0..1024 {
            feed_all(&mut f, &piece, &mut items);
        }
        assert!(f.partial.capacity() <= KEEP_CAPACITY);
        feed_all(&mut f, b"\n{\"command\":\"cancel\"}\n", &mut items);
        assert_eq!(
            items,
            [
                format!(
                    "{:?}",
                    Ok::<_, crate::v1::ReadError>(Command::Prompt {
                        text: " ".repeat(text),
                        submission_id: None
                    })
                ),
                "Err(TooLong { line: 2, max: 1000000 })".to_owned(),
                "Ok(Cancel)".to_owned(),
            ]
        );
        assert_eq!(f.line_number(), 3);
    }
}
