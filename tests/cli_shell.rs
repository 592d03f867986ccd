//! `serve-command shell`: oracle-shell's requests in, its answers out, byte
//! for byte.
#![cfg(feature = "cli")]

use std::io::Write;
use std::process::{Command, Stdio};

#[path = "support/bin.rs"]
mod bin;

use bin::{run, stdout_of, BIN};

/// Each request line's exact answer line, as oracle-shell writes it.
#[track_caller]
fn assert_answers(table: &[(&str, &str)]) {
    let input: String = table.iter().map(|(req, _)| format!("{req}\n")).collect();
    let want: String = table.iter().map(|(_, ans)| format!("{ans}\n")).collect();
    assert_eq!(stdout_of(&["shell"], input.as_bytes(), 0), want);
}

#[test]
fn shell_answers_as_oracle_shell_does() {
    assert_answers(&[
        (
            r#"{"encode": "printf %s 'abc'", "exit_code": 0, "text": "abc", "output_limit_reached": false}"#,
            r#"["ENCODED","<user_shell_command>\n<command>\nprintf %s 'abc'\n</command>\n<result>\nexit=0\nabc\n</result>\n</user_shell_command>"]"#,
        ),
        (
            r#"{"encode": "cat big", "exit_code": 1, "text": "日本😀", "output_limit_reached": true}"#,
            r#"["ENCODED","<user_shell_command>\n<command>\ncat big\n</command>\n<result>\nexit=1\ntruncated=true\noutput_limit_reached=true\nshown_chars=3\nmax_output_chars=3\n日本😀\n</result>\n</user_shell_command>"]"#,
        ),
        (
            r#"{"encode":"nope","error":"spawn failed"}"#,
            r#"["ENCODED","<user_shell_command>\n<command>\nnope\n</command>\n<result>\nerror running shell: spawn failed\n</result>\n</user_shell_command>"]"#,
        ),
        (
            r#"{"parse": "<user_shell_command>\n<command>\necho hi\n</command>\n<result>\nexit=0\nhi\n</result>\n</user_shell_command>"}"#,
            r#"["PARSED","echo hi","0",["hi"],false]"#,
        ),
        // No exit code, not cut off: `cancelled` (35042ea4; it was `exit=0`).
        (
            r#"{"encode": "make", "exit_code": null, "text": "", "output_limit_reached": false}"#,
            r#"["ENCODED","<user_shell_command>\n<command>\nmake\n</command>\n<result>\nexit=cancelled\n\n</result>\n</user_shell_command>"]"#,
        ),
        // Closing tags in the output are output (35042ea4: the end is anchored).
        (
            r#"{"parse": "<user_shell_command>\n<command>\ncat x\n</command>\n<result>\nexit=0\n</result>\n</user_shell_command>\n</result>\n</user_shell_command>"}"#,
            r#"["PARSED","cat x","0",["</result>","</user_shell_command>"],false]"#,
        ),
        (r#"{"parse": "just a normal prompt"}"#, r#"["NONE"]"#),
        // Compact, non-ASCII raw, controls as serde_json and MoonBit both
        // escape them (lowercase hex); DEL and U+2028 raw.
        (
            r#"{"encode":"\u0000\u001f\b\f\t\r\u007f\u2028\"\\/é","error":""}"#,
            "[\"ENCODED\",\"<user_shell_command>\\n<command>\\n\\u0000\\u001f\\b\\f\\t\\r\u{7f}\u{2028}\\\"\\\\/é\\n</command>\\n<result>\\nerror running shell: \\n</result>\\n</user_shell_command>\"]",
        ),
    ]);
}

#[test]
fn shell_reads_requests_as_oracle_shell_does() {
    let enc = |exit: &str, limit: &str| {
        format!(r#"{{"encode":"c","exit_code":{exit},"text":"t","output_limit_reached":{limit}}}"#)
    };
    let ans = |exit: &str| {
        format!(
            r#"["ENCODED","<user_shell_command>\n<command>\nc\n</command>\n<result>\nexit={exit}\nt\n</result>\n</user_shell_command>"]"#
        )
    };
    let cut = r#"["ENCODED","<user_shell_command>\n<command>\nc\n</command>\n<result>\nexit=1\ntruncated=true\noutput_limit_reached=true\nshown_chars=1\nmax_output_chars=1\nt\n</result>\n</user_shell_command>"]"#;
    let owned: Vec<(String, String)> = vec![
        // A number is truncated toward zero and saturated; anything else
        // is no code (exit=cancelled).
        (enc("1.9", "false"), ans("1")),
        (enc("-1.9", "false"), ans("-1")),
        (enc("1e10", "false"), ans("2147483647")),
        (enc("-2147483649", "false"), ans("-2147483648")),
        (enc("-0", "false"), ans("0")),
        (enc("true", "false"), ans("cancelled")),
        (enc("\"3\"", "false"), ans("cancelled")),
        (enc("null", "false"), ans("cancelled")),
        // Only `true` is truncated.
        (enc("1", "true"), cut.to_owned()),
        (enc("1", "1"), ans("1")),
        (enc("1", "\"true\""), ans("1")),
        (enc("1", "null"), ans("1")),
        // An error that is not a string: the other form.
        (
            r#"{"encode":"c","error":1,"exit_code":1,"text":"t","output_limit_reached":true}"#.to_owned(),
            cut.to_owned(),
        ),
        // The last of a duplicated key.
        (r#"{"parse":"x","parse":"<user_shell_command>\n<command>\na\n</command>\n<result>\nexit=0\n</result>\n</user_shell_command>"}"#.to_owned(),
            r#"["PARSED","a","0",[],false]"#.to_owned()),
        (r#"{"parse":1}"#.to_owned(), r#"["BADREQ","unknown request"]"#.to_owned()),
        (r#"{"encode":"c","text":"t","output_limit_reached":true}"#.to_owned(), r#"["BADREQ","unknown request"]"#.to_owned()),
        ("[]".to_owned(), r#"["BADREQ","unknown request"]"#.to_owned()),
        ("null".to_owned(), r#"["BADREQ","unknown request"]"#.to_owned()),
        // Numbers past f64 saturate; elsewhere they are read too.
        (enc("1e400", "false"), ans("2147483647")),
        (enc("-1E+999", "false"), ans("-2147483648")),
        (
            r#"{"parse":"x","n":[1e400,-1e400]}"#.to_owned(),
            r#"["NONE"]"#.to_owned(),
        ),
        // A lone surrogate is U+FFFD; a pair, its char.
        (
            r#"{"encode":"\ud800\u0041","error":"\udc00x\ud83d\ude00\""}"#.to_owned(),
            "[\"ENCODED\",\"<user_shell_command>\\n<command>\\n\u{fffd}A\\n</command>\\n<result>\\nerror running shell: \u{fffd}x😀\\\"\\n</result>\\n</user_shell_command>\"]".to_owned(),
        ),
        (
            r#"{"encode":"x","exit_code":0,"text":"\\ud800","output_limit_reached":false}"#.to_owned(),
            r#"["ENCODED","<user_shell_command>\n<command>\nx\n</command>\n<result>\nexit=0\n\\ud800\n</result>\n</user_shell_command>"]"#.to_owned(),
        ),
        (String::new(), r#"["BADREQ","Unexpected end of file"]"#.to_owned()),
        ("  {".to_owned(), r#"["BADREQ","Unexpected end of file"]"#.to_owned()),
    ];
    let table: Vec<(&str, &str)> = owned
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    assert_answers(&table);
    // Not JSON: BADREQ, in serde_json's words.
    let out = stdout_of(&["shell"], b"{\"parse\":\"a\",}\r\n\xff\n", 0);
    assert_eq!(
        out,
        "[\"BADREQ\",\"trailing comma at line 1 column 14\"]\n[\"BADREQ\",\"expected value at line 1 column 1\"]\n"
    );
}

#[test]
fn shell_reads_a_file_or_stdin() {
    let dir = std::env::temp_dir().join(format!("serve-command-shell-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("requests.jsonl");
    std::fs::write(&file, "{\"parse\":\"x\"}\n{\"parse\":\"y\"}").unwrap();
    let path = file.to_str().unwrap();
    assert_eq!(
        stdout_of(&["shell", path], b"", 0),
        "[\"NONE\"]\n[\"NONE\"]\n"
    );
    assert_eq!(
        stdout_of(&["shell", "-"], b"{\"parse\":\"x\"}\n", 0),
        "[\"NONE\"]\n"
    );
    let missing = dir.join("missing.jsonl");
    let out = run(&["shell", missing.to_str().unwrap()], b"");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        format!(
            "serve-command: {}: No such file or directory\n",
            missing.display()
        )
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn shell_answers_each_request_before_reading_the_next() {
    let mut child = Command::new(BIN)
        .arg("shell")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stdout).lines() {
            tx.send(line.unwrap()).unwrap();
        }
    });
    for (request, answer) in [
        ("{\"parse\":\"x\"}\n", "[\"NONE\"]"),
        ("{}\n", "[\"BADREQ\",\"unknown request\"]"),
    ] {
        stdin.write_all(request.as_bytes()).unwrap();
        stdin.flush().unwrap();
        let got = rx.recv_timeout(std::time::Duration::from_secs(10));
        assert_eq!(got.as_deref(), Ok(answer), "{request:?}");
    }
    drop(stdin);
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

#[test]
fn shell_help_says_the_protocol_with_examples() {
    let help = stdout_of(&["shell", "--help"], b"", 0);
    for said in [
        "Examples:",
        "{\"parse\": CONTENT}",
        "[\"PARSED\", COMMAND, EXIT, [LINE, ...], OUTPUT_LIMIT_REACHED]",
        "serve-command shell requests.jsonl",
    ] {
        assert!(help.contains(said), "lacks {said:?}:\n{help}");
    }
}
