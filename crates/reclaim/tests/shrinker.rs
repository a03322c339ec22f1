//! Slab shrinkers: `do_shrink_slab`'s arithmetic per kernel era, the inode
//! shrinker's page steals, the shadow-node shrinker, and slab page accounting.

use mm::{CacheEntry, CgId, FileId, Mm, Owner, PageFlags, Shadow, ShrinkerId, VmEvent};
use proptest::prelude::*;
use reclaim::policy::classic::Classic;
use reclaim::shrinker::{
    do_shrink_slab, Pressure, ScanForm, Scanned, ShadowLimit, ShrinkCtx, Shrinker, ShrinkerConfig, DEFAULT_SEEKS,
};
use reclaim::shrinker_fs::SuperBlock;
use reclaim::shrinker_shadow::ShadowNodes;
use reclaim::{Origin, ReclaimConfig, ReclaimPolicy, Reclaimer};
use std::cell::RefCell;

/// A cache of `freeable` objects that frees whatever it is asked to scan.
struct Fake {
    freeable: u64,
    seeks: u32,
    batch: u64,
    calls: RefCell<Vec<u64>>,
}

impl Shrinker for Fake {
    fn id(&self) -> ShrinkerId {
        ShrinkerId::SuperBlock
    }
    fn seeks(&self, _cfg: &ShrinkerConfig) -> u32 {
        self.seeks
    }
    fn batch(&self) -> u64 {
        self.batch
    }
    fn count(&self, _cx: &mut ShrinkCtx) -> u64 {
        self.freeable
    }
    fn scan(&self, _cx: &mut ShrinkCtx, nr_to_scan: u64) -> Scanned {
        self.calls.borrow_mut().push(nr_to_scan);
        Scanned { freed: nr_to_scan, stolen: 0 }
    }
}

fn fake(freeable: u64, seeks: u32, batch: u64) -> Fake {
    Fake { freeable, seeks, batch, calls: RefCell::new(Vec::new()) }
}

/// v3.9 (`ratio`, whole batches only) and v5.13+ (`priority-deferred`).
fn old() -> ShrinkerConfig {
    ShrinkerConfig { scan: ScanForm::Ratio, small_caches: false, ..ShrinkerConfig::TODAY }
}

/// Runs one call of `s` and returns (batches scanned, nr_deferred afterwards, slabs_scanned).
fn call(mm: &mut Mm, cfg: ShrinkerConfig, s: &Fake, p: Pressure) -> (Vec<u64>, u64, u64) {
    let mut policy = Classic::new(ReclaimConfig::default());
    let mut cx = ShrinkCtx { mm, policy: &mut policy, cfg, reclaimer: Reclaimer::Kswapd, target: CgId::ROOT };
    s.calls.borrow_mut().clear();
    do_shrink_slab(&mut cx, s, p);
    (s.calls.borrow().clone(), mm.slab.nr_deferred[0], mm.stat.get(VmEvent::SlabsScanned))
}

#[test]
fn ratio_form_of_v3_9_defers_less_than_a_batch() {
    let mut mm = Mm::new(16, 0);
    let s = fake(10_000, DEFAULT_SEEKS, 1024);
    let p = Pressure { priority: 12, nr_scanned: 500, lru_pages: 9_999 };
    // delta = (4 * 500 / 2) * 10000 / (9999 + 1) = 1000; delta < 10000 / 4, so
    // total_scan = min(0 + 1000, 10000 / 2) = 1000 < 1024: no batch, 1000 deferred.
    assert_eq!(call(&mut mm, old(), &s, p), (vec![], 1000, 0));
    // Again: total_scan = min(1000 + 1000, 5000) = 2000: one batch of 1024, 976 left and deferred.
    assert_eq!(call(&mut mm, old(), &s, p), (vec![1024], 976, 1024));
    // A pass that scanned nothing counts as 32 pages: delta = (4 * 32 / 2) * 10000 / 10000 = 64;
    // total_scan = 976 + 64 = 1040: one batch, 16 deferred.
    let idle = Pressure { nr_scanned: 0, ..p };
    assert_eq!(call(&mut mm, old(), &s, idle), (vec![1024], 16, 2048));
}

