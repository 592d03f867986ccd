//! The `<user_shell_command>` envelope, and the steers that carry it.
//!
//! A controller that offers `!` shell commands (upstream's terminal UI and
//! desktop app) runs the command itself, then hands the engine the command
//! and its result as the text of a `steer` of kind `command`, in this
//! envelope:
//!
//! ```text
//! <user_shell_command>
//! <command>
//! ls
//! </command>
//! <result>
//! exit=0
//! Cargo.toml
//! </result>
//! </user_shell_command>
//! ```
//!
//! The engine stores the text as a durable user message; clients [`parse`]
//! it back to render the transcript, live or resumed. [`encode`] and
//! [`parse`] are byte for byte upstream's (`protocol/command_context` of
//! moonbitlang/openseek @ 35042ea4), the one format every client shares.
//!
//! Nothing inside is escaped or length-prefixed, on purpose (upstream's
//! reasoning): the envelope is read by the *model* as natural tagged
//! context, so the inner text stays readable. [`parse`] anchors the closing
//! tags at the end, so any output line, even `</result>` or a whole
//! envelope, reads back as output. What does not come back from [`parse`]
//! as it went into [`encode`]: a command holding a `</command>` line
//! directly followed by a `<result>` line (the command ends at the first
//! such pair), a line ending in CR (trimmed, so CRLF text reads as LF), or
//! the output of an uncut run opening with four lines keyed like the
//! truncation preamble. The harm is cosmetic and rare: the engine never
//! parses the text, and the worst a client shows is a plain user message or
//! a slightly off card.
//!
//! ```
//! use serve_command::shell::{self, ShellCommand, ShellOutput};
//! use serve_command::v1::Command;
//!
//! let output = ShellOutput::new(Some(0), "Cargo.toml", false);
//! let steer = Command::shell_steer("ls", Ok(&output));
//! assert_eq!(
//!     steer.to_line(),
//!     "{\"command\":\"steer\",\"kind\":\"command\",\"text\":\"<user_shell_command>\\n<command>\\nls\\n\
//!      </command>\\n<result>\\nexit=0\\nCargo.toml\\n</result>\\n</user_shell_command>\"}\n"
//! );
//! assert_eq!(
//!     steer.shell_command(),
//!     Some(ShellCommand::new("ls", "0", ["Cargo.toml"], false))
//! );
//! ```

use crate::v1::SteerKind;

const OPEN: &str = "<user_shell_command>";
const COMMAND_OPEN: &str = "<command>";
const COMMAND_CLOSE: &str = "</command>";
const RESULT_OPEN: &str = "<result>";
const RESULT_CLOSE: &str = "</result>";
const CLOSE: &str = "</user_shell_command>";
const ERROR_PREFIX: &str = "error running shell:";
const EXIT_PREFIX: &str = "exit=";
/// The keys of the four lines `encode` writes after `exit=` for a
/// truncated run, in order.
const PREAMBLE: [&str; 4] = [
    "truncated=",
    "output_limit_reached=",
    "shown_chars=",
    "max_output_chars=",
];

/// The result of running a shell command line, as the controller captured
/// it.
///
/// Non-exhaustive, so that upstream may add to it without breaking anyone:
/// make one with [`ShellOutput::new`] (or [`Default`]); the fields are
/// public to read and set.
///
/// ```
/// use serve_command::shell::ShellOutput;
/// // Stopped before it exited, cut off at the output cap.
/// let cut = ShellOutput::new(None, "abc", true);
/// assert_eq!((cut.exit_code, cut.text.as_str(), cut.output_limit_reached), (None, "abc", true));
/// assert_eq!(ShellOutput::default(), ShellOutput::new(None, "", false));
/// ```
///
/// A struct literal does not compile outside this crate:
///
/// ```compile_fail,E0639
/// use serve_command::shell::ShellOutput;
/// let out = ShellOutput { exit_code: Some(0), text: "a".into(), output_limit_reached: false };
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub struct ShellOutput {
    /// The exit code; `None` if the command did not exit on its own (the
    /// user stopped it, or it was cut off at the output cap).
    pub exit_code: Option<i32>,
    /// The merged stdout and stderr, truncated to the client's character
    /// budget.
    pub text: String,
    /// Whether that truncation happened.
    pub output_limit_reached: bool,
}

