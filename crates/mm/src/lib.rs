//! Memory-management state of the simulated machine, with no policy.
//!
//! This crate is the bottom layer of reclaimsim (see `ARCHITECTURE.md`). It holds
//! page frames, intrusive LRU lists, address spaces with page tables, page caches
//! with shadow slots, the swap map, zones with watermarks and `/proc/vmstat`
//! counters. Every operation is O(1); nothing here decides *which* page to reclaim.
//!
//! **Architecture invariant:** `mm` knows no policy, no time and no randomness.
#![deny(missing_docs)]

pub mod cgroup;
pub mod dirty;
pub mod entry;
pub mod frame;
pub mod list;
pub mod pageblock;
pub mod pcp;
pub mod slab;
pub mod space;
pub mod swap;
pub mod tracepoint;
pub mod vmstat;
pub mod zone;
pub mod zram;
pub mod zswap;

pub use cgroup::{CgId, Cgroup, Cgroups};
pub use dirty::DirtyState;
pub use entry::{CacheEntry, Pte, Shadow};
pub use frame::{Frame, FrameTable, Owner, PageFlags, Pfn, NO_PFN};
pub use list::LruList;
pub use pageblock::{BoostForm, Migratetype};
pub use pcp::{PcpForm, PcpLists, PcpSetup};
pub use slab::{Dcache, LruItem, ShrinkerId, Slab, SlabCache};
pub use space::{File, FileId, Region, RegionId, RegionKind};
pub use swap::{SwapMap, SwapSlot};
pub use vmstat::{VmEvent, VmStat};
pub use zone::{Watermark, Zone, ZoneId, ZoneSpan, ZoneStat, MAX_NR_ZONES};
pub use zram::{MmStat, ZramConfig, ZramPool};
pub use zswap::{Zswap, ZswapConfig, ZswapCtx, ZswapStat};

/// Page size in bytes. KERNEL: 4 KiB base pages on x86-64 (`PAGE_SHIFT` 12).
pub const PAGE_SIZE: u64 = 4096;
/// log2 of [`PAGE_SIZE`].
pub const PAGE_SHIFT: u32 = 12;
/// KERNEL: `PAGEVEC_SIZE`: pages one per-CPU page batch holds (the LRU add
/// batch; v6.1 look-around's cut between activating and updating in place).
pub const PAGEVEC_SIZE: usize = 15;

/// One NUMA node: its zonelist (`node_zonelists[ZONELIST_FALLBACK]`).
#[derive(Clone, Debug)]
pub struct Node {
    /// Indices into [`Mm::zones`], in fallback order: this node's zones from
    /// the highest down, then the other nodes' by distance.
    pub zonelist: Vec<usize>,
}

/// The whole memory state of the simulated machine: its nodes and zones.
///
/// Simplification S-MM1 (narrowed): the default machine is one node with one
/// zone (`ZONE_NORMAL`); a layout of several zones and nodes is set with
/// [`Mm::with_layout`]. Reclaim keeps one set of LRU lists for the machine.
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
    /// Zones of every node, in pfn order (a zone's index here is its index in `frames`).
    pub zones: Vec<Zone>,
    /// Nodes, by node id.
    pub nodes: Vec<Node>,
    /// `node_distance(a, b)`: the SLIT distance matrix.
    pub distance: Vec<Vec<u32>>,
    /// Event counters, named as in `/proc/vmstat`.
    pub stat: VmStat,
    /// Dirty/writeback gauges and reclaim's node flags.
    pub dirty: DirtyState,
    /// The compressed store when swap is on zram: its pages are taken from `frames`.
    pub zram: Option<ZramPool>,
    /// zswap's compressed cache in front of the swap device, when enabled: its pages are taken from `frames`.
    pub zswap: Option<Zswap>,
    /// Shrinkable slab caches (dentries, inodes, page-cache tree nodes).
    pub slab: Slab,
    /// Per-CPU page lists: free frames not in the zones' free counts.

    /// The memory cgroup tree (the root alone unless groups are created).
    pub cgroups: Cgroups,
    /// Tracepoint recording: `None` (off) unless a front end installs a sink.
    pub tracer: Option<Box<tracepoint::Tracer>>,
    /// Pages the kernel held off the LRU from boot (`memory.reserved`): never freed.
    reserved: u64,
    /// Per zone: the zsmalloc pools' pages counted in `pgalloc_*` so far.
    pool_pgalloc: Vec<u64>,
}

