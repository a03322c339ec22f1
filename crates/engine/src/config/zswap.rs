//! zswap's knobs (`zswap.*`): the module parameters of mm/zswap.c and the
//! versions of its behaviour. How pages compress is zram's model
//! (`zram.comp_ratio`, `zram.same_filled_pct`: a property of the pages).

use knobs::{bool_knob, u64_knob, History, Knob, Version};

/// zswap's parameters: the `zswap.*` module parameters and behaviour flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ZswapKnobs {
    /// `zswap.enabled`: a compressed cache in front of the swap device.
    pub enabled: bool,
    /// `zswap.max_pool_percent`: the pool's limit, percent of RAM.
    pub max_pool_percent: u64,
    /// `zswap.accept_threshold_percent`: percent of the limit below which a full pool accepts again.
    pub accept_threshold_percent: u64,
    /// `zswap.shrinker_enabled`: write entries back under memory pressure (v6.8).
    pub shrinker_enabled: bool,
    /// `zswap.same_filled_pages`: same-filled pages stored without pool memory (v4.14..v6.11).
    pub same_filled_pages: bool,
    /// `zswap.second_chance`: the LRU walk rotates entries stored since it last saw them (v6.12).
    pub second_chance: bool,
    /// `zswap.exclusive_loads`: a load frees the entry and dirties the page.
    pub exclusive_loads: bool,
}

impl Default for ZswapKnobs {
    /// The default profile's kernel (v6.2), with `CONFIG_ZSWAP_DEFAULT_ON` and
    /// `CONFIG_ZSWAP_SHRINKER_DEFAULT_ON` off (their defaults).
    fn default() -> Self {
        ZswapKnobs {
            enabled: false,
            max_pool_percent: 20,
            accept_threshold_percent: 90,
            shrinker_enabled: false,
            same_filled_pages: true,
            second_chance: false,
            exclusive_loads: false,
        }
    }
}

impl ZswapKnobs {
    /// The pool's parameters, and how its pages compress (zram's model; with
    /// same-filled handling off those pages compress like any other).
    pub fn pool_config(&self, zram: &super::ZramKnobs) -> (mm::ZswapConfig, mm::ZramConfig) {
        let mut comp = zram.pool_config();
        if !self.same_filled_pages {
            comp.same_ppm = 0;
        }
        let cfg = mm::ZswapConfig {
            max_pool_percent: self.max_pool_percent as u32,
            accept_thr_percent: self.accept_threshold_percent as u32,
            shrinker: self.shrinker_enabled,
            second_chance: self.second_chance,
            exclusive_loads: self.exclusive_loads,
        };
        (cfg, comp)
    }
}

const fn v(major: u16, minor: u16) -> Version {
    Version::new(major, minor)
}

/// The zswap knobs.
pub const KNOBS: &[Knob<ZswapKnobs>] = &[
    bool_knob!(
        "enabled",
        enabled,
        History::Tunable { since: v(3, 11) },
        "the boot/module parameter: reclaim's swap writes go to a compressed pool in RAM first (default 0, CONFIG_ZSWAP_DEFAULT_ON=n)"
    ),
    u64_knob!(
        "max_pool_percent",
        max_pool_percent,
        0,
        100,
        History::Tunable { since: v(3, 11) },
        "most RAM the compressed pool may take, percent (default 20); a full pool refuses stores and writes its oldest entries back"
    ),
    u64_knob!(
        "accept_threshold_percent",
        accept_threshold_percent,
        0,
        100,
        History::Tunable { since: v(5, 6) },
        "after the pool was full, stores resume once it is at this percent of max_pool_percent (default 90)"
    ),
    bool_knob!(
        "shrinker_enabled",
        shrinker_enabled,
        History::Tunable { since: v(6, 8) },
        "the zswap shrinker writes entries back to the swap device under memory pressure (default 0, CONFIG_ZSWAP_SHRINKER_DEFAULT_ON=n)"
    ),
    bool_knob!(
        "same_filled_pages",
        same_filled_pages,
        History::Behaviour { since: Some(v(4, 14)), until: Some(v(6, 11)) },
        "v4.14..v6.11: same-filled pages (zram.same_filled_pct) are stored as their value, no pool memory; off: compressed like others"
    ),
    bool_knob!(
        "second_chance",
        second_chance,
        History::since(6, 12),
        "v6.12: the LRU walk of writeback rotates an entry stored since it last passed (referenced bit) instead of writing it back"
    ),
    bool_knob!(
        "exclusive_loads",
        exclusive_loads,
        History::since(6, 7),
        "a load into the swap cache frees the entry and dirties the page (v6.5 option, always since); off: the entry stays until the slot is freed"
    ),
];

#[cfg(test)]
mod tests {
    use crate::Config;

    #[test]
    fn zswap_knobs_give_the_pool_parameters() {
        let mut c = Config::default();
        c.set("zswap.max_pool_percent", "10").unwrap();
        c.set("zram.same_filled_pct", "50").unwrap();
        let (cfg, comp) = c.zswap.pool_config(&c.zram);
        assert_eq!(
            (cfg.max_pool_percent, cfg.accept_thr_percent, comp.comp_len, comp.same_ppm),
            (10, 90, 1517, 500_000)
        );
        c.set("zswap.same_filled_pages", "0").unwrap();
        assert_eq!(c.zswap.pool_config(&c.zram).1.same_ppm, 0);
        assert!(c.set("zswap.max_pool_percent", "101").is_err());
    }
}
