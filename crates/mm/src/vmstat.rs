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
    /// KiB read from block devices (file and swap reads).
    Pgpgin = "pgpgin",
    /// KiB written to block devices.
    Pgpgout = "pgpgout",
    /// Pages read from swap.
    Pswpin = "pswpin",
    /// Pages written to swap.
    Pswpout = "pswpout",
    /// Pages allocated in ZONE_NORMAL.
    PgallocNormal = "pgalloc_normal",
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
    /// Direct reclaim entries for ZONE_NORMAL.
    AllocstallNormal = "allocstall_normal",
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
    /// OOM kills.
    OomKill = "oom_kill",
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
        assert!(names.iter().all(|n| n.chars().all(|c| c.is_ascii_lowercase() || c == '_')));
        names.sort();
        names.dedup();
        assert_eq!(names.len(), VmEvent::ALL.len());
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
