//! The later revision's decoding rules, written once.
//!
//! Every decoding path (bytes, `serde_json::Value`, `Deserialize`) reduces
//! its input to [`Fields`]: each flat key to a [`Slot`], and the two keys
//! read inside, `content` and `images`, item by item through their
//! [`ArrayField`] impls here (each item classified as it comes, the list
//! cut at the first item the rules refuse). Then [`decide`] applies the
//! reference's arms (`latest/upstream/command.mbt`, `content.mbt`). No other
//! file knows the arms or builds a content error's path.

use crate::v1::rules as v1;
use crate::v2::{Command, Content, ContentPart, Image, ParseError, SteerKind};
use crate::wire::fields::{ArrayField, Field, FieldSet, Item, NoFields, Slot, WireStr};
use std::mem;

/// The revision's keys, as found in one object (the last duplicate wins).
pub(crate) struct Fields<S> {
    pub command: Slot<S>,
    pub text: Slot<S>,
    pub submission_id: Slot<S>,
    pub kind: Slot<S>,
    pub action: Slot<S>,
    pub auto: Slot<S>,
    pub id: Slot<S>,
    pub allow: Slot<S>,
    pub request_id: Slot<S>,
    pub generation: Slot<S>,
    pub job_id: Slot<S>,
    /// `content` when it is not an array; absent when it is one (then
    /// `parts` holds it) or when the key is.
    pub content: Slot<S>,
    pub parts: PartList<S>,
    /// `images` when it is not an array, as `content`.
    pub images: Slot<S>,
    pub urls: UrlList<S>,
}

/// The keys the rules read; every other key is ignored.
#[derive(Clone, Copy)]
pub(crate) enum Key {
    Command,
    Text,
    SubmissionId,
    Kind,
    Action,
    Auto,
    Id,
    Allow,
    RequestId,
    Generation,
    JobId,
    Content,
    Images,
}

impl Key {
    #[inline]
    pub fn from_bytes(key: &[u8]) -> Option<Key> {
        Some(match key {
            b"command" => Key::Command,
            b"text" => Key::Text,
            b"submission_id" => Key::SubmissionId,
            b"kind" => Key::Kind,
            b"action" => Key::Action,
            b"auto" => Key::Auto,
            b"id" => Key::Id,
            b"allow" => Key::Allow,
            b"request_id" => Key::RequestId,
            b"generation" => Key::Generation,
            b"job_id" => Key::JobId,
            b"content" => Key::Content,
            b"images" => Key::Images,
            _ => return None,
        })
    }
}

impl<S: WireStr> Fields<S> {
    pub fn new() -> Self {
        Fields {
            command: Slot::Absent,
            text: Slot::Absent,
            submission_id: Slot::Absent,
            kind: Slot::Absent,
            action: Slot::Absent,
            auto: Slot::Absent,
            id: Slot::Absent,
            allow: Slot::Absent,
            request_id: Slot::Absent,
            generation: Slot::Absent,
            job_id: Slot::Absent,
            content: Slot::Absent,
            parts: PartList(None),
            images: Slot::Absent,
            urls: UrlList::NotGiven,
        }
    }

    /// Where a known key's value goes.
    #[inline]
    pub fn field_of(&mut self, key: Key) -> Field<'_, S, PartFields<S>> {
        Field::Flat(match key {
            Key::Command => &mut self.command,
            Key::Text => &mut self.text,
            Key::SubmissionId => &mut self.submission_id,
            Key::Kind => &mut self.kind,
            Key::Action => &mut self.action,
            Key::Auto => &mut self.auto,
            Key::Id => &mut self.id,
            Key::Allow => &mut self.allow,
            Key::RequestId => &mut self.request_id,
            Key::Generation => &mut self.generation,
            Key::JobId => &mut self.job_id,
            Key::Content => {
                return Field::Array {
                    value: &mut self.content,
                    items: &mut self.parts,
                }
            }
            Key::Images => {
                return Field::Array {
                    value: &mut self.images,
                    items: &mut self.urls,
                }
            }
        })
    }
}

impl<S: WireStr> FieldSet<S> for Fields<S> {
    const MAX_KEY_LEN: usize = "submission_id".len();
    type Item = PartFields<S>;

    #[inline]
    fn item() -> PartFields<S> {
        PartFields::new()
    }

    // Inlined into the scan loop: the field's kind is a jump, not a
    // returned enum.
    #[inline(always)]
    fn field(&mut self, key: &[u8]) -> Option<Field<'_, S, PartFields<S>>> {
        Key::from_bytes(key).map(|key| self.field_of(key))
    }
}

/// The keys of a content part object.
pub(crate) struct PartFields<S> {
    pub kind: Slot<S>,
    pub text: Slot<S>,
    pub media_type: Slot<S>,
    pub data: Slot<S>,
}

impl<S> PartFields<S> {
    pub const fn new() -> Self {
        PartFields {
            kind: Slot::Absent,
            text: Slot::Absent,
            media_type: Slot::Absent,
            data: Slot::Absent,
        }
    }

