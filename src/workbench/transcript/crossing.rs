//! Crossings on the pipes: when a command line and the events of a turn
//! it was sent during crossed (the engine may have written them before it
//! read the line), judged from when each line came, so that a replay sets
//! such a difference apart instead of counting it.

/// One line of the engine's stdout as the crossings are judged: when it
/// came, and what the model attributed it to.
#[derive(Clone, Copy, Debug)]
pub(super) struct Point {
    /// Microseconds since the recording began, when it says.
    pub(super) at: Option<u64>,
    pub(super) answers: Option<u64>,
    /// The work it belongs to: its turn's command, or its compaction's.
    pub(super) work: Option<u64>,
    /// It ends its work (`agent_finished`, `turn_failed`, `agent_aborted`,
    /// `compaction_finished`, `compaction_failed`).
    pub(super) end: bool,
    /// It is the engine's own `prediction_result`, after its turn.
    pub(super) prediction: bool,
    /// It is an `approval_resolved` `cancelled`: a `cancel` was read (or
    /// the input ended).
    pub(super) cancelled: bool,
}

/// One command line as the crossings are judged.
#[derive(Clone, Copy, Debug)]
pub(super) struct Sent {
    /// Its name, `refused`, `blank` or `unread`.
    pub(super) kind: &'static str,
    /// Microseconds since the recording began, when it says.
    pub(super) at: Option<u64>,
    /// How many of the engine's lines had come before it was sent.
    pub(super) before: usize,
}

/// One run as the crossings are judged: the engine's lines and the
/// command lines, each with when it came.
#[derive(Clone, Debug, Default)]
pub(super) struct Timeline {
    pub(super) points: Vec<Point>,
    pub(super) sent: Vec<Sent>,
}

/// The lines whose effect depends on where in a turn the engine reads
/// them: what answered these is not compared when they crossed a turn (or
/// were sent during one that a line crossed), and one of these that came
/// after a turn was over may have landed in the turn queued after it. Any
/// line the engine reads may cross a turn (and so delay the point the next
/// line waits for).
pub(super) const LANDS: [&str; 4] = ["cancel", "steer", "goal", "approval"];

/// A line that crossed a turn on the pipes.
#[derive(Clone, Copy, Debug)]
pub(super) struct Crossing {
    pub(super) turn: u64,
    pub(super) line: u64,
    /// In the recording (otherwise in the new run).
    recording: bool,
    /// The turn was over when the line (one that lands in a turn) came, in
    /// a run: it may have landed in the turn queued after it.
    pub(super) over: bool,
}

impl Crossing {
    /// Why, in words: which line, which turn, which run.
    pub(super) fn why(&self, recording: &Timeline, other: &Timeline) -> String {
        format!(
            "command {} ({}) and the turn of command {} crossed on the pipes in {}",
            self.line,
            recording
                .kind(self.line)
                .or(other.kind(self.line))
                .unwrap_or(""),
            self.turn,
            if self.recording {
                "the recording"
            } else {
                "this run"
            }
        )
    }
}

/// Command line `n`'s place among a run's, counted from 0.
pub(super) fn index(n: u64) -> Option<usize> {
    usize::try_from(n.checked_sub(1)?).ok()
}

/// The lines that crossed a turn on the pipes, in either run (`recording`
/// and `other`), by the turn and the line, first found first.
pub(super) fn crossings(
    recording: &Timeline,
    other: &Timeline,
    count: u64,
    window: u64,
) -> Vec<Crossing> {
    let mut turns: Vec<u64> = recording
        .points
        .iter()
        .chain(&other.points)
        .filter_map(|p| p.work)
        .collect();
    turns.sort_unstable();
    turns.dedup();
    let mut out = Vec::new();
    for &turn in &turns {
        for line in turn + 1..=count {
            let kind = recording.kind(line).or(other.kind(line)).unwrap_or("");
            // Lines the engine never reads, and a blank one, cross nothing.
            if matches!(kind, "unread" | "blank") {
                continue;
            }
            let (ours, theirs) = (
                recording.crossed(turn, line, window),
                other.crossed(turn, line, window),
            );
            if ours.or(theirs).is_some() {
                out.push(Crossing {
                    turn,
                    line,
                    recording: ours.is_some(),
                    over: LANDS.contains(&kind)
                        && (ours.unwrap_or(false) || theirs.unwrap_or(false)),
                });
            }
        }
    }
    out
}

