//! The fault path: a resident hit, anonymous and swap faults (mm/memory.c,
//! mm/swap_state.c), page-cache reads and file-mapping faults (mm/filemap.c).

use super::{Machine, Stall};
use crate::program::Access;
use crate::swap_ra::RaMode;
use crate::Nanos;
use mm::{CacheEntry, FileId, Owner, PageFlags, Pfn, Pte, RegionId, RegionKind, VmEvent};
use reclaim::pageout::free_swap_cache;
use reclaim::policy::{AccessKind, Origin};

/// What [`Machine::swap_in_page`] did.
pub(super) struct SwapIn {
    /// The page is listed at once (its add filled the CPU's batch).
    pub listed: bool,
    /// zswap had the page: a decompression, no device read.
    pub zswap: bool,
}

/// What [`Machine::swapin_readahead`] did.
pub(super) struct Readahead {
    /// Slots to read from the device.
    pub reads: Vec<u32>,
    /// Window pages zswap had (decompressed, not read).
    pub zswap_hits: u64,
    /// The window was wider than the target: the CPU's add batch was drained.
    pub drained: bool,
}

/// SIM-CHOICE: how many accesses ahead the engine prefetches a page-cache
/// slot or PTE (a few accesses' worth of time for a miss to memory).
pub(super) const PREFETCH_AHEAD: usize = 8;

/// The accesses named ahead by [`Machine::prefetch_upcoming`], by call number.
pub(super) type Upcoming = [Option<Access>; PREFETCH_AHEAD];

impl Machine {
    /// The fast path: an access to a resident page. True if it hit.
    #[inline]
    pub(super) fn try_hit(&mut self, a: Access) -> bool {
        match a {
            Access::Mem { region, page, write } => self.try_hit_mem(region, page, write),
            Access::FileRead { file, page } => {
                if let Some(pfn) = self.mm.files[file.0 as usize].cache[page as usize].pfn() {
                    self.policy.on_access(&mut self.mm, pfn, AccessKind::MarkAccessed);
                    return true;
                }
                false
            }
            Access::FileWrite { file, page } => {
                // Only a write to an already dirty page needs no dirty accounting
                // (unless ext3's journal wrote its buffers: they must be dirtied again).
                match self.mm.files[file.0 as usize].cache[page as usize].pfn() {
                    Some(pfn)
                        if self.mm.frames[pfn].flags.0 & (PageFlags::DIRTY | PageFlags::BUFFERS_CLEAN)
                            == PageFlags::DIRTY =>
                    {
                        self.policy.on_access(&mut self.mm, pfn, AccessKind::MarkAccessed);
                        true
                    }
                    _ => false,
                }
            }
        }
    }

    /// [`Machine::try_hit`] of a load or store to page `page` of `region`.
    #[inline(always)]
    pub(super) fn try_hit_mem(&mut self, region: mm::RegionId, page: u32, write: bool) -> bool {
        let pte = &mut self.mm.regions[region.0 as usize].ptes[page as usize];
        if pte.is_present() {
            pte.touch(write);
            return true;
        }
        false
    }

    /// Prefetches for the accesses a program says come next (a hint, no
    /// effect on results): for the access [`PREFETCH_AHEAD`] steps on, its
    /// PTE or page-cache slot; for the one `PREFETCH_NEAR` steps on (named
    /// earlier and kept in `ring`), the frame its slot holds, which the
    /// policy's `mark_page_accessed` reads on a hit. `step` counts the calls.
    #[inline(always)]
    pub(super) fn prefetch_upcoming(&self, program: &dyn crate::Program, ring: &mut Upcoming, step: usize) {
        const PREFETCH_NEAR: usize = 3;
        let far = program.upcoming(PREFETCH_AHEAD);
        match far {
            Some(Access::Mem { region, page, .. }) => self.mm.prefetch_pte(region, page),
            Some(Access::FileRead { file, page } | Access::FileWrite { file, page }) => {
                self.mm.prefetch_cache_slot(file, page)
            }
            None => {}
        }
        // Named `PREFETCH_AHEAD - PREFETCH_NEAR` calls ago, as `PREFETCH_AHEAD` on then.
        let near = ring[(step + PREFETCH_NEAR) % PREFETCH_AHEAD];
        ring[step % PREFETCH_AHEAD] = far;
        if let Some(Access::FileRead { file, page } | Access::FileWrite { file, page }) = near {
            self.mm.prefetch_cache_frame(file, page);
        }
    }

