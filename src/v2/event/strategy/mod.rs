//! [`proptest`](mod@proptest) strategies for the engine's events (feature
//! `proptest`), re-exported from [`v2::strategy`](crate::v2::strategy):
//! [`event()`] for round trips, [`event_line()`] for near-miss event lines
//! paired with the outcome a client must give them, [`job_record()`] for a
//! valid background job.
//!
//! Unlike the commands' `line()`, whose outcome is asked of the crate's
//! own decoder, an event line's outcome is *predicted*: this module holds
//! its own statement of upstream's `parse` over the line's value (the
//! event table, each kind of field, job records, content, outcomes, usage,
//! and the text upstream writes a job's `data` back as), so a test that
//! holds [`Event::from_slice`] to [`event_line()`] holds it to a second,
//! independent reading of the rules.

use crate::v1::strategy::{field_value, key as v1_key, style, wire_string, Top, J};
use crate::v2::{
    Content, ContentPart, Event, EventError, Image, JobEventKind, JobRecord, JobState,
    JobStopOutcome, JsonText, PredictionOutcome, Usage, MAX_BASE64_LEN, MAX_IMAGE_BYTES,
};
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;
use proptest::sample::{select, Index};
use proptest::strategy::Union;

mod model;
#[cfg(test)]
use model::canonical;
use model::{json_text, model};

// ---------------------------------------------------------------------------
// The event table, as upstream's `parse` reads it.

/// How upstream's `parse` reads a field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// A required string.
    Str,
    /// A required `Int`, as `int` reads it.
    Int,
    /// A required `true` or `false`.
    Bool,
    /// An optional string, written `null` when absent.
    Null,
    /// An optional string, left out when absent.
    Omit,
    /// A string, this when absent or not a string.
    Default(&'static str),
    /// Content, by the commands' rules.
    Content,
    /// `usage_of`.
    Usage,
    /// A job record.
    Job,
    /// An array of job records.
    Jobs,
    /// A job event kind.
    JobEvent,
    /// A job stop outcome.
    Stop,
    /// A prediction outcome.
    Outcome,
    /// An array of strings.
    Names,
}

/// One event: its wire name and its fields, in `to_json`'s order.
#[derive(Debug)]
struct Schema {
    name: &'static str,
    fields: &'static [(&'static str, Kind)],
}

/// A field's value, read.
#[derive(Clone, Debug)]
enum Val {
    Str(String),
    Opt(Option<String>),
    Int(i32),
    Bool(bool),
    Content(Content),
    Usage(Usage),
    Job(Box<JobRecord>),
    Jobs(Vec<JobRecord>),
    JobKind(JobEventKind),
    Stop(JobStopOutcome),
    Outcome(PredictionOutcome),
    Names(Vec<String>),
}

/// A field's type, taken from its [`Val`].
trait FromVal: Sized {
    fn from_val(val: Val) -> Option<Self>;
}

macro_rules! from_val {
    ($($ty:ty => $V:ident),* $(,)?) => {
        $(
            impl FromVal for $ty {
                fn from_val(val: Val) -> Option<$ty> {
                    match val {
                        Val::$V(v) => Some(v),
                        _ => None,
                    }
                }
            }
        )*
    };
}

/// The open-set fields are strings on the wire: any string is one.
macro_rules! from_str_val {
    ($($ty:ty),*) => {$(
        impl FromVal for $ty {
            fn from_val(val: Val) -> Option<$ty> {
                match val {
                    Val::Str(s) => Some(s.into()),
                    _ => None,
                }
            }
        }
    )*};
}

from_str_val!(
    crate::v2::AppliedSteerKind,
    crate::v2::ApprovalOutcome,
    crate::v2::SubrunStatus
);

from_val! {
    String => Str,
    Option<String> => Opt,
    i32 => Int,
    bool => Bool,
    Content => Content,
    Usage => Usage,
    Box<JobRecord> => Job,
    Vec<JobRecord> => Jobs,
    JobEventKind => JobKind,
    JobStopOutcome => Stop,
    PredictionOutcome => Outcome,
    Vec<String> => Names,
}

macro_rules! table {
    ($( $Variant:ident = $name:ident { $( $field:ident : $kind:ident $(($d:literal))? ),* } ),* $(,)?) => {
        /// Every event, in `mod.rs`'s order.
        const SCHEMAS: &[Schema] = &[
            $( Schema {
                name: stringify!($name),
                fields: &[ $( (stringify!($field), Kind::$kind $(($d))?) ),* ],
            }, )*
        ];

        /// The event `name` holding `values`, in its fields' order.
        fn build(name: &str, values: Vec<Val>) -> Option<Event> {
            let mut values = values.into_iter();
            Some(match name {
                $( stringify!($name) => Event::$Variant {
                    $( $field: FromVal::from_val(values.next()?)?, )*
                }, )*
                _ => return None,
            })
        }

        /// Every variant is in the table: a new one fails to compile here.
        #[cfg(test)]
        fn listed(event: &Event) -> &'static str {
            match event {
                $( Event::$Variant { .. } => stringify!($name), )*
            }
        }
    };
}

