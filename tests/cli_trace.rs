//! `serve-command trace`, run as a child process on logs of the wire
//! written here: each session's conversation as `trace` tells it, exactly,
//! through the races upstream's serve loop allows.
#![cfg(feature = "cli")]

#[path = "support/bin.rs"]
mod bin;

use bin::{run, stdout_of};

/// A log of `lines`, each `> COMMAND` or `< EVENT`, as the tap writes its
/// records (with `n`; without `t_ms`, `verdict` and `violations`, which
/// `trace` does not read).
fn log(lines: &[&str]) -> String {
    let (mut commands, mut events) = (0, 0);
    let mut log = String::new();
    for line in lines {
        let (dir, n, text) = match line.split_at(2) {
            ("> ", text) => {
                commands += 1;
                ("command", commands, text)
            }
            ("< ", text) => {
                events += 1;
                ("event", events, text)
            }
            _ => panic!("a line starts with > or <: {line}"),
        };
        log += &format!(
            "{{\"dir\":\"{dir}\",\"n\":{n},\"line\":{}}}\n",
            serde_json::to_string(text).unwrap()
        );
    }
    log
}

/// `trace` (text) of the session `lines`, and `trace --format jsonl`.
#[track_caller]
fn trace(lines: &[&str]) -> (String, String) {
    let log = log(lines);
    (
        stdout_of(&["trace"], log.as_bytes(), 0),
        stdout_of(&["trace", "--format", "jsonl"], log.as_bytes(), 0),
    )
}

/// Asserts the text `trace` writes for the session `lines`.
#[track_caller]
fn assert_text(lines: &[&str], expected: &str) {
    let (text, _) = trace(lines);
    assert_eq!(text, expected, "{}", log(lines));
}

const PROMPT_A: &str = r#"{"command":"prompt","content":"a"}"#;
const PROMPT_B: &str = r#"{"command":"prompt","content":"b"}"#;
const CANCEL: &str = r#"{"command":"cancel"}"#;
const STEP: &str = r#"{"event":"agent_step","step":1}"#;
const DELTA: &str = r#"{"event":"assistant_delta","content":"a"}"#;
const FINISHED: &str = r#"{"event":"agent_finished","answer":"done"}"#;
const ABORTED: &str = r#"{"event":"agent_aborted","reason":"interrupted"}"#;

