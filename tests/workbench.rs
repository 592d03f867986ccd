//! The workbench in process, as a controller's test uses it: the
//! `MockEngine` interactively over a socket, over bytes in memory, with a
//! script, and when its input or output goes wrong (`cli_mock_engine.rs`
//! holds what it answers to each command, through the CLI that wraps it);
//! the `Monitor` naming each rule either side of a session breaks
//! (`cli_tap.rs` holds the same through the tap).
#![cfg(feature = "workbench")]

use serve_command::v2::{Command, Event, EventReader};
use serve_command::workbench::{
    Check, CheckEngine, Detail, Kind, Level, MockEngine, Monitor, Report, ScriptError, Verdict,
};
use std::io::{self, Write};

/// `engine` served `input` in memory: its output, and the error that ended
/// its reading, shown.
#[track_caller]
fn served(engine: MockEngine, input: &[u8]) -> (String, Option<String>) {
    let mut out = Vec::new();
    let stopped = engine.serve(input, &mut out).unwrap();
    (
        String::from_utf8(out).unwrap(),
        stopped.map(|e| e.to_string()),
    )
}

#[test]
fn the_default_turn_answers_with_the_prompt() {
    let (out, stopped) = served(
        MockEngine::new(),
        b"{\"command\":\"prompt\",\"content\":\"hi there\"}\n",
    );
    assert_eq!(
        out,
        concat!(
            "{\"event\":\"agent_step\",\"step\":1}\n",
            "{\"event\":\"assistant_delta\",\"content\":\"You asked: \"}\n",
            "{\"event\":\"assistant_delta\",\"content\":\"hi there\"}\n",
            "{\"event\":\"assistant_message\",\"content\":\"You asked: hi there\"}\n",
            "{\"event\":\"usage\",\"usage\":{\"prompt_tokens\":2,\"completion_tokens\":2,\"total_tokens\":4,\"prompt_cache_hit_tokens\":0,\"prompt_cache_miss_tokens\":2}}\n",
            "{\"event\":\"agent_finished\",\"answer\":\"You asked: hi there\"}\n",
        )
    );
    assert_eq!(stopped, None);
}

#[test]
fn a_line_that_is_not_json_is_answered_and_ends_reading() {
    let (out, stopped) = served(
        MockEngine::new(),
        b"{\"command\":\"jobs_snapshot\",\"request_id\":\"r1\"}\n{not json\n{\"command\":\"jobs_snapshot\",\"request_id\":\"r2\"}\n",
    );
    // The third line is never read: no snapshot for `r2`.
    assert_eq!(
        out,
        concat!(
            "{\"event\":\"jobs_snapshot\",\"request_id\":\"r1\",\"jobs\":[]}\n",
            "{\"event\":\"command_error\",\"error\":\"command stream: expected a string key at byte 1\"}\n",
        )
    );
    assert_eq!(
        stopped.as_deref(),
        Some("line 2: expected a string key at byte 1")
    );
}

#[test]
fn a_script_line_that_is_no_turn_is_named() {
    let table: &[(&str, usize, &str, &str)] = &[
        (
            "{\"answer\":\"ok\"}\n\n{\"answr\":\"typo\"}",
            3,
            "unknown key \"answr\" (a turn has \"deltas\", \"answer\", \"reasoning\", \"usage\", \"fail\", \"predict\", \"approval\" or \"events\")",
            "script line 3: unknown key \"answr\" (a turn has \"deltas\", \"answer\", \"reasoning\", \"usage\", \"fail\", \"predict\", \"approval\" or \"events\")",
        ),
        (
            "not json",
            1,
            "not JSON: expected ident at line 1 column 2",
            "script line 1: not JSON: expected ident at line 1 column 2",
        ),
        (
            "{\"usage\":{\"prompt_tokens\":-1}}",
            1,
            "\"usage\" is an object of the five counts, integers at least 0 (prompt_tokens, completion_tokens, total_tokens, prompt_cache_hit_tokens, prompt_cache_miss_tokens)",
            "script line 1: \"usage\" is an object of the five counts, integers at least 0 (prompt_tokens, completion_tokens, total_tokens, prompt_cache_hit_tokens, prompt_cache_miss_tokens)",
        ),
        (
            "{\"approval\":{\"tool\":\"shell\"}}",
            1,
            "unknown key \"tool\" in \"approval\" (it has \"tool_name\", \"detail\" and \"body\")",
            "script line 1: unknown key \"tool\" in \"approval\" (it has \"tool_name\", \"detail\" and \"body\")",
        ),
        (
            "{\"events\":[],\"answer\":\"ok\"}",
            1,
            "\"events\" is the whole turn: no other key goes with it but \"predict\"",
            "script line 1: \"events\" is the whole turn: no other key goes with it but \"predict\"",
        ),
        (
            "{\"answer\":\"ok\"}\n{\"events\":{}}",
            2,
            "\"events\" is an array of event objects",
            "script line 2: \"events\" is an array of event objects",
        ),
    ];
    for &(script, line, reason, display) in table {
        let err: ScriptError = MockEngine::with_script(script).unwrap_err();
        assert_eq!(
            (err.line(), err.reason(), err.to_string().as_str()),
            (line, reason, display),
            "{script}"
        );
    }
}

/// A writer whose reader has gone.
struct Gone;

