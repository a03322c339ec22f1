//! The classic LRU's reclaim pass: isolation from a list's tail,
//! `shrink_active_list()`, `shrink_inactive_list()` and `shrink_lruvec()`
//! (mm/vmscan.c), and the per-page hooks of the shared pipeline
//! (`folio_check_references()`, `workingset_eviction()`).

use super::cost::InactiveBatch;
use super::{Classic, AA, AF, ANON, FILE, IA, IF};
use crate::control::{Reclaimer, ScanControl};
use crate::direct::PassTime;
use crate::eligible;
use crate::pageout::{self, FolioHooks, FolioStat, PageoutEnv, References};
use crate::rmap;
use crate::throttle;
use crate::workingset::{pack_shadow, ShadowInfo};
use crate::{DEF_PRIORITY, SWAP_CLUSTER_MAX};
use mm::tracepoint::{Lru, Tracepoint};
use mm::{Mm, PageFlags, Pfn, Shadow, VmEvent};

impl Classic {
    /// `isolate_lru_folios()` from the tail of `lru` into `self.scratch`. Returns pages scanned.
    fn isolate(&mut self, mm: &mut Mm, lru: usize, nr_to_scan: u64, sc: &mut ScanControl) -> u64 {
        debug_assert!(self.scratch.is_empty());
        if !eligible::all_eligible(mm, sc) {
            let scanned = eligible::isolate(mm, &mut self.lists[lru], nr_to_scan, sc, &mut self.scratch);
            self.uncount_isolated(mm, lru);
            return scanned;
        }
        let frames = mm.frames.slice_mut();
        let mut scanned = 0;
        let inactive = lru.is_multiple_of(2);
        while scanned < nr_to_scan {
            let Some(pfn) = self.lists[lru].pop_tail(frames) else { break };
            frames[pfn as usize].flags.clear(PageFlags::LRU);
            if inactive {
                // Eviction rewrites the page's slot or PTE: start loading it now.
                mm::space::prefetch_mapping(&mm.files, &mm.regions, &frames[pfn as usize]);
            }
            self.scratch.push(pfn);
            scanned += 1;
        }
        sc.work.pages_scanned += scanned;
        self.uncount_isolated(mm, lru);
        let list = Lru::of(lru >= IF, lru % 2 == 1);
        mm.trace(|| Tracepoint::LruIsolate {
            nr_requested: nr_to_scan,
            nr_scanned: scanned,
            nr_taken: scanned,
            lru: list,
        });
        scanned
    }

    /// `update_lru_sizes()`: the pages just isolated from `lru` leave its zone counts.
    fn uncount_isolated(&mut self, mm: &Mm, lru: usize) {
        let isolated = std::mem::take(&mut self.scratch);
        isolated.iter().for_each(|&pfn| self.count_in_zone(mm, lru, pfn, -1));
        self.scratch = isolated;
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
    pub(super) fn shrink_active_list(&mut self, mm: &mut Mm, nr_to_scan: u64, ty: usize, sc: &mut ScanControl) {
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
    pub(super) fn shrink_lruvec(
        &mut self,
        mm: &mut Mm,
        sc: &mut ScanControl,
        env: PageoutEnv,
        clock: &mut dyn PassTime,
    ) {
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
