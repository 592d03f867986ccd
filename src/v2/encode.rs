//! Writing the later revision's wire line: compact JSON in the reference's
//! key order (from [`Command::entries`]), `content` as a string when it is
//! one text part, one `\n` at the end.

use crate::v2::command::Command;
use crate::v2::{Content, ContentPart};
use crate::wire::escape::{write_str, Fmt, Len, Overflow, ShortBuf, Sink, StackBuf};
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use std::convert::Infallible;
use std::{fmt, io};

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

impl Out for ShortBuf<'_> {
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

impl Out for Fmt<'_, '_> {
    fn base64(&mut self, bytes: &[u8]) -> fmt::Result {
        // Through a stack buffer, whole groups of 3 bytes at a time (only
        // the last chunk is padded): no allocation.
        let mut buf = [0u8; 1024];
        for chunk in bytes.chunks(buf.len() / 4 * 3) {
            let n = STANDARD
                .encode_slice(chunk, &mut buf)
                .map_err(|_| fmt::Error)?;
            // Base64 is ASCII: this never fails.
            self.put(std::str::from_utf8(&buf[..n]).map_err(|_| fmt::Error)?)?;
        }
        Ok(())
    }
}

/// `content`'s value: a string for exactly one text part, else the array.
pub(crate) fn write_content<K: Out>(k: &mut K, content: &Content) -> Result<(), K::Error> {
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

/// A value in the wire line.
#[derive(Clone, Copy)]
pub(crate) enum Val<'a> {
    Str(&'a str),
    Bool(bool),
    Content(&'a Content),
}

/// Writes one value of the line.
#[inline(always)]
fn write_val<K: Out>(k: &mut K, val: Val<'_>) -> Result<(), K::Error> {
    match val {
        Val::Str(s) => write_str(k, s),
        Val::Bool(b) => k.put(if b { "true" } else { "false" }),
        Val::Content(c) => write_content(k, c),
    }
}

impl Command {
    /// The wire line's entries, in the reference's `to_json` order. Every
    /// encoder walks this.
    #[inline]
    pub(crate) fn entries<'a, E>(
        &'a self,
        mut entry: impl FnMut(&'static str, Val<'a>) -> Result<(), E>,
    ) -> Result<(), E> {
        use Val::{Bool, Str};
        entry("command", Str(self.name()))?;
        match self {
            Command::Prompt {
                content,
                submission_id,
            } => {
                entry("content", Val::Content(content))?;
                if let Some(id) = submission_id {
                    entry("submission_id", Str(id))?;
                }
            }
            Command::Steer {
                kind,
                content,
                submission_id,
            } => {
                entry("kind", Str(kind.as_str()))?;
                entry("content", Val::Content(content))?;
                if let Some(id) = submission_id {
                    entry("submission_id", Str(id))?;
                }
            }
            Command::Compact | Command::Cancel => {}
            Command::JobsSnapshot { request_id } => entry("request_id", Str(request_id))?,
            Command::JobStop {
                request_id,
                generation,
                job_id,
            } => {
                entry("request_id", Str(request_id))?;
                entry("generation", Str(generation))?;
                entry("job_id", Str(job_id))?;
            }
            Command::GoalSet { text, auto } => {
                entry("action", Str("set"))?;
                entry("text", Str(text))?;
                if *auto {
                    entry("auto", Bool(true))?;
                }
            }
            Command::GoalClear => entry("action", Str("clear"))?,
            Command::ApprovalDecision { id, allow } => {
                entry("id", Str(id))?;
                entry("allow", Bool(*allow))?;
            }
        }
        Ok(())
    }
}

crate::revision::encode_methods! {
    sink: Out,
    write_val: write_val,
    to_line: {
        /// ```
        /// use serve_command::v2::Command;
        /// let cmd = Command::prompt("fix it");
        /// assert_eq!(cmd.to_line(), "{\"command\":\"prompt\",\"content\":\"fix it\"}\n");
        /// ```
    },
    write_line: {
        /// Image data is base64-encoded straight into the buffer.
    } {
        /// ```
        /// use serve_command::v2::Command;
        /// let mut out = Vec::new();
        /// Command::prompt("hi").write_line(&mut out)?;
        /// assert_eq!(out, b"{\"command\":\"prompt\",\"content\":\"hi\"}\n");
        /// let mut small = [0u8; 4];
        /// let err = Command::Cancel.write_line(&mut small[..]).unwrap_err();
        /// assert_eq!(err.kind(), std::io::ErrorKind::WriteZero);
        /// # Ok::<(), std::io::Error>(())
        /// ```
    },
    display: {
        /// Image data is base64-encoded a chunk at a time, without
        /// allocating.
    } {
        /// ```
        /// use serve_command::v2::{Command, SteerKind};
        /// let cmd = Command::steer_tagged(SteerKind::Prompt, "café\tau lait", "s1");
        /// assert_eq!(cmd.to_string(), r#"{"command":"steer","kind":"prompt","content":"café\tau lait","submission_id":"s1"}"#);
        /// assert_eq!(format!("{cmd}\n"), cmd.to_line());
        /// ```
    },
}
