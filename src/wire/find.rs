//! Finding the next byte of a kind in a string: the one search behind the
//! scanner (where a string ends, where its next escape is), the encoder
//! (what needs escaping) and the framer (where a line ends). A leaf: it
//! imports nothing from the crate.

const ONES: u64 = 0x0101_0101_0101_0101;
pub(crate) const HIGH: u64 = 0x8080_8080_8080_8080;

/// Which bytes a scan stops at.
pub(crate) trait Stops {
    /// Whether the scan stops at `c`.
    fn is(c: u8) -> bool;
    /// The high bit of every byte of `w` that [`Stops::is`] flags, and
    /// perhaps of some bytes above the lowest one flagged (a borrow can carry
    /// upward, never downward): the lowest flagged byte is always a stop.
    fn bits(w: u64) -> u64;
    /// From `i`, past every whole 64-byte block holding no stop: the start
    /// of the first block that holds one (or of the last, short, part of
    /// `b`). Sets a high bit of `seen` if a byte it passes is above 0x7f
    /// (the only bits of `seen` ever read).
    #[inline(always)]
    fn skip_blocks(b: &[u8], i: usize, seen: &mut u64) -> usize {
        skip_blocks::<Self>(b, i, seen)
    }
}

/// [`Stops::skip_blocks`] by a loop the compiler turns into SIMD compares
/// (SSE2 on x86-64).
#[inline(always)]
fn skip_blocks<S: Stops + ?Sized>(b: &[u8], mut i: usize, seen: &mut u64) -> usize {
    while let Some(block) = b.get(i..i + 64) {
        let mut any = false;
        let mut or = 0;
        for &c in block {
            any |= S::is(c);
            or |= c;
        }
        if any {
            break;
        }
        *seen |= u64::from(or);
        i += 64;
    }
    i
}

/// The shortest rest of a string that [`Special`]'s block skip hands to
/// the best vector unit: below it, picking one costs more than it saves.
const FAR: usize = 512;

/// The bytes a JSON string cannot hold raw, and that the encoder escapes:
/// `"`, `\` and the controls below U+0020.
pub(crate) struct Special;

impl Stops for Special {
    #[inline(always)]
    fn is(c: u8) -> bool {
        (c == b'"') | (c == b'\\') | (c < 0x20)
    }
    #[inline(always)]
    fn bits(w: u64) -> u64 {
        let quote = w ^ (ONES * u64::from(b'"'));
        let backslash = w ^ (ONES * u64::from(b'\\'));
        let found = (quote.wrapping_sub(ONES) & !quote)
            | (backslash.wrapping_sub(ONES) & !backslash)
            | (w.wrapping_sub(ONES * 0x20) & !w);
        found & HIGH
    }
    #[inline(always)]
    fn skip_blocks(b: &[u8], i: usize, seen: &mut u64) -> usize {
        if b.len().saturating_sub(i) < FAR {
            return skip_blocks::<Self>(b, i, seen);
        }
        dispatch(SkipPlain { b, i, seen })
    }
}

/// [`Special`]'s block skip with a vector unit ([`dispatch`]).
struct SkipPlain<'a> {
    b: &'a [u8],
    i: usize,
    seen: &'a mut u64,
}

impl WithLanes for SkipPlain<'_> {
    type Output = usize;
    #[inline(always)]
    fn run<L: Lanes>(self, lanes: L) -> usize {
        lanes.skip_plain(self.b, self.i, self.seen)
    }
}

/// Whether no byte of `block` is [`Special`] (the portable test): `c ^ 2` is at most 0x20 for
/// the controls and `"` alone, `c ^ 0x5c` is zero for `\` alone, so a min
/// over the block (a loop the compiler turns into SSE2) is two ops a lane,
/// against three compares and two ORs.
#[cfg_attr(
    all(target_arch = "x86_64", not(serve_command_portable)),
    allow(dead_code)
)]
#[inline(always)]
pub(crate) fn special_free(block: &[u8]) -> bool {
    let mut least = u8::MAX;
    for &c in block {
        least = least.min((c ^ 2).saturating_sub(0x20)).min(c ^ 0x5c);
    }
    least != 0
}

/// A backslash: where a validated string's next escape starts.
pub(crate) struct Backslash;

impl Stops for Backslash {
    #[inline(always)]
    fn is(c: u8) -> bool {
        c == b'\\'
    }
    #[inline(always)]
    fn bits(w: u64) -> u64 {
        let backslash = w ^ (ONES * u64::from(b'\\'));
        backslash.wrapping_sub(ONES) & !backslash & HIGH
    }
}

