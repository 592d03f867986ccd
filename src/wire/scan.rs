//! The line scanner behind every revision's `from_slice`: one raw line to a
//! revision's fields, without building a `serde_json::Value`.
//!
//! A scanner specialised to one JSON object per line. It validates the whole
//! line as the reference's JSON parser would, but keeps only what the rules
//! read: for each key the revision knows ([`FieldSet`]), whether it holds a
//! string (as a span of the line, unescaped only if a command takes it),
//! `true`, `false`, or anything else; and for a key the revision reads
//! inside (v2's `content`, [`Field::Array`]), an array's items one by one,
//! an object item reduced to its own known keys. Everything else is skipped
//! without being built, iteratively, so no depth of nesting can overflow
//! the stack.
//! The rules are each revision's own (`v1/rules.rs`).
//!
//! UTF-8 is checked only where it can occur: inside strings (any other byte
//! above 0x7f is a syntax error), and only in the strings that hold a byte
//! above 0x7f, which the scan notices as it goes. The reference checks UTF-8
//! before anything else, so when the scan fails the whole line is checked
//! before the error is reported: an invalid line reports its first invalid
//! byte, whatever else is wrong with it.

use crate::error::SyntaxError;
use crate::wire::fields::{ArrayField, Field, FieldSet, Item, Slot, WireStr};
use crate::wire::find::{
    backslash_bits, has_backslash, next_backslash, next_stop, special_or, string_masks, Special,
    HIGH,
};
use crate::wire::tree::{JStr, Json, Members, Num};

/// Deepest nesting of arrays and objects the reference's parser accepts,
/// counting the command object itself as level 1.
pub(crate) const MAX_DEPTH: usize = 1024;

/// The scan stopped at a syntax error, which the parser holds. Carrying
/// nothing keeps every `Result` of the scanner in registers.
struct Stop;

type Result<T> = std::result::Result<T, Stop>;

/// Validates `line` and fills `fields` from its top-level object. `Ok(false)`
/// when the line is JSON but not an object (no fields, so no command).
///
/// `fields` is filled in place and never moved, so the caller's `decide`
/// takes it straight from the stack.
#[inline(always)]
pub(crate) fn scan<'a, F: FieldSet<RawStr<'a>>>(
    line: &'a [u8],
    fields: &mut F,
) -> std::result::Result<bool, SyntaxError> {
    let mut p = Parser {
        b: line,
        i: 0,
        error: ("", 0),
    };
    p.line(fields).map_err(|Stop| p.error())
}

/// The whole JSON value of `line` as a tree ([`crate::wire::tree`]), or
/// the syntax error the commands' decoder reports for the same line.
pub(crate) fn parse_tree(line: &[u8]) -> std::result::Result<Json<'_>, SyntaxError> {
    let mut p = Parser {
        b: line,
        i: 0,
        error: ("", 0),
    };
    let tree = p.tree().map_err(|Stop| p.error())?;
    p.skip_ws();
    match p.peek() {
        None => Ok(tree),
        Some(_) => {
            let at = p.i;
            p.fail("trailing characters after the JSON value", at);
            Err(p.error())
        }
    }
}

/// A line as a top-level object's members, for the event decoder, kept in
/// `members` (mostly on the caller's stack); `false` for a line that is
/// JSON but not an object. Errors as [`parse_tree`]'s.
pub(crate) fn parse_object<'a>(
    line: &'a [u8],
    members: &mut Members<'a>,
) -> std::result::Result<bool, SyntaxError> {
    let mut p = Parser {
        b: line,
        i: 0,
        error: ("", 0),
    };
    p.skip_ws();
    let object = p.peek() == Some(b'{');
    if object {
        p.object_members(members).map_err(|Stop| p.error())?;
    } else {
        p.skip_value(0).map_err(|Stop| p.error())?;
    }
    p.skip_ws();
    match p.peek() {
        None => Ok(object),
        Some(_) => {
            let at = p.i;
            p.fail("trailing characters after the JSON value", at);
            Err(p.error())
        }
    }
}

/// A container [`Parser::tree`] is inside: where its items (or members)
/// start on the scratch stack they are built on.
enum Open {
    Arr(usize),
    Obj(usize),
}

/// A string's raw contents as they stand in the line, between the quotes.
/// Already validated; unescaped only on demand.
#[derive(Clone, Copy)]
pub(crate) struct RawStr<'a> {
    raw: Raw<'a>,
    /// Holds at least one backslash escape.
    escaped: bool,
    /// Its escapes came close together (the scan went over to
    /// [`Parser::dense`]): short runs between them.
    dense: bool,
}

