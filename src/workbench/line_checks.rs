//! The line checks: each scenario run on the engine, its answers judged.
//!
//! A scenario's answers are judged against those its lines are owed, at
//! once, so that only what a report shows is kept of the engine's output.

use super::answers::{owed, read_event, Answer, Owed, STREAM};
use super::line_scenarios::{scenarios, Scenario};
use super::report::{Check, Failure, Level, Outcome};
use super::run::{ended, lines, run_program, Feed, Ran, MAX_OUTPUT};
use super::shown::{quoted, shown, stderr_tail};
use std::io;
use std::process::Stdio;
use std::time::Duration;

/// The line checks, in the order the report lists them.
pub(super) const LINE_CHECKS: [&str; 14] = [
    "stdout-events",
    "no-stderr-answers",
    "protocol-errors",
    "serve-refusals",
    "not-json",
    "not-json-detail",
    "blank-lines",
    "crlf",
    "split-writes",
    "no-final-lf",
    "long-prompt",
    "line-at-limit",
    "line-over-limit",
    "jobs-snapshot",
];
/// The engine's stdout lines a failure keeps, the first of them: an engine
/// that floods its stdout with short lines is reported in kilobytes, not in
/// gigabytes.
const RECEIVED_KEPT: usize = 1000;

/// Runs each scenario on `engine` afresh, within `timeout`, for an engine
/// that declared the limit `declared`, if it did (`limit`, the crate's if
/// not), and judges them: the line checks, in the report's order.
pub(super) fn run(
    engine: &mut std::process::Command,
    declared: Option<usize>,
    limit: usize,
    timeout: Duration,
) -> io::Result<Vec<Check>> {
    let mut runs = Vec::new();
    for scenario in scenarios(declared) {
        let feed = Feed {
            pieces: scenario.feed.pieces.clone(),
            pause: scenario.feed.pause,
            until: scenario.feed.until.clone(),
        };
        let ran = run_program(engine, feed, Stdio::piped(), timeout)?;
        // Judged at once, so that only what the report shows is kept
        // of each run's output.
        runs.push(Run::judged(scenario, &ran, limit));
    }
    Ok(judge(&runs))
}

/// A scenario run, judged: what each check needs of it, and what a
/// failure shows. The engine's output itself is not kept.
struct Run {
    scenario: Scenario,
    /// The scenario's own check.
    outcome: Outcome,
    /// The first stdout line that is not an event, and why.
    stray: Option<String>,
    /// The owed `command_error`s missing from stdout and on stderr: why
    /// `no-stderr-answers` fails.
    on_stderr: Option<String>,
    /// The `command stream: ` error the engine answered the line that ends
    /// reading with, if it did on stdout, and the crate's.
    stream: Option<(Option<String>, String)>,
    /// The lines sent, shown.
    sent: Vec<String>,
    /// The first [`RECEIVED_KEPT`] stdout lines, shown.
    received: Vec<String>,
    /// How many lines the engine wrote on stdout.
    received_lines: usize,
    stderr_tail: Vec<String>,
    ended: String,
}