    /// The slow path: faults and page-cache misses. Returns (latency, of which reclaim stall).
    pub(super) fn slow_access(&mut self, a: Access, now: Nanos) -> Result<(Nanos, Nanos), Stall> {
        // The access's frees and allocations use the running thread's per-CPU lists.
        self.mm.pcp_switch(self.lru_batches.cpu());
        if !self.mm.cgroups.enabled() {
            return self.fault(a, now);
        }
        // The fault's counters go to the group of the page (S-CG3).
        let owner = match a {
            Access::Mem { region, .. } => match self.mm.regions[region.0 as usize].kind {
                RegionKind::Anon => Owner::anon(region),
                RegionKind::File { file, .. } => Owner::file(file),
            },
            Access::FileRead { file, .. } | Access::FileWrite { file, .. } => Owner::file(file),
        };
        let cg = self.mm.group_of(owner);
        self.mm.cgroups.switch_to(cg, &self.mm.stat);
        self.mm.cgroups.set_cpu(self.lru_batches.cpu());
        let (cost, stall) = self.fault(a, now)?;
        // Back to user space: a debt over memory.high is paid now.
        let high = self.handle_over_high(cg, now + cost);
        Ok((cost + high, stall + high))
    }

    /// The fault proper, by the kind of access.
    fn fault(&mut self, a: Access, now: Nanos) -> Result<(Nanos, Nanos), Stall> {
        match a {
            Access::Mem { region, page, write } => {
                let r = &self.mm.regions[region.0 as usize];
                let pte = r.ptes[page as usize];
                match r.kind {
                    RegionKind::Anon => match pte.swap_slot() {
                        Some(slot) => self.do_swap_page(region, page, slot, write, now),
                        None => self.do_anonymous_page(region, page, write, now),
                    },
                    RegionKind::File { file, offset } => {
                        self.filemap_fault(region, page, file, offset + page, write, now)
                    }
                }
            }
            Access::FileRead { file, page } => self.filemap_read(file, page, now),
            Access::FileWrite { file, page } => self.filemap_write(file, page, now),
        }
    }

    /// `do_anonymous_page()`: a first touch of anonymous memory.
    pub(super) fn do_anonymous_page(
        &mut self,
        region: RegionId,
        page: u32,
        write: bool,
        now: Nanos,
    ) -> Result<(Nanos, Nanos), Stall> {
        let (pfn, stall) = self.alloc_page(Owner::anon(region), page, PageFlags::SWAPBACKED, now)?;
        self.mm.regions[region.0 as usize].ptes[page as usize] = Pte::present(pfn, write);
        self.lru_add(pfn, Origin::AnonFault, None);
        self.mm.stat.count(VmEvent::Pgfault, 1);
        Ok((stall + self.cfg.cpu.fault_ns, stall))
    }

    /// `do_swap_page()`: a fault on a swapped-out page.
    pub(super) fn do_swap_page(
        &mut self,
        region: RegionId,
        page: u32,
        slot: u32,
        write: bool,
        now: Nanos,
    ) -> Result<(Nanos, Nanos), Stall> {
        self.mm.stat.count(VmEvent::Pgfault, 1);
        let entry = self.mm.swap.slot(slot).cache;
        if let Some(pfn) = entry.pfn() {
            // Swap-cache hit: a minor fault (`swap_cache_get_folio`).
            let readahead = self.mm.frames[pfn].flags.test_clear(PageFlags::READAHEAD);
            if readahead {
                self.mm.stat.count(VmEvent::SwapRaHit, 1);
            }
            self.ra.on_cache_hit(region.0 as usize, page, readahead);
            self.map_swapped_in(region, page, pfn, write);
            self.policy.on_access(&mut self.mm, pfn, AccessKind::SwapCacheHit);
            return Ok((self.cfg.cpu.fault_ns, 0));
        }
        let (pfn, stall) = self.alloc_page(Owner::anon(region), page, PageFlags::SWAPBACKED, now)?;
        self.mm.stat.count(VmEvent::Pgmajfault, 1);
        let t = now + stall;
        let (done, listed) = if self.swap_dev.sync {
            // SWP_SYNCHRONOUS_IO: no swap cache, no readahead; the slot is released at once.
            let s = self.swap_in_page(pfn, slot, false);
            self.mm.set_swap_cache(slot, CacheEntry::EMPTY);
            self.mm.swap_free(slot);
            let done = if s.zswap { t } else { self.swap_dev.submit(t, 1, false) };
            (done + s.zswap as u64 * self.cfg.cpu.zswap_decompress_ns, s.listed)
        } else {
            let s = self.swap_in_page(pfn, slot, true);
            let ra = self.swapin_readahead(region, page, slot);
            let mut reads = ra.reads;
            if !s.zswap {
                reads.push(slot);
            }
            let read_done = self.submit_swap_reads(&mut reads, slot, t);
            // The faulting thread sleeps until its page is read (folio_lock).
            self.sleep_ns += read_done - t;
            // zswap hits are decompressed on the faulting CPU as they are read.
            let decompressed = (ra.zswap_hits + s.zswap as u64) * self.cfg.cpu.zswap_decompress_ns;
            (read_done + decompressed, s.listed || ra.drained)
        };
        self.note_refault_stall(pfn, done - t);
        self.map_swapped_in(region, page, pfn, write);
        if listed {
            self.policy.on_access(&mut self.mm, pfn, AccessKind::SwapInListed);
        }
        Ok((done - now + self.cfg.cpu.fault_ns, stall))
    }

