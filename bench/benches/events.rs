//! `cargo bench -p serve-command-bench -- events_`: the event direction,
//! what a controller reads from an engine's stdout, against the event enum
//! a user would derive, on deterministic inputs built here.
//!
//! Groups `events_decode/<input>`, `events_encode/<input>` (throughput in
//! bytes of the wire lines) and `events_stream/deltas_32mib`.
//! `scripts/bench_report.py` turns criterion's output into `BENCHMARKS.md`'s
//! tables and goal verdicts.
//!
//! A bench target of its own, beside `codec.rs` (the command direction): it
//! shares no contender with it, so it builds and runs on its own, and a
//! change to one direction's bench does not rebuild the other's.

use criterion::{
    criterion_group, criterion_main, BenchmarkGroup, Criterion, SamplingMode, Throughput,
};
use serde::{Deserialize, Serialize};
use serve_command::v2::{Event, EventReader, JobRecord, JobState, JsonText, Usage};
use std::hint::black_box;
use std::io::{BufRead, BufReader};
use std::time::Duration;

// ---------------------------------------------------------------------------
// The contender: the event enum a performance-minded user would derive.

/// Every event upstream defines, as a user would derive it for serde_json
/// or sonic-rs: internally tagged on `"event"` (what the wire is), the
/// fields in `to_json`'s order, nullable fields `Option<String>`.
///
/// Where serde's defaults differ from upstream's lines, and how the derive
/// is made to match them (the bench checks the bytes once, [`check`]):
///
/// - Key order: serde writes the tag first and then the fields in
///   declaration order, as upstream does; each struct declares its fields in
///   `to_json`'s order, which for a job record is its map's insertion order
///   (`schema_version`, then `cleanup_error`, then the rest).
/// - `null`: serde writes `None` as `null`, as upstream does for most
///   optional fields (`brief`, `body`, `goal`, `workspace_root`, a job's
///   `description`, `cwd`, ...); where upstream leaves the key out instead
///   (`submission_id`, `unaccounted`, a job's `data`), the field is
///   `#[serde(skip_serializing_if = "Option::is_none")]`.
/// - A job's free-form `data` as a `serde_json::Value`: without serde_json's
///   `preserve_order` it writes an object's keys sorted, where upstream keeps
///   them in the order they came, and writes a double as ryu does (`1e21`)
///   where upstream writes JavaScript's form (`1e+21`); the inputs' `data`
///   objects have their keys in sorted order and hold only strings and small
///   integers, so both write the same bytes.
/// - `schema_version` is a plain field (upstream writes a constant 1).
/// - `job_changed`'s record is boxed (clippy's `large_enum_variant`): the
///   enum is then about 100 bytes, where `Event`, holding its `JobRecord`
///   inline, is 344.
/// - Upstream's defaults when a field is absent (a steer's `kind`, an MCP
///   connect failure's `error`) are `#[serde(default)]`s; absent from the
///   inputs.
///
/// The derive does not check what upstream's `parse` checks beyond the
/// types (a job id's characters, `revision > 0`, counts at least 0): a user
/// would not.
#[allow(dead_code)] // most variants are only declared
#[derive(Serialize, Deserialize, Debug)]
#[serde(tag = "event", rename_all = "snake_case")]
enum UserEvent {
    JobChanged {
        kind: UserJobEventKind,
        /// Boxed, as clippy's `large_enum_variant` asks: inline, the record
        /// (about 300 bytes) would make every event as large, and every
        /// delta would move that much.
        job: Box<UserJob>,
    },
    PredictionResult {
        source_sequence: i32,
        outcome: UserPrediction,
    },
    JobsSnapshot {
        request_id: String,
        jobs: Vec<UserJob>,
    },
    JobStopResult {
        request_id: String,
        generation: String,
        job_id: String,
        outcome: UserStopOutcome,
    },
    AgentSetupFailed {
        error: String,
    },
    AgentStep {
        step: i32,
    },
    StreamRetry {
        attempt: i32,
        max_attempts: i32,
        reason: String,
    },
    AgentAborted {
        reason: String,
    },
    AgentFinished {
        answer: String,
    },
    TurnFailed {
        error: String,
    },
    AssistantDelta {
        content: String,
    },
    ReasoningDelta {
        content: String,
    },
    AssistantMessage {
        content: String,
    },
    ReasoningMessage {
        content: String,
    },
    Usage {
        usage: UserUsage,
    },
    ToolResult {
        tool_call_id: String,
        tool_name: String,
        is_error: bool,
        content: String,
        brief: Option<String>,
    },
    ToolCallDecodeError {
        tool_call_id: String,
        tool_name: String,
        error: String,
    },
    ApprovalRequested {
        id: String,
        tool_name: String,
        detail: String,
        body: Option<String>,
    },
    ApprovalResolved {
        id: String,
        outcome: String,
    },
    SteerApplied {
        #[serde(default = "prompt")]
        kind: String,
        /// A string or an array of parts: a user would keep it a `Value`.
        content: serde_json::Value,
        #[serde(skip_serializing_if = "Option::is_none")]
        submission_id: Option<String>,
    },
    SteerDropped {
        content: serde_json::Value,
        #[serde(skip_serializing_if = "Option::is_none")]
        submission_id: Option<String>,
    },
    BackgroundNotice {
        content: String,
    },
    GoalUpdated {
        goal: Option<String>,
    },
    GoalUnblocked,
    GoalBlocked {
        reason: String,
    },
    GoalCheck {
        content: String,
    },
    GoalReminder {
        content: String,
    },
    GoalContinue {
        remaining: i32,
    },
    GoalBudgetExhausted {
        turns: i32,
    },
    PlanReminder {
        content: String,
    },
    MaxStepsExhausted,
    CompactionStarted {
        from_sequence: i32,
        to_sequence: i32,
    },
    CompactionFinished {
        from_sequence: i32,
        to_sequence: i32,
        summary: String,
    },
    CompactionFailed {
        error: String,
    },
    SubrunStarted {
        id: String,
        kind: String,
        label: String,
    },
    SubrunFinished {
        id: String,
        status: String,
        steps: i32,
        prompt_tokens: i32,
        completion_tokens: i32,
        #[serde(skip_serializing_if = "Option::is_none")]
        unaccounted: Option<String>,
    },
    WorkflowStarted {
        id: String,
        journal: String,
        events: String,
        first_child: i32,
        child_count: i32,
    },
    WorkflowFinished {
        id: String,
    },
    AutoCompactionStarted {
        from_sequence: i32,
        to_sequence: i32,
    },
    AutoCompactionFinished {
        from_sequence: i32,
        to_sequence: i32,
        summary: String,
    },
    AutoCompactionFailed {
        error: String,
    },
    ContextYield {
        to_sequence: i32,
        answer: String,
    },
    SessionStarted {
        session: String,
        session_root: String,
        workspace_root: Option<String>,
    },
    SessionError {
        error: String,
    },
    WorkspaceCreated {
        dir: String,
    },
    CommandError {
        error: String,
    },
    McpConfigIgnored {
        reason: String,
    },
    McpConfigUnreadable {
        path: String,
        error: String,
    },
    McpConfigInvalid {
        path: String,
        error: String,
    },
    McpToolsRegistered {
        servers: i32,
        tools: i32,
        names: Vec<String>,
    },
    McpToolDuplicate {
        server: String,
        tool: String,
    },
    McpToolRenamed {
        from: String,
        to: String,
    },
    McpToolsCapped {
        server: String,
        kept: i32,
    },
    McpServerSkippedOverCap {
        server: String,
    },
    McpConnectFailed {
        server: String,
        #[serde(default = "unknown_error")]
        error: String,
    },
    McpListToolsFailed {
        server: String,
        error: String,
    },
    McpListToolsTimeout {
        server: String,
    },
    McpNoTools {
        server: String,
    },
}

