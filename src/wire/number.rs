//! A number the scan found good, read into a double as the reference's
//! parser reads it (std's correctly rounded parse, and the reference's
//! quirks past 800 digits or a 9-digit exponent).

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