impl Write for Gone {
    fn write(&mut self, _: &[u8]) -> io::Result<usize> {
        Err(io::ErrorKind::BrokenPipe.into())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_failed_write_is_returned() {
    let err = MockEngine::new()
        .serve(&b"{\"command\":\"compact\"}\n"[..], Gone)
        .unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::BrokenPipe);
}

/// A controller's session, one command at a time, each answered before the
/// next is written: the engine flushes its events after every line it
/// reads, so a controller waiting for them never deadlocks.
#[cfg(unix)]
#[test]
fn a_controller_is_answered_line_by_line_over_a_socket() {
    use std::io::BufReader;
    use std::os::unix::net::UnixStream;

    let (controller, engine_end) = UnixStream::pair().unwrap();
    // An engine that held its events back fails the test, not hangs it.
    controller
        .set_read_timeout(Some(std::time::Duration::from_secs(20)))
        .unwrap();
    let script =
        r#"{"approval":{"tool_name":"shell","detail":"run cargo test"},"answer":"Tests pass"}"#;
    let engine = MockEngine::with_script(script).unwrap();
    let engine_out = engine_end.try_clone().unwrap();
    let served = std::thread::spawn(move || {
        engine
            .serve(BufReader::new(engine_end), engine_out)
            .map(|stopped| stopped.is_none())
    });

    let mut to_engine = controller.try_clone().unwrap();
    let mut events = EventReader::new(BufReader::new(controller));
    let mut next = || events.next().unwrap().unwrap();
    Command::prompt("test it")
        .write_line(&mut to_engine)
        .unwrap();
    assert_eq!(next(), Event::agent_step(1));
    let asked = next();
    assert_eq!(
        asked.to_line(),
        "{\"event\":\"approval_requested\",\"id\":\"approval-1\",\"tool_name\":\"shell\",\"detail\":\"run cargo test\",\"body\":null}\n"
    );
    // The turn waits for its answer; a snapshot is answered meanwhile.
    Command::jobs_snapshot("r1")
        .write_line(&mut to_engine)
        .unwrap();
    assert_eq!(
        next().to_line(),
        "{\"event\":\"jobs_snapshot\",\"request_id\":\"r1\",\"jobs\":[]}\n"
    );
    Command::allow("approval-1")
        .write_line(&mut to_engine)
        .unwrap();
    let rest: Vec<String> = (0..7).map(|_| next().to_line()).collect();
    assert_eq!(
        rest,
        [
            "{\"event\":\"approval_resolved\",\"id\":\"approval-1\",\"outcome\":\"allowed_once\"}\n",
            "{\"event\":\"tool_result\",\"tool_call_id\":\"call-1\",\"tool_name\":\"shell\",\"is_error\":false,\"content\":\"ok\",\"brief\":null}\n",
            "{\"event\":\"agent_step\",\"step\":2}\n",
            "{\"event\":\"assistant_delta\",\"content\":\"Tests pass\"}\n",
            "{\"event\":\"assistant_message\",\"content\":\"Tests pass\"}\n",
            "{\"event\":\"usage\",\"usage\":{\"prompt_tokens\":2,\"completion_tokens\":1,\"total_tokens\":3,\"prompt_cache_hit_tokens\":0,\"prompt_cache_miss_tokens\":2}}\n",
            "{\"event\":\"agent_finished\",\"answer\":\"Tests pass\"}\n",
        ]
    );
    // The end of its input ends the engine, which read every line.
    to_engine.shutdown(std::net::Shutdown::Write).unwrap();
    assert!(served.join().unwrap().unwrap());
    assert!(events.next().is_none());
}

/// Which side wrote a line.
#[derive(Clone, Copy)]
enum Side {
    Controller,
    Engine,
}
use Side::{Controller, Engine};

/// A session, line by line in the order seen: who wrote it, the line, and
/// the monitor's verdict and violations' kinds for it.
type Step = (Side, &'static [u8], Verdict, &'static [Kind]);

/// Feeds `steps` to `monitor`, asserting each line's judgement; returns
/// the kinds `finish` names.
#[track_caller]
fn watched(mut monitor: Monitor, steps: &[Step]) -> Vec<Kind> {
    for (i, &(side, line, verdict, kinds)) in steps.iter().enumerate() {
        let judged = match side {
            Controller => monitor.command(line),
            Engine => monitor.event(line),
        };
        let got: Vec<Kind> = judged.violations.iter().map(|v| v.kind()).collect();
        assert_eq!(
            (judged.verdict, got.as_slice()),
            (verdict, kinds),
            "step {}: {}",
            i + 1,
            String::from_utf8_lossy(line)
        );
    }
    monitor.finish().iter().map(|v| v.kind()).collect()
}

#[test]
fn the_monitor_names_each_rule_broken_on_either_side() {
    use Kind::*;
    let blank_goal: &[u8] = b"{\"command\":\"goal\",\"action\":\"set\",\"text\":\" \"}\n";
    let owed: &[u8] = b"{\"event\":\"command_error\",\"error\":\"goal text must not be blank\"}\n";
    let sessions: &[(&str, &[Step], &[Kind])] = &[
        (
            "a refused line answered as owed",
            &[
                (Controller, blank_goal, Verdict::Refused, &[Refused]),
                (Engine, owed, Verdict::CommandError, &[]),
            ],
            &[],
        ),
        (
            "framing: extra keys, CRLF, blank, a BOM",
            &[
                (Controller, b"{\"command\":\"cancel\",\"x\":1}\n", Verdict::Command, &[NotCanonical]),
                (Controller, b"{\"command\":\"cancel\"}\r\n", Verdict::Command, &[Crlf]),
                (Controller, b" \t\n", Verdict::Blank, &[Blank]),
                (Controller, b"\xEF\xBB\xBF{\"command\":\"cancel\"}\n", Verdict::Refused, &[Bom, Refused]),
                (Engine, b"{\"event\":\"command_error\",\"error\":\"command stream: expected a JSON value at byte 0\"}\n", Verdict::CommandError, &[]),
                (Engine, b"\n", Verdict::Blank, &[Blank]),
            ],
            &[],
        ),
        (
            "the engine's stray output, a wrong answer, an answer to nothing",
            &[
                (Engine, b"engine v1.2 ready\n", Verdict::NotEvent, &[Stray]),
                (Controller, blank_goal, Verdict::Refused, &[Refused]),
                (Engine, b"{\"event\":\"command_error\",\"error\":\"no\"}\n", Verdict::CommandError, &[WrongAnswer]),
                (Engine, owed, Verdict::CommandError, &[UnexpectedAnswer]),
                (Engine, b"{\"event\":\"agent_step\",\"step\":1}", Verdict::Event, &[]),
            ],
            &[],
        ),
        (
            "a refused line never answered",
            &[
                (Controller, blank_goal, Verdict::Refused, &[Refused]),
                (Controller, blank_goal, Verdict::Refused, &[Refused]),
                (Engine, owed, Verdict::CommandError, &[]),
            ],
            &[Unanswered],
        ),
        (
            "the engine reads on after a line that is not JSON",
            &[
                (Controller, b"{not json\n", Verdict::Refused, &[Refused]),
                (Controller, b"{\"command\":\"jobs_snapshot\",\"request_id\":\"r9\"}\r\n", Verdict::Unread, &[]),
                (Controller, blank_goal, Verdict::Unread, &[]),
                (Engine, b"{\"event\":\"command_error\",\"error\":\"command stream: expected a string key at byte 1\"}\n", Verdict::CommandError, &[]),
                (Engine, b"{\"event\":\"jobs_snapshot\",\"request_id\":\"r9\",\"jobs\":[]}\n", Verdict::Event, &[StillReading]),
                (Engine, owed, Verdict::CommandError, &[StillReading]),
            ],
            &[],
        ),
    ];
    for &(name, steps, unanswered) in sessions {
        assert_eq!(watched(Monitor::new(), steps), unanswered, "{name}");
    }
}

#[test]
fn a_line_over_the_limit_is_refused_and_ends_the_engines_reading() {
    use Kind::*;
    let prompt: &[u8] = b"{\"command\":\"prompt\",\"content\":\"seventeen bytes!!\"}\n";
    let steps: &[Step] = &[
        (
            Controller,
            b"{\"command\":\"cancel\"}\n",
            Verdict::Command,
            &[],
        ),
        (Controller, prompt, Verdict::Refused, &[TooLong, Refused]),
        (
            Controller,
            b"{\"command\":\"cancel\"}\n",
            Verdict::Unread,
            &[],
        ),
        (Engine, prompt, Verdict::NotEvent, &[TooLong, Stray]),
    ];
    assert_eq!(watched(Monitor::with_max_line_len(20), steps), [Unanswered]);

    let mut monitor = Monitor::with_max_line_len(20);
    monitor.command(b"{\"command\":\"cancel\"}\n");
    let judged = monitor.command_too_long();
    assert_eq!(judged.n, 2);
    let owes = "{\"event\":\"command_error\",\"error\":\"command stream: line 2 is longer than 20 bytes\"}";
    assert_eq!(
        judged.violations[0].message(),
        "longer than 20 bytes, the line limit"
    );
    assert_eq!(
        judged.violations[0].details(),
        [("max", Detail::Number(20))]
    );
    assert_eq!(
        judged.violations[1].to_string(),
        format!("refused; the engine owes {owes}")
    );
    assert_eq!(
        judged.violations[1].detail("owes"),
        Some(&Detail::Text(owes.to_owned()))
    );
    assert_eq!(monitor.lines(), (2, 0));
    let unanswered = monitor.finish();
    assert_eq!(
        unanswered[0].message(),
        format!("command 2 was refused and never answered; the engine owed {owes}")
    );
    assert_eq!(
        unanswered[0].details(),
        [
            ("command_n", Detail::Number(2)),
            ("owed", Detail::Text(owes.to_owned()))
        ]
    );
    assert!(monitor.finish().is_empty(), "finish forgets what it named");
}

#[test]
fn an_event_line_at_the_limit_is_read_and_one_byte_over_is_not() {
    use Kind::*;
    let step: &[u8] = b"{\"event\":\"agent_step\",\"step\":1}\n"; // 31 bytes and its LF
    let steps: &[Step] = &[
        (Engine, step, Verdict::Event, &[]),
        (
            Engine,
            b"{\"event\":\"agent_step\",\"step\":12}\n",
            Verdict::NotEvent,
            &[TooLong, Stray],
        ),
    ];
    assert_eq!(watched(Monitor::with_max_line_len(31), steps), []);
}

#[test]
fn each_kind_has_the_name_the_tap_writes_and_its_level() {
    use Kind::*;
    let table = [
        (Refused, "refused", false),
        (NotCanonical, "not_canonical", true),
        (Crlf, "crlf", true),
        (Blank, "blank", true),
        (Bom, "bom", false),
        (TooLong, "too_long", false),
        (Stray, "stray", false),
        (WrongAnswer, "wrong_answer", false),
        (UnexpectedAnswer, "unexpected_answer", false),
        (Unanswered, "unanswered", false),
        (StillReading, "still_reading", false),
    ];
    for (kind, name, note) in table {
        assert_eq!((kind.as_str(), kind.is_note()), (name, note));
    }
    let verdicts = [
        (Verdict::Command, "command"),
        (Verdict::Refused, "refused"),
        (Verdict::Blank, "blank"),
        (Verdict::Unread, "unread"),
        (Verdict::Event, "event"),
        (Verdict::CommandError, "command_error"),
        (Verdict::NotEvent, "not_event"),
    ];
    for (verdict, name) in verdicts {
        assert_eq!(verdict.as_str(), name);
    }
}

/// The checks, in the order run, with their levels.
const CHECKS: &[(&str, Level)] = &[
    ("stdout-events", Level::Must),
    ("no-stderr-answers", Level::Must),
    ("protocol-errors", Level::Must),
    ("serve-refusals", Level::Must),
    ("not-json", Level::Must),
    ("not-json-detail", Level::Should),
    ("blank-lines", Level::Must),
    ("crlf", Level::Must),
    ("split-writes", Level::Must),
    ("no-final-lf", Level::Must),
    ("long-prompt", Level::Must),
    ("line-at-limit", Level::Should),
    ("jobs-snapshot", Level::Must),
    ("turn-ends", Level::Must),
    ("prompts-queue", Level::Must),
    ("cancel", Level::Must),
    ("cancel-question", Level::Must),
    ("approval", Level::Must),
    ("steer", Level::Must),
    ("command-steer", Level::Must),
    ("goal", Level::Must),
    ("compact", Level::Must),
    ("requests", Level::Must),
    ("end-of-input", Level::Must),
    ("prediction", Level::Must),
];

/// The line checks (the first 13 of [`CHECKS`], and `line-over-limit`
/// where a limit is declared), for the engines below written to break
/// them.
fn line_checks() -> CheckEngine {
    CheckEngine::new().only(
        CHECKS[..13]
            .iter()
            .map(|(name, _)| *name)
            .chain(["line-over-limit"]),
    )
}

#[track_caller]
fn assert_checks(report: &Report) {
    let got: Vec<(&str, Level)> = report
        .checks()
        .iter()
        .map(|c| (c.name(), c.level()))
        .collect();
    // The line checks alone, or every check.
    let want = if got.len() == 13 {
        &CHECKS[..13]
    } else {
        CHECKS
    };
    assert_eq!(got, want);
}

/// The check named `name`.
#[track_caller]
fn check_named<'a>(report: &'a Report, name: &str) -> &'a Check {
    report
        .checks()
        .iter()
        .find(|c| c.name() == name)
        .unwrap_or_else(|| panic!("no check {name}"))
}

