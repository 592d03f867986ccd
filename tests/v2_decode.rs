//! The v2 rules, one table each: precedence, content errors and their
//! paths, job commands, the retired prediction commands, and the crossing
//! to and from v1. Every verdict was asked of `oracle-latest-next`
//! (upstream @ fdf10827).

use serve_command::v2::SteerKind;
use serve_command::v2::{Command, Content, ContentPart, Image, NotInV1, ParseError};

#[track_caller]
fn check(line: &str, expected: Result<&str, &str>) {
    let got = Command::from_slice(line.as_bytes())
        .map(|c| c.to_line().trim_end().to_owned())
        .map_err(|e| e.to_string());
    assert_eq!(got.as_deref().map_err(String::as_str), expected, "{line}");
}

const PNG: &str = "iVBORw0KGgo=";

#[test]
fn precedence() {
    // prompt: content, then submission_id.
    check(
        r#"{"command":"prompt","content":5,"submission_id":5}"#,
        Err("invalid content: JsonDecodeError((, expected content string or array))"),
    );
    check(
        r#"{"command":"prompt","content":"a","submission_id":5}"#,
        Err("expected a string \"submission_id\" field"),
    );
    // steer: submission_id, then content, then kind.
    check(
        r#"{"command":"steer","submission_id":7}"#,
        Err("expected a string \"submission_id\" field"),
    );
    check(
        r#"{"command":"steer","kind":5,"content":null}"#,
        Err("invalid content: JsonDecodeError((, expected content string or array))"),
    );
    check(
        r#"{"command":"steer","kind":"notice","content":"x"}"#,
        Err("unknown steer kind: notice"),
    );
    // content wins over text, even malformed; text is read only without it.
    check(
        r#"{"command":"prompt","text":"t","content":"c"}"#,
        Ok(r#"{"command":"prompt","content":"c"}"#),
    );
    check(
        r#"{"command":"prompt","text":"t","content":{}}"#,
        Err("invalid content: JsonDecodeError((, expected content string or array))"),
    );
    check(
        r#"{"command":"prompt","text":5}"#,
        Err("expected a string \"text\" field"),
    );
    check(
        r#"{"command":"prompt","text":"t","images":[]}"#,
        Ok(r#"{"command":"prompt","content":"t"}"#),
    );
    // images is read only with text, and only without content.
    check(
        r#"{"command":"prompt","content":"c","images":5}"#,
        Ok(r#"{"command":"prompt","content":"c"}"#),
    );
    check(
        r#"{"command":"prompt","images":5}"#,
        Err("expected a string \"text\" field"),
    );
    // The whole list must be strings before any URL is decoded.
    check(
        r#"{"command":"prompt","text":"t","images":["nope",1]}"#,
        Err("expected an array of image URLs"),
    );
    check(
        r#"{"command":"prompt","text":"t","images":["nope"]}"#,
        Err("image data must be canonical padded base64"),
    );
    // The last duplicate wins, for content as for every key.
    check(
        r#"{"command":"prompt","content":[1],"content":"ok"}"#,
        Ok(r#"{"command":"prompt","content":"ok"}"#),
    );
    check(
        r#"{"command":"prompt","content":"ok","content":[1]}"#,
        Err("invalid content: JsonDecodeError((/0, expected content part object))"),
    );
}

/// The name of an unknown command is echoed unescaped, however the line
/// holds it (as `commands-v2.jsonl`'s `a\nb`): the rules compare the name
/// where the scan left it and copy it only for this error.
#[test]
fn an_unknown_command_echoes_its_name() {
    check(r#"{"command":"nap"}"#, Err("unknown command: nap"));
    check(r#"{"command":"n\u0061p"}"#, Err("unknown command: nap"));
    check(r#"{"command":"näp"}"#, Err("unknown command: näp"));
    check(r#"{"command":"n\u00e4p\t"}"#, Err("unknown command: näp\t"));
    // An escaped name that is a command's is that command.
    check(
        r#"{"command":"\u0070rompt","content":"x"}"#,
        Ok(r#"{"command":"prompt","content":"x"}"#),
    );
}

/// `predict` and `cancel_prediction` left the commands at fdf10827 (the
/// engine predicts by itself): every such line is `unknown command`,
/// well-formed by the old rules (642262b0's `Predict`, `CancelPrediction`)
/// or not, and `invalid prediction command` is no answer any more. Each
/// verdict is `oracle-latest-next`'s.
#[test]
fn the_prediction_commands_are_unknown() {
    let cases: &[(&str, &str)] = &[
        (
            r#"{"command":"predict","request_id":"r","source_sequence":1}"#,
            "unknown command: predict",
        ),
        (
            r#"{"source_sequence":7,"request_id":"p1","command":"predict"}"#,
            "unknown command: predict",
        ),
        (
            r#"{"command":"predict","request_id":"p","source_sequence":2147483647}"#,
            "unknown command: predict",
        ),
        (
            r#"{"command":"predict","request_id":"p","source_sequence":1.0}"#,
            "unknown command: predict",
        ),
        (
            r#"{"command":"predict","request_id":"p","source_sequence":2.5e1}"#,
            "unknown command: predict",
        ),
        (
            r#"{"command":"predict","request_id":"p","source_sequence":0}"#,
            "unknown command: predict",
        ),
        (
            r#"{"command":"predict","request_id":"p","source_sequence":-1}"#,
            "unknown command: predict",
        ),
        (
            r#"{"command":"predict","request_id":"p","source_sequence":1.5}"#,
            "unknown command: predict",
        ),
        (
            r#"{"command":"predict","request_id":"p","source_sequence":2147483648}"#,
            "unknown command: predict",
        ),
        (
            r#"{"command":"predict","request_id":"p","source_sequence":1e400}"#,
            "unknown command: predict",
        ),
        (
            r#"{"command":"predict","request_id":"","source_sequence":1}"#,
            "unknown command: predict",
        ),
        (
            r#"{"command":"predict","request_id":5,"source_sequence":1}"#,
            "unknown command: predict",
        ),
        (
            r#"{"command":"predict","source_sequence":"1"}"#,
            "unknown command: predict",
        ),
        (r#"{"command":"predict"}"#, "unknown command: predict"),
        (
            r#"{"command":"pr\u0065dict","request_id":"r","source_sequence":1}"#,
            "unknown command: predict",
        ),
        (
            r#"{"command":"cancel_prediction","request_id":"p1"}"#,
            "unknown command: cancel_prediction",
        ),
        (
            r#"{"command":"cancel_prediction","request_id":""}"#,
            "unknown command: cancel_prediction",
        ),
        (
            r#"{"command":"cancel_prediction","request_id":null}"#,
            "unknown command: cancel_prediction",
        ),
        (
            r#"{"command":"cancel_prediction"}"#,
            "unknown command: cancel_prediction",
        ),
        (
            r#"{"command":"cancel_prediction","request_id":"p1","source_sequence":1,"text":"x"}"#,
            "unknown command: cancel_prediction",
        ),
        (
            r#"{"command":"Predict","request_id":"r","source_sequence":1}"#,
            "unknown command: Predict",
        ),
        (
            r#"{"command":"predict","content":"x"}"#,
            "unknown command: predict",
        ),
        (
            r#"{"command":"predict","request_id":"r","source_sequence":1,"x":[[[1e400]]]}"#,
            "unknown command: predict",
        ),
    ];
    for (line, message) in cases {
        check(line, Err(message));
        let name = message.trim_start_matches("unknown command: ");
        assert_eq!(
            Command::from_slice(line.as_bytes()),
            Err(ParseError::UnknownCommand(name.to_owned()).into()),
            "{line}"
        );
        // serde_json adds where it stopped: the line's end.
        assert_eq!(
            serde_json::from_str::<Command>(line).map_err(|e| e.to_string()),
            Err(format!("{message} at line 1 column {}", line.len())),
            "serde: {line}"
        );
    }
}

#[test]
fn content_errors_and_their_paths() {
    let p = |parts: &str| format!(r#"{{"command":"prompt","content":[{parts}]}}"#);
    let image =
        |mt: &str, data: &str| format!(r#"{{"type":"image","media_type":"{mt}","data":"{data}"}}"#);
    let err = |path: &str, m: &str| format!("invalid content: JsonDecodeError(({path}, {m}))");
    let cases = [
        (p("1"), err("/0", "expected content part object")),
        (p("[]"), err("/0", "expected content part object")),
        (p(r#""text""#), err("/0", "expected content part object")),
        (p("{}"), err("/0/type", "unknown content part type")),
        (
            p(r#"{"type":1}"#),
            err("/0/type", "unknown content part type"),
        ),
        (
            p(r#"{"type":"Text"}"#),
            err("/0/type", "unknown content part type"),
        ),
        (
            p(r#"{"type":"text"}"#),
            err("/0/text", "String::from_json: expected string"),
        ),
        (
            p(r#"{"type":"text","text":null}"#),
            err("/0/text", "String::from_json: expected string"),
        ),
        (
            p(r#"{"type":"image","data":"x"}"#),
            err("/0/media_type", "String::from_json: expected string"),
        ),
        (
            p(r#"{"type":"image","media_type":"image/png"}"#),
            err("/0/data", "String::from_json: expected string"),
        ),
        (
            p(&image("image/png", "iVBORw0KGgo")),
            err(
                "/0",
                "invalid image: image data must be canonical padded base64",
            ),
        ),
        (
            p(&image("image/gif", PNG)),
            err(
                "/0",
                "invalid image: image declares image/gif but bytes identify image/png",
            ),
        ),
        (
            p(&image("image/png", "Qk0=")),
            err(
                "/0",
                "invalid image: expected PNG, JPEG, GIF, or WebP image bytes",
            ),
        ),
        // The first bad part, in order: an image checked late still comes
        // before a later part's shape.
        (
            p(&format!(
                r#"{{"type":"text","text":"a"}},{},7"#,
                image("image/gif", PNG)
            )),
            err(
                "/1",
                "invalid image: image declares image/gif but bytes identify image/png",
            ),
        ),
        (
            p(&format!(
                r#"{{"type":"text","text":"a"}},{},7"#,
                image("image/png", PNG)
            )),
            err("/2", "expected content part object"),
        ),
    ];
    for (line, message) in cases {
        check(&line, Err(&message));
        // Each message names its error back, path and all.
        let e: ParseError = message.parse().unwrap();
        assert_eq!(e.to_string(), message);
    }
}

#[test]
fn job_commands() {
    let x200 = "x".repeat(200);
    let x201 = "x".repeat(201);
    let stop = |r: &str, g: &str, j: &str| {
        format!(r#"{{"command":"job_stop","request_id":"{r}","generation":"{g}","job_id":"{j}"}}"#)
    };
    const BAD: Result<&str, &str> = Err("invalid background job command");
    check(
        r#"{"command":"jobs_snapshot","request_id":"r"}"#,
        Ok(r#"{"command":"jobs_snapshot","request_id":"r"}"#),
    );
    check(r#"{"command":"jobs_snapshot","request_id":""}"#, BAD);
    check(r#"{"command":"jobs_snapshot","request_id":1}"#, BAD);
    check(r#"{"command":"jobs_snapshot"}"#, BAD);
    let ok = stop("r", "g-1.2_3", &x200);
    check(&ok, Ok(&ok));
    for (r, g, j) in [
        ("", "g", "j"),
        ("r", "", "j"),
        ("r", ".", "j"),
        ("r", "g", ".."),
        ("r", "g", &x201),
        ("r", "a/b", "j"),
        ("r", "g", "\u{e9}"),
        ("r", "g", "a b"),
    ] {
        check(&stop(r, g, j), BAD);
    }
    check(
        r#"{"command":"job_stop","request_id":"r","generation":"g"}"#,
        BAD,
    );
    // Escapes are read before the check: `\u002e\u002e` is `..`.
    check(&stop("r", "g", r"\u002e\u002e"), BAD);
    check(&stop("r", r"\u0067", "j"), Ok(&stop("r", "g", "j")));
}

#[test]
fn crossing_revisions() {
    use serve_command::v1::Command as V1;
    let image = Image::from_base64("image/png", PNG).unwrap();
    let text = |t: &str| ContentPart::Text(t.into());
    let steer = |content: Content, submission_id: Option<&str>| match submission_id {
        Some(id) => Command::steer_tagged(SteerKind::Command, content, id),
        None => Command::steer(SteerKind::Command, content),
    };
    let cases: Vec<(Command, Result<V1, NotInV1>)> = vec![
        (
            Command::prompt_tagged("a", "s"),
            Ok(V1::Prompt {
                text: "a".into(),
                submission_id: Some("s".into()),
            }),
        ),
        (
            steer("a".into(), None),
            Ok(V1::Steer {
                kind: SteerKind::Command,
                text: "a".into(),
            }),
        ),
        (steer("a".into(), Some("s")), Err(NotInV1::SteerTag)),
        (
            Command::prompt(Content::new(vec![])),
            Err(NotInV1::Parts(0)),
        ),
        (
            Command::prompt(Content::new(vec![text("a"), text("b")])),
            Err(NotInV1::Parts(2)),
        ),
        (
            steer(
                Content::new(vec![text("a"), ContentPart::Image(image)]),
                None,
            ),
            Err(NotInV1::Image),
        ),
        (
            Command::jobs_snapshot("r"),
            Err(NotInV1::JobCommand("jobs_snapshot")),
        ),
        (Command::GoalClear, Ok(V1::GoalClear)),
    ];
    for (cmd, expected) in cases {
        match (V1::try_from(cmd.clone()), expected) {
            (Ok(got), Ok(v1)) => {
                assert_eq!(got, v1, "{cmd:?}");
                assert_eq!(Command::from(v1), cmd);
            }
            // The error hands the command back, unchanged, with the reason.
            (Err(err), Err(reason)) => {
                assert_eq!(err.reason(), reason, "{cmd:?}");
                assert_eq!(err.to_string(), reason.to_string());
                assert!(std::error::Error::source(&err).is_none());
                assert_eq!(err.command(), &cmd);
                assert_eq!(err.into_command(), cmd);
            }
            (got, expected) => panic!("{cmd:?}: got {got:?}, expected {expected:?}"),
        }
    }
    assert_eq!(
        NotInV1::Parts(2).to_string(),
        "v1 cannot carry content of 2 parts"
    );
    assert_eq!(
        NotInV1::JobCommand("job_stop").to_string(),
        "v1 cannot carry the job_stop command"
    );
}

#[test]
fn content_reads_like_the_reference() {
    let image = Image::from_base64("image/png", PNG).unwrap();
    let c = Content::new(vec![
        ContentPart::Text("a".into()),
        ContentPart::Image(image),
        ContentPart::Text("b".into()),
    ]);
    assert_eq!(
        (c.to_text(), c.is_text_only(), c.as_single_text()),
        ("ab".into(), false, None)
    );
    let one = Content::from("x");
    assert_eq!(
        (one.to_text(), one.is_text_only(), one.as_single_text()),
        ("x".into(), true, Some("x"))
    );
    let none = Content::default();
    assert_eq!((none.to_text(), none.is_text_only()), (String::new(), true));
}

/// A line decoded by the wrong revision is no panic either way: the
/// reader of one revision reads the other's stream, item for item.
#[test]
fn readers_of_both_revisions_share_the_framing() {
    let input = b"{\"command\":\"prompt\",\"content\":\"a\"}\n\n{\"command\":\"job_stop\"}\nnope\n";
    let v1: Vec<_> = serve_command::v1::CommandReader::new(&input[..])
        .map(|r| r.map_err(|e| e.to_string()))
        .collect();
    let v2: Vec<_> = serve_command::v2::CommandReader::new(&input[..])
        .map(|r| r.map_err(|e| e.to_string()))
        .collect();
    assert_eq!(
        v1,
        [
            Err("line 1: expected a string \"text\" field".to_owned()),
            Err("line 3: unknown command: job_stop".to_owned()),
            Err("line 4: expected a JSON value at byte 0".to_owned()),
        ]
    );
    assert_eq!(
        v2,
        [
            Ok(Command::prompt("a")),
            Err("line 3: invalid background job command".to_owned()),
            Err("line 4: expected a JSON value at byte 0".to_owned()),
        ]
    );
}

/// Where `Deserialize` (through serde_json) and `from_slice` part, as
/// docs/PROTOCOL.md says: a skipped field's value nests as deep as
/// serde_json lets it, past the reference's 1024 levels. A skipped `1e400`
/// is fine in both, also as the `source_sequence` of a `predict`, which no
/// command reads since fdf10827 (no command reads a number now).
#[test]
fn deserialize_and_from_slice_part_only_where_serde_json_reads_otherwise() {
    let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    // (line, from_slice's answer, Deserialize's): the command or the error.
    type Answer = Result<&'static str, &'static str>;
    let cases: &[(String, Answer, Answer)] = &[
        (
            r#"{"command":"cancel","x":1e400}"#.into(),
            Ok(r#"{"command":"cancel"}"#),
            Ok(r#"{"command":"cancel"}"#),
        ),
        (
            format!(r#"{{"command":"cancel","x":{}}}"#, deep(200)),
            Ok(r#"{"command":"cancel"}"#),
            Ok(r#"{"command":"cancel"}"#),
        ),
        (
            format!(r#"{{"command":"cancel","x":{}}}"#, deep(1024)),
            Err("nested deeper than 1024 levels at byte 1047"),
            Ok(r#"{"command":"cancel"}"#),
        ),
        (
            r#"{"command":"predict","request_id":"r","source_sequence":1e400}"#.into(),
            Err("unknown command: predict"),
            Err("unknown command: predict at line 1 column 62"),
        ),
    ];
    let owned = |r: &Result<&str, &str>| r.map(str::to_owned).map_err(str::to_owned);
    for (line, slice, serde) in cases {
        let head: String = line.chars().take(40).collect();
        let got = Command::from_slice(line.as_bytes());
        let got = got.map(|c| c.to_string()).map_err(|e| e.to_string());
        assert_eq!(got, owned(slice), "from_slice, {head}");
        let got = serde_json::from_str::<Command>(line);
        let got = got.map(|c| c.to_string()).map_err(|e| e.to_string());
        assert_eq!(got, owned(serde), "serde, {head}");
    }
}