fn prompt() -> String {
    "prompt".to_owned()
}

fn unknown_error() -> String {
    "unknown error".to_owned()
}

/// A background job, the fields in `JobRecord::to_json`'s map order.
#[derive(Serialize, Deserialize, Debug)]
struct UserJob {
    schema_version: u32,
    cleanup_error: Option<String>,
    generation: String,
    id: String,
    revision: i32,
    command: String,
    description: Option<String>,
    cwd: Option<String>,
    state: UserJobState,
    started_at_ms: i64,
    backgrounded_at_ms: i64,
    finished_at_ms: Option<i64>,
    last_output_at_ms: Option<i64>,
    output_file: Option<String>,
    output_persistent: bool,
    output_bytes: i64,
    output_chars: i32,
    output_truncated: bool,
    invalid_utf8: bool,
    output_error: Option<String>,
    persistence_error: Option<String>,
    /// Upstream leaves the key out when there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    data: Option<serde_json::Value>,
}

#[derive(Serialize, Deserialize, Debug)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum UserJobState {
    Running,
    Stopping,
    Exited { code: i32 },
    Stopped { reason: String },
    Interrupted,
}

#[derive(Serialize, Deserialize, Debug)]
#[serde(rename_all = "snake_case")]
enum UserJobEventKind {
    Started,
    Updated,
    Finished,
    Failed,
}

