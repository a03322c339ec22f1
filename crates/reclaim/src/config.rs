//! Kernel knobs and the feature flags that distinguish kernel versions: each
//! field, its default and its declaration ([`KNOBS`]: key, help, the kernel
//! versions that had it) in this one file. Profiles derive their flags from
//! the declared histories (`engine::profile`).

pub use crate::policy::mglru::config::LruGenConfig;
use crate::scale::ScaleModel;
pub use crate::shrinker::ShrinkerConfig;
use knobs::{bool_knob, History, Kind, Knob, Version};

/// How `get_scan_count` balances anon against file pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Balance {
    /// Before v5.8: `recent_scanned / recent_rotated` ratios weighted by swappiness.
    Rotation,
    /// v5.8 (seed 000): refault IO cost in raw pages; rotations count only VM_EXEC re-activations.
    RefaultCost,
    /// v6.2 (`0538a82c39e9`): cost = IO x 32 + rotations, all unreclaimed scans are rotations.
    WeightedCost,
    /// Seed 000 as posted (2016 RFC on v4.7): refaults of `PG_workingset` pages and
    /// swap-ins cost IO x 32, rotations (pages activated by reclaim) cost 1;
    /// reclaim writeback is no cost; no [1/3, 2/3] limit; decay at 1/8 of the LRU.
    Rfc2016,
}

impl Balance {
    /// The flag value's name, as accepted by `--set lru_balance=...`.
    pub fn name(self) -> &'static str {
        match self {
            Balance::Rotation => "rotation",
            Balance::RefaultCost => "refault-cost",
            Balance::WeightedCost => "weighted-cost",
            Balance::Rfc2016 => "rfc-2016",
        }
    }
    /// Parses a flag value name.
    pub fn from_name(s: &str) -> Option<Balance> {
        [Balance::Rotation, Balance::RefaultCost, Balance::WeightedCost, Balance::Rfc2016]
            .into_iter()
            .find(|b| b.name() == s)
    }
}

/// How reclaim waits when it meets dirty and writeback pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DirtyThrottle {
    /// v3.9: `wait_iff_congested(HZ/10)` after a batch with many writeback pages,
    /// which sleeps only if the node is flagged congested and a device is congested.
    IffCongested,
    /// v3.11 (e2be15f and the seed-003 follow-up): node flags set per batch;
    /// `congestion_wait(HZ/10)` when the batch was all unqueued dirty pages or
    /// kswapd met `PG_reclaim` pages under writeback (`nr_immediate`); direct
    /// reclaim also `wait_iff_congested`.
    Stall,
    /// v5.16+: node flags set per `shrink_node` pass, `reclaim_throttle()` with
    /// reasons WRITEBACK (HZ/10, early wake after 32 pages written per waiter) and
    /// CONGESTED (one jiffy); the flusher is woken when a batch is all unqueued dirty.
    Throttle,
}

impl DirtyThrottle {
    /// The flag value's name, as accepted by `--set dirty_throttle=...`.
    pub fn name(self) -> &'static str {
        match self {
            DirtyThrottle::IffCongested => "iff-congested",
            DirtyThrottle::Stall => "stall",
            DirtyThrottle::Throttle => "throttle",
        }
    }
    /// Parses a flag value name.
    pub fn from_name(s: &str) -> Option<DirtyThrottle> {
        [DirtyThrottle::IffCongested, DirtyThrottle::Stall, DirtyThrottle::Throttle].into_iter().find(|b| b.name() == s)
    }
}

