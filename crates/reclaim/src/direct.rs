//! Direct reclaim: an allocating task frees pages itself.
//!
//! Models `try_to_free_pages()` / `do_try_to_free_pages()`, mm/vmscan.c (v6.x).
//! Simplifications: S-DR1: no `throttle_direct_reclaim` (pfmemalloc) wait and no
//! compaction; S-DR2: the memory.low retry is absent (no protected groups).
//! Simplification S-DR3: one call runs at a single instant and its CPU time is
//! charged afterwards, so no writeback completes (and no page rotates back to
//! the inactive tail) while it walks down the priorities.
//! When a pass frees nothing, the engine throttles the task (NOPROGRESS) and
//! retries the allocation.

use crate::config::DirtyThrottle;
use crate::control::{Reclaimer, ScanControl};
use crate::pageout::PageoutEnv;
use crate::policy::ReclaimPolicy;
use crate::{DEF_PRIORITY, SWAP_CLUSTER_MAX};
use mm::{Mm, VmEvent};

/// Runs direct reclaim for one allocation; returns the scan control with what it did.
pub fn try_to_free_pages(mm: &mut Mm, policy: &mut dyn ReclaimPolicy, env: PageoutEnv) -> ScanControl {
    let mut sc = ScanControl::new(Reclaimer::Direct, SWAP_CLUSTER_MAX);
    do_try_to_free_pages(mm, policy, env, &mut sc);
    sc
}

/// `do_try_to_free_pages()`: the priority loop shared by direct and memcg
/// reclaim, with one retry that forces deactivation.
pub(crate) fn do_try_to_free_pages(mm: &mut Mm, policy: &mut dyn ReclaimPolicy, env: PageoutEnv, sc: &mut ScanControl) {
    sc.now_ns = env.now_ns;
    let mut total_scanned = 0;
    // At most two rounds: the second with forced deactivation.
    for _ in 0..2 {
        if !sc.reclaimer.is_cgroup() {
            mm.stat.count(VmEvent::AllocstallNormal, 1);
        }
        sc.priority = DEF_PRIORITY;
        while sc.priority >= 0 {
            sc.nr_scanned = 0;
            policy.shrink_node(mm, sc, env);
            total_scanned += sc.nr_scanned;
            if env.dirty.throttle != DirtyThrottle::Throttle && total_scanned > sc.nr_to_reclaim + sc.nr_to_reclaim / 2 {
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
        if sc.nr_reclaimed > 0 || !sc.skipped_deactivate || sc.force_deactivate || sc.throttle.is_some() {
            break;
        }
        // An active list was left alone because deactivation was not allowed:
        // retry with it forced.
        sc.force_deactivate = true;
        sc.skipped_deactivate = false;
    }
}
