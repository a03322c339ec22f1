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
//! - S-CG6: MGLRU's global reclaim walks the per-node memcg LRU of v6.3+
//!   ([`crate::memcg_lru`]) with its bin draws as a counter, no offlining,
//!   no soft limit; before v6.3 (and for memcg limit reclaim) the tree order.
//!
//! MGLRU from v6.3 (`mglru_memcg_lru`): root reclaim (kswapd, direct)
//! goes through `lru_gen_shrink_node()`'s `shrink_many()` over the node's
//! memcg LRU instead of this walk; limit reclaim keeps the walk, and a group
//! whose lruvec aged on its eviction path moves to the young generation
//! (`lru_gen_shrink_lruvec()`).

use crate::control::{Reclaimer, ScanControl};
use crate::direct::PassTime;
use crate::memcg_lru::{MemcgLru, MemcgLruForm, Op, Seg};
use crate::pageout::PageoutEnv;
use crate::policy::mglru::should_abort_scan;
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
    let protection = if low_in_force(mm, sc, g) { low } else { min };
    let cgroup_size = mm.cgroups.get(g).usage.max(protection);
    let kept = (size as u128 * protection as u128 / (cgroup_size as u128 + 1)) as u64;
    (size - kept).max(SWAP_CLUSTER_MAX)
}

/// `apply_proportional_protection()` as MGLRU calls it (v6.17+): [`protected_scan`],
/// noting in `sc.memcg_low_skipped` that the group was spared for its
/// `memory.low` (the direct reclaimer's retry ignores it).
pub fn apply_proportional_protection(mm: &Mm, sc: &mut ScanControl, size: u64) -> u64 {
    if mm.cgroups.enabled() && low_in_force(mm, sc, mm.cgroups.current()) {
        sc.memcg_low_skipped = true;
    }
    protected_scan(mm, sc, size)
}

/// True when group `g`'s `memory.low` share protects it from `sc` (above its
/// `memory.min` share, and `sc` is not the retry that ignores memory.low).
fn low_in_force(mm: &Mm, sc: &ScanControl, g: CgId) -> bool {
    let (min, low) = mm.cgroups.protection(sc.target_memcg, g);
    !sc.memcg_low_reclaim && low > min
}

/// One lruvec per memory cgroup, reclaimed by walking the tree.
pub struct TreePolicy {
    /// The lruvec of each group, by [`CgId`].
    lruvecs: Vec<Box<dyn ReclaimPolicy>>,
    /// `memory_recursiveprot` (the cgroup2 mount option).
    recursive_prot: bool,
    /// Where the next partial walk starts (S-CG5).
    cursor: CgId,
    /// The memcg LRU the lruvecs' design has (`Off`: none).
    form: MemcgLruForm,
    /// Each node's memcg LRU (empty when `form` is `Off`).
    memcg_lru: Vec<MemcgLru>,
}

impl TreePolicy {
    /// A tree policy over `lruvecs`, one per group of `mm.cgroups` in id
    /// order, on a machine of `nodes` nodes.
    pub fn new(lruvecs: Vec<Box<dyn ReclaimPolicy>>, recursive_prot: bool, nodes: usize) -> TreePolicy {
        let form = lruvecs[0].memcg_lru();
        assert!(nodes <= 64, "ScanControl::mglru_aged_nodes has a bit per node");
        let memcg_lru =
            if form.on() { (0..nodes).map(|_| MemcgLru::new(form, lruvecs.len())).collect() } else { vec![] };
        TreePolicy { lruvecs, recursive_prot, cursor: CgId::ROOT, form, memcg_lru }
    }

