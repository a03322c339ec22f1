//! Slab caches that reclaim can shrink: dentries, inodes and the page-cache
//! tree's nodes, with the LRU lists their shrinkers walk.
//!
//! A file (`Mm::files`) stands for one dentry and one inode once a page of it
//! has entered the page cache. Its page cache is a tree whose leaves are
//! 64-slot nodes (`XA_CHUNK_SIZE`): a node exists while one of its slots holds
//! a page or a shadow entry; a node holding only shadows is on the shadow-node
//! list the workingset shrinker trims.
//!
//! Simplifications: S-SL1 a cache holds exactly the pages its objects fill
//! (packed as if freed objects were always compacted: no fragmentation, and
//! a slab of several pages is taken a page at a time);
//! S-SL2 a slab page that finds no free frame is taken at the next change of
//! its cache (the objects exist meanwhile); S-SL3 files read or written
//! through file descriptors are closed after each access (their dentry is
//! unused and on the LRU from the first page on; a page-cache insertion marks
//! it referenced), mapped files stay in use; S-SL4 the swap cache's tree
//! nodes are modelled only while the shadow shrinker sees them
//! (`swap_cache_shadow_nodes`, v6.3..v6.17; v5.9..v6.2's nodes, never
//! trimmed, take no slab memory here); S-SL7 a group's shadow-node
//! list is limited by its own charged pages (LRU pages, per-CPU stock and
//! zswap pages), not its LRU and slab pages.

use crate::cgroup::CgId;
use crate::entry::CacheEntry;
use crate::frame::{FrameTable, Pfn};
use crate::space::FileId;
use crate::vmstat::VmEvent;
use crate::{Mm, Shadow};
use std::collections::VecDeque;

mod check;

/// KERNEL: `XA_CHUNK_SHIFT`: a tree node has `1 << 6` slots.
pub const XA_CHUNK_SHIFT: u32 = 6;
const CHUNK: u32 = 1 << XA_CHUNK_SHIFT;

/// One slab cache: its objects and the page frames its slabs take.
#[derive(Clone, Debug)]
pub struct SlabCache {
    /// The cache's `/proc/slabinfo` name.
    pub name: &'static str,
    /// Objects one slab holds.
    pub objs_per_slab: u32,
    /// Pages one slab takes (`1 << order`).
    pub pages_per_slab: u32,
    objects: u64,
    pages: Vec<Pfn>,
    /// `objects` when the cache last held all the pages they need (`u64::MAX`
    /// while short): an unchanged count needs no new `sync`.
    synced: u64,
}

impl SlabCache {
    /// An empty cache.
    pub const fn new(name: &'static str, objs_per_slab: u32, pages_per_slab: u32) -> SlabCache {
        SlabCache { name, objs_per_slab, pages_per_slab, objects: 0, pages: Vec::new(), synced: 0 }
    }
    /// Live objects.
    pub fn objects(&self) -> u64 {
        self.objects
    }
    /// Pages held by the cache's slabs.
    pub fn pages(&self) -> u64 {
        self.pages.len() as u64
    }
    /// Pages the live objects need (S-SL1: packed, rounded up to a page).
    pub fn pages_needed(&self) -> u64 {
        (self.objects * self.pages_per_slab as u64).div_ceil(self.objs_per_slab as u64)
    }
    /// Takes or frees frames until the cache holds the pages its objects
    /// need (S-SL2: short while no frame is free).
    #[inline]
    fn sync(&mut self, frames: &mut FrameTable) {
        if self.objects != self.synced {
            self.resize(frames);
        }
    }

    #[cold]
    fn resize(&mut self, frames: &mut FrameTable) {
        let want = self.pages_needed();
        while (self.pages.len() as u64) < want {
            let Some(pfn) = frames.alloc_slab(crate::Migratetype::Reclaimable) else {
                self.synced = u64::MAX;
                return;
            };
            self.pages.push(pfn);
        }
        while self.pages.len() as u64 > want {
            frames.free(self.pages.pop().expect("more pages than wanted"));
        }
        self.synced = self.objects;
    }
}