/// The raw bytes of a string, as the scan left them.
#[derive(Clone, Copy)]
enum Raw<'a> {
    /// All ASCII: turning them into a `str` is the fast path of
    /// `str::from_utf8`, and only a string a command takes pays it.
    Ascii(&'a [u8]),
    /// Held a byte above 0x7f, so the scan has checked it already.
    Utf8(&'a str),
}

impl<'a> Raw<'a> {
    #[inline(always)]
    fn bytes(self) -> &'a [u8] {
        match self {
            Raw::Ascii(b) => b,
            Raw::Utf8(s) => s.as_bytes(),
        }
    }

    #[inline]
    fn text(self) -> &'a str {
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
fn unescape(raw: &str, mut piece: impl FnMut(&str) -> bool) {
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
const SHORT_ESCAPE: [u8; 256] = {
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
fn hex4(b: &[u8], at: usize) -> Option<u32> {
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

struct Parser<'a> {
    b: &'a [u8],
    i: usize,
    /// What `Stop` stopped at, and where.
    error: (&'static str, usize),
}

impl<'a> Parser<'a> {
    #[inline(always)]
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    #[inline(always)]
    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\r' | b'\n') = self.peek() {
            self.i += 1;
        }
    }

    /// The error the line earns: the first invalid UTF-8 byte if there is
    /// one (the reference checks that before anything else), else where the
    /// scan stopped.
    #[cold]
    #[inline(never)]
    fn error(&self) -> SyntaxError {
        match std::str::from_utf8(self.b) {
            Err(e) => SyntaxError::new("invalid UTF-8", e.valid_up_to()),
            Ok(_) => SyntaxError::new(self.error.0, self.error.1),
        }
    }

    #[cold]
    #[inline(never)]
    fn fail(&mut self, what: &'static str, at: usize) -> Stop {
        self.error = (what, at);
        Stop
    }

    /// `what` at the current byte, or the end of the line if there is none.
    #[cold]
    #[inline(never)]
    fn err(&mut self, what: &'static str) -> Stop {
        match self.peek() {
            None => self.fail("unexpected end of line", self.i),
            Some(_) => self.fail(what, self.i),
        }
    }

    #[inline(always)]
    fn eat(&mut self, byte: u8, what: &'static str) -> Result<()> {
        if self.peek() == Some(byte) {
            self.i += 1;
            Ok(())
        } else {
            Err(self.err(what))
        }
    }

    /// The whole line, filling `fields` if it is an object; whether it is.
    #[inline(always)]
    fn line<F: FieldSet<RawStr<'a>>>(&mut self, fields: &mut F) -> Result<bool> {
        self.skip_ws();
        let object = self.peek() == Some(b'{');
        if object {
            self.command_object(fields)?;
        } else {
            self.skip_value(0)?;
        }
        // Only whitespace may follow the value.
        self.skip_ws();
        match self.peek() {
            None => Ok(object),
            Some(_) => Err(self.fail("trailing characters after the JSON value", self.i)),
        }
    }

    /// The top-level object, keeping the fields the rules read.
    #[inline(always)]
    fn command_object<F: FieldSet<RawStr<'a>>>(&mut self, fields: &mut F) -> Result<()> {
        self.i += 1; // '{'
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.i += 1;
            return Ok(());
        }
        loop {
            let key = self.key()?;
            match field_of(fields, key) {
                Some(Field::Array { value, items }) if self.peek() == Some(b'[') => {
                    *value = Slot::Absent;
                    self.array_field(fields.items(items), F::item)?;
                }
                // Any other value of an array key is a slot: one arm, so
                // the scan of a value is inlined once for both kinds.
                // (A decoded key at the top level is flat: no revision has
                // one, and only an item's are decoded as they are scanned.)
                Some(
                    Field::Flat(slot)
                    | Field::Array { value: slot, .. }
                    | Field::Decoded { value: slot, .. },
                ) => {
                    *slot = self.value(1)?;
                }
                None => {
                    self.value(1)?;
                }
            }
            if !self.more_members()? {
                return Ok(());
            }
        }
    }

    /// One value, reduced to a slot; `depth` is the nesting level of the
    /// container it sits in.
    #[inline(always)]
    fn value(&mut self, depth: usize) -> Result<Slot<RawStr<'a>>> {
        Ok(match self.peek() {
            Some(b'"') => {
                self.i += 1;
                Slot::Str(self.string()?)
            }
            Some(b't') => {
                self.literal(b"true")?;
                Slot::True
            }
            Some(b'f') => {
                self.literal(b"false")?;
                Slot::False
            }
            Some(b'-' | b'0'..=b'9') => {
                let start = self.i;
                self.number()?;
                Slot::Num(number_value(self.b.get(start..self.i).unwrap_or_default()))
            }
            _ => {
                self.skip_value(depth)?;
                Slot::Other
            }
        })
    }

    /// The array value of a key the rules read inside: its items (level 2)
    /// go to `array` one by one, an object item (level 3) as the fields
    /// `item` makes. Syntax errors are found and placed exactly as
    /// [`Parser::skip_value`] would.
    #[inline(never)]
    fn array_field<O: FieldSet<RawStr<'a>>>(
        &mut self,
        array: &mut dyn ArrayField<RawStr<'a>, O>,
        item: fn() -> O,
    ) -> Result<()> {
        array.begin();
        self.i += 1;
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.i += 1;
            return Ok(());
        }
        loop {
            if !array.wants_more() {
                self.skip_value(2)?;
            } else if self.peek() == Some(b'{') {
                let mut fields = item();
                self.item_object(&mut fields)?;
                array.item(Item::Object(fields));
            } else {
                let value = self.value(2)?;
                array.item(Item::Value(value));
            }
            self.skip_ws();
            match self.peek() {
                Some(b',') => {
                    self.i += 1;
                    self.skip_ws();
                }
                Some(b']') => {
                    self.i += 1;
                    return Ok(());
                }
                _ => return Err(self.err("expected ',' or ']'")),
            }
        }
    }

    /// An object item of an array key (level 3), keeping its flat fields.
    fn item_object<O: FieldSet<RawStr<'a>>>(&mut self, fields: &mut O) -> Result<()> {
        self.i += 1; // '{'
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.i += 1;
            return Ok(());
        }
        loop {
            let key = self.key()?;
            match field_of(fields, key) {
                Some(Field::Decoded {
                    value,
                    decoded,
                    decode,
                }) => {
                    // Every value of the key sets both: a duplicate key's
                    // last value wins, with its own decoding or none.
                    *value = match self.decoded_string(decode) {
                        Some((raw, bytes)) => {
                            *decoded = Some(bytes);
                            Slot::Str(raw)
                        }
                        None => {
                            *decoded = None;
                            self.value(3)?
                        }
                    };
                }
                Some(Field::Flat(slot)) => *slot = self.value(3)?,
                // Not read, or read inside at the top level only.
                _ => {
                    self.value(3)?;
                }
            }
            if !self.more_members()? {
                return Ok(());
            }
        }
    }

    /// The string value at `self.i` (its opening quote) and what `decode`
    /// makes of its bytes up to the next quote, if it accepts them
    /// ([`Field::Decoded`]): then the string holds no escape (`decode`
    /// takes no backslash), so that quote closes it, and no control
    /// character or non-ASCII byte, so it is valid as it stands; the scan
    /// goes on past the quote. `None` (and nothing consumed) for any other
    /// value, for which the regular scan finds the string's end and errors.
    #[inline]
    fn decoded_string(
        &mut self,
        decode: fn(&[u8]) -> Option<Vec<u8>>,
    ) -> Option<(RawStr<'a>, Vec<u8>)> {
        let b: &'a [u8] = self.b;
        let rest = b[self.i..].strip_prefix(b"\"")?;
        let raw = &rest[..memchr::memchr(b'"', rest)?];
        let bytes = decode(raw)?;
        self.i += raw.len() + 2;
        let raw = RawStr {
            raw: Raw::Ascii(raw),
            escaped: false,
            dense: false,
        };
        Some((raw, bytes))
    }

    /// After an object's member: `,` and another member follows (`true`),
    /// or `}` and the object is over (`false`).
    #[inline(always)]
    fn more_members(&mut self) -> Result<bool> {
        self.skip_ws();
        match self.peek() {
            Some(b',') => {
                self.i += 1;
                self.skip_ws();
                Ok(true)
            }
            Some(b'}') => {
                self.i += 1;
                Ok(false)
            }
            _ => Err(self.err("expected ',' or '}'")),
        }
    }

    /// `"key"` `:` and the whitespace after it; at the key's opening quote.
    #[inline(always)]
    fn key(&mut self) -> Result<RawStr<'a>> {
        self.eat(b'"', "expected a string key")?;
        let key = self.string()?;
        self.skip_ws();
        self.eat(b':', "expected ':'")?;
        self.skip_ws();
        Ok(key)
    }

    #[inline(always)]
    fn literal(&mut self, word: &'static [u8]) -> Result<()> {
        if self.b[self.i..].starts_with(word) {
            self.i += word.len();
            Ok(())
        } else {
            Err(self.err("expected a JSON value"))
        }
    }

    /// A string's contents; `self.i` is just past the opening quote and ends
    /// just past the closing one.
    #[inline(always)]
    fn string(&mut self) -> Result<RawStr<'a>> {
        let start = self.i;
        let mut i = start;
        let mut seen = 0;
        let mut escapes = 0u32;
        let mut dense = false;
        loop {
            i = next_stop::<Special>(self.b, i, &mut seen);
            match self.b.get(i) {
                Some(b'"') => {
                    self.i = i + 1;
                    let raw = &self.b[start..i];
                    // `seen` may hold bytes past the quote: then a string
                    // of ASCII is checked as if it were not, which is all.
                    let raw = if seen & HIGH == 0 {
                        Raw::Ascii(raw)
                    } else {
                        match simdutf8::basic::from_utf8(raw) {
                            Ok(text) => Raw::Utf8(text),
                            // `error` finds the line's first invalid byte.
                            Err(_) => return Err(self.fail("invalid UTF-8", start)),
                        }
                    };
                    return Ok(RawStr {
                        raw,
                        escaped: escapes != 0,
                        dense,
                    });
                }
                Some(b'\\') => {
                    escapes += 1;
                    i = self.escape(i)?;
                    // Escapes close together (code, mixed text) in a long
                    // string: a mask per block. Far apart (a paragraph break
                    // in prose), or in a short string (a quoted word): the
                    // search above, which skips long runs faster and stops at
                    // a string's end sooner. Tested only after an escape, so
                    // a string without one (most keys and values) never
                    // pays for the test.
                    let len = i - start;
                    if escapes >= DENSE && len >= 64 && len < escapes as usize * DENSE_GAP {
                        i = self.dense(i, &mut seen)?;
                        dense = true;
                    }
                }
                Some(_) => {
                    return Err(self.fail(CONTROL, i));
                }
                None => return Err(self.fail("unterminated string", start - 1)),
            }
        }
    }

    /// The rest of a string dense with escapes, from `i` (not inside an
    /// escape), 64 bytes at a time: a block without a stop is skipped by a
    /// loop the compiler turns into SIMD compares; in a block with some, a
    /// mask with a bit per stop is walked, so the distance from one escape
    /// to the next costs no mispredicted branch. Validates the escapes it
    /// passes, in order, as the byte-wise scan would (so errors are the
    /// same); returns the index of the first stop it does not take (the
    /// closing quote or a control character), or where fewer than 64 bytes
    /// remain, for the caller's scan to go on from.
    #[inline(never)]
    fn dense(&mut self, mut i: usize, seen: &mut u64) -> Result<usize> {
        /// The even bit positions.
        const EVEN: u64 = 0x5555_5555_5555_5555;
        // As in `unescape_into`: the last block held few stops.
        let mut sparse = true;
        while let Some(block) = self.b.get(i..i + 64) {
            let block: &[u8; 64] = block.try_into().unwrap_or(&[0; 64]);
            if sparse {
                let (any, or) = special_or(block);
                if !any {
                    *seen |= u64::from(or);
                    i += 64;
                    continue;
                }
            }
            let m = string_masks(block);
            *seen |= u64::from(m.or);
            let all = m.backslash | m.stop;
            if all == 0 {
                sparse = true;
                i += 64;
                continue;
            }
            sparse = sparse_bits(all);
            // The bytes an escape's backslash escapes: those after an odd
            // run of backslashes (simdjson's carry trick; no escape reaches
            // into a block from the one before, so nothing carries in).
            let follows = m.backslash << 1;
            let odd_starts = m.backslash & !EVEN & !follows;
            let escaped = (EVEN ^ (odd_starts.wrapping_add(m.backslash) << 1)) & follows;
            // The first quote or control character not escaped ends the
            // part of the block the string holds.
            let limit = (m.stop & !escaped).trailing_zeros();
            let inside = u64::MAX.checked_shl(limit).map_or(u64::MAX, |above| !above);
            // Escapes of one byte from the short list are valid as they
            // stand; the others (`\u`, or invalid) are checked one by one,
            // in order, so the first error is the byte-wise scan's.
            let mut others = escaped & !m.short & inside;
            let mut done = i;
            while others != 0 {
                let at = i + others.trailing_zeros() as usize - 1;
                others &= others - 1;
                // (Not the second `\u` of a surrogate pair already taken.)
                if at >= done {
                    done = self.escape(at)?;
                }
            }
            if limit < 64 {
                return Ok(i + limit as usize);
            }
            // An escape whose backslash is the block's last byte.
            if (m.backslash & !escaped) >> 63 != 0 && i + 63 >= done {
                done = self.escape(i + 63)?;
            }
            i = (i + 64).max(done);
        }
        Ok(i)
    }

    /// Validates one escape at `at` (a backslash); returns the index past it.
    #[inline(always)]
    fn escape(&mut self, at: usize) -> Result<usize> {
        let next = self.b.get(at + 1).copied().unwrap_or(0);
        if SHORT_ESCAPE[usize::from(next)] != 0 {
            Ok(at + 2)
        } else if next == b'u' {
            self.unicode_escape(at)
        } else {
            Err(self.fail(BAD_ESCAPE, at))
        }
    }

    /// A `\uXXXX` escape at `at`, or a surrogate pair of them.
    fn unicode_escape(&mut self, at: usize) -> Result<usize> {
        let Some(unit) = hex4(self.b, at + 2) else {
            return Err(self.fail(BAD_ESCAPE, at));
        };
        let next = at + 6;
        if (0xD800..0xDC00).contains(&unit) {
            let low = match self.b.get(next..next + 2) {
                Some(b"\\u") => match hex4(self.b, next + 2) {
                    Some(low) => low,
                    None => return Err(self.fail(BAD_ESCAPE, next)),
                },
                _ => return Err(self.fail(LONE_SURROGATE, at)),
            };
            if !(0xDC00..0xE000).contains(&low) {
                return Err(self.fail(LONE_SURROGATE, at));
            }
            Ok(next + 6)
        } else if (0xDC00..0xE000).contains(&unit) {
            Err(self.fail(LONE_SURROGATE, at))
        } else {
            Ok(next)
        }
    }

    /// Skips one value of any kind, validating it. `depth` is the nesting
    /// level of the container it sits in (0 for a top-level value).
    ///
    /// Iterative, with one bit per open container (set for an array), so a
    /// line nested a million deep costs no stack: it is refused at level
    /// `MAX_DEPTH + 1`.
    fn skip_value(&mut self, depth: usize) -> Result<()> {
        let mut arrays = [0u64; MAX_DEPTH / 64 + 1];
        let mut open = 0usize;
        loop {
            // A value.
            self.skip_ws();
            match self.peek() {
                Some(c @ (b'{' | b'[')) => {
                    if depth + open >= MAX_DEPTH {
                        return Err(self.fail("nested deeper than 1024 levels", self.i));
                    }
                    let is_array = c == b'[';
                    let (word, bit) = (open / 64, open % 64);
                    arrays[word] = (arrays[word] & !(1 << bit)) | (u64::from(is_array) << bit);
                    open += 1;
                    self.i += 1;
                    self.skip_ws();
                    let close = if is_array { b']' } else { b'}' };
                    if self.peek() == Some(close) {
                        self.i += 1;
                        open -= 1;
                    } else {
                        if !is_array {
                            self.key()?;
                        }
                        continue;
                    }
                }
                Some(b'"') => {
                    self.i += 1;
                    self.string()?;
                }
                Some(b't') => self.literal(b"true")?,
                Some(b'f') => self.literal(b"false")?,
                Some(b'n') => self.literal(b"null")?,
                Some(b'-' | b'0'..=b'9') => self.number()?,
                _ => return Err(self.err("expected a JSON value")),
            }
            // After a value: a comma, or closing brackets.
            loop {
                if open == 0 {
                    return Ok(());
                }
                let top = open - 1;
                let in_array = arrays[top / 64] >> (top % 64) & 1 == 1;
                self.skip_ws();
                match (self.peek(), in_array) {
                    (Some(b','), _) => {
                        self.i += 1;
                        if !in_array {
                            self.skip_ws();
                            self.key()?;
                        }
                        break;
                    }
                    (Some(b']'), true) | (Some(b'}'), false) => {
                        self.i += 1;
                        open -= 1;
                    }
                    (_, true) => return Err(self.err("expected ',' or ']'")),
                    (_, false) => return Err(self.err("expected ',' or '}'")),
                }
            }
        }
    }

    /// One whole value, built: containers on an explicit stack (never
    /// deeper than [`MAX_DEPTH`], the top-level value's own counted), so
    /// no nesting grows the call stack. Errors as [`Parser::skip_value`]
    /// finds and places them.
    ///
    /// The open containers' items and members wait on two scratch stacks,
    /// and each container is allocated once, at its size, when it closes.
    fn tree(&mut self) -> Result<Json<'a>> {
        self.tree_at(0)
    }

    /// The top-level object at `self.i` (its `{`): its members, pushed
    /// on `members`.
    fn object_members(&mut self, members: &mut Members<'a>) -> Result<()> {
        self.i += 1;
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.i += 1;
            return Ok(());
        }
        loop {
            let key = JStr::Raw(self.key()?);
            let value = match self.peek() {
                Some(b'{' | b'[') => self.tree_at(1)?,
                _ => self.scalar()?,
            };
            members.push((key, value));
            if !self.more_members()? {
                return Ok(());
            }
        }
    }

    /// A value that is not a container, built.
    #[inline(always)]
    fn scalar(&mut self) -> Result<Json<'a>> {
        Ok(match self.peek() {
            Some(b'"') => {
                self.i += 1;
                Json::Str(JStr::Raw(self.string()?))
            }
            Some(b't') => {
                self.literal(b"true")?;
                Json::Bool(true)
            }
            Some(b'f') => {
                self.literal(b"false")?;
                Json::Bool(false)
            }
            Some(b'n') => {
                self.literal(b"null")?;
                Json::Null
            }
            Some(b'-' | b'0'..=b'9') => {
                let start = self.i;
                self.number()?;
                let raw = self.b.get(start..self.i).unwrap_or_default();
                Json::Num(Num {
                    // A number is ASCII: this never falls back.
                    text: std::borrow::Cow::Borrowed(std::str::from_utf8(raw).unwrap_or("0")),
                })
            }
            _ => return Err(self.err("expected a JSON value")),
        })
    }

    /// [`Parser::tree`] of a value inside `depth` containers.
    fn tree_at(&mut self, depth: usize) -> Result<Json<'a>> {
        let mut open: Vec<Open> = Vec::new();
        let mut items: Vec<Json<'a>> = Vec::new();
        // An object's member waits here with `Null` until its value comes.
        let mut members: Vec<(JStr<'a>, Json<'a>)> = Vec::new();
        loop {
            self.skip_ws();
            let mut value = match self.peek() {
                Some(c @ (b'{' | b'[')) => {
                    if depth + open.len() >= MAX_DEPTH {
                        return Err(self.fail("nested deeper than 1024 levels", self.i));
                    }
                    self.i += 1;
                    self.skip_ws();
                    if c == b'[' {
                        if self.peek() == Some(b']') {
                            self.i += 1;
                            Json::Arr(Vec::new())
                        } else {
                            open.push(Open::Arr(items.len()));
                            continue;
                        }
                    } else if self.peek() == Some(b'}') {
                        self.i += 1;
                        Json::Obj(Vec::new())
                    } else {
                        let key = self.key()?;
                        open.push(Open::Obj(members.len()));
                        members.push((JStr::Raw(key), Json::Null));
                        continue;
                    }
                }
                _ => self.scalar()?,
            };
            // The value goes into the container it closes, and so on up.
            loop {
                self.skip_ws();
                match open.last() {
                    None => return Ok(value),
                    Some(&Open::Arr(start)) => {
                        items.push(value);
                        match self.peek() {
                            Some(b',') => {
                                self.i += 1;
                                break;
                            }
                            Some(b']') => {
                                self.i += 1;
                                value = Json::Arr(items.drain(start..).collect());
                                open.pop();
                            }
                            _ => return Err(self.err("expected ',' or ']'")),
                        }
                    }
                    Some(&Open::Obj(start)) => {
                        if let Some(member) = members.last_mut() {
                            member.1 = value;
                        }
                        match self.peek() {
                            Some(b',') => {
                                self.i += 1;
                                self.skip_ws();
                                let key = self.key()?;
                                members.push((JStr::Raw(key), Json::Null));
                                break;
                            }
                            Some(b'}') => {
                                self.i += 1;
                                value = Json::Obj(members.drain(start..).collect());
                                open.pop();
                            }
                            _ => return Err(self.err("expected ',' or '}'")),
                        }
                    }
                }
            }
        }
    }

    /// A number, by JSON's strict grammar; its magnitude is never computed,
    /// so `1e400` is as good as `1`.
    fn number(&mut self) -> Result<()> {
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek() {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.err("invalid number")),
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            self.some_digits()?;
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.i += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.i += 1;
            }
            self.some_digits()?;
        }
        Ok(())
    }

    #[inline]
    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.i += 1;
        }
    }

    fn some_digits(&mut self) -> Result<()> {
        match self.peek() {
            Some(b'0'..=b'9') => {
                self.digits();
                Ok(())
            }
            _ => Err(self.err("invalid number")),
        }
    }
}

