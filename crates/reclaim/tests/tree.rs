//! Reclaim over a memory cgroup tree (`reclaim::tree`): memory.low and
//! memory.min protection in the walk, the low retry, and `memory.events`.

use mm::{CacheEntry, CgId, FileId, Mm, Owner, VmEvent, ZoneId};
use reclaim::direct::{try_to_free_pages, Untimed};
use reclaim::pageout::PageoutEnv;
use reclaim::policy::classic::Classic;
use reclaim::policy::{Origin, ReclaimPolicy};
use reclaim::tree::TreePolicy;
use reclaim::ReclaimConfig;

const ENV: PageoutEnv = PageoutEnv::TODAY;

/// Two groups, `svc` and `batch`, each with `pages` clean page-cache pages
/// on its inactive list; `svc` gets `memory.low = low` pages.
fn two_tenants(pages: u32, low: u64, min: u64) -> (Mm, TreePolicy, [FileId; 2]) {
    let mut mm = Mm::new(2 * pages + 256, 0);
    let svc = mm.cgroups.create("svc");
    let batch = mm.cgroups.create("batch");
    mm.cgroups.get_mut(svc).limits.low = low;
    mm.cgroups.get_mut(svc).limits.min = min;
    let lruvecs: Vec<Box<dyn ReclaimPolicy>> =
        (0..3).map(|_| Box::new(Classic::new(ReclaimConfig::default())) as Box<dyn ReclaimPolicy>).collect();
    let mut tree = TreePolicy::new(lruvecs, false, 1);
    let mut files = [FileId(0); 2];
    for (i, g) in [svc, batch].into_iter().enumerate() {
        let f = mm.add_file(pages);
        mm.files[f.0 as usize].cg = g;
        files[i] = f;
        for index in 0..pages {
            let pfn = mm.alloc_in(0, Owner::file(f), index, 0).unwrap();
            mm.set_cache_entry(f, index, CacheEntry::resident(pfn));
            tree.add_page(&mut mm, pfn, Origin::FileRead, None);
        }
    }
    (mm, tree, files)
}

fn reclaim(mm: &mut Mm, tree: &mut TreePolicy) -> u64 {
    try_to_free_pages(mm, tree, ENV, (ZoneId::Normal, None), &mut Untimed).nr_reclaimed
}

#[test]
fn memory_low_spares_the_protected_group_until_nothing_else_is_left() {
    let (mut mm, mut tree, _) = two_tenants(512, 512, 0);
    let (svc, batch) = (mm.cgroups.find("svc").unwrap(), mm.cgroups.find("batch").unwrap());
    assert_eq!((mm.cgroups.get(svc).usage, mm.cgroups.get(batch).usage), (512, 512));
    // While batch has pages, every call frees batch's alone.
    while mm.cgroups.get(batch).usage > 0 {
        assert!(reclaim(&mut mm, &mut tree) > 0);
        assert_eq!(mm.cgroups.get(svc).usage, 512);
    }
    assert_eq!(mm.cgroups.get(svc).events.low, 0);
    // Only protected memory is left: once a round frees nothing else (the
    // slab shrinkers may still free inodes), the low retry takes svc's pages.
    for _ in 0..20 {
        if mm.cgroups.get(svc).usage < 512 {
            break;
        }
        reclaim(&mut mm, &mut tree);
    }
    assert!(mm.cgroups.get(svc).usage < 512);
    assert!(mm.cgroups.get(svc).events.low > 0, "the retry counts memory.events low");
    mm.cgroups.settle(&mm.stat);
    assert_eq!(mm.cgroups.event_hier(batch, VmEvent::PgstealFile), 512);
}

#[test]
fn memory_min_is_never_reclaimed() {
    let (mut mm, mut tree, _) = two_tenants(256, 0, 256);
    let svc = mm.cgroups.find("svc").unwrap();
    for _ in 0..12 {
        reclaim(&mut mm, &mut tree);
    }
    // Batch's pages went; svc's stay, even through the low retry.
    assert_eq!(mm.cgroups.get(svc).usage, 256);
    assert_eq!(mm.cgroups.get(svc).events.low, 0);
    assert_eq!(mm.cgroups.get(CgId::ROOT).usage, 256);
}

