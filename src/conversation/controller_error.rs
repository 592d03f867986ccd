//! Why a controller's call failed: one error type for the blocking and the
//! tokio controller, each cause with what a person needs to act on it.

use super::model::Owed;
use super::reply::{Approval, CommandLine, EventLine, Waiting};
use crate::v2::{CommandErrorCause, EventLineError, Refusal, DEFAULT_MAX_LINE_LEN};
use std::fmt;
use std::io;
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

/// How the engine stopped, for every call still waiting then.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Stopped {
    /// Its exit status; `None` for an engine [attached](super::Controller::attach)
    /// to, or one still running when its stdout closed (`still_running`).
    pub status: Option<ExitStatus>,
    /// A spawned engine closed its stdout but had not exited two seconds
    /// later: the controller hears nothing more from it.
    pub still_running: bool,
    /// The last [`STDERR_TAIL`](super::STDERR_TAIL) bytes of its stderr
    /// (lossy UTF-8); empty for an attached engine.
    pub stderr: String,
    /// Why reading its stdout ended: `None` when it closed, the error when
    /// a read failed.
    pub read_error: Option<String>,
    /// Its last line, when it ended with no LF (the engine died mid-line),
    /// lossy UTF-8, at most 1,024 bytes of it.
    pub partial_line: Option<String>,
    /// The command line after which the engine read no more commands, if it
    /// said so (`command_error` `command stream: ...`).
    pub stopped_reading: Option<CommandLine>,
    /// What the engine still owed when it stopped.
    pub owed: Owed,
}

impl fmt::Display for Stopped {
    /// `the engine stopped (exit status: 3) before answering; it still owed
    /// the turn of command line 1; its last line was cut short:
    /// {"event":"agent_fi; stderr ends: boom`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.status, &self.read_error) {
            (Some(status), _) => write!(f, "the engine stopped ({status}) before answering")?,
            (None, Some(error)) => write!(
                f,
                "the engine stopped (reading its stdout failed: {error}) before answering"
            )?,
            (None, None) if self.still_running => {
                f.write_str("the engine closed its stdout before answering, and still runs")?;
            }
            (None, None) => {
                f.write_str("the engine stopped (its stdout closed) before answering")?
            }
        }
        if let Some(owed) = owed_words(&self.owed) {
            write!(f, "; it still owed {owed}")?;
        }
        if let Some(partial) = &self.partial_line {
            write!(f, "; its last line was cut short: {partial}")?;
        }
        let tail = self.stderr.trim_end();
        if !tail.is_empty() {
            write!(f, "; stderr ends: {tail}")?;
        }
        Ok(())
    }
}

/// What is owed, in words: `the end of what command line 1 started, the
/// queued work of command lines 3, 4, answers to command line 5`.
fn owed_words(owed: &Owed) -> Option<String> {
    let lines = |v: &[u64]| {
        let list = v.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
        let s = if v.len() == 1 { "" } else { "s" };
        format!("command line{s} {list}")
    };
    let mut parts = Vec::new();
    if let Some(k) = owed.running {
        parts.push(format!("the end of what command line {k} started"));
    }
    if !owed.queued.is_empty() {
        parts.push(format!("the queued work of {}", lines(&owed.queued)));
    }
    let answers: Vec<u64> = [&owed.refused, &owed.requests, &owed.steers, &owed.goals]
        .into_iter()
        .flatten()
        .copied()
        .collect();
    if !answers.is_empty() {
        let mut answers = answers;
        answers.sort_unstable();
        parts.push(format!("answers to {}", lines(&answers)));
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// An answer that came but does not decode: the line names an event and
/// carries what says which command it answers (its `request_id`, its turn),
/// but is not that event (a field missing, a value of the wrong type).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Unreadable {
    /// The command it answers (for a turn's event, the prompt).
    pub command: CommandLine,
    /// The line.
    pub line: EventLine,
    /// The event it names.
    pub event: String,
    /// Why it is not that event.
    pub error: EventLineError,
}

impl fmt::Display for Unreadable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the engine's answer to {} is unreadable: its {} ({}) does not decode: {}",
            self.command, self.line, self.event, self.error
        )
    }
}

