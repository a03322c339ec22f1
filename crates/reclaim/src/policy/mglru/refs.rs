//! Per-page access counts for file-descriptor accesses: refs and tiers.
//!
//! v6.1 (`folio_inc_refs`): the first access sets `PG_referenced`, the second
//! `PG_workingset`, later ones bump a 2-bit counter; `refs = counter + ws` and
//! `tier = order_base_2(refs + 1)`.
//! v6.14 (`lru_gen_inc_refs`): `PG_referenced`, then the counter, and
//! `PG_workingset` once the counter saturates; `refs = referenced ? counter + 1 : 0`
//! and `tier = ws ? 3 : order_base_2(refs)`.

use super::gens::{refs_counter, set_refs_counter, LRU_REFS_WIDTH, MAX_NR_TIERS};
use mm::{Frame, PageFlags};

/// `order_base_2(n)`: ceil(log2(n)), 0 for n <= 1.
pub fn order_base_2(n: u32) -> u32 {
    if n <= 1 {
        0
    } else {
        32 - (n - 1).leading_zeros()
    }
}

const COUNTER_MAX: u8 = (1 << LRU_REFS_WIDTH) - 1;

/// Which kernel's refs rules apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refs {
    /// The v6.14 rework.
    pub rework: bool,
}

impl Refs {
    /// `folio_lru_refs()`.
    pub fn refs(self, f: &Frame) -> u32 {
        let c = refs_counter(f) as u32;
        if self.rework {
            if f.flags.has(PageFlags::REFERENCED) {
                c + 1
            } else {
                0
            }
        } else {
            c + f.flags.has(PageFlags::WORKINGSET) as u32
        }
    }

    /// `lru_tier_from_refs()` for a page's refs and workingset bit.
    pub fn tier_from_refs(self, refs: u32, workingset: bool) -> usize {
        let t = if self.rework {
            if workingset {
                MAX_NR_TIERS as u32 - 1
            } else {
                order_base_2(refs)
            }
        } else {
            order_base_2(refs + 1)
        };
        t.min(MAX_NR_TIERS as u32 - 1) as usize
    }

    /// The tier of a page.
    pub fn tier(self, f: &Frame) -> usize {
        self.tier_from_refs(self.refs(f), f.flags.has(PageFlags::WORKINGSET))
    }

    /// "Fully referenced" (v6.14): counter saturated and `PG_workingset`; such
    /// pages are promoted lazily without counting as protected.
    pub fn fully_referenced(self, f: &Frame) -> bool {
        self.rework && self.refs(f) + f.flags.has(PageFlags::WORKINGSET) as u32 == (1 << LRU_REFS_WIDTH) + 1
    }

    /// v6.1 `sort_folio()`: refs at `BIT(LRU_REFS_WIDTH)` (counter saturated and
    /// `PG_workingset`, as a refault in a fault leaves a page) are protected
    /// whatever the tier threshold.
    pub fn saturated(self, f: &Frame) -> bool {
        !self.rework && self.refs(f) == 1 << LRU_REFS_WIDTH
    }

    /// Marks a refaulting page as the v6.1 `lru_gen_refault()` does: counter
    /// saturated and `PG_workingset`.
    pub fn set_refaulted(self, f: &mut Frame) {
        set_refs_counter(f, COUNTER_MAX);
        f.flags.set(PageFlags::WORKINGSET);
    }

    /// `folio_inc_refs()` / `lru_gen_inc_refs()`: one access through a file descriptor.
    pub fn inc(self, f: &mut Frame) {
        if f.flags.has(PageFlags::UNEVICTABLE) {
            return;
        }
        if !f.flags.has(PageFlags::REFERENCED) {
            f.flags.set(PageFlags::REFERENCED);
            if self.rework {
                set_refs_counter(f, 0);
            }
            return;
        }
        if self.rework {
            let c = refs_counter(f);
            if c == COUNTER_MAX {
                f.flags.set(PageFlags::WORKINGSET);
            } else {
                set_refs_counter(f, c + 1);
            }
        } else if !f.flags.has(PageFlags::WORKINGSET) {
            f.flags.set(PageFlags::WORKINGSET);
        } else {
            let c = refs_counter(f);
            set_refs_counter(f, (c + 1).min(COUNTER_MAX));
        }
    }

    /// v6.14 `lru_gen_set_refs()`, a page found young: the first look only
    /// marks it (`PG_referenced`) and returns false; the second clears its
    /// refs, sets `PG_workingset` and returns true (promote or activate).
    pub fn set_refs(self, f: &mut Frame) -> bool {
        if !f.flags.has(PageFlags::REFERENCED) && !f.flags.has(PageFlags::WORKINGSET) {
            f.flags.set(PageFlags::REFERENCED);
            set_refs_counter(f, 0);
            return false;
        }
        self.clear(f);
        f.flags.set(PageFlags::WORKINGSET);
        true
    }

    /// Clears the access state the aging and eviction reset (`LRU_REFS_MASK`,
    /// `PG_referenced`, and in v6.1 also `PG_workingset`: `LRU_REFS_FLAGS`).
    pub fn clear(self, f: &mut Frame) {
        set_refs_counter(f, 0);
        f.flags.clear(PageFlags::REFERENCED);
        if !self.rework {
            f.flags.clear(PageFlags::WORKINGSET);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tier after 0..=6 accesses through a file descriptor, and the final page.
    fn tiers_by_accesses(r: Refs) -> (Vec<usize>, Frame) {
        let mut t = mm::FrameTable::new(1);
        let p = t.alloc(mm::Owner::file(mm::FileId(0)), 0, 0).unwrap();
        let mut f = t[p];
        let mut tiers = vec![r.tier(&f)];
        for _ in 0..6 {
            r.inc(&mut f);
            tiers.push(r.tier(&f));
        }
        (tiers, f)
    }

    #[test]
    fn v61_tiers_by_access_count() {
        let (tiers, _) = tiers_by_accesses(Refs { rework: false });
        // accesses: 0,1 -> tier 0; 2 (ws) -> refs 1 -> tier 1; 3,4 -> refs 2,3 -> tier 2; 5+ -> refs 4 -> tier 3.
        assert_eq!(tiers, vec![0, 0, 1, 2, 2, 3, 3]);
    }

    #[test]
    fn v614_tiers_by_access_count() {
        let r = Refs { rework: true };
        let (tiers, f) = tiers_by_accesses(r);
        // refs 0,1 -> 0; 2 -> 1; 3,4 -> 2; then PG_workingset -> 3.
        assert_eq!(tiers, vec![0, 0, 1, 2, 2, 3, 3]);
        assert!(r.fully_referenced(&f));
    }

    #[test]
    fn order_base_2_values() {
        assert_eq!([0, 1, 2, 3, 4, 5, 8, 9].map(order_base_2), [0, 0, 1, 2, 2, 3, 3, 4]);
    }
}
