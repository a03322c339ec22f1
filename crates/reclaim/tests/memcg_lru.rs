//! MGLRU's per-node memcg LRU under global reclaim (`reclaim::memcg_lru`,
//! issue #21): the order groups are shrunk in across direct reclaim calls,
//! their scans and steals, `memory.low` as each kernel version reads it, and
//! no starvation.

use mm::{CacheEntry, CgId, Mm, Owner, VmEvent, ZoneId};
use proptest::prelude::*;
use reclaim::direct::{try_to_free_pages, Untimed};
use reclaim::memcg_lru::MemcgLruForm;
use reclaim::pageout::PageoutEnv;
use reclaim::policy::mglru::Mglru;
use reclaim::policy::{Origin, ReclaimPolicy};
use reclaim::tree::TreePolicy;
use reclaim::{LruGenConfig, ReclaimConfig, Reclaimer, ScanControl};

const ENV: PageoutEnv = PageoutEnv::TODAY;

/// A one-node machine without swap whose groups (after the empty root) hold
/// `sizes[i]` clean page-cache pages each, all in MGLRU generation 0, with
/// `memory.low = lows[i]`; the v6.12 lruvec under memcg LRU `form`.
fn tree(form: MemcgLruForm, sizes: &[u32], lows: &[u64]) -> (Mm, TreePolicy, Vec<CgId>) {
    tree_of(LruGenConfig { v6_12: true, memcg_lru: form, ..LruGenConfig::default() }, sizes, lows)
}

/// [`tree`] with the lruvecs' MGLRU flags `lru_gen`.
fn tree_of(lru_gen: LruGenConfig, sizes: &[u32], lows: &[u64]) -> (Mm, TreePolicy, Vec<CgId>) {
    let total: u32 = sizes.iter().sum();
    let mut mm = Mm::new(total + 256, 0);
    let groups: Vec<CgId> = (0..sizes.len()).map(|i| mm.cgroups.create(&format!("g{i}"))).collect();
    let cfg = ReclaimConfig { lru_gen, ..ReclaimConfig::default() };
    let lruvecs = (0..=sizes.len()).map(|_| Box::new(Mglru::new(cfg.clone())) as Box<dyn ReclaimPolicy>).collect();
    let mut tree = TreePolicy::new(lruvecs, false, 1);
    for ((&g, &pages), &low) in groups.iter().zip(sizes).zip(lows) {
        mm.cgroups.get_mut(g).limits.low = low;
        let f = mm.add_file(pages);
        mm.files[f.0 as usize].cg = g;
        for index in 0..pages {
            let pfn = mm.alloc_in(0, Owner::file(f), index, 0).unwrap();
            mm.set_cache_entry(f, index, CacheEntry::resident(pfn));
            tree.add_page(&mut mm, pfn, Origin::FileRead, None);
        }
    }
    (mm, tree, groups)
}

/// One direct reclaim call; returns the pages each group below the root lost.
fn reclaim(mm: &mut Mm, tree: &mut TreePolicy) -> Vec<u64> {
    let before: Vec<u64> = mm.cgroups.iter().skip(1).map(|(_, g)| g.usage).collect();
    try_to_free_pages(mm, tree, ENV, (ZoneId::Normal, None), &mut Untimed);
    tree.check_invariants(mm);
    mm.cgroups.iter().skip(1).zip(before).map(|((_, g), b)| b - g.usage).collect()
}

fn ids(v: &[u16]) -> Vec<CgId> {
    v.iter().map(|&g| CgId(g)).collect()
}

