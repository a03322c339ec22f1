//! Driving reclaim: when to age, how much to scan (v6.1 `lru_gen_shrink_lruvec`,
//! `get_nr_to_scan`, `should_run_aging`, `lru_gen_age_node`; v6.12
//! `try_to_shrink_lruvec` under `mglru_6_12`).
//!
//! v6.1: kswapd ages in `age_node` before each pass and leaves the aging out
//! of its eviction loop; direct reclaim ages inline when eviction needs it
//! (below the default priority). v6.12: both age inline, `age_node` only
//! checks `min_ttl_ms`. Eviction runs `evict_folios` batches until
//! `nr_to_scan = pages >> priority` were scanned or enough were reclaimed.

use super::config::InitialPriority;
use super::gens::{gen_from_seq, ANON, FILE, MAX_LRU_BATCH, MIN_LRU_BATCH, MIN_NR_GENS};
use super::Mglru;
use crate::control::{Reclaimer, ScanControl};
use crate::direct::PassTime;
use crate::memcg_lru::MemcgLruForm;
use crate::pageout::PageoutEnv;
use crate::policy::LruSizes;
use crate::DEF_PRIORITY;
use mm::{Mm, Watermark};

/// `set_initial_priority()` (v6.3+, `mglru_initial_priority`), at the start of
/// a node's root reclaim (`lru_gen_shrink_node()`): a reclaim at
/// `DEF_PRIORITY` that wants at least `MIN_LRU_BATCH` pages (kswapd's; direct
/// reclaim wants 32) starts where the node's inactive pages `>> priority`
/// would about cover what it wants, on the kernel's assumption that the
/// inactive share of a scan is what it reclaims: `fls(inactive) - 1 -
/// fls(nr_to_reclaim - 1)` (the pages rounded down and the want rounded up
/// to powers of two), clamped to `0..=12` (v6.3) or `6..=12` (v6.11).
/// `sizes` are the node's lists (every group's); anon counts while swap has
/// a free slot (`can_reclaim_anon_pages()` for the root).
///
/// S-MG6: v6.11+ also calls it at the top of `lru_gen_age_node()` with the
/// want of kswapd's pass before; the model's scan control starts each pass
/// wanting nothing, so only the call where the pass reclaims counts.
pub fn set_initial_priority(form: InitialPriority, mm: &Mm, sc: &mut ScanControl, sizes: LruSizes) {
    let floor = match form {
        InitialPriority::Off => return,
        InitialPriority::V6_3 => 0,
        InitialPriority::V6_11 => DEF_PRIORITY / 2,
    };
    if sc.priority != DEF_PRIORITY || sc.nr_to_reclaim < MIN_LRU_BATCH {
        return;
    }
    let fls = |x: u64| (u64::BITS - x.leading_zeros()) as i32;
    let mut reclaimable = sizes.inactive_file;
    if mm.swap.nr_free() > 0 {
        reclaimable += sizes.inactive_anon;
    }
    sc.priority = (fls(reclaimable) - 1 - fls(sc.nr_to_reclaim - 1)).clamp(floor, DEF_PRIORITY);
}

/// `should_abort_scan()` of root reclaim, asked after each eviction batch
/// of a lruvec (`try_to_shrink_lruvec()`) and after each group of the memcg
/// LRU's walk (`shrink_many()`): enough reclaimed (at order 0 `compact_gap`
/// is below every `nr_to_reclaim`); from v6.7 (`form.watermark_stop()`,
/// "mm/mglru: try to stop at high watermarks") kswapd also stops once every
/// managed zone of node `nid` up to `reclaim_idx` has more free pages than
/// its high watermark plus `MIN_LRU_BATCH` plus its reserve against
/// `reclaim_idx` (`zone_watermark_ok()`).
pub(crate) fn should_abort_scan(mm: &Mm, sc: &ScanControl, form: MemcgLruForm, nid: u8) -> bool {
    if sc.nr_reclaimed >= sc.nr_to_reclaim {
        return true;
    }
    if !form.watermark_stop() || sc.reclaimer != Reclaimer::Kswapd {
        return false;
    }
    let class = sc.reclaim_idx as usize;
    let mut eligible =
        mm.zones.iter().enumerate().filter(|(_, z)| z.node == nid && z.id <= sc.reclaim_idx && z.managed > 0);
    eligible.all(|(i, z)| mm.zone_free(i) > z.wmark(Watermark::High) + MIN_LRU_BATCH + z.lowmem_reserve[class])
}

