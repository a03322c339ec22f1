//! `struct scan_control`: what one reclaim invocation wants and what it did.

use crate::throttle::{Isolating, Throttle};
use mm::{Pfn, VmEvent};

/// Who is reclaiming; picks the `*_kswapd` or `*_direct` counter variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reclaimer {
    /// The per-node kswapd thread.
    Kswapd,
    /// An allocating task in direct reclaim.
    Direct,
    /// A charging task reclaiming its memory cgroup down below its limit
    /// (`cgroup_reclaim(sc)`): no `*_kswapd`/`*_direct` or `pgrefill` counts.
    Memcg,
}

impl Reclaimer {
    /// `cgroup_reclaim(sc)`: reclaim on behalf of a memory cgroup's limit.
    pub fn is_cgroup(self) -> bool {
        self == Reclaimer::Memcg
    }

    /// `pgscan_kswapd` or `pgscan_direct`; none for memcg reclaim (global reclaim only).
    pub fn pgscan(self) -> Option<VmEvent> {
        match self {
            Reclaimer::Kswapd => Some(VmEvent::PgscanKswapd),
            Reclaimer::Direct => Some(VmEvent::PgscanDirect),
            Reclaimer::Memcg => None,
        }
    }

    /// `pgsteal_kswapd` or `pgsteal_direct`; none for memcg reclaim.
    pub fn pgsteal(self) -> Option<VmEvent> {
        match self {
            Reclaimer::Kswapd => Some(VmEvent::PgstealKswapd),
            Reclaimer::Direct => Some(VmEvent::PgstealDirect),
            Reclaimer::Memcg => None,
        }
    }
}

impl ScanControl {
    /// The `pgscan_kswapd|direct` counter this reclaim's scans go to: the
    /// reclaimer's, and for memcg reclaim `pgscan_direct` where it counts in
    /// `/proc/vmstat` ([`ScanControl::cgroup_vmstat`], v7.1+).
    pub fn pgscan_event(&self) -> Option<VmEvent> {
        self.reclaimer.pgscan().or(self.cgroup_vmstat.then_some(VmEvent::PgscanDirect))
    }

    /// The `pgsteal_kswapd|direct` counter this reclaim's steals go to (as [`ScanControl::pgscan_event`]).
    pub fn pgsteal_event(&self) -> Option<VmEvent> {
        self.reclaimer.pgsteal().or(self.cgroup_vmstat.then_some(VmEvent::PgstealDirect))
    }
}

/// Work done by reclaim, counted so the engine can charge CPU time for it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReclaimWork {
    /// Pages taken off an LRU list and looked at.
    pub pages_scanned: u64,
    /// Reverse-map walks started (`folio_referenced`, `try_to_unmap`, `folio_mapped`):
    /// each takes the anon_vma or i_mmap lock and searches the VMA interval tree.
    pub rmap_walks: u64,
    /// Page-table entries checked through the reverse map.
    pub rmap_ptes: u64,
    /// MGLRU: pages moved between generation lists without isolation (`sort_folio`,
    /// `inc_min_seq`).
    pub pages_sorted: u64,
    /// MGLRU: address spaces visited by the page-table walk (`walk_mm`).
    pub walk_mms: u64,
    /// MGLRU: non-leaf (PMD) entries checked by the page-table walk.
    pub walk_pmds: u64,
    /// MGLRU: leaf PTEs checked by the page-table walk and look-around, in batches.
    pub walk_ptes: u64,
    /// Pages freed.
    pub pages_freed: u64,
    /// Pages submitted for write.
    pub pages_written: u64,
    /// Pages compressed for zswap (stored, or refused for want of a pool page).
    pub zswap_compressed: u64,
    /// zswap entries decompressed to be written back to the swap device.
    pub zswap_written_back: u64,
}

impl ReclaimWork {
    /// Adds `o` to `self`.
    pub fn add(&mut self, o: &ReclaimWork) {
        self.pages_scanned += o.pages_scanned;
        self.rmap_walks += o.rmap_walks;
        self.rmap_ptes += o.rmap_ptes;
        self.pages_sorted += o.pages_sorted;
        self.walk_mms += o.walk_mms;
        self.walk_pmds += o.walk_pmds;
        self.walk_ptes += o.walk_ptes;
        self.pages_freed += o.pages_freed;
        self.pages_written += o.pages_written;
        self.zswap_compressed += o.zswap_compressed;
        self.zswap_written_back += o.zswap_written_back;
    }
}

/// Totals of `shrink_folio_list` outcomes over a `shrink_node` pass (kernel `sc->nr`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PassStat {
    /// Dirty or writeback file pages met.
    pub dirty: u64,
    /// Dirty file pages not yet queued for writeback.
    pub unqueued_dirty: u64,
    /// Writeback pages already marked `PG_reclaim`.
    pub congested: u64,
    /// Pages under writeback met.
    pub writeback: u64,
    /// Pages under writeback met again by kswapd (immediate reclaim candidates).
    pub immediate: u64,
    /// Pages isolated from inactive lists.
    pub taken: u64,
    /// File pages isolated from inactive lists.
    pub file_taken: u64,
}

