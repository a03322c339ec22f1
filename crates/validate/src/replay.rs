//! The simulator side of `validate`: the driver's dry-mode trace replayed as a
//! workload thread on a machine configured like the host's group.

use crate::scenarios::Reclaim;
use driver::pattern::Op;
use driver::trace::Trace;
use engine::{Access, Config, ControlWrite, Program, RunReport, SimBuilder, Step};
use mm::{FileId, RegionId};

/// Replays a trace's accesses in order, with a counter snapshot after every
/// `phase_every` accesses.
pub struct TraceProgram {
    ops: Vec<Op>,
    next: usize,
    region: Option<RegionId>,
    file: Option<FileId>,
    phase_every: usize,
    /// The access count of the last snapshot.
    snapped: usize,
    /// A control write after this many accesses (taken when made).
    write: Option<(usize, ControlWrite)>,
}

impl Program for TraceProgram {
    fn next(&mut self) -> Step {
        if let Some((after, w)) = self.write {
            if after == self.next {
                self.write = None;
                return Step::Control(w);
            }
        }
        let Some(&op) = self.ops.get(self.next) else { return Step::Done };
        if self.phase_every > 0 && self.next > self.snapped && self.next.is_multiple_of(self.phase_every) {
            self.snapped = self.next;
            return Step::Snapshot;
        }
        self.next += 1;
        Step::Access(match op {
            Op::Anon { page, write } => {
                Access::Mem { region: self.region.expect("trace declares anon pages"), page, write }
            }
            Op::File { page, write } => {
                let file = self.file.expect("trace declares file pages");
                if write {
                    Access::FileWrite { file, page }
                } else {
                    Access::FileRead { file, page }
                }
            }
        })
    }
}

/// The machine of a validation run.
#[derive(Clone, Debug)]
pub struct Machine {
    /// Kernel profile.
    pub profile: &'static str,
    /// `memcg.limit` in bytes.
    pub limit_bytes: u64,
    /// `memcg.swappiness`.
    pub swappiness: u32,
    /// Swap device kind (`zram`, `hdd`) and size.
    pub swap_kind: &'static str,
    /// Swap size in bytes.
    pub swap_bytes: u64,
    /// `swap_ra` (kernel, cluster).
    pub swap_ra: &'static str,
    /// `vm.page-cluster`.
    pub page_cluster: u64,
    /// `vma_ra_enabled`.
    pub vma_ra: bool,
    /// `memcg.stats_flush`: charges between the group's statistics flushes.
    pub stats_flush: u64,
    /// Settings measured on the kernel side (zram's compression, [`zram_settings`]).
    pub measured: Vec<(String, String)>,
    /// `--set KEY=VALUE` overrides from the command line, applied last.
    pub extra: Vec<(String, String)>,
    /// Global reclaim (no group): the guest's memory at the start of the run.
    pub global: Option<GlobalStart>,
    /// CPUs the workload and kswapd share (the guest's); 0: as many as they need.
    pub cpus: u64,
    /// A counter snapshot after every this many accesses (0: none), as the guest's driver takes.
    pub phase_every: u64,
    /// The swap device is the guest's null_blk (`swap_kind` `ssd`) with this latency and depth.
    pub swap_dev: Option<BlockDev>,
    /// The files live on the guest's null_blk (`fs=ssd`) with this latency and depth.
    pub fs_dev: Option<BlockDev>,
    /// A memory-group run's RAM (the guest's MemTotal where zswap's pool limit, a
    /// percent of it, matters); `None`: four times the limit, at least 1G.
    pub memory: Option<u64>,
    /// cgroup v2 groups' knobs: (group, knob, bytes), `cgroup.GROUP.KNOB=SIZE`.
    pub knobs: Vec<(String, String, u64)>,
    /// `memory.reclaim` writes: (group, write), made by the group's trace
    /// thread between the same two accesses as the guest's driver makes it.
    pub reclaims: Vec<(String, Reclaim)>,
}