impl Mglru {
    /// `get_swappiness()`: 0 without usable swap (fewer than 64 free slots).
    pub(super) fn get_swappiness(&self, mm: &Mm, sc: &ScanControl) -> u32 {
        if !sc.may_swap || mm.nr_swap_pages() < MIN_LRU_BATCH {
            0
        } else {
            sc.proactive_swappiness.unwrap_or(self.cfg.swappiness)
        }
    }

    /// `should_run_aging()`: (aging needed, pages eligible); callers shift
    /// the pages by the priority.
    pub(super) fn should_run_aging(&self, can_swap: bool) -> (bool, u64) {
        let g = &self.lrugen;
        let first = if can_swap { ANON } else { FILE };
        let max_seq = g.max_seq;
        let (mut total, mut young, mut old) = (0, 0, 0);
        for ty in first..2 {
            for seq in g.min_seq[ty]..=max_seq {
                let size = g.nr_pages(gen_from_seq(seq), ty);
                total += size;
                if seq == max_seq {
                    young += size;
                } else if seq + MIN_NR_GENS == max_seq {
                    old += size;
                }
            }
        }
        // v6.1 computes the scan size before the generation tests: a direct
        // reclaimer that had to age with two generations left still evicts.
        if g.min_seq[first] + MIN_NR_GENS > max_seq {
            return (true, total);
        }
        if g.min_seq[first] + MIN_NR_GENS < max_seq {
            return (false, total);
        }
        // Three generations: age if the youngest is too big or the middle one too small.
        (young * MIN_NR_GENS > total || old * (MIN_NR_GENS + 2) < total, total)
    }

    /// `lruvec_is_sizable()` (v6.3+): the evictable types' pages `>> priority`
    /// are not 0 (groups are never offline here, so always shifted).
    pub(super) fn is_sizable(&self, mm: &Mm, sc: &ScanControl) -> bool {
        let first = if self.get_swappiness(mm, sc) != 0 { ANON } else { FILE };
        let g = &self.lrugen;
        let total: u64 = (first..2)
            .flat_map(|ty| (g.min_seq[ty]..=g.max_seq).map(move |seq| g.nr_pages(gen_from_seq(seq), ty)))
            .sum();
        total >> sc.priority != 0
    }

    /// Notes in `sc` that this lruvec aged on the eviction path (the memcg
    /// LRU moves its group to the young generation).
    fn note_aged(&self, sc: &mut ScanControl) {
        sc.mglru_aged_nodes |= 1 << self.node.unwrap_or(0);
    }

    /// v6.17 (`mglru_memcg_protection`): `total` scaled by the group's
    /// protection (`apply_proportional_protection()`); before, `total`.
    fn protect(&self, mm: &Mm, sc: &mut ScanControl, total: u64) -> u64 {
        if self.cfg.lru_gen.proportional_protection {
            crate::tree::apply_proportional_protection(mm, sc, total)
        } else {
            total
        }
    }

    /// `get_nr_to_scan()`.
    fn get_nr_to_scan(&mut self, mm: &mut Mm, sc: &mut ScanControl, can_swap: bool) -> u64 {
        let (need_aging, total) = self.should_run_aging(can_swap);
        let nr_to_scan = self.protect(mm, sc, total) >> sc.priority;
        if !need_aging {
            return nr_to_scan;
        }
        if sc.priority != DEF_PRIORITY {
            // kswapd leaves the aging to age_node().
            if sc.reclaimer == Reclaimer::Kswapd {
                return 0;
            }
            let max_seq = self.lrugen.max_seq;
            if self.try_to_inc_max_seq(mm, max_seq, can_swap, false, sc.now_ns, &mut sc.work) {
                self.note_aged(sc);
                return nr_to_scan;
            }
        }
        let first = if can_swap { ANON } else { FILE };
        if self.lrugen.min_seq[first] + MIN_NR_GENS <= self.lrugen.max_seq {
            nr_to_scan
        } else {
            0
        }
    }

