//! The README, the guide (docs/GUIDE.md) and the docs.rs front page
//! (src/lib.rs) against the code they show: their programs are the shipped
//! examples, line for line (the doctests prove the README's and the
//! guide's code compiles and runs, and this holds the examples, which CI
//! runs and checks, to the same code), their links work where they are
//! read, and their feature tables list every feature alike.

const README: &str = include_str!("../README.md");
const GUIDE: &str = include_str!("../docs/GUIDE.md");
const LIB: &str = include_str!("../src/lib.rs");

/// The ```` ```rust ```` (and ```` ```rust,no_run ````) blocks of `text`
/// that start a line, in order.
fn rust_blocks(text: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut block: Option<String> = None;
    for line in text.lines() {
        match &mut block {
            None if line == "```rust" || line == "```rust,no_run" => block = Some(String::new()),
            None => {}
            Some(code) if line == "```" => {
                blocks.push(std::mem::take(code));
                block = None;
            }
            Some(code) => {
                code.push_str(line);
                code.push('\n');
            }
        }
    }
    assert!(block.is_none(), "an unclosed ```rust block");
    blocks
}

/// An example's code below its `//!` header.
fn code(example: &str) -> String {
    let body: Vec<&str> = example.lines().filter(|l| !l.starts_with("//!")).collect();
    body.join("\n").trim_start().to_owned() + "\n"
}

/// `place` shows `example` as one of its programs, verbatim.
#[track_caller]
fn assert_shown(place: &str, text: &str, example: &str) {
    let code = code(example);
    assert!(
        rust_blocks(text).contains(&code),
        "no program of {place} is this example:\n{code}"
    );
}

#[test]
fn the_readme_shows_the_minimal_engine_the_model_engine_and_the_controller() {
    assert_shown(
        "README.md",
        README,
        include_str!("../examples/minimal_engine.rs"),
    );
    assert_shown("README.md", README, include_str!("../examples/engine.rs"));
    assert_shown(
        "README.md",
        README,
        include_str!("../examples/controller.rs"),
    );
    assert_eq!(
        rust_blocks(README).len(),
        3,
        "README.md: two engines and a controller"
    );
}

#[test]
fn the_guide_shows_the_full_examples() {
    for example in [
        include_str!("../examples/engine.rs"),
        include_str!("../examples/controller.rs"),
        include_str!("../examples/event_reader.rs"),
        include_str!("../examples/tokio_engine.rs"),
        include_str!("../examples/tokio_controller.rs"),
        include_str!("../examples/conversation.rs"),
    ] {
        assert_shown("docs/GUIDE.md", GUIDE, example);
    }
}

/// The front page's engine is the README's, compiled from the file.
#[test]
fn the_front_page_engine_is_examples_minimal_engine() {
    assert!(LIB.contains(
        "//! ```no_run\n#![doc = include_str!(\"../examples/minimal_engine.rs\")]\n//! ```\n"
    ));
}

/// The README fits where users decide; the manual is the guide.
#[test]
fn the_readme_is_at_most_300_lines() {
    let lines = README.lines().count();
    assert!(lines <= 300, "README.md has {lines} lines");
}

/// The lines of `text` from its heading `heading` to the next of its level.
fn section<'a>(text: &'a str, heading: &str) -> &'a str {
    let start = text.find(&format!("\n{heading}\n")).expect(heading) + 1;
    let rest = &text[start + heading.len()..];
    &text[start..start + heading.len() + rest.find("\n## ").unwrap_or(rest.len())]
}

/// The bodies of the ```` ```sh ```` blocks of `text`, in order.
fn sh_blocks(text: &str) -> Vec<&str> {
    text.split("```sh\n")
        .skip(1)
        .map(|rest| &rest[..rest.find("```\n").expect("an unclosed ```sh block")])
        .collect()
}

/// Two set-up commands, that run on a fresh machine: the first is the run
/// .ci/deps times from an empty target dir (and checks the README names)
/// and whose output it compares with the README's first ```` ```text ````
/// block, the second the test command CI runs.
#[test]
fn the_readme_sets_up_with_two_commands() {
    assert_eq!(
        sh_blocks(section(README, "## Set up")),
        [
            "cargo run --example minimal_engine < examples/session.jsonl\n",
            "cargo test --all-features\n"
        ]
    );
    assert_eq!(
        sh_blocks(section(README, "## Add it")),
        ["cargo add serve-command\n"]
    );
}

/// The TOML block of `text` that follows `after`.
fn toml_after<'a>(text: &'a str, after: &str) -> &'a str {
    let rest = &text[text.find(after).expect(after)..];
    let rest = &rest[rest.find("```toml\n").expect("a ```toml block") + 8..];
    &rest[..rest.find("```\n").expect("an unclosed ```toml block")]
}

