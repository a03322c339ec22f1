//! The OOM killer on the machine (mm/oom_kill.c `out_of_memory()` and the
//! OOM reaper, v6.12): the processes and what they hold, the choice of a
//! victim among the candidates of the OOM's scope, the kill and the reaping
//! of the victim's memory. The scoring rules are `crate::oom`.
//!
//! A process is one workload instance: its regions are its mm, its threads
//! share them. It is a candidate while one of its threads has not ended and
//! it was not killed. The kill ends every thread of the victim where it
//! stands (a thread whose clock ran ahead of the kill ends at its next
//! event), and the reaper unmaps every region of the victim at the kill:
//! anonymous pages are freed with their swap-cache copies, swap entries give
//! back their slots, file pages leave the victim's page tables (dirty bits go
//! to the page, accessed bits mark it accessed, `zap_pte_range`) and stay in
//! the page cache. Simplifications (docs/simplifications.md):
//! - S-OOM1: a workload instance is one process, even one whose `procs=`
//!   stand for several; a process whose threads all ended keeps its memory
//!   (it sleeps to the end of the run, as mmtests' idle processes do) and is
//!   no candidate, unless it was built to exit then (`exit_when_done`:
//!   validate's drivers), when its memory is unmapped as a victim's (`exit_mmap`).
//! - S-OOM2: the kill and the reaping happen at once (no `OOM_REAPER_DELAY`,
//!   no waiting for the victim's exit); an anonymous page under swap
//!   writeback is freed when its write completes.
//! - S-OOM3: page tables are each region's PTE tables holding an entry plus
//!   the PMD tables above them (no shared tables, no PUD/PGD pages).
//! - S-OOM4: every OOM is `CONSTRAINT_NONE` or `CONSTRAINT_MEMCG` (no
//!   mempolicy or cpuset constraint), and `vm.oom_kill_allocating_task` is 0.

use super::Machine;
use crate::oom::{oom_badness, select_bad_process, MmUsage};
use crate::Nanos;
use mm::{CacheEntry, CgId, Mm, PageFlags, Pfn, Pte, RegionId, RegionKind, VmEvent};
use reclaim::policy::{AccessKind, ReclaimPolicy};

/// KERNEL: `PTRS_PER_PTE` (and `PTRS_PER_PMD`) on x86-64.
const PTRS_PER_TABLE: usize = 512;

/// One process: the regions and threads of one workload instance.
#[derive(Debug)]
struct Process {
    oom_score_adj: i16,
    regions: Vec<RegionId>,
    /// Its threads' ids.
    threads: Vec<usize>,
    /// Its threads that have not ended.
    live: u32,
    /// When the OOM killer killed it.
    killed_at: Option<Nanos>,
    /// It exits when its last thread ends (else it keeps its memory, as a process sleeping to the end).
    exits: bool,
}

impl Process {
    fn new(oom_score_adj: i16) -> Process {
        Process { oom_score_adj, regions: Vec::new(), threads: Vec::new(), live: 0, killed_at: None, exits: false }
    }
}

/// The machine's processes in creation order, and each thread's process.
#[derive(Debug, Default)]
pub(super) struct Processes {
    procs: Vec<Process>,
    thread_proc: Vec<u32>,
    /// Each thread's memory cgroup (the root without a tree).
    thread_cg: Vec<CgId>,
}

impl Processes {
    /// Starts a process with `oom_score_adj`: regions and threads added from now on are its.
    pub(super) fn begin(&mut self, oom_score_adj: i16) {
        self.procs.push(Process::new(oom_score_adj));
    }

    /// The process being built (one with `oom_score_adj` 0 if none was begun).
    fn building(&mut self) -> &mut Process {
        if self.procs.is_empty() {
            self.begin(0);
        }
        self.procs.last_mut().expect("one was just begun")
    }

    /// The process being built exits when its last thread ends.
    pub(super) fn exit_when_done(&mut self) {
        self.building().exits = true;
    }

