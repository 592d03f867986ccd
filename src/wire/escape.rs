//! Spelling JSON as the reference writes it, for every revision's encoder and
//! for the engine's `command_error` events: string escaping, and the sinks
//! the bytes go to (a `String`, a length count, stack buffers before a
//! writer). The shape of each revision's line lives with its command type.

use std::convert::Infallible;
use std::{fmt, io};

/// Where encoded bytes go. Pieces are always whole UTF-8 sequences.
pub(crate) trait Sink {
    type Error;
    fn put(&mut self, s: &str) -> Result<(), Self::Error>;
    /// The escape sequence for `byte`, one the encoder escapes.
    fn put_escape(&mut self, byte: u8) -> Result<(), Self::Error>;
    /// At least `n` more bytes are coming: a sink that cannot take them
    /// fails now, before a long string is scanned for nothing.
    #[inline(always)]
    fn expect(&mut self, n: usize) -> Result<(), Self::Error> {
        let _ = n;
        Ok(())
    }
    /// The body of a JSON string, escaped (no quotes): by default, each
    /// run between escapes as a piece.
    #[inline]
    fn put_escaped(&mut self, s: &str) -> Result<(), Self::Error> {
        let bytes = s.as_bytes();
        let mut run = 0;
        loop {
            let i = crate::wire::find::next_special(bytes, run);
            // `i` is at an ASCII byte (or the end), so the run ends on a char
            // boundary.
            self.put(&s[run..i])?;
            let Some(&b) = bytes.get(i) else { break };
            self.put_escape(b)?;
            run = i + 1;
        }
        Ok(())
    }
}

/// Bytes past a buffer's limit that [`escape_into`] may write: a run's
/// 64-byte move from just under the limit, the run (up to 63 bytes) and an
/// escape's 8-byte entry after it.
const SLACK: usize = 72;

/// One word step of [`escape_into`]: `w`, the next `n` (at most 8) bytes
/// of `s` from `*i` (padded past them), stored whole at `*len`; if one of
/// them needs escaping, the output goes up to the first such byte and its
/// escape is stored after.
#[inline(always)]
fn word_step<const N: usize>(
    buf: &mut [u8; N],
    len: &mut usize,
    s: &[u8],
    i: &mut usize,
    w: u64,
    n: usize,
) {
    use crate::wire::find::{Special, Stops};
    buf[*len..*len + 8].copy_from_slice(&w.to_le_bytes());
    let found = Special::bits(w);
    if found == 0 {
        *len += n;
        *i += n;
        return;
    }
    let k = (found.trailing_zeros() / 8) as usize;
    *len += k;
    *i += k;
    let entry = &ESCAPES[usize::from(s[*i])];
    buf[*len..*len + 8].copy_from_slice(entry);
    *len += usize::from(entry[7]);
    *i += 1;
}

