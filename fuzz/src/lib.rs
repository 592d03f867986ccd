//! What the fuzz targets share: the test-only reference model, and ways to
//! compare the crate's answers with it.

use serve_command::v1::{Command, LineError};

// The same file as the crate's tests use, so the fuzzers and the tests hold
// the crate to one model. Not this crate's to format.
#[rustfmt::skip]
#[allow(dead_code)]
#[path = "../../tests/support/model.rs"]
pub mod model;

// The later revision's model, as `tests/v2_*.rs` use it.
#[rustfmt::skip]
#[allow(dead_code)]
#[path = "../../tests/support/model_v2.rs"]
pub mod model_v2;

// The `<user_shell_command>` envelope's model, as tests/shell.rs uses it.
#[rustfmt::skip]
#[allow(dead_code)]
#[path = "../../tests/support/shell_model.rs"]
pub mod shell_model;

use model::ModelCommand;

#[path = "../../tests/support/to_model.rs"]
mod to_model;
pub use to_model::to_model;

/// A decoding result as the model states it: the command, or the wire
/// string. `None` for a line that is not JSON (the model only sees JSON).
pub fn as_model(r: &Result<Command, LineError>) -> Option<Result<ModelCommand, String>> {
    match r {
        Ok(c) => Some(Ok(to_model(c))),
        Err(LineError::Parse(e)) => Some(Err(e.to_string())),
        Err(LineError::Syntax(_)) => None,
        Err(e) => panic!("a kind of error the model does not know: {e:?}"),
    }
}

/// A stream target's input: a 4-byte header, then the stream's bytes.
///
/// Header: `[max, flags, seed_lo, seed_hi]`. `max` is the line-length limit
/// (255 means 65536, so long lines are read too). `flags` bit 0: the stream
/// ends in an I/O error instead of EOF; bits 1-7: a read is `Interrupted`
/// before every `n + 1`th chunk (0: never). The seed picks the chunk sizes.
#[derive(Debug, Clone, Copy)]
pub struct StreamInput<'a> {
    /// The line-length limit.
    pub max: usize,
    /// End in an I/O error rather than EOF.
    pub fail_at_end: bool,
    /// Interrupt before every `n + 1`th chunk; 0: never.
    pub interrupt_every: u8,
    /// Seeds the chunk sizes.
    pub seed: u16,
    /// The stream.
    pub data: &'a [u8],
}

impl<'a> StreamInput<'a> {
    /// `None` when there is no whole header.
    pub fn parse(bytes: &'a [u8]) -> Option<Self> {
        let (&[max, flags, lo, hi], data) = bytes.split_first_chunk::<4>()?;
        Some(StreamInput {
            max: if max == u8::MAX {
                65536
            } else {
                usize::from(max)
            },
            fail_at_end: flags & 1 == 1,
            interrupt_every: flags >> 1,
            seed: u16::from_le_bytes([lo, hi]),
            data,
        })
    }

    /// The header that `parse` reads back as these settings, with `data`.
    pub fn encode(
        max: u8,
        fail_at_end: bool,
        interrupt_every: u8,
        seed: u16,
        data: &[u8],
    ) -> Vec<u8> {
        let [lo, hi] = seed.to_le_bytes();
        let mut out = vec![max, interrupt_every << 1 | u8::from(fail_at_end), lo, hi];
        out.extend_from_slice(data);
        out
    }

    /// The data cut into chunks of the seed's sizes.
    pub fn chunks(&self) -> impl Iterator<Item = &'a [u8]> {
        let mut sizes = ChunkSizes::new(self.seed);
        let mut rest = self.data;
        std::iter::from_fn(move || {
            if rest.is_empty() {
                return None;
            }
            let (chunk, tail) = rest.split_at(sizes.next_size().min(rest.len()));
            rest = tail;
            Some(chunk)
        })
    }
}

/// Chunk sizes from 1 to 128, mostly small, from a 16-bit seed (seed 0:
/// one byte at a time).
struct ChunkSizes(u32);

impl ChunkSizes {
    fn new(seed: u16) -> Self {
        ChunkSizes(u32::from(seed))
    }

    fn next_size(&mut self) -> usize {
        // xorshift32: 0 stays 0.
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.0 = x;
        let limit = 1u32 << (x >> 29); // 1, 2, 4 .. 128
        1 + (x & 0xffff) as usize % limit as usize
    }
}

/// A `BufRead` that hands out the input's chunks as they would arrive from
/// a pipe, with the input's interruptions and final error.
pub struct ChunkedRead<'a> {
    input: StreamInput<'a>,
    sizes: ChunkSizes,
    pos: usize,
    chunk_end: usize,
    calls: u32,
}

