//! What a `prompt` or `steer` says: an ordered list of text and image parts
//! (the reference's `content.mbt`).

use crate::v2::Image;

/// One part of a message's content.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum ContentPart {
    /// `{"type":"text","text":T}`.
    Text(String),
    /// `{"type":"image","media_type":M,"data":<canonical padded base64>}`.
    Image(Image),
}

/// A message's parts, in order. On the wire, `"content"` is a JSON string
/// when it is exactly one text part, else the array of parts (an empty
/// array included).
///
/// ```
/// use serve_command::v2::{Content, ContentPart};
/// let content = Content::from("look");
/// assert_eq!(content.parts(), &[ContentPart::Text("look".into())]);
/// assert_eq!(content.text(), "look");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Content(pub Vec<ContentPart>);

impl Content {
    /// The parts, in order.
    #[must_use]
    pub fn parts(&self) -> &[ContentPart] {
        &self.0
    }

    /// The parts, owned.
    #[must_use]
    pub fn into_parts(self) -> Vec<ContentPart> {
        self.0
    }

    /// Every text part, concatenated in order without separators; images
    /// contribute nothing (the reference's `Content::text`). Empty and
    /// image-only content give `""`.
    ///
    /// ```
    /// use serve_command::v2::{Content, ContentPart};
    /// let c = Content(vec![ContentPart::Text("a".into()), ContentPart::Text("b".into())]);
    /// assert_eq!(c.text(), "ab");
    /// ```
    #[must_use]
    pub fn text(&self) -> String {
        self.0
            .iter()
            .filter_map(|part| match part {
                ContentPart::Text(text) => Some(text.as_str()),
                ContentPart::Image(_) => None,
            })
            .collect()
    }

    /// Whether every part is text (empty content is).
    #[must_use]
    pub fn is_text_only(&self) -> bool {
        self.0
            .iter()
            .all(|part| matches!(part, ContentPart::Text(_)))
    }

    /// The text when the content is exactly one text part: what the wire
    /// writes as a JSON string, and what the seed revision can carry.
    #[must_use]
    pub fn as_single_text(&self) -> Option<&str> {
        match self.0.as_slice() {
            [ContentPart::Text(text)] => Some(text),
            _ => None,
        }
    }

    /// The parts, in order.
    pub fn iter(&self) -> std::slice::Iter<'_, ContentPart> {
        self.0.iter()
    }
}

impl From<String> for Content {
    /// One text part.
    fn from(text: String) -> Content {
        Content(vec![ContentPart::Text(text)])
    }
}

impl From<&str> for Content {
    /// One text part.
    fn from(text: &str) -> Content {
        Content::from(text.to_owned())
    }
}

impl From<Vec<ContentPart>> for Content {
    fn from(parts: Vec<ContentPart>) -> Content {
        Content(parts)
    }
}

impl FromIterator<ContentPart> for Content {
    fn from_iter<I: IntoIterator<Item = ContentPart>>(parts: I) -> Content {
        Content(parts.into_iter().collect())
    }
}

impl<'a> IntoIterator for &'a Content {
    type Item = &'a ContentPart;
    type IntoIter = std::slice::Iter<'a, ContentPart>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl IntoIterator for Content {
    type Item = ContentPart;
    type IntoIter = std::vec::IntoIter<ContentPart>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}