/// The state of a file's dentry and inode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Dcache {
    /// Neither exists (never opened, or evicted).
    #[default]
    None,
    /// A dentry and the inode it holds.
    Dentry,
    /// The inode alone (its dentry was pruned): unused, on the inode LRU.
    Inode,
}

#[derive(Clone, Copy, Debug, Default)]
struct Node {
    pages: u8,
    shadows: u8,
    queued: bool,
}

impl Node {
    fn exists(self) -> bool {
        self.pages + self.shadows > 0
    }
    fn shadow_only(self) -> bool {
        self.pages == 0 && self.shadows > 0
    }
}

/// Node `n`'s slot went from `old` to `new`: (the node before, after, and
/// whether it just became shadow-only while off the list: it is queued now).
#[inline(always)]
fn step_node(n: &mut Node, old: CacheEntry, new: CacheEntry) -> (Node, Node, bool) {
    let before = *n;
    n.pages = n.pages + new.pfn().is_some() as u8 - old.pfn().is_some() as u8;
    n.shadows = n.shadows + new.as_shadow().is_some() as u8 - old.as_shadow().is_some() as u8;
    let queue = n.shadow_only() && !n.queued;
    n.queued |= queue;
    (before, *n, queue)
}

/// A file's slab objects: dentry/inode state and its tree's leaf nodes.
#[derive(Clone, Debug, Default)]
pub struct FileObjects {
    /// Dentry and inode.
    pub state: Dcache,
    /// Resident pages in the file's page cache (`mapping->nrpages`).
    pub nrpages: u64,
    /// `DCACHE_REFERENCED` / `I_REFERENCED` of the LRU object (dentry or inode).
    pub referenced: bool,
    /// Mapped by a region: the dentry is in use and never on the LRU.
    pub pinned: bool,
    nodes: Vec<Node>,
    /// On the dentry list's queue, on the inode list's queue.
    queued: [bool; 2],
}

/// Which shrinker a deferred scan count belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShrinkerId {
    /// The superblock's dentry + inode shrinker (`super_cache_scan`).
    SuperBlock = 0,
    /// The workingset shadow-node shrinker (`scan_shadow_nodes`).
    ShadowNodes = 1,
    /// zswap's writeback shrinker (`zswap_shrinker_scan`, v6.8).
    Zswap = 2,
}

/// Every shrinkable cache of the node, with the lists the shrinkers walk.
#[derive(Clone, Debug)]
pub struct Slab {
    /// `dentry` objects.
    pub dentry: SlabCache,
    /// The filesystem's inode cache.
    pub inode: SlabCache,
    /// `radix_tree_node` / `xa_node` objects of page-cache trees.
    pub xa_node: SlabCache,
    /// Per file, indexed by [`FileId`].
    pub files: Vec<FileObjects>,
    /// Unused dentries (`s_dentry_lru` count).
    pub nr_dentry_unused: u64,
    /// Unused inodes (`s_inode_lru` count, inodes with pages included).
    pub nr_inode_unused: u64,
    /// Unused inodes that still have resident pages.
    pub nr_inode_unused_with_pages: u64,
    /// Tree nodes holding only shadow entries (`workingset_nodes`).
    pub shadow_nodes: u64,
    /// `nr_deferred` of each shrinker, indexed by [`ShrinkerId`].
    pub nr_deferred: [u64; 3],
    /// The swap cache's shadow entries take tree nodes (v6.3..v6.17; S-SL4).
    pub swap_cache_nodes: bool,
    dentry_lru: VecDeque<FileId>,
    inode_lru: VecDeque<FileId>,
    /// Per memory group (`shadow_nodes` is memcg-aware): its shadow-only
    /// nodes, oldest first (nodes that stopped being shadow-only are dropped
    /// when met), and how many there are.
    node_lrus: Vec<(VecDeque<TreeNode>, u64)>,
    /// The swap cache's leaf nodes, by slot / 64.
    swap_nodes: Vec<Node>,
    /// How many of them exist (their objects are in `xa_node`).
    swap_node_objects: u64,
}

