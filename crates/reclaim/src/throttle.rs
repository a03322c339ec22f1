//! Reclaim's reaction to dirty and writeback pages: the node flags and when a
//! reclaimer must wait for writeback.
//!
//! Three generations, chosen by [`DirtyThrottle`]:
//! - v3.9 `shrink_inactive_list()`: a batch whose writeback pages reach
//!   `nr_taken >> (DEF_PRIORITY - priority)` calls `wait_iff_congested(HZ/10)`,
//!   which sleeps only while the node is flagged congested and a device is congested.
//! - v3.11 (commit e2be15f and the seed-003 follow-up): per batch, flag the node
//!   writeback (same ratio), congested (every dirty page congested) and dirty
//!   (every page taken was unqueued dirty); `congestion_wait(HZ/10)` when the batch
//!   was all unqueued dirty or kswapd met `PG_reclaim` writeback pages; direct
//!   reclaimers also `wait_iff_congested`.
//! - v5.16+ (spec F.5/F.6): flags per `shrink_node` pass, `reclaim_throttle()`
//!   WRITEBACK for kswapd's immediate pages and CONGESTED for direct reclaimers.
//!
//! Decisions only: the engine turns a [`Throttle`] into a wait with its timeout
//! and early wake-up. Simplification S-TH1: a throttle ends the current pass
//! (the kernel sleeps and then finishes the pass); kswapd repeats the pass at the
//! same priority after the wait.

use crate::config::{DirtyConfig, DirtyThrottle};
use crate::control::{Reclaimer, ScanControl};
use crate::pageout::{FolioStat, PageoutEnv};
use crate::DEF_PRIORITY;
use mm::Mm;

/// Why a reclaimer waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThrottleReason {
    /// 3.x `congestion_wait(BLK_RW_ASYNC, HZ/10)`: until a congested device
    /// drops below its congestion-off threshold, or the timeout.
    CongestionWait,
    /// 3.x `wait_iff_congested(HZ/10)`: as `CongestionWait`; only issued when
    /// the node is flagged congested and a device is congested.
    IffCongested,
    /// `reclaim_throttle(VMSCAN_THROTTLE_WRITEBACK)`: HZ/10, or until 32 pages
    /// per waiter have finished writeback.
    Writeback,
    /// `reclaim_throttle(VMSCAN_THROTTLE_CONGESTED)`: one jiffy.
    Congested,
}

impl ThrottleReason {
    /// The timeout in jiffies for a kernel with `hz` ticks per second.
    pub fn timeout_jiffies(self, hz: u64) -> u64 {
        match self {
            ThrottleReason::CongestionWait | ThrottleReason::IffCongested | ThrottleReason::Writeback => hz / 10,
            ThrottleReason::Congested => 1,
        }
    }
}

/// A wait reclaim asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Throttle {
    /// Why.
    pub reason: ThrottleReason,
}

fn ask(sc: &mut ScanControl, reason: ThrottleReason) {
    if sc.throttle.is_none() {
        sc.throttle = Some(Throttle { reason });
    }
}

/// The end of `shrink_inactive_list()` for one batch: node flags and waits of
/// the 3.x kernels, the flusher wake-up of today's. `file` says which list.
pub fn after_inactive_batch(
    mm: &mut Mm,
    sc: &mut ScanControl,
    cfg: &DirtyConfig,
    env: PageoutEnv,
    stat: &FolioStat,
    nr_taken: u64,
) {
    let many_writeback = stat.nr_writeback > 0 && stat.nr_writeback >= nr_taken >> (DEF_PRIORITY - sc.priority).max(0);
    let all_unqueued = stat.nr_unqueued_dirty == nr_taken;
    let flags = &mut mm.dirty;
    match cfg.throttle {
        DirtyThrottle::IffCongested => {
            // v3.9: ZONE_CONGESTED comes from shrink_page_list's own count.
            if stat.nr_dirty > 0 && stat.nr_dirty == stat.nr_congested {
                flags.pgdat_congested = true;
            }
            if many_writeback && flags.pgdat_congested && env.fs_congested {
                ask(sc, ThrottleReason::IffCongested);
            }
        }
        DirtyThrottle::Stall => {
            if many_writeback {
                flags.pgdat_writeback = true;
            }
            if stat.nr_dirty > 0 && stat.nr_dirty == stat.nr_congested {
                flags.pgdat_congested = true;
            }
            if all_unqueued {
                flags.pgdat_dirty = true;
            }
            if all_unqueued || stat.nr_immediate > 0 {
                ask(sc, ThrottleReason::CongestionWait);
            } else if sc.reclaimer == Reclaimer::Direct && flags.pgdat_congested && env.fs_congested {
                ask(sc, ThrottleReason::IffCongested);
            }
        }
        DirtyThrottle::Throttle => {
            if all_unqueued {
                sc.wake_flusher = true;
            }
        }
    }
}

