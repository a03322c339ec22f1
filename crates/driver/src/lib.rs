//! The workload driver of `reclaimsim validate`: named deterministic access
//! patterns ([`pattern`]) performed on real memory and a real file
//! ([`exec`], real mode) or written as a trace without touching memory
//! ([`trace`], dry mode). Both modes walk the same generator, so the trace
//! holds exactly the accesses real mode makes; both report the same digest.
#![deny(missing_docs)]

pub mod calibrate;
pub mod cli;
pub mod exec;
pub mod pattern;
pub mod trace;
