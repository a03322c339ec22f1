//! Swap readahead: which swap slots to read with a faulting one (spec E).
//!
//! Two policies, as in `mm/swap_state.c`. Cluster readahead reads the aligned
//! block of swap slots around the faulting slot, its window scaled by a global
//! hit counter. VMA readahead (v4.14, seed 001) reads the swapped-out virtual
//! neighbours of the faulting address within its VMA and 2 MiB PMD, with hit and
//! window state per VMA. Both share the window rule [`swapin_nr_pages`].
//! This module decides; the engine allocates, inserts and submits the reads.

use knobs::{bool_knob, u64_knob, History, Kind, Knob, Version};

/// Pages in a PMD (2 MiB on x86-64): VMA readahead never crosses one.
pub const PMD_PAGES: u32 = 512;
/// Largest hit count a VMA's readahead state holds (6 bits).
pub const HITS_MAX: u32 = 63;
/// Largest VMA window (`1 << 5`), whatever `vm.page-cluster` says.
const VMA_WIN_SHIFT_MAX: u32 = 5;

/// The window rule `__swapin_nr_pages()`: how many pages to read given the
/// previous and current fault positions, the readahead hits since the last
/// decision, the limit and the previous window.
pub fn swapin_nr_pages(prev: u32, cur: u32, hits: u32, max_pages: u32, prev_win: u32) -> u32 {
    let mut pages = hits + 2;
    if pages == 2 {
        // No hits: read two pages only when the faults are adjacent.
        pages = if cur == prev.wrapping_add(1) || cur == prev.wrapping_sub(1) { 2 } else { 1 };
    } else {
        pages = pages.next_power_of_two().max(4);
    }
    pages.min(max_pages).max(prev_win / 2)
}

/// A VMA's readahead state (`vma->swap_readahead_info`): last fault page,
/// window and hits. All zero reads as 4 hits, as in the kernel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VmaRaInfo {
    /// Page of the last swap fault (or swap-cache hit) in the VMA.
    pub addr: u32,
    /// Last window.
    pub win: u32,
    /// Readahead hits since the last window decision.
    pub hits: u32,
    /// False until the first fault: the zero value reads as `hits = 4`.
    pub set: bool,
}

impl VmaRaInfo {
    fn hits(&self) -> u32 {
        if self.set {
            self.hits
        } else {
            4
        }
    }
}

/// Which readahead policy is in force.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RaMode {
    /// Slot neighbours (`swap_cluster_readahead`).
    Cluster,
    /// Virtual-address neighbours (`swap_vma_readahead`).
    Vma,
}

/// The swap readahead knobs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SwapRaKnobs {
    /// `vm.page-cluster`: log2 of the largest swap readahead window.
    pub page_cluster: u32,
    /// `/sys/kernel/mm/swap/vma_ra_enabled`: VMA-based swap readahead (v4.14+).
    pub vma_ra_enabled: bool,
    /// `swap_ra`: force a readahead policy regardless of the kernel's rule (an experiment knob).
    pub forced: Option<RaMode>,
    /// `swap_ra_adaptive` (v3.15+): cluster readahead sizes its window by recent
    /// readahead hits (`swapin_nr_pages`); off: the whole `1 << page_cluster`
    /// block is read on every fault ("blind" readahead).
    pub adaptive: bool,
}

impl Default for SwapRaKnobs {
    /// The kernel's defaults: windows up to 8 pages, VMA readahead on.
    fn default() -> Self {
        SwapRaKnobs { page_cluster: 3, vma_ra_enabled: true, forced: None, adaptive: true }
    }
}

