//! Kernel profiles: a kernel version, an LRU design, and — for a patch series
//! as it was posted rather than merged — the settings where the series differs
//! from that release.
//!
//! A profile lists no kernel flags of its own: every knob declares which
//! kernels had it (`knobs::History`), and [`Config::for_profile`] sets each
//! version-dependent knob to the value of the profile's kernel. Adding a kernel
//! flag is therefore one declaration; adding a profile is one entry here.

use crate::config::{Config, ConfigError, SETTINGS};
use knobs::Version;

/// One profile.
pub struct Profile {
    /// Name (`v5.9`).
    pub name: &'static str,
    /// What it stands for.
    pub summary: &'static str,
    /// The kernel release whose behaviour it takes.
    pub kernel: Version,
    /// The LRU design (`lru`: a policy of the registry).
    pub lru: &'static str,
    /// A posted patch series on top of the release: the settings where it differs.
    pub patches: &'static [(&'static str, &'static str)],
}

const fn v(major: u16, minor: u16) -> Version {
    Version::new(major, minor)
}

/// All profiles, oldest kernel first.
pub const PROFILES: &[Profile] = &[
    Profile {
        name: "v3.9",
        summary: "seed 003 'vanilla': kswapd writes dirty file pages from the LRU tail below priority 10 and skips writeback pages; full-budget kswapd passes",
        kernel: v(3, 9),
        lru: "classic",
        patches: &[],
    },
    Profile {
        name: "v3.11",
        summary: "seed 003 'lessdisrupt': kswapd stalls on a tail of unqueued dirty or immediate-reclaim pages, writes only when the node is flagged dirty",
        kernel: v(3, 11),
        lru: "classic",
        patches: &[],
    },
    Profile {
        name: "v4.6",
        summary: "seed 000's own baseline (2016): rotation balance, file active:inactive 1:1, cache trimmed while inactive file is not low",
        kernel: v(4, 6),
        lru: "classic",
        patches: &[],
    },
    Profile {
        name: "v4.6-lrucost",
        summary: "seed 000 as posted (2016 RFC on v4.6/4.7): v4.6 with refault IO cost x 32 vs rotations, cache workingset challenges anon",
        kernel: v(4, 6),
        lru: "classic",
        patches: &[("lru_balance", "rfc-2016"), ("cache_challenges_anon", "1")],
    },
    Profile {
        name: "v5.7",
        summary: "before seeds 000 and 004: rotation-based anon/file balance, new anon pages start active",
        kernel: v(5, 7),
        lru: "classic",
        patches: &[],
    },
    Profile {
        name: "v5.8",
        summary: "seed 000: anon/file balance by refault IO cost; cache workingset challenges anon",
        kernel: v(5, 8),
        lru: "classic",
        patches: &[],
    },
    Profile {
        name: "v5.9-prot",
        summary: "seed 004 'prot': anon workingset protection only (start inactive, 1:1 anon ratio), no anon detection",
        kernel: v(5, 9),
        lru: "classic",
        patches: &[("anon_ratio_1to1", "1"), ("anon_workingset", "0")],
    },
    Profile {
        name: "v5.9",
        summary: "seed 004 'detect': anon protection and workingset detection via swap-cache shadows",
        kernel: v(5, 9),
        lru: "classic",
        patches: &[],
    },
    Profile {
        name: "v5.10",
        summary: "validate --kernel debian-5.10: the 2020 LTS, classic LRU only (no lru_gen), anon workingset detection",
        kernel: v(5, 10),
        lru: "classic",
        patches: &[],
    },
    Profile {
        name: "v6.1-classic",
        summary: "seed 002 baseline: v6.1 with lru_gen off (classic two-list LRU, refault-cost balance)",
        kernel: v(6, 1),
        lru: "classic",
        patches: &[],
    },
    Profile {
        name: "v6.1-mglru",
        summary: "seed 002: v6.1 with lru_gen on (multi-gen LRU, enabled=0x0007)",
        kernel: v(6, 1),
        lru: "mglru",
        patches: &[],
    },
    Profile {
        name: "v6.2",
        summary: "rotations as a secondary cost factor: IO x 32 + rotations (0538a82c39e9); classic LRU",
        kernel: v(6, 2),
        lru: "classic",
        patches: &[],
    },
    Profile {
        name: "v6.12-classic",
        summary: "validate --kernel debian-6.12, lru_gen off: classic LRU with the v6.2 weighted refault cost",
        kernel: v(6, 12),
        lru: "classic",
        patches: &[],
    },
    Profile {
        name: "v6.12-mglru",
        summary: "validate --kernel debian-6.12, lru_gen on (enabled=0x0007); the 6.14 refault/tier rework is not in 6.12",
        kernel: v(6, 12),
        lru: "mglru",
        patches: &[],
    },
    Profile {
        name: "v7.2-classic",
        summary: "validate --kernel debian-7.2, lru_gen off: classic LRU",
        kernel: v(7, 2),
        lru: "classic",
        patches: &[],
    },
    Profile {
        name: "v7.2-mglru",
        summary: "validate --kernel debian-7.2, lru_gen on (enabled=0x0007): with the 6.14 refault/tier rework",
        kernel: v(7, 2),
        lru: "mglru",
        patches: &[],
    },
];

