//! The exact bytes of every line the encoder writes.

use serve_command::v1::{Command, SteerKind};

fn prompt(text: &str, id: Option<&str>) -> Command {
    Command::Prompt {
        text: text.into(),
        submission_id: id.map(Into::into),
    }
}

/// One command, its exact wire line, through every encoder.
#[track_caller]
fn check(cmd: Command, line: &str) {
    assert_eq!(cmd.to_line(), line, "to_line");
    let mut written = Vec::new();
    cmd.write_line(&mut written).unwrap();
    assert_eq!(String::from_utf8(written).unwrap(), line, "write_line");
    let serialized = serde_json::to_string(&cmd).unwrap();
    assert_eq!(serialized + "\n", line, "Serialize");
    let value: serde_json::Value = serde_json::from_str(line).unwrap();
    assert_eq!(cmd.to_json(), value, "to_json");
}

#[test]
fn every_variant_has_one_line() {
    let table = [
        (
            prompt("fix it", None),
            r#"{"command":"prompt","text":"fix it"}"#,
        ),
        (
            prompt("fix it", Some("s-1")),
            r#"{"command":"prompt","text":"fix it","submission_id":"s-1"}"#,
        ),
        (
            prompt("", Some("")),
            r#"{"command":"prompt","text":"","submission_id":""}"#,
        ),
        (
            Command::Steer {
                kind: SteerKind::Prompt,
                text: "look".into(),
            },
            r#"{"command":"steer","kind":"prompt","text":"look"}"#,
        ),
        (
            Command::Steer {
                kind: SteerKind::Command,
                text: "/diff".into(),
            },
            r#"{"command":"steer","kind":"command","text":"/diff"}"#,
        ),
        (Command::Compact, r#"{"command":"compact"}"#),
        (Command::Cancel, r#"{"command":"cancel"}"#),
        (
            Command::GoalSet {
                text: "ship".into(),
                auto: false,
            },
            r#"{"command":"goal","action":"set","text":"ship"}"#,
        ),
        (
            Command::GoalSet {
                text: "ship".into(),
                auto: true,
            },
            r#"{"command":"goal","action":"set","text":"ship","auto":true}"#,
        ),
        (
            Command::GoalSet {
                text: "  ".into(),
                auto: false,
            },
            r#"{"command":"goal","action":"set","text":"  "}"#,
        ),
        (Command::GoalClear, r#"{"command":"goal","action":"clear"}"#),
        (
            Command::ApprovalDecision {
                id: "a1".into(),
                allow: true,
            },
            r#"{"command":"approval","id":"a1","allow":true}"#,
        ),
        (
            Command::ApprovalDecision {
                id: "a1".into(),
                allow: false,
            },
            r#"{"command":"approval","id":"a1","allow":false}"#,
        ),
    ];
    for (cmd, line) in table {
        check(cmd, &format!("{line}\n"));
    }
}

#[test]
fn strings_are_escaped_as_the_reference_writes_them() {
    let table = [
        ("\"", r#""\"""#),
        ("\\", r#""\\""#),
        ("\n", r#""\n""#),
        ("\r", r#""\r""#),
        ("\t", r#""\t""#),
        ("\u{8}", r#""\b""#),
        ("\u{c}", r#""\f""#),
        ("\u{0}", r#""\u0000""#),
        ("\u{1}", r#""\u0001""#),
        ("\u{b}", r#""\u000b""#),
        ("\u{1f}", r#""\u001f""#),
        // Everything else is written raw.
        (" ", r#"" ""#),
        ("/", r#""/""#),
        ("\u{7f}", "\"\u{7f}\""),
        ("\u{2028}\u{2029}", "\"\u{2028}\u{2029}\""),
        ("é日本😀", "\"é日本😀\""),
        ("\u{feff}\u{ffff}", "\"\u{feff}\u{ffff}\""),
        ("a\"b\\c\nd", r#""a\"b\\c\nd""#),
        // Runs longer than the SWAR word, with specials at either end.
        ("0123456789abcdef\n", r#""0123456789abcdef\n""#),
        ("\n0123456789abcdef", r#""\n0123456789abcdef""#),
    ];
    for (text, json) in table {
        check(
            prompt(text, None),
            &format!("{{\"command\":\"prompt\",\"text\":{json}}}\n"),
        );
    }
}

#[test]
fn long_lines_are_written_whole() {
    // Longer than write_line's stack buffer, with escapes on both sides of its edge.
    let text: String = "ab\"".repeat(400) + &"x".repeat(5000);
    let json = serde_json::to_string(&text).unwrap();
    check(
        Command::GoalSet { text, auto: true },
        &format!("{{\"command\":\"goal\",\"action\":\"set\",\"text\":{json},\"auto\":true}}\n"),
    );
}

#[test]
fn write_line_sends_a_short_line_in_one_write() {
    struct Writes(Vec<Vec<u8>>);
    impl std::io::Write for Writes {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.push(buf.to_vec());
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut out = Writes(Vec::new());
    prompt("fix it", Some("s-1")).write_line(&mut out).unwrap();
    assert_eq!(
        out.0,
        [b"{\"command\":\"prompt\",\"text\":\"fix it\",\"submission_id\":\"s-1\"}\n".to_vec()]
    );
}

#[test]
fn write_line_reports_the_writer_error() {
    struct Broken;
    impl std::io::Write for Broken {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::new(
                std::io::ErrorKind::BrokenPipe,
                "engine gone",
            ))
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let err = Command::Cancel.write_line(Broken).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::BrokenPipe);
    assert_eq!(err.to_string(), "engine gone");
}

#[test]
fn steer_kind_spells_the_wire_names() {
    assert_eq!(SteerKind::Prompt.as_str(), "prompt");
    assert_eq!(SteerKind::Command.as_str(), "command");
}

/// `to_line` and `write_line` (through its buffers), not the serde paths:
/// the check of the many lines below.
#[track_caller]
fn check_writers(cmd: &Command, line: &str) {
    assert_eq!(cmd.to_line(), line, "to_line");
    let mut written = Vec::new();
    cmd.write_line(&mut written).unwrap();
    assert!(written == line.as_bytes(), "write_line: {line}");
}

/// A JSON string as the reference writes it, a character at a time: the
/// model the encoder's block and word steps are checked against.
fn model_escape(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if c < ' ' => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// One character to escape (or a non-ASCII one) at every offset of plain
/// text of every length around the encoder's 8-byte words and 64-byte
/// blocks, and around the ends of its 512-byte and 8 KiB buffers; and runs
/// of escapes across those ends.
#[test]
fn escapes_at_every_offset_of_words_blocks_and_buffers() {
    // The short buffer ends at byte 512 of the line, the long one at 8192:
    // after the key, text bytes 484 and 8164.
    let lengths = (0..=140).chain(470..=530).chain(8156..=8176).chain([8250]);
    for len in lengths {
        let offsets: Vec<usize> = if len <= 140 {
            (0..len).collect()
        } else {
            (0..8).chain(len.saturating_sub(80)..len).collect()
        };
        for &c in &['"', '\\', '\u{1}', 'é'] {
            for &at in &offsets {
                let mut text = "a".repeat(len - 1);
                text.insert(at.min(text.len()), c);
                check_writers(
                    &prompt(&text, None),
                    &format!(
                        "{{\"command\":\"prompt\",\"text\":\"{}\"}}\n",
                        model_escape(&text)
                    ),
                );
            }
        }
        for fill in ["\"", "\u{0}", "x\n", "日\t"] {
            let text = fill.repeat(len / fill.len());
            check_writers(
                &prompt(&text, Some(&text)),
                &format!(
                    "{{\"command\":\"prompt\",\"text\":\"{0}\",\"submission_id\":\"{0}\"}}\n",
                    model_escape(&text)
                ),
            );
        }
    }
}

/// Plain runs long enough to go from the string straight to the writer
/// once the 8 KiB buffer is full: an escape at offsets around where it
/// fills, where a run would be just long enough, and near the end; and
/// runs of every length around 8 KiB between escapes.
#[test]
fn long_plain_runs_between_escapes() {
    for len in [16_380, 16_421, 24_576, 40_000] {
        let offsets = (8_100..8_300)
            .step_by(7)
            .chain((16_300..16_420).step_by(5))
            .chain(len - 200..len)
            .filter(|&at| at < len);
        for at in offsets {
            let mut text = "a".repeat(len - 1);
            text.insert(at, '\n');
            check_writers(
                &prompt(&text, None),
                &format!(
                    "{{\"command\":\"prompt\",\"text\":\"{}\"}}\n",
                    model_escape(&text)
                ),
            );
        }
    }
    for run in (8_120..8_260).step_by(3) {
        let text = ["a".repeat(run), "b".repeat(run + 64), "c".repeat(run)].join("\"");
        check_writers(
            &prompt(&text, None),
            &format!(
                "{{\"command\":\"prompt\",\"text\":\"{}\"}}\n",
                model_escape(&text)
            ),
        );
    }
}

/// Every ASCII character and some others inside a plain run long enough to
/// go from the string straight to the writer, where that run is tested 256
/// bytes at a time: the characters at either edge of what is escaped
/// (U+001F and space, `!` `"` `#`, `[` `\` `]`, DEL) at each of 256
/// consecutive offsets, so at every place in a 256-byte stretch; every
/// character at offsets spread over one.
#[test]
fn every_character_anywhere_in_a_long_plain_run() {
    let edges = [
        '\u{0}', '\u{1f}', ' ', '!', '"', '#', '[', '\\', ']', '\u{7f}', 'é',
    ];
    let every = (0u8..0x80)
        .map(char::from)
        .chain(['é', '日', '😀', '\u{2028}']);
    let cases = edges
        .iter()
        .flat_map(|&c| (16_400..16_656).map(move |at| (c, at)))
        .chain(every.flat_map(|c| (16_400..16_656).step_by(17).map(move |at| (c, at))));
    for (c, at) in cases {
        let (head, tail) = ("a".repeat(at), "b".repeat(300));
        let text = format!("{head}{c}{tail}");
        let line = format!(
            "{{\"command\":\"prompt\",\"text\":\"{head}{}{tail}\"}}\n",
            model_escape(&c.to_string())
        );
        let mut written = Vec::new();
        prompt(&text, None).write_line(&mut written).unwrap();
        assert!(written == line.as_bytes(), "{c:?} at {at}");
    }
}
