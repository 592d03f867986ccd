//! The engine fuzzer: generated sessions run on the [`Runner`], judged by
//! the model, and the first that breaks a promise shrunk to a minimal
//! session that still breaks it the same way.
//!
//! Generation and shrinking are proptest's ([`sessions`] is a `Strategy`
//! whose trees shrink toward fewer lines, simpler commands and fewer
//! waits); this module only drives the trees against an engine, with a
//! budget counted in runs.
//!
//! [`Runner`]: super::Runner

use super::conversation_checks::{too_short_to_cancel, turn_span};
use super::generate::{to_session, Line, When, PROMPTS, REFUSED};
use super::session::Session;
use super::verdict::SessionVerdict;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::collections::BTreeSet;
use std::io;
use std::time::{Duration, Instant};

/// Sessions of 1 to `max_commands` command lines, every command kind of
/// today's revision (valid, refused by the reader, declined by the serve
/// policy, and rarely a line that is not JSON), each sent at a point of the
/// conversation; weighted so that commands land while turns run. A tree
/// shrinks toward fewer lines, prompts, and lines sent at once.
pub fn sessions(max_commands: usize) -> impl Strategy<Value = Session> {
    (
        proptest::collection::vec(step(), 1..=max_commands.max(1)),
        any::<bool>(),
    )
        .prop_map(|(steps, close)| to_session(&steps, close))
}

fn step() -> impl Strategy<Value = (When, Line)> {
    prop_oneof![
        6 => (when(), line()),
        // A cancel at the first step of a running turn, well before its
        // end: what tells an engine that answers cancel with
        // agent_finished from a cancel that crossed the turn's end.
        1 => Just((When::Step { step: 1 }, Line::Cancel)),
    ]
}

fn when() -> impl Strategy<Value = When> {
    prop_oneof![
        3 => Just(When::Now),
        3 => (1..=3u64).prop_map(|back| When::Started { back }),
        2 => (1..=2u64).prop_map(|step| When::Step { step }),
        2 => (1..=3u64).prop_map(|back| When::Answered { back }),
        1 => (1..=3u64).prop_map(|back| When::Ended { back }),
        1 => (1..=2u64).prop_map(|k| When::Asked { k }),
        1 => (0..=50u64).prop_map(|ms| When::Pause { ms }),
    ]
}

fn line() -> impl Strategy<Value = Line> {
    prop_oneof![
        6 => (0..PROMPTS.len()).prop_map(Line::Prompt),
        2 => any::<bool>().prop_map(|tagged| Line::SteerPrompt { tagged }),
        1 => any::<bool>().prop_map(|tagged| Line::SteerCommand { tagged }),
        2 => Just(Line::Cancel),
        1 => any::<bool>().prop_map(|auto| Line::GoalSet { auto }),
        1 => Just(Line::GoalClear),
        1 => Just(Line::Compact),
        2 => Just(Line::JobsSnapshot),
        1 => Just(Line::JobStop),
        1 => ((1..=2u64), any::<bool>()).prop_map(|(asked, allow)| Line::Approve { asked, allow }),
        1 => (0..REFUSED.len()).prop_map(Line::Refused),
        1 => Just(Line::Declined),
        // Rare: the engine reads nothing after it.
        1 => Just(Line::NotJson),
    ]
}

/// How long a fuzz campaign runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Budget {
    /// This many sessions (a count: load cannot change what is run).
    Sessions(u64),
    /// Until this much time has passed.
    Time(Duration),
}

/// A fuzz campaign against one engine: generated sessions, each judged by
/// the model; the first that breaks a promise is shrunk, within a budget
/// of runs, to the smallest session that breaks it the same way, and
/// rerun to confirm.
#[derive(Clone, Debug)]
pub struct Fuzzer {
    seed: u64,
    max_commands: usize,
    shrink_runs: u32,
}

