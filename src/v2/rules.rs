//! The later revision's decoding rules, written once.
//!
//! Every decoding path (bytes, `serde_json::Value`, `Deserialize`) reduces
//! its input to [`Fields`]: each flat key to a [`Slot`], and the two keys
//! read inside, `content` and `images`, item by item through their
//! [`ArrayField`] impls here (each item classified as it comes, the list
//! cut at the first item the rules refuse). Then [`decide`] applies the
//! reference's arms (`latest/upstream/command.mbt`, `content.mbt`). No other
//! file knows the arms or builds a content error's path.

use crate::refusal::Refusal;
use crate::v1::rules as v1;
use crate::v2::{Command, Content, ContentPart, Image, ParseError, SteerKind};
use crate::wire::fields::{ArrayField, Field, FieldSet, Item, KeyTable, NoFields, Slot, WireStr};
use std::mem;

/// The revision's keys, as found in one object (the last duplicate wins).
pub(crate) struct Fields<S> {
    /// A slot per [`Key`], in its order. `content` (and `images`) when it
    /// is not an array; absent when it is one (then `arrays` holds it) or
    /// when the key is.
    slots: [Slot<S>; Key::ALL.len()],
    /// The items of `content` and `images`, once either has been an
    /// array: on the common line, which has neither, one word to write
    /// and one to test when the fields are dropped (two lists held apart
    /// cost it 7 instructions).
    arrays: Option<Arrays<S>>,
}

/// The items of the two array keys.
pub(crate) struct Arrays<S> {
    parts: PartList<S>,
    urls: UrlList<S>,
}

impl<S> Arrays<S> {
    fn new() -> Self {
        Arrays {
            parts: PartList::new(),
            urls: UrlList::NotGiven,
        }
    }
}

/// The keys the rules read; every other key is ignored. The two read
/// inside when they are arrays come last.
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
    /// Every key, in the order of its discriminant.
    const ALL: [Key; 13] = [
        Key::Command,
        Key::Text,
        Key::SubmissionId,
        Key::Kind,
        Key::Action,
        Key::Auto,
        Key::Id,
        Key::Allow,
        Key::RequestId,
        Key::Generation,
        Key::JobId,
        Key::Content,
        Key::Images,
    ];

    /// Their names, in the same order.
    pub(crate) const NAME_LIST: [&'static str; 13] = [
        "command",
        "text",
        "submission_id",
        "kind",
        "action",
        "auto",
        "id",
        "allow",
        "request_id",
        "generation",
        "job_id",
        "content",
        "images",
    ];

    /// [`Key::NAME_LIST`], each found by one lookup.
    const NAMES: KeyTable = KeyTable::new(&Key::NAME_LIST);

    #[inline]
    pub fn from_bytes(key: &[u8]) -> Option<Key> {
        Key::ALL.get(Key::NAMES.find(key)?).copied()
    }
}

impl<S: WireStr> Fields<S> {
    pub fn new() -> Self {
        Fields {
            // Written out, not `[const { Slot::Absent }; N]`: that is
            // built whole and copied in, where this writes each tag.
            slots: [
                Slot::Absent,
                Slot::Absent,
                Slot::Absent,
                Slot::Absent,
                Slot::Absent,
                Slot::Absent,
                Slot::Absent,
                Slot::Absent,
                Slot::Absent,
                Slot::Absent,
                Slot::Absent,
                Slot::Absent,
                Slot::Absent,
            ],
            arrays: None,
        }
    }

    /// Where a known key's value goes, an array key's items included.
    #[inline]
    pub fn field_of(&mut self, key: Key) -> Field<'_, S, Items<'_, S>> {
        let Fields { slots, arrays } = self;
        match key {
            Key::Content => Field::Array {
                value: &mut slots[Key::Content as usize],
                items: &mut arrays.get_or_insert_with(Arrays::new).parts,
            },
            Key::Images => Field::Array {
                value: &mut slots[Key::Images as usize],
                items: &mut arrays.get_or_insert_with(Arrays::new).urls,
            },
            _ => Field::Flat(&mut slots[key as usize]),
        }
    }

