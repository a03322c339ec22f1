//! The multi-gen LRU's own parameters: `/sys/kernel/mm/lru_gen/*` and the
//! MGLRU version flags, their defaults and their knob declarations (listed in
//! the policy's registry entry; the values live in `ReclaimConfig::lru_gen`).

use crate::config::ReclaimConfig;
use crate::memcg_lru::MemcgLruForm;
use knobs::{bool_knob, History, Kind, Knob, Version};

/// `/sys/kernel/mm/lru_gen/*` and the MGLRU version flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LruGenConfig {
    /// `enabled` bit 0x0002: batched page-table walks feed the aging.
    pub mm_walk: bool,
    /// `enabled` bit 0x0004: the walk clears and tests accessed bits of non-leaf PMD entries.
    pub nonleaf_young: bool,
    /// `min_ttl_ms`: working-set protection; 0 = off.
    pub min_ttl_ms: u64,
    /// `mglru_rework` (v6.14, "rework refault detection" / "rework workingset protection"):
    /// refs counted `PG_referenced` first, two-step promotion by the aging, refault
    /// recency against `max_seq`, type selection over all tiers, tier gains 2:3.
    pub rework_6_14: bool,
    /// `mglru_6_12`: the v6.12 eviction loop and refault counters (checked
    /// against Debian's 6.12.117 and 6.1.192 sources): below the default
    /// priority a lruvec that needed aging is aged and left for this priority;
    /// memcg reclaim is not cut short once enough was reclaimed; every refault
    /// of an MGLRU shadow counts in `workingset_refault_*`, recent ones in
    /// `workingset_activate_*`; pages added active lose their refs and
    /// `PG_referenced`.
    pub v6_12: bool,
    /// `mglru_memcg_lru`: the per-node memcg LRU global reclaim walks over a
    /// cgroup tree (v6.3+, [`crate::memcg_lru`]); `Off`: tree order.
    pub memcg_lru: MemcgLruForm,
    /// `mglru_memcg_protection` (v6.17, "mm: vmscan: apply proportional reclaim
    /// pressure for memcg when MGLRU is enabled"): `get_nr_to_scan` scales a
    /// group's scan by its `memory.min`/`memory.low` share as `get_scan_count`
    /// does (`apply_proportional_protection`), and one `evict_folios` batch
    /// scans at most what `get_nr_to_scan` asked for.
    pub proportional_protection: bool,
    /// `mglru_initial_priority`: root reclaim asking for at least
    /// `MIN_LRU_BATCH` pages starts below `DEF_PRIORITY` when the node has
    /// much to reclaim (`set_initial_priority()`, v6.3+).
    pub initial_priority: InitialPriority,
}

/// `set_initial_priority()` as each kernel has it (knob `mglru_initial_priority`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InitialPriority {
    /// Before v6.3: reclaim starts at `DEF_PRIORITY`.
    Off,
    /// v6.3 (e4dde56cd208, with the memcg LRU): the estimate clamped to `0..=DEF_PRIORITY`.
    V6_3,
    /// v6.11 (3f74e6bd3b84 "mm/mglru: fix overshooting shrinker memory"):
    /// clamped to `DEF_PRIORITY / 2..=DEF_PRIORITY`.
    V6_11,
}

impl InitialPriority {
    /// Every form, oldest first.
    pub const ALL: [InitialPriority; 3] = [InitialPriority::Off, InitialPriority::V6_3, InitialPriority::V6_11];

    /// The knob's value for this form.
    pub fn name(self) -> &'static str {
        match self {
            InitialPriority::Off => "off",
            InitialPriority::V6_3 => "v6.3",
            InitialPriority::V6_11 => "v6.11",
        }
    }
}

impl Default for LruGenConfig {
    /// `enabled = 0x0007`, `min_ttl_ms = 0`, v6.1 behaviour.
    fn default() -> Self {
        LruGenConfig {
            mm_walk: true,
            nonleaf_young: true,
            min_ttl_ms: 0,
            rework_6_14: false,
            v6_12: false,
            memcg_lru: MemcgLruForm::Off,
            proportional_protection: false,
            initial_priority: InitialPriority::Off,
        }
    }
}

