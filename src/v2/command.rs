//! The later revision's command type, the shape of its wire line, and the
//! crossings to and from the seed's revision.

use crate::revision::{sealed::Sealed, Revision};
use crate::v2::{decode, encode, value, Content, ContentPart, ParseError};
use crate::{LineError, SteerKind};
use std::{fmt, io};

/// One command a controller writes to the engine's stdin, in the later
/// revision: messages carry [`Content`] (text and images), a steer may be
/// tagged, and background jobs can be listed and stopped.
///
/// Decode with [`Command::from_slice`], [`Command::parse`], `str::parse` or
/// `Deserialize`; encode with [`Command::to_line`], [`Command::write_line`]
/// or `Serialize`. They agree as the seed revision's do.
///
/// Like the reference's type, it can hold job fields the decoder refuses
/// (an empty `request_id`, a `job_id` of `..`): the line is written as it
/// is, and the engine answers `invalid background job command`.
///
/// `#[non_exhaustive]`: the reference has grown commands before.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Command {
    /// `{"command":"prompt","content":C}`, or `...,"submission_id":S}` when
    /// tagged.
    Prompt {
        /// What the user said.
        content: Content,
        /// The submitting controller's tag for this prompt, if any.
        submission_id: Option<String>,
    },
    /// `{"command":"steer","kind":K,"content":C}`, or
    /// `...,"submission_id":S}` when tagged. A steer without `kind` is a
    /// prompt steer.
    Steer {
        /// How the steer reaches the model.
        kind: SteerKind,
        /// The steer's content.
        content: Content,
        /// The submitting controller's tag for this steer, if any.
        submission_id: Option<String>,
    },
    /// `{"command":"compact"}`.
    Compact,
    /// `{"command":"cancel"}`.
    Cancel,
    /// `{"command":"jobs_snapshot","request_id":R}`: list the background
    /// jobs; the answer carries `request_id` (non-empty).
    JobsSnapshot {
        /// The controller's id for the answer.
        request_id: String,
    },
    /// `{"command":"job_stop","request_id":R,"generation":G,"job_id":J}`:
    /// stop one background job. `generation` and `job_id` are 1 to 200 of
    /// `[A-Za-z0-9._-]`, neither `.` nor `..`.
    JobStop {
        /// The controller's id for the answer (non-empty).
        request_id: String,
        /// The job's generation.
        generation: String,
        /// The job's id.
        job_id: String,
    },
    /// `{"command":"goal","action":"set","text":T}`, or `...,"auto":true}`.
    GoalSet {
        /// The goal.
        text: String,
        /// Arms autonomous continuation toward the goal.
        auto: bool,
    },
    /// `{"command":"goal","action":"clear"}`.
    GoalClear,
    /// `{"command":"approval","id":I,"allow":B}`.
    ApprovalDecision {
        /// The `id` of the `approval_requested` event this answers.
        id: String,
        /// Whether the single action asked about may go ahead.
        allow: bool,
    },
}

