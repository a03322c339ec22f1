//! The validation scenarios, as data: one [`TABLE`] row per scenario. A row's
//! pattern is a driver pattern whose sizes are fractions of the run's memory
//! (`{3/2}` is 1.5 times it, in MiB: the group's limit, or for a global row
//! the guest's RAM) and whose operation count is `{ops}`; [`Scale`] fills them
//! in for the host, the guest and `--quick`.

/// Where a scenario's swap lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Swap {
    /// zram (the host's, or 1G in the guest).
    Zram,
    /// A memory-backed null_blk in the guest (a block device with a fixed
    /// completion latency), with `vm.page-cluster` and `vma_ra_enabled`.
    Block {
        /// `vm.page-cluster`.
        page_cluster: u32,
        /// `/sys/kernel/mm/swap/vma_ra_enabled`.
        vma_ra: bool,
    },
}

/// A workload in a cgroup v2 group of its own (a scenario of several tenants).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tenant {
    /// The group's path under the root (`svc`).
    pub group: String,
    /// Its driver pattern, sizes filled in.
    pub pattern: String,
    /// Knobs of the group in bytes, written when it is made.
    pub knobs: Vec<(String, u64)>,
    /// A write to the group's `memory.reclaim` during the run.
    pub reclaim: Option<Reclaim>,
}

/// A `memory.reclaim` write that the tenant's own driver makes between two
/// accesses (`driver run --write`), and the simulator between the same two.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reclaim {
    /// Bytes asked for.
    pub bytes: u64,
    /// Accesses of the tenant before the write.
    pub after: u64,
}

/// A tenant of a [`TABLE`] row: group, pattern and knobs with holes.
struct TenantRow {
    group: &'static str,
    pattern: &'static str,
    /// (knob, `{N/D}` of the run's memory).
    knobs: &'static [(&'static str, &'static str)],
    /// `memory.reclaim` of `{N/D}` of the run's memory after half the scale's
    /// `{ops}` accesses (the middle of a zipf pattern's operations).
    reclaim: Option<&'static str>,
}

/// Where a scenario runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum On {
    /// The host and the guest kernels.
    Both,
    /// The host only.
    Host,
    /// The guest kernels only.
    Guest,
}

/// One scenario, sizes filled in.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// Name (`anon-zipf`, `mixed-sw60`).
    pub name: String,
    /// The driver pattern with every size filled in.
    pub pattern: String,
    /// `memory.limit_in_bytes` / `memory.max`.
    pub limit_bytes: u64,
    /// `memory.swappiness` (the guest: `vm.swappiness`).
    pub swappiness: u32,
    /// Global reclaim: no memory group, the guest's RAM in MiB is this small.
    pub global_ram_mb: Option<u64>,
    /// The swap device.
    pub swap: Swap,
    /// Counters compared besides the scope's (memory group or global), all from `/proc/vmstat`.
    pub extra: &'static [&'static str],
    /// The boot's first run is a warm-up and discarded; false for dirty-page
    /// scenarios, whose later runs in one boot are not deterministic, and for
    /// cluster swap readahead, whose global state a warm-up run would change.
    pub warmup: bool,
    /// zswap in front of the swap device with this `max_pool_percent`.
    pub zswap_pool_pct: Option<u32>,
    /// The oldest kernel (major, minor) that has what the scenario measures.
    pub since: (u32, u32),
    /// Workloads in groups of their own, run at once (then `pattern` is empty).
    pub tenants: Vec<Tenant>,
}

/// A row of [`TABLE`].
struct Row {
    name: &'static str,
    /// Driver pattern with `{N/D}` (N/D times the limit, MiB) and `{ops}` holes.
    pattern: &'static str,
    swappiness: u32,
    /// No memory group: the guest's RAM is the scale's `global_ram_mb` (guest only).
    global: bool,
    on: On,
    swap: Swap,
    extra: &'static [&'static str],
    warmup: bool,
    zswap_pool_pct: Option<u32>,
    since: (u32, u32),
    tenants: &'static [TenantRow],
}

/// A row with the defaults: host and guest, zram, no extra counters, a warm-up run.
const ROW: Row = Row {
    name: "",
    pattern: "",
    swappiness: 60,
    global: false,
    on: On::Both,
    swap: Swap::Zram,
    extra: &[],
    warmup: true,
    zswap_pool_pct: None,
    since: (0, 0),
    tenants: &[],
};