/// The swap readahead knobs' declarations.
pub const KNOBS: &[Knob<SwapRaKnobs>] = &[
    u64_knob!(
        "vm.page-cluster",
        page_cluster,
        0,
        31,
        History::Tunable { since: Version::new(2, 6) },
        "log2 of the largest swap readahead window, 0..31 (kernel default 3: 8 pages; 0 disables)"
    ),
    bool_knob!(
        "vma_ra_enabled",
        vma_ra_enabled,
        // KERNEL: VMA-based swap readahead and its sysfs file arrived in v4.14; before, cluster readahead only.
        History::Behaviour { since: Some(Version::new(4, 14)), until: None },
        "/sys/kernel/mm/swap/vma_ra_enabled: VMA-based swap readahead (seed 001, v4.14); rotational swap uses cluster readahead regardless"
    ),
    bool_knob!(
        "swap_ra_adaptive",
        adaptive,
        // KERNEL: 579f82901f6f "swap: add a simple detector for inappropriate swapin
        // readahead" (in -mm until January 2014, merged for v3.15): before it
        // swapin_readahead() read the whole aligned page_cluster block on every fault.
        History::Behaviour { since: Some(Version::new(3, 15)), until: None },
        "v3.15+: cluster swap readahead sizes its window by recent readahead hits (swapin_nr_pages); off (v3.14 and older): every swap fault reads the whole aligned 1 << vm.page-cluster block"
    ),
    Knob {
        key: "swap_ra",
        help: "swap readahead policy: kernel (the kernel's rule: vma_ra_enabled and not rotational), cluster, or vma (forced, e.g. VMA on an HDD)",
        kind: Kind::Choice,
        history: History::Model,
        get: |c| match c.forced {
            None => "kernel".into(),
            Some(RaMode::Cluster) => "cluster".into(),
            Some(RaMode::Vma) => "vma".into(),
        },
        set: |c, v| {
            c.forced = match v {
                "kernel" => None,
                "cluster" => Some(RaMode::Cluster),
                "vma" => Some(RaMode::Vma),
                _ => return Err("kernel, cluster or vma".into()),
            };
            Ok(())
        },
    },
];

/// The readahead state of the machine.
#[derive(Clone, Debug)]
pub struct SwapReadahead {
    /// `vm.page-cluster`: log2 of the largest window.
    pub page_cluster: u32,
    /// The policy in force: VMA only if enabled and the swap device is not rotational.
    pub mode: RaMode,
    /// Cluster windows follow [`swapin_nr_pages`] (v3.15+); off: always the whole block.
    adaptive: bool,
    /// `swapin_readahead_hits` (cluster mode), initially 4.
    hits: u32,
    /// `prev_offset`: slot of the last fault that found no hits.
    prev_offset: u32,
    /// `last_readahead_pages`.
    last_pages: u32,
    /// Per-region (VMA) state.
    vma: Vec<VmaRaInfo>,
}

impl SwapReadahead {
    /// Readahead with `page_cluster`; VMA mode iff `vma_ra_enabled` and the swap
    /// device is not rotational, unless `forced`.
    pub fn new(knobs: SwapRaKnobs, rotational: bool) -> SwapReadahead {
        let SwapRaKnobs { page_cluster, vma_ra_enabled, forced, adaptive } = knobs;
        let kernel = if vma_ra_enabled && !rotational { RaMode::Vma } else { RaMode::Cluster };
        let mode = forced.unwrap_or(kernel);
        SwapReadahead { page_cluster, mode, adaptive, hits: 4, prev_offset: 0, last_pages: 0, vma: Vec::new() }
    }

    /// `swap_cluster_readahead()`: the slots to read for a fault on `offset`, in
    /// slot order, the target included, on a device of `nr_slots` slots (slot 0 is
    /// the header). The caller skips unused slots and those already cached.
    /// Before v3.15 (`swap_ra_adaptive` off) the window is always the whole block.
    pub fn cluster_window(&mut self, offset: u32, nr_slots: u32) -> std::ops::RangeInclusive<u32> {
        let max_pages = 1u32 << self.page_cluster;
        if max_pages <= 1 {
            return offset..=offset;
        }
        let pages = if self.adaptive { self.adaptive_pages(offset, max_pages) } else { max_pages };
        let mask = pages - 1;
        if mask == 0 {
            return offset..=offset;
        }
        let start = (offset & !mask).max(1);
        let end = (offset | mask).min(nr_slots.saturating_sub(1));
        start..=end
    }

    /// `swapin_nr_pages()` for cluster readahead: the window from the hits since
    /// the last fault, updating the global state.
    fn adaptive_pages(&mut self, offset: u32, max_pages: u32) -> u32 {
        let hits = std::mem::take(&mut self.hits);
        let pages = swapin_nr_pages(self.prev_offset, offset, hits, max_pages, self.last_pages);
        if hits == 0 {
            self.prev_offset = offset;
        }
        self.last_pages = pages;
        pages
    }

