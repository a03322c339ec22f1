//! The page allocator (mm/page_alloc.c): the zonelist walk at the low
//! watermark, kswapd wakeups on the zonelist's nodes, the min watermark,
//! direct reclaim, and the retry/OOM rule when reclaim cannot help; NUMA
//! memory policies and their counters (`zone_statistics()`). Order-0 pages
//! come from the running CPU's per-CPU list (`rmqueue_pcplist`, `mm::pcp`):
//! the thread's CPU (set when its slow access begins), the one `cpus=N`
//! gives it or, with `cpus=0`, a CPU of its own numbered by thread (S-EN1, as
//! the LRU add batches).

use super::{reclaim_clock, Machine, Stall, OOM_STALL_LIMIT};
use crate::writeback::{dirtyable_memory, Thresholds};
use crate::{Nanos, JIFFY_NS};
use mm::tracepoint::{ThrottleState, Tracepoint};
use mm::{Owner, PcpForm, Pfn, VmEvent, Watermark, ZoneId};
use reclaim::throttle::{InFlight, Isolating};
use reclaim::watermark::zone_watermark_ok;
use reclaim::{direct, node_reclaim, ReclaimWork};

/// How a thread's pages are placed (`set_mempolicy`), from the node it runs on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MemPolicy {
    /// `MPOL_LOCAL` (the default): the running node first, then the others by distance.
    #[default]
    Local,
    /// `MPOL_BIND` to the running node: no other node, reclaim there instead.
    Bind,
    /// `MPOL_INTERLEAVE` over every node: each allocation prefers the next node in turn.
    Interleave,
}

/// A thread's placement: the node it runs on and its memory policy.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Placement {
    /// The node the thread runs on (`numactl --cpunodebind`).
    pub node: u8,
    /// Its memory policy.
    pub policy: MemPolicy,
}

/// The placement of every thread, and whose allocation is in progress.
#[derive(Debug, Default)]
pub(super) struct TaskNuma {
    /// Per thread: its placement and the next interleave node (`il_prev + 1`).
    tasks: Vec<(Placement, u8)>,
    /// The thread running now.
    pub(super) current: usize,
    /// The placement of threads added next.
    pub(super) next: Placement,
}

impl TaskNuma {
    /// The number of threads.
    pub(super) fn nr_tasks(&self) -> usize {
        self.tasks.len()
    }

    /// Registers the next thread with the current placement.
    pub(super) fn add_task(&mut self) {
        self.tasks.push((self.next, self.next.node));
    }
}

/// Where one allocation goes: the preferred node, the node the task runs on,
/// and whether other nodes may serve it.
#[derive(Clone, Copy, Debug)]
struct Target {
    preferred: u8,
    local: u8,
    only_preferred: bool,
    interleave: bool,
    /// A page-cache page for `write()` (`__GFP_WRITE`): with per-zone LRUs the
    /// fast path passes over zones above their dirty limit (`zone_dirty_ok`).
    write: bool,
}

