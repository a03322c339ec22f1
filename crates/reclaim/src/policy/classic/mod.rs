//! The classic two-list LRU: active and inactive lists per type (anon, file).
//!
//! ```text
//!   new, refault ─┐                 ┌─ second reference / referenced at the tail
//!                 v                 |
//!   [ active ] ──deactivate──> [ inactive ] ──tail──> reclaim (shadow left)
//! ```
//!
//! Models `shrink_lruvec()`, `get_scan_count()`, `shrink_active_list()`,
//! `shrink_inactive_list()`, `folio_check_references()`, `inactive_is_low()`,
//! `prepare_scan_control()` (mm/vmscan.c), `folio_mark_accessed()`,
//! `lru_note_cost()` (mm/swap.c) and `workingset_refault()`/`workingset_eviction()`
//! (mm/workingset.c) — v6.8 behaviour, with the history of seeds 000 and 004 as
//! flags in [`ReclaimConfig`].
//!
//! Simplifications:
//! - S-CL1: one lruvec (groups and zones get one each: `tree`, `zoned`).
//! - S-CL2: isolation is atomic: no lru_lock, no per-CPU folio batches; other
//!   reclaimers' isolation is the engine's calls in flight (S-TH2).
//! - S-CL3: no mlock/unevictable pages, no VM_SEQ_READ/VM_RAND_READ hints.
//! - S-CL4: counters use today's names (`workingset_refault_file`) in every
//!   profile, though kernels before v5.9 had a single `workingset_refault`.
//! - S-CL5: `PG_workingset` is set on deactivation (v4.20+) in every profile;
//!   seed 000's 2016 patch (`lru_balance=rfc-2016`) set it on activation.
//!
//! Parity: crates/reclaim/tests/classic.rs (scan fractions per balance form, cost
//! charges and decay, tiny-file and cache-trim modes, refault distance), the cost
//! model's own tests in `cost.rs`, and the seed 004 worked examples in
//! crates/engine/tests.

mod cost;
mod scan_count;

use scan_count::PassControl;
pub use scan_count::{ScanBalance, ScanCount};

use crate::config::ReclaimConfig;
use crate::control::{Reclaimer, ScanControl};
use crate::direct::PassTime;
use crate::eligible;
use crate::pageout::{self, FolioHooks, FolioStat, PageoutEnv, References};
use crate::policy::{AccessKind, LruSizes, Origin, ReclaimPolicy};
use crate::rmap;
use crate::throttle;
use crate::watermark::int_sqrt;
use crate::workingset::{pack_shadow, refault_distance, unpack_shadow, ShadowInfo};
use crate::{DEF_PRIORITY, SWAP_CLUSTER_MAX};
use cost::{CostModel, InactiveBatch};
use mm::tracepoint::{Lru, Tracepoint};
use mm::{LruList, Mm, PageFlags, Pfn, Shadow, VmEvent};

/// List indices, as the kernel's `enum lru_list`.
const IA: usize = 0;
const AA: usize = 1;
const IF: usize = 2;
const AF: usize = 3;
const ANON: usize = 0;
const FILE: usize = 1;

fn lru_index(anon: bool, active: bool) -> usize {
    (!anon as usize) * 2 + active as usize
}

/// The memory group's statistics as reclaim reads them (`lruvec_page_state` on
/// a memcg lruvec): copies taken at the last rstat flush.
#[derive(Clone, Copy, Debug)]
struct GroupStats {
    /// List sizes, by list index.
    lru: [u64; 4],
    /// `workingset_activate_anon/file`.
    activations: [u64; 2],
}

/// The classic LRU policy state (one lruvec).
#[derive(Debug)]
pub struct Classic {
    cfg: ReclaimConfig,
    lists: [LruList; 4],
    /// The workingset clock: evictions and activations (B.2).
    nonresident_age: u64,
    /// The anon/file balance: costs or rotation ratios, by the profile's form.
    cost: CostModel,
    /// `lruvec->refaults[]`: workingset activations at the last snapshot.
    refaults_snapshot: [u64; 2],
    pass: PassControl,
    scratch: Vec<Pfn>,
    /// Flushed group statistics; `None` = reads are exact (no group, or S-MC6).
    group_stats: Option<GroupStats>,
}

