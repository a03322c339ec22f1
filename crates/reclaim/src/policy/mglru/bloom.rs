//! The aging's Bloom filters: which PTE tables were dense enough to walk again.
//!
//! KERNEL: two filters (double-buffered by `seq % 2`) of 2^15 bits with two
//! hash functions. A filter for `seq` is cleared when the walk for `seq - 1`
//! starts; a table (one PMD entry) with enough young PTEs is added to the next
//! seq's filter, and look-around adds dense tables to the current one. Testing
//! a filter that was never set up answers yes (the first walk visits everything).
//! Keys are (region, PTE-table index) instead of PMD entry addresses.

const SHIFT: u32 = 15;
const WORDS: usize = (1 << SHIFT) / 64;

/// A PTE table: a region and the index of its 512-page chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableKey {
    /// Region id.
    pub region: u32,
    /// Chunk index within the region.
    pub chunk: u32,
}

/// Two double-buffered filters.
#[derive(Clone, Debug, Default)]
pub struct Bloom {
    filters: [Option<Box<[u64; WORDS]>>; 2],
}

/// The two bit positions of a key (`get_item_key`: one 30-bit hash split in two).
fn bits(k: TableKey) -> [usize; 2] {
    // SplitMix64 finaliser over the packed key: deterministic and well mixed.
    let mut x = ((k.region as u64) << 32 | k.chunk as u64).wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^= x >> 31;
    let mask = (1u64 << SHIFT) - 1;
    [(x & mask) as usize, ((x >> SHIFT) & mask) as usize]
}

impl Bloom {
    /// `reset_bloom_filter()`: set up an empty filter for `seq`.
    pub fn reset(&mut self, seq: u64) {
        let f = &mut self.filters[(seq % 2) as usize];
        match f {
            Some(words) => words.fill(0),
            None => *f = Some(Box::new([0; WORDS])),
        }
    }

    /// `test_bloom_filter()`: true if the key may be in `seq`'s filter (or there is none).
    pub fn test(&self, seq: u64, k: TableKey) -> bool {
        match &self.filters[(seq % 2) as usize] {
            None => true,
            Some(w) => bits(k).iter().all(|&b| w[b / 64] & (1 << (b % 64)) != 0),
        }
    }

    /// `update_bloom_filter()`: add the key to `seq`'s filter, if it is set up.
    pub fn update(&mut self, seq: u64, k: TableKey) {
        if let Some(w) = &mut self.filters[(seq % 2) as usize] {
            for b in bits(k) {
                w[b / 64] |= 1 << (b % 64);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_filter_passes_everything_then_only_members() {
        let mut b = Bloom::default();
        let k = TableKey { region: 3, chunk: 7 };
        assert!(b.test(4, k));
        b.reset(4);
        assert!(!b.test(4, k));
        b.update(4, k);
        assert!(b.test(4, k));
        // The other buffer is untouched.
        assert!(b.test(5, TableKey { region: 1, chunk: 1 }));
        b.reset(6);
        assert!(!b.test(4, k), "seq 6 shares seq 4's buffer and was cleared");
    }
}
