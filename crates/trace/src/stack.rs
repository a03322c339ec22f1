//! LRU stack distances in one pass, and the LRU miss-ratio curve from them.
//!
//! The stack distance of a reference is 1 + the number of distinct pages
//! referenced since the previous reference to the same page (infinite on a
//! first touch). An LRU cache of `c` pages hits exactly the references with
//! distance <= c (Mattson et al., 1970), so one histogram of distances gives
//! the misses of every cache size at once.
//!
//! Implementation: every page's latest reference holds a marker in a
//! time-ordered slot array, one bit per slot; the distance is the number of
//! markers after the page's slot. The bits of a group of 512 slots (one
//! 64-byte line) are counted with `popcount`, and a Fenwick tree over the
//! groups' counts gives the markers of all the groups before, O(log n): per
//! million slots 125 KB of bits and an 8 KB tree, where a tree over the slots
//! themselves (4 MB) missed the caches at each step. When the slot array fills,
//! live markers are renumbered into the front, so memory stays
//! O(distinct pages), independent of the trace length.

/// Computes stack distances of a reference stream.
pub struct StackDistances {
    /// Slot + 1 of each page's latest reference (0: never referenced).
    slot_of: Vec<u32>,
    /// Page in each slot (valid where a marker is).
    page_at: Vec<u32>,
    /// One bit per slot: 1 where a live marker is.
    bits: Vec<u64>,
    /// Fenwick tree over groups of [`GROUP_WORDS`] words of `bits`: markers per group.
    tree: Vec<u32>,
    next_slot: u32,
    live: u32,
    /// `hist[d]`: references with stack distance `d` (index 0 unused).
    hist: Vec<u64>,
    cold: u64,
}

const MIN_SLOTS: u32 = 1024;
/// Words of marker bits per group counted by the tree (512 slots, 64 bytes).
const GROUP_WORDS: usize = 8;
/// Slots per group.
const GROUP_SLOTS: usize = GROUP_WORDS * 64;

impl StackDistances {
    /// A tracker for page ids below `pages`.
    pub fn new(pages: u32) -> StackDistances {
        let mut s = StackDistances {
            slot_of: vec![0; pages as usize],
            page_at: Vec::new(),
            bits: Vec::new(),
            tree: Vec::new(),
            next_slot: 0,
            live: 0,
            hist: vec![0; 2],
            cold: 0,
        };
        s.resize_slots(MIN_SLOTS as usize);
        s
    }

    /// Empty slot arrays of `cap` slots (a whole number of groups).
    fn resize_slots(&mut self, cap: usize) {
        let cap = cap.div_ceil(GROUP_SLOTS) * GROUP_SLOTS;
        self.page_at = vec![0; cap];
        self.bits = vec![0; cap / 64];
        self.tree = vec![0; cap / GROUP_SLOTS + 1];
    }

    /// Adds `delta` to group `g`'s count.
    fn add(&mut self, g: usize, delta: i32) {
        let mut i = g + 1;
        while i < self.tree.len() {
            self.tree[i] = self.tree[i].wrapping_add_signed(delta);
            i += i & i.wrapping_neg();
        }
    }

    /// Markers in slots `0..=slot`.
    fn prefix(&self, slot: u32) -> u32 {
        let (w, b) = (slot as usize / 64, slot % 64);
        let first = w / GROUP_WORDS * GROUP_WORDS;
        let mut s = (self.bits[w] & (u64::MAX >> (63 - b))).count_ones();
        s += self.bits[first..w].iter().map(|x| x.count_ones()).sum::<u32>();
        let mut i = w / GROUP_WORDS;
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
            self.bits[s as usize / 64] &= !(1 << (s % 64));
            self.add(s as usize / GROUP_SLOTS, -1);
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
        self.bits[s as usize / 64] |= 1 << (s % 64);
        self.add(s as usize / GROUP_SLOTS, 1);
        d
    }

    /// Renumbers the live markers into slots `0..live` and rebuilds the
    /// arrays with room for as many again.
    fn compact(&mut self) {
        let mut pages = Vec::with_capacity(self.live as usize);
        for s in 0..self.next_slot {
            let p = self.page_at[s as usize];
            if self.slot_of[p as usize] == s + 1 {
                pages.push(p);
            }
        }
        self.resize_slots(self.live.max(MIN_SLOTS / 2) as usize * 2);
        for (s, &p) in pages.iter().enumerate() {
            self.page_at[s] = p;
            self.slot_of[p as usize] = s as u32 + 1;
            self.bits[s / 64] |= 1 << (s % 64);
        }
        // Each group's count, then the linear-time Fenwick build: each node's sum to its parent.
        let groups = self.tree.len() - 1;
        for g in 0..groups {
            let words = &self.bits[g * GROUP_WORDS..(g + 1) * GROUP_WORDS];
            self.tree[g + 1] = words.iter().map(|x| x.count_ones()).sum();
        }
        for i in 1..=groups {
            let j = i + (i & i.wrapping_neg());
            if j <= groups {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Distances as the list of pages, most recent first, says them, on a
    /// stream long enough to compact several times over many groups.
    #[test]
    fn distances_are_the_positions_in_the_lru_list() {
        let pages = 3000u32;
        let mut s = StackDistances::new(pages);
        let mut list: Vec<u32> = Vec::new();
        let mut x = 12345u64;
        for i in 0..60_000u32 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            // A hot tenth, a cold rest, and a sequential sweep now and then.
            let r = (x >> 33) as u32;
            let page = match i % 1000 {
                0..=99 => i % pages,
                _ if r.is_multiple_of(4) => r % pages,
                _ => r % (pages / 10),
            };
            let want = list.iter().position(|&q| q == page).map(|at| at as u32 + 1);
            if let Some(at) = want {
                list.remove(at as usize - 1);
            }
            list.insert(0, page);
            assert_eq!(s.reference(page), want, "reference {i} to page {page}");
        }
        assert_eq!(s.cold(), list.len() as u64);
    }
}