impl Classic {
    /// A policy with empty lists under `cfg`.
    pub fn new(cfg: ReclaimConfig) -> Classic {
        Classic {
            cost: CostModel::new(cfg.balance),
            cfg,
            lists: Default::default(),
            nonresident_age: 0,
            refaults_snapshot: [0; 2],
            pass: PassControl::default(),
            scratch: Vec::with_capacity(SWAP_CLUSTER_MAX as usize),
            group_stats: None,
        }
    }

    /// The current non-resident age (for tests and dumps).
    pub fn nonresident_age(&self) -> u64 {
        self.nonresident_age
    }

    /// `(anon_cost, file_cost)` of the lruvec.
    pub fn costs(&self) -> (u64, u64) {
        self.cost.costs()
    }

    /// Sets the lruvec's costs (for hand-built test scenarios).
    pub fn set_costs(&mut self, anon_cost: u64, file_cost: u64) {
        self.cost.set_costs(anon_cost, file_cost);
    }

    /// Pages of list `lru` from head (newest) to tail, for tests and dumps.
    pub fn list_pages(&self, mm: &Mm, anon: bool, active: bool) -> Vec<Pfn> {
        let frames = mm.frames.as_slice();
        self.lists[lru_index(anon, active)].iter(frames).collect()
    }

    fn len(&self, lru: usize) -> u64 {
        self.lists[lru].len()
    }

    /// A list size as the group's statistics report it (flushed copy or exact).
    fn stat_len(&self, lru: usize) -> u64 {
        self.group_stats.map_or_else(|| self.len(lru), |g| g.lru[lru])
    }

    /// Workingset activations (anon, file) as the group's statistics report them.
    fn stat_activations(&self, mm: &Mm) -> [u64; 2] {
        self.group_stats.map_or_else(
            || [mm.stat.get(VmEvent::WorkingsetActivateAnon), mm.stat.get(VmEvent::WorkingsetActivateFile)],
            |g| g.activations,
        )
    }

    fn add_to_list(&mut self, mm: &mut Mm, pfn: Pfn, tail: bool) {
        let f = &mut mm.frames[pfn];
        debug_assert!(!f.flags.has(PageFlags::LRU), "pfn {pfn} added to the LRU twice");
        f.flags.set(PageFlags::LRU);
        let lru = lru_index(f.is_anon(), f.flags.has(PageFlags::ACTIVE));
        f.lru = lru as u8;
        if tail {
            self.lists[lru].push_tail(mm.frames.slice_mut(), pfn);
        } else {
            self.lists[lru].push_head(mm.frames.slice_mut(), pfn);
        }
    }

    fn del_from_list(&mut self, mm: &mut Mm, pfn: Pfn) {
        let lru = mm.frames[pfn].lru as usize;
        self.lists[lru].remove(mm.frames.slice_mut(), pfn);
        mm.frames[pfn].flags.clear(PageFlags::LRU);
    }

    /// `workingset_age_nonresident()`.
    fn age_nonresident(&mut self, nr: u64) {
        self.nonresident_age += nr;
    }

    /// Pages on all four lists (the decay's yardstick).
    fn lru_pages(&self) -> u64 {
        self.lists.iter().map(|l| l.len()).sum()
    }

    /// `lru_note_cost()` of `nr_io` pages of IO and `nr_rotated` rotations to type `ty`.
    fn note_cost(&mut self, ty: usize, nr_io: u64, nr_rotated: u64) {
        let lru_pages = self.lru_pages();
        self.cost.note_cost(ty, nr_io, nr_rotated, lru_pages);
    }