/// A value in the wire line.
#[derive(Clone, Copy)]
pub(crate) enum Val<'a> {
    Str(&'a str),
    Bool(bool),
    Content(&'a Content),
}

impl Command {
    /// The command's wire name: `"prompt"`, `"steer"`, `"compact"`,
    /// `"cancel"`, `"jobs_snapshot"`, `"job_stop"`, `"goal"` or
    /// `"approval"`.
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Command::Prompt { .. } => "prompt",
            Command::Steer { .. } => "steer",
            Command::Compact => "compact",
            Command::Cancel => "cancel",
            Command::JobsSnapshot { .. } => "jobs_snapshot",
            Command::JobStop { .. } => "job_stop",
            Command::GoalSet { .. } | Command::GoalClear => "goal",
            Command::ApprovalDecision { .. } => "approval",
        }
    }

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

    /// Decodes a JSON value, exactly as the reference's `Command::parse`.
    ///
    /// ```
    /// use serve_command::v2::{Command, Content, ParseError};
    /// let v = serde_json::json!({"command": "prompt", "text": "hi"});
    /// assert_eq!(Command::parse(&v), Ok(Command::Prompt { content: Content::from("hi"), submission_id: None }));
    /// let v = serde_json::json!({"command": "prompt", "content": 7, "text": "hi"});
    /// assert_eq!(
    ///     Command::parse(&v).unwrap_err().to_string(),
    ///     "invalid content: JsonDecodeError((, expected content string or array))",
    /// );
    /// ```
    #[must_use = "a command, or why the value is not one"]
    pub fn parse(value: &serde_json::Value) -> Result<Command, ParseError> {
        value::parse(value)
    }

    /// The command as a JSON object with the keys and values of
    /// [`Command::to_line`] (key order is `serde_json`'s).
    #[must_use]
    pub fn to_json(&self) -> serde_json::Value {
        value::to_json(self)
    }

    /// Decodes one raw line, with or without its trailing `"\n"`. Never
    /// builds a `serde_json::Value`; allocates only what the command owns
    /// (and a list of the parts while they are checked). Image data without
    /// escapes is decoded straight from the line.
    ///
    /// ```
    /// use serve_command::v2::{Command, ContentPart};
    /// let line = br#"{"command":"prompt","content":[{"type":"text","text":"see"},{"type":"image","media_type":"image/png","data":"iVBORw0KGgo="}]}"#;
    /// let Command::Prompt { content, .. } = Command::from_slice(line)? else { panic!() };
    /// assert!(matches!(content.parts(), [ContentPart::Text(_), ContentPart::Image(_)]));
    /// # Ok::<(), serve_command::LineError<serve_command::v2::ParseError>>(())
    /// ```
    #[must_use = "a command, or why the line is not one"]
    pub fn from_slice(line: &[u8]) -> Result<Command, LineError<ParseError>> {
        decode::from_slice(line)
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
        encode::to_line(self)
    }

    /// Writes the same bytes as [`Command::to_line`] to `out`, without
    /// allocating (image data is base64-encoded straight
    /// into the buffer).
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
    fn decode_line(line: &[u8]) -> Result<Command, LineError<ParseError>> {
        decode::from_slice(line)
    }

    #[inline]
    fn encode_line<W: io::Write>(&self, out: W) -> io::Result<()> {
        self.write_line(out)
    }
}

impl std::str::FromStr for Command {
    type Err = LineError<ParseError>;

    /// Same as [`Command::from_slice`] on the string's bytes.
    fn from_str(line: &str) -> Result<Command, LineError<ParseError>> {
        Command::from_slice(line.as_bytes())
    }
}

impl From<crate::Command> for Command {
    /// Every seed command has a form here: its `text` becomes one text part.
    /// Its canonical line, decoded by this revision, is this command.
    fn from(cmd: crate::Command) -> Command {
        use crate::Command as V1;
        match cmd {
            V1::Prompt {
                text,
                submission_id,
            } => Command::Prompt {
                content: text.into(),
                submission_id,
            },
            V1::Steer { kind, text } => Command::Steer {
                kind,
                content: text.into(),
                submission_id: None,
            },
            V1::Compact => Command::Compact,
            V1::Cancel => Command::Cancel,
            V1::GoalSet { text, auto } => Command::GoalSet { text, auto },
            V1::GoalClear => Command::GoalClear,
            V1::ApprovalDecision { id, allow } => Command::ApprovalDecision { id, allow },
            // `v1::Command` is non-exhaustive only to the crate's users.
        }
    }
}

/// What a later-revision command carries that the seed revision cannot:
/// the error of `TryFrom<v2::Command> for Command`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NotInV1 {
    /// Content with an image part.
    Image,
    /// Content of no part, or of more than one (all text).
    Parts(usize),
    /// A steer's `submission_id`.
    SteerTag,
    /// `jobs_snapshot` or `job_stop`, by name.
    JobCommand(&'static str),
}

impl fmt::Display for NotInV1 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the seed revision cannot carry ")?;
        match self {
            NotInV1::Image => f.write_str("an image"),
            NotInV1::Parts(0) => f.write_str("content of no part"),
            NotInV1::Parts(n) => write!(f, "content of {n} parts"),
            NotInV1::SteerTag => f.write_str("a steer's submission_id"),
            NotInV1::JobCommand(name) => write!(f, "the {name} command"),
        }
    }
}

