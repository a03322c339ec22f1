//! The anon/file balance of `get_scan_count()`: what reclaim charges as cost
//! (`lru_note_cost()`, mm/swap.c), how the charges decay, and how they become
//! the SCAN_FRACT weights — for every form the profiles name.
//!
//! The four forms differ in values chosen once from [`Balance`] ([`Rules`]),
//! not in branches spread through the classic policy:
//!
//! | form | charged | IO weight | decay | split |
//! |---|---|---|---|---|
//! | rotation (< v5.8) | `recent_scanned/rotated` per type | - | at 1/4 of the type's pages | `(scanned+1)/(rotated+1)`, rounded up |
//! | refault-cost (v5.8) | refault/swap-in IO, reclaim writes | 1 | at 1/4 of the LRU, when charged | clamped to [1/3, 2/3] |
//! | weighted-cost (v6.2) | IO, writes, unreclaimed scans and active rotations | 32 | as v5.8 | as v5.8 |
//! | rfc-2016 (seed 000 as posted) | restores, swap-ins, rotations by reclaim | 32 | at 1/8 of the LRU, in `get_scan_count` | unclamped |

use super::{ANON, FILE};
use crate::config::Balance;
use crate::SWAP_CLUSTER_MAX;

/// What `shrink_inactive_list()` charges after a batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum InactiveCharge {
    /// Pages it activated count as rotated (`reclaim_stat`, before v5.8).
    RecentRotated,
    /// The pages it wrote out, as IO (v5.8).
    Pageout,
    /// The pages it wrote out as IO, the rest it did not reclaim as rotations (v6.2).
    PageoutAndUnreclaimed,
    /// Pages it activated, as rotations of their own type; writes are free (2016 RFC).
    ActivatedAsRotations,
}

/// One kernel's balance rules, chosen once from [`Balance`].
#[derive(Clone, Copy, Debug)]
struct Rules {
    /// Before v5.8: the split comes from `recent_scanned/recent_rotated`, not costs.
    recent_ratios: bool,
    /// A page of IO weighs this many rotations in `lru_note_cost()`.
    io_weight: u64,
    /// `shrink_active_list()` charges the pages it kept active as rotations.
    charge_active_rotations: bool,
    /// What `shrink_inactive_list()` charges.
    inactive: InactiveCharge,
    /// Costs halve once they pass `lru / decay_div` pages.
    decay_div: u64,
    /// The decay runs in `get_scan_count()` (2016 RFC) rather than when charged.
    decay_in_scan_count: bool,
    /// Each side gets the total added, confining the split to [1/3, 2/3].
    clamp_thirds: bool,
    /// Every anon swap-in is charged as IO when anon has no workingset detection.
    swapin_is_io: bool,
}

impl Rules {
    fn of(balance: Balance) -> Rules {
        let costs = Rules {
            recent_ratios: false,
            io_weight: 1,
            charge_active_rotations: false,
            inactive: InactiveCharge::Pageout,
            decay_div: 4,
            decay_in_scan_count: false,
            clamp_thirds: true,
            swapin_is_io: true,
        };
        match balance {
            Balance::Rotation => Rules { recent_ratios: true, inactive: InactiveCharge::RecentRotated, ..costs },
            Balance::RefaultCost => costs,
            // KERNEL: IO is weighted SWAP_CLUSTER_MAX times a rotation (v6.2, and the 2016 RFC).
            Balance::WeightedCost => Rules {
                io_weight: SWAP_CLUSTER_MAX,
                charge_active_rotations: true,
                inactive: InactiveCharge::PageoutAndUnreclaimed,
                swapin_is_io: false,
                ..costs
            },
            Balance::Rfc2016 => Rules {
                io_weight: SWAP_CLUSTER_MAX,
                charge_active_rotations: true,
                inactive: InactiveCharge::ActivatedAsRotations,
                decay_div: 8,
                decay_in_scan_count: true,
                clamp_thirds: false,
                ..costs
            },
        }
    }
}

/// The anon and file scan weights of `get_scan_count()`, every version's shape:
/// swappiness (anon) and `200 - swappiness` (file), each scaled by
/// `(num + 1) / (den + 1)` of its type.
fn split(swappiness: u64, num: [u64; 2], den: [u64; 2]) -> [u64; 2] {
    [swappiness * (num[ANON] + 1) / (den[ANON] + 1), (200 - swappiness) * (num[FILE] + 1) / (den[FILE] + 1)]
}

