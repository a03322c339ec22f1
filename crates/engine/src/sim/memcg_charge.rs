//! The engine's side of memory-cgroup limit reclaim: the charge retry loop of
//! `try_charge_memcg()` around `try_to_free_mem_cgroup_pages()`, and the
//! group's `memory.stat` census.

use super::{Machine, Stall};
use crate::memcg::{memory_stat, Charge, MemcgCensus};
use crate::Nanos;
use mm::tracepoint::Tracepoint;
use mm::PageFlags;
use reclaim::MAX_RECLAIM_RETRIES;

impl Machine {
    /// Pages charged to the group (S-MC1: every allocated frame but the zram pool).
    fn memcg_charged(&self) -> u64 {
        // The zram pool is kernel memory charged to no group; zswap's is
        // charged to the group of the pages it holds (`obj_cgroup_charge_zswap`).
        self.mm.frames.len() as u64 - self.mm.nr_free_frames() - self.mm.zram.as_ref().map_or(0, mm::ZramPool::pages)
    }

    /// Charges one new page to the group, reclaiming synchronously in the
    /// faulting task while the charge would exceed the limit. Returns the
    /// reclaim stall (a memory stall for PSI; its CPU is counted with direct
    /// reclaim's). After `MAX_RECLAIM_RETRIES` reclaim attempts without
    /// progress the group is out of memory (the caller invokes the OOM killer,
    /// then charges again with fresh retries, as `try_charge_memcg()` does).
    pub(super) fn memcg_charge(&mut self, now: Nanos) -> Result<Nanos, Stall> {
        let mut stall = 0;
        let mut retries = MAX_RECLAIM_RETRIES;
        loop {
            let charged = self.memcg_charged();
            let Some(memcg) = self.memcg.as_mut() else { return Ok(0) };
            if memcg.charge(charged) == Charge::Done {
                if memcg.flush_due() {
                    self.policy.flush_group_stats(&self.mm);
                }
                return Ok(stall);
            }
            let env = self.pageout_env(now + stall);
            // Reclaim drains this CPU's add batch first.
            self.lru_batches.drain();
            self.mm.trace_at(now + stall, || Tracepoint::ReclaimBegin { memcg: true });
            let sc = self.timed_reclaim(now + stall, |mm, policy, clock| {
                reclaim::memcg::try_to_free_mem_cgroup_pages(mm, policy, env, 1, true, clock)
            });
            let cost = self.work_cost(&sc.work);
            self.direct_reclaim_ns += cost;
            let wait = self.after_reclaim(&sc, now + stall, cost);
            self.sleep_ns += wait;
            stall += cost + wait;
            self.mm.trace_at(now + stall, || Tracepoint::ReclaimEnd { memcg: true, nr_reclaimed: sc.nr_reclaimed });
            let margin = self.memcg.as_ref().map_or(0, |m| m.margin(self.memcg_charged()));
            if sc.nr_reclaimed > 0 || margin >= 1 {
                self.stalled_attempts = 0;
                continue;
            }
            // Simplification S-MC4: instead of the legacy group's wait on
            // PG_reclaim writeback inside reclaim, a charge with writes in
            // flight waits like a throttled allocation and retries.
            if self.mm.dirty.nr_writeback > 0 {
                return Err(self.throttle(now + stall, self.task_node()));
            }
            if retries == 0 {
                return Err(Stall::MemcgOom(now + stall));
            }
            retries -= 1;
        }
    }

    /// The group's `memory.stat`, or nothing without a group.
    pub(super) fn memcg_stat(&self, vmstat: &[(&'static str, u64)]) -> Vec<(&'static str, u64)> {
        let Some(memcg) = &self.memcg else { return Vec::new() };
        let mut c = MemcgCensus { swap: (self.mm.swap.total() - self.mm.swap.nr_free()) as u64, ..Default::default() };
        for (pfn, f) in self.mm.frames.used() {
            if !f.flags.has(PageFlags::LRU) {
                continue;
            }
            let swapcache = f.flags.has(PageFlags::SWAPCACHE);
            if f.is_anon() {
                let region = f.owner.as_anon().expect("anon frame with an anon owner");
                let mapped = self.mm.regions[region.0 as usize].ptes[f.index as usize].pfn() == Some(pfn);
                c.rss += mapped as u64;
                c.cache += swapcache as u64;
            } else {
                c.cache += 1;
                c.dirty += f.flags.has(PageFlags::DIRTY) as u64;
            }
            c.swapcached += swapcache as u64;
            c.writeback += f.flags.has(PageFlags::WRITEBACK) as u64;
        }
        let vm = |name: &str| vmstat.iter().find(|(n, _)| *n == name).map_or(0, |&(_, v)| v);
        memory_stat(memcg, &c, &self.policy.lru_sizes(), self.memcg_charged(), vm)
    }
}
