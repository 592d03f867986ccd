//! `v2::serve::EngineLoop`: each promise of upstream's serve loop, with a
//! turn that really runs in the background while commands arrive. Every
//! session is also attributed by a `Conversation`, fed the lines in the
//! order they cross (as the tap logs them): no event of these tests may
//! fit no rule, and at the end nothing may be owed.

#[path = "support/attributed.rs"]
mod attributed;
#[path = "support/pipe.rs"]
mod pipe;

use attributed::Attributed;
use serve_command::v2::serve::{
    Compacted, Engine, EngineLoop, Prediction, Question, RunningCompaction, RunningTurn, StepInput,
    WorkError,
};
use serve_command::v2::{Content, Event, JobRecord, JobState, JobStopOutcome, PredictionOutcome};
use std::io::{self, BufRead, BufReader, Write};
use std::sync::mpsc::{self, Receiver, Sender, TryRecvError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(20);

/// A turn scripted by its prompt's words, each waiting for the test's go
/// where it says `wait`:
/// - `wait`: block until the test releases one gate;
/// - `nap`: sleep a millisecond;
/// - `delta:X`: write `assistant_delta` X;
/// - `steers`: a step boundary (take the steers; the prompt ones are
///   written back as deltas `+X`);
/// - `ask`: ask approval; the decision is written as a delta;
/// - `fail`, `panic`: end with an error, or panic;
/// - `until-cancel`: wait for the cancel, and stop;
/// - `own-end`: write `agent_finished` itself;
/// - `yield`: write `context_yield`;
/// - `predict:now`, `predict:gate`, `predict:store-fails`, `predict:skip`:
///   after this turn, if the loop asks, predict from the count of turns
///   that asked so far: at once; once the test's go comes (or the
///   prediction is cancelled), `completed` all the same; `failed` with a
///   storage error; or `skipped`.
///
/// It answers `done`.
/// With no `predict:` word the turn is followed by no prediction.
struct Scripted {
    gate: Mutex<Receiver<()>>,
    /// What `continue_goal` answers, in turn (then `None`).
    continues: Mutex<Vec<Option<Content>>>,
    goals_judged: Mutex<Vec<String>>,
    /// The last turn's `predict:` word, and how many turns had one.
    predicting: Mutex<(Option<String>, i32)>,
}

impl Engine for Scripted {
    fn turn(&self, turn: &mut RunningTurn<'_>) -> Result<String, WorkError> {
        let script = turn.content().to_text();
        self.predicting.lock().unwrap().0 = script
            .split_whitespace()
            .find_map(|w| w.strip_prefix("predict:"))
            .map(str::to_owned);
        turn.emit(&Event::agent_step(1))?;
        for word in script.split_whitespace() {
            match word {
                "yield" => turn.emit(&Event::context_yield(3, "yielded"))?,
                "wait" => {
                    let _ = self.gate.lock().unwrap().recv_timeout(WAIT);
                }
                "steers" => {
                    for input in turn.steers()? {
                        let shown = match input {
                            StepInput::Prompt(c) => format!("+{}", c.to_text()),
                            StepInput::Command(c) => format!("!{}", c.to_text()),
                            StepInput::Goal(g) => format!("goal {g:?}"),
                            _ => "?".to_owned(),
                        };
                        turn.emit(&Event::assistant_delta(shown))?;
                    }
                }
                "ask" => {
                    let decision = turn.ask(Question::new("shell", "run it").body("ls"))?;
                    turn.emit(&Event::assistant_delta(format!("{decision:?}")))?;
                }
                "fail" => return Err("the model said no".into()),
                "panic" => panic!("a bug in the turn"),
                "nap" => std::thread::sleep(Duration::from_millis(1)),
                "until-cancel" => {
                    while !turn.wait_cancelled(WAIT) {}
                    return Ok("stopped".to_owned());
                }
                "own-end" => turn.emit(&Event::agent_finished("mine"))?,
                delta => {
                    if let Some(text) = delta.strip_prefix("delta:") {
                        turn.emit(&Event::assistant_delta(text))?;
                    }
                }
            }
        }
        Ok("done".to_owned())
    }

    fn compact(&self, compaction: &RunningCompaction<'_>) -> Result<Compacted, WorkError> {
        compaction.started(1, 4)?;
        // Until the test's go, or the cancel.
        while !compaction.wait_cancelled(Duration::from_millis(1)) {
            if !matches!(
                self.gate.lock().unwrap().try_recv(),
                Err(TryRecvError::Empty)
            ) {
                break;
            }
        }
        Ok(Compacted::new(1, 4, "summary"))
    }

    fn prediction_source(&self) -> Option<i32> {
        let mut predicting = self.predicting.lock().unwrap();
        predicting.0.as_ref()?;
        predicting.1 += 1;
        Some(predicting.1)
    }

    fn predict(&self, prediction: &Prediction) -> PredictionOutcome {
        let mode = self.predicting.lock().unwrap().0.clone();
        let completed = PredictionOutcome::Completed {
            text: Some(format!("next {}", prediction.source_sequence())),
            input_tokens: 3,
            output_tokens: 1,
        };
        match mode.as_deref() {
            Some("gate") => {
                // Completed even when cancelled: the loop must drop it.
                while !prediction.is_cancelled()
                    && matches!(
                        self.gate.lock().unwrap().try_recv(),
                        Err(TryRecvError::Empty)
                    )
                {
                    std::thread::sleep(Duration::from_millis(1));
                }
                completed
            }
            Some("store-fails") => {
                PredictionOutcome::Failed("prediction storage: disk full".into())
            }
            Some("skip") => PredictionOutcome::Skipped,
            _ => completed,
        }
    }

    fn continue_goal(&self, goal: &str) -> Option<Content> {
        self.goals_judged.lock().unwrap().push(goal.to_owned());
        let mut continues = self.continues.lock().unwrap();
        if continues.is_empty() {
            None
        } else {
            continues.remove(0)
        }
    }
}

/// The loop in a thread over in-memory pipes, and the conversation model
/// fed what crosses.
struct Session {
    stdin: Option<pipe::PipeWriter>,
    events: Receiver<String>,
    model: Attributed,
    gate: Sender<()>,
    judged: Arc<Scripted>,
    engine: Option<JoinHandle<io::Result<Option<String>>>>,
}

impl Session {
    fn start() -> Session {
        Session::with_continues(Vec::new())
    }

    fn with_continues(continues: Vec<Option<Content>>) -> Session {
        let (gate, gated) = mpsc::channel();
        let engine = Arc::new(Scripted {
            gate: Mutex::new(gated),
            continues: Mutex::new(continues),
            goals_judged: Mutex::new(Vec::new()),
            predicting: Mutex::new((None, 0)),
        });
        let (commands_in, stdin) = pipe::pipe();
        let (events_in, events_out) = pipe::pipe();
        let shared = Arc::clone(&engine);
        let handle = std::thread::spawn(move || {
            EngineLoop::new(shared)
                .serve(BufReader::new(commands_in), events_out)
                .map(|stopped| stopped.map(|e| e.to_string()))
        });
        let model = Attributed::default();
        let (tx, events) = mpsc::channel();
        let reader_model = model.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(events_in).lines() {
                let line = line.unwrap();
                reader_model.event(&line);
                let _ = tx.send(line);
            }
        });
        Session {
            stdin: Some(stdin),
            events,
            model,
            gate,
            judged: engine,
            engine: Some(handle),
        }
    }

    /// Writes a command line; the model sees it first (the engine cannot
    /// answer what it has not read).
    fn send(&mut self, line: &str) {
        let line = format!("{line}\n");
        self.model.command(&line);
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).unwrap();
    }

    /// Returns once the loop has taken every line sent so far: it answers
    /// `jobs_snapshot` itself, in wire order.
    #[track_caller]
    fn sync(&mut self) {
        self.send(r#"{"command":"jobs_snapshot","request_id":"sync"}"#);
        self.expect(&[r#"{"event":"jobs_snapshot","request_id":"sync","jobs":[]}"#]);
    }

    /// From now on no `wait` waits.
    fn ungate(&mut self) {
        self.gate = mpsc::channel().0;
    }

    /// Releases one `wait` of the turn (or the compaction).
    fn go(&self) {
        self.gate.send(()).unwrap();
    }

    /// The next event lines are exactly `lines`.
    #[track_caller]
    fn expect(&self, lines: &[&str]) {
        for (i, want) in lines.iter().enumerate() {
            let got = self
                .events
                .recv_timeout(WAIT)
                .unwrap_or_else(|_| panic!("line {i} never came: {want}"));
            assert_eq!(got, *want, "line {i}");
        }
    }

    /// Closes the input; the rest of the lines, and what the loop returned.
    #[track_caller]
    fn close(mut self) -> (Vec<String>, Option<String>) {
        drop(self.stdin.take());
        let stopped = self.engine.take().unwrap().join().unwrap().unwrap();
        let mut rest = Vec::new();
        while let Ok(line) = self.events.recv_timeout(WAIT) {
            rest.push(line);
        }
        self.model.assert_settled();
        (rest, stopped)
    }

    /// Nothing more comes within a short while.
    #[track_caller]
    fn quiet(&self) {
        if let Ok(line) = self.events.recv_timeout(Duration::from_millis(100)) {
            panic!("unexpected: {line}");
        }
    }
}

fn prompt(script: &str) -> String {
    format!("{{\"command\":\"prompt\",\"content\":\"{script}\"}}")
}

const STEP1: &str = r#"{"event":"agent_step","step":1}"#;
const DONE: &str = r#"{"event":"agent_finished","answer":"done"}"#;
const ABORTED: &str = r#"{"event":"agent_aborted","reason":"interrupted"}"#;

fn delta(text: &str) -> String {
    format!("{{\"event\":\"assistant_delta\",\"content\":\"{text}\"}}")
}

#[test]
fn requests_and_refused_lines_are_answered_while_a_turn_streams() {
    let mut s = Session::start();
    s.send(&prompt("delta:a wait delta:b wait"));
    s.expect(&[STEP1, &delta("a")]);
    s.send(r#"{"command":"jobs_snapshot","request_id":"j1"}"#);
    s.expect(&[r#"{"event":"jobs_snapshot","request_id":"j1","jobs":[]}"#]);
    s.send(r#"{"command":"nap"}"#);
    s.expect(&[r#"{"event":"command_error","error":"unknown command: nap"}"#]);
    s.send(r#"{"command":"goal","action":"set","text":"  "}"#);
    s.expect(&[r#"{"event":"command_error","error":"goal text must not be blank"}"#]);
    s.send(r#"{"command":"job_stop","request_id":"j2","generation":"g","job_id":"x"}"#);
    s.expect(&[r#"{"event":"job_stop_result","request_id":"j2","generation":"g","job_id":"x","outcome":"not_found"}"#]);
    // No client asks for a prediction since fdf10827.
    s.send(r#"{"command":"predict","request_id":"p1","source_sequence":1}"#);
    s.expect(&[r#"{"event":"command_error","error":"unknown command: predict"}"#]);
    s.go();
    s.expect(&[&delta("b")]);
    s.go();
    s.expect(&[DONE]);
    assert_eq!(s.close(), (vec![], None));
}

#[test]
fn one_turn_at_a_time_later_prompts_in_wire_order() {
    let mut s = Session::start();
    s.send(&prompt("wait delta:1"));
    s.send(&prompt("delta:2"));
    s.send(&prompt("delta:3"));
    s.expect(&[STEP1]);
    s.quiet();
    s.go();
    s.expect(&[
        &delta("1"),
        DONE,
        STEP1,
        &delta("2"),
        DONE,
        STEP1,
        &delta("3"),
        DONE,
    ]);
    assert_eq!(s.close(), (vec![], None));
}

#[test]
fn a_prompt_steer_lands_at_the_next_step_boundary_of_the_running_turn() {
    let mut s = Session::start();
    s.send(&prompt("wait steers wait steers"));
    s.expect(&[STEP1]);
    s.send(r#"{"command":"steer","content":"faster","submission_id":"s1"}"#);
    s.send(r#"{"command":"steer","kind":"command","content":"/diff"}"#);
    s.send(r#"{"command":"goal","action":"set","text":"ship"}"#);
    s.sync();
    s.go();
    s.expect(&[
        r#"{"event":"steer_applied","kind":"prompt","content":"faster","submission_id":"s1"}"#,
        r#"{"event":"steer_applied","kind":"command","content":"/diff"}"#,
        r#"{"event":"goal_updated","goal":"ship"}"#,
        &delta("+faster"),
        &delta("!/diff"),
        &delta("goal Some(\\\"ship\\\")"),
    ]);
    s.go();
    s.expect(&[DONE]);
    assert_eq!(s.close(), (vec![], None));
}

#[test]
fn a_steer_sent_for_a_queued_prompt_lands_at_its_first_step() {
    let mut s = Session::start();
    s.send(r#"{"command":"compact"}"#);
    s.expect(&[r#"{"event":"compaction_started","from_sequence":1,"to_sequence":4}"#]);
    // No turn runs, but a prompt is queued: the steer waits for its turn.
    s.send(&prompt("steers"));
    s.send(r#"{"command":"steer","content":"for it"}"#);
    s.sync();
    s.go();
    s.expect(&[
        r#"{"event":"compaction_finished","from_sequence":1,"to_sequence":4,"summary":"summary"}"#,
        STEP1,
        r#"{"event":"steer_applied","kind":"prompt","content":"for it"}"#,
        &delta("+for it"),
        DONE,
    ]);
    assert_eq!(s.close(), (vec![], None));
}

#[test]
fn a_steer_sent_while_one_turn_runs_and_another_waits_is_dropped_at_the_first_ones_end() {
    let mut s = Session::start();
    s.send(&prompt("wait"));
    s.send(&prompt("steers"));
    s.send(r#"{"command":"steer","content":"for two"}"#);
    s.expect(&[STEP1]);
    s.sync();
    // loop.mbt's TurnDone drains every queued steer before the next turn.
    s.go();
    s.expect(&[
        DONE,
        r#"{"event":"steer_dropped","content":"for two"}"#,
        STEP1,
        DONE,
    ]);
    assert_eq!(s.close(), (vec![], None));
}

#[test]
fn a_steer_crossing_the_turns_end_is_dropped_never_a_prompt() {
    let mut s = Session::start();
    s.send(&prompt("wait"));
    s.expect(&[STEP1]);
    // Sent while the turn runs, which ends without a step boundary: dropped
    // at its end, for the controller to resend.
    s.send(r#"{"command":"steer","content":"late","submission_id":"s1"}"#);
    s.send(r#"{"command":"steer","kind":"command","content":"ls"}"#);
    s.sync();
    s.go();
    s.expect(&[
        DONE,
        r#"{"event":"steer_dropped","content":"late","submission_id":"s1"}"#,
        r#"{"event":"steer_applied","kind":"command","content":"ls"}"#,
    ]);
    // Sent after the end crossed it: no turn to land in, dropped at once.
    s.send(r#"{"command":"steer","content":"later"}"#);
    s.expect(&[r#"{"event":"steer_dropped","content":"later"}"#]);
    s.quiet();
    assert_eq!(s.close(), (vec![], None));
}

#[test]
fn cancel_interrupts_the_running_turn_not_the_queue() {
    let mut s = Session::start();
    s.send(&prompt("delta:a until-cancel"));
    s.send(&prompt("delta:next"));
    s.expect(&[STEP1, &delta("a")]);
    s.send(r#"{"command":"cancel"}"#);
    s.expect(&[ABORTED, STEP1, &delta("next"), DONE]);
    // Idle: a cancel hits nothing and writes nothing.
    s.send(r#"{"command":"cancel"}"#);
    s.quiet();
    assert_eq!(s.close(), (vec![], None));
}

#[test]
fn a_cancel_crossing_the_turns_terminal_event_hits_nothing() {
    let mut s = Session::start();
    s.send(&prompt("wait"));
    s.expect(&[STEP1]);
    s.go();
    s.expect(&[DONE]);
    // The controller cancels what it believes still runs.
    s.send(r#"{"command":"cancel"}"#);
    s.send(&prompt("delta:x"));
    s.expect(&[STEP1, &delta("x"), DONE]);
    assert_eq!(s.close(), (vec![], None));
}

#[test]
fn an_approval_blocks_its_turn_alone_until_answered() {
    let mut s = Session::start();
    s.send(&prompt("ask ask"));
    s.expect(&[
        STEP1,
        r#"{"event":"approval_requested","id":"approval-1","tool_name":"shell","detail":"run it","body":"ls"}"#,
    ]);
    // The loop answers meanwhile; another question's id settles nothing.
    s.send(r#"{"command":"jobs_snapshot","request_id":"j"}"#);
    s.expect(&[r#"{"event":"jobs_snapshot","request_id":"j","jobs":[]}"#]);
    s.send(r#"{"command":"approval","id":"approval-9","allow":true}"#);
    s.quiet();
    s.send(r#"{"command":"approval","id":"approval-1","allow":true}"#);
    s.expect(&[
        r#"{"event":"approval_resolved","id":"approval-1","outcome":"allowed_once"}"#,
        &delta("Allowed"),
        r#"{"event":"approval_requested","id":"approval-2","tool_name":"shell","detail":"run it","body":"ls"}"#,
    ]);
    s.send(r#"{"command":"approval","id":"approval-2","allow":false}"#);
    s.expect(&[
        r#"{"event":"approval_resolved","id":"approval-2","outcome":"rejected"}"#,
        &delta("Rejected"),
        DONE,
    ]);
    assert_eq!(s.close(), (vec![], None));
}

#[test]
fn an_approval_answered_after_the_turn_was_cancelled_settles_nothing() {
    let mut s = Session::start();
    s.send(&prompt("ask delta:after"));
    s.expect(&[
        STEP1,
        r#"{"event":"approval_requested","id":"approval-1","tool_name":"shell","detail":"run it","body":"ls"}"#,
    ]);
    s.send(r#"{"command":"cancel"}"#);
    s.expect(&[
        r#"{"event":"approval_resolved","id":"approval-1","outcome":"cancelled"}"#,
        &delta("Cancelled"),
        r#"{"event":"assistant_delta","content":"after"}"#,
        ABORTED,
    ]);
    s.send(r#"{"command":"approval","id":"approval-1","allow":true}"#);
    s.quiet();
    assert_eq!(s.close(), (vec![], None));
}

#[test]
fn the_end_of_input_withdraws_a_waiting_question_and_runs_what_was_queued() {
    let mut s = Session::start();
    s.send(&prompt("ask delta:on"));
    s.send(&prompt("ask"));
    s.send(r#"{"command":"compact"}"#);
    s.expect(&[
        STEP1,
        r#"{"event":"approval_requested","id":"approval-1","tool_name":"shell","detail":"run it","body":"ls"}"#,
    ]);
    s.go(); // for the compaction, later
    let (rest, stopped) = s.close();
    assert_eq!(
        rest,
        [
            r#"{"event":"approval_resolved","id":"approval-1","outcome":"cancelled"}"#,
            &delta("Withdrawn"),
            &delta("on"),
            DONE,
            STEP1,
            r#"{"event":"approval_requested","id":"approval-2","tool_name":"shell","detail":"run it","body":"ls"}"#,
            r#"{"event":"approval_resolved","id":"approval-2","outcome":"cancelled"}"#,
            &delta("Withdrawn"),
            DONE,
            r#"{"event":"compaction_started","from_sequence":1,"to_sequence":4}"#,
            r#"{"event":"compaction_finished","from_sequence":1,"to_sequence":4,"summary":"summary"}"#,
        ]
    );
    assert_eq!(stopped, None);
}

#[test]
fn a_turn_that_fails_panics_or_writes_nothing_still_ends_and_the_loop_goes_on() {
    let mut s = Session::start();
    s.send(&prompt("fail"));
    s.expect(&[
        STEP1,
        r#"{"event":"turn_failed","error":"the model said no"}"#,
    ]);
    s.send(&prompt("panic"));
    s.expect(&[
        STEP1,
        r#"{"event":"turn_failed","error":"the turn panicked: a bug in the turn"}"#,
    ]);
    s.send(&prompt("own-end"));
    s.expect(&[STEP1, r#"{"event":"agent_finished","answer":"mine"}"#]);
    s.send(&prompt("delta:ok"));
    s.expect(&[STEP1, &delta("ok"), DONE]);
    s.quiet();
    assert_eq!(s.close(), (vec![], None));
}

#[test]
fn compact_waits_behind_the_turn_and_cancel_fails_it() {
    let mut s = Session::start();
    s.send(&prompt("wait"));
    s.send(r#"{"command":"compact"}"#);
    s.expect(&[STEP1]);
    s.go();
    s.expect(&[
        DONE,
        r#"{"event":"compaction_started","from_sequence":1,"to_sequence":4}"#,
    ]);
    s.send(r#"{"command":"cancel"}"#);
    s.expect(&[r#"{"event":"compaction_failed","error":"cancelled"}"#]);
    assert_eq!(s.close(), (vec![], None));
}

#[test]
fn goals_wait_behind_pending_work_and_apply_at_once_when_idle() {
    let mut s = Session::start();
    s.send(r#"{"command":"goal","action":"set","text":"one"}"#);
    s.expect(&[r#"{"event":"goal_updated","goal":"one"}"#]);
    s.send(&prompt("wait"));
    s.send(&prompt("delta:second"));
    // Behind the queued prompt: applied after its turn.
    s.send(r#"{"command":"goal","action":"clear"}"#);
    s.expect(&[STEP1]);
    s.sync();
    s.go();
    s.expect(&[
        DONE,
        STEP1,
        &delta("second"),
        DONE,
        r#"{"event":"goal_updated","goal":null}"#,
    ]);
    assert_eq!(s.close(), (vec![], None));
}

/// Command context keeps its wire order around a goal queued behind work
/// (loop.mbt's `take_context_before_goal`): context sent before the goal,
/// with no turn to take it, is applied before the goal; context a running
/// turn will take stays with that turn.
#[test]
fn command_context_keeps_its_order_around_a_queued_goal() {
    // A compaction runs: nothing will take the context but the goal's drain.
    let mut s = Session::start();
    s.send(r#"{"command":"compact"}"#);
    s.expect(&[r#"{"event":"compaction_started","from_sequence":1,"to_sequence":4}"#]);
    s.send(r#"{"command":"steer","kind":"command","content":"ls"}"#);
    s.send(r#"{"command":"goal","action":"set","text":"g"}"#);
    s.send(r#"{"command":"steer","kind":"command","content":"pwd"}"#);
    s.sync();
    s.go();
    s.expect(&[
        r#"{"event":"compaction_finished","from_sequence":1,"to_sequence":4,"summary":"summary"}"#,
        r#"{"event":"steer_applied","kind":"command","content":"ls"}"#,
        r#"{"event":"goal_updated","goal":"g"}"#,
        r#"{"event":"steer_applied","kind":"command","content":"pwd"}"#,
    ]);
    assert_eq!(s.close(), (vec![], None));

    // A turn runs, a compaction waits: the context sent before the goal
    // is the turn's; the context sent after it is fenced behind it.
    let mut s = Session::start();
    s.send(&prompt("wait steers"));
    s.send(r#"{"command":"compact"}"#);
    s.send(r#"{"command":"steer","kind":"command","content":"ls"}"#);
    s.send(r#"{"command":"goal","action":"set","text":"g"}"#);
    s.send(r#"{"command":"steer","kind":"command","content":"pwd"}"#);
    s.expect(&[STEP1]);
    s.sync();
    s.go();
    s.expect(&[
        r#"{"event":"steer_applied","kind":"command","content":"ls"}"#,
        &delta("!ls"),
        DONE,
        r#"{"event":"compaction_started","from_sequence":1,"to_sequence":4}"#,
    ]);
    s.go();
    s.expect(&[
        r#"{"event":"compaction_finished","from_sequence":1,"to_sequence":4,"summary":"summary"}"#,
        r#"{"event":"goal_updated","goal":"g"}"#,
        r#"{"event":"steer_applied","kind":"command","content":"pwd"}"#,
    ]);
    assert_eq!(s.close(), (vec![], None));
}

#[test]
fn an_auto_goal_continues_turns_until_the_engine_says_it_is_met() {
    let mut s = Session::with_continues(vec![
        Some(Content::from("delta:again")),
        Some(Content::from("delta:more")),
    ]);
    s.send(r#"{"command":"goal","action":"set","text":"ship","auto":true}"#);
    s.expect(&[r#"{"event":"goal_updated","goal":"ship"}"#]);
    // Arming never starts a turn: the controller's prompt does.
    s.quiet();
    s.send(&prompt("delta:first"));
    s.expect(&[
        STEP1,
        &delta("first"),
        DONE,
        r#"{"event":"goal_continue","remaining":19}"#,
        STEP1,
        &delta("again"),
        DONE,
        r#"{"event":"goal_continue","remaining":18}"#,
        STEP1,
        &delta("more"),
        DONE,
    ]);
    s.quiet();
    assert_eq!(
        *s.judged.goals_judged.lock().unwrap(),
        ["ship", "ship", "ship"]
    );
    assert_eq!(s.close(), (vec![], None));
}

/// A turn that wrote its own `agent_finished` finished cleanly: an auto
/// goal continues after it.
#[test]
fn an_auto_goal_continues_after_a_turn_that_wrote_its_own_end() {
    let mut s = Session::with_continues(vec![Some(Content::from("delta:on"))]);
    s.send(r#"{"command":"goal","action":"set","text":"g","auto":true}"#);
    s.send(&prompt("own-end"));
    s.expect(&[
        r#"{"event":"goal_updated","goal":"g"}"#,
        STEP1,
        r#"{"event":"agent_finished","answer":"mine"}"#,
        r#"{"event":"goal_continue","remaining":19}"#,
        STEP1,
        &delta("on"),
        DONE,
    ]);
    assert_eq!(s.close(), (vec![], None));
}

#[test]
fn an_auto_goal_stops_after_its_budget() {
    let continues = vec![Some(Content::from("delta:go")); 25];
    let mut s = Session::with_continues(continues);
    s.send(r#"{"command":"goal","action":"set","text":"ship","auto":true}"#);
    s.send(&prompt("delta:first"));
    s.expect(&[
        r#"{"event":"goal_updated","goal":"ship"}"#,
        STEP1,
        &delta("first"),
        DONE,
    ]);
    for remaining in (0..20).rev() {
        s.expect(&[
            &format!("{{\"event\":\"goal_continue\",\"remaining\":{remaining}}}"),
            STEP1,
            &delta("go"),
            DONE,
        ]);
    }
    s.expect(&[r#"{"event":"goal_budget_exhausted","turns":20}"#]);
    s.quiet();
    assert_eq!(s.close(), (vec![], None));
}

/// Where an auto goal was applied decides whether the turn that just ended
/// continues it (loop.mbt's `defer_continue`): a goal the turn took at a
/// step boundary was worked under, so its end continues; a goal applied
/// after the turn (drained at its end, or queued behind a prompt) was not,
/// so the next turn the controller starts is the first one continued.
#[test]
fn an_auto_goal_continues_only_after_a_turn_that_worked_under_it() {
    // Taken at the turn's step boundary: continued at once.
    let mut s = Session::with_continues(vec![Some(Content::from("delta:on"))]);
    s.send(&prompt("wait steers"));
    s.expect(&[STEP1]);
    s.send(r#"{"command":"goal","action":"set","text":"g","auto":true}"#);
    s.sync();
    s.go();
    s.expect(&[
        r#"{"event":"goal_updated","goal":"g"}"#,
        &delta("goal Some(\\\"g\\\")"),
        DONE,
        r#"{"event":"goal_continue","remaining":19}"#,
        STEP1,
        &delta("on"),
        DONE,
    ]);
    assert_eq!(s.close(), (vec![], None));

    // Drained at the turn's end: that turn is not continued; the next is.
    let mut s = Session::with_continues(vec![Some(Content::from("delta:on"))]);
    s.send(&prompt("wait"));
    s.expect(&[STEP1]);
    s.send(r#"{"command":"goal","action":"set","text":"g","auto":true}"#);
    s.sync();
    s.go();
    s.expect(&[DONE, r#"{"event":"goal_updated","goal":"g"}"#]);
    s.quiet();
    s.send(&prompt("delta:next"));
    s.expect(&[
        STEP1,
        &delta("next"),
        DONE,
        r#"{"event":"goal_continue","remaining":19}"#,
        STEP1,
        &delta("on"),
        DONE,
    ]);
    assert_eq!(s.close(), (vec![], None));

    // Queued behind a prompt: applied after that prompt's turn, which is
    // not continued.
    let mut s = Session::with_continues(vec![Some(Content::from("delta:on"))]);
    s.send(&prompt("wait"));
    s.send(&prompt("delta:b"));
    s.send(r#"{"command":"goal","action":"set","text":"g","auto":true}"#);
    s.expect(&[STEP1]);
    s.sync();
    s.go();
    s.expect(&[
        DONE,
        STEP1,
        &delta("b"),
        DONE,
        r#"{"event":"goal_updated","goal":"g"}"#,
    ]);
    s.quiet();
    assert_eq!(s.close(), (vec![], None));
}

/// The end of input pauses an auto goal: the running turn finishes, but
/// the loop starts no turn of its own.
#[test]
fn the_end_of_input_stops_an_auto_goal() {
    let mut s = Session::with_continues(vec![Some(Content::from("delta:on"))]);
    s.send(r#"{"command":"goal","action":"set","text":"g","auto":true}"#);
    // The question is withdrawn when the input ends: the turn ends after.
    s.send(&prompt("ask"));
    s.expect(&[
        r#"{"event":"goal_updated","goal":"g"}"#,
        STEP1,
        r#"{"event":"approval_requested","id":"approval-1","tool_name":"shell","detail":"run it","body":"ls"}"#,
    ]);
    let (rest, stopped) = s.close();
    assert_eq!(
        rest,
        [
            r#"{"event":"approval_resolved","id":"approval-1","outcome":"cancelled"}"#,
            &delta("Withdrawn"),
            DONE,
        ]
    );
    assert_eq!(stopped, None);
}

/// A cancel also disarms an auto goal still queued behind pending work:
/// applied later, it stands but does not continue.
#[test]
fn cancel_disarms_an_auto_goal_queued_behind_work() {
    let mut s = Session::with_continues(vec![Some(Content::from("delta:on"))]);
    s.send(&prompt("until-cancel"));
    s.send(&prompt("delta:b"));
    s.send(r#"{"command":"goal","action":"set","text":"g","auto":true}"#);
    s.send(r#"{"command":"cancel"}"#);
    s.expect(&[
        STEP1,
        ABORTED,
        STEP1,
        &delta("b"),
        DONE,
        r#"{"event":"goal_updated","goal":"g"}"#,
    ]);
    s.send(&prompt("delta:c"));
    s.expect(&[STEP1, &delta("c"), DONE]);
    s.quiet();
    assert!(s.judged.goals_judged.lock().unwrap().is_empty());
    assert_eq!(s.close(), (vec![], None));
}

#[test]
fn cancel_disarms_an_auto_goal() {
    let mut s = Session::with_continues(vec![Some(Content::from("delta:again"))]);
    s.send(r#"{"command":"goal","action":"set","text":"ship","auto":true}"#);
    s.send(&prompt("until-cancel"));
    s.expect(&[r#"{"event":"goal_updated","goal":"ship"}"#, STEP1]);
    s.send(r#"{"command":"cancel"}"#);
    s.expect(&[ABORTED]);
    s.quiet();
    assert!(s.judged.goals_judged.lock().unwrap().is_empty());
    assert_eq!(s.close(), (vec![], None));
}

fn predicted(n: i32) -> String {
    format!(
        r#"{{"event":"prediction_result","source_sequence":{n},"outcome":{{"kind":"completed","text":"next {n}","input_tokens":3,"output_tokens":1}}}}"#
    )
}

/// A turn that finished, with nothing else to run, is followed by one
/// prediction of the engine's own (loop.mbt @ fdf10827, the end of the
/// `TurnDone` arm), from the sequence the engine gives.
#[test]
fn a_finished_idle_turn_is_followed_by_one_prediction() {
    let mut s = Session::start();
    s.send(&prompt("predict:now delta:a"));
    s.expect(&[STEP1, &delta("a"), DONE, &predicted(1)]);
    s.quiet();
    s.send(&prompt("predict:now"));
    s.expect(&[STEP1, DONE, &predicted(2)]);
    // The engine may not save it: `failed`, with its reason.
    s.send(&prompt("predict:store-fails"));
    s.expect(&[
        STEP1,
        DONE,
        r#"{"event":"prediction_result","source_sequence":3,"outcome":{"kind":"failed","message":"prediction storage: disk full"}}"#,
    ]);
    // One that could not be made is not written.
    s.send(&prompt("predict:skip"));
    s.expect(&[STEP1, DONE]);
    s.quiet();
    assert_eq!(s.close(), (vec![], None));
}

/// No prediction after a turn that did not finish cleanly, that yielded
/// its context, that another turn or a compaction waits behind, or after
/// a compaction.
#[test]
fn no_prediction_follows_a_turn_that_failed_yielded_or_has_work_behind_it() {
    let mut s = Session::start();
    s.send(&prompt("predict:now fail"));
    s.expect(&[
        STEP1,
        r#"{"event":"turn_failed","error":"the model said no"}"#,
    ]);
    s.send(&prompt("predict:now until-cancel"));
    s.expect(&[STEP1]);
    s.send(r#"{"command":"cancel"}"#);
    s.expect(&[ABORTED]);
    s.send(&prompt("predict:now yield"));
    s.expect(&[
        STEP1,
        r#"{"event":"context_yield","to_sequence":3,"answer":"yielded"}"#,
        DONE,
    ]);
    s.quiet();
    // Queued behind a turn: only the last turn's end is idle.
    s.send(&prompt("predict:now wait"));
    s.expect(&[STEP1]);
    s.send(&prompt("predict:now"));
    s.sync();
    s.go();
    s.expect(&[DONE, STEP1, DONE, &predicted(1)]);
    // A compaction queued behind a turn runs instead, and none follows it.
    s.send(&prompt("predict:now wait"));
    s.expect(&[STEP1]);
    s.send(r#"{"command":"compact"}"#);
    s.sync();
    s.go();
    s.expect(&[
        DONE,
        r#"{"event":"compaction_started","from_sequence":1,"to_sequence":4}"#,
    ]);
    s.go();
    s.expect(&[
        r#"{"event":"compaction_finished","from_sequence":1,"to_sequence":4,"summary":"summary"}"#,
    ]);
    s.quiet();
    assert_eq!(s.close(), (vec![], None));
}

/// A prompt, a steer of either kind, `compact`, `cancel`, a goal and the
/// end of input cancel the prediction, silently; `jobs_snapshot`,
/// `job_stop` and `approval` do not.
#[test]
fn what_moves_the_session_on_cancels_the_prediction_silently() {
    let cancelling: [(&str, &[&str]); 6] = [
        (
            &prompt("delta:x"),
            &[
                STEP1,
                "{\"event\":\"assistant_delta\",\"content\":\"x\"}",
                DONE,
            ],
        ),
        (
            r#"{"command":"steer","content":"s"}"#,
            &[r#"{"event":"steer_dropped","content":"s"}"#],
        ),
        (
            r#"{"command":"steer","kind":"command","content":"ls"}"#,
            &[r#"{"event":"steer_applied","kind":"command","content":"ls"}"#],
        ),
        (r#"{"command":"cancel"}"#, &[]),
        (
            r#"{"command":"goal","action":"clear"}"#,
            &[r#"{"event":"goal_updated","goal":null}"#],
        ),
        (
            r#"{"command":"compact"}"#,
            &[r#"{"event":"compaction_started","from_sequence":1,"to_sequence":4}"#],
        ),
    ];
    for (line, answers) in cancelling {
        let mut s = Session::start();
        s.send(&prompt("predict:gate"));
        s.expect(&[STEP1, DONE]);
        s.send(line);
        s.expect(answers);
        s.sync();
        // The prediction completes now, and is dropped.
        s.go();
        s.go();
        let (rest, stopped) = s.close();
        assert!(
            rest.iter().all(|l| !l.contains("prediction_result")),
            "{line}: {rest:?}"
        );
        assert_eq!(stopped, None, "{line}");
    }
    // The end of input.
    let mut s = Session::start();
    s.send(&prompt("predict:gate"));
    s.expect(&[STEP1, DONE]);
    assert_eq!(s.close(), (vec![], None));
    // The requests and an approval leave it be.
    let mut s = Session::start();
    s.send(&prompt("predict:gate"));
    s.expect(&[STEP1, DONE]);
    s.send(r#"{"command":"job_stop","request_id":"k","generation":"g","job_id":"x"}"#);
    s.expect(&[r#"{"event":"job_stop_result","request_id":"k","generation":"g","job_id":"x","outcome":"not_found"}"#]);
    s.send(r#"{"command":"approval","id":"approval-1","allow":true}"#);
    s.sync();
    s.go();
    s.expect(&[&predicted(1)]);
    assert_eq!(s.close(), (vec![], None));
}

#[test]
fn after_a_line_that_is_not_json_the_loop_reads_no_more_and_finishes_its_work() {
    let mut s = Session::start();
    s.send(&prompt("wait"));
    s.expect(&[STEP1]);
    s.send("{\"command\":\"prompt\",\"content\":\"cut");
    s.expect(&[
        r#"{"event":"command_error","error":"command stream: unterminated string at byte 30"}"#,
    ]);
    s.send(r#"{"command":"jobs_snapshot","request_id":"never"}"#);
    s.go();
    let (rest, stopped) = s.close();
    assert_eq!(rest, [DONE]);
    assert_eq!(
        stopped.as_deref(),
        Some("line 2: unterminated string at byte 30")
    );
}

/// What a turn may not write: the loop's own answers, and anything after
/// its end.
#[test]
fn a_turn_cannot_write_the_loops_events() {
    // The turn's own end stands; what it returned is not written.
    struct Reports(Mutex<Vec<String>>);
    impl Engine for Reports {
        fn turn(&self, turn: &mut RunningTurn<'_>) -> Result<String, WorkError> {
            for event in [
                Event::goal_updated(None),
                Event::steer_dropped("x", None),
                Event::agent_finished("end"),
                Event::assistant_delta("after"),
            ] {
                let said = match turn.emit(&event) {
                    Ok(()) => "written".to_owned(),
                    Err(e) => format!("{:?}: {e}", e.kind()),
                };
                self.0.lock().unwrap().push(said);
            }
            let asked = turn.ask(Question::new("shell", "late")).unwrap_err();
            let steered = turn.steers().unwrap_err();
            self.0
                .lock()
                .unwrap()
                .extend([asked.to_string(), steered.to_string()]);
            Ok(String::new())
        }
    }
    let reports = Reports(Mutex::new(Vec::new()));
    let mut out = Vec::new();
    EngineLoop::new(&reports)
        .serve(
            &b"{\"command\":\"prompt\",\"content\":\"x\"}\n"[..],
            &mut out,
        )
        .unwrap();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "{\"event\":\"agent_finished\",\"answer\":\"end\"}\n"
    );
    assert_eq!(
        *reports.0.lock().unwrap(),
        [
            "InvalidInput: a turn cannot write goal_updated: the serve loop writes it",
            "InvalidInput: a turn cannot write steer_dropped: the serve loop writes it",
            "written",
            "InvalidInput: a turn cannot write assistant_delta: the turn has ended",
            "a turn cannot ask: the turn has ended",
            "a turn cannot take steers: the turn has ended",
        ]
    );
}

/// A controller that has gone: the loop stops reading and says so.
#[test]
fn a_failed_write_ends_the_loop_with_the_error() {
    struct Gone;
    impl Write for Gone {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::ErrorKind::BrokenPipe.into())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    struct Echo;
    impl Engine for Echo {
        fn turn(&self, _: &mut RunningTurn<'_>) -> Result<String, WorkError> {
            Ok("hi".into())
        }
    }
    let input = "{\"command\":\"prompt\",\"content\":\"x\"}\n".repeat(3);
    let error = EngineLoop::new(Echo)
        .serve(input.as_bytes(), Gone)
        .unwrap_err();
    assert_eq!(error.kind(), io::ErrorKind::BrokenPipe);
    assert_eq!(error.to_string(), "writing to the controller failed");
    // With its input still open, threaded and in order: the loop reads no
    // command after the write failed, and returns.
    for in_order in [false, true] {
        let (commands_in, mut stdin) = pipe::pipe();
        let (done, returned) = mpsc::channel();
        std::thread::spawn(move || {
            let engine = EngineLoop::new(Echo);
            let engine = if in_order { engine.in_order() } else { engine };
            let result = engine.serve(BufReader::new(commands_in), Gone);
            let _ = done.send(
                result
                    .map(|stopped| stopped.is_some())
                    .map_err(|e| e.kind()),
            );
        });
        stdin
            .write_all(b"{\"command\":\"prompt\",\"content\":\"x\"}\n")
            .unwrap();
        // The prompt's turn fails to write; the next line is the last read.
        std::thread::sleep(Duration::from_millis(50));
        stdin
            .write_all(b"{\"command\":\"jobs_snapshot\",\"request_id\":\"j\"}\n")
            .unwrap();
        assert_eq!(
            returned.recv_timeout(WAIT).expect("the loop returned"),
            Err(io::ErrorKind::BrokenPipe),
            "in order: {in_order}"
        );
        drop(stdin);
    }
}

/// What an engine does not implement is answered as upstream answers with
/// no runtime; what it implements is asked.
#[test]
fn the_engines_jobs_and_the_defaults_answer_the_requests() {
    struct Defaults;
    impl Engine for Defaults {
        fn turn(&self, _: &mut RunningTurn<'_>) -> Result<String, WorkError> {
            Ok(String::new())
        }
    }
    struct Jobs;
    impl Engine for Jobs {
        fn turn(&self, _: &mut RunningTurn<'_>) -> Result<String, WorkError> {
            Ok(String::new())
        }
        fn jobs(&self) -> Vec<JobRecord> {
            vec![JobRecord::new(
                "g1",
                "job-1",
                1,
                "cargo test",
                JobState::Running,
                1,
                2,
            )]
        }
        fn stop_job(&self, generation: &str, job_id: &str) -> JobStopOutcome {
            match (generation, job_id) {
                ("g1", "job-1") => JobStopOutcome::Stopped,
                ("g1", _) => JobStopOutcome::NotFound,
                _ => JobStopOutcome::WrongRuntime,
            }
        }
    }
    let input = concat!(
        "{\"command\":\"jobs_snapshot\",\"request_id\":\"j\"}\n",
        "{\"command\":\"job_stop\",\"request_id\":\"k1\",\"generation\":\"g1\",\"job_id\":\"job-1\"}\n",
        "{\"command\":\"job_stop\",\"request_id\":\"k2\",\"generation\":\"g0\",\"job_id\":\"job-1\"}\n",
        "{\"command\":\"predict\",\"request_id\":\"p\",\"source_sequence\":3}\n",
        "{\"command\":\"compact\"}\n",
    );
    let serve = |engine: &dyn Fn(&mut Vec<u8>)| {
        let mut out = Vec::new();
        engine(&mut out);
        String::from_utf8(out).unwrap()
    };
    let tail = concat!(
        "{\"event\":\"command_error\",\"error\":\"unknown command: predict\"}\n",
        "{\"event\":\"compaction_failed\",\"error\":\"this engine does not compact\"}\n",
    );
    assert_eq!(
        serve(&|out| {
            EngineLoop::new(Defaults).in_order().serve(input.as_bytes(), out).unwrap();
        }),
        [
            "{\"event\":\"jobs_snapshot\",\"request_id\":\"j\",\"jobs\":[]}\n",
            "{\"event\":\"job_stop_result\",\"request_id\":\"k1\",\"generation\":\"g1\",\"job_id\":\"job-1\",\"outcome\":\"not_found\"}\n",
            "{\"event\":\"job_stop_result\",\"request_id\":\"k2\",\"generation\":\"g0\",\"job_id\":\"job-1\",\"outcome\":\"not_found\"}\n",
            tail,
        ]
        .concat()
    );
    let job = JobRecord::new("g1", "job-1", 1, "cargo test", JobState::Running, 1, 2);
    assert_eq!(
        serve(&|out| {
            EngineLoop::new(Jobs).in_order().serve(input.as_bytes(), out).unwrap();
        }),
        [
            Event::jobs_snapshot("j", vec![job.clone()]).to_line().as_str(),
            "{\"event\":\"job_stop_result\",\"request_id\":\"k1\",\"generation\":\"g1\",\"job_id\":\"job-1\",\"outcome\":\"stopped\"}\n",
            "{\"event\":\"job_stop_result\",\"request_id\":\"k2\",\"generation\":\"g0\",\"job_id\":\"job-1\",\"outcome\":\"wrong_runtime\"}\n",
            tail,
        ]
        .concat()
    );
}

/// What a turn is told, and a writer for a thread of its own.
#[test]
fn a_turn_sees_its_prompt_and_writes_from_a_thread_of_its_own() {
    struct Told;
    impl Engine for Told {
        fn turn(&self, turn: &mut RunningTurn<'_>) -> Result<String, WorkError> {
            let writer = turn.writer();
            let said = format!("{:?} {}", turn.submission_id(), turn.content().to_text());
            std::thread::scope(|scope| {
                scope
                    .spawn(|| writer.write(&Event::assistant_delta(said)))
                    .join()
            })
            .unwrap()?;
            let decision = turn.ask(Question::new("shell", "ls"))?;
            Ok(format!("{}", decision.is_allowed()))
        }
        fn prediction_source(&self) -> Option<i32> {
            Some(7)
        }
        fn predict(&self, prediction: &Prediction) -> PredictionOutcome {
            PredictionOutcome::Failed(format!(
                "prediction storage: {} {}",
                prediction.source_sequence(),
                prediction.is_cancelled()
            ))
        }
    }
    let input = concat!(
        "{\"command\":\"prompt\",\"content\":\"hi\",\"submission_id\":\"s-1\"}\n",
        "{\"command\":\"approval\",\"id\":\"approval-1\",\"allow\":true}\n",
        "{\"command\":\"prompt\",\"content\":\"again\"}\n",
        "{\"command\":\"approval\",\"id\":\"approval-2\",\"allow\":false}\n",
    );
    let mut out = Vec::new();
    EngineLoop::new(Told)
        .in_order()
        .serve(input.as_bytes(), &mut out)
        .unwrap();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        concat!(
            "{\"event\":\"assistant_delta\",\"content\":\"Some(\\\"s-1\\\") hi\"}\n",
            "{\"event\":\"approval_requested\",\"id\":\"approval-1\",\"tool_name\":\"shell\",\"detail\":\"ls\",\"body\":null}\n",
            "{\"event\":\"approval_resolved\",\"id\":\"approval-1\",\"outcome\":\"allowed_once\"}\n",
            "{\"event\":\"agent_finished\",\"answer\":\"true\"}\n",
            "{\"event\":\"prediction_result\",\"source_sequence\":7,\"outcome\":{\"kind\":\"failed\",\"message\":\"prediction storage: 7 false\"}}\n",
            "{\"event\":\"assistant_delta\",\"content\":\"None again\"}\n",
            "{\"event\":\"approval_requested\",\"id\":\"approval-2\",\"tool_name\":\"shell\",\"detail\":\"ls\",\"body\":null}\n",
            "{\"event\":\"approval_resolved\",\"id\":\"approval-2\",\"outcome\":\"rejected\"}\n",
            "{\"event\":\"agent_finished\",\"answer\":\"false\"}\n",
            // In order, the end of input is read only after the turn's end.
            "{\"event\":\"prediction_result\",\"source_sequence\":7,\"outcome\":{\"kind\":\"failed\",\"message\":\"prediction storage: 7 false\"}}\n",
        )
    );
}

#[test]
fn in_order_the_output_depends_on_the_input_alone() {
    let input = concat!(
        "{\"command\":\"prompt\",\"content\":\"delta:a\"}\n",
        "{\"command\":\"jobs_snapshot\",\"request_id\":\"j\"}\n",
        "{\"command\":\"steer\",\"content\":\"late\"}\n",
    );
    let (gate_tx, gate) = mpsc::channel();
    drop(gate_tx);
    let engine = Scripted {
        gate: Mutex::new(gate),
        continues: Mutex::new(Vec::new()),
        goals_judged: Mutex::new(Vec::new()),
        predicting: Mutex::new((None, 0)),
    };
    for _ in 0..20 {
        let mut out = Vec::new();
        EngineLoop::new(&engine)
            .in_order()
            .serve(input.as_bytes(), &mut out)
            .unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            concat!(
                "{\"event\":\"agent_step\",\"step\":1}\n",
                "{\"event\":\"assistant_delta\",\"content\":\"a\"}\n",
                "{\"event\":\"agent_finished\",\"answer\":\"done\"}\n",
                "{\"event\":\"jobs_snapshot\",\"request_id\":\"j\",\"jobs\":[]}\n",
                "{\"event\":\"steer_dropped\",\"content\":\"late\"}\n",
            )
        );
    }
}

/// Random sessions: whatever a controller sends, with what timing, every
/// event the loop writes fits a rule of the controller's model, and once
/// the input ends and the work with it, nothing is owed.
mod random {
    use super::*;
    use proptest::prelude::*;

    fn turn() -> impl Strategy<Value = String> {
        let word = prop_oneof![
            3 => Just("delta:x"),
            2 => Just("steers"),
            2 => Just("nap"),
            1 => Just("ask"),
            1 => Just("fail"),
            1 => Just("own-end"),
            1 => Just("yield"),
            2 => Just("predict:now"),
            1 => Just("predict:gate"),
        ];
        prop::collection::vec(word, 0..5).prop_map(|words| words.join(" "))
    }

    fn command() -> impl Strategy<Value = String> {
        let tag = prop::option::of(prop_oneof![Just("s1"), Just("s2")]);
        prop_oneof![
            4 => turn().prop_map(|t| prompt(&t)),
            2 => (tag.clone(), "[a-c]").prop_map(|(tag, text)| match tag {
                Some(tag) => format!(r#"{{"command":"steer","content":"{text}","submission_id":"{tag}"}}"#),
                None => format!(r#"{{"command":"steer","content":"{text}"}}"#),
            }),
            1 => tag.prop_map(|tag| match tag {
                Some(tag) => format!(r#"{{"command":"steer","kind":"command","content":"ls","submission_id":"{tag}"}}"#),
                None => r#"{"command":"steer","kind":"command","content":"ls"}"#.to_owned(),
            }),
            2 => Just(r#"{"command":"cancel"}"#.to_owned()),
            1 => Just(r#"{"command":"compact"}"#.to_owned()),
            1 => any::<bool>().prop_map(|auto| format!(r#"{{"command":"goal","action":"set","text":"g","auto":{auto}}}"#)),
            1 => Just(r#"{"command":"goal","action":"clear"}"#.to_owned()),
            2 => (1..4u8, any::<bool>()).prop_map(|(n, allow)| format!(r#"{{"command":"approval","id":"approval-{n}","allow":{allow}}}"#)),
            1 => Just(r#"{"command":"jobs_snapshot","request_id":"j"}"#.to_owned()),
            1 => Just(r#"{"command":"job_stop","request_id":"k","generation":"g","job_id":"x"}"#.to_owned()),
            1 => Just(r#"{"command":"nap"}"#.to_owned()),
            1 => Just(r#"{"command":"goal","action":"set","text":" "}"#.to_owned()),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]

        #[test]
        fn every_event_the_loop_writes_is_attributed(
            commands in prop::collection::vec((command(), 0..3u64), 0..14),
            continues in 0..3usize,
            not_json_at_end in any::<bool>(),
        ) {
            let mut s = Session::with_continues(vec![Some(Content::from("delta:auto nap")); continues]);
            s.ungate();
            for (line, pause) in &commands {
                s.send(line);
                std::thread::sleep(Duration::from_millis(*pause));
            }
            if not_json_at_end {
                s.send("{\"command\":");
                s.send(r#"{"command":"jobs_snapshot","request_id":"never"}"#);
            }
            // `close` asserts that no event fit no rule and nothing is owed.
            let (_, stopped) = s.close();
            prop_assert_eq!(stopped.is_some(), not_json_at_end);
        }
    }
}
