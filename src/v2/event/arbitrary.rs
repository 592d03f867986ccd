//! `impl Arbitrary for Event` (feature `arbitrary`), for cargo-fuzz
//! targets: every event an engine can write, and only those, so every
//! arbitrary event reads back from its own line.
//!
//! The event is picked by one byte (`choose_index` over the table's 58, in
//! `mod.rs`'s order), then each field is drawn in the wire's order: a
//! string, `Option<String>`, `bool`, `Vec<String>` and [`Content`] as
//! `arbitrary` draws them; an `i32` as its 4 bytes; the nested values by
//! their own rules below. `tests/seeds.rs` writes the bytes that read back
//! as each vector's event (the `roundtrip_event` target's seeds), so a
//! change here is a change there.

use super::{
    Event, JobEventKind, JobRecord, JobState, JobStopOutcome, JsonText, PredictionOutcome, Usage,
};
use crate::v2::Content;
use arbitrary::{Arbitrary, Result, Unstructured};

/// The greatest millisecond count or byte count a job record holds:
/// 2^53 - 1.
const MAX_SAFE: i64 = (1 << 53) - 1;

/// How deep a job's `data` nests, at most (the line allows 1024 levels).
const MAX_DATA_DEPTH: usize = 6;

/// A field value drawn as the event's rules allow.
trait Draw: Sized {
    fn draw(u: &mut Unstructured<'_>) -> Result<Self>;
}

impl Draw for String {
    fn draw(u: &mut Unstructured<'_>) -> Result<String> {
        u.arbitrary()
    }
}

/// The open-set fields are drawn as the string on the wire is, so a seed
/// written for a string field (`fuzz/seeds/`, tests/seeds.rs) reads the
/// same; a named string reads as its named variant.
macro_rules! draw_names {
    ($($Name:ident),* $(,)?) => {$(
        impl Draw for crate::v2::event::$Name {
            fn draw(u: &mut Unstructured<'_>) -> Result<crate::v2::event::$Name> {
                Ok(String::draw(u)?.into())
            }
        }
    )*};
}

draw_names!(AppliedSteerKind, ApprovalOutcome, SubrunStatus);

impl Draw for Option<String> {
    fn draw(u: &mut Unstructured<'_>) -> Result<Option<String>> {
        u.arbitrary()
    }
}

impl Draw for i32 {
    fn draw(u: &mut Unstructured<'_>) -> Result<i32> {
        u.arbitrary()
    }
}

impl Draw for bool {
    fn draw(u: &mut Unstructured<'_>) -> Result<bool> {
        u.arbitrary()
    }
}

impl Draw for Vec<String> {
    fn draw(u: &mut Unstructured<'_>) -> Result<Vec<String>> {
        u.arbitrary()
    }
}

impl Draw for Content {
    fn draw(u: &mut Unstructured<'_>) -> Result<Content> {
        u.arbitrary()
    }
}

/// A token count, a job's `output_chars`: 0 to 2^31 - 1, as 4 bytes
/// (big-endian, `int_in_range`'s).
fn count(u: &mut Unstructured<'_>) -> Result<i32> {
    u.int_in_range(0..=i32::MAX)
}

/// A job's millisecond or byte count: 0 to 2^53 - 1, as 7 bytes.
fn safe(u: &mut Unstructured<'_>) -> Result<i64> {
    u.int_in_range(0..=MAX_SAFE)
}

/// A job component (generation, id, output file): 1 to 200 of
/// `[A-Za-z0-9._-]`, neither `.` nor `..` (those get a `0`): a length byte,
/// then a byte a character. The commands' `job_stop` draws them so too.
fn component(u: &mut Unstructured<'_>) -> Result<String> {
    let len = u.int_in_range(1..=200)?;
    let mut s = String::with_capacity(len);
    for _ in 0..len {
        s.push(char::from(*u.choose(COMPONENT)?));
    }
    if s == "." || s == ".." {
        s.push('0');
    }
    Ok(s)
}

/// The characters of a job component, in the order [`component`] picks.
const COMPONENT: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-";

/// A string that is not empty: a drawn string, `?` when it is empty.
fn nonempty(u: &mut Unstructured<'_>) -> Result<String> {
    let mut s: String = u.arbitrary()?;
    if s.is_empty() {
        s.push('?');
    }
    Ok(s)
}

impl Draw for Usage {
    fn draw(u: &mut Unstructured<'_>) -> Result<Usage> {
        Ok(Usage {
            prompt_tokens: count(u)?,
            completion_tokens: count(u)?,
            total_tokens: count(u)?,
            prompt_cache_hit_tokens: count(u)?,
            prompt_cache_miss_tokens: count(u)?,
        })
    }
}

impl Draw for JobEventKind {
    fn draw(u: &mut Unstructured<'_>) -> Result<JobEventKind> {
        Ok(*u.choose(&[
            JobEventKind::Started,
            JobEventKind::Updated,
            JobEventKind::Finished,
            JobEventKind::Failed,
        ])?)
    }
}

impl Draw for JobStopOutcome {
    fn draw(u: &mut Unstructured<'_>) -> Result<JobStopOutcome> {
        Ok(*u.choose(&[
            JobStopOutcome::Stopped,
            JobStopOutcome::AlreadyTerminal,
            JobStopOutcome::NotFound,
            JobStopOutcome::WrongRuntime,
        ])?)
    }
}

impl Draw for PredictionOutcome {
    /// A kind byte; a completed text is `None` or not empty (a drawn empty
    /// text is `None`), its counts at least 0.
    fn draw(u: &mut Unstructured<'_>) -> Result<PredictionOutcome> {
        Ok(match u.choose_index(4)? {
            0 => PredictionOutcome::Completed {
                text: Option::<String>::draw(u)?.filter(|t| !t.is_empty()),
                input_tokens: count(u)?,
                output_tokens: count(u)?,
            },
            1 => PredictionOutcome::Skipped,
            2 => PredictionOutcome::Cancelled,
            _ => PredictionOutcome::Failed(u.arbitrary()?),
        })
    }
}

impl Draw for JobState {
    /// A kind byte; an exit code is any `i32`, a stop reason not empty.
    fn draw(u: &mut Unstructured<'_>) -> Result<JobState> {
        Ok(match u.choose_index(5)? {
            0 => JobState::Running,
            1 => JobState::Stopping,
            2 => JobState::Exited(u.arbitrary()?),
            3 => JobState::Stopped(nonempty(u)?),
            _ => JobState::Interrupted,
        })
    }
}

impl Draw for JobRecord {
    /// Every field in the struct's order: the components and counts as the
    /// record's rules allow, `data` a JSON value upstream writes back as it
    /// is (`null` is no data).
    fn draw(u: &mut Unstructured<'_>) -> Result<JobRecord> {
        let optional_safe = |u: &mut Unstructured<'_>| -> Result<Option<i64>> {
            Ok(if u.arbitrary()? { Some(safe(u)?) } else { None })
        };
        Ok(JobRecord {
            generation: component(u)?,
            id: component(u)?,
            revision: u.int_in_range(1..=i32::MAX)?,
            command: u.arbitrary()?,
            description: u.arbitrary()?,
            cwd: u.arbitrary()?,
            state: JobState::draw(u)?,
            started_at_ms: safe(u)?,
            backgrounded_at_ms: safe(u)?,
            finished_at_ms: optional_safe(u)?,
            last_output_at_ms: optional_safe(u)?,
            output_file: if u.arbitrary()? {
                Some(component(u)?)
            } else {
                None
            },
            output_persistent: u.arbitrary()?,
            output_bytes: safe(u)?,
            output_chars: count(u)?,
            output_truncated: u.arbitrary()?,
            invalid_utf8: u.arbitrary()?,
            output_error: u.arbitrary()?,
            persistence_error: u.arbitrary()?,
            cleanup_error: u.arbitrary()?,
            data: if u.arbitrary()? { data(u)? } else { None },
        })
    }
}

