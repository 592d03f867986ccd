//! `--redact REGEX`: what a command records, with each match of its
//! patterns replaced by `[redacted]` (the library's
//! `v2::serve::record::Log::redact` says where).

use regex::{NoExpand, Regex};
use std::borrow::Cow;
use std::sync::Arc;

/// What a match is replaced by.
pub const REDACTED: &str = "[redacted]";

/// A redaction replacing each match of `patterns` (regular expressions,
/// the `regex` crate's syntax) by `[redacted]`, each pattern applied in
/// turn to the text the ones before it left; `None` when there are none.
///
/// # Errors
///
/// A pattern that is not a regular expression: `--redact 'PAT': ERROR`.
#[allow(clippy::type_complexity)]
pub fn redactor(
    patterns: &[String],
) -> Result<Option<Arc<dyn Fn(&str) -> Cow<str> + Send + Sync>>, String> {
    if patterns.is_empty() {
        return Ok(None);
    }
    let regexes = patterns
        .iter()
        .map(|pattern| Regex::new(pattern).map_err(|e| format!("--redact '{pattern}': {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Some(Arc::new(move |text: &str| {
        let mut out = Cow::Borrowed(text);
        for regex in &regexes {
            let replaced = match regex.replace_all(&out, NoExpand(REDACTED)) {
                Cow::Owned(replaced) => Some(replaced),
                Cow::Borrowed(_) => None,
            };
            if let Some(replaced) = replaced {
                out = Cow::Owned(replaced);
            }
        }
        out
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn patterns(patterns: &[&str]) -> Vec<String> {
        patterns.iter().map(|&p| p.to_owned()).collect()
    }

    #[test]
    fn each_match_of_each_pattern_is_replaced_in_turn() {
        assert!(redactor(&[]).unwrap().is_none());
        let f = redactor(&patterns(&[r"\d{4}", "(?i)secret", r"\]x"]))
            .unwrap()
            .unwrap();
        assert_eq!(
            f("card 1234 5678, Secret and $1"),
            "card [redacted] [redacted], [redacted] and $1"
        );
        // The third sees what the first left.
        assert_eq!(f("1234x"), "[redacted[redacted]");
        assert!(matches!(f("nothing here"), Cow::Borrowed("nothing here")));
    }

    #[test]
    fn a_bad_pattern_is_named_with_the_error() {
        let Err(e) = redactor(&patterns(&["ok", "a("])) else {
            panic!("a( is no regex")
        };
        assert_eq!(
            e,
            "--redact 'a(': regex parse error:\n    a(\n     ^\nerror: unclosed group"
        );
    }
}
