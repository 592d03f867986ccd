//! `serve-command tap --redact REGEX`: the log with each match replaced by
//! `[redacted]` (in a JSON line, in its string values only), the lines
//! passed through as they are; and its usage errors.
#![cfg(all(feature = "cli", unix))]

use std::path::{Path, PathBuf};
use std::process::Output;

#[path = "support/bin.rs"]
mod bin;

use bin::{run, BIN};

/// A directory of its own for `test`.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "serve-command-redact-{test}-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The log's records, each with its times set to 0.
fn records(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .map(|record| {
            let at = record.find(",\"dir\":").expect("a record has a dir");
            format!("{{\"t_ms\":0,\"t_us\":0{}", &record[at..])
        })
        .collect()
}

fn stderr(out: &Output) -> &str {
    std::str::from_utf8(&out.stderr).unwrap()
}

#[test]
fn the_log_of_a_session_with_the_mock_engine_is_redacted_and_the_lines_pass_through_as_they_are() {
    let dir = scratch("mock");
    let log = dir.join("log.jsonl");
    let out = run(
        &[
            "tap",
            "--log",
            log.to_str().unwrap(),
            "--redact",
            r"hunter\d",
            "--redact",
            "(?i)secret",
            "--",
            BIN,
            "mock-engine",
        ],
        b"{\"command\":\"prompt\",\"content\":\"my Secret is hunter2\"}\n",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::str::from_utf8(&out.stdout).unwrap(),
        r#"{"event":"agent_step","step":1}
{"event":"assistant_delta","content":"You asked: "}
{"event":"assistant_delta","content":"my Secret is hunter2"}
{"event":"assistant_message","content":"You asked: my Secret is hunter2"}
{"event":"usage","usage":{"prompt_tokens":4,"completion_tokens":2,"total_tokens":6,"prompt_cache_hit_tokens":0,"prompt_cache_miss_tokens":4}}
{"event":"agent_finished","answer":"You asked: my Secret is hunter2"}
"#
    );
    assert_eq!(
        stderr(&out),
        "tap: summary: 1 command line, 6 event lines, 0 stderr lines; no violations; the engine's exit 0\n"
    );
    assert_eq!(
        records(&log),
        [
            r#"{"t_ms":0,"t_us":0,"dir":"command","n":1,"line":"{\"command\":\"prompt\",\"content\":\"my [redacted] is [redacted]\"}","verdict":"command","violations":[]}"#,
            r#"{"t_ms":0,"t_us":0,"dir":"event","n":1,"line":"{\"event\":\"agent_step\",\"step\":1}","verdict":"event","answers":null,"turn":1,"violations":[]}"#,
            r#"{"t_ms":0,"t_us":0,"dir":"event","n":2,"line":"{\"event\":\"assistant_delta\",\"content\":\"You asked: \"}","verdict":"event","answers":null,"turn":1,"violations":[]}"#,
            r#"{"t_ms":0,"t_us":0,"dir":"event","n":3,"line":"{\"event\":\"assistant_delta\",\"content\":\"my [redacted] is [redacted]\"}","verdict":"event","answers":null,"turn":1,"violations":[]}"#,
            r#"{"t_ms":0,"t_us":0,"dir":"event","n":4,"line":"{\"event\":\"assistant_message\",\"content\":\"You asked: my [redacted] is [redacted]\"}","verdict":"event","answers":null,"turn":1,"violations":[]}"#,
            r#"{"t_ms":0,"t_us":0,"dir":"event","n":5,"line":"{\"event\":\"usage\",\"usage\":{\"prompt_tokens\":4,\"completion_tokens\":2,\"total_tokens\":6,\"prompt_cache_hit_tokens\":0,\"prompt_cache_miss_tokens\":4}}","verdict":"event","answers":null,"turn":1,"violations":[]}"#,
            r#"{"t_ms":0,"t_us":0,"dir":"event","n":6,"line":"{\"event\":\"agent_finished\",\"answer\":\"You asked: my [redacted] is [redacted]\"}","verdict":"event","answers":null,"turn":1,"violations":[]}"#,
            r#"{"t_ms":0,"t_us":0,"dir":"exit","status":"exit 0","code":0,"violations":[]}"#,
            r#"{"t_ms":0,"t_us":0,"dir":"summary","lines":{"command":1,"event":6,"stderr":0},"violations":{},"status":"exit 0","code":0}"#,
        ]
    );
}

