//! The fuzz targets' committed seed corpus, `fuzz/seeds/<target>/`, is what
//! `tests/vectors/commands.jsonl` (and `commands-v2.jsonl` for the v2
//! target, `shell.jsonl` for the shell target, `events.jsonl` for the event
//! targets) makes: this test fails when they differ.
//! After changing the vectors, rewrite the seeds with
//! `SERVE_COMMAND_WRITE_SEEDS=1 cargo test --test seeds`.

use serve_command::v1::{Command, SteerKind};
use serve_command::v2::{
    Content, ContentPart, Event, JobEventKind, JobRecord, JobState, JobStopOutcome,
    PredictionOutcome, Usage,
};
use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

/// The vectors' lines, in file order: `line`, or the bytes of
/// `line_base64` (raw bytes such as invalid UTF-8).
fn vector_lines() -> Vec<Vec<u8>> {
    use base64::Engine as _;
    include_str!("vectors/commands.jsonl")
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("vector is JSON");
            match (v["line"].as_str(), v["line_base64"].as_str()) {
                (Some(line), None) => line.as_bytes().to_vec(),
                (None, Some(b64)) => base64::engine::general_purpose::STANDARD
                    .decode(b64)
                    .expect("line_base64 is base64"),
                _ => panic!("exactly one of line and line_base64: {l}"),
            }
        })
        .collect()
}

/// The v2 vectors' lines (`tests/vectors/commands-v2.jsonl`), the seeds of
/// `decode_line_v2`.
fn v2_vector_lines() -> Vec<Vec<u8>> {
    include_str!("vectors/commands-v2.jsonl")
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("vector is JSON");
            v["line"].as_str().expect("line").as_bytes().to_vec()
        })
        .collect()
}

/// The `shell` target's seeds, from `tests/vectors/shell.jsonl`: a parse
/// request's text as it is; an encode as `COMMAND NUL MODE NUL PAYLOAD`
/// (MODE `E` for an error, else `T` when cut off, then the exit code).
fn shell_seeds() -> Vec<Vec<u8>> {
    include_str!("vectors/shell.jsonl")
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("vector is JSON");
            let r = &v["request"];
            let s = |key: &str| r[key].as_str().expect("a string").to_owned();
            if r.get("parse").is_some() {
                s("parse")
            } else if r.get("error").is_some() {
                format!("{}\0E\0{}", s("encode"), s("error"))
            } else {
                let cut = if r["output_limit_reached"] == true {
                    "T"
                } else {
                    ""
                };
                let code = r["exit_code"]
                    .as_i64()
                    .map_or(String::new(), |c| c.to_string());
                format!("{}\0{cut}{code}\0{}", s("encode"), s("text"))
            }
            .into_bytes()
        })
        .collect()
}

/// A stream target's header (see `StreamInput` in fuzz/src/lib.rs):
/// `[max (255: 65536), fail_at_end | interrupt_every << 1, seed (LE)]`.
fn stream_header(max: u8, fail_at_end: bool, interrupt_every: u8, seed: u16) -> Vec<u8> {
    let [lo, hi] = seed.to_le_bytes();
    vec![max, interrupt_every << 1 | u8::from(fail_at_end), lo, hi]
}

/// The vectors as streams: 16 lines a file, with LF or CRLF, a blank line
/// here and there, under a few limits and chunkings. Lines past 512 bytes
/// (deep nesting: `decode_line`'s business) are left out, so that inputs,
/// whose size libFuzzer takes from the largest seed, stay small and fast.
fn streams(lines: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let short: Vec<&Vec<u8>> = lines.iter().filter(|l| l.len() <= 512).collect();
    short
        .chunks(16)
        .enumerate()
        .map(|(k, group)| {
            let k16 = u16::try_from(k).expect("few groups");
            let mut out = match k % 4 {
                // Long lines fit; chunk sizes vary.
                0 => stream_header(255, false, 0, 0x9e37 ^ k16),
                // Most vector lines are too long for 40 bytes.
                1 => stream_header(40, false, 2, k16),
                // One byte at a time, ending in an I/O error.
                2 => stream_header(255, true, 0, 0),
                _ => stream_header(80, false, 0, 0x5bd1 ^ k16),
            };
            let eol: &[u8] = if k % 3 == 1 { b"\r\n" } else { b"\n" };
            for (i, line) in group.iter().enumerate() {
                out.extend_from_slice(line);
                out.extend_from_slice(eol);
                if i % 5 == 4 {
                    out.extend_from_slice(b" \t\r\n");
                }
            }
            // The last line without its LF.
            out.truncate(out.len() - 1);
            out
        })
        .collect()
}

