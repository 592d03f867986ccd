//! Arbitrary bytes through `v2::Event::from_slice`, held to the writers
//! (`to_line`, `write_line`, `Display`), to `FromStr`, a trailing LF, an
//! `EventReader`, and, wherever serde_json reads the bytes, to `from_json`
//! and `Deserialize`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use serve_command::v2::{
    Event, EventLineError as LineError, EventReadError as ReadError, EventReader,
};
use serve_command_fuzz::events::apart;

fuzz_target!(|data: &[u8]| {
    let decoded = Event::from_slice(data);

    if let Ok(event) = &decoded {
        // The line it writes reads back as it, and is a fixed point; every
        // writer writes it.
        let line = event.to_line();
        assert_eq!(line.find('\n'), Some(line.len() - 1), "one LF, at the end");
        assert_eq!(event.to_string(), line[..line.len() - 1], "Display");
        let mut written = Vec::new();
        event.write_line(&mut written).expect("a Vec takes it");
        assert_eq!(written, line.as_bytes(), "write_line");
        let again = Event::from_slice(line.as_bytes()).expect("a written line reads back");
        assert_eq!(&again, event);
        assert_eq!(again.to_line(), line, "a fixed point");
    }
    if !matches!(decoded, Err(LineError::NotJson(_))) {
        let mut with_lf = data.to_vec();
        with_lf.push(b'\n');
        assert_eq!(Event::from_slice(&with_lf), decoded, "with a LF");
    }
    if let Ok(text) = std::str::from_utf8(data) {
        assert_eq!(text.parse::<Event>(), decoded, "str::parse");
    }
    // One line in a stream: the reader's item is from_slice's verdict (a
    // blank line is no item).
    if !data.contains(&b'\n') {
        let mut reader = EventReader::with_max_line_len(data, data.len());
        let blank = data.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r'));
        match (reader.next(), &decoded) {
            (None, _) => assert!(blank, "no item for a line that is not blank"),
            (Some(Ok(a)), Ok(b)) => assert_eq!(&a, b),
            (Some(Err(ReadError::NotJson { line: 1, error })), d) => {
                assert_eq!(Err::<Event, _>(LineError::NotJson(error)), *d, "reader")
            }
            (Some(Err(ReadError::NotAnEvent { line: 1, error })), d) => {
                assert_eq!(Err::<Event, _>(LineError::NotAnEvent(error)), *d, "reader")
            }
            (item, d) => panic!("reader says {item:?}, from_slice {d:?}"),
        }
        assert!(reader.next().is_none(), "one line, one item");
    }

    match serde_json::from_slice::<Value>(data) {
        // serde_json's `Value` reads a key of its own as a token.
        _ if serve_command_fuzz::serde_token(data) => {}
        // serde_json reads the number itself, not as the reference does.
        Ok(_) if serve_command_fuzz::quirk_number(data) => {}
        Ok(value) => {
            let parsed = Event::from_json(&value);
            match (&decoded, &parsed) {
                // serde_json's map sorts a job's data's keys: the line
                // without data is the same event; with data, the same
                // event with the same data values.
                (Ok(a), Ok(b)) if !data.windows(6).any(|w| w == b"\"data\"") => assert_eq!(a, b),
                (Ok(a), Ok(b)) => assert_eq!(apart(a.clone()), apart(b.clone()), "from_json"),
                (Err(LineError::NotAnEvent(a)), Err(b)) => assert_eq!(a, b),
                _ => panic!("from_slice says {decoded:?}, from_json says {parsed:?}"),
            }
            // Deserialize reads the members in order; its error is the
            // EventError's message.
            match (serde_json::from_slice::<Event>(data), &decoded) {
                (Ok(a), Ok(b)) => assert_eq!(apart(a), apart(b.clone()), "Deserialize"),
                (Err(e), Err(LineError::NotAnEvent(why))) => {
                    let msg = e.to_string();
                    let (msg, _) = msg.rsplit_once(" at line ").unwrap_or((&msg, ""));
                    assert_eq!(msg, why.to_string(), "Deserialize");
                }
                (got, _) => panic!("Deserialize says {got:?}, from_slice {decoded:?}"),
            }
        }
        Err(e) => {
            if !matches!(decoded, Err(LineError::NotJson(_))) {
                let msg = e.to_string();
                assert!(
                    msg.starts_with("number out of range")
                        || msg.starts_with("recursion limit exceeded"),
                    "from_slice read what serde_json calls {msg:?}: {decoded:?}"
                );
            }
        }
    }
});