impl Timeline {
    /// Command line `n`'s kind.
    pub(super) fn kind(&self, n: u64) -> Option<&'static str> {
        Some(self.sent.get(index(n)?)?.kind)
    }

    /// How many of the engine's lines had come before command line `n`
    /// was sent (all of them when it was not).
    pub(super) fn before(&self, n: u64) -> usize {
        index(n)
            .and_then(|i| self.sent.get(i))
            .map_or(usize::MAX, |s| s.before)
    }

    /// The index of the event that ended command `t`'s work.
    fn end_of(&self, t: u64) -> Option<usize> {
        self.points.iter().position(|p| p.end && p.work == Some(t))
    }

    /// Whether command line `c` was sent after command `t` and before its
    /// work's end came.
    pub(super) fn during(&self, t: u64, c: u64) -> bool {
        let sent = index(c).and_then(|i| self.sent.get(i));
        c > t && sent.is_some_and(|s| self.end_of(t).is_none_or(|end| s.before <= end))
    }

    /// Whether command line `c`, sent during command `t`'s turn (or
    /// compaction), crossed it on the pipes (and whether the turn was then
    /// over): the turn's events after it, until something answered it or a
    /// later line, came in one burst, within `window` microseconds (and
    /// within `window` of the line, once the turn had begun), at a pace at
    /// which they may have been written before it was read.
    fn crossed(&self, t: u64, c: u64, window: u64) -> Option<bool> {
        if !self.during(t, c) {
            return None;
        }
        let line = self.sent.get(index(c)?)?;
        // A recording with no times cannot tell.
        let sent = line.at?;
        let (before, after) = self.points.split_at(line.before.min(self.points.len()));
        let mut burst: Vec<u64> = Vec::new();
        let mut over = false;
        for p in after {
            // What shows the engine read it (or a later line) ends it.
            if p.answers.is_some_and(|k| k >= c) || (p.cancelled && line.kind == "cancel") {
                break;
            }
            if p.work != Some(t) || p.prediction {
                continue;
            }
            burst.push(p.at?);
            if p.end {
                over = true;
                break;
            }
        }
        let (&first, &last) = (burst.first()?, burst.last()?);
        let times: Vec<u64> = before
            .iter()
            .filter(|p| p.work == Some(t) && !p.prediction)
            .filter_map(|p| p.at)
            .collect();
        // A turn that had begun and paused after the line was reading.
        let paused = !times.is_empty() && first.saturating_sub(sent) > window;
        // A turn whose events came far apart (two windows) before the
        // line, then at once after it, answered it: that is no crossing.
        let pace = times.windows(2).map(|w| w[1].saturating_sub(w[0])).min();
        let slow = pace.is_some_and(|pace| pace > window.saturating_mul(2));
        (last.saturating_sub(first) <= window && !paused && !slow).then_some(over)
    }

    /// How many `prediction_result`s followed command `t`'s turn.
    fn predictions(&self, t: u64) -> usize {
        self.points
            .iter()
            .filter(|p| p.prediction && p.work == Some(t))
            .count()
    }

    /// The end of command `t`'s turn: its index, and when it came.
    fn end_at(&self, t: u64) -> Option<(usize, u64)> {
        let end = self.end_of(t)?;
        Some((end, self.points[end].at?))
    }
}

