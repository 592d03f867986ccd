//! The controller and a trace of the same wire agree: random sessions run
//! through `v2::serve::Controller` against `MockEngine` in process, every
//! byte each way recorded in the order it crossed; the recording is then
//! attributed afresh by a `Conversation` (as `serve-command trace` and the
//! tap do), and each turn the controller returned, each reply and each
//! notice must be what that attribution says.
#![cfg(feature = "workbench")]

#[path = "support/pipe.rs"]
mod pipe;

use proptest::prelude::*;
use serve_command::v2::serve::{Attribution, Controller, Reply};
use serve_command::v2::{Command, Event, SteerKind};
use serve_command::workbench::MockEngine;
use std::io::{self, BufReader, Read, Write};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One direction of the wire.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Dir {
    Command,
    Event,
}

/// Every chunk written or read, in the order it crossed.
type Log = Arc<Mutex<Vec<(Dir, Vec<u8>)>>>;

/// The controller's writer: a chunk is logged before the engine can see it.
struct LogWrites<W>(W, Log);

impl<W: Write> Write for LogWrites<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.1.lock().unwrap().push((Dir::Command, buf.to_vec()));
        self.0.write_all(buf)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

/// The controller's reader: a chunk is logged before the controller sees it.
struct LogReads<R>(R, Log);

impl<R: Read> Read for LogReads<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.0.read(buf)?;
        self.1.lock().unwrap().push((Dir::Event, buf[..n].to_vec()));
        Ok(n)
    }
}

/// One call a controller makes.
#[derive(Clone, Debug)]
enum Op {
    Prompt(String),
    Steer(SteerKind, bool),
    Jobs,
    JobStop,
    Goal(Option<String>),
    Compact,
    Cancel,
    NotACommand,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => "[a-z ]{0,12}".prop_map(Op::Prompt),
        1 => (prop_oneof![Just(SteerKind::Prompt), Just(SteerKind::Command)], any::<bool>())
            .prop_map(|(kind, tagged)| Op::Steer(kind, tagged)),
        1 => Just(Op::Jobs),
        1 => Just(Op::JobStop),
        1 => proptest::option::of("[a-z]{1,8}").prop_map(Op::Goal),
        1 => Just(Op::Compact),
        1 => Just(Op::Cancel),
        1 => Just(Op::NotACommand),
    ]
}

/// Each event line of a recording: its attribution, and the event.
type Traced = Vec<(Attribution, Option<Event>)>;

/// The recording attributed afresh, in order.
fn replay(log: &[(Dir, Vec<u8>)]) -> Traced {
    let mut model = serve_command::v2::serve::Conversation::new();
    let (mut commands, mut events) = (Vec::new(), Vec::new());
    let mut out = Vec::new();
    for (dir, chunk) in log {
        let held = if *dir == Dir::Command {
            &mut commands
        } else {
            &mut events
        };
        held.extend_from_slice(chunk);
        while let Some(lf) = held.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = held.drain(..=lf).collect();
            match dir {
                Dir::Command => {
                    model.command(&line);
                }
                Dir::Event => out.push((model.event(&line), Event::from_slice(&line).ok())),
            }
        }
    }
    out
}

