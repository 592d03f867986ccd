//! The blocking controller: a whole session against `MockEngine` in
//! process and against `serve-command mock-engine` as a child, and engines
//! built to misbehave (shell scripts): one that dies mid-turn, one that
//! never answers, one that answers out of order, one that writes what
//! answers nothing.
// The misbehaving engines are `sh -c` scripts.
#![cfg(unix)]

use serve_command::v2::serve::{CommandLine, Controller, ControllerError, Owed, Reply, TurnEnd};
use serve_command::v2::{Command, Event, JobRecord, JobState};
use std::sync::Arc;
use std::time::Duration;

/// A controller of `sh -c script` with `args` as `$1`, `$2`, ...
fn sh(script: &str, args: &[&str]) -> Controller {
    let mut command = std::process::Command::new("sh");
    command.arg("-c").arg(script).arg("sh").args(args);
    Controller::spawn(&mut command).unwrap()
}

/// The events of a mock turn that answers `You asked: <text>` to a prompt
/// of `words` words, after `before`.
#[cfg(any(feature = "cli", feature = "workbench"))]
fn answered(text: &str, words: i32, before: Vec<Event>) -> Vec<Event> {
    let answer = format!("You asked: {text}");
    let mut events = before;
    events.extend([
        Event::assistant_delta("You asked: "),
        Event::assistant_delta(text),
        Event::assistant_message(answer.as_str()),
        Event::usage(serve_command::v2::Usage::new(words, 2, words + 2, 0, words)),
        Event::agent_finished(answer),
    ]);
    events
}

/// A controller's error as a string, to compare results.
fn err(e: ControllerError) -> String {
    e.to_string()
}

#[track_caller]
fn assert_err(got: Result<impl std::fmt::Debug, ControllerError>, want: &str) {
    match got {
        Err(e) => assert_eq!(e.to_string(), want),
        Ok(v) => panic!("expected the error {want:?}, got {v:?}"),
    }
}

/// `serve-command mock-engine` as a child process: a turn, a request, the
/// exit status at close.
#[cfg(feature = "cli")]
#[test]
fn a_session_against_the_mock_engine_binary() {
    use serve_command::v2::Usage;
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_serve-command"));
    command.arg("mock-engine");
    let engine = Controller::spawn(&mut command)
        .unwrap()
        .with_timeout(Duration::from_secs(30));
    let turn = engine.prompt("hello there").unwrap().wait().unwrap();
    assert_eq!(
        turn.events,
        answered("hello there", 2, vec![Event::agent_step(1)])
    );
    assert_eq!(turn.usage, Some(Usage::new(2, 2, 4, 0, 2)));
    assert_eq!(
        engine.request(Command::jobs_snapshot("mine")).map_err(err),
        Ok(Reply::Jobs(vec![]))
    );
    // It was not told to predict: no prediction follows the turn.
    assert_eq!(engine.prediction(), None);
    let status = engine.close().unwrap().expect("an exit status");
    assert_eq!(status.code(), Some(0));
}

/// `mock-engine --predict TEXT` predicts after each finished turn: the
/// controller hands the suggestion over as a notice and keeps it at hand
/// until a command that cancels it upstream (here the next prompt).
#[cfg(feature = "cli")]
#[test]
fn a_predicting_engines_suggestion_is_at_hand_until_the_next_prompt() {
    use serve_command::v2::serve::{EventLine, Notice};
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_serve-command"));
    command.args(["mock-engine", "--predict", "run the tests"]);
    let engine = Controller::spawn(&mut command).unwrap();
    let turn = engine.prompt("hello there").unwrap().wait().unwrap();
    assert_eq!(turn.command, CommandLine(1));
    let notice = engine
        .next_notice(Duration::from_secs(30))
        .expect("the engine's prediction");
    let Notice::Prediction { suggestion, .. } = notice else {
        panic!("not a prediction: {notice:?}");
    };
    assert_eq!(
        (
            suggestion.text(),
            suggestion.source_sequence,
            suggestion.turn,
            suggestion.line
        ),
        (Some("run the tests"), 1, Some(CommandLine(1)), EventLine(7))
    );
    assert_eq!(engine.prediction(), Some(suggestion));
    // The next prompt cancels it upstream: no longer at hand.
    let next = engine.prompt("and again").unwrap();
    assert_eq!(engine.prediction(), None);
    next.wait().unwrap();
    let Some(Notice::Prediction { suggestion, .. }) = engine.next_notice(Duration::from_secs(30))
    else {
        panic!("no second prediction");
    };
    assert_eq!(
        (suggestion.source_sequence, suggestion.turn),
        (2, Some(CommandLine(2)))
    );
    assert_eq!(engine.prediction().map(|s| s.source_sequence), Some(2));
    assert!(engine.notices().is_empty());
    assert_eq!(engine.close().unwrap().and_then(|s| s.code()), Some(0));
}

