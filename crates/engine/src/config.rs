//! Run configuration: the machine, kernel knobs by their kernel names, feature
//! flags, CPU costs. Parsed from `key=value` settings, validated once, then
//! resolved into the objects the engine uses.

use crate::device::{DeviceKind, DeviceOverrides};
use crate::swap_ra::RaMode;
use crate::writeback::WritebackKnobs;
use reclaim::{Balance, DirtyThrottle, ReclaimConfig, ReclaimWork};
use std::fmt;

/// A bad setting: which key, what was given, what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigError {
    /// The key is not a known setting.
    UnknownKey {
        /// The key given.
        key: String,
    },
    /// The value does not parse or is out of range.
    BadValue {
        /// The key.
        key: String,
        /// The value given.
        value: String,
        /// What a valid value looks like.
        expected: String,
    },
    /// The settings are individually valid but do not fit together.
    Inconsistent(String),
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::UnknownKey { key } => {
                write!(
                    f,
                    "unknown setting `{key}`; valid settings: {}",
                    SETTINGS.iter().map(|s| s.key).collect::<Vec<_>>().join(", ")
                )
            }
            ConfigError::BadValue { key, value, expected } => {
                write!(f, "bad value `{value}` for `{key}`: expected {expected}")
            }
            ConfigError::Inconsistent(msg) => write!(f, "{msg}"),
        }
    }
}

impl std::error::Error for ConfigError {}

/// CPU time charged for work, in nanoseconds. SIM-CHOICE values, documented in
/// docs/model.md; every one can be overridden with `--set cpu.NAME=NS`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuCosts {
    /// A resident access (user work per operation).
    pub access_ns: u64,
    /// A page fault without I/O (allocate, zero or map, account).
    pub fault_ns: u64,
    /// Reclaim: isolate and examine one page.
    pub reclaim_scan_ns: u64,
    /// Reclaim: check one page-table entry through the reverse map.
    pub rmap_pte_ns: u64,
    /// Reclaim: free one page (unmap accounting, cache removal, shadow).
    pub reclaim_free_ns: u64,
    /// Reclaim: allocate a swap slot and submit one page's write.
    pub pageout_ns: u64,
    /// Minimum CPU time of one kswapd pass.
    pub kswapd_pass_ns: u64,
    /// Reclaim: start one reverse-map walk (anon_vma / i_mmap lock, interval-tree search);
    /// 0 by default so that earlier calibrations keep their timing (seed 002 sets 300).
    pub rmap_walk_ns: u64,
    /// MGLRU: move one page between generation lists (`sort_folio`).
    pub lru_sort_ns: u64,
    /// MGLRU: visit one address space in the page-table walk (mmap lock, upper levels).
    pub walk_mm_ns: u64,
    /// MGLRU: check one non-leaf (PMD) entry in the page-table walk.
    pub walk_pmd_ns: u64,
    /// MGLRU: check one PTE in the page-table walk or look-around (sequential, batched).
    pub walk_pte_ns: u64,
}

impl CpuCosts {
    /// CPU time of `w`; `sync_write_ns` is the per-page cost of a synchronous
    /// swap device (compression on zram), paid by whoever writes.
    pub fn reclaim_work_ns(&self, w: &ReclaimWork, sync_write_ns: u64) -> u64 {
        w.pages_scanned * self.reclaim_scan_ns
            + w.rmap_walks * self.rmap_walk_ns
            + w.rmap_ptes * self.rmap_pte_ns
            + w.pages_freed * self.reclaim_free_ns
            + w.pages_written * (self.pageout_ns + sync_write_ns)
            + w.pages_sorted * self.lru_sort_ns
            + w.walk_mms * self.walk_mm_ns
            + w.walk_pmds * self.walk_pmd_ns
            + w.walk_ptes * self.walk_pte_ns
    }
}

impl Default for CpuCosts {
    fn default() -> Self {
        CpuCosts {
            access_ns: 50,
            fault_ns: 1_000,
            reclaim_scan_ns: 100,
            rmap_pte_ns: 150,
            reclaim_free_ns: 250,
            pageout_ns: 2_000,
            kswapd_pass_ns: 1_000,
            rmap_walk_ns: 0,
            lru_sort_ns: 40,
            walk_mm_ns: 500,
            walk_pmd_ns: 10,
            walk_pte_ns: 4,
        }
    }
}

