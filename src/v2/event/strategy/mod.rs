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
mod near;
#[cfg(test)]
use model::canonical;
use model::{json_text, model};
pub use near::event_line;

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
    PredictionResult = prediction_result { source_sequence: Int, outcome: Outcome },
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
