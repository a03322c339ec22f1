//! What a run reports: counters, gauges, per-thread results, engine statistics.

use crate::psi::PsiMemory;
use crate::timeseries::Timeseries;
use crate::Nanos;
use reclaim::ReclaimWork;

/// The latency percentiles reported per thread (100 = max), seed 001's table and beyond.
pub const LATENCY_PERCENTILES: [f64; 9] = [50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.9, 100.0];

/// Per-thread results.
#[derive(Clone, Debug, PartialEq)]
pub struct ThreadReport {
    /// Thread name (`ebizzy/0`).
    pub name: String,
    /// Operations completed.
    pub ops: u64,
    /// Virtual time at which the thread finished (or the run stopped).
    pub end_ns: Nanos,
    /// Time stalled in direct reclaim and reclaim throttling.
    pub reclaim_stall_ns: Nanos,
    /// Time runnable but waiting for a CPU (schedstat run delay; 0 without `cpus`).
    pub run_delay_ns: Nanos,
    /// CPU time in user mode, `/usr/bin/time`'s "User time": its resident
    /// memory accesses and their repeats, `cpu.access_ns` each.
    pub user_time_ns: Nanos,
    /// CPU time in the kernel on its behalf, `/usr/bin/time`'s "System time":
    /// faults, `read()`/`write()` copies, direct and memcg reclaim (zram and
    /// zswap compression included), control writes; its sleeps excluded.
    pub system_time_ns: Nanos,
    /// Operation latency at each of [`LATENCY_PERCENTILES`], ns.
    pub latency_ns: [(f64, u64); 9],
    /// Mean operation latency, ns.
    pub latency_mean_ns: f64,
    /// Transactions completed (`Step::TxnEnd`s; 0 for workloads without transactions).
    pub txns: u64,
    /// Virtual time at which the thread began its first transaction (its set-up before excluded from tps).
    pub first_txn_ns: Nanos,
    /// Transaction latency at each of [`LATENCY_PERCENTILES`], ns.
    pub txn_latency_ns: [(f64, u64); 9],
    /// Mean transaction latency, ns.
    pub txn_latency_mean_ns: f64,
    /// When the OOM killer killed the thread's process (its `end_ns` is when it stopped).
    pub oom_killed_ns: Option<Nanos>,
}

impl ThreadReport {
    /// Operations per second of virtual time.
    pub fn ops_per_sec(&self) -> f64 {
        if self.end_ns == 0 {
            0.0
        } else {
            self.ops as f64 * 1e9 / self.end_ns as f64
        }
    }

    /// Transactions per second of virtual time, from the first transaction's start.
    pub fn txns_per_sec(&self) -> f64 {
        let span = self.end_ns.saturating_sub(self.first_txn_ns);
        if span == 0 {
            0.0
        } else {
            self.txns as f64 * 1e9 / span as f64
        }
    }
}

/// The machine's event counters at a moment a thread chose (`Step::Snapshot`).
#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    /// Virtual time of the snapshot (the thread's clock).
    pub at_ns: Nanos,
    /// `/proc/vmstat` event counters, by name.
    pub vmstat: Vec<(&'static str, u64)>,
}

