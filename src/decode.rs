//! `Command::from_slice`: one raw line to a command, without building a
//! `serde_json::Value`.
//!
//! A scanner specialised to one JSON object per line. It validates the whole
//! line as the reference's JSON parser would, but keeps only what the rules
//! read: for each known key, whether it holds a string (as a span of the
//! line, unescaped only if a command takes it), `true`, `false`, or anything
//! else. Everything else is skipped without being built, iteratively, so no
//! depth of nesting can overflow the stack. The rules are in `rules.rs`.

use crate::error::SyntaxError;
use crate::rules::{self, Fields, Slot, WireStr, MAX_KEY_LEN};
use crate::{Command, LineError};

/// Deepest nesting of arrays and objects the reference's parser accepts,
/// counting the command object itself as level 1.
pub(crate) const MAX_DEPTH: usize = 1024;

type Result<T> = std::result::Result<T, SyntaxError>;

pub(crate) fn from_slice(line: &[u8]) -> std::result::Result<Command, LineError> {
    // Validating UTF-8 once up front lets every string below be sliced out
    // of `text` with only O(1) boundary checks.
    let text = std::str::from_utf8(line).map_err(|e| invalid_utf8(e.valid_up_to()))?;
    let mut p = Parser {
        s: text,
        b: line,
        i: 0,
    };
    p.skip_ws();
    if p.peek() == Some(b'{') {
        let fields = p.command_object()?;
        p.end()?;
        Ok(rules::decide(fields)?)
    } else {
        p.skip_value(0)?;
        p.end()?;
        Err(rules::not_an_object().into())
    }
}

#[cold]
fn invalid_utf8(offset: usize) -> SyntaxError {
    SyntaxError::new("invalid UTF-8", offset)
}

/// A string's raw contents as they stand in the line, between the quotes.
/// Already validated; unescaped only on demand.
#[derive(Clone, Copy)]
pub(crate) struct RawStr<'a> {
    raw: &'a str,
    escaped: bool,
}

impl WireStr for RawStr<'_> {
    #[inline]
    fn is(&self, lit: &str) -> bool {
        if !self.escaped {
            return self.raw == lit;
        }
        let mut rest = lit.as_bytes();
        let mut same = true;
        unescape(self.raw, |piece| {
            match rest.strip_prefix(piece.as_bytes()) {
                Some(r) => rest = r,
                None => same = false,
            }
            same
        });
        same && rest.is_empty()
    }

    #[inline]
    fn into_string(self) -> String {
        if !self.escaped {
            return self.raw.to_owned();
        }
        // Unescaping never lengthens a string: one allocation, no regrowth.
        let mut out = String::with_capacity(self.raw.len());
        unescape(self.raw, |piece| {
            out.push_str(piece);
            true
        });
        out
    }
}

/// Feeds the unescaped pieces of a validated raw string to `piece` until it
/// returns `false`.
fn unescape(raw: &str, mut piece: impl FnMut(&str) -> bool) {
    let b = raw.as_bytes();
    let mut run = 0;
    let mut i = 0;
    while let Some(off) = b[i..].iter().position(|&c| c == b'\\') {
        i += off;
        if !piece(&raw[run..i]) {
            return;
        }
        let mut utf8 = [0; 4];
        let unescaped: &str = match b.get(i + 1) {
            Some(b'n') => "\n",
            Some(b't') => "\t",
            Some(b'r') => "\r",
            Some(b'b') => "\u{8}",
            Some(b'f') => "\u{c}",
            Some(b'u') => {
                let hi = hex4(b, i + 2).unwrap_or(0xfffd);
                let c = if (0xD800..0xDC00).contains(&hi) {
                    // The scanner let this through only as a valid pair.
                    let lo = hex4(b, i + 8).unwrap_or(0xdc00);
                    i += 6;
                    0x10000 + ((hi - 0xD800) << 10) + (lo.wrapping_sub(0xDC00) & 0x3ff)
                } else {
                    hi
                };
                i += 4;
                char::from_u32(c)
                    .unwrap_or('\u{fffd}')
                    .encode_utf8(&mut utf8)
            }
            // `\"`, `\\`, `\/`: the byte itself.
            _ => &raw[i + 1..i + 2],
        };
        if !piece(unescaped) {
            return;
        }
        i += 2;
        run = i;
    }
    piece(&raw[run..]);
}