/// The end of `shrink_node()` (today's kernels, spec F.5): node flags from the
/// pass totals and `reclaim_throttle()`. `reclaimable` is the node's
/// reclaimable LRU pages (file, plus anon when swap is available).
pub fn after_shrink_node(mm: &mut Mm, sc: &mut ScanControl, cfg: &DirtyConfig, reclaimable: u64) {
    if cfg.throttle != DirtyThrottle::Throttle {
        return;
    }
    let nr = sc.nr;
    let flags = &mut mm.dirty;
    if sc.reclaimer == Reclaimer::Kswapd {
        if nr.writeback > 0 && nr.writeback == nr.taken {
            flags.pgdat_writeback = true;
        }
        if nr.unqueued_dirty > 0 && nr.unqueued_dirty == nr.file_taken {
            flags.pgdat_dirty = true;
        }
        if nr.dirty > 0 && nr.dirty == nr.congested {
            flags.pgdat_congested = true;
        }
        if nr.immediate > 0 {
            ask(sc, ThrottleReason::Writeback);
        }
    } else if flags.pgdat_congested {
        // skip_throttle_noprogress(): little of memory is waiting for writeback.
        let write_pending = flags.nr_dirty + flags.nr_writeback;
        if 2 * write_pending > reclaimable {
            ask(sc, ThrottleReason::Congested);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(
        throttle: DirtyThrottle,
        reclaimer: Reclaimer,
        stat: FolioStat,
        taken: u64,
        fs_congested: bool,
    ) -> (Option<ThrottleReason>, [bool; 3], bool) {
        let mut mm = Mm::new(64, 0);
        let mut sc = ScanControl::new(reclaimer, 32);
        sc.priority = DEF_PRIORITY;
        let cfg = DirtyConfig { throttle, ..DirtyConfig::default() };
        let env = PageoutEnv {
            sync_swap: false,
            now_ns: 0,
            fs_congested,
            dirty: cfg,
            shrinker: crate::ShrinkerConfig::TODAY,
        };
        after_inactive_batch(&mut mm, &mut sc, &cfg, env, &stat, taken);
        let f = &mm.dirty;
        (sc.throttle.map(|t| t.reason), [f.pgdat_dirty, f.pgdat_writeback, f.pgdat_congested], sc.wake_flusher)
    }

    #[test]
    fn v311_stalls_on_a_batch_of_unqueued_dirty_pages_and_flags_the_node() {
        let stat = FolioStat { nr_dirty: 32, nr_unqueued_dirty: 32, ..Default::default() };
        let (t, flags, _) = run(DirtyThrottle::Stall, Reclaimer::Kswapd, stat, 32, false);
        assert_eq!(t, Some(ThrottleReason::CongestionWait));
        assert_eq!(flags, [true, false, false]);
        // One clean page in the batch: no flag, no stall.
        let stat = FolioStat { nr_dirty: 31, nr_unqueued_dirty: 31, ..Default::default() };
        assert_eq!(run(DirtyThrottle::Stall, Reclaimer::Kswapd, stat, 32, false), (None, [false, false, false], false));
    }

    #[test]
    fn v311_stalls_kswapd_on_immediate_pages() {
        // At DEF_PRIORITY the writeback ratio needs writeback >= taken.
        let stat = FolioStat { nr_dirty: 8, nr_writeback: 4, nr_immediate: 4, nr_congested: 4, ..Default::default() };
        let (t, flags, _) = run(DirtyThrottle::Stall, Reclaimer::Kswapd, stat, 8, false);
        assert_eq!(t, Some(ThrottleReason::CongestionWait));
        assert_eq!(flags, [false, false, false]);
        let stat = FolioStat { nr_dirty: 8, nr_writeback: 8, nr_congested: 8, ..Default::default() };
        assert_eq!(run(DirtyThrottle::Stall, Reclaimer::Kswapd, stat, 8, false), (None, [false, true, true], false));
    }

    #[test]
    fn wait_iff_congested_sleeps_only_with_a_congested_node_and_device() {
        let stat = FolioStat { nr_dirty: 8, nr_writeback: 8, nr_congested: 8, ..Default::default() };
        assert_eq!(
            run(DirtyThrottle::IffCongested, Reclaimer::Kswapd, stat, 8, true).0,
            Some(ThrottleReason::IffCongested)
        );
        assert_eq!(run(DirtyThrottle::IffCongested, Reclaimer::Kswapd, stat, 8, false).0, None);
        // v3.11 direct reclaim, congested node and device.
        let stat = FolioStat { nr_dirty: 2, nr_congested: 2, nr_writeback: 2, ..Default::default() };
        assert_eq!(run(DirtyThrottle::Stall, Reclaimer::Direct, stat, 32, true).0, Some(ThrottleReason::IffCongested));
        assert_eq!(run(DirtyThrottle::Stall, Reclaimer::Direct, stat, 32, false).0, None);
    }

    #[test]
    fn today_wakes_the_flusher_and_throttles_per_pass() {
        let stat = FolioStat { nr_dirty: 32, nr_unqueued_dirty: 32, ..Default::default() };
        assert_eq!(
            run(DirtyThrottle::Throttle, Reclaimer::Kswapd, stat, 32, false),
            (None, [false, false, false], true)
        );
        let mut mm = Mm::new(64, 0);
        let cfg = DirtyConfig::default();
        let mut sc = ScanControl::new(Reclaimer::Kswapd, 32);
        sc.nr = crate::control::PassStat {
            dirty: 5,
            congested: 5,
            writeback: 5,
            immediate: 3,
            taken: 5,
            file_taken: 5,
            unqueued_dirty: 0,
        };
        after_shrink_node(&mut mm, &mut sc, &cfg, 100);
        assert_eq!(sc.throttle.map(|t| t.reason), Some(ThrottleReason::Writeback));
        assert!(mm.dirty.pgdat_writeback && mm.dirty.pgdat_congested && !mm.dirty.pgdat_dirty);
        // A direct reclaimer on a congested node waits a jiffy unless little is pending.
        let mut sc = ScanControl::new(Reclaimer::Direct, 32);
        mm.dirty.nr_writeback = 60;
        after_shrink_node(&mut mm, &mut sc, &cfg, 100);
        assert_eq!(
            sc.throttle.map(|t| (t.reason, t.reason.timeout_jiffies(250))),
            Some((ThrottleReason::Congested, 1))
        );
        let mut sc = ScanControl::new(Reclaimer::Direct, 32);
        mm.dirty.nr_writeback = 50;
        after_shrink_node(&mut mm, &mut sc, &cfg, 100);
        assert_eq!(sc.throttle, None);
    }
}
