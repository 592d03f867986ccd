//! A free-form JSON value as upstream writes it back: a job record's
//! `data`, which upstream keeps as it parsed it and stringifies again.

use crate::wire::escape::Sink;
use crate::wire::tree::Json;
use std::fmt;

/// A JSON value held as the compact text upstream's stringify writes for
/// it: a job record's free-form `data`. Object keys keep the order they
/// first came in (a repeated key keeps its last value, where it first
/// stood), strings are escaped as every line is, an integer beyond 2^53 or
/// a number beyond a double keeps its source text, and every other number
/// is written as upstream's `Double::to_string` writes it (`1.5`, `7`,
/// `1e+21`, `1e-7`; `1.50` becomes `1.5`, `-0` becomes `0`).
///
/// ```
/// use serve_command::v2::JsonText;
/// let data: JsonText = r#"{ "b": 1.50, "a": [true, null], "b": "x" }"#.parse()?;
/// assert_eq!(data.as_str(), r#"{"b":"x","a":[true,null]}"#);
/// # Ok::<(), serve_command::v2::LineError>(())
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct JsonText(String);

impl JsonText {
    /// The compact text.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The value as `serde_json` reads it (which may differ from upstream
    /// for numbers beyond a double, and sorts keys without its
    /// `preserve_order` feature).
    ///
    /// # Errors
    ///
    /// serde_json's error, for a number beyond a double (kept as its text).
    pub fn to_value(&self) -> Result<serde_json::Value, serde_json::Error> {
        serde_json::from_str(&self.0)
    }

    pub(crate) fn of(value: &Json<'_>) -> JsonText {
        let mut out = String::new();
        let Ok(()) = write_json(&mut out, value);
        JsonText(out)
    }
}

impl std::str::FromStr for JsonText {
    type Err = crate::error::LineError<crate::v2::ParseError>;

    /// Any JSON text, as upstream would write it back.
    ///
    /// # Errors
    ///
    /// [`LineError::Syntax`](crate::generic::LineError::Syntax) for text that
    /// is not JSON (never the other kind).
    fn from_str(s: &str) -> Result<JsonText, Self::Err> {
        let tree =
            crate::wire::scan::parse_tree(s.as_bytes()).map_err(crate::error::LineError::Syntax)?;
        Ok(JsonText::of(&tree))
    }
}

impl fmt::Display for JsonText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for JsonText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "JsonText({})", self.0)
    }
}

/// `value` as upstream's stringify writes it.
pub(crate) fn write_json<K: Sink>(k: &mut K, value: &Json<'_>) -> Result<(), K::Error> {
    // Iterative: a value may nest as deep as the line allows.
    enum Step<'v, 'a> {
        Value(&'v Json<'a>),
        Str(&'static str),
        Key(std::borrow::Cow<'v, str>),
    }
    let mut todo = vec![Step::Value(value)];
    while let Some(step) = todo.pop() {
        match step {
            Step::Str(s) => k.put(s)?,
            Step::Key(key) => {
                crate::wire::escape::write_str(k, &key)?;
                k.put(":")?;
            }
            Step::Value(value) => match value {
                Json::Null => k.put("null")?,
                Json::Bool(true) => k.put("true")?,
                Json::Bool(false) => k.put("false")?,
                Json::Str(s) => crate::wire::escape::write_str(k, &s.text())?,
                Json::Num(n) => write_number(k, &n.text, n.value())?,
                Json::Arr(items) => {
                    k.put("[")?;
                    todo.push(Step::Str("]"));
                    for (i, item) in items.iter().enumerate().rev() {
                        todo.push(Step::Value(item));
                        if i > 0 {
                            todo.push(Step::Str(","));
                        }
                    }
                }
                Json::Obj(_) => {
                    k.put("{")?;
                    todo.push(Step::Str("}"));
                    let members = value.members();
                    for (i, (key, item)) in members.into_iter().enumerate().rev() {
                        todo.push(Step::Value(item));
                        todo.push(Step::Key(key));
                        if i > 0 {
                            todo.push(Step::Str(","));
                        }
                    }
                }
            },
        }
    }
    Ok(())
}

/// A number as upstream writes it back: its source text when the parser
/// kept it (an integer beyond 2^53, a number beyond a double), else the
/// shortest text that reads back to the same double, laid out as
/// `Double::to_string` lays it out.
fn write_number<K: Sink>(k: &mut K, text: &str, value: f64) -> Result<(), K::Error> {
    let integer = !text.contains(['.', 'e', 'E']);
    if !value.is_finite() || (integer && value.abs() > 9_007_199_254_740_991.0) {
        return k.put(text);
    }
    k.put(&double_to_string(value))
}

/// `Double::to_string` (and JavaScript's): the shortest round-trip digits,
/// plain from 1e-6 up to 1e21, with an exponent (`1e+21`, `1.5e-7`)
/// outside that; `-0` is `0`.
pub(crate) fn double_to_string(x: f64) -> String {
    if x == 0.0 {
        return "0".to_owned();
    }
    // Rust's `{:e}` is the shortest round-trip mantissa: `-1.5e-7`.
    let sci = format!("{x:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let k = digits.len() as i32;
    // The decimal point sits after `n` digits.
    let n = exp + 1;
    let body = if k <= n && n <= 21 {
        format!("{digits}{}", "0".repeat((n - k) as usize))
    } else if 0 < n && n <= 21 {
        let (int, frac) = digits.split_at(n as usize);
        format!("{int}.{frac}")
    } else if -6 < n && n <= 0 {
        format!("0.{}{digits}", "0".repeat((-n) as usize))
    } else {
        let (first, rest) = digits.split_at(1);
        let e = n - 1;
        let e = if e < 0 {
            format!("-{}", -e)
        } else {
            format!("+{e}")
        };
        if rest.is_empty() {
            format!("{first}e{e}")
        } else {
            format!("{first}.{rest}e{e}")
        }
    };
    format!("{sign}{body}")
}

#[cfg(test)]
mod tests {
    use super::double_to_string;

    #[test]
    fn doubles_as_upstream_writes_them() {
        for (x, text) in [
            (7.0, "7"),
            (0.5, "0.5"),
            (1.5, "1.5"),
            (-0.0, "0"),
            (0.000001, "0.000001"),
            (1e-7, "1e-7"),
            (1.5e-7, "1.5e-7"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (123.456, "123.456"),
            (-2.5e30, "-2.5e+30"),
            (9007199254740991.0, "9007199254740991"),
        ] {
            assert_eq!(double_to_string(x), text, "{x}");
        }
    }
}
