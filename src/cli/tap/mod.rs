//! `tap`: a transparent proxy between a controller and an engine, judging
//! every line that crosses it.

mod judge;

use crate::output::{self, describe, io_error};
use crate::revision::Revision;
use crate::size::{self, Size};
use clap::Args;
use judge::Judge;
use serve_command::v2::serve::record::{exit_words, Direction as Dir, Piece};
use serve_command::v2::DEFAULT_MAX_LINE_LEN;
use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, SyncSender};
use std::sync::Arc;
use std::time::Duration;

/// How much of a stream is read at once: a pipe's whole buffer.
const CHUNK: usize = 64 * 1024;

/// Batches of lines a pump may hand the judge before it waits for the
/// judge to catch up: what bounds the tap's memory (each batch is one read,
/// and the line it completes, at most the line limit).
const IN_FLIGHT: usize = 2;

/// After the engine has exited, how long the tap waits for the lines it
/// has read from its stdin to be judged before it exits (it does not wait
/// for a controller that keeps its end open).
const GRACE: Duration = Duration::from_millis(250);

/// Sit between a controller and an engine: pass every byte through, judge every line
///
/// Starts ENGINE and copies the tap's stdin to the engine's stdin and the
/// engine's stdout to the tap's stdout, byte for byte: each line as soon as
/// it is complete (the lines of one read in one write), a last line without
/// a LF at the end of the stream, nothing added, dropped or reordered. The
/// engine's stderr passes through to the tap's stderr, line by line, in
/// order with the tap's reports (below): after the reports of the lines
/// read before it, so the end of the tap's stderr, which a controller
/// keeps, holds the engine's last words (a LF ends its last line when the
/// engine did not). The end of the tap's stdin closes the engine's. The
/// tap exits when the engine has exited and closed its stdout and stderr,
/// with the engine's exit status (128 + N when a signal N killed it); 127
/// when ENGINE cannot be found, 126 when it cannot be started.
///
/// Meanwhile it reads every command line as the engine must read it (v2,
/// with the serve policy: `decode --serve-policy`), and every engine line
/// as a controller must (`decode --events`), and reports on stderr, one
/// line each (`tap: command 3: ...`, `tap: event 5: ...`), what it finds:
///
///   refused          a command line the engine must refuse, with the exact
///                    `command_error` event it owes (not JSON, not a
///                    command, or declined by the serve policy)
///   not_canonical    (note) a command the engine reads, on a line that is
///                    not the one the crate writes for it (extra keys,
///                    legacy `text`, another key order)
///   crlf             (note) a line ending in CRLF
///   blank            (note) a blank line, which the reader skips
///   bom              a line starting with a UTF-8 BOM
///   too_long         a line longer than --max-line-len: forwarded in
///                    pieces, never held whole; a command line over it is
///                    refused as the crate's reader with that limit refuses
///                    it, `command stream: line N is longer than MAX bytes`
///   stray            an engine stdout line that is not an event (a banner,
///                    a log line, JSON that is no event)
///   wrong_answer     a `command_error` whose message differs from what the
///                    engine owes the refused line it answers (the engine
///                    owes one per refused line, in order)
///   unexpected_answer  a `command_error` with no refused line to answer
///   unanswered       a refused line the engine never answered (at exit)
///   still_reading    the engine read on after a command line that ends its
///                    reading (not JSON, or over the limit): after answering
///                    it, it answered a later line, with a `command_error`,
///                    or with the event that carries the later line's id
///                    (`request_id`, an approval's `id`, a steer's
///                    `submission_id`)
///   unattributed     an event that fits no rule of upstream's serve loop
///                    (below): a turn's event with no turn running, a reply
///                    to a request never sent, a second terminal event
///
/// Every line also goes, in the order seen, to the model of upstream's
/// serve loop (`serve_command::v2::serve::Conversation`; docs/PROTOCOL.md,
/// "What answers what"), which says of each event the command line it
/// answers and the command line that started the turn it belongs to.
///
/// Lines after the one that ends the engine's reading are not judged
/// (`unread`). At the end, one line `tap: summary: ...` counts the lines
/// each way and the violations by kind.
///
/// --log FILE writes JSON Lines, one record per line crossing the tap, in
/// the order seen:
///
///   {"t_ms":MS,"t_us":US,"dir":"command"|"event"|"stderr","n":N,"line":TEXT,
///    "verdict":V,"violations":[{"kind":K,"level":"error"|"note","message":M,...}]}
///
/// and an event record, after "verdict", "answers":A,"turn":T: the `n` of
/// the command line the event answers and of the one that started its
/// turn, each `null` when there is none (and both for a line that is not
/// an event, or one that fits no rule).
///
/// MS and US are the time since the tap started, in whole milliseconds
/// and microseconds (`t_us` is new: older logs have `t_ms` only). N
/// counts the lines of its direction from 1, blank lines included. TEXT
/// is the line without its LF (`"line_base64"` instead when it is not
/// UTF-8; `"lf":false` after it when the stream ended without one; `null`
/// for a line over the limit). V is, for a command line, `command`,
/// `refused`, `blank` or `unread` (after the line that ends the engine's
/// reading); for an engine line, `event`, `command_error`, `not_event` or `blank`; `text`
/// on stderr. Each violation carries its details: `owes` (the event line
/// owed), `canonical`, `max`, `reason` (also an `unattributed` event's),
/// `command_n`, `owed`, `got`, `stopped_at`. After the engine's exit, a record with the lines left
/// unanswered:
///
///   {"t_ms":MS,"t_us":US,"dir":"exit","status":"exit N"|"signal N","code":C,"violations":[...]}
///
/// and the summary:
///
///   {"t_ms":MS,"t_us":US,"dir":"summary","lines":{"command":A,"event":B,"stderr":C},
///    "violations":{KIND:COUNT,...},"status":"exit N"|"signal N","code":C}
///
/// --redact REGEX (with --log; repeatable) keeps text out of the log:
/// each match of REGEX (the `regex` crate's syntax; each pattern in turn)
/// is logged as `[redacted]`. In a line that is JSON, only the contents of
/// its string values are (unescaped, redacted, and escaped again when a
/// match was replaced): its keys, the protocol's words, and every other
/// byte are logged as they crossed, as is a line with no match. Another
/// UTF-8 line, and a stderr line, is redacted whole; a line that is not
/// UTF-8 (`line_base64`) is logged as it is. The violations' messages and
/// texts (`canonical`, `owes`, ...) are redacted as the lines are. The
/// judgement is the lines' as they crossed: `verdict`, `answers` and
/// `turn` are what they would be without it. Only the log is redacted:
/// the lines pass through, and the tap's reports on stderr say what they
/// say, as they are.
///
/// A controller records its session in the same format, byte for byte but
/// the times (`serve_command::v2::serve::Recorder`; its exit and summary
/// say `"status":null,"code":null` when it does not know the engine's
/// exit status).
///
/// Exit status: the engine's (see above); 2 on a usage error or a log file
/// that cannot be created, before the engine is started.
#[derive(Args)]
#[command(
    verbatim_doc_comment,
    after_help = "Examples:
  serve-command tap -- openseek serve < session.jsonl
  my-controller --engine 'serve-command tap --log wire.jsonl -- openseek serve'
  serve-command tap --max-line-len 1MiB --log wire.jsonl -- ./my_engine --flag
  serve-command tap --log wire.jsonl --redact 'sk-[A-Za-z0-9]+' -- openseek serve
  jq -c 'select(.violations != [])' wire.jsonl
  serve-command trace wire.jsonl"
)]
pub struct Tap {
    /// Write a JSON Lines record of every line crossing the tap to FILE
    /// (created, or truncated).
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,
    /// With --log: log each match of REGEX in the lines' text as
    /// `[redacted]` (repeatable; see above for what is redacted).
    #[arg(long, value_name = "REGEX")]
    redact: Vec<String>,
    /// Lines longer than this (LF excluded) are reported and forwarded in
    /// pieces, never held whole: bytes, or with KiB, MiB or GiB (`65536`,
    /// `64KiB`). Set it to the engine's own limit.
    #[arg(long, value_name = "SIZE", default_value_t = Size(DEFAULT_MAX_LINE_LEN), value_parser = size::parse)]
    max_line_len: Size,
    /// The engine to start, and its arguments.
    #[arg(last = true, required = true, value_name = "ENGINE")]
    engine: Vec<OsString>,
}

