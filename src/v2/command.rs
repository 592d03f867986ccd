//! The later revision's command type, the shape of its wire line, and the
//! crossings to and from v1.

use crate::v1::SteerKind;
use crate::v2::Content;
use std::fmt;

/// One command a controller writes to the engine's stdin, in the later
/// revision: messages carry [`Content`] (text and images), a steer may be
/// tagged, and background jobs can be listed and stopped.
///
/// Decode with [`Command::from_slice`], [`Command::from_json`], `str::parse` or
/// `Deserialize`; encode with [`Command::to_line`], [`Command::write_line`]
/// or `Serialize`. They agree as v1's do.
///
/// Like the reference's type, it can hold job fields the decoder refuses
/// (an empty `request_id`, a `job_id` of `..`): the line is written as it
/// is, and the engine answers `invalid background job command`.
///
/// There is no prediction command: since upstream fdf10827 the engine
/// predicts by itself after a successful idle turn, and `predict` and
/// `cancel_prediction` are `unknown command: ...` like any other name.
///
/// `#[non_exhaustive]`, the enum and each variant with fields: upstream
/// has grown commands and fields before, and adding either in a minor
/// release must not break a user. So a command with fields is built with
/// its constructor ([`Command::prompt`], [`Command::steer`],
/// [`Command::jobs_snapshot`], [`Command::job_stop`],
/// [`Command::goal_set`], [`Command::goal_set_auto`], [`Command::allow`],
/// [`Command::reject`]; tagged, [`Command::prompt_tagged`] and
/// [`Command::steer_tagged`]), a `match` has a wildcard arm, and a pattern of a
/// variant with fields ends in `..`.
///
/// ```
/// use serve_command::v2::{Command, SteerKind};
/// let cmd = Command::steer_tagged(SteerKind::Prompt, "go on", "s1");
/// let line = cmd.to_line();
/// assert_eq!(line, "{\"command\":\"steer\",\"kind\":\"prompt\",\"content\":\"go on\",\"submission_id\":\"s1\"}\n");
/// assert_eq!(Command::from_slice(line.as_bytes()), Ok(cmd.clone()));
/// // Fields are read through a pattern that ends in `..`.
/// match cmd {
///     Command::Steer { kind, submission_id: Some(id), .. } => assert_eq!((kind, id.as_str()), (SteerKind::Prompt, "s1")),
///     other => panic!("not a tagged steer: {other:?}"),
/// }
/// ```
///
/// Every command, built as a user outside the crate builds it:
///
/// ```
/// use serve_command::v2::{Command, SteerKind};
/// let commands = [
///     Command::prompt("fix it"),
///     Command::steer(SteerKind::Command, "/compact"),
///     Command::Compact,
///     Command::Cancel,
///     Command::jobs_snapshot("r1"),
///     Command::job_stop("r2", "g1", "job-7"),
///     Command::goal_set_auto("ship it"),
///     Command::GoalClear,
///     Command::reject("a1"),
/// ];
/// let names: Vec<&str> = commands.iter().map(Command::name).collect();
/// assert_eq!(names, ["prompt", "steer", "compact", "cancel", "jobs_snapshot", "job_stop", "goal", "goal", "approval"]);
/// for cmd in commands {
///     assert_eq!(Command::from_slice(cmd.to_line().as_bytes()), Ok(cmd));
/// }
/// ```
///
/// A struct literal of a variant with fields does not compile outside the
/// crate (E0639), so a new field is no breaking change:
///
/// ```compile_fail,E0639
/// use serve_command::v2::Command;
/// let cmd = Command::JobsSnapshot { request_id: "r".into() };
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Command {
    /// `{"command":"prompt","content":C}`, or `...,"submission_id":S}` when
    /// tagged.
    #[non_exhaustive]
    Prompt {
        /// What the user said.
        content: Content,
        /// The submitting controller's tag for this prompt, if any.
        submission_id: Option<String>,
    },
    /// `{"command":"steer","kind":K,"content":C}`, or
    /// `...,"submission_id":S}` when tagged. A steer without `kind` is a
    /// prompt steer.
    #[non_exhaustive]
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
    #[non_exhaustive]
    JobsSnapshot {
        /// The controller's id for the answer.
        request_id: String,
    },
    /// `{"command":"job_stop","request_id":R,"generation":G,"job_id":J}`:
    /// stop one background job. `generation` and `job_id` are 1 to 200 of
    /// `[A-Za-z0-9._-]`, neither `.` nor `..`.
    #[non_exhaustive]
    JobStop {
        /// The controller's id for the answer (non-empty).
        request_id: String,
        /// The job's generation.
        generation: String,
        /// The job's id.
        job_id: String,
    },
    /// `{"command":"goal","action":"set","text":T}`, or `...,"auto":true}`.
    #[non_exhaustive]
    GoalSet {
        /// The goal.
        text: String,
        /// Arms autonomous continuation toward the goal.
        auto: bool,
    },
    /// `{"command":"goal","action":"clear"}`.
    GoalClear,
    /// `{"command":"approval","id":I,"allow":B}`.
    #[non_exhaustive]
    ApprovalDecision {
        /// The `id` of the `approval_requested` event this answers.
        id: String,
        /// Whether the single action asked about may go ahead.
        allow: bool,
    },
}

