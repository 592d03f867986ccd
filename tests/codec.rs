//! `CommandCodec`: the decoder by hand at every split of the input, and
//! `FramedRead`/`FramedWrite` over real duplex pipes and a child process.
#![cfg(feature = "tokio")]

mod support;

use bytes::BytesMut;
use futures_core::Stream;
use futures_sink::Sink;
use serve_command::v1::{Command, CommandCodec, ParseError, SteerKind};
use std::future::poll_fn;
use std::pin::Pin;
use support::stream::{got, session_items, Got, SESSION};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::codec::{Decoder, Encoder, FramedRead, FramedWrite};

/// Runs a test on a runtime of one thread with its I/O and process
/// drivers: what `#[tokio::test]` does, without tokio's `macros` feature
/// (and the five proc-macro crates it would add to every example's build).
fn run<F: std::future::Future<Output = ()>>(test: F) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build();
    runtime.expect("a tokio runtime").block_on(test);
}

/// The next item of a stream (what `StreamExt::next` does).
async fn next<S: Stream + Unpin>(s: &mut S) -> Option<S::Item> {
    poll_fn(|cx| Pin::new(&mut *s).poll_next(cx)).await
}

/// Sends one item and flushes it (what `SinkExt::send` does).
async fn send<S: Sink<I> + Unpin, I>(s: &mut S, item: I) -> Result<(), S::Error> {
    poll_fn(|cx| Pin::new(&mut *s).poll_ready(cx)).await?;
    Pin::new(&mut *s).start_send(item)?;
    poll_fn(|cx| Pin::new(&mut *s).poll_flush(cx)).await
}

/// Flushes and shuts down the sink (what `SinkExt::close` does).
async fn close<S: Sink<Command> + Unpin>(s: &mut S) -> Result<(), S::Error> {
    poll_fn(|cx| Pin::new(&mut *s).poll_close(cx)).await
}

/// Decodes `chunks` arriving one after another, then the end of input.
/// Checks that the decoder never fails and never keeps bytes in `src`.
fn decode_chunks(chunks: &[&[u8]], max: usize) -> (Vec<(u64, Got)>, u64) {
    let mut codec = CommandCodec::with_max_line_len(max);
    let mut src = BytesMut::new();
    let mut items = Vec::new();
    for chunk in chunks {
        src.extend_from_slice(chunk);
        while let Some(item) = codec.decode(&mut src).expect("decode never fails") {
            items.push((codec.line_number(), got(item)));
        }
        assert!(src.is_empty(), "decode left {} bytes", src.len());
    }
    while let Some(item) = codec.decode_eof(&mut src).expect("decode_eof never fails") {
        items.push((codec.line_number(), got(item)));
    }
    (items, codec.line_number())
}

#[test]
fn decoding_at_every_split() {
    let expected = (session_items(), 11);
    assert_eq!(decode_chunks(&[SESSION], 80), expected);
    for at in 0..=SESSION.len() {
        let (a, b) = SESSION.split_at(at);
        assert_eq!(decode_chunks(&[a, b], 80), expected, "split at {at}");
    }
    for size in 1..=SESSION.len() {
        let chunks: Vec<&[u8]> = SESSION.chunks(size).collect();
        assert_eq!(decode_chunks(&chunks, 80), expected, "{size}-byte chunks");
    }
}

/// Chunks, limit, the items each with `line_number()` after it, and the last
/// `line_number()`.
type Case<'a> = (&'a [&'a [u8]], usize, &'a [(u64, Got)], u64);

#[test]
fn decoding_lines() {
    use Got::*;
    let cancel = b"{\"command\":\"cancel\"}"; // 20 bytes
    let cases: &[Case] = &[
        (&[], 20, &[], 0),
        (&[b"\n \n\t\r\n"], 20, &[], 3),
        (&[cancel, b"\n"], 20, &[(1, Cmd(Command::Cancel))], 1),
        (&[cancel, b"\n"], 19, &[(1, TooLong(1, 19))], 1),
        (&[cancel, b"\r\n"], 20, &[(1, TooLong(1, 20))], 1),
        // The last line without its LF, exactly at the limit or over it.
        (&[b"\n", cancel], 20, &[(2, Cmd(Command::Cancel))], 2),
        (&[b"\n", cancel], 19, &[(2, TooLong(2, 19))], 2),
        // The line after a too-long one is read.
        (
            &[cancel, b"xxxx", b"xx\n", cancel],
            20,
            &[(1, TooLong(1, 20)), (2, Cmd(Command::Cancel))],
            2,
        ),
        // Reported once, in one-byte pieces too.
        (
            &[b"x", b"x", b"x", b"x", b"\n", b"\n", b"{", b"}"],
            3,
            &[
                (1, TooLong(1, 3)),
                (3, Refused(3, ParseError::ExpectedCommand)),
            ],
            3,
        ),
    ];
    for &(chunks, max, expected, lines) in cases {
        assert_eq!(
            decode_chunks(chunks, max),
            (expected.to_vec(), lines),
            "{chunks:?}"
        );
    }
}

