//! The fuzz targets' committed seed corpus, `fuzz/seeds/<target>/`, is what
//! `tests/vectors/commands.jsonl` (and `commands-v2.jsonl` for the v2
//! target, `shell.jsonl` for the shell target) makes: this test fails when they differ.
//! After changing the vectors, rewrite the seeds with
//! `SERVE_COMMAND_WRITE_SEEDS=1 cargo test --test seeds`.

use serve_command::v1::{Command, SteerKind};
use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

/// The vectors' lines, in file order: `line`, or the bytes of
/// `line_base64` (raw bytes such as invalid UTF-8).
fn vector_lines() -> Vec<Vec<u8>> {
    use base64::Engine as _;
    include_str!("vectors/commands.jsonl")
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("vector is JSON");
            match (v["line"].as_str(), v["line_base64"].as_str()) {
                (Some(line), None) => line.as_bytes().to_vec(),
                (None, Some(b64)) => base64::engine::general_purpose::STANDARD
                    .decode(b64)
                    .expect("line_base64 is base64"),
                _ => panic!("exactly one of line and line_base64: {l}"),
            }
        })
        .collect()
}

/// The v2 vectors' lines (`tests/vectors/commands-v2.jsonl`), the seeds of
/// `decode_line_v2`.
fn v2_vector_lines() -> Vec<Vec<u8>> {
    include_str!("vectors/commands-v2.jsonl")
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("vector is JSON");
            v["line"].as_str().expect("line").as_bytes().to_vec()
        })
        .collect()
}

/// The `shell` target's seeds, from `tests/vectors/shell.jsonl`: a parse
/// request's text as it is; an encode as `COMMAND NUL MODE NUL PAYLOAD`
/// (MODE `E` for an error, else `T` when cut off, then the exit code).
fn shell_seeds() -> Vec<Vec<u8>> {
    include_str!("vectors/shell.jsonl")
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("vector is JSON");
            let r = &v["request"];
            let s = |key: &str| r[key].as_str().expect("a string").to_owned();
            if r.get("parse").is_some() {
                s("parse")
            } else if r.get("error").is_some() {
                format!("{}\0E\0{}", s("encode"), s("error"))
            } else {
                let cut = if r["output_limit_reached"] == true {
                    "T"
                } else {
                    ""
                };
                let code = r["exit_code"]
                    .as_i64()
                    .map_or(String::new(), |c| c.to_string());
                format!("{}\0{cut}{code}\0{}", s("encode"), s("text"))
            }
            .into_bytes()
        })
        .collect()
}

/// A stream target's header (see `StreamInput` in fuzz/src/lib.rs):
/// `[max (255: 65536), fail_at_end | interrupt_every << 1, seed (LE)]`.
fn stream_header(max: u8, fail_at_end: bool, interrupt_every: u8, seed: u16) -> Vec<u8> {
    let [lo, hi] = seed.to_le_bytes();
    vec![max, interrupt_every << 1 | u8::from(fail_at_end), lo, hi]
}

/// The vectors as streams: 16 lines a file, with LF or CRLF, a blank line
/// here and there, under a few limits and chunkings. Lines past 512 bytes
/// (deep nesting: `decode_line`'s business) are left out, so that inputs,
/// whose size libFuzzer takes from the largest seed, stay small and fast.
fn streams(lines: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let short: Vec<&Vec<u8>> = lines.iter().filter(|l| l.len() <= 512).collect();
    short
        .chunks(16)
        .enumerate()
        .map(|(k, group)| {
            let k16 = u16::try_from(k).expect("few groups");
            let mut out = match k % 4 {
                // Long lines fit; chunk sizes vary.
                0 => stream_header(255, false, 0, 0x9e37 ^ k16),
                // Most vector lines are too long for 40 bytes.
                1 => stream_header(40, false, 2, k16),
                // One byte at a time, ending in an I/O error.
                2 => stream_header(255, true, 0, 0),
                _ => stream_header(80, false, 0, 0x5bd1 ^ k16),
            };
            let eol: &[u8] = if k % 3 == 1 { b"\r\n" } else { b"\n" };
            for (i, line) in group.iter().enumerate() {
                out.extend_from_slice(line);
                out.extend_from_slice(eol);
                if i % 5 == 4 {
                    out.extend_from_slice(b" \t\r\n");
                }
            }
            // The last line without its LF.
            out.truncate(out.len() - 1);
            out
        })
        .collect()
}