impl Draw for Box<JobRecord> {
    fn draw(u: &mut Unstructured<'_>) -> Result<Box<JobRecord>> {
        JobRecord::draw(u).map(Box::new)
    }
}

impl Draw for Vec<JobRecord> {
    /// As `arbitrary` draws a `Vec`: a `true` byte before each record.
    fn draw(u: &mut Unstructured<'_>) -> Result<Vec<JobRecord>> {
        let mut jobs = Vec::new();
        while u.arbitrary()? {
            jobs.push(JobRecord::draw(u)?);
        }
        Ok(jobs)
    }
}

/// A job's `data`: a JSON value's text, as upstream writes it back; `None`
/// for `null`, which is no data on the wire.
fn data(u: &mut Unstructured<'_>) -> Result<Option<JsonText>> {
    let mut text = String::new();
    json_value(u, &mut text, 0)?;
    let data: JsonText = text
        .parse()
        .map_err(|_| arbitrary::Error::IncorrectFormat)?;
    Ok((data.as_str() != "null").then_some(data))
}

/// One JSON value, written to `out`: a kind byte (null, true, false, a
/// number, a string, an array, an object), then its contents; an array's
/// items and an object's members each after a `true` byte. Past
/// [`MAX_DATA_DEPTH`] a container is `null`.
fn json_value(u: &mut Unstructured<'_>, out: &mut String, depth: usize) -> Result<()> {
    match u.choose_index(7)? {
        0 => out.push_str("null"),
        1 => out.push_str("true"),
        2 => out.push_str("false"),
        3 => json_number(u, out)?,
        4 => {
            let s: &str = u.arbitrary()?;
            let Ok(()) = crate::wire::escape::write_str(out, s);
        }
        _ if depth >= MAX_DATA_DEPTH => out.push_str("null"),
        5 => {
            out.push('[');
            let mut first = true;
            while u.arbitrary()? {
                if !first {
                    out.push(',');
                }
                first = false;
                json_value(u, out, depth + 1)?;
            }
            out.push(']');
        }
        _ => {
            out.push('{');
            let mut first = true;
            while u.arbitrary()? {
                if !first {
                    out.push(',');
                }
                first = false;
                let key: &str = u.arbitrary()?;
                let Ok(()) = crate::wire::escape::write_str(out, key);
                out.push(':');
                json_value(u, out, depth + 1)?;
            }
            out.push('}');
        }
    }
    Ok(())
}