/// Escapes `s[*i..]` into `buf` from `*len` on, until the string is done
/// (`true`) or `*len` reaches `N - SLACK` (`false`: make room and call
/// again). Every copy is a fixed-size block stored whole, into the slack if
/// need be, and whatever lands past `*len` is overwritten later.
///
/// Plain text is copied 64 bytes at a time (the block's mask from `lanes`:
/// the build's SSE2, or AVX2 for a long string where the CPU has it; then
/// stored as it is). In a block
/// holding escapes, a mask with a bit per byte to escape is walked: each
/// run is stored as the rest of the block (one fixed 64-byte move, from a
/// padded copy of the block), the escape's padded 8-byte entry over what
/// follows the run. No call, no rescan and no branch on a run's length per
/// escape.
#[inline(always)]
fn escape_into<const N: usize, L: crate::wire::find::Lanes>(
    lanes: L,
    buf: &mut [u8; N],
    len: &mut usize,
    s: &[u8],
    i: &mut usize,
) -> bool {
    use crate::wire::find;
    // A constant, so that every store below is known to be in bounds.
    let limit = N - SLACK;
    // Kept in registers, stored back on the way out.
    let (mut n, mut at) = (*len, *i);
    let done = 'outer: {
        // Whole blocks, iterated without a check on the string's length.
        for block in s[at..].chunks_exact(64) {
            if n >= limit {
                // A block is left: the string is not done.
                break 'outer false;
            }
            let block: &[u8; 64] = block.try_into().unwrap_or(&[0; 64]);
            let mut bits = lanes.special_bits(block);
            if bits == 0 {
                buf[n..n + 64].copy_from_slice(block);
                n += 64;
                at += 64;
                continue;
            }
            // A bit per byte to escape, walked: each run stored as the
            // rest of the block (a fixed 64-byte move, from the string
            // itself while 128 bytes are left in it, else from a padded
            // copy), the escape's entry over what follows it.
            let padded: [u8; 128];
            let window: &[u8] = match s.get(at..at + 128) {
                Some(window) => window,
                None => {
                    let mut p = [0; 128];
                    p[..64].copy_from_slice(block);
                    padded = p;
                    &padded
                }
            };
            let window: &[u8; 128] = window.try_into().unwrap_or(&[0; 128]);
            let base = at;
            let mut pos = 0;
            while bits != 0 {
                if n >= limit {
                    at = base + pos;
                    break 'outer false;
                }
                let k = bits.trailing_zeros() as usize;
                buf[n..n + 64].copy_from_slice(&window[pos..pos + 64]);
                n += k - pos;
                let entry = &ESCAPES[usize::from(window[k])];
                buf[n..n + 8].copy_from_slice(entry);
                n += usize::from(entry[7]);
                pos = k + 1;
                bits &= bits - 1;
            }
            if n >= limit {
                at = base + pos;
                break 'outer false;
            }
            buf[n..n + 64].copy_from_slice(&window[pos..pos + 64]);
            n += 64 - pos;
            at = base + 64;
        }
        // Fewer than 64 bytes left: words, the last one padded.
        loop {
            if n >= limit {
                break 'outer at == s.len();
            }
            let rest = &s[at..];
            if rest.is_empty() {
                break 'outer true;
            }
            let w = match rest.get(..8) {
                Some(chunk) => {
                    let mut w = [0; 8];
                    w.copy_from_slice(chunk);
                    u64::from_le_bytes(w)
                }
                None => find::padded_word(rest),
            };
            word_step(buf, &mut n, s, &mut at, w, rest.len().min(8));
        }
    };
    *len = n;
    *i = at;
    done
}

/// The shortest plain run [`StackBuf`] writes straight from the string
/// once its buffer is full: one copy into a `Vec`, not two.
const LONG_RUN: usize = CAP;

/// How far ahead a long plain run is scanned before it is written: near
/// enough that what is written was just read, from L1 (16 KiB: under a
/// Zen 4 core's 32 KiB of L1d, and the bench Xeon's 48 KiB). On 1 MiB of
/// ASCII a 64 KiB window took 1.2x a copy's time on Zen 4, against 1.4x to
/// 1.5x for the whole run scanned first; on the Xeon, 16 KiB took 1.07x to
/// 1.08x against 1.11x to 1.21x for 64 KiB.
const AHEAD: usize = 2 * CAP;

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

/// A formatter as a sink, for `Display` of a command: its line written
/// through the same encoder as every other line, piece by piece.
pub(crate) struct Fmt<'a, 'b>(pub(crate) &'a mut fmt::Formatter<'b>);

