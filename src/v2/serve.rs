//! The conversation, not only the lines: which command each event of an
//! `openseek serve` session answers, and which turn it belongs to.
//!
//! Most lines of the serve protocol carry no id, so which command an
//! event replies to is written down nowhere but in upstream's serve loop
//! (`internal/openseek/serve/loop.mbt` @ 642262b0): one turn at a time in
//! wire order, compactions queued behind a turn, requests answered by
//! `request_id` at any time, every refused line answered by one
//! `command_error` in order. [`Conversation`] holds those rules with no
//! I/O: feed it the lines both ends write, in the order they cross, and it
//! attributes each event. `docs/PROTOCOL.md` ("What answers what") gives
//! each rule with the line of `loop.mbt` it rests on.
//!
//! [`Controller`] drives an engine on it, with std threads: each call
//! returns what answers its command (a [`Turn`] for a prompt, a [`Reply`]
//! for a request, the `command_error` as a [`ControllerError`]), and what
//! answers nothing is a [`Notice`]. `TokioController` (feature `tokio`) is
//! the same on tokio.
//!
//! [`EngineLoop`] is the same loop from the engine's side: an [`Engine`]
//! says how to run a turn ([`RunningTurn`]), and the loop keeps every
//! other promise of `openseek serve` (refused lines answered at once, one
//! turn at a time, steers, `cancel`, goals, approvals, the job commands,
//! and the prediction after a successful idle turn). `TokioEngineLoop` (feature `tokio`) runs the same
//! state machine on tokio, for a `TokioEngine` whose turn is async. Every
//! event either loop writes is attributed by [`Conversation`] as the
//! controller's table says (tests/v2_engine_loop.rs holds them together).
//!
//! `Recorder` (feature `workbench`) writes a session, both ways with
//! times, in the log format of `serve-command tap --log`, which
//! `serve-command trace` reads.
//!
//! [`pipe`] attaches an engine in process: an in-memory one-way pipe whose
//! end closes when it is dropped, so [`Controller::close`] ends the
//! engine's input and the engine's return ends the controller's.

// The conversation is a layer of its own (src/conversation/), above the
// revision's messages; this is its public face, where users name it.
pub use crate::conversation::*;
