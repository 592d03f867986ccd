//! The seed's revision of the wire (`command.mbt`), which the crate root
//! re-exports: its command type, rules, error strings, and every way in and
//! out of them.

mod command;
mod decode;
mod encode;
mod error;
pub(crate) mod rules;
mod serde;
#[cfg(feature = "proptest")]
pub mod strategy;
mod value;

pub use self::command::{Command, SteerKind};
pub use self::error::ParseError;