#[test]
fn defaults() {
    assert_eq!(
        CommandCodec::new().max_line_len(),
        serve_command::v1::DEFAULT_MAX_LINE_LEN
    );
    assert_eq!(
        CommandCodec::default().max_line_len(),
        serve_command::v1::DEFAULT_MAX_LINE_LEN
    );
    assert_eq!(CommandCodec::with_max_line_len(5).max_line_len(), 5);
    assert_eq!(CommandCodec::new().line_number(), 0);
}

#[test]
fn encoding_writes_to_line() {
    let commands = [
        Command::Cancel,
        Command::Prompt {
            text: "quote \" and \n newline, é".into(),
            submission_id: Some("s-1".into()),
        },
        // Longer than the encoder's stack buffer.
        Command::Steer {
            kind: SteerKind::Prompt,
            text: "z".repeat(2000),
        },
        Command::ApprovalDecision {
            id: "a1".into(),
            allow: false,
        },
    ];
    let mut codec = CommandCodec::new();
    for cmd in commands {
        let mut by_ref = BytesMut::from(&b"before\n"[..]);
        codec.encode(&cmd, &mut by_ref).unwrap();
        let mut by_value = BytesMut::from(&b"before\n"[..]);
        codec.encode(cmd.clone(), &mut by_value).unwrap();
        let expected = format!("before\n{}", cmd.to_line());
        assert_eq!(by_ref, expected.as_bytes());
        assert_eq!(by_value, expected.as_bytes());
    }
}

/// What a `FramedRead` over `reader` yields, each item with the decoder's
/// `line_number()` after it.
async fn framed_items<R: tokio::io::AsyncRead + Unpin>(
    reader: R,
    max: usize,
) -> (Vec<(u64, Got)>, u64) {
    let mut framed = FramedRead::new(reader, CommandCodec::with_max_line_len(max));
    let mut items = Vec::new();
    while let Some(item) = next(&mut framed).await {
        let item = item.expect("the pipe does not fail");
        items.push((framed.decoder().line_number(), got(item)));
    }
    (items, framed.decoder().line_number())
}

#[test]
fn framed_read_over_a_duplex_in_every_read_size() {
    run(async {
        let expected = (session_items(), 11);
        // The duplex's capacity caps each read, so each size is a chunking.
        for size in 1..=SESSION.len() {
            let (mut tx, rx) = tokio::io::duplex(size);
            let write = async move {
                tx.write_all(SESSION).await.unwrap();
                // Dropping `tx` is the end of input.
            };
            let ((), items) = futures_util::future::join(write, framed_items(rx, 80)).await;
            assert_eq!(items, expected, "reads of {size} bytes");
        }
    });
}

#[test]
fn framed_write_then_framed_read_over_a_duplex() {
    run(async {
        let commands = vec![
            Command::Prompt {
                text: "fix it".into(),
                submission_id: None,
            },
            Command::GoalClear,
            Command::Steer {
                kind: SteerKind::Command,
                text: "line\nbreak".into(),
            },
        ];
        let (tx, mut rx) = tokio::io::duplex(16);
        let write = async {
            let mut sink = FramedWrite::new(tx, CommandCodec::new());
            for cmd in &commands {
                send(&mut sink, cmd).await.unwrap();
            }
            send(&mut sink, Command::Cancel).await.unwrap();
            close(&mut sink).await.unwrap();
        };
        let read = async {
            let mut bytes = Vec::new();
            rx.read_to_end(&mut bytes).await.unwrap();
            bytes
        };
        let ((), bytes) = futures_util::future::join(write, read).await;
        let expected: String = commands
            .iter()
            .chain([&Command::Cancel])
            .map(Command::to_line)
            .collect();
        assert_eq!(String::from_utf8(bytes.clone()).unwrap(), expected);
        let (items, lines) = framed_items(&bytes[..], 100).await;
        let decoded: Vec<_> = commands.into_iter().chain([Command::Cancel]).collect();
        let decoded: Vec<_> = decoded
            .into_iter()
            .zip(1..)
            .map(|(cmd, line)| (line, Got::Cmd(cmd)))
            .collect();
        assert_eq!((items, lines), (decoded, 4));
    });
}

