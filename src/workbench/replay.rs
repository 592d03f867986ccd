//! The replay engine: `serve-command mock-engine --replay LOG` in process
//! (what it answers, and why, is on [`Replay`]).

use super::MockEngine;
use crate::conversation::record::{LogError, LogReader, Wire};
use crate::conversation::{Conversation, Direction};
use crate::v2::{Command, CommandReader, ReadError};
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::io::{self, BufRead, Write};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// An engine that answers as a recorded session's engine did: a mock
/// engine made from a recording (a controller's
/// [`Recorder`](crate::v2::serve::Recorder), or `serve-command tap
/// --log`), so a controller's tests run against what a real engine wrote,
/// with no model and the same answers every run.
///
/// The recording is attributed with
/// [`Conversation`](crate::v2::serve::Conversation), the model of the
/// serve loop: which events answered which command line, which turn each
/// event belongs to. Then each command line read is matched, by its kind,
/// with the recording's: the Nth `prompt` read is the recording's Nth
/// `prompt`, the Nth `steer` its Nth `steer`, and so on for
/// `jobs_snapshot`, `job_stop`, `goal`, `compact`, `approval`, `cancel`
/// and refused lines (a line the reader or the serve policy refuses), and
/// gets what its match got:
///
/// | command | what it gets |
/// | --- | --- |
/// | `prompt` | its turn's events, in order, once the work before it has run (one turn or compaction at a time, in the order their commands are read, as the engine runs them) |
/// | `compact` | its compaction's events, the same way |
/// | `goal` with `auto` | its `goal_updated`, and the turns the engine ran for the goal, as work |
/// | `jobs_snapshot`, `job_stop` | the reply, at once, with the `request_id` the new command carries |
/// | `steer`, `goal` | `steer_applied` / `steer_dropped` / `goal_updated` at once when the recording's came while no work ran; otherwise at the point of the work where the recording's came (a steer's reply with the new steer's `submission_id`) |
/// | `approval` | the `approval_resolved` in its turn |
/// | `cancel` | the `agent_aborted` (`compaction_failed`) that ends its work |
/// | a refused line | the recorded `command_error` |
///
/// A turn's events are written as recorded, with their ids
/// (`approval_requested`'s among them). An event that answered another
/// command (a steer's `steer_applied` inside a turn, an approval's
/// `approval_resolved`, a cancel's `agent_aborted`) waits for that command
/// to be read: a turn that asked for an approval waits for it. Events that
/// answered nothing (`session_started`, `job_changed`, a line that is not
/// an event) are written where they were relative to the commands: inside
/// the work they came in, or once the command line before them has been
/// read (before any command, for those that came first).
///
/// The engine's own prediction (a `prediction_result` the model attributes
/// to the turn it follows) is played with that turn, after its end, at
/// its recorded gap, unless the engine would have cancelled it by then: a
/// prompt, steer, `compact`, `cancel` or goal read since the turn's end,
/// other work queued, or the end of input. Then it is left out, silently,
/// as the engine drops a cancelled prediction.
///
/// Pace: a work's events come at the recording's gaps between them (from
/// `t_us`, or `t_ms`); an event that waited for a command comes that long
/// after the later of the previous event and the command.
/// [`Replay::delay`] puts one delay between every two events of a work
/// instead.
///
/// A command the recording never saw (a third prompt when it had two, a
/// request of a kind it never had) is answered as a plain
/// [`MockEngine`] answers it alone, with no work running (its turn and its
/// compaction queued with the recorded work), and a note says so
/// ([`Replay::notes`]): `command line 7 (prompt): not in the recording;
/// answered as the mock engine`. After a line that is not JSON reading
/// ends, as the engine's does. At the end of input the work queued runs to
/// its end; events that wait for a command never read are left out.
///
/// ```
/// use serve_command::v2::serve::Recorder;
/// use serve_command::workbench::{MockEngine, Replay};
/// use std::sync::{Arc, Mutex};
///
/// #[derive(Clone, Default)]
/// struct Shared(Arc<Mutex<Vec<u8>>>);
/// impl std::io::Write for Shared {
///     fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
///         self.0.lock().unwrap().write(buf)
///     }
///     fn flush(&mut self) -> std::io::Result<()> {
///         Ok(())
///     }
/// }
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// // A recording: a session with the mock engine, line by line.
/// let input = b"{\"command\":\"jobs_snapshot\",\"request_id\":\"j1\"}\n{\"command\":\"prompt\",\"content\":\"hi\"}\n";
/// let mut output = Vec::new();
/// MockEngine::new().serve(&input[..], &mut output)?;
/// let file = Shared::default();
/// let recorder = Recorder::new(file.clone());
/// for line in input.split_inclusive(|&b| b == b'\n') {
///     recorder.command(line);
/// }
/// for line in output.split_inclusive(|&b| b == b'\n') {
///     recorder.event(line);
/// }
/// recorder.finish(None);
/// let recording = file.0.lock().unwrap().clone();
///
/// // The same session, with another request id, against the recording.
/// let replay = Replay::read(&recording[..])?;
/// let input = b"{\"command\":\"jobs_snapshot\",\"request_id\":\"j2\"}\n{\"command\":\"prompt\",\"content\":\"hi\"}\n";
/// let mut replayed = Vec::new();
/// replay.serve(&input[..], &mut replayed)?;
/// let replayed = String::from_utf8(replayed)?;
/// assert_eq!(replayed, String::from_utf8(output)?.replace("j1", "j2"));
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Replay {
    recording: Arc<Recording>,
    delay: Option<Duration>,
    notes: Option<Notes>,
}

