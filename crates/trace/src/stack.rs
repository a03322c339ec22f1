//! LRU stack distances in one pass, and the LRU miss-ratio curve from them.
//!
//! The stack distance of a reference is 1 + the number of distinct pages
//! referenced since the previous reference to the same page (infinite on a
//! first touch). An LRU cache of `c` pages hits exactly the references with
//! distance <= c (Mattson et al., 1970), so one histogram of distances gives
//! the misses of every cache size at once.
//!
//! Implementation: every page's latest reference holds a marker in a
//! time-ordered slot array; a Fenwick tree counts markers, so the distance is
//! the number of markers after the page's slot, O(log n). When the slot array
//! fills, live markers are renumbered into the front, so memory stays
//! O(distinct pages), independent of the trace length.

/// Computes stack distances of a reference stream.
pub struct StackDistances {
    /// Slot + 1 of each page's latest reference (0: never referenced).
    slot_of: Vec<u32>,
    /// Page in each slot (valid where the Fenwick tree has a marker).
    page_at: Vec<u32>,
    /// Fenwick tree over slots: 1 where a live marker is.
    tree: Vec<u32>,
    next_slot: u32,
    live: u32,
    /// `hist[d]`: references with stack distance `d` (index 0 unused).
    hist: Vec<u64>,
    cold: u64,
}

const MIN_SLOTS: u32 = 1024;

impl StackDistances {
    /// A tracker for page ids below `pages`.
    pub fn new(pages: u32) -> StackDistances {
        StackDistances {
            slot_of: vec![0; pages as usize],
            page_at: vec![0; MIN_SLOTS as usize],
            tree: vec![0; MIN_SLOTS as usize + 1],
            next_slot: 0,
            live: 0,
            hist: vec![0; 2],
            cold: 0,
        }
    }

    fn add(&mut self, slot: u32, delta: i32) {
        let mut i = slot as usize + 1;
        while i < self.tree.len() {
            self.tree[i] = self.tree[i].wrapping_add_signed(delta);
            i += i & i.wrapping_neg();
        }
    }

    /// Markers in slots `0..=slot`.
    fn prefix(&self, slot: u32) -> u32 {
        let mut i = slot as usize + 1;
        let mut s = 0;
        while i > 0 {
            s += self.tree[i];
            i &= i - 1;
        }
        s
    }

    /// Records a reference to `page`; returns its stack distance (`None` on a first touch).
    #[inline]
    pub fn reference(&mut self, page: u32) -> Option<u32> {
        let prev = self.slot_of[page as usize];
        let d = if prev == 0 {
            self.cold += 1;
            self.live += 1;
            None
        } else {
            let s = prev - 1;
            let d = self.live - self.prefix(s) + 1;
            self.add(s, -1);
            self.slot_of[page as usize] = 0;
            if self.hist.len() <= d as usize {
                self.hist.resize((d as usize + 1).next_power_of_two(), 0);
            }
            self.hist[d as usize] += 1;
            Some(d)
        };
        if self.next_slot as usize == self.page_at.len() {
            self.compact();
        }
        let s = self.next_slot;
        self.next_slot += 1;
        self.page_at[s as usize] = page;
        self.slot_of[page as usize] = s + 1;
        self.add(s, 1);
        d
    }

    /// Renumbers the live markers into slots `0..live` and rebuilds the tree
    /// with room for as many again.
    fn compact(&mut self) {
        let cap = (self.live.max(MIN_SLOTS / 2) as usize) * 2;
        let mut pages = Vec::with_capacity(self.live as usize);
        for s in 0..self.next_slot {
            let p = self.page_at[s as usize];
            if self.slot_of[p as usize] == s + 1 {
                pages.push(p);
            }
        }
        self.page_at = vec![0; cap];
        self.tree = vec![0; cap + 1];
        for (s, &p) in pages.iter().enumerate() {
            self.page_at[s] = p;
            self.slot_of[p as usize] = s as u32 + 1;
            self.tree[s + 1] = 1;
        }
        // Linear-time Fenwick build: push each node's sum to its parent.
        for i in 1..=cap {
            let j = i + (i & i.wrapping_neg());
            if j <= cap {
                self.tree[j] += self.tree[i];
            }
        }
        self.next_slot = pages.len() as u32;
    }

    /// References with a finite stack distance, by distance (index 0 is 0).
    pub fn histogram(&self) -> &[u64] {
        &self.hist
    }

    /// First touches (infinite distance): the number of distinct pages referenced.
    pub fn cold(&self) -> u64 {
        self.cold
    }

    /// The LRU miss-ratio curve: misses of an LRU cache of each size in `sizes`.
    pub fn lru_misses(&self, sizes: &[u64]) -> Vec<u64> {
        // suffix[d] = references with distance >= d.
        let mut suffix = vec![0u64; self.hist.len() + 1];
        for d in (0..self.hist.len()).rev() {
            suffix[d] = suffix[d + 1] + self.hist[d];
        }
        sizes.iter().map(|&c| self.cold + suffix.get(c as usize + 1).copied().unwrap_or(0)).collect()
    }
}