/// The constructors, one per variant with fields, named after it: the only
/// way to build those variants outside the crate (they are
/// `#[non_exhaustive]`). A field upstream adds gets its default here, so
/// code that builds commands keeps compiling.
impl Command {
    /// An untagged `prompt` of `content`: a string, an [`Image`](crate::v2::Image),
    /// or parts. Tagged: [`Command::prompt_tagged`].
    ///
    /// ```
    /// use serve_command::v2::Command;
    /// assert_eq!(Command::prompt("fix it").to_line(), "{\"command\":\"prompt\",\"content\":\"fix it\"}\n");
    /// ```
    #[must_use]
    pub fn prompt(content: impl Into<Content>) -> Command {
        Command::Prompt {
            content: content.into(),
            submission_id: None,
        }
    }

    /// An untagged `steer` of `kind` and `content`. Tagged:
    /// [`Command::steer_tagged`].
    ///
    /// ```
    /// use serve_command::v2::{Command, SteerKind};
    /// assert_eq!(
    ///     Command::steer(SteerKind::Command, "/compact").to_line(),
    ///     "{\"command\":\"steer\",\"kind\":\"command\",\"content\":\"/compact\"}\n",
    /// );
    /// ```
    #[must_use]
    pub fn steer(kind: SteerKind, content: impl Into<Content>) -> Command {
        Command::Steer {
            kind,
            content: content.into(),
            submission_id: None,
        }
    }

    /// `jobs_snapshot`: list the background jobs, the answer carrying
    /// `request_id`.
    ///
    /// ```
    /// use serve_command::v2::Command;
    /// assert_eq!(Command::jobs_snapshot("r1").to_line(), "{\"command\":\"jobs_snapshot\",\"request_id\":\"r1\"}\n");
    /// ```
    #[must_use]
    pub fn jobs_snapshot(request_id: impl Into<String>) -> Command {
        Command::JobsSnapshot {
            request_id: request_id.into(),
        }
    }

    /// `job_stop`: stop the job `job_id` of `generation`, the answer
    /// carrying `request_id`.
    ///
    /// ```
    /// use serve_command::v2::Command;
    /// assert_eq!(
    ///     Command::job_stop("r2", "g1", "job-7").to_line(),
    ///     "{\"command\":\"job_stop\",\"request_id\":\"r2\",\"generation\":\"g1\",\"job_id\":\"job-7\"}\n",
    /// );
    /// ```
    #[must_use]
    pub fn job_stop(
        request_id: impl Into<String>,
        generation: impl Into<String>,
        job_id: impl Into<String>,
    ) -> Command {
        Command::JobStop {
            request_id: request_id.into(),
            generation: generation.into(),
            job_id: job_id.into(),
        }
    }

    /// `goal` with `action` `set`: the goal `text`, for the engine to keep
    /// in view. [`Command::goal_set_auto`] also arms autonomous
    /// continuation toward it.
    ///
    /// ```
    /// use serve_command::v2::Command;
    /// assert_eq!(Command::goal_set("ship it").to_line(), "{\"command\":\"goal\",\"action\":\"set\",\"text\":\"ship it\"}\n");
    /// ```
    #[must_use]
    pub fn goal_set(text: impl Into<String>) -> Command {
        Command::GoalSet {
            text: text.into(),
            auto: false,
        }
    }

    /// `goal` with `action` `set` and `"auto":true`: the goal `text`, with
    /// autonomous continuation armed, so the engine starts turns toward it
    /// (`goal_continue`) until it is met or its budget is spent.
    ///
    /// ```
    /// use serve_command::v2::Command;
    /// assert_eq!(
    ///     Command::goal_set_auto("ship it").to_line(),
    ///     "{\"command\":\"goal\",\"action\":\"set\",\"text\":\"ship it\",\"auto\":true}\n",
    /// );
    /// ```
    #[must_use]
    pub fn goal_set_auto(text: impl Into<String>) -> Command {
        Command::GoalSet {
            text: text.into(),
            auto: true,
        }
    }

    /// `approval` allowing the tool call the `approval_requested` event `id`
    /// asked about ([`Command::ApprovalDecision`], `"allow":true`).
    ///
    /// ```
    /// use serve_command::v2::Command;
    /// assert_eq!(Command::allow("a1").to_line(), "{\"command\":\"approval\",\"id\":\"a1\",\"allow\":true}\n");
    /// ```
    #[must_use]
    pub fn allow(id: impl Into<String>) -> Command {
        Command::ApprovalDecision {
            id: id.into(),
            allow: true,
        }
    }

