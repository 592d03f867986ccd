//! The engine's events: every vector of `tests/vectors/events.jsonl`
//! (each verdict `oracle-events-next`'s, upstream @ fdf10827), through
//! every path that reads a line, and back out through every path that
//! writes one.

use serde_json::Value;
use serve_command::v2::{
    AppliedSteerKind, ApprovalOutcome, Event, EventError, EventLineError as LineError,
    EventReadError, EventReader, SteerKind, SubrunStatus,
};

const VECTORS: &str = include_str!("vectors/events.jsonl");

/// What the oracle says a line is.
#[derive(Debug, PartialEq)]
enum Verdict {
    /// An event, and the line upstream writes for it (no LF).
    Ok(String),
    /// JSON, but not an event a client reads.
    None,
    NotJson,
}

fn vectors() -> Vec<(String, Verdict, String)> {
    VECTORS
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("a vector is JSON");
            let line = v["line"].as_str().expect("a string line").to_owned();
            let verdict = if let Some(ok) = v["ok"].as_str() {
                Verdict::Ok(ok.to_owned())
            } else if v["none"] == Value::Bool(true) {
                Verdict::None
            } else {
                assert_eq!(v["not_json"], Value::Bool(true), "{l}");
                Verdict::NotJson
            };
            (
                line,
                verdict,
                v["why"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

fn verdict(line: &str) -> Verdict {
    match Event::from_slice(line.as_bytes()) {
        Ok(event) => {
            let written = event.to_line();
            assert_eq!(
                written.strip_suffix('\n').map(str::to_owned),
                Some(event.to_string())
            );
            let mut bytes = Vec::new();
            event.write_line(&mut bytes).unwrap();
            assert_eq!(bytes, written.as_bytes());
            // What is written reads back as the same event.
            assert_eq!(
                Event::from_slice(written.trim_end().as_bytes()),
                Ok(event.clone()),
                "{written}"
            );
            Verdict::Ok(written.trim_end_matches('\n').to_owned())
        }
        Err(LineError::NotAnEvent(_)) => Verdict::None,
        Err(LineError::NotJson(_)) => Verdict::NotJson,
        Err(e) => panic!("a kind of error this does not know: {e:?}"),
    }
}

#[test]
fn every_vector_decodes_and_writes_as_the_oracle_says() {
    let vectors = vectors();
    assert!(vectors.len() >= 400);
    let mut wrong = Vec::new();
    for (line, expected, why) in &vectors {
        let got = verdict(line);
        if &got != expected {
            wrong.push(format!(
                "{why}\n  line: {line}\n  want: {expected:?}\n  got:  {got:?}"
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} wrong:\n{}",
        wrong.len(),
        vectors.len(),
        wrong.join("\n")
    );
}

/// The `serde_json::Value` path decides as the line does, wherever
/// serde_json reads the line (it refuses numbers beyond a double). A job's
/// `data` is the one place it writes otherwise: serde_json's map sorts its
/// keys, so only lines without `data` are compared byte for byte.
#[test]
fn from_json_decides_as_from_slice() {
    let mut compared = 0;
    for (line, expected, why) in vectors() {
        let Ok(value) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let got = Event::from_json(&value).map(|e| e.to_string());
        match expected {
            Verdict::Ok(ok) if !line.contains("\"data\"") => {
                assert_eq!(got.as_ref(), Ok(&ok), "{why}")
            }
            Verdict::Ok(_) => assert!(got.is_ok(), "{why}: {got:?}"),
            Verdict::None => assert!(got.is_err(), "{why}: {got:?}"),
            Verdict::NotJson => panic!("{why}: serde_json read a line that is not JSON"),
        }
        compared += 1;
    }
    assert!(compared > 1500, "{compared}");
}

/// A controller skips every line that is not an event and reads on: each
/// error names its line and says what is wrong with it as an event line,
/// and none of them ends the stream (only a failed read does).
#[test]
fn a_reader_reads_on_past_every_bad_line() {
    let stream = concat!(
        "{\"event\":\"agent_step\",\"step\":1}\n",
        "garbage\n",
        "\n",
        "{\"event\":\"fleet_started\"}\n",
        "{\"event\":\"agent_step\",\"step\":\"2\"}\r\n",
        "{\"event\":\"assistant_delta\",\"content\":\"a line over the limit of 64 bytes, skipped\"}\n",
        "{\"event\":\"agent_finished\",\"answer\":\"ok\"}",
    );
    let items: Vec<_> = EventReader::with_max_line_len(stream.as_bytes(), 64)
        .map(|item| {
            item.map_err(|e| {
                assert!(!e.is_io(), "{e}");
                let kind = match &e {
                    EventReadError::NotJson { .. } => "not JSON",
                    EventReadError::NotAnEvent { .. } => "not an event",
                    EventReadError::TooLong { .. } => "too long",
                    _ => "other",
                };
                (kind, e.line(), e.to_string())
            })
        })
        .collect();
    assert_eq!(
        items,
        [
            Ok(Event::agent_step(1)),
            Err((
                "not JSON",
                Some(2),
                "line 2: not JSON: expected a JSON value at byte 0".to_owned()
            )),
            Err((
                "not an event",
                Some(4),
                "line 4: unknown event: fleet_started".to_owned()
            )),
            Err((
                "not an event",
                Some(5),
                "line 5: agent_step: \"step\" must be an integer from -2147483648 to 2147483647"
                    .to_owned()
            )),
            Err((
                "too long",
                Some(6),
                "line 6 is longer than 64 bytes".to_owned()
            )),
            Ok(Event::agent_finished("ok")),
        ]
    );
}

/// A failed read is the one error that ends an event stream.
#[test]
fn only_a_failed_read_ends_an_event_stream() {
    struct Broken;
    impl std::io::Read for Broken {
        fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
            Err(std::io::ErrorKind::BrokenPipe.into())
        }
    }
    let mut reader = EventReader::new(std::io::BufReader::new(Broken));
    let err = reader.next().unwrap().unwrap_err();
    assert!(err.is_io());
    assert_eq!(err.line(), None);
    assert_eq!(err.to_string(), "read failed: broken pipe");
    assert!(matches!(err, EventReadError::Io(ref e) if e.kind() == std::io::ErrorKind::BrokenPipe));
    assert!(reader.next().is_none());
}

/// Each reason a line is not an event, exactly.
#[test]
fn why_a_line_is_not_an_event() {
    let table: &[(&str, EventError)] = &[
        ("[]", EventError::NotAnObject),
        ("{}", EventError::NoEventName),
        (r#"{"event":7}"#, EventError::NoEventName),
        (r#"{"event":"nap"}"#, EventError::UnknownEvent("nap".into())),
        (
            r#"{"event":"agent_finished"}"#,
            EventError::MissingField {
                event: "agent_finished",
                field: "answer",
            },
        ),
        (
            r#"{"event":"tool_result","tool_call_id":"c","tool_name":"t","is_error":1,"content":""}"#,
            EventError::WrongType {
                event: "tool_result",
                field: "is_error",
                expected: "true or false",
            },
        ),
        (
            r#"{"event":"usage","usage":{"prompt_tokens":1,"completion_tokens":-1,"total_tokens":0,"prompt_cache_hit_tokens":0,"prompt_cache_miss_tokens":0}}"#,
            EventError::InvalidField {
                event: "usage",
                field: "usage",
                reason: "\"completion_tokens\" must be an integer from 0 to 2147483647".into(),
            },
        ),
        (
            r#"{"event":"steer_dropped","content":[{"type":"video"}]}"#,
            EventError::InvalidField {
                event: "steer_dropped",
                field: "content",
                reason: "invalid content: JsonDecodeError((/0/type, unknown content part type))"
                    .into(),
            },
        ),
    ];
    for (line, error) in table {
        assert_eq!(
            Event::from_slice(line.as_bytes()),
            Err(LineError::NotAnEvent(error.clone())),
            "{line}"
        );
    }
}

/// serde, with serde_json: `to_string` writes the line `to_line` writes,
/// and `from_str` decides as `from_slice` does, wherever serde_json reads
/// the line (it refuses a number beyond a double, and a lone surrogate,
/// and reads an integer past 64 bits in a job's `data` as a double).
#[test]
fn serde_writes_and_reads_the_line() {
    let mut compared = 0;
    for (line, expected, why) in vectors() {
        let got = serde_json::from_str::<Event>(&line);
        match (&expected, &got) {
            (Verdict::Ok(ok), Ok(event)) => {
                let written = serde_json::to_string(event).unwrap();
                if ok.contains("\"data\":") {
                    // serde_json reads a number past 64 bits as a double
                    // (upstream keeps an integer's text): the event still
                    // writes and reads back the same through serde.
                    assert_eq!(
                        serde_json::from_str::<Event>(&written).ok().as_ref(),
                        Some(event),
                        "{why}"
                    );
                } else {
                    assert_eq!(&event.to_string(), ok, "{why}");
                    assert_eq!(&written, ok, "{why}");
                }
                compared += 1;
            }
            (Verdict::None, Err(e)) => assert!(!e.to_string().is_empty()),
            (Verdict::NotJson, Err(_)) => {}
            // serde_json reads these numbers otherwise: beyond a double.
            (Verdict::Ok(_), Err(e)) => assert!(
                e.to_string().starts_with("number out of range"),
                "{why}: {e}"
            ),
            (_, got) => panic!("{why}: {line}: the oracle says {expected:?}, serde {got:?}"),
        }
    }
    assert!(compared > 700, "{compared}");
}

/// A job's `data` of many keys, some repeated, is written back with each
/// key where it first stood and its last value (the reference's map), and
/// decoding it takes time linear in its keys (a line of 40,000 keys).
#[test]
fn a_jobs_data_of_many_keys_keeps_its_order_and_last_values() {
    let n = 40_000;
    let mut data: Vec<String> = (0..n).map(|i| format!("\"k{i}\":{i}")).collect();
    data.push("\"k0\":\"last\"".to_owned());
    let line = format!(
        concat!(
            r#"{{"event":"job_changed","kind":"started","job":{{"schema_version":1,"#,
            r#""generation":"g","id":"j","revision":1,"command":"c","state":{{"kind":"running"}},"#,
            r#""started_at_ms":0,"backgrounded_at_ms":0,"output_persistent":false,"#,
            r#""output_bytes":0,"output_chars":0,"output_truncated":false,"invalid_utf8":false,"#,
            r#""data":{{{}}}}}}}"#
        ),
        data.join(",")
    );
    let event = Event::from_slice(line.as_bytes()).expect("a job_changed");
    let Event::JobChanged { job, .. } = &event else {
        panic!("{event:?}");
    };
    let expected: Vec<String> = std::iter::once("\"k0\":\"last\"".to_owned())
        .chain((1..n).map(|i| format!("\"k{i}\":{i}")))
        .collect();
    assert_eq!(
        job.data.as_ref().map(|d| d.as_str().to_owned()),
        Some(format!("{{{}}}", expected.join(",")))
    );
}

#[test]
fn a_job_state_is_terminal_once_the_job_has_ended() {
    use serve_command::v2::JobState;
    // (state, is_terminal)
    for (state, terminal) in [
        (JobState::Running, false),
        (JobState::Stopping, false),
        (JobState::Exited(0), true),
        (JobState::Exited(101), true),
        (JobState::Stopped("stopped by the user".to_owned()), true),
        (JobState::Interrupted, true),
    ] {
        assert_eq!(state.is_terminal(), terminal, "{state:?}");
    }
}

/// The string fields upstream names a closed set for read as their named
/// variant, any other string as `Other`, and write back byte for byte.
#[test]
fn open_set_fields_are_typed_and_keep_any_other_string() {
    let rows: &[(&str, Event, &str)] = &[
        (
            r#"{"event":"approval_resolved","id":"a","outcome":"allowed_once"}"#,
            Event::approval_resolved("a", ApprovalOutcome::AllowedOnce),
            r#"{"event":"approval_resolved","id":"a","outcome":"allowed_once"}"#,
        ),
        (
            r#"{"event":"approval_resolved","id":"a","outcome":"cancelled"}"#,
            Event::approval_resolved("a", ApprovalOutcome::Cancelled),
            r#"{"event":"approval_resolved","id":"a","outcome":"cancelled"}"#,
        ),
        (
            r#"{"event":"approval_resolved","id":"a","outcome":"unavailable"}"#,
            Event::approval_resolved("a", ApprovalOutcome::Other("unavailable".into())),
            r#"{"event":"approval_resolved","id":"a","outcome":"unavailable"}"#,
        ),
        // A steer receipt without `kind` is a prompt steer's.
        (
            r#"{"event":"steer_applied","content":"go"}"#,
            Event::steer_applied(SteerKind::Prompt, "go", None),
            r#"{"event":"steer_applied","kind":"prompt","content":"go"}"#,
        ),
        (
            r#"{"event":"steer_applied","kind":"command","content":"/diff","submission_id":"s"}"#,
            Event::steer_applied(AppliedSteerKind::Command, "/diff", Some("s".to_owned())),
            r#"{"event":"steer_applied","kind":"command","content":"/diff","submission_id":"s"}"#,
        ),
        (
            r#"{"event":"steer_applied","kind":"Prompt","content":"go"}"#,
            Event::steer_applied(AppliedSteerKind::Other("Prompt".into()), "go", None),
            r#"{"event":"steer_applied","kind":"Prompt","content":"go"}"#,
        ),
        (
            r#"{"event":"subrun_finished","id":"s1","status":"timed_out","steps":2,"prompt_tokens":5,"completion_tokens":1}"#,
            Event::subrun_finished("s1", SubrunStatus::TimedOut)
                .steps(2)
                .tokens(5, 1)
                .build(),
            r#"{"event":"subrun_finished","id":"s1","status":"timed_out","steps":2,"prompt_tokens":5,"completion_tokens":1}"#,
        ),
        (
            r#"{"event":"subrun_finished","id":"s1","status":"exploded","steps":0,"prompt_tokens":0,"completion_tokens":0,"unaccounted":"no result"}"#,
            Event::subrun_finished("s1", SubrunStatus::Other("exploded".into()))
                .unaccounted("no result")
                .build(),
            r#"{"event":"subrun_finished","id":"s1","status":"exploded","steps":0,"prompt_tokens":0,"completion_tokens":0,"unaccounted":"no result"}"#,
        ),
    ];
    for (line, event, written) in rows {
        assert_eq!(
            Event::from_slice(line.as_bytes()).as_ref(),
            Ok(event),
            "{line}"
        );
        assert_eq!(event.to_string(), *written, "{line}");
    }
}

/// An `Other` holding a named string is that named value: equal, and
/// hashed alike, as the wire cannot tell them apart.
#[test]
fn an_open_set_value_is_its_wire_string() {
    use std::collections::HashSet;
    assert_eq!(
        ApprovalOutcome::Other("rejected".into()),
        ApprovalOutcome::Rejected
    );
    assert_ne!(
        ApprovalOutcome::Other("Rejected".into()),
        ApprovalOutcome::Rejected
    );
    let set: HashSet<_> = [
        ApprovalOutcome::Rejected,
        ApprovalOutcome::Other("rejected".into()),
    ]
    .into();
    assert_eq!(set.len(), 1);
    let names: Vec<(SubrunStatus, &str)> = [
        "captured",
        "no_report",
        "max_steps",
        "context_yield",
        "timed_out",
        "failed",
        "cancelled",
        "later",
    ]
    .iter()
    .map(|s| (SubrunStatus::from(*s), *s))
    .collect();
    for (status, wire) in &names {
        assert_eq!(status.as_str(), *wire);
        assert_eq!(status.to_string(), *wire);
    }
    assert!(matches!(names[3].0, SubrunStatus::ContextYield));
    assert!(matches!(names[7].0, SubrunStatus::Other(ref s) if s == "later"));
    assert_eq!(ApprovalOutcome::from(true), ApprovalOutcome::AllowedOnce);
    assert_eq!(ApprovalOutcome::from(false), ApprovalOutcome::Rejected);
    assert_eq!(
        AppliedSteerKind::from(SteerKind::Command),
        AppliedSteerKind::Command
    );
    assert_eq!(
        AppliedSteerKind::from("prompt".to_owned()),
        AppliedSteerKind::Prompt
    );
}

/// The events of more than four fields: each built by name, with the
/// fields left unset at their zero.
#[test]
fn the_builders_write_every_field() {
    assert_eq!(
        Event::workflow_started("w", "/j", "/e").build().to_string(),
        r#"{"event":"workflow_started","id":"w","journal":"/j","events":"/e","first_child":0,"child_count":0}"#
    );
    assert_eq!(
        Event::from(Event::workflow_started("w", "/j", "/e").children(-1, 7)).to_string(),
        r#"{"event":"workflow_started","id":"w","journal":"/j","events":"/e","first_child":-1,"child_count":7}"#
    );
    assert_eq!(
        Event::from(Event::subrun_finished("s", "failed")).to_string(),
        r#"{"event":"subrun_finished","id":"s","status":"failed","steps":0,"prompt_tokens":0,"completion_tokens":0}"#
    );
    assert_eq!(
        Event::tool_error("c", "t", "boom", Some("b".to_owned())).to_string(),
        r#"{"event":"tool_result","tool_call_id":"c","tool_name":"t","is_error":true,"content":"boom","brief":"b"}"#
    );
    assert_eq!(
        Event::tool_result("c", "t", "ok", None).to_string(),
        r#"{"event":"tool_result","tool_call_id":"c","tool_name":"t","is_error":false,"content":"ok","brief":null}"#
    );
}

/// Since fdf10827 a `prediction_result` has no `request_id` (the engine
/// predicts by itself). A line that still carries one, of any type (an
/// older engine's, a recording), is read the same and written back
/// without it; `source_sequence` and `outcome` are still required. Each
/// answer is `oracle-events-next`'s.
#[test]
fn a_prediction_results_request_id_is_read_and_dropped() {
    // (line, the line written back, or None: not an event)
    let cases: &[(&str, Option<&str>)] = &[
        (
            r#"{"event":"prediction_result","request_id":"p1","source_sequence":7,"outcome":{"kind":"completed","text":"Next","input_tokens":12,"output_tokens":3}}"#,
            Some(
                r#"{"event":"prediction_result","source_sequence":7,"outcome":{"kind":"completed","text":"Next","input_tokens":12,"output_tokens":3}}"#,
            ),
        ),
        (
            r#"{"event":"prediction_result","request_id":"","source_sequence":0,"outcome":{"kind":"cancelled"}}"#,
            Some(
                r#"{"event":"prediction_result","source_sequence":0,"outcome":{"kind":"cancelled"}}"#,
            ),
        ),
        (
            r#"{"event":"prediction_result","request_id":null,"source_sequence":7,"outcome":{"kind":"skipped"}}"#,
            Some(
                r#"{"event":"prediction_result","source_sequence":7,"outcome":{"kind":"skipped"}}"#,
            ),
        ),
        (
            r#"{"event":"prediction_result","request_id":7,"source_sequence":7,"outcome":{"kind":"skipped"}}"#,
            Some(
                r#"{"event":"prediction_result","source_sequence":7,"outcome":{"kind":"skipped"}}"#,
            ),
        ),
        (
            r#"{"event":"prediction_result","request_id":1e400,"source_sequence":-1,"outcome":{"kind":"failed","message":"timeout"}}"#,
            Some(
                r#"{"event":"prediction_result","source_sequence":-1,"outcome":{"kind":"failed","message":"timeout"}}"#,
            ),
        ),
        (
            r#"{"event":"prediction_result","request_id":true,"source_sequence":7,"outcome":{"kind":"skipped"}}"#,
            Some(
                r#"{"event":"prediction_result","source_sequence":7,"outcome":{"kind":"skipped"}}"#,
            ),
        ),
        (
            r#"{"event":"prediction_result","request_id":["x"],"source_sequence":7,"outcome":{"kind":"completed","text":null,"input_tokens":12,"output_tokens":3}}"#,
            Some(
                r#"{"event":"prediction_result","source_sequence":7,"outcome":{"kind":"completed","text":null,"input_tokens":12,"output_tokens":3}}"#,
            ),
        ),
        (
            r#"{"event":"prediction_result","request_id":{"s":"x"},"source_sequence":7,"outcome":{"kind":"skipped"}}"#,
            Some(
                r#"{"event":"prediction_result","source_sequence":7,"outcome":{"kind":"skipped"}}"#,
            ),
        ),
        (
            r#"{"outcome":{"kind":"skipped"},"source_sequence":7,"request_id":"p1","event":"prediction_result"}"#,
            Some(
                r#"{"event":"prediction_result","source_sequence":7,"outcome":{"kind":"skipped"}}"#,
            ),
        ),
        (
            r#"{"event":"prediction_result","source_sequence":42,"outcome":{"kind":"completed","text":"let me run the tests","input_tokens":120,"output_tokens":8}}"#,
            Some(
                r#"{"event":"prediction_result","source_sequence":42,"outcome":{"kind":"completed","text":"let me run the tests","input_tokens":120,"output_tokens":8}}"#,
            ),
        ),
        (
            r#"{"event":"prediction_result","request_id":"p1","outcome":{"kind":"skipped"}}"#,
            None,
        ),
        (
            r#"{"event":"prediction_result","request_id":"p1","source_sequence":7}"#,
            None,
        ),
        (
            r#"{"event":"prediction_result","request_id":"p1","source_sequence":"7","outcome":{"kind":"skipped"}}"#,
            None,
        ),
    ];
    for (line, written) in cases {
        let got = Event::from_slice(line.as_bytes()).map(|e| e.to_string());
        assert_eq!(got.as_deref().ok(), *written, "{line}");
        let Some(written) = written else {
            assert!(matches!(
                Event::from_slice(line.as_bytes()),
                Err(LineError::NotAnEvent(_))
            ));
            continue;
        };
        // The same event as the line without the key, by every path.
        let event = Event::from_slice(written.as_bytes()).expect("the written line reads");
        assert!(matches!(event, Event::PredictionResult { .. }), "{line}");
        assert_eq!(Event::from_slice(line.as_bytes()).as_ref(), Ok(&event));
        assert_eq!(
            line.parse::<Event>().as_ref(),
            Ok(&event),
            "FromStr: {line}"
        );
        if let Ok(value) = serde_json::from_str::<Value>(line) {
            assert_eq!(
                Event::from_json(&value).as_ref(),
                Ok(&event),
                "from_json: {line}"
            );
            assert_eq!(
                serde_json::from_str::<Event>(line).ok().as_ref(),
                Some(&event),
                "serde: {line}"
            );
        }
        assert!(!event.to_line().contains("request_id"));
    }
}
