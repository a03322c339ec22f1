//! Memory-management state of the simulated machine, with no policy.
//!
//! This crate is the bottom layer of reclaimsim (see `ARCHITECTURE.md`). It holds
//! page frames, intrusive LRU lists, address spaces with page tables, page caches
//! with shadow slots, the swap map, zones with watermarks and `/proc/vmstat`
//! counters. Every operation is O(1); nothing here decides *which* page to reclaim.
//!
//! **Architecture invariant:** `mm` knows no policy, no time and no randomness.
#![deny(missing_docs)]

pub mod dirty;
pub mod entry;
pub mod frame;
pub mod list;
pub mod space;
pub mod swap;
pub mod tracepoint;
pub mod vmstat;
pub mod zone;
pub mod zram;

pub use dirty::DirtyState;
pub use entry::{CacheEntry, Pte, Shadow};
pub use frame::{Frame, FrameTable, Owner, PageFlags, Pfn, NO_PFN};
pub use list::LruList;
pub use space::{File, FileId, Region, RegionId, RegionKind};
pub use swap::{SwapMap, SwapSlot};
pub use vmstat::{VmEvent, VmStat};
pub use zone::{Watermark, Zone, ZoneId};
pub use zram::{MmStat, ZramConfig, ZramPool};

/// Page size in bytes. KERNEL: 4 KiB base pages on x86-64 (`PAGE_SHIFT` 12).
pub const PAGE_SIZE: u64 = 4096;
/// log2 of [`PAGE_SIZE`].
pub const PAGE_SHIFT: u32 = 12;
/// KERNEL: `PAGEVEC_SIZE`: pages one per-CPU page batch holds (the LRU add
/// batch; v6.1 look-around's cut between activating and updating in place).
pub const PAGEVEC_SIZE: usize = 15;

/// The whole memory state of one simulated node.
///
/// Simplification S-MM1: one node with one zone (`ZONE_NORMAL`); the zone index is
/// kept in every frame so that more zones can be added without changing the layout.
#[derive(Debug)]
pub struct Mm {
    /// Page frames, indexed by [`Pfn`].
    pub frames: FrameTable,
    /// Anonymous and file-backed virtual memory regions (VMAs) with their page tables.
    pub regions: Vec<Region>,
    /// Files with their page caches.
    pub files: Vec<File>,
    /// The swap device's slot map and swap cache.
    pub swap: SwapMap,
    /// Zones of the node (one for now).
    pub zones: Vec<Zone>,
    /// Event counters, named as in `/proc/vmstat`.
    pub stat: VmStat,
    /// Dirty/writeback gauges and reclaim's node flags.
    pub dirty: DirtyState,
    /// The compressed store when swap is on zram: its pages are taken from `frames`.
    pub zram: Option<ZramPool>,
    /// Tracepoint recording: `None` (off) unless a front end installs a sink.
    pub tracer: Option<Box<tracepoint::Tracer>>,
    /// Pages the kernel held off the LRU from boot (`memory.reserved`): never freed.
    reserved: u64,
}

impl Mm {
    /// A node with `nr_frames` page frames, all free, in one zone, and a swap
    /// device of `swap_pages` slots (0 for no swap).
    pub fn new(nr_frames: u32, swap_pages: u32) -> Mm {
        Mm {
            frames: FrameTable::new(nr_frames),
            regions: Vec::new(),
            files: Vec::new(),
            swap: SwapMap::new(swap_pages),
            zones: vec![Zone::new(ZoneId::Normal, nr_frames)],
            stat: VmStat::default(),
            dirty: DirtyState::default(),
            zram: None,
            tracer: None,
            reserved: 0,
        }
    }

    /// Takes `pages` free frames for the kernel for good (slab, kernel data,
    /// unevictable boot files): they are never on an LRU list nor freed.
    /// Returns false, taking nothing, if fewer frames are free.
    pub fn reserve_kernel_pages(&mut self, pages: u32) -> bool {
        if self.frames.nr_free() < pages {
            return false;
        }
        for _ in 0..pages {
            self.frames.alloc(Owner::KERNEL, 0, 0).expect("counted free above");
        }
        self.reserved += pages as u64;
        true
    }

    /// Pages taken by [`Mm::reserve_kernel_pages`].
    pub fn nr_reserved(&self) -> u64 {
        self.reserved
    }

    /// Puts swap on zram: swap writes store compressed pages in a pool of page frames.
    pub fn enable_zram(&mut self, cfg: ZramConfig) {
        self.zram = Some(ZramPool::new(cfg, self.swap.nr_slots()));
    }

    /// `swap_free()` of the last reference: frees the slot and, on zram, its
    /// compressed copy (`zram_slot_free_notify`).
    pub fn swap_free(&mut self, slot: u32) {
        self.swap.free(slot);
        if let Some(z) = &mut self.zram {
            let before = z.pages();
            z.free(&mut self.frames, slot);
            self.stat.count(VmEvent::Pgfree, before - z.pages());
        }
    }

    /// A completed synchronous swap write of the page at `key` (its owner and
    /// index) to `slot`: on zram the page is compressed into the pool. False if
    /// zram refused the write (no memory for the pool, or over `mem_limit`).
    pub fn swap_write_sync(&mut self, slot: u32, key: u64) -> bool {
        let Some(z) = &mut self.zram else { return true };
        let before = z.pages();
        let ok = z.write(&mut self.frames, slot, key);
        let after = z.pages();
        self.stat.count(VmEvent::PgallocNormal, after.saturating_sub(before));
        self.stat.count(VmEvent::Pgfree, before.saturating_sub(after));
        ok
    }

    /// Pages held by the zram pool (`nr_zspages`).
    pub fn nr_zspages(&self) -> u64 {
        self.zram.as_ref().map_or(0, ZramPool::pages)
    }

    /// Adds an anonymous region of `pages` pages and returns its id.
    pub fn add_anon_region(&mut self, pages: u32) -> RegionId {
        let id = RegionId(self.regions.len() as u32);
        self.regions.push(Region::new(RegionKind::Anon, pages));
        id
    }

    /// Adds a file of `pages` pages with an empty page cache and returns its id.
    pub fn add_file(&mut self, pages: u32) -> FileId {
        let id = FileId(self.files.len() as u32);
        self.files.push(File::new(pages));
        id
    }

    /// Maps `pages` pages of `file` starting at page `offset` as a new region
    /// (a shared file mapping, as from `mmap(MAP_SHARED)`).
    pub fn map_file(&mut self, file: FileId, offset: u32, pages: u32) -> RegionId {
        let id = RegionId(self.regions.len() as u32);
        assert!(
            offset as u64 + pages as u64 <= self.files[file.0 as usize].nr_pages() as u64,
            "mapping beyond the end of file {file:?}"
        );
        self.regions.push(Region::new(RegionKind::File { file, offset }, pages));
        self.files[file.0 as usize].mappers.push(id);
        id
    }

    /// Free pages in all zones.
    pub fn nr_free(&self) -> u64 {
        self.frames.nr_free() as u64
    }
}
