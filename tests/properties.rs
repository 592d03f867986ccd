//! Properties over random input: every decoding path agrees with the
//! reference model, and every command survives every encoder.

mod support;

use proptest::prelude::*;
use serde_json::Value;
use serve_command::v1::{Command, LineError, SteerKind};
use support::model::{model_parse, model_to_line};

/// What happened to a line, in terms every path can express.
#[derive(Debug, PartialEq)]
enum Outcome {
    /// The canonical line, without LF.
    Ok(String),
    /// The wire error string.
    Error(String),
}

fn of_command(r: Result<Command, String>) -> Outcome {
    match r {
        Ok(c) => Outcome::Ok(c.to_line().trim_end().to_owned()),
        Err(e) => Outcome::Error(e),
    }
}

// -- random near-command objects ---------------------------------------

/// A key, sometimes spelled with escapes, from the protocol's own keys.
fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => prop::sample::select(&["command", "text", "submission_id", "kind", "action", "auto", "id", "allow"][..])
            .prop_map(|k| format!("\"{k}\"")),
        1 => prop::sample::select(&[r#""comm\u0061nd""#, r#""te\u0078t""#, r#""\u0061llow""#, r#""kin\u0064""#, r#""command ""#, r#""Command""#, r#""noise""#, r#""""#][..])
            .prop_map(String::from),
    ]
}

/// A string value: the words the rules look for, escaped spellings of them,
/// and arbitrary text (escaped by serde_json).
fn string_value() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(&[
            "prompt", "steer", "compact", "cancel", "goal", "approval", "set", "clear", "command",
            "Prompt", "notice", "", " ", "true",
        ][..]).prop_map(|s| format!("\"{s}\"")),
        1 => prop::sample::select(&[r#""c\u0061ncel""#, r#""pr\u006fmpt""#, r#""\u0073et""#, r#""a\nb""#, r#""\ud83d\ude00""#, r#""\/""#][..])
            .prop_map(String::from),
        2 => any::<String>().prop_map(|s| serde_json::to_string(&s).unwrap()),
    ]
}

/// Any JSON value, biased toward the types the rules distinguish.
fn value() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        6 => string_value(),
        2 => Just("true".to_owned()),
        2 => Just("false".to_owned()),
        2 => Just("null".to_owned()),
        1 => prop::sample::select(&["0", "-1", "1.5e3", "123456789012345678901234567890", "-0.0"][..]).prop_map(String::from),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(|v| format!("[{}]", v.join(","))),
            prop::collection::vec((key(), inner), 0..3).prop_map(|kv| {
                let items: Vec<String> = kv.into_iter().map(|(k, v)| format!("{k}:{v}")).collect();
                format!("{{{}}}", items.join(","))
            }),
        ]
    })
}

/// JSON whitespace, usually none.
fn ws() -> impl Strategy<Value = &'static str> {
    prop_oneof![8 => Just(""), 1 => Just(" "), 1 => Just("\t"), 1 => Just("\r\n "), 1 => Just("\r")]
}

