//! zram's compressed store: the zsmalloc pool that keeps swapped-out pages in RAM.
//!
//! A page written to zram is compressed and stored as one zsmalloc object, in
//! page frames the pool takes from the free list; a page of one repeated word
//! ("same-filled", zero pages among them) is recorded in the slot's table entry
//! and takes no pool memory. Freeing the swap slot frees the object
//! (`zram_slot_free_notify`). The counters are those of
//! `/sys/block/zram0/mm_stat`.
//!
//! Simplification S-ZR1: zsmalloc's size classes, zspage chains and the handle
//! overhead are the kernel's, but each class is packed as if compaction ran at
//! every free (pages of a class = whole zspages its objects need), so
//! fragmentation between compactions is not modelled.
//! Simplification S-ZR2: a page's compressed size comes from a configured ratio
//! and whether it is same-filled from a hash of its identity, as the simulator
//! has no page contents; zram's slot table and the handle cache are not charged.

use crate::frame::{FrameTable, Pfn};
use crate::PAGE_SIZE;

/// KERNEL: `ZS_HANDLE_SIZE`: zs_malloc() adds a handle word to every object.
pub const ZS_HANDLE_SIZE: u32 = 8;
/// KERNEL: `ZS_MIN_ALLOC_SIZE` on x86-64 (smallest size class).
const ZS_MIN_ALLOC_SIZE: u32 = 32;
/// KERNEL: `ZS_SIZE_CLASS_DELTA` = `PAGE_SIZE >> CLASS_BITS` (8).
const ZS_SIZE_CLASS_DELTA: u32 = (PAGE_SIZE as u32) >> 8;
/// KERNEL: `ZS_MAX_PAGES_PER_ZSPAGE` (v6.2: 4 pages per zspage at most).
const ZS_MAX_PAGES_PER_ZSPAGE: u32 = 4;
/// KERNEL: `ZS_SIZE_CLASSES`.
const ZS_SIZE_CLASSES: usize = ((PAGE_SIZE as u32 - ZS_MIN_ALLOC_SIZE).div_ceil(ZS_SIZE_CLASS_DELTA) + 1) as usize;
/// A slot's table entry: nothing stored.
const EMPTY: u16 = 0;
/// A slot's table entry: a same-filled page (`ZRAM_SAME`), no object.
const SAME: u16 = u16::MAX;

/// How pages compress; fixed for a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ZramConfig {
    /// Bytes a page that is not same-filled compresses to (1..=4096).
    pub comp_len: u32,
    /// Pages per million that are same-filled (zero pages among them).
    pub same_ppm: u32,
    /// `mem_limit` in pages (0 = none): a write that would grow the pool past it fails.
    pub limit_pages: u64,
}

/// One zsmalloc size class: object size and the zspage chain that holds them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct SizeClass {
    size: u32,
    pages_per_zspage: u32,
    objs_per_zspage: u32,
}

/// KERNEL: `get_pages_per_zspage()`: the chain length (1..=4 pages) that wastes the
/// least space for objects of `size` bytes; the shortest wins a tie.
fn pages_per_zspage(size: u32) -> u32 {
    let page = PAGE_SIZE as u32;
    let used_pct = |n: u32| {
        let zspage = n * page;
        (zspage - zspage % size) * 100 / zspage
    };
    (1..=ZS_MAX_PAGES_PER_ZSPAGE).fold(1, |best, n| if used_pct(n) > used_pct(best) { n } else { best })
}

/// KERNEL: `get_size_class_index()`.
fn class_index(size: u32) -> usize {
    let idx =
        if size < ZS_MIN_ALLOC_SIZE { 0 } else { (size - ZS_MIN_ALLOC_SIZE).div_ceil(ZS_SIZE_CLASS_DELTA) as usize };
    idx.min(ZS_SIZE_CLASSES - 1)
}

/// `/sys/block/zram0/mm_stat`, in its column order (bytes or pages as the kernel shows them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MmStat {
    /// Uncompressed size of the pages stored, bytes (same-filled pages included).
    pub orig_data_size: u64,
    /// Compressed size of the objects stored, bytes.
    pub compr_data_size: u64,
    /// Pool memory, bytes (`zs_get_total_pages() << PAGE_SHIFT`).
    pub mem_used_total: u64,
    /// `mem_limit`, bytes (0 = none).
    pub mem_limit: u64,
    /// Largest pool size seen, bytes.
    pub mem_used_max: u64,
    /// Same-filled pages stored (no object).
    pub same_pages: u64,
    /// Pages freed by compaction (always 0: S-ZR1 packs at every free).
    pub pages_compacted: u64,
    /// Incompressible pages stored whole.
    pub huge_pages: u64,
    /// Incompressible pages stored since the device was set up.
    pub huge_pages_since: u64,
}

