//! Pageblocks and migratetypes: each zone's free frames grouped by mobility,
//! the fallback that takes another type's frames when a type has none, and the
//! watermark boost such a fallback raises (v5.0+, mm/page_alloc.c).
//!
//! A zone is cut into pageblocks of [`PAGEBLOCK_PAGES`] frames (aligned on
//! the pfn, as the kernel's), each of one [`Migratetype`]; a free frame is on
//! the free list of its block's type. An allocation takes from its own type's
//! list; when that is empty it falls back (`__rmqueue_fallback`) to the block
//! of the fallback types (`fallbacks[]`, in order) with the most free frames:
//! a block free as a whole changes type; else, where the kernel would try to
//! claim it, the block changes type when its free and "alike" frames are half
//! of it or more (`try_to_claim_block`), otherwise one frame is stolen.
//!
//! Simplifications (S-MM4, narrowed): no buddy orders: a block's free frames
//! count as one free chunk, so "the largest free buddy" is the block with the
//! most free frames and a movable claim needs 16 free frames (a free buddy of
//! `pageblock_order / 2`); the kernel's v5.0..v6.9 move of a block's free
//! pages without claiming it is not modelled (v6.10+'s rule for all); no
//! `ALLOC_NOFRAGMENT`, highatomic or CMA blocks, no compaction (kcompactd's
//! wakeup after a boosted kswapd run is only counted).

use crate::frame::{Frame, PageFlags, Pfn};
use crate::zone::{Watermark, Zone};

/// KERNEL: `pageblock_order` on x86-64 (`HUGETLB_PAGE_ORDER`, 2 MiB).
pub const PAGEBLOCK_ORDER: u32 = 9;
/// KERNEL: `pageblock_nr_pages`.
pub const PAGEBLOCK_PAGES: u32 = 1 << PAGEBLOCK_ORDER;
/// KERNEL: the default `vm.watermark_boost_factor` (150% of the high watermark).
pub const DEFAULT_BOOST_FACTOR: u64 = 15_000;

/// A pageblock's mobility (`MIGRATE_*`, the per-CPU types).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum Migratetype {
    /// `MIGRATE_UNMOVABLE`: kernel data that cannot move (here: `memory.reserved`).
    Unmovable = 0,
    /// `MIGRATE_MOVABLE`: user pages, page cache, zsmalloc's pages.
    Movable = 1,
    /// `MIGRATE_RECLAIMABLE`: slab caches the shrinkers free (dentries, inodes, tree nodes).
    Reclaimable = 2,
}

impl Migratetype {
    /// KERNEL: `fallbacks[]`: the types an allocation of this type takes from, in order.
    pub fn fallbacks(self) -> [Migratetype; 2] {
        match self {
            Migratetype::Unmovable => [Migratetype::Reclaimable, Migratetype::Movable],
            Migratetype::Movable => [Migratetype::Reclaimable, Migratetype::Unmovable],
            Migratetype::Reclaimable => [Migratetype::Unmovable, Migratetype::Movable],
        }
    }
}

/// Which fallbacks raise the zone's watermark boost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BoostForm {
    /// Before v5.0: there is no boost.
    #[default]
    None,
    /// v5.0..v6.14 (`steal_suitable_fallback`): every fallback below a whole block.
    Fallback,
    /// v6.15+ (`try_to_claim_block`): only a try to claim a block; a single
    /// movable page stolen (`__rmqueue_steal`) raises none.
    Claim,
}

/// `boost_watermark()`: raises `zone`'s boost by a pageblock, up to `factor`
/// / 10000 of its high watermark (at least a pageblock). False, changing
/// nothing, when the factor is 0, the zone is under four pageblocks or its
/// high watermark is not set.
pub fn boost_watermark(zone: &mut Zone, factor: u64) -> bool {
    let block = PAGEBLOCK_PAGES as u64;
    if factor == 0 || block * 4 > zone.managed {
        return false;
    }
    let max_boost = zone.watermark[Watermark::High as usize] * factor / 10_000;
    if max_boost == 0 {
        return false;
    }
    zone.watermark_boost = (zone.watermark_boost + block).min(max_boost.max(block));
    true
}