    #[inline]
    pub fn slot(&mut self, key: &[u8]) -> Option<&mut Slot<S>> {
        Some(match key {
            b"type" => &mut self.kind,
            b"text" => &mut self.text,
            b"media_type" => &mut self.media_type,
            b"data" => &mut self.data,
            _ => return None,
        })
    }
}

impl<S> FieldSet<S> for PartFields<S> {
    const MAX_KEY_LEN: usize = "media_type".len();
    type Item = NoFields;

    #[inline]
    fn item() -> NoFields {
        NoFields
    }

    #[inline]
    fn field(&mut self, key: &[u8]) -> Option<Field<'_, S, NoFields>> {
        self.slot(key).map(Field::Flat)
    }
}

/// An array `content`'s parts, kept up to the first one the rules refuse,
/// and that one's error; `None` when no array was given.
pub(crate) struct PartList<S>(Option<(Vec<Part<S>>, Option<PartError>)>);

/// A part whose shape is right; an image's data is checked by `decide`.
pub(crate) enum Part<S> {
    Text(S),
    Image { media_type: S, data: S },
}

/// Why an item of `content` is not a part (before its image is decoded).
#[derive(Clone, Copy)]
pub(crate) enum PartError {
    NotObject,
    UnknownType,
    /// The field (`text`, `media_type` or `data`) is absent or not a string.
    NotString(&'static str),
}

/// The reference's `ContentPart::from_json`, up to the image's bytes.
fn part<S: WireStr>(item: Item<S, PartFields<S>>) -> Result<Part<S>, PartError> {
    let Item::Object(p) = item else {
        return Err(PartError::NotObject);
    };
    match p.kind {
        Slot::Str(t) if t.is("text") => match p.text {
            Slot::Str(text) => Ok(Part::Text(text)),
            _ => Err(PartError::NotString("text")),
        },
        Slot::Str(t) if t.is("image") => {
            // `media_type` is read before `data`.
            let media_type = p
                .media_type
                .string()
                .ok_or(PartError::NotString("media_type"))?;
            let data = p.data.string().ok_or(PartError::NotString("data"))?;
            Ok(Part::Image { media_type, data })
        }
        // Absent, not a string, or another string.
        _ => Err(PartError::UnknownType),
    }
}

impl<S: WireStr> ArrayField<S, PartFields<S>> for PartList<S> {
    fn begin(&mut self) {
        self.0 = Some((Vec::new(), None));
    }

    #[inline]
    fn wants_more(&self) -> bool {
        matches!(self.0, Some((_, None)))
    }

    fn item(&mut self, item: Item<S, PartFields<S>>) {
        if let Some((parts, refused)) = &mut self.0 {
            match part(item) {
                Ok(p) => parts.push(p),
                // The first refused part: its index is `parts.len()`.
                Err(e) => *refused = Some(e),
            }
        }
    }
}

/// An array `images`: its URLs, or that it is not an array of strings.
pub(crate) enum UrlList<S> {
    NotGiven,
    Urls(Vec<S>),
    NotUrls,
}

impl<S, O> ArrayField<S, O> for UrlList<S> {
    fn begin(&mut self) {
        *self = UrlList::Urls(Vec::new());
    }

    #[inline]
    fn wants_more(&self) -> bool {
        matches!(self, UrlList::Urls(_))
    }

