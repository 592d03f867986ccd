//! Properties of the engine's events over random input (feature
//! `proptest`: the strategies are the crate's, `v2::strategy::event` and
//! `event_line`): every event survives every writer and every reader, the
//! decoder gives each near-miss line the outcome the strategy's own
//! statement of upstream's rules predicts, by bytes, by
//! `serde_json::Value` and by `Deserialize` alike, and a reader goes on
//! past every line that is no event, numbering each.
#![cfg(feature = "proptest")]

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use serde_json::Value;
use serve_command::v2::{
    strategy, Event, EventError, EventLineError as LineError, EventReadError as ReadError,
    EventReader, JobRecord, JsonText,
};
use std::collections::BTreeSet;

/// The job records an event holds, to reach their `data`.
fn records_mut(event: &mut Event) -> Vec<&mut JobRecord> {
    match event {
        Event::JobChanged { job, .. } => vec![&mut **job],
        Event::JobsSnapshot { jobs, .. } => jobs.iter_mut().collect(),
        _ => Vec::new(),
    }
}

/// The event without its jobs' `data`, and each `data` as serde_json reads
/// it: serde_json's map sorts an object's keys, so the `Value` path writes
/// a job's `data` with its keys in another order, the same value.
fn apart(mut event: Event) -> (Event, Vec<Option<Value>>) {
    let data = records_mut(&mut event)
        .into_iter()
        .map(|r| {
            r.data
                .take()
                .map(|d| d.to_value().expect("serde_json reads the data it read"))
        })
        .collect();
    (event, data)
}