    /// `swap_vma_readahead()`: the pages of `region` (of `region_pages` pages) to
    /// read for a fault on `page`, the target included. The caller keeps those
    /// whose PTE holds a swap entry.
    pub fn vma_window(&mut self, region: usize, page: u32, region_pages: u32) -> std::ops::Range<u32> {
        let max_win = 1u32 << self.page_cluster.min(VMA_WIN_SHIFT_MAX);
        if max_win <= 1 {
            return page..page + 1;
        }
        let info = self.info_mut(region);
        let (prev, prev_win) = (info.addr, info.win);
        let win = swapin_nr_pages(prev, page, info.hits(), max_win, prev_win);
        *info = VmaRaInfo { addr: page, win: win.min(HITS_MAX), hits: 0, set: true };
        if win == 1 {
            return page..page + 1;
        }
        let left = if page == prev.wrapping_add(1) {
            page as i64
        } else if prev == page.wrapping_add(1) {
            page as i64 - (win as i64 - 1)
        } else {
            page as i64 - ((win as i64 - 1) / 2)
        };
        let right = left + win as i64;
        let pmd_start = (page / PMD_PAGES * PMD_PAGES) as i64;
        let start = left.max(0).max(pmd_start) as u32;
        let end = right.min(region_pages as i64).min(pmd_start + PMD_PAGES as i64) as u32;
        start..end
    }

    /// Hit accounting on a swap fault that found its page in the swap cache
    /// (`swap_cache_get_folio`); `readahead` is the test-and-cleared `PG_readahead`.
    pub fn on_cache_hit(&mut self, region: usize, page: u32, readahead: bool) {
        match self.mode {
            RaMode::Vma => {
                let info = self.info_mut(region);
                let hits = if readahead { (info.hits() + 1).min(HITS_MAX) } else { info.hits() };
                *info = VmaRaInfo { addr: page, win: info.win, hits, set: true };
            }
            RaMode::Cluster => {
                if readahead {
                    self.hits += 1;
                }
            }
        }
    }

