//! The zones at the end of a run, and their `/proc/zoneinfo`-style dump.

use mm::{Mm, Watermark, ZoneStat, MAX_NR_ZONES};
use std::fmt::Write;

/// One zone at the end of a run, in pages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZoneReport {
    /// Node.
    pub node: u8,
    /// Zone name as `/proc/zoneinfo` prints it (`DMA32`).
    pub name: &'static str,
    /// First page frame.
    pub start_pfn: u32,
    /// Managed pages.
    pub managed: u64,
    /// Watermarks min, low, high.
    pub min: u64,
    /// See `min`.
    pub low: u64,
    /// See `min`.
    pub high: u64,
    /// Free pages at the end.
    pub free: u64,
    /// `protection:` (`lowmem_reserve[]`), per zone type.
    pub lowmem_reserve: [u64; MAX_NR_ZONES],
    /// The zone's allocation and NUMA counters.
    pub stat: ZoneStat,
    /// `pagesets`: each CPU's per-CPU list at the end (empty with `pcp=off`).
    pub pagesets: Vec<Pageset>,
}

/// One CPU's per-CPU list of a zone, as `/proc/zoneinfo`'s `pagesets` shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pageset {
    /// Free pages on the list (not in `free`).
    pub count: u32,
    /// `high`: the list is drained when it reaches this.
    pub high: u32,
    /// `batch`: pages moved per refill (and per drain before v5.14).
    pub batch: u32,
}

impl ZoneReport {
    /// Every zone of `mm`, in pfn order.
    pub fn of(mm: &Mm) -> Vec<ZoneReport> {
        mm.zones
            .iter()
            .enumerate()
            .map(|(i, z)| ZoneReport {
                node: z.node,
                name: z.id.label(),
                start_pfn: z.start_pfn,
                managed: z.managed,
                min: z.wmark(Watermark::Min),
                low: z.wmark(Watermark::Low),
                high: z.wmark(Watermark::High),
                free: mm.zone_free(i),
                lowmem_reserve: z.lowmem_reserve,
                stat: z.stat,
                pagesets: (0..mm.frames.pcp.nr_cpus())
                    .filter_map(|cpu| mm.frames.pcp.list(i, cpu))
                    .map(|(p, batch)| Pageset { count: p.count(), high: p.high, batch })
                    .collect(),
            })
            .collect()
    }
}

/// `zones` as `/proc/zoneinfo` lays them out (the lines this model has).
pub fn zoneinfo_text(zones: &[ZoneReport]) -> String {
    let mut out = String::new();
    for z in zones {
        let s = &z.stat;
        let _ = writeln!(out, "Node {}, zone {:>8}", z.node, z.name);
        let _ = writeln!(out, "  pages free     {}", z.free);
        for (name, v) in [("min", z.min), ("low", z.low), ("high", z.high), ("managed", z.managed)] {
            let _ = writeln!(out, "        {name:<8} {v}");
        }
        let p = z.lowmem_reserve.map(|r| r.to_string()).join(", ");
        let _ = writeln!(out, "        protection: ({p})");
        for (name, v) in [
            ("pgalloc", s.pgalloc),
            ("numa_hit", s.numa_hit),
            ("numa_miss", s.numa_miss),
            ("numa_foreign", s.numa_foreign),
            ("numa_interleave", s.numa_interleave),
            ("numa_local", s.numa_local),
            ("numa_other", s.numa_other),
            ("pgscan_kswapd", s.pgscan_kswapd),
            ("pgscan_direct", s.pgscan_direct),
            ("pgsteal_kswapd", s.pgsteal_kswapd),
            ("pgsteal_direct", s.pgsteal_direct),
        ] {
            let _ = writeln!(out, "      {name:<15} {v}");
        }
        if !z.pagesets.is_empty() {
            let _ = writeln!(out, "  pagesets");
        }
        for (cpu, p) in z.pagesets.iter().enumerate() {
            let _ = writeln!(out, "    cpu: {cpu}");
            let _ = writeln!(
                out,
                "              count: {}\n              high:  {}\n              batch: {}",
                p.count, p.high, p.batch
            );
        }
        let _ = writeln!(out, "  start_pfn:           {}", z.start_pfn);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dump_names_each_zone_and_its_numbers() {
        let mut mm = Mm::new(100, 0);
        mm.zones[0].watermark = [1, 2, 3, 4];
        let t = zoneinfo_text(&ZoneReport::of(&mm));
        assert!(t.starts_with("Node 0, zone   Normal\n  pages free     100\n        min      1\n"), "{t}");
        assert!(t.contains("        managed  100\n        protection: (0, 0, 0, 0)\n"), "{t}");
    }
}
