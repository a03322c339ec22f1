//! The superblock shrinker: unused dentries and inodes (`super_cache_count`,
//! `super_cache_scan`, `prune_dcache_sb`, `prune_icache_sb`, fs/super.c,
//! fs/dcache.c, fs/inode.c).
//!
//! Freeing an unused dentry drops the last reference to its inode, which
//! joins the inode LRU. An unused inode without pages is evicted, taking its
//! shadow entries with it. Until v5.16 an unused inode with page cache was on
//! the LRU too: the walk dropped its clean, unmapped pages
//! (`invalidate_mapping_pages`, counted in `kswapd_inodesteal` when kswapd
//! walks, `pginodesteal` otherwise) and evicted the inode if none remained;
//! since (`inode_lru_skips_cached`) such inodes stay off the list until their
//! last page goes. Referenced objects are rotated once.

use crate::control::Reclaimer;
use crate::shrinker::{Scanned, ShrinkCtx, Shrinker, DEFAULT_SEEKS};
use mm::{CacheEntry, FileId, LruItem, PageFlags, ShrinkerId, VmEvent};

/// KERNEL: `sb->s_shrink.batch`.
const SB_BATCH: u64 = 1024;

/// The filesystem's superblock shrinker (one filesystem).
pub struct SuperBlock;

impl SuperBlock {
    /// Objects on the two lists, as `list_lru_count` sees them.
    fn lists(cx: &ShrinkCtx) -> (u64, u64) {
        let s = &cx.mm.slab;
        let busy = if cx.cfg.skip_cached_inodes { s.nr_inode_unused_with_pages } else { 0 };
        (s.nr_dentry_unused, s.nr_inode_unused - busy)
    }

    /// `prune_dcache_sb()`: walks `n` dentries; returns those freed.
    fn prune_dcache(cx: &mut ShrinkCtx, n: u64) -> u64 {
        let mut freed = 0;
        for _ in 0..n {
            match cx.mm.dentry_lru_head() {
                LruItem::Empty => break,
                LruItem::Rotated => {}
                LruItem::Unused(file) => {
                    cx.mm.free_dentry(file);
                    freed += 1;
                }
            }
        }
        freed
    }

    /// `prune_icache_sb()`: walks `n` inodes; returns what it freed and stole.
    fn prune_icache(cx: &mut ShrinkCtx, n: u64) -> Scanned {
        let mut done = Scanned::default();
        for _ in 0..n {
            let file = match cx.mm.inode_lru_head(cx.cfg.skip_cached_inodes) {
                LruItem::Empty => break,
                LruItem::Rotated => continue,
                LruItem::Unused(file) => file,
            };
            if cx.mm.slab.file(file).is_some_and(|f| f.nrpages > 0) {
                done.stolen += Self::invalidate(cx, file);
                if cx.mm.slab.file(file).is_some_and(|f| f.nrpages > 0) {
                    cx.mm.rotate_inode(file);
                    continue;
                }
            }
            cx.mm.evict_inode(file);
            done.freed += 1;
        }
        done
    }

    /// `invalidate_mapping_pages()`: drops the file's clean, idle pages (no
    /// shadow entries are left); returns how many.
    fn invalidate(cx: &mut ShrinkCtx, file: FileId) -> u64 {
        let busy = PageFlags::DIRTY | PageFlags::WRITEBACK | PageFlags::LOCKED | PageFlags::SWAPCACHE;
        let mut reaped = 0;
        for (index, pfn) in cx.mm.cached_pages(file) {
            let flags = cx.mm.frames[pfn].flags;
            if flags.0 & busy != 0 || !flags.has(PageFlags::LRU) || !cx.policy.invalidate_page(cx.mm, pfn) {
                continue;
            }
            cx.mm.set_cache_entry(file, index, CacheEntry::EMPTY);
            cx.mm.free_frame(pfn);
            reaped += 1;
        }
        cx.mm.stat.count(VmEvent::Pgfree, reaped);
        let ev = if cx.reclaimer == Reclaimer::Kswapd { VmEvent::KswapdInodesteal } else { VmEvent::Pginodesteal };
        cx.mm.stat.count(ev, reaped);
        reaped
    }
}

impl Shrinker for SuperBlock {
    fn id(&self) -> ShrinkerId {
        ShrinkerId::SuperBlock
    }

    fn seeks(&self, _cfg: &crate::shrinker::ShrinkerConfig) -> u32 {
        DEFAULT_SEEKS
    }

    fn batch(&self) -> u64 {
        SB_BATCH
    }

    /// `super_cache_count()`: both lists, scaled by `vfs_cache_pressure`.
    fn count(&self, cx: &mut ShrinkCtx) -> u64 {
        let (dentries, inodes) = Self::lists(cx);
        (dentries + inodes) * cx.cfg.vfs_cache_pressure as u64 / 100
    }

    /// `super_cache_scan()`: the batch is shared between the lists in proportion to their lengths.
    fn scan(&self, cx: &mut ShrinkCtx, nr_to_scan: u64) -> Scanned {
        let (dentries, inodes) = Self::lists(cx);
        let total = dentries + inodes + 1;
        let dentries = nr_to_scan * dentries / total;
        let inodes = nr_to_scan * inodes / total;
        let freed = Self::prune_dcache(cx, dentries);
        let mut done = Self::prune_icache(cx, inodes);
        done.freed += freed;
        done
    }
}
