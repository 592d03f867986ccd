//! The face every revision's module shows, written once: the shared
//! machinery's names with the revision filled in, its
//! [`Message`](crate::generic::Message) impl, and the shells and prose of
//! the methods every revision's `Command` has alike (each revision passes
//! in its own notes and examples).

/// The names every revision's module exports for the shared machinery, each
/// the generic type with the revision filled in, and the revision's
/// `Revision` impl: written once here, so `v1` and `v2` are complete faces
/// named alike. With them, the impls every revision's `Command` has alike:
/// `Serialize` (over `Command::entries`, each revision's `Val` serializing
/// itself), `Deserialize`, and `From<ParseError>` for its `LineError`.
macro_rules! face {
    ($rev:literal) => {
        pub use crate::error::{SyntaxError, UnknownMessage};
        pub use crate::wire::read::DEFAULT_MAX_LINE_LEN;

        #[doc = concat!("Why one raw line is not a ", $rev, " command: not JSON, or not a command.")]
        ///
        /// [`generic::LineError`](crate::generic::LineError) with this
        /// revision's [`ParseError`].
        ///
        /// ```
        #[doc = concat!("use serve_command::", $rev, "::{Command, LineError, ParseError};")]
        /// let err = Command::from_slice(br#"{"command":"nap"}"#).unwrap_err();
        /// assert_eq!(err, LineError::Parse(ParseError::UnknownCommand("nap".into())));
        /// assert_eq!(err.event_line(), "{\"event\":\"command_error\",\"error\":\"unknown command: nap\"}\n");
        /// ```
        pub type LineError = crate::error::LineError<ParseError>;

        #[doc = concat!("Why a ", $rev, " [`CommandReader`] or `CommandCodec` refused a line, or stopped.")]
        ///
        /// [`generic::ReadError`](crate::generic::ReadError) with this
        /// revision's [`ParseError`].
        ///
        /// ```
        #[doc = concat!("use serve_command::", $rev, "::{CommandReader, ReadError};")]
        /// let mut reader = CommandReader::with_max_line_len(&b"{\"command\":\"cancel\"}\n"[..], 8);
        /// let err = reader.next().unwrap().unwrap_err();
        /// assert!(matches!(err, ReadError::TooLong { line: 1, max: 8 }));
        /// ```
        pub type ReadError = crate::error::ReadError<ParseError>;

        #[doc = concat!("Reads ", $rev, " commands from a [`BufRead`](std::io::BufRead), one per line, as an engine reads its stdin.")]
        ///
        /// [`generic::CommandReader`](crate::generic::CommandReader) with
        /// this revision's [`Command`]: an iterator of
        /// `Result<Command, ReadError>` that skips blank lines, goes on after
        /// a bad line, and refuses lines over a limit
        /// ([`DEFAULT_MAX_LINE_LEN`] for `new`) without buffering them.
        ///
        /// ```
        #[doc = concat!("use serve_command::", $rev, "::{Command, CommandReader};")]
        /// let stdin = &b"{\"command\":\"cancel\"}\n\nnot json\n"[..];
        /// let mut reader = CommandReader::new(stdin);
        /// assert_eq!(reader.next().unwrap().unwrap(), Command::Cancel);
        /// let err = reader.next().unwrap().unwrap_err();
        /// assert_eq!(err.to_string(), "line 3: expected a JSON value at byte 0");
        /// assert!(reader.next().is_none());
        /// ```
        pub type CommandReader<R> = crate::wire::read::CommandReader<R, Command>;

        #[doc = concat!("A `tokio_util::codec` codec for ", $rev, " command lines (feature `tokio`).")]
        ///
        /// [`generic::CommandCodec`](crate::generic::CommandCodec) with this
        /// revision's [`Command`]: the same framing as [`CommandReader`],
        /// for `FramedRead` and `FramedWrite`.
        ///
        /// ```
        #[doc = concat!("use serve_command::", $rev, "::{Command, CommandCodec};")]
        /// use tokio_util::codec::{Decoder, Encoder};
        /// let mut codec = CommandCodec::default();
        /// let mut buf = bytes::BytesMut::new();
        /// codec.encode(Command::Cancel, &mut buf)?;
        /// assert_eq!(&buf[..], b"{\"command\":\"cancel\"}\n");
        /// assert_eq!(codec.decode(&mut buf)?.unwrap().unwrap(), Command::Cancel);
        /// # Ok::<(), std::io::Error>(())
        /// ```
        #[cfg(feature = "tokio")]
        pub type CommandCodec = crate::wire::codec::CommandCodec<Command>;

        impl ::serde::Serialize for Command {
            /// Writes the wire object; with `serde_json`, exactly
            /// [`Command::to_line`]'s bytes without the LF.
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                use ::serde::ser::SerializeMap;
                let mut len = 0;
                let Ok(()) = self.entries(|_, _| -> Result<(), std::convert::Infallible> {
                    len += 1;
                    Ok(())
                });
                let mut map = serializer.serialize_map(Some(len))?;
                // Each value as its revision's `Val` serializes it.
                self.entries(|key, val| map.serialize_entry(key, &val))?;
                map.end()
            }
        }

        impl<'de> ::serde::Deserialize<'de> for Command {
            /// Decodes by the same rules as [`Command::from_json`]. A JSON value that is
            /// not a command fails with a custom error whose message is the wire
            /// string (`serde_json` appends the position).
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                crate::wire::de::deserialize_command(deserializer)
            }
        }

        impl From<ParseError> for LineError {
            fn from(e: ParseError) -> Self {
                LineError::Parse(e)
            }
        }

        impl crate::wire::message::Revision for Command {}

        crate::wire::message::message_by_line!(Command, ParseError, LineError, ReadError);
    };
}
pub(crate) use face;