    /// `approval` rejecting the tool call the `approval_requested` event
    /// `id` asked about ([`Command::ApprovalDecision`], `"allow":false`).
    ///
    /// ```
    /// use serve_command::v2::Command;
    /// assert_eq!(Command::reject("a1").to_line(), "{\"command\":\"approval\",\"id\":\"a1\",\"allow\":false}\n");
    /// ```
    #[must_use]
    pub fn reject(id: impl Into<String>) -> Command {
        Command::ApprovalDecision {
            id: id.into(),
            allow: false,
        }
    }

    /// The command with its `submission_id` set, for a [`Command::Prompt`]
    /// or a [`Command::Steer`]; any other command is returned unchanged,
    /// silently: build a tagged command with [`Command::prompt_tagged`] or
    /// [`Command::steer_tagged`] instead.
    #[deprecated(
        since = "0.1.0",
        note = "does nothing on a command that carries no tag: use Command::prompt_tagged or Command::steer_tagged"
    )]
    #[must_use]
    pub fn tagged(mut self, submission_id: impl Into<String>) -> Command {
        if let Command::Prompt {
            submission_id: tag, ..
        }
        | Command::Steer {
            submission_id: tag, ..
        } = &mut self
        {
            *tag = Some(submission_id.into());
        }
        self
    }

    /// A `prompt` of `content` tagged `submission_id`: the controller's id
    /// for it, to reconcile its delivery by.
    ///
    /// ```
    /// use serve_command::v2::Command;
    /// assert_eq!(
    ///     Command::prompt_tagged("hi", "sub-1").to_line(),
    ///     "{\"command\":\"prompt\",\"content\":\"hi\",\"submission_id\":\"sub-1\"}\n",
    /// );
    /// ```
    #[must_use]
    pub fn prompt_tagged(content: impl Into<Content>, submission_id: impl Into<String>) -> Command {
        Command::Prompt {
            content: content.into(),
            submission_id: Some(submission_id.into()),
        }
    }

    /// A `steer` of `kind` and `content` tagged `submission_id` (the
    /// engine's `steer_applied` or `steer_dropped` carries it back).
    ///
    /// ```
    /// use serve_command::v2::{Command, SteerKind};
    /// assert_eq!(
    ///     Command::steer_tagged(SteerKind::Command, "/diff", "s-2").to_line(),
    ///     "{\"command\":\"steer\",\"kind\":\"command\",\"content\":\"/diff\",\"submission_id\":\"s-2\"}\n",
    /// );
    /// ```
    #[must_use]
    pub fn steer_tagged(
        kind: SteerKind,
        content: impl Into<Content>,
        submission_id: impl Into<String>,
    ) -> Command {
        Command::Steer {
            kind,
            content: content.into(),
            submission_id: Some(submission_id.into()),
        }
    }
}

impl Command {
    /// The command's wire name: `"prompt"`, `"steer"`, `"compact"`,
    /// `"cancel"`, `"jobs_snapshot"`, `"job_stop"`, `"goal"` or
    /// `"approval"`.
    ///
    /// ```
    /// use serve_command::v2::Command;
    /// assert_eq!(Command::jobs_snapshot("r1").name(), "jobs_snapshot");
    /// ```
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
}

impl From<crate::v1::Command> for Command {
    /// Every v1 command has a form here: its `text` becomes one text part.
    /// Its canonical line, decoded by this revision, is this command.
    fn from(cmd: crate::v1::Command) -> Command {
        use crate::v1::Command as V1;
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

/// What a later-revision command carries that v1 cannot:
/// why `TryFrom<v2::Command> for v1::Command` failed, the
/// [`IntoV1Error::reason`].
///
/// ```
/// use serve_command::v2::NotInV1;
/// assert_eq!(NotInV1::Parts(2).to_string(), "v1 cannot carry content of 2 parts");
/// ```
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
        f.write_str("v1 cannot carry ")?;
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

/// The error of `TryFrom<v2::Command> for v1::Command`: the command, handed
/// back whole (as `String::from_utf8` hands back its bytes), and why v1
/// cannot carry it.
///
/// `Display` is the reason's; `source()` is `None` (the reason is displayed,
/// not chained).
///
/// ```
/// use serve_command::v2::{Command, IntoV1Error, NotInV1};
/// let job = Command::jobs_snapshot("r1");
/// let err: IntoV1Error = serve_command::v1::Command::try_from(job.clone()).unwrap_err();
/// assert_eq!(err.reason(), NotInV1::JobCommand("jobs_snapshot"));
/// assert_eq!(err.to_string(), "v1 cannot carry the jobs_snapshot command");
/// assert_eq!(err.into_command(), job);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IntoV1Error {
    command: Command,
    reason: NotInV1,
}

impl IntoV1Error {
    /// Why v1 cannot carry the command.
    ///
    /// ```
    /// use serve_command::v2::{Command, NotInV1};
    /// let prompt = Command::prompt(serve_command::v2::Content::default());
    /// let err = serve_command::v1::Command::try_from(prompt).unwrap_err();
    /// assert_eq!(err.reason(), NotInV1::Parts(0));
    /// ```
    #[must_use]
    pub fn reason(&self) -> NotInV1 {
        self.reason
    }