/// One bit per byte of a 64-byte `block`, in order, set where `flag`
/// holds. `flag` is tested on every byte into an array of 0x80 or 0, a loop
/// the compiler turns into SIMD compares held in registers; each 8 bytes of
/// it are then gathered into 8 bits by one multiplication: each high bit
/// lands on its own bit of the top byte, so no two partial products carry
/// into each other.
///
/// Also returns every byte of the block ORed together (in the same loop),
/// for a scan that must know whether the block held a byte above 0x7f.
#[cfg_attr(
    all(target_arch = "x86_64", not(serve_command_portable)),
    allow(dead_code)
)]
#[inline(always)]
pub(crate) fn mask<S: Stops>(block: &[u8; 64]) -> (u64, u8) {
    let mut flags = [0u8; 64];
    let mut or = 0;
    for (f, &c) in flags.iter_mut().zip(block) {
        *f = u8::from(S::is(c)) << 7;
        or |= c;
    }
    let mut m = 0;
    for k in 0..8 {
        let gathered = word(&flags[8 * k..]).wrapping_mul(0x0002_0408_1020_4081) >> 56;
        m |= gathered << (8 * k);
    }
    (m, or)
}

/// A bit per byte of a 64-byte `block`, in order, set where the byte is
/// [`Special`]: the encoder's mask, which also tells it (by being zero)
/// that a block is plain.
#[inline(always)]
pub(crate) fn special_bits(block: &[u8; 64]) -> u64 {
    #[cfg(all(target_arch = "x86_64", not(serve_command_portable)))]
    {
        simd::special_bits(block)
    }
    #[cfg(not(all(target_arch = "x86_64", not(serve_command_portable))))]
    {
        // Most blocks are plain: the cheap test first.
        if special_free(block) {
            0
        } else {
            mask::<Special>(block).0
        }
    }
}

/// The masks by SSE2 compares and `pmovmskb`, 16 bytes at a time (through
/// `wide`'s safe API): a handful of instructions per 16 bytes, against a
/// multiplication per 8 for the portable gather.
#[cfg(all(target_arch = "x86_64", not(serve_command_portable)))]
mod simd {
    use wide::u8x16;

    /// The block as four vectors. (Written out: an array `map` is not
    /// always inlined.)
    #[inline(always)]
    fn lanes(block: &[u8; 64]) -> [u8x16; 4] {
        let part = |k: usize| {
            let mut a = [0u8; 16];
            a.copy_from_slice(&block[16 * k..16 * k + 16]);
            u8x16::new(a)
        };
        [part(0), part(1), part(2), part(3)]
    }

    /// `f` of each vector.
    #[inline(always)]
    fn each(v: [u8x16; 4], f: impl Fn(u8x16) -> u8x16) -> [u8x16; 4] {
        [f(v[0]), f(v[1]), f(v[2]), f(v[3])]
    }

    /// Zero where a byte is special (`"`, `\`, a control), in two ops a
    /// lane as `special_free`.
    #[inline(always)]
    fn least(v: u8x16) -> u8x16 {
        let controls_or_quote = (v ^ u8x16::splat(2)).saturating_sub(u8x16::splat(0x20));
        controls_or_quote.min(v ^ u8x16::splat(b'\\'))
    }

    /// `"`, `\` and the controls below U+0020, in two ops a lane as
    /// `find::special_free`: `c ^ 2` is at most 0x20 for the controls and `"`
    /// alone, `c ^ 0x5c` is zero for `\` alone.
    #[inline(always)]
    pub(super) fn special_bits(block: &[u8; 64]) -> u64 {
        let [a, b, c, d] = each(lanes(block), least);
        let zero = u8x16::splat(0);
        // Most blocks are plain: one mask for all four first.
        if a.min(b).min(c.min(d)).cmp_eq(zero).move_mask() == 0 {
            return 0;
        }
        let bits = |v: u8x16| u64::from(v.cmp_eq(zero).move_mask() as u16);
        bits(a) | bits(b) << 16 | bits(c) << 32 | bits(d) << 48
    }