/// The lruvec's balance state under one form's rules.
#[derive(Clone, Debug)]
pub(super) struct CostModel {
    rules: Rules,
    /// `lruvec->anon_cost`, `lruvec->file_cost` (v5.8+ and the 2016 RFC).
    cost: [u64; 2],
    /// Before v5.8: `reclaim_stat.recent_scanned/recent_rotated` per type.
    recent_scanned: [u64; 2],
    recent_rotated: [u64; 2],
}

impl CostModel {
    /// No cost yet, under `balance`'s rules.
    pub(super) fn new(balance: Balance) -> CostModel {
        CostModel { rules: Rules::of(balance), cost: [0; 2], recent_scanned: [0; 2], recent_rotated: [0; 2] }
    }

    /// `(anon_cost, file_cost)`.
    pub(super) fn costs(&self) -> (u64, u64) {
        (self.cost[ANON], self.cost[FILE])
    }

    /// Sets the costs (hand-built test scenarios).
    pub(super) fn set_costs(&mut self, anon: u64, file: u64) {
        self.cost = [anon, file];
    }

    /// Pages of type `ty` scanned, of which `rotated` stayed or became active
    /// (`update_page_reclaim_stat()`; only the rotation form keeps it).
    pub(super) fn scanned(&mut self, ty: usize, scanned: u64, rotated: u64) {
        if self.rules.recent_ratios {
            self.recent_scanned[ty] += scanned;
            self.recent_rotated[ty] += rotated;
        }
    }

    /// `lru_note_cost()`: charges `nr_io` pages of IO and `nr_rotated`
    /// rotations to type `ty`; `lru_pages` is the lruvec's size, for the decay.
    pub(super) fn note_cost(&mut self, ty: usize, nr_io: u64, nr_rotated: u64, lru_pages: u64) {
        if self.rules.recent_ratios {
            return;
        }
        self.cost[ty] += nr_io * self.rules.io_weight + nr_rotated;
        if !self.rules.decay_in_scan_count {
            self.decay(lru_pages);
        }
    }

    fn decay(&mut self, lru_pages: u64) {
        if self.cost[ANON] + self.cost[FILE] > lru_pages / self.rules.decay_div {
            self.cost[ANON] /= 2;
            self.cost[FILE] /= 2;
        }
    }

    /// The end of `shrink_active_list()` on type `ty`: `nr_referenced` pages
    /// were referenced, `nr_rotated` of them kept active.
    pub(super) fn after_active(&mut self, ty: usize, nr_referenced: u64, nr_rotated: u64, lru_pages: u64) {
        // Before v5.8 every referenced page counted as rotated.
        self.scanned(ty, 0, nr_referenced);
        if self.rules.charge_active_rotations && nr_rotated > 0 {
            self.note_cost(ty, 0, nr_rotated, lru_pages);
        }
    }

    /// The end of `shrink_inactive_list()` on type `ty`.
    pub(super) fn after_inactive(&mut self, ty: usize, batch: InactiveBatch, lru_pages: u64) {
        match self.rules.inactive {
            InactiveCharge::RecentRotated => {
                self.recent_rotated[ANON] += batch.nr_activate[ANON];
                self.recent_rotated[FILE] += batch.nr_activate[FILE];
            }
            InactiveCharge::Pageout => self.note_cost(ty, batch.nr_pageout, 0, lru_pages),
            InactiveCharge::PageoutAndUnreclaimed => {
                self.note_cost(ty, batch.nr_pageout, batch.nr_scanned - batch.nr_reclaimed, lru_pages)
            }
            InactiveCharge::ActivatedAsRotations => {
                self.note_cost(ANON, 0, batch.nr_activate[ANON], lru_pages);
                self.note_cost(FILE, 0, batch.nr_activate[FILE], lru_pages);
            }
        }
    }

    /// An anon page was swapped in: v5.8 and the 2016 RFC charge it as IO
    /// unless anon workingset detection charges only its restores.
    pub(super) fn swap_in(&mut self, anon_workingset: bool, lru_pages: u64) {
        if self.rules.swapin_is_io && !self.rules.recent_ratios && !anon_workingset {
            self.note_cost(ANON, 1, 0, lru_pages);
        }
    }

