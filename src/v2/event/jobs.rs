//! The nested values of events: background job records and their states,
//! the job event and stop kinds, prediction outcomes and token usage, each
//! with the rules of its upstream `FromJson` (`protocol/jobs.mbt`,
//! `prediction.mbt`, `parse.mbt`'s `usage_of`) and the shape its `ToJson`
//! writes.

use crate::v2::event::json_text::JsonText;
use crate::v2::event::rules::{int, int_from_json, number, FieldValue, Why};
use crate::wire::tree::Json;

/// A background job, as `job_changed` and `jobs_snapshot` carry it
/// (upstream's `JobRecord`, schema version 1).
///
/// Built with [`JobRecord::new`], then its public fields set; upstream may
/// add fields, so it is `#[non_exhaustive]`.
///
/// ```
/// use serve_command::v2::{Event, JobEventKind, JobRecord, JobState};
/// let job = JobRecord::new("g1", "job-1", 1, "cargo test", JobState::Running, 1_700_000_000_000, 1_700_000_000_500);
/// let line = Event::job_changed(JobEventKind::Started, job).to_line();
/// assert!(line.starts_with(r#"{"event":"job_changed","kind":"started","job":{"schema_version":1,"cleanup_error":null,"generation":"g1""#));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct JobRecord {
    /// The engine generation that owns the job: 1 to 200 of
    /// `[A-Za-z0-9._-]`, neither `.` nor `..`.
    pub generation: String,
    /// The job's id, a component like `generation`.
    pub id: String,
    /// How many times the record changed, from 1.
    pub revision: i32,
    /// The shell command.
    pub command: String,
    /// What the job is for, if said.
    pub description: Option<String>,
    /// Where it runs, if said.
    pub cwd: Option<String>,
    /// Running, stopping, or how it ended.
    pub state: JobState,
    /// Milliseconds since the epoch, at most 2^53 - 1.
    pub started_at_ms: i64,
    /// When it went to the background.
    pub backgrounded_at_ms: i64,
    /// When it finished, if it has.
    pub finished_at_ms: Option<i64>,
    /// When it last wrote output, if it has.
    pub last_output_at_ms: Option<i64>,
    /// Its output file (a component like `id`), if kept.
    pub output_file: Option<String>,
    /// Whether the output file outlives the session.
    pub output_persistent: bool,
    /// Output bytes so far, at most 2^53 - 1.
    pub output_bytes: i64,
    /// Output characters so far, at most 2^31 - 1.
    pub output_chars: i32,
    /// Whether the output was cut.
    pub output_truncated: bool,
    /// Whether the output held invalid UTF-8.
    pub invalid_utf8: bool,
    /// Why the output could not be read, if it could not.
    pub output_error: Option<String>,
    /// Why the output could not be kept, if it could not.
    pub persistence_error: Option<String>,
    /// Why cleaning up failed, if it did.
    pub cleanup_error: Option<String>,
    /// Free-form data, kept as upstream writes it back.
    pub data: Option<JsonText>,
}

impl JobRecord {
    /// A record with the required fields; every optional one `None`, every
    /// flag `false`, the output counts 0.
    #[must_use]
    pub fn new(
        generation: impl Into<String>,
        id: impl Into<String>,
        revision: i32,
        command: impl Into<String>,
        state: JobState,
        started_at_ms: i64,
        backgrounded_at_ms: i64,
    ) -> JobRecord {
        JobRecord {
            generation: generation.into(),
            id: id.into(),
            revision,
            command: command.into(),
            description: None,
            cwd: None,
            state,
            started_at_ms,
            backgrounded_at_ms,
            finished_at_ms: None,
            last_output_at_ms: None,
            output_file: None,
            output_persistent: false,
            output_bytes: 0,
            output_chars: 0,
            output_truncated: false,
            invalid_utf8: false,
            output_error: None,
            persistence_error: None,
            cleanup_error: None,
            data: None,
        }
    }
}

/// A job's state (upstream's `JobState`), written `{"kind":...}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum JobState {
    /// `{"kind":"running"}`
    Running,
    /// `{"kind":"stopping"}`
    Stopping,
    /// `{"kind":"exited","code":N}`
    Exited(i32),
    /// `{"kind":"stopped","reason":R}`, `R` not empty.
    Stopped(String),
    /// `{"kind":"interrupted"}`
    Interrupted,
}

impl JobState {
    /// Whether the job has ended (exited, stopped or interrupted).
    #[must_use]
    pub fn is_terminal(&self) -> bool {
        !matches!(self, JobState::Running | JobState::Stopping)
    }
}

