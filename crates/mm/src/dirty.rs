//! Dirty and writeback page state: the `PG_dirty` / `PG_writeback` transitions
//! with the node's `nr_dirty` / `nr_writeback` gauges kept exact, and the node
//! flags reclaim sets when it meets such pages.
//!
//! Models `folio_mark_dirty()` (accounting part of `__folio_mark_dirty`),
//! `folio_clear_dirty_for_io()`, `folio_start_writeback()` and
//! `folio_end_writeback()` (mm/page-writeback.c, mm/filemap.c) without time:
//! the engine drives the flusher and device completions.

use crate::frame::{FrameTable, PageFlags, Pfn};
use crate::vmstat::{VmEvent, VmStat};
use crate::Mm;

/// Dirty-page accounting of the node and reclaim's node flags.
#[derive(Clone, Debug, Default)]
pub struct DirtyState {
    /// `NR_FILE_DIRTY`: file pages with `PG_dirty` (anon pages are never counted).
    pub nr_dirty: u64,
    /// `NR_WRITEBACK`: pages with `PG_writeback` (file and swap).
    pub nr_writeback: u64,
    /// Per zone (an index into [`Mm::zones`]): its `NR_FILE_DIRTY + NR_WRITEBACK`,
    /// what `zone_dirty_ok()` weighs (empty until a page is dirtied).
    pub zone_pending: Vec<u64>,
    /// File pages newly dirtied since the engine last looked, in dirtying order
    /// (the engine moves them to the flusher's queue with a timestamp).
    pub newly_dirtied: Vec<Pfn>,
    /// `PGDAT_DIRTY` / `ZONE_TAIL_LRU_DIRTY`: reclaim met a tail full of unqueued dirty pages.
    pub pgdat_dirty: bool,
    /// `PGDAT_WRITEBACK` / `ZONE_WRITEBACK`: reclaim met many pages under writeback.
    pub pgdat_writeback: bool,
    /// `LRUVEC_NODE_CONGESTED` / `ZONE_CONGESTED`: every dirty page met was congested.
    pub pgdat_congested: bool,
}

impl DirtyState {
    /// Clears the three node flags (kswapd found the node balanced).
    pub fn clear_flags(&mut self) {
        self.pgdat_dirty = false;
        self.pgdat_writeback = false;
        self.pgdat_congested = false;
    }

    /// `folio_mark_dirty()` for callers that hold `Mm` split into its parts
    /// (the page-table walks): sets `PG_dirty`; a file page newly dirtied is
    /// counted (`nr_dirty`, `nr_dirtied`) and logged for the flusher.
    /// Returns true if it was clean.
    pub fn mark_dirty(&mut self, frames: &mut FrameTable, stat: &mut VmStat, pfn: Pfn) -> bool {
        let f = &mut frames[pfn];
        if f.flags.has(PageFlags::DIRTY) {
            // A write to a page whose buffers went out dirties them again (`mark_buffer_dirty`).
            f.flags.clear(PageFlags::BUFFERS_CLEAN);
            return false;
        }
        f.flags.set(PageFlags::DIRTY);
        if !f.is_anon() {
            let zone = frames.zone_of(pfn);
            self.zone_pending_add(zone, 1);
            self.nr_dirty += 1;
            self.newly_dirtied.push(pfn);
            stat.count(VmEvent::NrDirtied, 1);
        }
        true
    }

    /// Adds `delta` to zone `zone`'s write-pending count.
    fn zone_pending_add(&mut self, zone: usize, delta: i64) {
        if self.zone_pending.len() <= zone {
            self.zone_pending.resize(zone + 1, 0);
        }
        let n = &mut self.zone_pending[zone];
        *n = n.saturating_add_signed(delta);
    }
}

impl Mm {
    /// `folio_mark_dirty()`: see [`DirtyState::mark_dirty`].
    pub fn set_page_dirty(&mut self, pfn: Pfn) -> bool {
        self.dirty.mark_dirty(&mut self.frames, &mut self.stat, pfn)
    }

    /// `folio_clear_dirty_for_io()` + `folio_start_writeback()`: the page is
    /// clean, under writeback, and counted in `nr_writeback`.
    pub fn start_writeback(&mut self, pfn: Pfn) {
        let f = &mut self.frames[pfn];
        debug_assert!(!f.flags.has(PageFlags::WRITEBACK), "pfn {pfn} already under writeback");
        let was_dirty_file = f.flags.test_clear(PageFlags::DIRTY) && !f.is_anon();
        f.flags.set(PageFlags::WRITEBACK);
        if was_dirty_file {
            self.dirty.nr_dirty -= 1;
        } else {
            self.dirty.zone_pending_add(self.frames.zone_of(pfn), 1);
        }
        self.dirty.nr_writeback += 1;
    }

