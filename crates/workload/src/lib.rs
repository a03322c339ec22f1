//! Built-in workloads: seeded generators of the seed documents' benchmarks.
//!
//! A workload is named and parameterised on the command line as
//! `NAME:key=value,...`. Sizes are absolute (`96M`) or relative to the machine's
//! memory (`0.5x`). Every workload is deterministic given the run seed.
#![deny(missing_docs)]

mod builders;
mod cases;
mod ctx;
pub mod ebizzy;
pub mod iobench;
pub mod memcache;
pub mod pgbench;
pub mod phases;
pub mod registry;
pub mod spec;
pub mod tabs;
#[cfg(test)]
mod test_util;

pub use registry::{add_workload, WORKLOADS};
pub use spec::{SpecError, WorkloadSpec};
