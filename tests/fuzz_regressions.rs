//! Inputs from fuzzing, each with the exact outcome the protocol requires.
//!
//! A crash that `cargo fuzz tmin` has minimised becomes a row here (see
//! fuzz/README.md). The outcomes of UTF-8 rows were checked against the
//! reference (shared/reference-oracle); the syntax errors' reasons and
//! offsets are this crate's own.

use serve_command::v1::{Command, LineError};

/// What a line must decode to.
#[derive(Debug, PartialEq)]
enum Want {
    /// A command, given as the line `to_line` writes for it (without LF).
    Ok(&'static str),
    /// A `ParseError`, given as its wire string.
    Err(&'static str),
    /// Not JSON: the reason and the byte offset.
    NotJson(&'static str, usize),
}

#[derive(Debug, PartialEq)]
enum Got {
    Ok(String),
    Err(String),
    NotJson(String, usize),
}

fn got(r: Result<Command, LineError>) -> Got {
    match r {
        Ok(c) => Got::Ok(c.to_line().trim_end_matches('\n').to_owned()),
        Err(LineError::Parse(e)) => Got::Err(e.to_string()),
        Err(LineError::Syntax(e)) => Got::NotJson(e.reason().to_owned(), e.offset()),
        Err(e) => panic!("a kind of error this does not know: {e:?}"),
    }
}

fn want(w: &Want) -> Got {
    match *w {
        Want::Ok(line) => Got::Ok(line.to_owned()),
        Want::Err(msg) => Got::Err(msg.to_owned()),
        Want::NotJson(reason, at) => Got::NotJson(reason.to_owned(), at),
    }
}

/// The rows: the input's bytes, what it must decode to, and where it came
/// from.
fn cases() -> Vec<(Vec<u8>, Want, &'static str)> {
    let nest = |n: usize| ["[".repeat(n), "]".repeat(n)].concat().into_bytes();
    vec![
        (
            b"\xef\xbb\xbf{\"command\":\"cancel\"}".to_vec(),
            Want::NotJson("expected a JSON value", 0),
            "seed class: a BOM is not whitespace",
        ),
        (
            br#"{"\u0063ommand":"goal","action":"cl\u0065ar"}"#.to_vec(),
            Want::Ok(r#"{"command":"goal","action":"clear"}"#),
            "dictionary class: escaped key and value",
        ),
        (
            br#"{"command":"steer","kind":"n\u006ftice","text":"x"}"#.to_vec(),
            Want::Err("unknown steer kind: notice"),
            "dictionary class: an escaped kind is unescaped in the message",
        ),
        (
            br#"{"command":"prompt","text":"\ud83d\ude00","submission_id":"\u2028"}"#.to_vec(),
            Want::Ok("{\"command\":\"prompt\",\"text\":\"😀\",\"submission_id\":\"\u{2028}\"}"),
            "dictionary class: a surrogate pair; U+2028 written raw",
        ),
        (
            br#"{"command":"prompt","text":"\ud83d"}"#.to_vec(),
            Want::NotJson(
                "lone UTF-16 surrogate escape (cannot be held by a Rust String)",
                28,
            ),
            "dictionary class: a lone surrogate (refused by today's reference; the early-2026 one read it)",
        ),
        (
            br#"{"c\udc00":"g00b"}"#.to_vec(),
            Want::NotJson(
                "lone UTF-16 surrogate escape (cannot be held by a Rust String)",
                3,
            ),
            "decode_line corpus against the early-2026 reference: a lone surrogate \
             in an ignored key refuses the line (as today's reference does)",
        ),
        (
            br#"{"command":"approval","id":"a","allow":true,"allow":"true"}"#.to_vec(),
            Want::Err("expected a boolean \"allow\" field"),
            "duplicate key: the last one wins",
        ),
        (
            br#"{"command":"approval","id":"a","allow":1e400}"#.to_vec(),
            Want::Err("expected a boolean \"allow\" field"),
            "a number past f64 is a number (serde_json refuses it)",
        ),
        (
            br#"{"command":"goal","action":"set","text":"","auto":1}"#.to_vec(),
            Want::Ok(r#"{"command":"goal","action":"set","text":""}"#),
            "only true arms a goal",
        ),
        (
            b"\t{\"command\":\"cancel\"}\t\r".to_vec(),
            Want::Ok(r#"{"command":"cancel"}"#),
            "whitespace around the object",
        ),
        (
            b"{\"command\":\"cancel\"}\x00".to_vec(),
            Want::NotJson("trailing characters after the JSON value", 20),
            "a NUL after the object",
        ),
        (
            b"{\"command\":\"cancel\",}".to_vec(),
            Want::NotJson("expected a string key", 20),
            "a trailing comma",
        ),
        (
            b"{\"command\":\"prompt\",\"text\":\"a\xff\"}".to_vec(),
            Want::NotJson("invalid UTF-8", 29),
            "invalid UTF-8 inside a string",
        ),
        (
            nest(1024),
            Want::Err("expected a {\"command\": ...} object"),
            "1024 levels: the deepest the reference reads",
        ),
        (
            nest(1025),
            Want::NotJson("nested deeper than 1024 levels", 1024),
            "1025 levels",
        ),
    ]
}

#[test]
fn every_fuzz_regression_decodes_as_recorded() {
    let mut failures = Vec::new();
    for (input, expected, why) in cases() {
        let g = got(Command::from_slice(&input));
        if g != want(&expected) {
            failures.push(format!(
                "{why}: {:?}\n  expected {expected:?}\n  got      {g:?}",
                String::from_utf8_lossy(&input)
            ));
        }
        // Where serde_json reads the line, `parse` says the same.
        if let Ok(value) = serde_json::from_slice::<serde_json::Value>(&input) {
            let parsed = match Command::from_json(&value) {
                Ok(c) => Got::Ok(c.to_line().trim_end_matches('\n').to_owned()),
                Err(e) => Got::Err(e.to_string()),
            };
            assert_eq!(parsed, g, "{why}: parse");
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `$serde_json::private::RawValue` is serde_json's own token: with its
/// `raw_value` feature, a `serde_json::Value` reads an object whose first
/// key it is as the JSON text in its value (decode_line_v2 found
/// `{"$serde_json::private::RawValue":"p",...}`, which `Value` refuses).
/// The reference reads it as any other key (oracle-newest, oracle-latest,
/// oracle-events), and so does every path of the crate's own: `from_slice`
/// and `Deserialize`, for both revisions' commands and for events (a
/// job's `data` included).
#[test]
fn serde_json_token_key_is_any_other_key() {
    use serve_command::{v1, v2};
    let rows: [(&str, Result<&str, &str>); 3] = [
        (
            r#"{"$serde_json::private::RawValue":"{\"command\":\"cancel\"}"}"#,
            Err("expected a {\"command\": ...} object"),
        ),
        (
            r#"{"$serde_json::private::RawValue":"p","command":"cancel"}"#,
            Ok(r#"{"command":"cancel"}"#),
        ),
        (
            r#"{"command":"cancel","$serde_json::private::RawValue":"p"}"#,
            Ok(r#"{"command":"cancel"}"#),
        ),
    ];
    // A line written back, or the error's message (serde_json's position
    // cut off).
    fn verdict<E: std::fmt::Display>(r: Result<String, E>) -> Result<String, String> {
        r.map(|l| l.trim_end_matches('\n').to_owned()).map_err(|e| {
            e.to_string()
                .split(" at line ")
                .next()
                .unwrap_or("")
                .to_owned()
        })
    }
    for (line, expected) in rows {
        let bytes = line.as_bytes();
        let paths = [
            (
                "v1 from_slice",
                verdict(v1::Command::from_slice(bytes).map(|c| c.to_line())),
            ),
            (
                "v2 from_slice",
                verdict(v2::Command::from_slice(bytes).map(|c| c.to_line())),
            ),
            (
                "v1 Deserialize",
                verdict(serde_json::from_str::<v1::Command>(line).map(|c| c.to_line())),
            ),
            (
                "v2 Deserialize",
                verdict(serde_json::from_str::<v2::Command>(line).map(|c| c.to_line())),
            ),
        ];
        let expected = expected.map(str::to_owned).map_err(str::to_owned);
        for (path, got) in paths {
            assert_eq!(got, expected, "{path} of {line}");
        }
    }
    for line in [
        r#"{"$serde_json::private::RawValue":"p","event":"agent_step","step":1}"#,
        r#"{"event":"agent_step","step":1,"$serde_json::private::RawValue":"p"}"#,
    ] {
        let want = v2::Event::agent_step(1);
        assert_eq!(
            v2::Event::from_slice(line.as_bytes()),
            Ok(want.clone()),
            "from_slice of {line}"
        );
        assert_eq!(
            serde_json::from_str::<v2::Event>(line).ok(),
            Some(want),
            "Deserialize of {line}"
        );
    }
    // In a job's `data`, which the crate keeps as it came: written back
    // with the key, by `from_slice` and by `Deserialize` alike.
    let job = include_str!("vectors/events.jsonl")
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("a vector"))
        .filter_map(|v| v["ok"].as_str().map(str::to_owned))
        .find(|l| l.contains(r#""data":{"tests""#))
        .expect("a vector with a job's data")
        .replace(
            r#""data":{"tests""#,
            r#""data":{"$serde_json::private::RawValue":"p","tests""#,
        );
    let written = |e: v2::Event| e.to_line().trim_end_matches('\n').to_owned();
    assert_eq!(
        v2::Event::from_slice(job.as_bytes()).map(written),
        Ok(job.clone())
    );
    assert_eq!(
        serde_json::from_str::<v2::Event>(&job).ok().map(written),
        Some(job)
    );
}
