//! An engine in process, attached over `v2::serve::pipe`: the workbench's
//! `MockEngine` and an `EngineLoop` engine on a thread each, driven by a
//! `Controller`. Closing the controller ends the engine's input, the engine
//! returns, and its output's end reaches the controller: `close()` answers
//! at once and the engine's thread has returned. An engine that returns
//! first stops the calls still waiting. On tokio, the same over
//! `tokio::io::duplex`, which closes on drop as well.

use serve_command::v2::serve::{
    pipe, Controller, ControllerError, Engine, EngineLoop, PipeReader, PipeWriter, RunningTurn,
    TurnEnd, WorkError,
};
use serve_command::v2::{Event, JobRecord, JobState};
use std::io::{self, BufRead, BufReader};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// The bound on every call: a hang fails the test rather than holding it.
const WAIT: Duration = Duration::from_secs(20);
/// How soon `close()` must answer once the engine's input ended.
const CLOSED_WITHIN: Duration = Duration::from_secs(1);

/// An engine on the crate's loop: one step, its answer streamed in two
/// deltas; one background job.
struct Echo;

impl Engine for Echo {
    fn turn(&self, turn: &mut RunningTurn<'_>) -> Result<String, WorkError> {
        let text = turn.content().to_text();
        turn.emit(&Event::agent_step(1))?;
        turn.emit(&Event::assistant_delta("You said: "))?;
        turn.emit(&Event::assistant_delta(text.as_str()))?;
        Ok(format!("You said: {text}"))
    }

    fn jobs(&self) -> Vec<JobRecord> {
        vec![job()]
    }
}

fn job() -> JobRecord {
    JobRecord::new("g1", "job-1", 1, "cargo test", JobState::Running, 1, 2)
}

/// A controller attached over two pipes to `serve` on a thread, given the
/// engine's ends (its input, its output).
fn attach<T: Send + 'static>(
    serve: impl FnOnce(PipeReader, PipeWriter) -> T + Send + 'static,
) -> (Controller, JoinHandle<T>) {
    let (commands_in, commands_out) = pipe();
    let (events_in, events_out) = pipe();
    let engine = thread::spawn(move || serve(commands_in, events_out));
    let controller = Controller::attach(events_in, commands_out).with_timeout(WAIT);
    (controller, engine)
}