impl ShellOutput {
    /// A run's result: its exit code (`None` if it did not exit on its
    /// own), its merged output, and whether that output was cut at the
    /// client's cap.
    ///
    /// ```
    /// use serve_command::shell::{encode, ShellOutput};
    /// let out = ShellOutput::new(Some(2), "no rule", false);
    /// assert_eq!(
    ///     encode("make", Ok(&out)),
    ///     "<user_shell_command>\n<command>\nmake\n</command>\n<result>\nexit=2\nno rule\n</result>\n</user_shell_command>"
    /// );
    /// ```
    #[must_use]
    pub fn new(
        exit_code: Option<i32>,
        text: impl Into<String>,
        output_limit_reached: bool,
    ) -> Self {
        ShellOutput {
            exit_code,
            text: text.into(),
            output_limit_reached,
        }
    }
}

/// A `<user_shell_command>` envelope parsed back into its parts.
///
/// Non-exhaustive, so that upstream may add to it without breaking anyone;
/// the fields are public to read. [`ShellCommand::new`] makes one to
/// compare [`parse`]'s answer with.
///
/// ```
/// use serve_command::shell::{parse, ShellCommand};
/// let text = "<user_shell_command>\n<command>\nmake\n</command>\n<result>\nexit=2\nno rule\n</result>\n</user_shell_command>";
/// let card = parse(text).unwrap();
/// assert_eq!((card.command.as_str(), card.exit.as_str()), ("make", "2"));
/// assert_eq!((card.output, card.output_limit_reached), (vec!["no rule".to_owned()], false));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub struct ShellCommand {
    /// The command line (its lines joined with LF, trailing CRs dropped).
    pub command: String,
    /// The raw protocol token, not an interpreted status: `"0"` for
    /// success, a number for a non-zero code, `"cancelled"` for a truncated
    /// or cancelled run, `"failed"` when the command could not be run. It
    /// is whatever follows `exit=`, so any other text is possible too.
    pub exit: String,
    /// The captured lines, without the truncation preamble (for a failed
    /// run: the `error running shell:` lines).
    pub output: Vec<String>,
    /// Whether the shell collector hit its character cap (the truncation
    /// preamble was there).
    pub output_limit_reached: bool,
}

impl ShellCommand {
    /// The parts of an envelope: the command, the raw `exit` token, the
    /// output lines and whether the output was cut.
    ///
    /// ```
    /// use serve_command::shell::{parse, ShellCommand};
    /// let text = "<user_shell_command>\n<command>\nyes\n</command>\n<result>\nexit=cancelled\ny\n</result>\n</user_shell_command>";
    /// assert_eq!(parse(text), Some(ShellCommand::new("yes", "cancelled", ["y"], false)));
    /// ```
    #[must_use]
    pub fn new(
        command: impl Into<String>,
        exit: impl Into<String>,
        output: impl IntoIterator<Item = impl Into<String>>,
        output_limit_reached: bool,
    ) -> Self {
        ShellCommand {
            command: command.into(),
            exit: exit.into(),
            output: output.into_iter().map(Into::into).collect(),
            output_limit_reached,
        }
    }
}