/// The mock engine passes every check, run as an engine binary is; with
/// no limit declared, `line-at-limit` sends the crate's 64 MiB and
/// `line-over-limit` is not run.
#[cfg(all(feature = "cli", unix))]
#[test]
fn check_engine_passes_the_mock_engine() {
    let mut engine = std::process::Command::new(env!("CARGO_BIN_EXE_serve-command"));
    engine.arg("mock-engine");
    let report = CheckEngine::new().run(&mut engine).unwrap();
    assert_checks(&report);
    // An engine in order gives a steer or a cancel no turn to land in,
    // and this one asks no question: those checks are not judged.
    let skipped: Vec<&str> = report
        .checks()
        .iter()
        .filter(|c| !c.passed())
        .map(|c| {
            assert!(c.failure().is_none(), "{report}");
            c.name()
        })
        .collect();
    // It predicts nothing without --predict: not judged either.
    assert_eq!(
        skipped,
        [
            "cancel",
            "cancel-question",
            "approval",
            "steer",
            "prediction"
        ]
    );
    assert_eq!(
        check_named(&report, "line-at-limit").rule(),
        "a line of exactly 67108864 bytes (64 MiB, the crate's limit; JSON padded with spaces) is read"
    );
    assert_eq!(
        check_named(&report, "long-prompt").rule(),
        "a prompt of 4194304 bytes (4 MiB: a text part and a real PNG image), a line every engine meets, is read, and the engine reads on: a jobs_snapshot after it is answered"
    );
    assert_eq!(
        (
            report.conforms(),
            report.failed(),
            report.must_failed(),
            report.not_judged()
        ),
        (true, 0, 0, 5)
    );
    assert!(report.to_string().ends_with(
        "PASS must   end-of-input\nSKIP must   prediction\n  why: not judged: the engine never predicted after a finished idle turn (no prediction_result within 2 s of its end)\n20/25 checks pass; every must holds; 5 not judged\n"
    ));
}

