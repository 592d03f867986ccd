//! v1's decoding rules, written once.
//!
//! Every decoding path (`Command::parse` over a `serde_json::Value`,
//! `Command::from_slice` over raw bytes, `Deserialize`) first reduces its
//! input to [`Fields`]: for each key the protocol knows, whether it is absent,
//! a string, `true`, `false`, or anything else. Then [`decide`] applies the
//! reference's match arms to those fields. No other file knows the arms.

use crate::refusal::Refusal;
use crate::v1::{Command, ParseError, SteerKind};
use crate::wire::fields::{Field, FieldSet, KeyTable, NoFields, Slot, WireStr};

/// The protocol's keys, as found in one object: a slot per [`Key`], in its
/// order. A duplicate key overwrites (the last one wins, as in the
/// reference's JSON parser).
pub(crate) struct Fields<S> {
    slots: [Slot<S>; Key::ALL.len()],
}

impl<S> Fields<S> {
    pub const fn new() -> Self {
        Fields {
            // Written out, not `[const { Slot::Absent }; N]`: that is
            // built whole and copied in, where this writes each tag.
            slots: [
                Slot::Absent,
                Slot::Absent,
                Slot::Absent,
                Slot::Absent,
                Slot::Absent,
                Slot::Absent,
                Slot::Absent,
                Slot::Absent,
            ],
        }
    }

    #[inline]
    pub fn slot_of(&mut self, key: Key) -> &mut Slot<S> {
        &mut self.slots[key as usize]
    }
}

/// The keys the rules read; every other key is ignored.
#[derive(Clone, Copy)]
pub(crate) enum Key {
    Command,
    Text,
    SubmissionId,
    Kind,
    Action,
    Auto,
    Id,
    Allow,
}

impl Key {
    /// Every key, in the order of its discriminant.
    const ALL: [Key; 8] = [
        Key::Command,
        Key::Text,
        Key::SubmissionId,
        Key::Kind,
        Key::Action,
        Key::Auto,
        Key::Id,
        Key::Allow,
    ];

    /// Their names, in the same order.
    pub(crate) const NAME_LIST: [&'static str; 8] = [
        "command",
        "text",
        "submission_id",
        "kind",
        "action",
        "auto",
        "id",
        "allow",
    ];

    /// [`Key::NAME_LIST`], each found by one lookup.
    const NAMES: KeyTable = KeyTable::new(&Key::NAME_LIST);

    #[inline]
    pub fn from_bytes(key: &[u8]) -> Option<Key> {
        Key::ALL.get(Key::NAMES.find(key)?).copied()
    }
}

impl<S> Fields<S> {
    /// The slot for a key, or `None` for a key the rules never read.
    #[inline(always)]
    pub fn slot(&mut self, key: &[u8]) -> Option<&mut Slot<S>> {
        self.slots.get_mut(Key::NAMES.find(key)?)
    }
}

impl<S> FieldSet<S> for Fields<S> {
    const MAX_KEY_LEN: usize = "submission_id".len();
    // Every value is flat: nothing is read inside an array.
    type Item = NoFields;

    #[inline]
    fn item() -> NoFields {
        NoFields
    }

    // Inlined into the scan loop, where the array arm it never takes folds
    // away: the seed's scan stays what it was.
    #[inline(always)]
    fn field(&mut self, key: &[u8]) -> Option<Field<'_, S, usize>> {
        self.slot(key).map(Field::Flat)
    }
}

/// A JSON value that is not an object: no fields, so no command.
#[inline]
pub(crate) fn not_an_object() -> ParseError {
    ParseError::ExpectedCommand
}

/// The reference's `Command::parse`, arm for arm.
///
/// The command name selects the arm group (one string can match only one
/// name), so testing it once per name keeps the reference's precedence.
///
/// Takes the fields by reference: they are read where the scan left them,
/// not copied.
// Inlined into each path (`from_slice` above all): called, v2's cost
// about 10 ns more per line than its instructions account for (the
// command and the fields crossed the call through memory), even on a line
// both revisions read alike (`compact`: 21 ns in v1, 32 ns in v2).
//
// The error type is the caller's (`LineError` for `from_slice`): the
// command is built straight into the caller's result. Returned as a
// `ParseError` and re-wrapped by `?`, it was copied through a temporary
// whose 16-byte loads straddled the 8-byte stores just made, a
// store-forwarding stall that perf put at 7% of `from_slice` on small
// lines.
#[inline(always)]
pub(crate) fn decide<S: WireStr, E: From<ParseError>>(f: &mut Fields<S>) -> Result<Command, E> {
    let [command, text, submission_id, kind, action, auto, id, allow] = &mut f.slots;
    let Some(name) = command.take().string() else {
        return Err(ParseError::ExpectedCommand.into());
    };
    if name.is("prompt") {
        let text = text.take().string().ok_or(ParseError::ExpectedText)?;
        Ok(Command::Prompt {
            text: text.into_string(),
            submission_id: self::submission_id(submission_id.take())?,
        })
    } else if name.is("steer") {
        // `text` is required whatever the kind says, so it is checked first.
        let text = text.take().string().ok_or(ParseError::ExpectedText)?;
        Ok(Command::Steer {
            kind: steer_kind(kind)?,
            text: text.into_string(),
        })
    } else if name.is("compact") {
        Ok(Command::Compact)
    } else if name.is("cancel") {
        Ok(Command::Cancel)
    } else if name.is("goal") {
        Ok(goal(action.take(), text.take(), auto.take())?)
    } else if name.is("approval") {
        Ok(approval(id.take(), allow.take())?)
    } else {
        Err(ParseError::UnknownCommand(name.into_string()).into())
    }
}

