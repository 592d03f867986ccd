//! Today's revision of the wire, which upstream openseek speaks: messages
//! carry content parts (text and images), steers may be tagged, background
//! jobs can be listed and stopped, and the engine predicts the user's next
//! message by itself after a successful turn.
//!
//! It follows upstream openseek at fdf10827: `protocol/command.mbt`
//! reconstructed from the API listing @ fdf10827 (642262b0's less the
//! prediction commands),
//! `image.mbt` at 0f65a2c1, `content.mbt` at 004077e3 and
//! `valid_job_component` from `jobs.mbt` at fe7362d3 (`serve-command
//! --version` lists every source the crate follows). Against the protocol's
//! first revision ([`v1`](crate::v1)): `prompt` and `steer` carry
//! [`Content`] (a string, or text and image parts) and still read the
//! legacy `text` with data-URL `images`; a `steer` may carry a
//! `submission_id`; `jobs_snapshot` and `job_stop` are new. Everything
//! else, and every other error
//! string, is the first revision's.
//!
//! The wire itself carries no version: a line does not say which revision
//! wrote it, and the same line can read differently in each (a v1 engine
//! ignores `content`). Which revision a stream speaks is the two ends'
//! agreement. Everything an engine or a controller of this revision uses is
//! here, named as in `v1`.
//!
//! ```
//! use serve_command::v2::{Command, CommandReader};
//!
//! // A v1 controller's legacy line, read as today's protocol reads it.
//! let cmd = Command::from_slice(br#"{"command":"prompt","text":"x","images":["data:image/png;base64,iVBORw0KGgo="]}"#)?;
//! assert_eq!(
//!     cmd.to_line(),
//!     "{\"command\":\"prompt\",\"content\":[{\"type\":\"text\",\"text\":\"x\"},{\"type\":\"image\",\"media_type\":\"image/png\",\"data\":\"iVBORw0KGgo=\"}]}\n",
//! );
//!
//! let mut reader = CommandReader::new(&b"{\"command\":\"jobs_snapshot\",\"request_id\":\"\"}\n"[..]);
//! let err = reader.next().unwrap().unwrap_err();
//! assert_eq!(err.to_string(), "line 1: invalid background job command");
//! # Ok::<(), serve_command::v2::LineError>(())
//! ```

mod command;
mod content;
mod decode;
mod encode;
mod error;
pub(crate) mod event;
mod image;
mod rules;
mod serde;
pub mod serve;
#[cfg(feature = "proptest")]
pub mod strategy;
mod value;

pub use self::command::{Command, IntoV1Error, NotInV1};
pub use self::content::{Content, ContentPart};
pub use self::error::ParseError;
#[cfg(feature = "tokio")]
pub use self::event::EventCodec;
pub use self::event::{
    AppliedSteerKind, ApprovalOutcome, CommandErrorCause, Event, EventError, EventLineError,
    EventReadError, EventReader, JobEventKind, JobRecord, JobState, JobStopOutcome, JsonText,
    PredictionOutcome, Refusal, SubrunFinishedBuilder, SubrunStatus, Usage, WorkflowStartedBuilder,
};
pub use self::image::{Image, ImageError, MAX_BASE64_LEN, MAX_IMAGE_BYTES};
pub use crate::v1::SteerKind;

crate::revision::face!("v2");
