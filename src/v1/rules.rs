//! The seed revision's decoding rules, written once.
//!
//! Every decoding path (`Command::parse` over a `serde_json::Value`,
//! `Command::from_slice` over raw bytes, `Deserialize`) first reduces its
//! input to [`Fields`]: for each key the protocol knows, whether it is absent,
//! a string, `true`, `false`, or anything else. Then [`decide`] applies the
//! reference's match arms to those fields. No other file knows the arms.

use crate::v1::{Command, ParseError, SteerKind};
use crate::wire::fields::{Field, FieldSet, NoFields, Slot, WireStr};

/// The protocol's keys, as found in one object. A duplicate key overwrites
/// (the last one wins, as in the reference's JSON parser).
pub(crate) struct Fields<S> {
    pub command: Slot<S>,
    pub text: Slot<S>,
    pub submission_id: Slot<S>,
    pub kind: Slot<S>,
    pub action: Slot<S>,
    pub auto: Slot<S>,
    pub id: Slot<S>,
    pub allow: Slot<S>,
}

impl<S> Fields<S> {
    pub const fn new() -> Self {
        Fields {
            command: Slot::Absent,
            text: Slot::Absent,
            submission_id: Slot::Absent,
            kind: Slot::Absent,
            action: Slot::Absent,
            auto: Slot::Absent,
            id: Slot::Absent,
            allow: Slot::Absent,
        }
    }

    #[inline]
    pub fn slot_of(&mut self, key: Key) -> &mut Slot<S> {
        match key {
            Key::Command => &mut self.command,
            Key::Text => &mut self.text,
            Key::SubmissionId => &mut self.submission_id,
            Key::Kind => &mut self.kind,
            Key::Action => &mut self.action,
            Key::Auto => &mut self.auto,
            Key::Id => &mut self.id,
            Key::Allow => &mut self.allow,
        }
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
    #[inline]
    pub fn from_bytes(key: &[u8]) -> Option<Key> {
        Some(match key {
            b"command" => Key::Command,
            b"text" => Key::Text,
            b"submission_id" => Key::SubmissionId,
            b"kind" => Key::Kind,
            b"action" => Key::Action,
            b"auto" => Key::Auto,
            b"id" => Key::Id,
            b"allow" => Key::Allow,
            _ => return None,
        })
    }
}

impl<S> Fields<S> {
    /// The slot for a key, or `None` for a key the rules never read.
    #[inline]
    pub fn slot(&mut self, key: &[u8]) -> Option<&mut Slot<S>> {
        Key::from_bytes(key).map(|key| self.slot_of(key))
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
    fn field(&mut self, key: &[u8]) -> Option<Field<'_, S, NoFields>> {
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
pub(crate) fn decide<S: WireStr>(f: Fields<S>) -> Result<Command, ParseError> {
    let Some(name) = f.command.string() else {
        return Err(ParseError::ExpectedCommand);
    };
    if name.is("prompt") {
        let text = f.text.string().ok_or(ParseError::ExpectedText)?;
        Ok(Command::Prompt {
            text: text.into_string(),
            submission_id: submission_id(f.submission_id)?,
        })
    } else if name.is("steer") {
        // `text` is required whatever the kind says, so it is checked first.
        let text = f.text.string().ok_or(ParseError::ExpectedText)?;
        Ok(Command::Steer {
            kind: steer_kind(f.kind)?,
            text: text.into_string(),
        })
    } else if name.is("compact") {
        Ok(Command::Compact)
    } else if name.is("cancel") {
        Ok(Command::Cancel)
    } else if name.is("goal") {
        goal(f.action, f.text, f.auto)
    } else if name.is("approval") {
        approval(f.id, f.allow)
    } else {
        Err(ParseError::UnknownCommand(name.into_string()))
    }
}

// The arms the later revision keeps unchanged, written once: `v2/rules.rs`
// calls these and converts what they return.

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

/// A steer's `kind`.
#[inline]
pub(crate) fn steer_kind<S: WireStr>(slot: Slot<S>) -> Result<SteerKind, ParseError> {
    match slot {
        // Absent means a prompt steer: what every controller meant before
        // there was a choice.
        Slot::Absent => Ok(SteerKind::Prompt),
        Slot::Str(k) if k.is("prompt") => Ok(SteerKind::Prompt),
        Slot::Str(k) if k.is("command") => Ok(SteerKind::Command),
        Slot::Str(k) => Err(ParseError::UnknownSteerKind(k.into_string())),
        _ => Err(ParseError::ExpectedKind),
    }
}

/// `goal`: `GoalSet` or `GoalClear`.
#[inline]
pub(crate) fn goal<S: WireStr>(
    action: Slot<S>,
    text: Slot<S>,
    auto: Slot<S>,
) -> Result<Command, ParseError> {
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

/// `approval`: `ApprovalDecision`. Both fields are required: neither has a
/// defensible default, and a guess would settle a permission prompt.
#[inline]
pub(crate) fn approval<S: WireStr>(id: Slot<S>, allow: Slot<S>) -> Result<Command, ParseError> {
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

// What `openseek serve` itself refuses among the commands the rules above
// read (`decode_serve_command` in upstream serve/state.mbt; the reference
// oracle's serve/policy_v1.mbt and policy_v2.mbt). Not parse errors: the
// line is a command, and the engine declines it. Written once here; the
// later revision calls these and adds only its image check.

/// The engine's message for a `goal` `set` whose text is blank.
pub(crate) const BLANK_GOAL: &str = "goal text must not be blank";

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
pub(crate) fn goal_refusal(text: &str) -> Option<&'static str> {
    is_blank(text).then_some(BLANK_GOAL)
}

/// `Command::serve_refusal`: the seed-era engine refuses only a blank goal.
#[inline]
pub(crate) fn serve_refusal(command: &Command) -> Option<&'static str> {
    match command {
        Command::GoalSet { text, .. } => goal_refusal(text),
        _ => None,
    }
}
