//! One lruvec per NUMA node (`reclaim::policy::noded`): MGLRU's generations
//! per node, a node's reclaim and aging confined to its own pages.

use mm::{CacheEntry, Mm, Owner, PageFlags, Pte, VmEvent, ZoneId, ZoneSpan};
use reclaim::direct::{try_to_free_pages, Untimed};
use reclaim::pageout::PageoutEnv;
use reclaim::policy::mglru::gens::{folio_gen, gen_from_seq, ANON};
use reclaim::policy::mglru::Mglru;
use reclaim::policy::noded::NodedPolicy;
use reclaim::policy::{ControlOp, Origin, ReclaimPolicy};
use reclaim::{ReclaimConfig, Reclaimer, ScanControl};

/// Two nodes of one Normal zone of `pages` pages each: node 0 pfns
/// `0..pages`, node 1 `pages..2 * pages`.
fn two_nodes(pages: u32, swap: u32) -> Mm {
    let spans = [ZoneSpan { node: 0, id: ZoneId::Normal, pages }, ZoneSpan { node: 1, id: ZoneId::Normal, pages }];
    Mm::with_layout(&spans, vec![vec![10, 20], vec![20, 10]], swap)
}

/// One process's region of 8 anon pages, pages 0..4 on node 0 and 4..8 on
/// node 1, each faulted in (a young PTE) onto its node's MGLRU lruvec (all
/// in the youngest generation, max_seq 3). Node 0's aging with a forced walk
/// visits the one address space, reads its 8 PTEs, takes node 0's 4 young
/// pages (their PTEs cleared, moved to seq 3 in node 0's numbering) and
/// leaves node 1's 4 PTEs young and their generations as they were
/// (`get_pfn_folio`'s node check). Without the check the walk took all 8.
#[test]
fn mglru_walk_on_node_0_leaves_node_1_pages_alone() {
    let mut mm = two_nodes(16, 64);
    let mut lruvecs = [0, 1].map(|n| Mglru::on_node(ReclaimConfig::default(), n));
    let r = mm.add_anon_region(8);
    for i in 0..8u32 {
        let node = (i / 4) as usize;
        let pfn = mm.alloc_in(node, Owner::anon(r), i, PageFlags::SWAPBACKED).unwrap();
        mm.regions[r.0 as usize].ptes[i as usize] = Pte::present(pfn, false);
        lruvecs[node].add_page(&mut mm, pfn, Origin::AnonFault, None);
    }
    let gens = |mm: &Mm, range: std::ops::Range<usize>| -> Vec<Option<usize>> {
        mm.regions[r.0 as usize].ptes[range].iter().map(|p| folio_gen(&mm.frames[p.pfn().unwrap()])).collect()
    };
    let node1_before = gens(&mm, 4..8);
    // Node 0's lruvec opens a generation first so that its numbering differs from node 1's.
    let mut sc = ScanControl::new(Reclaimer::Kswapd, 32);
    sc.nid = Some(0);
    assert!(lruvecs[0].age(&mut mm, true, true, &mut sc));
    assert_eq!((sc.work.walk_mms, sc.work.walk_ptes), (1, 8));
    let young = |mm: &Mm, range: std::ops::Range<usize>| {
        mm.regions[r.0 as usize].ptes[range].iter().filter(|p| p.young()).count()
    };
    assert_eq!((young(&mm, 0..4), young(&mm, 4..8)), (0, 4));
    assert_eq!(lruvecs[0].lrugen().max_seq, 4);
    assert_eq!(lruvecs[0].lrugen().nr_pages(gen_from_seq(3), ANON), 4);
    assert_eq!((lruvecs[1].lrugen().max_seq, lruvecs[1].lrugen().nr_pages(gen_from_seq(3), ANON)), (3, 4));
    assert_eq!(gens(&mm, 4..8), node1_before);
    for l in &lruvecs {
        l.check_invariants(&mm);
    }
}