/// A value the rules would accept for `key`, or any value at all.
fn value_for(key: &'static str) -> BoxedStrategy<String> {
    let good: BoxedStrategy<String> = match key {
        "kind" => prop::sample::select(&[r#""prompt""#, r#""command""#][..])
            .prop_map(String::from)
            .boxed(),
        "action" => prop::sample::select(&[r#""set""#, r#""clear""#][..])
            .prop_map(String::from)
            .boxed(),
        "auto" | "allow" => prop::sample::select(&["true", "false"][..])
            .prop_map(String::from)
            .boxed(),
        _ => string_value().boxed(),
    };
    prop_oneof![2 => good, 1 => value()].boxed()
}

/// A line: an object of protocol keys, each present or not, each holding a
/// good value or any other, in any order, among noise and duplicates; now
/// and then some other JSON value.
fn line() -> impl Strategy<Value = String> {
    let keys = [
        "text",
        "submission_id",
        "kind",
        "action",
        "auto",
        "id",
        "allow",
    ];
    let fields: Vec<_> = keys
        .iter()
        .map(|&k| {
            prop::option::weighted(0.5, value_for(k))
                .prop_map(move |v| v.map(|v| format!("\"{k}\":{v}")))
        })
        .collect();
    let noise = (key(), value()).prop_map(|(k, v)| format!("{k}:{v}"));
    let name = prop_oneof![
        6 => prop::sample::select(&["prompt", "steer", "compact", "cancel", "goal", "approval"][..])
            .prop_map(|n| Some(format!("\"command\":\"{n}\""))),
        1 => prop::option::of(("\"command\"", value()).prop_map(|(k, v)| format!("{k}:{v}"))),
    ];
    let object = (name, fields, prop::collection::vec(noise, 0..3))
        .prop_flat_map(|(name, fields, noise)| {
            let members: Vec<String> = name
                .into_iter()
                .chain(fields.into_iter().flatten())
                .chain(noise)
                .collect();
            Just(members).prop_shuffle()
        })
        .prop_flat_map(|members| {
            let n = members.len();
            (
                Just(members),
                prop::collection::vec((ws(), ws()), n..=n),
                ws(),
            )
        })
        .prop_map(|(members, spaces, end)| {
            let members: Vec<String> = members
                .iter()
                .zip(spaces)
                .map(|(m, (a, b))| format!("{a}{m}{b}"))
                .collect();
            format!("{{{}}}{end}", members.join(","))
        });
    prop_oneof![12 => object, 1 => value()]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    /// The model, `parse`, `from_slice` and `Deserialize` decode every line
    /// `serde_json` can read the same way.
    #[test]
    fn every_path_agrees_with_the_reference_model(line in line()) {
        let from_slice = Command::from_slice(line.as_bytes());
        let value: Value = match serde_json::from_str(&line) {
            Ok(v) => v,
            Err(_) => {
                // Lines serde_json refuses are all lone surrogates in our generator.
                prop_assert!(matches!(from_slice, Err(LineError::Syntax(_))), "{line}: {from_slice:?}");
                return Ok(());
            }
        };
        let model = match model_parse(&value) {
            Ok(c) => Outcome::Ok(model_to_line(&c)),
            Err(e) => Outcome::Error(e),
        };
        let from_slice = of_command(from_slice.map_err(|e| e.to_string()));
        prop_assert_eq!(&from_slice, &model, "from_slice: {}", line);
        let parsed = of_command(Command::from_json(&value).map_err(|e| e.to_string()));
        prop_assert_eq!(&parsed, &model, "parse: {}", line);
        let deserialized = of_command(serde_json::from_str::<Command>(&line).map_err(|e| {
            let msg = e.to_string();
            msg.rsplit_once(" at line ").map_or(msg.clone(), |(m, _)| m.to_owned())
        }));
        prop_assert_eq!(&deserialized, &model, "Deserialize: {}", line);
    }

    /// Arbitrary bytes never panic, and whatever decodes re-encodes to a
    /// fixed point.
    #[test]
    fn arbitrary_bytes_decode_or_fail_cleanly(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        if let Ok(cmd) = Command::from_slice(&bytes) {
            let line = cmd.to_line();
            prop_assert_eq!(Command::from_slice(line.as_bytes()), Ok(cmd.clone()));
        }
    }
}

// -- round trips ---------------------------------------------------------

/// Text that stresses the encoder: controls, quotes, backslashes, DEL,
/// U+2028, non-ASCII, and anything else.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        prop::collection::vec(
            prop::sample::select(
                &[
                    "\0",
                    "\u{1}",
                    "\u{1f}",
                    "\"",
                    "\\",
                    "\n",
                    "\r",
                    "\t",
                    "\u{8}",
                    "\u{c}",
                    "\u{7f}",
                    "\u{2028}",
                    "/",
                    "é",
                    "日本",
                    "😀",
                    "a",
                    "plain text "
                ][..]
            ),
            0..24,
        )
        .prop_map(|parts| parts.concat()),
    ]
}

fn command() -> impl Strategy<Value = Command> {
    prop_oneof![
        (text(), prop::option::of(text())).prop_map(|(text, submission_id)| Command::Prompt {
            text,
            submission_id
        }),
        (prop::bool::ANY, text()).prop_map(|(c, text)| Command::Steer {
            kind: if c {
                SteerKind::Command
            } else {
                SteerKind::Prompt
            },
            text
        }),
        Just(Command::Compact),
        Just(Command::Cancel),
        (text(), prop::bool::ANY).prop_map(|(text, auto)| Command::GoalSet { text, auto }),
        Just(Command::GoalClear),
        (text(), prop::bool::ANY).prop_map(|(id, allow)| Command::ApprovalDecision { id, allow }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn every_command_survives_every_encoder(cmd in command()) {
        let line = cmd.to_line();
        prop_assert!(line.ends_with('\n'));
        prop_assert_eq!(line.matches('\n').count(), 1, "one LF, at the end: {:?}", line);
        prop_assert_eq!(Command::from_slice(line.as_bytes()), Ok(cmd.clone()));
        prop_assert_eq!(Command::from_json(&cmd.to_json()), Ok(cmd.clone()));
        let mut written = Vec::new();
        cmd.write_line(&mut written).unwrap();
        prop_assert_eq!(&written, line.as_bytes());
        prop_assert_eq!(serde_json::to_string(&cmd).unwrap() + "\n", line.clone());
        prop_assert_eq!(serde_json::from_str::<Command>(&line).unwrap(), cmd.clone());
        // The line is what the independent model writes.
        let value: Value = serde_json::from_str(&line).unwrap();
        prop_assert_eq!(model_to_line(&model_parse(&value).unwrap()) + "\n", line);
    }
}
