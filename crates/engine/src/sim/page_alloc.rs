//! The page allocator (mm/page_alloc.c): watermarks, kswapd wakeups, direct
//! reclaim, and the retry/OOM rule when reclaim cannot help.

use super::{reclaim_clock, Machine, Stall, OOM_STALL_LIMIT};
use crate::{Nanos, JIFFY_NS};
use mm::tracepoint::{ThrottleState, Tracepoint};
use mm::{Owner, Pfn, VmEvent, Watermark};
use reclaim::kswapd::watermark_ok;
use reclaim::{direct, ReclaimWork};

impl Machine {
    /// The page allocator's order-0 path: fast path at the low watermark, kswapd
    /// wakeup, min watermark, then direct reclaim. Returns (frame, stall).
    pub(super) fn alloc_page(
        &mut self,
        owner: Owner,
        index: u32,
        flags: u16,
        now: Nanos,
    ) -> Result<(Pfn, Nanos), Stall> {
        // Simplification S-MC5: the group is charged before the frame is taken.
        let memcg_stall = self.memcg_charge(now)?;
        let (pfn, stall) = self.alloc_frame(owner, index, flags, now + memcg_stall)?;
        Ok((pfn, memcg_stall + stall))
    }

    /// The page allocator proper: watermarks, kswapd, direct reclaim.
    pub(super) fn alloc_frame(
        &mut self,
        owner: Owner,
        index: u32,
        flags: u16,
        now: Nanos,
    ) -> Result<(Pfn, Nanos), Stall> {
        if !watermark_ok(&self.mm, Watermark::Low) {
            self.wake_kswapd(now);
        }
        let mut stall = 0;
        if !watermark_ok(&self.mm, Watermark::Min) {
            let env = self.pageout_env(now);
            // Reclaim drains this CPU's add batch first (`lru_add_drain()` in shrink_*_list).
            self.lru_batches.drain();
            self.mm.trace(|| Tracepoint::ReclaimBegin { memcg: false });
            let sc = self.timed_reclaim(now, |mm, policy, clock| direct::try_to_free_pages(mm, policy, env, clock));
            stall = self.work_cost(&sc.work);
            self.direct_reclaim_ns += stall;
            self.direct_work.add(&sc.work);
            stall += self.after_reclaim(&sc, now, stall);
            self.mm.trace_at(now + stall, || Tracepoint::ReclaimEnd { memcg: false, nr_reclaimed: sc.nr_reclaimed });
            self.direct_hist.record(stall.max(1)).expect("auto-resizing histogram");
            if sc.nr_reclaimed > 0 {
                self.kswapd.failures = 0;
                self.stalled_attempts = 0;
            } else if self.mm.nr_free() == 0 || !watermark_ok(&self.mm, Watermark::Min) {
                return Err(self.throttle(now + stall));
            }
        }
        let pfn = match self.mm.frames.alloc(owner, index, flags) {
            Some(pfn) => pfn,
            None => return Err(self.throttle(now + stall)),
        };
        self.mm.stat.count(VmEvent::PgallocNormal, 1);
        Ok((pfn, stall))
    }

    /// S-EN3: an allocation that reclaim could not satisfy waits until something
    /// can change (the next event, at most one jiffy), then retries; after
    /// `OOM_STALL_LIMIT` such waits in a row without progress it fails.
    pub(super) fn throttle(&mut self, at: Nanos) -> Stall {
        // Writes in flight will free pages: waiting for them is not a failure.
        if self.mm.dirty.nr_writeback == 0 {
            self.stalled_attempts += 1;
        }
        if self.stalled_attempts > OOM_STALL_LIMIT {
            return Stall::Oom;
        }
        let retry = (at + JIFFY_NS).min(self.queue.next_time().max(at + 1));
        let (usec_timeout, usec_delayed, reason) = (JIFFY_NS / 1000, (retry - at) / 1000, ThrottleState::NoProgress);
        self.mm.trace_at(retry, || Tracepoint::Throttled { usec_timeout, usec_delayed, reason });
        Stall::Retry(retry)
    }

    /// CPU time for reclaim work.
    pub(super) fn work_cost(&self, w: &ReclaimWork) -> Nanos {
        reclaim_clock::reclaim_cost(&self.cfg.cpu, &self.swap_dev, w)
    }
}
