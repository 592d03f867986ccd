//! Generated sessions, for the fuzzers: lines of every command kind, each
//! sent at a point of the conversation, with references to earlier lines
//! relative so that dropping lines (a shrink) keeps the rest meaningful.
//! The proptest strategy ([`sessions`](super::sessions)) and the
//! `Arbitrary` session of cargo-fuzz targets build the same lines.

use super::session::{Action, After, Session, Step};
use std::time::Duration;

/// One generated line, its references relative so that a shrink that
/// drops lines keeps the rest meaningful.
#[derive(Clone, Debug)]
pub(super) enum Line {
    Prompt(usize),
    SteerPrompt { tagged: bool },
    SteerCommand { tagged: bool },
    Cancel,
    GoalSet { auto: bool },
    GoalClear,
    Compact,
    JobsSnapshot,
    JobStop,
    Approve { asked: u64, allow: bool },
    Refused(usize),
    Declined,
    NotJson,
}

/// When it is sent; `back` counts command lines back from this one (1:
/// the line just before).
#[derive(Clone, Debug)]
pub(super) enum When {
    Now,
    Started { back: u64 },
    Step { step: u64 },
    Answered { back: u64 },
    Ended { back: u64 },
    Asked { k: u64 },
    Pause { ms: u64 },
}

pub(super) const PROMPTS: [&str; 3] = ["Say hi", "Count to three", "Write a haiku about pipes"];
/// JSON, but not commands: each owed its `command_error`.
pub(super) const REFUSED: [&str; 4] = [
    r#"{"command":"nope"}"#,
    r#"{"command":"steer","kind":"notice","content":"the build finished"}"#,
    r#"{"command":"approval","id":"a-1"}"#,
    "[1,2]",
];

/// The session of generated lines: ids unique per line, references to
/// earlier lines resolved (one before the first line is sent at once).
pub(super) fn to_session(steps: &[(When, Line)], close: bool) -> Session {
    let mut out = Vec::with_capacity(steps.len() + 1);
    for (i, (when, line)) in steps.iter().enumerate() {
        let n = i as u64 + 1;
        let earlier = |back: u64| n.checked_sub(back).filter(|&k| k >= 1);
        let after = match *when {
            When::Now => After::Now,
            When::Started { back } => earlier(back).map_or(After::Now, After::Started),
            When::Step { step } => After::Step { turn: None, step },
            When::Answered { back } => earlier(back).map_or(After::Now, After::Answered),
            When::Ended { back } => earlier(back).map_or(After::Now, After::Ended),
            When::Asked { k } => After::Asked(k),
            When::Pause { ms } => After::Pause(Duration::from_millis(ms)),
        };
        let text = match line {
            Line::Prompt(p) => format!(
                r#"{{"command":"prompt","content":"{}"}}"#,
                PROMPTS[*p % PROMPTS.len()]
            ),
            Line::SteerPrompt { tagged } => steer("prompt", "shorter, please", *tagged, n),
            Line::SteerCommand { tagged } => steer("command", "/diff", *tagged, n),
            Line::Cancel => r#"{"command":"cancel"}"#.to_owned(),
            Line::GoalSet { auto } => format!(
                r#"{{"command":"goal","action":"set","text":"the tests pass"{}}}"#,
                if *auto { r#","auto":true"# } else { "" }
            ),
            Line::GoalClear => r#"{"command":"goal","action":"clear"}"#.to_owned(),
            Line::Compact => r#"{"command":"compact"}"#.to_owned(),
            Line::JobsSnapshot => {
                format!(r#"{{"command":"jobs_snapshot","request_id":"req-{n}"}}"#)
            }
            Line::JobStop => format!(
                r#"{{"command":"job_stop","request_id":"req-{n}","generation":"g-1","job_id":"job-1"}}"#
            ),
            Line::Approve { asked, allow } => {
                out.push(Step::new(
                    after,
                    Action::Approve {
                        asked: *asked,
                        allow: *allow,
                    },
                ));
                continue;
            }
            Line::Refused(r) => REFUSED[*r % REFUSED.len()].to_owned(),
            Line::Declined => r#"{"command":"goal","action":"set","text":"  "}"#.to_owned(),
            Line::NotJson => r#"{"command":"prompt","content":"cut off"#.to_owned(),
        };
        out.push(Step::new(after, Action::Send(text.into_bytes())));
    }
    if close {
        out.push(Step::new(After::Now, Action::Close));
    }
    Session::new(out)
}

fn steer(kind: &str, content: &str, tagged: bool, n: u64) -> String {
    let kind = if kind == "prompt" {
        String::new()
    } else {
        format!(r#","kind":"{kind}""#)
    };
    let tag = if tagged {
        format!(r#","submission_id":"s-{n}""#)
    } else {
        String::new()
    };
    format!(r#"{{"command":"steer"{kind},"content":"{content}"{tag}}}"#)
}

/// A session from fuzzer bytes: 1 to 6 lines, each kind and anchor from
/// a byte or two, as the proptest strategy weighs them only roughly.
#[cfg(feature = "arbitrary")]
impl<'a> arbitrary::Arbitrary<'a> for Session {
    fn arbitrary(u: &mut arbitrary::Unstructured<'a>) -> arbitrary::Result<Session> {
        let count = u.int_in_range(1..=6)?;
        let mut steps = Vec::with_capacity(count);
        for _ in 0..count {
            let when = match u.int_in_range(0..=9u8)? {
                0..=2 => When::Now,
                3 | 4 => When::Started {
                    back: u.int_in_range(1..=3)?,
                },
                5 => When::Step {
                    step: u.int_in_range(1..=2)?,
                },
                6 => When::Answered {
                    back: u.int_in_range(1..=3)?,
                },
                7 => When::Ended {
                    back: u.int_in_range(1..=3)?,
                },
                8 => When::Asked {
                    k: u.int_in_range(1..=2)?,
                },
                _ => When::Pause {
                    ms: u.int_in_range(0..=50)?,
                },
            };
            let line = match u.int_in_range(0..=14u8)? {
                0..=2 => Line::Prompt(u.int_in_range(0..=PROMPTS.len() - 1)?),
                3 => Line::SteerPrompt {
                    tagged: u.arbitrary()?,
                },
                4 => Line::SteerCommand {
                    tagged: u.arbitrary()?,
                },
                5 => Line::Cancel,
                6 => Line::GoalSet {
                    auto: u.arbitrary()?,
                },
                7 => Line::GoalClear,
                8 => Line::Compact,
                9 => Line::JobsSnapshot,
                10 => Line::JobStop,
                11 => Line::Approve {
                    asked: u.int_in_range(1..=2)?,
                    allow: u.arbitrary()?,
                },
                12 => Line::Refused(u.int_in_range(0..=REFUSED.len() - 1)?),
                13 => Line::Declined,
                _ => Line::NotJson,
            };
            steps.push((when, line));
        }
        Ok(to_session(&steps, u.arbitrary()?))
    }
}