/// Through a real child process: commands and raw lines go into `cat`'s
/// stdin over an OS pipe and come back on its stdout.
#[cfg(unix)]
#[test]
fn through_a_child_process() {
    run(async {
        // The pipes as tokio files: its `process` feature would build two
        // crates more with every example (the README's run command is held
        // to 40).
        let mut child = std::process::Command::new("cat")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("cat runs");
        let pipe = |fd: std::os::fd::OwnedFd| tokio::fs::File::from_std(std::fs::File::from(fd));
        let stdin = pipe(child.stdin.take().unwrap().into());
        let stdout = pipe(child.stdout.take().unwrap().into());
        let write = async move {
            let mut sink = FramedWrite::new(stdin, CommandCodec::new());
            send(&mut sink, Command::Compact).await.unwrap();
            // A controller's mistakes, written raw between two commands.
            let raw: &mut tokio::fs::File = sink.get_mut();
            raw.write_all(b"\n{\"command\":\"approval\",\"id\":\"a1\"}\n{oops\n")
                .await
                .unwrap();
            raw.write_all(&[b'y'; 100_000]).await.unwrap();
            raw.write_all(b"\r\n").await.unwrap();
            send(&mut sink, Command::Cancel).await.unwrap();
            close(&mut sink).await.unwrap();
            // Dropping the sink closes the pipe: `cat` sees the end.
        };
        let ((), items) = futures_util::future::join(write, framed_items(stdout, 1000)).await;
        use Got::*;
        assert_eq!(
            items,
            (
                vec![
                    (1, Cmd(Command::Compact)),
                    (3, Refused(3, ParseError::ExpectedAllow)),
                    (4, NotJson(4, "expected a string key at byte 1".into())),
                    (5, TooLong(5, 1000)),
                    (6, Cmd(Command::Cancel)),
                ],
                6
            )
        );
        assert!(child.wait().unwrap().success());
    });
}

#[test]
fn a_huge_line_does_not_grow_the_buffer() {
    const MIB: usize = 1024 * 1024;
    let mut codec = CommandCodec::with_max_line_len(MIB);
    let mut src = BytesMut::with_capacity(64 * 1024);
    let piece = vec![b'a'; 64 * 1024];
    let mut items = Vec::new();
    // 64 MiB of one line, in reads of 64 KiB, as FramedRead would feed it.
    for _ in 0..1024 {
        src.extend_from_slice(&piece);
        assert_eq!(src.capacity(), 64 * 1024, "src is reused, never grown");
        while let Some(item) = codec.decode(&mut src).unwrap() {
            items.push(got(item));
        }
        assert!(src.is_empty());
    }
    src.extend_from_slice(b"\n{\"command\":\"cancel\"}\n");
    while let Some(item) = codec.decode(&mut src).unwrap() {
        items.push(got(item));
    }
    assert_eq!(items, [Got::TooLong(1, MIB), Got::Cmd(Command::Cancel)]);
    assert_eq!(codec.line_number(), 2);
}

#[test]
fn framed_read_of_a_huge_line_keeps_its_buffer_small() {
    run(async {
        const MIB: usize = 1024 * 1024;
        let (mut tx, rx) = tokio::io::duplex(64 * 1024);
        let write = async move {
            let piece = vec![b'a'; 64 * 1024];
            for _ in 0..256 {
                tx.write_all(&piece).await.unwrap();
            }
            tx.write_all(b"\n{\"command\":\"cancel\"}\n").await.unwrap();
        };
        let read = async {
            let mut framed = FramedRead::new(rx, CommandCodec::with_max_line_len(MIB));
            let mut items = Vec::new();
            let mut biggest = 0;
            while let Some(item) = next(&mut framed).await {
                items.push(got(item.unwrap()));
                biggest = biggest.max(framed.read_buffer().capacity());
            }
            (items, biggest.max(framed.read_buffer().capacity()))
        };
        let ((), (items, biggest)) = futures_util::future::join(write, read).await;
        assert_eq!(items, [Got::TooLong(1, MIB), Got::Cmd(Command::Cancel)]);
        // FramedRead starts with 8 KiB and grows only if the decoder leaves
        // bytes behind, which it never does.
        assert!(biggest <= 64 * 1024, "read buffer grew to {biggest}");
    });
}
