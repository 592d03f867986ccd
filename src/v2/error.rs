//! The later revision's wire strings: why a JSON line is not a command.

use crate::error::UnknownMessage;
use crate::v2::ImageError;
use std::fmt;
use std::str::FromStr;

/// A JSON line that is not a command the later revision can read.
///
/// `Display` is exactly the string the reference's `Command::parse` returns
/// (`latest/upstream/command.mbt`): v1's nine messages, and the new
/// ones for content, legacy image URLs and background job commands.
/// (`invalid prediction command` is gone with the prediction commands,
/// reconstructed from the API listing @ fdf10827: `predict` is an
/// [`UnknownCommand`](ParseError::UnknownCommand) now.)
///
/// ```
/// use serve_command::v2::{Command, ParseError};
/// let v = serde_json::json!({"command": "prompt", "content": [{"type": "video"}]});
/// let err = Command::from_json(&v).unwrap_err();
/// assert_eq!(
///     err,
///     ParseError::InvalidContent { path: "/0/type".into(), message: "unknown content part type".into() },
/// );
/// assert_eq!(err.to_string(), "invalid content: JsonDecodeError((/0/type, unknown content part type))");
/// assert_eq!(err.to_string().parse(), Ok(err));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ParseError {
    /// `prompt` or `steer` with neither `content` nor a string `text`.
    ExpectedText,
    /// `prompt` or `steer` whose `submission_id` is present but not a
    /// string (`null` included).
    ExpectedSubmissionId,
    /// `steer` whose `kind` is present but not a string (`null` included).
    ExpectedKind,
    /// `steer` whose `kind` is a string other than `"prompt"` or
    /// `"command"`. Holds the kind verbatim.
    UnknownSteerKind(String),
    /// `goal` that is neither `{"action":"set","text":<string>}` nor
    /// `{"action":"clear"}`.
    ExpectedGoal,
    /// `approval` without a string `id`.
    ExpectedId,
    /// `approval` with a string `id` but no boolean `allow`.
    ExpectedAllow,
    /// A string `command` that names no command. Holds the name verbatim.
    UnknownCommand(String),
    /// The JSON is not an object, or has no string `command` field.
    ExpectedCommand,
    /// A `content` that is not content, and where: the reference's
    /// `JsonDecodeError((path, message))`. `path` is `""` for the value
    /// itself, `/1` for its second part, `/1/media_type` for a field of it;
    /// `message` is `expected content string or array`, `expected content
    /// part object`, `unknown content part type`, `String::from_json:
    /// expected string`, or `invalid image: <the image error>`.
    InvalidContent {
        /// Where, as a JSON pointer into the `content` value.
        path: String,
        /// What.
        message: String,
    },
    /// A legacy `text` line whose `images` is not an array of strings.
    ExpectedImageUrls,
    /// A legacy `images` URL that is not an image; displays as the image
    /// error, verbatim.
    Image(ImageError),
    /// `jobs_snapshot` without a non-empty string `request_id`, or
    /// `job_stop` without that and a valid `generation` and `job_id`
    /// (1 to 200 of `[A-Za-z0-9._-]`, neither `.` nor `..`).
    InvalidJobCommand,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use crate::v1::error as shared;
        match self {
            ParseError::ExpectedText => f.write_str(shared::EXPECTED_TEXT),
            ParseError::ExpectedSubmissionId => f.write_str(shared::EXPECTED_SUBMISSION_ID),
            ParseError::ExpectedKind => f.write_str(shared::EXPECTED_KIND),
            ParseError::UnknownSteerKind(kind) => write!(f, "{}{kind}", shared::UNKNOWN_STEER_KIND),
            ParseError::ExpectedGoal => f.write_str(shared::EXPECTED_GOAL),
            ParseError::ExpectedId => f.write_str(shared::EXPECTED_ID),
            ParseError::ExpectedAllow => f.write_str(shared::EXPECTED_ALLOW),
            ParseError::UnknownCommand(name) => write!(f, "{}{name}", shared::UNKNOWN_COMMAND),
            ParseError::ExpectedCommand => f.write_str(shared::EXPECTED_COMMAND),
            ParseError::InvalidContent { path, message } => {
                write!(f, "invalid content: JsonDecodeError(({path}, {message}))")
            }
            ParseError::ExpectedImageUrls => f.write_str("expected an array of image URLs"),
            ParseError::Image(e) => fmt::Display::fmt(e, f),
            ParseError::InvalidJobCommand => f.write_str("invalid background job command"),
        }
    }
}