/// Where the notes go.
type Notes = Arc<dyn Fn(&str) + Send + Sync>;

impl fmt::Debug for Replay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Replay")
            .field("commands", &self.recording.commands.len())
            .field("events", &self.recording.events.len())
            .field("delay", &self.delay)
            .finish_non_exhaustive()
    }
}

/// A recording [`Replay::read`] cannot replay: which line of it, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordingError {
    line: Option<u64>,
    reason: String,
}

impl RecordingError {
    /// The recording's line, counted from 1; `None` when reading it
    /// failed.
    #[must_use]
    pub fn line(&self) -> Option<u64> {
        self.line
    }

    /// Why, for a person: `not JSON: ...`, `this event record's "n" is 9,
    /// but it is event 8 of the log: ...` (the messages of `serve-command
    /// trace`, which reads recordings alike).
    #[must_use]
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl fmt::Display for RecordingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "line {line}: {}", self.reason),
            None => f.write_str(&self.reason),
        }
    }
}

impl std::error::Error for RecordingError {}

impl From<LogError> for RecordingError {
    fn from(error: LogError) -> RecordingError {
        match error {
            LogError::Read(e) => RecordingError {
                line: None,
                reason: format!("read failed: {e}"),
            },
            LogError::Record(line, reason) => RecordingError {
                line: Some(line),
                reason,
            },
        }
    }
}

/// A recording, attributed and laid out for answering.
#[derive(Debug, Default)]
struct Recording {
    /// Each command line, by its number less one.
    commands: Vec<RecordedCommand>,
    /// The command lines of each kind, in order.
    by_kind: BTreeMap<&'static str, Vec<u64>>,
    events: Vec<RecordedEvent>,
    /// The events written when a command comes, by its number.
    replies: BTreeMap<u64, Vec<usize>>,
    /// The work (turns, compactions) a command brings, by its number.
    works: BTreeMap<u64, Vec<Vec<usize>>>,
    /// Events that answer nothing, outside work, by the command line after
    /// which they came (0: before any).
    anchored: BTreeMap<u64, Vec<usize>>,
}

#[derive(Debug)]
struct RecordedCommand {
    ids: Ids,
    t_us: Option<u64>,
    /// Its place among all the records.
    at: u64,
}

#[derive(Debug)]
struct RecordedEvent {
    line: Vec<u8>,
    name: Option<String>,
    answers: Option<u64>,
    t_us: Option<u64>,
}

/// The ids of a command that its reply carries.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Ids {
    request_id: Option<String>,
    submission_id: Option<String>,
}

