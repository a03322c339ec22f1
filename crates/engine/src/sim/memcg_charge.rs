//! The engine's side of memory-cgroup charging: the charge retry loop of
//! `try_charge_memcg()` around `try_to_free_mem_cgroup_pages()` for the one
//! v1 group (`memcg.limit`) and for the groups of the v2 tree (`memory.max`,
//! then the group's OOM), `memory.high` throttling
//! (`mem_cgroup_handle_over_high()`), and the v1 group's `memory.stat` census.

use super::{Machine, Stall};
use crate::memcg::{memory_stat, Charge, MemcgCensus};
use crate::{Nanos, HZ, JIFFY_NS};
use mm::cgroup::{high_delay_jiffies, MEMCG_CHARGE_BATCH};
use mm::tracepoint::Tracepoint;
use mm::{CgId, PageFlags};
use reclaim::memcg::MemcgReclaim;
use reclaim::{MAX_RECLAIM_RETRIES, SWAP_CLUSTER_MAX};

/// KERNEL: `MEMCG_MAX_HIGH_DELAY_JIFFIES`: the longest `memory.high` penalty, 2 s.
const MEMCG_MAX_HIGH_DELAY_JIFFIES: u64 = 2 * HZ;

/// Whose limit a charge answers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ChargeTo {
    /// The one cgroup-v1 group of `memcg.limit`.
    V1,
    /// A group of the cgroup-v2 tree.
    Tree(CgId),
}

impl Machine {
    /// Pages charged to the group (S-MC1: every allocated frame but the zram pool).
    fn memcg_charged(&self) -> u64 {
        // The zram pool and the swap cache's tree nodes are kernel memory
        // charged to no group; zswap's pool is charged to the group of the pages
        // it holds (`obj_cgroup_charge_zswap`).
        let uncharged = self.mm.zram.as_ref().map_or(0, mm::ZramPool::pages) + self.mm.slab.swap_node_pages();
        self.mm.frames.len() as u64 - self.mm.nr_free_frames() - uncharged
    }

    /// Whose limit a page of `owner` is charged against, if any.
    pub(super) fn charge_to(&self, owner: mm::Owner) -> Option<ChargeTo> {
        if self.memcg.is_some() {
            Some(ChargeTo::V1)
        } else if self.mm.cgroups.enabled() {
            Some(ChargeTo::Tree(self.mm.group_of(owner)))
        } else {
            None
        }
    }

    /// The counter step: `Ok(pages put on the counters)` or `Err(group over its limit)`.
    fn try_counter(&mut self, to: ChargeTo) -> Result<u64, CgId> {
        match to {
            ChargeTo::V1 => {
                let charged = self.memcg_charged();
                let memcg = self.memcg.as_mut().expect("a v1 charge has the group");
                if memcg.charge(charged) == Charge::OverLimit {
                    return Err(CgId::ROOT);
                }
                if memcg.flush_due() {
                    self.policy.flush_group_stats(&self.mm);
                }
                Ok(0)
            }
            ChargeTo::Tree(cg) => self.mm.cgroups.try_charge(cg),
        }
    }

    /// `mem_cgroup_margin()` of the group over its limit.
    fn charge_margin(&self, to: ChargeTo, over: CgId) -> u64 {
        match to {
            ChargeTo::V1 => self.memcg.as_ref().map_or(0, |m| m.margin(self.memcg_charged())),
            ChargeTo::Tree(_) => self.mm.cgroups.margin(over),
        }
    }

    /// The reclaim of `nr_pages` in group `cg` for its limit (a charge,
    /// `memory.high`), counted in `/proc/vmstat` as the kernel version does.
    pub(super) fn limit_reclaim(&self, cg: CgId, nr_pages: u64) -> MemcgReclaim {
        MemcgReclaim::charge(cg, nr_pages, self.cfg.reclaim.cgroup_reclaim_vmstat)
    }

    /// One `try_to_free_mem_cgroup_pages()` at `now` as `req` asks;
    /// returns (pages reclaimed, stall: CPU plus throttling).
    pub(super) fn memcg_reclaim(&mut self, req: MemcgReclaim, now: Nanos) -> (u64, Nanos) {
        let env = self.pageout_env(now);
        // Reclaim drains this CPU's add batch first.
        self.lru_batches.drain();
        self.mm.trace_at(now, || Tracepoint::ReclaimBegin { memcg: true });
        let sc = self.timed_reclaim(now, |mm, policy, clock| {
            reclaim::memcg::try_to_free_mem_cgroup_pages(mm, policy, env, req, clock)
        });
        let cost = self.work_cost(&sc.work);
        self.direct_reclaim_ns += cost;
        let wait = self.after_reclaim(&sc, now, cost);
        self.sleep_ns += wait;
        self.mm.trace_at(now + cost + wait, || Tracepoint::ReclaimEnd { memcg: true, nr_reclaimed: sc.nr_reclaimed });
        (sc.nr_reclaimed, cost + wait)
    }

