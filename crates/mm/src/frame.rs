//! Page frames: a dense table indexed by page frame number, materialised on
//! first use.
//!
//! The table is one zeroed allocation: the operating system maps its memory
//! page by page as frames are first written, so a frame no run touched costs
//! no memory, and a free frame is all zero bytes (owner [`Owner::NONE`]). Each
//! zone hands out its never-used frames lowest pfn first from a cursor, and
//! keeps the frames freed since on a stack per migratetype
//! ([`crate::pageblock`]) taken before the cursor: for movable pages alone,
//! the order of a stack that held every pfn from the start, without holding them.

use crate::pageblock::{BoostForm, BootLayout, Migratetype, ZoneFree};
use crate::pcp::{PcpLists, TakeCx};
use crate::space::{FileId, RegionId};

/// Page frame number: the index of a frame in the [`FrameTable`].
pub type Pfn = u32;
/// The "no frame" value, used as the null link of intrusive lists.
pub const NO_PFN: Pfn = u32::MAX;

/// Page flags, one bit each, named after the kernel's `PG_*` flags.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PageFlags(pub u16);

impl PageFlags {
    /// `PG_lru`: on an LRU list (not free, not isolated).
    pub const LRU: u16 = 1 << 0;
    /// `PG_active`: on (or headed for) the active list.
    pub const ACTIVE: u16 = 1 << 1;
    /// `PG_referenced`: one access through the mark-accessed path was seen.
    pub const REFERENCED: u16 = 1 << 2;
    /// `PG_workingset`: was part of the workingset (deactivated, or restored on refault).
    pub const WORKINGSET: u16 = 1 << 3;
    /// `PG_reclaim`: reclaim wants this page freed as soon as its writeback ends.
    pub const RECLAIM: u16 = 1 << 4;
    /// `PG_dirty`: contents differ from the backing store.
    pub const DIRTY: u16 = 1 << 5;
    /// `PG_writeback`: a write to the backing store is in flight.
    pub const WRITEBACK: u16 = 1 << 6;
    /// `PG_swapbacked`: anonymous (or shmem) memory; the "anon" LRU type.
    pub const SWAPBACKED: u16 = 1 << 7;
    /// `PG_swapcache`: in the swap cache, owns a swap slot.
    pub const SWAPCACHE: u16 = 1 << 8;
    /// `PG_unevictable`: on the unevictable list.
    pub const UNEVICTABLE: u16 = 1 << 9;
    /// `PG_readahead`: brought in by readahead and not yet hit.
    pub const READAHEAD: u16 = 1 << 10;
    /// `PG_locked`: I/O in progress on the page; reclaim cannot take it.
    pub const LOCKED: u16 = 1 << 11;
    /// The page's buffer heads are locked for a write (`buffer_locked`) that does
    /// not set `PG_writeback`: ext3's journal writing ordered data. Set only on
    /// filesystems that write data this way.
    pub const BUFFERS_LOCKED: u16 = 1 << 12;
    /// No buffer of this `PG_dirty` page is dirty (`!buffer_dirty`): its data
    /// went out (or is going out) as buffer writes and its `->writepage` would
    /// write nothing. Set only together with `PG_dirty`.
    pub const BUFFERS_CLEAN: u16 = 1 << 13;

    /// True if all bits of `bits` are set.
    #[inline]
    pub fn has(self, bits: u16) -> bool {
        self.0 & bits == bits
    }
    /// Sets `bits`.
    #[inline]
    pub fn set(&mut self, bits: u16) {
        self.0 |= bits;
    }
    /// Clears `bits`.
    #[inline]
    pub fn clear(&mut self, bits: u16) {
        self.0 &= !bits;
    }
    /// Clears `bits` and returns whether any of them was set (kernel `TestClearPage*`).
    #[inline]
    pub fn test_clear(&mut self, bits: u16) -> bool {
        let was = self.0 & bits != 0;
        self.0 &= !bits;
        was
    }
}

/// Who a frame belongs to: an anonymous region, a file's page cache, the kernel, or nobody.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Owner(u32);

impl Owner {
    const FILE_BIT: u32 = 1 << 31;
    /// Not owned (free frame): zero, so that a never-written frame is free.
    pub const NONE: Owner = Owner(0);
    /// Kernel memory off the LRU lists (the zram pool's pages): never reclaimed.
    pub const KERNEL: Owner = Owner(u32::MAX);