    /// Region `r` belongs to the process being built.
    pub(super) fn add_region(&mut self, r: RegionId) {
        self.building().regions.push(r);
    }

    /// The next thread belongs to the process being built and to group `cg`.
    pub(super) fn add_thread(&mut self, cg: CgId) {
        let tid = self.thread_proc.len();
        self.thread_cg.push(cg);
        let p = self.building();
        p.live += 1;
        p.threads.push(tid);
        self.thread_proc.push(self.procs.len() as u32 - 1);
    }

    /// Thread `tid` ended by itself; returns its process if that was the last
    /// live thread of a process that exits then ([`Processes::exit_when_done`]).
    pub(super) fn thread_exit(&mut self, tid: usize) -> Option<usize> {
        let p = self.thread_proc[tid] as usize;
        let proc = &mut self.procs[p];
        proc.live -= 1;
        (proc.live == 0 && proc.exits && proc.killed_at.is_none()).then_some(p)
    }

    /// The memory cgroup of thread `tid` (`mem_cgroup_from_task`).
    pub(super) fn thread_cg(&self, tid: usize) -> CgId {
        self.thread_cg.get(tid).copied().unwrap_or(CgId::ROOT)
    }

    /// The group of process `p`: its first thread's.
    fn proc_cg(&self, p: usize) -> CgId {
        self.procs[p].threads.first().map_or(CgId::ROOT, |&t| self.thread_cg(t))
    }

    /// When thread `tid`'s process was killed, if it was.
    pub(super) fn killed_at(&self, tid: usize) -> Option<Nanos> {
        self.thread_proc.get(tid).and_then(|&p| self.procs[p as usize].killed_at)
    }

    /// The processes the OOM killer may look at, in walk (creation) order:
    /// alive, not killed, and with a thread in the OOM's scope.
    fn candidates<'a>(&'a self, in_scope: &'a dyn Fn(usize) -> bool) -> impl Iterator<Item = usize> + 'a {
        let alive = |p: &Process| p.live > 0 && p.killed_at.is_none();
        self.procs
            .iter()
            .enumerate()
            .filter(move |(_, p)| alive(p) && p.threads.iter().any(|&t| in_scope(t)))
            .map(|(i, _)| i)
    }
}

/// What the machine-wide or group OOM is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Constraint {
    /// `CONSTRAINT_NONE`: the machine's memory.
    Global,
    /// `CONSTRAINT_MEMCG`: a group's `memory.max` (the root: the one v1
    /// group of `memcg.limit`, which holds every process, S-MC1).
    Memcg(CgId),
}