// The arms the later revision keeps unchanged, written once: `v2/rules.rs`
// calls these and converts what they return, and builds its own `goal` and
// `approval` from `seed_arms!` below.

/// A `submission_id`: absent means untagged (the tag arrived long after the
/// command); present, it must be a string (`null` is not absence).
#[inline]
pub(crate) fn submission_id<S: WireStr>(slot: Slot<S>) -> Result<Option<String>, ParseError> {
    match slot {
        Slot::Absent => Ok(None),
        Slot::Str(id) => Ok(Some(id.into_string())),
        _ => Err(ParseError::ExpectedSubmissionId),
    }
}

// `str::parse` for a steer kind is the rule itself, written here once.
impl std::str::FromStr for SteerKind {
    type Err = crate::v1::ParseError;

    /// The kind a wire spelling names, by the decoder's rule for `kind`:
    /// exactly `"prompt"` or `"command"`, case-sensitive.
    ///
    /// # Errors
    ///
    /// [`ParseError::UnknownSteerKind`](crate::v1::ParseError::UnknownSteerKind)
    /// holding `kind` verbatim, the error a line with that `kind` gets
    /// (`unknown steer kind: <kind>`).
    ///
    /// ```
    /// use serve_command::v1::{ParseError, SteerKind};
    /// assert_eq!("command".parse(), Ok(SteerKind::Command));
    /// let err = "COMMAND".parse::<SteerKind>().unwrap_err();
    /// assert_eq!(err, ParseError::UnknownSteerKind("COMMAND".into()));
    /// assert_eq!(err.to_string(), "unknown steer kind: COMMAND");
    /// ```
    fn from_str(kind: &str) -> Result<SteerKind, crate::v1::ParseError> {
        steer_kind(&Slot::Str(kind))
    }
}

/// A steer's `kind`, read where the scan left it (copied only for the
/// error).
// Always inlined: v2's larger `decide` otherwise calls it, the slot and
// the result crossing the call through memory (6 instructions a small
// line of v2's; v1 inlined it already). By reference: moved out, the
// slot's padding went along (2 more a line of v2's).
#[inline(always)]
pub(crate) fn steer_kind<S: WireStr>(slot: &Slot<S>) -> Result<SteerKind, ParseError> {
    match slot {
        // Absent means a prompt steer: what every controller meant before
        // there was a choice.
        Slot::Absent => Ok(SteerKind::Prompt),
        Slot::Str(k) if k.is("prompt") => Ok(SteerKind::Prompt),
        Slot::Str(k) if k.is("command") => Ok(SteerKind::Command),
        Slot::Str(k) => Err(ParseError::UnknownSteerKind(k.as_text().into_owned())),
        _ => Err(ParseError::ExpectedKind),
    }
}

