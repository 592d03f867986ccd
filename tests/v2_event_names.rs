//! The event direction's open-set names (`AppliedSteerKind`,
//! `ApprovalOutcome`, `SubrunStatus`), its builders and its errors, each
//! trait and method asserted with exact values: every line here fails on
//! one of `cargo mutants`' mutants of `src/v2/event/{names,build,error}.rs`.

use serve_command::v2::{
    AppliedSteerKind, ApprovalOutcome, Event, EventError, EventLineError, EventReadError,
    EventReader, SteerKind, SubrunStatus,
};
use std::collections::hash_map::DefaultHasher;
use std::error::Error;
use std::fmt;
use std::hash::{Hash, Hasher};

fn hash_of<T: Hash>(value: &T) -> u64 {
    let mut h = DefaultHasher::new();
    value.hash(&mut h);
    h.finish()
}

/// Every way to name `wire` gives `expected`, which is `wire` through
/// every trait that shows it.
#[track_caller]
fn names<T>(wire: &str, expected: &T, as_str: fn(&T) -> &str)
where
    T: for<'a> From<&'a str>
        + From<String>
        + for<'a> From<&'a String>
        + PartialEq
        + PartialEq<str>
        + for<'a> PartialEq<&'a str>
        + Hash
        + fmt::Display
        + fmt::Debug
        + serde::Serialize,
{
    let owned = wire.to_owned();
    for (how, got) in [
        ("&str", T::from(wire)),
        ("String", T::from(owned.clone())),
        ("&String", T::from(&owned)),
    ] {
        assert_eq!(format!("{got:?}"), format!("{expected:?}"), "{how}: {wire}");
        assert_eq!(&got, expected, "{how}: {wire}");
    }
    assert_eq!(as_str(expected), wire);
    assert_eq!(expected.to_string(), wire);
    assert!(*expected == *wire, "PartialEq<str>: {wire}");
    assert!(*expected == wire, "PartialEq<&str>: {wire}");
    let other = format!("{wire}!");
    assert!(*expected != *other.as_str(), "PartialEq<str>: {wire}");
    assert!(*expected != other.as_str(), "PartialEq<&str>: {wire}");
    let different = T::from(other.as_str());
    assert!(*expected != different, "PartialEq: {wire}");
    assert_eq!(hash_of(expected), hash_of(&wire), "Hash: {wire}");
    assert_eq!(
        serde_json::to_string(expected).unwrap(),
        serde_json::to_string(wire).unwrap()
    );
}

#[test]
fn each_applied_steer_kind_is_its_wire_string() {
    let rows: &[(&str, AppliedSteerKind)] = &[
        ("prompt", AppliedSteerKind::Prompt),
        ("command", AppliedSteerKind::Command),
        ("Prompt", AppliedSteerKind::Other("Prompt".into())),
        ("", AppliedSteerKind::Other(String::new())),
    ];
    for (wire, expected) in rows {
        names(wire, expected, AppliedSteerKind::as_str);
    }
    assert!(matches!(
        AppliedSteerKind::from(SteerKind::Prompt),
        AppliedSteerKind::Prompt
    ));
    assert!(matches!(
        AppliedSteerKind::from(SteerKind::Command),
        AppliedSteerKind::Command
    ));
}

#[test]
fn each_approval_outcome_is_its_wire_string() {
    let rows: &[(&str, ApprovalOutcome)] = &[
        ("allowed_once", ApprovalOutcome::AllowedOnce),
        ("rejected", ApprovalOutcome::Rejected),
        ("cancelled", ApprovalOutcome::Cancelled),
        ("unavailable", ApprovalOutcome::Other("unavailable".into())),
    ];
    for (wire, expected) in rows {
        names(wire, expected, ApprovalOutcome::as_str);
    }
    assert!(matches!(
        ApprovalOutcome::from(true),
        ApprovalOutcome::AllowedOnce
    ));
    assert!(matches!(
        ApprovalOutcome::from(false),
        ApprovalOutcome::Rejected
    ));
}

#[test]
fn each_subrun_status_is_its_wire_string() {
    let rows: &[(&str, SubrunStatus)] = &[
        ("captured", SubrunStatus::Captured),
        ("no_report", SubrunStatus::NoReport),
        ("max_steps", SubrunStatus::MaxSteps),
        ("context_yield", SubrunStatus::ContextYield),
        ("timed_out", SubrunStatus::TimedOut),
        ("failed", SubrunStatus::Failed),
        ("cancelled", SubrunStatus::Cancelled),
        ("exploded", SubrunStatus::Other("exploded".into())),
    ];
    for (wire, expected) in rows {
        names(wire, expected, SubrunStatus::as_str);
    }
}