/// An engine that dies mid-turn: the turn's next event is the typed stop,
/// with the exit status, the end of stderr and what was owed; every later
/// call gets the same.
#[test]
fn an_engine_that_dies_mid_turn_fails_what_waits_with_its_status_and_stderr() {
    let engine = sh(
        "read line; echo '{\"event\":\"agent_step\",\"step\":1}'; \
         echo 'panic: model crashed' >&2; exit 3",
        &[],
    )
    .with_timeout(Duration::from_secs(10));
    let mut turn = engine.prompt("hi").unwrap();
    assert_eq!(
        turn.next_event().map_err(err),
        Ok(Some(Event::agent_step(1)))
    );
    let stopped = match turn.next_event() {
        Err(ControllerError::Stopped(stopped)) => stopped,
        other => panic!("{other:?}"),
    };
    assert_eq!(stopped.status.and_then(|s| s.code()), Some(3));
    assert_eq!(stopped.stderr, "panic: model crashed\n");
    assert_eq!(stopped.read_error, None);
    assert_eq!(stopped.owed.running, Some(1));
    assert_eq!(
        stopped.to_string(),
        "the engine stopped (exit status: 3) before answering; it still owed the end of what command line 1 started; stderr ends: panic: model crashed"
    );
    assert_err(
        engine.jobs_snapshot(),
        "the engine stopped (exit status: 3) before answering; it still owed the end of what command line 1 started; stderr ends: panic: model crashed",
    );
}

/// An engine that reads but never answers: the call times out, the
/// request stays owed, and closing its stdin ends it.
#[test]
fn an_engine_that_never_answers_times_out() {
    let engine = sh("while read line; do :; done", &[]).with_timeout(Duration::from_millis(300));
    assert_err(
        engine.jobs_snapshot(),
        "command line 1: the engine was silent for 0.300s while the call waited for its answer",
    );
    assert_eq!(engine.owed().requests, [1]);
    let status = engine.close().unwrap().expect("an exit status");
    assert_eq!(status.code(), Some(0));
}

/// An engine that exits without answering, no timeout set: the call
/// fails with the stop, the request owed.
#[test]
fn an_engine_that_exits_without_answering_fails_the_call() {
    let engine = sh("read line; exit 0", &[]);
    match engine.jobs_snapshot() {
        Err(ControllerError::Stopped(stopped)) => {
            assert_eq!(stopped.status.and_then(|s| s.code()), Some(0));
            assert_eq!(
                (stopped.stderr.as_str(), stopped.owed.requests.as_slice()),
                ("", &[1][..])
            );
        }
        other => panic!("{other:?}"),
    }
}

/// The engine answers with its own request id echoed, in a line that
/// names `jobs_snapshot` but lacks its `jobs`, then reads on.
const UNREADABLE_SNAPSHOT: &str = r#"read -r line; id=$(printf '%s' "$line" | sed 's/.*"request_id":"\([^"]*\)".*/\1/'); printf '{"event":"jobs_snapshot","request_id":"%s"}\n' "$id"; cat >/dev/null"#;

/// A turn whose terminal event does not decode, the engine reading on.
const UNREADABLE_END: &str = r#"read -r line; echo '{"event":"agent_step","step":1}'; echo '{"event":"agent_finished"}'; cat >/dev/null"#;

/// An answer that does not decode fails its call at once, with the
/// command line it answers, the event line, the event's name and why,
/// the decode error as its source; the engine, still running, goes on.
#[test]
fn an_unreadable_answer_fails_its_call_at_once() {
    let engine = sh(UNREADABLE_SNAPSHOT, &[]).with_timeout(Duration::from_secs(30));
    match engine.jobs_snapshot() {
        Err(e @ ControllerError::Unreadable(_)) => {
            assert_eq!(
                e.to_string(),
                "the engine's answer to command line 1 is unreadable: its event line 1 (jobs_snapshot) does not decode: jobs_snapshot: missing \"jobs\""
            );
            let source = std::error::Error::source(&e).map(ToString::to_string);
            assert_eq!(source.as_deref(), Some("jobs_snapshot: missing \"jobs\""));
        }
        other => panic!("{other:?}"),
    }
    assert!(engine.owed().is_empty());

    let engine = sh(UNREADABLE_END, &[]).with_timeout(Duration::from_secs(30));
    assert_err(
        engine.prompt("hi").unwrap().wait(),
        "the engine's answer to command line 1 is unreadable: its event line 2 (agent_finished) does not decode: agent_finished: missing \"answer\"",
    );
    assert!(engine.owed().is_empty());
}