/// Input and output of one reclaim invocation.
#[derive(Clone, Debug)]
pub struct ScanControl {
    /// Who reclaims.
    pub reclaimer: Reclaimer,
    /// How many pages this invocation tries to free.
    pub nr_to_reclaim: u64,
    /// Scan priority, 12 (gentle) down to 0 (scan everything).
    pub priority: i32,
    /// May write dirty pages (swap-out, or file pages for kswapd).
    pub may_writepage: bool,
    /// May unmap mapped pages.
    pub may_unmap: bool,
    /// May swap anon pages.
    pub may_swap: bool,
    /// Pages looked at by `shrink_inactive_list` so far.
    pub nr_scanned: u64,
    /// Pages freed so far.
    pub nr_reclaimed: u64,
    /// Totals of the current `shrink_node` pass.
    pub nr: PassStat,
    /// Pages submitted for asynchronous write; the engine completes them.
    pub pageout: Vec<Pfn>,
    /// Work done, for CPU-time accounting.
    pub work: ReclaimWork,
    /// An active list was not deactivated because deactivation was not allowed.
    pub skipped_deactivate: bool,
    /// Deactivate both types regardless of refaults (a retry of direct reclaim).
    pub force_deactivate: bool,
    /// Cache-trim mode was used in this pass (kernel `cache_trim_mode`).
    pub cache_trim_mode: bool,
    /// Virtual time of the invocation (ns), given by the engine; MGLRU stamps
    /// generations with it (`jiffies` in the kernel).
    pub now_ns: u64,
    /// `wakeup_flusher_threads()` was asked for: write back every dirty page.
    pub wake_flusher: bool,
    /// A reclaim throttle was hit: the pass stopped there; the engine makes the reclaimer wait.
    pub throttle: Option<Throttle>,
    /// `sc->reclaim_idx`: the highest zone type whose pages may be reclaimed.
    pub reclaim_idx: mm::ZoneId,
    /// The node being reclaimed (`None`: pages of every node may be taken).
    pub nid: Option<u8>,
    /// Per-zone lists (before v4.8): the zone whose lruvec is being shrunk, by index into `Mm::zones`.
    pub zone: Option<usize>,
    /// kswapd's aging asks for the OOM killer (MGLRU's `min_ttl_ms` found
    /// every generation too young); the engine invokes it.
    pub oom: bool,
    /// `sc->target_mem_cgroup`: the group whose subtree is reclaimed (the root: global reclaim).
    pub target_memcg: mm::CgId,
    /// `sc->memcg_low_reclaim`: reclaim groups under their `memory.low` too (the retry).
    pub memcg_low_reclaim: bool,
    /// `sc->memcg_low_skipped`: a group was spared for its `memory.low`.
    pub memcg_low_skipped: bool,
    /// Memcg reclaim for a limit counts its scans and steals in
    /// `/proc/vmstat`'s `_direct` counters (v7.1+, `cgroup_reclaim_vmstat`).
    pub cgroup_vmstat: bool,
    /// `sc->proactive_swappiness`: `memory.reclaim`'s `swappiness=`, which
    /// replaces `vm.swappiness` for this reclaim.
    pub proactive_swappiness: Option<u32>,
    /// Pages taken off the LRU lists (anon, file) by the classic LRU in this invocation.
    pub isolated: [u64; 2],
    /// What other direct reclaimers hold isolated meanwhile (`too_many_isolated()`).
    pub isolating: Isolating,
    /// Time slept inside this invocation (`too_many_isolated()`), ns.
    pub slept_ns: u64,
    /// MGLRU: bit `n` set when the eviction of node `n`'s lruvec aged it
    /// (`try_to_shrink_lruvec()` returned true): the memcg LRU moves the
    /// group to its young generation. Cleared by the tree before each group.
    pub mglru_aged_nodes: u64,
}

impl ScanControl {
    /// A scan control for `reclaimer` aiming to free `nr_to_reclaim` pages.
    pub fn new(reclaimer: Reclaimer, nr_to_reclaim: u64) -> ScanControl {
        ScanControl {
            reclaimer,
            nr_to_reclaim,
            priority: crate::DEF_PRIORITY,
            may_writepage: true,
            may_unmap: true,
            may_swap: true,
            nr_scanned: 0,
            nr_reclaimed: 0,
            nr: PassStat::default(),
            pageout: Vec::new(),
            work: ReclaimWork::default(),
            skipped_deactivate: false,
            force_deactivate: false,
            cache_trim_mode: false,
            now_ns: 0,
            wake_flusher: false,
            throttle: None,
            reclaim_idx: mm::ZoneId::Movable,
            nid: None,
            zone: None,
            oom: false,
            target_memcg: mm::CgId::ROOT,
            memcg_low_reclaim: false,
            memcg_low_skipped: false,
            cgroup_vmstat: false,
            proactive_swappiness: None,
            isolated: [0, 0],
            isolating: Isolating::default(),
            slept_ns: 0,
            mglru_aged_nodes: 0,
        }
    }
}
