//! The per-page reclaim pipeline shared by LRU designs.
//!
//! Models `shrink_folio_list()`, mm/vmscan.c (v6.x), for order-0 folios.
//! Order of steps follows the kernel: writeback classification, reference check,
//! swap-slot allocation, unmap, dirty handling and pageout, removal from the
//! mapping with a shadow entry.
//!
//! Simplifications:
//! - S-PO1: pages are never locked by others, never pinned, never demoted.
//! - S-PO2: a synchronous swap device (zram, pmem) completes the write inside
//!   `pageout`, so the page is freed in the same pass, as in the kernel.
//! - S-PO3: no legacy cgroup-v1 writeback waits (case 5c), no lazy-free pages.
//! - S-FS2: `->writepage` of a page whose buffers are locked under the
//!   journal's write leaves `PG_dirty` set (the kernel clears it, writes
//!   nothing, and activates the page it cannot release, as here).

use crate::config::{DirtyConfig, DirtyThrottle};
use crate::control::{Reclaimer, ScanControl};
use crate::rmap;
use crate::shrinker::ShrinkerConfig;
use crate::DEF_PRIORITY;
use mm::tracepoint::{ShrinkStat, Tracepoint};
use mm::{CacheEntry, Mm, PageFlags, Pfn, Shadow, VmEvent};

/// Outcome of `folio_check_references()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum References {
    /// Reclaim it, writing it if dirty.
    Reclaim,
    /// Reclaim it only if clean.
    ReclaimClean,
    /// Put it back on the inactive list.
    Keep,
    /// Move it to the active list.
    Activate,
}

/// The policy-specific steps of the pipeline.
pub trait FolioHooks {
    /// `folio_check_references()`: the policy's verdict from reference information.
    fn check_references(&mut self, mm: &mut Mm, pfn: Pfn, sc: &mut ScanControl) -> References;
    /// `workingset_eviction()`: the shadow to leave in the page's slot, or `None`
    /// if this page type keeps no shadow. Advances the policy's eviction clock.
    fn eviction_shadow(&mut self, mm: &Mm, pfn: Pfn) -> Option<Shadow>;
}

/// Per-call results of `shrink_folio_list` (kernel `struct reclaim_stat`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FolioStat {
    /// Dirty or writeback file pages.
    pub nr_dirty: u64,
    /// Dirty file pages not queued for writeback.
    pub nr_unqueued_dirty: u64,
    /// Writeback pages already marked for reclaim.
    pub nr_congested: u64,
    /// Pages under writeback, newly marked for reclaim.
    pub nr_writeback: u64,
    /// Pages met under writeback by kswapd with the node's writeback flag set.
    pub nr_immediate: u64,
    /// Pages submitted for write.
    pub nr_pageout: u64,
    /// Pages activated, by type (0 anon, 1 file).
    pub nr_activate: [u64; 2],
    /// Pages kept for another trip because they were referenced.
    pub nr_ref_keep: u64,
    /// Pages that could not be unmapped.
    pub nr_unmap_fail: u64,
}

impl FolioStat {
    /// Adds this call's writeback classification to the pass totals (`sc->nr`).
    pub fn add_to(&self, nr: &mut crate::control::PassStat) {
        nr.dirty += self.nr_dirty;
        nr.congested += self.nr_congested;
        nr.unqueued_dirty += self.nr_unqueued_dirty;
        nr.writeback += self.nr_writeback;
        nr.immediate += self.nr_immediate;
    }
}

/// `trace_mm_vmscan_lru_shrink_inactive()`: one inactive batch of type `anon`
/// that isolated `nr_scanned` pages and freed `nr_reclaimed`.
pub fn trace_shrink_inactive(
    mm: &mut Mm,
    sc: &ScanControl,
    anon: bool,
    nr_scanned: u64,
    nr_reclaimed: u64,
    st: &FolioStat,
) {
    let stat = ShrinkStat {
        dirty: st.nr_dirty,
        writeback: st.nr_writeback,
        congested: st.nr_congested,
        immediate: st.nr_immediate,
        activate: st.nr_activate,
        ref_keep: st.nr_ref_keep,
        unmap_fail: st.nr_unmap_fail,
    };
    let (priority, file, nid) = (sc.priority, !anon, sc.nid.unwrap_or(0));
    let zid = sc.zone.map_or(mm::ZoneId::Normal, |z| mm.zones[z].id);
    mm.trace(|| Tracepoint::ShrinkInactive { nr_scanned, nr_reclaimed, stat, priority, file, nid, zid });
}

