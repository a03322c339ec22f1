//! The discrete-event engine: virtual time, workload threads, kswapd, devices.
//!
//! Layer: above `reclaim` and `mm`. The engine owns the fault path (look up the
//! page; on a miss allocate a frame, waking kswapd below the low watermark and
//! reclaiming directly below min; insert the page) and turns reclaim's writeback
//! submissions into device completions.
//!
//! **Architecture invariant:** the engine alone owns time and scheduling, and it
//! never asks which reclaim policy is running. No wall clock, no threads, no
//! hash-ordered iteration: the same inputs give bit-identical results.
#![deny(missing_docs)]

pub mod config;
pub mod device;
pub mod memcg;
pub mod oom;
pub mod profile;
pub mod program;
pub mod psi;
pub mod report;
pub mod sched;
pub mod senpai;
pub mod sim;
pub mod swap_ra;
pub mod timeseries;
pub mod writeback;
pub mod zoneinfo;

pub use config::{Config, ConfigError, CpuCosts};
pub use device::{Device, DeviceKind};
pub use program::{Access, ControlWrite, Program, Step};
pub use psi::{PsiLine, PsiMemory};
pub use report::{CgroupReport, RunReport, Snapshot, ThreadReport};
pub use sim::{Progress, Sim, SimBuilder, SimError};
pub use timeseries::Timeseries;

/// Nanoseconds of virtual time.
pub type Nanos = u64;

/// KERNEL: `HZ` on the machines the seeds and our validation use (CONFIG_HZ=250).
pub const HZ: u64 = 250;
/// One jiffy in nanoseconds.
pub const JIFFY_NS: Nanos = 1_000_000_000 / HZ;
