//! The command type, and the shape of its wire line.

/// How a mid-turn steer reaches the model. The wire spells these
/// `"prompt"` and `"command"`.
///
/// There is deliberately no `Notice`: the engine synthesizes notices for
/// itself, and no controller may send one.
///
/// `#[non_exhaustive]`: the reference has grown kinds before.
///
/// `Display`, `FromStr` and serde use the wire spelling, case-sensitive as
/// the wire is; `Default` is [`SteerKind::Prompt`], what a `steer` without
/// `kind` means.
///
/// ```
/// use serve_command::v1::{ParseError, SteerKind};
/// assert_eq!(SteerKind::Command.to_string(), "command");
/// assert_eq!("prompt".parse(), Ok(SteerKind::Prompt));
/// assert_eq!("Prompt".parse::<SteerKind>(), Err(ParseError::UnknownSteerKind("Prompt".into())));
/// assert_eq!(SteerKind::default(), SteerKind::Prompt);
/// assert_eq!(serde_json::to_string(&SteerKind::Command)?, "\"command\"");
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[non_exhaustive]
pub enum SteerKind {
    /// `"prompt"`: the text reaches the model as a user message. What a
    /// `steer` without a `kind` means, so the `Default`.
    #[default]
    Prompt,
    /// `"command"`: the text is a slash command.
    Command,
}

impl SteerKind {
    /// The wire spelling: `"prompt"` or `"command"`.
    ///
    /// ```
    /// use serve_command::v1::SteerKind;
    /// assert_eq!(SteerKind::Prompt.as_str(), "prompt");
    /// ```
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            SteerKind::Prompt => "prompt",
            SteerKind::Command => "command",
        }
    }
}

impl std::fmt::Display for SteerKind {
    /// The wire spelling, [`SteerKind::as_str`].
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One command a controller writes to the engine's stdin.
///
/// Decode with [`Command::from_slice`] (a raw line), [`Command::from_json`] (a
/// `serde_json::Value`), `str::parse`, or `Deserialize`; they agree on every
/// input. Encode with [`Command::to_line`], [`Command::write_line`] or
/// `Serialize` (with `serde_json`); they write the same bytes.
/// [`Command::to_json`] gives the same object as a `serde_json::Value`.
///
/// `#[non_exhaustive]` as v2's is, so that an engine's `match` has the same
/// wildcard arm in either revision. The revision itself is frozen: no
/// command or field is added to it (which is why its variants, unlike
/// v2's, are built with struct literals; see [the module](crate::v1)).
///
/// ```
/// use serve_command::v1::{Command, SteerKind};
/// let cmd = Command::Steer { kind: SteerKind::Command, text: "/compact".into() };
/// let line = cmd.to_line();
/// assert_eq!(line, "{\"command\":\"steer\",\"kind\":\"command\",\"text\":\"/compact\"}\n");
/// assert_eq!(Command::from_slice(line.as_bytes()), Ok(cmd));
/// ```
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

impl Command {
    /// The command's wire name, the value of its `"command"` key: `"prompt"`,
    /// `"steer"`, `"compact"`, `"cancel"`, `"goal"` (for both goal
    /// variants) or `"approval"`.
    ///
    /// ```
    /// use serve_command::v1::Command;
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
}