impl std::error::Error for Unreadable {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

/// An answer where the call's was due that fits no rule of the
/// conversation: a reply with a `request_id` or `submission_id` no command
/// carried, a `command_error` for a line the engine should have read, a
/// compaction event out of its place. The call fails at once with it,
/// rather than wait out its limit for an answer the engine already gave.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Misanswered {
    /// The command the call waited on.
    pub command: CommandLine,
    /// The command's name (`jobs_snapshot`, `steer`, ...).
    pub name: &'static str,
    /// The line that fits no rule.
    pub line: EventLine,
    /// The event it is.
    pub event: &'static str,
    /// Why it fits no rule, in the model's words.
    pub reason: String,
}

impl fmt::Display for Misanswered {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.event == "command_error" {
            write!(
                f,
                "{} ({}) is valid, but the engine refused it: its {} ({}) {}",
                self.command, self.name, self.line, self.event, self.reason
            )
        } else {
            write!(
                f,
                "{} ({}) was answered wrongly: its {} ({}) fits no rule: {}",
                self.command, self.name, self.line, self.event, self.reason
            )
        }
    }
}

/// Why a call failed.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum ControllerError {
    /// Not written: `openseek serve` declines the command
    /// ([`Command::serve_refusal`](crate::v2::Command::serve_refusal)).
    Declined(Refusal),
    /// Not written: the line is longer than the engine reads
    /// ([`DEFAULT_MAX_LINE_LEN`]); the engine would stop reading at it.
    TooLong {
        /// The line's length, its LF excluded.
        len: usize,
    },
    /// Not written: the line holds an LF before its end, so it is more
    /// than one line ([`Controller::send_line`](super::Controller::send_line)).
    NotOneLine,
    /// Not written: the engine reads no more commands, after the command
    /// line `after` (which was not JSON).
    StoppedReading {
        /// The last command line it read.
        after: CommandLine,
    },
    /// Writing to the engine's stdin failed (it closed it), or the
    /// controller had closed it.
    WriteFailed(Arc<io::Error>),
    /// The engine answered the command with `command_error`.
    Refused {
        /// The command refused.
        command: CommandLine,
        /// Why, as the engine said it.
        cause: CommandErrorCause,
    },
    /// The engine stopped before answering.
    Stopped(Arc<Stopped>),
    /// The engine answered, but with a line that does not decode: the call
    /// fails with it at once rather than wait for another answer.
    Unreadable(Arc<Unreadable>),
    /// The engine answered where this call's answer was due with an event
    /// that fits no rule (a wrong `request_id`, a refusal of a valid
    /// line): the call fails at once, saying so.
    Misanswered(Arc<Misanswered>),
    /// The engine was silent on the call past its limit
    /// ([`Limits`](super::Limits)).
    Timeout {
        /// The command waited on; `None` for closing.
        command: Option<CommandLine>,
        /// What it waited for.
        waiting: Waiting,
        /// How long the engine had been silent on it.
        after: Duration,
    },
    /// The caller left more of the call's events unread than
    /// [`Limits::unread`](super::Limits::unread): the call was given up,
    /// its later events are notices; other calls go on.
    Unread {
        /// The command whose events went unread.
        command: CommandLine,
        /// The bound.
        bound: usize,
    },
    /// A turn asked a question that [`TurnHandle::wait`](super::TurnHandle::wait)
    /// cannot answer: answer it with `wait_with` or the handle's `allow`
    /// and `reject`.
    Unanswered(Approval),
    /// The command is not of the kind the call sends.
    WrongCommand {
        /// What the call sends.
        expected: &'static str,
        /// The command's name.
        got: &'static str,
    },
}

