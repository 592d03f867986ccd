//! Images in the v2 revision: the four sniffs, canonical padded base64,
//! the 5 MiB limit exactly at and around its edge (in UTF-16 units before
//! decoding, in bytes after), data URLs, and the error strings, through
//! the byte decoder. Every verdict here is `oracle-latest`'s (the same
//! cases as `tests/v2_model.rs`).

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serve_command::generic::LineError;
use serve_command::v2::{Command, ContentPart, Image, ImageError, ParseError, MAX_BASE64_LEN};

const PNG: &[u8] = b"\x89PNG\r\n\x1a\n";
const TOO_LARGE: &str = "image exceeds the 5 MiB limit";
const BAD: &str = "image data must be canonical padded base64";

#[track_caller]
fn sniff(bytes: &[u8], expected: Result<&str, ImageError>) {
    assert_eq!(
        Image::from_bytes(bytes.to_vec()).map(|i| i.media_type()),
        expected
    );
}

#[test]
fn four_magic_byte_checks() {
    sniff(PNG, Ok("image/png"));
    sniff(b"\x89PNG\r\n\x1a\nrest", Ok("image/png"));
    sniff(b"\x89PNG\r\n\x1a", Err(ImageError::UnsupportedFormat));
    sniff(b"\xff\xd8\xff", Ok("image/jpeg"));
    sniff(b"\xff\xd8", Err(ImageError::UnsupportedFormat));
    sniff(b"GIF87a", Ok("image/gif"));
    sniff(b"GIF89a", Ok("image/gif"));
    sniff(b"GIF88a", Err(ImageError::UnsupportedFormat));
    sniff(b"RIFF\x01\x02\x03\x04WEBP", Ok("image/webp"));
    sniff(b"RIFF\x01\x02\x03WEBP", Err(ImageError::UnsupportedFormat));
    sniff(b"", Err(ImageError::UnsupportedFormat));
    sniff(b"BM", Err(ImageError::UnsupportedFormat));
}

#[track_caller]
fn base64(media_type: &str, data: &str, expected: Result<&[u8], &str>) {
    let got = Image::from_base64(media_type, data);
    assert_eq!(
        got.as_ref().map(Image::bytes).map_err(ToString::to_string),
        expected.map_err(str::to_owned),
        "{data:?}"
    );
}

#[test]
fn canonical_padded_base64_only() {
    base64("image/png", "iVBORw0KGgo=", Ok(PNG));
    base64("image/png", "iVBORw0KGgo", Err(BAD));
    base64("image/png", "iVBORw0KGgo==", Err(BAD));
    // Nonzero trailing bits: decodes leniently, re-encodes differently.
    base64("image/png", "iVBORw0KGgp=", Err(BAD));
    base64("image/png", " iVBORw0KGgo=", Err(BAD));
    base64("image/png", "iVBORw0KGgo=\n", Err(BAD));
    base64("image/jpeg", "_9j_", Err(BAD));
    base64("image/jpeg", "/9j/", Ok(b"\xff\xd8\xff"));
    base64(
        "image/png",
        "",
        Err("expected PNG, JPEG, GIF, or WebP image bytes"),
    );
    base64(
        "image/png",
        "Qk0=",
        Err("expected PNG, JPEG, GIF, or WebP image bytes"),
    );
    base64(
        "image/jpeg",
        "iVBORw0KGgo=",
        Err("image declares image/jpeg but bytes identify image/png"),
    );
    base64(
        "image/PNG",
        "iVBORw0KGgo=",
        Err("image declares image/PNG but bytes identify image/png"),
    );
}

#[test]
fn data_urls() {
    for (url, expected) in [
        ("data:image/png;base64,iVBORw0KGgo=", Ok(())),
        ("data:image/png;base64,iVBORw0KGgo", Err(BAD)),
        ("image/png;base64,iVBORw0KGgo=", Err(BAD)),
        ("DATA:image/png;base64,iVBORw0KGgo=", Err(BAD)),
        ("data:image/png,iVBORw0KGgo=", Err(BAD)),
        // Split at the first `;base64,`: the data holds the second.
        ("data:image/png;base64,iVBORw0KGgo=;base64,", Err(BAD)),
        (
            "data:image/png;x;base64,iVBORw0KGgo=",
            Err("image declares image/png;x but bytes identify image/png"),
        ),
    ] {
        assert_eq!(
            Image::from_data_url(url)
                .map(|_| ())
                .map_err(|e| e.to_string()),
            expected.map_err(str::to_owned),
            "{url}"
        );
    }
}

