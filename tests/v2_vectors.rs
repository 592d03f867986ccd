//! The v2 conformance vectors (`tests/vectors/commands-v2.jsonl`, every
//! verdict from `oracle-latest-next`) through every v2 decoding path (bytes,
//! `str::parse`, a `CommandReader`, `Value`, `Deserialize`) and every
//! encoder, and the error strings back through `FromStr`.

use serde_json::Value;
use serve_command::generic::{CommandReader, LineError, ReadError};
use serve_command::v2::{Command, ParseError};

#[path = "support/vectors.rs"]
mod format;

use format::Outcome;

fn outcome(r: Result<Command, LineError<ParseError>>) -> Outcome {
    match r {
        Ok(cmd) => Outcome::Ok(canonical(&cmd)),
        Err(LineError::Parse(e)) => Outcome::Error(e.to_string()),
        Err(LineError::Syntax(_)) => Outcome::NotJson,
        Err(e) => panic!("a kind of error the vectors do not know: {e:?}"),
    }
}

/// The command's line from every encoder, checked equal; without its LF.
#[track_caller]
fn canonical(cmd: &Command) -> String {
    let line = cmd.to_line();
    let mut written = Vec::new();
    cmd.write_line(&mut written).unwrap();
    assert_eq!(written, line.as_bytes(), "write_line");
    let serialized = serde_json::to_string(cmd).unwrap();
    assert_eq!(serialized + "\n", line, "Serialize");
    let reparsed: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(cmd.to_json(), reparsed, "to_json");
    line.strip_suffix('\n').expect("one LF").to_owned()
}

fn vectors() -> Vec<(String, Outcome, String)> {
    format::text(format::V2)
}

#[test]
fn there_are_enough_v2_vectors() {
    assert!(vectors().len() >= 250);
}

#[test]
fn from_slice_matches_every_v2_vector() {
    let mut failures = Vec::new();
    for (line, expected, why) in vectors() {
        let got = outcome(Command::from_slice(line.as_bytes()));
        if got != expected {
            failures.push(format!(
                "{why}: {line:?}\n  expected {expected:?}\n  got      {got:?}"
            ));
        }
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

/// A reader of revision v2 gives each line's outcome, with its number; a
/// line of only spaces, tabs and CRs is no item.
#[test]
fn reader_matches_every_v2_vector() {
    let vectors = vectors();
    let mut input = Vec::new();
    for (line, ..) in &vectors {
        input.extend_from_slice(line.as_bytes());
        input.push(b'\n');
    }
    let mut reader = CommandReader::<_, Command>::with_max_line_len(&input[..], 1 << 24);
    for (n, (line, expected, why)) in vectors.into_iter().enumerate() {
        if line.bytes().all(|b| matches!(b, b' ' | b'\t' | b'\r')) {
            continue;
        }
        let got = match reader.next().expect("an item") {
            Ok(cmd) => Outcome::Ok(canonical(&cmd)),
            Err(ReadError::Line { line, error }) => {
                assert_eq!(line, n as u64 + 1, "{why}: line number");
                match error {
                    LineError::Parse(e) => Outcome::Error(e.to_string()),
                    LineError::Syntax(_) => Outcome::NotJson,
                    e => panic!("{why}: a kind of error the vectors do not know: {e:?}"),
                }
            }
            Err(e) => panic!("{why}: {e}"),
        };
        assert_eq!(got, expected, "{why}: {line:?}");
    }
    assert!(reader.next().is_none());
}

/// Where `serde_json` can build a `Value`, `parse` and `Deserialize` say
/// what `from_slice` says.
#[test]
fn parse_and_deserialize_match_where_serde_json_reads_the_line() {
    let mut compared = 0;
    for (line, expected, why) in vectors() {
        let Ok(value) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        compared += 1;
        let parsed = match Command::from_json(&value) {
            Ok(cmd) => Outcome::Ok(canonical(&cmd)),
            Err(e) => Outcome::Error(e.to_string()),
        };
        assert_eq!(parsed, expected, "{why}: parse");
        let deserialized = match serde_json::from_str::<Command>(&line) {
            Ok(cmd) => Outcome::Ok(canonical(&cmd)),
            Err(e) => {
                let msg = e.to_string();
                let wire = msg.rsplit_once(" at line ").map_or(&*msg, |(m, _)| m);
                Outcome::Error(wire.to_owned())
            }
        };
        assert_eq!(deserialized, expected, "{why}: Deserialize");
        // From a `Value` too (owned strings, no borrowing).
        let from_value = match serde_json::from_value::<Command>(value) {
            Ok(cmd) => Outcome::Ok(canonical(&cmd)),
            Err(e) => Outcome::Error(e.to_string()),
        };
        assert_eq!(from_value, expected, "{why}: from_value");
    }
    assert_eq!(compared, 615);
}

/// Every canonical line decodes to a command whose line is itself, and
/// every error string names its error back.
#[test]
fn canonical_lines_are_fixed_points_and_errors_parse_back() {
    for (line, expected, why) in vectors() {
        match expected {
            Outcome::Ok(canonical_line) => {
                let cmd = Command::from_slice(canonical_line.as_bytes()).expect(&why);
                assert_eq!(canonical(&cmd), canonical_line, "{why}");
            }
            Outcome::Error(message) => {
                let Err(LineError::Parse(e)) = Command::from_slice(line.as_bytes()) else {
                    panic!("{why}: not a command error");
                };
                assert_eq!(message.parse::<ParseError>(), Ok(e), "{why}: FromStr");
            }
            Outcome::NotJson => {}
        }
    }
}
