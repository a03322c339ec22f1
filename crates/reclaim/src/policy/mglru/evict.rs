//! The eviction: sort or isolate pages of the oldest generation, reclaim them.
//!
//! `scan_folios` looks at the tail of the oldest generation of one type. A page
//! the aging promoted is moved to its generation (*sorted*); a page whose tier
//! the PID controller protects moves one generation up; pages under writeback
//! or dirty file pages move up with `PG_reclaim`; the rest are *isolated* and go
//! through `shrink_folio_list`. Survivors come back in the youngest generations.
//!
//! Simplifications: S-MG2: one zone, no `reclaim_idx` skipping, never an
//! isolation failure; the clean-page retry of `evict_folios` is absent (a clean,
//! unmapped, unreferenced page never survives `shrink_folio_list` here).

use super::gens::{folio_gen, gen_from_seq, type_of, ANON, FILE, MAX_LRU_BATCH, MIN_LRU_BATCH, MIN_NR_GENS};
use super::Mglru;
use crate::control::{Reclaimer, ScanControl};
use crate::pageout::{self, FolioHooks, FolioStat, PageoutEnv, References};
use crate::rmap;
use mm::{Mm, PageFlags, Pfn, Shadow, VmEvent};

impl Mglru {
    /// `sort_folio()`: true if the page was moved instead of isolated.
    fn sort_folio(&mut self, mm: &mut Mm, pfn: Pfn, tier_idx: usize) -> bool {
        let f = mm.frames[pfn];
        let ty = type_of(&f);
        let gen = folio_gen(&f).expect("page on no generation list");
        let frames = &mut mm.frames;
        // Promoted by the aging.
        if gen != gen_from_seq(self.lrugen.min_seq[ty]) {
            self.lrugen.relink(frames, pfn, false);
            return true;
        }
        // Protected by the PID controller.
        let tier = self.refs.tier(&f);
        let fully = self.refs.fully_referenced(&f);
        if tier > tier_idx || fully || self.refs.saturated(&f) {
            if !fully {
                self.pid.protected[ty][tier] += 1;
            }
            if !self.refs.rework && !self.cfg.lru_gen.v6_12 {
                mm.stat.count(
                    if ty == ANON { VmEvent::WorkingsetActivateAnon } else { VmEvent::WorkingsetActivateFile },
                    1,
                );
            }
            self.folio_inc_gen(frames, pfn, false);
            self.lrugen.relink(frames, pfn, true);
            return true;
        }
        // Waiting for writeback.
        if f.flags.has(PageFlags::LOCKED)
            || f.flags.has(PageFlags::WRITEBACK)
            || (ty == FILE && f.flags.has(PageFlags::DIRTY))
        {
            self.folio_inc_gen(frames, pfn, true);
            self.lrugen.relink(frames, pfn, false);
            return true;
        }
        false
    }

    /// `isolate_folio()`: take the page off its list for reclaim.
    fn isolate_folio(&mut self, mm: &mut Mm, pfn: Pfn) {
        let f = &mut mm.frames[pfn];
        if !f.flags.has(PageFlags::REFERENCED) {
            self.refs.clear(f);
        }
        f.flags.clear(PageFlags::RECLAIM);
        // v6.1 consumed PG_referenced here; v6.14 keeps it for shrink_folio_list.
        if !self.refs.rework {
            f.flags.clear(PageFlags::REFERENCED);
        }
        self.lrugen.del(&mut mm.frames, pfn);
        self.scratch.push(pfn);
    }

