//! A controller on the crate's model of the serve loop
//! (`v2::serve::Controller`), driving an engine through a session: a prompt with an
//! image, a tagged steer, `jobs_snapshot`, a goal, an approval, the engine's
//! prediction and a line the engine refuses. Each call returns what answers its
//! command, typed; what answers nothing is a notice.
//!
//!     cargo build --features cli && cargo run --example conversation
//!     cargo run --example conversation -- target/debug/serve-command mock-engine --script turns.jsonl
//!     cargo run --example conversation -- openseek serve
//!
//! With no engine named it runs `serve-command mock-engine`, built beside
//! it. A script whose second turn is `{"approval":{}}` makes that turn ask.

use serve_command::v2::serve::{Controller, Decision};
use serve_command::v2::{Command, ContentPart, Image, SteerKind};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut argv: Vec<String> = std::env::args().skip(1).collect();
    if argv.is_empty() {
        let mock = std::env::current_exe()?.with_file_name("../serve-command");
        argv = vec![mock.display().to_string(), "mock-engine".into()];
    }
    let engine = Controller::spawn(std::process::Command::new(&argv[0]).args(&argv[1..]))?;
    let png = Image::from_data_url("data:image/png;base64,iVBORw0KGgo=")?;
    let text = ContentPart::Text("What is it?".into());
    let turn = engine.prompt(vec![text, ContentPart::Image(png)])?.wait()?;
    println!(
        "the turn of {}: {:?}, {:?}",
        turn.command, turn.end, turn.usage
    );
    let steer = Command::steer_tagged(SteerKind::Prompt, "Shorter, please.", "s1");
    println!("steer: {:?}", engine.request(steer)?);
    println!("jobs: {:?}", engine.jobs_snapshot()?);
    println!("goal: {:?}", engine.goal(Command::goal_set("tests pass"))?);
    let turn = engine.prompt("Run the tests.")?.wait_with(|question| {
        println!("allowing {}: {}", question.tool_name, question.detail);
        Decision::Allowed
    })?;
    println!("the turn of {}: {:?}", turn.command, turn.end);
    // The engine predicts by itself after a turn that finished, if it can
    // (`mock-engine --predict TEXT` does): the latest one, while current.
    println!("prediction: {:?}", engine.prediction().map(|p| p.outcome));
    println!("refused: {:?}", engine.send_line(b"{\"command\":\"nap\"}")?);
    println!("answering nothing: {:?}", engine.notices());
    println!(
        "exit: {:?}",
        engine.close()?.and_then(|status| status.code())
    );
    Ok(())
}