/// A null_blk device as the guest reports it: a fixed completion latency, a
/// queue depth, no bandwidth limit (`mbps` 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockDev {
    /// `completion_nsec`, in microseconds.
    pub latency_us: u64,
    /// `hw_queue_depth`: requests in flight.
    pub queue_depth: u64,
}

/// MB/s standing in for null_blk's unlimited bandwidth (a page in 41 ns).
const UNLIMITED_MBPS: u64 = 100_000;

impl BlockDev {
    /// The `PREFIX.latency_us`, `PREFIX.channels`, `PREFIX.bandwidth_mbps` settings.
    fn settings(&self, prefix: &str) -> [(String, String); 3] {
        [
            (format!("{prefix}.latency_us"), self.latency_us.to_string()),
            (format!("{prefix}.channels"), self.queue_depth.to_string()),
            (format!("{prefix}.bandwidth_mbps"), UNLIMITED_MBPS.to_string()),
        ]
    }
}

/// The guest's memory at the start of a global run (after dropping caches and
/// compacting), from its `@section start`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GlobalStart {
    /// Pages the zones manage (`managed`, summed over the zones).
    pub managed_pages: u64,
    /// Free pages (`pages free`, summed over the zones).
    pub free_pages: u64,
    /// `vm.min_free_kbytes`.
    pub min_free_kbytes: u64,
    /// `vm.watermark_scale_factor`.
    pub watermark_scale_factor: u64,
    /// `vm.watermark_boost_factor` (v5.0+; `None` where the guest lacks the file).
    pub watermark_boost_factor: Option<u64>,
    /// Each populated zone's managed pages, lowest zone first (`zone_ZONE_managed`).
    pub zones: Vec<(mm::ZoneId, u64)>,
    /// The zones' pageblocks as `memory.pageblocks` (from `/proc/pagetypeinfo`;
    /// `None` in reports from before the guest read it).
    pub pageblocks: Option<String>,
}

impl GlobalStart {
    /// From the `start` section's `zone_ZONE_managed`, `zone_ZONE_free` and sysctl lines.
    pub fn from_stats(start: &crate::stat::Stats) -> Result<GlobalStart, String> {
        let zones = |key: &str| -> u64 {
            start.iter().filter(|(k, _)| k.starts_with("zone_") && k.ends_with(key)).map(|(_, v)| v).sum()
        };
        let get = |key: &str| start.get(key).copied().ok_or_else(|| format!("the guest's start state lacks `{key}`"));
        let g = GlobalStart {
            managed_pages: zones("_managed"),
            free_pages: zones("_free"),
            min_free_kbytes: get("min_free_kbytes")?,
            watermark_scale_factor: get("watermark_scale_factor")?,
            watermark_boost_factor: start.get("watermark_boost_factor").copied(),
            zones: mm::ZoneId::ALL
                .into_iter()
                .map(|z| (z, start.get(&format!("zone_{}_managed", z.label())).copied().unwrap_or(0)))
                .filter(|z| z.1 > 0)
                .collect(),
            pageblocks: None,
        };
        let g = GlobalStart { pageblocks: pageblocks_setting(start, &g.zones), ..g };
        if g.managed_pages == 0 || g.free_pages == 0 {
            return Err("the guest's start state has no zone with managed and free pages".into());
        }
        Ok(g)
    }

    /// The `zones` setting of the guest's layout (`dma:15M,dma32:rest`):
    /// each zone's managed pages, the last taking the rest; `None` for one zone.
    pub fn zones_setting(&self) -> Option<String> {
        let (last, lower) = self.zones.split_last().filter(|(_, lower)| !lower.is_empty())?;
        let sizes = lower
            .iter()
            .map(|(z, pages)| format!("{}:{}", z.name(), engine::config::format_size(pages * mm::PAGE_SIZE)));
        Some(sizes.chain(std::iter::once(format!("{}:rest", last.0.name()))).collect::<Vec<_>>().join(","))
    }

