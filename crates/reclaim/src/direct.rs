//! Direct reclaim: an allocating task frees pages itself.
//!
//! Models `try_to_free_pages()` / `do_try_to_free_pages()`, mm/vmscan.c (v6.x).
//! Simplifications: S-DR1: no `throttle_direct_reclaim` (pfmemalloc) wait and no
//! compaction.
//! Time passes inside a call: after each reclaim batch (the classic LRU's
//! 32-page `shrink_inactive_list`/`shrink_active_list` chunks, MGLRU's
//! `evict_folios` rounds; other policies between priority passes) the
//! caller's [`PassTime`] lets the CPU time so far elapse: the batch's writes
//! are submitted, writeback that completed meanwhile ends and rotates
//! `PG_reclaim` pages to the inactive tail, so a later batch can free them.
//! Simplification S-DR3: time advances only at batch boundaries, and only I/O
//! completions happen in it (no other thread, kswapd or flusher runs during
//! the call).
//! When a pass frees nothing, the engine throttles the task (NOPROGRESS) and
//! retries the allocation.

use crate::config::DirtyThrottle;
use crate::control::{Reclaimer, ScanControl};
use crate::pageout::PageoutEnv;
use crate::policy::ReclaimPolicy;
use crate::throttle::Isolating;
use crate::{DEF_PRIORITY, SWAP_CLUSTER_MAX};
use mm::{Mm, VmEvent, ZoneId};

/// The caller's clock, advanced between the reclaim batches of one call.
pub trait PassTime {
    /// Lets the CPU time of the work in `sc.work` so far elapse since the call
    /// began: takes the writes queued in `sc.pageout` (submitting them when
    /// the batch ended) and ends the writeback that has completed by then
    /// (rotating pages through `policy`).
    fn pass_time(&mut self, mm: &mut Mm, policy: &mut dyn ReclaimPolicy, sc: &mut ScanControl);
}

/// A clock that does not move: kswapd's steps (their time passes between
/// steps, S-TH1) and `shrink_node` called outside a timed call.
pub struct Untimed;

impl PassTime for Untimed {
    fn pass_time(&mut self, _mm: &mut Mm, _policy: &mut dyn ReclaimPolicy, _sc: &mut ScanControl) {}
}

/// Runs direct reclaim for one allocation whose highest zone is `reclaim_idx`,
/// on node `nid` only or (`None`) on every node, with no other reclaimer at
/// work; returns the scan control with what it did.
pub fn try_to_free_pages(
    mm: &mut Mm,
    policy: &mut dyn ReclaimPolicy,
    env: PageoutEnv,
    scope: (ZoneId, Option<u8>),
    clock: &mut dyn PassTime,
) -> ScanControl {
    try_to_free_pages_among(mm, policy, env, scope, Isolating::default(), clock)
}

/// [`try_to_free_pages`] while other direct reclaimers hold the pages
/// `isolating` says (`too_many_isolated()`, S-TH2).
pub fn try_to_free_pages_among(
    mm: &mut Mm,
    policy: &mut dyn ReclaimPolicy,
    env: PageoutEnv,
    (reclaim_idx, nid): (ZoneId, Option<u8>),
    isolating: Isolating,
    clock: &mut dyn PassTime,
) -> ScanControl {
    let mut sc = ScanControl::new(Reclaimer::Direct, SWAP_CLUSTER_MAX);
    sc.reclaim_idx = reclaim_idx;
    sc.nid = nid;
    sc.isolating = isolating;
    do_try_to_free_pages(mm, policy, env, &mut sc, clock);
    sc
}

/// `do_try_to_free_pages()`: the priority loop shared by direct and memcg
/// reclaim, with one retry that forces deactivation.
pub(crate) fn do_try_to_free_pages(
    mm: &mut Mm,
    policy: &mut dyn ReclaimPolicy,
    env: PageoutEnv,
    sc: &mut ScanControl,
    clock: &mut dyn PassTime,
) {
    sc.now_ns = env.now_ns;
    let mut total_scanned = 0;
    let mut first_pass = true;
    // At most three rounds: then with forced deactivation, then into protected groups.
    for _ in 0..3 {
        if !sc.reclaimer.is_cgroup() {
            mm.stat.count(VmEvent::AllocstallDma.in_zone(sc.reclaim_idx), 1);
        }
        sc.priority = DEF_PRIORITY;
        while sc.priority >= 0 {
            if !first_pass {
                clock.pass_time(mm, policy, sc);
            }
            first_pass = false;
            sc.nr_scanned = 0;
            policy.shrink_node(mm, sc, env, clock);
            crate::shrinker::shrink_slab(mm, policy, sc, env.shrinker);
            total_scanned += sc.nr_scanned;
            if env.dirty.throttle != DirtyThrottle::Throttle && total_scanned > sc.nr_to_reclaim + sc.nr_to_reclaim / 2
            {
                // 3.x: a reclaimer that scans much more than it wants kicks the flusher.
                sc.wake_flusher = true;
            }
            if sc.nr_reclaimed >= sc.nr_to_reclaim || sc.throttle.is_some() {
                break;
            }
            if sc.priority < DEF_PRIORITY - 2 {
                sc.may_writepage = true;
            }
            sc.priority -= 1;
        }
        policy.snapshot_refaults(mm);
        if sc.nr_reclaimed > 0 || sc.throttle.is_some() {
            break;
        }
        if sc.skipped_deactivate && !sc.force_deactivate {
            // An active list was left alone because deactivation was not allowed:
            // retry with it forced.
            mm.trace(|| mm::tracepoint::Tracepoint::SimReclaimRetry);
            sc.force_deactivate = true;
            sc.skipped_deactivate = false;
        } else if sc.memcg_low_skipped {
            // Groups were spared for their memory.low: retry reclaiming them too.
            sc.force_deactivate = false;
            sc.memcg_low_reclaim = true;
            sc.memcg_low_skipped = false;
        } else {
            break;
        }
    }
}