impl<'a> ChunkedRead<'a> {
    /// A reader over `input.data`.
    pub fn new(input: StreamInput<'a>) -> Self {
        ChunkedRead {
            input,
            sizes: ChunkSizes::new(input.seed),
            pos: 0,
            chunk_end: 0,
            calls: 0,
        }
    }
}

impl std::fmt::Debug for ChunkedRead<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ChunkedRead(at {} of {})",
            self.pos,
            self.input.data.len()
        )
    }
}

impl std::io::Read for ChunkedRead<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        use std::io::BufRead;
        let chunk = self.fill_buf()?;
        let n = chunk.len().min(buf.len());
        buf[..n].copy_from_slice(&chunk[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl std::io::BufRead for ChunkedRead<'_> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if self.pos == self.chunk_end {
            let every = u32::from(self.input.interrupt_every);
            self.calls += 1;
            if every != 0 && self.calls.is_multiple_of(every + 1) {
                return Err(std::io::ErrorKind::Interrupted.into());
            }
            let len = self.input.data.len();
            if self.pos == len {
                if self.input.fail_at_end {
                    return Err(std::io::Error::other("the pipe broke"));
                }
                return Ok(&[]);
            }
            self.chunk_end = (self.pos + self.sizes.next_size()).min(len);
        }
        Ok(&self.input.data[self.pos..self.chunk_end])
    }

    fn consume(&mut self, n: usize) {
        self.pos += n;
        assert!(
            self.pos <= self.chunk_end,
            "consumed more than was handed out"
        );
    }
}

/// One item of a stream, comparable (`io::Error` has no `==`), with the
/// reader's `line_number()` right after it.
#[derive(Debug, PartialEq)]
pub struct Item {
    /// `line_number()` after the item.
    pub line_number: u64,
    /// The item.
    pub what: What,
}

/// What a stream item is.
#[derive(Debug, PartialEq)]
pub enum What {
    /// `Ok(command)`.
    Command(Command),
    /// `ReadError::Line`.
    Line(u64, LineError),
    /// `ReadError::TooLong { line, max }`.
    TooLong(u64, usize),
    /// `ReadError::Io`.
    Io,
}

/// The item a reader or codec gave.
pub fn item(got: Result<Command, serve_command::v1::ReadError>, line_number: u64) -> Item {
    use serve_command::v1::ReadError;
    let what = match got {
        Ok(c) => What::Command(c),
        Err(ReadError::Line { line, error }) => What::Line(line, error),
        Err(ReadError::TooLong { line, max }) => What::TooLong(line, max),
        Err(ReadError::Io(_)) => What::Io,
        Err(other) => panic!("a ReadError the model does not know: {other:?}"),
    };
    Item { line_number, what }
}

/// The stream model: split on LF; a line of only spaces, tabs and CRs is
/// skipped; a line longer than `max` is one `TooLong`; every other line is
/// `Command::from_slice`d; lines are numbered from 1, blank ones included.
/// With `fail_at_end`, a last line without its LF is lost (unless already
/// reported as too long) and an `Io` item ends the stream.
///
/// Returns the items and the last `line_number()`.
pub fn stream_model(data: &[u8], max: usize, fail_at_end: bool) -> (Vec<Item>, u64) {
    let mut lines: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
    let last = lines.pop().unwrap_or_default();
    let mut items = Vec::new();
    let mut number = 0;
    let line = |number: u64, line: &[u8], items: &mut Vec<Item>| {
        let what = if line.len() > max {
            What::TooLong(number, max)
        } else if line.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r')) {
            return;
        } else {
            match Command::from_slice(line) {
                Ok(c) => What::Command(c),
                Err(e) => What::Line(number, e),
            }
        };
        items.push(Item {
            line_number: number,
            what,
        });
    };
    for l in lines {
        number += 1;
        line(number, l, &mut items);
    }
    if !last.is_empty() && (!fail_at_end || last.len() > max) {
        number += 1;
        line(number, last, &mut items);
    }
    if fail_at_end {
        items.push(Item {
            line_number: number,
            what: What::Io,
        });
    }
    (items, number)
}

/// The bytes a reader or codec holds for a partial line, read off its
/// `Debug` (the framer's `buffered: N`), which is all that shows it.
pub fn buffered(debug: &str) -> usize {
    let (_, rest) = debug
        .split_once("buffered: ")
        .unwrap_or_else(|| panic!("no `buffered: ` in {debug}"));
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().expect("a count")
}