#[test]
fn without_protection_both_groups_give_pages() {
    let (mut mm, mut tree, _) = two_tenants(512, 0, 0);
    let (svc, batch) = (mm.cgroups.find("svc").unwrap(), mm.cgroups.find("batch").unwrap());
    for _ in 0..8 {
        reclaim(&mut mm, &mut tree);
    }
    let (s, b) = (512 - mm.cgroups.get(svc).usage, 512 - mm.cgroups.get(batch).usage);
    // Partial walks resume after the last group: the two share the work.
    assert!(s + b > 0 && 3 * s >= s + b && 3 * b >= s + b, "svc gave {s}, batch gave {b}");
}

/// MGLRU in a tree: group `a`'s aging walks `a`'s address spaces only (its
/// `lru_gen_mm_list`) and takes only `a`'s pages (`get_pfn_folio`'s memcg
/// check). Each group has 4 faulted anon pages with young PTEs in its own
/// generations (max_seq 3). Aging `a` with a forced walk visits one address
/// space, moves `a`'s 4 pages to seq 3 and clears their PTEs; `b`'s PTEs stay
/// young and `b`'s generations untouched. (Walking every region, `a`'s
/// aging used to set `b`'s pages' generation in `a`'s numbering.)
#[test]
fn mglru_aging_of_one_group_leaves_other_groups_pages_alone() {
    use mm::{PageFlags, Pte};
    use reclaim::policy::mglru::gens::{folio_gen, gen_from_seq, ANON};
    use reclaim::policy::mglru::Mglru;
    use reclaim::{Reclaimer, ScanControl};
    let mut mm = Mm::new(64, 64);
    let groups = [mm.cgroups.create("a"), mm.cgroups.create("b")];
    let mut lruvecs = [Mglru::new(ReclaimConfig::default()), Mglru::new(ReclaimConfig::default())];
    let mut regions = Vec::new();
    for (g, lruvec) in groups.into_iter().zip(lruvecs.iter_mut()) {
        let r = mm.add_anon_region(4);
        mm.regions[r.0 as usize].cg = g;
        mm.cgroups.switch_to(g, &mm.stat);
        for i in 0..4 {
            let pfn = mm.alloc_in(0, Owner::anon(r), i, PageFlags::SWAPBACKED).unwrap();
            mm.regions[r.0 as usize].ptes[i as usize] = Pte::present(pfn, false);
            lruvec.add_page(&mut mm, pfn, Origin::AnonFault, None);
        }
        regions.push(r);
    }
    let gens = |mm: &Mm, r: mm::RegionId| -> Vec<Option<usize>> {
        mm.regions[r.0 as usize].ptes.iter().map(|p| folio_gen(&mm.frames[p.pfn().unwrap()])).collect()
    };
    let b_before = gens(&mm, regions[1]);
    mm.cgroups.switch_to(groups[0], &mm.stat);
    let mut sc = ScanControl::new(Reclaimer::Kswapd, 32);
    assert!(lruvecs[0].age(&mut mm, true, true, &mut sc));
    assert_eq!(sc.work.walk_mms, 1, "a's address space only");
    let young = |mm: &Mm, r: mm::RegionId| mm.regions[r.0 as usize].ptes.iter().filter(|p| p.young()).count();
    assert_eq!((young(&mm, regions[0]), young(&mm, regions[1])), (0, 4));
    assert_eq!(lruvecs[0].lrugen().nr_pages(gen_from_seq(3), ANON), 4);
    assert_eq!(lruvecs[1].lrugen().nr_pages(gen_from_seq(3), ANON), 4);
    assert_eq!(gens(&mm, regions[1]), b_before);
    assert_eq!(lruvecs[1].lrugen().max_seq, 3);
    for l in &lruvecs {
        l.check_invariants(&mm);
    }
}