impl Ids {
    fn of(command: &Command) -> Ids {
        match command {
            Command::JobsSnapshot { request_id, .. } | Command::JobStop { request_id, .. } => Ids {
                request_id: Some(request_id.clone()),
                submission_id: None,
            },
            Command::Steer { submission_id, .. } => Ids {
                request_id: None,
                submission_id: submission_id.clone(),
            },
            _ => Ids::default(),
        }
    }
}

/// The work that started last while the recording is read.
struct Latest {
    key: u64,
    index: usize,
    compaction: bool,
    /// The record that ended it.
    end: Option<u64>,
}

impl Recording {
    fn read(input: impl BufRead) -> Result<Recording, RecordingError> {
        let mut log = LogReader::new(input);
        let mut conversation = Conversation::new();
        let mut recording = Recording::default();
        let mut stopped = false;
        let mut at = 0u64;
        let mut last_command = 0u64;
        let mut latest: Option<Latest> = None;
        let mut prefix: Vec<usize> = Vec::new();
        while let Some(record) = log.read_record()? {
            at += 1;
            if record.direction == Direction::Command {
                let bytes: &[u8] = match &record.line {
                    Wire::Bytes(bytes) => bytes,
                    Wire::TooLong => b"x",
                };
                let n = conversation.command(bytes);
                let (kind, ids) = match engine_reads(bytes, &mut stopped) {
                    Reads::Unread | Reads::Blank => (None, Ids::default()),
                    Reads::Refused => (Some(REFUSED), Ids::default()),
                    Reads::Command(command) => (Some(command.name()), Ids::of(&command)),
                };
                if let Some(kind) = kind {
                    recording.by_kind.entry(kind).or_default().push(n);
                    last_command = n;
                }
                recording.commands.push(RecordedCommand {
                    ids,
                    t_us: record.t_us,
                    at,
                });
                continue;
            }
            let Wire::Bytes(line) = record.line else {
                return Err(RecordingError {
                    line: Some(record.at),
                    reason: format!(
                        "event {} is not held (\"line\":null: over the tap's line limit), so it \
                         cannot be replayed",
                        record.n
                    ),
                });
            };
            let a = conversation.event(&line);
            let name = a.event.map(str::to_owned).or(a.unreadable);
            let i = recording.events.len();
            let ends_turn = matches!(
                name.as_deref(),
                Some("agent_finished" | "turn_failed" | "agent_aborted")
            );
            let compaction = name.as_deref().and_then(|n| n.strip_prefix("compaction_"));
            let running = latest.as_ref().filter(|w| w.end.is_none());
            let mut start = None;
            let mut into_latest = false;
            let mut end = false;
            // The engine's own prediction follows its turn's end: played
            // with that turn.
            let predicted = name.as_deref() == Some("prediction_result");
            if let Some(p) = a.turn {
                let into = if predicted { latest.as_ref() } else { running };
                if into.is_some_and(|w| !w.compaction && w.key == p) {
                    into_latest = true;
                } else {
                    start = Some((p, false));
                }
                end = ends_turn;
            } else if let (Some("started"), Some(k)) = (compaction, a.answers) {
                start = Some((k, true));
            } else if compaction.is_some() && running.is_some_and(|w| w.compaction) {
                into_latest = true;
                end = true;
            } else if name.as_deref() == Some("goal_continue") {
                prefix.push(i);
            } else if let Some(c) = a.answers {
                let settles = matches!(
                    name.as_deref(),
                    Some("steer_applied" | "steer_dropped" | "goal_updated")
                );
                let sent = usize::try_from(c - 1)
                    .ok()
                    .and_then(|c| recording.commands.get(c))
                    .map_or(0, |c| c.at);
                let during = latest
                    .as_ref()
                    .is_some_and(|w| w.end.is_none_or(|end| sent < end));
                if settles && during {
                    into_latest = true;
                } else {
                    recording.replies.entry(c).or_default().push(i);
                }
            } else if running.is_some() {
                into_latest = true;
            } else {
                recording.anchored.entry(last_command).or_default().push(i);
            }
            if let Some((key, compaction)) = start {
                let works = recording.works.entry(key).or_default();
                let mut events = std::mem::take(&mut prefix);
                events.push(i);
                works.push(events);
                latest = Some(Latest {
                    key,
                    index: works.len() - 1,
                    compaction,
                    end: None,
                });
            } else if into_latest {
                if let Some(w) = &latest {
                    if let Some(work) = recording
                        .works
                        .get_mut(&w.key)
                        .and_then(|works| works.get_mut(w.index))
                    {
                        work.push(i);
                    }
                }
            }
            if end {
                if let Some(w) = &mut latest {
                    w.end = Some(at);
                }
            }
            recording.events.push(RecordedEvent {
                line,
                name,
                answers: a.answers,
                t_us: record.t_us,
            });
        }
        Ok(recording)
    }

