//! The codec for the command half of the `serve` protocol.
//!
//! A controller (a TUI, a desktop app, a script) writes one JSON command per
//! line to an agent engine's stdin; the engine decodes each line into a
//! [`Command`], or answers an unreadable one with a `command_error` event.
//! This crate writes those lines for controllers and reads them for engines,
//! byte for byte as the protocol's reference implementation does, with the
//! reference's error strings.
//!
//! ```
//! use serve_command::{Command, LineError, ParseError};
//!
//! // A controller writes a line...
//! let line = Command::Prompt { text: "fix the build".into(), submission_id: Some("s1".into()) }
//!     .to_line();
//! assert_eq!(line, "{\"command\":\"prompt\",\"text\":\"fix the build\",\"submission_id\":\"s1\"}\n");
//!
//! // ...and an engine reads it back.
//! let cmd = Command::from_slice(line.as_bytes())?;
//! assert!(matches!(cmd, Command::Prompt { .. }));
//!
//! // A line that is JSON but not a command: the error is the wire string.
//! let err = Command::from_slice(br#"{"command":"steer","kind":"notice","text":"hi"}"#).unwrap_err();
//! assert_eq!(err, LineError::Command(ParseError::UnknownSteerKind("notice".into())));
//! assert_eq!(err.to_string(), "unknown steer kind: notice");
//! assert_eq!(err.event_line(), "{\"event\":\"command_error\",\"error\":\"unknown steer kind: notice\"}\n");
//! # Ok::<(), LineError>(())
//! ```
//!
//! The crate root is the seed's revision of the wire (`command.mbt`). The
//! later revision, with content parts, images, tagged steers and job
//! commands, is [`v2`]: its own `Command` and `ParseError`, the same
//! [`CommandReader`] and `CommandCodec` (with `v2::Command` as their
//! revision parameter), and conversions between the two command types.
#![forbid(unsafe_code)]
// docs.rs (Cargo.toml: `--cfg docsrs`, nightly): "Available on crate feature
// ... only" on every feature-gated item, derived from its `#[cfg]`.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(missing_docs)]

// The file list is the architecture: `wire/` is what every revision shares
// (scanning, escaping, framing, reading), `v1/` is the seed's revision, which
// the root re-exports, and data flows down: revision -> wire -> error.
mod error;
mod revision;
pub mod shell;
mod v1;
pub mod v2;
mod wire;

pub use crate::error::{LineError, ReadError, SyntaxError, UnknownMessage};
pub use crate::revision::Revision;
#[cfg(feature = "proptest")]
pub use crate::v1::strategy;
pub use crate::v1::{Command, ParseError, SteerKind};
#[cfg(feature = "tokio")]
pub use crate::wire::codec::CommandCodec;
pub use crate::wire::read::{CommandReader, DEFAULT_MAX_LINE_LEN};

// The README's examples are tested with the rest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