/// `Command::from_slice` and `FromStr`, expanded in a revision's
/// `decode.rs` (where `Command` and `LineError` are in scope): the shared
/// line scanner, then the revision's `rules` module (its `Fields` and
/// `not_an_object`), and `decide`, which applies its arms to the fields
/// and gives a `Result<Command, LineError>`; the shared prose here, the
/// revision's note and examples passed in.
macro_rules! decode_methods {
    (
        revision: $rev:literal,
        rules: $rules:ident,
        decide: $decide:expr,
        note: { $(#[$note:meta])* },
        from_slice: { $(#[$from_slice:meta])* },
        from_str: { $(#[$from_str:meta])* } $(,)?
    ) => {
        impl Command {
            /// Decodes one raw line, with or without its trailing `"\n"`.
            ///
            $(#[$note])*
            ///
            /// # Errors
            ///
            /// [`LineError::Syntax`] when the line is not JSON (what is wrong and
            /// at which byte), [`LineError::Parse`] with the wire's
            #[doc = concat!("[`ParseError`](crate::", $rev, "::ParseError) when it is JSON but not a")]
            /// command.
            ///
            $(#[$from_slice])*
            #[must_use = "a command, or why the line is not one"]
            pub fn from_slice(line: &[u8]) -> Result<Command, LineError> {
                // Filled in place: the fields are never moved until `decide` takes them.
                let mut fields = $rules::Fields::new();
                if crate::wire::scan::scan(line, &mut fields)? {
                    $decide(&mut fields)
                } else {
                    Err($rules::not_an_object().into())
                }
            }
        }

        impl std::str::FromStr for Command {
            type Err = LineError;

            /// Same as [`Command::from_slice`] on the string's bytes.
            ///
            /// # Errors
            ///
            /// As [`Command::from_slice`]: [`LineError::Syntax`] for a line that is
            /// not JSON, [`LineError::Parse`] for one that is not a command.
            ///
            $(#[$from_str])*
            fn from_str(line: &str) -> Result<Command, LineError> {
                Command::from_slice(line.as_bytes())
            }
        }
    };
}
pub(crate) use decode_methods;

/// The encoder's frame and `Command::to_line`, `write_line` and `Display`,
/// expanded in a revision's `encode.rs`: the shared code and prose here;
/// passed in, the revision's sink trait (`$sink`, a
/// [`Sink`](crate::wire::escape::Sink) or more), `write_val`, which writes
/// one of its values, and its notes and examples. `Command::entries`, in
/// that file, is the line's shape.
macro_rules! encode_methods {
    (
        sink: $sink:ident,
        write_val: $write_val:path,
        to_line: { $(#[$to_line:meta])* },
        write_line: { $(#[$write_note:meta])* } { $(#[$write_line:meta])* },
        display: { $(#[$display_note:meta])* } { $(#[$display:meta])* } $(,)?
    ) => {
        /// Writes `cmd` as its wire line, LF included.
        #[inline(always)]
        pub(crate) fn write_command<K: $sink>(cmd: &Command, k: &mut K) -> Result<(), K::Error> {
            write_object::<K, true>(cmd, k)
        }

        /// The line's JSON object, and its LF when `LF`: the one encoder, for the
        /// line and for `Display` (which leaves the LF out). A constant, so that
        /// the last piece is still one copy of a known length.
        fn write_object<K: $sink, const LF: bool>(cmd: &Command, k: &mut K) -> Result<(), K::Error> {
            let mut first = true;
            // Inlined at each entry, so that every key and bracket is a copy of a
            // length known at compile time (no call); only strings are scanned.
            cmd.entries(
                #[inline(always)]
                |key, val| {
                    k.put(if first { "{\"" } else { ",\"" })?;
                    first = false;
                    k.put(key)?;
                    k.put("\":")?;
                    $write_val(k, val)
                },
            )?;
            k.put(if LF { "}\n" } else { "}" })
        }

        /// The wire line in a `String` allocated once, at its exact length.
        pub(crate) fn to_line(cmd: &Command) -> String {
            let mut len = crate::wire::escape::Len(0);
            let Ok(()) = write_command(cmd, &mut len);
            let mut line = String::with_capacity(len.0);
            let Ok(()) = write_command(cmd, &mut line);
            line
        }

        impl Command {
            /// The wire line: compact JSON in the reference's key order, ending in
            /// exactly one `"\n"` (a raw LF can never appear inside: strings escape
            /// it). Allocates once.
            ///
            $(#[$to_line])*
            #[must_use]
            pub fn to_line(&self) -> String {
                to_line(self)
            }

            /// Writes the same bytes as [`Command::to_line`] to `out`, without
            /// allocating.
            ///
            $(#[$write_note])*
            ///
            /// The line is gathered in a buffer on the stack and reaches `out` in a
            /// single `write_all` when it is up to 8 KiB long (on an unbuffered pipe,
            /// one `write` system call, so that lines written to one pipe by several
            /// threads do not interleave), and in one `write_all` per 8 KiB at most
            /// when it is longer: every write but the last is of whole 8 KiB
            /// buffers (a plain run of text longer than the buffer goes straight
            /// from the string, several buffers in one write).
            ///
            /// So writing each command straight to a child's stdin or a socket costs
            /// one system call per command. A [`BufWriter`](std::io::BufWriter) around
            /// `out` still helps when many commands are written in a burst and can
            /// share a call (flush it after the last one), or when `out` is slow per
            /// call whatever the size; it costs one more copy of every line.
            ///
            /// # Errors
            ///
            /// The first error `out` returns, as it is; what was written before it
            /// stays written.
            ///
            $(#[$write_line])*
            pub fn write_line<W: std::io::Write>(&self, out: W) -> std::io::Result<()> {
                crate::wire::escape::write_line(
                    out,
                    |k| write_command(self, k),
                    |k| write_command(self, k),
                )
            }
        }

        impl std::fmt::Display for Command {
            /// The wire line without its LF: [`Command::to_line`] but its last
            /// byte, written by the same encoder. Width, fill and precision are
            /// ignored: the line is written as it is.
            ///
            $(#[$display_note])*
            ///
            $(#[$display])*
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write_object::<_, false>(self, &mut crate::wire::escape::Fmt(f))
            }
        }
    };
}
pub(crate) use encode_methods;

/// `Command::from_json` and `to_json`, the `serde_json::Value` path,
/// expanded in a revision's `value.rs` (where `Command` and `ParseError`
/// are in scope): `parse` is the revision's decoder, `value` makes one of
/// its `Val`s a JSON value; the shared prose here, the revision's examples
/// passed in.
macro_rules! json_methods {
    (
        parse: $parse:path,
        value: $value:path,
        from_json: { $(#[$from_json:meta])* },
        to_json: { $(#[$to_json:meta])* } $(,)?
    ) => {
        impl Command {
            /// Decodes a JSON value, exactly as the reference's `Command::parse`
            /// (the pair of [`Command::to_json`]).
            ///
            /// # Errors
            ///
            /// The [`ParseError`] a line holding `value` gets: a value that is not
            /// an object is [`ParseError::ExpectedCommand`].
            ///
            $(#[$from_json])*
            #[must_use = "a command, or why the value is not one"]
            #[doc(alias = "parse")]
            pub fn from_json(value: &serde_json::Value) -> Result<Command, ParseError> {
                $parse(value)
            }

            /// The command as a JSON object with the keys and values of
            /// [`Command::to_line`] (the reference's `to_json`).
            ///
            /// A `serde_json::Value` object does not keep its keys in order unless
            /// `serde_json`'s `preserve_order` feature is on: printed, it has the
            /// keys sorted (`{"action":"set","auto":true,"command":"goal",...}`).
            /// For the canonical line, use [`Command::to_line`],
            /// [`Command::write_line`], or `serde_json::to_string(&command)`
            /// (`Serialize` writes the wire's key order).
            ///
            $(#[$to_json])*
            #[must_use]
            pub fn to_json(&self) -> serde_json::Value {
                let mut map = serde_json::Map::new();
                let Ok(()) = self.entries(|key, val| -> Result<(), std::convert::Infallible> {
                    map.insert(key.to_owned(), $value(val));
                    Ok(())
                });
                serde_json::Value::Object(map)
            }
        }
    };
}
pub(crate) use json_methods;