    /// Whether no byte of `stretch` is special, by a cheaper test than
    /// `least`'s over many vectors: `c ^ 2` and `c ^ 0x5c` each taken down
    /// to their least lane over all sixteen, then tested once. Two ops a
    /// lane, against three and a mask per 64 bytes.
    #[inline(always)]
    pub(super) fn plain_stretch(stretch: &[u8; super::STRETCH]) -> bool {
        let block = |k: usize| {
            let part: &[u8; 64] = stretch[64 * k..64 * k + 64].try_into().unwrap_or(&[0; 64]);
            lanes(part)
        };
        let blocks = [block(0), block(1), block(2), block(3)];
        let least_of = |x: u8x16| {
            let m = |v: [u8x16; 4]| (v[0] ^ x).min(v[1] ^ x).min((v[2] ^ x).min(v[3] ^ x));
            m(blocks[0])
                .min(m(blocks[1]))
                .min(m(blocks[2]).min(m(blocks[3])))
        };
        // At most 0x20: a control or `"`; zero: a backslash.
        let controls_or_quote = least_of(u8x16::splat(2)).saturating_sub(u8x16::splat(0x20));
        let backslash = least_of(u8x16::splat(b'\\'));
        let zero = u8x16::splat(0);
        controls_or_quote.min(backslash).cmp_eq(zero).move_mask() == 0
    }

    /// Whether any lane of the four is 0xff.
    #[inline(always)]
    fn any(flags: [u8x16; 4]) -> bool {
        (flags[0] | flags[1] | flags[2] | flags[3]).move_mask() != 0
    }

    #[inline(always)]
    pub(super) fn has_backslash(block: &[u8; 64]) -> bool {
        any(each(lanes(block), |v| v.cmp_eq(u8x16::splat(b'\\'))))
    }

    #[inline(always)]
    pub(super) fn special_or(block: &[u8; 64]) -> (bool, u8) {
        let v = lanes(block);
        let [a, b, c, d] = each(v, least);
        let special = a.min(b).min(c.min(d)).cmp_eq(u8x16::splat(0)).move_mask() != 0;
        let high = (v[0] | v[1] | v[2] | v[3]).move_mask() != 0;
        (special, if high { 0x80 } else { 0 })
    }

    /// A bit per lane of each of the four 16-byte parts where `flag` is
    /// 0xff, put together.
    #[inline(always)]
    fn gather(flags: [u8x16; 4]) -> u64 {
        let bits = |k: usize| u64::from(flags[k].move_mask() as u16) << (16 * k);
        bits(0) | bits(1) | bits(2) | bits(3)
    }

    #[inline(always)]
    pub(super) fn lf_bits(block: &[u8; 64]) -> u64 {
        gather(each(lanes(block), |v| v.cmp_eq(u8x16::splat(b'\n'))))
    }

    #[inline(always)]
    pub(super) fn backslash_bits(block: &[u8; 64]) -> u64 {
        gather(each(lanes(block), |v| v.cmp_eq(u8x16::splat(b'\\'))))
    }

    #[inline(always)]
    pub(super) fn string_masks(block: &[u8; 64]) -> super::StringMasks {
        let v = lanes(block);
        let is = |c: u8| each(v, |v| v.cmp_eq(u8x16::splat(c)));
        let backslash = is(b'\\');
        let quote = is(b'"');
        // Below 0x20: nothing left after taking 0x1f away.
        let control = each(v, |v| {
            v.saturating_sub(u8x16::splat(0x1f)).cmp_eq(u8x16::splat(0))
        });
        let mut stop = quote;
        let mut short = quote;
        for k in 0..4 {
            stop[k] |= control[k];
            short[k] |= backslash[k];
        }
        for c in [b'/', b'b', b'f', b'n', b'r', b't'] {
            let flag = is(c);
            for k in 0..4 {
                short[k] |= flag[k];
            }
        }
        // Only the high bit of `or` is read: whether a byte above 0x7f
        // was seen.
        let high = (v[0] | v[1] | v[2] | v[3]).move_mask() != 0;
        super::StringMasks {
            backslash: gather(backslash),
            stop: gather(stop),
            short: gather(short),
            or: if high { 0x80 } else { 0 },
        }
    }
}

/// [`string_masks`]'s masks: a bit per byte of a 64-byte block.
pub(crate) struct StringMasks {
    /// A backslash.
    pub(crate) backslash: u64,
    /// `"` and the controls below U+0020: where a string ends, or fails.
    pub(crate) stop: u64,
    /// The bytes that make a short escape after a backslash:
    /// `"`, a backslash, `/`, `b`, `f`, `n`, `r`, `t`.
    pub(crate) short: u64,
    /// Every byte ORed together (its high bit, at least: whether a byte
    /// above 0x7f was seen).
    pub(crate) or: u8,
}

/// The masks a scan of a string dense with escapes needs.
#[inline(always)]
pub(crate) fn string_masks(block: &[u8; 64]) -> StringMasks {
    #[cfg(all(target_arch = "x86_64", not(serve_command_portable)))]
    {
        simd::string_masks(block)
    }
    #[cfg(not(all(target_arch = "x86_64", not(serve_command_portable))))]
    {
        portable_string_masks(block)
    }
}

