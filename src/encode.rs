//! Writing the wire line: compact JSON, the reference's key order and string
//! escaping, one `\n` at the end.
//!
//! The key order lives in [`Command::entries`]; this file only spells JSON.

use crate::command::Val;
use crate::Command;
use std::convert::Infallible;
use std::io;

/// Where encoded bytes go. Pieces are always whole UTF-8 sequences.
pub(crate) trait Sink {
    type Error;
    fn put(&mut self, s: &str) -> Result<(), Self::Error>;
}

impl Sink for String {
    type Error = Infallible;
    #[inline]
    fn put(&mut self, s: &str) -> Result<(), Infallible> {
        self.push_str(s);
        Ok(())
    }
}

/// Counts the bytes it is given, so `to_line` can allocate exactly once.
struct Len(usize);

impl Sink for Len {
    type Error = Infallible;
    #[inline]
    fn put(&mut self, s: &str) -> Result<(), Infallible> {
        self.0 += s.len();
        Ok(())
    }
}

/// A small stack buffer in front of a writer: a typical line reaches the
/// writer in one `write_all` (one syscall on an unbuffered pipe, so lines from
/// concurrent writers do not interleave mid-line), with no heap allocation.
/// Pieces bigger than the buffer go straight through.
pub(crate) struct StackBuf<W> {
    out: W,
    buf: [u8; 512],
    len: usize,
}

impl<W: io::Write> StackBuf<W> {
    pub(crate) fn new(out: W) -> Self {
        StackBuf {
            out,
            buf: [0; 512],
            len: 0,
        }
    }

    pub(crate) fn finish(mut self) -> io::Result<()> {
        self.flush_buf()
    }

    fn flush_buf(&mut self) -> io::Result<()> {
        if self.len > 0 {
            self.out.write_all(&self.buf[..self.len])?;
            self.len = 0;
        }
        Ok(())
    }
}

impl<W: io::Write> Sink for StackBuf<W> {
    type Error = io::Error;
    #[inline]
    fn put(&mut self, s: &str) -> io::Result<()> {
        let b = s.as_bytes();
        if b.len() > self.buf.len() - self.len {
            self.flush_buf()?;
            if b.len() >= self.buf.len() {
                return self.out.write_all(b);
            }
        }
        self.buf[self.len..self.len + b.len()].copy_from_slice(b);
        self.len += b.len();
        Ok(())
    }
}

/// Writes `cmd` as its wire line, LF included.
pub(crate) fn write_command<K: Sink>(cmd: &Command, k: &mut K) -> Result<(), K::Error> {
    let mut open = "{\"";
    cmd.entries(|key, val| {
        k.put(open)?;
        open = ",\"";
        k.put(key)?;
        k.put("\":")?;
        match val {
            Val::Str(s) => write_str(k, s),
            Val::Bool(b) => k.put(if b { "true" } else { "false" }),
        }
    })?;
    k.put("}\n")
}

/// The wire line in a `String` allocated once, at its exact length.
pub(crate) fn to_line(cmd: &Command) -> String {
    let mut len = Len(0);
    let Ok(()) = write_command(cmd, &mut len);
    let mut line = String::with_capacity(len.0);
    let Ok(()) = write_command(cmd, &mut line);
    line
}

/// `{"event":"command_error","error":<message>}` and a LF.
pub(crate) fn event_line(message: &str) -> String {
    let mut line = String::with_capacity(message.len() + 40);
    line.push_str("{\"event\":\"command_error\",\"error\":");
    let Ok(()) = write_str(&mut line, message);
    line.push_str("}\n");
    line
}

/// A JSON string as the reference writes it: `\"` `\\` `\n` `\r` `\t` `\b`
/// `\f`, other characters below U+0020 as `\u00xx` (lowercase hex), and
/// everything else raw (DEL, U+2028, `/`, non-ASCII).
pub(crate) fn write_str<K: Sink>(k: &mut K, s: &str) -> Result<(), K::Error> {
    let bytes = s.as_bytes();
    k.put("\"")?;
    let mut run = 0;
    loop {
        let i = crate::decode::next_special(bytes, run);
        let Some(&b) = bytes.get(i) else { break };
        // `i` is at an ASCII byte, so both slices fall on char boundaries.
        k.put(&s[run..i])?;
        let mut hex = [b'\\', b'u', b'0', b'0', 0, 0];
        k.put(match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            _ => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                hex[4] = HEX[usize::from(b >> 4)];
                hex[5] = HEX[usize::from(b & 0xf)];
                std::str::from_utf8(&hex).unwrap_or("\\ufffd")
            }
        })?;
        run = i + 1;
    }
    k.put(&s[run..])?;
    k.put("\"")
}