impl Run {
    /// `scenario`'s run judged by what the engine wrote: each stdout line
    /// read once, as it is reached; what is owed read at `limit`.
    fn judged(scenario: Scenario, ran: &Ran, limit: usize) -> Run {
        let name = scenario.name;
        let input = scenario.feed.pieces.concat();
        let owed = owed(&input, limit);
        let ended = match ran.status {
            Some(status) => ended(status),
            None if ran.overflowed => {
                format!("wrote more than {} MiB; killed", MAX_OUTPUT >> 20)
            }
            None => "did not exit within the timeout; killed".to_owned(),
        };
        let (mut got, mut stray, mut received, mut received_lines) =
            (Vec::new(), None, Vec::new(), 0);
        for (n, line) in lines(&ran.stdout).enumerate() {
            received_lines += 1;
            if received.len() < RECEIVED_KEPT {
                received.push(shown(line));
            }
            match read_event(line) {
                Ok(answer) => got.extend(answer),
                Err(why) if stray.is_none() => {
                    stray = Some(format!(
                        "in {name}, stdout line {} is not an event ({why}): {}",
                        n + 1,
                        shown(line)
                    ));
                }
                Err(_) => {}
            }
        }
        let killed = ran.status.is_none().then_some(ended.as_str());

        // Answers on stderr: taken out of what is owed, so that the one
        // cause is named once, by `no-stderr-answers`.
        let moved = on_stderr(&owed.answers, &got, &ran.stderr);
        let kept: Vec<Answer> = owed
            .answers
            .iter()
            .enumerate()
            .filter(|(i, _)| !moved.iter().any(|(j, _)| j == i))
            .map(|(_, a)| a.clone())
            .collect();
        let on_stderr = moved.first().map(|(_, (n, line))| {
            format!(
                "in {name}, the answers went to stderr, not stdout: {} of the {} owed {} missing from stdout and on stderr, the first as stderr line {n}: {line}",
                moved.len(),
                owed.answers.len(),
                if moved.len() == 1 { "is" } else { "are" },
            )
        });

        let differs = match (&scenario.fails, read_on(&owed, &kept, &got)) {
            (Some(why), _) => Some(why.clone()),
            (None, Some(why)) => with_end(why, killed),
            (None, None) => match &scenario.long {
                Some((line, what)) => on_long_line(*line, what, &kept, &got, ran, &ended),
                None => answers_differ(&kept, &got, killed),
            },
        };
        let outcome = match (differs, moved.len()) {
            (Some(why), _) => Outcome::Fail(why),
            (None, 0) => Outcome::Pass,
            (None, 1) => Outcome::NotJudged(
                "its answer owed is on stderr, not stdout (no-stderr-answers)".to_owned(),
            ),
            (None, n) => Outcome::NotJudged(format!(
                "its {n} answers owed are on stderr, not stdout (no-stderr-answers)"
            )),
        };

        // The engine's answer to the line that ends reading, where the
        // crate's is: the k-th error owed is the k-th written (none when
        // it went to stderr).
        let errors: Vec<&String> = got
            .iter()
            .filter_map(|a| match a {
                Answer::Error(m) => Some(m),
                _ => None,
            })
            .collect();
        let said = kept
            .iter()
            .filter(|a| a.is_error())
            .position(|a| matches!(a, Answer::Stream(_)))
            .and_then(|k| errors.get(k))
            .filter(|said| said.starts_with(STREAM))
            .map(|said| (*said).clone());
        let stream = owed.answers.iter().find_map(|a| match a {
            Answer::Stream(m) => Some((said.clone(), m.clone())),
            _ => None,
        });

        Run {
            outcome,
            stray,
            on_stderr,
            stream,
            sent: lines(&input).map(shown).collect(),
            received,
            received_lines,
            stderr_tail: stderr_tail(&ran.stderr),
            ended,
            scenario,
        }
    }

    /// A failure this run shows, and why.
    fn failure(&self, why: String) -> Failure {
        Failure::new(
            why,
            self.scenario.name.to_owned(),
            self.sent.clone(),
            self.received.clone(),
            self.received_lines,
            self.stderr_tail.clone(),
            self.ended.clone(),
        )
    }
}

/// A line check's outcome, a failure shown by `run`, the run that showed
/// it.
fn check(name: &str, level: Level, rule: String, outcome: Outcome, run: Option<&Run>) -> Check {
    let failure = match (&outcome, run) {
        (Outcome::Fail(why), Some(run)) => Some(run.failure(why.clone())),
        (Outcome::Fail(_), None) => unreachable!("a failure is shown by a run"),
        _ => None,
    };
    Check::judged(name, level, rule, outcome, failure)
}

/// `why`, and how a killed engine ended when it was.
fn with_end(why: String, killed: Option<&str>) -> Option<String> {
    Some(match killed {
        Some(how) => format!("{why} ({how})"),
        None => why,
    })
}