/// Why a `prediction_result` after command `t`'s turn that one run has and
/// the other lacks is a crossing: the run that lacks it sent its next line
/// (or ended its input) no later after the turn's end than the other's
/// prediction came, plus the window.
pub(super) fn beaten(
    recording: &Timeline,
    other: &Timeline,
    t: u64,
    window: u64,
) -> Option<String> {
    let (lacking, having, who) = match recording.predictions(t).cmp(&other.predictions(t)) {
        std::cmp::Ordering::Less => (recording, other, "the recording"),
        std::cmp::Ordering::Greater => (other, recording, "this run"),
        std::cmp::Ordering::Equal => return None,
    };
    let (_, having_end) = having.end_at(t)?;
    let came = having
        .points
        .iter()
        .find(|p| p.prediction && p.work == Some(t))?
        .at?
        .saturating_sub(having_end);
    let (end, lacking_end) = lacking.end_at(t)?;
    let next = lacking.sent.iter().position(|s| s.before > end);
    let beaten = next.is_none_or(|i| {
        lacking.sent[i]
            .at
            .is_some_and(|at| at.saturating_sub(lacking_end) <= came.saturating_add(window))
    });
    beaten.then(|| {
        let by = match next {
            Some(i) => format!("command {} ({})", i + 1, lacking.sent[i].kind),
            None => "the end of input".to_owned(),
        };
        format!("the turn's prediction_result and {by} crossed on the pipes in {who}")
    })
}

/// Why command `t`'s turn differs only in which kinds of delta it
/// streamed (`deltas`: per run, each delta of the turn by its index and
/// kind), when every delta of a kind one run streamed and the other did
/// not came after a line that lands in a turn, sent during it: how much
/// text comes before a `cancel` (or a steer, a goal) takes hold is pace.
pub(super) fn streamed(
    recording: &Timeline,
    other: &Timeline,
    t: u64,
    deltas: [&[(usize, &str)]; 2],
) -> Option<String> {
    let mut why = None;
    for kind in ["assistant_delta", "reasoning_delta"] {
        let has = deltas.map(|d| d.iter().any(|(_, k)| *k == kind));
        if has[0] == has[1] {
            continue;
        }
        let (x, run, who) = if has[0] {
            (recording, 0, "the recording")
        } else {
            (other, 1, "this run")
        };
        let line = (t + 1..=x.sent.len() as u64)
            .find(|&c| LANDS.contains(&x.kind(c).unwrap_or("")) && x.during(t, c))?;
        let before = x.before(line);
        if deltas[run].iter().any(|&(i, k)| k == kind && i < before) {
            return None;
        }
        why = Some(format!(
            "command {line} ({}) and the turn's text crossed on the pipes in {who}",
            x.kind(line).unwrap_or("")
        ));
    }
    why
}

#[cfg(test)]
mod tests {
    use super::{beaten, crossings, index, streamed, Point, Sent, Timeline};

    /// The window every test judges by: 100 ms, in microseconds.
    const W: u64 = 100_000;

    /// An event of command `work`'s turn, `ms` into the run.
    fn ev(ms: u64, work: u64) -> Point {
        Point {
            at: Some(ms * 1000),
            answers: None,
            work: Some(work),
            end: false,
            prediction: false,
            cancelled: false,
        }
    }

    /// The event ending command `work`'s turn.
    fn end(ms: u64, work: u64) -> Point {
        Point {
            end: true,
            ..ev(ms, work)
        }
    }

    /// The `prediction_result` after command `work`'s turn.
    fn predicted(ms: u64, work: u64) -> Point {
        Point {
            prediction: true,
            ..ev(ms, work)
        }
    }

    /// An event answering command line `n`, in no turn.
    fn answer(ms: u64, n: u64) -> Point {
        Point {
            answers: Some(n),
            work: None,
            ..ev(ms, 0)
        }
    }

    /// A command line of `kind` sent `ms` into the run, after `before`
    /// of the engine's lines.
    fn sent(kind: &'static str, ms: u64, before: usize) -> Sent {
        Sent {
            kind,
            at: Some(ms * 1000),
            before,
        }
    }

    fn timeline(points: Vec<Point>, sent: Vec<Sent>) -> Timeline {
        Timeline { points, sent }
    }

    /// A turn streaming every 50 ms, and `kind` sent 100 ms in, 1 ms
    /// before the rest of the turn came in one burst, its end included.
    fn crossed_by(kind: &'static str) -> Timeline {
        timeline(
            vec![ev(10, 1), ev(60, 1), ev(101, 1), end(102, 1)],
            vec![sent("prompt", 0, 0), sent(kind, 100, 2)],
        )
    }