/// One read `arbitrary`'s derive makes, in order.
enum Read<'a> {
    /// Bytes taken from the front: a `u32` tag, a `bool`'s byte.
    Front(Vec<u8>),
    /// A `String`: its length taken from the end, its bytes from the front.
    Str(&'a str),
    /// The last field's `String`: every byte left.
    Rest(&'a str),
}

/// The bytes that `arbitrary` (1.x) reads as these reads, done by
/// `Unstructured::arbitrary_byte_size`'s rules: a length is 1, 2 or 4 bytes
/// from the end (by how much data is left), big-endian, and the first
/// string's length is the last bytes.
fn layout(reads: &[Read]) -> Vec<u8> {
    // With exactly 257 bytes left, `arbitrary` reads every length as 0: a
    // byte that is never read, between the fronts and the lengths, moves
    // the count off 257.
    (0..4)
        .find_map(|pad| layout_padded(reads, pad))
        .expect("a padding that avoids 257")
}

fn layout_padded(reads: &[Read], pad: usize) -> Option<Vec<u8>> {
    if pad > 0 && matches!(reads.last(), Some(Read::Rest(_))) {
        return None;
    }
    let front_len = |r: &Read| match r {
        Read::Front(b) => b.len(),
        Read::Str(s) | Read::Rest(s) => s.len(),
    };
    let mut lengths = Vec::new();
    for (j, read) in reads.iter().enumerate().rev() {
        if let Read::Str(s) = read {
            let left = reads[j..].iter().map(front_len).sum::<usize>() + pad + lengths.len();
            let want = s.len();
            // The data's length, were the length one byte, or two.
            let (one, two) = (left + 1, left + 2);
            if one == 257 && want > 0 {
                return None;
            } else if one <= 257 {
                lengths.push(u8::try_from(want).expect("under 257"));
            } else if two <= 65537 {
                lengths.extend_from_slice(&u16::try_from(want).expect("under 65537").to_be_bytes());
            } else {
                // Three bytes read, the fourth ignored, below 16 MiB.
                let [_, a, b, c] = u32::try_from(want).expect("under 16 MiB").to_be_bytes();
                lengths.extend_from_slice(&[a, b, c, 0]);
            }
        }
    }
    let mut out = Vec::new();
    for read in reads {
        match read {
            Read::Front(b) => out.extend_from_slice(b),
            Read::Str(s) | Read::Rest(s) => out.extend_from_slice(s.as_bytes()),
        }
    }
    out.resize(out.len() + pad, 0);
    out.extend_from_slice(&lengths);
    Some(out)
}

/// The `u32` that the derive's `(tag * count) >> 32` maps to `index`.
fn tag(index: u64, count: u64) -> Vec<u8> {
    let tag = u32::try_from((index << 32).div_ceil(count)).expect("index < count");
    tag.to_le_bytes().to_vec()
}

/// The bytes `Command::arbitrary_take_rest` (the `roundtrip` target's
/// input) reads as `cmd`.
fn arbitrary_bytes(cmd: &Command) -> Vec<u8> {
    let variant = |i| Read::Front(tag(i, 7));
    let flag = |b: bool| Read::Front(vec![u8::from(b)]);
    layout(&match cmd {
        Command::Prompt {
            text,
            submission_id: None,
        } => vec![variant(0), Read::Str(text), flag(false)],
        Command::Prompt {
            text,
            submission_id: Some(id),
        } => vec![variant(0), Read::Str(text), flag(true), Read::Str(id)],
        Command::Steer { kind, text } => {
            let kind = match kind {
                SteerKind::Prompt => 0,
                SteerKind::Command => 1,
                other => panic!("no arbitrary layout for {other:?}"),
            };
            vec![variant(1), Read::Front(tag(kind, 2)), Read::Rest(text)]
        }
        Command::Compact => vec![variant(2)],
        Command::Cancel => vec![variant(3)],
        Command::GoalSet { text, auto } => vec![variant(4), Read::Str(text), flag(*auto)],
        Command::GoalClear => vec![variant(5)],
        Command::ApprovalDecision { id, allow } => vec![variant(6), Read::Str(id), flag(*allow)],
        other => panic!("no arbitrary layout for {other:?}"),
    })
}

/// The vectors' commands, as the crate decodes them.
fn vector_commands(lines: &[Vec<u8>]) -> Vec<Command> {
    lines
        .iter()
        .filter_map(|l| Command::from_slice(l).ok())
        .collect()
}

/// FNV-1a, 64 bits: a stable name for a seed from its bytes.
fn name(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

fn named(seeds: Vec<Vec<u8>>) -> BTreeMap<String, Vec<u8>> {
    seeds.into_iter().map(|s| (name(&s), s)).collect()
}

/// Target name to its seeds, by file name.
fn expected() -> BTreeMap<&'static str, BTreeMap<String, Vec<u8>>> {
    let lines = vector_lines();
    BTreeMap::from([
        ("decode_line", named(lines.clone())),
        ("decode_line_v2", named(v2_vector_lines())),
        (
            "roundtrip",
            named(
                vector_commands(&lines)
                    .iter()
                    .map(arbitrary_bytes)
                    .collect(),
            ),
        ),
        ("read_stream", named(streams(&lines))),
        ("codec", named(streams(&lines))),
        ("shell", named(shell_seeds())),
    ])
}

fn on_disk(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let Ok(entries) = fs::read_dir(dir) else {
        return BTreeMap::new();
    };
    entries
        .map(|e| {
            let e = e.expect("a directory entry");
            let name = e.file_name().into_string().expect("a UTF-8 name");
            (name, fs::read(e.path()).expect("a readable seed"))
        })
        .collect()
}

#[test]
fn seeds_are_up_to_date() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    // The published package leaves out fuzz/ (fuzzing infrastructure, not
    // what a user builds): there is nothing to compare. In the repository
    // fuzz/ is always there, so this check runs.
    if !fuzz.is_dir() {
        eprintln!(
            "seeds_are_up_to_date: skipped, no {} (the published package has no fuzz/)",
            fuzz.display()
        );
        return;
    }
    let root = fuzz.join("seeds");
    let write = std::env::var_os("SERVE_COMMAND_WRITE_SEEDS").is_some();
    let expected = expected();
    if write {
        let _ = fs::remove_dir_all(&root);
        for (target, seeds) in &expected {
            let dir = root.join(target);
            fs::create_dir_all(&dir).expect("create the seed directory");
            for (name, bytes) in seeds {
                fs::write(dir.join(name), bytes).expect("write a seed");
            }
        }
    }
    let mut targets: Vec<String> = fs::read_dir(&root)
        .expect("fuzz/seeds exists")
        .map(|e| {
            e.expect("an entry")
                .file_name()
                .into_string()
                .expect("UTF-8")
        })
        .collect();
    targets.sort();
    assert_eq!(
        targets,
        expected.keys().map(|t| t.to_string()).collect::<Vec<_>>(),
        "one seed directory per target"
    );
    for (target, seeds) in &expected {
        let found = on_disk(&root.join(target));
        let missing: Vec<&String> = seeds.keys().filter(|n| !found.contains_key(*n)).collect();
        let extra: Vec<&String> = found.keys().filter(|n| !seeds.contains_key(*n)).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "fuzz/seeds/{target} is stale (missing {missing:?}, extra {extra:?}): \
             run SERVE_COMMAND_WRITE_SEEDS=1 cargo test --test seeds"
        );
        for (name, bytes) in seeds {
            assert_eq!(&found[name], bytes, "fuzz/seeds/{target}/{name}");
        }
    }
}

