//! Time passing inside one direct or memcg-limit reclaim call: after each of
//! its reclaim batches (and between priority passes) the engine submits the
//! writes queued so far and delivers the writeback completions due by then
//! (S-DR3 names what remains).

use super::{Event, EventQueue, Machine};
use crate::config::CpuCosts;
use crate::device::Device;
use crate::writeback::file_page_pos;
use crate::Nanos;
use mm::{Mm, Pfn};
use reclaim::direct::PassTime;
use reclaim::pageout::PageoutEnv;
use reclaim::policy::ReclaimPolicy;
use reclaim::{ReclaimWork, ScanControl};

impl Machine {
    /// The context of one reclaim call made at `now`: built afresh for each
    /// call (kswapd step, direct or memcg-limit reclaim, an `lru_gen` write).
    pub(super) fn pageout_env(&mut self, now: Nanos) -> PageoutEnv {
        PageoutEnv {
            sync_swap: self.swap_dev.sync,
            now_ns: now,
            fs_congested: self.fs_dev.congested(now),
            dirty: self.cfg.reclaim.dirty,
        }
    }
}

/// CPU time for reclaim work `w` (a synchronous swap device adds its write cost).
pub(super) fn reclaim_cost(cpu: &CpuCosts, swap_dev: &Device, w: &ReclaimWork) -> Nanos {
    let sync_write = if swap_dev.sync { swap_dev.write_cpu_ns } else { 0 };
    cpu.reclaim_work_ns(w, sync_write)
}

/// Schedules completions for writes reclaim submitted at `at`: swap-outs on
/// the swap device (contiguous slots as one request, as the block layer merges
/// them), file pages one request each on the filesystem device.
pub(super) fn submit_writes(
    mm: &Mm,
    swap_dev: &mut Device,
    fs_dev: &mut Device,
    queue: &mut EventQueue,
    pfns: &[Pfn],
    at: Nanos,
) {
    let mut swap: Vec<(u32, Pfn)> = Vec::new();
    for &pfn in pfns {
        if mm.frames[pfn].is_anon() {
            swap.push((mm.frames[pfn].swap, pfn));
        } else {
            let done = fs_dev.submit_at(at, file_page_pos(mm, pfn), 1, true);
            queue.push(done, Event::WritebackDone(pfn));
        }
    }
    swap.sort_unstable();
    for run in swap.chunk_by(|a, b| b.0 == a.0 + 1) {
        let done = swap_dev.submit_at(at, run[0].0 as u64, run.len() as u64, true);
        for &(_, pfn) in run {
            queue.push(done, Event::WritebackDone(pfn));
        }
    }
}

/// `folio_end_writeback()`: a `PG_reclaim` page is rotated to the inactive tail.
pub(super) fn end_writeback(mm: &mut Mm, policy: &mut dyn ReclaimPolicy, pfn: Pfn) {
    if mm.end_writeback(pfn) {
        policy.rotate_reclaimable(mm, pfn);
    }
}

/// The engine's [`PassTime`] for one reclaim call that began at `start`:
/// the parts of the machine a pass's elapsed time touches.
struct ReclaimClock<'a> {
    start: Nanos,
    cpu: &'a CpuCosts,
    swap_dev: &'a mut Device,
    fs_dev: &'a mut Device,
    queue: &'a mut EventQueue,
    /// The machine's event count (each delivered completion is one).
    events: &'a mut u64,
}

impl PassTime for ReclaimClock<'_> {
    fn pass_time(&mut self, mm: &mut Mm, policy: &mut dyn ReclaimPolicy, sc: &mut ScanControl) {
        let at = self.start + reclaim_cost(self.cpu, self.swap_dev, &sc.work);
        // Simplification S-DR3: a batch's writes are all submitted when it ends.
        submit_writes(mm, self.swap_dev, self.fs_dev, self.queue, &sc.pageout, at);
        sc.pageout.clear();
        for pfn in self.queue.take_writebacks_until(at) {
            *self.events += 1;
            end_writeback(mm, policy, pfn);
        }
        sc.now_ns = at;
    }
}

impl Machine {
    /// Runs one direct or memcg-limit reclaim call `call` that begins at
    /// `start`, with a clock that lets time pass between its reclaim batches.
    /// Kept out of line: it is off the fault path's common case.
    #[cold]
    #[inline(never)]
    pub(super) fn timed_reclaim(
        &mut self,
        start: Nanos,
        call: impl FnOnce(&mut Mm, &mut dyn ReclaimPolicy, &mut dyn PassTime) -> ScanControl,
    ) -> ScanControl {
        let mut clock = ReclaimClock {
            start,
            cpu: &self.cfg.cpu,
            swap_dev: &mut self.swap_dev,
            fs_dev: &mut self.fs_dev,
            queue: &mut self.queue,
            events: &mut self.events,
        };
        call(&mut self.mm, self.policy.as_mut(), &mut clock)
    }
}
