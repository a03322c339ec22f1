//! The workingset shadow-node shrinker (`count_shadow_nodes`,
//! `scan_shadow_nodes`, `shadow_lru_isolate`, mm/workingset.c).
//!
//! A page-cache tree node whose slots hold only shadow entries sits on a list;
//! beyond a limit (`shadow_nodes_limit`: a share of memory, the most shadow
//! entries refault detection can use) the shrinker frees the oldest such
//! nodes with their shadows (`workingset_nodereclaim`).

use crate::shrinker::{Scanned, ShadowLimit, ShrinkCtx, Shrinker, ShrinkerConfig, DEFAULT_SEEKS, SHRINK_BATCH};
use mm::slab::XA_CHUNK_SHIFT;
use mm::{CgId, ShrinkerId};

/// The shadow-node shrinker.
pub struct ShadowNodes;

impl ShadowNodes {
    /// `max_nodes` of group `cg`'s list: the shadow-only nodes it keeps. The
    /// forms before `lru/8` have one limit for the whole node (`cg` unused).
    pub fn max_nodes(cx: &ShrinkCtx, cg: CgId) -> u64 {
        let present = cx.mm.frames.len() as u64;
        match cx.cfg.shadow_limit {
            // v3.15: one node in 8 half full of shadows for every page.
            ShadowLimit::Present16 => present >> (1 + XA_CHUNK_SHIFT - 3),
            ShadowLimit::File8 => {
                let s = cx.policy.lru_sizes();
                (s.inactive_file + s.active_file) >> (XA_CHUNK_SHIFT - 3)
            }
            ShadowLimit::Present8 => present >> (XA_CHUNK_SHIFT - 3),
            ShadowLimit::Lru8 => Self::own_pages(cx, cg) >> (XA_CHUNK_SHIFT - 3),
        }
    }

    /// The pages of `cg` itself, not its descendants (`lruvec_page_state_local`
    /// of the LRU lists): without a tree every LRU page is the root's; in a
    /// tree, the group's charge less its children's (S-SL7).
    fn own_pages(cx: &ShrinkCtx, cg: CgId) -> u64 {
        let tree = &cx.mm.cgroups;
        if !tree.enabled() {
            let s = cx.policy.lru_sizes();
            return s.inactive_anon + s.active_anon + s.inactive_file + s.active_file;
        }
        let g = tree.get(cg);
        g.usage.saturating_sub(g.children.iter().map(|&c| tree.get(c).usage).sum())
    }

    /// Each list's excess over its limit, in tree order (one list, the
    /// root's, with the forms that have a single limit). With `lru/8` only the
    /// lists of the reclaim target's subtree: `shrink_node_memcgs` calls
    /// `shrink_slab` for the target and its descendants, so a group's own
    /// reclaim never trims the root's list (where the swap cache's nodes sit).
    fn excess(cx: &ShrinkCtx) -> Vec<(CgId, u64)> {
        let slab = &cx.mm.slab;
        if cx.cfg.shadow_limit != ShadowLimit::Lru8 {
            return vec![(CgId::ROOT, slab.shadow_nodes.saturating_sub(Self::max_nodes(cx, CgId::ROOT)))];
        }
        let groups = if cx.mm.cgroups.enabled() { cx.mm.cgroups.subtree(cx.target) } else { vec![CgId::ROOT] };
        groups
            .into_iter()
            .map(|g| (g, slab.shadow_nodes_of(g).saturating_sub(Self::max_nodes(cx, g))))
            .filter(|&(_, e)| e > 0)
            .collect()
    }
}

impl Shrinker for ShadowNodes {
    fn id(&self) -> ShrinkerId {
        ShrinkerId::ShadowNodes
    }

    fn seeks(&self, cfg: &ShrinkerConfig) -> u32 {
        if cfg.shadow_zero_seeks {
            0
        } else {
            DEFAULT_SEEKS
        }
    }

    fn batch(&self) -> u64 {
        SHRINK_BATCH
    }

    /// `count_shadow_nodes`, summed over the groups' lists (S-SL7: one call for all).
    fn count(&self, cx: &mut ShrinkCtx) -> u64 {
        Self::excess(cx).iter().map(|e| e.1).sum()
    }

    /// `scan_shadow_nodes`: frees up to `nr_to_scan` nodes, from each list in
    /// proportion to its excess (the kernel sizes each group's call by its own).
    fn scan(&self, cx: &mut ShrinkCtx, nr_to_scan: u64) -> Scanned {
        let excess = Self::excess(cx);
        let total: u64 = excess.iter().map(|e| e.1).sum();
        let mut freed = 0;
        if cx.cfg.shadow_limit != ShadowLimit::Lru8 {
            // One limit: the lists are one list, walked in tree order.
            let groups = cx.mm.cgroups.subtree(CgId::ROOT);
            for g in groups {
                while freed < nr_to_scan && cx.mm.reclaim_shadow_node(g) {
                    freed += 1;
                }
            }
            return Scanned { freed, stolen: 0 };
        }
        for (g, e) in excess {
            let quota = (nr_to_scan * e).div_ceil(total.max(1)).min(nr_to_scan - freed);
            let mut n = 0;
            while n < quota && cx.mm.reclaim_shadow_node(g) {
                n += 1;
            }
            freed += n;
        }
        Scanned { freed, stolen: 0 }
    }
}
