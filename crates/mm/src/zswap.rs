//! zswap: a compressed cache in RAM in front of the swap device (mm/zswap.c, v6.12).
//!
//! A page reclaim writes to swap is first offered to zswap (`zswap_store`): if
//! the pool is below its limit the page is compressed into a zsmalloc pool and
//! no device I/O happens; a fault on it decompresses it back (`zswap_load`).
//! When the pool reaches `max_pool_percent` of RAM, stores are rejected (they
//! go to the device) until the pool is back under `accept_threshold_percent`
//! of the limit, and the pool-limit worker (`shrink_worker`) writes the oldest
//! entries of the pool's LRU back to the device. With the v6.8 shrinker,
//! memory pressure writes entries back too (`zswap_shrinker_count/scan`).
//!
//! The pool's pages come from the frame table, as zram's do: the storage is a
//! [`ZramPool`] (zsmalloc's size classes, the compressed length and
//! same-filled pages of S-ZR2) keyed by swap slot.
//!
//! Simplifications:
//! - S-ZS1: a written-back entry goes straight from the pool to the device
//!   write; the kernel's temporary swap-cache folio (allocated, written,
//!   rotated to the inactive tail, freed when clean) is not modelled.
//! - S-ZS2: the pool-limit worker runs at once when a store finds the pool
//!   full (the kernel queues it on a workqueue); its decompressions are
//!   charged to the reclaimer whose store queued it.
//! - S-ZS3: one node: each memory group has one LRU of entries (the kernel's
//!   `list_lru` has one per group per node), and the writeback shrinker is
//!   called once per reclaim pass for every group (the kernel calls it per
//!   group from `shrink_node_memcgs`), walking the groups in tree order.
//!
//! Memory groups (cgroup v2, v6.12): an entry belongs to the group of its page;
//! its compressed bytes are charged to that group (`memory.stat` `zswap`,
//! `zswapped`, and `memory.current`); `memory.zswap.max` refuses stores over
//! it after one writeback attempt in the group; `memory.zswap.writeback=0`
//! keeps the group's entries out of every writeback.

use crate::cgroup::{CgId, Cgroups, PAGE_COUNTER_MAX};
use crate::frame::FrameTable;
use crate::swap::SwapMap;
use crate::vmstat::{VmEvent, VmStat};
use crate::zram::{ZramConfig, ZramPool};
use crate::PAGE_SIZE;

/// KERNEL: `MAX_RECLAIM_RETRIES`: the pool-limit worker gives up after this many failed walks.
const MAX_RECLAIM_RETRIES: u32 = 16;
/// No slot: the end of the LRU.
const NIL: u32 = u32::MAX;

/// zswap's parameters for a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ZswapConfig {
    /// `max_pool_percent`: the pool's limit in percent of RAM.
    pub max_pool_percent: u32,
    /// `accept_threshold_percent`: after a full pool, stores resume below this share of the limit.
    pub accept_thr_percent: u32,
    /// The v6.8 shrinker writes entries back under memory pressure (`shrinker_enabled`).
    pub shrinker: bool,
    /// v6.11: an entry stored since the last LRU walk is rotated once before writeback (`referenced`).
    pub second_chance: bool,
    /// v6.5: a load into the swap cache frees the entry and dirties the page (exclusive loads).
    pub exclusive_loads: bool,
}

/// zswap's debugfs counters (`/sys/kernel/debug/zswap/`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ZswapStat {
    /// Stores refused because the pool was at its limit (refusals while it
    /// shrinks back to the accept threshold are not counted).
    pub pool_limit_hit: u64,
    /// Entries written back to the swap device.
    pub written_back_pages: u64,
    /// Writebacks that failed (the entry's page was already in the swap cache).
    pub reject_reclaim_fail: u64,
    /// Stores refused because the pool could not get a page.
    pub reject_alloc_fail: u64,
}

/// Outcome of [`Zswap::store`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Store {
    /// Compressed into the pool: no device write.
    Stored,
    /// Refused by the pool limit before compressing: the page goes to the device.
    Full,
    /// Compressed, but no page for the object: the page goes to the device.
    AllocFail,
    /// Refused by the group's `memory.zswap.max` (`obj_cgroup_may_zswap`):
    /// the page goes to the device.
    GroupLimit,
}

/// What one step of an LRU walk did (`shrink_memcg_cb`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Walk {
    /// The LRU is empty.
    Empty,
    /// The oldest entry was referenced: its bit cleared, it went to the tail.
    Rotated,
    /// The oldest entry was written back.
    Written,
    /// The oldest entry's page is in the swap cache (`-EEXIST`): it leaves the LRU, unwritten.
    Failed,
}

