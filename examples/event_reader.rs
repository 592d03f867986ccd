//! A controller's side of a session at the level of the lines (`v2`): it
//! starts an engine, writes commands to its stdin, one line each, from a
//! thread, and reads its events back, typed, from its stdout with
//! `EventReader`, as a TUI or a script that sorts the events itself would.
//! With no engine named, it writes the commands to its own stdout, for a
//! pipe. `examples/controller.rs` drives an engine on
//! `v2::serve::Controller` instead, which says what answers each command
//! and bounds every wait.
//!
//!     cargo run --example event_reader -- cargo run -q --example engine
//!     cargo run --example event_reader | cargo run --example engine

use serve_command::v2::{Command, ContentPart, Event, EventReader, Image, SteerKind};
use std::io::{self, BufReader, Write};
use std::process::{Command as Process, Stdio};

/// A 1x1 PNG, 67 bytes. A controller would read the user's file:
/// `std::fs::read("shot.png")?`.
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\0\0\0\0\x3a\x7e\x9b\x55\
    \0\0\0\nIDAT\x78\xda\x63\xf8\x0f\0\x01\x01\x01\0\x1c\xb0\x8c\x99\0\0\0\0IEND\xae\x42\x60\x82";

fn main() -> Result<(), Box<dyn std::error::Error>> {
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
    let Some(program) = engine_argv.next() else {
        let mut stdout = io::stdout().lock();
        for command in &session {
            // One write per line: a line never interleaves with another writer's.
            command.write_line(&mut stdout)?;
        }
        stdout.flush()?;
        return Ok(());
    };
    let mut engine = Process::new(program)
        .args(engine_argv)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?;
    let (Some(mut stdin), Some(stdout)) = (engine.stdin.take(), engine.stdout.take()) else {
        return Err("the engine's pipes".into());
    };
    // Commands from one thread, events read on this one: neither side can
    // fill a pipe and wait on the other. Dropping stdin is the end of input.
    let writer = std::thread::spawn(move || -> io::Result<()> {
        for command in &session {
            command.write_line(&mut stdin)?;
        }
        Ok(())
    });
    // A line that is not an event is an error item, and reading goes on.
    for item in EventReader::new(BufReader::new(stdout)) {
        match item {
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
    writer.join().map_err(|_| "the writer panicked")??;
    engine.wait()?;
    Ok(())
}