/// What the controller said of one call: the command line it wrote, and
/// the events it returned as that command's (a turn's, in order), or the
/// kind of event its reply came from.
#[derive(Debug)]
enum Said {
    Turn(u64, Vec<Event>),
    Reply(u64, &'static str),
    Nothing,
}

/// The session through the controller: what it said of each call, the
/// notices, and the trace of its wire.
fn run(ops: &[Op]) -> (Vec<Said>, Vec<Attribution>, Traced) {
    let log: Log = Arc::default();
    let engine = MockEngine::new();
    let (commands_in, commands_out) = pipe::pipe();
    let (events_in, events_out) = pipe::pipe();
    std::thread::spawn(move || engine.serve(BufReader::new(commands_in), events_out));
    let controller = Controller::attach(
        LogReads(events_in, Arc::clone(&log)),
        LogWrites(commands_out, Arc::clone(&log)),
    )
    .with_timeout(Duration::from_secs(10));
    let lines = || {
        log.lock()
            .unwrap()
            .iter()
            .filter(|(dir, _)| *dir == Dir::Command)
            .map(|(_, chunk)| chunk.iter().filter(|&&b| b == b'\n').count() as u64)
            .sum::<u64>()
    };
    let mut said = Vec::new();
    for op in ops {
        let reply = |command: Command| {
            let reply = controller.request(command).expect("a reply");
            let kind = match reply {
                Reply::Jobs(_) => "jobs_snapshot",
                Reply::JobStop(_) => "job_stop_result",
                Reply::Steer(serve_command::v2::serve::Steered::Dropped) => "steer_dropped",
                Reply::Steer(_) => "steer_applied",
                Reply::Goal(_) => "goal_updated",
                Reply::Compaction(serve_command::v2::serve::Compaction::Failed(_)) => {
                    "compaction_failed"
                }
                Reply::Compaction(_) => "compaction_finished",
                _ => "",
            };
            Said::Reply(lines(), kind)
        };
        said.push(match op {
            Op::Prompt(text) => {
                let turn = controller.prompt(text.as_str()).unwrap().wait().unwrap();
                Said::Turn(turn.command.get(), turn.events)
            }
            Op::Steer(kind, tagged) => reply(if *tagged {
                Command::steer_tagged(*kind, "now", "s")
            } else {
                Command::steer(*kind, "now")
            }),
            Op::Jobs => reply(Command::jobs_snapshot("r")),
            Op::JobStop => reply(Command::job_stop("r", "g", "j")),
            Op::Goal(Some(text)) => reply(Command::goal_set(text.as_str())),
            Op::Goal(None) => reply(Command::GoalClear),
            Op::Compact => reply(Command::Compact),
            Op::Cancel => {
                controller.cancel().unwrap();
                Said::Nothing
            }
            Op::NotACommand => {
                let cause = controller.send_line(br#"{"command":"nap"}"#).unwrap();
                assert!(cause.is_some(), "a refused line is answered");
                Said::Reply(lines(), "command_error")
            }
        });
    }
    let notices = controller
        .notices()
        .into_iter()
        .map(|notice| notice.attribution().clone())
        .collect();
    controller.close().unwrap();
    let log = log.lock().unwrap().clone();
    (said, notices, replay(&log))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn the_controller_attributes_as_a_trace_of_its_wire_does(ops in prop::collection::vec(op(), 1..12)) {
        let (said, notices, traced) = run(&ops);
        for said in &said {
            match said {
                Said::Turn(command, events) => {
                    let of_turn: Vec<&Event> = traced
                        .iter()
                        .filter(|(a, _)| a.turn == Some(*command))
                        .filter_map(|(_, e)| e.as_ref())
                        .collect();
                    prop_assert_eq!(of_turn, events.iter().collect::<Vec<_>>(), "turn of {}", command);
                }
                Said::Reply(command, kind) => {
                    let answers: Vec<Option<&str>> = traced
                        .iter()
                        .filter(|(a, _)| a.answers == Some(*command))
                        .map(|(a, _)| a.event)
                        .collect();
                    prop_assert!(answers.contains(&Some(*kind)), "command {}: {:?} in {:?}", command, kind, answers);
                }
                Said::Nothing => {}
            }
        }
        // What answered nothing and belonged to no turn the controller
        // returned: the same lines, attributed the same.
        for notice in &notices {
            let traced = traced.iter().find(|(a, _)| a.n == notice.n).map(|(a, _)| a);
            prop_assert_eq!(traced, Some(notice));
        }
        // No event of a wire the mock engine wrote fits no rule.
        let violations: Vec<&Attribution> = traced.iter().map(|(a, _)| a).filter(|a| a.violation.is_some()).collect();
        prop_assert!(violations.is_empty(), "{:?}", violations);
    }
}
