//! A session: the command lines a controller sends, each at a point of the
//! conversation, and its file format (JSON Lines, by hand or by program).
//!
//! Points are anchored on what the model ([`Conversation`]) says of the
//! events, never on a count of deltas, which model text changes: a turn's
//! start or its k-th `agent_step`, the answer of an earlier command, the
//! end of its turn, the k-th question asked, or a pause.
//!
//! [`Conversation`]: crate::v2::serve::Conversation

use base64::Engine as _;
use serde_json::value::RawValue;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

/// The command lines of one session, in the order they are sent, each with
/// the point at which it is sent.
///
/// Its file is JSON Lines, one [`Step`] a line (blank lines and lines
/// beginning with `#` skipped):
///
/// ```text
/// # a steer that lands in the turn, then a cancel
/// {"send":{"command":"prompt","content":"Write a haiku"}}
/// {"after":{"step":1},"send":{"command":"steer","content":"shorter","submission_id":"s1"}}
/// {"after":{"answered":2},"send":{"command":"cancel"}}
/// {"after":{"asked":1},"approval":{"asked":1,"allow":true}}
/// {"line":"{not json"}
/// {"close":true}
/// ```
///
/// | key | the line |
/// | --- | --- |
/// | `"send":{...}` | this JSON, written exactly as it stands in the file |
/// | `"line":"..."` | this text, written as it is (a line that is not JSON, a CRLF line) |
/// | `"line_base64":"..."` | these bytes (a line that is not UTF-8) |
/// | `"approval":{"asked":K,"allow":B}` | an `approval` command answering the K-th question the engine asked (`approval_requested`), with the `id` the engine gave it; sent after that question unless `after` says otherwise |
/// | `"close":true` | closes the engine's stdin here (otherwise the runner closes it once the session is sent and the engine owes nothing) |
///
/// and `"after"`, when the line is sent (at once when absent), one key:
///
/// | `after` | the line is sent |
/// | --- | --- |
/// | `{"started":N}` | once command N's turn wrote its first event |
/// | `{"step":K}` | once the turn of the last prompt sent wrote its K-th `agent_step` (`{"step":K,"turn":N}`: command N's) |
/// | `{"seen":K,"turn":N}` | once command N's turn wrote K events that are not deltas (its steps, messages, usage, the answers it carries, its end); with `"delta":true`, and then a delta (or a later event): mid-stream. Deltas are model text, never counted, so the point holds at any pace and with other text |
/// | `{"answered":N}` | once an event answered command N (a prompt or `compact`: once its work ended) |
/// | `{"ended":N}` | once command N's turn (or compaction) ended |
/// | `{"asked":K}` | once the engine asked its K-th approval question |
/// | `{"predicted":N}` | once a `prediction_result` came after command N was sent (the engine's own prediction, which answers no command), or 2 s after command N's turn ended without one (`{"predicted":N,"ms":K}`: K ms; in real time, in process too) |
/// | `{"ms":K}` | K milliseconds after the line before it was sent |
/// | `{}` | at once (an approval's way to say so) |
///
/// Commands are numbered as [`Conversation`] numbers them: the lines
/// sent, from 1. A point the engine never reaches (the turn ended before
/// its second step; the engine owes nothing and never asked; no
/// prediction came in time) is missed:
/// the line is sent then, and the verdict says so.
///
/// [`Conversation`]: crate::v2::serve::Conversation
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Session {
    steps: Vec<Step>,
}

/// One line of a [`Session`]: what is done, and when.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Step {
    /// When.
    pub after: After,
    /// What.
    pub action: Action,
}

/// What a [`Step`] does.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Action {
    /// Writes this line (without its LF; the runner adds it).
    Send(Vec<u8>),
    /// Writes an `approval` command for the `asked`-th question the engine
    /// asked, by the id the engine gave it.
    Approve {
        /// Which question, from 1, in the order the engine asked them.
        asked: u64,
        /// Allow, or reject.
        allow: bool,
    },
    /// Closes the engine's stdin.
    Close,
}

