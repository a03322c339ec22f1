//! Zones and NUMA nodes (issue #16): the allocator's zonelist and fallback,
//! NUMA counters, per-node kswapd.

use engine::sim::{MemPolicy, Placement};
use engine::{Access, RunReport};
use mm::{VmEvent, ZoneId};

/// A v6.2 machine of 64M on two nodes (`extra` settings on top) where one
/// thread placed by `placement` writes `pages` pages of a fresh region.
fn two_node_writer(extra: &[(&str, &str)], pages: u32, placement: Placement) -> RunReport {
    let settings = [&[("memory", "64M"), ("numa.nodes", "2")][..], extra].concat();
    let mut b = testkit::builder("v6.2", &settings);
    let region = b.add_anon_region(pages);
    b.set_placement(placement).unwrap();
    let writes = (0..pages).map(|page| Access::Mem { region, page, write: true }).collect();
    b.add_thread("writer", Box::new(testkit::Script::new(writes)));
    assert!(b.set_placement(Placement { node: 2, policy: MemPolicy::Local }).is_err(), "two nodes only");
    b.build().run(&mut |_| {}).unwrap()
}

/// A 6G x86-64 machine (v6.2) filling 5G: DMA 4096 pages, DMA32 782336,
/// Normal 786432; watermarks (hand-checked in reclaim's watermark tests):
/// Normal low 2040, DMA32 low 2029 plus its reserve against Normal 786432 /
/// 256 = 3072, DMA low 10 plus reserve 6128. The writer's per-CPU lists
/// (v6.2: `lowmark`) are refilled 63 pages at a time (Normal and DMA32:
/// min(managed >> 10, 256) / 4 = 64, 64 + 32 -> 63). User pages come from
/// Normal while its free count is above 2040 before an allocation: after R
/// refills it is 786432 - 63R, above 2040 up to R = 12450, so allocations
/// 1..=784351 (63 * 12450 + 1) pass, the last one refilling once more
/// (786432 - 63 * 12451 = 2019 free, 62 left on the list). Then DMA32:
/// 1310720 - 784351 = 526369 pages, 8356 refills (526428 pages): 782336 -
/// 526428 = 255908 free, far above 2029 + 3072; none from DMA, and no zone
/// went below its low watermark: kswapd never ran.
#[test]
fn six_gib_filling_five_allocates_from_dma32_and_normal() {
    let mut b = testkit::builder("v6.2", &[("memory", "6G"), ("zones", "x86_64")]);
    let region = b.add_anon_region(1_310_720);
    let mut sim = b.build();
    testkit::write_pages(&mut sim, region, 0..1_310_720).unwrap();
    sim.check_invariants();
    let s = |e| testkit::stat(&sim, e);
    assert_eq!((s(VmEvent::PgallocNormal), s(VmEvent::PgallocDma32), s(VmEvent::PgallocDma)), (784_351, 526_369, 0));
    assert_eq!((s(VmEvent::Pageoutrun), s(VmEvent::AllocstallNormal)), (0, 0));
    let free: Vec<u64> = (0..3).map(|z| sim.mm().zone_free(z)).collect();
    assert_eq!(free, [4096, 255_908, 2019]);
    assert_eq!((s(VmEvent::NumaHit), s(VmEvent::NumaLocal), s(VmEvent::NumaMiss)), (1_310_720, 1_310_720, 0));
}

/// 64M on two nodes of one Normal zone each (8192 pages): min_free_kbytes =
/// int_sqrt(16 * 65536) = 1024 -> 256 pages min, 128 per zone; the step is
/// max(128 / 4, 8192 * 10 / 10000) = 32: low 160, high 192. A thread running
/// on node 1 writing 16500 pages takes 8192 - 160 = 8032 from node 1, then
/// 8032 from node 0 (numa_miss, numa_foreign on node 1, numa_other), and only
/// when both are at low wakes the kswapds of its zonelist: node 1's first.
#[test]
fn a_thread_on_node_1_overflows_into_node_0() {
    let rep = two_node_writer(&[("swap", "ssd:64M")], 16_500, Placement { node: 1, policy: MemPolicy::Local });
    let get = |name: &str| rep.get(name).unwrap();
    assert!(get("numa_miss") >= 8032, "{}", get("numa_miss"));
    assert_eq!(get("numa_foreign"), get("numa_miss"));
    assert_eq!(rep.zones[1].stat.numa_foreign, get("numa_miss"), "misses are foreign to node 1");
    assert_eq!(rep.zones[0].stat.numa_miss, get("numa_miss"));
    assert_eq!(get("numa_local"), rep.zones[1].stat.pgalloc);
    let (k0, k1) = (rep.kswapd_first_wake_ns[0].unwrap(), rep.kswapd_first_wake_ns[1].unwrap());
    assert!(k1 <= k0, "node 1's kswapd woke at {k1}, node 0's at {k0}");
    assert_eq!((rep.zones[0].name, rep.zones[1].name), ("Normal", "Normal"));
}

/// Bound to node 1 (`mempolicy=bind`), the same thread never touches node 0:
/// node 1's kswapd and direct reclaim (its node only) make the room.
#[test]
fn a_bound_thread_reclaims_its_own_node() {
    let rep = two_node_writer(&[("swap", "ssd:64M")], 12_000, Placement { node: 1, policy: MemPolicy::Bind });
    assert_eq!((rep.get("numa_miss"), rep.zones[0].stat.pgalloc), (Some(0), 0));
    assert!(rep.get("pswpout").unwrap() > 0);
    assert_eq!(rep.kswapd_first_wake_ns[0], None);
    assert!(rep.kswapd_first_wake_ns[1].is_some());
}

