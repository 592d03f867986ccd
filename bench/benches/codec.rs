//! `cargo bench -p serve-command-bench`: the codec against what a user would otherwise
//! write, side by side, on deterministic inputs built here.
//!
//! Groups `decode/<input>`, `encode/<input>`, `encode_v2/<input>`,
//! `stream/small_32mib`, `v2/<input>` and `v2/image_1mib`, each
//! reporting throughput in bytes of the wire lines; and
//! `v2_paired/small` and `encode_paired/<input>`, ratios of two times
//! measured in the same rounds (a ratio, not a time).
//! `scripts/bench_report.py` turns criterion's output into `BENCHMARKS.md`'s
//! table and chart.

use criterion::measurement::{Measurement, ValueFormatter};
use criterion::{
    criterion_group, criterion_main, BenchmarkGroup, Criterion, SamplingMode, Throughput,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serve_command::v1::{Command, CommandReader, SteerKind};
use serve_command::v2;
use std::hint::black_box;
use std::io::{BufRead, BufReader};
use std::time::{Duration, Instant};

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

#[derive(Deserialize, Debug)]
#[serde(rename_all = "snake_case")]
enum TaggedKind {
    Prompt,
    Command,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "snake_case")]
enum TaggedAction {
    Set,
    Clear,
}

/// What a performance-minded user would write with serde_json, sonic-rs or
/// simd-json: one flat struct, `command` and every known field, the fields
/// `Option`s, the names enums (no allocation for them), the texts `String`s
/// (owned, as `Command`'s are). Unknown fields are skipped.
#[allow(dead_code)] // the fields are only ever built
#[derive(Deserialize, Debug)]
struct FlatWire {
    command: FlatName,
    text: Option<String>,
    submission_id: Option<String>,
    kind: Option<TaggedKind>,
    action: Option<TaggedAction>,
    auto: Option<bool>,
    id: Option<String>,
    allow: Option<bool>,
}

#[derive(Deserialize, Debug, PartialEq)]
#[serde(rename_all = "snake_case")]
enum FlatName {
    Prompt,
    Steer,
    Compact,
    Cancel,
    Goal,
    Approval,
}

impl FlatWire {
    /// The strings `Command` would own, to check a peer read what we read.
    fn strs(&self) -> Vec<&str> {
        [&self.text, &self.submission_id, &self.id]
            .into_iter()
            .flatten()
            .map(String::as_str)
            .collect()
    }
}

/// What a performance-minded user would write to encode with serde_json
/// or sonic-rs: one flat struct of borrowed fields, in an order that gives
/// every command's keys in the wire's order, absent fields skipped. The
/// bench checks it writes `to_line`'s bytes.
#[derive(Serialize)]
struct FlatOut<'a> {
    command: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    kind: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    action: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a str>,
    /// The later revision's `content`, when it is one text part.
    #[serde(skip_serializing_if = "Option::is_none")]
    content: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    submission_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    auto: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    allow: Option<bool>,
}

