//! The engine's output as bytes, beside the readers that decode it: its
//! stdout's lines kept whole for a recording, and the end of its stderr
//! for [`Stopped`](super::Stopped).

use super::reply::Sink;
use crate::v2::DEFAULT_MAX_LINE_LEN;
use std::collections::VecDeque;

/// How much of a last line cut short a [`Stopped`](super::Stopped) keeps.
const PARTIAL_KEEP: usize = 1024;

/// How much of the end of an engine's stderr a [`Stopped`](super::Stopped) keeps.
pub const STDERR_TAIL: usize = 4096;

/// The engine's stdout as bytes, beside the reader that decodes it: the
/// lines whole for a recording (when there is one), and the start of a last
/// line cut short.
#[derive(Debug, Default)]
pub(super) struct LineTee {
    /// Keep whole lines (a recording needs them).
    keep: bool,
    /// The bytes since the last LF (at most [`PARTIAL_KEEP`] of them when
    /// not keeping; at most the line limit and one when keeping).
    current: Vec<u8>,
    /// Whether the current line has any byte.
    open: bool,
    /// Lines ended, not yet taken, with their number.
    lines: VecDeque<(u64, Vec<u8>, bool)>,
    ended: u64,
    /// A last line cut short, once taken for the recording.
    cut: Option<Vec<u8>>,
}

impl LineTee {
    pub(super) fn new(keep: bool) -> LineTee {
        LineTee {
            keep,
            ..LineTee::default()
        }
    }

    /// Bytes read from the engine's stdout, in order.
    pub(super) fn saw(&mut self, mut chunk: &[u8]) {
        let cap = if self.keep {
            DEFAULT_MAX_LINE_LEN + 1
        } else {
            PARTIAL_KEEP
        };
        while !chunk.is_empty() {
            let (body, lf) = match memchr::memchr(b'\n', chunk) {
                Some(i) => (&chunk[..i], true),
                None => (chunk, false),
            };
            let room = cap.saturating_sub(self.current.len());
            self.current
                .extend_from_slice(&body[..body.len().min(room)]);
            self.open |= !body.is_empty();
            if lf {
                self.ended += 1;
                let line = std::mem::take(&mut self.current);
                if self.keep {
                    self.lines.push_back((self.ended, line, true));
                }
                self.open = false;
                chunk = &chunk[body.len() + 1..];
            } else {
                chunk = &[];
            }
        }
    }

    /// The lines up to line `n` (a last line cut short included, once the
    /// reader has ended it).
    pub(super) fn take_through(&mut self, n: u64) -> Vec<(Vec<u8>, bool)> {
        if self.keep && self.open && self.ended < n {
            self.ended += 1;
            self.open = false;
            let line = std::mem::take(&mut self.current);
            self.cut = Some(line[..line.len().min(PARTIAL_KEEP)].to_vec());
            self.lines.push_back((self.ended, line, false));
        }
        let mut taken = Vec::new();
        while self.lines.front().is_some_and(|(k, ..)| *k <= n) {
            taken.extend(self.lines.pop_front().map(|(_, line, lf)| (line, lf)));
        }
        taken
    }

    /// At the end of input: the last line, when it had no LF.
    pub(super) fn partial(&self) -> Option<String> {
        let shown = match (&self.cut, self.open) {
            (Some(cut), _) => cut.as_slice(),
            (None, true) => &self.current[..self.current.len().min(PARTIAL_KEEP)],
            (None, false) => return None,
        };
        Some(String::from_utf8_lossy(shown).into_owned())
    }
}

/// Keeps the last [`STDERR_TAIL`] bytes of an engine's stderr, and passes
/// its lines to the recording.
#[derive(Debug, Default)]
pub(super) struct StderrTail {
    tail: Vec<u8>,
    line: Vec<u8>,
}

impl StderrTail {
    /// Bytes read from the engine's stderr.
    pub(super) fn saw(&mut self, bytes: &[u8], recorder: Option<&dyn Sink>) {
        self.tail.extend_from_slice(bytes);
        let excess = self.tail.len().saturating_sub(STDERR_TAIL);
        self.tail.drain(..excess);
        let Some(recorder) = recorder else { return };
        let mut rest = bytes;
        while let Some(i) = memchr::memchr(b'\n', rest) {
            self.line.extend_from_slice(&rest[..i]);
            recorder.stderr(&self.line, true);
            self.line.clear();
            rest = &rest[i + 1..];
        }
        let room = DEFAULT_MAX_LINE_LEN.saturating_sub(self.line.len());
        self.line.extend_from_slice(&rest[..rest.len().min(room)]);
    }