/// What a campaign has done so far, for its progress line.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct Progress {
    /// Sessions run (shrinking runs not counted).
    pub sessions: u64,
    /// Since the campaign started.
    pub elapsed: Duration,
    /// The rows of the model's table seen so far: `steer → steer_applied`,
    /// `turn → agent_aborted`, ...
    pub rows: BTreeSet<String>,
}

/// A broken promise the fuzzer found, shrunk.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Finding {
    /// The smallest session found that breaks it.
    pub session: Session,
    /// That session's verdict (from the confirming rerun when it
    /// confirmed).
    pub verdict: SessionVerdict,
    /// The broken promise, as the first run of the smallest session named
    /// it.
    pub why: String,
    /// The session generated that first broke it.
    pub found: Session,
    /// Runs spent shrinking.
    pub shrink_runs: u32,
    /// Whether a rerun of the smallest session broke it the same way.
    pub confirmed: bool,
    /// Whether that rerun was made: not when the time budget ran out
    /// first.
    pub rerun: bool,
    /// The `check-engine` check that judges it, when the model alone
    /// cannot (a cancel answered by `agent_finished` is a fault only
    /// early in a turn: `cancel`); `None` when `check-engine --session`
    /// reruns it.
    pub check: Option<&'static str>,
}

/// How a campaign ended.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Campaign {
    /// What it did.
    pub progress: Progress,
    /// What it found, if anything.
    pub finding: Option<Finding>,
}

impl Fuzzer {
    /// A campaign from `seed`: sessions of up to 6 command lines, at most
    /// 300 runs to shrink a finding.
    #[must_use]
    pub fn new(seed: u64) -> Fuzzer {
        Fuzzer {
            seed,
            max_commands: 6,
            shrink_runs: 300,
        }
    }

    /// The most command lines a generated session has.
    #[must_use]
    pub fn max_commands(mut self, max: usize) -> Fuzzer {
        self.max_commands = max.max(1);
        self
    }

    /// The most runs spent shrinking a finding: shrinking stops there and
    /// keeps the smallest failing session found.
    #[must_use]
    pub fn shrink_runs(mut self, runs: u32) -> Fuzzer {
        self.shrink_runs = runs;
        self
    }

