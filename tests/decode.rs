//! Decoding facts the vectors file cannot carry: invalid UTF-8, extreme
//! nesting, and where a syntax error is reported.

use serve_command::v1::{Command, LineError, ParseError, SyntaxError};

#[track_caller]
fn syntax(line: &[u8]) -> SyntaxError {
    match Command::from_slice(line) {
        Err(LineError::Syntax(e)) => e,
        other => panic!(
            "expected a syntax error for {:?}, got {other:?}",
            String::from_utf8_lossy(line)
        ),
    }
}

#[test]
fn syntax_errors_say_what_and_where() {
    let table: &[(&[u8], &str)] = &[
        (b"", "unexpected end of line at byte 0"),
        (b"   ", "unexpected end of line at byte 3"),
        (b"{", "unexpected end of line at byte 1"),
        (b"{\"command\"", "unexpected end of line at byte 10"),
        (
            b"{\"command\":\"cancel\"",
            "unexpected end of line at byte 19",
        ),
        (b"{\"command\" \"cancel\"}", "expected ':' at byte 11"),
        (
            b"{\"command\":\"cancel\",}",
            "expected a string key at byte 20",
        ),
        (
            b"{\"command\":\"cancel\"} x",
            "trailing characters after the JSON value at byte 21",
        ),
        (
            b"{\"command\":\"cancel\"}{}",
            "trailing characters after the JSON value at byte 20",
        ),
        (
            b"\xef\xbb\xbf{\"command\":\"cancel\"}",
            "expected a JSON value at byte 0",
        ),
        (b"{'command':'cancel'}", "expected a string key at byte 1"),
        (
            b"{\"command\":\"cancel\" // c\n}",
            "expected ',' or '}' at byte 20",
        ),
        (
            b"{\"text\":\"a\x01b\",\"command\":\"cancel\"}",
            "control character in a string (escape it) at byte 10",
        ),
        (
            b"{\"text\":\"a\tb\"}",
            "control character in a string (escape it) at byte 10",
        ),
        (b"{\"text\":\"\\x\"}", "invalid escape at byte 9"),
        (b"{\"text\":\"\\u12\"}", "invalid escape at byte 9"),
        (
            b"{\"text\":\"\\ud800\"}",
            "lone UTF-16 surrogate escape (cannot be held by a Rust String) at byte 9",
        ),
        (
            b"{\"text\":\"\\udc00\\ud800\"}",
            "lone UTF-16 surrogate escape (cannot be held by a Rust String) at byte 9",
        ),
        (
            b"{\"text\":\"\\ud83d\\u0041\"}",
            "lone UTF-16 surrogate escape (cannot be held by a Rust String) at byte 9",
        ),
        (b"{\"text\":\"abc", "unterminated string at byte 8"),
        (b"{\"n\":01}", "expected ',' or '}' at byte 6"),
        (b"{\"n\":1.}", "invalid number at byte 7"),
        (b"{\"n\":.5}", "expected a JSON value at byte 5"),
        (b"{\"n\":+1}", "expected a JSON value at byte 5"),
        (b"{\"n\":1e}", "invalid number at byte 7"),
        (b"{\"n\":-}", "invalid number at byte 6"),
        (b"{\"n\":NaN}", "expected a JSON value at byte 5"),
        (b"{\"n\":tru}", "expected a JSON value at byte 5"),
        (b"{\"n\":[1,]}", "expected a JSON value at byte 8"),
        (b"{\"n\":[1}", "expected ',' or ']' at byte 7"),
        (b"{\"n\":{\"a\":1]}", "expected ',' or '}' at byte 11"),
        (b"{\"n\":{1:2}}", "expected a string key at byte 6"),
        (b"{\"text\":\"caf\xc3\"}", "invalid UTF-8 at byte 12"),
        (b"{\"text\":\"\xff\"}", "invalid UTF-8 at byte 9"),
        (b"\xff", "invalid UTF-8 at byte 0"),
    ];
    for &(line, expected) in table {
        let e = syntax(line);
        assert_eq!(
            e.to_string(),
            expected,
            "{:?}",
            String::from_utf8_lossy(line)
        );
        assert_eq!(LineError::Syntax(e.clone()).to_string(), expected);
        assert!(expected.ends_with(&format!(" at byte {}", e.offset())));
        assert!(expected.starts_with(e.reason()));
    }
}

/// `[[[...]]]` around `inner`, `depth` brackets deep.
fn nested(depth: usize, inner: &str) -> String {
    "[".repeat(depth) + inner + &"]".repeat(depth)
}

