//! Tracepoint recording on the engine's side: installing a sink, the
//! records of the engine's own call sites that need more than one line
//! (page insertion, throttling). The records are `mm::tracepoint`'s; the
//! front end formats them.

use super::{Machine, SimBuilder};
use crate::Nanos;
use mm::tracepoint::{Task, ThrottleState, TraceSink, Tracepoint, Tracer};
use mm::Pfn;
use reclaim::throttle::ThrottleReason;
use reclaim::Origin;

impl SimBuilder {
    /// Records the run's tracepoints into `sink` (`run --events`). Without
    /// it, every call site costs one test of an empty `Option`.
    pub fn set_tracer(&mut self, sink: Box<dyn TraceSink>) {
        self.m.mm.tracer = Some(Box::new(Tracer { sink, now_ns: 0, task: Task::Thread(0) }));
    }

    /// The threads' names in the order they were added: [`Task::Thread`]`(n)` is the `n`-th.
    pub fn thread_names(&self) -> Vec<String> {
        self.threads.iter().map(|t| t.name.clone()).collect()
    }
}

impl Machine {
    /// The policy lists `pfn` (`add_page`), then `mm_filemap_add_to_page_cache`
    /// (a page-cache page), `mm_lru_insertion` and `reclaimsim_lru_add` are
    /// recorded. Simplification: the page-cache insertion is recorded after the
    /// refault check (the kernel's comes first), so that one test covers the call site.
    #[cold]
    #[inline(never)]
    pub(super) fn traced_lru_add(&mut self, pfn: Pfn, origin: Origin, shadow: Option<mm::Shadow>) {
        self.policy.add_page(&mut self.mm, pfn, origin, shadow);
        let shadow = shadow.is_some();
        if matches!(origin, Origin::FileRead | Origin::FileFault) {
            self.mm.trace(|| Tracepoint::FilemapAdd { pfn });
        }
        self.mm.trace(|| Tracepoint::LruInsertion { pfn });
        let origin = match origin {
            Origin::AnonFault => "anon_fault",
            Origin::SwapIn => "swapin",
            Origin::FileRead => "read",
            Origin::FileFault => "file_fault",
        };
        self.mm.trace(|| Tracepoint::SimLruAdd { pfn, shadow, origin });
    }
}

/// `mm_vmscan_throttled` (or a pre-5.16 congestion wait) for a reclaimer that
/// waited `waited` of at most `timeout` for `reason`.
pub(super) fn throttled(reason: ThrottleReason, timeout: Nanos, waited: Nanos) -> Tracepoint {
    let reason = match reason {
        ThrottleReason::CongestionWait => ThrottleState::CongestionWait,
        ThrottleReason::IffCongested => ThrottleState::WaitIffCongested,
        ThrottleReason::Writeback => ThrottleState::Writeback,
        ThrottleReason::Congested => ThrottleState::Congested,
    };
    Tracepoint::Throttled { usec_timeout: timeout / 1000, usec_delayed: waited / 1000, reason }
}
