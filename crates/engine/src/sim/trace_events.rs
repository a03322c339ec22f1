//! Tracepoint recording on the engine's side: installing a sink, the
//! records of the engine's own call sites that need more than one line
//! (page insertion, throttling). The records are `mm::tracepoint`'s; the
//! front end formats them.

use super::SimBuilder;
use crate::Nanos;
use mm::tracepoint::{Task, ThrottleState, TraceSink, Tracepoint, Tracer};
use mm::{Mm, Pfn, Shadow};
use reclaim::direct::PassTime;
use reclaim::pageout::PageoutEnv;
use reclaim::policy::{AccessKind, ControlError, ControlOp, LruSizes, ReclaimPolicy};
use reclaim::throttle::ThrottleReason;
use reclaim::{Origin, ScanControl};

impl SimBuilder {
    /// Records the run's tracepoints into `sink` (`run --events`). Without
    /// it, listing a page tests nothing (see [`Traced`]) and the other call
    /// sites one test of an empty `Option` each.
    pub fn set_tracer(&mut self, sink: Box<dyn TraceSink>) {
        self.m.mm.tracer = Some(Box::new(Tracer { sink, now_ns: 0, task: Task::Thread(0) }));
    }

    /// The threads' names in the order they were added: [`Task::Thread`]`(n)` is the `n`-th.
    pub fn thread_names(&self) -> Vec<String> {
        self.threads.iter().map(|t| t.name.clone()).collect()
    }
}

/// `policy` with the page-listing records ([`Traced`]): `build`'s last step
/// when recording is on.
pub(super) fn traced(policy: Box<dyn ReclaimPolicy>) -> Box<dyn ReclaimPolicy> {
    Box::new(Traced(policy))
}

/// The policy while recording: it lists a page (`add_page`), then records
/// `mm_filemap_add_to_page_cache` (a page-cache page), `mm_lru_insertion` and
/// `reclaimsim_lru_add`; everything else goes straight to the policy. Built
/// only when a sink is installed, so listing a page tests nothing when
/// recording is off. It forwards every method, those with a default too (a
/// method added to the trait must be forwarded here). Simplification: the
/// page-cache insertion is recorded after the refault check (the kernel's
/// comes first).
struct Traced(Box<dyn ReclaimPolicy>);

impl ReclaimPolicy for Traced {
    fn add_page(&mut self, mm: &mut Mm, pfn: Pfn, origin: Origin, shadow: Option<Shadow>) {
        self.0.add_page(mm, pfn, origin, shadow);
        let shadow = shadow.is_some();
        if matches!(origin, Origin::FileRead | Origin::FileFault) {
            mm.trace(|| Tracepoint::FilemapAdd { pfn });
        }
        mm.trace(|| Tracepoint::LruInsertion { pfn });
        let origin = match origin {
            Origin::AnonFault => "anon_fault",
            Origin::SwapIn => "swapin",
            Origin::FileRead => "read",
            Origin::FileFault => "file_fault",
        };
        mm.trace(|| Tracepoint::SimLruAdd { pfn, shadow, origin });
    }
    fn name(&self) -> &'static str {
        self.0.name()
    }
    fn on_access(&mut self, mm: &mut Mm, pfn: Pfn, via: AccessKind) {
        self.0.on_access(mm, pfn, via)
    }
    fn shrink_node(&mut self, mm: &mut Mm, sc: &mut ScanControl, env: PageoutEnv, clock: &mut dyn PassTime) {
        self.0.shrink_node(mm, sc, env, clock)
    }
    fn rotate_reclaimable(&mut self, mm: &mut Mm, pfn: Pfn) {
        self.0.rotate_reclaimable(mm, pfn)
    }
    fn invalidate_page(&mut self, mm: &mut Mm, pfn: Pfn) -> bool {
        self.0.invalidate_page(mm, pfn)
    }
    fn age_node(&mut self, mm: &mut Mm, sc: &mut ScanControl) {
        self.0.age_node(mm, sc)
    }
    fn snapshot_refaults(&mut self, mm: &Mm) {
        self.0.snapshot_refaults(mm)
    }
    fn flush_group_stats(&mut self, mm: &Mm) {
        self.0.flush_group_stats(mm)
    }
    fn lru_sizes(&self) -> LruSizes {
        self.0.lru_sizes()
    }
    fn zone_lru_sizes(&self, zone: usize) -> Option<LruSizes> {
        self.0.zone_lru_sizes(zone)
    }
    fn node_lru_sizes(&self, node: u8) -> Option<LruSizes> {
        self.0.node_lru_sizes(node)
    }
    fn check_invariants(&self, mm: &Mm) {
        self.0.check_invariants(mm)
    }
    fn control(
        &mut self,
        mm: &mut Mm,
        name: &str,
        op: ControlOp<'_>,
        sc: &mut ScanControl,
        env: PageoutEnv,
    ) -> Result<String, ControlError> {
        self.0.control(mm, name, op, sc, env)
    }
}

/// `mm_vmscan_throttled` (or a pre-5.16 congestion wait) for a reclaimer of
/// node `nid` that waited `waited` of at most `timeout` for `reason`.
pub(super) fn throttled(nid: u8, reason: ThrottleReason, timeout: Nanos, waited: Nanos) -> Tracepoint {
    let reason = match reason {
        ThrottleReason::CongestionWait => ThrottleState::CongestionWait,
        ThrottleReason::IffCongested => ThrottleState::WaitIffCongested,
        ThrottleReason::Writeback => ThrottleState::Writeback,
        ThrottleReason::Congested => ThrottleState::Congested,
    };
    Tracepoint::Throttled { nid, usec_timeout: timeout / 1000, usec_delayed: waited / 1000, reason }
}
