//! The command type, and the shape of its wire line.

use crate::{LineError, ParseError};
use std::io;

/// How a mid-turn steer reaches the model. The wire spells these
/// `"prompt"` and `"command"`.
///
/// There is deliberately no `Notice`: the engine synthesizes notices for
/// itself, and no controller may send one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum SteerKind {
    /// `"prompt"`: the text reaches the model as a user message. What a
    /// `steer` without a `kind` means.
    Prompt,
    /// `"command"`: the text is a slash command.
    Command,
}

impl SteerKind {
    /// The wire spelling: `"prompt"` or `"command"`.
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
/// input. Encode with [`Command::to_line`], [`Command::write_line`],
/// [`Command::to_json`] or `Serialize`; they agree byte for byte.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
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
                entry("command", Str("prompt"))?;
                entry("text", Str(text))?;
                // Written only when tagged: the untagged line stays what every
                // controller has always written.
                if let Some(id) = submission_id {
                    entry("submission_id", Str(id))?;
                }
            }
            Command::Steer { kind, text } => {
                entry("command", Str("steer"))?;
                entry("kind", Str(kind.as_str()))?;
                entry("text", Str(text))?;
            }
            Command::Compact => entry("command", Str("compact"))?,
            Command::Cancel => entry("command", Str("cancel"))?,
            Command::GoalSet { text, auto } => {
                entry("command", Str("goal"))?;
                entry("action", Str("set"))?;
                entry("text", Str(text))?;
                // Written only when armed: absent is what `false` has always
                // looked like on this wire.
                if *auto {
                    entry("auto", Bool(true))?;
                }
            }
            Command::GoalClear => {
                entry("command", Str("goal"))?;
                entry("action", Str("clear"))?;
            }
            Command::ApprovalDecision { id, allow } => {
                entry("command", Str("approval"))?;
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
    pub fn parse(value: &serde_json::Value) -> Result<Command, ParseError> {
        crate::value::parse(value)
    }

    /// The command as a JSON object, the same object [`Command::to_line`]
    /// writes (the reference's `to_json`).
    pub fn to_json(&self) -> serde_json::Value {
        crate::value::to_json(self)
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
    pub fn from_slice(line: &[u8]) -> Result<Command, LineError> {
        crate::decode::from_slice(line)
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
    pub fn to_line(&self) -> String {
        crate::encode::to_line(self)
    }

    /// Writes the same bytes as [`Command::to_line`] to `out`, without
    /// allocating. A line of up to 512 bytes reaches `out` in a single
    /// `write_all`; longer ones in a few.
    pub fn write_line<W: io::Write>(&self, out: W) -> io::Result<()> {
        let mut sink = crate::encode::StackBuf::new(out);
        crate::encode::write_command(self, &mut sink)?;
        sink.finish()
    }
}

impl std::str::FromStr for Command {
    type Err = LineError;

    /// Same as [`Command::from_slice`] on the string's bytes.
    fn from_str(line: &str) -> Result<Command, LineError> {
        Command::from_slice(line.as_bytes())
    }
}