/// A number the scan found good, as the reference's parser reads it into
/// a double.
///
/// That is std's parse (the nearest double, correctly rounded) for every
/// number of at most 800 bytes whose exponent has at most 9 digits. Past
/// that the reference (moonbitlang/core's `json` lexer, then the bundled
/// core's `strconv`) has quirks a line can reach, which
/// [`reference_number`] follows: its slow path wraps the exponent to 32
/// bits (`1e4294967296` is 1) and drops integer digits past 800 from the
/// magnitude, and its fast paths saturate the exponent (at 100,000, and
/// past 65,536) before digits that many can offset it.
pub(crate) fn number_value(number: &[u8]) -> f64 {
    let exponent_digits = number
        .iter()
        .rposition(|b| matches!(b, b'e' | b'E' | b'+' | b'-'))
        .filter(|&at| at > 0)
        .map_or(0, |at| number.len() - at - 1);
    if number.len() <= 800 && exponent_digits <= 9 {
        return parse_f64(number);
    }
    reference_number(number)
}

fn parse_f64(number: &[u8]) -> f64 {
    std::str::from_utf8(number)
        .ok()
        .and_then(|n| n.parse().ok())
        // Never taken: the scan let through only JSON's grammar.
        .unwrap_or(f64::NAN)
}

/// The digits the reference's slow path keeps (`Decimal`'s buffer).
const DECIMAL_DIGITS: usize = 800;