    /// Charges one new page of `to`, reclaiming synchronously in the
    /// faulting task while the charge would exceed a limit (`try_charge_memcg()`).
    /// Returns the reclaim stall (a memory stall for PSI; its CPU is counted
    /// with direct reclaim's). After `MAX_RECLAIM_RETRIES` reclaim attempts
    /// without progress the group is out of memory (the caller invokes the
    /// OOM killer, then charges again with fresh retries).
    pub(super) fn memcg_charge(&mut self, to: ChargeTo, now: Nanos) -> Result<Nanos, Stall> {
        let mut stall = 0;
        let mut retries = MAX_RECLAIM_RETRIES;
        let mut drained = false;
        loop {
            let over = match self.try_counter(to) {
                Ok(batch) => {
                    if let ChargeTo::Tree(cg) = to {
                        stall += self.note_over_high(cg, batch, now + stall);
                    }
                    return Ok(stall);
                }
                Err(over) => over,
            };
            if to != ChargeTo::V1 {
                // memcg_memory_event(MEMCG_MAX); the v1 group counts its own.
                self.mm.cgroups.get_mut(over).events.max += 1;
            }
            let (nr_reclaimed, cost) = self.memcg_reclaim(self.limit_reclaim(over, 1), now + stall);
            stall += cost;
            if self.charge_margin(to, over) >= 1 {
                self.stalled_attempts = 0;
                continue;
            }
            // drain_all_stock(), once (the v1 group's single stock is empty
            // whenever its charge fails, so only the tree drains).
            if !drained && to != ChargeTo::V1 {
                drained = true;
                self.mm.cgroups.drain_all_stock(over);
                continue;
            }
            if nr_reclaimed > 0 {
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
                return Err(Stall::MemcgOom(over, now + stall));
            }
            retries -= 1;
        }
    }

    /// The end of `try_charge_memcg()` after `batch` pages went on `cg`'s
    /// counters: if `cg` or an ancestor is over `memory.high` or
    /// `memory.swap.high`, the task owes
    /// reclaim for the batch (`memcg_nr_pages_over_high`), paid at once when
    /// more than a batch is owed. Returns the stall paid now.
    fn note_over_high(&mut self, cg: CgId, batch: u64, now: Nanos) -> Nanos {
        if batch == 0 || !self.mm.cgroups.over_high(cg) {
            return 0;
        }
        let tid = self.numa.current;
        if self.over_high.len() <= tid {
            self.over_high.resize(tid + 1, 0);
        }
        self.over_high[tid] += batch;
        if self.over_high[tid] > MEMCG_CHARGE_BATCH {
            return self.handle_over_high(cg, now);
        }
        0
    }

    /// `mem_cgroup_handle_over_high()` for the running thread, whose pages
    /// are charged to `cg` (also run when a fault returns to user space):
    /// reclaim in every group over `memory.high`, then the penalty sleep
    /// when the overage of `memory.high` or `memory.swap.high` stays.
    /// Returns the stall (reclaim and sleep).
    pub(super) fn handle_over_high(&mut self, cg: CgId, now: Nanos) -> Nanos {
        let nr_pages = self.over_high.get_mut(self.numa.current).map_or(0, std::mem::take);
        if nr_pages == 0 {
            return 0;
        }
        let mut stall = 0;
        let mut retries = MAX_RECLAIM_RETRIES;
        let mut in_retry = false;
        loop {
            // reclaim_high(): each group from cg up that is over its high, in turn.
            let mut nr_reclaimed = 0;
            for g in self.mm.cgroups.ancestors(cg).collect::<Vec<_>>() {
                // Checked as the walk reaches it: a child's reclaim may have helped.
                if !self.mm.cgroups.above_high(g) {
                    continue;
                }
                self.mm.cgroups.get_mut(g).events.high += 1;
                let ask = if in_retry { SWAP_CLUSTER_MAX } else { nr_pages };
                let (n, cost) = self.memcg_reclaim(self.limit_reclaim(g, ask), now + stall);
                nr_reclaimed += n;
                stall += cost;
            }
            let overage = self.mm.cgroups.max_overage(cg);
            // v5.8: swap over memory.swap.high adds its own penalty (reclaim cannot lower it).
            let swap_overage = self.mm.cgroups.swap_max_overage(cg);
            let penalty = (high_delay_jiffies(nr_pages, overage, HZ) + high_delay_jiffies(nr_pages, swap_overage, HZ))
                .min(MEMCG_MAX_HIGH_DELAY_JIFFIES);
            // A small overage is not worth a sleep.
            if penalty <= HZ / 100 {
                return stall;
            }
            // Reclaim that makes progress is preferred to throttling.
            if nr_reclaimed > 0 || retries > 0 {
                if nr_reclaimed == 0 {
                    retries -= 1;
                }
                in_retry = true;
                continue;
            }
            let sleep = penalty * JIFFY_NS;
            self.sleep_ns += sleep;
            return stall + sleep;
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

impl Machine {
    /// The memory cgroups' periodic statistics flush at `now`: reclaim reads
    /// the root group's statistics as they are now until the next one, which
    /// is queued while anything else is.
    pub(super) fn stats_flush_event(&mut self, now: Nanos) {
        self.policy.flush_group_stats(&self.mm);
        if !self.queue.is_empty() {
            self.queue.push(now + crate::memcg::STATS_FLUSH_NS, super::queue::Event::StatsFlush);
        }
    }
}