    fn command(&self, n: u64) -> Option<&RecordedCommand> {
        self.commands.get(usize::try_from(n.checked_sub(1)?).ok()?)
    }

    /// Event `i`'s line, with the ids of the command that answers it now
    /// (`arrived`) where its reply carries them.
    fn line(&self, i: usize, arrived: Option<&Arrived>) -> Vec<u8> {
        let event = &self.events[i];
        let (Some(c), Some(arrived)) = (event.answers.and_then(|c| self.command(c)), arrived)
        else {
            return event.line.clone();
        };
        let rewritten = match event.name.as_deref() {
            Some("jobs_snapshot" | "job_stop_result")
                if arrived.ids.request_id != c.ids.request_id =>
            {
                with_member(&event.line, "request_id", arrived.ids.request_id.as_deref())
            }
            Some("steer_applied" | "steer_dropped")
                if arrived.ids.submission_id != c.ids.submission_id =>
            {
                with_member(
                    &event.line,
                    "submission_id",
                    arrived.ids.submission_id.as_deref(),
                )
            }
            _ => None,
        };
        rewritten.unwrap_or_else(|| event.line.clone())
    }
}

/// The kind of a refused line.
const REFUSED: &str = "refused";

/// What the engine makes of a command line, as a recording is read.
pub(super) enum Reads {
    /// Sent after a line that ended its reading.
    Unread,
    /// Blank: skipped.
    Blank,
    /// Refused: by the reader or the serve policy.
    Refused,
    /// A command it runs.
    Command(Command),
}

/// What the engine makes of `line`; `stopped` says whether an earlier line
/// ended its reading, and is set when this one does.
pub(super) fn engine_reads(line: &[u8], stopped: &mut bool) -> Reads {
    if *stopped {
        return Reads::Unread;
    }
    match CommandReader::new(line).next() {
        None => Reads::Blank,
        Some(Err(error)) => {
            *stopped = error.is_stream_error();
            Reads::Refused
        }
        Some(Ok(command)) if command.serve_refusal().is_some() => Reads::Refused,
        Some(Ok(command)) => Reads::Command(command),
    }
}

/// A JSON object's members, in order, each value as written.
struct Members<'a>(Vec<(String, &'a RawValue)>);

impl<'de> Deserialize<'de> for Members<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Each;
        impl<'de> Visitor<'de> for Each {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members<'de>, A::Error> {
                let mut members = Vec::new();
                while let Some(member) = map.next_entry::<String, &'de RawValue>()? {
                    members.push(member);
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(Each)
    }
}

/// `line`, a JSON object, with its member `key` set to the string `value`
/// (last when it had none), or left out for `None`; every other member as
/// written, in its place. `None` for a line that is not an object.
fn with_member(line: &[u8], key: &str, value: Option<&str>) -> Option<Vec<u8>> {
    let Members(members) = serde_json::from_slice(line).ok()?;
    let mut out = Vec::with_capacity(line.len() + 16);
    let put = |out: &mut Vec<u8>, name: &str, raw: &[u8]| {
        out.push(if out.is_empty() { b'{' } else { b',' });
        // Writing to a `Vec` cannot fail.
        let _ = serde_json::to_writer(&mut *out, name);
        out.push(b':');
        out.extend_from_slice(raw);
    };
    let value = value.map(|v| serde_json::to_string(v).unwrap_or_default());
    let mut set = false;
    for (name, raw) in &members {
        if name != key {
            put(&mut out, name, raw.get().as_bytes());
        } else if let Some(value) = &value {
            if !std::mem::replace(&mut set, true) {
                put(&mut out, name, value.as_bytes());
            }
        }
    }
    if let (false, Some(value)) = (set, &value) {
        put(&mut out, key, value.as_bytes());
    }
    if out.is_empty() {
        out.push(b'{');
    }
    out.push(b'}');
    Some(out)
}

