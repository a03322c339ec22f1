//! `node_reclaim()` (mm/vmscan.c; `zone_reclaim()` before v4.8), run by the
//! allocator's fast path when `vm.zone_reclaim_mode` is set: a zone of the
//! allocating task's own node found below its watermark is reclaimed from
//! before the zonelist moves on to another node.
//!
//! The mode's bits: 1 (`RECLAIM_ZONE`) turns it on, 2 (`RECLAIM_WRITE`) lets
//! it write dirty pages, 4 (`RECLAIM_UNMAP`) lets it unmap mapped pages. It
//! runs only while the node's reclaimable page cache is above
//! `vm.min_unmapped_ratio` of the node's pages, starts at priority 4
//! (`NODE_RECLAIM_PRIORITY`) and stops once it freed one page (order 0).
//! Its scans count as direct reclaim's.
//!
//! Simplifications (S-NR1): the node's reclaimable page cache is its share of
//! memory times the machine's file LRU pages (less the dirty ones without
//! `RECLAIM_WRITE`; mapped file pages are not subtracted), and reclaimable
//! slab above `min_slab_ratio` is no reason to run.

use crate::control::{Reclaimer, ScanControl};
use crate::direct::PassTime;
use crate::pageout::PageoutEnv;
use crate::policy::ReclaimPolicy;
use crate::SWAP_CLUSTER_MAX;
use mm::{Mm, ZoneId};

/// KERNEL: `RECLAIM_ZONE`: node reclaim is on.
pub const RECLAIM_ZONE: u64 = 1;
/// KERNEL: `RECLAIM_WRITE`: node reclaim may write dirty pages.
pub const RECLAIM_WRITE: u64 = 2;
/// KERNEL: `RECLAIM_UNMAP`: node reclaim may unmap mapped pages.
pub const RECLAIM_UNMAP: u64 = 4;
/// KERNEL: `NODE_RECLAIM_PRIORITY`: node reclaim's first priority.
pub const NODE_RECLAIM_PRIORITY: i32 = 4;

/// `node_pagecache_reclaimable()` against `min_unmapped_pages`: may node
/// reclaim run on `node` under `mode`, with `min_unmapped_ratio` percent (S-NR1)?
pub fn worth_reclaiming(mm: &Mm, policy: &dyn ReclaimPolicy, node: u8, mode: u64, min_unmapped_ratio: u64) -> bool {
    let sizes = policy.lru_sizes();
    let mut file = sizes.inactive_file + sizes.active_file;
    if mode & RECLAIM_WRITE == 0 {
        file = file.saturating_sub(mm.dirty.nr_dirty);
    }
    let managed = |n: Option<u8>| mm.zones.iter().filter(|z| n.is_none_or(|n| z.node == n)).map(|z| z.managed).sum();
    let (node_pages, total): (u64, u64) = (managed(Some(node)), managed(None));
    file * node_pages / total.max(1) > node_pages * min_unmapped_ratio / 100
}

/// `__node_reclaim()` of `node` for an order-0 allocation whose highest zone
/// is `class`: `shrink_node` from priority 4 down until a page is freed.
pub fn node_reclaim(
    mm: &mut Mm,
    policy: &mut dyn ReclaimPolicy,
    env: PageoutEnv,
    (node, class, mode): (u8, ZoneId, u64),
    clock: &mut dyn PassTime,
) -> ScanControl {
    let mut sc = ScanControl::new(Reclaimer::Direct, SWAP_CLUSTER_MAX);
    sc.priority = NODE_RECLAIM_PRIORITY;
    sc.may_writepage = mode & RECLAIM_WRITE != 0;
    sc.may_unmap = mode & RECLAIM_UNMAP != 0;
    sc.reclaim_idx = class;
    sc.nid = Some(node);
    sc.now_ns = env.now_ns;
    loop {
        sc.nr_scanned = 0;
        policy.shrink_node(mm, &mut sc, env, clock);
        crate::shrinker::shrink_slab(mm, policy, &mut sc, env.shrinker);
        if sc.nr_reclaimed > 0 || sc.throttle.is_some() || sc.priority == 0 {
            return sc;
        }
        sc.priority -= 1;
        clock.pass_time(mm, policy, &mut sc);
    }
}