impl MmStat {
    /// The columns with their names, in `mm_stat` order.
    pub fn named(&self) -> [(&'static str, u64); 9] {
        [
            ("orig_data_size", self.orig_data_size),
            ("compr_data_size", self.compr_data_size),
            ("mem_used_total", self.mem_used_total),
            ("mem_limit", self.mem_limit),
            ("mem_used_max", self.mem_used_max),
            ("same_pages", self.same_pages),
            ("pages_compacted", self.pages_compacted),
            ("huge_pages", self.huge_pages),
            ("huge_pages_since", self.huge_pages_since),
        ]
    }
}

/// The compressed store of a zram swap device.
#[derive(Clone, Debug)]
pub struct ZramPool {
    cfg: ZramConfig,
    /// Size class by class index; merged classes share their larger neighbour's entry.
    classes: Vec<SizeClass>,
    /// The class index that serves each index (`pool->size_class[i]` after merging).
    serves: Vec<u8>,
    /// KERNEL: `huge_class_size`: objects of at least this size are stored as whole pages.
    huge_class_size: u32,
    /// Objects held per serving class.
    objs: Vec<u32>,
    /// Pool pages held per serving class.
    class_pages: Vec<u32>,
    /// The frames the pool holds.
    frames: Vec<Pfn>,
    /// Per swap slot: [`EMPTY`], [`SAME`], or the stored object's compressed length.
    table: Vec<u16>,
    stat: MmStat,
    /// Writes refused for want of memory or over `mem_limit` (`failed_writes`).
    failed_writes: u64,
}

impl ZramPool {
    /// An empty pool for a device of `nr_slots` slots.
    pub fn new(cfg: ZramConfig, nr_slots: u32) -> ZramPool {
        assert!((1..=PAGE_SIZE as u32).contains(&cfg.comp_len), "compressed length {} outside 1..=4096", cfg.comp_len);
        let mut classes = vec![SizeClass { size: 0, pages_per_zspage: 0, objs_per_zspage: 0 }; ZS_SIZE_CLASSES];
        let mut serves = vec![0u8; ZS_SIZE_CLASSES];
        let mut huge_class_size = 0;
        let mut prev: Option<usize> = None;
        // Largest class first, as zs_create_pool() builds them.
        for i in (0..ZS_SIZE_CLASSES).rev() {
            let size = (ZS_MIN_ALLOC_SIZE + i as u32 * ZS_SIZE_CLASS_DELTA).min(PAGE_SIZE as u32);
            let ppz = pages_per_zspage(size);
            let opz = ppz * PAGE_SIZE as u32 / size;
            if ppz != 1 && opz != 1 && huge_class_size == 0 {
                huge_class_size = size - (ZS_HANDLE_SIZE - 1);
            }
            let c = SizeClass { size, pages_per_zspage: ppz, objs_per_zspage: opz };
            // can_merge(): neighbours with the same chain and object count share one class.
            match prev {
                Some(p) if classes[p].pages_per_zspage == ppz && classes[p].objs_per_zspage == opz => {
                    serves[i] = p as u8
                }
                _ => {
                    classes[i] = c;
                    serves[i] = i as u8;
                    prev = Some(i);
                }
            }
        }
        ZramPool {
            cfg,
            classes,
            serves,
            huge_class_size,
            objs: vec![0; ZS_SIZE_CLASSES],
            class_pages: vec![0; ZS_SIZE_CLASSES],
            frames: Vec::new(),
            table: vec![EMPTY; nr_slots as usize],
            stat: MmStat { mem_limit: cfg.limit_pages * PAGE_SIZE, ..MmStat::default() },
            failed_writes: 0,
        }
    }

    /// Pool pages held (`zs_get_total_pages`).
    pub fn pages(&self) -> u64 {
        self.frames.len() as u64
    }

    /// The `mm_stat` columns now.
    pub fn mm_stat(&self) -> MmStat {
        MmStat { mem_used_total: self.pages() * PAGE_SIZE, ..self.stat }
    }

    /// Writes refused (no free page for the pool, or over `mem_limit`).
    pub fn failed_writes(&self) -> u64 {
        self.failed_writes
    }

    /// KERNEL: `huge_class_size` of this pool.
    pub fn huge_class_size(&self) -> u32 {
        self.huge_class_size
    }

    /// True if `slot` holds a page (an object or a same-filled entry).
    pub fn holds(&self, slot: u32) -> bool {
        self.table[slot as usize] != EMPTY
    }

    /// True if `slot` holds an object in the pool (not a same-filled entry).
    pub fn has_object(&self, slot: u32) -> bool {
        !matches!(self.table[slot as usize], EMPTY | SAME)
    }

