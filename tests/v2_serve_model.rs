//! The serve loop's model: every row of "What answers what"
//! (docs/PROTOCOL.md) and each race the serve loop allows, as sessions of
//! lines in the order they cross, each event with its exact attribution.

use serve_command::v2::serve::{Conversation, Owed};

/// One line of a session, in crossing order.
enum Step {
    /// A command line the controller writes.
    C(String),
    /// An event line: what it answers and the turn it belongs to.
    E(String, Option<u64>, Option<u64>),
    /// An event line that fits no rule, and why.
    V(String, &'static str),
    /// An engine line that is not an event.
    Stray(&'static str),
}
use Step::{Stray, C, E, V};

/// Runs `steps` through a new conversation, checking each line's number
/// and attribution; returns the conversation for what is owed.
#[track_caller]
fn run(steps: &[Step]) -> Conversation {
    let mut conversation = Conversation::new();
    let (mut commands, mut events) = (0, 0);
    for (i, step) in steps.iter().enumerate() {
        match step {
            C(line) => {
                commands += 1;
                assert_eq!(
                    conversation.command(line.as_bytes()),
                    commands,
                    "step {i}: {line}"
                );
            }
            E(line, answers, turn) => {
                events += 1;
                let got = conversation.event(line.as_bytes());
                let want = (events, Some(name(line)), *answers, *turn, None);
                let got = (got.n, got.event, got.answers, got.turn, got.violation);
                assert_eq!(got, want, "step {i}: {line}");
            }
            V(line, reason) => {
                events += 1;
                let got = conversation.event(line.as_bytes());
                let want = (
                    events,
                    Some(name(line)),
                    None,
                    None,
                    Some((*reason).to_owned()),
                );
                let got = (got.n, got.event, got.answers, got.turn, got.violation);
                assert_eq!(got, want, "step {i}: {line}");
            }
            Stray(line) => {
                events += 1;
                let got = conversation.event(line.as_bytes());
                let got = (got.n, got.event, got.answers, got.turn, got.violation);
                assert_eq!(got, (events, None, None, None, None), "step {i}: {line}");
            }
        }
    }
    conversation
}

/// The event's name, as the line spells it.
fn name(line: &str) -> &'static str {
    let value: serde_json::Value = serde_json::from_str(line.trim_end()).expect("an event line");
    let name = value["event"].as_str().expect("an event name").to_owned();
    Box::leak(name.into_boxed_str())
}

/// What is owed, field by field: refused, requests, steers, goals,
/// approvals, running, queued.
type OwedFields = (
    Vec<u64>,
    Vec<u64>,
    Vec<u64>,
    Vec<u64>,
    Vec<u64>,
    Option<u64>,
    Vec<u64>,
);

fn owed(conversation: &Conversation) -> OwedFields {
    let Owed {
        refused,
        requests,
        steers,
        goals,
        approvals,
        running,
        queued,
        ..
    } = conversation.owed();
    (refused, requests, steers, goals, approvals, running, queued)
}

fn nothing() -> OwedFields {
    (vec![], vec![], vec![], vec![], vec![], None, vec![])
}

// Command lines.
fn prompt(text: &str) -> Step {
    C(format!(
        "{{\"command\":\"prompt\",\"content\":\"{text}\"}}\n"
    ))
}
fn steer(text: &str) -> Step {
    C(format!(
        "{{\"command\":\"steer\",\"content\":\"{text}\"}}\n"
    ))
}
fn steer_tagged(text: &str, id: &str) -> Step {
    C(format!(
        "{{\"command\":\"steer\",\"content\":\"{text}\",\"submission_id\":\"{id}\"}}\n"
    ))
}
fn steer_command(text: &str) -> Step {
    C(format!(
        "{{\"command\":\"steer\",\"kind\":\"command\",\"content\":\"{text}\"}}\n"
    ))
}
fn cancel() -> Step {
    C("{\"command\":\"cancel\"}\n".into())
}
fn compact() -> Step {
    C("{\"command\":\"compact\"}\n".into())
}
fn jobs(id: &str) -> Step {
    C(format!(
        "{{\"command\":\"jobs_snapshot\",\"request_id\":\"{id}\"}}\n"
    ))
}
fn job_stop(id: &str) -> Step {
    C(format!("{{\"command\":\"job_stop\",\"request_id\":\"{id}\",\"generation\":\"g\",\"job_id\":\"j\"}}\n"))
}
fn goal(text: &str) -> Step {
    C(format!(
        "{{\"command\":\"goal\",\"action\":\"set\",\"text\":\"{text}\"}}\n"
    ))
}
fn goal_auto(text: &str) -> Step {
    C(format!(
        "{{\"command\":\"goal\",\"action\":\"set\",\"text\":\"{text}\",\"auto\":true}}\n"
    ))
}
fn goal_clear() -> Step {
    C("{\"command\":\"goal\",\"action\":\"clear\"}\n".into())
}
fn approval(id: &str) -> Step {
    C(format!(
        "{{\"command\":\"approval\",\"id\":\"{id}\",\"allow\":true}}\n"
    ))
}
fn raw(line: &str) -> Step {
    C(line.to_owned())
}

// Event lines.
fn step(k: u32) -> String {
    format!("{{\"event\":\"agent_step\",\"step\":{k}}}\n")
}
fn delta(text: &str) -> String {
    format!("{{\"event\":\"assistant_delta\",\"content\":\"{text}\"}}\n")
}
fn finished() -> String {
    "{\"event\":\"agent_finished\",\"answer\":\"done\"}\n".into()
}
fn failed() -> String {
    "{\"event\":\"turn_failed\",\"error\":\"provider down\"}\n".into()
}
fn aborted() -> String {
    "{\"event\":\"agent_aborted\",\"reason\":\"interrupted\"}\n".into()
}
fn command_error(message: &str) -> String {
    format!("{{\"event\":\"command_error\",\"error\":\"{message}\"}}\n")
}
fn snapshot(id: &str) -> String {
    format!("{{\"event\":\"jobs_snapshot\",\"request_id\":\"{id}\",\"jobs\":[]}}\n")
}
fn stop_result(id: &str) -> String {
    format!("{{\"event\":\"job_stop_result\",\"request_id\":\"{id}\",\"generation\":\"g\",\"job_id\":\"j\",\"outcome\":\"not_found\"}}\n")
}
fn prediction() -> String {
    "{\"event\":\"prediction_result\",\"source_sequence\":3,\"outcome\":{\"kind\":\"completed\",\"text\":\"next\",\"input_tokens\":1,\"output_tokens\":1}}\n".into()
}
fn context_yield() -> String {
    "{\"event\":\"context_yield\",\"to_sequence\":2,\"answer\":\"a\"}\n".into()
}
fn notice() -> String {
    "{\"event\":\"background_notice\",\"content\":\"a job finished\"}\n".into()
}
fn applied(kind: &str, id: Option<&str>) -> String {
    match id {
        Some(id) => format!("{{\"event\":\"steer_applied\",\"kind\":\"{kind}\",\"content\":\"x\",\"submission_id\":\"{id}\"}}\n"),
        None => format!("{{\"event\":\"steer_applied\",\"kind\":\"{kind}\",\"content\":\"x\"}}\n"),
    }
}
fn dropped(id: Option<&str>) -> String {
    match id {
        Some(id) => format!(
            "{{\"event\":\"steer_dropped\",\"content\":\"x\",\"submission_id\":\"{id}\"}}\n"
        ),
        None => "{\"event\":\"steer_dropped\",\"content\":\"x\"}\n".into(),
    }
}
fn goal_updated(goal: &str) -> String {
    format!("{{\"event\":\"goal_updated\",\"goal\":\"{goal}\"}}\n")
}
fn compaction_started() -> String {
    "{\"event\":\"compaction_started\",\"from_sequence\":0,\"to_sequence\":2}\n".into()
}
fn compaction_finished() -> String {
    "{\"event\":\"compaction_finished\",\"from_sequence\":0,\"to_sequence\":2,\"summary\":\"s\"}\n"
        .into()
}
fn compaction_failed(error: &str) -> String {
    format!("{{\"event\":\"compaction_failed\",\"error\":\"{error}\"}}\n")
}
fn asked(id: &str) -> String {
    format!("{{\"event\":\"approval_requested\",\"id\":\"{id}\",\"tool_name\":\"shell\",\"detail\":\"rm build/\",\"body\":null}}\n")
}
fn resolved(id: &str, outcome: &str) -> String {
    format!("{{\"event\":\"approval_resolved\",\"id\":\"{id}\",\"outcome\":\"{outcome}\"}}\n")
}
fn goal_continue(remaining: u32) -> String {
    format!("{{\"event\":\"goal_continue\",\"remaining\":{remaining}}}\n")
}

#[test]
fn the_kth_command_error_answers_the_kth_refused_line() {
    let c = run(&[
        raw("{\"command\":\"goal\",\"action\":\"set\",\"text\":\" \"}\n"),
        prompt("hi"),
        raw("{\"command\":\"nap\"}\n"),
        raw("\n"), // blank: skipped, owed nothing
        raw("{\"command\":\"steer\",\"kind\":\"command\",\"content\":[{\"type\":\"image\",\"media_type\":\"image/png\",\"data\":\"iVBORw0KGgo=\"}]}\n"),
        // Written at once by the reader, also in the middle of a turn.
        E(step(1), None, Some(2)),
        E(command_error("goal text must not be blank"), Some(1), None),
        E(command_error("unknown command: nap"), Some(3), None),
        E(finished(), None, Some(2)),
    ]);
    assert_eq!(
        owed(&c),
        (vec![5], vec![], vec![], vec![], vec![], None, vec![])
    );
    let mut c = c;
    let last = c.event(command_error("command steering does not accept images").as_bytes());
    assert_eq!(
        (last.answers, last.turn, last.violation),
        (Some(5), None, None)
    );
    assert_eq!(owed(&c), nothing());
}

#[test]
fn after_a_line_that_is_not_json_the_engine_reads_nothing_more() {
    let c = run(&[
        jobs("j1"),
        raw("{not json\n"),
        jobs("j2"),
        prompt("never read"),
        raw("{\"command\":\"nap\"}\n"),
        E(snapshot("j1"), Some(1), None),
        E(command_error("command stream: ..."), Some(2), None),
        V(snapshot("j2"), "jobs_snapshot answers no jobs_snapshot command: none unanswered with request_id \"j2\""),
        V(command_error("unknown command: nap"), "a command_error with no refused line left to answer"),
        V(step(1), "agent_step with no turn running (no prompt was sent)"),
    ]);
    assert_eq!(owed(&c), nothing());
}

#[test]
fn requests_are_answered_by_request_id_at_any_time() {
    let c = run(&[
        prompt("work"),
        jobs("j1"),
        job_stop("s1"),
        job_stop("s2"),
        E(step(1), None, Some(1)),
        // A reply in the middle of a turn belongs to no turn.
        E(snapshot("j1"), Some(2), None),
        E(delta("hel"), None, Some(1)),
        // Two requests answered out of order.
        E(stop_result("s2"), Some(4), None),
        E(stop_result("s1"), Some(3), None),
        E(finished(), None, Some(1)),
        V(
            stop_result("s1"),
            "job_stop_result answers no job_stop command: none unanswered with request_id \"s1\"",
        ),
        // A jobs_snapshot reply never answers a job_stop of the same id.
        jobs("s1"),
        job_stop("x"),
        V(
            stop_result("s1"),
            "job_stop_result answers no job_stop command: none unanswered with request_id \"s1\"",
        ),
    ]);
    assert_eq!(
        owed(&c),
        (vec![], vec![5, 6], vec![], vec![], vec![], None, vec![])
    );
}

#[test]
fn the_same_request_id_twice_is_answered_oldest_first() {
    let c = run(&[
        jobs("r"),
        jobs("r"),
        E(snapshot("r"), Some(1), None),
        E(snapshot("r"), Some(2), None),
        V(
            snapshot("r"),
            "jobs_snapshot answers no jobs_snapshot command: none unanswered with request_id \"r\"",
        ),
    ]);
    assert_eq!(owed(&c), nothing());
}

#[test]
fn steers_are_answered_by_submission_id_or_in_order() {
    let c = run(&[
        prompt("work"),
        steer("more"),
        steer_tagged("tagged", "s-1"),
        steer_command("ls"),
        E(step(1), None, Some(1)),
        // A tagged steer is answered by its tag, whatever the order.
        E(applied("prompt", Some("s-1")), Some(3), Some(1)),
        E(applied("prompt", None), Some(2), Some(1)),
        E(step(2), None, Some(1)),
        E(finished(), None, Some(1)),
        // The command steer, drained when the turn ends: no turn.
        E(applied("command", None), Some(4), None),
        V(
            applied("prompt", Some("s-1")),
            "steer_applied answers no steer: none unanswered with submission_id \"s-1\"",
        ),
        V(
            dropped(None),
            "steer_dropped answers no steer: none unanswered without a submission_id",
        ),
    ]);
    assert_eq!(owed(&c), nothing());
}

#[test]
fn an_untagged_reply_takes_the_oldest_untagged_steer_of_its_kind() {
    let c = run(&[
        prompt("work"),
        steer_command("ls"),
        steer_tagged("a", "t"),
        steer("b"),
        E(step(1), None, Some(1)),
        E(applied("prompt", None), Some(4), Some(1)),
        E(finished(), None, Some(1)),
        E(dropped(Some("t")), Some(3), None),
        E(applied("command", None), Some(2), None),
    ]);
    assert_eq!(owed(&c), nothing());
}

#[test]
fn a_steer_crossing_a_turns_end_is_dropped_and_belongs_to_no_turn() {
    let c = run(&[
        prompt("work"),
        E(step(1), None, Some(1)),
        E(finished(), None, Some(1)),
        steer_tagged("late", "s-9"),
        E(dropped(Some("s-9")), Some(2), None),
    ]);
    assert_eq!(owed(&c), nothing());
    // The same steer, when it lands before the terminal event.
    let c = run(&[
        prompt("work"),
        E(step(1), None, Some(1)),
        steer_tagged("late", "s-9"),
        E(applied("prompt", Some("s-9")), Some(2), Some(1)),
        E(finished(), None, Some(1)),
    ]);
    assert_eq!(owed(&c), nothing());
    // An applied prompt steer with no turn running fits no rule, and the
    // steer stays owed.
    let c = run(&[
        steer("idle"),
        V(
            applied("prompt", None),
            "steer_applied with no turn running (no prompt was sent)",
        ),
    ]);
    assert_eq!(
        owed(&c),
        (vec![], vec![], vec![1], vec![], vec![], None, vec![])
    );
}

#[test]
fn a_prompt_steer_applied_at_a_queued_prompts_first_step_starts_its_turn() {
    let c = run(&[
        compact(),
        prompt("next"),
        steer("for next"),
        E(compaction_started(), Some(1), None),
        E(compaction_finished(), Some(1), None),
        E(applied("prompt", None), Some(3), Some(2)),
        E(step(1), None, Some(2)),
        E(finished(), None, Some(2)),
    ]);
    assert_eq!(owed(&c), nothing());
}

#[test]
fn goal_updated_answers_the_oldest_goal_command() {
    let c = run(&[
        prompt("work"),
        goal("ship it"),
        goal_clear(),
        E(step(1), None, Some(1)),
        // Steered into the running turn, reported from inside it: no turn.
        E(goal_updated("ship it"), Some(2), None),
        E(finished(), None, Some(1)),
        E(
            "{\"event\":\"goal_updated\",\"goal\":null}\n".into(),
            Some(3),
            None,
        ),
        V(
            goal_updated("x"),
            "goal_updated with no goal command left to answer",
        ),
    ]);
    assert_eq!(owed(&c), nothing());
}

#[test]
fn a_compaction_queued_behind_a_turn_runs_before_the_prompts_behind_it() {
    let c = run(&[
        prompt("one"),
        compact(),
        prompt("three"),
        goal("g"),
        E(step(1), None, Some(1)),
        E(finished(), None, Some(1)),
        E(compaction_started(), Some(2), None),
        V(step(1), "agent_step while the compaction of command 2 runs"),
        E(compaction_finished(), Some(2), None),
        E(step(1), None, Some(3)),
        E(finished(), None, Some(3)),
        E(goal_updated("g"), Some(4), None),
    ]);
    assert_eq!(owed(&c), nothing());
}

#[test]
fn compaction_events_out_of_their_place_fit_no_rule() {
    let c = run(&[
        V(
            compaction_started(),
            "compaction_started with no compact command waiting",
        ),
        prompt("one"),
        compact(),
        V(
            compaction_started(),
            "compaction_started before the turn of command 1 ran",
        ),
        E(step(1), None, Some(1)),
        V(
            compaction_finished(),
            "compaction_finished while the turn of command 1 runs",
        ),
        E(finished(), None, Some(1)),
        E(compaction_started(), Some(2), None),
        V(
            compaction_started(),
            "compaction_started while the compaction of command 2 runs",
        ),
        // A compaction that fails at once writes no compaction_started.
        compact(),
        E(compaction_finished(), Some(2), None),
        E(compaction_failed("nothing to compact"), Some(3), None),
        V(
            compaction_failed("x"),
            "compaction_failed with no compact command waiting",
        ),
    ]);
    assert_eq!(owed(&c), nothing());
}

#[test]
fn a_cancelled_compaction_fails_in_answer_to_the_cancel() {
    let c = run(&[
        compact(),
        E(compaction_started(), Some(1), None),
        cancel(),
        E(compaction_failed("cancelled"), Some(2), None),
    ]);
    assert_eq!(owed(&c), nothing());
}

#[test]
fn a_compaction_with_no_events_ends_when_the_next_turn_speaks() {
    let c = run(&[
        prompt("one"),
        compact(),
        prompt("three"),
        E(finished(), None, Some(1)),
        E(step(1), None, Some(3)),
    ]);
    assert_eq!(
        owed(&c),
        (vec![], vec![], vec![], vec![], vec![], Some(3), vec![])
    );
}

#[test]
fn approval_resolved_answers_the_controllers_approval_and_belongs_to_the_asking_turn() {
    let c = run(&[
        prompt("work"),
        E(asked("a1"), None, Some(1)),
        E(asked("a2"), None, Some(1)),
        approval("a1"),
        E(resolved("a1", "allowed_once"), Some(2), Some(1)),
        // Settled without the controller (the turn was interrupted).
        E(resolved("a2", "cancelled"), None, Some(1)),
        V(
            resolved("a2", "cancelled"),
            "approval_resolved for \"a2\", which no unsettled approval_requested asked",
        ),
        E(finished(), None, Some(1)),
    ]);
    assert_eq!(owed(&c), nothing());
}

#[test]
fn an_approval_asked_and_not_answered_is_owed() {
    let c = run(&[
        prompt("work"),
        approval("nobody-asked"),
        E(asked("a1"), None, Some(1)),
        E(asked("a2"), None, Some(1)),
        approval("a2"),
    ]);
    assert_eq!(
        owed(&c),
        (vec![], vec![], vec![], vec![], vec![1], Some(1), vec![])
    );
    let c = run(&[V(
        asked("a1"),
        "approval_requested with no turn running (no prompt was sent)",
    )]);
    assert_eq!(owed(&c), nothing());
}

#[test]
fn a_turns_terminal_event_ends_it_and_agent_aborted_answers_the_cancel() {
    let c = run(&[
        prompt("one"),
        prompt("two"),
        prompt("three"),
        E(step(1), None, Some(1)),
        cancel(),
        E(aborted(), Some(4), Some(1)),
        E(failed(), None, Some(2)),
        E(step(1), None, Some(3)),
        // Aborted for a reason of its own: no cancel to answer.
        E(aborted(), None, Some(3)),
        V(
            finished(),
            "agent_finished with no turn running (the turn of command 3 ended at event 5)",
        ),
        V(
            aborted(),
            "agent_aborted with no turn running (the turn of command 3 ended at event 5)",
        ),
    ]);
    assert_eq!(owed(&c), nothing());
}

#[test]
fn a_cancel_sent_after_the_turn_finished_hits_nothing() {
    // The terminal event crossed the cancel: the cancel hits no work, and
    // the next prompt's turn does not answer it.
    let c = run(&[
        prompt("one"),
        E(step(1), None, Some(1)),
        E(finished(), None, Some(1)),
        cancel(),
        prompt("two"),
        E(step(1), None, Some(3)),
        E(aborted(), None, Some(3)),
    ]);
    assert_eq!(owed(&c), nothing());
}

#[test]
fn a_cancel_crossing_the_terminal_event_may_hit_the_queued_turn() {
    // The cancel meant for turn 1 reached the engine after that turn ended
    // and the queued prompt's turn began: it aborts turn 2.
    let c = run(&[
        prompt("one"),
        prompt("two"),
        E(step(1), None, Some(1)),
        cancel(),
        E(finished(), None, Some(1)),
        E(step(1), None, Some(2)),
        E(aborted(), Some(3), Some(2)),
    ]);
    assert_eq!(owed(&c), nothing());
    // Or it reached the engine before turn 2 began, and turn 2 ran on.
    let c = run(&[
        prompt("one"),
        prompt("two"),
        E(step(1), None, Some(1)),
        cancel(),
        E(finished(), None, Some(1)),
        E(step(1), None, Some(2)),
        E(finished(), None, Some(2)),
    ]);
    assert_eq!(owed(&c), nothing());
    // Two cancels for one turn: the second may hit the next one.
    let c = run(&[
        prompt("one"),
        prompt("two"),
        E(step(1), None, Some(1)),
        cancel(),
        cancel(),
        E(aborted(), Some(3), Some(1)),
        E(aborted(), Some(4), Some(2)),
    ]);
    assert_eq!(owed(&c), nothing());
}

#[test]
fn a_turn_event_with_no_turn_running_fits_no_rule() {
    let c = run(&[
        V(
            step(1),
            "agent_step with no turn running (no prompt was sent)",
        ),
        V(
            finished(),
            "agent_finished with no turn running (no prompt was sent)",
        ),
        prompt("one"),
        E(delta("a"), None, Some(1)),
        E(finished(), None, Some(1)),
        V(
            delta("late"),
            "assistant_delta with no turn running (the turn of command 1 ended at event 4)",
        ),
        compact(),
        E(compaction_finished(), Some(2), None),
        V(
            step(2),
            "agent_step with no turn running (the compaction of command 2 ended at event 6)",
        ),
    ]);
    assert_eq!(owed(&c), nothing());
}

#[test]
fn every_event_a_turn_writes_belongs_to_it() {
    let lines = [
        "{\"event\":\"agent_step\",\"step\":1}",
        "{\"event\":\"stream_retry\",\"attempt\":1,\"max_attempts\":3,\"reason\":\"x\"}",
        "{\"event\":\"assistant_delta\",\"content\":\"a\"}",
        "{\"event\":\"reasoning_delta\",\"content\":\"a\"}",
        "{\"event\":\"assistant_message\",\"content\":\"a\"}",
        "{\"event\":\"reasoning_message\",\"content\":\"a\"}",
        "{\"event\":\"usage\",\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":2,\"total_tokens\":3,\"prompt_cache_hit_tokens\":0,\"prompt_cache_miss_tokens\":1}}",
        "{\"event\":\"tool_result\",\"tool_call_id\":\"c\",\"tool_name\":\"t\",\"is_error\":false,\"content\":\"ok\",\"brief\":null}",
        "{\"event\":\"tool_call_decode_error\",\"tool_call_id\":\"c\",\"tool_name\":\"t\",\"error\":\"e\"}",
        "{\"event\":\"max_steps_exhausted\"}",
        "{\"event\":\"goal_blocked\",\"reason\":\"r\"}",
        "{\"event\":\"goal_unblocked\"}",
        "{\"event\":\"goal_check\",\"content\":\"c\"}",
        "{\"event\":\"goal_reminder\",\"content\":\"c\"}",
        "{\"event\":\"plan_reminder\",\"content\":\"c\"}",
        "{\"event\":\"subrun_started\",\"id\":\"s\",\"kind\":\"review\",\"label\":\"l\"}",
        "{\"event\":\"subrun_finished\",\"id\":\"s\",\"status\":\"completed\",\"steps\":1,\"prompt_tokens\":1,\"completion_tokens\":1}",
        "{\"event\":\"workflow_started\",\"id\":\"w\",\"journal\":\"j\",\"events\":\"e\",\"first_child\":1,\"child_count\":1}",
        "{\"event\":\"workflow_finished\",\"id\":\"w\"}",
        "{\"event\":\"auto_compaction_started\",\"from_sequence\":0,\"to_sequence\":1}",
        "{\"event\":\"auto_compaction_finished\",\"from_sequence\":0,\"to_sequence\":1,\"summary\":\"s\"}",
        "{\"event\":\"auto_compaction_failed\",\"error\":\"e\"}",
        "{\"event\":\"context_yield\",\"to_sequence\":1,\"answer\":\"a\"}",
    ];
    let mut steps = vec![prompt("one")];
    steps.extend(
        lines
            .iter()
            .map(|line| E((*line).to_owned(), None, Some(1))),
    );
    steps.push(E(finished(), None, Some(1)));
    let mut c = run(&steps);
    // And none of them runs without a turn.
    for line in lines {
        let got = c.event(line.as_bytes());
        assert_eq!(got.turn, None, "{line}");
        assert_eq!(
            got.violation,
            Some(format!(
                "{} with no turn running (the turn of command 1 ended at event {})",
                name(line),
                lines.len() + 1
            )),
            "{line}"
        );
    }
}

#[test]
fn events_of_the_session_answer_nothing_and_belong_to_no_turn() {
    let c = run(&[
        E("{\"event\":\"session_started\",\"session\":\"s\",\"session_root\":\"r\",\"workspace_root\":null}".into(), None, None),
        E("{\"event\":\"mcp_tools_registered\",\"servers\":1,\"tools\":1,\"names\":[\"t\"]}".into(), None, None),
        prompt("one"),
        E(step(1), None, Some(1)),
        // Mid-turn, still the session's.
        E("{\"event\":\"background_notice\",\"content\":\"job done\"}".into(), None, None),
        E("{\"event\":\"session_error\",\"error\":\"disk full\"}".into(), None, None),
        E(finished(), None, Some(1)),
        E("{\"event\":\"goal_budget_exhausted\",\"turns\":20}".into(), None, None),
        Stray("engine v1.2 starting"),
        Stray(""),
        Stray("{\"event\":\"nap\"}"),
        V(step(2), "agent_step with no turn running (the turn of command 1 ended at event 6)"),
    ]);
    assert_eq!(owed(&c), nothing());
}

#[test]
fn an_auto_goals_turns_belong_to_the_goal_command() {
    let c = run(&[
        goal_auto("ship it"),
        E(goal_updated("ship it"), Some(1), None),
        prompt("start"),
        E(step(1), None, Some(2)),
        E(finished(), None, Some(2)),
        // The engine starts a turn no prompt asked for.
        E(goal_continue(19), None, None),
        E(step(1), None, Some(1)),
        E(finished(), None, Some(1)),
        E(goal_continue(18), None, None),
        prompt("queued behind the auto turn"),
        E(step(1), None, Some(1)),
        cancel(),
        E(aborted(), Some(4), Some(1)),
        E(step(1), None, Some(3)),
        E(finished(), None, Some(3)),
    ]);
    assert_eq!(owed(&c), nothing());
}

#[test]
fn a_cancel_crossing_the_auto_turns_start_aborts_it() {
    let c = run(&[
        goal_auto("ship it"),
        prompt("start"),
        E(goal_updated("ship it"), Some(1), None),
        E(finished(), None, Some(2)),
        cancel(),
        E(goal_continue(19), None, None),
        E(aborted(), Some(3), Some(1)),
    ]);
    assert_eq!(owed(&c), nothing());
}

/// The engine arms an auto goal when it applies it (its `goal_updated`),
/// and disarms it when it reads a later goal command: a goal command the
/// controller sends as the turn ends may cross the `goal_continue` of the
/// goal it replaces.
#[test]
fn a_goal_command_crossing_goal_continue_leaves_the_turn_to_the_armed_goal() {
    let c = run(&[
        goal_auto("ship it"),
        E(goal_updated("ship it"), Some(1), None),
        prompt("start"),
        E(step(1), None, Some(2)),
        E(finished(), None, Some(2)),
        goal_clear(),
        E(goal_continue(19), None, None),
        E(step(1), None, Some(1)),
        E(finished(), None, Some(1)),
        E(
            "{\"event\":\"goal_updated\",\"goal\":null}\n".to_owned(),
            Some(3),
            None,
        ),
        V(
            goal_continue(18),
            "goal_continue with no goal command that set auto",
        ),
    ]);
    assert_eq!(owed(&c), nothing());
}

#[test]
fn goal_continue_out_of_its_place_fits_no_rule() {
    let c = run(&[
        V(
            goal_continue(19),
            "goal_continue with no goal command that set auto",
        ),
        goal_auto("a"),
        goal("b"), // replaces the auto goal
        prompt("p"),
        E(goal_updated("a"), Some(1), None),
        E(goal_updated("b"), Some(2), None),
        E(step(1), None, Some(3)),
        V(
            goal_continue(19),
            "goal_continue while the turn of command 3 runs",
        ),
        E(finished(), None, Some(3)),
        V(
            goal_continue(19),
            "goal_continue with no goal command that set auto",
        ),
        goal_auto("c"),
        goal_clear(),
        V(
            goal_continue(19),
            "goal_continue with no goal command that set auto",
        ),
    ]);
    assert_eq!(
        owed(&c),
        (vec![], vec![], vec![], vec![4, 5], vec![], None, vec![])
    );
}

#[test]
fn owed_lists_everything_unanswered_oldest_first() {
    let c = run(&[
        prompt("one"),
        raw("{\"command\":\"nap\"}"),
        jobs("j"),
        steer_tagged("s", "t"),
        goal("g"),
        compact(),
        prompt("two"),
        E(step(1), None, Some(1)),
        E(asked("a"), None, Some(1)),
    ]);
    assert_eq!(
        owed(&c),
        (
            vec![2],
            vec![3],
            vec![4],
            vec![5],
            vec![2],
            Some(1),
            vec![6, 7]
        )
    );
    assert!(!c.owed().is_empty());
    // Kind by kind; the question (an event line) is not a command.
    assert_eq!(
        c.owed().commands().collect::<Vec<_>>(),
        [2, 3, 4, 5, 1, 6, 7]
    );
    assert!(Conversation::new().owed().is_empty());
}

#[test]
fn lines_end_with_or_without_lf_and_crlf_reads_as_lf() {
    let mut c = Conversation::new();
    assert_eq!(c.command(b"{\"command\":\"prompt\",\"content\":\"x\"}"), 1);
    assert_eq!(
        c.command(b"{\"command\":\"jobs_snapshot\",\"request_id\":\"j\"}\r\n"),
        2
    );
    let a = c.event(b"{\"event\":\"agent_step\",\"step\":1}\r\n");
    assert_eq!(
        (a.n, a.event, a.answers, a.turn, a.violation),
        (1, Some("agent_step"), None, Some(1), None)
    );
    let a = c.event(b"{\"event\":\"jobs_snapshot\",\"request_id\":\"j\",\"jobs\":[]}");
    assert_eq!(
        (a.n, a.event, a.answers, a.turn, a.violation),
        (2, Some("jobs_snapshot"), Some(2), None, None)
    );
}

/// An `approval` for no open question is one the engine ignores: its
/// `approval_resolved` (if a stray one came) answers nothing, and a stream
/// of them keeps nothing (the model's memory stays bounded).
#[test]
fn an_approval_for_no_open_question_is_kept_nowhere() {
    let mut model = Conversation::new();
    for _ in 0..1000 {
        model.command(br#"{"command":"approval","id":"nope","allow":true}"#);
    }
    model.command(br#"{"command":"prompt","content":"go"}"#);
    model.event(br#"{"event":"agent_step","step":1}"#);
    model.event(
        br#"{"event":"approval_requested","id":"nope","tool_name":"t","detail":"d","body":null}"#,
    );
    // The answers sent before the question answer nothing; this one does.
    let n = model.command(br#"{"command":"approval","id":"nope","allow":false}"#);
    model.command(br#"{"command":"approval","id":"nope","allow":true}"#);
    let resolved =
        model.event(br#"{"event":"approval_resolved","id":"nope","outcome":"rejected"}"#);
    assert_eq!(
        (resolved.answers, resolved.turn, resolved.violation),
        (Some(n), Some(1001), None)
    );
    assert_eq!(
        format!("{:?}", model).matches("nope").count(),
        0,
        "{model:?}"
    );
}

/// A line that names an event but is not one is attributed by what can
/// still be read of it: an unreadable reply still answers its request (so
/// a controller's call fails with it rather than waiting on), an
/// unreadable terminal event still ends its turn; one without the id that
/// says what it answers fits no rule; a line that names no event is stray.
#[test]
fn an_unreadable_event_is_attributed_by_what_can_be_read_of_it() {
    let mut conversation = Conversation::new();
    conversation.command(br#"{"command":"prompt","content":"hi"}"#);
    conversation.command(br#"{"command":"jobs_snapshot","request_id":"j1"}"#);
    conversation.command(br#"{"command":"steer","content":"more","submission_id":"s1"}"#);
    // (the line, its unreadable name, answers, turn, violation)
    type Want = (
        Option<&'static str>,
        Option<u64>,
        Option<u64>,
        Option<&'static str>,
    );
    let table: &[(&str, Want)] = &[
        (
            r#"{"event":"agent_step","step":"one"}"#,
            (Some("agent_step"), None, Some(1), None),
        ),
        (
            r#"{"event":"jobs_snapshot","request_id":"j1"}"#,
            (Some("jobs_snapshot"), Some(2), None, None),
        ),
        (
            r#"{"event":"jobs_snapshot","jobs":[]}"#,
            (
                Some("jobs_snapshot"),
                None,
                None,
                Some("jobs_snapshot without the id that says what it answers"),
            ),
        ),
        (
            r#"{"event":"steer_applied","content":7,"submission_id":"s1"}"#,
            (Some("steer_applied"), Some(3), Some(1), None),
        ),
        (
            r#"{"event":"agent_finished"}"#,
            (Some("agent_finished"), None, Some(1), None),
        ),
        (
            r#"{"event":"a_newer_event","x":1}"#,
            (Some("a_newer_event"), None, None, None),
        ),
        (r#"{"x":1}"#, (None, None, None, None)),
        ("[1]", (None, None, None, None)),
        ("not json", (None, None, None, None)),
    ];
    for (n, (line, want)) in table.iter().enumerate() {
        let got = conversation.event(line.as_bytes());
        assert_eq!(got.n, n as u64 + 1, "{line}");
        assert_eq!(got.event, None, "{line}");
        let got = (
            got.unreadable.as_deref(),
            got.answers,
            got.turn,
            got.violation.as_deref(),
        );
        let want = (want.0, want.1, want.2, want.3);
        assert_eq!(got, want, "{line}");
    }
    assert!(conversation.owed().is_empty(), "{:?}", conversation.owed());
}

/// The engine's own prediction (loop.mbt @ fdf10827): after a turn that
/// ended `agent_finished`, once, answering no command and belonging to
/// the turn it follows; never inside a turn, after a turn that ended
/// otherwise or yielded its context, after a compaction, or once an event
/// shows the engine read a command that cancels it.
#[test]
fn the_engines_own_prediction_follows_a_finished_turn_once() {
    let c = run(&[
        V(prediction(), "prediction_result before any turn finished"),
        prompt("one"),
        E(step(1), None, Some(1)),
        V(
            prediction(),
            "prediction_result while the turn of command 1 runs: the engine predicts only between turns",
        ),
        E(finished(), None, Some(1)),
        // The engine's own, between turns: a background notice changes nothing.
        E(notice(), None, None),
        E(prediction(), None, Some(1)),
        V(
            prediction(),
            "prediction_result where none may come: the turn of command 1 already had its prediction (event 6)",
        ),
        prompt("two"),
        E(step(1), None, Some(2)),
        E(failed(), None, Some(2)),
        V(
            prediction(),
            "prediction_result where none may come: the turn of command 2 ended with turn_failed (event 9), not agent_finished",
        ),
        prompt("three"),
        cancel(),
        E(step(1), None, Some(3)),
        E(aborted(), Some(4), Some(3)),
        V(
            prediction(),
            "prediction_result where none may come: the turn of command 3 ended with agent_aborted (event 12), not agent_finished",
        ),
        prompt("four"),
        E(step(1), None, Some(5)),
        E(context_yield(), None, Some(5)),
        E(finished(), None, Some(5)),
        V(
            prediction(),
            "prediction_result where none may come: the turn of command 5 ended by yielding its context",
        ),
        compact(),
        E(compaction_started(), Some(6), None),
        E(compaction_finished(), Some(6), None),
        V(
            prediction(),
            "prediction_result where none may come: the last work was the compaction of command 6, which no prediction follows",
        ),
    ]);
    assert_eq!(owed(&c), nothing());
}

/// Where the pipes race, the prediction is let be: a command sent before
/// the turn's end, or not yet shown read, may cross it. Once an event
/// shows that the engine read a command sent after the end, or the next
/// work began, none may come.
#[test]
fn a_prediction_may_cross_what_the_engine_has_not_shown_it_read() {
    let c = run(&[
        prompt("one"),
        E(step(1), None, Some(1)),
        // Queued before the end: the engine may not have read it yet.
        prompt("two"),
        steer("late"),
        E(finished(), None, Some(1)),
        // The steer sent before the end, drained at it.
        E(dropped(None), Some(3), None),
        E(prediction(), None, Some(1)),
        E(step(1), None, Some(2)),
        E(finished(), None, Some(2)),
        // A steer sent after the end, dropped: read after the prediction
        // could start, so it was cancelled.
        steer("after"),
        E(dropped(None), Some(4), None),
        V(
            prediction(),
            "prediction_result where none may come: the engine read command 4 (its steer_dropped is event 7) after the turn of command 2 ended, which cancels the prediction",
        ),
        prompt("three"),
        E(step(1), None, Some(5)),
        E(finished(), None, Some(5)),
        goal("g"),
        E(goal_updated("g"), Some(6), None),
        V(
            prediction(),
            "prediction_result where none may come: the engine read command 6 (its goal_updated is event 11) after the turn of command 5 ended, which cancels the prediction",
        ),
        prompt("four"),
        E(step(1), None, Some(7)),
        E(finished(), None, Some(7)),
        prompt("five"),
        E(step(1), None, Some(8)),
        V(
            prediction(),
            "prediction_result while the turn of command 8 runs: the engine predicts only between turns",
        ),
        E(finished(), None, Some(8)),
        // An idle cancel, a request and an approval show nothing read.
        cancel(),
        jobs("j"),
        E(snapshot("j"), Some(10), None),
        E(prediction(), None, Some(8)),
    ]);
    assert_eq!(owed(&c), nothing());
}

/// A prediction whose turn's end was followed by the start of the next
/// work: the next turn's first event, or a compaction's.
#[test]
fn the_next_works_first_event_ends_the_chance_of_a_prediction() {
    run(&[
        prompt("one"),
        E(step(1), None, Some(1)),
        E(finished(), None, Some(1)),
        compact(),
        E(compaction_started(), Some(2), None),
        V(
            prediction(),
            "prediction_result while the compaction of command 2 runs: the engine predicts only between turns",
        ),
        E(compaction_finished(), Some(2), None),
        prompt("two"),
        E(step(1), None, Some(3)),
        E(finished(), None, Some(3)),
        prompt("three"),
        E(step(1), None, Some(4)),
        E(finished(), None, Some(4)),
        E(prediction(), None, Some(4)),
        V(
            prediction(),
            "prediction_result where none may come: the turn of command 4 already had its prediction (event 10)",
        ),
    ]);
}
