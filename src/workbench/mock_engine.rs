//! The mock engine: `serve-command mock-engine` in process (what it
//! answers, and why, is on [`MockEngine`]).

use crate::v2::serve::{
    Compacted, Decision, Engine, EngineLoop, Question, RunningCompaction, RunningTurn, WorkError,
};
use crate::v2::{Event, ReadError, Usage};
use serde_json::Value;
use std::collections::VecDeque;
use std::fmt;
use std::io::{self, BufRead, Write};
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};
use std::sync::{Mutex, PoisonError};

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
/// alone.
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
/// | command | idle | while a turn waits for an approval |
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
/// | `predict` | `prediction_result` `skipped` (no model to predict with) | the same, at once |
/// | `cancel_prediction` | nothing (the prediction was already answered) | nothing |
///
/// Chosen where upstream could not be read: the order of a turn's events
/// (`agent_step`, the reasoning and assistant deltas, `reasoning_message`,
/// `assistant_message`, `usage`, `agent_finished`); a turn that asks for
/// an approval as two steps (`agent_step` 1, `approval_requested`, ...,
/// `approval_resolved`, `tool_result`, `agent_step` 2, ...); the ids it
/// mints (`approval-N`, `call-N`, counted from 1 over the process); the
/// default usage (the prompt's words as prompt tokens, one completion
/// token per delta); compaction's sequences (0 to the number of turns run)
/// and summary; `predict` answered `skipped`. A goal's `auto` is recorded
/// but does not continue turns on its own (upstream's auto-continue needs
/// a model to judge the goal). At the end of input, a turn still waiting
/// has its question withdrawn (`approval_resolved` `cancelled`, the tool
/// failing) and finishes, and queued prompts still run, as upstream lets
/// active work finish before it exits.
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
    /// | `"approval":{"tool_name":..,"detail":..,"body":..}` | asks first (`approval_requested`, id `approval-N`) and waits for its `approval` command |
    /// | `"events":[{"event":"agent_step","step":1}, ...]` | exactly these events, each read as a controller reads it and written as the crate writes it (no other key with it) |
    ///
    /// # Errors
    ///
    /// A line that is not such an object, with the line's number and why.
    pub fn with_script(script: &str) -> Result<MockEngine, ScriptError> {
        Ok(MockEngine {
            script: Script::parse(script)?,
        })
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
        serve(input, output, self.script)
    }
}

/// A script [`MockEngine::with_script`] cannot read: which line, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScriptError {
    line: usize,
    reason: String,
}

impl ScriptError {
    /// The script's line, counted from 1.
    #[must_use]
    pub fn line(&self) -> usize {
        self.line
    }

    /// Why the line is not a turn, for a person: `unknown key "nope" (a
    /// turn has ...)`.
    #[must_use]
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl fmt::Display for ScriptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "script line {}: {}", self.line, self.reason)
    }
}

impl std::error::Error for ScriptError {}

/// Serves `input` to `out` with `script`'s turns, on the crate's serve
/// loop in order (so the same input gives the same bytes); returns why it
/// stopped early, if it did (the reader's error).
fn serve(
    input: impl BufRead + Send,
    out: impl Write + Send,
    script: Script,
) -> io::Result<Option<ReadError>> {
    EngineLoop::new(Scripted::new(script))
        .in_order()
        .serve(input, out)
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
                         \"reasoning\", \"usage\", \"fail\", \"approval\" or \"events\")"
                    ))
                }
            }
        }
        if turn.events.is_some() && map.len() > 1 {
            return Err("\"events\" is the whole turn: no other key goes with it".to_owned());
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
}

impl Scripted {
    fn new(script: Script) -> Scripted {
        Scripted {
            turns: Mutex::new(script.turns),
            turns_run: AtomicI32::new(0),
            asked: AtomicU32::new(0),
        }
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
        if let Some(events) = &turn.events {
            running.write_literally();
            for event in events {
                running.emit(event)?;
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
        running.emit(&Event::agent_step(1))?;
        for piece in &turn.reasoning {
            running.emit(&Event::reasoning_delta(piece.as_str()))?;
        }
        let mut reasoning = (!turn.reasoning.is_empty()).then(|| turn.reasoning.concat());
        if let Some(ask) = turn.approval {
            if let Some(reasoning) = reasoning.take() {
                running.emit(&Event::reasoning_message(reasoning))?;
            }
            let n = self.asked.fetch_add(1, Ordering::Relaxed) + 1;
            let call_id = format!("call-{n}");
            let mut question = Question::new(ask.tool_name.as_str(), ask.detail.as_str());
            question.body = ask.body;
            let tool = ask.tool_name;
            let decision = running.ask(question)?;
            running.emit(&match decision {
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
            running.steers()?;
            running.emit(&Event::agent_step(2))?;
        }
        if let Some(error) = turn.fail {
            return Err(error.into());
        }
        for delta in &deltas {
            running.emit(&Event::assistant_delta(delta.as_str()))?;
        }
        if let Some(reasoning) = reasoning {
            running.emit(&Event::reasoning_message(reasoning))?;
        }
        running.emit(&Event::assistant_message(answer.as_str()))?;
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
        running.emit(&Event::usage(usage))?;
        Ok(answer)
    }

    fn compact(&self, _: &RunningCompaction<'_>) -> Result<Compacted, WorkError> {
        let to = self.turns_run.load(Ordering::Relaxed);
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
        serve(input.as_bytes(), &mut out, Script::parse(script).unwrap()).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_script_error_names_its_line_and_why() {
        let err = |text: &str| Script::parse(text).err().unwrap().to_string();
        assert_eq!(err("\n{\"nope\":1}"), "script line 2: unknown key \"nope\" (a turn has \"deltas\", \"answer\", \"reasoning\", \"usage\", \"fail\", \"approval\" or \"events\")");
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
            err("{\"events\":[],\"answer\":\"x\"}"),
            "script line 1: \"events\" is the whole turn: no other key goes with it"
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