/// When a [`Step`] is taken: a point of the conversation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum After {
    /// At once.
    Now,
    /// Once command N's turn wrote its first event.
    Started(u64),
    /// Once a turn wrote its k-th `agent_step`: command `turn`'s, or with
    /// `None`, the last prompt's sent before this step.
    Step {
        /// The prompt's command number.
        turn: Option<u64>,
        /// Which step, from 1.
        step: u64,
    },
    /// Once command `turn`'s turn wrote `events` events that are not deltas
    /// (`assistant_delta`, `reasoning_delta`: model text, never counted),
    /// and with `delta`, then a delta or a later event: the point in the
    /// middle of a stream of text. What replay anchors a line sent while a
    /// turn ran on.
    Seen {
        /// The prompt's command number.
        turn: u64,
        /// How many of its events that are not deltas, its end included
        /// (the engine's `prediction_result` after it never is).
        events: u64,
        /// Whether a delta came after the last of them.
        delta: bool,
    },
    /// Once an event answered command N (a prompt or `compact`: once its
    /// work ended).
    Answered(u64),
    /// Once command N's turn or compaction ended.
    Ended(u64),
    /// Once the engine asked its k-th approval question.
    Asked(u64),
    /// Once a `prediction_result` came after command `turn` was sent (the
    /// engine's own, after a turn), or `within` after the turn of command
    /// `turn` ended without one (then missed). Always in real time: an
    /// engine's prediction comes when it comes.
    Predicted {
        /// The prompt's command number.
        turn: u64,
        /// How long after the turn's end to wait for it.
        within: Duration,
    },
    /// This long after the step before it.
    Pause(Duration),
}

impl Step {
    /// A step: `action`, `after` that.
    #[must_use]
    pub fn new(after: After, action: Action) -> Step {
        Step { after, action }
    }

    /// A line sent at once.
    #[must_use]
    pub fn send(line: impl Into<Vec<u8>>) -> Step {
        Step::new(After::Now, Action::Send(line.into()))
    }

    /// The same step, taken `after` that.
    #[must_use]
    pub fn after(mut self, after: After) -> Step {
        self.after = after;
        self
    }
}

/// A file the workbench reads, a line of which cannot be read: `$name`,
/// its docs, what its `Display` calls the file (`$file line N: why`) and
/// what `reason` says. Shared by the session and the mock engine's script.
macro_rules! line_error {
    ($(#[$doc:meta])* $name:ident, $file:literal, $reason:literal) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Eq)]
        pub struct $name {
            line: usize,
            reason: String,
        }

        impl $name {
            #[doc = concat!("The ", $file, "'s line, counted from 1.")]
            #[must_use]
            pub fn line(&self) -> usize {
                self.line
            }

            #[doc = $reason]
            #[must_use]
            pub fn reason(&self) -> &str {
                &self.reason
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, concat!($file, " line {}: {}"), self.line, self.reason)
            }
        }

        impl std::error::Error for $name {}
    };
}
pub(crate) use line_error;

line_error!(
    /// A session file that cannot be read: the line, and why.
    SessionError,
    "session",
    "Why it is not a step."
);

const KEYS: &str =
    "a step has one of \"send\", \"line\", \"line_base64\", \"approval\" or \"close\", and \"after\"";
const AFTERS: &str = "\"after\" is one of {\"started\":N}, {\"step\":K}, {\"step\":K,\"turn\":N}, \
                      {\"seen\":K,\"turn\":N}, {\"seen\":K,\"turn\":N,\"delta\":true}, {\"answered\":N}, {\"ended\":N}, {\"asked\":K}, {\"predicted\":N}, \
                      {\"predicted\":N,\"ms\":K} or {\"ms\":K}";
/// How long `{"predicted":N}` waits after the turn's end.
const PREDICTED_WITHIN: Duration = Duration::from_secs(2);

impl Session {
    /// A session of these steps.
    #[must_use]
    pub fn new(steps: Vec<Step>) -> Session {
        Session { steps }
    }

    /// Its steps, in order.
    #[must_use]
    pub fn steps(&self) -> &[Step] {
        &self.steps
    }

    /// How many command lines it sends (approvals included).
    #[must_use]
    pub fn commands(&self) -> usize {
        self.steps
            .iter()
            .filter(|s| !matches!(s.action, Action::Close))
            .count()
    }