    /// Pages the kernel holds at the start (kernel, slab, page tables, the
    /// initramfs files): managed but not free.
    pub fn reserved_pages(&self) -> u64 {
        self.managed_pages.saturating_sub(self.free_pages)
    }
}

/// `memory.pageblocks` from the start section's `pageblock_ZONE_TYPE_blocks`
/// and `_free` lines, for the populated `zones`; `None` without them. The
/// kernel's other types (`HighAtomic`, `CMA`, `Isolate`: none in a booted
/// guest) count as unmovable (S-MM6).
fn pageblocks_setting(start: &crate::stat::Stats, zones: &[(mm::ZoneId, u64)]) -> Option<String> {
    let get = |z: mm::ZoneId, ty: &str, what: &str| {
        start.get(&format!("pageblock_{}_{ty}_{what}", z.label())).map(|&n| n as u32)
    };
    let mut list = Vec::new();
    for &(zone, _) in zones {
        let pair = |ty: &str| Some((get(zone, ty, "blocks")?, get(zone, ty, "free")?));
        let other = ["HighAtomic", "CMA", "Isolate"].map(|ty| pair(ty).unwrap_or((0, 0)));
        let unmovable = other.iter().fold(pair("Unmovable")?, |a, b| (a.0 + b.0, a.1 + b.1));
        let layout = mm::pageblock::BootLayout {
            unmovable,
            reclaimable: pair("Reclaimable")?,
            movable_free: get(zone, "Movable", "free")?,
        };
        list.push(engine::config::BootBlocks { zone, layout });
    }
    Some(engine::config::format_pageblocks(&list))
}

impl Machine {
    /// The `--set` settings that reproduce this machine with `reclaimsim run`.
    pub fn settings(&self) -> Vec<(String, String)> {
        let size = engine::config::format_size;
        let swap = ("swap".to_string(), format!("{}:{}", self.swap_kind, size(self.swap_bytes)));
        let mut v: Vec<(String, String)> = match &self.global {
            // The guest's managed memory with what the kernel held at the start reserved.
            // The guest's zones (DMA and DMA32 on the 256M guest), as its zoneinfo has them.
            // Where the guest reported its pageblocks, they place the kernel's memory zone by zone.
            Some(g) => [
                ("memory".into(), size(g.managed_pages * mm::PAGE_SIZE)),
                match &g.pageblocks {
                    Some(p) => ("memory.pageblocks".into(), p.clone()),
                    None => ("memory.reserved".into(), size(g.reserved_pages() * mm::PAGE_SIZE)),
                },
            ]
            .into_iter()
            .chain(g.zones_setting().map(|z| ("zones".to_string(), z)))
            .collect(),
            // Enough RAM that only the group's limit causes reclaim (the host has GBs free).
            None => vec![("memory".into(), size(self.memory.unwrap_or((self.limit_bytes * 4).max(1 << 30))))],
        };
        v.push(swap);
        if let Some(d) = &self.swap_dev {
            v.extend(d.settings("swap"));
        }
        if let Some(d) = &self.fs_dev {
            v.push(("fs".into(), "ssd".into()));
            v.extend(d.settings("fs"));
        }
        if self.cpus > 0 {
            v.push(("cpus".into(), self.cpus.to_string()));
        }
        if let Some(g) = &self.global {
            v.extend([
                ("vm.swappiness".into(), self.swappiness.to_string()),
                ("vm.min_free_kbytes".into(), g.min_free_kbytes.to_string()),
                ("vm.watermark_scale_factor".into(), g.watermark_scale_factor.to_string()),
            ]);
            if let Some(boost) = g.watermark_boost_factor {
                v.push(("vm.watermark_boost_factor".into(), boost.to_string()));
            }
        } else {
            v.extend([
                ("memcg.limit".into(), size(self.limit_bytes)),
                ("memcg.swappiness".into(), self.swappiness.to_string()),
            ]);
        }
        v.extend([
            ("vm.page-cluster".into(), self.page_cluster.to_string()),
            ("vma_ra_enabled".into(), (self.vma_ra as u8).to_string()),
            ("swap_ra".into(), self.swap_ra.to_string()),
        ]);
        if self.global.is_none() {
            v.push(("memcg.stats_flush".into(), self.stats_flush.to_string()));
        }
        for (group, knob, bytes) in &self.knobs {
            v.push((format!("cgroup.{group}.{knob}"), size(*bytes)));
        }
        v.extend(self.measured.iter().cloned());
        v.extend(self.extra.iter().cloned());
        v
    }
}