/// The page cache's counters.
const FILE: &[&str] =
    &["pgscan_file", "pgsteal_file", "workingset_refault_file", "workingset_activate_file", "workingset_restore_file"];
/// Swap readahead's counters.
const SWAP_RA: &[&str] = &["swap_ra", "swap_ra_hit"];
/// zswap's counters (`zswpwb` since v6.8).
const ZSWAP: &[&str] = &["zswpout", "zswpin", "zswpwb"];
/// The two tenants' counters, per group (`GROUP.COUNTER`: the group's
/// `memory.stat` and `memory.events`).
const TENANTS: &[&str] =
    &["svc.pgmajfault", "svc.workingset_refault_anon", "batch.pgmajfault", "batch.workingset_refault_anon"];
/// The memory.high tenant's counters.
const HIGH: &[&str] = &["hi.high", "hi.pgmajfault", "hi.workingset_refault_anon", "hi.pgsteal"];
/// The memory.reclaim tenant's counters.
const PROACTIVE: &[&str] = &["pr.pgscan", "pr.pgsteal", "pr.pgmajfault", "pr.workingset_refault_anon"];
/// Dirty pages' counters.
const DIRTY: &[&str] =
    &["nr_dirtied", "nr_written", "nr_vmscan_write", "nr_vmscan_immediate_reclaim", "pgrotated", "pgsteal_file"];

/// Every scenario. Adding one is adding a row. A global row runs in the guest
/// only (on the host it would reclaim the whole machine); the guest's file
/// pages are a null_blk device's page cache (initramfs pages cannot be
/// reclaimed).
const TABLE: &[Row] = &[
    Row { name: "anon-seq", pattern: "anon-seq:anon={3/2},passes=4", ..ROW },
    Row { name: "anon-zipf", pattern: "anon-zipf:anon={3/2},ops={ops},alpha=0.8,seed=1", ..ROW },
    Row { name: "hotcold", pattern: HOTCOLD, ..ROW },
    Row { name: "seed004-hotcold", pattern: SEED004_HOTCOLD, on: On::Guest, ..ROW },
    Row { name: "file-seq", pattern: "file-seq:file={3/2},passes=4", extra: FILE, ..ROW },
    Row { name: "file-zipf", pattern: "file-zipf:file={3/2},ops={ops},alpha=0.8,seed=1", extra: FILE, ..ROW },
    Row { name: "mixed-sw0", pattern: MIXED, swappiness: 0, on: On::Host, ..ROW },
    Row { name: "mixed-sw60", pattern: MIXED, on: On::Host, ..ROW },
    Row { name: "mixed-sw100", pattern: MIXED, swappiness: 100, on: On::Host, ..ROW },
    Row { name: "mixed-sw200", pattern: MIXED, swappiness: 200, on: On::Host, ..ROW },
    Row { name: "global-hotcold", pattern: GLOBAL_HOTCOLD, global: true, on: On::Guest, ..ROW },
    Row {
        name: "global-zipf",
        pattern: "anon-zipf:anon={1},ops={ops},alpha=0.8,seed=1",
        global: true,
        on: On::Guest,
        ..ROW
    },
    Row {
        name: "blkswap-vma",
        pattern: BLKSWAP,
        on: On::Guest,
        swap: Swap::Block { page_cluster: 3, vma_ra: true },
        extra: SWAP_RA,
        ..ROW
    },
    Row {
        name: "blkswap-cluster",
        pattern: BLKSWAP,
        on: On::Guest,
        swap: Swap::Block { page_cluster: 3, vma_ra: false },
        extra: SWAP_RA,
        // Cluster readahead's state (hits, last fault, last window) is global
        // and outlives a run: the measured run starts from boot, as the simulator.
        warmup: false,
        ..ROW
    },
    Row {
        name: "blkswap-pc0",
        pattern: BLKSWAP,
        on: On::Guest,
        swap: Swap::Block { page_cluster: 0, vma_ra: true },
        extra: SWAP_RA,
        ..ROW
    },
    Row {
        name: "global-file-seq",
        pattern: "file-seq:file={1},passes=3",
        global: true,
        on: On::Guest,
        extra: FILE,
        ..ROW
    },
    Row {
        name: "global-file-zipf",
        pattern: "file-zipf:file={1},ops={ops},alpha=0.8,seed=1",
        global: true,
        on: On::Guest,
        extra: FILE,
        ..ROW
    },
    Row {
        name: "global-mixed-sw0",
        pattern: GLOBAL_MIXED,
        swappiness: 0,
        global: true,
        on: On::Guest,
        extra: FILE,
        ..ROW
    },
    Row { name: "global-mixed-sw60", pattern: GLOBAL_MIXED, global: true, on: On::Guest, extra: FILE, ..ROW },
    Row {
        name: "global-mixed-sw100",
        pattern: GLOBAL_MIXED,
        swappiness: 100,
        global: true,
        on: On::Guest,
        extra: FILE,
        ..ROW
    },
    Row {
        name: "global-mixed-sw200",
        pattern: GLOBAL_MIXED,
        swappiness: 200,
        global: true,
        on: On::Guest,
        extra: FILE,
        ..ROW
    },
    Row {
        name: "global-dirty",
        pattern: "file-seq:file={1},passes=2,write=1",
        global: true,
        on: On::Guest,
        extra: DIRTY,
        warmup: false,
        ..ROW
    },
    Row {
        name: "zswap-blk",
        pattern: ZSWAP_ZIPF,
        on: On::Guest,
        swap: Swap::Block { page_cluster: 3, vma_ra: true },
        extra: ZSWAP,
        zswap_pool_pct: Some(1),
        since: (6, 8),
        ..ROW
    },
    Row {
        name: "cg-low",
        global: true,
        on: On::Guest,
        extra: TENANTS,
        since: (4, 5),
        tenants: &[
            TenantRow {
                group: "svc",
                pattern: "anon-zipf:anon={3/16},ops={ops},alpha=0.8,seed=2",
                knobs: &[("memory.low", "{1/4}")],
                reclaim: None,
            },
            TenantRow {
                group: "batch",
                pattern: "anon-zipf:anon={1},ops={ops},alpha=0.8,seed=3",
                knobs: &[],
                reclaim: None,
            },
        ],
        ..ROW
    },
    Row {
        name: "cg-high",
        global: true,
        on: On::Guest,
        extra: HIGH,
        since: (4, 5),
        tenants: &[TenantRow {
            group: "hi",
            pattern: "anon-zipf:anon={1/4},ops={ops},alpha=0.8,seed=4",
            knobs: &[("memory.high", "{1/8}")],
            reclaim: None,
        }],
        ..ROW
    },
    Row {
        name: "cg-reclaim",
        global: true,
        on: On::Guest,
        extra: PROACTIVE,
        since: (5, 19),
        tenants: &[TenantRow {
            group: "pr",
            pattern: "anon-zipf:anon={1/4},ops={ops},alpha=0.8,seed=5",
            knobs: &[],
            reclaim: Some("{1/8}"),
        }],
        ..ROW
    },
];

