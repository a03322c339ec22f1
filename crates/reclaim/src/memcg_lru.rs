//! MGLRU's per-node memcg LRU (v6.3+, mm/vmscan.c "memcg LRU" section,
//! include/linux/mmzone.h `struct lru_gen_memcg`): the order in which global
//! reclaim visits the groups' lruvecs of one node.
//!
//! ```text
//!   seq % NR_GENS = old gen        (seq + 1) % NR_GENS = young gen
//!   bin 0: [head .. default .. tail]   bin 0: [...]
//!   ...                                 ...
//!   bin 7: [...]                        bin 7: [...]
//! ```
//!
//! Each group's lruvec on the node sits in one list: a generation (old or
//! young) and one of 8 bins. Global reclaim (`shrink_many`) starts at a bin of
//! the old generation, walks its list from the head, then the next bins in
//! turn, and stops early once it has reclaimed enough. Each visit answers with
//! a move (`lru_gen_rotate_memcg`), applied once the walk has stepped past
//! the group: [`Op::Tail`] to the tail of a bin of the same generation (a
//! second chance later in this or the next walk), [`Op::Young`] to the tail of
//! a bin of the young generation (done for this round), [`Op::Head`]/[`Op::Old`]
//! to the head. When the old generation has no group left, `seq` advances: the
//! young generation becomes the old one. A group enters at the tail of a bin of
//! the old generation (`lru_gen_online_memcg`).
//!
//! Kernel versions (knob `mglru_memcg_lru`, [`MemcgLruForm`]):
//! - v6.3 (e4dde56cd208): `MEMCG_NR_GENS` 2; each bin's walk re-reads `seq`,
//!   so after the old generation empties the rest of the bins are walked in
//!   the new old generation; `shrink_one` calculates the group's protection
//!   itself and turns away a group too small to scan before anything else.
//! - v6.7 ("mm/mglru: respect min_ttl_ms with memcgs", "try to stop at high
//!   watermarks", "reclaim offlined memcgs harder"): `MEMCG_NR_GENS` 3 and one
//!   generation per call; the early stop also stops kswapd once every eligible
//!   zone is above its high watermark plus `MIN_LRU_BATCH`; the size test
//!   comes after the shrink (not aged and still sizable: stay put).
//! - v6.11 ("mm/mglru: fix ineffective protection calculation", 30d77b7eef01):
//!   protection is calculated top-down by kswapd's `lru_gen_age_node`, not
//!   in `shrink_one` (direct reclaim reads what kswapd last calculated).
//!
//! Simplifications (docs/simplifications.md S-CG6):
//! - the kernel draws each bin with `get_random_u32_below(MEMCG_NR_BINS)`;
//!   here each node's draws are a counter cycling through the bins (0, 1, ...,
//!   7, 0, ...), the same in every run;
//! - groups are never offlined or released (no [`Op::Old`]) and have no
//!   soft limit (no [`Op::Head`]): both moves are kept for the list's rules;
//! - one reclaimer at a time: the restart of a walk that raced with a
//!   rotation cannot happen.

use mm::CgId;

/// `MEMCG_NR_BINS`: bins per generation (include/linux/mmzone.h).
pub const MEMCG_NR_BINS: usize = 8;
/// The largest `MEMCG_NR_GENS` (3 from v6.7; 2 in v6.3).
const MAX_MEMCG_NR_GENS: usize = 3;

/// The memcg LRU a kernel version has for MGLRU's global reclaim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemcgLruForm {
    /// Before v6.3: groups are walked in tree order like the classic LRU's.
    Off,
    /// v6.3: the first memcg LRU.
    V6_3,
    /// v6.7: one generation per call, watermark stop, size test after the shrink.
    V6_7,
    /// v6.11: protection calculated by kswapd's aging pass.
    V6_11,
}

impl MemcgLruForm {
    /// Every form, oldest first.
    pub const ALL: [MemcgLruForm; 4] = [MemcgLruForm::Off, MemcgLruForm::V6_3, MemcgLruForm::V6_7, MemcgLruForm::V6_11];