/// The `<user_shell_command>` envelope for `command` and its result:
/// `Ok(output)` for a command that ran (its exit code and output, with the
/// truncation preamble when the output was cut), `Err(why)` for one that
/// could not be run (`error running shell: {why}`).
///
/// A run without an exit code, cut off or not, is written `exit=cancelled`
/// (before upstream's 35042ea4 an uncut one was `exit=0`, which read back
/// as a success). `shown_chars` and `max_output_chars` count the Unicode
/// scalar values of the text.
///
/// ```
/// use serve_command::shell::{encode, ShellOutput};
/// let stopped = ShellOutput::new(None, "partial", false);
/// assert_eq!(
///     encode("sleep 9", Ok(&stopped)),
///     "<user_shell_command>\n<command>\nsleep 9\n</command>\n<result>\nexit=cancelled\npartial\n\
///      </result>\n</user_shell_command>"
/// );
/// let cut = ShellOutput::new(None, "日本😀", true);
/// assert_eq!(
///     encode("cat big", Ok(&cut)),
///     "<user_shell_command>\n<command>\ncat big\n</command>\n<result>\nexit=cancelled\n\
///      truncated=true\noutput_limit_reached=true\nshown_chars=3\nmax_output_chars=3\n日本😀\n\
///      </result>\n</user_shell_command>"
/// );
/// assert_eq!(
///     encode("nope", Err("spawn failed")),
///     "<user_shell_command>\n<command>\nnope\n</command>\n<result>\n\
///      error running shell: spawn failed\n</result>\n</user_shell_command>"
/// );
/// ```
#[must_use]
pub fn encode(command: &str, result: Result<&ShellOutput, &str>) -> String {
    // Every line but the command and the result body; each is followed by
    // a LF but the last.
    const FRAME: usize = OPEN.len()
        + COMMAND_OPEN.len()
        + COMMAND_CLOSE.len()
        + RESULT_OPEN.len()
        + RESULT_CLOSE.len()
        + CLOSE.len()
        + 7;
    let head: Header = match result {
        Err(_) => Header::Error,
        Ok(out) if out.output_limit_reached => {
            Header::Truncated(out.exit_code, Decimal::new(out.text.chars().count() as u64))
        }
        Ok(out) => Header::Exit(out.exit_code),
    };
    let body = match result {
        Err(why) => why,
        Ok(out) => out.text.as_str(),
    };
    let mut text = String::with_capacity(FRAME + command.len() + head.len() + body.len());
    for part in [
        OPEN,
        "\n",
        COMMAND_OPEN,
        "\n",
        command,
        "\n",
        COMMAND_CLOSE,
        "\n",
    ] {
        text.push_str(part);
    }
    text.push_str(RESULT_OPEN);
    text.push('\n');
    head.write(&mut text);
    text.push_str(body);
    for part in ["\n", RESULT_CLOSE, "\n", CLOSE] {
        text.push_str(part);
    }
    debug_assert_eq!(text.len(), text.capacity(), "one allocation, exactly sized");
    text
}

/// What `encode` writes between `<result>` and the output (or the error),
/// ending in a LF (or `error running shell: `).
enum Header {
    Error,
    Exit(Option<i32>),
    Truncated(Option<i32>, Decimal),
}

/// The token after `exit=` for a run without an exit code: it did not exit
/// on its own.
const CANCELLED: &str = "cancelled";

impl Header {
    fn len(&self) -> usize {
        let exit = |code: &Option<i32>| {
            EXIT_PREFIX.len() + code.map_or(CANCELLED.len(), |code| Decimal::signed(code).len())
        };
        match self {
            Header::Error => ERROR_PREFIX.len() + 1,
            Header::Exit(code) => exit(code) + 1,
            Header::Truncated(code, shown) => {
                exit(code)
                    + "\ntruncated=true\noutput_limit_reached=true\n".len()
                    + PREAMBLE[2].len()
                    + PREAMBLE[3].len()
                    + 2 * (shown.len() + 1)
            }
        }
    }

    fn write(&self, text: &mut String) {
        let exit = |text: &mut String, code: &Option<i32>| {
            text.push_str(EXIT_PREFIX);
            match code {
                Some(code) => text.push_str(Decimal::signed(*code).as_str()),
                None => text.push_str(CANCELLED),
            }
        };
        match self {
            Header::Error => {
                text.push_str(ERROR_PREFIX);
                text.push(' ');
            }
            Header::Exit(code) => {
                exit(text, code);
                text.push('\n');
            }
            Header::Truncated(code, shown) => {
                exit(text, code);
                text.push_str("\ntruncated=true\noutput_limit_reached=true\n");
                for key in &PREAMBLE[2..] {
                    text.push_str(key);
                    text.push_str(shown.as_str());
                    text.push('\n');
                }
            }
        }
    }
}

