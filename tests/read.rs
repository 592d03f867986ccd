//! `CommandReader`: framing, limits, chunking, I/O errors, and the
//! `command_error` event lines of `ReadError`.

mod support;

use serve_command::v1::{
    Command, CommandReader, LineError, ParseError, ReadError, DEFAULT_MAX_LINE_LEN,
};
use std::io::{self, BufRead, BufReader, Read};
use support::stream::{got, session_items, Got, SESSION};

/// Every item, each with `line_number()` right after it, and the final
/// `line_number()`. Checks that the end is the end.
fn read_all<R: BufRead>(mut reader: CommandReader<R>) -> (Vec<(u64, Got)>, u64) {
    let mut items = Vec::new();
    while let Some(item) = reader.next() {
        items.push((reader.line_number(), got(item)));
    }
    assert!(reader.next().is_none(), "None is followed by None");
    (items, reader.line_number())
}

#[track_caller]
fn check(input: &[u8], max: usize, expected: &[(u64, Got)], lines: u64) {
    let (items, last) = read_all(CommandReader::with_max_line_len(input, max));
    assert_eq!(
        items,
        expected,
        "input {:?}",
        String::from_utf8_lossy(input)
    );
    assert_eq!(last, lines, "line_number at the end");
}

const CANCEL: &[u8] = b"{\"command\":\"cancel\"}"; // 20 bytes

fn prompt(text: &str) -> Command {
    Command::Prompt {
        text: text.into(),
        submission_id: None,
    }
}

/// Input, limit, the items each with `line_number()` after it, and the last
/// `line_number()`.
type Case<In, Items> = (In, usize, Items, u64);

#[test]
fn framing() {
    use Got::*;
    let x30 = "x".repeat(30);
    let cases: &[Case<&str, &[(u64, Got)]>] = &[
        ("", 100, &[], 0),
        ("\n", 100, &[], 1),
        // Blank lines: spaces, tabs and CRs only. Skipped, but counted.
        ("\n \n\t\n\r\n \t\r \r\n", 100, &[], 5),
        (
            " \n\t\t\n\r\n{\"command\":\"cancel\"}\n  \n{\"command\":\"compact\"}\n",
            100,
            &[(4, Cmd(Command::Cancel)), (6, Cmd(Command::Compact))],
            6,
        ),
        // The last line needs no LF, even after blank lines.
        (
            "\n\n{\"command\":\"cancel\"}",
            100,
            &[(3, Cmd(Command::Cancel))],
            3,
        ),
        ("\n\n   ", 100, &[], 3),
        // CRLF, and whitespace around the JSON, belong to the line.
        (
            "  {\"command\":\"cancel\"} \r\n",
            100,
            &[(1, Cmd(Command::Cancel))],
            1,
        ),
        // A line that is not JSON does not stop the reader.
        (
            "nope\n{\"command\":\"cancel\"}\n{\"command\":\"dance\"}\n[1]\n{\"command\":\"compact\"}",
            100,
            &[
                (1, NotJson(1, "expected a JSON value at byte 0".into())),
                (2, Cmd(Command::Cancel)),
                (
                    3,
                    Refused(3, ParseError::UnknownCommand("dance".into())),
                ),
                (4, Refused(4, ParseError::ExpectedCommand)),
                (5, Cmd(Command::Compact)),
            ],
            5,
        ),
        // A line cut short by the end of input is still one line.
        (
            "{\"command\":\"prompt\",\"text\":\"half",
            100,
            &[(1, NotJson(1, "unterminated string at byte 27".into()))],
            1,
        ),
    ];
    for &(input, max, expected, lines) in cases {
        check(input.as_bytes(), max, expected, lines);
    }
    // Not UTF-8: a syntax error, at the first bad byte.
    check(
        b"{\"command\":\"prompt\",\"text\":\"caf\xe9\"}\n{\"command\":\"cancel\"}\n",
        100,
        &[
            (1, NotJson(1, "invalid UTF-8 at byte 31".into())),
            (2, Cmd(Command::Cancel)),
        ],
        2,
    );
    // The limit does not care what the line holds.
    check(format!("{x30}\n").as_bytes(), 29, &[(1, TooLong(1, 29))], 1);
}