/// A zone's pageblocks as a booted kernel left them (`/proc/pagetypeinfo`):
/// the unmovable and reclaimable blocks with their free frames, and the free
/// frames of the movable blocks, which are the rest of the zone.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BootLayout {
    /// Unmovable blocks and their free frames.
    pub unmovable: (u32, u32),
    /// Reclaimable blocks and their free frames.
    pub reclaimable: (u32, u32),
    /// Free frames of the movable blocks.
    pub movable_free: u32,
}

/// One zone's free frames, on a list per migratetype.
#[derive(Clone, Debug)]
pub(crate) struct ZoneFree {
    /// Frames freed since they were first handed out, a stack per type.
    freed: [Vec<Pfn>; 3],
    /// The lowest never-used frame: it and the rest of the zone are free,
    /// never written, and in movable blocks.
    pub(crate) fresh: Pfn,
    /// First pfn of the zone.
    pub(crate) start: Pfn,
    /// First pfn past the zone.
    pub(crate) end: Pfn,
    /// Free frames (the stacks plus the never-used ones).
    pub(crate) nr_free: u32,
    /// Each block's type.
    types: Vec<Migratetype>,
    /// Each block's free frames.
    block_free: Vec<u16>,
    /// Fallbacks that raised a boost, not yet applied to the zone.
    pub(crate) boosts: u32,
}

impl ZoneFree {
    /// The zone `start..end`, all free, in movable blocks.
    pub(crate) fn new(start: Pfn, end: Pfn) -> ZoneFree {
        let blocks = if end > start { ((end - 1) >> PAGEBLOCK_ORDER) - (start >> PAGEBLOCK_ORDER) + 1 } else { 0 };
        let mut z = ZoneFree {
            freed: Default::default(),
            fresh: start,
            start,
            end,
            nr_free: end - start,
            types: vec![Migratetype::Movable; blocks as usize],
            block_free: vec![0; blocks as usize],
            boosts: 0,
        };
        for b in 0..blocks as usize {
            let (lo, hi) = z.block_span(b);
            z.block_free[b] = (hi - lo) as u16;
        }
        z
    }

    /// Gives the zone the pageblocks a booted kernel left: counting from the
    /// zone's end, the layout's unmovable blocks, then its reclaimable ones,
    /// the rest movable; each type keeps its free frames and the others are
    /// taken for the kernel. The frames to take per type, or what does not
    /// fit. The zone must be untouched.
    ///
    /// Simplification S-MM6: the zone has no holes, so a block the kernel
    /// shares with memory it never managed is a whole block here; the
    /// non-movable blocks go at the zone's end, where its partial block is;
    /// free frames beyond a type's blocks go to the movable blocks, then to
    /// the others.
    pub(crate) fn boot_layout(&mut self, layout: &BootLayout) -> Result<Vec<(Migratetype, u32)>, String> {
        let BootLayout { unmovable, reclaimable, movable_free } = *layout;
        assert!(self.fresh == self.start && self.nr_free == self.end - self.start, "boot layout on a used zone");
        let blocks = self.types.len();
        let typed = (unmovable.0 + reclaimable.0) as usize;
        if typed > blocks {
            return Err(format!("{typed} unmovable and reclaimable blocks, but the zone has {blocks}"));
        }
        for b in 0..typed {
            let mt = if b < unmovable.0 as usize { Migratetype::Unmovable } else { Migratetype::Reclaimable };
            self.types[blocks - 1 - b] = mt;
        }
        let frames = |mt: Migratetype, z: &ZoneFree| {
            (0..blocks).filter(|&b| z.types[b] == mt).map(|b| z.block_span(b)).map(|(lo, hi)| hi - lo).sum::<u32>()
        };
        // Each type keeps the free frames its blocks can hold; the rest (kernels before
        // v6.10 keep a stolen buddy's remainder on the stealer's list, and the zone here
        // has no holes) go to the movable blocks, then to the others (S-MM6).
        let want = [
            (Migratetype::Movable, movable_free),
            (Migratetype::Unmovable, unmovable.1),
            (Migratetype::Reclaimable, reclaimable.1),
        ];
        let mut kept = want.map(|(mt, free)| (mt, frames(mt, self), free.min(frames(mt, self))));
        let mut excess: u32 = want.iter().zip(&kept).map(|(w, k)| w.1 - k.2).sum();
        for (_, have, free) in &mut kept {
            let more = excess.min(*have - *free);
            *free += more;
            excess -= more;
        }
        if excess > 0 {
            let total: u32 = want.iter().map(|w| w.1).sum();
            return Err(format!("{total} free frames, but the zone holds {}", self.end - self.start));
        }
        let taken = kept.iter().map(|&(mt, have, free)| (mt, have - free)).collect();
        self.materialize(self.end);
        Ok(taken)
    }

