//! The workingset shadow-node shrinker (`count_shadow_nodes`,
//! `scan_shadow_nodes`, `shadow_lru_isolate`, mm/workingset.c).
//!
//! A page-cache tree node whose slots hold only shadow entries sits on a list;
//! beyond a limit (`shadow_nodes_limit`: a share of memory, the most shadow
//! entries refault detection can use) the shrinker frees the oldest such
//! nodes with their shadows (`workingset_nodereclaim`).

use crate::shrinker::{Scanned, ShadowLimit, ShrinkCtx, Shrinker, ShrinkerConfig, DEFAULT_SEEKS, SHRINK_BATCH};
use mm::slab::XA_CHUNK_SHIFT;
use mm::ShrinkerId;

/// The shadow-node shrinker.
pub struct ShadowNodes;

impl ShadowNodes {
    /// `max_nodes`: shadow-only nodes kept (S-MC1: one group, so memcg
    /// reclaim uses the node's pages too).
    pub fn max_nodes(cx: &ShrinkCtx) -> u64 {
        let present = cx.mm.frames.len() as u64;
        match cx.cfg.shadow_limit {
            // v3.15: one node in 8 half full of shadows for every page.
            ShadowLimit::Present16 => present >> (1 + XA_CHUNK_SHIFT - 3),
            ShadowLimit::File8 => {
                let s = cx.policy.lru_sizes();
                (s.inactive_file + s.active_file) >> (XA_CHUNK_SHIFT - 3)
            }
            ShadowLimit::Present8 => present >> (XA_CHUNK_SHIFT - 3),
        }
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

    fn count(&self, cx: &mut ShrinkCtx) -> u64 {
        cx.mm.slab.shadow_nodes.saturating_sub(Self::max_nodes(cx))
    }

    fn scan(&self, cx: &mut ShrinkCtx, nr_to_scan: u64) -> Scanned {
        let mut freed = 0;
        while freed < nr_to_scan && cx.mm.reclaim_shadow_node() {
            freed += 1;
        }
        Scanned { freed, stolen: 0 }
    }
}
