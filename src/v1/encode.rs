//! Writing the seed revision's wire line: compact JSON in the reference's key
//! order (from [`Command::entries`]), one `\n` at the end.

use crate::v1::command::Command;
use crate::wire::escape::{write_str, Len, Sink, StackBuf};
use std::io;

/// Writes `cmd` as its wire line, LF included.
pub(crate) fn write_command<K: Sink>(cmd: &Command, k: &mut K) -> Result<(), K::Error> {
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
    k.put("}\n")
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
    /// allocating. A line of up to 512 bytes reaches `out` in a single
    /// `write_all`; longer ones in a few.
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
        let mut sink = StackBuf::new(out);
        write_command(self, &mut sink)?;
        sink.finish()
    }
}
