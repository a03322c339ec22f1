//! Hand-checked scenarios for CLOCK (`reclaim::policy::clock`): a reference
//! string on four frames with exact evictions and counters, and the
//! anon/file split by swappiness. See issue #19.

use mm::{CacheEntry, FileId, Mm, Owner, PageFlags, VmEvent};
use reclaim::direct::Untimed;
use reclaim::pageout::PageoutEnv;
use reclaim::policy::clock::Clock;
use reclaim::policy::{AccessKind, Origin, ReclaimPolicy};
use reclaim::{ReclaimConfig, Reclaimer, ScanControl};

const ENV: PageoutEnv = PageoutEnv::TODAY;

/// A page cache of a few frames in front of one file, read through a file descriptor.
struct Cache {
    mm: Mm,
    clock: Clock,
    file: FileId,
    /// File pages evicted, in order.
    evicted: Vec<u32>,
}

impl Cache {
    fn new(frames: u32) -> Cache {
        // Three more frames for the file's slab objects (a dentry, an inode, a tree node page).
        let mut mm = Mm::new(frames + 3, 0);
        let file = mm.add_file(16);
        Cache { mm, clock: Clock::new(ReclaimConfig::default()), file, evicted: Vec::new() }
    }

    fn slot(&self, page: u32) -> CacheEntry {
        self.mm.files[self.file.0 as usize].cache[page as usize]
    }

    /// A `read()` of `page`: on a miss with no free frame, direct reclaim at
    /// priority 2 (a quarter of four pages: one page per pass) runs until a
    /// frame is free; then the page is added and marked accessed, as
    /// `filemap_read()` does. Returns the pages the hand looked at.
    fn read(&mut self, page: u32) -> u64 {
        let slot = self.slot(page);
        let mut looked_at = 0;
        let pfn = match slot.pfn() {
            Some(pfn) => pfn,
            None => {
                let before = self.pages();
                while self.mm.frames.nr_free() == 0 {
                    let mut sc = ScanControl::new(Reclaimer::Direct, 1);
                    sc.priority = 2;
                    self.clock.shrink_node(&mut self.mm, &mut sc, ENV, &mut Untimed);
                    assert_eq!(sc.nr_scanned, 1, "one hand step per pass");
                    looked_at += sc.nr_scanned;
                    self.clock.check_invariants(&self.mm);
                }
                let gone: Vec<u32> = before.into_iter().filter(|&p| self.slot(p).as_shadow().is_some()).collect();
                self.evicted.extend(gone);
                let pfn = self.mm.frames.alloc(Owner::file(self.file), page, 0).unwrap();
                self.mm.insert_cache_page(self.file, page, pfn);
                self.clock.add_page(&mut self.mm, pfn, Origin::FileRead, slot.as_shadow());
                pfn
            }
        };
        self.clock.on_access(&mut self.mm, pfn, AccessKind::MarkAccessed);
        looked_at
    }

    /// Resident file pages from head (newest) to tail (the hand).
    fn pages(&self) -> Vec<u32> {
        self.clock.list_pages(&self.mm, false).into_iter().map(|pfn| self.mm.frames[pfn].index).collect()
    }

    fn stat(&self, ev: VmEvent) -> u64 {
        self.mm.stat.get(ev)
    }
}

/// Four frames, reads of 1 2 3 4 5 3 6 7 8 1. Every page is read with
/// `PG_referenced` set. Reading 5 sends the hand round once: it clears 1, 2,
/// 3 and 4 (each goes to the head) and then evicts 1: five looks. The hit on
/// 3 sets its bit again. Reading 6 evicts 2 (one look). Reading 7 gives 3 its
/// second chance and evicts 4 (two looks), where FIFO would evict 3. Reading 8
/// clears 5 and 6 (read after the first round) and evicts 3 (three looks).
/// Reading 1 again finds its shadow: one refault, which does not activate; 7
/// is cleared and 5 evicted (two looks). 13 looks, 5 evictions.
#[test]
fn reference_string_on_four_frames() {
    let mut c = Cache::new(4);
    let looks: Vec<u64> = [1, 2, 3, 4, 5, 3, 6, 7, 8, 1].iter().map(|&p| c.read(p)).collect();
    assert_eq!(looks, [0, 0, 0, 0, 5, 0, 1, 2, 3, 2]);
    assert_eq!(c.evicted, [1, 2, 4, 3, 5]);
    assert_eq!(c.pages(), [1, 7, 8, 6]);
    assert_eq!(c.stat(VmEvent::PgscanDirect), 13);
    assert_eq!(c.stat(VmEvent::PgscanFile), 13);
    assert_eq!(c.stat(VmEvent::PgscanAnon), 0);
    assert_eq!(c.stat(VmEvent::PgstealDirect), 5);
    assert_eq!(c.stat(VmEvent::PgstealFile), 5);
    assert_eq!(c.stat(VmEvent::WorkingsetRefaultFile), 1);
    assert_eq!(c.stat(VmEvent::WorkingsetActivateFile), 0);
    assert_eq!(c.stat(VmEvent::Pgactivate), 0);
    let sizes = c.clock.lru_sizes();
    assert_eq!((sizes.inactive_file, sizes.active_file, sizes.total()), (4, 0, 4));
    // Pages 1 and 8 were read after the hand last passed them; it cleared 7 and 6.
    let referenced: Vec<bool> = c
        .clock
        .list_pages(&c.mm, false)
        .into_iter()
        .map(|pfn| c.mm.frames[pfn].flags.has(PageFlags::REFERENCED))
        .collect();
    assert_eq!(referenced, [true, false, true, false]);
}

/// 800 anon and 800 file pages, swap available: at priority 2 each type
/// offers 200 pages, split 60 : 140 at swappiness 60; file only without free
/// swap; everything at priority 0 unless swappiness is 0.
#[test]
fn scan_targets_split_by_swappiness() {
    let targets = |swappiness: u32, swap: u32, priority: i32| {
        let mut mm = Mm::new(2048, swap);
        let region = mm.add_anon_region(800);
        let file = mm.add_file(800);
        let mut clock = Clock::new(ReclaimConfig { swappiness, ..ReclaimConfig::default() });
        for index in 0..800 {
            let pfn = mm.frames.alloc(Owner::anon(region), index, PageFlags::SWAPBACKED).unwrap();
            clock.add_page(&mut mm, pfn, Origin::AnonFault, None);
            let pfn = mm.frames.alloc(Owner::file(file), index, 0).unwrap();
            clock.add_page(&mut mm, pfn, Origin::FileRead, None);
        }
        clock.check_invariants(&mm);
        let mut sc = ScanControl::new(Reclaimer::Kswapd, 32);
        sc.priority = priority;
        clock.scan_targets(&mm, &sc)
    };
    assert_eq!(targets(60, 1024, 2), [60, 140]);
    assert_eq!(targets(100, 1024, 2), [100, 100]);
    assert_eq!(targets(200, 1024, 2), [200, 0]);
    assert_eq!(targets(60, 0, 2), [0, 200]);
    assert_eq!(targets(60, 1024, 0), [800, 800]);
    assert_eq!(targets(0, 1024, 0), [0, 800]);
}
