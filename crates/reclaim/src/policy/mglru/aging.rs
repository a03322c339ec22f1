//! The aging: new generations from the page-table walk and look-around.
//!
//! `try_to_inc_max_seq` walks the page tables of every address space that ran
//! since the last walk, moves pages with young PTEs to the youngest generation
//! (`folio_update_gen`), then opens a new generation (`inc_max_seq`), first
//! retiring the oldest one of a type that already has `MAX_NR_GENS`.
//!
//! The walk's shortcuts follow `walk_pmd_range`: with `enabled & 0x0004` a PTE
//! table whose PMD accessed bit is clear is skipped, and (unless forced) only
//! tables found in the Bloom filter are scanned; a table with at least one young
//! PTE per cache line of entries (`young * 8 >= total`) is added to the next
//! filter. Look-around scans up to 64 PTEs around a young PTE the rmap found;
//! v6.1 activates the young listed pages it finds (`folio_activate`) when there
//! are fewer than `PAGEVEC_SIZE` of them and no walk context, and otherwise
//! updates their generation in place (`folio_update_gen`).
//!
//! Simplification S-MG1: an address space "ran since the last walk" iff one of
//! its PTEs is young, and a PMD entry is "young" iff one of the PTEs under it is
//! (our page tables have no non-leaf levels; each region is one process's VMA
//! aligned to a PMD, its PTE tables are its 512-page chunks). The simulator
//! reads PTEs to decide this, but only the entries the kernel would read are
//! charged as CPU work.
//!
//! Look-around by kernel: v6.1 as above; v6.3 to v6.12 ("mm: multi-gen LRU:
//! simplify lru_gen_look_around()") update every young page in place,
//! walk context or not (the model's `mglru_6_12`); v6.13 activates without
//! a walk (no model); v6.14 (the rework) skips pages on no generation, and
//! without a walk marks a page on its first look and activates it on its
//! second.

use super::bloom::TableKey;
use super::gens::{folio_gen, gen_from_seq, type_of, ANON, FILE, MAX_NR_GENS, MIN_LRU_BATCH};
use super::Mglru;
use crate::control::ReclaimWork;
use crate::rmap::Mapping;
use mm::{
    CgId, DirtyState, File, Frame, FrameTable, Mm, PageFlags, Pfn, Pte, RegionKind, VmEvent, VmStat, PAGEVEC_SIZE,
};
use std::ops::Range;

/// KERNEL: `PTRS_PER_PTE` on x86-64: pages per PTE table (one PMD entry).
pub const PTRS_PER_PTE: u32 = 512;

/// `suitable_to_scan()`: at least one young PTE per cache line of PTEs
/// (`clamp(64 / 8, 2, 8)` = 8 entries).
fn suitable_to_scan(total: u32, young: u32) -> bool {
    young * 8 >= total
}

/// The page-table walk's counters for the youngest generation (`mm_stats`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MmStats {
    /// Leaf PTEs checked.
    pub leaf_total: u64,
    /// Leaf PTEs found young.
    pub leaf_young: u64,
    /// Non-leaf entries checked.
    pub nonleaf_total: u64,
    /// Non-leaf entries found in the Bloom filter (or forced) and walked.
    pub nonleaf_found: u64,
    /// Non-leaf entries added to the next Bloom filter.
    pub nonleaf_added: u64,
}

/// A young PTE the walk or look-around may use (`get_pte_pfn` + `get_pfn_folio`):
/// clears its accessed bit, moves its dirty bit into `PG_dirty` with the dirty
/// accounting of `folio_mark_dirty()` (not for anon pages without a swap slot,
/// dirty by nature) and returns the page. v6.14 (`skip_isolated`) leaves pages
/// on no generation alone, so an isolated page keeps its young PTE for its
/// own reference check.
///
/// A page of another lruvec is left alone (`elsewhere`): of another group
/// with a cgroup tree (`get_pfn_folio`'s `folio_memcg()` check) or of another
/// node (its `folio_nid()` check).
fn take_young(
    pte: &mut Pte,
    frames: &mut FrameTable,
    dirty: &mut DirtyState,
    stat: &mut VmStat,
    can_swap: bool,
    skip_isolated: bool,
    elsewhere: impl Fn(Pfn, &Frame) -> bool,
) -> Option<Pfn> {
    let pfn = pte.pfn()?;
    let f = &frames[pfn];
    if !pte.young() || (!can_swap && f.is_anon()) || (skip_isolated && folio_gen(f).is_none()) || elsewhere(pfn, f) {
        return None;
    }
    pte.test_clear_young();
    if pte.dirty() && (!f.is_anon() || f.flags.has(PageFlags::SWAPCACHE)) {
        dirty.mark_dirty(frames, stat, pfn);
    }
    Some(pfn)
}

