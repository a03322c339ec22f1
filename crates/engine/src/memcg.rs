//! One memory cgroup (cgroup v1 memory controller) with a limit: the page
//! counter with its per-CPU charge stock, and the group's `memory.stat`.
//!
//! Models `try_charge_memcg()` / `consume_stock()` / `refill_stock()`,
//! mm/memcontrol.c (v6.x), for order-0 charges. The reclaim a failed charge
//! runs is `reclaim::memcg::try_to_free_mem_cgroup_pages`; the engine drives
//! the retry loop ([`Memcg::charge`] says what to do next).
//!
//! Simplifications:
//! - S-MC1: one group holds every workload page (its lruvec is the node's);
//!   usage is the machine's allocated pages plus the charge stock.
//! - S-MC2: one CPU's stock (the workload runs pinned to one CPU).
//! - S-MC3: pages read by swap readahead are charged without a limit check.
//! - S-MC6: the kernel flushes the group's statistics (rstat) every 2 s or
//!   when `memory.stat` is read; here a flush comes every `memcg.stats_flush`
//!   charges (0: reclaim reads exact values).
//! - S-MC8: with `memcg.root_stats=periodic` (v6.12+, a run without groups)
//!   the flusher runs at the run's start, when the LRU lists are empty, and
//!   every 2 s of virtual time after (the kernel's is in its own phase, and
//!   its statistics at the start include the booted system's own pages).

use knobs::{format_size, parse_size, u64_knob, History, Kind, Knob, Version};
use mm::PAGE_SIZE;

/// The workload's memory cgroup, as configured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemcgKnobs {
    /// `memcg.limit`: `memory.limit_in_bytes` (0 = no group).
    pub limit_bytes: u64,
    /// `memcg.swappiness`: the group's `memory.swappiness`.
    pub swappiness: u32,
    /// `memcg.stats_flush`: charges between flushes of the group's statistics
    /// as reclaim reads them (0 = reclaim reads exact values).
    pub stats_flush: u64,
    /// `memcg.root_stats`: how fresh the root group's statistics are when
    /// global reclaim reads them.
    pub root_stats: RootStats,
}

/// How fresh the root memory cgroup's statistics (rstat) are when global
/// reclaim reads them: the list sizes of `inactive_is_low()` and the
/// workingset size and activation count of the refault check.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RootStats {
    /// Up to date: before v5.15 the counters were kept per CPU and summed
    /// within a batch; v5.15..v6.11 reclaim flushed them at every
    /// `prepare_scan_control()` that found a batch of updates.
    #[default]
    Exact,
    /// v6.12+: reclaim and the refault check flush only when the periodic
    /// flusher is a full cycle late, so they read what it left, every
    /// [`STATS_FLUSH_NS`] (Shakeel Butt's "memcg: use ratelimited stats flush
    /// in the reclaim").
    Periodic,
}

/// KERNEL: `FLUSH_TIME` (`2UL*HZ`): the period of the memory cgroups'
/// statistics flusher (`flush_memcg_stats_dwork`).
pub const STATS_FLUSH_NS: u64 = 2_000_000_000;

/// KERNEL: reclaim's flush became rate-limited in v6.12.
const ROOT_STATS_FORMS: &[(Version, &str)] = &[(Version::new(2, 6), "exact"), (Version::new(6, 12), "periodic")];

impl Default for MemcgKnobs {
    /// No group; the kernel's default swappiness.
    fn default() -> Self {
        MemcgKnobs { limit_bytes: 0, swappiness: 60, stats_flush: 0, root_stats: RootStats::Exact }
    }
}