/// What a `job_changed` reports (upstream's `JobEventKind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum JobEventKind {
    /// `"started"`
    Started,
    /// `"updated"`
    Updated,
    /// `"finished"`
    Finished,
    /// `"failed"`
    Failed,
}

/// How a `job_stop` came out (upstream's `JobStopOutcome`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum JobStopOutcome {
    /// `"stopped"`
    Stopped,
    /// `"already_terminal"`
    AlreadyTerminal,
    /// `"not_found"`
    NotFound,
    /// `"wrong_runtime"`
    WrongRuntime,
}

/// How the engine's prediction came out (upstream's `PredictionOutcome`):
/// the engine writes only `Completed` and `Failed` since fdf10827; the
/// other two still read.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PredictionOutcome {
    /// `{"kind":"completed","text":T,"input_tokens":I,"output_tokens":O}`:
    /// `text` is `null` (no prediction) or not empty; the counts are at
    /// least 0.
    Completed {
        /// The predicted text, if any.
        text: Option<String>,
        /// Prompt tokens spent.
        input_tokens: i32,
        /// Tokens generated.
        output_tokens: i32,
    },
    /// `{"kind":"skipped"}`
    Skipped,
    /// `{"kind":"cancelled"}`
    Cancelled,
    /// `{"kind":"failed","message":M}`
    Failed(String),
}

/// A turn's token counts (upstream's `Usage`), each at least 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub struct Usage {
    /// Tokens in the prompt.
    pub prompt_tokens: i32,
    /// Tokens generated.
    pub completion_tokens: i32,
    /// Their sum, as the provider counts it.
    pub total_tokens: i32,
    /// Prompt tokens served from the provider's cache.
    pub prompt_cache_hit_tokens: i32,
    /// Prompt tokens not in it.
    pub prompt_cache_miss_tokens: i32,
}

impl Usage {
    /// The five counts, in the wire's order.
    #[must_use]
    pub fn new(
        prompt_tokens: i32,
        completion_tokens: i32,
        total_tokens: i32,
        prompt_cache_hit_tokens: i32,
        prompt_cache_miss_tokens: i32,
    ) -> Usage {
        Usage {
            prompt_tokens,
            completion_tokens,
            total_tokens,
            prompt_cache_hit_tokens,
            prompt_cache_miss_tokens,
        }
    }
}

impl JobEventKind {
    /// The wire string.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            JobEventKind::Started => "started",
            JobEventKind::Updated => "updated",
            JobEventKind::Finished => "finished",
            JobEventKind::Failed => "failed",
        }
    }
}

impl JobStopOutcome {
    /// The wire string.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            JobStopOutcome::Stopped => "stopped",
            JobStopOutcome::AlreadyTerminal => "already_terminal",
            JobStopOutcome::NotFound => "not_found",
            JobStopOutcome::WrongRuntime => "wrong_runtime",
        }
    }
}

// ---------------------------------------------------------------------------
// Reading, as upstream's `FromJson` impls read.

impl FieldValue for JobEventKind {
    const EXPECTED: &'static str = "one of \"started\", \"updated\", \"finished\", \"failed\"";
    fn read(value: &Json<'_>) -> Result<JobEventKind, Why> {
        [
            JobEventKind::Started,
            JobEventKind::Updated,
            JobEventKind::Finished,
            JobEventKind::Failed,
        ]
        .into_iter()
        .find(|k| value.is_str(k.as_str()))
        .ok_or(Why::Wrong)
    }
}

impl FieldValue for JobStopOutcome {
    const EXPECTED: &'static str =
        "one of \"stopped\", \"already_terminal\", \"not_found\", \"wrong_runtime\"";
    fn read(value: &Json<'_>) -> Result<JobStopOutcome, Why> {
        [
            JobStopOutcome::Stopped,
            JobStopOutcome::AlreadyTerminal,
            JobStopOutcome::NotFound,
            JobStopOutcome::WrongRuntime,
        ]
        .into_iter()
        .find(|k| value.is_str(k.as_str()))
        .ok_or(Why::Wrong)
    }
}

impl FieldValue for Usage {
    const EXPECTED: &'static str = "an object of five token counts";
    /// `usage_of`: five integers as `int` reads them, each at least 0.
    fn read(value: &Json<'_>) -> Result<Usage, Why> {
        if !matches!(value, Json::Obj(_)) {
            return Err(Why::Wrong);
        }
        let count = |key: &str| {
            value
                .get(key)
                .and_then(number)
                .and_then(int)
                .filter(|n| *n >= 0)
                .ok_or_else(|| {
                    Why::Invalid(format!("\"{key}\" must be an integer from 0 to 2147483647"))
                })
        };
        Ok(Usage {
            prompt_tokens: count("prompt_tokens")?,
            completion_tokens: count("completion_tokens")?,
            total_tokens: count("total_tokens")?,
            prompt_cache_hit_tokens: count("prompt_cache_hit_tokens")?,
            prompt_cache_miss_tokens: count("prompt_cache_miss_tokens")?,
        })
    }
}