/// Feature flags of reclaim's dirty/writeback handling (seed 003 and later).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DirtyConfig {
    /// `kswapd_write_at_priority` (before v3.11): kswapd writes dirty file pages
    /// itself whenever its priority is below `DEF_PRIORITY - 2`; off: only while
    /// the node is flagged dirty (`ZONE_TAIL_LRU_DIRTY` / `PGDAT_DIRTY`).
    pub kswapd_write_at_priority: bool,
    /// `kswapd_flat_priority` (v3.11, "flatten kswapd priority loop"): each pass
    /// aims at the high watermark and priority is raised only when scanning fell
    /// short; off (v3.9): a pass scans its whole budget, kswapd restarts at
    /// `DEF_PRIORITY` after a priority that reclaimed 32 pages.
    pub kswapd_flat_priority: bool,
    /// `dirty_activate` (v4.13): dirty and writeback file pages are activated out
    /// of the way and kswapd writes only pages it has seen twice (`PG_reclaim`);
    /// off: they are kept on the inactive list.
    pub dirty_activate: bool,
    /// `dirty_throttle`: how reclaim waits for writeback.
    pub throttle: DirtyThrottle,
    /// `is_dirty_writeback` (v3.11, seed 003's follow-up): reclaim asks the
    /// filesystem whether a file page is dirty or under writeback
    /// (`a_ops->is_dirty_writeback`; from its buffers on ext3); off: the page
    /// flags alone (`PageDirty`, `PageWriteback`).
    pub is_dirty_writeback: bool,
}

impl DirtyConfig {
    /// Today's behaviour.
    pub const TODAY: DirtyConfig = DirtyConfig {
        kswapd_write_at_priority: false,
        kswapd_flat_priority: true,
        dirty_activate: true,
        throttle: DirtyThrottle::Throttle,
        is_dirty_writeback: true,
    };
}

impl Default for DirtyConfig {
    /// Today's behaviour.
    fn default() -> Self {
        DirtyConfig::TODAY
    }
}

/// Reclaim knobs (kernel names) and feature flags, resolved and validated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReclaimConfig {
    /// `vm.swappiness`, 0..=200.
    pub swappiness: u32,
    /// `lru_balance`: which `get_scan_count` form is used.
    pub balance: Balance,
    /// `cache_challenges_anon` (v5.8, "let cache workingset challenge anon"): file
    /// refault distance is compared with active file + anon (if swap), not active file alone.
    pub cache_challenges_anon: bool,
    /// `anon_start_inactive` (v5.9): new and swapped-in anon pages start on the inactive list.
    pub anon_start_inactive: bool,
    /// `anon_ratio_1to1` (v5.9, temporary patch 1/6): anon active:inactive target is 1:1.
    pub anon_ratio_1to1: bool,
    /// `anon_workingset` (v5.9): shadow entries in the swap cache, refault detection for anon.
    pub anon_workingset: bool,
    /// `swapin_workingset` (v4.20 .. v5.9 at least; gone by v6.1): a page read into the
    /// swap cache (`__read_swap_cache_async`) gets `PG_workingset`; the
    /// synchronous-device path that skips the swap cache does not set it.
    pub swapin_workingset: bool,
    /// `tiny_file_needs_anon` (v4.12, "avoid thrashing anon lru when free + file
    /// is low"): a tiny file LRU forces anon-only scanning only while the inactive
    /// anon list is not low and has pages at this priority; before, file + free
    /// at or below the high watermarks alone forced it.
    pub tiny_file_needs_anon: bool,
    /// Dirty/writeback handling flags.
    pub dirty: DirtyConfig,
    /// `file_ratio_1to1` (before Rik van Riel's "reduce size of inactive file list",
    /// 2016): the file active:inactive target is 1:1 instead of `sqrt(10 * GB)`.
    pub file_ratio_1to1: bool,
    /// `refaults_deactivate` (v4.20, moved to the reclaim root in v5.5): new file
    /// workingset activations allow deactivating the active file list and end cache
    /// trim mode. Without it only the inactive:active ratio decides.
    pub refaults_deactivate: bool,
    /// `cgroup_reclaim_vmstat` (v7.1, "mm: move pgscan and pgsteal to node
    /// stats"): a group's reclaim for its limits (`memory.max`, `memory.high`)
    /// counts in `/proc/vmstat`'s `pgscan_direct`/`pgsteal_direct`; before,
    /// only global reclaim did.
    pub cgroup_reclaim_vmstat: bool,
    /// `scan_eligible_zones` (v4.10, "mm, vmscan: consider eligible zones in
    /// get_scan_count"): a reclaim limited to zones up to `sc.reclaim_idx`
    /// sizes each list's scan by its pages in those zones; before (v4.8's node
    /// LRUs), by the whole list.
    pub scan_eligible_zones: bool,
    /// Multi-gen LRU knobs (used when `lru=mglru`).
    pub lru_gen: LruGenConfig,
    /// Slab shrinker knobs.
    pub shrinker: ShrinkerConfig,
    /// The machine this one stands for (`memory.scaled_from`; not a knob of
    /// this crate: the engine sets it from the machine's size).
    pub scale: ScaleModel,
}

