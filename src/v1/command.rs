//! The command type, and the shape of its wire line.

use crate::revision::{sealed::Sealed, Revision};
use crate::v1::{decode, encode, value, ParseError};
use crate::LineError;
use std::io;

/// How a mid-turn steer reaches the model. The wire spells these
/// `"prompt"` and `"command"`.
///
/// There is deliberately no `Notice`: the engine synthesizes notices for
/// itself, and no controller may send one.
///
/// `#[non_exhaustive]`: the reference has grown kinds before.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[non_exhaustive]
pub enum SteerKind {
    /// `"prompt"`: the text reaches the model as a user message. What a
    /// `steer` without a `kind` means.
    Prompt,
    /// `"command"`: the text is a slash command.
    Command,
}

impl SteerKind {
    /// The wire spelling: `"prompt"` or `"command"`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            SteerKind::Prompt => "prompt",
            SteerKind::Command => "command",
        }
    }
}

/// One command a controller writes to the engine's stdin.
///
/// Decode with [`Command::from_slice`] (a raw line), [`Command::parse`] (a
/// `serde_json::Value`), `str::parse`, or `Deserialize`; they agree on every
/// input. Encode with [`Command::to_line`], [`Command::write_line`] or
/// `Serialize` (with `serde_json`); they write the same bytes.
/// [`Command::to_json`] gives the same object as a `serde_json::Value`.
///
/// `#[non_exhaustive]`: the reference has grown commands before (`goal`,
/// `approval`), and a new one in a minor release must not break an engine's
/// `match`. Give it a wildcard arm that answers the way an unknown command
/// deserves.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[non_exhaustive]
pub enum Command {
    /// `{"command":"prompt","text":T}`, or `...,"submission_id":S}` when
    /// tagged. The tag lets the controller reconcile a delivery by exact id;
    /// absent means untagged, which is what every prompt was before the tag.
    Prompt {
        /// What the user said.
        text: String,
        /// The submitting controller's tag for this prompt, if any.
        submission_id: Option<String>,
    },
    /// `{"command":"steer","kind":K,"text":T}`: a mid-turn steer. A steer
    /// without `kind` is a prompt steer (the field arrived after the command).
    Steer {
        /// How the steer reaches the model.
        kind: SteerKind,
        /// The steer's text.
        text: String,
    },
    /// `{"command":"compact"}`: compact the conversation.
    Compact,
    /// `{"command":"cancel"}`: cancel the running turn.
    Cancel,
    /// `{"command":"goal","action":"set","text":T}`, or `...,"auto":true}`
    /// when armed. A blank goal is well-formed; refusing it is the engine's
    /// policy, not the wire's.
    GoalSet {
        /// The goal.
        text: String,
        /// Arms autonomous continuation toward the goal. Only JSON `true`
        /// arms it.
        auto: bool,
    },
    /// `{"command":"goal","action":"clear"}`.
    GoalClear,
    /// `{"command":"approval","id":I,"allow":B}`: the answer to an
    /// `approval_requested` event, addressed by that event's `id`. Both
    /// fields are required: a guess would settle a permission prompt.
    ApprovalDecision {
        /// The `id` of the `approval_requested` event this answers.
        id: String,
        /// Whether the single action asked about may go ahead.
        allow: bool,
    },
}

/// A value in the wire line: a string or a boolean.
#[derive(Clone, Copy)]
pub(crate) enum Val<'a> {
    Str(&'a str),
    Bool(bool),
}

