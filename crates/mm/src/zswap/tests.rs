//! zswap's unit tests: exact pool, LRU and group counts on tiny machines.
use super::*;

const CFG: ZswapConfig = ZswapConfig {
    max_pool_percent: 10,
    accept_thr_percent: 90,
    shrinker: true,
    second_chance: true,
    exclusive_loads: true,
};
/// Incompressible pages: one pool page per entry.
const WHOLE: ZramConfig = ZramConfig { comp_len: 4096, same_ppm: 0, limit_pages: 0 };

fn lru(z: &Zswap) -> Vec<u32> {
    let mut v = Vec::new();
    let mut s = z.groups[0].head;
    while s != NIL {
        v.push(s);
        s = z.next[s as usize];
    }
    assert_eq!(v.len() as u64, z.groups[0].len);
    v
}

/// A tiny machine for the pool: its frames, counters, swap slots and groups.
struct Rig {
    frames: FrameTable,
    stat: VmStat,
    swap: SwapMap,
    tree: Cgroups,
}

impl Rig {
    /// `pages` of RAM and `slots` swap slots, the root group only.
    fn new(pages: u32, slots: u32) -> Rig {
        Rig {
            frames: FrameTable::new(pages),
            stat: VmStat::default(),
            swap: SwapMap::new(slots),
            tree: Cgroups::default(),
        }
    }

    /// What the pool's calls see of the machine.
    fn ctx(&mut self) -> ZswapCtx<'_> {
        ZswapCtx { frames: &mut self.frames, stat: &mut self.stat, swap: &self.swap, tree: &self.tree }
    }
}

#[test]
fn a_full_pool_rejects_and_writes_back_to_the_accept_threshold() {
    // 100 pages of RAM: the pool may take 10 pages, and accepts again at 9.
    let mut r = Rig::new(100, 64);
    let mut z = Zswap::new(CFG, WHOLE, 64, 100);
    for slot in 1..=10 {
        assert_eq!(z.store(&mut r.ctx(), CgId::ROOT, slot, slot as u64), Store::Stored);
    }
    assert_eq!((z.pages(), r.frames.nr_free()), (10, 90));
    // The 11th finds the pool full: rejected; the worker rotates the ten
    // referenced entries, then writes back the oldest, down to 9 pages.
    assert_eq!(z.store(&mut r.ctx(), CgId::ROOT, 11, 11), Store::Full);
    assert_eq!(z.take_writebacks(), [1]);
    assert_eq!((z.pages(), z.stat().pool_limit_hit, z.stat().written_back_pages), (9, 1, 1));
    assert_eq!(lru(&z), [2, 3, 4, 5, 6, 7, 8, 9, 10]);
    // At the threshold stores resume; the next full pool writes back slot 2 at once (no longer referenced).
    assert_eq!(z.store(&mut r.ctx(), CgId::ROOT, 12, 12), Store::Stored);
    assert_eq!(z.store(&mut r.ctx(), CgId::ROOT, 13, 13), Store::Full);
    assert_eq!(z.take_writebacks(), [2]);
    assert_eq!(
        (
            r.stat.get(VmEvent::Zswpout),
            r.stat.get(VmEvent::Zswpwb),
            r.stat.get(VmEvent::Pswpout),
            z.stat().pool_limit_hit
        ),
        (11, 2, 2, 2)
    );
    assert_eq!((z.stored_pages(), r.frames.nr_free()), (9, 91));
}