#[derive(Serialize, Deserialize, Debug)]
#[serde(rename_all = "snake_case")]
enum UserStopOutcome {
    Stopped,
    AlreadyTerminal,
    NotFound,
    WrongRuntime,
}

#[allow(dead_code)] // only declared
#[derive(Serialize, Deserialize, Debug)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum UserPrediction {
    Completed {
        text: Option<String>,
        input_tokens: i32,
        output_tokens: i32,
    },
    Skipped,
    Cancelled,
    Failed {
        message: String,
    },
}

#[derive(Serialize, Deserialize, Debug)]
struct UserUsage {
    prompt_tokens: i32,
    completion_tokens: i32,
    total_tokens: i32,
    prompt_cache_hit_tokens: i32,
    prompt_cache_miss_tokens: i32,
}

// ---------------------------------------------------------------------------
// Inputs.

/// A small deterministic generator (xorshift64*, as `codec.rs`'s), so every
/// run benchmarks the same bytes.
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
    /// True one time in `n`.
    fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }
}

const MIB: usize = 1 << 20;

/// What a model streams: word pieces, most with their leading space.
const TOKENS: &[&str] = &[
    " the",
    " test",
    " fails",
    " because",
    " parser",
    " returns",
    " an",
    " error",
    " on",
    " the",
    " empty",
    " line",
    ".",
    ",",
    " I",
    "'ll",
    " run",
    " cargo",
    " test",
    " again",
    " and",
    " check",
    " src",
    "/lib",
    ".rs",
    " first",
    " fn",
    " decode",
    "(&",
    "self",
    ")",
    " `Result`",
    " value",
    " should",
    " be",
    " fixed",
    " now",
    ":",
    " it",
    " works",
    " let",
    " me",
    " look",
    " at",
    " module",
    " build",
    "ing",
    "ed",
    " s",
    " a",
    " to",
    " in",
    " this",
    " that",
];

/// Pieces a delta sometimes holds: escapes and non-ASCII.
const SPECIAL: &[&str] = &[
    "\n",
    "\n\n",
    "\n- ",
    "\t",
    " \"quoted\"",
    "\\",
    " →",
    " —",
    " é",
    " naïve",
    " 日本語",
    " 修复",
    " ✓",
    " 😀",
    " `\"x\"`",
];

