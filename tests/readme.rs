//! The README's engine programs are the shipped examples, line for line:
//! the doctests prove the README's code compiles and runs, and this holds
//! the examples (and so `cargo run --example engine`, whose output the
//! README shows) to the same code.

const README: &str = include_str!("../README.md");

/// The README's ```` ```rust ```` blocks, in order.
fn rust_blocks() -> Vec<&'static str> {
    README
        .split("```rust\n")
        .skip(1)
        .map(|rest| &rest[..rest.find("```\n").expect("an unclosed ```rust block")])
        .collect()
}

/// An example's code below its `//!` header.
fn code(example: &str) -> String {
    let body: Vec<&str> = example.lines().filter(|l| !l.starts_with("//!")).collect();
    body.join("\n").trim_start().to_owned() + "\n"
}

/// The README shows `example` as one of its programs, verbatim.
#[track_caller]
fn assert_shown(example: &str) {
    let code = code(example);
    assert!(
        rust_blocks().contains(&code.as_str()),
        "no README program is this example:\n{code}"
    );
}

#[test]
fn the_readme_engine_is_examples_engine() {
    assert_shown(include_str!("../examples/engine.rs"));
}

#[test]
fn the_readme_tokio_engine_is_examples_tokio_engine() {
    assert_shown(include_str!("../examples/tokio_engine.rs"));
}

/// The targets of the README's Markdown links, `[text](target)`.
fn link_targets() -> Vec<&'static str> {
    README
        .split("](")
        .skip(1)
        .map(|rest| &rest[..rest.find(')').expect("an unclosed link")])
        .collect()
}

/// The README's headings as GitHub and crates.io name their anchors.
fn anchors() -> Vec<String> {
    README
        .lines()
        .filter_map(|l| l.strip_prefix("## ").or_else(|| l.strip_prefix("### ")))
        .map(|h| {
            h.to_lowercase()
                .chars()
                .filter_map(|c| match c {
                    ' ' => Some('-'),
                    c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                    _ => None,
                })
                .collect()
        })
        .collect()
}

/// Where the README is read (crates.io, with no repository address) a
/// relative link is dead: every link is to a heading of the README itself,
/// to a file the package ships (as docs.rs shows it), or to another site.
#[test]
fn every_readme_link_works_on_crates_io() {
    const SHIPPED: &str = "https://docs.rs/crate/serve-command/latest/source/";
    let anchors = anchors();
    let mut shipped = 0;
    for target in link_targets() {
        if let Some(anchor) = target.strip_prefix('#') {
            assert!(
                anchors.iter().any(|a| a == anchor),
                "no heading for {target}"
            );
        } else if let Some(path) = target.strip_prefix(SHIPPED) {
            let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
            assert!(file.is_file(), "{target}: {path} is not in the package");
            shipped += 1;
        } else {
            assert!(target.starts_with("https://"), "a relative link: {target}");
        }
    }
    assert!(
        shipped >= 3,
        "the README's links to BENCHMARKS.md, docs/PROTOCOL.md, CONTRIBUTING.md"
    );
}

/// The crate's features, from its manifest.
fn features() -> Vec<&'static str> {
    let manifest = include_str!("../Cargo.toml");
    let section = &manifest[manifest.find("\n[features]\n").expect("a [features] table")..];
    section
        .lines()
        .skip(2)
        .take_while(|l| !l.starts_with('['))
        .filter_map(|l| l.split_once(" = ").map(|(name, _)| name.trim()))
        .filter(|name| !name.starts_with('#') && *name != "default")
        .collect()
}

/// The first column of the features table in `text`.
fn feature_rows(text: &str) -> Vec<&str> {
    text.lines()
        .filter_map(|l| l.trim_start_matches("//! ").strip_prefix("| `"))
        .filter_map(|l| l.split_once('`').map(|(name, _)| name))
        .collect()
}

/// The README and the docs.rs front page (src/lib.rs) each table every
/// feature, and only those.
#[test]
fn both_feature_tables_list_every_feature() {
    let mut features = features();
    features.sort_unstable();
    assert_eq!(
        features,
        ["arbitrary", "avx2", "cli", "proptest", "tokio", "workbench"]
    );
    for (place, text) in [
        ("README.md", README),
        ("src/lib.rs", include_str!("../src/lib.rs")),
    ] {
        let mut rows = feature_rows(text);
        rows.sort_unstable();
        assert_eq!(rows, features, "the features table of {place}");
    }
}

/// The rendered docs name the protocol's first revision `v1` (or say
/// "the protocol's first revision"), never "the seed", a name its readers
/// were never given. "Seed" is left to fuzzing (a seed corpus) and random
/// generators.
#[test]
fn the_docs_never_call_the_first_revision_the_seed() {
    fn walk(dir: &std::path::Path, found: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).expect("a readable src/") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                walk(&path, found);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).expect("UTF-8 source");
                for (n, line) in text.lines().enumerate() {
                    let doc = line.trim_start();
                    let lower = doc.to_lowercase();
                    if (doc.starts_with("///") || doc.starts_with("//!"))
                        && ["seed's", "seed revision", "the seed\"", "the seed)"]
                            .iter()
                            .any(|name| lower.contains(name))
                    {
                        found.push(format!("{}:{}: {doc}", path.display(), n + 1));
                    }
                }
            }
        }
    }
    let mut found = Vec::new();
    walk(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut found,
    );
    assert!(found.is_empty(), "{}", found.join("\n"));
    for text in [README, include_str!("../docs/PROTOCOL.md")] {
        for name in ["seed's", "seed revision"] {
            assert!(!text.contains(name), "{name}");
        }
    }
}
