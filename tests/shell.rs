//! `serve_command::shell`: the `<user_shell_command>` envelope, byte for
//! byte upstream's (`protocol/command_context` @ 35042ea4), and the steers
//! that carry it.

#[path = "support/shell_model.rs"]
mod model;

use proptest::prelude::*;
use serde_json::Value;
use serve_command::shell::{encode, parse, ShellCommand, ShellOutput};
use serve_command::v1::{Command, SteerKind};
use serve_command::v2;

fn out(exit_code: Option<i32>, text: &str, output_limit_reached: bool) -> ShellOutput {
    ShellOutput::new(exit_code, text, output_limit_reached)
}

fn parsed(command: &str, exit: &str, output: &[&str], output_limit_reached: bool) -> ShellCommand {
    ShellCommand::new(command, exit, output.iter().copied(), output_limit_reached)
}

/// `<user_shell_command>`, `<command>`, `command`, `</command>`,
/// `<result>`, `body`, `</result>`, `</user_shell_command>`.
fn envelope(command: &str, body: &str) -> String {
    format!("<user_shell_command>\n<command>\n{command}\n</command>\n<result>\n{body}\n</result>\n</user_shell_command>")
}

#[track_caller]
fn assert_encodes(command: &str, result: Result<&ShellOutput, &str>, want: &str) {
    let got = encode(command, result);
    assert_eq!(got, want, "encode({command:?}, {result:?})");
    assert_eq!(got.len(), got.capacity(), "one exactly sized allocation");
}

#[track_caller]
fn assert_parses(content: &str, want: Option<ShellCommand>) {
    assert_eq!(parse(content), want, "parse({content:?})");
}

// Upstream's own tests (command_context_test.mbt), one test each.

#[test]
fn upstream_encode_success() {
    assert_encodes(
        "printf %s 'abc'",
        Ok(&out(Some(0), "abc", false)),
        &envelope("printf %s 'abc'", "exit=0\nabc"),
    );
}

#[test]
fn upstream_encode_truncated_cancelled() {
    assert_encodes(
        "printf %s 'abcdef'",
        Ok(&out(None, "abc", true)),
        &envelope(
            "printf %s 'abcdef'",
            "exit=cancelled\ntruncated=true\noutput_limit_reached=true\nshown_chars=3\nmax_output_chars=3\nabc",
        ),
    );
}

#[test]
fn upstream_encode_error() {
    assert_encodes(
        "nope",
        Err("spawn failed"),
        &envelope("nope", "error running shell: spawn failed"),
    );
}

#[test]
fn upstream_parse_round_trips_success() {
    assert_parses(
        &envelope("echo hi", "exit=0\nhi"),
        Some(parsed("echo hi", "0", &["hi"], false)),
    );
}

#[test]
fn upstream_parse_strips_the_truncation_preamble() {
    assert_parses(
        &envelope(
            "printf %s 'abcdef'",
            "exit=cancelled\ntruncated=true\noutput_limit_reached=true\nshown_chars=3\nmax_output_chars=3\nabc",
        ),
        Some(parsed("printf %s 'abcdef'", "cancelled", &["abc"], true)),
    );
}

#[test]
fn upstream_parse_keeps_a_partial_preamble_as_output() {
    assert_parses(
        &envelope("cat config", "exit=0\ntruncated=true\nshown_chars=5"),
        Some(parsed(
            "cat config",
            "0",
            &["truncated=true", "shown_chars=5"],
            false,
        )),
    );
}

#[test]
fn upstream_parse_rejects_a_normal_prompt() {
    assert_parses("just a normal prompt", None);
}

#[test]
fn upstream_parse_reads_crlf() {
    assert_parses(
        "<user_shell_command>\r\n<command>\r\nls\r\n</command>\r\n<result>\r\nexit=0\r\na\r\n</result>\r\n</user_shell_command>\r\n",
        Some(parsed("ls", "0", &["a"], false)),
    );
}

