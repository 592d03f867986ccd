//! The mock engine: `serve-command mock-engine` in process (what it
//! answers, and why, is on [`MockEngine`]).

use super::session::line_error;
use crate::conversation::{
    Compacted, Decision, Engine, EngineLoop, Prediction, Question, RunningCompaction, RunningTurn,
    WorkError,
};
use crate::v2::{Event, PredictionOutcome, ReadError, Usage};
use serde_json::Value;
use std::collections::VecDeque;
use std::fmt;
use std::io::{self, BufRead, Write};
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

/// A deterministic engine with no model: answers every command on a
/// controller's stream with the events `openseek serve` writes for it,
/// with scripted turns in place of a model ([`MockEngine::with_script`]).
///
/// It is an engine on the crate's serve loop,
/// [`EngineLoop`](crate::v2::serve::EngineLoop) [in
/// order](crate::v2::serve::EngineLoop::in_order): the loop answers the
/// commands as `openseek serve` does, and the script runs the turns. The
/// same input (and script) gives the same bytes out: nothing depends on a
/// clock, on randomness or on timing, because the loop reads the next
/// command only once a turn has run to its end, or to the approval
/// question it waits on; what arrives meanwhile is ordered by the input
/// alone. At a pace ([`MockEngine::delay`]) it reads on while a turn
/// runs, as an engine around a model does (see "A pace" below).
///
/// # What it answers, and where that comes from
///
/// The refusals are the crate's, never re-implemented: a line the reader
/// refuses gets its `command_error` (and after a line that is not JSON, or
/// too long, or a failed read, reading ends, as upstream's reader stops);
/// a command the serve policy declines gets
/// [`Command::serve_refusal_event_line`](crate::v2::Command::serve_refusal_event_line).
/// Both are written at once, even while a turn waits.
///
/// The commands follow upstream's serve loop
/// (`internal/openseek/serve/loop.mbt`; docs/PROTOCOL.md, "The engine
/// loop") for an engine with no background jobs and no durable session:
///
/// | command | idle | while a turn waits for an approval (at a pace, also while it runs: below) |
/// | --- | --- | --- |
/// | `prompt` | runs the next scripted turn | queued; runs when the turn ends |
/// | `steer` prompt | `steer_dropped` (no turn to land in) | queued into the turn: `steer_applied` when it resumes, `steer_dropped` if it is cancelled |
/// | `steer` command | `steer_applied` (kind `command`) | queued into the turn: `steer_applied` when it resumes or ends |
/// | `goal` set / clear | `goal_updated` (`goal` or `null`) | queued into the turn: `goal_updated` when it resumes or ends; behind a queued prompt or `compact`, after that work |
/// | `approval` | nothing (no question stands) | the turn's `id`: `approval_resolved` (`allowed_once` / `rejected`), the turn resumes; another id: nothing |
/// | `cancel` | nothing (no work to stop) | `approval_resolved` `cancelled`, `agent_aborted` `interrupted`, the queued steers and goals settled |
/// | `compact` | `compaction_started`, `compaction_finished` | queued; runs when the turn ends |
/// | `jobs_snapshot` | `jobs_snapshot` with its `request_id`, no jobs | the same, at once |
/// | `job_stop` | `job_stop_result` `not_found` | the same, at once |
/// | `predict`, `cancel_prediction` (gone upstream at fdf10827) | `command_error` `unknown command: ...`, as any unknown command | the same, at once |
///
/// After a turn that ended `agent_finished`, with nothing else running or
/// queued and the input still open, the loop asks the engine for its own
/// prediction of the user's next message, as upstream's loop does
/// (fdf10827). The mock predicts only when told what to
/// ([`MockEngine::predict`], or a turn's `"predict"` in the script):
/// then `prediction_result` `completed` with that text and fixed counts
/// (`input_tokens` 8, `output_tokens` 2), its `source_sequence` the number
/// of turns that finished `agent_finished` so far, counted from 1 over the
/// process (the mock keeps no event numbering: the count tells one
/// prediction from the next, which is all a controller uses it for). A
/// prompt, steer, `compact`, `cancel`, goal or the end of input cancels
/// the prediction, silently. Without a delay it is written at once, right
/// after `agent_finished`, before the next command is read; at a pace, on
/// a thread of its own, with no pause either, so a command sent right
/// after the turn's end most likely crosses it on the pipes.
///
/// Chosen where upstream could not be read: the order of a turn's events
/// (`agent_step`, the reasoning and assistant deltas, `reasoning_message`,
/// `assistant_message`, `usage`, `agent_finished`); a turn that asks for
/// an approval as two steps (`agent_step` 1, `approval_requested`, ...,
/// `approval_resolved`, `tool_result`, `agent_step` 2, ...); the ids it
/// mints (`approval-N`, `call-N`, counted from 1 over the process); the
/// default usage (the prompt's words as prompt tokens, one completion
/// token per delta); compaction's sequences (0 to the number of turns run)
/// and summary; the prediction's counts and `source_sequence`. A goal's `auto` is recorded
/// but does not continue turns on its own (upstream's auto-continue needs
/// a model to judge the goal). At the end of input, a turn still waiting
/// has its question withdrawn (`approval_resolved` `cancelled`, the tool
/// failing) and finishes, and queued prompts still run, as upstream lets
/// active work finish before it exits.
///
/// # A pace
///
/// [`MockEngine::delay`] puts its delay between every two events of a
/// turn (scripted or `events`), and between `compaction_started` and
/// `compaction_finished`; the loop reads on meanwhile, so a controller's
/// test can send a command that arrives in the middle of a turn:
///
/// | sent mid-turn | what the paced turn does |
/// | --- | --- |
/// | `steer` (either kind), `goal` | lands at the turn's next step boundary, the pause before its next event: `agent_step` N+1 (N the last step it wrote), then `steer_applied` / `goal_updated`, then the rest of the turn. In the pause before the turn's end (`agent_finished`, `turn_failed`) there is no step left: it is settled when the turn ends (a prompt steer dropped, as upstream drops a steer its turn ends before taking; the rest applied) |
/// | `cancel` | cuts the pause short: `agent_aborted` `interrupted` ends the turn (`compaction_failed` `cancelled` a compaction) |
/// | `jobs_snapshot`, `job_stop`, a refused line | answered at once, among the turn's events |
/// | `prompt`, `compact` | queued; runs when the turn ends, as without a delay |
///
/// Where a turn asks for an approval, its tool result follows the answer
/// with no step between, and the steers sent while it waited land when it
/// resumes (`steer_applied`, then its next `agent_step`), as without a
/// delay; an `approval` answers only a question already asked. With
/// nothing but prompts and `compact` sent while turns run, the same input
/// and script give the same bytes at every delay. `job_stop` is answered
/// on a thread of its own, as upstream's is, and so is the prediction
/// made: at a pace, where their lines fall among other events (and
/// whether a prompt sent right after a turn's end cancels its prediction)
/// depends on timing.
///
/// # In a controller's test
///
/// Run it in a thread of a controller's test, over a pipe or a socket, or
/// over bytes in memory, as here:
///
/// ```
/// use serve_command::v2::{Command, Event, EventReader};
/// use serve_command::workbench::MockEngine;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let engine = MockEngine::with_script(r#"{"deltas":["Hel","lo"]}"#)?;
/// let mut input = Vec::new();
/// Command::prompt("hi").write_line(&mut input)?;
/// input.extend_from_slice(b"{\"command\":\"goal\",\"action\":\"set\",\"text\":\" \"}\n");
/// let mut output = Vec::new();
/// let stopped = engine.serve(&input[..], &mut output)?;
/// assert!(stopped.is_none()); // it read to the end of its input
///
/// let events: Vec<Event> = EventReader::new(&output[..]).collect::<Result<_, _>>()?;
/// assert_eq!(events[1], Event::assistant_delta("Hel"));
/// assert_eq!(events.last().unwrap().to_line(), "{\"event\":\"command_error\",\"error\":\"goal text must not be blank\"}\n");
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug, Default)]
pub struct MockEngine {
    script: Script,
    delay: Duration,
    /// What it predicts after a finished idle turn, if anything.
    predict: Option<String>,
}