/// Anon zipf over 1.5x the limit whose stores fill half of each page with
/// bytes that do not compress (about 2:1), so that a 1% zswap pool fills and
/// writes back to the block device behind it.
const ZSWAP_ZIPF: &str = "anon-zipf:anon={3/2},ops={ops},alpha=0.8,seed=1,fill=2048";
/// Anon zipf over 1.5x the limit with swap on a block device: swap readahead.
const BLKSWAP: &str = "anon-zipf:anon={3/2},ops={ops},alpha=0.8,seed=1";
/// Mixed anon and file in a guest of RAM R: R/2 of anon, R of file.
const GLOBAL_MIXED: &str = "mixed:anon={1/2},file={1},ops={ops},alpha=0.8,share=50,seed=1";

/// Seed 004's pattern: cold pages of the limit, hot sets of a quarter.
const HOTCOLD: &str = "hotcold:anon={1},hot={1/4},step={1/4},activate=2,rounds=8";
/// Seed 004's scenario at its own ratios, the limit standing for the ~280 MB
/// its test program could use: 512 MB cold, 96 MB hot sets, 128 MB cold steps.
/// hot-2's re-access interval (a hot set and a step) exceeds the inactive list
/// the limit leaves beside hot-1, the case the seed says only workingset
/// detection promotes.
const SEED004_HOTCOLD: &str = "hotcold:anon={64/35},hot={12/35},step={16/35},activate=2,rounds=10";
/// Seed 004's pattern in a guest of RAM R: R/2 cold, hot sets and steps of R/8,
/// so that the hot sets and a step no longer fit beside the cold pages.
const GLOBAL_HOTCOLD: &str = "hotcold:anon={1/2},hot={1/8},step={1/8},activate=2,rounds=8";

