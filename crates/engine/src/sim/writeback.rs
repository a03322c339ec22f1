//! The machine's dirty pages and writeback, in one place: writes through file
//! descriptors and shared mappings, `balance_dirty_pages`, the flusher's
//! events, routing reclaim's writes to devices, writeback completions, and
//! reclaim throttling waits. The model without the machine (dirty limits,
//! pauses, the flusher's state, the `vm.dirty_*` knobs) is `crate::writeback`.

use super::{Event, EventQueue, Machine, Stall};
use crate::device::Device;
use crate::writeback::file_page_pos;
use crate::writeback::{dirtyable_memory, Thresholds};
use crate::{Nanos, HZ, JIFFY_NS};
use mm::{FileId, Mm, Owner, PageFlags, Pfn, VmEvent, Watermark, NO_PFN};
use reclaim::policy::ReclaimPolicy;
use reclaim::policy::{AccessKind, LruSizes, Origin};
use reclaim::throttle::ThrottleReason;
use reclaim::ScanControl;

impl Machine {
    /// `nr_dirty_threshold` / `nr_dirty_background_threshold` now.
    pub(super) fn dirty_thresholds(&self) -> Thresholds {
        Thresholds::from_knobs(self.global_dirtyable(), &self.cfg.writeback)
    }

    /// `global_dirtyable_memory()`: free pages above the reserve, and file LRU pages.
    pub(super) fn global_dirtyable(&self) -> u64 {
        // totalreserve_pages: the zones' high watermarks (no lowmem reserve, S-MM1).
        let reserve: u64 = self.mm.zones.iter().map(|z| z.wmark(Watermark::High)).sum();
        dirtyable_memory(self.mm.nr_free(), reserve, self.dirtyable_lru(self.policy.lru_sizes()))
    }

    /// The LRU pages of `sizes` that count as dirtyable: file pages, and
    /// before v3.14 (`dirtyable_anon`) anon pages while swap has room.
    pub(super) fn dirtyable_lru(&self, sizes: LruSizes) -> u64 {
        let anon = if self.cfg.writeback.dirtyable_anon && self.mm.nr_swap_pages() > 0 {
            sizes.inactive_anon + sizes.active_anon
        } else {
            0
        };
        sizes.inactive_file + sizes.active_file + anon
    }

    /// A `write()` of a whole page of `file` that missed the fast path (page
    /// absent, or clean): allocate without reading (full-page write), dirty it,
    /// then `balance_dirty_pages`.
    pub(super) fn filemap_write(&mut self, file: FileId, index: u32, now: Nanos) -> Result<(Nanos, Nanos), Stall> {
        let (pfn, stall) = match self.mm.files[file.0 as usize].cache[index as usize].pfn() {
            Some(pfn) => (pfn, 0),
            None => {
                let (pfn, stall) = self.alloc_page_for_write(Owner::file(file), index, now)?;
                let shadow = self.mm.insert_cache_page(file, index, pfn);
                // A page-cache insertion like a read's (the policy sees no difference).
                self.lru_add(pfn, Origin::FileRead, shadow);
                (pfn, stall)
            }
        };
        self.policy.on_access(&mut self.mm, pfn, AccessKind::MarkAccessed);
        let pause = self.dirty_page(pfn, now + stall);
        Ok((stall + self.cfg.cpu.file_write_new() + pause, stall))
    }

    /// Marks `pfn` dirty on behalf of a writer at `now` and returns the
    /// writer's `balance_dirty_pages` pause.
    pub(super) fn dirty_page(&mut self, pfn: Pfn, now: Nanos) -> Nanos {
        if !self.mm.set_page_dirty(pfn) {
            return 0;
        }
        self.note_dirtied(now);
        let t = self.dirty_thresholds();
        let dirty = self.mm.dirty.nr_dirty + self.mm.dirty.nr_writeback;
        if self.mm.dirty.nr_dirty > t.bg_thresh {
            // Background writeback starts as soon as a writer sees the threshold crossed.
            self.kick_flusher(now);
        }
        let page_write_ns = mm::PAGE_SIZE * 1_000_000_000 / self.fs_dev.bytes_per_sec.max(1);
        let pause = t.pause(dirty, page_write_ns).unwrap_or_else(|| {
            let cap = now + crate::writeback::MAX_PAUSE_NS;
            self.fs_dev.pages_done_at(now, 1).unwrap_or(cap).min(cap).max(now) - now
        });
        // balance_dirty_pages() sleeps.
        self.sleep_ns += pause;
        pause
    }

