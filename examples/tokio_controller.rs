//! The session of `examples/event_reader.rs` over tokio: it starts the
//! engine named on its command line with `tokio::process`, sends the
//! commands through a `FramedWrite` with `CommandCodec`, reads the events
//! through a `FramedRead` with `EventCodec`, and prints what it reads as
//! `examples/event_reader.rs` does (tests/examples.rs holds the two to the
//! same output).
//!
//!     cargo run --example tokio_controller --features tokio -- cargo run -q --example engine
//!
//! A controller's own Cargo.toml needs, for this program:
//!
//!     [dependencies]
//!     serve-command = { version = "0.1", features = ["tokio"] }
//!     tokio = { version = "1", features = ["rt", "process"] }
//!     tokio-util = { version = "0.7", features = ["codec"] }
//!     futures-util = { version = "0.3", default-features = false, features = ["sink"] }

use futures_util::{SinkExt, StreamExt};
use serve_command::v2::{Command, CommandCodec, ContentPart, Event, EventCodec, Image, SteerKind};
use std::process::Stdio;
use tokio_util::codec::{FramedRead, FramedWrite};

/// A 1x1 PNG, 67 bytes. A controller would read the user's file:
/// `tokio::fs::read("shot.png").await?`.
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\0\0\0\0\x3a\x7e\x9b\x55\
    \0\0\0\nIDAT\x78\xda\x63\xf8\x0f\0\x01\x01\x01\0\x1c\xb0\x8c\x99\0\0\0\0IEND\xae\x42\x60\x82";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // One thread drives both pipes (as `#[tokio::main(flavor =
    // "current_thread")]` would, with tokio's `macros` feature); `enable_all`
    // starts the I/O and process drivers.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(control())
}

async fn control() -> Result<(), Box<dyn std::error::Error>> {
    // Refused unless the bytes are PNG, JPEG, GIF or WebP, at most 5 MiB.
    let screenshot = Image::from_bytes(PNG.to_vec())?;
    let session = [
        // Tag the prompt to reconcile its delivery later by exact id.
        Command::prompt_tagged(
            vec![
                ContentPart::Text("Why does this test fail?".into()),
                ContentPart::Image(screenshot),
            ],
            "sub-1",
        ),
        // A steer reaches the running turn; this one is tagged too.
        Command::steer_tagged(SteerKind::Prompt, "Keep the public API unchanged", "sub-2"),
        // A command steer: a slash command for the engine, not for the model.
        Command::steer(SteerKind::Command, "/diff"),
        Command::jobs_snapshot("req-1"),
        Command::job_stop("req-2", "g-1", "job-4"),
        Command::goal_set_auto("cargo test passes"),
        Command::allow("appr-7"),
        Command::GoalClear,
        Command::Cancel,
    ];
    let mut engine_argv = std::env::args().skip(1);
    let program = engine_argv
        .next()
        .ok_or("usage: tokio_controller ENGINE [ARGS...]")?;
    let mut engine = tokio::process::Command::new(program)
        .args(engine_argv)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?;
    let (Some(stdin), Some(stdout)) = (engine.stdin.take(), engine.stdout.take()) else {
        return Err("the engine's pipes".into());
    };
    // Commands from one task, events read on this one: neither side can
    // fill a pipe and wait on the other.
    let writer = tokio::spawn(async move {
        let mut commands = FramedWrite::new(stdin, CommandCodec::new());
        for command in session {
            // One line per command, flushed as it is sent.
            commands.send(command).await?;
        }
        // Dropping `commands` closes the engine's stdin: the end of input.
        Ok::<(), std::io::Error>(())
    });
    // `item?` fails only when reading the pipe fails; a line that is not an
    // event is an item, `Ok(Err(...))`, and reading goes on.
    let mut events = FramedRead::new(stdout, EventCodec::new());
    while let Some(item) = events.next().await {
        match item? {
            Ok(event) => match event.command_error_cause() {
                Some(cause) if cause.engine_stopped() => {
                    println!("engine stopped reading: {cause}")
                }
                Some(cause) => println!("engine refused a line: {cause}"),
                None => match &event {
                    Event::AssistantMessage { content, .. } => println!("assistant: {content}"),
                    event => println!("{}", event.name()),
                },
            },
            Err(error) => eprintln!("controller: skipped {error}"),
        }
    }
    writer.await??;
    engine.wait().await?;
    Ok(())
}