/// A leaf node of a page-cache tree: a file's, or the swap cache's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TreeNode {
    /// Node `chunk` of a file.
    File(FileId, u32),
    /// Node `chunk` of the swap cache (slots `64 * chunk ..`).
    Swap(u32),
}

impl Default for Slab {
    fn default() -> Self {
        Slab {
            // KERNEL sizes on x86-64 SLUB: dentry 192 B (21 a page), ext4_inode_cache
            // 1096 B (29 in an order-3 slab), radix_tree_node/xa_node 576 B (28 in order 2).
            dentry: SlabCache::new("dentry", 21, 1),
            inode: SlabCache::new("ext4_inode_cache", 29, 8),
            xa_node: SlabCache::new("radix_tree_node", 28, 4),
            files: Vec::new(),
            nr_dentry_unused: 0,
            nr_inode_unused: 0,
            nr_inode_unused_with_pages: 0,
            shadow_nodes: 0,
            nr_deferred: [0; 3],
            swap_cache_nodes: false,
            dentry_lru: VecDeque::new(),
            inode_lru: VecDeque::new(),
            node_lrus: vec![(VecDeque::new(), 0)],
            swap_nodes: Vec::new(),
            swap_node_objects: 0,
        }
    }
}

impl Slab {
    /// Pages of all reclaimable caches (`SReclaimable`, `nr_slab_reclaimable`).
    pub fn reclaimable_pages(&self) -> u64 {
        self.dentry.pages() + self.inode.pages() + self.xa_node.pages()
    }

    /// The file's objects (a file never touched has none).
    pub fn file(&self, file: FileId) -> Option<&FileObjects> {
        self.files.get(file.0 as usize)
    }

    #[inline(always)]
    fn file_mut(&mut self, file: FileId, nr_pages: u32) -> &mut FileObjects {
        let i = file.0 as usize;
        if self.files.get(i).is_none_or(|f| f.nodes.is_empty()) {
            self.add_file(i, nr_pages);
        }
        &mut self.files[i]
    }

    /// A file's objects when a slot of it first changes.
    #[cold]
    fn add_file(&mut self, i: usize, nr_pages: u32) {
        if self.files.len() <= i {
            self.files.resize_with(i + 1, FileObjects::default);
        }
        self.files[i].nodes = vec![Node::default(); nr_pages.div_ceil(CHUNK) as usize];
    }

    fn unused_inode(&mut self, nrpages: u64, delta: i64) {
        self.nr_inode_unused = self.nr_inode_unused.wrapping_add_signed(delta);
        if nrpages > 0 {
            self.nr_inode_unused_with_pages = self.nr_inode_unused_with_pages.wrapping_add_signed(delta);
        }
    }

    /// Pages of the `xa_node` cache that hold the swap cache's nodes: kernel
    /// memory charged to no group (the file nodes share the cache, packed first).
    pub fn swap_node_pages(&self) -> u64 {
        let c = &self.xa_node;
        let file_pages =
            ((c.objects - self.swap_node_objects) * c.pages_per_slab as u64).div_ceil(c.objs_per_slab as u64);
        c.pages().saturating_sub(file_pages)
    }

    /// Shadow-only nodes on `cg`'s list (the kernel's per-memcg `list_lru` count).
    pub fn shadow_nodes_of(&self, cg: CgId) -> u64 {
        self.node_lrus.get(cg.0 as usize).map_or(0, |l| l.1)
    }

    /// A node of `cg`'s changed from `before` to `after`: keeps the object
    /// count and the shadow-node counts, and queues it when `queue`.
    #[inline(always)]
    fn node_changed(&mut self, cg: CgId, key: TreeNode, (before, after, queue): (Node, Node, bool)) {
        match (before.exists(), after.exists()) {
            (false, true) => self.xa_node.objects += 1,
            (true, false) => self.xa_node.objects -= 1,
            _ => {}
        }
        let (delta, gone) = (after.shadow_only() as u64, before.shadow_only() as u64);
        if delta == gone && !queue {
            return;
        }
        let i = cg.0 as usize;
        if self.node_lrus.len() <= i {
            self.node_lrus.resize_with(i + 1, Default::default);
        }
        let (lru, count) = &mut self.node_lrus[i];
        *count = *count + delta - gone;
        self.shadow_nodes = self.shadow_nodes + delta - gone;
        if queue {
            lru.push_back(key);
        }
    }

