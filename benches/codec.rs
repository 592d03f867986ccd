//! `cargo bench --bench codec`: the codec against what a user would otherwise
//! write, side by side, on deterministic inputs built here.
//!
//! Groups `decode/<input>` and `encode/<input>`; every benchmark reports
//! throughput in bytes of the wire lines. `scripts/bench_report.py` turns
//! criterion's output into `BENCHMARKS.md`'s table and chart.

use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};
use serde::Deserialize;
use serde_json::Value;
use serve_command::{Command, SteerKind};
use std::hint::black_box;
use std::time::Duration;

// ---------------------------------------------------------------------------
// Contenders that are not the crate.

/// What a user would write first: an internally tagged derive approximating
/// the wire. serde buffers every field of such an enum through its private
/// `Content` type before it picks the variant (serde-rs/serde#1495).
#[allow(dead_code)] // the fields are only ever built
#[derive(Deserialize)]
#[serde(tag = "command", rename_all = "snake_case")]
enum TaggedWire {
    Prompt {
        text: String,
        submission_id: Option<String>,
    },
    Steer {
        #[serde(default)]
        kind: Option<TaggedKind>,
        text: String,
    },
    Compact,
    Cancel,
    Goal {
        action: TaggedAction,
        text: Option<String>,
        #[serde(default)]
        auto: bool,
    },
    Approval {
        id: String,
        allow: bool,
    },
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum TaggedKind {
    Prompt,
    Command,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum TaggedAction {
    Set,
    Clear,
}

// ---------------------------------------------------------------------------
// Inputs.

/// A small deterministic generator (xorshift64*), so every run benchmarks
/// the same bytes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const WORDS: &[&str] = &[
    "fix",
    "the",
    "failing",
    "test",
    "in",
    "src/lib.rs",
    "and",
    "run",
    "cargo",
    "clippy",
    "please",
    "look",
    "at",
    "parser",
    "first",
    "then",
    "docs",
    "why",
    "does",
    "build",
    "break",
    "on",
    "CI",
    "rename",
    "module",
    "keep",
    "API",
    "stable",
    "add",
    "a",
    "benchmark",
    "for",
    "decoder",
];

/// Plain words, `len` bytes or a little under.
fn words(rng: &mut Rng, len: usize) -> String {
    let mut s = String::new();
    loop {
        let w = WORDS[rng.below(WORDS.len())];
        if s.len() + w.len() + 1 > len {
            return s;
        }
        if !s.is_empty() {
            s.push(' ');
        }
        s.push_str(w);
    }
}

/// Plain words for a line of `overhead` bytes plus the quoted text, so that
/// the line is 40 to 120 bytes long.
fn line_text(rng: &mut Rng, overhead: usize) -> String {
    let (min, max) = (40 - overhead - 2, 120 - overhead - 2);
    let target = min + rng.below(max - min + 1);
    let mut s = String::new();
    while s.len() < target && s.len() + 2 <= max {
        let w = WORDS[rng.below(WORDS.len())];
        if s.len() + w.len() < max {
            if !s.is_empty() {
                s.push(' ');
            }
            s.push_str(w);
        }
    }
    s
}

fn json(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

/// Realistic lines, one or two of every command, tagged and untagged. Lines
/// that carry text are 40 to 120 bytes; `compact`, `cancel` and goal `clear`
/// are as short as the wire makes them.
fn small_lines() -> Vec<String> {
    let mut rng = Rng(0x5eed_0001);
    let mut lines = Vec::new();
    for round in 0..6 {
        let p = line_text(&mut rng, 28);
        lines.push(format!(r#"{{"command":"prompt","text":{}}}"#, json(&p)));
        let p = line_text(&mut rng, 55);
        lines.push(format!(
            r#"{{"command":"prompt","text":{},"submission_id":"s-{:04}"}}"#,
            json(&p),
            round * 7 + 1
        ));
        let s = line_text(&mut rng, 27);
        lines.push(format!(r#"{{"command":"steer","text":{}}}"#, json(&s)));
        let s = line_text(&mut rng, 43);
        lines.push(format!(
            r#"{{"command":"steer","kind":"prompt","text":{}}}"#,
            json(&s)
        ));
        lines.push(format!(
            r#"{{"command":"steer","kind":"command","text":"/review {}"}}"#,
            words(&mut rng, 20)
        ));
        lines.push(r#"{"command":"compact"}"#.to_owned());
        lines.push(r#"{"command":"cancel"}"#.to_owned());
        let g = line_text(&mut rng, 54);
        let auto = if round % 2 == 0 {
            r#","auto":true"#
        } else {
            ""
        };
        lines.push(format!(
            r#"{{"command":"goal","action":"set","text":{}{auto}}}"#,
            json(&g)
        ));
        lines.push(r#"{"command":"goal","action":"clear"}"#.to_owned());
        lines.push(format!(
            r#"{{"command":"approval","id":"call_{:016x}","allow":{}}}"#,
            rng.next(),
            round % 3 != 0
        ));
    }
    for l in &lines {
        let carries_text = l.contains("\"text\"") || l.contains("\"id\"");
        assert!(!carries_text || (40..=120).contains(&l.len()), "{l}");
    }
    lines
}

/// Lines carrying what a newer or chattier controller might add: unknown
/// fields holding nested arrays and objects, numbers, `null`, and escaped
/// strings (in unknown fields and in the ones read).
fn noisy_lines() -> Vec<String> {
    let mut rng = Rng(0x5eed_0002);
    let mut lines = Vec::new();
    for round in 0..6 {
        let meta = format!(
            r#""meta":{{"client":"tui/0.{round}","tags":["a","b\"c",{{"x":[1,-2.5e3,null,true,false]}}],"note":"say \"hi\"\n\ttwice \u00e9\u65e5"}}"#
        );
        let trace = r#""trace":[[1,[2,[3,[]]]],{"k":{"k":{"k":{}}}},"\\path\\to\\file"]"#;
        let text = json(&format!("{} \"quoted\"\n\tend", words(&mut rng, 30)));
        lines.push(format!(
            r#"{{"v":1,"command":"prompt",{meta},"text":{text},"submission_id":"s-{round}",{trace}}}"#
        ));
        lines.push(format!(
            r#"{{ "command" : "steer" , "kind":"command", "seq": {}, {trace}, "text" : "/diff \u0041\u00e9" }}"#,
            rng.below(100000)
        ));
        lines.push(format!(
            r#"{{{meta},"command":"cancel","at":1733000000.25}}"#
        ));
        lines.push(format!(
            r#"{{"command":"goal","action":"set","text":{text},"auto":true,{meta},"budget":{{"turns":12,"tokens":null}}}}"#
        ));
        lines.push(format!(
            r#"{{"command":"approval",{trace},"id":"call_{:08x}","allow":false,"reason":"user said \"no\""}}"#,
            rng.next() as u32
        ));
        lines.push(format!(r#"{{"comm\u0061nd":"c\u006fmpact",{meta}}}"#));
    }
    lines
}

const MIB: usize = 1 << 20;

/// One prompt whose text is 1 MiB of plain ASCII prose.
fn ascii_mib() -> String {
    let mut rng = Rng(0x5eed_0003);
    let mut text = String::with_capacity(MIB + 64);
    while text.len() < MIB {
        text.push_str(&words(&mut rng, 70));
        text.push_str(". ");
    }
    text.truncate(MIB);
    Command::Prompt {
        text,
        submission_id: Some("s-big".into()),
    }
    .to_line()
}

/// One prompt whose text is 1 MiB heavy in escapes and non-ASCII: quotes,
/// backslashes, newlines, tabs, a control character, `é日本😀`.
fn escaped_mib() -> String {
    const PIECES: &[&str] = &[
        "\"",
        "\n",
        "\t",
        "\\",
        "é",
        "日本",
        "😀",
        "\u{1}",
        "say ",
        "ok",
        " ",
        "fn main() {",
        "}",
    ];
    let mut rng = Rng(0x5eed_0004);
    let mut text = String::with_capacity(MIB + 64);
    while text.len() < MIB {
        text.push_str(PIECES[rng.below(PIECES.len())]);
    }
    Command::Prompt {
        text,
        submission_id: None,
    }
    .to_line()
}

struct Input {
    name: &'static str,
    lines: Vec<String>,
}

impl Input {
    fn bytes(&self) -> u64 {
        self.lines.iter().map(|l| l.len() as u64).sum()
    }
}

fn inputs() -> Vec<Input> {
    vec![
        Input {
            name: "small",
            lines: small_lines(),
        },
        Input {
            name: "noisy",
            lines: noisy_lines(),
        },
        Input {
            name: "ascii_1mib",
            lines: vec![ascii_mib()],
        },
        Input {
            name: "escaped_1mib",
            lines: vec![escaped_mib()],
        },
    ]
}

/// Every contender must accept every line, and read the same command: a
/// benchmark of a path that fails early would measure nothing.
fn check(input: &Input) {
    for line in &input.lines {
        let cmd = Command::from_slice(line.as_bytes())
            .unwrap_or_else(|e| panic!("{}: {e}: {line}", input.name));
        let via_value = Command::parse(&serde_json::from_str::<Value>(line).unwrap()).unwrap();
        assert_eq!(cmd, via_value, "{}: {line}", input.name);
        serde_json::from_str::<TaggedWire>(line)
            .unwrap_or_else(|e| panic!("{}: tagged: {e}: {line}", input.name));
        serde_json::from_str::<serde::de::IgnoredAny>(line).unwrap();
    }
}

// ---------------------------------------------------------------------------
// Benchmarks.

fn decode(c: &mut Criterion) {
    for input in inputs() {
        check(&input);
        let lines: Vec<&[u8]> = input.lines.iter().map(|l| l.as_bytes()).collect();
        let mut g = c.benchmark_group(format!("decode/{}", input.name));
        g.throughput(Throughput::Bytes(input.bytes()));
        g.bench_function("from_slice", |b| {
            b.iter(|| {
                for &line in &lines {
                    black_box(Command::from_slice(black_box(line)).unwrap());
                }
            })
        });
        g.bench_function("value_path", |b| {
            b.iter(|| {
                for &line in &lines {
                    let v: Value = serde_json::from_slice(black_box(line)).unwrap();
                    black_box(Command::parse(&v).unwrap());
                }
            })
        });
        g.bench_function("tagged_derive", |b| {
            b.iter(|| {
                for &line in &lines {
                    black_box(serde_json::from_slice::<TaggedWire>(black_box(line)).unwrap());
                }
            })
        });
        g.bench_function("ignored_any_floor", |b| {
            b.iter(|| {
                for &line in &lines {
                    black_box(
                        serde_json::from_slice::<serde::de::IgnoredAny>(black_box(line)).unwrap(),
                    );
                }
            })
        });
        g.finish();
    }
}

/// The strings a command owns: what the encoding floor writes.
fn owned_strs(cmd: &Command) -> Vec<&str> {
    match cmd {
        Command::Prompt {
            text,
            submission_id,
        } => std::iter::once(text.as_str())
            .chain(submission_id.as_deref())
            .collect(),
        Command::Steer { text, .. } | Command::GoalSet { text, .. } => vec![text],
        Command::ApprovalDecision { id, .. } => vec![id],
        _ => vec![],
    }
}

fn encode(c: &mut Criterion) {
    for input in inputs() {
        if input.name == "noisy" {
            // The same commands as `small`, once decoded: nothing new to write.
            continue;
        }
        let cmds: Vec<Command> = input
            .lines
            .iter()
            .map(|l| Command::from_slice(l.as_bytes()).unwrap())
            .collect();
        // The steer kinds of the mix are both present.
        if input.name == "small" {
            assert!(cmds.iter().any(|c| matches!(
                c,
                Command::Steer {
                    kind: SteerKind::Command,
                    ..
                }
            )));
        }
        let out_bytes: u64 = cmds.iter().map(|c| c.to_line().len() as u64).sum();
        let strs: Vec<&str> = cmds.iter().flat_map(owned_strs).collect();
        let mut buf: Vec<u8> = Vec::with_capacity(out_bytes as usize * 2 + 64);
        let mut g: BenchmarkGroup<_> = c.benchmark_group(format!("encode/{}", input.name));
        g.throughput(Throughput::Bytes(out_bytes));
        g.bench_function("write_line", |b| {
            b.iter(|| {
                buf.clear();
                for cmd in &cmds {
                    black_box(cmd).write_line(&mut buf).unwrap();
                }
                black_box(&buf);
            })
        });
        g.bench_function("to_line", |b| {
            b.iter(|| {
                for cmd in &cmds {
                    black_box(black_box(cmd).to_line());
                }
            })
        });
        g.bench_function("to_json_to_writer", |b| {
            b.iter(|| {
                buf.clear();
                for cmd in &cmds {
                    serde_json::to_writer(&mut buf, &black_box(cmd).to_json()).unwrap();
                    buf.push(b'\n');
                }
                black_box(&buf);
            })
        });
        g.bench_function("floor", |b| {
            b.iter(|| {
                buf.clear();
                for s in &strs {
                    serde_json::to_writer(&mut buf, black_box(s)).unwrap();
                }
                black_box(&buf);
            })
        });
        g.finish();
    }
}

fn config() -> Criterion {
    // Modest, so the whole run stays well under five minutes on two cores.
    Criterion::default()
        .sample_size(30)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .noise_threshold(0.03)
}

criterion_group! {
    name = benches;
    config = config();
    targets = decode, encode
}
criterion_main!(benches);
