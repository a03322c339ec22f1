//! The swap device's slot map and swap cache.
//!
//! Each slot records its user (region and page, the reverse map the kernel keeps
//! through the PTE) and its swap-cache entry: a resident page, a shadow entry
//! left by reclaim, or nothing.

use crate::entry::CacheEntry;
use crate::space::RegionId;

/// One swap slot.
#[derive(Clone, Copy, Debug)]
pub struct SwapSlot {
    /// Region using the slot, or `u32::MAX` when the slot is free.
    pub region: u32,
    /// Page index within that region.
    pub index: u32,
    /// The swap-cache slot: resident page, shadow entry, or empty.
    pub cache: CacheEntry,
}

const FREE_SLOT: SwapSlot = SwapSlot { region: u32::MAX, index: 0, cache: CacheEntry::EMPTY };

/// The slot map of one swap device.
///
/// Allocation is next-fit from a rotating cursor, so consecutive swap-outs get
/// consecutive slots: slot order follows reclaim order, as with the kernel's
/// per-CPU swap clusters. Simplification S-MM3: one swap device, no clusters,
/// no per-CPU slot caches; slot 0 is the swap header and never used.
#[derive(Clone, Debug)]
pub struct SwapMap {
    slots: Vec<SwapSlot>,
    cursor: u32,
    nr_free: u32,
}

impl SwapMap {
    /// A swap device of `pages` pages (0 for none). Slot 0 holds the header.
    pub fn new(pages: u32) -> SwapMap {
        SwapMap { slots: vec![FREE_SLOT; pages as usize], cursor: 1, nr_free: pages.saturating_sub(1) }
    }

    /// True if a swap device is configured.
    pub fn is_configured(&self) -> bool {
        self.slots.len() > 1
    }
    /// Total usable slots.
    pub fn total(&self) -> u32 {
        (self.slots.len() as u32).saturating_sub(1)
    }
    /// Free slots (`nr_swap_pages`).
    pub fn nr_free(&self) -> u32 {
        self.nr_free
    }
    /// KERNEL: `vm_swap_full()` — more than half of swap is in use.
    pub fn is_half_full(&self) -> bool {
        (self.nr_free as u64) * 2 < self.total() as u64
    }

    /// Allocates a slot for page `index` of `region`; `None` when swap is full.
    pub fn alloc(&mut self, region: RegionId, index: u32) -> Option<u32> {
        if self.nr_free == 0 {
            return None;
        }
        let n = self.slots.len() as u32;
        // Bounded: at most one full turn, and a free slot exists.
        for _ in 0..n {
            let s = self.cursor;
            self.cursor = if self.cursor + 1 >= n { 1 } else { self.cursor + 1 };
            let slot = &mut self.slots[s as usize];
            if slot.region == u32::MAX {
                *slot = SwapSlot { region: region.0, index, cache: CacheEntry::EMPTY };
                self.nr_free -= 1;
                return Some(s);
            }
        }
        unreachable!("swap map says {} slots free but none was found", self.nr_free)
    }

    /// Frees a slot; its swap-cache entry (page link or shadow) goes with it.
    pub fn free(&mut self, slot: u32) {
        let s = &mut self.slots[slot as usize];
        assert!(s.region != u32::MAX, "double free of swap slot {slot}");
        assert!(s.cache.pfn().is_none(), "freeing swap slot {slot} with a page still in the swap cache");
        *s = FREE_SLOT;
        self.nr_free += 1;
    }

    /// The slot's record.
    #[inline]
    pub fn slot(&self, slot: u32) -> &SwapSlot {
        &self.slots[slot as usize]
    }
    /// The slot's swap-cache entry, for update.
    #[inline]
    pub fn cache_mut(&mut self, slot: u32) -> &mut CacheEntry {
        let s = &mut self.slots[slot as usize];
        debug_assert!(s.region != u32::MAX, "swap cache access to free slot {slot}");
        &mut s.cache
    }
    /// True if `slot` is allocated.
    pub fn is_used(&self, slot: u32) -> bool {
        self.slots.get(slot as usize).is_some_and(|s| s.region != u32::MAX)
    }
    /// Number of slots including the header slot (device size in pages).
    pub fn nr_slots(&self) -> u32 {
        self.slots.len() as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_fit_and_full() {
        let mut m = SwapMap::new(4);
        assert_eq!(m.total(), 3);
        let a = m.alloc(RegionId(0), 1).unwrap();
        let b = m.alloc(RegionId(0), 2).unwrap();
        assert_eq!((a, b), (1, 2));
        assert!(m.is_half_full());
        m.free(a);
        let c = m.alloc(RegionId(1), 0).unwrap();
        assert_eq!(c, 3, "next-fit continues past the last allocation");
        let d = m.alloc(RegionId(1), 1).unwrap();
        assert_eq!(d, 1, "wraps around, skipping the header");
        assert_eq!(m.alloc(RegionId(1), 2), None);
        assert_eq!(m.slot(d).index, 1);
    }
}