table! {
    MaxStepsExhausted = max_steps_exhausted {},
    GoalUnblocked = goal_unblocked {},
    JobChanged = job_changed { kind: JobEvent, job: Job },
    PredictionResult = prediction_result { request_id: Str, source_sequence: Int, outcome: Outcome },
    JobsSnapshot = jobs_snapshot { request_id: Str, jobs: Jobs },
    JobStopResult = job_stop_result { request_id: Str, generation: Str, job_id: Str, outcome: Stop },
    AgentSetupFailed = agent_setup_failed { error: Str },
    AgentStep = agent_step { step: Int },
    StreamRetry = stream_retry { attempt: Int, max_attempts: Int, reason: Str },
    AgentAborted = agent_aborted { reason: Str },
    AgentFinished = agent_finished { answer: Str },
    TurnFailed = turn_failed { error: Str },
    AssistantDelta = assistant_delta { content: Str },
    ReasoningDelta = reasoning_delta { content: Str },
    AssistantMessage = assistant_message { content: Str },
    ReasoningMessage = reasoning_message { content: Str },
    Usage = usage { usage: Usage },
    ToolResult = tool_result { tool_call_id: Str, tool_name: Str, is_error: Bool, content: Str, brief: Null },
    ToolCallDecodeError = tool_call_decode_error { tool_call_id: Str, tool_name: Str, error: Str },
    ApprovalRequested = approval_requested { id: Str, tool_name: Str, detail: Str, body: Null },
    ApprovalResolved = approval_resolved { id: Str, outcome: Str },
    SteerApplied = steer_applied { kind: Default("prompt"), content: Content, submission_id: Omit },
    SteerDropped = steer_dropped { content: Content, submission_id: Omit },
    BackgroundNotice = background_notice { content: Str },
    GoalUpdated = goal_updated { goal: Null },
    GoalBlocked = goal_blocked { reason: Str },
    GoalCheck = goal_check { content: Str },
    GoalReminder = goal_reminder { content: Str },
    GoalContinue = goal_continue { remaining: Int },
    GoalBudgetExhausted = goal_budget_exhausted { turns: Int },
    PlanReminder = plan_reminder { content: Str },
    CompactionStarted = compaction_started { from_sequence: Int, to_sequence: Int },
    CompactionFinished = compaction_finished { from_sequence: Int, to_sequence: Int, summary: Str },
    CompactionFailed = compaction_failed { error: Str },
    SubrunStarted = subrun_started { id: Str, kind: Str, label: Str },
    SubrunFinished = subrun_finished {
        id: Str, status: Str, steps: Int, prompt_tokens: Int, completion_tokens: Int, unaccounted: Omit
    },
    WorkflowStarted = workflow_started { id: Str, journal: Str, events: Str, first_child: Int, child_count: Int },
    WorkflowFinished = workflow_finished { id: Str },
    AutoCompactionStarted = auto_compaction_started { from_sequence: Int, to_sequence: Int },
    AutoCompactionFinished = auto_compaction_finished { from_sequence: Int, to_sequence: Int, summary: Str },
    AutoCompactionFailed = auto_compaction_failed { error: Str },
    ContextYield = context_yield { to_sequence: Int, answer: Str },
    SessionStarted = session_started { session: Str, session_root: Str, workspace_root: Null },
    SessionError = session_error { error: Str },
    WorkspaceCreated = workspace_created { dir: Str },
    CommandError = command_error { error: Str },
    McpConfigIgnored = mcp_config_ignored { reason: Str },
    McpConfigUnreadable = mcp_config_unreadable { path: Str, error: Str },
    McpConfigInvalid = mcp_config_invalid { path: Str, error: Str },
    McpToolsRegistered = mcp_tools_registered { servers: Int, tools: Int, names: Names },
    McpToolDuplicate = mcp_tool_duplicate { server: Str, tool: Str },
    McpToolRenamed = mcp_tool_renamed { from: Str, to: Str },
    McpToolsCapped = mcp_tools_capped { server: Str, kept: Int },
    McpServerSkippedOverCap = mcp_server_skipped_over_cap { server: Str },
    McpConnectFailed = mcp_connect_failed { server: Str, error: Default("unknown error") },
    McpListToolsFailed = mcp_list_tools_failed { server: Str, error: Str },
    McpListToolsTimeout = mcp_list_tools_timeout { server: Str },
    McpNoTools = mcp_no_tools { server: Str },
}

// ---------------------------------------------------------------------------
// Valid events.

/// 2^53 - 1: a job's greatest count or timestamp.
const MAX_SAFE: i64 = (1 << 53) - 1;

/// Any event a client reads back from its line: strings drawn to stress an
/// encoder (as the commands' strategies draw them), integers at the edges
/// of `Int`, content of text and small valid images, job records within
/// every rule (components, counts, revisions, timestamps up to 2^53 - 1,
/// `data` of any JSON, in the text upstream writes it back as), prediction
/// outcomes and token counts as upstream allows them. Every event of the
/// table is drawn as often as any other.
pub fn event() -> impl Strategy<Value = Event> {
    case().prop_map(|case| case.event)
}

/// A background job record within every rule of upstream's
/// `JobRecord::from_json`, as [`event()`] puts in `job_changed` and
/// `jobs_snapshot`.
pub fn job_record() -> impl Strategy<Value = JobRecord> {
    record().prop_map(|(record, _)| record)
}

/// A valid event, and its line's members in `to_json`'s order (a job's
/// `data` as it was drawn, not yet as upstream writes it back).
#[derive(Clone, Debug)]
struct Case {
    /// The event's place in [`SCHEMAS`].
    index: usize,
    event: Event,
    entries: Vec<(String, J)>,
}

fn case() -> BoxedStrategy<Case> {
    cases(|_| 1)
}

