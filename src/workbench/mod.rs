//! Tools for testing against the wire, in process: what the CLI's
//! workbench commands run, for a Rust test that needs no binary.
//!
//! - [`MockEngine`] is `serve-command mock-engine`: a deterministic engine
//!   with no model that answers a controller's commands with the events
//!   `openseek serve` writes, for a controller's tests; [`Replay`] is
//!   `serve-command mock-engine --replay`: one that answers as a recorded
//!   session's engine did.
//! - [`Monitor`] is `serve-command tap`'s judgement: fed both directions
//!   of a session a line at a time, it names what either side gets wrong
//!   (a refused line, the `command_error` the engine owes it and whether
//!   it came, stray output, an engine reading on after a line that ends
//!   its reading).
//! - [`CheckEngine`] is `serve-command check-engine`: runs an engine
//!   binary, in any language, over its real stdio, and checks what every
//!   engine owes whatever its model does: its lines, and the whole
//!   conversation (each turn's end, cancel, steers, goals, compaction,
//!   requests, approvals, the end of input).
//! - [`Runner`] drives an engine with a [`Session`] (command lines, each
//!   sent at a point of the conversation; a JSON Lines file a person or a
//!   program writes), over a child's stdio or in process
//!   ([`Runner::run_with`]), judging every event with the serve loop's
//!   model; its [`SessionVerdict`] names every broken promise. The
//!   conversation checks and `check-engine --session` run on it.
//! - [`Fuzzer`] (with `proptest`) is `serve-command fuzz-engine`: generated
//!   sessions ([`sessions`], a proptest `Strategy`) on the same runner,
//!   the first broken promise shrunk to a minimal session. With
//!   `arbitrary`, `Session` is `Arbitrary`, for a cargo-fuzz target.
//! - [`Transcript`] is `serve-command replay`: a recording read as the
//!   conversation it holds, the [`Session`] that sends its lines again at
//!   the same points ([`Runner::run_recorded`] records the new run), and
//!   the two conversations compared ([`Transcript::compare`]).
//!
//! Like every other path, each reads and writes through the crate's one
//! rule set ([`v2`]'s readers, serve policy and encoders): none writes a
//! rule of its own.
//!
//! [`v2`]: crate::v2

mod answers;
mod check_engine;
mod conversation_checks;
#[cfg(feature = "proptest")]
mod fuzz;
#[cfg(any(feature = "proptest", feature = "arbitrary"))]
mod generate;
mod line_checks;
mod line_scenarios;
mod mock_engine;
mod pipes;
mod replay;
mod report;
// Starting a program over pipes and bounding it: the runner's and
// `serve-command conform`'s (public for the CLI, not the crate's API).
#[doc(hidden)]
pub mod run;
mod runner;
mod session;
mod shown;
mod transcript;
mod verdict;

pub use crate::conversation::monitor::{Detail, Judged, Kind, Monitor, Verdict, Violation};
pub use check_engine::CheckEngine;
#[cfg(feature = "proptest")]
pub use fuzz::{failure_kind, sessions, Budget, Campaign, Finding, Fuzzer, Progress};
pub use mock_engine::{MockEngine, ScriptError};
pub use pipes::{EngineInput, EngineOutput};
pub use replay::{RecordingError, Replay};
pub use report::{Check, Failure, Level, Report};
pub use runner::Runner;
pub use session::{Action, After, Session, SessionError, Step};
pub use transcript::{Compare, Comparison, Difference, Part, Place, Transcript};
pub use verdict::{End, Received, Sent, SessionVerdict};