    /// A crossing found: (turn, line, in the recording, over).
    type Found = (u64, u64, bool, bool);

    /// The crossings found.
    fn found(recording: &Timeline, other: &Timeline) -> Vec<Found> {
        let count = recording.sent.len().max(other.sent.len()) as u64;
        crossings(recording, other, count, W)
            .iter()
            .map(|x| (x.turn, x.line, x.recording, x.over))
            .collect()
    }

    #[test]
    fn a_line_index_counts_from_one() {
        assert_eq!((index(0), index(1), index(7)), (None, Some(0), Some(6)));
    }

    /// A line that lands in a turn and crossed its end is `over` (it may
    /// have landed in the turn queued after it); any other line that
    /// crossed it is not; lines the engine never reads cross nothing.
    #[test]
    fn which_lines_cross_a_turn_and_which_are_over() {
        let begun_late = timeline(
            vec![ev(300, 1), ev(301, 1), end(302, 1)],
            vec![sent("prompt", 0, 0), sent("cancel", 5, 0)],
        );
        let queued = timeline(
            vec![ev(10, 1), end(20, 1), ev(300, 2), ev(301, 2), end(302, 2)],
            vec![
                sent("prompt", 0, 0),
                sent("prompt", 1, 0),
                sent("cancel", 25, 2),
            ],
        );
        // Events 150 ms apart, before the line and after it.
        let calm = timeline(
            vec![ev(10, 1), ev(160, 1), ev(310, 1), end(460, 1)],
            vec![sent("prompt", 0, 0), sent("cancel", 170, 2)],
        );
        let table: &[(&str, Timeline, Timeline, Vec<Found>)] = &[
            (
                "cancel",
                crossed_by("cancel"),
                Timeline::default(),
                vec![(1, 2, true, true)],
            ),
            (
                "steer",
                crossed_by("steer"),
                Timeline::default(),
                vec![(1, 2, true, true)],
            ),
            (
                "jobs_snapshot",
                crossed_by("jobs_snapshot"),
                Timeline::default(),
                vec![(1, 2, true, false)],
            ),
            (
                "in this run only",
                Timeline::default(),
                crossed_by("cancel"),
                vec![(1, 2, false, true)],
            ),
            (
                "in both",
                crossed_by("goal"),
                crossed_by("goal"),
                vec![(1, 2, true, true)],
            ),
            ("blank", crossed_by("blank"), Timeline::default(), vec![]),
            ("unread", crossed_by("unread"), Timeline::default(), vec![]),
            ("at the turn's pace", calm.clone(), calm, vec![]),
            // Sent before the turn's first event: the whole turn came in
            // one burst, 300 ms on, and may still have been written first.
            (
                "before the turn began",
                begun_late.clone(),
                Timeline::default(),
                vec![(1, 2, true, true)],
            ),
            // The first event after it a whole window later: no pause.
            (
                "a window after it",
                timeline(
                    vec![ev(10, 1), ev(60, 1), ev(200, 1), end(201, 1)],
                    vec![sent("prompt", 0, 0), sent("cancel", 100, 2)],
                ),
                Timeline::default(),
                vec![(1, 2, true, true)],
            ),
            // Events two windows apart before it: not yet slow.
            (
                "two windows apart before it",
                timeline(
                    vec![ev(10, 1), ev(210, 1), ev(216, 1), end(217, 1)],
                    vec![sent("prompt", 0, 0), sent("cancel", 215, 2)],
                ),
                Timeline::default(),
                vec![(1, 2, true, true)],
            ),
            // The same for a turn queued behind another: the other turn's
            // events before the line are not this turn's pace.
            (
                "before its queued turn began",
                queued.clone(),
                Timeline::default(),
                vec![(1, 2, true, false), (2, 3, true, true)],
            ),
        ];
        for (what, recording, other, want) in table {
            assert_eq!(&found(recording, other), want, "{what}");
        }
    }