/// Counts `nr` pages reclaimed by `sc`'s reclaimer from type `anon`
/// (`pgsteal_kswapd|direct`, `pgsteal_anon|file`).
pub fn count_steal(mm: &mut Mm, sc: &ScanControl, anon: bool, nr: u64) {
    if let Some(ev) = sc.pgsteal_event() {
        mm.stat.count(ev, nr);
    }
    mm.stat.count(if anon { VmEvent::PgstealAnon } else { VmEvent::PgstealFile }, nr);
}

/// How the caller's environment affects the pipeline.
#[derive(Clone, Copy, Debug)]
pub struct PageoutEnv {
    /// The swap device completes writes synchronously (zram, pmem).
    pub sync_swap: bool,
    /// Virtual time now (ns); copied into [`ScanControl::now_ns`] by kswapd and direct reclaim.
    pub now_ns: u64,
    /// The filesystem device is congested (`bdi_write_congested`) as the pass starts.
    pub fs_congested: bool,
    /// Dirty/writeback handling flags.
    pub dirty: DirtyConfig,
    /// Slab shrinker flags.
    pub shrinker: ShrinkerConfig,
}

impl PageoutEnv {
    /// Today's kernel at time 0, swapping to a synchronous device, nothing
    /// congested: the environment of hand-checked scenarios.
    pub const TODAY: PageoutEnv = PageoutEnv {
        sync_swap: true,
        now_ns: 0,
        fs_congested: false,
        dirty: DirtyConfig::TODAY,
        shrinker: ShrinkerConfig::TODAY,
    };
}

enum Verdict {
    Activate,
    Keep,
    Free,
}

/// Runs the pipeline over `list` (isolated pages). Freed pages are returned to
/// the frame allocator; survivors stay in `list`, with `PG_active` set on those
/// to activate. Returns the number of pages freed.
pub fn shrink_folio_list<H: FolioHooks>(
    mm: &mut Mm,
    hooks: &mut H,
    sc: &mut ScanControl,
    env: PageoutEnv,
    list: &mut Vec<Pfn>,
    stat: &mut FolioStat,
) -> u64 {
    // One test a batch: the copy without recording has no test per page.
    if mm.tracing() {
        shrink_list::<H, true>(mm, hooks, sc, env, list, stat)
    } else {
        shrink_list::<H, false>(mm, hooks, sc, env, list, stat)
    }
}

/// [`shrink_folio_list`] with the per-page tracepoints compiled in (`TRACE`) or out.
fn shrink_list<H: FolioHooks, const TRACE: bool>(
    mm: &mut Mm,
    hooks: &mut H,
    sc: &mut ScanControl,
    env: PageoutEnv,
    list: &mut Vec<Pfn>,
    stat: &mut FolioStat,
) -> u64 {
    let mut nr_reclaimed = 0;
    let mut kept = 0;
    for i in 0..list.len() {
        let pfn = list[i];
        let verdict = shrink_one::<H, TRACE>(mm, hooks, sc, env, pfn, stat);
        match verdict {
            Verdict::Free => {
                nr_reclaimed += 1;
                continue;
            }
            Verdict::Activate => {
                let f = &mut mm.frames[pfn];
                // Activated swap-cache pages give back their slot when swap is tight.
                if f.flags.has(PageFlags::SWAPCACHE) && mm.swap.is_half_full() && !f.flags.has(PageFlags::WRITEBACK) {
                    free_swap_cache(mm, pfn);
                }
                let f = &mut mm.frames[pfn];
                f.flags.set(PageFlags::ACTIVE);
                stat.nr_activate[!f.is_anon() as usize] += 1;
                mm.trace_if::<TRACE>(|| Tracepoint::SimLruMove { pfn, to_active: true, why: "reclaim_activate" });
            }
            Verdict::Keep => {}
        }
        list[kept] = pfn;
        kept += 1;
    }
    list.truncate(kept);
    mm.stat.count(VmEvent::Pgactivate, stat.nr_activate[0] + stat.nr_activate[1]);
    sc.work.pages_freed += nr_reclaimed;
    nr_reclaimed
}