    /// True if the page with identity `key` is same-filled (a fixed property of the page).
    fn same_filled(&self, key: u64) -> bool {
        if self.cfg.same_ppm == 0 {
            return false;
        }
        // splitmix64's finaliser: a fixed, well-mixed function of the page's identity.
        let mut z = key.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        z % 1_000_000 < self.cfg.same_ppm as u64
    }

    /// Pages a class needs for `objs` objects (whole zspages, S-ZR1).
    fn pages_for(&self, class: usize, objs: u32) -> u32 {
        let c = self.classes[class];
        objs.div_ceil(c.objs_per_zspage) * c.pages_per_zspage
    }

    /// `zram_write_page()`: stores the page `key` written to `slot`, taking pool
    /// pages from `frames` as needed (reclaim's PF_MEMALLOC context ignores the
    /// watermarks). False if the write fails: no free frame, or the pool would
    /// exceed `mem_limit`; the slot then keeps what it held.
    pub fn write(&mut self, frames: &mut FrameTable, slot: u32, key: u64) -> bool {
        if self.same_filled(key) {
            self.free(frames, slot);
            self.table[slot as usize] = SAME;
            self.stat.same_pages += 1;
            self.stat.orig_data_size += PAGE_SIZE;
            return true;
        }
        let comp_len = if self.cfg.comp_len >= self.huge_class_size { PAGE_SIZE as u32 } else { self.cfg.comp_len };
        let class = self.serves[class_index(comp_len + ZS_HANDLE_SIZE)] as usize;
        let need = self.pages_for(class, self.objs[class] + 1) - self.class_pages[class];
        let have = self.frames.len();
        for _ in 0..need {
            match frames.alloc_kernel(crate::Migratetype::Movable) {
                Some(pfn) => self.frames.push(pfn),
                None => {
                    self.release(frames, have);
                    self.failed_writes += 1;
                    return false;
                }
            }
        }
        let used = self.pages();
        self.stat.mem_used_max = self.stat.mem_used_max.max(used * PAGE_SIZE);
        if self.cfg.limit_pages != 0 && used > self.cfg.limit_pages {
            self.release(frames, have);
            self.failed_writes += 1;
            return false;
        }
        self.objs[class] += 1;
        self.class_pages[class] += need;
        // The slot's previous contents go only once the new object is in place.
        self.free(frames, slot);
        self.table[slot as usize] = comp_len as u16;
        self.stat.compr_data_size += comp_len as u64;
        self.stat.orig_data_size += PAGE_SIZE;
        if comp_len == PAGE_SIZE as u32 {
            self.stat.huge_pages += 1;
            self.stat.huge_pages_since += 1;
        }
        true
    }

    /// Compressed bytes of `slot`'s object (0 when empty or same-filled).
    pub fn compressed_len(&self, slot: u32) -> u64 {
        match self.table[slot as usize] {
            EMPTY | SAME => 0,
            len => len as u64,
        }
    }

    /// `zram_free_page()`: drops what `slot` holds, returning pool pages no longer needed.
    pub fn free(&mut self, frames: &mut FrameTable, slot: u32) {
        let entry = std::mem::replace(&mut self.table[slot as usize], EMPTY);
        match entry {
            EMPTY => return,
            SAME => self.stat.same_pages -= 1,
            len => {
                let len = len as u32;
                let class = self.serves[class_index(len + ZS_HANDLE_SIZE)] as usize;
                self.objs[class] -= 1;
                let keep = self.pages_for(class, self.objs[class]);
                let give = self.class_pages[class] - keep;
                self.class_pages[class] = keep;
                self.release(frames, self.frames.len() - give as usize);
                self.stat.compr_data_size -= len as u64;
                if len == PAGE_SIZE as u32 {
                    self.stat.huge_pages -= 1;
                }
            }
        }
        self.stat.orig_data_size -= PAGE_SIZE;
    }

