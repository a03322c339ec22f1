//! Event counters with the exact names of `/proc/vmstat`.
//!
//! Counters live in a fixed array indexed by [`VmEvent`]; each is incremented at
//! one place, where the kernel increments it. Gauges (`nr_*`) are not stored
//! here: they are read off the lists when a snapshot is taken.

macro_rules! vm_events {
    ($($(#[$doc:meta])* $variant:ident = $name:literal,)*) => {
        /// A cumulative `/proc/vmstat` event counter.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
        #[repr(u8)]
        pub enum VmEvent {
            $($(#[$doc])* $variant,)*
        }

        impl VmEvent {
            /// Every counter, in `/proc/vmstat` order.
            pub const ALL: &'static [VmEvent] = &[$(VmEvent::$variant,)*];
            /// The counter's `/proc/vmstat` name.
            pub fn name(self) -> &'static str {
                match self { $(VmEvent::$variant => $name,)* }
            }
        }
    };
}

vm_events! {
    /// Allocations on the node asked for (the preferred node of the policy).
    NumaHit = "numa_hit",
    /// Allocations on a node other than the one asked for.
    NumaMiss = "numa_miss",
    /// Allocations asked of a node and served by another (counted on the node asked of).
    NumaForeign = "numa_foreign",
    /// Allocations of the interleave policy on the node it chose.
    NumaInterleave = "numa_interleave",
    /// Allocations on the node the task runs on.
    NumaLocal = "numa_local",
    /// Allocations on a node other than the one the task runs on.
    NumaOther = "numa_other",
    /// KiB read from block devices (file and swap reads).
    Pgpgin = "pgpgin",
    /// KiB written to block devices.
    Pgpgout = "pgpgout",
    /// Pages read from swap.
    Pswpin = "pswpin",
    /// Pages written to swap.
    Pswpout = "pswpout",
    /// Pages allocated in ZONE_DMA.
    PgallocDma = "pgalloc_dma",
    /// Pages allocated in ZONE_DMA32.
    PgallocDma32 = "pgalloc_dma32",
    /// Pages allocated in ZONE_NORMAL.
    PgallocNormal = "pgalloc_normal",
    /// Pages allocated in ZONE_MOVABLE.
    PgallocMovable = "pgalloc_movable",
    /// Pages freed.
    Pgfree = "pgfree",
    /// Pages activated.
    Pgactivate = "pgactivate",
    /// Pages deactivated.
    Pgdeactivate = "pgdeactivate",
    /// All page faults.
    Pgfault = "pgfault",
    /// Page faults that needed I/O.
    Pgmajfault = "pgmajfault",
    /// Pages scanned on active lists (classic) or sorted (MGLRU).
    Pgrefill = "pgrefill",
    /// Pages reclaimed by kswapd.
    PgstealKswapd = "pgsteal_kswapd",
    /// Pages reclaimed by direct reclaim.
    PgstealDirect = "pgsteal_direct",
    /// Pages scanned by kswapd.
    PgscanKswapd = "pgscan_kswapd",
    /// Pages scanned by direct reclaim.
    PgscanDirect = "pgscan_direct",
    /// Direct reclaimers throttled in `throttle_direct_reclaim`.
    PgscanDirectThrottle = "pgscan_direct_throttle",
    /// Anon pages scanned by any reclaim.
    PgscanAnon = "pgscan_anon",
    /// File pages scanned by any reclaim.
    PgscanFile = "pgscan_file",
    /// Anon pages reclaimed by any reclaim.
    PgstealAnon = "pgsteal_anon",
    /// File pages reclaimed by any reclaim.
    PgstealFile = "pgsteal_file",
    /// Refaulting anon pages (had a shadow entry).
    WorkingsetRefaultAnon = "workingset_refault_anon",
    /// Refaulting file pages.
    WorkingsetRefaultFile = "workingset_refault_file",
    /// Anon refaults activated.
    WorkingsetActivateAnon = "workingset_activate_anon",
    /// File refaults activated.
    WorkingsetActivateFile = "workingset_activate_file",
    /// Activated anon refaults that were workingset at eviction.
    WorkingsetRestoreAnon = "workingset_restore_anon",
    /// Activated file refaults that were workingset at eviction.
    WorkingsetRestoreFile = "workingset_restore_file",
    /// Shadow-only page-cache tree nodes freed by the shadow shrinker.
    WorkingsetNodereclaim = "workingset_nodereclaim",
    /// Page-cache pages dropped by inode shrinking outside kswapd.
    Pginodesteal = "pginodesteal",
    /// Slab objects scanned by shrinkers.
    SlabsScanned = "slabs_scanned",
    /// Page-cache pages dropped by kswapd's inode shrinking.
    KswapdInodesteal = "kswapd_inodesteal",
    /// kswapd nap interrupted by a new wakeup.
    KswapdLowWmarkHitQuickly = "kswapd_low_wmark_hit_quickly",
    /// Node not balanced after kswapd's nap.
    KswapdHighWmarkHitQuickly = "kswapd_high_wmark_hit_quickly",
    /// `balance_pgdat` runs.
    Pageoutrun = "pageoutrun",
    /// Pages rotated to the inactive tail.
    Pgrotated = "pgrotated",
    /// Direct reclaim entries for allocations whose highest zone is ZONE_DMA.
    AllocstallDma = "allocstall_dma",
    /// Direct reclaim entries for allocations whose highest zone is ZONE_DMA32.
    AllocstallDma32 = "allocstall_dma32",
    /// Direct reclaim entries for allocations whose highest zone is ZONE_NORMAL.
    AllocstallNormal = "allocstall_normal",
    /// Direct reclaim entries for allocations whose highest zone is ZONE_MOVABLE.
    AllocstallMovable = "allocstall_movable",
    /// ZONE_DMA pages skipped by reclaim for lower zones (none lower: always 0).
    PgskipDma = "pgskip_dma",
    /// ZONE_DMA32 pages skipped by reclaim for lower zones.
    PgskipDma32 = "pgskip_dma32",
    /// ZONE_NORMAL pages skipped by reclaim for lower zones.
    PgskipNormal = "pgskip_normal",
    /// ZONE_MOVABLE pages skipped by reclaim for lower zones.
    PgskipMovable = "pgskip_movable",
    /// Pages written by reclaim's pageout.
    NrVmscanWrite = "nr_vmscan_write",
    /// Dirty pages marked for immediate reclaim.
    NrVmscanImmediateReclaim = "nr_vmscan_immediate_reclaim",
    /// File pages dirtied.
    NrDirtied = "nr_dirtied",
    /// Pages whose writeback completed.
    NrWritten = "nr_written",
    /// Swap readahead pages read.
    SwapRa = "swap_ra",
    /// Swap-cache hits on readahead pages.
    SwapRaHit = "swap_ra_hit",
    /// Pages loaded from zswap (v5.19).
    Zswpin = "zswpin",
    /// Pages stored in zswap (v5.19).
    Zswpout = "zswpout",
    /// Pages written back from zswap to the swap device (v6.8).
    Zswpwb = "zswpwb",
    /// OOM kills.
    OomKill = "oom_kill",
    /// kcompactd wakeups (`KCOMPACTD_WAKE`); here each `wakeup_kcompactd()` at
    /// the end of a watermark-boosted kswapd run (compaction is not modelled, S-KS1).
    CompactDaemonWake = "compact_daemon_wake",
}

impl VmEvent {
    /// The per-zone counter of `zone` in the family whose `ZONE_DMA` member is
    /// `self` ([`VmEvent::PgallocDma`], [`VmEvent::AllocstallDma`], [`VmEvent::PgskipDma`]).
    pub fn in_zone(self, zone: crate::ZoneId) -> VmEvent {
        debug_assert!(matches!(self, VmEvent::PgallocDma | VmEvent::AllocstallDma | VmEvent::PgskipDma));
        VmEvent::ALL[self as usize + zone as usize]
    }
}

/// The counter array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VmStat {
    counts: [u64; VmEvent::ALL.len()],
}

impl Default for VmStat {
    fn default() -> Self {
        VmStat { counts: [0; VmEvent::ALL.len()] }
    }
}

impl VmStat {
    /// Adds `n` to counter `ev`.
    #[inline]
    pub fn count(&mut self, ev: VmEvent, n: u64) {
        self.counts[ev as usize] += n;
    }
    /// The current value of `ev`.
    #[inline]
    pub fn get(&self, ev: VmEvent) -> u64 {
        self.counts[ev as usize]
    }
    /// Every counter with its name, in `/proc/vmstat` order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        VmEvent::ALL.iter().map(|&e| (e.name(), self.get(e)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_lowercase() {
        let mut names: Vec<_> = VmEvent::ALL.iter().map(|e| e.name()).collect();
        assert!(names.iter().all(|n| n.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')));
        names.sort();
        names.dedup();
        assert_eq!(names.len(), VmEvent::ALL.len());
    }

    #[test]
    fn zone_families_follow_the_zone_order() {
        for z in crate::ZoneId::ALL {
            for (base, family) in [(VmEvent::PgallocDma, "pgalloc"), (VmEvent::AllocstallDma, "allocstall")] {
                assert_eq!(base.in_zone(z).name(), format!("{family}_{}", z.name()));
            }
            assert_eq!(VmEvent::PgskipDma.in_zone(z).name(), format!("pgskip_{}", z.name()));
        }
    }

    #[test]
    fn every_scan_counter_has_a_steal_counter_per_actor() {
        // In the spirit of the kernel's reclaimer_offset(): scan and steal come in pairs.
        for actor in ["kswapd", "direct", "anon", "file"] {
            let scan = format!("pgscan_{actor}");
            let steal = format!("pgsteal_{actor}");
            assert!(VmEvent::ALL.iter().any(|e| e.name() == scan), "{scan}");
            assert!(VmEvent::ALL.iter().any(|e| e.name() == steal), "{steal}");
        }
    }
}