#[test]
fn line_length_limit() {
    use Got::*;
    let cancel = std::str::from_utf8(CANCEL).unwrap();
    let long = format!(
        "{{\"command\":\"prompt\",\"text\":\"{}\"}}",
        "y".repeat(100)
    );
    let cases: Vec<Case<String, Vec<(u64, Got)>>> = vec![
        // Exactly `max` bytes before the LF is read; one more is not.
        (
            format!("{cancel}\n"),
            20,
            vec![(1, Cmd(Command::Cancel))],
            1,
        ),
        (format!("{cancel}\n"), 19, vec![(1, TooLong(1, 19))], 1),
        (cancel.to_owned(), 20, vec![(1, Cmd(Command::Cancel))], 1),
        (cancel.to_owned(), 19, vec![(1, TooLong(1, 19))], 1),
        // A CR before the LF counts.
        (format!("{cancel}\r\n"), 20, vec![(1, TooLong(1, 20))], 1),
        (
            format!("{cancel}\r\n"),
            21,
            vec![(1, Cmd(Command::Cancel))],
            1,
        ),
        // The line after a too-long one is read; nothing else is lost.
        (
            format!("{long}\n{cancel}\n\n{long}\n{cancel}"),
            20,
            vec![
                (1, TooLong(1, 20)),
                (2, Cmd(Command::Cancel)),
                (4, TooLong(4, 20)),
                (5, Cmd(Command::Cancel)),
            ],
            5,
        ),
        // A too-long last line without its LF is reported once.
        (
            format!("{cancel}\n{long}"),
            20,
            vec![(1, Cmd(Command::Cancel)), (2, TooLong(2, 20))],
            2,
        ),
        // With 0, only empty lines pass, and they are blank.
        (format!("\n{cancel}\n\n"), 0, vec![(2, TooLong(2, 0))], 3),
        (
            format!("{long}\n"),
            long.len(),
            vec![(1, Cmd(prompt(&"y".repeat(100))))],
            1,
        ),
    ];
    for (input, max, expected, lines) in &cases {
        check(input.as_bytes(), *max, expected, *lines);
        // In one-byte reads, the too-long lines are still reported once.
        let mut reader = BufReader::with_capacity(1, input.as_bytes());
        assert_eq!(reader.fill_buf().unwrap().len(), 1);
        let (items, last) = read_all(CommandReader::with_max_line_len(reader, *max));
        assert_eq!((&items, last), (expected, *lines), "{input:?} byte by byte");
    }
}

#[test]
fn defaults() {
    assert_eq!(DEFAULT_MAX_LINE_LEN, 64 * 1024 * 1024);
    let reader = CommandReader::new(&b""[..]);
    assert_eq!(reader.max_line_len(), DEFAULT_MAX_LINE_LEN);
    assert_eq!(reader.line_number(), 0);
    assert_eq!(
        CommandReader::with_max_line_len(&b""[..], 7).max_line_len(),
        7
    );
}

/// A `Read` that hands out at most `step` bytes per call.
struct Trickle<'a> {
    data: &'a [u8],
    step: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.step.min(buf.len()).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

#[test]
fn every_chunking_gives_the_same_items() {
    let expected = session_items();
    assert_eq!(
        read_all(CommandReader::with_max_line_len(SESSION, 80)),
        (expected.clone(), 11)
    );
    for step in 1..=SESSION.len() + 1 {
        for capacity in [1, 7, 8192] {
            let trickle = Trickle {
                data: SESSION,
                step,
            };
            let reader = BufReader::with_capacity(capacity, trickle);
            assert_eq!(
                read_all(CommandReader::with_max_line_len(reader, 80)),
                (expected.clone(), 11),
                "{step}-byte reads into a {capacity}-byte buffer"
            );
        }
    }
}

