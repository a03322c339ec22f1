//! The settings of [`ReclaimConfig`]: one declaration per knob, with the
//! kernel versions that had each behaviour (profiles derive their flags from
//! these histories; see `engine::profile`).

use crate::config::{Balance, DirtyThrottle, ReclaimConfig};
use knobs::{bool_knob, History, Kind, Knob, Version};

const fn v(major: u16, minor: u16) -> Version {
    Version::new(major, minor)
}

/// On from `since` on.
const fn since(major: u16, minor: u16) -> History {
    History::Behaviour { since: Some(v(major, minor)), until: None }
}

/// On up to and including `until`.
const fn until(major: u16, minor: u16) -> History {
    History::Behaviour { since: None, until: Some(v(major, minor)) }
}

/// Every knob of reclaim, in the order `reclaimsim settings` lists them.
pub const KNOBS: &[Knob<ReclaimConfig>] = &[
    Knob {
        key: "vm.swappiness",
        help: "relative IO cost of swapping vs file IO, 0..200 (kernel default 60)",
        kind: Kind::Integer,
        history: History::Tunable { since: v(2, 6) },
        get: |c| c.swappiness.to_string(),
        set: |c, v| {
            c.swappiness = knobs::parse_u64(v, 0, 200)? as u32;
            Ok(())
        },
    },
    Knob {
        key: "lru_balance",
        help: "get_scan_count form: rotation (<v5.8), rfc-2016 (seed 000 as posted), refault-cost (v5.8, seed 000 as merged), weighted-cost (v6.2)",
        kind: Kind::Choice,
        // KERNEL: v5.8 "mm: balance LRU lists based on relative thrashing"; v6.2 0538a82c39e9.
        history: History::Forms(&[(v(2, 6), "rotation"), (v(5, 8), "refault-cost"), (v(6, 2), "weighted-cost")]),
        get: |c| c.balance.name().into(),
        set: |c, v| {
            c.balance = Balance::from_name(v).ok_or("rotation, rfc-2016, refault-cost or weighted-cost")?;
            Ok(())
        },
    },
    bool_knob!(
        "cache_challenges_anon",
        cache_challenges_anon,
        since(5, 8),
        "v5.8: file refaults are compared with active file + anon, not active file alone"
    ),
    bool_knob!(
        "anon_start_inactive",
        anon_start_inactive,
        since(5, 9),
        "v5.9 (seed 004): new and swapped-in anon pages start inactive; anon needs two looks to activate"
    ),
    bool_knob!(
        "anon_ratio_1to1",
        anon_ratio_1to1,
        History::Patch { series: "seed 004 patch 1/6" },
        "v5.9 patch 1/6 (seed 004, temporary): anon active:inactive target 1:1"
    ),
    bool_knob!(
        "file_ratio_1to1",
        file_ratio_1to1,
        // KERNEL: 59dc76b0d4df "mm: vmscan: reduce size of inactive file list" (v4.7).
        until(4, 6),
        "before 2016's 'reduce size of inactive file list': file active:inactive target 1:1"
    ),
    bool_knob!(
        "refaults_deactivate",
        refaults_deactivate,
        since(4, 20),
        "v4.20+: file workingset activations force deactivation and end cache trim mode"
    ),
    bool_knob!(
        "anon_workingset",
        anon_workingset,
        since(5, 9),
        "v5.9 (seed 004): shadow entries in swap cache, refault detection for anon"
    ),
    bool_knob!(
        "tiny_file_needs_anon",
        tiny_file_needs_anon,
        since(4, 12),
        "v4.12+: a tiny file LRU (file + free <= high watermarks) forces anon-only scanning only if inactive anon is not low and has pages at this priority"
    ),
    bool_knob!(
        "swapin_workingset",
        swapin_workingset,
        History::Behaviour { since: Some(v(4, 20)), until: Some(v(6, 0)) },
        "v4.20..v5.9: pages read into the swap cache get PG_workingset (refault stall, restore on their next refault); not on the synchronous-device bypass"
    ),
    Knob {
        key: "lru_gen.enabled",
        help: "MGLRU /sys/kernel/mm/lru_gen/enabled: 0x0001 core (always on with lru=mglru), 0x0002 page-table walks, 0x0004 non-leaf PMD accessed bits",
        kind: Kind::Text,
        history: History::Tunable { since: v(6, 1) },
        get: |c| format!("0x{:04x}", 1 | (c.lru_gen.mm_walk as u32) << 1 | (c.lru_gen.nonleaf_young as u32) << 2),
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
            c.lru_gen.mm_walk = caps & 2 != 0;
            c.lru_gen.nonleaf_young = caps & 4 != 0;
            Ok(())
        },
    },
    knobs::u64_knob!(
        "lru_gen.min_ttl_ms",
        lru_gen.min_ttl_ms,
        0,
        1 << 32,
        History::Tunable { since: v(6, 1) },
        "MGLRU working-set protection: generations younger than this are not reclaimed by kswapd's aging (0 = off)"
    ),
    bool_knob!(
        "mglru_rework",
        lru_gen.rework_6_14,
        since(6, 14),
        "v6.14 MGLRU refault/tier rework: PG_referenced-first refs, two-step aging, refaults recent within 4 gens of max_seq, type by all tiers"
    ),
    bool_knob!(
        "mglru_6_12",
        lru_gen.v6_12,
        // SIM-CHOICE: checked against 6.12's source; the individual changes landed between 6.2 and 6.12.
        since(6, 12),
        "v6.12 MGLRU (vs v6.1): after aging below the default priority the lruvec is left; memcg reclaim scans nr_to_scan without stopping at nr_to_reclaim; all refaults counted, recent ones as activations"
    ),
    bool_knob!(
        "kswapd_write_at_priority",
        dirty.kswapd_write_at_priority,
        until(3, 10),
        "before v3.11 (seed 003): kswapd writes dirty file pages itself below priority 10; off: only while the node is flagged dirty"
    ),
    bool_knob!(
        "kswapd_flat_priority",
        dirty.kswapd_flat_priority,
        since(3, 11),
        "v3.11: kswapd passes aim at the high watermark, priority drops when scanning falls short; off (v3.9): full passes, restart at priority 12 after 32 reclaimed"
    ),
    bool_knob!(
        "dirty_activate",
        dirty.dirty_activate,
        since(4, 13),
        "v4.13: dirty/writeback file pages are activated and kswapd writes only pages seen twice; off: they stay on the inactive list"
    ),
    Knob {
        key: "dirty_throttle",
        help: "reclaim waits for writeback: iff-congested (v3.9), stall (v3.11, seed 003), throttle (v5.16+ reclaim_throttle)",
        kind: Kind::Choice,
        history: History::Forms(&[(v(2, 6), "iff-congested"), (v(3, 11), "stall"), (v(5, 16), "throttle")]),
        get: |c| c.dirty.throttle.name().into(),
        set: |c, v| {
            c.dirty.throttle = DirtyThrottle::from_name(v).ok_or("iff-congested, stall or throttle")?;
            Ok(())
        },
    },
];