/// Why a scenario about a long line fails, naming the line, and how the
/// engine ended when it did not exit cleanly: `the engine died on line 1,
/// a prompt of 4194304 bytes with a PNG image (it exited with status 1):
/// no jobs_snapshot answered request_id "..."`; `on line 1, ...: ...` when
/// it exited cleanly but an answer owed is missing.
fn on_long_line(
    line: u64,
    what: &str,
    owed: &[Answer],
    got: &[Answer],
    ran: &Ran,
    ended: &str,
) -> Option<String> {
    let killed = ran.status.is_none().then_some(ended);
    let Some(why) = answers_differ(owed, got, None) else {
        return killed.map(str::to_owned);
    };
    let verb = match ran.status {
        Some(status) if status.success() => None,
        Some(_) => Some("died"),
        None if ran.overflowed => Some("failed"),
        None => Some("hung"),
    };
    // An engine that ended cleanly is named with the line only when an
    // answer owed is missing: a stray answer is not the line's doing.
    let missing = owed.iter().any(|a| !got.iter().any(|g| a.accepts(g)));
    Some(match verb {
        Some(verb) => format!("the engine {verb} on line {line}, {what} (it {ended}): {why}"),
        None if missing => format!("on line {line}, {what}: {why}"),
        None => why,
    })
}

/// The answers owed (their index in `owed`) missing from stdout and found
/// on stderr, with that stderr line's number and text: an engine that
/// writes its answers as a log. An answer is found as an event after any
/// prefix (`answer: {"event":"command_error",...}`), or a `command_error`'s
/// message as a line or after a `: ` in it (`error: goal text must not be
/// blank`); one that ends reading as any line holding `command stream: `,
/// as its detail is the engine's. One pass over stderr, whatever its size
/// (up to 64 MiB) and however many answers are owed.
fn on_stderr(owed: &[Answer], got: &[Answer], stderr: &[u8]) -> Vec<(usize, (usize, String))> {
    use std::collections::{HashMap, VecDeque};
    type Waiting<'a> = HashMap<&'a str, VecDeque<usize>>;
    /// The first answer waiting for `key`, taken.
    fn first(of: &mut Waiting<'_>, key: &str) -> Option<usize> {
        let waiting = of.get_mut(key)?;
        let i = waiting.pop_front();
        if waiting.is_empty() {
            of.remove(key);
        }
        i
    }
    // Each missing answer by its message or `request_id`, in order.
    let (mut errors, mut snapshots, mut stream) = (Waiting::new(), Waiting::new(), None);
    for (i, answer) in owed.iter().enumerate() {
        if got.iter().any(|g| answer.accepts(g)) {
            continue;
        }
        match answer {
            Answer::Error(m) => errors.entry(m).or_default().push_back(i),
            Answer::Snapshot(id) => snapshots.entry(id).or_default().push_back(i),
            Answer::Stream(_) => stream = stream.or(Some(i)),
        }
    }
    let mut found = Vec::new();
    for (n, line) in lines(stderr).enumerate() {
        if errors.is_empty() && snapshots.is_empty() && stream.is_none() {
            break;
        }
        let text = String::from_utf8_lossy(line);
        let mut take = |i: Option<usize>| {
            if let Some(i) = i {
                found.push((i, (n + 1, shown(line))));
            }
        };
        if text.contains(STREAM) {
            take(stream.take());
        }
        // The event after any prefix: a command logged is none.
        match text.find('{').map(|at| read_event(&text.as_bytes()[at..])) {
            Some(Ok(Some(Answer::Error(m)))) => take(first(&mut errors, &m)),
            Some(Ok(Some(Answer::Snapshot(id)))) => take(first(&mut snapshots, &id)),
            _ => {}
        }
        // A message, as the line or after a `: ` in it; a line longer than
        // any message the crate writes is a log line, or data.
        if text.len() <= 64 << 10 {
            let text = text.trim_end_matches('\r');
            let starts = std::iter::once(0).chain(text.match_indices(": ").map(|(at, _)| at + 2));
            for at in starts {
                take(first(&mut errors, &text[at..]));
            }
        }
    }
    found.sort_unstable();
    found
}

/// Why the answers show the engine reading past the line that stops
/// reading: it answered that line as a command (a line over the limit), or
/// a line after it.
fn read_on(owed: &Owed, kept: &[Answer], got: &[Answer]) -> Option<String> {
    let stop = owed.stop.as_ref()?;
    if let Some(answer) = stop.read.as_ref().filter(|a| got.contains(a)) {
        return Some(format!(
            "the engine read {} as a command: it answered {}",
            stop.what,
            answer.shown()
        ));
    }
    let owed_errors = kept.iter().filter(|a| a.is_error()).count();
    let extra: Vec<&Answer> = got
        .iter()
        .filter(|a| a.is_error())
        .skip(owed_errors)
        .collect();
    stop.after.iter().find_map(|(n, answer)| {
        let seen = match answer {
            Answer::Snapshot(_) => got.contains(answer) && !kept.contains(answer),
            _ => extra.iter().any(|e| answer.accepts(e)),
        };
        seen.then(|| {
            format!(
                "the engine read on after {}: it answered line {n} with {}",
                stop.what,
                answer.shown()
            )
        })
    })
}

