//! The engine checker's conversation checks: each a [`Session`] run on the
//! [`Runner`], judged by what the model attributes, with the promise it
//! holds the engine to named in the protocol's words when it breaks.

use super::report::{Check, Failure, Level, Outcome};
use super::runner::Runner;
use super::session::Session;
use super::verdict::SessionVerdict;
use std::io;
use std::time::Duration;

/// How long after the cancel was sent an event may arrive and still have
/// crossed it: what the pipes held then.
pub(super) const CROSSING_TIME: Duration = Duration::from_millis(250);

/// How a session's verdict is judged.
type Judge = fn(&SessionVerdict) -> Outcome;

/// One conversation check: its session and how its verdict is judged.
pub(super) struct ConversationCheck {
    pub(super) name: &'static str,
    pub(super) level: Level,
    pub(super) rule: &'static str,
    session: &'static str,
    judge: Judge,
    /// A second session and its judge, run only when the first passed.
    then: Option<(&'static str, Judge)>,
    /// A check that runs sessions of its own making, from what its first
    /// session showed (the cancel check: it measures the turn, then
    /// cancels in it).
    measured: Option<Measured>,
}

/// A check run by sessions made from what its own session measured.
type Measured = fn(&ConversationCheck, &Runner, &mut std::process::Command) -> io::Result<Check>;

/// A check every engine must pass: its name, the rule in the protocol's
/// words, its session (lines of the runner's format) and its judge.
fn must(
    name: &'static str,
    rule: &'static str,
    session: &'static str,
    judge: fn(&SessionVerdict) -> Outcome,
) -> ConversationCheck {
    ConversationCheck {
        name,
        level: Level::Must,
        rule,
        session,
        judge,
        then: None,
        measured: None,
    }
}

/// Every conversation check, in the order the report lists them.
pub(super) fn checks() -> Vec<ConversationCheck> {
    vec![
        must(
            "turn-ends",
            "a prompt's turn ends with exactly one terminal event (agent_finished, turn_failed or agent_aborted), and no event of that turn follows it",
            r#"{"send":{"command":"prompt","content":"Say hello in five words"}}"#,
            promises_kept,
        ),
        must(
            "prompts-queue",
            "prompts sent while a turn runs each get a turn of their own, one at a time, in the order sent, none lost",
            concat!(
                r#"{"send":{"command":"prompt","content":"First: say one"}}"#, "\n",
                r#"{"after":{"started":1},"send":{"command":"prompt","content":"Second: say two"}}"#, "\n",
                r#"{"after":{"started":1},"send":{"command":"prompt","content":"Third: say three"}}"#, "\n",
            ),
            prompts_queue,
        ),
        ConversationCheck {
            measured: Some(cancel_measured),
            ..must(
                "cancel",
                "cancel during a turn ends it with agent_aborted, and the engine goes on answering (the turn runs uncancelled first, to learn its length, then is cancelled three times in the first third of it; a turn too short to cancel well before its end is not judged)",
                MEASURE_TURN,
                promises_kept,
            )
        },
        must(
            "cancel-question",
            "cancel while a turn waits on its approval question ends that turn with agent_aborted (judged for engines that ask)",
            concat!(
                r#"{"send":{"command":"prompt","content":"Run the tests"}}"#, "\n",
                r#"{"after":{"asked":1},"send":{"command":"cancel"}}"#, "\n",
            ),
            cancel_question,
        ),
        must(
            "approval",
            "an approval question is held until its approval command, and resolved (approval_resolved) after it (judged for engines that ask)",
            concat!(
                r#"{"send":{"command":"prompt","content":"Run the tests"}}"#, "\n",
                r#"{"approval":{"asked":1,"allow":true}}"#, "\n",
            ),
            approval,
        ),
        must(
            "steer",
            "a prompt steer sent during a turn is answered by its submission_id: steer_applied in the turn, or steer_dropped (then not judged: the turn ended first)",
            concat!(
                r#"{"send":{"command":"prompt","content":"Write a haiku about rust"}}"#, "\n",
                r#"{"after":{"started":1},"send":{"command":"steer","content":"make it about iron","submission_id":"check-steer-1"}}"#, "\n",
            ),
            steer,
        ),
        must(
            "command-steer",
            "a command steer sent during a turn is answered (steer_applied, kind command) by its submission_id",
            concat!(
                r#"{"send":{"command":"prompt","content":"Write a haiku"}}"#, "\n",
                r#"{"after":{"started":1},"send":{"command":"steer","kind":"command","content":"/diff","submission_id":"check-steer-2"}}"#, "\n",
            ),
            promises_kept,
        ),
        must(
            "goal",
            "every goal command, set or clear, idle or during a turn, is answered by goal_updated",
            concat!(
                r#"{"send":{"command":"goal","action":"set","text":"the tests pass"}}"#, "\n",
                r#"{"after":{"answered":1},"send":{"command":"prompt","content":"Fix the failing test"}}"#, "\n",
                r#"{"after":{"started":2},"send":{"command":"goal","action":"clear"}}"#, "\n",
            ),
            promises_kept,
        ),
        must(
            "compact",
            "compact sent during a turn is answered after that turn: compaction_started then compaction_finished or compaction_failed, or compaction_failed alone",
            concat!(
                r#"{"send":{"command":"prompt","content":"Summarise the repository"}}"#, "\n",
                r#"{"after":{"started":1},"send":{"command":"compact"}}"#, "\n",
            ),
            promises_kept,
        ),
        must(
            "requests",
            "jobs_snapshot and job_stop are answered with the request_id sent, during a turn too",
            concat!(
                r#"{"send":{"command":"prompt","content":"Explain the build"}}"#, "\n",
                r#"{"after":{"started":1},"send":{"command":"jobs_snapshot","request_id":"check-jobs-1"}}"#, "\n",
                r#"{"after":{"started":1},"send":{"command":"job_stop","request_id":"check-stop-1","generation":"g-1","job_id":"job-1"}}"#, "\n",
            ),
            promises_kept,
        ),
        must(
            "end-of-input",
            "at the end of input, the work queued runs before the engine exits",
            concat!(
                r#"{"send":{"command":"prompt","content":"First"}}"#, "\n",
                r#"{"send":{"command":"prompt","content":"Second"}}"#, "\n",
                r#"{"send":{"command":"compact"}}"#, "\n",
                r#"{"close":true}"#, "\n",
            ),
            promises_kept,
        ),
        ConversationCheck {
            then: Some((
                concat!(
                    r#"{"send":{"command":"prompt","content":"Say hello"}}"#, "\n",
                    r#"{"approval":{"asked":1,"allow":true}}"#, "\n",
                    r#"{"after":{"ended":1},"send":{"command":"cancel"}}"#, "\n",
                    r#"{"after":{"predicted":1,"ms":2000},"close":true}"#, "\n",
                ),
                prediction_cancelled,
            )),
            ..must(
                "prediction",
                "the engine's own prediction_result comes only after a turn that ended agent_finished with nothing left to run, at most once, and never once a command that cancels it was read (an idle cancel sent at the turn's end: one coming well after it fails) (judged for engines that predict within 2 s of a turn's end)",
                concat!(
                    r#"{"send":{"command":"prompt","content":"Say hello"}}"#, "\n",
                    r#"{"approval":{"asked":1,"allow":true}}"#, "\n",
                    r#"{"after":{"predicted":1,"ms":2000},"close":true}"#, "\n",
                ),
                prediction,
            )
        },
    ]
}

impl ConversationCheck {
    /// The check's session.
    pub(super) fn session(&self) -> Session {
        Session::parse(self.session).expect("a built-in session reads")
    }