/// A delta's text: 5 to 40 bytes of tokens, one in five with an escape or
/// a non-ASCII piece among them.
fn delta_text(rng: &mut Rng) -> String {
    let target = 5 + rng.below(36);
    let mut pieces: Vec<&str> = Vec::new();
    let mut len = 0;
    while len < target {
        let piece = TOKENS[rng.below(TOKENS.len())];
        if len + piece.len() <= 40 {
            pieces.push(piece);
            len += piece.len();
        }
    }
    if rng.one_in(5) {
        let special = SPECIAL[rng.below(SPECIAL.len())];
        // Room for it within 40 bytes.
        while len + special.len() > 40 {
            len -= pieces.pop().map_or(0, str::len);
        }
        pieces.insert(rng.below(pieces.len() + 1), special);
    }
    pieces.concat()
}

/// A stream of about 2,000 small lines as a turn streams them: per step an
/// `agent_step`, a few `reasoning_delta`s, many `assistant_delta`s, a
/// `usage`; an `agent_finished` at each turn's end.
fn delta_events() -> Vec<Event> {
    let mut rng = Rng(0x5eed_e001);
    let mut events = Vec::new();
    let mut step = 0;
    let mut tokens = 1_200;
    while events.len() < 2_000 {
        step += 1;
        events.push(Event::agent_step(step));
        for _ in 0..2 + rng.below(8) {
            events.push(Event::reasoning_delta(delta_text(&mut rng)));
        }
        for _ in 0..30 + rng.below(50) {
            events.push(Event::assistant_delta(delta_text(&mut rng)));
        }
        let completion = 40 + rng.below(400) as i32;
        let hit = (tokens / 128) * 128;
        events.push(Event::usage(Usage::new(
            tokens,
            completion,
            tokens + completion,
            hit,
            tokens - hit,
        )));
        tokens += completion + 30 + rng.below(200) as i32;
        if step % 4 == 0 {
            events.push(Event::agent_finished(format!(
                "Done: the parser now skips blank lines; {} tests pass.",
                100 + rng.below(300)
            )));
        }
    }
    events
}

/// A `tool_result` whose `content` is 1 MiB of what tools print: source
/// read with line numbers (tabs, quotes, backslashes), grep hits, compiler
/// and test output; a newline every line.
fn tool_result_mib() -> Event {
    const CODE: &[&str] = &[
        "fn {a}(&mut self, {b}: &str) -> Result<{A}, Error> {",
        "    let {a} = {b}.trim_end_matches('\\n');",
        "    if {a}.is_empty() { return Err(Error::new(\"empty {b}\")); }",
        "    println!(\"{}: {:?}\", {a}, {b});",
        "        match {a} { Some({b}) => {b}, None => return Ok(()) }",
        "    // {a}: keep the \"{b}\" around for the next call",
        "    let {a} = format!(\"\\\"{}\\\"\", {b});",
        "        self.{a}.push_str(&{b});",
        "}",
        "",
        "    assert_eq!({a}, \"{b}\\t{a}\");",
        "/// Reads the {a} from the {b}, as upstream's `parse` does.",
        "#[derive(Debug, Clone, PartialEq)]",
        "pub struct {A} { {a}: Vec<u8>, {b}: usize }",
    ];
    const NAMES: &[&str] = &[
        "parse", "line", "buf", "cmd", "reader", "text", "err", "out", "key", "value", "event",
        "job",
    ];
    const OUTPUT: &[&str] = &[
        "test v2::{a}::tests::{b}_round_trips ... ok",
        "test v2::{a}::tests::{b}_is_refused ... ok",
        "test wire::{a}::{b} ... FAILED",
        "   Compiling serve-command v0.1.0 (/home/dev/serve-command)",
        "warning: unused variable: `{a}`",
        "  --> src/v2/{a}.rs:{n}:9",
        "error[E0308]: mismatched types: expected `&str`, found `String`",
        "src/v2/{a}.rs:{n}:    let {b} = {a}.get(\"{b}\").and_then(Json::as_str);",
        "thread 'main' panicked at src/{a}.rs:{n}:5: called `Result::unwrap()` on an `Err` value: \"{b}\"",
        "    Finished `test` profile [unoptimized + debuginfo] target(s) in 4.{n}s",
    ];
    let mut rng = Rng(0x5eed_e002);
    let mut text = String::with_capacity(MIB + 256);
    let mut n = 1;
    while text.len() < MIB {
        // A file read with its line numbers, then some tool output.
        for _ in 0..10 + rng.below(40) {
            let line = CODE[rng.below(CODE.len())];
            text.push_str(&format!("{n:6}\t{}\n", fill(line, &mut rng, NAMES, n)));
            n += 1;
        }
        for _ in 0..5 + rng.below(20) {
            let line = OUTPUT[rng.below(OUTPUT.len())];
            let at = 1 + rng.below(900);
            text.push_str(&fill(line, &mut rng, NAMES, at));
            text.push('\n');
        }
    }
    text.truncate(MIB);
    Event::tool_result("call_7f3a9c2e41b8d605", "run_shell", text, None)
}