    /// A page of anonymous region `r` (stored as `r + 1`, clear of [`Owner::NONE`]).
    #[inline]
    pub fn anon(r: RegionId) -> Owner {
        debug_assert!(r.0 < Self::FILE_BIT - 1);
        Owner(r.0 + 1)
    }
    /// A page of file `f`'s page cache.
    #[inline]
    pub fn file(f: FileId) -> Owner {
        debug_assert!(f.0 < Self::FILE_BIT - 1);
        Owner(f.0 | Self::FILE_BIT)
    }
    /// The anonymous region, if this is an anonymous owner.
    #[inline]
    pub fn as_anon(self) -> Option<RegionId> {
        (self != Self::NONE && self.0 & Self::FILE_BIT == 0).then_some(RegionId(self.0 - 1))
    }
    /// The file, if this is a page-cache owner.
    #[inline]
    pub fn as_file(self) -> Option<FileId> {
        (self != Self::KERNEL && self.0 & Self::FILE_BIT != 0).then_some(FileId(self.0 & !Self::FILE_BIT))
    }
}

/// One page frame: 24 bytes, so a simulated machine costs 24 bytes per frame here.
///
/// `prev`/`next` link the frame into at most one LRU list; `lru` says which
/// list (policy-defined id), `owner`/`index` are the reverse map. A free frame
/// has owner [`Owner::NONE`] and no flags; its links mean nothing (a frame never
/// used is all zero bytes).
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct Frame {
    /// Previous frame in the list (towards the head), or [`NO_PFN`].
    pub prev: Pfn,
    /// Next frame in the list (towards the tail), or [`NO_PFN`].
    pub next: Pfn,
    /// The region or file that owns the page.
    pub owner: Owner,
    /// Page index within the owner (virtual page number or file page offset).
    pub index: u32,
    /// Swap slot when `PG_swapcache` is set, else unused.
    pub swap: u32,
    /// `PG_*` flags.
    pub flags: PageFlags,
    /// Which LRU list the frame is on (meaning chosen by the reclaim policy).
    pub lru: u8,
    /// Policy-private byte (for example a generation number); 0 when unused.
    pub gen: u8,
}

const _: () = assert!(std::mem::size_of::<Frame>() == 24);

impl Frame {
    const FREE: Frame = Frame {
        prev: NO_PFN,
        next: NO_PFN,
        owner: Owner::NONE,
        index: 0,
        swap: 0,
        flags: PageFlags(0),
        lru: 0,
        gen: 0,
    };

    /// True if the page is anonymous (swap-backed): the kernel's "anon" LRU type.
    #[inline]
    pub fn is_anon(&self) -> bool {
        self.flags.has(PageFlags::SWAPBACKED)
    }
}

/// The frame table and its free frames, per zone. Zones are contiguous pfn
/// ranges in table order.
#[derive(Debug)]
pub struct FrameTable {
    frames: Vec<Frame>,
    /// The free frames of each zone.
    free: Vec<ZoneFree>,
    /// First pfn past each zone, ascending.
    zone_end: Vec<Pfn>,
    /// Free frames, those on per-CPU lists included.
    nr_free: u32,
    /// The per-CPU lists (none until [`crate::Mm::setup_pcp`]): order-0
    /// allocations and frees go through them.
    pub pcp: PcpLists,
    /// Which fallbacks raise a watermark boost.
    boost_form: BoostForm,
    /// Per zone: the free frames a kernel allocation wants above its low and
    /// min watermarks (reserve included); empty: the highest zone with a free frame.
    kernel_marks: Vec<(u32, u32)>,
    /// Per zone: frames [`FrameTable::alloc_kernel`] has taken so far.
    kernel_taken: Vec<u64>,
}

/// `n` free frames that cost no memory until written: zero bytes are a free
/// frame, and a zeroed allocation is mapped by the operating system page by
/// page on first write.
fn zeroed_frames(n: usize) -> Vec<Frame> {
    if n == 0 {
        return Vec::new();
    }
    let layout = std::alloc::Layout::array::<Frame>(n).expect("frame table size fits the address space");
    // SAFETY: the layout has a non-zero size; the pointer is checked for null;
    // every field of `Frame` is an integer, so all-zero bytes are a valid
    // `Frame`; the `Vec` owns the allocation with the layout it was made with
    // (capacity and length `n`, `Frame`'s alignment).
    unsafe {
        let p = std::alloc::alloc_zeroed(layout).cast::<Frame>();
        if p.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        Vec::from_raw_parts(p, n, n)
    }
}