    /// `inactive_is_low()`: is the inactive list of type `ty` smaller than its target?
    pub fn inactive_is_low(&self, ty: usize) -> bool {
        let inactive = self.stat_len(ty * 2);
        let active = self.stat_len(ty * 2 + 1);
        let gb = (inactive + active) >> (30 - mm::PAGE_SHIFT);
        let one_to_one = if ty == ANON { self.cfg.anon_ratio_1to1 } else { self.cfg.file_ratio_1to1 };
        let ratio = if one_to_one {
            1
        } else if gb > 0 {
            int_sqrt(10 * gb)
        } else {
            1
        };
        inactive * ratio < active
    }

    /// Refault check (B.4). Sets `PG_active` / `PG_workingset` on `pfn` as decided.
    fn workingset_refault(&mut self, mm: &mut Mm, pfn: Pfn, shadow: Shadow) {
        let anon = mm.frames[pfn].is_anon();
        let ShadowInfo { eviction, workingset, .. } = unpack_shadow(shadow);
        mm.stat.count(if anon { VmEvent::WorkingsetRefaultAnon } else { VmEvent::WorkingsetRefaultFile }, 1);
        let distance = refault_distance(self.nonresident_age, eviction);
        let (challenges, swap) = (self.cfg.cache_challenges_anon, mm.nr_swap_pages() > 0);
        let workingset_size = if challenges {
            let mut ws = self.stat_len(AF);
            if anon {
                ws += self.stat_len(IF);
            }
            if swap {
                ws += self.stat_len(AA);
                if !anon {
                    ws += self.stat_len(IA);
                }
            }
            ws
        } else {
            // Before v5.8: only the active file list could be challenged.
            self.stat_len(AF)
        };
        let activated = distance <= workingset_size;
        if activated {
            mm.frames[pfn].flags.set(PageFlags::ACTIVE);
            self.age_nonresident(1);
            mm.stat.count(if anon { VmEvent::WorkingsetActivateAnon } else { VmEvent::WorkingsetActivateFile }, 1);
            if workingset {
                mm.frames[pfn].flags.set(PageFlags::WORKINGSET);
                self.note_cost(if anon { ANON } else { FILE }, 1, 0);
                mm.stat.count(if anon { VmEvent::WorkingsetRestoreAnon } else { VmEvent::WorkingsetRestoreFile }, 1);
            }
        }
        // Recorded last: the check keeps nothing for it when off. Bit n of the lists counted is list n.
        mm.trace(|| {
            let (ca, cs) = (challenges && anon, challenges && swap);
            let lists = [(AF, true), (IF, ca), (AA, cs), (IA, cs && !anon)];
            let workingset_lists = lists.iter().fold(0, |m, &(l, on)| m | (on as u8) << l);
            Tracepoint::SimRefault { pfn, distance, workingset_size, workingset_lists, workingset, activated }
        });
    }

    /// `activate_page()` from `do_swap_page()` before v5.9: activates `pfn` if it is
    /// on the inactive list (a page still in a per-CPU add batch is not reported).
    fn swap_fault_activate(&mut self, mm: &mut Mm, pfn: Pfn) {
        let flags = mm.frames[pfn].flags;
        if !self.cfg.anon_start_inactive && flags.has(PageFlags::LRU) && !flags.has(PageFlags::ACTIVE) {
            self.del_from_list(mm, pfn);
            mm.frames[pfn].flags.set(PageFlags::ACTIVE);
            self.add_to_list(mm, pfn, false);
            mm.stat.count(VmEvent::Pgactivate, 1);
            mm.trace(|| Tracepoint::LruActivate { pfn });
            self.cost.scanned(ANON, 1, 1);
        }
    }

