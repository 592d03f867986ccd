//! `CommandCodec::decode`/`decode_eof` fed arbitrary bytes in arbitrary
//! chunks, with a small limit, against the stream model.
#![no_main]

use bytes::BytesMut;
use libfuzzer_sys::fuzz_target;
use serve_command::v1::CommandCodec;
use serve_command_fuzz::{buffered, item, stream_model, StreamInput};
use tokio_util::codec::Decoder;

fuzz_target!(|bytes: &[u8]| {
    let Some(input) = StreamInput::parse(bytes) else {
        return;
    };
    let mut codec = CommandCodec::with_max_line_len(input.max);
    let mut src = BytesMut::new();
    let mut items = Vec::new();
    // Bytes since the last LF: only past the limit can the codec's buffer
    // (read off its Debug, which is slow) be tempted to outgrow it.
    let mut since_lf = 0;
    for chunk in input.chunks() {
        src.extend_from_slice(chunk);
        while let Some(got) = codec.decode(&mut src).expect("decode never fails") {
            items.push(item(got, codec.line_number()));
        }
        // Everything is consumed: a partial line lives in the codec, up to
        // the limit.
        assert!(src.is_empty(), "{} bytes left in src", src.len());
        since_lf = match chunk.iter().rposition(|&b| b == b'\n') {
            Some(i) => chunk.len() - i - 1,
            None => since_lf + chunk.len(),
        };
        if since_lf > input.max {
            assert!(buffered(&format!("{codec:?}")) <= input.max);
        }
    }
    // A transport error ends a FramedRead without `decode_eof`.
    if !input.fail_at_end {
        while let Some(got) = codec.decode_eof(&mut src).expect("decode_eof never fails") {
            items.push(item(got, codec.line_number()));
        }
    }
    let (mut expected, lines) = stream_model(input.data, input.max, input.fail_at_end);
    if input.fail_at_end {
        // The codec never yields the transport's error itself.
        expected.pop();
    }
    assert_eq!(items, expected);
    assert_eq!(codec.line_number(), lines, "line_number() at the end");
});
