//! Properties of the v2 revision over random input: every decoding path
//! agrees with the independent model (`tests/support/model_v2.rs`) on
//! near-miss lines, every command survives every encoder, and the seed
//! revision's commands cross into v2 as their lines do (feature
//! `proptest`: the strategies are the crate's).
#![cfg(feature = "proptest")]

#[path = "support/model_v2.rs"]
mod model_v2;

use model_v2::model_v2;
use proptest::prelude::*;
use serde_json::Value;
use serve_command::generic::CommandReader;
use serve_command::v2::{strategy, Command, NotInV1};

/// What a path made of a line: the canonical line (no LF), or the message.
fn verdict(r: Result<Command, String>) -> Result<String, String> {
    r.map(|cmd| cmd.to_line().trim_end_matches('\n').to_owned())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    /// The model over `serde_json::Value` and the crate's byte path give
    /// each line the same verdict (the model cannot read lines serde_json
    /// refuses: nesting past 128, `1e400`).
    #[test]
    fn from_slice_agrees_with_the_model((line, outcome) in strategy::line()) {
        let got = verdict(Command::from_slice(line.as_bytes()).map_err(|e| e.to_string()));
        prop_assert_eq!(&got, &verdict(outcome));
        if let Ok(value) = serde_json::from_str::<Value>(&line) {
            prop_assert_eq!(&got, &model_v2(&value), "model");
            prop_assert_eq!(&got, &verdict(Command::from_json(&value).map_err(|e| e.to_string())), "parse");
            let de = serde_json::from_str::<Command>(&line).map_err(|e| {
                let msg = e.to_string();
                msg.rsplit_once(" at line ").map_or(msg.clone(), |(m, _)| m.to_owned())
            });
            prop_assert_eq!(&got, &verdict(de), "Deserialize");
        }
    }

    /// Every command's line decodes back to it, by every path, and every
    /// encoder writes the same bytes.
    #[test]
    fn commands_round_trip(cmd in strategy::command()) {
        let line = cmd.to_line();
        let mut written = Vec::new();
        cmd.write_line(&mut written).unwrap();
        prop_assert_eq!(&written, line.as_bytes());
        prop_assert_eq!(serde_json::to_string(&cmd).unwrap() + "\n", line.clone());
        prop_assert_eq!(Command::from_slice(line.as_bytes()), Ok(cmd.clone()));
        prop_assert_eq!(Command::from_json(&cmd.to_json()), Ok(cmd.clone()));
        prop_assert_eq!(serde_json::from_str::<Command>(&line).unwrap(), cmd.clone());
        let value: Value = serde_json::from_str(&line).unwrap();
        prop_assert_eq!(model_v2(&value), Ok(line.trim_end_matches('\n').to_owned()));
        let mut reader = CommandReader::<_, Command>::with_max_line_len(line.as_bytes(), line.len());
        prop_assert_eq!(reader.next().map(|r| r.map_err(|e| e.to_string())), Some(Ok(cmd)));
        prop_assert!(reader.next().is_none());
    }

    /// A seed command's canonical line, decoded by v2, is the command
    /// converted; and it converts back.
    #[test]
    fn v1_lines_read_in_v2_as_converted(cmd in serve_command::v1::strategy::command()) {
        let converted = Command::from(cmd.clone());
        prop_assert_eq!(Command::from_slice(cmd.to_line().as_bytes()), Ok(converted.clone()));
        prop_assert_eq!(serve_command::v1::Command::try_from(converted), Ok(cmd));
    }

    /// A v2 command the seed can carry: its seed line, read by v2, is the
    /// command again. One it cannot: the error says why.
    #[test]
    fn v2_commands_cross_to_v1_when_they_can(cmd in strategy::command()) {
        match serve_command::v1::Command::try_from(cmd.clone()) {
            Ok(v1) => prop_assert_eq!(Command::from_slice(v1.to_line().as_bytes()), Ok(cmd)),
            Err(e) => {
                let why = match &cmd {
                    Command::JobsSnapshot { .. } => NotInV1::JobCommand("jobs_snapshot"),
                    Command::JobStop { .. } => NotInV1::JobCommand("job_stop"),
                    Command::Steer { submission_id: Some(_), .. } => NotInV1::SteerTag,
                    Command::Prompt { content, .. } | Command::Steer { content, .. } => {
                        if content.is_text_only() {
                            NotInV1::Parts(content.parts().len())
                        } else {
                            NotInV1::Image
                        }
                    }
                    other => panic!("{other:?} has a seed form"),
                };
                prop_assert_eq!(e.reason(), why);
                prop_assert_eq!(e.into_command(), cmd);
            }
        }
    }
}
