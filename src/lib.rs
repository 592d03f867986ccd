//! The codec for both halves of the `serve` protocol.
//!
//! A controller (a TUI, a desktop app, a script) writes one JSON command per
//! line to an agent engine's stdin (`openseek serve`, the engine of the
//! openseek agent); the engine decodes each line into a command, or answers
//! a line it cannot use with a `command_error` event, and writes its events
//! one per line on its stdout. This crate writes and reads both, byte for
//! byte as openseek's own code (the reference) does, with its error
//! strings: commands for controllers to write and engines to read
//! ([`v2::Command`]), events for engines to write and controllers to read
//! ([`v2::Event`], [`v2::EventReader`]).
//!
//! The protocol has two revisions, and the wire does not say which one a
//! line belongs to: both ends agree on one. Each is a module with the same
//! names in it; pick one and use only it.
//! - [`v2`]: today's protocol, which openseek speaks: content parts with
//!   images, tagged steers, background job commands. It also reads the
//!   older `text` lines a v1 controller writes.
//! - [`v1`]: the protocol's first revision, every message a string `text`:
//!   only to speak to a peer of that era.
//!
//! An engine supplies how to run a turn ([`v2::serve::Engine`]), and
//! [`v2::serve::EngineLoop`], upstream's serve loop as a library, keeps
//! every other promise of the wire: refused lines answered at once, one
//! turn at a time, steers at step boundaries, `cancel`, goals, approvals,
//! the job commands. The smallest engine, `examples/minimal_engine.rs` (CI
//! runs `serve-command check-engine` on it; `examples/engine.rs` is an
//! engine around a model call; [`v2::CommandReader`] and [`v2::Event`] are
//! the lines underneath, for an engine that keeps its own loop):
//!
//! ```no_run
#![doc = include_str!("../examples/minimal_engine.rs")]
//! ```
//!
//! A controller builds a [`v2::Command`] and writes its line to the engine's
//! stdin; here, a prompt with an image, to stdout:
//!
//! ```
//! use serve_command::v2::{Command, ContentPart, Image};
//! use std::io::{self, Write};
//!
//! // A 1x1 PNG, 67 bytes. A controller would read the user's file:
//! // `std::fs::read("shot.png")?`.
//! const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\0\0\0\0\x3a\x7e\x9b\x55\
//!     \0\0\0\nIDAT\x78\xda\x63\xf8\x0f\0\x01\x01\x01\0\x1c\xb0\x8c\x99\0\0\0\0IEND\xae\x42\x60\x82";
//!
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     // Refused unless the bytes are PNG, JPEG, GIF or WebP, at most 5 MiB.
//!     let screenshot = Image::from_bytes(PNG.to_vec())?;
//!     // Tag the prompt to reconcile its delivery later by exact id.
//!     let content = vec![ContentPart::Text("What is this?".into()), ContentPart::Image(screenshot)];
//!     let prompt = Command::prompt_tagged(content, "sub-1");
//!     let mut stdout = io::stdout().lock();
//!     // One write per line: a line never interleaves with another writer's.
//!     prompt.write_line(&mut stdout)?;
//!     stdout.flush()?;
//!     Ok(())
//! }
//! ```
//!
//! Over tokio, an engine runs on [`v2::serve::TokioEngineLoop`]
//! (`examples/tokio_engine.rs`), and the lines underneath are
//! [`v2::CommandCodec`] and [`v2::EventCodec`] (the `tokio` feature):
//! `tokio_util` decoders and encoders for `FramedRead` and `FramedWrite`,
//! with the reader's framing, line limit and line numbers, where a bad line
//! is an item and never ends the stream (`examples/tokio_controller.rs`).
//!
//! [The guide] (`docs/GUIDE.md`, shipped in the package) is the manual:
//! the full example engine and controller, the tokio codecs and the
//! dependency lines they need, the `!` command envelope, the workbench, the
//! CLI in full, choosing a revision, performance and the minimum Rust.
//!
//! [The guide]: https://docs.rs/crate/serve-command/latest/source/docs/GUIDE.md
//!
//! # Features
//!
//! Only `avx2` is on by default: the library compiles 18 crates, 12 with
//! `default-features = false` (CI holds the default build to 20).
//!
//! | feature | what it brings |
//! | --- | --- |
//! | `tokio` | [`v2::CommandCodec`], [`v2::EventCodec`] and [`v1::CommandCodec`]: `tokio_util::codec` decoders and encoders, for `FramedRead` and `FramedWrite`; the serve loop and the controller on tokio (`v2::serve::TokioEngineLoop`, `v2::serve::TokioController`). Brings in `tokio-util` (with `codec`), `bytes` and tokio |
//! | `arbitrary` | `impl Arbitrary` for [`v2::Command`], [`v2::Event`] and [`v1::Command`], for cargo-fuzz targets |
//! | `proptest` | [`v2::strategy`] and [`v1::strategy`]: proptest strategies for commands and events, and for near-miss lines paired with their outcome, for an engine's (or a controller's) own tests |
//! | `avx2` (default) | the long-string scans (a long prompt's escaping and decoding) on AVX2 where the CPU has it, picked at run time, through `pulp` (6 crates); without it they use SSE2, a few percent slower on long non-ASCII text |
//! | `workbench` | [`workbench::MockEngine`], [`workbench::Replay`], [`workbench::Monitor`], [`workbench::CheckEngine`], [`workbench::Runner`] and [`v2::serve::Recorder`]: `serve-command mock-engine` (and `--replay`), the judgement of `serve-command tap`, `serve-command check-engine`, the session runner in process and a controller's recording, for a controller's or an engine's tests (with `proptest`, the fuzzer). No dependency of its own |
//! | `cli` | the `serve-command` binary (below); turns on `proptest` and `workbench` |
//!
//! # The CLI
//!
//! `cargo install serve-command --features cli` installs `serve-command`,
//! the codec from a shell, for either revision: `encode` writes a
//! command's line, `decode` reads lines as an engine must (each line's
//! command, or the `command_error` it owes), `conform` runs another
//! implementation through the conformance vectors, `corpus` writes near-miss
//! lines with their outcomes for another fuzzer, `dict` a fuzzing
//! dictionary, `shell` writes and parses the `<user_shell_command>`
//! envelope, `tap` sits between a controller and an engine, passing
//! every byte through and naming every line either side gets wrong,
//! `trace` reads the tap's log back as a conversation (which command each
//! event answers and which turn it belongs to, by
//! [`v2::serve::Conversation`]), `mock-engine` is an engine with no model for a controller's tests
//! ([`workbench::MockEngine`] in process; the tap's judgement is
//! [`workbench::Monitor`]), and `check-engine` checks an
//! engine in any language over its stdio ([`workbench::CheckEngine`]).
//! [The guide] has each in full, as does `serve-command --help`;
//! `serve-command --version` names the upstream sources each rule set
//! follows.
//!
//! # The wire
//!
//! The rules of each revision, the compatibility between them, and what
//! an implementation in another language needs are in
//! [`docs/PROTOCOL.md`](https://docs.rs/crate/serve-command/latest/source/docs/PROTOCOL.md),
//! shipped in the package.
#![forbid(unsafe_code)]
// docs.rs (Cargo.toml: `--cfg docsrs`, nightly): "Available on crate feature
// ... only" on every feature-gated item, derived from its `#[cfg]`.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(missing_docs)]
// Every fallible public function says when it fails (CI runs clippy with -D warnings).
#![warn(clippy::missing_errors_doc)]

