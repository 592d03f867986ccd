//! Images as the later revision carries them: a raster format's bytes,
//! checked the reference's way (`image.mbt`): size, canonical padded
//! base64, four magic-byte sniffs, and the declared media type.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use std::fmt;

/// The most decoded bytes an image may hold: 5 MiB.
pub const MAX_IMAGE_BYTES: usize = 5 * 1024 * 1024;

/// The longest base64 string [`Image::from_base64`] decodes, in UTF-16 code
/// units as the reference counts a string's length: anything longer is
/// [`ImageError::TooLarge`] before a byte is decoded.
pub const MAX_BASE64_LEN: usize = MAX_IMAGE_BYTES.div_ceil(3) * 4;

/// Image bytes whose format is PNG, JPEG, GIF or WebP (by their first
/// bytes; no pixel is decoded), at most [`MAX_IMAGE_BYTES`], with the media
/// type those bytes identify.
///
/// ```
/// use serve_command::v2::Image;
/// let image = Image::from_base64("image/png", "iVBORw0KGgo=")?;
/// assert_eq!(image.media_type(), "image/png");
/// assert_eq!(image.bytes(), b"\x89PNG\r\n\x1a\n");
/// assert_eq!(image.to_base64(), "iVBORw0KGgo=");
/// # Ok::<(), serve_command::v2::ImageError>(())
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Image {
    media_type: &'static str,
    bytes: Vec<u8>,
}

/// Why bytes, base64 or a data URL are not an [`Image`]. `Display` is the
/// reference's text, which reaches the wire.
///
/// ```
/// use serve_command::v2::{Image, ImageError};
/// let err = Image::from_data_url("data:image/gif;base64,iVBORw0KGgo=").unwrap_err();
/// assert_eq!(err, ImageError::MediaTypeMismatch { declared: "image/gif".into(), sniffed: "image/png".into() });
/// assert_eq!(err.to_string(), "image declares image/gif but bytes identify image/png");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ImageError {
    /// More than [`MAX_IMAGE_BYTES`] decoded, or a base64 string longer than
    /// [`MAX_BASE64_LEN`].
    TooLarge,
    /// Not the canonical padded base64 of any bytes (or, for a data URL, no
    /// `data:` prefix or no `;base64,`).
    InvalidBase64,
    /// The bytes start like none of PNG, JPEG, GIF or WebP.
    UnsupportedFormat,
    /// The declared media type is not the one the bytes identify.
    MediaTypeMismatch {
        /// The media type the line declared, verbatim.
        declared: String,
        /// The media type the bytes identify (sniffed from their first
        /// bytes): `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
        sniffed: String,
    },
}

impl std::fmt::Display for ImageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ImageError::TooLarge => f.write_str("image exceeds the 5 MiB limit"),
            ImageError::InvalidBase64 => f.write_str("image data must be canonical padded base64"),
            ImageError::UnsupportedFormat => {
                f.write_str("expected PNG, JPEG, GIF, or WebP image bytes")
            }
            ImageError::MediaTypeMismatch { declared, sniffed } => {
                write!(f, "image declares {declared} but bytes identify {sniffed}")
            }
        }
    }
}

impl std::error::Error for ImageError {}

/// The four media types, by their first bytes.
fn sniff(bytes: &[u8]) -> Option<&'static str> {
    match bytes {
        [0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n', ..] => Some("image/png"),
        [0xff, 0xd8, 0xff, ..] => Some("image/jpeg"),
        [b'G', b'I', b'F', b'8', b'7' | b'9', b'a', ..] => Some("image/gif"),
        [b'R', b'I', b'F', b'F', _, _, _, _, b'W', b'E', b'B', b'P', ..] => Some("image/webp"),
        _ => None,
    }
}

/// The length of a string's UTF-8 bytes as the reference counts a string:
/// UTF-16 code units (one per character, two for a character past U+FFFF).
fn utf16_len(utf8: &[u8]) -> usize {
    // Never more than the UTF-8 length, so only a long string is counted.
    if utf8.len() <= MAX_BASE64_LEN {
        return utf8.len();
    }
    utf8.iter()
        .map(|&b| usize::from(b & 0xc0 != 0x80) + usize::from(b >= 0xf0))
        .sum()
}

/// The bytes `data` is the canonical padded base64 of, if it is one: the
/// reference's decode-then-compare (the string decodes, and re-encodes to
/// itself), without the second pass. The `base64` crate's standard engine
/// requires the padding and zero trailing bits, so it accepts exactly those
/// strings (the tests hold it to decode-then-compare).
fn decode_canonical(data: &[u8]) -> Option<Vec<u8>> {
    STANDARD.decode(data).ok()
}