/// The MGLRU knobs, over the `lru_gen` part of [`ReclaimConfig`].
pub const KNOBS: &[Knob<ReclaimConfig>] = &[
    Knob {
        key: "lru_gen.enabled",
        help: "MGLRU /sys/kernel/mm/lru_gen/enabled: 0x0001 core (always on with lru=mglru), 0x0002 page-table walks, 0x0004 non-leaf PMD accessed bits",
        kind: Kind::Text,
        history: History::Tunable { since: Version::new(6, 1) },
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
        History::Tunable { since: Version::new(6, 1) },
        "MGLRU working-set protection: generations younger than this are not reclaimed by kswapd's aging (0 = off)"
    ),
    bool_knob!(
        "mglru_rework",
        lru_gen.rework_6_14,
        History::since(6, 14),
        "v6.14 MGLRU refault/tier rework: PG_referenced-first refs, two-step aging, refaults recent within 4 gens of max_seq, type by all tiers"
    ),
    bool_knob!(
        "mglru_6_12",
        lru_gen.v6_12,
        // SIM-CHOICE: checked against 6.12's source; the individual changes landed between 6.2 and 6.12.
        History::since(6, 12),
        "v6.12 MGLRU (vs v6.1): after aging below the default priority the lruvec is left; memcg reclaim scans nr_to_scan without stopping at nr_to_reclaim; all refaults counted, recent ones as activations"
    ),
    Knob {
        key: "mglru_memcg_lru",
        help: "MGLRU global reclaim over a cgroup tree: off (tree order, <v6.3), v6.3 (the per-node memcg LRU), v6.7 (one memcg generation per call, kswapd stops at high watermarks, size tested after the shrink), v6.11 (protection calculated by kswapd's aging pass)",
        kind: Kind::Choice,
        history: History::Forms(&[
            (Version::new(6, 1), "off"),
            // e4dde56cd208 "mm: multi-gen LRU: per-node lru_gen_folio lists".
            (Version::new(6, 3), "v6.3"),
            // The v6.7 hotfixes "mm/mglru: respect min_ttl_ms with memcgs", "try to stop at high watermarks", "reclaim offlined memcgs harder".
            (Version::new(6, 7), "v6.7"),
            // 30d77b7eef01 "mm/mglru: fix ineffective protection calculation".
            (Version::new(6, 11), "v6.11"),
        ]),
        get: |c| c.lru_gen.memcg_lru.name().into(),
        set: |c, v| {
            c.lru_gen.memcg_lru = MemcgLruForm::ALL.into_iter().find(|f| f.name() == v).ok_or("off, v6.3, v6.7 or v6.11")?;
            Ok(())
        },
    },
    bool_knob!(
        "mglru_memcg_protection",
        lru_gen.proportional_protection,
        // "mm: vmscan: apply proportional reclaim pressure for memcg when MGLRU is enabled" (Koichiro Den, merged for v6.17).
        History::since(6, 17),
        "v6.17 MGLRU: a group's scan is scaled by its memory.min/low share (apply_proportional_protection in get_nr_to_scan) and one eviction batch scans at most nr_to_scan pages"
    ),
    Knob {
        key: "mglru_initial_priority",
        help: "MGLRU set_initial_priority(): root reclaim for at least 64 pages (kswapd) starts at the priority where the node's inactive pages >> priority cover nr_to_reclaim: off (<v6.3, DEF_PRIORITY), v6.3 (clamped to 0..12), v6.11 (clamped to 6..12)",
        kind: Kind::Choice,
        history: History::Forms(&[
            (Version::new(6, 1), "off"),
            // e4dde56cd208 "mm: multi-gen LRU: per-node lru_gen_folio lists" added it to lru_gen_shrink_node().
            (Version::new(6, 3), "v6.3"),
            // 3f74e6bd3b84 "mm/mglru: fix overshooting shrinker memory" (July 2024, with 30d77b7eef01).
            (Version::new(6, 11), "v6.11"),
        ]),
        get: |c| c.lru_gen.initial_priority.name().into(),
        set: |c, v| {
            c.lru_gen.initial_priority =
                InitialPriority::ALL.into_iter().find(|f| f.name() == v).ok_or("off, v6.3 or v6.11")?;
            Ok(())
        },
    },
];
