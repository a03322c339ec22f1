//! Per-zone LRU lists, as every kernel before v4.8 had them (`lru_layout=zone`).
//!
//! Until v4.8 ("mm, vmscan: move LRU lists to node") each zone had its own
//! lruvec: a page sits on the lists of the zone its frame is in. [`ZonedPolicy`]
//! holds one policy per zone of the machine, routes each page's calls to the
//! lruvec of its frame's zone, and in `shrink_node` walks the zones the way
//! the v3.x kernels did (mm/vmscan.c of v3.9 and v3.11):
//! - direct and memcg reclaim: `shrink_zones()`: the zonelist's zones up to
//!   `sc.reclaim_idx` (the allocation's highest zone), highest first; a zone
//!   found unreclaimable is passed over below `DEF_PRIORITY`.
//! - kswapd: `balance_pgdat()`'s zone loop: `end_zone` is the highest zone up
//!   to the classzone below its high watermark; every zone from the lowest up
//!   to it that is not above high plus the balance gap (the smaller of the low
//!   watermark and 1% of the zone) plus its reserve against `end_zone` is
//!   shrunk. With v3.11's flat priority (`kswapd_shrink_zone()`) each zone is
//!   reclaimed towards its own high watermark, at least a batch; v3.9 scans
//!   each zone's whole budget. A zone that kswapd scanned six times over its
//!   reclaimable pages without freeing one is unreclaimable (`zone_reclaimable()`,
//!   `all_unreclaimable`) until pages are freed to it.
//!
//! The dirty, writeback and congested flags are the zone's (`ZONE_TAIL_LRU_DIRTY`,
//! `ZONE_WRITEBACK`, `ZONE_CONGESTED`, [`ZoneFlags`]): set by the batches taken
//! from it, read by its own pageout and waits; kswapd clears them for a zone
//! it found balanced, and the writeback flag after each shrink of the zone.
//!
//! While a zone is shrunk `sc.zone` names it: `get_scan_count()`'s "file
//! pages plus free pages at most the high watermark: scan anon only" is then
//! the zone's (v3.9: the zone's free pages against its own high watermark),
//! and `mm_vmscan_lru_shrink_inactive` reports its `zid`.
//!
//! Each zone counts what was scanned and reclaimed in it (`pgscan_kswapd_normal`
//! and the rest of v3.9's per-zone counters) in [`mm::ZoneStat`].
//!
//! Simplifications (listed in docs/model.md):
//! - S-ZL1: a refault is judged by the non-resident clock of the zone the page
//!   comes back to (v3.15..v4.7 read the clock of the zone it was evicted from).
//! - S-ZL2: slabs are shrunk once per pass after the zones (v3.x kswapd shrank
//!   them after each zone, and counted them in `zone_reclaimable`).
//! - S-ZL3: v3.11 kswapd's priority drops when the pages scanned over all the
//!   zones fell short of their summed targets (the kernel keeps it when any one
//!   zone reached its own).
//! - S-ZL4: a zone's `pages_scanned` restarts when its reclaim frees a page, its
//!   unreclaimable mark clears when its free pages rose since it was set (the
//!   kernel does both at every page freed to the zone).
//! - S-ZL5: with several nodes direct reclaim follows the zonelist of the node
//!   it is bound to, else node 0's.

use crate::control::{Reclaimer, ScanControl};
use crate::direct::PassTime;
use crate::pageout::PageoutEnv;
use crate::policy::{LruSizes, ReclaimPolicy};
use crate::routed::{forward_to_lruvecs, RoutedClock};
use crate::{DEF_PRIORITY, SWAP_CLUSTER_MAX};
use mm::zone::ZoneFlags;
use mm::{Mm, Pfn, VmEvent, Watermark, ZoneId};

/// KERNEL: `KSWAPD_ZONE_BALANCE_GAP_RATIO` (v3.x): kswapd leaves alone a zone
/// above its high watermark plus 1/100 of it (or its low watermark if smaller).
pub const KSWAPD_ZONE_BALANCE_GAP_RATIO: u64 = 100;

/// KERNEL: `zone_reclaimable()` (v3.x): a zone stays reclaimable until it has
/// been scanned this many times over its reclaimable pages.
pub const ZONE_RECLAIMABLE_SCANS: u64 = 6;

/// One lruvec per zone, reclaimed zone by zone.
pub struct ZonedPolicy {
    /// The lruvec of each zone, by index into `Mm::zones`.
    lruvecs: Vec<Box<dyn ReclaimPolicy>>,
    /// Per zone: pages scanned since reclaim last freed one (`zone->pages_scanned`).
    pages_scanned: Vec<u64>,
    /// Per zone: its free pages when kswapd found it unreclaimable (`None`: reclaimable).
    unreclaimable: Vec<Option<u64>>,
}

