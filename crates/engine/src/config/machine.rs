//! The machine's own knobs: memory, devices, watermarks, the LRU design, the
//! page cache's readahead and the run's time limit (fields of [`Config`]).

use super::Config;
use crate::device::DeviceKind;
use knobs::{format_size, parse_size, u64_knob, History, Kind, Knob, Version};

fn parse_kind(v: &str) -> Result<DeviceKind, String> {
    DeviceKind::from_name(v).ok_or_else(|| format!("a device kind: {}", DeviceKind::ALL.map(|k| k.name()).join(", ")))
}

/// The machine knobs.
pub const KNOBS: &[Knob<Config>] = &[
    Knob {
        key: "memory",
        help: "RAM of the simulated machine (size: 256M, 1G)",
        kind: Kind::Size,
        history: History::Model,
        get: |c| format_size(c.memory_bytes),
        set: |c, v| {
            c.memory_bytes = parse_size(v)?;
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
