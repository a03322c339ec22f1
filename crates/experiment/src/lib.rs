//! One experiment: a run request (workloads, profile, settings, seed) resolved
//! into a ready simulation, and the run's result document, the JSON that
//! `reclaimsim run --json` writes.
//!
//! Layer: above `workload` and `engine`, below the two front ends, the command
//! line and the Python package, which both prepare runs and describe results
//! through this crate so that the same request gives the same document.
//! No clock and no output file: the caller measures wall time and writes
//! results; the one file read here is a replayed trace.
#![deny(missing_docs)]

mod document;
pub mod replay;
mod request;
mod trace_input;

pub use document::RunInfo;
pub use request::{prepare, InputError, Prepared, Request};
pub use trace_input::{open_trace, TraceOutcome, TraceRun};