#[test]
fn seed_names_are_stable() {
    assert_eq!(name(b""), "cbf29ce484222325");
    assert_eq!(name(b"{\"command\":\"cancel\"}"), "71a378cc98fdf50e");
}

/// The `roundtrip` seeds are the vectors' commands, as `arbitrary` reads
/// them (checked only with the `arbitrary` feature, which brings it).
#[cfg(feature = "arbitrary")]
#[test]
fn roundtrip_seeds_read_back_as_the_vectors_commands() {
    use arbitrary::{Arbitrary, Unstructured};
    let commands = vector_commands(&vector_lines());
    assert!(commands.len() >= 100, "only {} commands", commands.len());
    for cmd in commands {
        let bytes = arbitrary_bytes(&cmd);
        assert_eq!(
            Command::arbitrary_take_rest(Unstructured::new(&bytes)).ok(),
            Some(cmd),
            "{bytes:?}"
        );
    }
    // Lengths past 256 and 65536 bytes take 2 and 4 bytes.
    for len in [0, 1, 253, 254, 255, 256, 300, 65533, 65534, 65535, 70000] {
        let cmd = Command::GoalSet {
            text: "é".repeat(len / 2) + &"x".repeat(len % 2),
            auto: true,
        };
        let bytes = arbitrary_bytes(&cmd);
        assert_eq!(
            Command::arbitrary_take_rest(Unstructured::new(&bytes)).ok(),
            Some(cmd)
        );
    }
    // Two strings, each length counted with the other's bytes.
    for (text, id) in [
        (250, 3),
        (3, 250),
        (251, 0),
        (0, 252),
        (126, 126),
        (300, 65530),
    ] {
        let cmd = Command::Prompt {
            text: "t".repeat(text),
            submission_id: Some("i".repeat(id)),
        };
        let bytes = arbitrary_bytes(&cmd);
        assert_eq!(
            Command::arbitrary_take_rest(Unstructured::new(&bytes)).ok(),
            Some(cmd)
        );
    }
}
