//! Writing v1's wire line: compact JSON in the reference's key
//! order (from [`Command::entries`]), one `\n` at the end.

use crate::v1::command::Command;
use crate::wire::escape::{write_str, Sink};

/// A value in the wire line: a string or a boolean.
#[derive(Clone, Copy)]
pub(crate) enum Val<'a> {
    Str(&'a str),
    Bool(bool),
}

/// Writes one value of the line.
#[inline(always)]
fn write_val<K: Sink>(k: &mut K, val: Val<'_>) -> Result<(), K::Error> {
    match val {
        Val::Str(s) => write_str(k, s),
        Val::Bool(b) => k.put(if b { "true" } else { "false" }),
    }
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
}

crate::revision::encode_methods! {
    sink: Sink,
    write_val: write_val,
    to_line: {
        /// ```
        /// use serve_command::v1::Command;
        /// let cmd = Command::Prompt { text: "fix it".into(), submission_id: None };
        /// assert_eq!(cmd.to_line(), "{\"command\":\"prompt\",\"text\":\"fix it\"}\n");
        /// ```
    },
    write_line: {} {
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
    },
    display: {} {
        /// ```
        /// use serve_command::v1::Command;
        /// let cmd = Command::GoalSet { text: "say \"hi\"\n".into(), auto: true };
        /// assert_eq!(cmd.to_string(), r#"{"command":"goal","action":"set","text":"say \"hi\"\n","auto":true}"#);
        /// assert_eq!(format!("{cmd}\n"), cmd.to_line());
        /// ```
    },
}