    fn info_mut(&mut self, region: usize) -> &mut VmaRaInfo {
        if self.vma.len() <= region {
            self.vma.resize(region + 1, VmaRaInfo::default());
        }
        &mut self.vma[region]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (prev, cur, hits, max, prev_win) -> pages, checked by hand against the rule.
    #[test]
    fn window_rule_table() {
        let cases = [
            ((10, 11, 0, 8, 0), 2),    // no hits, adjacent forward
            ((11, 10, 0, 8, 0), 2),    // no hits, adjacent backward
            ((10, 50, 0, 8, 0), 1),    // no hits, far apart
            ((10, 50, 1, 8, 0), 4),    // 3 -> 4
            ((10, 50, 2, 8, 0), 4),    // 4
            ((10, 50, 3, 8, 0), 8),    // 5 -> 8
            ((10, 50, 30, 8, 0), 8),   // capped at max
            ((10, 50, 0, 8, 8), 4),    // shrinks at most by half
            ((10, 50, 0, 8, 2), 1),    // 2 / 2 = 1
            ((10, 50, 4, 32, 0), 8),   // 6 -> 8
            ((10, 50, 14, 32, 0), 16), // 16
            ((10, 50, 1, 2, 0), 2),    // max below 4
        ];
        for ((prev, cur, hits, max, prev_win), want) in cases {
            assert_eq!(swapin_nr_pages(prev, cur, hits, max, prev_win), want, "{prev} {cur} {hits} {max} {prev_win}");
        }
    }

    #[test]
    fn cluster_window_aligned_block_skips_header() {
        let mut ra = SwapReadahead::new(
            SwapRaKnobs { page_cluster: 3, vma_ra_enabled: false, forced: None, adaptive: true },
            false,
        );
        // Initial hits 4: 6 -> 8 pages, block of 8 around slot 5 (header excluded).
        assert_eq!(ra.cluster_window(5, 100), 1..=7);
        // Hits now 0 and prev_offset untouched (0): slot 20 is not adjacent -> 1 page,
        // but the window shrinks at most by half: 8 / 2 = 4 -> block 20..=23.
        assert_eq!(ra.cluster_window(20, 100), 20..=23);
        assert_eq!(ra.cluster_window(21, 100), 20..=21); // adjacent: 2 pages, 4 / 2 = 2
                                                         // Clipped to the device end.
        ra.on_cache_hit(0, 0, true);
        ra.on_cache_hit(0, 0, true);
        ra.on_cache_hit(0, 0, true);
        assert_eq!(ra.cluster_window(97, 99), 96..=98);
        // page-cluster 0: target only.
        let mut ra = SwapReadahead::new(
            SwapRaKnobs { page_cluster: 0, vma_ra_enabled: false, forced: None, adaptive: true },
            false,
        );
        assert_eq!(ra.cluster_window(42, 100), 42..=42);
    }

    /// Before v3.15 every fault reads the whole aligned block, hits or not.
    #[test]
    fn blind_cluster_window_before_v3_15() {
        let knobs = SwapRaKnobs { page_cluster: 3, vma_ra_enabled: false, forced: None, adaptive: false };
        let mut ra = SwapReadahead::new(knobs, true);
        assert_eq!(ra.cluster_window(5, 100), 1..=7);
        assert_eq!(ra.cluster_window(20, 100), 16..=23);
        assert_eq!(ra.cluster_window(21, 100), 16..=23);
        assert_eq!(ra.cluster_window(97, 99), 96..=98);
    }

    #[test]
    fn vma_window_placement_and_clipping() {
        let mut ra = SwapReadahead::new(
            SwapRaKnobs { page_cluster: 3, vma_ra_enabled: true, forced: None, adaptive: true },
            false,
        );
        assert_eq!(ra.mode, RaMode::Vma);
        // First fault: 4 hits -> 8 pages, centred: left = 100 - 3.
        assert_eq!(ra.vma_window(0, 100, 1000), 97..105);
        // Two readahead hits, then a forward fault: 2 hits -> 4 pages from the address.
        ra.on_cache_hit(0, 104, true);
        ra.on_cache_hit(0, 105, true);
        assert_eq!(ra.vma_window(0, 106, 1000), 106..110);
        // Backward: previous fault one page above; no hits -> 2 pages ending at the address.
        assert_eq!(ra.vma_window(0, 105, 1000), 104..106);
        // Clipped to the PMD (512 pages) and to the region.
        let mut ra = SwapReadahead::new(
            SwapRaKnobs { page_cluster: 3, vma_ra_enabled: true, forced: None, adaptive: true },
            false,
        );
        assert_eq!(ra.vma_window(1, 513, 2000), 512..518);
        let mut ra = SwapReadahead::new(
            SwapRaKnobs { page_cluster: 3, vma_ra_enabled: true, forced: None, adaptive: true },
            false,
        );
        assert_eq!(ra.vma_window(2, 8, 10), 5..10);
        // Rotational swap: cluster readahead whatever the knob says.
        assert_eq!(
            SwapReadahead::new(
                SwapRaKnobs { page_cluster: 3, vma_ra_enabled: true, forced: None, adaptive: true },
                true
            )
            .mode,
            RaMode::Cluster
        );
        assert_eq!(
            SwapReadahead::new(
                SwapRaKnobs { page_cluster: 3, vma_ra_enabled: false, forced: Some(RaMode::Vma), adaptive: true },
                true
            )
            .mode,
            RaMode::Vma
        );
    }

    #[test]
    fn vma_hits_saturate_and_follow_the_address() {
        let mut ra = SwapReadahead::new(
            SwapRaKnobs { page_cluster: 3, vma_ra_enabled: true, forced: None, adaptive: true },
            false,
        );
        for i in 0..100 {
            ra.on_cache_hit(0, i, true);
        }
        assert_eq!(ra.vma[0], VmaRaInfo { addr: 99, win: 0, hits: HITS_MAX, set: true });
        ra.on_cache_hit(0, 7, false);
        assert_eq!(ra.vma[0].addr, 7);
        assert_eq!(ra.vma[0].hits, HITS_MAX);
    }
}