impl MockEngine {
    /// An engine whose every turn answers `You asked: <the prompt's text>`,
    /// in two deltas.
    #[must_use]
    pub fn new() -> MockEngine {
        MockEngine::default()
    }

    /// An engine whose Nth prompt runs the Nth turn of `script`, JSON
    /// Lines with one object per turn (blank lines skipped; prompts past
    /// the last turn run [`MockEngine::new`]'s). Every key is optional:
    ///
    /// | key | the turn |
    /// | --- | --- |
    /// | `"deltas":["Hel","lo"]` | the answer's deltas; the answer is their concatenation |
    /// | `"answer":"Hello"` | the answer, in one delta (with `deltas`, the message may differ) |
    /// | `"reasoning":["Let me ","look"]` | reasoning deltas, then the `reasoning_message` |
    /// | `"usage":{...}` | the `usage` event's five counts (the default: the prompt's words, one token per delta) |
    /// | `"fail":"provider error"` | ends with `turn_failed` instead of an answer |
    /// | `"predict":"Thanks!"` | once it finished idle, predicts this next message (in place of [`MockEngine::predict`]'s) |
    /// | `"approval":{"tool_name":..,"detail":..,"body":..}` | asks first (`approval_requested`, id `approval-N`) and waits for its `approval` command |
    /// | `"events":[{"event":"agent_step","step":1}, ...]` | exactly these events, each read as a controller reads it and written as the crate writes it (no other key with it) |
    ///
    /// # Errors
    ///
    /// A line that is not such an object, with the line's number and why.
    pub fn with_script(script: &str) -> Result<MockEngine, ScriptError> {
        Ok(MockEngine {
            script: Script::parse(script)?,
            delay: Duration::ZERO,
            predict: None,
        })
    }

