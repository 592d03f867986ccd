//! A string as the line holds it, between its quotes: its span, already
//! validated by the scan, unescaped only when a rule reads it, by the
//! fastest way its contents allow (ASCII, escapes far apart or close
//! together, long runs).

use crate::wire::fields::WireStr;
use crate::wire::find::{backslash_bits, has_backslash, next_backslash, sparse_bits};

/// A string's raw contents as they stand in the line, between the quotes.
/// Already validated; unescaped only on demand.
#[derive(Clone, Copy)]
pub(crate) struct RawStr<'a> {
    pub(crate) raw: Raw<'a>,
    /// Holds at least one backslash escape.
    pub(crate) escaped: bool,
    /// Its escapes came close together (the scan went over to
    /// `Parser::dense` (scan.rs)): short runs between them.
    pub(crate) dense: bool,
}

/// The raw bytes of a string, as the scan left them.
#[derive(Clone, Copy)]
pub(crate) enum Raw<'a> {
    /// All ASCII: turning them into a `str` is the fast path of
    /// `str::from_utf8`, and only a string a command takes pays it.
    Ascii(&'a [u8]),
    /// Held a byte above 0x7f, so the scan has checked it already.
    Utf8(&'a str),
}

impl<'a> Raw<'a> {
    #[inline(always)]
    pub(crate) fn bytes(self) -> &'a [u8] {
        match self {
            Raw::Ascii(b) => b,
            Raw::Utf8(s) => s.as_bytes(),
        }
    }

    #[inline]
    pub(crate) fn text(self) -> &'a str {
        match self {
            // Never the default: the scan saw only ASCII. No path panics.
            Raw::Ascii(b) => std::str::from_utf8(b).unwrap_or_default(),
            Raw::Utf8(s) => s,
        }
    }
}

impl<'a> RawStr<'a> {
    /// The string's bytes as the line holds them, when that is the string
    /// (it holds no escape).
    #[inline]
    pub(crate) fn plain(&self) -> Option<&'a [u8]> {
        (!self.escaped).then(|| self.raw.bytes())
    }

    /// Whether the string is empty: an escape never unescapes to nothing.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.raw.bytes().is_empty()
    }
}

impl WireStr for RawStr<'_> {
    // Inlined into `decide`, where `lit` is a constant: the comparison
    // becomes a length check and a load or two.
    #[inline(always)]
    fn is(&self, lit: &str) -> bool {
        if !self.escaped {
            return self.raw.bytes() == lit.as_bytes();
        }
        escaped_is(self.raw.text(), lit)
    }

    #[inline]
    fn as_text(&self) -> std::borrow::Cow<'_, str> {
        if self.escaped {
            std::borrow::Cow::Owned(self.into_string())
        } else {
            std::borrow::Cow::Borrowed(self.raw.text())
        }
    }

    #[inline]
    fn as_utf8(&self) -> std::borrow::Cow<'_, [u8]> {
        if self.escaped {
            std::borrow::Cow::Owned(self.into_string().into_bytes())
        } else {
            std::borrow::Cow::Borrowed(self.raw.bytes())
        }
    }

    #[inline]
    fn into_string(self) -> String {
        if let (Raw::Ascii(raw), false) = (self.raw, self.escaped) {
            // Copied first: the copy is aligned, so the check that makes it
            // a `String` takes its word-at-a-time path from the first byte.
            return checked_string(raw.to_vec());
        }
        match (self.raw, self.escaped) {
            (Raw::Utf8(text), false) => text.to_owned(),
            (Raw::Utf8(text), true) if self.dense && text.len() >= CHUNKED => {
                unescape_into(Chunked {
                    out: String::with_capacity(text.len()),
                    src: text.as_bytes(),
                    buf: [0; CHUNK + 32],
                    len: 0,
                })
            }
            (Raw::Utf8(text), true) => unescape_into(Str {
                out: String::with_capacity(text.len()),
                src: text,
            }),
            (Raw::Ascii(raw), true) if self.dense && raw.len() >= CHUNKED => {
                checked_string(unescape_into(Chunked {
                    out: Vec::with_capacity(raw.len()),
                    src: raw,
                    buf: [0; CHUNK + 32],
                    len: 0,
                }))
            }
            (Raw::Ascii(raw), _) => {
                // Built as bytes, with no boundary to keep; the final check is
                // std's ASCII fast path (unless a `\u` escape put non-ASCII
                // in, which it then checks).
                let out = unescape_into(Bytes {
                    out: Vec::with_capacity(raw.len()),
                    src: raw,
                });
                checked_string(out)
            }
        }
    }
}

