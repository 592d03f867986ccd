//! The conveniences a user builds with: `SteerKind`'s `Display`, `FromStr`,
//! `Default` and serde; `Content` and `ContentPart` from strings, images and
//! iterators; their `Deserialize`, which must read each wire form exactly as
//! the line decoder reads it, with its error strings; `UnknownMessage`'s text.
//!
//! Every `Deserialize` case runs twice: through `serde_json::from_str`
//! (borrowed strings) and `serde_json::from_value` (owned ones).

use serde::de::DeserializeOwned;
use serde_json::Value;
use serve_command::v2::{Command, Content, ContentPart, Image, SteerKind};
use serve_command::{v1, v2};
use std::fmt::Debug;

const PNG: &str = "iVBORw0KGgo=";

fn png() -> Image {
    Image::from_base64("image/png", PNG).unwrap()
}

/// A `serde_json` error's message without the position it appends.
#[track_caller]
fn message(e: &serde_json::Error) -> String {
    let text = e.to_string();
    if e.line() == 0 {
        return text;
    }
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    text.strip_suffix(&suffix)
        .unwrap_or_else(|| panic!("{text:?} does not end with {suffix:?}"))
        .to_owned()
}

/// `json` deserializes to `expected`, or fails with exactly that message,
/// by both paths.
#[track_caller]
fn de<T: DeserializeOwned + PartialEq + Debug>(json: &str, expected: Result<T, &str>) {
    let expected = expected.map_err(str::to_owned);
    let got: Result<T, _> = serde_json::from_str(json);
    assert_eq!(got.map_err(|e| message(&e)), expected, "from_str {json}");
    let value: Value = serde_json::from_str(json).unwrap();
    let got: Result<T, _> = serde_json::from_value(value);
    assert_eq!(got.map_err(|e| message(&e)), expected, "from_value {json}");
}

/// The v2 decoder's verdict on `line`, as the `Display` of its error.
fn v2_line(line: &str) -> Result<Command, String> {
    Command::from_slice(line.as_bytes()).map_err(|e| e.to_string())
}