/// [`number_value`] the reference's way, in one pass over the number.
#[cold]
fn reference_number(number: &[u8]) -> f64 {
    let (negative, body) = match number.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, number),
    };
    let split = body
        .iter()
        .position(|b| matches!(b, b'e' | b'E'))
        .unwrap_or(body.len());
    let (mantissa, exponent) = body.split_at(split);
    // An integer: exact up to 2^53, and past it no whole number in range
    // whichever way it is read.
    if exponent.is_empty() && !mantissa.contains(&b'.') {
        return parse_f64(number);
    }
    // The explicit exponent as the lexer caps it, as strconv's fast path
    // saturates it, and as its slow path wraps it.
    let mut exp_negative = false;
    let (mut lexer, mut saturated, mut wrapped) = (0i64, 0i64, 0i32);
    for &b in exponent.iter().skip(1) {
        match b {
            b'-' => exp_negative = true,
            b'0'..=b'9' => {
                let d = i64::from(b - b'0');
                lexer = (lexer * 10 + d).min(100_000);
                if saturated < 0x10000 {
                    saturated = saturated * 10 + d;
                }
                wrapped = wrapped.wrapping_mul(10).wrapping_add(i32::from(b - b'0'));
            }
            _ => {}
        }
    }
    let sign = |e: i64| if exp_negative { -e } else { e };
    // The mantissa: the lexer's first 19 significant digits, their count
    // and the digits after the point; the slow path's digits and point.
    let (mut first19, mut significant, mut fraction) = (0u64, 0u64, 0i64);
    let mut digits: Vec<u8> = Vec::with_capacity(DECIMAL_DIGITS + 1);
    let (mut point, mut after_point, mut truncated) = (0i32, false, false);
    for &b in mantissa {
        if b == b'.' {
            after_point = true;
            point = digits.len() as i32;
            continue;
        }
        fraction += i64::from(after_point);
        if b == b'0' && digits.is_empty() {
            // A leading zero.
            point = point.wrapping_sub(1);
            continue;
        }
        significant += 1;
        if significant <= 19 {
            first19 = first19 * 10 + u64::from(b - b'0');
        }
        if digits.len() < DECIMAL_DIGITS {
            digits.push(b);
        } else if b != b'0' {
            truncated = true;
        }
    }
    if !after_point {
        point = digits.len() as i32;
    }
    if significant == 0 {
        return if negative { -0.0 } else { 0.0 };
    }
    let value = if let Some(quick) = (significant <= 19)
        .then(|| quick_value(first19, sign(lexer) - fraction, sign(saturated) - fraction))
        .flatten()
    {
        quick
    } else {
        // The slow path: 0.DIGITS × 10^point, the point moved by the
        // wrapped exponent; zero below 10^-330, out of range above 10^310
        // (the lexer's infinity).
        let point = point.wrapping_add(if exp_negative {
            wrapped.wrapping_neg()
        } else {
            wrapped
        });
        // Trailing zeros go (the sticky digit, standing after all 800, keeps
        // them when it is there).
        while !truncated && digits.last() == Some(&b'0') {
            digits.pop();
        }
        if digits.is_empty() || point < -330 {
            0.0
        } else if point > 310 {
            f64::INFINITY
        } else {
            let mut text = Vec::with_capacity(digits.len() + 16);
            text.extend_from_slice(b"0.");
            text.extend_from_slice(&digits);
            if truncated {
                text.push(b'1');
            }
            text.extend_from_slice(format!("e{point}").as_bytes());
            parse_f64(&text)
        }
    };
    if negative {
        -value
    } else {
        value
    }
}

