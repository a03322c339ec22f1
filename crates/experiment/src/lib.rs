//! One experiment: a run request (workloads, profile, settings, seed) resolved
//! into a ready simulation, and the run's result document, the JSON that
//! `reclaimsim run --json` writes.
//!
//! Layer: above `workload` and `engine`, below the two front ends, the command
//! line and the Python package, which both prepare runs and describe results
//! through this crate so that the same request gives the same document.
//! No clock, no file: the caller measures wall time and writes files.
#![deny(missing_docs)]

mod document;
mod request;

pub use document::RunInfo;
pub use request::{prepare, InputError, Prepared, Request};
