//! The later revision of the wire: `serve_command::v2`.
//!
//! It follows upstream openseek's `protocol/command.mbt` and `image.mbt` at
//! 0f65a2c1, `content.mbt` at 004077e3 and `valid_job_component` from
//! `jobs.mbt` at fe7362d3 (the reference oracle's `latest/`). Against the
//! seed's revision at the crate root: `prompt` and `steer` carry
//! [`Content`] (a string, or text and image parts) and still read the
//! legacy `text` with data-URL `images`; a `steer` may carry a
//! `submission_id`; `jobs_snapshot` and `job_stop` are new. Everything else,
//! and every other error string, is the seed's.
//!
//! The wire itself carries no version: a line does not say which revision
//! wrote it, and the same line can read differently in each (a v1 engine
//! ignores `content`). Which revision a stream speaks is the two ends'
//! agreement; [`CommandReader`](crate::CommandReader) and `CommandCodec`
//! read this one with `v2::Command` as their revision parameter.
//!
//! ```
//! use serve_command::v2::{Command, Content, ContentPart, ParseError};
//! use serve_command::{CommandReader, DEFAULT_MAX_LINE_LEN, LineError};
//!
//! let cmd = Command::from_slice(br#"{"command":"prompt","text":"x","images":["data:image/png;base64,iVBORw0KGgo="]}"#)?;
//! assert_eq!(
//!     cmd.to_line(),
//!     "{\"command\":\"prompt\",\"content\":[{\"type\":\"text\",\"text\":\"x\"},{\"type\":\"image\",\"media_type\":\"image/png\",\"data\":\"iVBORw0KGgo=\"}]}\n",
//! );
//!
//! let mut reader = CommandReader::<_, Command>::for_revision(&b"{\"command\":\"jobs_snapshot\",\"request_id\":\"\"}\n"[..], DEFAULT_MAX_LINE_LEN);
//! let err = reader.next().unwrap().unwrap_err();
//! assert_eq!(err.to_string(), "line 1: invalid background job command");
//! # Ok::<(), LineError<ParseError>>(())
//! ```

mod command;
mod content;
mod decode;
mod encode;
mod error;
mod image;
mod rules;
mod serde;
#[cfg(feature = "proptest")]
pub mod strategy;
mod value;

pub use self::command::{Command, NotInV1};
pub use self::content::{Content, ContentPart};
pub use self::error::ParseError;
pub use self::image::{Image, ImageError, MAX_BASE64_LEN, MAX_IMAGE_BYTES};
pub use crate::v1::SteerKind;
