//! Issue 49's engines built to misbehave, each against the blocking
//! `Controller` and the `TokioController`: an undecodable answer to each
//! request kind and to a turn event, death mid-line, stdout closed while
//! alive, exit with queued work, a request never answered, a request
//! answered twice, a flood of notices nobody reads, a turn that streams
//! longer than the stall limit (and one silent past it), a turn nobody
//! reads past `Limits::unread`, a call's future dropped (tokio), and an
//! engine that ignores the end of its input at close. Each call returns
//! with its typed cause, in time: every test measures the call against its
//! limit plus `SLACK`, and no test waits on a default limit.
// The engines are `sh -c` scripts (no awk: mawk buffers its output).
#![cfg(unix)]

use serve_command::v2::serve::{
    CommandLine, Controller, ControllerError, Limits, Notice, Options, Owed, Reply, Stopped,
    TurnEnd, Waiting, MAX_NOTICES,
};
use serve_command::v2::{Command, Event, JobEventKind, JobRecord, JobState, SteerKind};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What a call may take past its limit before the test calls it late: a
/// loaded two-core machine spawning shells.
const SLACK: Duration = Duration::from_secs(2);

/// How long the controller waits, once the engine's stdout closed, for its
/// exit status and the rest of its stderr (`control::GRACE`).
const GRACE: Duration = Duration::from_secs(2);

/// A limit the "at once" cases never reach: an answer that came after it
/// would be a timeout, not what these tests expect.
const LONG: Duration = Duration::from_secs(10);

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Limits with every wait `limit` (the unread bound as by default).
fn limits(limit: Duration) -> Limits {
    Limits::default().answer(limit).stall(limit).close(limit)
}

/// A controller of `sh -c script` with `args` as `$1`, `$2`, ...
fn sh(script: &str, args: &[&str], limits: Limits) -> Controller {
    let mut command = std::process::Command::new("sh");
    command.arg("-c").arg(script).arg("sh").args(args);
    Controller::spawn_with(&mut command, Options::default().limits(limits)).unwrap()
}

/// `f`'s result and how long it took.
fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let start = Instant::now();
    let got = f();
    (got, start.elapsed())
}

/// The call took no longer than `limit` and the slack.
#[track_caller]
fn in_time(elapsed: Duration, limit: Duration) {
    assert!(
        elapsed < limit + SLACK,
        "took {elapsed:?}, past {limit:?} and the slack"
    );
}

#[track_caller]
fn stopped<T: std::fmt::Debug>(got: Result<T, ControllerError>) -> Arc<Stopped> {
    match got {
        Err(ControllerError::Stopped(stopped)) => stopped,
        other => panic!("expected Stopped, got {other:?}"),
    }
}

/// The engine reads a command, writes its arguments as lines, then reads
/// to the end of its input.
const ANSWER_WITH_ARGS: &str = r#"read -r line; printf '%s\n' "$@"; cat >/dev/null"#;

/// The call of each request kind, and a turn.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Jobs,
    JobStop,
    Steer,
    Compact,
    Turn,
}

/// An answer that does not decode, for each kind: what the engine writes,
/// the event line that does not decode, the event it names, why.
struct Undecodable {
    kind: Kind,
    lines: &'static [&'static str],
    line: u64,
    event: &'static str,
    why: &'static str,
}