/// The memory cgroup knobs' declarations (`memcg.*`).
pub const KNOBS: &[Knob<MemcgKnobs>] = &[
    Knob {
        key: "limit",
        help: "memory cgroup (v1) holding the workload: memory.limit_in_bytes (size), or `none`; a charge over it reclaims in the faulting task",
        kind: Kind::Text,
        history: History::Tunable { since: Version::new(2, 6) },
        get: |c| if c.limit_bytes == 0 { "none".into() } else { format_size(c.limit_bytes) },
        set: |c, v| {
            c.limit_bytes = if v == "none" { 0 } else { parse_size(v)? };
            Ok(())
        },
    },
    u64_knob!(
        "swappiness",
        swappiness,
        0,
        200,
        History::Tunable { since: Version::new(2, 6) },
        "the group's memory.swappiness, 0..200 (default 60); 0 = the group never swaps under its limit"
    ),
    u64_knob!(
        "stats_flush",
        stats_flush,
        0,
        u64::MAX,
        History::Model,
        "charges between flushes of the group's statistics that reclaim reads (the kernel flushes lazily: every 2 s or when memory.stat is read); 0 = exact"
    ),
    Knob {
        key: "root_stats",
        help: "the root group's statistics as global reclaim reads them (inactive_is_low's list sizes, the refault check's workingset size and activations), in a run without memcg.limit or cgroup.*: exact (before v6.12: flushed by every reclaim pass) or periodic (v6.12+: only the flusher's, at the run's start and every 2 s; S-MC8)",
        kind: Kind::Choice,
        history: History::Forms(ROOT_STATS_FORMS),
        get: |c| match c.root_stats {
            RootStats::Exact => "exact".into(),
            RootStats::Periodic => "periodic".into(),
        },
        set: |c, v| {
            c.root_stats = match v {
                "exact" => RootStats::Exact,
                "periodic" => RootStats::Periodic,
                _ => return Err("exact or periodic".into()),
            };
            Ok(())
        },
    },
];

/// KERNEL: `MEMCG_CHARGE_BATCH`, pages charged to the counter at once and
/// kept in the per-CPU stock.
pub const MEMCG_CHARGE_BATCH: u64 = 64;

/// What a charge attempt found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Charge {
    /// The page is charged.
    Done,
    /// The limit would be exceeded: reclaim, then try again.
    OverLimit,
}

/// The group's limit, charge state and event counts.
#[derive(Clone, Debug)]
pub struct Memcg {
    /// `memory.limit_in_bytes` in pages.
    limit: u64,
    /// `memory.swappiness`.
    pub swappiness: u32,
    /// Pages charged to the counter but not yet handed to a page (per-CPU stock).
    stock: u64,
    /// Charges (`pgpgin` of memory.stat: one per folio).
    pub pgpgin: u64,
    /// `memory.failcnt`: failed page-counter charges, batch attempts included.
    pub failcnt: u64,
    /// Limit reclaim invocations (`memory.events` max).
    pub max_events: u64,
    /// Group OOMs (`memory.events` oom): charges that found limit reclaim hopeless.
    pub oom_events: u64,
    /// Processes of the group the OOM killer killed (`memory.events` oom_kill).
    pub oom_kill_events: u64,
    /// Charges between statistics flushes (0 = exact statistics).
    pub stats_flush: u64,
}

impl Memcg {
    /// A group limited to `limit_bytes` with `swappiness`.
    pub fn new(limit_bytes: u64, swappiness: u32, stats_flush: u64) -> Memcg {
        Memcg {
            limit: limit_bytes / PAGE_SIZE,
            swappiness,
            stock: 0,
            pgpgin: 0,
            failcnt: 0,
            max_events: 0,
            oom_events: 0,
            oom_kill_events: 0,
            stats_flush,
        }
    }

    /// True when the statistics are due for a flush after the latest charge.
    pub fn flush_due(&self) -> bool {
        self.stats_flush > 0 && self.pgpgin.is_multiple_of(self.stats_flush)
    }

    /// The limit in pages.
    pub fn limit_pages(&self) -> u64 {
        self.limit
    }

    /// Pages on the counter (`memory.usage_in_bytes` / 4096): `charged` pages
    /// in use plus the stock.
    pub fn usage(&self, charged: u64) -> u64 {
        charged + self.stock
    }

    /// `try_charge_memcg()` for one page while `charged` pages are in use:
    /// take it from the stock, else charge a batch (keeping the rest in the
    /// stock), else charge the page alone, else report the limit hit.
    pub fn charge(&mut self, charged: u64) -> Charge {
        if self.stock >= 1 {
            self.stock -= 1;
            self.pgpgin += 1;
            return Charge::Done;
        }
        let usage = self.usage(charged);
        for batch in [MEMCG_CHARGE_BATCH, 1] {
            if usage + batch <= self.limit {
                self.stock += batch - 1;
                self.pgpgin += 1;
                return Charge::Done;
            }
            self.failcnt += 1;
        }
        self.max_events += 1;
        Charge::OverLimit
    }

