//! The engine's events: what `openseek serve` writes on its stdout, one
//! JSON object a line, and every client reads back (upstream's
//! `protocol/event.mbt` @ fdf10827; `parse.mbt` and `to_json.mbt`
//! reconstructed from the API listing @ fdf10827).
//!
//! The table below is the one place each event is defined: its variant,
//! wire name, fields in the order `to_json` writes them, and how `parse`
//! reads each (required, or defaulted). The enum, the constructors, the
//! decoder and the encoder are all generated from it.

#[cfg(feature = "arbitrary")]
mod arbitrary;
mod build;
mod command_error;
mod error;
mod jobs;
mod json_text;
mod names;
mod rules;
mod serde;
// The events' proptest strategies, re-exported from `v2::strategy`.
#[cfg(feature = "proptest")]
pub(crate) mod strategy;
mod write;

pub use self::build::{SubrunFinishedBuilder, WorkflowStartedBuilder};
pub use self::command_error::CommandErrorCause;
pub use self::error::{EventError, EventLineError, EventReadError};
pub use self::jobs::{JobEventKind, JobRecord, JobState, JobStopOutcome, PredictionOutcome, Usage};
pub use self::json_text::JsonText;
pub use self::names::{AppliedSteerKind, ApprovalOutcome, SubrunStatus};
pub use crate::refusal::Refusal;

use self::rules::{required, text};
use self::write::WriteValue;
use crate::v2::encode::Out;
use crate::v2::Content;
use crate::wire::escape::{self, Fmt, Len, Overflow, ShortBuf, StackBuf};
use crate::wire::tree::{self, JStr, Json, Members, Object};
use std::{fmt, io};

/// How `parse` reads a field, and whether `to_json` writes it when absent.
macro_rules! read_field {
    ($obj:ident, $event:expr, $field:ident, $ty:ty) => {
        required::<$ty>($obj, $event, stringify!($field))?
    };
    // Absent or not a string: `None`, written `null`.
    ($obj:ident, $event:expr, $field:ident, $ty:ty, null) => {
        text($obj, stringify!($field))
    };
    // Absent or not a string: `None`, and the key left out.
    ($obj:ident, $event:expr, $field:ident, $ty:ty, omit) => {
        text($obj, stringify!($field))
    };
    // Absent or not a string: the default.
    ($obj:ident, $event:expr, $field:ident, $ty:ty, default = $d:literal) => {
        text($obj, stringify!($field)).map_or_else(|| <$ty>::from($d), <$ty>::from)
    };
}

macro_rules! write_field {
    ($k:ident, $field:ident, omit) => {
        if let Some(value) = $field {
            $k.put(concat!(",\"", stringify!($field), "\":"))?;
            value.write($k)?;
        }
    };
    ($k:ident, $field:ident $(, $mode:ident $(= $d:literal)?)?) => {
        $k.put(concat!(",\"", stringify!($field), "\":"))?;
        $field.write($k)?;
    };
}

macro_rules! serialize_field {
    ($map:ident, $field:ident, omit) => {
        if let Some(value) = $field {
            $map.serialize_entry(stringify!($field), value)?;
        }
    };
    ($map:ident, $field:ident $(, $mode:ident $(= $d:literal)?)?) => {
        $map.serialize_entry(stringify!($field), $field)?;
    };
}