/// A line ends at its LF wherever the LF falls in the reader's buffer: in
/// its first 64 bytes, the next 64, past them, or in a tail shorter than 64.
/// Prompts of every length up to 300 bytes, each between two cancels, all
/// in one buffer.
#[test]
fn every_line_length_ends_at_its_lf() {
    use Got::*;
    let cancel = std::str::from_utf8(CANCEL).unwrap();
    let mut input = format!("{cancel}\n");
    let mut expected = vec![(1, Cmd(Command::Cancel))];
    for len in 0..300 {
        let text = "x".repeat(len);
        // 30 bytes and the text.
        input.push_str(&format!(
            "{{\"command\":\"prompt\",\"text\":\"{text}\"}}\n{cancel}\n"
        ));
        let line = expected.len() as u64;
        expected.push((line + 1, Cmd(prompt(&text))));
        expected.push((line + 2, Cmd(Command::Cancel)));
    }
    let lines = expected.len() as u64;
    check(input.as_bytes(), 1000, &expected, lines);
    // Each on its own: the line is the whole input, or all but its LF.
    for (len, (_, item)) in (0..300).zip(expected.iter().skip(1).step_by(2)) {
        let line = format!(
            "{{\"command\":\"prompt\",\"text\":\"{}\"}}",
            "x".repeat(len)
        );
        check(line.as_bytes(), 1000, &[(1, item.clone())], 1);
        check(
            format!("{line}\n").as_bytes(),
            1000,
            &[(1, item.clone())],
            1,
        );
    }
}

/// A `BufRead` that fails with `Interrupted` on every other call, and hands
/// out `step` bytes otherwise.
struct Flaky<'a> {
    data: &'a [u8],
    step: usize,
    interrupt: bool,
    interrupts: usize,
}

impl Read for Flaky<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.fill_buf()?.len().min(buf.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for Flaky<'_> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.interrupt = !self.interrupt;
        if self.interrupt {
            self.interrupts += 1;
            return Err(io::ErrorKind::Interrupted.into());
        }
        Ok(&self.data[..self.step.min(self.data.len())])
    }

    fn consume(&mut self, n: usize) {
        self.data = &self.data[n..];
    }
}

#[test]
fn interrupted_is_retried() {
    for step in [1, 5, SESSION.len()] {
        let flaky = Flaky {
            data: SESSION,
            step,
            interrupt: false,
            interrupts: 0,
        };
        let mut reader = CommandReader::with_max_line_len(flaky, 80);
        let items: Vec<_> = reader.by_ref().map(got).collect();
        let expected: Vec<_> = session_items().into_iter().map(|(_, g)| g).collect();
        assert_eq!(items, expected, "{step}-byte reads");
        assert!(reader.into_inner().interrupts > SESSION.len() / step);
    }
}

/// A `Read` whose every read fails.
struct Broken;

impl Read for Broken {
    fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
        Err(io::Error::new(io::ErrorKind::BrokenPipe, "pipe burst"))
    }
}

#[test]
fn an_io_error_is_the_last_item() {
    let input = b"{\"command\":\"cancel\"}\n\n{\"command\":\"comp";
    let reader = (&input[..]).chain(BufReader::new(Broken));
    assert_eq!(
        read_all(CommandReader::new(reader)),
        (
            vec![
                (1, Got::Cmd(Command::Cancel)),
                (2, Got::Io(io::ErrorKind::BrokenPipe, "pipe burst".into())),
            ],
            2
        )
    );
}

#[test]
fn into_inner_resumes_after_the_last_item() {
    let input = b"{\"command\":\"cancel\"}\nrest\n";
    let mut reader = CommandReader::new(&input[..]);
    assert_eq!(reader.next().map(got), Some(Got::Cmd(Command::Cancel)));
    let mut rest = String::new();
    reader.into_inner().read_to_string(&mut rest).unwrap();
    assert_eq!(rest, "rest\n");
}