/// The profile `Config::default()` equals.
pub const DEFAULT_PROFILE: &str = "v6.2";

/// Looks a profile up by name.
pub fn find(name: &str) -> Option<&'static Profile> {
    PROFILES.iter().find(|p| p.name == name)
}

impl Profile {
    /// The settings this profile applies on top of the defaults, in order:
    /// the LRU design, every version-dependent knob at the profile's kernel,
    /// then the patch series' own settings.
    pub fn settings(&self) -> Vec<(&'static str, &'static str)> {
        let mut s = vec![("lru", self.lru)];
        s.extend(SETTINGS.iter().filter_map(|k| Some((k.key, k.history.value_at(self.kernel)?))));
        s.extend(self.patches.iter().copied());
        s
    }
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
        for (k, v) in p.settings() {
            c.set(k, v).expect("knob histories and patch series hold valid settings");
        }
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_profile_resolves_and_default_is_its_profile() {
        for p in PROFILES {
            Config::for_profile(p.name).unwrap();
        }
        assert_eq!(Config::for_profile(DEFAULT_PROFILE).unwrap(), Config::default());
        assert!(Config::for_profile("v9.9").is_err());
    }

    #[test]
    fn profiles_take_each_flag_from_their_kernel() {
        let get = |p: &str, key: &str| {
            let c = Config::for_profile(p).unwrap();
            c.resolved().into_iter().find(|(k, _)| *k == key).unwrap().1
        };
        assert_eq!(get("v3.9", "kswapd_write_at_priority"), "1");
        assert_eq!(get("v3.11", "kswapd_write_at_priority"), "0");
        assert_eq!(get("v3.9", "dirty_throttle"), "iff-congested");
        assert_eq!(get("v4.6", "dirty_throttle"), "stall");
        assert_eq!(get("v6.1-classic", "dirty_throttle"), "throttle");
        assert_eq!(get("v5.7", "swapin_workingset"), "1");
        assert_eq!(get("v6.1-classic", "swapin_workingset"), "0");
        assert_eq!(get("v5.7", "lru_balance"), "rotation");
        assert_eq!(get("v6.1-mglru", "lru_balance"), "refault-cost");
        assert_eq!(get("v6.12-classic", "lru_balance"), "weighted-cost");
        assert_eq!(get("v6.1-mglru", "mglru_6_12"), "0");
        assert_eq!(get("v6.12-mglru", "mglru_6_12"), "1");
        assert_eq!(get("v6.12-mglru", "mglru_rework"), "0");
        assert_eq!(get("v7.2-mglru", "mglru_rework"), "1");
        assert_eq!(get("v5.10", "swapin_workingset"), "1");
        assert_eq!(get("v5.10", "dirty_throttle"), "stall");
        // Posted series differ from their release in their own settings only.
        assert_eq!(get("v4.6-lrucost", "lru_balance"), "rfc-2016");
        assert_eq!(get("v4.6-lrucost", "file_ratio_1to1"), "1");
        assert_eq!(get("v5.9-prot", "anon_workingset"), "0");
        assert_eq!(get("v5.9-prot", "anon_ratio_1to1"), "1");
        assert_eq!(get("v5.9", "anon_ratio_1to1"), "0");
    }
}