/// The decoder's verdict on a line, as the strategy states outcomes.
fn decoded(line: &str) -> Result<Event, EventError> {
    match Event::from_slice(line.as_bytes()) {
        Ok(event) => Ok(event),
        Err(LineError::NotAnEvent(e)) => Err(e),
        Err(e) => panic!("not JSON to the decoder: {e}: {line:?}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    /// Every event's line, from every writer, reads back as the event by
    /// every reader.
    #[test]
    fn events_round_trip(event in strategy::event()) {
        let line = event.to_line();
        prop_assert_eq!(line.find('\n'), Some(line.len() - 1), "one LF, at the end");
        let text = &line[..line.len() - 1];
        let mut written = Vec::new();
        event.write_line(&mut written).unwrap();
        prop_assert_eq!(&written, line.as_bytes(), "write_line");
        prop_assert_eq!(&event.to_string(), text, "Display");
        prop_assert_eq!(Event::from_slice(line.as_bytes()), Ok(event.clone()), "from_slice, with the LF");
        prop_assert_eq!(Event::from_slice(text.as_bytes()), Ok(event.clone()), "from_slice");
        prop_assert_eq!(text.parse::<Event>(), Ok(event.clone()), "FromStr");
        // A job's data is what upstream writes back: it reads back as itself.
        let mut copy = event.clone();
        for record in records_mut(&mut copy) {
            if let Some(data) = &record.data {
                prop_assert_eq!(&data.as_str().parse::<JsonText>().unwrap(), data);
                prop_assert_ne!(data.as_str(), "null");
            }
        }
        // serde_json refuses a number past a double and nesting past 128
        // (both may be in a job's data); any other line it reads.
        match serde_json::from_str::<Value>(text) {
            Ok(value) => {
                let from_json = Event::from_json(&value).map(apart);
                prop_assert_eq!(from_json, Ok(apart(event.clone())), "from_json");
                // serde reads the members in the line's order, but a
                // number in a job's data past 64 bits as a double.
                let deserialized = serde_json::from_str::<Event>(text).map_err(|e| e.to_string());
                prop_assert_eq!(deserialized.map(apart), Ok(apart(event.clone())), "Deserialize");
                if !text.contains("\"data\":") {
                    prop_assert_eq!(&serde_json::to_string(&event).unwrap(), text, "Serialize");
                }
            }
            Err(e) => {
                let msg = e.to_string();
                prop_assert!(
                    msg.starts_with("number out of range") || msg.starts_with("recursion limit exceeded"),
                    "serde_json refused {:?}: {}", text, msg
                );
                prop_assert!(text.contains("\"data\":"), "only a job's data goes past serde_json: {}", text);
            }
        }
    }

    /// The decoder gives every near-miss line the outcome the strategy
    /// predicts, by bytes, `FromStr` and (where serde_json reads the line)
    /// the `Value` path.
    #[test]
    fn lines_decode_as_predicted((line, outcome) in strategy::event_line()) {
        prop_assert!(!line.contains('\n'), "a line holds no LF: {:?}", line);
        let got = decoded(&line);
        prop_assert_eq!(&got, &outcome, "{}", line);
        prop_assert_eq!(line.parse::<Event>().map_err(|e| e.to_string()), got.clone().map_err(|e| e.to_string()));
        if let Ok(event) = &got {
            let again = Event::from_slice(event.to_line().as_bytes());
            prop_assert_eq!(again.as_ref(), Ok(event), "its line");
        }
        if let Ok(value) = serde_json::from_str::<Value>(&line) {
            let from_json = Event::from_json(&value).map(apart);
            prop_assert_eq!(from_json, got.clone().map(apart), "from_json of {}", line);
            // serde's error is the EventError's message, at serde_json's
            // place in the line.
            let deserialized = serde_json::from_str::<Event>(&line).map(apart).map_err(|e| {
                let msg = e.to_string();
                msg.rsplit_once(" at line ").map_or(msg.clone(), |(m, _)| m.to_owned())
            });
            prop_assert_eq!(deserialized, got.map(apart).map_err(|e| e.to_string()), "Deserialize of {}", line);
        }
    }

    /// Events with lines that are no event between them, LF or CRLF, blank
    /// lines, the last line with or without its LF, some lines over the
    /// limit: the reader yields every item, in order, each with its line's
    /// number, and stops only at the end.
    #[test]
    fn a_reader_reads_every_event_and_goes_on_past_every_other_line(
        lines in vec(line_of_a_stream(), 0..12),
        crlf in vec(any::<bool>(), 12),
        final_lf in any::<bool>(),
        max in prop_oneof![1 => 64usize..512, 3 => Just(1usize << 20)],
    ) {
        let mut stream = Vec::new();
        let mut expected = Vec::new();
        for (i, (bytes, outcome)) in lines.iter().enumerate() {
            let number = i as u64 + 1;
            stream.extend_from_slice(bytes);
            let crlf = crlf[i] && !bytes.is_empty();
            if crlf {
                stream.push(b'\r');
            }
            if i + 1 < lines.len() || final_lf {
                stream.push(b'\n');
            }
            // The CR before a LF counts toward the limit.
            let len = bytes.len() + usize::from(crlf);
            let blank = bytes.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r'));
            if len > max {
                expected.push((number, Err(format!("line {number} is longer than {max} bytes"))));
            } else if !blank {
                expected.push((number, outcome.clone().map_err(|e| match e {
                    Some(e) => format!("line {number}: {e}"),
                    None => format!("line {number}: not JSON"),
                })));
            }
        }
        let mut reader = EventReader::with_max_line_len(&stream[..], max);
        let mut got = Vec::new();
        while let Some(item) = reader.next() {
            let item = match item {
                Ok(event) => Ok(event),
                Err(ReadError::NotJson { line, .. }) => Err(format!("line {line}: not JSON")),
                Err(e @ (ReadError::NotAnEvent { .. } | ReadError::TooLong { .. })) => Err(e.to_string()),
                Err(e) => panic!("the reader stopped: {e}"),
            };
            got.push((reader.line_number(), item));
        }
        prop_assert_eq!(got, expected);
    }
}

/// Lines that are not JSON.
const NOT_JSON: &[&[u8]] = &[
    b"not json",
    b"{\"event\":",
    b"\xff\xfe",
    b"{\"event\":\"agent_step\",\"step\":1}{}",
    b"event: agent_step",
];

/// Blank lines, which are no item.
const BLANK: &[&[u8]] = &[b"", b" ", b"\t \r", b"\r"];

/// A line of a stream, without its LF, and what a reader makes of it: the
/// event, or the error (`None`: not JSON).
fn line_of_a_stream() -> impl Strategy<Value = (Vec<u8>, Result<Event, Option<EventError>>)> {
    prop_oneof![
        4 => strategy::event().prop_map(|e| (e.to_string().into_bytes(), Ok(e))),
        3 => strategy::event_line().prop_map(|(line, outcome)| (line.into_bytes(), outcome.map_err(Some))),
        1 => prop::sample::select(NOT_JSON)
        .prop_map(|b| (b.to_vec(), Err(None))),
        1 => prop::sample::select(BLANK)
            .prop_map(|b| (b.to_vec(), Err(None))),
    ]
}

/// What kind of outcome a line has: an event's name, or the error without
/// its variable parts.
fn category(outcome: &Result<Event, EventError>) -> String {
    match outcome {
        Ok(event) => format!("ok {}", event.name()),
        Err(EventError::UnknownEvent(_)) => "unknown event".into(),
        Err(EventError::MissingField { .. }) => "missing field".into(),
        Err(EventError::WrongType { expected, .. }) => format!("wrong type: {expected}"),
        Err(EventError::InvalidField { reason, .. }) => {
            // A job of `jobs`: `job 3: <why>`.
            let reason = match reason.split_once(": ") {
                Some((job, why)) if job.starts_with("job ") => why,
                _ => reason,
            };
            let what = if reason.starts_with("invalid content") {
                "invalid content"
            } else if reason.starts_with("missing job field") {
                "missing job field"
            } else if reason.starts_with("invalid nonnegative job integer") {
                "invalid nonnegative job integer"
            } else if reason.ends_with("must be an integer from 0 to 2147483647") {
                "a usage count"
            } else {
                match reason.split_once(": expected") {
                    // A record's field: its name left out.
                    Some((field, _))
                        if !["text", "input_tokens", "output_tokens"].contains(&field) =>
                    {
                        &reason[field.len() + 2..]
                    }
                    _ => reason,
                }
            };
            format!("invalid: {what}")
        }
        Err(e) => e.to_string(),
    }
}

/// The strategy reaches every event, and every kind of reason a line is
/// none, within a few thousand lines.
#[test]
fn event_lines_reach_every_event_and_every_reason() {
    let mut runner = TestRunner::deterministic();
    let lines = strategy::event_line();
    let mut categories = BTreeSet::new();
    let (mut serde_reads, mut serde_refuses, mut jobs_lines) = (0, 0, 0);
    for _ in 0..12_000 {
        let (line, outcome) = lines.new_tree(&mut runner).unwrap().current();
        categories.insert(category(&outcome));
        if outcome
            .as_ref()
            .is_err_and(|e| e.to_string().contains("job 1: "))
        {
            jobs_lines += 1;
        }
        match serde_json::from_str::<Value>(&line) {
            Ok(_) => serde_reads += 1,
            Err(_) => serde_refuses += 1,
        }
    }
    let events: BTreeSet<String> = categories
        .iter()
        .filter_map(|c| c.strip_prefix("ok "))
        .map(str::to_owned)
        .collect();
    assert_eq!(events.len(), 58, "events reached: {events:?}");
    for expected in [
        "not an event: the JSON is not an object",
        "not an event: no string \"event\" field",
        "unknown event",
        "missing field",
        "wrong type: a string",
        "wrong type: true or false",
        "wrong type: an integer from -2147483648 to 2147483647",
        "wrong type: an array of strings",
        "wrong type: an object of five token counts",
        "wrong type: an array of job records",
        "wrong type: one of \"started\", \"updated\", \"finished\", \"failed\"",
        "wrong type: one of \"stopped\", \"already_terminal\", \"not_found\", \"wrong_runtime\"",
        "invalid: invalid content",
        "invalid: a usage count",
        "invalid: invalid prediction outcome",
        "invalid: text: expected nonempty text or null",
        "invalid: input_tokens: expected an integer from -2147483648 to 2147483647",
        "invalid: output_tokens: expected an integer from -2147483648 to 2147483647",
        "invalid: negative token usage",
        "invalid: expected background job schema version 1",
        "invalid: missing job field",
        "invalid: expected a string",
        "invalid: expected a string or null",
        "invalid: expected true or false",
        "invalid: invalid nonnegative job integer",
        "invalid: invalid background job state",
        "invalid: invalid background job identity or count",
    ] {
        assert!(
            categories.contains(expected),
            "never reached {expected:?}; reached {categories:#?}"
        );
    }
    assert!(jobs_lines > 0, "no line's second job was the bad one");
    assert!(serde_reads >= 9000, "serde_json read only {serde_reads}");
    assert!(
        serde_refuses >= 100,
        "serde_json refused only {serde_refuses}"
    );
}

/// Every event of the table is drawn, and every one the oracle's vectors
/// hold.
#[test]
fn events_reach_every_event_of_the_vectors() {
    let mut runner = TestRunner::deterministic();
    let events = strategy::event();
    let mut drawn = BTreeSet::new();
    for _ in 0..3000 {
        drawn.insert(events.new_tree(&mut runner).unwrap().current().name());
    }
    let vectors: BTreeSet<&str> = include_str!("vectors/events.jsonl")
        .lines()
        .filter_map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let ok = v["ok"].as_str()?;
            Some(Event::from_slice(ok.as_bytes()).unwrap().name())
        })
        .collect();
    assert_eq!(drawn.len(), 58);
    assert_eq!(drawn, vectors);
}

/// `impl Arbitrary for Event`: whatever the bytes, an event that reads
/// back from its line; every event is reached.
#[cfg(feature = "arbitrary")]
mod arbitrary_events {
    use super::*;
    use arbitrary::{Arbitrary, Unstructured};

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]

        #[test]
        fn arbitrary_events_round_trip(bytes in vec(any::<u8>(), 0..2048)) {
            let event = Event::arbitrary_take_rest(Unstructured::new(&bytes)).unwrap();
            let line = event.to_line();
            prop_assert_eq!(Event::from_slice(line.as_bytes()), Ok(event.clone()));
            let mut written = Vec::new();
            event.write_line(&mut written).unwrap();
            prop_assert_eq!(written, line.into_bytes());
        }
    }

    #[test]
    fn arbitrary_reaches_every_event() {
        let mut names = BTreeSet::new();
        for first in 0..=255u8 {
            let bytes: Vec<u8> = std::iter::once(first)
                .chain((0..600).map(|i| (i * 31 % 251) as u8))
                .collect();
            names.insert(
                Event::arbitrary_take_rest(Unstructured::new(&bytes))
                    .unwrap()
                    .name(),
            );
        }
        assert_eq!(names.len(), 58);
    }
}