/// An integer's decimal digits, on the stack: its length is known before
/// the envelope is allocated.
struct Decimal {
    buf: [u8; 21],
    start: usize,
}

impl Decimal {
    fn new(n: u64) -> Decimal {
        Decimal::with_sign(n, false)
    }

    fn signed(n: i32) -> Decimal {
        Decimal::with_sign(u64::from(n.unsigned_abs()), n < 0)
    }

    fn with_sign(mut n: u64, negative: bool) -> Decimal {
        let mut buf = [0u8; 21];
        let mut start = buf.len();
        loop {
            start -= 1;
            // `n % 10` is a digit.
            buf[start] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        if negative {
            start -= 1;
            buf[start] = b'-';
        }
        Decimal { buf, start }
    }

    fn len(&self) -> usize {
        self.buf.len() - self.start
    }

    fn as_str(&self) -> &str {
        // ASCII digits and '-' only.
        std::str::from_utf8(&self.buf[self.start..]).unwrap_or_default()
    }
}

/// The envelope in `content` parsed back into its parts, as upstream's
/// `parse` does.
///
/// `content` is split on LF and every line's trailing CRs are dropped (so
/// CRLF text reads as LF text). The structure is checked strictly, so that
/// a prompt which merely mentions the tags is not taken for a command. Both
/// ends are anchored first: the lines must open with `<user_shell_command>`,
/// `<command>` and close with `</result>`, `</user_shell_command>` and at
/// most one empty line, so an output line that is itself a closing tag (or
/// a whole envelope, `cat` of one) is output. The lines between split at
/// the first `</command>` line directly followed by a `<result>` line: the
/// command before, the result after. The result's first line is
/// `exit=TOKEN` (`exit` is `TOKEN`, and the four-line truncation preamble
/// after it, recognized by its keys, is dropped and sets
/// `output_limit_reached`) or starts with `error running shell:` (`exit` is
/// `"failed"`, every line is output); an empty result is a failed run with
/// no output.
///
/// # Errors
///
/// `None` when `content` is not an envelope (an ordinary user message): it
/// does not open or close as above, no `</command>` line is followed by a
/// `<result>` line, or the result's first line is neither `exit=...` nor
/// `error running shell:...`.
///
/// ```
/// use serve_command::shell::{parse, ShellCommand};
/// let cut = "<user_shell_command>\r\n<command>\r\nyes\r\n</command>\r\n<result>\r\nexit=cancelled\r\n\
///            truncated=true\r\noutput_limit_reached=true\r\nshown_chars=1\r\nmax_output_chars=1\r\ny\r\n\
///            </result>\r\n</user_shell_command>\r\n";
/// assert_eq!(parse(cut), Some(ShellCommand::new("yes", "cancelled", ["y"], true)));
/// // Closing tags in the output are output: the end is anchored.
/// let xml = "<user_shell_command>\n<command>\ncat x\n</command>\n<result>\nexit=0\n</result>\n\
///            </user_shell_command>\n</result>\n</user_shell_command>";
/// assert_eq!(parse(xml), Some(ShellCommand::new("cat x", "0", ["</result>", "</user_shell_command>"], false)));
/// assert_eq!(parse("just a normal prompt"), None);
/// // The result must open with exit= or the error.
/// assert_eq!(parse("<user_shell_command>\n<command>\nls\n</command>\n<result>\nok\n</result>\n</user_shell_command>"), None);
/// ```
#[must_use]
pub fn parse(content: &str) -> Option<ShellCommand> {
    // First the structure, by byte offsets, allocating nothing (most text
    // handed here is an ordinary message); then the parts.
    let mut head = Lines::new(content);
    if head.next()?.1 != OPEN || head.next()?.1 != COMMAND_OPEN {
        return None;
    }
    // The tail, from the back: the tags differ, so the lines matched at
    // either end are never the same line.
    let (last, line) = line_before(content, content.len());
    let close = match line {
        CLOSE => last,
        "" => match line_before(content, last.checked_sub(1)?) {
            (close, CLOSE) => close,
            _ => return None,
        },
        _ => return None,
    };
    let (result_close, line) = line_before(content, close.checked_sub(1)?);
    if line != RESULT_CLOSE {
        return None;
    }
    // Every line between, with its LF.
    let body = content.get(head.at..result_close)?;
    let (command, result) = split_at_result(body)?;

    let mut result_lines = body_lines(result);
    let (exit, output_limit_reached) = match result_lines.clone().next() {
        None => ("failed", false),
        Some(first) if first.starts_with(ERROR_PREFIX) => ("failed", false),
        Some(first) => {
            let exit = first.strip_prefix(EXIT_PREFIX)?;
            result_lines.next();
            let mut ahead = result_lines.clone();
            let preamble = PREAMBLE
                .iter()
                .all(|key| ahead.next().is_some_and(|line| line.starts_with(key)));
            if preamble {
                result_lines.nth(PREAMBLE.len() - 1);
            }
            (exit, preamble)
        }
    };

    let mut joined = String::with_capacity(command.len());
    for (i, line) in body_lines(command).enumerate() {
        if i > 0 {
            joined.push('\n');
        }
        joined.push_str(line);
    }
    // Sized first: `collect` would grow it, reallocating.
    let mut output = Vec::with_capacity(result_lines.clone().count());
    output.extend(result_lines.map(str::to_owned));
    Some(ShellCommand {
        command: joined,
        exit: exit.to_owned(),
        output,
        output_limit_reached,
    })
}

/// `content`'s lines as upstream splits them: on every LF, with each line's
/// trailing CRs trimmed; with the byte offset where each raw line starts.
struct Lines<'a> {
    content: &'a str,
    /// Where the next line starts; past the end when there is none.
    at: usize,
}