    /// Reads swap slot `slot` into frame `pfn`: swap cache insertion (unless
    /// bypassed), a zswap load or a device read, refault check on the slot's
    /// shadow, LRU insertion, counters.
    #[inline]
    pub(super) fn swap_in_page(&mut self, pfn: Pfn, slot: u32, swap_cache: bool) -> SwapIn {
        let shadow = self.mm.swap.slot(slot).cache.as_shadow();
        if swap_cache {
            let f = &mut self.mm.frames[pfn];
            f.flags.set(PageFlags::SWAPCACHE);
            if self.cfg.reclaim.swapin_workingset {
                // `__read_swap_cache_async()` v4.20..v5.9: every read into the swap cache is workingset.
                f.flags.set(PageFlags::WORKINGSET);
            }
            f.swap = slot;
            self.mm.set_swap_cache(slot, CacheEntry::resident(pfn));
        }
        // swap_read_folio(): zswap first, then the device.
        let zswap = self.mm.zswap.is_some() && self.mm.zswap_load(pfn, slot, swap_cache);
        if !zswap {
            self.mm.stat.count(VmEvent::Pswpin, 1);
            self.mm.stat.count(VmEvent::Pgpgin, mm::PAGE_SIZE / 1024);
        }
        SwapIn { listed: self.lru_add(pfn, Origin::SwapIn, shadow), zswap }
    }

    /// `lru_cache_add()` on the running thread's CPU: the policy lists the page;
    /// true if the page would already carry `PG_lru` (its add filled the batch).
    pub(super) fn lru_add(&mut self, pfn: Pfn, origin: Origin, shadow: Option<mm::Shadow>) -> bool {
        // While recording, the policy is wrapped to record the listing (trace_events::Traced).
        self.policy.add_page(&mut self.mm, pfn, origin, shadow);
        self.lru_batches.add()
    }

    /// `swapin_readahead()` around a fault on `page` of `region` (slot `target`):
    /// reads the window's other swapped-out pages into the swap cache with
    /// `PG_readahead`; returns the slots to read from the device, the pages
    /// zswap had, and whether the window was wider than the target, in which
    /// case the CPU's add batch was drained.
    pub(super) fn swapin_readahead(&mut self, region: RegionId, page: u32, target: u32) -> Readahead {
        let (candidates, wide): (Vec<u32>, bool) = match self.ra.mode {
            RaMode::Cluster => {
                let window = self.ra.cluster_window(target, self.mm.swap.nr_slots());
                let wide = window.end() > window.start();
                (window.collect(), wide)
            }
            RaMode::Vma => {
                let ptes = &self.mm.regions[region.0 as usize].ptes;
                let window = self.ra.vma_window(region.0 as usize, page, ptes.len() as u32);
                (
                    ptes[window.start as usize..window.end as usize].iter().filter_map(|pte| pte.swap_slot()).collect(),
                    window.len() > 1,
                )
            }
        };
        let mut ra = Readahead { reads: Vec::with_capacity(candidates.len()), zswap_hits: 0, drained: wide };
        for slot in candidates {
            if slot == target || !self.mm.swap.is_used(slot) || self.mm.swap.slot(slot).cache.pfn().is_some() {
                continue;
            }
            // Simplification S-RA1: readahead pages never enter reclaim; past the min watermark the window stops.
            let s = *self.mm.swap.slot(slot);
            let flags = PageFlags::SWAPBACKED | PageFlags::READAHEAD;
            let Some(pfn) = self.alloc_frame_nowait(Owner::anon(RegionId(s.region)), s.index, flags) else { break };
            self.mm.stat.count(VmEvent::SwapRa, 1);
            if self.swap_in_page(pfn, slot, true).zswap {
                ra.zswap_hits += 1;
            } else {
                ra.reads.push(slot);
            }
        }
        if wide {
            // `lru_add_drain()`: push the window's pages onto the LRU now.
            self.lru_batches.drain();
        }
        ra
    }