/// One group of the cgroup v2 tree at the end of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct CgroupReport {
    /// The group's path (`svc`, `batch/job1`).
    pub path: String,
    /// `memory.stat` entries of the group and its descendants, v2 names: `memory.current`
    /// and `memory.peak` in bytes, with zswap `zswap` (compressed bytes) and `zswapped`
    /// (entries), then the event counters (S-CG3).
    pub stat: Vec<(&'static str, u64)>,
    /// `memory.events`, hierarchical.
    pub events: Vec<(&'static str, u64)>,
    /// `memory.pressure`: memory stalls of the group's threads and its descendants'.
    pub pressure: PsiMemory,
}

/// The `memory.stat` event counters a group reports.
pub const CGROUP_STAT_EVENTS: &[mm::VmEvent] = &[
    mm::VmEvent::Pgfault,
    mm::VmEvent::Pgmajfault,
    mm::VmEvent::WorkingsetRefaultAnon,
    mm::VmEvent::WorkingsetRefaultFile,
    mm::VmEvent::WorkingsetActivateAnon,
    mm::VmEvent::WorkingsetActivateFile,
    mm::VmEvent::PgscanKswapd,
    mm::VmEvent::PgscanDirect,
    mm::VmEvent::PgstealKswapd,
    mm::VmEvent::PgstealDirect,
    mm::VmEvent::Pswpin,
    mm::VmEvent::Pswpout,
    mm::VmEvent::Zswpin,
    mm::VmEvent::Zswpout,
    mm::VmEvent::Zswpwb,
];

/// The result of one run.
#[derive(Clone, Debug, PartialEq)]
pub struct RunReport {
    /// `/proc/vmstat` counters and gauges, by name, in `/proc/vmstat` order.
    pub vmstat: Vec<(&'static str, u64)>,
    /// The memory cgroup's `memory.stat` (cgroup v1 names and units), empty without `memcg.limit`.
    pub memcg: Vec<(&'static str, u64)>,
    /// The memory cgroup's `memory.events` (max, oom, oom_kill), empty without `memcg.limit`.
    pub memcg_events: Vec<(&'static str, u64)>,
    /// The cgroup v2 tree's groups below the root, in creation order; empty without one.
    pub cgroups: Vec<CgroupReport>,
    /// zram's `mm_stat` columns by name, then `io_stat`'s `failed_writes`; empty unless swap is on zram.
    pub zram: Vec<(&'static str, u64)>,
    /// zswap's debugfs counters and pool sizes by name; empty unless `zswap.enabled`.
    pub zswap: Vec<(&'static str, u64)>,
    /// Per-thread results.
    pub threads: Vec<ThreadReport>,
    /// Virtual time at the end of the run.
    pub virtual_ns: Nanos,
    /// Events processed by the engine (accesses, kswapd steps, I/O completions).
    pub events: u64,
    /// Memory accesses simulated.
    pub accesses: u64,
    /// CPU time kswapd spent reclaiming, all nodes' (the sum of `kswapd_cpu_ns_by_node`).
    pub kswapd_cpu_ns: Nanos,
    /// Per node: CPU time its kswapd spent reclaiming, the kernel thread's system time.
    pub kswapd_cpu_ns_by_node: Vec<Nanos>,
    /// Time kswapd was runnable but waiting for a CPU (0 without `cpus`).
    pub kswapd_run_delay_ns: Nanos,
    /// CPU time threads spent in direct reclaim.
    pub direct_reclaim_ns: Nanos,
    /// Work kswapd did (rmap walks, PTEs, pages), behind `kswapd_cpu_ns`.
    pub kswapd_work: ReclaimWork,
    /// Work direct reclaimers did, behind `direct_reclaim_ns`.
    pub direct_work: ReclaimWork,
    /// Direct reclaim invocations (`try_to_free_pages` calls).
    pub direct_reclaims: u64,
    /// Latency of one direct reclaim invocation at each of [`LATENCY_PERCENTILES`], ns.
    pub direct_reclaim_latency_ns: [(f64, u64); 9],
    /// `/proc/pressure/memory` over the run.
    pub psi: PsiMemory,
    /// At the end, the text of each readable control of the running policy
    /// (name, text), e.g. MGLRU's `lru_gen` listing.
    pub control_reads: Vec<(&'static str, String)>,
    /// Control writes issued by programs, with time and outcome.
    pub control_writes: Vec<String>,
    /// Time kswapd and direct reclaimers slept in reclaim throttling
    /// (`congestion_wait`, `wait_iff_congested`, `reclaim_throttle`).
    pub reclaim_throttled_ns: Nanos,
    /// Periodic samples, when asked for with [`crate::SimBuilder::sample_every`].
    pub timeseries: Option<Timeseries>,
    /// Event counters at each `Step::Snapshot`, in order.
    pub snapshots: Vec<Snapshot>,
    /// Every zone at the end of the run (`/proc/zoneinfo`).
    pub zones: Vec<crate::zoneinfo::ZoneReport>,
    /// Per node: virtual time of its kswapd's first wakeup, if it was woken.
    pub kswapd_first_wake_ns: Vec<Option<Nanos>>,
}

impl RunReport {
    /// User time of every workload thread, ns (what `/usr/bin/time` reports for the processes it waits for).
    pub fn user_time_ns(&self) -> Nanos {
        self.threads.iter().map(|t| t.user_time_ns).sum()
    }

    /// System time of every workload thread, ns (kswapd's apart: `kswapd_cpu_ns`).
    pub fn system_time_ns(&self) -> Nanos {
        self.threads.iter().map(|t| t.system_time_ns).sum()
    }

    /// Direct reclaim latency at percentile `p` (one of [`LATENCY_PERCENTILES`]), ns.
    pub fn direct_reclaim_latency(&self, p: f64) -> u64 {
        self.direct_reclaim_latency_ns.iter().find(|(q, _)| *q == p).map_or(0, |&(_, v)| v)
    }

    /// mmtests' "Kswapd efficiency": `pgsteal_kswapd / pgscan_kswapd`, in percent (0 when nothing was scanned).
    pub fn kswapd_efficiency_pct(&self) -> f64 {
        let scan = self.get("pgscan_kswapd").unwrap_or(0);
        if scan == 0 {
            0.0
        } else {
            self.get("pgsteal_kswapd").unwrap_or(0) as f64 * 100.0 / scan as f64
        }
    }

    /// mmtests' "Kswapd velocity": `pgscan_kswapd` per second of (virtual) time.
    pub fn kswapd_velocity(&self) -> f64 {
        if self.virtual_ns == 0 {
            0.0
        } else {
            self.get("pgscan_kswapd").unwrap_or(0) as f64 * 1e9 / self.virtual_ns as f64
        }
    }

    /// Pages brought in on demand (`run --trace`'s and `mrc`'s faults): the
    /// page allocations of every zone (`pgalloc_dma`, `_dma32`, `_normal`,
    /// `_movable`: first touches, swap-ins, page-cache reads) except swap
    /// readahead's prefetches (`swap_ra`).
    pub fn demand_faults(&self) -> u64 {
        let zones = ["pgalloc_dma", "pgalloc_dma32", "pgalloc_normal", "pgalloc_movable"];
        let allocs: u64 = zones.iter().map(|z| self.get(z).unwrap_or(0)).sum();
        allocs.saturating_sub(self.get("swap_ra").unwrap_or(0))
    }

    /// The value of a counter or gauge by its `/proc/vmstat` name.
    pub fn get(&self, name: &str) -> Option<u64> {
        self.vmstat.iter().find(|(n, _)| *n == name).map(|&(_, v)| v)
    }
}
