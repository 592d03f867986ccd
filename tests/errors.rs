//! Every wire error string, and which one wins when a line has several
//! faults. These strings are what controllers read.

use serve_command::{Command, LineError, ParseError};

#[track_caller]
fn refused(line: &str, expected: ParseError, message: &str) {
    assert_eq!(
        Command::from_slice(line.as_bytes()),
        Err(LineError::Command(expected.clone())),
        "{line}"
    );
    let value: serde_json::Value = serde_json::from_str(line).unwrap();
    assert_eq!(Command::parse(&value), Err(expected.clone()), "{line}");
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