/// A command of the new run that matched one of the recording's.
#[derive(Clone, Debug)]
struct Arrived {
    ids: Ids,
    at: Instant,
}

/// What the work thread plays, in order.
enum Queued {
    /// The recording's work `index` of command `key`.
    Recorded { key: u64, index: usize },
    /// The mock engine's events for a command the recording never saw.
    Mock(Vec<Vec<u8>>),
}

#[derive(Default)]
struct State {
    arrived: BTreeMap<u64, Arrived>,
    /// Commands read that cancel the engine's prediction (a prompt, a
    /// steer, `compact`, `cancel`, a goal), counted.
    cancellers: u64,
    queue: VecDeque<Queued>,
    /// The end of input (or reading stopped).
    ended: bool,
}

struct Shared<W> {
    state: Mutex<State>,
    changed: Condvar,
    out: Mutex<(W, Option<io::Error>)>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl<W: Write> Shared<W> {
    /// Writes `line` and its LF whole, flushed; after a failed write,
    /// nothing.
    fn write(&self, line: &[u8]) {
        let mut out = lock(&self.out);
        let (w, error) = &mut *out;
        if error.is_some() {
            return;
        }
        let mut whole = Vec::with_capacity(line.len() + 1);
        whole.extend_from_slice(line);
        whole.push(b'\n');
        if let Err(e) = w.write_all(&whole).and_then(|()| w.flush()) {
            *error = Some(e);
        }
    }

    fn failed(&self) -> bool {
        lock(&self.out).1.is_some()
    }
}

impl Replay {
    /// The engine `recording` makes: a log of the wire (`serve-command tap
    /// --log`, a [`Recorder`](crate::v2::serve::Recorder)'s), read as
    /// `serve-command trace` reads it, at the recording's pace.
    ///
    /// # Errors
    ///
    /// A recording that cannot be read, with its line and why: a record
    /// that is not JSON or not a record, records left out or reordered (a
    /// wrong `n`), an event not held (`"line":null`).
    pub fn read(recording: impl BufRead) -> Result<Replay, RecordingError> {
        Ok(Replay {
            recording: Arc::new(Recording::read(recording)?),
            delay: None,
            notes: None,
        })
    }

    /// The same engine at another pace: `delay` between every two events
    /// of a work, in place of the recording's gaps ([`Duration::ZERO`]: as
    /// fast as it can).
    #[must_use]
    pub fn delay(mut self, delay: Duration) -> Replay {
        self.delay = Some(delay);
        self
    }

    /// Where the notes go, one call each, without a LF: `command line 7
    /// (prompt): not in the recording; answered as the mock engine`. By
    /// default, nowhere.
    #[must_use]
    pub fn notes(mut self, notes: impl Fn(&str) + Send + Sync + 'static) -> Replay {
        self.notes = Some(Arc::new(notes));
        self
    }

    /// Reads commands from `input` and writes the recording's answers to
    /// `output`, a line at a time, flushed, until the end of input (then
    /// the work queued runs to its end) or a line after which an engine
    /// reads no more: that line's error, answered already, is returned.
    ///
    /// # Errors
    ///
    /// A failed write to `output`.
    pub fn serve(
        self,
        input: impl BufRead,
        output: impl Write + Send,
    ) -> io::Result<Option<ReadError>> {
        let shared = Shared {
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
            out: Mutex::new((output, None)),
        };
        let stopped = std::thread::scope(|scope| {
            let worker = scope.spawn(|| self.work(&shared));
            let stopped = self.answer(input, &shared);
            lock(&shared.state).ended = true;
            shared.changed.notify_all();
            if let Err(panic) = worker.join() {
                std::panic::resume_unwind(panic);
            }
            stopped
        });
        match shared
            .out
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner)
        {
            (_, Some(error)) => Err(error),
            (_, None) => Ok(stopped),
        }
    }

