//! The `<user_shell_command>` envelope: `parse` of any UTF-8 is the model's
//! (upstream's parse, transcribed in tests/support/shell_model.rs), and an
//! encode, when the input spells one, is the model's bytes and parses back
//! exactly inside the model's round-trip domain and nowhere else.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serve_command::shell::{encode, parse, ShellOutput};
use serve_command_fuzz::shell_model as model;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let as_model = |p: serve_command::shell::ShellCommand| {
        (p.command, p.exit, p.output, p.output_limit_reached)
    };
    assert_eq!(parse(text).map(as_model), model::parse(text), "parse");

    // `COMMAND NUL MODE NUL PAYLOAD`: MODE `E` is an error (the payload
    // its message); else an optional `T` (cut off) then the exit code (none
    // when it is not an i32), the payload the output.
    let mut fields = text.splitn(3, '\0');
    let (Some(command), Some(mode), Some(payload)) = (fields.next(), fields.next(), fields.next())
    else {
        return;
    };
    let output;
    let (ours, theirs) = if mode == "E" {
        (Err(payload), Err(payload))
    } else {
        let (limit, code) = match mode.strip_prefix('T') {
            Some(code) => (true, code),
            None => (false, mode),
        };
        let code = code.parse::<i32>().ok();
        output = ShellOutput::new(code, payload, limit);
        (Ok(&output), Ok((code, payload, limit)))
    };
    let encoded = encode(command, ours);
    assert_eq!(encoded, model::encode(command, theirs), "encode");
    let back = parse(&encoded).map(as_model);
    assert_eq!(back, model::parse(&encoded), "parse of an encode");
    assert_eq!(
        back.as_ref() == Some(&model::expected(command, theirs)),
        model::round_trips(command, theirs),
        "round trip of {command:?}, {theirs:?}: {back:?}"
    );
});