impl ZonedPolicy {
    /// A zoned policy over `lruvecs`, one per zone of the machine in `Mm::zones` order.
    pub fn new(lruvecs: Vec<Box<dyn ReclaimPolicy>>) -> ZonedPolicy {
        let n = lruvecs.len();
        ZonedPolicy { lruvecs, pages_scanned: vec![0; n], unreclaimable: vec![None; n] }
    }

    /// The lruvec of zone `zone`.
    pub fn lruvec(&self, zone: usize) -> &dyn ReclaimPolicy {
        self.lruvecs[zone].as_ref()
    }

    fn of(&mut self, mm: &Mm, pfn: Pfn) -> &mut dyn ReclaimPolicy {
        self.lruvecs[mm.frames.zone_of(pfn)].as_mut()
    }

    /// `zone->all_unreclaimable`: set by kswapd, cleared once pages were freed to the zone (S-ZL4).
    pub fn all_unreclaimable(&mut self, mm: &Mm, zone: usize) -> bool {
        match self.unreclaimable[zone] {
            Some(free) if mm.zone_free(zone) > free => {
                self.unreclaimable[zone] = None;
                false
            }
            marked => marked.is_some(),
        }
    }

    /// `zone_reclaimable_pages()`: the zone's file pages, and its anon pages while swap has room.
    fn reclaimable_pages(&self, mm: &Mm, zone: usize) -> u64 {
        let s = self.lruvecs[zone].lru_sizes();
        let anon = if mm.nr_swap_pages() > 0 { s.inactive_anon + s.active_anon } else { 0 };
        s.inactive_file + s.active_file + anon
    }

    /// `shrink_zone()`: one pass over zone `zone`'s lruvec at `sc.priority`,
    /// its scans and steals credited to the zone.
    fn shrink_zone(
        &mut self,
        mm: &mut Mm,
        zone: usize,
        sc: &mut ScanControl,
        env: PageoutEnv,
        clock: &mut dyn PassTime,
    ) {
        const COUNTERS: [VmEvent; 4] =
            [VmEvent::PgscanKswapd, VmEvent::PgscanDirect, VmEvent::PgstealKswapd, VmEvent::PgstealDirect];
        let before = COUNTERS.map(|c| mm.stat.get(c));
        let reclaimed = sc.nr_reclaimed;
        // Every page of the lruvec is of this zone and node: nothing to skip or share.
        let (nid, reclaim_idx) = (sc.nid.take(), sc.reclaim_idx);
        sc.reclaim_idx = ZoneId::Movable;
        sc.zone = Some(zone);
        let mut routed = RoutedClock::new(clock, move |mm: &Mm, pfn| mm.frames.zone_of(pfn) == zone);
        // The zone's reclaim flags stand in for the node's while it is shrunk.
        swap_flags(mm, zone);
        self.lruvecs[zone].shrink_node(mm, sc, env, &mut routed);
        swap_flags(mm, zone);
        for pfn in routed.pending {
            self.of(mm, pfn).rotate_reclaimable(mm, pfn);
        }
        (sc.nid, sc.reclaim_idx, sc.zone) = (nid, reclaim_idx, None);
        let after = COUNTERS.map(|c| mm.stat.get(c));
        let [scan_k, scan_d, steal_k, steal_d] = [0, 1, 2, 3].map(|i| after[i] - before[i]);
        let st = &mut mm.zones[zone].stat;
        st.pgscan_kswapd += scan_k;
        st.pgscan_direct += scan_d;
        st.pgsteal_kswapd += steal_k;
        st.pgsteal_direct += steal_d;
        if sc.nr_reclaimed > reclaimed {
            self.pages_scanned[zone] = 0;
        } else {
            self.pages_scanned[zone] += scan_k + scan_d;
        }
    }

    /// `shrink_zones()`: direct and memcg reclaim over the zonelist (S-ZL5).
    fn shrink_zones(&mut self, mm: &mut Mm, sc: &mut ScanControl, env: PageoutEnv, clock: &mut dyn PassTime) {
        let list: Vec<usize> = mm.nodes[sc.nid.unwrap_or(0) as usize]
            .zonelist
            .iter()
            .copied()
            .filter(|&z| mm.zones[z].id <= sc.reclaim_idx && sc.nid.is_none_or(|n| n == mm.zones[z].node))
            .collect();
        for z in list {
            if sc.priority != DEF_PRIORITY && self.all_unreclaimable(mm, z) {
                continue;
            }
            self.shrink_zone(mm, z, sc, env, clock);
            if sc.throttle.is_some() {
                break;
            }
        }
    }