    /// Reads the commands, answering each.
    fn answer<W: Write>(&self, input: impl BufRead, shared: &Shared<W>) -> Option<ReadError> {
        let recording = &*self.recording;
        for &i in recording.anchored.get(&0).into_iter().flatten() {
            shared.write(&recording.events[i].line);
        }
        let mut seen: BTreeMap<&'static str, usize> = BTreeMap::new();
        let mut reader = CommandReader::new(input);
        while let Some(item) = reader.next() {
            if shared.failed() {
                return None;
            }
            let item = match item {
                // Not a line: answered as the mock engine does.
                Err(error @ ReadError::Io(_)) => {
                    shared.write(error.event_line().as_bytes().trim_ascii_end());
                    return Some(error);
                }
                item => item,
            };
            let (kind, ids, stream) = match &item {
                Ok(command) if command.serve_refusal().is_none() => {
                    (command.name(), Ids::of(command), false)
                }
                Ok(_) => (REFUSED, Ids::default(), false),
                Err(error) => (REFUSED, Ids::default(), error.is_stream_error()),
            };
            if matches!(kind, "prompt" | "steer" | "compact" | "cancel" | "goal") {
                lock(&shared.state).cancellers += 1;
            }
            let seen = seen.entry(kind).or_default();
            *seen += 1;
            let matched = recording
                .by_kind
                .get(kind)
                .and_then(|ns| ns.get(*seen - 1))
                .copied();
            match matched {
                Some(n) => self.arrive(n, ids, shared),
                None => self.as_the_mock(reader.line_number(), kind, &item, shared),
            }
            if stream {
                return item.err();
            }
        }
        None
    }

    /// Command `n` of the recording has its match: its replies, the events
    /// that came after it, and its work.
    fn arrive<W: Write>(&self, n: u64, ids: Ids, shared: &Shared<W>) {
        let recording = &*self.recording;
        let arrived = Arrived {
            ids,
            at: Instant::now(),
        };
        for &i in recording.replies.get(&n).into_iter().flatten() {
            shared.write(&recording.line(i, Some(&arrived)));
        }
        for &i in recording.anchored.get(&n).into_iter().flatten() {
            shared.write(&recording.events[i].line);
        }
        let mut state = lock(&shared.state);
        state.arrived.insert(n, arrived);
        let works = recording.works.get(&n).map_or(0, Vec::len);
        state
            .queue
            .extend((0..works).map(|index| Queued::Recorded { key: n, index }));
        drop(state);
        shared.changed.notify_all();
    }

    /// A command the recording never saw: the plain mock engine's answer,
    /// and a note.
    fn as_the_mock<W: Write>(
        &self,
        line: u64,
        kind: &str,
        item: &Result<Command, ReadError>,
        shared: &Shared<W>,
    ) {
        if let Some(notes) = &self.notes {
            notes(&format!(
                "command line {line} ({kind}): not in the recording; answered as the mock engine"
            ));
        }
        let answer = match item {
            Err(error) => error.event_line(),
            Ok(command) => match command.serve_refusal_event_line() {
                Some(line) => line,
                None => {
                    let mut input = Vec::new();
                    let mut output = Vec::new();
                    // Writes to a `Vec` cannot fail.
                    let _ = command.write_line(&mut input);
                    let _ = MockEngine::new().serve(&input[..], &mut output);
                    String::from_utf8_lossy(&output).into_owned()
                }
            },
        };
        let lines: Vec<Vec<u8>> = answer.lines().map(|l| l.as_bytes().to_vec()).collect();
        if matches!(kind, "prompt" | "compact") {
            lock(&shared.state).queue.push_back(Queued::Mock(lines));
            shared.changed.notify_all();
        } else {
            for line in &lines {
                shared.write(line);
            }
        }
    }