/// What the reference's fast paths make of at most 19 significant digits
/// `m`: the lexer's (Clinger's, then Eisel-Lemire's, which gives up on
/// anything but a normal double) with its capped exponent `lexer`, then
/// strconv's (Clinger's) with its saturated one; `None` when neither
/// applies and the slow path reads the text.
fn quick_value(m: u64, lexer: i64, saturated: i64) -> Option<f64> {
    let scaled = |e: i64| parse_f64(format!("{m}e{e}").as_bytes());
    if (-348..=347).contains(&lexer) {
        let v = scaled(lexer);
        if v.is_normal() {
            return Some(v);
        }
    }
    clinger(m, saturated).then(|| scaled(saturated))
}

/// Whether Clinger's fast path takes `m × 10^e` (exactly, so correctly
/// rounded): `e` from -22 to 22 with `m` at most 2^53, or up to 37 with
/// `m × 10^(e - 22)` at most 2^53.
fn clinger(m: u64, e: i64) -> bool {
    const MAX: u64 = 1 << 53;
    match e {
        -22..=22 => m <= MAX,
        23..=37 => 10u64
            .checked_pow((e - 22) as u32)
            .and_then(|p| m.checked_mul(p))
            .is_some_and(|v| v <= MAX),
        _ => false,
    }
}

