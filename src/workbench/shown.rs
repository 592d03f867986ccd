//! How a report shows the engine's lines: visible, cut, counted.

use super::run::{lines, visible};

/// Lines of each list the human summary shows (the report has them all).
const SHOWN_LINES: usize = 20;
/// Characters of one line the summary and the report show.
const SHOWN_CHARS: usize = 300;
/// The last lines of the engine's stderr a failure shows.
const STDERR_TAIL: usize = 20;

// The stderr tail is shown whole.
const _: () = assert!(STDERR_TAIL <= SHOWN_LINES);

/// `what (N lines):` and the first [`SHOWN_LINES`] of `lines`, of `total`
/// (more than `lines` when the report keeps only some).
pub(super) fn listed(what: &str, lines: &[String], total: usize) -> String {
    let plural = if total == 1 { "" } else { "s" };
    let mut out = format!("  {what} ({total} line{plural}):\n");
    let some = &lines[..lines.len().min(SHOWN_LINES)];
    for line in some {
        out += &format!("    {line}\n");
    }
    let more = total - some.len();
    if more > 0 {
        if total == lines.len() {
            out += &format!("    ... {more} more (all in the report)\n");
        } else {
            out += &format!(
                "    ... {more} more (the first {} in the report)\n",
                lines.len()
            );
        }
    }
    out
}

/// The last [`STDERR_TAIL`] lines of `stderr`, shown.
pub(super) fn stderr_tail(stderr: &[u8]) -> Vec<String> {
    let mut tail = std::collections::VecDeque::with_capacity(STDERR_TAIL + 1);
    for line in lines(stderr) {
        tail.push_back(line);
        if tail.len() > STDERR_TAIL {
            tail.pop_front();
        }
    }
    tail.iter().map(|l| shown(l)).collect()
}

/// A line as the summary and the report show it: control characters made
/// visible, at most [`SHOWN_CHARS`] characters of it (a line of 64 MiB is
/// not copied whole).
pub(super) fn shown(line: &[u8]) -> String {
    let text = visible(&line[..line.len().min(4 * SHOWN_CHARS)]);
    match text.char_indices().nth(SHOWN_CHARS) {
        Some((i, _)) => format!("{}... ({} bytes)", &text[..i], line.len()),
        None if line.len() > 4 * SHOWN_CHARS => format!("{text}... ({} bytes)", line.len()),
        None => text,
    }
}

pub(super) fn quoted(s: &str) -> String {
    serde_json::to_string(s).expect("a string serializes")
}

#[cfg(test)]
mod tests {
    use super::{listed, shown, stderr_tail};

    /// A line is shown with its controls visible and cut after 300
    /// characters, or after 1,200 bytes of fewer characters, its length
    /// said when cut.
    #[test]
    fn a_line_is_shown_cut_at_300_characters_or_1200_bytes() {
        let x301 = "x".repeat(301);
        let emoji300 = "😀".repeat(300);
        let emoji301 = "😀".repeat(301);
        let cases: &[(&str, String)] = &[
            ("plain", "plain".to_owned()),
            ("a\r", "a\\r".to_owned()),
            (&x301, format!("{}... (301 bytes)", "x".repeat(300))),
            (&emoji300, emoji300.clone()),
            (&emoji301, format!("{emoji300}... (1204 bytes)")),
        ];
        for (line, want) in cases {
            assert_eq!(shown(line.as_bytes()), *want, "{line:?}");
        }
    }

    /// A list shows its first 20 lines and says how many more there are,
    /// and whether the report has them all.
    #[test]
    fn a_list_shows_twenty_lines_and_counts_the_rest() {
        let lines = |n: usize| (1..=n).map(|i| i.to_string()).collect::<Vec<_>>();
        let shown = |n: usize| (1..=n).map(|i| format!("    {i}\n")).collect::<String>();
        let cases: &[(Vec<String>, usize, String)] = &[
            (lines(0), 0, "  sent (0 lines):\n".to_owned()),
            (lines(1), 1, format!("  sent (1 line):\n{}", shown(1))),
            (lines(20), 20, format!("  sent (20 lines):\n{}", shown(20))),
            (
                lines(25),
                25,
                format!(
                    "  sent (25 lines):\n{}    ... 5 more (all in the report)\n",
                    shown(20)
                ),
            ),
            (
                lines(25),
                30,
                format!(
                    "  sent (30 lines):\n{}    ... 10 more (the first 25 in the report)\n",
                    shown(20)
                ),
            ),
        ];
        for (kept, total, want) in cases {
            assert_eq!(listed("sent", kept, *total), *want, "{total}");
        }
    }

    /// The stderr tail is the last 20 lines, or all of fewer.
    #[test]
    fn the_stderr_tail_is_the_last_twenty_lines() {
        let numbered =
            |from: usize, to: usize| (from..=to).map(|i| i.to_string()).collect::<Vec<_>>();
        let stderr = |n: usize| {
            numbered(1, n)
                .iter()
                .map(|l| format!("{l}\n"))
                .collect::<String>()
        };
        assert_eq!(stderr_tail(stderr(25).as_bytes()), numbered(6, 25));
        assert_eq!(stderr_tail(stderr(20).as_bytes()), numbered(1, 20));
        assert_eq!(stderr_tail(b"only, no LF"), ["only, no LF"]);
        assert_eq!(stderr_tail(b""), Vec::<String>::new());
    }
}
