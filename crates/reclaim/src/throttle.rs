//! Reclaim's reaction to dirty and writeback pages: the node flags and when a
//! reclaimer must wait for writeback.
//!
//! Three generations, chosen by [`DirtyThrottle`]. Read from mm/vmscan.c and
//! mm/backing-dev.c of v3.9 and v3.11 (`shrink_inactive_list()`,
//! `shrink_page_list()`, `congestion_wait()`, `wait_iff_congested()`):
//! - v3.9 `shrink_inactive_list()`: every reclaimer, kswapd or direct, whose
//!   batch has writeback pages reaching `nr_taken >> (DEF_PRIORITY - priority)`
//!   calls `wait_iff_congested(zone, HZ/10)`, which sleeps only while the zone
//!   is flagged congested and some device is congested. Global reclaim flags
//!   the zone congested when every dirty page it met was left because its
//!   queue was congested (`pageout()` returning `PAGE_KEEP`); kswapd
//!   (`PF_SWAPWRITE`) never leaves one so, direct reclaim never writes file
//!   pages and swap's queue never congests, so in practice nobody sleeps.
//! - v3.11 (commit e2be15f and the seed-003 follow-up): per batch, flag the zone
//!   writeback when every page taken was under writeback (no priority scaling
//!   any more), and for global reclaim congested (every dirty page congested)
//!   and dirty (every page taken was unqueued dirty); then global reclaim,
//!   kswapd and direct alike, calls `congestion_wait(HZ/10)` when the batch
//!   was all unqueued dirty or met `PG_reclaim` writeback pages in a zone
//!   flagged writeback (`nr_immediate`, counted for kswapd only: direct
//!   reclaimers never stall on it). After that, every reclaimer but kswapd
//!   also calls `wait_iff_congested(zone, HZ/10)`: a direct reclaimer can
//!   sleep twice for one batch.
//! - v5.16+ (spec F.5/F.6): flags per `shrink_node` pass, `reclaim_throttle()`
//!   WRITEBACK for kswapd's immediate pages and CONGESTED for direct reclaimers.
//!
//! With per-zone LRU lists (`lru_layout=zone`) the flags are the zone's
//! ([`mm::zone::ZoneFlags`]): [`crate::zoned::ZonedPolicy`] puts them in the
//! node's place while it shrinks the zone.
//!
//! Every version: `too_many_isolated()` at the start of `shrink_inactive_list()`
//! stops a direct reclaimer while other direct reclaimers hold more pages of the
//! type isolated than an eighth of its inactive list: v3.x-4.12
//! `congestion_wait(HZ/10)` in a loop, v4.13-5.15 `msleep(100)` once, v5.16+
//! `reclaim_throttle(ISOLATED)` once (HZ/50, woken when isolation drops); then
//! the batch goes on, or is skipped if the limit is still exceeded. This wait
//! happens inside the call (the reclaimer holds nothing while it sleeps).
//! Simplifications:
//! - S-TH2: the other reclaimers are the engine's direct reclaim calls in flight
//!   ([`Isolating`]); each holds one 32-page batch while it works (its CPU time),
//!   split between anon and file as its isolations were; kswapd's and
//!   memcg-limit reclaim's batches are not counted, and only direct reclaimers
//!   check; the limit is from the lruvec's own inactive list (the node's
//!   without cgroup groups; the kernel's is always the node's).
//! - S-TH3: before v5.16 the wait is one 100 ms sleep, then the batch is skipped
//!   if still over the limit (v3.x-4.12 slept again until under it).
//!
//! Apart from that in-call sleep, decisions only: the engine turns a
//! [`Throttle`] into a wait with its timeout and early wake-up. Simplification S-TH1: a throttle ends the current pass
//! (the kernel sleeps and then finishes the pass); kswapd repeats the pass at the
//! same priority after the wait.

