//! Sizes as a person reads and writes them (`64MiB`), for `--max-line-len`:
//! parsed and shown in this one place.

use std::fmt;

/// A number of bytes. Shown in the largest binary unit that divides it
/// exactly (`64MiB`, `1536KiB`, `100`), so `--help` shows the default as
/// it is written on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Size(pub usize);

/// The units a size may carry, largest first. Binary only: `KB` and `MB`
/// mean 1000 to some and 1024 to others, and a limit should not depend on
/// which, so they are refused with a pointer to the unit meant.
const UNITS: [(&str, usize); 3] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (unit, factor) in UNITS {
            if self.0 != 0 && self.0 % factor == 0 {
                return write!(f, "{}{unit}", self.0 / factor);
            }
        }
        write!(f, "{}", self.0)
    }
}

/// Parses `65536`, `64KiB`, `64MiB` or `1GiB` (a whole number, then at most
/// one unit, nothing between them). clap's `value_parser`: the message is
/// printed after `invalid value '<s>' for '--max-line-len <SIZE>': `.
pub fn parse(s: &str) -> Result<Size, String> {
    let digits = s.len() - s.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let (number, unit) = s.split_at(digits);
    let factor = match unit {
        "" => 1,
        "KB" | "kB" | "MB" | "GB" => {
            let binary = format!("{}iB", &unit[..1].to_ascii_uppercase());
            return Err(format!(
                "{unit} is ambiguous (1000 or 1024?): write {number}{binary} for {number} × 1024{}, or the number of bytes",
                match unit {
                    "MB" => "²",
                    "GB" => "³",
                    _ => "",
                }
            ));
        }
        _ => match UNITS.iter().find(|(name, _)| *name == unit) {
            Some(&(_, factor)) => factor,
            None => return Err(expected()),
        },
    };
    if number.is_empty() {
        return Err(expected());
    }
    number
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(factor))
        .map(Size)
        .ok_or_else(|| format!("{s} is more bytes than this machine can address"))
}

fn expected() -> String {
    "expected a number of bytes, alone or with KiB, MiB or GiB (65536, 64KiB, 64MiB, 1GiB)"
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_and_show_as_written() {
        let table: &[(&str, Result<usize, &str>, &str)] = &[
            ("0", Ok(0), "0"),
            ("100", Ok(100), "100"),
            ("65536", Ok(65536), "64KiB"),
            ("64KiB", Ok(64 << 10), "64KiB"),
            ("1536KiB", Ok(1536 << 10), "1536KiB"),
            ("64MiB", Ok(64 << 20), "64MiB"),
            ("1024MiB", Ok(1 << 30), "1GiB"),
            ("1GiB", Ok(1 << 30), "1GiB"),
            ("0KiB", Ok(0), "0"),
        ];
        for &(text, bytes, shown) in table {
            let size = parse(text);
            assert_eq!(size.map(|s| s.0), bytes.map_err(str::to_owned), "{text}");
            assert_eq!(Size(bytes.unwrap()).to_string(), shown, "{text}");
        }
    }

    #[test]
    fn bad_sizes_say_what_is_expected() {
        let expected =
            "expected a number of bytes, alone or with KiB, MiB or GiB (65536, 64KiB, 64MiB, 1GiB)";
        let table: &[(&str, &str)] = &[
            ("", expected),
            ("12XB", expected),
            ("KiB", expected),
            ("64 KiB", expected),
            ("64kib", expected),
            ("64K", expected),
            ("-1", expected),
            ("1.5MiB", expected),
            ("64MiBs", expected),
            (
                "64KB",
                "KB is ambiguous (1000 or 1024?): write 64KiB for 64 × 1024, or the number of bytes",
            ),
            (
                "64MB",
                "MB is ambiguous (1000 or 1024?): write 64MiB for 64 × 1024², or the number of bytes",
            ),
            (
                "1GB",
                "GB is ambiguous (1000 or 1024?): write 1GiB for 1 × 1024³, or the number of bytes",
            ),
            (
                "99999999999999999999",
                "99999999999999999999 is more bytes than this machine can address",
            ),
            (
                "17179869184GiB",
                "17179869184GiB is more bytes than this machine can address",
            ),
        ];
        for &(text, message) in table {
            assert_eq!(parse(text), Err(message.to_owned()), "{text}");
        }
    }
}