#[test]
fn encode_writes_upstreams_bytes() {
    let table: &[(&str, Result<ShellOutput, &str>, &str)] = &[
        ("true", Ok(out(Some(0), "", false)), "exit=0\n"),
        // No exit code is `cancelled`, cut off or not.
        ("make", Ok(out(None, "", false)), "exit=cancelled\n"),
        ("sleep 9", Ok(out(None, "partial", false)), "exit=cancelled\npartial"),
        ("x", Ok(out(Some(-9), "k", false)), "exit=-9\nk"),
        ("x", Ok(out(Some(i32::MAX), "", false)), "exit=2147483647\n"),
        ("x", Ok(out(Some(i32::MIN), "", false)), "exit=-2147483648\n"),
        (
            "x",
            Ok(out(Some(i32::MIN), "", true)),
            "exit=-2147483648\ntruncated=true\noutput_limit_reached=true\nshown_chars=0\nmax_output_chars=0\n",
        ),
        (
            "cat big",
            Ok(out(Some(1), "日本😀", true)),
            "exit=1\ntruncated=true\noutput_limit_reached=true\nshown_chars=3\nmax_output_chars=3\n日本😀",
        ),
        (
            "x",
            Ok(out(Some(0), "e\u{301}\r\n", true)),
            "exit=0\ntruncated=true\noutput_limit_reached=true\nshown_chars=4\nmax_output_chars=4\ne\u{301}\r\n",
        ),
        // Nothing is escaped.
        ("</command>", Ok(out(Some(0), "</result>", false)), "exit=0\n</result>"),
        ("x", Err(""), "error running shell: "),
        ("x", Err("a\nb"), "error running shell: a\nb"),
    ];
    for (command, result, body) in table {
        assert_encodes(
            command,
            result.as_ref().map_err(|e| *e),
            &envelope(command, body),
        );
    }
    assert_encodes(
        "",
        Ok(&out(Some(0), "", false)),
        "<user_shell_command>\n<command>\n\n</command>\n<result>\nexit=0\n\n</result>\n</user_shell_command>",
    );
    let long = "é".repeat(12345);
    assert_encodes(
        "x",
        Ok(&out(None, &long, true)),
        &envelope(
            "x",
            &format!("exit=cancelled\ntruncated=true\noutput_limit_reached=true\nshown_chars=12345\nmax_output_chars=12345\n{long}"),
        ),
    );
}

