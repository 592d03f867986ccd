//! `v2::serve::TokioEngineLoop`: the serve loop's promises on tokio, with
//! turns that await while commands arrive, every session attributed by a
//! `Conversation` fed the lines in the order they cross.
#![cfg(feature = "tokio")]

#[path = "support/attributed.rs"]
mod attributed;

use attributed::Attributed;
use proptest::prelude::*;
use serve_command::v2::serve::{
    Prediction, Question, RunningTurn, StepInput, TokioEngine, TokioEngineLoop, WorkError,
};
use serve_command::v2::{Event, PredictionOutcome};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, WriteHalf};
use tokio::sync::mpsc::{self, UnboundedReceiver};
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;

const WAIT: Duration = Duration::from_secs(20);

/// A turn scripted by its prompt's words (as tests/v2_engine_loop.rs's):
/// `wait` (for the test's go), `delta:X`, `steers`, `ask`, `nap`,
/// `until-cancel`, `fail`, `panic`; `predict`: the turn is followed by a
/// prediction that waits for the test's go (or its cancel). It answers
/// `done`.
struct Script {
    gate: Arc<Semaphore>,
    predicting: std::sync::atomic::AtomicBool,
}

impl TokioEngine for Script {
    fn prediction_source(&self) -> Option<i32> {
        use std::sync::atomic::Ordering;
        self.predicting.load(Ordering::Relaxed).then_some(5)
    }

    async fn predict(&self, prediction: &Prediction) -> PredictionOutcome {
        // The test's go, or its cancel.
        while !prediction.is_cancelled() {
            if let Ok(permit) = self.gate.try_acquire() {
                permit.forget();
                break;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        PredictionOutcome::Completed {
            text: Some("next".into()),
            input_tokens: 1,
            output_tokens: 1,
        }
    }

    async fn turn(&self, turn: &mut RunningTurn<'static>) -> Result<String, WorkError> {
        let script = turn.content().to_text();
        let predicting = script.split_whitespace().any(|w| w == "predict");
        self.predicting
            .store(predicting, std::sync::atomic::Ordering::Relaxed);
        turn.emit(&Event::agent_step(1))?;
        for word in script.split_whitespace() {
            match word {
                "wait" => self.gate.acquire().await?.forget(),
                "nap" => tokio::time::sleep(Duration::from_millis(1)).await,
                "steers" => {
                    for input in turn.steers()? {
                        if let StepInput::Prompt(more) = input {
                            turn.emit(&Event::assistant_delta(format!("+{}", more.to_text())))?;
                        }
                    }
                }
                "ask" => {
                    let decision = turn.ask_async(Question::new("shell", "run it")).await?;
                    turn.emit(&Event::assistant_delta(format!("{decision:?}")))?;
                }
                "until-cancel" => {
                    turn.cancelled().await;
                    return Ok("stopped".into());
                }
                "fail" => return Err("the model said no".into()),
                "panic" => panic!("a bug in the turn"),
                "predict" => {}
                delta => {
                    if let Some(text) = delta.strip_prefix("delta:") {
                        turn.emit(&Event::assistant_delta(text))?;
                    }
                }
            }
        }
        Ok("done".to_owned())
    }
}

/// The loop on a task, over in-memory duplex pipes; the model fed what
/// crosses.
struct Session {
    stdin: Option<WriteHalf<DuplexStream>>,
    events: UnboundedReceiver<String>,
    model: Attributed,
    gate: Arc<Semaphore>,
    engine: JoinHandle<std::io::Result<Option<String>>>,
}

impl Session {
    fn start() -> Session {
        let gate = Arc::new(Semaphore::new(0));
        let (engine_end, controller_end) = tokio::io::duplex(1 << 16);
        let (engine_in, engine_out) = tokio::io::split(engine_end);
        let (controller_in, stdin) = tokio::io::split(controller_end);
        let script = Script {
            gate: Arc::clone(&gate),
            predicting: false.into(),
        };
        let engine = tokio::spawn(async move {
            let stopped = TokioEngineLoop::new(script)
                .serve(engine_in, engine_out)
                .await?;
            Ok(stopped.map(|e| e.to_string()))
        });
        let model = Attributed::default();
        let (tx, events) = mpsc::unbounded_channel();
        let reader_model = model.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(controller_in).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                reader_model.event(&line);
                let _ = tx.send(line);
            }
        });
        Session {
            stdin: Some(stdin),
            events,
            model,
            gate,
            engine,
        }
    }

    async fn send(&mut self, line: &str) {
        let line = format!("{line}\n");
        // The model sees it first: the engine cannot answer it before.
        self.model.command(&line);
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).await.unwrap();
    }

    async fn expect(&mut self, lines: &[&str]) {
        for (i, want) in lines.iter().enumerate() {
            let got = tokio::time::timeout(WAIT, self.events.recv())
                .await
                .ok()
                .flatten()
                .unwrap_or_else(|| panic!("line {i} never came: {want}"));
            assert_eq!(got, *want, "line {i}");
        }
    }

    /// Closes the input; the rest of the lines and what the loop returned.
    async fn close(mut self) -> (Vec<String>, Option<String>) {
        let mut stdin = self.stdin.take().unwrap();
        stdin.shutdown().await.unwrap();
        drop(stdin);
        let stopped = self.engine.await.unwrap().unwrap();
        let mut rest = Vec::new();
        while let Ok(Some(line)) = tokio::time::timeout(WAIT, self.events.recv()).await {
            rest.push(line);
        }
        self.model.assert_settled();
        (rest, stopped)
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
}