/// Whether page `pfn` (`f`), mapped by a region of group `region_cg`, is of
/// another lruvec: off `node`'s frames (with a node filter) or charged to a
/// group other than `memcg` (with a tree; `None` without one): anon pages are
/// their region's group's, file pages their file's (S-CG1).
fn elsewhere(
    pfn: Pfn,
    f: &Frame,
    node: &Option<Range<Pfn>>,
    region_cg: CgId,
    files: &[File],
    memcg: Option<CgId>,
) -> bool {
    node.as_ref().is_some_and(|n| !n.contains(&pfn))
        || memcg.is_some_and(|g| f.owner.as_file().map_or(region_cg, |file| files[file.0 as usize].cg) != g)
}

/// The frames of node `node` (`None`: no node filter, every frame is the
/// lruvec's). A node's zones are consecutive in the frame table.
fn node_pfns(mm: &Mm, node: Option<u8>) -> Option<Range<Pfn>> {
    let n = node?;
    let zones = mm.zones.iter().filter(|z| z.node == n);
    let start = zones.clone().map(|z| z.start_pfn).min()?;
    Some(start..zones.map(|z| z.start_pfn + z.managed as Pfn).max()?)
}

impl Mglru {
    /// `folio_update_gen()`: the aging (or look-around with a walk) saw a young PTE.
    pub(super) fn update_gen(&mut self, frames: &mut FrameTable, pfn: Pfn, new_gen: usize) {
        let f = &mut frames[pfn];
        if folio_gen(f).is_none() {
            // Isolated by the eviction: tell shrink_folio_list.
            f.flags.set(PageFlags::REFERENCED);
            return;
        }
        // v6.14: the first look only marks the page.
        if self.refs.rework {
            if !self.refs.set_refs(f) {
                return;
            }
        } else {
            self.refs.clear(f);
        }
        if folio_gen(f) != Some(new_gen) {
            self.lrugen.set_gen(frames, pfn, new_gen);
        }
    }

    /// `folio_inc_gen()`: a page of the oldest generation moves one generation up
    /// (unless the aging already promoted it). Returns its new logical generation.
    pub(super) fn folio_inc_gen(&mut self, frames: &mut FrameTable, pfn: Pfn, reclaiming: bool) -> usize {
        let ty = type_of(&frames[pfn]);
        let old_gen = gen_from_seq(self.lrugen.min_seq[ty]);
        let gen = folio_gen(&frames[pfn]).expect("page on no generation list");
        if gen != old_gen {
            return gen;
        }
        let new_gen = (old_gen + 1) % MAX_NR_GENS as usize;
        let f = &mut frames[pfn];
        self.refs.clear(f);
        if reclaiming {
            f.flags.set(PageFlags::RECLAIM);
        }
        self.lrugen.set_gen(frames, pfn, new_gen);
        new_gen
    }

    /// `try_to_inc_max_seq()`: walk, then open a generation. False if `seq` is stale.
    pub(super) fn try_to_inc_max_seq(
        &mut self,
        mm: &mut Mm,
        seq: u64,
        can_swap: bool,
        force_scan: bool,
        now_ns: u64,
        work: &mut ReclaimWork,
    ) -> bool {
        if seq != self.lrugen.max_seq {
            return false;
        }
        if self.cfg.lru_gen.mm_walk {
            self.bloom.reset(seq + 1);
            self.mm_stats = MmStats::default();
            for r in 0..mm.regions.len() {
                self.walk_region(mm, r, seq, can_swap, force_scan, work);
            }
        }
        self.inc_max_seq(mm, can_swap, now_ns, work);
        true
    }