impl<'a> FlatOut<'a> {
    fn named(command: &'a str) -> FlatOut<'a> {
        FlatOut {
            command,
            kind: None,
            action: None,
            id: None,
            content: None,
            text: None,
            submission_id: None,
            auto: None,
            allow: None,
        }
    }

    /// The seed revision's command, as the user's struct.
    fn v1(cmd: &'a Command) -> FlatOut<'a> {
        let mut f = FlatOut::named(cmd.name());
        match cmd {
            Command::Prompt {
                text,
                submission_id,
            } => {
                f.text = Some(text);
                f.submission_id = submission_id.as_deref();
            }
            Command::Steer { kind, text } => {
                f.kind = Some(kind.as_str());
                f.text = Some(text);
            }
            Command::GoalSet { text, auto } => {
                f.action = Some("set");
                f.text = Some(text);
                f.auto = auto.then_some(true);
            }
            Command::GoalClear => f.action = Some("clear"),
            Command::ApprovalDecision { id, allow } => {
                f.id = Some(id);
                f.allow = Some(*allow);
            }
            _ => {}
        }
        f
    }

    /// The later revision's command (text content only), as the user's
    /// struct.
    fn v2(cmd: &'a v2::Command) -> FlatOut<'a> {
        let mut f = FlatOut::named(cmd.name());
        match cmd {
            v2::Command::Prompt {
                content,
                submission_id,
                ..
            }
            | v2::Command::Steer {
                content,
                submission_id,
                ..
            } => {
                if let v2::Command::Steer { kind, .. } = cmd {
                    f.kind = Some(kind.as_str());
                }
                f.content = content.as_single_text();
                f.submission_id = submission_id.as_deref();
            }
            v2::Command::GoalSet { text, auto, .. } => {
                f.action = Some("set");
                f.text = Some(text);
                f.auto = auto.then_some(true);
            }
            v2::Command::GoalClear => f.action = Some("clear"),
            v2::Command::ApprovalDecision { id, allow, .. } => {
                f.id = Some(id);
                f.allow = Some(*allow);
            }
            _ => {}
        }
        f
    }
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
    // A command whose keys alone are 40 bytes or more gets no floor.
    let (min, max) = (38usize.saturating_sub(overhead), 120 - overhead - 2);
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

/// One prompt whose text is 1 MiB of pasted code: a newline every line,
/// tabs for indentation, string literals holding escaped quotes, so an
/// escape comes every few bytes among short ASCII runs.
fn code_mib() -> String {
    const NAMES: &[&str] = &[
        "parse", "line", "buf", "cmd", "reader", "text", "err", "out", "key", "value",
    ];
    const LINES: &[&str] = &[
        "fn {a}(&mut self, {b}: &str) -> Result<{a}, Error> {",
        "let {a} = {b}.trim_end_matches('\\n');",
        "if {a}.is_empty() { return Err(Error::new(\"empty {b}\")); }",
        "println!(\"{}: {:?}\", {a}, {b});",
        "match {a} { Some({b}) => {b}, None => return Ok(()) }",
        "// {a}: keep the \"{b}\" around for the next call",
        "let {a} = format!(\"\\\"{}\\\"\", {b});",
        "self.{a}.push_str(&{b});",
        "}",
        "assert_eq!({a}, \"{b}\\t{a}\");",
    ];
    let mut rng = Rng(0x5eed_0005);
    let mut text = String::with_capacity(MIB + 128);
    while text.len() < MIB {
        for _ in 0..1 + rng.below(3) {
            text.push('\t');
        }
        let line = LINES[rng.below(LINES.len())]
            .replace("{a}", NAMES[rng.below(NAMES.len())])
            .replace("{b}", NAMES[rng.below(NAMES.len())]);
        text.push_str(&line);
        text.push('\n');
    }
    Command::Prompt {
        text,
        submission_id: Some("s-code".into()),
    }
    .to_line()
}

/// One prompt whose text is 1 MiB of prose in other scripts: Chinese,
/// Japanese, Russian and Greek sentences, a blank line between paragraphs.
/// Almost no escapes; nearly every byte is above 0x7f.
fn prose_mib() -> String {
    const WORDS: &[&[&str]] = &[
        &[
            "编译器",
            "报告",
            "错误",
            "请",
            "修复",
            "测试",
            "函数",
            "文件",
            "模块",
            "的",
            "和",
            "在",
        ],
        &[
            "コンパイラ",
            "が",
            "エラー",
            "を",
            "報告",
            "しました",
            "テスト",
            "関数",
            "ファイル",
            "の",
        ],
        &[
            "компилятор",
            "сообщает",
            "об",
            "ошибке",
            "исправьте",
            "тест",
            "функция",
            "файл",
            "и",
            "в",
        ],
        &[
            "ο",
            "μεταγλωττιστής",
            "αναφέρει",
            "σφάλμα",
            "διορθώστε",
            "το",
            "τεστ",
            "αρχείο",
            "και",
        ],
    ];
    const ENDS: &[&str] = &["。", "。", ".", "."];
    const SEPS: &[&str] = &["", "", " ", " "];
    let mut rng = Rng(0x5eed_0006);
    let mut text = String::with_capacity(MIB + 128);
    while text.len() < MIB {
        let lang = rng.below(WORDS.len());
        for _ in 0..3 + rng.below(5) {
            for k in 0..4 + rng.below(10) {
                if k > 0 {
                    text.push_str(SEPS[lang]);
                }
                text.push_str(WORDS[lang][rng.below(WORDS[lang].len())]);
            }
            text.push_str(ENDS[lang]);
            text.push_str(SEPS[lang]);
        }
        text.push_str("\n\n");
    }
    Command::Prompt {
        text,
        submission_id: Some("s-prose".into()),
    }
    .to_line()
}

/// 32 MiB of small lines (the `small` lines over and over), LF-terminated,
/// as an engine's stdin would carry them.
fn small_stream() -> Vec<u8> {
    let lines = small_lines();
    let mut out = Vec::with_capacity(32 * MIB + 256);
    'fill: loop {
        for l in &lines {
            if out.len() + l.len() + 1 > 32 * MIB {
                break 'fill;
            }
            out.extend_from_slice(l.as_bytes());
            out.push(b'\n');
        }
    }
    out
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
        Input {
            name: "code_1mib",
            lines: vec![code_mib()],
        },
        Input {
            name: "prose_1mib",
            lines: vec![prose_mib()],
        },
    ]
}

/// Every contender must accept every line, and read the same command: a
/// benchmark of a path that fails early would measure nothing.
fn check(input: &Input) {
    for line in &input.lines {
        let cmd = Command::from_slice(line.as_bytes())
            .unwrap_or_else(|e| panic!("{}: {e}: {line}", input.name));
        let via_value = Command::from_json(&serde_json::from_str::<Value>(line).unwrap()).unwrap();
        assert_eq!(cmd, via_value, "{}: {line}", input.name);
        serde_json::from_str::<TaggedWire>(line)
            .unwrap_or_else(|e| panic!("{}: tagged: {e}: {line}", input.name));
        serde_json::from_str::<serde::de::IgnoredAny>(line).unwrap();
        let mine = owned_strs(&cmd);
        let peers = [
            (
                "serde_json",
                serde_json::from_str::<FlatWire>(line).map_err(|e| e.to_string()),
            ),
            (
                "sonic_rs",
                sonic_rs::from_str::<FlatWire>(line).map_err(|e| e.to_string()),
            ),
            (
                "simd_json",
                simd_json::serde::from_slice::<FlatWire>(&mut line.as_bytes().to_vec())
                    .map_err(|e| e.to_string()),
            ),
        ];
        for (peer, got) in peers {
            let got = got.unwrap_or_else(|e| panic!("{}: {peer}: {e}: {line}", input.name));
            let mut theirs = got.strs();
            let mut ours = mine.clone();
            theirs.sort_unstable();
            ours.sort_unstable();
            assert_eq!(ours, theirs, "{}: {peer}: {line}", input.name);
        }
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
        one_mib_sampling(&mut g, &input);
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
                    black_box(Command::from_json(&v).unwrap());
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
        g.bench_function("serde_json", |b| {
            b.iter(|| {
                for &line in &lines {
                    black_box(serde_json::from_slice::<FlatWire>(black_box(line)).unwrap());
                }
            })
        });
        g.bench_function("sonic_rs", |b| {
            b.iter(|| {
                for &line in &lines {
                    black_box(sonic_rs::from_slice::<FlatWire>(black_box(line)).unwrap());
                }
            })
        });
        // simd-json parses in place: each line is copied into a reused
        // buffer first, as a user holding `&[u8]` must.
        let mut copy = Vec::with_capacity(lines.iter().map(|l| l.len()).max().unwrap_or(0));
        g.bench_function("simd_json", |b| {
            b.iter(|| {
                for &line in &lines {
                    copy.clear();
                    copy.extend_from_slice(black_box(line));
                    black_box(simd_json::serde::from_slice::<FlatWire>(&mut copy).unwrap());
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

/// One prompt whose text is one escape-dense phrase repeated to 1 MiB:
/// two-, three- and four-byte characters, escaped quotes, a newline and a
/// tab every 22 bytes of text. Decoded against its floor only.
fn dense_mib() -> Input {
    let text = "é日本😀 \"quoted\"\n\ttab ".repeat(MIB / 26);
    Input {
        name: "dense_1mib",
        lines: vec![v2::Command::prompt(text).to_line()],
    }
}

/// `from_slice` and the `IgnoredAny` floor on the one phrase repeated
/// ([`dense_mib`]): the cost of unescaping, where the floor only validates.
fn decode_dense(c: &mut Criterion) {
    let input = dense_mib();
    let line = input.lines[0].as_bytes();
    assert!(v2::Command::from_slice(line).is_ok());
    let mut g = c.benchmark_group(format!("decode/{}", input.name));
    g.throughput(Throughput::Bytes(input.bytes()));
    one_mib_sampling(&mut g, &input);
    g.bench_function("from_slice", |b| {
        b.iter(|| black_box(v2::Command::from_slice(black_box(line)).unwrap()))
    });
    g.bench_function("ignored_any_floor", |b| {
        b.iter(|| {
            black_box(serde_json::from_slice::<serde::de::IgnoredAny>(black_box(line)).unwrap())
        })
    });
    g.finish();
}

/// 32 MiB of small lines through a `BufRead` (8 KiB buffer, as
/// `BufReader::new` gives): `CommandReader`, the `read_until` loop a user
/// would write with serde_json and the flat derive, and the floor: the
/// bytes split on LF in memory, each line into `IgnoredAny`.
fn stream(c: &mut Criterion) {
    let data = small_stream();
    let lines = data
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .count();
    let mut g = c.benchmark_group("stream/small_32mib");
    g.throughput(Throughput::Bytes(data.len() as u64));
    // About 60 ms an iteration: a few per sample, the same in each.
    g.sampling_mode(SamplingMode::Flat);
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(3));
    g.bench_function("command_reader", |b| {
        b.iter(|| {
            let mut n = 0;
            for item in CommandReader::new(BufReader::new(black_box(&data[..]))) {
                black_box(item.unwrap());
                n += 1;
            }
            assert_eq!(n, lines);
        })
    });
    g.bench_function("read_until_serde_json", |b| {
        b.iter(|| {
            let mut reader = BufReader::new(black_box(&data[..]));
            let mut line = Vec::new();
            let mut n = 0;
            loop {
                line.clear();
                if reader.read_until(b'\n', &mut line).unwrap() == 0 {
                    break;
                }
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                black_box(serde_json::from_slice::<FlatWire>(&line).unwrap());
                n += 1;
            }
            assert_eq!(n, lines);
        })
    });
    g.bench_function("split_ignored_any_floor", |b| {
        b.iter(|| {
            for line in black_box(&data[..]).split(|&b| b == b'\n') {
                if !line.is_empty() {
                    black_box(serde_json::from_slice::<serde::de::IgnoredAny>(line).unwrap());
                }
            }
        })
    });
    g.finish();
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
        let finished: Vec<String> = cmds.iter().map(Command::to_line).collect();
        let out_bytes: u64 = finished.iter().map(|l| l.len() as u64).sum();
        let strs: Vec<&str> = cmds.iter().flat_map(owned_strs).collect();
        let mut buf: Vec<u8> = Vec::with_capacity(out_bytes as usize * 2 + 64);
        // The peers write the same bytes.
        let peers = peer_encoders(&cmds, FlatOut::v1, &finished, &mut buf);
        let mut g: BenchmarkGroup<_> = c.benchmark_group(format!("encode/{}", input.name));
        g.throughput(Throughput::Bytes(out_bytes));
        one_mib_sampling(&mut g, &input);
        g.bench_function("write_line", |b| b.iter(|| write_all_v1(&cmds, &mut buf)));
        bench_peers(&mut g, &peers, &finished, &mut buf);
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
        // Where nothing but a paragraph's LF is escaped, the floor under
        // "write_line over copy" timed alone, as that ratio is.
        if CLEAN.contains(&input.name) {
            g.bench_function("through an 8 KiB buffer", |b| {
                b.iter(|| copy_through_stack(&finished, &mut buf))
            });
        }
        // The prose as one paragraph, its LFs made spaces: the same text with
        // nothing escaped, as the goal's "where nothing is escaped" reads.
        if input.name == "prose_1mib" {
            let lines: Vec<String> = finished.iter().map(|l| l.replace("\\n", " ")).collect();
            let one: Vec<Command> = lines
                .iter()
                .map(|l| Command::from_slice(l.as_bytes()).unwrap())
                .collect();
            assert!(
                lines.iter().all(|l| !l.contains('\\')),
                "nothing is escaped"
            );
            g.bench_function("write_line, one paragraph", |b| {
                b.iter(|| write_all_v1(&one, &mut buf))
            });
            g.bench_function("copy, one paragraph", |b| {
                b.iter(|| copy_all(&lines, &mut buf))
            });
        }
        g.finish();

        // The later revision, the same commands (text as `content`).
        let cmds: Vec<v2::Command> = cmds.into_iter().map(v2::Command::from).collect();
        let finished: Vec<String> = cmds.iter().map(v2::Command::to_line).collect();
        let out_bytes: u64 = finished.iter().map(|l| l.len() as u64).sum();
        let peers = peer_encoders(&cmds, FlatOut::v2, &finished, &mut buf);
        let mut g: BenchmarkGroup<_> = c.benchmark_group(format!("encode_v2/{}", input.name));
        g.throughput(Throughput::Bytes(out_bytes));
        one_mib_sampling(&mut g, &input);
        g.bench_function("write_line", |b| b.iter(|| write_all_v2(&cmds, &mut buf)));
        bench_peers(&mut g, &peers, &finished, &mut buf);
        g.finish();
    }
}

/// Each command as the peers' flat struct, after checking that serde_json
/// and sonic-rs write exactly the crate's lines from it.
fn peer_encoders<'a, C>(
    cmds: &'a [C],
    flat: fn(&'a C) -> FlatOut<'a>,
    finished: &[String],
    buf: &mut Vec<u8>,
) -> Vec<FlatOut<'a>> {
    let flats: Vec<FlatOut<'a>> = cmds.iter().map(flat).collect();
    let expected = finished.concat();
    buf.clear();
    for f in &flats {
        serde_json::to_writer(&mut *buf, f).unwrap();
        buf.push(b'\n');
    }
    assert!(*buf == expected.as_bytes(), "serde_json writes other bytes");
    buf.clear();
    for f in &flats {
        sonic_rs::to_writer(&mut *buf, f).unwrap();
        buf.push(b'\n');
    }
    assert!(*buf == expected.as_bytes(), "sonic-rs writes other bytes");
    flats
}

/// The peers' flat derives into the same reused `Vec`, and the copy of the
/// finished lines: the least any encoder can do.
fn bench_peers<M: criterion::measurement::Measurement>(
    g: &mut BenchmarkGroup<'_, M>,
    flats: &[FlatOut<'_>],
    finished: &[String],
    buf: &mut Vec<u8>,
) {
    g.bench_function("serde_json", |b| {
        b.iter(|| {
            buf.clear();
            for f in flats {
                serde_json::to_writer(&mut *buf, black_box(f)).unwrap();
                buf.push(b'\n');
            }
            black_box(&buf);
        })
    });
    g.bench_function("sonic_rs", |b| b.iter(|| sonic_all(flats, buf)));
    g.bench_function("copy", |b| b.iter(|| copy_all(finished, buf)));
}

/// Every command written with `write_line` into `buf`: the loop the
/// `encode/` groups and [`encode_paired`] time.
#[inline(always)]
fn write_all_v1(cmds: &[Command], buf: &mut Vec<u8>) {
    buf.clear();
    for cmd in cmds {
        black_box(cmd).write_line(&mut *buf).unwrap();
    }
    black_box(&buf);
}

/// [`write_all_v1`] in v2.
#[inline(always)]
fn write_all_v2(cmds: &[v2::Command], buf: &mut Vec<u8>) {
    buf.clear();
    for cmd in cmds {
        black_box(cmd).write_line(&mut *buf).unwrap();
    }
    black_box(&buf);
}

/// The same lines written by sonic-rs from the flat struct.
#[inline(always)]
fn sonic_all(flats: &[FlatOut<'_>], buf: &mut Vec<u8>) {
    buf.clear();
    for f in flats {
        sonic_rs::to_writer(&mut *buf, black_box(f)).unwrap();
        buf.push(b'\n');
    }
    black_box(&buf);
}

/// The 1 MiB classes where nothing but a paragraph's LF is escaped (ASCII,
/// non-Latin prose): those the goal "at most 1.5x a copy" is set for.
const CLEAN: [&str; 2] = ["ascii_1mib", "prose_1mib"];

/// The finished lines copied through an 8 KiB stack buffer into `buf`:
/// the least an encoder behind `io::Write` can do once a line's escapes
/// keep it from going straight from the string (two copies, not one).
#[inline(always)]
fn copy_through_stack(finished: &[String], buf: &mut Vec<u8>) {
    const CAP: usize = 8 * 1024;
    buf.clear();
    let mut stack = [0u8; CAP];
    for line in finished {
        for chunk in black_box(line.as_bytes()).chunks(CAP) {
            stack[..chunk.len()].copy_from_slice(chunk);
            // Opaque, so that the two copies are not fused into one.
            let stack = black_box(&mut stack);
            buf.extend_from_slice(&stack[..chunk.len()]);
        }
    }
    black_box(&buf);
}

/// The finished lines copied: the least an encoder can do.
#[inline(always)]
fn copy_all(finished: &[String], buf: &mut Vec<u8>) {
    buf.clear();
    for line in finished {
        buf.extend_from_slice(black_box(line.as_bytes()));
    }
    black_box(&buf);
}

// ---------------------------------------------------------------------------
// The later revision (`serve_command::v2`): the same text as `content`, and
// images.

/// `line` as a v2 controller writes it: a prompt's or steer's `"text"` key
/// renamed `"content"` (a string content is one text part), every other
/// byte the same. Other commands are the same line in both revisions.
fn as_v2(line: &str) -> String {
    match Command::from_slice(line.as_bytes()) {
        Ok(Command::Prompt { .. } | Command::Steer { .. }) => {
            line.replacen("\"text\":", "\"content\":", 1)
        }
        _ => line.to_owned(),
    }
}

fn v2(c: &mut Criterion) {
    use base64::Engine as _;
    for input in inputs() {
        let v2_lines: Vec<String> = input.lines.iter().map(|l| as_v2(l)).collect();
        // Both revisions read the same command from their line.
        for (v1, v2) in input.lines.iter().zip(&v2_lines) {
            let converted = v2::Command::from(Command::from_slice(v1.as_bytes()).unwrap());
            assert_eq!(
                v2::Command::from_slice(v2.as_bytes()).unwrap(),
                converted,
                "{v2}"
            );
        }
        let v1_lines: Vec<&[u8]> = input.lines.iter().map(|l| l.as_bytes()).collect();
        let v2_lines: Vec<&[u8]> = v2_lines.iter().map(|l| l.as_bytes()).collect();
        let mut g = c.benchmark_group(format!("v2/{}", input.name));
        g.throughput(Throughput::Bytes(input.bytes()));
        one_mib_sampling(&mut g, &input);
        g.bench_function("v1 from_slice", |b| b.iter(|| decode_all_v1(&v1_lines)));
        g.bench_function("v2 from_slice", |b| b.iter(|| decode_all_v2(&v2_lines)));
        g.finish();
    }

    // A prompt with a 1 MiB PNG: against base64-decoding its data plus one
    // copy of the bytes, the least any decoder that hands back the image
    // can do.
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut rng = Rng(7);
    png.extend((0..MIB - 8).map(|_| rng.next() as u8));
    let data = base64::engine::general_purpose::STANDARD.encode(&png);
    let line = format!(
        "{{\"command\":\"prompt\",\"content\":[{{\"type\":\"text\",\"text\":\"what is this?\"}},\
         {{\"type\":\"image\",\"media_type\":\"image/png\",\"data\":\"{data}\"}}]}}"
    );
    let cmd = v2::Command::from_slice(line.as_bytes()).unwrap();
    assert_eq!(cmd.to_line().trim_end(), line);
    let mut g = c.benchmark_group("v2/image_1mib");
    g.throughput(Throughput::Bytes(line.len() as u64));
    g.sampling_mode(SamplingMode::Flat);
    g.sample_size(20);
    g.warm_up_time(Duration::from_millis(300));
    g.measurement_time(Duration::from_millis(1500));
    g.bench_function("v2 from_slice", |b| {
        b.iter(|| black_box(v2::Command::from_slice(black_box(line.as_bytes())).unwrap()))
    });
    g.bench_function("base64 decode + copy", |b| {
        b.iter(|| {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(black_box(data.as_bytes()))
                .unwrap();
            black_box(black_box(&bytes).to_vec())
        })
    });
    g.finish();
}

/// Every line decoded in v1: the loop the `v2/` groups and [`v2_paired`]
/// time.
#[inline(always)]
fn decode_all_v1(lines: &[&[u8]]) {
    for &line in lines {
        black_box(Command::from_slice(black_box(line)).unwrap());
    }
}

/// Every line decoded in v2.
#[inline(always)]
fn decode_all_v2(lines: &[&[u8]]) {
    for &line in lines {
        black_box(v2::Command::from_slice(black_box(line)).unwrap());
    }
}

/// v2's decode time over v1's on the small lines, paired: every round of a
/// sample decodes the lines in both revisions, one after the other (v1
/// first in every other round), so that both meet the same load. The `v2/`
/// groups time the two in separate functions seconds apart, and on a busy
/// machine their ratio swung from 0.94 to 1.42 between runs. Each sample's
/// value is its total v2 time over its total v1 time (criterion's estimate
/// is the median over the samples).
fn v2_paired(c: &mut Criterion<Ratio>) {
    let small = small_lines();
    let v2_lines: Vec<String> = small.iter().map(|l| as_v2(l)).collect();
    let v1_lines: Vec<&[u8]> = small.iter().map(|l| l.as_bytes()).collect();
    let v2_lines: Vec<&[u8]> = v2_lines.iter().map(|l| l.as_bytes()).collect();
    let v1 = || {
        let start = Instant::now();
        decode_all_v1(&v1_lines);
        start.elapsed()
    };
    let v2 = || {
        let start = Instant::now();
        decode_all_v2(&v2_lines);
        start.elapsed()
    };
    let mut g = c.benchmark_group("v2_paired/small");
    g.bench_function("v2 over v1", |b| {
        b.iter_custom(|rounds| paired_ratio(rounds, v2, v1))
    });
    g.finish();
}

/// `rounds` times `num()` over `den()`, each measuring itself, taken in
/// turn (`den` first in every other round) so that both meet the same
/// load: the value a [`Ratio`] sample holds.
fn paired_ratio(
    rounds: u64,
    mut num: impl FnMut() -> Duration,
    mut den: impl FnMut() -> Duration,
) -> f64 {
    let (mut t_num, mut t_den) = (Duration::ZERO, Duration::ZERO);
    for round in 0..rounds {
        if round % 2 == 0 {
            t_den += den();
            t_num += num();
        } else {
            t_num += num();
            t_den += den();
        }
    }
    rounds as f64 * t_num.as_secs_f64() / t_den.as_secs_f64()
}

/// The encode goals the separate `encode/` functions judge worst, paired as
/// [`v2_paired`] is: sonic-rs's time over `write_line`'s, in each revision,
/// on small and noisy lines (the separate functions' v2 noisy ratio swung
/// from 0.68 to 1.47 between runs) and on the 1 MiB classes where nothing
/// but a paragraph's LF is escaped (ASCII, non-Latin prose); on those two,
/// also `write_line`'s time over a copy of the finished line, and the
/// floors under that ratio ([`encode_floors`]).
fn encode_paired(c: &mut Criterion<Ratio>) {
    for input in inputs() {
        let clean = CLEAN.contains(&input.name);
        if !clean && !["small", "noisy"].contains(&input.name) {
            continue;
        }
        let cmds: Vec<Command> = input
            .lines
            .iter()
            .map(|l| Command::from_slice(l.as_bytes()).unwrap())
            .collect();
        let cmds_v2: Vec<v2::Command> = cmds.iter().cloned().map(v2::Command::from).collect();
        let mut g = c.benchmark_group(format!("encode_paired/{}", input.name));
        one_mib_sampling(&mut g, &input);
        let finished = encode_pair(
            &mut g,
            "",
            &cmds,
            FlatOut::v1,
            Command::to_line,
            write_all_v1,
            clean,
        );
        encode_pair(
            &mut g,
            "v2 ",
            &cmds_v2,
            FlatOut::v2,
            v2::Command::to_line,
            write_all_v2,
            clean,
        );
        if clean {
            encode_floors(&mut g, &finished);
        }
        g.finish();
    }
}

/// Two floors under "`write_line` over a copy", for any encoder in safe
/// code behind `io::Write`: its bytes either gather in a stack buffer first
/// (copied twice), or reach the `Vec` as the runs between escapes and the
/// escapes (a copy call each). Neither floor scans or escapes anything: the
/// finished line is copied through an 8 KiB buffer, or piece by piece.
fn encode_floors(g: &mut BenchmarkGroup<'_, Ratio>, finished: &[String]) {
    let bytes: usize = finished.iter().map(String::len).sum();
    // Each line's pieces: an escape (`\` and one byte, or `\u` and four)
    // and the run before it, as ranges of the line.
    let pieces: Vec<Vec<(usize, usize)>> = finished
        .iter()
        .map(|line| {
            let (b, mut out, mut run, mut i) = (line.as_bytes(), Vec::new(), 0, 0);
            while i < b.len() {
                if b[i] == b'\\' {
                    let end = i + if b[i + 1] == b'u' { 6 } else { 2 };
                    out.extend([(run, i), (i, end)]);
                    (run, i) = (end, end);
                } else {
                    i += 1;
                }
            }
            out.push((run, b.len()));
            let joined: Vec<u8> = out.iter().flat_map(|&(f, t)| &b[f..t]).copied().collect();
            assert!(joined == b, "the pieces are the line");
            out
        })
        .collect();
    let mut through = timed(bytes, |buf| copy_through_stack(finished, buf));
    let mut piecewise = timed(bytes, |buf| {
        buf.clear();
        for (line, pieces) in finished.iter().zip(&pieces) {
            let line = black_box(line.as_bytes());
            for &(from, to) in black_box(pieces) {
                buf.extend_from_slice(&line[from..to]);
            }
        }
        black_box(&buf);
    });
    let mut copy = timed(bytes, |buf| copy_all(finished, buf));
    g.bench_function("floor: through an 8 KiB buffer over copy", |b| {
        b.iter_custom(|rounds| paired_ratio(rounds, &mut through, &mut copy))
    });
    g.bench_function("floor: piece by piece over copy", |b| {
        b.iter_custom(|rounds| paired_ratio(rounds, &mut piecewise, &mut copy))
    });
}

/// [`encode_paired`]'s ratios for one revision's commands: against sonic-rs,
/// and, where nothing is escaped (`clean`), against a copy. Returns the
/// finished lines.
fn encode_pair<'a, C>(
    g: &mut BenchmarkGroup<'_, Ratio>,
    rev: &str,
    cmds: &'a [C],
    flat: fn(&'a C) -> FlatOut<'a>,
    to_line: fn(&C) -> String,
    write_all: fn(&[C], &mut Vec<u8>),
    clean: bool,
) -> Vec<String> {
    let finished: Vec<String> = cmds.iter().map(to_line).collect();
    let bytes: usize = finished.iter().map(String::len).sum();
    let mut peer_buf: Vec<u8> = Vec::with_capacity(2 * bytes + 64);
    let flats = peer_encoders(cmds, flat, &finished, &mut peer_buf);
    // Each times one pass into its own reused buffer.
    let mut ours = timed(bytes, |buf| write_all(cmds, buf));
    let mut sonic = timed(bytes, |buf| sonic_all(&flats, buf));
    let mut copy = timed(bytes, |buf| copy_all(&finished, buf));
    g.bench_function(format!("{rev}sonic_rs over write_line"), |b| {
        b.iter_custom(|rounds| paired_ratio(rounds, &mut sonic, &mut ours))
    });
    if clean {
        g.bench_function(format!("{rev}write_line over copy"), |b| {
            b.iter_custom(|rounds| paired_ratio(rounds, &mut ours, &mut copy))
        });
    }
    // The timed copy holds `finished` until it goes.
    drop(copy);
    finished
}

/// `pass` into a buffer of its own, reused, as a function that times
/// itself: one side of a [`paired_ratio`].
fn timed(bytes: usize, mut pass: impl FnMut(&mut Vec<u8>)) -> impl FnMut() -> Duration {
    let mut buf: Vec<u8> = Vec::with_capacity(2 * bytes + 64);
    move || {
        let start = Instant::now();
        pass(&mut buf);
        start.elapsed()
    }
}

/// [`v2_paired`]'s measurement: a ratio of two times, given by the
/// benchmark itself (`iter_custom`) as the ratio times the iterations, so
/// that criterion's value per iteration is the ratio.
struct Ratio;

impl Measurement for Ratio {
    type Intermediate = Instant;
    type Value = f64;

    // Only `iter_custom` is used with it; `iter` would measure seconds.
    fn start(&self) -> Instant {
        Instant::now()
    }
    fn end(&self, start: Instant) -> f64 {
        start.elapsed().as_secs_f64()
    }
    fn add(&self, a: &f64, b: &f64) -> f64 {
        a + b
    }
    fn zero(&self) -> f64 {
        0.0
    }
    fn to_f64(&self, value: &f64) -> f64 {
        *value
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        &RatioFormatter
    }
}

/// Prints a [`Ratio`] as it is, marked `x`.
struct RatioFormatter;

impl ValueFormatter for RatioFormatter {
    fn scale_values(&self, _typical: f64, _values: &mut [f64]) -> &'static str {
        "x"
    }
    fn scale_throughputs(
        &self,
        _typical: f64,
        _throughput: &Throughput,
        _values: &mut [f64],
    ) -> &'static str {
        "x"
    }
    fn scale_for_machines(&self, _values: &mut [f64]) -> &'static str {
        "ratio"
    }
}

/// The 1 MiB inputs take up to 10 ms an iteration: the same number of
/// iterations in every sample (flat), fewer samples and a shorter time, so
/// the whole run stays near five minutes.
fn one_mib_sampling<M: criterion::measurement::Measurement>(
    g: &mut BenchmarkGroup<'_, M>,
    input: &Input,
) {
    if input.lines.len() == 1 {
        g.sampling_mode(SamplingMode::Flat);
        g.sample_size(20);
        g.warm_up_time(Duration::from_millis(300));
        g.measurement_time(Duration::from_millis(1500));
    }
}

fn config() -> Criterion {
    // Modest, so the whole run (126 benchmarks) stays near five minutes on
    // two cores. Fewer bootstrap resamples than the default 100,000: they
    // only narrow the confidence interval (the medians are the sample's
    // own), and on a busy machine they cost a second per benchmark.
    Criterion::default()
        .sample_size(30)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .nresamples(10_000)
        .noise_threshold(0.03)
}

criterion_group! {
    name = benches;
    config = config();
    targets = decode, decode_dense, encode, stream, v2
}
criterion_group! {
    name = paired;
    config = config().with_measurement(Ratio);
    targets = v2_paired, encode_paired
}
criterion_main!(benches, paired);
