//! Swap-in state right after the fault.
//!
//! Before v5.9, `do_swap_page()` called `activate_page()` on the page it had just
//! read; on a synchronous swap device that page was added to the CPU's LRU add
//! batch a moment before and is listed only if its add filled the batch (15
//! pages) — otherwise `activate_page()` skips it (no `PG_lru`) and it stays inactive.
//! Direct reclaim drains the batch before it scans.
//!
//! v4.20..v5.9 `__read_swap_cache_async()` marks every page it reads into the
//! swap cache `PG_workingset` (`swapin_workingset`); the synchronous-device path
//! of `do_swap_page()`, which skips the swap cache, does not. Later kernels do
//! not mark swap-ins at all.

use engine::{Access, Sim};
use mm::{PageFlags, RegionId, VmEvent};

/// Writes 3000 pages once into 4000K of memory under `profile` with swap
/// device `swap`: each page starts inactive (v5.9+), is never referenced again
/// and most are swapped out.
fn swapped_out(profile: &str, swap: &str) -> (Sim, RegionId) {
    let mut b = testkit::builder(
        profile,
        &[("memory", "4000K"), ("swap", swap), ("vm.min_free_kbytes", "1"), ("vm.watermark_scale_factor", "1")],
    );
    let r: RegionId = b.add_anon_region(3000);
    let mut sim = b.build();
    testkit::touch(&mut sim, r, 0..3000, true);
    (sim, r)
}

/// Swaps a region out, reads it back page by page and returns, per swap-in,
/// whether the page was active right after its fault, and whether direct
/// reclaim ran inside that fault.
fn swap_in_states(profile: &str) -> Vec<(bool, bool)> {
    let (mut sim, r) = swapped_out(profile, "pmem:40M");
    let mut states = Vec::new();
    for page in 0..1000 {
        if sim.mm().regions[r.0 as usize].ptes[page as usize].swap_slot().is_none() {
            continue;
        }
        let stalls = sim.mm().stat.get(VmEvent::AllocstallNormal);
        sim.access_now(Access::Mem { region: r, page, write: false }).unwrap();
        let pfn = testkit::pfn(&sim, r, page).unwrap();
        let active = sim.mm().frames[pfn].flags.has(PageFlags::ACTIVE);
        states.push((active, sim.mm().stat.get(VmEvent::AllocstallNormal) > stalls));
    }
    sim.check_invariants();
    states
}

#[test]
fn v5_7_activates_a_swap_in_only_when_its_add_fills_the_batch() {
    let states = swap_in_states("v5.7");
    assert!(states.len() > 900, "{} swap-ins", states.len());
    // Replay the batch from the first direct reclaim (which drains it; before
    // that, the fill left by the region's first writes is unknown).
    let first = states.iter().position(|s| s.1).expect("direct reclaim ran during the swap-ins");
    let mut fill = 0;
    let mut activated = 0;
    for (i, &(active, reclaimed)) in states.iter().enumerate().skip(first) {
        if reclaimed {
            fill = 0;
        }
        fill += 1;
        let listed = fill == 15;
        if listed {
            fill = 0;
            activated += 1;
        }
        assert_eq!(active, listed, "swap-in {i}: active {active}, batch fill would list it: {listed}");
    }
    assert!(activated > 0 && activated < states.len() / 10, "{activated} of {}", states.len());
}

#[test]
fn v5_9_never_activates_at_swap_in() {
    for profile in ["v5.9-prot", "v5.9"] {
        let states = swap_in_states(profile);
        assert!(states.len() > 900, "{profile}: {} swap-ins", states.len());
        assert!(states.iter().all(|s| !s.0), "{profile}: a swapped-in page started active");
    }
}

/// Reads back the swapped-out pages among the first 200 of [`swapped_out`].
/// Returns, per swap-in, whether the page carries `PG_workingset`, and the
/// restores counted.
fn swap_in_workingset(profile: &str, swap: &str) -> (Vec<bool>, u64) {
    let (mut sim, r) = swapped_out(profile, swap);
    let mut marks = Vec::new();
    for page in 0..200 {
        if sim.mm().regions[r.0 as usize].ptes[page as usize].swap_slot().is_none() {
            continue;
        }
        sim.access_now(Access::Mem { region: r, page, write: false }).unwrap();
        let pfn = testkit::pfn(&sim, r, page).unwrap();
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