/// A declared limit is held: the mock engine, whose own is 64 MiB, reads
/// a line over a declared 5 MiB as a command and fails `line-over-limit`;
/// a declared limit under the 4 MiB prompt fails `long-prompt` whatever
/// the engine does; a limit under the probe line is the probe's length.
#[cfg(all(feature = "cli", unix))]
#[test]
fn check_engine_holds_the_engine_to_its_declared_limit() {
    let mut engine = std::process::Command::new(env!("CARGO_BIN_EXE_serve-command"));
    engine.arg("mock-engine");
    let report = line_checks()
        .max_line_len(5 << 20)
        .run(&mut engine)
        .unwrap();
    let failed: Vec<(&str, &str)> = report
        .checks()
        .iter()
        .filter_map(|c| c.failure().map(|f| (c.name(), f.why())))
        .collect();
    assert_eq!(
        failed,
        [(
            "line-over-limit",
            "the engine read a line over its declared limit of 5242880 bytes (line 1, 5242881 bytes) as a command: it answered jobs_snapshot \"check-engine-over-limit\""
        )]
    );
    let names: Vec<&str> = report.checks().iter().map(Check::name).collect();
    assert_eq!(
        names[11..],
        ["line-at-limit", "line-over-limit", "jobs-snapshot"]
    );
    assert_eq!(check_named(&report, "line-over-limit").level(), Level::Must);
    assert_eq!(
        check_named(&report, "line-at-limit").rule(),
        "a line of exactly 5242880 bytes (the engine's limit, as declared; JSON padded with spaces) is read"
    );

    // At a limit shorter than the probes each is sent as it is: the one
    // at the limit is 64 bytes, the one over it 66.
    let report = line_checks()
        .max_line_len(10)
        .timeout(std::time::Duration::from_secs(60))
        .run(&mut engine)
        .unwrap();
    let long_prompt = check_named(&report, "long-prompt").failure().unwrap();
    assert_eq!(
        long_prompt.why(),
        "the declared limit, 10 bytes, is shorter than line 1, a prompt of 4194304 bytes with a PNG image, a line every engine must read"
    );
    assert_eq!(
        check_named(&report, "line-at-limit").rule(),
        "a line of exactly 64 bytes (the engine's limit, as declared; JSON padded with spaces) is read"
    );
    assert_eq!(
        check_named(&report, "line-over-limit").rule(),
        "a line of 66 bytes, over the declared limit of 10, is answered by one command_error whose message begins `command stream: `, and no line after it is answered"
    );
}

/// The engine check's report on `sh -c script`, each scenario given a
/// minute.
#[cfg(unix)]
#[track_caller]
fn check_sh(script: &str) -> Report {
    let mut engine = std::process::Command::new("sh");
    engine.args(["-c", script]);
    line_checks()
        .timeout(std::time::Duration::from_secs(60))
        .run(&mut engine)
        .unwrap()
}

/// An engine that writes a banner and reads nothing fails every check
/// that needs an answer, and the one that forbids stray output; the
/// detail of an error never written is not judged.
#[cfg(unix)]
#[test]
fn check_engine_names_what_a_banner_only_engine_breaks() {
    let report = check_sh("echo engine ready; cat >/dev/null");
    assert_checks(&report);
    let failed: Vec<&str> = report
        .checks()
        .iter()
        .filter(|c| c.failure().is_some())
        .map(Check::name)
        .collect();
    assert_eq!(
        failed,
        [
            "stdout-events",
            "protocol-errors",
            "serve-refusals",
            "not-json",
            "blank-lines",
            "crlf",
            "split-writes",
            "no-final-lf",
            "long-prompt",
            "line-at-limit",
            "jobs-snapshot",
        ]
    );
    assert_eq!(
        (
            report.conforms(),
            report.failed(),
            report.must_failed(),
            report.not_judged()
        ),
        (false, 11, 10, 1)
    );
    let detail = check_named(&report, "not-json-detail");
    assert_eq!(
        (detail.passed(), detail.not_judged()),
        (false, Some("no command_error beginning \"command stream: \" answered the line that is not JSON on stdout (not-json)"))
    );
    let stray = check_named(&report, "stdout-events").failure().unwrap();
    assert_eq!(
        stray.why(),
        "in protocol-errors, stdout line 1 is not an event (expected a JSON value at byte 0): engine ready"
    );
    assert_eq!(
        (stray.scenario(), stray.received(), stray.ended()),
        (
            "protocol-errors",
            &["engine ready".to_owned()][..],
            "exited with status 0"
        )
    );
    let snapshot = check_named(&report, "jobs-snapshot").failure().unwrap();
    assert_eq!(
        snapshot.why(),
        "no jobs_snapshot answered request_id \"check-engine-snapshot\""
    );
    assert_eq!(
        snapshot.sent(),
        ["{\"command\":\"jobs_snapshot\",\"request_id\":\"check-engine-snapshot\"}"]
    );
    assert!(
        report
            .to_string()
            .ends_with("1/13 checks pass; 10 must checks fail; 1 not judged\n"),
        "{report}"
    );
}

/// An engine that writes its `command_error`s on stderr fails one `must`,
/// `no-stderr-answers`, which quotes the stderr line; the checks whose only
/// fault is those answers are not judged, and say why; the engine does
/// not conform.
#[cfg(all(feature = "cli", unix))]
#[test]
fn check_engine_names_answers_on_stderr_once() {
    let report = check_sh(&format!(
        r#"'{}' mock-engine | awk '/"event":"command_error"/ {{ print > "/dev/stderr"; next }} {{ print }}'"#,
        env!("CARGO_BIN_EXE_serve-command")
    ));
    let outcomes: Vec<(&str, Option<&str>, Option<&str>)> = report
        .checks()
        .iter()
        .filter(|c| !c.passed())
        .map(|c| (c.name(), c.failure().map(|f| f.why()), c.not_judged()))
        .collect();
    let stderr = "its answer owed is on stderr, not stdout (no-stderr-answers)";
    assert_eq!(
        outcomes,
        [
            ("no-stderr-answers", Some("in protocol-errors, the answers went to stderr, not stdout: 477 of the 478 owed are missing from stdout and on stderr, the first as stderr line 1: {\"event\":\"command_error\",\"error\":\"invalid content: JsonDecodeError((, expected content string or array))\"}"), None),
            ("protocol-errors", None, Some("its 477 answers owed are on stderr, not stdout (no-stderr-answers)")),
            ("serve-refusals", None, Some("its 42 answers owed are on stderr, not stdout (no-stderr-answers)")),
            ("not-json", None, Some(stderr)),
            ("not-json-detail", None, Some("no command_error beginning \"command stream: \" answered the line that is not JSON on stdout (not-json)")),
            ("blank-lines", None, Some(stderr)),
            ("crlf", None, Some(stderr)),
            ("split-writes", None, Some(stderr)),
            ("no-final-lf", None, Some(stderr)),
        ]
    );
    assert_eq!(
        (
            report.conforms(),
            report.failed(),
            report.must_failed(),
            report.not_judged()
        ),
        (false, 1, 1, 8)
    );
    let summary = report.to_string();
    assert!(
        summary.contains("SKIP must   protocol-errors\n  why: not judged: its 477 answers owed are on stderr, not stdout (no-stderr-answers)\nSKIP must   serve-refusals\n"),
        "{summary}"
    );
    assert!(
        summary.ends_with("4/13 checks pass; 1 must check fails; 8 not judged\n"),
        "{summary}"
    );
}