    fn block(&self, pfn: Pfn) -> usize {
        ((pfn >> PAGEBLOCK_ORDER) - (self.start >> PAGEBLOCK_ORDER)) as usize
    }

    /// The zone's frames of block `b`.
    fn block_span(&self, b: usize) -> (Pfn, Pfn) {
        let lo = ((self.start >> PAGEBLOCK_ORDER) + b as u32) << PAGEBLOCK_ORDER;
        (lo.max(self.start), (lo + PAGEBLOCK_PAGES).min(self.end))
    }

    /// The type of the block holding `pfn`.
    pub(crate) fn type_of(&self, pfn: Pfn) -> Migratetype {
        self.types[self.block(pfn)]
    }

    /// Free frames on `mt`'s list (blocks of that type).
    pub(crate) fn nr_free_of(&self, mt: Migratetype) -> u32 {
        self.types.iter().zip(&self.block_free).filter(|(&t, _)| t == mt).map(|(_, &f)| f as u32).sum()
    }

    /// Takes a free frame for an allocation of type `mt`: the most recently
    /// freed of its list, then the lowest never-used one (for movable), then
    /// a fallback. `None` if the zone has no free frame.
    #[inline]
    pub(crate) fn take(&mut self, mt: Migratetype, frames: &[Frame], form: BoostForm) -> Option<Pfn> {
        let pfn = match self.freed[mt as usize].pop() {
            Some(pfn) => pfn,
            None if mt == Migratetype::Movable && self.fresh < self.end => {
                self.fresh += 1;
                self.fresh - 1
            }
            None => self.fallback(mt, frames, form)?,
        };
        let b = self.block(pfn);
        self.block_free[b] -= 1;
        self.nr_free -= 1;
        Some(pfn)
    }

    /// Puts a freed frame on its block's list.
    #[inline]
    pub(crate) fn put(&mut self, pfn: Pfn) {
        let b = self.block(pfn);
        self.freed[self.types[b] as usize].push(pfn);
        self.block_free[b] += 1;
        self.nr_free += 1;
    }

