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
use crate::wire::find::{next_backslash, next_stop, Special, HIGH};

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

/// A string's raw contents as they stand in the line, between the quotes.
/// Already validated; unescaped only on demand.
#[derive(Clone, Copy)]
pub(crate) struct RawStr<'a> {
    raw: Raw<'a>,
    /// Holds at least one backslash escape.
    escaped: bool,
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
            return match String::from_utf8(raw.to_vec()) {
                Ok(s) => s,
                Err(e) => unreachable_invalid(e.as_bytes()),
            };
        }
        let text = self.raw.text();
        if !self.escaped {
            return text.to_owned();
        }
        // Unescaping never lengthens a string: one allocation, no regrowth.
        let b = text.as_bytes();
        let mut out = String::with_capacity(b.len());
        let mut run = 0;
        loop {
            let i = next_backslash(b, run);
            // `i` is at an ASCII byte (or the end): both ends are boundaries.
            out.push_str(&text[run..i]);
            if i == b.len() {
                return out;
            }
            let (c, len) = escaped_char(b, i);
            out.push(c);
            run = i + len;
        }
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
    let digits = b.get(at..at + 4)?;
    let mut n = 0;
    for &d in digits {
        n = n * 16 + (d as char).to_digit(16)?;
    }
    Some(n)
}

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
                Some(Field::Flat(slot)) => *slot = self.value(1)?,
                // Only an array leaves the loop; any other value is a slot.
                Some(Field::Array { value, .. }) if self.peek() != Some(b'[') => {
                    *value = self.value(1)?;
                }
                Some(Field::Array { value, items }) => {
                    *value = Slot::Absent;
                    self.array_field(items, F::item)?;
                }
                None => {
                    self.value(1)?;
                }
            }
            self.skip_ws();
            match self.peek() {
                Some(b',') => {
                    self.i += 1;
                    self.skip_ws();
                }
                Some(b'}') => {
                    self.i += 1;
                    return Ok(());
                }
                _ => return Err(self.err("expected ',' or '}'")),
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
            let value = self.value(3)?;
            if let Some(Field::Flat(slot)) = field_of(fields, key) {
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
                    return Ok(());
                }
                _ => return Err(self.err("expected ',' or '}'")),
            }
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
        let mut escaped = false;
        let mut seen = 0;
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
                        match std::str::from_utf8(raw) {
                            Ok(text) => Raw::Utf8(text),
                            // `error` finds the line's first invalid byte.
                            Err(_) => return Err(self.fail("invalid UTF-8", start)),
                        }
                    };
                    return Ok(RawStr { raw, escaped });
                }
                Some(b'\\') => {
                    escaped = true;
                    i = self.escape(i)?;
                }
                Some(_) => {
                    return Err(self.fail("control character in a string (escape it)", i));
                }
                None => return Err(self.fail("unterminated string", start - 1)),
            }
        }
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

const BAD_ESCAPE: &str = "invalid escape";
const LONE_SURROGATE: &str = "lone UTF-16 surrogate escape (cannot be held by a Rust String)";

/// Where the value of the known key `key` names goes, comparing keys after
/// unescaping.
#[inline(always)]
fn field_of<'f, 'a, F: FieldSet<RawStr<'a>>>(
    fields: &'f mut F,
    key: RawStr<'_>,
) -> Option<Field<'f, RawStr<'a>, F::Item>> {
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