#[test]
fn priority_deferred_form_of_v5_13() {
    let mut mm = Mm::new(16, 0);
    let s = fake(10_000, DEFAULT_SEEKS, 1024);
    let today = ShrinkerConfig::TODAY;
    // Priority 12: delta = (10000 >> 12) * 4 / 2 = 2 * 4 / 2 = 4; total_scan = (0 >> 12) + 4 = 4:
    // below a batch and below the cache: nothing scanned, deferred min(0 + 4 - 0, 20000) = 4.
    let p12 = Pressure { priority: 12, nr_scanned: 0, lru_pages: 0 };
    assert_eq!(call(&mut mm, today, &s, p12), (vec![], 4, 0));
    // Priority 2: delta = 2500 * 4 / 2 = 5000; total_scan = (4 >> 2) + 5000 = 5001: four
    // batches (4096), 905 left; deferred = min(4 + 5000 - 4096, 20000) = 908.
    let p2 = Pressure { priority: 2, ..p12 };
    assert_eq!(call(&mut mm, today, &s, p2), (vec![1024; 4], 908, 4096));
    // The `priority` form (v4.16) adds all the deferred work: total_scan = 908 + 5000 = 5908, under
    // the 2 * 10000 cap (delta >= 10000 / 4): five batches (5120), deferred 908 + 5000 - 5120 = 788.
    let v416 = ShrinkerConfig { scan: ScanForm::Priority, ..today };
    assert_eq!(call(&mut mm, v416, &s, p2), (vec![1024; 5], 788, 9216));
}

#[test]
fn small_caches_and_zero_seeks() {
    let mut mm = Mm::new(16, 0);
    // 100 objects at priority 0: delta = 100 * 4 / 2 = 200, total_scan = min(200, 200) = 200.
    // v3.16+ scans the cache though 200 < 1024 (one call of 200); v3.9 scans nothing.
    let s = fake(100, DEFAULT_SEEKS, 1024);
    let p0 = Pressure { priority: 0, nr_scanned: 0, lru_pages: 0 };
    assert_eq!(call(&mut mm, ShrinkerConfig::TODAY, &s, p0), (vec![200], 0, 200));
    let v3 = ShrinkerConfig { scan: ScanForm::PriorityDeferred, small_caches: false, ..ShrinkerConfig::TODAY };
    assert_eq!(call(&mut mm, v3, &s, p0), (vec![], 200, 200));
    // seeks = 0 (the shadow shrinker since v4.19): delta = 300 / 2 = 150 whatever the
    // priority; one batch of 128, deferred 150 - 128 = 22.
    let mut mm = Mm::new(16, 0);
    let z = fake(300, 0, 128);
    assert_eq!(call(&mut mm, ShrinkerConfig::TODAY, &z, Pressure { priority: 12, ..p0 }), (vec![128], 22, 128));
}

/// A node with `frames` frames and one unmapped file whose `pages` pages are cached.
fn cached_file(frames: u32, pages: u32) -> (Mm, Classic, FileId) {
    let mut mm = Mm::new(frames, 0);
    let mut policy = Classic::new(ReclaimConfig::default());
    let file = mm.add_file(pages);
    for i in 0..pages {
        let pfn = mm.frames.alloc(Owner::file(file), i, 0).unwrap();
        mm.insert_cache_page(file, i, pfn);
        policy.add_page(&mut mm, pfn, Origin::FileRead, None);
    }
    (mm, policy, file)
}

fn steal(reclaimer: Reclaimer) -> (Mm, Scanned) {
    let (mut mm, mut policy, file) = cached_file(64, 8);
    let dirty = mm.cached_pages(file)[7].1;
    mm.set_page_dirty(dirty);
    let cfg = ShrinkerConfig { skip_cached_inodes: false, ..ShrinkerConfig::TODAY };
    let mut cx = ShrinkCtx { mm: &mut mm, policy: &mut policy, cfg, reclaimer, target: CgId::ROOT };
    // Lists: 1 dentry, 0 inodes. A scan of 2 gives the dentry list 2 * 1 / (1 + 0 + 1) = 1:
    // the dentry, referenced by the later page insertions, is rotated; the next frees it.
    assert_eq!(SuperBlock.scan(&mut cx, 2), Scanned { freed: 0, stolen: 0 });
    assert_eq!(SuperBlock.scan(&mut cx, 2), Scanned { freed: 1, stolen: 0 });
    assert_eq!(cx.mm.slab.nr_inode_unused_with_pages, 1);
    // Now 0 dentries, 1 inode: the inode walk drops the 7 clean pages, keeps the dirty one,
    // so the inode survives (rotated).
    let done = SuperBlock.scan(&mut cx, 2);
    assert_eq!(cx.mm.slab.file(file).unwrap().nrpages, 1);
    cx.mm.check_slab();
    (mm, done)
}