    /// Reads a session file.
    ///
    /// # Errors
    ///
    /// The first line that is not a step, with why: not JSON, an unknown
    /// key, an anchor naming a command not sent before it, a step after
    /// `close`.
    pub fn parse(text: &str) -> Result<Session, SessionError> {
        let mut steps = Vec::new();
        let mut sent = 0u64;
        let mut closed = false;
        for (i, line) in text.lines().enumerate() {
            let trimmed = line.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let error = |reason: String| SessionError {
                line: i + 1,
                reason,
            };
            if closed {
                return Err(error(
                    "a step after \"close\": nothing is sent once stdin is closed".to_owned(),
                ));
            }
            let step = parse_step(trimmed, sent).map_err(error)?;
            match step.action {
                Action::Close => closed = true,
                _ => sent += 1,
            }
            steps.push(step);
        }
        Ok(Session { steps })
    }

    /// The session's file, which [`Session::parse`] reads back as the same
    /// session: a line that is one JSON value with nothing around it as
    /// `send`, other UTF-8 as `line`, other bytes as `line_base64`.
    #[must_use]
    pub fn to_jsonl(&self) -> String {
        let mut out = String::new();
        for step in &self.steps {
            out.push('{');
            // An approval is sent after its question unless told otherwise.
            let approval = matches!(step.action, Action::Approve { .. });
            if step.after != After::Now || approval {
                let _ = write!(out, "\"after\":{},", after_json(step.after));
            }
            match &step.action {
                Action::Send(line) => match std::str::from_utf8(line) {
                    Ok(text) if is_one_json_value(text) => {
                        let _ = write!(out, "\"send\":{text}");
                    }
                    Ok(text) => {
                        let _ = write!(out, "\"line\":{}", json_string(text));
                    }
                    Err(_) => {
                        let encoded = base64::engine::general_purpose::STANDARD.encode(line);
                        let _ = write!(out, "\"line_base64\":\"{encoded}\"");
                    }
                },
                Action::Approve { asked, allow } => {
                    let _ = write!(out, "\"approval\":{{\"asked\":{asked},\"allow\":{allow}}}");
                }
                Action::Close => out.push_str("\"close\":true"),
            }
            out.push_str("}\n");
        }
        out
    }
}

/// Whether `text` is a JSON object as a `send` holds it: parsed, nothing
/// around it, and no line break (a session line is one line).
fn is_one_json_value(text: &str) -> bool {
    text.starts_with('{')
        && serde_json::from_str::<&RawValue>(text).is_ok_and(|raw| raw.get() == text)
}

fn json_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

fn after_json(after: After) -> String {
    match after {
        After::Now => "{}".to_owned(),
        After::Started(n) => format!("{{\"started\":{n}}}"),
        After::Step { turn: None, step } => format!("{{\"step\":{step}}}"),
        After::Step {
            turn: Some(n),
            step,
        } => format!("{{\"step\":{step},\"turn\":{n}}}"),
        After::Seen {
            turn,
            events,
            delta,
        } => format!(
            "{{\"seen\":{events},\"turn\":{turn}{}}}",
            if delta { ",\"delta\":true" } else { "" }
        ),
        After::Answered(n) => format!("{{\"answered\":{n}}}"),
        After::Ended(n) => format!("{{\"ended\":{n}}}"),
        After::Asked(k) => format!("{{\"asked\":{k}}}"),
        After::Predicted { turn, within } => {
            format!("{{\"predicted\":{turn},\"ms\":{}}}", within.as_millis())
        }
        After::Pause(d) => format!("{{\"ms\":{}}}", d.as_millis()),
    }
}