    /// `isolate_lru_folios()` from the tail of `lru` into `self.scratch`. Returns pages scanned.
    fn isolate(&mut self, mm: &mut Mm, lru: usize, nr_to_scan: u64, sc: &mut ScanControl) -> u64 {
        debug_assert!(self.scratch.is_empty());
        if !eligible::all_eligible(mm, sc) {
            return eligible::isolate(mm, &mut self.lists[lru], nr_to_scan, sc, &mut self.scratch);
        }
        let frames = mm.frames.slice_mut();
        let mut scanned = 0;
        while scanned < nr_to_scan {
            let Some(pfn) = self.lists[lru].pop_tail(frames) else { break };
            frames[pfn as usize].flags.clear(PageFlags::LRU);
            self.scratch.push(pfn);
            scanned += 1;
        }
        sc.work.pages_scanned += scanned;
        let list = Lru::of(lru >= IF, lru % 2 == 1);
        mm.trace(|| Tracepoint::LruIsolate {
            nr_requested: nr_to_scan,
            nr_scanned: scanned,
            nr_taken: scanned,
            lru: list,
        });
        scanned
    }

    /// `move_folios_to_lru()`: puts survivors back at the head of their lists.
    fn putback(&mut self, mm: &mut Mm, list: &[Pfn]) {
        for &pfn in list {
            let active = mm.frames[pfn].flags.has(PageFlags::ACTIVE);
            self.add_to_list(mm, pfn, false);
            // v5.8 ("age nonresident information alongside anonymous pages").
            if active && self.cfg.cache_challenges_anon {
                self.age_nonresident(1);
            }
        }
    }

    /// `shrink_active_list()`.
    fn shrink_active_list(&mut self, mm: &mut Mm, nr_to_scan: u64, ty: usize, sc: &mut ScanControl) {
        let nr_scanned = self.isolate(mm, ty * 2 + 1, nr_to_scan, sc);
        let nr_taken = self.scratch.len() as u64;
        sc.isolated[ty] += nr_taken;
        if !sc.reclaimer.is_cgroup() {
            mm.stat.count(VmEvent::Pgrefill, nr_scanned);
        }
        self.cost.scanned(ty, nr_taken, 0);
        let list = std::mem::take(&mut self.scratch);
        let (mut nr_referenced, mut nr_rotated, mut nr_deactivate) = (0, 0, 0);
        for &pfn in &list {
            let r = rmap::folio_referenced(mm, pfn);
            sc.work.rmap_walks += 1;
            sc.work.rmap_ptes += r.ptes_checked as u64;
            if r.young > 0 {
                nr_referenced += 1;
                // Executable file pages get another trip on the active list.
                if r.exec && ty == FILE {
                    nr_rotated += 1;
                    continue;
                }
            }
            let f = &mut mm.frames[pfn];
            f.flags.clear(PageFlags::ACTIVE);
            // Simplification S-CL5: set on deactivation in every profile (2016's patch set it on activation).
            f.flags.set(PageFlags::WORKINGSET);
            nr_deactivate += 1;
            mm.trace(|| Tracepoint::SimLruMove { pfn, to_active: false, why: "deactivate" });
        }
        self.putback(mm, &list);
        self.scratch = list;
        self.scratch.clear();
        mm.stat.count(VmEvent::Pgdeactivate, nr_deactivate);
        let (priority, file, nr_active, nid) = (sc.priority, ty == FILE, nr_rotated, sc.nid.unwrap_or(0));
        let nr_deactivated = nr_deactivate;
        mm.trace(|| Tracepoint::ShrinkActive {
            nr_taken,
            nr_active,
            nr_deactivated,
            nr_referenced,
            priority,
            file,
            nid,
        });
        let lru_pages = self.lru_pages();
        self.cost.after_active(ty, nr_referenced, nr_rotated, lru_pages);
    }

