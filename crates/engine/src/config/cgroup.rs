//! The memory cgroup tree's settings: `cgroup.PATH.memory.FILE=VALUE` keys
//! (`memory.max`, `memory.high`, `memory.low`, `memory.min`,
//! `memory.swap.max`, `memory.swap.high`, `memory.zswap.max`, `memory.zswap.writeback`,
//! `memory.oom.group`), and the `memory_recursiveprot`
//! mount option (`cgroup.memory_recursiveprot`).

use knobs::{format_size, parse_size, Version};
use mm::cgroup::{Limits, PAGE_COUNTER_MAX};
use mm::PAGE_SIZE;

/// The groups a run creates before its workloads, with their files.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CgroupKnobs {
    /// Groups by path, in the order first set, with their limits.
    pub groups: Vec<(String, Limits)>,
    /// `memory_recursiveprot` (v5.7+ mount option): unclaimed protection flows down by usage.
    pub recursive_prot: bool,
}

/// The interface files a `cgroup.PATH.memory.FILE` key may name.
pub const FILES: &[&str] =
    &["max", "high", "low", "min", "swap.max", "swap.high", "zswap.max", "zswap.writeback", "oom.group"];

/// The key forms `reclaimsim settings` lists: (key, default, meaning).
pub const KEY_FORMS: &[(&str, &str, &str)] = &[
    ("cgroup.PATH.memory.max", "max", "cgroup v2 group PATH (created with its parents; workloads join it with cgroup=PATH): hard limit; a charge over it reclaims the group, then OOM-kills in it"),
    ("cgroup.PATH.memory.high", "max", "throttling limit: charges over it reclaim in the task and sleep a penalty"),
    ("cgroup.PATH.memory.low", "0", "best-effort protection from reclaim (skipped until nothing else can be reclaimed)"),
    ("cgroup.PATH.memory.min", "0", "hard protection from reclaim"),
    ("cgroup.PATH.memory.swap.max", "max", "swap the group may use"),
    ("cgroup.PATH.memory.swap.high", "max", "v5.8: swap throttling limit: over it, charging tasks sleep a penalty (as over memory.high, without reclaim), counted as memory.swap.events high"),
    ("cgroup.PATH.memory.zswap.max", "max", "v5.19: compressed memory the group may keep in zswap; a store over it writes one of the group's entries back first, and is refused if that fails"),
    ("cgroup.PATH.memory.zswap.writeback", "1", "v6.8: 0 keeps the group's pages out of the swap device: zswap never writes its entries back, and pages zswap refuses stay in memory"),
    ("cgroup.PATH.memory.oom.group", "0", "1: an OOM kill in the group kills every process of the group"),
    ("cgroup.memory_recursiveprot", "0", "1: the cgroup2 mount option memory_recursiveprot (unclaimed protection flows down by usage)"),
];

const fn v(major: u16, minor: u16) -> Version {
    Version::new(major, minor)
}

/// The first release with each cgroup v2 memory file or option the model takes
/// (KERNEL: the release of the commit that added it; the v5.19, v6.8 and v6.9
/// entries checked against Debian's 5.10, 6.1 and 6.12 images: each file's name is in
/// the first image after its release and not before). Before v4.5 the v2 memory
/// controller was not a stable interface; those kernels have only v1 (`memcg.limit`).
pub const FIRST_KERNEL: &[(&str, Version)] = &[
    ("memory.max", v(4, 5)),
    ("memory.high", v(4, 5)),
    ("memory.low", v(4, 5)),
    ("memory.swap.max", v(4, 5)),
    ("memory.swap.high", v(5, 8)),
    ("memory.min", v(4, 18)),
    ("memory.oom.group", v(4, 19)),
    ("memory.pressure", v(4, 20)),
    ("memory_recursiveprot", v(5, 7)),
    ("memory.reclaim", v(5, 19)),
    ("memory.zswap.max", v(5, 19)),
    ("memory.zswap.writeback", v(6, 8)),
    ("memory.reclaim swappiness=", v(6, 9)),
];

