//! PLACEHOLDER until the helper's Recorder lands.

use std::fmt;
use std::io::Write;
use std::sync::Mutex;

/// Records a session.
pub struct Recorder {
    out: Mutex<Box<dyn Write + Send>>,
}

impl fmt::Debug for Recorder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Recorder").finish_non_exhaustive()
    }
}

impl Recorder {
    /// New.
    pub fn new(writer: impl Write + Send + 'static) -> Recorder {
        Recorder {
            out: Mutex::new(Box::new(writer)),
        }
    }
    /// A command line.
    pub fn command(&self, line: &[u8]) {
        let _ = self.out.lock().map(|mut o| o.write_all(line));
    }
    /// An event line.
    pub fn event(&self, line: &[u8]) {
        let _ = self.out.lock().map(|mut o| o.write_all(line));
    }
    /// A stderr line.
    pub fn stderr(&self, line: &[u8]) {
        let _ = self.out.lock().map(|mut o| o.write_all(line));
    }
}