    /// `__rmqueue_fallback()` for `mt`, whose list is empty: claims or steals
    /// from the block of the fallback types with the most free frames.
    #[cold]
    fn fallback(&mut self, mt: Migratetype, frames: &[Frame], form: BoostForm) -> Option<Pfn> {
        let order = mt.fallbacks();
        let rank = |t: Migratetype| order.iter().position(|&o| o == t);
        // The most free frames first, then the fallback order, then the lowest block.
        let b = (0..self.types.len())
            .filter(|&b| self.block_free[b] > 0 && rank(self.types[b]).is_some())
            .min_by_key(|&b| (std::cmp::Reverse(self.block_free[b]), rank(self.types[b]), b))?;
        let (lo, hi) = self.block_span(b);
        self.materialize(hi);
        let free = self.block_free[b] as u32;
        if free == hi - lo {
            // A whole free block (a buddy of pageblock_order): it changes type, no boost.
            self.claim(b, mt);
            return self.freed[mt as usize].pop();
        }
        let can_claim = mt != Migratetype::Movable || free >= PAGEBLOCK_PAGES / 32;
        if form == BoostForm::Fallback || (form == BoostForm::Claim && can_claim) {
            self.boosts += 1;
        }
        if can_claim {
            let movable =
                frames[lo as usize..hi as usize].iter().filter(|f| f.flags.has(PageFlags::LRU)).count() as u32;
            let alike = match (mt, self.types[b]) {
                (Migratetype::Movable, _) => movable,
                (_, Migratetype::Movable) => PAGEBLOCK_PAGES - free - movable,
                _ => 0,
            };
            if free + alike >= PAGEBLOCK_PAGES / 2 {
                self.claim(b, mt);
                return self.freed[mt as usize].pop();
            }
        }
        // One frame of the block: the most recently freed of them.
        let list = &mut self.freed[self.types[b] as usize];
        let at = list.iter().rposition(|&p| (lo..hi).contains(&p)).expect("a block's free frames are on its list");
        Some(list.remove(at))
    }

    /// Puts the never-used frames below `upto` on their blocks' lists (lowest
    /// on top), so that a block being claimed or stolen from has all its
    /// free frames there.
    fn materialize(&mut self, upto: Pfn) {
        if upto <= self.fresh {
            return;
        }
        let from = self.fresh;
        self.fresh = upto;
        for pfn in (from..upto).rev() {
            let t = self.types[self.block(pfn)];
            self.freed[t as usize].push(pfn);
        }
    }