    /// `balance_pgdat()`'s zone loop for one priority (the caller, kswapd,
    /// found the node unbalanced). Leaves in `sc.nr_to_reclaim` the targets
    /// of the zones shrunk (S-ZL3) under v3.11's flat priority.
    fn balance_zones(&mut self, mm: &mut Mm, sc: &mut ScanControl, env: PageoutEnv, clock: &mut dyn PassTime) {
        let node = sc.nid.unwrap_or(0);
        let zones: Vec<usize> = (0..mm.zones.len())
            .filter(|&z| {
                let zone = &mm.zones[z];
                zone.node == node && zone.managed > 0 && zone.id <= sc.reclaim_idx
            })
            .collect();
        let below_high = |mm: &Mm, z: usize| mm.zone_free(z) <= mm.zones[z].wmark(Watermark::High);
        let Some(end) = zones.iter().rposition(|&z| below_high(mm, z)) else { return };
        // The balanced zones above end_zone forget their dirty and congested flags.
        for &z in &zones[end + 1..] {
            mm.zones[z].reclaim_flags = ZoneFlags::default();
        }
        let end_id = mm.zones[zones[end]].id;
        let flat = env.dirty.kswapd_flat_priority;
        let mut targets = 0;
        for &z in &zones[..=end] {
            if sc.priority != DEF_PRIORITY && self.all_unreclaimable(mm, z) {
                continue;
            }
            let zone = &mm.zones[z];
            let high = zone.wmark(Watermark::High);
            let gap = zone.wmark(Watermark::Low).min(zone.managed.div_ceil(KSWAPD_ZONE_BALANCE_GAP_RATIO));
            if mm.zone_free(z) > high + gap + zone.lowmem_reserve[end_id as usize] {
                continue;
            }
            if flat {
                sc.nr_to_reclaim = high.max(SWAP_CLUSTER_MAX);
                targets += sc.nr_to_reclaim;
            }
            self.shrink_zone(mm, z, sc, env, clock);
            if self.pages_scanned[z] >= ZONE_RECLAIMABLE_SCANS * self.reclaimable_pages(mm, z) {
                self.unreclaimable[z] = Some(mm.zone_free(z));
            }
            // kswapd_shrink_zone(): the writeback flag is learnt anew each time; a
            // zone shrunk to its high watermark (reserve against end_zone included)
            // is no longer dirty or congested.
            let zone = &mm.zones[z];
            let flags = if self.unreclaimable[z].is_none()
                && mm.zone_free(z) > zone.wmark(Watermark::High) + zone.lowmem_reserve[end_id as usize]
            {
                ZoneFlags::default()
            } else {
                ZoneFlags { writeback: false, ..zone.reclaim_flags }
            };
            mm.zones[z].reclaim_flags = flags;
            if sc.throttle.is_some() {
                break;
            }
        }
        if flat {
            sc.nr_to_reclaim = targets;
        }
    }
}

/// Exchanges zone `zone`'s reclaim flags with the node's (`mm.dirty`).
fn swap_flags(mm: &mut Mm, zone: usize) {
    let (node, own) = (&mut mm.dirty, &mut mm.zones[zone].reclaim_flags);
    std::mem::swap(&mut node.pgdat_dirty, &mut own.dirty);
    std::mem::swap(&mut node.pgdat_writeback, &mut own.writeback);
    std::mem::swap(&mut node.pgdat_congested, &mut own.congested);
}

impl ReclaimPolicy for ZonedPolicy {
    forward_to_lruvecs!();

    fn shrink_node(&mut self, mm: &mut Mm, sc: &mut ScanControl, env: PageoutEnv, clock: &mut dyn PassTime) {
        if sc.reclaimer == Reclaimer::Kswapd {
            self.balance_zones(mm, sc, env, clock);
        } else {
            self.shrink_zones(mm, sc, env, clock);
        }
    }

    /// `age_active_anon()` of every zone of the node (v3.x kswapd aged each zone it looked at).
    fn age_node(&mut self, mm: &mut Mm, sc: &mut ScanControl) {
        let node = sc.nid.unwrap_or(0);
        for (z, l) in self.lruvecs.iter_mut().enumerate() {
            if mm.zones[z].node == node {
                l.age_node(mm, sc);
            }
        }
    }

    fn flush_group_stats(&mut self, mm: &Mm) {
        self.lruvecs.iter_mut().for_each(|l| l.flush_group_stats(mm));
    }

    fn zone_lru_sizes(&self, zone: usize) -> Option<LruSizes> {
        Some(self.lruvecs[zone].lru_sizes())
    }

    fn check_invariants(&self, mm: &Mm) {
        for (z, l) in self.lruvecs.iter().enumerate() {
            l.check_invariants(mm);
            let total = l.lru_sizes().total();
            let listed = (0..mm.frames.len() as Pfn)
                .filter(|&pfn| mm.frames.zone_of(pfn) == z && mm.frames[pfn].flags.has(mm::PageFlags::LRU))
                .count() as u64;
            assert_eq!(listed, total, "zone {z}: {listed} of its frames are on an LRU, its lruvec lists {total}");
        }
    }
}
