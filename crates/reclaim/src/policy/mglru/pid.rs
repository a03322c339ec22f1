//! The PID controller: refault feedback between types and tiers.
//!
//! Per type and tier the eviction counts pages evicted, pages protected (kept
//! by `sort_folio` because their tier was above the threshold) and refaults of
//! recently evicted pages. Each time `min_seq` advances, the counts are folded
//! into running averages (`avg = (avg + new) / 2`). Decisions compare refault
//! *ratios* of a set point (SP) and a process variable (PV), weighted by gains:
//! PV is "no worse" than SP if it has few refaults or
//! `pv.refaulted * (sp.total + 64) * sp.gain <= (sp.refaulted + 1) * pv.total * pv.gain`.
//!
//! Simplification: `NR_HIST_GENS` is 1 (the kernel's value without
//! `CONFIG_LRU_GEN_STATS`), so the current counts are cleared at each fold.

use super::gens::{ANON, FILE, MAX_NR_TIERS, MIN_LRU_BATCH};

/// KERNEL: `MAX_SWAPPINESS`.
pub const MAX_SWAPPINESS: u32 = 200;

/// One side of a comparison (`struct ctrl_pos`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CtrlPos {
    /// Refaults (average plus current).
    pub refaulted: u64,
    /// Evicted plus protected (average plus current).
    pub total: u64,
    /// Gain.
    pub gain: u64,
}

/// `positive_ctrl_err()`: PV's weighted refault ratio does not exceed SP's.
pub fn positive_ctrl_err(sp: CtrlPos, pv: CtrlPos) -> bool {
    pv.refaulted < MIN_LRU_BATCH
        || pv.refaulted * (sp.total + MIN_LRU_BATCH) * sp.gain <= (sp.refaulted + 1) * pv.total * pv.gain
}

/// Refault statistics per type and tier.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pid {
    /// `avg_refaulted[type][tier]`.
    pub avg_refaulted: [[u64; MAX_NR_TIERS]; 2],
    /// `avg_total[type][tier]`.
    pub avg_total: [[u64; MAX_NR_TIERS]; 2],
    /// `refaulted[type][tier]` since the last fold.
    pub refaulted: [[u64; MAX_NR_TIERS]; 2],
    /// `evicted[type][tier]` since the last fold.
    pub evicted: [[u64; MAX_NR_TIERS]; 2],
    /// `protected[type][tier]` since the last fold (v6.1 stores tier t at t - 1; same meaning).
    pub protected: [[u64; MAX_NR_TIERS]; 2],
}

/// Selects every tier in [`Pid::ctrl_pos`].
pub const ALL_TIERS: usize = MAX_NR_TIERS;

impl Pid {
    /// `read_ctrl_pos()`: one tier, or all of them with [`ALL_TIERS`].
    pub fn ctrl_pos(&self, ty: usize, tier: usize, gain: u64) -> CtrlPos {
        let tiers = if tier == ALL_TIERS { 0..MAX_NR_TIERS } else { tier..tier + 1 };
        let mut pos = CtrlPos { refaulted: 0, total: 0, gain };
        for t in tiers {
            pos.refaulted += self.avg_refaulted[ty][t] + self.refaulted[ty][t];
            pos.total += self.avg_total[ty][t] + self.protected[ty][t] + self.evicted[ty][t];
        }
        pos
    }

    /// `reset_ctrl_pos(type, carryover = true)`: fold the current counts into the averages.
    pub fn fold(&mut self, ty: usize) {
        for t in 0..MAX_NR_TIERS {
            self.avg_refaulted[ty][t] = (self.avg_refaulted[ty][t] + self.refaulted[ty][t]) / 2;
            self.avg_total[ty][t] = (self.avg_total[ty][t] + self.evicted[ty][t] + self.protected[ty][t]) / 2;
            self.refaulted[ty][t] = 0;
            self.evicted[ty][t] = 0;
            self.protected[ty][t] = 0;
        }
    }

    /// `get_tier_idx()`: the highest tier still evicted; tiers above it are protected.
    /// SP is tier 0 of the same type; gains 1:2 (v6.1) or 2:3 (v6.14).
    pub fn tier_idx(&self, ty: usize, rework: bool) -> usize {
        let (sp_gain, pv_gain) = if rework { (2, 3) } else { (1, 2) };
        let sp = self.ctrl_pos(ty, 0, sp_gain);
        let mut tier = 1;
        while tier < MAX_NR_TIERS {
            if !positive_ctrl_err(sp, self.ctrl_pos(ty, tier, pv_gain)) {
                break;
            }
            tier += 1;
        }
        tier - 1
    }