impl Image {
    /// The image these bytes are, by their format's first bytes.
    ///
    /// # Errors
    ///
    /// [`ImageError::TooLarge`] for more than [`MAX_IMAGE_BYTES`] bytes,
    /// [`ImageError::UnsupportedFormat`] for bytes that start like none of
    /// PNG, JPEG, GIF or WebP.
    ///
    /// ```
    /// use serve_command::v2::{Image, ImageError};
    /// assert_eq!(Image::from_bytes(b"GIF89a...".to_vec())?.media_type(), "image/gif");
    /// assert_eq!(Image::from_bytes(b"BM".to_vec()), Err(ImageError::UnsupportedFormat));
    /// # Ok::<(), ImageError>(())
    /// ```
    pub fn from_bytes(bytes: Vec<u8>) -> Result<Image, ImageError> {
        if bytes.len() > MAX_IMAGE_BYTES {
            return Err(ImageError::TooLarge);
        }
        let media_type = sniff(&bytes).ok_or(ImageError::UnsupportedFormat)?;
        Ok(Image { media_type, bytes })
    }

    /// The image in canonical padded base64 `data`, declared as
    /// `media_type`: the reference's `Image::from_base64`, check for check.
    /// The length is checked before anything is decoded, so a long string
    /// costs no allocation.
    ///
    /// # Errors
    ///
    /// In the reference's order: [`ImageError::TooLarge`] for a string
    /// longer than [`MAX_BASE64_LEN`] (or bytes over [`MAX_IMAGE_BYTES`]),
    /// [`ImageError::InvalidBase64`] for anything but canonical padded
    /// base64, [`ImageError::UnsupportedFormat`] for bytes of another
    /// format, [`ImageError::MediaTypeMismatch`] when `media_type` is not
    /// the type the bytes identify.
    ///
    /// ```
    /// use serve_command::v2::{Image, ImageError};
    /// assert_eq!(Image::from_base64("image/png", "iVBORw0KGgo=")?.bytes(), b"\x89PNG\r\n\x1a\n");
    /// assert_eq!(Image::from_base64("image/png", "iVBORw0KGgo"), Err(ImageError::InvalidBase64));
    /// assert_eq!(
    ///     Image::from_base64("image/jpeg", "iVBORw0KGgo="),
    ///     Err(ImageError::MediaTypeMismatch { declared: "image/jpeg".into(), sniffed: "image/png".into() }),
    /// );
    /// # Ok::<(), ImageError>(())
    /// ```
    pub fn from_base64(media_type: &str, data: &str) -> Result<Image, ImageError> {
        Image::from_base64_utf8(media_type, data.as_bytes())
    }

    /// [`Image::from_base64`] over a string's UTF-8 bytes, as the line holds
    /// them: decoded straight from the line, with no copy or check first.
    pub(crate) fn from_base64_utf8(media_type: &str, data: &[u8]) -> Result<Image, ImageError> {
        if utf16_len(data) > MAX_BASE64_LEN {
            return Err(ImageError::TooLarge);
        }
        let bytes = decode_canonical(data).ok_or(ImageError::InvalidBase64)?;
        Image::from_decoded(media_type, bytes)
    }

    /// The bytes of `data`, a string as the line holds it between its
    /// quotes, if it is canonical padded base64 no longer than
    /// [`MAX_BASE64_LEN`]: what [`Image::from_base64_utf8`] decodes, so
    /// [`Image::from_decoded`] finishes its checks. `None` for anything
    /// else, which `from_base64_utf8` then takes, unescaped. The line
    /// scanner's decoder ([`crate::wire::fields::Field::Decoded`]): the
    /// base64 alphabet and `=` are printable ASCII without a backslash.
    pub(crate) fn decode_plain(data: &[u8]) -> Option<Vec<u8>> {
        if data.len() > MAX_BASE64_LEN {
            return None;
        }
        decode_canonical(data)
    }

    /// [`Image::from_base64_utf8`] after the decode: the bytes' size and
    /// format, and the declared type.
    pub(crate) fn from_decoded(media_type: &str, bytes: Vec<u8>) -> Result<Image, ImageError> {
        let image = Image::from_bytes(bytes)?;
        if image.media_type != media_type {
            return Err(ImageError::MediaTypeMismatch {
                declared: media_type.to_owned(),
                sniffed: image.media_type.to_owned(),
            });
        }
        Ok(image)
    }

    /// The image in a `data:<media type>;base64,<data>` URL (split at the
    /// first `;base64,`), as the legacy `images` field carries it.
    ///
    /// # Errors
    ///
    /// [`ImageError::InvalidBase64`] for a URL without the `data:` prefix
    /// or a `;base64,`; else [`Image::from_base64`]'s errors for the type
    /// and data it holds.
    ///
    /// ```
    /// use serve_command::v2::{Image, ImageError};
    /// let image = Image::from_data_url("data:image/png;base64,iVBORw0KGgo=")?;
    /// assert_eq!(image.to_data_url(), "data:image/png;base64,iVBORw0KGgo=");
    /// assert_eq!(Image::from_data_url("https://x/y.png"), Err(ImageError::InvalidBase64));
    /// # Ok::<(), ImageError>(())
    /// ```
    pub fn from_data_url(url: &str) -> Result<Image, ImageError> {
        let (media_type, data) = url
            .strip_prefix("data:")
            .and_then(|rest| rest.split_once(";base64,"))
            .ok_or(ImageError::InvalidBase64)?;
        Image::from_base64(media_type, data)
    }

    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    #[must_use]
    pub fn media_type(&self) -> &'static str {
        self.media_type
    }

    /// The image file's bytes.
    #[must_use]
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The image file's bytes, owned.
    #[must_use]
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    /// The bytes in canonical padded base64, as the wire carries them.
    #[must_use]
    pub fn to_base64(&self) -> String {
        STANDARD.encode(&self.bytes)
    }

    /// `data:<media type>;base64,<data>`.
    #[must_use]
    pub fn to_data_url(&self) -> String {
        format!("data:{};base64,{}", self.media_type, self.to_base64())
    }
}

