//! What `openseek serve` refuses among the commands it reads
//! (`Command::serve_refusal`, both revisions): tables of exact refusals, and
//! the engine vectors (`tests/vectors/serve.jsonl`, `serve-v2.jsonl`, every
//! verdict from `oracle-serve-v1` / `oracle-serve`) run through the decoder
//! and the refusal.

use serve_command::v1::{Command, LineError, SteerKind};
use serve_command::v2::{self, Content, ContentPart, Image};

#[path = "support/vectors.rs"]
mod format;

use format::Outcome;

const BLANK: &str = "goal text must not be blank";
const IMAGES: &str = "command steering does not accept images";
const PNG_URL: &str = "data:image/png;base64,iVBORw0KGgo=";
const PNG_PART: &str = r#"{"type":"image","media_type":"image/png","data":"iVBORw0KGgo="}"#;

/// The `command_error` event for a message with nothing to escape.
fn event(message: &str) -> String {
    assert!(!message.contains(['"', '\\']), "{message}");
    format!("{{\"event\":\"command_error\",\"error\":\"{message}\"}}\n")
}

/// `line` decodes in the seed's revision, and the engine refuses it with
/// `expected` (or runs it).
#[track_caller]
fn v1_refusal(line: &str, expected: Option<&str>) {
    let cmd = Command::from_slice(line.as_bytes()).unwrap_or_else(|e| panic!("{line}: {e}"));
    assert_eq!(
        cmd.serve_refusal().map(serve_command::v2::Refusal::as_str),
        expected,
        "{line}"
    );
    assert_eq!(
        cmd.serve_refusal_event_line(),
        expected.map(event),
        "{line}"
    );
}

/// [`v1_refusal`], in the later revision.
#[track_caller]
fn v2_refusal(line: &str, expected: Option<&str>) {
    let cmd = v2::Command::from_slice(line.as_bytes()).unwrap_or_else(|e| panic!("{line}: {e}"));
    assert_eq!(
        cmd.serve_refusal().map(serve_command::v2::Refusal::as_str),
        expected,
        "{line}"
    );
    assert_eq!(
        cmd.serve_refusal_event_line(),
        expected.map(event),
        "{line}"
    );
}