/// An open-set field reads from a line, and writes to one (by `to_line`
/// and by serde), as its wire string; any other JSON type is refused.
#[test]
fn an_open_set_field_reads_and_writes_its_wire_string() {
    #[track_caller]
    fn both_ways(line: &str, event: &Event) {
        let read = Event::from_slice(line.as_bytes());
        assert_eq!(read.as_ref(), Ok(event));
        // The named variant, not an `Other` holding its string.
        assert_eq!(format!("{read:?}"), format!("{:?}", Ok::<_, ()>(event)));
        assert_eq!(event.to_line(), format!("{line}\n"));
        assert_eq!(serde_json::to_string(event).unwrap(), line);
    }
    for wire in ["prompt", "command", "steer"] {
        both_ways(
            &format!(r#"{{"event":"steer_applied","kind":"{wire}","content":"c"}}"#),
            &Event::steer_applied(AppliedSteerKind::from(wire), "c", None),
        );
    }
    for wire in ["allowed_once", "rejected", "cancelled", "unavailable"] {
        both_ways(
            &format!(r#"{{"event":"approval_resolved","id":"a","outcome":"{wire}"}}"#),
            &Event::approval_resolved("a", ApprovalOutcome::from(wire)),
        );
    }
    for wire in [
        "captured",
        "no_report",
        "max_steps",
        "context_yield",
        "timed_out",
        "failed",
        "cancelled",
        "exploded",
    ] {
        both_ways(
            &format!(
                r#"{{"event":"subrun_finished","id":"s","status":"{wire}","steps":0,"prompt_tokens":0,"completion_tokens":0}}"#
            ),
            &Event::subrun_finished("s", SubrunStatus::from(wire)).build(),
        );
    }
    // A `kind` that is not a string reads as a prompt steer's (the
    // oracle's vectors); the other two fields refuse it.
    assert_eq!(
        Event::from_slice(br#"{"event":"steer_applied","kind":1,"content":"c"}"#),
        Ok(Event::steer_applied(AppliedSteerKind::Prompt, "c", None))
    );
    let wrong: &[(&str, &str, &str)] = &[
        (
            r#"{"event":"approval_resolved","id":"a","outcome":true}"#,
            "approval_resolved",
            "outcome",
        ),
        (
            r#"{"event":"subrun_finished","id":"s","status":null,"steps":0,"prompt_tokens":0,"completion_tokens":0}"#,
            "subrun_finished",
            "status",
        ),
    ];
    for (line, event, field) in wrong {
        assert_eq!(
            Event::from_slice(line.as_bytes()),
            Err(EventLineError::NotAnEvent(EventError::WrongType {
                event,
                field,
                expected: "a string",
            })),
            "{line}"
        );
    }
}

/// Each builder's every field lands in its own place on the line.
#[test]
fn the_builders_put_each_field_in_its_place() {
    let rows: &[(Event, &str)] = &[
        (
            Event::tool_result("c1", "t1", "out", Some("b1".to_owned())),
            r#"{"event":"tool_result","tool_call_id":"c1","tool_name":"t1","is_error":false,"content":"out","brief":"b1"}"#,
        ),
        (
            Event::tool_error("c2", "t2", "err", None),
            r#"{"event":"tool_result","tool_call_id":"c2","tool_name":"t2","is_error":true,"content":"err","brief":null}"#,
        ),
        (
            Event::subrun_finished("s", SubrunStatus::NoReport)
                .steps(3)
                .tokens(5, 7)
                .unaccounted("why")
                .build(),
            r#"{"event":"subrun_finished","id":"s","status":"no_report","steps":3,"prompt_tokens":5,"completion_tokens":7,"unaccounted":"why"}"#,
        ),
        (
            Event::from(Event::subrun_finished("s", "max_steps").tokens(-2, 9)),
            r#"{"event":"subrun_finished","id":"s","status":"max_steps","steps":0,"prompt_tokens":-2,"completion_tokens":9}"#,
        ),
        (
            Event::workflow_started("w", "/j", "/e")
                .children(4, 2)
                .build(),
            r#"{"event":"workflow_started","id":"w","journal":"/j","events":"/e","first_child":4,"child_count":2}"#,
        ),
        (
            Event::from(Event::workflow_started("w", "/j", "/e")),
            r#"{"event":"workflow_started","id":"w","journal":"/j","events":"/e","first_child":0,"child_count":0}"#,
        ),
    ];
    for (event, line) in rows {
        assert_eq!(event.to_string(), *line);
    }
    // A builder compares as the event it builds.
    assert_eq!(
        Event::subrun_finished("s", SubrunStatus::Failed).steps(1),
        Event::subrun_finished("s", "failed").steps(1)
    );
    assert_ne!(
        Event::workflow_started("w", "/j", "/e").children(1, 1),
        Event::workflow_started("w", "/j", "/e")
    );
}

/// The words of every event error, exactly.
#[test]
fn each_event_error_displays_its_reason() {
    let syntax = match Event::from_slice(b"engine: starting") {
        Err(EventLineError::NotJson(e)) => e,
        other => panic!("{other:?}"),
    };
    let rows: &[(EventError, &str)] = &[
        (
            EventError::NotAnObject,
            "not an event: the JSON is not an object",
        ),
        (
            EventError::NoEventName,
            "not an event: no string \"event\" field",
        ),
        (EventError::UnknownEvent("nap".into()), "unknown event: nap"),
        (
            EventError::MissingField {
                event: "agent_finished",
                field: "answer",
            },
            "agent_finished: missing \"answer\"",
        ),
        (
            EventError::WrongType {
                event: "agent_step",
                field: "step",
                expected: "an integer",
            },
            "agent_step: \"step\" must be an integer",
        ),
        (
            EventError::InvalidField {
                event: "usage",
                field: "usage",
                reason: "too few".into(),
            },
            "usage: \"usage\": too few",
        ),
    ];
    for (error, words) in rows {
        assert_eq!(error.to_string(), *words);
        let line = EventLineError::from(error.clone());
        assert_eq!(line, EventLineError::NotAnEvent(error.clone()));
        assert_eq!(line.to_string(), *words);
        let read = EventReadError::NotAnEvent {
            line: 12,
            error: error.clone(),
        };
        assert_eq!(read.to_string(), format!("line 12: {words}"));
        assert_eq!(read.line(), Some(12));
        assert!(!read.is_io());
        assert!(read.source().is_none());
    }
    let line = EventLineError::from(syntax.clone());
    assert_eq!(line, EventLineError::NotJson(syntax.clone()));
    assert_eq!(
        line.to_string(),
        "not JSON: expected a JSON value at byte 0"
    );
    let read = EventReadError::NotJson {
        line: 3,
        error: syntax,
    };
    assert_eq!(
        read.to_string(),
        "line 3: not JSON: expected a JSON value at byte 0"
    );
    assert_eq!(read.line(), Some(3));
    assert!(!read.is_io());
    assert!(read.source().is_none());
    let read = EventReadError::TooLong { line: 9, max: 64 };
    assert_eq!(read.to_string(), "line 9 is longer than 64 bytes");
    assert_eq!(read.line(), Some(9));
    assert!(!read.is_io());
    assert!(read.source().is_none());
}

/// A reader turns each bad line into its error with the line's number,
/// and a failed read into `Io`, whose source is the I/O error's own.
#[test]
fn a_reader_reports_each_line_and_a_failed_read() {
    let stdout = concat!(
        "banner\n",
        "\n",
        "{\"event\":\"nap\"}\n",
        "{\"event\":\"agent_step\",\"step\":\"0123456789abcdef\"}\n",
        "{\"event\":\"agent_step\",\"step\":2}\n",
    );
    let got: Vec<String> = EventReader::with_max_line_len(stdout.as_bytes(), 40)
        .map(|item| match item {
            Ok(event) => format!("ok {event}"),
            Err(e) => format!("{:?} {e}", e.line()),
        })
        .collect();
    assert_eq!(
        got,
        [
            "Some(1) line 1: not JSON: expected a JSON value at byte 0",
            "Some(3) line 3: unknown event: nap",
            "Some(4) line 4 is longer than 40 bytes",
            "ok {\"event\":\"agent_step\",\"step\":2}",
        ]
    );

    /// An I/O error's cause, with a cause of its own.
    #[derive(Debug)]
    struct Cause(EventError);
    impl fmt::Display for Cause {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("pipe gone")
        }
    }
    impl Error for Cause {
        fn source(&self) -> Option<&(dyn Error + 'static)> {
            Some(&self.0)
        }
    }
    struct Broken;
    impl std::io::Read for Broken {
        fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other(Cause(EventError::NoEventName)))
        }
    }
    let mut reader = EventReader::new(std::io::BufReader::new(Broken));
    let err = reader.next().unwrap().unwrap_err();
    assert_eq!(err.to_string(), "read failed: pipe gone");
    assert_eq!(err.line(), None);
    assert!(err.is_io());
    // `Display` already shows the I/O error, so the chain goes on from
    // the I/O error's own source.
    let source = err.source().expect("the cause's source");
    assert_eq!(
        source.downcast_ref::<EventError>(),
        Some(&EventError::NoEventName)
    );
    assert!(reader.next().is_none());
}
