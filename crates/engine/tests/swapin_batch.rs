//! Before v5.9, `do_swap_page()` called `activate_page()` on the page it had just
//! read; on a synchronous swap device that page was added to the CPU's LRU add
//! batch a moment before and is listed only if its add filled the batch (15
//! pages) — otherwise `activate_page()` skips it (no `PG_lru`) and it stays inactive.
//! Direct reclaim drains the batch before it scans.

use engine::{Access, Config, SimBuilder};
use mm::{PageFlags, RegionId, VmEvent};

/// Swaps a region out, reads it back page by page and returns, per swap-in,
/// whether the page was active right after its fault, and whether direct
/// reclaim ran inside that fault.
fn swap_in_states(profile: &str) -> Vec<(bool, bool)> {
    let mut c = Config::for_profile(profile).unwrap();
    for (k, v) in [("memory", "4000K"), ("swap", "pmem:40M"), ("vm.min_free_kbytes", "1"), ("vm.watermark_scale_factor", "1")] {
        c.set(k, v).unwrap();
    }
    let mut b = SimBuilder::new(c).unwrap();
    let r: RegionId = b.add_anon_region(3000);
    let mut sim = b.build();
    for page in 0..3000 {
        sim.access_now(Access::Mem { region: r, page, write: true }).unwrap();
    }
    let mut states = Vec::new();
    for page in 0..1000 {
        if sim.mm().regions[r.0 as usize].ptes[page as usize].swap_slot().is_none() {
            continue;
        }
        let stalls = sim.mm().stat.get(VmEvent::AllocstallNormal);
        sim.access_now(Access::Mem { region: r, page, write: false }).unwrap();
        let pfn = sim.mm().regions[r.0 as usize].ptes[page as usize].pfn().unwrap();
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
