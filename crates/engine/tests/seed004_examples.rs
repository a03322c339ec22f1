//! The worked examples of seed 004 (Joonsoo Kim, "workingset protection/detection
//! on the anonymous LRU list"), scaled by 10 (a 1000-page machine, 500 hot pages) so that reclaim's
//! batches of 32 are small against the lists, driven access by access.
//! See: ../shared/seeds/004_a841e08f5a92fb28.txt and issue #2.
//!
//! Scenario conventions: "hot" pages were referenced before reclaim last looked
//! at them and not since, so their accessed bits are clear when the used-once
//! pages arrive. Swap is pmem (synchronous like the seed's zram, so reclaimed
//! pages are freed in the same pass, but with no compressed pool taking memory:
//! with memory full and zero watermarks zram's pool could not grow).
//! Watermarks are zero: reclaim runs only when memory is full.

use engine::{Sim, SimBuilder};
use mm::RegionId;
use testkit::{age, resident, stat, touch};

fn machine(profile: &str) -> SimBuilder {
    testkit::builder(
        profile,
        &[("memory", "4000K"), ("swap", "pmem:40M"), ("vm.min_free_kbytes", "1"), ("vm.watermark_scale_factor", "1")],
    )
}

/// Regions of the examples: hot (50 pages), filler (100) and used-once (100).
struct Regions {
    hot: RegionId,
    filler: RegionId,
    uo: RegionId,
}

/// Builds the examples' starting state under `profile`: 50 hot pages on the
/// active list, idle since reclaim last looked, and memory full.
///
/// The hot pages are made active the same way under every profile: touched
/// twice through `get_user_pages(FOLL_TOUCH)`, which marks them accessed.
fn hot_on_active(profile: &str) -> (Sim, Regions) {
    let mut b = machine(profile);
    let rg = Regions { hot: b.add_anon_region(500), filler: b.add_anon_region(5000), uo: b.add_anon_region(1000) };
    let mut sim = b.build();
    touch(&mut sim, rg.hot, 0..500, true);
    for _ in 0..2 {
        for page in 0..500 {
            assert!(sim.gup_touch(rg.hot, page));
        }
    }
    let active = (0..500)
        .filter(|&p| {
            let pfn = testkit::pfn(&sim, rg.hot, p);
            pfn.is_some_and(|pfn| sim.mm().frames[pfn].flags.has(mm::PageFlags::ACTIVE))
        })
        .count();
    assert_eq!(active, 500, "{profile}: setup must leave all hot pages active");
    age(&mut sim, rg.hot);
    (sim, rg)
}

/// Example 1 steps 2 and 3: 100 newly created, used-once pages.
fn used_once(sim: &mut Sim, rg: &Regions) {
    touch(sim, rg.uo, 0..1000, true);
}

#[test]
fn example1_old_rule_swaps_out_hot_pages() {
    let (mut sim, rg) = hot_on_active("v5.7");
    let before = stat(&sim, mm::VmEvent::Pswpout);
    used_once(&mut sim, &rg);
    assert_eq!(resident(&sim, rg.hot, 0..500), 0, "v5.7: new anon pages start active and push the idle hot pages out");
    assert_eq!(
        resident(&sim, rg.uo, 0..1000),
        966,
        "direct reclaim frees in batches of at least 32: some frames stay free"
    );
    assert!(stat(&sim, mm::VmEvent::Pswpout) - before >= 500);
    sim.check_invariants();
}

#[test]
fn example1_new_rule_protects_hot_pages() {
    for profile in ["v5.9-prot", "v5.9"] {
        let (mut sim, rg) = hot_on_active(profile);
        used_once(&mut sim, &rg);
        // Seed: "50(h) | 50(uo), swap-out 50(uo)". Ours: the used-once pages are
        // the ones swapped out; 20 hot pages are lost to the 1:1 rebalancing
        // that deactivates 32 active pages whenever inactive < active.
        assert_eq!(
            resident(&sim, rg.hot, 0..500),
            480,
            "{profile}: used-once pages start inactive; the hot pages stay"
        );
        assert_eq!(resident(&sim, rg.uo, 0..1000), 500, "{profile}");
        sim.check_invariants();
    }
}

/// Example 2: 500 will-be-hot pages whose re-access interval (500 new pages)
/// equals the inactive list. Returns swap-ins per round.
fn will_be_hot_rounds(profile: &str, rounds: u32) -> (Vec<u64>, Sim) {
    let (mut sim, rg) = hot_on_active(profile);
    // 2. 500 new pages that will be hot.
    let wh = rg.uo;
    touch(&mut sim, wh, 0..500, true);
    let mut per_round = Vec::new();
    for round in 0..rounds {
        // 3./5. another 500 newly created, used-once pages (fresh each round).
        touch(&mut sim, rg.filler, round * 500..(round + 1) * 500, true);
        age(&mut sim, rg.filler);
        // 4. the will-be-hot pages are accessed again.
        let before = stat(&sim, mm::VmEvent::Pswpin);
        touch(&mut sim, wh, 0..500, false);
        per_round.push(stat(&sim, mm::VmEvent::Pswpin) - before);
        age(&mut sim, rg.hot);
    }
    (per_round, sim)
}

/// Without anon detection no refault is even seen; with it every swap-in is a
/// recognised refault. At the example's exact proportions the refault distance
/// (500 evictions of will-be-hot pages, plus reclaim's overshoot past its batch
/// of 32) exceeds the anon workingset size (active anon, at most the 500 hot
/// pages), so the inequality `distance <= workingset size` fails and the pages
/// are not promoted: the model thrashes here, as the kernel's formula implies.
#[test]
fn example2_refaults_are_detected_only_with_detection() {
    let (prot, prot_sim) = will_be_hot_rounds("v5.9-prot", 4);
    let (detect, detect_sim) = will_be_hot_rounds("v5.9", 4);
    assert_eq!(prot, vec![500; 4]);
    assert_eq!(detect, vec![500; 4]);
    assert_eq!(stat(&prot_sim, mm::VmEvent::WorkingsetRefaultAnon), 0);
    assert_eq!(stat(&detect_sim, mm::VmEvent::WorkingsetRefaultAnon), 2000);
    assert_eq!(stat(&detect_sim, mm::VmEvent::WorkingsetActivateAnon), 0);
}