impl Sink for Fmt<'_, '_> {
    type Error = fmt::Error;
    #[inline]
    fn put(&mut self, s: &str) -> fmt::Result {
        self.0.write_str(s)
    }
    #[inline]
    fn put_escape(&mut self, byte: u8) -> fmt::Result {
        // Every escape sequence is ASCII: this never fails.
        let escape = std::str::from_utf8(escape_bytes(byte)).map_err(|_| fmt::Error)?;
        self.0.write_str(escape)
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

/// The bytes of a line's first try ([`ShortBuf`]): most lines are shorter.
const SHORT: usize = 512;

/// Bytes [`StackBuf`] gathers before each write: a line up to this long
/// reaches the writer in one call, a longer one in one call per this many
/// bytes at most.
pub(crate) const CAP: usize = 8 * 1024;

/// Writes the line `encode` makes to `out` in as few `write` calls as a
/// stack buffer allows, without allocating: one `write_all` for a line of up
/// to [`CAP`] bytes (so lines from concurrent writers of one pipe do not
/// interleave mid-line), and for a longer one a `write_all` per [`CAP`]
/// bytes at most (every write but the last is of a whole number of `CAP`s).
///
/// `encode` is called once into a 512-byte buffer, and only if the line
/// does not fit, again from the start into an 8 KiB one: zeroing 8 KiB
/// would cost a short line more than encoding it does.
#[inline(always)]
pub(crate) fn write_line<W: io::Write, F>(
    mut out: W,
    short: F,
    long: impl FnOnce(&mut StackBuf<&mut W>) -> io::Result<()>,
) -> io::Result<()>
where
    F: FnOnce(&mut ShortBuf<'_>) -> Result<(), Overflow>,
{
    // The bytes and the length apart: zeroed together, the length is part
    // of one wide store, and its first load (every line's first piece)
    // waits for that store to land.
    let mut bytes = [0; SHORT + SLACK];
    let mut buf = ShortBuf {
        buf: &mut bytes,
        len: 0,
    };
    if let Ok(()) = short(&mut buf) {
        return out.write_all(&buf.buf[..buf.len]);
    }
    write_long(&mut out, long)
}

/// [`write_line`] of a line longer than [`SHORT`] bytes.
#[inline(never)]
fn write_long<W: io::Write>(
    out: &mut W,
    long: impl FnOnce(&mut StackBuf<&mut W>) -> io::Result<()>,
) -> io::Result<()> {
    let mut sink = StackBuf {
        out,
        buf: [0; CAP + SLACK],
        len: 0,
    };
    long(&mut sink)?;
    sink.flush_buf()
}

/// The line did not fit in a [`ShortBuf`].
pub(crate) struct Overflow;

/// A line's first try: [`SHORT`] bytes on the stack, given up when full.
pub(crate) struct ShortBuf<'a> {
    /// `SHORT` bytes, and slack for blocks copied whole.
    buf: &'a mut [u8; SHORT + SLACK],
    len: usize,
}

impl ShortBuf<'_> {
    /// The unused part of the buffer, `n` bytes of it, for a caller to fill
    /// (then [`ShortBuf::advance`]).
    #[inline]
    pub(crate) fn room(&mut self, n: usize) -> Result<&mut [u8], Overflow> {
        if n > SHORT - self.len {
            return Err(Overflow);
        }
        Ok(&mut self.buf[self.len..self.len + n])
    }

    #[inline]
    pub(crate) fn advance(&mut self, n: usize) {
        self.len += n;
    }
}

impl Sink for ShortBuf<'_> {
    type Error = Overflow;
    #[inline(always)]
    fn expect(&mut self, n: usize) -> Result<(), Overflow> {
        if n > SHORT - self.len {
            return Err(Overflow);
        }
        Ok(())
    }

    #[inline]
    fn put_escaped(&mut self, s: &str) -> Result<(), Overflow> {
        let mut i = 0;
        let done = escape_into(
            crate::wire::find::Base,
            self.buf,
            &mut self.len,
            s.as_bytes(),
            &mut i,
        );
        // Done past the limit is too long as well: `put` counts on `len`
        // being within it.
        if !done || self.len > SHORT {
            return Err(Overflow);
        }
        Ok(())
    }

    #[inline(always)]
    fn put(&mut self, s: &str) -> Result<(), Overflow> {
        let b = s.as_bytes();
        if b.len() > SHORT - self.len {
            return Err(Overflow);
        }
        append(self.buf, &mut self.len, b);
        Ok(())
    }