    /// A crossing of a turn with no end after the line's burst is not
    /// over, unless it is in the other run.
    #[test]
    fn a_crossing_before_the_turns_end_is_not_over() {
        let running = timeline(
            vec![ev(10, 1), ev(60, 1), ev(101, 1), ev(102, 1)],
            vec![sent("prompt", 0, 0), sent("cancel", 100, 2)],
        );
        assert_eq!(found(&running, &running), [(1, 2, true, false)]);
        assert_eq!(found(&running, &crossed_by("cancel")), [(1, 2, true, true)]);
        assert_eq!(found(&crossed_by("cancel"), &running), [(1, 2, true, true)]);
    }

    /// Why a crossing is one, in words, from either run's kinds.
    #[test]
    fn a_crossing_says_which_line_which_turn_which_run() {
        let ours = crossed_by("cancel");
        let x = crossings(&ours, &Timeline::default(), 2, W);
        assert_eq!(
            x[0].why(&ours, &Timeline::default()),
            "command 2 (cancel) and the turn of command 1 crossed on the pipes in the recording"
        );
        let x = crossings(&Timeline::default(), &ours, 2, W);
        assert_eq!(
            x[0].why(&Timeline::default(), &ours),
            "command 2 (cancel) and the turn of command 1 crossed on the pipes in this run"
        );
    }

    /// What keeps a line sent during a turn from having crossed it: the
    /// turn paused after the line (it was reading), came slowly before
    /// it, took longer than the window after it, or answered it first;
    /// and a line with no time cannot tell.
    #[test]
    fn what_is_no_crossing() {
        let line = |points: Vec<Point>| {
            timeline(points, vec![sent("prompt", 0, 0), sent("cancel", 100, 2)])
        };
        let table: &[(&str, Timeline)] = &[
            // The first event after it came 150 ms later.
            (
                "paused",
                line(vec![ev(10, 1), ev(60, 1), ev(250, 1), end(251, 1)]),
            ),
            // A window and 1 ms later (a window is still a crossing).
            (
                "paused a window and 1 ms",
                line(vec![ev(10, 1), ev(60, 1), ev(201, 1), end(202, 1)]),
            ),
            // Two windows and 1 ms apart before it (two windows is still
            // a crossing).
            (
                "slow by 1 ms",
                timeline(
                    vec![ev(10, 1), ev(211, 1), ev(216, 1), end(217, 1)],
                    vec![sent("prompt", 0, 0), sent("cancel", 215, 2)],
                ),
            ),
            // 250 ms apart before it, at once after it: it was answered.
            (
                "slow",
                line(vec![ev(10, 1), ev(260, 1), ev(101, 1), end(102, 1)]),
            ),
            // The burst after it spread over 150 ms.
            (
                "spread",
                line(vec![ev(10, 1), ev(60, 1), ev(101, 1), end(251, 1)]),
            ),
            // Its answer came first: the engine had read it.
            (
                "answered",
                line(vec![
                    ev(10, 1),
                    ev(60, 1),
                    answer(101, 2),
                    ev(102, 1),
                    end(103, 1),
                ]),
            ),
            (
                "a cancelled question",
                line(vec![
                    ev(10, 1),
                    ev(60, 1),
                    Point {
                        cancelled: true,
                        ..ev(101, 1)
                    },
                    end(102, 1),
                ]),
            ),
            (
                "no time",
                timeline(
                    vec![ev(10, 1), ev(60, 1), ev(101, 1), end(102, 1)],
                    vec![
                        sent("prompt", 0, 0),
                        Sent {
                            at: None,
                            ..sent("cancel", 100, 2)
                        },
                    ],
                ),
            ),
            (
                "sent after the end",
                timeline(
                    vec![ev(10, 1), ev(60, 1), ev(101, 1), end(102, 1), ev(103, 3)],
                    vec![
                        sent("prompt", 0, 0),
                        sent("cancel", 100, 4),
                        sent("prompt", 0, 4),
                    ],
                ),
            ),
        ];
        for (what, t) in table {
            assert_eq!(found(t, &Timeline::default()), [], "{what}");
        }
    }

