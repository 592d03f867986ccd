//! `cargo bench -p serve-command-bench --bench fuzz_engine`: what judging
//! costs `fuzz-engine` per session, against the floor of spawning the same
//! engine and feeding it the same session with nothing judged.
//!
//! Groups `fuzz_engine/floor` (spawn the mock engine, write the session's
//! lines, each after its pause, close its stdin, read its stdout to the
//! end, wait for it) and
//! `fuzz_engine/judged` (the workbench's `Runner` on the same sessions:
//! each line sent at its point of the conversation, every event attributed
//! by the model, the verdict built, the process group killed), both over
//! the same 20 generated sessions (seed 1), with throughput in sessions.
//!
//! The engine is this bench's own binary, started with
//! `SERVE_COMMAND_BENCH_ENGINE=1`: it then serves stdin to stdout with
//! `MockEngine`, exactly what `serve-command mock-engine` runs.

use criterion::{criterion_group, Criterion, Throughput};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serve_command::workbench::{sessions, Action, After, MockEngine, Runner, Session};
use std::io::{self, Read, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

const SESSIONS: usize = 20;
const ENGINE: &str = "SERVE_COMMAND_BENCH_ENGINE";

/// The sessions `fuzz-engine --seed 1` starts with.
fn generated() -> Vec<Session> {
    let mut seed = [0u8; 32];
    seed[..8].copy_from_slice(&1u64.to_le_bytes());
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &seed);
    let mut runner = TestRunner::new_with_rng(Config::default(), rng);
    let strategy = sessions(6);
    (0..SESSIONS)
        .map(|_| strategy.new_tree(&mut runner).unwrap().current())
        .collect()
}

fn engine() -> Command {
    let mut engine = Command::new(std::env::current_exe().unwrap());
    engine.env(ENGINE, "1");
    engine
}

/// The floor: the session's lines written in order, each after its pause
/// (`{"ms":K}`) as the runner takes it, every other point at once (an
/// approval with the id the mock engine gives its first question);
/// nothing read but bytes.
fn floor(session: &Session) {
    let mut lines = Vec::new();
    for step in session.steps() {
        let pause = match step.after {
            After::Pause(d) => d,
            _ => Duration::ZERO,
        };
        let line = match &step.action {
            Action::Send(line) => line.clone(),
            Action::Approve { asked, allow } => {
                format!(r#"{{"command":"approval","id":"approval-{asked}","allow":{allow}}}"#)
                    .into_bytes()
            }
            _ => continue,
        };
        lines.push((pause, line));
    }
    let mut child = engine()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        for (pause, mut line) in lines {
            std::thread::sleep(pause);
            line.push(b'\n');
            if stdin.write_all(&line).is_err() {
                return;
            }
        }
    });
    let mut out = Vec::new();
    child.stdout.take().unwrap().read_to_end(&mut out).unwrap();
    writer.join().unwrap();
    child.wait().unwrap();
    std::hint::black_box(out);
}

fn bench(c: &mut Criterion) {
    let sessions = generated();
    let runner = Runner::new();
    // Every session holds on the mock engine: the judged arm is a clean run.
    for session in &sessions {
        let verdict = runner.run(session, &mut engine()).unwrap();
        assert!(verdict.holds(), "{verdict}");
    }
    let mut g = c.benchmark_group("fuzz_engine");
    g.throughput(Throughput::Elements(SESSIONS as u64));
    g.bench_function("floor", |b| {
        b.iter(|| sessions.iter().for_each(floor));
    });
    g.bench_function("judged", |b| {
        b.iter(|| {
            for session in &sessions {
                std::hint::black_box(runner.run(session, &mut engine()).unwrap());
            }
        });
    });
    g.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(8))
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench
}

fn main() {
    if std::env::var_os(ENGINE).is_some() {
        let stdin = io::stdin();
        let _ = MockEngine::new().serve(io::BufReader::new(stdin), io::stdout());
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
