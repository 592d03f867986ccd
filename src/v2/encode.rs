//! Writing the later revision's wire line: compact JSON in the reference's
//! key order (from [`Command::entries`]), `content` as a string when it is
//! one text part, one `\n` at the end.

use crate::v2::command::Command;
use crate::v2::{Content, ContentPart};
use crate::wire::escape::{write_str, Len, Sink, StackBuf};
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

/// Input bytes per base64 chunk: a multiple of 3, so only the last chunk
/// is padded.
const CHUNK: usize = 3 * 1024;

impl<W: io::Write> Out for StackBuf<W> {
    fn base64(&mut self, bytes: &[u8]) -> io::Result<()> {
        // Encoded on the stack, a chunk at a time: no allocation.
        let mut buf = [0u8; CHUNK / 3 * 4];
        for chunk in bytes.chunks(CHUNK) {
            let n = STANDARD.encode_slice(chunk, &mut buf).unwrap_or(0);
            // Base64 is ASCII.
            self.put(std::str::from_utf8(&buf[..n]).unwrap_or_default())?;
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

/// A value in the wire line.
#[derive(Clone, Copy)]
pub(crate) enum Val<'a> {
    Str(&'a str),
    Bool(bool),
    Content(&'a Content),
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

    /// The wire line: compact JSON in the reference's key order, ending in
    /// exactly one `"\n"`. Allocates once.
    ///
    /// ```
    /// use serve_command::v2::Command;
    /// let cmd = Command::Prompt { content: "fix it".into(), submission_id: None };
    /// assert_eq!(cmd.to_line(), "{\"command\":\"prompt\",\"content\":\"fix it\"}\n");
    /// ```
    #[must_use]
    pub fn to_line(&self) -> String {
        to_line(self)
    }

    /// Writes the same bytes as [`Command::to_line`] to `out`. Allocates
    /// nothing: image data is base64-encoded in small chunks on the stack.
    ///
    /// # Errors
    ///
    /// The first error `out` returns, as it is; what was written before it
    /// stays written.
    ///
    /// ```
    /// use serve_command::v2::Command;
    /// let mut out = Vec::new();
    /// Command::Prompt { content: "hi".into(), submission_id: None }.write_line(&mut out)?;
    /// assert_eq!(out, b"{\"command\":\"prompt\",\"content\":\"hi\"}\n");
    /// let mut small = [0u8; 4];
    /// let err = Command::Cancel.write_line(&mut small[..]).unwrap_err();
    /// assert_eq!(err.kind(), std::io::ErrorKind::WriteZero);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn write_line<W: io::Write>(&self, out: W) -> io::Result<()> {
        let mut sink = StackBuf::new(out);
        write_command(self, &mut sink)?;
        sink.finish()
    }
}