/// Whether `data` may hold a number the reference reads by its quirks
/// (src/wire/number.rs, `number_value`): an exponent of ten digits or more,
/// which its slow path wraps to 32 bits, or a run of 800 digits, past
/// which it drops integer digits. serde_json reads such a number exactly,
/// so the serde paths may judge it otherwise than `from_slice`, by design
/// (docs/PROTOCOL.md). Errs on the side of saying yes: a run inside a
/// string counts too.
pub fn quirk_number(data: &[u8]) -> bool {
    let mut run = 0;
    let mut exponent: Option<usize> = None;
    for &b in data {
        match b {
            b'0'..=b'9' => {
                run += 1;
                if let Some(n) = &mut exponent {
                    *n += 1;
                    if *n >= 10 {
                        return true;
                    }
                }
            }
            b'.' => run += 1,
            b'e' | b'E' => {
                run += 1;
                exponent = Some(0);
            }
            b'+' | b'-' if exponent == Some(0) => {}
            _ => {
                run = 0;
                exponent = None;
            }
        }
        if run >= 800 {
            return true;
        }
    }
    false
}

/// Whether `data` holds an object key that serde_json's `Value` reads as
/// its own private token rather than as a key: with the `raw_value`
/// feature (which the crate's `workbench` feature, on here, enables), an object whose first key is
/// `$serde_json::private::RawValue` is read as the JSON text in its value,
/// so `Value` refuses `{"$serde_json::private::RawValue":"p"}` and reads
/// `{"$serde_json::private::RawValue":"{}"}` as `{}`. The reference and the
/// crate read such a key as any other, so the `Value` paths are not
/// compared for such a line. Keys are matched as serde_json decodes them,
/// escapes included; any object, any position, errs on the side of yes.
pub fn serde_token(data: &[u8]) -> bool {
    use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
    use std::fmt;

    const PREFIX: &str = "$serde_json::private::";

    /// Whether the value read holds a token key, at any depth.
    struct Token(bool);

    impl<'de> Deserialize<'de> for Token {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_any(Scan)
        }
    }

    struct Scan;

    impl<'de> Visitor<'de> for Scan {
        type Value = Token;

        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("any JSON value")
        }
        fn visit_bool<E>(self, _: bool) -> Result<Token, E> {
            Ok(Token(false))
        }
        fn visit_i64<E>(self, _: i64) -> Result<Token, E> {
            Ok(Token(false))
        }
        fn visit_u64<E>(self, _: u64) -> Result<Token, E> {
            Ok(Token(false))
        }
        fn visit_f64<E>(self, _: f64) -> Result<Token, E> {
            Ok(Token(false))
        }
        fn visit_str<E>(self, _: &str) -> Result<Token, E> {
            Ok(Token(false))
        }
        fn visit_unit<E>(self) -> Result<Token, E> {
            Ok(Token(false))
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Token, A::Error> {
            let mut found = false;
            while let Some(Token(t)) = seq.next_element()? {
                found |= t;
            }
            Ok(Token(found))
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Token, A::Error> {
            let mut found = false;
            while let Some(key) = map.next_key::<String>()? {
                let Token(t) = map.next_value()?;
                found |= t || key.starts_with(PREFIX);
            }
            Ok(Token(found))
        }
    }

    serde_json::from_slice::<Token>(data).is_ok_and(|Token(t)| t)
}

/// What the event targets share: a job's `data`, which the `Value` paths
/// hold with their keys sorted.
pub mod events {
    use serde_json::Value;
    use serve_command::v2::{Event, JobRecord};

    /// The job records an event holds.
    pub fn records(event: &Event) -> Vec<&JobRecord> {
        match event {
            Event::JobChanged { job, .. } => vec![&**job],
            Event::JobsSnapshot { jobs, .. } => jobs.iter().collect(),
            _ => Vec::new(),
        }
    }

    /// Whether any of its jobs has `data`.
    pub fn has_data(event: &Event) -> bool {
        records(event).iter().any(|r| r.data.is_some())
    }

    /// The event without its jobs' `data`, and each `data` as serde_json
    /// reads it: serde_json's map sorts an object's keys, so a `Value`
    /// path writes `data` back with its keys in another order, the same
    /// value.
    pub fn apart(mut event: Event) -> (Event, Vec<Option<Result<Value, String>>>) {
        let records: Vec<&mut JobRecord> = match &mut event {
            Event::JobChanged { job, .. } => vec![&mut **job],
            Event::JobsSnapshot { jobs, .. } => jobs.iter_mut().collect(),
            _ => Vec::new(),
        };
        let data = records
            .into_iter()
            .map(|r| {
                r.data
                    .take()
                    .map(|d| d.to_value().map_err(|e| e.to_string()))
            })
            .collect();
        (event, data)
    }
}