impl ControllerError {
    /// The engine did not stop within `limit` of its stdin closing.
    #[cold]
    pub(super) fn exit_timeout(limit: Duration) -> ControllerError {
        ControllerError::Timeout {
            command: None,
            waiting: Waiting::Exit,
            after: limit,
        }
    }
}

impl fmt::Display for ControllerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ControllerError::Declined(refusal) => {
                write!(f, "not sent: openseek serve declines it ({refusal})")
            }
            ControllerError::TooLong { len } => write!(
                f,
                "not sent: the line is {len} bytes, longer than the engine reads ({DEFAULT_MAX_LINE_LEN})"
            ),
            ControllerError::NotOneLine => f.write_str("not sent: the line holds an LF"),
            ControllerError::StoppedReading { after } => write!(
                f,
                "not sent: the engine reads no more commands after {after}"
            ),
            ControllerError::WriteFailed(e) => write!(f, "writing to the engine failed: {e}"),
            ControllerError::Refused { command, cause } => {
                write!(f, "the engine refused {command}: {cause}")
            }
            ControllerError::Stopped(stopped) => stopped.fmt(f),
            ControllerError::Unreadable(unreadable) => unreadable.fmt(f),
            ControllerError::Misanswered(misanswered) => misanswered.fmt(f),
            ControllerError::Timeout {
                command: Some(n),
                waiting,
                after,
            } => write!(
                f,
                "{n}: the engine was silent for {} while the call waited for {waiting}",
                Secs(*after)
            ),
            ControllerError::Timeout {
                command: None,
                after,
                ..
            } => write!(
                f,
                "the engine did not exit within {} of its stdin closing",
                Secs(*after)
            ),
            ControllerError::Unread { command, bound } => write!(
                f,
                "{command}: {bound} of its events were left unread; the call was given up"
            ),
            ControllerError::Unanswered(approval) => write!(
                f,
                "the turn asks approval {:?} ({}: {}), which nobody answers",
                approval.id, approval.tool_name, approval.detail
            ),
            ControllerError::WrongCommand { expected, got } => {
                write!(f, "expected a {expected} command, got {got}")
            }
        }
    }
}

impl std::error::Error for ControllerError {
    /// The underlying cause, where there is one: the failed write's
    /// `io::Error`, or why an answer does not decode.
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ControllerError::WriteFailed(e) => Some(e.as_ref()),
            ControllerError::Unreadable(unreadable) => Some(&unreadable.error),
            _ => None,
        }
    }
}

struct Secs(Duration);

impl fmt::Display for Secs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.3}s", self.0.as_secs_f64())
    }
}