/// Where an unescaped string is built, and the raw string it comes from.
/// Unescaping never lengthens a string, so the output, allocated at the raw
/// string's length, is allocated once and never grows.
trait Unescaped {
    type Out;
    fn src(&self) -> &[u8];
    /// Appends the raw `src[run..end]`, where `end` is at a backslash or the
    /// end. A short run is copied as a fixed 16 or 32 bytes and the copy cut
    /// back: a move of known size instead of a `memcpy` call whose size
    /// changes every time. The output never needs more room for it: it is
    /// never longer than `src[..run]`.
    fn run(&mut self, run: usize, end: usize);
    /// [`Unescaped::run`], then the ASCII byte `c`.
    fn run_then(&mut self, run: usize, end: usize, c: u8);
    /// Appends any character.
    fn char(&mut self, c: char);
    fn done(self) -> Self::Out;
}

/// Text holding non-ASCII: validated once, pushed as `&str` slices.
struct Str<'a> {
    out: String,
    src: &'a str,
}

impl Unescaped for Str<'_> {
    type Out = String;
    #[inline(always)]
    fn src(&self) -> &[u8] {
        self.src.as_bytes()
    }
    #[inline(always)]
    fn run(&mut self, run: usize, end: usize) {
        let n = end - run;
        if n <= 16 {
            // (`get`, not indexing and a boundary check: the compiler then
            // sees the 16 and moves the bytes inline.)
            if let Some(block) = self.src.get(run..run + 16) {
                let keep = self.out.len() + n;
                self.out.push_str(block);
                self.out.truncate(keep);
                return;
            }
        }
        push_long(&mut self.out, &self.src[run..end]);
    }
    #[inline(always)]
    fn run_then(&mut self, run: usize, end: usize, c: u8) {
        self.run(run, end);
        // The mask tells the compiler the push is one byte.
        self.out.push(char::from(c & 0x7f));
    }
    #[inline(never)]
    fn char(&mut self, c: char) {
        self.out.push(c);
    }
    fn done(self) -> String {
        self.out
    }
}

/// The shortest string [`Chunked`] unescapes: below it, zeroing the stack
/// buffer costs more than the boundary checks it saves. (Only a string
/// whose escapes are dense goes to `Chunked` at all: in one whose escapes
/// are far apart, such as prose, each long run would flush a buffer of a
/// few bytes, which costs more than [`Str`]'s checks.)
const CHUNKED: usize = 512;

/// The bytes [`Chunked`] gathers before each check.
const CHUNK: usize = 2048;

/// The longest run [`Chunked`] copies into its buffer; a longer one goes
/// straight to the `String`.
const LONG: usize = 256;

/// Long text dense with escapes (holding non-ASCII, or ASCII such as pasted
/// code): unescaped as bytes into a stack buffer, with
/// the fixed-size copies of [`Bytes`] and no character boundary to keep,
/// then each bufferful pushed onto the output ([`Gathered`]: a `String`
/// checks it with `simdutf8`, ASCII is checked once at the end).
/// [`Str`] instead checks boundaries at both ends of every run and its
/// copy, and a run whose 16-byte copy ends inside a character costs a
/// `memcpy` call: in text dense with escapes and non-ASCII, most of its
/// time. The buffer only ever ends between characters (a run ends at a
/// backslash, an escape is a whole character), so every bufferful is valid
/// UTF-8 as it stands; and the `String`, allocated at the raw string's
/// length, is still the one allocation.
struct Chunked<'a, O> {
    out: O,
    src: &'a [u8],
    /// `CHUNK` bytes, and room past them for one run's 32-byte copy.
    buf: [u8; CHUNK + 32],
    len: usize,
}