/// `mempolicy=interleave` spreads a thread's pages over both nodes in turn.
#[test]
fn interleave_alternates_nodes() {
    let rep = two_node_writer(&[], 1000, Placement { node: 0, policy: MemPolicy::Interleave });
    assert_eq!((rep.zones[0].stat.pgalloc, rep.zones[1].stat.pgalloc), (500, 500));
    assert_eq!(
        (rep.get("numa_interleave"), rep.get("numa_miss"), rep.get("numa_other")),
        (Some(1000), Some(0), Some(500))
    );
}

/// 3G on x86-64 has no Normal zone (DMA and DMA32 only); user pages still ask
/// for Normal, so their direct reclaims are `allocstall_normal`.
#[test]
fn three_gib_has_no_normal_zone() {
    let b = testkit::builder("v6.2", &[("memory", "3G"), ("zones", "x86_64")]);
    let sim = b.build();
    let names: Vec<_> = sim.mm().zones.iter().map(|z| z.id).collect();
    assert_eq!(names, [ZoneId::Dma, ZoneId::Dma32]);
    assert_eq!(reclaim::watermark::user_classzone(sim.mm()), ZoneId::Normal);
}

/// A machine whose zones leave a zone no room above its high watermark is refused.
#[test]
fn zone_layouts_are_checked() {
    // min_free_kbytes 32M of 64M: each zone's min is half of it, the step 30%: high is 110%.
    let tight = [("vm.min_free_kbytes", "32768"), ("vm.watermark_scale_factor", "3000")];
    let c = testkit::config("v6.2", &[&[("memory", "64M"), ("zones", "dma32:32M,normal:rest")][..], &tight].concat());
    let e = engine::SimBuilder::new(c).err().unwrap().to_string();
    assert!(e.contains("in zone DMA32 of node 0"), "{e}");
    let c = testkit::config("v6.2", &[("memory", "64M"), ("numa.nodes", "2"), ("numa.distance", "10,20;20,10;10,10")]);
    assert!(engine::SimBuilder::new(c).is_err());
    assert_eq!(ZoneId::parse("DMA32"), Some(ZoneId::Dma32));
}

/// The fair zone allocation policy (v3.12..v4.7) on 32M cut into DMA32 and
/// Normal of 4096 pages each, vm.min_free_kbytes 1024 (256 pages): each zone
/// has min 128, low 160, high 192 (step max(32, 4)), a batch of 192 - 160 = 32
/// pages a round. 100 pages: Normal 1..32 (its batch runs out), DMA32 33..64,
/// both out at 65: new round, the plain walk takes Normal for 65, the fair
/// pass Normal 66..96 (out again), DMA32 97..100: Normal 64, DMA32 36.
/// Without the policy all 100 come from Normal.
#[test]
fn fair_zone_allocation_round_robin() {
    let zoned = [("memory", "32M"), ("zones", "dma32:16M,normal:rest"), ("vm.min_free_kbytes", "1024")];
    for (fair, expected) in [("1", (64, 36)), ("0", (100, 0))] {
        let mut b = testkit::builder("v6.2", &[&zoned[..], &[("fair_zone_alloc", fair)]].concat());
        let region = b.add_anon_region(100);
        let mut sim = b.build();
        testkit::write_pages(&mut sim, region, 0..100).unwrap();
        let got = (testkit::stat(&sim, VmEvent::PgallocNormal), testkit::stat(&sim, VmEvent::PgallocDma32));
        assert_eq!(got, expected, "fair_zone_alloc={fair}");
    }
}

/// `vm.zone_reclaim_mode=1` (node reclaim): the two-node 64M machine above
/// (8192 pages a node, low watermark 160). A thread on node 0 reads 12000
/// pages of a file once. Without node reclaim the first 8032 fill node 0 down
/// to its low watermark and the other 3968 or more fall back to node 1
/// (numa_miss), with no reclaim at all. With it, node 0's zone below low is
/// reclaimed (its own clean page cache, from priority 4) before the walk
/// moves on, and node reclaim (counted as direct) frees at least the 3968
/// pages that did not fit; kswapd is never woken, as the fast path always
/// succeeds. The pages node reclaim frees go to the reader's per-CPU list
/// (v6.2: high 160, batch 1), which the watermark does not count, so until
/// the list drains a few allocations still fall back to node 1: fewer than
/// one list's worth.
#[test]
fn zone_reclaim_mode_keeps_allocations_on_the_local_node() {
    for mode in ["0", "1"] {
        let mut b = testkit::builder("v6.2", &[("memory", "64M"), ("numa.nodes", "2"), ("vm.zone_reclaim_mode", mode)]);
        let file = b.add_file(12_000);
        b.set_placement(Placement { node: 0, policy: MemPolicy::Local }).unwrap();
        let reads = (0..12_000).map(|page| Access::FileRead { file, page }).collect();
        b.add_thread("reader", Box::new(testkit::Script::new(reads)));
        let rep = b.build().run(&mut |_| {}).unwrap();
        let get = |name: &str| rep.get(name).unwrap();
        if mode == "0" {
            assert!(get("numa_miss") >= 3968, "{}", get("numa_miss"));
            assert_eq!((get("pgscan_direct"), get("pgsteal_direct")), (0, 0));
        } else {
            assert_eq!(get("numa_miss"), rep.zones[1].stat.pgalloc);
            assert!((1..160).contains(&get("numa_miss")), "{}", get("numa_miss"));
            assert!(get("pgsteal_direct") >= 3968, "{}", get("pgsteal_direct"));
            assert_eq!(rep.kswapd_first_wake_ns, [None, None]);
        }
    }
}