    /// Where the value of the key at `index` in [`Key::ALL`] goes, an
    /// array key named by its index (for [`FieldSet::items`]).
    #[inline(always)]
    fn field_at(&mut self, index: usize) -> Option<Field<'_, S, usize>> {
        Some(
            if index == Key::Content as usize || index == Key::Images as usize {
                Field::Array {
                    value: &mut self.slots[index],
                    items: index,
                }
            } else {
                Field::Flat(self.slots.get_mut(index)?)
            },
        )
    }
}

/// The items of an array key, as [`Fields::field_of`] gives them.
pub(crate) type Items<'f, S> = &'f mut dyn ArrayField<S, PartFields<S>>;

impl<S: WireStr> FieldSet<S> for Fields<S> {
    const MAX_KEY_LEN: usize = "submission_id".len();
    type Item = PartFields<S>;

    #[inline]
    fn item() -> PartFields<S> {
        PartFields::new()
    }

    // Inlined into the scan loop: the field's kind is two compares of the
    // key's index, not a returned enum.
    #[inline(always)]
    fn field(&mut self, key: &[u8]) -> Option<Field<'_, S, usize>> {
        self.field_at(Key::NAMES.find(key)?)
    }

    /// `images`' URLs, or else (`content`) its parts.
    fn items(&mut self, which: usize) -> &mut dyn ArrayField<S, PartFields<S>> {
        let arrays = self.arrays.get_or_insert_with(Arrays::new);
        if which == Key::Images as usize {
            &mut arrays.urls
        } else {
            &mut arrays.parts
        }
    }
}

/// The keys of a content part object.
pub(crate) struct PartFields<S> {
    pub kind: Slot<S>,
    pub text: Slot<S>,
    pub media_type: Slot<S>,
    pub data: Slot<S>,
    /// The bytes of `data`, when the line scanner decoded them as it
    /// found the string ([`Field::Decoded`]); `None` when they are still to
    /// decode.
    pub decoded: Option<Vec<u8>>,
}

impl<S> PartFields<S> {
    pub const fn new() -> Self {
        PartFields {
            kind: Slot::Absent,
            text: Slot::Absent,
            media_type: Slot::Absent,
            data: Slot::Absent,
            decoded: None,
        }
    }

    /// The keys of a part the rules read (`text` is also a command key).
    pub(crate) const NAME_LIST: [&'static str; 4] = ["type", "text", "media_type", "data"];

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
    fn field(&mut self, key: &[u8]) -> Option<Field<'_, S, usize>> {
        if key == b"data" {
            // The scanner decodes plain base64 as it finds it, which proves
            // the string plain without its own scan of the string.
            return Some(Field::Decoded {
                value: &mut self.data,
                decoded: &mut self.decoded,
                decode: Image::decode_plain,
            });
        }
        self.slot(key).map(Field::Flat)
    }
}

/// An array `content`'s parts, kept up to the first one the rules refuse,
/// and that one's error; `None` when no array was given.
pub(crate) struct PartList<S>(Option<(Vec<Part<S>>, Option<PartError>)>);

impl<S> PartList<S> {
    /// No array given (yet).
    pub(crate) const fn new() -> Self {
        PartList(None)
    }
}

/// A part whose shape is right; an image's data is checked by `decide`
/// (`decoded` is its bytes if the scanner decoded them already).
pub(crate) enum Part<S> {
    Text(S),
    Image {
        media_type: S,
        data: S,
        decoded: Option<Vec<u8>>,
    },
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
            Ok(Part::Image {
                media_type,
                data,
                decoded: p.decoded,
            })
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
    /// The reference's `JsonDecodeError` for the part at `path` (`/0` for
    /// the first part of `content`, `""` for a part on its own).
    fn at(self, path: String) -> ParseError {
        match self {
            PartError::NotObject => invalid_content(path, "expected content part object"),
            PartError::UnknownType => invalid_content(path + "/type", "unknown content part type"),
            PartError::NotString(field) => invalid_content(
                format!("{path}/{field}"),
                "String::from_json: expected string",
            ),
        }
    }
}