    /// `scan_folios()`: looks at up to `budget` pages (at most `MAX_LRU_BATCH`);
    /// returns the pages looked at, or 0 if nothing could be isolated.
    fn scan_folios(&mut self, mm: &mut Mm, sc: &mut ScanControl, ty: usize, tier_idx: usize, budget: u64) -> u64 {
        if self.lrugen.nr_gens(ty) == MIN_NR_GENS {
            return 0;
        }
        let gen = gen_from_seq(self.lrugen.min_seq[ty]);
        let (mut scanned, mut sorted, mut isolated) = (0, 0, 0);
        let mut remaining = budget.min(MAX_LRU_BATCH);
        while let Some(pfn) = self.lrugen.list(gen, ty).tail() {
            scanned += 1;
            if self.sort_folio(mm, pfn, tier_idx) {
                sorted += 1;
            } else {
                self.isolate_folio(mm, pfn);
                isolated += 1;
            }
            remaining -= 1;
            if remaining == 0 || isolated >= MIN_LRU_BATCH {
                break;
            }
        }
        // Global reclaim only: memcg limit reclaim counts neither (its scans from v7.1).
        if let Some(item) = sc.pgscan_event() {
            mm.stat.count(item, isolated);
        }
        if !sc.reclaimer.is_cgroup() {
            mm.stat.count(VmEvent::Pgrefill, sorted);
        }
        mm.stat.count(if ty == ANON { VmEvent::PgscanAnon } else { VmEvent::PgscanFile }, isolated);
        sc.work.pages_scanned += isolated;
        sc.work.pages_sorted += sorted;
        if ty == FILE {
            sc.nr.file_taken += isolated;
        }
        sc.nr.taken += isolated;
        if isolated > 0 || remaining == 0 {
            scanned
        } else {
            0
        }
    }

    /// `isolate_folios()`: choose the type (and tier threshold), then scan; the
    /// other type is tried if the first yields nothing. Returns (scanned, type).
    fn isolate_folios(&mut self, mm: &mut Mm, sc: &mut ScanControl, swappiness: u32, budget: u64) -> (u64, usize) {
        let min_seq = self.lrugen.min_seq;
        let (mut ty, mut tier) = if self.refs.rework {
            let ty = if swappiness == 0 { FILE } else { self.pid.type_to_scan_v614(swappiness) };
            (ty, None)
        } else if swappiness == 0 {
            (FILE, None)
        } else if min_seq[ANON] < min_seq[FILE] {
            (ANON, None)
        } else if swappiness == 1 {
            (FILE, None)
        } else if swappiness == 200 {
            (ANON, None)
        } else {
            let (t, idx) = self.pid.type_to_scan_v61(swappiness);
            (t, Some(idx))
        };
        let first = (swappiness == 0) as usize;
        for _ in first..2 {
            let idx = tier.unwrap_or_else(|| self.pid.tier_idx(ty, self.refs.rework));
            let scanned = self.scan_folios(mm, sc, ty, idx, budget);
            if scanned > 0 {
                return (scanned, ty);
            }
            ty = 1 - ty;
            tier = None;
        }
        (0, ty)
    }

    /// `try_to_inc_min_seq()`: skip emptied oldest generations; keep anon and
    /// file within reach of each other when both are evictable.
    pub(super) fn try_to_inc_min_seq(&mut self, can_swap: bool) -> bool {
        let mut min_seq = self.lrugen.min_seq;
        let first = if can_swap { ANON } else { FILE };
        for (ty, seq) in min_seq.iter_mut().enumerate().skip(first) {
            while *seq + MIN_NR_GENS <= self.lrugen.max_seq && self.lrugen.list(gen_from_seq(*seq), ty).is_empty() {
                *seq += 1;
            }
        }
        if can_swap {
            min_seq[ANON] = min_seq[ANON].min(min_seq[FILE]);
            min_seq[FILE] = min_seq[ANON].max(self.lrugen.min_seq[FILE]);
        }
        let mut success = false;
        for (ty, &seq) in min_seq.iter().enumerate().skip(first) {
            if seq != self.lrugen.min_seq[ty] {
                self.pid.fold(ty);
                self.lrugen.min_seq[ty] = seq;
                success = true;
            }
        }
        success
    }