/// A valid event, each drawn as often as `weight` says.
fn cases(weight: fn(&Schema) -> u32) -> BoxedStrategy<Case> {
    Union::new_weighted(
        SCHEMAS
            .iter()
            .enumerate()
            .map(|(index, schema)| {
                let fields: Vec<BoxedStrategy<(Val, Option<J>)>> =
                    schema.fields.iter().map(|&(_, kind)| valid(kind)).collect();
                let fields = fields
                    .prop_map(move |values| {
                        let mut entries =
                            vec![("event".to_owned(), J::Str(schema.name.to_owned()))];
                        let mut vals = Vec::with_capacity(values.len());
                        for (&(field, _), (val, j)) in schema.fields.iter().zip(values) {
                            if let Some(j) = j {
                                entries.push((field.to_owned(), j));
                            }
                            vals.push(val);
                        }
                        let event =
                            build(schema.name, vals).expect("the table builds its own events");
                        Case {
                            index,
                            event,
                            entries,
                        }
                    })
                    .boxed();
                (weight(schema), fields)
            })
            .collect(),
    )
    .boxed()
}

/// The kinds of nested values, with rules of their own.
fn nested_kind(kind: Kind) -> bool {
    matches!(
        kind,
        Kind::Content | Kind::Usage | Kind::Job | Kind::Jobs | Kind::Outcome
    )
}

/// The events whose fields hold nested values.
fn nested(schema: &Schema) -> bool {
    schema.fields.iter().any(|&(_, kind)| nested_kind(kind))
}

/// An `Int`: any, or an edge.
fn int_value() -> BoxedStrategy<i32> {
    prop_oneof![
        4 => any::<i32>(),
        1 => select(&[0, 1, -1, i32::MIN, i32::MAX][..]),
    ]
    .boxed()
}

/// A count at least 0: any, small, or an edge.
fn count_value() -> BoxedStrategy<i32> {
    prop_oneof![
        3 => 0..=i32::MAX,
        2 => 0..1000,
        1 => select(&[0, 1, i32::MAX][..]),
    ]
    .boxed()
}

/// A job's count or timestamp: 0 to 2^53 - 1.
fn safe_value() -> BoxedStrategy<i64> {
    prop_oneof![
        3 => 0..=MAX_SAFE,
        2 => 1_600_000_000_000i64..1_900_000_000_000,
        1 => select(vec![0, 1, i64::from(i32::MAX), MAX_SAFE - 1, MAX_SAFE]),
    ]
    .boxed()
}

fn num(n: impl ToString) -> J {
    J::Num(n.to_string())
}

fn obj(entries: Vec<(&str, J)>) -> J {
    J::Obj(
        entries
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect(),
    )
}

fn opt_str(s: &Option<String>) -> J {
    s.clone().map_or(J::Null, J::Str)
}

/// A string that is not empty.
fn nonempty() -> BoxedStrategy<String> {
    wire_string()
        .prop_map(|s| if s.is_empty() { "x".to_owned() } else { s })
        .boxed()
}

/// A valid value of `kind`, and its JSON (`None`: the key left out).
fn valid(kind: Kind) -> BoxedStrategy<(Val, Option<J>)> {
    match kind {
        Kind::Str | Kind::Default(_) => wire_string()
            .prop_map(|s| (Val::Str(s.clone()), Some(J::Str(s))))
            .boxed(),
        Kind::Null => option::of(wire_string())
            .prop_map(|s| (Val::Opt(s.clone()), Some(opt_str(&s))))
            .boxed(),
        Kind::Omit => option::of(wire_string())
            .prop_map(|s| (Val::Opt(s.clone()), s.map(J::Str)))
            .boxed(),
        Kind::Int => int_value()
            .prop_map(|n| (Val::Int(n), Some(num(n))))
            .boxed(),
        Kind::Bool => any::<bool>()
            .prop_map(|b| (Val::Bool(b), Some(J::Bool(b))))
            .boxed(),
        Kind::Content => crate::v2::strategy::content()
            .prop_map(|c| {
                let j = crate::v2::strategy::content_j(&c);
                (Val::Content(c), Some(j))
            })
            .boxed(),
        Kind::Usage => vec(count_value(), 5)
            .prop_map(|n| {
                let usage = Usage::new(n[0], n[1], n[2], n[3], n[4]);
                let j = obj(USAGE_KEYS
                    .iter()
                    .zip(&n)
                    .map(|(k, n)| (*k, num(n)))
                    .collect());
                (Val::Usage(usage), Some(j))
            })
            .boxed(),
        Kind::Job => record()
            .prop_map(|(r, j)| (Val::Job(Box::new(r)), Some(j)))
            .boxed(),
        Kind::Jobs => vec(record(), 0..3)
            .prop_map(|jobs| {
                let (records, js): (Vec<JobRecord>, Vec<J>) = jobs.into_iter().unzip();
                (Val::Jobs(records), Some(J::Arr(js)))
            })
            .boxed(),
        Kind::JobEvent => select(JOB_KINDS)
            .prop_map(|k| (Val::JobKind(k), Some(J::Str(k.as_str().to_owned()))))
            .boxed(),
        Kind::Stop => select(STOP_OUTCOMES)
            .prop_map(|k| (Val::Stop(k), Some(J::Str(k.as_str().to_owned()))))
            .boxed(),
        Kind::Outcome => outcome()
            .prop_map(|(o, j)| (Val::Outcome(o), Some(j)))
            .boxed(),
        Kind::Names => vec(wire_string(), 0..4)
            .prop_map(|names| {
                let j = J::Arr(names.iter().cloned().map(J::Str).collect());
                (Val::Names(names), Some(j))
            })
            .boxed(),
    }
}

const USAGE_KEYS: [&str; 5] = [
    "prompt_tokens",
    "completion_tokens",
    "total_tokens",
    "prompt_cache_hit_tokens",
    "prompt_cache_miss_tokens",
];

