//! `serve-command tap`, run as a child process between a test (the
//! controller) and small `sh` engines, each answering with canned lines
//! after reading all its input, so that every line is judged in a known
//! order.
#![cfg(all(feature = "cli", unix))]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

#[path = "support/bin.rs"]
mod bin;

use bin::{run, stdout_of, BIN};

/// A directory of its own for `test`.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("serve-command-tap-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `tap [options] --log LOG -- sh -c SCRIPT sh ARGS...` on `stdin`;
/// returns its output and its log with every `t_ms` and `t_us` set to 0.
fn tap(
    dir: &Path,
    options: &[&str],
    script: &str,
    args: &[&str],
    stdin: &[u8],
) -> (Output, String) {
    let log = dir.join("log.jsonl");
    let log_arg = log.to_str().unwrap();
    let mut argv = vec!["tap"];
    argv.extend_from_slice(options);
    argv.extend_from_slice(&["--log", log_arg, "--", "sh", "-c", script, "sh"]);
    argv.extend_from_slice(args);
    let out = run(&argv, stdin);
    let text = std::fs::read_to_string(&log).unwrap();
    let log = text
        .lines()
        .map(|record| {
            let rest = record
                .strip_prefix("{\"t_ms\":")
                .expect("a record starts with t_ms");
            let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap();
            assert!(digits > 0, "t_ms is a number: {record}");
            let ms: u128 = rest[..digits].parse().unwrap();
            let rest = rest[digits..]
                .strip_prefix(",\"t_us\":")
                .expect("t_us follows t_ms");
            let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap();
            let us: u128 = rest[..digits].parse().unwrap();
            assert_eq!(ms, us / 1000, "one time, in ms and in us: {record}");
            format!("{{\"t_ms\":0,\"t_us\":0{}\n", &rest[digits..])
        })
        .collect();
    (out, log)
}

fn stderr(out: &Output) -> &str {
    std::str::from_utf8(&out.stderr).unwrap()
}

/// An engine that reads everything, then writes `lines` (each with a LF).
fn answering(lines: &[&str]) -> String {
    let mut script = "cat >/dev/null; printf '%s\\n'".to_owned();
    for line in lines {
        assert!(!line.contains('\''));
        script += &format!(" '{line}'");
    }
    script
}

