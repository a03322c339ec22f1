//! Run configuration: the machine, kernel knobs by their kernel names, feature
//! flags, CPU costs. Parsed from `key=value` settings, validated once, then
//! resolved into the objects the engine uses.

pub mod cgroup;
mod cpu;
mod numa;
mod pcp;
mod settings;
mod zram;
mod zswap;

pub use cgroup::CgroupKnobs;
pub use cpu::CpuCosts;
pub use knobs::{format_size, parse_size};
pub use numa::{format_pageblocks, BootBlocks, LruLayout, NumaKnobs, ZoneLayout};
pub use pcp::PcpKnobs;
pub use settings::{Setting, SETTINGS};
pub use zram::{ZramKnobs, DEFAULT_ZRAM_RATIO_X100};
pub use zswap::ZswapKnobs;

use crate::device::{DeviceKind, DeviceOverrides};
use crate::memcg::MemcgKnobs;
use crate::sched::SchedKnobs;
use crate::swap_ra::SwapRaKnobs;
use crate::writeback::WritebackKnobs;
use knobs::{u64_knob, History, Kind, Knob, Version};
use reclaim::ReclaimConfig;
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

/// The complete configuration of one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Kernel profile the flags started from.
    pub profile: String,
    /// RAM size in bytes.
    pub memory_bytes: u64,
    /// `memory.reserved`: bytes the kernel holds off the LRU from the start.
    pub reserved_bytes: u64,
    /// `memory.scaled_from`: the memory of the machine this one is a scale
    /// model of (0 = itself), see [`reclaim::scale`].
    pub scaled_from_bytes: u64,
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
    /// `watermark_scale` (v4.6+): the low/high gap scales with memory; off: min/4 and min/2.
    pub watermark_scale: bool,
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
    /// Swap readahead: `vm.page-cluster`, `vma_ra_enabled`, `swap_ra`.
    pub swap_ra: SwapRaKnobs,
    /// The workload's memory cgroup (`memcg.*`).
    pub memcg: MemcgKnobs,
    /// How pages compress in zram and the pool's `mem_limit`.
    pub zram: ZramKnobs,
    /// zswap in front of the swap device (`zswap.*`).
    pub zswap: ZswapKnobs,
    /// The CPUs the actors share and the scheduler (`cpus`, `sched.*`).
    pub sched: SchedKnobs,
    /// Zones and NUMA nodes (`zones`, `numa.*`).
    pub numa: NumaKnobs,
    /// The OOM killer's sysctls (`vm.panic_on_oom`).
    pub oom: crate::oom::OomKnobs,
    /// The memory cgroup tree (`cgroup.PATH.memory.*`).
    pub cgroups: CgroupKnobs,
    /// Per-CPU page lists (`pcp`, `vm.percpu_pagelist_*fraction`).
    pub pcp: PcpKnobs,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            profile: "v6.2".into(),
            memory_bytes: 256 << 20,
            reserved_bytes: 0,
            scaled_from_bytes: 0,
            swap_kind: DeviceKind::Ssd,
            swap_bytes: 1 << 30,
            fs_kind: DeviceKind::Ssd,
            min_free_kbytes: None,
            watermark_scale_factor: 10,
            watermark_scale: true,
            lru: "classic".into(),
            reclaim: ReclaimConfig::default(),
            cpu: CpuCosts::default(),
            swap_params: DeviceOverrides::default(),
            fs_params: DeviceOverrides::default(),
            writeback: WritebackKnobs::default(),
            read_ahead_kb: 0,
            time_limit_ns: 0,
            swap_ra: SwapRaKnobs::default(),
            memcg: MemcgKnobs::default(),
            zram: ZramKnobs::default(),
            zswap: ZswapKnobs::default(),
            sched: SchedKnobs::default(),
            numa: NumaKnobs::default(),
            oom: Default::default(),
            cgroups: CgroupKnobs::default(),
            pcp: PcpKnobs::default(),
        }
    }
}

