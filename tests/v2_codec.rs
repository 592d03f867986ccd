//! `CommandCodec` of revision v2: the same framing, v2's commands and
//! errors, at every split of an input with an image line.
#![cfg(feature = "tokio")]

use bytes::BytesMut;
use serve_command::generic::{CommandCodec, ReadError};
use serve_command::v2::{Command, ContentPart, Image};
use tokio_util::codec::{Decoder, Encoder};

const INPUT: &[u8] = b"{\"command\":\"prompt\",\"content\":[{\"type\":\"text\",\"text\":\"see\"},{\"type\":\"image\",\"media_type\":\"image/png\",\"data\":\"iVBORw0KGgo=\"}]}\n\
\n\
{\"command\":\"job_stop\",\"request_id\":\"r\",\"generation\":\"g\",\"job_id\":\"..\"}\r\n\
{\"command\":\"jobs_snapshot\",\"request_id\":\"r\"}";

fn decode_split(at: usize) -> Vec<(u64, Result<String, String>)> {
    let mut codec = CommandCodec::<Command>::with_max_line_len(1 << 20);
    let mut src = BytesMut::new();
    let mut items = Vec::new();
    let mut push = |codec: &CommandCodec<Command>, item: Result<Command, ReadError<_>>| {
        items.push((
            codec.line_number(),
            item.map(|c| c.to_line()).map_err(|e| e.to_string()),
        ))
    };
    let (a, b) = INPUT.split_at(at);
    for chunk in [a, b] {
        src.extend_from_slice(chunk);
        while let Some(item) = codec.decode(&mut src).unwrap() {
            push(&codec, item);
        }
    }
    while let Some(item) = codec.decode_eof(&mut src).unwrap() {
        push(&codec, item);
    }
    items
}

#[test]
fn v2_codec_at_every_split() {
    let image_line = "{\"command\":\"prompt\",\"content\":[{\"type\":\"text\",\"text\":\"see\"},{\"type\":\"image\",\"media_type\":\"image/png\",\"data\":\"iVBORw0KGgo=\"}]}\n";
    let expected = vec![
        (1, Ok(image_line.to_owned())),
        (3, Err("line 3: invalid background job command".to_owned())),
        (
            4,
            Ok("{\"command\":\"jobs_snapshot\",\"request_id\":\"r\"}\n".to_owned()),
        ),
    ];
    for at in 0..=INPUT.len() {
        assert_eq!(decode_split(at), expected, "split at {at}");
    }
}

#[test]
fn v2_codec_encodes_the_canonical_line() {
    let image = Image::from_base64("image/gif", "R0lGODlh").unwrap();
    let cmd = Command::steer_tagged(
        serve_command::v2::SteerKind::Prompt,
        vec![ContentPart::Image(image)],
        "s",
    );
    let mut codec = CommandCodec::<Command>::with_max_line_len(1024);
    let mut dst = BytesMut::new();
    codec.encode(&cmd, &mut dst).unwrap();
    codec.encode(cmd.clone(), &mut dst).unwrap();
    assert_eq!(dst, [cmd.to_line(), cmd.to_line()].concat().as_bytes());
}