    /// Slot `slot` of the swap cache changed from `old` to `new` (its nodes are the root group's).
    fn note_swap_slot(&mut self, slot: u32, old: CacheEntry, new: CacheEntry) {
        let chunk = slot / CHUNK;
        if self.swap_nodes.len() <= chunk as usize {
            self.swap_nodes.resize(chunk as usize + 1, Node::default());
        }
        let step = step_node(&mut self.swap_nodes[chunk as usize], old, new);
        match (step.0.exists(), step.1.exists()) {
            (false, true) => self.swap_node_objects += 1,
            (true, false) => self.swap_node_objects -= 1,
            _ => {}
        }
        self.node_changed(CgId::ROOT, TreeNode::Swap(chunk), step);
    }

    /// Slot `index` of `file` (of group `cg`) changed from `old` to `new`: keeps
    /// node counts, the shadow-node list and `nrpages`; a first page opens the file.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn note_slot(
        &mut self,
        file: FileId,
        cg: CgId,
        nr_pages: u32,
        pinned: bool,
        index: u32,
        old: CacheEntry,
        new: CacheEntry,
    ) {
        let f = self.file_mut(file, nr_pages);
        let step = step_node(&mut f.nodes[(index / CHUNK) as usize], old, new);
        let nrpages_before = f.nrpages;
        f.nrpages = f.nrpages + new.pfn().is_some() as u64 - old.pfn().is_some() as u64;
        let (state, nrpages) = (f.state, f.nrpages);
        if new.pfn().is_some() {
            f.referenced = state != Dcache::None;
        }
        self.node_changed(cg, TreeNode::File(file, index / CHUNK), step);
        if new.pfn().is_some() {
            if state == Dcache::Dentry {
                self.files[file.0 as usize].pinned = pinned; // open already
            } else {
                self.open(file, pinned, nrpages_before);
            }
        } else if state == Dcache::Inode && nrpages_before > 0 && nrpages == 0 {
            // The last page went: the inode is shrinkable (back on the LRU if it left it).
            self.nr_inode_unused_with_pages -= 1;
            self.requeue(file, true);
        }
    }

    /// A lookup of `file` (a page entered its cache): the dentry and inode exist afterwards.
    fn open(&mut self, file: FileId, pinned: bool, nrpages_before: u64) {
        let f = &mut self.files[file.0 as usize];
        let state = f.state;
        f.pinned = pinned;
        match state {
            Dcache::Dentry => return,
            Dcache::None => self.inode.objects += 1,
            // The inode is in use again: it leaves the unused count (the
            // kernel drops it from the LRU when the walk meets it).
            Dcache::Inode => self.unused_inode(nrpages_before, -1),
        }
        let f = &mut self.files[file.0 as usize];
        f.state = Dcache::Dentry;
        f.referenced = false;
        self.dentry.objects += 1;
        if !pinned {
            self.nr_dentry_unused += 1;
            if !f.queued[0] {
                f.queued[0] = true;
                self.dentry_lru.push_back(file);
            }
        }
    }

    fn pop_lru(&mut self, inode: bool) -> Option<FileId> {
        let lru = if inode { &mut self.inode_lru } else { &mut self.dentry_lru };
        let file = lru.pop_front()?;
        self.files[file.0 as usize].queued[inode as usize] = false;
        Some(file)
    }

    fn requeue(&mut self, file: FileId, inode: bool) {
        let f = &mut self.files[file.0 as usize];
        if !f.queued[inode as usize] {
            f.queued[inode as usize] = true;
            if inode { &mut self.inode_lru } else { &mut self.dentry_lru }.push_back(file);
        }
    }
}

/// What the LRU walk found at the head of a dentry or inode list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LruItem {
    /// The list is empty.
    Empty,
    /// Referenced since the last walk: the bit was cleared and the object rotated.
    Rotated,
    /// An unused object of this file, left at the head for the caller to act on.
    Unused(FileId),
}