    /// The same engine at a pace: `delay` between every two events of a
    /// turn (and between `compaction_started` and `compaction_finished`),
    /// while it reads on, so that a controller's test can land a steer, a
    /// `cancel` or a request in the middle of a turn (see "A pace" above).
    /// [`Duration::ZERO`], the default, is no pace: each turn runs to its
    /// end (or its approval question) before the next command is read.
    #[must_use]
    pub fn delay(mut self, delay: Duration) -> MockEngine {
        self.delay = delay;
        self
    }

    /// The same engine, predicting `text` as the user's next message after
    /// every turn that finishes idle (`prediction_result` `completed`,
    /// 8 input and 2 output tokens; an empty `text` predicts `null`, no
    /// suggestion). A script's turn with its own `"predict"` predicts that
    /// instead. Without it (the default) and no `"predict"`, the engine
    /// never predicts, as an engine with no model to predict with.
    #[must_use]
    pub fn predict(mut self, text: impl Into<String>) -> MockEngine {
        self.predict = Some(text.into());
        self
    }

    /// Reads commands from `input` and writes their events to `output`,
    /// flushed after each line read, until the end of input, or a line
    /// after which an engine reads no more (not JSON, or a failed read):
    /// that line's error, already answered on `output`, is returned. At the
    /// end of input a turn still waiting for its approval has its question
    /// withdrawn (`approval_resolved` `cancelled`) and finishes, and the
    /// prompts queued behind it run.
    ///
    /// # Errors
    ///
    /// A failed write to `output`.
    pub fn serve(
        self,
        input: impl BufRead + Send,
        output: impl Write + Send,
    ) -> io::Result<Option<ReadError>> {
        let engine = Scripted::new(self.script, self.delay).predicting(self.predict);
        serve(input, output, engine)
    }
}

line_error!(
    /// A script [`MockEngine::with_script`] cannot read: which line, and why.
    ScriptError,
    "script",
    "Why the line is not a turn, for a person: `unknown key \"nope\" (a turn has ...)`."
);

/// Serves `input` to `out` with `script`'s turns, on the crate's serve
/// loop: in order with no delay (so the same input gives the same bytes),
/// reading on while a paced turn runs otherwise; returns why it stopped
/// early, if it did (the reader's error).
fn serve(
    input: impl BufRead + Send,
    out: impl Write + Send,
    scripted: Scripted,
) -> io::Result<Option<ReadError>> {
    let delay = scripted.delay;
    let engine = EngineLoop::new(scripted);
    if delay.is_zero() {
        engine.in_order().serve(input, out)
    } else {
        engine.serve(input, out)
    }
}

