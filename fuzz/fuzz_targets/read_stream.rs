//! `CommandReader` over arbitrary bytes in arbitrary chunks, with a small
//! limit, interruptions and a failing end, against the stream model.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serve_command::v1::{CommandReader, ReadError};
use serve_command_fuzz::{buffered, item, stream_model, ChunkedRead, StreamInput};

fuzz_target!(|bytes: &[u8]| {
    let Some(input) = StreamInput::parse(bytes) else {
        return;
    };
    let mut reader = CommandReader::with_max_line_len(ChunkedRead::new(input), input.max);
    let mut items = Vec::new();
    while let Some(got) = reader.next() {
        let too_long = matches!(got, Err(ReadError::TooLong { .. }));
        items.push(item(got, reader.line_number()));
        if too_long {
            // Reported as the limit is passed: nothing held past it. (The
            // codec target checks the same framer after every chunk.)
            assert!(buffered(&format!("{reader:?}")) <= input.max);
        }
    }
    assert!(reader.next().is_none(), "the end stays the end");
    let (expected, lines) = stream_model(input.data, input.max, input.fail_at_end);
    assert_eq!(items, expected);
    assert_eq!(reader.line_number(), lines, "line_number() at the end");
});
