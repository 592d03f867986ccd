//! `src/event_v2.dict`, the event fuzz targets' dictionary (`decode_event`,
//! `roundtrip_event`), is a dictionary libFuzzer reads, and holds the
//! events' every token: each event's name and opening, every key of every
//! event and nested value (job records, states, prediction outcomes,
//! usage, content parts), every nested kind and outcome, and the numbers
//! at the edges of the rules. The names and keys are taken from the
//! oracle's vectors, so an event or field upstream adds fails here until
//! the dictionary has it.

use serde_json::Value;
use serve_command::v2::{Event, JobEventKind, JobStopOutcome};
use std::collections::{BTreeMap, BTreeSet};

const DICT: &str = include_str!("../src/event_v2.dict");

/// One entry's value, unescaped as libFuzzer's `ParseOneDictionaryEntry`
/// does (`\\`, `\"` and `\xNN`, nothing else).
fn unescape(quoted: &str) -> Result<Vec<u8>, String> {
    let inner = quoted
        .strip_prefix('"')
        .and_then(|q| q.strip_suffix('"'))
        .ok_or("not in quotes")?;
    let b = inner.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => match b.get(i + 1) {
                Some(b'\\') => {
                    out.push(b'\\');
                    i += 2;
                }
                Some(b'"') => {
                    out.push(b'"');
                    i += 2;
                }
                Some(b'x') => {
                    let hex = inner.get(i + 2..i + 4).ok_or("a short \\x")?;
                    out.push(u8::from_str_radix(hex, 16).map_err(|e| e.to_string())?);
                    i += 4;
                }
                _ => return Err(format!("an escape libFuzzer does not read at {i}")),
            },
            b'"' => return Err(format!("an unescaped quote at {i}")),
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    Ok(out)
}

/// The dictionary's entries, by name.
fn entries() -> BTreeMap<String, Vec<u8>> {
    let mut entries = BTreeMap::new();
    for (n, line) in DICT.lines().enumerate() {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (name, value) = line
            .split_once('=')
            .unwrap_or_else(|| panic!("line {}: no `=`: {line}", n + 1));
        assert!(
            !name.is_empty() && name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_'),
            "line {}: a bad name {name:?}",
            n + 1
        );
        let value = unescape(value).unwrap_or_else(|e| panic!("line {}: {e}: {line}", n + 1));
        assert!(!value.is_empty(), "line {}: empty", n + 1);
        // libFuzzer keeps words of at most 64 bytes.
        assert!(value.len() <= 64, "line {}: {} bytes", n + 1, value.len());
        assert!(
            entries.insert(name.to_owned(), value).is_none(),
            "line {}: {name} again",
            n + 1
        );
    }
    entries
}

/// The vectors' events: their names, every key (a job's free-form `data`
/// aside), and every `kind` of a nested value (a top-level `kind` is a
/// free string, but `job_changed`'s, whose words are checked below).
fn vector_tokens() -> (BTreeSet<String>, BTreeSet<String>, BTreeSet<String>) {
    fn walk(v: &Value, top: bool, keys: &mut BTreeSet<String>, kinds: &mut BTreeSet<String>) {
        match v {
            Value::Object(map) => {
                for (k, x) in map {
                    keys.insert(k.clone());
                    if k == "data" {
                        // A job's data: free-form, not the protocol's (a
                        // content part's is a string).
                        continue;
                    }
                    if let ("kind", Some(kind), false) = (k.as_str(), x.as_str(), top) {
                        kinds.insert(kind.to_owned());
                    }
                    walk(x, false, keys, kinds);
                }
            }
            Value::Array(items) => items.iter().for_each(|x| walk(x, false, keys, kinds)),
            _ => {}
        }
    }
    let (mut names, mut keys, mut kinds) = (BTreeSet::new(), BTreeSet::new(), BTreeSet::new());
    for l in include_str!("vectors/events.jsonl").lines() {
        let v: Value = serde_json::from_str(l).unwrap();
        let Some(ok) = v["ok"].as_str() else {
            continue;
        };
        let event = Event::from_slice(ok.as_bytes()).unwrap();
        names.insert(event.name().to_owned());
        // serde_json refuses a few vectors' data (numbers past a double);
        // their keys are every other vector's too.
        if let Ok(value) = serde_json::from_str::<Value>(ok) {
            walk(&value, true, &mut keys, &mut kinds);
        }
    }
    (names, keys, kinds)
}

#[test]
fn the_event_dictionary_holds_every_token() {
    let entries = entries();
    let values: BTreeSet<&[u8]> = entries.values().map(Vec::as_slice).collect();
    let mut missing = Vec::new();
    let mut want = |token: String| {
        if !values.contains(token.as_bytes()) {
            missing.push(token);
        }
    };
    let (names, keys, kinds) = vector_tokens();
    assert_eq!(names.len(), 58, "{names:?}");
    for name in &names {
        want(format!("\"{name}\""));
        want(format!("{{\"event\":\"{name}\""));
    }
    assert!(keys.len() > 80, "{keys:?}");
    for key in &keys {
        want(key.clone());
        want(format!("\"{key}\":"));
    }
    let words = [
        JobEventKind::Started.as_str(),
        JobEventKind::Updated.as_str(),
        JobEventKind::Finished.as_str(),
        JobEventKind::Failed.as_str(),
        JobStopOutcome::Stopped.as_str(),
        JobStopOutcome::AlreadyTerminal.as_str(),
        JobStopOutcome::NotFound.as_str(),
        JobStopOutcome::WrongRuntime.as_str(),
        "image/png",
        "image/jpeg",
        "image/gif",
        "image/webp",
    ];
    for kind in kinds.iter().map(String::as_str).chain(words) {
        want(format!("\"{kind}\""));
    }
    for number in [
        "0",
        "-0",
        "1",
        "-1",
        "1.0",
        "1e0",
        "0.99999999999999999",
        "1.5",
        "-0.5",
        "2147483647",
        "2147483648",
        "-2147483648",
        "-2147483649",
        "9007199254740991",
        "9007199254740992",
        "1e400",
        "-1e400",
        "18446744073709551616",
    ] {
        want(number.to_owned());
    }
    for literal in ["true", "false", "null", "{", "}", "[", "]", ":", ","] {
        want(literal.to_owned());
    }
    assert!(missing.is_empty(), "src/event_v2.dict lacks {missing:?}");
}

#[test]
fn dictionary_entries_unescape_as_libfuzzer_reads_them() {
    assert_eq!(
        unescape(r#""a\\b\"c\x00\xff""#).unwrap(),
        b"a\\b\"c\x00\xff"
    );
    assert!(unescape(r#""\n""#).is_err());
    assert!(unescape(r#""a"b""#).is_err());
    assert!(unescape("nope").is_err());
}