    /// Submits swap reads as one request per run of contiguous slots, in slot
    /// order; returns when the run holding `target` completes.
    pub(super) fn submit_swap_reads(&mut self, slots: &mut [u32], target: u32, at: Nanos) -> Nanos {
        slots.sort_unstable();
        let mut target_done = at;
        for run in slots.chunk_by(|a, b| b == &(a + 1)) {
            let done = self.swap_dev.submit_at(at, run[0] as u64, run.len() as u64, false);
            if run.contains(&target) {
                target_done = done;
            }
        }
        target_done
    }

    /// Maps a swapped-in page; frees its swap slot on a write fault or when swap
    /// is more than half full (`should_try_to_free_swap`).
    pub(super) fn map_swapped_in(&mut self, region: RegionId, page: u32, pfn: Pfn, write: bool) {
        self.mm.regions[region.0 as usize].ptes[page as usize] = Pte::present(pfn, write);
        let flags = self.mm.frames[pfn].flags;
        if flags.has(PageFlags::SWAPCACHE) && !flags.has(PageFlags::WRITEBACK) && (write || self.mm.swap.is_half_full())
        {
            free_swap_cache(&mut self.mm, pfn);
        }
    }

    /// Reads page `index` of `file` into the page cache; returns the frame and
    /// (latency, stall). Runs the refault check on a shadow entry.
    pub(super) fn read_file_page(
        &mut self,
        file: FileId,
        index: u32,
        origin: Origin,
        now: Nanos,
    ) -> Result<(Pfn, Nanos, Nanos), Stall> {
        let window = self.readahead_window(file, index);
        let (pfn, stall) = self.alloc_page(Owner::file(file), index, 0, now)?;
        let shadow = self.mm.insert_cache_page(file, index, pfn);
        self.lru_add(pfn, origin, shadow);
        self.mm.stat.count(VmEvent::Pgpgin, mm::PAGE_SIZE / 1024);
        self.read_ahead(file, index, window, now + stall);
        let pos = ((file.0 as u64) << 32) | index as u64;
        let done = self.fs_dev.submit_at(now + stall, pos, window as u64, false);
        if !self.fs_dev.sync {
            self.sleep_ns += done - now - stall;
        }
        self.note_refault_stall(pfn, done - now - stall);
        Ok((pfn, done - now, stall))
    }

    /// `filemap_read()`: a `read()` that missed the page cache.
    pub(super) fn filemap_read(&mut self, file: FileId, index: u32, now: Nanos) -> Result<(Nanos, Nanos), Stall> {
        let (pfn, latency, stall) = self.read_file_page(file, index, Origin::FileRead, now)?;
        self.policy.on_access(&mut self.mm, pfn, AccessKind::MarkAccessed);
        Ok((latency + self.cfg.cpu.file_read(), stall))
    }

    /// `filemap_fault()`: a fault on a file mapping.
    pub(super) fn filemap_fault(
        &mut self,
        region: RegionId,
        page: u32,
        file: FileId,
        index: u32,
        write: bool,
        now: Nanos,
    ) -> Result<(Nanos, Nanos), Stall> {
        self.mm.stat.count(VmEvent::Pgfault, 1);
        let (pfn, latency, stall) = match self.mm.files[file.0 as usize].cache[index as usize].pfn() {
            Some(pfn) => (pfn, 0, 0),
            None => {
                let r = self.read_file_page(file, index, Origin::FileFault, now)?;
                self.mm.stat.count(VmEvent::Pgmajfault, 1);
                r
            }
        };
        self.mm.regions[region.0 as usize].ptes[page as usize] = Pte::present(pfn, write);
        // do_shared_fault(): a write fault dirties the page at once (S-WB3).
        let pause = if write { self.dirty_page(pfn, now + latency) } else { 0 };
        Ok((latency + self.cfg.cpu.fault_ns + pause, stall))
    }

    /// A read of a page that was part of the workingset is a memory stall
    /// (`psi_memstall_enter` in the swap and page-cache read paths).
    pub(super) fn note_refault_stall(&mut self, pfn: Pfn, io_ns: Nanos) {
        if self.mm.frames[pfn].flags.has(PageFlags::WORKINGSET) {
            self.refault_stall_ns += io_ns;
        }
    }
}
