//! How often the codec allocates: decoding allocates exactly the `String`s
//! the result owns (none for `compact`, `cancel` and goal `clear`, two for a
//! tagged prompt), whatever else the line holds; `write_line` into a `Vec`
//! with room allocates nothing, and `to_line` allocates once.

use serve_command::v1::{Command, LineError, SteerKind};

#[path = "support/counting.rs"]
mod counting;

/// `f`'s result, and how many times it allocated on this thread.
fn allocations<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let measured = counting::allocations(f);
    (measured.out, measured.count)
}

fn prompt(text: &str, id: Option<&str>) -> Command {
    Command::Prompt {
        text: text.into(),
        submission_id: id.map(Into::into),
    }
}

fn steer(kind: SteerKind, text: &str) -> Command {
    Command::Steer {
        kind,
        text: text.into(),
    }
}

fn goal(text: &str, auto: bool) -> Command {
    Command::GoalSet {
        text: text.into(),
        auto,
    }
}

fn approval(id: &str, allow: bool) -> Command {
    Command::ApprovalDecision {
        id: id.into(),
        allow,
    }
}

/// Unknown fields of every kind: nested arrays and objects, numbers,
/// literals, escaped strings (with an escaped quote, newline, non-ASCII and
/// a surrogate pair).
const NOISE: &str = r#""v":1,"meta":{"client":"tui","tags":["a","b\"c",{"x":[1,-2.5e3,null,true,false]}],"note":"say \"hi\"\n\t\u00e9\ud83d\ude00 日本"},"trace":[[1,[2,[3,[]]]],{"k":{"k":{}}},"\\path\\to"],"at":1733000000.25"#;