#[test]
fn inode_steals_count_by_reclaimer() {
    let (mm, done) = steal(Reclaimer::Kswapd);
    assert_eq!(done, Scanned { freed: 0, stolen: 7 });
    assert_eq!((mm.stat.get(VmEvent::KswapdInodesteal), mm.stat.get(VmEvent::Pginodesteal)), (7, 0));
    let (mm, _) = steal(Reclaimer::Direct);
    assert_eq!((mm.stat.get(VmEvent::KswapdInodesteal), mm.stat.get(VmEvent::Pginodesteal)), (0, 7));
}

#[test]
fn clean_inode_is_evicted_and_cached_one_skipped_since_v5_16() {
    for skip in [false, true] {
        let (mut mm, mut policy, file) = cached_file(64, 8);
        let cfg = ShrinkerConfig { skip_cached_inodes: skip, ..ShrinkerConfig::TODAY };
        let mut cx =
            ShrinkCtx { mm: &mut mm, policy: &mut policy, cfg, reclaimer: Reclaimer::Kswapd, target: CgId::ROOT };
        SuperBlock.scan(&mut cx, 2);
        SuperBlock.scan(&mut cx, 2);
        // The unused inode has 8 pages: counted (and stolen, then evicted) only before v5.16.
        assert_eq!(SuperBlock.count(&mut cx), if skip { 0 } else { 1 });
        let done = SuperBlock.scan(&mut cx, 2);
        let expect = if skip { Scanned::default() } else { Scanned { freed: 1, stolen: 8 } };
        assert_eq!(done, expect);
        let objects = (cx.mm.slab.dentry.objects(), cx.mm.slab.inode.objects(), cx.mm.slab.xa_node.objects());
        assert_eq!(objects, if skip { (0, 1, 1) } else { (0, 0, 0) });
        assert_eq!(mm.slab.file(file).unwrap().nrpages, if skip { 8 } else { 0 });
        assert_eq!(policy.lru_sizes().total(), if skip { 8 } else { 0 });
        mm.check_slab();
    }
}

#[test]
fn a_reopened_inode_gets_a_prunable_dentry() {
    let (mut mm, mut policy, file) = cached_file(64, 8);
    let cfg = ShrinkerConfig { skip_cached_inodes: false, ..ShrinkerConfig::TODAY };
    let mut cx = ShrinkCtx { mm: &mut mm, policy: &mut policy, cfg, reclaimer: Reclaimer::Direct, target: CgId::ROOT };
    SuperBlock.scan(&mut cx, 2);
    assert_eq!(SuperBlock.scan(&mut cx, 2).freed, 1, "the dentry goes, the inode is unused");
    // Page 7 leaves and comes back: a lookup makes a new, unreferenced dentry for the inode.
    let pfn = cx.mm.cached_pages(file)[7].1;
    assert!(cx.policy.invalidate_page(cx.mm, pfn));
    cx.mm.set_cache_entry(file, 7, CacheEntry::EMPTY);
    cx.mm.frames.free(pfn);
    let pfn = cx.mm.frames.alloc(Owner::file(file), 7, 0).unwrap();
    cx.mm.insert_cache_page(file, 7, pfn);
    cx.policy.add_page(cx.mm, pfn, Origin::FileRead, None);
    assert_eq!((cx.mm.slab.nr_dentry_unused, cx.mm.slab.nr_inode_unused), (1, 0));
    assert_eq!(SuperBlock.scan(&mut cx, 2), Scanned { freed: 1, stolen: 0 });
    mm.check_slab();
}

/// Evicts page `i` of `file` leaving a shadow, as reclaim does.
fn evict_to_shadow(mm: &mut Mm, file: FileId, i: u32) {
    let pfn = mm.files[file.0 as usize].cache[i as usize].pfn().unwrap();
    mm.set_cache_entry(file, i, CacheEntry::shadow(Shadow(i as u64)));
    mm.frames.free(pfn);
}