const UNDECODABLE: &[Undecodable] = &[
    Undecodable {
        kind: Kind::Jobs,
        lines: &[r#"{"event":"jobs_snapshot","request_id":"ctl-1"}"#],
        line: 1,
        event: "jobs_snapshot",
        why: "jobs_snapshot: missing \"jobs\"",
    },
    Undecodable {
        kind: Kind::JobStop,
        lines: &[r#"{"event":"job_stop_result","request_id":"ctl-1","generation":"g1","job_id":"job-1"}"#],
        line: 1,
        event: "job_stop_result",
        why: "job_stop_result: missing \"outcome\"",
    },
    Undecodable {
        kind: Kind::Steer,
        lines: &[r#"{"event":"steer_applied","kind":"command","content":5}"#],
        line: 1,
        event: "steer_applied",
        why: "steer_applied: \"content\": invalid content: JsonDecodeError((, expected content string or array))",
    },
    Undecodable {
        kind: Kind::Compact,
        lines: &[
            r#"{"event":"compaction_started","from_sequence":0,"to_sequence":4}"#,
            r#"{"event":"compaction_finished","from_sequence":0,"to_sequence":4}"#,
        ],
        line: 2,
        event: "compaction_finished",
        why: "compaction_finished: missing \"summary\"",
    },
    Undecodable {
        kind: Kind::Turn,
        lines: &[
            r#"{"event":"agent_step","step":1}"#,
            r#"{"event":"agent_step","step":"two"}"#,
        ],
        line: 2,
        event: "agent_step",
        why: "agent_step: \"step\" must be an integer from -2147483648 to 2147483647",
    },
];

/// The call of `kind`, its answer dropped.
fn call(engine: &Controller, kind: Kind) -> Result<(), ControllerError> {
    match kind {
        Kind::Jobs => engine.jobs_snapshot().map(drop),
        Kind::JobStop => engine.job_stop("g1", "job-1").map(drop),
        Kind::Steer => engine.steer(SteerKind::Command, "/diff").map(drop),
        Kind::Compact => engine.compact().map(drop),
        Kind::Turn => engine.prompt("hi")?.wait().map(drop),
    }
}

/// The call failed `Unreadable` as `case` says, its decode error its
/// source.
#[track_caller]
fn assert_unreadable(case: &Undecodable, got: Result<(), ControllerError>) {
    let e = match got {
        Err(e) => e,
        Ok(()) => panic!("{:?}: answered", case.kind),
    };
    let ControllerError::Unreadable(unreadable) = &e else {
        panic!("{:?}: expected Unreadable, got {e:?}", case.kind);
    };
    assert_eq!(
        (
            unreadable.command,
            unreadable.line.get(),
            unreadable.event.as_str(),
            unreadable.error.to_string()
        ),
        (CommandLine(1), case.line, case.event, case.why.to_owned()),
        "{:?}",
        case.kind
    );
    assert_eq!(
        e.to_string(),
        format!(
            "the engine's answer to command line 1 is unreadable: its event line {} ({}) does not decode: {}",
            case.line, case.event, case.why
        ),
        "{:?}",
        case.kind
    );
    let source = std::error::Error::source(&e).map(ToString::to_string);
    assert_eq!(source.as_deref(), Some(case.why), "{:?}", case.kind);
}

/// 1. An answer that does not decode, to each request kind and to a turn
///    event: the call fails at once (its limit far off) with the command
///    line, the event line, the event's name and why.
#[test]
fn an_undecodable_answer_to_each_kind_fails_its_call_at_once() {
    for case in UNDECODABLE {
        let engine = sh(ANSWER_WITH_ARGS, case.lines, limits(LONG));
        let (got, elapsed) = timed(|| call(&engine, case.kind));
        assert!(elapsed < SLACK, "{:?}: took {elapsed:?}", case.kind);
        assert_unreadable(case, got);
    }
}

/// A `goal_updated` whose `goal` is not a string: upstream reads any
/// `goal_updated` (a goal of another type is `null`, as its vectors say),
/// so no goal answer is undecodable; the call has the goal cleared.
const WRONG_TYPED_GOAL: &str = r#"{"event":"goal_updated","goal":5}"#;

/// 1. (goal) The one request kind whose answer always decodes.
#[test]
fn a_goal_updated_of_the_wrong_type_reads_as_cleared() {
    let engine = sh(ANSWER_WITH_ARGS, &[WRONG_TYPED_GOAL], limits(LONG));
    let (got, elapsed) = timed(|| engine.goal(Command::goal_set("ship")));
    assert!(elapsed < SLACK, "took {elapsed:?}");
    assert_eq!(got.map_err(|e| e.to_string()), Ok(None));
    assert!(engine.notices().is_empty());
}

/// The engine writes half an event with no LF, a line of stderr, and exits 3.
const DIES_MID_LINE: &str =
    r#"read -r line; printf '%s' '{"event":"agent_fi'; echo 'panic: model crashed' >&2; exit 3"#;

const DIED_MID_LINE: &str = "the engine stopped (exit status: 3) before answering; it still owed the queued work of command line 1; its last line was cut short: {\"event\":\"agent_fi; stderr ends: panic: model crashed";

#[track_caller]
fn assert_died_mid_line(stopped: &Stopped) {
    assert_eq!(stopped.status.and_then(|s| s.code()), Some(3));
    assert!(!stopped.still_running);
    assert_eq!(
        stopped.partial_line.as_deref(),
        Some("{\"event\":\"agent_fi")
    );
    assert_eq!(stopped.stderr, "panic: model crashed\n");
    assert_eq!(stopped.read_error, None);
    assert_eq!(stopped.to_string(), DIED_MID_LINE);
}

/// 2. Death mid-line: the turn fails `Stopped` with the exit status, the
///    line cut short and the stderr tail, all three in its message.
#[test]
fn death_mid_line_fails_the_turn_with_status_partial_line_and_stderr() {
    let engine = sh(DIES_MID_LINE, &[], limits(LONG));
    let turn = engine.prompt("hi").unwrap();
    let (got, elapsed) = timed(|| turn.wait());
    in_time(elapsed, Duration::ZERO);
    let stopped = stopped(got);
    assert_died_mid_line(&stopped);
    assert_eq!(
        engine.jobs_snapshot().unwrap_err().to_string(),
        DIED_MID_LINE
    );
}

/// The engine closes its stdout after reading the prompt, and runs on.
const CLOSES_STDOUT: &str = "read -r line; exec 1>&-; sleep 5";

const CLOSED_STDOUT: &str = "the engine closed its stdout before answering, and still runs; it still owed the queued work of command line 1";

#[track_caller]
fn assert_closed_stdout(stopped: &Stopped) {
    assert!(stopped.still_running);
    assert_eq!(stopped.status, None);
    assert_eq!(stopped.partial_line, None);
    assert_eq!(stopped.read_error, None);
    assert_eq!(stopped.to_string(), CLOSED_STDOUT);
}

/// 3. Stdout closed while the engine runs: once the grace for its exit has
///    passed, the turn fails `Stopped`, `still_running`, no status.
#[test]
fn stdout_closed_while_alive_fails_the_turn_after_the_grace() {
    let engine = sh(CLOSES_STDOUT, &[], limits(LONG));
    let turn = engine.prompt("hi").unwrap();
    let (got, elapsed) = timed(|| turn.wait());
    in_time(elapsed, GRACE);
    assert_closed_stdout(&stopped(got));
}

/// The engine reads two prompts and exits without a word.
const EXITS_WITH_QUEUED_WORK: &str = "read -r a; read -r b; exit 0";

const EXITED_WITH_QUEUED_WORK: &str = "the engine stopped (exit status: 0) before answering; it still owed the queued work of command lines 1, 2";

#[track_caller]
fn assert_exited_with_queued_work(stopped: &Stopped) {
    assert_eq!(stopped.status.and_then(|s| s.code()), Some(0));
    assert_eq!(stopped.owed.queued, [1, 2]);
    assert_eq!(stopped.owed.running, None);
    assert_eq!(stopped.to_string(), EXITED_WITH_QUEUED_WORK);
}

/// 4. Exit with work queued: both turns fail `Stopped`, with what was owed.
#[test]
fn exit_with_queued_work_fails_both_turns_with_what_was_owed() {
    let engine = sh(EXITS_WITH_QUEUED_WORK, &[], limits(LONG));
    let first = engine.prompt("one").unwrap();
    let second = engine.prompt("two").unwrap();
    let (got, elapsed) = timed(|| first.wait());
    in_time(elapsed, Duration::ZERO);
    assert_exited_with_queued_work(&stopped(got));
    let (got, elapsed) = timed(|| second.wait());
    in_time(elapsed, Duration::ZERO);
    assert_exited_with_queued_work(&stopped(got));
}

/// The engine leaves `ctl-1` and line 3 unanswered, answers `ctl-2` at
/// once and line 4 (request id `late`) after 700 ms.
const ANSWERS_SOME: &str = r#"read -r a
read -r b; echo '{"event":"jobs_snapshot","request_id":"ctl-2","jobs":[]}'
read -r c
read -r d; sleep 0.7; echo '{"event":"jobs_snapshot","request_id":"late","jobs":[]}'
cat >/dev/null"#;

/// 5. A request never answered: `Timeout` waiting for its answer after the
///    answer limit; the next call is answered; `request_within` sets the
///    limit per call, shorter or longer.
#[test]
fn a_request_never_answered_times_out_and_the_next_is_answered() {
    let engine = sh(ANSWERS_SOME, &[], limits(ms(300)));
    let (got, elapsed) = timed(|| engine.jobs_snapshot());
    in_time(elapsed, ms(300));
    match &got {
        Err(ControllerError::Timeout {
            command: Some(CommandLine(1)),
            waiting: Waiting::Answer,
            after,
        }) => assert_eq!(*after, ms(300)),
        other => panic!("expected a Timeout on line 1, got {other:?}"),
    }
    assert!(elapsed >= ms(300), "timed out early: {elapsed:?}");
    assert_eq!(
        got.unwrap_err().to_string(),
        "command line 1: the engine was silent for 0.300s while the call waited for its answer"
    );
    assert_eq!(
        engine.jobs_snapshot().map_err(|e| e.to_string()),
        Ok(vec![])
    );

    let (got, elapsed) = timed(|| engine.request_within(Command::jobs_snapshot("never"), ms(100)));
    in_time(elapsed, ms(100));
    assert!(
        matches!(
            got,
            Err(ControllerError::Timeout {
                command: Some(CommandLine(3)),
                waiting: Waiting::Answer,
                after,
            }) if after == ms(100)
        ),
        "{got:?}"
    );
    // Answered after 700 ms: past the controller's 300 ms, within this
    // call's 5 s.
    let (got, elapsed) =
        timed(|| engine.request_within(Command::jobs_snapshot("late"), Duration::from_secs(5)));
    in_time(elapsed, ms(700));
    assert!(got.is_ok(), "{got:?}");
    assert_eq!(engine.owed().requests, [1, 3]);
}

/// The engine answers `ctl-1` twice (the second with a job), then `ctl-2`.
fn answers_twice() -> (&'static str, [String; 3]) {
    let job = JobRecord::new("g1", "job-1", 1, "cargo test", JobState::Running, 1, 2);
    (
        r#"read -r a; printf '%s' "$1" "$2"; read -r b; printf '%s' "$3"; cat >/dev/null"#,
        [
            Event::jobs_snapshot("ctl-1", vec![]).to_line(),
            Event::jobs_snapshot("ctl-1", vec![job]).to_line(),
            Event::jobs_snapshot("ctl-2", vec![]).to_line(),
        ],
    )
}

/// The second answer to `ctl-1`: a violation notice with the model's
/// reason.
#[track_caller]
fn assert_answered_twice(notices: Vec<Notice>, second: &str) {
    assert_eq!(notices.len(), 1, "{notices:?}");
    let notice = &notices[0];
    assert_eq!(
        notice.to_string(),
        "event line 2 (jobs_snapshot) fits no rule: jobs_snapshot answers no jobs_snapshot command: none unanswered with request_id \"ctl-1\""
    );
    match notice {
        Notice::Violation {
            event,
            reason,
            attribution,
        } => {
            assert_eq!(event.to_line(), second);
            assert_eq!(
                reason,
                "jobs_snapshot answers no jobs_snapshot command: none unanswered with request_id \"ctl-1\""
            );
            assert_eq!((attribution.n, attribution.answers), (2, None));
        }
        other => panic!("expected a Violation, got {other:?}"),
    }
}

/// 6. A request answered twice: the call has the first answer, the second
///    is a violation notice, and nothing stops.
#[test]
fn a_request_answered_twice_is_a_violation_notice_and_nothing_stops() {
    let (script, lines) = answers_twice();
    let args: Vec<&str> = lines.iter().map(String::as_str).collect();
    let engine = sh(script, &args, limits(LONG));
    let (got, elapsed) = timed(|| engine.jobs_snapshot());
    in_time(elapsed, Duration::ZERO);
    assert_eq!(got.map_err(|e| e.to_string()), Ok(vec![]));
    let (got, elapsed) = timed(|| engine.jobs_snapshot());
    in_time(elapsed, Duration::ZERO);
    assert_eq!(got.map_err(|e| e.to_string()), Ok(vec![]));
    assert_answered_twice(engine.notices(), &lines[1]);
    assert!(engine.stopped().is_none());
    assert_eq!(engine.owed(), Owed::default());
}

/// How many unsolicited events the flood writes.
const FLOOD: u64 = 20_000;

/// The engine reads a `jobs_snapshot`, writes `$1` 20,000 times, then
/// answers it.
const FLOODS: &str = r#"read -r a; i=0; while [ $i -lt 20000 ]; do printf '%s' "$1"; i=$((i+1)); done
echo '{"event":"jobs_snapshot","request_id":"ctl-1","jobs":[]}'; cat >/dev/null"#;

fn job_changed() -> String {
    let job = JobRecord::new("g1", "job-1", 1, "cargo test", JobState::Running, 1, 2);
    Event::job_changed(JobEventKind::Updated, job).to_line()
}

/// The notices kept after the flood: the newest `MAX_NOTICES`.
#[track_caller]
fn assert_flood_bounded(notices: &[Notice], dropped: u64, line: &str) {
    assert_eq!(notices.len(), MAX_NOTICES);
    assert_eq!(dropped, FLOOD - MAX_NOTICES as u64);
    let first = notices[0].attribution().n;
    let last = notices[MAX_NOTICES - 1].attribution().n;
    assert_eq!((first, last), (FLOOD - MAX_NOTICES as u64 + 1, FLOOD));
    for notice in notices {
        match notice {
            Notice::Event { event, .. } => assert_eq!(event.to_line(), line),
            other => panic!("expected an event notice, got {other:?}"),
        }
    }
}

/// 7. A flood of notices nobody reads: the call behind it is answered,
///    the notices kept are the newest 4,096 and the rest are counted.
#[test]
fn a_flood_of_notices_stays_within_its_bound() {
    let line = job_changed();
    let engine = sh(FLOODS, &[&line], limits(LONG));
    let (got, elapsed) = timed(|| engine.jobs_snapshot());
    in_time(elapsed, LONG);
    assert_eq!(got.map_err(|e| e.to_string()), Ok(vec![]));
    let dropped = engine.notices_dropped();
    assert_flood_bounded(&engine.notices(), dropped, &line);
}

/// The engine reads two prompts; streams the first turn, a step every
/// 100 ms for 1.5 s, then the second, a step every 100 ms for 0.5 s.
const STREAMS: &str = r#"read -r a; read -r b
i=1; while [ $i -le 15 ]; do printf '{"event":"agent_step","step":%d}\n' $i; sleep 0.1; i=$((i+1)); done
echo '{"event":"agent_finished","answer":"one"}'
i=1; while [ $i -le 5 ]; do printf '{"event":"agent_step","step":%d}\n' $i; sleep 0.1; i=$((i+1)); done
echo '{"event":"agent_finished","answer":"two"}'
cat >/dev/null"#;

/// How long the streaming turns take, at least.
const STREAMING: Duration = Duration::from_millis(2000);

/// How long the first turn streams, at least (1.5 s, less what a loaded
/// machine may shave off the first step): well past its stall limit.
const FIRST_STREAMS: Duration = Duration::from_millis(1400);

/// 8a. A turn that streams for 1.5 s under a 300 ms stall limit is never
///     cut off, nor is the turn queued behind it, waited on meanwhile.
#[test]
fn a_turn_streaming_past_the_stall_limit_is_not_cut_off() {
    let engine = sh(STREAMS, &[], limits(ms(300)));
    let first = engine.prompt("one").unwrap();
    let second = engine.prompt("two").unwrap();
    let start = Instant::now();
    let behind = std::thread::spawn(move || (second.wait(), start.elapsed()));
    let (got, elapsed) = timed(|| first.wait());
    in_time(elapsed, STREAMING);
    assert!(elapsed >= FIRST_STREAMS, "streamed only {elapsed:?}");
    let turn = got.unwrap();
    assert_eq!(turn.end, TurnEnd::Finished("one".into()));
    assert_eq!(turn.events.len(), 16);
    let (got, elapsed) = behind.join().unwrap();
    in_time(elapsed, STREAMING);
    let turn = got.unwrap();
    assert_eq!(
        (turn.command, turn.end),
        (CommandLine(2), TurnEnd::Finished("two".into()))
    );
    assert_eq!(turn.events.len(), 6);
}

/// The engine writes one step of the turn, then nothing.
const GOES_SILENT: &str = r#"read -r a; echo '{"event":"agent_step","step":1}'; exec sleep 5"#;

#[track_caller]
fn assert_stalled(got: Result<impl std::fmt::Debug, ControllerError>) {
    match &got {
        Err(ControllerError::Timeout {
            command: Some(CommandLine(1)),
            waiting: Waiting::Event,
            after,
        }) => assert_eq!(*after, ms(300)),
        other => panic!("expected a stall on line 1, got {other:?}"),
    }
    assert_eq!(
        got.unwrap_err().to_string(),
        "command line 1: the engine was silent for 0.300s while the call waited for the next event of its work"
    );
}

/// 8b. A turn silent past the stall limit fails `Timeout`, waiting for its
///     next event, once the limit has passed since its last event.
#[test]
fn a_turn_silent_past_the_stall_limit_times_out() {
    let engine = sh(GOES_SILENT, &[], limits(ms(300)));
    let mut turn = engine.prompt("hi").unwrap();
    assert_eq!(
        turn.next_event().map_err(|e| e.to_string()),
        Ok(Some(Event::agent_step(1)))
    );
    let (got, elapsed) = timed(|| turn.next_event());
    in_time(elapsed, ms(300));
    assert_stalled(got);
    // The engine sleeps on, deaf: closing kills it.
    assert!(engine.close().is_err());
}

/// The engine writes a turn of 50 events (49 steps and its end), then
/// answers a `jobs_snapshot`.
const FIFTY: &str = r#"read -r a
i=1; while [ $i -le 49 ]; do printf '{"event":"agent_step","step":%d}\n' $i; i=$((i+1)); done
echo '{"event":"agent_finished","answer":"done"}'
read -r b; echo '{"event":"jobs_snapshot","request_id":"ctl-1","jobs":[]}'; cat >/dev/null"#;

/// The 40 events past the bound, as notices of the turn.
#[track_caller]
fn assert_unread_are_notices(notices: &[Notice]) {
    assert_eq!(notices.len(), 40);
    for (k, notice) in (11..).zip(notices) {
        assert!(matches!(notice, Notice::Event { .. }), "{notice:?}");
        assert_eq!(
            (notice.attribution().n, notice.attribution().turn),
            (k, Some(1))
        );
    }
}

#[track_caller]
fn assert_unread(got: Result<Option<Event>, ControllerError>) {
    match &got {
        Err(ControllerError::Unread {
            command: CommandLine(1),
            bound: 10,
        }) => {}
        other => panic!("expected Unread, got {other:?}"),
    }
    assert_eq!(
        got.unwrap_err().to_string(),
        "command line 1: 10 of its events were left unread; the call was given up"
    );
}

/// 9. A turn nobody reads past `Limits::unread`: the handle gives the 10
///    it holds, then `Unread`; the later events are notices, and a
///    request after it is answered.
#[test]
fn a_turn_left_unread_past_its_bound_fails_unread_and_calls_go_on() {
    let engine = sh(FIFTY, &[], limits(LONG).unread(10));
    let mut turn = engine.prompt("hi").unwrap();
    let deadline = Instant::now() + LONG;
    while !engine.owed().is_empty() {
        assert!(Instant::now() < deadline, "the turn never ended");
        std::thread::sleep(ms(5));
    }
    for step in 1..=10 {
        assert_eq!(
            turn.next_event().map_err(|e| e.to_string()),
            Ok(Some(Event::agent_step(step)))
        );
    }
    let (got, elapsed) = timed(|| turn.next_event());
    in_time(elapsed, Duration::ZERO);
    assert_unread(got);
    assert_unread_are_notices(&engine.notices());
    let (got, elapsed) = timed(|| engine.jobs_snapshot());
    in_time(elapsed, Duration::ZERO);
    assert_eq!(got.map_err(|e| e.to_string()), Ok(vec![]));
}

/// The engine writes its pid to `$1`, reads its stdin to the end, and
/// sleeps on.
const IGNORES_EOF: &str = r#"echo $$ > "$1"; while read -r line; do :; done; exec sleep 30"#;

fn pid_file(tag: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!(
        "controller_misbehaving-{}-{tag}.pid",
        std::process::id()
    ))
}

/// Whether process `pid` exists (a zombie counts).
fn alive(pid: &str) -> bool {
    std::process::Command::new("sh")
        .args(["-c", "kill -0 \"$1\" 2>/dev/null", "sh", pid])
        .status()
        .unwrap()
        .success()
}

/// The process of the pid in `file` is gone within the slack.
#[track_caller]
fn assert_killed(file: &std::path::Path) {
    let pid = std::fs::read_to_string(file).unwrap();
    let pid = pid.trim();
    let _ = std::fs::remove_file(file);
    let deadline = Instant::now() + SLACK;
    while alive(pid) {
        assert!(Instant::now() < deadline, "engine {pid} still runs");
        std::thread::sleep(ms(20));
    }
}

#[track_caller]
fn assert_close_timeout(got: Result<impl std::fmt::Debug, ControllerError>, limit: Duration) {
    match &got {
        Err(ControllerError::Timeout {
            command: None,
            waiting: Waiting::Exit,
            after,
        }) => assert_eq!(*after, limit),
        other => panic!("expected a Timeout on exit, got {other:?}"),
    }
    assert_eq!(
        got.unwrap_err().to_string(),
        format!(
            "the engine did not exit within {:.3}s of its stdin closing",
            limit.as_secs_f64()
        )
    );
}

/// 11. Closing an engine that ignores the end of its input: `Timeout`
///     waiting for its exit, after `Limits::close`, and it is killed.
#[test]
fn close_kills_an_engine_that_ignores_the_end_of_input() {
    let file = pid_file("blocking");
    let engine = sh(IGNORES_EOF, &[file.to_str().unwrap()], limits(ms(300)));
    let (got, elapsed) = timed(|| engine.close());
    in_time(elapsed, ms(300));
    assert_close_timeout(got, ms(300));
    assert_killed(&file);
}

/// A goal sent during a turn is applied at the turn's next step: the
/// engine streams ten steps, 100 ms apart, before it answers the goal.
const GOAL_AT_A_LATER_STEP: &str = r#"read -r a; read -r b
i=1; while [ $i -le 10 ]; do printf '{"event":"agent_step","step":%d}\n' $i; sleep 0.1; i=$((i+1)); done
echo '{"event":"goal_updated","goal":"green"}'
echo '{"event":"agent_finished","answer":"done"}'
cat >/dev/null"#;

/// A goal waits on work: a turn that streams past the answer limit keeps
/// it waiting, as long as the turn's events come.
#[test]
fn a_goal_waits_while_the_turn_it_lands_in_streams() {
    let engine = sh(GOAL_AT_A_LATER_STEP, &[], limits(ms(300)));
    let turn = engine.prompt("hi").unwrap();
    let (got, elapsed) = timed(|| engine.goal(Command::goal_set("green")));
    assert_eq!(got.map_err(|e| e.to_string()), Ok(Some("green".to_owned())));
    assert!(elapsed >= ms(900), "answered after {elapsed:?}");
    assert_eq!(turn.wait().unwrap().answer(), Some("done"));
}

/// Twenty steps, 20 ms apart, then the end.
const TWENTY_PACED: &str = r#"read -r a
i=1; while [ $i -le 20 ]; do printf '{"event":"agent_step","step":%d}\n' $i; sleep 0.02; i=$((i+1)); done
echo '{"event":"agent_finished","answer":"done"}'
cat >/dev/null"#;

/// The bound counts the events held unread, not all a turn gives: a
/// caller that reads as they come reads a turn far longer than it.
#[test]
fn a_turn_read_as_it_comes_is_not_bounded_by_unread() {
    let engine = sh(TWENTY_PACED, &[], limits(LONG).unread(3));
    let mut turn = engine.prompt("hi").unwrap();
    let mut steps = 0;
    while let Some(event) = turn.next_event().map_err(|e| e.to_string()).unwrap() {
        steps += i32::from(matches!(event, Event::AgentStep { .. }));
    }
    assert_eq!(steps, 20);
    assert_eq!(turn.wait().unwrap().answer(), Some("done"));
}

/// A turn streams; the engine never answers the `jobs_snapshot` sent
/// meanwhile.
const STREAMS_AND_IGNORES: &str = r#"read -r a; read -r b
i=1; while [ $i -le 15 ]; do printf '{"event":"agent_step","step":%d}\n' $i; sleep 0.1; i=$((i+1)); done
echo '{"event":"agent_finished","answer":"done"}'
cat >/dev/null"#;

/// An answer given at once is waited for by its own limit: a turn that
/// streams meanwhile does not keep an unanswered request alive.
#[test]
fn a_request_is_not_kept_waiting_by_a_streaming_turn() {
    let engine = sh(
        STREAMS_AND_IGNORES,
        &[],
        Limits::default().answer(ms(300)).stall(LONG),
    );
    let turn = engine.prompt("hi").unwrap();
    let (got, elapsed) = timed(|| engine.jobs_snapshot());
    in_time(elapsed, ms(300));
    assert!(
        elapsed < ms(1200),
        "waited {elapsed:?} while the turn streamed"
    );
    match got {
        Err(ControllerError::Timeout {
            command: Some(CommandLine(2)),
            waiting: Waiting::Answer,
            ..
        }) => {}
        other => panic!("expected a Timeout on its answer, got {other:?}"),
    }
    assert_eq!(turn.wait().unwrap().answer(), Some("done"));
}

/// A compaction, then the prompt queued behind it: its start and its end
/// come 250 ms apart.
const COMPACTS_THEN_ANSWERS: &str = r#"read -r a; read -r b; sleep 0.25
echo '{"event":"compaction_started","from_sequence":0,"to_sequence":4}'; sleep 0.25
echo '{"event":"compaction_finished","from_sequence":0,"to_sequence":4,"summary":"s"}'
echo '{"event":"agent_step","step":1}'
echo '{"event":"agent_finished","answer":"after"}'
cat >/dev/null"#;

/// A prompt queued behind a compaction waits while the compaction shows
/// progress: its start and its end are events of the work ahead of it.
#[test]
fn a_prompt_queued_behind_a_compaction_waits_on_its_events() {
    let engine = std::sync::Arc::new(sh(COMPACTS_THEN_ANSWERS, &[], limits(ms(300))));
    let compacting = std::sync::Arc::clone(&engine);
    let compact = std::thread::spawn(move || compacting.compact().map_err(|e| e.to_string()));
    while engine.owed().queued.is_empty() {
        std::thread::sleep(ms(1));
    }
    let turn = engine.prompt("after").unwrap();
    assert_eq!(
        turn.wait()
            .map_err(|e| e.to_string())
            .map(|t| t.answer().map(str::to_owned)),
        Ok(Some("after".to_owned()))
    );
    assert!(compact.join().unwrap().is_ok());
}

/// `cancel` and `approval` have no answer of their
/// own: `request` returns at once with the line written, whatever the
/// engine does.
#[test]
fn commands_with_no_answer_of_their_own_return_at_once() {
    let engine = sh("cat >/dev/null", &[], limits(LONG));
    let commands = [Command::Cancel, Command::allow("a-1")];
    for (n, command) in (1..).zip(commands) {
        let (got, elapsed) = timed(|| engine.request(command));
        in_time(elapsed, Duration::ZERO);
        assert_eq!(
            got.map_err(|e| e.to_string()),
            Ok(Reply::Written(CommandLine(n)))
        );
    }
}

/// A turn that fails ends with the engine's error, and the events before.
#[test]
fn a_failed_turn_ends_with_its_error() {
    let engine = sh(
        r#"read -r a; echo '{"event":"agent_step","step":1}'; echo '{"event":"turn_failed","error":"model unreachable"}'; cat >/dev/null"#,
        &[],
        limits(LONG),
    );
    let turn = engine.prompt("hi").unwrap().wait().unwrap();
    assert_eq!(turn.end, TurnEnd::Failed("model unreachable".into()));
    assert_eq!(turn.answer(), None);
    assert_eq!(turn.events.len(), 2);
}

/// The engine writes its pid, closes its stdout and runs on.
const CLOSES_STDOUT_AND_RUNS: &str = r#"echo $$ > "$1"; exec 1>&-; exec sleep 30"#;

/// A limit shorter than the grace in which a closed stdout becomes a stop:
/// the call still fails with the stop, not its own limit.
#[test]
fn a_short_limit_still_ends_in_the_stop_of_an_engine_that_closed_stdout() {
    let engine = sh(CLOSES_STDOUT, &[], limits(ms(300)));
    let turn = engine.prompt("hi").unwrap();
    let (got, elapsed) = timed(|| turn.wait());
    in_time(elapsed, GRACE);
    assert_closed_stdout(&stopped(got));
}

/// Closing an engine that closed its stdout but runs on: it is killed
/// when the close limit runs out, as one that ignores its end of input.
#[test]
fn close_kills_an_engine_that_closed_stdout_and_runs_on() {
    let file = pid_file("blocking-closed");
    let engine = sh(
        CLOSES_STDOUT_AND_RUNS,
        &[file.to_str().unwrap()],
        limits(ms(300)).close(ms(3000)),
    );
    let (got, elapsed) = timed(|| engine.close());
    in_time(elapsed, ms(3000));
    assert_close_timeout(got, ms(3000));
    assert_killed(&file);
}

/// The engine exits at once, without a word.
const EXITS_AT_ONCE: &str = "exit 0";

/// Waiting for a notice ends when the engine stops with none left, not
/// when the wait runs out.
#[test]
fn next_notice_returns_none_once_the_engine_stopped() {
    let engine = sh(EXITS_AT_ONCE, &[], limits(LONG));
    let (got, elapsed) = timed(|| engine.next_notice(LONG));
    assert!(got.is_none(), "{got:?}");
    in_time(elapsed, GRACE);
}

/// The engine closes its stdin, says so with an event, and exits 3 a
/// moment later.
const CLOSES_STDIN_THEN_EXITS: &str =
    r#"exec 0<&-; echo '{"event":"agent_step","step":1}'; sleep 0.3; exit 3"#;

#[track_caller]
fn assert_closed_stdin_then_exited(stopped: &Stopped) {
    assert_eq!(stopped.status.and_then(|s| s.code()), Some(3));
    assert!(!stopped.still_running);
}

/// A write that fails because the engine has gone: the call fails with the
/// engine's stop (its status), which comes within the grace, rather than
/// with the broken pipe.
#[test]
fn a_write_to_an_engine_that_is_going_fails_with_its_stop() {
    let engine = sh(CLOSES_STDIN_THEN_EXITS, &[], limits(LONG));
    // The event comes after its stdin is closed: the write cannot land.
    assert!(engine.next_notice(LONG).is_some());
    let (got, elapsed) = timed(|| engine.jobs_snapshot());
    in_time(elapsed, GRACE);
    assert_closed_stdin_then_exited(&stopped(got));
}

/// The engine reads its stdin to the end, then takes 300 ms to write `$1`
/// and exit.
const FINISHES_AFTER_EOF: &str = r#"cat >/dev/null; sleep 0.3; echo done > "$1""#;

fn temp_file(tag: &str) -> std::path::PathBuf {
    let file = pid_file(tag);
    let _ = std::fs::remove_file(&file);
    file
}

/// `file` is written (not empty) within `limit` and the slack.
#[track_caller]
fn appears(file: &std::path::Path, limit: Duration) {
    let deadline = Instant::now() + limit + SLACK;
    while std::fs::metadata(file).map_or(true, |m| m.len() == 0) {
        assert!(Instant::now() < deadline, "{} never came", file.display());
        std::thread::sleep(ms(20));
    }
}

/// Dropping the controller closes the engine's stdin and leaves it its
/// close limit to finish: it ends its work and exits as it would at close.
#[test]
fn dropping_the_controller_ends_the_input_and_lets_the_engine_finish() {
    let file = temp_file("blocking-drop-finishes");
    let engine = sh(FINISHES_AFTER_EOF, &[file.to_str().unwrap()], limits(LONG));
    drop(engine);
    appears(&file, ms(300));
    let _ = std::fs::remove_file(&file);
}

/// Dropping the controller of an engine that ignores the end of its input:
/// the engine is killed once the close limit has run out.
#[test]
fn dropping_the_controller_kills_an_engine_that_ignores_the_end_of_input() {
    let file = temp_file("blocking-drop-kills");
    let engine = sh(IGNORES_EOF, &[file.to_str().unwrap()], limits(ms(300)));
    appears(&file, Duration::ZERO);
    drop(engine);
    std::thread::sleep(ms(300));
    assert_killed(&file);
}

/// The engine closes its stdout and exits 1; a child it leaves behind
/// writes the engine's last words to stderr 300 ms later.
const STDERR_OUTLIVES_STDOUT: &str = r#"exec 1>&-; (sleep 0.3; echo 'late words' >&2) & exit 1"#;

#[track_caller]
fn assert_late_words(stopped: &Stopped) {
    assert_eq!(stopped.status.and_then(|s| s.code()), Some(1));
    assert_eq!(stopped.stderr, "late words\n");
}

/// The stop waits, within the grace, for the rest of stderr after the exit.
#[test]
fn the_stop_holds_stderr_written_after_stdout_closed() {
    let engine = sh(STDERR_OUTLIVES_STDOUT, &[], limits(LONG));
    let (got, elapsed) = timed(|| engine.jobs_snapshot());
    in_time(elapsed, GRACE);
    assert_late_words(&stopped(got));
}

#[cfg(feature = "tokio")]
mod on_tokio {
    use super::{
        answers_twice, appears, assert_answered_twice, assert_close_timeout,
        assert_closed_stdin_then_exited, assert_closed_stdout, assert_died_mid_line,
        assert_exited_with_queued_work, assert_flood_bounded, assert_killed, assert_late_words,
        assert_stalled, assert_unread, assert_unread_are_notices, assert_unreadable, in_time,
        job_changed, limits, ms, pid_file, temp_file, Kind, ANSWERS_SOME, ANSWER_WITH_ARGS,
        CLOSES_STDIN_THEN_EXITS, CLOSES_STDOUT, CLOSES_STDOUT_AND_RUNS, DIED_MID_LINE,
        DIES_MID_LINE, EXITS_AT_ONCE, EXITS_WITH_QUEUED_WORK, FIFTY, FINISHES_AFTER_EOF,
        FIRST_STREAMS, FLOODS, GOAL_AT_A_LATER_STEP, GOES_SILENT, GRACE, IGNORES_EOF, LONG, SLACK,
        STDERR_OUTLIVES_STDOUT, STREAMING, STREAMS, UNDECODABLE, WRONG_TYPED_GOAL,
    };
    use serve_command::v2::serve::{
        CommandLine, ControllerError, Limits, Notice, Options, Owed, Stopped, TokioController,
        TurnEnd, Waiting,
    };
    use serve_command::v2::{Command, Event, SteerKind};
    use std::future::Future;
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    fn run<F: Future>(future: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(future)
    }

    fn sh(script: &str, args: &[&str], limits: Limits) -> TokioController {
        let mut command = tokio::process::Command::new("sh");
        command.arg("-c").arg(script).arg("sh").args(args);
        TokioController::spawn_with(&mut command, Options::default().limits(limits)).unwrap()
    }

    /// `future`'s output and how long it took; a future still pending
    /// past `limit` and the slack fails the test rather than hang it.
    async fn timed<F: Future>(limit: Duration, future: F) -> (F::Output, Duration) {
        let start = Instant::now();
        let got = tokio::time::timeout(limit + SLACK, future)
            .await
            .unwrap_or_else(|_| panic!("still pending after {:?}", limit + SLACK));
        (got, start.elapsed())
    }

    #[track_caller]
    fn stopped<T: std::fmt::Debug>(got: Result<T, ControllerError>) -> Arc<Stopped> {
        super::stopped(got)
    }

    async fn call(engine: &TokioController, kind: Kind) -> Result<(), ControllerError> {
        match kind {
            Kind::Jobs => engine.jobs_snapshot().await.map(drop),
            Kind::JobStop => engine.job_stop("g1", "job-1").await.map(drop),
            Kind::Steer => engine.steer(SteerKind::Command, "/diff").await.map(drop),
            Kind::Compact => engine.compact().await.map(drop),
            Kind::Turn => engine.prompt("hi")?.wait().await.map(drop),
        }
    }

    /// Both futures to their ends, polled together (the crate's tests
    /// build no proc macros: no `join!`).
    async fn join<A: Future, B: Future>(a: A, b: B) -> (A::Output, B::Output) {
        let mut a = std::pin::pin!(a);
        let mut b = std::pin::pin!(b);
        let (mut ra, mut rb) = (None, None);
        std::future::poll_fn(|cx| {
            if ra.is_none() {
                if let std::task::Poll::Ready(v) = a.as_mut().poll(cx) {
                    ra = Some(v);
                }
            }
            if rb.is_none() {
                if let std::task::Poll::Ready(v) = b.as_mut().poll(cx) {
                    rb = Some(v);
                }
            }
            if ra.is_some() && rb.is_some() {
                std::task::Poll::Ready(())
            } else {
                std::task::Poll::Pending
            }
        })
        .await;
        (ra.unwrap(), rb.unwrap())
    }

    #[test]
    fn an_undecodable_answer_to_each_kind_fails_its_call_at_once() {
        run(async {
            for case in UNDECODABLE {
                let engine = sh(ANSWER_WITH_ARGS, case.lines, limits(LONG));
                let (got, elapsed) = timed(Duration::ZERO, call(&engine, case.kind)).await;
                assert!(elapsed < SLACK, "{:?}: took {elapsed:?}", case.kind);
                assert_unreadable(case, got);
            }
        });
    }

    #[test]
    fn a_goal_updated_of_the_wrong_type_reads_as_cleared() {
        run(async {
            let engine = sh(ANSWER_WITH_ARGS, &[WRONG_TYPED_GOAL], limits(LONG));
            let goal = engine.goal(Command::goal_set("ship"));
            let (got, _) = timed(Duration::ZERO, goal).await;
            assert_eq!(got.map_err(|e| e.to_string()), Ok(None));
            assert!(engine.notices().is_empty());
        });
    }

    #[test]
    fn death_mid_line_fails_the_turn_with_status_partial_line_and_stderr() {
        run(async {
            let engine = sh(DIES_MID_LINE, &[], limits(LONG));
            let turn = engine.prompt("hi").unwrap();
            let (got, elapsed) = timed(Duration::ZERO, turn.wait()).await;
            in_time(elapsed, Duration::ZERO);
            assert_died_mid_line(&stopped(got));
            let got = engine.jobs_snapshot().await;
            assert_eq!(got.unwrap_err().to_string(), DIED_MID_LINE);
        });
    }

    #[test]
    fn stdout_closed_while_alive_fails_the_turn_after_the_grace() {
        run(async {
            let engine = sh(CLOSES_STDOUT, &[], limits(LONG));
            let turn = engine.prompt("hi").unwrap();
            let (got, elapsed) = timed(GRACE, turn.wait()).await;
            in_time(elapsed, GRACE);
            assert_closed_stdout(&stopped(got));
        });
    }

    #[test]
    fn exit_with_queued_work_fails_both_turns_with_what_was_owed() {
        run(async {
            let engine = sh(EXITS_WITH_QUEUED_WORK, &[], limits(LONG));
            let first = engine.prompt("one").unwrap();
            let second = engine.prompt("two").unwrap();
            let (got, _) = timed(Duration::ZERO, first.wait()).await;
            assert_exited_with_queued_work(&stopped(got));
            let (got, _) = timed(Duration::ZERO, second.wait()).await;
            assert_exited_with_queued_work(&stopped(got));
        });
    }

    #[test]
    fn a_request_never_answered_times_out_and_the_next_is_answered() {
        run(async {
            let engine = sh(ANSWERS_SOME, &[], limits(ms(300)));
            let (got, elapsed) = timed(ms(300), engine.jobs_snapshot()).await;
            match &got {
                Err(ControllerError::Timeout {
                    command: Some(CommandLine(1)),
                    waiting: Waiting::Answer,
                    after,
                }) => assert_eq!(*after, ms(300)),
                other => panic!("expected a Timeout on line 1, got {other:?}"),
            }
            assert!(elapsed >= ms(300), "timed out early: {elapsed:?}");
            assert_eq!(
                got.unwrap_err().to_string(),
                "command line 1: the engine was silent for 0.300s while the call waited for its answer"
            );
            let (got, _) = timed(ms(300), engine.jobs_snapshot()).await;
            assert_eq!(got.map_err(|e| e.to_string()), Ok(vec![]));

            let never = engine.request_within(Command::jobs_snapshot("never"), ms(100));
            let (got, _) = timed(ms(100), never).await;
            assert!(
                matches!(
                    got,
                    Err(ControllerError::Timeout {
                        command: Some(CommandLine(3)),
                        waiting: Waiting::Answer,
                        after,
                    }) if after == ms(100)
                ),
                "{got:?}"
            );
            let late =
                engine.request_within(Command::jobs_snapshot("late"), Duration::from_secs(5));
            let (got, _) = timed(ms(700), late).await;
            assert!(got.is_ok(), "{got:?}");
            assert_eq!(engine.owed().requests, [1, 3]);
        });
    }

    #[test]
    fn a_request_answered_twice_is_a_violation_notice_and_nothing_stops() {
        run(async {
            let (script, lines) = answers_twice();
            let args: Vec<&str> = lines.iter().map(String::as_str).collect();
            let engine = sh(script, &args, limits(LONG));
            let (got, _) = timed(Duration::ZERO, engine.jobs_snapshot()).await;
            assert_eq!(got.map_err(|e| e.to_string()), Ok(vec![]));
            let (got, _) = timed(Duration::ZERO, engine.jobs_snapshot()).await;
            assert_eq!(got.map_err(|e| e.to_string()), Ok(vec![]));
            assert_answered_twice(engine.notices(), &lines[1]);
            assert!(engine.stopped().is_none());
            assert_eq!(engine.owed(), Owed::default());
        });
    }

    #[test]
    fn a_flood_of_notices_stays_within_its_bound() {
        run(async {
            let line = job_changed();
            let engine = sh(FLOODS, &[&line], limits(LONG));
            let (got, _) = timed(LONG, engine.jobs_snapshot()).await;
            assert_eq!(got.map_err(|e| e.to_string()), Ok(vec![]));
            let dropped = engine.notices_dropped();
            assert_flood_bounded(&engine.notices(), dropped, &line);
        });
    }

    #[test]
    fn a_turn_streaming_past_the_stall_limit_is_not_cut_off() {
        run(async {
            let engine = sh(STREAMS, &[], limits(ms(300)));
            let first = engine.prompt("one").unwrap();
            let second = engine.prompt("two").unwrap();
            let start = Instant::now();
            let first = async {
                let got = first.wait().await;
                (got, start.elapsed())
            };
            let second = async {
                let got = second.wait().await;
                (got, start.elapsed())
            };
            let ((one, one_took), (two, two_took)) = timed(STREAMING, join(first, second)).await.0;
            in_time(one_took, STREAMING);
            assert!(one_took >= FIRST_STREAMS, "streamed only {one_took:?}");
            in_time(two_took, STREAMING);
            let one = one.unwrap();
            assert_eq!(one.end, TurnEnd::Finished("one".into()));
            assert_eq!(one.events.len(), 16);
            let two = two.unwrap();
            assert_eq!(
                (two.command, two.end),
                (CommandLine(2), TurnEnd::Finished("two".into()))
            );
            assert_eq!(two.events.len(), 6);
        });
    }

    #[test]
    fn a_turn_silent_past_the_stall_limit_times_out() {
        run(async {
            let engine = sh(GOES_SILENT, &[], limits(ms(300)));
            let mut turn = engine.prompt("hi").unwrap();
            assert_eq!(
                turn.next_event().await.map_err(|e| e.to_string()),
                Ok(Some(Event::agent_step(1)))
            );
            let (got, elapsed) = timed(ms(300), turn.next_event()).await;
            in_time(elapsed, ms(300));
            assert_stalled(got);
            assert!(engine.close().await.is_err());
        });
    }

    #[test]
    fn a_turn_left_unread_past_its_bound_fails_unread_and_calls_go_on() {
        run(async {
            let engine = sh(FIFTY, &[], limits(LONG).unread(10));
            let mut turn = engine.prompt("hi").unwrap();
            let deadline = Instant::now() + LONG;
            while !engine.owed().is_empty() {
                assert!(Instant::now() < deadline, "the turn never ended");
                tokio::time::sleep(ms(5)).await;
            }
            for step in 1..=10 {
                assert_eq!(
                    turn.next_event().await.map_err(|e| e.to_string()),
                    Ok(Some(Event::agent_step(step)))
                );
            }
            let (got, _) = timed(Duration::ZERO, turn.next_event()).await;
            assert_unread(got);
            assert_unread_are_notices(&engine.notices());
            let (got, _) = timed(Duration::ZERO, engine.jobs_snapshot()).await;
            assert_eq!(got.map_err(|e| e.to_string()), Ok(vec![]));
        });
    }

    /// The engine answers `ctl-1` 300 ms after reading it, then `ctl-2` at
    /// once.
    const ANSWERS_LATE: &str = r#"read -r a; sleep 0.3; echo '{"event":"jobs_snapshot","request_id":"ctl-1","jobs":[]}'
read -r b; echo '{"event":"jobs_snapshot","request_id":"ctl-2","jobs":[]}'; cat >/dev/null"#;

    /// 10. A call's future dropped before its answer: the controller goes
    ///     on, and the answer, when it comes, is an event notice of the
    ///     request it answers.
    #[test]
    fn a_call_dropped_before_its_answer_leaves_the_controller_usable() {
        run(async {
            let engine = sh(ANSWERS_LATE, &[], limits(LONG));
            let dropped = tokio::time::timeout(ms(50), engine.jobs_snapshot()).await;
            assert!(dropped.is_err(), "{dropped:?}");
            // The engine reads this one only once it has answered the
            // first: its late answer comes before this one's.
            let (got, _) = timed(ms(300), engine.jobs_snapshot()).await;
            assert_eq!(got.map_err(|e| e.to_string()), Ok(vec![]));
            let notices = engine.notices();
            assert_eq!(notices.len(), 1, "{notices:?}");
            match &notices[0] {
                Notice::Event { event, attribution } => {
                    assert_eq!(*event, Event::jobs_snapshot("ctl-1", vec![]));
                    assert_eq!(
                        (
                            attribution.n,
                            attribution.answers,
                            attribution.violation.as_deref()
                        ),
                        (1, Some(1), None)
                    );
                }
                other => panic!("expected an event notice, got {other:?}"),
            }
            assert_eq!(engine.owed(), Owed::default());
        });
    }

    #[test]
    fn close_kills_an_engine_that_ignores_the_end_of_input() {
        run(async {
            let file = pid_file("tokio");
            let engine = sh(IGNORES_EOF, &[file.to_str().unwrap()], limits(ms(300)));
            let (got, elapsed) = timed(ms(300), engine.close()).await;
            in_time(elapsed, ms(300));
            assert_close_timeout(got, ms(300));
            // The killed engine is reaped by the controller's reader task:
            // let it run while waiting.
            let waiting = tokio::task::spawn_blocking(move || assert_killed(&file));
            waiting.await.unwrap();
        });
    }

    #[test]
    fn a_short_limit_still_ends_in_the_stop_of_an_engine_that_closed_stdout() {
        run(async {
            let engine = sh(CLOSES_STDOUT, &[], limits(ms(300)));
            let turn = engine.prompt("hi").unwrap();
            let (got, elapsed) = timed(GRACE, turn.wait()).await;
            in_time(elapsed, GRACE);
            assert_closed_stdout(&stopped(got));
        });
    }

    #[test]
    fn close_kills_an_engine_that_closed_stdout_and_runs_on() {
        run(async {
            let file = pid_file("tokio-closed");
            let engine = sh(
                CLOSES_STDOUT_AND_RUNS,
                &[file.to_str().unwrap()],
                limits(ms(300)).close(ms(3000)),
            );
            let (got, elapsed) = timed(ms(3000), engine.close()).await;
            in_time(elapsed, ms(3000));
            assert_close_timeout(got, ms(3000));
            let waiting = tokio::task::spawn_blocking(move || assert_killed(&file));
            waiting.await.unwrap();
        });
    }

    /// The engine closes its stdin and runs on, its stdout open.
    const CLOSES_STDIN: &str = "exec 0<&-; exec sleep 30";

    /// A line the writer task cannot write fails its call then, not when
    /// its limit runs out.
    #[test]
    fn a_write_that_fails_fails_its_call_at_once() {
        run(async {
            let engine = sh(CLOSES_STDIN, &[], limits(LONG));
            tokio::time::sleep(ms(200)).await;
            let (got, elapsed) = timed(GRACE, engine.jobs_snapshot()).await;
            in_time(elapsed, GRACE);
            match got {
                Err(ControllerError::WriteFailed(e)) => {
                    assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe);
                }
                other => panic!("expected WriteFailed, got {other:?}"),
            }
        });
    }

    #[test]
    fn next_notice_returns_none_once_the_engine_stopped() {
        run(async {
            let engine = sh(EXITS_AT_ONCE, &[], limits(LONG));
            let (got, elapsed) = timed(GRACE, engine.next_notice()).await;
            assert!(got.is_none(), "{got:?}");
            in_time(elapsed, GRACE);
        });
    }

    #[test]
    fn a_write_to_an_engine_that_is_going_fails_with_its_stop() {
        run(async {
            let engine = sh(CLOSES_STDIN_THEN_EXITS, &[], limits(LONG));
            assert!(engine.next_notice().await.is_some());
            let (got, elapsed) = timed(GRACE, engine.jobs_snapshot()).await;
            in_time(elapsed, GRACE);
            assert_closed_stdin_then_exited(&stopped(got));
        });
    }

    #[test]
    fn dropping_the_controller_ends_the_input_and_lets_the_engine_finish() {
        run(async {
            let file = temp_file("tokio-drop-finishes");
            let engine = sh(FINISHES_AFTER_EOF, &[file.to_str().unwrap()], limits(LONG));
            drop(engine);
            // The reaper is a task of this runtime: let it run meanwhile.
            let waiting = tokio::task::spawn_blocking(move || {
                appears(&file, ms(300));
                let _ = std::fs::remove_file(&file);
            });
            waiting.await.unwrap();
        });
    }

    #[test]
    fn dropping_the_controller_kills_an_engine_that_ignores_the_end_of_input() {
        run(async {
            let file = temp_file("tokio-drop-kills");
            let engine = sh(IGNORES_EOF, &[file.to_str().unwrap()], limits(ms(300)));
            let written = file.clone();
            tokio::task::spawn_blocking(move || appears(&written, Duration::ZERO))
                .await
                .unwrap();
            drop(engine);
            tokio::time::sleep(ms(300)).await;
            let waiting = tokio::task::spawn_blocking(move || assert_killed(&file));
            waiting.await.unwrap();
        });
    }

    /// A goal sent during a turn is answered at the turn's later step, with
    /// the goal the engine holds.
    #[test]
    fn a_goal_waits_while_the_turn_it_lands_in_streams() {
        run(async {
            let engine = sh(GOAL_AT_A_LATER_STEP, &[], limits(ms(300)));
            let turn = engine.prompt("hi").unwrap();
            let (got, elapsed) = timed(LONG, engine.goal(Command::goal_set("green"))).await;
            assert_eq!(got.map_err(|e| e.to_string()), Ok(Some("green".to_owned())));
            assert!(elapsed >= ms(900), "answered after {elapsed:?}");
            assert_eq!(turn.wait().await.unwrap().answer(), Some("done"));
        });
    }

    #[test]
    fn debug_shows_limits_and_what_is_owed_not_the_shared_state() {
        run(async {
            let engine = sh("read -r a; cat >/dev/null", &[], limits(LONG));
            let turn = engine.prompt("hi").unwrap();
            assert_eq!(
                format!("{engine:?}"),
                "TokioController { limits: Limits { answer: 10s, stall: 10s, close: 10s, \
                 unread: 1048576 }, owed: Owed { refused: [], requests: [], steers: [], \
                 goals: [], approvals: [], running: None, queued: [1] }, .. }"
            );
            assert_eq!(
                format!("{turn:?}"),
                "TokioTurn { inner: Inner { .. }, call: Some(Call { command: CommandLine(1), \
                 unread: 0, .. }), stall: 10s, log: TurnLog { command: CommandLine(1), \
                 events: [], usage: None, asked: [], answered: [], end: None, next: 0 } }"
            );
        });
    }

    #[test]
    fn the_stop_holds_stderr_written_after_stdout_closed() {
        run(async {
            let engine = sh(STDERR_OUTLIVES_STDOUT, &[], limits(LONG));
            let (got, elapsed) = timed(GRACE, engine.jobs_snapshot()).await;
            in_time(elapsed, GRACE);
            assert_late_words(&stopped(got));
        });
    }

    /// An engine's stdout whose reads follow a script, then end.
    struct Script(std::collections::VecDeque<std::io::Result<&'static [u8]>>);

    impl tokio::io::AsyncRead for Script {
        fn poll_read(
            mut self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
            buf: &mut tokio::io::ReadBuf<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            std::task::Poll::Ready(match self.0.pop_front() {
                Some(Ok(bytes)) => {
                    buf.put_slice(bytes);
                    Ok(())
                }
                Some(Err(e)) => Err(e),
                None => Ok(()),
            })
        }
    }

    /// An interrupted read of the engine's stdout is read again; any other
    /// error stops the engine, with the error, and nothing after it is read.
    #[test]
    fn a_stdout_read_interrupted_is_read_again_and_an_error_stops_it() {
        run(async {
            let interrupted = || Err(std::io::ErrorKind::Interrupted.into());
            let stdout = Script(std::collections::VecDeque::from([
                interrupted(),
                Ok(&b"{\"event\":\"agent_step\",\"step\":1}\n"[..]),
                interrupted(),
                Err(std::io::Error::other("gone")),
                Ok(&b"{\"event\":\"agent_step\",\"step\":2}\n"[..]),
            ]));
            let engine = TokioController::attach(stdout, tokio::io::sink()).unwrap();
            let (got, _) = timed(LONG, engine.jobs_snapshot()).await;
            let stopped = stopped(got);
            assert_eq!(stopped.read_error.as_deref(), Some("gone"));
            let notices = engine.notices();
            assert_eq!(notices.len(), 1, "{notices:?}");
            assert_eq!(notices[0].event(), Some(&Event::agent_step(1)));
        });
    }
}

/// A reply with an id no command carried, or a refusal of a valid line,
/// where a call's answer was due: the call fails at once saying so, not
/// after its limit as though the engine were silent (it kept streaming).
#[test]
fn a_call_answered_wrongly_fails_at_once_saying_so() {
    let cases: [(&str, &str); 3] = [
        (
            r#"read -r a; echo '{"event":"jobs_snapshot","request_id":"not-mine","jobs":[]}'; while :; do echo '{"event":"background_notice","content":"tick"}'; sleep 0.05; done"#,
            "command line 1 (jobs_snapshot) was answered wrongly: its event line 1 (jobs_snapshot) fits no rule: jobs_snapshot answers no jobs_snapshot command: none unanswered with request_id \"not-mine\"",
        ),
        (
            r#"read -r a; echo '{"event":"command_error","error":"steering is off"}'; cat >/dev/null"#,
            "command line 1 (steer) is valid, but the engine refused it: its event line 1 (command_error) a command_error with no refused line left to answer",
        ),
        (
            r#"read -r a; echo '{"event":"steer_dropped","content":"x","submission_id":"other"}'; cat >/dev/null"#,
            "command line 1 (steer) was answered wrongly: its event line 1 (steer_dropped) fits no rule: steer_dropped answers no steer: none unanswered with submission_id \"other\"",
        ),
    ];
    for (i, (script, want)) in cases.into_iter().enumerate() {
        let engine = sh(script, &[], limits(LONG));
        let (got, elapsed) = timed(|| match i {
            0 => engine.jobs_snapshot().map(drop),
            1 => engine.steer(SteerKind::Prompt, "go on").map(drop),
            _ => engine
                .request(Command::steer_tagged(SteerKind::Prompt, "go on", "mine"))
                .map(drop),
        });
        in_time(elapsed, Duration::ZERO);
        let err = got.unwrap_err();
        assert!(matches!(err, ControllerError::Misanswered(_)), "{err:?}");
        assert_eq!(err.to_string(), want);
        // The line is still a notice, for a log.
        assert!(matches!(
            engine.notices().first(),
            Some(Notice::Violation { .. })
        ));
    }
}

/// Whether process `pid` still runs (a zombie does not).
#[cfg(target_os = "linux")]
fn runs(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit(')')
            .next()
            .is_some_and(|rest| !rest.trim_start().starts_with('Z'))
    })
}

