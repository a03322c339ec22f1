//! reclaimsim's randomness: the seeded xoshiro256++ generator ([`SimRng`]) and
//! the page popularity samplers ([`Sampler`]) built on it.
//!
//! Layer: a leaf; it depends on nothing of ours, so the simulator's workloads
//! and the kernel-validation driver (which must not link the simulator) draw
//! the same streams from the same code.
#![deny(missing_docs)]

pub mod rng;
pub mod sampler;

pub use rng::SimRng;
pub use sampler::{AliasTable, Sampler};
