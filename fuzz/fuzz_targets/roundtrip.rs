//! A structured `Command` (feature `arbitrary`) through every encoder and
//! back through every decoder, and against the reference model's encoder.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serve_command::v1::Command;
use serve_command_fuzz::model::{model_parse, model_to_line};
use serve_command_fuzz::to_model;

fuzz_target!(|cmd: Command| {
    let line = cmd.to_line();
    assert_eq!(line.find('\n'), Some(line.len() - 1), "one LF, at the end");
    let object = &line[..line.len() - 1];
    assert_eq!(model_to_line(&to_model(&cmd)), object, "the model's bytes");
    assert_eq!(Command::from_slice(line.as_bytes()).as_ref(), Ok(&cmd));

    let mut written = Vec::new();
    cmd.write_line(&mut written)
        .expect("a Vec takes every write");
    assert_eq!(written, line.as_bytes(), "write_line");

    // The line as the text of a prompt, after a plain run long enough to go
    // from the string straight to the writer once the 8 KiB buffer is full
    // (of a length that moves where its stretches fall, and on odd lines
    // where it ends against the end of a 16 KiB window it is scanned
    // in): where that run ends, and all that follows, are the fuzzer's.
    let run = if line.len() % 2 == 0 { 16_400 } else { 73_600 };
    let long = Command::Prompt {
        text: "a".repeat(run + line.len() % 256) + &line,
        submission_id: None,
    };
    written.clear();
    long.write_line(&mut written)
        .expect("a Vec takes every write");
    assert_eq!(
        written,
        (model_to_line(&to_model(&long)) + "\n").as_bytes(),
        "write_line after a long plain run"
    );

    let json = cmd.to_json();
    assert_eq!(
        Command::from_json(&json).as_ref(),
        Ok(&cmd),
        "to_json, parse"
    );
    assert_eq!(model_parse(&json), Ok(to_model(&cmd)), "to_json, the model");

    let serialized = serde_json::to_string(&cmd).expect("a command serializes");
    assert_eq!(serialized, object, "Serialize");
    let deserialized: Command = serde_json::from_str(&serialized).expect("Deserialize");
    assert_eq!(deserialized, cmd);
});
