//! A scale model: a small simulated machine standing for a bigger one.
//!
//! Reproductions and sampled miss-ratio curves run a machine smaller than the
//! one they describe, with every workload size taken as a share of memory.
//! Most of reclaim then behaves alike at both sizes, because its arithmetic is
//! linear in the list sizes. `inactive_is_low()`'s target ratio is not: it is
//! the square root of the LRU's size in GB, so a 256M machine keeps half of
//! its anon pages inactive where a 7G machine keeps an eighth, and a page has
//! four times as long to be referenced again before it is evicted. With
//! `memory.scaled_from=SIZE` the ratio is evaluated for the lists' size on the
//! machine of SIZE.
//!
//! Simplification S-SM1: nothing else scales. The boot-time
//! `vm.min_free_kbytes` is also a square root of memory, but the watermark gap
//! it sets must stay many reclaim batches wide, and SWAP_CLUSTER_MAX, the
//! per-CPU lists' batches, readahead windows and `vm.page-cluster` keep their
//! page counts: scaled down 60 times, a 128M machine's high watermark would be
//! 110 pages, three batches. The watermarks are the small machine's own, whose
//! share of memory differs by under 1% of memory.

/// The ratio between the machine a run stands for (the model) and the
/// simulated one; the identity when they are the same size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScaleModel {
    model_bytes: u64,
    machine_bytes: u64,
}

impl ScaleModel {
    /// The simulated machine is the machine described.
    pub const IDENTITY: ScaleModel = ScaleModel { model_bytes: 1, machine_bytes: 1 };

    /// A machine of `machine_bytes` standing for one of `model_bytes`.
    pub fn new(model_bytes: u64, machine_bytes: u64) -> ScaleModel {
        assert!(model_bytes > 0 && machine_bytes > 0, "a scale model needs two sizes");
        ScaleModel { model_bytes, machine_bytes }
    }

    /// `x` (pages, bytes or KiB) of the simulated machine as the same share of the model.
    pub fn to_model(self, x: u64) -> u64 {
        (x as u128 * self.model_bytes as u128 / self.machine_bytes as u128) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_changes_nothing() {
        for x in [0, 1, 31, 1 << 40] {
            assert_eq!(ScaleModel::IDENTITY.to_model(x), x);
        }
    }

    /// A 256M machine standing for 7G (28 times larger): 1G of its pages is
    /// 28G of the model's; 36 pages are 1008, 37 are 1036.
    #[test]
    fn shares_are_kept() {
        let s = ScaleModel::new(7 << 30, 256 << 20);
        assert_eq!(s.to_model(1 << 30), 28 << 30);
        assert_eq!(s.to_model(36), 1008);
        assert_eq!(s.to_model(37), 1036);
    }
}
