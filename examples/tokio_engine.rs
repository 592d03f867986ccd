//! The engine of `examples/engine.rs` over tokio: the same replies, read
//! with `CommandCodec` through a `FramedRead` on tokio's stdin.
//!
//!     cargo run --example tokio_engine --features tokio < examples/session.jsonl

use futures_util::StreamExt;
use serve_command::v2::{Command, CommandCodec};
use tokio::io::AsyncWriteExt;
use tokio_util::codec::FramedRead;

fn main() -> std::io::Result<()> {
    // One thread serves one pipe (as `#[tokio::main(flavor =
    // "current_thread")]` would, with tokio's `macros` feature).
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()?;
    runtime.block_on(serve())
}

async fn serve() -> std::io::Result<()> {
    let mut stdout = tokio::io::stdout();
    let mut commands = FramedRead::new(tokio::io::stdin(), CommandCodec::new());
    // `item?` fails only when reading stdin fails; a bad line is an item,
    // `Ok(Err(ReadError))`, so one bad line does not end the stream.
    while let Some(item) = commands.next().await {
        match item? {
            Ok(command) => {
                let reply = match command.serve_refusal_event_line() {
                    Some(event) => event,
                    None if command == Command::Cancel => "cancelling the turn\n".to_owned(),
                    None => format!("{command:?}\n"),
                };
                stdout.write_all(reply.as_bytes()).await?;
            }
            Err(error) => {
                stdout.write_all(error.event_line().as_bytes()).await?;
                if error.is_stream_error() {
                    stdout.flush().await?;
                    eprintln!("engine: stopping: {error}");
                    break;
                }
            }
        }
    }
    stdout.flush().await
}