use crate::config::{DirtyConfig, DirtyThrottle};
use crate::control::{Reclaimer, ScanControl};
use crate::direct::PassTime;
use crate::pageout::{FolioStat, PageoutEnv};
use crate::policy::ReclaimPolicy;
use crate::{DEF_PRIORITY, SWAP_CLUSTER_MAX};
use mm::tracepoint::{ThrottleState, Tracepoint};
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
    /// v3.11 direct reclaim: after this wait, `wait_iff_congested()` too
    /// (the zone was flagged congested); it sleeps only if some device is
    /// still congested when the first wait ends.
    pub then_iff_congested: bool,
}

fn ask(sc: &mut ScanControl, reason: ThrottleReason) {
    ask_then(sc, reason, false);
}

fn ask_then(sc: &mut ScanControl, reason: ThrottleReason, then_iff_congested: bool) {
    if sc.throttle.is_none() {
        sc.throttle = Some(Throttle { reason, then_iff_congested });
    }
}

/// One direct reclaim call in flight, as the engine records it (S-TH2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InFlight {
    /// When it starts holding pages (ns): after its sleeps.
    pub from_ns: u64,
    /// When it ends (ns).
    pub end_ns: u64,
    /// Pages it holds isolated (anon, file).
    pub held: [u64; 2],
}

impl InFlight {
    /// The record of a call that isolated `isolated` pages (anon, file) and
    /// works from `from_ns` to `end_ns`: one `SWAP_CLUSTER_MAX` batch split in
    /// proportion, or `None` if it isolated nothing.
    pub fn of(isolated: [u64; 2], from_ns: u64, end_ns: u64) -> Option<InFlight> {
        let total = isolated[0] + isolated[1];
        (total > 0).then(|| InFlight { from_ns, end_ns, held: isolated.map(|n| SWAP_CLUSTER_MAX * n / total) })
    }
}

/// The pages other direct reclaimers hold isolated while one reclaim call
/// runs, read at the call's advancing time.
#[derive(Clone, Debug, Default)]
pub struct Isolating {
    /// The calls in flight when the call began, by end time.
    by_end: Vec<InFlight>,
    /// Those that start holding pages later, by start time (few: those asleep).
    by_start: Vec<InFlight>,
    /// `by_end[..ended]` have ended and `by_start[..started]` started by the last time read.
    ended: usize,
    started: usize,
    /// Pages held at the last time read.
    held: [u64; 2],
}

impl Isolating {
    /// The calls `by_end` (ordered by end time, all ending after `now`) seen by a call beginning at `now`.
    pub fn new(by_end: Vec<InFlight>, now: u64) -> Isolating {
        debug_assert!(by_end.windows(2).all(|w| w[0].end_ns <= w[1].end_ns) && by_end.iter().all(|r| r.end_ns > now));
        let mut by_start: Vec<InFlight> = by_end.iter().filter(|r| r.from_ns > now).copied().collect();
        by_start.sort_unstable_by_key(|r| r.from_ns);
        let held = by_end.iter().filter(|r| r.from_ns <= now).fold([0, 0], |h, r| add(h, r.held));
        Isolating { by_end, by_start, ended: 0, started: 0, held }
    }

    /// Pages of type `ty` held isolated at `now` (not before the last time
    /// read) exceed `limit`.
    fn over(&mut self, ty: usize, limit: u64, now: u64) -> bool {
        while let Some(r) = self.by_start.get(self.started).filter(|r| r.from_ns <= now) {
            self.held = add(self.held, r.held);
            self.started += 1;
        }
        while let Some(r) = self.by_end.get(self.ended).filter(|r| r.end_ns <= now) {
            self.held = [self.held[0] - r.held[0], self.held[1] - r.held[1]];
            self.ended += 1;
        }
        self.held[ty] > limit
    }

    /// The first time pages of type `ty` held drop to at most `limit` (after [`Isolating::over`]).
    fn drops_to(&self, ty: usize, limit: u64) -> Option<u64> {
        let (mut held, mut starts) = (self.held[ty], self.by_start[self.started..].iter().peekable());
        self.by_end[self.ended..].iter().find_map(|r| {
            while let Some(s) = starts.next_if(|s| s.from_ns <= r.end_ns) {
                held += s.held[ty];
            }
            held -= r.held[ty];
            (held <= limit).then_some(r.end_ns)
        })
    }
}