fn fill(template: &str, rng: &mut Rng, names: &[&str], n: usize) -> String {
    let a = names[rng.below(names.len())];
    let b = names[rng.below(names.len())];
    let mut upper = a.to_owned();
    upper[..1].make_ascii_uppercase();
    template
        .replace("{A}", &upper)
        .replace("{a}", a)
        .replace("{b}", b)
        .replace("{n}", &n.to_string())
}

/// A `jobs_snapshot` of 1,000 jobs: running, stopping, exited (0, 1, 101),
/// stopped and interrupted; descriptions, working directories and output
/// files mostly set; the errors rare; a few with a small `data` object.
fn jobs_snapshot() -> Event {
    const COMMANDS: &[&str] = &[
        "cargo test --workspace",
        "cargo build --release",
        "npm run dev",
        "python3 -m http.server 8000",
        "pytest -x tests/",
        "make -j4 all",
        "tail -f /var/log/app.log",
        "docker compose up db",
        "go test ./...",
        "rg --json \"TODO\" src/",
    ];
    const DESCRIPTIONS: &[&str] = &[
        "run the test suite",
        "build the release binary",
        "serve the frontend",
        "watch the logs",
        "start the database",
        "lint the \"core\" crate",
    ];
    let mut rng = Rng(0x5eed_e003);
    let mut jobs = Vec::with_capacity(1000);
    for i in 0..1000 {
        let state = match rng.below(20) {
            0..=7 => JobState::Running,
            8 => JobState::Stopping,
            9..=14 => JobState::Exited([0, 0, 0, 1, 101][rng.below(5)]),
            15..=16 => JobState::Stopped("stopped by the user".to_owned()),
            _ => JobState::Interrupted,
        };
        let started = 1_751_328_000_000 + 1_000 * i as i64 + rng.below(1_000) as i64;
        let terminal = state.is_terminal();
        let mut job = JobRecord::new(
            "g-20260701.3",
            format!("job-{i:04}"),
            1 + rng.below(6) as i32,
            COMMANDS[rng.below(COMMANDS.len())],
            state,
            started,
            started + 1_500 + rng.below(3_000) as i64,
        );
        if !rng.one_in(4) {
            job.description = Some(DESCRIPTIONS[rng.below(DESCRIPTIONS.len())].to_owned());
        }
        if !rng.one_in(3) {
            job.cwd = Some(format!("/home/dev/project-{}", rng.below(5)));
        }
        if terminal {
            job.finished_at_ms = Some(started + 10_000 + rng.below(600_000) as i64);
        }
        if !rng.one_in(5) {
            job.last_output_at_ms = Some(started + 5_000 + rng.below(60_000) as i64);
            job.output_file = Some(format!("job-{i:04}.log"));
            job.output_bytes = rng.below(4 * MIB) as i64;
            job.output_chars = job.output_bytes as i32 - rng.below(100) as i32;
            job.output_chars = job.output_chars.max(0);
            job.output_persistent = rng.one_in(3);
            job.output_truncated = job.output_bytes > 2 * MIB as i64;
        }
        if rng.one_in(50) {
            job.invalid_utf8 = true;
        }
        if rng.one_in(40) {
            job.output_error =
                Some("output file vanished: No such file or directory (os error 2)".to_owned());
        }
        if rng.one_in(60) {
            job.persistence_error =
                Some("could not keep the output: disk quota exceeded".to_owned());
        }
        if rng.one_in(80) {
            job.cleanup_error = Some("kill -TERM 4242: no such process".to_owned());
        }
        if rng.one_in(20) {
            // Keys in sorted order: see `UserEvent` on `data`.
            let data = format!(
                r#"{{"pid":{},"port":{},"tags":["dev","watch"],"url":"http://localhost:{}/"}}"#,
                4000 + i,
                8000 + rng.below(100),
                8000 + rng.below(100)
            );
            job.data = Some(data.parse::<JsonText>().unwrap());
        }
        jobs.push(job);
    }
    Event::jobs_snapshot("jobs-42", jobs)
}