    /// The SCAN_FRACT split rounds up (before v5.8) rather than down.
    pub(super) fn rounds_up(&self) -> bool {
        self.rules.recent_ratios
    }

    /// The SCAN_FRACT weights `(fraction, denominator)`. `pass` holds the costs
    /// `prepare_scan_control()` took; `sizes` the anon and file pages listed.
    pub(super) fn fractions(&mut self, swappiness: u64, pass: (u64, u64), sizes: [u64; 2]) -> ([u64; 2], u64) {
        if self.rules.recent_ratios {
            for ty in [ANON, FILE] {
                if self.recent_scanned[ty] > sizes[ty] / 4 {
                    self.recent_scanned[ty] /= 2;
                    self.recent_rotated[ty] /= 2;
                }
            }
            let [ap, fp] = split(swappiness, self.recent_scanned, self.recent_rotated);
            return ([ap, fp], ap + fp + 1);
        }
        if self.rules.clamp_thirds {
            let total = pass.0 + pass.1;
            let (anon_cost, file_cost) = (total + pass.0, total + pass.1);
            let total = anon_cost + file_cost;
            let [ap, fp] = split(swappiness, [total, total], [anon_cost, file_cost]);
            return ([ap, fp], ap + fp);
        }
        // The 2016 RFC: decay here, then each type's weight is the total over its own.
        self.decay(sizes[ANON] + sizes[FILE]);
        let total = self.cost[ANON] + self.cost[FILE];
        let [ap, fp] = split(swappiness, [total, total], self.cost);
        ([ap, fp], ap + fp + 1)
    }
}

/// What one `shrink_inactive_list()` batch did, as the cost model needs it.
#[derive(Clone, Copy, Debug)]
pub(super) struct InactiveBatch {
    pub(super) nr_scanned: u64,
    pub(super) nr_reclaimed: u64,
    pub(super) nr_pageout: u64,
    pub(super) nr_activate: [u64; 2],
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A batch of 32 scanned, 20 reclaimed, 4 written, 3 anon and 5 file activated.
    const BATCH: InactiveBatch = InactiveBatch { nr_scanned: 32, nr_reclaimed: 20, nr_pageout: 4, nr_activate: [3, 5] };
    /// Large enough that nothing decays.
    const LRU: u64 = 1 << 20;

    fn after_batch(balance: Balance) -> CostModel {
        let mut m = CostModel::new(balance);
        m.after_inactive(FILE, BATCH, LRU);
        m
    }

    #[test]
    fn each_form_charges_its_own_share_of_an_inactive_batch() {
        // v5.8: the 4 writes as IO at weight 1.
        assert_eq!(after_batch(Balance::RefaultCost).costs(), (0, 4));
        // v6.2: 4 writes x 32 + 12 unreclaimed scans.
        assert_eq!(after_batch(Balance::WeightedCost).costs(), (0, 140));
        // 2016 RFC: the pages it activated, per type; writes are free.
        assert_eq!(after_batch(Balance::Rfc2016).costs(), (3, 5));
        // Before v5.8: no costs, only rotation ratios.
        assert_eq!(after_batch(Balance::Rotation).costs(), (0, 0));
    }

    #[test]
    fn rotation_form_splits_by_scanned_over_rotated_rounding_up() {
        let mut m = CostModel::new(Balance::Rotation);
        m.scanned(ANON, 100, 0);
        m.scanned(FILE, 100, 0);
        m.after_inactive(FILE, BATCH, LRU);
        // anon 60 * 101 / 4 = 1515, file 140 * 101 / 6 = 2356, denominator + 1.
        assert_eq!(m.fractions(60, (0, 0), [1000, 1000]), ([1515, 2356], 3872));
        assert!(m.rounds_up());
    }

    #[test]
    fn swap_ins_are_io_only_where_the_form_charges_them() {
        for (balance, anon_workingset, cost) in [
            (Balance::RefaultCost, false, 1),
            (Balance::RefaultCost, true, 0),
            (Balance::Rfc2016, false, 32),
            (Balance::WeightedCost, false, 0),
            (Balance::Rotation, false, 0),
        ] {
            let mut m = CostModel::new(balance);
            m.swap_in(anon_workingset, LRU);
            assert_eq!(m.costs().0, cost, "{balance:?} anon_workingset={anon_workingset}");
        }
    }
}