/// A part whose shape is right, with its image decoded; the error at
/// `path`, as [`PartError::at`].
fn decode_part<S: WireStr>(
    p: Part<S>,
    path: impl FnOnce() -> String,
) -> Result<ContentPart, ParseError> {
    Ok(match p {
        Part::Text(text) => ContentPart::Text(text.into_string()),
        Part::Image {
            media_type,
            data,
            decoded,
        } => ContentPart::Image(
            match decoded {
                // The string's base64, decoded by the scan: the rest of
                // `from_base64`'s checks.
                Some(bytes) => Image::from_decoded(&media_type.as_text(), bytes),
                None => Image::from_base64_utf8(&media_type.as_text(), &data.as_utf8()),
            }
            .map_err(|e| invalid_content(path(), format!("invalid image: {e}")))?,
        ),
    })
}

/// The value of a present `content` key: a string (in `value`), an array
/// (in `parts`), or another value. `None` when the key is absent.
#[inline(always)]
fn content_value<S: WireStr>(
    value: &mut Slot<S>,
    parts: Option<&mut PartList<S>>,
) -> Option<Result<Content, ParseError>> {
    match value.take() {
        Slot::Str(text) => return Some(Ok(Content::from(text.into_string()))),
        // Absent, or an array (in `parts`).
        Slot::Absent => {}
        _ => {
            return Some(Err(invalid_content(
                String::new(),
                "expected content string or array",
            )))
        }
    }
    let (parts, refused) = parts?.0.take()?;
    let mut out = Vec::with_capacity(parts.len());
    for (index, p) in parts.into_iter().enumerate() {
        match decode_part(p, || format!("/{index}")) {
            Ok(part) => out.push(part),
            Err(e) => return Some(Err(e)),
        }
    }
    Some(match refused {
        // Every kept part came before it, and was good.
        Some(e) => Err(e.at(format!("/{}", out.len()))),
        None => Ok(Content::new(out)),
    })
}

/// A `content` value on its own (`Content`'s `Deserialize`), reduced as
/// the key's value is: the rules of a present `content` key.
pub(crate) fn content_alone<S: WireStr>(
    mut value: Slot<S>,
    mut parts: PartList<S>,
) -> Result<Content, ParseError> {
    // Neither a value nor an array: nothing the wire could hold.
    content_value(&mut value, Some(&mut parts)).unwrap_or_else(|| {
        Err(invalid_content(
            String::new(),
            "expected content string or array",
        ))
    })
}

/// A content part on its own (`ContentPart`'s `Deserialize`): the rules of
/// an item of `content`, its path relative to the part.
pub(crate) fn part_alone<S: WireStr>(
    item: Item<S, PartFields<S>>,
) -> Result<ContentPart, ParseError> {
    let p = part(item).map_err(|e| e.at(String::new()))?;
    decode_part(p, String::new)
}