    /// Block `b` becomes of type `mt`, its free frames moving to `mt`'s list.
    fn claim(&mut self, b: usize, mt: Migratetype) {
        let old = std::mem::replace(&mut self.types[b], mt);
        let (lo, hi) = self.block_span(b);
        let mut moved = Vec::new();
        self.freed[old as usize].retain(|&p| {
            let inside = (lo..hi).contains(&p);
            if inside {
                moved.push(p);
            }
            !inside
        });
        self.freed[mt as usize].extend(moved);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::{FrameTable, Owner};
    use crate::zone::ZoneId;
    use crate::RegionId;

    /// A zone of 4096 pages with high watermark 1000: the boost grows by 512
    /// per fallback, capped at 1000 * 15000 / 10000 = 1500; a zone of fewer
    /// than 4 blocks is never boosted, nor with factor 0.
    #[test]
    fn boost_is_a_pageblock_up_to_the_factor() {
        let mut z = Zone::new(ZoneId::Normal, 0, 0, 4096);
        z.watermark[Watermark::High as usize] = 1000;
        let boosts: Vec<u64> = (0..4)
            .map(|_| {
                assert!(boost_watermark(&mut z, DEFAULT_BOOST_FACTOR));
                z.watermark_boost
            })
            .collect();
        assert_eq!(boosts, [512, 1024, 1500, 1500]);
        assert_eq!(z.wmark(Watermark::Min), 1500);
        let mut small = Zone::new(ZoneId::Dma, 0, 0, 2047);
        small.watermark[Watermark::High as usize] = 1000;
        assert!(!boost_watermark(&mut small, DEFAULT_BOOST_FACTOR));
        assert!(!boost_watermark(&mut z, 0));
        // A small high watermark still boosts by a whole block.
        let mut low = Zone::new(ZoneId::Normal, 0, 0, 4096);
        low.watermark[Watermark::High as usize] = 100;
        assert!(boost_watermark(&mut low, DEFAULT_BOOST_FACTOR));
        assert_eq!(low.watermark_boost, 512);
    }

    /// Three blocks. Movable pages fill blocks 0 and 1; a reclaimable page
    /// then finds its list empty and claims the whole free block 2 (no
    /// boost). Freeing 20 movable pages of block 1 and filling block 2's
    /// reclaimable frames, the next reclaimable page steals: block 1 has 20
    /// free and 492 LRU pages (not alike), so one frame is taken and the boost is counted.
    #[test]
    fn fallback_claims_a_free_block_and_steals_with_a_boost() {
        let mut t = FrameTable::new(3 * PAGEBLOCK_PAGES);
        t.set_boost_form(BoostForm::Fallback);
        let lru = PageFlags::LRU | PageFlags::SWAPBACKED;
        let user: Vec<Pfn> =
            (0..2 * PAGEBLOCK_PAGES).map(|i| t.alloc(Owner::anon(RegionId(0)), i, lru).unwrap()).collect();
        let r = t.alloc_typed(0, Migratetype::Reclaimable, Owner::KERNEL).unwrap();
        assert_eq!((r, t.type_of(r), t.take_boosts(0)), (2 * PAGEBLOCK_PAGES, Migratetype::Reclaimable, 0));
        for _ in 1..PAGEBLOCK_PAGES {
            t.alloc_typed(0, Migratetype::Reclaimable, Owner::KERNEL).unwrap();
        }
        for &p in &user[PAGEBLOCK_PAGES as usize..PAGEBLOCK_PAGES as usize + 20] {
            t[p].flags.clear(PageFlags::LRU);
            t.free(p);
        }
        let s = t.alloc_typed(0, Migratetype::Reclaimable, Owner::KERNEL).unwrap();
        assert_eq!((t.type_of(s), t.take_boosts(0), t.nr_free()), (Migratetype::Movable, 1, 19));
        assert_eq!(t.take_boosts(0), 0, "taken once");
        t.set_boost_form(BoostForm::None);
        t.alloc_typed(0, Migratetype::Reclaimable, Owner::KERNEL).unwrap();
        assert_eq!(t.take_boosts(0), 0, "no boost before v5.0");
    }

    /// A guest's DMA zone as its pagetypeinfo reported it: 3840 managed
    /// frames, 1 unmovable block with 224 free frames, 7 movable blocks with
    /// 3584 free. The unmovable block is the zone's last (the partial one,
    /// 3840 - 7 * 512 = 256 frames), so 256 - 224 = 32 frames are the
    /// kernel's and the movable blocks are whole and free. Once the 3584
    /// movable frames are taken, the next movable allocation falls back to
    /// the unmovable block: 224 free frames and no LRU page in it are under
    /// half a block, so it steals one frame and, before v6.15, raises a boost.
    #[test]
    fn a_booted_zone_keeps_its_unmovable_block_and_falls_back_to_it() {
        let mut t = FrameTable::new(3840);
        t.set_boost_form(BoostForm::Fallback);
        let layout = BootLayout { unmovable: (1, 224), reclaimable: (0, 0), movable_free: 3584 };
        assert_eq!(t.boot_layout(0, &layout), Ok(32));
        assert_eq!(t.nr_free(), 3808);
        assert_eq!((t.nr_free_of(0, Migratetype::Unmovable), t.nr_free_of(0, Migratetype::Movable)), (224, 3584));
        assert_eq!((t.type_of(3583), t.type_of(3584)), (Migratetype::Movable, Migratetype::Unmovable));
        let lru = PageFlags::LRU | PageFlags::SWAPBACKED;
        for i in 0..3584 {
            let p = t.alloc(Owner::anon(RegionId(0)), i, lru).unwrap();
            assert_eq!(t.type_of(p), Migratetype::Movable);
        }
        assert_eq!(t.take_boosts(0), 0);
        let p = t.alloc(Owner::anon(RegionId(0)), 3584, lru).unwrap();
        assert_eq!((t.type_of(p), t.take_boosts(0)), (Migratetype::Unmovable, 1));
        assert!((3584..3840).contains(&p));
    }

    /// Free frames listed under a type beyond its blocks (a 6.1 guest's DMA:
    /// 48 reclaimable free pages, no reclaimable block) go to the movable
    /// blocks, then to the others: of 1024 frames, 1 unmovable block keeps
    /// 100 free, the movable block 400 + 48 = 448, and 1024 - 548 = 476 are
    /// taken; with 500 movable free frames listed, the movable block holds 512
    /// and the other 36 go to the unmovable block (136 free).
    #[test]
    fn free_frames_beyond_a_types_blocks_count_as_movable() {
        let mut t = FrameTable::new(1024);
        let layout = BootLayout { unmovable: (1, 100), reclaimable: (0, 48), movable_free: 400 };
        assert_eq!(t.boot_layout(0, &layout), Ok(476));
        assert_eq!((t.nr_free_of(0, Migratetype::Unmovable), t.nr_free_of(0, Migratetype::Movable)), (100, 448));
        let mut t = FrameTable::new(1024);
        let layout = BootLayout { unmovable: (1, 100), reclaimable: (0, 48), movable_free: 500 };
        assert_eq!(t.boot_layout(0, &layout), Ok(376));
        assert_eq!((t.nr_free_of(0, Migratetype::Unmovable), t.nr_free_of(0, Migratetype::Movable)), (136, 512));
    }

    /// A layout that does not fit the zone is refused, naming what is wrong.
    #[test]
    fn a_boot_layout_that_does_not_fit_is_refused() {
        let three = BootLayout { unmovable: (2, 0), reclaimable: (1, 0), movable_free: 0 };
        let too_free = BootLayout { unmovable: (1, 500), movable_free: 600, ..Default::default() };
        let want =
            ["3 unmovable and reclaimable blocks, but the zone has 2", "1100 free frames, but the zone holds 1024"];
        for (layout, want) in [three, too_free].iter().zip(want) {
            assert_eq!(FrameTable::new(1024).boot_layout(0, layout), Err(want.to_string()));
        }
    }

    /// Slab pages follow the watermarks: the higher zone (1) while it has
    /// more free frames than its low mark (100), then the lower zone (0)
    /// above its low mark (50), then zone 1 again above its min (80);
    /// without marks, always the highest zone with a free frame.
    #[test]
    fn slab_pages_take_the_first_zone_above_its_watermark() {
        let mut t = FrameTable::with_zones(&[PAGEBLOCK_PAGES, PAGEBLOCK_PAGES]);
        t.set_kernel_marks(vec![(50, 40), (100, 80)]);
        let zone_of = |t: &mut FrameTable| {
            let p = t.alloc_slab(Migratetype::Reclaimable).unwrap();
            t.zone_of(p)
        };
        for _ in 0..PAGEBLOCK_PAGES - 100 {
            assert_eq!(zone_of(&mut t), 1);
        }
        for _ in 0..PAGEBLOCK_PAGES - 50 {
            assert_eq!(zone_of(&mut t), 0);
        }
        assert_eq!((zone_of(&mut t), t.nr_free_in(1)), (1, 99));
        t.set_kernel_marks(Vec::new());
        assert_eq!(zone_of(&mut t), 1);
    }

    /// A movable allocation whose list is empty claims a mostly free
    /// unmovable block (free + alike >= 256): the block turns movable and
    /// every later movable page comes from its list.
    #[test]
    fn movable_claims_a_mostly_free_unmovable_block() {
        let mut t = FrameTable::new(2 * PAGEBLOCK_PAGES);
        t.set_boost_form(BoostForm::Claim);
        for _ in 0..10 {
            t.alloc_typed(0, Migratetype::Unmovable, Owner::KERNEL).unwrap();
        }
        for i in 0..PAGEBLOCK_PAGES {
            t.alloc(Owner::anon(RegionId(0)), i, PageFlags::LRU).unwrap();
        }
        assert_eq!(t.nr_free(), PAGEBLOCK_PAGES - 10);
        let p = t.alloc(Owner::anon(RegionId(0)), 0, PageFlags::LRU).unwrap();
        assert_eq!((t.type_of(p), t.take_boosts(0)), (Migratetype::Movable, 1));
        assert_eq!(t.nr_free_of(0, Migratetype::Movable), PAGEBLOCK_PAGES - 11);
    }
}
