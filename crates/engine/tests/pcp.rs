//! Per-CPU page lists in the allocator: refills take pages out of the free
//! count the watermarks read, so an allocation meets the min watermark with
//! frames still free on a list, and direct reclaim's retry drains the lists
//! (`drain_all_pages`) before it gives up on the freelist.

use engine::{Access, Sim};
use mm::{RegionId, VmEvent};

/// 1000 pages (4000K), min watermark 32 pages (128K), one CPU, anonymous
/// pages written one by one; returns the machine and the first page whose
/// fault entered direct reclaim.
fn fill_until_direct_reclaim(settings: &[(&str, &str)]) -> (Sim, RegionId, u32) {
    // The swap cache's tree nodes (v6.3..v6.17) would take slab pages beside the
    // lists as pages are swapped out: off, to keep the hand count below.
    let base = [
        ("memory", "4000K"),
        ("swap", "ssd:40M"),
        ("vm.min_free_kbytes", "128"),
        ("cpus", "1"),
        ("swap_cache_shadow_nodes", "0"),
    ];
    let mut b = testkit::builder("v5.10", &[&base[..], settings].concat());
    let region = b.add_anon_region(2000);
    let mut sim = b.build();
    let mut page = 0;
    loop {
        sim.access_now(Access::Mem { region, page, write: true }).unwrap();
        if sim.mm().stat.get(VmEvent::AllocstallNormal) > 0 {
            return (sim, region, page);
        }
        page += 1;
    }
}

/// Without lists the 969th page (index 968) is the first below min: 1000 -
/// 968 = 32. With `vm.percpu_pagelist_fraction=8` (v5.10: high 1000 / 8 =
/// 125, batch 125 / 4 = 31) the list is refilled 31 pages at a time: before
/// the 962nd page (index 961) 31 refills have given 961 pages and the zone
/// holds 39 > 32, so it passes and refills again (8 left); the 963rd (index
/// 962) meets 8 <= 32 with 30 pages on the list and reclaims. The pages
/// direct reclaim frees go to the same list (30 + freed < 125: none reach the
/// zone), so the freelist try fails and `drain_all_pages` returns them all.
#[test]
fn refills_hide_pages_from_the_watermark_and_direct_reclaim_drains_them() {
    let (sim, _, page) = fill_until_direct_reclaim(&[("pcp", "off")]);
    assert_eq!(page, 968);
    assert_eq!(sim.mm().frames.pcp.stat, Default::default());

    let (sim, _, page) = fill_until_direct_reclaim(&[("pcp", "batch"), ("vm.percpu_pagelist_fraction", "8")]);
    assert_eq!(page, 962);
    let mm = sim.mm();
    assert_eq!(mm.frames.pcp.sizes(0), Some((125, 125, 31)));
    let freed = mm.stat.get(VmEvent::PgstealDirect);
    assert!(freed >= 32, "direct reclaim freed {freed}");
    // 32 refills before reclaim, the drain of 30 + freed, one refill after it.
    assert_eq!((mm.frames.pcp.stat.refills, mm.frames.pcp.stat.refilled), (33, 33 * 31));
    assert_eq!((mm.frames.pcp.stat.drains, mm.frames.pcp.stat.drained), (1, 30 + freed));
    assert_eq!(mm.frames.pcp.held(0), 30);
    assert_eq!(mm.nr_free() + 30, mm.nr_free_frames());
    sim.check_invariants();
}

/// `pcp=off` and the profiles' forms: v5.10 batch, v6.1 lowmark, v6.12 tuned;
/// a fraction of the wrong generation is refused, naming the key.
#[test]
fn profiles_pick_the_generation_and_fractions_are_checked() {
    for (profile, form) in [("v5.10", "batch"), ("v6.1-classic", "lowmark"), ("v6.12-mglru", "tuned")] {
        let c = testkit::config(profile, &[]);
        assert_eq!(c.pcp.form.name(), form, "{profile}");
    }
    let mut c = testkit::config("v6.12-classic", &[]);
    c.set("vm.percpu_pagelist_fraction", "8").unwrap();
    let e = c.validate().unwrap_err().to_string();
    assert!(e.contains("vm.percpu_pagelist_fraction=8 needs pcp=batch"), "{e}");
    let e = c.set("vm.percpu_pagelist_high_fraction", "4").unwrap_err().to_string();
    assert!(e.contains("or an integer >= 8"), "{e}");
}