// Unix: an exit status is built from its raw wait status.
#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    fn stopped(status: Option<i32>, read_error: Option<&str>, still_running: bool) -> Stopped {
        Stopped {
            status: status.map(|code| ExitStatus::from_raw(code << 8)),
            still_running,
            stderr: String::new(),
            read_error: read_error.map(str::to_owned),
            partial_line: None,
            stopped_reading: None,
            owed: Owed::default(),
        }
    }

    /// How the engine stopped, first: its status, a failed read, still
    /// running, or only its stdout closed.
    #[test]
    fn a_stop_says_how_the_engine_stopped() {
        let table = [
            (stopped(Some(3), None, false), "the engine stopped (exit status: 3) before answering"),
            (
                stopped(Some(0), Some("broken"), false),
                "the engine stopped (exit status: 0) before answering",
            ),
            (
                stopped(None, Some("Input/output error"), false),
                "the engine stopped (reading its stdout failed: Input/output error) before answering",
            ),
            (
                stopped(None, None, true),
                "the engine closed its stdout before answering, and still runs",
            ),
            (stopped(None, None, false), "the engine stopped (its stdout closed) before answering"),
        ];
        for (stop, want) in table {
            assert_eq!(stop.to_string(), want);
        }
    }

    /// Then what it still owed, its cut line and its stderr's end, each
    /// only when there is one.
    #[test]
    fn a_stop_says_what_was_owed_cut_short_and_on_stderr() {
        let owed = |running: Option<u64>, queued: &[u64], answers: [&[u64]; 4]| Owed {
            running,
            queued: queued.to_vec(),
            refused: answers[0].to_vec(),
            requests: answers[1].to_vec(),
            steers: answers[2].to_vec(),
            goals: answers[3].to_vec(),
            ..Owed::default()
        };
        let table = [
            (owed(Some(1), &[], [&[], &[], &[], &[]]), "; it still owed the end of what command line 1 started"),
            (owed(None, &[3, 4], [&[], &[], &[], &[]]), "; it still owed the queued work of command lines 3, 4"),
            (owed(None, &[], [&[9], &[2], &[7], &[5]]), "; it still owed answers to command lines 2, 5, 7, 9"),
            (
                owed(Some(1), &[3], [&[], &[6], &[], &[]]),
                "; it still owed the end of what command line 1 started, the queued work of command line 3, answers to command line 6",
            ),
            (owed(None, &[], [&[], &[], &[], &[]]), ""),
        ];
        for (owed, want) in table {
            let stop = Stopped {
                owed,
                ..stopped(Some(1), None, false)
            };
            let head = "the engine stopped (exit status: 1) before answering";
            assert_eq!(stop.to_string(), format!("{head}{want}"));
        }
        let stop = Stopped {
            partial_line: Some("{\"event\":\"agent_fi".into()),
            stderr: "boom\n\n".into(),
            ..stopped(Some(1), None, false)
        };
        assert_eq!(
            stop.to_string(),
            "the engine stopped (exit status: 1) before answering; its last line was cut short: {\"event\":\"agent_fi; stderr ends: boom"
        );
        let quiet = Stopped {
            stderr: " \n".into(),
            ..stopped(Some(1), None, false)
        };
        assert_eq!(
            quiet.to_string(),
            "the engine stopped (exit status: 1) before answering"
        );
    }

    /// An unreadable answer says which command, line and event, and its
    /// source is the decode error, for a caller that walks the chain.
    #[test]
    fn an_unreadable_answer_names_its_line_and_keeps_the_decode_error() {
        use std::error::Error as _;
        let error = crate::v2::Event::from_slice(br#"{"event":"jobs_snapshot","request_id":"r1"}"#)
            .unwrap_err();
        let unreadable = Unreadable {
            command: CommandLine(2),
            line: EventLine(5),
            event: "jobs_snapshot".into(),
            error: error.clone(),
        };
        assert_eq!(
            unreadable.to_string(),
            format!("the engine's answer to command line 2 is unreadable: its event line 5 (jobs_snapshot) does not decode: {error}")
        );
        let source = unreadable.source().expect("the decode error");
        assert_eq!(source.to_string(), error.to_string());
        let wrapped = ControllerError::Unreadable(Arc::new(unreadable));
        assert_eq!(
            wrapped.source().map(ToString::to_string),
            Some(error.to_string())
        );
    }

    /// A failed write says so, and its source is the `io::Error` itself;
    /// an error with no cause beneath it has no source.
    #[test]
    fn a_failed_write_keeps_the_io_error_as_its_source() {
        use std::error::Error as _;
        let failed = ControllerError::WriteFailed(Arc::new(io::Error::new(
            io::ErrorKind::BrokenPipe,
            "Broken pipe (os error 32)",
        )));
        assert_eq!(
            failed.to_string(),
            "writing to the engine failed: Broken pipe (os error 32)"
        );
        let source = failed.source().expect("the io::Error");
        let io = source.downcast_ref::<io::Error>().expect("an io::Error");
        assert_eq!(io.kind(), io::ErrorKind::BrokenPipe);
        assert!(ControllerError::NotOneLine.source().is_none());
    }
}
