//! How the v2 decoder allocates: what the command owns (a string content
//! is its `String` alone: one part is held inline), one list of parts while
//! they are checked, an image's decoded bytes; a base64 string past the limit
//! is refused before anything of its size is allocated; and `write_line`
//! allocates nothing, images included.

use serve_command::v2::{Command, Content, ContentPart, Image};

#[path = "support/counting.rs"]
mod counting;

/// `f`'s result, how many times it allocated on this thread, and the
/// largest allocation.
fn allocations<T>(f: impl FnOnce() -> T) -> (T, usize, usize) {
    let measured = counting::allocations(f);
    (measured.out, measured.count, measured.largest)
}

const GIF: &str = r#"{"type":"image","media_type":"image/gif","data":"R0lGODlh"}"#;

#[test]
fn decoding_allocates_what_the_command_owns() {
    // (line, allocations)
    let cases = [
        (r#"{"command":"cancel","content":[1,2,{"type":"text"}]}"#.to_owned(), 0),
        (r#"{"command":"jobs_snapshot","request_id":"r1"}"#.to_owned(), 1),
        (
            r#"{"command":"job_stop","request_id":"r1","generation":"g","job_id":"j"}"#.to_owned(),
            3,
        ),
        // One text part is held inline: the text is all.
        (r#"{"command":"prompt","content":"fix the build"}"#.to_owned(), 1),
        (r#"{"command":"prompt","text":"fix the build"}"#.to_owned(), 1),
        (
            r#"{"command":"steer","submission_id":"s","content":"look","kind":"command"}"#.to_owned(),
            2,
        ),
        // Parts: the list kept while checking, the content's list, a string
        // per text part.
        (
            r#"{"command":"prompt","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}"#
                .to_owned(),
            1 + 1 + 2,
        ),
        // An image: the two lists, and its decoded bytes (the media type is
        // static).
        (format!(r#"{{"command":"prompt","content":[{GIF}]}}"#), 1 + 1 + 1),
        // A legacy URL: the URL list, the text, the bytes, the content's
        // list once a second part joins the text.
        (
            r#"{"command":"prompt","text":"x","images":["data:image/gif;base64,R0lGODlh"]}"#
                .to_owned(),
            1 + 1 + 1 + 1,
        ),
    ];
    for (line, want) in cases {
        let (got, n, _) = allocations(|| Command::from_slice(line.as_bytes()));
        assert!(got.is_ok(), "{line}: {got:?}");
        assert_eq!(n, want, "allocations decoding {line}");
    }
}

/// Image data without escapes is decoded straight from the line: the
/// largest allocation is the decoded image, not a copy of its base64.
#[test]
fn image_data_is_decoded_from_the_line() {
    let bytes: Vec<u8> = b"GIF89a"
        .iter()
        .copied()
        .chain(vec![7u8; 3_000_000])
        .collect();
    let cmd = Command::prompt(Content::new(vec![ContentPart::Image(
        Image::from_bytes(bytes).unwrap(),
    )]));
    let line = cmd.to_line();
    assert!(line.len() > 4_000_000);
    let (got, n, largest) = allocations(|| Command::from_slice(line.as_bytes()));
    assert_eq!(got.as_ref(), Ok(&cmd));
    assert_eq!(n, 3);
    // The decoder's estimate may round up a little; never the base64's size.
    assert!((3_000_006..3_000_100).contains(&largest), "{largest}");
}

/// Past the length limit the data is refused before it is decoded: nothing
/// near its size is allocated, only the error's strings and the part list.
/// Valid base64 too (one quad past the limit), which the scan would
/// otherwise decode as it finds it.
#[test]
fn too_long_base64_is_refused_without_decoding() {
    for len in [
        serve_command::v2::MAX_BASE64_LEN + 1,
        serve_command::v2::MAX_BASE64_LEN + 4,
    ] {
        let data = "A".repeat(len);
        let line = format!(
            r#"{{"command":"prompt","content":[{{"type":"image","media_type":"image/png","data":"{data}"}}]}}"#
        );
        let (got, n, largest) = allocations(|| Command::from_slice(line.as_bytes()));
        assert_eq!(
            got.unwrap_err().to_string(),
            "invalid content: JsonDecodeError((/0, invalid image: image exceeds the 5 MiB limit))"
        );
        assert!(n <= 5, "{n}");
        assert!(largest < 1024, "{largest}");
    }
}

#[test]
fn encoding_allocates_nothing_or_once() {
    let image = Image::from_bytes(b"\xff\xd8\xff".repeat(10_000)).unwrap();
    let cmd = Command::steer_tagged(
        serve_command::v2::SteerKind::Command,
        Content::new(vec![
            ContentPart::Text("look".into()),
            ContentPart::Image(image),
        ]),
        "s",
    );
    let line = cmd.to_line();
    let mut out = Vec::with_capacity(line.len());
    let ((), n, _) = allocations(|| cmd.write_line(&mut out).unwrap());
    assert_eq!((n, out.as_slice()), (0, line.as_bytes()));
    let (again, n, _) = allocations(|| cmd.to_line());
    assert_eq!((n, again), (1, line));
}
