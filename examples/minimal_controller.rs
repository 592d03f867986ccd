//! The smallest controller (the README's): it starts the engine named on
//! its command line, writes it two commands, and prints what it answers.
//! `examples/event_reader.rs` runs a whole session so, and
//! `examples/controller.rs` one on `v2::serve::Controller`.
//!
//!     cargo run --example minimal_controller -- cargo run -q --example minimal_engine

use serve_command::v2::{Command, Event, EventReader};
use std::io::BufReader;
use std::process::{Command as Process, Stdio};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut argv = std::env::args().skip(1);
    let program = argv
        .next()
        .ok_or("usage: minimal_controller ENGINE [ARGS...]")?;
    let mut engine = Process::new(program)
        .args(argv)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?;
    let (Some(mut stdin), Some(stdout)) = (engine.stdin.take(), engine.stdout.take()) else {
        return Err("the engine's pipes".into());
    };
    // Two short lines fit in the pipe; a long session writes from another
    // thread (examples/event_reader.rs), so that neither side waits on the other.
    Command::prompt("Why does this test fail?").write_line(&mut stdin)?;
    Command::jobs_snapshot("req-1").write_line(&mut stdin)?;
    // The end of input: the engine answers what it read, and exits.
    drop(stdin);
    // A line that is not an event is an error item, and reading goes on.
    for item in EventReader::new(BufReader::new(stdout)) {
        match item {
            Ok(Event::AgentFinished { answer, .. }) => println!("answer: {answer}"),
            Ok(event) => println!("{}", event.name()),
            Err(error) => eprintln!("controller: skipped {error}"),
        }
    }
    engine.wait()?;
    Ok(())
}