#[test]
fn parse_reads_upstreams_structure() {
    let ok = envelope("ls", "exit=0\na");
    let some = Some(parsed("ls", "0", &["a"], false));
    let table: Vec<(String, Option<ShellCommand>)> = vec![
        (ok.clone(), some.clone()),
        (format!("{ok}\n"), some.clone()),
        (format!("{ok}\r"), some.clone()),
        (format!("{ok}\r\r\n\r"), some.clone()),
        (format!("{ok}\n\n"), None),
        (format!("{ok}\n "), None),
        (format!("{ok}\nx"), None),
        (format!(" {ok}"), None),
        (format!("\n{ok}"), None),
        (ok.replace('\n', "\r\n"), some.clone()),
        (ok.replace('\n', "\r\r\n"), some.clone()),
        // A lone CR does not split lines.
        (ok.replace('\n', "\r"), None),
        (ok.replace("</result>\n", ""), None),
        (ok.replace("</command>\n", ""), None),
        (ok.replace("<result>\n", ""), None),
        (ok.replace("<command>\n", ""), None),
        (ok.replace("\n</user_shell_command>", ""), None),
        (String::new(), None),
        ("\n".to_owned(), None),
        ("<user_shell_command>".to_owned(), None),
        ("<user_shell_command>\n<command>".to_owned(), None),
        // No line and an empty line: both are the command "".
        (
            "<user_shell_command>\n<command>\n</command>\n<result>\n</result>\n</user_shell_command>".to_owned(),
            Some(parsed("", "failed", &[], false)),
        ),
        (envelope("", "exit="), Some(parsed("", "", &[], false))),
        (envelope("a\r\nb\r", "exit=0"), Some(parsed("a\nb", "0", &[], false))),
        (envelope("a\rb", "exit=0\rx"), Some(parsed("a\rb", "0\rx", &[], false))),
        // A </command> not followed by <result> is the command's.
        (
            envelope("a\n</command>\nb", "exit=0"),
            Some(parsed("a\n</command>\nb", "0", &[], false)),
        ),
        (envelope("</result>", "exit=0"), Some(parsed("</result>", "0", &[], false))),
        (envelope("ls", "exit=0\n</command>"), Some(parsed("ls", "0", &["</command>"], false))),
        // The end is anchored: a </result> line is output.
        (
            envelope("ls", "exit=0\n</result>\nx"),
            Some(parsed("ls", "0", &["</result>", "x"], false)),
        ),
        (
            envelope("ls", "exit=0\n</user_shell_command>"),
            Some(parsed("ls", "0", &["</user_shell_command>"], false)),
        ),
        (envelope("ls", ""), None),
        (envelope("ls", "ok"), None),
        (envelope("ls", " exit=0"), None),
        (envelope("ls", "exit=99999999999999999999"), Some(parsed("ls", "99999999999999999999", &[], false))),
        (envelope("ls", "exit=0\nexit=1"), Some(parsed("ls", "0", &["exit=1"], false))),
        (
            envelope("ls", "error running shell:x\nexit=0"),
            Some(parsed("ls", "failed", &["error running shell:x", "exit=0"], false)),
        ),
        (
            envelope("ls", "error running shell: a\r\nb\r"),
            Some(parsed("ls", "failed", &["error running shell: a", "b"], false)),
        ),
        (envelope("ls", "error running shell"), None),
        // The truncation preamble: four keys, in order, values unchecked.
        (
            envelope("ls", "exit=0\ntruncated=\noutput_limit_reached=\nshown_chars=\nmax_output_chars=\nz"),
            Some(parsed("ls", "0", &["z"], true)),
        ),
        (
            envelope("ls", "exit=0\ntruncated=true\r\noutput_limit_reached=true\nshown_chars=3\nmax_output_chars=3"),
            Some(parsed("ls", "0", &[], true)),
        ),
        (
            envelope("ls", "exit=0\ntruncated=true\noutput_limit_reached=true\nmax_output_chars=3\nshown_chars=3"),
            Some(parsed(
                "ls",
                "0",
                &["truncated=true", "output_limit_reached=true", "max_output_chars=3", "shown_chars=3"],
                false,
            )),
        ),
        (
            envelope("ls", "exit=0\n truncated=true\noutput_limit_reached=true\nshown_chars=3\nmax_output_chars=3"),
            Some(parsed(
                "ls",
                "0",
                &[" truncated=true", "output_limit_reached=true", "shown_chars=3", "max_output_chars=3"],
                false,
            )),
        ),
        (
            envelope(
                "ls",
                "error running shell: a\ntruncated=true\noutput_limit_reached=true\nshown_chars=1\nmax_output_chars=1",
            ),
            Some(parsed(
                "ls",
                "failed",
                &[
                    "error running shell: a",
                    "truncated=true",
                    "output_limit_reached=true",
                    "shown_chars=1",
                    "max_output_chars=1",
                ],
                false,
            )),
        ),
        (envelope("日本 😀", "exit=0\nü\u{2028}\0"), Some(parsed("日本 😀", "0", &["ü\u{2028}\0"], false))),
        (envelope("\t", "exit=0\n "), Some(parsed("\t", "0", &[" "], false))),
    ];
    for (content, want) in table {
        assert_parses(&content, want);
    }
}

// What upstream's 35042ea4 changed; each of these failed before it.

#[test]
fn encode_writes_a_run_without_an_exit_code_as_cancelled() {
    // It was `exit=0`: a stopped command read back as a success.
    assert_encodes(
        "sleep 9",
        Ok(&out(None, "partial", false)),
        "<user_shell_command>\n<command>\nsleep 9\n</command>\n<result>\nexit=cancelled\npartial\n</result>\n</user_shell_command>",
    );
    assert_parses(
        &encode("sleep 9", Ok(&out(None, "partial", false))),
        Some(parsed("sleep 9", "cancelled", &["partial"], false)),
    );
    // Cut off without one: `cancelled` as before, then the preamble.
    assert_encodes(
        "yes",
        Ok(&out(None, "y\ny", true)),
        &envelope(
            "yes",
            "exit=cancelled\ntruncated=true\noutput_limit_reached=true\nshown_chars=3\nmax_output_chars=3\ny\ny",
        ),
    );
}

