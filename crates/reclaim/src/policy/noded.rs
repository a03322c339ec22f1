//! One lruvec per NUMA node, as every kernel since v4.8 keeps them
//! (`pgdat->__lruvec`; with memory groups, one per group and node).
//!
//! [`NodedPolicy`] holds one policy per node of the machine and hands each
//! page's calls to the lruvec of the node its frame is on. A reclaim of one
//! node (`sc.nid`: kswapd, node reclaim, direct reclaim bound to a node)
//! shrinks and ages that node's lruvec only; a reclaim of every node (direct
//! and memory-group reclaim without a node) shrinks each node's lruvec in
//! turn, as `shrink_zones()` calls `shrink_node()` once per node of the
//! zonelist. While a lruvec is shrunk `sc.nid` names its node.
//!
//! Used for the policies whose state is the lruvec's own (MGLRU's
//! generations, tiers and refault feedback; CLOCK's hands). The classic LRU
//! keeps one set of lists for the machine and takes one node's pages of them
//! itself (S-MM1, [`eligible`](crate::eligible)).
//!
//! Simplifications (listed in docs/simplifications.md):
//! - S-ND1: reclaim of every node visits the nodes in id order (the kernel
//!   follows the allocating CPU's zonelist: its own node first).
//! - S-ND2: a shadow entry does not record the node that evicted the page: a
//!   page that refaults onto another node is judged by that node's lruvec
//!   (the kernel's `lru_gen_refault()` ignores a refault into another lruvec).

use crate::control::ScanControl;
use crate::direct::PassTime;
use crate::memcg_lru::MemcgLruForm;
use crate::pageout::PageoutEnv;
use crate::policy::{ControlError, ControlOp, LruSizes, ReclaimPolicy};
use crate::routed::{forward_to_lruvecs, RoutedClock};
use mm::{Mm, Pfn};

/// One lruvec per node, reclaimed node by node.
pub struct NodedPolicy {
    /// The lruvec of each node, by node id.
    lruvecs: Vec<Box<dyn ReclaimPolicy>>,
}

impl NodedPolicy {
    /// A per-node policy over `lruvecs`, one per node of the machine in id order.
    pub fn new(lruvecs: Vec<Box<dyn ReclaimPolicy>>) -> NodedPolicy {
        NodedPolicy { lruvecs }
    }

    /// The lruvec of node `node`.
    pub fn lruvec(&self, node: u8) -> &dyn ReclaimPolicy {
        self.lruvecs[node as usize].as_ref()
    }

    fn of(&mut self, mm: &Mm, pfn: Pfn) -> &mut dyn ReclaimPolicy {
        self.lruvecs[mm.node_of(pfn) as usize].as_mut()
    }

    /// The nodes a call with `sc` works on: its node, or every node (S-ND1).
    fn nodes(&self, sc: &ScanControl) -> std::ops::Range<u8> {
        match sc.nid {
            Some(n) => n..n + 1,
            None => 0..self.lruvecs.len() as u8,
        }
    }
}

impl ReclaimPolicy for NodedPolicy {
    forward_to_lruvecs!();

    fn shrink_node(&mut self, mm: &mut Mm, sc: &mut ScanControl, env: PageoutEnv, clock: &mut dyn PassTime) {
        let nid = sc.nid;
        for n in self.nodes(sc) {
            sc.nid = Some(n);
            let mut routed = RoutedClock::new(clock, move |mm: &Mm, pfn| mm.node_of(pfn) == n);
            self.lruvecs[n as usize].shrink_node(mm, sc, env, &mut routed);
            for pfn in routed.pending {
                self.of(mm, pfn).rotate_reclaimable(mm, pfn);
            }
            if sc.throttle.is_some() {
                break;
            }
        }
        sc.nid = nid;
    }

    /// `kswapd_age_node()` / `lru_gen_age_node()`: the node's own lruvec.
    fn age_node(&mut self, mm: &mut Mm, sc: &mut ScanControl) {
        let nid = sc.nid;
        for n in self.nodes(sc) {
            sc.nid = Some(n);
            self.lruvecs[n as usize].age_node(mm, sc);
        }
        sc.nid = nid;
    }

    fn flush_group_stats(&mut self, mm: &Mm) {
        self.lruvecs.iter_mut().for_each(|l| l.flush_group_stats(mm));
    }

    fn node_lru_sizes(&self, node: u8) -> Option<LruSizes> {
        Some(self.lruvecs[node as usize].lru_sizes())
    }

    fn memcg_lru(&self) -> MemcgLruForm {
        self.lruvecs[0].memcg_lru()
    }

    fn set_initial_priority(&self, mm: &Mm, sc: &mut ScanControl, sizes: LruSizes) {
        self.lruvecs[0].set_initial_priority(mm, sc, sizes);
    }

    /// The lruvec of node `sc.nid` (node 0 when unset).
    fn lruvec_is_sizable(&self, mm: &Mm, sc: &ScanControl) -> bool {
        self.lruvecs[sc.nid.unwrap_or(0) as usize].lruvec_is_sizable(mm, sc)
    }

    /// Each node's lruvec is consistent, and (as the machine's policy; in a
    /// cgroup tree each group's lruvecs list only the group's pages, and the
    /// tree checks the sum) lists exactly the node's pages on an LRU.
    fn check_invariants(&self, mm: &Mm) {
        self.lruvecs.iter().for_each(|l| l.check_invariants(mm));
        if !mm.cgroups.enabled() {
            check_node_lists(mm, self);
        }
    }

    /// A read lists every node's lruvec in turn; a write goes to every
    /// lruvec, each running the commands that name its node.
    fn control(
        &mut self,
        mm: &mut Mm,
        name: &str,
        op: ControlOp<'_>,
        sc: &mut ScanControl,
        env: PageoutEnv,
    ) -> Result<String, ControlError> {
        let nid = sc.nid;
        let mut out = String::new();
        for (n, l) in self.lruvecs.iter_mut().enumerate() {
            sc.nid = Some(n as u8);
            let text = l.control(mm, name, op, sc, env);
            sc.nid = nid;
            out.push_str(&text?);
        }
        Ok(out)
    }
}

/// Every node's frames on an LRU are the pages `policy` lists for the node
/// ([`ReclaimPolicy::node_lru_sizes`]; nothing to check where it has no per-node lists).
pub(crate) fn check_node_lists(mm: &Mm, policy: &dyn ReclaimPolicy) {
    let mut listed = vec![0u64; mm.nodes.len()];
    for pfn in 0..mm.frames.len() as Pfn {
        if mm.frames[pfn].flags.has(mm::PageFlags::LRU) {
            listed[mm.node_of(pfn) as usize] += 1;
        }
    }
    for (n, &count) in listed.iter().enumerate() {
        let Some(sizes) = policy.node_lru_sizes(n as u8) else { return };
        let total = sizes.total();
        assert_eq!(count, total, "node {n}: {count} of its frames are on an LRU, its lruvecs list {total}");
    }
}
