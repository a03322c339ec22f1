//! CLOCK, or second chance: the classic page-replacement algorithm, as a
//! baseline to compare the kernel's LRUs against.
//!
//! The algorithm. Pages sit on a circle with a hand pointing at the oldest one;
//! each page has a reference bit, set by the hardware or the kernel when the
//! page is used. Here the circle is a list per page type (anon, file) whose
//! tail is where the hand points and whose head is just behind it.
//!
//! ```text
//!   new page ──> [ head ........................ tail ] ──> hand looks here
//!                  ^                                |
//!                  └── referenced: clear the bit ───┤
//!                                                   └── not referenced: reclaim (shadow left)
//! ```
//!
//! - A page entering memory, new or read back from swap or disk, goes in at the head.
//! - To free memory the hand looks at the tail page. If it was referenced since
//!   the hand last passed it (a young PTE, found and cleared through the reverse
//!   map, or `PG_referenced`, set by a `read()`/`write()` through a file
//!   descriptor), its bits are cleared and it moves to the head: its second
//!   chance. Otherwise it goes through the shared pageout pipeline
//!   (`pageout::shrink_folio_list`) exactly as the classic LRU's inactive
//!   pages do: swap slot, unmap, writeback of dirty pages, and a shadow left in
//!   its slot when it is freed. Pages the pipeline keeps (under writeback, or
//!   that it would activate) go back to the head too.
//! - A page whose writeback for reclaim ends moves to the tail to be freed
//!   next (`folio_rotate_reclaimable`, counted as `pgrotated`).
//!
//! Compared with the classic LRU there is one list per type instead of two, no
//! promotion and no workingset detection: a refault is counted
//! (`workingset_refault_anon/file`) but never activates the page.
//!
//! The anon/file split is `get_scan_count()`'s SCAN_FRACT with equal costs,
//! which v5.8+ kernels reduce to `swappiness : 200 - swappiness`: at priority
//! `p` the hand looks at `(anon >> p) * swappiness / 200` anon pages and
//! `(file >> p) * (200 - swappiness) / 200` file pages; only file pages when
//! swap cannot be used (no free slot, or `may_swap` off); every page of both
//! types at priority 0 when swappiness is not 0 (SCAN_EQUAL). The hand moves in
//! batches of `SWAP_CLUSTER_MAX`, alternating types.
//!
//! Counters, where the kernel has the same event: `pgscan_kswapd/direct` and
//! `pgscan_anon/file` for every page the hand looks at, `pgsteal_*` for every
//! page freed, `pgrotated`, `workingset_refault_*`. `pgactivate` is counted
//! by the shared pipeline for its own activate verdicts (a page met again
//! under writeback, v4.13+; no swap slot left), pages that here only go back
//! to the head: on an asynchronous swap device it counts the hand's passes
//! over pages still in flight, not promotions.
//!
//! Simplifications:
//! - S-CK1: the pass stops as soon as it has freed `nr_to_reclaim` pages (no
//!   proportional scanning of the other type once the goal is reached).
//! - S-CK2: the lists are reported as the inactive lists (`nr_inactive_anon`,
//!   `nr_inactive_file`); the active lists are always empty and nothing ages.
//! - S-CK3: a swap fault that finds its page in the swap cache or on the list
//!   changes nothing: the PTE it maps is young, which the hand will see.
//! - S-CK4: no memcg: reclaim of a group scans the one pair of lists.
//!
//! Parity: crates/reclaim/tests/clock.rs (a hand-checked reference string on
//! four frames: exact evictions, rotations and counters; the swappiness split)
//! and the conformance suite every registry entry runs
//! (crates/engine/tests/conformance.rs).

use crate::config::ReclaimConfig;
use crate::control::ScanControl;
use crate::direct::PassTime;
use crate::pageout::{self, FolioHooks, FolioStat, PageoutEnv, References};
use crate::policy::{AccessKind, LruSizes, Origin, ReclaimPolicy};
use crate::rmap;
use crate::throttle;
use crate::workingset::{pack_shadow, ShadowInfo};
use crate::SWAP_CLUSTER_MAX;
use mm::{LruList, Mm, PageFlags, Pfn, Shadow, VmEvent};

const ANON: usize = 0;
const FILE: usize = 1;

/// The CLOCK policy state: one list per type and the eviction count.
#[derive(Debug)]
pub struct Clock {
    cfg: ReclaimConfig,
    lists: [LruList; 2],
    /// Pages evicted so far: the timestamp packed into shadows, as the kernel's
    /// non-resident age, though CLOCK never reads it back.
    evictions: u64,
    scratch: Vec<Pfn>,
}

