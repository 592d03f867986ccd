//! The `serve-command` binary, run as a child process over real pipes.
#![cfg(feature = "cli")]

use std::io::{Read, Write};
use std::process::{Command, Stdio};

#[path = "support/bin.rs"]
mod bin;

use bin::{run, stdout_of, BIN};

#[test]
fn encode_revision_v1_writes_one_line_per_command() {
    let table: &[(&[&str], &str)] = &[
        (
            &["--revision", "v1", "encode", "prompt", "fix it"],
            r#"{"command":"prompt","text":"fix it"}"#,
        ),
        (
            &[
                "--revision",
                "v1",
                "encode",
                "prompt",
                "fix it",
                "--submission-id",
                "sub-1",
            ],
            r#"{"command":"prompt","text":"fix it","submission_id":"sub-1"}"#,
        ),
        (
            &["--revision", "v1", "encode", "steer", "look"],
            r#"{"command":"steer","kind":"prompt","text":"look"}"#,
        ),
        (
            &[
                "--revision",
                "v1",
                "encode",
                "steer",
                "/diff",
                "--kind",
                "command",
            ],
            r#"{"command":"steer","kind":"command","text":"/diff"}"#,
        ),
        (
            &["encode", "--revision", "v1", "compact"],
            r#"{"command":"compact"}"#,
        ),
        (
            &["--revision", "v1", "encode", "cancel"],
            r#"{"command":"cancel"}"#,
        ),
        (
            &["--revision", "v1", "encode", "goal", "set", "ship"],
            r#"{"command":"goal","action":"set","text":"ship"}"#,
        ),
        (
            &[
                "--revision",
                "v1",
                "encode",
                "goal",
                "set",
                "ship",
                "--auto",
            ],
            r#"{"command":"goal","action":"set","text":"ship","auto":true}"#,
        ),
        (
            &["encode", "goal", "clear", "--revision", "v1"],
            r#"{"command":"goal","action":"clear"}"#,
        ),
        (
            &["--revision", "v1", "encode", "approval", "a1", "--allow"],
            r#"{"command":"approval","id":"a1","allow":true}"#,
        ),
        (
            &["--revision", "v1", "encode", "approval", "a1", "--deny"],
            r#"{"command":"approval","id":"a1","allow":false}"#,
        ),
        (
            &["--revision", "v1", "encode", "prompt", "--", "-v\t\"q\""],
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
            r#"{"command":"prompt","content":"two\nlines"}"#,
        ),
        (b"kept\n\n", r#"{"command":"prompt","content":"kept\n"}"#),
        (b"no lf", r#"{"command":"prompt","content":"no lf"}"#),
        (b"crlf\r\n", r#"{"command":"prompt","content":"crlf\r"}"#),
        (b"", r#"{"command":"prompt","content":""}"#),
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

/// `serve-command encode ARGS | serve-command decode`, no other flag on
/// either side: (encode's status, decode's status, decode's stdout).
fn encode_into_decode(args: &[&str]) -> (Option<i32>, Option<i32>, String) {
    let mut encode = Command::new(BIN)
        .arg("encode")
        .args(args)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let decode = Command::new(BIN)
        .arg("decode")
        .stdin(encode.stdout.take().unwrap())
        .output()
        .unwrap();
    (
        encode.wait().unwrap().code(),
        decode.status.code(),
        String::from_utf8(decode.stdout).unwrap(),
    )
}

#[test]
fn encode_pipes_into_decode() {
    let dir = scratch("encode-into-decode");
    let png = dir.join("a.png");
    std::fs::write(&png, PNG).unwrap();
    let png = png.to_str().unwrap();
    let table: &[(&[&str], &str)] = &[
        (
            &["prompt", "fix it"],
            "{\"command\":\"prompt\",\"content\":\"fix it\"}\n",
        ),
        // Both ends speak v2 by default: the image survives.
        (
            &["prompt", "x", "--image", png],
            "{\"command\":\"prompt\",\"content\":[{\"type\":\"text\",\"text\":\"x\"},{\"type\":\"image\",\"media_type\":\"image/png\",\"data\":\"iVBORw0KGgo=\"}]}\n",
        ),
        (
            &["job-stop", "r1", "g1", "j1"],
            "{\"command\":\"job_stop\",\"request_id\":\"r1\",\"generation\":\"g1\",\"job_id\":\"j1\"}\n",
        ),
    ];
    for &(args, line) in table {
        assert_eq!(
            encode_into_decode(args),
            (Some(0), Some(0), line.to_owned()),
            "{args:?}"
        );
    }
    // A line decode would refuse is not written: nothing reaches it.
    assert_eq!(
        encode_into_decode(&["jobs-snapshot", ""]),
        (Some(2), Some(0), String::new())
    );
    std::fs::remove_dir_all(&dir).unwrap();
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
    // The seed's revision: a steer's `text` is its text.
    assert_eq!(
        stdout_of(&["--revision", "v1", "decode"], input.as_bytes(), 1),
        expected
    );
    // From a file, the same.
    let dir = std::env::temp_dir().join(format!("serve-command-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("session.jsonl");
    std::fs::write(&file, input).unwrap();
    assert_eq!(
        stdout_of(
            &["decode", "--revision", "v1", file.to_str().unwrap()],
            b"",
            1
        ),
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
fn max_line_len_takes_sizes_a_person_writes() {
    // A line of 1025 bytes, then one of 1024: (limit, verdicts).
    let long = format!(
        "{{\"command\":\"prompt\",\"text\":\"{}\"}}",
        "a".repeat(1025 - 30)
    );
    let fits = format!(
        "{{\"command\":\"prompt\",\"text\":\"{}\"}}",
        "a".repeat(1024 - 30)
    );
    assert_eq!((long.len(), fits.len()), (1025, 1024));
    let input = format!("{long}\n{fits}\n");
    let ok = |n| {
        format!(
            "OK {{\"command\":\"prompt\",\"content\":\"{}\"}}\n",
            "a".repeat(n)
        )
    };
    let one_refused = format!("TOOLONG\n{}", ok(1024 - 30));
    let none_refused = format!("{}{}", ok(1025 - 30), ok(1024 - 30));
    let table: &[(&str, &str)] = &[
        ("1024", &one_refused),
        ("1KiB", &one_refused),
        ("1025", &none_refused),
        ("65536", &none_refused),
        ("64KiB", &none_refused),
        ("64MiB", &none_refused),
        ("1GiB", &none_refused),
    ];
    for (limit, verdicts) in table {
        let args = ["decode", "--output", "verdict", "--max-line-len", limit];
        assert_eq!(stdout_of(&args, input.as_bytes(), 0), *verdicts, "{limit}");
    }
    // The default, as it is written.
    let help = stdout_of(&["decode", "--help"], b"", 0);
    assert!(help.contains("      --max-line-len <SIZE>\n"), "{help}");
    assert!(help.contains("[default: 64MiB]"), "{help}");
    // Bad sizes: what clap says, with ours after it.
    let table: &[(&str, &str)] = &[
        (
            "12XB",
            "expected a number of bytes, alone or with KiB, MiB or GiB (65536, 64KiB, 64MiB, 1GiB)",
        ),
        (
            "lots",
            "expected a number of bytes, alone or with KiB, MiB or GiB (65536, 64KiB, 64MiB, 1GiB)",
        ),
        (
            "64MB",
            "MB is ambiguous (1000 or 1024?): write 64MiB for 64 × 1024², or the number of bytes",
        ),
        (
            "64KB",
            "KB is ambiguous (1000 or 1024?): write 64KiB for 64 × 1024, or the number of bytes",
        ),
    ];
    for &(size, message) in table {
        let out = run(&["decode", "--max-line-len", size], b"");
        assert_eq!(out.status.code(), Some(2), "{size}");
        assert_eq!(out.stdout, b"", "{size}");
        assert_eq!(
            String::from_utf8(out.stderr).unwrap(),
            format!("error: invalid value '{size}' for '--max-line-len <SIZE>': {message}\n\nFor more information, try '--help'.\n"),
            "{size}"
        );
    }
}

#[test]
fn decode_output_verdict_answers_every_line_as_the_oracle_does() {
    let input = concat!(
        "{\"command\" : \"cancel\", \"extra\": [1]}\n",
        "\n",
        " \t\r\n",
        "{\"command\":\"approval\",\"id\":\"a\"}\n",
        "not json\n",
        "{\"command\":\"a\\nb\\rc\\\\n\"}\n",
        "{\"command\":\"prompt\",\"text\":\"0123456789012345678901234567890123456789\"}\n",
        "{\"command\":\"steer\",\"text\":\"x\"}\r\n",
        "\t",
    );
    let expected = concat!(
        "OK {\"command\":\"cancel\"}\n",
        "NOTJSON\n",
        "NOTJSON\n",
        "ERR expected a boolean \"allow\" field\n",
        "NOTJSON\n",
        // LF and CR escaped; a backslash stays as it is, as the oracle writes.
        "ERR unknown command: a\\nb\\rc\\n\n",
        "TOOLONG\n",
        "OK {\"command\":\"steer\",\"kind\":\"prompt\",\"text\":\"x\"}\n",
        "NOTJSON\n",
    );
    let args = [
        "--revision",
        "v1",
        "decode",
        "--output",
        "verdict",
        "--max-line-len",
        "50",
    ];
    // Exit 0: a refusal is a verdict.
    assert_eq!(stdout_of(&args, input.as_bytes(), 0), expected);
    let numbered: String = expected
        .lines()
        .enumerate()
        .map(|(n, l)| format!("{}\t{l}\n", n + 1))
        .collect();
    let args = [&args[..], &["--line-numbers"]].concat();
    assert_eq!(stdout_of(&args, input.as_bytes(), 0), numbered);
    assert_eq!(stdout_of(&["decode", "--output", "verdict"], b"", 0), "");
}

#[test]
fn decode_answers_each_line_before_reading_the_next() {
    // A driver that writes a line and waits for its answer, as one drives
    // the reference oracle; blank lines included.
    for format in ["wire", "verdict"] {
        let mut child = Command::new(BIN)
            .args(["decode", "--output", format])
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
        let exchanges: &[(&str, &str, &str)] = &[
            (
                "{\"command\":\"cancel\"}\n",
                "{\"command\":\"cancel\"}",
                "OK {\"command\":\"cancel\"}",
            ),
            (" \n", "", "NOTJSON"),
            (
                "{\"command\":\"nap\"}\n",
                "{\"event\":\"command_error\",\"error\":\"unknown command: nap\"}",
                "ERR unknown command: nap",
            ),
        ];
        for &(line, event, verdict) in exchanges {
            stdin.write_all(line.as_bytes()).unwrap();
            stdin.flush().unwrap();
            let answer = if format == "wire" { event } else { verdict };
            if answer.is_empty() {
                continue; // A blank line has no event.
            }
            let got = rx.recv_timeout(std::time::Duration::from_secs(10));
            assert_eq!(got.as_deref(), Ok(answer), "{format}: {line:?}");
        }
        drop(stdin);
        assert!(child.wait().unwrap().code().is_some());
    }
}

#[test]
fn decode_summary_prints_totals_then_counts() {
    let input = concat!(
        "{\"command\":\"cancel\"}\n",
        "{\"command\":\"cancel\"}\n",
        "\n",
        "{\"command\":\"nap\"}\n",
        "{\n",
        "{\"command\":\"prompt\",\"text\":\"0123456789012345678901234567890123456789\"}\n",
        " \r\n",
        "{\"command\":\"goal\",\"action\":\"clear\"}\n",
        "\t",
    );
    let out = run(
        &["decode", "--summary", "--max-line-len", "50"],
        input.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        concat!(
            "9 lines: 3 commands, 3 refused (1 not JSON, 1 too long, 1 not a command), 3 blank\n",
            "         2  cancel\n",
            "         1  error: command stream: line longer than 50 bytes\n",
            "         1  error: command stream: unexpected end of line\n",
            "         1  error: unknown command: nap\n",
            "         1  goal clear\n",
        )
    );
    let table: &[(&str, &str)] = &[
        ("", "0 lines: 0 commands, 0 refused (0 not JSON, 0 too long, 0 not a command), 0 blank\n"),
        ("\n", "1 lines: 0 commands, 0 refused (0 not JSON, 0 too long, 0 not a command), 1 blank\n"),
        (
            "{\"command\":\"compact\"}",
            "1 lines: 1 commands, 0 refused (0 not JSON, 0 too long, 0 not a command), 0 blank\n         1  compact\n",
        ),
    ];
    for &(input, summary) in table {
        let out = run(&["decode", "--summary"], input.as_bytes());
        assert_eq!(out.status.code(), Some(0), "{input:?}");
        assert_eq!(String::from_utf8(out.stderr).unwrap(), summary, "{input:?}");
    }
}

#[test]
fn decode_line_numbers_count_every_physical_line() {
    let input = concat!(
        "\n",
        "{\"command\":\"cancel\"}\n",
        " \t\n",
        "{\"command\":\"prompt\",\"text\":\"0123456789012345678901234567890123456789\"}\n",
        "[]\r\n",
        "\n",
        "{\"command\":\"compact\"}",
    );
    let expected = concat!(
        "2\t{\"command\":\"cancel\"}\n",
        "4\t{\"event\":\"command_error\",\"error\":\"command stream: line 4 is longer than 50 bytes\"}\n",
        "5\t{\"event\":\"command_error\",\"error\":\"expected a {\\\"command\\\": ...} object\"}\n",
        "7\t{\"command\":\"compact\"}\n",
    );
    assert_eq!(
        stdout_of(
            &["decode", "--line-numbers", "--max-line-len", "50"],
            input.as_bytes(),
            1
        ),
        expected
    );
}

#[test]
fn decode_reads_stdin_from_dash() {
    let input = b"{\"command\":\"cancel\"}\n";
    assert_eq!(
        stdout_of(&["decode", "-"], input, 0),
        "{\"command\":\"cancel\"}\n"
    );
}

#[test]
fn decode_file_errors_name_the_file_and_exit_2() {
    let table: &[(&[&str], &str)] = &[
        (
            &["decode", "/nonexistent/session.jsonl"],
            "serve-command: /nonexistent/session.jsonl: No such file or directory\n",
        ),
        (
            &["decode", "nope.jsonl"],
            "serve-command: nope.jsonl: No such file or directory\n",
        ),
        (&["decode", "/"], "serve-command: /: Is a directory\n"),
    ];
    for &(args, stderr) in table {
        let out = run(args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(String::from_utf8(out.stderr).unwrap(), stderr, "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    // Stdin a directory: named as stdin.
    let out = Command::new(BIN)
        .arg("decode")
        .stdin(std::fs::File::open("/").unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "serve-command: stdin: Is a directory\n"
    );
}

/// Runs the binary with `args`, `stdin`, and stdout a pipe whose reader has
/// already gone; returns the exit status and stderr.
#[track_caller]
// `std::io::pipe` is newer than the library's MSRV, but the `cli` feature
// needs Rust 1.88 anyway (proptest).
#[allow(clippy::incompatible_msrv)]
fn run_with_closed_stdout(args: &[&str], stdin: &[u8]) -> (Option<i32>, String) {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(writer)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let stdin = stdin.to_vec();
    // The child may stop reading at its first failed write.
    let feeder = std::thread::spawn(move || drop(input.write_all(&stdin)));
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    (out.status.code(), String::from_utf8(out.stderr).unwrap())
}

/// `/dev/full` for writing: every write fails with ENOSPC.
fn dev_full() -> std::fs::File {
    std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap()
}

#[test]
fn a_closed_stdout_ends_quietly_with_exit_0() {
    let lines = "{\"command\":\"nap\"}\n".repeat(100_000);
    let table: &[(&[&str], &[u8])] = &[
        (&["decode"], lines.as_bytes()),
        (&["decode", "--summary", "--line-numbers"], lines.as_bytes()),
        (&["encode", "cancel"], b""),
        (&["encode", "prompt", "-"], b"fix it\n"),
        (&["dict"], b""),
        (&["--help"], b""),
    ];
    for &(args, stdin) in table {
        assert_eq!(
            run_with_closed_stdout(args, stdin),
            (Some(0), String::new()),
            "{args:?}"
        );
    }
}

#[test]
fn decode_into_head_prints_one_line_and_nothing_on_stderr() {
    // The issue's check, literally, with decode's own exit status.
    let script = format!(
        "{{ yes '{{\"command\":\"cancel\"}}' | head -200000 | '{BIN}' decode; echo \"decode: $?\" >&2; }} | head -1"
    );
    let out = Command::new("sh").args(["-c", &script]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "{\"command\":\"cancel\"}\n"
    );
    assert_eq!(String::from_utf8(out.stderr).unwrap(), "decode: 0\n");
}

#[test]
fn a_failing_stdout_is_exit_2_with_one_message() {
    let table: &[(&[&str], &[u8])] = &[
        (&["decode"], b"{\"command\":\"cancel\"}\n"),
        (&["encode", "cancel"], b""),
        (&["dict"], b""),
        (&["--help"], b""),
        (&["--version"], b""),
    ];
    for &(args, stdin) in table {
        let mut child = Command::new(BIN)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(dev_full())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(stdin).unwrap();
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(
            String::from_utf8(out.stderr).unwrap(),
            "serve-command: stdout: No space left on device\n",
            "{args:?}"
        );
    }
}

#[test]
fn a_failing_stderr_never_panics() {
    // (args, stdin, exit status, stdout)
    let table: &[(&[&str], &[u8], i32, &str)] = &[
        // The summary is lost: exit 2, though there is nowhere to say why.
        (
            &["decode", "--summary"],
            b"{\"command\":\"cancel\"}\n",
            2,
            "{\"command\":\"cancel\"}\n",
        ),
        (&["decode", "/nonexistent"], b"", 2, ""),
        (&["decode", "--bogus"], b"", 2, ""),
        (&["encode", "prompt", "-"], b"\xff", 2, ""),
        (
            &["decode"],
            b"{\"command\":\"nap\"}\n",
            1,
            "{\"event\":\"command_error\",\"error\":\"unknown command: nap\"}\n",
        ),
    ];
    for &(args, stdin, status, stdout) in table {
        let mut child = Command::new(BIN)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(dev_full())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(stdin).unwrap();
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(status), "{args:?}");
        assert_eq!(String::from_utf8(out.stdout).unwrap(), stdout, "{args:?}");
    }
}

/// `serve-command --help`, whole: the one place that says what the
/// revisions are.
const TOP_HELP: &str = "Read and write the command lines of the serve protocol

Usage: serve-command [OPTIONS] <COMMAND>

Commands:
  decode        Decode command lines as an engine would
  encode        Encode one command as the line a controller writes (LF included)
  conform       Run the conformance vectors through another implementation
  corpus        Write a seed corpus for another fuzzer: near-miss command or event lines and their outcomes
  dict          Print a libFuzzer/AFL dictionary of the protocol's tokens
  shell         Encode and parse `!` command envelopes (`<user_shell_command>`), one JSON request per line
  tap           Sit between a controller and an engine: pass every byte through, judge every line
  trace         Attribute every event of a log of the wire: the command it answers, the turn it belongs to
  replay        Run a recorded session again against an engine, and compare the two conversations
  mock-engine   A deterministic engine with no model, for controllers' tests
  check-engine  Check an engine over its real stdio: what every engine must do
  fuzz-engine   Fuzz an engine: generated sessions, judged by the conversation's model
  help          Print this message or the help of the given subcommand(s)

Options:
  -r, --revision <REVISION>  Which revision of the wire to speak: v2 (default) or v1
  -h, --help                 Print help
  -V, --version              Print version

Revisions (--revision, before or after the subcommand; the wire carries no
version, so both ends must agree on one):
  v2  Upstream openseek's protocol today (serve_command::v2), the default:
      messages carry `content` (text and image parts), steers may be tagged,
      `jobs_snapshot` and `job_stop` are commands, and the engine predicts
      the next message itself after a turn (`prediction_result`).
  v1  The protocol's first revision, before content parts: messages carry `text`.

Examples:
  serve-command encode prompt \"what is this?\" --image shot.png | serve-command decode
  serve-command decode session.jsonl --summary
  serve-command conform -- ./my_impl
  serve-command tap --log wire.jsonl -- openseek serve
  serve-command trace wire.jsonl
  serve-command replay wire.jsonl -- ./my_engine
  serve-command mock-engine --script turns.jsonl < session.jsonl
  serve-command check-engine --report check.json -- ./my_engine
  serve-command fuzz-engine --time 60 -- ./my_engine
  serve-command --revision v1 encode prompt \"fix it\"
";

/// `--version` names the upstream file and commit of every rule set, as
/// docs/PROTOCOL.md does: the same lines, so the two cannot drift.
#[test]
fn the_version_names_the_upstream_sources_as_the_protocol_doc_does() {
    let version = stdout_of(&["--version"], b"", 0);
    let (first, sources) = version.split_once('\n').unwrap();
    assert_eq!(first, concat!("serve-command ", env!("CARGO_PKG_VERSION")));
    assert!(sources.starts_with("follows upstream openseek (moonbitlang/openseek):\n  v2 commands     protocol/command.mbt, reconstructed from the API listing @ fdf10827\n"), "{sources}");
    assert_eq!(sources.lines().count(), 14, "{sources}");
    // The pin is fdf10827 throughout: no rule is 642262b0's any more.
    assert!(!sources.contains("642262b0"), "{sources}");
    for line in [
        "  serve policy    internal/openseek/serve/state.mbt, reconstructed from the API listing @ fdf10827 (v1: @ 36797574)\n",
        "  serve loop      internal/openseek/serve/loop.mbt @ fdf10827 (the engine's own prediction)\n",
        "  v2 events       protocol/event.mbt @ fdf10827; parse.mbt, to_json.mbt reconstructed from the API listing @ fdf10827\n",
        "  v2 predictions  protocol/prediction.mbt @ fdf10827\n",
    ] {
        assert!(sources.contains(line), "{line}{sources}");
    }
    let doc = include_str!("../docs/PROTOCOL.md");
    assert!(
        doc.contains(&format!("```text\n{sources}```\n")),
        "{sources}"
    );
    // `-V` stays the short form.
    assert_eq!(stdout_of(&["-V"], b"", 0), format!("{first}\n"));
}

/// `encode predict` and `encode cancel-prediction` are gone with the
/// commands (fdf10827: the engine predicts by itself): clap refuses them as
/// any unknown subcommand, in either revision, and writes no line.
#[test]
fn encode_has_no_prediction_subcommands() {
    for (args, name) in [
        (&["encode", "predict", "p-1", "42"][..], "predict"),
        (&["encode", "cancel-prediction", "p-1"], "cancel-prediction"),
        (
            &["--revision", "v1", "encode", "predict", "p-1", "42"],
            "predict",
        ),
    ] {
        let out = run(args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(out.stdout, b"", "{args:?}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(
            stderr.starts_with(&format!("error: unrecognized subcommand '{name}'\n")),
            "{args:?}: {stderr}"
        );
    }
    // Nor does `encode --help` list them.
    let help = stdout_of(&["encode", "--help"], b"", 0);
    assert!(
        !help
            .lines()
            .any(|l| l.starts_with("  predict") || l.starts_with("  cancel-prediction")),
        "{help}"
    );
}

#[test]
fn the_top_level_help_explains_the_revisions_once() {
    assert_eq!(stdout_of(&["--help"], b"", 0), TOP_HELP);
    assert_eq!(stdout_of(&["help"], b"", 0), TOP_HELP);
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
        &["encode", "jobs-snapshot"],
        &["encode", "job-stop"],
        &["corpus"],
        &["dict"],
        &["conform"],
        &["tap"],
        &["trace"],
        &["mock-engine"],
        &["check-engine"],
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
    assert!(
        decode_help.contains("A blank line (only spaces, tabs and CRs) prints nothing"),
        "{decode_help}"
    );
    // Every subcommand takes `--revision` (it is global) in one line; the
    // top-level help alone says what the revisions are.
    for sub in [
        &["decode"][..],
        &["encode"],
        &["encode", "prompt"],
        &["encode", "goal", "set"],
        &["corpus"],
        &["dict"],
        &["conform"],
    ] {
        let args: Vec<&str> = sub.iter().copied().chain(["--help"]).collect();
        let help = stdout_of(&args, b"", 0);
        assert_eq!(
            help.matches("--revision <REVISION>").count(),
            1,
            "{args:?}:\n{help}"
        );
        assert_eq!(
            help.matches("Which revision of the wire to speak: v2 (default) or v1\n")
                .count(),
            1,
            "{args:?}:\n{help}"
        );
        for unsaid in [
            "Upstream openseek",
            "The protocol's first revision (`command.mbt`)",
        ] {
            assert!(
                !help.contains(unsaid),
                "{args:?} repeats {unsaid:?}:\n{help}"
            );
        }
    }
    assert_eq!(
        stdout_of(&["-V"], b"", 0),
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
            "--revision",
            "v1",
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
        // Each corpus file is its record's line, and the record is the
        // seed revision's verdict, and says so.
        let line = std::fs::read(dir.join("first/corpus").join(format!("line-{n:06}"))).unwrap();
        assert_eq!(record["line"].as_str().unwrap().as_bytes(), line);
        assert_eq!(record["revision"], "v1");
        match serve_command::v1::Command::from_slice(&line) {
            Ok(cmd) => {
                assert_eq!(record["ok"].as_str().unwrap(), cmd.to_line().trim_end());
                assert_eq!(
                    record["refused"].as_str(),
                    cmd.serve_refusal().map(serve_command::v2::Refusal::as_str),
                    "{record}"
                );
            }
            Err(e) => assert_eq!(record["error"].as_str().unwrap(), e.to_string()),
        }
        let keys = 3 + usize::from(record.get("refused").is_some());
        assert_eq!(record.as_object().unwrap().len(), keys, "{record}");
    }
    // The same seed writes the same corpus; another seed, another.
    assert_eq!(corpus("again", "7"), expected);
    assert_ne!(corpus("other", "8"), expected);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn corpus_refuses_a_folder_with_files_unless_forced() {
    let dir = std::env::temp_dir().join(format!("serve-command-force-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let path = dir.to_str().unwrap();
    let files = |sub: &str| {
        let mut names: Vec<String> = std::fs::read_dir(dir.join(sub))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    };
    assert_eq!(stdout_of(&["corpus", path, "--count", "5"], b"", 0), "");
    let five = std::fs::read_to_string(dir.join("expected.jsonl")).unwrap();
    // Again without --force: refused, nothing touched.
    let out = run(&["corpus", path, "--count", "3"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        format!(
            "serve-command: {path}: already holds files (--force empties {path}/corpus and replaces expected.jsonl)\n"
        )
    );
    assert_eq!(files("corpus").len(), 5);
    assert_eq!(
        std::fs::read_to_string(dir.join("expected.jsonl")).unwrap(),
        five
    );
    // A folder holding any file counts, even without a corpus in it.
    let other = dir.join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("notes.txt"), "mine").unwrap();
    assert_eq!(
        run(&["corpus", other.to_str().unwrap()], b"").status.code(),
        Some(2)
    );
    // With --force: the 3 lines the same seed gives, and no stale files.
    std::fs::write(dir.join("notes.txt"), "mine").unwrap();
    let args = ["corpus", path, "--count", "3", "--force"];
    assert_eq!(stdout_of(&args, b"", 0), "");
    assert_eq!(
        files("corpus"),
        ["line-000000", "line-000001", "line-000002"]
    );
    let three = std::fs::read_to_string(dir.join("expected.jsonl")).unwrap();
    assert_eq!(
        three,
        five.lines()
            .take(3)
            .map(|l| format!("{l}\n"))
            .collect::<String>()
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).unwrap(),
        "mine"
    );
    // An empty folder is fine without --force.
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let args = ["corpus", empty.to_str().unwrap(), "--count", "1"];
    assert_eq!(stdout_of(&args, b"", 0), "");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn dict_prints_the_fuzzing_dictionary() {
    let dict = stdout_of(&["dict", "--revision", "v1"], b"", 0);
    assert_eq!(
        dict,
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/src/command.dict")).unwrap()
    );
    assert!(
        dict.contains("qkey_submission_id=\"\\\"submission_id\\\":\"\n"),
        "{dict}"
    );
}

/// A fresh folder for one test's files.
fn scratch(test: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("serve-command-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes an executable shell script `name` into `dir`; returns its path.
fn script(dir: &std::path::Path, name: &str, body: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.to_str().unwrap().to_owned()
}

/// What `conform` should print for the crate's own `vectors` file, run
/// through a PROGRAM that agrees with every vector: (stdout, stderr). The
/// vectors whose line holds a LF are skipped, each with a note on stderr.
fn all_agree(vectors: &str) -> (String, String) {
    let mut sent = 0;
    let mut notes = String::new();
    for (i, line) in vectors.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        if v["line"].as_str().is_some_and(|line| line.contains('\n')) {
            notes += &format!(
                "skipped vector {} ({}): its line holds a LF, which the line protocol cannot carry\n",
                i + 1,
                v["why"].as_str().unwrap()
            );
        } else {
            sent += 1;
        }
    }
    (format!("{sent}/{sent} vectors agree\n"), notes)
}

#[test]
fn conform_passes_the_crate_itself_on_its_vectors() {
    let out = run(
        &[
            "--revision",
            "v1",
            "conform",
            "--",
            BIN,
            "--revision",
            "v1",
            "decode",
            "--output",
            "verdict",
        ],
        b"",
    );
    let (stdout, stderr) = all_agree(include_str!("vectors/commands.jsonl"));
    // Today: 343 of 345 sent, the two with a LF between tokens skipped.
    assert_eq!(stdout, "343/343 vectors agree\n");
    assert_eq!(stderr.lines().count(), 2, "{stderr}");
    assert_eq!(String::from_utf8(out.stdout).unwrap(), stdout);
    assert_eq!(String::from_utf8(out.stderr).unwrap(), stderr);
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn conform_runs_a_corpus_file() {
    let dir = scratch("conform-corpus");
    let path = dir.to_str().unwrap();
    assert_eq!(
        stdout_of(&["corpus", path, "--count", "200", "--seed", "10"], b"", 0),
        ""
    );
    let vectors = dir.join("expected.jsonl");
    let vectors = vectors.to_str().unwrap();
    // One of its commands the engine declines: a blank goal.
    let refused: Vec<String> = std::fs::read_to_string(vectors)
        .unwrap()
        .lines()
        .filter(|l| l.contains("\"refused\":"))
        .map(str::to_owned)
        .collect();
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert!(
        refused[0].contains(",\"refused\":\"goal text must not be blank\","),
        "{refused:?}"
    );
    let decode = [BIN, "decode", "--output", "verdict"];
    let args = [&["conform", "--vectors", vectors, "--"][..], &decode].concat();
    assert_eq!(stdout_of(&args, b"", 0), "200/200 vectors agree\n");
    // And under the engine's policy, through a decoder under it.
    let args = [
        &["conform", "--serve-policy", "--vectors", vectors, "--"][..],
        &decode,
        &["--serve-policy"],
    ]
    .concat();
    assert_eq!(stdout_of(&args, b"", 0), "200/200 vectors agree\n");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Vectors for the tests below: each kind of expectation, a raw-bytes line,
/// one without `why`, and one that cannot be sent.
const SMALL_VECTORS: &str = r#"{"line": "{\"command\":\"cancel\"}", "ok": "{\"command\":\"cancel\"}", "why": "cancel"}
{"line": "{\"command\":\"a\\nb\"}", "error": "unknown command: a\nb", "why": "a LF in the name"}

{"line_base64": "77u/eyJjb21tYW5kIjoiY2FuY2VsIn0=", "not_json": true, "why": "a BOM"}
{"line": "{\"command\":\n\"cancel\"}", "ok": "{\"command\":\"cancel\"}", "why": "a LF between tokens"}
{"line": "[]", "error": "expected a {\"command\": ...} object"}
"#;

/// The right answers to SMALL_VECTORS, as a shell `printf` format.
const SMALL_ANSWERS: &str = r#"OK {"command":"cancel"}\nERR unknown command: a\\nb\nNOTJSON\nERR expected a {"command": ...} object\n"#;

#[test]
fn conform_reports_each_disagreement_and_each_misbehaviour() {
    let dir = scratch("conform");
    let vectors = dir.join("vectors.jsonl");
    std::fs::write(&vectors, SMALL_VECTORS).unwrap();
    let skipped = "skipped vector 5 (a LF between tokens): its line holds a LF, which the line protocol cannot carry\n";
    let right = format!("cat >/dev/null; printf '{SMALL_ANSWERS}'");
    // (script name, body, stdout, stderr with {} for the script's path and
    // {skipped} for the note, status)
    let table: &[(&str, String, String, &str, i32)] = &[
        ("crate", format!("exec '{BIN}' decode --output verdict"), "4/4 vectors agree\n".into(), skipped, 0),
        ("right", right.clone(), "4/4 vectors agree\n".into(), skipped, 0),
        (
            "one-wrong",
            "cat >/dev/null; printf 'OK {\"command\":\"cancel\"}\\nERR unknown command: a\\\\nb\\nNOTJSON\\nNOTJSON\\n'".into(),
            "vector 6\n  line:     \"[]\"\n  expected: ERR expected a {\"command\": ...} object\n  got:      NOTJSON\n3/4 vectors agree\n".into(),
            skipped,
            1,
        ),
        (
            "crlf",
            format!("'{BIN}' decode --output verdict | sed 's/$/\\r/'"),
            "vector 1: cancel\n  line:     \"{\\\"command\\\":\\\"cancel\\\"}\"\n  expected: OK {\"command\":\"cancel\"}\n  got:      OK {\"command\":\"cancel\"}\\r\n\
                 vector 2: a LF in the name\n  line:     \"{\\\"command\\\":\\\"a\\\\nb\\\"}\"\n  expected: ERR unknown command: a\\nb\n  got:      ERR unknown command: a\\nb\\r\n\
                 vector 4: a BOM\n  line:     base64 77u/eyJjb21tYW5kIjoiY2FuY2VsIn0=\n  expected: NOTJSON\n  got:      NOTJSON\\r\n\
                 vector 6\n  line:     \"[]\"\n  expected: ERR expected a {\"command\": ...} object\n  got:      ERR expected a {\"command\": ...} object\\r\n\
                 0/4 vectors agree\n".into(),
            skipped,
            1,
        ),
        (
            "dies",
            "head -c 23 >/dev/null; echo 'OK {\"command\":\"cancel\"}'; exit 3".into(),
            String::new(),
            "{skipped}serve-command: {} exited with status 3 (after 1 of 4 lines)\n",
            2,
        ),
        (
            "killed",
            "kill -9 $$".into(),
            String::new(),
            "{skipped}serve-command: {} was killed by signal 9 (after 0 of 4 lines)\n",
            2,
        ),
        (
            "too-few",
            "cat >/dev/null; printf 'OK {\"command\":\"cancel\"}\\nNOTJSON\\nNOTJSON\\n'".into(),
            String::new(),
            "{skipped}serve-command: {} answered 3 lines for 4\n",
            2,
        ),
        (
            "too-many",
            format!("{right}; echo NOTJSON"),
            String::new(),
            "{skipped}serve-command: {} answered 5 lines for 4\n",
            2,
        ),
        (
            "silent",
            "cat >/dev/null".into(),
            String::new(),
            "{skipped}serve-command: {} answered 0 lines for 4\n",
            2,
        ),
    ];
    for (name, body, stdout, stderr, status) in table {
        let path = script(&dir, name, body);
        let args = [
            "conform",
            "--vectors",
            vectors.to_str().unwrap(),
            "--",
            &path,
        ];
        let out = run(&args, b"");
        assert_eq!(String::from_utf8(out.stdout).unwrap(), *stdout, "{name}");
        assert_eq!(
            String::from_utf8(out.stderr).unwrap(),
            stderr.replace("{skipped}", skipped).replace("{}", &path),
            "{name}"
        );
        assert_eq!(out.status.code(), Some(*status), "{name}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Runs `conform` on SMALL_VECTORS through `sh -c script`: (stdout,
/// stderr, exit status).
fn conform_through_sh(test: &str, timeout: &str, script: &str) -> (String, String, Option<i32>) {
    let dir = scratch(test);
    let vectors = dir.join("vectors.jsonl");
    std::fs::write(&vectors, SMALL_VECTORS).unwrap();
    let args = [
        "conform",
        "--timeout",
        timeout,
        "--vectors",
        vectors.to_str().unwrap(),
        "--",
        "sh",
        "-c",
        script,
    ];
    let out = run(&args, b"");
    std::fs::remove_dir_all(&dir).unwrap();
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
        out.status.code(),
    )
}

const SMALL_SKIPPED: &str = "skipped vector 5 (a LF between tokens): its line holds a LF, which the line protocol cannot carry\n";

#[test]
fn conform_stops_a_program_that_writes_without_end() {
    // 64 MiB is more than any answer to 4 short lines; `yes` never stops.
    let start = std::time::Instant::now();
    let got = conform_through_sh("conform-endless", "60", "exec yes");
    assert!(start.elapsed() < std::time::Duration::from_secs(30));
    assert_eq!(
        got,
        (
            String::new(),
            format!(
                "{SMALL_SKIPPED}serve-command: sh wrote more than 64 MiB for 4 lines; killed it\n"
            ),
            Some(2)
        )
    );
    // Endless too, without a single LF.
    let got = conform_through_sh(
        "conform-endless-line",
        "60",
        "exec tr '\\000' x < /dev/zero",
    );
    assert_eq!(
        got,
        (
            String::new(),
            format!(
                "{SMALL_SKIPPED}serve-command: sh wrote more than 64 MiB for 4 lines; killed it\n"
            ),
            Some(2)
        )
    );
}

#[test]
fn conform_kills_a_program_that_closes_its_stdout_and_runs_on() {
    // Its stdout ends at once, but it has not exited: past --timeout it is
    // killed, its answers (none) not judged.
    let start = std::time::Instant::now();
    let got = conform_through_sh("conform-closed", "0.5", "exec >&-; exec sleep 60");
    assert!(start.elapsed() < std::time::Duration::from_secs(20));
    assert_eq!(
        got,
        (
            String::new(),
            format!("{SMALL_SKIPPED}serve-command: sh did not finish within 500ms; killed it\n"),
            Some(2)
        )
    );
}

#[test]
fn conform_shows_control_characters_in_answers() {
    // A tab, NUL, ESC, DEL, a lone CR, U+0085 (a C1 control), invalid UTF-8
    // (two bytes, two U+FFFD) and a character that is not a control (é).
    let script = r#"cat >/dev/null; printf 'OK {"command":"cancel"}\t\000\nERR unknown command: a\\nb\033\177\nNOT\rJSON\302\205\nERR \377\376 \303\251\n'"#;
    let (stdout, stderr, status) = conform_through_sh("conform-control", "60", script);
    assert_eq!(
        stdout,
        concat!(
            "vector 1: cancel\n",
            "  line:     \"{\\\"command\\\":\\\"cancel\\\"}\"\n",
            "  expected: OK {\"command\":\"cancel\"}\n",
            "  got:      OK {\"command\":\"cancel\"}\\t\\u{0}\n",
            "vector 2: a LF in the name\n",
            "  line:     \"{\\\"command\\\":\\\"a\\\\nb\\\"}\"\n",
            "  expected: ERR unknown command: a\\nb\n",
            "  got:      ERR unknown command: a\\nb\\u{1b}\\u{7f}\n",
            "vector 4: a BOM\n",
            "  line:     base64 77u/eyJjb21tYW5kIjoiY2FuY2VsIn0=\n",
            "  expected: NOTJSON\n",
            "  got:      NOT\\rJSON\\u{85}\n",
            "vector 6\n",
            "  line:     \"[]\"\n",
            "  expected: ERR expected a {\"command\": ...} object\n",
            "  got:      ERR \u{fffd}\u{fffd} \u{e9}\n",
            "0/4 vectors agree\n",
        )
    );
    assert_eq!(stderr, SMALL_SKIPPED);
    assert_eq!(status, Some(1));
}

#[test]
fn conform_kills_a_program_that_hangs() {
    let dir = scratch("conform-hang");
    // `exec`: the killed process is the one holding the pipes.
    let table = [
        ("reads-nothing", "exec sleep 60".to_owned()),
        ("reads-all", "cat >/dev/null; exec sleep 60".to_owned()),
        (
            "answers-then-waits",
            format!("'{BIN}' decode --output verdict; exec sleep 60"),
        ),
    ];
    for (name, body) in table {
        let path = script(&dir, name, &body);
        let start = std::time::Instant::now();
        let out = run(&["conform", "--timeout", "0.5", "--", &path], b"");
        assert!(
            start.elapsed() < std::time::Duration::from_secs(20),
            "{name}"
        );
        assert_eq!(out.status.code(), Some(2), "{name}");
        assert_eq!(String::from_utf8(out.stdout).unwrap(), "", "{name}");
        assert_eq!(
            String::from_utf8(out.stderr).unwrap(),
            format!("serve-command: {path} did not finish within 500ms; killed it\n"),
            "{name}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn conform_usage_and_vectors_errors_exit_2() {
    let dir = scratch("conform-usage");
    let bad = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_owned()
    };
    let table: Vec<(Vec<String>, String)> = vec![
        (
            vec!["--".into(), "/nonexistent/impl".into()],
            "serve-command: /nonexistent/impl: No such file or directory\n".into(),
        ),
        (
            vec![
                "--vectors".into(),
                "/nonexistent/v.jsonl".into(),
                "--".into(),
                "true".into(),
            ],
            "serve-command: /nonexistent/v.jsonl: No such file or directory\n".into(),
        ),
    ];
    let files: &[(&str, &str, &str)] = &[
        (
            "not-json",
            "{\"line\": \"x\", \"ok\": \"y\"}\nnope\n",
            "line 2: not JSON: expected ident at line 1 column 2",
        ),
        ("not-object", "[1]\n", "line 1: not a JSON object"),
        (
            "two-lines",
            "{\"line\":\"x\",\"line_base64\":\"eA==\",\"not_json\":true}\n",
            "line 1: needs exactly one of \"line\" and \"line_base64\"",
        ),
        (
            "no-line",
            "{\"not_json\":true}\n",
            "line 1: needs exactly one of \"line\" and \"line_base64\"",
        ),
        (
            "line-number",
            "{\"line\":1,\"not_json\":true}\n",
            "line 1: \"line\" is not a string",
        ),
        (
            "bad-base64",
            "{\"line_base64\":\"eA=\",\"not_json\":true}\n",
            "line 1: \"line_base64\" is not base64: Invalid padding",
        ),
        (
            "two-outcomes",
            "{\"line\":\"x\",\"ok\":\"x\",\"error\":\"y\"}\n",
            "line 1: needs exactly one of \"ok\", \"error\" and \"not_json\"",
        ),
        (
            "no-outcome",
            "{\"line\":\"x\"}\n",
            "line 1: needs exactly one of \"ok\", \"error\" and \"not_json\"",
        ),
        (
            "not-json-false",
            "{\"line\":\"x\",\"not_json\":false}\n",
            "line 1: \"not_json\" is not true",
        ),
        (
            "why-number",
            "{\"line\":\"x\",\"not_json\":true,\"why\":1}\n",
            "line 1: \"why\" is not a string",
        ),
        (
            "refused-error",
            "{\"line\":\"x\",\"error\":\"y\",\"refused\":\"z\"}\n",
            "line 1: \"refused\" needs \"ok\": the engine refuses only commands",
        ),
        (
            "refused-not-json",
            "{\"line\":\"x\",\"not_json\":true,\"refused\":\"z\"}\n",
            "line 1: \"refused\" needs \"ok\": the engine refuses only commands",
        ),
        (
            "refused-number",
            "{\"line\":\"x\",\"ok\":\"x\",\"refused\":1}\n",
            "line 1: \"refused\" is not a string",
        ),
        (
            "revision-v3",
            "{\"line\":\"x\",\"not_json\":true,\"revision\":\"v3\"}\n",
            "line 1: \"revision\" is \"v3\", not \"v1\" or \"v2\"",
        ),
        (
            "revision-number",
            "{\"line\":\"x\",\"not_json\":true,\"revision\":2}\n",
            "line 1: \"revision\" is not a string",
        ),
        (
            "two-revisions",
            concat!(
                "{\"line\":\"x\",\"not_json\":true}\n",
                "{\"line\":\"x\",\"not_json\":true,\"revision\":\"v2\"}\n",
                "{\"line\":\"x\",\"not_json\":true,\"revision\":\"v2\"}\n",
                "{\"line\":\"x\",\"not_json\":true,\"revision\":\"v1\"}\n",
            ),
            "line 4: \"revision\" is \"v1\", but line 2 says \"v2\"",
        ),
    ];
    let mut table = table;
    for &(name, text, message) in files {
        let path = bad(name, text);
        table.push((
            vec!["--vectors".into(), path.clone(), "--".into(), "true".into()],
            format!("serve-command: {path}: {message}\n"),
        ));
    }
    for (args, stderr) in &table {
        let args: Vec<&str> = ["conform"]
            .into_iter()
            .chain(args.iter().map(String::as_str))
            .collect();
        let out = run(&args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(String::from_utf8(out.stderr).unwrap(), *stderr, "{args:?}");
        assert_eq!(out.stdout, b"", "{args:?}");
    }
    // Usage errors: no program, no `--`, a bad timeout.
    for args in [
        &["conform"][..],
        &["conform", "true"],
        &["conform", "--timeout", "0", "--", "true"],
        &["conform", "--timeout", "soon", "--", "true"],
    ] {
        let out = run(args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(!out.stderr.is_empty(), "{args:?}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

// The later revision, `--revision v2`.

/// The lines of the `--revision v2` decode tests: content, images (as parts
/// and as legacy data URLs), a tagged steer, job commands, and errors.
const V2_LINES: &str = concat!(
    "{\"command\":\"prompt\",\"content\":[{\"type\":\"text\",\"text\":\"a\"}]}\n",
    "{\"command\":\"prompt\",\"text\":\"x\",\"images\":[\"data:image/png;base64,iVBORw0KGgo=\"]}\n",
    "{\"command\":\"steer\",\"content\":[{\"type\":\"image\",\"media_type\":\"image/gif\",\"data\":\"R0lGODlh\"}],\"submission_id\":\"s1\"}\n",
    "{\"command\":\"job_stop\",\"request_id\":\"r\",\"generation\":\"g1\",\"job_id\":\"j.1\"}\n",
    "{\"command\":\"jobs_snapshot\",\"request_id\":\"r-1\"}\n",
    "\n",
    "{\"command\":\"jobs_snapshot\",\"request_id\":\"\"}\n",
    "{\"command\":\"prompt\",\"content\":7}\n",
    "{\"command\":\"steer\",\"submission_id\":7}\n",
    "{\"command\":\"prompt\",\"content\":[{\"type\":\"image\",\"media_type\":\"image/jpeg\",\"data\":\"iVBORw0KGgo=\"}]}\n",
    "{\"command\":\"prompt\",\"content\":[{\"type\":\"image\",\"media_type\":\"image/png\",\"data\":\"iVBORw0KGgo\"}]}\n",
    "{\"command\":\"steer\",\"text\":\"x\"}\n",
    "not json\n",
    "{\"command\":\"goal\",\"action\":\"clear\"}\n",
);

#[test]
fn decode_revision_v2_answers_as_the_later_engine() {
    // Checked line for line against oracle-latest.
    let verdicts = concat!(
        "OK {\"command\":\"prompt\",\"content\":\"a\"}\n",
        "OK {\"command\":\"prompt\",\"content\":[{\"type\":\"text\",\"text\":\"x\"},{\"type\":\"image\",\"media_type\":\"image/png\",\"data\":\"iVBORw0KGgo=\"}]}\n",
        "OK {\"command\":\"steer\",\"kind\":\"prompt\",\"content\":[{\"type\":\"image\",\"media_type\":\"image/gif\",\"data\":\"R0lGODlh\"}],\"submission_id\":\"s1\"}\n",
        "OK {\"command\":\"job_stop\",\"request_id\":\"r\",\"generation\":\"g1\",\"job_id\":\"j.1\"}\n",
        "OK {\"command\":\"jobs_snapshot\",\"request_id\":\"r-1\"}\n",
        "NOTJSON\n",
        "ERR invalid background job command\n",
        "ERR invalid content: JsonDecodeError((, expected content string or array))\n",
        "ERR expected a string \"submission_id\" field\n",
        "ERR invalid content: JsonDecodeError((/0, invalid image: image declares image/jpeg but bytes identify image/png))\n",
        "ERR invalid content: JsonDecodeError((/0, invalid image: image data must be canonical padded base64))\n",
        "OK {\"command\":\"steer\",\"kind\":\"prompt\",\"content\":\"x\"}\n",
        "NOTJSON\n",
        "OK {\"command\":\"goal\",\"action\":\"clear\"}\n",
    );
    let args = ["decode", "--revision", "v2", "--output", "verdict"];
    assert_eq!(stdout_of(&args, V2_LINES.as_bytes(), 0), verdicts);
    // v2 is the default.
    let args = ["decode", "--output", "verdict"];
    assert_eq!(stdout_of(&args, V2_LINES.as_bytes(), 0), verdicts);
    let events = concat!(
        "{\"command\":\"prompt\",\"content\":\"a\"}\n",
        "{\"command\":\"prompt\",\"content\":[{\"type\":\"text\",\"text\":\"x\"},{\"type\":\"image\",\"media_type\":\"image/png\",\"data\":\"iVBORw0KGgo=\"}]}\n",
        "{\"command\":\"steer\",\"kind\":\"prompt\",\"content\":[{\"type\":\"image\",\"media_type\":\"image/gif\",\"data\":\"R0lGODlh\"}],\"submission_id\":\"s1\"}\n",
        "{\"command\":\"job_stop\",\"request_id\":\"r\",\"generation\":\"g1\",\"job_id\":\"j.1\"}\n",
        "{\"command\":\"jobs_snapshot\",\"request_id\":\"r-1\"}\n",
        "{\"event\":\"command_error\",\"error\":\"invalid background job command\"}\n",
        "{\"event\":\"command_error\",\"error\":\"invalid content: JsonDecodeError((, expected content string or array))\"}\n",
        "{\"event\":\"command_error\",\"error\":\"expected a string \\\"submission_id\\\" field\"}\n",
        "{\"event\":\"command_error\",\"error\":\"invalid content: JsonDecodeError((/0, invalid image: image declares image/jpeg but bytes identify image/png))\"}\n",
        "{\"event\":\"command_error\",\"error\":\"invalid content: JsonDecodeError((/0, invalid image: image data must be canonical padded base64))\"}\n",
        "{\"command\":\"steer\",\"kind\":\"prompt\",\"content\":\"x\"}\n",
        "{\"event\":\"command_error\",\"error\":\"command stream: expected a JSON value at byte 0\"}\n",
        "{\"command\":\"goal\",\"action\":\"clear\"}\n",
    );
    assert_eq!(
        stdout_of(&["decode", "--revision", "v2"], V2_LINES.as_bytes(), 1),
        events
    );
    // The same lines read as the seed's revision: a v1 engine knows no
    // content and no job commands.
    let v1 = concat!(
        "ERR expected a string \"text\" field\n",
        "OK {\"command\":\"prompt\",\"text\":\"x\"}\n",
        "ERR expected a string \"text\" field\n",
        "ERR unknown command: job_stop\n",
        "ERR unknown command: jobs_snapshot\n",
        "NOTJSON\n",
        "ERR unknown command: jobs_snapshot\n",
        "ERR expected a string \"text\" field\n",
        "ERR expected a string \"text\" field\n",
        "ERR expected a string \"text\" field\n",
        "ERR expected a string \"text\" field\n",
        "OK {\"command\":\"steer\",\"kind\":\"prompt\",\"text\":\"x\"}\n",
        "NOTJSON\n",
        "OK {\"command\":\"goal\",\"action\":\"clear\"}\n",
    );
    for args in [
        &["decode", "--revision", "v1", "--output", "verdict"][..],
        &["--revision", "v1", "decode", "--output", "verdict"],
    ] {
        assert_eq!(stdout_of(args, V2_LINES.as_bytes(), 0), v1, "{args:?}");
    }
    // Only the revisions there are.
    let out = run(&["decode", "--revision", "v3"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(out.stdout, b"");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("invalid value 'v3' for '--revision <REVISION>'"),
        "{stderr}"
    );
}

#[test]
fn decode_summary_counts_v2_commands_by_name() {
    let out = run(
        &[
            "decode",
            "--revision",
            "v2",
            "--summary",
            "--output",
            "verdict",
        ],
        V2_LINES.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        concat!(
            "14 lines: 7 commands, 6 refused (1 not JSON, 0 too long, 5 not a command), 1 blank\n",
            "         1  error: command stream: expected a JSON value\n",
            "         1  error: expected a string \"submission_id\" field\n",
            "         1  error: invalid background job command\n",
            "         1  error: invalid content: JsonDecodeError((, expected content string or array))\n",
            "         1  error: invalid content: JsonDecodeError((/0, invalid image: image data must be canonical padded base64))\n",
            "         1  error: invalid content: JsonDecodeError((/0, invalid image: image declares image/jpeg but bytes identify image/png))\n",
            "         1  goal clear\n",
            "         1  job_stop\n",
            "         1  jobs_snapshot\n",
            "         2  prompt\n",
            "         2  steer\n",
        )
    );
}

/// The smallest PNG the sniffer takes: its 8-byte signature.
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n";

#[test]
fn encode_revision_v2_writes_what_the_v2_encoder_writes() {
    let dir = scratch("encode-v2");
    let file = |name: &str, bytes: &[u8]| {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        path.to_str().unwrap().to_owned()
    };
    let png = file("tiny.png", PNG);
    let gif = file("tiny.gif", b"GIF89a");
    let table: &[(&[&str], &str)] = &[
        (
            &["encode", "--revision", "v2", "prompt", "x", "--image", &png],
            r#"{"command":"prompt","content":[{"type":"text","text":"x"},{"type":"image","media_type":"image/png","data":"iVBORw0KGgo="}]}"#,
        ),
        // `--revision` after the command's name too; images in order.
        (
            &[
                "encode",
                "prompt",
                "two",
                "--image",
                &gif,
                "--revision",
                "v2",
                "--image",
                &png,
                "--submission-id",
                "s1",
            ],
            r#"{"command":"prompt","content":[{"type":"text","text":"two"},{"type":"image","media_type":"image/gif","data":"R0lGODlh"},{"type":"image","media_type":"image/png","data":"iVBORw0KGgo="}],"submission_id":"s1"}"#,
        ),
        (
            &["encode", "--revision", "v2", "prompt", "fix it"],
            r#"{"command":"prompt","content":"fix it"}"#,
        ),
        (
            &["encode", "--revision", "v2", "steer", "look"],
            r#"{"command":"steer","kind":"prompt","content":"look"}"#,
        ),
        (
            &[
                "encode",
                "--revision",
                "v2",
                "steer",
                "/diff",
                "--kind",
                "command",
                "--submission-id",
                "s2",
                "--image",
                &png,
                // The engine refuses a command steer with an image.
                "--allow-refused",
            ],
            r#"{"command":"steer","kind":"command","content":[{"type":"text","text":"/diff"},{"type":"image","media_type":"image/png","data":"iVBORw0KGgo="}],"submission_id":"s2"}"#,
        ),
        (
            &["encode", "--revision", "v2", "jobs-snapshot", "req-1"],
            r#"{"command":"jobs_snapshot","request_id":"req-1"}"#,
        ),
        (
            &[
                "encode",
                "--revision",
                "v2",
                "job-stop",
                "req-1",
                "gen-3",
                "job.7",
            ],
            r#"{"command":"job_stop","request_id":"req-1","generation":"gen-3","job_id":"job.7"}"#,
        ),
        (
            &["encode", "--revision", "v2", "compact"],
            r#"{"command":"compact"}"#,
        ),
        (
            &["encode", "--revision", "v2", "cancel"],
            r#"{"command":"cancel"}"#,
        ),
        (
            &[
                "encode",
                "--revision",
                "v2",
                "goal",
                "set",
                "ship",
                "--auto",
            ],
            r#"{"command":"goal","action":"set","text":"ship","auto":true}"#,
        ),
        (
            &["encode", "--revision", "v2", "goal", "clear"],
            r#"{"command":"goal","action":"clear"}"#,
        ),
        (
            &["encode", "--revision", "v2", "approval", "a1", "--deny"],
            r#"{"command":"approval","id":"a1","allow":false}"#,
        ),
        // The seed's revision, said out loud.
        (
            &["encode", "--revision", "v1", "steer", "look"],
            r#"{"command":"steer","kind":"prompt","text":"look"}"#,
        ),
    ];
    for &(args, line) in table {
        assert_eq!(stdout_of(args, b"", 0), format!("{line}\n"), "{args:?}");
        // v2 is the default: the same without the flag.
        if let Some(at) = args.windows(2).position(|w| w == ["--revision", "v2"]) {
            let default = [&args[..at], &args[at + 2..]].concat();
            assert_eq!(
                stdout_of(&default, b"", 0),
                format!("{line}\n"),
                "{default:?}"
            );
        }
    }
    // A TEXT of `-` is stdin, with images after it.
    let args = ["encode", "--revision", "v2", "prompt", "-", "--image", &png];
    assert_eq!(
        stdout_of(&args, b"two\nlines\n", 0),
        "{\"command\":\"prompt\",\"content\":[{\"type\":\"text\",\"text\":\"two\\nlines\"},{\"type\":\"image\",\"media_type\":\"image/png\",\"data\":\"iVBORw0KGgo=\"}]}\n"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn encode_refuses_what_the_revision_cannot_carry() {
    let dir = scratch("encode-refusals");
    let file = |name: &str, bytes: &[u8]| {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        path.to_str().unwrap().to_owned()
    };
    let png = file("tiny.png", PNG);
    let text = file("notes.txt", b"not an image\n");
    let bmp = file("old.bmp", b"BM\0\0");
    let empty = file("empty.png", b"");
    let mut big = PNG.to_vec();
    big.resize(5 * 1024 * 1024 + 1, 0);
    let big = file("big.png", &big);
    let missing = dir.join("missing.png").to_str().unwrap().to_owned();
    let table: &[(&[&str], String)] = &[
        (
            &["encode", "--revision", "v2", "prompt", "x", "--image", &text],
            format!("--image {text}: expected PNG, JPEG, GIF, or WebP image bytes"),
        ),
        (
            &["encode", "--revision", "v2", "steer", "x", "--image", &png, "--image", &bmp],
            format!("--image {bmp}: expected PNG, JPEG, GIF, or WebP image bytes"),
        ),
        (
            &["encode", "--revision", "v2", "prompt", "x", "--image", &empty],
            format!("--image {empty}: expected PNG, JPEG, GIF, or WebP image bytes"),
        ),
        (
            &["encode", "--revision", "v2", "prompt", "x", "--image", &big],
            format!("--image {big}: image exceeds the 5 MiB limit"),
        ),
        (
            &["encode", "--revision", "v2", "prompt", "x", "--image", &missing],
            format!("--image {missing}: No such file or directory"),
        ),
        (
            &["encode", "--revision", "v1", "prompt", "x", "--image", &png],
            "--image needs --revision v2: v1, the protocol's first revision, has no images".into(),
        ),
        (
            &["encode", "--revision", "v1", "steer", "x", "--image", &png],
            "--image needs --revision v2: v1, the protocol's first revision, has no images".into(),
        ),
        (
            &["--revision", "v1", "encode", "steer", "x", "--submission-id", "s1"],
            "steer --submission-id needs --revision v2: v1, the protocol's first revision, has no tagged steers".into(),
        ),
        (
            &["encode", "jobs-snapshot", "r", "--revision", "v1"],
            "jobs-snapshot needs --revision v2: v1, the protocol's first revision, has no job commands".into(),
        ),
        (
            &["encode", "--revision", "v1", "job-stop", "r", "g", "j"],
            "job-stop needs --revision v2: v1, the protocol's first revision, has no job commands".into(),
        ),
        // Lines the v2 decoder refuses, with its message: an engine would
        // answer them with `command_error`.
        (
            &["encode", "job-stop", "r1", "..", "j1"],
            "invalid background job command".into(),
        ),
        (
            &["encode", "job-stop", "r1", "g1", "."],
            "invalid background job command".into(),
        ),
        (
            &["encode", "job-stop", "", "g1", "j1"],
            "invalid background job command".into(),
        ),
        (
            &["encode", "job-stop", "r1", "g/1", "j1"],
            "invalid background job command".into(),
        ),
        (
            &["encode", "jobs-snapshot", ""],
            "invalid background job command".into(),
        ),
        (
            &["encode", "--revision", "v2", "jobs-snapshot", ""],
            "invalid background job command".into(),
        ),
    ];
    for (args, message) in table {
        // A refusal reads no stdin: TEXT `-` would have been an error too.
        let out = run(args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(out.stdout, b"", "{args:?}");
        assert_eq!(
            String::from_utf8(out.stderr).unwrap(),
            format!("serve-command: {message}\n"),
            "{args:?}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn encode_revision_v2_pipes_into_decode_revision_v2() {
    let dir = scratch("encode-decode-v2");
    let png = dir.join("tiny.png");
    std::fs::write(&png, PNG).unwrap();
    let mut encode = Command::new(BIN)
        .args(["encode", "--revision", "v2", "steer", "see", "--image"])
        .arg(&png)
        .args(["--submission-id", "s1"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let decode = Command::new(BIN)
        .args(["decode", "--revision", "v2"])
        .stdin(encode.stdout.take().unwrap())
        .output()
        .unwrap();
    assert_eq!(encode.wait().unwrap().code(), Some(0));
    assert_eq!(decode.status.code(), Some(0));
    assert_eq!(
        String::from_utf8(decode.stdout).unwrap(),
        "{\"command\":\"steer\",\"kind\":\"prompt\",\"content\":[{\"type\":\"text\",\"text\":\"see\"},{\"type\":\"image\",\"media_type\":\"image/png\",\"data\":\"iVBORw0KGgo=\"}],\"submission_id\":\"s1\"}\n"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn conform_revision_v2_passes_the_crate_itself_on_the_v2_vectors() {
    let (stdout, stderr) = all_agree(include_str!("vectors/commands-v2.jsonl"));
    // Today: all 455 sent, none holds a LF.
    assert_eq!(stdout, "653/653 vectors agree\n");
    assert_eq!(stderr, "");
    // The default revision, and said out loud on either side.
    for args in [
        &["conform", "--", BIN, "decode", "--output", "verdict"][..],
        &[
            "conform",
            "--revision",
            "v2",
            "--",
            BIN,
            "decode",
            "--revision",
            "v2",
            "--output",
            "verdict",
        ],
    ] {
        let out = run(args, b"");
        assert_eq!(String::from_utf8(out.stdout).unwrap(), stdout, "{args:?}");
        assert_eq!(String::from_utf8(out.stderr).unwrap(), stderr, "{args:?}");
        assert_eq!(out.status.code(), Some(0), "{args:?}");
    }
    // A v1 decoder does not pass them: the revision chose the v2 vectors.
    let out = run(
        &[
            "conform",
            "--",
            BIN,
            "decode",
            "--revision",
            "v1",
            "--output",
            "verdict",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn corpus_and_dict_revision_v2() {
    let dir = scratch("corpus-v2");
    // Writes 60 lines with `seed` into `dir/sub`; returns its expected.jsonl.
    let corpus = |sub: &str, seed: &str, revision: &str| {
        let out = dir.join(sub);
        let args = [
            "corpus",
            out.to_str().unwrap(),
            "--count",
            "60",
            "--seed",
            seed,
            "--revision",
            revision,
        ];
        assert_eq!(stdout_of(&args, b"", 0), "");
        std::fs::read_to_string(out.join("expected.jsonl")).unwrap()
    };
    let expected = corpus("first", "18", "v2");
    let records: Vec<serde_json::Value> = expected
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 60);
    for (n, record) in records.iter().enumerate() {
        // Each corpus file is its record's line, and the record the v2 decoder's verdict.
        let line = std::fs::read(dir.join("first/corpus").join(format!("line-{n:06}"))).unwrap();
        assert_eq!(record["line"].as_str().unwrap().as_bytes(), line);
        match serve_command::v2::Command::from_slice(&line) {
            Ok(cmd) => {
                assert_eq!(record["ok"].as_str().unwrap(), cmd.to_line().trim_end());
                assert_eq!(
                    record["refused"].as_str(),
                    cmd.serve_refusal().map(serve_command::v2::Refusal::as_str),
                    "{record}"
                );
            }
            Err(e) => assert_eq!(record["error"].as_str().unwrap(), e.to_string()),
        }
    }
    // Seed 18 holds one command the engine declines.
    assert_eq!(
        records
            .iter()
            .filter(|r| r.get("refused").is_some())
            .count(),
        1
    );
    // The same seed writes the same corpus; another seed or revision, another.
    assert_eq!(corpus("again", "18", "v2"), expected);
    for line in 0..60 {
        let name = format!("line-{line:06}");
        assert_eq!(
            std::fs::read(dir.join("first/corpus").join(&name)).unwrap(),
            std::fs::read(dir.join("again/corpus").join(&name)).unwrap()
        );
    }
    assert_ne!(corpus("other", "8", "v2"), expected);
    let v1_expected = corpus("v1", "11", "v1");
    assert_ne!(v1_expected, expected);
    // And conform runs it, through the v2 decoder (--vectors wins over
    // the built-in v2 vectors).
    let vectors = dir.join("first/expected.jsonl");
    let args = [
        "conform",
        "--revision",
        "v2",
        "--vectors",
        vectors.to_str().unwrap(),
        "--",
        BIN,
        "decode",
        "--revision",
        "v2",
        "--output",
        "verdict",
    ];
    assert_eq!(stdout_of(&args, b"", 0), "60/60 vectors agree\n");
    // Each record names its revision, and conform takes it from there: the
    // v1 corpus runs as v1 with no flag, and a flag that says otherwise is
    // refused before PROGRAM starts.
    let v1 = dir.join("v1/expected.jsonl");
    let v1 = v1.to_str().unwrap();
    assert!(expected
        .lines()
        .all(|l| l.ends_with(",\"revision\":\"v2\"}")));
    assert!(v1_expected
        .lines()
        .all(|l| l.ends_with(",\"revision\":\"v1\"}")));
    let args = [
        "conform",
        "--vectors",
        v1,
        "--",
        BIN,
        "--revision",
        "v1",
        "decode",
        "--output",
        "verdict",
    ];
    assert_eq!(stdout_of(&args, b"", 0), "60/60 vectors agree\n");
    let v2 = vectors.to_str().unwrap();
    for (args, file, revision, said) in [
        (
            &[
                "conform",
                "--revision",
                "v2",
                "--vectors",
                v1,
                "--",
                "false",
            ][..],
            v1,
            "v1",
            "v2",
        ),
        (
            &[
                "--revision",
                "v1",
                "conform",
                "--vectors",
                v2,
                "--",
                "false",
            ],
            v2,
            "v2",
            "v1",
        ),
    ] {
        let out = run(args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(out.stdout, b"", "{args:?}");
        assert_eq!(
            String::from_utf8(out.stderr).unwrap(),
            format!("serve-command: {file}: its vectors are {revision}'s (line 1 says so), but --revision {said} was given\n"),
            "{args:?}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();

    let dict = stdout_of(&["dict", "--revision", "v2"], b"", 0);
    assert_eq!(
        dict,
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/src/command_v2.dict"))
            .unwrap()
    );
    // The default is v2's; v1's is another.
    assert_eq!(stdout_of(&["dict"], b"", 0), dict);
    assert_ne!(stdout_of(&["--revision", "v1", "dict"], b"", 0), dict);
}

// `--serve-policy`: what the engine (`openseek serve`) refuses among
// commands.

/// Lines of the `--serve-policy` tests: refused by the engine in both
/// revisions (a blank goal), in v2 only (command steers with an image, in
/// `content` and as legacy `images`), and not at all.
const SERVE_LINES: &str = concat!(
    "{\"command\":\"goal\",\"action\":\"set\",\"text\":\" \\t\"}\n",
    "{\"command\":\"steer\",\"kind\":\"command\",\"content\":[{\"type\":\"image\",\"media_type\":\"image/png\",\"data\":\"iVBORw0KGgo=\"}]}\n",
    "{\"command\":\"steer\",\"kind\":\"command\",\"text\":\"ls\",\"images\":[\"data:image/png;base64,iVBORw0KGgo=\"]}\n",
    "{\"command\":\"steer\",\"kind\":\"prompt\",\"content\":[{\"type\":\"image\",\"media_type\":\"image/png\",\"data\":\"iVBORw0KGgo=\"}]}\n",
    "\n",
    "{\"command\":\"goal\",\"action\":\"set\",\"text\":\"ship\",\"auto\":true}\n",
    "{\"command\":\"goal\",\"action\":\"set\",\"text\":\"\\u3000\"}\n",
    "nope\n",
);

#[test]
fn decode_serve_policy_refuses_as_the_engine_does() {
    // Checked line for line against oracle-serve-v1 and oracle-serve.
    // (revision, verdicts, events)
    let table: &[(&str, &str, &str)] = &[
        (
            "v1",
            concat!(
                "ERR goal text must not be blank\n",
                "ERR expected a string \"text\" field\n",
                "OK {\"command\":\"steer\",\"kind\":\"command\",\"text\":\"ls\"}\n",
                "ERR expected a string \"text\" field\n",
                "NOTJSON\n",
                "OK {\"command\":\"goal\",\"action\":\"set\",\"text\":\"ship\",\"auto\":true}\n",
                "OK {\"command\":\"goal\",\"action\":\"set\",\"text\":\"\u{3000}\"}\n",
                "NOTJSON\n",
            ),
            concat!(
                "{\"event\":\"command_error\",\"error\":\"goal text must not be blank\"}\n",
                "{\"event\":\"command_error\",\"error\":\"expected a string \\\"text\\\" field\"}\n",
                "{\"command\":\"steer\",\"kind\":\"command\",\"text\":\"ls\"}\n",
                "{\"event\":\"command_error\",\"error\":\"expected a string \\\"text\\\" field\"}\n",
                "{\"command\":\"goal\",\"action\":\"set\",\"text\":\"ship\",\"auto\":true}\n",
                "{\"command\":\"goal\",\"action\":\"set\",\"text\":\"\u{3000}\"}\n",
                "{\"event\":\"command_error\",\"error\":\"command stream: expected a JSON value at byte 0\"}\n",
            ),
        ),
        (
            "v2",
            concat!(
                "ERR goal text must not be blank\n",
                "ERR command steering does not accept images\n",
                "ERR command steering does not accept images\n",
                "OK {\"command\":\"steer\",\"kind\":\"prompt\",\"content\":[{\"type\":\"image\",\"media_type\":\"image/png\",\"data\":\"iVBORw0KGgo=\"}]}\n",
                "NOTJSON\n",
                "OK {\"command\":\"goal\",\"action\":\"set\",\"text\":\"ship\",\"auto\":true}\n",
                "OK {\"command\":\"goal\",\"action\":\"set\",\"text\":\"\u{3000}\"}\n",
                "NOTJSON\n",
            ),
            concat!(
                "{\"event\":\"command_error\",\"error\":\"goal text must not be blank\"}\n",
                "{\"event\":\"command_error\",\"error\":\"command steering does not accept images\"}\n",
                "{\"event\":\"command_error\",\"error\":\"command steering does not accept images\"}\n",
                "{\"command\":\"steer\",\"kind\":\"prompt\",\"content\":[{\"type\":\"image\",\"media_type\":\"image/png\",\"data\":\"iVBORw0KGgo=\"}]}\n",
                "{\"command\":\"goal\",\"action\":\"set\",\"text\":\"ship\",\"auto\":true}\n",
                "{\"command\":\"goal\",\"action\":\"set\",\"text\":\"\u{3000}\"}\n",
                "{\"event\":\"command_error\",\"error\":\"command stream: expected a JSON value at byte 0\"}\n",
            ),
        ),
    ];
    let input = SERVE_LINES.as_bytes();
    for &(revision, verdicts, events) in table {
        let policy = ["--revision", revision, "decode", "--serve-policy"];
        let verdict = [&policy[..], &["--output", "verdict"]].concat();
        // A refusal is a verdict (exit 0), and a refused line (exit 1).
        assert_eq!(stdout_of(&verdict, input, 0), verdicts, "{revision}");
        assert_eq!(stdout_of(&policy, input, 1), events, "{revision}");
        // Numbered like every other answer.
        let numbered = [&verdict[..], &["--line-numbers"]].concat();
        let first = stdout_of(&numbered, input, 0);
        assert_eq!(
            first.lines().next(),
            Some("1\tERR goal text must not be blank"),
            "{revision}"
        );
    }
    // Without the flag the same commands are commands: the decoder's verdict.
    let out = stdout_of(&["decode", "--output", "verdict"], input, 0);
    assert_eq!(
        out.lines().next(),
        Some("OK {\"command\":\"goal\",\"action\":\"set\",\"text\":\" \\t\"}")
    );
    assert_eq!(
        out.lines().nth(2),
        Some("OK {\"command\":\"steer\",\"kind\":\"command\",\"content\":[{\"type\":\"text\",\"text\":\"ls\"},{\"type\":\"image\",\"media_type\":\"image/png\",\"data\":\"iVBORw0KGgo=\"}]}")
    );
    // Only refusals: exit 1 in events, as for any refused line.
    let blank_goal = b"{\"command\":\"goal\",\"action\":\"set\",\"text\":\"\"}\n";
    assert_eq!(
        stdout_of(&["decode", "--serve-policy"], blank_goal, 1),
        "{\"event\":\"command_error\",\"error\":\"goal text must not be blank\"}\n"
    );
    assert_eq!(
        stdout_of(&["decode"], blank_goal, 0),
        "{\"command\":\"goal\",\"action\":\"set\",\"text\":\"\"}\n"
    );
}

#[test]
fn decode_summary_counts_serve_refusals_apart() {
    // (revision, format, status, summary)
    let v1 = concat!(
        "8 lines: 3 commands, 4 refused (1 not JSON, 0 too long, 2 not a command, 1 by the serve policy), 1 blank\n",
        "         1  error: command stream: expected a JSON value\n",
        "         2  error: expected a string \"text\" field\n",
        "         2  goal set\n",
        "         1  refused: goal text must not be blank\n",
        "         1  steer\n",
    );
    let v2 = concat!(
        "8 lines: 3 commands, 4 refused (1 not JSON, 0 too long, 0 not a command, 3 by the serve policy), 1 blank\n",
        "         1  error: command stream: expected a JSON value\n",
        "         2  goal set\n",
        "         2  refused: command steering does not accept images\n",
        "         1  refused: goal text must not be blank\n",
        "         1  steer\n",
    );
    let table: &[(&str, &str, i32, &str)] = &[
        ("v1", "wire", 1, v1),
        ("v1", "verdict", 0, v1),
        ("v2", "wire", 1, v2),
        ("v2", "verdict", 0, v2),
    ];
    for &(revision, format, status, summary) in table {
        let args = [
            "--revision",
            revision,
            "decode",
            "--serve-policy",
            "--summary",
            "--output",
            format,
        ];
        let out = run(&args, SERVE_LINES.as_bytes());
        assert_eq!(out.status.code(), Some(status), "{args:?}");
        assert_eq!(String::from_utf8(out.stderr).unwrap(), summary, "{args:?}");
    }
    // Without the flag, the totals say nothing of a policy.
    let out = run(&["decode", "--summary"], SERVE_LINES.as_bytes());
    assert_eq!(
        String::from_utf8(out.stderr).unwrap().lines().next(),
        Some("8 lines: 6 commands, 1 refused (1 not JSON, 0 too long, 0 not a command), 1 blank")
    );
}

#[test]
fn conform_serve_policy_runs_the_engine_vectors() {
    // (revision, vectors file, how many the engine refuses)
    let table = [
        ("v1", include_str!("vectors/serve.jsonl"), 29),
        ("v2", include_str!("vectors/serve-v2.jsonl"), 42),
    ];
    for (revision, vectors, refused) in table {
        let (stdout, stderr) = all_agree(vectors);
        assert_eq!(stdout, "155/155 vectors agree\n", "{revision}");
        assert_eq!(stderr, "", "{revision}");
        let decode = [BIN, "--revision", revision, "decode", "--output", "verdict"];
        let conform = ["--revision", revision, "conform", "--serve-policy", "--"];
        // The crate, under the policy: every vector agrees.
        let args = [&conform[..], &decode, &["--serve-policy"]].concat();
        let out = run(&args, b"");
        assert_eq!(String::from_utf8(out.stdout).unwrap(), stdout, "{args:?}");
        assert_eq!(String::from_utf8(out.stderr).unwrap(), stderr, "{args:?}");
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        // Without it in the PROGRAM: each refusal is a disagreement.
        let conform_all = [&conform[..conform.len() - 1], &["--all", "--"]].concat();
        let args = [&conform_all[..], &decode].concat();
        let out = run(&args, b"");
        let report = String::from_utf8(out.stdout).unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert_eq!(
            report.lines().last(),
            Some(format!("{}/155 vectors agree", 155 - refused).as_str())
        );
        assert_eq!(
            report.matches("\n  got:      OK ").count(),
            refused,
            "{report}"
        );
        // Without it in conform, a refused vector expects OK: the plain
        // decoder agrees on the engine's file.
        let file = scratch(&format!("serve-vectors-{revision}")).join("serve.jsonl");
        std::fs::write(&file, vectors).unwrap();
        let args = [
            &[
                "--revision",
                revision,
                "conform",
                "--vectors",
                file.to_str().unwrap(),
                "--",
            ][..],
            &decode,
        ]
        .concat();
        assert_eq!(stdout_of(&args, b"", 0), stdout, "{args:?}");
        std::fs::remove_dir_all(file.parent().unwrap()).unwrap();
    }
}

/// `decode` reads several files as `cat`, `rg` and `jq` take them, each a
/// stream of its own (a last line without LF ends with its file), stdin
/// among them as `-`; with several, a line number names its file, and
/// the summary totals them all. A file that cannot be opened stops it
/// (exit 2), after what the files before it gave.
#[test]
fn decode_reads_several_files_each_its_own_stream() {
    let dir = scratch("decode-files");
    let a = dir.join("a.jsonl");
    let b = dir.join("b.jsonl");
    // No LF at the end of a: its line is not joined to b's first.
    std::fs::write(&a, "{\"command\":\"cancel\"}\n{\"command\":\"nap\"}").unwrap();
    std::fs::write(&b, "\n{\"command\":\"compact\"}\n").unwrap();
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let out = run(
        &["decode", "--line-numbers", "--summary", a, "-", b],
        b"{\"command\":\"goal\",\"action\":\"clear\"}\n",
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!(
            "{a}:1\t{{\"command\":\"cancel\"}}\n\
             {a}:2\t{{\"event\":\"command_error\",\"error\":\"unknown command: nap\"}}\n\
             stdin:1\t{{\"command\":\"goal\",\"action\":\"clear\"}}\n\
             {b}:2\t{{\"command\":\"compact\"}}\n"
        )
    );
    assert_eq!(
        String::from_utf8(out.stderr).unwrap().lines().next(),
        Some("5 lines: 3 commands, 1 refused (0 not JSON, 0 too long, 1 not a command), 1 blank")
    );
    // One file: numbered as stdin is, without its name.
    assert_eq!(
        stdout_of(&["decode", "--line-numbers", b], b"", 0),
        "2\t{\"command\":\"compact\"}\n"
    );
    let missing = dir.join("missing.jsonl");
    let missing = missing.to_str().unwrap();
    let out = run(&["decode", b, missing, a], b"");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "{\"command\":\"compact\"}\n"
    );
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        format!("serve-command: {missing}: No such file or directory\n")
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `shell --help` shows its request and answer lists line by line, as its
/// doc comment writes them (clap reflows a doc comment unless told not to).
#[test]
fn shell_help_keeps_its_lists_line_by_line() {
    let help = stdout_of(&["shell", "--help"], b"", 0);
    for line in [
        "\nRequests:\n  {\"encode\": COMMAND, \"exit_code\": N or null, \"text\": T, \"output_limit_reached\": B}\n  {\"encode\": COMMAND, \"error\": MESSAGE}\n  {\"parse\": CONTENT}\n",
        "\nAnswers:\n  [\"ENCODED\", ENVELOPE]\n  [\"PARSED\", COMMAND, EXIT, [LINE, ...], OUTPUT_LIMIT_REACHED]\n  [\"NONE\"]            (not an envelope)\n  [\"BADREQ\", WHY]     (the request is not one of these)\n",
    ] {
        assert!(help.contains(line), "no {line:?} in:\n{help}");
    }
}

/// The envelope is the same in both revisions: `shell` refuses a
/// `--revision` rather than ignore it.
#[test]
fn shell_refuses_a_revision() {
    for args in [
        &["--revision", "v1", "shell"][..],
        &["shell", "--revision", "v2"],
    ] {
        let out = run(args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(String::from_utf8(out.stdout).unwrap(), "");
        assert_eq!(
            String::from_utf8(out.stderr).unwrap(),
            "serve-command: shell takes no --revision: the envelope is the same in both revisions\n"
        );
    }
}

/// `decode --events` reads an engine's stdout as a controller does: each
/// event's line as upstream writes it, each other line's reason on stderr
/// (exit 1); `--output verdict` is `oracle-events`' protocol, blank lines
/// included.
#[test]
fn decode_events_reads_an_engines_output() {
    let input = concat!(
        "{ \"step\": 2.0, \"event\": \"agent_step\" }\n",
        "\n",
        "{\"event\":\"fleet_started\"}\n",
        "not json\n",
        "{\"event\":\"tool_result\",\"tool_call_id\":\"c\",\"tool_name\":\"t\",\"is_error\":false,\"content\":\"ok\"}\n",
    );
    let out = run(&["decode", "--events"], input.as_bytes());
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        concat!(
            "{\"event\":\"agent_step\",\"step\":2}\n",
            "{\"event\":\"tool_result\",\"tool_call_id\":\"c\",\"tool_name\":\"t\",\"is_error\":false,\"content\":\"ok\",\"brief\":null}\n",
        )
    );
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "line 3: unknown event: fleet_started\nline 4: not JSON: expected a JSON value at byte 0\n"
    );
    assert_eq!(
        stdout_of(&["decode", "--events", "--output", "verdict"], input.as_bytes(), 0),
        concat!(
            "OK {\"event\":\"agent_step\",\"step\":2}\n",
            "NOTJSON\n",
            "NONE\n",
            "NOTJSON\n",
            "OK {\"event\":\"tool_result\",\"tool_call_id\":\"c\",\"tool_name\":\"t\",\"is_error\":false,\"content\":\"ok\",\"brief\":null}\n",
        )
    );
    let out = run(&["--revision", "v1", "decode", "--events"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "serve-command: --events needs --revision v2: the protocol's first revision is the command half only\n"
    );
}

/// `encode event NAME FIELD=VALUE...` writes the line an engine writes, for
/// shell engines: a VALUE that is JSON is that JSON, anything else a
/// string; what a client would not read as the event is refused, with why.
#[test]
fn encode_event_writes_what_an_engine_writes() {
    let table: &[(&[&str], Result<&str, &str>)] = &[
        (
            &["assistant_delta", "content=Hel"],
            Ok(r#"{"event":"assistant_delta","content":"Hel"}"#),
        ),
        (
            &["agent_step", "step=1.0"],
            Ok(r#"{"event":"agent_step","step":1}"#),
        ),
        (
            &["goal_updated"],
            Ok(r#"{"event":"goal_updated","goal":null}"#),
        ),
        (
            &["assistant_delta", "content=\"3\""],
            Ok(r#"{"event":"assistant_delta","content":"3"}"#),
        ),
        (
            &["agent_step", "step=x"],
            Err("agent_step: \"step\" must be an integer from -2147483648 to 2147483647"),
        ),
        (&["nap"], Err("unknown event: nap")),
        (&["agent_step", "step"], Err("step: expected FIELD=VALUE")),
    ];
    for (args, expected) in table {
        let argv: Vec<&str> = ["encode", "event"]
            .iter()
            .chain(args.iter())
            .copied()
            .collect();
        let out = run(&argv, b"");
        let (stdout, stderr) = (
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        );
        match expected {
            Ok(line) => assert_eq!(
                (out.status.code(), stdout, stderr),
                (Some(0), format!("{line}\n"), String::new()),
                "{args:?}"
            ),
            Err(why) => assert_eq!(
                (out.status.code(), stdout, stderr),
                (Some(2), String::new(), format!("serve-command: {why}\n")),
                "{args:?}"
            ),
        }
    }
    let out = run(
        &[
            "--revision",
            "v1",
            "encode",
            "event",
            "agent_step",
            "step=1",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
}

// The event direction in `conform`, `corpus` and `dict`: for
// implementations of a controller's reader in other languages.

/// Event vectors for the tests below: each verdict, a raw-bytes line, one
/// without `why`, and one that cannot be sent.
const SMALL_EVENT_VECTORS: &str = r#"{"line": "{ \"step\": 2.0, \"event\": \"agent_step\" }", "ok": "{\"event\":\"agent_step\",\"step\":2}", "why": "a whole double"}
{"line": "{\"event\":\"agent_step\",\"step\":\"1\"}", "none": true, "why": "a string step"}

{"line_base64": "77u/eyJldmVudCI6Im1heF9zdGVwc19leGhhdXN0ZWQifQ==", "not_json": true, "why": "a BOM"}
{"line": "{\"event\":\n\"max_steps_exhausted\"}", "ok": "{\"event\":\"max_steps_exhausted\"}", "why": "a LF between tokens"}
{"line": "{\"event\":\"nap\"}", "none": true}
"#;

const SMALL_EVENT_SKIPPED: &str = "skipped vector 5 (a LF between tokens): its line holds a LF, which the line protocol cannot carry\n";

/// `conform --events` runs the event vectors, built in, through a
/// PROGRAM speaking `oracle-events`' protocol: the crate's own reader
/// agrees with every one; its command decoder only on the lines that are
/// not JSON.
#[test]
fn conform_events_passes_the_crate_itself_on_the_event_vectors() {
    let vectors = include_str!("vectors/events.jsonl");
    let (stdout, stderr) = all_agree(vectors);
    // Today: all 1,683 sent, none holds a LF.
    assert_eq!(stdout, "1776/1776 vectors agree\n");
    assert_eq!(stderr, "");
    for args in [
        &[
            "conform", "--events", "--", BIN, "decode", "--events", "--output", "verdict",
        ][..],
        &[
            "--revision",
            "v2",
            "conform",
            "--events",
            "--",
            BIN,
            "decode",
            "--revision",
            "v2",
            "--events",
            "--output",
            "verdict",
        ],
    ] {
        let out = run(args, b"");
        assert_eq!(String::from_utf8(out.stdout).unwrap(), stdout, "{args:?}");
        assert_eq!(String::from_utf8(out.stderr).unwrap(), stderr, "{args:?}");
        assert_eq!(out.status.code(), Some(0), "{args:?}");
    }
    // The command decoder is not an event reader: `--events` chose the
    // event vectors, and only the 36 that are not JSON agree.
    let not_json = vectors
        .lines()
        .filter(|l| l.contains("\"not_json\": true"))
        .count();
    assert_eq!(not_json, 36);
    let out = run(
        &[
            "conform", "--all", "--events", "--", BIN, "decode", "--output", "verdict",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(1));
    let report = String::from_utf8(out.stdout).unwrap();
    assert_eq!(report.lines().last(), Some("36/1776 vectors agree"));
    // Every other line is JSON but no command: an `ERR` where an event
    // reader says `OK` or `NONE`.
    assert_eq!(
        report.matches("\n  got:      ERR ").count(),
        1776 - 36,
        "{report}"
    );
}

/// Each disagreement is reported as for commands, and a PROGRAM that
/// misbehaves is stopped by the same runner, with the same messages.
#[test]
fn conform_events_reports_each_disagreement_and_each_misbehaviour() {
    let dir = scratch("conform-events");
    let vectors = dir.join("events.jsonl");
    std::fs::write(&vectors, SMALL_EVENT_VECTORS).unwrap();
    let right =
        r#"cat >/dev/null; printf 'OK {"event":"agent_step","step":2}\nNONE\nNOTJSON\nNONE\n'"#;
    // (script name, body, stdout, stderr with {} for the script's path, status)
    let table: &[(&str, String, &str, &str, i32)] = &[
        (
            "crate",
            format!("exec '{BIN}' decode --events --output verdict"),
            "4/4 vectors agree\n",
            "",
            0,
        ),
        ("right", right.to_owned(), "4/4 vectors agree\n", "", 0),
        (
            // An implementation that reads a whole double as no integer,
            // and takes what it does not know for a bad line.
            "strict",
            r#"cat >/dev/null; printf 'NONE\nNONE\nNOTJSON\nNOTJSON\n'"#.to_owned(),
            concat!(
                "vector 1: a whole double\n",
                "  line:     \"{ \\\"step\\\": 2.0, \\\"event\\\": \\\"agent_step\\\" }\"\n",
                "  expected: OK {\"event\":\"agent_step\",\"step\":2}\n",
                "  got:      NONE\n",
                "vector 6\n",
                "  line:     \"{\\\"event\\\":\\\"nap\\\"}\"\n",
                "  expected: NONE\n",
                "  got:      NOTJSON\n",
                "2/4 vectors agree\n",
            ),
            "",
            1,
        ),
        (
            // The line as it came, not as upstream writes it.
            "echo",
            r#"cat >/dev/null; printf 'OK { "step": 2.0, "event": "agent_step" }\nNONE\nNOTJSON\nNONE\n'"#.to_owned(),
            concat!(
                "vector 1: a whole double\n",
                "  line:     \"{ \\\"step\\\": 2.0, \\\"event\\\": \\\"agent_step\\\" }\"\n",
                "  expected: OK {\"event\":\"agent_step\",\"step\":2}\n",
                "  got:      OK { \"step\": 2.0, \"event\": \"agent_step\" }\n",
                "3/4 vectors agree\n",
            ),
            "",
            1,
        ),
        (
            "command-decoder",
            format!("exec '{BIN}' decode --output verdict"),
            concat!(
                "vector 1: a whole double\n",
                "  line:     \"{ \\\"step\\\": 2.0, \\\"event\\\": \\\"agent_step\\\" }\"\n",
                "  expected: OK {\"event\":\"agent_step\",\"step\":2}\n",
                "  got:      ERR expected a {\"command\": ...} object\n",
                "vector 2: a string step\n",
                "  line:     \"{\\\"event\\\":\\\"agent_step\\\",\\\"step\\\":\\\"1\\\"}\"\n",
                "  expected: NONE\n",
                "  got:      ERR expected a {\"command\": ...} object\n",
                "vector 6\n",
                "  line:     \"{\\\"event\\\":\\\"nap\\\"}\"\n",
                "  expected: NONE\n",
                "  got:      ERR expected a {\"command\": ...} object\n",
                "1/4 vectors agree\n",
            ),
            "",
            1,
        ),
        (
            "dies",
            "head -c 10 >/dev/null; echo NONE; exit 3".to_owned(),
            "",
            "serve-command: {} exited with status 3 (after 1 of 4 lines)\n",
            2,
        ),
        (
            "too-few",
            "cat >/dev/null; printf 'NONE\\nNONE\\nNOTJSON\\n'".to_owned(),
            "",
            "serve-command: {} answered 3 lines for 4\n",
            2,
        ),
        (
            "too-many",
            format!("{right}; echo NONE"),
            "",
            "serve-command: {} answered 5 lines for 4\n",
            2,
        ),
    ];
    for (name, body, stdout, stderr, status) in table {
        let path = script(&dir, name, body);
        let args = [
            "conform",
            "--events",
            "--vectors",
            vectors.to_str().unwrap(),
            "--",
            &path,
        ];
        let out = run(&args, b"");
        assert_eq!(String::from_utf8(out.stdout).unwrap(), *stdout, "{name}");
        assert_eq!(
            String::from_utf8(out.stderr).unwrap(),
            format!("{SMALL_EVENT_SKIPPED}{}", stderr.replace("{}", &path)),
            "{name}"
        );
        assert_eq!(out.status.code(), Some(*status), "{name}");
    }
    // The same timeout, and the same kill.
    let path = script(&dir, "hangs", "cat >/dev/null; exec sleep 60");
    let args = [
        "conform",
        "--events",
        "--timeout",
        "0.5",
        "--vectors",
        vectors.to_str().unwrap(),
        "--",
        &path,
    ];
    let start = std::time::Instant::now();
    let out = run(&args, b"");
    assert!(start.elapsed() < std::time::Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(out.stdout, b"");
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        format!(
            "{SMALL_EVENT_SKIPPED}serve-command: {path} did not finish within 500ms; killed it\n"
        )
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// v1 has no events, the serve policy judges commands, and a vectors file
/// holds the outcomes of one direction: each mix-up is refused before
/// PROGRAM starts (`true` would answer 0 lines), with why.
#[test]
fn conform_events_refuses_what_is_not_about_events() {
    let dir = scratch("conform-events-usage");
    let file = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_owned()
    };
    let no_v1 = "serve-command: --events needs --revision v2: the protocol's first revision is the command half only\n";
    let v1_file = file(
        "v1.jsonl",
        "{\"line\":\"x\",\"not_json\":true,\"revision\":\"v1\"}\n",
    );
    let events = file("events.jsonl", SMALL_EVENT_VECTORS);
    // (arguments, stderr)
    let mut table: Vec<(Vec<String>, String)> = vec![
        (
            vec!["--revision".into(), "v1".into(), "conform".into(), "--events".into(), "--".into(), "true".into()],
            no_v1.into(),
        ),
        (
            vec!["conform".into(), "--events".into(), "--revision".into(), "v1".into(), "--".into(), "true".into()],
            no_v1.into(),
        ),
        (
            vec!["conform".into(), "--events".into(), "--serve-policy".into(), "--".into(), "true".into()],
            "error: the argument '--events' cannot be used with '--serve-policy'\n\nUsage: serve-command conform --events -- <PROGRAM>...\n\nFor more information, try '--help'.\n".into(),
        ),
        (
            vec!["conform".into(), "--events".into(), "--vectors".into(), v1_file.clone(), "--".into(), "true".into()],
            format!("serve-command: {v1_file}: its vectors are v1's (line 1 says so), but the protocol's first revision has no events\n"),
        ),
        (
            vec!["conform".into(), "--vectors".into(), events.clone(), "--".into(), "true".into()],
            format!("serve-command: {events}: line 2: \"none\" is an event vector's outcome (run event vectors with --events)\n"),
        ),
    ];
    let files: &[(&str, &str, &str)] = &[
        (
            "error",
            "{\"line\":\"x\",\"not_json\":true}\n{\"line\":\"x\",\"error\":\"y\"}\n",
            "line 2: \"error\" is a command vector's outcome (run command vectors without --events)",
        ),
        (
            "refused",
            "{\"line\":\"x\",\"ok\":\"x\",\"refused\":\"y\"}\n",
            "line 1: \"refused\" is a command vector's outcome (run command vectors without --events)",
        ),
        (
            "two-outcomes",
            "{\"line\":\"x\",\"ok\":\"x\",\"none\":true}\n",
            "line 1: needs exactly one of \"ok\", \"none\" and \"not_json\"",
        ),
        (
            "no-outcome",
            "{\"line\":\"x\",\"why\":\"y\"}\n",
            "line 1: needs exactly one of \"ok\", \"none\" and \"not_json\"",
        ),
        ("none-false", "{\"line\":\"x\",\"none\":false}\n", "line 1: \"none\" is not true"),
        ("none-string", "{\"line\":\"x\",\"none\":\"yes\"}\n", "line 1: \"none\" is not true"),
        ("ok-number", "{\"line\":\"x\",\"ok\":1}\n", "line 1: \"ok\" is not a string"),
        (
            "no-line",
            "{\"none\":true}\n",
            "line 1: needs exactly one of \"line\" and \"line_base64\"",
        ),
        (
            "revision-v3",
            "{\"line\":\"x\",\"none\":true,\"revision\":\"v3\"}\n",
            "line 1: \"revision\" is \"v3\", not \"v1\" or \"v2\"",
        ),
    ];
    for &(name, text, message) in files {
        let path = file(name, text);
        table.push((
            vec![
                "conform".into(),
                "--events".into(),
                "--vectors".into(),
                path.clone(),
                "--".into(),
                "true".into(),
            ],
            format!("serve-command: {path}: {message}\n"),
        ));
    }
    for (args, stderr) in &table {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = run(&args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(String::from_utf8(out.stderr).unwrap(), *stderr, "{args:?}");
        assert_eq!(out.stdout, b"", "{args:?}");
    }
    // A file that names v2 runs under --events, with or without --revision v2.
    let v2_file = file(
        "v2.jsonl",
        "{\"line\":\"{\\\"event\\\":\\\"nap\\\"}\",\"none\":true,\"revision\":\"v2\"}\n",
    );
    let decode = [BIN, "decode", "--events", "--output", "verdict"];
    for conform in [
        &["conform", "--events", "--vectors", &v2_file, "--"][..],
        &[
            "--revision",
            "v2",
            "conform",
            "--events",
            "--vectors",
            &v2_file,
            "--",
        ],
    ] {
        let args = [conform, &decode].concat();
        assert_eq!(stdout_of(&args, b"", 0), "1/1 vectors agree\n", "{args:?}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `corpus --events` writes near-miss event lines, each outcome the crate's
/// event decoder's, in the event vectors' format, which `conform --events`
/// runs back; the same seed writes the same files.
#[test]
fn corpus_events_writes_event_lines_and_their_outcomes() {
    let dir = scratch("corpus-events");
    // Writes 80 lines with `seed` into `dir/sub`; returns its expected.jsonl.
    let corpus = |sub: &str, seed: &str, events: bool| {
        let out = dir.join(sub);
        let mut args = vec![
            "corpus",
            out.to_str().unwrap(),
            "--count",
            "80",
            "--seed",
            seed,
        ];
        if events {
            args.push("--events");
        }
        assert_eq!(stdout_of(&args, b"", 0), "");
        std::fs::read_to_string(out.join("expected.jsonl")).unwrap()
    };
    let json = |s: &str| serde_json::to_string(s).unwrap();
    let expected = corpus("first", "3", true);
    let mut verdicts = std::collections::BTreeMap::new();
    for (n, record) in expected.lines().enumerate() {
        // Each corpus file is its record's line, and the record is, byte
        // for byte, the event decoder's verdict on it.
        let line = std::fs::read(dir.join("first/corpus").join(format!("line-{n:06}"))).unwrap();
        let text = std::str::from_utf8(&line).unwrap();
        let (verdict, outcome) = match serve_command::v2::Event::from_slice(&line) {
            Ok(event) => ("ok", format!("\"ok\":{}", json(event.to_line().trim_end()))),
            Err(serve_command::v2::EventLineError::NotAnEvent(e)) => (
                "none",
                format!("\"none\":true,\"why\":{}", json(&e.to_string())),
            ),
            Err(e) => panic!("line {n} is not JSON: {e}"),
        };
        assert_eq!(
            record,
            format!("{{\"line\":{},{outcome},\"revision\":\"v2\"}}", json(text))
        );
        *verdicts.entry(verdict).or_insert(0) += 1;
    }
    assert_eq!(verdicts.values().sum::<i32>(), 80);
    assert_eq!(verdicts.len(), 2, "both verdicts, {verdicts:?}");
    // The same seed writes the same corpus; another seed, or the
    // commands', another.
    assert_eq!(corpus("again", "3", true), expected);
    for n in 0..80 {
        let name = format!("line-{n:06}");
        assert_eq!(
            std::fs::read(dir.join("first/corpus").join(&name)).unwrap(),
            std::fs::read(dir.join("again/corpus").join(&name)).unwrap()
        );
    }
    assert_ne!(corpus("other", "4", true), expected);
    assert_ne!(corpus("commands", "3", false), expected);
    // conform --events runs it: the crate agrees with all of it, and a
    // reader that says NOTJSON to everything is shown each vector's why.
    let vectors = dir.join("first/expected.jsonl");
    let vectors = vectors.to_str().unwrap();
    let args = [
        "conform",
        "--events",
        "--vectors",
        vectors,
        "--",
        BIN,
        "decode",
        "--events",
        "--output",
        "verdict",
    ];
    assert_eq!(stdout_of(&args, b"", 0), "80/80 vectors agree\n");
    let mut report = String::new();
    for (n, record) in expected.lines().enumerate() {
        let record: serde_json::Value = serde_json::from_str(record).unwrap();
        let (title, answer) = match record["ok"].as_str() {
            Some(ok) => (format!("vector {}", n + 1), format!("OK {ok}")),
            None => (
                format!("vector {}: {}", n + 1, record["why"].as_str().unwrap()),
                "NONE".to_owned(),
            ),
        };
        report += &format!(
            "{title}\n  line:     {}\n  expected: {answer}\n  got:      NOTJSON\n",
            json(record["line"].as_str().unwrap())
        );
    }
    report += "0/80 vectors agree\n";
    let args = [
        "conform",
        "--all",
        "--events",
        "--vectors",
        vectors,
        "--",
        "sh",
        "-c",
        "cat >/dev/null; yes NOTJSON | head -n 80",
    ];
    assert_eq!(stdout_of(&args, b"", 1), report);
    // Without --events its outcomes are not commands'.
    let out = run(&["conform", "--vectors", vectors, "--", "true"], b"");
    assert_eq!(out.status.code(), Some(2));
    let first_none = expected
        .lines()
        .position(|l| l.contains(",\"none\":true,"))
        .unwrap()
        + 1;
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        format!("serve-command: {vectors}: line {first_none}: \"none\" is an event vector's outcome (run event vectors with --events)\n")
    );
    // A folder that holds files is refused unless forced, as for commands.
    let first = dir.join("first");
    let first = first.to_str().unwrap();
    let out = run(&["corpus", first, "--events", "--count", "2"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        format!("serve-command: {first}: already holds files (--force empties {first}/corpus and replaces expected.jsonl)\n")
    );
    let args = [
        "corpus", first, "--events", "--count", "2", "--seed", "3", "--force",
    ];
    assert_eq!(stdout_of(&args, b"", 0), "");
    assert_eq!(
        std::fs::read_to_string(dir.join("first/expected.jsonl")).unwrap(),
        expected
            .lines()
            .take(2)
            .map(|l| format!("{l}\n"))
            .collect::<String>()
    );
    assert_eq!(
        std::fs::read_dir(dir.join("first/corpus")).unwrap().count(),
        2
    );
    // v1 has no events: refused, nothing written.
    let v1 = dir.join("v1");
    let out = run(
        &[
            "--revision",
            "v1",
            "corpus",
            v1.to_str().unwrap(),
            "--events",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "serve-command: --events needs --revision v2: the protocol's first revision is the command half only\n"
    );
    assert!(!v1.exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `dict --events` prints the event fuzz targets' dictionary, for a fuzzer
/// of another implementation's event reader.
#[test]
fn dict_events_prints_the_event_dictionary() {
    let dict =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/src/event_v2.dict")).unwrap();
    assert_eq!(stdout_of(&["dict", "--events"], b"", 0), dict);
    assert_eq!(
        stdout_of(&["--revision", "v2", "dict", "--events"], b"", 0),
        dict
    );
    assert!(
        dict.contains("ev_job_changed=\"\\\"job_changed\\\"\"\n"),
        "{dict}"
    );
    assert_ne!(stdout_of(&["dict"], b"", 0), dict);
    let out = run(&["dict", "--events", "--revision", "v1"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(out.stdout, b"");
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "serve-command: --events needs --revision v2: the protocol's first revision is the command half only\n"
    );
}

/// Each `--events` says in its subcommand's help what it does, with an
/// example.
#[test]
fn the_event_flags_say_what_they_do() {
    // (subcommand, what its help must hold)
    let table: &[(&str, &[&str])] = &[
        (
            "conform",
            &[
                "      --events\n          Run event vectors: PROGRAM reads the engine's events, answering `OK <line>`, `NONE` or `NOTJSON` as `oracle-events` does\n",
                "The built-in vectors are then the events' (events.jsonl); a vector with `ok` expects `OK <ok>`; with `none`, `NONE`; with `not_json`, `NOTJSON`.",
                "\n  serve-command conform --events -- serve-command decode --events --output verdict\n",
            ],
        ),
        (
            "corpus",
            &[
                "      --events\n          Write the engine's event lines (v2) instead of command lines\n",
                "`{\"line\":..,\"none\":true,\"why\":..,\"revision\":\"v2\"}`",
                "\n  serve-command corpus event-seeds --events --count 500 --seed 7\n",
            ],
        ),
        (
            "dict",
            &[
                "      --events\n          Print the event lines' dictionary (v2) instead of the commands'\n",
                "\n  serve-command dict --events > event_v2.dict\n",
            ],
        ),
    ];
    for &(sub, holds) in table {
        let help = stdout_of(&[sub, "--help"], b"", 0);
        for text in holds {
            assert!(help.contains(text), "{sub} --help lacks {text:?}:\n{help}");
        }
    }
}

/// `encode` writes no line the engine would refuse (its serve policy, in
/// both revisions): the `command_error` message on stderr, exit 1, so
/// that `encode ... | engine` fails at the controller, not in the engine's
/// answers. `--allow-refused` (before or after the command) writes it, to
/// test an engine's refusals.
#[test]
fn encode_refuses_what_the_engine_would_refuse_unless_allowed() {
    let dir = scratch("encode-serve-policy");
    let png = dir.join("a.png");
    std::fs::write(&png, PNG).unwrap();
    let png = png.to_str().unwrap();
    let refused = |message: &str| {
        format!("serve-command: the engine would refuse this command: {message} (--allow-refused writes it anyway)\n")
    };
    let blank = refused("goal text must not be blank");
    let steer_image = refused("command steering does not accept images");
    let command_steer = "{\"command\":\"steer\",\"kind\":\"command\",\"content\":[{\"type\":\"text\",\"text\":\"/diff\"},{\"type\":\"image\",\"media_type\":\"image/png\",\"data\":\"iVBORw0KGgo=\"}]}\n";
    // (args, stdout, stderr, status)
    let table: &[(&[&str], &str, &str, i32)] = &[
        (&["encode", "goal", "set", "  "], "", &blank, 1),
        (&["encode", "goal", "set", "", "--auto"], "", &blank, 1),
        (&["--revision", "v1", "encode", "goal", "set", " \t"], "", &blank, 1),
        (
            &["encode", "steer", "/diff", "--kind", "command", "--image", png],
            "",
            &steer_image,
            1,
        ),
        (
            &["encode", "goal", "set", "  ", "--allow-refused"],
            "{\"command\":\"goal\",\"action\":\"set\",\"text\":\"  \"}\n",
            "",
            0,
        ),
        (
            &["encode", "--allow-refused", "goal", "set", ""],
            "{\"command\":\"goal\",\"action\":\"set\",\"text\":\"\"}\n",
            "",
            0,
        ),
        (
            &["--revision", "v1", "encode", "goal", "set", " \t", "--allow-refused"],
            "{\"command\":\"goal\",\"action\":\"set\",\"text\":\" \\t\"}\n",
            "",
            0,
        ),
        (
            &["encode", "steer", "/diff", "--kind", "command", "--image", png, "--allow-refused"],
            command_steer,
            "",
            0,
        ),
        // What the engine runs is written as before: an ideographic space
        // is not blank to it, and a prompt steer may carry an image.
        (
            &["encode", "goal", "set", "\u{3000}"],
            "{\"command\":\"goal\",\"action\":\"set\",\"text\":\"\u{3000}\"}\n",
            "",
            0,
        ),
        (
            &["encode", "steer", "/diff", "--image", png],
            "{\"command\":\"steer\",\"kind\":\"prompt\",\"content\":[{\"type\":\"text\",\"text\":\"/diff\"},{\"type\":\"image\",\"media_type\":\"image/png\",\"data\":\"iVBORw0KGgo=\"}]}\n",
            "",
            0,
        ),
        // A line no decoder takes back is still a usage error, allowed or not.
        (
            &["encode", "jobs-snapshot", "", "--allow-refused"],
            "",
            "serve-command: invalid background job command\n",
            2,
        ),
        // An event has no serve policy: the flag would mean nothing.
        (
            &["encode", "event", "agent_step", "step=1", "--allow-refused"],
            "",
            "serve-command: --allow-refused is for commands: the engine's serve policy judges no events\n",
            2,
        ),
    ];
    for &(args, stdout, stderr, status) in table {
        let out = run(args, b"");
        assert_eq!(
            (
                String::from_utf8(out.stdout).unwrap().as_str(),
                String::from_utf8(out.stderr).unwrap().as_str(),
                out.status.code()
            ),
            (stdout, stderr, Some(status)),
            "{args:?}"
        );
    }
    // Written anyway, the line is the one the engine answers with its
    // refusal.
    let out = run(&["decode", "--serve-policy"], command_steer.as_bytes());
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "{\"event\":\"command_error\",\"error\":\"command steering does not accept images\"}\n"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `decode`'s output option is `--output` (`-o`), `wire` or `verdict`:
/// `--format events` read like the separate `--events` flag. `--format`
/// and `events` stay as hidden aliases, for the scripts that use them.
#[test]
fn decode_output_is_wire_or_verdict() {
    let input = b"{\"command\":\"cancel\"}\n\n{\"command\":\"nap\"}\n";
    let wire = "{\"command\":\"cancel\"}\n{\"event\":\"command_error\",\"error\":\"unknown command: nap\"}\n";
    let verdict = "OK {\"command\":\"cancel\"}\nNOTJSON\nERR unknown command: nap\n";
    // (args, stdout, status)
    let table: &[(&[&str], &str, i32)] = &[
        (&["decode"], wire, 1),
        (&["decode", "--output", "wire"], wire, 1),
        (&["decode", "-o", "wire"], wire, 1),
        (&["decode", "--output", "verdict"], verdict, 0),
        (&["decode", "-o", "verdict"], verdict, 0),
        (&["decode", "--output=verdict"], verdict, 0),
        (&["decode", "--format", "verdict"], verdict, 0),
        (&["decode", "--format", "events"], wire, 1),
        (&["decode", "--output", "events"], wire, 1),
    ];
    for &(args, stdout, status) in table {
        assert_eq!(stdout_of(args, input, status), stdout, "{args:?}");
    }
    let out = run(&["decode", "-o", "json"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "error: invalid value 'json' for '--output <KIND>'\n  [possible values: wire, verdict]\n\nFor more information, try '--help'.\n"
    );
    // The help names the new option and values only.
    let help = stdout_of(&["decode", "--help"], b"", 0);
    for holds in [
        "\n  -o, --output <KIND>\n          What to print for each line\n",
        "\n          - wire:    The lines as an engine writes them:",
        "\n          - verdict: The conformance line protocol:",
        "[default: wire]",
    ] {
        assert!(help.contains(holds), "lacks {holds:?}:\n{help}");
    }
    for unsaid in ["--format", "- events", "[default: events]"] {
        assert!(!help.contains(unsaid), "says {unsaid:?}:\n{help}");
    }
}

/// `--exit-zero`: exit 0 whatever the verdicts, for a pipeline under `set
/// -o pipefail` that only wants to see them; exit 2 still means a usage or
/// I/O error, or a PROGRAM that misbehaves.
#[test]
fn exit_zero_ends_0_whatever_the_verdicts_but_not_on_errors() {
    let dir = scratch("exit-zero");
    let missing = dir.join("missing.jsonl");
    let missing = missing.to_str().unwrap();
    let vectors = dir.join("vectors.jsonl");
    std::fs::write(&vectors, SMALL_VECTORS).unwrap();
    let vectors = vectors.to_str().unwrap();
    let commands = b"{\"command\":\"nap\"}\n";
    let events = b"{\"event\":\"nap\"}\n";
    let refusal = "{\"event\":\"command_error\",\"error\":\"unknown command: nap\"}\n";
    let disagreement = "vector 1: cancel\n  line:     \"{\\\"command\\\":\\\"cancel\\\"}\"\n  expected: OK {\"command\":\"cancel\"}\n  got:      NOTJSON\n\
        vector 2: a LF in the name\n  line:     \"{\\\"command\\\":\\\"a\\\\nb\\\"}\"\n  expected: ERR unknown command: a\\nb\n  got:      NOTJSON\n\
        vector 6\n  line:     \"[]\"\n  expected: ERR expected a {\"command\": ...} object\n  got:      NOTJSON\n\
        1/4 vectors agree\n";
    let skipped = "skipped vector 5 (a LF between tokens): its line holds a LF, which the line protocol cannot carry\n";
    let notjson = script(&dir, "notjson", "sed 's/.*/NOTJSON/'");
    let dies = script(&dir, "dies", "cat >/dev/null; exit 3");
    let dies_said =
        format!("{skipped}serve-command: {dies} exited with status 3 (after 0 of 4 lines)\n");
    /// (args, stdin, stdout, stderr, status)
    type Case<'a> = (&'a [&'a str], &'a [u8], &'a str, &'a str, i32);
    let table: &[Case] = &[
        (&["decode"], commands, refusal, "", 1),
        (&["decode", "--exit-zero"], commands, refusal, "", 0),
        (
            &["decode", "--events"],
            events,
            "",
            "line 1: unknown event: nap\n",
            1,
        ),
        (
            &["decode", "--events", "--exit-zero"],
            events,
            "",
            "line 1: unknown event: nap\n",
            0,
        ),
        (
            &["decode", "--exit-zero", missing],
            b"",
            "",
            &format!("serve-command: {missing}: No such file or directory\n"),
            2,
        ),
        (
            &["conform", "--vectors", vectors, "--", &notjson],
            b"",
            disagreement,
            skipped,
            1,
        ),
        (
            &[
                "conform",
                "--exit-zero",
                "--vectors",
                vectors,
                "--",
                &notjson,
            ],
            b"",
            disagreement,
            skipped,
            0,
        ),
        (
            &["conform", "--exit-zero", "--vectors", vectors, "--", &dies],
            b"",
            "",
            &dies_said,
            2,
        ),
    ];
    for &(args, stdin, stdout, stderr, status) in table {
        let out = run(args, stdin);
        assert_eq!(
            (
                String::from_utf8(out.stdout).unwrap().as_str(),
                String::from_utf8(out.stderr).unwrap().as_str(),
                out.status.code()
            ),
            (stdout, stderr, Some(status)),
            "{args:?}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `conform` shows the first 20 disagreements, then how many more and the
/// total: a PROGRAM wrong on every vector (`cat`: 653 of them, 2,600
/// lines) no longer buries the count. `--all` shows every one.
#[test]
fn conform_shows_the_first_20_disagreements_unless_all() {
    let dir = scratch("conform-cap");
    let vector = "{\"line\":\"{\\\"command\\\":\\\"cancel\\\"}\",\"ok\":\"{\\\"command\\\":\\\"cancel\\\"}\"}\n";
    let block = |n: usize| {
        format!("vector {n}\n  line:     \"{{\\\"command\\\":\\\"cancel\\\"}}\"\n  expected: OK {{\"command\":\"cancel\"}}\n  got:      {{\"command\":\"cancel\"}}\n")
    };
    let blocks = |to: usize| (1..=to).map(block).collect::<String>();
    // (vectors, --all, stdout)
    let table: &[(usize, bool, String)] = &[
        (20, false, format!("{}0/20 vectors agree\n", blocks(20))),
        (
            21,
            false,
            format!(
                "{}and 1 more disagreement (21 in all; --all shows every one)\n0/21 vectors agree\n",
                blocks(20)
            ),
        ),
        (
            25,
            false,
            format!(
                "{}and 5 more disagreements (25 in all; --all shows every one)\n0/25 vectors agree\n",
                blocks(20)
            ),
        ),
        (25, true, format!("{}0/25 vectors agree\n", blocks(25))),
    ];
    for (count, all, stdout) in table {
        let vectors = dir.join(format!("{count}.jsonl"));
        std::fs::write(&vectors, vector.repeat(*count)).unwrap();
        let mut args = vec!["conform", "--vectors", vectors.to_str().unwrap()];
        if *all {
            args.push("--all");
        }
        args.extend(["--", "cat"]);
        assert_eq!(&stdout_of(&args, b"", 1), stdout, "{args:?}");
    }
    // The crate's own vectors, echoed back: none agrees.
    let out = stdout_of(&["conform", "--", "cat"], b"", 1);
    assert_eq!(out.matches("\n  got:      ").count(), 20, "{out}");
    assert!(
        out.ends_with("\nand 633 more disagreements (653 in all; --all shows every one)\n0/653 vectors agree\n"),
        "{out}"
    );
    let out = stdout_of(&["conform", "--all", "--", "cat"], b"", 1);
    assert_eq!(out.matches("\n  got:      ").count(), 653);
    assert!(out.ends_with("\n0/653 vectors agree\n"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The short flags rg and jq users reach for: `-r` (`--revision`, on
/// every subcommand), and `decode`'s `-n` (`--line-numbers`) and `-o`
/// (`--output`); each does what its long form does.
#[test]
fn short_flags_do_what_their_long_forms_do() {
    let input = b"{\"command\":\"steer\",\"text\":\"x\"}\n\n{\"command\":\"nap\"}\n";
    /// (short form, long form, stdin, stdout, status)
    type Case<'a> = (&'a [&'a str], &'a [&'a str], &'a [u8], &'a str, i32);
    let table: &[Case] = &[
        (
            &["-r", "v1", "encode", "prompt", "x"],
            &["--revision", "v1", "encode", "prompt", "x"],
            b"",
            "{\"command\":\"prompt\",\"text\":\"x\"}\n",
            0,
        ),
        (
            &["encode", "prompt", "x", "-r", "v1"],
            &["encode", "prompt", "x", "--revision", "v1"],
            b"",
            "{\"command\":\"prompt\",\"text\":\"x\"}\n",
            0,
        ),
        (
            &["decode", "-r", "v1", "-n", "-o", "verdict"],
            &["decode", "--revision", "v1", "--line-numbers", "--output", "verdict"],
            input,
            "1\tOK {\"command\":\"steer\",\"kind\":\"prompt\",\"text\":\"x\"}\n2\tNOTJSON\n3\tERR unknown command: nap\n",
            0,
        ),
        (
            &["decode", "-n"],
            &["decode", "--line-numbers"],
            input,
            "1\t{\"command\":\"steer\",\"kind\":\"prompt\",\"content\":\"x\"}\n3\t{\"event\":\"command_error\",\"error\":\"unknown command: nap\"}\n",
            1,
        ),
    ];
    for &(short, long, stdin, stdout, status) in table {
        assert_eq!(stdout_of(short, stdin, status), stdout, "{short:?}");
        assert_eq!(stdout_of(long, stdin, status), stdout, "{long:?}");
    }
    let help = stdout_of(&["decode", "--help"], b"", 0);
    for holds in [
        "\n  -r, --revision <REVISION>\n",
        "\n  -n, --line-numbers\n",
        "\n  -o, --output <KIND>\n",
    ] {
        assert!(help.contains(holds), "lacks {holds:?}:\n{help}");
    }
}