/// The dependency lines in an example's header (`//!     [dependencies]`
/// and the indented lines after it).
fn header_dependencies(example: &str) -> String {
    example
        .lines()
        .skip_while(|l| *l != "//!     [dependencies]")
        .map_while(|l| l.strip_prefix("//!     "))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// The guide's dependency lists for a tokio engine and controller are the
/// ones their examples build with (a test outside CI built each example
/// as its own crate with only those lines).
#[test]
fn the_guides_tokio_dependencies_are_the_examples() {
    for (after, example) in [
        (
            "an engine's own `Cargo.toml` needs:",
            include_str!("../examples/tokio_engine.rs"),
        ),
        (
            "futures-util's `sink` (for `SinkExt::send`):",
            include_str!("../examples/tokio_controller.rs"),
        ),
    ] {
        let shown = toml_after(GUIDE, after);
        assert_eq!(shown, header_dependencies(example));
        assert!(shown.starts_with("[dependencies]\nserve-command = "));
    }
    assert!(toml_after(GUIDE, "futures-util's `sink`").contains("\"process\""));
    assert!(toml_after(GUIDE, "futures-util's `sink`").contains("features = [\"sink\"]"));
}

/// The targets of the Markdown links of `text`, `[text](target)`.
fn link_targets(text: &str) -> Vec<&str> {
    text.split("](")
        .skip(1)
        .map(|rest| &rest[..rest.find(')').expect("an unclosed link")])
        .collect()
}

/// The headings of `text` as GitHub and crates.io name their anchors.
fn anchors(text: &str) -> Vec<String> {
    text.lines()
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

const SHIPPED: &str = "https://docs.rs/crate/serve-command/latest/source/";

/// The package files `text` links to, as docs.rs shows them.
fn shipped_links(text: &str) -> Vec<&str> {
    text.split(SHIPPED)
        .skip(1)
        .map(|rest| &rest[..rest.find([')', '#', '\n']).unwrap_or(rest.len())])
        .collect()
}

/// Where the README is read (crates.io, with no repository address) and
/// where the guide is (docs.rs, GitHub), a relative link is dead: every
/// link is to a heading of the same file, to a file the package ships (as
/// docs.rs shows it), or to another site.
#[test]
fn every_readme_and_guide_link_works_where_it_is_read() {
    for (place, text, wanted) in [
        (
            "README.md",
            README,
            &[
                "docs/GUIDE.md",
                "docs/PROTOCOL.md",
                "BENCHMARKS.md",
                "CONTRIBUTING.md",
            ][..],
        ),
        (
            "docs/GUIDE.md",
            GUIDE,
            &["README.md", "docs/PROTOCOL.md", "BENCHMARKS.md"][..],
        ),
    ] {
        let anchors = anchors(text);
        for target in link_targets(text) {
            if let Some(anchor) = target.strip_prefix('#') {
                assert!(
                    anchors.iter().any(|a| a == anchor),
                    "{place}: no heading for {target}"
                );
            } else if !target.starts_with(SHIPPED) {
                assert!(
                    target.starts_with("https://"),
                    "{place}: a relative link: {target}"
                );
            }
        }
        assert_links_ship(place, text, wanted);
    }
}

/// Every package file `text` links to is in the repository (.ci/package
/// checks each ships), and it links to each of `wanted`.
#[track_caller]
fn assert_links_ship(place: &str, text: &str, wanted: &[&str]) {
    let links = shipped_links(text);
    for path in &links {
        let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
        assert!(file.is_file(), "{place}: {path} is not in the package");
    }
    for path in wanted {
        assert!(links.contains(path), "{place} does not link {path}");
    }
}

/// The docs.rs front page links the guide and the protocol where docs.rs
/// serves them (a path in the package is no link there).
#[test]
fn the_front_page_links_the_guide_and_the_protocol() {
    assert_links_ship("src/lib.rs", LIB, &["docs/GUIDE.md", "docs/PROTOCOL.md"]);
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

/// The rows of the features table in `text`, as the guide writes them
/// (the front page's intra-doc links, [`v2::Event`], as plain code).
fn feature_rows(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("//! ").or(Some(l)))
        .filter(|l| l.starts_with("| `"))
        .map(|l| l.replace("[`", "`").replace("`]", "`"))
        .collect()
}

/// The guide and the docs.rs front page (src/lib.rs) each table every
/// feature, and only those, in the same words.
#[test]
fn both_feature_tables_list_every_feature_alike() {
    let mut features = features();
    features.sort_unstable();
    assert_eq!(
        features,
        ["arbitrary", "avx2", "cli", "proptest", "tokio", "workbench"]
    );
    let rows = feature_rows(GUIDE);
    let mut names: Vec<&str> = rows
        .iter()
        .map(|row| row[3..].split_once('`').expect("a feature name").0)
        .collect();
    names.sort_unstable();
    assert_eq!(names, features, "the features table of docs/GUIDE.md");
    assert_eq!(
        feature_rows(LIB),
        rows,
        "src/lib.rs's table, against the guide's"
    );
    assert!(feature_rows(README).is_empty(), "one table: the guide's");
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
    for text in [README, GUIDE, include_str!("../docs/PROTOCOL.md")] {
        for name in ["seed's", "seed revision"] {
            assert!(!text.contains(name), "{name}");
        }
    }
}