/// The reference's `parse_command_content`: `content` if present (never
/// falling back when it is malformed), else the legacy `text` and `images`.
/// Reads only the fields it needs, where the scan left them.
#[inline(always)]
fn content<S: WireStr>(
    content: &mut Slot<S>,
    arrays: &mut Option<Arrays<S>>,
    text: &mut Slot<S>,
    images: &mut Slot<S>,
) -> Result<Content, ParseError> {
    if let Some(content) = content_value(content, arrays.as_mut().map(|a| &mut a.parts)) {
        return content;
    }
    let text = text.take().string().ok_or(ParseError::ExpectedText)?;
    let urls = arrays.as_mut().map_or(UrlList::NotGiven, |a| {
        mem::replace(&mut a.urls, UrlList::NotGiven)
    });
    // The whole list is read as strings before any URL is decoded.
    let urls = match (images.take(), urls) {
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
// Inlined into each path (`from_slice` above all): called, v2's cost
// about 10 ns more per line than its instructions account for (the
// command and the fields crossed the call through memory), even on a line
// both revisions read alike (`compact`: 21 ns in v1, 32 ns in v2).
//
// Unlike v1's, it returns its own error type: made generic over the
// caller's, it built a steer through an unaligned temporary (a stall in
// its place; v2's small lines 3% slower, 8% with the fields computed
// before the command), where re-wrapped its result is not copied.
#[inline(always)]
pub(crate) fn decide<S: WireStr>(f: &mut Fields<S>) -> Result<Command, ParseError> {
    let Fields { slots, arrays } = f;
    let [command, text, submission_id, kind, action, auto, id, allow, request, generation, job_id, content_slot, images] =
        slots;
    // Compared where the scan left it, not moved out: moved, its padding
    // went along, a few instructions every line.
    let Slot::Str(name) = &*command else {
        return Err(ParseError::ExpectedCommand);
    };
    if name.is("prompt") {
        // Content first, then the tag.
        let content = content(content_slot, arrays, text, images)?;
        Ok(Command::Prompt {
            content,
            submission_id: v1::submission_id(submission_id.take())?,
        })
    } else if name.is("steer") {
        // Here the tag comes first, then content, then the kind.
        let submission_id = v1::submission_id(submission_id.take())?;
        let content = content(content_slot, arrays, text, images)?;
        Ok(Command::Steer {
            kind: v1::steer_kind(kind)?,
            content,
            submission_id,
        })
    } else if name.is("compact") {
        Ok(Command::Compact)
    } else if name.is("cancel") {
        Ok(Command::Cancel)
    } else if name.is("goal") {
        // Unchanged since the seed's revision: its arm, for this `Command`.
        Ok(goal(action.take(), text.take(), auto.take())?)
    } else if name.is("approval") {
        Ok(approval(id.take(), allow.take())?)
    } else if name.is("jobs_snapshot") {
        // The job commands last: the seed's come far more often.
        let request_id = request_id(request.take()).ok_or(ParseError::InvalidJobCommand)?;
        Ok(Command::JobsSnapshot { request_id })
    } else if name.is("job_stop") {
        match (
            request_id(request.take()),
            component(generation.take()),
            component(job_id.take()),
        ) {
            (Some(request_id), Some(generation), Some(job_id)) => Ok(Command::JobStop {
                request_id,
                generation,
                job_id,
            }),
            _ => Err(ParseError::InvalidJobCommand),
        }
    } else {
        Err(ParseError::UnknownCommand(name.as_text().into_owned()))
    }
}

// The seed's `goal` and `approval` arms, building this revision's command;
// inlined, so it never crosses a call through memory.
v1::seed_arms!(#[inline(always)]);

/// The engine's refusals (`Command::serve_refusal`): written here, beside
/// the rules whose commands they refuse.
impl Command {
    /// What the engine (`openseek serve`) answers this command with instead
    /// of running it, if it refuses it; `None` for every other command:
    ///
    /// - a `steer` of kind `command` whose content holds an image part:
    ///   `command steering does not accept images` (the legacy `text` with
    ///   `images` too, which decodes to such content; an empty `images`
    ///   array or text-only parts are not refused, nor a `prompt` steer or
    ///   a `prompt` with images);
    /// - a `goal` `set` whose text is blank: `goal text must not be blank`,
    ///   v1's rule ([`crate::v1::Command::serve_refusal`]):
    ///   empty, or only tab, LF, CR and space.
    ///
    /// Not parse errors: the line is a well-formed command, which
    /// [`Command::from_slice`] returns, and the engine declines it after
    /// decoding (`decode_serve_command` in upstream's serve/state.mbt @
    /// ebbe0e00). It answers exactly as it answers a parse error, with a
    /// `command_error` event carrying the message:
    /// [`Command::serve_refusal_event_line`].
    ///
    /// ```
    /// use serve_command::v2::{Command, Refusal};
    /// let legacy = Command::from_slice(br#"{"command":"steer","kind":"command","text":"ls","images":["data:image/png;base64,iVBORw0KGgo="]}"#)?;
    /// assert_eq!(legacy.serve_refusal(), Some(Refusal::CommandSteerImage));
    /// assert_eq!(Refusal::CommandSteerImage.as_str(), "command steering does not accept images");
    /// let empty = Command::from_slice(br#"{"command":"steer","kind":"command","text":"ls","images":[]}"#)?;
    /// assert_eq!(empty.serve_refusal(), None);
    /// let goal = Command::from_slice(br#"{"command":"goal","action":"set","text":"\t"}"#)?;
    /// assert_eq!(goal.serve_refusal(), Some(Refusal::BlankGoal));
    /// assert_eq!(Command::goal_set_auto("\u{3000}").serve_refusal(), None);
    /// # Ok::<(), serve_command::v2::LineError>(())
    /// ```
    #[must_use]
    pub fn serve_refusal(&self) -> Option<Refusal> {
        match self {
            Command::Steer {
                kind: SteerKind::Command,
                content,
                ..
            } if !content.is_text_only() => Some(Refusal::CommandSteerImage),
            Command::GoalSet { text, .. } => v1::goal_refusal(text),
            _ => None,
        }
    }

    /// The `command_error` event the engine writes for a command it
    /// refuses ([`Command::serve_refusal`]), LF included: the same event
    /// as [`LineError::event_line`](crate::generic::LineError::event_line)
    /// writes for a line that is not a command. `None` when the engine runs
    /// the command.
    ///
    /// ```
    /// use serve_command::v2::{Command, ContentPart, Image, SteerKind};
    /// let png = Image::from_data_url("data:image/png;base64,iVBORw0KGgo=")?;
    /// let steer = Command::steer(SteerKind::Command, vec![ContentPart::Text("ls".into()), ContentPart::Image(png)]);
    /// assert_eq!(
    ///     steer.serve_refusal_event_line().as_deref(),
    ///     Some("{\"event\":\"command_error\",\"error\":\"command steering does not accept images\"}\n"),
    /// );
    /// assert_eq!(Command::Cancel.serve_refusal_event_line(), None);
    /// # Ok::<(), serve_command::v2::ImageError>(())
    /// ```
    #[must_use]
    pub fn serve_refusal_event_line(&self) -> Option<String> {
        self.serve_refusal()
            .map(|refusal| crate::wire::escape::event_line(refusal.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::scan;

    /// What the line scanner leaves of an image part's `data`: its bytes,
    /// decoded as it was found, when it is plain canonical base64 (the last
    /// duplicate's); `None`, for the rules to decode after unescaping,
    /// otherwise. (The verdicts are the same either way: tests/v2_images.rs.)
    #[test]
    fn the_scan_decodes_plain_base64_only() {
        let png: &[u8] = b"\x89PNG\r\n\x1a\n";
        for (data, want) in [
            (r#""iVBORw0KGgo=""#, Some(png)),
            (r#" "iVBORw0KGgo=" "#, Some(png)),
            (r#""iVBORw0KGgo\u003d""#, None),
            (r#""\/9j\/""#, None),
            (r#""iVBORw0KGgo""#, None),
            (r#""""#, Some(&b""[..])),
            (r#""/9j/","data":"iVBORw0KGgo""#, None),
            (r#""iVBORw0KGgo","data":"/9j/""#, Some(b"\xff\xd8\xff")),
            (r#"7,"data":"/9j/""#, Some(b"\xff\xd8\xff")),
        ] {
            let line = format!(
                r#"{{"command":"prompt","content":[{{"type":"image","media_type":"image/png","data":{data}}}]}}"#
            );
            let mut fields = Fields::new();
            assert!(matches!(scan::scan(line.as_bytes(), &mut fields), Ok(true)));
            match fields.arrays.take().and_then(|a| a.parts.0) {
                Some((parts, None)) => match parts.as_slice() {
                    [Part::Image { decoded, .. }] => {
                        assert_eq!(decoded.as_deref(), want, "{line}");
                    }
                    _ => panic!("{line}"),
                },
                _ => panic!("{line}"),
            }
        }
    }
}
