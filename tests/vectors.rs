//! The conformance vectors in `tests/vectors/commands.jsonl`, through every
//! decoding path. Each vector was checked against the reference.

#[path = "support/vectors.rs"]
mod format;

use format::Outcome;
use serde_json::Value;
use serve_command::v1::{Command, LineError};

fn outcome(r: Result<Command, LineError>) -> Outcome {
    match r {
        Ok(cmd) => Outcome::Ok(cmd.to_line().trim_end_matches('\n').to_owned()),
        Err(LineError::Parse(e)) => Outcome::Error(e.to_string()),
        Err(LineError::Syntax(_)) => Outcome::NotJson,
        Err(e) => panic!("a kind of error the vectors do not know: {e:?}"),
    }
}

fn vectors() -> Vec<(Vec<u8>, Outcome, String)> {
    format::bytes(format::V1)
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
    let with_base64 = format::V1
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("vector is JSON"))
        .map(|v| v.get("line_base64").is_some());
    let raw: Vec<Vec<u8>> = vectors()
        .into_iter()
        .zip(with_base64)
        .filter(|(_, base64)| *base64)
        .map(|((line, _, _), _)| line)
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
        let parsed = match Command::from_json(&value) {
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
