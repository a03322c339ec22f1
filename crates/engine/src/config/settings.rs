//! The settings table: every knob of every part of [`Config`], gathered from
//! the declarations next to the code that reads them.

use super::{cpu, numa, pcp, zram, zswap, Config};
use crate::{device, memcg, sched, swap_ra, writeback};
use std::sync::LazyLock;

/// One `--set` key of a run's configuration.
pub type Setting = knobs::Setting<Config>;

/// Every setting, in the order `reclaimsim settings` and the resolved
/// configuration list them. One line per part of the configuration.
pub static SETTINGS: LazyLock<Vec<Setting>> = LazyLock::new(|| {
    let mut t = Vec::new();
    t.extend(Setting::lift(super::KNOBS, "", "", |c| c, |c| c));
    t.extend(Setting::lift(device::KNOBS, "swap.", "swap device: ", |c| &c.swap_params, |c| &mut c.swap_params));
    t.extend(Setting::lift(device::KNOBS, "fs.", "filesystem device: ", |c| &c.fs_params, |c| &mut c.fs_params));
    t.extend(Setting::lift(zram::KNOBS, "zram.", "zram: ", |c| &c.zram, |c| &mut c.zram));
    t.extend(Setting::lift(zswap::KNOBS, "zswap.", "zswap: ", |c| &c.zswap, |c| &mut c.zswap));
    t.extend(Setting::lift(reclaim::config::KNOBS, "", "", |c| &c.reclaim, |c| &mut c.reclaim));
    t.extend(Setting::lift(reclaim::shrinker::KNOBS, "", "", |c| &c.reclaim.shrinker, |c| &mut c.reclaim.shrinker));
    for policy in reclaim::policy::registry::POLICIES {
        t.extend(Setting::lift(policy.knobs, "", "", |c| &c.reclaim, |c| &mut c.reclaim));
    }
    t.extend(Setting::lift(swap_ra::KNOBS, "", "", |c| &c.swap_ra, |c| &mut c.swap_ra));
    t.extend(Setting::lift(memcg::KNOBS, "memcg.", "", |c| &c.memcg, |c| &mut c.memcg));
    t.extend(Setting::lift(writeback::KNOBS, "", "", |c| &c.writeback, |c| &mut c.writeback));
    t.extend(Setting::lift(sched::KNOBS, "", "", |c| &c.sched, |c| &mut c.sched));
    t.extend(Setting::lift(cpu::KNOBS, "cpu.", "", |c| &c.cpu, |c| &mut c.cpu));
    t.extend(Setting::lift(numa::KNOBS, "", "", |c| &c.numa, |c| &mut c.numa));
    t.extend(Setting::lift(crate::oom::KNOBS, "", "", |c| &c.oom, |c| &mut c.oom));
    t.extend(Setting::lift(pcp::KNOBS, "", "", |c| &c.pcp, |c| &mut c.pcp));
    t
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_unique_and_every_value_round_trips() {
        let mut keys: Vec<_> = SETTINGS.iter().map(|s| s.key).collect();
        keys.sort_unstable();
        let n = keys.len();
        keys.dedup();
        assert_eq!(keys.len(), n, "duplicate keys");
        let c = Config::default();
        for s in SETTINGS.iter() {
            let mut d = Config::default();
            s.set(&mut d, &s.get(&c)).unwrap_or_else(|e| panic!("{}: {e}", s.key));
            assert_eq!(c, d, "{}", s.key);
        }
    }
}