impl Mm {
    /// Puts resident page `pfn` in slot `index` of `file` (a page-cache
    /// insertion, opening the file if needed); returns the shadow it replaces.
    pub fn insert_cache_page(&mut self, file: FileId, index: u32, pfn: Pfn) -> Option<Shadow> {
        let old = self.files[file.0 as usize].cache[index as usize];
        self.set_cache_entry(file, index, CacheEntry::resident(pfn));
        old.as_shadow()
    }

    /// Stores `entry` in slot `index` of `file`, keeping the slab state in step.
    #[inline]
    pub fn set_cache_entry(&mut self, file: FileId, index: u32, entry: CacheEntry) {
        let f = &mut self.files[file.0 as usize];
        let old = std::mem::replace(&mut f.cache[index as usize], entry);
        let (nr_pages, pinned, cg) = (f.nr_pages(), !f.mappers.is_empty(), f.cg);
        self.slab.note_slot(file, cg, nr_pages, pinned, index, old, entry);
        self.sync_slab();
    }

    /// Stores `entry` in swap-cache slot `slot`, keeping the slab state in step.
    pub fn set_swap_cache(&mut self, slot: u32, entry: CacheEntry) {
        let old = std::mem::replace(self.swap.cache_mut(slot), entry);
        if self.slab.swap_cache_nodes {
            self.slab.note_swap_slot(slot, old, entry);
            self.sync_slab();
        }
    }

    /// The swap cache's entry of `slot` goes with the slot (`swap_free`).
    pub(crate) fn free_swap_cache_entry(&mut self, slot: u32) {
        let old = self.swap.slot(slot).cache;
        if self.slab.swap_cache_nodes && !old.is_empty() {
            self.slab.note_swap_slot(slot, old, CacheEntry::EMPTY);
            self.sync_slab();
        }
    }

    /// Takes or frees slab pages after the caches changed (S-SL6: not
    /// counted in `pgalloc_normal`/`pgfree`, which stay counts of data pages).
    #[inline]
    pub fn sync_slab(&mut self) {
        let s = &mut self.slab;
        for c in [&mut s.dentry, &mut s.inode, &mut s.xa_node] {
            c.sync(&mut self.frames);
        }
    }

    /// The dentry LRU's head (`prune_dcache_sb`'s walk), rotating a referenced one.
    pub fn dentry_lru_head(&mut self) -> LruItem {
        self.lru_head(false)
    }

    /// The inode LRU's head (`prune_icache_sb`'s walk), rotating a referenced
    /// one. With `keep_busy_off`, inodes with pages are dropped from the list
    /// (they rejoin when their last page goes).
    pub fn inode_lru_head(&mut self, keep_busy_off: bool) -> LruItem {
        loop {
            match self.lru_head(true) {
                LruItem::Unused(file) if keep_busy_off && self.slab.files[file.0 as usize].nrpages > 0 => {
                    self.slab.pop_lru(true);
                }
                item => return item,
            }
        }
    }

    fn lru_head(&mut self, inode: bool) -> LruItem {
        let want = if inode { Dcache::Inode } else { Dcache::Dentry };
        let s = &mut self.slab;
        loop {
            let lru = if inode { &s.inode_lru } else { &s.dentry_lru };
            let Some(&file) = lru.front() else { return LruItem::Empty };
            let f = &mut s.files[file.0 as usize];
            if f.state != want || f.pinned {
                // Left behind by a state change: the walk drops it for free.
                s.pop_lru(inode);
                continue;
            }
            if std::mem::take(&mut f.referenced) {
                s.pop_lru(inode);
                s.requeue(file, inode);
                return LruItem::Rotated;
            }
            return LruItem::Unused(file);
        }
    }