const JOB_KINDS: &[JobEventKind] = &[
    JobEventKind::Started,
    JobEventKind::Updated,
    JobEventKind::Finished,
    JobEventKind::Failed,
];

const STOP_OUTCOMES: &[JobStopOutcome] = &[
    JobStopOutcome::Stopped,
    JobStopOutcome::AlreadyTerminal,
    JobStopOutcome::NotFound,
    JobStopOutcome::WrongRuntime,
];

/// A valid prediction outcome, and its JSON.
fn outcome() -> BoxedStrategy<(PredictionOutcome, J)> {
    prop_oneof![
        3 => (option::of(nonempty()), count_value(), count_value()).prop_map(|(text, i, o)| {
            let j = obj(vec![
                ("kind", J::Str("completed".into())),
                ("text", opt_str(&text)),
                ("input_tokens", num(i)),
                ("output_tokens", num(o)),
            ]);
            (
                PredictionOutcome::Completed {
                    text,
                    input_tokens: i,
                    output_tokens: o,
                },
                j,
            )
        }),
        1 => Just((PredictionOutcome::Skipped, obj(vec![("kind", J::Str("skipped".into()))]))),
        1 => Just((PredictionOutcome::Cancelled, obj(vec![("kind", J::Str("cancelled".into()))]))),
        1 => wire_string().prop_map(|m| {
            let j = obj(vec![("kind", J::Str("failed".into())), ("message", J::Str(m.clone()))]);
            (PredictionOutcome::Failed(m), j)
        }),
    ]
    .boxed()
}

/// A valid job state, and its JSON.
fn state() -> BoxedStrategy<(JobState, J)> {
    let kind = |k: &str| ("kind", J::Str(k.to_owned()));
    prop_oneof![
        2 => Just((JobState::Running, obj(vec![kind("running")]))),
        1 => Just((JobState::Stopping, obj(vec![kind("stopping")]))),
        1 => Just((JobState::Interrupted, obj(vec![kind("interrupted")]))),
        2 => int_value().prop_map(move |c| (JobState::Exited(c), obj(vec![kind("exited"), ("code", num(c))]))),
        2 => nonempty().prop_map(move |r| {
            let j = obj(vec![kind("stopped"), ("reason", J::Str(r.clone()))]);
            (JobState::Stopped(r), j)
        }),
    ]
    .boxed()
}

/// A job's `data` as drawn: any JSON value (numbers of every spelling,
/// nesting past serde_json's limit, repeated keys), mostly objects.
fn data_value() -> BoxedStrategy<J> {
    let key = prop_oneof![
        2 => select(&["a", "b", "", "é", "data", "a b"][..]).prop_map(str::to_owned),
        1 => v1_key(),
    ];
    prop_oneof![
        2 => field_value(),
        3 => vec((key, field_value()), 0..5).prop_map(J::Obj),
    ]
    .boxed()
}

/// A valid job record, and its JSON in `to_json`'s order (its `data` as
/// drawn; left out when there is none).
fn record() -> BoxedStrategy<(JobRecord, J)> {
    let component = || crate::v2::strategy::component().boxed();
    let opt = || option::of(wire_string()).boxed();
    let revision = prop_oneof![3 => 1..=i32::MAX, 2 => 1..10, 1 => Just(i32::MAX)];
    (
        (
            component(),
            component(),
            revision,
            wire_string(),
            opt(),
            opt(),
            state(),
            safe_value(),
            safe_value(),
            option::of(safe_value()),
            option::of(safe_value()),
        ),
        (
            option::of(component()),
            any::<bool>(),
            safe_value(),
            count_value(),
            any::<bool>(),
            any::<bool>(),
            opt(),
            opt(),
            opt(),
            option::of(data_value()),
        ),
    )
        .prop_map(
            |(
                (
                    generation,
                    id,
                    revision,
                    command,
                    description,
                    cwd,
                    (state, state_j),
                    started,
                    backgrounded,
                    finished,
                    last_output,
                ),
                (
                    output_file,
                    persistent,
                    bytes,
                    chars,
                    truncated,
                    invalid_utf8,
                    output_error,
                    persistence_error,
                    cleanup_error,
                    data,
                ),
            )| {
                let data = data.filter(|d| !matches!(d, J::Null));
                let mut r = JobRecord::new(
                    generation.clone(),
                    id.clone(),
                    revision,
                    command.clone(),
                    state,
                    started,
                    backgrounded,
                );
                r.description = description.clone();
                r.cwd = cwd.clone();
                r.finished_at_ms = finished;
                r.last_output_at_ms = last_output;
                r.output_file = output_file.clone();
                r.output_persistent = persistent;
                r.output_bytes = bytes;
                r.output_chars = chars;
                r.output_truncated = truncated;
                r.invalid_utf8 = invalid_utf8;
                r.output_error = output_error.clone();
                r.persistence_error = persistence_error.clone();
                r.cleanup_error = cleanup_error.clone();
                r.data = data.as_ref().and_then(json_text);
                let opt_num = |n: Option<i64>| n.map_or(J::Null, num);
                let mut entries = vec![
                    ("schema_version", num(1)),
                    ("cleanup_error", opt_str(&cleanup_error)),
                    ("generation", J::Str(generation)),
                    ("id", J::Str(id)),
                    ("revision", num(revision)),
                    ("command", J::Str(command)),
                    ("description", opt_str(&description)),
                    ("cwd", opt_str(&cwd)),
                    ("state", state_j),
                    ("started_at_ms", num(started)),
                    ("backgrounded_at_ms", num(backgrounded)),
                    ("finished_at_ms", opt_num(finished)),
                    ("last_output_at_ms", opt_num(last_output)),
                    ("output_file", opt_str(&output_file)),
                    ("output_persistent", J::Bool(persistent)),
                    ("output_bytes", num(bytes)),
                    ("output_chars", num(chars)),
                    ("output_truncated", J::Bool(truncated)),
                    ("invalid_utf8", J::Bool(invalid_utf8)),
                    ("output_error", opt_str(&output_error)),
                    ("persistence_error", opt_str(&persistence_error)),
                ];
                if let Some(data) = data {
                    entries.push(("data", data));
                }
                (r, obj(entries))
            },
        )
        .boxed()
}