    /// The memcg LRU of node `node`, where the lruvecs' design has one.
    pub fn memcg_lru(&self, node: u8) -> Option<&MemcgLru> {
        self.memcg_lru.get(node as usize)
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
        if self.form.on() && sc.target_memcg == CgId::ROOT && !sc.reclaimer.is_cgroup() {
            return self.lru_gen_shrink_node(mm, sc, env, clock);
        }
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
            // get_scan_count() notes the low share it scales by (apply_proportional_protection()).
            if low_in_force(mm, sc, g) {
                sc.memcg_low_skipped = true;
            }
            let aged = shrink_group(&mut self.lruvecs, g, mm, sc, env, clock);
            // lru_gen_shrink_lruvec(): a group that aged on its eviction path goes young.
            for (n, lru) in self.memcg_lru.iter_mut().enumerate() {
                if aged & 1 << n != 0 {
                    lru.rotate(g, Op::Young);
                }
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
        if self.form.protection_in_age_node() {
            // v6.11 lru_gen_age_node(): every group's protection, top-down from the root.
            for g in mm.cgroups.subtree(CgId::ROOT) {
                mm.cgroups.calculate_protection(CgId::ROOT, g, self.recursive_prot);
            }
        }
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
        crate::policy::noded::check_node_lists(mm, self);
        self.memcg_lru.iter().for_each(MemcgLru::check);
    }
}

impl TreePolicy {
    /// `lru_gen_shrink_node()` for root reclaim, on node `sc.nid` or (unset,
    /// on a machine of several nodes) on each node in turn.
    fn lru_gen_shrink_node(&mut self, mm: &mut Mm, sc: &mut ScanControl, env: PageoutEnv, clock: &mut dyn PassTime) {
        // The lruvec's own rule (Mglru::shrink_node): direct reclaim that may not write or unmap is skipped.
        if sc.reclaimer == Reclaimer::Direct && (!sc.may_unmap || !sc.may_writepage) {
            sc.nr = Default::default();
            return;
        }
        let (nid, entered) = (sc.nid, mm.cgroups.current());
        let nodes = match (nid, self.memcg_lru.len()) {
            (Some(n), _) => n as usize..n as usize + 1,
            (None, count) => 0..count,
        };
        for n in nodes {
            if self.memcg_lru.len() > 1 {
                sc.nid = Some(n as u8);
            }
            let sizes =
                self.node_lru_sizes(n as u8).unwrap_or_else(|| self.lruvecs.iter().map(|l| l.lru_sizes()).sum());
            self.lruvecs[0].set_initial_priority(mm, sc, sizes);
            self.shrink_many(n, mm, sc, env, clock);
            if sc.throttle.is_some() {
                break;
            }
        }
        sc.nid = nid;
        mm.cgroups.switch_to(entered, &mm.stat);
    }

    /// `shrink_many()`: walks node `n`'s memcg LRU, shrinking each group
    /// (`shrink_one`) until [`should_abort_scan`] says enough.
    fn shrink_many(&mut self, n: usize, mm: &mut Mm, sc: &mut ScanControl, env: PageoutEnv, clock: &mut dyn PassTime) {
        let TreePolicy { lruvecs, memcg_lru, form, recursive_prot, .. } = self;
        let (form, recursive) = (*form, *recursive_prot);
        memcg_lru[n].shrink_many(|g, seg| {
            let op = shrink_one(lruvecs, g, seg, form, recursive, mm, sc, env, clock);
            (op, should_abort_scan(mm, sc, form, n as u8))
        });
    }
}

/// Shrinks group `g`'s lruvec, its counters going to `g` (S-CG3); answers
/// the nodes whose MGLRU lruvec aged on its eviction path (a bit per node).
fn shrink_group(
    lruvecs: &mut [Box<dyn ReclaimPolicy>],
    g: CgId,
    mm: &mut Mm,
    sc: &mut ScanControl,
    env: PageoutEnv,
    clock: &mut dyn PassTime,
) -> u64 {
    sc.mglru_aged_nodes = 0;
    mm.cgroups.switch_to(g, &mm.stat);
    let mut routed = RoutedClock::new(clock, |mm: &Mm, pfn| mm.group_of(mm.frames[pfn].owner) == g);
    lruvecs[g.0 as usize].shrink_node(mm, sc, env, &mut routed);
    for pfn in routed.pending {
        let owner = mm.group_of(mm.frames[pfn].owner);
        lruvecs[owner.0 as usize].rotate_reclaimable(mm, pfn);
    }
    sc.mglru_aged_nodes
}

/// `shrink_one()` (v6.3, v6.7, v6.11): shrinks group `g` unless its
/// protection or size turns it away; answers the move it asks for.
#[allow(clippy::too_many_arguments)]
fn shrink_one(
    lruvecs: &mut [Box<dyn ReclaimPolicy>],
    g: CgId,
    seg: Seg,
    form: MemcgLruForm,
    recursive: bool,
    mm: &mut Mm,
    sc: &mut ScanControl,
    env: PageoutEnv,
    clock: &mut dyn PassTime,
) -> Option<Op> {
    // Too small, below low: the first visit moves the group to a tail, the next goes on.
    let retry = if seg != Seg::Tail { Op::Tail } else { Op::Young };
    if form.sizable_first() && !lruvecs[g.0 as usize].lruvec_is_sizable(mm, sc) {
        return Some(retry);
    }
    if !form.protection_in_age_node() {
        // Before v6.11: this group's alone, against its parent's last calculation.
        mm.cgroups.calculate_protection(CgId::ROOT, g, recursive);
    }
    if mm.cgroups.below_min(CgId::ROOT, g) {
        return Some(Op::Young);
    }
    if mm.cgroups.below_low(CgId::ROOT, g) {
        if seg != Seg::Tail {
            return Some(Op::Tail);
        }
        mm.cgroups.get_mut(g).events.low += 1;
    }
    let aged = shrink_group(lruvecs, g, mm, sc, env, clock) != 0;
    if form.sizable_first() {
        return aged.then_some(Op::Young);
    }
    // v6.7+: groups are never offline here, so an aged one goes young.
    if aged {
        Some(Op::Young)
    } else if lruvecs[g.0 as usize].lruvec_is_sizable(mm, sc) {
        None
    } else {
        Some(retry)
    }
}
