//! The v2 model (`tests/support/model_v2.rs`) against the v2 conformance
//! vectors (`tests/vectors/commands-v2.jsonl`, every verdict from
//! `oracle-latest`) and against the oracle's verdicts at the 5 MiB image
//! limit, so the model is known good before any implementation uses it.

#[path = "support/model_v2.rs"]
mod model_v2;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use model_v2::{model_v2, valid_job_component};
use serde_json::{json, Value};

#[path = "support/vectors.rs"]
mod format;

use format::Outcome;

fn vectors() -> Vec<(String, Outcome, String)> {
    format::text(format::V2)
}

#[test]
fn there_are_enough_v2_vectors() {
    assert!(vectors().len() >= 250);
}

/// Every vector whose line serde_json reads as the reference does. Skipped,
/// and counted: `not_json` vectors (the model has no parser of its own) and
/// lines serde_json refuses although the reference reads them (nesting past
/// 128 levels, `1e400`).
#[test]
fn model_matches_every_json_vector() {
    let mut failures = Vec::new();
    let (mut compared, mut not_json, mut serde_refuses) = (0, 0, 0);
    for (line, expected, why) in vectors() {
        if expected == Outcome::NotJson {
            not_json += 1;
            continue;
        }
        let Ok(value) = serde_json::from_str::<Value>(&line) else {
            serde_refuses += 1;
            continue;
        };
        compared += 1;
        let got = match model_v2(&value) {
            Ok(l) => Outcome::Ok(l),
            Err(e) => Outcome::Error(e),
        };
        if got != expected {
            failures.push(format!(
                "{why}: {line:?}\n  expected {expected:?}\n  got      {got:?}"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} vectors failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // The exact split, so a vector that silently stops being compared shows.
    assert_eq!((compared, not_json, serde_refuses), (615, 25, 13));
}

/// Whenever the model accepts a line, its canonical line decodes to itself.
#[test]
fn model_canonical_lines_are_fixed_points() {
    for (line, expected, why) in vectors() {
        if let Outcome::Ok(canonical) = expected {
            let value: Value = serde_json::from_str(&canonical).expect("canonical is JSON");
            assert_eq!(model_v2(&value).as_ref(), Ok(&canonical), "{why}: {line}");
        }
    }
}

const PNG_SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";
const LIMIT_CHARS: usize = 6_990_508; // (5 MiB + 2) / 3 * 4
const LIMIT_BYTES: usize = 5 * 1024 * 1024;

fn png_of(len: usize) -> String {
    let mut bytes = PNG_SIGNATURE.to_vec();
    bytes.resize(len, 0);
    STANDARD.encode(bytes)
}

#[track_caller]
fn check_limit(data: &str, expected: Result<(), &str>) {
    let content = json!({"command": "prompt", "content": [
        {"type": "image", "media_type": "image/png", "data": data}
    ]});
    let legacy = json!({"command": "prompt", "text": "x",
        "images": [format!("data:image/png;base64,{data}")]});
    match expected {
        Ok(()) => {
            let canonical = format!(
                r#"{{"command":"prompt","content":[{{"type":"image","media_type":"image/png","data":"{data}"}}]}}"#
            );
            assert_eq!(model_v2(&content), Ok(canonical));
            assert!(model_v2(&legacy).is_ok());
        }
        Err(message) => {
            assert_eq!(
                model_v2(&content),
                Err(format!(
                    "invalid content: JsonDecodeError((/0, invalid image: {message}))"
                ))
            );
            assert_eq!(model_v2(&legacy), Err(message.to_owned()));
        }
    }
}

/// The oracle's verdicts (`python3 scripts/make_vectors_v2.py --big`): the
/// length check counts UTF-16 code units before decoding; the decoded size
/// is checked again after.
#[test]
fn model_at_the_image_limit() {
    const TOO_LARGE: &str = "image exceeds the 5 MiB limit";
    const BAD: &str = "image data must be canonical padded base64";
    let at_limit = png_of(LIMIT_BYTES);
    assert_eq!(
        (at_limit.len(), &at_limit[at_limit.len() - 2..]),
        (LIMIT_CHARS, "A=")
    );
    check_limit(&at_limit, Ok(()));
    // Same length, no padding: canonical, 5 MiB + 1 decoded.
    let one_over = png_of(LIMIT_BYTES + 1);
    assert_eq!(one_over.len(), LIMIT_CHARS);
    check_limit(&one_over, Err(TOO_LARGE));
    check_limit(&png_of(LIMIT_BYTES + 2), Err(TOO_LARGE));
    check_limit(&format!("{at_limit}="), Err(TOO_LARGE));
    check_limit(&format!("{at_limit}A"), Err(TOO_LARGE));
    check_limit(&"!".repeat(LIMIT_CHARS), Err(BAD));
    check_limit(&"!".repeat(LIMIT_CHARS + 1), Err(TOO_LARGE));
    // 6990508 code points, 6990509 UTF-16 units: too large.
    check_limit(
        &format!("{}\u{1F600}", "A".repeat(LIMIT_CHARS - 1)),
        Err(TOO_LARGE),
    );
    // 3495255 UTF-16 units, 6990510 UTF-8 bytes: not too large, just bad.
    check_limit(&"\u{e9}".repeat(LIMIT_CHARS / 2 + 1), Err(BAD));
    // Decoded size before sniffing; canonical base64 before decoded size.
    check_limit(&"A".repeat(LIMIT_CHARS), Err(TOO_LARGE));
    check_limit(&format!("{}!", "A".repeat(LIMIT_CHARS - 1)), Err(BAD));
    check_limit(
        &format!("{}==", "A".repeat(LIMIT_CHARS - 2)),
        Err("expected PNG, JPEG, GIF, or WebP image bytes"),
    );
}

#[test]
fn job_components() {
    let x200 = "x".repeat(200);
    let x201 = "x".repeat(201);
    for (value, expected) in [
        ("a", true),
        ("...", true),
        ("a-b_c.D9", true),
        (x200.as_str(), true),
        ("", false),
        (".", false),
        ("..", false),
        (x201.as_str(), false),
        ("a/b", false),
        ("é", false),
        ("a b", false),
    ] {
        assert_eq!(valid_job_component(value), expected, "{value:?}");
    }
}