/// The four hex digits at `b[at..at + 4]` as a number.
#[inline]
fn hex4(b: &[u8], at: usize) -> Option<u32> {
    let digits = b.get(at..at + 4)?;
    let mut n = 0;
    for &d in digits {
        n = n * 16 + (d as char).to_digit(16)?;
    }
    Some(n)
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// The bytes a JSON string cannot hold raw, and that the encoder escapes:
/// `"`, `\` and the controls below U+0020.
#[inline]
fn is_special(b: u8) -> bool {
    b == b'"' || b == b'\\' || b < 0x20
}

/// Index of the first special byte at or after `i`, or `b.len()`.
///
/// Eight bytes at a time (SWAR): long runs of plain text in a prompt cost a
/// few instructions per word. The lowest flagged byte is always a true match
/// (a false flag only ever appears above a true one), which is all we read.
#[inline]
pub(crate) fn next_special(b: &[u8], mut i: usize) -> usize {
    while let Some(chunk) = b.get(i..i + 8) {
        let mut word = [0; 8];
        word.copy_from_slice(chunk);
        let w = u64::from_le_bytes(word);
        let quote = w ^ (ONES * u64::from(b'"'));
        let backslash = w ^ (ONES * u64::from(b'\\'));
        let found = (quote.wrapping_sub(ONES) & !quote)
            | (backslash.wrapping_sub(ONES) & !backslash)
            | (w.wrapping_sub(ONES * 0x20) & !w);
        let found = found & HIGH;
        if found != 0 {
            return i + (found.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < b.len() && !is_special(b[i]) {
        i += 1;
    }
    i
}

struct Parser<'a> {
    s: &'a str,
    b: &'a [u8],
    i: usize,
}

impl<'a> Parser<'a> {
    #[inline]
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    #[inline]
    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\r' | b'\n') = self.peek() {
            self.i += 1;
        }
    }

    #[cold]
    #[inline(never)]
    fn err(&self, what: &'static str) -> SyntaxError {
        match self.peek() {
            None => SyntaxError::new("unexpected end of line", self.i),
            Some(_) => SyntaxError::new(what, self.i),
        }
    }

    #[inline]
    fn eat(&mut self, byte: u8, what: &'static str) -> Result<()> {
        if self.peek() == Some(byte) {
            self.i += 1;
            Ok(())
        } else {
            Err(self.err(what))
        }
    }

    /// Only whitespace may follow the value.
    fn end(&mut self) -> Result<()> {
        self.skip_ws();
        match self.peek() {
            None => Ok(()),
            Some(_) => Err(SyntaxError::new(
                "trailing characters after the JSON value",
                self.i,
            )),
        }
    }

    /// The top-level object, keeping the fields the rules read.
    fn command_object(&mut self) -> Result<Fields<RawStr<'a>>> {
        let mut fields = Fields::new();
        self.i += 1; // '{'
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.i += 1;
            return Ok(fields);
        }
        loop {
            let key = self.key()?;
            let slot = key_slot(&mut fields, key);
            let value = match self.peek() {
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
                _ => {
                    self.skip_value(1)?;
                    Slot::Other
                }
            };
            if let Some(slot) = slot {
                *slot = value;
            }
            self.skip_ws();
            match self.peek() {
                Some(b',') => {
                    self.i += 1;
                    self.skip_ws();
                }
                Some(b'}') => {
                    self.i += 1;
                    return Ok(fields);
                }
                _ => return Err(self.err("expected ',' or '}'")),
            }
        }
    }

    /// `"key"` `:` and the whitespace after it; at the key's opening quote.
    #[inline]
    fn key(&mut self) -> Result<RawStr<'a>> {
        self.eat(b'"', "expected a string key")?;
        let key = self.string()?;
        self.skip_ws();
        self.eat(b':', "expected ':'")?;
        self.skip_ws();
        Ok(key)
    }

    #[inline]
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
    #[inline]
    fn string(&mut self) -> Result<RawStr<'a>> {
        let start = self.i;
        let mut escaped = false;
        loop {
            self.i = next_special(self.b, self.i);
            match self.peek() {
                Some(b'"') => {
                    let raw = &self.s[start..self.i];
                    self.i += 1;
                    return Ok(RawStr { raw, escaped });
                }
                Some(b'\\') => {
                    escaped = true;
                    self.escape()?;
                }
                Some(_) => return Err(self.err("control character in a string (escape it)")),
                None => return Err(SyntaxError::new("unterminated string", start - 1)),
            }
        }
    }

    /// Validates one escape at `self.i` (a backslash) and steps over it.
    fn escape(&mut self) -> Result<()> {
        let at = self.i;
        match self.b.get(at + 1) {
            Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => self.i += 2,
            Some(b'u') => {
                let unit = hex4(self.b, at + 2).ok_or_else(|| bad_escape(at))?;
                self.i += 6;
                if (0xD800..0xDC00).contains(&unit) {
                    let low = match self.b.get(self.i..self.i + 2) {
                        Some(b"\\u") => {
                            hex4(self.b, self.i + 2).ok_or_else(|| bad_escape(self.i))?
                        }
                        _ => return Err(lone_surrogate(at)),
                    };
                    if !(0xDC00..0xE000).contains(&low) {
                        return Err(lone_surrogate(at));
                    }
                    self.i += 6;
                } else if (0xDC00..0xE000).contains(&unit) {
                    return Err(lone_surrogate(at));
                }
            }
            _ => return Err(bad_escape(at)),
        }
        Ok(())
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
                        return Err(SyntaxError::new("nested deeper than 1024 levels", self.i));
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

/// The slot a key names, comparing keys after unescaping.
#[inline]
fn key_slot<'f, 'a>(
    fields: &'f mut Fields<RawStr<'a>>,
    key: RawStr<'a>,
) -> Option<&'f mut Slot<RawStr<'a>>> {
    if !key.escaped {
        return fields.slot(key.raw.as_bytes());
    }
    // An escaped key is rare; unescape it onto the stack, and give up as
    // soon as it is too long to be one of ours.
    let mut buf = [0u8; MAX_KEY_LEN];
    let mut len = 0;
    let mut fits = true;
    unescape(key.raw, |piece| {
        let end = len + piece.len();
        fits = end <= MAX_KEY_LEN;
        if fits {
            buf[len..end].copy_from_slice(piece.as_bytes());
            len = end;
        }
        fits
    });
    if fits {
        fields.slot(&buf[..len])
    } else {
        None
    }
}

#[cold]
fn bad_escape(at: usize) -> SyntaxError {
    SyntaxError::new("invalid escape", at)
}

#[cold]
fn lone_surrogate(at: usize) -> SyntaxError {
    SyntaxError::new(
        "lone UTF-16 surrogate escape (cannot be held by a Rust String)",
        at,
    )
}
