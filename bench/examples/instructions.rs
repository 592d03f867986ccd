//! A fixed workload for an instruction count (valgrind's callgrind), which,
//! unlike time, repeats exactly on a noisy machine: every line of the
//! command, serve and event vectors, and a 100 KB prompt full of escapes,
//! decoded and written back 200 times. Compare two commits by the total
//! (BENCHMARKS.md, "Issue 51").
//!
//!     cargo build --release -p serve-command-bench --example instructions
//!     valgrind --tool=callgrind target/release/examples/instructions tests/vectors

use serve_command::v2::{Command, Event};

fn main() {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "tests/vectors".into());
    let mut lines: Vec<(bool, Vec<u8>)> = Vec::new();
    for (file, event) in [
        ("commands-v2.jsonl", false),
        ("events.jsonl", true),
        ("serve-v2.jsonl", false),
    ] {
        let text = std::fs::read_to_string(format!("{dir}/{file}")).expect("a vectors file");
        for vector in text.lines() {
            let vector: serde_json::Value = serde_json::from_str(vector).expect("a vector");
            if let Some(line) = vector.get("line").and_then(|line| line.as_str()) {
                lines.push((event, line.as_bytes().to_vec()));
            }
        }
    }
    let escapes = "line of text with \\\"quotes\\\" and \\n escapes, ".repeat(2000);
    lines.push((
        false,
        format!("{{\"command\":\"prompt\",\"content\":\"{escapes}\"}}").into_bytes(),
    ));
    let mut written = 0;
    let mut out = Vec::new();
    for _ in 0..200 {
        for (event, line) in &lines {
            out.clear();
            if *event {
                if let Ok(event) = Event::from_slice(line) {
                    event.write_line(&mut out).expect("a Vec takes it");
                }
            } else if let Ok(command) = Command::from_slice(line) {
                command.write_line(&mut out).expect("a Vec takes it");
            }
            written += out.len();
        }
    }
    println!("{written} bytes written back");
}