impl Mm {
    /// A node with `nr_frames` page frames, all free, in one zone, and a swap
    /// device of `swap_pages` slots (0 for no swap).
    pub fn new(nr_frames: u32, swap_pages: u32) -> Mm {
        let flat = [ZoneSpan { node: 0, id: ZoneId::Normal, pages: nr_frames }];
        Mm::with_layout(&flat, vec![vec![zone::LOCAL_DISTANCE]], swap_pages)
    }

    /// A machine of the zones `spans` (in pfn order, nodes numbered from 0
    /// with the distance matrix `distance`), all free, with a swap device of
    /// `swap_pages` slots.
    pub fn with_layout(spans: &[ZoneSpan], distance: Vec<Vec<u32>>, swap_pages: u32) -> Mm {
        let mut zones = Vec::with_capacity(spans.len());
        let mut start = 0;
        for s in spans {
            assert!((s.node as usize) < distance.len(), "zone on node {} of {}", s.node, distance.len());
            zones.push(Zone::new(s.id, s.node, start, s.pages));
            start += s.pages;
        }
        let nodes =
            (0..distance.len() as u8).map(|n| Node { zonelist: zone::build_zonelist(&zones, n, &distance) }).collect();
        Mm {
            frames: FrameTable::with_zones(&spans.iter().map(|s| s.pages).collect::<Vec<_>>()),
            regions: Vec::new(),
            files: Vec::new(),
            swap: SwapMap::new(swap_pages),
            zones,
            nodes,
            distance,
            stat: VmStat::default(),
            dirty: DirtyState::default(),
            zram: None,
            zswap: None,
            slab: Slab::default(),
            cgroups: Cgroups::default(),
            tracer: None,
            reserved: 0,
            pool_pgalloc: vec![0; spans.len()],
        }
    }

    /// Takes `pages` free frames for the kernel for good (slab, kernel data,
    /// unevictable boot files): they are never on an LRU list nor freed.
    /// Returns false, taking nothing, if fewer frames are free.
    pub fn reserve_kernel_pages(&mut self, pages: u32) -> bool {
        if self.frames.nr_free() < pages {
            return false;
        }
        // Boot allocations come from node 0, in its zonelist's order.
        let mut list = self.nodes[0].zonelist.iter().copied().chain(0..self.zones.len());
        let mut zone = list.next().expect("a machine has a zone");
        for _ in 0..pages {
            while self.frames.nr_free_in(zone) == 0 {
                zone = list.next().expect("counted free above");
            }
            self.frames.alloc_typed(zone, Migratetype::Unmovable, Owner::KERNEL).expect("zone has a free frame");
        }
        // Boot allocations wake no kswapd: their fallbacks leave no boost.
        (0..self.zones.len()).for_each(|z| _ = self.frames.take_boosts(z));
        self.reserved += pages as u64;
        true
    }

    /// Lays out zone `zone`'s pageblocks as a booted kernel left them
    /// ([`FrameTable::boot_layout`]): the frames not free are the kernel's for
    /// good, as [`Mm::reserve_kernel_pages`]'s. The zone must be untouched.
    pub fn boot_layout(&mut self, zone: usize, layout: &pageblock::BootLayout) -> Result<(), String> {
        let taken = self.frames.boot_layout(zone, layout)?;
        self.reserved += taken as u64;
        Ok(())
    }