/// A bit per backslash of a 64-byte `block`.
#[inline(always)]
pub(crate) fn backslash_bits(block: &[u8; 64]) -> u64 {
    #[cfg(all(target_arch = "x86_64", not(serve_command_portable)))]
    {
        simd::backslash_bits(block)
    }
    #[cfg(not(all(target_arch = "x86_64", not(serve_command_portable))))]
    {
        mask::<Backslash>(block).0
    }
}

/// A bit per LF of a 64-byte `block`.
#[inline(always)]
fn lf_bits(block: &[u8; 64]) -> u64 {
    #[cfg(all(target_arch = "x86_64", not(serve_command_portable)))]
    {
        simd::lf_bits(block)
    }
    #[cfg(not(all(target_arch = "x86_64", not(serve_command_portable))))]
    {
        let mut flags = [0u8; 64];
        for (f, &c) in flags.iter_mut().zip(block) {
            *f = u8::from(c == b'\n') << 7;
        }
        gather(&flags)
    }
}

/// Index of the first LF in `b`: where a command line ends. Most lines are
/// short, and there `memchr`'s set-up (its run-time dispatch, its aligning
/// steps) costs more than the search: the first two 64-byte blocks are
/// searched here, with one mask each, and only what lies past them (or a
/// tail shorter than a block) by `memchr`.
#[inline]
pub(crate) fn lf(b: &[u8]) -> Option<usize> {
    let mut i = 0;
    while i < 128 {
        let Some(block) = b.get(i..i + 64) else {
            break;
        };
        let block: &[u8; 64] = block.try_into().unwrap_or(&[0; 64]);
        let bits = lf_bits(block);
        if bits != 0 {
            return Some(i + bits.trailing_zeros() as usize);
        }
        i += 64;
    }
    memchr::memchr(b'\n', &b[i..]).map(|j| i + j)
}

/// Whether a 64-byte `block` holds a backslash.
#[inline(always)]
pub(crate) fn has_backslash(block: &[u8; 64]) -> bool {
    #[cfg(all(target_arch = "x86_64", not(serve_command_portable)))]
    {
        simd::has_backslash(block)
    }
    #[cfg(not(all(target_arch = "x86_64", not(serve_command_portable))))]
    {
        block.iter().fold(false, |any, &c| any | Backslash::is(c))
    }
}

/// Whether a 64-byte `block` holds a [`Special`] byte, and every byte of
/// it ORed together (its high bit at least: whether one is above 0x7f).
#[inline(always)]
pub(crate) fn special_or(block: &[u8; 64]) -> (bool, u8) {
    #[cfg(all(target_arch = "x86_64", not(serve_command_portable)))]
    {
        simd::special_or(block)
    }
    #[cfg(not(all(target_arch = "x86_64", not(serve_command_portable))))]
    {
        let (mut any, mut or) = (false, 0);
        for &c in block {
            any |= Special::is(c);
            or |= c;
        }
        (any, or)
    }
}

/// [`string_masks`] in one loop the compiler turns into SIMD compares, as
/// [`mask`].
#[cfg_attr(
    all(target_arch = "x86_64", not(serve_command_portable)),
    allow(dead_code)
)]
#[inline(always)]
fn portable_string_masks(block: &[u8; 64]) -> StringMasks {
    let mut backslash = [0u8; 64];
    let mut stop = [0u8; 64];
    let mut short = [0u8; 64];
    let mut or = 0;
    for (k, &c) in block.iter().enumerate() {
        let is = |x: u8| u8::from(c == x);
        backslash[k] = is(b'\\') << 7;
        stop[k] = (is(b'"') | u8::from(c < 0x20)) << 7;
        short[k] = (is(b'"')
            | is(b'\\')
            | is(b'/')
            | is(b'b')
            | is(b'f')
            | is(b'n')
            | is(b'r')
            | is(b't'))
            << 7;
        or |= c;
    }
    StringMasks {
        backslash: gather(&backslash),
        stop: gather(&stop),
        short: gather(&short),
        or,
    }
}

/// A bit per byte of `flags` (each 0x80 or 0), in order: one
/// multiplication per 8 bytes gathers their high bits into the top byte,
/// each on its own bit, so no two partial products carry into each other.
#[inline(always)]
fn gather(flags: &[u8; 64]) -> u64 {
    let mut m = 0;
    for k in 0..8 {
        m |= (word(&flags[8 * k..]).wrapping_mul(0x0002_0408_1020_4081) >> 56) << (8 * k);
    }
    m
}

#[inline(always)]
fn word(chunk: &[u8]) -> u64 {
    let mut bytes = [0; 8];
    bytes.copy_from_slice(&chunk[..8]);
    u64::from_le_bytes(bytes)
}

