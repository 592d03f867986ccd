//! `command_error` both ways: every message the engine's side of the crate
//! writes (a line's error, a reader's error, a refusal) reads back, from
//! the event line, as the cause it was written from. The two cannot drift.

#[path = "support/vectors.rs"]
mod format;

use format::Outcome;
use serve_command::v2::{
    Command, CommandErrorCause, CommandReader, Event, LineError, ReadError, Refusal,
};

/// `line` is a `command_error` event whose cause is `cause`, and exactly the
/// line `Event::command_error` writes for that cause.
#[track_caller]
fn reads_back(line: &str, cause: &CommandErrorCause) {
    let event: Event = line.trim_end_matches('\n').parse().expect("an event");
    assert_eq!(event.command_error_cause().as_ref(), Some(cause), "{line}");
    assert_eq!(Event::from(cause.clone()).to_line(), line);
}

#[test]
fn every_line_error_reads_back_as_its_cause() {
    let (mut commands, mut stream) = (0, 0);
    for (line, expected, why) in format::bytes(format::V2) {
        let Err(error) = Command::from_slice(&line) else {
            continue;
        };
        let cause = match (&error, expected) {
            (LineError::Parse(e), Outcome::Error(message)) => {
                assert_eq!(e.to_string(), message, "{why}");
                commands += 1;
                CommandErrorCause::NotACommand(e.clone())
            }
            (LineError::Syntax(e), Outcome::NotJson) => {
                stream += 1;
                CommandErrorCause::StreamEnded(e.to_string())
            }
            (e, expected) => panic!("{why}: {e:?}, the vector says {expected:?}"),
        };
        reads_back(&error.event_line(), &cause);
    }
    assert!(commands > 300 && stream > 20, "{commands} {stream}");
}

#[test]
fn every_reader_error_reads_back_as_its_cause() {
    let stream =
        b"{\"command\":\"nap\"}\n{\"command\n{\"command\":\"cancel\",\"pad\":\"0123456789\"}\n";
    let errors: Vec<ReadError> = CommandReader::with_max_line_len(&stream[..], 30)
        .filter_map(Result::err)
        .collect();
    let causes = [
        CommandErrorCause::NotACommand(serve_command::v2::ParseError::UnknownCommand("nap".into())),
        CommandErrorCause::StreamEnded("unterminated string at byte 1".into()),
        CommandErrorCause::StreamEnded("line 3 is longer than 30 bytes".into()),
    ];
    assert_eq!(errors.len(), causes.len());
    for (error, cause) in errors.iter().zip(&causes) {
        reads_back(&error.event_line(), cause);
    }
    let failed = ReadError::Io(std::io::Error::other("pipe gone"));
    reads_back(
        &failed.event_line(),
        &CommandErrorCause::StreamEnded("read failed: pipe gone".into()),
    );
}

#[test]
fn every_refusal_reads_back_as_its_cause() {
    let refusals = [
        (Command::goal_set("  "), Refusal::BlankGoal),
        (
            Command::steer(
                serve_command::v2::SteerKind::Command,
                serve_command::v2::Image::from_base64("image/png", "iVBORw0KGgo=").unwrap(),
            ),
            Refusal::CommandSteerImage,
        ),
    ];
    for (command, refusal) in refusals {
        assert_eq!(
            command
                .serve_refusal()
                .map(serve_command::v2::Refusal::as_str),
            Some(refusal.as_str())
        );
        let line = command.serve_refusal_event_line().expect("a refusal");
        reads_back(&line, &CommandErrorCause::Refused(refusal));
    }
    for (refused, (line, _, why)) in format::refusals(format::SERVE_V2)
        .into_iter()
        .zip(format::bytes(format::SERVE_V2))
    {
        let Some(message) = refused else { continue };
        let command = Command::from_slice(&line).expect(&why);
        let event = command.serve_refusal_event_line().expect(&why);
        let Ok(cause) = message.parse::<CommandErrorCause>();
        assert!(
            matches!(cause, CommandErrorCause::Refused(_)),
            "{why}: {cause:?}"
        );
        reads_back(&event, &cause);
    }
}

/// A message the crate does not know is kept, verbatim: a newer engine's.
#[test]
fn an_unknown_message_is_kept() {
    let cause: CommandErrorCause = "the model is asleep".parse().unwrap();
    assert_eq!(
        cause,
        CommandErrorCause::Unknown("the model is asleep".into())
    );
    assert!(!cause.engine_stopped());
    assert_eq!(cause.to_string(), "the model is asleep");
    assert_eq!(Event::agent_step(1).command_error_cause(), None);
}