/// One step from its line; `sent` command lines came before it.
fn parse_step(line: &str, sent: u64) -> Result<Step, String> {
    let map: BTreeMap<String, &RawValue> =
        serde_json::from_str(line).map_err(|e| format!("not a JSON object: {e}"))?;
    let mut action = None;
    let mut after = None;
    for (key, raw) in &map {
        let value = || -> Result<Value, String> {
            serde_json::from_str(raw.get()).map_err(|e| format!("\"{key}\": {e}"))
        };
        let set = |action: &mut Option<Action>, a: Action| {
            if action.replace(a).is_some() {
                Err(format!("{KEYS}: only one of them"))
            } else {
                Ok(())
            }
        };
        match key.as_str() {
            "send" => {
                if !raw.get().starts_with('{') {
                    return Err(
                        "\"send\" is a JSON object, the command (\"line\" sends any other text)"
                            .to_owned(),
                    );
                }
                set(&mut action, Action::Send(raw.get().as_bytes().to_vec()))?;
            }
            "line" => match value()? {
                Value::String(text) if !text.contains('\n') => {
                    set(&mut action, Action::Send(text.into_bytes()))?;
                }
                Value::String(_) => {
                    return Err("\"line\" is one line: no LF in it (the runner adds it)".to_owned())
                }
                _ => return Err("\"line\" is a string".to_owned()),
            },
            "line_base64" => {
                let Value::String(text) = value()? else {
                    return Err("\"line_base64\" is a string".to_owned());
                };
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(text)
                    .map_err(|e| format!("\"line_base64\" is not base64: {e}"))?;
                if bytes.contains(&b'\n') {
                    return Err(
                        "\"line_base64\" is one line: no LF in it (the runner adds it)".to_owned(),
                    );
                }
                set(&mut action, Action::Send(bytes))?;
            }
            "approval" => {
                let approval = value()?;
                let asked = approval
                    .get("asked")
                    .and_then(Value::as_u64)
                    .filter(|&k| k >= 1);
                let allow = approval.get("allow").and_then(Value::as_bool);
                let (Some(asked), Some(allow), Some(2)) =
                    (asked, allow, approval.as_object().map(serde_json::Map::len))
                else {
                    return Err("\"approval\" is {\"asked\":K,\"allow\":B}: the K-th question asked, from 1, allowed or not".to_owned());
                };
                set(&mut action, Action::Approve { asked, allow })?;
            }
            "close" => {
                if value()? != Value::Bool(true) {
                    return Err("\"close\" is true".to_owned());
                }
                set(&mut action, Action::Close)?;
            }
            "after" => after = Some(parse_after(&value()?, sent)?),
            other => return Err(format!("unknown key \"{other}\" ({KEYS})")),
        }
    }
    let action = action.ok_or_else(|| format!("no action ({KEYS})"))?;
    let after = match (after, &action) {
        (Some(after), _) => after,
        (None, Action::Approve { asked, .. }) => After::Asked(*asked),
        (None, _) => After::Now,
    };
    Ok(Step { after, action })
}