    /// Returns pool frames beyond the first `keep` to the free list.
    fn release(&mut self, frames: &mut FrameTable, keep: usize) {
        for pfn in self.frames.drain(keep..) {
            frames.free(pfn);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool(comp_len: u32, same_ppm: u32, limit_pages: u64) -> ZramPool {
        ZramPool::new(ZramConfig { comp_len, same_ppm, limit_pages }, 64)
    }

    #[test]
    fn size_classes_follow_zsmalloc() {
        // 32-byte objects: one page holds 128 of them.
        assert_eq!(pages_per_zspage(32), 1);
        // 1376 bytes: 1 page wastes 1344 (67%), 2 pages 1312 (83%), 3 pages 1280 (89%), 4 pages 1248 (92%).
        assert_eq!(pages_per_zspage(1376), 4);
        // 3264 bytes: 79% of 1..3 pages, 99% of 4 (five objects); 2048 fills any length: the shortest wins.
        assert_eq!(pages_per_zspage(3264), 4);
        assert_eq!(pages_per_zspage(2048), 1);
        assert_eq!(class_index(0), 0);
        assert_eq!(class_index(33), 1);
        assert_eq!(class_index(1373), 84);
        assert_eq!(class_index(4104), ZS_SIZE_CLASSES - 1);
        assert_eq!(ZS_SIZE_CLASSES, 255);
        // 3264 is the largest class with more than one object and page per zspage:
        // compressed lengths from 3264 - 7 are stored whole.
        assert_eq!(pool(1000, 0, 0).huge_class_size(), 3257);
    }

    #[test]
    fn pool_pages_charged_and_freed_exactly() {
        let mut frames = FrameTable::new(16);
        // 1365-byte pages (3:1): object 1373 -> class 1376, 11 objects per 4-page zspage.
        let mut z = pool(1365, 0, 0);
        for slot in 1..=11 {
            assert!(z.write(&mut frames, slot, slot as u64));
        }
        assert_eq!(z.pages(), 4);
        assert_eq!(frames.nr_free(), 12);
        assert!(z.write(&mut frames, 12, 12));
        assert_eq!(z.pages(), 8, "the 12th object opens a second zspage");
        let s = z.mm_stat();
        assert_eq!(
            (s.orig_data_size, s.compr_data_size, s.mem_used_total, s.mem_used_max),
            (12 * 4096, 12 * 1365, 8 * 4096, 8 * 4096)
        );
        z.free(&mut frames, 12);
        assert_eq!((z.pages(), frames.nr_free()), (4, 12));
        // Rewriting a slot replaces its object: the pool does not grow.
        assert!(z.write(&mut frames, 3, 3));
        assert_eq!((z.pages(), z.mm_stat().orig_data_size), (4, 11 * 4096));
        for slot in 1..=11 {
            z.free(&mut frames, slot);
        }
        assert_eq!((z.pages(), frames.nr_free(), z.mm_stat().compr_data_size), (0, 16, 0));
        assert_eq!(z.mm_stat().mem_used_max, 8 * 4096);
        // Freeing an empty slot is a no-op.
        z.free(&mut frames, 5);
        assert_eq!(z.mm_stat().orig_data_size, 0);
    }

    #[test]
    fn huge_and_same_filled_pages() {
        let mut frames = FrameTable::new(8);
        // Incompressible: at the huge threshold a page is stored whole, one page each.
        let mut z = pool(3257, 0, 0);
        assert!(z.write(&mut frames, 1, 1));
        assert!(z.write(&mut frames, 2, 2));
        let s = z.mm_stat();
        assert_eq!((z.pages(), s.compr_data_size, s.huge_pages, s.huge_pages_since), (2, 8192, 2, 2));
        z.free(&mut frames, 1);
        assert_eq!((z.pages(), z.mm_stat().huge_pages, z.mm_stat().huge_pages_since), (1, 1, 2));
        // Every page same-filled: stored, counted, no pool memory.
        let mut z = pool(1365, 1_000_000, 0);
        assert!(z.write(&mut frames, 1, 1));
        let s = z.mm_stat();
        assert_eq!((z.pages(), s.same_pages, s.orig_data_size, s.compr_data_size), (0, 1, 4096, 0));
        z.free(&mut frames, 1);
        assert_eq!(z.mm_stat().same_pages, 0);
        // About a fifth same-filled with 200000 per million.
        let z = pool(1365, 200_000, 0);
        let same = (0..10_000u64).filter(|&k| z.same_filled(k)).count();
        assert!((1800..2200).contains(&same), "{same}");
    }

    #[test]
    fn writes_fail_without_memory_or_over_the_limit() {
        // Two free frames: a 4-page zspage cannot be built; nothing is leaked.
        let mut frames = FrameTable::new(2);
        let mut z = pool(1365, 0, 0);
        assert!(!z.write(&mut frames, 1, 1));
        assert_eq!((z.pages(), frames.nr_free(), z.failed_writes()), (0, 2, 1));
        // mem_limit of 4 pages: the first zspage fits, the second does not.
        let mut frames = FrameTable::new(16);
        let mut z = pool(1365, 0, 4);
        for slot in 1..=11 {
            assert!(z.write(&mut frames, slot, slot as u64));
        }
        assert!(!z.write(&mut frames, 12, 12));
        let s = z.mm_stat();
        assert_eq!(
            (z.pages(), frames.nr_free(), s.mem_used_max, s.mem_limit, z.failed_writes()),
            (4, 12, 8 * 4096, 4 * 4096, 1)
        );
    }
}
