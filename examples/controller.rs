//! A controller on `v2::serve::Controller`: it starts the engine named on
//! its command line (with none, `serve-command mock-engine`, built beside
//! it), sends a prompt and waits for its turn (allowing any tool the turn
//! asks about), asks for the background jobs, and closes the engine. Every
//! call ends by its deadline; a call that fails ends the program with the
//! cause on stderr and exit status 1: the engine's exit status and last
//! words when it dies, the line when an answer does not decode, what was
//! awaited when the engine goes silent (`SERVE_COMMAND_STALL_MS` shortens
//! the 10 minutes a turn may be silent).
//!
//!     cargo build --features cli && cargo run --example controller
//!     cargo run --example controller -- cargo run -q --example engine
//!     cargo run --example controller -- openseek serve

use serve_command::v2::serve::{Controller, Decision, Limits};
use std::{env, process::Command, time::Duration};

fn main() {
    if let Err(error) = run() {
        eprintln!("controller: {error}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let mut argv: Vec<String> = env::args().skip(1).collect();
    if argv.is_empty() {
        let mock = env::current_exe()?.with_file_name("../serve-command");
        argv = vec![mock.display().to_string(), "mock-engine".into()];
    }
    let stall = env::var("SERVE_COMMAND_STALL_MS").map_or(Ok(600_000), |ms| ms.parse())?;
    let engine = Controller::spawn(Command::new(&argv[0]).args(&argv[1..]))?
        .with_limits(Limits::default().stall(Duration::from_millis(stall)));
    let turn = engine.prompt("Say hi")?.wait_with(|_| Decision::Allowed)?;
    println!("the turn of {}: {:?}", turn.command, turn.end);
    println!("jobs: {:?}", engine.jobs_snapshot()?);
    println!("exit: {:?}", engine.close()?.and_then(|s| s.code()));
    Ok(())
}
