//! Real traces for reclaimsim: our binary format, converters from other
//! formats, statistics, the offline optimum (Belady's MIN), LRU miss-ratio
//! curves. Replaying a trace on the simulated machine is `experiment::replay`.
//!
//! Layer: above `mm` (page size) only; it knows no engine. Below `experiment` and `cli`.
//!
//! **Architecture invariant:** this crate opens no files and reads no clock.
//! Readers take an `impl BufRead` plus a source label for errors; scratch
//! storage for Belady is supplied by the caller. The one thread it starts
//! is [`prefetch`]'s read-ahead, which changes no byte the reader sees. Everything streams: memory
//! depends on the number of distinct pages, never on the trace length.
#![deny(missing_docs)]

pub mod belady;
pub mod convert;
pub mod error;
pub mod format;
pub mod prefetch;
pub mod reader;
pub mod refs;
pub mod sample;
pub mod stack;
pub mod stats;
pub mod synth;
pub mod writer;

pub use error::{ErrorKind, Location, TraceError};
pub use format::{Decl, Event, Header, Record};
pub use reader::TraceReader;
pub use writer::TraceWriter;