    fn item(&mut self, item: Item<S, O>) {
        match (item, &mut *self) {
            (Item::Value(Slot::Str(url)), UrlList::Urls(urls)) => urls.push(url),
            _ => *self = UrlList::NotUrls,
        }
    }
}

/// A JSON value that is not an object: no fields, so no command.
#[inline]
pub(crate) fn not_an_object() -> ParseError {
    ParseError::ExpectedCommand
}

fn invalid_content(path: String, message: impl Into<String>) -> ParseError {
    ParseError::InvalidContent {
        path,
        message: message.into(),
    }
}

impl PartError {
    /// The reference's `JsonDecodeError` for the part at `index`.
    fn at(self, index: usize) -> ParseError {
        match self {
            PartError::NotObject => {
                invalid_content(format!("/{index}"), "expected content part object")
            }
            PartError::UnknownType => {
                invalid_content(format!("/{index}/type"), "unknown content part type")
            }
            PartError::NotString(field) => invalid_content(
                format!("/{index}/{field}"),
                "String::from_json: expected string",
            ),
        }
    }
}

/// The reference's `parse_command_content`: `content` if present (never
/// falling back when it is malformed), else the legacy `text` and `images`.
/// Reads only the fields it needs, where the scan left them.
#[inline(always)]
fn content<S: WireStr>(f: &mut Fields<S>) -> Result<Content, ParseError> {
    match take(&mut f.content) {
        Slot::Str(text) => return Ok(Content::from(text.into_string())),
        // Absent, or an array (in `parts`).
        Slot::Absent => {}
        _ => {
            return Err(invalid_content(
                String::new(),
                "expected content string or array",
            ))
        }
    }
    if let Some((parts, refused)) = f.parts.0.take() {
        let mut out = Vec::with_capacity(parts.len());
        for (index, p) in parts.into_iter().enumerate() {
            out.push(match p {
                Part::Text(text) => ContentPart::Text(text.into_string()),
                Part::Image { media_type, data } => ContentPart::Image(
                    Image::from_base64_utf8(&media_type.as_text(), &data.as_utf8()).map_err(
                        |e| invalid_content(format!("/{index}"), format!("invalid image: {e}")),
                    )?,
                ),
            });
        }
        return match refused {
            // Every kept part came before it, and was good.
            Some(e) => Err(e.at(out.len())),
            None => Ok(Content::new(out)),
        };
    }
    let text = take(&mut f.text).string().ok_or(ParseError::ExpectedText)?;
    // The whole list is read as strings before any URL is decoded.
    let urls = match (
        take(&mut f.images),
        mem::replace(&mut f.urls, UrlList::NotGiven),
    ) {
        (Slot::Absent, UrlList::NotGiven) => Vec::new(),
        (Slot::Absent, UrlList::Urls(urls)) => urls,
        // Not an array, or not of strings.
        _ => return Err(ParseError::ExpectedImageUrls),
    };
    let mut content = Content::from(text.into_string());
    for url in urls {
        content.push(ContentPart::Image(Image::from_data_url(&url.as_text())?));
    }
    Ok(content)
}

/// The slot's value, leaving it absent.
#[inline(always)]
fn take<S>(slot: &mut Slot<S>) -> Slot<S> {
    mem::replace(slot, Slot::Absent)
}

/// The reference's `valid_job_component`. Its length is in UTF-16 units,
/// which for the ASCII it allows is the byte length.
pub(crate) fn valid_job_component(value: &str) -> bool {
    !value.is_empty()
        && value != "."
        && value != ".."
        && value.len() <= 200
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
}

/// A non-empty string `request_id`.
fn request_id<S: WireStr>(slot: Slot<S>) -> Option<String> {
    match slot {
        Slot::Str(id) if !id.is("") => Some(id.into_string()),
        _ => None,
    }
}

/// A valid job component.
fn component<S: WireStr>(slot: Slot<S>) -> Option<String> {
    match slot {
        Slot::Str(s) if valid_job_component(&s.as_text()) => Some(s.into_string()),
        _ => None,
    }
}

/// The reference's `Command::parse`, arm for arm.
///
/// Takes the fields by reference: they are read where the scan left them,
/// not copied (the struct is a few hundred bytes).
pub(crate) fn decide<S: WireStr>(f: &mut Fields<S>) -> Result<Command, ParseError> {
    let Some(name) = take(&mut f.command).string() else {
        return Err(ParseError::ExpectedCommand);
    };
    if name.is("prompt") {
        // Content first, then the tag.
        let content = content(f)?;
        Ok(Command::Prompt {
            content,
            submission_id: v1::submission_id(take(&mut f.submission_id))?,
        })
    } else if name.is("steer") {
        // Here the tag comes first, then content, then the kind.
        let submission_id = v1::submission_id(take(&mut f.submission_id))?;
        let content = content(f)?;
        Ok(Command::Steer {
            kind: v1::steer_kind(take(&mut f.kind))?,
            content,
            submission_id,
        })
    } else if name.is("jobs_snapshot") {
        let request_id =
            request_id(take(&mut f.request_id)).ok_or(ParseError::InvalidJobCommand)?;
        Ok(Command::JobsSnapshot { request_id })
    } else if name.is("job_stop") {
        match (
            request_id(take(&mut f.request_id)),
            component(take(&mut f.generation)),
            component(take(&mut f.job_id)),
        ) {
            (Some(request_id), Some(generation), Some(job_id)) => Ok(Command::JobStop {
                request_id,
                generation,
                job_id,
            }),
            _ => Err(ParseError::InvalidJobCommand),
        }
    } else if name.is("compact") {
        Ok(Command::Compact)
    } else if name.is("cancel") {
        Ok(Command::Cancel)
    } else if name.is("goal") {
        // Unchanged since the seed's revision: its arm, converted.
        let goal = v1::goal(take(&mut f.action), take(&mut f.text), take(&mut f.auto))?;
        Ok(goal.into())
    } else if name.is("approval") {
        Ok(v1::approval(take(&mut f.id), take(&mut f.allow))?.into())
    } else {
        Err(ParseError::UnknownCommand(name.into_string()))
    }
}

/// The engine's message for a `command` steer whose content holds an image.
pub(crate) const COMMAND_STEER_IMAGES: &str = "command steering does not accept images";

/// `Command::serve_refusal`: the seed's blank goal, and a `command` steer
/// with an image part (legacy `images` included: they are parts by now).
/// Empty content and text-only content are not refused.
#[inline]
pub(crate) fn serve_refusal(command: &Command) -> Option<&'static str> {
    match command {
        Command::Steer {
            kind: SteerKind::Command,
            content,
            ..
        } if !content.is_text_only() => Some(COMMAND_STEER_IMAGES),
        Command::GoalSet { text, .. } => v1::goal_refusal(text),
        _ => None,
    }
}
