//! An in-memory pipe, one direction: what the writer wrote, read as it
//! comes, and the end when the writer is dropped. For driving an engine in
//! process (`MockEngine` in a thread) without OS pipes.

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::sync::{Arc, Condvar, Mutex};

/// What the writer wrote, and whether it has closed.
#[derive(Default)]
pub struct Pipe {
    bytes: Mutex<(VecDeque<u8>, bool)>,
    ready: Condvar,
}

pub struct PipeReader(Arc<Pipe>);
pub struct PipeWriter(Arc<Pipe>);

pub fn pipe() -> (PipeReader, PipeWriter) {
    let pipe = Arc::new(Pipe::default());
    (PipeReader(Arc::clone(&pipe)), PipeWriter(pipe))
}

impl Read for PipeReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut bytes = self.0.bytes.lock().unwrap();
        while bytes.0.is_empty() && !bytes.1 {
            bytes = self.0.ready.wait(bytes).unwrap();
        }
        let k = buf.len().min(bytes.0.len());
        for (slot, byte) in buf.iter_mut().zip(bytes.0.drain(..k)) {
            *slot = byte;
        }
        Ok(k)
    }
}

impl Write for PipeWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.bytes.lock().unwrap().0.extend(buf);
        self.0.ready.notify_all();
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for PipeWriter {
    fn drop(&mut self) {
        self.0.bytes.lock().unwrap().1 = true;
        self.0.ready.notify_all();
    }
}
