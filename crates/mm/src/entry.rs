//! Value entries: page-table entries and page-cache/swap-cache slots.
//!
//! Like the kernel's PTEs and xarray value entries, a slot is one word that is
//! either empty, a resident page, or (non-resident) a swap slot or shadow entry.

use crate::frame::Pfn;

/// A shadow entry: the eviction cookie a reclaim policy leaves in an evicted
/// page's slot (at most 62 bits; the encoding belongs to the policy).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shadow(pub u64);

impl Shadow {
    /// Largest encodable shadow value.
    pub const MAX: u64 = (1 << 62) - 1;
}

/// A page-table entry: none, present (with accessed and dirty bits) or swapped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pte(pub u64);

impl Pte {
    const PRESENT: u64 = 1;
    const YOUNG: u64 = 2;
    const DIRTY: u64 = 4;
    const SWAP: u64 = 8;
    const SHIFT: u32 = 8;

    /// The empty entry (never touched, or unmapped).
    pub const NONE: Pte = Pte(0);

    /// A present entry mapping `pfn`, with the accessed bit set.
    #[inline]
    pub fn present(pfn: Pfn, dirty: bool) -> Pte {
        Pte(((pfn as u64) << Self::SHIFT) | Self::PRESENT | Self::YOUNG | if dirty { Self::DIRTY } else { 0 })
    }
    /// A swap entry pointing at swap slot `slot`.
    #[inline]
    pub fn swapped(slot: u32) -> Pte {
        Pte(((slot as u64) << Self::SHIFT) | Self::SWAP)
    }
    /// True if the entry maps a resident page.
    #[inline]
    pub fn is_present(self) -> bool {
        self.0 & Self::PRESENT != 0
    }
    /// The mapped frame of a present entry.
    #[inline]
    pub fn pfn(self) -> Option<Pfn> {
        self.is_present().then_some((self.0 >> Self::SHIFT) as Pfn)
    }
    /// The swap slot of a swap entry.
    #[inline]
    pub fn swap_slot(self) -> Option<u32> {
        (self.0 & Self::SWAP != 0).then_some((self.0 >> Self::SHIFT) as u32)
    }
    /// The hardware accessed ("young") bit.
    #[inline]
    pub fn young(self) -> bool {
        self.0 & Self::YOUNG != 0
    }
    /// The hardware dirty bit.
    #[inline]
    pub fn dirty(self) -> bool {
        self.0 & Self::DIRTY != 0
    }
    /// What the MMU does on an access through a present entry: set accessed, and dirty on write.
    #[inline]
    pub fn touch(&mut self, write: bool) {
        self.0 |= Self::YOUNG | if write { Self::DIRTY } else { 0 };
    }
    /// Test-and-clear of the accessed bit, as `ptep_clear_flush_young` does.
    #[inline]
    pub fn test_clear_young(&mut self) -> bool {
        let y = self.young();
        self.0 &= !Self::YOUNG;
        y
    }
}

/// A page-cache or swap-cache slot: empty, a resident page, or a shadow entry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheEntry(pub u64);

impl CacheEntry {
    const RESIDENT: u64 = 1;
    const SHADOW: u64 = 2;
    /// The empty slot.
    pub const EMPTY: CacheEntry = CacheEntry(0);

    /// A slot holding resident page `pfn`.
    #[inline]
    pub fn resident(pfn: Pfn) -> CacheEntry {
        CacheEntry(((pfn as u64) << 2) | Self::RESIDENT)
    }
    /// A slot holding a shadow entry.
    #[inline]
    pub fn shadow(s: Shadow) -> CacheEntry {
        assert!(s.0 <= Shadow::MAX, "shadow {:#x} does not fit a slot", s.0);
        CacheEntry((s.0 << 2) | Self::SHADOW)
    }
    /// The resident page, if any.
    #[inline]
    pub fn pfn(self) -> Option<Pfn> {
        (self.0 & Self::RESIDENT != 0).then_some((self.0 >> 2) as Pfn)
    }
    /// The shadow entry, if any.
    #[inline]
    pub fn as_shadow(self) -> Option<Shadow> {
        (self.0 & Self::SHADOW != 0).then_some(Shadow(self.0 >> 2))
    }
    /// True if the slot is empty.
    #[inline]
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pte_bits() {
        let mut p = Pte::present(12345, false);
        assert_eq!(p.pfn(), Some(12345));
        assert!(p.young() && !p.dirty());
        assert!(p.test_clear_young());
        assert!(!p.young());
        p.touch(true);
        assert!(p.young() && p.dirty());
        assert_eq!(p.swap_slot(), None);
        let s = Pte::swapped(77);
        assert_eq!(s.swap_slot(), Some(77));
        assert_eq!(s.pfn(), None);
        assert_eq!(Pte::NONE.pfn(), None);
    }

    #[test]
    fn cache_entry_kinds() {
        assert_eq!(CacheEntry::resident(9).pfn(), Some(9));
        assert_eq!(CacheEntry::resident(9).as_shadow(), None);
        let s = CacheEntry::shadow(Shadow(Shadow::MAX));
        assert_eq!(s.as_shadow(), Some(Shadow(Shadow::MAX)));
        assert_eq!(s.pfn(), None);
        assert!(CacheEntry::EMPTY.is_empty());
    }
}
