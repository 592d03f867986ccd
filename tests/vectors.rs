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

fn vectors() -> Vec<(String, Outcome, String)> {
    include_str!("vectors/commands.jsonl")
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("vector is JSON");
            let line = v["line"].as_str().expect("line").to_owned();
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

#[test]
fn from_slice_matches_every_vector() {
    let mut failures = Vec::new();
    for (line, expected, why) in vectors() {
        let got = outcome(Command::from_slice(line.as_bytes()));
        if got != expected {
            failures.push(format!(
                "{why}: {line:?}\n  expected {expected:?}\n  got      {got:?}"
            ));
        }
        // `str::parse` and a trailing LF change nothing.
        assert_eq!(outcome(line.parse()), got, "{why}: str::parse");
        let with_lf = format!("{line}\n");
        assert_eq!(
            outcome(Command::from_slice(with_lf.as_bytes())),
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
        let Ok(value) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        compared += 1;
        let parsed = match Command::parse(&value) {
            Ok(cmd) => Outcome::Ok(cmd.to_line().trim_end_matches('\n').to_owned()),
            Err(e) => Outcome::Error(e.to_string()),
        };
        assert_eq!(parsed, expected, "{why}: parse");
        let deserialized = match serde_json::from_str::<Command>(&line) {
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
