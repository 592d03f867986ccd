//! `serve_command::v1::strategy` held to the reference model, so the strategies
//! cannot drift from the protocol unnoticed. Run with `--features proptest`.
#![cfg(feature = "proptest")]

mod support;

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use serde_json::Value;
use serve_command::v1::{strategy, Command, LineError};
use std::collections::BTreeSet;
use support::model::{model_parse, model_to_line};
use support::to_model::to_model;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn every_line_is_json_and_its_outcome_is_the_models((line, outcome) in strategy::line()) {
        prop_assert!(!line.contains('\n'), "a line holds no LF: {:?}", line);
        let decoded = Command::from_slice(line.as_bytes());
        prop_assert!(!matches!(decoded, Err(LineError::Syntax(_))), "not JSON: {:?} {:?}", line, decoded);
        prop_assert_eq!(&decoded.map_err(|e| e.to_string()), &outcome);
        // serde_json refuses numbers past f64 and nesting past 128; the
        // model sees every other line.
        if let Ok(value) = serde_json::from_str::<Value>(&line) {
            prop_assert_eq!(outcome.map(|c| to_model(&c)), model_parse(&value), "{:?}", line);
        }
    }

    #[test]
    fn commands_encode_as_the_model_does(cmd in strategy::command()) {
        let line = cmd.to_line();
        let model = model_to_line(&to_model(&cmd));
        prop_assert_eq!(line.strip_suffix('\n'), Some(model.as_str()));
        prop_assert_eq!(Command::from_slice(line.as_bytes()), Ok(cmd));
    }
}

/// What kind of outcome a line has: a command's variant, or the error
/// message without its variable part.
fn category(outcome: &Result<Command, String>) -> String {
    match outcome {
        Ok(cmd) => format!("{cmd:?}")
            .split([' ', '{'])
            .next()
            .unwrap_or_default()
            .to_owned(),
        Err(msg) if msg.starts_with("unknown steer kind: ") => "unknown steer kind".into(),
        Err(msg) if msg.starts_with("unknown command: ") => "unknown command".into(),
        Err(msg) => msg.clone(),
    }
}

/// The generator reaches every outcome, and every kind of near miss it
/// promises, within a few thousand lines.
#[test]
fn lines_reach_every_outcome_and_every_kind_of_near_miss() {
    let mut runner = TestRunner::deterministic();
    let lines = strategy::line();
    let mut categories = BTreeSet::new();
    let (mut serde_reads, mut serde_refuses) = (0, 0);
    let mut features = BTreeSet::new();
    for _ in 0..4000 {
        let (line, outcome) = lines.new_tree(&mut runner).expect("a line").current();
        categories.insert(category(&outcome));
        match serde_json::from_str::<Value>(&line) {
            Ok(_) => serde_reads += 1,
            Err(_) => serde_refuses += 1,
        }
        let checks: [(&str, bool); 9] = [
            ("not an object", !line.trim_start().starts_with('{')),
            ("escape", line.contains("\\u")),
            (
                "escaped key",
                line.contains("\"te\\u0078t\"")
                    || line.contains("\"\\u0074\\u0065\\u0078\\u0074\""),
            ),
            ("huge number", line.contains("1e400")),
            ("deep", line.contains(&"[".repeat(129))),
            ("deep objects", line.contains(&"{\"\":".repeat(129))),
            ("space", line.contains(' ')),
            ("tab", line.contains('\t')),
            ("CR", line.contains('\r')),
        ];
        features.extend(checks.iter().filter(|(_, hit)| *hit).map(|(name, _)| *name));
    }
    let expected: BTreeSet<String> = [
        "Prompt",
        "Steer",
        "Compact",
        "Cancel",
        "GoalSet",
        "GoalClear",
        "ApprovalDecision",
        "expected a string \"text\" field",
        "expected a string \"submission_id\" field",
        "expected a string \"kind\" field",
        "unknown steer kind",
        "expected {\"action\": \"set\", \"text\": ...} or {\"action\": \"clear\"}",
        "expected a string \"id\" field",
        "expected a boolean \"allow\" field",
        "unknown command",
        "expected a {\"command\": ...} object",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(categories, expected);
    assert_eq!(
        features,
        BTreeSet::from([
            "not an object",
            "escape",
            "escaped key",
            "huge number",
            "deep",
            "deep objects",
            "space",
            "tab",
            "CR",
        ])
    );
    // Most lines reach the model; enough are past serde_json's limits.
    assert!(serde_reads >= 3000, "serde_json read only {serde_reads}");
    assert!(
        serde_refuses >= 100,
        "serde_json refused only {serde_refuses}"
    );
}
