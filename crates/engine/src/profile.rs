//! Kernel profiles: presets of feature flags named after the kernel that had them.

use crate::config::{Config, ConfigError};

/// One profile.
pub struct Profile {
    /// Name (`v5.9`).
    pub name: &'static str,
    /// What it stands for.
    pub summary: &'static str,
    /// Settings it applies on top of the defaults.
    pub settings: &'static [(&'static str, &'static str)],
}

/// All profiles, oldest first.
pub const PROFILES: &[Profile] = &[
    Profile {
        name: "v3.9",
        summary: "seed 003 'vanilla': kswapd writes dirty file pages from the LRU tail below priority 10 and skips writeback pages; full-budget kswapd passes",
        settings: &[
            ("lru", "classic"),
            ("lru_balance", "rotation"),
            ("cache_challenges_anon", "0"),
            ("anon_start_inactive", "0"),
            ("anon_ratio_1to1", "0"),
            ("anon_workingset", "0"),
            ("swapin_workingset", "0"),
            ("tiny_file_needs_anon", "0"),
            ("file_ratio_1to1", "1"),
            ("refaults_deactivate", "0"),
            ("kswapd_write_at_priority", "1"),
            ("kswapd_flat_priority", "0"),
            ("dirty_activate", "0"),
            ("dirty_throttle", "iff-congested"),
        ],
    },
    Profile {
        name: "v3.11",
        summary: "seed 003 'lessdisrupt': kswapd stalls on a tail of unqueued dirty or immediate-reclaim pages, writes only when the node is flagged dirty",
        settings: &[
            ("lru", "classic"),
            ("lru_balance", "rotation"),
            ("cache_challenges_anon", "0"),
            ("anon_start_inactive", "0"),
            ("anon_ratio_1to1", "0"),
            ("anon_workingset", "0"),
            ("swapin_workingset", "0"),
            ("tiny_file_needs_anon", "0"),
            ("file_ratio_1to1", "1"),
            ("refaults_deactivate", "0"),
            ("kswapd_write_at_priority", "0"),
            ("kswapd_flat_priority", "1"),
            ("dirty_activate", "0"),
            ("dirty_throttle", "stall"),
        ],
    },
    Profile {
        name: "v4.6",
        summary: "seed 000's own baseline (2016): rotation balance, file active:inactive 1:1, cache trimmed while inactive file is not low",
        settings: &[
            ("lru", "classic"),
            ("lru_balance", "rotation"),
            ("cache_challenges_anon", "0"),
            ("anon_start_inactive", "0"),
            ("anon_ratio_1to1", "0"),
            ("anon_workingset", "0"),
            ("swapin_workingset", "0"),
            ("tiny_file_needs_anon", "0"),
            ("file_ratio_1to1", "1"),
            ("refaults_deactivate", "0"),
            ("kswapd_write_at_priority", "0"),
            ("kswapd_flat_priority", "1"),
            ("dirty_activate", "0"),
            ("dirty_throttle", "stall"),
        ],
    },
    Profile {
        name: "v4.6-lrucost",
        summary: "seed 000 as posted (2016 RFC on v4.6/4.7): v4.6 with refault IO cost x 32 vs rotations, cache workingset challenges anon",
        settings: &[
            ("lru", "classic"),
            ("lru_balance", "rfc-2016"),
            ("cache_challenges_anon", "1"),
            ("anon_start_inactive", "0"),
            ("anon_ratio_1to1", "0"),
            ("anon_workingset", "0"),
            ("swapin_workingset", "0"),
            ("tiny_file_needs_anon", "0"),
            ("file_ratio_1to1", "1"),
            ("refaults_deactivate", "0"),
            ("kswapd_write_at_priority", "0"),
            ("kswapd_flat_priority", "1"),
            ("dirty_activate", "0"),
            ("dirty_throttle", "stall"),
        ],
    },
    Profile {
        name: "v5.7",
        summary: "before seeds 000 and 004: rotation-based anon/file balance, new anon pages start active",
        settings: &[
            ("lru", "classic"),
            ("lru_balance", "rotation"),
            ("cache_challenges_anon", "0"),
            ("anon_start_inactive", "0"),
            ("anon_ratio_1to1", "0"),
            ("anon_workingset", "0"),
            ("swapin_workingset", "1"),
            ("tiny_file_needs_anon", "1"),
            ("file_ratio_1to1", "0"),
            ("refaults_deactivate", "1"),
            ("kswapd_write_at_priority", "0"),
            ("kswapd_flat_priority", "1"),
            ("dirty_activate", "1"),
            ("dirty_throttle", "stall"),
        ],
    },
    Profile {
        name: "v5.8",
        summary: "seed 000: anon/file balance by refault IO cost; cache workingset challenges anon",
        settings: &[
            ("lru", "classic"),
            ("lru_balance", "refault-cost"),
            ("cache_challenges_anon", "1"),
            ("anon_start_inactive", "0"),
            ("anon_ratio_1to1", "0"),
            ("anon_workingset", "0"),
            ("swapin_workingset", "1"),
            ("tiny_file_needs_anon", "1"),
            ("file_ratio_1to1", "0"),
            ("refaults_deactivate", "1"),
            ("kswapd_write_at_priority", "0"),
            ("kswapd_flat_priority", "1"),
            ("dirty_activate", "1"),
            ("dirty_throttle", "stall"),
        ],
    },
    Profile {
        name: "v5.9-prot",
        summary: "seed 004 'prot': anon workingset protection only (start inactive, 1:1 anon ratio), no anon detection",
        settings: &[
            ("lru", "classic"),
            ("lru_balance", "refault-cost"),
            ("cache_challenges_anon", "1"),
            ("anon_start_inactive", "1"),
            ("anon_ratio_1to1", "1"),
            ("anon_workingset", "0"),
            ("swapin_workingset", "1"),
            ("tiny_file_needs_anon", "1"),
            ("file_ratio_1to1", "0"),
            ("refaults_deactivate", "1"),
            ("kswapd_write_at_priority", "0"),
            ("kswapd_flat_priority", "1"),
            ("dirty_activate", "1"),
            ("dirty_throttle", "stall"),
        ],
    },
    Profile {
        name: "v5.9",
        summary: "seed 004 'detect': anon protection and workingset detection via swap-cache shadows",
        settings: &[
            ("lru", "classic"),
            ("lru_balance", "refault-cost"),
            ("cache_challenges_anon", "1"),
            ("anon_start_inactive", "1"),
            ("anon_ratio_1to1", "0"),
            ("anon_workingset", "1"),
            ("swapin_workingset", "1"),
            ("tiny_file_needs_anon", "1"),
            ("file_ratio_1to1", "0"),
            ("refaults_deactivate", "1"),
            ("kswapd_write_at_priority", "0"),
            ("kswapd_flat_priority", "1"),
            ("dirty_activate", "1"),
            ("dirty_throttle", "stall"),
        ],
    },
    Profile {
        name: "v6.1-classic",
        summary: "seed 002 baseline: v6.1 with lru_gen off (classic two-list LRU, refault-cost balance)",
        settings: &[
            ("lru", "classic"),
            ("lru_balance", "refault-cost"),
            ("cache_challenges_anon", "1"),
            ("anon_start_inactive", "1"),
            ("anon_ratio_1to1", "0"),
            ("anon_workingset", "1"),
        ],
    },
    Profile {
        name: "v6.1-mglru",
        summary: "seed 002: v6.1 with lru_gen on (multi-gen LRU, enabled=0x0007)",
        settings: &[
            ("lru", "mglru"),
            ("lru_balance", "refault-cost"),
            ("cache_challenges_anon", "1"),
            ("anon_start_inactive", "1"),
            ("anon_ratio_1to1", "0"),
            ("anon_workingset", "1"),
            ("lru_gen.enabled", "0x0007"),
            ("mglru_rework", "0"),
            ("mglru_6_12", "0"),
        ],
    },
    Profile {
        name: "v6.12-classic",
        summary: "validate --kernel debian-6.12, lru_gen off: classic LRU with the v6.2 weighted refault cost",
        settings: &[
            ("lru", "classic"),
            ("lru_balance", "weighted-cost"),
            ("cache_challenges_anon", "1"),
            ("anon_start_inactive", "1"),
            ("anon_ratio_1to1", "0"),
            ("anon_workingset", "1"),
        ],
    },
    Profile {
        name: "v6.12-mglru",
        summary: "validate --kernel debian-6.12, lru_gen on (enabled=0x0007); the 6.14 refault/tier rework is not in 6.12",
        settings: &[
            ("lru", "mglru"),
            ("lru_balance", "weighted-cost"),
            ("cache_challenges_anon", "1"),
            ("anon_start_inactive", "1"),
            ("anon_ratio_1to1", "0"),
            ("anon_workingset", "1"),
            ("lru_gen.enabled", "0x0007"),
            ("mglru_rework", "0"),
            ("mglru_6_12", "1"),
        ],
    },
    Profile {
        name: "v6.2",
        summary: "rotations as a secondary cost factor: IO x 32 + rotations (0538a82c39e9); classic LRU",
        settings: &[
            ("lru", "classic"),
            ("lru_balance", "weighted-cost"),
            ("cache_challenges_anon", "1"),
            ("anon_start_inactive", "1"),
            ("anon_ratio_1to1", "0"),
            ("anon_workingset", "1"),
            ("swapin_workingset", "0"),
            ("tiny_file_needs_anon", "1"),
            ("file_ratio_1to1", "0"),
            ("refaults_deactivate", "1"),
            ("kswapd_write_at_priority", "0"),
            ("kswapd_flat_priority", "1"),
            ("dirty_activate", "1"),
            ("dirty_throttle", "throttle"),
        ],
    },
];

/// Looks a profile up by name.
pub fn find(name: &str) -> Option<&'static Profile> {
    PROFILES.iter().find(|p| p.name == name)
}

impl Config {
    /// The default configuration with `profile`'s flags applied.
    pub fn for_profile(profile: &str) -> Result<Config, ConfigError> {
        let p = find(profile).ok_or_else(|| ConfigError::BadValue {
            key: "--profile".into(),
            value: profile.into(),
            expected: format!("one of: {}", PROFILES.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")),
        })?;
        let mut c = Config { profile: p.name.into(), ..Config::default() };
        for (k, v) in p.settings {
            c.set(k, v).expect("profile table holds valid settings");
        }
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_profile_resolves_and_default_is_newest() {
        for p in PROFILES {
            Config::for_profile(p.name).unwrap();
        }
        assert_eq!(Config::for_profile("v6.2").unwrap(), Config::default());
        assert!(Config::for_profile("v9.9").is_err());
    }
}
