//! Every policy on several NUMA nodes: one lruvec per node for the policies
//! that keep per-node state (MGLRU, CLOCK), a page on its own node's lruvec.

use engine::sim::{MemPolicy, Placement};
use engine::{Access, Sim};
use mm::PageFlags;
use reclaim::policy::registry::POLICIES;
use simrng::SimRng;

/// A v6.2 machine of 64M (8192 pages a node) on two nodes with policy `lru`
/// and `extra` settings; one thread placed by `placement` writes `pages`
/// pages of a fresh region, access by access.
fn two_nodes(lru: &str, extra: &[(&str, &str)], placement: Placement, pages: u32) -> Sim {
    let settings = [&[("memory", "64M"), ("numa.nodes", "2"), ("lru", lru)][..], extra].concat();
    let mut b = testkit::builder("v6.2", &settings);
    b.set_placement(placement).unwrap();
    let region = b.add_anon_region(pages);
    b.add_thread("writer", Box::new(testkit::Script::new(Vec::new())));
    let mut sim = b.build();
    for page in 0..pages {
        sim.access_now(Access::Mem { region, page, write: true }).unwrap();
    }
    sim
}

/// Pages flagged `PG_lru` on each node.
fn listed_per_node(sim: &Sim) -> [u64; 2] {
    let mut n = [0; 2];
    for pfn in 0..sim.mm().frames.len() as mm::Pfn {
        if sim.mm().frames[pfn].flags.has(PageFlags::LRU) {
            n[sim.mm().node_of(pfn) as usize] += 1;
        }
    }
    n
}

/// `mempolicy=interleave` puts the writer's pages on node 0 and node 1 in
/// turn: 1000 pages, 500 a node, all on the LRU (no reclaim on 16384 pages),
/// each on its own node's MGLRU lruvec.
#[test]
fn interleave_gives_each_node_lruvec_half() {
    let sim = two_nodes("mglru", &[], Placement { node: 0, policy: MemPolicy::Interleave }, 1000);
    sim.check_invariants();
    let sizes = [0, 1].map(|n| sim.node_lru_sizes(n).unwrap().total());
    assert_eq!(sizes, [500, 500]);
    assert_eq!(listed_per_node(&sim), sizes);
}

/// Bound to node 1, a writer of 12000 pages (node 1 has 8192) with MGLRU:
/// only node 1's kswapd and reclaim run; node 0 gets no page and its lruvec
/// stays empty, node 1's lists what node 1 holds.
#[test]
fn mglru_thread_bound_to_node_1_reclaims_node_1_only() {
    let settings = [("memory", "64M"), ("numa.nodes", "2"), ("lru", "mglru"), ("swap", "ssd:64M")];
    let mut b = testkit::builder("v6.2", &settings);
    b.set_placement(Placement { node: 1, policy: MemPolicy::Bind }).unwrap();
    let region = b.add_anon_region(12_000);
    let writes = (0..12_000).map(|page| Access::Mem { region, page, write: true }).collect();
    b.add_thread("writer", Box::new(testkit::Script::new(writes)));
    let rep = b.build().paranoid().run(&mut |_| {}).unwrap();
    assert_eq!((rep.get("numa_miss"), rep.zones[0].stat.pgalloc), (Some(0), 0));
    assert!(rep.get("pswpout").unwrap() > 0 && rep.get("pgsteal_kswapd").unwrap() > 0);
    assert_eq!(rep.kswapd_first_wake_ns[0], None);
    assert!(rep.kswapd_first_wake_ns[1].is_some());
}

/// Property: on two nodes, after random anon and file accesses placed on
/// random nodes under memory pressure, every page on an LRU is on exactly one
/// node's lruvec, its own: each node's lruvec lists exactly the node's
/// `PG_lru` pages (for every policy that keeps lruvecs per node), and the
/// policy's invariants hold.
#[test]
fn every_listed_page_is_on_its_own_node_lruvec() {
    for p in POLICIES {
        for seed in 0..4u64 {
            let mut rng = SimRng::new(seed, 1);
            let policy = [MemPolicy::Local, MemPolicy::Bind, MemPolicy::Interleave][rng.below(3) as usize];
            let settings = [("memory", "4M"), ("numa.nodes", "2"), ("lru", p.name), ("swap", "ssd:16M")];
            let mut b = testkit::builder("v6.2", &settings);
            b.set_placement(Placement { node: rng.below(2) as u8, policy }).unwrap();
            let (anon, file) = (b.add_anon_region(1536), b.add_file(1536));
            b.add_thread("mixed", Box::new(testkit::Script::new(Vec::new())));
            let mut sim = b.build();
            for _ in 0..6000 {
                let page = rng.below(1536);
                let a = match rng.below(2) {
                    0 => Access::Mem { region: anon, page, write: rng.below(2) == 0 },
                    _ => Access::FileRead { file, page },
                };
                sim.access_now(a).unwrap_or_else(|e| panic!("lru={} seed {seed}: {e}", p.name));
            }
            sim.check_invariants();
            let listed = listed_per_node(&sim);
            assert_eq!(sim.lru_sizes().total(), listed[0] + listed[1], "lru={} seed {seed}", p.name);
            if p.on_node.is_some() {
                let sizes = [0, 1].map(|n| sim.node_lru_sizes(n).unwrap().total());
                assert_eq!(sizes, listed, "lru={} seed {seed}", p.name);
            }
        }
    }
}