/// What a store or a writeback works on beside the pool: the frames the pool
/// takes, the counters, the swap map (a written-back slot may be in the swap
/// cache) and the memory cgroup tree (its zswap limits and writeback switches).
pub struct ZswapCtx<'a> {
    /// The machine's page frames.
    pub frames: &'a mut FrameTable,
    /// `/proc/vmstat`.
    pub stat: &'a mut VmStat,
    /// The swap device's slots and swap cache.
    pub swap: &'a SwapMap,
    /// The cgroup tree.
    pub tree: &'a Cgroups,
}

/// Why a group's LRU walk did not write back (`shrink_memcg()`'s errors).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NoWriteback {
    /// `-ENOENT`: writeback is off for the group, or its LRU is empty.
    NoCandidate,
    /// `-EAGAIN`: the entry walked was rotated or could not be written.
    Again,
}

/// One memory group's part of the pool: its LRU of entries (linked through
/// slots, oldest first) and its `memory.stat` counts.
#[derive(Clone, Copy, Debug)]
struct GroupPool {
    head: u32,
    tail: u32,
    /// Entries on the LRU (`list_lru_count_one`).
    len: u64,
    /// `MEMCG_ZSWAP_B`: compressed bytes of the group's entries.
    bytes: u64,
    /// `MEMCG_ZSWAPPED`: the group's entries.
    stored: u64,
    /// Device swap-ins since the shrinker last counted (`nr_disk_swapins`).
    disk_swapins: u64,
    /// Pages of `bytes` on the group's page counter.
    charged: u64,
}

impl Default for GroupPool {
    fn default() -> Self {
        GroupPool { head: NIL, tail: NIL, len: 0, bytes: 0, stored: 0, disk_swapins: 0, charged: 0 }
    }
}

/// The zswap pool, its LRUs of compressed objects and its counters.
#[derive(Clone, Debug)]
pub struct Zswap {
    cfg: ZswapConfig,
    /// Usable RAM in pages (`totalram_pages()`).
    totalram: u64,
    pool: ZramPool,
    /// The groups' LRU links, per slot.
    prev: Vec<u32>,
    next: Vec<u32>,
    /// Per slot: the group of the entry (`entry->objcg`).
    owner: Vec<CgId>,
    /// Per slot: stored since the LRU walk last saw it (`entry->referenced`).
    referenced: Vec<bool>,
    /// Per group, by [`CgId`].
    groups: Vec<GroupPool>,
    /// Groups whose bytes changed since their charge was last settled.
    unsettled: Vec<CgId>,
    /// `zswap_next_shrink`: the pool-limit worker's place in its round of the groups.
    next_shrink: Option<CgId>,
    /// `zswap_pool_reached_full`.
    reached_full: bool,
    /// Slots written back whose device writes are not yet submitted.
    pending: Vec<u32>,
    stat: ZswapStat,
}