#[test]
fn v1_refuses_only_a_blank_goal() {
    for (line, expected) in [
        (
            r#"{"command":"goal","action":"set","text":""}"#,
            Some(BLANK),
        ),
        (
            r#"{"command":"goal","action":"set","text":" "}"#,
            Some(BLANK),
        ),
        (
            r#"{"command":"goal","action":"set","text":"\t\n\r "}"#,
            Some(BLANK),
        ),
        (
            r#"{"command":"goal","action":"set","text":"\u0020\u0009"}"#,
            Some(BLANK),
        ),
        (
            r#"{"command":"goal","action":"set","text":" ","auto":true}"#,
            Some(BLANK),
        ),
        (
            r#"{"command":"goal","action":"set","text":"x","text":"\r\n"}"#,
            Some(BLANK),
        ),
        (r#"{"command":"goal","action":"set","text":"\u3000"}"#, None),
        (r#"{"command":"goal","action":"set","text":"\u00a0"}"#, None),
        (r#"{"command":"goal","action":"set","text":"\u000b"}"#, None),
        (r#"{"command":"goal","action":"set","text":"\f"}"#, None),
        (r#"{"command":"goal","action":"set","text":"\u2028"}"#, None),
        (r#"{"command":"goal","action":"set","text":"\u200b"}"#, None),
        (r#"{"command":"goal","action":"set","text":" x "}"#, None),
        (r#"{"command":"goal","action":"clear","text":" "}"#, None),
        (r#"{"command":"prompt","text":""}"#, None),
        (r#"{"command":"steer","kind":"command","text":" "}"#, None),
        // The seed's revision ignores `images`: nothing to refuse.
        (
            r#"{"command":"steer","kind":"command","text":"ls","images":["data:image/png;base64,iVBORw0KGgo="]}"#,
            None,
        ),
        (r#"{"command":"approval","id":" ","allow":false}"#, None),
        (r#"{"command":"cancel"}"#, None),
    ] {
        v1_refusal(line, expected);
    }
}

#[test]
fn v2_refuses_a_blank_goal_and_a_command_steer_with_images() {
    let steer = |fields: &str| format!(r#"{{"command":"steer",{fields}}}"#);
    for (line, expected) in [
        (
            r#"{"command":"goal","action":"set","text":""}"#.to_owned(),
            Some(BLANK),
        ),
        (
            r#"{"command":"goal","action":"set","text":"\n","auto":false}"#.to_owned(),
            Some(BLANK),
        ),
        (
            r#"{"command":"goal","action":"set","text":"\u3000"}"#.to_owned(),
            None,
        ),
        (
            r#"{"command":"goal","action":"set","text":"\u000B"}"#.to_owned(),
            None,
        ),
        (r#"{"command":"goal","action":"clear"}"#.to_owned(), None),
        (
            steer(&format!(r#""kind":"command","content":[{PNG_PART}]"#)),
            Some(IMAGES),
        ),
        (
            steer(&format!(
                r#""kind":"command","content":[{{"type":"text","text":"ls"}},{PNG_PART}]"#
            )),
            Some(IMAGES),
        ),
        (
            steer(&format!(
                r#""kind":"command","content":[{PNG_PART}],"submission_id":"s""#
            )),
            Some(IMAGES),
        ),
        (
            steer(&format!(
                r#""kind":"command","text":"ls","images":["{PNG_URL}"]"#
            )),
            Some(IMAGES),
        ),
        (
            steer(&format!(
                r#""kind":"command","text":"","images":["{PNG_URL}","{PNG_URL}"]"#
            )),
            Some(IMAGES),
        ),
        (
            steer(&format!(
                r#""kind":"prompt","content":[{PNG_PART}],"kind":"command""#
            )),
            Some(IMAGES),
        ),
        // Not refused: no image, another kind, or content that wins over `images`.
        (steer(r#""kind":"command","text":"ls","images":[]"#), None),
        (steer(r#""kind":"command","content":[]"#), None),
        (
            steer(
                r#""kind":"command","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]"#,
            ),
            None,
        ),
        (steer(r#""kind":"command","content":"ls""#), None),
        (
            steer(&format!(
                r#""kind":"command","content":"ls","images":["{PNG_URL}"]"#
            )),
            None,
        ),
        (
            steer(&format!(r#""kind":"prompt","content":[{PNG_PART}]"#)),
            None,
        ),
        (steer(&format!(r#""content":[{PNG_PART}]"#)), None),
        (
            steer(&format!(r#""text":"ls","images":["{PNG_URL}"]"#)),
            None,
        ),
        (
            format!(r#"{{"command":"prompt","content":[{PNG_PART}]}}"#),
            None,
        ),
        (
            format!(r#"{{"command":"prompt","text":"see","images":["{PNG_URL}"]}}"#),
            None,
        ),
        (r#"{"command":"prompt","content":"  "}"#.to_owned(), None),
        (
            r#"{"command":"jobs_snapshot","request_id":" "}"#.to_owned(),
            None,
        ),
    ] {
        v2_refusal(&line, expected);
    }
}

/// A refusal applies to commands, not lines: a line the decoder refuses
/// never reaches it, whatever it holds.
#[test]
fn parse_errors_come_first() {
    for (line, error) in [
        (
            r#"{"command":"goal","action":"set","text":null}"#,
            r#"expected {"action": "set", "text": ...} or {"action": "clear"}"#,
        ),
        (
            r#"{"command":"goal","action":"SET","text":" "}"#,
            r#"expected {"action": "set", "text": ...} or {"action": "clear"}"#,
        ),
    ] {
        assert_eq!(
            Command::from_slice(line.as_bytes())
                .unwrap_err()
                .to_string(),
            error,
            "{line}"
        );
        assert_eq!(
            v2::Command::from_slice(line.as_bytes())
                .unwrap_err()
                .to_string(),
            error,
            "{line}"
        );
    }
    for (line, error) in [
        (r#"{"command":"steer","kind":"notice","content":[{"type":"image","media_type":"image/png","data":"iVBORw0KGgo="}]}"#, "unknown steer kind: notice"),
        (r#"{"command":"steer","kind":"command","text":"ls","images":null}"#, "expected an array of image URLs"),
        (r#"{"command":"steer","kind":"command","content":[{"type":"image","media_type":"image/png","data":"iVBORw0KGgo"}]}"#, "invalid content: JsonDecodeError((/0, invalid image: image data must be canonical padded base64))"),
    ] {
        assert_eq!(v2::Command::from_slice(line.as_bytes()).unwrap_err().to_string(), error, "{line}");
    }
}

/// Blank is exactly empty or only tab, LF, CR and space: checked for every
/// character up to U+FFFF and a few beyond, alone and after a space, in
/// both revisions (one rule, so they must agree).
#[test]
fn blank_is_only_tab_lf_cr_space() {
    let chars = (0..=0xFFFFu32)
        .chain([0x1_0000, 0x1_F600, 0xE_0020, 0x10_FFFF])
        .filter_map(char::from_u32);
    for c in chars {
        let blank = matches!(c, '\t' | '\n' | '\r' | ' ');
        for text in [c.to_string(), format!(" {c}"), format!("{c}\t")] {
            let expected = blank.then_some(BLANK);
            let v1 = Command::GoalSet {
                text: text.clone(),
                auto: false,
            };
            assert_eq!(
                v1.serve_refusal().map(serve_command::v2::Refusal::as_str),
                expected,
                "{text:?}"
            );
            let v2 = v2::Command::goal_set_auto(text);
            assert_eq!(
                v2.serve_refusal().map(serve_command::v2::Refusal::as_str),
                expected,
                "{c:?}"
            );
        }
    }
    assert_eq!(
        Command::GoalSet {
            text: String::new(),
            auto: false
        }
        .serve_refusal()
        .map(serve_command::v2::Refusal::as_str),
        Some(BLANK)
    );
    assert_eq!(
        Command::GoalSet {
            text: " ".repeat(100_000),
            auto: true
        }
        .serve_refusal()
        .map(serve_command::v2::Refusal::as_str),
        Some(BLANK)
    );
}

/// Built commands, not lines: the refusal reads the command as it is.
#[test]
fn refusal_of_built_commands() {
    let png = Image::from_data_url(PNG_URL).unwrap();
    let steer = |kind, parts: Vec<ContentPart>| v2::Command::steer(kind, Content::new(parts));
    let text = || ContentPart::Text("ls".into());
    let image = || ContentPart::Image(png.clone());
    for (cmd, expected) in [
        (steer(SteerKind::Command, vec![image()]), Some(IMAGES)),
        (
            steer(SteerKind::Command, vec![text(), text(), image()]),
            Some(IMAGES),
        ),
        (steer(SteerKind::Command, vec![text()]), None),
        (steer(SteerKind::Command, vec![]), None),
        (steer(SteerKind::Prompt, vec![image()]), None),
        (v2::Command::prompt(Content::new(vec![image()])), None),
        (v2::Command::goal_set("\r"), Some(BLANK)),
        (v2::Command::GoalClear, None),
        (v2::Command::Compact, None),
    ] {
        assert_eq!(
            cmd.serve_refusal().map(serve_command::v2::Refusal::as_str),
            expected,
            "{cmd:?}"
        );
        assert_eq!(
            cmd.serve_refusal_event_line(),
            expected.map(event),
            "{cmd:?}"
        );
    }
    for (cmd, expected) in [
        (
            Command::GoalSet {
                text: "\r".into(),
                auto: false,
            },
            Some(BLANK),
        ),
        (
            Command::Steer {
                kind: SteerKind::Command,
                text: String::new(),
            },
            None,
        ),
        (
            Command::Prompt {
                text: " ".into(),
                submission_id: None,
            },
            None,
        ),
        (Command::GoalClear, None),
    ] {
        assert_eq!(
            cmd.serve_refusal().map(serve_command::v2::Refusal::as_str),
            expected,
            "{cmd:?}"
        );
    }
}

/// One vector's verdict from the decoder, and its refusal.
fn v1_verdict(line: &[u8]) -> (Outcome, Option<String>) {
    match Command::from_slice(line) {
        Ok(cmd) => {
            let canonical = cmd.to_line().strip_suffix('\n').expect("one LF").to_owned();
            let refusal = cmd.serve_refusal().map(serve_command::v2::Refusal::as_str);
            assert_eq!(cmd.serve_refusal_event_line(), refusal.map(event));
            (Outcome::Ok(canonical), refusal.map(str::to_owned))
        }
        Err(LineError::Parse(e)) => (Outcome::Error(e.to_string()), None),
        Err(LineError::Syntax(_)) => (Outcome::NotJson, None),
        Err(e) => panic!("a kind of error this does not know: {e:?}"),
    }
}

/// [`v1_verdict`], in the later revision.
fn v2_verdict(line: &[u8]) -> (Outcome, Option<String>) {
    match v2::Command::from_slice(line) {
        Ok(cmd) => {
            let canonical = cmd.to_line().strip_suffix('\n').expect("one LF").to_owned();
            let refusal = cmd.serve_refusal().map(serve_command::v2::Refusal::as_str);
            assert_eq!(cmd.serve_refusal_event_line(), refusal.map(event));
            (Outcome::Ok(canonical), refusal.map(str::to_owned))
        }
        Err(v2::LineError::Parse(e)) => (Outcome::Error(e.to_string()), None),
        Err(v2::LineError::Syntax(_)) => (Outcome::NotJson, None),
        Err(e) => panic!("a kind of error this does not know: {e:?}"),
    }
}

/// Every vector of `jsonl` through `verdict`; returns how many were refused.
#[track_caller]
fn run_vectors(jsonl: &str, verdict: fn(&[u8]) -> (Outcome, Option<String>)) -> usize {
    let vectors = format::bytes(jsonl);
    let refusals = format::refusals(jsonl);
    assert_eq!(vectors.len(), refusals.len());
    let mut refused = 0;
    for ((line, expected, why), expected_refusal) in vectors.into_iter().zip(refusals) {
        let (outcome, refusal) = verdict(&line);
        assert_eq!(
            outcome,
            expected,
            "{why}: {}",
            String::from_utf8_lossy(&line)
        );
        assert_eq!(
            refusal,
            expected_refusal,
            "{why}: {}",
            String::from_utf8_lossy(&line)
        );
        refused += usize::from(refusal.is_some());
    }
    refused
}

#[test]
fn v1_serve_vectors() {
    assert_eq!(format::bytes(format::SERVE_V1).len(), 155);
    assert_eq!(run_vectors(format::SERVE_V1, v1_verdict), 29);
}

#[test]
fn v2_serve_vectors() {
    assert_eq!(format::bytes(format::SERVE_V2).len(), 155);
    assert_eq!(run_vectors(format::SERVE_V2, v2_verdict), 42);
}