    /// Events of other work and the turn's own prediction are not the
    /// turn's burst: they neither end it nor spread it; a later line's
    /// answer ends it.
    #[test]
    fn what_the_burst_is_made_of() {
        let line = |points: Vec<Point>| {
            timeline(
                points,
                vec![
                    sent("prompt", 0, 0),
                    sent("cancel", 100, 2),
                    sent("jobs_snapshot", 100, 2),
                ],
            )
        };
        let table: &[(&str, Timeline, Vec<Found>)] = &[
            (
                "another turn's event, 300 ms on",
                line(vec![
                    ev(10, 1),
                    ev(60, 1),
                    ev(101, 1),
                    end(102, 1),
                    ev(400, 4),
                ]),
                vec![(1, 2, true, true), (1, 3, true, false)],
            ),
            (
                "the turn's prediction, 300 ms on",
                line(vec![
                    ev(10, 1),
                    ev(60, 1),
                    ev(101, 1),
                    predicted(400, 1),
                    end(402, 1),
                ]),
                vec![],
            ),
            (
                "a later line answered within it",
                line(vec![
                    ev(10, 1),
                    ev(60, 1),
                    ev(101, 1),
                    answer(102, 3),
                    ev(400, 1),
                    end(401, 1),
                ]),
                vec![(1, 2, true, false), (1, 3, true, false)],
            ),
        ];
        for (what, t, want) in table {
            assert_eq!(&found(t, &Timeline::default()), want, "{what}");
        }
    }

    /// A line sent during a turn: after the turn's command, before the
    /// turn's end came (or with no end yet).
    #[test]
    fn during_a_turn() {
        let t = timeline(
            vec![ev(10, 2), end(20, 2)],
            vec![
                sent("jobs_snapshot", 0, 0),
                sent("prompt", 0, 0),
                sent("cancel", 15, 1),
                sent("steer", 25, 2),
                sent("goal", 30, 2),
            ],
        );
        let during: Vec<bool> = (1..=6).map(|c| t.during(2, c)).collect();
        assert_eq!(during, [false, false, true, false, false, false]);
        let open = timeline(vec![ev(10, 2)], t.sent.clone());
        assert!(open.during(2, 5));
        assert_eq!(
            (t.before(3), t.before(6), t.kind(4), t.kind(6)),
            (1, usize::MAX, Some("steer"), None)
        );
    }

    /// A prediction one run lacks is a crossing when that run's next line
    /// (or its end of input) came no later after the turn's end than the
    /// other's prediction, plus the window.
    #[test]
    fn a_prediction_beaten_by_the_next_line() {
        let having = timeline(
            vec![ev(10, 1), end(20, 1), predicted(50, 1)],
            vec![sent("prompt", 0, 0), sent("prompt", 300, 3)],
        );
        let lacking = |next_ms: Option<u64>| {
            let mut sent_lines = vec![sent("prompt", 0, 0)];
            sent_lines.extend(next_ms.map(|ms| sent("prompt", ms, 2)));
            timeline(vec![ev(10, 1), end(20, 1)], sent_lines)
        };
        let table: &[(&str, Option<u64>, Option<&str>)] = &[
            (
                "next line 30 ms after the end",
                Some(50),
                Some("command 2 (prompt)"),
            ),
            (
                "next line at the window's edge",
                Some(150),
                Some("command 2 (prompt)"),
            ),
            ("next line past it", Some(151), None),
            ("no next line", None, Some("the end of input")),
        ];
        for &(what, next, by) in table {
            let lacks = lacking(next);
            let want = by.map(|by| {
                format!(
                    "the turn's prediction_result and {by} crossed on the pipes in the recording"
                )
            });
            assert_eq!(beaten(&lacks, &having, 1, W), want, "{what}");
            let want = by.map(|by| {
                format!("the turn's prediction_result and {by} crossed on the pipes in this run")
            });
            assert_eq!(beaten(&having, &lacks, 1, W), want, "{what}, swapped");
        }
        assert_eq!(beaten(&having, &having, 1, W), None, "both have it");
    }