    /// Frees the unused dentry of `file` (the head of the dentry LRU): its
    /// inode becomes unused and joins the inode LRU.
    pub fn free_dentry(&mut self, file: FileId) {
        let s = &mut self.slab;
        debug_assert_eq!(s.dentry_lru.front(), Some(&file));
        s.pop_lru(false);
        let f = &mut s.files[file.0 as usize];
        f.state = Dcache::Inode;
        f.referenced = false;
        let nrpages = f.nrpages;
        s.dentry.objects -= 1;
        s.nr_dentry_unused -= 1;
        s.unused_inode(nrpages, 1);
        s.requeue(file, true);
        self.sync_slab();
    }

    /// Moves the inode at the head of the LRU to its tail (it keeps pages the
    /// walk could not drop).
    pub fn rotate_inode(&mut self, file: FileId) {
        debug_assert_eq!(self.slab.inode_lru.front(), Some(&file));
        self.slab.pop_lru(true);
        self.slab.requeue(file, true);
    }

    /// Evicts the unused inode of `file`, which has no resident pages:
    /// its shadow entries go with it (`truncate_inode_pages_final`).
    pub fn evict_inode(&mut self, file: FileId) {
        debug_assert_eq!(self.slab.files[file.0 as usize].nrpages, 0);
        for index in self.slab_slots(file, |n| n.shadows > 0) {
            self.set_cache_entry(file, index, CacheEntry::EMPTY);
        }
        let s = &mut self.slab;
        if s.inode_lru.front() == Some(&file) {
            s.pop_lru(true);
        }
        s.files[file.0 as usize].state = Dcache::None;
        s.inode.objects -= 1;
        s.unused_inode(0, -1);
        self.sync_slab();
    }

    /// Resident pages of `file`, in index order.
    pub fn cached_pages(&self, file: FileId) -> Vec<(u32, Pfn)> {
        let cache = &self.files[file.0 as usize].cache;
        self.slab_slots(file, |n| n.pages > 0)
            .into_iter()
            .filter_map(|i| cache[i as usize].pfn().map(|p| (i, p)))
            .collect()
    }

    /// Slots of the nodes of `file` that pass `keep`.
    fn slab_slots(&self, file: FileId, keep: impl Fn(&Node) -> bool) -> Vec<u32> {
        let Some(f) = self.slab.file(file) else { return Vec::new() };
        let pages = self.files[file.0 as usize].nr_pages();
        let cache = &self.files[file.0 as usize].cache;
        let nodes = f.nodes.iter().enumerate().filter(|(_, n)| keep(n));
        nodes
            .flat_map(|(c, _)| c as u32 * CHUNK..((c as u32 + 1) * CHUNK).min(pages))
            .filter(|&i| !cache[i as usize].is_empty())
            .collect()
    }

    /// Takes the oldest shadow-only node off `cg`'s list and deletes its
    /// shadow entries, freeing it (`shadow_lru_isolate`); false if the list is empty.
    pub fn reclaim_shadow_node(&mut self, cg: CgId) -> bool {
        loop {
            let Some(key) = self.slab.node_lrus.get_mut(cg.0 as usize).and_then(|l| l.0.pop_front()) else {
                return false;
            };
            let (n, slots) = match key {
                TreeNode::File(file, chunk) => (
                    &mut self.slab.files[file.0 as usize].nodes[chunk as usize],
                    chunk * CHUNK..((chunk + 1) * CHUNK).min(self.files[file.0 as usize].nr_pages()),
                ),
                TreeNode::Swap(chunk) => (
                    &mut self.slab.swap_nodes[chunk as usize],
                    chunk * CHUNK..((chunk + 1) * CHUNK).min(self.swap.nr_slots()),
                ),
            };
            n.queued = false;
            if !n.shadow_only() {
                continue;
            }
            for i in slots {
                match key {
                    TreeNode::File(file, _) => {
                        if self.files[file.0 as usize].cache[i as usize].as_shadow().is_some() {
                            self.set_cache_entry(file, i, CacheEntry::EMPTY);
                        }
                    }
                    TreeNode::Swap(_) => {
                        if self.swap.slot(i).cache.as_shadow().is_some() {
                            self.set_swap_cache(i, CacheEntry::EMPTY);
                        }
                    }
                }
            }
            self.stat.count(VmEvent::WorkingsetNodereclaim, 1);
            return true;
        }
    }
}