struct Input {
    name: &'static str,
    events: Vec<Event>,
    /// The events' lines, without their LF.
    lines: Vec<String>,
}

impl Input {
    fn new(name: &'static str, events: Vec<Event>) -> Input {
        let lines = events
            .iter()
            .map(|e| e.to_line().trim_end_matches('\n').to_owned())
            .collect();
        Input {
            name,
            events,
            lines,
        }
    }

    fn bytes(&self) -> u64 {
        self.lines.iter().map(|l| l.len() as u64).sum()
    }
}

fn inputs() -> Vec<Input> {
    vec![
        Input::new("deltas", delta_events()),
        Input::new("tool_result_1mib", vec![tool_result_mib()]),
        Input::new("jobs_snapshot_1000", vec![jobs_snapshot()]),
    ]
}

/// Every contender reads every line, and reads all of it: each decoding
/// written back gives the line. And the derive, written by serde_json and
/// by sonic-rs, gives `to_line`'s bytes. Returns the derive's events.
fn check(input: &Input) -> Vec<UserEvent> {
    let mut users = Vec::new();
    for (line, event) in input.lines.iter().zip(&input.events) {
        let ours = Event::from_slice(line.as_bytes())
            .unwrap_or_else(|e| panic!("{}: from_slice: {e}: {line:.200}", input.name));
        assert_eq!(&ours, event, "{}: {line:.200}", input.name);
        let theirs: UserEvent = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("{}: serde_json: {e}: {line:.200}", input.name));
        let sonic: UserEvent = sonic_rs::from_str(line)
            .unwrap_or_else(|e| panic!("{}: sonic_rs: {e}: {line:.200}", input.name));
        let want = event.to_line();
        for (peer, got) in [
            ("serde_json", serde_json::to_string(&theirs).unwrap()),
            ("sonic_rs", sonic_rs::to_string(&sonic).unwrap()),
        ] {
            assert!(
                got + "\n" == want,
                "{}: {peer} writes other bytes: {line:.200}",
                input.name
            );
        }
        users.push(theirs);
    }
    users
}

// ---------------------------------------------------------------------------
// Benchmarks.

fn events_decode(c: &mut Criterion) {
    for input in inputs() {
        check(&input);
        let lines: Vec<&[u8]> = input.lines.iter().map(|l| l.as_bytes()).collect();
        let mut g = c.benchmark_group(format!("events_decode/{}", input.name));
        g.throughput(Throughput::Bytes(input.bytes()));
        one_mib_sampling(&mut g, &input);
        g.bench_function("from_slice", |b| {
            b.iter(|| {
                for &line in &lines {
                    black_box(Event::from_slice(black_box(line)).unwrap());
                }
            })
        });
        g.bench_function("serde_json", |b| {
            b.iter(|| {
                for &line in &lines {
                    black_box(serde_json::from_slice::<UserEvent>(black_box(line)).unwrap());
                }
            })
        });
        g.bench_function("sonic_rs", |b| {
            b.iter(|| {
                for &line in &lines {
                    black_box(sonic_rs::from_slice::<UserEvent>(black_box(line)).unwrap());
                }
            })
        });
        g.finish();
    }
}

