//! Running a program under test: fed its input in pieces, its output
//! collected, within a timeout and an output cap. Shared by the
//! workbench's engine check and the CLI's `conform` (through the library,
//! as `workbench::run`: public for the CLI, not the crate's API).

use std::io::{self, Read, Write};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{mpsc, Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Past this much output a program is stopped: it cannot be answering one
/// short line per line it was sent.
pub const MAX_OUTPUT: usize = 64 << 20;

/// What a program is fed on its stdin: pieces, each one write, with a pause
/// between them; then its stdin is closed.
pub struct Feed {
    pub pieces: Vec<Vec<u8>>,
    pub pause: Duration,
    /// When set, each pause ends as soon as the program's stdout holds
    /// these bytes: a piece sent once the program answered, or after the
    /// pause if it never does.
    pub until: Option<Vec<u8>>,
}

impl Feed {
    /// All of `input` at once.
    pub fn whole(input: Vec<u8>) -> Self {
        Feed {
            pieces: vec![input],
            pause: Duration::ZERO,
            until: None,
        }
    }
}

/// What a program did with its input, by [`run_program`].
pub struct Ran {
    /// Its stdout, up to a little over [`MAX_OUTPUT`].
    pub stdout: Vec<u8>,
    /// Its stderr, when piped; else empty.
    pub stderr: Vec<u8>,
    /// How it ended; `None` when it was killed: it ran past the timeout or
    /// wrote more than [`MAX_OUTPUT`].
    pub status: Option<ExitStatus>,
    /// It wrote more than [`MAX_OUTPUT`] on stdout or stderr.
    pub overflowed: bool,
}

/// Starts `program`, feeds it `feed` (from a thread: a program that answers
/// before it has read everything, or never reads, must not block us),
/// collects its stdout (and its stderr, when `stderr` is `Stdio::piped()`)
/// and waits for it to exit, for at most `timeout` in all. A program that
/// runs past it, or writes more than [`MAX_OUTPUT`], is killed, and what it
/// wrote until then is kept. The error is the one of starting it, or of
/// reading its output.
pub fn run_program(
    program: &mut Command,
    feed: Feed,
    stderr: Stdio,
    timeout: Duration,
) -> io::Result<Ran> {
    let deadline = Instant::now() + timeout;
    let mut child = program
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()?;
    let (tx, rx) = mpsc::channel();
    let out = collect(child.stdout.take().expect("piped"), tx.clone());
    let mut stdin = child.stdin.take().expect("piped");
    let seen = Arc::clone(&out);
    std::thread::spawn(move || {
        // A program that stops reading is judged by what it answers.
        let mut pieces = feed.pieces.iter();
        let mut piece = pieces.next();
        while let Some(bytes) = piece {
            if stdin.write_all(bytes).and_then(|()| stdin.flush()).is_err() {
                return;
            }
            piece = pieces.next();
            // A pause between two pieces, none after the last.
            if piece.is_some() {
                pause(&feed, &seen);
            }
        }
    });
    let err = child
        .stderr
        .take()
        .map(|stderr| collect(stderr, tx.clone()));
    drop(tx);
    let mut open = 1 + usize::from(err.is_some());
    let mut overflowed = false;
    let mut killed = false;
    while open > 0 {
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(Ok(over)) => {
                open -= 1;
                if over {
                    overflowed = true;
                    killed = true;
                    break;
                }
            }
            Ok(Err(e)) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(e);
            }
            Err(_) => {
                killed = true;
                break;
            }
        }
    }
    let status = loop {
        if killed {
            let _ = child.kill();
            let _ = child.wait();
            // What is still in the pipes, briefly (a child of the program
            // may hold them open).
            let grace = Instant::now() + Duration::from_millis(200);
            while open > 0
                && rx
                    .recv_timeout(grace.saturating_duration_since(Instant::now()))
                    .is_ok()
            {
                open -= 1;
            }
            break None;
        }
        match child.try_wait()? {
            Some(status) => break Some(status),
            None if Instant::now() >= deadline => killed = true,
            None => std::thread::sleep(Duration::from_millis(10)),
        }
    };
    let take = |buf: &Arc<Mutex<Vec<u8>>>| {
        std::mem::take(&mut *buf.lock().unwrap_or_else(PoisonError::into_inner))
    };
    Ok(Ran {
        stdout: take(&out),
        stderr: err.as_ref().map(take).unwrap_or_default(),
        status,
        overflowed,
    })
}