impl Clock {
    /// A policy with empty lists under `cfg` (it reads `vm.swappiness` and the dirty flags).
    pub fn new(cfg: ReclaimConfig) -> Clock {
        Clock { cfg, lists: Default::default(), evictions: 0, scratch: Vec::with_capacity(SWAP_CLUSTER_MAX as usize) }
    }

    /// Pages of the `anon` or file list from head (newest) to tail (the hand), for tests and dumps.
    pub fn list_pages(&self, mm: &Mm, anon: bool) -> Vec<Pfn> {
        self.lists[type_of(anon)].iter(mm.frames.as_slice()).collect()
    }

    /// Pages the hand looks at this pass, by type (the swappiness split above).
    pub fn scan_targets(&self, mm: &Mm, sc: &ScanControl) -> [u64; 2] {
        let swappiness = self.cfg.swappiness as u64;
        let scan = |ty: usize| self.lists[ty].len() >> sc.priority;
        if !sc.may_swap || mm.nr_swap_pages() == 0 {
            [0, scan(FILE)]
        } else if sc.priority == 0 && swappiness != 0 {
            [scan(ANON), scan(FILE)]
        } else {
            [scan(ANON) * swappiness / 200, scan(FILE) * (200 - swappiness) / 200]
        }
    }

    fn push(&mut self, mm: &mut Mm, pfn: Pfn, tail: bool) {
        let f = &mut mm.frames[pfn];
        debug_assert!(!f.flags.has(PageFlags::LRU), "pfn {pfn} added to the LRU twice");
        f.flags.set(PageFlags::LRU);
        let ty = type_of(f.is_anon());
        f.lru = ty as u8;
        if tail {
            self.lists[ty].push_tail(mm.frames.slice_mut(), pfn);
        } else {
            self.lists[ty].push_head(mm.frames.slice_mut(), pfn);
        }
    }

    /// One turn of the hand over up to `nr_to_scan` pages of type `ty`. Returns pages freed.
    fn shrink_list(&mut self, mm: &mut Mm, ty: usize, nr_to_scan: u64, sc: &mut ScanControl, env: PageoutEnv) -> u64 {
        let mut list = std::mem::take(&mut self.scratch);
        while (list.len() as u64) < nr_to_scan {
            let Some(pfn) = self.lists[ty].pop_tail(mm.frames.slice_mut()) else { break };
            mm.frames[pfn].flags.clear(PageFlags::LRU);
            list.push(pfn);
        }
        let nr_taken = list.len() as u64;
        sc.work.pages_scanned += nr_taken;
        if let Some(ev) = sc.pgscan_event() {
            mm.stat.count(ev, nr_taken);
        }
        mm.stat.count(if ty == ANON { VmEvent::PgscanAnon } else { VmEvent::PgscanFile }, nr_taken);
        let mut stat = FolioStat::default();
        let nr_reclaimed = pageout::shrink_folio_list(mm, self, sc, env, &mut list, &mut stat);
        for &pfn in &list {
            // Second chance, or kept by the pipeline: behind the hand.
            mm.frames[pfn].flags.clear(PageFlags::ACTIVE);
            self.push(mm, pfn, false);
        }
        list.clear();
        self.scratch = list;
        pageout::count_steal(mm, sc, ty == ANON, nr_reclaimed);
        pageout::trace_shrink_inactive(mm, sc, ty == ANON, nr_taken, nr_reclaimed, &stat);
        stat.add_to(&mut sc.nr);
        sc.nr.taken += nr_taken;
        if ty == FILE {
            sc.nr.file_taken += nr_taken;
        }
        throttle::after_inactive_batch(mm, sc, &self.cfg.dirty, env, &stat, nr_taken);
        nr_reclaimed
    }
}

fn type_of(anon: bool) -> usize {
    if anon {
        ANON
    } else {
        FILE
    }
}

impl FolioHooks for Clock {
    /// Referenced since the hand last passed: clear and keep; otherwise reclaim.
    fn check_references(&mut self, mm: &mut Mm, pfn: Pfn, sc: &mut ScanControl) -> References {
        let r = rmap::folio_referenced(mm, pfn);
        sc.work.rmap_walks += 1;
        sc.work.rmap_ptes += r.ptes_checked as u64;
        let referenced_page = mm.frames[pfn].flags.test_clear(PageFlags::REFERENCED);
        if r.young > 0 || referenced_page {
            References::Keep
        } else {
            References::Reclaim
        }
    }