const BAD_ESCAPE: &str = "invalid escape";
const CONTROL: &str = "control character in a string (escape it)";
/// Escapes a string holds before its scan goes over to [`Parser::dense`]:
/// enough that a short one (a key, a quoted word) never pays for a mask.
const DENSE: u32 = 4;
/// The mean distance between escapes, in bytes, under which a string is
/// dense.
const DENSE_GAP: usize = 32;
/// Whether a block's mask `m` holds at most three stops: then the next
/// block is first tested for any stop at all before its masks are built.
/// Its three lowest bits cleared leave nothing: `count_ones` is a dozen
/// instructions on the x86-64 baseline, which has no `popcnt`, and in code
/// every block pays it.
#[inline(always)]
fn sparse_bits(m: u64) -> bool {
    let m = m & m.wrapping_sub(1);
    let m = m & m.wrapping_sub(1);
    m & m.wrapping_sub(1) == 0
}
const LONE_SURROGATE: &str = "lone UTF-16 surrogate escape (cannot be held by a Rust String)";

/// Where the value of the known key `key` names goes, comparing keys after
/// unescaping.
#[inline(always)]
fn field_of<'f, 'a, F: FieldSet<RawStr<'a>>>(
    fields: &'f mut F,
    key: RawStr<'_>,
) -> Option<Field<'f, RawStr<'a>, usize>> {
    if !key.escaped {
        return fields.field(key.raw.bytes());
    }
    let mut buf = [0u8; KEY_BUF];
    let len = escaped_key(key.raw.text(), &mut buf[..F::MAX_KEY_LEN.min(KEY_BUF)])?;
    fields.field(&buf[..len])
}