impl fmt::Debug for Image {
    // Never the bytes: an image in a log is its type and size.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Image({}, {} bytes)", self.media_type, self.bytes.len())
    }
}

impl TryFrom<Vec<u8>> for Image {
    type Error = ImageError;

    /// [`Image::from_bytes`].
    ///
    /// # Errors
    ///
    /// [`Image::from_bytes`]'s: [`ImageError::TooLarge`] or
    /// [`ImageError::UnsupportedFormat`].
    ///
    /// ```
    /// use serve_command::v2::{Image, ImageError};
    /// assert_eq!(Image::try_from(b"\xff\xd8\xff".to_vec())?.media_type(), "image/jpeg");
    /// assert_eq!(Image::try_from(Vec::new()), Err(ImageError::UnsupportedFormat));
    /// # Ok::<(), ImageError>(())
    /// ```
    fn try_from(bytes: Vec<u8>) -> Result<Image, ImageError> {
        Image::from_bytes(bytes)
    }
}

#[cfg(feature = "arbitrary")]
impl<'a> arbitrary::Arbitrary<'a> for Image {
    /// A valid image: one of the four formats' first bytes, then arbitrary
    /// bytes, so every arbitrary command round-trips through its line.
    fn arbitrary(u: &mut arbitrary::Unstructured<'a>) -> arbitrary::Result<Image> {
        const HEADERS: [&[u8]; 5] = [
            b"\x89PNG\r\n\x1a\n",
            b"\xff\xd8\xff",
            b"GIF87a",
            b"GIF89a",
            b"RIFF\0\0\0\0WEBP",
        ];
        let mut bytes = u.choose(&HEADERS)?.to_vec();
        let tail: &[u8] = u.arbitrary()?;
        bytes.extend_from_slice(&tail[..tail.len().min(64)]);
        Image::from_bytes(bytes).map_err(|_| arbitrary::Error::IncorrectFormat)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `decode_canonical` against the reference's rule, written as it is:
    /// decode leniently (any padding, any trailing bits), then keep the
    /// bytes only if they encode back to `data`.
    #[track_caller]
    fn same(data: &[u8]) {
        use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
        let lenient = GeneralPurpose::new(
            &base64::alphabet::STANDARD,
            GeneralPurposeConfig::new()
                .with_decode_allow_trailing_bits(true)
                .with_decode_padding_mode(DecodePaddingMode::Indifferent),
        );
        let want = lenient
            .decode(data)
            .ok()
            .filter(|bytes| STANDARD.encode(bytes).as_bytes() == data);
        assert_eq!(
            decode_canonical(data),
            want,
            "{:?}",
            String::from_utf8_lossy(data)
        );
    }

    /// Symbols with every pattern of the low bits (`A` 0, `B` 1, `E` 4, `Q`
    /// 16, `g` 32, `w` 48), the last two symbols, padding, and bytes
    /// outside the alphabet (the URL-safe `_`, whitespace, the quote and
    /// backslash the scanner relies on its refusing, a non-ASCII byte).
    const EDGES: &[u8] = b"ABEQgw+/=_\n\"\\\xff";

    #[test]
    fn every_short_string_of_edge_symbols() {
        let mut strings = vec![Vec::new()];
        for _ in 0..5 {
            strings = strings
                .iter()
                .flat_map(|s| {
                    EDGES.iter().map(move |&c| {
                        let mut t = s.clone();
                        t.push(c);
                        t
                    })
                })
                .collect();
            for s in &strings {
                same(s);
                // And after a whole quad.
                same(&[b"iVBO", s.as_slice()].concat());
            }
        }
        same(b"");
    }

    /// Long enough for a decoder's wide loop and its tail: the encoding of 0 to 130 bytes, whole and with one symbol changed
    /// at each position.
    #[test]
    fn long_strings_with_one_fault_anywhere() {
        let mut x = 0x2545_f491_4f6c_dd1d_u64;
        for len in 0..130 {
            let bytes: Vec<u8> = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect();
            let good = STANDARD.encode(&bytes);
            same(good.as_bytes());
            for at in 0..good.len() {
                for c in [b'!', b'=', b'_', b'A', b'w', b'/', b'"', b'\\', 0x1f, 0x80] {
                    let mut bad = good.clone().into_bytes();
                    bad[at] = c;
                    same(&bad);
                }
            }
            same(format!("{good}=").as_bytes());
            same(format!("{good}A").as_bytes());
            same(&good.as_bytes()[..good.len().saturating_sub(1)]);
        }
    }
}