    /// A shadow for every evicted page, stamped with the eviction count.
    fn eviction_shadow(&mut self, _mm: &Mm, _pfn: Pfn) -> Option<Shadow> {
        let shadow = pack_shadow(ShadowInfo { eviction: self.evictions, memcg: 0, workingset: false });
        self.evictions += 1;
        Some(shadow)
    }
}

impl ReclaimPolicy for Clock {
    fn name(&self) -> &'static str {
        "clock"
    }

    fn add_page(&mut self, mm: &mut Mm, pfn: Pfn, _origin: Origin, shadow: Option<Shadow>) {
        if shadow.is_some() {
            let anon = mm.frames[pfn].is_anon();
            mm.stat.count(if anon { VmEvent::WorkingsetRefaultAnon } else { VmEvent::WorkingsetRefaultFile }, 1);
        }
        self.push(mm, pfn, false);
    }

    fn on_access(&mut self, mm: &mut Mm, pfn: Pfn, via: AccessKind) {
        // S-CK3: swap faults map a young PTE, which is reference enough.
        if via == AccessKind::MarkAccessed {
            mm.frames[pfn].flags.set(PageFlags::REFERENCED);
        }
    }

    fn shrink_node(&mut self, mm: &mut Mm, sc: &mut ScanControl, env: PageoutEnv, clock: &mut dyn PassTime) {
        sc.nr = Default::default();
        sc.cache_trim_mode = false;
        let mut nr = self.scan_targets(mm, sc);
        let mut reclaimed = 0;
        // Bounded: every batch lowers some nr[] by at least one until both reach zero.
        'pass: while nr != [0, 0] {
            for ty in [ANON, FILE] {
                let chunk = nr[ty].min(SWAP_CLUSTER_MAX);
                if chunk == 0 {
                    continue;
                }
                nr[ty] -= chunk;
                reclaimed += self.shrink_list(mm, ty, chunk, sc, env);
                clock.pass_time(mm, self, sc);
                if sc.throttle.is_some() || reclaimed >= sc.nr_to_reclaim {
                    break 'pass;
                }
            }
        }
        sc.nr_reclaimed += reclaimed;
        let anon = if mm.nr_swap_pages() > 0 { self.lists[ANON].len() } else { 0 };
        throttle::after_shrink_node(mm, sc, &self.cfg.dirty, self.lists[FILE].len() + anon);
    }

    fn rotate_reclaimable(&mut self, mm: &mut Mm, pfn: Pfn) {
        let flags = mm.frames[pfn].flags;
        if flags.has(PageFlags::LRU) && !flags.has(PageFlags::DIRTY) && !flags.has(PageFlags::UNEVICTABLE) {
            self.lists[mm.frames[pfn].lru as usize].remove(mm.frames.slice_mut(), pfn);
            mm.frames[pfn].flags.clear(PageFlags::LRU);
            self.push(mm, pfn, true);
            mm.stat.count(VmEvent::Pgrotated, 1);
        }
    }

    fn invalidate_page(&mut self, mm: &mut Mm, pfn: Pfn) -> bool {
        self.lists[mm.frames[pfn].lru as usize].remove(mm.frames.slice_mut(), pfn);
        mm.frames[pfn].flags.clear(PageFlags::LRU);
        true
    }

    /// Nothing to age: CLOCK has no active list (S-CK2).
    fn age_node(&mut self, _mm: &mut Mm, _sc: &mut ScanControl) {}

    fn lru_sizes(&self) -> LruSizes {
        LruSizes { inactive_anon: self.lists[ANON].len(), inactive_file: self.lists[FILE].len(), ..LruSizes::default() }
    }

    fn check_invariants(&self, mm: &Mm) {
        let frames = mm.frames.as_slice();
        for (ty, list) in self.lists.iter().enumerate() {
            let pages: Vec<Pfn> = list.iter(frames).collect();
            assert_eq!(
                pages.len() as u64,
                list.len(),
                "list {ty}: {} pages linked, length {}",
                pages.len(),
                list.len()
            );
            for pfn in pages {
                let f = &frames[pfn as usize];
                let listed = f.flags.has(PageFlags::LRU) && !f.flags.has(PageFlags::ACTIVE);
                assert!(
                    listed && f.lru as usize == ty && type_of(f.is_anon()) == ty,
                    "pfn {pfn} on list {ty}: PG_lru and not PG_active {listed}, records list {}, anon {}",
                    f.lru,
                    f.is_anon()
                );
            }
        }
    }
}