/// The pid an engine wrote to `file`, once it has.
#[cfg(target_os = "linux")]
fn pid_in(file: &std::path::Path) -> u32 {
    let deadline = Instant::now() + LONG;
    loop {
        if let Ok(text) = std::fs::read_to_string(file) {
            if let Ok(pid) = text.trim().parse() {
                return pid;
            }
        }
        assert!(Instant::now() < deadline, "the engine wrote no pid");
        std::thread::sleep(ms(5));
    }
}

/// An engine that starts a child of its own and exits at the end of its
/// input, leaving the child running.
#[cfg(target_os = "linux")]
/// The child holds the engine's stdout open: the controller waits on the
/// engine's exit, not on its stdout.
#[cfg(target_os = "linux")]
const LEAVES_A_CHILD: &str =
    r#"sleep 300 & echo $! > "$1.tmp"; mv "$1.tmp" "$1"; exec cat >/dev/null"#;

/// The same with the child's stdio elsewhere, so that the engine's stdout
/// closes when it exits whatever the child does.
#[cfg(target_os = "linux")]
const LEAVES_A_DETACHED_CHILD: &str = r#"sleep 300 </dev/null >/dev/null 2>&1 & echo $! > "$1.tmp"; mv "$1.tmp" "$1"; exec cat >/dev/null"#;