    #[inline]
    fn put_escape(&mut self, byte: u8) -> Result<(), Overflow> {
        let entry = &ESCAPES[usize::from(byte)];
        let n = usize::from(entry[7]);
        if n > SHORT - self.len {
            return Err(Overflow);
        }
        self.buf[self.len..self.len + 8].copy_from_slice(entry);
        self.len += n;
        Ok(())
    }
}

/// An 8 KiB stack buffer in front of a writer, written only when full (and
/// at the end): every write but the last is of a whole number of [`CAP`]s.
/// A piece longer than what is left fills the buffer, and its whole `CAP`s
/// beyond go straight through; so does a long plain run of a string, which
/// is otherwise escaped into the buffer a block at a time.
pub(crate) struct StackBuf<W> {
    out: W,
    /// `CAP` bytes, and slack past them so that blocks can be copied whole
    /// (whatever lands past `len` is ignored). Between pieces `len` is at
    /// most `CAP`.
    buf: [u8; CAP + SLACK],
    len: usize,
}

impl<W: io::Write> StackBuf<W> {
    /// Writes the first `CAP` bytes, and moves what is past them (less than
    /// `SLACK`) to the front.
    #[cold]
    fn flush_cap(&mut self) -> io::Result<()> {
        self.out.write_all(&self.buf[..CAP])?;
        self.buf.copy_within(CAP..self.len, 0);
        self.len -= CAP;
        Ok(())
    }

    fn flush_buf(&mut self) -> io::Result<()> {
        if self.len > 0 {
            self.out.write_all(&self.buf[..self.len])?;
            self.len = 0;
        }
        Ok(())
    }

    #[inline(always)]
    pub(crate) fn put_bytes(&mut self, b: &[u8]) -> io::Result<()> {
        if b.len() > CAP - self.len {
            return self.put_past_end(b);
        }
        append(&mut self.buf, &mut self.len, b);
        Ok(())
    }

    /// `put_bytes` of a piece that does not fit in what is left: the buffer
    /// filled to the brim and written, the piece's whole `CAP`s beyond
    /// written straight from it, its tail kept.
    #[cold]
    #[inline(never)]
    fn put_past_end(&mut self, b: &[u8]) -> io::Result<()> {
        let (head, rest) = b.split_at(CAP - self.len);
        self.buf[self.len..CAP].copy_from_slice(head);
        self.out.write_all(&self.buf[..CAP])?;
        let whole = rest.len() - rest.len() % CAP;
        if whole > 0 {
            self.out.write_all(&rest[..whole])?;
        }
        let tail = &rest[whole..];
        self.buf[..tail.len()].copy_from_slice(tail);
        self.len = tail.len();
        Ok(())
    }

    /// The most of `b` (at least `CAP - len` bytes of it) that can be
    /// written in whole `CAP`s: the buffer filled from it and written if it
    /// holds anything, then the rest straight from `b`. Returns how much of
    /// `b` that was; the buffer is then empty.
    #[inline(never)]
    fn put_whole(&mut self, b: &[u8]) -> io::Result<usize> {
        let head = if self.len == 0 {
            0
        } else {
            let head = CAP - self.len;
            self.buf[self.len..CAP].copy_from_slice(&b[..head]);
            self.out.write_all(&self.buf[..CAP])?;
            self.len = 0;
            head
        };
        // (Of nothing, `write_all` makes no call.)
        let whole = (b.len() - head) / CAP * CAP;
        self.out.write_all(&b[head..head + whole])?;
        Ok(head + whole)
    }

    /// The unused part of the buffer, at most `n` bytes of it, for a caller
    /// to fill (then [`StackBuf::advance`]); empty when the buffer is full.
    #[inline]
    pub(crate) fn room(&mut self, n: usize) -> &mut [u8] {
        let end = self.len + n.min(CAP - self.len);
        &mut self.buf[self.len..end]
    }

    #[inline]
    pub(crate) fn advance(&mut self, n: usize) -> io::Result<()> {
        self.len += n;
        if self.len == CAP {
            self.flush_buf()?;
        }
        Ok(())
    }
}