/// The turns a script gives, in order.
#[derive(Clone, Debug, Default)]
struct Script {
    turns: VecDeque<Turn>,
}

/// One turn of the script.
#[derive(Clone, Debug, Default)]
struct Turn {
    reasoning: Vec<String>,
    deltas: Option<Vec<String>>,
    answer: Option<String>,
    usage: Option<Usage>,
    fail: Option<String>,
    /// What it predicts once it finished idle.
    predict: Option<String>,
    approval: Option<Ask>,
    /// Literal events: the whole turn.
    events: Option<Vec<Event>>,
}

/// What a turn asks approval for.
#[derive(Clone, Debug)]
struct Ask {
    tool_name: String,
    detail: String,
    body: Option<String>,
}

impl Script {
    /// Parses the script's text.
    fn parse(text: &str) -> Result<Script, ScriptError> {
        let mut turns = VecDeque::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let turn = Turn::parse(line).map_err(|reason| ScriptError {
                line: i + 1,
                reason,
            })?;
            turns.push_back(turn);
        }
        Ok(Script { turns })
    }
}

impl Turn {
    fn parse(line: &str) -> Result<Turn, String> {
        let value: Value = serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
        let Value::Object(map) = value else {
            return Err("a turn is a JSON object".to_owned());
        };
        let mut turn = Turn::default();
        for (key, value) in &map {
            match key.as_str() {
                "reasoning" => turn.reasoning = strings(key, value)?,
                "deltas" => turn.deltas = Some(strings(key, value)?),
                "answer" => turn.answer = Some(string(key, value)?),
                "fail" => turn.fail = Some(string(key, value)?),
                "predict" => turn.predict = Some(string(key, value)?),
                "usage" => {
                    let event = serde_json::json!({"event": "usage", "usage": value});
                    match Event::from_json(&event) {
                        Ok(Event::Usage { usage, .. }) => turn.usage = Some(usage),
                        _ => {
                            return Err(
                                "\"usage\" is an object of the five counts, integers at least 0 \
                                 (prompt_tokens, completion_tokens, total_tokens, \
                                 prompt_cache_hit_tokens, prompt_cache_miss_tokens)"
                                    .to_owned(),
                            )
                        }
                    }
                }
                "approval" => turn.approval = Some(Ask::parse(value)?),
                "events" => {
                    let Value::Array(items) = value else {
                        return Err("\"events\" is an array of event objects".to_owned());
                    };
                    let mut events = Vec::with_capacity(items.len());
                    for (n, item) in items.iter().enumerate() {
                        let event = Event::from_json(item)
                            .map_err(|e| format!("event {} of \"events\": {e}", n + 1))?;
                        events.push(event);
                    }
                    turn.events = Some(events);
                }
                other => {
                    return Err(format!(
                        "unknown key \"{other}\" (a turn has \"deltas\", \"answer\", \
                         \"reasoning\", \"usage\", \"fail\", \"predict\", \"approval\" or \
                         \"events\")"
                    ))
                }
            }
        }
        if turn.events.is_some() && map.keys().any(|k| k != "events" && k != "predict") {
            return Err(
                "\"events\" is the whole turn: no other key goes with it but \"predict\""
                    .to_owned(),
            );
        }
        Ok(turn)
    }
}

impl Ask {
    fn parse(value: &Value) -> Result<Ask, String> {
        let Value::Object(map) = value else {
            return Err(
                "\"approval\" is an object (\"tool_name\", \"detail\", \"body\")".to_owned(),
            );
        };
        let mut ask = Ask {
            tool_name: "shell".to_owned(),
            detail: "run a command outside the sandbox".to_owned(),
            body: None,
        };
        for (key, value) in map {
            let key_in = format!("approval.{key}");
            match key.as_str() {
                "tool_name" => ask.tool_name = string(&key_in, value)?,
                "detail" => ask.detail = string(&key_in, value)?,
                "body" => ask.body = Some(string(&key_in, value)?),
                other => {
                    return Err(format!(
                        "unknown key \"{other}\" in \"approval\" (it has \"tool_name\", \
                         \"detail\" and \"body\")"
                    ))
                }
            }
        }
        Ok(ask)
    }
}