#[test]
fn parse_reads_closing_tags_in_the_output_as_output() {
    let table: Vec<(String, Option<ShellCommand>)> = vec![
        (
            envelope("cat x", "exit=0\n</result>"),
            Some(parsed("cat x", "0", &["</result>"], false)),
        ),
        (
            format!("{}\n", envelope("cat x", "exit=0\n</result>\ntail")),
            Some(parsed("cat x", "0", &["</result>", "tail"], false)),
        ),
        (
            envelope("cat y", "exit=0\n</user_shell_command>"),
            Some(parsed("cat y", "0", &["</user_shell_command>"], false)),
        ),
        // Output that closes the envelope, then the real close.
        (
            envelope("cat x", "exit=0\n</result>\n</user_shell_command>"),
            Some(parsed(
                "cat x",
                "0",
                &["</result>", "</user_shell_command>"],
                false,
            )),
        ),
        (
            envelope("ls", "exit=0\n</result>\n</user_shell_command>\n"),
            Some(parsed(
                "ls",
                "0",
                &["</result>", "</user_shell_command>", ""],
                false,
            )),
        ),
        // The pair that ends a command, in the output: output.
        (
            envelope("ls", "exit=0\n</command>\n<result>\nexit=5"),
            Some(parsed(
                "ls",
                "0",
                &["</command>", "<result>", "exit=5"],
                false,
            )),
        ),
    ];
    for (content, want) in table {
        assert_parses(&content, want);
    }
}

#[test]
fn parse_reads_a_whole_envelope_as_output() {
    let inner = envelope("ls", "exit=0");
    assert_parses(
        &envelope("cat env", &format!("exit=0\n{inner}")),
        Some(parsed(
            "cat env",
            "0",
            &[
                "<user_shell_command>",
                "<command>",
                "ls",
                "</command>",
                "<result>",
                "exit=0",
                "</result>",
                "</user_shell_command>",
            ],
            false,
        )),
    );
    // And it round-trips through encode.
    let run = out(Some(0), &inner, false);
    let want = parse(&encode("cat env", Ok(&run)));
    assert_eq!(
        want.map(|p| p.output.join("\n")),
        Some(inner),
        "the inner envelope, line for line"
    );
}

#[test]
fn parse_splits_at_the_first_command_close_followed_by_result_open() {
    let table: Vec<(String, Option<ShellCommand>)> = vec![
        // A </command> line not followed by <result> is the command's.
        (
            envelope("a\n</command>", "exit=0"),
            Some(parsed("a\n</command>", "0", &[], false)),
        ),
        (
            encode("a\n</command>\nb", Ok(&out(Some(0), "out", false))),
            Some(parsed("a\n</command>\nb", "0", &["out"], false)),
        ),
        // The pair in the command splits there: what follows is the
        // result, and here its first line is not `exit=`.
        (envelope("x\n</command>\n<result>\ny", "exit=0"), None),
        (envelope("x\n</command>\n<result>\ny", "exit=0\no"), None),
        // ...unless it is.
        (
            envelope("x\n</command>\n<result>\nexit=1", "exit=0\no"),
            Some(parsed("x", "1", &["</command>", "<result>", "exit=0", "o"], false)),
        ),
        // CRs are trimmed before the pair is looked for.
        (
            "<user_shell_command>\n<command>\nls\n</command>\r\n<result>\r\r\nexit=0\n</result>\r\n</user_shell_command>\r".to_owned(),
            Some(parsed("ls", "0", &[], false)),
        ),
    ];
    for (content, want) in table {
        assert_parses(&content, want);
    }
}

#[test]
fn parse_anchors_the_close_at_the_end() {
    let table: &[(&str, Option<ShellCommand>)] = &[
        // Nothing between the anchored ends.
        ("<user_shell_command>\n<command>\n</result>\n</user_shell_command>", None),
        ("<user_shell_command>\n<command>\n</result>\n</user_shell_command>\n", None),
        // The pair alone: an empty command and an empty result.
        (
            "<user_shell_command>\n<command>\n</command>\n<result>\n</result>\n</user_shell_command>\n",
            Some(ShellCommand::new("", "failed", Vec::<String>::new(), false)),
        ),
        // Junk after the close; one blank line at most.
        ("<user_shell_command>\n<command>\nls\n</command>\n<result>\nexit=0\n</result>\n</user_shell_command>\nx", None),
        ("<user_shell_command>\n<command>\nls\n</command>\n<result>\nexit=0\n</result>\n</user_shell_command>\n\n", None),
        // The close tags swapped.
        ("<user_shell_command>\n<command>\nls\n</command>\n<result>\nexit=0\n</user_shell_command>\n</result>", None),
        // A closing tag before the anchored ones is result text.
        (
            "<user_shell_command>\n<command>\n</command>\n<result>\n</user_shell_command>\n</result>\n</user_shell_command>",
            None,
        ),
    ];
    for (content, want) in table {
        assert_parses(content, want.clone());
    }
}

