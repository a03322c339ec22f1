//! The reverse map: from a page frame to the page-table entries mapping it.
//!
//! Models `folio_referenced()` and `try_to_unmap()` (mm/rmap.c). An anonymous
//! page is mapped by at most one PTE (its region's); a file page by one PTE in
//! each region mapping that file offset (the file's `i_mmap`).
//! Simplification S-RM1: no anon_vma sharing (no fork/COW), no rmap lock contention.

use mm::{Mm, Pfn, Pte, RegionId, RegionKind};

/// Result of a reference check.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Referenced {
    /// Number of mappings whose accessed bit was set (and is now cleared).
    pub young: u32,
    /// OR of `VM_EXEC` over the mappings that were young.
    pub exec: bool,
    /// PTEs looked at (the CPU cost of the walk).
    pub ptes_checked: u32,
}

/// One mapping of a page: the region and the page's index in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mapping {
    /// The mapping region.
    pub region: RegionId,
    /// Page index within the region.
    pub index: u32,
}

/// Calls `f` on every PTE that maps `pfn`, with the region's exec flag and the mapping.
fn for_each_mapping(mm: &mut Mm, pfn: Pfn, mut f: impl FnMut(&mut Pte, bool, Mapping)) -> u32 {
    let frame = mm.frames[pfn];
    let mut checked = 0;
    if let Some(r) = frame.owner.as_anon() {
        let region = &mut mm.regions[r.0 as usize];
        let exec = region.exec;
        let pte = &mut region.ptes[frame.index as usize];
        checked += 1;
        if pte.pfn() == Some(pfn) {
            f(pte, exec, Mapping { region: r, index: frame.index });
        }
    } else if let Some(file) = frame.owner.as_file() {
        let Mm { files, regions, .. } = mm;
        for &r in &files[file.0 as usize].mappers {
            let region = &mut regions[r.0 as usize];
            let RegionKind::File { offset, .. } = region.kind else { unreachable!("file mapper {r:?} is anon") };
            let Some(i) = frame.index.checked_sub(offset) else { continue };
            if let Some(pte) = region.ptes.get_mut(i as usize) {
                checked += 1;
                if pte.pfn() == Some(pfn) {
                    f(pte, region.exec, Mapping { region: r, index: i });
                }
            }
        }
    }
    checked
}

/// `folio_referenced()`: counts and clears the accessed bits of every mapping of `pfn`.
pub fn folio_referenced(mm: &mut Mm, pfn: Pfn) -> Referenced {
    folio_referenced_at(mm, pfn, |_| {})
}

/// `folio_referenced()` that also reports each young mapping to `young_at`
/// (MGLRU's look-around starts from there).
pub fn folio_referenced_at(mm: &mut Mm, pfn: Pfn, mut young_at: impl FnMut(Mapping)) -> Referenced {
    let mut r = Referenced::default();
    r.ptes_checked = for_each_mapping(mm, pfn, |pte, exec, at| {
        if pte.test_clear_young() {
            r.young += 1;
            r.exec |= exec;
            young_at(at);
        }
    });
    r
}

/// True if any page table maps `pfn` (`folio_mapped()`).
pub fn folio_mapped(mm: &mut Mm, pfn: Pfn) -> bool {
    let mut mapped = false;
    for_each_mapping(mm, pfn, |_, _, _| mapped = true);
    mapped
}

/// `try_to_unmap()`: replaces every PTE of `pfn` with a swap entry (anon, which
/// must be in the swap cache) or clears it (file). Moves PTE dirty bits into
/// `PG_dirty`. Returns the number of PTEs checked.
pub fn try_to_unmap(mm: &mut Mm, pfn: Pfn) -> u32 {
    let frame = mm.frames[pfn];
    let anon = frame.owner.as_anon().is_some();
    assert!(!anon || frame.flags.has(mm::PageFlags::SWAPCACHE), "unmapping anon pfn {pfn} without a swap slot");
    let mut dirty = false;
    let checked = for_each_mapping(mm, pfn, |pte, _, _| {
        dirty |= pte.dirty();
        *pte = if anon { Pte::swapped(frame.swap) } else { Pte::NONE };
    });
    if dirty {
        mm.set_page_dirty(pfn);
    }
    checked
}