    /// The knob's value for this form.
    pub fn name(self) -> &'static str {
        match self {
            MemcgLruForm::Off => "off",
            MemcgLruForm::V6_3 => "v6.3",
            MemcgLruForm::V6_7 => "v6.7",
            MemcgLruForm::V6_11 => "v6.11",
        }
    }

    /// True where global reclaim walks the memcg LRU.
    pub fn on(self) -> bool {
        self != MemcgLruForm::Off
    }

    /// `MEMCG_NR_GENS`.
    fn nr_gens(self) -> usize {
        if self == MemcgLruForm::V6_3 {
            2
        } else {
            3
        }
    }

    /// v6.3: each bin's walk re-reads `seq` (after v6.7, one generation per call).
    fn gen_per_bin(self) -> bool {
        self == MemcgLruForm::V6_3
    }

    /// v6.3: `shrink_one` turns away a group too small to scan first; later
    /// forms test the size after the shrink.
    pub fn sizable_first(self) -> bool {
        self == MemcgLruForm::V6_3
    }

    /// v6.7+: `should_abort_scan` also stops kswapd at the zones' high watermarks.
    pub fn watermark_stop(self) -> bool {
        matches!(self, MemcgLruForm::V6_7 | MemcgLruForm::V6_11)
    }

    /// v6.11+: kswapd's aging pass calculates every group's protection; before,
    /// `shrink_one` calculates the visited group's.
    pub fn protection_in_age_node(self) -> bool {
        self == MemcgLruForm::V6_11
    }
}

/// A move of a group in the memcg LRU (`MEMCG_LRU_HEAD` .. `MEMCG_LRU_YOUNG`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// To the head of a bin of its generation; its segment becomes the head (soft limit exceeded).
    Head,
    /// To the tail of a bin of its generation; its segment becomes the tail (a second chance).
    Tail,
    /// To the head of a bin of the old generation, default segment (offlined).
    Old,
    /// To the tail of a bin of the young generation, default segment (done this round).
    Young,
}

/// Which part of its list a group was last moved to (`lrugen->seg`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Seg {
    /// Neither: entered, or moved between generations.
    #[default]
    Default,
    /// Moved to a head ([`Op::Head`]).
    Head,
    /// Moved to a tail ([`Op::Tail`]).
    Tail,
}

/// Where a group's lruvec sits.
#[derive(Clone, Copy, Debug)]
struct Slot {
    gen: usize,
    bin: usize,
    seg: Seg,
}

/// One node's memcg LRU (`pgdat->memcg_lru`).
#[derive(Clone, Debug)]
pub struct MemcgLru {
    form: MemcgLruForm,
    /// The generation counter: `seq % NR_GENS` is the old generation.
    seq: u64,
    /// Groups in each generation.
    nr_memcgs: [u64; MAX_MEMCG_NR_GENS],
    /// The lists, head first, by generation and bin.
    fifo: [[Vec<CgId>; MEMCG_NR_BINS]; MAX_MEMCG_NR_GENS],
    /// Each group's place, by [`CgId`].
    slots: Vec<Slot>,
    /// Bin draws so far (S-CG6: the draws cycle through the bins).
    draws: u64,
}

impl MemcgLru {
    /// The memcg LRU of one node under `form`, with groups `0..groups` entered
    /// in id order (`lru_gen_online_memcg` as each group is created).
    pub fn new(form: MemcgLruForm, groups: usize) -> MemcgLru {
        assert!(form.on(), "no memcg LRU before v6.3");
        let mut lru = MemcgLru {
            form,
            seq: 0,
            nr_memcgs: [0; MAX_MEMCG_NR_GENS],
            fifo: Default::default(),
            slots: Vec::with_capacity(groups),
            draws: 0,
        };
        for g in 0..groups {
            let (gen, bin) = (lru.gen(lru.seq), lru.draw_bin());
            lru.fifo[gen][bin].push(CgId(g as u16));
            lru.nr_memcgs[gen] += 1;
            lru.slots.push(Slot { gen, bin, seg: Seg::Default });
        }
        lru
    }

    /// `get_memcg_gen()`.
    fn gen(&self, seq: u64) -> usize {
        (seq % self.form.nr_gens() as u64) as usize
    }