    /// Runs it on `engine` and judges it: its second session too, when it
    /// has one and the first passed.
    pub(super) fn run(
        &self,
        runner: &Runner,
        engine: &mut std::process::Command,
    ) -> io::Result<Check> {
        if let Some(measured) = self.measured {
            return measured(self, runner, engine);
        }
        let verdict = runner.run(&self.session(), engine)?;
        let check = self.judged(self.judge, &verdict);
        match self.then {
            Some((session, judge)) if check.passed() => {
                let session = Session::parse(session).expect("a built-in session reads");
                let verdict = runner.run(&session, engine)?;
                Ok(self.judged(judge, &verdict))
            }
            _ => Ok(check),
        }
    }

    /// Its check, judged on `verdict` by `judge`.
    fn judged(&self, judge: Judge, verdict: &SessionVerdict) -> Check {
        self.concluded(judge(verdict), verdict)
    }

    /// Its check, with `outcome`, shown by `verdict`'s lines.
    fn concluded(&self, outcome: Outcome, verdict: &SessionVerdict) -> Check {
        let failure = match &outcome {
            Outcome::Fail(why) => Some(Failure::of_session(why.clone(), self.name, verdict)),
            _ => None,
        };
        Check::judged(
            self.name,
            self.level,
            self.rule.to_owned(),
            outcome,
            failure,
        )
    }
}

/// A session file's check: every promise kept.
pub(super) fn session_check(name: &str, verdict: &SessionVerdict) -> Check {
    let outcome = promises_kept(verdict);
    let failure = match &outcome {
        Outcome::Fail(why) => Some(Failure::of_session(why.clone(), name, verdict)),
        _ => None,
    };
    Check::judged(
        name,
        Level::Must,
        "every event attributed by the conversation, nothing owed at the end".to_owned(),
        outcome,
        failure,
    )
    .with_missed(verdict.missed.clone())
}

/// Every event fits a rule and nothing is owed at the end: the first
/// broken promise, if one is.
fn promises_kept(verdict: &SessionVerdict) -> Outcome {
    match verdict.problems().into_iter().next() {
        Some(why) => Outcome::Fail(why),
        None => Outcome::Pass,
    }
}

/// The terminal event of command `n`'s turn, if it came.
fn terminal(verdict: &SessionVerdict, n: u64) -> Option<&'static str> {
    verdict
        .received
        .iter()
        .filter(|r| r.attribution.turn == Some(n))
        .filter_map(|r| r.attribution.event)
        .find(|e| matches!(*e, "agent_finished" | "turn_failed" | "agent_aborted"))
}

