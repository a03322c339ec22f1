//! kswapd: the per-node background reclaimer.
//!
//! Models `wakeup_kswapd()`, `balance_pgdat()`, `kswapd_shrink_node()`,
//! `pgdat_balanced()` and `prepare_kswapd_sleep()`, mm/vmscan.c (v6.x), for
//! order-0 allocations. `balance_pgdat` is cut into steps — one iteration of its
//! priority loop, i.e. one `shrink_node` pass, per [`Kswapd::step`] — so that the
//! engine can interleave kswapd with the workload in virtual time.
//!
//! Simplifications: S-KS1: order 0 only (no compaction, no `kswapd_order`);
//! S-KS2: no watermark boosting; S-KS3: `laptop_mode` is 0.

use crate::config::DirtyThrottle;
use crate::control::{Reclaimer, ScanControl};
use crate::direct::Untimed;
use crate::pageout::PageoutEnv;
use crate::policy::ReclaimPolicy;
use crate::{DEF_PRIORITY, MAX_RECLAIM_RETRIES, SWAP_CLUSTER_MAX};
use mm::{Mm, VmEvent, Watermark};

/// `zone_watermark_ok()` for order 0: free pages strictly above the mark.
pub fn watermark_ok(mm: &Mm, mark: Watermark) -> bool {
    // One zone (S-MM1): its free pages are the node's.
    mm.zones.iter().any(|z| mm.nr_free() > z.wmark(mark))
}

/// `pgdat_balanced()`: some zone is above its high watermark.
pub fn pgdat_balanced(mm: &Mm) -> bool {
    watermark_ok(mm, Watermark::High)
}

#[derive(Clone, Copy, Debug)]
struct Balancing {
    priority: i32,
    nr_reclaimed: u64,
    /// Before v3.11: pages reclaimed since the priority loop last started at `DEF_PRIORITY`.
    loop_reclaimed: u64,
}

/// kswapd's reclaim state for one node.
#[derive(Clone, Debug, Default)]
pub struct Kswapd {
    /// `pgdat->kswapd_failures`: balance runs in a row that reclaimed nothing.
    pub failures: u32,
    balancing: Option<Balancing>,
}

/// What a [`Kswapd::step`] did.
#[derive(Debug)]
pub struct KswapdStep {
    /// The scan control of the pass (work done, pages submitted for write).
    pub sc: ScanControl,
    /// `balance_pgdat` returned: kswapd goes on to `kswapd_try_to_sleep`.
    pub finished: bool,
}

impl Kswapd {
    /// True while a `balance_pgdat` run is in progress.
    pub fn is_balancing(&self) -> bool {
        self.balancing.is_some()
    }

    /// `wakeup_kswapd()`'s test: should a sleeping kswapd be woken?
    pub fn should_wake(&self, mm: &Mm) -> bool {
        self.failures < MAX_RECLAIM_RETRIES && !pgdat_balanced(mm)
    }

    /// `prepare_kswapd_sleep()`: may kswapd go to sleep?
    pub fn ready_to_sleep(&self, mm: &Mm) -> bool {
        self.failures >= MAX_RECLAIM_RETRIES || pgdat_balanced(mm)
    }

    /// Starts a `balance_pgdat` run.
    pub fn begin(&mut self, mm: &mut Mm) {
        debug_assert!(self.balancing.is_none());
        mm.stat.count(VmEvent::Pageoutrun, 1);
        self.balancing = Some(Balancing { priority: DEF_PRIORITY, nr_reclaimed: 0, loop_reclaimed: 0 });
    }

    /// Runs one iteration of `balance_pgdat`'s priority loop.
    ///
    /// With `kswapd_flat_priority` (v3.11+) a pass reclaims towards the high
    /// watermark and priority drops when scanning fell short or nothing was
    /// reclaimed, down to 1. Without it (v3.9) a pass scans its whole budget
    /// (`nr_to_reclaim = ULONG_MAX`), priority drops until 32 pages have been
    /// reclaimed since the loop started, then the loop restarts at
    /// `DEF_PRIORITY` (`goto loop_again`); at priority 0 the run ends.
    pub fn step(&mut self, mm: &mut Mm, policy: &mut dyn ReclaimPolicy, env: PageoutEnv) -> KswapdStep {
        let b = self.balancing.as_mut().expect("kswapd step outside balance_pgdat");
        let mut sc = ScanControl::new(Reclaimer::Kswapd, 0);
        sc.priority = b.priority;
        sc.now_ns = env.now_ns;
        if pgdat_balanced(mm) {
            // Balanced: forget the dirty/writeback/congested node flags.
            mm.dirty.clear_flags();
            return self.finish(mm, policy, sc);
        }
        policy.age_node(mm, &mut sc);
        let flat = env.dirty.kswapd_flat_priority;
        // kswapd_shrink_node(): reclaim up to the high watermark, at least a batch.
        sc.nr_to_reclaim =
            if flat { mm.zones.iter().map(|z| z.wmark(Watermark::High).max(SWAP_CLUSTER_MAX)).sum() } else { u64::MAX };
        sc.nr_scanned = 0;
        policy.shrink_node(mm, &mut sc, env, &mut Untimed);
        crate::shrinker::shrink_slab(mm, policy, &mut sc, env.shrinker);
        if env.dirty.throttle == DirtyThrottle::Stall {
            // v3.11 kswapd_shrink_zone(): the writeback flag is re-learnt every pass.
            mm.dirty.pgdat_writeback = false;
        }
        let reclaimed = sc.nr_reclaimed;
        b.nr_reclaimed += reclaimed;
        if reclaimed > 0 {
            self.failures = 0;
        }
        if sc.throttle.is_some() {
            // S-TH1: the pass is repeated at this priority after the wait.
            return KswapdStep { sc, finished: false };
        }
        if flat {
            let raise_priority = sc.nr_scanned < sc.nr_to_reclaim;
            if raise_priority || reclaimed == 0 {
                b.priority -= 1;
            }
            if b.priority < 1 {
                return self.finish(mm, policy, sc);
            }
        } else {
            b.loop_reclaimed += reclaimed;
            if b.loop_reclaimed >= SWAP_CLUSTER_MAX {
                b.priority = DEF_PRIORITY;
                b.loop_reclaimed = 0;
            } else {
                b.priority -= 1;
                if b.priority < 0 {
                    return self.finish(mm, policy, sc);
                }
            }
        }
        KswapdStep { sc, finished: false }
    }

    fn finish(&mut self, mm: &mut Mm, policy: &mut dyn ReclaimPolicy, sc: ScanControl) -> KswapdStep {
        let b = self.balancing.take().expect("finishing a balance run that did not start");
        if b.nr_reclaimed == 0 && !pgdat_balanced(mm) {
            self.failures += 1;
        }
        policy.snapshot_refaults(mm);
        KswapdStep { sc, finished: true }
    }
}