    /// Queues newly dirtied pages for the flusher and arms its periodic wakeup.
    pub(super) fn note_dirtied(&mut self, now: Nanos) {
        if self.flusher.note_dirtied(&mut self.mm, now) && self.flusher.scheduled.is_none() {
            let at = now + self.cfg.writeback.dirty_writeback_centisecs.max(1) * 10_000_000;
            self.schedule_flusher(at);
        }
    }

    fn schedule_flusher(&mut self, at: Nanos) {
        self.flusher.gen += 1;
        self.flusher.scheduled = Some(at);
        self.queue.push(at, Event::Flusher(self.flusher.gen));
    }

    /// Wakes the flusher now unless it is already due sooner.
    pub(super) fn kick_flusher(&mut self, now: Nanos) {
        if self.flusher.scheduled.is_none_or(|at| at > now) {
            self.schedule_flusher(now);
        }
    }

    /// The flusher's event: one chunk of writeback, then its next wakeup.
    pub(super) fn flusher_event(&mut self, now: Nanos) {
        self.flusher.scheduled = None;
        let t = self.dirty_thresholds();
        let out = self.flusher.step(&mut self.mm, &mut self.fs_dev, now, t, &self.cfg.writeback);
        for &(pfn, done) in &out {
            self.queue.push(done, Event::WritebackDone(pfn));
        }
        for pfn in std::mem::take(&mut self.flusher.rotate) {
            self.policy.rotate_reclaimable(&mut self.mm, pfn);
        }
        if let Some(at) = self.flusher.next_wakeup(&out, now, &self.cfg.writeback) {
            self.schedule_flusher(at);
        }
    }

    /// After a reclaim invocation at `now` that cost `cost`: submits its writes,
    /// queues pages it dirtied (unmapped PTE-dirty pages), wakes the flusher if
    /// asked, and returns how long the reclaimer must wait if it was throttled.
    pub(super) fn after_reclaim(&mut self, sc: &ScanControl, now: Nanos, cost: Nanos) -> Nanos {
        let at = now + cost;
        self.submit_pageouts(sc, at);
        self.note_dirtied(at);
        if sc.wake_flusher {
            self.flusher.request_all(&self.mm);
            self.kick_flusher(at);
        }
        let Some(t) = sc.throttle else { return 0 };
        let nid = sc.nid.unwrap_or_else(|| self.task_node());
        let first = self.throttle_wait(t.reason, at);
        self.throttled(t.reason, at, first, nid);
        // v3.11 direct reclaim: wait_iff_congested() after the congestion_wait,
        // asleep again while a device congested then has not drained below its
        // off mark (`nr_bdi_congested` still nonzero), until it does or HZ/10.
        let drained = t.then_iff_congested.then(|| self.drained_after(at, at + first)).flatten();
        let Some(drained) = drained else { return first };
        let reason = ThrottleReason::IffCongested;
        let second = drained.min(at + first + reason.timeout_jiffies(HZ) * JIFFY_NS) - (at + first);
        self.throttled(reason, at + first, second, nid);
        first + second
    }

    /// Counts and traces a throttling sleep of `wait` from `at`.
    fn throttled(&mut self, reason: ThrottleReason, at: Nanos, wait: Nanos, nid: u8) {
        self.reclaim_throttled_ns += wait;
        let timeout = reason.timeout_jiffies(HZ) * JIFFY_NS;
        self.mm.trace_at(at + wait, || super::trace_events::throttled(nid, reason, timeout, wait));
    }

    /// The first time after `until` that a device congested at `from` drains
    /// below its off mark, if one is still above it at `until`.
    fn drained_after(&mut self, from: Nanos, until: Nanos) -> Option<Nanos> {
        [&mut self.fs_dev, &mut self.swap_dev]
            .into_iter()
            .filter_map(|d| d.congested(from).then(|| d.uncongested_at(from)))
            .filter(|&t| t > until)
            .min()
    }