/// The turn the cancel check measures uncancelled: its prompt, and its
/// question answered when it asks one.
const MEASURE_TURN: &str = concat!(
    r#"{"send":{"command":"prompt","content":"Count to twenty, slowly"}}"#,
    "\n",
    r#"{"approval":{"asked":1,"allow":true}}"#,
    "\n",
);

/// Where in the measured turn each cancel is sent, as a fraction of its
/// uncancelled length (from its first event to its end): all in its first
/// third, each at a point of its own.
const CANCEL_AT: [(u32, u32); 3] = [(1, 8), (1, 6), (1, 4)];

/// A turn cancelled `ms` after its first event (a `jobs_snapshot` marks
/// that point, then the cancel follows after the pause; command 3), then
/// a `jobs_snapshot` once it ended: the engine goes on answering.
fn cancel_session(ms: Option<u128>) -> Session {
    let cancel = match ms {
        Some(ms) => format!(r#"{{"after":{{"ms":{ms}}},"send":{{"command":"cancel"}}}}"#),
        None => r#"{"send":{"command":"cancel"}}"#.to_owned(),
    };
    Session::parse(&format!(
        concat!(
            r#"{{"send":{{"command":"prompt","content":"Count to twenty, slowly"}}}}"#, "\n",
            r#"{{"after":{{"started":1}},"send":{{"command":"jobs_snapshot","request_id":"check-cancel-start"}}}}"#, "\n",
            "{}\n",
            r#"{{"after":{{"ended":1}},"send":{{"command":"jobs_snapshot","request_id":"check-cancel-after"}}}}"#, "\n",
        ),
        cancel
    ))
    .expect("a built-in session reads")
}

fn is_terminal(event: Option<&str>) -> bool {
    matches!(
        event,
        Some("agent_finished" | "turn_failed" | "agent_aborted")
    )
}

/// When command `n`'s turn wrote its first event and its terminal one,
/// and which that was.
pub(super) fn turn_span(
    verdict: &SessionVerdict,
    n: u64,
) -> Option<(Duration, Duration, &'static str)> {
    let mut events = verdict
        .received
        .iter()
        .filter(|r| r.attribution.turn == Some(n));
    let first = events.next()?;
    let end = std::iter::once(first)
        .chain(events)
        .find(|r| is_terminal(r.attribution.event))?;
    Some((first.at, end.at, end.attribution.event?))
}

/// Cancel judged, not guessed: the turn runs uncancelled first, to learn
/// how long the engine's turn is; then it is cancelled three times, at
/// points in the first third of that length. Every one of those turns
/// ended by `agent_finished` or `turn_failed` after its cancel is a fault
/// (the cancel had two thirds of a turn left to land); a turn too short to
/// cancel well before its end, or one that ended before its cancel was
/// sent, is a crossing on the pipes and not judged.
fn cancel_measured(
    check: &ConversationCheck,
    runner: &Runner,
    engine: &mut std::process::Command,
) -> io::Result<Check> {
    let measured = runner.run(&check.session(), engine)?;
    if let Outcome::Fail(why) = promises_kept(&measured) {
        return Ok(check.concluded(Outcome::Fail(why), &measured));
    }
    let Some((start, end, _)) = turn_span(&measured, 1) else {
        let why = "the turn of command 1 wrote no event: no turn to cancel".to_owned();
        return Ok(check.concluded(Outcome::NotJudged(why), &measured));
    };
    let length = end.saturating_sub(start);
    if too_short_to_cancel(length) {
        // Too short to cancel well before its end: one cancel at its
        // start, a fault only when a rule is broken.
        let verdict = runner.run(&cancel_session(None), engine)?;
        let outcome = match (promises_kept(&verdict), terminal(&verdict, 1)) {
            (Outcome::Fail(why), _) => Outcome::Fail(why),
            (_, Some("agent_aborted") | None) => Outcome::Pass,
            (_, Some(end)) => Outcome::NotJudged(format!(
                "the turn of command 1 ran uncancelled for less than {} ms, too short to send a cancel well before its end (it and the turn's last events may cross on the pipes for {} ms): the cancel sent at its start was answered by {end}",
                (CROSSING_TIME * 3 / 2).as_millis(),
                CROSSING_TIME.as_millis()
            )),
        };
        return Ok(check.concluded(outcome, &verdict));
    }
    // Per cancel: how far into the turn it was sent, the turn's end, and
    // how long after the cancel that came.
    let mut landed: Vec<Landed> = Vec::new();
    let mut shown = None;
    for at in cancel_points(length) {
        let verdict = runner.run(&cancel_session(Some(at)), engine)?;
        if let Outcome::Fail(why) = promises_kept(&verdict) {
            return Ok(check.concluded(Outcome::Fail(why), &verdict));
        }
        let sent = verdict.sent.iter().find(|s| s.n == 3).map(|s| s.at);
        if let (Some(sent), Some((first, end_at, end))) = (sent, turn_span(&verdict, 1)) {
            if end_at >= sent {
                let into = sent.saturating_sub(first).as_millis();
                landed.push((into, end, (end_at - sent).as_millis()));
                if end != "agent_aborted" {
                    shown = Some(verdict);
                }
                continue;
            }
        }
        shown.get_or_insert(verdict);
    }
    let outcome = cancels_judged(length, &landed);
    let verdict = shown.unwrap_or(measured);
    Ok(check.concluded(outcome, &verdict))
}

/// A cancel that reached its turn before the turn's end: how far into
/// the turn it was sent, how the turn ended, and how long after the
/// cancel that came (milliseconds).
type Landed = (u128, &'static str, u128);

/// When each cancel of [`CANCEL_AT`] is sent, in milliseconds after the
/// turn's first event, for a turn that ran `length` uncancelled.
fn cancel_points(length: Duration) -> [u128; CANCEL_AT.len()] {
    CANCEL_AT.map(|(num, den)| (length * num / den).as_millis())
}

/// Whether a turn that ran `length` uncancelled is too short to cancel
/// well before its end: its first two thirds are within the time a line
/// and the turn's last events may cross on the pipes.
pub(super) fn too_short_to_cancel(length: Duration) -> bool {
    length * 2 / 3 < CROSSING_TIME
}

/// The cancel check's outcome from the cancels of [`CANCEL_AT`] that
/// landed before their turn's end, for a turn that ran `length`
/// uncancelled: one `agent_aborted` passes; two or more ended otherwise
/// fail, with the evidence; fewer than two landed is a crossing.
fn cancels_judged(length: Duration, landed: &[Landed]) -> Outcome {
    let sent = CANCEL_AT.len();
    let aborted = landed.iter().filter(|l| l.1 == "agent_aborted").count();
    if aborted > 0 {
        Outcome::Pass
    } else if landed.len() >= 2 {
        // Each end once, in the order first seen.
        let mut ends: Vec<&str> = Vec::new();
        for l in landed {
            if !ends.contains(&l.1) {
                ends.push(l.1);
            }
        }
        let list = |f: fn(&Landed) -> u128| listed_ms(&landed.iter().map(f).collect::<Vec<_>>());
        Outcome::Fail(format!(
            "command 3 (cancel): {} of {sent} cancels sent in the first third of the turn's uncancelled length were answered by {}, not agent_aborted (the turn of command 1 ran {} ms uncancelled; the cancels were sent {} ms into it, and it ended {} ms after each)",
            landed.len(),
            ends.join(" or "),
            length.as_millis(),
            list(|l| l.0),
            list(|l| l.2),
        ))
    } else {
        Outcome::NotJudged(format!(
            "{} of {sent} turns cancelled in the first third of the turn's uncancelled length ({} ms) ended before the cancel was sent: the two crossed on the pipes",
            sent - landed.len(),
            length.as_millis()
        ))
    }
}

/// `250, 375 and 500`.
fn listed_ms(ms: &[u128]) -> String {
    let words: Vec<String> = ms.iter().map(u128::to_string).collect();
    match words.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => words.join(""),
    }
}

/// Turns are told apart only by order, so a lost prompt shows as the last
/// one owed: said as prompts lost, with how many turns ran.
fn prompts_queue(verdict: &SessionVerdict) -> Outcome {
    let outcome = promises_kept(verdict);
    let Outcome::Fail(why) = &outcome else {
        return outcome;
    };
    let lost = verdict.owed.queued.len();
    if lost == 0 || verdict.owed.running.is_some() || !verdict.violations.is_empty() {
        return outcome;
    }
    let ran = verdict
        .received
        .iter()
        .filter(|r| {
            r.attribution.turn.is_some()
                && matches!(
                    r.attribution.event,
                    Some("agent_finished" | "turn_failed" | "agent_aborted")
                )
        })
        .count();
    Outcome::Fail(format!(
        "prompts were lost: 3 were sent, {ran} turn{} ran (turns are told apart by order, so the last {} owed): {why}",
        if ran == 1 { "" } else { "s" },
        if lost == 1 { "prompt is the one" } else { "prompts are those" }
    ))
}

fn never_asked(verdict: &SessionVerdict) -> bool {
    verdict.missed.iter().any(|m| m.starts_with("step 2:"))
}

fn cancel_question(verdict: &SessionVerdict) -> Outcome {
    if never_asked(verdict) {
        return Outcome::NotJudged("the engine asked no approval question".to_owned());
    }
    if let Outcome::Fail(why) = promises_kept(verdict) {
        return Outcome::Fail(why);
    }
    match terminal(verdict, 1) {
        Some("agent_aborted") | None => Outcome::Pass,
        Some(end) => Outcome::Fail(format!(
            "command 2 (cancel): the turn of command 1 waited on its approval question and ended with {end}, not agent_aborted"
        )),
    }
}

fn approval(verdict: &SessionVerdict) -> Outcome {
    if never_asked(verdict) {
        return Outcome::NotJudged("the engine asked no approval question".to_owned());
    }
    let resolved: Vec<_> = verdict
        .received
        .iter()
        .filter(|r| r.attribution.event == Some("approval_resolved"))
        .collect();
    // Resolved before the approval was sent: a violation of its own when
    // it names a question never asked, which the model reports.
    let approval_sent = verdict.sent.iter().find(|s| s.n == 2).map(|s| s.at);
    let early = resolved.iter().find(|r| {
        r.attribution.answers.is_none()
            && r.attribution.violation.is_none()
            && approval_sent.is_none_or(|at| r.at < at)
    });
    if let Some(early) = early {
        return Outcome::Fail(format!(
            "command 2 (approval): the question was resolved at event {} before its approval command was sent: a question is held until the controller answers it",
            early.attribution.n
        ));
    }
    if let Outcome::Fail(why) = promises_kept(verdict) {
        return Outcome::Fail(why);
    }
    if resolved.iter().any(|r| r.attribution.answers == Some(2)) {
        Outcome::Pass
    } else {
        Outcome::Fail(format!(
            "command 2 (approval): its question was never resolved: no approval_resolved by the end (the engine {})",
            verdict.end
        ))
    }
}

fn steer(verdict: &SessionVerdict) -> Outcome {
    if let Outcome::Fail(why) = promises_kept(verdict) {
        return Outcome::Fail(why);
    }
    if verdict.answers(2).contains(&"steer_dropped") {
        Outcome::NotJudged(
            "the steer was dropped (steer_dropped): the turn ended before a step boundary took it, which is right, so there is no landing to judge".to_owned(),
        )
    } else {
        Outcome::Pass
    }
}

/// The events of `verdict` that are the engine's own predictions.
fn predictions(verdict: &SessionVerdict) -> impl Iterator<Item = &super::verdict::Received> {
    verdict
        .received
        .iter()
        .filter(|r| r.attribution.event == Some("prediction_result"))
}

/// The model judges every prediction that came; none is no fault (an
/// engine need not predict), but then nothing was judged.
fn prediction(verdict: &SessionVerdict) -> Outcome {
    if let Outcome::Fail(why) = promises_kept(verdict) {
        return Outcome::Fail(why);
    }
    if predictions(verdict).next().is_some() {
        return Outcome::Pass;
    }
    // Step 3 waits for the prediction (step 2 answers a question, if the
    // engine asks one).
    let open_question = |m: &&String| m.starts_with("step 3:") && m.contains("approval question");
    if let Some(missed) = verdict.missed.iter().find(open_question) {
        let why = missed
            .trim_start_matches("step 3: ")
            .trim_end_matches("; sent then");
        return Outcome::NotJudged(format!("no prediction came: {why}"));
    }
    match terminal(verdict, 1) {
        Some(end) if end != "agent_finished" => Outcome::NotJudged(format!(
            "the turn of command 1 ended with {end}, not agent_finished: no prediction may follow it, and none came"
        )),
        _ => Outcome::NotJudged(
            "the engine never predicted after a finished idle turn (no prediction_result within 2 s of its end)".to_owned(),
        ),
    }
}

/// A cancel sent idle right after the turn's end cancels the prediction
/// silently, and no event shows that the engine read it: a prediction
/// that comes well after the cancel was sent (past what the pipes held
/// then) was written after the engine read it.
fn prediction_cancelled(verdict: &SessionVerdict) -> Outcome {
    if let Outcome::Fail(why) = promises_kept(verdict) {
        return Outcome::Fail(why);
    }
    let Some(sent) = verdict.sent.iter().find(|s| s.n == 3) else {
        return Outcome::NotJudged("the cancel was never sent".to_owned());
    };
    let late = predictions(verdict).find(|r| r.at >= sent.at + CROSSING_TIME);
    match late {
        Some(late) => Outcome::Fail(format!(
            "command 3 (cancel): event {} (prediction_result) came {} ms after the idle cancel sent at the end of the turn of command 1, well after the {} ms in which the two may cross on the pipes: a cancel (as a prompt, a steer, compact or a goal) cancels the engine's prediction, which is then never written",
            late.attribution.n,
            (late.at - sent.at).as_millis(),
            CROSSING_TIME.as_millis()
        )),
        None => Outcome::Pass,
    }
}

#[cfg(test)]
mod tests {
    use super::{cancel_points, cancels_judged, checks, listed_ms, too_short_to_cancel, Landed};
    use crate::workbench::report::Outcome;
    use crate::workbench::session::Session;
    use std::time::Duration;

    /// A turn is cancelled three times only when two thirds of it are
    /// longer than the 250 ms a line and its events may cross in.
    #[test]
    fn a_turn_shorter_than_375_ms_is_too_short_to_cancel_three_times() {
        let short: Vec<bool> = [0, 374, 375, 376, 1044]
            .map(|ms| too_short_to_cancel(Duration::from_millis(ms)))
            .to_vec();
        assert_eq!(short, [true, true, false, false, false]);
    }

    /// The three cancels go at 1/8, 1/6 and 1/4 of the uncancelled turn.
    #[test]
    fn cancels_are_sent_in_the_first_quarter_of_the_turn() {
        assert_eq!(cancel_points(Duration::from_millis(1044)), [130, 174, 261]);
        assert_eq!(cancel_points(Duration::from_millis(375)), [46, 62, 93]);
    }

    #[test]
    fn milliseconds_are_listed_as_words() {
        let table: &[(&[u128], &str)] = &[
            (&[], ""),
            (&[5], "5"),
            (&[131, 174], "131 and 174"),
            (&[131, 174, 261], "131, 174 and 261"),
        ];
        for &(ms, words) in table {
            assert_eq!(listed_ms(ms), words, "{ms:?}");
        }
    }

    /// The cancels that landed before their turn's end, judged: one
    /// `agent_aborted` passes; two or more that ended otherwise fail, with
    /// the evidence; fewer is a crossing, not judged.
    #[test]
    fn cancels_that_landed_judged() {
        const FINISHED: &str = "agent_finished";
        let length = Duration::from_millis(1044);
        let table: &[(&[Landed], Outcome)] = &[
            (
                &[(131, FINISHED, 5), (174, FINISHED, 4), (261, FINISHED, 3)],
                Outcome::Fail("command 3 (cancel): 3 of 3 cancels sent in the first third of the turn's uncancelled length were answered by agent_finished, not agent_aborted (the turn of command 1 ran 1044 ms uncancelled; the cancels were sent 131, 174 and 261 ms into it, and it ended 5, 4 and 3 ms after each)".to_owned()),
            ),
            (
                &[(131, FINISHED, 5), (174, "turn_failed", 4), (261, FINISHED, 3)],
                Outcome::Fail("command 3 (cancel): 3 of 3 cancels sent in the first third of the turn's uncancelled length were answered by agent_finished or turn_failed, not agent_aborted (the turn of command 1 ran 1044 ms uncancelled; the cancels were sent 131, 174 and 261 ms into it, and it ended 5, 4 and 3 ms after each)".to_owned()),
            ),
            (
                &[(174, FINISHED, 4), (261, FINISHED, 3)],
                Outcome::Fail("command 3 (cancel): 2 of 3 cancels sent in the first third of the turn's uncancelled length were answered by agent_finished, not agent_aborted (the turn of command 1 ran 1044 ms uncancelled; the cancels were sent 174 and 261 ms into it, and it ended 4 and 3 ms after each)".to_owned()),
            ),
            (&[(131, FINISHED, 5), (174, "agent_aborted", 4), (261, FINISHED, 3)], Outcome::Pass),
            (&[(261, "agent_aborted", 3)], Outcome::Pass),
            (
                &[(261, FINISHED, 3)],
                Outcome::NotJudged("2 of 3 turns cancelled in the first third of the turn's uncancelled length (1044 ms) ended before the cancel was sent: the two crossed on the pipes".to_owned()),
            ),
            (
                &[],
                Outcome::NotJudged("3 of 3 turns cancelled in the first third of the turn's uncancelled length (1044 ms) ended before the cancel was sent: the two crossed on the pipes".to_owned()),
            ),
        ];
        for (landed, outcome) in table {
            assert_eq!(&cancels_judged(length, landed), outcome, "{landed:?}");
        }
    }

    /// Every built-in session reads, and names only commands sent before
    /// each step.
    #[test]
    fn every_session_reads() {
        for check in checks() {
            assert!(check.session().commands() >= 1, "{}", check.name);
            if let Some((session, _)) = check.then {
                assert!(
                    Session::parse(session).unwrap().commands() >= 1,
                    "{}",
                    check.name
                );
            }
        }
    }
}
