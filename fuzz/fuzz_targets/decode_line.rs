//! Arbitrary bytes through `Command::from_slice`, held to the encoder, to
//! `Command::parse` and `Deserialize` over serde_json, and to the reference
//! model.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use serve_command::v1::{Command, LineError};
use serve_command_fuzz::{as_model, model::model_parse};

fuzz_target!(|data: &[u8]| {
    let decoded = Command::from_slice(data);

    if let Ok(cmd) = &decoded {
        // The line it encodes to decodes back, and is a fixed point.
        let line = cmd.to_line();
        assert_eq!(line.find('\n'), Some(line.len() - 1), "one LF, at the end");
        let again = Command::from_slice(line.as_bytes()).expect("an encoded line decodes");
        assert_eq!(&again, cmd);
        assert_eq!(again.to_line(), line);
    }
    if !matches!(decoded, Err(LineError::Syntax(_))) {
        // JSON followed by a LF is the same JSON.
        let mut with_lf = data.to_vec();
        with_lf.push(b'\n');
        assert_eq!(Command::from_slice(&with_lf), decoded, "with a LF");
    }
    if let Ok(text) = std::str::from_utf8(data) {
        assert_eq!(text.parse::<Command>(), decoded, "str::parse");
    }

    match serde_json::from_slice::<Value>(data) {
        // serde_json's `Value` reads a key of its own as a token.
        _ if serve_command_fuzz::serde_token(data) => {}
        Ok(value) => {
            // serde_json (depth 128) read it: `parse`, `Deserialize` and the
            // model must all agree with `from_slice`.
            let parsed = Command::from_json(&value);
            match (&decoded, &parsed) {
                (Ok(a), Ok(b)) => assert_eq!(a, b),
                (Err(LineError::Parse(a)), Err(b)) => assert_eq!(a, b),
                _ => panic!("from_slice says {decoded:?}, parse says {parsed:?}"),
            }
            assert_eq!(as_model(&decoded), Some(model_parse(&value)), "the model");
            match (serde_json::from_slice::<Command>(data), &decoded) {
                (Ok(a), Ok(b)) => assert_eq!(&a, b),
                (Err(e), Err(LineError::Parse(wire))) => {
                    // serde_json appends " at line L column C".
                    let msg = e.to_string();
                    let (msg, _) = msg.rsplit_once(" at line ").unwrap_or((&msg, ""));
                    assert_eq!(msg, wire.to_string(), "Deserialize");
                }
                (got, _) => panic!("Deserialize says {got:?}, from_slice {decoded:?}"),
            }
        }
        Err(e) => {
            // serde_json refuses more than the protocol does only for
            // numbers past f64 and nesting past 128 levels.
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