/// The complete configuration of one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Kernel profile the flags started from.
    pub profile: String,
    /// RAM size in bytes.
    pub memory_bytes: u64,
    /// Swap device kind.
    pub swap_kind: DeviceKind,
    /// Swap size in bytes (0 = no swap).
    pub swap_bytes: u64,
    /// Device holding the files.
    pub fs_kind: DeviceKind,
    /// `vm.min_free_kbytes`; `None` = computed as the kernel does at boot.
    pub min_free_kbytes: Option<u64>,
    /// `vm.watermark_scale_factor` (1/10000 of memory).
    pub watermark_scale_factor: u64,
    /// LRU design (`lru=classic`).
    pub lru: String,
    /// Reclaim knobs and feature flags.
    pub reclaim: ReclaimConfig,
    /// CPU costs.
    pub cpu: CpuCosts,
    /// Overrides of the swap device preset (`swap.latency_us`, ...).
    pub swap_params: DeviceOverrides,
    /// Overrides of the filesystem device preset (`fs.latency_us`, ...).
    pub fs_params: DeviceOverrides,
    /// `vm.dirty_*` writeback knobs.
    pub writeback: WritebackKnobs,
    /// `read_ahead_kb` of the filesystem device: pages read after a page-cache miss.
    pub read_ahead_kb: u64,
    /// Stop after this much virtual time (0 = run until every thread is done).
    pub time_limit_ns: u64,
    /// `vm.page-cluster`: log2 of the largest swap readahead window.
    pub page_cluster: u32,
    /// `/sys/kernel/mm/swap/vma_ra_enabled`: VMA-based swap readahead (v4.14+).
    pub vma_ra_enabled: bool,
    /// `swap_ra`: force a readahead policy regardless of the kernel's rule (an experiment knob).
    pub swap_ra: Option<RaMode>,
    /// `memcg.limit`: the workload's memory cgroup `memory.limit_in_bytes` (0 = no group).
    pub memcg_limit_bytes: u64,
    /// `memcg.swappiness`: the group's `memory.swappiness`.
    pub memcg_swappiness: u32,
    /// `memcg.stats_flush`: charges between flushes of the group's statistics
    /// as reclaim reads them (0 = reclaim reads exact values).
    pub memcg_stats_flush: u64,
    /// How pages compress in zram and the pool's `mem_limit`.
    pub zram: ZramKnobs,
}

/// The zram swap device's compressed store: how pages compress, and `mem_limit`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ZramKnobs {
    /// `zram.comp_ratio` x 100: a stored page's size over its compressed size.
    pub comp_ratio_x100: u64,
    /// `zram.same_filled_pct` in parts per million: pages that are one repeated word.
    pub same_ppm: u64,
    /// `/sys/block/zram0/mem_limit`, bytes (0 = none).
    pub mem_limit_bytes: u64,
}

/// SOURCE: lzo-rle, the kernel's default zram compressor since v5.1, compresses
/// a desktop memory image 2.68:1 (lz4 2.58, zstd 3.96) in the Linux Reviews zram
/// benchmark, and swapped pages 2.74:1 (lz4 2.63) in a fio-on-zram test by
/// u/VenditatioDelendaEst (both tabulated at https://news.cgast.org/news/31091).
pub const DEFAULT_ZRAM_RATIO_X100: u64 = 270;

impl Default for ZramKnobs {
    fn default() -> Self {
        ZramKnobs { comp_ratio_x100: DEFAULT_ZRAM_RATIO_X100, same_ppm: 0, mem_limit_bytes: 0 }
    }
}

impl ZramKnobs {
    /// The pool's parameters: the compressed length of a page (rounded to a
    /// byte) and `mem_limit` in pages (`PAGE_ALIGN(limit) >> PAGE_SHIFT`).
    pub fn pool_config(&self) -> mm::ZramConfig {
        let comp_len = (mm::PAGE_SIZE * 100 + self.comp_ratio_x100 / 2) / self.comp_ratio_x100;
        mm::ZramConfig {
            comp_len: comp_len.clamp(1, mm::PAGE_SIZE) as u32,
            same_ppm: self.same_ppm as u32,
            limit_pages: self.mem_limit_bytes.div_ceil(mm::PAGE_SIZE),
        }
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            profile: "v6.2".into(),
            memory_bytes: 256 << 20,
            swap_kind: DeviceKind::Ssd,
            swap_bytes: 1 << 30,
            fs_kind: DeviceKind::Ssd,
            min_free_kbytes: None,
            watermark_scale_factor: 10,
            lru: "classic".into(),
            reclaim: ReclaimConfig::default(),
            cpu: CpuCosts::default(),
            swap_params: DeviceOverrides::default(),
            fs_params: DeviceOverrides::default(),
            writeback: WritebackKnobs::default(),
            read_ahead_kb: 0,
            time_limit_ns: 0,
            page_cluster: 3,
            vma_ra_enabled: true,
            swap_ra: None,
            memcg_limit_bytes: 0,
            memcg_swappiness: 60,
            memcg_stats_flush: 0,
            zram: ZramKnobs::default(),
        }
    }
}

/// One settable key.
pub struct Setting {
    /// The key, with the kernel's name where there is one.
    pub key: &'static str,
    /// What it means, units and range.
    pub help: &'static str,
    get: fn(&Config) -> String,
    set: fn(&mut Config, &str) -> Result<(), String>,
}