/// v1's `goal` and `approval` arms, written once as functions that
/// each revision's rules instantiate for its own `Command` (the variants
/// are named alike), with the inlining that suits its `decide`.
///
/// v2 once called this revision's functions and converted the command they
/// returned: the command crossed the call and the conversion through
/// memory, about 27 instructions a small line of v2's (callgrind, the
/// bench's `v2/small` lines). v2 inlines its own; inlined into v1's
/// `decide`, they cost v1 about 14 (its larger exit block), so v1 keeps
/// them calls.
macro_rules! seed_arms {
    ($(#[$attr:meta])*) => {
        /// `goal`: `GoalSet` or `GoalClear`.
        $(#[$attr])*
        pub(crate) fn goal<S: WireStr>(
            action: Slot<S>,
            text: Slot<S>,
            auto: Slot<S>,
        ) -> Result<Command, $crate::v1::ParseError> {
            use $crate::v1::ParseError;
            match action {
                Slot::Str(a) if a.is("set") => match text {
                    // A blank goal decodes: refusing it is the engine's policy.
                    Slot::Str(text) => Ok(Command::GoalSet {
                        text: text.into_string(),
                        // A flag with a default: only JSON `true` arms it.
                        auto: matches!(auto, Slot::True),
                    }),
                    _ => Err(ParseError::ExpectedGoal),
                },
                Slot::Str(a) if a.is("clear") => Ok(Command::GoalClear),
                _ => Err(ParseError::ExpectedGoal),
            }
        }

        /// `approval`: `ApprovalDecision`. Both fields are required: neither
        /// has a defensible default, and a guess would settle a permission
        /// prompt.
        $(#[$attr])*
        pub(crate) fn approval<S: WireStr>(
            id: Slot<S>,
            allow: Slot<S>,
        ) -> Result<Command, $crate::v1::ParseError> {
            use $crate::v1::ParseError;
            let id = id.string().ok_or(ParseError::ExpectedId)?;
            let allow = match allow {
                Slot::True => true,
                Slot::False => false,
                _ => return Err(ParseError::ExpectedAllow),
            };
            Ok(Command::ApprovalDecision {
                id: id.into_string(),
                allow,
            })
        }
    };
}

pub(crate) use seed_arms;

seed_arms!(#[inline]);

// What `openseek serve` itself refuses among the commands the rules above
// read (`decode_serve_command` in upstream serve/state.mbt; the reference
// oracle's serve/policy_v1.mbt and policy_v2.mbt). Not parse errors: the
// line is a command, and the engine declines it. Written once here; the
// later revision calls these and adds only its image check.

/// MoonBit core's `String::is_blank`: empty, or only `"\t\n\r "`. Narrower
/// than Rust's `str::trim` (Unicode `White_Space`): U+3000, NBSP, VT, FF and
/// U+2028 are not blank to the engine.
#[inline]
pub(crate) fn is_blank(text: &str) -> bool {
    text.bytes()
        .all(|b| matches!(b, b'\t' | b'\n' | b'\r' | b' '))
}

/// The engine's refusal of a goal's text, if it refuses it.
#[inline]
pub(crate) fn goal_refusal(text: &str) -> Option<Refusal> {
    is_blank(text).then_some(Refusal::BlankGoal)
}

/// The engine's refusals (`Command::serve_refusal`): written here, beside
/// the rules whose commands they refuse.
impl Command {
    /// What the engine (`openseek serve`) answers this command with instead
    /// of running it, if it refuses it: in this revision, only a `goal`
    /// `set` whose text is blank, with the message `goal text must not be
    /// blank`. `None` for every other command.
    ///
    /// Blank is the reference's `String::is_blank`: empty, or only tab, LF,
    /// CR and space. U+3000, NBSP, VT, FF and U+2028 are not blank (unlike
    /// `str::trim`'s whitespace), and neither is `auto` relevant.
    ///
    /// Not a parse error: the line is a well-formed command, which
    /// [`Command::from_slice`] returns, and a controller may write it; the
    /// engine declines it after decoding (`decode_serve_command` in
    /// upstream's serve/state.mbt). It answers exactly as it answers a
    /// parse error, with a `command_error` event carrying the message:
    /// [`Command::serve_refusal_event_line`].
    ///
    /// ```
    /// use serve_command::v1::Command;
    /// use serve_command::v2::Refusal;
    /// let blank = Command::from_slice(br#"{"command":"goal","action":"set","text":" \t\r\n","auto":true}"#)?;
    /// assert_eq!(blank.serve_refusal(), Some(Refusal::BlankGoal));
    /// assert_eq!(Refusal::BlankGoal.as_str(), "goal text must not be blank");
    /// assert_eq!(Command::GoalSet { text: "".into(), auto: false }.serve_refusal(), Some(Refusal::BlankGoal));
    /// // Not blank to the engine: an ideographic space, a no-break space.
    /// assert_eq!(Command::GoalSet { text: "\u{3000}".into(), auto: false }.serve_refusal(), None);
    /// assert_eq!(Command::GoalSet { text: "\u{a0}".into(), auto: false }.serve_refusal(), None);
    /// // Blank text elsewhere is the controller's business.
    /// assert_eq!(Command::Prompt { text: " ".into(), submission_id: None }.serve_refusal(), None);
    /// # Ok::<(), serve_command::v1::LineError>(())
    /// ```
    #[must_use]
    pub fn serve_refusal(&self) -> Option<Refusal> {
        match self {
            Command::GoalSet { text, .. } => goal_refusal(text),
            _ => None,
        }
    }

    /// The `command_error` event the engine writes for a command it
    /// refuses ([`Command::serve_refusal`]), LF included: the same event
    /// as [`LineError::event_line`](crate::generic::LineError::event_line)
    /// writes for a line that is not a command. `None` when the engine runs
    /// the command.
    ///
    /// ```
    /// use serve_command::v1::Command;
    /// let blank = Command::GoalSet { text: "  ".into(), auto: false };
    /// assert_eq!(
    ///     blank.serve_refusal_event_line().as_deref(),
    ///     Some("{\"event\":\"command_error\",\"error\":\"goal text must not be blank\"}\n"),
    /// );
    /// assert_eq!(Command::GoalClear.serve_refusal_event_line(), None);
    /// ```
    #[must_use]
    pub fn serve_refusal_event_line(&self) -> Option<String> {
        self.serve_refusal()
            .map(|refusal| crate::wire::escape::event_line(refusal.as_str()))
    }
}