    /// `shrink_inactive_list()`. Returns pages reclaimed.
    fn shrink_inactive_list(
        &mut self,
        mm: &mut Mm,
        nr_to_scan: u64,
        ty: usize,
        sc: &mut ScanControl,
        (env, clock): (PageoutEnv, &mut dyn PassTime),
    ) -> u64 {
        let (dirty, inactive) = (self.cfg.dirty, self.len(ty * 2));
        if throttle::too_many_isolated(mm, self, sc, clock, (&dirty, ty, inactive)) {
            return 0;
        }
        let nr_scanned = self.isolate(mm, ty * 2, nr_to_scan, sc);
        let nr_taken = self.scratch.len() as u64;
        sc.isolated[ty] += nr_taken;
        if let Some(ev) = sc.pgscan_event() {
            mm.stat.count(ev, nr_scanned);
        }
        mm.stat.count(if ty == ANON { VmEvent::PgscanAnon } else { VmEvent::PgscanFile }, nr_scanned);
        self.cost.scanned(ty, nr_taken, 0);
        if nr_taken == 0 {
            return 0;
        }
        let mut list = std::mem::take(&mut self.scratch);
        let mut stat = FolioStat::default();
        let nr_reclaimed = pageout::shrink_folio_list(mm, self, sc, env, &mut list, &mut stat);
        self.putback(mm, &list);
        list.clear();
        self.scratch = list;
        pageout::count_steal(mm, sc, ty == ANON, nr_reclaimed);
        pageout::trace_shrink_inactive(mm, sc, ty == ANON, nr_scanned, nr_reclaimed, &stat);
        let batch =
            InactiveBatch { nr_scanned, nr_reclaimed, nr_pageout: stat.nr_pageout, nr_activate: stat.nr_activate };
        let lru_pages = self.lru_pages();
        self.cost.after_inactive(ty, batch, lru_pages);
        stat.add_to(&mut sc.nr);
        let nr = &mut sc.nr;
        nr.taken += nr_taken;
        if ty == FILE {
            nr.file_taken += nr_taken;
        }
        throttle::after_inactive_batch(mm, sc, &self.cfg.dirty, env, &stat, nr_taken);
        nr_reclaimed
    }

    /// `shrink_lruvec()`.
    fn shrink_lruvec(&mut self, mm: &mut Mm, sc: &mut ScanControl, env: PageoutEnv, clock: &mut dyn PassTime) {
        let targets = self.get_scan_count(mm, sc).nr;
        let mut nr = targets;
        let nr_to_reclaim = sc.nr_to_reclaim;
        // Neither kswapd nor memcg reclaim scans proportionally (`proportional_reclaim`).
        let proportional = sc.reclaimer == Reclaimer::Direct && sc.priority == DEF_PRIORITY;
        let mut reclaimed = 0;
        let mut scan_adjusted = false;
        // Bounded: every round lowers some nr[] by at least one until all reach zero.
        while nr[IA] > 0 || nr[AF] > 0 || nr[IF] > 0 {
            for lru in [IA, AA, IF, AF] {
                if nr[lru] == 0 {
                    continue;
                }
                let chunk = nr[lru].min(SWAP_CLUSTER_MAX);
                nr[lru] -= chunk;
                let ty = lru / 2;
                if lru % 2 == 1 {
                    if self.pass.may_deactivate[ty] {
                        self.shrink_active_list(mm, chunk, ty, sc);
                    } else {
                        sc.skipped_deactivate = true;
                    }
                } else {
                    reclaimed += self.shrink_inactive_list(mm, chunk, ty, sc, (env, &mut *clock));
                }
                clock.pass_time(mm, self, sc);
                if sc.throttle.is_some() {
                    break;
                }
            }
            if sc.throttle.is_some() {
                // S-TH1: the reclaimer waits now; the engine resumes it later.
                break;
            }
            if reclaimed < nr_to_reclaim || proportional || scan_adjusted {
                continue;
            }
            // Goal reached: scan the other type only in proportion to what was
            // already scanned of this one, so that the balance is kept.
            let nr_file = nr[IF] + nr[AF];
            let nr_anon = nr[IA] + nr[AA];
            if nr_file == 0 || nr_anon == 0 {
                break;
            }
            let (stop, other) = if nr_file > nr_anon { (ANON, FILE) } else { (FILE, ANON) };
            let stopped_left = nr[stop * 2] + nr[stop * 2 + 1];
            let pct = stopped_left * 100 / (targets[stop * 2] + targets[stop * 2 + 1] + 1);
            nr[stop * 2] = 0;
            nr[stop * 2 + 1] = 0;
            for lru in [other * 2, other * 2 + 1] {
                let done = targets[lru] - nr[lru];
                nr[lru] = (targets[lru] * (100 - pct) / 100).saturating_sub(done.min(targets[lru] * (100 - pct) / 100));
            }
            scan_adjusted = true;
        }
        sc.nr_reclaimed += reclaimed;
        if sc.throttle.is_none() && mm.swap.is_configured() && self.inactive_is_low(ANON) {
            self.shrink_active_list(mm, SWAP_CLUSTER_MAX, ANON, sc);
        }
    }
}