    /// `evict_folios()`: one batch of at most `budget` pages looked at (v6.17;
    /// before, always `MAX_LRU_BATCH`). Returns the pages scanned (0 = no progress).
    pub(super) fn evict_folios(
        &mut self,
        mm: &mut Mm,
        sc: &mut ScanControl,
        env: PageoutEnv,
        swappiness: u32,
        budget: u64,
    ) -> u64 {
        let (mut scanned, ty) = self.isolate_folios(mm, sc, swappiness, budget);
        scanned += self.try_to_inc_min_seq(swappiness != 0) as u64;
        let check = if swappiness != 0 { ANON } else { FILE };
        if self.lrugen.nr_gens(check) == MIN_NR_GENS {
            scanned = 0;
        }
        if self.scratch.is_empty() {
            return scanned;
        }
        let mut list = std::mem::take(&mut self.scratch);
        let taken = list.len() as u64;
        let mut stat = FolioStat::default();
        let reclaimed = pageout::shrink_folio_list(mm, self, sc, env, &mut list, &mut stat);
        sc.nr_reclaimed += reclaimed;
        for &pfn in &list {
            if self.refs.rework {
                // v6.14: only a page that would join the oldest generation is
                // made active (its refs cleared); the others keep PG_referenced
                // for their next look.
                if self.folio_seq(&mm.frames[pfn], false) == self.lrugen.min_seq[type_of(&mm.frames[pfn])] {
                    let f = &mut mm.frames[pfn];
                    self.refs.clear(f);
                    f.flags.set(PageFlags::ACTIVE);
                }
                self.lru_gen_add_folio(mm, pfn, false);
                continue;
            }
            let f = &mut mm.frames[pfn];
            if f.flags.has(PageFlags::RECLAIM) && (f.flags.has(PageFlags::DIRTY) || f.flags.has(PageFlags::WRITEBACK)) {
                // Restore what isolation cleared; lru_gen_add_folio places it.
                if f.flags.has(PageFlags::WORKINGSET) {
                    f.flags.set(PageFlags::REFERENCED);
                }
            } else {
                // Rejected pages do not go back to the oldest generation.
                self.refs.clear(f);
                f.flags.set(PageFlags::ACTIVE);
            }
            self.lru_gen_add_folio(mm, pfn, false);
        }
        list.clear();
        self.scratch = list;
        pageout::count_steal(mm, sc, ty == ANON, reclaimed);
        pageout::trace_shrink_inactive(mm, sc, ty == ANON, taken, reclaimed, &stat);
        stat.add_to(&mut sc.nr);
        scanned
    }
}

impl FolioHooks for Mglru {
    /// `folio_check_references()` with MGLRU: the rmap walk runs look-around on
    /// every young mapping. v6.1: look-around marks the isolated page referenced,
    /// so any young PTE activates it. v6.14: `set_refs` decides keep or activate.
    fn check_references(&mut self, mm: &mut Mm, pfn: Pfn, sc: &mut ScanControl) -> References {
        // folio_update_gen() found it young while it was isolated (look-around
        // from a neighbour): keep it. The kernel tests the mapcount; the
        // simulator looks at the mappings without charging a walk. v6.14
        // dropped this test: PG_referenced is then the first look's mark.
        if !self.refs.rework && mm.frames[pfn].flags.has(PageFlags::REFERENCED) && rmap::folio_mapped(mm, pfn) {
            return References::Keep;
        }
        let mut young_at = std::mem::take(&mut self.young_at);
        young_at.clear();
        let r = rmap::folio_referenced_at(mm, pfn, |m| young_at.push(m));
        sc.work.rmap_walks += 1;
        sc.work.rmap_ptes += r.ptes_checked as u64;
        let can_swap = mm.frames[pfn].is_anon();
        let walk = sc.reclaimer == Reclaimer::Kswapd;
        for &m in &young_at {
            self.look_around(mm, m, can_swap, walk, &mut sc.work);
        }
        self.young_at = young_at;
        let f = &mut mm.frames[pfn];
        if r.young == 0 {
            let referenced_folio = f.flags.test_clear(PageFlags::REFERENCED);
            return if referenced_folio && !f.is_anon() { References::ReclaimClean } else { References::Reclaim };
        }
        if self.refs.rework {
            return if self.refs.set_refs(f) { References::Activate } else { References::Keep };
        }
        f.flags.set(PageFlags::REFERENCED);
        References::Activate
    }

    /// `lru_gen_eviction()`.
    fn eviction_shadow(&mut self, mm: &Mm, pfn: Pfn) -> Option<Shadow> {
        Some(self.eviction_token(&mm.frames[pfn]))
    }
}
