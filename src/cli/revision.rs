//! `--revision`: which revision of the wire a subcommand speaks, and what
//! the CLI needs from each beyond the library's `Revision` trait.

use clap::ValueEnum;
use serve_command::v2;

/// A revision of the wire, as `--revision` names it (the top-level help
/// says what each is). The wire itself carries no version: both ends must
/// agree on one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Revision {
    /// The protocol's first revision (`command.mbt`).
    V1,
    /// Upstream openseek's revision today (`serve_command::v2`).
    V2,
}

/// Why `--events` is refused with `--revision v1`, by every subcommand
/// that takes it: v1 has no events.
pub const NO_EVENTS_IN_V1: &str =
    "--events needs --revision v2: the protocol's first revision is the command half only";

impl Revision {
    /// The name `--revision` takes, and vectors files record.
    pub fn name(self) -> &'static str {
        match self {
            Revision::V1 => "v1",
            Revision::V2 => "v2",
        }
    }
}

/// What `decode` needs of a revision's command beyond the library's
/// `Revision` trait (`--summary`, `--serve-policy`), generically.
pub trait Summarized: serve_command::generic::Revision {
    /// The command's wire name, with goal's two actions apart (`goal set`,
    /// `goal clear`): they do different things.
    fn label(&self) -> &'static str;

    /// Why the engine (`openseek serve`) refuses this command, if it does
    /// (the revision's `serve_refusal`).
    fn refusal(&self) -> Option<&'static str>;

    /// The engine's `command_error` event for a refused command, LF
    /// included (the revision's `serve_refusal_event_line`).
    fn refusal_event_line(&self) -> Option<String>;
}

/// [`Summarized`] for a revision's `Command`: the same to the letter in
/// both, the revision's module `$rev` aside.
macro_rules! summarized {
    ($($rev:ident)::+) => {
        impl Summarized for $($rev)::+::Command {
            fn refusal(&self) -> Option<&'static str> {
                self.serve_refusal().map(v2::Refusal::as_str)
            }

            fn refusal_event_line(&self) -> Option<String> {
                self.serve_refusal_event_line()
            }

            fn label(&self) -> &'static str {
                use $($rev)::+::Command;
                match self {
                    Command::GoalSet { .. } => "goal set",
                    Command::GoalClear => "goal clear",
                    other => other.name(),
                }
            }
        }
    };
}

summarized!(serve_command::v1);
summarized!(serve_command::v2);

/// A command's canonical line without its LF, through the `Revision`
/// trait: what `corpus` records as `ok`.
pub fn canonical<C: serve_command::generic::Revision>(command: &C) -> String {
    let mut line = Vec::new();
    command
        .encode_line(&mut line)
        .expect("writing to a Vec cannot fail");
    line.pop();
    String::from_utf8(line).expect("a wire line is UTF-8")
}
