//! The controller's model of the serve loop, fed what crosses a test's
//! pipes in the order it crosses: a command before it is written (the
//! engine cannot answer what it has not read), an event as it is read.

use serve_command::v2::serve::Conversation;
use std::sync::{Arc, Mutex};

/// A `Conversation` any thread of a test may feed, and the events that fit
/// no rule of it.
#[derive(Clone, Default)]
pub struct Attributed(Arc<Mutex<(Conversation, Vec<String>)>>);

impl Attributed {
    /// A command line (LF included) about to be written.
    pub fn command(&self, line: &str) {
        self.0.lock().unwrap().0.command(line.as_bytes());
    }

    /// An event line just read.
    pub fn event(&self, line: &str) {
        let mut model = self.0.lock().unwrap();
        if let Some(violation) = model.0.event(line.as_bytes()).violation {
            model.1.push(format!("{line}: {violation}"));
        }
    }

    /// Every event fit a rule, and nothing is owed.
    #[track_caller]
    pub fn assert_settled(&self) {
        let model = self.0.lock().unwrap();
        assert_eq!(model.1, Vec::<String>::new(), "events that fit no rule");
        assert!(
            model.0.owed().is_empty(),
            "still owed: {:?}",
            model.0.owed()
        );
    }
}