    /// `boost_watermark()` for each fallback since the last call, with
    /// `vm.watermark_boost_factor` `factor`: the zones whose boost rose
    /// (`ZONE_BOOSTED_WATERMARK`: their node's kswapd is to be woken for them).
    pub fn apply_boosts(&mut self, factor: u64) -> Vec<usize> {
        let mut woken = Vec::new();
        for z in 0..self.zones.len() {
            let n = self.frames.take_boosts(z);
            let mut raised = false;
            for _ in 0..n {
                raised |= pageblock::boost_watermark(&mut self.zones[z], factor);
            }
            if raised {
                woken.push(z);
            }
        }
        woken
    }

    /// Gives the frame table each zone's low and min watermarks plus its
    /// reserve against `ZONE_NORMAL` (`GFP_KERNEL`'s highest zone), for slab
    /// pages (S-MM4: without the boost, and counting frames on per-CPU lists
    /// as free); on a machine of several nodes slab pages keep taking the
    /// highest zone with a free frame.
    pub fn set_kernel_marks(&mut self) {
        if self.nodes.len() > 1 {
            return;
        }
        let mark =
            |z: &Zone, w: Watermark| (z.watermark[w as usize] + z.lowmem_reserve[ZoneId::Normal as usize]) as u32;
        let marks = self.zones.iter().map(|z| (mark(z, Watermark::Low), mark(z, Watermark::Min))).collect();
        self.frames.set_kernel_marks(marks);
    }

    /// Pages taken by [`Mm::reserve_kernel_pages`].
    pub fn nr_reserved(&self) -> u64 {
        self.reserved
    }

    /// Puts swap on zram: swap writes store compressed pages in a pool of page frames.
    pub fn enable_zram(&mut self, cfg: ZramConfig) {
        self.zram = Some(ZramPool::new(cfg, self.swap.nr_slots()));
    }

    /// Puts zswap in front of the swap device; pages compress as `comp` says.
    pub fn enable_zswap(&mut self, cfg: ZswapConfig, comp: ZramConfig) {
        self.zswap = Some(Zswap::new(cfg, comp, self.swap.nr_slots(), self.frames.len() as u64));
    }

    /// `swap_free()` of the last reference: frees the slot and its compressed
    /// copy on zram (`zram_slot_free_notify`) or in zswap (`zswap_invalidate`).
    pub fn swap_free(&mut self, slot: u32) {
        if self.cgroups.enabled() {
            let cg = self.regions[self.swap.slot(slot).region as usize].cg;
            self.cgroups.charge_swap(cg, -1);
        }
        self.free_swap_cache_entry(slot);
        self.swap.free(slot);
        let before = self.nr_zspages();
        if let Some(z) = &mut self.zram {
            z.free(&mut self.frames, slot);
        }
        if let Some(z) = &mut self.zswap {
            z.invalidate(&mut self.frames, slot);
            self.settle_zswap_charges();
        }
        self.count_pool_pages(before);
    }

    /// Puts the change in each group's compressed zswap bytes on its page
    /// counter (`obj_cgroup_charge_zswap` / `obj_cgroup_uncharge_zswap`: the
    /// charge always succeeds, as reclaim's `PF_MEMALLOC` context forces it).
    fn settle_zswap_charges(&mut self) {
        let (Some(z), true) = (&mut self.zswap, self.cgroups.enabled()) else { return };
        let tree = &mut self.cgroups;
        z.settle_charges(|cg, pages| match pages {
            p if p > 0 => tree.charge(cg, p as u64),
            p => tree.uncharge(cg, p.unsigned_abs()),
        });
    }

    /// Counts the pool pages taken (`pgalloc_*` of the zone each came from)
    /// and given back (`pgfree`) since [`Mm::nr_zspages`] was `before`.
    fn count_pool_pages(&mut self, before: u64) {
        let mut taken = 0;
        for (z, counted) in self.pool_pgalloc.iter_mut().enumerate() {
            let n = self.frames.kernel_taken(z) - *counted;
            if n > 0 {
                *counted += n;
                taken += n;
                self.zones[z].stat.pgalloc += n;
                self.stat.count(VmEvent::PgallocDma.in_zone(self.zones[z].id), n);
            }
        }
        self.stat.count(VmEvent::Pgfree, (before + taken).saturating_sub(self.nr_zspages()));
    }

