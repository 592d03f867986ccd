//! Writing v1's wire line: compact JSON in the reference's key
//! order (from [`Command::entries`]), one `\n` at the end.

use crate::v1::command::Command;
use crate::wire::escape::{self, write_str, Fmt, Len, Sink};
use std::{fmt, io};

/// Writes `cmd` as its wire line, LF included.
#[inline(always)]
pub(crate) fn write_command<K: Sink>(cmd: &Command, k: &mut K) -> Result<(), K::Error> {
    write_object::<K, true>(cmd, k)
}

/// The line's JSON object, and its LF when `LF`: the one encoder, for the
/// line and for `Display` (which leaves the LF out). A constant, so that
/// the last piece is still one copy of a known length.
fn write_object<K: Sink, const LF: bool>(cmd: &Command, k: &mut K) -> Result<(), K::Error> {
    let mut first = true;
    // Inlined at each entry, so that every key and bracket is a copy of a
    // length known at compile time (no call); only strings are scanned.
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
            }
        },
    )?;
    k.put(if LF { "}\n" } else { "}" })
}

/// The wire line in a `String` allocated once, at its exact length.
pub(crate) fn to_line(cmd: &Command) -> String {
    let mut len = Len(0);
    let Ok(()) = write_command(cmd, &mut len);
    let mut line = String::with_capacity(len.0);
    let Ok(()) = write_command(cmd, &mut line);
    line
}

/// A value in the wire line: a string or a boolean.
#[derive(Clone, Copy)]
pub(crate) enum Val<'a> {
    Str(&'a str),
    Bool(bool),
}

impl Command {
    /// The wire line's entries, in the reference's order. Every encoder
    /// (bytes, `Value`, `Serialize`) walks this, so the shape of a line is
    /// written down once.
    #[inline]
    pub(crate) fn entries<'a, E>(
        &'a self,
        mut entry: impl FnMut(&'static str, Val<'a>) -> Result<(), E>,
    ) -> Result<(), E> {
        use Val::{Bool, Str};
        match self {
            Command::Prompt {
                text,
                submission_id,
            } => {
                entry("command", Str(self.name()))?;
                entry("text", Str(text))?;
                // Written only when tagged: the untagged line stays what every
                // controller has always written.
                if let Some(id) = submission_id {
                    entry("submission_id", Str(id))?;
                }
            }
            Command::Steer { kind, text } => {
                entry("command", Str(self.name()))?;
                entry("kind", Str(kind.as_str()))?;
                entry("text", Str(text))?;
            }
            Command::Compact | Command::Cancel => entry("command", Str(self.name()))?,
            Command::GoalSet { text, auto } => {
                entry("command", Str(self.name()))?;
                entry("action", Str("set"))?;
                entry("text", Str(text))?;
                // Written only when armed: absent is what `false` has always
                // looked like on this wire.
                if *auto {
                    entry("auto", Bool(true))?;
                }
            }
            Command::GoalClear => {
                entry("command", Str(self.name()))?;
                entry("action", Str("clear"))?;
            }
            Command::ApprovalDecision { id, allow } => {
                entry("command", Str(self.name()))?;
                entry("id", Str(id))?;
                entry("allow", Bool(*allow))?;
            }
        }
        Ok(())
    }

    /// The wire line: compact JSON in the reference's key order, ending in
    /// exactly one `"\n"` (a raw LF can never appear inside: strings escape
    /// it). Allocates once.
    ///
    /// ```
    /// use serve_command::v1::Command;
    /// let cmd = Command::Prompt { text: "fix it".into(), submission_id: None };
    /// assert_eq!(cmd.to_line(), "{\"command\":\"prompt\",\"text\":\"fix it\"}\n");
    /// ```
    #[must_use]
    pub fn to_line(&self) -> String {
        to_line(self)
    }

    /// Writes the same bytes as [`Command::to_line`] to `out`, without
    /// allocating.
    ///
    /// The line is gathered in a buffer on the stack and reaches `out` in a
    /// single `write_all` when it is up to 8 KiB long (on an unbuffered pipe,
    /// one `write` system call, so that lines written to one pipe by several
    /// threads do not interleave), and in one `write_all` per 8 KiB at most
    /// when it is longer: every write but the last is of whole 8 KiB
    /// buffers (a plain run of text longer than the buffer goes straight
    /// from the string, several buffers in one write).
    ///
    /// So writing each command straight to a child's stdin or a socket costs
    /// one system call per command. A [`BufWriter`](io::BufWriter) around
    /// `out` still helps when many commands are written in a burst and can
    /// share a call (flush it after the last one), or when `out` is slow per
    /// call whatever the size; it costs one more copy of every line.
    ///
    /// # Errors
    ///
    /// The first error `out` returns, as it is; what was written before it
    /// stays written.
    ///
    /// ```
    /// use serve_command::v1::Command;
    /// let mut out = Vec::new();
    /// Command::Cancel.write_line(&mut out)?;
    /// Command::Compact.write_line(&mut out)?;
    /// assert_eq!(out, b"{\"command\":\"cancel\"}\n{\"command\":\"compact\"}\n");
    /// // A full buffer's error is the caller's.
    /// let mut small = [0u8; 4];
    /// let err = Command::Cancel.write_line(&mut small[..]).unwrap_err();
    /// assert_eq!(err.kind(), std::io::ErrorKind::WriteZero);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn write_line<W: io::Write>(&self, out: W) -> io::Result<()> {
        escape::write_line(out, |k| write_command(self, k), |k| write_command(self, k))
    }
}

impl fmt::Display for Command {
    /// The wire line without its LF: [`Command::to_line`] but its last
    /// byte, written by the same encoder. Width, fill and precision are
    /// ignored: the line is written as it is.
    ///
    /// ```
    /// use serve_command::v1::Command;
    /// let cmd = Command::GoalSet { text: "say \"hi\"\n".into(), auto: true };
    /// assert_eq!(cmd.to_string(), r#"{"command":"goal","action":"set","text":"say \"hi\"\n","auto":true}"#);
    /// assert_eq!(format!("{cmd}\n"), cmd.to_line());
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_object::<_, false>(self, &mut Fmt(f))
    }
}