/// Fails unless `kernel` (profile `profile`'s) has `file`, a name of [`FIRST_KERNEL`];
/// the error names the file, the first release with it and the profile.
pub fn require(file: &str, kernel: Version, profile: &str) -> Result<(), String> {
    let (_, since) = FIRST_KERNEL.iter().find(|(f, _)| *f == file).expect("a file of FIRST_KERNEL");
    if kernel >= *since {
        return Ok(());
    }
    Err(format!("{file} is {since}+, and profile {profile} is kernel {kernel}: choose a profile of {since} or later"))
}

impl CgroupKnobs {
    /// Fails when the tree needs a file or option the profile's kernel does not have
    /// (a group's file left at its default is what that kernel does without it).
    pub fn check_kernel(&self, kernel: Version, profile: &str) -> Result<(), String> {
        let defaults = Limits::default();
        if self.recursive_prot {
            require("memory_recursiveprot", kernel, profile)?;
        }
        for (path, l) in &self.groups {
            let set = [
                ("memory.max", true),
                ("memory.min", l.min != defaults.min),
                ("memory.oom.group", l.oom_group != defaults.oom_group),
                ("memory.swap.high", l.swap_high != defaults.swap_high),
                ("memory.zswap.max", l.zswap_max != defaults.zswap_max),
                ("memory.zswap.writeback", l.zswap_writeback != defaults.zswap_writeback),
            ];
            for (file, _) in set.iter().filter(|(_, set)| *set) {
                require(file, kernel, profile).map_err(|e| format!("cgroup {path}: {e}"))?;
            }
        }
        Ok(())
    }

    /// Applies `cgroup.REST=value` (the key without its `cgroup.` prefix);
    /// the error says what was expected.
    pub fn set(&mut self, rest: &str, value: &str) -> Result<(), String> {
        if rest == "memory_recursiveprot" {
            self.recursive_prot = knobs::parse_bool(value)?;
            return Ok(());
        }
        let (path, file) = rest.split_once(".memory.").ok_or_else(|| {
            "a key cgroup.PATH.memory.FILE (PATH like batch or svc/db; FILE max, high, low, min, swap.max, swap.high, zswap.max, zswap.writeback or oom.group) or cgroup.memory_recursiveprot"
                .to_string()
        })?;
        if path.is_empty() || path.split('/').any(|p| p.is_empty() || p == "." || p == "..") {
            return Err(format!("a group path of names separated by `/`, not `{path}`"));
        }
        let limits = match self.groups.iter().position(|(p, _)| p == path) {
            Some(i) => &mut self.groups[i].1,
            None => {
                self.groups.push((path.to_string(), Limits::default()));
                &mut self.groups.last_mut().expect("just pushed").1
            }
        };
        let pages = |v: &str| -> Result<u64, String> {
            if v == "max" {
                Ok(PAGE_COUNTER_MAX)
            } else {
                // KERNEL: page_counter_memparse() rounds a byte count down to pages.
                Ok((parse_size(v)? / PAGE_SIZE).min(PAGE_COUNTER_MAX))
            }
        };
        match file {
            "max" => limits.max = pages(value)?,
            "high" => limits.high = pages(value)?,
            "low" => limits.low = pages(value)?,
            "min" => limits.min = pages(value)?,
            "swap.max" => limits.swap_max = pages(value)?,
            "swap.high" => limits.swap_high = pages(value)?,
            "zswap.max" => limits.zswap_max = pages(value)?,
            "zswap.writeback" => limits.zswap_writeback = knobs::parse_bool(value)?,
            "oom.group" => limits.oom_group = knobs::parse_bool(value)?,
            _ => return Err(format!("a file of {}", FILES.join(", "))),
        }
        Ok(())
    }

