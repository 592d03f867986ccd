//! The tokio codec: [`CommandReader`]'s framing for `FramedRead`, and the
//! wire line for `FramedWrite`, written once for every revision.

use crate::wire::framing::{Framer, Item};
use crate::wire::message::Message;
use crate::wire::read::DEFAULT_MAX_LINE_LEN;
use bytes::{Buf, BufMut, BytesMut};
use std::fmt;
use std::io;
use std::marker::PhantomData;
use tokio_util::codec::{Decoder, Encoder};

/// A [`tokio_util::codec`] codec for command lines. Needs the `tokio` cargo
/// feature.
///
/// An engine or controller names its revision: [`v2::CommandCodec`] or
/// [`v1::CommandCodec`], aliases of this type with `C` (the revision's
/// command type) filled in.
///
/// Decoding follows exactly [`CommandReader`]'s rules
/// (blank lines skipped, the same limit on line length, the same line
/// numbers, the last line read without its LF), and a bad line is an item,
/// `Err(ReadError)`, never a decoder error: a decoder error would end a
/// `FramedRead` for good. The decoder itself never fails and never yields
/// [`ReadError::Io`]; the transport's own errors come out of the stream as
/// they are.
///
/// The decoder consumes its input buffer as it goes, so memory stays within
/// the limit plus one read, whatever arrives.
///
/// Encoding writes the command's wire line (its `to_line`), from a `C` or a
/// `&C`.
///
/// [`v1::CommandCodec`]: crate::v1::CommandCodec
/// [`v2::CommandCodec`]: crate::v2::CommandCodec
/// [`CommandReader`]: crate::generic::CommandReader
/// [`ReadError::Io`]: crate::generic::ReadError::Io
///
/// ```
/// use bytes::BytesMut;
/// use serve_command::v2::{Command, CommandCodec, ReadError};
/// use tokio_util::codec::{Decoder, Encoder};
///
/// let mut codec = CommandCodec::new();
/// let mut buf = BytesMut::new();
/// codec.encode(Command::Cancel, &mut buf)?;
/// buf.extend_from_slice(b"\nnope\n{\"command\":\"comp");
/// assert_eq!(codec.decode(&mut buf)?.unwrap()?, Command::Cancel);
/// let err = codec.decode(&mut buf)?.unwrap().unwrap_err();
/// assert!(matches!(err, ReadError::Line { line: 3, .. }));
/// assert!(codec.decode(&mut buf)?.is_none());
/// buf.extend_from_slice(b"act\"}");
/// assert!(codec.decode(&mut buf)?.is_none());
/// assert_eq!(codec.decode_eof(&mut buf)?.unwrap()?, Command::Compact);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct CommandCodec<C> {
    framer: Framer,
    revision: PhantomData<fn() -> C>,
}

impl<C: Message> CommandCodec<C> {
    /// A codec with the limit [`DEFAULT_MAX_LINE_LEN`].
    #[must_use]
    pub fn new() -> Self {
        Self::with_max_line_len(DEFAULT_MAX_LINE_LEN)
    }

    /// A codec that refuses lines longer than `max` bytes, LF excluded.
    #[must_use]
    pub fn with_max_line_len(max: usize) -> Self {
        CommandCodec {
            framer: Framer::new(max),
            revision: PhantomData,
        }
    }

    /// How many physical lines have been decoded, blank ones included, as
    /// [`CommandReader::line_number`](crate::generic::CommandReader::line_number).
    ///
    /// A count read and dropped is a mistake the compiler points out:
    ///
    /// ```compile_fail
    /// #![deny(unused_must_use)]
    /// let codec = serve_command::v2::CommandCodec::new();
    /// codec.line_number();
    /// ```
    #[must_use]
    pub fn line_number(&self) -> u64 {
        self.framer.line_number()
    }

    /// The limit on line length, in bytes without the LF.
    ///
    /// ```compile_fail
    /// #![deny(unused_must_use)]
    /// let codec = serve_command::v2::CommandCodec::new();
    /// codec.max_line_len();
    /// ```
    #[must_use]
    pub fn max_line_len(&self) -> usize {
        self.framer.max_line_len()
    }
}

impl<C: Message> Default for CommandCodec<C> {
    /// Same as [`CommandCodec::new`].
    fn default() -> Self {
        Self::new()
    }
}

impl<C> Clone for CommandCodec<C> {
    fn clone(&self) -> Self {
        CommandCodec {
            framer: self.framer.clone(),
            revision: PhantomData,
        }
    }
}

impl<C> fmt::Debug for CommandCodec<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CommandCodec")
            .field("framer", &self.framer)
            .finish()
    }
}

impl<C: Message> Decoder for CommandCodec<C> {
    type Item = Item<C>;
    type Error = io::Error;

    fn decode(&mut self, src: &mut BytesMut) -> io::Result<Option<Self::Item>> {
        while !src.is_empty() {
            // Everything fed is consumed (a partial line moves into the
            // framer, bounded by the limit), so `src` never accumulates.
            let (used, item) = self.framer.feed(src);
            src.advance(used);
            if item.is_some() {
                return Ok(item);
            }
        }
        Ok(None)
    }

    fn decode_eof(&mut self, src: &mut BytesMut) -> io::Result<Option<Self::Item>> {
        match self.decode(src)? {
            Some(item) => Ok(Some(item)),
            None => Ok(self.framer.finish()),
        }
    }
}

impl<C: Message> Encoder<&C> for CommandCodec<C> {
    type Error = io::Error;

    fn encode(&mut self, cmd: &C, dst: &mut BytesMut) -> io::Result<()> {
        cmd.encode_line(dst.writer())
    }
}

impl<C: Message> Encoder<C> for CommandCodec<C> {
    type Error = io::Error;

    fn encode(&mut self, cmd: C, dst: &mut BytesMut) -> io::Result<()> {
        Encoder::<&C>::encode(self, &cmd, dst)
    }
}