impl Machine {
    /// `out_of_memory()` at `at`: picks the candidate with the highest
    /// badness and kills it (its threads end, its memory is reaped). Returns
    /// why no process was killed: `vm.panic_on_oom`, no candidate left, or a
    /// policy that cannot drop pages outside reclaim.
    pub(super) fn out_of_memory(&mut self, c: Constraint, at: Nanos) -> Result<(), &'static str> {
        let swap = self.mm.swap.total() as u64;
        let (totalpages, domain) = match c {
            Constraint::Global => (self.mm.frames.len() as u64 + swap, CgId::ROOT),
            Constraint::Memcg(g) => {
                // mem_cgroup_oom() counts the event before anything else.
                let totalpages = match &mut self.memcg {
                    Some(m) => {
                        m.oom_events += 1;
                        m.oom_totalpages(swap)
                    }
                    None => {
                        self.mm.cgroups.get_mut(g).events.oom += 1;
                        // mem_cgroup_get_max(): cgroup v2 swaps by vm.swappiness.
                        let l = self.mm.cgroups.get(g).limits;
                        let swappable = if self.cfg.reclaim.swappiness > 0 { l.swap_max.min(swap) } else { 0 };
                        (l.max + swappable).max(1)
                    }
                };
                (totalpages, g)
            }
        };
        if self.cfg.oom.panics(c != Constraint::Global) {
            return Err("vm.panic_on_oom is set");
        }
        let in_scope = |t: usize| self.mm.cgroups.is_descendant(self.procs.thread_cg(t), domain);
        let Some(victim) = self.select_bad_process(&in_scope, totalpages) else {
            return Err("no process left to kill (every live process has oom_score_adj=-1000)");
        };
        self.kill_process(victim, at)?;
        // memory.oom.group: the whole group goes with the victim.
        if let Some(group) = self.oom_group(self.procs.proc_cg(victim), domain) {
            self.mm.cgroups.get_mut(group).events.oom_group_kill += 1;
            let members: Vec<usize> = (0..self.procs.procs.len())
                .filter(|&p| {
                    let proc = &self.procs.procs[p];
                    proc.killed_at.is_none()
                        && proc.live > 0
                        && proc.oom_score_adj != crate::oom::OOM_SCORE_ADJ_MIN
                        && self.mm.cgroups.is_descendant(self.procs.proc_cg(p), group)
                })
                .collect();
            for p in members {
                self.kill_process(p, at)?;
            }
        }
        // The allocation retries afresh.
        self.stalled_attempts = 0;
        Ok(())
    }

    /// `__oom_kill_process()`: reaps process `p`'s memory and ends its
    /// threads; `oom_kill` counts for the machine and the victim's group.
    fn kill_process(&mut self, p: usize, at: Nanos) -> Result<(), &'static str> {
        let regions = std::mem::take(&mut self.procs.procs[p].regions);
        let reaped = self.reap(&regions, at);
        self.procs.procs[p].regions = regions;
        reaped?;
        self.procs.procs[p].killed_at = Some(at);
        self.mm.stat.count(VmEvent::OomKill, 1);
        match &mut self.memcg {
            Some(m) => m.oom_kill_events += 1,
            None => self.mm.cgroups.get_mut(self.procs.proc_cg(p)).events.oom_kill += 1,
        }
        Ok(())
    }

    /// `do_exit()` of process `p`, whose last thread ended at `at`:
    /// `exit_mmap()` unmaps its regions as the OOM reaper does (anonymous pages
    /// and swap slots freed, file pages left in the page cache). A page the
    /// policy cannot take off its lists outside reclaim stays (a test policy's).
    pub(super) fn exit_process(&mut self, p: usize, at: Nanos) {
        let regions = std::mem::take(&mut self.procs.procs[p].regions);
        // Err: a policy that refuses to drop pages keeps them mapped, as before exit was modelled.
        let _ = self.reap(&regions, at);
        self.procs.procs[p].regions = regions;
    }

    /// `mem_cgroup_get_oom_group()`: the highest group from the victim's
    /// `cg` up to the OOM's `domain` with `memory.oom.group` set.
    fn oom_group(&self, cg: CgId, domain: CgId) -> Option<CgId> {
        if cg == CgId::ROOT || !self.mm.cgroups.is_descendant(cg, domain) {
            return None;
        }
        let mut found = None;
        for g in self.mm.cgroups.ancestors(cg) {
            if self.mm.cgroups.get(g).limits.oom_group {
                found = Some(g);
            }
            if g == domain {
                break;
            }
        }
        found
    }

    /// `select_bad_process()`: the process to kill among those with a thread
    /// for which `in_scope(thread id)` holds, scored against `totalpages`.
    fn select_bad_process(&self, in_scope: &dyn Fn(usize) -> bool, totalpages: u64) -> Option<usize> {
        let scores = self.procs.candidates(in_scope).map(|p| {
            let proc = &self.procs.procs[p];
            (p, oom_badness(mm_usage(&self.mm, &proc.regions), proc.oom_score_adj, totalpages))
        });
        select_bad_process(scores.collect::<Vec<_>>())
    }

    /// The OOM reaper's unmap of `regions` (`__oom_reap_task_mm` then
    /// `exit_mmap`) at `at`, also an exiting process's. Fails if the policy cannot take an anonymous page
    /// off its lists (a policy refuses every page: the first one then).
    fn reap(&mut self, regions: &[RegionId], at: Nanos) -> Result<(), &'static str> {
        for &r in regions {
            if self.mm.regions[r.0 as usize].kind != RegionKind::Anon {
                continue;
            }
            for i in 0..self.mm.regions[r.0 as usize].nr_pages() as usize {
                let pte = std::mem::replace(&mut self.mm.regions[r.0 as usize].ptes[i], Pte::NONE);
                let page = pte.pfn().or_else(|| pte.swap_slot().and_then(|s| self.mm.swap.slot(s).cache.pfn()));
                match page {
                    // A page under writeback is freed when its write completes (S-OOM2).
                    Some(pfn) => {
                        if !reap_anon_page(&mut self.mm, self.policy.as_mut(), pfn)
                            && !self.mm.frames[pfn].flags.has(PageFlags::WRITEBACK)
                        {
                            self.mm.regions[r.0 as usize].ptes[i] = pte;
                            return Err("the reclaim policy cannot free pages outside reclaim");
                        }
                    }
                    None => {
                        if let Some(slot) = pte.swap_slot() {
                            self.mm.swap_free(slot);
                        }
                    }
                }
            }
        }
        let mut dirtied = false;
        for &r in regions {
            if self.mm.regions[r.0 as usize].kind == RegionKind::Anon {
                continue;
            }
            for i in 0..self.mm.regions[r.0 as usize].nr_pages() as usize {
                let pte = std::mem::replace(&mut self.mm.regions[r.0 as usize].ptes[i], Pte::NONE);
                let Some(pfn) = pte.pfn() else { continue };
                dirtied |= pte.dirty() && self.mm.set_page_dirty(pfn);
                if pte.young() {
                    self.policy.on_access(&mut self.mm, pfn, AccessKind::MarkAccessed);
                }
            }
        }
        if dirtied {
            self.note_dirtied(at);
        }
        Ok(())
    }
}