    /// `mem_cgroup_get_max()` of a cgroup-v1 group (memsw unlimited): the
    /// limit, plus the machine's `swap_pages` when the group may swap; the
    /// OOM killer's `totalpages` for the group's OOM.
    pub fn oom_totalpages(&self, swap_pages: u64) -> u64 {
        (self.limit + if self.swappiness > 0 { swap_pages } else { 0 }).max(1)
    }

    /// `memory.events` (the v2 names; v1 shows oom_kill in memory.oom_control).
    pub fn memory_events(&self) -> Vec<(&'static str, u64)> {
        vec![("max", self.max_events), ("oom", self.oom_events), ("oom_kill", self.oom_kill_events)]
    }

    /// `mem_cgroup_margin()`: pages that can still be charged.
    pub fn margin(&self, charged: u64) -> u64 {
        self.limit.saturating_sub(self.usage(charged))
    }
}

/// The group's resident state at the end of a run, for `memory.stat`.
#[derive(Clone, Copy, Debug, Default)]
pub struct MemcgCensus {
    /// Page-cache pages, swap cache included (`cache`).
    pub cache: u64,
    /// Mapped anonymous pages (`rss`).
    pub rss: u64,
    /// Swap-cache pages (`swapcached`).
    pub swapcached: u64,
    /// Dirty file pages (`dirty`).
    pub dirty: u64,
    /// Pages under writeback (`writeback`).
    pub writeback: u64,
    /// Used swap slots (`swap`).
    pub swap: u64,
}

/// The `memory.stat` lines of cgroup v1, in the kernel's order: sizes in
/// bytes, events in counts. `vm(name)` reads a machine counter; every
/// workload page belongs to the group (S-MC1), so the group's event counts
/// are the machine's.
pub fn memory_stat(
    m: &Memcg,
    census: &MemcgCensus,
    lru: &reclaim::policy::LruSizes,
    charged: u64,
    vm: impl Fn(&str) -> u64,
) -> Vec<(&'static str, u64)> {
    let b = |pages: u64| pages * PAGE_SIZE;
    vec![
        ("cache", b(census.cache)),
        ("rss", b(census.rss)),
        ("rss_huge", 0),
        ("shmem", 0),
        ("dirty", b(census.dirty)),
        ("writeback", b(census.writeback)),
        ("workingset_refault_anon", vm("workingset_refault_anon")),
        ("workingset_refault_file", vm("workingset_refault_file")),
        ("swap", b(census.swap)),
        ("swapcached", b(census.swapcached)),
        ("pgpgin", m.pgpgin),
        ("pgpgout", m.pgpgin - charged),
        ("pgfault", vm("pgfault")),
        ("pgmajfault", vm("pgmajfault")),
        ("inactive_anon", b(lru.inactive_anon)),
        ("active_anon", b(lru.active_anon)),
        ("inactive_file", b(lru.inactive_file)),
        ("active_file", b(lru.active_file)),
        ("unevictable", b(lru.unevictable)),
        ("hierarchical_memory_limit", b(m.limit)),
        ("failcnt", m.failcnt),
        ("usage_in_bytes", b(m.usage(charged))),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_then_single_then_limit() {
        // 100-page limit, 0 in use: a batch of 64 goes on the counter, one page is used.
        let mut m = Memcg::new(100 * PAGE_SIZE, 60, 0);
        assert_eq!(m.charge(0), Charge::Done);
        assert_eq!((m.usage(1), m.stock), (64, 63));
        // The next 63 pages come from the stock.
        for charged in 1..64 {
            assert_eq!(m.charge(charged), Charge::Done);
        }
        assert_eq!((m.usage(64), m.stock, m.failcnt), (64, 0, 0));
        // 64 + 64 > 100: the batch fails (failcnt 1), single pages succeed up to the limit.
        for charged in 64..100 {
            assert_eq!(m.charge(charged), Charge::Done);
        }
        assert_eq!((m.usage(100), m.failcnt), (100, 36));
        assert_eq!(m.margin(100), 0);
        assert_eq!(m.charge(100), Charge::OverLimit);
        assert_eq!((m.failcnt, m.max_events, m.pgpgin), (38, 1, 100));
    }
}