/// A [`NodedPolicy`] of two MGLRU lruvecs, each node with 64 clean
/// page-cache pages read once (`read()`: inactive, the oldest generation,
/// seq 0). Node 1's kswapd at priority 0 (`sc.nid = 1`, no swap): its aging
/// finds four generations (min_seq 0, max_seq 3) and does not age; the
/// eviction's scan size is node 1's 64 file pages >> 0 = 64, and one batch
/// (`MIN_LRU_BATCH` = 64) isolates all 64 from seq 0 and frees them: 64
/// scanned, 64 stolen, by kswapd. Node 0's 64 pages stay in node 0's seq 0,
/// which node 1's reclaim never changed. Then a `lru_gen` write `+ 0 1 3`
/// ages node 1's lruvec only (max_seq 3 -> 4; node 0's stays 3), and a read
/// lists both nodes.
#[test]
fn node_1_kswapd_ages_and_evicts_node_1_pages_only() {
    let mut mm = two_nodes(128, 0);
    let lruvecs = [0, 1].map(|n| Box::new(Mglru::on_node(ReclaimConfig::default(), n)) as Box<dyn ReclaimPolicy>);
    let mut policy = NodedPolicy::new(lruvecs.into());
    let f = mm.add_file(128);
    for index in 0..128u32 {
        let pfn = mm.alloc_in((index / 64) as usize, Owner::file(f), index, 0).unwrap();
        mm.set_cache_entry(f, index, CacheEntry::resident(pfn));
        policy.add_page(&mut mm, pfn, Origin::FileRead, None);
    }
    let env = PageoutEnv::TODAY;
    let mut sc = ScanControl::new(Reclaimer::Kswapd, 32);
    (sc.nid, sc.priority) = (Some(1), 0);
    policy.age_node(&mut mm, &mut sc);
    policy.shrink_node(&mut mm, &mut sc, env, &mut Untimed);
    assert_eq!(sc.nid, Some(1));
    assert_eq!((mm.stat.get(VmEvent::PgscanKswapd), mm.stat.get(VmEvent::PgstealKswapd)), (64, 64));
    assert_eq!((mm.stat.get(VmEvent::PgscanDirect), sc.nr_reclaimed), (0, 64));
    assert_eq!(policy.node_lru_sizes(1).unwrap().total(), 0);
    assert_eq!(policy.node_lru_sizes(0).unwrap().inactive_file, 64);
    let resident = (0..128).filter(|&i| mm.files[f.0 as usize].cache[i as usize].pfn().is_some()).collect::<Vec<u32>>();
    assert_eq!(resident, (0..64).collect::<Vec<u32>>(), "node 0's pages stay cached");
    for pfn in 0..64 {
        assert_eq!(folio_gen(&mm.frames[pfn]), Some(gen_from_seq(0)), "pfn {pfn}");
    }
    policy.check_invariants(&mm);
    // The debugfs file names the node: node 1's lruvec ages, node 0's does not.
    policy.control(&mut mm, "lru_gen", ControlOp::Write("+ 0 1 3"), &mut sc, env).unwrap();
    let listing = policy.control(&mut mm, "lru_gen", ControlOp::Read, &mut sc, env).unwrap();
    let seqs: Vec<&str> = listing.lines().filter_map(|l| l.split_whitespace().next()).collect();
    assert_eq!(seqs[..7], ["memcg", "node", "0", "1", "2", "3", "#"], "{listing}");
    assert_eq!(seqs[7..], ["node", "1", "2", "3", "4", "#"], "{listing}");
    assert!(policy.control(&mut mm, "lru_gen", ControlOp::Write("+ 0 2 3"), &mut sc, env).is_err(), "no node 2");
    // Direct reclaim of every node (`nid` None) shrinks each node's lruvec in
    // turn: node 1 has nothing left, so what it frees is node 0's.
    let sc = try_to_free_pages(&mut mm, &mut policy, env, (ZoneId::Normal, None), &mut Untimed);
    assert_eq!(sc.nid, None);
    assert!(sc.nr_reclaimed >= 32, "{}", sc.nr_reclaimed);
    assert_eq!(policy.node_lru_sizes(0).unwrap().total(), 64 - sc.nr_reclaimed);
    assert_eq!(mm.stat.get(VmEvent::PgstealDirect), sc.nr_reclaimed);
    policy.check_invariants(&mm);
}
