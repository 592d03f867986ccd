//! The protocol's first revision: messages carry `text`.
//!
//! As its reference implementation (`command.mbt`) defines it: `prompt`,
//! `steer`, `compact`, `cancel`, `goal` and `approval`, each message a
//! string `text`. Engines and controllers built before content parts speak
//! it; [`v2`](crate::v2) is what upstream speaks today. Everything an
//! engine or a controller of this revision uses is here, named as in `v2`.
//!
//! It defines the command half only: it has no events. An engine of this
//! era answers a bad line with the same `command_error` line
//! ([`LineError::event_line`](crate::generic::LineError::event_line));
//! to read an engine's events, use [`v2::Event`](crate::v2::Event).
//!
//! Its variants are built and matched with struct literals, and are not
//! `#[non_exhaustive]` as `v2`'s are, on purpose: this revision is frozen,
//! so no field is ever added and a literal can never break.
//!
//! ```
//! use serve_command::v1::{Command, CommandReader};
//!
//! let line = Command::Prompt { text: "fix the build".into(), submission_id: None }.to_line();
//! assert_eq!(line, "{\"command\":\"prompt\",\"text\":\"fix the build\"}\n");
//! let mut reader = CommandReader::new(line.as_bytes());
//! assert!(matches!(reader.next(), Some(Ok(Command::Prompt { .. }))));
//! ```

mod command;
mod decode;
mod encode;
pub(crate) mod error;
pub(crate) mod rules;
mod serde;
#[cfg(feature = "proptest")]
pub mod strategy;
mod value;

pub use self::command::{Command, SteerKind};
pub use self::error::ParseError;

crate::revision::face!("v1");