/// Drops a page's swap slot and turns it into an ordinary dirty anon page (`folio_free_swap`).
pub fn free_swap_cache(mm: &mut Mm, pfn: Pfn) {
    let f = &mut mm.frames[pfn];
    debug_assert!(f.flags.has(PageFlags::SWAPCACHE));
    let slot = f.swap;
    f.flags.clear(PageFlags::SWAPCACHE);
    f.flags.set(PageFlags::DIRTY);
    f.swap = 0;
    mm.set_swap_cache(slot, CacheEntry::EMPTY);
    mm.swap_free(slot);
}

fn shrink_one<H: FolioHooks, const TRACE: bool>(
    mm: &mut Mm,
    hooks: &mut H,
    sc: &mut ScanControl,
    env: PageoutEnv,
    pfn: Pfn,
    stat: &mut FolioStat,
) -> Verdict {
    sc.nr_scanned += 1;
    let flags = mm.frames[pfn].flags;
    let anon = flags.has(PageFlags::SWAPBACKED);
    if flags.has(PageFlags::LOCKED) {
        return Verdict::Keep;
    }
    // Step 4: dirty/writeback classification, file pages only.
    let dirty_verdict = if env.dirty.dirty_activate { Verdict::Activate } else { Verdict::Keep };
    if !anon {
        let (dirty, wb) = check_dirty_writeback(flags, env.dirty.is_dirty_writeback);
        if dirty || wb {
            stat.nr_dirty += 1;
        }
        if dirty && !wb {
            stat.nr_unqueued_dirty += 1;
        }
        let congested = match env.dirty.throttle {
            // v3.9 counted only pages whose pageout found the queue congested:
            // never file pages (direct reclaim does not write them, kswapd may always).
            DirtyThrottle::IffCongested => false,
            // v3.11 also counted pages of a congested device (`bdi_write_congested`).
            DirtyThrottle::Stall => (wb && flags.has(PageFlags::RECLAIM)) || (env.fs_congested && (dirty || wb)),
            DirtyThrottle::Throttle => wb && flags.has(PageFlags::RECLAIM),
        };
        if congested {
            stat.nr_congested += 1;
        }
    }
    // Step 5: under writeback.
    if flags.has(PageFlags::WRITEBACK) {
        // Before v3.11 there was no immediate-reclaim case: kswapd skipped on.
        let immediate_case = env.dirty.throttle != DirtyThrottle::IffCongested;
        if immediate_case
            && sc.reclaimer == Reclaimer::Kswapd
            && flags.has(PageFlags::RECLAIM)
            && mm.dirty.pgdat_writeback
        {
            stat.nr_immediate += 1;
        } else {
            mm.frames[pfn].flags.set(PageFlags::RECLAIM);
            stat.nr_writeback += 1;
        }
        return dirty_verdict;
    }
    // Step 6: references.
    let refs = hooks.check_references(mm, pfn, sc);
    match refs {
        References::Activate => return Verdict::Activate,
        References::Keep => {
            stat.nr_ref_keep += 1;
            return Verdict::Keep;
        }
        References::Reclaim | References::ReclaimClean => {}
    }
    // Step 7: anon pages need a swap slot before they can be unmapped.
    if anon && !mm.frames[pfn].flags.has(PageFlags::SWAPCACHE) {
        let f = mm.frames[pfn];
        let region = f.owner.as_anon().expect("swap-backed page without an anon owner");
        let Some(slot) = mm.swap_alloc(region, f.index) else {
            return Verdict::Activate;
        };
        mm.set_swap_cache(slot, CacheEntry::resident(pfn));
        let f = &mut mm.frames[pfn];
        f.swap = slot;
        f.flags.set(PageFlags::SWAPCACHE | PageFlags::DIRTY);
    }
    // Step 8: unmap from every page table.
    if sc.may_unmap {
        sc.work.rmap_walks += 1;
        sc.work.rmap_ptes += rmap::try_to_unmap(mm, pfn) as u64;
    } else if rmap::folio_mapped(mm, pfn) {
        return Verdict::Keep;
    }
    // Step 9: dirty pages.
    if mm.frames[pfn].flags.has(PageFlags::DIRTY) {
        if !anon && !kswapd_may_write_file(mm, sc, env, pfn) {
            // Leave file writeback to the flusher; reclaim the page when it is clean.
            mm.stat.count(VmEvent::NrVmscanImmediateReclaim, 1);
            mm.frames[pfn].flags.set(PageFlags::RECLAIM);
            return dirty_verdict;
        }
        if refs == References::ReclaimClean || !sc.may_writepage {
            return Verdict::Keep;
        }
        match pageout::<TRACE>(mm, sc, pfn, anon, stat) {
            // zswap took the page, or the filesystem had nothing to write: the page is clean.
            Pageout::Zswap | Pageout::NothingToWrite => {}
            // zswap refused it and the group may not write to the device, or
            // the page's buffers are busy.
            Pageout::Activate | Pageout::BuffersBusy => return Verdict::Activate,
            Pageout::Submitted if anon && env.sync_swap => {
                // S-PO2: the write has completed; the page is clean and can go now.
                let written = mm.swap_write_sync(mm.frames[pfn].swap, mm.page_key(pfn));
                mm.end_writeback(pfn);
                if !written {
                    // zram refused the write (`__end_swap_bio_write` error): the page is
                    // redirtied and stays in the swap cache.
                    mm.frames[pfn].flags.set(PageFlags::DIRTY);
                    return Verdict::Keep;
                }
            }
            Pageout::Submitted => {
                sc.pageout.push(pfn);
                return Verdict::Keep;
            }
        }
    }
    // Step 11: remove from the page cache or swap cache, leaving a shadow.
    remove_mapping::<H, TRACE>(mm, hooks, pfn, sc.priority);
    Verdict::Free
}

