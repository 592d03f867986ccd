//! Arbitrary bytes through `v2::Command::from_slice`, held to the encoders,
//! to `parse` and `Deserialize` over serde_json, to a v2 `CommandReader`,
//! and to the v2 reference model.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use serve_command::generic::{CommandReader, LineError, ReadError};
use serve_command::v2::{Command, ParseError};
use serve_command_fuzz::model_v2::model_v2;

fuzz_target!(|data: &[u8]| {
    let decoded = Command::from_slice(data);

    if let Ok(cmd) = &decoded {
        // The line it encodes to decodes back, and is a fixed point; every
        // encoder writes it.
        let line = cmd.to_line();
        assert_eq!(line.find('\n'), Some(line.len() - 1), "one LF, at the end");
        let mut written = Vec::new();
        cmd.write_line(&mut written).expect("a Vec takes it");
        assert_eq!(written, line.as_bytes(), "write_line");
        assert_eq!(
            serde_json::to_string(cmd).expect("serializes") + "\n",
            line,
            "Serialize"
        );
        let again = Command::from_slice(line.as_bytes()).expect("an encoded line decodes");
        assert_eq!(&again, cmd);
        assert_eq!(again.to_line(), line);
    }
    if !matches!(decoded, Err(LineError::Syntax(_))) {
        let mut with_lf = data.to_vec();
        with_lf.push(b'\n');
        assert_eq!(Command::from_slice(&with_lf), decoded, "with a LF");
    }
    if let Ok(text) = std::str::from_utf8(data) {
        assert_eq!(text.parse::<Command>(), decoded, "str::parse");
    }
    // One line in a stream: the reader's item is from_slice's verdict (a
    // blank line is no item).
    if !data.contains(&b'\n') {
        let mut reader = CommandReader::<_, Command>::with_max_line_len(data, data.len());
        let blank = data.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r'));
        match (reader.next(), &decoded) {
            (None, _) => assert!(blank, "no item for a line that is not blank"),
            (Some(Ok(a)), Ok(b)) => assert_eq!(&a, b),
            (Some(Err(ReadError::Line { error, .. })), d) => {
                assert_eq!(Err::<Command, _>(error), *d, "reader")
            }
            (item, d) => panic!("reader says {item:?}, from_slice {d:?}"),
        }
    }

    match serde_json::from_slice::<Value>(data) {
        // serde_json's `Value` reads a key of its own as a token.
        _ if serve_command_fuzz::serde_token(data) => {}
        // serde_json reads the number itself, not as the reference does.
        Ok(_) if serve_command_fuzz::quirk_number(data) => {}
        Ok(value) => {
            let parsed = Command::from_json(&value);
            match (&decoded, &parsed) {
                (Ok(a), Ok(b)) => assert_eq!(a, b),
                (Err(LineError::Parse(a)), Err(b)) => assert_eq!(a, b),
                _ => panic!("from_slice says {decoded:?}, parse says {parsed:?}"),
            }
            let verdict = match &decoded {
                Ok(cmd) => Ok(cmd.to_line().trim_end_matches('\n').to_owned()),
                Err(e) => Err(e.to_string()),
            };
            assert_eq!(verdict, model_v2(&value), "the model");
            match (serde_json::from_slice::<Command>(data), &decoded) {
                (Ok(a), Ok(b)) => assert_eq!(&a, b),
                (Err(e), Err(LineError::Parse(wire))) => {
                    let msg = e.to_string();
                    let (msg, _) = msg.rsplit_once(" at line ").unwrap_or((&msg, ""));
                    assert_eq!(msg, wire.to_string(), "Deserialize");
                    assert_eq!(msg.parse::<ParseError>().as_ref(), Ok(wire), "FromStr");
                }
                (got, _) => panic!("Deserialize says {got:?}, from_slice {decoded:?}"),
            }
        }
        Err(e) => {
            if !matches!(decoded, Err(LineError::Syntax(_))) {
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