fn judge(runs: &[Run]) -> Vec<Check> {
    // The first run, in order, that shows it.
    let first = |of: fn(&Run) -> &Option<String>| {
        runs.iter()
            .find_map(|run| of(run).clone().map(|why| (why, run)))
    };
    let across = |name, rule: &str, found: Option<(String, &Run)>| match found {
        Some((why, run)) => check(
            name,
            Level::Must,
            rule.to_owned(),
            Outcome::Fail(why),
            Some(run),
        ),
        None => check(name, Level::Must, rule.to_owned(), Outcome::Pass, None),
    };
    let mut checks = vec![
        across(
            "stdout-events",
            "every line the engine writes on stdout, in every scenario, is an event (no banner, no log line)",
            first(|run| &run.stray),
        ),
        across(
            "no-stderr-answers",
            "no answer owed (a command_error, a jobs_snapshot) is written on stderr instead of stdout",
            first(|run| &run.on_stderr),
        ),
    ];
    for run in runs {
        let scenario = &run.scenario;
        checks.push(check(
            scenario.name,
            scenario.level,
            scenario.rule.clone(),
            run.outcome.clone(),
            Some(run),
        ));
        if scenario.name == "not-json" {
            let (outcome, rule) = not_json_detail(run);
            checks.push(check(
                "not-json-detail",
                Level::Should,
                rule,
                outcome,
                Some(run),
            ));
        }
    }
    checks
}

/// `not-json-detail`, judged on `not-json`'s run: the engine's `command
/// stream: ` error word for word the reference's.
fn not_json_detail(run: &Run) -> (Outcome, String) {
    let (said, owed) = run
        .stream
        .clone()
        .expect("not-json owes a command stream error");
    let rule = format!(
        "the command_error for the line that is not JSON is the reference's word for word: {}",
        quoted(&owed)
    );
    let outcome = match said {
        None => Outcome::NotJudged(
            "no command_error beginning \"command stream: \" answered the line that is not JSON on stdout (not-json)".to_owned(),
        ),
        Some(said) if said == owed => Outcome::Pass,
        Some(said) => Outcome::Fail(format!(
            "the line that is not JSON is answered {}; the reference answers {}",
            quoted(&said),
            quoted(&owed)
        )),
    };
    (outcome, rule)
}

/// Why the answers `got` are not those `owed`, if they are not: the
/// `command_error` messages must be those owed, in order (one that ends
/// reading any beginning `command stream: `); each `jobs_snapshot` owed
/// must come once, after the errors owed for the lines before it; none
/// other may come. An engine that was `killed` (how, said) fails for that
/// if for nothing else.
fn answers_differ(owed: &[Answer], got: &[Answer], killed: Option<&str>) -> Option<String> {
    let why = |what: String| with_end(what, killed);
    let owed_errors: Vec<&Answer> = owed.iter().filter(|a| a.is_error()).collect();
    let got_errors: Vec<&Answer> = got.iter().filter(|a| a.is_error()).collect();
    for (k, want) in owed_errors.iter().enumerate() {
        match got_errors.get(k) {
            None => {
                return why(format!(
                    "command_error {} of {} owed never came: {}",
                    k + 1,
                    owed_errors.len(),
                    want.owed_message()
                ))
            }
            Some(said) if !want.accepts(said) => {
                let (Answer::Error(m) | Answer::Stream(m) | Answer::Snapshot(m)) = said;
                return why(format!(
                    "command_error {} says {}; owed {}",
                    k + 1,
                    quoted(m),
                    want.owed_message()
                ));
            }
            Some(_) => {}
        }
    }
    if let Some(Answer::Error(extra) | Answer::Stream(extra) | Answer::Snapshot(extra)) =
        got_errors.get(owed_errors.len())
    {
        return why(format!(
            "command_error {} was not owed ({} owed): {}",
            owed_errors.len() + 1,
            owed_errors.len(),
            quoted(extra)
        ));
    }
    let mut errors_before = 0;
    for answer in owed {
        match answer {
            Answer::Error(_) | Answer::Stream(_) => errors_before += 1,
            Answer::Snapshot(id) => {
                let at: Vec<usize> = got
                    .iter()
                    .enumerate()
                    .filter(|(_, a)| *a == answer)
                    .map(|(i, _)| i)
                    .collect();
                match at[..] {
                    [] => {
                        return why(format!(
                            "no jobs_snapshot answered request_id {}",
                            quoted(id)
                        ))
                    }
                    [i] => {
                        let before = got[..i].iter().filter(|a| a.is_error()).count();
                        if before < errors_before {
                            return why(format!(
                                "the jobs_snapshot for {} came after {before} command_errors, before the {errors_before} owed for the lines sent before it",
                                quoted(id)
                            ));
                        }
                    }
                    _ => {
                        return why(format!(
                            "request_id {} was answered {} times",
                            quoted(id),
                            at.len()
                        ))
                    }
                }
            }
        }
    }
    // Every error came as owed: what is left is a snapshot.
    if let Some(extra) = got.iter().find(|a| !owed.contains(a) && !a.is_error()) {
        return why(format!(
            "{} answers no line the engine reads",
            extra.shown()
        ));
    }
    killed.map(str::to_owned)
}