/// Half the limit of anon, the limit of file, accesses split evenly.
const MIXED: &str = "mixed:anon={1/2},file={1},ops={ops},alpha=0.8,share=50,seed=1";

/// The sizes a set of scenarios runs at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scale {
    /// The memory limit, MiB.
    pub limit_mb: u64,
    /// Random operations of the zipf patterns.
    pub ops: u64,
    /// The guest's RAM for global rows, MiB; 0: no global rows (the host).
    pub global_ram_mb: u64,
}

impl Scale {
    /// The host: a 128M limit with 1.5x that touched; `quick` divides by 4.
    pub fn host(quick: bool) -> Scale {
        if quick {
            Scale { limit_mb: 32, ops: 250_000, global_ram_mb: 0 }
        } else {
            Scale { limit_mb: 128, ops: 1_000_000, global_ram_mb: 0 }
        }
    }

    /// A guest under emulation: a 64M limit, global rows in 256M of RAM;
    /// `quick` 16M, 128M and 60k operations.
    pub fn guest(quick: bool) -> Scale {
        if quick {
            Scale { limit_mb: 16, ops: 60_000, global_ram_mb: 128 }
        } else {
            Scale { limit_mb: 64, ops: 500_000, global_ram_mb: 256 }
        }
    }
}

/// `pattern` with its holes filled in at `scale`.
fn fill(pattern: &str, scale: Scale) -> String {
    let mut out = String::new();
    let mut rest = pattern;
    while let Some(open) = rest.find('{') {
        let close = open + rest[open..].find('}').expect("TABLE: unclosed `{`");
        out += &rest[..open];
        let hole = &rest[open + 1..close];
        out += &match hole {
            "ops" => scale.ops.to_string(),
            fraction => {
                let (num, den) = fraction.split_once('/').unwrap_or((fraction, "1"));
                let n: u64 = num.parse().expect("TABLE: hole numerator");
                let d: u64 = den.parse().expect("TABLE: hole denominator");
                format!("{}M", scale.limit_mb * n / d)
            }
        };
        rest = &rest[close + 1..];
    }
    out + rest
}

/// Every scenario of the host (`guest` false) or the guest kernels at `scale`.
pub fn all(scale: Scale, guest: bool) -> Vec<Scenario> {
    TABLE
        .iter()
        .filter(|r| r.on == On::Both || (r.on == On::Guest) == guest)
        .map(|r| {
            let base = if r.global { scale.global_ram_mb } else { scale.limit_mb };
            Scenario {
                name: r.name.to_string(),
                pattern: fill(r.pattern, Scale { limit_mb: base, ..scale }),
                limit_bytes: base << 20,
                swappiness: r.swappiness,
                global_ram_mb: r.global.then_some(base),
                swap: r.swap,
                extra: r.extra,
                warmup: r.warmup,
                zswap_pool_pct: r.zswap_pool_pct,
                since: r.since,
                tenants: r
                    .tenants
                    .iter()
                    .map(|t| Tenant {
                        group: t.group.to_string(),
                        pattern: fill(t.pattern, Scale { limit_mb: base, ..scale }),
                        knobs: t.knobs.iter().map(|&(k, hole)| (k.to_string(), bytes(hole, base))).collect(),
                        reclaim: t.reclaim.map(|hole| Reclaim { bytes: bytes(hole, base), after: scale.ops / 2 }),
                    })
                    .collect(),
            }
        })
        .collect()
}

/// `{N/D}` of `base` MiB, in bytes.
fn bytes(hole: &str, base: u64) -> u64 {
    let filled = fill(hole, Scale { limit_mb: base, ops: 0, global_ram_mb: 0 });
    filled.trim_end_matches('M').parse::<u64>().expect("TABLE: a size hole") << 20
}