    /// `get_random_u32_below(MEMCG_NR_BINS)`, replaced by a cycling counter (S-CG6).
    fn draw_bin(&mut self) -> usize {
        let bin = (self.draws % MEMCG_NR_BINS as u64) as usize;
        self.draws += 1;
        bin
    }

    /// The segment group `g` was last moved to.
    pub fn seg(&self, g: CgId) -> Seg {
        self.slots[g.0 as usize].seg
    }

    /// The groups of the old (`young = false`) or young generation, bin by
    /// bin from bin 0, each list head first.
    pub fn generation(&self, young: bool) -> Vec<CgId> {
        let gen = self.gen(self.seq + young as u64);
        self.fifo[gen].iter().flatten().copied().collect()
    }

    /// `lru_gen_rotate_memcg()`: moves group `g` by `op`; the old generation
    /// advances when its last group leaves it.
    pub fn rotate(&mut self, g: CgId, op: Op) {
        let bin = self.draw_bin();
        let Slot { gen: old, bin: old_bin, .. } = self.slots[g.0 as usize];
        let (new, seg) = match op {
            Op::Head => (old, Seg::Head),
            Op::Tail => (old, Seg::Tail),
            Op::Old => (self.gen(self.seq), Seg::Default),
            Op::Young => (self.gen(self.seq + 1), Seg::Default),
        };
        let list = &mut self.fifo[old][old_bin];
        let at = list.iter().position(|&x| x == g).expect("a group is always on its list");
        list.remove(at);
        match op {
            Op::Head | Op::Old => self.fifo[new][bin].insert(0, g),
            Op::Tail | Op::Young => self.fifo[new][bin].push(g),
        }
        self.nr_memcgs[old] -= 1;
        self.nr_memcgs[new] += 1;
        self.slots[g.0 as usize] = Slot { gen: new, bin, seg };
        if self.nr_memcgs[old] == 0 && old == self.gen(self.seq) {
            self.seq += 1;
        }
    }

    /// `shrink_many()`'s walk: `visit(group, its segment)` shrinks one group
    /// and answers the move it asks for and whether reclaim has done enough.
    /// Each move is made once the walk has stepped to the next group of the
    /// list, so a group moved to the tail of the list being walked is met
    /// again; a stop ends the walk at once.
    pub fn shrink_many(&mut self, mut visit: impl FnMut(CgId, Seg) -> (Option<Op>, bool)) {
        let mut gen = self.gen(self.seq);
        let first_bin = self.draw_bin();
        let mut bin = first_bin;
        // Bounded: every bin once, and a group is met again in a list only
        // after a move into it (Tail, then Young or none; with v6.3's two
        // generations a Young move can land in the walked list once the old
        // generation emptied). The cap turns a loop past that into a bug report.
        let cap = 4 * MEMCG_NR_BINS * self.slots.len();
        let mut visits = 0;
        loop {
            if self.form.gen_per_bin() {
                gen = self.gen(self.seq);
            }
            let mut pending: Option<(CgId, Op)> = None;
            let mut next = 0;
            let mut stopped = false;
            while let Some(&g) = self.fifo[gen][bin].get(next) {
                if let Some((prev, op)) = pending.take() {
                    self.rotate(prev, op);
                }
                visits += 1;
                assert!(visits <= cap, "memcg LRU walk past {cap} visits (seq {}, bin {bin})", self.seq);
                let (op, stop) = visit(g, self.seg(g));
                pending = op.map(|op| (g, op));
                if stop {
                    stopped = true;
                    break;
                }
                next = 1 + self.fifo[gen][bin].iter().position(|&x| x == g).expect("a visit leaves its group in place");
            }
            if let Some((prev, op)) = pending {
                self.rotate(prev, op);
            }
            if stopped {
                return;
            }
            bin = (bin + 1) % MEMCG_NR_BINS;
            if bin == first_bin {
                return;
            }
        }
    }