#[cfg(test)]
mod tests {
    /// The names [`super::CheckEngine::only`] takes are the report's, in
    /// its order.
    #[test]
    fn the_line_checks_are_listed_in_the_reports_order() {
        let mut names = vec!["stdout-events", "no-stderr-answers"];
        for scenario in super::super::line_scenarios::scenarios(Some(1 << 23)) {
            names.push(scenario.name);
            if scenario.name == "not-json" {
                names.push("not-json-detail");
            }
        }
        assert_eq!(names, super::LINE_CHECKS);
    }

    use super::{answers_differ, on_stderr, read_on, Answer};
    use crate::workbench::answers::owed;

    /// Why answers differ from those owed, each rule's message exactly.
    #[test]
    fn answers_differ_says_which_rule_they_break() {
        use Answer::{Error as E, Snapshot as S};
        let (a, b) = (|| E("a".into()), || E("b".into()));
        let (s, t) = (|| S("s".into()), || S("t".into()));
        let c = || Answer::Stream("command stream: x".into());
        let cases: Vec<(Vec<Answer>, Vec<Answer>, Option<&str>)> = vec![
            (vec![a(), s()], vec![a(), s()], None),
            (vec![a()], vec![], Some("command_error 1 of 1 owed never came: \"a\"")),
            (vec![a()], vec![b()], Some("command_error 1 says \"b\"; owed \"a\"")),
            (vec![], vec![a()], Some("command_error 1 was not owed (0 owed): \"a\"")),
            (
                vec![a(), s()],
                vec![s(), a()],
                Some("the jobs_snapshot for \"s\" came after 0 command_errors, before the 1 owed for the lines sent before it"),
            ),
            (vec![s()], vec![], Some("no jobs_snapshot answered request_id \"s\"")),
            (vec![s()], vec![s(), s()], Some("request_id \"s\" was answered 2 times")),
            (vec![s()], vec![s(), t()], Some("jobs_snapshot \"t\" answers no line the engine reads")),
            // An error that ends reading: any message that begins
            // `command stream: `, the crate's shown when another came.
            (vec![s(), c()], vec![s(), E("command stream: Expecting value".into())], None),
            (
                vec![c()],
                vec![a()],
                Some("command_error 1 says \"a\"; owed one that begins \"command stream: \" (this crate's: \"command stream: x\")"),
            ),
            (
                vec![c()],
                vec![],
                Some("command_error 1 of 1 owed never came: one that begins \"command stream: \" (this crate's: \"command stream: x\")"),
            ),
        ];
        for (owed, got, want) in &cases {
            assert_eq!(
                answers_differ(owed, got, None).as_deref(),
                *want,
                "{owed:?} {got:?}"
            );
        }
        // A killed engine fails for that, and any other failure says it.
        let killed = Some("did not exit within the timeout; killed");
        assert_eq!(answers_differ(&[s()], &[s()], killed).as_deref(), killed);
        assert_eq!(
            answers_differ(&[a()], &[], killed).as_deref(),
            Some("command_error 1 of 1 owed never came: \"a\" (did not exit within the timeout; killed)")
        );
    }