pub fn run(args: Tap, revision: Revision) -> output::Result<ExitCode> {
    if revision == Revision::V1 {
        return Err(output::Failure::Error(
            "tap needs --revision v2: the protocol's first revision is the command half only"
                .to_owned(),
        ));
    }
    if !args.redact.is_empty() && args.log.is_none() {
        return Err(output::Failure::Error(
            "tap: --redact needs --log FILE: it redacts the log, and the lines pass through as they are"
                .to_owned(),
        ));
    }
    let redact = crate::redact::redactor(&args.redact)
        .map_err(|e| output::Failure::Error(format!("tap: {e}")))?;
    let log = match &args.log {
        Some(path) => {
            let name = path.display().to_string();
            let file = File::create(path).map_err(|e| io_error(&name, &e))?;
            Some((name, file))
        }
        None => None,
    };
    let max = args.max_line_len.0;
    let (program, rest) = args.engine.split_first().expect("clap requires ENGINE");
    let mut child = match Command::new(program)
        .args(rest)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(child) => child,
        Err(e) => {
            // As a shell and `env` say it: 127 not found, 126 not started.
            let code = if e.kind() == io::ErrorKind::NotFound {
                127
            } else {
                126
            };
            output::to_stderr(&format!(
                "serve-command: tap: cannot start {}: {}\n",
                program.to_string_lossy(),
                describe(&e)
            ))?;
            return Ok(ExitCode::from(code));
        }
    };
    let (Some(engine_in), Some(engine_out), Some(engine_err)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        unreachable!("all three are piped")
    };
    // One judge for the three streams, on its own thread: a pump hands it
    // the lines of each read before it forwards them, so the judge sees a
    // refused line before the engine's answer to it, and forwards without
    // waiting for the judgement (the engine's stderr, which the judge
    // passes on, excepted).
    let (to_judge, batches) = mpsc::sync_channel(IN_FLIGHT);
    let gone = Arc::new(AtomicBool::new(false));
    let stderr_gone = Arc::clone(&gone);
    let judge = std::thread::spawn(move || {
        let mut judge = Judge::new(max, log, redact);
        for batch in batches {
            match batch {
                Batch::Lines { dir, bytes, parts } => {
                    for part in parts {
                        judge.line(
                            dir,
                            match part {
                                Part::Line(start, end) => Piece::Line(&bytes[start..end]),
                                Part::TooLong => Piece::TooLong,
                            },
                        );
                    }
                    judge.flush_log();
                }
                Batch::Stderr(bytes) => {
                    if !judge.pass_stderr(&bytes) {
                        stderr_gone.store(true, Ordering::Relaxed);
                    }
                }
                Batch::Finish { said, code } => {
                    judge.finish(&said, code);
                    return;
                }
            }
        }
    });

    let (done, commands_done) = mpsc::channel();
    let shared = to_judge.clone();
    // Not joined: it may wait on a controller that never closes its end.
    std::thread::spawn(move || {
        pump(io::stdin(), engine_in, &shared, Dir::Command, max);
        let _ = done.send(());
    });
    let shared = to_judge.clone();
    let events = std::thread::spawn(move || {
        pump(engine_out, io::stdout(), &shared, Dir::Event, max);
    });
    let shared = to_judge.clone();
    // The engine's stderr is passed on by the judge, after the reports of
    // the lines read before it: a controller keeping the end of the tap's
    // stderr has the engine's last words after the tap's reports of what
    // came before them, not buried under them.
    let through_judge = ThroughJudge {
        judge: to_judge.clone(),
        gone,
    };
    let stderr = std::thread::spawn(move || {
        pump(engine_err, through_judge, &shared, Dir::Stderr, max);
    });
    let _ = events.join();
    let _ = stderr.join();
    let status = child
        .wait()
        .map_err(|e| io_error("waiting for the engine", &e))?;
    let _ = commands_done.recv_timeout(GRACE);
    let (said, code) = exit_words(status);
    let _ = to_judge.send(Batch::Finish { said, code });
    let _ = judge.join();
    Ok(ExitCode::from(code))
}