fn events_encode(c: &mut Criterion) {
    for input in inputs() {
        let users = check(&input);
        let finished: Vec<String> = input.events.iter().map(Event::to_line).collect();
        let out_bytes: u64 = finished.iter().map(|l| l.len() as u64).sum();
        let mut buf: Vec<u8> = Vec::with_capacity(out_bytes as usize * 2 + 64);
        let events = &input.events;
        let mut g: BenchmarkGroup<_> = c.benchmark_group(format!("events_encode/{}", input.name));
        g.throughput(Throughput::Bytes(out_bytes));
        one_mib_sampling(&mut g, &input);
        g.bench_function("write_line", |b| {
            b.iter(|| {
                buf.clear();
                for event in events {
                    black_box(event).write_line(&mut buf).unwrap();
                }
                black_box(&buf);
            })
        });
        g.bench_function("serde_json", |b| {
            b.iter(|| {
                buf.clear();
                for u in &users {
                    serde_json::to_writer(&mut buf, black_box(u)).unwrap();
                    buf.push(b'\n');
                }
                black_box(&buf);
            })
        });
        g.bench_function("sonic_rs", |b| {
            b.iter(|| {
                buf.clear();
                for u in &users {
                    sonic_rs::to_writer(&mut buf, black_box(u)).unwrap();
                    buf.push(b'\n');
                }
                black_box(&buf);
            })
        });
        g.bench_function("copy", |b| {
            b.iter(|| {
                buf.clear();
                for line in &finished {
                    buf.extend_from_slice(black_box(line.as_bytes()));
                }
                black_box(&buf);
            })
        });
        g.finish();
    }
}

/// 32 MiB of the delta lines (over and over), LF-terminated, as an engine's
/// stdout would carry them.
fn delta_stream() -> (Vec<u8>, usize) {
    let lines: Vec<String> = delta_events().iter().map(Event::to_line).collect();
    let mut out = Vec::with_capacity(32 * MIB + 256);
    let mut n = 0;
    'fill: loop {
        for l in &lines {
            if out.len() + l.len() > 32 * MIB {
                break 'fill;
            }
            out.extend_from_slice(l.as_bytes());
            n += 1;
        }
    }
    (out, n)
}

/// 32 MiB of deltas through a `BufRead` (8 KiB buffer, as `BufReader::new`
/// gives): `EventReader`, and the `read_until` loop a user would write with
/// serde_json and the derive.
fn events_stream(c: &mut Criterion) {
    let (data, lines) = delta_stream();
    let mut g = c.benchmark_group("events_stream/deltas_32mib");
    g.throughput(Throughput::Bytes(data.len() as u64));
    // A tenth of a second or more an iteration: a few per sample, the same
    // in each.
    g.sampling_mode(SamplingMode::Flat);
    g.sample_size(10);
    g.warm_up_time(Duration::from_millis(500));
    g.measurement_time(Duration::from_secs(3));
    g.bench_function("event_reader", |b| {
        b.iter(|| {
            let mut n = 0;
            for item in EventReader::new(BufReader::new(black_box(&data[..]))) {
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
                black_box(serde_json::from_slice::<UserEvent>(&line).unwrap());
                n += 1;
            }
            assert_eq!(n, lines);
        })
    });
    g.finish();
}

/// The one-line inputs (1 MiB, 1,000 jobs) take milliseconds an iteration:
/// as `codec.rs`'s `one_mib_sampling`, the same number of iterations in
/// every sample (flat), fewer samples and a shorter time.
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

/// `codec.rs`'s configuration.
fn config() -> Criterion {
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
    targets = events_decode, events_encode, events_stream
}
criterion_main!(benches);