/// Closing or dropping a spawned controller ends what its engine started
/// (its own process group, the default), and with `own_group(false)`
/// leaves it, as before.
#[cfg(target_os = "linux")]
#[test]
fn closing_or_dropping_ends_what_the_engine_started() {
    let dir = std::env::temp_dir().join(format!("serve-command-group-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let spawn = |name: &str, own: bool| {
        let file = dir.join(name);
        let script = if own {
            LEAVES_A_CHILD
        } else {
            LEAVES_A_DETACHED_CHILD
        };
        let mut command = std::process::Command::new("sh");
        command.arg("-c").arg(script).arg("sh").arg(&file);
        let options = Options::default().limits(limits(LONG)).own_group(own);
        let engine = Controller::spawn_with(&mut command, options).unwrap();
        (engine, pid_in(&file))
    };
    let gone_soon = |pid: u32| {
        let deadline = Instant::now() + LONG;
        while runs(pid) {
            assert!(
                Instant::now() < deadline,
                "the engine's child {pid} still runs"
            );
            std::thread::sleep(ms(10));
        }
    };
    // close: the engine exits at the end of its input; its child is ended.
    let (engine, child) = spawn("close", true);
    assert!(runs(child));
    assert_eq!(engine.close().unwrap().and_then(|s| s.code()), Some(0));
    assert!(
        !runs(child),
        "close returned with the engine's child running"
    );
    // drop: the same, from the reaper thread.
    let (engine, child) = spawn("drop", true);
    drop(engine);
    gone_soon(child);
    // In the controller's group, the child is left running.
    let (engine, child) = spawn("shared", false);
    assert_eq!(engine.close().unwrap().and_then(|s| s.code()), Some(0));
    std::thread::sleep(ms(100));
    assert!(runs(child), "own_group(false) ended the engine's child");
    let _ = std::process::Command::new("kill")
        .arg(child.to_string())
        .status();
    let _ = std::fs::remove_dir_all(&dir);
}

/// The process group's end and a wrong answer, on tokio: the same rules.
#[cfg(all(target_os = "linux", feature = "tokio"))]
mod on_tokio_too {
    use super::{limits, pid_in, runs, LEAVES_A_CHILD, LONG};
    use serve_command::v2::serve::{ControllerError, Options, TokioController};

    fn run<F: std::future::Future>(future: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(future)
    }

    #[test]
    fn closing_ends_what_the_engine_started() {
        run(async {
            let dir =
                std::env::temp_dir().join(format!("serve-command-tgroup-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let file = dir.join("close");
            let mut command = tokio::process::Command::new("sh");
            command.arg("-c").arg(LEAVES_A_CHILD).arg("sh").arg(&file);
            let options = Options::default().limits(limits(LONG));
            let engine = TokioController::spawn_with(&mut command, options).unwrap();
            let child = pid_in(&file);
            assert!(runs(child));
            assert_eq!(
                engine.close().await.unwrap().and_then(|s| s.code()),
                Some(0)
            );
            assert!(
                !runs(child),
                "close returned with the engine's child running"
            );
            let _ = std::fs::remove_dir_all(&dir);
        });
    }

    #[test]
    fn a_call_answered_wrongly_fails_at_once_saying_so() {
        run(async {
            let mut command = tokio::process::Command::new("sh");
            command.arg("-c").arg(
                r#"read -r a; echo '{"event":"jobs_snapshot","request_id":"not-mine","jobs":[]}'; cat >/dev/null"#,
            );
            let engine =
                TokioController::spawn_with(&mut command, Options::default().limits(limits(LONG)))
                    .unwrap();
            let err = tokio::time::timeout(LONG / 2, engine.jobs_snapshot())
                .await
                .expect("not at once")
                .unwrap_err();
            assert!(matches!(err, ControllerError::Misanswered(_)), "{err:?}");
            assert_eq!(
                err.to_string(),
                "command line 1 (jobs_snapshot) was answered wrongly: its event line 1 (jobs_snapshot) fits no rule: jobs_snapshot answers no jobs_snapshot command: none unanswered with request_id \"not-mine\""
            );
        });
    }
}

/// A second answer to a command already answered, arriving while another
/// call waits, is a notice: it does not fail the call waiting (it is no
/// wrong answer to it).
#[test]
fn a_repeated_answer_does_not_fail_the_call_waiting() {
    let (_, lines) = answers_twice();
    let args: Vec<&str> = lines.iter().map(String::as_str).collect();
    let engine = sh(
        r#"read -r a; printf '%s' "$1"; read -r b; printf '%s' "$2"; sleep 0.1; printf '%s' "$3"; cat >/dev/null"#,
        &args,
        limits(LONG),
    );
    assert_eq!(
        engine.jobs_snapshot().map_err(|e| e.to_string()),
        Ok(vec![])
    );
    assert_eq!(
        engine.jobs_snapshot().map_err(|e| e.to_string()),
        Ok(vec![])
    );
    assert_answered_twice(engine.notices(), &lines[1]);
}

/// A prediction that crossed a prompt sent before its turn's end is no
/// fault (the engine may not have read the prompt yet), but it is stale:
/// a notice, never the controller's current suggestion.
#[test]
fn a_prediction_crossing_a_prompt_is_a_notice_never_current() {
    let engine = sh(
        r#"read -r a; read -r b
echo '{"event":"agent_step","step":1}'
echo '{"event":"agent_finished","answer":"one"}'
echo '{"event":"prediction_result","source_sequence":2,"outcome":{"kind":"completed","text":"next","input_tokens":1,"output_tokens":1}}'
echo '{"event":"agent_step","step":1}'
echo '{"event":"agent_finished","answer":"two"}'
cat >/dev/null"#,
        &[],
        limits(LONG),
    );
    let one = engine.prompt("one").unwrap();
    let two = engine.prompt("two").unwrap();
    assert_eq!(one.wait().unwrap().answer(), Some("one"));
    assert_eq!(two.wait().unwrap().answer(), Some("two"));
    let notices = engine.notices();
    assert!(
        matches!(notices.as_slice(), [Notice::Prediction { suggestion, .. }] if suggestion.source_sequence == 2),
        "{notices:?}"
    );
    assert_eq!(engine.prediction(), None);
}