fn add(a: [u64; 2], b: [u64; 2]) -> [u64; 2] {
    [a[0] + b[0], a[1] + b[1]]
}

/// `reclaim_throttle(VMSCAN_THROTTLE_ISOLATED)`'s timeout, HZ/50.
const ISOLATED_TIMEOUT_NS: u64 = 20_000_000;
/// Before v5.16 (S-TH3): `msleep(100)`, or `congestion_wait(HZ/10)`.
const ISOLATED_SLEEP_NS: u64 = 100_000_000;

/// `too_many_isolated()` before a direct reclaimer's inactive batch of type
/// `ty` (0 anon, 1 file) whose inactive list has `inactive` pages: other
/// reclaimers hold more than `inactive / 8` (the caller may do IO and FS).
/// Then the reclaimer sleeps once (`sc.slept_ns`), letting time pass through
/// `clock`; returns true if the batch must be skipped (still too many).
pub fn too_many_isolated(
    mm: &mut Mm,
    policy: &mut dyn ReclaimPolicy,
    sc: &mut ScanControl,
    clock: &mut dyn PassTime,
    (cfg, ty, inactive): (&DirtyConfig, usize, u64),
) -> bool {
    if sc.reclaimer != Reclaimer::Direct {
        return false;
    }
    let limit = inactive >> 3;
    let now = sc.now_ns;
    if !sc.isolating.over(ty, limit, now) {
        return false;
    }
    let (timeout, reason) = if cfg.throttle == DirtyThrottle::Throttle {
        (ISOLATED_TIMEOUT_NS, ThrottleState::Isolated)
    } else {
        (ISOLATED_SLEEP_NS, ThrottleState::CongestionWait)
    };
    let woken = sc.isolating.drops_to(ty, limit).filter(|_| reason == ThrottleState::Isolated);
    let wake = woken.map_or(now + timeout, |at| at.min(now + timeout));
    sc.slept_ns += wake - now;
    sc.now_ns = wake;
    let (usec_timeout, usec_delayed) = (timeout / 1000, (wake - now) / 1000);
    // The node shrunk; a reclaim over every node's pages reports node 0.
    let nid = sc.nid.unwrap_or(0);
    mm.trace_at(wake, || Tracepoint::Throttled { nid, usec_timeout, usec_delayed, reason });
    clock.pass_time(mm, policy, sc);
    sc.isolating.over(ty, limit, wake)
}