    /// `walk_mm()` for one region: `walk_pmd_range` over its PTE tables.
    fn walk_region(
        &mut self,
        mm: &mut Mm,
        r: usize,
        max_seq: u64,
        can_swap: bool,
        force_scan: bool,
        work: &mut ReclaimWork,
    ) {
        let memcg = mm.cgroups.enabled().then(|| mm.cgroups.current());
        let node = node_pfns(mm, self.node);
        let Mm { regions, files, frames, dirty, stat, .. } = mm;
        let region = &mut regions[r];
        if region.kind == RegionKind::Anon && !can_swap {
            return; // should_skip_vma
        }
        // The group's own address spaces only (its lru_gen_mm_list).
        if memcg.is_some_and(|g| region.cg != g) {
            return;
        }
        let region_cg = region.cg;
        let n = region.ptes.len() as u32;
        let chunks = n.div_ceil(PTRS_PER_PTE);
        self.chunk_young.clear();
        self.chunk_young.extend((0..chunks).map(|c| {
            let (s, e) = (c * PTRS_PER_PTE, ((c + 1) * PTRS_PER_PTE).min(n));
            region.ptes[s as usize..e as usize].iter().any(|p| p.young())
        }));
        // S-MG1: not scheduled since the last walk.
        if !force_scan && !self.chunk_young.iter().any(|&y| y) {
            return;
        }
        work.walk_mms += 1;
        let new_gen = gen_from_seq(max_seq);
        for c in 0..chunks {
            work.walk_pmds += 1;
            self.mm_stats.nonleaf_total += 1;
            if self.cfg.lru_gen.nonleaf_young && !self.chunk_young[c as usize] {
                continue;
            }
            let key = TableKey { region: r as u32, chunk: c };
            if !force_scan && !self.bloom.test(max_seq, key) {
                continue;
            }
            self.mm_stats.nonleaf_found += 1;
            let (s, e) = (c * PTRS_PER_PTE, ((c + 1) * PTRS_PER_PTE).min(n));
            let mut young = 0;
            for i in s..e {
                let Some(pfn) = take_young(
                    &mut region.ptes[i as usize],
                    frames,
                    dirty,
                    stat,
                    can_swap,
                    self.refs.rework,
                    |pfn, f| elsewhere(pfn, f, &node, region_cg, files, memcg),
                ) else {
                    continue;
                };
                young += 1;
                self.update_gen(frames, pfn, new_gen);
            }
            let total = e - s;
            work.walk_ptes += total as u64;
            self.mm_stats.leaf_total += total as u64;
            self.mm_stats.leaf_young += young as u64;
            if suitable_to_scan(total, young) {
                self.mm_stats.nonleaf_added += 1;
                self.bloom.update(max_seq + 1, key);
            }
        }
    }

    /// `inc_max_seq()`.
    pub(super) fn inc_max_seq(&mut self, mm: &mut Mm, can_swap: bool, now_ns: u64, work: &mut ReclaimWork) {
        for ty in [FILE, ANON] {
            if self.lrugen.nr_gens(ty) == MAX_NR_GENS {
                self.inc_min_seq(mm, ty, can_swap, work);
            }
        }
        let next = gen_from_seq(self.lrugen.max_seq + 1);
        self.lrugen.timestamps[next] = now_ns;
        self.lrugen.max_seq += 1;
    }

    /// `inc_min_seq()`: retire the oldest generation of `ty`, moving its pages up.
    ///
    /// Simplification S-MG4: when anon cannot be swapped the kernel leaves its
    /// oldest pages where they are (their generation numbers then alias younger
    /// ones); here they are carried up one generation like the others, without
    /// charging the work, so every page stays inside its type's window.
    fn inc_min_seq(&mut self, mm: &mut Mm, ty: usize, can_swap: bool, work: &mut ReclaimWork) {
        let charged = ty != ANON || can_swap;
        let old_gen = gen_from_seq(self.lrugen.min_seq[ty]);
        while let Some(pfn) = self.lrugen.list(old_gen, ty).tail() {
            let f = &mm.frames[pfn];
            if charged && self.refs.rework && !self.refs.fully_referenced(f) && folio_gen(f) == Some(old_gen) {
                let tier = self.refs.tier(f);
                self.pid.protected[ty][tier] += 1;
            }
            self.folio_inc_gen(&mut mm.frames, pfn, false);
            self.lrugen.relink(&mut mm.frames, pfn, true);
            work.pages_sorted += charged as u64;
        }
        self.pid.fold(ty);
        self.lrugen.min_seq[ty] += 1;
    }