/// Index of the first byte at or after `i` where `S` stops, or `b.len()`;
/// sets a high bit of `seen` ([`HIGH`]) if a byte before it (or perhaps a
/// few after it, up to the end of its word) is above 0x7f, so a caller can
/// tell whether a run may have held one.
///
/// Most stops are near (a key, a short value, dense escapes), so the first
/// sixteen bytes are read a word at a time (SWAR); past them, a long run of
/// plain text is skipped 64 bytes at a time ([`Stops::skip_blocks`]: with
/// AVX2 for a long string where the CPU has it, else by a loop the compiler
/// turns into SIMD compares), and the stop inside the last block is found
/// by SWAR again.
#[inline(always)]
pub(crate) fn next_stop<S: Stops>(b: &[u8], mut i: usize, seen: &mut u64) -> usize {
    for _ in 0..2 {
        let Some(chunk) = b.get(i..i + 8) else {
            return next_stop_tail::<S>(b, i, seen);
        };
        if let Some(stop) = stop_in_word::<S>(chunk, i, seen) {
            return stop;
        }
        i += 8;
    }
    next_stop_far::<S>(b, i, seen)
}

/// [`next_stop`] past its first sixteen bytes.
#[inline(never)]
fn next_stop_far<S: Stops>(b: &[u8], mut i: usize, seen: &mut u64) -> usize {
    i = S::skip_blocks(b, i, seen);
    while let Some(chunk) = b.get(i..i + 8) {
        if let Some(stop) = stop_in_word::<S>(chunk, i, seen) {
            return stop;
        }
        i += 8;
    }
    next_stop_tail::<S>(b, i, seen)
}

/// Where the scan stops in the word `chunk` at `i`, if it does there; its
/// bytes are added to `seen`.
#[inline(always)]
fn stop_in_word<S: Stops>(chunk: &[u8], i: usize, seen: &mut u64) -> Option<usize> {
    let w = word(chunk);
    let found = S::bits(w);
    *seen |= w;
    if found != 0 {
        Some(i + (found.trailing_zeros() / 8) as usize)
    } else {
        None
    }
}

/// [`next_stop`] over the last few (fewer than 8) bytes of `b`: one word,
/// padded with a byte no scan stops at, put together in registers (no loop,
/// no store to reload). Every string the encoder writes ends here.
#[inline(always)]
fn next_stop_tail<S: Stops>(b: &[u8], i: usize, seen: &mut u64) -> usize {
    let rest = b.get(i..).unwrap_or_default();
    debug_assert!(rest.len() < 8);
    let n = rest.len().min(7);
    let w = padded_word(rest);
    *seen |= w;
    let found = S::bits(w);
    if found != 0 {
        i + (found.trailing_zeros() / 8) as usize
    } else {
        i + n
    }
}

/// The first `rest.len()` (fewer than 8) bytes of `rest` as a word, padded
/// with `a`, a byte no scan stops at: put together in registers (no loop, no
/// store to reload).
#[inline(always)]
pub(crate) fn padded_word(rest: &[u8]) -> u64 {
    let n = rest.len().min(7);
    let byte = |k: usize| u64::from(rest[k]);
    let mut w = (ONES * u64::from(b'a')) << (8 * n);
    if n >= 4 {
        // Two overlapping 4-byte loads cover all `n` bytes.
        let lo = u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]);
        let hi = u32::from_le_bytes([rest[n - 4], rest[n - 3], rest[n - 2], rest[n - 1]]);
        w |= u64::from(lo) | u64::from(hi) << (8 * (n - 4));
    } else if n > 0 {
        w |= byte(0) | byte(n / 2) << (8 * (n / 2)) | byte(n - 1) << (8 * (n - 1));
    }
    w
}

/// Index of the first byte at or after `i` that a JSON string cannot hold
/// raw (`"`, `\`, a control below U+0020), or `b.len()`. The encoder's scan.
#[inline]
pub(crate) fn next_special(b: &[u8], i: usize) -> usize {
    next_stop::<Special>(b, i, &mut 0)
}

/// Index of the first backslash at or after `i`, or `b.len()`.
#[inline(always)]
pub(crate) fn next_backslash(b: &[u8], i: usize) -> usize {
    next_stop::<Backslash>(b, i, &mut 0)
}

/// The bytes [`plain_blocks_end`] tests at once while it can.
const STRETCH: usize = 256;