/// What a pump hands the judge.
enum Batch {
    /// The lines one read completed, in order: `parts` index `bytes`.
    Lines {
        dir: Dir,
        bytes: Vec<u8>,
        parts: Vec<Part>,
    },
    /// Bytes of the engine's stderr to pass on, once the lines before
    /// them are judged.
    Stderr(Vec<u8>),
    /// The engine has exited: the summary, and the judge's end.
    Finish { said: String, code: u8 },
}

/// The engine's stderr, passed on by the judge in the order read; fails
/// once the tap's stderr has.
struct ThroughJudge {
    judge: SyncSender<Batch>,
    gone: Arc<AtomicBool>,
}

impl Write for ThroughJudge {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        if self.gone.load(Ordering::Relaxed)
            || self.judge.send(Batch::Stderr(bytes.to_vec())).is_err()
        {
            return Err(io::ErrorKind::BrokenPipe.into());
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// One line of a [`Batch`].
enum Part {
    /// `bytes[start..end]`, its LF included (absent only on the last line
    /// of a stream).
    Line(usize, usize),
    /// A line longer than the limit, not held.
    TooLong,
}

/// The lines one read completed, gathered for the judge.
#[derive(Default)]
struct Gathered {
    bytes: Vec<u8>,
    parts: Vec<Part>,
}

impl Gathered {
    fn line(&mut self, line: &[u8]) {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(line);
        self.parts.push(Part::Line(start, self.bytes.len()));
    }

    fn too_long(&mut self) {
        self.parts.push(Part::TooLong);
    }

    /// Hands what was gathered to the judge (when it has gone, the lines
    /// go unjudged: the tap is ending).
    fn send(&mut self, judge: &SyncSender<Batch>, dir: Dir) {
        if self.parts.is_empty() {
            return;
        }
        let _ = judge.send(Batch::Lines {
            dir,
            bytes: std::mem::take(&mut self.bytes),
            parts: std::mem::take(&mut self.parts),
        });
    }
}

/// Copies `src` to `dst`, each line once it is complete, and hands the
/// lines of each read to the judge first: a refused command line is owed
/// its answer before the engine can give it. A line over `max` is judged as soon as
/// it is, and forwarded in pieces as they come. When `dst` fails (its
/// reader has gone: the engine closed its stdin, the controller its
/// end of the tap's stdout), stops reading `src`, as a broken pipe would
/// stop the writer.
fn pump(mut src: impl Read, dst: impl Write, judge: &SyncSender<Batch>, dir: Dir, max: usize) {
    let mut dst = Some(dst);
    let mut buf = vec![0u8; CHUNK];
    // The current line's bytes so far, not yet forwarded (at most `max`,
    // and its LF once it has one).
    let mut partial: Vec<u8> = Vec::new();
    // The current line is over the limit: its bytes are forwarded as they come.
    let mut long = false;
    let mut gathered = Gathered::default();
    loop {
        let n = match src.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                report_io(dir, "read", &e);
                break;
            }
        };
        let chunk = &buf[..n];
        // Chunk bytes before `from` are forwarded with `partial`; those
        // from `to` on are kept in it.
        let mut from = 0;
        let mut to;
        let mut send_partial = false;
        // `partial` holds the start of the line this chunk goes on with.
        let mut held = !partial.is_empty();
        {
            let mut start = 0;
            for lf in memchr::memchr_iter(b'\n', chunk) {
                let end = lf + 1;
                if long {
                    long = false;
                } else if held {
                    held = false;
                    if partial.len() + (lf - start) > max {
                        gathered.too_long();
                    } else {
                        partial.extend_from_slice(&chunk[..end]);
                        from = end;
                        gathered.line(&partial);
                    }
                    send_partial = true;
                } else if lf - start > max {
                    gathered.too_long();
                } else {
                    gathered.line(&chunk[start..end]);
                }
                start = end;
            }
            to = start;
            let tail = n - start;
            if long {
                to = n;
            } else if tail > 0 {
                // Still `held`: no LF came, and the line goes on.
                let before = if held { partial.len() } else { 0 };
                if before + tail > max {
                    gathered.too_long();
                    long = true;
                    send_partial |= held;
                    to = n;
                }
            }
            gathered.send(judge, dir);
        }
        let mut sent = true;
        if send_partial {
            sent &= forward(&mut dst, &partial);
            partial.clear();
            partial.shrink_to(CHUNK);
        }
        sent &= forward(&mut dst, &chunk[from..to]);
        if !long && to < n {
            partial.extend_from_slice(&chunk[to..]);
        }
        if !sent {
            return;
        }
    }
    if !long && !partial.is_empty() {
        // The last line, without its LF.
        gathered.line(&partial);
        gathered.send(judge, dir);
        forward(&mut dst, &partial);
    }
    // Dropping `dst` closes the engine's stdin: the end of input, passed on.
}

/// Writes `bytes` to `dst` while it works; false once it has failed.
fn forward(dst: &mut Option<impl Write>, bytes: &[u8]) -> bool {
    let Some(out) = dst else {
        return false;
    };
    if bytes.is_empty() {
        return true;
    }
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => true,
        Err(_) => {
            *dst = None;
            false
        }
    }
}

fn report_io(dir: Dir, what: &str, e: &io::Error) {
    let stream = match dir {
        Dir::Command => "stdin",
        Dir::Event => "the engine's stdout",
        Dir::Stderr => "the engine's stderr",
    };
    let _ = writeln!(
        io::stderr().lock(),
        "tap: {stream}: {what} failed: {}",
        describe(e)
    );
}