impl Zswap {
    /// An empty pool in front of a swap device of `nr_slots` slots on a
    /// machine of `totalram` pages; pages compress as `comp` says (its limit unused).
    pub fn new(cfg: ZswapConfig, comp: ZramConfig, nr_slots: u32, totalram: u64) -> Zswap {
        let n = nr_slots as usize;
        Zswap {
            cfg,
            totalram,
            pool: ZramPool::new(ZramConfig { limit_pages: 0, ..comp }, nr_slots),
            prev: vec![NIL; n],
            next: vec![NIL; n],
            owner: vec![CgId::ROOT; n],
            referenced: vec![false; n],
            groups: vec![GroupPool::default()],
            unsettled: Vec::new(),
            next_shrink: None,
            reached_full: false,
            pending: Vec::new(),
            stat: ZswapStat::default(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> ZswapConfig {
        self.cfg
    }

    /// Pool pages (`zswap_total_pages()`).
    pub fn pages(&self) -> u64 {
        self.pool.pages()
    }

    /// Pages stored, same-filled ones included (`stored_pages`).
    pub fn stored_pages(&self) -> u64 {
        self.pool.mm_stat().orig_data_size / PAGE_SIZE
    }

    /// The debugfs counters.
    pub fn stat(&self) -> ZswapStat {
        self.stat
    }

    /// The debugfs files by name, with the pool's sizes.
    pub fn named(&self) -> [(&'static str, u64); 8] {
        let m = self.pool.mm_stat();
        [
            ("pool_total_size", m.mem_used_total),
            ("stored_pages", self.stored_pages()),
            ("same_filled_pages", m.same_pages),
            ("pool_limit_hit", self.stat.pool_limit_hit),
            ("written_back_pages", self.stat.written_back_pages),
            ("reject_reclaim_fail", self.stat.reject_reclaim_fail),
            ("reject_alloc_fail", self.stat.reject_alloc_fail),
            ("compressed_bytes", m.compr_data_size),
        ]
    }

    /// True if `slot` has an entry.
    pub fn holds(&self, slot: u32) -> bool {
        self.pool.holds(slot)
    }

    /// `zswap_max_pages()`.
    fn max_pages(&self) -> u64 {
        self.totalram * self.cfg.max_pool_percent as u64 / 100
    }

    /// `zswap_accept_thr_pages()`.
    fn accept_thr_pages(&self) -> u64 {
        self.max_pages() * self.cfg.accept_thr_percent as u64 / 100
    }

    /// `zswap_check_limits()`: true if the pool is full or has not yet shrunk
    /// below the accept threshold since it was.
    fn check_limits(&mut self) -> bool {
        let cur = self.pages();
        if cur >= self.max_pages() {
            self.stat.pool_limit_hit += 1;
            self.reached_full = true;
        } else if self.reached_full && cur <= self.accept_thr_pages() {
            self.reached_full = false;
        }
        self.reached_full
    }

    /// `obj_cgroup_may_zswap()`: false if `cg` or an ancestor below the root
    /// has reached its `memory.zswap.max` (its subtree's compressed pages).
    fn group_may_store(&self, tree: &Cgroups, cg: CgId) -> bool {
        tree.ancestors(cg).filter(|&g| g != CgId::ROOT).all(|g| match tree.get(g).limits.zswap_max {
            PAGE_COUNTER_MAX => true,
            0 => false,
            max => self.subtree_bytes(tree, g) / PAGE_SIZE < max,
        })
    }

    /// Compressed bytes of `g` and its descendants (`memcg_page_state(MEMCG_ZSWAP_B)`).
    fn subtree_bytes(&self, tree: &Cgroups, g: CgId) -> u64 {
        tree.subtree(g).iter().map(|&d| self.group(d).bytes).sum()
    }

    /// `zswap_store()`: offers the page `key` of group `cg` being written to
    /// `slot`. A group at its `memory.zswap.max` writes one of its entries
    /// back first and is refused if that fails; a full pool refuses the page
    /// and runs the pool-limit worker (S-ZS2); any refusal drops a stale
    /// entry of the slot, as the device will hold the page.
    pub fn store(&mut self, cx: &mut ZswapCtx, cg: CgId, slot: u32, key: u64) -> Store {
        let outcome = if !self.group_may_store(cx.tree, cg) && self.shrink_memcg(cx, cg).is_err() {
            Store::GroupLimit
        } else if self.check_limits() {
            Store::Full
        } else {
            self.detach(slot);
            if self.pool.write(cx.frames, slot, key) {
                self.attach(slot, cg);
                Store::Stored
            } else {
                self.pool.free(cx.frames, slot);
                self.stat.reject_alloc_fail += 1;
                Store::AllocFail
            }
        };
        if outcome != Store::Stored {
            self.invalidate(cx.frames, slot);
            if self.reached_full {
                self.shrink_worker(cx);
            }
            return outcome;
        }
        if self.pool.has_object(slot) {
            self.lru_add(slot);
        }
        self.referenced[slot as usize] = self.cfg.second_chance;
        cx.stat.count(VmEvent::Zswpout, 1);
        Store::Stored
    }

    /// `zswap_load()`: true if `slot` is in the pool (a decompression, no I/O).
    /// A load into the swap cache with exclusive loads frees the entry (the
    /// caller dirties the page); otherwise the entry stays until the slot is freed.
    pub fn load(&mut self, frames: &mut FrameTable, stat: &mut VmStat, slot: u32, swapcache: bool) -> bool {
        if !self.pool.holds(slot) {
            return false;
        }
        stat.count(VmEvent::Zswpin, 1);
        if swapcache && self.cfg.exclusive_loads {
            self.invalidate(frames, slot);
        }
        true
    }

    /// `zswap_folio_swapin()`: a page of group `cg` was read from the device
    /// (protects the group's LRU from the shrinker).
    pub fn note_disk_swapin(&mut self, cg: CgId) {
        self.group_mut(cg).disk_swapins += 1;
    }

    /// `zswap_invalidate()`: the slot was freed; its entry goes.
    pub fn invalidate(&mut self, frames: &mut FrameTable, slot: u32) {
        self.detach(slot);
        self.pool.free(frames, slot);
    }

    /// Takes `slot`'s entry, if any, off its group's LRU and counts
    /// (`obj_cgroup_uncharge_zswap`), leaving its object in the pool.
    fn detach(&mut self, slot: u32) {
        if !self.pool.holds(slot) {
            return;
        }
        self.lru_del(slot);
        let (cg, len) = (self.owner[slot as usize], self.pool.compressed_len(slot));
        let g = self.group_mut(cg);
        g.bytes -= len;
        g.stored -= 1;
        self.unsettle(cg);
    }

    /// The new entry of `slot` is `cg`'s (`obj_cgroup_charge_zswap`).
    fn attach(&mut self, slot: u32, cg: CgId) {
        self.owner[slot as usize] = cg;
        let len = self.pool.compressed_len(slot);
        let g = self.group_mut(cg);
        g.bytes += len;
        g.stored += 1;
        self.unsettle(cg);
    }

    fn unsettle(&mut self, cg: CgId) {
        if !self.unsettled.contains(&cg) {
            self.unsettled.push(cg);
        }
    }

    /// Settles the groups' page charges for their compressed bytes: calls
    /// `charge(group, pages)` with the change (positive: charge) of each
    /// group whose bytes moved since the last call.
    pub fn settle_charges(&mut self, mut charge: impl FnMut(CgId, i64)) {
        for cg in std::mem::take(&mut self.unsettled) {
            let g = self.group_mut(cg);
            let pages = g.bytes.div_ceil(PAGE_SIZE);
            let delta = pages as i64 - g.charged as i64;
            g.charged = pages;
            if delta != 0 {
                charge(cg, delta);
            }
        }
    }

    /// A group's `memory.stat` `zswap` (compressed bytes) and `zswapped` (entries), its own.
    pub fn group_stat(&self, cg: CgId) -> (u64, u64) {
        let g = self.group(cg);
        (g.bytes, g.stored)
    }

    /// `shrink_memcg()`: one step of `cg`'s LRU walk; `Ok` if it wrote an entry back.
    fn shrink_memcg(&mut self, cx: &mut ZswapCtx, cg: CgId) -> Result<(), NoWriteback> {
        if !cx.tree.zswap_writeback(cg) {
            return Err(NoWriteback::NoCandidate);
        }
        match self.walk_one(cx, cg) {
            Walk::Empty => Err(NoWriteback::NoCandidate),
            Walk::Written => Ok(()),
            Walk::Rotated | Walk::Failed => Err(NoWriteback::Again),
        }
    }

    /// `shrink_worker()`: writes back entries, one step of one group's LRU at
    /// a time, taking the groups round-robin in tree order, until the pool is
    /// at the accept threshold. It gives up after [`MAX_RECLAIM_RETRIES`]
    /// failures: a step that wrote nothing, or a round of the tree in which
    /// no group had an entry it could write.
    fn shrink_worker(&mut self, cx: &mut ZswapCtx) {
        let thr = self.accept_thr_pages();
        let (mut failures, mut attempts) = (0, 0);
        loop {
            self.next_shrink = cx.tree.iter_next(self.next_shrink);
            match self.next_shrink {
                None => {
                    if attempts == 0 {
                        failures += 1;
                        if failures == MAX_RECLAIM_RETRIES {
                            break;
                        }
                    }
                    attempts = 0;
                }
                Some(cg) => match self.shrink_memcg(cx, cg) {
                    Err(NoWriteback::NoCandidate) => {}
                    r => {
                        attempts += 1;
                        if r.is_err() {
                            failures += 1;
                            if failures == MAX_RECLAIM_RETRIES {
                                break;
                            }
                        }
                    }
                },
            }
            if self.pages() <= thr {
                break;
            }
        }
    }

    /// `zswap_shrinker_count()` for every group whose writeback is on:
    /// entries the shrinker may write back. A group's device swap-ins since
    /// the last count are taken off its LRU's size first (they were written
    /// back too eagerly), and the rest is scaled by the compression ratio of
    /// the group's subtree (compressed pages over stored pages).
    pub fn shrinker_count(&mut self, tree: &Cgroups) -> u64 {
        if !self.cfg.shrinker {
            return 0;
        }
        let mut total = 0;
        for cg in (0..self.groups.len()).map(|i| CgId(i as u16)) {
            if self.groups[cg.0 as usize].len == 0 || !tree.zswap_writeback(cg) {
                continue;
            }
            let sub = tree.subtree(cg);
            let stored: u64 = sub.iter().map(|&d| self.group(d).stored).sum();
            let backing = sub.iter().map(|&d| self.group(d).bytes).sum::<u64>() >> crate::PAGE_SHIFT;
            if stored == 0 {
                continue;
            }
            let g = &mut self.groups[cg.0 as usize];
            let protected = g.disk_swapins.min(g.len);
            g.disk_swapins -= protected;
            total += (g.len - protected) * backing / stored;
        }
        total
    }

    /// `zswap_shrinker_scan()` over the groups in tree order: walks up to
    /// `nr_to_scan` entries in all from the heads of the LRUs of the groups
    /// whose writeback is on, writing back each unreferenced one; returns the
    /// number written. Meeting a page already in the swap cache ends a
    /// group's walk: it has reached the warm entries (`LRU_STOP`).
    pub fn shrinker_scan(&mut self, cx: &mut ZswapCtx, nr_to_scan: u64) -> u64 {
        let (mut written, mut walked) = (0, 0);
        for cg in cx.tree.subtree(CgId::ROOT) {
            if !cx.tree.zswap_writeback(cg) {
                continue;
            }
            while walked < nr_to_scan {
                walked += 1;
                match self.walk_one(cx, cg) {
                    Walk::Empty => {
                        walked -= 1;
                        break;
                    }
                    Walk::Failed => break,
                    Walk::Rotated => {}
                    Walk::Written => written += 1,
                }
            }
        }
        written
    }

    /// One step of `cg`'s LRU walk from the head (`shrink_memcg_cb`): a
    /// referenced entry loses its bit and rotates; any other is decompressed,
    /// freed and queued for its device write (`zswap_writeback_entry`), unless
    /// its page is in the swap cache already (a load that kept the entry).
    fn walk_one(&mut self, cx: &mut ZswapCtx, cg: CgId) -> Walk {
        let slot = self.group(cg).head;
        if slot == NIL {
            return Walk::Empty;
        }
        if std::mem::take(&mut self.referenced[slot as usize]) {
            self.lru_del(slot);
            self.lru_add(slot);
            return Walk::Rotated;
        }
        if cx.swap.slot(slot).cache.pfn().is_some() {
            self.lru_del(slot);
            self.stat.reject_reclaim_fail += 1;
            return Walk::Failed;
        }
        self.invalidate(cx.frames, slot);
        self.pending.push(slot);
        self.stat.written_back_pages += 1;
        cx.stat.count(VmEvent::Zswpwb, 1);
        // __swap_writepage(): a device write like any swap-out.
        cx.stat.count(VmEvent::Pswpout, 1);
        cx.stat.count(VmEvent::Pgpgout, PAGE_SIZE / 1024);
        Walk::Written
    }

    /// Takes the slots written back since the last call, for the device writes.
    pub fn take_writebacks(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.pending)
    }

    fn group(&self, cg: CgId) -> GroupPool {
        self.groups.get(cg.0 as usize).copied().unwrap_or_default()
    }

    fn group_mut(&mut self, cg: CgId) -> &mut GroupPool {
        let i = cg.0 as usize;
        if i >= self.groups.len() {
            self.groups.resize(i + 1, GroupPool::default());
        }
        &mut self.groups[i]
    }

    /// Puts `slot` at the tail of its group's LRU.
    fn lru_add(&mut self, slot: u32) {
        let cg = self.owner[slot as usize];
        let tail = self.group_mut(cg).tail;
        self.prev[slot as usize] = tail;
        self.next[slot as usize] = NIL;
        let g = self.group_mut(cg);
        if tail == NIL {
            g.head = slot;
        } else {
            self.next[tail as usize] = slot;
        }
        let g = self.group_mut(cg);
        g.tail = slot;
        g.len += 1;
    }

    /// Takes `slot` off its group's LRU if it is on it.
    fn lru_del(&mut self, slot: u32) {
        let s = slot as usize;
        let (p, n, cg) = (self.prev[s], self.next[s], self.owner[s]);
        if p == NIL && self.group(cg).head != slot {
            return;
        }
        if p == NIL {
            self.group_mut(cg).head = n;
        } else {
            self.next[p as usize] = n;
        }
        if n == NIL {
            self.group_mut(cg).tail = p;
        } else {
            self.prev[n as usize] = p;
        }
        self.prev[s] = NIL;
        self.next[s] = NIL;
        self.group_mut(cg).len -= 1;
    }
}

#[cfg(test)]
mod tests;
