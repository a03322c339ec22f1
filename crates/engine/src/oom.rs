//! The OOM killer's choices without the machine (mm/oom_kill.c, v6.12): the
//! `vm.panic_on_oom` knob, a process's badness and the victim selection.
//! The machine's side (who is a candidate, the kill, the OOM reaper) is in
//! the simulation (`sim::oom`).
//!
//! - [`oom_badness`]: the memory a process would free (resident pages it maps,
//!   its swap entries and its page-table pages) plus `oom_score_adj` in units
//!   of a thousandth of the memory the OOM is about (`totalpages / 1000`,
//!   integer division as in the kernel); `-1000` makes it unkillable.
//! - [`select_bad_process`]: the walk keeps the highest score, and a later
//!   process with an equal score replaces the one chosen (the kernel skips a
//!   task only when its score is below the chosen one's). The walk goes in
//!   process creation order, as `for_each_process()` and the memory group's
//!   task list do, so on a tie the youngest process is killed.

use knobs::{u64_knob, History, Knob, Version};

/// KERNEL: `OOM_SCORE_ADJ_MIN`: a process with this `oom_score_adj` is never killed.
pub const OOM_SCORE_ADJ_MIN: i16 = -1000;
/// KERNEL: `OOM_SCORE_ADJ_MAX`.
pub const OOM_SCORE_ADJ_MAX: i16 = 1000;

/// The OOM killer's sysctls.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OomKnobs {
    /// `vm.panic_on_oom`: 0 kill a process; 1 fail the run on a machine-wide
    /// OOM (a memory group's OOM still kills); 2 fail the run on any OOM.
    pub panic_on_oom: u8,
}

/// The OOM killer's knobs' declarations.
pub const KNOBS: &[Knob<OomKnobs>] = &[u64_knob!(
    "vm.panic_on_oom",
    panic_on_oom,
    0,
    2,
    History::Tunable { since: Version::new(2, 6) },
    "0: the OOM killer kills the process with the highest badness and the run goes on; 1: a machine-wide OOM fails the run (a memory cgroup's OOM still kills); 2: every OOM fails the run"
)];

impl OomKnobs {
    /// `check_panic_on_oom()`: does an OOM fail the run (the kernel panics)?
    /// `memcg` tells whether a memory group's limit constrains it.
    pub fn panics(&self, memcg: bool) -> bool {
        match self.panic_on_oom {
            0 => false,
            1 => !memcg,
            _ => true,
        }
    }
}

/// What a process holds, in pages, as its mm counters say.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MmUsage {
    /// `get_mm_rss()`: resident pages its page tables map (anon and file).
    pub rss: u64,
    /// `MM_SWAPENTS`: swap entries in its page tables.
    pub swapents: u64,
    /// `mm_pgtables_bytes() / PAGE_SIZE`: its page-table pages.
    pub pgtables: u64,
}

/// `oom_badness()`: the process's score against `totalpages` (RAM plus swap
/// for a machine-wide OOM, the group's limit plus its swap for a group's), or
/// `None` (the kernel's `LONG_MIN`) if it must not be killed.
pub fn oom_badness(usage: MmUsage, oom_score_adj: i16, totalpages: u64) -> Option<i64> {
    if oom_score_adj == OOM_SCORE_ADJ_MIN {
        return None;
    }
    let points = (usage.rss + usage.swapents + usage.pgtables) as i64;
    Some(points + oom_score_adj as i64 * (totalpages / 1000) as i64)
}

/// `select_bad_process()` over `scores` in walk order (an id and its
/// [`oom_badness`]): the id with the highest score, the last of equals; `None`
/// if every score is `None`.
pub fn select_bad_process<T>(scores: impl IntoIterator<Item = (T, Option<i64>)>) -> Option<T> {
    let mut chosen: Option<(T, i64)> = None;
    for (id, points) in scores {
        let Some(points) = points else { continue };
        if chosen.as_ref().is_none_or(|&(_, best)| points >= best) {
            chosen = Some((id, points));
        }
    }
    chosen.map(|(id, _)| id)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(rss: u64) -> MmUsage {
        MmUsage { rss, swapents: 10, pgtables: 2 }
    }

    #[test]
    fn badness_adds_the_adjustment_in_thousandths_of_totalpages() {
        assert_eq!(oom_badness(usage(100), 0, 123_456), Some(112));
        // 123_456 / 1000 = 123 (integer division): +500 adds 61_500.
        assert_eq!(oom_badness(usage(100), 500, 123_456), Some(112 + 61_500));
        assert_eq!(oom_badness(usage(100), -999, 123_456), Some(112 - 999 * 123));
        assert_eq!(oom_badness(usage(1 << 20), OOM_SCORE_ADJ_MIN, 123_456), None);
        // Under 1000 pages the adjustment counts for nothing.
        assert_eq!(oom_badness(usage(100), OOM_SCORE_ADJ_MAX, 999), Some(112));
    }

    #[test]
    fn selection_keeps_the_highest_and_the_last_of_equals() {
        assert_eq!(select_bad_process([("a", Some(5)), ("b", Some(9)), ("c", Some(3))]), Some("b"));
        assert_eq!(select_bad_process([("a", Some(9)), ("b", Some(9)), ("c", None)]), Some("b"));
        // A negative score is still a candidate; only `None` is not.
        assert_eq!(select_bad_process([("a", None), ("b", Some(-40))]), Some("b"));
        assert_eq!(select_bad_process::<&str>([("a", None)]), None);
    }

    #[test]
    fn panic_on_oom_spares_group_ooms_at_one() {
        let k = |v| OomKnobs { panic_on_oom: v };
        assert!(!k(0).panics(false) && !k(0).panics(true));
        assert!(k(1).panics(false) && !k(1).panics(true));
        assert!(k(2).panics(false) && k(2).panics(true));
    }
}