    /// At its end: the tail, lossy UTF-8 (a last line with no LF recorded).
    pub(super) fn finish(&mut self, recorder: Option<&dyn Sink>) -> String {
        if let (Some(recorder), false) = (recorder, self.line.is_empty()) {
            recorder.stderr(&self.line, false);
            self.line.clear();
        }
        String::from_utf8_lossy(&self.tail).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::ExitStatus;
    use std::sync::Mutex;

    fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
        mutex
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A recording's lines, as a [`Sink`] is given them.
    #[derive(Default)]
    struct Lines(Mutex<Vec<(&'static str, Vec<u8>, bool)>>);

    impl Sink for Lines {
        fn command(&self, line: &[u8]) {
            lock(&self.0).push(("command", line.to_vec(), true));
        }
        fn event(&self, line: &[u8], lf: bool) {
            lock(&self.0).push(("event", line.to_vec(), lf));
        }
        fn stderr(&self, line: &[u8], lf: bool) {
            lock(&self.0).push(("stderr", line.to_vec(), lf));
        }
        fn finish(&self, _: Option<ExitStatus>) {}
    }

    fn line(bytes: &[u8], lf: bool) -> (Vec<u8>, bool) {
        (bytes.to_vec(), lf)
    }

    #[test]
    fn a_tee_keeps_whole_lines_by_number_and_the_last_one_cut_short() {
        let mut tee = LineTee::new(true);
        tee.saw(b"a\n\nb");
        tee.saw(b"c\nd");
        assert_eq!(tee.take_through(2), [line(b"a", true), line(b"", true)]);
        assert_eq!(tee.take_through(2), []);
        assert_eq!(tee.take_through(3), [line(b"bc", true)]);
        assert_eq!(tee.partial().as_deref(), Some("d"), "the line in progress");
        assert_eq!(tee.take_through(4), [line(b"d", false)]);
        assert_eq!(tee.partial().as_deref(), Some("d"));
    }

    #[test]
    fn a_tee_not_keeping_holds_only_the_start_of_the_line_in_progress() {
        let mut tee = LineTee::new(false);
        tee.saw(b"one\ntw");
        assert_eq!(tee.partial().as_deref(), Some("tw"));
        assert_eq!(tee.take_through(2), []);
        tee.saw(b"o\n");
        assert_eq!(tee.partial(), None);
        tee.saw(&[b'x'; 3000]);
        assert_eq!(tee.partial(), Some("x".repeat(PARTIAL_KEEP)));
    }

    #[test]
    fn a_tee_keeps_a_line_up_to_one_byte_past_the_limit() {
        let mut tee = LineTee::new(true);
        let long = vec![b'x'; DEFAULT_MAX_LINE_LEN + 1];
        tee.saw(&long);
        tee.saw(&long);
        tee.saw(b"\n");
        let taken = tee.take_through(1);
        assert_eq!(taken.len(), 1);
        assert_eq!(taken[0].0.len(), DEFAULT_MAX_LINE_LEN + 1);
    }

    #[test]
    fn a_stderr_tail_keeps_its_end_and_records_each_line() {
        let sink = Lines::default();
        let mut tail = StderrTail::default();
        tail.saw(b"one\ntw", Some(&sink));
        tail.saw(b"o\nthr", Some(&sink));
        assert_eq!(tail.finish(Some(&sink)), "one\ntwo\nthr");
        assert_eq!(
            *lock(&sink.0),
            [
                ("stderr", b"one".to_vec(), true),
                ("stderr", b"two".to_vec(), true),
                ("stderr", b"thr".to_vec(), false),
            ]
        );
        let mut tail = StderrTail::default();
        let mut bytes = vec![b'a'; 10];
        bytes.extend_from_slice(&[b'b'; STDERR_TAIL]);
        tail.saw(&bytes, None);
        assert_eq!(tail.finish(None), "b".repeat(STDERR_TAIL));
    }
}
