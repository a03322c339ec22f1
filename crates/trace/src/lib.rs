//! Real traces for reclaimsim: our binary format, converters from other
//! formats, statistics, the offline optimum (Belady's MIN), LRU miss-ratio
//! curves, and replay on the simulated machine.
//!
//! Layer: above `engine` (the replay is an `engine::Program`), below `cli`.
//!
//! **Architecture invariant:** this crate opens no files and reads no clock.
//! Readers take an `impl BufRead` plus a source label for errors; scratch
//! storage for Belady is supplied by the caller. Everything streams: memory
//! depends on the number of distinct pages, never on the trace length.
#![deny(missing_docs)]

pub mod belady;
pub mod convert;
pub mod error;
pub mod format;
pub mod reader;
pub mod refs;
pub mod replay;
pub mod stack;
pub mod stats;
pub mod synth;
pub mod writer;

pub use error::{ErrorKind, Location, TraceError};
pub use format::{Decl, Event, Header, Record};
pub use reader::TraceReader;
pub use writer::TraceWriter;