    /// Reading on is named by the first line after the stop that was
    /// answered, or by the stop line itself answered as a command.
    #[test]
    fn reading_on_is_named_by_the_first_line_answered_after_the_stop() {
        use Answer::{Error as E, Snapshot as S};
        let input =
            b"{x\n{\"command\":\"nap\"}\n{\"command\":\"jobs_snapshot\",\"request_id\":\"b\"}\n";
        let owed = owed(input, 1000);
        let stream = E("command stream: oops".into());
        let nap = E("unknown command: nap".into());
        let cases: Vec<(Vec<Answer>, Option<&str>)> = vec![
            (vec![stream.clone()], None),
            (
                vec![stream.clone(), nap.clone(), S("b".into())],
                Some("the engine read on after a line that is not JSON (line 1: {x): it answered line 2 with command_error \"unknown command: nap\""),
            ),
            (
                vec![stream.clone(), S("b".into())],
                Some("the engine read on after a line that is not JSON (line 1: {x): it answered line 3 with jobs_snapshot \"b\""),
            ),
            // An extra error that answers no line after: another rule's.
            (vec![stream.clone(), E("x".into())], None),
        ];
        for (got, want) in &cases {
            assert_eq!(
                read_on(&owed, &owed.answers, got).as_deref(),
                *want,
                "{got:?}"
            );
        }
        let over = owed_over_limit();
        assert_eq!(
            read_on(&over, &over.answers, &[S("over".into())]).as_deref(),
            Some("the engine read a line over its declared limit of 10 bytes (line 1, 47 bytes) as a command: it answered jobs_snapshot \"over\"")
        );
    }

    fn owed_over_limit() -> super::Owed {
        owed(
            b"{\"command\":\"jobs_snapshot\",\"request_id\":\"over\"}\n",
            10,
        )
    }

    /// An answer owed missing from stdout is looked for on stderr: as an
    /// event after any prefix, an error's message as the line or after a
    /// `: `, a `command stream: ` one by that beginning; the first stderr
    /// line holding each is named, and a command logged is no answer.
    #[test]
    fn answers_on_stderr_are_found_as_events_or_messages() {
        use Answer::{Error as E, Snapshot as S, Stream as C};
        let owed = [
            E("expected a string \"text\" field".into()),
            S("s".into()),
            E("goal text must not be blank".into()),
            C("command stream: expected a string key at byte 1".into()),
            S("t".into()),
            E("goal text must not be blank".into()),
            S("u".into()),
            E("unknown command: nap".into()),
        ];
        let stderr = b"read {\"command\":\"jobs_snapshot\",\"request_id\":\"t\"}\n\
            log: {\"event\":\"command_error\",\"error\":\"expected a string \\\"text\\\" field\"}\n\
            error: goal text must not be blank\n\
            goal text must not be blank\r\n\
            engine: stopping: command stream: Expecting value\n\
            {\"event\":\"jobs_snapshot\",\"request_id\":\"t\",\"jobs\":[]}\n\
            unknown command: nap, said the engine\n";
        assert_eq!(
            on_stderr(&owed, &[S("s".into())], stderr),
            [
                (0, (2, "log: {\"event\":\"command_error\",\"error\":\"expected a string \\\"text\\\" field\"}".to_owned())),
                (2, (3, "error: goal text must not be blank".to_owned())),
                (3, (5, "engine: stopping: command stream: Expecting value".to_owned())),
                (4, (6, "{\"event\":\"jobs_snapshot\",\"request_id\":\"t\",\"jobs\":[]}".to_owned())),
                (5, (4, "goal text must not be blank\\r".to_owned())),
            ]
        );
        // Answered on stdout: not looked for.
        let got = [
            E("goal text must not be blank".into()),
            E("command stream: x".into()),
        ];
        assert_eq!(on_stderr(&owed[2..4], &got, stderr), []);
        assert_eq!(on_stderr(&owed, &[], b"nothing here\n"), []);
    }
}