impl<'a> Lines<'a> {
    fn new(content: &'a str) -> Lines<'a> {
        Lines { content, at: 0 }
    }
}

impl<'a> Iterator for Lines<'a> {
    type Item = (usize, &'a str);

    fn next(&mut self) -> Option<(usize, &'a str)> {
        let start = self.at;
        let rest = self.content.get(start..)?;
        let line = match memchr::memchr(b'\n', rest.as_bytes()) {
            Some(lf) => {
                self.at = start + lf + 1;
                &rest[..lf]
            }
            None => {
                // The last line; nothing after it.
                self.at = usize::MAX;
                rest
            }
        };
        Some((start, line.trim_end_matches('\r')))
    }
}

/// The line of `content` that ends at byte `end` (an LF or the end), as
/// upstream splits it: where it starts, and its text with trailing CRs
/// trimmed.
fn line_before(content: &str, end: usize) -> (usize, &str) {
    let head = content.get(..end).unwrap_or_default();
    let start = memchr::memrchr(b'\n', head.as_bytes()).map_or(0, |lf| lf + 1);
    (
        start,
        head.get(start..).unwrap_or_default().trim_end_matches('\r'),
    )
}

/// `body` (whole lines, each with its LF) split at its first `</command>`
/// line directly followed by a `<result>` line: the lines before the pair
/// and the lines after it. `None` if there is no such pair.
fn split_at_result(body: &str) -> Option<(&str, &str)> {
    let mut lines = Lines::new(body);
    // Where the previous line started, if it was `</command>`.
    let mut command_close = None;
    while let Some((start, line)) = lines.next() {
        if let (RESULT_OPEN, Some(close)) = (line, command_close) {
            // `lines.at`: where the line after `<result>` starts.
            return Some((body.get(..close)?, body.get(lines.at..)?));
        }
        command_close = (line == COMMAND_CLOSE).then_some(start);
    }
    None
}

/// The lines of a part from [`split_at_result`], trimmed.
fn body_lines(body: &str) -> impl Iterator<Item = &str> + Clone {
    body.split_terminator('\n')
        .map(|line| line.trim_end_matches('\r'))
}

impl crate::v1::Command {
    /// A `steer` of kind `command` whose text is the envelope for `command`
    /// and its result ([`encode`]).
    ///
    /// ```
    /// use serve_command::v1::{Command, SteerKind};
    /// assert_eq!(
    ///     Command::shell_steer("nope", Err("spawn failed")),
    ///     Command::Steer {
    ///         kind: SteerKind::Command,
    ///         text: "<user_shell_command>\n<command>\nnope\n</command>\n<result>\n\
    ///                error running shell: spawn failed\n</result>\n</user_shell_command>".into(),
    ///     }
    /// );
    /// ```
    #[must_use]
    pub fn shell_steer(command: &str, result: Result<&ShellOutput, &str>) -> Self {
        crate::v1::Command::Steer {
            kind: SteerKind::Command,
            text: encode(command, result),
        }
    }