/// One vector's request: what the crate answers, in oracle-shell's answer
/// form.
fn answer(request: &Value) -> Value {
    let field = |key: &str| request.get(key);
    let text = |key: &str| {
        field(key)
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("{key}: {request}"))
    };
    if let Some(content) = field("parse") {
        return match parse(content.as_str().expect("parse is a string")) {
            None => serde_json::json!(["NONE"]),
            Some(p) => serde_json::json!([
                "PARSED",
                p.command,
                p.exit,
                p.output,
                p.output_limit_reached
            ]),
        };
    }
    let encoded = if field("error").is_some() {
        encode(text("encode"), Err(text("error")))
    } else {
        let output = ShellOutput::new(
            field("exit_code")
                .and_then(Value::as_i64)
                .map(|n| i32::try_from(n).expect("an i32 exit code")),
            text("text"),
            field("output_limit_reached")
                .and_then(Value::as_bool)
                .expect("a bool"),
        );
        encode(text("encode"), Ok(&output))
    };
    serde_json::json!(["ENCODED", encoded])
}

#[test]
fn every_vector_is_answered_as_upstream_does() {
    let mut count = 0;
    for line in include_str!("vectors/shell.jsonl").lines() {
        let v: Value = serde_json::from_str(line).expect("a vector is JSON");
        assert_eq!(answer(&v["request"]), v["answer"], "{}", v["why"]);
        // The model, transcribed from upstream, agrees too.
        if let Some(content) = v["request"]["parse"].as_str() {
            let want =
                parse(content).map(|p| (p.command, p.exit, p.output, p.output_limit_reached));
            assert_eq!(model::parse(content), want, "{}", v["why"]);
        }
        count += 1;
    }
    assert!(count >= 150, "only {count} vectors");
}

#[test]
fn the_steers_carry_the_envelope() {
    let run = out(Some(2), "no rule\r\nstop", false);
    let text = envelope("make", "exit=2\nno rule\r\nstop");
    let back = Some(parsed("make", "2", &["no rule", "stop"], false));

    let v1 = Command::shell_steer("make", Ok(&run));
    assert_eq!(
        v1,
        Command::Steer {
            kind: SteerKind::Command,
            text: text.clone()
        }
    );
    assert_eq!(v1.shell_command(), back);
    let v2 = v2::Command::shell_steer("make", Ok(&run));
    assert_eq!(v2, v2::Command::steer(SteerKind::Command, text.clone()));
    assert_eq!(v2.shell_command(), back);
    // A tag does not matter.
    let tagged = v2::Command::steer_tagged(SteerKind::Command, text.clone(), "s1");
    assert_eq!(tagged.shell_command(), back);

    // Only a command steer holding an envelope is a shell command.
    let not: Vec<Command> = vec![
        Command::Steer {
            kind: SteerKind::Prompt,
            text: text.clone(),
        },
        Command::Steer {
            kind: SteerKind::Command,
            text: "/diff".into(),
        },
        Command::Prompt {
            text: text.clone(),
            submission_id: None,
        },
        Command::Cancel,
    ];
    for cmd in not {
        assert_eq!(cmd.shell_command(), None, "{cmd:?}");
    }
    let not_v2: Vec<v2::Command> = vec![
        v2::Command::steer(SteerKind::Prompt, text.clone()),
        v2::Command::steer(SteerKind::Command, v2::Content::default()),
        v2::Command::steer(
            SteerKind::Command,
            vec![v2::ContentPart::Text(text.clone())]
                .into_iter()
                .chain([v2::ContentPart::Text(String::new())])
                .collect::<v2::Content>(),
        ),
        v2::Command::prompt(text.clone()),
    ];
    for cmd in not_v2 {
        assert_eq!(cmd.shell_command(), None, "{cmd:?}");
    }
}