/// Two requests of one kind answered in the other order, from two
/// threads: each call gets the reply with its own request id.
#[test]
fn requests_answered_out_of_order_reach_their_own_callers() {
    let job = JobRecord::new("g1", "job-1", 1, "cargo test", JobState::Running, 1, 2);
    let second = Event::jobs_snapshot("j2", vec![job.clone()]).to_line();
    let first = Event::jobs_snapshot("j1", vec![]).to_line();
    let engine = Arc::new(
        sh(
            "read a; read b; printf '%s' \"$1\" \"$2\"; while read line; do :; done",
            &[&second, &first],
        )
        .with_timeout(Duration::from_secs(10)),
    );
    let calls: Vec<_> = ["j1", "j2"]
        .into_iter()
        .map(|id| {
            let engine = Arc::clone(&engine);
            std::thread::spawn(move || engine.request(Command::jobs_snapshot(id)).map_err(err))
        })
        .collect();
    let replies: Vec<_> = calls.into_iter().map(|c| c.join().unwrap()).collect();
    assert_eq!(
        replies,
        [Ok(Reply::Jobs(vec![])), Ok(Reply::Jobs(vec![job]))]
    );
    assert_eq!(engine.owed(), Owed::default());
}

/// An auto goal's own turns answer no call: notices, their `turn` the
/// goal command's line.
#[test]
fn an_auto_goals_turns_are_notices_of_its_goal_command() {
    let engine = sh(
        "read g; echo '{\"event\":\"goal_updated\",\"goal\":\"ship\"}'; \
         echo '{\"event\":\"goal_continue\",\"remaining\":2}'; \
         echo '{\"event\":\"agent_step\",\"step\":1}'; \
         echo '{\"event\":\"agent_finished\",\"answer\":\"shipped\"}'; \
         while read line; do :; done",
        &[],
    )
    .with_timeout(Duration::from_secs(10));
    assert_eq!(
        engine.goal(Command::goal_set_auto("ship")).map_err(err),
        Ok(Some("ship".to_owned()))
    );
    let mut notices = Vec::new();
    while notices.len() < 3 {
        let notice = engine
            .next_notice(Duration::from_secs(10))
            .expect("a notice");
        let a = notice.attribution().clone();
        notices.push((a.event, a.answers, a.turn));
    }
    assert_eq!(
        notices,
        [
            (Some("goal_continue"), None, None),
            (Some("agent_step"), None, Some(1)),
            (Some("agent_finished"), None, Some(1)),
        ]
    );
}