    /// Every key set, with its value, in the order of [`CgroupKnobs::set`]'s groups.
    pub fn resolved(&self) -> Vec<(String, String)> {
        let size = |p: u64| if p >= PAGE_COUNTER_MAX { "max".to_string() } else { format_size(p * PAGE_SIZE) };
        let mut out = Vec::new();
        if self.recursive_prot {
            out.push(("cgroup.memory_recursiveprot".into(), "1".into()));
        }
        for (path, l) in &self.groups {
            let key = |f: &str| format!("cgroup.{path}.memory.{f}");
            let sizes = [
                ("max", l.max),
                ("high", l.high),
                ("low", l.low),
                ("min", l.min),
                ("swap.max", l.swap_max),
                ("swap.high", l.swap_high),
                ("zswap.max", l.zswap_max),
            ];
            for (f, v) in sizes {
                out.push((key(f), size(v)));
            }
            out.push((key("zswap.writeback"), (l.zswap_writeback as u8).to_string()));
            out.push((key("oom.group"), (l.oom_group as u8).to_string()));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_set_files_and_round_trip() {
        let mut c = CgroupKnobs::default();
        c.set("svc/db.memory.low", "64M").unwrap();
        c.set("batch.memory.min", "128M").unwrap();
        c.set("svc/db.memory.min", "max").unwrap();
        c.set("memory_recursiveprot", "1").unwrap();
        c.set("batch.memory.max", "1G").unwrap();
        c.set("batch.memory.high", "512M").unwrap();
        c.set("batch.memory.swap.max", "0").unwrap();
        c.set("batch.memory.oom.group", "1").unwrap();
        c.set("batch.memory.zswap.max", "8M").unwrap();
        c.set("svc/db.memory.zswap.writeback", "0").unwrap();
        assert_eq!(c.groups[0].1.low, 64 << 8);
        let batch = c.groups[1].1;
        assert_eq!((batch.max, batch.high, batch.swap_max, batch.oom_group), (1 << 18, 1 << 17, 0, true));
        assert_eq!(c.groups[1].1.min, 128 << 8);
        assert_eq!((batch.zswap_max, c.groups[0].1.zswap_writeback), (8 << 8, false));
        let mut d = CgroupKnobs::default();
        for (k, v) in c.resolved() {
            d.set(k.strip_prefix("cgroup.").unwrap(), &v).unwrap();
        }
        assert_eq!(c, d);
    }

    #[test]
    fn every_file_is_listed_for_settings_and_takes_its_default() {
        for f in FILES {
            let key = format!("cgroup.PATH.memory.{f}");
            let (_, default, _) = KEY_FORMS.iter().find(|(k, _, _)| *k == key).expect("listed");
            CgroupKnobs::default().set(&format!("PATH.memory.{f}"), default).unwrap();
        }
        assert_eq!(KEY_FORMS.len(), FILES.len() + 1);
    }

    #[test]
    fn files_are_checked_against_the_profiles_kernel() {
        let mut c = CgroupKnobs::default();
        c.set("svc.memory.low", "64M").unwrap();
        assert!(c.check_kernel(v(4, 6), "v4.6").is_ok());
        let e = c.check_kernel(v(3, 11), "v3.11").unwrap_err();
        assert_eq!(
            e,
            "cgroup svc: memory.max is v4.5+, and profile v3.11 is kernel v3.11: choose a profile of v4.5 or later"
        );
        c.set("svc.memory.zswap.writeback", "1").unwrap();
        assert!(c.check_kernel(v(6, 2), "v6.2").is_ok(), "a file at its default needs no kernel");
        c.set("svc.memory.zswap.writeback", "0").unwrap();
        assert!(c.check_kernel(v(6, 2), "v6.2").unwrap_err().contains("memory.zswap.writeback is v6.8+"));
        assert!(c.check_kernel(v(6, 12), "v6.12").is_ok());
        c.set("memory_recursiveprot", "1").unwrap();
        assert!(c.check_kernel(v(5, 7), "v5.7").unwrap_err().contains("zswap.writeback"));
        assert!(c.check_kernel(v(4, 6), "v4.6").unwrap_err().starts_with("memory_recursiveprot is v5.7+"));
        assert!(require("memory.reclaim swappiness=", v(6, 2), "v6.2").is_err());
        assert!(require("memory.reclaim swappiness=", v(6, 12), "v6.12").is_ok());
    }

    #[test]
    fn bad_keys_say_what_was_expected() {
        let mut c = CgroupKnobs::default();
        assert!(c.set("svc.memory.lo", "1M").unwrap_err().contains("low, min"));
        assert!(c.set("svc.memory.zswap.writeback", "2").is_err());
        assert!(c.set("svc.memory.oom.group", "2").is_err());
        assert!(c.set("svc.low", "1M").unwrap_err().contains("cgroup.PATH.memory.FILE"));
        assert!(c.set("a//b.memory.low", "1M").unwrap_err().contains("group path"));
        assert!(c.set("svc.memory.low", "lots").is_err());
    }
}