    /// How long a reclaimer throttled for `reason` at `at` sleeps: its timeout,
    /// or less when the wake-up condition comes first.
    fn throttle_wait(&mut self, reason: ThrottleReason, at: Nanos) -> Nanos {
        let timeout = at + reason.timeout_jiffies(HZ) * JIFFY_NS;
        let wake = match reason {
            // Woken when a congested queue drains (clear_bdi_congested); with no
            // congested device the sleep runs to its timeout.
            ThrottleReason::CongestionWait | ThrottleReason::IffCongested => [&mut self.fs_dev, &mut self.swap_dev]
                .into_iter()
                .filter_map(|d| d.congested(at).then(|| d.uncongested_at(at)))
                .min()
                .unwrap_or(timeout),
            // Woken once 32 pages (SWAP_CLUSTER_MAX per waiter) have been written.
            ThrottleReason::Writeback => {
                let n = reclaim::SWAP_CLUSTER_MAX;
                [&mut self.fs_dev, &mut self.swap_dev]
                    .into_iter()
                    .filter_map(|d| d.pages_done_at(at, n))
                    .min()
                    .unwrap_or(timeout)
            }
            ThrottleReason::Congested => timeout,
        };
        wake.min(timeout).max(at) - at
    }

    /// Schedules completions for the writes reclaim submitted (`sc.pageout`) at `at`.
    pub(super) fn submit_pageouts(&mut self, sc: &ScanControl, at: Nanos) {
        submit_writes(&mut self.mm, &mut self.swap_dev, &mut self.fs_dev, &mut self.queue, &sc.pageout, at);
    }

    /// `folio_end_writeback()` for a completed write of `pfn` at `now` (or the
    /// end of the journal's buffer write, after which a page still dirty goes
    /// back to the flusher).
    pub(super) fn writeback_done(&mut self, pfn: Pfn, now: Nanos) {
        let journal_write = self.mm.frames[pfn].flags.has(PageFlags::BUFFERS_LOCKED);
        end_writeback(&mut self.mm, self.policy.as_mut(), pfn);
        if journal_write {
            self.note_dirtied(now);
        }
    }

    /// Pages a read miss at `index` brings in: the page and, with readahead,
    /// the following non-resident pages up to `read_ahead_kb` (S-FR1: every
    /// miss reads ahead; no sequential-pattern detection or async readahead).
    pub(super) fn readahead_window(&self, file: FileId, index: u32) -> u32 {
        let ra = (self.cfg.read_ahead_kb * 1024 / mm::PAGE_SIZE).max(1) as u32;
        let cache = &self.mm.files[file.0 as usize].cache;
        let end = (index as u64 + ra as u64).min(cache.len() as u64) as u32;
        (index + 1..end).take_while(|&i| cache[i as usize].pfn().is_none()).count() as u32 + 1
    }

    /// Brings readahead pages `index+1 .. index+n` of `file` into the cache
    /// (no access; marked `PG_readahead`). Stops early if memory runs short.
    pub(super) fn read_ahead(&mut self, file: FileId, index: u32, n: u32, now: Nanos) {
        for i in index + 1..index + n {
            if !above_min(self) {
                break;
            }
            let Ok((pfn, _)) = self.alloc_page(Owner::file(file), i, PageFlags::READAHEAD, now) else { break };
            let shadow = self.mm.insert_cache_page(file, i, pfn);
            self.lru_add(pfn, Origin::FileRead, shadow);
            self.mm.stat.count(VmEvent::Pgpgin, mm::PAGE_SIZE / 1024);
        }
    }
}