/// The end of `shrink_inactive_list()` for one batch: node (or, with per-zone
/// lists, zone) flags and waits of the 3.x kernels, the flusher wake-up of
/// today's. `nr_taken` is the batch's size.
pub fn after_inactive_batch(
    mm: &mut Mm,
    sc: &mut ScanControl,
    cfg: &DirtyConfig,
    env: PageoutEnv,
    stat: &FolioStat,
    nr_taken: u64,
) {
    let global = !sc.reclaimer.is_cgroup();
    let direct = sc.reclaimer != Reclaimer::Kswapd;
    let all_unqueued = stat.nr_unqueued_dirty == nr_taken;
    let all_dirty_congested = global && stat.nr_dirty > 0 && stat.nr_dirty == stat.nr_congested;
    let flags = &mut mm.dirty;
    match cfg.throttle {
        DirtyThrottle::IffCongested => {
            // v3.9: ZONE_CONGESTED comes from shrink_page_list's own count.
            flags.pgdat_congested |= all_dirty_congested;
            let shift = (DEF_PRIORITY - sc.priority).max(0);
            let many_writeback = stat.nr_writeback > 0 && stat.nr_writeback >= nr_taken >> shift;
            if many_writeback && flags.pgdat_congested && env.fs_congested {
                ask(sc, ThrottleReason::IffCongested);
            }
        }
        DirtyThrottle::Stall => {
            flags.pgdat_writeback |= stat.nr_writeback > 0 && stat.nr_writeback == nr_taken;
            flags.pgdat_congested |= all_dirty_congested;
            flags.pgdat_dirty |= global && all_unqueued;
            // wait_iff_congested(): every reclaimer but kswapd; sleeps only with
            // the zone flagged congested and a device congested.
            let iff = direct && flags.pgdat_congested && env.fs_congested;
            if global && (all_unqueued || stat.nr_immediate > 0) {
                ask_then(sc, ThrottleReason::CongestionWait, iff);
            } else if iff {
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

    /// One batch of `taken` pages at `priority` with `stat`, on a node whose
    /// device is `fs_congested`: the wait asked for (reason, then
    /// `wait_iff_congested`), the flags [dirty, writeback, congested] and the
    /// flusher wake-up.
    fn batch(
        throttle: DirtyThrottle,
        (reclaimer, priority): (Reclaimer, i32),
        stat: FolioStat,
        taken: u64,
        fs_congested: bool,
    ) -> (Option<(ThrottleReason, bool)>, [bool; 3], bool) {
        let mut mm = Mm::new(64, 0);
        let mut sc = ScanControl::new(reclaimer, 32);
        sc.priority = priority;
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
        let wait = sc.throttle.map(|t| (t.reason, t.then_iff_congested));
        (wait, [f.pgdat_dirty, f.pgdat_writeback, f.pgdat_congested], sc.wake_flusher)
    }

    fn run(
        throttle: DirtyThrottle,
        reclaimer: Reclaimer,
        stat: FolioStat,
        taken: u64,
        fs_congested: bool,
    ) -> (Option<ThrottleReason>, [bool; 3], bool) {
        let (wait, flags, wake) = batch(throttle, (reclaimer, DEF_PRIORITY), stat, taken, fs_congested);
        (wait.map(|w| w.0), flags, wake)
    }

    const CW: ThrottleReason = ThrottleReason::CongestionWait;
    const IFF: ThrottleReason = ThrottleReason::IffCongested;

    #[test]
    fn v311_stalls_on_a_batch_of_unqueued_dirty_pages_and_flags_the_node() {
        let stat = FolioStat { nr_dirty: 32, nr_unqueued_dirty: 32, ..Default::default() };
        let (t, flags, _) = run(DirtyThrottle::Stall, Reclaimer::Kswapd, stat, 32, false);
        assert_eq!(t, Some(CW));
        assert_eq!(flags, [true, false, false]);
        // One clean page in the batch: no flag, no stall.
        let stat = FolioStat { nr_dirty: 31, nr_unqueued_dirty: 31, ..Default::default() };
        assert_eq!(run(DirtyThrottle::Stall, Reclaimer::Kswapd, stat, 32, false), (None, [false, false, false], false));
    }

    #[test]
    fn v311_stalls_kswapd_on_immediate_pages() {
        let stat = FolioStat { nr_dirty: 8, nr_writeback: 4, nr_immediate: 4, nr_congested: 4, ..Default::default() };
        let (t, flags, _) = run(DirtyThrottle::Stall, Reclaimer::Kswapd, stat, 8, false);
        assert_eq!(t, Some(CW));
        assert_eq!(flags, [false, false, false]);
        let stat = FolioStat { nr_dirty: 8, nr_writeback: 8, nr_congested: 8, ..Default::default() };
        assert_eq!(run(DirtyThrottle::Stall, Reclaimer::Kswapd, stat, 8, false), (None, [false, true, true], false));
    }

    /// v3.11's ZONE_WRITEBACK needs every page taken under writeback at any
    /// priority; v3.9's wait scaled the share with priority. At priority 10 a
    /// batch of 32 with 8 writeback pages: 32 >> (12 - 10) = 8, so v3.9 waits
    /// (zone congested, device congested); v3.11 sets no flag, nor at 31 of 32.
    #[test]
    fn v311_writeback_flag_needs_the_whole_batch_v39_wait_scales_with_priority() {
        let eight = FolioStat { nr_dirty: 8, nr_writeback: 8, nr_congested: 8, ..Default::default() };
        assert_eq!(batch(DirtyThrottle::Stall, (Reclaimer::Kswapd, 10), eight, 32, false).1, [false, false, true]);
        let all = FolioStat { nr_dirty: 32, nr_writeback: 32, nr_congested: 32, ..Default::default() };
        assert_eq!(batch(DirtyThrottle::Stall, (Reclaimer::Kswapd, 10), all, 32, false).1, [false, true, true]);
        // v3.9, the zone already flagged congested by its own count (every dirty page left congested).
        let wait = |priority, writeback| {
            let stat = FolioStat { nr_dirty: 4, nr_congested: 4, nr_writeback: writeback, ..Default::default() };
            batch(DirtyThrottle::IffCongested, (Reclaimer::Kswapd, priority), stat, 32, true).0
        };
        assert_eq!(
            (wait(10, 8), wait(10, 7), wait(11, 8), wait(11, 16)),
            (Some((IFF, false)), None, None, Some((IFF, false)))
        );
    }

    /// v3.11: a direct reclaimer whose batch was all unqueued dirty stalls in
    /// congestion_wait as kswapd does, then in wait_iff_congested if the zone is
    /// congested (all 32 pages dirty on a congested device); kswapd never
    /// calls the second. Memory-cgroup reclaim sets no flag and does not stall,
    /// but does wait iff congested.
    #[test]
    fn v311_direct_reclaim_stalls_then_waits_iff_congested() {
        let stat = FolioStat { nr_dirty: 32, nr_unqueued_dirty: 32, nr_congested: 32, ..Default::default() };
        let direct = batch(DirtyThrottle::Stall, (Reclaimer::Direct, DEF_PRIORITY), stat, 32, true);
        assert_eq!(direct, (Some((CW, true)), [true, false, true], false));
        let quiet = batch(DirtyThrottle::Stall, (Reclaimer::Direct, DEF_PRIORITY), stat, 32, false);
        assert_eq!(quiet, (Some((CW, false)), [true, false, true], false));
        let kswapd = batch(DirtyThrottle::Stall, (Reclaimer::Kswapd, DEF_PRIORITY), stat, 32, true);
        assert_eq!(kswapd, (Some((CW, false)), [true, false, true], false));
        assert_eq!(run(DirtyThrottle::Stall, Reclaimer::Memcg, stat, 32, true), (None, [false, false, false], false));
        let mut mm = Mm::new(64, 0);
        mm.dirty.pgdat_congested = true;
        let mut sc = ScanControl::new(Reclaimer::Memcg, 32);
        let env = PageoutEnv {
            fs_congested: true,
            dirty: DirtyConfig { throttle: DirtyThrottle::Stall, ..DirtyConfig::default() },
            ..PageoutEnv::TODAY
        };
        after_inactive_batch(&mut mm, &mut sc, &env.dirty, env, &stat, 32);
        assert_eq!(sc.throttle, Some(Throttle { reason: IFF, then_iff_congested: false }));
    }

    #[test]
    fn wait_iff_congested_sleeps_only_with_a_congested_node_and_device() {
        let stat = FolioStat { nr_dirty: 8, nr_writeback: 8, nr_congested: 8, ..Default::default() };
        assert_eq!(run(DirtyThrottle::IffCongested, Reclaimer::Kswapd, stat, 8, true).0, Some(IFF));
        assert_eq!(run(DirtyThrottle::IffCongested, Reclaimer::Kswapd, stat, 8, false).0, None);
        // v3.11 direct reclaim, congested node and device.
        let stat = FolioStat { nr_dirty: 2, nr_congested: 2, nr_writeback: 2, ..Default::default() };
        assert_eq!(run(DirtyThrottle::Stall, Reclaimer::Direct, stat, 32, true).0, Some(IFF));
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