/// The pause between two pieces of `feed`: its length, or until `seen`
/// (the program's stdout so far) holds `feed.until`, if sooner.
fn pause(feed: &Feed, seen: &Mutex<Vec<u8>>) {
    let Some(until) = feed.until.as_deref().filter(|u| !u.is_empty()) else {
        std::thread::sleep(feed.pause);
        return;
    };
    let end = Instant::now() + feed.pause;
    // Only what came since the last look is searched (with an overlap of
    // the bytes sought, less one), so a long output costs one pass.
    let mut from = 0;
    loop {
        {
            let seen = seen.lock().unwrap_or_else(PoisonError::into_inner);
            if seen[from..].windows(until.len()).any(|w| w == until) {
                return;
            }
            from = seen.len().saturating_sub(until.len() - 1).max(from);
        }
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        std::thread::sleep(left.min(Duration::from_millis(5)));
    }
}

/// Reads `src` to its end (or past [`MAX_OUTPUT`]) into the buffer it
/// returns, from a thread, and then says on `done` whether it stopped past
/// the limit, or how reading failed.
fn collect(
    mut src: impl Read + Send + 'static,
    done: mpsc::Sender<io::Result<bool>>,
) -> Arc<Mutex<Vec<u8>>> {
    let buf = Arc::new(Mutex::new(Vec::new()));
    let shared = Arc::clone(&buf);
    std::thread::spawn(move || {
        let mut chunk = vec![0u8; 64 * 1024];
        let result = loop {
            match src.read(&mut chunk) {
                Ok(0) => break Ok(false),
                Ok(n) => {
                    let mut buf = shared.lock().unwrap_or_else(PoisonError::into_inner);
                    buf.extend_from_slice(&chunk[..n]);
                    if buf.len() > MAX_OUTPUT {
                        break Ok(true);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => break Err(e),
            }
        };
        let _ = done.send(result);
    });
    buf
}

/// Lines as the oracle splits its input: on LF, a last line without LF
/// counted unless empty. Borrowed, so that a flood of short lines costs
/// no allocation per line.
pub fn lines(output: &[u8]) -> impl Iterator<Item = &[u8]> {
    let body = output.strip_suffix(b"\n").unwrap_or(output);
    // `split` of nothing is one empty line; no output is none.
    let count = if output.is_empty() { 0 } else { usize::MAX };
    body.split(|&b| b == b'\n').take(count)
}

pub fn ended(status: ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("was killed by signal {signal}");
        }
    }
    match status.code() {
        Some(code) => format!("exited with status {code}"),
        None => format!("ended: {status}"),
    }
}

