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
//! Files by job: this one the lists, page arrival, access and refault;
//! `scan_count.rs` the scan targets (`get_scan_count()`); `shrink.rs` the
//! reclaim pass (isolation, `shrink_active_list()`, `shrink_inactive_list()`,
//! `shrink_lruvec()`, the pipeline's per-page hooks); `cost.rs` the anon/file
//! cost model.
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
mod shrink;

use scan_count::PassControl;
pub use scan_count::{ScanBalance, ScanCount};

use crate::config::ReclaimConfig;
use crate::control::ScanControl;
use crate::direct::PassTime;
use crate::pageout::PageoutEnv;
use crate::policy::{AccessKind, LruSizes, Origin, ReclaimPolicy};
use crate::throttle;
use crate::watermark::int_sqrt;
use crate::workingset::{refault_distance, unpack_shadow, ShadowInfo};
use crate::SWAP_CLUSTER_MAX;
use cost::CostModel;
use mm::tracepoint::Tracepoint;
use mm::{LruList, Mm, PageFlags, Pfn, Shadow, VmEvent, ZoneId, MAX_NR_ZONES};

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
    /// Pages of each list by zone type: `update_lru_size()`'s per-zone counts
    /// (`NR_ZONE_LRU_BASE + lru`), which size the scans of a zone-limited reclaim.
    zone_lens: [[u64; MAX_NR_ZONES]; 4],
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
            zone_lens: [[0; MAX_NR_ZONES]; 4],
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

    /// `lruvec_lru_size(lruvec, lru, zone_idx)`: pages of list `lru` in zones
    /// of type up to `zone_idx`.
    fn eligible_len(&self, lru: usize, zone_idx: ZoneId) -> u64 {
        self.zone_lens[lru][..=zone_idx as usize].iter().sum()
    }

    /// Counts `pfn` in (`delta` 1) or out of (`delta` -1) the zone counts of list `lru`.
    fn count_in_zone(&mut self, mm: &Mm, lru: usize, pfn: Pfn, delta: i64) {
        let zone = mm.zones[mm.frames.zone_of(pfn)].id as usize;
        let n = &mut self.zone_lens[lru][zone];
        *n = n.checked_add_signed(delta).expect("zone LRU count below zero");
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
        self.count_in_zone(mm, lru, pfn, 1);
    }

    fn del_from_list(&mut self, mm: &mut Mm, pfn: Pfn) {
        let lru = mm.frames[pfn].lru as usize;
        self.lists[lru].remove(mm.frames.slice_mut(), pfn);
        mm.frames[pfn].flags.clear(PageFlags::LRU);
        self.count_in_zone(mm, lru, pfn, -1);
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
        // The LRU's size on the machine this one stands for (`memory.scaled_from`).
        let gb = self.cfg.scale.to_model(inactive + active) >> (30 - mm::PAGE_SHIFT);
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
            let mut by_zone = [0; MAX_NR_ZONES];
            list.iter(frames).for_each(|pfn| by_zone[mm.zones[mm.frames.zone_of(pfn)].id as usize] += 1);
            assert_eq!(by_zone, self.zone_lens[lru], "list {lru}: zone counts disagree with its pages");
        }
    }
}
