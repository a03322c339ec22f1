//! Errors for bad trace input: what went wrong and where (source, line or byte offset).

use std::fmt;

/// Where in an input an error was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Location {
    /// A byte offset (binary inputs; for compressed record streams, the offset
    /// in the decompressed stream, header included).
    Byte(u64),
    /// A 1-based line number of a text input.
    Line(u64),
    /// No position applies (an I/O failure before any data).
    Nowhere,
}

/// What kind of problem an input has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Reading or writing failed.
    Io,
    /// The input is not what its format says (bad magic, bad field, truncated).
    Malformed,
    /// The input is well-formed but exceeds a limit (absurd sizes or counts).
    Limit,
}

/// A trace input or output error, with its location.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceError {
    /// The input's label (a file name, `<stdin>`).
    pub source: String,
    /// Where.
    pub at: Location,
    /// What kind of problem.
    pub kind: ErrorKind,
    /// What was expected and what was found.
    pub message: String,
}

impl TraceError {
    /// A new error.
    pub fn new(source: &str, at: Location, kind: ErrorKind, message: impl Into<String>) -> TraceError {
        TraceError { source: source.to_string(), at, kind, message: message.into() }
    }

    /// An I/O error at a location.
    pub fn io(source: &str, at: Location, e: &std::io::Error) -> TraceError {
        TraceError::new(source, at, ErrorKind::Io, e.to_string())
    }
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.at {
            Location::Byte(b) => write!(f, "{}: byte offset {b}: {}", self.source, self.message),
            Location::Line(l) => write!(f, "{}:{l}: {}", self.source, self.message),
            Location::Nowhere => write!(f, "{}: {}", self.source, self.message),
        }
    }
}

impl std::error::Error for TraceError {}