impl FolioHooks for Classic {
    /// `folio_check_references()`, classic LRU.
    fn check_references(&mut self, mm: &mut Mm, pfn: Pfn, sc: &mut ScanControl) -> References {
        let r = rmap::folio_referenced(mm, pfn);
        sc.work.rmap_walks += 1;
        sc.work.rmap_ptes += r.ptes_checked as u64;
        let f = &mut mm.frames[pfn];
        let anon = f.is_anon();
        let referenced_page = f.flags.test_clear(PageFlags::REFERENCED);
        if r.young > 0 {
            // Before v5.9 a referenced anon page was activated on the first look.
            if anon && !self.cfg.anon_start_inactive {
                return References::Activate;
            }
            // Mapped pages start with a young PTE from the fault: look twice.
            f.flags.set(PageFlags::REFERENCED);
            if referenced_page || r.young > 1 {
                return References::Activate;
            }
            if r.exec && !anon {
                return References::Activate;
            }
            return References::Keep;
        }
        if referenced_page && !anon {
            return References::ReclaimClean;
        }
        References::Reclaim
    }

    /// `workingset_eviction()`, classic LRU.
    fn eviction_shadow(&mut self, mm: &Mm, pfn: Pfn) -> Option<Shadow> {
        let f = &mm.frames[pfn];
        if f.is_anon() && !self.cfg.anon_workingset {
            // v5.8: anon reclaim still ages the non-resident clock.
            if self.cfg.cache_challenges_anon {
                self.age_nonresident(1);
            }
            return None;
        }
        let shadow = pack_shadow(ShadowInfo {
            eviction: self.nonresident_age,
            memcg: 0,
            workingset: f.flags.has(PageFlags::WORKINGSET),
        });
        self.age_nonresident(1);
        Some(shadow)
    }
}