#[test]
fn keys_are_kept_other_text_is_redacted_whole_and_bytes_not_utf8_as_they_are() {
    let dir = scratch("whole");
    let log = dir.join("log.jsonl");
    // An engine that reads everything, then says a secret on stderr.
    let out = run(
        &[
            "tap",
            "--log",
            log.to_str().unwrap(),
            "--redact",
            "content|secret",
            "--",
            "sh",
            "-c",
            "cat >/dev/null; echo 'the content is secret' >&2",
        ],
        b"{\"command\":\"prompt\" ,\"content\":\"content\"}\nsecret \xff\nsecret, not JSON\n",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // The tap's reports and the engine's stderr are not the log: as they are.
    assert_eq!(
        stderr(&out),
        r#"tap: command 1: note: not canonical (extra keys, legacy fields, another key order or spacing); the crate writes {"command":"prompt","content":"content"}
tap: command 2: refused; the engine owes {"event":"command_error","error":"command stream: invalid UTF-8 at byte 7"}
the content is secret
tap: exit: command 2 was refused and never answered; the engine owed {"event":"command_error","error":"command stream: invalid UTF-8 at byte 7"}
tap: owed at the engine's exit:
tap:   a command_error to refused command 2
tap:   the work, not started, of command 1
tap: summary: 3 command lines, 0 event lines, 1 stderr line; 2 errors, 1 note (1 not_canonical, 1 refused, 1 unanswered); the engine's exit 0
"#
    );
    assert_eq!(
        records(&log),
        [
            r#"{"t_ms":0,"t_us":0,"dir":"command","n":1,"line":"{\"command\":\"prompt\" ,\"content\":\"[redacted]\"}","verdict":"command","violations":[{"kind":"not_canonical","level":"note","message":"not canonical (extra keys, legacy fields, another key order or spacing); the crate writes {\"command\":\"prompt\",\"[redacted]\":\"[redacted]\"}","canonical":"{\"command\":\"prompt\",\"content\":\"[redacted]\"}"}]}"#,
            r#"{"t_ms":0,"t_us":0,"dir":"command","n":2,"line_base64":"c2VjcmV0IP8=","verdict":"refused","violations":[{"kind":"refused","level":"error","message":"refused; the engine owes {\"event\":\"command_error\",\"error\":\"command stream: invalid UTF-8 at byte 7\"}","owes":"{\"event\":\"command_error\",\"error\":\"command stream: invalid UTF-8 at byte 7\"}"}]}"#,
            r#"{"t_ms":0,"t_us":0,"dir":"command","n":3,"line":"[redacted], not JSON","verdict":"unread","violations":[]}"#,
            r#"{"t_ms":0,"t_us":0,"dir":"stderr","n":1,"line":"the [redacted] is [redacted]","verdict":"text","violations":[]}"#,
            r#"{"t_ms":0,"t_us":0,"dir":"exit","status":"exit 0","code":0,"violations":[{"kind":"unanswered","level":"error","message":"command 2 was refused and never answered; the engine owed {\"event\":\"command_error\",\"error\":\"command stream: invalid UTF-8 at byte 7\"}","command_n":2,"owed":"{\"event\":\"command_error\",\"error\":\"command stream: invalid UTF-8 at byte 7\"}"}]}"#,
            r#"{"t_ms":0,"t_us":0,"dir":"summary","lines":{"command":3,"event":0,"stderr":1},"violations":{"not_canonical":1,"refused":1,"unanswered":1},"status":"exit 0","code":0}"#,
        ]
    );
}

#[test]
fn redact_without_a_log_or_with_a_bad_pattern_is_a_usage_error() {
    let out = run(&["tap", "--redact", "secret", "--", "true"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "serve-command: tap: --redact needs --log FILE: it redacts the log, and the lines pass through as they are\n"
    );
    assert!(out.stdout.is_empty());

    let dir = scratch("usage");
    let log = dir.join("log.jsonl");
    let out = run(
        &[
            "tap",
            "--log",
            log.to_str().unwrap(),
            "--redact",
            "ok",
            "--redact",
            "a(",
            "--",
            "true",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "serve-command: tap: --redact 'a(': regex parse error:\n    a(\n     ^\nerror: unclosed group\n"
    );
    // Refused before the log is created and the engine started.
    assert!(!log.exists());
}
