//! The v2 model (tests/support/model_v2.rs) in the oracle's verdict format,
//! so `scripts/v2_differential.py --cmd` can hold it to `oracle-latest-next`.
//! Dev tool, not part of the crate: build it from a throwaway package,
//!
//!     mkdir -p /tmp/v2model && cd /tmp/v2model && cat > Cargo.toml <<'TOML'
//!     [package]
//!     name = "v2model"
//!     version = "0.0.0"
//!     edition = "2021"
//!     [[bin]]
//!     name = "v2model"
//!     path = "REPO/scripts/model_v2_verdicts.rs"
//!     [dependencies]
//!     serde_json = "1"
//!     base64 = "0.22"
//!     [workspace]
//!     TOML
//!     cargo build --release
//!     python3 REPO/scripts/v2_differential.py --cmd /tmp/v2model/target/release/v2model
//!
//! A line serde_json refuses is `SKIP`: the model has no JSON parser of its
//! own, and serde_json is stricter than the reference (nesting past 128,
//! `1e400`), so those lines are counted apart rather than compared.

#[path = "../tests/support/model_v2.rs"]
#[allow(dead_code)]
mod model_v2;

use std::io::{BufRead, Write};

fn main() {
    let stdin = std::io::stdin();
    let mut out = std::io::BufWriter::new(std::io::stdout());
    for line in stdin.lock().split(b'\n') {
        let line = line.expect("stdin");
        let Ok(value) = serde_json::from_slice::<serde_json::Value>(&line) else {
            writeln!(out, "SKIP").expect("stdout");
            continue;
        };
        match model_v2::model_v2(&value) {
            Ok(canonical) => writeln!(out, "OK {canonical}"),
            Err(e) => writeln!(out, "ERR {}", e.replace('\n', "\\n").replace('\r', "\\r")),
        }
        .expect("stdout");
    }
}