/// Where [`Chunked`] pushes each bufferful: a `String` (text holding
/// non-ASCII, each piece checked by `simdutf8`) or bytes (ASCII text,
/// checked once at the end by std's ASCII fast path).
trait Gathered {
    /// Appends `piece`, which ends between characters.
    fn push_piece(&mut self, piece: &[u8]);
}

impl Gathered for String {
    #[inline]
    fn push_piece(&mut self, piece: &[u8]) {
        match simdutf8::basic::from_utf8(piece) {
            Ok(text) => self.push_str(text),
            Err(_) => self.push_str(&unreachable_invalid(piece)),
        }
    }
}

impl Gathered for Vec<u8> {
    #[inline]
    fn push_piece(&mut self, piece: &[u8]) {
        self.extend_from_slice(piece);
    }
}

impl<O: Gathered> Chunked<'_, O> {
    /// Pushes the buffer onto the output.
    #[inline(never)]
    fn flush(&mut self) {
        self.out.push_piece(&self.buf[..self.len]);
        self.len = 0;
    }

    /// Makes room for a piece of up to 32 bytes.
    #[inline(always)]
    fn room(&mut self) {
        if self.len > CHUNK {
            self.flush();
        }
    }

    /// A run longer than a fixed copy: into the buffer as well (one
    /// `memcpy`), unless it is long enough to go straight to the output
    /// after the buffer. (Each flush of a buffer holding a few bytes would
    /// cost more than the copy.)
    #[inline(never)]
    fn long(&mut self, run: usize, end: usize) {
        let n = end - run;
        if n <= LONG {
            if self.len + n > CHUNK + 32 {
                self.flush();
            }
            self.buf[self.len..self.len + n].copy_from_slice(&self.src[run..end]);
            self.len += n;
            return;
        }
        if self.len > 0 {
            self.flush();
        }
        self.out.push_piece(&self.src[run..end]);
    }
}

impl<O: Gathered> Unescaped for Chunked<'_, O> {
    type Out = O;
    #[inline(always)]
    fn src(&self) -> &[u8] {
        self.src
    }
    #[inline(always)]
    fn run(&mut self, run: usize, end: usize) {
        let n = end - run;
        if n <= 32 {
            if let Some(block) = self.src.get(run..run + 32) {
                self.room();
                self.buf[self.len..self.len + 32].copy_from_slice(block);
                self.len += n;
                return;
            }
        }
        self.long(run, end);
    }
    #[inline(always)]
    fn run_then(&mut self, run: usize, end: usize, c: u8) {
        let n = end - run;
        if n < 32 {
            if let Some(block) = self.src.get(run..run + 32) {
                self.room();
                self.buf[self.len..self.len + 32].copy_from_slice(block);
                self.buf[self.len + n] = c;
                self.len += n + 1;
                return;
            }
        }
        self.run(run, end);
        self.room();
        self.buf[self.len] = c;
        self.len += 1;
    }
    #[inline(never)]
    fn char(&mut self, c: char) {
        self.room();
        let n = c.encode_utf8(&mut self.buf[self.len..self.len + 4]).len();
        self.len += n;
    }
    fn done(mut self) -> O {
        if self.len > 0 {
            self.flush();
        }
        self.out
    }
}

/// Kept out of line, so the compiler does not merge it with the 16-byte
/// copy into one `memcpy` call of either size.
#[inline(never)]
fn push_long(out: &mut String, run: &str) {
    out.push_str(run);
}

/// ASCII text: bytes, with no character boundary to keep.
struct Bytes<'a> {
    out: Vec<u8>,
    src: &'a [u8],
}

