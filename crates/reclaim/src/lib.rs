//! Page reclaim policies and the reclaim drivers (kswapd, direct reclaim).
//!
//! Layer: above `mm`, below `engine`. The policy decides which pages to reclaim;
//! this crate never allocates frames for workloads, schedules events or touches
//! devices: pages submitted for writeback are returned to the caller in
//! [`ScanControl::pageout`], and the engine turns them into I/O (inside a
//! direct reclaim call, after each batch, through [`direct::PassTime`]).
//!
//! **Architecture invariant:** `reclaim` reads no clock, randomness or file.
#![deny(missing_docs)]

pub mod config;
pub mod control;
pub mod direct;
pub mod eligible;
pub mod kswapd;
pub mod memcg;
pub mod memcg_lru;
pub mod node_reclaim;
pub mod pageout;
pub mod policy;
pub mod rmap;
mod routed;
pub mod scale;
pub mod shrinker;
pub mod shrinker_fs;
pub mod shrinker_shadow;
pub mod shrinker_zswap;
pub mod throttle;
pub mod tree;
pub mod watermark;
pub mod workingset;
pub mod zoned;

pub use config::{Balance, DirtyConfig, DirtyThrottle, LruGenConfig, ReclaimConfig};
pub use control::{ReclaimWork, Reclaimer, ScanControl};
pub use policy::{Origin, ReclaimPolicy};
pub use scale::ScaleModel;
pub use shrinker::ShrinkerConfig;

/// KERNEL: `SWAP_CLUSTER_MAX`, the reclaim batch size.
pub const SWAP_CLUSTER_MAX: u64 = 32;
/// KERNEL: `DEF_PRIORITY`; a pass scans `size >> priority` pages of each list.
pub const DEF_PRIORITY: i32 = 12;
/// KERNEL: `MAX_RECLAIM_RETRIES`, kswapd's give-up threshold.
pub const MAX_RECLAIM_RETRIES: u32 = 16;