    /// v6.12 `get_nr_to_scan()`: `None` when the lruvec needed aging below the
    /// default priority: it is aged and left for this priority. From v6.17
    /// (`mglru_memcg_protection`) the group's protection scales the pages
    /// first, as `get_scan_count()` scales each list.
    fn get_nr_to_scan_6_12(&mut self, mm: &mut Mm, sc: &mut ScanControl, can_swap: bool) -> Option<u64> {
        let (need_aging, mut total) = self.should_run_aging(can_swap);
        // v6.12 (unlike v6.1) has nothing to scan when out of cold generations.
        let first = if can_swap { ANON } else { FILE };
        if self.lrugen.min_seq[first] + MIN_NR_GENS > self.lrugen.max_seq {
            total = 0;
        }
        let nr_to_scan = self.protect(mm, sc, total) >> sc.priority;
        if !need_aging || sc.priority == DEF_PRIORITY {
            return Some(nr_to_scan);
        }
        let max_seq = self.lrugen.max_seq;
        if self.try_to_inc_max_seq(mm, max_seq, can_swap, false, sc.now_ns, &mut sc.work) {
            self.note_aged(sc);
            None
        } else {
            Some(0)
        }
    }

    /// `lru_gen_shrink_lruvec()` (v6.1) / `try_to_shrink_lruvec()` (v6.12).
    pub(super) fn shrink_lruvec(
        &mut self,
        mm: &mut Mm,
        sc: &mut ScanControl,
        env: PageoutEnv,
        clock: &mut dyn PassTime,
    ) {
        let mut scanned = 0;
        let v6_12 = self.cfg.lru_gen.v6_12;
        // Bounded: every round scans at least one page, and nr_to_scan is finite.
        loop {
            let swappiness = self.get_swappiness(mm, sc);
            let nr_to_scan = if v6_12 {
                match self.get_nr_to_scan_6_12(mm, sc, swappiness != 0) {
                    Some(n) => n,
                    None => break,
                }
            } else {
                self.get_nr_to_scan(mm, sc, swappiness != 0)
            };
            if nr_to_scan == 0 {
                break;
            }
            // v6.17: a batch scans at most nr_to_scan pages.
            let budget = if self.cfg.lru_gen.proportional_protection { nr_to_scan } else { MAX_LRU_BATCH };
            let delta = self.evict_folios(mm, sc, env, swappiness, budget);
            clock.pass_time(mm, self, sc);
            if delta == 0 {
                break;
            }
            scanned += delta;
            if scanned >= nr_to_scan {
                break;
            }
            // should_abort_scan(): v6.12 never cuts memcg reclaim short.
            let nid = self.node.or(sc.nid).unwrap_or(0);
            if !(v6_12 && sc.reclaimer.is_cgroup()) && should_abort_scan(mm, sc, self.cfg.lru_gen.memcg_lru, nid) {
                break;
            }
        }
    }

    /// `lru_gen_age_node()` (kswapd): if `min_ttl_ms` protects the oldest
    /// generation, it asks for the OOM killer (`sc.oom`); else v6.1 ages if
    /// needed. From v6.3 (7348cc91821b "mm: multi-gen LRU: remove aging
    /// fairness safeguard"; the model's `mglru_6_12`) it never ages: kswapd,
    /// like direct reclaim, ages on its eviction path (`get_nr_to_scan`).
    pub(super) fn age_node(&mut self, mm: &mut Mm, sc: &mut ScanControl) {
        let can_swap = self.get_swappiness(mm, sc) != 0;
        let (need_aging, total) = self.should_run_aging(can_swap);
        let nr_to_scan = total >> sc.priority;
        let min_ttl_ns = self.cfg.lru_gen.min_ttl_ms * 1_000_000;
        if min_ttl_ns > 0 {
            let birth = self.lrugen.timestamps[gen_from_seq(self.lrugen.min_seq[FILE])];
            let too_young = sc.now_ns < birth + min_ttl_ns;
            if too_young || (nr_to_scan == 0 && sc.priority != DEF_PRIORITY) {
                self.min_ttl_ooms += 1;
                sc.oom = true;
                return;
            }
        }
        if need_aging && !self.cfg.lru_gen.v6_12 {
            let max_seq = self.lrugen.max_seq;
            self.try_to_inc_max_seq(mm, max_seq, can_swap, false, sc.now_ns, &mut sc.work);
        }
    }
}
