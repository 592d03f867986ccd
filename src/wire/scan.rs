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
use crate::wire::fields::{ArrayField, Field, FieldSet, Item, Slot};
use crate::wire::find::{next_stop, sparse_bits, special_or, string_masks, Special, HIGH};
use crate::wire::raw_str::{hex4, unescape, Raw, RawStr, SHORT_ESCAPE};
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
                self.number()?;
                Slot::Other
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
const BAD_ESCAPE: &str = "invalid escape";
const CONTROL: &str = "control character in a string (escape it)";
/// Escapes a string holds before its scan goes over to [`Parser::dense`]:
/// enough that a short one (a key, a quoted word) never pays for a mask.
const DENSE: u32 = 4;
/// The mean distance between escapes, in bytes, under which a string is
/// dense.
const DENSE_GAP: usize = 32;
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
            assert_eq!(crate::wire::find::sparse_bits(mask), sparse, "{mask:#x}");
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