fn parse_bool(v: &str) -> Result<bool, String> {
    match v {
        "1" | "true" | "on" | "yes" => Ok(true),
        "0" | "false" | "off" | "no" => Ok(false),
        _ => Err("a boolean (1/0, true/false, on/off)".into()),
    }
}

fn parse_u64(v: &str, lo: u64, hi: u64) -> Result<u64, String> {
    let expected = || format!("an integer in {lo}..={hi}");
    let n: u64 = v.parse().map_err(|_| expected())?;
    if n < lo || n > hi {
        return Err(expected());
    }
    Ok(n)
}

/// Parses a decimal with at most `decimals` fractional digits into an integer
/// scaled by `10^decimals` (`2.7` with 2 decimals is 270), within `lo..=hi` (scaled).
fn parse_fixed(v: &str, decimals: u32, lo: u64, hi: u64) -> Result<u64, String> {
    let scale = 10u64.pow(decimals);
    let show = |x: u64| format_fixed(x, decimals);
    let expected = || format!("a number in {}..={} with at most {decimals} decimals", show(lo), show(hi));
    let (int, frac) = v.split_once('.').unwrap_or((v, ""));
    if int.is_empty()
        || v.ends_with('.')
        || frac.len() > decimals as usize
        || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())
    {
        return Err(expected());
    }
    let int: u64 = int.parse().map_err(|_| expected())?;
    let frac: u64 = if frac.is_empty() {
        0
    } else {
        frac.parse::<u64>().map_err(|_| expected())? * 10u64.pow(decimals - frac.len() as u32)
    };
    let n = int.checked_mul(scale).and_then(|n| n.checked_add(frac)).ok_or_else(expected)?;
    if n < lo || n > hi {
        return Err(expected());
    }
    Ok(n)
}

/// Shows an integer scaled by `10^decimals` as a decimal without trailing zeros (`270` -> `2.7`).
fn format_fixed(n: u64, decimals: u32) -> String {
    let scale = 10u64.pow(decimals);
    let frac = format!("{:0width$}", n % scale, width = decimals as usize);
    let frac = frac.trim_end_matches('0');
    if frac.is_empty() {
        (n / scale).to_string()
    } else {
        format!("{}.{frac}", n / scale)
    }
}

/// Parses a size such as `512M`, `4G`, `65536K` or a plain byte count.
pub fn parse_size(v: &str) -> Result<u64, String> {
    let expected = || "a size such as 4096, 512K, 256M or 4G".to_string();
    let (num, mult) = match v.chars().last() {
        Some('K' | 'k') => (&v[..v.len() - 1], 1u64 << 10),
        Some('M' | 'm') => (&v[..v.len() - 1], 1 << 20),
        Some('G' | 'g') => (&v[..v.len() - 1], 1 << 30),
        Some('T' | 't') => (&v[..v.len() - 1], 1 << 40),
        _ => (v, 1),
    };
    let n: u64 = num.parse().map_err(|_| expected())?;
    n.checked_mul(mult).ok_or_else(expected)
}

/// Formats a byte count with the largest exact binary suffix.
pub fn format_size(b: u64) -> String {
    for (suffix, shift) in [("T", 40), ("G", 30), ("M", 20), ("K", 10)] {
        if b != 0 && b.is_multiple_of(1 << shift) {
            return format!("{}{suffix}", b >> shift);
        }
    }
    b.to_string()
}

fn parse_kind(v: &str) -> Result<DeviceKind, String> {
    DeviceKind::from_name(v).ok_or_else(|| format!("a device kind: {}", DeviceKind::ALL.map(|k| k.name()).join(", ")))
}

macro_rules! flag {
    ($key:literal, $field:ident, $help:literal) => {
        Setting {
            key: $key,
            help: $help,
            get: |c| (c.reclaim.$field as u8).to_string(),
            set: |c, v| {
                c.reclaim.$field = parse_bool(v)?;
                Ok(())
            },
        }
    };
}

macro_rules! dirty_flag {
    ($key:literal, $field:ident, $help:literal) => {
        Setting {
            key: $key,
            help: $help,
            get: |c| (c.reclaim.dirty.$field as u8).to_string(),
            set: |c, v| {
                c.reclaim.dirty.$field = parse_bool(v)?;
                Ok(())
            },
        }
    };
}

macro_rules! wb_knob {
    ($key:literal, $field:ident, $lo:literal, $hi:literal, $help:literal) => {
        Setting {
            key: $key,
            help: $help,
            get: |c| c.writeback.$field.to_string(),
            set: |c, v| {
                c.writeback.$field = parse_u64(v, $lo, $hi)?;
                Ok(())
            },
        }
    };
}

