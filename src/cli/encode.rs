//! `encode`: one command, as the line a controller writes.

use crate::output::{self, io_error, stdout_error, Failure};
use crate::revision::{Revision, Summarized};
use clap::{Args, Subcommand, ValueEnum};
use serve_command::v1::{Command, SteerKind};
use serve_command::v2::{self, Content, ContentPart, Image, MAX_IMAGE_BYTES};
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Encode one command as the line a controller writes (LF included).
///
/// A TEXT of `-` is read from stdin verbatim, less one trailing LF. A TEXT
/// that starts with `-` goes after `--`.
///
/// In v2, `prompt` and `steer` write `content` (a string, or with `--image`
/// the text then each image as parts), a steer may carry `--submission-id`,
/// and `jobs-snapshot` and `job-stop` exist; `--revision v1` writes v1's
/// `text` and refuses the rest. (There is no `predict`: since upstream
/// fdf10827 the engine predicts by itself.)
///
/// A line the revision's decoder would refuse (an empty request id, a bad
/// job id) is not written: its message is printed
/// instead, with exit 2. Nor is a command the engine (`openseek serve`)
/// would refuse, though it is well formed (a blank goal; in v2, a command
/// steer with an image): `serve-command: the engine would refuse this
/// command: <its command_error message> (--allow-refused writes it
/// anyway)` on stderr, with exit 1. `--allow-refused` writes it, to test
/// an engine's refusals.
///
/// Exit status: 0 when the line is written, 1 when the engine would
/// refuse the command, 2 on a usage or I/O error or a line the decoder
/// would refuse.
#[derive(Args)]
#[command(after_help = "Examples:
  serve-command encode prompt \"fix the build\" --submission-id sub-1
  git diff | serve-command encode steer - --kind prompt
  serve-command encode approval appr-7 --deny
  serve-command encode prompt \"what is this?\" --image shot.png
  serve-command encode job-stop req-1 gen-3 job-7
  serve-command encode --revision v1 prompt \"fix it\"")]
pub struct Encode {
    /// Write the command even if the engine (`openseek serve`) would
    /// refuse it (a blank goal; a command steer with an image), to test
    /// an engine's refusals.
    #[arg(long, global = true)]
    allow_refused: bool,
    #[command(subcommand)]
    command: Message,
}