/// An engine that floods stdout is killed at the output cap, and each
/// failure says so (not a timeout, which it was not) and keeps the first
/// thousand lines it wrote, counting the rest.
#[cfg(unix)]
#[test]
fn check_engine_kills_an_engine_that_floods_stdout_and_keeps_its_first_lines() {
    // 1,000-byte lines: 64 MiB of them is 67,000 lines a scenario.
    let report = check_sh("exec yes \"$(printf '%01000d' 0 | tr 0 y)\"");
    let snapshot = check_named(&report, "jobs-snapshot").failure().unwrap();
    assert_eq!(
        (snapshot.why(), snapshot.ended()),
        (
            "no jobs_snapshot answered request_id \"check-engine-snapshot\" (wrote more than 64 MiB; killed)",
            "wrote more than 64 MiB; killed"
        )
    );
    let line = format!("{}... (1000 bytes)", "y".repeat(300));
    assert_eq!(snapshot.received().len(), 1000);
    assert!(snapshot.received().iter().all(|l| *l == line));
    assert!(
        snapshot.received_lines() >= (64 << 20) / 1001,
        "{}",
        snapshot.received_lines()
    );
    let summary = report.to_string();
    let more = format!(
        "    ... {} more (the first 1000 in the report)\n",
        snapshot.received_lines() - 20
    );
    assert!(summary.contains(&more), "{summary}");
}

/// The timeout set is the one kept: an engine that takes two seconds to
/// start reading is killed at 300 ms in every scenario, and judged by
/// what it wrote (nothing).
#[cfg(unix)]
#[test]
fn check_engine_kills_an_engine_past_the_timeout_set() {
    let mut engine = std::process::Command::new("sh");
    engine.args(["-c", "sleep 2; cat >/dev/null"]);
    let report = line_checks()
        .timeout(std::time::Duration::from_millis(300))
        .run(&mut engine)
        .unwrap();
    let ended: Vec<&str> = report
        .checks()
        .iter()
        .filter_map(|c| c.failure())
        .map(|f| f.ended())
        .collect();
    // Every scenario's check; `not-json-detail`, with no error to read,
    // is not judged.
    assert_eq!(ended, ["did not exit within the timeout; killed"; 10]);
}

/// The mock engine and the monitor, two tools over the same rules, agree:
/// whatever a controller sends, the engine's side of the session breaks
/// no rule the monitor checks.
#[cfg(feature = "proptest")]
mod mock_engine_against_the_monitor {
    use proptest::prelude::*;
    use serve_command::v2::strategy;
    use serve_command::workbench::{Judged, Kind, MockEngine, Monitor};
    use std::collections::VecDeque;
    use std::io::{self, BufRead, Read, Write};
    use std::sync::{Arc, Mutex};

    /// The controller's side: hands the engine one line at a time, and
    /// before each, shows the monitor the engine's answers to the lines
    /// before it and then the line itself, in the order they would cross
    /// a pipe.
    struct Controller {
        lines: VecDeque<Vec<u8>>,
        current: Vec<u8>,
        at: usize,
        written: Arc<Mutex<Vec<u8>>>,
        monitor: Monitor,
        engine_side: Vec<Judged>,
    }

