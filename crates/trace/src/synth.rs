//! Synthetic traces of any length, generated on the fly (for streaming
//! measurements): a hot set and a cold range of one address space.

use crate::format::{Decl, Event, Header, Record};

/// A deterministic synthetic reference stream.
#[derive(Clone, Debug)]
pub struct Synth {
    /// Records to generate.
    pub records: u64,
    /// Pages of the address space.
    pub pages: u32,
    /// The first `hot_pages` pages get `hot_percent`% of the references.
    pub hot_pages: u32,
    /// Share of references to the hot set.
    pub hot_percent: u32,
    /// Seed of the generator.
    pub seed: u64,
}

impl Synth {
    /// The header of the generated trace: one address space.
    pub fn header(&self) -> Header {
        Header::new(vec![Decl { name: "synth".into(), pages: self.pages }], Vec::new())
    }

    /// The records, generated lazily (splitmix64; every 8th reference is a store).
    pub fn iter(&self) -> impl Iterator<Item = Record> + '_ {
        let mut state = self.seed;
        (0..self.records).map(move |i| {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            let hot = (z % 100) < self.hot_percent as u64 && self.hot_pages > 0;
            let page = if hot { (z >> 8) % self.hot_pages as u64 } else { (z >> 8) % self.pages as u64 } as u32;
            Record::at0(Event::Access { space: 0, page, write: i % 8 == 7 })
        })
    }
}