    /// What a beaten prediction is measured from: each run's own turn
    /// end; the first line sent after that end (not one sent before it);
    /// the predictions of that turn only. A run with no end tells nothing.
    #[test]
    fn a_beaten_prediction_is_timed_from_each_runs_own_end() {
        // The other run's turn ended at 200 ms, its prediction 30 ms on.
        let having = timeline(
            vec![ev(10, 1), end(200, 1), predicted(230, 1)],
            vec![sent("prompt", 0, 0)],
        );
        let lacking = |sent_lines: Vec<Sent>| timeline(vec![ev(10, 1), end(20, 1)], sent_lines);
        let table: &[(&str, Timeline, Option<&str>)] = &[
            // 120 ms after its own end: within 30 ms plus the window.
            (
                "next line 120 ms after the end",
                lacking(vec![sent("prompt", 0, 0), sent("prompt", 140, 2)]),
                Some("command 2 (prompt)"),
            ),
            (
                "next line 140 ms after the end",
                lacking(vec![sent("prompt", 0, 0), sent("prompt", 160, 2)]),
                None,
            ),
            // A line sent before the end came is not the next line.
            (
                "a line sent before the end",
                lacking(vec![
                    sent("prompt", 0, 0),
                    sent("jobs_snapshot", 15, 1),
                    sent("prompt", 500, 2),
                ]),
                None,
            ),
            (
                "no end",
                timeline(vec![ev(10, 1)], vec![sent("prompt", 0, 0)]),
                None,
            ),
        ];
        for (what, lacks, by) in table {
            let want = by.map(|by| {
                format!(
                    "the turn's prediction_result and {by} crossed on the pipes in the recording"
                )
            });
            assert_eq!(beaten(lacks, &having, 1, W), want, "{what}");
        }
        // One prediction each, after turns of different lengths: nothing
        // is missing, whatever came when.
        let longer = timeline(
            vec![ev(10, 1), ev(15, 1), end(20, 1), predicted(50, 1)],
            vec![sent("prompt", 0, 0), sent("prompt", 60, 4)],
        );
        let shorter = timeline(
            vec![ev(10, 1), end(20, 1), predicted(50, 1)],
            vec![sent("prompt", 0, 0), sent("prompt", 60, 3)],
        );
        assert_eq!(beaten(&shorter, &longer, 1, W), None, "one each");
    }

    /// A kind of delta one run streamed and the other did not is pace
    /// when every such delta came after a line that lands in a turn,
    /// sent during it; not when one came before it, or with no such line.
    #[test]
    fn text_streamed_before_a_line_landed() {
        let run = |kind: &'static str| {
            timeline(
                vec![ev(10, 1), ev(60, 1), ev(110, 1), end(120, 1)],
                vec![
                    sent("prompt", 0, 0),
                    sent("jobs_snapshot", 50, 1),
                    sent(kind, 100, 2),
                ],
            )
        };
        let quiet: &[(usize, &str)] = &[];
        let after: &[(usize, &str)] = &[(2, "assistant_delta")];
        let before: &[(usize, &str)] = &[(1, "assistant_delta"), (2, "assistant_delta")];
        let reasoned: &[(usize, &str)] = &[(2, "reasoning_delta")];
        let cancel = run("cancel");
        assert_eq!(
            streamed(&cancel, &cancel, 1, [after, quiet]),
            Some(
                "command 3 (cancel) and the turn's text crossed on the pipes in the recording"
                    .to_owned()
            )
        );
        assert_eq!(
            streamed(&cancel, &cancel, 1, [quiet, reasoned]),
            Some(
                "command 3 (cancel) and the turn's text crossed on the pipes in this run"
                    .to_owned()
            )
        );
        assert_eq!(
            streamed(&cancel, &cancel, 1, [before, quiet]),
            None,
            "one came before it"
        );
        assert_eq!(
            streamed(&cancel, &cancel, 1, [after, after]),
            None,
            "no kind differs"
        );
        let snapshot = run("jobs_snapshot");
        assert_eq!(
            streamed(&snapshot, &snapshot, 1, [after, quiet]),
            None,
            "no line lands"
        );
    }
}