impl FieldValue for PredictionOutcome {
    const EXPECTED: &'static str = "a prediction outcome object";
    fn read(value: &Json<'_>) -> Result<PredictionOutcome, Why> {
        let invalid = || Why::Invalid("invalid prediction outcome".to_owned());
        let kind = value.get("kind").and_then(Json::as_jstr).map(|k| k.text());
        match kind.as_deref() {
            Some("completed") => {
                let (Some(text), Some(input), Some(output)) = (
                    value.get("text"),
                    value.get("input_tokens"),
                    value.get("output_tokens"),
                ) else {
                    return Err(invalid());
                };
                let text = match text {
                    Json::Null => None,
                    Json::Str(t) if !t.is_empty() => Some(t.to_owned_string()),
                    _ => {
                        return Err(Why::Invalid(
                            "text: expected nonempty text or null".to_owned(),
                        ))
                    }
                };
                let tokens = |v: &Json<'_>, key: &str| {
                    int_from_json(v).ok_or_else(|| {
                        Why::Invalid(format!(
                            "{key}: expected an integer from -2147483648 to 2147483647"
                        ))
                    })
                };
                let input_tokens = tokens(input, "input_tokens")?;
                let output_tokens = tokens(output, "output_tokens")?;
                if input_tokens < 0 || output_tokens < 0 {
                    return Err(Why::Invalid("negative token usage".to_owned()));
                }
                Ok(PredictionOutcome::Completed {
                    text,
                    input_tokens,
                    output_tokens,
                })
            }
            Some("skipped") => Ok(PredictionOutcome::Skipped),
            Some("cancelled") => Ok(PredictionOutcome::Cancelled),
            Some("failed") => match value.get("message") {
                Some(Json::Str(m)) => Ok(PredictionOutcome::Failed(m.to_owned_string())),
                _ => Err(invalid()),
            },
            _ => Err(invalid()),
        }
    }
}

impl FieldValue for JobState {
    const EXPECTED: &'static str = "a job state object";
    fn read(value: &Json<'_>) -> Result<JobState, Why> {
        let invalid = || Why::Invalid("invalid background job state".to_owned());
        match value
            .get("kind")
            .and_then(Json::as_jstr)
            .map(|k| k.text())
            .as_deref()
        {
            Some("running") => Ok(JobState::Running),
            Some("stopping") => Ok(JobState::Stopping),
            Some("interrupted") => Ok(JobState::Interrupted),
            Some("stopped") => match value.get("reason") {
                Some(Json::Str(r)) if !r.is_empty() => Ok(JobState::Stopped(r.to_owned_string())),
                _ => Err(invalid()),
            },
            Some("exited") => value
                .get("code")
                .and_then(number)
                .and_then(int)
                .map(JobState::Exited)
                .ok_or_else(invalid),
            _ => Err(invalid()),
        }
    }
}

/// `valid_job_component`: 1 to 200 of `[A-Za-z0-9._-]`, neither `.` nor
/// `..`.
pub(crate) fn valid_job_component(value: &str) -> bool {
    !value.is_empty()
        && value != "."
        && value != ".."
        && value.len() <= 200
        && value
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// Declares a job record's keys and names each by its place.
macro_rules! job_keys {
    ($($key:ident),* $(,)?) => {
        const JOB_KEYS: [&str; [$(stringify!($key)),*].len()] = [$(stringify!($key)),*];
        /// A key's place in [`JOB_KEYS`].
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy)]
        enum Key { $($key),* }
    };
}

job_keys![
    schema_version,
    cleanup_error,
    generation,
    id,
    revision,
    command,
    description,
    cwd,
    state,
    started_at_ms,
    backgrounded_at_ms,
    finished_at_ms,
    last_output_at_ms,
    output_file,
    output_persistent,
    output_bytes,
    output_chars,
    output_truncated,
    invalid_utf8,
    output_error,
    persistence_error,
    data,
];

