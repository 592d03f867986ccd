//! Test-only reference model: a literal transliteration of the reference's
//! `Command::parse` / `parse_steer` / `Command::to_json`
//! (spec/command.mbt) over `serde_json::Value`, one Rust arm per MoonBit arm
//! and in the same order. Deliberately independent of the crate under test.
//!
//! A MoonBit map pattern `{ "k": P, .. }` matches when the line is an object
//! whose key `k` is present and matches `P`; a duplicate key has already been
//! resolved (last wins) by the JSON parser, as serde_json's `Map` does.

use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelCommand {
    Prompt {
        text: String,
        submission_id: Option<String>,
    },
    /// `kind` is `"prompt"` or `"command"`.
    Steer {
        kind: &'static str,
        text: String,
    },
    Compact,
    Cancel,
    GoalSet {
        text: String,
        auto: bool,
    },
    GoalClear,
    ApprovalDecision {
        id: String,
        allow: bool,
    },
}

use ModelCommand::*;

const TEXT_ERR: &str = "expected a string \"text\" field";

/// `line["k"]`, or `None` when the line is not an object or lacks `k`.
fn field<'a>(line: &'a Value, k: &str) -> Option<&'a Value> {
    line.as_object().and_then(|o| o.get(k))
}

/// `line["k"]` when it is a `String(_)`.
fn string<'a>(line: &'a Value, k: &str) -> Option<&'a str> {
    field(line, k).and_then(Value::as_str)
}

/// `Command::parse`.
pub fn model_parse(line: &Value) -> Result<ModelCommand, String> {
    let s = |k| string(line, k);
    // `"allow": True` / `"allow": False` — only a JSON boolean matches either.
    let allow = field(line, "allow").and_then(Value::as_bool);
    match (s("command"), s("action"), s("text"), s("id"), allow) {
        // { "command": "prompt", "text": String(text), .. }
        (Some("prompt"), _, Some(text), _, _) => match field(line, "submission_id") {
            // { "submission_id": String(id), .. }
            Some(Value::String(id)) => Ok(Prompt {
                text: text.into(),
                submission_id: Some(id.clone()),
            }),
            // { "submission_id": _, .. }
            Some(_) => Err("expected a string \"submission_id\" field".into()),
            // _ (untagged prompt)
            None => Ok(Prompt {
                text: text.into(),
                submission_id: None,
            }),
        },
        // { "command": "steer", .. }
        (Some("steer"), ..) => parse_steer(line),
        // { "command": "prompt", .. }
        (Some("prompt"), ..) => Err(TEXT_ERR.into()),
        // { "command": "compact", .. }
        (Some("compact"), ..) => Ok(Compact),
        // { "command": "cancel", .. }
        (Some("cancel"), ..) => Ok(Cancel),
        // { "command": "goal", "action": "set", "text": String(text), .. }
        (Some("goal"), Some("set"), Some(text), _, _) => Ok(GoalSet {
            text: text.into(),
            // line is { "auto": True, .. }
            auto: field(line, "auto") == Some(&Value::Bool(true)),
        }),
        // { "command": "goal", "action": "clear", .. }
        (Some("goal"), Some("clear"), ..) => Ok(GoalClear),
        // { "command": "goal", .. }
        (Some("goal"), ..) => {
            Err("expected {\"action\": \"set\", \"text\": ...} or {\"action\": \"clear\"}".into())
        }
        // { "command": "approval", "id": String(id), "allow": True, .. }
        (Some("approval"), _, _, Some(id), Some(true)) => Ok(ApprovalDecision {
            id: id.into(),
            allow: true,
        }),
        // { "command": "approval", "id": String(id), "allow": False, .. }
        (Some("approval"), _, _, Some(id), Some(false)) => Ok(ApprovalDecision {
            id: id.into(),
            allow: false,
        }),
        // { "command": "approval", "id": String(_), .. }
        (Some("approval"), _, _, Some(_), None) => Err("expected a boolean \"allow\" field".into()),
        // { "command": "approval", .. }
        (Some("approval"), ..) => Err("expected a string \"id\" field".into()),
        // { "command": String(other), .. }
        (Some(other), ..) => Err(format!("unknown command: {other}")),
        // _
        (None, ..) => Err("expected a {\"command\": ...} object".into()),
    }
}

/// `parse_steer`.
fn parse_steer(line: &Value) -> Result<ModelCommand, String> {
    // guard line is { "text": String(text), .. }
    let Some(text) = string(line, "text") else {
        return Err(TEXT_ERR.into());
    };
    let text = text.to_owned();
    match field(line, "kind") {
        // { "kind": String("prompt"), .. }
        Some(Value::String(k)) if k == "prompt" => Ok(Steer {
            kind: "prompt",
            text,
        }),
        // { "kind": String("command"), .. }
        Some(Value::String(k)) if k == "command" => Ok(Steer {
            kind: "command",
            text,
        }),
        // { "kind": String(other), .. }
        Some(Value::String(other)) => Err(format!("unknown steer kind: {other}")),
        // { "kind": _, .. }
        Some(_) => Err("expected a string \"kind\" field".into()),
        // _ (no kind: a prompt steer)
        None => Ok(Steer {
            kind: "prompt",
            text,
        }),
    }
}

/// `Command::to_json(..).stringify()`, without the trailing LF: keys in the
/// reference's order, each string written by `serde_json::to_string`.
pub fn model_to_line(c: &ModelCommand) -> String {
    let q = |s: &str| serde_json::to_string(s).expect("a str always serializes");
    match c {
        Prompt {
            text,
            submission_id: Some(id),
        } => {
            format!(
                r#"{{"command":"prompt","text":{},"submission_id":{}}}"#,
                q(text),
                q(id)
            )
        }
        Prompt {
            text,
            submission_id: None,
        } => format!(r#"{{"command":"prompt","text":{}}}"#, q(text)),
        Steer { kind, text } => format!(
            r#"{{"command":"steer","kind":{},"text":{}}}"#,
            q(kind),
            q(text)
        ),
        Compact => r#"{"command":"compact"}"#.into(),
        Cancel => r#"{"command":"cancel"}"#.into(),
        GoalSet { text, auto: true } => {
            format!(
                r#"{{"command":"goal","action":"set","text":{},"auto":true}}"#,
                q(text)
            )
        }
        GoalSet { text, auto: false } => {
            format!(r#"{{"command":"goal","action":"set","text":{}}}"#, q(text))
        }
        GoalClear => r#"{"command":"goal","action":"clear"}"#.into(),
        ApprovalDecision { id, allow } => {
            format!(
                r#"{{"command":"approval","id":{},"allow":{}}}"#,
                q(id),
                allow
            )
        }
    }
}