#[test]
fn a_session_through_the_tap_is_byte_identical_on_both_sides() {
    let dir = scratch("identical");
    // Binary data, CRLF, a blank line, a lone CR, and no LF at the end.
    let mut commands = b"{\"command\":\"cancel\"}\r\n\n\xff\xfe\x00binary\n \r\n".to_vec();
    commands.extend_from_slice(b"{\"command\":\"prompt\",\"content\":\"\xc3\xa9t\xc3\xa9\"}\n");
    commands.extend_from_slice(b"{\"command\":\"compact\"}");
    let mut events = b"{\"event\":\"agent_step\",\"step\":1}\r\n\x80\x81 not UTF-8\n\n".to_vec();
    events.extend_from_slice(b"{\"event\":\"agent_finished\",\"answer\":\"done\"}");
    std::fs::write(dir.join("events"), &events).unwrap();
    let received = dir.join("received");
    let (out, log) = tap(
        &dir,
        &[],
        r#"cat >"$1"; cat "$2"; printf 'engine: bye\n' >&2"#,
        &[
            received.to_str().unwrap(),
            dir.join("events").to_str().unwrap(),
        ],
        &commands,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read(&received).unwrap(),
        commands,
        "the engine's stdin"
    );
    assert_eq!(out.stdout, events, "the tap's stdout");
    assert!(stderr(&out).contains("engine: bye\n"), "{}", stderr(&out));
    // Every line is in the log, the binary ones in base64, the last
    // without LF said so (unread: the engine stops at the binary line,
    // which is not JSON).
    // (The engine's stderr line is read on its own pipe: where its record
    // falls among the events' is a race, so it is counted apart.)
    let (stderr_records, lines): (Vec<&str>, Vec<&str>) = log
        .lines()
        .partition(|record| record.contains(r#""dir":"stderr""#));
    assert_eq!(stderr_records.len(), 1, "{log}");
    assert_eq!(lines.len(), 6 + 4 + 2, "{log}");
    assert!(
        lines[2].contains(r#""line_base64":"//4AYmluYXJ5""#),
        "{}",
        lines[2]
    );
    assert!(
        lines[5].contains(r#""line":"{\"command\":\"compact\"}","lf":false,"verdict":"unread""#),
        "{}",
        lines[5]
    );
    assert!(
        lines[7].contains(r#""line_base64":"gIEgbm90IFVURi04""#),
        "{}",
        lines[7]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_line_over_the_limit_is_forwarded_in_pieces_and_refused() {
    let dir = scratch("too-long");
    // 1 MiB, forwarded through a 1 KiB limit.
    let mut commands = b"{\"command\":\"cancel\"}\n".to_vec();
    commands.extend_from_slice(b"{\"command\":\"prompt\",\"content\":\"");
    commands.extend(std::iter::repeat_n(b'x', 1 << 20));
    commands.extend_from_slice(b"\"}\n{\"command\":\"cancel\"}\n");
    let long_event = format!(
        "{{\"event\":\"assistant_message\",\"content\":\"{}\"}}",
        "y".repeat(2000)
    );
    let received = dir.join("received");
    let script = format!(
        r#"cat >"$1"; printf '%s\n' '{{"event":"agent_aborted","reason":"cancelled"}}' '{{"event":"command_error","error":"command stream: line 2 is longer than 1024 bytes"}}' '{long_event}'"#
    );
    let (out, log) = tap(
        &dir,
        &["--max-line-len", "1KiB"],
        &script,
        &[received.to_str().unwrap()],
        &commands,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(std::fs::read(&received).unwrap(), commands);
    assert_eq!(
        String::from_utf8(out.stdout.clone()).unwrap(),
        format!("{{\"event\":\"agent_aborted\",\"reason\":\"cancelled\"}}\n{{\"event\":\"command_error\",\"error\":\"command stream: line 2 is longer than 1024 bytes\"}}\n{long_event}\n")
    );
    assert_eq!(
        stderr(&out),
        r#"tap: command 2: longer than 1024 bytes, the line limit
tap: command 2: refused; the engine owes {"event":"command_error","error":"command stream: line 2 is longer than 1024 bytes"}
tap: event 1: attributed to nothing: agent_aborted with no turn running (no prompt was sent)
tap: event 3: longer than 1024 bytes, the line limit
tap: event 3: stray output, not an event: longer than 1024 bytes
tap: summary: 3 command lines, 3 event lines, 0 stderr lines; 5 errors, 0 notes (1 refused, 1 stray, 2 too_long, 1 unattributed); the engine's exit 0
"#
    );
    assert_eq!(
        log,
        r#"{"t_ms":0,"t_us":0,"dir":"command","n":1,"line":"{\"command\":\"cancel\"}","verdict":"command","violations":[]}
{"t_ms":0,"t_us":0,"dir":"command","n":2,"line":null,"verdict":"refused","violations":[{"kind":"too_long","level":"error","message":"longer than 1024 bytes, the line limit","max":1024},{"kind":"refused","level":"error","message":"refused; the engine owes {\"event\":\"command_error\",\"error\":\"command stream: line 2 is longer than 1024 bytes\"}","owes":"{\"event\":\"command_error\",\"error\":\"command stream: line 2 is longer than 1024 bytes\"}"}]}
{"t_ms":0,"t_us":0,"dir":"command","n":3,"line":"{\"command\":\"cancel\"}","verdict":"unread","violations":[]}
{"t_ms":0,"t_us":0,"dir":"event","n":1,"line":"{\"event\":\"agent_aborted\",\"reason\":\"cancelled\"}","verdict":"event","answers":null,"turn":null,"violations":[{"kind":"unattributed","level":"error","message":"attributed to nothing: agent_aborted with no turn running (no prompt was sent)","reason":"agent_aborted with no turn running (no prompt was sent)"}]}
{"t_ms":0,"t_us":0,"dir":"event","n":2,"line":"{\"event\":\"command_error\",\"error\":\"command stream: line 2 is longer than 1024 bytes\"}","verdict":"command_error","answers":2,"turn":null,"violations":[]}
{"t_ms":0,"t_us":0,"dir":"event","n":3,"line":null,"verdict":"not_event","answers":null,"turn":null,"violations":[{"kind":"too_long","level":"error","message":"longer than 1024 bytes, the line limit","max":1024},{"kind":"stray","level":"error","message":"stray output, not an event: longer than 1024 bytes","reason":"longer than 1024 bytes"}]}
{"t_ms":0,"t_us":0,"dir":"exit","status":"exit 0","code":0,"violations":[]}
{"t_ms":0,"t_us":0,"dir":"summary","lines":{"command":3,"event":3,"stderr":0},"violations":{"refused":1,"stray":1,"too_long":2,"unattributed":1},"status":"exit 0","code":0}
"#
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_controllers_violations_are_named_with_what_the_engine_owes() {
    let dir = scratch("controller");
    let commands = concat!(
        "{\"command\":\"cancel\"}\n",
        "{\"command\":\"steer\",\"text\":\"look\"}\n",
        "\n",
        "{\"command\":\"compact\"}\r\n",
        "{\"command\":\"nap\"}\n",
        "{\"command\":\"goal\",\"action\":\"set\",\"text\":\" \"}\n",
        "{\"request_id\":\"r1\",\"command\":\"jobs_snapshot\"}",
    );
    let engine = answering(&[
        r#"{"event":"agent_aborted","reason":"cancelled"}"#,
        r#"{"event":"steer_applied","kind":"prompt","content":"look"}"#,
        r#"{"event":"compaction_started","from_sequence":0,"to_sequence":0}"#,
        r#"{"event":"command_error","error":"unknown command: nap"}"#,
        r#"{"event":"command_error","error":"goal text must not be blank"}"#,
        r#"{"event":"jobs_snapshot","request_id":"r1","jobs":[]}"#,
    ]);
    let (out, log) = tap(&dir, &[], &engine, &[], commands.as_bytes());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        r#"tap: command 2: note: not canonical (extra keys, legacy fields, another key order or spacing); the crate writes {"command":"steer","kind":"prompt","content":"look"}
tap: command 3: note: blank line; the engine skips it
tap: command 4: note: ends in CRLF; the CR is read as JSON whitespace
tap: command 5: refused; the engine owes {"event":"command_error","error":"unknown command: nap"}
tap: command 6: refused; the engine owes {"event":"command_error","error":"goal text must not be blank"}
tap: command 7: note: not canonical (extra keys, legacy fields, another key order or spacing); the crate writes {"command":"jobs_snapshot","request_id":"r1"}
tap: event 1: attributed to nothing: agent_aborted with no turn running (no prompt was sent)
tap: event 2: attributed to nothing: steer_applied with no turn running (no prompt was sent)
tap: owed at the engine's exit:
tap:   steer_applied or steer_dropped to command 2
tap:   the end of the work of command 4
tap: summary: 7 command lines, 6 event lines, 0 stderr lines; 4 errors, 4 notes (1 blank, 1 crlf, 2 not_canonical, 2 refused, 2 unattributed); the engine's exit 0
"#
    );
    assert_eq!(
        log,
        r#"{"t_ms":0,"t_us":0,"dir":"command","n":1,"line":"{\"command\":\"cancel\"}","verdict":"command","violations":[]}
{"t_ms":0,"t_us":0,"dir":"command","n":2,"line":"{\"command\":\"steer\",\"text\":\"look\"}","verdict":"command","violations":[{"kind":"not_canonical","level":"note","message":"not canonical (extra keys, legacy fields, another key order or spacing); the crate writes {\"command\":\"steer\",\"kind\":\"prompt\",\"content\":\"look\"}","canonical":"{\"command\":\"steer\",\"kind\":\"prompt\",\"content\":\"look\"}"}]}
{"t_ms":0,"t_us":0,"dir":"command","n":3,"line":"","verdict":"blank","violations":[{"kind":"blank","level":"note","message":"blank line; the engine skips it"}]}
{"t_ms":0,"t_us":0,"dir":"command","n":4,"line":"{\"command\":\"compact\"}\r","verdict":"command","violations":[{"kind":"crlf","level":"note","message":"ends in CRLF; the CR is read as JSON whitespace"}]}
{"t_ms":0,"t_us":0,"dir":"command","n":5,"line":"{\"command\":\"nap\"}","verdict":"refused","violations":[{"kind":"refused","level":"error","message":"refused; the engine owes {\"event\":\"command_error\",\"error\":\"unknown command: nap\"}","owes":"{\"event\":\"command_error\",\"error\":\"unknown command: nap\"}"}]}
{"t_ms":0,"t_us":0,"dir":"command","n":6,"line":"{\"command\":\"goal\",\"action\":\"set\",\"text\":\" \"}","verdict":"refused","violations":[{"kind":"refused","level":"error","message":"refused; the engine owes {\"event\":\"command_error\",\"error\":\"goal text must not be blank\"}","owes":"{\"event\":\"command_error\",\"error\":\"goal text must not be blank\"}"}]}
{"t_ms":0,"t_us":0,"dir":"command","n":7,"line":"{\"request_id\":\"r1\",\"command\":\"jobs_snapshot\"}","lf":false,"verdict":"command","violations":[{"kind":"not_canonical","level":"note","message":"not canonical (extra keys, legacy fields, another key order or spacing); the crate writes {\"command\":\"jobs_snapshot\",\"request_id\":\"r1\"}","canonical":"{\"command\":\"jobs_snapshot\",\"request_id\":\"r1\"}"}]}
{"t_ms":0,"t_us":0,"dir":"event","n":1,"line":"{\"event\":\"agent_aborted\",\"reason\":\"cancelled\"}","verdict":"event","answers":null,"turn":null,"violations":[{"kind":"unattributed","level":"error","message":"attributed to nothing: agent_aborted with no turn running (no prompt was sent)","reason":"agent_aborted with no turn running (no prompt was sent)"}]}
{"t_ms":0,"t_us":0,"dir":"event","n":2,"line":"{\"event\":\"steer_applied\",\"kind\":\"prompt\",\"content\":\"look\"}","verdict":"event","answers":null,"turn":null,"violations":[{"kind":"unattributed","level":"error","message":"attributed to nothing: steer_applied with no turn running (no prompt was sent)","reason":"steer_applied with no turn running (no prompt was sent)"}]}
{"t_ms":0,"t_us":0,"dir":"event","n":3,"line":"{\"event\":\"compaction_started\",\"from_sequence\":0,\"to_sequence\":0}","verdict":"event","answers":4,"turn":null,"violations":[]}
{"t_ms":0,"t_us":0,"dir":"event","n":4,"line":"{\"event\":\"command_error\",\"error\":\"unknown command: nap\"}","verdict":"command_error","answers":5,"turn":null,"violations":[]}
{"t_ms":0,"t_us":0,"dir":"event","n":5,"line":"{\"event\":\"command_error\",\"error\":\"goal text must not be blank\"}","verdict":"command_error","answers":6,"turn":null,"violations":[]}
{"t_ms":0,"t_us":0,"dir":"event","n":6,"line":"{\"event\":\"jobs_snapshot\",\"request_id\":\"r1\",\"jobs\":[]}","verdict":"event","answers":7,"turn":null,"violations":[]}
{"t_ms":0,"t_us":0,"dir":"exit","status":"exit 0","code":0,"violations":[]}
{"t_ms":0,"t_us":0,"dir":"summary","lines":{"command":7,"event":6,"stderr":0},"violations":{"blank":1,"crlf":1,"not_canonical":2,"refused":2,"unattributed":2},"status":"exit 0","code":0}
"#
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_bom_is_named_and_the_line_refused_as_not_json() {
    let dir = scratch("bom");
    let engine = answering(&[
        r#"{"event":"command_error","error":"command stream: expected a JSON value at byte 0"}"#,
    ]);
    let (out, log) = tap(
        &dir,
        &[],
        &engine,
        &[],
        b"\xef\xbb\xbf{\"command\":\"cancel\"}\n{\"command\":\"cancel\"}\n",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        r#"tap: command 1: starts with a UTF-8 BOM, which is not JSON
tap: command 1: refused; the engine owes {"event":"command_error","error":"command stream: expected a JSON value at byte 0"}
tap: summary: 2 command lines, 1 event line, 0 stderr lines; 2 errors, 0 notes (1 bom, 1 refused); the engine's exit 0
"#
    );
    assert!(log.starts_with("{\"t_ms\":0,\"t_us\":0,\"dir\":\"command\",\"n\":1,\"line\":\"\u{feff}{\\\"command\\\":\\\"cancel\\\"}\",\"verdict\":\"refused\",\"violations\":[{\"kind\":\"bom\",\"level\":\"error\""), "{log}");
    assert!(log.contains("{\"t_ms\":0,\"t_us\":0,\"dir\":\"command\",\"n\":2,\"line\":\"{\\\"command\\\":\\\"cancel\\\"}\",\"verdict\":\"unread\",\"violations\":[]}\n"), "{log}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_engines_violations_are_named() {
    let dir = scratch("engine");
    let commands = concat!(
        "{\"command\":\"nap\"}\n",
        "{\"command\":\"approval\",\"id\":\"a1\"}\n",
        "{\"command\":\"cancel\"}\n",
        "not json\n",
        "{\"command\":\"jobs_snapshot\",\"request_id\":\"r9\"}\n",
        "{\"command\":\"dance\"}\n",
    );
    // A banner, a right answer, a wrong one, an event, the answer to the
    // line that ends reading, then answers to two lines after it, and a
    // command_error with nothing to answer.
    let engine = answering(&[
        "my-engine 1.0 ready",
        r#"{"event":"command_error","error":"unknown command: nap"}"#,
        r#"{"event":"command_error","error":"bad approval"}"#,
        r#"{"event":"agent_aborted","reason":"cancelled"}"#,
        r#"{"event":"command_error","error":"command stream: expected a JSON value at byte 0"}"#,
        r#"{"event":"jobs_snapshot","request_id":"r9","jobs":[]}"#,
        r#"{"event":"command_error","error":"unknown command: dance"}"#,
        r#"{"event":"command_error","error":"unknown command: x"}"#,
        r#"{"event":"nap_taken"}"#,
    ]);
    let (out, log) = tap(&dir, &[], &engine, &[], commands.as_bytes());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        r#"tap: command 1: refused; the engine owes {"event":"command_error","error":"unknown command: nap"}
tap: command 2: refused; the engine owes {"event":"command_error","error":"expected a boolean \"allow\" field"}
tap: command 4: refused; the engine owes {"event":"command_error","error":"command stream: expected a JSON value at byte 0"}
tap: event 1: stray output, not an event: not JSON: expected a JSON value at byte 0
tap: event 3: the command_error for command 2 says "bad approval"; the engine owes "expected a boolean \"allow\" field"
tap: event 4: attributed to nothing: agent_aborted with no turn running (no prompt was sent)
tap: event 6: the engine read on after command 4 (not JSON): this jobs_snapshot answers command 5
tap: event 7: the engine read on after command 4 (not JSON): this command_error answers command 6
tap: event 8: a command_error with no refused line to answer: "unknown command: x"
tap: event 9: stray output, not an event: unknown event: nap_taken
tap: summary: 6 command lines, 9 event lines, 0 stderr lines; 10 errors, 0 notes (3 refused, 2 still_reading, 2 stray, 1 unattributed, 1 unexpected_answer, 1 wrong_answer); the engine's exit 0
"#
    );
    let records: Vec<&str> = log.lines().collect();
    assert_eq!(
        records[5..8],
        [
            r#"{"t_ms":0,"t_us":0,"dir":"command","n":6,"line":"{\"command\":\"dance\"}","verdict":"unread","violations":[]}"#,
            r#"{"t_ms":0,"t_us":0,"dir":"event","n":1,"line":"my-engine 1.0 ready","verdict":"not_event","answers":null,"turn":null,"violations":[{"kind":"stray","level":"error","message":"stray output, not an event: not JSON: expected a JSON value at byte 0","reason":"not JSON: expected a JSON value at byte 0"}]}"#,
            r#"{"t_ms":0,"t_us":0,"dir":"event","n":2,"line":"{\"event\":\"command_error\",\"error\":\"unknown command: nap\"}","verdict":"command_error","answers":1,"turn":null,"violations":[]}"#,
        ]
    );
    assert_eq!(
        records[8..14],
        [
            r#"{"t_ms":0,"t_us":0,"dir":"event","n":3,"line":"{\"event\":\"command_error\",\"error\":\"bad approval\"}","verdict":"command_error","answers":2,"turn":null,"violations":[{"kind":"wrong_answer","level":"error","message":"the command_error for command 2 says \"bad approval\"; the engine owes \"expected a boolean \\\"allow\\\" field\"","command_n":2,"owed":"expected a boolean \"allow\" field","got":"bad approval"}]}"#,
            r#"{"t_ms":0,"t_us":0,"dir":"event","n":4,"line":"{\"event\":\"agent_aborted\",\"reason\":\"cancelled\"}","verdict":"event","answers":null,"turn":null,"violations":[{"kind":"unattributed","level":"error","message":"attributed to nothing: agent_aborted with no turn running (no prompt was sent)","reason":"agent_aborted with no turn running (no prompt was sent)"}]}"#,
            r#"{"t_ms":0,"t_us":0,"dir":"event","n":5,"line":"{\"event\":\"command_error\",\"error\":\"command stream: expected a JSON value at byte 0\"}","verdict":"command_error","answers":4,"turn":null,"violations":[]}"#,
            r#"{"t_ms":0,"t_us":0,"dir":"event","n":6,"line":"{\"event\":\"jobs_snapshot\",\"request_id\":\"r9\",\"jobs\":[]}","verdict":"event","answers":null,"turn":null,"violations":[{"kind":"still_reading","level":"error","message":"the engine read on after command 4 (not JSON): this jobs_snapshot answers command 5","command_n":5,"stopped_at":4}]}"#,
            r#"{"t_ms":0,"t_us":0,"dir":"event","n":7,"line":"{\"event\":\"command_error\",\"error\":\"unknown command: dance\"}","verdict":"command_error","answers":null,"turn":null,"violations":[{"kind":"still_reading","level":"error","message":"the engine read on after command 4 (not JSON): this command_error answers command 6","command_n":6,"stopped_at":4}]}"#,
            r#"{"t_ms":0,"t_us":0,"dir":"event","n":8,"line":"{\"event\":\"command_error\",\"error\":\"unknown command: x\"}","verdict":"command_error","answers":null,"turn":null,"violations":[{"kind":"unexpected_answer","level":"error","message":"a command_error with no refused line to answer: \"unknown command: x\"","got":"unknown command: x"}]}"#,
        ]
    );
    assert_eq!(
        records[15..],
        [
            r#"{"t_ms":0,"t_us":0,"dir":"exit","status":"exit 0","code":0,"violations":[]}"#,
            r#"{"t_ms":0,"t_us":0,"dir":"summary","lines":{"command":6,"event":9,"stderr":0},"violations":{"refused":3,"still_reading":2,"stray":2,"unattributed":1,"unexpected_answer":1,"wrong_answer":1},"status":"exit 0","code":0}"#,
        ]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn refused_lines_left_unanswered_are_named_at_exit() {
    let dir = scratch("unanswered");
    let (out, log) = tap(
        &dir,
        &[],
        "cat >/dev/null; exit 3",
        &[],
        b"{\"command\":\"nap\"}\n{\"command\":\"cancel\"}\n{\"command\":\"approval\",\"id\":\"a1\",\"allow\":1}\n",
    );
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(
        stderr(&out),
        r#"tap: command 1: refused; the engine owes {"event":"command_error","error":"unknown command: nap"}
tap: command 3: refused; the engine owes {"event":"command_error","error":"expected a boolean \"allow\" field"}
tap: exit: command 1 was refused and never answered; the engine owed {"event":"command_error","error":"unknown command: nap"}
tap: exit: command 3 was refused and never answered; the engine owed {"event":"command_error","error":"expected a boolean \"allow\" field"}
tap: owed at the engine's exit:
tap:   a command_error to refused command 1, 3
tap: summary: 3 command lines, 0 event lines, 0 stderr lines; 4 errors, 0 notes (2 refused, 2 unanswered); the engine's exit 3
"#
    );
    let records: Vec<&str> = log.lines().collect();
    assert_eq!(
        records[3..],
        [
            r#"{"t_ms":0,"t_us":0,"dir":"exit","status":"exit 3","code":3,"violations":[{"kind":"unanswered","level":"error","message":"command 1 was refused and never answered; the engine owed {\"event\":\"command_error\",\"error\":\"unknown command: nap\"}","command_n":1,"owed":"{\"event\":\"command_error\",\"error\":\"unknown command: nap\"}"},{"kind":"unanswered","level":"error","message":"command 3 was refused and never answered; the engine owed {\"event\":\"command_error\",\"error\":\"expected a boolean \\\"allow\\\" field\"}","command_n":3,"owed":"{\"event\":\"command_error\",\"error\":\"expected a boolean \\\"allow\\\" field\"}"}]}"#,
            r#"{"t_ms":0,"t_us":0,"dir":"summary","lines":{"command":3,"event":0,"stderr":0},"violations":{"refused":2,"unanswered":2},"status":"exit 3","code":3}"#,
        ]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_engine_that_exits_without_reading_ends_the_session() {
    // 4 MiB, more than the pipes hold: the tap's writes to the engine
    // fail, and it stops reading, exiting with the engine's status.
    let commands = "{\"command\":\"cancel\"}\n".repeat(200_000);
    let mut child = Command::new(BIN)
        .args(["tap", "--", "sh", "-c", "exit 4"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // Broken once the tap has gone, as it would be with the engine alone.
    let writer = std::thread::spawn(move || stdin.write_all(commands.as_bytes()));
    let out = child.wait_with_output().unwrap();
    let _ = writer.join().unwrap();
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(
        stderr(&out).ends_with("; no violations; the engine's exit 4\n"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn the_exit_status_is_the_engines() {
    for (script, code, said) in [
        ("exit 0", 0, "exit 0"),
        ("exit 3", 3, "exit 3"),
        ("exit 255", 255, "exit 255"),
        ("kill -9 $$", 137, "signal 9"),
        ("kill -15 $$", 143, "signal 15"),
    ] {
        let out = run(&["tap", "--", "sh", "-c", script], b"");
        assert_eq!(out.status.code(), Some(code), "{script}: {}", stderr(&out));
        assert_eq!(
            stderr(&out),
            format!("tap: summary: 0 command lines, 0 event lines, 0 stderr lines; no violations; the engine's {said}\n"),
            "{script}"
        );
    }
    let out = run(&["tap", "--", "/nonexistent/engine"], b"");
    assert_eq!(out.status.code(), Some(127));
    assert_eq!(
        stderr(&out),
        "serve-command: tap: cannot start /nonexistent/engine: No such file or directory\n"
    );
}

#[test]
fn each_line_is_passed_on_as_soon_as_it_is_complete() {
    // A controller that waits for each answer before it writes the next
    // line: a tap that waited for more input would hang it.
    let mut child = Command::new(BIN)
        .args([
            "tap",
            "--",
            "sh",
            "-c",
            r#"while IFS= read -r line; do printf '{"event":"agent_finished","answer":"ok"}\n'; done"#,
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for _ in 0..3 {
            stdin
                .write_all(b"{\"command\":\"prompt\",\"content\":\"hi\"}\n")
                .unwrap();
            stdin.flush().unwrap();
            let mut answer = String::new();
            stdout.read_line(&mut answer).unwrap();
            tx.send(answer).unwrap();
        }
    });
    for _ in 0..3 {
        let answer = rx
            .recv_timeout(Duration::from_secs(20))
            .expect("the answer before the next line is written");
        assert_eq!(answer, "{\"event\":\"agent_finished\",\"answer\":\"ok\"}\n");
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        stderr(&out),
        "tap: summary: 3 command lines, 3 event lines, 0 stderr lines; no violations; the engine's exit 0\n"
    );
}

#[test]
fn tap_speaks_v2_only_and_needs_its_log_before_it_starts() {
    let out = run(&["--revision", "v1", "tap", "--", "true"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "serve-command: tap needs --revision v2: the protocol's first revision is the command half only\n"
    );
    let out = run(
        &["tap", "--log", "/nonexistent/dir/log.jsonl", "--", "true"],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "serve-command: /nonexistent/dir/log.jsonl: No such file or directory\n"
    );
    let out = run(&["tap"], b"");
    assert_eq!(out.status.code(), Some(2));
}

/// The events `serve-command mock-engine` writes for a session, through
/// the tap, whose log says of each what it answers and which turn it
/// belongs to; `trace` reads the log back to the same attribution.
///
/// The controller writes its lines in groups, each in one write (so the
/// tap reads a group in one read and judges it as one batch), and reads
/// the events a group is owed before it writes the next: the log's order
/// of command and event records is then the same on every run. The races:
/// a `jobs_snapshot` answered while a turn waits for its approval, a
/// compaction and a prompt queued behind a turn, a steer and a goal sent
/// into a waiting turn, a `cancel` sent with the approval that lets the
/// turn finish (its `agent_finished` crosses the cancel, which hits
/// nothing), and a `cancel` that aborts a turn.
#[test]
fn the_log_says_what_each_event_of_the_mock_engine_answers_and_trace_agrees() {
    let dir = scratch("attribution");
    let script = dir.join("turns.jsonl");
    let ask = r#"{"approval":{"tool_name":"shell","detail":"run cargo test","body":"cargo test"}}"#;
    std::fs::write(&script, format!("{ask}\n{ask}\n{ask}\n")).unwrap();
    let log = dir.join("log.jsonl");
    let mut child = Command::new(BIN)
        .args([
            "tap",
            "--log",
            log.to_str().unwrap(),
            "--",
            BIN,
            "mock-engine",
        ])
        .arg("--script")
        .arg(&script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let (tx, events) = mpsc::channel();
    std::thread::spawn(move || {
        for line in stdout.lines() {
            let _ = tx.send(line.unwrap());
        }
    });
    // (the lines written at once, how many event lines they are owed)
    let groups: [(&[&str], usize); 7] = [
        (&[r#"{"command":"prompt","content":"first"}"#], 2),
        (
            &[
                r#"{"command":"jobs_snapshot","request_id":"j1"}"#,
                r#"{"command":"nap"}"#,
            ],
            2,
        ),
        (
            &[
                r#"{"command":"compact"}"#,
                r#"{"command":"prompt","content":"second"}"#,
                r#"{"command":"steer","kind":"prompt","content":"also","submission_id":"s1"}"#,
                r#"{"command":"goal","action":"set","text":"ship"}"#,
            ],
            0,
        ),
        (
            &[r#"{"command":"approval","id":"approval-1","allow":true}"#],
            13,
        ),
        (
            &[
                r#"{"command":"approval","id":"approval-2","allow":false}"#,
                r#"{"command":"cancel"}"#,
            ],
            9,
        ),
        (&[r#"{"command":"prompt","content":"third"}"#], 2),
        (&[r#"{"command":"cancel"}"#], 2),
    ];
    for (lines, owed) in groups {
        let mut group = lines.join("\n");
        group.push('\n');
        stdin.write_all(group.as_bytes()).unwrap();
        stdin.flush().unwrap();
        for _ in 0..owed {
            events
                .recv_timeout(Duration::from_secs(20))
                .expect("the events the lines are owed");
        }
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        events.recv_timeout(Duration::from_secs(20)).is_err(),
        "every event was read"
    );
    assert_eq!(
        stderr(&out),
        r#"tap: command 3: refused; the engine owes {"event":"command_error","error":"unknown command: nap"}
tap: summary: 12 command lines, 30 event lines, 0 stderr lines; 1 error, 0 notes (1 refused); the engine's exit 0
"#
    );
    // Each record as `dir n: name answers turn` (the command's name for a
    // command record).
    let text = std::fs::read_to_string(&log).unwrap();
    let records: Vec<String> = text
        .lines()
        .filter_map(|record| {
            let r: serde_json::Value = serde_json::from_str(record).unwrap();
            let line = r["line"].as_str()?;
            let l: serde_json::Value = serde_json::from_str(line).unwrap();
            Some(match r["dir"].as_str().unwrap() {
                "command" => format!("command {}: {}", r["n"], l["command"].as_str().unwrap()),
                "event" => format!(
                    "event {}: {} answers {} turn {}",
                    r["n"],
                    l["event"].as_str().unwrap(),
                    r["answers"],
                    r["turn"]
                ),
                dir => panic!("{dir}"),
            })
        })
        .collect();
    assert_eq!(
        records,
        [
            "command 1: prompt",
            "event 1: agent_step answers null turn 1",
            "event 2: approval_requested answers null turn 1",
            "command 2: jobs_snapshot",
            "command 3: nap",
            "event 3: jobs_snapshot answers 2 turn null",
            "event 4: command_error answers 3 turn null",
            "command 4: compact",
            "command 5: prompt",
            "command 6: steer",
            "command 7: goal",
            "command 8: approval",
            "event 5: approval_resolved answers 8 turn 1",
            "event 6: tool_result answers null turn 1",
            "event 7: steer_applied answers 6 turn 1",
            "event 8: agent_step answers null turn 1",
            "event 9: assistant_delta answers null turn 1",
            "event 10: assistant_delta answers null turn 1",
            "event 11: assistant_message answers null turn 1",
            "event 12: usage answers null turn 1",
            "event 13: agent_finished answers null turn 1",
            "event 14: compaction_started answers 4 turn null",
            "event 15: compaction_finished answers 4 turn null",
            "event 16: agent_step answers null turn 5",
            "event 17: approval_requested answers null turn 5",
            "command 9: approval",
            "command 10: cancel",
            "event 18: approval_resolved answers 9 turn 5",
            "event 19: tool_result answers null turn 5",
            "event 20: agent_step answers null turn 5",
            "event 21: assistant_delta answers null turn 5",
            "event 22: assistant_delta answers null turn 5",
            "event 23: assistant_message answers null turn 5",
            "event 24: usage answers null turn 5",
            "event 25: agent_finished answers null turn 5",
            "event 26: goal_updated answers 7 turn null",
            "command 11: prompt",
            "event 27: agent_step answers null turn 11",
            "event 28: approval_requested answers null turn 11",
            "command 12: cancel",
            "event 29: approval_resolved answers null turn 11",
            "event 30: agent_aborted answers 12 turn 11",
        ]
    );
    assert_eq!(
        stdout_of(&["trace", log.to_str().unwrap()], b"", 0),
        r#"command 1: prompt "first"
turn of command 1:
  event 1: agent_step
  event 2: approval_requested
command 2: jobs_snapshot "j1"
command 3: refused: {"command":"nap"}
event 3: jobs_snapshot, answers command 2
event 4: command_error, answers command 3
command 4: compact
command 5: prompt "second"
command 6: steer prompt "also" submission_id "s1"
command 7: goal set "ship"
command 8: approval "approval-1" allow
turn of command 1, continued:
  event 5: approval_resolved, answers command 8
  event 6: tool_result
  event 7: steer_applied, answers command 6
  event 8: agent_step
  event 9: assistant_delta
  event 10: assistant_delta
  event 11: assistant_message
  event 12: usage
  event 13: agent_finished; the turn ends
event 14: compaction_started, answers command 4
event 15: compaction_finished, answers command 4
turn of command 5:
  event 16: agent_step
  event 17: approval_requested
command 9: approval "approval-2" reject
command 10: cancel
turn of command 5, continued:
  event 18: approval_resolved, answers command 9
  event 19: tool_result
  event 20: agent_step
  event 21: assistant_delta
  event 22: assistant_delta
  event 23: assistant_message
  event 24: usage
  event 25: agent_finished; the turn ends
event 26: goal_updated, answers command 7
command 11: prompt "third"
turn of command 11:
  event 27: agent_step
  event 28: approval_requested
command 12: cancel
turn of command 11, continued:
  event 29: approval_resolved
  event 30: agent_aborted, answers command 12; the turn ends
owed: nothing
"#
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A controller that spawns its engine through the tap keeps the engine's
/// stderr lines: the tap passes them on after its reports of the lines
/// read before them (here three hundred lines of stray output, far more
/// than the controller's stderr tail), and ends the engine's last line
/// when the engine did not.
#[test]
fn a_controller_through_the_tap_keeps_the_engines_stderr() {
    use serve_command::v2::serve::{Controller, ControllerError, STDERR_TAIL};
    let dir = scratch("controller-stderr");
    let log = dir.join("log.jsonl");
    let engine = "read line
i=0; while [ $i -lt 300 ]; do echo 'my-engine: not an event'; i=$((i+1)); done
sleep 0.5; printf oops >&2; exit 3";
    let controller = Controller::spawn(
        Command::new(BIN)
            .args(["tap", "--log", log.to_str().unwrap(), "--"])
            .args(["sh", "-c", engine]),
    )
    .unwrap()
    .with_timeout(Duration::from_secs(20));
    let stopped = match controller.prompt("hello").and_then(|turn| turn.wait()) {
        Err(ControllerError::Stopped(stopped)) => stopped,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        stopped.status.and_then(|s| s.code()),
        Some(3),
        "{stopped:?}"
    );
    let reports = 300 * "tap: event 300: stray output, not an event: not JSON: ...".len();
    assert!(reports > STDERR_TAIL, "the reports alone overflow the tail");
    let mut lines = stopped.stderr.lines().rev();
    assert_eq!(
        lines.next(),
        Some(
            "tap: summary: 1 command line, 300 event lines, 1 stderr line; \
             300 errors, 0 notes (300 stray); the engine's exit 3"
        ),
        "{stopped:?}"
    );
    // What the engine still owes is said at its exit, after its words.
    assert_eq!(
        lines.next(),
        Some("tap:   the work, not started, of command 1"),
        "{stopped:?}"
    );
    assert_eq!(
        lines.next(),
        Some("tap: owed at the engine's exit:"),
        "{stopped:?}"
    );
    assert_eq!(lines.next(), Some("oops"), "{stopped:?}");
    assert!(
        lines
            .next()
            .is_some_and(|l| l.starts_with("tap: event 300: stray output")),
        "{stopped:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn at_exit_the_tap_says_what_the_engine_still_owes() {
    // The engine answers the jobs_snapshot and nothing else: the steer and
    // the prompt's turn are owed when it exits, said as `trace` says them.
    let dir = scratch("owed");
    let (out, _) = tap(
        &dir,
        &[],
        &answering(&[r#"{"event":"jobs_snapshot","request_id":"r-1","jobs":[]}"#]),
        &[],
        b"{\"command\":\"prompt\",\"content\":\"hi\"}\n{\"command\":\"jobs_snapshot\",\"request_id\":\"r-1\"}\n{\"command\":\"steer\",\"kind\":\"prompt\",\"content\":\"shorter\",\"submission_id\":\"s-1\"}\n",
    );
    assert_eq!(
        stderr(&out),
        "tap: owed at the engine's exit:\n\
         tap:   steer_applied or steer_dropped to command 3\n\
         tap:   the work, not started, of command 1\n\
         tap: summary: 3 command lines, 1 event line, 0 stderr lines; no violations; the engine's exit 0\n"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