/// One read `arbitrary`'s derive makes, in order.
enum Read<'a> {
    /// Bytes taken from the front: a `u32` tag, a `bool`'s byte.
    Front(Vec<u8>),
    /// A `String`: its length taken from the end, its bytes from the front.
    Str(&'a str),
    /// A `&[u8]` (or a string made here): as a `String` is read.
    Bytes(Vec<u8>),
    /// The last field's `String`: every byte left.
    Rest(&'a str),
}

impl Read<'_> {
    /// The bytes a read takes from the front.
    fn front(&self) -> &[u8] {
        match self {
            Read::Front(b) | Read::Bytes(b) => b,
            Read::Str(s) | Read::Rest(s) => s.as_bytes(),
        }
    }

    /// Whether its length is taken from the end.
    fn sized(&self) -> bool {
        matches!(self, Read::Str(_) | Read::Bytes(_))
    }
}

/// The bytes that `arbitrary` (1.x) reads as these reads, done by
/// `Unstructured::arbitrary_byte_size`'s rules: a length is 1, 2 or 4 bytes
/// from the end (by how much data is left), big-endian, and the first
/// string's length is the last bytes.
fn layout(reads: &[Read]) -> Vec<u8> {
    // With exactly 257 bytes left, `arbitrary` reads every length as 0: a
    // byte that is never read, between the fronts and the lengths, moves
    // the count off 257.
    (0..4)
        .find_map(|pad| layout_padded(reads, pad))
        .expect("a padding that avoids 257")
}

fn layout_padded(reads: &[Read], pad: usize) -> Option<Vec<u8>> {
    if pad > 0 && matches!(reads.last(), Some(Read::Rest(_))) {
        return None;
    }
    let front_len = |r: &Read| r.front().len();
    let mut lengths = Vec::new();
    for (j, read) in reads.iter().enumerate().rev() {
        if read.sized() {
            let left = reads[j..].iter().map(front_len).sum::<usize>() + pad + lengths.len();
            let want = read.front().len();
            // The data's length, were the length one byte, or two.
            let (one, two) = (left + 1, left + 2);
            if one == 257 && want > 0 {
                return None;
            } else if one <= 257 {
                lengths.push(u8::try_from(want).expect("under 257"));
            } else if two <= 65537 {
                lengths.extend_from_slice(&u16::try_from(want).expect("under 65537").to_be_bytes());
            } else {
                // Three bytes read, the fourth ignored, below 16 MiB.
                let [_, a, b, c] = u32::try_from(want).expect("under 16 MiB").to_be_bytes();
                lengths.extend_from_slice(&[a, b, c, 0]);
            }
        }
    }
    let mut out = Vec::new();
    for read in reads {
        out.extend_from_slice(read.front());
    }
    out.resize(out.len() + pad, 0);
    out.extend_from_slice(&lengths);
    Some(out)
}

/// The `u32` that the derive's `(tag * count) >> 32` maps to `index`.
fn tag(index: u64, count: u64) -> Vec<u8> {
    let tag = u32::try_from((index << 32).div_ceil(count)).expect("index < count");
    tag.to_le_bytes().to_vec()
}

/// The bytes `Command::arbitrary_take_rest` (the `roundtrip` target's
/// input) reads as `cmd`.
fn arbitrary_bytes(cmd: &Command) -> Vec<u8> {
    let variant = |i| Read::Front(tag(i, 7));
    let flag = |b: bool| Read::Front(vec![u8::from(b)]);
    layout(&match cmd {
        Command::Prompt {
            text,
            submission_id: None,
        } => vec![variant(0), Read::Str(text), flag(false)],
        Command::Prompt {
            text,
            submission_id: Some(id),
        } => vec![variant(0), Read::Str(text), flag(true), Read::Str(id)],
        Command::Steer { kind, text } => {
            let kind = match kind {
                SteerKind::Prompt => 0,
                SteerKind::Command => 1,
                other => panic!("no arbitrary layout for {other:?}"),
            };
            vec![variant(1), Read::Front(tag(kind, 2)), Read::Rest(text)]
        }
        Command::Compact => vec![variant(2)],
        Command::Cancel => vec![variant(3)],
        Command::GoalSet { text, auto } => vec![variant(4), Read::Str(text), flag(*auto)],
        Command::GoalClear => vec![variant(5)],
        Command::ApprovalDecision { id, allow } => vec![variant(6), Read::Str(id), flag(*allow)],
        other => panic!("no arbitrary layout for {other:?}"),
    })
}