/// The most nodes a machine has (`numa.nodes` is at most 64).
const MAX_NODES: usize = 64;

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
        self.alloc_page_gfp(owner, index, flags, false, now)
    }

    /// [`alloc_page`](Self::alloc_page) of a page-cache page for `write()`
    /// (`__GFP_WRITE`, v3.2+: "spread dirty pages" over the zones).
    pub(super) fn alloc_page_for_write(&mut self, owner: Owner, index: u32, now: Nanos) -> Result<(Pfn, Nanos), Stall> {
        self.alloc_page_gfp(owner, index, 0, true, now)
    }

    fn alloc_page_gfp(
        &mut self,
        owner: Owner,
        index: u32,
        flags: u16,
        write: bool,
        now: Nanos,
    ) -> Result<(Pfn, Nanos), Stall> {
        // Simplification S-MC5: the group is charged before the frame is taken.
        let memcg_stall = match self.charge_to(owner) {
            Some(to) => self.memcg_charge(to, now)?,
            None => 0,
        };
        let (pfn, stall) = self.alloc_frame(owner, index, flags, write, now + memcg_stall).inspect_err(|_| {
            // The charge waits for the retry or dies with the OOM.
            self.mm.cgroups.cancel_charge();
        })?;
        Ok((pfn, memcg_stall + stall))
    }

    /// The page allocator proper: `get_page_from_freelist` at the low
    /// watermark, then `__alloc_pages_slowpath` (kswapd, min watermark, direct
    /// reclaim). After direct reclaim, a failed freelist try drains every
    /// CPU's list and tries again (`__alloc_pages_direct_reclaim`'s
    /// `drain_all_pages`). Simplification: a direct reclaimer that freed pages
    /// takes one even if every zone is still below min (the kernel retries the freelist).
    /// A fallback that boosted a zone's watermarks (this one's, or a kernel
    /// page's since the last allocation) wakes its node's kswapd after it.
    pub(super) fn alloc_frame(
        &mut self,
        owner: Owner,
        index: u32,
        flags: u16,
        write: bool,
        now: Nanos,
    ) -> Result<(Pfn, Nanos), Stall> {
        let r = self.alloc_frame_walk(owner, index, flags, write, now);
        if let Ok((_, stall)) = r {
            self.wake_for_boosts(now + stall);
        }
        r
    }

    /// `rmqueue()`'s end: each zone whose watermark a fallback boosted
    /// (`ZONE_BOOSTED_WATERMARK`) gets `boost_watermark()` and wakes its
    /// node's kswapd for itself as the classzone.
    pub(super) fn wake_for_boosts(&mut self, now: Nanos) {
        if !self.mm.frames.boosts_pending() {
            return;
        }
        for z in self.mm.apply_boosts(self.cfg.numa.watermark_boost_factor) {
            let (node, id) = (self.mm.zones[z].node, self.mm.zones[z].id);
            self.wake_kswapd(node, id, now);
        }
    }

    fn alloc_frame_walk(
        &mut self,
        owner: Owner,
        index: u32,
        flags: u16,
        write: bool,
        now: Nanos,
    ) -> Result<(Pfn, Nanos), Stall> {
        let t = Target { write, ..self.alloc_target() };
        let class = self.user_class;
        let (fast, node_ns) = match self.fair_pass(t, class) {
            Some(z) => (Some(z), 0),
            None if self.cfg.numa.zone_reclaim_mode & node_reclaim::RECLAIM_ZONE != 0 => {
                self.first_zone_reclaiming(t, class, now)
            }
            None => (self.first_zone_ok(t, Watermark::Low, class), 0),
        };
        if let Some(z) = fast {
            return Ok((self.take(z, t, owner, index, flags), node_ns));
        }
        let now = now + node_ns;
        // wake_all_kswapds(): every node of the zonelist, in its order.
        let (nodes, n) = self.zonelist_nodes(t);
        for &node in &nodes[..n] {
            self.wake_kswapd(node, class, now);
        }
        if let Some(z) = self.first_zone_ok(t, Watermark::Min, class) {
            return Ok((self.take(z, t, owner, index, flags), node_ns));
        }
        let env = self.pageout_env(now);
        // Reclaim drains this CPU's add batch first (`lru_add_drain()` in shrink_*_list).
        self.lru_batches.drain();
        self.mm.trace(|| Tracepoint::ReclaimBegin { memcg: false });
        let scope = (class, (t.only_preferred && self.mm.nodes.len() > 1).then_some(t.preferred));
        // The other direct reclaimers still at work hold pages isolated (S-TH2).
        let ended = self.isolating.partition_point(|r| r.1.end_ns <= now);
        self.isolating.drain(..ended);
        let tid = self.numa.current as u32;
        let others = Isolating::new(self.isolating.iter().filter(|r| r.0 != tid).map(|r| r.1).collect(), now);
        let sc = self.timed_reclaim(now, |mm, policy, clock| {
            direct::try_to_free_pages_among(mm, policy, env, scope, others, clock)
        });
        let cpu = self.work_cost(&sc.work);
        self.direct_reclaim_ns += cpu;
        self.direct_work.add(&sc.work);
        // The call's sleeps (too_many_isolated, counted as coming first) and its work.
        let call = sc.slept_ns + cpu;
        if let Some(r) = InFlight::of(sc.isolated, now + sc.slept_ns, now + call) {
            // A thread has one call in flight at most (access_now drives calls all at time 0).
            self.isolating.retain(|o| o.0 != tid);
            let at = self.isolating.partition_point(|o| o.1.end_ns <= r.end_ns);
            self.isolating.insert(at, (tid, r));
        }
        self.reclaim_throttled_ns += sc.slept_ns;
        let wait = self.after_reclaim(&sc, now, call);
        self.sleep_ns += sc.slept_ns + wait;
        let stall = call + wait;
        self.mm.trace_at(now + stall, || Tracepoint::ReclaimEnd { memcg: false, nr_reclaimed: sc.nr_reclaimed });
        self.direct_hist.record(stall.max(1)).expect("auto-resizing histogram");
        if sc.nr_reclaimed > 0 {
            let (nodes, n) = self.zonelist_nodes(t);
            for &node in &nodes[..n] {
                self.kswapds[node as usize].k.failures = 0;
            }
            self.stalled_attempts = 0;
        }
        let mut zone = self.first_zone_ok(t, Watermark::Min, class);
        if zone.is_none() && sc.nr_reclaimed > 0 {
            self.mm.drain_all_pages();
            zone = self.first_zone_ok(t, Watermark::Min, class).or_else(|| {
                let mut list = self.zonelist(t);
                list.find(|&z| self.mm.zone_free(z) > 0)
            });
        }
        match zone {
            Some(z) => Ok((self.take(z, t, owner, index, flags), node_ns + stall)),
            None => Err(self.throttle(now + stall, t.preferred)),
        }
    }

    /// An allocation that never reclaims nor wakes kswapd (readahead's
    /// `__GFP_NORETRY`): a zone above its min watermark, or nothing.
    pub(super) fn alloc_frame_nowait(&mut self, owner: Owner, index: u32, flags: u16) -> Option<Pfn> {
        let t = self.alloc_target();
        let z = self.first_zone_ok(t, Watermark::Min, self.user_class)?;
        Some(self.take(z, t, owner, index, flags))
    }

    /// The running thread's target for its next allocation (advancing its interleave turn).
    fn alloc_target(&mut self) -> Target {
        let nr_nodes = self.mm.nodes.len() as u8;
        let Some((p, il)) = self.numa.tasks.get_mut(self.numa.current) else {
            return Target { preferred: 0, local: 0, only_preferred: false, interleave: false, write: false };
        };
        let mut t = Target { preferred: p.node, local: p.node, only_preferred: false, interleave: false, write: false };
        match p.policy {
            MemPolicy::Local => {}
            MemPolicy::Bind => t.only_preferred = true,
            MemPolicy::Interleave => {
                t.preferred = *il % nr_nodes;
                t.interleave = true;
                *il = (t.preferred + 1) % nr_nodes;
            }
        }
        t
    }

    /// The running thread's node (`numa_node_id()`; 0 outside a thread).
    pub(super) fn task_node(&self) -> u8 {
        self.numa.tasks.get(self.numa.current).map_or(0, |(p, _)| p.node)
    }

    /// The zones `t` may use, in fallback order.
    fn zonelist(&self, t: Target) -> impl Iterator<Item = usize> + '_ {
        let list = &self.mm.nodes[t.preferred as usize].zonelist;
        list.iter().copied().filter(move |&z| !t.only_preferred || self.mm.zones[z].node == t.preferred)
    }

    /// The nodes of `t`'s zonelist, each once, in its order: the first `n` of
    /// the array (no heap allocation: this runs on every allocation below low).
    fn zonelist_nodes(&self, t: Target) -> ([u8; MAX_NODES], usize) {
        let mut nodes = [0u8; MAX_NODES];
        let mut n = 0;
        for z in self.zonelist(t) {
            let node = self.mm.zones[z].node;
            if !nodes[..n].contains(&node) {
                nodes[n] = node;
                n += 1;
            }
        }
        (nodes, n)
    }

    /// The first zone of `t`'s zonelist above `mark` plus its reserve against
    /// `class` (at the low watermark, within its dirty limit for a write).
    #[inline]
    fn first_zone_ok(&self, t: Target, mark: Watermark, class: ZoneId) -> Option<usize> {
        let dirty_ok = |z| !(t.write && mark == Watermark::Low) || self.zone_dirty_ok(z);
        self.zonelist(t).find(|&z| zone_watermark_ok(&self.mm, z, mark, class) && dirty_ok(z))
    }

    /// The fast path's zonelist walk under `vm.zone_reclaim_mode`: a zone of
    /// the task's own node below its low watermark is reclaimed (`node_reclaim()`)
    /// and taken if that lifted it above; other nodes' zones are only tried.
    /// Returns the zone found and the time node reclaim took.
    fn first_zone_reclaiming(&mut self, t: Target, class: ZoneId, now: Nanos) -> (Option<usize>, Nanos) {
        let (mode, ratio) = (self.cfg.numa.zone_reclaim_mode, self.cfg.numa.min_unmapped_ratio);
        let mut spent = 0;
        for z in self.zonelist(t).collect::<Vec<_>>() {
            if t.write && !self.zone_dirty_ok(z) {
                continue;
            }
            if zone_watermark_ok(&self.mm, z, Watermark::Low, class) {
                return (Some(z), spent);
            }
            let node = self.mm.zones[z].node;
            if node != t.local || !node_reclaim::worth_reclaiming(&self.mm, self.policy.as_ref(), node, mode, ratio) {
                continue;
            }
            let env = self.pageout_env(now + spent);
            self.lru_batches.drain();
            let sc = self.timed_reclaim(now + spent, |mm, policy, clock| {
                node_reclaim::node_reclaim(mm, policy, env, (node, class, mode), clock)
            });
            let cpu = self.work_cost(&sc.work);
            self.direct_reclaim_ns += cpu;
            self.direct_work.add(&sc.work);
            let wait = self.after_reclaim(&sc, now + spent, cpu);
            self.sleep_ns += wait;
            spent += cpu + wait;
            if zone_watermark_ok(&self.mm, z, Watermark::Low, class) {
                return (Some(z), spent);
            }
        }
        (None, spent)
    }

    /// `zone_dirty_ok()` (v3.2..v4.7): zone `z`'s dirty and writeback pages
    /// are within its share of the dirty limit, the limit taken of the zone's
    /// dirtyable memory (free pages above its high watermark and largest
    /// reserve, and its dirtyable LRU pages). Always true without per-zone LRU lists.
    fn zone_dirty_ok(&self, z: usize) -> bool {
        let Some(sizes) = self.policy.zone_lru_sizes(z) else { return true };
        let zone = &self.mm.zones[z];
        let reserve = zone.wmark(Watermark::High) + zone.lowmem_reserve.iter().max().copied().unwrap_or(0);
        let dirtyable = dirtyable_memory(self.mm.zone_free(z), reserve, self.dirtyable_lru(sizes));
        let k = &self.cfg.writeback;
        let limit = if k.dirty_bytes > 0 {
            // The byte limit is shared out in proportion to dirtyable memory.
            let global = self.global_dirtyable();
            Thresholds::from_knobs(global, k).thresh * dirtyable / global
        } else {
            k.dirty_ratio * dirtyable / 100
        };
        self.mm.dirty.zone_pending.get(z).copied().unwrap_or(0) <= limit
    }

    /// v3.12..v4.7's fair pass (`ALLOC_FAIR`): the preferred node's zones in
    /// zonelist order, skipping those whose allocation batch ran out; when
    /// every batch did, they all start a new round (`reset_alloc_batches()`)
    /// and the plain zonelist walk decides.
    fn fair_pass(&mut self, t: Target, class: ZoneId) -> Option<usize> {
        if !self.cfg.numa.fair_zone_alloc {
            return None;
        }
        let local: Vec<usize> = self.zonelist(t).take_while(|&z| self.mm.zones[z].node == t.preferred).collect();
        let mut skipped = false;
        for &z in &local {
            if self.mm.zones[z].fair_depleted {
                skipped = true;
            } else if zone_watermark_ok(&self.mm, z, Watermark::Low, class) && (!t.write || self.zone_dirty_ok(z)) {
                return Some(z);
            }
        }
        if skipped {
            let node = t.preferred;
            self.mm.zones.iter_mut().filter(|z| z.node == node).for_each(mm::Zone::reset_alloc_batch);
        }
        None
    }

    /// Takes a frame of zone `z` (which has one free) from the running CPU's
    /// list and counts the allocation in `pgalloc_*` and the NUMA counters
    /// (`zone_statistics()`). v6.7+: a zone found below its high watermark is
    /// marked `ZONE_BELOW_HIGH` (`get_page_from_freelist`).
    fn take(&mut self, z: usize, t: Target, owner: Owner, index: u32, flags: u16) -> Pfn {
        if self.mm.frames.pcp.form() == PcpForm::Tuned
            && !self.mm.frames.pcp.below_high(z)
            && !zone_watermark_ok(&self.mm, z, Watermark::High, self.user_class)
        {
            self.mm.frames.pcp.note_below_high(z);
        }
        let pfn = self.mm.alloc_in(z, owner, index, flags).expect("zone above a watermark has free pages");
        let zone = &mut self.mm.zones[z];
        zone.alloc_batch -= 1;
        zone.fair_depleted |= zone.alloc_batch <= 0;
        let node = zone.node;
        let local = if node == t.local { VmEvent::NumaLocal } else { VmEvent::NumaOther };
        self.mm.stat.count(local, 1);
        let stat = &mut self.mm.zones[z].stat;
        *(if node == t.local { &mut stat.numa_local } else { &mut stat.numa_other }) += 1;
        if node == t.preferred {
            stat.numa_hit += 1;
            self.mm.stat.count(VmEvent::NumaHit, 1);
            if t.interleave {
                stat.numa_interleave += 1;
                self.mm.stat.count(VmEvent::NumaInterleave, 1);
            }
        } else {
            stat.numa_miss += 1;
            self.mm.stat.count(VmEvent::NumaMiss, 1);
            let preferred_zone = self.mm.nodes[t.preferred as usize].zonelist[0];
            self.mm.zones[preferred_zone].stat.numa_foreign += 1;
            self.mm.stat.count(VmEvent::NumaForeign, 1);
        }
        pfn
    }

    /// S-EN3: an allocation that reclaim could not satisfy waits until something
    /// can change (the next event, at most one jiffy), then retries; after
    /// `OOM_STALL_LIMIT` such waits in a row without progress the machine is
    /// out of memory (the caller invokes the OOM killer). `nid`: the first
    /// node of the allocation's zonelist, which the kernel's wait names.
    pub(super) fn throttle(&mut self, at: Nanos, nid: u8) -> Stall {
        // Writes in flight will free pages: waiting for them is not a failure.
        if self.mm.dirty.nr_writeback == 0 {
            self.stalled_attempts += 1;
        }
        if self.stalled_attempts > OOM_STALL_LIMIT {
            return Stall::Oom(at);
        }
        let retry = (at + JIFFY_NS).min(self.queue.next_time().max(at + 1));
        // The wait is a sleep (`reclaim_throttle`), not CPU time.
        self.sleep_ns += retry - at;
        let (usec_timeout, usec_delayed, reason) = (JIFFY_NS / 1000, (retry - at) / 1000, ThrottleState::NoProgress);
        self.mm.trace_at(retry, || Tracepoint::Throttled { nid, usec_timeout, usec_delayed, reason });
        Stall::Retry(retry)
    }

    /// CPU time for reclaim work.
    pub(super) fn work_cost(&self, w: &ReclaimWork) -> Nanos {
        reclaim_clock::reclaim_cost(&self.cfg.cpu, &self.swap_dev, w)
    }
}