/// An answer as the report shows it: control characters (a CR before the
/// LF, say) made visible, invalid UTF-8 as U+FFFD.
pub fn visible(answer: &[u8]) -> String {
    String::from_utf8_lossy(answer)
        .chars()
        .map(|c| match c {
            '\r' => "\\r".to_owned(),
            '\t' => "\\t".to_owned(),
            c if c.is_control() => c.escape_unicode().to_string(),
            c => c.to_string(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{collect, lines, run_program, visible, Feed, MAX_OUTPUT};
    use std::io::{self, Read};
    use std::process::{Command, Stdio};
    use std::sync::mpsc;
    use std::time::{Duration, Instant};

    /// A read's outcome: `Ok(n)` reads `n` bytes, `Err(kind)` fails.
    type Step = Result<usize, io::ErrorKind>;
    /// What `collect` kept (bytes) and said: `Ok(past the limit)` or how
    /// reading failed.
    type Collected = (usize, Result<bool, io::ErrorKind>);

    /// A reader that gives its steps in order, then end of input: `Ok(n)`
    /// reads `n` bytes of `x`, `Err(kind)` fails once with that kind.
    struct Steps(std::vec::IntoIter<Step>);

    impl Read for Steps {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            match self.0.next() {
                None => Ok(0),
                Some(Ok(n)) => {
                    let n = n.min(buf.len());
                    buf[..n].fill(b'x');
                    Ok(n)
                }
                Some(Err(kind)) => Err(kind.into()),
            }
        }
    }

    /// What `collect` kept of `steps`, and what it said when it stopped:
    /// `Ok(past the limit)` or the failed read's kind.
    fn collected(steps: Vec<Step>) -> Collected {
        let (tx, rx) = mpsc::channel();
        let buf = collect(Steps(steps.into_iter()), tx);
        let said = rx.recv().expect("collect says when it stops");
        let len = buf.lock().expect("not poisoned").len();
        (len, said.map_err(|e| e.kind()))
    }

    /// An interrupted read is tried again; any other failure ends reading
    /// and is said; what was read before it is kept.
    #[test]
    fn an_interrupted_read_is_retried_and_another_failure_ends_reading() {
        use io::ErrorKind::{BrokenPipe, Interrupted};
        let table: &[(Vec<Step>, Collected)] = &[
            (vec![Ok(3), Err(Interrupted), Ok(4)], (7, Ok(false))),
            (vec![Ok(3), Err(BrokenPipe), Ok(4)], (3, Err(BrokenPipe))),
        ];
        for (steps, want) in table {
            assert_eq!(collected(steps.clone()), *want, "{steps:?}");
        }
    }

    /// Output up to [`MAX_OUTPUT`] is all kept; a byte more stops reading
    /// as past the limit.
    #[test]
    fn output_is_past_the_limit_only_beyond_max_output() {
        let chunks = |total: usize| {
            let mut steps = vec![Ok(64 * 1024); total / (64 * 1024)];
            steps.push(Ok(total % (64 * 1024)));
            steps
        };
        assert_eq!(collected(chunks(MAX_OUTPUT)), (MAX_OUTPUT, Ok(false)));
        assert_eq!(
            collected(chunks(MAX_OUTPUT + 1)),
            (MAX_OUTPUT + 1, Ok(true))
        );
    }

    /// Pieces reach the program in order, with the pause between each two
    /// (so that a line split over them comes in several reads): three
    /// pieces take at least two pauses.
    #[cfg(unix)]
    #[test]
    fn pieces_are_fed_in_order_with_a_pause_between_each_two() {
        let pause = Duration::from_millis(150);
        let feed = Feed {
            pieces: vec![
                b"{\"comm".to_vec(),
                b"and\":\"can".to_vec(),
                b"cel\"}\n".to_vec(),
            ],
            pause,
            until: None,
        };
        let start = Instant::now();
        let ran = run_program(
            &mut Command::new("cat"),
            feed,
            Stdio::null(),
            Duration::from_secs(30),
        );
        let elapsed = start.elapsed();
        let ran = ran.expect("cat runs");
        assert_eq!(ran.stdout, b"{\"command\":\"cancel\"}\n");
        assert!(ran.status.is_some_and(|s| s.success()));
        assert!(elapsed >= 2 * pause, "{elapsed:?}");
    }

    /// With `until`, the next piece goes as soon as the program's stdout
    /// holds those bytes, not after the whole pause; when it never does,
    /// after the pause.
    #[test]
    fn a_gated_piece_goes_once_the_output_holds_the_gate_or_after_the_pause() {
        let run = |until: &[u8], pause| {
            let feed = Feed {
                pieces: vec![b"first\n".to_vec(), b"second\n".to_vec()],
                pause,
                until: Some(until.to_vec()),
            };
            let start = Instant::now();
            let ran = run_program(
                &mut Command::new("cat"),
                feed,
                Stdio::null(),
                Duration::from_secs(60),
            )
            .expect("cat runs");
            (ran.stdout, start.elapsed())
        };
        // Seen at once: the 30 s pause is cut short.
        let (stdout, elapsed) = run(b"rst\n", Duration::from_secs(30));
        assert_eq!(stdout, b"first\nsecond\n");
        assert!(elapsed < Duration::from_secs(20), "{elapsed:?}");
        // Never seen: the whole pause.
        let (stdout, elapsed) = run(b"third", Duration::from_millis(300));
        assert_eq!(stdout, b"first\nsecond\n");
        assert!(elapsed >= Duration::from_millis(300), "{elapsed:?}");
    }

    /// A CR, a tab and other controls are shown as escapes, bad UTF-8 as
    /// U+FFFD; everything else as it is.
    #[test]
    fn an_answer_is_shown_with_its_controls_visible() {
        let table: &[(&[u8], &str)] = &[
            (b"{\"event\":\"x\"}\r", "{\"event\":\"x\"}\\r"),
            (b"a\tb", "a\\tb"),
            (b"\x00\x1b[0m\x7f", "\\u{0}\\u{1b}[0m\\u{7f}"),
            ("é 日本".as_bytes(), "é 日本"),
            (b"\xffok", "\u{fffd}ok"),
        ];
        for &(answer, shown) in table {
            assert_eq!(visible(answer), shown, "{answer:?}");
        }
    }

    /// Output splits as the oracle splits its input: on LF, a last line
    /// without LF counted, an empty one after the last LF not.
    #[test]
    fn output_splits_into_lines_as_the_oracle_splits_input() {
        let cases: &[(&[u8], &[&[u8]])] = &[
            (b"", &[]),
            (b"\n", &[b""]),
            (b"\n\n", &[b"", b""]),
            (b"a", &[b"a"]),
            (b"a\n", &[b"a"]),
            (b"a\n\n", &[b"a", b""]),
            (b"a\nb", &[b"a", b"b"]),
            (b"a\r\nb\n", &[b"a\r", b"b"]),
        ];
        for &(output, want) in cases {
            assert_eq!(lines(output).collect::<Vec<_>>(), want, "{output:?}");
        }
    }
}