fn string(key: &str, value: &Value) -> Result<String, String> {
    match value {
        Value::String(s) => Ok(s.clone()),
        _ => Err(format!("\"{key}\" is a string")),
    }
}

fn strings(key: &str, value: &Value) -> Result<Vec<String>, String> {
    let err = || format!("\"{key}\" is an array of strings");
    let Value::Array(items) = value else {
        return Err(err());
    };
    items
        .iter()
        .map(|item| item.as_str().map(str::to_owned).ok_or_else(err))
        .collect()
}

/// The script as an [`Engine`]: the loop answers the commands; the script
/// runs the turns and compactions.
struct Scripted {
    turns: Mutex<VecDeque<Turn>>,
    /// Turns run so far (compaction's `to_sequence`).
    turns_run: AtomicI32,
    /// Approval questions asked so far (`call-N` matches `approval-N`).
    asked: AtomicU32,
    /// The pause between two events of a turn (zero: none).
    delay: Duration,
    /// What it predicts after every turn finished idle, unless the turn
    /// says.
    predict: Option<String>,
    /// Turns finished (`agent_finished`) so far: a prediction's
    /// `source_sequence`.
    finished: AtomicI32,
    /// What the turn that finished last predicts (its own, or `predict`).
    next: Mutex<Option<String>>,
}

impl Scripted {
    fn new(script: Script, delay: Duration) -> Scripted {
        Scripted {
            turns: Mutex::new(script.turns),
            turns_run: AtomicI32::new(0),
            asked: AtomicU32::new(0),
            delay,
            predict: None,
            finished: AtomicI32::new(0),
            next: Mutex::new(None),
        }
    }

    fn predicting(mut self, text: Option<String>) -> Scripted {
        self.predict = text;
        self
    }

    /// A turn finished with its answer: counted, and what it predicts kept.
    fn finished(&self, predict: Option<String>) {
        self.finished.fetch_add(1, Ordering::Relaxed);
        *self.next.lock().unwrap_or_else(PoisonError::into_inner) =
            predict.or_else(|| self.predict.clone());
    }
}

/// A turn's events at the engine's pace: the first at once, each later
/// one after a pause of the delay, which a cancel cuts short (the turn
/// then ends, `agent_aborted`). A pause before one of the turn's own
/// events is a step boundary: the steers and goals that landed meanwhile
/// are applied there, `agent_step` N+1 (N the turn's last step) then their
/// `steer_applied` / `goal_updated`. The pause before the turn's end is
/// no step boundary: what lands then is settled when the turn ends, as
/// upstream drops a steer its turn ends before taking. With no delay, no pause and no
/// boundary: the events of a turn in order.
struct Paced<'t, 'a> {
    running: &'t mut RunningTurn<'a>,
    delay: Duration,
    /// The last `agent_step` written.
    step: i32,
    /// Whether the turn has written its first event.
    started: bool,
}

/// Why a paced turn stopped between two events.
#[derive(Debug)]
struct Cancelled;

impl fmt::Display for Cancelled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("cancelled")
    }
}

impl std::error::Error for Cancelled {}

impl<'a> Paced<'_, 'a> {
    fn new<'t>(running: &'t mut RunningTurn<'a>, delay: Duration) -> Paced<'t, 'a> {
        Paced {
            running,
            delay,
            step: 0,
            started: false,
        }
    }

    /// The pause before the turn's next event (none before its first);
    /// at a step `boundary`, the steers waiting land.
    fn pause(&mut self, boundary: bool) -> Result<(), WorkError> {
        if self.delay.is_zero() || !std::mem::replace(&mut self.started, true) {
            return Ok(());
        }
        if self.running.wait_cancelled(self.delay) {
            return Err(Box::new(Cancelled));
        }
        if boundary && self.running.steers_waiting() {
            self.write(&Event::agent_step(self.step.saturating_add(1)))?;
            self.running.steers()?;
        }
        Ok(())
    }

    /// Writes the turn's next event after its pause, a step boundary
    /// unless the event ends the turn.
    fn emit(&mut self, event: &Event) -> Result<(), WorkError> {
        let boundary = !matches!(
            event,
            Event::AgentFinished { .. } | Event::TurnFailed { .. } | Event::AgentAborted { .. }
        );
        self.pause(boundary)?;
        Ok(self.write(event)?)
    }

    /// Writes `event` now, counting its step.
    fn write(&mut self, event: &Event) -> io::Result<()> {
        if let Event::AgentStep { step, .. } = event {
            self.step = *step;
        }
        self.running.emit(event)
    }
}