fn parse_after(value: &Value, sent: u64) -> Result<After, String> {
    let Some(map) = value.as_object() else {
        return Err(AFTERS.to_owned());
    };
    let number = |key: &str| -> Result<u64, String> {
        map[key]
            .as_u64()
            .filter(|&n| n >= 1)
            .ok_or_else(|| format!("\"after\": \"{key}\" is a whole number from 1"))
    };
    // A command the step names was sent before it: otherwise it never comes.
    let earlier = |key: &str| -> Result<u64, String> {
        let n = number(key)?;
        if n > sent {
            return Err(format!(
                "\"after\": \"{key}\" names command {n}, but only {sent} {} sent before this line",
                if sent == 1 { "was" } else { "were" }
            ));
        }
        Ok(n)
    };
    let ms = || -> Result<Duration, String> {
        let ms = map["ms"]
            .as_u64()
            .ok_or("\"after\": \"ms\" is a whole number of milliseconds")?;
        Ok(Duration::from_millis(ms))
    };
    let keys: Vec<&str> = map.keys().map(String::as_str).collect();
    match keys.as_slice() {
        [] => Ok(After::Now),
        ["started"] => Ok(After::Started(earlier("started")?)),
        ["step"] => Ok(After::Step {
            turn: None,
            step: number("step")?,
        }),
        ["step", "turn"] => Ok(After::Step {
            turn: Some(earlier("turn")?),
            step: number("step")?,
        }),
        ["seen", "turn"] | ["delta", "seen", "turn"] => {
            let delta = match map.get("delta") {
                None | Some(Value::Bool(true)) => map.contains_key("delta"),
                Some(_) => return Err("\"after\": \"delta\" is true".to_owned()),
            };
            Ok(After::Seen {
                turn: earlier("turn")?,
                events: map["seen"]
                    .as_u64()
                    .ok_or("\"after\": \"seen\" is a whole number")?,
                delta,
            })
        }
        ["answered"] => Ok(After::Answered(earlier("answered")?)),
        ["ended"] => Ok(After::Ended(earlier("ended")?)),
        ["asked"] => Ok(After::Asked(number("asked")?)),
        ["ms"] => Ok(After::Pause(ms()?)),
        ["predicted"] => Ok(After::Predicted {
            turn: earlier("predicted")?,
            within: PREDICTED_WITHIN,
        }),
        ["ms", "predicted"] => Ok(After::Predicted {
            turn: earlier("predicted")?,
            within: ms()?,
        }),
        _ => Err(AFTERS.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::{Action, After, Session, Step};
    use std::time::Duration;

    /// Each key reads as its step, and the file written back reads as the
    /// same session.
    #[test]
    fn every_form_reads_and_writes_back() {
        let text = concat!(
            "# a comment\n",
            "\n",
            "{\"send\":{\"command\":\"prompt\",\"content\":\"hi\"}}\n",
            "{\"after\":{\"step\":2},\"line\":\"{x\"}\n",
            "{\"after\":{\"step\":1,\"turn\":1},\"line_base64\":\"/w==\"}\n",
            "{\"after\":{\"started\":1},\"send\":{\"command\":\"cancel\"}}\n",
            "{\"after\":{\"answered\":2},\"send\":{ \"command\" : \"compact\" }}\n",
            "{\"after\":{\"ended\":1},\"line\":\"\"}\n",
            "{\"approval\":{\"asked\":1,\"allow\":false}}\n",
            "{\"after\":{\"ms\":250},\"approval\":{\"asked\":2,\"allow\":true}}\n",
            "{\"after\":{\"predicted\":1},\"line\":\"p\"}\n",
            "{\"after\":{\"predicted\":1,\"ms\":500},\"line\":\"q\"}\n",
            "{\"after\":{\"delta\":true,\"turn\":1,\"seen\":2},\"line\":\"s\"}\n",
            "{\"after\":{\"seen\":0,\"turn\":1},\"line\":\"t\"}\n",
            "{\"close\":true}\n",
        );
        let session = Session::parse(text).unwrap();
        let want = vec![
            Step::send(&b"{\"command\":\"prompt\",\"content\":\"hi\"}"[..]),
            Step::send(&b"{x"[..]).after(After::Step {
                turn: None,
                step: 2,
            }),
            Step::send(vec![0xff]).after(After::Step {
                turn: Some(1),
                step: 1,
            }),
            Step::send(&b"{\"command\":\"cancel\"}"[..]).after(After::Started(1)),
            Step::send(&b"{ \"command\" : \"compact\" }"[..]).after(After::Answered(2)),
            Step::send(Vec::new()).after(After::Ended(1)),
            Step::new(
                After::Asked(1),
                Action::Approve {
                    asked: 1,
                    allow: false,
                },
            ),
            Step::new(
                After::Pause(Duration::from_millis(250)),
                Action::Approve {
                    asked: 2,
                    allow: true,
                },
            ),
            Step::send(&b"p"[..]).after(After::Predicted {
                turn: 1,
                within: Duration::from_secs(2),
            }),
            Step::send(&b"q"[..]).after(After::Predicted {
                turn: 1,
                within: Duration::from_millis(500),
            }),
            Step::send(&b"s"[..]).after(After::Seen {
                turn: 1,
                events: 2,
                delta: true,
            }),
            Step::send(&b"t"[..]).after(After::Seen {
                turn: 1,
                events: 0,
                delta: false,
            }),
            Step::new(After::Now, Action::Close),
        ];
        assert_eq!(session.steps(), &want[..]);
        assert_eq!(session.commands(), 12);
        let written = session.to_jsonl();
        assert_eq!(
            written,
            concat!(
                "{\"send\":{\"command\":\"prompt\",\"content\":\"hi\"}}\n",
                "{\"after\":{\"step\":2},\"line\":\"{x\"}\n",
                "{\"after\":{\"step\":1,\"turn\":1},\"line_base64\":\"/w==\"}\n",
                "{\"after\":{\"started\":1},\"send\":{\"command\":\"cancel\"}}\n",
                "{\"after\":{\"answered\":2},\"send\":{ \"command\" : \"compact\" }}\n",
                "{\"after\":{\"ended\":1},\"line\":\"\"}\n",
                "{\"after\":{\"asked\":1},\"approval\":{\"asked\":1,\"allow\":false}}\n",
                "{\"after\":{\"ms\":250},\"approval\":{\"asked\":2,\"allow\":true}}\n",
                "{\"after\":{\"predicted\":1,\"ms\":2000},\"line\":\"p\"}\n",
                "{\"after\":{\"predicted\":1,\"ms\":500},\"line\":\"q\"}\n",
                "{\"after\":{\"seen\":2,\"turn\":1,\"delta\":true},\"line\":\"s\"}\n",
                "{\"after\":{\"seen\":0,\"turn\":1},\"line\":\"t\"}\n",
                "{\"close\":true}\n",
            )
        );
        assert_eq!(Session::parse(&written).unwrap(), session);
    }

    /// A bad line names its number and why, in words its author acts on.
    #[test]
    fn a_bad_line_is_named_with_why() {
        let table: &[(&str, &str)] = &[
            ("{x", "session line 1: not a JSON object: key must be a string at line 1 column 2"),
            ("{}", "session line 1: no action (a step has one of \"send\", \"line\", \"line_base64\", \"approval\" or \"close\", and \"after\")"),
            ("{\"nope\":1}", "session line 1: unknown key \"nope\" (a step has one of \"send\", \"line\", \"line_base64\", \"approval\" or \"close\", and \"after\")"),
            ("{\"send\":\"hi\"}", "session line 1: \"send\" is a JSON object, the command (\"line\" sends any other text)"),
            ("{\"line\":\"a\",\"close\":true}", "session line 1: a step has one of \"send\", \"line\", \"line_base64\", \"approval\" or \"close\", and \"after\": only one of them"),
            ("{\"line\":\"a\\nb\"}", "session line 1: \"line\" is one line: no LF in it (the runner adds it)"),
            ("{\"line\":1}", "session line 1: \"line\" is a string"),
            ("{\"line_base64\":\"!\"}", "session line 1: \"line_base64\" is not base64: Invalid symbol 33, offset 0."),
            ("{\"approval\":{\"asked\":0,\"allow\":true}}", "session line 1: \"approval\" is {\"asked\":K,\"allow\":B}: the K-th question asked, from 1, allowed or not"),
            ("{\"close\":false}", "session line 1: \"close\" is true"),
            ("{\"after\":{\"ended\":1},\"line\":\"a\"}", "session line 1: \"after\": \"ended\" names command 1, but only 0 were sent before this line"),
            ("{\"after\":{\"step\":0},\"line\":\"a\"}", "session line 1: \"after\": \"step\" is a whole number from 1"),
            ("{\"after\":{\"ms\":-1},\"line\":\"a\"}", "session line 1: \"after\": \"ms\" is a whole number of milliseconds"),
            ("{\"after\":{\"soon\":1},\"line\":\"a\"}", "session line 1: \"after\" is one of {\"started\":N}, {\"step\":K}, {\"step\":K,\"turn\":N}, {\"seen\":K,\"turn\":N}, {\"seen\":K,\"turn\":N,\"delta\":true}, {\"answered\":N}, {\"ended\":N}, {\"asked\":K}, {\"predicted\":N}, {\"predicted\":N,\"ms\":K} or {\"ms\":K}"),
            ("{\"line\":\"a\"}\n{\"after\":{\"seen\":1,\"turn\":1,\"delta\":false},\"line\":\"b\"}", "session line 2: \"after\": \"delta\" is true"),
            ("{\"line\":\"a\"}\n{\"after\":{\"seen\":-1,\"turn\":1},\"line\":\"b\"}", "session line 2: \"after\": \"seen\" is a whole number"),
            ("{\"after\":{\"seen\":1,\"turn\":1},\"line\":\"a\"}", "session line 1: \"after\": \"turn\" names command 1, but only 0 were sent before this line"),
            ("{\"after\":{\"predicted\":1},\"line\":\"a\"}", "session line 1: \"after\": \"predicted\" names command 1, but only 0 were sent before this line"),
            ("{\"close\":true}\n{\"line\":\"a\"}", "session line 2: a step after \"close\": nothing is sent once stdin is closed"),
            ("{\"line\":\"a\"}\n{\"after\":{\"answered\":2},\"line\":\"b\"}", "session line 2: \"after\": \"answered\" names command 2, but only 1 was sent before this line"),
        ];
        for &(text, want) in table {
            assert_eq!(
                Session::parse(text).unwrap_err().to_string(),
                want,
                "{text}"
            );
        }
        // The CLI says `FILE:LINE: why` from the two parts.
        let error = Session::parse("# a comment\n\n{\"close\":false}").unwrap_err();
        assert_eq!((error.line(), error.reason()), (3, "\"close\" is true"));
    }
}