/// Copies `b` into `buf` at `len`, which the caller saw it fits, and moves
/// `len` past it.
#[inline(always)]
fn append(buf: &mut [u8], len: &mut usize, b: &[u8]) {
    let dst = &mut buf[*len..*len + b.len()];
    if b.len() <= 16 {
        copy_short(dst, b);
    } else {
        dst.copy_from_slice(b);
    }
    *len += b.len();
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
    fn put_escaped(&mut self, s: &str) -> io::Result<()> {
        crate::wire::find::dispatch(PutEscaped {
            sink: self,
            s: s.as_bytes(),
        })
    }

    #[inline]
    fn put(&mut self, s: &str) -> io::Result<()> {
        self.put_bytes(s.as_bytes())
    }

    #[inline]
    fn put_escape(&mut self, byte: u8) -> io::Result<()> {
        let entry = &ESCAPES[usize::from(byte)];
        let n = usize::from(entry[7]);
        if n > CAP - self.len {
            // Split over the write, so that it is of a whole buffer.
            return self.put_past_end(&entry[..n]);
        }
        self.buf[self.len..self.len + 8].copy_from_slice(entry);
        self.len += n;
        Ok(())
    }
}

/// [`StackBuf`]'s `put_escaped`, run with the best vector unit there is:
/// a string that reaches it is long.
struct PutEscaped<'a, W> {
    sink: &'a mut StackBuf<W>,
    s: &'a [u8],
}

impl<W: io::Write> crate::wire::find::WithLanes for PutEscaped<'_, W> {
    type Output = io::Result<()>;

    #[inline(always)]
    fn run<L: crate::wire::find::Lanes>(self, lanes: L) -> io::Result<()> {
        let (sink, b) = (self.sink, self.s);
        let mut i = 0;
        loop {
            let done = escape_into(lanes, &mut sink.buf, &mut sink.len, b, &mut i);
            if sink.len >= CAP {
                sink.flush_cap()?;
            }
            if done {
                return Ok(());
            }
            // The buffer was full. A long plain run from here fills it and
            // its whole `CAP`s beyond go to the writer straight from the
            // string: copied once, not twice, into a `Vec`. Scanned a window
            // at a time, so that what is written was just read; what is
            // left of it (less than `CAP`) goes through the buffer.
            let mut scanned = i;
            loop {
                let window = b.len().min(scanned + AHEAD);
                scanned = crate::wire::find::plain_blocks_end(lanes, &b[..window], scanned);
                if scanned - i < LONG_RUN {
                    break;
                }
                // Less than `CAP` is left of it: the next window decides.
                i += sink.put_whole(&b[i..scanned])?;
            }
        }
    }
}