/// `zram.comp_ratio` and `zram.same_filled_pct` from `/sys/block/zram0/mm_stat`
/// (`orig_data_size compr_data_size mem_used_total mem_limit mem_used_max
/// same_pages ...`) read while the workload's pages were stored: same-filled
/// pages take no pool memory, the others compress `orig / compr` on average.
/// Nothing where zram held no pages.
pub fn zram_settings(mm_stat: &str) -> Result<Vec<(String, String)>, String> {
    let f: Vec<u64> = mm_stat
        .split_whitespace()
        .map(|w| w.parse().map_err(|_| format!("zram mm_stat `{}`: `{w}` is not a number", mm_stat.trim())))
        .collect::<Result<_, _>>()?;
    let [orig, compr, _, _, _, same, ..] = f[..] else {
        return Err(format!("zram mm_stat `{}`: expected at least 6 fields", mm_stat.trim()));
    };
    let stored = orig / mm::PAGE_SIZE;
    if stored == 0 {
        return Ok(Vec::new());
    }
    let mut v = vec![("zram.same_filled_pct".to_string(), format!("{:.2}", same as f64 * 100.0 / stored as f64))];
    let compressed = (stored - same.min(stored)) * mm::PAGE_SIZE;
    if compr > 0 && compressed > 0 {
        let ratio = (compressed as f64 / compr as f64).clamp(1.0, 4096.0);
        v.insert(0, ("zram.comp_ratio".to_string(), format!("{ratio:.2}")));
    }
    Ok(v)
}