impl std::error::Error for NotInV1 {}

/// The one text of content the seed revision can carry.
fn single_text(content: Content) -> Result<String, NotInV1> {
    let mut parts = content.into_parts();
    if parts.iter().any(|p| matches!(p, ContentPart::Image(_))) {
        return Err(NotInV1::Image);
    }
    match (parts.pop(), parts.is_empty()) {
        (Some(ContentPart::Text(text)), true) => Ok(text),
        (last, _) => Err(NotInV1::Parts(parts.len() + usize::from(last.is_some()))),
    }
}

impl TryFrom<Command> for crate::Command {
    type Error = NotInV1;

    /// The seed revision's form of a command that carries nothing it cannot:
    /// content of exactly one text part, no steer tag, no job command.
    ///
    /// ```
    /// use serve_command::v2::{self, NotInV1};
    /// let steer = v2::Command::Steer { kind: serve_command::SteerKind::Prompt, content: "go".into(), submission_id: Some("s".into()) };
    /// assert_eq!(serve_command::Command::try_from(steer), Err(NotInV1::SteerTag));
    /// ```
    fn try_from(cmd: Command) -> Result<crate::Command, NotInV1> {
        use crate::Command as V1;
        Ok(match cmd {
            Command::Prompt {
                content,
                submission_id,
            } => V1::Prompt {
                text: single_text(content)?,
                submission_id,
            },
            Command::Steer {
                submission_id: Some(_),
                ..
            } => return Err(NotInV1::SteerTag),
            Command::Steer {
                kind,
                content,
                submission_id: None,
            } => V1::Steer {
                kind,
                text: single_text(content)?,
            },
            Command::Compact => V1::Compact,
            Command::Cancel => V1::Cancel,
            cmd @ (Command::JobsSnapshot { .. } | Command::JobStop { .. }) => {
                return Err(NotInV1::JobCommand(cmd.name()))
            }
            Command::GoalSet { text, auto } => V1::GoalSet { text, auto },
            Command::GoalClear => V1::GoalClear,
            Command::ApprovalDecision { id, allow } => V1::ApprovalDecision { id, allow },
        })
    }
}

#[cfg(feature = "arbitrary")]
impl<'a> arbitrary::Arbitrary<'a> for Command {
    /// Any command the decoder reads back: job fields are drawn valid (the
    /// type could hold others, which no line round-trips).
    fn arbitrary(u: &mut arbitrary::Unstructured<'a>) -> arbitrary::Result<Command> {
        fn component(u: &mut arbitrary::Unstructured<'_>) -> arbitrary::Result<String> {
            const ALPHABET: &[u8] =
                b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-";
            let len = u.int_in_range(1..=200)?;
            let mut s = String::with_capacity(len);
            for _ in 0..len {
                s.push(char::from(*u.choose(ALPHABET)?));
            }
            if s == "." || s == ".." {
                s.push('0');
            }
            Ok(s)
        }
        fn request_id(u: &mut arbitrary::Unstructured<'_>) -> arbitrary::Result<String> {
            let mut id: String = u.arbitrary()?;
            if id.is_empty() {
                id.push('r');
            }
            Ok(id)
        }
        Ok(match u.int_in_range(0..=8)? {
            0 => Command::Prompt {
                content: u.arbitrary()?,
                submission_id: u.arbitrary()?,
            },
            1 => Command::Steer {
                kind: u.arbitrary()?,
                content: u.arbitrary()?,
                submission_id: u.arbitrary()?,
            },
            2 => Command::Compact,
            3 => Command::Cancel,
            4 => Command::JobsSnapshot {
                request_id: request_id(u)?,
            },
            5 => Command::JobStop {
                request_id: request_id(u)?,
                generation: component(u)?,
                job_id: component(u)?,
            },
            6 => Command::GoalSet {
                text: u.arbitrary()?,
                auto: u.arbitrary()?,
            },
            7 => Command::GoalClear,
            _ => Command::ApprovalDecision {
                id: u.arbitrary()?,
                allow: u.arbitrary()?,
            },
        })
    }
}