impl FrameTable {
    /// `n` free frames in one zone.
    pub fn new(n: u32) -> FrameTable {
        FrameTable::with_zones(&[n])
    }

    /// Free frames in consecutive zones of `sizes[i]` frames each.
    pub fn with_zones(sizes: &[u32]) -> FrameTable {
        let (mut free, mut zone_end, mut start) = (Vec::new(), Vec::new(), 0u32);
        for &n in sizes {
            free.push(ZoneFree::new(start, start + n));
            start += n;
            zone_end.push(start);
        }
        FrameTable {
            frames: zeroed_frames(start as usize),
            free,
            zone_end,
            nr_free: start,
            pcp: PcpLists::default(),
            boost_form: BoostForm::None,
            kernel_marks: Vec::new(),
            kernel_taken: vec![0; sizes.len()],
        }
    }

    /// Total number of frames.
    pub fn len(&self) -> u32 {
        self.frames.len() as u32
    }

    /// True if the table has no frames.
    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// Number of free frames, those on per-CPU lists included.
    #[inline]
    pub fn nr_free(&self) -> u32 {
        self.nr_free
    }

    /// Number of free frames in zone `zone` (its index in table order),
    /// those on per-CPU lists included.
    #[inline]
    pub fn nr_free_in(&self, zone: usize) -> u32 {
        self.free[zone].nr_free + self.pcp.held(zone)
    }

    /// The highest zone with a free frame, on its free lists or a per-CPU list.
    fn highest_with_free(&self) -> Option<usize> {
        (0..self.free.len()).rposition(|z| self.nr_free_in(z) > 0)
    }

    /// Free frames on zone `zone`'s free lists, not on per-CPU lists
    /// (`NR_FREE_PAGES`, what the watermark checks read).
    #[inline]
    pub fn nr_free_listed(&self, zone: usize) -> u32 {
        self.free[zone].nr_free
    }

    /// The zone (index in table order) frame `pfn` belongs to.
    #[inline]
    pub fn zone_of(&self, pfn: Pfn) -> usize {
        if self.zone_end.len() == 1 {
            return 0;
        }
        self.zone_end.iter().position(|&end| pfn < end).expect("pfn inside the table")
    }

    /// Takes a free frame for `owner`/`index` with `flags` from the highest
    /// zone that has one; `None` if memory is exhausted.
    #[inline]
    pub fn alloc(&mut self, owner: Owner, index: u32, flags: u16) -> Option<Pfn> {
        let zone = self.highest_with_free()?;
        self.alloc_in(zone, owner, index, flags)
    }

    /// Takes a free movable frame of zone `zone` for `owner`/`index` with
    /// `flags`; `None` if the zone has none free. The most recently freed
    /// frame of its list goes first, then the lowest never-used one, then a
    /// frame of another type's block (the fallback, [`crate::pageblock`]).
    #[inline]
    pub fn alloc_in(&mut self, zone: usize, owner: Owner, index: u32, flags: u16) -> Option<Pfn> {
        self.take(zone, Migratetype::Movable, owner, index, flags)
    }

    /// Takes a free frame of type `mt` in zone `zone` for `owner` (a kernel
    /// page: index 0, no flags); `None` if the zone has none free.
    pub fn alloc_typed(&mut self, zone: usize, mt: Migratetype, owner: Owner) -> Option<Pfn> {
        self.take(zone, mt, owner, 0, 0)
    }

    /// A kernel page of type `mt` from the highest zone with a free frame
    /// (reclaim's `PF_MEMALLOC` context, which ignores the watermarks).
    pub fn alloc_kernel(&mut self, mt: Migratetype) -> Option<Pfn> {
        let zone = self.highest_with_free()?;
        self.kernel_taken[zone] += 1;
        self.take(zone, mt, Owner::KERNEL, 0, 0)
    }

    /// Frames [`FrameTable::alloc_kernel`] has taken from zone `zone` so far.
    pub fn kernel_taken(&self, zone: usize) -> u64 {
        self.kernel_taken[zone]
    }