    /// The identity of the page in `pfn` (its owner and index), which decides
    /// how it compresses (S-ZR2).
    pub fn page_key(&self, pfn: Pfn) -> u64 {
        let f = &self.frames[pfn];
        ((f.owner.as_anon().map_or(0, |r| r.0) as u64) << 32) | f.index as u64
    }

    /// A completed synchronous swap write of the page at `key` (its owner and
    /// index) to `slot`: on zram the page is compressed into the pool. False if
    /// zram refused the write (no memory for the pool, or over `mem_limit`).
    pub fn swap_write_sync(&mut self, slot: u32, key: u64) -> bool {
        let before = self.nr_zspages();
        let Some(z) = &mut self.zram else { return true };
        let ok = z.write(&mut self.frames, slot, key);
        self.count_pool_pages(before);
        ok
    }

    /// `folio_alloc_swap()` with `mem_cgroup_try_charge_swap()`: a slot for
    /// page `index` of anonymous region `region`, charged to the region's
    /// group; `None` when swap is full or the group is at `memory.swap.max`.
    pub fn swap_alloc(&mut self, region: RegionId, index: u32) -> Option<u32> {
        if !self.cgroups.enabled() {
            return self.swap.alloc(region, index);
        }
        let cg = self.regions[region.0 as usize].cg;
        if self.cgroups.swap_room(cg) == 0 {
            return None;
        }
        let slot = self.swap.alloc(region, index)?;
        self.cgroups.charge_swap(cg, 1);
        Some(slot)
    }

    /// `mem_cgroup_get_nr_swap_pages()` of the group reclaim works for now:
    /// free swap slots, capped by the room under its `memory.swap.max`.
    #[inline]
    pub fn nr_swap_pages(&self) -> u64 {
        let free = self.swap.nr_free() as u64;
        if !self.cgroups.enabled() {
            return free;
        }
        free.min(self.cgroups.swap_room(self.cgroups.current()))
    }

    /// The memory cgroup a page of `owner` is charged to (the root for kernel pages).
    #[inline]
    pub fn group_of(&self, owner: Owner) -> CgId {
        if let Some(r) = owner.as_anon() {
            self.regions[r.0 as usize].cg
        } else if let Some(f) = owner.as_file() {
            self.files[f.0 as usize].cg
        } else {
            CgId::ROOT
        }
    }

    /// Frees the LRU page `pfn` and uncharges it from its group.
    #[inline]
    pub fn free_frame(&mut self, pfn: Pfn) {
        if self.cgroups.enabled() {
            let cg = self.group_of(self.frames[pfn].owner);
            self.cgroups.uncharge(cg, 1);
        }
        self.frames.free(pfn);
    }

    /// `zswap_store()` of the swap-cache page `pfn` as reclaim writes it:
    /// `None` without zswap, else whether the pool took it (then no device
    /// write happens and the page is clean).
    pub fn zswap_store(&mut self, pfn: Pfn) -> Option<zswap::Store> {
        let (slot, key, before) = (self.frames[pfn].swap, self.page_key(pfn), self.nr_zspages());
        let cg = self.group_of(self.frames[pfn].owner);
        let z = self.zswap.as_mut()?;
        let mut cx = ZswapCtx { frames: &mut self.frames, stat: &mut self.stat, swap: &self.swap, tree: &self.cgroups };
        let outcome = z.store(&mut cx, cg, slot, key);
        self.settle_zswap_charges();
        self.count_pool_pages(before);
        Some(outcome)
    }

