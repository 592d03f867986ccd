//! Writing the later revision's wire line: compact JSON in the reference's
//! key order (from [`Command::entries`]), `content` as a string when it is
//! one text part, one `\n` at the end.

use crate::v2::command::{Command, Val};
use crate::v2::{Content, ContentPart};
use crate::wire::escape::{self, write_str, Len, Overflow, ShortBuf, Sink, StackBuf};
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use std::convert::Infallible;
use std::io;

/// A sink that also takes image bytes, written as canonical padded base64.
pub(crate) trait Out: Sink {
    fn base64(&mut self, bytes: &[u8]) -> Result<(), Self::Error>;
}

impl Out for Len {
    #[inline]
    fn base64(&mut self, bytes: &[u8]) -> Result<(), Infallible> {
        // No image is near `usize::MAX / 4 * 3` bytes.
        self.0 += base64::encoded_len(bytes.len(), true).unwrap_or(usize::MAX);
        Ok(())
    }
}

impl Out for String {
    #[inline]
    fn base64(&mut self, bytes: &[u8]) -> Result<(), Infallible> {
        // Straight into the line, whose capacity was counted.
        STANDARD.encode_string(bytes, self);
        Ok(())
    }
}

impl Out for ShortBuf {
    fn base64(&mut self, bytes: &[u8]) -> Result<(), Overflow> {
        let n = base64::encoded_len(bytes.len(), true).unwrap_or(usize::MAX);
        let room = self.room(n)?;
        let n = STANDARD.encode_slice(bytes, room).map_err(|_| Overflow)?;
        self.advance(n);
        Ok(())
    }
}

impl<W: io::Write> Out for StackBuf<W> {
    fn base64(&mut self, mut bytes: &[u8]) -> io::Result<()> {
        // Encoded straight into the buffer, as much as fits at a time (whole
        // groups of 3 bytes, but for the last, padded, chunk): no allocation,
        // and every write of the buffer is of a full one.
        while !bytes.is_empty() {
            let room = self.room(usize::MAX);
            let take = (room.len() / 4 * 3).min(bytes.len());
            if take == 0 {
                // Fewer than 4 bytes left in the buffer: one group through
                // a word, split over the write.
                let (group, rest) = bytes.split_at(3.min(bytes.len()));
                let mut quad = [0u8; 4];
                let n = STANDARD.encode_slice(group, &mut quad).unwrap_or(0);
                self.put_bytes(&quad[..n])?;
                bytes = rest;
                continue;
            }
            let (chunk, rest) = bytes.split_at(take);
            let n = STANDARD.encode_slice(chunk, room).unwrap_or(0);
            self.advance(n)?;
            bytes = rest;
        }
        Ok(())
    }
}

/// Writes `cmd` as its wire line, LF included.
pub(crate) fn write_command<K: Out>(cmd: &Command, k: &mut K) -> Result<(), K::Error> {
    let mut first = true;
    cmd.entries(
        #[inline(always)]
        |key, val| {
            k.put(if first { "{\"" } else { ",\"" })?;
            first = false;
            k.put(key)?;
            k.put("\":")?;
            match val {
                Val::Str(s) => write_str(k, s),
                Val::Bool(b) => k.put(if b { "true" } else { "false" }),
                Val::Content(c) => write_content(k, c),
            }
        },
    )?;
    k.put("}\n")
}

/// `content`'s value: a string for exactly one text part, else the array.
fn write_content<K: Out>(k: &mut K, content: &Content) -> Result<(), K::Error> {
    if let Some(text) = content.as_single_text() {
        return write_str(k, text);
    }
    k.put("[")?;
    for (i, part) in content.iter().enumerate() {
        if i > 0 {
            k.put(",")?;
        }
        match part {
            ContentPart::Text(text) => {
                k.put("{\"type\":\"text\",\"text\":")?;
                write_str(k, text)?;
            }
            ContentPart::Image(image) => {
                // The media type is one of four constants: nothing to escape.
                k.put("{\"type\":\"image\",\"media_type\":\"")?;
                k.put(image.media_type())?;
                k.put("\",\"data\":\"")?;
                k.base64(image.bytes())?;
                k.put("\"")?;
            }
        }
        k.put("}")?;
    }
    k.put("]")
}

/// The wire line in a `String` allocated once, at its exact length.
pub(crate) fn to_line(cmd: &Command) -> String {
    let mut len = Len(0);
    let Ok(()) = write_command(cmd, &mut len);
    let mut line = String::with_capacity(len.0);
    let Ok(()) = write_command(cmd, &mut line);
    line
}

/// The wire line to `out`, in one `write_all` up to 8 KiB and one per 8 KiB
/// beyond at most, without allocating (image data is base64-encoded
/// straight into the stack buffer).
pub(crate) fn write_line<W: io::Write>(cmd: &Command, out: W) -> io::Result<()> {
    escape::write_line(out, |k| write_command(cmd, k), |k| write_command(cmd, k))
}