    /// The lists hold every group once and the counts match them.
    pub fn check(&self) {
        let mut seen = vec![0u32; self.slots.len()];
        for (gen, bins) in self.fifo.iter().enumerate() {
            let listed: usize = bins.iter().map(Vec::len).sum();
            assert_eq!(listed as u64, self.nr_memcgs[gen], "memcg LRU generation {gen}");
            for (bin, list) in bins.iter().enumerate() {
                for &g in list {
                    let s = self.slots[g.0 as usize];
                    assert_eq!((s.gen, s.bin), (gen, bin), "group {} listed where its slot does not say", g.0);
                    seen[g.0 as usize] += 1;
                }
            }
        }
        assert!(seen.iter().all(|&n| n == 1), "every group on exactly one list: {seen:?}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(v: &[u16]) -> Vec<CgId> {
        v.iter().map(|&g| CgId(g)).collect()
    }

    /// Three groups enter bins 0, 1, 2 of the old generation. A walk starts
    /// at bin 3 (the 4th draw), finds bins 3..7 empty, visits 0 (asks Tail:
    /// moved to bin 4, already passed), 1 (asks Young), 2 (stops).
    #[test]
    fn a_walk_visits_bins_from_the_drawn_one_and_moves_groups_after_passing_them() {
        let mut lru = MemcgLru::new(MemcgLruForm::V6_7, 3);
        assert_eq!(lru.generation(false), ids(&[0, 1, 2]));
        let mut visited = Vec::new();
        lru.shrink_many(|g, _| {
            visited.push(g.0);
            match g.0 {
                0 => (Some(Op::Tail), false),
                1 => (Some(Op::Young), false),
                _ => (None, true),
            }
        });
        assert_eq!(visited, [0, 1, 2]);
        // Draws: 0, 1, 2 (entries), 3 (first bin), 4 (group 0), 5 (group 1).
        assert_eq!(lru.generation(false), ids(&[2, 0]));
        assert_eq!(lru.generation(true), ids(&[1]));
        assert_eq!(lru.seg(CgId(0)), Seg::Tail);
        lru.check();
    }

    /// A group moved to the tail of the list being walked is met again in
    /// the same walk; the old generation advances once it is empty.
    #[test]
    fn a_tail_move_into_the_walked_list_is_met_again_and_an_empty_old_generation_advances() {
        // Eight groups fill bins 0..7; group 8 enters bin 0 behind group 0.
        let mut lru = MemcgLru::new(MemcgLruForm::V6_7, 9);
        // The walk starts at bin 1 (draw 9). Every group asks Young; group 1
        // asks Tail the first time: its move draws bin 2 (draw 10), the next
        // list, where it is met again after group 2.
        let mut visited = Vec::new();
        lru.shrink_many(|g, seg| {
            visited.push(g.0);
            let op = if g.0 == 1 && seg != Seg::Tail { Op::Tail } else { Op::Young };
            (Some(op), false)
        });
        assert_eq!(visited, [1, 2, 1, 3, 4, 5, 6, 7, 0, 8]);
        assert!(lru.generation(false).len() == 9, "all young, then the young became the old");
        lru.check();
    }

    /// v6.3 re-reads the generation at each bin: once the old generation has
    /// emptied, the rest of the bins are walked in the new old generation.
    #[test]
    fn v6_3_walks_the_rest_of_the_bins_in_the_new_old_generation() {
        for (form, expect) in [(MemcgLruForm::V6_3, vec![0, 1, 1]), (MemcgLruForm::V6_7, vec![0, 1])] {
            // Groups 0 and 1 enter bins 0 and 1; with 8 draws made the walk
            // starts at bin 0 and the moves draw bins 1, 2, 3.
            let mut lru = MemcgLru::new(form, 2);
            lru.draws = 8;
            let mut visited = Vec::new();
            lru.shrink_many(|g, _| {
                visited.push(g.0);
                (Some(Op::Young), false)
            });
            // Group 0 goes young into bin 1, already passed; group 1 goes young
            // into bin 2 and empties the old generation. v6.3 walks bin 2 in
            // the new old generation (2 generations: the young one) and meets
            // group 1 again; v6.7 keeps to the generation it began with.
            assert_eq!(visited, expect, "{form:?}");
            lru.check();
        }
    }
}
