//! v4.20..v5.9 `__read_swap_cache_async()` marks every page it reads into the
//! swap cache `PG_workingset` (`swapin_workingset`); the synchronous-device path
//! of `do_swap_page()`, which skips the swap cache, does not. Later kernels do
//! not mark swap-ins at all.

use engine::{Access, Config, SimBuilder};
use mm::{PageFlags, RegionId, VmEvent};

/// Writes 3000 pages once into 4000K of memory (each page starts inactive,
/// is never referenced again and is evicted without `PG_workingset`), then
/// reads back the swapped-out pages among the first 200. Returns, per swap-in,
/// whether the page carries `PG_workingset`, and the restores counted.
fn swap_in_workingset(profile: &str, swap: &str) -> (Vec<bool>, u64) {
    let mut c = Config::for_profile(profile).unwrap();
    for (k, v) in [("memory", "4000K"), ("swap", swap), ("vm.min_free_kbytes", "1"), ("vm.watermark_scale_factor", "1")] {
        c.set(k, v).unwrap();
    }
    let mut b = SimBuilder::new(c).unwrap();
    let r: RegionId = b.add_anon_region(3000);
    let mut sim = b.build();
    for page in 0..3000 {
        sim.access_now(Access::Mem { region: r, page, write: true }).unwrap();
    }
    let mut marks = Vec::new();
    for page in 0..200 {
        if sim.mm().regions[r.0 as usize].ptes[page as usize].swap_slot().is_none() {
            continue;
        }
        sim.access_now(Access::Mem { region: r, page, write: false }).unwrap();
        let pfn = sim.mm().regions[r.0 as usize].ptes[page as usize].pfn().unwrap();
        marks.push(sim.mm().frames[pfn].flags.has(PageFlags::WORKINGSET));
    }
    sim.check_invariants();
    (marks, sim.mm().stat.get(VmEvent::WorkingsetRestoreAnon))
}

#[test]
fn v5_9_marks_swap_cache_reads_workingset() {
    let (marks, restores) = swap_in_workingset("v5.9", "nvme:40M");
    assert!(marks.len() > 150, "{} swap-ins", marks.len());
    assert!(marks.iter().all(|&m| m), "a page read through the swap cache lacks PG_workingset");
    // The evicted pages were never active: their shadows restore nothing.
    assert_eq!(restores, 0);
}

#[test]
fn the_synchronous_bypass_and_later_kernels_do_not_mark_swap_ins() {
    for (profile, swap) in [("v5.9", "pmem:40M"), ("v6.2", "nvme:40M")] {
        let (marks, restores) = swap_in_workingset(profile, swap);
        assert!(marks.len() > 150, "{profile} {swap}: {} swap-ins", marks.len());
        assert!(marks.iter().all(|&m| !m), "{profile} {swap}: a swap-in carries PG_workingset");
        assert_eq!(restores, 0, "{profile} {swap}");
    }
}