impl Command {
    /// The command's wire name, the value of its `"command"` key: `"prompt"`,
    /// `"steer"`, `"compact"`, `"cancel"`, `"goal"` (for both goal
    /// variants) or `"approval"`.
    ///
    /// ```
    /// use serve_command::Command;
    /// assert_eq!(Command::GoalClear.name(), "goal");
    /// ```
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Command::Prompt { .. } => "prompt",
            Command::Steer { .. } => "steer",
            Command::Compact => "compact",
            Command::Cancel => "cancel",
            Command::GoalSet { .. } | Command::GoalClear => "goal",
            Command::ApprovalDecision { .. } => "approval",
        }
    }

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

    /// Decodes a JSON value, exactly as the reference's `Command::parse`.
    ///
    /// ```
    /// use serve_command::{Command, ParseError};
    /// let v = serde_json::json!({"command": "steer", "text": "look at tests"});
    /// assert_eq!(
    ///     Command::parse(&v),
    ///     Ok(Command::Steer { kind: serve_command::SteerKind::Prompt, text: "look at tests".into() }),
    /// );
    /// let v = serde_json::json!({"command": "approval", "id": "a1"});
    /// assert_eq!(Command::parse(&v), Err(ParseError::ExpectedAllow));
    /// ```
    #[must_use = "a command, or why the value is not one"]
    pub fn parse(value: &serde_json::Value) -> Result<Command, ParseError> {
        value::parse(value)
    }

    /// The command as a JSON object with the keys and values of
    /// [`Command::to_line`] (the reference's `to_json`).
    ///
    /// A `serde_json::Value` object does not keep its keys in order unless
    /// `serde_json`'s `preserve_order` feature is on: printed, it has the
    /// keys sorted (`{"action":"set","auto":true,"command":"goal",...}`).
    /// For the canonical line, use [`Command::to_line`],
    /// [`Command::write_line`], or `serde_json::to_string(&command)`
    /// (`Serialize` writes the wire's key order).
    ///
    /// ```
    /// use serve_command::Command;
    /// let cmd = Command::GoalSet { text: "ship".into(), auto: true };
    /// assert_eq!(cmd.to_json()["auto"], true);
    /// assert_eq!(
    ///     serde_json::to_string(&cmd.to_json())?,
    ///     r#"{"action":"set","auto":true,"command":"goal","text":"ship"}"#,
    /// );
    /// assert_eq!(serde_json::to_string(&cmd)? + "\n", cmd.to_line());
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    #[must_use]
    pub fn to_json(&self) -> serde_json::Value {
        value::to_json(self)
    }

    /// Decodes one raw line, with or without its trailing `"\n"`.
    ///
    /// The line must be JSON as the reference's parser sees it (else
    /// [`LineError::Syntax`]) and a command (else [`LineError::Command`]).
    /// Never builds a `serde_json::Value`; allocates only the strings the
    /// command owns.
    ///
    /// ```
    /// use serve_command::Command;
    /// let cmd = Command::from_slice(b"{\"command\":\"goal\",\"action\":\"clear\"}\n")?;
    /// assert_eq!(cmd, Command::GoalClear);
    /// # Ok::<(), serve_command::LineError>(())
    /// ```
    #[must_use = "a command, or why the line is not one"]
    pub fn from_slice(line: &[u8]) -> Result<Command, LineError> {
        decode::from_slice(line)
    }

    /// The wire line: compact JSON in the reference's key order, ending in
    /// exactly one `"\n"` (a raw LF can never appear inside: strings escape
    /// it). Allocates once.
    ///
    /// ```
    /// use serve_command::Command;
    /// let cmd = Command::Prompt { text: "fix it".into(), submission_id: None };
    /// assert_eq!(cmd.to_line(), "{\"command\":\"prompt\",\"text\":\"fix it\"}\n");
    /// ```
    #[must_use]
    pub fn to_line(&self) -> String {
        encode::to_line(self)
    }

    /// Writes the same bytes as [`Command::to_line`] to `out`, without
    /// allocating.
    ///
    /// The line is gathered in a buffer on the stack and reaches `out` in a
    /// single `write_all` when it is up to 8 KiB long (on an unbuffered pipe,
    /// one `write` system call, so that lines written to one pipe by several
    /// threads do not interleave), and in one `write_all` per 8 KiB at most
    /// when it is longer: every write but the last is of a full 8 KiB
    /// buffer.
    ///
    /// So writing each command straight to a child's stdin or a socket costs
    /// one system call per command. A [`BufWriter`](io::BufWriter) around
    /// `out` still helps when many commands are written in a burst and can
    /// share a call (flush it after the last one), or when `out` is slow per
    /// call whatever the size; it costs one more copy of every line.
    ///
    /// # Errors
    ///
    /// Any error `out` returns; what reached it before is not taken back.
    pub fn write_line<W: io::Write>(&self, out: W) -> io::Result<()> {
        encode::write_line(self, out)
    }
}

impl Sealed for Command {}

impl Revision for Command {
    type ParseError = ParseError;

    #[inline]
    fn decode_line(line: &[u8]) -> Result<Command, LineError> {
        decode::from_slice(line)
    }

    #[inline]
    fn encode_line<W: io::Write>(&self, out: W) -> io::Result<()> {
        self.write_line(out)
    }
}

impl std::str::FromStr for Command {
    type Err = LineError;

    /// Same as [`Command::from_slice`] on the string's bytes.
    fn from_str(line: &str) -> Result<Command, LineError> {
        Command::from_slice(line.as_bytes())
    }
}
