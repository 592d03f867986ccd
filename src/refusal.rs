//! The commands `openseek serve` reads but declines, and its messages for
//! them: shared by both revisions' serve policies (`v1/rules.rs`,
//! `v2/rules.rs`), below both, re-exported as `v2::Refusal`.

use std::fmt;

/// The engine's message for a `goal` `set` whose text is blank.
pub(crate) const BLANK_GOAL: &str = "goal text must not be blank";

/// The engine's message for a `command` steer whose content holds an image.
pub(crate) const COMMAND_STEER_IMAGES: &str = "command steering does not accept images";

/// A readable command that `openseek serve` declines, as
/// `Command::serve_refusal` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Refusal {
    /// `goal text must not be blank`: a goal whose text is only whitespace.
    BlankGoal,
    /// `command steering does not accept images`: a command steer holding
    /// an image.
    CommandSteerImage,
}

impl Refusal {
    /// The message, as the engine writes it.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Refusal::BlankGoal => BLANK_GOAL,
            Refusal::CommandSteerImage => COMMAND_STEER_IMAGES,
        }
    }

    /// The refusal `message` names, if it names one.
    pub(crate) fn of(message: &str) -> Option<Refusal> {
        [Refusal::BlankGoal, Refusal::CommandSteerImage]
            .into_iter()
            .find(|r| r.as_str() == message)
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