/// A number: a kind byte, then an integer within 2^53 (7 bytes), a finite
/// double (8 bytes, its bits little-endian; an infinite or NaN one is 0),
/// or a string's text when it is a JSON number (else `0`): a big integer,
/// `1e400`, `-0`, `1.50`, which upstream writes back as its rules say.
fn json_number(u: &mut Unstructured<'_>, out: &mut String) -> Result<()> {
    use std::fmt::Write as _;
    match u.choose_index(3)? {
        0 => {
            let n = u.int_in_range(-MAX_SAFE..=MAX_SAFE)?;
            let _ = write!(out, "{n}");
        }
        1 => {
            let x = f64::from_bits(u.arbitrary()?);
            if x.is_finite() {
                // `{:e}` is always a JSON number: `1.5e-7`, `-0e0`.
                let _ = write!(out, "{x:e}");
            } else {
                out.push('0');
            }
        }
        _ => {
            let text: &str = u.arbitrary()?;
            out.push_str(if is_json_number(text) { text } else { "0" });
        }
    }
    Ok(())
}

/// Whether `text` is one JSON number, by the grammar:
/// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
fn is_json_number(text: &str) -> bool {
    let b = text.as_bytes();
    let mut i = 0;
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i > start
    };
    if b.first() == Some(&b'-') {
        i += 1;
    }
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => {
            digits(&mut i);
        }
        _ => return false,
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        if !digits(&mut i) {
            return false;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !digits(&mut i) {
            return false;
        }
    }
    i == b.len()
}

/// One maker an event, in the table's order (`mod.rs`): each draws its
/// fields in the wire's order.
type Maker = fn(&mut Unstructured<'_>) -> Result<Event>;

macro_rules! makers {
    ($( $Variant:ident { $($field:ident),* } ),* $(,)?) => {
        const MAKERS: &[Maker] = &[
            $(
                |u: &mut Unstructured<'_>| -> Result<Event> {
                    let _ = &u;
                    Ok(Event::$Variant { $( $field: Draw::draw(u)?, )* })
                },
            )*
        ];
    };
}

makers! {
    MaxStepsExhausted {},
    GoalUnblocked {},
    JobChanged { kind, job },
    PredictionResult { source_sequence, outcome },
    JobsSnapshot { request_id, jobs },
    JobStopResult { request_id, generation, job_id, outcome },
    AgentSetupFailed { error },
    AgentStep { step },
    StreamRetry { attempt, max_attempts, reason },
    AgentAborted { reason },
    AgentFinished { answer },
    TurnFailed { error },
    AssistantDelta { content },
    ReasoningDelta { content },
    AssistantMessage { content },
    ReasoningMessage { content },
    Usage { usage },
    ToolResult { tool_call_id, tool_name, is_error, content, brief },
    ToolCallDecodeError { tool_call_id, tool_name, error },
    ApprovalRequested { id, tool_name, detail, body },
    ApprovalResolved { id, outcome },
    SteerApplied { kind, content, submission_id },
    SteerDropped { content, submission_id },
    BackgroundNotice { content },
    GoalUpdated { goal },
    GoalBlocked { reason },
    GoalCheck { content },
    GoalReminder { content },
    GoalContinue { remaining },
    GoalBudgetExhausted { turns },
    PlanReminder { content },
    CompactionStarted { from_sequence, to_sequence },
    CompactionFinished { from_sequence, to_sequence, summary },
    CompactionFailed { error },
    SubrunStarted { id, kind, label },
    SubrunFinished { id, status, steps, prompt_tokens, completion_tokens, unaccounted },
    WorkflowStarted { id, journal, events, first_child, child_count },
    WorkflowFinished { id },
    AutoCompactionStarted { from_sequence, to_sequence },
    AutoCompactionFinished { from_sequence, to_sequence, summary },
    AutoCompactionFailed { error },
    ContextYield { to_sequence, answer },
    SessionStarted { session, session_root, workspace_root },
    SessionError { error },
    WorkspaceCreated { dir },
    CommandError { error },
    McpConfigIgnored { reason },
    McpConfigUnreadable { path, error },
    McpConfigInvalid { path, error },
    McpToolsRegistered { servers, tools, names },
    McpToolDuplicate { server, tool },
    McpToolRenamed { from, to },
    McpToolsCapped { server, kept },
    McpServerSkippedOverCap { server },
    McpConnectFailed { server, error },
    McpListToolsFailed { server, error },
    McpListToolsTimeout { server },
    McpNoTools { server },
}