#[test]
fn hysteresis_holds_stores_off_until_the_threshold() {
    // 400 pages of RAM: a 40-page pool that accepts again at 36 pages.
    let mut r = Rig::new(400, 64);
    let mut z = Zswap::new(CFG, WHOLE, 64, 400);
    for slot in 1..=40 {
        assert_eq!(z.store(&mut r.ctx(), CgId::ROOT, slot, slot as u64), Store::Stored);
    }
    // 40 referenced entries: the worker gives up after 16 rotations.
    assert_eq!(z.store(&mut r.ctx(), CgId::ROOT, 41, 41), Store::Full);
    assert_eq!((z.pages(), z.stat().written_back_pages), (40, 0));
    assert_eq!(lru(&z)[..2], [17, 18]);
    // Still full: refused, 16 more rotations; the third call reaches unreferenced entries.
    assert_eq!(z.store(&mut r.ctx(), CgId::ROOT, 42, 42), Store::Full);
    assert_eq!(z.store(&mut r.ctx(), CgId::ROOT, 43, 43), Store::Full);
    // 8 more rotations, then writes 1..=4 down to the threshold of 36 pages.
    assert_eq!(z.take_writebacks(), [1, 2, 3, 4]);
    assert_eq!((z.pages(), z.stat().pool_limit_hit), (36, 3));
    // Without the second chance the oldest goes at once.
    let mut z = Zswap::new(ZswapConfig { second_chance: false, ..CFG }, WHOLE, 64, 400);
    for slot in 1..=41 {
        z.store(&mut r.ctx(), CgId::ROOT, slot, slot as u64);
    }
    assert_eq!(z.take_writebacks(), [1, 2, 3, 4]);
}

#[test]
fn loads_invalidation_and_same_filled_pages() {
    let mut r = Rig::new(100, 64);
    let mut z = Zswap::new(CFG, WHOLE, 16, 100);
    z.store(&mut r.ctx(), CgId::ROOT, 1, 1);
    z.store(&mut r.ctx(), CgId::ROOT, 2, 2);
    // A load without the swap cache keeps the entry; into it (exclusive) frees it.
    assert!(z.load(&mut r.frames, &mut r.stat, 1, false));
    assert!(z.holds(1));
    assert!(z.load(&mut r.frames, &mut r.stat, 1, true));
    assert!(!z.holds(1) && !z.load(&mut r.frames, &mut r.stat, 1, true));
    assert_eq!((r.stat.get(VmEvent::Zswpin), lru(&z)), (2, vec![2]));
    z.invalidate(&mut r.frames, 2);
    assert_eq!((z.pages(), z.stored_pages(), lru(&z)), (0, 0, vec![]));
    // Same-filled pages are stored without pool memory and stay off the LRU.
    let mut z = Zswap::new(CFG, ZramConfig { same_ppm: 1_000_000, ..WHOLE }, 16, 100);
    assert_eq!(z.store(&mut r.ctx(), CgId::ROOT, 3, 3), Store::Stored);
    assert_eq!((z.pages(), z.stored_pages(), z.groups[0].len), (0, 1, 0));
    assert_eq!(z.named()[2], ("same_filled_pages", 1));
}

#[test]
fn an_entry_whose_page_is_in_the_swap_cache_is_not_written_back() {
    let mut r = Rig::new(100, 64);
    let cfg = ZswapConfig { second_chance: false, exclusive_loads: false, ..CFG };
    let mut z = Zswap::new(cfg, WHOLE, 64, 100);
    for i in 1..=10 {
        let slot = r.swap.alloc(crate::RegionId(0), i).unwrap();
        assert_eq!(z.store(&mut r.ctx(), CgId::ROOT, slot, i as u64), Store::Stored);
    }
    // Slot 1 is loaded into the swap cache; the entry stays (no exclusive loads).
    assert!(z.load(&mut r.frames, &mut r.stat, 1, true));
    *r.swap.cache_mut(1) = crate::CacheEntry::resident(50);
    // The worker meets it first: a failure (-EEXIST), off the LRU, kept; then writes back slot 2.
    assert_eq!(z.store(&mut r.ctx(), CgId::ROOT, 11, 11), Store::Full);
    assert_eq!((z.take_writebacks(), z.stat().reject_reclaim_fail), (vec![2], 1));
    assert!(z.holds(1));
    assert_eq!(lru(&z)[0], 3);
    // The shrinker stops at such an entry (LRU_STOP).
    *r.swap.cache_mut(3) = crate::CacheEntry::resident(51);
    assert_eq!(z.shrinker_scan(&mut r.ctx(), 10), 0);
    assert_eq!(z.stat().reject_reclaim_fail, 2);
}