impl std::error::Error for ParseError {}

impl From<ImageError> for ParseError {
    fn from(e: ImageError) -> Self {
        ParseError::Image(e)
    }
}

/// v1's messages are this revision's too, unchanged: the arms the two
/// share are written once (in v1's rules), and their errors cross here.
impl From<crate::v1::ParseError> for ParseError {
    fn from(e: crate::v1::ParseError) -> Self {
        use crate::v1::ParseError as V1;
        match e {
            V1::ExpectedText => ParseError::ExpectedText,
            V1::ExpectedSubmissionId => ParseError::ExpectedSubmissionId,
            V1::ExpectedKind => ParseError::ExpectedKind,
            V1::UnknownSteerKind(kind) => ParseError::UnknownSteerKind(kind),
            V1::ExpectedGoal => ParseError::ExpectedGoal,
            V1::ExpectedId => ParseError::ExpectedId,
            V1::ExpectedAllow => ParseError::ExpectedAllow,
            V1::UnknownCommand(name) => ParseError::UnknownCommand(name),
            V1::ExpectedCommand => ParseError::ExpectedCommand,
        }
    }
}

impl FromStr for ParseError {
    type Err = UnknownMessage;

    /// The error a wire string names, for a controller reading
    /// `command_error` events: every message of this revision gives its
    /// variant back; anything else is an [`UnknownMessage`].
    ///
    /// # Errors
    ///
    /// [`UnknownMessage`], holding `message`, for a message that is none of
    /// this revision's.
    ///
    /// ```
    /// use serve_command::v2::{ImageError, ParseError};
    /// assert_eq!(
    ///     "invalid content: JsonDecodeError((/0/type, unknown content part type))".parse(),
    ///     Ok(ParseError::InvalidContent { path: "/0/type".into(), message: "unknown content part type".into() }),
    /// );
    /// assert_eq!("image exceeds the 5 MiB limit".parse(), Ok(ParseError::Image(ImageError::TooLarge)));
    /// ```
    fn from_str(message: &str) -> Result<ParseError, UnknownMessage> {
        // The seed's nine messages first: they are this revision's too.
        if let Ok(e) = message.parse::<crate::v1::ParseError>() {
            return Ok(e.into());
        }
        if let Some(inner) = message
            .strip_prefix("invalid content: JsonDecodeError((")
            .and_then(|m| m.strip_suffix("))"))
        {
            // A path holds no ", ": indices and the four part keys.
            let (path, what) = inner
                .split_once(", ")
                .ok_or_else(|| UnknownMessage::new(message))?;
            return Ok(ParseError::InvalidContent {
                path: path.to_owned(),
                message: what.to_owned(),
            });
        }
        if let Ok(image) = message.parse() {
            return Ok(ParseError::Image(image));
        }
        [ParseError::ExpectedImageUrls, ParseError::InvalidJobCommand]
            .into_iter()
            .find(|e| e.to_string() == message)
            .ok_or_else(|| UnknownMessage::new(message))
    }
}

impl FromStr for ImageError {
    type Err = UnknownMessage;

    /// The image error a message names.
    ///
    /// # Errors
    ///
    /// [`UnknownMessage`], holding `message`, for a message that is none of
    /// the four image errors'.
    ///
    /// ```
    /// use serve_command::v2::ImageError;
    /// assert_eq!(
    ///     "image declares image/jpeg but bytes identify image/png".parse(),
    ///     Ok(ImageError::MediaTypeMismatch { declared: "image/jpeg".into(), sniffed: "image/png".into() }),
    /// );
    /// ```
    fn from_str(message: &str) -> Result<ImageError, UnknownMessage> {
        if let Some((declared, sniffed)) = message
            .strip_prefix("image declares ")
            .and_then(|m| m.rsplit_once(" but bytes identify "))
        {
            // `sniffed` is always one of the four: the declared type may
            // hold anything, so the split is from the right.
            if ["image/png", "image/jpeg", "image/gif", "image/webp"].contains(&sniffed) {
                return Ok(ImageError::MediaTypeMismatch {
                    declared: declared.to_owned(),
                    sniffed: sniffed.to_owned(),
                });
            }
        }
        [
            ImageError::TooLarge,
            ImageError::InvalidBase64,
            ImageError::UnsupportedFormat,
        ]
        .into_iter()
        .find(|e| e.to_string() == message)
        .ok_or_else(|| UnknownMessage::new(message))
    }
}
