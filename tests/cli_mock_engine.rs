//! `serve-command mock-engine`, run as a child process: sessions of
//! commands in, the exact event lines out; scripted turns; refusals and a
//! line that is not JSON; the same bytes on every run; every line an
//! event; and `tap` finding nothing wrong on the engine's side.
#![cfg(all(feature = "cli", unix))]

use serve_command::v2::Event;
use std::path::PathBuf;

#[path = "support/bin.rs"]
mod bin;

use bin::{run, BIN};

const SESSION: &[u8] = include_bytes!("../examples/session.jsonl");

/// A directory of its own for `test`.
fn scratch(test: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("serve-command-mock-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `mock-engine` (with `script` as its `--script`, when given) on `input`:
/// its stdout and stderr, after asserting exit 0.
#[track_caller]
fn mock(test: &str, script: Option<&str>, input: &str) -> (String, String) {
    let mut args = vec!["mock-engine".to_owned()];
    if let Some(script) = script {
        let path = scratch(test).join("script.jsonl");
        std::fs::write(&path, script).unwrap();
        args.push("--script".to_owned());
        args.push(path.to_str().unwrap().to_owned());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run(&args, input.as_bytes());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(0), "{test}: {stderr}");
    (String::from_utf8(out.stdout).unwrap(), stderr)
}

/// The lines, each with its LF.
fn lines(lines: &[&str]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

const STEP1: &str = r#"{"event":"agent_step","step":1}"#;
const STEP2: &str = r#"{"event":"agent_step","step":2}"#;

/// A session: its name, the script (if any), the commands in, the events out.
type Session = (
    &'static str,
    Option<&'static str>,
    &'static [&'static str],
    &'static [&'static str],
);

const SESSIONS: &[Session] = &[
    (
        "the default turn",
        None,
        &[r#"{"command":"prompt","content":"fix the build"}"#],
        &[
            STEP1,
            r#"{"event":"assistant_delta","content":"You asked: "}"#,
            r#"{"event":"assistant_delta","content":"fix the build"}"#,
            r#"{"event":"assistant_message","content":"You asked: fix the build"}"#,
            r#"{"event":"usage","usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5,"prompt_cache_hit_tokens":0,"prompt_cache_miss_tokens":3}}"#,
            r#"{"event":"agent_finished","answer":"You asked: fix the build"}"#,
        ],
    ),
    (
        "the commands answered whether or not a turn runs",
        None,
        &[
            r#"{"command":"jobs_snapshot","request_id":"req-1"}"#,
            r#"{"command":"job_stop","request_id":"req-2","generation":"g-1","job_id":"job-4"}"#,
            r#"{"command":"predict","request_id":"p-1","source_sequence":42}"#,
            r#"{"command":"cancel_prediction","request_id":"p-1"}"#,
        ],
        &[
            r#"{"event":"jobs_snapshot","request_id":"req-1","jobs":[]}"#,
            r#"{"event":"job_stop_result","request_id":"req-2","generation":"g-1","job_id":"job-4","outcome":"not_found"}"#,
            r#"{"event":"prediction_result","request_id":"p-1","source_sequence":42,"outcome":{"kind":"skipped"}}"#,
        ],
    ),
    (
        "an idle engine: steers, goals, compaction; approval and cancel with nothing to act on",
        None,
        &[
            r#"{"command":"steer","kind":"prompt","content":"too late","submission_id":"s-1"}"#,
            r#"{"command":"steer","kind":"command","content":"/diff"}"#,
            r#"{"command":"goal","action":"set","text":"ship it","auto":true}"#,
            r#"{"command":"goal","action":"clear"}"#,
            r#"{"command":"approval","id":"appr-1","allow":true}"#,
            r#"{"command":"cancel"}"#,
            r#"{"command":"compact"}"#,
        ],
        &[
            r#"{"event":"steer_dropped","content":"too late","submission_id":"s-1"}"#,
            r#"{"event":"steer_applied","kind":"command","content":"/diff"}"#,
            r#"{"event":"goal_updated","goal":"ship it"}"#,
            r#"{"event":"goal_updated","goal":null}"#,
            r#"{"event":"compaction_started","from_sequence":0,"to_sequence":0}"#,
            r#"{"event":"compaction_finished","from_sequence":0,"to_sequence":0,"summary":"mock summary of 0 turns"}"#,
        ],
    ),
    (
        "refusals: not a command, the serve policy's, and reading on",
        None,
        &[
            r#"{"command":"nap"}"#,
            r#"{"command":"goal","action":"set","text":" "}"#,
            r#"{"command":"steer","kind":"command","content":[{"type":"image","media_type":"image/png","data":"iVBORw0KGgo="}]}"#,
            r#"{"command":"jobs_snapshot","request_id":""}"#,
            "",
            r#"{"command":"jobs_snapshot","request_id":"after"}"#,
        ],
        &[
            r#"{"event":"command_error","error":"unknown command: nap"}"#,
            r#"{"event":"command_error","error":"goal text must not be blank"}"#,
            r#"{"event":"command_error","error":"command steering does not accept images"}"#,
            r#"{"event":"command_error","error":"invalid background job command"}"#,
            r#"{"event":"jobs_snapshot","request_id":"after","jobs":[]}"#,
        ],
    ),
    (
        "a line that is not JSON ends reading",
        None,
        &[
            r#"{"command":"jobs_snapshot","request_id":"before"}"#,
            r#"{"command":"cancel""#,
            r#"{"command":"jobs_snapshot","request_id":"never"}"#,
        ],
        &[
            r#"{"event":"jobs_snapshot","request_id":"before","jobs":[]}"#,
            r#"{"event":"command_error","error":"command stream: unexpected end of line at byte 19"}"#,
        ],
    ),
    (
        "scripted turns in order, then the default",
        Some(concat!(
            "{\"deltas\":[\"Hel\",\"lo\"],\"reasoning\":[\"Greet \",\"back\"]}\n",
            "\n",
            "{\"answer\":\"Done\",\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":1,\"total_tokens\":11,\"prompt_cache_hit_tokens\":8,\"prompt_cache_miss_tokens\":2}}\n",
            "{\"fail\":\"rate limited\"}\n",
            "{\"events\":[{\"event\":\"agent_step\",\"step\":1},{\"event\":\"max_steps_exhausted\"}]}\n",
        )),
        &[
            r#"{"command":"prompt","content":"hi"}"#,
            r#"{"command":"prompt","content":"go on"}"#,
            r#"{"command":"prompt","content":"and?"}"#,
            r#"{"command":"prompt","content":"again"}"#,
            r#"{"command":"prompt","content":"last"}"#,
        ],
        &[
            STEP1,
            r#"{"event":"reasoning_delta","content":"Greet "}"#,
            r#"{"event":"reasoning_delta","content":"back"}"#,
            r#"{"event":"assistant_delta","content":"Hel"}"#,
            r#"{"event":"assistant_delta","content":"lo"}"#,
            r#"{"event":"reasoning_message","content":"Greet back"}"#,
            r#"{"event":"assistant_message","content":"Hello"}"#,
            r#"{"event":"usage","usage":{"prompt_tokens":1,"completion_tokens":4,"total_tokens":5,"prompt_cache_hit_tokens":0,"prompt_cache_miss_tokens":1}}"#,
            r#"{"event":"agent_finished","answer":"Hello"}"#,
            STEP1,
            r#"{"event":"assistant_delta","content":"Done"}"#,
            r#"{"event":"assistant_message","content":"Done"}"#,
            r#"{"event":"usage","usage":{"prompt_tokens":10,"completion_tokens":1,"total_tokens":11,"prompt_cache_hit_tokens":8,"prompt_cache_miss_tokens":2}}"#,
            r#"{"event":"agent_finished","answer":"Done"}"#,
            STEP1,
            r#"{"event":"turn_failed","error":"rate limited"}"#,
            STEP1,
            r#"{"event":"max_steps_exhausted"}"#,
            STEP1,
            r#"{"event":"assistant_delta","content":"You asked: "}"#,
            r#"{"event":"assistant_delta","content":"last"}"#,
            r#"{"event":"assistant_message","content":"You asked: last"}"#,
            r#"{"event":"usage","usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3,"prompt_cache_hit_tokens":0,"prompt_cache_miss_tokens":1}}"#,
            r#"{"event":"agent_finished","answer":"You asked: last"}"#,
        ],
    ),
    (
        "a turn waits for its approval; steers and goals (set, then cleared) land in order when it resumes, prompts after it",
        Some(concat!(
            "{\"approval\":{\"tool_name\":\"mbtx\",\"detail\":\"write src/\",\"body\":\"fs.write()\"},\"answer\":\"Written\"}\n",
            "{\"answer\":\"Next\"}\n",
        )),
        &[
            r#"{"command":"prompt","content":"write it"}"#,
            r#"{"command":"steer","content":"use tabs","submission_id":"s-1"}"#,
            r#"{"command":"goal","action":"set","text":"tests pass"}"#,
            r#"{"command":"goal","action":"clear"}"#,
            r#"{"command":"prompt","content":"then this"}"#,
            r#"{"command":"jobs_snapshot","request_id":"req-1"}"#,
            r#"{"command":"approval","id":"approval-9","allow":true}"#,
            r#"{"command":"approval","id":"approval-1","allow":false}"#,
        ],
        &[
            STEP1,
            r#"{"event":"approval_requested","id":"approval-1","tool_name":"mbtx","detail":"write src/","body":"fs.write()"}"#,
            r#"{"event":"jobs_snapshot","request_id":"req-1","jobs":[]}"#,
            r#"{"event":"approval_resolved","id":"approval-1","outcome":"rejected"}"#,
            r#"{"event":"tool_result","tool_call_id":"call-1","tool_name":"mbtx","is_error":true,"content":"the user rejected this action","brief":null}"#,
            r#"{"event":"steer_applied","kind":"prompt","content":"use tabs","submission_id":"s-1"}"#,
            r#"{"event":"goal_updated","goal":"tests pass"}"#,
            r#"{"event":"goal_updated","goal":null}"#,
            STEP2,
            r#"{"event":"assistant_delta","content":"Written"}"#,
            r#"{"event":"assistant_message","content":"Written"}"#,
            r#"{"event":"usage","usage":{"prompt_tokens":2,"completion_tokens":1,"total_tokens":3,"prompt_cache_hit_tokens":0,"prompt_cache_miss_tokens":2}}"#,
            r#"{"event":"agent_finished","answer":"Written"}"#,
            STEP1,
            r#"{"event":"assistant_delta","content":"Next"}"#,
            r#"{"event":"assistant_message","content":"Next"}"#,
            r#"{"event":"usage","usage":{"prompt_tokens":2,"completion_tokens":1,"total_tokens":3,"prompt_cache_hit_tokens":0,"prompt_cache_miss_tokens":2}}"#,
            r#"{"event":"agent_finished","answer":"Next"}"#,
        ],
    ),
    (
        "a goal sent behind a queued prompt waits for that prompt's turn to end, as upstream orders it",
        Some("{\"approval\":{},\"answer\":\"A\"}\n{\"answer\":\"B\"}\n"),
        &[
            r#"{"command":"prompt","content":"one"}"#,
            r#"{"command":"prompt","content":"two"}"#,
            r#"{"command":"goal","action":"set","text":"ship it"}"#,
            r#"{"command":"approval","id":"approval-1","allow":true}"#,
        ],
        &[
            STEP1,
            r#"{"event":"approval_requested","id":"approval-1","tool_name":"shell","detail":"run a command outside the sandbox","body":null}"#,
            r#"{"event":"approval_resolved","id":"approval-1","outcome":"allowed_once"}"#,
            r#"{"event":"tool_result","tool_call_id":"call-1","tool_name":"shell","is_error":false,"content":"ok","brief":null}"#,
            STEP2,
            r#"{"event":"assistant_delta","content":"A"}"#,
            r#"{"event":"assistant_message","content":"A"}"#,
            r#"{"event":"usage","usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2,"prompt_cache_hit_tokens":0,"prompt_cache_miss_tokens":1}}"#,
            r#"{"event":"agent_finished","answer":"A"}"#,
            STEP1,
            r#"{"event":"assistant_delta","content":"B"}"#,
            r#"{"event":"assistant_message","content":"B"}"#,
            r#"{"event":"usage","usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2,"prompt_cache_hit_tokens":0,"prompt_cache_miss_tokens":1}}"#,
            r#"{"event":"agent_finished","answer":"B"}"#,
            r#"{"event":"goal_updated","goal":"ship it"}"#,
        ],
    ),
    (
        "cancel stops a waiting turn; the end of input withdraws the next one's question",
        Some(concat!(
            "{\"approval\":{}}\n",
            "{\"approval\":{\"tool_name\":\"shell\",\"detail\":\"rm build/\"},\"answer\":\"Gave up\"}\n",
        )),
        &[
            r#"{"command":"prompt","content":"one"}"#,
            r#"{"command":"steer","content":"hurry"}"#,
            r#"{"command":"cancel"}"#,
            r#"{"command":"prompt","content":"two"}"#,
        ],
        &[
            STEP1,
            r#"{"event":"approval_requested","id":"approval-1","tool_name":"shell","detail":"run a command outside the sandbox","body":null}"#,
            r#"{"event":"approval_resolved","id":"approval-1","outcome":"cancelled"}"#,
            r#"{"event":"agent_aborted","reason":"interrupted"}"#,
            r#"{"event":"steer_dropped","content":"hurry"}"#,
            STEP1,
            r#"{"event":"approval_requested","id":"approval-2","tool_name":"shell","detail":"rm build/","body":null}"#,
            r#"{"event":"approval_resolved","id":"approval-2","outcome":"cancelled"}"#,
            r#"{"event":"tool_result","tool_call_id":"call-2","tool_name":"shell","is_error":true,"content":"no answer: the controller closed its input","brief":null}"#,
            STEP2,
            r#"{"event":"assistant_delta","content":"Gave up"}"#,
            r#"{"event":"assistant_message","content":"Gave up"}"#,
            r#"{"event":"usage","usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2,"prompt_cache_hit_tokens":0,"prompt_cache_miss_tokens":1}}"#,
            r#"{"event":"agent_finished","answer":"Gave up"}"#,
        ],
    ),
];

/// The guide's (docs/GUIDE.md) `mock-engine` session, run as it is written there: its
/// commands through its script give the event lines it shows.
#[test]
fn the_readme_session_is_what_the_readme_shows() {
    let readme = include_str!("../docs/GUIDE.md");
    let start = readme.find("- `mock-engine [--script FILE]`").unwrap();
    let block = &readme[start..];
    let block = &block[block.find("```sh\n").unwrap() + 6..];
    let block = &block[..block.find("  ```\n").unwrap()];
    // The two `printf '%s\n' ...` lists: the script's lines, then the commands'.
    let quoted = |text: &str| -> Vec<String> {
        text.split('\'')
            .skip(1)
            .step_by(2)
            .filter(|s| s.starts_with('{'))
            .map(str::to_owned)
            .collect()
    };
    let (script, rest) = block.split_once("> turns.jsonl").unwrap();
    let script: String = quoted(script).iter().map(|l| format!("{l}\n")).collect();
    let commands: String = quoted(rest).iter().map(|l| format!("{l}\n")).collect();
    let shown: String = block
        .lines()
        .filter_map(|l| l.strip_prefix("  # "))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(script.lines().count(), 2);
    assert_eq!(commands.lines().count(), 3);
    assert_eq!(mock("readme", Some(&script), &commands).0, shown);
}

#[test]
fn each_session_gets_its_exact_event_lines() {
    for (i, (name, script, commands, events)) in SESSIONS.iter().enumerate() {
        let (out, _) = mock(&format!("session-{i}"), *script, &lines(commands));
        assert_eq!(out, lines(events), "{name}");
    }
}

#[test]
fn the_example_session_and_why_it_stopped() {
    let (out, err) = mock("example", None, std::str::from_utf8(SESSION).unwrap());
    assert_eq!(
        out,
        lines(&[
            STEP1,
            r#"{"event":"assistant_delta","content":"You asked: "}"#,
            r#"{"event":"assistant_delta","content":"Why does this test fail?"}"#,
            r#"{"event":"assistant_message","content":"You asked: Why does this test fail?"}"#,
            r#"{"event":"usage","usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7,"prompt_cache_hit_tokens":0,"prompt_cache_miss_tokens":5}}"#,
            r#"{"event":"agent_finished","answer":"You asked: Why does this test fail?"}"#,
            r#"{"event":"steer_dropped","content":"Also keep the public API unchanged"}"#,
            r#"{"event":"steer_applied","kind":"command","content":"/diff","submission_id":"sub-2"}"#,
            r#"{"event":"jobs_snapshot","request_id":"req-1","jobs":[]}"#,
            r#"{"event":"job_stop_result","request_id":"req-2","generation":"g-1","job_id":"job-4","outcome":"not_found"}"#,
            r#"{"event":"goal_updated","goal":"cargo test passes"}"#,
            r#"{"event":"command_error","error":"goal text must not be blank"}"#,
            r#"{"event":"command_error","error":"expected a boolean \"allow\" field"}"#,
            r#"{"event":"command_error","error":"unknown steer kind: notice"}"#,
            STEP1,
            r#"{"event":"assistant_delta","content":"You asked: "}"#,
            r#"{"event":"assistant_delta","content":"Now explain the change\nin two lines"}"#,
            r#"{"event":"assistant_message","content":"You asked: Now explain the change\nin two lines"}"#,
            r#"{"event":"usage","usage":{"prompt_tokens":7,"completion_tokens":2,"total_tokens":9,"prompt_cache_hit_tokens":0,"prompt_cache_miss_tokens":7}}"#,
            r#"{"event":"agent_finished","answer":"You asked: Now explain the change\nin two lines"}"#,
            r#"{"event":"compaction_started","from_sequence":0,"to_sequence":2}"#,
            r#"{"event":"compaction_finished","from_sequence":0,"to_sequence":2,"summary":"mock summary of 2 turns"}"#,
            r#"{"event":"goal_updated","goal":null}"#,
            r#"{"event":"command_error","error":"command stream: unterminated string at byte 30"}"#,
        ])
    );
    assert_eq!(
        err,
        "mock-engine: stopping: line 16: unterminated string at byte 30\n"
    );
}

#[test]
fn two_runs_give_the_same_bytes() {
    let script = "{\"approval\":{},\"reasoning\":[\"a\"]}\n{\"deltas\":[\"x\",\"y\"]}\n";
    let mut input = String::new();
    for (_, _, commands, _) in SESSIONS {
        input += &lines(commands);
    }
    let first = mock("twice-1", Some(script), &input);
    let second = mock("twice-2", Some(script), &input);
    assert!(!first.0.is_empty());
    assert_eq!(first, second);
}

#[test]
fn every_stdout_line_is_an_event() {
    let mut outputs = vec![mock("events", None, std::str::from_utf8(SESSION).unwrap()).0];
    for (i, (_, script, commands, _)) in SESSIONS.iter().enumerate() {
        outputs.push(mock(&format!("events-{i}"), *script, &lines(commands)).0);
    }
    for out in outputs {
        assert!(out.ends_with('\n'));
        for line in out.lines() {
            let event = Event::from_slice(line.as_bytes())
                .unwrap_or_else(|e| panic!("not an event: {line}: {e}"));
            // And written as the crate writes it.
            assert_eq!(event.to_string(), line);
        }
    }
}

#[test]
fn a_script_it_cannot_use_is_an_error_naming_its_line() {
    let dir = scratch("bad-script");
    let path = dir.join("turns.jsonl");
    std::fs::write(&path, "{\"answer\":\"ok\"}\n{\"deltas\":\"Hello\"}\n").unwrap();
    let path = path.to_str().unwrap();
    let out = run(&["mock-engine", "--script", path], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        format!("serve-command: {path}:2: \"deltas\" is an array of strings\n")
    );
    let missing = dir.join("missing.jsonl");
    let out = run(&["mock-engine", "--script", missing.to_str().unwrap()], b"");
    assert_eq!(out.status.code(), Some(2));
    let out = run(&["mock-engine", "--revision", "v1"], b"");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn the_tap_finds_nothing_wrong_on_the_engines_side() {
    let out = run(&["tap", "--", BIN, "mock-engine"], SESSION);
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8(out.stderr).unwrap();
    for kind in [
        "stray",
        "wrong_answer",
        "unexpected_answer",
        "unanswered",
        "still_reading",
    ] {
        assert!(!err.contains(kind), "{kind} in:\n{err}");
    }
    // Only the controller's lines are named: four refused (each answered
    // as owed), a blank line and a legacy steer.
    let summary = err
        .lines()
        .find(|l| l.starts_with("tap: summary: "))
        .unwrap_or_else(|| panic!("no summary in:\n{err}"));
    assert_eq!(
        summary,
        "tap: summary: 17 command lines, 24 event lines, 1 stderr line; 4 errors, 2 notes (1 blank, 1 not_canonical, 4 refused); the engine's exit 0"
    );
    // And the tap passed the engine's output through as it was.
    let (direct, _) = mock("tap-direct", None, std::str::from_utf8(SESSION).unwrap());
    assert_eq!(String::from_utf8(out.stdout).unwrap(), direct);
}