// ---------------------------------------------------------------------------
// Near-miss lines.

/// A near-miss event line, without its LF, and the outcome upstream's
/// `parse` gives it: `Ok(event)`, or `Err` with the [`EventError`] this
/// crate reports for a line a client skips.
///
/// Lines are JSON (never a lone surrogate escape, never a LF; some past
/// serde_json's limits: numbers beyond a double, nesting past 128). They
/// start from a valid event (every one of the table), from a bag of event
/// names and fields, or from a value that is no object, and are bent:
/// fields dropped, set to values of the wrong kind or at the edges of
/// their rules, repeated (the last one wins), renamed, reordered, noise
/// fields added, the event's name bent or dropped; each line written with
/// the commands' styles (whitespace between tokens, keys and strings
/// partly `\u`-escaped). The bends reach into the nested values: integers
/// in every spelling around `Int`'s range, usage counts, prediction
/// outcomes (empty or missing text, counts that truncate, negative ones),
/// job records (schema version, components, revisions, counts and
/// timestamps around 2^31 and 2^53, states, optional fields of the wrong
/// kind, `data` of any JSON), and content (the commands' near misses:
/// parts of unknown type, missing fields, bent base64 and media types).
///
/// The outcome is predicted by this module's own statement of the rules,
/// not asked of [`Event::from_slice`]: a test that compares the two holds
/// the decoder to a second reading.
pub fn event_line() -> impl Strategy<Value = (String, Result<Event, EventError>)> {
    // The six events with nested values are two fifths of the bent lines,
    // not a tenth: their rules are most of the rules.
    // Each event's bends, made once.
    let edits: Vec<BoxedStrategy<Vec<Edit>>> =
        SCHEMAS.iter().map(|s| vec(edit(s), 0..3).boxed()).collect();
    let bent = cases(|s| if nested(s) { 6 } else { 1 })
        .prop_flat_map(move |case| (Just(case.entries), edits[case.index].clone()));
    let object = prop_oneof![
        8 => bent.prop_map(|(mut entries, edits)| {
            for e in edits {
                e.apply(&mut entries);
            }
            entries
        }),
        2 => bag(),
    ];
    let top = prop_oneof![
        12 => object.prop_map(Top::Object),
        1 => not_an_object().prop_map(Top::Other),
    ];
    (top, style()).prop_map(|(top, style)| {
        let line = style.render(&top);
        let outcome = model(&top);
        (line, outcome)
    })
}

/// One change to an object's members.
#[derive(Clone, Debug)]
enum Edit {
    /// Every member of this key, gone.
    Drop(String),
    /// The key's last member holds this value (added when there is none).
    Set(String, J),
    /// The key again with this value: after its last member (so it wins),
    /// or before its first.
    Dup(String, J, bool),
    /// The key's last member renamed.
    Rename(String, String),
    /// A member added at this position.
    Noise(Index, String, J),
    /// Two members swapped.
    Swap(Index, Index),
}

impl Edit {
    fn apply(self, entries: &mut Vec<(String, J)>) {
        let last = |entries: &[(String, J)], key: &str| entries.iter().rposition(|(k, _)| k == key);
        match self {
            Edit::Drop(key) => entries.retain(|(k, _)| *k != key),
            Edit::Set(key, value) => match last(entries, &key) {
                Some(i) => entries[i].1 = value,
                None => entries.push((key, value)),
            },
            Edit::Dup(key, value, after) => {
                let at = if after {
                    last(entries, &key).map_or(entries.len(), |i| i + 1)
                } else {
                    entries.iter().position(|(k, _)| *k == key).unwrap_or(0)
                };
                entries.insert(at, (key, value));
            }
            Edit::Rename(key, to) => {
                if let Some(i) = last(entries, &key) {
                    entries[i].0 = to;
                }
            }
            Edit::Noise(at, key, value) => {
                let at = at.index(entries.len() + 1);
                entries.insert(at, (key, value));
            }
            Edit::Swap(a, b) => {
                if !entries.is_empty() {
                    let (a, b) = (a.index(entries.len()), b.index(entries.len()));
                    entries.swap(a, b);
                }
            }
        }
    }
}

/// A change to `key`, with values from `value`.
fn field_edit(key: &'static str, value: BoxedStrategy<J>) -> BoxedStrategy<Edit> {
    prop_oneof![
        2 => Just(Edit::Drop(key.to_owned())),
        4 => value.clone().prop_map(move |v| Edit::Set(key.to_owned(), v)),
        2 => (value, any::<bool>()).prop_map(move |(v, after)| Edit::Dup(key.to_owned(), v, after)),
        1 => noise_key().prop_map(move |to| Edit::Rename(key.to_owned(), to)),
    ]
    .boxed()
}