impl Unescaped for Bytes<'_> {
    type Out = Vec<u8>;
    #[inline(always)]
    fn src(&self) -> &[u8] {
        self.src
    }
    #[inline(always)]
    fn run(&mut self, run: usize, end: usize) {
        let n = end - run;
        // Code's runs between escapes are often longer than 16 bytes; a
        // 32-byte move costs the same two instructions more.
        if n <= 32 {
            if let Some(block) = self.src.get(run..run + 32) {
                let keep = self.out.len() + n;
                self.out.extend_from_slice(block);
                self.out.truncate(keep);
                return;
            }
        }
        extend_long(&mut self.out, &self.src[run..end]);
    }
    #[inline(always)]
    fn run_then(&mut self, run: usize, end: usize, c: u8) {
        let n = end - run;
        if n < 32 {
            if let Some(block) = self.src.get(run..run + 32) {
                // The escape's byte overwrites the copy's: no second
                // capacity check.
                let keep = self.out.len() + n;
                self.out.extend_from_slice(block);
                self.out[keep] = c;
                self.out.truncate(keep + 1);
                return;
            }
        }
        self.run(run, end);
        self.out.push(c);
    }
    #[inline(never)]
    fn char(&mut self, c: char) {
        self.out
            .extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
    }
    fn done(self) -> Vec<u8> {
        self.out
    }
}

/// As [`push_long`].
#[inline(never)]
fn extend_long(out: &mut Vec<u8>, run: &[u8]) {
    out.extend_from_slice(run);
}

/// The unescaped string of a validated raw string.
///
/// Backslashes are found 64 bytes at a time: a block without one is
/// skipped by a loop the compiler turns into SIMD compares, and in a block
/// with some, a mask holding a bit per backslash is walked with no branch on
/// the distance between escapes (which, in code or mixed text, varies from
/// escape to escape and defeats the predictor).
fn unescape_into<U: Unescaped>(mut u: U) -> U::Out {
    // `src[run..i]` holds no backslash and is not copied yet.
    let mut run = 0;
    let mut i = 0;
    // The last block held few backslashes (a paragraph break in prose): a
    // long run may be under way, skipped faster by a test for any
    // backslash than by a mask.
    let mut sparse = true;
    while let Some(block) = u.src().get(i..i + 64) {
        let block: &[u8; 64] = block.try_into().unwrap_or(&[0; 64]);
        if sparse && !has_backslash(block) {
            i += 64;
            continue;
        }
        let mut m = backslash_bits(block);
        sparse = sparse_bits(m);
        while m != 0 {
            let at = i + m.trailing_zeros() as usize;
            run = push_escaped(&mut u, run, at);
            let past = run - i;
            if past >= 64 {
                break;
            }
            m &= u64::MAX << past;
        }
        i = (i + 64).max(run);
    }
    unescape_tail(&mut u, run, i);
    u.done()
}

/// [`unescape_into`] over the last few bytes: `src[run..i]` holds no backslash.
#[inline(never)]
fn unescape_tail<U: Unescaped>(u: &mut U, mut run: usize, mut i: usize) {
    loop {
        let at = next_backslash(u.src(), i);
        if at == u.src().len() {
            u.run(run, at);
            return;
        }
        run = push_escaped(u, run, at);
        i = run;
    }
}

/// Appends the run `src[run..at]` and the character of the validated
/// escape at `src[at]` (a backslash); returns the index past the escape.
#[inline(always)]
fn push_escaped<U: Unescaped>(u: &mut U, run: usize, at: usize) -> usize {
    match SHORT_ESCAPE[usize::from(u.src().get(at + 1).copied().unwrap_or(0))] {
        0 => {
            u.run(run, at);
            // A `\u` escape: rarer, and its character may take several
            // bytes (a copy kept apart from the runs').
            let (c, len) = unicode_char(u.src(), at);
            u.char(c);
            at + len
        }
        c => {
            u.run_then(run, at, c);
            at + 2
        }
    }
}

/// Bytes the scan found valid as a `String`: std's check, ASCII's fast
/// path unless a `\u` escape put non-ASCII in.
#[inline]
fn checked_string(bytes: Vec<u8>) -> String {
    match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => unreachable_invalid(e.as_bytes()),
    }
}