impl Default for ReclaimConfig {
    /// The newest behaviour (v6.2 and later) with the default swappiness.
    fn default() -> Self {
        ReclaimConfig {
            swappiness: 60,
            balance: Balance::WeightedCost,
            cache_challenges_anon: true,
            anon_start_inactive: true,
            anon_ratio_1to1: false,
            anon_workingset: true,
            swapin_workingset: false,
            tiny_file_needs_anon: true,
            dirty: DirtyConfig::default(),
            file_ratio_1to1: false,
            refaults_deactivate: true,
            cgroup_reclaim_vmstat: false,
            scan_eligible_zones: true,
            lru_gen: LruGenConfig::default(),
            shrinker: ShrinkerConfig::default(),
            scale: ScaleModel::IDENTITY,
        }
    }
}

const fn v(major: u16, minor: u16) -> Version {
    Version::new(major, minor)
}

/// Every knob of reclaim shared by the policies, in the order `reclaimsim
/// settings` lists them (a policy's own knobs are in its registry entry).
pub const KNOBS: &[Knob<ReclaimConfig>] = &[
    Knob {
        key: "vm.swappiness",
        help: "relative IO cost of swapping vs file IO, 0..200 (kernel default 60)",
        kind: Kind::Integer,
        history: History::Tunable { since: v(2, 6) },
        get: |c| c.swappiness.to_string(),
        set: |c, v| {
            c.swappiness = knobs::parse_u64(v, 0, 200)? as u32;
            Ok(())
        },
    },
    Knob {
        key: "lru_balance",
        help: "get_scan_count form: rotation (<v5.8), rfc-2016 (seed 000 as posted), refault-cost (v5.8, seed 000 as merged), weighted-cost (v6.2)",
        kind: Kind::Choice,
        // KERNEL: v5.8 "mm: balance LRU lists based on relative thrashing"; v6.2 0538a82c39e9.
        history: History::Forms(&[(v(2, 6), "rotation"), (v(5, 8), "refault-cost"), (v(6, 2), "weighted-cost")]),
        get: |c| c.balance.name().into(),
        set: |c, v| {
            c.balance = Balance::from_name(v).ok_or("rotation, rfc-2016, refault-cost or weighted-cost")?;
            Ok(())
        },
    },
    bool_knob!(
        "cache_challenges_anon",
        cache_challenges_anon,
        History::since(5, 8),
        "v5.8: file refaults are compared with active file + anon, not active file alone"
    ),
    bool_knob!(
        "anon_start_inactive",
        anon_start_inactive,
        History::since(5, 9),
        "v5.9 (seed 004): new and swapped-in anon pages start inactive; anon needs two looks to activate"
    ),
    bool_knob!(
        "anon_ratio_1to1",
        anon_ratio_1to1,
        History::Patch { series: "seed 004 patch 1/6" },
        "v5.9 patch 1/6 (seed 004, temporary): anon active:inactive target 1:1"
    ),
    bool_knob!(
        "file_ratio_1to1",
        file_ratio_1to1,
        // KERNEL: 59dc76b0d4df "mm: vmscan: reduce size of inactive file list" (v4.7).
        History::until(4, 6),
        "before 2016's 'reduce size of inactive file list': file active:inactive target 1:1"
    ),
    bool_knob!(
        "refaults_deactivate",
        refaults_deactivate,
        History::since(4, 20),
        "v4.20+: file workingset activations force deactivation and end cache trim mode"
    ),
    bool_knob!(
        "anon_workingset",
        anon_workingset,
        History::since(5, 9),
        "v5.9 (seed 004): shadow entries in swap cache, refault detection for anon"
    ),
    bool_knob!(
        "tiny_file_needs_anon",
        tiny_file_needs_anon,
        History::since(4, 12),
        "v4.12+: a tiny file LRU (file + free <= high watermarks) forces anon-only scanning only if inactive anon is not low and has pages at this priority"
    ),
    bool_knob!(
        "cgroup_reclaim_vmstat",
        cgroup_reclaim_vmstat,
        // KERNEL: "mm: move pgscan and pgsteal to node stats" (posted February 2026,
        // after 7.0's merge window; the 7.2 guest counts this way, 6.12 does not).
        History::since(7, 1),
        "v7.1+: a group's reclaim for its memory.max/memory.high counts in /proc/vmstat's pgscan_direct/pgsteal_direct (memory.reclaim's counts as _proactive, not modelled); before, global reclaim only"
    ),
    bool_knob!(
        "scan_eligible_zones",
        scan_eligible_zones,
        // KERNEL: Michal Hocko's "mm, vmscan: consider eligible zones in get_scan_count"
        // (posted 2017-01-17 as a fix of v4.8's node LRUs, merged for v4.10).
        History::since(4, 10),
        "v4.10+: reclaim limited to low zones (kswapd woken for DMA/DMA32, a GFP_DMA32 allocation) scans each list in proportion to its pages in those zones; off (v4.8..v4.9): to the whole list, skipping the rest"
    ),
    bool_knob!(
        "swapin_workingset",
        swapin_workingset,
        History::Behaviour { since: Some(v(4, 20)), until: Some(v(6, 0)) },
        "v4.20..v5.9: pages read into the swap cache get PG_workingset (refault stall, restore on their next refault); not on the synchronous-device bypass"
    ),
    bool_knob!(
        "kswapd_write_at_priority",
        dirty.kswapd_write_at_priority,
        History::until(3, 10),
        "before v3.11 (seed 003): kswapd writes dirty file pages itself below priority 10; off: only while the node is flagged dirty"
    ),
    bool_knob!(
        "kswapd_flat_priority",
        dirty.kswapd_flat_priority,
        History::since(3, 11),
        "v3.11: kswapd passes aim at the high watermark, priority drops when scanning falls short; off (v3.9): full passes, restart at priority 12 after 32 reclaimed"
    ),
    bool_knob!(
        "dirty_activate",
        dirty.dirty_activate,
        History::since(4, 13),
        "v4.13: dirty/writeback file pages are activated and kswapd writes only pages seen twice; off: they stay on the inactive list"
    ),
    bool_knob!(
        "is_dirty_writeback",
        dirty.is_dirty_writeback,
        // KERNEL: b45972265f82 "mm: vmscan: take page buffers dirty and locked state
        // into account" (v3.11): page_check_dirty_writeback() and the a_ops hook.
        History::since(3, 11),
        "v3.11 (seed 003): reclaim counts a file page as dirty / under writeback by asking its filesystem (ext3: any buffer dirty / locked); off: by PageDirty / PageWriteback alone. Only ext3 (fs.type) gives a different answer"
    ),
    Knob {
        key: "dirty_throttle",
        help: "reclaim waits for writeback: iff-congested (v3.9), stall (v3.11, seed 003), throttle (v5.16+ reclaim_throttle)",
        kind: Kind::Choice,
        history: History::Forms(&[(v(2, 6), "iff-congested"), (v(3, 11), "stall"), (v(5, 16), "throttle")]),
        get: |c| c.dirty.throttle.name().into(),
        set: |c, v| {
            c.dirty.throttle = DirtyThrottle::from_name(v).ok_or("iff-congested, stall or throttle")?;
            Ok(())
        },
    },
];
