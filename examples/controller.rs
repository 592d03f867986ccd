//! A controller's side of a session in today's protocol (`v2`): writes
//! commands to stdout, one line each, as a TUI or a script would write them
//! to an engine's stdin.
//!
//!     cargo run --example controller | cargo run --example engine

use serve_command::v2::{Command, ContentPart, Image, SteerKind};
use std::io::{self, Write};

/// A 1x1 PNG, 67 bytes. A controller would read the user's file:
/// `std::fs::read("shot.png")?`.
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\0\0\0\0\x3a\x7e\x9b\x55\
    \0\0\0\nIDAT\x78\xda\x63\xf8\x0f\0\x01\x01\x01\0\x1c\xb0\x8c\x99\0\0\0\0IEND\xae\x42\x60\x82";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Refused unless the bytes are PNG, JPEG, GIF or WebP, at most 5 MiB.
    let screenshot = Image::from_bytes(PNG.to_vec())?;
    let session = [
        Command::prompt(vec![
            ContentPart::Text("Why does this test fail?".into()),
            ContentPart::Image(screenshot),
        ])
        // Tag the prompt to reconcile its delivery later by exact id.
        .tagged("sub-1"),
        // A steer reaches the running turn; this one is tagged too.
        Command::steer(SteerKind::Prompt, "Keep the public API unchanged").tagged("sub-2"),
        // A command steer: a slash command for the engine, not for the model.
        Command::steer(SteerKind::Command, "/diff"),
        Command::jobs_snapshot("req-1"),
        Command::job_stop("req-2", "g-1", "job-4"),
        Command::goal_set("cargo test passes", true),
        Command::approval("appr-7", true),
        Command::GoalClear,
        Command::Cancel,
    ];
    let mut stdout = io::stdout().lock();
    for command in &session {
        // One write per line: a line never interleaves with another writer's.
        command.write_line(&mut stdout)?;
    }
    stdout.flush()?;
    Ok(())
}