/// Whether no byte of `stretch` is [`Special`].
#[inline(always)]
fn plain_stretch(stretch: &[u8; STRETCH]) -> bool {
    #[cfg(all(target_arch = "x86_64", not(serve_command_portable)))]
    {
        simd::plain_stretch(stretch)
    }
    #[cfg(not(all(target_arch = "x86_64", not(serve_command_portable))))]
    {
        special_free(stretch)
    }
}

/// The end of the whole 64-byte blocks from `i` on that hold no byte a JSON
/// string cannot hold raw ([`Special`]): the encoder's scan of a plain run,
/// which does not need to know where in the next block the escape is.
/// Tested [`STRETCH`] bytes at a time while it can, which is most of a
/// long run.
#[inline(always)]
pub(crate) fn plain_blocks_end<L: Lanes>(lanes: L, b: &[u8], mut i: usize) -> usize {
    while let Some(stretch) = b.get(i..i + STRETCH) {
        if !lanes.plain_stretch(stretch.try_into().unwrap_or(&[0; STRETCH])) {
            break;
        }
        i += STRETCH;
    }
    while let Some(block) = b.get(i..i + 64) {
        let block: &[u8; 64] = block.try_into().unwrap_or(&[0; 64]);
        if lanes.special_bits(block) != 0 {
            break;
        }
        i += 64;
    }
    i
}

/// The vector unit the encoder scans a long string with: [`Base`], what
/// the build targets (SSE2 on x86-64), or AVX2 where the CPU has it,
/// picked at run time by [`dispatch`]. Both give the same answers; AVX2
/// takes half the instructions.
pub(crate) trait Lanes: Copy {
    /// [`special_bits`] of `block`.
    fn special_bits(self, block: &[u8; 64]) -> u64;
    /// Whether no byte of `stretch` is [`Special`].
    fn plain_stretch(self, stretch: &[u8; STRETCH]) -> bool;
    /// [`Stops::skip_blocks`] of [`Special`].
    fn skip_plain(self, b: &[u8], i: usize, seen: &mut u64) -> usize;
}

/// The build's own vector unit: what every other scan uses.
#[derive(Clone, Copy)]
pub(crate) struct Base;

impl Lanes for Base {
    #[inline(always)]
    fn special_bits(self, block: &[u8; 64]) -> u64 {
        special_bits(block)
    }
    #[inline(always)]
    fn plain_stretch(self, stretch: &[u8; STRETCH]) -> bool {
        plain_stretch(stretch)
    }
    #[inline(always)]
    fn skip_plain(self, b: &[u8], i: usize, seen: &mut u64) -> usize {
        skip_blocks::<Special>(b, i, seen)
    }
}

/// Work to run with the best [`Lanes`] the CPU has ([`dispatch`]).
pub(crate) trait WithLanes {
    type Output;
    fn run<L: Lanes>(self, lanes: L) -> Self::Output;
}

/// Runs `op` with AVX2 if the CPU has it (compiled for it whole, through
/// `pulp`'s safe API), else with [`Base`]. The check is one relaxed load
/// once the CPU has been asked, so it is kept to work of many blocks: a
/// long string.
#[inline(always)]
pub(crate) fn dispatch<Op: WithLanes>(op: Op) -> Op::Output {
    #[cfg(all(target_arch = "x86_64", not(serve_command_portable), feature = "avx2"))]
    if let Some(v3) = pulp::x86::V3::try_new() {
        return v3.vectorize(avx2::Run(v3, op));
    }
    op.run(Base)
}

/// [`Lanes`] of AVX2: 32 bytes a compare.
#[cfg(all(target_arch = "x86_64", not(serve_command_portable), feature = "avx2"))]
mod avx2 {
    use super::{Lanes, WithLanes, STRETCH};
    use core::arch::x86_64::__m256i;
    use pulp::x86::V3;

    /// `op` run with `V3`: the closure `vectorize` compiles for AVX2.
    pub(super) struct Run<Op>(pub(super) V3, pub(super) Op);

    impl<Op: WithLanes> pulp::NullaryFnOnce for Run<Op> {
        type Output = Op::Output;
        #[inline(always)]
        fn call(self) -> Op::Output {
            self.1.run(self.0)
        }
    }

    /// The 32 bytes of `b` from `k` as a vector.
    #[inline(always)]
    fn load(b: &[u8], k: usize) -> __m256i {
        let mut a = [0u8; 32];
        a.copy_from_slice(&b[k..k + 32]);
        pulp::cast(a)
    }

    /// Zero where a byte is special, as `simd::least`.
    #[inline(always)]
    fn least(simd: V3, v: __m256i) -> __m256i {
        let (x, splat) = (simd.avx2, |c: u8| simd.avx._mm256_set1_epi8(c as i8));
        let controls_or_quote = x._mm256_subs_epu8(x._mm256_xor_si256(v, splat(2)), splat(0x20));
        x._mm256_min_epu8(controls_or_quote, x._mm256_xor_si256(v, splat(b'\\')))
    }

