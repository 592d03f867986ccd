//! A crate `Command` in the model's spelling, so the two can be compared.
//! Shared by the tests and the fuzz targets (`fuzz/src/lib.rs`).

use super::model::ModelCommand;
use serve_command::v1::{Command, SteerKind};

pub fn to_model(c: &Command) -> ModelCommand {
    match c.clone() {
        Command::Prompt {
            text,
            submission_id,
        } => ModelCommand::Prompt {
            text,
            submission_id,
        },
        Command::Steer { kind, text } => ModelCommand::Steer {
            kind: match kind {
                SteerKind::Prompt => "prompt",
                SteerKind::Command => "command",
                other => panic!("a steer kind the model does not know: {other:?}"),
            },
            text,
        },
        Command::Compact => ModelCommand::Compact,
        Command::Cancel => ModelCommand::Cancel,
        Command::GoalSet { text, auto } => ModelCommand::GoalSet { text, auto },
        Command::GoalClear => ModelCommand::GoalClear,
        Command::ApprovalDecision { id, allow } => ModelCommand::ApprovalDecision { id, allow },
        // `Command` is non-exhaustive: a command the model does not know yet
        // must fail the comparison, not pass it.
        other => panic!("a command the model does not know: {other:?}"),
    }
}