#[test]
fn display_and_event_lines() {
    let syntax = Command::from_slice(b"nope").unwrap_err();
    let cases: Vec<(ReadError, &str, &str)> = vec![
        (
            ReadError::Line {
                line: 3,
                error: LineError::Parse(ParseError::ExpectedText),
            },
            "line 3: expected a string \"text\" field",
            "{\"event\":\"command_error\",\"error\":\"expected a string \\\"text\\\" field\"}\n",
        ),
        (
            ReadError::Line {
                line: 4,
                error: LineError::Parse(ParseError::UnknownCommand("a\"b\n\u{1}".into())),
            },
            "line 4: unknown command: a\"b\n\u{1}",
            "{\"event\":\"command_error\",\"error\":\"unknown command: a\\\"b\\n\\u0001\"}\n",
        ),
        (
            ReadError::Line {
                line: 5,
                error: syntax,
            },
            "line 5: expected a JSON value at byte 0",
            "{\"event\":\"command_error\",\"error\":\"command stream: expected a JSON value at byte 0\"}\n",
        ),
        (
            ReadError::TooLong {
                line: 3,
                max: 65536,
            },
            "line 3 is longer than 65536 bytes",
            "{\"event\":\"command_error\",\"error\":\"command stream: line 3 is longer than 65536 bytes\"}\n",
        ),
        (
            ReadError::Io(io::Error::other("disk \"on\" fire")),
            "read failed: disk \"on\" fire",
            "{\"event\":\"command_error\",\"error\":\"command stream: read failed: disk \\\"on\\\" fire\"}\n",
        ),
    ];
    for (error, display, event) in cases {
        assert_eq!(error.to_string(), display);
        assert_eq!(error.event_line(), event, "{error:?}");
        // An engine can write it as is: one JSON object, one LF, at the end.
        let value: serde_json::Value = serde_json::from_str(&error.event_line()).unwrap();
        assert_eq!(value["event"], "command_error");
    }
}

#[test]
fn read_error_is_a_thread_safe_error() {
    fn is_error<E: std::error::Error + Send + Sync + 'static>() {}
    is_error::<ReadError>();
}

/// `len` bytes of `a`, then `tail`, made as they are read.
struct Lazy {
    len: u64,
    tail: &'static [u8],
}

impl Read for Lazy {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.len > 0 {
            let n = buf
                .len()
                .min(usize::try_from(self.len).unwrap_or(usize::MAX));
            buf[..n].fill(b'a');
            self.len -= n as u64;
            return Ok(n);
        }
        self.tail.read(buf)
    }
}

/// Peak resident memory of this process, from `/proc`.
#[cfg(target_os = "linux")]
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    let kb: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kb * 1024
}

#[test]
fn a_huge_line_is_not_buffered() {
    const MIB: usize = 1024 * 1024;
    let lazy = Lazy {
        len: 256 * MIB as u64,
        tail: b"\n{\"command\":\"cancel\"}\n",
    };
    let reader = BufReader::with_capacity(64 * 1024, lazy);
    let mut reader = CommandReader::with_max_line_len(reader, MIB);
    assert_eq!(reader.next().map(got), Some(Got::TooLong(1, MIB)));
    assert_eq!(reader.next().map(got), Some(Got::Cmd(Command::Cancel)));
    assert_eq!(reader.line_number(), 2);
    assert!(reader.next().is_none());
    let lazy = reader.into_inner().into_inner();
    assert_eq!((lazy.len, lazy.tail.len()), (0, 0), "all of it was read");
    // Had the line been buffered, the peak would be over 256 MiB. The other
    // tests in this binary use far less than the margin.
    #[cfg(target_os = "linux")]
    assert!(
        peak_rss() < 64 * MIB as u64,
        "peak RSS {} bytes",
        peak_rss()
    );
}