/// A device parameter override: `None` shows as `preset`; `scale` converts the
/// setting's unit to the field's (1000 for microseconds to ns, 1_000_000 for MB/s).
macro_rules! dev_param {
    ($key:literal, $dev:ident, $field:ident, $scale:literal, $help:literal) => {
        Setting {
            key: $key,
            help: $help,
            get: |c| c.$dev.$field.map_or_else(|| "preset".to_string(), |v| (v / $scale).to_string()),
            set: |c, v| {
                c.$dev.$field = if v == "preset" { None } else { Some(parse_u64(v, 0, u64::MAX / $scale)? * $scale) };
                Ok(())
            },
        }
    };
}

macro_rules! cpu {
    ($key:literal, $field:ident, $help:literal) => {
        Setting {
            key: $key,
            help: $help,
            get: |c| c.cpu.$field.to_string(),
            set: |c, v| {
                c.cpu.$field = parse_u64(v, 0, 10_000_000_000)?;
                Ok(())
            },
        }
    };
}

/// Every setting, in the order the resolved configuration lists them.
pub const SETTINGS: &[Setting] = &[
    Setting {
        key: "memory",
        help: "RAM of the simulated machine (size: 256M, 1G)",
        get: |c| format_size(c.memory_bytes),
        set: |c, v| {
            c.memory_bytes = parse_size(v)?;
            Ok(())
        },
    },
    Setting {
        key: "swap",
        help: "swap device KIND:SIZE (hdd, ssd, nvme, zram, pmem), or `none`",
        get: |c| if c.swap_bytes == 0 { "none".into() } else { format!("{}:{}", c.swap_kind.name(), format_size(c.swap_bytes)) },
        set: |c, v| {
            if v == "none" {
                c.swap_bytes = 0;
                return Ok(());
            }
            let (kind, size) = v.split_once(':').ok_or("KIND:SIZE such as ssd:4G, or none")?;
            c.swap_kind = parse_kind(kind)?;
            c.swap_bytes = parse_size(size)?;
            Ok(())
        },
    },
    Setting {
        key: "fs",
        help: "device holding the files (hdd, ssd, nvme, pmem)",
        get: |c| c.fs_kind.name().into(),
        set: |c, v| {
            c.fs_kind = parse_kind(v)?;
            Ok(())
        },
    },
    dev_param!("swap.latency_us", swap_params, latency_ns, 1000, "swap device access latency per request, us (presets: hdd 4170 = half a 7200 rpm turn, ssd 90, nvme 20)"),
    dev_param!("swap.seek_us", swap_params, seek_ns, 1000, "swap device seek per non-sequential request, us (preset: hdd 4200, others 0)"),
    dev_param!("swap.bandwidth_mbps", swap_params, bytes_per_sec, 1_000_000, "swap device transfer bandwidth, MB/s (presets: hdd 160, ssd 520, nvme 2800)"),
    dev_param!("swap.channels", swap_params, channels, 1, "swap device requests served in parallel (presets: hdd 1, ssd 8, nvme 32)"),
    dev_param!("swap.read_cpu_ns", swap_params, read_cpu_ns, 1, "CPU per page read on zram/pmem, ns (presets: zram 1000 lzo-rle decompress, pmem 1000)"),
    dev_param!("swap.write_cpu_ns", swap_params, write_cpu_ns, 1, "CPU per page written on zram/pmem, ns (presets: zram 3000 lzo-rle compress, pmem 1000)"),
    dev_param!("fs.latency_us", fs_params, latency_ns, 1000, "filesystem device access latency per request, us (presets as swap.latency_us)"),
    dev_param!("fs.seek_us", fs_params, seek_ns, 1000, "filesystem device seek per non-sequential request, us"),
    dev_param!("fs.bandwidth_mbps", fs_params, bytes_per_sec, 1_000_000, "filesystem device transfer bandwidth, MB/s"),
    dev_param!("fs.channels", fs_params, channels, 1, "filesystem device requests served in parallel"),
    Setting {
        key: "zram.comp_ratio",
        help: "zram: uncompressed over compressed size of a stored page (orig_data_size / compr_data_size), 1..=4096 (default 2.7: lzo-rle; lz4 ~2.6, zstd ~3.4-4)",
        get: |c| format_fixed(c.zram.comp_ratio_x100, 2),
        set: |c, v| {
            c.zram.comp_ratio_x100 = parse_fixed(v, 2, 100, 409_600)?;
            Ok(())
        },
    },
    Setting {
        key: "zram.same_filled_pct",
        help: "zram: percent of stored pages that are one repeated word (zero pages): kept in the slot table, no pool memory (default 0)",
        get: |c| format_fixed(c.zram.same_ppm, 4),
        set: |c, v| {
            c.zram.same_ppm = parse_fixed(v, 4, 0, 1_000_000)?;
            Ok(())
        },
    },
    Setting {
        key: "zram.mem_limit",
        help: "/sys/block/zram0/mem_limit: most RAM the compressed pool may take (size), or `none`; writes beyond it fail and the page stays",
        get: |c| if c.zram.mem_limit_bytes == 0 { "none".into() } else { format_size(c.zram.mem_limit_bytes) },
        set: |c, v| {
            c.zram.mem_limit_bytes = if v == "none" { 0 } else { parse_size(v)? };
            Ok(())
        },
    },
    Setting {
        key: "vm.swappiness",
        help: "relative IO cost of swapping vs file IO, 0..200 (kernel default 60)",
        get: |c| c.reclaim.swappiness.to_string(),
        set: |c, v| {
            c.reclaim.swappiness = parse_u64(v, 0, 200)? as u32;
            Ok(())
        },
    },
    Setting {
        key: "vm.page-cluster",
        help: "log2 of the largest swap readahead window, 0..31 (kernel default 3: 8 pages; 0 disables)",
        get: |c| c.page_cluster.to_string(),
        set: |c, v| {
            c.page_cluster = parse_u64(v, 0, 31)? as u32;
            Ok(())
        },
    },
    Setting {
        key: "vma_ra_enabled",
        help: "/sys/kernel/mm/swap/vma_ra_enabled: VMA-based swap readahead (seed 001, v4.14); rotational swap uses cluster readahead regardless",
        get: |c| (c.vma_ra_enabled as u8).to_string(),
        set: |c, v| {
            c.vma_ra_enabled = parse_bool(v)?;
            Ok(())
        },
    },
    Setting {
        key: "swap_ra",
        help: "swap readahead policy: kernel (the kernel's rule: vma_ra_enabled and not rotational), cluster, or vma (forced, e.g. VMA on an HDD)",
        get: |c| match c.swap_ra {
            None => "kernel".into(),
            Some(RaMode::Cluster) => "cluster".into(),
            Some(RaMode::Vma) => "vma".into(),
        },
        set: |c, v| {
            c.swap_ra = match v {
                "kernel" => None,
                "cluster" => Some(RaMode::Cluster),
                "vma" => Some(RaMode::Vma),
                _ => return Err("kernel, cluster or vma".into()),
            };
            Ok(())
        },
    },
    Setting {
        key: "memcg.limit",
        help: "memory cgroup (v1) holding the workload: memory.limit_in_bytes (size), or `none`; a charge over it reclaims in the faulting task",
        get: |c| if c.memcg_limit_bytes == 0 { "none".into() } else { format_size(c.memcg_limit_bytes) },
        set: |c, v| {
            c.memcg_limit_bytes = if v == "none" { 0 } else { parse_size(v)? };
            Ok(())
        },
    },
    Setting {
        key: "memcg.swappiness",
        help: "the group's memory.swappiness, 0..200 (default 60); 0 = the group never swaps under its limit",
        get: |c| c.memcg_swappiness.to_string(),
        set: |c, v| {
            c.memcg_swappiness = parse_u64(v, 0, 200)? as u32;
            Ok(())
        },
    },
    Setting {
        key: "memcg.stats_flush",
        help: "charges between flushes of the group's statistics that reclaim reads (the kernel flushes lazily: every 2 s or when memory.stat is read); 0 = exact",
        get: |c| c.memcg_stats_flush.to_string(),
        set: |c, v| {
            c.memcg_stats_flush = parse_u64(v, 0, u64::MAX)?;
            Ok(())
        },
    },
    Setting {
        key: "vm.watermark_scale_factor",
        help: "watermark gap in 1/10000 of memory, 1..3000 (kernel default 10)",
        get: |c| c.watermark_scale_factor.to_string(),
        set: |c, v| {
            c.watermark_scale_factor = parse_u64(v, 1, 3000)?;
            Ok(())
        },
    },
    Setting {
        key: "vm.min_free_kbytes",
        help: "min watermark in KiB, or `auto` for the kernel's boot-time value sqrt(16 * lowmem KiB)",
        get: |c| c.min_free_kbytes.map_or("auto".into(), |k| k.to_string()),
        set: |c, v| {
            c.min_free_kbytes = if v == "auto" { None } else { Some(parse_u64(v, 1, 1 << 40)?) };
            Ok(())
        },
    },
    Setting {
        key: "lru",
        help: "LRU design: classic or mglru (multi-gen LRU)",
        get: |c| c.lru.clone(),
        set: |c, v| {
            let names: Vec<_> = reclaim::policy::registry::POLICIES.iter().map(|p| p.name).collect();
            if !names.contains(&v) {
                return Err(format!("one of: {}", names.join(", ")));
            }
            c.lru = v.into();
            Ok(())
        },
    },
    Setting {
        key: "lru_balance",
        help: "get_scan_count form: rotation (<v5.8), rfc-2016 (seed 000 as posted), refault-cost (v5.8, seed 000 as merged), weighted-cost (v6.2)",
        get: |c| c.reclaim.balance.name().into(),
        set: |c, v| {
            c.reclaim.balance = Balance::from_name(v).ok_or("rotation, rfc-2016, refault-cost or weighted-cost")?;
            Ok(())
        },
    },
    flag!("cache_challenges_anon", cache_challenges_anon, "v5.8: file refaults are compared with active file + anon, not active file alone"),
    flag!("anon_start_inactive", anon_start_inactive, "v5.9 (seed 004): new and swapped-in anon pages start inactive; anon needs two looks to activate"),
    flag!("anon_ratio_1to1", anon_ratio_1to1, "v5.9 patch 1/6 (seed 004, temporary): anon active:inactive target 1:1"),
    flag!("file_ratio_1to1", file_ratio_1to1, "before 2016's 'reduce size of inactive file list': file active:inactive target 1:1"),
    flag!("refaults_deactivate", refaults_deactivate, "v4.20+: file workingset activations force deactivation and end cache trim mode"),
    flag!("anon_workingset", anon_workingset, "v5.9 (seed 004): shadow entries in swap cache, refault detection for anon"),
    flag!("tiny_file_needs_anon", tiny_file_needs_anon, "v4.12+: a tiny file LRU (file + free <= high watermarks) forces anon-only scanning only if inactive anon is not low and has pages at this priority"),
    flag!("swapin_workingset", swapin_workingset, "v4.20..v5.9: pages read into the swap cache get PG_workingset (refault stall, restore on their next refault); not on the synchronous-device bypass"),
    Setting {
        key: "lru_gen.enabled",
        help: "MGLRU /sys/kernel/mm/lru_gen/enabled: 0x0001 core (always on with lru=mglru), 0x0002 page-table walks, 0x0004 non-leaf PMD accessed bits",
        get: |c| format!("0x{:04x}", 1 | (c.reclaim.lru_gen.mm_walk as u32) << 1 | (c.reclaim.lru_gen.nonleaf_young as u32) << 2),
        set: |c, v| {
            let expected = || "a capability mask 0x0000..0x0007 (hex with 0x, or decimal), y or n".to_string();
            let caps = match v {
                "y" => 7,
                "n" => 0,
                _ => match v.strip_prefix("0x") {
                    Some(h) => u32::from_str_radix(h, 16).map_err(|_| expected())?,
                    None => v.parse().map_err(|_| expected())?,
                },
            };
            if caps > 7 {
                return Err(expected());
            }
            c.reclaim.lru_gen.mm_walk = caps & 2 != 0;
            c.reclaim.lru_gen.nonleaf_young = caps & 4 != 0;
            Ok(())
        },
    },
    Setting {
        key: "lru_gen.min_ttl_ms",
        help: "MGLRU working-set protection: generations younger than this are not reclaimed by kswapd's aging (0 = off)",
        get: |c| c.reclaim.lru_gen.min_ttl_ms.to_string(),
        set: |c, v| {
            c.reclaim.lru_gen.min_ttl_ms = parse_u64(v, 0, 1 << 32)?;
            Ok(())
        },
    },
    Setting {
        key: "mglru_rework",
        help: "v6.14 MGLRU refault/tier rework: PG_referenced-first refs, two-step aging, refaults recent within 4 gens of max_seq, type by all tiers",
        get: |c| (c.reclaim.lru_gen.rework_6_14 as u8).to_string(),
        set: |c, v| {
            c.reclaim.lru_gen.rework_6_14 = parse_bool(v)?;
            Ok(())
        },
    },
    Setting {
        key: "mglru_6_12",
        help: "v6.12 MGLRU (vs v6.1): after aging below the default priority the lruvec is left; memcg reclaim scans nr_to_scan without stopping at nr_to_reclaim; all refaults counted, recent ones as activations",
        get: |c| (c.reclaim.lru_gen.v6_12 as u8).to_string(),
        set: |c, v| {
            c.reclaim.lru_gen.v6_12 = parse_bool(v)?;
            Ok(())
        },
    },
    dirty_flag!("kswapd_write_at_priority", kswapd_write_at_priority, "before v3.11 (seed 003): kswapd writes dirty file pages itself below priority 10; off: only while the node is flagged dirty"),
    dirty_flag!("kswapd_flat_priority", kswapd_flat_priority, "v3.11: kswapd passes aim at the high watermark, priority drops when scanning falls short; off (v3.9): full passes, restart at priority 12 after 32 reclaimed"),
    dirty_flag!("dirty_activate", dirty_activate, "v4.13: dirty/writeback file pages are activated and kswapd writes only pages seen twice; off: they stay on the inactive list"),
    Setting {
        key: "dirty_throttle",
        help: "reclaim waits for writeback: iff-congested (v3.9), stall (v3.11, seed 003), throttle (v5.16+ reclaim_throttle)",
        get: |c| c.reclaim.dirty.throttle.name().into(),
        set: |c, v| {
            c.reclaim.dirty.throttle = DirtyThrottle::from_name(v).ok_or("iff-congested, stall or throttle")?;
            Ok(())
        },
    },
    wb_knob!("vm.dirty_ratio", dirty_ratio, 1, 100, "percent of dirtyable memory at which writers stop (kernel default 20)"),
    wb_knob!("vm.dirty_background_ratio", dirty_background_ratio, 0, 100, "percent of dirtyable memory at which background writeback starts (kernel default 10)"),
    wb_knob!("vm.dirty_expire_centisecs", dirty_expire_centisecs, 0, 8_640_000, "age at which periodic writeback writes dirty data, 1/100 s (kernel default 3000)"),
    wb_knob!("vm.dirty_writeback_centisecs", dirty_writeback_centisecs, 1, 8_640_000, "interval of periodic writeback, 1/100 s (kernel default 500)"),
    Setting {
        key: "vm.dirty_bytes",
        help: "absolute dirty limit (size; 0 = use vm.dirty_ratio)",
        get: |c| format_size(c.writeback.dirty_bytes),
        set: |c, v| {
            c.writeback.dirty_bytes = parse_size(v)?;
            Ok(())
        },
    },
    Setting {
        key: "vm.dirty_background_bytes",
        help: "absolute background writeback threshold (size; 0 = use vm.dirty_background_ratio)",
        get: |c| format_size(c.writeback.dirty_background_bytes),
        set: |c, v| {
            c.writeback.dirty_background_bytes = parse_size(v)?;
            Ok(())
        },
    },
    Setting {
        key: "fs.read_ahead_kb",
        help: "KiB read in one request on a page-cache miss (kernel default 128; 0 = one page, no readahead)",
        get: |c| c.read_ahead_kb.to_string(),
        set: |c, v| {
            c.read_ahead_kb = parse_u64(v, 0, 1 << 20)?;
            Ok(())
        },
    },
    cpu!("cpu.access_ns", access_ns, "CPU time of one resident access (ns)"),
    cpu!("cpu.fault_ns", fault_ns, "CPU time of a page fault without IO (ns)"),
    cpu!("cpu.reclaim_scan_ns", reclaim_scan_ns, "reclaim CPU per page isolated (ns)"),
    cpu!("cpu.rmap_pte_ns", rmap_pte_ns, "reclaim CPU per PTE checked through the rmap (ns)"),
    cpu!("cpu.reclaim_free_ns", reclaim_free_ns, "reclaim CPU per page freed (ns)"),
    cpu!("cpu.pageout_ns", pageout_ns, "reclaim CPU per page written (ns)"),
    cpu!("cpu.kswapd_pass_ns", kswapd_pass_ns, "minimum CPU time of one kswapd pass (ns)"),
    cpu!("cpu.rmap_walk_ns", rmap_walk_ns, "reclaim CPU per reverse-map walk started: lock + VMA interval-tree search (ns)"),
    cpu!("cpu.lru_sort_ns", lru_sort_ns, "MGLRU CPU per page moved between generations (ns)"),
    cpu!("cpu.walk_mm_ns", walk_mm_ns, "MGLRU CPU per address space visited by the page-table walk (ns)"),
    cpu!("cpu.walk_pmd_ns", walk_pmd_ns, "MGLRU CPU per non-leaf entry checked by the walk (ns)"),
    cpu!("cpu.walk_pte_ns", walk_pte_ns, "MGLRU CPU per PTE checked by the walk or look-around (ns)"),
    Setting {
        key: "time_limit",
        help: "stop after this much virtual time in ms (0 = until the workload ends)",
        get: |c| (c.time_limit_ns / 1_000_000).to_string(),
        set: |c, v| {
            c.time_limit_ns = parse_u64(v, 0, u64::MAX / 1_000_000)? * 1_000_000;
            Ok(())
        },
    },
];

