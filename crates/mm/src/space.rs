//! Address spaces: regions (VMAs) with page tables, and files with page caches.

use crate::cgroup::CgId;
use crate::entry::{CacheEntry, Pte};

/// Index of a region in `Mm::regions`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct RegionId(pub u32);

/// Index of a file in `Mm::files`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct FileId(pub u32);

/// What backs a region.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegionKind {
    /// Private anonymous memory; pages go to swap.
    Anon,
    /// A shared mapping of `file` starting at page `offset`.
    File {
        /// The mapped file.
        file: FileId,
        /// First file page of the mapping.
        offset: u32,
    },
}

/// A virtual memory area with its own page table (one PTE per page).
///
/// Simplification S-MM2: each region stands for one VMA of one process; page
/// tables are flat arrays (no PMD/PUD levels).
#[derive(Clone, Debug)]
pub struct Region {
    /// What backs the region.
    pub kind: RegionKind,
    /// One entry per page of the region.
    pub ptes: Vec<Pte>,
    /// `VM_EXEC`: an executable mapping (its referenced file pages stay active).
    pub exec: bool,
    /// The memory cgroup its anonymous pages are charged to.
    pub cg: CgId,
}

impl Region {
    /// A region of `pages` pages with every PTE empty.
    pub fn new(kind: RegionKind, pages: u32) -> Region {
        Region { kind, ptes: vec![Pte::NONE; pages as usize], exec: false, cg: CgId::ROOT }
    }
    /// Number of pages.
    pub fn nr_pages(&self) -> u32 {
        self.ptes.len() as u32
    }
}

/// A file: its page cache (one slot per page) and the regions mapping it (`i_mmap`).
#[derive(Clone, Debug)]
pub struct File {
    /// One slot per file page: empty, resident, or shadow.
    pub cache: Vec<CacheEntry>,
    /// Regions that map this file, for the reverse map.
    pub mappers: Vec<RegionId>,
    /// The memory cgroup its pages are charged to (S-CG1).
    pub cg: CgId,
}

impl File {
    /// A file of `pages` pages, nothing cached.
    pub fn new(pages: u32) -> File {
        File { cache: vec![CacheEntry::EMPTY; pages as usize], mappers: Vec::new(), cg: CgId::ROOT }
    }
    /// Number of pages.
    pub fn nr_pages(&self) -> u32 {
        self.cache.len() as u32
    }
}

/// Asks the CPU to start loading the cache line of `r` (a hint: it changes no
/// state, and on other architectures it does nothing).
#[inline(always)]
pub fn prefetch<T>(r: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and reads nothing into the program; `r`
    // is a valid reference anyway.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>((r as *const T).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = r;
}

/// Prefetches the entry that maps `frame`'s page (its page-cache slot or PTE),
/// which evicting the page rewrites: a hint for reclaim to give when it
/// isolates a batch, so that the batch's misses overlap.
#[inline(always)]
pub fn prefetch_mapping(files: &[File], regions: &[Region], frame: &crate::Frame) {
    let index = frame.index as usize;
    if let Some(file) = frame.owner.as_file() {
        if let Some(slot) = files.get(file.0 as usize).and_then(|f| f.cache.get(index)) {
            prefetch(slot);
        }
    } else if let Some(pte) = frame.owner.as_anon().and_then(|r| regions.get(r.0 as usize)?.ptes.get(index)) {
        prefetch(pte);
    }
}

impl crate::Mm {
    /// Prefetches what a hit on page `page` of `region` reads: its PTE.
    #[inline(always)]
    pub fn prefetch_pte(&self, region: RegionId, page: u32) {
        if let Some(pte) = self.regions.get(region.0 as usize).and_then(|r| r.ptes.get(page as usize)) {
            prefetch(pte);
        }
    }

    /// Prefetches what a read of page `index` of `file` reads first: its page-cache slot.
    #[inline(always)]
    pub fn prefetch_cache_slot(&self, file: FileId, index: u32) {
        if let Some(slot) = self.files.get(file.0 as usize).and_then(|f| f.cache.get(index as usize)) {
            prefetch(slot);
        }
    }

    /// Prefetches what a hit on page `index` of `file` reads next: the frame
    /// its slot holds (the slot itself should be in the cache by now).
    #[inline(always)]
    pub fn prefetch_cache_frame(&self, file: FileId, index: u32) {
        let slot = self.files.get(file.0 as usize).and_then(|f| f.cache.get(index as usize));
        if let Some(frame) = slot.and_then(|s| s.pfn()).and_then(|pfn| self.frames.as_slice().get(pfn as usize)) {
            prefetch(frame);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CacheEntry, Mm};

    /// Hints never fail: ids and pages out of range, empty slots and frames
    /// of any owner are ignored, and nothing the simulation sees changes.
    #[test]
    fn prefetch_hints_accept_anything_and_change_nothing() {
        let mut mm = Mm::new(16, 0);
        let (r, f) = (mm.add_anon_region(4), mm.add_file(4));
        mm.files[f.0 as usize].cache[1] = CacheEntry::resident(3);
        let before = (mm.files[f.0 as usize].cache.clone(), mm.regions[r.0 as usize].ptes.clone());
        for page in [0, 1, 3, 4, u32::MAX] {
            mm.prefetch_pte(r, page);
            mm.prefetch_pte(RegionId(7), page);
            mm.prefetch_cache_slot(f, page);
            mm.prefetch_cache_slot(FileId(7), page);
            mm.prefetch_cache_frame(f, page);
            mm.prefetch_cache_frame(FileId(7), page);
        }
        let frames = [
            crate::Frame { owner: crate::Owner::file(f), index: 9, ..mm.frames[0] },
            crate::Frame { owner: crate::Owner::anon(RegionId(7)), index: 0, ..mm.frames[0] },
            crate::Frame { owner: crate::Owner::KERNEL, ..mm.frames[0] },
            mm.frames[0],
        ];
        for frame in &frames {
            prefetch_mapping(&mm.files, &mm.regions, frame);
        }
        assert_eq!((mm.files[f.0 as usize].cache.clone(), mm.regions[r.0 as usize].ptes.clone()), before);
    }
}
