//! What both generators share (`tests/schema.rs`, the commands;
//! `tests/events.rs`, the events): JSON written in a chosen key order, the
//! image rules on base64 text, TypeScript doc comments, the staleness check
//! and the validator. Each test file is a crate of its own that includes
//! this module, and uses only part of it.
#![allow(dead_code)]

use serde_json::Value;
use std::fmt::Write as _;
use std::path::PathBuf;

/// Schema keywords as a JSON object, for a `Ty::StringWith`.
pub fn keywords(pairs: Vec<(&str, J)>) -> J {
    J::Obj(pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
}

/// The largest base64 text of an image within 5 MiB decoded: the reference
/// refuses a longer one before decoding it.
pub const MAX_IMAGE_BASE64: i64 = (5 * 1024 * 1024_i64 + 2) / 3 * 4;

/// Canonical padded base64: whole quartets, then an optional padded one
/// whose unused bits are zero (`A`, `Q`, `g`, `w` before `==`; every fourth
/// letter before `=`), which is what decoding and re-encoding gives back.
pub const CANONICAL_BASE64: &str =
    "^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/][AQgw]==|[A-Za-z0-9+/]{2}[AEIMQUYcgkosw048]=)?$";

/// Why a pattern anchored with `$` comes with a rule against a newline.
pub const NEWLINE_GUARD: &str = "No `\\n`: for validators whose `$` also matches before a final newline (Python's `re`). Under ECMA-262 regular expressions, which JSON Schema specifies, the pattern alone is exact.";

/// Each media type, and the start of the base64 of the bytes the reference
/// sniffs for it (PNG's 8-byte signature, JPEG's `FF D8 FF`, `GIF87a` or
/// `GIF89a`, `RIFF` + 4 bytes + `WEBP`).
pub const IMAGE_SIGNATURES: [(&str, &str); 4] = [
    ("image/png", "^iVBORw0KGg[o-r]"),
    ("image/jpeg", "^/9j/"),
    ("image/gif", "^R0lGOD[dl]h"),
    ("image/webp", "^UklGR[g-v][A-Za-z0-9+/]{5}XRUJQ"),
];

/// JSON with its keys in the order written, for a readable file.
#[derive(Clone, Debug, PartialEq)]
pub enum J {
    Bool(bool),
    Num(i64),
    Str(String),
    Arr(Vec<J>),
    Obj(Vec<(String, J)>),
}

pub fn s(v: &str) -> J {
    J::Str(v.to_owned())
}

pub fn obj<const N: usize>(entries: [(&str, J); N]) -> J {
    J::Obj(
        entries
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect(),
    )
}

impl J {
    pub fn push(&mut self, key: &str, value: J) {
        let J::Obj(entries) = self else {
            unreachable!()
        };
        entries.push((key.to_owned(), value));
    }

    /// Appends another object's entries.
    pub fn extend(&mut self, other: J) {
        let (J::Obj(entries), J::Obj(more)) = (self, other) else {
            unreachable!()
        };
        entries.extend(more);
    }

    pub fn from_value(v: &Value) -> J {
        match v {
            Value::Bool(b) => J::Bool(*b),
            Value::String(t) => s(t),
            other => panic!("no wire line holds {other}"),
        }
    }

    /// Two-space indentation; arrays of scalars on one line.
    pub fn write(&self, indent: usize, out: &mut String) {
        let pad = |n| "  ".repeat(n);
        match self {
            J::Bool(b) => write!(out, "{b}").unwrap(),
            J::Num(n) => write!(out, "{n}").unwrap(),
            J::Str(t) => out.push_str(&serde_json::to_string(t).unwrap()),
            J::Arr(items)
                if items
                    .iter()
                    .all(|i| matches!(i, J::Bool(_) | J::Num(_) | J::Str(_))) =>
            {
                out.push('[');
                for (n, item) in items.iter().enumerate() {
                    if n > 0 {
                        out.push_str(", ");
                    }
                    item.write(indent, out);
                }
                out.push(']');
            }
            J::Arr(items) => {
                out.push_str("[\n");
                for (n, item) in items.iter().enumerate() {
                    out.push_str(&pad(indent + 1));
                    item.write(indent + 1, out);
                    out.push_str(if n + 1 < items.len() { ",\n" } else { "\n" });
                }
                write!(out, "{}]", pad(indent)).unwrap();
            }
            J::Obj(entries) => {
                out.push_str("{\n");
                for (n, (key, value)) in entries.iter().enumerate() {
                    out.push_str(&pad(indent + 1));
                    out.push_str(&serde_json::to_string(key).unwrap());
                    out.push_str(": ");
                    value.write(indent + 1, out);
                    out.push_str(if n + 1 < entries.len() { ",\n" } else { "\n" });
                }
                write!(out, "{}}}", pad(indent)).unwrap();
            }
        }
    }
}

/// A line's top-level keys in the order they appear.
pub fn keys_in_order(line: &str) -> Vec<String> {
    struct Keys(Vec<String>);
    impl<'de> serde::Deserialize<'de> for Keys {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> serde::de::Visitor<'de> for V {
                type Value = Keys;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("an object")
                }
                fn visit_map<A: serde::de::MapAccess<'de>>(
                    self,
                    mut map: A,
                ) -> Result<Keys, A::Error> {
                    let mut keys = Vec::new();
                    while let Some(key) = map.next_key::<String>()? {
                        map.next_value::<serde::de::IgnoredAny>()?;
                        keys.push(key);
                    }
                    Ok(Keys(keys))
                }
            }
            d.deserialize_map(V)
        }
    }
    serde_json::from_str::<Keys>(line)
        .expect("a wire line is an object")
        .0
}

pub fn parse(line: &str) -> Value {
    serde_json::from_str(line).expect("a wire line is JSON")
}

/// `/** text */`, wrapped at 80 columns.
pub fn doc_comment(text: &str, indent: &str, out: &mut String) {
    assert!(!text.contains("*/"), "{text}");
    writeln!(out, "{indent}/**").unwrap();
    let mut line = String::new();
    for word in text.split(' ') {
        if !line.is_empty() && indent.len() + 3 + line.len() + 1 + word.len() > 80 {
            writeln!(out, "{indent} * {line}").unwrap();
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    writeln!(out, "{indent} * {line}").unwrap();
    writeln!(out, "{indent} */").unwrap();
}

/// The repository root: this package is `schema-check/` in it.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("schema-check/ is in the repository")
        .to_path_buf()
}

/// The checked-in file must be what the generator writes now; with
/// `UPDATE_SCHEMA=1` it is rewritten instead.
#[track_caller]
pub fn check_generated(relative: &str, generated: &str) {
    let path = root().join(relative);
    if std::env::var_os("UPDATE_SCHEMA").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, generated).unwrap();
        return;
    }
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        current == generated,
        "{relative} is stale or missing: it is generated by schema-check/tests/. \
         Regenerate it with:\n\n    UPDATE_SCHEMA=1 cargo test -p serve-command-schema-check\n"
    );
}

pub fn validator(schema: &str) -> jsonschema::Validator {
    let schema = parse(schema);
    assert!(
        jsonschema::meta::is_valid(&schema),
        "not a valid 2020-12 schema"
    );
    jsonschema::draft202012::new(&schema).expect("the schema compiles")
}
