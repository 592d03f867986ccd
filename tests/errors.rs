//! Every wire error string, and which one wins when a line has several
//! faults. These strings are what controllers read.

use serve_command::v1::{Command, CommandReader, LineError, ParseError, ReadError, SteerKind};
use std::error::Error;
use std::{fmt, io};

#[track_caller]
fn refused(line: &str, expected: ParseError, message: &str) {
    assert_eq!(
        Command::from_slice(line.as_bytes()),
        Err(LineError::Parse(expected.clone())),
        "{line}"
    );
    let value: serde_json::Value = serde_json::from_str(line).unwrap();
    assert_eq!(Command::from_json(&value), Err(expected.clone()), "{line}");
    assert_eq!(expected.to_string(), message);
}

#[test]
fn every_error_has_the_reference_string() {
    use ParseError::*;
    let table = [
        (
            r#"{"command":"prompt"}"#,
            ExpectedText,
            r#"expected a string "text" field"#,
        ),
        (
            r#"{"command":"prompt","text":null}"#,
            ExpectedText,
            r#"expected a string "text" field"#,
        ),
        (
            r#"{"command":"steer","kind":"prompt"}"#,
            ExpectedText,
            r#"expected a string "text" field"#,
        ),
        (
            r#"{"command":"prompt","text":"t","submission_id":null}"#,
            ExpectedSubmissionId,
            r#"expected a string "submission_id" field"#,
        ),
        (
            r#"{"command":"prompt","text":"t","submission_id":7}"#,
            ExpectedSubmissionId,
            r#"expected a string "submission_id" field"#,
        ),
        (
            r#"{"command":"steer","text":"t","kind":null}"#,
            ExpectedKind,
            r#"expected a string "kind" field"#,
        ),
        (
            r#"{"command":"steer","text":"t","kind":["prompt"]}"#,
            ExpectedKind,
            r#"expected a string "kind" field"#,
        ),
        (
            r#"{"command":"steer","text":"t","kind":"Prompt"}"#,
            UnknownSteerKind("Prompt".into()),
            "unknown steer kind: Prompt",
        ),
        (
            r#"{"command":"steer","text":"t","kind":"notice"}"#,
            UnknownSteerKind("notice".into()),
            "unknown steer kind: notice",
        ),
        (
            r#"{"command":"steer","text":"t","kind":""}"#,
            UnknownSteerKind("".into()),
            "unknown steer kind: ",
        ),
        (
            r#"{"command":"goal"}"#,
            ExpectedGoal,
            r#"expected {"action": "set", "text": ...} or {"action": "clear"}"#,
        ),
        (
            r#"{"command":"goal","action":"set"}"#,
            ExpectedGoal,
            r#"expected {"action": "set", "text": ...} or {"action": "clear"}"#,
        ),
        (
            r#"{"command":"goal","action":"set","text":7}"#,
            ExpectedGoal,
            r#"expected {"action": "set", "text": ...} or {"action": "clear"}"#,
        ),
        (
            r#"{"command":"goal","action":"CLEAR"}"#,
            ExpectedGoal,
            r#"expected {"action": "set", "text": ...} or {"action": "clear"}"#,
        ),
        (
            r#"{"command":"approval"}"#,
            ExpectedId,
            r#"expected a string "id" field"#,
        ),
        (
            r#"{"command":"approval","id":7,"allow":true}"#,
            ExpectedId,
            r#"expected a string "id" field"#,
        ),
        (
            r#"{"command":"approval","id":"a"}"#,
            ExpectedAllow,
            r#"expected a boolean "allow" field"#,
        ),
        (
            r#"{"command":"approval","id":"a","allow":"true"}"#,
            ExpectedAllow,
            r#"expected a boolean "allow" field"#,
        ),
        (
            r#"{"command":"nap"}"#,
            UnknownCommand("nap".into()),
            "unknown command: nap",
        ),
        (
            r#"{"command":"Cancel"}"#,
            UnknownCommand("Cancel".into()),
            "unknown command: Cancel",
        ),
        (
            r#"{"command":""}"#,
            UnknownCommand("".into()),
            "unknown command: ",
        ),
        (
            r#"{"command":"a\nb"}"#,
            UnknownCommand("a\nb".into()),
            "unknown command: a\nb",
        ),
        (
            r#"{}"#,
            ExpectedCommand,
            r#"expected a {"command": ...} object"#,
        ),
        (
            r#"{"command":null}"#,
            ExpectedCommand,
            r#"expected a {"command": ...} object"#,
        ),
        (
            r#"{"command":["cancel"]}"#,
            ExpectedCommand,
            r#"expected a {"command": ...} object"#,
        ),
        (
            r#"[{"command":"cancel"}]"#,
            ExpectedCommand,
            r#"expected a {"command": ...} object"#,
        ),
        (
            r#""cancel""#,
            ExpectedCommand,
            r#"expected a {"command": ...} object"#,
        ),
        (
            "null",
            ExpectedCommand,
            r#"expected a {"command": ...} object"#,
        ),
    ];
    for (line, error, message) in table {
        refused(line, error, message);
    }
}