/// Frees anonymous page `pfn` of a killed process (`zap_pte_range` then
/// `free_swap_cache`): off the LRU, out of the swap cache with its slot, back
/// to the free lists. False, changing nothing, while it is under writeback or
/// if the policy cannot take it off its lists.
pub(super) fn reap_anon_page(mm: &mut Mm, policy: &mut dyn ReclaimPolicy, pfn: Pfn) -> bool {
    if mm.frames[pfn].flags.has(PageFlags::WRITEBACK) || !policy.invalidate_page(mm, pfn) {
        return false;
    }
    let f = mm.frames[pfn];
    if f.flags.has(PageFlags::SWAPCACHE) {
        mm.set_swap_cache(f.swap, CacheEntry::EMPTY);
        mm.swap_free(f.swap);
    }
    mm.free_frame(pfn);
    mm.stat.count(VmEvent::Pgfree, 1);
    true
}

/// True if anonymous swap-cache page `pfn` lost its page-table entry: its
/// process was killed while the page was under writeback (S-OOM2).
pub(super) fn orphaned(mm: &Mm, pfn: Pfn) -> bool {
    let f = mm.frames[pfn];
    let Some(r) = f.owner.as_anon() else { return false };
    let pte = mm.regions[r.0 as usize].ptes[f.index as usize];
    f.flags.has(PageFlags::SWAPCACHE) && pte.pfn() != Some(pfn) && pte.swap_slot() != Some(f.swap)
}