/// `page_check_dirty_writeback()` (mm/vmscan.c, v3.11) for a file page: is it
/// dirty, is it under writeback? Before v3.11 (`ask_fs` off) the page flags
/// answer. Since, the filesystem's `is_dirty_writeback` answers where it has
/// one: ext3's (`buffer_check_dirty_writeback()`, fs/buffer.c) says dirty if
/// any buffer is dirty and under writeback if the page is or any buffer is
/// locked. Other filesystems' pages never have the buffer states set here, so
/// the flags answer for them either way.
#[inline]
fn check_dirty_writeback(flags: PageFlags, ask_fs: bool) -> (bool, bool) {
    let (dirty, wb) = (flags.has(PageFlags::DIRTY), flags.has(PageFlags::WRITEBACK));
    if !ask_fs {
        return (dirty, wb);
    }
    (dirty && !flags.has(PageFlags::BUFFERS_CLEAN), wb || flags.has(PageFlags::BUFFERS_LOCKED))
}

/// Only kswapd writes file pages, and only when the kernel lets it: below
/// priority 10 before v3.11; while the node is flagged dirty since (and since
/// v4.13 only pages already marked `PG_reclaim`, i.e. seen twice).
fn kswapd_may_write_file(mm: &Mm, sc: &ScanControl, env: PageoutEnv, pfn: Pfn) -> bool {
    if sc.reclaimer != Reclaimer::Kswapd {
        return false;
    }
    if env.dirty.kswapd_write_at_priority {
        return sc.priority < DEF_PRIORITY - 2;
    }
    mm.dirty.pgdat_dirty && (!env.dirty.dirty_activate || mm.frames[pfn].flags.has(PageFlags::RECLAIM))
}

/// What [`pageout`] did with a dirty page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pageout {
    /// zswap took it: clean, no writeback.
    Zswap,
    /// Its write was started (`PAGE_SUCCESS`).
    Submitted,
    /// zswap refused it and its group's `memory.zswap.writeback` is 0: it
    /// stays dirty and goes back to the active list (`AOP_WRITEPAGE_ACTIVATE`).
    Activate,
    /// A file page none of whose buffers was dirty: `->writepage` wrote
    /// nothing and the page is clean (ext3, its data already written by the journal).
    NothingToWrite,
    /// A file page whose buffers are locked under the journal's write: it
    /// cannot be released (`try_to_release_page` fails) and is activated.
    BuffersBusy,
}