#[test]
fn the_shrinker_counts_by_ratio_less_disk_swapins() {
    let mut r = Rig::new(1000, 64);
    // 4:1 pages (1024 bytes): 8 entries are 2 pages' worth of compressed data.
    let mut z = Zswap::new(CFG, ZramConfig { comp_len: 1024, ..WHOLE }, 16, 1000);
    for slot in 1..=8 {
        z.store(&mut r.ctx(), CgId::ROOT, slot, slot as u64);
    }
    assert_eq!(z.shrinker_count(&r.tree), 8 * 2 / 8);
    // Four device swap-ins protect four entries, once.
    (0..4).for_each(|_| z.note_disk_swapin(CgId::ROOT));
    assert_eq!(z.shrinker_count(&r.tree), 4 * 2 / 8);
    assert_eq!(z.groups[0].disk_swapins, 0);
    // A scan of 10 rotates the 8 referenced entries, then writes back 2.
    assert_eq!(z.shrinker_scan(&mut r.ctx(), 10), 2);
    assert_eq!(z.take_writebacks(), [1, 2]);
    let mut off = Zswap::new(ZswapConfig { shrinker: false, ..CFG }, WHOLE, 16, 1000);
    off.store(&mut r.ctx(), CgId::ROOT, 1, 1);
    assert_eq!(off.shrinker_count(&r.tree), 0);
}

#[test]
fn a_group_at_its_zswap_max_writes_its_own_back_and_writeback_off_keeps_a_group_in() {
    // 100 pages of RAM, a 10-page pool (accepting again at 9), one page per entry.
    let mut r = Rig::new(100, 64);
    let (a, b) = (r.tree.create("a"), r.tree.create("b"));
    r.tree.get_mut(a).limits.zswap_max = 2;
    r.tree.get_mut(b).limits.zswap_writeback = false;
    let mut z = Zswap::new(ZswapConfig { second_chance: false, ..CFG }, WHOLE, 64, 100);
    for slot in [1, 2] {
        assert_eq!(z.store(&mut r.ctx(), a, slot, slot as u64), Store::Stored);
    }
    // a holds 2 pages, its max: the store writes a's oldest back first (shrink_memcg), then goes ahead.
    assert_eq!(z.store(&mut r.ctx(), a, 3, 3), Store::Stored);
    assert_eq!(z.take_writebacks(), [1]);
    assert_eq!(z.group_stat(a), (2 * PAGE_SIZE, 2));
    // With max 0 a store still goes ahead once a writeback in the group succeeds (the kernel's order);
    // with writeback off too it is refused.
    r.tree.get_mut(a).limits.zswap_max = 0;
    assert_eq!(z.store(&mut r.ctx(), a, 4, 4), Store::Stored);
    assert_eq!(z.take_writebacks(), [2]);
    r.tree.get_mut(a).limits.zswap_writeback = false;
    assert_eq!(z.store(&mut r.ctx(), a, 5, 5), Store::GroupLimit);
    r.tree.get_mut(a).limits = crate::cgroup::Limits::default();
    // b fills the pool; its entries are the oldest but may not be written back:
    // the worker's round (root: empty, a: writes 3, b: skipped) stops at the threshold.
    for slot in 10..=17 {
        assert_eq!(z.store(&mut r.ctx(), b, slot, slot as u64), Store::Stored);
    }
    assert_eq!(z.pages(), 10);
    assert_eq!(z.store(&mut r.ctx(), b, 18, 18), Store::Full);
    assert_eq!((z.take_writebacks(), z.pages()), (vec![3], 9));
    // The shrinker counts a's entry only, and its scan skips b.
    assert_eq!(z.shrinker_count(&r.tree), 1);
    assert_eq!(z.shrinker_scan(&mut r.ctx(), 10), 1);
    assert_eq!(z.take_writebacks(), [4]);
    // Each group's compressed pages are charged to it; settled once.
    let mut charges = Vec::new();
    z.settle_charges(|g, d| charges.push((g, d)));
    assert_eq!(charges, [(b, 8)]);
    assert_eq!((z.group_stat(a), z.group_stat(b)), ((0, 0), (8 * PAGE_SIZE, 8)));
}