#[test]
fn the_first_fault_in_the_reference_order_wins() {
    use ParseError::*;
    let table = [
        // steer: text before kind.
        (r#"{"command":"steer","kind":7,"text":7}"#, ExpectedText),
        (r#"{"command":"steer","kind":"notice"}"#, ExpectedText),
        // prompt: text before submission_id.
        (r#"{"command":"prompt","submission_id":7}"#, ExpectedText),
        // approval: id before allow.
        (r#"{"command":"approval","id":7}"#, ExpectedId),
        (r#"{"command":"approval","allow":"no"}"#, ExpectedId),
        // goal: a bad set is not rescued by anything else.
        (
            r#"{"command":"goal","action":"set","auto":true}"#,
            ExpectedGoal,
        ),
        // Duplicates: the last one decides.
        (r#"{"command":"cancel","command":7}"#, ExpectedCommand),
        (
            r#"{"command":"approval","id":"a","allow":true,"allow":null}"#,
            ExpectedAllow,
        ),
    ];
    for (line, error) in table {
        let message = error.to_string();
        refused(line, error, &message);
    }
}

#[test]
fn what_other_commands_carry_is_ignored() {
    let table = [
        (
            r#"{"command":"cancel","text":7,"kind":null,"allow":"x"}"#,
            Command::Cancel,
        ),
        (
            r#"{"command":"compact","command2":{"deep":[1,2,{"x":"\u0000"}]}}"#,
            Command::Compact,
        ),
        (
            r#"{"command":"goal","action":"clear","text":7,"auto":"yes"}"#,
            Command::GoalClear,
        ),
        (r#"{"command":7,"command":"cancel"}"#, Command::Cancel),
        (
            r#"{"command":"goal","action":"set","text":"  ","auto":1}"#,
            Command::GoalSet {
                text: "  ".into(),
                auto: false,
            },
        ),
    ];
    for (line, command) in table {
        assert_eq!(Command::from_slice(line.as_bytes()), Ok(command), "{line}");
    }
}

/// The messages of `error` and its `source()` chain, outermost first.
fn chain(error: &dyn Error) -> Vec<String> {
    let mut messages = vec![error.to_string()];
    let mut next = error.source();
    while let Some(e) = next {
        messages.push(e.to_string());
        next = e.source();
    }
    messages
}

/// No message in the chain repeats another's, nor is contained in the one
/// before it and also returned as its source.
#[track_caller]
fn reads_once(error: &dyn Error, expected: &[&str]) {
    let messages = chain(error);
    assert_eq!(messages, expected);
    for pair in messages.windows(2) {
        assert!(
            !pair[0].contains(&pair[1]),
            "{:?} displays its source {:?} too",
            pair[0],
            pair[1]
        );
    }
}

/// An I/O failure with a cause of its own, as a wrapped transport error has.
#[derive(Debug)]
struct Transport;

impl fmt::Display for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("connection reset")
    }
}

impl Error for Transport {}

#[derive(Debug)]
struct Tunnel(Transport);

impl fmt::Display for Tunnel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("tunnel closed")
    }
}

impl Error for Tunnel {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        Some(&self.0)
    }
}

#[test]
fn every_error_reads_once_down_its_source_chain() {
    let syntax = Command::from_slice(b"{\"command\"").unwrap_err();
    let nap = Command::from_slice(br#"{"command":"nap"}"#).unwrap_err();
    reads_once(&syntax, &["unexpected end of line at byte 10"]);
    reads_once(&nap, &["unknown command: nap"]);
    reads_once(
        &ReadError::Line {
            line: 1,
            error: nap.clone(),
        },
        &["line 1: unknown command: nap"],
    );
    reads_once(
        &ReadError::Line {
            line: 4,
            error: syntax,
        },
        &["line 4: unexpected end of line at byte 10"],
    );
    reads_once(
        &ReadError::TooLong { line: 2, max: 10 },
        &["line 2 is longer than 10 bytes"],
    );
    reads_once(
        &ReadError::Io(io::Error::other("boom")),
        &["read failed: boom"],
    );
    // A cause below the I/O error is still reachable, once.
    reads_once(
        &ReadError::Io(io::Error::other(Tunnel(Transport))),
        &["read failed: tunnel closed", "connection reset"],
    );
}

#[test]
fn a_line_error_is_transparent_to_its_source() {
    // `LineError` displays its inner error, so its source is the inner
    // error's source, never the inner error itself (which would print the
    // same message twice down the chain).
    let tunnel = serve_command::generic::LineError::Parse(Tunnel(Transport));
    assert_eq!(
        tunnel.source().map(ToString::to_string).as_deref(),
        Some("connection reset")
    );
    assert_eq!(chain(&tunnel), ["tunnel closed", "connection reset"]);
    // The crate's own errors have no source: none for either variant.
    let nap = Command::from_slice(br#"{"command":"nap"}"#).unwrap_err();
    let syntax = Command::from_slice(b"{").unwrap_err();
    assert!(matches!(nap, LineError::Parse(_)), "{nap:?}");
    assert!(matches!(syntax, LineError::Syntax(_)), "{syntax:?}");
    assert!(nap.source().is_none(), "{:?}", nap.source());
    assert!(syntax.source().is_none(), "{:?}", syntax.source());
    // Nor has v2's image error, though its `ParseError` wraps one.
    let image = serve_command::v2::Command::from_slice(
        br#"{"command":"prompt","content":[{"type":"image","media_type":"image/png","data":"iVBORw0KGgo"}]}"#,
    )
    .unwrap_err();
    assert_eq!(
        image.to_string(),
        "invalid content: JsonDecodeError((/0, invalid image: image data must be canonical padded base64))"
    );
    assert!(image.source().is_none(), "{:?}", image.source());
}

/// Every variant, with payloads a controller can meet: empty, with a
/// newline, non-ASCII, and looking like another message.
fn every_parse_error() -> Vec<ParseError> {
    use ParseError::*;
    let mut all = vec![
        ExpectedText,
        ExpectedSubmissionId,
        ExpectedKind,
        ExpectedGoal,
        ExpectedId,
        ExpectedAllow,
        ExpectedCommand,
    ];
    for payload in [
        "",
        "nap",
        "two\nlines",
        "日本語 😀",
        "expected a string \"text\" field",
        "unknown command: x",
        " ",
    ] {
        all.push(UnknownCommand(payload.into()));
        all.push(UnknownSteerKind(payload.into()));
    }
    all
}

#[test]
fn every_wire_string_parses_back_into_its_error() {
    for error in every_parse_error() {
        assert_eq!(error.to_string().parse::<ParseError>(), Ok(error.clone()));
        // As a controller meets it: inside an engine's event line.
        let event: serde_json::Value =
            serde_json::from_str(&LineError::Parse(error.clone()).event_line()).unwrap();
        let message = event["error"].as_str().unwrap();
        assert_eq!(message.parse::<ParseError>(), Ok(error));
    }
    assert_eq!(
        "unknown command: nap".parse(),
        Ok(ParseError::UnknownCommand("nap".into()))
    );
}

#[test]
fn other_messages_are_not_parse_errors() {
    for message in [
        "",
        "command stream: unterminated string at byte 3",
        "command stream: line 3 is longer than 10 bytes",
        "expected a string \"text\" field ",
        "Expected a string \"text\" field",
        "unknown command:nap",
        "invalid background job command",
    ] {
        let err = message.parse::<ParseError>().unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("not one of the protocol's command error messages: {message:?}")
        );
        assert_eq!(err.as_str(), message);
        assert_eq!(err.into_string(), message);
    }
}

#[test]
fn stream_errors_are_the_ones_the_engine_stops_at() {
    let input =
        b"{\"command\":\"nap\"}\n{\"command\":\"prompt\"}\nnope\n{\"command\":\"cancel\"}\n\
                  {\"command\":\"prompt\",\"text\":\"0123456789\"}\n";
    let got: Vec<(String, bool)> = CommandReader::with_max_line_len(&input[..], 30)
        .filter_map(Result::err)
        .map(|e| (e.to_string(), e.is_stream_error()))
        .collect();
    assert_eq!(
        got,
        [
            ("line 1: unknown command: nap".to_owned(), false),
            ("line 2: expected a string \"text\" field".to_owned(), false),
            ("line 3: expected a JSON value at byte 0".to_owned(), true),
            ("line 5 is longer than 30 bytes".to_owned(), true),
        ]
    );
    assert!(ReadError::Io(io::Error::other("x")).is_stream_error());
    let syntax = Command::from_slice(b"[").unwrap_err();
    assert!(syntax.is_stream_error());
    assert!(!LineError::Parse(ParseError::ExpectedId).is_stream_error());
}

#[test]
fn every_command_has_its_wire_name() {
    let table = [
        (
            Command::Prompt {
                text: "t".into(),
                submission_id: None,
            },
            "prompt",
        ),
        (
            Command::Steer {
                kind: SteerKind::Command,
                text: "/diff".into(),
            },
            "steer",
        ),
        (Command::Compact, "compact"),
        (Command::Cancel, "cancel"),
        (
            Command::GoalSet {
                text: "g".into(),
                auto: true,
            },
            "goal",
        ),
        (Command::GoalClear, "goal"),
        (
            Command::ApprovalDecision {
                id: "a".into(),
                allow: false,
            },
            "approval",
        ),
    ];
    for (command, name) in table {
        assert_eq!(command.name(), name);
        // The name is the line's `"command"` value.
        assert_eq!(command.to_json()["command"], name);
    }
}
