//! A controller's side of a session: writes commands to stdout, one line
//! each, as a TUI or a script would write them to an engine's stdin.
//!
//!     cargo run --example controller | cargo run --example engine

use serve_command::v1::{Command, SteerKind};
use std::io::{self, Write};

fn main() -> io::Result<()> {
    let session = [
        Command::Prompt {
            text: "Fix the failing test in src/parse.rs".into(),
            // Tag the prompt to reconcile its delivery later by exact id.
            submission_id: Some("sub-1".into()),
        },
        Command::Steer {
            kind: SteerKind::Prompt,
            text: "Keep the public API unchanged".into(),
        },
        Command::Steer {
            kind: SteerKind::Command,
            text: "/diff".into(),
        },
        Command::GoalSet {
            text: "cargo test passes".into(),
            auto: true,
        },
        Command::ApprovalDecision {
            id: "appr-7".into(),
            allow: true,
        },
        Command::Prompt {
            text: "Explain the change\nin two lines".into(),
            submission_id: None,
        },
        Command::Compact,
        Command::GoalClear,
        Command::Cancel,
    ];
    let mut stdout = io::stdout().lock();
    for command in &session {
        // One write per line: a line never interleaves with another writer's.
        command.write_line(&mut stdout)?;
    }
    stdout.flush()
}
