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