#[test]
fn steer_kind_display_from_str_default() {
    for (kind, wire) in [
        (SteerKind::Prompt, "prompt"),
        (SteerKind::Command, "command"),
    ] {
        assert_eq!(kind.to_string(), wire);
        assert_eq!(kind.as_str(), wire);
        assert_eq!(wire.parse::<SteerKind>(), Ok(kind));
        assert_eq!(serde_json::to_string(&kind).unwrap(), format!("\"{wire}\""));
    }
    // Case-sensitive, verbatim, as the wire: the error is the line's.
    for bad in ["Prompt", "COMMAND", "", " prompt", "notice"] {
        let err = bad.parse::<SteerKind>().unwrap_err();
        assert_eq!(err, v1::ParseError::UnknownSteerKind(bad.into()));
        assert_eq!(err.to_string(), format!("unknown steer kind: {bad}"));
        // And v2 code takes it with `?`.
        assert_eq!(
            v2::ParseError::from(err),
            v2::ParseError::UnknownSteerKind(bad.into())
        );
    }
    // The documented default: a steer without `kind`.
    assert_eq!(SteerKind::default(), SteerKind::Prompt);
    assert_eq!(
        v1::Command::from_slice(br#"{"command":"steer","text":"x"}"#),
        Ok(v1::Command::Steer {
            kind: SteerKind::default(),
            text: "x".into()
        })
    );
}

#[test]
fn steer_kind_deserialize_is_the_kind_rule() {
    let cases: [(&str, Result<SteerKind, &str>); 8] = [
        (r#""prompt""#, Ok(SteerKind::Prompt)),
        (r#""command""#, Ok(SteerKind::Command)),
        (r#""comm\u0061nd""#, Ok(SteerKind::Command)),
        (r#""Prompt""#, Err("unknown steer kind: Prompt")),
        (r#""""#, Err("unknown steer kind: ")),
        ("null", Err("expected a string \"kind\" field")),
        ("5", Err("expected a string \"kind\" field")),
        (r#"["prompt"]"#, Err("expected a string \"kind\" field")),
    ];
    for (json, expected) in cases {
        de::<SteerKind>(json, expected);
        // The same verdict as a steer line with that kind.
        let line = format!(r#"{{"command":"steer","text":"x","kind":{json}}}"#);
        let got = v1::Command::from_slice(line.as_bytes());
        match expected {
            Ok(kind) => assert_eq!(
                got,
                Ok(v1::Command::Steer {
                    kind,
                    text: "x".into()
                })
            ),
            Err(e) => assert_eq!(got.unwrap_err().to_string(), e),
        }
    }
}

#[test]
fn parts_and_content_from_strings_images_and_iterators() {
    let text = |t: &str| ContentPart::Text(t.into());
    assert_eq!(ContentPart::from("a"), text("a"));
    assert_eq!(ContentPart::from(String::from("a")), text("a"));
    assert_eq!(ContentPart::from(png()), ContentPart::Image(png()));

    let cases: [(Content, &[ContentPart]); 7] = [
        (Content::from("a"), &[text("a")]),
        (Content::from(String::from("a")), &[text("a")]),
        (Content::from(png()), &[ContentPart::Image(png())]),
        (Content::from(text("a")), &[text("a")]),
        (std::iter::empty().collect(), &[]),
        (
            [ContentPart::from("what is this?"), png().into()]
                .into_iter()
                .collect(),
            &[text("what is this?"), ContentPart::Image(png())],
        ),
        (
            ["a", "b", "c"].into_iter().map(ContentPart::from).collect(),
            &[text("a"), text("b"), text("c")],
        ),
    ];
    for (content, parts) in cases {
        assert_eq!(content.parts(), parts);
        assert_eq!(content, Content::new(parts.to_vec()));
    }

    // The README's prompt with an image, in one expression.
    let prompt = Command::prompt(
        [ContentPart::from("what is this?"), png().into()]
            .into_iter()
            .collect::<Content>(),
    );
    assert_eq!(
        prompt.to_line(),
        "{\"command\":\"prompt\",\"content\":[{\"type\":\"text\",\"text\":\"what is this?\"},\
         {\"type\":\"image\",\"media_type\":\"image/png\",\"data\":\"iVBORw0KGgo=\"}]}\n"
    );
}

#[test]
fn content_deserializes_as_the_content_key_reads() {
    let text = |t: &str| ContentPart::Text(t.into());
    let image = format!(r#"{{"type":"image","media_type":"image/png","data":"{PNG}"}}"#);
    let cases: Vec<(String, Result<Content, &str>)> = vec![
        (r#""hi""#.into(), Ok(Content::from("hi"))),
        (r#""h\u0069""#.into(), Ok(Content::from("hi"))),
        ("[]".into(), Ok(Content::default())),
        (r#"[{"type":"text","text":"a"}]"#.into(), Ok(Content::from("a"))),
        (
            format!(r#"[{{"type":"text","text":"a","extra":[1]}},{image}]"#),
            Ok(Content::new(vec![text("a"), ContentPart::Image(png())])),
        ),
        (
            "5".into(),
            Err("invalid content: JsonDecodeError((, expected content string or array))"),
        ),
        (
            "null".into(),
            Err("invalid content: JsonDecodeError((, expected content string or array))"),
        ),
        (
            r#"{"type":"text","text":"a"}"#.into(),
            Err("invalid content: JsonDecodeError((, expected content string or array))"),
        ),
        (
            "[1]".into(),
            Err("invalid content: JsonDecodeError((/0, expected content part object))"),
        ),
        (
            r#"[{"type":"text","text":"a"},{"type":"video"}]"#.into(),
            Err("invalid content: JsonDecodeError((/1/type, unknown content part type))"),
        ),
        (
            r#"[{"type":"text"}]"#.into(),
            Err("invalid content: JsonDecodeError((/0/text, String::from_json: expected string))"),
        ),
        (
            r#"[{"type":"image","data":"x"}]"#.into(),
            Err("invalid content: JsonDecodeError((/0/media_type, String::from_json: expected string))"),
        ),
        (
            r#"[{"type":"image","media_type":"image/png","data":"iVBORw0KGgo"}]"#.into(),
            Err("invalid content: JsonDecodeError((/0, invalid image: image data must be canonical padded base64))"),
        ),
        (
            format!(r#"[{{"type":"image","media_type":"image/jpeg","data":"{PNG}"}}]"#),
            Err("invalid content: JsonDecodeError((/0, invalid image: image declares image/jpeg but bytes identify image/png))"),
        ),
        // A bad image before a refused part: the image's error, as the
        // decoder reports the first bad part.
        (
            r#"[{"type":"image","media_type":"image/png","data":"!"},7]"#.into(),
            Err("invalid content: JsonDecodeError((/0, invalid image: image data must be canonical padded base64))"),
        ),
    ];
    for (json, expected) in cases {
        de::<Content>(&json, expected.clone());
        // The same verdict as a prompt line with that content.
        let line = format!(r#"{{"command":"prompt","content":{json}}}"#);
        let expected = expected.map(Command::prompt);
        assert_eq!(v2_line(&line), expected.map_err(str::to_owned), "{line}");
    }
}

#[test]
fn content_part_deserializes_as_an_item_of_content_reads() {
    let image = format!(r#"{{"type":"image","media_type":"image/png","data":"{PNG}"}}"#);
    let cases: Vec<(String, Result<ContentPart, &str>)> = vec![
        (
            r#"{"type":"text","text":"a"}"#.into(),
            Ok(ContentPart::Text("a".into())),
        ),
        (
            r#"{"text":"a","type":"text","media_type":5}"#.into(),
            Ok(ContentPart::Text("a".into())),
        ),
        (image, Ok(ContentPart::Image(png()))),
        (
            r#""a""#.into(),
            Err("invalid content: JsonDecodeError((, expected content part object))"),
        ),
        (
            "null".into(),
            Err("invalid content: JsonDecodeError((, expected content part object))"),
        ),
        (
            "{}".into(),
            Err("invalid content: JsonDecodeError((/type, unknown content part type))"),
        ),
        (
            r#"{"type":"Text","text":"a"}"#.into(),
            Err("invalid content: JsonDecodeError((/type, unknown content part type))"),
        ),
        (
            r#"{"type":"text","text":null}"#.into(),
            Err("invalid content: JsonDecodeError((/text, String::from_json: expected string))"),
        ),
        (
            r#"{"type":"image","media_type":"image/png"}"#.into(),
            Err("invalid content: JsonDecodeError((/data, String::from_json: expected string))"),
        ),
        (
            r#"{"type":"image","media_type":"image/png","data":"Qk0="}"#.into(),
            Err("invalid content: JsonDecodeError((, invalid image: expected PNG, JPEG, GIF, or WebP image bytes))"),
        ),
    ];
    for (json, expected) in cases {
        de::<ContentPart>(&json, expected.clone());
        // A part alone reads as the first part of `content`, its path
        // relative to the part.
        let line = format!(r#"{{"command":"prompt","content":[{json}]}}"#);
        let expected = expected
            .map(|part| Command::prompt(Content::from(part)))
            .map_err(|e| e.replace("JsonDecodeError((", "JsonDecodeError((/0"));
        assert_eq!(v2_line(&line), expected, "{line}");
    }
}

#[test]
fn content_and_parts_round_trip_through_serde() {
    let contents = [
        Content::from("a"),
        Content::default(),
        Content::from(png()),
        Content::new(vec!["a".into(), "b\n\u{1F600}".into()]),
        Content::new(vec!["a".into(), png().into(), "".into()]),
    ];
    for content in contents {
        let json = serde_json::to_string(&content).unwrap();
        de(&json, Ok(content.clone()));
        for part in content.iter() {
            let json = serde_json::to_string(part).unwrap();
            de(&json, Ok(part.clone()));
        }
    }
}

#[test]
fn unknown_messages_keep_their_text() {
    for message in [
        "",
        "command stream: line 3 is longer than 8 bytes",
        "a \"quoted\"\nline",
    ] {
        let quoted = format!("not one of the protocol's command error messages: {message:?}");
        let v1 = message.parse::<v1::ParseError>().unwrap_err();
        let v2 = message.parse::<v2::ParseError>().unwrap_err();
        for err in [v1, v2] {
            assert_eq!(err.as_str(), message);
            assert_eq!(err.to_string(), quoted);
            assert_eq!(err.into_string(), message);
        }
    }
    assert_eq!(
        "a\nb".parse::<v2::ParseError>().unwrap_err().to_string(),
        "not one of the protocol's command error messages: \"a\\nb\""
    );
    // An `invalid content` message without its `, ` is unknown, whole.
    let broken = "invalid content: JsonDecodeError((/0))";
    assert_eq!(
        broken.parse::<v2::ParseError>().unwrap_err().as_str(),
        broken
    );
}

/// The crate leaves a user's `serde_json::Value` as serde_json reads it by
/// default: only the `workbench` feature turns on serde_json's `raw_value`,
/// which makes an object whose first key is `$serde_json::private::RawValue`
/// the JSON text in its value.
#[test]
fn serde_json_value_keeps_its_default_reading() {
    let line = r#"{"$serde_json::private::RawValue":"{\"command\":\"cancel\"}"}"#;
    let value: Result<Value, _> = serde_json::from_str(line);
    let cancel = serde_json::json!({"command": "cancel"});
    if cfg!(feature = "workbench") {
        assert_eq!(value.ok(), Some(cancel));
    } else {
        let key = serde_json::json!({"$serde_json::private::RawValue": "{\"command\":\"cancel\"}"});
        assert_eq!(value.ok(), Some(key));
        assert_eq!(
            v2::Command::from_json(&serde_json::from_str(line).unwrap()).map_err(|e| e.to_string()),
            Err("expected a {\"command\": ...} object".to_owned())
        );
    }
}