#[test]
fn shadow_nodes_are_trimmed_above_the_limit() {
    // 48 frames; a 640-page file cached one page at a time and evicted to shadows: 10 nodes.
    let mut mm = Mm::new(48, 0);
    let file = mm.add_file(640);
    for i in 0..640 {
        let pfn = mm.frames.alloc(Owner::file(file), i, 0).unwrap();
        mm.insert_cache_page(file, i, pfn);
        evict_to_shadow(&mut mm, file, i);
    }
    assert_eq!((mm.slab.shadow_nodes, mm.slab.xa_node.objects()), (10, 10));
    let mut policy = Classic::new(ReclaimConfig::default());
    let cfg = ShrinkerConfig { shadow_limit: ShadowLimit::Present8, ..ShrinkerConfig::TODAY };
    let mut cx = ShrinkCtx { mm: &mut mm, policy: &mut policy, cfg, reclaimer: Reclaimer::Kswapd, target: CgId::ROOT };
    // v4.20+ without memory cgroups: max_nodes = 48 >> 3 = 6, freeable 4; seeks 0: delta = 4 / 2 = 2; total_scan = 2,
    // under a batch (128) and the cache (4): deferred 2.
    let p = Pressure { priority: 0, nr_scanned: 0, lru_pages: 0 };
    assert_eq!(ShadowNodes.count(&mut cx), 4);
    do_shrink_slab(&mut cx, &ShadowNodes, p);
    assert_eq!((cx.mm.slab.shadow_nodes, cx.mm.slab.nr_deferred[1]), (10, 2));
    // Next call: total_scan = (2 >> 0) + 2 = 4 >= freeable: the 4 oldest nodes go.
    do_shrink_slab(&mut cx, &ShadowNodes, p);
    assert_eq!(cx.mm.slab.shadow_nodes, 6);
    assert_eq!(cx.mm.stat.get(VmEvent::WorkingsetNodereclaim), 4);
    assert_eq!(cx.mm.files[0].cache[..256].iter().filter(|e| !e.is_empty()).count(), 0);
    // v3.15's limit, 48 >> 4 = 3: three more are freeable.
    cx.cfg.shadow_limit = ShadowLimit::Present16;
    assert_eq!(ShadowNodes.count(&mut cx), 3);
    mm.check_slab();
}

/// v6.12 with a group `a`: a 128-page file of a's evicted to shadows (2 nodes on
/// a's list) and 128 swap slots holding anon shadows (slots 1..=128: nodes 0, 1, 2,
/// on the root's list: the swap cache is charged to no group). a holds 16 pages
/// of its own: it keeps 16 >> 3 = 2 nodes; the root holds none of its own (its
/// 16 are a's): all 3 of its nodes are over the limit.
fn swap_and_file_shadows() -> (Mm, CgId) {
    let mut mm = Mm::new(200, 256);
    mm.slab.swap_cache_nodes = true;
    let a = mm.cgroups.create("a");
    let file = mm.add_file(128);
    mm.files[file.0 as usize].cg = a;
    for i in 0..128 {
        let pfn = mm.frames.alloc(Owner::file(file), i, 0).unwrap();
        mm.insert_cache_page(file, i, pfn);
        evict_to_shadow(&mut mm, file, i);
        let slot = mm.swap.alloc(mm::RegionId(0), i).unwrap();
        mm.set_swap_cache(slot, CacheEntry::shadow(Shadow(i as u64)));
    }
    assert_eq!((mm.slab.shadow_nodes, mm.slab.xa_node.objects()), (5, 5));
    assert_eq!((mm.slab.shadow_nodes_of(CgId::ROOT), mm.slab.shadow_nodes_of(a)), (3, 2));
    mm.cgroups.charge(a, 16);
    (mm, a)
}

#[test]
fn swap_cache_shadows_are_the_root_groups_and_each_group_keeps_its_own_pages_worth() {
    let (mut mm, a) = swap_and_file_shadows();
    let mut policy = Classic::new(ReclaimConfig::default());
    let cfg = ShrinkerConfig::TODAY;
    let mut cx = ShrinkCtx { mm: &mut mm, policy: &mut policy, cfg, reclaimer: Reclaimer::Kswapd, target: CgId::ROOT };
    assert_eq!(ShadowNodes.count(&mut cx), 3);
    assert_eq!(ShadowNodes.scan(&mut cx, 3).freed, 3);
    assert_eq!((mm.slab.shadow_nodes_of(CgId::ROOT), mm.slab.shadow_nodes_of(a)), (0, 2));
    assert!((1..=128).all(|slot| mm.swap.slot(slot).cache.is_empty()), "the anon shadows are gone");
    assert_eq!(mm.files[0].cache.iter().filter(|e| e.as_shadow().is_some()).count(), 128);
    assert_eq!((mm.stat.get(VmEvent::WorkingsetNodereclaim), mm.slab.xa_node.objects()), (3, 2));
    mm.check_slab();
}