/// An event's constructor, named as its wire name: each field `impl Into`
/// its type, at most four of them; an event with more is built
/// (`[builder]`) by hand in `build.rs`.
macro_rules! constructor {
    ([builder] $($rest:tt)*) => {};
    ($(#[$m:meta])* $Variant:ident $name:ident { $( $field:ident : $ty:ty ),* }) => {
        $(#[$m])*
        #[must_use]
        pub fn $name($( $field: impl Into<$ty> ),*) -> Event {
            const { assert!([$(stringify!($field)),*].len() <= 4, "at most four positional arguments: make it a [builder]") };
            Event::$Variant { $( $field: $field.into(), )* }
        }
    };
}

macro_rules! events {
    (
        units { $( $(#[$um:meta])* $Unit:ident = $uname:ident, )* }
        structs { $(
            $(#[$m:meta])*
            $Variant:ident = $name:ident $([$build:ident])? {
                $( $(#[$fm:meta])* $field:ident : $ty:ty $([$mode:ident $(= $d:literal)?])? ),* $(,)?
            }
        ),* $(,)? }
    ) => {
        /// One event of the engine's stdout, as upstream defines it.
        ///
        /// Decoded as upstream's `parse` decides ([`Event::from_slice`],
        /// `FromStr`, [`Event::from_json`]), written as its `to_json` and
        /// today's stringify write ([`Event::to_line`],
        /// [`Event::write_line`], `Display`). Each variant has a
        /// constructor named as its wire name (`Event::agent_step(3)`);
        /// the enum and its struct variants are `#[non_exhaustive]`, so a
        /// new upstream event or field breaks no one.
        ///
        /// ```
        /// use serve_command::v2::Event;
        /// let event = Event::from_slice(br#"{"event":"assistant_delta","content":"Hel"}"#)?;
        /// assert_eq!(event, Event::assistant_delta("Hel"));
        /// assert_eq!(event.to_line(), "{\"event\":\"assistant_delta\",\"content\":\"Hel\"}\n");
        /// # Ok::<(), serve_command::v2::EventLineError>(())
        /// ```
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum Event {
            $( $(#[$um])* $Unit, )*
            $(
                $(#[$m])*
                #[non_exhaustive]
                $Variant { $(
                    #[doc = concat!("`\"", stringify!($field), "\"` on the wire.")]
                    $(#[$fm])*
                    $field: $ty,
                )* },
            )*
        }

        impl Event {
            /// Every event's wire name, in upstream's order: what a
            /// controller may name (`serve-command replay --ignore`).
            pub const NAMES: &'static [&'static str] = &[
                $( stringify!($uname), )*
                $( stringify!($name), )*
            ];

            /// The wire name, `"event"`'s value.
            #[must_use]
            pub fn name(&self) -> &'static str {
                match self {
                    $( Event::$Unit => stringify!($uname), )*
                    $( Event::$Variant { .. } => stringify!($name), )*
                }
            }

            $(
                $(#[$um])*
                #[must_use]
                pub fn $uname() -> Event {
                    Event::$Unit
                }
            )*

            $(
                constructor! { $([$build])? $(#[$m])* $Variant $name { $( $field : $ty ),* } }
            )*
        }

        impl Event {
            /// The fields after `"event"`, as [`Event::write_line`] writes them.
            fn serialize_fields<M: ::serde::ser::SerializeMap>(&self, map: &mut M) -> Result<(), M::Error> {
                match self {
                    $( Event::$Unit => {} )*
                    $(
                        Event::$Variant { $( $field, )* } => {
                            $( serialize_field!(map, $field $(, $mode $(= $d)?)?); )*
                        }
                    )*
                }
                Ok(())
            }
        }

        /// Upstream's `parse` of an object: the event its `event` names,
        /// each field read as that event reads it.
        /// (`name` as bytes: a name as the line holds it needs no UTF-8
        /// check to be compared.)
        fn decode_object(obj: Object<'_, '_>, name: &[u8]) -> Result<Event, EventError> {
            $( if name == stringify!($uname).as_bytes() {
                return Ok(Event::$Unit);
            } )*
            $( if name == stringify!($name).as_bytes() {
                return Ok(Event::$Variant {
                    $( $field: read_field!(obj, stringify!($name), $field, $ty $(, $mode $(= $d)?)?), )*
                });
            } )*
            Err(EventError::UnknownEvent(String::from_utf8_lossy(name).into_owned()))
        }

        /// The event's line: `{"event":NAME` and its fields, `}` and the
        /// LF when `LF`.
        fn write_event<K: Out, const LF: bool>(event: &Event, k: &mut K) -> Result<(), K::Error> {
            k.put("{\"event\":\"")?;
            k.put(event.name())?;
            k.put("\"")?;
            match event {
                $( Event::$Unit => {} )*
                $(
                    Event::$Variant { $( $field, )* } => {
                        $( write_field!(k, $field $(, $mode $(= $d)?)?); )*
                    }
                )*
            }
            k.put(if LF { "}\n" } else { "}" })
        }
    };
}

events! {
    units {
        /// The running turn used every step it was allowed.
        MaxStepsExhausted = max_steps_exhausted,
        /// The goal that was blocked (`goal_blocked`) can go on.
        GoalUnblocked = goal_unblocked,
    }
    structs {
        /// A background job started, changed, finished or failed (`kind`), with
        /// its whole record. Jobs belong to the session, not to a turn: an
        /// engine writes this whenever a job changes, also between turns.
        JobChanged = job_changed {
            kind: JobEventKind,
            /// Boxed: a record is twenty fields, most events a few.
            job: Box<JobRecord>,
        },
        /// The engine's own prediction of the user's next message, for the
        /// conversation at event `source_sequence`. It answers no command:
        /// since fdf10827 the engine starts one prediction after a turn that
        /// ended `agent_finished` when nothing else is running or queued,
        /// and writes it only if no command moved the session on, as
        /// `completed` or as `failed` (`prediction storage: ...`). A line
        /// that still carries an older engine's `request_id` reads the
        /// same, the `request_id` ignored.
        PredictionResult = prediction_result {
            /// Any `Int` (0 and below too, unlike the command's).
            source_sequence: i32,
            outcome: PredictionOutcome,
        },
        /// The answer to a `jobs_snapshot` command, matched by `request_id`:
        /// every background job the engine knows. Written at once, also in the
        /// middle of a turn.
        JobsSnapshot = jobs_snapshot { request_id: String, jobs: Vec<JobRecord> },
        /// The answer to a `job_stop` command, matched by `request_id`: how
        /// stopping the job `job_id` of `generation` came out. Written at once,
        /// also in the middle of a turn.
        JobStopResult = job_stop_result {
            request_id: String,
            generation: String,
            job_id: String,
            outcome: JobStopOutcome,
        },
        /// The agent could not be set up, and why.
        AgentSetupFailed = agent_setup_failed { error: String },
        /// A step of the running turn began (`step` counts from 1): one
        /// provider request and the tool calls it asks for.
        AgentStep = agent_step { step: i32 },
        /// The current step's provider request failed and attempt `attempt` of
        /// `max_attempts` is about to be made, after a backoff. A controller
        /// discards the failed attempt's live output. Transient: never stored
        /// in the session.
        StreamRetry = stream_retry { attempt: i32, max_attempts: i32, reason: String },
        /// The running turn was interrupted (after a `cancel`, say) and ends
        /// here without an answer: one of a turn's terminal events.
        AgentAborted = agent_aborted { reason: String },
        /// The running turn finished with its answer: one of a turn's terminal
        /// events.
        AgentFinished = agent_finished { answer: String },
        /// The running turn failed, and why: one of a turn's terminal events.
        TurnFailed = turn_failed { error: String },
        /// A fragment of the assistant's message as the provider streams it;
        /// the whole message follows as `assistant_message`. Most of a turn's
        /// lines.
        AssistantDelta = assistant_delta { content: String },
        /// A fragment of the provider's reasoning as it streams: high-volume
        /// progress a controller may render or ignore; the whole reasoning
        /// follows once as `reasoning_message`.
        ReasoningDelta = reasoning_delta { content: String },
        /// The assistant's whole message for this step, once its stream ended.
        AssistantMessage = assistant_message { content: String },
        /// The provider's whole reasoning for this step, stored with the
        /// assistant's response.
        ReasoningMessage = reasoning_message { content: String },
        /// The tokens the turn's provider requests spent so far.
        Usage = usage { usage: Usage },
        /// A tool call finished, and this is what it returned to the model
        /// (`is_error`: it failed). `brief` is the tool's one-line summary,
        /// written `null` when it gave none.
        ToolResult = tool_result [builder] {
            tool_call_id: String,
            tool_name: String,
            is_error: bool,
            content: String,
            brief: Option<String> [null],
        },
        /// The model called a tool with arguments that did not decode.
        ToolCallDecodeError = tool_call_decode_error { tool_call_id: String, tool_name: String, error: String },
        /// A tool asks the controller for permission and is blocked until an
        /// `approval` command with this `id` comes back: the one event a
        /// controller must answer. `detail` says what would be granted, `body`
        /// (written `null` when absent) what would run, verbatim.
        ApprovalRequested = approval_requested {
            id: String,
            tool_name: String,
            detail: String,
            /// What would run, verbatim; written `null` when absent.
            body: Option<String> [null],
        },
        /// How a requested approval settled, also when it settled without the
        /// controller's answer (the turn was interrupted, another controller
        /// answered first). A controller uses it to retire the question it
        /// shows.
        ApprovalResolved = approval_resolved { id: String, outcome: ApprovalOutcome },
        /// A steer reached the running turn (a `prompt` steer, at the turn's
        /// next step) or the engine (a `command` steer); `submission_id` echoes
        /// the steer's tag. A line without `kind` reads as `prompt`.
        SteerApplied = steer_applied {
            kind: AppliedSteerKind [default = "prompt"],
            content: Content,
            submission_id: Option<String> [omit],
        },
        /// A steer arrived with no turn to deliver it to and was dropped;
        /// `submission_id` echoes the steer's tag.
        SteerDropped = steer_dropped { content: Content, submission_id: Option<String> [omit] },
        /// A notice from the engine's background work, for the controller to
        /// show; not part of a turn.
        BackgroundNotice = background_notice { content: String },
        /// The goal changed (`null`: cleared). Written once a `goal` command is
        /// applied, behind the work queued before it.
        GoalUpdated = goal_updated { goal: Option<String> [null] },
        /// The goal cannot go on, and why.
        GoalBlocked = goal_blocked { reason: String },
        /// The engine's check of whether the goal is met.
        GoalCheck = goal_check { content: String },
        /// A reminder of the goal, given to the model.
        GoalReminder = goal_reminder { content: String },
        /// An armed `auto` goal is not met yet: the engine starts another turn
        /// toward it, `remaining` turns left in its budget.
        GoalContinue = goal_continue { remaining: i32 },
        /// An armed `auto` goal used all of its `turns` without being met; the
        /// engine starts no more turns for it.
        GoalBudgetExhausted = goal_budget_exhausted { turns: i32 },
        /// A reminder of the plan, given to the model.
        PlanReminder = plan_reminder { content: String },
        /// A compaction of the conversation from `from_sequence` to
        /// `to_sequence` began (a `compact` command's, run when no turn is).
        CompactionStarted = compaction_started { from_sequence: i32, to_sequence: i32 },
        /// The compaction finished; `summary` replaces the compacted part.
        CompactionFinished = compaction_finished { from_sequence: i32, to_sequence: i32, summary: String },
        /// The compaction failed, or was cancelled by a `cancel`: how loudly to
        /// show it is the controller's call.
        CompactionFailed = compaction_failed { error: String },
        /// A nested sub-run (a review, an explore) began inside the turn; `id`
        /// pairs it with its `subrun_finished`, `kind` names the surface,
        /// `label` is a short display string.
        SubrunStarted = subrun_started { id: String, kind: String, label: String },
        /// A nested sub-run ended, on success, failure or cancellation alike,
        /// written before the parent turn's own terminal event; `steps` and the
        /// token counts are the child's spend, and `unaccounted` (left out when
        /// absent) says why they may fall short of it.
        SubrunFinished = subrun_finished [builder] {
            id: String,
            status: SubrunStatus,
            steps: i32,
            prompt_tokens: i32,
            completion_tokens: i32,
            unaccounted: Option<String> [omit],
        },
        /// An `mbtx` snippet started a workflow, a run that delegates to child
        /// agents of its own: where it writes its journal and its launch
        /// events, and the child ordinals it reserved.
        WorkflowStarted = workflow_started [builder] {
            id: String,
            journal: String,
            events: String,
            first_child: i32,
            child_count: i32,
        },
        /// The workflow `id` ended, on every exit of the snippet that owns it.
        WorkflowFinished = workflow_finished { id: String },
        /// The engine began compacting the conversation on its own, with no
        /// `compact` command.
        AutoCompactionStarted = auto_compaction_started { from_sequence: i32, to_sequence: i32 },
        /// The automatic compaction finished; `summary` replaces the compacted
        /// part.
        AutoCompactionFinished = auto_compaction_finished { from_sequence: i32, to_sequence: i32, summary: String },
        /// The automatic compaction failed.
        AutoCompactionFailed = auto_compaction_failed { error: String },
        /// The context yielded at `to_sequence`, with `answer`.
        ContextYield = context_yield { to_sequence: i32, answer: String },
        /// The session began: its name and where it is stored; `workspace_root`
        /// (written `null` when absent) postdates the event, so older engines
        /// leave it out. Written at start-up.
        SessionStarted = session_started {
            session: String,
            session_root: String,
            workspace_root: Option<String> [null],
        },
        /// The session could not be read or written.
        SessionError = session_error { error: String },
        /// The engine created a workspace directory for the session.
        WorkspaceCreated = workspace_created { dir: String },
        /// A line the engine could not use, and why: not JSON, not a command,
        /// or a command the engine declines ([`Event::command_error_cause`]
        /// reads the why). Written at once for each such line, in order, also
        /// in the middle of a turn; after a line that is not JSON the engine
        /// reads no further command.
        CommandError = command_error { error: String },
        /// The MCP configuration was ignored, and why. Written at start-up.
        McpConfigIgnored = mcp_config_ignored { reason: String },
        /// The MCP configuration at `path` could not be read. Written at start-
        /// up.
        McpConfigUnreadable = mcp_config_unreadable { path: String, error: String },
        /// The MCP configuration at `path` is invalid. Written at start-up.
        McpConfigInvalid = mcp_config_invalid { path: String, error: String },
        /// MCP tools were registered: how many servers and tools, and the
        /// tools' names. Written at start-up.
        McpToolsRegistered = mcp_tools_registered { servers: i32, tools: i32, names: Vec<String> },
        /// Two MCP servers offer a tool of one name.
        McpToolDuplicate = mcp_tool_duplicate { server: String, tool: String },
        /// An MCP tool was renamed from `from` to `to`.
        McpToolRenamed = mcp_tool_renamed { from: String, to: String },
        /// An MCP server's tools were capped at `kept`.
        McpToolsCapped = mcp_tools_capped { server: String, kept: i32 },
        /// An MCP server was skipped: the tool cap was already reached.
        McpServerSkippedOverCap = mcp_server_skipped_over_cap { server: String },
        /// An MCP server could not be reached: the spawn or transport error, a
        /// handshake error or its timeout (`"unknown error"` when absent).
        McpConnectFailed = mcp_connect_failed { server: String, error: String [default = "unknown error"] },
        /// Listing an MCP server's tools failed.
        McpListToolsFailed = mcp_list_tools_failed { server: String, error: String },
        /// Listing an MCP server's tools timed out.
        McpListToolsTimeout = mcp_list_tools_timeout { server: String },
        /// An MCP server offers no tools.
        McpNoTools = mcp_no_tools { server: String },
    }
}

/// [`Event::from_slice`] by the rules: the line's members on the stack,
/// then upstream's `parse`.
fn decode_line(line: &[u8]) -> Result<Event, EventLineError> {
    let mut members = Members::new();
    match crate::wire::scan::parse_object(line, &mut members) {
        Err(e) => Err(EventLineError::NotJson(e)),
        Ok(false) => Err(EventLineError::NotAnEvent(EventError::NotAnObject)),
        Ok(true) => decode_members(members.object()).map_err(EventLineError::NotAnEvent),
    }
}

/// A shortcut, not a rule: a line exactly as the emitter writes an
/// `assistant_delta` or `reasoning_delta` whose text needs no escape is
/// that event, whatever the rules say of anything else. Deltas are most of
/// the lines of a turn, and this reads one in a prefix compare, one scan
/// for the closing quote and the UTF-8 check. Any other line (another
/// event, another key order, spacing, an escape, bad UTF-8), and every
/// error, goes to [`decode_line`]; a test holds the two to the same answer.
#[inline]
fn plain_delta(line: &[u8]) -> Option<Event> {
    const ASSISTANT: &[u8] = br#"{"event":"assistant_delta","content":""#;
    const REASONING: &[u8] = br#"{"event":"reasoning_delta","content":""#;
    let (assistant, rest) = match line.strip_prefix(ASSISTANT) {
        Some(rest) => (true, rest),
        None => (false, line.strip_prefix(REASONING)?),
    };
    let text = rest.strip_suffix(br#""}"#)?;
    let mut seen = 0;
    if crate::wire::find::next_stop::<crate::wire::find::Special>(text, 0, &mut seen) != text.len()
    {
        return None;
    }
    let content = String::from_utf8(text.to_vec()).ok()?;
    Some(if assistant {
        Event::AssistantDelta { content }
    } else {
        Event::ReasoningDelta { content }
    })
}

impl Event {
    /// Decodes one line (without its LF) as upstream's `parse` decides.
    ///
    /// Allocates what the event owns (a delta: its text, once) and, for a
    /// nested value, its tree: a line's top-level members are kept on the
    /// stack, and its strings are read straight from it.
    ///
    /// # Errors
    ///
    /// [`EventLineError::NotJson`] for a line that is not JSON (with the
    /// byte), [`EventLineError::NotAnEvent`] with the [`EventError`] for
    /// JSON that is not an event a client reads.
    pub fn from_slice(line: &[u8]) -> Result<Event, EventLineError> {
        if let Some(event) = plain_delta(line) {
            return Ok(event);
        }
        decode_line(line)
    }

    /// Decodes a JSON value as upstream's `parse` decides.
    ///
    /// # Errors
    ///
    /// The [`EventError`] for a value that is not an event.
    pub fn from_json(value: &serde_json::Value) -> Result<Event, EventError> {
        decode(&tree_of(value))
    }

    /// The line upstream's emitter writes for this event: compact JSON in
    /// `to_json`'s key order, ending in one `"\n"`. Allocates once.
    #[must_use]
    pub fn to_line(&self) -> String {
        let mut len = Len(0);
        let Ok(()) = write_event::<_, true>(self, &mut len);
        let mut line = String::with_capacity(len.0);
        let Ok(()) = write_event::<_, true>(self, &mut line);
        line
    }

    /// Writes the same bytes as [`Event::to_line`] to `out` without
    /// allocating: in one `write_all` when the line is up to 8 KiB, else
    /// one per 8 KiB at most, as `Command::write_line` does.
    ///
    /// # Errors
    ///
    /// The first error `out` returns.
    pub fn write_line<W: io::Write>(&self, out: W) -> io::Result<()> {
        escape::write_line(
            out,
            |buf: &mut ShortBuf<'_>| -> Result<(), Overflow> { write_event::<_, true>(self, buf) },
            |sink: &mut StackBuf<_>| write_event::<_, true>(self, sink),
        )
    }
}

impl fmt::Display for Event {
    /// The line without its LF.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_event::<_, false>(self, &mut Fmt(f))
    }
}

impl std::str::FromStr for Event {
    type Err = EventLineError;

    /// [`Event::from_slice`] of the string.
    fn from_str(line: &str) -> Result<Event, EventLineError> {
        Event::from_slice(line.as_bytes())
    }
}

/// `parse`: an object with a string `event`, then that event's fields.
fn decode(tree: &Json<'_>) -> Result<Event, EventError> {
    let Json::Obj(members) = tree else {
        return Err(EventError::NotAnObject);
    };
    decode_members(Object::of(members))
}

/// `parse` of an object: a string `event`, then that event's fields.
fn decode_members(obj: Object<'_, '_>) -> Result<Event, EventError> {
    let name = obj
        .get("event")
        .and_then(Json::as_jstr)
        .ok_or(EventError::NoEventName)?;
    name.with_bytes(|name| decode_object(obj, name))
}

/// A `serde_json::Value` as a tree, borrowing its strings.
fn tree_of(value: &serde_json::Value) -> Json<'_> {
    use serde_json::Value;
    use std::borrow::Cow;
    match value {
        Value::Null => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Number(n) => Json::Num(tree::Num {
            text: Cow::Owned(n.to_string()),
        }),
        Value::String(s) => Json::Str(JStr::Text(Cow::Borrowed(s))),
        Value::Array(items) => Json::Arr(items.iter().map(tree_of).collect()),
        Value::Object(map) => Json::Obj(
            map.iter()
                .map(|(k, v)| (JStr::Text(Cow::Borrowed(k.as_str())), tree_of(v)))
                .collect(),
        ),
    }
}

crate::wire::message::message_by_line!(
    /// Events go through the same framing, limit and line numbers as
    /// commands: [`EventReader`] is the commands' reader with `Event` filled
    /// in, and its errors are the event direction's own.
    Event,
    EventError,
    EventLineError,
    EventReadError
);

/// An engine line as the controllers read it: the event, or why the line
/// is not one together with its bytes, so that the model can still
/// attribute what can be read of it (`Conversation::unreadable`). Read
/// with the same framing, limit and line numbers as [`EventReader`].
#[derive(Debug)]
pub(crate) struct EventLine(pub(crate) Result<Event, (EventLineError, Vec<u8>)>);

impl crate::wire::message::sealed::Sealed for EventLine {}

impl crate::wire::message::Message for EventLine {
    type ParseError = EventError;
    type LineError = EventLineError;
    type ReadError = EventReadError;

    #[inline]
    fn decode_line(line: &[u8]) -> Result<EventLine, EventLineError> {
        Ok(EventLine(
            Event::from_slice(line).map_err(|error| (error, line.to_vec())),
        ))
    }

    fn encode_line<W: io::Write>(&self, mut out: W) -> io::Result<()> {
        match &self.0 {
            Ok(event) => event.write_line(out),
            Err((_, line)) => out.write_all(line).and_then(|()| out.write_all(b"\n")),
        }
    }
}

/// Reads events from a [`BufRead`](io::BufRead), one per line, as a
/// controller reads an engine's stdout: the framing, line limit and line
/// numbers of `CommandReader`. Every line that is not an event (not JSON,
/// not UTF-8, over the limit, or JSON but no event) is an error item
/// ([`EventReadError`]), and reading goes on, as upstream's clients skip
/// what they cannot read: log it and take the next item. Only a failed
/// read ([`EventReadError::Io`]) ends the stream.
///
/// ```
/// use serve_command::v2::{Event, EventReader};
/// let stdout = b"{\"event\":\"agent_step\",\"step\":1}\nnot json\n{\"event\":\"agent_finished\",\"answer\":\"done\"}\n";
/// let events: Vec<_> = EventReader::new(&stdout[..]).collect();
/// assert_eq!(events[0].as_ref().ok(), Some(&Event::agent_step(1)));
/// assert!(events[1].is_err());
/// assert_eq!(events[2].as_ref().ok(), Some(&Event::agent_finished("done")));
/// ```
pub type EventReader<R> = crate::wire::read::CommandReader<R, Event>;

/// A `tokio_util::codec` decoder and encoder for event lines (feature
/// `tokio`): [`EventReader`]'s framing, limit and line numbers, every bad
/// line an item (`Ok(Err(EventReadError))`), so a `FramedRead` over an
/// engine's stdout reads on past it; encoding writes [`Event::to_line`].
///
/// ```
/// use bytes::BytesMut;
/// use serve_command::v2::{Event, EventCodec};
/// use tokio_util::codec::{Decoder, Encoder};
///
/// let mut codec = EventCodec::new();
/// let mut buf = BytesMut::new();
/// codec.encode(Event::agent_step(1), &mut buf)?;
/// buf.extend_from_slice(b"junk\n");
/// assert_eq!(codec.decode(&mut buf)?.unwrap()?, Event::agent_step(1));
/// assert!(codec.decode(&mut buf)?.unwrap().is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[cfg(feature = "tokio")]
pub type EventCodec = crate::wire::codec::CommandCodec<Event>;

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `line` read by [`Event::from_slice`] and by the rules alone: the same.
    /// Returns whether the shortcut took it.
    #[track_caller]
    fn same_as_the_rules(line: &[u8]) -> bool {
        let by_rules = decode_line(line);
        assert_eq!(
            Event::from_slice(line),
            by_rules,
            "{}",
            String::from_utf8_lossy(line)
        );
        match plain_delta(line) {
            Some(event) => {
                assert_eq!(Ok(event), by_rules);
                true
            }
            None => false,
        }
    }

    #[test]
    fn a_plain_delta_as_the_emitter_writes_it_is_read_in_one_step() {
        let rows: &[(&[u8], bool)] = &[
            (br#"{"event":"assistant_delta","content":"Hel"}"#, true),
            (br#"{"event":"reasoning_delta","content":"Hel"}"#, true),
            (br#"{"event":"assistant_delta","content":""}"#, true),
            ("{\"event\":\"assistant_delta\",\"content\":\" caf\u{e9} \u{65e5}\u{672c} \u{1f600}\"}".as_bytes(), true),
            // An escape, spacing, another key order, more keys: the rules.
            (br#"{"event":"assistant_delta","content":"a\nb"}"#, false),
            (br#"{"event":"assistant_delta","content":"a\""}"#, false),
            (br#"{"event":"assistant_delta", "content":"a"}"#, false),
            (br#"{"content":"a","event":"assistant_delta"}"#, false),
            (br#"{"event":"assistant_delta","content":"a","x":"b"}"#, false),
            (br#"{"event":"assistant_delta","content":"a"} "#, false),
            (b"{\"event\":\"assistant_delta\",\"content\":\"a\"}\r", false),
            (br#"{"event":"assistant_delta","content":"a"}}"#, false),
            (br#"{"event":"assistant_delta","content":"a\"}"#, false),
            (br#"{"event":"assistant_delta","content":"}"#, false),
            (br#"{"event":"agent_step","step":1}"#, false),
            // What the rules refuse: a raw control byte, bad UTF-8.
            (b"{\"event\":\"assistant_delta\",\"content\":\"a\tb\"}", false),
            (b"{\"event\":\"assistant_delta\",\"content\":\"a\xffb\"}", false),
            (b"{\"event\":\"reasoning_delta\",\"content\":\"\xe6\x97\"}", false),
        ];
        for &(line, shortcut) in rows {
            assert_eq!(
                same_as_the_rules(line),
                shortcut,
                "{}",
                String::from_utf8_lossy(line)
            );
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]
        #[test]
        fn any_bytes_after_a_delta_prefix_read_as_the_rules_read_them(
            reasoning in any::<bool>(),
            text in prop::collection::vec(
                prop_oneof![
                    4 => 0x20u8..0x7f,
                    1 => Just(b'"'),
                    1 => Just(b'\\'),
                    1 => Just(b'}'),
                    1 => any::<u8>(),
                ],
                0..24,
            ),
            end in prop_oneof![Just(&b"\"}"[..]), Just(&b"\" }"[..]), Just(&b"}"[..]), Just(&b""[..])],
        ) {
            let mut line = if reasoning {
                br#"{"event":"reasoning_delta","content":""#.to_vec()
            } else {
                br#"{"event":"assistant_delta","content":""#.to_vec()
            };
            line.extend_from_slice(&text);
            line.extend_from_slice(end);
            same_as_the_rules(&line);
        }
    }
}