/// The mm counters of a process made of `regions`.
fn mm_usage(mm: &Mm, regions: &[RegionId]) -> MmUsage {
    let mut u = MmUsage::default();
    for &r in regions {
        let ptes = &mm.regions[r.0 as usize].ptes;
        let mut tables = Vec::new();
        for table in ptes.chunks(PTRS_PER_TABLE) {
            u.rss += table.iter().filter(|p| p.is_present()).count() as u64;
            u.swapents += table.iter().filter(|p| p.swap_slot().is_some()).count() as u64;
            tables.push(table.iter().any(|&p| p != Pte::NONE));
        }
        u.pgtables += tables.iter().filter(|&&t| t).count() as u64;
        u.pgtables += tables.chunks(PTRS_PER_TABLE).filter(|pmd| pmd.contains(&true)).count() as u64;
    }
    u
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Access, Config, SimBuilder};

    #[test]
    fn the_reaper_frees_every_kind_of_anon_page_and_waits_for_writeback() {
        let mut c = Config::default();
        c.set("memory", "16M").unwrap();
        c.set("swap", "ssd:1M").unwrap();
        let mut b = SimBuilder::new(c).unwrap();
        b.begin_process(0).unwrap();
        let r = b.add_anon_region(4);
        b.add_thread("victim", Box::new(Idle));
        let m = &mut b.m;
        for page in 0..4 {
            m.slow_access(Access::Mem { region: r, page, write: true }, 0).ok().expect("memory is free");
        }
        let pfn = |m: &Machine, page: usize| m.mm.regions[r.0 as usize].ptes[page].pfn().unwrap();
        // Page 0: swapped out, its write in flight. Page 1: in the swap cache
        // and mapped. Page 2: swapped out, only a slot. Page 3: plain.
        let mut slots = Vec::new();
        for page in 0..3 {
            let p = pfn(m, page);
            let slot = m.mm.swap.alloc(r, page as u32).unwrap();
            m.mm.set_swap_cache(slot, CacheEntry::resident(p));
            let f = &mut m.mm.frames[p];
            f.swap = slot;
            f.flags.set(PageFlags::SWAPCACHE);
            slots.push((p, slot));
        }
        let (wb, wb_slot) = slots[0];
        m.mm.regions[r.0 as usize].ptes[0] = Pte::swapped(wb_slot);
        m.mm.start_writeback(wb);
        let (gone, gone_slot) = slots[2];
        m.mm.regions[r.0 as usize].ptes[2] = Pte::swapped(gone_slot);
        assert!(m.policy.invalidate_page(&mut m.mm, gone));
        m.mm.set_swap_cache(gone_slot, CacheEntry::EMPTY);
        m.mm.frames.free(gone);
        // Free frames, counting the swap cache's tree-node slab (v5.9+) as free
        // too: it is given back as the swap cache empties.
        let free_of = |m: &Machine| m.mm.nr_free() + m.mm.slab.xa_node.pages();
        let free = free_of(m);
        m.out_of_memory(Constraint::Global, 5).unwrap();
        assert_eq!(m.procs.killed_at(0), Some(5));
        assert_eq!(m.mm.stat.get(VmEvent::OomKill), 1);
        // Pages 1 and 3 are free, page 0 waits for its write; two slots are back.
        assert_eq!(free_of(m), free + 2);
        assert_eq!(m.mm.swap.nr_free(), m.mm.swap.total() - 1);
        assert!(m.mm.regions[r.0 as usize].ptes.iter().all(|&p| p == Pte::NONE));
        m.check_invariants();
        m.writeback_done(wb, 0);
        assert_eq!((free_of(m), m.mm.swap.nr_free()), (free + 3, m.mm.swap.total()));
        m.check_invariants();
        // Nothing is left to kill.
        assert!(m.out_of_memory(Constraint::Global, 6).unwrap_err().contains("no process left"));
    }

    /// A thread that never runs in this test.
    struct Idle;

    impl crate::Program for Idle {
        fn next(&mut self) -> crate::Step {
            crate::Step::Done
        }
    }

    #[test]
    fn usage_counts_entries_and_the_tables_holding_them() {
        let mut mm = Mm::new(64, 16);
        let r = mm.add_anon_region(3 * 512 + 1);
        let ptes = &mut mm.regions[r.0 as usize].ptes;
        ptes[0] = Pte::present(1, false);
        ptes[1] = Pte::swapped(3);
        ptes[3 * 512] = Pte::present(2, true);
        // Tables 0 and 3 hold entries (1 and 2 are empty), under one PMD table.
        assert_eq!(mm_usage(&mm, &[r]), MmUsage { rss: 2, swapents: 1, pgtables: 3 });
        assert_eq!(mm_usage(&mm, &[]), MmUsage::default());
    }
}