#[derive(Subcommand)]
pub enum Message {
    /// A prompt: `{"command":"prompt","content":...}`; with `--revision
    /// v1`, `{"command":"prompt","text":TEXT}`.
    #[command(after_help = "Examples:
  serve-command encode prompt \"fix it\" --submission-id sub-1
  serve-command encode prompt \"what is this?\" --image shot.png")]
    Prompt {
        /// The prompt's text (`-`: stdin).
        text: String,
        /// Tag the prompt, to reconcile its delivery by exact id.
        #[arg(long, value_name = "ID")]
        submission_id: Option<String>,
        /// Attach an image (PNG, JPEG, GIF or WebP, at most 5 MiB), after
        /// the text; repeat for more, in order. Needs `--revision v2`.
        #[arg(long = "image", value_name = "FILE")]
        images: Vec<PathBuf>,
    },
    /// A mid-turn steer.
    #[command(after_help = "Examples:
  serve-command encode steer /diff --kind command
  serve-command encode steer \"and this\" --image b.png --submission-id s-2")]
    Steer {
        /// The steer's text (`-`: stdin).
        text: String,
        /// How the steer reaches the model.
        #[arg(long, value_enum, default_value_t = Kind::Prompt)]
        kind: Kind,
        /// Tag the steer, to reconcile its delivery by exact id. Not in v1.
        #[arg(long, value_name = "ID")]
        submission_id: Option<String>,
        /// Attach an image (PNG, JPEG, GIF or WebP, at most 5 MiB), after
        /// the text; repeat for more, in order. Needs `--revision v2`.
        #[arg(long = "image", value_name = "FILE")]
        images: Vec<PathBuf>,
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
    /// List the background jobs. Not in v1.
    #[command(after_help = "Example:\n  serve-command encode jobs-snapshot req-1")]
    JobsSnapshot {
        /// The controller's id for the answer (not empty).
        request_id: String,
    },
    /// Stop one background job. Not in v1.
    #[command(after_help = "Example:\n  serve-command encode job-stop req-1 gen-3 job-7")]
    JobStop {
        /// The controller's id for the answer (not empty).
        request_id: String,
        /// The job's generation: 1 to 200 of `[A-Za-z0-9._-]`, neither `.`
        /// nor `..`.
        generation: String,
        /// The job's id (the same rule as GENERATION).
        job_id: String,
    },
    /// An engine's event (v2), as the engine writes it: `NAME` and its
    /// fields, each `FIELD=VALUE`, where a VALUE that is JSON is that JSON
    /// (`step=3`, `is_error=false`, `job={...}`) and anything else a
    /// string (`content=hello`; `content='"3"'` for the string "3"). The
    /// line is written only if a client would read it as that event; else
    /// why not, with exit 2. For shell engines.
    #[command(after_help = "Examples:
  serve-command encode event assistant_delta content=Hel
  serve-command encode event agent_step step=1
  serve-command encode event tool_result tool_call_id=c1 tool_name=shell is_error=false content=ok")]
    Event {
        /// The event's wire name (`agent_step`, `assistant_delta`, ...).
        name: String,
        /// Its fields, `FIELD=VALUE`.
        #[arg(value_name = "FIELD=VALUE")]
        fields: Vec<String>,
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

pub fn run(args: Encode, revision: Revision) -> output::Result<ExitCode> {
    let line = match (revision, args.command) {
        (_, Message::Event { .. }) if args.allow_refused => {
            return Err(Failure::Error(
                "--allow-refused is for commands: the engine's serve policy judges no events"
                    .to_owned(),
            ))
        }
        (Revision::V1, Message::Event { .. }) => {
            return Err(Failure::Error(
                "event needs --revision v2: the protocol's first revision is the command half only"
                    .to_owned(),
            ))
        }
        (Revision::V2, Message::Event { name, fields }) => event_line(&name, &fields)?,
        (revision, command) => match encode_command(revision, command)? {
            Checked::Line(line) => line,
            Checked::Refused(_, refusal) if args.allow_refused => refusal,
            Checked::Refused(message, _) => {
                output::to_stderr(&format!(
                    "serve-command: the engine would refuse this command: {message} (--allow-refused writes it anyway)\n"
                ))?;
                return Ok(ExitCode::from(1));
            }
        },
    };
    let mut out = io::stdout().lock();
    out.write_all(&line)
        .and_then(|()| out.flush())
        .map_err(stdout_error)?;
    Ok(ExitCode::SUCCESS)
}

/// An event's line from its name and `FIELD=VALUE`s, decided by the event
/// decoder (one rule set): what a client would not read is refused.
fn event_line(name: &str, fields: &[String]) -> output::Result<Vec<u8>> {
    let string = |s: &str| serde_json::to_string(s).unwrap_or_default();
    let mut object = format!("{{\"event\":{}", string(name));
    for field in fields {
        let (key, value) = field
            .split_once('=')
            .ok_or_else(|| Failure::Error(format!("{field}: expected FIELD=VALUE")))?;
        let value = match serde_json::from_str::<serde_json::Value>(value) {
            Ok(_) => value.to_owned(),
            Err(_) => string(value),
        };
        object += &format!(",{}:{value}", string(key));
    }
    object.push('}');
    let event =
        v2::Event::from_slice(object.as_bytes()).map_err(|e| Failure::Error(e.to_string()))?;
    Ok(event.to_line().into_bytes())
}

/// A command's line, checked.
fn encode_command(revision: Revision, command: Message) -> output::Result<Checked> {
    match revision {
        Revision::V1 => checked(&v1(command)?),
        Revision::V2 => checked(&v2(command)?),
    }
}

/// A command's line the revision's decoder takes back, and whether the
/// engine would run it.
enum Checked {
    /// The engine runs it.
    Line(Vec<u8>),
    /// Well formed, but the engine declines it: its message, and the line.
    Refused(&'static str, Vec<u8>),
}

/// The command's line, if the revision's own decoder takes it back: the
/// decoder holds the wire's rules (one rule set), so a line an engine would
/// answer with `command_error` is refused here with that same message. The
/// serve policy judges the command the engine would read, as decoded.
fn checked<C: Summarized>(command: &C) -> output::Result<Checked> {
    let mut line = Vec::new();
    command
        .encode_line(&mut line)
        .expect("writing to a Vec cannot fail");
    match C::decode_line(&line) {
        Ok(read) => Ok(match read.refusal() {
            Some(message) => Checked::Refused(message, line),
            None => Checked::Line(line),
        }),
        Err(e) => Err(Failure::Error(e.to_string())),
    }
}

/// v1's command; what it cannot carry is a usage error.
fn v1(message: Message) -> output::Result<Command> {
    let needs_v2 = |what: &str, lacks: &str| {
        Failure::Error(format!(
            "{what} needs --revision v2: v1, the protocol's first revision, has no {lacks}"
        ))
    };
    Ok(match message {
        Message::Prompt { images, .. } | Message::Steer { images, .. } if !images.is_empty() => {
            return Err(needs_v2("--image", "images"));
        }
        Message::Steer {
            submission_id: Some(_),
            ..
        } => return Err(needs_v2("steer --submission-id", "tagged steers")),
        Message::JobsSnapshot { .. } => return Err(needs_v2("jobs-snapshot", "job commands")),
        Message::JobStop { .. } => return Err(needs_v2("job-stop", "job commands")),
        // `run` writes an event before it gets here.
        Message::Event { .. } => return Err(needs_v2("event", "events")),
        Message::Prompt {
            text,
            submission_id,
            images: _,
        } => Command::Prompt {
            text: text_arg(text)?,
            submission_id,
        },
        Message::Steer { text, kind, .. } => Command::Steer {
            kind: kind.into(),
            text: text_arg(text)?,
        },
        Message::Compact => Command::Compact,
        Message::Cancel => Command::Cancel,
        Message::Goal(Goal::Set { text, auto }) => Command::GoalSet {
            text: text_arg(text)?,
            auto,
        },
        Message::Goal(Goal::Clear) => Command::GoalClear,
        Message::Approval { id, decision } => Command::ApprovalDecision {
            id,
            allow: decision.allow,
        },
    })
}

/// The later revision's command.
fn v2(message: Message) -> output::Result<v2::Command> {
    Ok(match message {
        Message::Prompt {
            text,
            submission_id,
            images,
        } => {
            let content = content(text, &images)?;
            match submission_id {
                Some(id) => v2::Command::prompt_tagged(content, id),
                None => v2::Command::prompt(content),
            }
        }
        Message::Steer {
            text,
            kind,
            submission_id,
            images,
        } => {
            let content = content(text, &images)?;
            match submission_id {
                Some(id) => v2::Command::steer_tagged(kind.into(), content, id),
                None => v2::Command::steer(kind.into(), content),
            }
        }
        Message::Compact => v2::Command::Compact,
        Message::Cancel => v2::Command::Cancel,
        Message::Goal(Goal::Set { text, auto }) if auto => {
            v2::Command::goal_set_auto(text_arg(text)?)
        }
        Message::Goal(Goal::Set { text, .. }) => v2::Command::goal_set(text_arg(text)?),
        Message::Goal(Goal::Clear) => v2::Command::GoalClear,
        Message::Approval { id, decision } if decision.allow => v2::Command::allow(id),
        Message::Approval { id, .. } => v2::Command::reject(id),
        Message::JobsSnapshot { request_id } => v2::Command::jobs_snapshot(request_id),
        Message::JobStop {
            request_id,
            generation,
            job_id,
        } => v2::Command::job_stop(request_id, generation, job_id),
        // `run` writes an event without a command.
        Message::Event { name, .. } => {
            return Err(Failure::Error(format!("{name}: an event, not a command")))
        }
    })
}

impl From<Kind> for SteerKind {
    fn from(kind: Kind) -> SteerKind {
        match kind {
            Kind::Prompt => SteerKind::Prompt,
            Kind::Command => SteerKind::Command,
        }
    }
}

/// TEXT then each image, in order; TEXT alone is one text part, which the
/// wire writes as a string. The images are read first: a bad file is
/// reported before stdin is read for a TEXT of `-`.
fn content(text: String, images: &[PathBuf]) -> output::Result<Content> {
    let images = images
        .iter()
        .map(|path| image_arg(path))
        .collect::<output::Result<Vec<Image>>>()?;
    let mut content = Content::from(text_arg(text)?);
    for image in images {
        content.push(ContentPart::Image(image));
    }
    Ok(content)
}

/// An `--image FILE`: its bytes, if they are an image the wire can carry.
/// Never reads more than one byte past the limit.
fn image_arg(path: &Path) -> output::Result<Image> {
    let name = format!("--image {}", path.display());
    let mut bytes = Vec::new();
    File::open(path)
        .and_then(|file| {
            file.take(MAX_IMAGE_BYTES as u64 + 1)
                .read_to_end(&mut bytes)
        })
        .map_err(|e| io_error(&name, &e))?;
    Image::from_bytes(bytes).map_err(|e| Failure::Error(format!("{name}: {e}")))
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