/// Room for the longest known key of any revision, unescaped.
const KEY_BUF: usize = 32;

/// An escaped key is rare: unescape it into `buf`, and give up as soon as
/// it is too long to be one of ours. The unescaped length, if it fits.
#[cold]
fn escaped_key(raw: &str, buf: &mut [u8]) -> Option<usize> {
    let mut len = 0;
    let mut fits = true;
    unescape(raw, |piece| {
        let end = len + piece.len();
        fits = end <= buf.len();
        if fits {
            buf[len..end].copy_from_slice(piece.as_bytes());
            len = end;
        }
        fits
    });
    fits.then_some(len)
}

#[cfg(test)]
mod tests {
    //! The block-wise paths (`Parser::dense`, `unescape_into`) against
    //! serde_json and against errors placed at every offset of a 64-byte
    //! block: a string needs a few escapes and 64 bytes to reach them, which
    //! few vectors have.

    use crate::error::LineError;
    use crate::v1::Command;

    /// xorshift64*, so every run tests the same strings.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n as u64) as usize
        }
    }

    /// Raw (escaped) pieces of a JSON string, every kind of escape among
    /// runs of ASCII and multi-byte characters.
    const PIECES: &[&str] = &[
        r#"\""#,
        r"\\",
        r"\/",
        r"\b",
        r"\f",
        r"\n",
        r"\r",
        r"\t",
        r"\u00e9",
        r"\u0001",
        r"\ud83d\ude00",
        r"\u65E5",
        "é",
        "日本",
        "😀",
        "a",
        "fn main() {",
        " ",
        "0123456789abcdef",
        "0123456789abcdef0123456789abcdef0123456",
        "ü",
    ];

    fn text_of(line: &str) -> String {
        match Command::from_slice(line.as_bytes()) {
            Ok(Command::Prompt { text, .. }) => text,
            other => panic!("{line}: {other:?}"),
        }
    }

    /// Strings of `pieces` decode as serde_json decodes them, read by a
    /// command and skipped (as a value and as a key).
    #[track_caller]
    fn dense_strings_decode_as_serde_json(pieces: &[&str], seed: u64) {
        let mut rng = Rng(seed);
        for case in 0..3000 {
            let mut raw = String::new();
            // One in eight long enough (up to about 5 KiB) for the stack
            // buffer of `Chunked` to fill, more than once.
            let n = if case % 8 == 0 { 1000 } else { 80 };
            for _ in 0..rng.below(n) {
                raw.push_str(pieces[rng.below(pieces.len())]);
            }
            let want: String = serde_json::from_str(&format!("\"{raw}\"")).unwrap();
            let line = format!(r#"{{"command":"prompt","text":"{raw}"}}"#);
            assert_eq!(text_of(&line), want, "{line}");
            // Skipped in a field no command reads, and as a key.
            let line = format!(r#"{{"x":"{raw}","{raw}":1,"command":"cancel"}}"#);
            assert_eq!(
                Command::from_slice(line.as_bytes()),
                Ok(Command::Cancel),
                "{line}"
            );
        }
    }

    #[test]
    fn dense_strings_decode_as_serde_json_decodes_them() {
        dense_strings_decode_as_serde_json(PIECES, 0x5eed_0010);
    }

    /// Raw ASCII (pasted code): unescaped as bytes, through `Chunked` once
    /// long and dense, `\u` escapes of non-ASCII included.
    #[test]
    fn dense_ascii_strings_decode_as_serde_json_decodes_them() {
        let ascii: Vec<&str> = PIECES.iter().copied().filter(|p| p.is_ascii()).collect();
        assert_eq!(ascii.len(), PIECES.len() - 4);
        dense_strings_decode_as_serde_json(&ascii, 0x5eed_0011);
    }

    #[test]
    fn a_block_is_sparse_with_at_most_three_stops() {
        let table: &[(u64, bool)] = &[
            (0, true),
            (1, true),
            (1 << 63, true),
            (0b101, true),
            (1 | 1 << 31 | 1 << 63, true),
            (0b1111, false),
            (1 | 1 << 20 | 1 << 40 | 1 << 63, false),
            (u64::MAX, false),
        ];
        for &(mask, sparse) in table {
            assert_eq!(super::sparse_bits(mask), sparse, "{mask:#x}");
        }
    }

    #[track_caller]
    fn error_at(line: &[u8], what: &str, at: usize) {
        match Command::from_slice(line) {
            Err(LineError::Syntax(e)) => assert_eq!(
                e.to_string(),
                format!("{what} at byte {at}"),
                "{}",
                String::from_utf8_lossy(line)
            ),
            other => panic!("{}: {other:?}", String::from_utf8_lossy(line)),
        }
    }

    #[test]
    fn errors_in_dense_strings_are_where_the_byte_wise_scan_puts_them() {
        const CONTROL: &str = "control character in a string (escape it)";
        const ESCAPE: &str = "invalid escape";
        const LONE: &str = "lone UTF-16 surrogate escape (cannot be held by a Rust String)";
        let head = br#"{"command":"prompt","text":""#;
        // (what is placed, the error, its offset within what is placed)
        let faults: &[(&[u8], &str, usize)] = &[
            (b"\x01", CONTROL, 0),
            (b"\x1f\\q", CONTROL, 0),
            (b"\\q\x01", ESCAPE, 0),
            (b"\\\x01", ESCAPE, 0),
            (b"\\", ESCAPE, 0),
            (b"\\u12G4", ESCAPE, 0),
            (b"\\u12", ESCAPE, 0),
            (b"\\ud800x", LONE, 0),
            (b"\\udc00", LONE, 0),
            (b"\\ud800\\u0041", LONE, 0),
            (b"\\ud800\\uZZZZ", ESCAPE, 6),
            (b"\\\\\\\"\\q", ESCAPE, 4),
        ];
        // Dense prefixes of every length, so each fault lands on every
        // offset of a block, and at its end.
        for prefix_len in 0..140 {
            let mut prefix = Vec::new();
            let mut k = 0;
            while prefix.len() < prefix_len {
                prefix.extend_from_slice(
                    [
                        &b"\\n"[..],
                        b"\\\"",
                        b"ab",
                        b"\\u00e9",
                        b"\xc3\xa9",
                        b"\\\\",
                    ][k % 6],
                );
                k += 1;
            }
            for &(fault, what, off) in faults {
                let mut line = head.to_vec();
                line.extend_from_slice(&prefix);
                let at = line.len() + off;
                line.extend_from_slice(fault);
                line.extend_from_slice(b" and more \\n text to end on \"}");
                error_at(&line, what, at);
            }
            // Unterminated: reported at the opening quote.
            let mut line = head.to_vec();
            line.extend_from_slice(&prefix);
            error_at(&line, "unterminated string", head.len() - 1);
            line.extend_from_slice(b"\\n\\t\\\"\\\\ and no end");
            error_at(&line, "unterminated string", head.len() - 1);
            // Invalid UTF-8 anywhere is reported first, at its byte.
            let mut line = head.to_vec();
            line.extend_from_slice(&prefix);
            let at = line.len();
            line.extend_from_slice(b"\xff\x01\\q\"}");
            error_at(&line, "invalid UTF-8", at);
        }
    }
}
