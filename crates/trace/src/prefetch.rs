//! Read-ahead on another core: a thread pulls blocks from a slow [`Read`]
//! (zstd decompression, a quarter of a compressed replay's time) while the
//! consumer works on the block before. The bytes and their order are exactly
//! the input's, so results cannot depend on it; only the wall time does.
//!
//! Memory stays bounded: at most [`DEPTH`] blocks wait in the channel.

use std::io::{self, Read};
use std::sync::mpsc::{sync_channel, Receiver};
use std::thread;

/// SIM-CHOICE: blocks decoded ahead of the consumer (each [`crate::reader::BLOCK_BYTES`]).
pub const DEPTH: usize = 2;

/// A [`Read`] whose bytes come from `inner`, read by a background thread.
/// Dropping it stops the thread at its next block.
pub struct Prefetch {
    rx: Receiver<io::Result<Vec<u8>>>,
    /// The block being consumed and the position in it.
    block: Vec<u8>,
    pos: usize,
    /// The thread has sent its last message.
    done: bool,
}

impl Prefetch {
    /// Starts the read-ahead thread on `inner`, in blocks of `block_bytes`.
    pub fn new<R: Read + Send + 'static>(mut inner: R, block_bytes: usize) -> io::Result<Prefetch> {
        let (tx, rx) = sync_channel(DEPTH);
        thread::Builder::new().name("trace-read-ahead".into()).spawn(move || loop {
            let mut buf = vec![0u8; block_bytes];
            let mut got = 0;
            let mut failed = None;
            while got < buf.len() {
                match inner.read(&mut buf[got..]) {
                    Ok(0) => break,
                    Ok(n) => got += n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        failed = Some(e);
                        break;
                    }
                }
            }
            let end = got < buf.len();
            buf.truncate(got);
            // A send fails only when the reader was dropped: nothing more to do.
            if got > 0 && tx.send(Ok(buf)).is_err() {
                return;
            }
            if let Some(e) = failed {
                let _ = tx.send(Err(e));
                return;
            }
            if end {
                return;
            }
        })?;
        Ok(Prefetch { rx, block: Vec::new(), pos: 0, done: false })
    }
}

impl Read for Prefetch {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.pos == self.block.len() {
            if self.done {
                return Ok(0);
            }
            match self.rx.recv() {
                Ok(Ok(b)) => {
                    self.block = b;
                    self.pos = 0;
                }
                Ok(Err(e)) => {
                    self.done = true;
                    return Err(e);
                }
                // The thread ended after its last block: the input's end.
                Err(_) => self.done = true,
            }
        }
        let n = buf.len().min(self.block.len() - self.pos);
        buf[..n].copy_from_slice(&self.block[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hands out its bytes a few at a time, then fails once if asked to.
    struct Dribble {
        data: Vec<u8>,
        pos: usize,
        fail_at_end: bool,
    }

    impl Read for Dribble {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.pos == self.data.len() {
                if std::mem::take(&mut self.fail_at_end) {
                    return Err(io::Error::new(io::ErrorKind::InvalidData, "bad frame"));
                }
                return Ok(0);
            }
            let n = buf.len().min(7).min(self.data.len() - self.pos);
            buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
            self.pos += n;
            Ok(n)
        }
    }

    #[test]
    fn yields_the_inputs_bytes_in_order_across_blocks() {
        let data: Vec<u8> = (0..10_000u32).map(|i| (i * 31 % 251) as u8).collect();
        let mut p = Prefetch::new(Dribble { data: data.clone(), pos: 0, fail_at_end: false }, 64).unwrap();
        let mut out = Vec::new();
        p.read_to_end(&mut out).unwrap();
        assert_eq!(out, data);
        assert_eq!(p.read(&mut [0u8; 8]).unwrap(), 0, "stays at its end");
    }

    #[test]
    fn an_error_comes_after_the_bytes_before_it() {
        let data = vec![5u8; 100];
        let mut p = Prefetch::new(Dribble { data, pos: 0, fail_at_end: true }, 64).unwrap();
        let mut buf = [0u8; 100];
        let mut got = 0;
        let err = loop {
            match p.read(&mut buf[got..]) {
                Ok(n) => got += n,
                Err(e) => break e,
            }
        };
        assert_eq!(got, 100);
        assert_eq!(err.to_string(), "bad frame");
    }
}