    /// `lru_gen_look_around()`: the rmap found `at` young while evicting; scan
    /// neighbouring PTEs of the same table and region. `can_swap` is false when a
    /// file page is evicted (anon neighbours are left alone).
    pub(super) fn look_around(&mut self, mm: &mut Mm, at: Mapping, can_swap: bool, walk: bool, work: &mut ReclaimWork) {
        let memcg = mm.cgroups.enabled().then(|| mm.cgroups.current());
        let node = node_pfns(mm, self.node);
        let Mm { regions, files, frames, dirty, stat, .. } = mm;
        let region = &mut regions[at.region.0 as usize];
        let region_cg = region.cg;
        let n = region.ptes.len() as u32;
        let batch = MIN_LRU_BATCH as u32;
        let mut start = at.index - at.index % PTRS_PER_PTE;
        let mut end = (start + PTRS_PER_PTE).min(n);
        if end - start > batch {
            if at.index - start < batch / 2 {
                end = start + batch;
            } else if end - at.index < batch / 2 {
                start = end - batch;
            } else {
                start = at.index - batch / 2;
                end = at.index + batch / 2;
            }
        }
        let max_seq = self.lrugen.max_seq;
        let new_gen = gen_from_seq(max_seq);
        let v6_1 = !self.cfg.lru_gen.v6_12 && !self.refs.rework;
        let v6_3_to_12 = self.cfg.lru_gen.v6_12 && !self.refs.rework;
        // The PTE that brought us here was young (the rmap cleared it).
        let mut young = 1;
        // Listed young pages outside the youngest generation (the kernel's bitmap).
        let mut stale = [0 as Pfn; MIN_LRU_BATCH as usize];
        let mut nr_stale = 0;
        for i in start..end {
            let Some(pfn) =
                take_young(&mut region.ptes[i as usize], frames, dirty, stat, can_swap, self.refs.rework, |pfn, f| {
                    elsewhere(pfn, f, &node, region_cg, files, memcg)
                })
            else {
                continue;
            };
            young += 1;
            // v6.3..v6.12 update every young page in place, walk or not.
            if (walk && !v6_1) || v6_3_to_12 {
                self.update_gen(frames, pfn, new_gen);
                continue;
            }
            // v6.14 without a walk (`lru_gen_set_refs`): the first look marks
            // the page; the second activates it if it is not in the youngest
            // generation yet.
            if self.refs.rework && !self.refs.set_refs(&mut frames[pfn]) {
                continue;
            }
            match folio_gen(&frames[pfn]) {
                // Isolated by the eviction: tell shrink_folio_list.
                None => frames[pfn].flags.set(PageFlags::REFERENCED),
                Some(g) if g != new_gen => {
                    stale[nr_stale] = pfn;
                    nr_stale += 1;
                }
                Some(_) => {}
            }
        }
        let stale = &stale[..nr_stale];
        if !v6_1 || (!walk && stale.len() < PAGEVEC_SIZE) {
            // folio_activate(): re-added active, at the head of the youngest
            // generation, refs kept.
            for &pfn in stale {
                self.lrugen.set_gen(frames, pfn, new_gen);
                self.lrugen.relink(frames, pfn, false);
                stat.count(VmEvent::Pgactivate, 1);
            }
        } else {
            // v6.1 with a walk or PAGEVEC_SIZE pages or more: folio_update_gen()
            // in place (refs cleared, the page stays linked where it is; sorted
            // later), no activation counted.
            for &pfn in stale {
                self.update_gen(frames, pfn, new_gen);
            }
        }
        work.walk_ptes += (end - start) as u64;
        if suitable_to_scan(end - start, young) {
            self.bloom.update(max_seq, TableKey { region: at.region.0, chunk: at.index / PTRS_PER_PTE });
        }
    }
}