impl FieldValue for JobRecord {
    const EXPECTED: &'static str = "a job record object";
    /// `JobRecord::from_json`, check for check and in its order, with its
    /// messages.
    fn read(value: &Json<'_>) -> Result<JobRecord, Why> {
        let fail = |m: String| Why::Invalid(m);
        // Every key's value in one pass, not a search a field.
        let fields = value.pick(&JOB_KEYS);
        let get = |key: Key| fields[key as usize];
        let name = |key: Key| JOB_KEYS[key as usize];
        if !matches!(value, Json::Obj(_))
            || number(get(Key::schema_version).unwrap_or(&Json::Null)) != Some(1.0)
        {
            return Err(fail("expected background job schema version 1".to_owned()));
        }
        let field =
            |key: Key| get(key).ok_or_else(|| fail(format!("missing job field: {}", name(key))));
        // `String::from_json` / `Bool::from_json` on a present field.
        let string = |key: Key| -> Result<String, Why> {
            field(key)?
                .string()
                .ok_or_else(|| fail(format!("{}: expected a string", name(key))))
        };
        let flag = |key: Key| -> Result<bool, Why> {
            match field(key)? {
                Json::Bool(b) => Ok(*b),
                _ => Err(fail(format!("{}: expected true or false", name(key)))),
            }
        };
        let optional = |key: Key| -> Result<Option<String>, Why> {
            match get(key) {
                None | Some(Json::Null) => Ok(None),
                Some(Json::Str(s)) => Ok(Some(s.to_owned_string())),
                Some(_) => Err(fail(format!("{}: expected a string or null", name(key)))),
            }
        };
        let uint = |key: Key| -> Result<i64, Why> {
            match number(field(key)?) {
                Some(x)
                    if (0.0..=9_007_199_254_740_991.0).contains(&x) && (x as i64) as f64 == x =>
                {
                    Ok(x as i64)
                }
                _ => Err(fail(format!(
                    "invalid nonnegative job integer: {}",
                    name(key)
                ))),
            }
        };
        let optional_uint = |key: Key| -> Result<Option<i64>, Why> {
            match get(key) {
                None | Some(Json::Null) => Ok(None),
                Some(_) => uint(key).map(Some),
            }
        };
        let cleanup_error = optional(Key::cleanup_error)?;
        let data = match get(Key::data) {
            None | Some(Json::Null) => None,
            Some(data) => Some(JsonText::of(data)),
        };
        let generation = string(Key::generation)?;
        let id = string(Key::id)?;
        let revision = uint(Key::revision)?;
        let command = string(Key::command)?;
        let description = optional(Key::description)?;
        let cwd = optional(Key::cwd)?;
        let state = JobState::read(field(Key::state)?).map_err(|why| match why {
            Why::Wrong => fail("invalid background job state".to_owned()),
            invalid => invalid,
        })?;
        let started_at_ms = uint(Key::started_at_ms)?;
        let backgrounded_at_ms = uint(Key::backgrounded_at_ms)?;
        let finished_at_ms = optional_uint(Key::finished_at_ms)?;
        let last_output_at_ms = optional_uint(Key::last_output_at_ms)?;
        let output_file = optional(Key::output_file)?;
        let output_persistent = flag(Key::output_persistent)?;
        let output_bytes = uint(Key::output_bytes)?;
        let output_chars = uint(Key::output_chars)?;
        let output_truncated = flag(Key::output_truncated)?;
        let invalid_utf8 = flag(Key::invalid_utf8)?;
        let output_error = optional(Key::output_error)?;
        let persistence_error = optional(Key::persistence_error)?;
        let (Ok(revision), Ok(output_chars)) =
            (i32::try_from(revision), i32::try_from(output_chars))
        else {
            return Err(fail("invalid background job identity or count".to_owned()));
        };
        if !(valid_job_component(&generation)
            && valid_job_component(&id)
            && revision > 0
            && output_file.as_deref().is_none_or(valid_job_component))
        {
            return Err(fail("invalid background job identity or count".to_owned()));
        }
        Ok(JobRecord {
            generation,
            id,
            revision,
            command,
            description,
            cwd,
            state,
            started_at_ms,
            backgrounded_at_ms,
            finished_at_ms,
            last_output_at_ms,
            output_file,
            output_persistent,
            output_bytes,
            output_chars,
            output_truncated,
            invalid_utf8,
            output_error,
            persistence_error,
            cleanup_error,
            data,
        })
    }
}

impl FieldValue for Box<JobRecord> {
    const EXPECTED: &'static str = JobRecord::EXPECTED;
    fn read(value: &Json<'_>) -> Result<Box<JobRecord>, Why> {
        JobRecord::read(value).map(Box::new)
    }
}

impl FieldValue for Vec<JobRecord> {
    const EXPECTED: &'static str = "an array of job records";
    fn read(value: &Json<'_>) -> Result<Vec<JobRecord>, Why> {
        let Json::Arr(items) = value else {
            return Err(Why::Wrong);
        };
        items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                JobRecord::read(item).map_err(|why| match why {
                    Why::Wrong => Why::Invalid(format!("job {i}: not a job record")),
                    Why::Invalid(m) => Why::Invalid(format!("job {i}: {m}")),
                })
            })
            .collect()
    }
}