/// The event vectors' lines (`tests/vectors/events.jsonl`), the seeds of
/// `decode_event`.
fn event_vector_lines() -> Vec<Vec<u8>> {
    include_str!("vectors/events.jsonl")
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("vector is JSON");
            v["line"].as_str().expect("line").as_bytes().to_vec()
        })
        .collect()
}

/// The events the oracle wrote (each vector's `ok` line), decoded.
fn vector_events() -> Vec<Event> {
    include_str!("vectors/events.jsonl")
        .lines()
        .filter_map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("vector is JSON");
            let ok = v["ok"].as_str()?;
            Some(Event::from_slice(ok.as_bytes()).expect("an oracle's line decodes"))
        })
        .collect()
}

/// A field of an event, for [`event_reads`].
enum Field<'a> {
    Str(&'a str),
    Opt(&'a Option<String>),
    Int(i32),
    Bool(bool),
    Content(&'a Content),
    Usage(&'a Usage),
    Job(&'a JobRecord),
    Jobs(&'a [JobRecord]),
    Kind(JobEventKind),
    Stop(JobStopOutcome),
    Outcome(&'a PredictionOutcome),
    Names(&'a [String]),
}

/// `event`'s place in the event table (`src/v2/event/mod.rs`, the order
/// `impl Arbitrary for Event` picks from) and its fields, in the wire's
/// order.
fn event_fields(event: &Event) -> (u8, Vec<Field<'_>>) {
    use Field::{Bool, Int, Names, Opt, Str};
    match event {
        Event::MaxStepsExhausted => (0, vec![]),
        Event::GoalUnblocked => (1, vec![]),
        Event::JobChanged { kind, job, .. } => (2, vec![Field::Kind(*kind), Field::Job(job)]),
        Event::PredictionResult {
            source_sequence,
            outcome,
            ..
        } => (3, vec![Int(*source_sequence), Field::Outcome(outcome)]),
        Event::JobsSnapshot {
            request_id, jobs, ..
        } => (4, vec![Str(request_id), Field::Jobs(jobs)]),
        Event::JobStopResult {
            request_id,
            generation,
            job_id,
            outcome,
            ..
        } => (
            5,
            vec![
                Str(request_id),
                Str(generation),
                Str(job_id),
                Field::Stop(*outcome),
            ],
        ),
        Event::AgentSetupFailed { error, .. } => (6, vec![Str(error)]),
        Event::AgentStep { step, .. } => (7, vec![Int(*step)]),
        Event::StreamRetry {
            attempt,
            max_attempts,
            reason,
            ..
        } => (8, vec![Int(*attempt), Int(*max_attempts), Str(reason)]),
        Event::AgentAborted { reason, .. } => (9, vec![Str(reason)]),
        Event::AgentFinished { answer, .. } => (10, vec![Str(answer)]),
        Event::TurnFailed { error, .. } => (11, vec![Str(error)]),
        Event::AssistantDelta { content, .. } => (12, vec![Str(content)]),
        Event::ReasoningDelta { content, .. } => (13, vec![Str(content)]),
        Event::AssistantMessage { content, .. } => (14, vec![Str(content)]),
        Event::ReasoningMessage { content, .. } => (15, vec![Str(content)]),
        Event::Usage { usage, .. } => (16, vec![Field::Usage(usage)]),
        Event::ToolResult {
            tool_call_id,
            tool_name,
            is_error,
            content,
            brief,
            ..
        } => (
            17,
            vec![
                Str(tool_call_id),
                Str(tool_name),
                Bool(*is_error),
                Str(content),
                Opt(brief),
            ],
        ),
        Event::ToolCallDecodeError {
            tool_call_id,
            tool_name,
            error,
            ..
        } => (18, vec![Str(tool_call_id), Str(tool_name), Str(error)]),
        Event::ApprovalRequested {
            id,
            tool_name,
            detail,
            body,
            ..
        } => (19, vec![Str(id), Str(tool_name), Str(detail), Opt(body)]),
        Event::ApprovalResolved { id, outcome, .. } => (20, vec![Str(id), Str(outcome.as_str())]),
        Event::SteerApplied {
            kind,
            content,
            submission_id,
            ..
        } => (
            21,
            vec![
                Str(kind.as_str()),
                Field::Content(content),
                Opt(submission_id),
            ],
        ),
        Event::SteerDropped {
            content,
            submission_id,
            ..
        } => (22, vec![Field::Content(content), Opt(submission_id)]),
        Event::BackgroundNotice { content, .. } => (23, vec![Str(content)]),
        Event::GoalUpdated { goal, .. } => (24, vec![Opt(goal)]),
        Event::GoalBlocked { reason, .. } => (25, vec![Str(reason)]),
        Event::GoalCheck { content, .. } => (26, vec![Str(content)]),
        Event::GoalReminder { content, .. } => (27, vec![Str(content)]),
        Event::GoalContinue { remaining, .. } => (28, vec![Int(*remaining)]),
        Event::GoalBudgetExhausted { turns, .. } => (29, vec![Int(*turns)]),
        Event::PlanReminder { content, .. } => (30, vec![Str(content)]),
        Event::CompactionStarted {
            from_sequence,
            to_sequence,
            ..
        } => (31, vec![Int(*from_sequence), Int(*to_sequence)]),
        Event::CompactionFinished {
            from_sequence,
            to_sequence,
            summary,
            ..
        } => (
            32,
            vec![Int(*from_sequence), Int(*to_sequence), Str(summary)],
        ),
        Event::CompactionFailed { error, .. } => (33, vec![Str(error)]),
        Event::SubrunStarted {
            id, kind, label, ..
        } => (34, vec![Str(id), Str(kind), Str(label)]),
        Event::SubrunFinished {
            id,
            status,
            steps,
            prompt_tokens,
            completion_tokens,
            unaccounted,
            ..
        } => (
            35,
            vec![
                Str(id),
                Str(status.as_str()),
                Int(*steps),
                Int(*prompt_tokens),
                Int(*completion_tokens),
                Opt(unaccounted),
            ],
        ),
        Event::WorkflowStarted {
            id,
            journal,
            events,
            first_child,
            child_count,
            ..
        } => (
            36,
            vec![
                Str(id),
                Str(journal),
                Str(events),
                Int(*first_child),
                Int(*child_count),
            ],
        ),
        Event::WorkflowFinished { id, .. } => (37, vec![Str(id)]),
        Event::AutoCompactionStarted {
            from_sequence,
            to_sequence,
            ..
        } => (38, vec![Int(*from_sequence), Int(*to_sequence)]),
        Event::AutoCompactionFinished {
            from_sequence,
            to_sequence,
            summary,
            ..
        } => (
            39,
            vec![Int(*from_sequence), Int(*to_sequence), Str(summary)],
        ),
        Event::AutoCompactionFailed { error, .. } => (40, vec![Str(error)]),
        Event::ContextYield {
            to_sequence,
            answer,
            ..
        } => (41, vec![Int(*to_sequence), Str(answer)]),
        Event::SessionStarted {
            session,
            session_root,
            workspace_root,
            ..
        } => (
            42,
            vec![Str(session), Str(session_root), Opt(workspace_root)],
        ),
        Event::SessionError { error, .. } => (43, vec![Str(error)]),
        Event::WorkspaceCreated { dir, .. } => (44, vec![Str(dir)]),
        Event::CommandError { error, .. } => (45, vec![Str(error)]),
        Event::McpConfigIgnored { reason, .. } => (46, vec![Str(reason)]),
        Event::McpConfigUnreadable { path, error, .. } => (47, vec![Str(path), Str(error)]),
        Event::McpConfigInvalid { path, error, .. } => (48, vec![Str(path), Str(error)]),
        Event::McpToolsRegistered {
            servers,
            tools,
            names,
            ..
        } => (49, vec![Int(*servers), Int(*tools), Names(names)]),
        Event::McpToolDuplicate { server, tool, .. } => (50, vec![Str(server), Str(tool)]),
        Event::McpToolRenamed { from, to, .. } => (51, vec![Str(from), Str(to)]),
        Event::McpToolsCapped { server, kept, .. } => (52, vec![Str(server), Int(*kept)]),
        Event::McpServerSkippedOverCap { server, .. } => (53, vec![Str(server)]),
        Event::McpConnectFailed { server, error, .. } => (54, vec![Str(server), Str(error)]),
        Event::McpListToolsFailed { server, error, .. } => (55, vec![Str(server), Str(error)]),
        Event::McpListToolsTimeout { server, .. } => (56, vec![Str(server)]),
        Event::McpNoTools { server, .. } => (57, vec![Str(server)]),
        other => panic!("an event the seeds do not know: {other:?}"),
    }
}

/// The characters of a job component, in the order the event `arbitrary`
/// picks them (`src/v2/event/arbitrary.rs`).
const COMPONENT: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-";

/// A `bool`'s byte.
fn flag(b: bool) -> Read<'static> {
    Read::Front(vec![u8::from(b)])
}

/// An `int_in_range` from 0 (or 1) up to a bound of `n` bytes: the offset,
/// big-endian.
fn offset(value: u64, n: usize) -> Read<'static> {
    Read::Front(value.to_be_bytes()[8 - n..].to_vec())
}

/// The reads the event `arbitrary` makes to draw `event`; `None` for an
/// event it cannot draw (an image whose bytes after their signature are
/// more than 64 or a WebP's size not 0, data nested past 6 levels).
fn event_reads(event: &Event) -> Option<Vec<Read<'_>>> {
    let (index, fields) = event_fields(event);
    let mut reads = vec![Read::Front(vec![index])];
    for field in fields {
        field_reads(&field, &mut reads)?;
    }
    Some(reads)
}

fn field_reads<'a>(field: &Field<'a>, reads: &mut Vec<Read<'a>>) -> Option<()> {
    match field {
        Field::Str(s) => reads.push(Read::Str(s)),
        Field::Opt(o) => option_reads(o, reads),
        Field::Int(n) => reads.push(Read::Front(n.to_le_bytes().to_vec())),
        Field::Bool(b) => reads.push(flag(*b)),
        Field::Kind(k) => reads.push(Read::Front(vec![match k {
            JobEventKind::Started => 0,
            JobEventKind::Updated => 1,
            JobEventKind::Finished => 2,
            JobEventKind::Failed => 3,
            other => panic!("{other:?}"),
        }])),
        Field::Stop(k) => reads.push(Read::Front(vec![match k {
            JobStopOutcome::Stopped => 0,
            JobStopOutcome::AlreadyTerminal => 1,
            JobStopOutcome::NotFound => 2,
            JobStopOutcome::WrongRuntime => 3,
            other => panic!("{other:?}"),
        }])),
        Field::Names(names) => {
            for name in names.iter() {
                reads.extend([flag(true), Read::Str(name)]);
            }
            reads.push(flag(false));
        }
        Field::Usage(u) => {
            for n in [
                u.prompt_tokens,
                u.completion_tokens,
                u.total_tokens,
                u.prompt_cache_hit_tokens,
                u.prompt_cache_miss_tokens,
            ] {
                reads.push(offset(u64::try_from(n).ok()?, 4));
            }
        }
        Field::Outcome(o) => match o {
            PredictionOutcome::Completed {
                text,
                input_tokens,
                output_tokens,
            } => {
                reads.push(Read::Front(vec![0]));
                option_reads(text, reads);
                reads.push(offset(u64::try_from(*input_tokens).ok()?, 4));
                reads.push(offset(u64::try_from(*output_tokens).ok()?, 4));
            }
            PredictionOutcome::Skipped => reads.push(Read::Front(vec![1])),
            PredictionOutcome::Cancelled => reads.push(Read::Front(vec![2])),
            PredictionOutcome::Failed(m) => reads.extend([Read::Front(vec![3]), Read::Str(m)]),
            other => panic!("{other:?}"),
        },
        Field::Content(c) => {
            for part in c.iter() {
                reads.push(flag(true));
                match part {
                    ContentPart::Text(t) => reads.extend([Read::Front(tag(0, 2)), Read::Str(t)]),
                    ContentPart::Image(image) => {
                        const HEADERS: [&[u8]; 5] = [
                            b"\x89PNG\r\n\x1a\n",
                            b"\xff\xd8\xff",
                            b"GIF87a",
                            b"GIF89a",
                            b"RIFF\0\0\0\0WEBP",
                        ];
                        let bytes = image.bytes();
                        let (h, tail) = HEADERS.iter().enumerate().find_map(|(h, header)| {
                            bytes.strip_prefix(*header).map(|tail| (h, tail))
                        })?;
                        if tail.len() > 64 {
                            return None;
                        }
                        reads.push(Read::Front(tag(1, 2)));
                        reads.push(Read::Front(vec![u8::try_from(h).ok()?]));
                        reads.push(Read::Bytes(tail.to_vec()));
                    }
                    other => panic!("{other:?}"),
                }
            }
            reads.push(flag(false));
        }
        Field::Jobs(jobs) => {
            for job in jobs.iter() {
                reads.push(flag(true));
                job_reads(job, reads)?;
            }
            reads.push(flag(false));
        }
        Field::Job(job) => job_reads(job, reads)?,
    }
    Some(())
}

fn option_reads<'a>(o: &'a Option<String>, reads: &mut Vec<Read<'a>>) {
    match o {
        Some(s) => reads.extend([flag(true), Read::Str(s)]),
        None => reads.push(flag(false)),
    }
}

/// A job component: its length (1 to 200) less one, then each character's
/// place.
fn component_reads(s: &str, reads: &mut Vec<Read<'_>>) -> Option<()> {
    let len = u8::try_from(s.len().checked_sub(1)?).ok()?;
    let mut out = vec![len];
    for c in s.bytes() {
        out.push(u8::try_from(COMPONENT.iter().position(|&a| a == c)?).ok()?);
    }
    reads.push(Read::Front(out));
    Some(())
}

fn job_reads<'a>(job: &'a JobRecord, reads: &mut Vec<Read<'a>>) -> Option<()> {
    let safe = |n: i64| offset(u64::try_from(n).expect("a count"), 7);
    component_reads(&job.generation, reads)?;
    component_reads(&job.id, reads)?;
    reads.push(offset(u64::try_from(job.revision - 1).ok()?, 4));
    reads.push(Read::Str(&job.command));
    option_reads(&job.description, reads);
    option_reads(&job.cwd, reads);
    match &job.state {
        JobState::Running => reads.push(Read::Front(vec![0])),
        JobState::Stopping => reads.push(Read::Front(vec![1])),
        JobState::Exited(code) => {
            reads.push(Read::Front(vec![2]));
            reads.push(Read::Front(code.to_le_bytes().to_vec()));
        }
        JobState::Stopped(reason) => reads.extend([Read::Front(vec![3]), Read::Str(reason)]),
        JobState::Interrupted => reads.push(Read::Front(vec![4])),
        other => panic!("{other:?}"),
    }
    reads.push(safe(job.started_at_ms));
    reads.push(safe(job.backgrounded_at_ms));
    for ms in [job.finished_at_ms, job.last_output_at_ms] {
        match ms {
            Some(ms) => reads.extend([flag(true), safe(ms)]),
            None => reads.push(flag(false)),
        }
    }
    match &job.output_file {
        Some(file) => {
            reads.push(flag(true));
            component_reads(file, reads)?;
        }
        None => reads.push(flag(false)),
    }
    reads.push(flag(job.output_persistent));
    reads.push(safe(job.output_bytes));
    reads.push(offset(u64::try_from(job.output_chars).ok()?, 4));
    reads.push(flag(job.output_truncated));
    reads.push(flag(job.invalid_utf8));
    option_reads(&job.output_error, reads);
    option_reads(&job.persistence_error, reads);
    option_reads(&job.cleanup_error, reads);
    match &job.data {
        Some(data) => {
            reads.push(flag(true));
            let mut text = data.as_str().as_bytes();
            json_reads(&mut text, 0, reads)?;
            assert!(text.is_empty(), "one value");
        }
        None => reads.push(flag(false)),
    }
    Some(())
}

/// A job's data, as the text upstream writes back (compact): a kind byte
/// (null, true, false, a number, a string, an array, an object), then its
/// contents; items and members each after a `true` byte; a number as its
/// text (the third way of drawing one).
fn json_reads(text: &mut &[u8], depth: usize, reads: &mut Vec<Read<'_>>) -> Option<()> {
    let (&first, _) = text.split_first()?;
    match first {
        b'n' => {
            *text = text.strip_prefix(b"null")?;
            reads.push(Read::Front(vec![0]));
        }
        b't' => {
            *text = text.strip_prefix(b"true")?;
            reads.push(Read::Front(vec![1]));
        }
        b'f' => {
            *text = text.strip_prefix(b"false")?;
            reads.push(Read::Front(vec![2]));
        }
        b'"' => reads.extend([
            Read::Front(vec![4]),
            Read::Bytes(json_string(text)?.into_bytes()),
        ]),
        b'[' | b'{' if depth >= 6 => return None,
        b'[' => {
            reads.push(Read::Front(vec![5]));
            *text = &text[1..];
            if let Some(rest) = text.strip_prefix(b"]") {
                *text = rest;
            } else {
                loop {
                    reads.push(flag(true));
                    json_reads(text, depth + 1, reads)?;
                    let (&c, rest) = text.split_first()?;
                    *text = rest;
                    if c == b']' {
                        break;
                    }
                }
            }
            reads.push(flag(false));
        }
        b'{' => {
            reads.push(Read::Front(vec![6]));
            *text = &text[1..];
            if let Some(rest) = text.strip_prefix(b"}") {
                *text = rest;
            } else {
                loop {
                    reads.push(flag(true));
                    reads.push(Read::Bytes(json_string(text)?.into_bytes()));
                    *text = text.strip_prefix(b":")?;
                    json_reads(text, depth + 1, reads)?;
                    let (&c, rest) = text.split_first()?;
                    *text = rest;
                    if c == b'}' {
                        break;
                    }
                }
            }
            reads.push(flag(false));
        }
        _ => {
            let end = text
                .iter()
                .position(|c| !matches!(c, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
                .unwrap_or(text.len());
            let (number, rest) = text.split_at(end);
            *text = rest;
            reads.push(Read::Front(vec![3, 2]));
            reads.push(Read::Bytes(number.to_vec()));
        }
    }
    Some(())
}

/// A string token at the front of `text`, unescaped.
fn json_string(text: &mut &[u8]) -> Option<String> {
    let mut end = 1;
    while *text.get(end)? != b'"' {
        end += if text[end] == b'\\' { 2 } else { 1 };
    }
    let (token, rest) = text.split_at(end + 1);
    *text = rest;
    serde_json::from_slice(token).ok()
}

/// The bytes `Event::arbitrary_take_rest` (the `roundtrip_event` target's
/// input) reads as `event`, if it can draw it.
fn event_arbitrary_bytes(event: &Event) -> Option<Vec<u8>> {
    Some(layout(&event_reads(event)?))
}

/// The vectors' commands, as the crate decodes them.
fn vector_commands(lines: &[Vec<u8>]) -> Vec<Command> {
    lines
        .iter()
        .filter_map(|l| Command::from_slice(l).ok())
        .collect()
}

/// FNV-1a, 64 bits: a stable name for a seed from its bytes.
fn name(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

fn named(seeds: Vec<Vec<u8>>) -> BTreeMap<String, Vec<u8>> {
    seeds.into_iter().map(|s| (name(&s), s)).collect()
}

/// Target name to its seeds, by file name.
fn expected() -> BTreeMap<&'static str, BTreeMap<String, Vec<u8>>> {
    let lines = vector_lines();
    BTreeMap::from([
        ("decode_line", named(lines.clone())),
        ("decode_line_v2", named(v2_vector_lines())),
        (
            "roundtrip",
            named(
                vector_commands(&lines)
                    .iter()
                    .map(arbitrary_bytes)
                    .collect(),
            ),
        ),
        ("read_stream", named(streams(&lines))),
        ("codec", named(streams(&lines))),
        ("shell", named(shell_seeds())),
        ("decode_event", named(event_vector_lines())),
        // Sessions as `Session::arbitrary` reads bytes: a few short ones;
        // libFuzzer grows the corpus from them.
        (
            "engine_session",
            named(vec![
                vec![1, 0, 0, 0],
                vec![3, 0, 0, 9, 1, 0, 5, 0, 9, 0],
                vec![6, 2, 3, 0, 1, 1, 13, 0, 1, 1, 0, 0],
            ]),
        ),
        (
            "roundtrip_event",
            named(
                vector_events()
                    .iter()
                    .filter_map(event_arbitrary_bytes)
                    .collect(),
            ),
        ),
    ])
}

fn on_disk(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let Ok(entries) = fs::read_dir(dir) else {
        return BTreeMap::new();
    };
    entries
        .map(|e| {
            let e = e.expect("a directory entry");
            let name = e.file_name().into_string().expect("a UTF-8 name");
            (name, fs::read(e.path()).expect("a readable seed"))
        })
        .collect()
}

#[test]
fn seeds_are_up_to_date() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    // The published package leaves out fuzz/ (fuzzing infrastructure, not
    // what a user builds): there is nothing to compare. In the repository
    // fuzz/ is always there, so this check runs.
    if !fuzz.is_dir() {
        eprintln!(
            "seeds_are_up_to_date: skipped, no {} (the published package has no fuzz/)",
            fuzz.display()
        );
        return;
    }
    let root = fuzz.join("seeds");
    let write = std::env::var_os("SERVE_COMMAND_WRITE_SEEDS").is_some();
    let expected = expected();
    if write {
        let _ = fs::remove_dir_all(&root);
        for (target, seeds) in &expected {
            let dir = root.join(target);
            fs::create_dir_all(&dir).expect("create the seed directory");
            for (name, bytes) in seeds {
                fs::write(dir.join(name), bytes).expect("write a seed");
            }
        }
    }
    let mut targets: Vec<String> = fs::read_dir(&root)
        .expect("fuzz/seeds exists")
        .map(|e| {
            e.expect("an entry")
                .file_name()
                .into_string()
                .expect("UTF-8")
        })
        .collect();
    targets.sort();
    assert_eq!(
        targets,
        expected.keys().map(|t| t.to_string()).collect::<Vec<_>>(),
        "one seed directory per target"
    );
    for (target, seeds) in &expected {
        let found = on_disk(&root.join(target));
        let missing: Vec<&String> = seeds.keys().filter(|n| !found.contains_key(*n)).collect();
        let extra: Vec<&String> = found.keys().filter(|n| !seeds.contains_key(*n)).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "fuzz/seeds/{target} is stale (missing {missing:?}, extra {extra:?}): \
             run SERVE_COMMAND_WRITE_SEEDS=1 cargo test --test seeds"
        );
        for (name, bytes) in seeds {
            assert_eq!(&found[name], bytes, "fuzz/seeds/{target}/{name}");
        }
    }
}

#[test]
fn seed_names_are_stable() {
    assert_eq!(name(b""), "cbf29ce484222325");
    assert_eq!(name(b"{\"command\":\"cancel\"}"), "71a378cc98fdf50e");
}

/// The `roundtrip` seeds are the vectors' commands, as `arbitrary` reads
/// them (checked only with the `arbitrary` feature, which brings it).
#[cfg(feature = "arbitrary")]
#[test]
fn roundtrip_seeds_read_back_as_the_vectors_commands() {
    use arbitrary::{Arbitrary, Unstructured};
    let commands = vector_commands(&vector_lines());
    assert!(commands.len() >= 100, "only {} commands", commands.len());
    for cmd in commands {
        let bytes = arbitrary_bytes(&cmd);
        assert_eq!(
            Command::arbitrary_take_rest(Unstructured::new(&bytes)).ok(),
            Some(cmd),
            "{bytes:?}"
        );
    }
    // Lengths past 256 and 65536 bytes take 2 and 4 bytes.
    for len in [0, 1, 253, 254, 255, 256, 300, 65533, 65534, 65535, 70000] {
        let cmd = Command::GoalSet {
            text: "é".repeat(len / 2) + &"x".repeat(len % 2),
            auto: true,
        };
        let bytes = arbitrary_bytes(&cmd);
        assert_eq!(
            Command::arbitrary_take_rest(Unstructured::new(&bytes)).ok(),
            Some(cmd)
        );
    }
    // Two strings, each length counted with the other's bytes.
    for (text, id) in [
        (250, 3),
        (3, 250),
        (251, 0),
        (0, 252),
        (126, 126),
        (300, 65530),
    ] {
        let cmd = Command::Prompt {
            text: "t".repeat(text),
            submission_id: Some("i".repeat(id)),
        };
        let bytes = arbitrary_bytes(&cmd);
        assert_eq!(
            Command::arbitrary_take_rest(Unstructured::new(&bytes)).ok(),
            Some(cmd)
        );
    }
}

/// The `roundtrip_event` seeds are the vectors' events, as the event
/// `arbitrary` reads them (checked only with the `arbitrary` feature).
#[cfg(feature = "arbitrary")]
#[test]
fn roundtrip_event_seeds_read_back_as_the_vectors_events() {
    use arbitrary::{Arbitrary, Unstructured};
    let events = vector_events();
    let mut drawn = 0;
    let mut names = std::collections::BTreeSet::new();
    for event in &events {
        let Some(bytes) = event_arbitrary_bytes(event) else {
            continue;
        };
        assert_eq!(
            Event::arbitrary_take_rest(Unstructured::new(&bytes)).as_ref(),
            Ok(event),
            "{}",
            event.to_line()
        );
        drawn += 1;
        names.insert(event.name());
    }
    // Every event, and nearly every vector: the few left out hold an image
    // or data the arbitrary cannot draw.
    assert_eq!(names.len(), 58);
    assert!(
        drawn * 20 >= events.len() * 19,
        "{drawn} of {}",
        events.len()
    );
}