fn prompt(script: &str) -> String {
    format!("{{\"command\":\"prompt\",\"content\":\"{script}\"}}")
}

const STEP1: &str = r#"{"event":"agent_step","step":1}"#;
const DONE: &str = r#"{"event":"agent_finished","answer":"done"}"#;

#[test]
fn requests_and_refused_lines_are_answered_while_a_turn_awaits() {
    runtime().block_on(async {
        let mut s = Session::start();
        s.send(&prompt("delta:a wait delta:b")).await;
        s.expect(&[STEP1, r#"{"event":"assistant_delta","content":"a"}"#])
            .await;
        // The reader answers a refused line itself, at once: it may cross
        // the loop's answer to an earlier line.
        s.send(r#"{"command":"nap"}"#).await;
        s.expect(&[r#"{"event":"command_error","error":"unknown command: nap"}"#])
            .await;
        s.send(r#"{"command":"steer","content":"more"}"#).await;
        s.send(&prompt("steers")).await;
        s.send(r#"{"command":"jobs_snapshot","request_id":"j1"}"#)
            .await;
        s.expect(&[r#"{"event":"jobs_snapshot","request_id":"j1","jobs":[]}"#])
            .await;
        s.gate.add_permits(1);
        // The steer was sent while turn 1 ran: it ends without a step
        // boundary, so the steer is dropped before turn 2 starts.
        s.expect(&[
            r#"{"event":"assistant_delta","content":"b"}"#,
            DONE,
            r#"{"event":"steer_dropped","content":"more"}"#,
            STEP1,
            DONE,
        ])
        .await;
        assert_eq!(s.close().await, (vec![], None));
    });
}

#[test]
fn an_awaited_approval_settles_by_answer_cancel_or_the_end_of_input() {
    runtime().block_on(async {
        let mut s = Session::start();
        s.send(&prompt("ask ask")).await;
        s.expect(&[
            STEP1,
            r#"{"event":"approval_requested","id":"approval-1","tool_name":"shell","detail":"run it","body":null}"#,
        ])
        .await;
        s.send(r#"{"command":"approval","id":"approval-1","allow":true}"#).await;
        s.expect(&[
            r#"{"event":"approval_resolved","id":"approval-1","outcome":"allowed_once"}"#,
            r#"{"event":"assistant_delta","content":"Allowed"}"#,
            r#"{"event":"approval_requested","id":"approval-2","tool_name":"shell","detail":"run it","body":null}"#,
        ])
        .await;
        s.send(r#"{"command":"cancel"}"#).await;
        s.expect(&[
            r#"{"event":"approval_resolved","id":"approval-2","outcome":"cancelled"}"#,
            r#"{"event":"assistant_delta","content":"Cancelled"}"#,
            r#"{"event":"agent_aborted","reason":"interrupted"}"#,
        ])
        .await;
        // Answered after the cancel: nothing to settle.
        s.send(r#"{"command":"approval","id":"approval-2","allow":true}"#).await;
        s.send(&prompt("ask")).await;
        s.expect(&[
            STEP1,
            r#"{"event":"approval_requested","id":"approval-3","tool_name":"shell","detail":"run it","body":null}"#,
        ])
        .await;
        let (rest, stopped) = s.close().await;
        assert_eq!(
            rest,
            [
                r#"{"event":"approval_resolved","id":"approval-3","outcome":"cancelled"}"#,
                r#"{"event":"assistant_delta","content":"Withdrawn"}"#,
                DONE,
            ]
        );
        assert_eq!(stopped, None);
    });
}

#[test]
fn cancel_and_panics_end_a_turn_and_the_loop_goes_on() {
    runtime().block_on(async {
        let mut s = Session::start();
        s.send(&prompt("until-cancel")).await;
        s.send(&prompt("panic")).await;
        s.send(&prompt("fail")).await;
        s.expect(&[STEP1]).await;
        s.send(r#"{"command":"cancel"}"#).await;
        s.expect(&[
            r#"{"event":"agent_aborted","reason":"interrupted"}"#,
            STEP1,
            r#"{"event":"turn_failed","error":"the turn panicked: a bug in the turn"}"#,
            STEP1,
            r#"{"event":"turn_failed","error":"the model said no"}"#,
        ])
        .await;
        s.send(r#"{"command":"compact"}"#).await;
        s.expect(&[r#"{"event":"compaction_failed","error":"this engine does not compact"}"#])
            .await;
        assert_eq!(s.close().await, (vec![], None));
    });
}

/// After a turn that finished, the engine's own prediction, written once
/// it completes; a prompt cancels the next one, silently (loop.mbt @
/// fdf10827).
#[test]
fn a_finished_turn_is_followed_by_the_engines_prediction_until_a_prompt_cancels_it() {
    runtime().block_on(async {
        let mut s = Session::start();
        s.send(&prompt("predict")).await;
        s.expect(&[STEP1, DONE]).await;
        s.gate.add_permits(1);
        s.expect(&[r#"{"event":"prediction_result","source_sequence":5,"outcome":{"kind":"completed","text":"next","input_tokens":1,"output_tokens":1}}"#])
            .await;
        s.send(&prompt("predict")).await;
        s.expect(&[STEP1, DONE]).await;
        s.send(&prompt("delta:x")).await;
        s.expect(&[STEP1, r#"{"event":"assistant_delta","content":"x"}"#, DONE])
            .await;
        s.gate.add_permits(1);
        assert_eq!(s.close().await, (vec![], None));
    });
}

#[test]
fn after_a_line_that_is_not_json_it_reads_no_more() {
    runtime().block_on(async {
        let mut s = Session::start();
        s.send("{\"command\":").await;
        s.send(r#"{"command":"jobs_snapshot","request_id":"never"}"#).await;
        let (rest, stopped) = s.close().await;
        assert_eq!(
            rest,
            [r#"{"event":"command_error","error":"command stream: unexpected end of line at byte 11"}"#]
        );
        assert_eq!(stopped.as_deref(), Some("line 1: unexpected end of line at byte 11"));
    });
}

fn command() -> impl Strategy<Value = String> {
    let turn = prop::collection::vec(
        prop_oneof![
            Just("delta:x"),
            Just("steers"),
            Just("nap"),
            Just("ask"),
            Just("fail")
        ],
        0..4,
    )
    .prop_map(|words| prompt(&words.join(" ")));
    prop_oneof![
        4 => turn,
        2 => prop::option::of(Just("s1")).prop_map(|tag| match tag {
            Some(tag) => format!(r#"{{"command":"steer","content":"a","submission_id":"{tag}"}}"#),
            None => r#"{"command":"steer","content":"a"}"#.to_owned(),
        }),
        1 => Just(r#"{"command":"steer","kind":"command","content":"ls"}"#.to_owned()),
        2 => Just(r#"{"command":"cancel"}"#.to_owned()),
        1 => Just(r#"{"command":"compact"}"#.to_owned()),
        1 => any::<bool>().prop_map(|auto| format!(r#"{{"command":"goal","action":"set","text":"g","auto":{auto}}}"#)),
        1 => Just(r#"{"command":"goal","action":"clear"}"#.to_owned()),
        2 => (1..4u8, any::<bool>()).prop_map(|(n, allow)| format!(r#"{{"command":"approval","id":"approval-{n}","allow":{allow}}}"#)),
        1 => Just(r#"{"command":"jobs_snapshot","request_id":"j"}"#.to_owned()),
        1 => Just(r#"{"command":"job_stop","request_id":"k","generation":"g","job_id":"x"}"#.to_owned()),
        1 => Just(r#"{"command":"nap"}"#.to_owned()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Whatever a controller sends, with what timing, every event the loop
    /// writes fits a rule of the controller's model, and nothing is owed
    /// once the input and the work have ended.
    #[test]
    fn every_event_the_tokio_loop_writes_is_attributed(
        commands in prop::collection::vec((command(), 0..3u64), 0..14),
    ) {
        runtime().block_on(async {
            let mut s = Session::start();
            s.gate.add_permits(1000);
            for (line, pause) in &commands {
                s.send(line).await;
                tokio::time::sleep(Duration::from_millis(*pause)).await;
            }
            assert_eq!(s.close().await.1, None);
        });
    }
}