/// A member no event reads, or one some event does.
fn noise_key() -> BoxedStrategy<String> {
    let fields: Vec<&'static str> = SCHEMAS
        .iter()
        .flat_map(|s| s.fields.iter().map(|&(f, _)| f))
        .collect();
    prop_oneof![
        3 => v1_key(),
        1 => select(fields).prop_map(str::to_owned),
        1 => select(&["Event", "event ", "events", "EVENT", "kind", "type"][..]).prop_map(str::to_owned),
    ]
    .boxed()
}

/// A change to an event's line: to one of its fields (mostly), its name,
/// or its members' order, or noise.
fn edit(schema: &'static Schema) -> BoxedStrategy<Edit> {
    let mut arms: Vec<(u32, BoxedStrategy<Edit>)> = vec![
        (1, field_edit("event", name_value())),
        (
            1,
            (any::<Index>(), noise_key(), field_value())
                .prop_map(|(at, k, v)| Edit::Noise(at, k, v))
                .boxed(),
        ),
        (
            1,
            (any::<Index>(), any::<Index>())
                .prop_map(|(a, b)| Edit::Swap(a, b))
                .boxed(),
        ),
    ];
    if !schema.fields.is_empty() {
        // A field with a nested value (its own rules) is bent the most,
        // then the kinds few events have; strings and integers, which
        // most events have, the least.
        let fields = schema
            .fields
            .iter()
            .map(|&(field, kind)| {
                let weight = match kind {
                    _ if nested_kind(kind) => 4,
                    Kind::Str | Kind::Int => 1,
                    _ => 3,
                };
                (weight, field_edit(field, near(kind)))
            })
            .collect();
        arms.push((8, Union::new_weighted(fields).boxed()));
    }
    Union::new_weighted(arms).boxed()
}

/// An `event` value: a name, a near miss of one, or no string.
fn name_value() -> BoxedStrategy<J> {
    let names: Vec<&'static str> = SCHEMAS.iter().map(|s| s.name).collect();
    let bent = (select(names.clone()), 0u8..6).prop_map(|(name, how)| match how {
        0 => name.to_uppercase(),
        1 => format!("{name} "),
        2 => format!(" {name}"),
        3 => name[..name.len() - 1].to_owned(),
        4 => name.replace('_', "-"),
        _ => format!("{name}\0"),
    });
    prop_oneof![
        4 => select(names).prop_map(|n| J::Str(n.to_owned())),
        2 => bent.prop_map(J::Str),
        1 => select(&["", "event", "fleet_started", "prompt", "command_errors"][..])
            .prop_map(|n| J::Str(n.to_owned())),
        1 => wire_string().prop_map(J::Str),
        1 => field_value(),
    ]
    .boxed()
}

/// Values for a field of `kind`: right, at the edges of its rules, or of
/// another kind.
fn near(kind: Kind) -> BoxedStrategy<J> {
    let junk = || field_value().boxed();
    match kind {
        Kind::Str | Kind::Null | Kind::Omit | Kind::Default(_) => prop_oneof![
            3 => wire_string().prop_map(J::Str),
            1 => junk(),
        ]
        .boxed(),
        Kind::Int => prop_oneof![
            3 => int_text().prop_map(J::Num),
            1 => Just(J::Str("7".into())),
            1 => junk(),
        ]
        .boxed(),
        Kind::Bool => prop_oneof![
            2 => any::<bool>().prop_map(J::Bool),
            1 => junk(),
        ]
        .boxed(),
        Kind::Content => crate::v2::strategy::content_value(),
        Kind::Usage => usage_near(),
        Kind::Job => record_near(),
        Kind::Jobs => prop_oneof![
            4 => vec(prop_oneof![4 => record_near(), 1 => junk()], 0..3).prop_map(J::Arr),
            1 => junk(),
        ]
        .boxed(),
        Kind::JobEvent => prop_oneof![
            4 => select(&["started", "updated", "finished", "failed", "Started", "start", "", "stopped", "failed "][..])
                .prop_map(|s| J::Str(s.to_owned())),
            1 => junk(),
        ]
        .boxed(),
        Kind::Stop => prop_oneof![
            4 => select(&["stopped", "already_terminal", "not_found", "wrong_runtime", "Stopped", "already-terminal", "", "started"][..])
                .prop_map(|s| J::Str(s.to_owned())),
            1 => junk(),
        ]
        .boxed(),
        Kind::Outcome => outcome_near(),
        Kind::Names => prop_oneof![
            3 => vec(wire_string().prop_map(J::Str), 0..4).prop_map(J::Arr),
            1 => vec(field_value(), 1..3).prop_map(J::Arr),
            1 => junk(),
        ]
        .boxed(),
    }
}

/// `Int` texts at the edges: both ends of the range and just past them,
/// whole numbers spelled as fractions and exponents, fractions, overflow.
const INT_EDGES: &[&str] = &[
    "-2147483648",
    "-2147483649",
    "-2147483648.0",
    "-2147483648.5",
    "-1",
    "-1.5",
    "-0.0",
    "-1e0",
    "-2147483647.9",
    "-1e400",
    "2147483647",
    "2147483648",
    "7.0",
    "7e0",
    "0.7e1",
    "7.5",
];

fn int_text() -> BoxedStrategy<String> {
    prop_oneof![
        3 => crate::v2::strategy::sequence_text(),
        2 => select(INT_EDGES).prop_map(str::to_owned),
        1 => any::<i32>().prop_map(|n| n.to_string()),
    ]
    .boxed()
}

/// Counts that are right, and ones at the edges of 0 to 2^31 - 1.
const COUNT_EDGES: &[&str] = &[
    "0",
    "-0",
    "0.0",
    "-1",
    "1.0",
    "1e0",
    "1.5",
    "-0.5",
    "0.5",
    "2147483647",
    "2147483647.5",
    "2147483648",
    "-2147483648",
    "-2147483649",
    "1e400",
    "1e9",
    "1e10",
];