    /// Plays the work queued, one at a time, until the end of input and
    /// of the queue.
    fn work<W: Write>(&self, shared: &Shared<W>) {
        loop {
            let next = {
                let mut state = lock(&shared.state);
                loop {
                    if let Some(next) = state.queue.pop_front() {
                        break Some(next);
                    }
                    if state.ended {
                        break None;
                    }
                    state = shared
                        .changed
                        .wait(state)
                        .unwrap_or_else(PoisonError::into_inner);
                }
            };
            match next {
                None => return,
                Some(Queued::Mock(lines)) => {
                    for (i, line) in lines.iter().enumerate() {
                        if i > 0 {
                            std::thread::sleep(self.delay.unwrap_or_default());
                        }
                        shared.write(line);
                    }
                }
                Some(Queued::Recorded { key, index }) => self.play(key, index, shared),
            }
            if shared.failed() {
                return;
            }
        }
    }

    /// Plays the recording's work `index` of command `key`.
    fn play<W: Write>(&self, key: u64, index: usize, shared: &Shared<W>) {
        let recording = &*self.recording;
        let Some(events) = recording.works.get(&key).and_then(|w| w.get(index)) else {
            return;
        };
        // When the last event was written, and its recorded time.
        let mut last: Option<(Instant, Option<u64>)> = None;
        // The cancelling commands read when the turn's end was written.
        let mut ended: Option<u64> = None;
        for &i in events {
            let event = &recording.events[i];
            let predicted = event.name.as_deref() == Some("prediction_result");
            let other = event.answers.filter(|&c| c != key);
            let arrived = match event.answers {
                Some(c) => self.arrived(c, other.is_some(), shared),
                None => None,
            };
            if other.is_some() && arrived.is_none() {
                // It answers a command never read.
                continue;
            }
            if let Some((mut since, mut since_t)) = last {
                if let (Some(c), Some(arrived)) = (other, &arrived) {
                    since = since.max(arrived.at);
                    since_t = since_t.max(recording.command(c).and_then(|c| c.t_us));
                }
                let gap = match (self.delay, event.t_us, since_t) {
                    (Some(delay), _, _) => delay,
                    (None, Some(t), Some(since_t)) => {
                        Duration::from_micros(t.saturating_sub(since_t))
                    }
                    _ => Duration::ZERO,
                };
                let wait = (since + gap).saturating_duration_since(Instant::now());
                if !wait.is_zero() {
                    std::thread::sleep(wait);
                }
            }
            if predicted {
                // Cancelled by what was read since the turn's end, or by
                // work waiting: left out, as the engine drops it.
                let state = lock(&shared.state);
                if ended != Some(state.cancellers) || !state.queue.is_empty() || state.ended {
                    continue;
                }
            }
            shared.write(&recording.line(i, arrived.as_ref()));
            if shared.failed() {
                return;
            }
            if matches!(
                event.name.as_deref(),
                Some("agent_finished" | "turn_failed" | "agent_aborted")
            ) {
                ended = Some(lock(&shared.state).cancellers);
            }
            last = Some((Instant::now(), event.t_us));
        }
    }

