//! What a `prompt` or `steer` says: an ordered list of text and image parts
//! (the reference's `content.mbt`).

use crate::v2::Image;

/// One part of a message's content.
///
/// Made from a string (a text part) or an [`Image`] with `From`, so a
/// message of parts is one expression; its wire form is its `Serialize` and
/// `Deserialize`, by the decoder's rules for a part of `content`.
///
/// `#[non_exhaustive]`: the reference may grow part types (it has grown
/// commands); give a `match` a wildcard arm.
///
/// ```
/// use serve_command::v2::{ContentPart, Image};
/// let image = Image::from_base64("image/png", "iVBORw0KGgo=")?;
/// assert_eq!(ContentPart::from("look"), ContentPart::Text("look".into()));
/// assert_eq!(ContentPart::from(image.clone()), ContentPart::Image(image));
/// assert_eq!(
///     serde_json::to_string(&ContentPart::from("look"))?,
///     r#"{"type":"text","text":"look"}"#,
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[non_exhaustive]
pub enum ContentPart {
    /// `{"type":"text","text":T}`.
    Text(String),
    /// `{"type":"image","media_type":M,"data":<canonical padded base64>}`.
    Image(Image),
}

/// A message's parts, in order. On the wire, `"content"` is a JSON string
/// when it is exactly one text part, else the array of parts (an empty
/// array included); `Serialize` and `Deserialize` are that value, by the
/// decoder's rules and with its error strings.
///
/// One part is held inline (no list is allocated for the common message,
/// a single text); [`Content::parts`] is always a slice.
///
/// A text is `Content::from("...")`; an image alone is
/// `Content::from(image)`; parts in order are collected from
/// [`ContentPart`]s, each made with `From`:
///
/// ```
/// use serve_command::v2::{Command, Content, ContentPart, Image};
/// let content = Content::from("look");
/// assert_eq!(content.parts(), &[ContentPart::Text("look".into())]);
/// assert_eq!(content.to_text(), "look");
///
/// // A prompt with an image, in one expression.
/// let image = Image::from_base64("image/png", "iVBORw0KGgo=")?;
/// let prompt = Command::prompt([ContentPart::from("what is this?"), image.into()].into_iter().collect::<Content>());
/// assert_eq!(
///     prompt.to_line(),
///     "{\"command\":\"prompt\",\"content\":[{\"type\":\"text\",\"text\":\"what is this?\"},\
///      {\"type\":\"image\",\"media_type\":\"image/png\",\"data\":\"iVBORw0KGgo=\"}]}\n",
/// );
/// # Ok::<(), serve_command::v2::ImageError>(())
/// ```
#[derive(Clone)]
pub struct Content(Repr);

#[derive(Clone)]
enum Repr {
    One(ContentPart),
    /// Never exactly one part.
    Many(Vec<ContentPart>),
}

impl Content {
    /// Content of these parts, in order.
    #[must_use]
    pub fn new(mut parts: Vec<ContentPart>) -> Content {
        if parts.len() == 1 {
            if let Some(part) = parts.pop() {
                return Content(Repr::One(part));
            }
        }
        Content(Repr::Many(parts))
    }

    /// The parts, in order.
    #[must_use]
    pub fn parts(&self) -> &[ContentPart] {
        match &self.0 {
            Repr::One(part) => std::slice::from_ref(part),
            Repr::Many(parts) => parts,
        }
    }

    /// The parts, owned.
    #[must_use]
    pub fn into_parts(self) -> Vec<ContentPart> {
        match self.0 {
            Repr::One(part) => vec![part],
            Repr::Many(parts) => parts,
        }
    }

    /// Appends a part.
    pub fn push(&mut self, part: ContentPart) {
        let repr = std::mem::replace(&mut self.0, Repr::Many(Vec::new()));
        self.0 = match repr {
            Repr::Many(mut parts) if !parts.is_empty() => {
                parts.push(part);
                Repr::Many(parts)
            }
            Repr::Many(_) => Repr::One(part),
            Repr::One(first) => Repr::Many(vec![first, part]),
        };
    }

    /// Every text part, concatenated in order without separators; images
    /// contribute nothing (the reference's `Content::text`). Empty and
    /// image-only content give `""`.
    ///
    /// ```
    /// use serve_command::v2::{Content, ContentPart};
    /// let c = Content::new(vec![ContentPart::Text("a".into()), ContentPart::Text("b".into())]);
    /// assert_eq!(c.to_text(), "ab");
    /// ```
    #[must_use]
    #[doc(alias = "text")]
    pub fn to_text(&self) -> String {
        self.iter()
            .filter_map(|part| match part {
                ContentPart::Text(text) => Some(text.as_str()),
                ContentPart::Image(_) => None,
            })
            .collect()
    }

