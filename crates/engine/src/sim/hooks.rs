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

    /// A thread's clock passed its horizon at `clock`: takes the samples it
    /// crossed that no other actor is behind, and returns the new horizon
    /// (the next event, the time limit or the next sample).
    pub(super) fn horizon_after(&mut self, clock: Nanos, limit: Nanos) -> Nanos {
        let events = self.queue.next_time().min(limit);
        self.sample_until(clock.saturating_sub(1).min(events));
        events.min(self.sampler.next_at())
    }

    /// The thread at `clock` yields if it passed `*horizon`; on passing, the
    /// horizon is renewed after taking the samples crossed.
    #[inline]
    pub(super) fn must_yield(&mut self, clock: Nanos, limit: Nanos, horizon: &mut Nanos) -> bool {
        if clock <= *horizon {
            return false;
        }
        *horizon = self.horizon_after(clock, limit);
        clock > *horizon
    }
}