/// `pageout()`: clears dirty and writes the page: an anon page goes to zswap
/// first (`swap_writepage`), else writeback starts and the write is submitted.
/// Inlined into its one caller (a recording test must not move it out of line).
#[inline(always)]
fn pageout<const TRACE: bool>(
    mm: &mut Mm,
    sc: &mut ScanControl,
    pfn: Pfn,
    anon: bool,
    stat: &mut FolioStat,
) -> Pageout {
    let flags = mm.frames[pfn].flags;
    if !anon && flags.0 & (PageFlags::BUFFERS_LOCKED | PageFlags::BUFFERS_CLEAN) != 0 {
        // `->writepage` runs (and is counted as a reclaim write) but finds no dirty buffer.
        count_pageout::<TRACE>(mm, sc, pfn, stat);
        if flags.has(PageFlags::BUFFERS_LOCKED) {
            // S-FS2: PG_dirty stays until the journal's write ends (the kernel
            // clears it now, then fails to release the locked buffers).
            return Pageout::BuffersBusy;
        }
        // The page is isolated: the PG_reclaim rotation at writeback end does not apply.
        mm.writepage_without_io(pfn);
        return Pageout::NothingToWrite;
    }
    if anon && mm.zswap.is_some() {
        if zswap_store(mm, sc, pfn) {
            count_pageout::<TRACE>(mm, sc, pfn, stat);
            mm.frames[pfn].flags.clear(PageFlags::DIRTY);
            return Pageout::Zswap;
        }
        if !mm.zswap_writeback_enabled(pfn) {
            return Pageout::Activate;
        }
    }
    count_pageout::<TRACE>(mm, sc, pfn, stat);
    mm.start_writeback(pfn);
    mm.frames[pfn].flags.set(PageFlags::RECLAIM);
    if anon {
        mm.stat.count(VmEvent::Pswpout, 1);
    }
    mm.stat.count(VmEvent::Pgpgout, mm::PAGE_SIZE / 1024);
    Pageout::Submitted
}

/// What a written page counts: `mm_vmscan_write_folio`, `nr_vmscan_write`, `nr_pageout`.
#[inline(always)]
fn count_pageout<const TRACE: bool>(mm: &mut Mm, sc: &mut ScanControl, pfn: Pfn, stat: &mut FolioStat) {
    mm.trace_if::<TRACE>(|| Tracepoint::WriteFolio { pfn });
    mm.stat.count(VmEvent::NrVmscanWrite, 1);
    stat.nr_pageout += 1;
    sc.work.pages_written += 1;
}

/// `zswap_store()` from `swap_writepage()`, with its CPU work counted: true if zswap took the page.
#[cold]
fn zswap_store(mm: &mut Mm, sc: &mut ScanControl, pfn: Pfn) -> bool {
    use mm::zswap::Store;
    let before = mm.zswap.as_ref().map_or(0, |z| z.stat().written_back_pages);
    let Some(outcome) = mm.zswap_store(pfn) else { return false };
    sc.work.zswap_written_back += mm.zswap.as_ref().map_or(0, |z| z.stat().written_back_pages) - before;
    sc.work.zswap_compressed += matches!(outcome, Store::Stored | Store::AllocFail) as u64;
    outcome == Store::Stored
}

/// `__remove_mapping()`: drops the page from its cache slot, stores the shadow,
/// and frees the frame.
fn remove_mapping<H: FolioHooks, const TRACE: bool>(mm: &mut Mm, hooks: &mut H, pfn: Pfn, priority: i32) {
    let shadow = hooks.eviction_shadow(mm, pfn);
    mm.trace_if::<TRACE>(|| Tracepoint::SimEvict { pfn, priority, shadow: shadow.map(|s| s.0) });
    let entry = shadow.map_or(CacheEntry::EMPTY, CacheEntry::shadow);
    let f = mm.frames[pfn];
    if f.flags.has(PageFlags::SWAPCACHE) {
        mm.set_swap_cache(f.swap, entry);
    } else {
        let file = f.owner.as_file().expect("reclaiming an anon page that is not in the swap cache");
        mm.trace_if::<TRACE>(|| Tracepoint::FilemapDelete { pfn, file, index: f.index });
        mm.set_cache_entry(file, f.index, entry);
    }
    mm.free_frame(pfn);
    mm.stat.count(VmEvent::Pgfree, 1);
}