impl Engine for Scripted {
    fn turn(&self, running: &mut RunningTurn<'_>) -> Result<String, WorkError> {
        self.turns_run.fetch_add(1, Ordering::Relaxed);
        let turn = self
            .turns
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop_front()
            .unwrap_or_default();
        let delay = self.delay;
        if let Some(events) = &turn.events {
            running.write_literally();
            if matches!(events.last(), Some(Event::AgentFinished { .. })) {
                self.finished(turn.predict.clone());
            }
            let mut paced = Paced::new(running, delay);
            for event in events {
                if let Err(error) = paced.emit(event) {
                    if !error.is::<Cancelled>() {
                        return Err(error);
                    }
                    // The loop writes no end for a literal turn.
                    running.emit(&Event::agent_aborted("interrupted"))?;
                    break;
                }
            }
            return Ok(String::new());
        }
        let text = running.content().to_text();
        let (deltas, answer) = match (turn.deltas, turn.answer) {
            (Some(deltas), Some(answer)) => (deltas, answer),
            (Some(deltas), None) => {
                let answer = deltas.concat();
                (deltas, answer)
            }
            (None, Some(answer)) => (vec![answer.clone()], answer),
            (None, None) => (
                vec!["You asked: ".to_owned(), text.clone()],
                format!("You asked: {text}"),
            ),
        };
        let mut paced = Paced::new(running, delay);
        paced.emit(&Event::agent_step(1))?;
        for piece in &turn.reasoning {
            paced.emit(&Event::reasoning_delta(piece.as_str()))?;
        }
        let mut reasoning = (!turn.reasoning.is_empty()).then(|| turn.reasoning.concat());
        if let Some(ask) = turn.approval {
            if let Some(reasoning) = reasoning.take() {
                paced.emit(&Event::reasoning_message(reasoning))?;
            }
            let n = self.asked.fetch_add(1, Ordering::Relaxed) + 1;
            let call_id = format!("call-{n}");
            let mut question = Question::new(ask.tool_name.as_str(), ask.detail.as_str());
            question.body = ask.body;
            let tool = ask.tool_name;
            paced.pause(true)?;
            let decision = paced.running.ask(question)?;
            // The tool's result follows its approval: no step between.
            paced.pause(false)?;
            paced.write(&match decision {
                Decision::Allowed => Event::tool_result(call_id, tool, "ok", None),
                Decision::Rejected => {
                    Event::tool_error(call_id, tool, "the user rejected this action", None)
                }
                Decision::Withdrawn => Event::tool_error(
                    call_id,
                    tool,
                    "no answer: the controller closed its input",
                    None,
                ),
                // Cancelled: the loop ends the turn `agent_aborted`.
                _ => return Err("cancelled".into()),
            })?;
            // The inputs sent while it waited land at the next step.
            paced.pause(false)?;
            paced.running.steers()?;
            paced.write(&Event::agent_step(paced.step.saturating_add(1)))?;
        }
        if let Some(error) = turn.fail {
            paced.pause(false)?;
            return Err(error.into());
        }
        for delta in &deltas {
            paced.emit(&Event::assistant_delta(delta.as_str()))?;
        }
        if let Some(reasoning) = reasoning {
            paced.emit(&Event::reasoning_message(reasoning))?;
        }
        paced.emit(&Event::assistant_message(answer.as_str()))?;
        let usage = turn.usage.unwrap_or_else(|| {
            let prompt = i32::try_from(text.split_whitespace().count())
                .unwrap_or(i32::MAX)
                .max(1);
            let completion = i32::try_from(deltas.len())
                .unwrap_or(i32::MAX)
                .saturating_add(i32::try_from(turn.reasoning.len()).unwrap_or(i32::MAX));
            Usage::new(
                prompt,
                completion,
                prompt.saturating_add(completion),
                0,
                prompt,
            )
        });
        paced.emit(&Event::usage(usage))?;
        // The pause before the loop writes `agent_finished`.
        paced.pause(false)?;
        self.finished(turn.predict);
        Ok(answer)
    }

