//! Upstream's `<user_shell_command>` envelope
//! (`protocol/command_context/command_context.mbt` @ 35042ea4), transcribed line for
//! line with owned lines and slices, as plainly as it reads: the model that
//! `tests/shell.rs` and the `shell` fuzz target hold `serve_command::shell`
//! to. Slow on purpose; nothing here is shared with the crate.

/// `ShellCommand`'s fields: command, exit, output, output_limit_reached.
pub type Parsed = (String, String, Vec<String>, bool);

/// `encode(command, result)`: `Ok((exit_code, text, output_limit_reached))`
/// or `Err(error)`.
pub fn encode(command: &str, result: Result<(Option<i32>, &str, bool), &str>) -> String {
    let result_text = match result {
        Ok((exit_code, text, true)) => {
            let shown = text.chars().count();
            let header = match exit_code {
                Some(code) => format!("exit={code}"),
                None => "exit=cancelled".to_owned(),
            };
            format!(
                "{header}\ntruncated=true\noutput_limit_reached=true\nshown_chars={shown}\nmax_output_chars={shown}\n{text}"
            )
        }
        Ok((Some(code), text, false)) => format!("exit={code}\n{text}"),
        Ok((None, text, false)) => format!("exit=cancelled\n{text}"),
        Err(error) => format!("error running shell: {error}"),
    };
    format!(
        "<user_shell_command>\n<command>\n{command}\n</command>\n<result>\n{result_text}\n</result>\n</user_shell_command>"
    )
}

pub fn parse(content: &str) -> Option<Parsed> {
    let lines: Vec<String> = content
        .split('\n')
        .map(|raw| raw.trim_end_matches('\r').to_owned())
        .collect();
    let body = match lines.as_slice() {
        [a, b, body @ ..] if a == "<user_shell_command>" && b == "<command>" => body,
        _ => return None,
    };
    let body = match body {
        [body @ .., r, c] if r == "</result>" && c == "</user_shell_command>" => body,
        [body @ .., r, c, e]
            if r == "</result>" && c == "</user_shell_command>" && e.is_empty() =>
        {
            body
        }
        _ => return None,
    };
    for index in 0..body.len().saturating_sub(1) {
        if body[index] == "</command>" && body[index + 1] == "<result>" {
            return parse_shell_result(body[..index].join("\n"), &body[index + 2..]);
        }
    }
    None
}

fn parse_shell_result(command: String, lines: &[String]) -> Option<Parsed> {
    let Some((first, rest)) = lines.split_first() else {
        return Some((command, "failed".to_owned(), vec![], false));
    };
    if first.starts_with("error running shell:") {
        return Some((command, "failed".to_owned(), lines.to_vec(), false));
    }
    let exit = first.strip_prefix("exit=")?;
    let output_limit_reached = is_truncation_preamble(rest);
    let output = if output_limit_reached {
        &rest[4..]
    } else {
        rest
    };
    Some((
        command,
        exit.to_owned(),
        output.to_vec(),
        output_limit_reached,
    ))
}

fn is_truncation_preamble(lines: &[String]) -> bool {
    matches!(lines, [a, b, c, d, ..]
        if a.starts_with("truncated=")
            && b.starts_with("output_limit_reached=")
            && c.starts_with("shown_chars=")
            && d.starts_with("max_output_chars="))
}

/// Whether `parse(encode(command, result))` gives back `command` and the
/// result as they went in, derived from `parse`:
///
/// - no command line ends in CR (`parse` trims them), and no `</command>`
///   line in the command is followed by a `<result>` line (the first such
///   pair ends the command);
/// - no line of the text or of the error ends in CR;
/// - a run not cut off does not open its text with four lines keyed like
///   the truncation preamble (they would be taken for it).
///
/// Closing tags in the text are fine: `parse` anchors them at the end.
///
/// Outside this domain the envelope never gives back what went in.
pub fn round_trips(command: &str, result: Result<(Option<i32>, &str, bool), &str>) -> bool {
    let no_cr = |text: &str| text.split('\n').all(|l| !l.ends_with('\r'));
    let command_lines: Vec<&str> = command.split('\n').collect();
    let command_ok = no_cr(command)
        && !command_lines
            .windows(2)
            .any(|pair| pair == ["</command>", "<result>"]);
    let result_ok = match result {
        Ok((_, text, limit)) => {
            let lines: Vec<String> = text.split('\n').map(str::to_owned).collect();
            no_cr(text) && (limit || !is_truncation_preamble(&lines))
        }
        Err(error) => no_cr(error),
    };
    command_ok && result_ok
}

/// What `parse` gives back for `encode(command, result)` inside the
/// [`round_trips`] domain.
pub fn expected(command: &str, result: Result<(Option<i32>, &str, bool), &str>) -> Parsed {
    let lines = |text: &str| text.split('\n').map(str::to_owned).collect::<Vec<_>>();
    match result {
        Ok((code, text, limit)) => (
            command.to_owned(),
            code.map_or_else(|| "cancelled".to_owned(), |c| c.to_string()),
            lines(text),
            limit,
        ),
        Err(error) => (
            command.to_owned(),
            "failed".to_owned(),
            lines(&format!("error running shell: {error}")),
            false,
        ),
    }
}