    /// A bit per lane where `v` is zero.
    #[inline(always)]
    fn zeros(simd: V3, v: __m256i) -> u32 {
        let x = simd.avx2;
        x._mm256_movemask_epi8(x._mm256_cmpeq_epi8(v, simd.avx._mm256_setzero_si256())) as u32
    }

    impl Lanes for V3 {
        #[inline(always)]
        fn special_bits(self, block: &[u8; 64]) -> u64 {
            let (a, b) = (least(self, load(block, 0)), least(self, load(block, 32)));
            // Most blocks are plain: one mask for both first.
            if zeros(self, self.avx2._mm256_min_epu8(a, b)) == 0 {
                return 0;
            }
            u64::from(zeros(self, a)) | u64::from(zeros(self, b)) << 32
        }

        #[inline(always)]
        fn plain_stretch(self, stretch: &[u8; STRETCH]) -> bool {
            let x = self.avx2;
            let mut m = least(self, load(stretch, 0));
            for k in 1..STRETCH / 32 {
                m = x._mm256_min_epu8(m, least(self, load(stretch, 32 * k)));
            }
            zeros(self, m) == 0
        }

        #[inline(always)]
        fn skip_plain(self, b: &[u8], mut i: usize, seen: &mut u64) -> usize {
            let x = self.avx2;
            let mut or = self.avx._mm256_setzero_si256();
            while let Some(block) = b.get(i..i + 64) {
                let (lo, hi) = (load(block, 0), load(block, 32));
                let least = x._mm256_min_epu8(least(self, lo), least(self, hi));
                if zeros(self, least) != 0 {
                    break;
                }
                or = x._mm256_or_si256(or, x._mm256_or_si256(lo, hi));
                i += 64;
            }
            // Only the high bits of what was seen are ever asked for.
            if x._mm256_movemask_epi8(or) != 0 {
                *seen |= super::HIGH;
            }
            i
        }
    }
}

/// Whether a block's mask `m` holds at most three stops: then the next
/// block is first tested for any stop at all before its masks are built.
/// Its three lowest bits cleared leave nothing: `count_ones` is a dozen
/// instructions on the x86-64 baseline, which has no `popcnt`, and in code
/// every block pays it.
#[inline(always)]
pub(crate) fn sparse_bits(m: u64) -> bool {
    let m = m & m.wrapping_sub(1);
    let m = m & m.wrapping_sub(1);
    m & m.wrapping_sub(1) == 0
}

#[cfg(test)]
mod tests {
    //! The scans with each vector unit (the build's own and, where the CPU
    //! has it, AVX2), answer by answer: the encoder's, and the decoder's
    //! skip of a long string's plain blocks.

    use super::{next_stop, plain_blocks_end, Base, Lanes, Special, FAR, HIGH, STRETCH};

    /// The bytes the encoder escapes, and plain bytes next to them in the
    /// masks' arithmetic (`c ^ 2`, `c ^ 0x5c`) and above ASCII.
    const SPECIAL: [u8; 6] = [0x00, 0x0a, 0x1f, b'"', b'\\', 0x01];
    const PLAIN: [u8; 8] = [b' ', b'!', b'#', b'[', b']', 0x7f, 0x80, 0xe9];