    /// Command `c`'s match, once it has come (`wait`: until then, or the
    /// end of input); `None` if it never came.
    fn arrived<W: Write>(&self, c: u64, wait: bool, shared: &Shared<W>) -> Option<Arrived> {
        let mut state = lock(&shared.state);
        while wait && !state.ended && !state.arrived.contains_key(&c) {
            state = shared
                .changed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
        state.arrived.get(&c).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A recording, from its lines: `>` a command, `<` an event.
    fn recording(lines: &[&str]) -> String {
        let mut log = String::new();
        for line in lines {
            let (dir, line) = match line.split_at(1) {
                (">", line) => ("command", line),
                (_, line) => ("event", line),
            };
            log += &format!(
                "{{\"dir\":\"{dir}\",\"line\":{}}}\n",
                serde_json::to_string(line).unwrap()
            );
        }
        log
    }

    fn replay(recorded: &[&str], input: &[&str]) -> (Vec<String>, Vec<String>) {
        let notes = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&notes);
        let replay = Replay::read(recording(recorded).as_bytes())
            .unwrap()
            .notes(move |note| kept.lock().unwrap().push(note.to_owned()));
        let input: String = input.iter().map(|l| format!("{l}\n")).collect();
        let mut out = Vec::new();
        replay.serve(input.as_bytes(), &mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        let notes = notes.lock().unwrap().clone();
        (out.lines().map(str::to_owned).collect(), notes)
    }

    const SESSION: &[&str] = &[
        r#"<{"event":"session_started","session_id":"s","resumed":false}"#,
        r#">{"command":"prompt","content":"go"}"#,
        r#"<{"event":"agent_step","step":1}"#,
        r#"<{"event":"approval_requested","id":"a-7","tool_name":"shell","detail":"ls","body":null}"#,
        r#">{"command":"jobs_snapshot","request_id":"j1"}"#,
        r#"<{"event":"jobs_snapshot","request_id":"j1","jobs":[]}"#,
        r#">{"command":"approval","id":"a-7","allow":false}"#,
        r#"<{"event":"approval_resolved","id":"a-7","outcome":"rejected"}"#,
        r#"<{"event":"agent_finished","answer":"no"}"#,
        r#">{"command":"nap"}"#,
        r#"<{"event":"command_error","error":"unknown command: nap"}"#,
    ];

    #[test]
    fn each_command_gets_what_its_match_got() {
        let (out, notes) = replay(
            SESSION,
            &[
                r#"{"command":"prompt","content":"go"}"#,
                r#"{"command":"approval","id":"a-7","allow":false}"#,
                r#"{"command":"goal","action":"set","text":" "}"#,
                r#"{"command":"jobs_snapshot","request_id":"j2"}"#,
                r#"{"command":"nope"}"#,
            ],
        );
        // The turn waits for the approval; the request is answered when it
        // comes, with its own id; the refused line was never sent.
        let mut turn = out.clone();
        turn.retain(|l| !l.contains("jobs_snapshot") && !l.contains("command_error"));
        assert_eq!(
            turn,
            [SESSION[0], SESSION[2], SESSION[3], SESSION[7], SESSION[8]].map(|l| &l[1..])
        );
        assert!(
            out.contains(&r#"{"event":"jobs_snapshot","request_id":"j2","jobs":[]}"#.to_owned())
        );
        // The first refused line gets the recorded refusal; the second,
        // never recorded, the mock engine's own.
        let errors: Vec<&String> = out.iter().filter(|l| l.contains("command_error")).collect();
        assert_eq!(
            errors,
            [
                &SESSION[10][1..],
                r#"{"event":"command_error","error":"unknown command: nope"}"#
            ]
        );
        assert_eq!(
            notes,
            ["command line 5 (refused): not in the recording; answered as the mock engine"]
        );
    }

    #[test]
    fn an_event_that_waits_for_a_command_never_read_is_left_out() {
        let (out, notes) = replay(SESSION, &[r#"{"command":"prompt","content":"go"}"#]);
        assert_eq!(
            out,
            [SESSION[0], SESSION[2], SESSION[3], SESSION[8]].map(|l| &l[1..])
        );
        assert!(notes.is_empty());
    }

    #[test]
    fn a_member_is_set_in_its_place_and_the_rest_kept_as_written() {
        let set = |line: &str, value| {
            String::from_utf8(with_member(line.as_bytes(), "request_id", value).unwrap()).unwrap()
        };
        assert_eq!(
            set(
                r#"{"event":"jobs_snapshot","request_id":"a","jobs":[ 1, {"request_id":"a"} ]}"#,
                Some("b\"")
            ),
            r#"{"event":"jobs_snapshot","request_id":"b\"","jobs":[ 1, {"request_id":"a"} ]}"#
        );
        assert_eq!(
            set(r#"{"event":"steer_dropped","request_id":"a"}"#, None),
            r#"{"event":"steer_dropped"}"#
        );
        assert_eq!(
            set(r#"{"event":"x"}"#, Some("b")),
            r#"{"event":"x","request_id":"b"}"#
        );
        assert_eq!(set(r#"{}"#, None), "{}");
        assert!(with_member(b"[1]", "request_id", None).is_none());
    }
}