    /// `zswap_load()` of `slot` into the new page `pfn`: true if zswap had it
    /// (no device read). An exclusive load into the swap cache frees the
    /// entry and dirties the page; a miss counts a disk swap-in for the shrinker.
    pub fn zswap_load(&mut self, pfn: Pfn, slot: u32, swapcache: bool) -> bool {
        let (before, cg) = (self.nr_zspages(), self.group_of(self.frames[pfn].owner));
        let Some(z) = &mut self.zswap else { return false };
        if !z.load(&mut self.frames, &mut self.stat, slot, swapcache) {
            z.note_disk_swapin(cg);
            return false;
        }
        if swapcache && z.config().exclusive_loads {
            self.frames[pfn].flags.set(PageFlags::DIRTY);
        }
        self.settle_zswap_charges();
        self.count_pool_pages(before);
        true
    }

    /// `zswap_shrinker_count()` (0 without zswap).
    pub fn zswap_shrinker_count(&mut self) -> u64 {
        let tree = &self.cgroups;
        self.zswap.as_mut().map_or(0, |z| z.shrinker_count(tree))
    }

    /// `zswap_shrinker_scan()`: writes back up to `nr_to_scan` entries' worth; returns the number written.
    pub fn zswap_shrinker_scan(&mut self, nr_to_scan: u64) -> u64 {
        let before = self.nr_zspages();
        let Some(z) = &mut self.zswap else { return 0 };
        let mut cx = ZswapCtx { frames: &mut self.frames, stat: &mut self.stat, swap: &self.swap, tree: &self.cgroups };
        let written = z.shrinker_scan(&mut cx, nr_to_scan);
        self.settle_zswap_charges();
        self.count_pool_pages(before);
        written
    }

    /// `zswap_writeback_enabled()` for the page `pfn`'s group: false if its
    /// `memory.zswap.writeback` (or an ancestor's) is 0 while zswap is on.
    pub fn zswap_writeback_enabled(&self, pfn: Pfn) -> bool {
        self.zswap.is_none() || self.cgroups.zswap_writeback(self.group_of(self.frames[pfn].owner))
    }

    /// Slots zswap wrote back since the last call: their device writes are due.
    pub fn take_zswap_writebacks(&mut self) -> Vec<u32> {
        self.zswap.as_mut().map_or_else(Vec::new, Zswap::take_writebacks)
    }

    /// Pages held by the zsmalloc pools of zram and zswap (`nr_zspages`).
    pub fn nr_zspages(&self) -> u64 {
        self.zram.as_ref().map_or(0, ZramPool::pages) + self.zswap.as_ref().map_or(0, Zswap::pages)
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

    /// `NR_FREE_PAGES`: free pages in all zones, not counting those on per-CPU lists.
    pub fn nr_free(&self) -> u64 {
        (0..self.zones.len()).map(|z| self.frames.nr_free_listed(z) as u64).sum()
    }

    /// Free page frames, those on per-CPU lists included (page accounting).
    pub fn nr_free_frames(&self) -> u64 {
        self.frames.nr_free() as u64
    }

    /// Free pages of zone `zone` (an index into [`Mm::zones`]) as the
    /// watermark checks count them: not those on per-CPU lists.
    #[inline]
    pub fn zone_free(&self, zone: usize) -> u64 {
        self.frames.nr_free_listed(zone) as u64
    }

    /// The node frame `pfn` is on.
    #[inline]
    pub fn node_of(&self, pfn: Pfn) -> u8 {
        self.zones[self.frames.zone_of(pfn)].node
    }

    /// Takes a free frame of zone `zone` for `owner`/`index` with `flags`,
    /// counting it in `pgalloc_*`; `None` if the zone has none free.
    #[inline]
    pub fn alloc_in(&mut self, zone: usize, owner: Owner, index: u32, flags: u16) -> Option<Pfn> {
        let pfn = self.frames.alloc_in(zone, owner, index, flags)?;
        if self.cgroups.enabled() {
            self.cgroups.charge_page(self.group_of(owner));
        }
        let z = &mut self.zones[zone];
        z.stat.pgalloc += 1;
        self.stat.count(VmEvent::PgallocDma.in_zone(z.id), 1);
        Some(pfn)
    }
}
