//! How much of each list one pass scans: `prepare_scan_control()` and
//! `get_scan_count()` (mm/vmscan.c) over the classic lists; the SCAN_FRACT
//! weights come from the cost model (`cost.rs`).

use super::{Classic, AA, AF, ANON, FILE, IA, IF};
use crate::control::ScanControl;
use mm::{Mm, Watermark};

/// How `get_scan_count` splits the pressure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanBalance {
    /// Both types in proportion to size (priority 0).
    Equal,
    /// By `fraction / denominator`.
    Fract,
    /// Anon only.
    Anon,
    /// File only.
    File,
}

/// The scan decision of one `get_scan_count` call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScanCount {
    /// Which rule decided.
    pub balance: ScanBalance,
    /// `fraction[anon, file]` (meaningful for [`ScanBalance::Fract`]).
    pub fraction: [u64; 2],
    /// `denominator`.
    pub denominator: u64,
    /// Pages to scan per list: inactive anon, active anon, inactive file, active file.
    pub nr: [u64; 4],
}

/// Per-pass decisions of `prepare_scan_control`.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct PassControl {
    pub(super) anon_cost: u64,
    pub(super) file_cost: u64,
    pub(super) may_deactivate: [bool; 2],
    pub(super) cache_trim_mode: bool,
    pub(super) file_is_tiny: bool,
}

impl Classic {
    /// `prepare_scan_control()` for the one lruvec: costs, deactivation permissions, cache-trim mode.
    pub fn prepare_scan_control(&mut self, mm: &Mm, sc: &ScanControl) {
        let activations = self.stat_activations(mm);
        let mut may_deactivate = [true; 2];
        if !sc.force_deactivate {
            for ty in [ANON, FILE] {
                // New activations since the last cycle mean a new workingset is
                // forming: let the stale active pages go.
                let refaulting = self.cfg.refaults_deactivate && activations[ty] != self.refaults_snapshot[ty];
                may_deactivate[ty] = refaulting || self.inactive_is_low(ty);
            }
        }
        let cache_trim_mode = (self.stat_len(IF) >> sc.priority) != 0 && !may_deactivate[FILE];
        let file = self.len(IF) + self.len(AF);
        // Per-zone lists (before v4.8) weigh the zone's own free pages against its own high watermark.
        let (free, total_high) = match sc.zone {
            Some(z) => (mm.zone_free(z), mm.zones[z].wmark(Watermark::High)),
            None => (mm.nr_free(), mm.zones.iter().map(|z| z.wmark(Watermark::High)).sum()),
        };
        // Only global reclaim checks for a tiny file LRU; from v4.12 only while
        // inactive anon is healthy enough to take all the scanning.
        let anon_can_take_it = !may_deactivate[ANON] && (self.len(IA) >> sc.priority) != 0;
        let file_is_tiny = !sc.reclaimer.is_cgroup()
            && file + free <= total_high
            && (anon_can_take_it || !self.cfg.tiny_file_needs_anon);
        let (anon_cost, file_cost) = self.cost.costs();
        self.pass = PassControl { anon_cost, file_cost, may_deactivate, cache_trim_mode, file_is_tiny };
    }

    /// `get_scan_count()`: how many pages of each list to scan at `sc.priority`.
    pub fn get_scan_count(&mut self, mm: &Mm, sc: &ScanControl) -> ScanCount {
        let swappiness = sc.proactive_swappiness.unwrap_or(self.cfg.swappiness) as u64;
        let balance = if !sc.may_swap || mm.nr_swap_pages() == 0 {
            ScanBalance::File
        } else if sc.reclaimer.is_cgroup() && swappiness == 0 {
            // A group with swappiness 0 never swaps under its own limit.
            ScanBalance::File
        } else if sc.priority == 0 && swappiness != 0 {
            ScanBalance::Equal
        } else if self.pass.file_is_tiny {
            ScanBalance::Anon
        } else if self.pass.cache_trim_mode {
            ScanBalance::File
        } else {
            ScanBalance::Fract
        };
        let (fraction, denominator) =
            if balance == ScanBalance::Fract { self.fractions(swappiness) } else { ([0, 0], 0) };
        let mut nr = [0u64; 4];
        for (lru, slot) in nr.iter_mut().enumerate() {
            let ty = lru / 2;
            let lru_size =
                if self.cfg.scan_eligible_zones { self.eligible_len(lru, sc.reclaim_idx) } else { self.len(lru) };
            let size = crate::eligible::node_share(mm, sc, lru_size);
            let scan = crate::tree::protected_scan(mm, sc, size) >> sc.priority;
            *slot = match balance {
                ScanBalance::Equal => scan,
                ScanBalance::Fract if self.cost.rounds_up() => {
                    // Before v5.8 the division rounded up.
                    (scan * fraction[ty]).div_ceil(denominator)
                }
                ScanBalance::Fract => scan * fraction[ty] / denominator,
                ScanBalance::File => scan * (ty == FILE) as u64,
                ScanBalance::Anon => scan * (ty == ANON) as u64,
            };
        }
        ScanCount { balance, fraction, denominator, nr }
    }

    /// The SCAN_FRACT weights `(fraction, denominator)` of the profile's balance form.
    fn fractions(&mut self, swappiness: u64) -> ([u64; 2], u64) {
        let sizes = [self.len(IA) + self.len(AA), self.len(IF) + self.len(AF)];
        self.cost.fractions(swappiness, (self.pass.anon_cost, self.pass.file_cost), sizes)
    }
}
