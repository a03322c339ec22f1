//! Reclaim over a memory cgroup tree: one lruvec per group, walked as
//! `shrink_node_memcgs()` walks them (mm/vmscan.c, v6.12).
//!
//! [`TreePolicy`] is itself a [`ReclaimPolicy`]: it holds one policy (one
//! lruvec) per group, routes each page's calls to the lruvec of the page's
//! group, and in `shrink_node` visits the target's subtree in pre-order:
//! groups under their effective `memory.min` are skipped, groups under
//! `memory.low` are skipped unless the low retry runs (then `low` counts in
//! their `memory.events`), and each visited lruvec is shrunk with its
//! protection scaling its scan targets ([`protected_scan`]).
//!
//! Simplifications (listed in docs/model.md):
//! - S-CG4: each lruvec balances anon and file by its own costs and sizes;
//!   the kernel's `prepare_scan_control()` reads the target's (hierarchical)
//!   lruvec once per node pass.
//! - S-CG5: a partial walk of direct reclaim resumes after the group where
//!   the last one stopped, one cursor for every target (the kernel keeps one
//!   per target group and node).
//! - S-CG6: MGLRU groups are walked like the classic LRU's (pre-v6.3 order);
//!   the per-node memcg LRU of v6.3 is not modelled.

use crate::control::{Reclaimer, ScanControl};
use crate::direct::PassTime;
use crate::pageout::PageoutEnv;
use crate::policy::ReclaimPolicy;
use crate::routed::{forward_to_lruvecs, RoutedClock};
use crate::SWAP_CLUSTER_MAX;
use mm::{CgId, Mm, Pfn};

/// `get_scan_count()`'s proportional protection: the share of an lruvec of
/// `size` pages that a reclaim may scan, given its group's effective
/// protection, at least `SWAP_CLUSTER_MAX` when protected at all.
pub fn protected_scan(mm: &Mm, sc: &ScanControl, size: u64) -> u64 {
    if !mm.cgroups.enabled() {
        return size;
    }
    let g = mm.cgroups.current();
    let (min, low) = mm.cgroups.protection(sc.target_memcg, g);
    if min == 0 && low == 0 {
        return size;
    }
    // The low share counts until the retry that ignores memory.low.
    let protection = if !sc.memcg_low_reclaim && low > min { low } else { min };
    let cgroup_size = mm.cgroups.get(g).usage.max(protection);
    let kept = (size as u128 * protection as u128 / (cgroup_size as u128 + 1)) as u64;
    (size - kept).max(SWAP_CLUSTER_MAX)
}

/// One lruvec per memory cgroup, reclaimed by walking the tree.
pub struct TreePolicy {
    /// The lruvec of each group, by [`CgId`].
    lruvecs: Vec<Box<dyn ReclaimPolicy>>,
    /// `memory_recursiveprot` (the cgroup2 mount option).
    recursive_prot: bool,
    /// Where the next partial walk starts (S-CG5).
    cursor: CgId,
}

impl TreePolicy {
    /// A tree policy over `lruvecs`, one per group of `mm.cgroups` in id order.
    pub fn new(lruvecs: Vec<Box<dyn ReclaimPolicy>>, recursive_prot: bool) -> TreePolicy {
        TreePolicy { lruvecs, recursive_prot, cursor: CgId::ROOT }
    }

    /// The lruvec of group `g`.
    pub fn lruvec(&self, g: CgId) -> &dyn ReclaimPolicy {
        self.lruvecs[g.0 as usize].as_ref()
    }

    fn of(&mut self, mm: &Mm, pfn: Pfn) -> &mut dyn ReclaimPolicy {
        let g = mm.group_of(mm.frames[pfn].owner);
        self.lruvecs[g.0 as usize].as_mut()
    }

    /// The groups one walk visits: the target's subtree in pre-order, a
    /// partial (direct reclaim) walk starting after the cursor.
    fn walk_order(&self, mm: &Mm, sc: &ScanControl) -> Vec<CgId> {
        let mut order = mm.cgroups.subtree(sc.target_memcg);
        if sc.reclaimer != Reclaimer::Kswapd {
            if let Some(i) = order.iter().position(|&g| g == self.cursor) {
                order.rotate_left(i + 1);
            }
        }
        order
    }
}

impl ReclaimPolicy for TreePolicy {
    forward_to_lruvecs!();

    fn shrink_node(&mut self, mm: &mut Mm, sc: &mut ScanControl, env: PageoutEnv, clock: &mut dyn PassTime) {
        let (target, entered) = (sc.target_memcg, mm.cgroups.current());
        for g in self.walk_order(mm, sc) {
            // Parents come before children in pre-order, as the calculation needs;
            // a rotated partial walk recomputes from the target for the groups it skipped.
            for a in mm.cgroups.ancestors(g).take_while(|&a| a != target).collect::<Vec<_>>().into_iter().rev() {
                mm.cgroups.calculate_protection(target, a, self.recursive_prot);
            }
            if mm.cgroups.below_min(target, g) {
                continue;
            }
            if mm.cgroups.below_low(target, g) {
                if !sc.memcg_low_reclaim {
                    sc.memcg_low_skipped = true;
                    continue;
                }
                mm.cgroups.get_mut(g).events.low += 1;
            }
            let (min, low) = mm.cgroups.protection(target, g);
            if !sc.memcg_low_reclaim && low > min {
                sc.memcg_low_skipped = true;
            }
            mm.cgroups.switch_to(g, &mm.stat);
            let mut routed = RoutedClock::new(clock, |mm: &Mm, pfn| mm.group_of(mm.frames[pfn].owner) == g);
            self.lruvecs[g.0 as usize].shrink_node(mm, sc, env, &mut routed);
            for pfn in routed.pending {
                self.of(mm, pfn).rotate_reclaimable(mm, pfn);
            }
            self.cursor = g;
            // v6.10+: direct reclaim stops its walk once it has reclaimed enough.
            if sc.reclaimer != Reclaimer::Kswapd && sc.nr_reclaimed >= sc.nr_to_reclaim {
                break;
            }
        }
        mm.cgroups.switch_to(entered, &mm.stat);
    }

    fn age_node(&mut self, mm: &mut Mm, sc: &mut ScanControl) {
        let entered = mm.cgroups.current();
        for (g, l) in self.lruvecs.iter_mut().enumerate() {
            mm.cgroups.switch_to(CgId(g as u16), &mm.stat);
            l.age_node(mm, sc);
        }
        mm.cgroups.switch_to(entered, &mm.stat);
    }

    fn node_lru_sizes(&self, node: u8) -> Option<crate::policy::LruSizes> {
        self.lruvecs.iter().map(|l| l.node_lru_sizes(node)).sum()
    }

    fn check_invariants(&self, mm: &Mm) {
        self.lruvecs.iter().for_each(|l| l.check_invariants(mm));
    }
}