    impl Controller {
        /// The engine's complete lines written so far, to the monitor.
        fn drain(&mut self) {
            let mut written = self.written.lock().unwrap();
            let end = written
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |i| i + 1);
            for line in written[..end].split_inclusive(|&b| b == b'\n') {
                self.engine_side.push(self.monitor.event(line));
            }
            written.drain(..end);
        }
    }

    impl Read for Controller {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.fill_buf()?.read(buf)?;
            self.consume(n);
            Ok(n)
        }
    }

    impl BufRead for Controller {
        fn fill_buf(&mut self) -> io::Result<&[u8]> {
            if self.at == self.current.len() {
                self.drain();
                if let Some(line) = self.lines.pop_front() {
                    self.monitor.command(&line);
                    self.current = line;
                    self.at = 0;
                }
            }
            Ok(&self.current[self.at..])
        }
        fn consume(&mut self, n: usize) {
            self.at += n;
        }
    }

    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// A line a controller might send: a near-miss line of the crate's
    /// strategy (most of them), or bytes that are not JSON.
    fn line() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            6 => strategy::line().prop_map(|(line, _)| line.into_bytes()),
            1 => prop::collection::vec(any::<u8>(), 0..12),
            1 => Just(b"{\"command\":\"jobs_snapshot\",\"request_id\":\"r1\"}".to_vec()),
            1 => Just(b"{\"command\":\"approval\",\"id\":\"approval-1\",\"allow\":true}".to_vec()),
        ]
        .prop_map(|mut line| {
            line.retain(|&b| b != b'\n');
            line.push(b'\n');
            line
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn the_mock_engine_owes_nothing_the_monitor_finds(
            lines in prop::collection::vec(line(), 0..10),
            asks in any::<bool>(),
        ) {
            let script = if asks { r#"{"approval":{}}"# } else { "" };
            let written = Arc::new(Mutex::new(Vec::new()));
            let mut controller = Controller {
                lines: lines.into(),
                current: Vec::new(),
                at: 0,
                written: Arc::clone(&written),
                monitor: Monitor::new(),
                engine_side: Vec::new(),
            };
            MockEngine::with_script(script)
                .unwrap()
                .serve(&mut controller, Shared(written))
                .unwrap();
            // What it writes after the end of its input.
            controller.drain();
            for judged in &controller.engine_side {
                let kinds: Vec<Kind> = judged.violations.iter().map(|v| v.kind()).collect();
                prop_assert!(kinds.is_empty(), "event {}: {:?}", judged.n, judged.violations);
            }
            prop_assert_eq!(controller.monitor.finish(), vec![]);
        }
    }
}

#[test]
fn reading_on_names_the_line_that_stopped_the_engine_and_why() {
    let mut monitor = Monitor::new();
    monitor.command(b"{not json\n");
    monitor.command(b"{\"command\":\"jobs_snapshot\",\"request_id\":\"r9\"}\n");
    monitor.event(b"{\"event\":\"command_error\",\"error\":\"command stream: expected a string key at byte 1\"}\n");
    let judged =
        monitor.event(b"{\"event\":\"jobs_snapshot\",\"request_id\":\"r9\",\"jobs\":[]}\n");
    let v = &judged.violations[0];
    assert_eq!(
        v.message(),
        "the engine read on after command 1 (not JSON): this jobs_snapshot answers command 2"
    );
    assert_eq!(
        v.details(),
        [
            ("command_n", Detail::Number(2)),
            ("stopped_at", Detail::Number(1))
        ]
    );

    // Over the limit, the other line that stops an engine.
    let mut monitor = Monitor::with_max_line_len(100);
    monitor.command_too_long();
    monitor.command(b"{\"command\":\"cancel\"}\n");
    monitor.command(b"{\"command\":\"nap\"}\n");
    monitor.event(b"{\"event\":\"command_error\",\"error\":\"command stream: line 1 is longer than 100 bytes\"}\n");
    let judged =
        monitor.event(b"{\"event\":\"command_error\",\"error\":\"unknown command: nap\"}\n");
    assert_eq!(
        judged.violations[0].message(),
        "the engine read on after command 1 (over the limit): this command_error answers command 3"
    );
}

#[test]
fn reading_on_is_shown_by_the_answer_that_names_the_unread_line() {
    // After a line that is not JSON, each command whose answer carries its
    // id back: only that event, with that id, shows the engine read on.
    // (command, its answer, the same kind for another id, another kind with
    // the same id)
    type Row = (&'static [u8], &'static [u8], &'static [u8], &'static [u8]);
    let rows: &[Row] = &[
        (
            b"{\"command\":\"jobs_snapshot\",\"request_id\":\"r9\"}\n",
            b"{\"event\":\"jobs_snapshot\",\"request_id\":\"r9\",\"jobs\":[]}\n",
            b"{\"event\":\"jobs_snapshot\",\"request_id\":\"r8\",\"jobs\":[]}\n",
            b"{\"event\":\"job_stop_result\",\"request_id\":\"r9\",\"generation\":\"g\",\"job_id\":\"j\",\"outcome\":\"stopped\"}\n",
        ),
        (
            b"{\"command\":\"job_stop\",\"request_id\":\"r2\",\"generation\":\"runtime-1\",\"job_id\":\"bg-1\"}\n",
            b"{\"event\":\"job_stop_result\",\"request_id\":\"r2\",\"generation\":\"runtime-1\",\"job_id\":\"bg-1\",\"outcome\":\"stopped\"}\n",
            b"{\"event\":\"job_stop_result\",\"request_id\":\"r3\",\"generation\":\"runtime-1\",\"job_id\":\"bg-1\",\"outcome\":\"stopped\"}\n",
            b"{\"event\":\"jobs_snapshot\",\"request_id\":\"r2\",\"jobs\":[]}\n",
        ),
        (
            b"{\"command\":\"approval\",\"id\":\"ap-1\",\"allow\":true}\n",
            b"{\"event\":\"approval_resolved\",\"id\":\"ap-1\",\"outcome\":\"allowed_once\"}\n",
            b"{\"event\":\"approval_resolved\",\"id\":\"ap-2\",\"outcome\":\"allowed_once\"}\n",
            b"{\"event\":\"jobs_snapshot\",\"request_id\":\"ap-1\",\"jobs\":[]}\n",
        ),
        (
            b"{\"command\":\"steer\",\"kind\":\"prompt\",\"content\":\"x\",\"submission_id\":\"s-a\"}\n",
            b"{\"event\":\"steer_applied\",\"kind\":\"prompt\",\"content\":\"x\",\"submission_id\":\"s-a\"}\n",
            b"{\"event\":\"steer_applied\",\"kind\":\"prompt\",\"content\":\"x\",\"submission_id\":\"s-b\"}\n",
            b"{\"event\":\"jobs_snapshot\",\"request_id\":\"s-a\",\"jobs\":[]}\n",
        ),
        (
            b"{\"command\":\"steer\",\"kind\":\"prompt\",\"content\":\"x\",\"submission_id\":\"s-a\"}\n",
            b"{\"event\":\"steer_dropped\",\"content\":\"x\",\"submission_id\":\"s-a\"}\n",
            b"{\"event\":\"steer_dropped\",\"content\":\"x\",\"submission_id\":\"s-b\"}\n",
            b"{\"event\":\"steer_dropped\",\"content\":\"x\"}\n",
        ),
    ];
    for &(command, answer, other_id, other_kind) in rows {
        use Kind::StillReading;
        let shown = String::from_utf8_lossy(command);
        let steps: &[Step] = &[
            (Controller, b"{not json\n", Verdict::Refused, &[Kind::Refused]),
            (Controller, command, Verdict::Unread, &[]),
            (Engine, b"{\"event\":\"command_error\",\"error\":\"command stream: expected a string key at byte 1\"}\n", Verdict::CommandError, &[]),
            (Engine, other_id, Verdict::Event, &[]),
            (Engine, other_kind, Verdict::Event, &[]),
            (Engine, answer, Verdict::Event, &[StillReading]),
            // Named once: a second answer is not a second line read.
            (Engine, answer, Verdict::Event, &[]),
        ];
        assert_eq!(watched(Monitor::new(), steps), [], "{shown}");
    }
}

#[test]
fn the_lines_kept_after_a_stop_are_capped_at_4096_each_way() {
    // After the stop, the monitor keeps at most 4096 unread lines with an
    // id and 4096 unread refused lines: what reads on past them goes
    // unnamed, and memory stays bounded however long the engine reads on.
    let mut monitor = Monitor::new();
    monitor.command(b"{not json\n");
    for i in 0..=4096 {
        let line = format!("{{\"command\":\"jobs_snapshot\",\"request_id\":\"r{i}\"}}\n");
        assert_eq!(monitor.command(line.as_bytes()).verdict, Verdict::Unread);
    }
    for _ in 0..=4096 {
        assert_eq!(
            monitor.command(b"{\"command\":\"nap\"}\n").verdict,
            Verdict::Unread
        );
    }
    let kinds = |judged: serve_command::workbench::Judged| -> Vec<Kind> {
        judged.violations.iter().map(|v| v.kind()).collect()
    };
    let snapshot =
        |i: u32| format!("{{\"event\":\"jobs_snapshot\",\"request_id\":\"r{i}\",\"jobs\":[]}}\n");
    assert_eq!(kinds(monitor.event(snapshot(4096).as_bytes())), []);
    assert_eq!(
        kinds(monitor.event(snapshot(4095).as_bytes())),
        [Kind::StillReading]
    );
    assert_eq!(
        kinds(monitor.event(snapshot(0).as_bytes())),
        [Kind::StillReading]
    );

    let error = b"{\"event\":\"command_error\",\"error\":\"unknown command: nap\"}\n";
    // The first answers the line that stopped the engine (another message:
    // a wrong answer), then 4096 kept unread lines, then nothing kept.
    assert_eq!(kinds(monitor.event(error)), [Kind::WrongAnswer]);
    for _ in 0..4096 {
        assert_eq!(kinds(monitor.event(error)), [Kind::StillReading]);
    }
    assert_eq!(kinds(monitor.event(error)), [Kind::UnexpectedAnswer]);
}

#[test]
fn a_wrong_answer_and_a_long_canonical_line_are_shown_as_json_and_cut() {
    let mut monitor = Monitor::new();
    monitor.command(b"{\"command\":\"goal\",\"action\":\"set\",\"text\":\" \"}\n");
    let judged = monitor.event(b"{\"event\":\"command_error\",\"error\":\"no \\\"goal\\\"\"}\n");
    assert_eq!(
        judged.violations[0].message(),
        "the command_error for command 1 says \"no \\\"goal\\\"\"; the engine owes \"goal text must not be blank\""
    );
    let judged = monitor.event(b"{\"event\":\"command_error\",\"error\":\"x\\ny\"}\n");
    assert_eq!(
        judged.violations[0].message(),
        "a command_error with no refused line to answer: \"x\\ny\""
    );

    // A canonical line of 200 characters is shown whole; past that, its
    // first 200 characters (not bytes) and its length.
    let prefix = "{\"command\":\"prompt\",\"content\":\"";
    for (text_len, shown) in [
        (200 - prefix.len() - 2, None),
        (201 - prefix.len() - 2, Some(200)),
    ] {
        let text = "é".repeat(text_len);
        let canonical = format!("{prefix}{text}\"}}");
        let line = format!("{{\"content\":\"{text}\",\"command\":\"prompt\"}}\n");
        let judged = monitor.command(line.as_bytes());
        let cut = match shown {
            None => canonical.clone(),
            Some(n) => {
                let head: String = canonical.chars().take(n).collect();
                format!("{head}... ({} bytes)", canonical.len())
            }
        };
        assert_eq!(
            judged.violations[0].message(),
            format!("not canonical (extra keys, legacy fields, another key order or spacing); the crate writes {cut}")
        );
        assert_eq!(
            judged.violations[0].detail("canonical"),
            Some(&Detail::Text(canonical))
        );
    }
}

/// A paced engine's pause: long enough that a command the test writes
/// once it has read an event reaches the engine before the turn's next
/// event, even on a loaded machine.
#[cfg(unix)]
const PACE: std::time::Duration = std::time::Duration::from_millis(300);

/// `engine` served over a socket in a thread, driven as a controller
/// drives it: lines written when the test says, events read as they come.
#[cfg(unix)]
struct Socket {
    to_engine: std::os::unix::net::UnixStream,
    events: io::Lines<io::BufReader<std::os::unix::net::UnixStream>>,
    served: std::thread::JoinHandle<io::Result<Option<serve_command::v2::ReadError>>>,
}

#[cfg(unix)]
impl Socket {
    fn serve(engine: MockEngine) -> Socket {
        use std::io::BufRead;
        use std::os::unix::net::UnixStream;
        let (controller, engine_end) = UnixStream::pair().unwrap();
        // An engine that held its events back fails the test, not hangs it.
        controller
            .set_read_timeout(Some(std::time::Duration::from_secs(60)))
            .unwrap();
        let engine_out = engine_end.try_clone().unwrap();
        let served =
            std::thread::spawn(move || engine.serve(io::BufReader::new(engine_end), engine_out));
        Socket {
            to_engine: controller.try_clone().unwrap(),
            events: io::BufReader::new(controller).lines(),
            served,
        }
    }

    #[track_caller]
    fn send(&mut self, lines: &[&str]) {
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        self.to_engine.write_all(text.as_bytes()).unwrap();
    }

    /// Asserts the engine's next lines are `expected`.
    #[track_caller]
    fn expect(&mut self, expected: &[&str]) {
        let got: Vec<String> = expected
            .iter()
            .map(|_| self.events.next().unwrap().unwrap())
            .collect();
        assert_eq!(got, expected);
    }

    /// Ends the engine's input: the lines it writes after; asserts it
    /// read to the end.
    fn close(mut self) -> Vec<String> {
        self.to_engine.shutdown(std::net::Shutdown::Write).unwrap();
        let rest = self.events.by_ref().map(Result::unwrap).collect();
        assert!(self.served.join().unwrap().unwrap().is_none());
        rest
    }
}

/// With nothing but prompts and `compact` sent (queued behind the turn
/// running, as without a pace), a pace changes no byte of the output.
#[test]
fn a_pace_changes_no_byte_when_only_prompts_arrive_mid_turn() {
    let script = concat!(
        "{\"reasoning\":[\"Look \",\"first\"],\"deltas\":[\"A\",\"B\"]}\n",
        "{\"fail\":\"rate limited\"}\n",
        "{\"events\":[{\"event\":\"agent_step\",\"step\":1},{\"event\":\"assistant_delta\",\"content\":\"x\"},{\"event\":\"agent_finished\",\"answer\":\"x\"}]}\n",
        "{\"answer\":\"Done\",\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":1,\"total_tokens\":11,\"prompt_cache_hit_tokens\":8,\"prompt_cache_miss_tokens\":2}}\n",
    );
    let mut input = Vec::new();
    for text in ["one", "two", "three", "four", "five"] {
        Command::prompt(text).write_line(&mut input).unwrap();
    }
    input.extend_from_slice(b"{\"command\":\"compact\"}\n");
    Command::prompt("six").write_line(&mut input).unwrap();
    let engine = MockEngine::with_script(script).unwrap();
    let (unpaced, stopped) = served(engine.clone(), &input);
    assert_eq!(stopped, None);
    assert_eq!(
        unpaced.lines().filter(|l| l.contains("agent_step")).count(),
        6
    );
    assert!(unpaced.contains("\"summary\":\"mock summary of 5 turns\""));
    for delay in [
        std::time::Duration::ZERO,
        std::time::Duration::from_millis(20),
    ] {
        assert_eq!(served(engine.clone().delay(delay), &input).0, unpaced);
    }
}

/// A goal and command context sent mid-turn land together at the next
/// step boundary, in wire order: `agent_step` 2, `goal_updated`,
/// `steer_applied`; the turn then goes on.
#[cfg(unix)]
#[test]
fn a_paced_turn_takes_goals_and_context_at_its_next_step() {
    let engine = MockEngine::with_script("{\"reasoning\":[\"a\"],\"answer\":\"Done\"}")
        .unwrap()
        .delay(PACE);
    let mut socket = Socket::serve(engine);
    socket.send(&[r#"{"command":"prompt","content":"go"}"#]);
    socket.expect(&[r#"{"event":"agent_step","step":1}"#]);
    socket.send(&[
        r#"{"command":"goal","action":"set","text":"tests pass"}"#,
        r#"{"command":"steer","kind":"command","content":"/diff","submission_id":"c-1"}"#,
    ]);
    socket.expect(&[
        r#"{"event":"agent_step","step":2}"#,
        r#"{"event":"goal_updated","goal":"tests pass"}"#,
        r#"{"event":"steer_applied","kind":"command","content":"/diff","submission_id":"c-1"}"#,
        r#"{"event":"reasoning_delta","content":"a"}"#,
        r#"{"event":"assistant_delta","content":"Done"}"#,
        r#"{"event":"reasoning_message","content":"a"}"#,
        r#"{"event":"assistant_message","content":"Done"}"#,
        r#"{"event":"usage","usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3,"prompt_cache_hit_tokens":0,"prompt_cache_miss_tokens":1}}"#,
        r#"{"event":"agent_finished","answer":"Done"}"#,
    ]);
    assert_eq!(socket.close(), Vec::<String>::new());
}

/// The pause before a turn's end is no step boundary: a steer that lands
/// there is dropped when the turn ends, as upstream drops a steer its turn
/// ends before taking.
#[cfg(unix)]
#[test]
fn a_steer_in_the_pause_before_the_end_is_dropped_with_the_turn() {
    let engine = MockEngine::with_script("{\"fail\":\"rate limited\"}")
        .unwrap()
        .delay(PACE);
    let mut socket = Socket::serve(engine);
    socket.send(&[r#"{"command":"prompt","content":"go"}"#]);
    socket.expect(&[r#"{"event":"agent_step","step":1}"#]);
    socket.send(&[r#"{"command":"steer","content":"too late"}"#]);
    socket.expect(&[
        r#"{"event":"turn_failed","error":"rate limited"}"#,
        r#"{"event":"steer_dropped","content":"too late"}"#,
    ]);
    assert_eq!(socket.close(), Vec::<String>::new());
}

/// At a pace, steers sent while a turn waits for its approval land when it
/// resumes, before its next step, as without one; the step after a
/// boundary the pace opened is counted on from it.
#[cfg(unix)]
#[test]
fn a_paced_turn_resumes_from_its_approval_as_without_a_pace() {
    let engine = MockEngine::with_script("{\"approval\":{},\"answer\":\"Done\"}")
        .unwrap()
        .delay(PACE);
    let mut socket = Socket::serve(engine);
    socket.send(&[r#"{"command":"prompt","content":"go"}"#]);
    socket.expect(&[r#"{"event":"agent_step","step":1}"#]);
    socket.send(&[r#"{"command":"steer","content":"carefully"}"#]);
    socket.expect(&[
        r#"{"event":"agent_step","step":2}"#,
        r#"{"event":"steer_applied","kind":"prompt","content":"carefully"}"#,
        r#"{"event":"approval_requested","id":"approval-1","tool_name":"shell","detail":"run a command outside the sandbox","body":null}"#,
    ]);
    socket.send(&[
        r#"{"command":"steer","content":"and quickly"}"#,
        r#"{"command":"approval","id":"approval-1","allow":true}"#,
    ]);
    socket.expect(&[
        r#"{"event":"approval_resolved","id":"approval-1","outcome":"allowed_once"}"#,
        r#"{"event":"tool_result","tool_call_id":"call-1","tool_name":"shell","is_error":false,"content":"ok","brief":null}"#,
        r#"{"event":"steer_applied","kind":"prompt","content":"and quickly"}"#,
        r#"{"event":"agent_step","step":3}"#,
        r#"{"event":"assistant_delta","content":"Done"}"#,
        r#"{"event":"assistant_message","content":"Done"}"#,
        r#"{"event":"usage","usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2,"prompt_cache_hit_tokens":0,"prompt_cache_miss_tokens":1}}"#,
        r#"{"event":"agent_finished","answer":"Done"}"#,
    ]);
    assert_eq!(socket.close(), Vec::<String>::new());
}

/// `cancel` cuts a paced `events` turn short (the turn writes its
/// `agent_aborted`, as the loop writes none for a literal turn) and a
/// paced compaction (`compaction_failed` `cancelled`).
#[cfg(unix)]
#[test]
fn a_cancel_cuts_a_literal_turn_and_a_compaction_short() {
    let script = "{\"events\":[{\"event\":\"agent_step\",\"step\":1},{\"event\":\"assistant_delta\",\"content\":\"x\"},{\"event\":\"agent_finished\",\"answer\":\"x\"}]}";
    let engine = MockEngine::with_script(script).unwrap().delay(PACE);
    let mut socket = Socket::serve(engine);
    socket.send(&[r#"{"command":"prompt","content":"go"}"#]);
    socket.expect(&[r#"{"event":"agent_step","step":1}"#]);
    socket.send(&[r#"{"command":"cancel"}"#]);
    socket.expect(&[r#"{"event":"agent_aborted","reason":"interrupted"}"#]);
    socket.send(&[r#"{"command":"compact"}"#]);
    socket.expect(&[r#"{"event":"compaction_started","from_sequence":0,"to_sequence":1}"#]);
    socket.send(&[r#"{"command":"cancel"}"#]);
    socket.expect(&[r#"{"event":"compaction_failed","error":"cancelled"}"#]);
    assert_eq!(socket.close(), Vec::<String>::new());
}

/// The mock engine passes every check at a pace too: what arrives while a
/// turn runs (the probe after the long prompt) is answered mid-turn; at a
/// pace a checker's command reliably lands in, the checks that need a
/// command to land mid-turn, where the checker has them, are judged and
/// pass; predicting, it passes `prediction`.
#[cfg(all(feature = "cli", unix))]
#[test]
fn check_engine_passes_the_mock_engine_at_a_pace() {
    for delay in ["1", "200"] {
        let mut engine = std::process::Command::new(env!("CARGO_BIN_EXE_serve-command"));
        engine.args(["mock-engine", "--delay", delay, "--predict", "Thanks!"]);
        let report = CheckEngine::new().run(&mut engine).unwrap();
        assert_checks(&report);
        assert_eq!((report.failed(), report.conforms()), (0, true), "{report}");
        // It asks no question; at 200 ms a steer and a cancel land in the
        // turn, at 1 ms they may cross its end.
        let asked = ["cancel-question", "approval"];
        let landing = ["cancel", "steer"];
        for (name, _) in CHECKS {
            let check = check_named(&report, name);
            if asked.contains(name) {
                assert_eq!(
                    check.not_judged(),
                    Some("the engine asked no approval question")
                );
            } else if delay == "200" || !landing.contains(name) {
                assert!(check.passed(), "{name}: {report}");
            }
        }
    }
}