/// A group's own reclaim (memory.high, memory.max, memory.reclaim) shrinks its
/// subtree's lists only: the root's 3 excess nodes (the swap cache's) stay, and
/// a's list is within its limit. With a's pages halved (8: 1 node kept) its
/// one excess node goes (the one node `do_shrink_slab` asks for), still none
/// of the root's.
#[test]
fn a_groups_reclaim_leaves_the_roots_swap_cache_nodes() {
    let (mut mm, a) = swap_and_file_shadows();
    let mut policy = Classic::new(ReclaimConfig::default());
    let cfg = ShrinkerConfig::TODAY;
    let mut cx = ShrinkCtx { mm: &mut mm, policy: &mut policy, cfg, reclaimer: Reclaimer::Memcg, target: a };
    assert_eq!(ShadowNodes.count(&mut cx), 0);
    assert_eq!(ShadowNodes.scan(&mut cx, 3).freed, 0);
    cx.mm.cgroups.uncharge(a, 8);
    assert_eq!(ShadowNodes.count(&mut cx), 1);
    assert_eq!(ShadowNodes.scan(&mut cx, 1).freed, 1);
    assert_eq!((mm.slab.shadow_nodes_of(CgId::ROOT), mm.slab.shadow_nodes_of(a)), (3, 1));
    assert!((1..=128).all(|slot| mm.swap.slot(slot).cache.as_shadow().is_some()), "the anon shadows stay");
    mm.check_slab();
}

#[test]
fn a_node_with_a_page_is_not_shadow_only() {
    let (mut mm, mut policy, file) = cached_file(80, 64);
    let mut evict = |mm: &mut Mm, i: u32| {
        let pfn = mm.files[file.0 as usize].cache[i as usize].pfn().unwrap();
        assert!(policy.invalidate_page(mm, pfn));
        evict_to_shadow(mm, file, i);
    };
    for i in 1..64 {
        evict(&mut mm, i);
    }
    assert_eq!(mm.slab.shadow_nodes, 0);
    evict(&mut mm, 0);
    assert_eq!(mm.slab.shadow_nodes, 1);
    mm.check_slab();
}

proptest! {
    /// Free frames + LRU pages + slab pages always make up the whole node,
    /// whatever mix of insertions, evictions and shrinking happens.
    #[test]
    fn page_accounting_is_conserved(ops in proptest::collection::vec((0u8..4, 0u32..3, 0u32..200), 1..300)) {
        let frames = 160;
        let mut mm = Mm::new(frames, 0);
        let mut policy = Classic::new(ReclaimConfig::default());
        let files: Vec<FileId> = (0..3).map(|_| mm.add_file(200)).collect();
        let cfg = ShrinkerConfig { skip_cached_inodes: false, shadow_limit: ShadowLimit::Present16, ..ShrinkerConfig::TODAY };
        for (op, f, i) in ops {
            let file = files[f as usize];
            let slot = mm.files[file.0 as usize].cache[i as usize];
            match op {
                0 | 1 if slot.pfn().is_none() => {
                    let Some(pfn) = mm.frames.alloc(Owner::file(file), i, 0) else { continue };
                    let shadow = mm.insert_cache_page(file, i, pfn);
                    policy.add_page(&mut mm, pfn, Origin::FileRead, shadow);
                }
                2 if slot.pfn().is_some() => {
                    let pfn = slot.pfn().unwrap();
                    prop_assume!(mm.frames[pfn].flags.has(PageFlags::LRU));
                    policy.invalidate_page(&mut mm, pfn);
                    evict_to_shadow(&mut mm, file, i);
                }
                3 => {
                    let mut cx = ShrinkCtx { mm: &mut mm, policy: &mut policy, cfg, reclaimer: Reclaimer::Direct, target: CgId::ROOT };
                    let p = Pressure { priority: (i % 13) as i32, nr_scanned: 0, lru_pages: 0 };
                    do_shrink_slab(&mut cx, &ShadowNodes, p);
                    do_shrink_slab(&mut cx, &SuperBlock, p);
                }
                _ => {}
            }
            let total = mm.nr_free() + policy.lru_sizes().total() + mm.slab.reclaimable_pages();
            prop_assert_eq!(total, frames as u64);
            mm.check_slab();
        }
    }
}