/// Root (empty), A (8192 pages) and B (4096, `memory.low` 4096) on one
/// node. The groups enter bins 0, 1, 2 of the old generation (bin draws 0,
/// 1, 2; S-CG6: the draws cycle through the 8 bins). Each direct reclaim
/// call (`nr_to_reclaim` 32) runs at priority 12; A and B are sizable there
/// (8192 >> 12 = 2, 4096 >> 12 = 1), the empty root is not. A shrunk group
/// evicts one batch of generation 0: 64 pages scanned and reclaimed
/// (`MIN_LRU_BATCH`), 64 >= 32 stops the walk; it needed no aging, so it
/// stays where it is.
///
/// v6.11 (the 6.12 and 7.2 profiles): protection is what kswapd's aging pass
/// last calculated; no kswapd ran, so B's effective low is 0.
/// - call 1: first bin 3 (draw 3); bins 3..7 empty; bin 0: root, nothing to
///   scan, not sizable, first visit: Tail, into bin 4 (draw 4, already
///   passed); bin 1: A, -64, stop.
/// - calls 2..6 start at bins 5, 6, 7, 0, 1 (draws 5..9): the first group met is A.
/// - call 7 starts at bin 2 (draw 10): B, -64, stop (no low event).
/// - call 8 starts at bin 3 (draw 11): bin 4: root, second visit: Young (draw
///   12: young generation, bin 4); bin 1: A, -64.
///
/// v6.3: `shrink_one` calculates B's protection (low 4096, usage 4096: below low).
/// - calls 1..6 as above (the root is turned away for its size before anything else).
/// - call 7 starts at bin 2: B, below low, first visit: Tail into bin 3
///   (draw 11), met again in bin 3: `memory.events` low 1, -64, stop.
/// - call 8 starts at bin 4 (draw 12): root, second visit: Young (draw 13,
///   bin 5; two generations); bins 5..7, 0 empty; bin 1: A, -64.
#[test]
fn the_order_groups_are_shrunk_in_and_their_scans_and_steals() {
    let (a, b) = (64, 64);
    // Pages A and B lose in calls 1..8, the same under both forms.
    let calls: [[u64; 2]; 8] = [[a, 0], [a, 0], [a, 0], [a, 0], [a, 0], [a, 0], [0, b], [a, 0]];
    for form in [MemcgLruForm::V6_11, MemcgLruForm::V6_3] {
        let (mut mm, mut tree, groups) = tree(form, &[8192, 4096], &[0, 4096]);
        let (ga, gb) = (groups[0], groups[1]);
        assert_eq!(tree.memcg_lru(0).unwrap().generation(false), ids(&[0, 1, 2]));
        for (call, lost) in calls.iter().enumerate() {
            assert_eq!(reclaim(&mut mm, &mut tree), lost, "{form:?} call {}", call + 1);
            let b_events = mm.cgroups.get(gb).events.low;
            let expect_low = (form == MemcgLruForm::V6_3 && call >= 6) as u64;
            assert_eq!(b_events, expect_low, "{form:?} call {}: B's low events", call + 1);
        }
        // The root went young after its second visit; A and B stay old.
        let lru = tree.memcg_lru(0).unwrap();
        assert_eq!(lru.generation(true), ids(&[0]), "{form:?}");
        assert_eq!(lru.generation(false), ids(&[1, 2]), "{form:?}");
        mm.cgroups.settle(&mm.stat);
        for (g, pages) in [(ga, 7 * 64), (gb, 64)] {
            for ev in [VmEvent::PgscanDirect, VmEvent::PgstealDirect, VmEvent::PgscanFile, VmEvent::PgstealFile] {
                assert_eq!(mm.cgroups.event_hier(g, ev), pages, "{form:?} group {} {ev:?}", g.0);
            }
        }
    }
}

/// v6.11 with kswapd's aging pass run once: B's low is calculated (4096),
/// and direct reclaim honours it as v6.3 does: Tail first, then a low event.
#[test]
fn v6_11_honours_memory_low_once_kswapd_has_calculated_it() {
    let (mut mm, mut tree, groups) = tree(MemcgLruForm::V6_11, &[8192, 4096], &[0, 4096]);
    let mut sc = ScanControl::new(Reclaimer::Kswapd, 0);
    tree.age_node(&mut mm, &mut sc);
    for _ in 0..6 {
        reclaim(&mut mm, &mut tree);
    }
    assert_eq!(reclaim(&mut mm, &mut tree), [0, 64]);
    assert_eq!(mm.cgroups.get(groups[1]).events.low, 1);
}