    /// A `GFP_KERNEL` page of type `mt` (a slab's): the highest zone above
    /// its low watermark, else above its min, else the highest with a free
    /// frame, by the marks of [`FrameTable::set_kernel_marks`].
    pub fn alloc_slab(&mut self, mt: Migratetype) -> Option<Pfn> {
        let marks = &self.kernel_marks;
        let above = |i: usize| (0..marks.len()).rev().find(|&z| self.free[z].nr_free > [marks[z].0, marks[z].1][i]);
        let zone = above(0).or_else(|| above(1)).or_else(|| self.highest_with_free())?;
        self.take(zone, mt, Owner::KERNEL, 0, 0)
    }

    /// Sets, per zone, the free frames a `GFP_KERNEL` allocation wants above
    /// its low and min watermarks ([`FrameTable::alloc_slab`]).
    pub fn set_kernel_marks(&mut self, marks: Vec<(u32, u32)>) {
        self.kernel_marks = marks;
    }

    /// Takes a frame of type `mt` in zone `zone`: from the current CPU's
    /// list once there are lists, else from the zone's free lists.
    #[inline]
    fn take(&mut self, zone: usize, mt: Migratetype, owner: Owner, index: u32, flags: u16) -> Option<Pfn> {
        let pfn = if self.pcp.active() {
            let cx = TakeCx { frames: &self.frames, form: self.boost_form };
            self.pcp.take(zone, mt, &mut self.free[zone], cx)?
        } else {
            self.free[zone].take(mt, &self.frames, self.boost_form)?
        };
        self.nr_free -= 1;
        let f = &mut self.frames[pfn as usize];
        debug_assert!(f.owner == Owner::NONE, "pfn {pfn} free but owned");
        *f = Frame { owner, index, flags: PageFlags(flags), ..Frame::FREE };
        Some(pfn)
    }

    /// Lays out zone `zone`'s pageblocks as a booted kernel left them and
    /// takes the frames that are not free for the kernel (see
    /// [`crate::pageblock`]'s `boot_layout`): the number taken, or what does
    /// not fit. The zone must be untouched.
    pub fn boot_layout(&mut self, zone: usize, layout: &BootLayout) -> Result<u32, String> {
        let taken = self.free[zone].boot_layout(layout)?;
        let mut n = 0;
        for (mt, used) in taken {
            for _ in 0..used {
                self.take(zone, mt, Owner::KERNEL, 0, 0).expect("the type's blocks hold these frames");
            }
            n += used;
        }
        Ok(n)
    }

    /// Sets which fallbacks raise a watermark boost (the kernel version's rule).
    pub fn set_boost_form(&mut self, form: BoostForm) {
        self.boost_form = form;
    }

    /// The fallbacks in zone `zone` that raised a boost since the last call
    /// (`ZONE_BOOSTED_WATERMARK`), cleared.
    pub fn take_boosts(&mut self, zone: usize) -> u32 {
        std::mem::take(&mut self.free[zone].boosts)
    }

    /// True if some zone has boosts not yet taken.
    #[inline]
    pub fn boosts_pending(&self) -> bool {
        self.free.iter().any(|z| z.boosts > 0)
    }

    /// The migratetype of the pageblock holding `pfn`.
    pub fn type_of(&self, pfn: Pfn) -> Migratetype {
        self.free[self.zone_of(pfn)].type_of(pfn)
    }

    /// Free frames of zone `zone` in blocks of type `mt`.
    pub fn nr_free_of(&self, zone: usize, mt: Migratetype) -> u32 {
        self.free[zone].nr_free_of(mt)
    }

    /// Returns a frame to its zone's free frames (the current CPU's list once
    /// there are lists). The frame must be off every LRU list.
    #[inline]
    pub fn free(&mut self, pfn: Pfn) {
        let f = &mut self.frames[pfn as usize];
        assert!(f.owner != Owner::NONE, "double free of pfn {pfn}");
        assert!(!f.flags.has(PageFlags::LRU), "freeing pfn {pfn} still on an LRU list");
        *f = Frame::FREE;
        let zone = self.zone_of(pfn);
        if self.pcp.active() {
            let mt = self.free[zone].type_of(pfn);
            self.pcp.put(zone, pfn, mt, &mut self.free[zone]);
        } else {
            self.free[zone].put(pfn);
        }
        self.nr_free += 1;
    }

    /// `drain_all_pages(NULL)`: every CPU's listed frames go back to their zones' free lists.
    pub fn drain_pcp(&mut self) {
        self.pcp.drain_all(&mut self.free);
    }

    /// Checks the per-CPU lists against the table: counts, zones, and every listed frame free.
    pub fn check_pcp(&self) {
        self.pcp.check(&self.frames, &self.free);
    }

