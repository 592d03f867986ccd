//! A structured `v2::Event` (feature `arbitrary`: only events that read
//! back) through every writer and back through every reader.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use serve_command::v2::{Event, EventReader, JsonText};
use serve_command_fuzz::events::{apart, has_data, records};

fuzz_target!(|event: Event| {
    let line = event.to_line();
    assert_eq!(line.find('\n'), Some(line.len() - 1), "one LF, at the end");
    let text = &line[..line.len() - 1];
    assert_eq!(
        Event::from_slice(line.as_bytes()).as_ref(),
        Ok(&event),
        "from_slice"
    );
    assert_eq!(event.to_string(), text, "Display");
    assert_eq!(text.parse::<Event>().as_ref(), Ok(&event), "FromStr");

    let mut written = Vec::new();
    event
        .write_line(&mut written)
        .expect("a Vec takes every write");
    assert_eq!(written, line.as_bytes(), "write_line");

    // A job's data is the text upstream writes back: it reads as itself.
    for data in records(&event).into_iter().filter_map(|r| r.data.as_ref()) {
        assert_eq!(
            &data.as_str().parse::<JsonText>().expect("data is JSON"),
            data
        );
        assert_ne!(data.as_str(), "null", "null data is no data");
    }

    // Twice in a stream, the second after a CRLF: two items, numbered.
    let mut stream = text.as_bytes().to_vec();
    stream.extend_from_slice(b"\r\n");
    stream.extend_from_slice(line.as_bytes());
    let mut reader = EventReader::new(&stream[..]);
    for n in 1..=2 {
        assert_eq!(
            reader.next().map(|r| r.ok()),
            Some(Some(event.clone())),
            "item {n}"
        );
        assert_eq!(reader.line_number(), n);
    }
    assert!(reader.next().is_none());

    // The line as an assistant delta's content, after a plain run long
    // enough that write_line goes past its 8 KiB buffer (for one input in
    // eight: 16 KiB a run is most of the target's time).
    if line.len() % 8 == 0 {
        let long = Event::assistant_delta("a".repeat(16_400 + line.len() % 256) + &line);
        written.clear();
        long.write_line(&mut written)
            .expect("a Vec takes every write");
        assert_eq!(written, long.to_line().as_bytes(), "write_line past 8 KiB");
    }

    // serde: without data, the line's bytes and the same event; with data,
    // serde_json may refuse it (numbers past a double, deep nesting) or
    // read its numbers past 64 bits as doubles.
    match serde_json::from_str::<Value>(text) {
        // serde_json's `Value` reads a key of its own as a token.
        _ if serve_command_fuzz::serde_token(text.as_bytes()) => {}
        Ok(value) => {
            let from_json = Event::from_json(&value).expect("from_json reads the line");
            assert_eq!(apart(from_json), apart(event.clone()), "from_json");
            let de: Event = serde_json::from_str(text).expect("Deserialize reads the line");
            assert_eq!(apart(de), apart(event.clone()), "Deserialize");
            if !has_data(&event) {
                let serialized = serde_json::to_string(&event).expect("an event serializes");
                assert_eq!(serialized, text, "Serialize");
            }
        }
        Err(e) => {
            let msg = e.to_string();
            assert!(
                has_data(&event)
                    && (msg.starts_with("number out of range")
                        || msg.starts_with("recursion limit exceeded")),
                "serde_json refused {text}: {msg}"
            );
        }
    }
});
