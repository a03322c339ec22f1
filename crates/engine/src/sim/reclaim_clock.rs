//! Time passing inside one direct or memcg-limit reclaim call: after each of
//! its reclaim batches (and between priority passes) the engine submits the
//! writes queued so far and delivers the writeback completions due by then
//! (S-DR3 names what remains).

use super::writeback::{end_writeback, submit_writes};
use super::{EventQueue, Machine};
use crate::config::CpuCosts;
use crate::device::Device;
use crate::Nanos;
use mm::Mm;
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
            shrinker: self.cfg.reclaim.shrinker,
        }
    }
}

/// CPU time for reclaim work `w` (a synchronous swap device adds its write cost).
pub(super) fn reclaim_cost(cpu: &CpuCosts, swap_dev: &Device, w: &ReclaimWork) -> Nanos {
    let sync_write = if swap_dev.sync { swap_dev.write_cpu_ns } else { 0 };
    cpu.reclaim_work_ns(w, sync_write)
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
        let at = self.start + sc.slept_ns + reclaim_cost(self.cpu, self.swap_dev, &sc.work);
        // Simplification S-DR3: a batch's writes are all submitted when it ends.
        submit_writes(mm, self.swap_dev, self.fs_dev, self.queue, &sc.pageout, at);
        sc.pageout.clear();
        for pfn in self.queue.take_writebacks_until(at) {
            *self.events += 1;
            end_writeback(mm, policy, pfn);
        }
        sc.now_ns = at;
        mm.trace_time(at);
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