/// v6.17 (`mglru_memcg_protection`): a group below its `memory.low` that
/// the memcg LRU shrinks anyway (its second visit, a low event) scans only
/// its unprotected share. B holds 4096 clean page-cache pages, all in
/// generation 0, with `memory.low` 4096 (kswapd's aging pass calculates it:
/// elow 4096, usage 4096). `get_nr_to_scan`: 4096 pages, less 4096 * 4096 /
/// 4097 = 4095 protected, is 1, raised to `SWAP_CLUSTER_MAX` = 32, then
/// `>> priority`: 32 at priority 0, 1 at 5, 0 at 6; `evict_folios` scans at
/// most that many. Before v6.17 B gives a whole batch at any priority
/// (`MIN_LRU_BATCH` = 64 isolated pages fill it before `nr_to_reclaim` 32
/// stops the walk). Each `shrink_node` walks the memcg LRU once (the empty
/// root: too small, to a tail; B: below low, first a tail, then shrunk), so
/// B is shrunk by the first or the second walk.
#[test]
fn v6_17_scales_a_protected_groups_scan_by_its_unprotected_share() {
    for (protection, priority, lost) in [(true, 0, 32), (true, 5, 1), (true, 6, 0), (false, 0, 64), (false, 6, 64)] {
        let lru_gen = LruGenConfig {
            v6_12: true,
            memcg_lru: MemcgLruForm::V6_11,
            proportional_protection: protection,
            ..LruGenConfig::default()
        };
        let (mut mm, mut tree, groups) = tree_of(lru_gen, &[4096], &[4096]);
        let b = groups[0];
        tree.age_node(&mut mm, &mut ScanControl::new(Reclaimer::Kswapd, 0));
        let mut walks = 0;
        while mm.cgroups.get(b).events.low == 0 {
            walks += 1;
            assert!(walks <= 2, "B was not shrunk by two walks");
            let mut sc = ScanControl::new(Reclaimer::Direct, 32);
            sc.priority = priority;
            tree.shrink_node(&mut mm, &mut sc, ENV, &mut Untimed);
            // The low share scaled B's scan: a direct reclaimer would retry into it.
            assert_eq!(sc.memcg_low_skipped, protection && mm.cgroups.get(b).events.low > 0);
        }
        tree.check_invariants(&mm);
        assert_eq!(4096 - mm.cgroups.get(b).usage, lost, "protection {protection}, priority {priority}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    /// No starvation: three to six groups of 4096..8192 pages each, under
    /// 150 direct reclaim calls: every group gives pages, under every form.
    /// (Direct reclaim stays at priority 12 while it frees its 32 pages there,
    /// and `lruvec_is_sizable` turns away a group under 4096 pages at that
    /// priority, in the kernel as here: such a group waits for kswapd or a
    /// lower priority.)
    #[test]
    fn every_group_is_reclaimed_eventually(sizes in proptest::collection::vec(4096u32..=8192, 3..=6)) {
        for form in [MemcgLruForm::V6_3, MemcgLruForm::V6_7, MemcgLruForm::V6_11] {
            let (mut mm, mut tree, _) = tree(form, &sizes, &vec![0; sizes.len()]);
            let mut lost = vec![0u64; sizes.len()];
            for _ in 0..150 {
                for (l, n) in lost.iter_mut().zip(reclaim(&mut mm, &mut tree)) {
                    *l += n;
                }
            }
            prop_assert!(lost.iter().all(|&l| l > 0), "{:?}: a group was never reclaimed: {:?}", form, lost);
        }
    }
}

/// Limit reclaim walks the target's subtree, not the memcg LRU, but a group
/// whose eviction had to age it goes young there (`lru_gen_shrink_lruvec`).
/// A's 256 pages sit in generation 0: its limit reclaims take them 64 at a
/// time; once generation 0 is empty, the next reclaim below priority 12 finds
/// only two generations and ages A (a new `max_seq`): A goes young, B stays old.
#[test]
fn limit_reclaim_moves_a_group_that_aged_to_the_young_generation() {
    use reclaim::memcg::{try_to_free_mem_cgroup_pages, MemcgReclaim};
    let (mut mm, mut tree, groups) = tree(MemcgLruForm::V6_11, &[256, 4096], &[0, 0]);
    let a = groups[0];
    let mut calls = 0;
    while !tree.memcg_lru(0).unwrap().generation(true).contains(&a) {
        calls += 1;
        assert!(calls <= 8, "A never went young: {:?}", tree.memcg_lru(0).unwrap().generation(false));
        try_to_free_mem_cgroup_pages(&mut mm, &mut tree, ENV, MemcgReclaim::charge(a, 32, false), &mut Untimed);
        tree.check_invariants(&mm);
    }
    assert_eq!((calls, mm.cgroups.get(a).usage), (5, 0), "four calls take 64 pages each, the fifth ages A");
    assert_eq!(tree.memcg_lru(0).unwrap().generation(true), [a]);
    assert_eq!(tree.memcg_lru(0).unwrap().generation(false), ids(&[0, 2]));
}

/// Two nodes, each with its own memcg LRU: A and B hold 4096 clean
/// page-cache pages on each node (sizable at priority 12: 4096 >> 12 = 1).
/// A direct reclaim not bound to a node walks node 0's memcg LRU, then node
/// 1's (`shrink_zones()` visits every node), `nr_reclaimed` counting over both.
/// - Call 1, node 0 (first bin 3): the empty root is turned away (Tail, bin
///   4); A gives 64 pages, enough; A, now 4032 pages, is no longer sizable:
///   Tail (bin 5). Node 1 (first bin 3): the root is turned away (Tail, bin
///   4) and the walk stops at once (64 >= 32 already).
/// - Call 2, node 0 (first bin 6): B, met first in bin 2, gives 64. Node 1
///   (first bin 5): A, in bin 1, gives 64.
#[test]
fn each_node_has_its_own_memcg_lru() {
    use mm::ZoneSpan;
    use reclaim::policy::noded::NodedPolicy;
    let spans =
        [ZoneSpan { node: 0, id: ZoneId::Normal, pages: 8448 }, ZoneSpan { node: 1, id: ZoneId::Normal, pages: 8448 }];
    let mut mm = Mm::with_layout(&spans, vec![vec![10, 20], vec![20, 10]], 0);
    let groups = [mm.cgroups.create("a"), mm.cgroups.create("b")];
    let cfg = ReclaimConfig {
        lru_gen: LruGenConfig { v6_12: true, memcg_lru: MemcgLruForm::V6_11, ..LruGenConfig::default() },
        ..ReclaimConfig::default()
    };
    let noded = || {
        let nodes = [0, 1].map(|n| Box::new(Mglru::on_node(cfg.clone(), n)) as Box<dyn ReclaimPolicy>);
        Box::new(NodedPolicy::new(nodes.into())) as Box<dyn ReclaimPolicy>
    };
    let mut tree = TreePolicy::new((0..3).map(|_| noded()).collect(), false, 2);
    for g in groups {
        let f = mm.add_file(8192);
        mm.files[f.0 as usize].cg = g;
        for index in 0..8192u32 {
            let pfn = mm.alloc_in((index / 4096) as usize, Owner::file(f), index, 0).unwrap();
            mm.set_cache_entry(f, index, CacheEntry::resident(pfn));
            tree.add_page(&mut mm, pfn, Origin::FileRead, None);
        }
    }
    let on_node = |tree: &TreePolicy, n: u8| tree.lruvec(groups[0]).node_lru_sizes(n).unwrap().total();
    assert_eq!(reclaim(&mut mm, &mut tree), [64, 0]);
    assert_eq!((on_node(&tree, 0), on_node(&tree, 1)), (4032, 4096));
    assert_eq!(tree.memcg_lru(0).unwrap().generation(false), ids(&[2, 0, 1]));
    assert_eq!(tree.memcg_lru(1).unwrap().generation(false), ids(&[1, 2, 0]));
    assert_eq!(reclaim(&mut mm, &mut tree), [64, 64]);
    assert_eq!((on_node(&tree, 0), on_node(&tree, 1)), (4032, 4032));
}