    /// Runs the campaign: `run` runs one session against the engine (a
    /// [`Runner`](super::Runner) over a child or in process); `progress`
    /// is told after each session.
    ///
    /// # Errors
    ///
    /// The first error of `run` (the engine cannot be started).
    pub fn run(
        &self,
        budget: Budget,
        mut run: impl FnMut(&Session) -> io::Result<SessionVerdict>,
        mut progress: impl FnMut(&Progress),
    ) -> io::Result<Campaign> {
        let start = Instant::now();
        let mut seed = [0u8; 32];
        seed[..8].copy_from_slice(&self.seed.to_le_bytes());
        let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &seed);
        let mut runner = TestRunner::new_with_rng(Config::default(), rng);
        let strategy = sessions(self.max_commands);
        let mut done = Progress::default();
        let mut cancels = Cancels::default();
        loop {
            let more = match budget {
                Budget::Sessions(n) => done.sessions < n,
                // The last quarter is kept for shrinking a finding.
                Budget::Time(d) => start.elapsed() < d * 3 / 4,
            };
            if !more {
                return Ok(Campaign {
                    progress: done,
                    finding: None,
                });
            }
            let mut tree = strategy
                .new_tree(&mut runner)
                .map_err(|e| io::Error::other(format!("the session generator: {e}")))?;
            let session = tree.current();
            let verdict = run(&session)?;
            done.sessions += 1;
            done.elapsed = start.elapsed();
            rows(&verdict, &mut done.rows);
            progress(&done);
            let deadline = match budget {
                Budget::Time(d) => Some(start + d),
                Budget::Sessions(_) => None,
            };
            let Some(why) = verdict.problems().into_iter().next() else {
                if let Some(why) = cancels.learn(&verdict) {
                    let finding = cancels.confirm(session, verdict, why, deadline, &mut run)?;
                    return Ok(Campaign {
                        progress: done,
                        finding: Some(finding),
                    });
                }
                continue;
            };
            // `elapsed` stays the sessions' time: shrinking is counted in
            // runs, on the finding.
            let finding = self.shrink(&mut tree, session, verdict, why, deadline, &mut run)?;
            return Ok(Campaign {
                progress: done,
                finding: Some(finding),
            });
        }
    }

    /// Shrinks a failing tree as proptest's runner does (simplify while it
    /// fails the same way, complicate when it passes), within the budget.
    fn shrink(
        &self,
        tree: &mut impl ValueTree<Value = Session>,
        found: Session,
        verdict: SessionVerdict,
        why: String,
        deadline: Option<Instant>,
        run: &mut impl FnMut(&Session) -> io::Result<SessionVerdict>,
    ) -> io::Result<Finding> {
        let in_time = || deadline.is_none_or(|d| Instant::now() < d);
        let kind = failure_kind(&why);
        let (mut best, mut best_verdict, mut best_why) = (found.clone(), verdict, why);
        let mut runs = 0;
        if tree.simplify() {
            while runs < self.shrink_runs && in_time() {
                runs += 1;
                let candidate = tree.current();
                let verdict = run(&candidate)?;
                let same = verdict
                    .problems()
                    .into_iter()
                    .next()
                    .filter(|why| failure_kind(why) == kind);
                let more = match same {
                    Some(why) => {
                        // Kept when no longer than the best: a shrink may
                        // trade a line for a simpler one.
                        if candidate.steps().len() <= best.steps().len() {
                            (best, best_verdict, best_why) = (candidate, verdict, why);
                        }
                        tree.simplify()
                    }
                    None => tree.complicate(),
                };
                if !more {
                    break;
                }
            }
        }
        let rerun = if in_time() { Some(run(&best)?) } else { None };
        let confirmed = rerun.as_ref().is_some_and(|rerun| {
            rerun
                .problems()
                .first()
                .is_some_and(|why| failure_kind(why) == kind)
        });
        Ok(Finding {
            session: best,
            rerun: rerun.is_some(),
            verdict: match rerun {
                Some(rerun) if confirmed => rerun,
                _ => best_verdict,
            },
            why: best_why,
            found,
            shrink_runs: runs,
            confirmed,
            check: None,
        })
    }
}

/// Cancels sent early in a turn, and how those turns ended: the model
/// cannot tell a cancel that crossed a turn's end on the pipes from one
/// the engine answered with `agent_finished`, so the campaign learns how
/// long the engine's turns run uncancelled (the median of those seen) and
/// judges the cancels sent in the first third of that length, as
/// `check-engine`'s `cancel` does: three of them answered by
/// `agent_finished` or `turn_failed`, and none by `agent_aborted`, is a
/// finding.
#[derive(Default)]
struct Cancels {
    /// How long each uncancelled turn that ended `agent_finished` ran,
    /// from its first event to its end.
    lengths: Vec<Duration>,
    /// Each cancel sent while a turn ran: how far into the turn (from its
    /// first event), and how that turn ended.
    cancels: Vec<(Duration, &'static str)>,
}

/// Early cancels answered otherwise before it is a finding.
const CANCELS_JUDGED: usize = 3;
/// Uncancelled turns seen before a turn's length is taken as known.
const TURNS_MEASURED: usize = 3;

impl Cancels {
    /// The median uncancelled turn, once enough were seen.
    fn length(&self) -> Option<Duration> {
        if self.lengths.len() < TURNS_MEASURED {
            return None;
        }
        let mut sorted = self.lengths.clone();
        sorted.sort();
        Some(sorted[sorted.len() / 2])
    }

    /// Each cancel of `verdict` sent while a turn ran (after its first
    /// event, before its end): how far in, and how that turn ended.
    fn in_turns(verdict: &SessionVerdict) -> Vec<(Duration, &'static str)> {
        let spans = spans(verdict);
        verdict
            .sent
            .iter()
            .filter(|s| verdict.command_name(s.n) == Some("cancel"))
            .filter_map(|s| {
                let (first, _, end) = spans
                    .iter()
                    .find(|(first, end_at, _)| *first <= s.at && s.at <= *end_at)?;
                Some((s.at - *first, *end))
            })
            .collect()
    }

