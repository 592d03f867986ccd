//! The codec for the command half of the `serve` protocol.
//!
//! A controller (a TUI, a desktop app, a script) writes one JSON command per
//! line to an agent engine's stdin; the engine decodes each line into a
//! command, or answers an unreadable one with a `command_error` event. This
//! crate writes those lines for controllers and reads them for engines,
//! byte for byte as the protocol's reference implementation does, with the
//! reference's error strings.
//!
//! The protocol has two revisions, and the wire does not say which one a
//! line belongs to: both ends agree on one. Each is a module with the same
//! names in it; pick one and use only it.
//! - [`v2`]: today's protocol, which upstream openseek speaks: content parts
//!   with images, tagged steers, background job commands.
//! - [`v1`]: the seed's revision, every message a string `text`.
//!
//! ```
//! use serve_command::v2::{Command, CommandReader};
//!
//! // An engine reads its stdin...
//! let stdin = &b"{\"command\":\"prompt\",\"content\":\"fix the build\"}\n{\"command\":\"nap\"}\n"[..];
//! let mut replies = String::new();
//! for item in CommandReader::new(stdin) {
//!     match item {
//!         Ok(Command::Prompt { content, .. }) => assert_eq!(content.to_text(), "fix the build"),
//!         Ok(_) => {}
//!         Err(error) => replies.push_str(&error.event_line()),
//!     }
//! }
//! assert_eq!(replies, "{\"event\":\"command_error\",\"error\":\"unknown command: nap\"}\n");
//!
//! // ...which a controller wrote.
//! let line = Command::Prompt { content: "fix the build".into(), submission_id: None }.to_line();
//! assert_eq!(line, "{\"command\":\"prompt\",\"content\":\"fix the build\"}\n");
//! ```
#![forbid(unsafe_code)]
// docs.rs (Cargo.toml: `--cfg docsrs`, nightly): "Available on crate feature
// ... only" on every feature-gated item, derived from its `#[cfg]`.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(missing_docs)]

// The file list is the architecture: `wire/` is what every revision shares
// (scanning, escaping, framing, reading), `v1/` and `v2/` are the two
// revisions, each a complete face over it, and data flows down:
// revision -> wire -> error.
mod error;
mod revision;
pub mod shell;
pub mod v1;
pub mod v2;
mod wire;

/// The machinery every revision shares, generic over the revision: for code
/// that handles either one (a CLI, a proxy, a test harness).
///
/// An engine or a controller speaks one revision and uses its module,
/// [`v2`] or [`v1`], whose `CommandReader`, `CommandCodec`, `LineError`
/// and `ReadError` are these types with the revision filled in. Here the
/// revision is a type parameter, [`Revision`](crate::generic::Revision), with no default: a reader
/// of the wrong revision cannot be written without naming it.
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
    pub use crate::revision::Revision;
    #[cfg(feature = "tokio")]
    pub use crate::wire::codec::CommandCodec;
    pub use crate::wire::read::{CommandReader, DEFAULT_MAX_LINE_LEN};
}

// The names the crate root had before each revision became a module of its
// own, kept as uninhabited stubs: a path that names no revision fails to
// compile (nothing can be built from an empty enum) with a deprecation note
// saying which paths to use instead.
macro_rules! name_a_revision {
    ($($name:ident)*) => {$(
        #[doc(hidden)]
        #[deprecated = concat!(
            "name a revision: `serve_command::v2::", stringify!($name),
            "` (today's protocol) or `serve_command::v1::", stringify!($name), "` (the seed's)"
        )]
        pub enum $name {}
    )*};
}
name_a_revision!(Command SteerKind ParseError LineError ReadError CommandReader CommandCodec);

/// A path that names no revision does not compile:
///
/// ```compile_fail,E0599
/// #![allow(deprecated)]
/// let reader = serve_command::CommandReader::new(&b""[..]);
/// ```
///
/// ```compile_fail,E0599
/// #![allow(deprecated)]
/// let cmd = serve_command::Command::Cancel;
/// ```
///
/// ```compile_fail,E0283
/// // The generic reader wants its revision named too.
/// let reader = serve_command::generic::CommandReader::new(&b""[..]);
/// for item in reader {
///     let _ = item;
/// }
/// ```
#[cfg(doctest)]
struct NoDefaultRevision;

// The README's examples are tested with the rest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