    /// One vector unit's scans, as functions of their input.
    struct Unit<'a> {
        bits: &'a dyn Fn(&[u8; 64]) -> u64,
        plain: &'a dyn Fn(&[u8; STRETCH]) -> bool,
        end: &'a dyn Fn(&[u8], usize) -> usize,
        skip: &'a dyn Fn(&[u8], usize, &mut u64) -> usize,
    }

    /// `check` of each unit this CPU has.
    fn each_unit(check: fn(&Unit)) {
        check(&Unit {
            bits: &|b| Base.special_bits(b),
            plain: &|s| Base.plain_stretch(s),
            end: &|b, i| plain_blocks_end(Base, b, i),
            skip: &|b, i, seen| Base.skip_plain(b, i, seen),
        });
        #[cfg(all(target_arch = "x86_64", not(serve_command_portable), feature = "avx2"))]
        if let Some(v3) = pulp::x86::V3::try_new() {
            check(&Unit {
                bits: &|b| v3.special_bits(b),
                plain: &|s| v3.plain_stretch(s),
                end: &|b, i| plain_blocks_end(v3, b, i),
                skip: &|b, i, seen| v3.skip_plain(b, i, seen),
            });
        }
    }

    #[test]
    fn a_block_mask_has_a_bit_per_special_byte() {
        each_unit(|unit| {
            let bits = unit.bits;
            for k in 0..64 {
                for c in SPECIAL {
                    let mut block = [b'a'; 64];
                    block[k] = c;
                    block[63 - k] = c;
                    assert_eq!(bits(&block), 1 << k | 1 << (63 - k), "{c:#04x} at {k}");
                }
                for c in PLAIN {
                    let mut block = [b'a'; 64];
                    block[k] = c;
                    assert_eq!(bits(&block), 0, "{c:#04x} at {k}");
                }
            }
        });
    }

    #[test]
    fn a_stretch_is_plain_unless_a_byte_is_special() {
        each_unit(|unit| {
            let plain = unit.plain;
            assert!(plain(&[b'a'; STRETCH]));
            for k in 0..STRETCH {
                for c in SPECIAL {
                    let mut stretch = [b'a'; STRETCH];
                    stretch[k] = c;
                    assert!(!plain(&stretch), "{c:#04x} at {k}");
                }
                for c in PLAIN {
                    let mut stretch = [b'a'; STRETCH];
                    stretch[k] = c;
                    assert!(plain(&stretch), "{c:#04x} at {k}");
                }
            }
        });
    }

    /// Where a plain run's whole blocks end: before the block holding the
    /// first special byte, or before a last part shorter than a block.
    #[test]
    fn plain_blocks_end_before_the_block_of_the_first_special_byte() {
        each_unit(|unit| {
            let end = unit.end;
            for from in [0, 5] {
                let none = vec![b'a'; 1000];
                assert_eq!(end(&none, from), from + (1000 - from) / 64 * 64);
                for at in from..1000 {
                    let mut b = none.clone();
                    b[at] = b'"';
                    let whole = (at - from) / 64 * 64;
                    assert_eq!(end(&b, from), from + whole, "quote at {at}, from {from}");
                }
            }
        });
    }

    /// The decoder's skip of plain blocks stops where the encoder's scan
    /// does, and has seen a byte above ASCII exactly when one was among
    /// the blocks it passed.
    #[test]
    fn skipped_blocks_end_where_plain_blocks_do_and_see_what_they_pass() {
        each_unit(|unit| {
            let (skip, end) = (unit.skip, unit.end);
            for from in [0, 5] {
                let none = vec![b'a'; 1000];
                let mut seen = 0;
                assert_eq!(skip(&none, from, &mut seen), end(&none, from));
                assert_eq!(seen & HIGH, 0, "nothing above ASCII, from {from}");
                for at in (from..1000).step_by(7) {
                    let mut b = none.clone();
                    b[at] = b'"';
                    let stop = end(&b, from);
                    for high in [from, stop.saturating_sub(1), stop, at + 1] {
                        if high < from || high == at || high >= b.len() {
                            continue;
                        }
                        let mut b = b.clone();
                        b[high] = 0xe9;
                        let mut seen = 0;
                        assert_eq!(skip(&b, from, &mut seen), stop, "quote at {at}");
                        assert_eq!(
                            seen & HIGH != 0,
                            high < stop,
                            "0xe9 at {high}, quote at {at}"
                        );
                    }
                }
            }
        });
    }

    /// A string's scan to its first stop, long enough to go through the
    /// best vector unit: the stop's index, and whether a byte above ASCII
    /// came before it (one 8 bytes or more past it is never seen).
    #[test]
    fn a_long_scan_finds_its_stop_and_sees_what_came_before_it() {
        let len = 3 * FAR;
        for stop in [b'"', b'\\', 0x1f] {
            for at in (0..len).step_by(13) {
                let mut b = vec![b'a'; len];
                b[at] = stop;
                assert_eq!(
                    next_stop::<Special>(&b, 0, &mut 0),
                    at,
                    "{stop:#04x} at {at}"
                );
                for high in [0, at.saturating_sub(1), at + 8, len - 1] {
                    if high >= len || high == at || (high > at && high < at + 8) {
                        continue;
                    }
                    let mut b = b.clone();
                    b[high] = 0xe9;
                    let mut seen = 0;
                    assert_eq!(next_stop::<Special>(&b, 0, &mut seen), at);
                    assert_eq!(seen & HIGH != 0, high < at, "0xe9 at {high}, stop at {at}");
                }
            }
            let none = vec![0xe9; len];
            let mut seen = 0;
            assert_eq!(next_stop::<Special>(&none, 0, &mut seen), len);
            assert_ne!(seen & HIGH, 0);
        }
    }
}