    /// The envelope this command carries, parsed ([`parse`]).
    ///
    /// # Errors
    ///
    /// `None` unless this is a `steer` of kind `command` whose text is an
    /// envelope.
    ///
    /// ```
    /// use serve_command::shell::ShellOutput;
    /// use serve_command::v1::{Command, SteerKind};
    /// let out = ShellOutput::new(Some(1), "boom", false);
    /// let cmd = Command::shell_steer("make", Ok(&out)).shell_command().unwrap();
    /// assert_eq!((cmd.command.as_str(), cmd.exit.as_str(), cmd.output), ("make", "1", vec!["boom".to_owned()]));
    /// // The same text in a prompt steer is not a shell command.
    /// let Command::Steer { text, .. } = Command::shell_steer("make", Ok(&out)) else { unreachable!() };
    /// assert_eq!(Command::Steer { kind: SteerKind::Prompt, text }.shell_command(), None);
    /// ```
    #[must_use]
    pub fn shell_command(&self) -> Option<ShellCommand> {
        match self {
            crate::v1::Command::Steer {
                kind: SteerKind::Command,
                text,
            } => parse(text),
            _ => None,
        }
    }
}

impl crate::v2::Command {
    /// An untagged `steer` of kind `command` whose content is one text
    /// part, the envelope for `command` and its result ([`encode`]).
    ///
    /// ```
    /// use serve_command::shell::ShellOutput;
    /// use serve_command::v2::Command;
    /// let out = ShellOutput::new(Some(0), "hi", false);
    /// assert_eq!(
    ///     Command::shell_steer("echo hi", Ok(&out)).to_line(),
    ///     "{\"command\":\"steer\",\"kind\":\"command\",\"content\":\"<user_shell_command>\\n<command>\\n\
    ///      echo hi\\n</command>\\n<result>\\nexit=0\\nhi\\n</result>\\n</user_shell_command>\"}\n"
    /// );
    /// ```
    #[must_use]
    pub fn shell_steer(command: &str, result: Result<&ShellOutput, &str>) -> Self {
        crate::v2::Command::Steer {
            kind: SteerKind::Command,
            content: encode(command, result).into(),
            submission_id: None,
        }
    }

    /// The envelope this command carries, parsed ([`parse`]), whatever its
    /// `submission_id`.
    ///
    /// # Errors
    ///
    /// `None` unless this is a `steer` of kind `command` whose content is
    /// exactly one text part, and that text is an envelope.
    ///
    /// ```
    /// use serve_command::shell::ShellOutput;
    /// use serve_command::v2::{Command, ContentPart};
    /// use serve_command::v1::SteerKind;
    /// let out = ShellOutput::new(Some(0), "hi", false);
    /// let steer = Command::shell_steer("echo hi", Ok(&out));
    /// assert_eq!(steer.shell_command().map(|c| c.output), Some(vec!["hi".to_owned()]));
    /// // Two text parts are not one envelope, even when they spell one.
    /// let Command::Steer { content, .. } = steer else { unreachable!() };
    /// let text = content.to_text();
    /// let (a, b) = text.split_at(5);
    /// let split = Command::steer(SteerKind::Command, vec![ContentPart::Text(a.into()), ContentPart::Text(b.into())]);
    /// assert_eq!(split.shell_command(), None);
    /// ```
    #[must_use]
    pub fn shell_command(&self) -> Option<ShellCommand> {
        match self {
            crate::v2::Command::Steer {
                kind: SteerKind::Command,
                content,
                ..
            } => content.as_single_text().and_then(parse),
            _ => None,
        }
    }
}