#[test]
fn a_reply_to_jobs_snapshot_in_the_middle_of_a_turn_belongs_to_no_turn() {
    let session = [
        "> {\"command\":\"prompt\",\"content\":\"what is in this repository? tell me all of it\"}",
        "> {\"command\":\"jobs_snapshot\",\"request_id\":\"j1\"}",
        concat!("< ", r#"{"event":"agent_step","step":1}"#),
        concat!(
            "< ",
            r#"{"event":"jobs_snapshot","request_id":"j1","jobs":[]}"#
        ),
        concat!("< ", r#"{"event":"assistant_delta","content":"a"}"#),
        concat!("< ", r#"{"event":"agent_finished","answer":"done"}"#),
    ];
    let (text, jsonl) = trace(&session);
    assert_eq!(
        text,
        r#"command 1: prompt "what is in this repository? tell me all..."
command 2: jobs_snapshot "j1"
turn of command 1:
  event 1: agent_step
event 2: jobs_snapshot, answers command 2
turn of command 1, continued:
  event 3: assistant_delta
  event 4: agent_finished; the turn ends
owed: nothing
"#
    );
    assert_eq!(
        jsonl,
        r#"{"n":1,"event":"agent_step","answers":null,"turn":1}
{"n":2,"event":"jobs_snapshot","answers":2,"turn":null}
{"n":3,"event":"assistant_delta","answers":null,"turn":1}
{"n":4,"event":"agent_finished","answers":null,"turn":1}
{"owed":{"refused":[],"requests":[],"steers":[],"goals":[],"approvals":[],"running":null,"queued":[]}}
"#
    );
}

#[test]
fn a_terminal_event_crossing_a_cancel() {
    let p = |line: &str| format!("> {line}");
    let e = |line: &str| format!("< {line}");
    // The cancel was sent while turn 1 ran, prompt 2 queued; turn 1's
    // agent_finished crossed it. (how turn 2 ends, the text)
    for (end, expected) in [
        // Turn 2 aborted: the engine took the cancel after it began.
        (
            ABORTED,
            "command 1: prompt \"a\"
turn of command 1:
  event 1: agent_step
command 2: prompt \"b\"
command 3: cancel
turn of command 1, continued:
  event 2: agent_finished; the turn ends
turn of command 2:
  event 3: agent_step
  event 4: agent_aborted, answers command 3; the turn ends
owed: nothing
",
        ),
        // Turn 2 finished: the cancel was taken in between and hit nothing.
        (
            FINISHED,
            "command 1: prompt \"a\"
turn of command 1:
  event 1: agent_step
command 2: prompt \"b\"
command 3: cancel
turn of command 1, continued:
  event 2: agent_finished; the turn ends
turn of command 2:
  event 3: agent_step
  event 4: agent_finished; the turn ends
owed: nothing
",
        ),
    ] {
        let session = [
            p(PROMPT_A),
            e(STEP),
            p(PROMPT_B),
            p(CANCEL),
            e(FINISHED),
            e(STEP),
            e(end),
        ];
        let session: Vec<&str> = session.iter().map(String::as_str).collect();
        assert_text(&session, expected);
    }
    // A cancel sent before the prompt is read before it: it cannot hit
    // that prompt's turn, whose abort then answers no cancel.
    assert_text(
        &[
            &p(PROMPT_A),
            &e(STEP),
            &p(CANCEL),
            &e(FINISHED),
            &p(PROMPT_B),
            &e(STEP),
            &e(ABORTED),
        ],
        "command 1: prompt \"a\"
turn of command 1:
  event 1: agent_step
command 2: cancel
turn of command 1, continued:
  event 2: agent_finished; the turn ends
command 3: prompt \"b\"
turn of command 3:
  event 3: agent_step
  event 4: agent_aborted; the turn ends
owed: nothing
",
    );
}

#[test]
fn a_compaction_queued_behind_a_turn_with_prompts_behind_it() {
    assert_text(
        &[
            &format!("> {PROMPT_A}"),
            "> {\"command\":\"compact\"}",
            &format!("> {PROMPT_B}"),
            "> {\"command\":\"compact\"}",
            &format!("< {STEP}"),
            &format!("< {FINISHED}"),
            r#"< {"event":"compaction_started","from_sequence":0,"to_sequence":2}"#,
            r#"< {"event":"compaction_finished","from_sequence":0,"to_sequence":2,"summary":"s"}"#,
            &format!("< {STEP}"),
            &format!("< {DELTA}"),
            &format!("< {FINISHED}"),
            r#"< {"event":"compaction_started","from_sequence":0,"to_sequence":4}"#,
            &format!("> {CANCEL}"),
            r#"< {"event":"compaction_failed","error":"cancelled"}"#,
        ],
        "command 1: prompt \"a\"
command 2: compact
command 3: prompt \"b\"
command 4: compact
turn of command 1:
  event 1: agent_step
  event 2: agent_finished; the turn ends
event 3: compaction_started, answers command 2
event 4: compaction_finished, answers command 2
turn of command 3:
  event 5: agent_step
  event 6: assistant_delta
  event 7: agent_finished; the turn ends
event 8: compaction_started, answers command 4
command 5: cancel
event 9: compaction_failed, answers command 5
owed: nothing
",
    );
}

#[test]
fn a_steer_crossing_a_turns_end_is_dropped_and_one_inside_it_applied() {
    assert_text(
        &[
            &format!("> {PROMPT_A}"),
            &format!("< {STEP}"),
            r#"> {"command":"steer","content":"and tests"}"#,
            r#"< {"event":"steer_applied","kind":"prompt","content":"and tests"}"#,
            r#"> {"command":"steer","content":"also docs","submission_id":"s1"}"#,
            &format!("< {FINISHED}"),
            r#"< {"event":"steer_dropped","content":"also docs","submission_id":"s1"}"#,
        ],
        r#"command 1: prompt "a"
turn of command 1:
  event 1: agent_step
command 2: steer prompt "and tests"
turn of command 1, continued:
  event 2: steer_applied, answers command 2
command 3: steer prompt "also docs" submission_id "s1"
turn of command 1, continued:
  event 3: agent_finished; the turn ends
event 4: steer_dropped, answers command 3
owed: nothing
"#,
    );
}

#[test]
fn requests_answered_out_of_order_each_answer_their_own() {
    assert_text(
        &[
            r#"> {"command":"jobs_snapshot","request_id":"r1"}"#,
            r#"> {"command":"job_stop","request_id":"r1","generation":"g","job_id":"j"}"#,
            r#"> {"command":"jobs_snapshot","request_id":"r2"}"#,
            r#"< {"event":"job_stop_result","request_id":"r1","generation":"g","job_id":"j","outcome":"not_found"}"#,
            r#"< {"event":"jobs_snapshot","request_id":"r2","jobs":[]}"#,
            r#"< {"event":"jobs_snapshot","request_id":"r1","jobs":[]}"#,
        ],
        r#"command 1: jobs_snapshot "r1"
command 2: job_stop "r1" of job g/j
command 3: jobs_snapshot "r2"
event 1: job_stop_result, answers command 2
event 2: jobs_snapshot, answers command 3
event 3: jobs_snapshot, answers command 1
owed: nothing
"#,
    );
}

/// The engine's own prediction, as the tests below write it.
const PREDICTION: &str = r#"< {"event":"prediction_result","source_sequence":1,"outcome":{"kind":"completed","text":"Thanks!","input_tokens":8,"output_tokens":2}}"#;

/// Asserts what `trace --format jsonl` writes for the session `lines`.
#[track_caller]
fn assert_jsonl(lines: &[&str], expected: &str) {
    let (_, jsonl) = trace(lines);
    assert_eq!(jsonl, expected, "{}", log(lines));
}

/// The engine's own prediction after a turn that finished: it answers no
/// command, and belongs to the turn it follows.
#[test]
fn a_prediction_after_agent_finished_belongs_to_that_turn() {
    assert_jsonl(
        &[
            r#"> {"command":"prompt","content":"a"}"#,
            r#"< {"event":"agent_step","step":1}"#,
            r#"< {"event":"agent_finished","answer":"done"}"#,
            PREDICTION,
        ],
        r#"{"n":1,"event":"agent_step","answers":null,"turn":1}
{"n":2,"event":"agent_finished","answers":null,"turn":1}
{"n":3,"event":"prediction_result","answers":null,"turn":1}
{"owed":{"refused":[],"requests":[],"steers":[],"goals":[],"approvals":[],"running":null,"queued":[]}}
"#,
    );
}

/// Inside a turn: the engine predicts only between turns.
#[test]
fn a_prediction_inside_a_turn_is_a_violation() {
    assert_jsonl(
        &[
            r#"> {"command":"prompt","content":"a"}"#,
            r#"< {"event":"agent_step","step":1}"#,
            PREDICTION,
            r#"< {"event":"agent_finished","answer":"done"}"#,
        ],
        r#"{"n":1,"event":"agent_step","answers":null,"turn":1}
{"n":2,"event":"prediction_result","answers":null,"turn":null,"violation":"prediction_result while the turn of command 1 runs: the engine predicts only between turns"}
{"n":3,"event":"agent_finished","answers":null,"turn":1}
{"owed":{"refused":[],"requests":[],"steers":[],"goals":[],"approvals":[],"running":null,"queued":[]}}
"#,
    );
}

/// After a turn that failed: only `agent_finished` is followed by a
/// prediction.
#[test]
fn a_prediction_after_turn_failed_is_a_violation() {
    assert_jsonl(
        &[
            r#"> {"command":"prompt","content":"a"}"#,
            r#"< {"event":"agent_step","step":1}"#,
            r#"< {"event":"turn_failed","error":"provider error"}"#,
            PREDICTION,
        ],
        r#"{"n":1,"event":"agent_step","answers":null,"turn":1}
{"n":2,"event":"turn_failed","answers":null,"turn":1}
{"n":3,"event":"prediction_result","answers":null,"turn":null,"violation":"prediction_result where none may come: the turn of command 1 ended with turn_failed (event 2), not agent_finished"}
{"owed":{"refused":[],"requests":[],"steers":[],"goals":[],"approvals":[],"running":null,"queued":[]}}
"#,
    );
}

/// After a turn a cancel aborted.
#[test]
fn a_prediction_after_agent_aborted_is_a_violation() {
    assert_jsonl(
        &[
            r#"> {"command":"prompt","content":"a"}"#,
            r#"> {"command":"cancel"}"#,
            r#"< {"event":"agent_step","step":1}"#,
            r#"< {"event":"agent_aborted","reason":"interrupted"}"#,
            PREDICTION,
        ],
        r#"{"n":1,"event":"agent_step","answers":null,"turn":1}
{"n":2,"event":"agent_aborted","answers":2,"turn":1}
{"n":3,"event":"prediction_result","answers":null,"turn":null,"violation":"prediction_result where none may come: the turn of command 1 ended with agent_aborted (event 2), not agent_finished"}
{"owed":{"refused":[],"requests":[],"steers":[],"goals":[],"approvals":[],"running":null,"queued":[]}}
"#,
    );
}

/// After a compaction (the turn before it could have had one, not once the
/// compaction ran).
#[test]
fn a_prediction_after_a_compaction_is_a_violation() {
    assert_jsonl(
        &[
            r#"> {"command":"prompt","content":"a"}"#,
            r#"< {"event":"agent_step","step":1}"#,
            r#"< {"event":"agent_finished","answer":"done"}"#,
            r#"> {"command":"compact"}"#,
            r#"< {"event":"compaction_started","from_sequence":0,"to_sequence":1}"#,
            r#"< {"event":"compaction_finished","from_sequence":0,"to_sequence":1,"summary":"s"}"#,
            PREDICTION,
        ],
        r#"{"n":1,"event":"agent_step","answers":null,"turn":1}
{"n":2,"event":"agent_finished","answers":null,"turn":1}
{"n":3,"event":"compaction_started","answers":2,"turn":null}
{"n":4,"event":"compaction_finished","answers":2,"turn":null}
{"n":5,"event":"prediction_result","answers":null,"turn":null,"violation":"prediction_result where none may come: the last work was the compaction of command 2, which no prediction follows"}
{"owed":{"refused":[],"requests":[],"steers":[],"goals":[],"approvals":[],"running":null,"queued":[]}}
"#,
    );
}

/// One prediction per turn.
#[test]
fn two_predictions_after_one_turn_the_second_is_a_violation() {
    assert_jsonl(
        &[
            r#"> {"command":"prompt","content":"a"}"#,
            r#"< {"event":"agent_step","step":1}"#,
            r#"< {"event":"agent_finished","answer":"done"}"#,
            PREDICTION,
            PREDICTION,
        ],
        r#"{"n":1,"event":"agent_step","answers":null,"turn":1}
{"n":2,"event":"agent_finished","answers":null,"turn":1}
{"n":3,"event":"prediction_result","answers":null,"turn":1}
{"n":4,"event":"prediction_result","answers":null,"turn":null,"violation":"prediction_result where none may come: the turn of command 1 already had its prediction (event 3)"}
{"owed":{"refused":[],"requests":[],"steers":[],"goals":[],"approvals":[],"running":null,"queued":[]}}
"#,
    );
}

/// Once the next turn wrote its first event, the last one's prediction is
/// cancelled: one then is inside that turn; after its end, one is that
/// turn's.
#[test]
fn a_prediction_after_the_next_turns_first_event_is_a_violation() {
    assert_jsonl(
        &[
            r#"> {"command":"prompt","content":"a"}"#,
            r#"< {"event":"agent_step","step":1}"#,
            r#"< {"event":"agent_finished","answer":"done"}"#,
            r#"> {"command":"prompt","content":"b"}"#,
            r#"< {"event":"agent_step","step":1}"#,
            PREDICTION,
            r#"< {"event":"agent_finished","answer":"done"}"#,
            PREDICTION,
        ],
        r#"{"n":1,"event":"agent_step","answers":null,"turn":1}
{"n":2,"event":"agent_finished","answers":null,"turn":1}
{"n":3,"event":"agent_step","answers":null,"turn":2}
{"n":4,"event":"prediction_result","answers":null,"turn":null,"violation":"prediction_result while the turn of command 2 runs: the engine predicts only between turns"}
{"n":5,"event":"agent_finished","answers":null,"turn":2}
{"n":6,"event":"prediction_result","answers":null,"turn":2}
{"owed":{"refused":[],"requests":[],"steers":[],"goals":[],"approvals":[],"running":null,"queued":[]}}
"#,
    );
}

/// A steer sent after the turn's end was seen, answered before the
/// prediction: the engine read it, and it cancels the prediction.
#[test]
fn a_prediction_after_steer_dropped_of_a_steer_sent_after_the_end_is_a_violation() {
    assert_jsonl(
        &[
            r#"> {"command":"prompt","content":"a"}"#,
            r#"< {"event":"agent_step","step":1}"#,
            r#"< {"event":"agent_finished","answer":"done"}"#,
            r#"> {"command":"steer","content":"x","submission_id":"s1"}"#,
            r#"< {"event":"steer_dropped","content":"x","submission_id":"s1"}"#,
            PREDICTION,
        ],
        r#"{"n":1,"event":"agent_step","answers":null,"turn":1}
{"n":2,"event":"agent_finished","answers":null,"turn":1}
{"n":3,"event":"steer_dropped","answers":2,"turn":null}
{"n":4,"event":"prediction_result","answers":null,"turn":null,"violation":"prediction_result where none may come: the engine read command 2 (its steer_dropped is event 3) after the turn of command 1 ended, which cancels the prediction"}
{"owed":{"refused":[],"requests":[],"steers":[],"goals":[],"approvals":[],"running":null,"queued":[]}}
"#,
    );
}

/// A steer sent before the turn's end, dropped at that end: the engine may
/// drain it before the prediction starts, so a prediction after its
/// `steer_dropped` is right.
#[test]
fn a_prediction_after_steer_dropped_of_a_steer_sent_before_the_end_is_right() {
    assert_jsonl(
        &[
            r#"> {"command":"prompt","content":"a"}"#,
            r#"> {"command":"steer","content":"x","submission_id":"s1"}"#,
            r#"< {"event":"agent_step","step":1}"#,
            r#"< {"event":"agent_finished","answer":"done"}"#,
            r#"< {"event":"steer_dropped","content":"x","submission_id":"s1"}"#,
            PREDICTION,
        ],
        r#"{"n":1,"event":"agent_step","answers":null,"turn":1}
{"n":2,"event":"agent_finished","answers":null,"turn":1}
{"n":3,"event":"steer_dropped","answers":2,"turn":null}
{"n":4,"event":"prediction_result","answers":null,"turn":1}
{"owed":{"refused":[],"requests":[],"steers":[],"goals":[],"approvals":[],"running":null,"queued":[]}}
"#,
    );
}

/// A goal sent after the turn's end, applied before the prediction, cancels
/// it too.
#[test]
fn a_prediction_after_goal_updated_of_a_goal_sent_after_the_end_is_a_violation() {
    assert_jsonl(
        &[
            r#"> {"command":"prompt","content":"a"}"#,
            r#"< {"event":"agent_step","step":1}"#,
            r#"< {"event":"agent_finished","answer":"done"}"#,
            r#"> {"command":"goal","action":"clear"}"#,
            r#"< {"event":"goal_updated","goal":null}"#,
            PREDICTION,
        ],
        r#"{"n":1,"event":"agent_step","answers":null,"turn":1}
{"n":2,"event":"agent_finished","answers":null,"turn":1}
{"n":3,"event":"goal_updated","answers":2,"turn":null}
{"n":4,"event":"prediction_result","answers":null,"turn":null,"violation":"prediction_result where none may come: the engine read command 2 (its goal_updated is event 3) after the turn of command 1 ended, which cancels the prediction"}
{"owed":{"refused":[],"requests":[],"steers":[],"goals":[],"approvals":[],"running":null,"queued":[]}}
"#,
    );
}

/// A prompt queued before the turn's end: no event shows the engine read it
/// before the prediction, which may have crossed it.
#[test]
fn a_prediction_crossing_a_prompt_queued_before_the_end_is_right() {
    assert_jsonl(
        &[
            r#"> {"command":"prompt","content":"a"}"#,
            r#"> {"command":"prompt","content":"b"}"#,
            r#"< {"event":"agent_step","step":1}"#,
            r#"< {"event":"agent_finished","answer":"done"}"#,
            PREDICTION,
            r#"< {"event":"agent_step","step":1}"#,
            r#"< {"event":"agent_finished","answer":"done"}"#,
        ],
        r#"{"n":1,"event":"agent_step","answers":null,"turn":1}
{"n":2,"event":"agent_finished","answers":null,"turn":1}
{"n":3,"event":"prediction_result","answers":null,"turn":1}
{"n":4,"event":"agent_step","answers":null,"turn":2}
{"n":5,"event":"agent_finished","answers":null,"turn":2}
{"owed":{"refused":[],"requests":[],"steers":[],"goals":[],"approvals":[],"running":null,"queued":[]}}
"#,
    );
}

/// A background_notice is the engine's own, unordered with the rest: a
/// prediction around one is not judged.
#[test]
fn a_prediction_after_a_background_notice_is_not_judged() {
    assert_jsonl(
        &[
            r#"> {"command":"prompt","content":"a"}"#,
            r#"< {"event":"agent_step","step":1}"#,
            r#"< {"event":"agent_finished","answer":"done"}"#,
            r#"< {"event":"background_notice","content":"job 1 finished"}"#,
            PREDICTION,
        ],
        r#"{"n":1,"event":"agent_step","answers":null,"turn":1}
{"n":2,"event":"agent_finished","answers":null,"turn":1}
{"n":3,"event":"background_notice","answers":null,"turn":null}
{"n":4,"event":"prediction_result","answers":null,"turn":1}
{"owed":{"refused":[],"requests":[],"steers":[],"goals":[],"approvals":[],"running":null,"queued":[]}}
"#,
    );
}

/// Notices inside the turn and after the prediction, neither judged.
#[test]
fn background_notices_around_a_turns_end_and_prediction_change_nothing() {
    assert_jsonl(
        &[
            r#"> {"command":"prompt","content":"a"}"#,
            r#"< {"event":"agent_step","step":1}"#,
            r#"< {"event":"background_notice","content":"job 1 finished"}"#,
            r#"< {"event":"agent_finished","answer":"done"}"#,
            PREDICTION,
            r#"< {"event":"background_notice","content":"job 2 finished"}"#,
        ],
        r#"{"n":1,"event":"agent_step","answers":null,"turn":1}
{"n":2,"event":"background_notice","answers":null,"turn":null}
{"n":3,"event":"agent_finished","answers":null,"turn":1}
{"n":4,"event":"prediction_result","answers":null,"turn":1}
{"n":5,"event":"background_notice","answers":null,"turn":null}
{"owed":{"refused":[],"requests":[],"steers":[],"goals":[],"approvals":[],"running":null,"queued":[]}}
"#,
    );
}

/// Before any turn finished.
#[test]
fn a_prediction_before_any_turn_is_a_violation() {
    assert_jsonl(
        &[PREDICTION],
        r#"{"n":1,"event":"prediction_result","answers":null,"turn":null,"violation":"prediction_result before any turn finished"}
{"owed":{"refused":[],"requests":[],"steers":[],"goals":[],"approvals":[],"running":null,"queued":[]}}
"#,
    );
}

/// An idle cancel has no answer: nothing shows that the engine read it, so
/// the model cannot judge the prediction (check-engine judges it by time).
#[test]
fn a_prediction_after_an_idle_cancel_is_not_judged_by_the_model() {
    assert_jsonl(
        &[
            r#"> {"command":"prompt","content":"a"}"#,
            r#"< {"event":"agent_step","step":1}"#,
            r#"< {"event":"agent_finished","answer":"done"}"#,
            r#"> {"command":"cancel"}"#,
            PREDICTION,
        ],
        r#"{"n":1,"event":"agent_step","answers":null,"turn":1}
{"n":2,"event":"agent_finished","answers":null,"turn":1}
{"n":3,"event":"prediction_result","answers":null,"turn":1}
{"owed":{"refused":[],"requests":[],"steers":[],"goals":[],"approvals":[],"running":null,"queued":[]}}
"#,
    );
}

#[test]
fn an_auto_goals_turns_belong_to_the_goal_command() {
    let continues = r#"< {"event":"goal_continue","remaining":3}"#;
    assert_text(
        &[
            r#"> {"command":"goal","action":"set","text":"ship it","auto":true}"#,
            r#"< {"event":"goal_updated","goal":"ship it"}"#,
            continues,
            &format!("< {STEP}"),
            &format!("< {FINISHED}"),
            continues,
            &format!("< {STEP}"),
            &format!("< {FINISHED}"),
            r#"> {"command":"goal","action":"clear"}"#,
            r#"< {"event":"goal_updated","goal":null}"#,
            continues,
        ],
        r#"command 1: goal set "ship it", auto
event 1: goal_updated, answers command 1
event 2: goal_continue
turn of command 1:
  event 3: agent_step
  event 4: agent_finished; the turn ends
event 5: goal_continue
turn of command 1:
  event 6: agent_step
  event 7: agent_finished; the turn ends
command 2: goal clear
event 8: goal_updated, answers command 2
event 9: goal_continue, attributed to nothing: goal_continue with no goal command that set auto
owed: nothing
"#,
    );
}

#[test]
fn refused_lines_approvals_and_events_that_fit_no_rule() {
    let session = [
        r#"> {"command":"nap"}"#,
        "> ",
        &format!("> {PROMPT_A}"),
        r#"< {"event":"command_error","error":"unknown command: nap"}"#,
        &format!("< {STEP}"),
        r#"< {"event":"approval_requested","id":"a1","tool_name":"shell","detail":"d","body":null}"#,
        r#"> {"command":"approval","id":"a1","allow":false}"#,
        r#"< {"event":"approval_resolved","id":"a1","outcome":"rejected"}"#,
        &format!("< {FINISHED}"),
        &format!("< {FINISHED}"),
        r#"< {"event":"jobs_snapshot","request_id":"zz","jobs":[]}"#,
        "< engine 1.0 ready",
        r#"< {"event":"session_error","error":"disk full"}"#,
        r#"< {"event":"command_error","error":"unknown command: x"}"#,
        "> not json",
        r#"> {"command":"cancel"}"#,
        r#"< {"event":"command_error","error":"command stream: expected a JSON value at byte 0"}"#,
    ];
    let (text, jsonl) = trace(&session);
    assert_eq!(
        text,
        r#"command 1: refused: {"command":"nap"}
command 2: blank
command 3: prompt "a"
event 1: command_error, answers command 1
turn of command 3:
  event 2: agent_step
  event 3: approval_requested
command 4: approval "a1" reject
turn of command 3, continued:
  event 4: approval_resolved, answers command 4
  event 5: agent_finished; the turn ends
event 6: agent_finished, attributed to nothing: agent_finished with no turn running (the turn of command 3 ended at event 5)
event 7: jobs_snapshot, attributed to nothing: jobs_snapshot answers no jobs_snapshot command: none unanswered with request_id "zz"
event 8: not an event
event 9: session_error
event 10: command_error, attributed to nothing: a command_error with no refused line left to answer
command 5: refused: not json
command 6: not read (the engine stopped reading at command 5)
event 11: command_error, answers command 5
owed: nothing
"#
    );
    assert_eq!(
        jsonl,
        r#"{"n":1,"event":"command_error","answers":1,"turn":null}
{"n":2,"event":"agent_step","answers":null,"turn":3}
{"n":3,"event":"approval_requested","answers":null,"turn":3}
{"n":4,"event":"approval_resolved","answers":4,"turn":3}
{"n":5,"event":"agent_finished","answers":null,"turn":3}
{"n":6,"event":"agent_finished","answers":null,"turn":null,"violation":"agent_finished with no turn running (the turn of command 3 ended at event 5)"}
{"n":7,"event":"jobs_snapshot","answers":null,"turn":null,"violation":"jobs_snapshot answers no jobs_snapshot command: none unanswered with request_id \"zz\""}
{"n":8,"event":null,"answers":null,"turn":null}
{"n":9,"event":"session_error","answers":null,"turn":null}
{"n":10,"event":"command_error","answers":null,"turn":null,"violation":"a command_error with no refused line left to answer"}
{"n":11,"event":"command_error","answers":5,"turn":null}
{"owed":{"refused":[],"requests":[],"steers":[],"goals":[],"approvals":[],"running":null,"queued":[]}}
"#
    );
}

#[test]
fn what_is_still_owed_at_the_end() {
    let session = [
        r#"> {"command":"nap"}"#,
        &format!("> {PROMPT_A}"),
        r#"> {"command":"jobs_snapshot","request_id":"j1"}"#,
        r#"> {"command":"steer","kind":"command","content":"/plan"}"#,
        r#"> {"command":"goal","action":"set","text":"g"}"#,
        &format!("> {PROMPT_B}"),
        r#"> {"command":"compact"}"#,
        &format!("< {STEP}"),
        r#"< {"event":"approval_requested","id":"a1","tool_name":"shell","detail":"d","body":null}"#,
    ];
    let (text, jsonl) = trace(&session);
    assert_eq!(
        text,
        r#"command 1: refused: {"command":"nap"}
command 2: prompt "a"
command 3: jobs_snapshot "j1"
command 4: steer command "/plan"
command 5: goal set "g"
command 6: prompt "b"
command 7: compact
turn of command 2:
  event 1: agent_step
  event 2: approval_requested
owed:
  a command_error to refused command 1
  a reply to command 3
  steer_applied or steer_dropped to command 4
  goal_updated to command 5
  the controller's approval, asked for by event 2
  the end of the work of command 2
  the work, not started, of command 6, 7
"#
    );
    assert!(
        jsonl.ends_with("{\"n\":2,\"event\":\"approval_requested\",\"answers\":null,\"turn\":2}\n{\"owed\":{\"refused\":[1],\"requests\":[3],\"steers\":[4],\"goals\":[5],\"approvals\":[2],\"running\":2,\"queued\":[6,7]}}\n"),
        "{jsonl}"
    );
}

#[test]
fn a_tap_logs_records_are_read_as_the_tap_writes_them() {
    // `line_base64` for bytes that are not UTF-8, `line: null` for a line
    // over the tap's limit (a command: refused, and the end of the
    // engine's reading), `lf`, and records of other kinds skipped. Written
    // as older taps wrote it, with `t_ms` only.
    let log = concat!(
        r#"{"t_ms":0,"dir":"command","n":1,"line":"{\"command\":\"prompt\",\"content\":\"\u00e9\"}","verdict":"command","violations":[]}"#,
        "\n",
        r#"{"t_ms":0,"dir":"stderr","n":1,"line":"engine: hello","verdict":"text","violations":[]}"#,
        "\n\n",
        r#"{"t_ms":0,"dir":"event","n":1,"line_base64":"gIE=","verdict":"not_event","violations":[]}"#,
        "\n",
        r#"{"t_ms":1,"dir":"event","n":2,"line":"{\"event\":\"agent_step\",\"step\":1}","verdict":"event","answers":null,"turn":1,"violations":[]}"#,
        "\n",
        r#"{"t_ms":1,"dir":"event","n":3,"line":null,"verdict":"not_event","violations":[]}"#,
        "\n",
        r#"{"t_ms":2,"dir":"command","n":2,"line":null,"verdict":"refused","violations":[]}"#,
        "\n",
        r#"{"t_ms":2,"dir":"command","n":3,"line":"{\"command\":\"cancel\"}","lf":false,"verdict":"unread","violations":[]}"#,
        "\n",
        r#"{"t_ms":3,"dir":"exit","status":"exit 0","code":0,"violations":[]}"#,
        "\n",
        r#"{"t_ms":3,"dir":"summary","lines":{"command":3,"event":3,"stderr":1},"violations":{},"status":"exit 0","code":0}"#,
    );
    assert_eq!(
        stdout_of(&["trace", "-"], log.as_bytes(), 0),
        r#"command 1: prompt "é"
event 1: not an event
turn of command 1:
  event 2: agent_step
event 3: not an event
command 2: refused: longer than the tap's line limit
command 3: not read (the engine stopped reading at command 2)
owed:
  a command_error to refused command 2
  the end of the work of command 1
"#
    );
    // The same log as the tap writes it since it added microseconds reads
    // alike.
    let mut with_us = log.to_owned();
    for ms in 0..4 {
        with_us = with_us.replace(
            &format!("{{\"t_ms\":{ms},"),
            &format!("{{\"t_ms\":{ms},\"t_us\":{},", ms * 1000 + 17),
        );
    }
    assert_eq!(with_us.matches("\"t_us\"").count(), 9, "{with_us}");
    assert_eq!(
        stdout_of(&["trace", "-"], with_us.as_bytes(), 0),
        stdout_of(&["trace", "-"], log.as_bytes(), 0),
    );
    let dir = std::env::temp_dir().join(format!("serve-command-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("wire.jsonl");
    std::fs::write(&file, log).unwrap();
    assert_eq!(
        stdout_of(
            &["trace", "--format", "jsonl", file.to_str().unwrap()],
            b"",
            0
        ),
        r#"{"n":1,"event":null,"answers":null,"turn":null}
{"n":2,"event":"agent_step","answers":null,"turn":1}
{"n":3,"event":null,"answers":null,"turn":null}
{"owed":{"refused":[2],"requests":[],"steers":[],"goals":[],"approvals":[],"running":1,"queued":[]}}
"#
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_bad_record_is_an_error_naming_its_line() {
    let event = r#"{"dir":"event","line":"{\"event\":\"session_error\",\"error\":\"e\"}"}"#;
    for (log, stderr) in [
        (
            "{\"dir\":\"exit\"}\nnot json\n".to_owned(),
            "serve-command: trace: stdin: line 2: not JSON: expected ident at line 1 column 2\n",
        ),
        (
            "[1]\n".to_owned(),
            "serve-command: trace: stdin: line 1: not a JSON object\n",
        ),
        (
            "{\"line\":\"x\"}\n".to_owned(),
            "serve-command: trace: stdin: line 1: no \"dir\"\n",
        ),
        (
            "{\"dir\":5,\"line\":\"x\"}\n".to_owned(),
            "serve-command: trace: stdin: line 1: \"dir\" is not a string\n",
        ),
        (
            "\n{\"dir\":\"command\"}\n".to_owned(),
            "serve-command: trace: stdin: line 2: a command record with neither \"line\" nor \"line_base64\"\n",
        ),
        (
            "{\"dir\":\"event\",\"line\":5}\n".to_owned(),
            "serve-command: trace: stdin: line 1: \"line\" is not a string or null\n",
        ),
        (
            "{\"dir\":\"event\",\"line_base64\":\"!!\"}\n".to_owned(),
            "serve-command: trace: stdin: line 1: \"line_base64\" is not base64: Invalid symbol 33, offset 0.\n",
        ),
        (
            "{\"dir\":\"command\",\"line\":\"a\",\"line_base64\":\"YQ==\"}\n".to_owned(),
            "serve-command: trace: stdin: line 1: both \"line\" and \"line_base64\": which is the line?\n",
        ),
        (
            format!("{event}\n{{\"dir\":\"event\",\"n\":3,\"line\":\"\"}}\n"),
            "serve-command: trace: stdin: line 2: this event record's \"n\" is 3, but it is event 2 of the log: records left out or reordered cannot be attributed\n",
        ),
    ] {
        let out = run(&["trace", "--format", "jsonl"], log.as_bytes());
        assert_eq!(out.status.code(), Some(2), "{log}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), stderr, "{log}");
    }
    // What was written before the bad record stays written; no owed
    // record follows it.
    let out = run(
        &["trace", "--format", "jsonl"],
        format!("{event}\n{{}}\n").as_bytes(),
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "{\"n\":1,\"event\":\"session_error\",\"answers\":null,\"turn\":null}\n"
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "serve-command: trace: stdin: line 2: no \"dir\"\n"
    );

    for (args, stderr) in [
        (
            &["trace", "/nonexistent/wire.jsonl"][..],
            "serve-command: trace: /nonexistent/wire.jsonl: No such file or directory\n",
        ),
        (
            &["--revision", "v1", "trace"][..],
            "serve-command: trace needs --revision v2: the protocol's first revision has no events\n",
        ),
    ] {
        let out = run(args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), stderr, "{args:?}");
    }
    let out = run(&["trace", "--format", "yaml"], b"");
    assert_eq!(out.status.code(), Some(2));
}

/// A log of `lines`, each `(T_US, "> COMMAND" or "< EVENT")`, with the
/// times the tap writes: `t_ms` and `t_us`, or `t_ms` only, as older taps
/// wrote it, when `us` is false.
fn timed_log(lines: &[(u64, &str)], us: bool) -> String {
    let texts: Vec<&str> = lines.iter().map(|&(_, line)| line).collect();
    let untimed = log(&texts);
    untimed
        .lines()
        .zip(lines)
        .map(|(record, &(t, _))| {
            let time = if us {
                format!("{{\"t_ms\":{},\"t_us\":{t},", t / 1000)
            } else {
                format!("{{\"t_ms\":{},", t / 1000)
            };
            format!("{}\n", record.replacen('{', &time, 1))
        })
        .collect()
}

/// A session with times chosen by hand: two prompts (one with a stall,
/// one whose first delta is a reasoning_delta), requests (one answered in
/// the middle of a turn, one not at all), a refused line, and a prompt
/// never started.
const TIMED: [(u64, &str); 15] = [
    (0, r#"> {"command":"prompt","content":"a"}"#),
    (1_000, r#"> {"command":"jobs_snapshot","request_id":"j1"}"#),
    (2_500, r#"< {"event":"agent_step","step":1}"#),
    (
        3_000,
        r#"< {"event":"jobs_snapshot","request_id":"j1","jobs":[]}"#,
    ),
    (4_000, r#"< {"event":"assistant_delta","content":"a"}"#),
    (1_504_000, r#"< {"event":"assistant_delta","content":"b"}"#),
    (1_505_000, r#"< {"event":"agent_finished","answer":"ab"}"#),
    (1_600_000, r#"> {"command":"nap"}"#),
    (
        1_600_250,
        r#"< {"event":"command_error","error":"unknown command: nap"}"#,
    ),
    (1_700_000, r#"> {"command":"prompt","content":"b"}"#),
    (1_700_123, r#"< {"event":"agent_step","step":1}"#),
    (1_712_345, r#"< {"event":"reasoning_delta","content":"hm"}"#),
    (1_800_000, r#"< {"event":"agent_finished","answer":"b"}"#),
    (
        1_900_000,
        r#"> {"command":"jobs_snapshot","request_id":"j2"}"#,
    ),
    (1_900_100, r#"> {"command":"prompt","content":"c"}"#),
];

#[test]
fn stats_of_a_session_with_known_times() {
    let log = timed_log(&TIMED, true);
    // prompt, first: 2500 us (command 1 to event 1) and 123 us (command 4
    // to event 7); first delta: 4000 us (event 3) and 12345 us (event 8,
    // a reasoning_delta); end: 1505000 us and 100000 us. jobs_snapshot:
    // 2000 us, in the middle of the turn of command 1; refused: 250 us.
    // By nearest rank, of two samples p50 is the smaller and p95, p99 and
    // max the larger. Commands 5 and 6 are owed: no end, no sample.
    // Stalls over 1 s: the 1500 ms between events 3 and 4 of turn 1.
    assert_eq!(
        stdout_of(&["trace", "--stats"], log.as_bytes(), 0),
        "\
kind           measure      count           p50           p95           p99           max
prompt         first            2       0.123ms       2.500ms       2.500ms       2.500ms
prompt         first delta      2       4.000ms      12.345ms      12.345ms      12.345ms
prompt         end              2     100.000ms    1505.000ms    1505.000ms    1505.000ms
jobs_snapshot  first            1       2.000ms       2.000ms       2.000ms       2.000ms
jobs_snapshot  end              1       2.000ms       2.000ms       2.000ms       2.000ms
refused        first            1       0.250ms       0.250ms       0.250ms       0.250ms
refused        end              1       0.250ms       0.250ms       0.250ms       0.250ms
sent: prompt 3, jobs_snapshot 2, refused 1
owed at the end: prompt 1 (command 6), jobs_snapshot 1 (command 5)
stalls over 1000.000ms: 1
  the turn of command 1: 1500.000ms from event 3 (assistant_delta) to event 4 (assistant_delta)
"
    );
    assert_eq!(
        stdout_of(
            &["trace", "--stats", "--format", "jsonl"],
            log.as_bytes(),
            0
        ),
        r#"{"kind":"prompt","sent":3,"owed":[6],"first":{"count":2,"p50_ms":0.123,"p95_ms":2.500,"p99_ms":2.500,"max_ms":2.500},"first_delta":{"count":2,"p50_ms":4.000,"p95_ms":12.345,"p99_ms":12.345,"max_ms":12.345},"end":{"count":2,"p50_ms":100.000,"p95_ms":1505.000,"p99_ms":1505.000,"max_ms":1505.000}}
{"kind":"jobs_snapshot","sent":2,"owed":[5],"first":{"count":1,"p50_ms":2.000,"p95_ms":2.000,"p99_ms":2.000,"max_ms":2.000},"end":{"count":1,"p50_ms":2.000,"p95_ms":2.000,"p99_ms":2.000,"max_ms":2.000}}
{"kind":"refused","sent":1,"owed":[],"first":{"count":1,"p50_ms":0.250,"p95_ms":0.250,"p99_ms":0.250,"max_ms":0.250},"end":{"count":1,"p50_ms":0.250,"p95_ms":0.250,"p99_ms":0.250,"max_ms":0.250}}
{"stall":{"turn":1,"after":3,"before":4,"gap_ms":1500.000}}
"#
    );
}

#[test]
fn stats_of_a_log_without_t_us_read_t_ms_as_whole_milliseconds() {
    let ms_only = timed_log(&TIMED, false);
    assert!(!ms_only.contains("t_us"), "{ms_only}");
    // The same session with each time cut to its millisecond, in t_us.
    let cut: Vec<(u64, &str)> = TIMED.iter().map(|&(t, l)| (t / 1000 * 1000, l)).collect();
    let text = stdout_of(&["trace", "--stats"], ms_only.as_bytes(), 0);
    assert_eq!(
        text,
        stdout_of(&["trace", "--stats"], timed_log(&cut, true).as_bytes(), 0)
    );
    // prompt, first: 2 ms and 0 ms; refused: 0 ms.
    assert!(
        text.contains(
            "\nprompt         first            2       0.000ms       2.000ms       2.000ms       2.000ms\n"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "\nrefused        end              1       0.000ms       0.000ms       0.000ms       0.000ms\n"
        ),
        "{text}"
    );
}

#[test]
fn stats_percentiles_are_by_nearest_rank() {
    // 100 requests, a second apart, answered in 100 ms, 99 ms, ... 1 ms.
    let lines: Vec<(u64, String)> = (1..=100u64)
        .flat_map(|k| {
            let sent = k * 1_000_000;
            [
                (
                    sent,
                    format!("> {{\"command\":\"jobs_snapshot\",\"request_id\":\"j{k}\"}}"),
                ),
                (
                    sent + (101 - k) * 1000,
                    format!(
                        "< {{\"event\":\"jobs_snapshot\",\"request_id\":\"j{k}\",\"jobs\":[]}}"
                    ),
                ),
            ]
        })
        .collect();
    let lines: Vec<(u64, &str)> = lines.iter().map(|(t, l)| (*t, l.as_str())).collect();
    let log = timed_log(&lines, true);
    assert_eq!(
        stdout_of(&["trace", "--stats"], log.as_bytes(), 0),
        "\
kind           measure      count           p50           p95           p99           max
jobs_snapshot  first          100      50.000ms      95.000ms      99.000ms     100.000ms
jobs_snapshot  end            100      50.000ms      95.000ms      99.000ms     100.000ms
sent: jobs_snapshot 100
owed at the end: nothing
stalls over 1000.000ms: none
"
    );
}

#[test]
fn stats_stalls_are_the_gaps_in_a_turn_over_the_threshold() {
    let log = timed_log(&TIMED, true);
    // Over 2 s: none.
    let text = stdout_of(&["trace", "--stats", "--stall", "2000"], log.as_bytes(), 0);
    assert!(text.ends_with("\nstalls over 2000.000ms: none\n"), "{text}");
    // Over 1 ms: every gap between two events of one turn, the reply in
    // the middle of turn 1 skipped; the gap of exactly 1 ms (events 4 and
    // 5) is not over it.
    let text = stdout_of(&["trace", "--stats", "--stall", "1"], log.as_bytes(), 0);
    assert!(
        text.ends_with(
            "
stalls over 1.000ms: 4
  the turn of command 1: 1.500ms from event 1 (agent_step) to event 3 (assistant_delta)
  the turn of command 1: 1500.000ms from event 3 (assistant_delta) to event 4 (assistant_delta)
  the turn of command 4: 12.222ms from event 7 (agent_step) to event 8 (reasoning_delta)
  the turn of command 4: 87.655ms from event 8 (reasoning_delta) to event 9 (agent_finished)
"
        ),
        "{text}"
    );
    let jsonl = stdout_of(
        &["trace", "--stats", "--stall", "1", "--format", "jsonl"],
        log.as_bytes(),
        0,
    );
    let stalls: Vec<&str> = jsonl
        .lines()
        .filter(|l| l.starts_with("{\"stall\""))
        .collect();
    assert_eq!(
        stalls,
        [
            r#"{"stall":{"turn":1,"after":1,"before":3,"gap_ms":1.500}}"#,
            r#"{"stall":{"turn":1,"after":3,"before":4,"gap_ms":1500.000}}"#,
            r#"{"stall":{"turn":4,"after":7,"before":8,"gap_ms":12.222}}"#,
            r#"{"stall":{"turn":4,"after":8,"before":9,"gap_ms":87.655}}"#,
        ]
    );
    // Without --stats, --stall is a usage error.
    let out = run(&["trace", "--stall", "1"], log.as_bytes());
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn stats_count_what_nothing_answered_apart() {
    // The turn of command 1 started and never ended: its first event is a
    // sample, its end is owed; the steer, never answered, gives no sample.
    let log = timed_log(
        &[
            (0, r#"> {"command":"prompt","content":"a"}"#),
            (10, r#"> {"command":"steer","content":"s"}"#),
            (1_000, r#"< {"event":"agent_step","step":1}"#),
        ],
        true,
    );
    assert_eq!(
        stdout_of(&["trace", "--stats"], log.as_bytes(), 0),
        "\
kind    measure      count           p50           p95           p99           max
prompt  first            1       1.000ms       1.000ms       1.000ms       1.000ms
prompt  first delta      0             -             -             -             -
prompt  end              0             -             -             -             -
steer   first            0             -             -             -             -
steer   end              0             -             -             -             -
sent: prompt 1, steer 1
owed at the end: prompt 1 (command 1), steer 1 (command 2)
stalls over 1000.000ms: none
"
    );
    assert_eq!(
        stdout_of(
            &["trace", "--stats", "--format", "jsonl"],
            log.as_bytes(),
            0
        ),
        r#"{"kind":"prompt","sent":1,"owed":[1],"first":{"count":1,"p50_ms":1.000,"p95_ms":1.000,"p99_ms":1.000,"max_ms":1.000},"first_delta":{"count":0,"p50_ms":null,"p95_ms":null,"p99_ms":null,"max_ms":null},"end":{"count":0,"p50_ms":null,"p95_ms":null,"p99_ms":null,"max_ms":null}}
{"kind":"steer","sent":1,"owed":[2],"first":{"count":0,"p50_ms":null,"p95_ms":null,"p99_ms":null,"max_ms":null},"end":{"count":0,"p50_ms":null,"p95_ms":null,"p99_ms":null,"max_ms":null}}
"#
    );
}

#[test]
fn stats_of_each_kind_of_answer() {
    // A steer applied, an approval resolved, a goal updated, a cancel
    // answered by the abort it caused; a compaction queued behind the
    // turn, started, and failed by a second cancel (whose compaction_failed
    // answers the cancel: the compaction that ends is the one running).
    let log = timed_log(
        &[
            (0, r#"> {"command":"prompt","content":"a"}"#),
            (0, r#"> {"command":"compact"}"#),
            (1_000, r#"< {"event":"agent_step","step":1}"#),
            (2_000, r#"> {"command":"steer","content":"s"}"#),
            (
                3_000,
                r#"< {"event":"steer_applied","kind":"prompt","content":"s"}"#,
            ),
            (
                4_000,
                r#"< {"event":"approval_requested","id":"a1","tool_name":"shell","detail":"d","body":null}"#,
            ),
            (5_000, r#"> {"command":"approval","id":"a1","allow":true}"#),
            (
                7_000,
                r#"< {"event":"approval_resolved","id":"a1","outcome":"allowed_once"}"#,
            ),
            (8_000, r#"> {"command":"goal","action":"set","text":"g"}"#),
            (9_000, r#"< {"event":"goal_updated","goal":"g"}"#),
            (10_000, r#"> {"command":"cancel"}"#),
            (
                14_000,
                r#"< {"event":"agent_aborted","reason":"interrupted"}"#,
            ),
            (
                15_000,
                r#"< {"event":"compaction_started","from_sequence":0,"to_sequence":2}"#,
            ),
            (16_000, r#"> {"command":"cancel"}"#),
            (
                20_000,
                r#"< {"event":"compaction_failed","error":"cancelled"}"#,
            ),
        ],
        true,
    );
    assert_eq!(
        stdout_of(&["trace", "--stats"], log.as_bytes(), 0),
        "\
kind      measure      count           p50           p95           p99           max
prompt    first            1       1.000ms       1.000ms       1.000ms       1.000ms
prompt    first delta      0             -             -             -             -
prompt    end              1      14.000ms      14.000ms      14.000ms      14.000ms
steer     first            1       1.000ms       1.000ms       1.000ms       1.000ms
steer     end              1       1.000ms       1.000ms       1.000ms       1.000ms
cancel    first            2       4.000ms       4.000ms       4.000ms       4.000ms
cancel    end              2       4.000ms       4.000ms       4.000ms       4.000ms
compact   first            1      15.000ms      15.000ms      15.000ms      15.000ms
compact   end              1      20.000ms      20.000ms      20.000ms      20.000ms
goal      first            1       1.000ms       1.000ms       1.000ms       1.000ms
goal      end              1       1.000ms       1.000ms       1.000ms       1.000ms
approval  first            1       2.000ms       2.000ms       2.000ms       2.000ms
approval  end              1       2.000ms       2.000ms       2.000ms       2.000ms
sent: prompt 1, steer 1, cancel 2, compact 1, goal 1, approval 1
owed at the end: nothing
stalls over 1000.000ms: none
"
    );
}

#[test]
fn stats_of_a_log_it_cannot_time_is_an_error_naming_its_line() {
    for (log, stderr) in [
        (
            log(&[r#"> {"command":"compact"}"#]),
            "serve-command: trace: stdin: line 1: no time: --stats needs a whole number \"t_us\" (or \"t_ms\") in every command and event record\n",
        ),
        (
            timed_log(
                &[
                    (5_000, r#"> {"command":"compact"}"#),
                    (4_999, r#"< {"event":"compaction_started","from_sequence":0,"to_sequence":2}"#),
                ],
                true,
            ),
            "serve-command: trace: stdin: line 2: its time (4999 us) is before line 1's (5000 us): records reordered cannot be timed\n",
        ),
        (
            "{\"t_us\":1,\"dir\":\"event\",\"n\":2,\"line\":\"\"}\n".to_owned(),
            "serve-command: trace: stdin: line 1: this event record's \"n\" is 2, but it is event 1 of the log: records left out or reordered cannot be attributed\n",
        ),
    ] {
        let out = run(&["trace", "--stats"], log.as_bytes());
        assert_eq!(out.status.code(), Some(2), "{log}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), stderr, "{log}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "", "{log}");
    }
    // Without --stats, the times are not read.
    let untimed = log(&[r#"> {"command":"compact"}"#]);
    stdout_of(&["trace"], untimed.as_bytes(), 0);
}

#[test]
fn stats_of_a_compaction_a_cancel_failed_before_it_started() {
    // The compaction of command 1 ended without a word when the turn of
    // command 2 started; command 3's fails at once, hit by the cancel,
    // which its compaction_failed answers: the compaction that ended is
    // the one the model no longer owes, command 3's.
    let log = timed_log(
        &[
            (0, r#"> {"command":"compact"}"#),
            (0, r#"> {"command":"prompt","content":"a"}"#),
            (1_000, r#"< {"event":"agent_step","step":1}"#),
            (2_000, r#"< {"event":"agent_finished","answer":"a"}"#),
            (3_000, r#"> {"command":"compact"}"#),
            (4_000, r#"> {"command":"cancel"}"#),
            (
                10_000,
                r#"< {"event":"compaction_failed","error":"cancelled"}"#,
            ),
        ],
        true,
    );
    let text = stdout_of(&["trace", "--stats"], log.as_bytes(), 0);
    for line in [
        "cancel   end              1       6.000ms       6.000ms       6.000ms       6.000ms",
        "compact  first            1       7.000ms       7.000ms       7.000ms       7.000ms",
        "compact  end              1       7.000ms       7.000ms       7.000ms       7.000ms",
        "sent: prompt 1, cancel 1, compact 2",
        "owed at the end: nothing",
    ] {
        assert!(text.contains(&format!("\n{line}\n")), "{line}\n{text}");
    }
}

/// The engine's own prediction, seconds after its turn's end, is no part
/// of the turn's pace: no stall, no later end.
#[test]
fn stats_leave_the_engines_prediction_out_of_its_turn() {
    let timed: [(u64, &str); 4] = [
        (0, r#"> {"command":"prompt","content":"a"}"#),
        (100, r#"< {"event":"agent_step","step":1}"#),
        (200, r#"< {"event":"agent_finished","answer":"a"}"#),
        (
            3_000_000,
            r#"< {"event":"prediction_result","source_sequence":1,"outcome":{"kind":"completed","text":"b","input_tokens":1,"output_tokens":1}}"#,
        ),
    ];
    let log = timed_log(&timed, true);
    assert_eq!(
        stdout_of(&["trace", "--stats"], log.as_bytes(), 0),
        "\
kind    measure      count           p50           p95           p99           max
prompt  first            1       0.100ms       0.100ms       0.100ms       0.100ms
prompt  first delta      0             -             -             -             -
prompt  end              1       0.200ms       0.200ms       0.200ms       0.200ms
sent: prompt 1
owed at the end: nothing
stalls over 1000.000ms: none
"
    );
}