#[test]
fn the_steers_survive_the_wire() {
    let line = Command::shell_steer("ls", Err("denied")).to_line();
    assert_eq!(
        line,
        "{\"command\":\"steer\",\"kind\":\"command\",\"text\":\"<user_shell_command>\\n<command>\\nls\\n</command>\\n<result>\\nerror running shell: denied\\n</result>\\n</user_shell_command>\"}\n"
    );
    let back = Some(parsed(
        "ls",
        "failed",
        &["error running shell: denied"],
        false,
    ));
    assert_eq!(
        Command::from_slice(line.as_bytes())
            .unwrap()
            .shell_command(),
        back
    );
    let line = v2::Command::shell_steer("ls", Err("denied")).to_line();
    assert_eq!(
        v2::Command::from_slice(line.as_bytes())
            .unwrap()
            .shell_command(),
        back
    );
}

/// Text that is mostly the envelope's own words, lines and line ends.
fn text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        4 => "[a-z =]{0,3}",
        2 => Just("\n".to_owned()),
        1 => Just("\r".to_owned()),
        1 => Just("\r\n".to_owned()),
        1 => Just("</command>".to_owned()),
        1 => Just("</result>".to_owned()),
        1 => Just("<result>".to_owned()),
        1 => Just("</user_shell_command>".to_owned()),
        1 => Just("exit=".to_owned()),
        1 => Just("error running shell:".to_owned()),
        1 => Just("truncated=".to_owned()),
        1 => Just("output_limit_reached=".to_owned()),
        1 => Just("shown_chars=".to_owned()),
        1 => Just("max_output_chars=".to_owned()),
        1 => "\\PC",
    ];
    prop::collection::vec(piece, 0..12).prop_map(|p| p.concat())
}

/// Text in which the preamble's four lines come whole, now and then.
fn output_text() -> impl Strategy<Value = String> {
    (any::<bool>(), text()).prop_map(|(preamble, t)| {
        if preamble {
            format!(
                "truncated=true\noutput_limit_reached=true\nshown_chars=1\nmax_output_chars=1\n{t}"
            )
        } else {
            t
        }
    })
}

#[derive(Debug, Clone)]
enum Run {
    Ran(Option<i32>, String, bool),
    Failed(String),
}

fn run() -> impl Strategy<Value = Run> {
    prop_oneof![
        3 => (any::<Option<i32>>(), output_text(), any::<bool>()).prop_map(|(c, t, l)| Run::Ran(c, t, l)),
        1 => text().prop_map(Run::Failed),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    /// `parse(encode(c, r))` gives back `c` and `r` exactly in the domain
    /// the model derives from upstream's `parse` (`round_trips`), and never
    /// outside it; everywhere, it is what the model parses.
    #[test]
    fn encode_then_parse_gives_back_exactly_in_the_domain(command in text(), run in run()) {
        let (output, result) = match &run {
            Run::Ran(code, text, limit) => (Some(out(*code, text, *limit)), Ok((*code, text.as_str(), *limit))),
            Run::Failed(why) => (None, Err(why.as_str())),
        };
        let encoded = encode(&command, output.as_ref().ok_or_else(|| result.unwrap_err()));
        prop_assert_eq!(&encoded, &model::encode(&command, result));
        let got = parse(&encoded).map(|p| (p.command, p.exit, p.output, p.output_limit_reached));
        prop_assert_eq!(&got, &model::parse(&encoded));
        let want = model::expected(&command, result);
        prop_assert_eq!(got.as_ref() == Some(&want), model::round_trips(&command, result), "{:?}", got);
    }

    /// On any text, `parse` is the model's.
    #[test]
    fn parse_is_the_model(content in text()) {
        let content = format!("<user_shell_command>\n<command>\n{content}");
        let got = parse(&content).map(|p| (p.command, p.exit, p.output, p.output_limit_reached));
        prop_assert_eq!(got, model::parse(&content));
    }

    /// The steers' text survives the wire: `to_line`, `from_slice`,
    /// `shell_command` is `parse` of the envelope.
    #[test]
    fn the_steers_round_trip_through_the_wire(command in text(), run in run()) {
        let output = match &run {
            Run::Ran(code, text, limit) => Ok(out(*code, text, *limit)),
            Run::Failed(why) => Err(why.as_str()),
        };
        let result = output.as_ref().map_err(|e| *e);
        let want = parse(&encode(&command, result));
        let v1 = Command::from_slice(Command::shell_steer(&command, result).to_line().as_bytes()).unwrap();
        prop_assert_eq!(v1.shell_command(), want.clone());
        let v2 = v2::Command::from_slice(v2::Command::shell_steer(&command, result).to_line().as_bytes()).unwrap();
        prop_assert_eq!(v2.shell_command(), want);
    }
}