fn count_near() -> BoxedStrategy<J> {
    prop_oneof![
        4 => count_value().prop_map(num),
        2 => select(COUNT_EDGES).prop_map(|t| J::Num(t.to_owned())),
        1 => (i32::MIN..0).prop_map(num),
        1 => Just(J::Str("3".into())),
        1 => field_value(),
    ]
    .boxed()
}

/// A `usage` value: five counts, one of them bent, dropped or moved, with
/// noise; or no object.
fn usage_near() -> BoxedStrategy<J> {
    prop_oneof![
        4 => (
            vec(count_near(), 5),
            option::of(any::<Index>()),
            option::of((any::<Index>(), any::<Index>())),
            option::of((v1_key(), field_value())),
        )
            .prop_map(|(counts, drop, swap, noise)| {
                let mut entries: Vec<(String, J)> = USAGE_KEYS
                    .iter()
                    .map(|k| (*k).to_owned())
                    .zip(counts)
                    .collect();
                if let Some(i) = drop {
                    entries.remove(i.index(entries.len()));
                }
                if let Some((a, b)) = swap {
                    Edit::Swap(a, b).apply(&mut entries);
                }
                if let Some((k, v)) = noise {
                    entries.push((k, v));
                }
                J::Obj(entries)
            }),
        1 => field_value(),
    ]
    .boxed()
}

/// A prediction outcome: a kind, right or not, with each of its fields
/// there or not, right, at the edges of its rules or of another kind.
fn outcome_near() -> BoxedStrategy<J> {
    let kind = prop_oneof![
        // `completed` has the most rules.
        4 => Just(J::Str("completed".into())),
        3 => select(&["skipped", "cancelled", "failed"][..]).prop_map(|s| J::Str(s.to_owned())),
        1 => select(&["Completed", "complete", "", "failed "][..]).prop_map(|s| J::Str(s.to_owned())),
        1 => field_value(),
    ];
    let text = prop_oneof![
        2 => Just(J::Null),
        3 => nonempty().prop_map(J::Str),
        1 => Just(J::Str(String::new())),
        1 => field_value(),
    ];
    let message = prop_oneof![3 => wire_string().prop_map(J::Str), 1 => field_value()];
    prop_oneof![
        1 => outcome().prop_map(|(_, j)| j),
        4 => (
            option::weighted(0.95, kind),
            option::weighted(0.85, text),
            option::weighted(0.9, count_near()),
            option::weighted(0.9, count_near()),
            option::of(message),
            option::of((any::<Index>(), any::<Index>())),
        )
            .prop_map(|(kind, text, input, output, message, swap)| {
                let mut entries = Vec::new();
                for (k, v) in [
                    ("kind", kind),
                    ("text", text),
                    ("input_tokens", input),
                    ("output_tokens", output),
                    ("message", message),
                ] {
                    if let Some(v) = v {
                        entries.push((k.to_owned(), v));
                    }
                }
                if let Some((a, b)) = swap {
                    Edit::Swap(a, b).apply(&mut entries);
                }
                J::Obj(entries)
            }),
        1 => field_value(),
    ]
    .boxed()
}

/// A job record's members, in `to_json`'s order.
const RECORD_FIELDS: &[&str] = &[
    "schema_version",
    "cleanup_error",
    "generation",
    "id",
    "revision",
    "command",
    "description",
    "cwd",
    "state",
    "started_at_ms",
    "backgrounded_at_ms",
    "finished_at_ms",
    "last_output_at_ms",
    "output_file",
    "output_persistent",
    "output_bytes",
    "output_chars",
    "output_truncated",
    "invalid_utf8",
    "output_error",
    "persistence_error",
    "data",
];

/// Texts around a job's integers: 0 and its spellings, the ends of 2^31
/// and 2^53, fractions, negatives, overflow.
const UINT_EDGES: &[&str] = &[
    "0",
    "-0",
    "0.0",
    "1",
    "-1",
    "1.5",
    "1e3",
    "2147483647",
    "2147483648",
    "4294967296",
    "9007199254740991",
    "9007199254740991.0",
    "9007199254740992",
    "9007199254740993",
    "1e16",
    "1e400",
    "-1e400",
    "1e-400",
];

/// `schema_version`s: 1 in every spelling, and others.
const VERSIONS: &[&str] = &[
    "1",
    "1.0",
    "1e0",
    "10e-1",
    "0.99999999999999999",
    "1.0000000000000001",
    "2",
    "0",
    "-1",
    "1.5",
];

/// Values for a record's member `field`.
fn record_field_near(field: &'static str) -> BoxedStrategy<J> {
    let junk = || field_value().boxed();
    match field {
        "schema_version" => prop_oneof![
            4 => select(VERSIONS).prop_map(|t| J::Num(t.to_owned())),
            1 => Just(J::Str("1".into())),
            1 => junk(),
        ]
        .boxed(),
        "generation" | "id" | "output_file" => prop_oneof![
            3 => crate::v2::strategy::component().prop_map(J::Str),
            2 => select(&["", ".", "..", "...", "a/b", "é", "a b", "../x", ".x", "-"][..])
                .prop_map(|s| J::Str(s.to_owned())),
            1 => (199usize..=202).prop_map(|n| J::Str("x".repeat(n))),
            1 => Just(J::Null),
            1 => junk(),
        ]
        .boxed(),
        "revision" | "output_chars" | "started_at_ms" | "backgrounded_at_ms" | "finished_at_ms"
        | "last_output_at_ms" | "output_bytes" => prop_oneof![
            3 => select(UINT_EDGES).prop_map(|t| J::Num(t.to_owned())),
            2 => safe_value().prop_map(num),
            1 => Just(J::Null),
            1 => junk(),
        ]
        .boxed(),
        "output_persistent" | "output_truncated" | "invalid_utf8" => prop_oneof![
            2 => any::<bool>().prop_map(J::Bool),
            1 => junk(),
        ]
        .boxed(),
        "state" => state_near(),
        "data" => prop_oneof![3 => data_value(), 1 => Just(J::Null)].boxed(),
        _ => prop_oneof![
            3 => wire_string().prop_map(J::Str),
            1 => Just(J::Null),
            1 => junk(),
        ]
        .boxed(),
    }
}