/// For each byte the encoder escapes (`"`, `\`, the controls below U+0020),
/// its escape sequence as the reference writes it, padded to 7 bytes, with
/// its length in byte 7. Zeros for other bytes: 256 entries, so that any
/// byte indexes it without a bounds check.
static ESCAPES: [[u8; 8]; 256] = {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut t = [[0u8; 8]; 256];
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

/// An integer as JSON writes it, in plain digits (the reference's
/// `Double::to_string` for a whole number of this size): formatted on the
/// stack, so a line is still written without allocating.
#[inline]
pub(crate) fn write_int<K: Sink>(k: &mut K, n: i64) -> Result<(), K::Error> {
    k.put(itoa::Buffer::new().format(n))
}

/// [`write_str`] in general.
#[inline(never)]
fn write_escaped<K: Sink>(k: &mut K, s: &str) -> Result<(), K::Error> {
    // Escaping only lengthens a string.
    k.expect(s.len() + 2)?;
    k.put("\"")?;
    k.put_escaped(s)?;
    k.put("\"")
}

#[cfg(test)]
mod tests {
    //! A long string's escaping with each vector unit (the build's own and,
    //! where the CPU has it, AVX2) against the plain escaper: the public
    //! tests only ever reach the one `dispatch` picks.

    use super::{PutEscaped, Sink, StackBuf, AHEAD, CAP, SLACK};
    use crate::wire::find::{Base, Lanes, WithLanes};
    use std::io;

    /// A writer that keeps the size of each write.
    #[derive(Default)]
    struct Writes {
        sizes: Vec<usize>,
        bytes: Vec<u8>,
    }

    impl io::Write for Writes {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.sizes.push(buf.len());
            self.bytes.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// What `put_escaped` writes for `s` through a [`StackBuf`] with
    /// `lanes`, once it has checked that every write but the last was of
    /// whole buffers.
    #[track_caller]
    fn escaped_with<L: Lanes>(lanes: L, s: &str) -> Vec<u8> {
        let mut out = Writes::default();
        let mut sink = StackBuf {
            out: &mut out,
            buf: [0; CAP + SLACK],
            len: 0,
        };
        let run = PutEscaped {
            sink: &mut sink,
            s: s.as_bytes(),
        }
        .run(lanes);
        assert!(run.is_ok());
        assert!(sink.flush_buf().is_ok());
        let (_, whole) = out.sizes.split_last().unwrap_or((&0, &[]));
        assert!(
            whole.iter().all(|&n| n > 0 && n % CAP == 0),
            "writes of {} bytes: {:?}",
            s.len(),
            out.sizes
        );
        out.bytes
    }

    /// The plain escaper's output: a run at a time, found byte by byte.
    fn expected(s: &str) -> Vec<u8> {
        let mut e = String::new();
        let Ok(()) = Sink::put_escaped(&mut e, s);
        e.into_bytes()
    }

    #[track_caller]
    fn check_all(s: &str) {
        let want = expected(s);
        assert_eq!(escaped_with(Base, s), want, "base, {} bytes", s.len());
        #[cfg(all(target_arch = "x86_64", not(serve_command_portable), feature = "avx2"))]
        if let Some(v3) = pulp::x86::V3::try_new() {
            assert_eq!(escaped_with(v3, s), want, "avx2, {} bytes", s.len());
        }
    }

    /// Each byte the encoder escapes, and the plain bytes next to them in
    /// the masks' arithmetic (`c ^ 2` and `c ^ 0x5c`), at every offset of a
    /// block and of a 256-byte stretch, in strings that end in the stack
    /// buffer, that fill it, and that take the long plain run's path.
    #[test]
    fn every_byte_at_every_offset_of_a_long_string() {
        let bytes = [
            "\0", "\u{1f}", "\"", "\\", "\n", " ", "!", "#", "[", "]", "\u{7f}", "é",
        ];
        for len in [300, CAP + 300, 3 * CAP + 300] {
            for b in bytes {
                let plain = len - b.len();
                for at in (0..300.min(plain)).chain(plain.saturating_sub(300)..=plain) {
                    let mut s = "a".repeat(plain);
                    s.insert_str(at, b);
                    check_all(&s);
                }
            }
        }
    }

    #[test]
    fn escapes_back_to_back_and_apart_in_a_long_string() {
        let mut s = String::new();
        for k in 0..4 * CAP {
            s.push(if k % 7 == 0 { '"' } else { 'x' });
            if k % 301 == 0 {
                s.push_str("\n\t\\\u{1}");
            }
        }
        check_all(&s);
        check_all(&"\"".repeat(3 * CAP));
    }

    /// Plain runs as long as the buffer and the scan's window, and a block
    /// or a byte either side of them, between escapes: the bytes of the
    /// plain escaper, in writes of whole buffers.
    #[test]
    fn long_plain_runs_around_the_buffer_and_the_window() {
        let lens = [
            CAP - 1,
            CAP,
            CAP + 1,
            AHEAD - 65,
            AHEAD - 64,
            AHEAD - 1,
            AHEAD,
            AHEAD + 1,
            AHEAD + 64,
            2 * AHEAD + CAP + 7,
        ];
        for first in lens {
            for second in lens {
                let s = ["a".repeat(first), "b".repeat(second), "c".repeat(100)].join("\n");
                check_all(&s);
                check_all(&format!("\"{s}"));
            }
        }
    }
}
