//! mmtests' figures computed from our runs: the vmstat summary of a test
//! (totals over every run of a kernel) and the statistics over iterations
//! (Min, Amean, Hmean, Stddev, CoeffVar, Max). A summary row the model cannot
//! produce is kept as a row, `not modelled`, named by the simplification that
//! keeps it out (zones on a machine of one zone: S-MM1; NUMA balancing:
//! S-NB1; THP: S-KS1; compaction: S-DR1; figures of the harness: S-RP3;
//! userspace memory managers: S-RP4), so that it
//! can be wired when the model grows the mechanism.

use super::Metric;
use engine::RunReport;

/// How a summary row is computed from a kernel's runs.
enum Extract {
    /// From the runs.
    Ours(fn(&[&RunReport]) -> f64),
    /// A zone's scan velocity (pages scanned in it by kswapd and direct
    /// reclaim per second): from runs with per-zone LRU lists on a machine of
    /// several zones, else not modelled (S-MM1).
    ZoneVelocity(&'static str),
    /// A zone's allocations (`pgalloc_*`): from runs on a machine of several
    /// zones, else not modelled (S-MM1).
    ZoneAllocs(&'static str),
    /// Not produced by the model, for the reason this simplification gives.
    Not(&'static str),
}

fn sum(runs: &[&RunReport], name: &str) -> f64 {
    runs.iter().map(|r| r.get(name).unwrap_or(0) as f64).sum()
}

fn secs(runs: &[&RunReport]) -> f64 {
    runs.iter().map(|r| r.virtual_ns as f64 / 1e9).sum()
}

/// Seconds of `time(run)`, a CPU time in ns, summed over `runs`.
fn cpu_secs(runs: &[&RunReport], time: fn(&RunReport) -> u64) -> f64 {
    runs.iter().map(|r| time(r) as f64 / 1e9).sum()
}

fn ratio(num: f64, den: f64) -> f64 {
    if den > 0.0 {
        num / den
    } else {
        0.0
    }
}

/// mmtests' name of a vmstat summary row and how we compute it.
fn extract(name: &str) -> Extract {
    use Extract::{Not, Ours};
    match name {
        "Minor Faults" => Ours(|r| sum(r, "pgfault") - sum(r, "pgmajfault")),
        "Major Faults" => Ours(|r| sum(r, "pgmajfault")),
        "Swap Ins" => Ours(|r| sum(r, "pswpin")),
        "Swap Outs" => Ours(|r| sum(r, "pswpout")),
        "Allocation stalls" => Ours(|r| sum(r, "allocstall_normal")),
        "Normal allocs" => Ours(|r| sum(r, "pgalloc_normal")),
        "Direct pages scanned" => Ours(|r| sum(r, "pgscan_direct")),
        "Kswapd pages scanned" => Ours(|r| sum(r, "pgscan_kswapd")),
        "Kswapd pages reclaimed" => Ours(|r| sum(r, "pgsteal_kswapd")),
        "Direct pages reclaimed" => Ours(|r| sum(r, "pgsteal_direct")),
        "Kswapd efficiency" => Ours(|r| 100.0 * ratio(sum(r, "pgsteal_kswapd"), sum(r, "pgscan_kswapd"))),
        "Kswapd velocity" => Ours(|r| ratio(sum(r, "pgscan_kswapd"), secs(r))),
        "Direct efficiency" => Ours(|r| 100.0 * ratio(sum(r, "pgsteal_direct"), sum(r, "pgscan_direct"))),
        "Direct velocity" => Ours(|r| ratio(sum(r, "pgscan_direct"), secs(r))),
        "Percentage direct scans" => {
            Ours(|r| 100.0 * ratio(sum(r, "pgscan_direct"), sum(r, "pgscan_direct") + sum(r, "pgscan_kswapd")))
        }
        "Page writes by reclaim" => Ours(|r| sum(r, "nr_vmscan_write")),
        "Page writes file" => Ours(|r| sum(r, "nr_vmscan_write") - sum(r, "pswpout")),
        "Page writes anon" => Ours(|r| sum(r, "pswpout")),
        "Page reclaim immediate" => Ours(|r| sum(r, "nr_vmscan_immediate_reclaim")),
        // pgpgin and pgpgout count KiB; a sector is 512 bytes.
        "Sector Reads" => Ours(|r| 2.0 * sum(r, "pgpgin")),
        "Sector Writes" => Ours(|r| 2.0 * sum(r, "pgpgout")),
        "Elapsed" => Ours(secs),
        // `/usr/bin/time` of the test: its processes' CPU, the kernel threads' apart.
        "User" => Ours(|r| cpu_secs(r, RunReport::user_time_ns)),
        "System" => Ours(|r| cpu_secs(r, RunReport::system_time_ns)),
        "Page rescued immediate" => Not("S-CL3"),
        "Slabs scanned" => Ours(|r| sum(r, "slabs_scanned")),
        "Direct inode steals" => Ours(|r| sum(r, "pginodesteal")),
        "Kswapd inode steals" => Ours(|r| sum(r, "kswapd_inodesteal")),
        "NUMA alloc hit" => Ours(|r| sum(r, "numa_hit")),
        "NUMA alloc miss" => Ours(|r| sum(r, "numa_miss")),
        "NUMA interleave hit" => Ours(|r| sum(r, "numa_interleave")),
        "NUMA alloc local" => Ours(|r| sum(r, "numa_local")),
        "DMA allocs" => Extract::ZoneAllocs("pgalloc_dma"),
        "DMA32 allocs" => Extract::ZoneAllocs("pgalloc_dma32"),
        "Movable allocs" => Extract::ZoneAllocs("pgalloc_movable"),
        // Automatic NUMA balancing (hinting faults, PTE updates, migrations).
        n if n.starts_with("NUMA") || n.starts_with("AutoNUMA") => Not("S-NB1"),
        "Kswapd skipped wait" => Not("S-RP3"),
        n if n.starts_with("THP") => Not("S-KS1"),
        n if n.starts_with("Compaction") || n.starts_with("Page migrate") => Not("S-DR1"),
        "Zone normal velocity" => Extract::ZoneVelocity("Normal"),
        "Zone dma32 velocity" => Extract::ZoneVelocity("DMA32"),
        "Zone dma velocity" => Extract::ZoneVelocity("DMA"),
        _ => Not("S-MM1"),
    }
}

/// Pages scanned in the zones named `zone` over `runs`.
fn zone_scanned(runs: &[&RunReport], zone: &str) -> f64 {
    let zones = runs.iter().flat_map(|r| r.zones.iter().filter(|z| z.name == zone));
    zones.map(|z| (z.stat.pgscan_kswapd + z.stat.pgscan_direct) as f64).sum()
}

/// There are runs, and each has several zones and counted every page
/// scanned in one of them (per-zone LRU lists: `lru_layout=zone`).
fn scanned_per_zone(runs: &[Vec<&RunReport>]) -> bool {
    let counted = |r: &RunReport| {
        let per_zone: u64 = r.zones.iter().map(|z| z.stat.pgscan_kswapd + z.stat.pgscan_direct).sum();
        r.zones.len() > 1 && per_zone == r.get("pgscan_kswapd").unwrap_or(0) + r.get("pgscan_direct").unwrap_or(0)
    };
    runs.iter().any(|k| !k.is_empty()) && runs.iter().flatten().all(|r| counted(r))
}

/// There are runs, and each is on a machine of several zones.
fn several_zones(runs: &[Vec<&RunReport>]) -> bool {
    runs.iter().any(|k| !k.is_empty()) && runs.iter().flatten().all(|r| r.zones.len() > 1)
}

/// The vmstat summary rows named in `seed` (mmtests' name, the seed's figure per
/// column), computed over `runs[i]`, the runs of column `i`.
pub fn vmstat_rows(seed: &[(&str, &[f64])], runs: &[Vec<&RunReport>], source: &str) -> Vec<Metric> {
    seed.iter()
        .map(|(name, figures)| {
            let s = figures.iter().map(|v| Some(*v)).collect();
            match extract(name) {
                Extract::Ours(f) => Metric::new(*name, s, runs.iter().map(|r| f(r)).collect(), source),
                Extract::ZoneVelocity(zone) if scanned_per_zone(runs) => {
                    let v = runs.iter().map(|r| ratio(zone_scanned(r, zone), secs(r))).collect();
                    Metric::new(*name, s, v, source)
                }
                Extract::ZoneVelocity(_) => Metric::not_modelled(*name, s, source, "S-MM1"),
                Extract::ZoneAllocs(counter) if several_zones(runs) => {
                    Metric::new(*name, s, runs.iter().map(|r| sum(r, counter)).collect(), source)
                }
                Extract::ZoneAllocs(_) => Metric::not_modelled(*name, s, source, "S-MM1"),
                Extract::Not(code) => Metric::not_modelled(*name, s, source, code),
            }
        })
        .collect()
}

/// An mmtests statistic over iterations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stat {
    /// Smallest.
    Min,
    /// Arithmetic mean.
    Amean,
    /// Harmonic mean.
    Hmean,
    /// Standard deviation, mmtests' population one (n in the divisor).
    Stddev,
    /// Stddev as a percentage of the mean.
    CoeffVar,
    /// Largest.
    Max,
}

impl Stat {
    /// Its name as mmtests prints it.
    pub fn name(self) -> &'static str {
        match self {
            Stat::Min => "Min",
            Stat::Amean => "Amean",
            Stat::Hmean => "Hmean",
            Stat::Stddev => "Stddev",
            Stat::CoeffVar => "CoeffVar",
            Stat::Max => "Max",
        }
    }

    /// The statistic of `xs` (0 for none).
    pub fn of(self, xs: &[f64]) -> f64 {
        if xs.is_empty() {
            return 0.0;
        }
        let n = xs.len() as f64;
        let mean = xs.iter().sum::<f64>() / n;
        let std = (xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n).sqrt();
        match self {
            Stat::Min => xs.iter().copied().fold(f64::INFINITY, f64::min),
            Stat::Max => xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            Stat::Amean => mean,
            Stat::Hmean if xs.iter().all(|x| *x > 0.0) => n / xs.iter().map(|x| 1.0 / x).sum::<f64>(),
            Stat::Hmean => 0.0,
            Stat::Stddev => std,
            Stat::CoeffVar => ratio(100.0 * std, mean),
        }
    }
}

/// mmtests' `config-global-dhp__parallelio-memcachetest`: memcached's pool is
/// `MEMTOTAL_BYTES*4/5`, as a share of memory.
pub const MEMPOOL: f64 = 0.8;

/// The same config's background IO sizes as shares of memory: none, then
/// `PARALLELIO_MIN_IOSIZE` = (memory - pool) / 2 rising by a third of the way to
/// `PARALLELIO_MAX_IOSIZE` = (memory - pool) x 4. The seeds' sizes fit it: seed
/// 000's 769M, 2565M, 4361M and seed 003's 715M, 2385M, 4055M are 0.1, 0.333
/// and 0.567 of a 7690M and a 7150M machine.
pub fn parallelio_sizes() -> [f64; 4] {
    let (min, max) = ((1.0 - MEMPOOL) / 2.0, (1.0 - MEMPOOL) * 4.0);
    let step = (max - min) / 3.0;
    [0.0, min, min + step, min + 2.0 * step]
}

/// One parallelio run's figure for an mmtests quantity: `memcachetest` (ops/s),
/// `io-duration` (s, the 100 ms start delay excluded), `swapin`, `swaptotal`,
/// `minorfaults`, `majorfaults`.
pub fn parallelio_quantity(r: &RunReport, q: &str) -> f64 {
    let c = |n: &str| r.get(n).unwrap_or(0) as f64;
    match q {
        "memcachetest" => super::ops_per_sec_of(r, "memcachetest"),
        "io-duration" => r
            .threads
            .iter()
            .find(|t| t.name.starts_with("parallelio"))
            .map_or(0.0, |t| t.end_ns.saturating_sub(100_000_000) as f64 / 1e9),
        "swapin" => c("pswpin"),
        "swaptotal" => c("pswpin") + c("pswpout"),
        "minorfaults" => c("pgfault") - c("pgmajfault"),
        _ => c("pgmajfault"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistics_match_mmtests_on_the_seed_figures() {
        // Seed 000, io-duration-769M over three iterations: 6, 7, 7.
        let xs = [6.0, 7.0, 7.0];
        assert_eq!(Stat::Min.of(&xs), 6.0);
        assert!((Stat::Amean.of(&xs) - 6.67).abs() < 0.01);
        assert!((Stat::Stddev.of(&xs) - 0.47).abs() < 0.01, "population stddev, as the seed's 0.47");
        assert!((Stat::CoeffVar.of(&xs) - 7.07).abs() < 0.01);
        assert!((Stat::Hmean.of(&[1.0, 2.0, 4.0]) - 12.0 / 7.0).abs() < 1e-9);
        assert_eq!(Stat::Max.of(&xs), 7.0);
    }

    #[test]
    fn parallelio_sizes_are_the_seeds_sizes_over_their_memory() {
        let s = parallelio_sizes();
        for (seed, mem, i) in [(769.0, 7690.0, 1), (2565.0, 7690.0, 2), (4361.0, 7690.0, 3), (4055.0, 7150.0, 3)] {
            assert!((s[i] - seed / mem).abs() < 0.002, "{seed}M of {mem}M: {}", s[i]);
        }
    }

    #[test]
    fn rows_the_model_lacks_say_why() {
        let rows = vmstat_rows(
            &[("Zone dma32 velocity", &[1.0, 2.0]), ("DMA32 allocs", &[3.0, 2.0]), ("NUMA hint faults", &[0.0, 0.0])],
            &[vec![], vec![]],
            "t",
        );
        assert_eq!(rows[0].not_modelled, Some("S-MM1"));
        assert_eq!(rows[1].not_modelled, Some("S-MM1"));
        assert_eq!(rows[2].not_modelled, Some("S-NB1"));
    }
}
