//! `cargo bench -p serve-command-bench --bench conversation`: what the
//! model of upstream's serve loop (`v2::serve::Conversation`, which `tap`
//! and `trace` feed every line) costs per event, beside decoding the same
//! event lines with `Event::from_slice`.
//!
//! Groups `conversation/decode` (every event line through
//! `Event::from_slice`) and `conversation/attribute` (a fresh
//! `Conversation` fed the session's command and event lines in the order
//! they cross: it decodes each event itself, so the model's own cost is the
//! difference), both with throughput in event lines.
//!
//! The session: 50 typical turns, each a prompt and the events a turn
//! writes: `agent_step`, 8 reasoning deltas, `reasoning_message`, a
//! `tool_result`, a second `agent_step`, 32 assistant deltas,
//! `assistant_message`, `usage` and `agent_finished` (47 events a turn).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use serve_command::v2::serve::record::{LogReader, Wire};
use serve_command::v2::serve::{Conversation, Direction, Recorder};
use serve_command::v2::{Command, Event, Usage};
use serve_command::workbench::{Compare, Transcript};
use std::hint::black_box;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const TURNS: usize = 50;

/// A line without its LF.
fn line(event: &Event) -> Vec<u8> {
    let mut line = event.to_line().into_bytes();
    line.pop();
    line
}

/// The session's lines in the order they cross: `(is a command, line)`.
fn session() -> Vec<(bool, Vec<u8>)> {
    let mut lines = Vec::new();
    for turn in 0..TURNS {
        let mut prompt =
            Command::prompt(format!("turn {turn}: fix the failing test in src/lib.rs"))
                .to_line()
                .into_bytes();
        prompt.pop();
        lines.push((true, prompt));
        let mut events = vec![Event::agent_step(1)];
        for i in 0..8 {
            events.push(Event::reasoning_delta(format!("thinking {i} ")));
        }
        events.push(Event::reasoning_message("thinking about the test"));
        events.push(Event::tool_result(
            format!("call-{turn}"),
            "shell",
            "test result: ok. 12 passed; 0 failed",
            None,
        ));
        events.push(Event::agent_step(2));
        for i in 0..32 {
            events.push(Event::assistant_delta(format!("word{i} ")));
        }
        events.push(Event::assistant_message("The test passes now."));
        events.push(Event::usage(Usage::new(1200, 80, 1280, 1024, 176)));
        events.push(Event::agent_finished("The test passes now."));
        lines.extend(events.iter().map(|e| (false, line(e))));
    }
    lines
}

fn bench(c: &mut Criterion) {
    let session = session();
    let events: Vec<&[u8]> = session
        .iter()
        .filter(|(command, _)| !command)
        .map(|(_, line)| line.as_slice())
        .collect();
    // The model attributes every event of the session, with no violation.
    let mut check = Conversation::new();
    for (command, line) in &session {
        if *command {
            check.command(line);
        } else {
            let a = check.event(line);
            assert!(a.turn.is_some() && a.violation.is_none(), "{a:?}");
        }
    }
    assert!(check.owed().is_empty());

    let mut g = c.benchmark_group("conversation");
    g.throughput(Throughput::Elements(events.len() as u64));
    g.bench_function("decode", |b| {
        b.iter(|| {
            for line in &events {
                black_box(Event::from_slice(black_box(line)).is_ok());
            }
        });
    });
    g.bench_function("attribute", |b| {
        b.iter(|| {
            let mut conversation = Conversation::new();
            for (command, line) in &session {
                if *command {
                    black_box(conversation.command(black_box(line)));
                } else {
                    black_box(conversation.event(black_box(line)));
                }
            }
        });
    });
    g.finish();

    let log = recording(&session);
    // The comparison finds the recording the same as itself.
    let recorded = Transcript::read(&log[..]).unwrap();
    assert_eq!(recorded.events(), events.len() as u64);
    assert!(recorded.compare(&recorded, &Compare::new()).is_same());
    let mut g = c.benchmark_group("conversation");
    g.throughput(Throughput::Elements(events.len() as u64));
    g.bench_function("trace", |b| {
        b.iter(|| {
            let mut reader = LogReader::new(black_box(&log[..]));
            let mut conversation = Conversation::new();
            while let Some(record) = reader.read_record().unwrap() {
                let Wire::Bytes(line) = record.line else {
                    unreachable!()
                };
                if record.direction == Direction::Command {
                    black_box(conversation.command(&line));
                } else {
                    black_box(conversation.event(&line));
                }
            }
        });
    });
    // Two recordings read per iteration: twice the event lines.
    g.throughput(Throughput::Elements(2 * events.len() as u64));
    g.bench_function("replay", |b| {
        b.iter(|| {
            let recorded = Transcript::read(black_box(&log[..])).unwrap();
            let replayed = Transcript::read(black_box(&log[..])).unwrap();
            black_box(recorded.compare(&replayed, &Compare::new()).is_same())
        });
    });
    g.finish();
}

/// A recording in memory.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The session's recording, as a controller's `Recorder` writes it.
fn recording(session: &[(bool, Vec<u8>)]) -> Vec<u8> {
    let file = Shared::default();
    let recorder = Recorder::new(file.clone());
    for (command, line) in session {
        if *command {
            recorder.command(line);
        } else {
            recorder.event(line);
        }
    }
    recorder.finish(None);
    let log = file.0.lock().unwrap().clone();
    log
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(30)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench
}
criterion_main!(benches);