impl ReclaimPolicy for Classic {
    fn name(&self) -> &'static str {
        "classic"
    }

    fn add_page(&mut self, mm: &mut Mm, pfn: Pfn, origin: Origin, shadow: Option<Shadow>) {
        if let Some(s) = shadow {
            self.workingset_refault(mm, pfn, s);
        }
        let anon = mm.frames[pfn].is_anon();
        let ty = if anon { ANON } else { FILE };
        if origin == Origin::AnonFault && !self.cfg.anon_start_inactive {
            // Before v5.9 new anon pages started active (and counted as rotated).
            // Swapped-in pages start inactive; `do_swap_page()` activated them
            // afterwards if they were already listed (`on_swap_in_listed`).
            mm.frames[pfn].flags.set(PageFlags::ACTIVE);
        }
        if origin == Origin::SwapIn {
            let lru_pages = self.lru_pages();
            self.cost.swap_in(self.cfg.anon_workingset, lru_pages);
        }
        let active = mm.frames[pfn].flags.has(PageFlags::ACTIVE);
        self.cost.scanned(ty, 1, active as u64);
        self.add_to_list(mm, pfn, false);
    }

    fn on_access(&mut self, mm: &mut Mm, pfn: Pfn, via: AccessKind) {
        if via != AccessKind::MarkAccessed {
            return self.swap_fault_activate(mm, pfn);
        }
        let flags = mm.frames[pfn].flags;
        if flags.has(PageFlags::UNEVICTABLE) {
            return;
        }
        if !flags.has(PageFlags::ACTIVE) && flags.has(PageFlags::REFERENCED) && flags.has(PageFlags::LRU) {
            // Second access: promote (folio_activate + workingset_activation).
            self.del_from_list(mm, pfn);
            let f = &mut mm.frames[pfn];
            f.flags.set(PageFlags::ACTIVE);
            f.flags.clear(PageFlags::REFERENCED);
            let ty = if f.is_anon() { ANON } else { FILE };
            self.add_to_list(mm, pfn, false);
            mm.stat.count(VmEvent::Pgactivate, 1);
            mm.trace(|| Tracepoint::LruActivate { pfn });
            self.cost.scanned(ty, 1, 1);
            self.age_nonresident(1);
        } else if !flags.has(PageFlags::REFERENCED) {
            mm.frames[pfn].flags.set(PageFlags::REFERENCED);
        }
    }

    fn shrink_node(&mut self, mm: &mut Mm, sc: &mut ScanControl, env: PageoutEnv, clock: &mut dyn PassTime) {
        self.prepare_scan_control(mm, sc);
        sc.nr = Default::default();
        sc.cache_trim_mode = self.pass.cache_trim_mode;
        self.shrink_lruvec(mm, sc, env, clock);
        let anon = if mm.nr_swap_pages() > 0 { self.len(IA) + self.len(AA) } else { 0 };
        throttle::after_shrink_node(mm, sc, &self.cfg.dirty, self.len(IF) + self.len(AF) + anon);
    }

    fn rotate_reclaimable(&mut self, mm: &mut Mm, pfn: Pfn) {
        let flags = mm.frames[pfn].flags;
        if flags.has(PageFlags::LRU) && !flags.has(PageFlags::DIRTY) && !flags.has(PageFlags::UNEVICTABLE) {
            self.del_from_list(mm, pfn);
            mm.frames[pfn].flags.clear(PageFlags::ACTIVE);
            self.add_to_list(mm, pfn, true);
            mm.stat.count(VmEvent::Pgrotated, 1);
        }
    }

    fn invalidate_page(&mut self, mm: &mut Mm, pfn: Pfn) -> bool {
        self.del_from_list(mm, pfn);
        true
    }

    fn age_node(&mut self, mm: &mut Mm, sc: &mut ScanControl) {
        if mm.swap.is_configured() && self.inactive_is_low(ANON) {
            self.shrink_active_list(mm, SWAP_CLUSTER_MAX, ANON, sc);
        }
    }

    fn snapshot_refaults(&mut self, mm: &Mm) {
        self.refaults_snapshot = self.stat_activations(mm);
    }

    fn flush_group_stats(&mut self, mm: &Mm) {
        let lru = [self.len(IA), self.len(AA), self.len(IF), self.len(AF)];
        let activations = [mm.stat.get(VmEvent::WorkingsetActivateAnon), mm.stat.get(VmEvent::WorkingsetActivateFile)];
        self.group_stats = Some(GroupStats { lru, activations });
    }

    fn lru_sizes(&self) -> LruSizes {
        LruSizes {
            inactive_anon: self.len(IA),
            active_anon: self.len(AA),
            inactive_file: self.len(IF),
            active_file: self.len(AF),
            unevictable: 0,
        }
    }

    fn check_invariants(&self, mm: &Mm) {
        let frames = mm.frames.as_slice();
        for (lru, list) in self.lists.iter().enumerate() {
            let mut n = 0;
            for pfn in list.iter(frames) {
                let f = &frames[pfn as usize];
                assert!(f.flags.has(PageFlags::LRU), "pfn {pfn} on list {lru} without PG_lru");
                assert_eq!(f.lru as usize, lru, "pfn {pfn} on list {lru} but records {}", f.lru);
                assert_eq!(
                    lru_index(f.is_anon(), f.flags.has(PageFlags::ACTIVE)),
                    lru,
                    "pfn {pfn}: type/active flags disagree with its list"
                );
                n += 1;
            }
            assert_eq!(n, list.len(), "list {lru}: length {} but {n} pages linked", list.len());
        }
    }
}
