//! Line-by-line reading of text traces with line numbers and a line-length bound.

use crate::error::{ErrorKind, Location, TraceError};
use std::io::{BufRead, Read};

/// SIM-CHOICE: longest accepted line (strace lines with long strings fit).
const MAX_LINE_BYTES: usize = 1 << 20;

/// Reads lines, tracking the 1-based number of the current one.
pub struct Lines<'a> {
    input: &'a mut dyn BufRead,
    source: &'a str,
    buf: Vec<u8>,
    line: u64,
}

impl<'a> Lines<'a> {
    /// Lines of `input`, named `source` in errors.
    pub fn new(input: &'a mut dyn BufRead, source: &'a str) -> Lines<'a> {
        Lines { input, source, buf: Vec::new(), line: 0 }
    }

    /// The next line without its line ending, with its location, or `None` at the end.
    pub fn next_line(&mut self) -> Result<Option<(At<'a>, &str)>, TraceError> {
        self.buf.clear();
        self.line += 1;
        let n = Read::take(&mut self.input, MAX_LINE_BYTES as u64 + 1)
            .read_until(b'\n', &mut self.buf)
            .map_err(|e| self.error(ErrorKind::Io, e.to_string()))?;
        if n == 0 {
            return Ok(None);
        }
        if self.buf.len() > MAX_LINE_BYTES {
            return Err(self.error(ErrorKind::Limit, format!("line longer than {MAX_LINE_BYTES} bytes")));
        }
        while matches!(self.buf.last(), Some(b'\n' | b'\r')) {
            self.buf.pop();
        }
        let at = At { source: self.source, line: self.line };
        std::str::from_utf8(&self.buf).map(|l| Some((at, l))).map_err(|_| {
            TraceError::new(self.source, Location::Line(self.line), ErrorKind::Malformed, "line is not UTF-8 text")
        })
    }

    fn error(&self, kind: ErrorKind, message: impl Into<String>) -> TraceError {
        TraceError::new(self.source, Location::Line(self.line), kind, message)
    }
}

/// The location of a line, for errors.
#[derive(Clone, Copy, Debug)]
pub struct At<'a> {
    source: &'a str,
    /// 1-based line number.
    pub line: u64,
}

impl At<'_> {
    /// An error at this line.
    pub fn error(self, kind: ErrorKind, message: impl Into<String>) -> TraceError {
        TraceError::new(self.source, Location::Line(self.line), kind, message)
    }
}