/// Closes the controller: `Ok(None)` (no exit status in process) within
/// [`CLOSED_WITHIN`], and the engine's thread has returned by then.
#[track_caller]
fn close_in_time<T>(controller: Controller, engine: &JoinHandle<T>) {
    let started = Instant::now();
    let closed = controller.close();
    let took = started.elapsed();
    assert!(matches!(closed, Ok(None)), "close gave {closed:?}");
    assert!(took < CLOSED_WITHIN, "close took {took:?}");
    // The controller saw the engine's output close: the engine returned,
    // so its thread ends at once.
    while !engine.is_finished() {
        assert!(started.elapsed() < CLOSED_WITHIN, "the engine still runs");
        thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn an_engine_loop_engine_over_pipes_answers_and_closes() {
    let (controller, engine) =
        attach(|input, output| EngineLoop::new(Echo).serve(BufReader::new(input), output));

    let turn = controller.prompt("hello there").unwrap().wait().unwrap();
    assert_eq!(turn.end, TurnEnd::Finished("You said: hello there".into()));
    assert_eq!(
        turn.events,
        [
            Event::agent_step(1),
            Event::assistant_delta("You said: "),
            Event::assistant_delta("hello there"),
            Event::agent_finished("You said: hello there"),
        ]
    );
    assert_eq!(controller.jobs_snapshot().unwrap(), [job()]);

    close_in_time(controller, &engine);
    // The end of its input, not a line it could not read.
    assert!(matches!(engine.join().unwrap(), Ok(None)));
}

#[cfg(feature = "workbench")]
#[test]
fn the_mock_engine_over_pipes_answers_and_closes() {
    use serve_command::v2::Usage;
    use serve_command::workbench::MockEngine;

    let mock = MockEngine::with_script("{}").unwrap();
    let (controller, engine) =
        attach(move |input, output| mock.serve(BufReader::new(input), output));

    let turn = controller.prompt("hello there").unwrap().wait().unwrap();
    assert_eq!(turn.answer(), Some("You asked: hello there"));
    assert_eq!(
        turn.events,
        [
            Event::agent_step(1),
            Event::assistant_delta("You asked: "),
            Event::assistant_delta("hello there"),
            Event::assistant_message("You asked: hello there"),
            Event::usage(Usage::new(2, 2, 4, 0, 2)),
            Event::agent_finished("You asked: hello there"),
        ]
    );
    assert_eq!(controller.jobs_snapshot().unwrap(), []);

    close_in_time(controller, &engine);
    assert!(matches!(engine.join().unwrap(), Ok(None)));
}

/// An engine that reads one command and returns, dropping both its ends:
/// the call waiting on that command fails with the typed stop, and so does
/// every later call.
#[test]
fn an_engine_that_returns_first_stops_the_waiting_call() {
    let (controller, engine) = attach(|input, _output| -> io::Result<String> {
        let mut line = String::new();
        BufReader::new(input).read_line(&mut line)?;
        // Long enough for the call to be waiting when the end comes.
        thread::sleep(Duration::from_millis(50));
        Ok(line)
    });

    let started = Instant::now();
    let waited = controller.jobs_snapshot();
    assert!(
        matches!(waited, Err(ControllerError::Stopped(_))),
        "the waiting call gave {waited:?}"
    );
    assert!(started.elapsed() < WAIT / 2, "the stop came late");
    let stopped = controller
        .stopped()
        .expect("the controller knows it stopped");
    assert_eq!(stopped.status, None);
    // The engine read the request the call was waiting on.
    let read = engine.join().unwrap().unwrap();
    assert!(
        read.contains("\"jobs_snapshot\""),
        "the engine read {read:?}"
    );

    // Nothing more can be sent to it; closing answers at once.
    assert!(controller.prompt("anyone?").is_err());
    let closed = controller.close();
    assert!(matches!(closed, Ok(None)), "close gave {closed:?}");
}

/// `TokioController::attach` over two `tokio::io::duplex` streams (one a
/// direction, each end whole, so dropping it closes that direction) to a
/// `TokioEngineLoop` engine on a task.
#[cfg(feature = "tokio")]
#[test]
fn a_tokio_engine_over_duplex_streams_answers_and_closes() {
    use serve_command::v2::serve::{TokioController, TokioEngine, TokioEngineLoop};

    struct TokioEcho;

    impl TokioEngine for TokioEcho {
        async fn turn(&self, turn: &mut RunningTurn<'static>) -> Result<String, WorkError> {
            Echo.turn(turn)
        }

        fn jobs(&self) -> Vec<JobRecord> {
            Echo.jobs()
        }
    }

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let (commands_out, commands_in) = tokio::io::duplex(1 << 16);
        let (events_out, events_in) = tokio::io::duplex(1 << 16);
        let engine = tokio::spawn(async move {
            TokioEngineLoop::new(TokioEcho)
                .serve(commands_in, events_out)
                .await
        });
        let controller = TokioController::attach(events_in, commands_out).unwrap();

        let turn = controller
            .prompt("hello there")
            .unwrap()
            .wait()
            .await
            .unwrap();
        assert_eq!(turn.end, TurnEnd::Finished("You said: hello there".into()));
        assert_eq!(controller.jobs_snapshot().await.unwrap(), [job()]);

        let closed = tokio::time::timeout(CLOSED_WITHIN, controller.close())
            .await
            .expect("close answered within a second");
        assert!(matches!(closed, Ok(None)), "close gave {closed:?}");
        let served = tokio::time::timeout(CLOSED_WITHIN, engine)
            .await
            .expect("the engine returned");
        assert!(matches!(served, Ok(Ok(None))), "the engine gave {served:?}");
    });
}