    /// The command that did not cross, borrowed.
    ///
    /// ```
    /// use serve_command::v2::Command;
    /// let job = Command::jobs_snapshot("r1");
    /// let err = serve_command::v1::Command::try_from(job.clone()).unwrap_err();
    /// assert_eq!(err.command(), &job);
    /// ```
    #[must_use]
    pub fn command(&self) -> &Command {
        &self.command
    }

    /// The command that did not cross, unchanged, to send another way.
    ///
    /// ```
    /// use serve_command::v2::Command;
    /// let job = Command::jobs_snapshot("r1");
    /// let err = serve_command::v1::Command::try_from(job.clone()).unwrap_err();
    /// assert_eq!(err.into_command(), job);
    /// ```
    #[must_use]
    pub fn into_command(self) -> Command {
        self.command
    }
}

impl fmt::Display for IntoV1Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.reason.fmt(f)
    }
}

impl std::error::Error for IntoV1Error {}

/// Why content is not the one text v1 can carry.
fn not_single_text(content: &Content) -> NotInV1 {
    if content.is_text_only() {
        NotInV1::Parts(content.parts().len())
    } else {
        NotInV1::Image
    }
}

impl TryFrom<Command> for crate::v1::Command {
    type Error = IntoV1Error;

    /// v1's form of a command that carries nothing it cannot:
    /// content of exactly one text part, no steer tag, no job command.
    ///
    /// # Errors
    ///
    /// [`IntoV1Error`], holding the command unchanged, when it carries
    /// something v1 cannot ([`NotInV1`]): an image, content
    /// of other than one part, a steer's `submission_id`, or a job
    /// command.
    ///
    /// ```
    /// use serve_command::{v1, v2};
    /// let steer = v2::Command::steer(v2::SteerKind::Prompt, "go");
    /// assert_eq!(v1::Command::try_from(steer), Ok(v1::Command::Steer { kind: v1::SteerKind::Prompt, text: "go".into() }));
    /// let tagged = v2::Command::steer_tagged(v2::SteerKind::Prompt, "go", "s");
    /// let err = v1::Command::try_from(tagged.clone()).unwrap_err();
    /// assert_eq!(err.reason(), v2::NotInV1::SteerTag);
    /// assert_eq!(err.into_command(), tagged);
    /// ```
    fn try_from(cmd: Command) -> Result<crate::v1::Command, IntoV1Error> {
        use crate::v1::Command as V1;
        let refuse = |command: Command, reason: NotInV1| Err(IntoV1Error { command, reason });
        Ok(match cmd {
            Command::Prompt {
                content,
                submission_id,
            } => match content.into_single_text() {
                Ok(text) => V1::Prompt {
                    text,
                    submission_id,
                },
                Err(content) => {
                    let reason = not_single_text(&content);
                    return refuse(
                        Command::Prompt {
                            content,
                            submission_id,
                        },
                        reason,
                    );
                }
            },
            cmd @ Command::Steer {
                submission_id: Some(_),
                ..
            } => return refuse(cmd, NotInV1::SteerTag),
            Command::Steer {
                kind,
                content,
                submission_id: None,
            } => match content.into_single_text() {
                Ok(text) => V1::Steer { kind, text },
                Err(content) => {
                    let reason = not_single_text(&content);
                    return refuse(
                        Command::Steer {
                            kind,
                            content,
                            submission_id: None,
                        },
                        reason,
                    );
                }
            },
            Command::Compact => V1::Compact,
            Command::Cancel => V1::Cancel,
            cmd @ (Command::JobsSnapshot { .. } | Command::JobStop { .. }) => {
                let reason = NotInV1::JobCommand(cmd.name());
                return refuse(cmd, reason);
            }
            Command::GoalSet { text, auto } => V1::GoalSet { text, auto },
            Command::GoalClear => V1::GoalClear,
            Command::ApprovalDecision { id, allow } => V1::ApprovalDecision { id, allow },
        })
    }
}

#[cfg(feature = "arbitrary")]
impl<'a> arbitrary::Arbitrary<'a> for Command {
    /// Any command the decoder reads back: job fields are
    /// drawn valid (the type could hold others, which no line round-trips).
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