/// The scenarios of `set` that `name` selects: one by name, or `all`.
pub fn select(name: &str, set: Vec<Scenario>) -> Result<Vec<Scenario>, String> {
    if name == "all" {
        return Ok(set);
    }
    let names: Vec<String> = set.iter().map(|s| s.name.clone()).collect();
    let found: Vec<Scenario> = set.into_iter().filter(|s| s.name == name).collect();
    if found.is_empty() {
        return Err(format!("unknown scenario `{name}`; scenarios: all, {}", names.join(", ")));
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holes_are_filled_from_the_scale() {
        let s = Scale { limit_mb: 64, ops: 500, global_ram_mb: 0 };
        assert_eq!(fill("hotcold:anon={1},hot={1/4},x={3/2},ops={ops}", s), "hotcold:anon=64M,hot=16M,x=96M,ops=500");
        assert_eq!(fill("no-holes", s), "no-holes");
    }

    #[test]
    fn the_host_and_guest_sets() {
        let host = all(Scale::host(false), false);
        assert_eq!(host.len(), 9, "no global rows on the host");
        assert!(host.iter().all(|s| s.global_ram_mb.is_none()));
        let zipf = host.iter().find(|s| s.name == "anon-zipf").unwrap();
        assert_eq!(zipf.pattern, "anon-zipf:anon=192M,ops=1000000,alpha=0.8,seed=1");
        assert_eq!(zipf.limit_bytes, 128 << 20);
        let sw200 = host.iter().find(|s| s.name == "mixed-sw200").unwrap();
        assert_eq!(sw200.pattern, "mixed:anon=64M,file=128M,ops=1000000,alpha=0.8,share=50,seed=1");
        assert_eq!(sw200.swappiness, 200);
        let guest = all(Scale::guest(true), true);
        let names: Vec<&str> = guest.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names[..8],
            [
                "anon-seq",
                "anon-zipf",
                "hotcold",
                "seed004-hotcold",
                "file-seq",
                "file-zipf",
                "global-hotcold",
                "global-zipf"
            ]
        );
        assert!(!names.contains(&"mixed-sw60"), "memory-group mixed rows run on the host only");
        assert!(names.contains(&"global-mixed-sw200") && names.contains(&"blkswap-pc0"));
        let quick = |name: &str| guest.iter().find(|s| s.name == name).unwrap().clone();
        assert_eq!(quick("hotcold").pattern, "hotcold:anon=16M,hot=4M,step=4M,activate=2,rounds=8");
        assert_eq!(quick("global-hotcold").pattern, "hotcold:anon=64M,hot=16M,step=16M,activate=2,rounds=8");
        assert_eq!(quick("global-hotcold").global_ram_mb, Some(128));
        assert_eq!(quick("blkswap-cluster").swap, Swap::Block { page_cluster: 3, vma_ra: false });
        assert_eq!(quick("blkswap-pc0").extra, SWAP_RA);
        assert_eq!(quick("global-mixed-sw0").pattern, "mixed:anon=64M,file=128M,ops=60000,alpha=0.8,share=50,seed=1");
        assert!(!quick("global-dirty").warmup && quick("global-dirty").pattern.ends_with("write=1"));
        assert!(!quick("blkswap-cluster").warmup, "cluster readahead starts from boot");
        assert!(guest
            .iter()
            .filter(|s| !["global-dirty", "blkswap-cluster"].contains(&s.name.as_str()))
            .all(|s| s.warmup));
        let low = quick("cg-low");
        assert_eq!((low.pattern.as_str(), low.tenants.len(), low.global_ram_mb), ("", 2, Some(128)));
        assert_eq!(low.tenants[0].knobs, [("memory.low".to_string(), 32 << 20)]);
        assert_eq!(low.tenants[0].pattern, "anon-zipf:anon=24M,ops=60000,alpha=0.8,seed=2");
        assert!(low.tenants[1].knobs.is_empty());
        assert_eq!(quick("cg-high").tenants[0].knobs, [("memory.high".to_string(), 16 << 20)]);
        assert_eq!(quick("cg-reclaim").tenants[0].reclaim, Some(Reclaim { bytes: 16 << 20, after: 30_000 }));
        assert!(quick("cg-reclaim").tenants[0].knobs.is_empty() && quick("cg-high").tenants[0].reclaim.is_none());
        assert_eq!(quick("zswap-blk").since, (6, 8));
        assert_eq!(all(Scale::guest(false), true)[7].pattern, "anon-zipf:anon=256M,ops=500000,alpha=0.8,seed=1");
    }

    #[test]
    fn selection_by_name() {
        let set = || all(Scale::host(true), false);
        assert_eq!(select("all", set()).unwrap().len(), 9);
        assert_eq!(select("hotcold", set()).unwrap()[0].name, "hotcold");
        assert!(select("nosuch", set())
            .unwrap_err()
            .starts_with("unknown scenario `nosuch`; scenarios: all, anon-seq,"));
    }
}