/// Runs the traces on `machine`, each as a thread of its own in its cgroup v2
/// group (the path; empty: the root, or the v1 group of `memcg.limit`); the
/// report carries the memcg's memory.stat and the groups'.
pub fn simulate(machine: &Machine, traces: Vec<(String, Trace)>) -> Result<RunReport, String> {
    let mut cfg = Config::for_profile(machine.profile).map_err(|e| e.to_string())?;
    for (k, v) in machine.settings() {
        cfg.set(&k, &v).map_err(|e| e.to_string())?;
    }
    let mut b = SimBuilder::new(cfg).map_err(|e| e.to_string())?;
    let phase_every = machine.phase_every as usize;
    for (group, trace) in traces {
        // Each trace is one driver process of the guest: it exits, freeing its memory, when it ends.
        b.begin_process(0)?;
        b.exit_when_done();
        let name =
            if group.is_empty() { "driver".to_string() } else { b.set_cgroup(&group).map(|()| group.clone())? };
        let region = (trace.anon_pages > 0).then(|| b.add_anon_region(trace.anon_pages));
        let file = (trace.file_pages > 0).then(|| b.add_file(trace.file_pages));
        let write = match machine.reclaims.iter().find(|(g, _)| *g == group) {
            Some((_, r)) => Some((r.after as usize, b.add_memory_reclaim_write(&group, r.bytes.to_string())?)),
            None => None,
        };
        let program = TraceProgram { ops: trace.ops, next: 0, region, file, phase_every, snapped: 0, write };
        b.add_thread(&name, Box::new(program));
    }
    b.build().run(&mut |_| {}).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn machine(global: Option<GlobalStart>) -> Machine {
        Machine {
            profile: "v6.2",
            limit_bytes: 64 << 20,
            swappiness: 60,
            swap_kind: "zram",
            swap_bytes: 1 << 30,
            swap_ra: "kernel",
            page_cluster: 3,
            vma_ra: true,
            stats_flush: 7,
            measured: vec![("zram.comp_ratio".into(), "50".into())],
            extra: vec![("vm.swappiness".into(), "100".into())],
            cpus: if global.is_some() { 1 } else { 0 },
            phase_every: 0,
            global,
            swap_dev: None,
            fs_dev: None,
            memory: None,
            knobs: Vec::new(),
            reclaims: Vec::new(),
        }
    }

    /// The guest's pagetypeinfo lines become `memory.pageblocks`, which then
    /// stands in for `memory.reserved`; a zone missing a line gives none.
    #[test]
    fn pageblocks_from_the_guests_pagetypeinfo() {
        let mut text = String::from("zone_DMA_managed 3840\nzone_DMA_free 3808\nzone_DMA32_managed 18399\nzone_DMA32_free 7756\nmin_free_kbytes 1182\nwatermark_scale_factor 10\n");
        for (zone, [u, m, r, h]) in
            [("DMA", [(1, 224), (7, 3584), (0, 0), (0, 0)]), ("DMA32", [(12, 226), (42, 6678), (2, 848), (1, 3)])]
        {
            for (ty, (blocks, free)) in ["Unmovable", "Movable", "Reclaimable", "HighAtomic"].iter().zip([u, m, r, h]) {
                text += &format!("pageblock_{zone}_{ty}_blocks {blocks}\npageblock_{zone}_{ty}_free {free}\n");
            }
        }
        let start = crate::stat::parse_stats("start", &text).unwrap();
        let g = GlobalStart::from_stats(&start).unwrap();
        let blocks =
            "dma:unmovable=1/224,reclaimable=0/0,movable=3584;dma32:unmovable=13/229,reclaimable=2/848,movable=6678";
        assert_eq!(g.pageblocks.as_deref(), Some(blocks), "HighAtomic counts as unmovable");
        let s = machine(Some(g)).settings();
        assert!(s.contains(&("memory.pageblocks".into(), blocks.into())));
        assert!(!s.iter().any(|(k, _)| k == "memory.reserved"), "the blocks place the kernel's memory");
        let mut lacking = start.clone();
        lacking.remove("pageblock_DMA32_Reclaimable_free");
        assert_eq!(GlobalStart::from_stats(&lacking).unwrap().pageblocks, None);
    }

    #[test]
    fn global_start_from_the_guest_and_its_settings() {
        let text = "MemTotal 215000\nMemFree 150000\nzone_DMA_managed 3840\nzone_DMA_free 3000\nzone_DMA32_managed 50000\nzone_DMA32_free 37000\nzone_Normal_managed 0\nzone_Normal_free 0\nzone_DMA32_min 400\nmin_free_kbytes 1800\nwatermark_scale_factor 10\nwatermark_boost_factor 0\n";
        let start = crate::stat::parse_stats("start", text).unwrap();
        let g = GlobalStart::from_stats(&start).unwrap();
        assert_eq!(
            g,
            GlobalStart {
                managed_pages: 53840,
                free_pages: 40000,
                min_free_kbytes: 1800,
                watermark_scale_factor: 10,
                watermark_boost_factor: Some(0),
                zones: vec![(mm::ZoneId::Dma, 3840), (mm::ZoneId::Dma32, 50000)],
                pageblocks: None,
            }
        );
        assert_eq!(g.zones_setting().as_deref(), Some("dma:15M,dma32:rest"));
        assert_eq!(g.reserved_pages(), 13840);
        let mut lacking = start.clone();
        lacking.remove("min_free_kbytes");
        assert_eq!(GlobalStart::from_stats(&lacking).unwrap_err(), "the guest's start state lacks `min_free_kbytes`");
        let s = machine(Some(g.clone())).settings();
        let keys: Vec<&str> = s.iter().map(|(k, _)| k.as_str()).collect();
        assert!(!keys.iter().any(|k| k.starts_with("memcg.")), "no group: {keys:?}");
        let first = |key: &str| s.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str());
        assert_eq!((first("vm.min_free_kbytes"), first("vm.watermark_scale_factor")), (Some("1800"), Some("10")));
        assert_eq!(first("vm.watermark_boost_factor"), Some("0"), "the guest's boost factor");
        assert_eq!((first("memory"), first("memory.reserved")), (Some("215360K"), Some("55360K")));
        assert_eq!(first("zones"), Some("dma:15M,dma32:rest"), "the guest's zones");
        assert_eq!(first("cpus"), Some("1"), "the guest's one CPU");
        // Measured settings, then the command line's, last.
        assert_eq!(
            &s[s.len() - 2..],
            &[("zram.comp_ratio".into(), "50".into()), ("vm.swappiness".into(), "100".into())]
        );
        let mut cfg = engine::Config::for_profile("v6.2").unwrap();
        for (k, v) in &s {
            cfg.set(k, v).unwrap_or_else(|e| panic!("{k}={v}: {e}"));
        }
        let memcg = machine(None).settings();
        assert_eq!(
            &memcg[..3],
            &[
                ("memory".to_string(), "1G".to_string()),
                ("swap".into(), "zram:1G".into()),
                ("memcg.limit".into(), "64M".into())
            ]
        );
        assert!(memcg.contains(&("memcg.stats_flush".into(), "7".into())));
    }

    #[test]
    fn null_blk_devices_as_the_guest_reports_them() {
        let dev = BlockDev { latency_us: 50, queue_depth: 64 };
        let m = Machine { swap_kind: "ssd", swap_dev: Some(dev), fs_dev: Some(dev), ..machine(None) };
        let s = m.settings();
        let get = |key: &str| s.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str());
        assert_eq!(
            (get("swap"), get("swap.latency_us"), get("swap.channels")),
            (Some("ssd:1G"), Some("50"), Some("64"))
        );
        assert_eq!(
            (get("fs"), get("fs.latency_us"), get("fs.bandwidth_mbps")),
            (Some("ssd"), Some("50"), Some("100000"))
        );
        let mut cfg = engine::Config::for_profile("v6.12-classic").unwrap();
        for (k, v) in &s {
            cfg.set(k, v).unwrap_or_else(|e| panic!("{k}={v}: {e}"));
        }
        assert!(machine(None).settings().iter().all(|(k, _)| !k.starts_with("fs") && !k.starts_with("swap.")));
    }

    #[test]
    fn zram_ratio_from_mm_stat() {
        // 1000 pages stored, 200 of them zero-filled, 800 in 64000 bytes.
        let s = zram_settings("4096000 64000 90112 0 90112 200 0 0 0\n").unwrap();
        assert_eq!(s, [("zram.comp_ratio".into(), "51.20".into()), ("zram.same_filled_pct".into(), "20.00".into())]);
        assert!(zram_settings("0 0 0 0 0 0 0 0").unwrap().is_empty());
        let all_same = zram_settings("40960 0 0 0 0 10 0 0").unwrap();
        assert_eq!(all_same, [("zram.same_filled_pct".to_string(), "100.00".to_string())]);
        assert!(zram_settings("1 2 3").unwrap_err().contains("expected at least 6 fields"));
        assert!(zram_settings("1 x 3 4 5 6").unwrap_err().contains("`x` is not a number"));
        let mut cfg = engine::Config::for_profile("v6.2").unwrap();
        for (k, v) in &s {
            cfg.set(k, v).unwrap();
        }
    }
}