    /// v6.1 `get_type_to_scan()`: compare tier 0 of anon (gain swappiness) with
    /// tier 0 of file (gain 200 - swappiness); then find the tier threshold of the
    /// chosen type against tier 0 of the other. Returns `(type, tier_idx)`.
    pub fn type_to_scan_v61(&self, swappiness: u32) -> (usize, usize) {
        let gain = [swappiness as u64, (MAX_SWAPPINESS - swappiness) as u64];
        let sp = self.ctrl_pos(ANON, 0, gain[ANON]);
        let pv = self.ctrl_pos(FILE, 0, gain[FILE]);
        let ty = positive_ctrl_err(sp, pv) as usize;
        let sp = self.ctrl_pos(1 - ty, 0, gain[1 - ty]);
        let mut tier = 1;
        while tier < MAX_NR_TIERS {
            if !positive_ctrl_err(sp, self.ctrl_pos(ty, tier, gain[ty])) {
                break;
            }
            tier += 1;
        }
        (ty, tier - 1)
    }

    /// v6.14 `get_type_to_scan()`: all tiers of anon against all tiers of file.
    pub fn type_to_scan_v614(&self, swappiness: u32) -> usize {
        if swappiness <= 1 {
            return FILE;
        }
        if swappiness >= MAX_SWAPPINESS {
            return ANON;
        }
        let sp = self.ctrl_pos(ANON, ALL_TIERS, swappiness as u64);
        let pv = self.ctrl_pos(FILE, ALL_TIERS, (MAX_SWAPPINESS - swappiness) as u64);
        positive_ctrl_err(sp, pv) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ctrl_err_by_hand() {
        // PV with fewer than 64 refaults is always acceptable.
        let sp = CtrlPos { refaulted: 1000, total: 1000, gain: 1 };
        assert!(positive_ctrl_err(sp, CtrlPos { refaulted: 63, total: 64, gain: 1 }));
        // SP: 100 refaults of 1000; PV: 200 of 1000, gain 2 vs 1.
        // 200 * (1000 + 64) * 1 = 212800 <= (100 + 1) * 1000 * 2 = 202000? no.
        let sp = CtrlPos { refaulted: 100, total: 1000, gain: 1 };
        assert!(!positive_ctrl_err(sp, CtrlPos { refaulted: 200, total: 1000, gain: 2 }));
        // PV 190 of 1000: 190 * 1064 = 202160 > 202000: still no; 189: 201096 <= 202000: yes.
        assert!(!positive_ctrl_err(sp, CtrlPos { refaulted: 190, total: 1000, gain: 2 }));
        assert!(positive_ctrl_err(sp, CtrlPos { refaulted: 189, total: 1000, gain: 2 }));
    }

    #[test]
    fn tier_threshold_hand_computed() {
        // File type: tier 0 refaults 100 of 1000 evicted; tier 1: 100 of 300;
        // tier 2: 64 of 2000. v6.1 gains 1:2.
        // tier 1: 100 * (1000 + 64) * 1 = 106400 <= 101 * 300 * 2 = 60600? no -> stop, idx 0.
        let mut p = Pid::default();
        p.evicted[FILE][0] = 1000;
        p.refaulted[FILE][0] = 100;
        p.evicted[FILE][1] = 300;
        p.refaulted[FILE][1] = 100;
        assert_eq!(p.tier_idx(FILE, false), 0);
        // Make tier 1 cheaper: 100 of 600 -> 106400 <= 101 * 600 * 2 = 121200 yes;
        // tier 2 has 64 refaults of 2000: 64 * 1064 = 68096 <= 101 * 2000 * 2 yes;
        // tier 3 has nothing: refaulted 0 < 64 -> yes. All pass: idx 3.
        p.evicted[FILE][1] = 600;
        p.evicted[FILE][2] = 2000;
        p.refaulted[FILE][2] = 64;
        assert_eq!(p.tier_idx(FILE, false), 3);
        // v6.14 gains 2:3: tier 1: 100 * 1064 * 2 = 212800 <= 101 * 600 * 3 = 181800? no -> idx 0.
        assert_eq!(p.tier_idx(FILE, true), 0);
    }

    #[test]
    fn fold_halves_into_averages() {
        let mut p = Pid::default();
        p.avg_refaulted[ANON][2] = 10;
        p.avg_total[ANON][2] = 30;
        p.refaulted[ANON][2] = 6;
        p.evicted[ANON][2] = 20;
        p.protected[ANON][2] = 4;
        p.fold(ANON);
        assert_eq!((p.avg_refaulted[ANON][2], p.avg_total[ANON][2]), (8, 27));
        assert_eq!((p.refaulted[ANON][2], p.evicted[ANON][2], p.protected[ANON][2]), (0, 0, 0));
    }

    #[test]
    fn type_selection_extremes_v614() {
        let mut p = Pid::default();
        p.refaulted[FILE][0] = 1_000_000;
        p.evicted[FILE][0] = 1_000_000;
        assert_eq!(p.type_to_scan_v614(0), FILE);
        assert_eq!(p.type_to_scan_v614(1), FILE);
        assert_eq!(p.type_to_scan_v614(200), ANON);
        // In between, file's refault ratio is far worse: scan anon.
        assert_eq!(p.type_to_scan_v614(100), ANON);
    }
}