// The file list is the architecture, in rooms that only look down
// (CONTRIBUTING.md, "The rooms"; `.ci/layers` checks it): `wire/` (and
// `error.rs`) is what every revision shares, `v1/` and `v2/` are the two
// revisions' messages, each a complete face over it (`revision.rs`), the
// conversation (`conversation/`, public as `v2::serve`) sits above the messages, the workbench above
// the conversation, and the CLI (`cli/`) above all, through the library.
mod conversation;
mod error;
mod refusal;
mod revision;
pub mod shell;
pub mod v1;
pub mod v2;
mod wire;
#[cfg(feature = "workbench")]
pub mod workbench;

/// The machinery every revision shares, generic over the revision: for code
/// that handles either one (a CLI, a proxy, a test harness).
///
/// An engine or a controller speaks one revision and uses its module,
/// [`v2`] or [`v1`], whose `CommandReader`, `CommandCodec`, `LineError`
/// and `ReadError` are these types with the revision filled in. Here the
/// revision is a type parameter, [`Revision`](crate::generic::Revision),
/// with no default: a reader of the wrong revision cannot be written
/// without naming it.
///
/// ```
/// use serve_command::generic::{CommandReader, Revision};
/// use serve_command::{v1, v2};
///
/// // How many lines of a stream are commands of revision `C`.
/// fn commands<C: Revision>(stream: &[u8]) -> usize {
///     CommandReader::<_, C>::new(stream).filter(Result::is_ok).count()
/// }
/// let stream = b"{\"command\":\"prompt\",\"content\":\"hi\"}\n{\"command\":\"cancel\"}\n";
/// assert_eq!(commands::<v2::Command>(stream), 2);
/// assert_eq!(commands::<v1::Command>(stream), 1); // v1 reads `text`, not `content`
/// ```
pub mod generic {
    pub use crate::error::{LineError, ReadError, SyntaxError, UnknownMessage};
    #[cfg(feature = "tokio")]
    pub use crate::wire::codec::CommandCodec;
    pub use crate::wire::message::{Message, Revision};
    pub use crate::wire::read::{CommandReader, DEFAULT_MAX_LINE_LEN};
}

/// The crate root names no command type: every path names its revision.
///
/// ```compile_fail,E0432
/// use serve_command::Command; // `serve_command::v2::Command`, or `v1::`
/// ```
///
/// The generic reader does not compile without its revision named:
///
/// ```compile_fail,E0283
/// let reader = serve_command::generic::CommandReader::new(&b""[..]);
/// for item in reader {
///     let _ = item;
/// }
/// ```
#[cfg(doctest)]
struct NoDefaultRevision;

// The README's programs are tested with the rest, and the guide's. The
// guide's tokio programs and its `CheckEngine` need their features (`cargo
// test --all-features`, the README's test command); shown as complete
// programs, they cannot be gated inside their blocks.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

#[cfg(all(doctest, feature = "tokio", feature = "workbench"))]
#[doc = include_str!("../docs/GUIDE.md")]
struct GuideDoctests;