    /// Predicts when told what to: the turns finished so far, from 1, as
    /// the source sequence (the mock numbers no events).
    fn prediction_source(&self) -> Option<i32> {
        self.next
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
            .then(|| self.finished.load(Ordering::Relaxed))
    }

    fn predict(&self, _: &Prediction) -> PredictionOutcome {
        let text = self
            .next
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        match text {
            Some(text) => PredictionOutcome::Completed {
                text: (!text.is_empty()).then_some(text),
                input_tokens: 8,
                output_tokens: 2,
            },
            None => PredictionOutcome::Skipped,
        }
    }

    fn compact(&self, compaction: &RunningCompaction<'_>) -> Result<Compacted, WorkError> {
        let to = self.turns_run.load(Ordering::Relaxed);
        if !self.delay.is_zero() {
            compaction.started(0, to)?;
            if compaction.wait_cancelled(self.delay) {
                return Err(Box::new(Cancelled));
            }
        }
        let summary = format!(
            "mock summary of {to} turn{}",
            if to == 1 { "" } else { "s" }
        );
        Ok(Compacted::new(0, to, summary))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(input: &str, script: &str) -> String {
        let mut out = Vec::new();
        serve(
            input.as_bytes(),
            &mut out,
            Scripted::new(Script::parse(script).unwrap(), Duration::ZERO),
        )
        .unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_script_error_names_its_line_and_why() {
        let err = |text: &str| Script::parse(text).err().unwrap().to_string();
        assert_eq!(err("\n{\"nope\":1}"), "script line 2: unknown key \"nope\" (a turn has \"deltas\", \"answer\", \"reasoning\", \"usage\", \"fail\", \"predict\", \"approval\" or \"events\")");
        assert_eq!(err("[]"), "script line 1: a turn is a JSON object");
        assert_eq!(
            err("{\"deltas\":[1]}"),
            "script line 1: \"deltas\" is an array of strings"
        );
        assert_eq!(
            err("{\"events\":[{\"event\":\"agent_step\"}]}"),
            format!(
                "script line 1: event 1 of \"events\": {}",
                Event::from_json(&serde_json::json!({"event":"agent_step"})).unwrap_err()
            )
        );
        assert_eq!(
            err("{\"events\":[],\"predict\":\"x\",\"answer\":\"x\"}"),
            "script line 1: \"events\" is the whole turn: no other key goes with it but \"predict\""
        );
    }

    /// `steers_waiting` says what a boundary would take, takes nothing,
    /// and says nothing once the turn has written its own end.
    #[test]
    fn steers_waiting_says_whether_a_step_boundary_would_apply_anything() {
        struct Probe(Mutex<Vec<bool>>);
        impl Engine for Probe {
            fn turn(&self, running: &mut RunningTurn<'_>) -> Result<String, WorkError> {
                let mut seen = vec![running.steers_waiting()];
                running.emit(&Event::agent_step(1))?;
                running.ask(Question::new("shell", "ls"))?;
                seen.push(running.steers_waiting());
                seen.push(running.steers_waiting());
                running.emit(&Event::agent_finished("done"))?;
                seen.push(running.steers_waiting());
                *self.0.lock().unwrap() = seen;
                Ok(String::new())
            }
        }
        let probe = Probe(Mutex::default());
        let mut out = Vec::new();
        let input = concat!(
            "{\"command\":\"prompt\",\"content\":\"go\"}\n",
            "{\"command\":\"steer\",\"content\":\"faster\"}\n",
            "{\"command\":\"approval\",\"id\":\"approval-1\",\"allow\":true}\n",
        );
        EngineLoop::new(&probe)
            .in_order()
            .serve(input.as_bytes(), &mut out)
            .unwrap();
        assert_eq!(*probe.0.lock().unwrap(), [false, true, true, false]);
        // Left for the loop, which drops it at the turn's end.
        assert!(String::from_utf8(out).unwrap().ends_with(concat!(
            "{\"event\":\"agent_finished\",\"answer\":\"done\"}\n",
            "{\"event\":\"steer_dropped\",\"content\":\"faster\"}\n",
        )));
    }

    /// Told what to predict, it predicts after each turn that finished
    /// idle (the count of finished turns its source sequence), never after
    /// a failed one or one with a prompt queued behind it.
    #[test]
    fn it_predicts_after_a_turn_that_finished_idle() {
        let mut out = Vec::new();
        let input = concat!(
            "{\"command\":\"prompt\",\"content\":\"a\"}\n",
            "{\"command\":\"prompt\",\"content\":\"b\"}\n",
            "{\"command\":\"prompt\",\"content\":\"c\"}\n",
        );
        let script =
            "{\"answer\":\"1\",\"predict\":\"\"}\n{\"fail\":\"boom\"}\n{\"answer\":\"3\"}\n";
        MockEngine::with_script(script)
            .unwrap()
            .predict("Thanks!")
            .serve(input.as_bytes(), &mut out)
            .unwrap();
        let predictions: Vec<_> = String::from_utf8(out)
            .unwrap()
            .lines()
            .filter(|l| {
                l.contains("prediction_result")
                    || l.contains("agent_finished")
                    || l.contains("turn_failed")
            })
            .map(str::to_owned)
            .collect();
        assert_eq!(
            predictions,
            [
                "{\"event\":\"agent_finished\",\"answer\":\"1\"}",
                "{\"event\":\"prediction_result\",\"source_sequence\":1,\"outcome\":{\"kind\":\"completed\",\"text\":null,\"input_tokens\":8,\"output_tokens\":2}}",
                "{\"event\":\"turn_failed\",\"error\":\"boom\"}",
                "{\"event\":\"agent_finished\",\"answer\":\"3\"}",
                "{\"event\":\"prediction_result\",\"source_sequence\":2,\"outcome\":{\"kind\":\"completed\",\"text\":\"Thanks!\",\"input_tokens\":8,\"output_tokens\":2}}",
            ]
        );
    }

    #[test]
    fn a_cancelled_turn_settles_what_was_queued_for_it() {
        let out = run(
            concat!(
                "{\"command\":\"prompt\",\"content\":\"go\"}\n",
                "{\"command\":\"steer\",\"content\":\"faster\",\"submission_id\":\"s1\"}\n",
                "{\"command\":\"steer\",\"kind\":\"command\",\"content\":\"/diff\"}\n",
                "{\"command\":\"goal\",\"action\":\"clear\"}\n",
                "{\"command\":\"compact\"}\n",
                "{\"command\":\"cancel\"}\n",
            ),
            "{\"approval\":{}}",
        );
        assert_eq!(
            out,
            concat!(
                "{\"event\":\"agent_step\",\"step\":1}\n",
                "{\"event\":\"approval_requested\",\"id\":\"approval-1\",\"tool_name\":\"shell\",\"detail\":\"run a command outside the sandbox\",\"body\":null}\n",
                "{\"event\":\"approval_resolved\",\"id\":\"approval-1\",\"outcome\":\"cancelled\"}\n",
                "{\"event\":\"agent_aborted\",\"reason\":\"interrupted\"}\n",
                "{\"event\":\"steer_dropped\",\"content\":\"faster\",\"submission_id\":\"s1\"}\n",
                "{\"event\":\"steer_applied\",\"kind\":\"command\",\"content\":\"/diff\"}\n",
                "{\"event\":\"goal_updated\",\"goal\":null}\n",
                "{\"event\":\"compaction_started\",\"from_sequence\":0,\"to_sequence\":1}\n",
                "{\"event\":\"compaction_finished\",\"from_sequence\":0,\"to_sequence\":1,\"summary\":\"mock summary of 1 turn\"}\n",
            )
        );
    }
}