impl Machine {
    /// `nr_dirty` and `nr_writeback` agree with the page flags (O(memory)).
    pub(super) fn check_dirty_gauges(&self) {
        let frames = || self.mm.frames.used().map(|(_, f)| f);
        let dirty = frames().filter(|f| f.owner.as_file().is_some() && f.flags.has(PageFlags::DIRTY)).count() as u64;
        let writeback = frames().filter(|f| f.flags.has(PageFlags::WRITEBACK)).count() as u64;
        // Buffer states exist only on PG_dirty pages (S-FS1, S-FS2).
        let buffers = PageFlags::BUFFERS_LOCKED | PageFlags::BUFFERS_CLEAN;
        assert!(
            frames().all(|f| f.flags.0 & buffers == 0 || f.flags.has(PageFlags::DIRTY)),
            "a page has buffer states without PG_dirty"
        );
        assert_eq!(
            (dirty, writeback),
            (self.mm.dirty.nr_dirty, self.mm.dirty.nr_writeback),
            "dirty/writeback gauges disagree with page flags"
        );
    }
}

/// Readahead allocations never enter direct reclaim (`__GFP_NORETRY` readahead
/// gfp): only while free pages are above the min watermark.
fn above_min(m: &Machine) -> bool {
    reclaim::kswapd::watermark_ok(&m.mm, Watermark::Min)
}

/// Schedules completions for writes reclaim submitted at `at`: swap-outs on
/// the swap device (contiguous slots as one request, as the block layer merges
/// them), file pages one request each on the filesystem device. zswap's
/// writebacks since the last call go to the swap device with them (S-ZS1:
/// no page waits for their completion).
pub(super) fn submit_writes(
    mm: &mut Mm,
    swap_dev: &mut Device,
    fs_dev: &mut Device,
    queue: &mut EventQueue,
    pfns: &[Pfn],
    at: Nanos,
) {
    let mut swap: Vec<(u32, Pfn)> = mm.take_zswap_writebacks().into_iter().map(|slot| (slot, NO_PFN)).collect();
    for &pfn in pfns {
        if mm.frames[pfn].is_anon() {
            swap.push((mm.frames[pfn].swap, pfn));
        } else {
            let done = fs_dev.submit_at(at, file_page_pos(mm, pfn), 1, true);
            queue.push(done, Event::WritebackDone(pfn));
        }
    }
    swap.sort_unstable();
    for run in swap.chunk_by(|a, b| b.0 == a.0 + 1) {
        let done = swap_dev.submit_at(at, run[0].0 as u64, run.len() as u64, true);
        for &(_, pfn) in run.iter().filter(|(_, pfn)| *pfn != NO_PFN) {
            queue.push(done, Event::WritebackDone(pfn));
        }
    }
}