/// A compaction a cancel stopped: its `compaction_failed` answers the
/// cancel, and the `compact` call still gets how its compaction ended.
#[test]
fn a_cancelled_compaction_ends_the_compact_call() {
    let engine = Arc::new(
        sh(
            "read c; echo '{\"event\":\"compaction_started\",\"from_sequence\":0,\"to_sequence\":4}'; \
             read x; echo '{\"event\":\"compaction_failed\",\"error\":\"cancelled\"}'; \
             while read line; do :; done",
            &[],
        )
        .with_timeout(Duration::from_secs(10)),
    );
    let compacting = Arc::clone(&engine);
    let call = std::thread::spawn(move || compacting.compact().map_err(err));
    // The cancel goes once the compaction runs.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while engine.owed().running != Some(1) {
        assert!(
            std::time::Instant::now() < deadline,
            "the compaction never started"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(engine.cancel().map_err(err), Ok(CommandLine(2)));
    assert_eq!(
        call.join().unwrap(),
        Ok(serve_command::v2::serve::Compaction::Failed(
            "cancelled".into()
        ))
    );
    assert_eq!(engine.owed(), Owed::default());
    assert!(engine.notices().is_empty());
}

/// A reply in the middle of a turn goes to its request, not the turn.
#[test]
fn a_reply_in_the_middle_of_a_turn_answers_its_request() {
    let engine = sh(
        "read p; echo '{\"event\":\"agent_step\",\"step\":1}'; read j; \
         echo '{\"event\":\"jobs_snapshot\",\"request_id\":\"ctl-1\",\"jobs\":[]}'; \
         echo '{\"event\":\"agent_finished\",\"answer\":\"done\"}'; \
         while read line; do :; done",
        &[],
    )
    .with_timeout(Duration::from_secs(10));
    let turn = engine.prompt("hi").unwrap();
    assert_eq!(engine.jobs_snapshot().map_err(err), Ok(vec![]));
    let turn = turn.wait().unwrap();
    assert_eq!(
        (turn.command, turn.events, turn.end),
        (
            CommandLine(1),
            vec![Event::agent_step(1), Event::agent_finished("done")],
            TurnEnd::Finished("done".into())
        )
    );
}

/// What answers nothing (a start-up event, a line that is not an event, a
/// turn event with no turn running) goes to the notices, in order, the
/// violation with its reason.
#[test]
fn events_that_answer_nothing_are_notices() {
    let engine = sh(
        "echo '{\"event\":\"session_started\",\"session\":\"s\",\"session_root\":\"/tmp/s\",\"workspace_root\":null}'; \
         echo 'engine v1 starting'; echo; \
         echo '{\"event\":\"agent_step\",\"step\":1}'",
        &[],
    );
    let mut notices = Vec::new();
    while let Some(notice) = engine.next_notice(Duration::from_secs(10)) {
        let a = notice.attribution().clone();
        let (name, error) = (
            notice.event().map(|e| e.name()),
            notice.error().map(|e| e.to_string()),
        );
        // Taken by value, the notice gives up the same event.
        assert_eq!(notice.into_event().map(|e| e.name()), name);
        notices.push((a.n, name, error, a.violation));
    }
    assert_eq!(
        notices,
        [
            (1, Some("session_started"), None, None),
            (
                2,
                None,
                Some("line 2: not JSON: expected a JSON value at byte 0".into()),
                None
            ),
            (
                4,
                Some("agent_step"),
                None,
                Some("agent_step with no turn running (no prompt was sent)".into())
            ),
        ]
    );
    assert_eq!(engine.notices_dropped(), 0);
}

/// Against `MockEngine` in process, over in-memory pipes.
#[cfg(feature = "workbench")]
mod in_process {
    use super::{answered, assert_err, err};
    use serve_command::v2::serve::{
        pipe, Approval, CommandLine, Compaction, Controller, ControllerError, Decision, Owed,
        Reply, Steered, Turn, TurnEnd,
    };
    use serve_command::v2::{
        ApprovalOutcome, Command, CommandErrorCause, ContentPart, Event, Image, JobStopOutcome,
        ParseError, Refusal, SteerKind, Usage,
    };
    use serve_command::workbench::MockEngine;
    use std::io::BufReader;
    use std::sync::Arc;
    use std::time::Duration;

    /// A controller attached to `MockEngine` with `script`, in a thread.
    fn mock(script: &str) -> Controller {
        let engine = MockEngine::with_script(script).unwrap();
        let (commands_in, commands_out) = pipe();
        let (events_in, events_out) = pipe();
        std::thread::spawn(move || engine.serve(BufReader::new(commands_in), events_out));
        Controller::attach(events_in, commands_out).with_timeout(Duration::from_secs(10))
    }

    /// The issue's scenario: a prompt with an image, a tagged steer, a
    /// command steer, `jobs_snapshot`, a goal (and a blank one, declined), an
    /// approval, `predict`, `job_stop`, a line the engine refuses, `compact`,
    /// a cancel that hits nothing, a line that is not JSON: each call gets what
    /// answers its command, with the command lines numbered as sent.
    #[test]
    fn a_whole_session_against_the_mock_engine_in_process() {
        let engine = mock("{}\n{\"approval\":{}}\n");
        let png = Image::from_data_url("data:image/png;base64,iVBORw0KGgo=").unwrap();
        let content = vec![
            ContentPart::Text("what is this?".into()),
            ContentPart::Image(png),
        ];

        let turn = engine.prompt(content).unwrap().wait().unwrap();
        let events = answered("what is this?", 3, vec![Event::agent_step(1)]);
        assert_eq!(
            fields(&turn),
            turn_of(1, events, "You asked: what is this?", 3)
        );
        assert_eq!(turn.answer(), Some("You asked: what is this?"));

        let steer = Command::steer_tagged(SteerKind::Prompt, "shorter", "s1");
        assert_eq!(
            engine.request(steer).map_err(err),
            Ok(Reply::Steer(Steered::Dropped))
        );
        assert_eq!(
            engine.steer(SteerKind::Command, "/diff").map_err(err),
            Ok(Steered::Applied { turn: None })
        );
        assert_eq!(engine.jobs_snapshot().map_err(err), Ok(vec![]));
        assert_eq!(
            engine.goal(Command::goal_set("ship it")).map_err(err),
            Ok(Some("ship it".to_owned()))
        );
        // Declined before it is written: the next command is line 6.
        let blank = engine.goal(Command::goal_set(" "));
        assert!(matches!(
            blank,
            Err(ControllerError::Declined(Refusal::BlankGoal))
        ));

        let mut asked = Vec::new();
        let turn = engine
            .prompt("run the tests")
            .unwrap()
            .wait_with(|question| {
                asked.push(question.clone());
                Decision::Allowed
            })
            .unwrap();
        let question = Approval::clone(&asked[0]);
        assert_eq!(
            (
                question.id.as_str(),
                question.tool_name.as_str(),
                question.detail.as_str(),
                question.body
            ),
            (
                "approval-1",
                "shell",
                "run a command outside the sandbox",
                None
            )
        );
        assert_eq!(asked.len(), 1);
        let before = vec![
            Event::agent_step(1),
            Event::approval_requested(
                "approval-1",
                "shell",
                "run a command outside the sandbox",
                None,
            ),
            Event::approval_resolved("approval-1", ApprovalOutcome::AllowedOnce),
            Event::tool_result("call-1", "shell", "ok", None),
            Event::agent_step(2),
        ];
        assert_eq!(
            fields(&turn),
            turn_of(
                6,
                answered("run the tests", 3, before),
                "You asked: run the tests",
                3
            )
        );

        // Line 7 was the approval.
        assert_eq!(
            engine.job_stop("g1", "job-7").map_err(err),
            Ok(JobStopOutcome::NotFound)
        );
        // No client asks for a prediction since upstream fdf10827.
        match engine
            .send_line(b"{\"command\":\"predict\",\"request_id\":\"p1\",\"source_sequence\":1}")
        {
            Ok(Some(cause)) => assert_eq!(
                cause,
                CommandErrorCause::NotACommand(ParseError::UnknownCommand("predict".into()))
            ),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            engine.send_line(b"{\"command\":\"nap\"}").map_err(err),
            Ok(Some(CommandErrorCause::NotACommand(
                ParseError::UnknownCommand("nap".into())
            )))
        );
        assert_eq!(
            engine.compact().map_err(err),
            Ok(Compaction::Finished {
                from_sequence: 0,
                to_sequence: 2,
                summary: "mock summary of 2 turns".into()
            })
        );
        assert_eq!(engine.cancel().map_err(err), Ok(CommandLine(12)));
        assert_eq!(
            engine.send_line(b"not json").map_err(err),
            Ok(Some(CommandErrorCause::StreamEnded(
                "expected a JSON value at byte 0".into()
            )))
        );
        assert_err(
            engine.jobs_snapshot(),
            "not sent: the engine reads no more commands after command line 13",
        );
        assert_eq!(engine.owed(), Owed::default());
        assert!(engine.notices().is_empty());
        assert_eq!(engine.close().map_err(err), Ok(None));
    }

    /// A turn's fields, to compare (`Turn` is `#[non_exhaustive]`).
    type Fields = (u64, Vec<Event>, TurnEnd, Option<Usage>, Vec<Approval>);

    fn fields(turn: &Turn) -> Fields {
        (
            turn.command.get(),
            turn.events.clone(),
            turn.end.clone(),
            turn.usage,
            turn.unanswered.clone(),
        )
    }

    /// A turn of `events` that finished with `answer`, its usage the mock's for
    /// a prompt of `words` words, no question left unanswered.
    fn turn_of(command: u64, events: Vec<Event>, answer: &str, words: i32) -> Fields {
        (
            command,
            events,
            TurnEnd::Finished(answer.to_owned()),
            Some(Usage::new(words, 2, words + 2, 0, words)),
            vec![],
        )
    }

    /// A question nobody answers is never silent: `wait` returns it, the
    /// model owes it, and once a cancel ends the turn, its last events (the
    /// handle gone) are notices, attributed to the turn and the cancel.
    #[test]
    fn an_unanswered_question_is_an_error_then_owed_then_notices() {
        let engine = mock("{\"approval\":{\"tool_name\":\"edit\",\"detail\":\"write src/lib.rs\",\"body\":\"diff\"}}");
        let unanswered = engine.prompt("fix it").unwrap().wait();
        match unanswered {
            Err(ControllerError::Unanswered(q)) => assert_eq!(
                (
                    q.id.as_str(),
                    q.tool_name.as_str(),
                    q.detail.as_str(),
                    q.body.as_deref()
                ),
                ("approval-1", "edit", "write src/lib.rs", Some("diff"))
            ),
            other => panic!("{other:?}"),
        }
        let owed = engine.owed();
        assert_eq!((owed.approvals, owed.running), (vec![2], Some(1)));
        assert_eq!(engine.cancel().map_err(err), Ok(CommandLine(2)));
        let mut notices = Vec::new();
        while notices.len() < 2 {
            let notice = engine
                .next_notice(Duration::from_secs(10))
                .expect("a notice");
            notices.push((
                notice.event().cloned().unwrap(),
                notice.attribution().answers,
                notice.attribution().turn,
            ));
        }
        assert_eq!(
            notices,
            [
                (
                    Event::approval_resolved("approval-1", ApprovalOutcome::Cancelled),
                    None,
                    Some(1)
                ),
                (Event::agent_aborted("interrupted"), Some(2), Some(1)),
            ]
        );
        assert_eq!(engine.owed(), Owed::default());
    }

    /// A question seen through `next_event` and left unanswered, the turn
    /// cancelled from another thread: the turn ends aborted, and says which
    /// question it never got an answer to.
    #[test]
    fn a_turn_cancelled_with_its_question_open_lists_it_unanswered() {
        let engine = Arc::new(mock("{\"approval\":{}}"));
        let mut turn = engine.prompt("go").unwrap();
        assert_eq!(
            turn.next_event().map_err(err),
            Ok(Some(Event::agent_step(1)))
        );
        let asked = turn.next_event().map_err(err);
        assert!(matches!(asked, Ok(Some(Event::ApprovalRequested { .. }))));
        let other = Arc::clone(&engine);
        std::thread::spawn(move || other.cancel())
            .join()
            .unwrap()
            .unwrap();
        let turn = turn.wait().unwrap();
        assert_eq!(turn.end, TurnEnd::Aborted("interrupted".into()));
        assert_eq!(turn.usage, None);
        let ids: Vec<&str> = turn.unanswered.iter().map(|a| a.id.as_str()).collect();
        assert_eq!(ids, ["approval-1"]);
        assert_eq!(
            turn.events[2..],
            [
                Event::approval_resolved("approval-1", ApprovalOutcome::Cancelled),
                Event::agent_aborted("interrupted")
            ]
        );
    }

    /// A command serve declines is refused before it is written; a prompt
    /// where a request goes, or the reverse, is refused by the call.
    #[test]
    fn declined_and_misdirected_commands_are_not_written() {
        let engine = mock("");
        let png = Image::from_data_url("data:image/png;base64,iVBORw0KGgo=").unwrap();
        let steer = Command::steer(SteerKind::Command, vec![ContentPart::Image(png)]);
        assert_err(
            engine.request(steer),
            "not sent: openseek serve declines it (command steering does not accept images)",
        );
        assert_err(
            engine.request(Command::prompt("x")),
            "expected a non-prompt command, got prompt",
        );
        assert_err(
            engine.submit(Command::Compact),
            "expected a prompt command, got compact",
        );
        assert_err(
            engine.goal(Command::Cancel),
            "expected a goal command, got cancel",
        );
        assert_err(engine.send_line(b"a\nb"), "not sent: the line holds an LF");
        // Nothing was written: the first command is line 1.
        assert_eq!(engine.cancel().map_err(err), Ok(CommandLine(1)));
    }
}

/// The controller on tokio: the same session against `MockEngine` in
/// process and the misbehaving engines, awaited.
#[cfg(feature = "tokio")]
mod on_tokio {
    use super::err;
    use serve_command::v2::serve::{ControllerError, Owed, Reply, TokioController};
    use serve_command::v2::{Command, Event, JobRecord, JobState};
    use std::future::Future;
    use std::sync::Arc;
    use std::time::Duration;

    fn run<F: Future>(future: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(future)
    }

    fn sh(script: &str, args: &[&str]) -> TokioController {
        let mut command = tokio::process::Command::new("sh");
        command.arg("-c").arg(script).arg("sh").args(args);
        TokioController::spawn(&mut command).unwrap()
    }

    /// Calls are futures a task can hold: `Send`.
    fn is_send<T: Send>(_: &T) {}

    /// As the blocking controller: an unreadable answer fails its call at
    /// once.
    #[test]
    fn an_unreadable_answer_fails_its_call_at_once() {
        run(async {
            let engine = sh(super::UNREADABLE_SNAPSHOT, &[]);
            let snapshot = tokio::time::timeout(Duration::from_secs(30), engine.jobs_snapshot());
            assert_eq!(
                snapshot.await.expect("no hang").map_err(err),
                Err("the engine's answer to command line 1 is unreadable: its event line 1 (jobs_snapshot) does not decode: jobs_snapshot: missing \"jobs\"".into())
            );
            let engine = sh(super::UNREADABLE_END, &[]);
            let turn = engine.prompt("hi").unwrap().wait();
            assert_eq!(
                tokio::time::timeout(Duration::from_secs(30), turn).await.expect("no hang").map_err(err).map(|_| ()),
                Err("the engine's answer to command line 1 is unreadable: its event line 2 (agent_finished) does not decode: agent_finished: missing \"answer\"".into())
            );
        });
    }

    #[test]
    fn an_engine_that_dies_mid_turn_fails_the_turn_with_its_status_and_stderr() {
        run(async {
            let engine = sh(
                "read line; echo '{\"event\":\"agent_step\",\"step\":1}'; \
                 echo 'panic: model crashed' >&2; exit 3",
                &[],
            );
            let mut turn = engine.prompt("hi").unwrap();
            assert_eq!(
                turn.next_event().await.map_err(err),
                Ok(Some(Event::agent_step(1)))
            );
            match turn.next_event().await {
                Err(ControllerError::Stopped(stopped)) => {
                    assert_eq!(stopped.status.and_then(|s| s.code()), Some(3));
                    assert_eq!(stopped.stderr, "panic: model crashed\n");
                    assert_eq!(stopped.owed.running, Some(1));
                }
                other => panic!("{other:?}"),
            }
            let snapshot = engine.jobs_snapshot();
            is_send(&snapshot);
            assert_eq!(
                snapshot.await.map_err(err),
                Err("the engine stopped (exit status: 3) before answering; it still owed the end of what command line 1 started; stderr ends: panic: model crashed".into())
            );
        });
    }

    /// No answer: `tokio::time::timeout` bounds the call, the request
    /// stays owed, its late answer (none here) would be a notice; closing
    /// stdin ends the engine.
    #[test]
    fn an_engine_that_never_answers_is_bounded_by_a_timeout() {
        run(async {
            let engine = sh("while read line; do :; done", &[]);
            let waited =
                tokio::time::timeout(Duration::from_millis(300), engine.jobs_snapshot()).await;
            assert!(waited.is_err());
            assert_eq!(engine.owed().requests, [1]);
            let status = engine.close().await.unwrap().expect("an exit status");
            assert_eq!(status.code(), Some(0));
        });
    }

    #[test]
    fn requests_answered_out_of_order_reach_their_own_callers() {
        run(async {
            let job = JobRecord::new("g1", "job-1", 1, "cargo test", JobState::Running, 1, 2);
            let second = Event::jobs_snapshot("j2", vec![job.clone()]).to_line();
            let first = Event::jobs_snapshot("j1", vec![]).to_line();
            let engine = Arc::new(sh(
                "read a; read b; printf '%s' \"$1\" \"$2\"; while read line; do :; done",
                &[&second, &first],
            ));
            let one = engine.request(Command::jobs_snapshot("j1"));
            let two = engine.request(Command::jobs_snapshot("j2"));
            let (one, two) = futures_join(one, two).await;
            assert_eq!(
                (one.map_err(err), two.map_err(err)),
                (Ok(Reply::Jobs(vec![])), Ok(Reply::Jobs(vec![job])))
            );
            assert_eq!(engine.owed(), Owed::default());
        });
    }

    /// Both futures to their ends, polled together (no `join!`: the
    /// crate's tests build no proc macros).
    async fn futures_join<A: Future, B: Future>(a: A, b: B) -> (A::Output, B::Output) {
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

    /// What answers nothing is a notice, awaited.
    #[test]
    fn events_that_answer_nothing_are_notices() {
        run(async {
            let engine = sh(
                "echo 'engine v1 starting'; echo '{\"event\":\"agent_step\",\"step\":1}'",
                &[],
            );
            let mut notices = Vec::new();
            while let Some(notice) = engine.next_notice().await {
                notices.push((
                    notice.attribution().n,
                    notice.attribution().violation.clone(),
                ));
            }
            assert_eq!(
                notices,
                [
                    (1, None),
                    (
                        2,
                        Some("agent_step with no turn running (no prompt was sent)".into())
                    )
                ]
            );
        });
    }

    /// `serve-command mock-engine` as a child, on tokio.
    #[cfg(feature = "cli")]
    #[test]
    fn a_session_against_the_mock_engine_binary() {
        use serve_command::v2::SteerKind;
        run(async {
            let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_serve-command"));
            command.arg("mock-engine");
            let engine = TokioController::spawn(&mut command).unwrap();
            let turn = engine.prompt("hello there").unwrap().wait().await.unwrap();
            assert_eq!(
                turn.events,
                super::answered("hello there", 2, vec![Event::agent_step(1)])
            );
            assert_eq!(
                turn.end,
                serve_command::v2::serve::TurnEnd::Finished("You asked: hello there".into())
            );
            assert_eq!(engine.jobs_snapshot().await.map_err(err), Ok(vec![]));
            assert_eq!(engine.prediction(), None);
            assert_eq!(
                engine.steer(SteerKind::Prompt, "more").await.map_err(err),
                Ok(serve_command::v2::serve::Steered::Dropped)
            );
            assert_eq!(
                engine.send_line(b"not json").await.map_err(err),
                Ok(Some(serve_command::v2::CommandErrorCause::StreamEnded(
                    "expected a JSON value at byte 0".into()
                )))
            );
            let status = engine.close().await.unwrap().expect("an exit status");
            assert_eq!(status.code(), Some(0));
        });
    }
}

/// The controller on tokio against `MockEngine` in process (a std thread),
/// over pipes with a std end and an async end.
#[cfg(all(feature = "tokio", feature = "workbench"))]
mod on_tokio_in_process {
    use super::err;
    use serve_command::v2::serve::{Compaction, Reply, Steered, TokioController, TurnEnd};
    use serve_command::v2::{Command, Event, SteerKind};
    use serve_command::workbench::MockEngine;
    use std::collections::VecDeque;
    use std::io::{self, BufReader, Read, Write};
    use std::pin::Pin;
    use std::sync::{Arc, Condvar, Mutex};
    use std::task::{Context, Poll, Waker};
    use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

    #[derive(Default)]
    struct Bytes {
        queue: VecDeque<u8>,
        closed: bool,
        waker: Option<Waker>,
    }

    /// One direction: written by either kind of writer, read by either
    /// kind of reader.
    #[derive(Default)]
    struct Pipe {
        bytes: Mutex<Bytes>,
        ready: Condvar,
    }

    impl Pipe {
        fn push(&self, buf: &[u8]) {
            let mut bytes = self.bytes.lock().unwrap();
            bytes.queue.extend(buf);
            self.wake(bytes);
        }

        fn close(&self) {
            let mut bytes = self.bytes.lock().unwrap();
            bytes.closed = true;
            self.wake(bytes);
        }

        fn wake(&self, mut bytes: std::sync::MutexGuard<'_, Bytes>) {
            if let Some(waker) = bytes.waker.take() {
                waker.wake();
            }
            self.ready.notify_all();
        }
    }

    struct End(Arc<Pipe>);

    fn pipe() -> (End, End) {
        let pipe = Arc::new(Pipe::default());
        (End(Arc::clone(&pipe)), End(pipe))
    }

    impl Read for End {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let mut bytes = self.0.bytes.lock().unwrap();
            while bytes.queue.is_empty() && !bytes.closed {
                bytes = self.0.ready.wait(bytes).unwrap();
            }
            let k = buf.len().min(bytes.queue.len());
            for (slot, byte) in buf.iter_mut().zip(bytes.queue.drain(..k)) {
                *slot = byte;
            }
            Ok(k)
        }
    }

    impl Write for End {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.push(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl AsyncRead for End {
        fn poll_read(
            self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<io::Result<()>> {
            let mut bytes = self.0.bytes.lock().unwrap();
            if bytes.queue.is_empty() && !bytes.closed {
                bytes.waker = Some(cx.waker().clone());
                return Poll::Pending;
            }
            let k = buf.remaining().min(bytes.queue.len());
            let taken: Vec<u8> = bytes.queue.drain(..k).collect();
            buf.put_slice(&taken);
            Poll::Ready(Ok(()))
        }
    }

    impl AsyncWrite for End {
        fn poll_write(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<io::Result<usize>> {
            self.0.push(buf);
            Poll::Ready(Ok(buf.len()))
        }

        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }

        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            self.0.close();
            Poll::Ready(Ok(()))
        }
    }

    impl Drop for End {
        fn drop(&mut self) {
            self.0.close();
        }
    }

    /// A session: an approval answered, a tagged steer, the requests, a
    /// compaction, the end.
    #[test]
    fn a_session_against_the_mock_engine_in_process() {
        let engine = MockEngine::with_script("{\"approval\":{}}").unwrap();
        let (commands_in, commands_out) = pipe();
        let (events_in, events_out) = pipe();
        std::thread::spawn(move || engine.serve(BufReader::new(commands_in), events_out));
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(async {
                let engine = TokioController::attach(events_in, commands_out).unwrap();
                let mut asked = Vec::new();
                let turn = engine
                    .prompt("run it")
                    .unwrap()
                    .wait_with(|q| {
                        asked.push(q.id.clone());
                        serve_command::v2::serve::Decision::Rejected
                    })
                    .await
                    .unwrap();
                assert_eq!(asked, ["approval-1"]);
                assert_eq!(
                    turn.events[..5],
                    [
                        Event::agent_step(1),
                        Event::approval_requested(
                            "approval-1",
                            "shell",
                            "run a command outside the sandbox",
                            None
                        ),
                        Event::approval_resolved(
                            "approval-1",
                            serve_command::v2::ApprovalOutcome::Rejected
                        ),
                        Event::tool_error("call-1", "shell", "the user rejected this action", None),
                        Event::agent_step(2),
                    ]
                );
                assert_eq!(turn.end, TurnEnd::Finished("You asked: run it".into()));
                let steer = Command::steer_tagged(SteerKind::Prompt, "more", "s1");
                assert_eq!(
                    engine.request(steer).await.map_err(err),
                    Ok(Reply::Steer(Steered::Dropped))
                );
                assert_eq!(engine.jobs_snapshot().await.map_err(err), Ok(vec![]));
                assert_eq!(engine.goal(Command::GoalClear).await.map_err(err), Ok(None));
                assert_eq!(
                    engine.compact().await.map_err(err),
                    Ok(Compaction::Finished {
                        from_sequence: 0,
                        to_sequence: 1,
                        summary: "mock summary of 1 turn".into()
                    })
                );
                assert!(engine.notices().is_empty());
                assert_eq!(engine.close().await.map_err(err), Ok(None));
            });
    }
}

/// What `{:?}` shows of a controller and of a running turn: its limits and
/// what is owed, and the turn's call, without the shared state inside.
#[test]
fn debug_shows_limits_and_what_is_owed_not_the_shared_state() {
    let engine = sh("read -r a; cat >/dev/null", &[]);
    let turn = engine.prompt("hi").unwrap();
    assert_eq!(
        format!("{engine:?}"),
        "Controller { limits: Limits { answer: 30s, stall: 600s, close: 60s, unread: 1048576 }, \
         owed: Owed { refused: [], requests: [], steers: [], goals: [], approvals: [], \
         running: None, queued: [1] }, .. }"
    );
    assert_eq!(
        format!("{turn:?}"),
        "TurnHandle { inner: Inner { .. }, call: Some(Call { command: CommandLine(1), \
         unread: 0, .. }), stall: 600s, log: TurnLog { command: CommandLine(1), events: [], \
         usage: None, asked: [], answered: [], end: None, next: 0 } }"
    );
}
