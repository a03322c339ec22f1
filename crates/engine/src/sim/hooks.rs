//! Hooks for programs that embed the engine (the Python package): a reclaim
//! policy supplied from outside the registry, and periodic state samples.

use super::{Machine, SimBuilder};
use crate::timeseries::Sampler;
use crate::Nanos;
use reclaim::policy::ReclaimPolicy;

impl SimBuilder {
    /// Replaces the configured policy (`lru=`) with `policy`. Call it before
    /// the run: the old policy holds no page yet.
    pub fn set_policy(&mut self, policy: Box<dyn ReclaimPolicy>) {
        self.m.policy = policy;
    }

    /// Samples the machine every `interval_ns` of virtual time; the report's
    /// `timeseries` holds the samples.
    pub fn sample_every(&mut self, interval_ns: Nanos) {
        self.m.sampler = Sampler::every(interval_ns);
    }
}

impl Machine {
    /// Takes every sample due at or before `t`; the caller guarantees that no
    /// actor is behind `t`.
    pub(super) fn sample_until(&mut self, t: Nanos) {
        while self.sampler.next_at() <= t {
            self.sampler.record(&self.mm, self.policy.lru_sizes());
        }
    }
}
