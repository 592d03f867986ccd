//! `v2::serve::TokioController`: the session of `conversation.rs`, awaited,
//! with a turn and a request in flight together and a timeout around a
//! call (the controller has none of its own).
//!
//!     cargo build --features cli && cargo run --example tokio_conversation --features tokio
//!     cargo run --example tokio_conversation --features tokio -- openseek serve

use serve_command::v2::serve::{Decision, TokioController};
use serve_command::v2::{Command, ContentPart, Image, SteerKind};
use std::time::Duration;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(session())
}

async fn session() -> Result<(), Box<dyn std::error::Error>> {
    let mut argv: Vec<String> = std::env::args().skip(1).collect();
    if argv.is_empty() {
        let mock = std::env::current_exe()?.with_file_name("../serve-command");
        argv = vec![mock.display().to_string(), "mock-engine".into()];
    }
    let engine = TokioController::spawn(tokio::process::Command::new(&argv[0]).args(&argv[1..]))?;
    let png = Image::from_data_url("data:image/png;base64,iVBORw0KGgo=")?;
    let text = ContentPart::Text("What is it?".into());
    // The prompt is written at once; its turn is awaited after the snapshot
    // that crosses it.
    let turn = engine.prompt(vec![text, ContentPart::Image(png)])?;
    println!("jobs: {:?}", engine.jobs_snapshot().await?);
    let turn = turn.wait().await?;
    println!(
        "the turn of {}: {:?}, {:?}",
        turn.command, turn.end, turn.usage
    );
    let steer = Command::steer_tagged(SteerKind::Prompt, "Shorter, please.", "s1");
    println!("steer: {:?}", engine.request(steer).await?);
    println!(
        "goal: {:?}",
        engine.goal(Command::goal_set("tests pass")).await?
    );
    let turn = engine.prompt("Run the tests.")?.wait_with(|question| {
        println!("allowing {}: {}", question.tool_name, question.detail);
        Decision::Allowed
    });
    let turn = tokio::time::timeout(Duration::from_secs(60), turn).await??;
    println!("the turn of {}: {:?}", turn.command, turn.end);
    // The engine predicts by itself after a turn that finished, if it can.
    println!("prediction: {:?}", engine.prediction().map(|p| p.outcome));
    let refused = engine.send_line(b"{\"command\":\"nap\"}").await?;
    println!("refused: {refused:?}");
    println!("answering nothing: {:?}", engine.notices());
    println!(
        "exit: {:?}",
        engine.close().await?.and_then(|status| status.code())
    );
    Ok(())
}
