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