fn parse_kind(v: &str) -> Result<DeviceKind, String> {
    DeviceKind::from_name(v).ok_or_else(|| format!("a device kind: {}", DeviceKind::ALL.map(|k| k.name()).join(", ")))
}

/// The machine's own knobs: memory, devices, watermarks, the LRU design, the
/// page cache's readahead and the run's time limit.
pub const KNOBS: &[Knob<Config>] = &[
    knobs::size_knob!("memory", memory_bytes, History::Model, "RAM of the simulated machine (size: 256M, 1G)"),
    knobs::size_knob!(
        "memory.reserved",
        reserved_bytes,
        History::Model,
        "memory the kernel holds off the LRU from the start (slab, kernel data, unevictable boot files; size): taken from free memory before the run, never reclaimed; MemTotal stays `memory` (a real machine's MemTotal - MemFree when idle)"
    ),
    Knob {
        key: "memory.scaled_from",
        help: "the memory of the machine this one is a scale model of (size, or `off`): the inactive list's target ratio (the square root of the LRU's size in GB) is evaluated for that size, so each list keeps the bigger machine's share of memory (S-SM1: watermarks, reclaim batches and readahead windows stay this machine's own)",
        kind: Kind::Text,
        history: History::Model,
        get: |c| if c.scaled_from_bytes == 0 { "off".into() } else { format_size(c.scaled_from_bytes) },
        set: |c, v| {
            c.scaled_from_bytes = if v == "off" { 0 } else { knobs::parse_size(v)? };
            Ok(())
        },
    },
    Knob {
        key: "swap",
        help: "swap device KIND:SIZE (hdd, ssd, nvme, zram, pmem), or `none`",
        kind: Kind::Text,
        history: History::Model,
        get: |c| {
            if c.swap_bytes == 0 {
                "none".into()
            } else {
                format!("{}:{}", c.swap_kind.name(), format_size(c.swap_bytes))
            }
        },
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
    Knob {
        key: "fs",
        help: "device holding the files (hdd, ssd, nvme, pmem)",
        kind: Kind::Choice,
        history: History::Model,
        get: |c| c.fs_kind.name().into(),
        set: |c, v| {
            c.fs_kind = parse_kind(v)?;
            Ok(())
        },
    },
    u64_knob!(
        "vm.watermark_scale_factor",
        watermark_scale_factor,
        1,
        3000,
        History::Tunable { since: Version::new(4, 6) },
        "watermark gap in 1/10000 of memory, 1..3000 (kernel default 10)"
    ),
    knobs::bool_knob!(
        "watermark_scale",
        watermark_scale,
        // KERNEL: 795ae7a0de6b "mm: scale kswapd watermarks in proportion to memory" (v4.6).
        History::Behaviour { since: Some(Version::new(4, 6)), until: None },
        "v4.6+: low/high watermarks sit max(min/4, memory * vm.watermark_scale_factor / 10000) apart; off (before v4.6): low = min + min/4, high = min + min/2, and vm.watermark_scale_factor has no effect"
    ),
    Knob {
        key: "vm.min_free_kbytes",
        help: "min watermark in KiB, or `auto` for the kernel's boot-time value sqrt(16 * lowmem KiB)",
        kind: Kind::Text,
        history: History::Tunable { since: Version::new(2, 6) },
        get: |c| c.min_free_kbytes.map_or("auto".into(), |k| k.to_string()),
        set: |c, v| {
            c.min_free_kbytes = if v == "auto" { None } else { Some(knobs::parse_u64(v, 1, 1 << 40)?) };
            Ok(())
        },
    },
    Knob {
        key: "lru",
        help: "LRU design: a policy of the registry (classic, mglru, ...); profiles set it",
        kind: Kind::Choice,
        history: History::Model,
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
    u64_knob!(
        "fs.read_ahead_kb",
        read_ahead_kb,
        0,
        1 << 20,
        History::Tunable { since: Version::new(2, 6) },
        "KiB read in one request on a page-cache miss (kernel default 128; 0 = one page, no readahead)"
    ),
    Knob {
        key: "time_limit",
        help: "stop after this much virtual time in ms (0 = until the workload ends)",
        kind: Kind::Integer,
        history: History::Model,
        get: |c| (c.time_limit_ns / 1_000_000).to_string(),
        set: |c, v| {
            c.time_limit_ns = knobs::parse_u64(v, 0, u64::MAX / 1_000_000)? * 1_000_000;
            Ok(())
        },
    },
];

impl Config {
    /// Sets one key to a value.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        if let Some(rest) = key.strip_prefix("cgroup.") {
            return self.cgroups.set(rest, value).map_err(|expected| ConfigError::BadValue {
                key: key.into(),
                value: value.into(),
                expected,
            });
        }
        let s = SETTINGS.iter().find(|s| s.key == key).ok_or_else(|| ConfigError::UnknownKey { key: key.into() })?;
        s.set(self, value).map_err(|expected| ConfigError::BadValue { key: key.into(), value: value.into(), expected })
    }

    /// Every setting with its current value, in [`SETTINGS`] order.
    pub fn resolved(&self) -> Vec<(&'static str, String)> {
        SETTINGS.iter().map(|s| (s.key, s.get(self))).collect()
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
        if self.scaled_from_bytes != 0 && self.scaled_from_bytes < self.memory_bytes {
            return Err(ConfigError::Inconsistent(format!(
                "memory.scaled_from {} is smaller than memory {}: a scale model stands for a bigger machine",
                format_size(self.scaled_from_bytes),
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
        if self.memcg.limit_bytes != 0 && self.memcg.limit_bytes < 64 * mm::PAGE_SIZE {
            return Err(ConfigError::Inconsistent(format!(
                "memcg.limit {} is too small: at least 256K (64 pages), or none",
                format_size(self.memcg.limit_bytes)
            )));
        }
        for (key, o) in [("swap.bandwidth_mbps", &self.swap_params), ("fs.bandwidth_mbps", &self.fs_params)] {
            if o.bytes_per_sec == Some(0) {
                return Err(ConfigError::Inconsistent(format!(
                    "{key}=0: a device needs some bandwidth (at least 1 MB/s)"
                )));
            }
        }
        self.pcp.setup(1).map_err(ConfigError::Inconsistent)?;
        if let Some(p) = crate::profile::find(&self.profile) {
            self.cgroups.check_kernel(p.kernel, p.name).map_err(ConfigError::Inconsistent)?;
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
    fn set_and_resolve_round_trip() {
        let mut c = Config::default();
        c.set("vm.swappiness", "115").unwrap();
        c.set("swap", "zram:2G").unwrap();
        c.set("anon_workingset", "0").unwrap();
        c.set("memory.scaled_from", "7690M").unwrap();
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
        assert!(
            e.to_string().starts_with(
                "unknown setting `vm.swapiness`; valid settings: memory, memory.reserved, memory.scaled_from, swap,"
            ),
            "{e}"
        );
        let e = c.set("vm.swappiness", "201").unwrap_err();
        assert_eq!(e.to_string(), "bad value `201` for `vm.swappiness`: expected an integer in 0..=200");
        let e = c.set("swap", "floppy:1G").unwrap_err();
        assert!(e.to_string().contains("expected a device kind: hdd, ssd, nvme, zram, pmem"), "{e}");
        c.set("memory.scaled_from", "128M").unwrap();
        let e = c.validate().unwrap_err().to_string();
        assert_eq!(e, "memory.scaled_from 128M is smaller than memory 256M: a scale model stands for a bigger machine");
        c.set("memory.scaled_from", "off").unwrap();
        c.validate().unwrap();
        c.set("memory", "128K").unwrap();
        assert!(c.validate().unwrap_err().to_string().contains("too small"));
    }
}
