//! How many `write` calls `write_line` makes: on an unbuffered pipe (a
//! child's stdin) each is a system call. One for a line up to 8 KiB, so
//! lines from several writers never interleave; beyond, every write but the
//! last is of a full 8 KiB buffer, so one call per 8 KiB. Never an
//! allocation, in either revision.

use serve_command::v1::Command;
use serve_command::v2::{self, Content, ContentPart, Image};
use std::io::{self, Write};

#[path = "support/counting.rs"]
mod counting;

/// A writer that takes every byte it is given in one call (as a pipe with
/// room does), and records each call's size. Its buffers are allocated up
/// front, so writing to it never allocates.
struct Calls {
    sizes: Vec<usize>,
    bytes: Vec<u8>,
}

impl Write for Calls {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        assert!(self.sizes.len() < self.sizes.capacity(), "too many calls");
        assert!(buf.len() <= self.bytes.capacity() - self.bytes.len());
        self.sizes.push(buf.len());
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

const KIB: usize = 1024;
const MIB: usize = 1024 * KIB;

/// The size of each `write` call `write` makes, once it has checked that
/// the bytes written are `line` and that nothing was allocated.
#[track_caller]
fn calls(line: &str, write: impl FnOnce(&mut Calls) -> io::Result<()>) -> Vec<usize> {
    let mut out = Calls {
        sizes: Vec::with_capacity(4 * KIB),
        bytes: Vec::with_capacity(line.len()),
    };
    let measured = counting::allocations(|| write(&mut out));
    measured.out.unwrap();
    assert_eq!(measured.count, 0, "allocations");
    assert!(
        out.bytes == line.as_bytes(),
        "the bytes written are not the line"
    );
    out.sizes
}

/// `n` writes of 8 KiB, then one of `last` bytes.
fn full_then(n: usize, last: usize) -> Vec<usize> {
    let mut sizes = vec![8 * KIB; n];
    sizes.push(last);
    sizes
}

/// 1 MiB of pasted code: tabs, newlines and escaped quotes every few bytes,
/// so the line is written as many short pieces.
fn code() -> String {
    const LINES: &[&str] = &[
        "fn parse(&mut self, line: &str) -> Result<Command, Error> {",
        "\tlet text = line.trim_end_matches('\\n');",
        "\tif text.is_empty() { return Err(Error::new(\"empty line\")); }",
        "\tprintln!(\"{}: {:?}\", key, value);",
        "}",
    ];
    let mut text = String::new();
    for line in LINES.iter().cycle() {
        if text.len() >= MIB {
            break;
        }
        text.push_str(line);
        text.push('\n');
    }
    text.truncate(MIB);
    text
}

/// A prompt of `text`, in either revision: (v1, v2).
fn prompts(text: &str) -> (Command, v2::Command) {
    let v1 = Command::Prompt {
        text: text.into(),
        submission_id: None,
    };
    (v1.clone(), v2::Command::from(v1))
}

/// `text` made as long as it takes for its prompt's line to be `len` bytes
/// in either revision (the v2 key is 3 bytes longer): (v1, v2).
fn prompts_of_len(fill: &str, len: usize) -> (Command, v2::Command) {
    let (v1, v2) = prompts("");
    let text = |overhead: usize| fill.repeat(len - overhead);
    let v1_cmd = prompts(&text(v1.to_line().len())).0;
    let v2_cmd = prompts(&text(v2.to_line().len())).1;
    assert_eq!(v1_cmd.to_line().len(), len);
    assert_eq!(v2_cmd.to_line().len(), len);
    (v1_cmd, v2_cmd)
}

/// The writes of a prompt of 1 MiB of plain text, whose line ends in
/// `last` bytes: the buffer's first two fills, then the run straight from
/// the string in whole buffers, a 16 KiB window at a time (less the bytes
/// that went through the buffer).
fn plain_mib(last: usize) -> Vec<usize> {
    const WINDOW: usize = 16 * KIB;
    let mut sizes = vec![8 * KIB, 8 * KIB, WINDOW - 8 * KIB];
    sizes.extend([WINDOW; MIB / WINDOW - 2]);
    sizes.extend([WINDOW - 8 * KIB, last]);
    sizes
}

/// A name, a command in each revision, and the sizes of the writes of each.
type Case<'a> = (&'a str, &'a (Command, v2::Command), [Vec<usize>; 2]);

/// Each revision's line of each command, and the sizes of the writes
/// `write_line` makes of it: exactly these, in this order.
#[test]
fn one_write_up_to_8_kib_and_at_most_one_per_8_kib_beyond() {
    let short = prompts("fix the build");
    let full = prompts_of_len("a", 8 * KIB);
    let over = prompts_of_len("a", 8 * KIB + 1);
    // Six-byte escapes (`\u0001`) past the end: the one that does not fit
    // is split over the write, which is of a full buffer still.
    let escaped_over = prompts(&"\u{1}".repeat(1400));
    // A plain run longer than the buffer fills it, and its whole buffers
    // beyond go straight from the string, 16 KiB a write (scanned a window
    // at a time).
    let plain = prompts(&"a".repeat(MIB));
    // Long plain runs between escapes: each goes straight through once the
    // buffer is full, the escapes and what is left go through the buffer.
    let runs = prompts(&["a".repeat(20 * KIB), "b".repeat(20 * KIB)].join("\n"));
    let code = prompts(&code());
    let cases: [Case; 7] = [
        ("short", &short, [vec![44], vec![47]]),
        ("8 KiB", &full, [vec![8 * KIB], vec![8 * KIB]]),
        ("8 KiB + 1", &over, [full_then(1, 1), full_then(1, 1)]),
        (
            "escapes",
            &escaped_over,
            [full_then(1, 239), full_then(1, 242)],
        ),
        ("1 MiB plain", &plain, [plain_mib(31), plain_mib(34)]),
        (
            "plain runs",
            &runs,
            [
                vec![8 * KIB, 8 * KIB, 8 * KIB, 8 * KIB, 8 * KIB, 33],
                vec![8 * KIB, 8 * KIB, 8 * KIB, 8 * KIB, 8 * KIB, 36],
            ],
        ),
        (
            "1 MiB code",
            &code,
            [full_then(136, 2651), full_then(136, 2654)],
        ),
    ];
    for (name, (v1, v2), [v1_sizes, v2_sizes]) in cases {
        let line = v1.to_line();
        assert_eq!(
            calls(&line, |out| v1.write_line(out)),
            v1_sizes,
            "v1 {name}"
        );
        let line = v2.to_line();
        assert_eq!(
            calls(&line, |out| v2.write_line(out)),
            v2_sizes,
            "v2 {name}"
        );
    }
}

/// A prompt with a 4 MiB image: its base64 is encoded straight into the
/// buffer, a full one per write.
#[test]
fn an_image_line_is_written_8_kib_at_a_time() {
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.extend((0..4 * MIB - 8).map(|i| (i * 7 + i / 251) as u8));
    let cmd = v2::Command::prompt_tagged(
        Content::new(vec![
            ContentPart::Text("what is this?".into()),
            ContentPart::Image(Image::from_bytes(png).unwrap()),
        ]),
        "s-1",
    );
    let line = cmd.to_line();
    assert_eq!(line.len(), 5_592_554);
    assert_eq!(
        calls(&line, |out| cmd.write_line(out)),
        full_then(682, 5_592_554 - 682 * 8 * KIB)
    );
}
