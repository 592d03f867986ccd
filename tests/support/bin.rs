//! Running the `serve-command` binary as a child process over real pipes:
//! shared by the CLI's test files.
#![allow(dead_code)]

use std::io::Write;
use std::process::{Command, Output, Stdio};

pub const BIN: &str = env!("CARGO_BIN_EXE_serve-command");

/// Runs the binary with `args` and `stdin`, to completion.
#[track_caller]
pub fn run(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut input = child.stdin.take().unwrap();
    let stdin = stdin.to_vec();
    let writer = std::thread::spawn(move || input.write_all(&stdin));
    let out = child.wait_with_output().unwrap();
    // A program that exits without reading all its input (a usage error)
    // closes the pipe first: that is its answer, not the test's failure.
    match writer.join().unwrap() {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        written => written.unwrap(),
    }
    out
}

/// The binary's stdout, after asserting its exit status.
#[track_caller]
pub fn stdout_of(args: &[&str], stdin: &[u8], status: i32) -> String {
    let out = run(args, stdin);
    assert_eq!(
        out.status.code(),
        Some(status),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}
