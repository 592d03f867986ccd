//! The conformance vectors in `tests/vectors/commands.jsonl`, through every
//! decoding path. Each vector was checked against the reference.

use serde_json::Value;
use serve_command::{Command, LineError};

#[derive(Debug, PartialEq)]
enum Outcome {
    Ok(String),
    Error(String),
    NotJson,
}

fn outcome(r: Result<Command, LineError>) -> Outcome {
    match r {
        Ok(cmd) => Outcome::Ok(cmd.to_line().trim_end_matches('\n').to_owned()),
        Err(LineError::Command(e)) => Outcome::Error(e.to_string()),
        Err(LineError::Syntax(_)) => Outcome::NotJson,
    }
}

/// A vector's input: `line`, or the bytes of `line_base64` (for lines a
/// JSON string cannot carry, such as invalid UTF-8); exactly one of the two.
fn vector_line(v: &Value) -> Vec<u8> {
    match (v["line"].as_str(), v["line_base64"].as_str()) {
        (Some(line), None) => line.as_bytes().to_vec(),
        (None, Some(b64)) => {
            use base64::Engine as _;
            base64::engine::general_purpose::STANDARD
                .decode(b64)
                .expect("line_base64 is standard, padded base64")
        }
        _ => panic!("exactly one of line and line_base64: {v}"),
    }
}

fn vectors() -> Vec<(Vec<u8>, Outcome, String)> {
    include_str!("vectors/commands.jsonl")
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("vector is JSON");
            let line = vector_line(&v);
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

#[test]
fn there_are_enough_vectors() {
    assert!(vectors().len() >= 150);
}

/// Each input once: a second vector for the same bytes says nothing new.
#[test]
fn no_two_vectors_share_a_line() {
    let mut seen = std::collections::HashMap::new();
    for (line, _, why) in vectors() {
        if let Some(first) = seen.insert(line.clone(), why.clone()) {
            panic!("{why:?} repeats the line of {first:?}");
        }
    }
}

/// `line_base64` is decoded to bytes, not read as text: the first such
/// vector is a 0xFF byte in a prompt's text, and nine are not UTF-8.
#[test]
fn line_base64_vectors_carry_raw_bytes() {
    let raw: Vec<Vec<u8>> = include_str!("vectors/commands.jsonl")
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("vector is JSON"))
        .filter(|v| v.get("line_base64").is_some())
        .map(|v| vector_line(&v))
        .collect();
    assert_eq!(raw[0], b"{\"command\":\"prompt\",\"text\":\"\xff\"}");
    assert_eq!(
        raw.iter()
            .filter(|l| std::str::from_utf8(l).is_err())
            .count(),
        9
    );
}

#[test]
fn from_slice_matches_every_vector() {
    let mut failures = Vec::new();
    for (line, expected, why) in vectors() {
        let got = outcome(Command::from_slice(&line));
        if got != expected {
            failures.push(format!(
                "{why}: {:?}\n  expected {expected:?}\n  got      {got:?}",
                String::from_utf8_lossy(&line)
            ));
        }
        // `str::parse` (for the lines that are UTF-8) and a trailing LF
        // change nothing.
        if let Ok(line) = std::str::from_utf8(&line) {
            assert_eq!(outcome(line.parse()), got, "{why}: str::parse");
        }
        let with_lf = [&line[..], b"\n"].concat();
        assert_eq!(
            outcome(Command::from_slice(&with_lf)),
            got,
            "{why}: with LF"
        );
    }
    assert!(
        failures.is_empty(),
        "{} vectors failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Where `serde_json` can build a `Value`, `parse` and `Deserialize` say
/// what `from_slice` says. (`serde_json` refuses `1e400` and nesting past
/// 128, which the reference accepts: those vectors are `from_slice`'s alone.)
#[test]
fn parse_and_deserialize_agree_where_serde_json_reads_the_line() {
    let mut compared = 0;
    for (line, expected, why) in vectors() {
        let Ok(value) = serde_json::from_slice::<Value>(&line) else {
            continue;
        };
        compared += 1;
        let parsed = match Command::parse(&value) {
            Ok(cmd) => Outcome::Ok(cmd.to_line().trim_end_matches('\n').to_owned()),
            Err(e) => Outcome::Error(e.to_string()),
        };
        assert_eq!(parsed, expected, "{why}: parse");
        let deserialized = match serde_json::from_slice::<Command>(&line) {
            Ok(cmd) => Outcome::Ok(cmd.to_line().trim_end_matches('\n').to_owned()),
            Err(e) => {
                // serde_json appends " at line L column C" to the wire string.
                let msg = e.to_string();
                let wire = msg.rsplit_once(" at line ").map_or(&*msg, |(m, _)| m);
                Outcome::Error(wire.to_owned())
            }
        };
        assert_eq!(deserialized, expected, "{why}: Deserialize");
    }
    assert!(compared >= 200, "only {compared} vectors compared");
}