fn png_of(len: usize) -> String {
    let mut bytes = PNG.to_vec();
    bytes.resize(len, 0);
    STANDARD.encode(bytes)
}

/// Both ways a line carries an image, decoded from bytes: the content
/// part's error is wrapped with its path, the data URL's is not.
#[track_caller]
fn at_limit(data: &str, expected: Result<usize, &str>) {
    let content = format!(
        r#"{{"command":"prompt","content":[{{"type":"image","media_type":"image/png","data":"{data}"}}]}}"#
    );
    let legacy =
        format!(r#"{{"command":"steer","text":"x","images":["data:image/png;base64,{data}"]}}"#);
    let image_len = |line: &str| match Command::from_slice(line.as_bytes()) {
        Ok(Command::Prompt { content, .. } | Command::Steer { content, .. }) => {
            match content.parts().last() {
                Some(ContentPart::Image(image)) => Ok(image.bytes().len()),
                other => panic!("{other:?}"),
            }
        }
        Ok(other) => panic!("{other:?}"),
        Err(e) => Err(e.to_string()),
    };
    match expected {
        Ok(len) => {
            assert_eq!(image_len(&content), Ok(len));
            assert_eq!(image_len(&legacy), Ok(len));
            // And the canonical line is the content line, unescaped.
            let cmd = Command::from_slice(content.as_bytes()).unwrap();
            assert_eq!(cmd.to_line(), content.replace("\\u0041", "A") + "\n");
        }
        Err(message) => {
            assert_eq!(
                image_len(&content),
                Err(format!(
                    "invalid content: JsonDecodeError((/0, invalid image: {message}))"
                ))
            );
            assert_eq!(image_len(&legacy), Err(message.to_owned()));
        }
    }
}

#[test]
fn the_5_mib_limit_exactly() {
    const LIMIT: usize = 5 * 1024 * 1024;
    assert_eq!(MAX_BASE64_LEN, 6_990_508);
    let at = png_of(LIMIT);
    assert_eq!((at.len(), &at[at.len() - 2..]), (MAX_BASE64_LEN, "A="));
    at_limit(&at, Ok(LIMIT));
    at_limit(&png_of(LIMIT - 1), Ok(LIMIT - 1));
    // As long as the limit allows, unpadded: 5 MiB + 1 decoded, refused
    // after decoding.
    let over = png_of(LIMIT + 1);
    assert_eq!(over.len(), MAX_BASE64_LEN);
    at_limit(&over, Err(TOO_LARGE));
    at_limit(&png_of(LIMIT + 2), Err(TOO_LARGE));
    // One unit past the length limit: refused before decoding, even when
    // it is not base64 at all.
    at_limit(&format!("{at}="), Err(TOO_LARGE));
    at_limit(&"!".repeat(MAX_BASE64_LEN), Err(BAD));
    at_limit(&"!".repeat(MAX_BASE64_LEN + 1), Err(TOO_LARGE));
    // Counted in UTF-16 units: one astral character is two.
    at_limit(
        &format!("{}\u{1F600}", "A".repeat(MAX_BASE64_LEN - 1)),
        Err(TOO_LARGE),
    );
    // More UTF-8 bytes than the limit, fewer UTF-16 units: just bad.
    at_limit(&"\u{e9}".repeat(MAX_BASE64_LEN / 2 + 1), Err(BAD));
    // Escapes count as the characters they stand for: `\u0041` is one
    // unit (and an escaped string is unescaped before it is decoded).
    let escaped = at.replacen('A', "\\u0041", 10);
    assert!(escaped.len() > MAX_BASE64_LEN);
    at_limit(&escaped, Ok(LIMIT));
}

/// A line of many images is bounded by the line, not by the images: each
/// is decoded once, in order, and the first bad one stops the line.
#[test]
fn many_images_in_one_line() {
    let part = r#"{"type":"image","media_type":"image/gif","data":"R0lGODlh"}"#;
    let parts = vec![part; 10_000].join(",");
    let line = format!(r#"{{"command":"prompt","content":[{parts}]}}"#);
    let Ok(Command::Prompt { content, .. }) = Command::from_slice(line.as_bytes()) else {
        panic!()
    };
    assert_eq!(content.parts().len(), 10_000);
    let bad = format!(
        r#"{{"command":"prompt","content":[{parts},{{"type":"image","media_type":"image/png","data":"R0lGODlh"}},7]}}"#
    );
    assert_eq!(
        Command::from_slice(bad.as_bytes()),
        Err(LineError::Parse(ParseError::InvalidContent {
            path: "/10000".into(),
            message: "invalid image: image declares image/png but bytes identify image/gif".into(),
        }))
    );
}

#[test]
fn image_errors_display_and_parse_back() {
    for (e, s) in [
        (ImageError::TooLarge, TOO_LARGE),
        (ImageError::InvalidBase64, BAD),
        (
            ImageError::UnsupportedFormat,
            "expected PNG, JPEG, GIF, or WebP image bytes",
        ),
        (
            ImageError::MediaTypeMismatch {
                declared: "a but bytes identify image/gif".into(),
                sniffed: "image/png".into(),
            },
            "image declares a but bytes identify image/gif but bytes identify image/png",
        ),
    ] {
        assert_eq!(e.to_string(), s);
        assert_eq!(s.parse(), Ok(e.clone()));
        assert_eq!(s.parse(), Ok(ParseError::Image(e)));
    }
    assert!("image declares x but bytes identify image/bmp"
        .parse::<ImageError>()
        .is_err());
}

#[test]
fn an_image_debugs_as_its_type_and_size() {
    let image = Image::from_base64("image/png", "iVBORw0KGgo=").unwrap();
    assert_eq!(format!("{image:?}"), "Image(image/png, 8 bytes)");
    assert_eq!(image.to_data_url(), "data:image/png;base64,iVBORw0KGgo=");
}

/// A content part's data as the line scanner reads it: plain base64 is
/// decoded as the string is found (a successful decode of the bytes up to
/// the next quote proves the string holds no escape or control character);
/// anything else is scanned as any string and decoded after unescaping.
/// Both ways give the reference's verdict, byte for byte, and the verdict
/// of the `Deserialize` path, which never decodes as it reads.
#[track_caller]
fn data_line(line: &str, expected: Result<&str, &str>) {
    let got = Command::from_slice(line.as_bytes());
    assert_eq!(
        got.as_ref()
            .map(|c| c.to_line().trim_end().to_owned())
            .map_err(ToString::to_string)
            .as_deref()
            .map_err(String::as_str),
        expected,
        "{line:?}"
    );
    if !matches!(got, Err(LineError::Syntax(_))) {
        let other = serde_json::from_str::<Command>(line).map_err(|e| e.to_string());
        match (&got, other) {
            (Ok(cmd), Ok(again)) => assert_eq!(&again, cmd, "{line:?}"),
            (Err(e), Err(again)) => assert!(again.starts_with(&e.to_string()), "{again}"),
            (got, other) => panic!("{line:?}: {got:?} but Deserialize {other:?}"),
        }
    }
}

/// `{"command":"prompt","content":[<part>]}`.
fn prompt_of(part: &str) -> String {
    format!(r#"{{"command":"prompt","content":[{part}]}}"#)
}

const HEAD: &str =
    r#"{"command":"prompt","content":[{"type":"image","media_type":"image/png","data":""#;

#[test]
fn image_data_decoded_as_scanned_or_after_unescaping() {
    let ok_png = prompt_of(r#"{"type":"image","media_type":"image/png","data":"iVBORw0KGgo="}"#);
    let ok_jpeg = prompt_of(r#"{"type":"image","media_type":"image/jpeg","data":"/9j/"}"#);
    let bad = format!("invalid content: JsonDecodeError((/0, invalid image: {BAD}))");
    let unsupported =
        "invalid content: JsonDecodeError((/0, invalid image: expected PNG, JPEG, GIF, or WebP image bytes))";
    let part = |data: &str| {
        prompt_of(&format!(
            r#"{{"type":"image","media_type":"image/png","data":"{data}"}}"#
        ))
    };
    let jpeg = |data: &str| {
        prompt_of(&format!(
            r#"{{"type":"image","media_type":"image/jpeg","data":"{data}"}}"#
        ))
    };
    // Plain, decoded as scanned; the line after it is scanned on.
    data_line(&ok_png, Ok(&ok_png));
    data_line(&ok_jpeg, Ok(&ok_jpeg));
    data_line(
        &prompt_of(r#"{"data" : "iVBORw0KGgo=" , "media_type":"image/png","type":"image"}"#),
        Ok(&ok_png),
    );
    data_line(&part(""), Err(unsupported));
    data_line(&part("Qk0="), Err(unsupported));
    // Escapes: never decoded as they stand (a backslash is not base64),
    // decoded once unescaped. `\/` is `/`, in the alphabet.
    data_line(&jpeg(r"\/9j\/"), Ok(&ok_jpeg));
    data_line(&jpeg(r"\u002f9j/"), Ok(&ok_jpeg));
    data_line(&part(r"iVBORw0KGgo\u003d"), Ok(&ok_png));
    data_line(&part(r"iVBORw0K\u0047go="), Ok(&ok_png));
    data_line(&part(r"iVBORw0KGgo=\n"), Err(&bad));
    data_line(&part(r"iVBORw0KGgo\\"), Err(&bad));
    data_line(&part(r#"iVBORw0KGgo=\""#), Err(&bad));
    data_line(&part(r"\u0000iVBORw0KGgo="), Err(&bad));
    // The media type's escapes are unescaped too.
    data_line(
        &prompt_of(r#"{"type":"image","media_type":"image\/png","data":"iVBORw0KGgo="}"#),
        Ok(&ok_png),
    );
    // Bad base64 at the first, a middle and the last byte, in the padding
    // and the trailing bits; non-ASCII.
    for data in [
        "!VBORw0KGgo=",
        "iVBOR!0KGgo=",
        "iVBORw0KGgo!",
        "iVBORw0KGgo",
        "iVBORw0KGgo==",
        "iVBORw0KGh==",
        "iVBORw0KGgp=",
        "iVBORw0K=Ggo",
        " iVBORw0KGgo=",
        "iVBORw0KGgo= ",
        "iVBORw0KGg\u{e9}",
        "iVBORw0KGgo=\u{1F600}",
        "iVBORw0KGgo=_",
        "iVBORw0KGgo-",
    ] {
        data_line(&part(data), Err(&bad));
    }
    // A second image's error carries its own index.
    data_line(
        &prompt_of(
            r#"{"type":"image","media_type":"image/png","data":"iVBORw0KGgo="},{"type":"image","media_type":"image/png","data":"iVBORw0KGgo"}"#,
        ),
        Err(&format!(
            "invalid content: JsonDecodeError((/1, invalid image: {BAD}))"
        )),
    );
    // Decoded, then the declared type checked.
    data_line(
        &jpeg("iVBORw0KGgo="),
        Err("invalid content: JsonDecodeError((/0, invalid image: image declares image/jpeg but bytes identify image/png))"),
    );
    data_line(
        &jpeg(r"iVBORw0KGgo\u003d"),
        Err("invalid content: JsonDecodeError((/0, invalid image: image declares image/jpeg but bytes identify image/png))"),
    );
    data_line(
        &prompt_of(r#"{"type":"image","data":"iVBORw0KGgo="}"#),
        Err(
            "invalid content: JsonDecodeError((/0/media_type, String::from_json: expected string))",
        ),
    );
    // The last `data` wins, with its own decoding or none.
    data_line(
        &prompt_of(
            r#"{"type":"image","media_type":"image/jpeg","data":"iVBORw0KGgo=","data":"/9j/"}"#,
        ),
        Ok(&ok_jpeg),
    );
    data_line(
        &prompt_of(
            r#"{"type":"image","media_type":"image/png","data":"/9j/","data":"iVBORw0KGgo\u003d"}"#,
        ),
        Ok(&ok_png),
    );
    data_line(
        &prompt_of(
            r#"{"type":"image","media_type":"image/png","data":"/9j/","data":"iVBORw0KGgo"}"#,
        ),
        Err(&bad),
    );
    data_line(
        &prompt_of(r#"{"type":"image","media_type":"image/png","data":"iVBORw0KGgo=","data":7}"#),
        Err("invalid content: JsonDecodeError((/0/data, String::from_json: expected string))"),
    );
    data_line(
        &prompt_of(
            r#"{"type":"image","media_type":"image/png","data":null,"data":"iVBORw0KGgo="}"#,
        ),
        Ok(&ok_png),
    );
    // A text part's data, or a top-level one, is not read.
    data_line(
        &prompt_of(r#"{"type":"text","text":"a","data":"iVBORw0KGgo="}"#),
        Ok(r#"{"command":"prompt","content":"a"}"#),
    );
    data_line(
        r#"{"command":"prompt","content":"a","data":"iVBORw0KGgo"}"#,
        Ok(r#"{"command":"prompt","content":"a"}"#),
    );
    // Syntax errors, where the string's own scan puts them.
    let at = HEAD.len();
    for (line, expected) in [
        // A control character: a byte base64 refuses, then the scan's error.
        (
            format!("{HEAD}iVBORw0K\x01Ggo=\"}}]}}"),
            format!(
                "control character in a string (escape it) at byte {}",
                at + 8
            ),
        ),
        (
            format!("{HEAD}iVBORw0KGgo=\n\"}}]}}"),
            format!(
                "control character in a string (escape it) at byte {}",
                at + 12
            ),
        ),
        (
            format!("{HEAD}\\q iVBORw0KGgo=\"}}]}}"),
            format!("invalid escape at byte {at}"),
        ),
        // Unterminated: no quote at all, or only an escaped one.
        (
            format!("{HEAD}iVBORw0KGgo="),
            format!("unterminated string at byte {}", at - 1),
        ),
        (
            format!("{HEAD}iVBORw0KGgo=\\\"}}]}}"),
            format!("unterminated string at byte {}", at - 1),
        ),
        // Decoded, and the line goes wrong after the string.
        (
            format!("{HEAD}iVBORw0KGgo=\"\x01}}]}}"),
            format!("expected ',' or '}}' at byte {}", at + 13),
        ),
        (
            format!("{HEAD}iVBORw0KGgo=\""),
            format!("unexpected end of line at byte {}", at + 13),
        ),
        (
            format!("{HEAD}iVBORw0KGgo=\"}}]}}\u{0}"),
            format!(
                "trailing characters after the JSON value at byte {}",
                at + 16
            ),
        ),
    ] {
        data_line(&line, Err(&expected));
    }
    // Invalid UTF-8 is reported first, after the data or in it.
    let mut line = HEAD.as_bytes().to_vec();
    line.extend_from_slice(b"iVBORw0KGgo=\"}],\"x\":\"\xff\"}");
    assert_eq!(
        Command::from_slice(&line).map_err(|e| e.to_string()),
        Err(format!("invalid UTF-8 at byte {}", at + 21))
    );
    let mut line = HEAD.as_bytes().to_vec();
    line.extend_from_slice(b"iVBORw0K\xffGgo=\"}]}");
    assert_eq!(
        Command::from_slice(&line).map_err(|e| e.to_string()),
        Err(format!("invalid UTF-8 at byte {}", at + 8))
    );
}

/// `Image`'s serde form is an image part's fields without its `type`,
/// checked as `Image::from_base64` checks them, errors worded as the wire
/// words them (serde_json adds the position).
#[test]
fn an_image_alone_through_serde() {
    let image = Image::from_base64("image/png", "iVBORw0KGgo=").unwrap();
    let json = serde_json::to_string(&image).unwrap();
    assert_eq!(json, r#"{"media_type":"image/png","data":"iVBORw0KGgo="}"#);
    assert_eq!(serde_json::from_str::<Image>(&json).unwrap(), image);
    let table: &[(&str, Result<&str, &str>)] = &[
        // An image part reads as its image: `type` is another key.
        (
            r#"{"type":"image","media_type":"image/png","data":"iVBORw0KGgo=","x":[1]}"#,
            Ok("image/png"),
        ),
        (
            r#"{"media_type":"image/png","data":"iVBORw0KGgo"}"#,
            Err("image data must be canonical padded base64 at line 1 column 47"),
        ),
        (
            r#"{"media_type":"image/gif","data":"iVBORw0KGgo="}"#,
            Err("image declares image/gif but bytes identify image/png at line 1 column 48"),
        ),
        (
            r#"{"media_type":"image/png","data":"Qk0="}"#,
            Err("expected PNG, JPEG, GIF, or WebP image bytes at line 1 column 40"),
        ),
        (
            r#"{"data":"iVBORw0KGgo="}"#,
            Err("missing field `media_type` at line 1 column 23"),
        ),
        (
            r#"{"media_type":"image/png","data":7}"#,
            Err("invalid type: integer `7`, expected a string at line 1 column 34"),
        ),
        (
            r#""data:image/png;base64,iVBORw0KGgo=""#,
            Err(
                r#"invalid type: string "data:image/png;base64,iVBORw0KGgo=", expected an image object, {"media_type": ..., "data": ...} at line 1 column 36"#,
            ),
        ),
    ];
    for &(json, expected) in table {
        let got = serde_json::from_str::<Image>(json);
        let got = got
            .map(|image| image.media_type())
            .map_err(|e| e.to_string());
        assert_eq!(
            got.as_ref().map_err(String::as_str).copied(),
            expected,
            "{json}"
        );
    }
}