#[test]
fn nesting_up_to_1024_levels_is_json() {
    // The command object is level 1; its field's arrays are levels 2..=1024.
    let ok = format!("{{\"command\":\"cancel\",\"x\":{}}}", nested(1023, ""));
    assert_eq!(Command::from_slice(ok.as_bytes()), Ok(Command::Cancel));
    let too_deep = format!("{{\"command\":\"cancel\",\"x\":{}}}", nested(1024, ""));
    assert_eq!(
        syntax(too_deep.as_bytes()).to_string(),
        "nested deeper than 1024 levels at byte 1047"
    );
    // Objects count too, and so does a top-level array.
    let objects = "{\"a\":".repeat(1024) + "1" + &"}".repeat(1024);
    assert_eq!(
        Command::from_slice(objects.as_bytes()),
        Err(ParseError::ExpectedCommand.into())
    );
    let objects = "{\"a\":".repeat(1025) + "1" + &"}".repeat(1025);
    assert_eq!(
        syntax(objects.as_bytes()).reason(),
        "nested deeper than 1024 levels"
    );
    assert_eq!(
        Command::from_slice(nested(1024, "").as_bytes()),
        Err(ParseError::ExpectedCommand.into())
    );
    assert_eq!(syntax(nested(1025, "").as_bytes()).offset(), 1024);
}

#[test]
fn a_million_levels_do_not_overflow_the_stack() {
    let line = format!(
        "{{\"command\":\"cancel\",\"x\":{}}}",
        nested(1_000_000, "0")
    );
    assert_eq!(
        syntax(line.as_bytes()).reason(),
        "nested deeper than 1024 levels"
    );
    let unclosed = "[".repeat(1_000_000);
    assert_eq!(syntax(unclosed.as_bytes()).offset(), 1024);
    let objects = "{\"a\":".repeat(1_000_000);
    assert_eq!(
        syntax(objects.as_bytes()).reason(),
        "nested deeper than 1024 levels"
    );
}

#[test]
fn numbers_of_any_magnitude_are_json() {
    let table = [
        ("1e400", Err(ParseError::ExpectedCommand)),
        ("-1e400", Err(ParseError::ExpectedCommand)),
        (
            "123456789012345678901234567890",
            Err(ParseError::ExpectedCommand),
        ),
        (
            r#"{"command":"prompt","text":1e400}"#,
            Err(ParseError::ExpectedText),
        ),
        (
            r#"{"command":"cancel","n":-1.5E-400,"m":[0,-0,0.0e+0,1E999999999999]}"#,
            Ok(Command::Cancel),
        ),
    ];
    for (line, expected) in table {
        assert_eq!(
            Command::from_slice(line.as_bytes()),
            expected.map_err(LineError::from),
            "{line}"
        );
    }
}

#[test]
fn a_trailing_lf_or_crlf_is_part_of_the_line() {
    for line in [
        "{\"command\":\"cancel\"}\n",
        "{\"command\":\"cancel\"}\r\n",
        "{\"command\":\"cancel\"}\r",
        " \t{\"command\":\"cancel\"} \r\n",
    ] {
        assert_eq!(
            Command::from_slice(line.as_bytes()),
            Ok(Command::Cancel),
            "{line:?}"
        );
    }
}

