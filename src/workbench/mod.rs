//! Tools for testing against the wire, in process: what the CLI's
//! workbench commands run, for a Rust test that needs no binary.
//!
//! [`MockEngine`] is `serve-command mock-engine`: a deterministic engine
//! with no model that answers a controller's commands with the events
//! `openseek serve` writes, for a controller's tests. Like every other
//! path, it reads and writes through the crate's one rule set ([`v2`]'s
//! reader, serve policy and event encoder): it writes no rule of its own.
//!
//! [`v2`]: crate::v2

mod mock_engine;

pub use mock_engine::{MockEngine, ScriptError};
