//! The tokio codec: [`CommandReader`](crate::CommandReader)'s framing for
//! `FramedRead`, and the wire line for `FramedWrite`.

use crate::framing::Framer;
use crate::read::{ReadError, DEFAULT_MAX_LINE_LEN};
use crate::Command;
use bytes::{Buf, BufMut, BytesMut};
use std::io;
use tokio_util::codec::{Decoder, Encoder};

/// A [`tokio_util::codec`] codec for command lines. Needs the `tokio` cargo
/// feature.
///
/// Decoding follows exactly [`CommandReader`](crate::CommandReader)'s rules
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
/// Encoding writes [`Command::to_line`]'s bytes, from a `Command` or a
/// `&Command`.
///
/// ```
/// use bytes::BytesMut;
/// use serve_command::{Command, CommandCodec, ReadError};
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
#[derive(Debug, Clone)]
pub struct CommandCodec {
    framer: Framer,
}

impl CommandCodec {
    /// A codec with the limit [`DEFAULT_MAX_LINE_LEN`].
    pub fn new() -> Self {
        Self::with_max_line_len(DEFAULT_MAX_LINE_LEN)
    }

    /// A codec that refuses lines longer than `max` bytes, LF excluded.
    pub fn with_max_line_len(max: usize) -> Self {
        CommandCodec {
            framer: Framer::new(max),
        }
    }

    /// How many physical lines have been decoded, blank ones included, as
    /// [`CommandReader::line_number`](crate::CommandReader::line_number).
    pub fn line_number(&self) -> u64 {
        self.framer.line_number()
    }

    /// The limit on line length, in bytes without the LF.
    pub fn max_line_len(&self) -> usize {
        self.framer.max_line_len()
    }
}

impl Default for CommandCodec {
    /// Same as [`CommandCodec::new`].
    fn default() -> Self {
        Self::new()
    }
}

impl Decoder for CommandCodec {
    type Item = Result<Command, ReadError>;
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

impl Encoder<&Command> for CommandCodec {
    type Error = io::Error;

    fn encode(&mut self, cmd: &Command, dst: &mut BytesMut) -> io::Result<()> {
        cmd.write_line(dst.writer())
    }
}

impl Encoder<Command> for CommandCodec {
    type Error = io::Error;

    fn encode(&mut self, cmd: Command, dst: &mut BytesMut) -> io::Result<()> {
        Encoder::<&Command>::encode(self, &cmd, dst)
    }
}