#[test]
fn escaped_strings_are_unescaped_once_decoded() {
    let table = [
        (
            r#"{"command":"prompt","text":"a\"b\\c\/d\b\f\n\r\t"}"#,
            "a\"b\\c/d\u{8}\u{c}\n\r\t",
        ),
        (
            r#"{"command":"prompt","text":"\u0000\u001F\u00e9\u65E5\ud83d\ude00"}"#,
            "\u{0}\u{1f}é日😀",
        ),
        (r#"{"command":"prompt","text":"\uD83D\uDE00!"}"#, "😀!"),
        (
            r#"{"command":"prompt","text":"é日本😀 raw"}"#,
            "é日本😀 raw",
        ),
    ];
    for (line, text) in table {
        assert_eq!(
            Command::from_slice(line.as_bytes()),
            Ok(Command::Prompt {
                text: text.into(),
                submission_id: None
            }),
            "{line}"
        );
    }
}

#[test]
fn errors_carry_the_text_verbatim() {
    let table = [
        (
            r#"{"command":"a\nb"}"#,
            ParseError::UnknownCommand("a\nb".into()),
            "unknown command: a\nb",
        ),
        (
            r#"{"command":""}"#,
            ParseError::UnknownCommand(String::new()),
            "unknown command: ",
        ),
        (
            r#"{"command":"steer","text":"t","kind":"\u004eotice"}"#,
            ParseError::UnknownSteerKind("Notice".into()),
            "unknown steer kind: Notice",
        ),
    ];
    for (line, error, message) in table {
        let got = Command::from_slice(line.as_bytes()).unwrap_err();
        assert_eq!(got, LineError::Parse(error.clone()), "{line}");
        assert_eq!(got.to_string(), message);
        assert_eq!(error.to_string(), message);
    }
}

#[test]
fn event_lines_are_ready_to_write() {
    let table: &[(&[u8], &str)] = &[
        (
            br#"{"command":"nap"}"#,
            r#"{"event":"command_error","error":"unknown command: nap"}"#,
        ),
        (
            br#"{"command":"a\"\n"}"#,
            r#"{"event":"command_error","error":"unknown command: a\"\n"}"#,
        ),
        (
            b"[]",
            r#"{"event":"command_error","error":"expected a {\"command\": ...} object"}"#,
        ),
        (
            b"{",
            r#"{"event":"command_error","error":"command stream: unexpected end of line at byte 1"}"#,
        ),
    ];
    for &(line, event) in table {
        let err = Command::from_slice(line).unwrap_err();
        assert_eq!(err.event_line(), format!("{event}\n"));
    }
}

#[test]
fn errors_are_send_sync_and_read_well() {
    fn send_sync<T: Send + Sync + std::error::Error>() {}
    send_sync::<LineError>();
    send_sync::<ParseError>();
    send_sync::<SyntaxError>();
    let e = Command::from_slice(b"{").unwrap_err();
    assert_eq!(
        format!("{e:?}"),
        "Syntax(SyntaxError(\"unexpected end of line\" at byte 1))"
    );
    let e = Command::from_slice(b"{\"command\":\"approval\",\"id\":\"x\"}").unwrap_err();
    assert_eq!(format!("{e:?}"), "Parse(ExpectedAllow)");
}

/// A line whose prompt text is the raw JSON string body `raw`.
fn prompt_line(raw: &[u8]) -> Vec<u8> {
    let mut line = br#"{"command":"prompt","text":""#.to_vec();
    line.extend_from_slice(raw);
    line.extend_from_slice(br#""}"#);
    line
}

/// The prompt of text `raw` is refused at its first byte 0xff.
#[track_caller]
fn refused_at_first_invalid_byte(raw: &[u8], case: &str) {
    let line = prompt_line(raw);
    let byte = line.iter().position(|&b| b == 0xff).unwrap();
    assert_eq!(
        syntax(&line).to_string(),
        format!("invalid UTF-8 at byte {byte}"),
        "{case}"
    );
}

/// Escapes at the same offset of two or four of a 64-byte block's four
/// 16-byte parts, and nowhere else: the block-wise tests for "any
/// backslash" must see each of them (flags of one lane in two parts must
/// not cancel out).
#[test]
fn escapes_in_the_same_lane_of_a_block_are_all_unescaped() {
    for k in 0..16 {
        for offsets in [
            vec![k, k + 16],
            vec![k, k + 32],
            vec![k + 16, k + 48],
            vec![k, k + 16, k + 32, k + 48],
        ] {
            let mut raw = vec![b'a'; 96];
            let mut text = raw.clone();
            for &at in offsets.iter().rev() {
                raw[at] = b'\\';
                raw[at + 1] = b'n';
                text.splice(at..at + 2, [b'\n']);
            }
            assert_eq!(
                Command::from_slice(&prompt_line(&raw)),
                Ok(Command::Prompt {
                    text: String::from_utf8(text).unwrap(),
                    submission_id: None
                }),
                "{offsets:?}"
            );
        }
    }
}

/// A string dense with escapes, then one far apart, then plain text with
/// one invalid byte at any offset of its blocks: the block-wise scan of
/// a dense string must still see the byte above 0x7f, and refuse it.
#[test]
fn invalid_utf8_after_dense_escapes_is_refused_where_it_is() {
    let mut head = b"\\n".repeat(40);
    head.extend_from_slice(&[b'a'; 60]);
    head.extend_from_slice(b"\\t");
    for at in 0..130 {
        // One invalid byte, and two in the same lane of two 16-byte parts
        // (their high bits must not cancel out).
        for gap in [None, Some(16)] {
            let mut raw = head.clone();
            let mut tail = vec![b'b'; 146];
            tail[at] = 0xff;
            if let Some(gap) = gap {
                tail[at + gap] = 0xff;
            }
            raw.extend_from_slice(&tail);
            refused_at_first_invalid_byte(&raw, &format!("at {at}, gap {gap:?}"));
        }
        // The same bytes, valid: `é` for the invalid byte.
        let mut tail = vec![b'b'; 130];
        tail.splice(at..at + 1, "é".bytes());
        let mut raw = head.clone();
        raw.extend_from_slice(&tail);
        let text = "\n".repeat(40) + &"a".repeat(60) + "\t" + std::str::from_utf8(&tail).unwrap();
        assert_eq!(
            Command::from_slice(&prompt_line(&raw)),
            Ok(Command::Prompt {
                text,
                submission_id: None
            }),
            "at {at}"
        );
    }
}

/// Invalid bytes among escapes close together, where each block's masks
/// are built (not only tested for any stop): the byte above 0x7f is still
/// seen, alone or with another in the same lane of the next 16 bytes.
#[test]
fn invalid_utf8_among_dense_escapes_is_refused_where_it_is() {
    for at in 30..110 {
        for second in [None, Some(16)] {
            // Offsets of the string where an invalid byte goes, before
            // the escape that would start there.
            let mut wanted: Vec<usize> = [Some(at), second.map(|gap| at + gap)]
                .into_iter()
                .flatten()
                .collect();
            let mut raw = Vec::new();
            for k in 0..120 {
                if wanted.first().is_some_and(|&w| raw.len() >= w) {
                    raw.push(0xff);
                    wanted.remove(0);
                }
                raw.extend_from_slice(if k % 3 == 0 { b"\\t" } else { b"\\n" });
            }
            refused_at_first_invalid_byte(&raw, &format!("at {at}, second {second:?}"));
        }
    }
}

/// A dense string whose every block past the first holds an invalid byte,
/// and whose last few bytes are ASCII: refused, however its blocks fall.
#[test]
fn invalid_utf8_in_every_dense_block_is_refused() {
    for len in 64..192 {
        for tail in [0, 7, 31, 63] {
            let mut raw = b"\\n".repeat(32);
            for k in 0..len {
                // (The first invalid byte well past where the scan before
                // the blocks reads.)
                raw.extend_from_slice(match (k + 8) % 16 {
                    0 => b"\xff",
                    k if k % 2 == 0 => b"\\t",
                    _ => b"a",
                });
            }
            raw.extend_from_slice(&b"\\n".repeat(tail / 2));
            refused_at_first_invalid_byte(&raw, &format!("len {len}, tail {tail}"));
        }
    }
}

/// Long strings holding non-ASCII and escapes of every kind, written in
/// every spelling JSON allows (`\u` of one to four UTF-8 bytes, surrogate
/// pairs, `\/`), with runs between them of 0 to 11 characters and now and
/// then a long one: every piece must come out once and in order wherever the
/// unescaper's buffer happens to fill (at any byte of any piece, as the
/// 600-odd strings' lengths shift the pieces against it).
#[test]
fn long_strings_with_escapes_and_non_ascii_unescape_whole() {
    // (raw, text)
    const PIECES: &[(&str, &str)] = &[
        (r"\n", "\n"),
        (r#"\""#, "\""),
        (r"\\", "\\"),
        (r"\/", "/"),
        (r"\t", "\t"),
        (r"\b\f\r", "\u{8}\u{c}\r"),
        (r"\u0001", "\u{1}"),
        (r"\u00e9", "é"),
        (r"\u65E5", "日"),
        (r"\ud83d\ude00", "😀"),
        ("é", "é"),
        ("日本", "日本"),
        ("😀", "😀"),
        ("x", "x"),
    ];
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut below = |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    for case in 0..600 {
        let (mut raw, mut text) = (String::new(), String::new());
        let target = 512 + case * 17;
        while raw.len() < target {
            // Mostly short runs, so that the escapes are dense; now and
            // then one longer than a fixed copy.
            let run = match below(16) {
                0 => 9 + below(100),
                _ => below(12),
            };
            for _ in 0..run {
                let c = ['a', 'é', '日', '😀'][below(4)];
                raw.push(c);
                text.push(c);
            }
            let (r, t) = PIECES[below(PIECES.len())];
            raw.push_str(r);
            text.push_str(t);
        }
        assert_eq!(
            Command::from_slice(&prompt_line(raw.as_bytes())),
            Ok(Command::Prompt {
                text,
                submission_id: None
            }),
            "case {case}"
        );
    }
}