    /// Of `cancels`, those sent in the first third of a turn `length` long
    /// (one that leaves a cancel time to land).
    fn early(
        cancels: &[(Duration, &'static str)],
        length: Duration,
    ) -> Vec<(Duration, &'static str)> {
        if too_short_to_cancel(length) {
            return Vec::new();
        }
        cancels
            .iter()
            .copied()
            .filter(|(into, _)| *into * 3 <= length)
            .collect()
    }

    /// Learns from `verdict`: its uncancelled turns' lengths and its
    /// cancels; the finding's why, once the evidence holds.
    fn learn(&mut self, verdict: &SessionVerdict) -> Option<String> {
        let cancels: Vec<_> = verdict
            .sent
            .iter()
            .filter(|s| verdict.command_name(s.n) == Some("cancel"))
            .map(|s| s.at)
            .collect();
        for (first, end_at, end) in spans(verdict) {
            if end == "agent_finished" && !cancels.iter().any(|&at| first <= at && at <= end_at) {
                self.lengths.push(end_at - first);
            }
        }
        self.cancels.extend(Cancels::in_turns(verdict));
        let length = self.length()?;
        let early = Cancels::early(&self.cancels, length);
        let ended: Vec<_> = early.iter().filter(|e| e.1 != "agent_aborted").collect();
        (ended.len() == early.len() && ended.len() >= CANCELS_JUDGED).then(|| {
            let mut ends: Vec<&str> = ended.iter().map(|e| e.1).collect();
            ends.sort_unstable();
            ends.dedup();
            format!(
                "{n} of {n} cancels sent in the first third of the turn's uncancelled length were answered by {}, not agent_aborted (the engine's turns ran {} ms uncancelled, the median of {}; the cancels were sent {} ms into their turns)",
                ends.join(" or "),
                length.as_millis(),
                self.lengths.len(),
                ended
                    .iter()
                    .map(|e| e.0.as_millis().to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                n = ended.len(),
            )
        })
    }

    /// The finding, its session the last that showed it, rerun (in time)
    /// to see an early cancel answered otherwise again.
    fn confirm(
        &self,
        session: Session,
        verdict: SessionVerdict,
        why: String,
        deadline: Option<Instant>,
        run: &mut impl FnMut(&Session) -> io::Result<SessionVerdict>,
    ) -> io::Result<Finding> {
        let rerun = if deadline.is_none_or(|d| Instant::now() < d) {
            Some(run(&session)?)
        } else {
            None
        };
        let length = self.length().unwrap_or_default();
        let confirmed = rerun.as_ref().is_some_and(|rerun| {
            Cancels::early(&Cancels::in_turns(rerun), length)
                .iter()
                .any(|e| e.1 != "agent_aborted")
        });
        Ok(Finding {
            found: session.clone(),
            session,
            rerun: rerun.is_some(),
            verdict: match rerun {
                Some(rerun) if confirmed => rerun,
                _ => verdict,
            },
            why,
            shrink_runs: 0,
            confirmed,
            check: Some("cancel"),
        })
    }
}

/// Each turn of `verdict` that ended: its first event, its end, and how.
fn spans(verdict: &SessionVerdict) -> Vec<(Duration, Duration, &'static str)> {
    let mut turns: Vec<u64> = verdict
        .received
        .iter()
        .filter_map(|r| r.attribution.turn)
        .collect();
    turns.sort_unstable();
    turns.dedup();
    turns
        .into_iter()
        .filter_map(|n| turn_span(verdict, n))
        .collect()
}

/// What makes two failures the same: the broken promise with its numbers,
/// ids and how the engine ended left out (`command # (prompt): its turn
/// never ended: ...`).
#[must_use]
pub fn failure_kind(why: &str) -> String {
    let why = why.split(" by the end").next().unwrap_or(why);
    let mut out = String::with_capacity(why.len());
    let mut quoted = false;
    let mut digits = false;
    for c in why.chars() {
        if c == '"' {
            quoted = !quoted;
            if quoted {
                out.push_str("\"…\"");
            }
            continue;
        }
        if quoted {
            continue;
        }
        if c.is_ascii_digit() {
            if !digits {
                out.push('#');
            }
            digits = true;
            continue;
        }
        digits = false;
        out.push(c);
    }
    out
}

/// The rows of the model's table a verdict shows: what answered each
/// command kind, and how each turn ended.
fn rows(verdict: &SessionVerdict, seen: &mut BTreeSet<String>) {
    for received in &verdict.received {
        let a = &received.attribution;
        let Some(event) = a.event else { continue };
        if let Some(k) = a.answers {
            let name = verdict.command_name(k).unwrap_or("refused line");
            seen.insert(format!("{name} → {event}"));
        } else if a.turn.is_some()
            && matches!(event, "agent_finished" | "turn_failed" | "agent_aborted")
        {
            seen.insert(format!("turn → {event}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{failure_kind, sessions, Cancels};
    use proptest::strategy::{Strategy, ValueTree};
    use proptest::test_runner::TestRunner;
    use std::time::Duration;

    fn ms(ms: u64) -> Duration {
        Duration::from_millis(ms)
    }

    /// A turn's uncancelled length is known once three were seen: their
    /// median (the upper one of an even count).
    #[test]
    fn the_turns_length_is_the_median_of_three_or_more() {
        let table: &[(&[u64], Option<u64>)] = &[
            (&[], None),
            (&[300, 100], None),
            (&[300, 100, 200], Some(200)),
            (&[400, 100, 300, 200], Some(300)),
        ];
        for &(lengths, median) in table {
            let cancels = Cancels {
                lengths: lengths.iter().map(|&l| ms(l)).collect(),
                cancels: Vec::new(),
            };
            assert_eq!(cancels.length(), median.map(ms), "{lengths:?}");
        }
    }

    /// The cancels judged: those in the first third of a turn long enough
    /// to cancel well before its end (375 ms or more), as check-engine's.
    #[test]
    fn early_cancels_are_those_in_the_first_third() {
        let cancels = [
            (ms(50), "agent_aborted"),
            (ms(200), "agent_finished"),
            (ms(201), "agent_finished"),
        ];
        assert_eq!(
            Cancels::early(&cancels, ms(600)),
            [(ms(50), "agent_aborted"), (ms(200), "agent_finished")]
        );
        assert_eq!(Cancels::early(&cancels, ms(374)), []);
        assert_eq!(
            Cancels::early(&cancels, ms(375)),
            [(ms(50), "agent_aborted")]
        );
    }

    #[test]
    fn a_failure_kind_leaves_out_numbers_ids_and_the_end() {
        let table = [
            (
                "command 3 (prompt): its turn never ended: no agent_finished, turn_failed or agent_aborted by the end (the engine exited with status 0)",
                "command # (prompt): its turn never ended: no agent_finished, turn_failed or agent_aborted",
            ),
            (
                "event 12 (jobs_snapshot) fits no rule of the conversation: jobs_snapshot answers no jobs_snapshot command: none unanswered with request_id \"x-req-2\"",
                "event # (jobs_snapshot) fits no rule of the conversation: jobs_snapshot answers no jobs_snapshot command: none unanswered with request_id \"…\"",
            ),
        ];
        for (why, kind) in table {
            assert_eq!(failure_kind(why), kind);
        }
    }

    /// Every generated session writes a file that reads back as itself.
    #[test]
    fn generated_sessions_read_back_from_their_file() {
        let mut runner = TestRunner::deterministic();
        for _ in 0..200 {
            let session = sessions(6).new_tree(&mut runner).unwrap().current();
            let text = session.to_jsonl();
            assert_eq!(super::Session::parse(&text).unwrap(), session, "{text}");
        }
    }
}