    /// The image parts, in order.
    ///
    /// ```
    /// use serve_command::v2::{Content, ContentPart, Image};
    /// let png = Image::from_base64("image/png", "iVBORw0KGgo=")?;
    /// let c = Content::new(vec![ContentPart::Text("see".into()), ContentPart::Image(png.clone())]);
    /// assert_eq!(c.images().collect::<Vec<_>>(), [&png]);
    /// assert_eq!(Content::from("no image").images().count(), 0);
    /// # Ok::<(), serve_command::v2::ImageError>(())
    /// ```
    pub fn images(&self) -> impl Iterator<Item = &Image> + '_ {
        self.iter().filter_map(|part| match part {
            ContentPart::Image(image) => Some(image),
            ContentPart::Text(_) => None,
        })
    }

    /// Whether every part is text (empty content is).
    #[must_use]
    pub fn is_text_only(&self) -> bool {
        self.iter().all(|part| matches!(part, ContentPart::Text(_)))
    }

    /// The text when the content is exactly one text part: what the wire
    /// writes as a JSON string, and what v1 can carry.
    #[must_use]
    pub fn as_single_text(&self) -> Option<&str> {
        match &self.0 {
            Repr::One(ContentPart::Text(text)) => Some(text),
            _ => None,
        }
    }

    /// The text when the content is exactly one text part, owned; else the
    /// content back.
    pub(crate) fn into_single_text(self) -> Result<String, Content> {
        match self.0 {
            Repr::One(ContentPart::Text(text)) => Ok(text),
            repr => Err(Content(repr)),
        }
    }

    /// The parts, in order.
    pub fn iter(&self) -> std::slice::Iter<'_, ContentPart> {
        self.parts().iter()
    }
}

impl Default for Content {
    /// No part: written `"content":[]`.
    fn default() -> Content {
        Content(Repr::Many(Vec::new()))
    }
}

// By the parts, whichever way they are held.
impl PartialEq for Content {
    fn eq(&self, other: &Content) -> bool {
        self.parts() == other.parts()
    }
}

impl Eq for Content {}

impl std::hash::Hash for Content {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.parts().hash(state);
    }
}

impl std::fmt::Debug for Content {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Content").field(&self.parts()).finish()
    }
}

#[cfg(feature = "arbitrary")]
impl<'a> arbitrary::Arbitrary<'a> for Content {
    fn arbitrary(u: &mut arbitrary::Unstructured<'a>) -> arbitrary::Result<Content> {
        Ok(Content::new(u.arbitrary()?))
    }
}

impl From<String> for Content {
    /// One text part.
    fn from(text: String) -> Content {
        Content(Repr::One(ContentPart::Text(text)))
    }
}

impl From<&str> for Content {
    /// One text part.
    fn from(text: &str) -> Content {
        Content::from(text.to_owned())
    }
}

impl From<Image> for Content {
    /// One image part.
    fn from(image: Image) -> Content {
        Content(Repr::One(ContentPart::Image(image)))
    }
}

impl From<ContentPart> for Content {
    /// That one part.
    fn from(part: ContentPart) -> Content {
        Content(Repr::One(part))
    }
}

impl From<Vec<ContentPart>> for Content {
    /// [`Content::new`].
    fn from(parts: Vec<ContentPart>) -> Content {
        Content::new(parts)
    }
}

impl From<String> for ContentPart {
    /// A text part.
    fn from(text: String) -> ContentPart {
        ContentPart::Text(text)
    }
}

impl From<&str> for ContentPart {
    /// A text part.
    fn from(text: &str) -> ContentPart {
        ContentPart::Text(text.to_owned())
    }
}

impl From<Image> for ContentPart {
    /// An image part.
    fn from(image: Image) -> ContentPart {
        ContentPart::Image(image)
    }
}

impl FromIterator<ContentPart> for Content {
    /// The parts in the iterator's order.
    fn from_iter<I: IntoIterator<Item = ContentPart>>(parts: I) -> Content {
        Content::new(parts.into_iter().collect())
    }
}

impl<'a> IntoIterator for &'a Content {
    type Item = &'a ContentPart;
    type IntoIter = std::slice::Iter<'a, ContentPart>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl IntoIterator for Content {
    type Item = ContentPart;
    type IntoIter = std::vec::IntoIter<ContentPart>;
    fn into_iter(self) -> Self::IntoIter {
        self.into_parts().into_iter()
    }
}