/// A job state: right, bent (an empty or missing reason, a code out of
/// `Int` or of another kind, an unknown kind), or no object.
fn state_near() -> BoxedStrategy<J> {
    let kind = prop_oneof![
        5 => select(&["running", "stopping", "interrupted", "exited", "stopped"][..])
            .prop_map(|s| J::Str(s.to_owned())),
        1 => select(&["Running", "", "done", "exit"][..]).prop_map(|s| J::Str(s.to_owned())),
        1 => field_value(),
    ];
    let code = prop_oneof![3 => int_text().prop_map(J::Num), 1 => field_value()];
    let reason = prop_oneof![
        3 => wire_string().prop_map(J::Str),
        1 => Just(J::Str(String::new())),
        1 => field_value(),
    ];
    prop_oneof![
        2 => state().prop_map(|(_, j)| j),
        3 => (option::weighted(0.9, kind), option::of(code), option::of(reason)).prop_map(
            |(kind, code, reason)| {
                let mut entries = Vec::new();
                for (k, v) in [("kind", kind), ("code", code), ("reason", reason)] {
                    if let Some(v) = v {
                        entries.push((k.to_owned(), v));
                    }
                }
                J::Obj(entries)
            }
        ),
        1 => field_value(),
    ]
    .boxed()
}

/// A job record: valid, or bent in up to three members; or no object.
fn record_near() -> BoxedStrategy<J> {
    let edit = Union::new_weighted(RECORD_FIELDS.iter().map(|&field| {
        let value = record_field_near(field);
        // The members with rules of their own are bent the most.
        let weight = match field {
            "state" => 4,
            "schema_version" | "generation" | "id" | "revision" | "output_chars"
            | "output_file" | "data" => 2,
            _ => 1,
        };
        (weight, prop_oneof![
            2 => Just(Edit::Drop(field.to_owned())),
            5 => value.clone().prop_map(move |v| Edit::Set(field.to_owned(), v)),
            1 => (value, any::<bool>()).prop_map(move |(v, after)| Edit::Dup(field.to_owned(), v, after)),
            1 => (any::<Index>(), v1_key(), field_value()).prop_map(|(at, k, v)| Edit::Noise(at, k, v)),
        ])
    }).collect());
    prop_oneof![
        6 => (record(), vec(edit, 0..3)).prop_map(|((_, j), edits)| {
            let J::Obj(mut entries) = j else {
                return j;
            };
            for e in edits {
                e.apply(&mut entries);
            }
            J::Obj(entries)
        }),
        1 => field_value(),
    ]
    .boxed()
}

/// An event's name (or a near miss of one) and a few fields of any event,
/// with values for their kind or of another.
fn bag() -> BoxedStrategy<Vec<(String, J)>> {
    let mut fields: Vec<(&'static str, Kind)> = SCHEMAS
        .iter()
        .flat_map(|s| s.fields.iter().copied())
        .collect();
    fields.sort_by_key(|&(f, kind)| (f, format!("{kind:?}")));
    fields.dedup();
    let any_field = Union::new(
        fields
            .into_iter()
            .map(|(f, kind)| (Just(f.to_owned()), near(kind))),
    );
    let field = prop_oneof![
        4 => any_field,
        1 => (v1_key(), field_value()),
    ];
    (name_value(), vec(field, 0..5))
        .prop_map(|(name, mut rest)| {
            rest.insert(0, ("event".to_owned(), name));
            rest
        })
        .boxed()
}

/// A line that is not an object: a scalar, an array (one holding an
/// event), an event's line quoted as a string; now and then an object
/// (a value nested in objects, one of noise keys) after all.
fn not_an_object() -> BoxedStrategy<J> {
    prop_oneof![
        3 => field_value(),
        1 => case().prop_map(|c| J::Arr(vec![J::Obj(c.entries)])),
        1 => event().prop_map(|e| J::Str(e.to_string())),
    ]
    .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;

    /// The encoder writes what the model writes: every event's members in
    /// the table's order, absent optional ones as `null` or left out, as
    /// the table says, and a job's `data` as upstream writes it back.
    #[test]
    fn to_line_is_the_models_line() {
        let mut runner = TestRunner::deterministic();
        let cases = case();
        let mut names = std::collections::BTreeSet::new();
        for _ in 0..3000 {
            let case = cases.new_tree(&mut runner).unwrap().current();
            // A valid event's line is its members as upstream writes a
            // value back.
            let mut line = String::new();
            canonical(&J::Obj(case.entries.clone()), &mut line);
            assert_eq!(case.event.to_string(), line);
            assert_eq!(model(&Top::Object(case.entries)), Ok(case.event.clone()));
            names.insert(listed(&case.event));
        }
        assert_eq!(names.len(), SCHEMAS.len());
        assert_eq!(SCHEMAS.len(), 58);
    }
}
