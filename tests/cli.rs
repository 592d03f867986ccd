//! The `serve-command` binary, run as a child process over real pipes.
#![cfg(feature = "cli")]

use std::io::{Read, Write};
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_serve-command");

/// Runs the binary with `args` and `stdin`, to completion.
#[track_caller]
fn run(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut input = child.stdin.take().unwrap();
    let stdin = stdin.to_vec();
    let writer = std::thread::spawn(move || input.write_all(&stdin));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    out
}

#[track_caller]
fn stdout_of(args: &[&str], stdin: &[u8], status: i32) -> String {
    let out = run(args, stdin);
    assert_eq!(
        out.status.code(),
        Some(status),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn encode_writes_one_line_per_command() {
    let table: &[(&[&str], &str)] = &[
        (
            &["encode", "prompt", "fix it"],
            r#"{"command":"prompt","text":"fix it"}"#,
        ),
        (
            &["encode", "prompt", "fix it", "--submission-id", "sub-1"],
            r#"{"command":"prompt","text":"fix it","submission_id":"sub-1"}"#,
        ),
        (
            &["encode", "steer", "look"],
            r#"{"command":"steer","kind":"prompt","text":"look"}"#,
        ),
        (
            &["encode", "steer", "/diff", "--kind", "command"],
            r#"{"command":"steer","kind":"command","text":"/diff"}"#,
        ),
        (&["encode", "compact"], r#"{"command":"compact"}"#),
        (&["encode", "cancel"], r#"{"command":"cancel"}"#),
        (
            &["encode", "goal", "set", "ship"],
            r#"{"command":"goal","action":"set","text":"ship"}"#,
        ),
        (
            &["encode", "goal", "set", "ship", "--auto"],
            r#"{"command":"goal","action":"set","text":"ship","auto":true}"#,
        ),
        (
            &["encode", "goal", "clear"],
            r#"{"command":"goal","action":"clear"}"#,
        ),
        (
            &["encode", "approval", "a1", "--allow"],
            r#"{"command":"approval","id":"a1","allow":true}"#,
        ),
        (
            &["encode", "approval", "a1", "--deny"],
            r#"{"command":"approval","id":"a1","allow":false}"#,
        ),
        (
            &["encode", "prompt", "--", "-v\t\"q\""],
            r#"{"command":"prompt","text":"-v\t\"q\""}"#,
        ),
    ];
    for &(args, line) in table {
        assert_eq!(stdout_of(args, b"", 0), format!("{line}\n"), "{args:?}");
    }
}

#[test]
fn a_text_of_dash_is_stdin_less_one_lf() {
    let table: &[(&[u8], &str)] = &[
        (
            b"two\nlines\n",
            r#"{"command":"prompt","text":"two\nlines"}"#,
        ),
        (b"kept\n\n", r#"{"command":"prompt","text":"kept\n"}"#),
        (b"no lf", r#"{"command":"prompt","text":"no lf"}"#),
        (b"crlf\r\n", r#"{"command":"prompt","text":"crlf\r"}"#),
        (b"", r#"{"command":"prompt","text":""}"#),
    ];
    for &(stdin, line) in table {
        assert_eq!(
            stdout_of(&["encode", "prompt", "-"], stdin, 0),
            format!("{line}\n")
        );
    }
    let out = run(&["encode", "goal", "set", "-"], b"\xff\n");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "serve-command: stdin is not UTF-8 (byte 0)\n"
    );
}

#[test]
fn encode_usage_errors_exit_2() {
    for args in [
        &["encode", "approval", "a1"][..],
        &["encode", "approval", "a1", "--allow", "--deny"],
        &["encode", "steer", "x", "--kind", "notice"],
        &["encode"],
        &[],
    ] {
        let out = run(args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty());
        assert!(
            !out.stderr.is_empty(),
            "{args:?}: a usage message on stderr"
        );
    }
}

#[test]
fn encode_pipes_into_decode() {
    let mut encode = Command::new(BIN)
        .args(["encode", "prompt", "fix it"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let decode = Command::new(BIN)
        .arg("decode")
        .stdin(encode.stdout.take().unwrap())
        .output()
        .unwrap();
    assert_eq!(encode.wait().unwrap().code(), Some(0));
    assert_eq!(decode.status.code(), Some(0));
    assert_eq!(
        String::from_utf8(decode.stdout).unwrap(),
        "{\"command\":\"prompt\",\"text\":\"fix it\"}\n"
    );
}

#[test]
fn decode_answers_each_line_as_the_engine_would() {
    let input = concat!(
        "{\"command\" : \"cancel\", \"extra\": [1, {\"a\": null}]}\n",
        "\n",
        " \t\r\n",
        "{\"command\":\"approval\",\"id\":\"a\"}\n",
        "not json\n",
        "{\"comm\\u0061nd\":\"steer\",\"text\":\"x\"}\r\n",
        "{\"command\":\"nap\"}",
    );
    let expected = concat!(
        "{\"command\":\"cancel\"}\n",
        "{\"event\":\"command_error\",\"error\":\"expected a boolean \\\"allow\\\" field\"}\n",
        "{\"event\":\"command_error\",\"error\":\"command stream: expected a JSON value at byte 0\"}\n",
        "{\"command\":\"steer\",\"kind\":\"prompt\",\"text\":\"x\"}\n",
        "{\"event\":\"command_error\",\"error\":\"unknown command: nap\"}\n",
    );
    assert_eq!(stdout_of(&["decode"], input.as_bytes(), 1), expected);
    // From a file, the same.
    let dir = std::env::temp_dir().join(format!("serve-command-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("session.jsonl");
    std::fs::write(&file, input).unwrap();
    assert_eq!(
        stdout_of(&["decode", file.to_str().unwrap()], b"", 1),
        expected
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn decode_exits_0_when_every_line_is_a_command() {
    let input = "{\"command\":\"cancel\"}\n\n{\"command\":\"compact\"}\n";
    assert_eq!(
        stdout_of(&["decode"], input.as_bytes(), 0),
        "{\"command\":\"cancel\"}\n{\"command\":\"compact\"}\n"
    );
    assert_eq!(stdout_of(&["decode"], b"", 0), "");
}

#[test]
fn decode_refuses_long_lines_and_goes_on() {
    let input = "{\"command\":\"cancel\"}\n{\"command\":\"prompt\",\"text\":\"0123456789\"}\n{\"command\":\"compact\"}\n";
    let expected = concat!(
        "{\"command\":\"cancel\"}\n",
        "{\"event\":\"command_error\",\"error\":\"command stream: line 2 is longer than 30 bytes\"}\n",
        "{\"command\":\"compact\"}\n",
    );
    assert_eq!(
        stdout_of(&["decode", "--max-line-len", "30"], input.as_bytes(), 1),
        expected
    );
}

#[test]
fn decode_summary_counts_commands_and_errors() {
    let input = "{\"command\":\"cancel\"}\n{\"command\":\"cancel\"}\n{\"command\":\"nap\"}\n{\n{\"command\":\"goal\",\"action\":\"clear\"}\n";
    let out = run(&["decode", "--summary"], input.as_bytes());
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        concat!(
            "         2  cancel\n",
            "         1  error: command stream: unexpected end of line\n",
            "         1  error: unknown command: nap\n",
            "         1  goal clear\n",
        )
    );
}

#[test]
fn decode_io_errors_exit_2() {
    let out = run(&["decode", "/nonexistent/session.jsonl"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "serve-command: /nonexistent/session.jsonl: No such file or directory (os error 2)\n"
    );
    let out = run(&["decode", "--max-line-len", "lots"], b"");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn every_subcommand_has_help_with_an_example() {
    let subcommands: &[&[&str]] = &[
        &[],
        &["decode"],
        &["encode"],
        &["encode", "prompt"],
        &["encode", "steer"],
        &["encode", "compact"],
        &["encode", "cancel"],
        &["encode", "goal"],
        &["encode", "goal", "set"],
        &["encode", "goal", "clear"],
        &["encode", "approval"],
        &["corpus"],
        &["dict"],
    ];
    for &sub in subcommands {
        let args: Vec<&str> = sub.iter().copied().chain(["--help"]).collect();
        let help = stdout_of(&args, b"", 0);
        assert!(help.contains("Example"), "{args:?}:\n{help}");
    }
    let decode_help = stdout_of(&["decode", "--help"], b"", 0);
    assert!(
        decode_help.contains("Unlike the reference engine, which stops reading at a line that is not JSON, this goes on"),
        "{decode_help}"
    );
    assert_eq!(
        stdout_of(&["--version"], b"", 0),
        format!("serve-command {}\n", env!("CARGO_PKG_VERSION"))
    );
}

/// Peak resident memory of a running process, in KiB (`VmHWM`).
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Streams `chunks` into `decode`, drains its stdout, and returns (peak RSS
/// in KiB while streaming, stdout lines, exit status).
fn stream_through_decode(args: &[&str], chunks: impl Iterator<Item = Vec<u8>>) -> (u64, u64, i32) {
    let mut child = Command::new(BIN)
        .arg("decode")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut buf = vec![0; 1 << 16];
        let mut lines = 0u64;
        loop {
            let n = stdout.read(&mut buf).unwrap();
            if n == 0 {
                return lines;
            }
            lines += buf[..n].iter().filter(|&&b| b == b'\n').count() as u64;
        }
    });
    for chunk in chunks {
        stdin.write_all(&chunk).unwrap();
    }
    // Everything is in (the child has read all but the pipe's last 64 KiB):
    // the high-water mark now is the peak of the whole stream.
    std::thread::sleep(std::time::Duration::from_millis(200));
    let peak = peak_rss_kib(pid);
    drop(stdin);
    let status = child.wait().unwrap().code().unwrap();
    (peak, reader.join().unwrap(), status)
}

#[test]
fn decode_streams_100_mib_in_bounded_memory() {
    // 100 MiB of commands, each chunk a mix of good and refused lines.
    let block: Vec<u8> = [
        "{\"command\":\"prompt\",\"text\":\"fix the failing test, and keep the API\",\"submission_id\":\"s-17\"}\n",
        "{\"command\":\"steer\",\"kind\":\"command\",\"text\":\"/diff\"}\n",
        "{\"command\":\"approval\",\"id\":\"a\"}\n",
        "\n",
    ]
    .concat()
    .repeat(4096)
    .into_bytes();
    let per_block = 3 * 4096;
    let total: usize = 100 << 20;
    let blocks = total.div_ceil(block.len());
    let (peak_kib, lines, status) = stream_through_decode(&[], std::iter::repeat_n(block, blocks));
    assert_eq!(status, 1);
    assert_eq!(lines, (blocks * per_block) as u64);
    eprintln!("decode, 100 MiB of short lines: peak RSS {} KiB", peak_kib);
    assert!(peak_kib < 16 * 1024, "peak RSS {peak_kib} KiB");
}

#[test]
fn decode_skips_a_1_gib_line_in_bounded_memory() {
    // One 1 GiB prompt (over the default 64 MiB limit), then a good line.
    let head = b"{\"command\":\"prompt\",\"text\":\"".to_vec();
    let body = std::iter::repeat_n(vec![b'a'; 1 << 20], 1024);
    let tail = b"\"}\n{\"command\":\"cancel\"}\n".to_vec();
    let (peak_kib, lines, status) =
        stream_through_decode(&[], std::iter::once(head).chain(body).chain([tail]));
    assert_eq!(status, 1);
    assert_eq!(lines, 2, "the too-long event, then cancel");
    eprintln!(
        "decode, one 1 GiB line under the default limit: peak RSS {} KiB",
        peak_kib
    );
    // The limit plus the reader's buffer, and the process itself.
    assert!(peak_kib < (64 + 16) * 1024, "peak RSS {peak_kib} KiB");
}

#[test]
fn corpus_writes_lines_and_their_outcomes() {
    let dir = std::env::temp_dir().join(format!("serve-command-corpus-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // Writes 40 lines with `seed` into `dir/sub`; returns its expected.jsonl.
    let corpus = |sub: &str, seed: &str| {
        let out = dir.join(sub);
        let args = [
            "corpus",
            out.to_str().unwrap(),
            "--count",
            "40",
            "--seed",
            seed,
        ];
        assert_eq!(stdout_of(&args, b"", 0), "");
        std::fs::read_to_string(out.join("expected.jsonl")).unwrap()
    };
    let expected = corpus("first", "7");
    let records: Vec<serde_json::Value> = expected
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 40);
    for (n, record) in records.iter().enumerate() {
        // Each corpus file is its record's line, and the record is the crate's verdict.
        let line = std::fs::read(dir.join("first/corpus").join(format!("line-{n:06}"))).unwrap();
        assert_eq!(record["line"].as_str().unwrap().as_bytes(), line);
        match serve_command::Command::from_slice(&line) {
            Ok(cmd) => assert_eq!(record["ok"].as_str().unwrap(), cmd.to_line().trim_end()),
            Err(e) => assert_eq!(record["error"].as_str().unwrap(), e.to_string()),
        }
    }
    // The same seed writes the same corpus; another seed, another.
    assert_eq!(corpus("again", "7"), expected);
    assert_ne!(corpus("other", "8"), expected);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn dict_prints_the_fuzzing_dictionary() {
    let dict = stdout_of(&["dict"], b"", 0);
    assert_eq!(
        dict,
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/src/command.dict")).unwrap()
    );
    assert!(
        dict.contains("qkey_submission_id=\"\\\"submission_id\\\":\"\n"),
        "{dict}"
    );
}