/// `folio_end_writeback()`: a `PG_reclaim` page is rotated to the inactive
/// tail; a swap-out of an OOM-killed process's page frees it (S-OOM2).
pub(super) fn end_writeback(mm: &mut Mm, policy: &mut dyn ReclaimPolicy, pfn: Pfn) {
    if mm.frames[pfn].flags.has(PageFlags::BUFFERS_LOCKED) {
        // S-FS1: the journal's write of the page's buffers ended. A page still
        // PG_dirty is queued for the flusher again, as dirtied now: its
        // `->writepage` (nothing to write unless it was written to meanwhile) is to come.
        if mm.end_buffer_write(pfn) {
            mm.dirty.newly_dirtied.push(pfn);
        }
        return;
    }
    let rotate = mm.end_writeback(pfn);
    if super::oom::orphaned(mm, pfn) && super::oom::reap_anon_page(mm, policy, pfn) {
        return;
    }
    if rotate {
        policy.rotate_reclaimable(mm, pfn);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Config, SimBuilder};

    fn machine() -> SimBuilder {
        let mut c = Config::default();
        c.set("memory", "16M").unwrap();
        c.set("fs", "ssd").unwrap();
        SimBuilder::new(c).unwrap()
    }

    #[test]
    fn throttle_waits_by_reason() {
        let mut b = machine();
        let m = &mut b.m;
        // CONGESTED is one jiffy; congestion_wait with nothing congested runs to HZ/10.
        assert_eq!(m.throttle_wait(ThrottleReason::Congested, 0), JIFFY_NS);
        assert_eq!(m.throttle_wait(ThrottleReason::CongestionWait, 0), 100_000_000);
        // 120 one-page writes on the SSD: congested until the queue drains
        // below the off mark; the sleeper wakes exactly then.
        let done: Vec<Nanos> = (0..120).map(|i| m.fs_dev.submit_at(0, 2 * i, 1, true)).collect();
        assert!(m.fs_dev.congested(0));
        let off = crate::device::CONGESTION_OFF;
        assert_eq!(m.throttle_wait(ThrottleReason::CongestionWait, 0), done[120 - off]);
        assert_eq!(m.throttle_wait(ThrottleReason::IffCongested, 0), done[120 - off]);
        assert!(done[120 - off] < 100_000_000);
        // WRITEBACK wakes when 32 pages have been written: the 32nd request.
        assert_eq!(m.throttle_wait(ThrottleReason::Writeback, 0), done[31]);
    }

    /// v3.11 direct reclaim asks for congestion_wait then wait_iff_congested.
    /// 120 writes of 1000 pages each keep the SSD congested past HZ/10: the
    /// first sleep times out at 100 ms, the second lasts until the queue drains
    /// below the off mark. Without the second wait it is 100 ms; with a queue
    /// that drains first, the second never sleeps.
    #[test]
    fn direct_reclaim_sleeps_again_iff_still_congested() {
        use reclaim::throttle::Throttle;
        let mut b = machine();
        let m = &mut b.m;
        let done: Vec<Nanos> = (0..120).map(|i| m.fs_dev.submit_at(0, 2000 * i, 1000, true)).collect();
        let off = crate::device::CONGESTION_OFF;
        assert!(done[120 - off] > 100_000_000, "still congested at the timeout");
        let mut sc = ScanControl::new(reclaim::Reclaimer::Direct, 32);
        sc.nid = Some(0);
        let ask = |then_iff_congested| Some(Throttle { reason: ThrottleReason::CongestionWait, then_iff_congested });
        sc.throttle = ask(false);
        assert_eq!(m.after_reclaim(&sc, 0, 0), 100_000_000);
        sc.throttle = ask(true);
        assert_eq!(m.after_reclaim(&sc, 0, 0), done[120 - off]);
        let later = done[119] + 1;
        let quick: Vec<Nanos> = (0..120).map(|i| m.fs_dev.submit_at(later, 2 * i, 1, true)).collect();
        assert_eq!(m.after_reclaim(&sc, later, 0), quick[120 - off] - later);
    }

    #[test]
    fn writes_dirty_pages_and_the_flusher_cleans_them() {
        let mut b = machine();
        let file = b.add_file(8);
        let region = b.map_file(file, 0, 4, false);
        let m = &mut b.m;
        // write() of pages 4..8 and write faults on the mapping of pages 0..4.
        for p in 4..8 {
            m.filemap_write(file, p, 0).ok().unwrap();
        }
        for p in 0..4 {
            m.filemap_fault(region, p, file, p, true, 0).ok().unwrap();
        }
        assert_eq!((m.mm.dirty.nr_dirty, m.mm.stat.get(VmEvent::NrDirtied)), (8, 8));
        // A rewrite of a dirty page hits the fast path and dirties nothing new.
        assert!(m.try_hit(crate::Access::FileWrite { file, page: 5 }));
        m.check_invariants();
        // The periodic wakeup is armed 5 s out; at 31 s every page has expired (30 s).
        assert_eq!(m.flusher.scheduled, Some(5_000_000_000));
        m.flusher_event(31_000_000_000);
        assert_eq!((m.mm.dirty.nr_dirty, m.mm.dirty.nr_writeback), (0, 8));
        m.check_invariants();
        // Dirtying order gives two runs, pages 4..8 then 0..4: two requests.
        assert_eq!(m.fs_dev.queued(31_000_000_000), 2);
        while let Some((_, ev)) = m.queue.pop() {
            if let Event::WritebackDone(pfn) = ev {
                m.writeback_done(pfn, 0);
            }
        }
        assert_eq!((m.mm.dirty.nr_writeback, m.mm.stat.get(VmEvent::NrWritten)), (0, 8));
        m.check_invariants();
    }

    #[test]
    fn writeback_wait_times_out_without_io() {
        let mut b = machine();
        assert_eq!(b.m.throttle_wait(ThrottleReason::Writeback, 5), 100_000_000);
    }
}