/// Every event's maker is listed: a new event in the table, without its
/// maker, fails to compile here.
#[allow(dead_code)]
fn listed(event: &Event) {
    macro_rules! all {
        ($($Variant:ident),* $(,)?) => {
            match event { $( Event::$Variant { .. } => {} )* }
        };
    }
    all!(
        MaxStepsExhausted,
        GoalUnblocked,
        JobChanged,
        PredictionResult,
        JobsSnapshot,
        JobStopResult,
        AgentSetupFailed,
        AgentStep,
        StreamRetry,
        AgentAborted,
        AgentFinished,
        TurnFailed,
        AssistantDelta,
        ReasoningDelta,
        AssistantMessage,
        ReasoningMessage,
        Usage,
        ToolResult,
        ToolCallDecodeError,
        ApprovalRequested,
        ApprovalResolved,
        SteerApplied,
        SteerDropped,
        BackgroundNotice,
        GoalUpdated,
        GoalBlocked,
        GoalCheck,
        GoalReminder,
        GoalContinue,
        GoalBudgetExhausted,
        PlanReminder,
        CompactionStarted,
        CompactionFinished,
        CompactionFailed,
        SubrunStarted,
        SubrunFinished,
        WorkflowStarted,
        WorkflowFinished,
        AutoCompactionStarted,
        AutoCompactionFinished,
        AutoCompactionFailed,
        ContextYield,
        SessionStarted,
        SessionError,
        WorkspaceCreated,
        CommandError,
        McpConfigIgnored,
        McpConfigUnreadable,
        McpConfigInvalid,
        McpToolsRegistered,
        McpToolDuplicate,
        McpToolRenamed,
        McpToolsCapped,
        McpServerSkippedOverCap,
        McpConnectFailed,
        McpListToolsFailed,
        McpListToolsTimeout,
        McpNoTools,
    );
}

impl<'a> Arbitrary<'a> for Event {
    /// Any event a client reads back from its line: job components,
    /// counts, revisions and timestamps within upstream's rules, a stop
    /// reason and a completed prediction's text never empty, token counts
    /// never negative, `data` as upstream writes it back, content of text
    /// and valid images.
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Event> {
        let maker = u.choose(MAKERS)?;
        maker(u)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_has_a_maker_and_each_reads_back() {
        assert_eq!(MAKERS.len(), 58);
        let mut names = std::collections::BTreeSet::new();
        // A byte that picks each maker, then bytes for its fields.
        let tail: Vec<u8> = (0..4096u32).map(|i| (i * 7 + 3) as u8).collect();
        for index in 0..MAKERS.len() {
            let mut bytes = vec![u8::try_from(index).unwrap()];
            bytes.extend_from_slice(&tail);
            let event = Event::arbitrary(&mut Unstructured::new(&bytes)).unwrap();
            names.insert(event.name());
            assert_eq!(
                Event::from_slice(event.to_line().as_bytes()).as_ref(),
                Ok(&event)
            );
        }
        assert_eq!(names.len(), 58);
    }

    #[test]
    fn json_numbers_by_the_grammar() {
        for good in ["0", "-0", "1.5", "1e400", "-12.5E+3", "10", "0.0e-0"] {
            assert!(is_json_number(good), "{good}");
        }
        for bad in [
            "", "-", "01", "1.", ".5", "1e", "1e+", "+1", "0x1", "1 ", "NaN",
        ] {
            assert!(!is_json_number(bad), "{bad}");
        }
    }
}