#[test]
fn decoding_allocates_exactly_the_strings_the_command_owns() {
    use SteerKind::{Command as Slash, Prompt as Plain};
    let noisy = |fields: &str| format!("{{{NOISE},{fields},\"z\":{{\"deep\":[[[{{}}]]]}}}}");
    // (line, the command it decodes to, allocations)
    let mut cases: Vec<(String, Command, usize)> = vec![
        // Canonical lines, as `to_line` writes them.
        (r#"{"command":"compact"}"#.into(), Command::Compact, 0),
        (r#"{"command":"cancel"}"#.into(), Command::Cancel, 0),
        (r#"{"command":"goal","action":"clear"}"#.into(), Command::GoalClear, 0),
        (r#"{"command":"prompt","text":"fix the build"}"#.into(), prompt("fix the build", None), 1),
        (
            r#"{"command":"prompt","text":"fix the build","submission_id":"s-1"}"#.into(),
            prompt("fix the build", Some("s-1")),
            2,
        ),
        (r#"{"command":"steer","kind":"prompt","text":"look"}"#.into(), steer(Plain, "look"), 1),
        (r#"{"command":"steer","kind":"command","text":"/diff"}"#.into(), steer(Slash, "/diff"), 1),
        (r#"{"command":"steer","text":"look"}"#.into(), steer(Plain, "look"), 1),
        (r#"{"command":"goal","action":"set","text":"ship it"}"#.into(), goal("ship it", false), 1),
        (
            r#"{"command":"goal","action":"set","text":"ship it","auto":true}"#.into(),
            goal("ship it", true),
            1,
        ),
        (r#"{"command":"approval","id":"call_1","allow":true}"#.into(), approval("call_1", true), 1),
        (r#"{"command":"approval","id":"call_1","allow":false}"#.into(), approval("call_1", false), 1),
        // Noisy lines: the same commands among unknown fields.
        (noisy(r#""command":"compact""#), Command::Compact, 0),
        (noisy(r#""command":"cancel""#), Command::Cancel, 0),
        (noisy(r#""action":"clear","command":"goal""#), Command::GoalClear, 0),
        (noisy(r#""command":"prompt","text":"fix""#), prompt("fix", None), 1),
        (noisy(r#""submission_id":"s-1","command":"prompt","text":"fix""#), prompt("fix", Some("s-1")), 2),
        (noisy(r#""command":"steer","kind":"command","text":"/diff""#), steer(Slash, "/diff"), 1),
        (noisy(r#""text":"go","command":"goal","auto":true,"action":"set""#), goal("go", true), 1),
        (noisy(r#""allow":false,"command":"approval","id":"a1""#), approval("a1", false), 1),
        // Whitespace everywhere JSON allows it.
        (
            " { \"command\" : \"prompt\" ,\t\"text\" : \"x\" , \"submission_id\" : \"s\" }\r\n".into(),
            prompt("x", Some("s")),
            2,
        ),
        // Known fields the command does not take cost nothing, nor do
        // duplicates (the last one wins).
        (r#"{"command":"compact","text":"unused","id":"unused","kind":"x"}"#.into(), Command::Compact, 0),
        (r#"{"command":"prompt","text":"first","text":"last"}"#.into(), prompt("last", None), 1),
        (r#"{"command":"cancel","command":"compact"}"#.into(), Command::Compact, 0),
        // Escaped keys and values are compared without being built.
        (r#"{"comm\u0061nd":"c\u0061ncel"}"#.into(), Command::Cancel, 0),
        (r#"{"command":"g\u006fal","\u0061ction":"cle\u0061r"}"#.into(), Command::GoalClear, 0),
        (r#"{"\u0063ommand":"steer","kind":"c\u006fmmand","text":"x"}"#.into(), steer(Slash, "x"), 1),
        (
            r#"{"command":"approval","\u0069d":"a\/1","allow":true}"#.into(),
            approval("a/1", true),
            1,
        ),
        // Escaped and non-ASCII text: still one allocation per string.
        (
            r#"{"command":"prompt","text":"line\none\t\"q\" \\ \u00e9\ud83d\ude00 日本 é","submission_id":"\u0073-1"}"#.into(),
            prompt("line\none\t\"q\" \\ é😀 日本 é", Some("s-1")),
            2,
        ),
        (r#"{"command":"steer","text":"\u0001\b\f\r\/"}"#.into(), steer(Plain, "\u{1}\u{8}\u{c}\r/"), 1),
    ];
    // Long strings: one allocation however long, escaped or not.
    let long_ascii = "plain words ".repeat(20_000);
    let long_escaped = "\"q\"\n\t\\ é日本😀 \u{1}".repeat(20_000);
    for text in [&long_ascii, &long_escaped] {
        let cmd = prompt(text, Some("s-big"));
        cases.push((cmd.to_line(), cmd, 2));
        let cmd = goal(text, false);
        cases.push((cmd.to_line(), cmd, 1));
    }

    for (line, expected, want) in cases {
        let (got, n) = allocations(|| Command::from_slice(line.as_bytes()));
        assert_eq!(got.as_ref(), Ok(&expected), "{line}");
        assert_eq!(n, want, "allocations decoding {line}");
    }
}

#[test]
fn errors_allocate_only_the_string_they_hold() {
    // (line, the error's wire string, whether it is a syntax error, allocations)
    let cases = [
        // Not JSON: a `SyntaxError` holds no string.
        (
            r#"{"command":"#,
            "unexpected end of line at byte 11",
            true,
            0,
        ),
        (
            r#"{"command":"cancel"} x"#,
            "trailing characters after the JSON value at byte 21",
            true,
            0,
        ),
        (
            r#"{"text":"\u00e9\x"}"#,
            "invalid escape at byte 15",
            true,
            0,
        ),
        // JSON but not a command: `ParseError`s own what they quote.
        (
            r#"[1,{"command":"cancel"}]"#,
            "expected a {\"command\": ...} object",
            false,
            0,
        ),
        (
            r#"{"command":"prompt","text":1}"#,
            "expected a string \"text\" field",
            false,
            0,
        ),
        (
            r#"{"command":"n\u006fpe","text":"x"}"#,
            "unknown command: nope",
            false,
            1,
        ),
        (
            r#"{"command":"steer","kind":"notice","text":"x"}"#,
            "unknown steer kind: notice",
            false,
            1,
        ),
    ];
    for (line, message, syntax, want) in cases {
        let (got, n) = allocations(|| Command::from_slice(line.as_bytes()));
        let err = got.expect_err(line);
        assert_eq!(err.to_string(), message, "{line}");
        assert_eq!(matches!(err, LineError::Syntax(_)), syntax, "{line}");
        assert_eq!(n, want, "allocations decoding {line}");
    }
}

#[test]
fn the_counter_counts() {
    let (v, n) = allocations(|| {
        let mut v = Vec::with_capacity(1);
        v.extend_from_slice(b"grows past one");
        v
    });
    assert_eq!((v.len(), n), (14, 2));
    assert_eq!(allocations(|| 1 + 1), (2, 0));
}

/// One of every command, with escapes and non-ASCII in every string.
fn commands() -> Vec<Command> {
    let text = "fix \"the\" build\n\tthen é日本😀 \u{1}";
    vec![
        prompt(text, None),
        prompt(text, Some("s-\"1\"")),
        steer(SteerKind::Prompt, text),
        steer(SteerKind::Command, "/compact"),
        Command::Compact,
        Command::Cancel,
        goal(text, false),
        goal(text, true),
        Command::GoalClear,
        approval("call_\n1", true),
        approval("call_2", false),
        prompt(&"long \"line\" ".repeat(500), None),
    ]
}

#[test]
fn write_line_into_a_vec_with_room_allocates_nothing() {
    let mut buf = Vec::with_capacity(1 << 16);
    for cmd in commands() {
        buf.clear();
        let (result, n) = allocations(|| cmd.write_line(&mut buf));
        result.unwrap();
        assert_eq!(n, 0, "allocations writing {cmd:?}");
        assert_eq!(buf, cmd.to_line().as_bytes());
    }
}

#[test]
fn to_line_allocates_once() {
    for cmd in commands() {
        let (line, n) = allocations(|| cmd.to_line());
        assert_eq!(n, 1, "allocations writing {cmd:?}");
        // Allocated at its exact length: no slack, no regrowth.
        assert_eq!(line.capacity(), line.len());
        assert_eq!(Command::from_slice(line.as_bytes()), Ok(cmd));
    }
}

/// `shell::encode` allocates once; `shell::parse` nothing for text that is
/// not an envelope, else exactly the strings and list it returns (a `""`
/// and an empty list allocate nothing).
#[test]
fn the_shell_envelope_allocates_what_it_returns() {
    use serve_command::shell::{encode, parse, ShellOutput};
    let out = |code, text: &str, cut| ShellOutput::new(code, text, cut);
    let runs = [
        ("ls", out(Some(0), "a\nb", false)),
        ("", out(None, "", true)),
        ("x", out(Some(-1), &"é\n".repeat(100), true)),
    ];
    for (command, run) in &runs {
        let (_, n) = allocations(|| encode(command, Ok(run)));
        assert_eq!(n, 1, "encode({command:?}, {run:?})");
    }
    assert_eq!(allocations(|| encode("x", Err("denied"))).1, 1);

    let lines = (0..100)
        .map(|i| format!("line {i}\r"))
        .collect::<Vec<_>>()
        .join("\n");
    let table: Vec<(String, usize)> = vec![
        ("just a prompt".to_owned(), 0),
        ("<user_shell_command>\n<command>\nls\n</command>\n<result>\nok\n</result>\n</user_shell_command>".to_owned(), 0),
        ("<user_shell_command>\n<command>\nls\n</command>\n<result>\nexit=0\n</result>\n</user_shell_command>\n\n".to_owned(), 0),
        // command, exit; no output.
        ("<user_shell_command>\n<command>\nls\n</command>\n<result>\nexit=0\n</result>\n</user_shell_command>".to_owned(), 2),
        // "" and "": nothing; the list and its one line.
        ("<user_shell_command>\n<command>\n</command>\n<result>\nexit=\nx\n</result>\n</user_shell_command>".to_owned(), 2),
        // A CRLF command of two lines is still one string.
        (
            format!("<user_shell_command>\r\n<command>\r\na\r\nb\r\n</command>\r\n<result>\r\nexit=0\r\n{lines}\r\n</result>\r\n</user_shell_command>"),
            2 + 1 + 100,
        ),
        (encode("x", Err("a\nb")), 2 + 1 + 2),
    ];
    for (content, want) in &table {
        let (parsed, n) = allocations(|| parse(content));
        assert_eq!(n, *want, "parse({content:?}) = {parsed:?}");
    }
}
