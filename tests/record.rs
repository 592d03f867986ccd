//! `v2::serve::Recorder`: a controller's recording of its session, held
//! to `serve-command tap --log` (the same records for the same lines, but
//! the times) and read back through `serve-command trace`.
#![cfg(all(feature = "cli", unix))]

use serve_command::v2::serve::{Conversation, Direction, Recorder};
use std::io::{self, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::ExitStatus;
use std::sync::{Arc, Mutex};

#[path = "support/bin.rs"]
mod bin;

use bin::{run, stdout_of};

/// A directory of its own for `test`.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "serve-command-record-{test}-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Each record of `log` without its times, after checking that each
/// starts with `t_ms` then `t_us`, one time in both units, never going
/// back.
fn untimed(log: &str) -> Vec<String> {
    let mut last = 0u128;
    log.lines()
        .map(|record| {
            let number = |rest: &str| {
                let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap();
                (rest[..digits].parse::<u128>().unwrap(), digits)
            };
            let rest = record.strip_prefix("{\"t_ms\":").expect(record);
            let (ms, digits) = number(rest);
            let rest = rest[digits..].strip_prefix(",\"t_us\":").expect(record);
            let (us, digits) = number(rest);
            assert_eq!(ms, us / 1000, "{record}");
            assert!(us >= last, "times go forward: {record}");
            last = us;
            format!("{{{}", &rest[digits + 1..])
        })
        .collect()
}

/// A writer whose bytes the test reads while the recorder holds it.
#[derive(Clone, Default)]
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

impl Shared {
    fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}

/// A long line (70 bytes), over the limit of 64 both runs use.
const LONG_COMMAND: &str =
    r#"{"command":"prompt","content":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}"#;
const LONG_EVENT: &str =
    r#"{"event":"assistant_delta","content":"yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy"}"#;

#[test]
fn the_recorder_writes_the_taps_records_for_the_same_lines() {
    assert!(LONG_COMMAND.len() > 64 && LONG_EVENT.len() > 64);
    let dir = scratch("same");
    // Every kind of line the log format tells apart: a turn and a reply
    // attributed, a refused line and its answer, CRLF, blank lines, lines
    // that are not UTF-8, lines over the limit, a command line after the
    // one that ends the engine's reading, stray output, and a last line of
    // each stream without its LF.
    let commands: [&[u8]; 8] = [
        b"{\"command\":\"prompt\",\"content\":\"hi\"}\n",
        b"{\"command\":\"jobs_snapshot\",\"request_id\":\"j1\"}\r\n",
        b"\n",
        b"{\"command\":\"nap\"}\n",
        b"{\"command\":\"steer\",\"text\":\"look\"}\n",
        LONG_COMMAND.as_bytes(),
        b"\xff\xfe binary\n",
        b"{\"command\":\"cancel\"}",
    ];
    let events: [&[u8]; 8] = [
        br#"{"event":"agent_step","step":1}"#,
        br#"{"event":"jobs_snapshot","request_id":"j1","jobs":[]}"#,
        br#"{"event":"command_error","error":"unknown command: nap"}"#,
        b"my-engine: a log line",
        b"",
        b"\x80\x81 not UTF-8",
        LONG_EVENT.as_bytes(),
        br#"{"event":"agent_finished","answer":"done"}"#,
    ];
    // At the limit, and one byte over it.
    let (full_stderr, long_stderr) = (
        format!("engine: {}", "w".repeat(56)),
        format!("engine: {}", "z".repeat(57)),
    );
    let stderr: [&[u8]; 4] = [
        b"engine: starting",
        b"\xfe engine: not UTF-8",
        full_stderr.as_bytes(),
        long_stderr.as_bytes(),
    ];
    let last_stderr: &[u8] = b"engine: bye";

    // Through the tap: an engine that reads every command, then writes its
    // stderr lines, its events, closes its stdout (the tap records a last
    // line without LF at the end of its stream) and writes the last stderr
    // line, each a moment after the other so the tap reads them in that
    // order.
    let lines = |lines: &[&[u8]], last_lf: bool| {
        let mut bytes = Vec::new();
        for (i, line) in lines.iter().enumerate() {
            bytes.extend_from_slice(line);
            if last_lf || i + 1 < lines.len() {
                bytes.push(b'\n');
            }
        }
        bytes
    };
    let mut input = Vec::new();
    for line in commands {
        input.extend_from_slice(line);
        if line == LONG_COMMAND.as_bytes() {
            input.push(b'\n');
        }
    }
    std::fs::write(dir.join("stderr"), lines(&stderr, true)).unwrap();
    std::fs::write(dir.join("events"), lines(&events, false)).unwrap();
    std::fs::write(dir.join("last"), last_stderr).unwrap();
    let log = dir.join("tap.jsonl");
    let out = run(
        &[
            "tap",
            "--max-line-len",
            "64",
            "--log",
            log.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            r#"cat >/dev/null; cat "$1" >&2; sleep 0.3; cat "$2"; exec >&-; sleep 0.3; cat "$3" >&2; exit 3"#,
            "sh",
            dir.join("stderr").to_str().unwrap(),
            dir.join("events").to_str().unwrap(),
            dir.join("last").to_str().unwrap(),
        ],
        &input,
    );
    assert_eq!(out.status.code(), Some(3));
    let tapped = std::fs::read_to_string(&log).unwrap();

    // Through a recorder, fed as a controller sees the lines cross: the
    // engine's stderr a line at a time, or (`chunked`) as read, a few bytes
    // at a time.
    let record = |chunked: bool| {
        let file = Shared::default();
        let recorder = Recorder::with_max_line_len(file.clone(), 64);
        let (last_command, commands) = commands.split_last().unwrap();
        for line in commands {
            recorder.command(line);
        }
        recorder.unterminated(Direction::Command, last_command);
        if chunked {
            for chunk in lines(&stderr, true).chunks(3) {
                recorder.stderr_bytes(chunk);
            }
        } else {
            for line in stderr {
                recorder.stderr(line);
            }
        }
        let (last_event, events) = events.split_last().unwrap();
        for line in events {
            recorder.event(line);
        }
        recorder.unterminated(Direction::Event, last_event);
        if chunked {
            for chunk in last_stderr.chunks(3) {
                recorder.stderr_bytes(chunk);
            }
        } else {
            recorder.unterminated(Direction::Stderr, last_stderr);
        }
        recorder.finish(Some(ExitStatus::from_raw(3 << 8)));
        assert!(recorder.error().is_none());
        untimed(&file.text())
    };

    let tapped = untimed(&tapped);
    assert_eq!(tapped.len(), 8 + 8 + 5 + 2, "{tapped:#?}");
    let recorded = record(false);
    assert_eq!(recorded, tapped);
    assert_eq!(record(true), tapped);
    // What the comparison covers.
    for needle in [
        r#""line_base64":"//4gYmluYXJ5""#,
        r#""line":null,"verdict":"refused""#,
        r#""line":null,"verdict":"not_event""#,
        r#""lf":false,"verdict":"unread""#,
        r#""lf":false,"verdict":"event","answers":null,"turn":1"#,
        r#""dir":"stderr","n":3,"line":"engine: wwww"#,
        r#""dir":"stderr","n":4,"line":null,"verdict":"text""#,
        r#""dir":"stderr","n":5,"line":"engine: bye","lf":false"#,
        r#""answers":4,"turn":null"#,
        r#""dir":"exit","status":"exit 3","code":3,"violations":[{"kind":"unanswered""#,
        r#""dir":"summary","lines":{"command":8,"event":8,"stderr":5}"#,
    ] {
        assert!(
            recorded.iter().any(|r| r.contains(needle)),
            "{needle}: {recorded:#?}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A session as a controller sees it: a prompt whose turn runs while a
/// `jobs_snapshot` is answered and a refused line is answered, and a line
/// of the engine's stderr.
fn record_session(recorder: &Recorder) {
    recorder.command(b"{\"command\":\"prompt\",\"content\":\"what is in this repository?\"}\n");
    recorder.event(br#"{"event":"agent_step","step":1}"#);
    recorder.command(b"{\"command\":\"jobs_snapshot\",\"request_id\":\"ctl-1\"}\n");
    recorder.event(br#"{"event":"jobs_snapshot","request_id":"ctl-1","jobs":[]}"#);
    recorder.command(b"{\"command\":\"nap\"}\n");
    recorder.event(br#"{"event":"command_error","error":"unknown command: nap"}"#);
    recorder.stderr(b"engine: thinking");
    recorder.event(br#"{"event":"assistant_delta","content":"a README"}"#);
    recorder.event(br#"{"event":"agent_finished","answer":"a README"}"#);
}

const SESSION_TRACE: &str = r#"command 1: prompt "what is in this repository?"
turn of command 1:
  event 1: agent_step
command 2: jobs_snapshot "ctl-1"
event 2: jobs_snapshot, answers command 2
command 3: refused: {"command":"nap"}
event 3: command_error, answers command 3
turn of command 1, continued:
  event 4: assistant_delta
  event 5: agent_finished; the turn ends
owed: nothing
"#;

#[test]
fn a_recorded_session_reads_back_through_trace_with_its_attribution() {
    let dir = scratch("trace");
    let path = dir.join("session.jsonl");
    let recorder = Recorder::new(std::fs::File::create(&path).unwrap());
    record_session(&recorder);
    recorder.finish(None);
    assert!(recorder.error().is_none());
    assert_eq!(
        stdout_of(&["trace", path.to_str().unwrap()], b"", 0),
        SESSION_TRACE
    );
    assert_eq!(
        stdout_of(
            &["trace", "--format", "jsonl", path.to_str().unwrap()],
            b"",
            0
        ),
        r#"{"n":1,"event":"agent_step","answers":null,"turn":1}
{"n":2,"event":"jobs_snapshot","answers":2,"turn":null}
{"n":3,"event":"command_error","answers":3,"turn":null}
{"n":4,"event":"assistant_delta","answers":null,"turn":1}
{"n":5,"event":"agent_finished","answers":null,"turn":1}
{"owed":{"refused":[],"requests":[],"steers":[],"goals":[],"approvals":[],"running":null,"queued":[]}}
"#
    );
    // The records' attribution is the model's, as a controller has it.
    let mut conversation = Conversation::new();
    let text = std::fs::read_to_string(&path).unwrap();
    for record in text.lines() {
        let r: serde_json::Value = serde_json::from_str(record).unwrap();
        let line = r["line"].as_str().map(str::as_bytes);
        match (r["dir"].as_str().unwrap(), line) {
            ("command", Some(line)) => assert_eq!(
                Some(conversation.command(line)),
                r["n"].as_u64(),
                "{record}"
            ),
            ("event", Some(line)) => {
                let a = conversation.event(line);
                assert_eq!(
                    (a.answers, a.turn),
                    (r["answers"].as_u64(), r["turn"].as_u64()),
                    "{record}"
                );
            }
            _ => {}
        }
    }
    // An engine whose exit status the controller does not know.
    let records = untimed(&text);
    assert_eq!(
        records[records.len() - 2..],
        [
            r#"{"dir":"exit","status":null,"code":null,"violations":[]}"#,
            r#"{"dir":"summary","lines":{"command":3,"event":5,"stderr":1},"violations":{"refused":1},"status":null,"code":null}"#,
        ]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_recording_cut_short_reads_as_far_as_it_goes() {
    let dir = scratch("cut");
    let path = dir.join("session.jsonl");
    let recorder = Recorder::new(std::fs::File::create(&path).unwrap());
    record_session(&recorder);
    // Each record is written as it comes: nothing is lost to a process
    // that dies before `finish`.
    assert_eq!(
        stdout_of(&["trace", path.to_str().unwrap()], b"", 0),
        SESSION_TRACE
    );
    drop(recorder);
    assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 9);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A writer that takes `room` bytes, then fails.
struct Full {
    room: usize,
    written: Arc<Mutex<Vec<u8>>>,
}

impl Write for Full {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.room == 0 {
            return Err(io::Error::new(io::ErrorKind::StorageFull, "disk full"));
        }
        let k = buf.len().min(self.room);
        self.room -= k;
        self.written.lock().unwrap().extend_from_slice(&buf[..k]);
        Ok(k)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_write_error_is_kept_and_nothing_more_is_written() {
    let written = Arc::new(Mutex::new(Vec::new()));
    let recorder = Recorder::new(Full {
        room: 200,
        written: Arc::clone(&written),
    });
    recorder.command(b"{\"command\":\"prompt\",\"content\":\"hi\"}\n");
    assert!(recorder.error().is_none());
    let first = written.lock().unwrap().len();
    record_session(&recorder);
    let error = recorder.error().expect("the write error");
    assert_eq!(error.kind(), io::ErrorKind::StorageFull);
    assert_eq!(error.to_string(), "disk full");
    let after = written.lock().unwrap().len();
    assert_eq!(after, 200, "the writer was filled, then left alone");
    assert!(first < after);
    recorder.finish(None);
    recorder.event(b"{\"event\":\"agent_step\",\"step\":2}");
    assert_eq!(written.lock().unwrap().len(), 200);
    assert_eq!(recorder.error().unwrap().kind(), io::ErrorKind::StorageFull);
}

#[test]
fn threads_record_into_one_recorder_whole_records_numbered_per_direction() {
    fn shared<T: Send + Sync>(_: &T) {}
    let file = Shared::default();
    let recorder = Arc::new(Recorder::new(file.clone()));
    shared(&*recorder);
    let writers: Vec<_> = (0..2)
        .map(|t| {
            let recorder = Arc::clone(&recorder);
            std::thread::spawn(move || {
                for i in 0..200 {
                    if t == 0 {
                        recorder.command(
                            format!("{{\"command\":\"jobs_snapshot\",\"request_id\":\"r{i}\"}}\n")
                                .as_bytes(),
                        );
                    } else {
                        recorder.stderr(format!("engine: line {i}").as_bytes());
                    }
                }
            })
        })
        .collect();
    for writer in writers {
        writer.join().unwrap();
    }
    recorder.finish(None);
    let (mut commands, mut stderr) = (0, 0);
    for record in untimed(&file.text()) {
        let r: serde_json::Value = serde_json::from_str(&record).unwrap();
        let count = match r["dir"].as_str().unwrap() {
            "command" => &mut commands,
            "stderr" => &mut stderr,
            _ => continue,
        };
        *count += 1;
        assert_eq!(r["n"], *count, "{record}");
    }
    assert_eq!((commands, stderr), (200, 200));
}

/// A controller recording its session (`Options::record`): the recording
/// reads back through `trace` with the attribution the controller gave
/// every line: each turn's events are the turn's, each reply answers its
/// call's command line, each notice is where the controller put it.
#[test]
fn a_controllers_recording_reads_back_through_trace_as_the_controller_attributed_it() {
    use serve_command::v2::serve::{Controller, Decision, Options, Steered};
    use serve_command::v2::{Command, SteerKind};

    let dir = scratch("controller");
    let log = dir.join("session.jsonl");
    let script = dir.join("turns.jsonl");
    std::fs::write(&script, "{}\n{\"approval\":{}}\n").unwrap();
    let options = Options::default().record(Recorder::new(std::fs::File::create(&log).unwrap()));
    let mut engine = std::process::Command::new(bin::BIN);
    engine.args(["mock-engine", "--script", script.to_str().unwrap()]);
    let engine = Controller::spawn_with(&mut engine, options).unwrap();
    // (command line, the events that answered it or made its turn)
    let mut said: Vec<(u64, Vec<&'static str>)> = Vec::new();
    let turn = engine.prompt("one").unwrap().wait().unwrap();
    said.push((
        turn.command.get(),
        turn.events.iter().map(|e| e.name()).collect(),
    ));
    assert!(engine.jobs_snapshot().unwrap().is_empty());
    said.push((2, vec!["jobs_snapshot"]));
    assert!(engine
        .send_line(b"{\"command\":\"nap\"}")
        .unwrap()
        .is_some());
    said.push((3, vec!["command_error"]));
    assert_eq!(
        engine.steer(SteerKind::Prompt, "later").unwrap(),
        Steered::Dropped
    );
    said.push((4, vec!["steer_dropped"]));
    assert_eq!(
        engine.goal(Command::goal_set("green")).unwrap().as_deref(),
        Some("green")
    );
    said.push((5, vec!["goal_updated"]));
    // A command sent as a raw line: no call waits, so its reply is a
    // notice that answers command line 6.
    let raw = b"{\"command\":\"jobs_snapshot\",\"request_id\":\"raw\"}";
    assert_eq!(engine.send_line(raw).unwrap(), None);
    let turn = engine
        .prompt("two")
        .unwrap()
        .wait_with(|_| Decision::Allowed)
        .unwrap();
    said.push((
        turn.command.get(),
        turn.events.iter().map(|e| e.name()).collect(),
    ));
    let notices: Vec<(u64, Option<u64>, Option<u64>)> = engine
        .notices()
        .iter()
        .map(|n| {
            let a = n.attribution();
            (a.n, a.answers, a.turn)
        })
        .collect();
    assert_eq!(engine.close().unwrap().and_then(|s| s.code()), Some(0));

    let traced = stdout_of(
        &["trace", "--format", "jsonl", log.to_str().unwrap()],
        b"",
        0,
    );
    let records: Vec<serde_json::Value> = traced
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|r: &serde_json::Value| r.get("n").is_some())
        .collect();
    for (command, events) in &said {
        let traced: Vec<&str> = records
            .iter()
            .filter(|r| {
                r["answers"].as_u64() == Some(*command) || r["turn"].as_u64() == Some(*command)
            })
            .map(|r| r["event"].as_str().unwrap())
            .collect();
        assert_eq!(&traced, events, "command line {command}");
    }
    // The approval (command line 8) is answered in its turn: nothing of
    // its own. What no call took is where the controller put it.
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert_eq!(notices[0].1, Some(6), "the raw line's reply");
    for (n, answers, turn) in &notices {
        let r = &records[usize::try_from(*n).unwrap() - 1];
        assert_eq!(
            (r["n"].as_u64(), r["answers"].as_u64(), r["turn"].as_u64()),
            (Some(*n), *answers, *turn)
        );
    }
    assert_eq!(
        records.len(),
        notices.len() + said.iter().map(|(_, e)| e.len()).sum::<usize>()
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