impl Config {
    /// Sets one key to a value.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        let s = SETTINGS.iter().find(|s| s.key == key).ok_or_else(|| ConfigError::UnknownKey { key: key.into() })?;
        (s.set)(self, value).map_err(|expected| ConfigError::BadValue {
            key: key.into(),
            value: value.into(),
            expected,
        })
    }

    /// Every setting with its current value, in [`SETTINGS`] order.
    pub fn resolved(&self) -> Vec<(&'static str, String)> {
        SETTINGS.iter().map(|s| (s.key, (s.get)(self))).collect()
    }

    /// Checks that the settings fit together.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let pages = self.memory_bytes / mm::PAGE_SIZE;
        if pages < 64 {
            return Err(ConfigError::Inconsistent(format!(
                "memory {} is too small: at least 256K (64 pages)",
                format_size(self.memory_bytes)
            )));
        }
        if pages > u32::MAX as u64 / 2 {
            return Err(ConfigError::Inconsistent(format!(
                "memory {} is too large: at most 8T",
                format_size(self.memory_bytes)
            )));
        }
        if self.swap_bytes / mm::PAGE_SIZE > u32::MAX as u64 / 2 {
            return Err(ConfigError::Inconsistent(format!(
                "swap {} is too large: at most 8T",
                format_size(self.swap_bytes)
            )));
        }
        if self.swap_bytes != 0 && self.swap_bytes < 2 * mm::PAGE_SIZE {
            return Err(ConfigError::Inconsistent("swap must be at least 8K (header page + one slot), or none".into()));
        }
        if self.memcg_limit_bytes != 0 && self.memcg_limit_bytes < 64 * mm::PAGE_SIZE {
            return Err(ConfigError::Inconsistent(format!(
                "memcg.limit {} is too small: at least 256K (64 pages), or none",
                format_size(self.memcg_limit_bytes)
            )));
        }
        for (key, o) in [("swap.bandwidth_mbps", &self.swap_params), ("fs.bandwidth_mbps", &self.fs_params)] {
            if o.bytes_per_sec == Some(0) {
                return Err(ConfigError::Inconsistent(format!(
                    "{key}=0: a device needs some bandwidth (at least 1 MB/s)"
                )));
            }
        }
        if self.fs_kind == DeviceKind::Zram {
            return Err(ConfigError::Inconsistent(
                "fs=zram: zram holds swap, not a filesystem here; use pmem for a RAM-backed filesystem".into(),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4G"), Ok(4 << 30));
        assert_eq!(parse_size("512k"), Ok(512 << 10));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert!(parse_size("4X").is_err());
        assert!(parse_size("99999999999999T").is_err());
        assert_eq!(format_size(3 << 30), "3G");
        assert_eq!(format_size(1536 << 20), "1536M");
        assert_eq!(format_size(1000), "1000");
        assert_eq!(parse_fixed("2.7", 2, 100, 1000), Ok(270));
        assert_eq!(parse_fixed("3", 2, 100, 1000), Ok(300));
        assert_eq!(parse_fixed("0.0001", 4, 0, 1_000_000), Ok(1));
        for bad in ["2.715", "0.5", "x", ".5", "2.", "-1", "1e3"] {
            assert!(parse_fixed(bad, 2, 100, 1000).is_err(), "{bad}");
        }
        assert_eq!(format_fixed(270, 2), "2.7");
        assert_eq!(format_fixed(300, 2), "3");
        assert_eq!(format_fixed(12_3400, 4), "12.34");
    }

    #[test]
    fn zram_knobs_give_the_pool_parameters() {
        let mut c = Config::default();
        // 4096 / 2.7 = 1517.04 bytes.
        assert_eq!(c.zram.pool_config(), mm::ZramConfig { comp_len: 1517, same_ppm: 0, limit_pages: 0 });
        c.set("zram.comp_ratio", "3").unwrap();
        c.set("zram.same_filled_pct", "12.5").unwrap();
        c.set("zram.mem_limit", "4097").unwrap();
        assert_eq!(c.zram.pool_config(), mm::ZramConfig { comp_len: 1365, same_ppm: 125_000, limit_pages: 2 });
        c.set("zram.comp_ratio", "1").unwrap();
        assert_eq!(c.zram.pool_config().comp_len, 4096);
        assert!(c.set("zram.comp_ratio", "0.9").is_err());
    }

    #[test]
    fn set_and_resolve_round_trip() {
        let mut c = Config::default();
        c.set("vm.swappiness", "115").unwrap();
        c.set("swap", "zram:2G").unwrap();
        c.set("anon_workingset", "0").unwrap();
        let mut d = Config::default();
        for (k, v) in c.resolved() {
            d.set(k, &v).unwrap();
        }
        assert_eq!(c, d);
    }

    #[test]
    fn errors_name_the_key_and_expectation() {
        let mut c = Config::default();
        let e = c.set("vm.swapiness", "1").unwrap_err();
        assert!(e.to_string().starts_with("unknown setting `vm.swapiness`; valid settings: memory, swap,"), "{e}");
        let e = c.set("vm.swappiness", "201").unwrap_err();
        assert_eq!(e.to_string(), "bad value `201` for `vm.swappiness`: expected an integer in 0..=200");
        let e = c.set("swap", "floppy:1G").unwrap_err();
        assert!(e.to_string().contains("expected a device kind: hdd, ssd, nvme, zram, pmem"), "{e}");
        c.set("memory", "128K").unwrap();
        assert!(c.validate().unwrap_err().to_string().contains("too small"));
    }
}
