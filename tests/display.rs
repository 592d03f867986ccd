//! `Display` of each revision's `Command`: the wire line without its LF,
//! exactly, escapes, non-ASCII and images included.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serve_command::{v1, v2};

/// The PNG signature, which is all an image needs to be taken as a PNG.
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n";

#[test]
fn v1_display_is_the_line_without_its_lf() {
    let cases = [
        (v1::Command::Cancel, r#"{"command":"cancel"}"#),
        (
            v1::Command::Prompt {
                text: "fix it".into(),
                submission_id: Some("sub-1".into()),
            },
            r#"{"command":"prompt","text":"fix it","submission_id":"sub-1"}"#,
        ),
        (
            v1::Command::Steer {
                kind: v1::SteerKind::Command,
                text: "\"q\"\\\n\t\u{1}\u{7f}/é日本\u{2028}".into(),
            },
            "{\"command\":\"steer\",\"kind\":\"command\",\"text\":\"\\\"q\\\"\\\\\\n\\t\\u0001\u{7f}/é日本\u{2028}\"}",
        ),
        (
            v1::Command::ApprovalDecision {
                id: "a1".into(),
                allow: false,
            },
            r#"{"command":"approval","id":"a1","allow":false}"#,
        ),
    ];
    for (cmd, want) in cases {
        assert_eq!(cmd.to_string(), want);
        assert_eq!(cmd.to_line(), format!("{want}\n"));
    }
}

#[test]
fn v2_display_is_the_line_without_its_lf() {
    let image = v2::Image::from_bytes(PNG.to_vec()).expect("a PNG");
    let cases = [
        (v2::Command::GoalClear, r#"{"command":"goal","action":"clear"}"#),
        (
            v2::Command::job_stop("r1", "g-1", "job.7"),
            r#"{"command":"job_stop","request_id":"r1","generation":"g-1","job_id":"job.7"}"#,
        ),
        (
            v2::Command::goal_set_auto("ça \"marche\"\r\n\u{0}"),
            "{\"command\":\"goal\",\"action\":\"set\",\"text\":\"ça \\\"marche\\\"\\r\\n\\u0000\",\"auto\":true}",
        ),
        (
            v2::Command::prompt_tagged(vec![
                v2::ContentPart::Text("what is 日本?".into()),
                v2::ContentPart::Image(image),
            ],
    "sub-2",
),
            "{\"command\":\"prompt\",\"content\":[{\"type\":\"text\",\"text\":\"what is 日本?\"},\
             {\"type\":\"image\",\"media_type\":\"image/png\",\"data\":\"iVBORw0KGgo=\"}],\"submission_id\":\"sub-2\"}",
        ),
    ];
    for (cmd, want) in cases {
        assert_eq!(cmd.to_string(), want);
        assert_eq!(cmd.to_line(), format!("{want}\n"));
    }
}

/// An image longer than `Display`'s base64 buffer (768 bytes a chunk), of
/// a length that is no multiple of 3: chunks of whole groups, padding only
/// at the end.
#[test]
fn v2_display_of_a_long_image_is_one_base64_run() {
    let mut bytes = PNG.to_vec();
    bytes.extend((0..2001u32).map(|i| (i * 7 % 256) as u8));
    assert_eq!(bytes.len() % 3, 2);
    let data = STANDARD.encode(&bytes);
    let cmd = v2::Command::prompt(v2::Image::from_bytes(bytes).expect("a PNG"));
    let want = format!(
        "{{\"command\":\"prompt\",\"content\":[{{\"type\":\"image\",\"media_type\":\"image/png\",\"data\":\"{data}\"}}]}}"
    );
    assert!(data.ends_with('='));
    assert_eq!(cmd.to_string(), want);
    assert_eq!(cmd.to_line(), format!("{want}\n"));
}

#[cfg(feature = "proptest")]
mod properties {
    use proptest::prelude::*;
    use serve_command::{v1, v2};

    proptest! {
        #[test]
        fn v1_display_and_lf_is_the_line(cmd in v1::strategy::command()) {
            prop_assert_eq!(format!("{cmd}\n"), cmd.to_line());
        }

        #[test]
        fn v2_display_and_lf_is_the_line(cmd in v2::strategy::command()) {
            prop_assert_eq!(format!("{cmd}\n"), cmd.to_line());
        }
    }
}
