//! One experiment: a run request (workloads, profile, settings, seed) resolved
//! into a ready simulation, and the run's result document, the JSON that
//! `reclaimsim run --json` writes.
//!
//! Layer: above `workload` and `engine`, below the two front ends, the command
//! line and the Python package, which both prepare runs and describe results
//! through this crate so that the same request gives the same document.
//! No clock and no output file: the caller measures wall time and writes
//! results; the files read here are a replayed trace and `/proc/meminfo`
//! (for the size check of `limits`, which refuses a run but never changes one).
#![deny(missing_docs)]

mod document;
pub mod limits;
pub mod mrc;
pub mod replay;
pub mod reproduce;
mod request;
pub mod sections;
pub mod suggest;
mod trace_input;

pub use document::RunInfo;
pub use request::{prepare, InputError, Prepared, Request};
pub use trace_input::{open_trace, trace_header, TraceOutcome, TraceRun};

/// The git commit this build came from (12 hex digits, `+dirty` never added; `unknown` outside a git checkout).
pub const COMMIT: &str = env!("RECLAIMSIM_COMMIT");

/// `0.1.0 (commit 1a2b3c4d5e6f)`: what `--version` and the result document say.
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (commit ", env!("RECLAIMSIM_COMMIT"), ")");