/// Never called: the scan saw only ASCII. No path panics.
#[cold]
fn unreachable_invalid(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Whether the escaped string `raw` unescapes to `lit`.
#[cold]
#[inline(never)]
fn escaped_is(raw: &str, lit: &str) -> bool {
    let mut rest = lit.as_bytes();
    let mut same = true;
    unescape(raw, |piece| {
        match rest.strip_prefix(piece.as_bytes()) {
            Some(r) => rest = r,
            None => same = false,
        }
        same
    });
    same && rest.is_empty()
}

/// Feeds the unescaped pieces of a validated raw string to `piece` until it
/// returns `false`: the runs between escapes, sliced out of `raw`, and each
/// escape's character.
#[inline(always)]
pub(crate) fn unescape(raw: &str, mut piece: impl FnMut(&str) -> bool) {
    let b = raw.as_bytes();
    let mut run = 0;
    loop {
        let i = next_backslash(b, run);
        // `i` is at an ASCII byte (or the end): both ends are boundaries.
        if !piece(&raw[run..i]) || i == b.len() {
            return;
        }
        let (c, len) = escaped_char(b, i);
        let mut utf8 = [0; 4];
        if !piece(c.encode_utf8(&mut utf8)) {
            return;
        }
        run = i + len;
    }
}

/// The character of the validated escape at `raw[i]` (a backslash), and the
/// escape's length in bytes.
#[inline(always)]
fn escaped_char(raw: &[u8], i: usize) -> (char, usize) {
    // A table rather than a `match`: escapes of every kind follow each
    // other in no order, and one predictable branch beats a jump table.
    match SHORT_ESCAPE[usize::from(raw.get(i + 1).copied().unwrap_or(0))] {
        0 => unicode_char(raw, i),
        c => (char::from(c), 2),
    }
}

/// For each byte that may follow a backslash in a two-byte escape, the byte
/// it stands for; 0 for every other byte (`u` included).
pub(crate) const SHORT_ESCAPE: [u8; 256] = {
    let mut t = [0; 256];
    t[b'"' as usize] = b'"';
    t[b'\\' as usize] = b'\\';
    t[b'/' as usize] = b'/';
    t[b'b' as usize] = 0x08;
    t[b'f' as usize] = 0x0c;
    t[b'n' as usize] = b'\n';
    t[b'r' as usize] = b'\r';
    t[b't' as usize] = b'\t';
    t
};

/// The character of the validated `\uXXXX` escape (or pair) at `raw[i]`.
fn unicode_char(raw: &[u8], i: usize) -> (char, usize) {
    let hi = hex4(raw, i + 2).unwrap_or(0xfffd);
    if (0xD800..0xDC00).contains(&hi) {
        // The scanner let this through only as a valid pair.
        let lo = hex4(raw, i + 8).unwrap_or(0xdc00);
        let c = 0x10000 + ((hi - 0xD800) << 10) + (lo.wrapping_sub(0xDC00) & 0x3ff);
        return (char::from_u32(c).unwrap_or('\u{fffd}'), 12);
    }
    (char::from_u32(hi).unwrap_or('\u{fffd}'), 6)
}

/// The four hex digits at `b[at..at + 4]` as a number.
#[inline]
pub(crate) fn hex4(b: &[u8], at: usize) -> Option<u32> {
    let d = b.get(at..at + 4)?;
    // Four loads and no branch until the end: a bad digit's 0x1_0000 stays
    // at or above bit 16 whatever its shift.
    let n = HEX[usize::from(d[0])] << 12
        | HEX[usize::from(d[1])] << 8
        | HEX[usize::from(d[2])] << 4
        | HEX[usize::from(d[3])];
    (n < 0x1_0000).then_some(n)
}

/// Each hex digit's value; 0x1_0000 for every other byte.
const HEX: [u32; 256] = {
    let mut t = [0x1_0000; 256];
    let mut c = 0;
    while c < 256 {
        t[c] = match c as u8 {
            d @ b'0'..=b'9' => (d - b'0') as u32,
            d @ b'a'..=b'f' => (d - b'a' + 10) as u32,
            d @ b'A'..=b'F' => (d - b'A' + 10) as u32,
            _ => 0x1_0000,
        };
        c += 1;
    }
    t
};