    /// A write of a dirty page's buffers that leaves the page flags alone
    /// (ext3's journal commit writing ordered data, `journal_submit_data_buffers`:
    /// each buffer locked, its dirty bit cleared, `submit_bh`): the buffers are
    /// locked and clean, `PG_dirty` stays (the page stays counted in `nr_dirty`)
    /// and `PG_writeback` is never set.
    pub fn start_buffer_write(&mut self, pfn: Pfn) {
        let f = &mut self.frames[pfn];
        debug_assert!(f.flags.has(PageFlags::DIRTY) && !f.flags.has(PageFlags::WRITEBACK), "pfn {pfn}");
        debug_assert!(!f.flags.has(PageFlags::BUFFERS_LOCKED), "pfn {pfn} buffers already locked");
        f.flags.set(PageFlags::BUFFERS_LOCKED | PageFlags::BUFFERS_CLEAN);
    }

    /// The end of a [`Mm::start_buffer_write`] write (`end_buffer_write_sync`:
    /// the buffers unlocked). Returns true if the page is still `PG_dirty`: its
    /// `->writepage` is still to come (writing nothing if its buffers stayed
    /// clean, its new data if it was written to meanwhile).
    pub fn end_buffer_write(&mut self, pfn: Pfn) -> bool {
        let f = &mut self.frames[pfn];
        assert!(f.flags.has(PageFlags::BUFFERS_LOCKED), "buffer write end on pfn {pfn} without locked buffers");
        f.flags.clear(PageFlags::BUFFERS_LOCKED);
        // No `nr_written` here: the kernel counts it at the page's writeback end.
        f.flags.has(PageFlags::DIRTY)
    }

    /// `->writepage` of a `PG_dirty` page none of whose buffers is dirty
    /// (`block_write_full_page` finding nothing to submit): `PG_dirty` is
    /// cleared and `PG_writeback` set and ended at once, with no I/O. Returns
    /// whether `PG_reclaim` was set (and clears it), as [`Mm::end_writeback`].
    pub fn writepage_without_io(&mut self, pfn: Pfn) -> bool {
        let f = &mut self.frames[pfn];
        debug_assert!(f.flags.has(PageFlags::DIRTY | PageFlags::BUFFERS_CLEAN), "pfn {pfn} has dirty buffers");
        debug_assert!(!f.flags.has(PageFlags::BUFFERS_LOCKED), "pfn {pfn} buffers locked");
        self.start_writeback(pfn);
        self.frames[pfn].flags.clear(PageFlags::BUFFERS_CLEAN);
        self.end_writeback(pfn)
    }

    /// `folio_end_writeback()`'s state change: clears `PG_writeback`, counts
    /// `nr_written`. Returns whether `PG_reclaim` was set (and clears it): the
    /// caller then rotates the page to the inactive tail.
    pub fn end_writeback(&mut self, pfn: Pfn) -> bool {
        let f = &mut self.frames[pfn];
        assert!(f.flags.has(PageFlags::WRITEBACK), "writeback end on pfn {pfn} not under writeback");
        f.flags.clear(PageFlags::WRITEBACK);
        let reclaim = f.flags.test_clear(PageFlags::RECLAIM);
        self.dirty.nr_writeback -= 1;
        self.dirty.zone_pending_add(self.frames.zone_of(pfn), -1);
        self.stat.count(VmEvent::NrWritten, 1);
        reclaim
    }
}

#[cfg(test)]
mod tests {
    use crate::{Mm, Owner, PageFlags};

    #[test]
    fn dirty_writeback_round_trip_keeps_gauges_exact() {
        let mut mm = Mm::new(4, 0);
        let f = mm.add_file(2);
        let p = mm.frames.alloc(Owner::file(f), 0, 0).unwrap();
        let a = mm.frames.alloc(Owner::anon(crate::RegionId(0)), 0, PageFlags::SWAPBACKED).unwrap();
        assert!(mm.set_page_dirty(p));
        assert!(!mm.set_page_dirty(p));
        assert!(mm.set_page_dirty(a));
        assert_eq!((mm.dirty.nr_dirty, mm.dirty.newly_dirtied.clone()), (1, vec![p]));
        mm.start_writeback(p);
        mm.start_writeback(a);
        assert_eq!((mm.dirty.nr_dirty, mm.dirty.nr_writeback, mm.dirty.zone_pending.clone()), (0, 2, vec![2]));
        mm.frames[p].flags.set(PageFlags::RECLAIM);
        assert!(mm.end_writeback(p));
        assert!(!mm.end_writeback(a));
        assert_eq!((mm.dirty.nr_writeback, mm.dirty.zone_pending.clone()), (0, vec![0]));
        assert_eq!(mm.stat.get(crate::VmEvent::NrDirtied), 1);
        assert_eq!(mm.stat.get(crate::VmEvent::NrWritten), 2);
    }
}
