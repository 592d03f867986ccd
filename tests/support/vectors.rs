//! The conformance vectors' format (README, "Conformance vectors"), read in
//! one place for every test that runs them: `tests/vectors/commands.jsonl`
//! (the seed's revision) and `commands-v2.jsonl` (the later one), and the
//! engine's refusals in `serve.jsonl` and `serve-v2.jsonl` (the same format,
//! plus `refused`: [`refusals`]).

// Each test uses the part it needs.
#![allow(dead_code)]

use base64::Engine as _;
use serde_json::Value;

pub const V1: &str = include_str!("../vectors/commands.jsonl");
pub const V2: &str = include_str!("../vectors/commands-v2.jsonl");
pub const SERVE_V1: &str = include_str!("../vectors/serve.jsonl");
pub const SERVE_V2: &str = include_str!("../vectors/serve-v2.jsonl");

/// What a vector says its line is.
#[derive(Debug, PartialEq)]
pub enum Outcome {
    /// A command, and its canonical line without the LF.
    Ok(String),
    /// JSON but not a command: the exact message.
    Error(String),
    /// Not JSON.
    NotJson,
}

/// Every vector of `jsonl`: its input line, what it is, and why.
///
/// The input is `line`, or the bytes of `line_base64` (for lines a JSON
/// string cannot carry, such as invalid UTF-8); exactly one of the two.
pub fn bytes(jsonl: &str) -> Vec<(Vec<u8>, Outcome, String)> {
    jsonl
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("vector is JSON");
            let line = match (v["line"].as_str(), v["line_base64"].as_str()) {
                (Some(line), None) => line.as_bytes().to_vec(),
                (None, Some(b64)) => base64::engine::general_purpose::STANDARD
                    .decode(b64)
                    .expect("line_base64 is standard, padded base64"),
                _ => panic!("exactly one of line and line_base64: {l}"),
            };
            let expected = if let Some(ok) = v["ok"].as_str() {
                Outcome::Ok(ok.to_owned())
            } else if let Some(e) = v["error"].as_str() {
                Outcome::Error(e.to_owned())
            } else {
                assert_eq!(v["not_json"], true, "{l}");
                Outcome::NotJson
            };
            (line, expected, v["why"].as_str().expect("why").to_owned())
        })
        .collect()
}

/// [`bytes`], for a file whose every line is text.
pub fn text(jsonl: &str) -> Vec<(String, Outcome, String)> {
    bytes(jsonl)
        .into_iter()
        .map(|(line, expected, why)| {
            let line = String::from_utf8(line).unwrap_or_else(|_| panic!("{why}: not UTF-8"));
            (line, expected, why)
        })
        .collect()
}

/// Each vector's `refused`, in the order of [`bytes`]: the message the
/// engine refuses the command with, or `None` when it runs it (or the line
/// is not a command). A refused vector is a command: it has `ok` too.
pub fn refusals(jsonl: &str) -> Vec<Option<String>> {
    jsonl
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("vector is JSON");
            let refused = v
                .get("refused")
                .map(|r| r.as_str().expect("refused is a string"));
            if refused.is_some() {
                assert!(v["ok"].is_string(), "refused without ok: {l}");
            }
            refused.map(str::to_owned)
        })
        .collect()
}
