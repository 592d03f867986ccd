//! Spelling JSON as the reference writes it, for every revision's encoder and
//! for the engine's `command_error` events: string escaping, and the sinks
//! the bytes go to (a `String`, a length count, a stack buffer before a
//! writer). The shape of each revision's line lives with its command type.

use std::convert::Infallible;
use std::io;

/// Where encoded bytes go. Pieces are always whole UTF-8 sequences.
pub(crate) trait Sink {
    type Error;
    fn put(&mut self, s: &str) -> Result<(), Self::Error>;
    /// The escape sequence for `byte`, one the encoder escapes.
    fn put_escape(&mut self, byte: u8) -> Result<(), Self::Error>;
}

impl Sink for String {
    type Error = Infallible;
    #[inline]
    fn put(&mut self, s: &str) -> Result<(), Infallible> {
        self.push_str(s);
        Ok(())
    }
    #[inline]
    fn put_escape(&mut self, byte: u8) -> Result<(), Infallible> {
        // ASCII bytes pushed as `char`s: no copy call for two to six bytes.
        for &b in escape_bytes(byte) {
            self.push(char::from(b));
        }
        Ok(())
    }
}

/// Counts the bytes it is given, so `to_line` can allocate exactly once.
pub(crate) struct Len(pub(crate) usize);

impl Sink for Len {
    type Error = Infallible;
    #[inline]
    fn put(&mut self, s: &str) -> Result<(), Infallible> {
        self.0 += s.len();
        Ok(())
    }
    #[inline]
    fn put_escape(&mut self, byte: u8) -> Result<(), Infallible> {
        self.0 += escape_bytes(byte).len();
        Ok(())
    }
}

/// Bytes [`StackBuf`] gathers before it writes.
const CAP: usize = 512;

/// A small stack buffer in front of a writer: a typical line reaches the
/// writer in one `write_all` (one syscall on an unbuffered pipe, so lines from
/// concurrent writers do not interleave mid-line), with no heap allocation.
/// Pieces bigger than the buffer go straight through.
pub(crate) struct StackBuf<W> {
    out: W,
    /// `CAP` bytes, and 8 of slack past them so that an escape can be copied
    /// as a fixed-size block (whatever lands past `len` is ignored).
    buf: [u8; CAP + 8],
    len: usize,
}

impl<W: io::Write> StackBuf<W> {
    pub(crate) fn new(out: W) -> Self {
        StackBuf {
            out,
            buf: [0; CAP + 8],
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

    #[inline(always)]
    fn put_bytes(&mut self, b: &[u8]) -> io::Result<()> {
        if b.len() > CAP - self.len {
            return self.put_past_end(b);
        }
        let dst = &mut self.buf[self.len..self.len + b.len()];
        if b.len() <= 16 {
            copy_short(dst, b);
        } else {
            dst.copy_from_slice(b);
        }
        self.len += b.len();
        Ok(())
    }

    /// `put_bytes` of a piece that does not fit in what is left.
    #[cold]
    #[inline(never)]
    fn put_past_end(&mut self, b: &[u8]) -> io::Result<()> {
        self.flush_buf()?;
        if b.len() >= CAP {
            return self.out.write_all(b);
        }
        self.buf[..b.len()].copy_from_slice(b);
        self.len = b.len();
        Ok(())
    }
}

/// `dst.copy_from_slice(src)` for at most 16 bytes, as two overlapping
/// fixed-size copies (a few moves) instead of a call to `memcpy`: most
/// pieces of a line (keys, brackets, runs between escapes, short values) are
/// this small.
#[inline(always)]
fn copy_short(dst: &mut [u8], src: &[u8]) {
    let n = src.len();
    if n >= 8 {
        dst[..8].copy_from_slice(&src[..8]);
        dst[n - 8..].copy_from_slice(&src[n - 8..]);
    } else if n >= 4 {
        dst[..4].copy_from_slice(&src[..4]);
        dst[n - 4..].copy_from_slice(&src[n - 4..]);
    } else if n > 0 {
        dst[0] = src[0];
        dst[n / 2] = src[n / 2];
        dst[n - 1] = src[n - 1];
    }
}

impl<W: io::Write> Sink for StackBuf<W> {
    type Error = io::Error;
    #[inline]
    fn put(&mut self, s: &str) -> io::Result<()> {
        self.put_bytes(s.as_bytes())
    }

    #[inline]
    fn put_escape(&mut self, byte: u8) -> io::Result<()> {
        let entry = &ESCAPES[usize::from(byte)];
        let n = usize::from(entry[7]);
        if n > CAP - self.len {
            self.flush_buf()?;
        }
        self.buf[self.len..self.len + 8].copy_from_slice(entry);
        self.len += n;
        Ok(())
    }
}

/// For each byte the encoder escapes (`"`, `\`, the controls below U+0020),
/// its escape sequence as the reference writes it, padded to 7 bytes, with
/// its length in byte 7. Zeros for other bytes.
const ESCAPES: [[u8; 8]; 93] = {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut t = [[0u8; 8]; 93];
    let mut c = 0;
    while c < 0x20 {
        t[c] = [b'\\', b'u', b'0', b'0', HEX[c >> 4], HEX[c & 0xf], 0, 6];
        c += 1;
    }
    t[0x08] = [b'\\', b'b', 0, 0, 0, 0, 0, 2];
    t[0x09] = [b'\\', b't', 0, 0, 0, 0, 0, 2];
    t[0x0a] = [b'\\', b'n', 0, 0, 0, 0, 0, 2];
    t[0x0c] = [b'\\', b'f', 0, 0, 0, 0, 0, 2];
    t[0x0d] = [b'\\', b'r', 0, 0, 0, 0, 0, 2];
    t[b'"' as usize] = [b'\\', b'"', 0, 0, 0, 0, 0, 2];
    t[b'\\' as usize] = [b'\\', b'\\', 0, 0, 0, 0, 0, 2];
    t
};

/// The escape sequence for `byte` (one the encoder escapes), as bytes.
#[inline]
fn escape_bytes(byte: u8) -> &'static [u8] {
    let entry = &ESCAPES[usize::from(byte)];
    &entry[..usize::from(entry[7])]
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
///
/// Inlined only for a short string with nothing to escape (every command
/// name, kind and action, where the check folds away, and most ids); the
/// general case is one out-of-line copy, which keeps the encoder small.
#[inline(always)]
pub(crate) fn write_str<K: Sink>(k: &mut K, s: &str) -> Result<(), K::Error> {
    if s.len() <= 16 && crate::wire::find::next_special(s.as_bytes(), 0) == s.len() {
        k.put("\"")?;
        k.put(s)?;
        return k.put("\"");
    }
    write_escaped(k, s)
}

/// [`write_str`] in general.
#[inline(never)]
fn write_escaped<K: Sink>(k: &mut K, s: &str) -> Result<(), K::Error> {
    let bytes = s.as_bytes();
    k.put("\"")?;
    let mut run = 0;
    loop {
        let i = crate::wire::find::next_special(bytes, run);
        // `i` is at an ASCII byte (or the end), so the run ends on a char
        // boundary.
        k.put(&s[run..i])?;
        let Some(&b) = bytes.get(i) else { break };
        k.put_escape(b)?;
        run = i + 1;
    }
    k.put("\"")
}
