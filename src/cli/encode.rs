//! `encode`: one command, as the line a controller writes.

use crate::output::{self, io_error, stdout_error, Failure};
use clap::{Args, Subcommand, ValueEnum};
use serve_command::{Command, SteerKind};
use std::io::{self, Read, Write};

/// Encode one command as the line a controller writes (LF included).
///
/// A TEXT of `-` is read from stdin verbatim, less one trailing LF. A TEXT
/// that starts with `-` goes after `--`.
#[derive(Subcommand)]
#[command(after_help = "Examples:
  serve-command encode prompt \"fix the build\" --submission-id sub-1
  git diff | serve-command encode steer - --kind prompt
  serve-command encode approval appr-7 --deny")]
pub enum Encode {
    /// A prompt: `{"command":"prompt","text":TEXT}`.
    #[command(
        after_help = "Example:\n  serve-command encode prompt \"fix it\" --submission-id sub-1"
    )]
    Prompt {
        /// The prompt's text (`-`: stdin).
        text: String,
        /// Tag the prompt, to reconcile its delivery by exact id.
        #[arg(long, value_name = "ID")]
        submission_id: Option<String>,
    },
    /// A mid-turn steer.
    #[command(after_help = "Example:\n  serve-command encode steer /diff --kind command")]
    Steer {
        /// The steer's text (`-`: stdin).
        text: String,
        /// How the steer reaches the model.
        #[arg(long, value_enum, default_value_t = Kind::Prompt)]
        kind: Kind,
    },
    /// Compact the conversation.
    #[command(after_help = "Example:\n  serve-command encode compact")]
    Compact,
    /// Cancel the running turn.
    #[command(after_help = "Example:\n  serve-command encode cancel")]
    Cancel,
    /// Set or clear the goal.
    #[command(subcommand)]
    Goal(Goal),
    /// Answer an `approval_requested` event.
    #[command(after_help = "Example:\n  serve-command encode approval appr-7 --allow")]
    Approval {
        /// The `id` of the `approval_requested` event.
        id: String,
        #[command(flatten)]
        decision: Decision,
    },
}

#[derive(Subcommand)]
#[command(after_help = "Examples:
  serve-command encode goal set \"cargo test passes\" --auto
  serve-command encode goal clear")]
pub enum Goal {
    /// Set the goal.
    #[command(
        after_help = "Example:\n  serve-command encode goal set \"cargo test passes\" --auto"
    )]
    Set {
        /// The goal (`-`: stdin).
        text: String,
        /// Arm autonomous continuation toward the goal.
        #[arg(long)]
        auto: bool,
    },
    /// Clear the goal.
    #[command(after_help = "Example:\n  serve-command encode goal clear")]
    Clear,
}

#[derive(Args)]
#[group(required = true, multiple = false)]
pub struct Decision {
    /// Allow the action.
    #[arg(long)]
    allow: bool,
    /// Deny the action.
    #[arg(long)]
    deny: bool,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum Kind {
    Prompt,
    Command,
}

pub fn run(cmd: Encode) -> output::Result<()> {
    let command = match cmd {
        Encode::Prompt {
            text,
            submission_id,
        } => Command::Prompt {
            text: text_arg(text)?,
            submission_id,
        },
        Encode::Steer { text, kind } => Command::Steer {
            kind: match kind {
                Kind::Prompt => SteerKind::Prompt,
                Kind::Command => SteerKind::Command,
            },
            text: text_arg(text)?,
        },
        Encode::Compact => Command::Compact,
        Encode::Cancel => Command::Cancel,
        Encode::Goal(Goal::Set { text, auto }) => Command::GoalSet {
            text: text_arg(text)?,
            auto,
        },
        Encode::Goal(Goal::Clear) => Command::GoalClear,
        Encode::Approval { id, decision } => Command::ApprovalDecision {
            id,
            allow: decision.allow,
        },
    };
    let mut out = io::stdout().lock();
    command
        .write_line(&mut out)
        .and_then(|()| out.flush())
        .map_err(stdout_error)
}

/// A TEXT argument; `-` reads stdin verbatim, less one trailing LF.
fn text_arg(text: String) -> output::Result<String> {
    if text != "-" {
        return Ok(text);
    }
    let mut bytes = Vec::new();
    io::stdin()
        .lock()
        .read_to_end(&mut bytes)
        .map_err(|e| io_error("stdin", &e))?;
    if bytes.last() == Some(&b'\n') {
        bytes.pop();
    }
    String::from_utf8(bytes).map_err(|e| {
        Failure::Error(format!(
            "stdin is not UTF-8 (byte {})",
            e.utf8_error().valid_up_to()
        ))
    })
}