    /// The frames ever handed out, with their pfns: each zone's frames below
    /// its never-used cursor. Every other frame is free and was never written,
    /// so O(memory) passes over frames need only visit these.
    pub fn used(&self) -> impl Iterator<Item = (Pfn, &Frame)> + '_ {
        let starts = std::iter::once(0).chain(self.zone_end.iter().copied());
        starts
            .zip(&self.free)
            .flat_map(|(start, z)| (start..z.fresh).zip(&self.frames[start as usize..z.fresh as usize]))
    }

    /// True if the frame is free.
    pub fn is_free(&self, pfn: Pfn) -> bool {
        self.frames[pfn as usize].owner == Owner::NONE
    }

    /// All frames, read-only (list iteration, invariant checks).
    pub fn as_slice(&self) -> &[Frame] {
        &self.frames
    }

    /// All frames, for list operations that need the whole slice.
    #[inline]
    pub fn slice_mut(&mut self) -> &mut [Frame] {
        &mut self.frames
    }
}

impl std::ops::Index<Pfn> for FrameTable {
    type Output = Frame;
    #[inline]
    fn index(&self, pfn: Pfn) -> &Frame {
        &self.frames[pfn as usize]
    }
}

impl std::ops::IndexMut<Pfn> for FrameTable {
    #[inline]
    fn index_mut(&mut self, pfn: Pfn) -> &mut Frame {
        &mut self.frames[pfn as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alloc_free_round_trip() {
        let mut t = FrameTable::new(3);
        let a = t.alloc(Owner::anon(RegionId(0)), 5, PageFlags::SWAPBACKED).unwrap();
        assert_eq!(a, 0);
        assert_eq!(t.nr_free(), 2);
        assert!(t[a].is_anon());
        t.free(a);
        assert_eq!(t.nr_free(), 3);
        assert!(t.is_free(a));
    }

    #[test]
    fn zones_have_their_own_free_lists() {
        let mut t = FrameTable::with_zones(&[2, 3]);
        assert_eq!((t.zone_of(1), t.zone_of(2), t.zone_of(4)), (0, 1, 1));
        // The highest zone first, lowest pfn of it first.
        let a = t.alloc(Owner::anon(RegionId(0)), 0, 0).unwrap();
        assert_eq!((a, t.nr_free_in(1), t.nr_free()), (2, 2, 4));
        let b = t.alloc_in(0, Owner::anon(RegionId(0)), 1, 0).unwrap();
        assert_eq!((b, t.nr_free_in(0)), (0, 1));
        t.free(a);
        t.free(b);
        assert_eq!((t.nr_free_in(0), t.nr_free_in(1), t.nr_free()), (2, 3, 5));
    }

    #[test]
    fn only_frames_handed_out_are_used() {
        let mut t = FrameTable::with_zones(&[1 << 20, 1 << 20]);
        assert_eq!(t.used().count(), 0);
        let a = t.alloc(Owner::KERNEL, 0, 0).unwrap();
        let b = t.alloc_in(0, Owner::KERNEL, 0, 0).unwrap();
        t.free(a);
        // A freed frame stays among the used ones; the rest of each zone is untouched.
        assert_eq!(t.used().map(|(p, _)| p).collect::<Vec<_>>(), [b, a]);
        assert!(t.used().all(|(p, f)| (f.owner == Owner::NONE) == (p == a)));
        assert!(t.is_free(a) && t.is_free(a + 1) && t.is_free((1 << 21) - 1) && !t.is_free(b));
        assert_eq!((t.nr_free_in(0), t.nr_free_in(1), t.nr_free()), ((1 << 20) - 1, 1 << 20, (1 << 21) - 1));
    }

    proptest::proptest! {
        /// The lazy free frames hand out the pfns a stack holding every pfn
        /// from the start would (lowest first, then last freed first), so that
        /// runs are the same as with the eager table.
        #[test]
        fn allocation_order_is_the_eager_stack_order(
            sizes in proptest::collection::vec(1u32..20, 1..4),
            ops in proptest::collection::vec((0usize..8, 0u8..3), 0..200),
        ) {
            let mut t = FrameTable::with_zones(&sizes);
            let mut stacks: Vec<Vec<Pfn>> = Vec::new();
            let mut start = 0;
            for &n in &sizes {
                stacks.push((start..start + n).rev().collect());
                start += n;
            }
            let mut taken: Vec<Pfn> = Vec::new();
            for (z, op) in ops {
                let z = z % sizes.len();
                match op {
                    0 => {
                        let want = stacks.iter().rposition(|s| !s.is_empty()).map(|z| stacks[z].pop().unwrap());
                        let got = t.alloc(Owner::KERNEL, 0, 0);
                        proptest::prop_assert_eq!(got, want);
                        taken.extend(got);
                    }
                    1 => {
                        let got = t.alloc_in(z, Owner::KERNEL, 0, 0);
                        proptest::prop_assert_eq!(got, stacks[z].pop());
                        taken.extend(got);
                    }
                    _ if !taken.is_empty() => {
                        let pfn = taken.swap_remove(z % taken.len());
                        t.free(pfn);
                        stacks[t.zone_of(pfn)].push(pfn);
                    }
                    _ => {}
                }
                for (z, s) in stacks.iter().enumerate() {
                    proptest::prop_assert_eq!(t.nr_free_in(z), s.len() as u32);
                }
            }
        }
    }

    #[test]
    fn owner_encoding() {
        assert_eq!(Owner::anon(RegionId(7)).as_anon(), Some(RegionId(7)));
        assert_eq!(Owner::anon(RegionId(7)).as_file(), None);
        assert_eq!(Owner::file(FileId(3)).as_file(), Some(FileId(3)));
        assert_eq!(Owner::NONE.as_anon(), None);
        assert_eq!(Owner::NONE.as_file(), None);
        assert_eq!((Owner::KERNEL.as_anon(), Owner::KERNEL.as_file()), (None, None));
        assert_eq!(Owner::anon(RegionId(0)).as_anon(), Some(RegionId(0)));
        assert_eq!(Owner::file(FileId(0)).as_file(), Some(FileId(0)));
        assert_ne!(Owner::anon(RegionId(0)), Owner::NONE);
        // A never-written frame (zero bytes) reads as free.
        assert!(FrameTable::new(4).as_slice().iter().all(|f| f.owner == Owner::NONE && f.flags.0 == 0));
    }

    mod conservation {
        use super::*;
        use crate::{Mm, ZoneId, ZoneSpan};
        use proptest::prelude::*;

        proptest! {
            /// Whatever the layout and the order of allocations and frees, each
            /// zone's free plus taken frames are its managed pages, its free
            /// frames lie inside it, and the nodes' totals add up to the machine's.
            #[test]
            fn page_accounting_per_zone_and_node_is_conserved(
                sizes in proptest::collection::vec(1u32..40, 1..6),
                nodes in 1u8..3,
                ops in proptest::collection::vec((0usize..12, any::<bool>()), 0..300),
            ) {
                let spans: Vec<ZoneSpan> = (0..nodes)
                    .flat_map(|n| sizes.iter().zip(ZoneId::ALL).map(move |(&pages, id)| ZoneSpan { node: n, id, pages }))
                    .collect();
                let dist = (0..nodes).map(|a| (0..nodes).map(|b| if a == b { 10 } else { 20 }).collect()).collect();
                let mut mm = Mm::with_layout(&spans, dist, 0);
                let mut taken: Vec<Pfn> = Vec::new();
                for (z, alloc) in ops {
                    let z = z % mm.zones.len();
                    if alloc || taken.is_empty() {
                        if let Some(pfn) = mm.alloc_in(z, Owner::KERNEL, 0, 0) {
                            prop_assert_eq!(mm.frames.zone_of(pfn), z);
                            taken.push(pfn);
                        }
                    } else {
                        mm.frames.free(taken.swap_remove(z % taken.len()));
                    }
                }
                let mut node_free = vec![0u64; nodes as usize];
                for (i, zone) in mm.zones.iter().enumerate() {
                    let used = taken.iter().filter(|&&p| mm.frames.zone_of(p) == i).count() as u64;
                    prop_assert_eq!(mm.zone_free(i) + used, zone.managed);
                    prop_assert_eq!(zone.stat.pgalloc >= used, true);
                    node_free[zone.node as usize] += mm.zone_free(i);
                    for p in zone.start_pfn..zone.start_pfn + zone.managed as u32 {
                        prop_assert_eq!(mm.node_of(p), zone.node);
                    }
                }
                prop_assert_eq!(node_free.iter().sum::<u64>(), mm.nr_free());
                prop_assert_eq!(mm.nr_free() + taken.len() as u64, mm.frames.len() as u64);
            }
        }
    }
}
