//! Dirty page limits, the throttling of writers, and the flusher.
//!
//! Models `global_dirtyable_memory()`, `domain_dirty_limits()`,
//! `balance_dirty_pages()` (mm/page-writeback.c) and the per-device flusher's
//! work selection (`wb_do_writeback`: reclaim-requested work, background
//! writeback above the background threshold, periodic "kupdate" writeback of
//! pages dirty for longer than `dirty_expire_centisecs`) from fs/fs-writeback.c.
//!
//! Simplifications:
//! - S-WB1: one flusher for the one filesystem device; it writes pages in the
//!   order they were dirtied (inode order and `dirtied_when` collapse into one
//!   FIFO), contiguous runs of one file as one request of at most 128 pages
//!   (512 KiB `max_sectors_kb`), a chunk of at most `MAX_WRITEBACK_PAGES` (1024)
//!   pages per step, and waits for a chunk to complete before the next.
//! - S-WB2: `balance_dirty_pages` is a pause model, not the bandwidth estimator:
//!   no pause up to the free-run ceiling `(thresh + bg_thresh) / 2`; above it the
//!   writer is held to the device's write bandwidth scaled by
//!   `pos_ratio = (thresh - dirty) / (thresh - freerun)`, at most `HZ/5` per page;
//!   at or above `thresh` the writer waits until the next writeback completion
//!   on the device (at most `HZ/5`).
//! - S-WB3: a write through a shared file mapping dirties the page at the write
//!   fault; later stores through a present PTE only set the PTE dirty bit, which
//!   reaches `PG_dirty` when reclaim unmaps the page or MGLRU's walk finds the PTE
//!   young (no `page_mkclean` write-protect cycle).
//! - S-WB4: on ext4 and xfs (`fs.type`) pages are dirty or under writeback
//!   exactly as their flags say (no buffer heads are modelled for them).
//! - S-FS1: on ext3 (data=ordered) every data write goes out as the journal
//!   commit's buffer writes, at the flusher's times: the flusher's chunks stand
//!   for kjournald's commits (the 5 s commit interval and the ordered-data list
//!   are not modelled), and ext3's own `->writepage` (which does set
//!   `PG_writeback`) is reached only by reclaim and for pages whose buffers
//!   the journal already wrote.

use crate::device::Device;
use crate::{Nanos, HZ, JIFFY_NS};
use knobs::{size_knob, u64_knob, History, Kind, Knob, Version};
use mm::{Mm, PageFlags, Pfn};
use std::collections::VecDeque;

/// KERNEL: `MAX_WRITEBACK_PAGES`, the most pages one writeback chunk writes (4 MiB).
pub const MAX_WRITEBACK_PAGES: u64 = 1024;
/// KERNEL: 512 KiB `max_sectors_kb`: the largest write request, in pages.
pub const MAX_REQUEST_PAGES: u64 = 128;
/// KERNEL: `MAX_PAUSE`, the longest `balance_dirty_pages` sleep (HZ/5).
pub const MAX_PAUSE_NS: Nanos = JIFFY_NS * HZ / 5;

/// The writeback sysctls (`vm.dirty_*`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WritebackKnobs {
    /// `vm.dirty_ratio`: percent of dirtyable memory at which writers are stopped.
    pub dirty_ratio: u64,
    /// `vm.dirty_background_ratio`: percent at which background writeback starts.
    pub dirty_background_ratio: u64,
    /// `vm.dirty_expire_centisecs`: age at which dirty data is written by periodic writeback.
    pub dirty_expire_centisecs: u64,
    /// `vm.dirty_writeback_centisecs`: interval of periodic writeback wakeups.
    pub dirty_writeback_centisecs: u64,
    /// `vm.dirty_bytes`: an absolute hard limit replacing `dirty_ratio` (0 = use the ratio).
    pub dirty_bytes: u64,
    /// `vm.dirty_background_bytes`: absolute background threshold (0 = use the ratio).
    pub dirty_background_bytes: u64,
    /// Before v3.14: dirtyable memory counts anon LRU pages while swap has room.
    pub dirtyable_anon: bool,
    /// The filesystem on the filesystem device (`fs.type`).
    pub fs_type: FsType,
}

/// The filesystem holding the files: how its data pages are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FsType {
    /// ext3, data=ordered (the default mode): the journal commit writes the
    /// data as buffers (`submit_bh`), leaving `PG_dirty` set and never setting
    /// `PG_writeback`; `->writepage` then finds clean buffers and writes nothing.
    Ext3,
    /// ext4 (seed 003's filesystem): every data write sets `PG_writeback`.
    Ext4,
    /// xfs: as ext4 for reclaim (page flags always accurate).
    Xfs,
}

impl FsType {
    /// The value's name, as accepted by `--set fs.type=...`.
    pub fn name(self) -> &'static str {
        match self {
            FsType::Ext3 => "ext3",
            FsType::Ext4 => "ext4",
            FsType::Xfs => "xfs",
        }
    }
    /// Parses a value name.
    pub fn from_name(s: &str) -> Option<FsType> {
        [FsType::Ext3, FsType::Ext4, FsType::Xfs].into_iter().find(|f| f.name() == s)
    }
    /// The filesystem writes data pages as journal buffer writes (S-FS1).
    pub fn journals_data_buffers(self) -> bool {
        self == FsType::Ext3
    }
}

/// The `vm.dirty_*` sysctls (all in the kernel since v2.6; `*_bytes` since v2.6.29).
pub const KNOBS: &[Knob<WritebackKnobs>] = &[
    u64_knob!(
        "vm.dirty_ratio",
        dirty_ratio,
        1,
        100,
        SYSCTL,
        "percent of dirtyable memory at which writers stop (kernel default 20)"
    ),
    u64_knob!(
        "vm.dirty_background_ratio",
        dirty_background_ratio,
        0,
        100,
        SYSCTL,
        "percent of dirtyable memory at which background writeback starts (kernel default 10)"
    ),
    u64_knob!(
        "vm.dirty_expire_centisecs",
        dirty_expire_centisecs,
        0,
        8_640_000,
        SYSCTL,
        "age at which periodic writeback writes dirty data, 1/100 s (kernel default 3000)"
    ),
    u64_knob!(
        "vm.dirty_writeback_centisecs",
        dirty_writeback_centisecs,
        1,
        8_640_000,
        SYSCTL,
        "interval of periodic writeback, 1/100 s (kernel default 500)"
    ),
    size_knob!("vm.dirty_bytes", dirty_bytes, SYSCTL, "absolute dirty limit (size; 0 = use vm.dirty_ratio)"),
    size_knob!(
        "vm.dirty_background_bytes",
        dirty_background_bytes,
        SYSCTL,
        "absolute background writeback threshold (size; 0 = use vm.dirty_background_ratio)"
    ),
    knobs::bool_knob!(
        "dirtyable_anon",
        dirtyable_anon,
        // KERNEL: a1c3bfb2f67e "mm/page-writeback.c: do not count anon pages as dirtyable
        // memory" (v3.14): before it global_dirtyable_memory() and zone_dirtyable_memory()
        // added the reclaimable anon pages (global_reclaimable_pages()).
        History::Behaviour { since: None, until: Some(Version::new(3, 13)) },
        "before v3.14: dirtyable memory (the base of vm.dirty_ratio and vm.dirty_background_ratio, machine-wide and per zone) counts anon LRU pages while swap has room"
    ),
    Knob {
        key: "fs.type",
        help: "filesystem on the fs device: ext4 (default; seed 003's), xfs (as ext4: page flags accurate), ext3 (data=ordered: the journal writes data as buffers without PG_writeback, leaving PG_dirty pages with clean buffers; S-FS1; ext3's own driver until v4.2)",
        kind: Kind::Choice,
        history: History::Model,
        get: |c| c.fs_type.name().into(),
        set: |c, v| {
            c.fs_type = FsType::from_name(v).ok_or("ext3, ext4 or xfs")?;
            Ok(())
        },
    },
];

/// A writeback sysctl: present in every kernel the profiles name.
const SYSCTL: History = History::Tunable { since: Version::new(2, 6) };

impl Default for WritebackKnobs {
    fn default() -> Self {
        WritebackKnobs {
            dirty_ratio: 20,
            dirty_background_ratio: 10,
            dirty_expire_centisecs: 3000,
            dirty_writeback_centisecs: 500,
            dirty_bytes: 0,
            dirty_background_bytes: 0,
            dirtyable_anon: false,
            fs_type: FsType::Ext4,
        }
    }
}

/// `nr_dirty_threshold` and `nr_dirty_background_threshold`, in pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Thresholds {
    /// Writers are stopped here.
    pub thresh: u64,
    /// Background writeback starts here.
    pub bg_thresh: u64,
}

impl Thresholds {
    /// `domain_dirty_limits()` for the ratio knobs: percentages of `dirtyable`
    /// pages; a background threshold at or above the hard one is halved.
    pub fn from_ratios(dirtyable: u64, ratio: u64, background_ratio: u64) -> Thresholds {
        Thresholds::from_knobs(
            dirtyable,
            &WritebackKnobs {
                dirty_ratio: ratio,
                dirty_background_ratio: background_ratio,
                ..WritebackKnobs::default()
            },
        )
    }

    /// `domain_dirty_limits()`: the `*_bytes` knobs when set (rounded up to
    /// pages), else the ratios of `dirtyable`; a background threshold at or
    /// above the hard one is halved.
    pub fn from_knobs(dirtyable: u64, k: &WritebackKnobs) -> Thresholds {
        let pages = |bytes: u64| bytes.div_ceil(mm::PAGE_SIZE);
        let thresh = if k.dirty_bytes > 0 { pages(k.dirty_bytes) } else { k.dirty_ratio * dirtyable / 100 };
        let mut bg_thresh = if k.dirty_background_bytes > 0 {
            pages(k.dirty_background_bytes)
        } else {
            k.dirty_background_ratio * dirtyable / 100
        };
        if bg_thresh >= thresh {
            bg_thresh = thresh / 2;
        }
        Thresholds { thresh, bg_thresh }
    }

    /// `dirty_freerun_ceiling()`: writers are not throttled below this.
    pub fn freerun(&self) -> u64 {
        (self.thresh + self.bg_thresh) / 2
    }

    /// S-WB2: the pause after dirtying a page with `dirty` pages (dirty +
    /// writeback) outstanding, on a device writing a page in `page_write_ns`.
    /// `None` at or above the hard limit: the writer waits for writeback to
    /// complete (at most [`MAX_PAUSE_NS`]).
    pub fn pause(&self, dirty: u64, page_write_ns: Nanos) -> Option<Nanos> {
        let freerun = self.freerun();
        if dirty <= freerun {
            return Some(0);
        }
        if dirty >= self.thresh {
            return None;
        }
        // rate = bandwidth * pos_ratio, so pause = page time / pos_ratio.
        let pause = page_write_ns * (self.thresh - freerun) / (self.thresh - dirty);
        Some(pause.min(MAX_PAUSE_NS))
    }
}

/// `global_dirtyable_memory()`: free pages above the reserve plus file LRU pages (at least 1).
pub fn dirtyable_memory(free: u64, reserve: u64, file_lru: u64) -> u64 {
    (free.saturating_sub(reserve) + file_lru).max(1)
}

/// Position of a file page in the filesystem device's address space: files
/// lie one after another in 2^32-page extents (SIM-CHOICE).
pub fn file_page_pos(mm: &Mm, pfn: Pfn) -> u64 {
    let f = &mm.frames[pfn];
    let file = f.owner.as_file().expect("file position of a non-file page");
    ((file.0 as u64) << 32) | f.index as u64
}

/// Pages whose writeback the flusher submitted, with their completion times.
pub type Submitted = Vec<(Pfn, Nanos)>;

/// The flusher thread of the filesystem device.
#[derive(Debug, Default)]
pub struct Flusher {
    /// Dirty file pages with the time they were dirtied, oldest first. Entries
    /// of pages since cleaned or reclaimed are dropped when reached.
    queue: VecDeque<(Pfn, Nanos)>,
    /// Pages reclaim asked to be written (`wakeup_flusher_threads`); 0 = none.
    reclaim_pages: u64,
    /// Pages the last step cleaned without I/O that had `PG_reclaim` set: the
    /// caller rotates them to the inactive tail (`folio_end_writeback`).
    pub rotate: Vec<Pfn>,
    /// The time of the pending wakeup, if one is queued.
    pub scheduled: Option<Nanos>,
    /// Generation of the pending wakeup event; older events are stale.
    pub gen: u64,
}

impl Flusher {
    /// Moves pages newly dirtied (logged by `Mm::set_page_dirty`) into the
    /// queue. Returns true if the queue was empty before (the caller arms the
    /// periodic wakeup, `wb_wakeup_delayed`).
    pub fn note_dirtied(&mut self, mm: &mut Mm, now: Nanos) -> bool {
        let was_empty = self.queue.is_empty();
        self.queue.extend(mm.dirty.newly_dirtied.drain(..).map(|p| (p, now)));
        was_empty && !self.queue.is_empty()
    }

    /// `wakeup_flusher_threads()`: write back every page dirty now (one request at a time).
    pub fn request_all(&mut self, mm: &Mm) {
        if self.reclaim_pages == 0 {
            self.reclaim_pages = mm.dirty.nr_dirty.max(1);
        }
    }

    /// One flusher step at `now`: picks the work (reclaim request, background,
    /// periodic expiry), writes one chunk on `dev` and returns what it submitted.
    pub fn step(
        &mut self,
        mm: &mut Mm,
        dev: &mut Device,
        now: Nanos,
        t: Thresholds,
        knobs: &WritebackKnobs,
    ) -> Submitted {
        let expire_ns = knobs.dirty_expire_centisecs * 10_000_000;
        let budget = if self.reclaim_pages > 0 || mm.dirty.nr_dirty > t.bg_thresh {
            MAX_WRITEBACK_PAGES
        } else {
            // kupdate: only pages dirtied before now - expire.
            self.queue.iter().take(MAX_WRITEBACK_PAGES as usize).take_while(|&&(_, at)| at + expire_ns <= now).count()
                as u64
        };
        let mut chosen: Vec<Pfn> = Vec::new();
        // Pages whose `->writepage` found nothing to write; they count against the chunk.
        let mut cleaned = 0u64;
        let journal = knobs.fs_type.journals_data_buffers();
        // Each entry is looked at once per step; a pfn queued twice is written once.
        let mut left = self.queue.len();
        while chosen.len() as u64 + cleaned < budget && left > 0 {
            left -= 1;
            let Some((pfn, at)) = self.queue.pop_front() else { break };
            let f = &mm.frames[pfn];
            if f.owner.as_file().is_none() || !f.flags.has(PageFlags::DIRTY) {
                continue;
            }
            if f.flags.0 & (PageFlags::WRITEBACK | PageFlags::BUFFERS_LOCKED) != 0 {
                // Redirtied while being written: WB_SYNC_NONE skips it this round.
                self.queue.push_back((pfn, at));
                continue;
            }
            if f.flags.has(PageFlags::BUFFERS_CLEAN) {
                // ext3: the journal already wrote its buffers; PG_dirty is cleared without I/O.
                if mm.writepage_without_io(pfn) {
                    self.rotate.push(pfn);
                }
                cleaned += 1;
                continue;
            }
            if journal {
                mm.start_buffer_write(pfn);
            } else {
                mm.start_writeback(pfn);
            }
            chosen.push(pfn);
        }
        self.reclaim_pages = self.reclaim_pages.saturating_sub(chosen.len() as u64 + cleaned);
        let mut out = Vec::with_capacity(chosen.len());
        let mut i = 0;
        while i < chosen.len() {
            // A run of consecutive pages of one file, at most one request long.
            let pos = file_page_pos(mm, chosen[i]);
            let mut n = 1;
            while i + n < chosen.len()
                && (n as u64) < MAX_REQUEST_PAGES
                && file_page_pos(mm, chosen[i + n]) == pos + n as u64
            {
                n += 1;
            }
            let done = dev.submit_at(now, pos, n as u64, true);
            for &pfn in &chosen[i..i + n] {
                mm.stat.count(mm::VmEvent::Pgpgout, mm::PAGE_SIZE / 1024);
                out.push((pfn, done));
            }
            i += n;
        }
        out
    }

    /// When the flusher should run next after a step that submitted `out`: when
    /// the chunk completes if there was work, else at the next periodic wakeup
    /// while anything is queued, else never (until a writer wakes it).
    pub fn next_wakeup(&self, out: &Submitted, now: Nanos, knobs: &WritebackKnobs) -> Option<Nanos> {
        if let Some(&(_, done)) = out.last() {
            return Some(done.max(now + 1));
        }
        (!self.queue.is_empty()).then(|| now + knobs.dirty_writeback_centisecs.max(1) * 10_000_000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::DeviceKind;

    #[test]
    fn thresholds_by_hand() {
        // 1000 dirtyable pages at 20% / 10%: 200 and 100, free-run up to 150.
        let t = Thresholds::from_ratios(1000, 20, 10);
        assert_eq!(t, Thresholds { thresh: 200, bg_thresh: 100 });
        assert_eq!(t.freerun(), 150);
        // A background ratio at or above the hard one is halved.
        assert_eq!(Thresholds::from_ratios(1000, 20, 30), Thresholds { thresh: 200, bg_thresh: 100 });
        assert_eq!(Thresholds::from_ratios(999, 15, 15), Thresholds { thresh: 149, bg_thresh: 74 });
        assert_eq!(dirtyable_memory(300, 50, 700), 950);
        // Byte limits override the ratios; rounded up to pages.
        let k = WritebackKnobs {
            dirty_bytes: 4096 * 300 + 1,
            dirty_background_bytes: 4096 * 100,
            ..WritebackKnobs::default()
        };
        assert_eq!(Thresholds::from_knobs(1000, &k), Thresholds { thresh: 301, bg_thresh: 100 });
        assert_eq!(dirtyable_memory(10, 50, 0), 1);
    }

    #[test]
    fn pause_grows_from_freerun_to_the_hard_limit() {
        let t = Thresholds { thresh: 200, bg_thresh: 100 };
        assert_eq!(t.pause(150, 1000), Some(0));
        // pos_ratio = (200 - 175) / (200 - 150) = 1/2: twice the page time.
        assert_eq!(t.pause(175, 1000), Some(2000));
        assert_eq!(t.pause(199, 1000), Some(50_000));
        assert_eq!(t.pause(200, 1000), None);
        assert_eq!(t.pause(199, 10_000_000), Some(MAX_PAUSE_NS));
    }

    fn dirty_file(pages: u32) -> (Mm, Vec<Pfn>) {
        let mut mm = Mm::new(pages + 4, 0);
        let f = mm.add_file(pages);
        let pfns = (0..pages).map(|i| mm.frames.alloc(mm::Owner::file(f), i, 0).unwrap()).collect::<Vec<_>>();
        for &p in &pfns {
            mm.set_page_dirty(p);
        }
        (mm, pfns)
    }

    #[test]
    fn background_writeback_writes_contiguous_runs_in_requests() {
        let (mut mm, pfns) = dirty_file(300);
        let mut fl = Flusher::default();
        assert!(fl.note_dirtied(&mut mm, 0));
        let mut dev = DeviceKind::Hdd.preset();
        let knobs = WritebackKnobs::default();
        // 300 dirty > bg 100: background work writes them all, 128 + 128 + 44 pages.
        let out = fl.step(&mut mm, &mut dev, 0, Thresholds { thresh: 200, bg_thresh: 100 }, &knobs);
        assert_eq!(out.len(), 300);
        assert_eq!(dev.queued(0), 3);
        assert_eq!((mm.dirty.nr_dirty, mm.dirty.nr_writeback), (0, 300));
        assert!(mm.frames[pfns[0]].flags.has(PageFlags::WRITEBACK));
        assert_eq!(fl.next_wakeup(&out, 0, &knobs), Some(out[299].1));
    }

    /// ext3 (S-FS1): the flusher's chunk goes out as the journal's buffer
    /// writes: the pages stay `PG_dirty` (nr_dirty 10, nr_writeback 0) with
    /// locked buffers; when the writes end they come back to the queue and the
    /// next step clears `PG_dirty` without a request, rotating the one page
    /// reclaim had marked. A page written to meanwhile is written again.
    #[test]
    fn ext3_writes_data_as_buffers_then_cleans_without_io() {
        let (mut mm, pfns) = dirty_file(10);
        let mut fl = Flusher::default();
        fl.note_dirtied(&mut mm, 0);
        let mut dev = DeviceKind::Ssd.preset();
        let knobs = WritebackKnobs { fs_type: FsType::Ext3, ..WritebackKnobs::default() };
        let bg = Thresholds { thresh: 8, bg_thresh: 4 };
        assert_eq!(fl.step(&mut mm, &mut dev, 0, bg, &knobs).len(), 10);
        assert_eq!((mm.dirty.nr_dirty, mm.dirty.nr_writeback, dev.queued(0)), (10, 0, 1));
        assert!(mm.frames[pfns[0]].flags.has(PageFlags::DIRTY | PageFlags::BUFFERS_LOCKED | PageFlags::BUFFERS_CLEAN));
        mm.frames[pfns[4]].flags.set(PageFlags::RECLAIM);
        for &p in &pfns {
            assert!(mm.end_buffer_write(p));
            mm.dirty.newly_dirtied.push(p);
        }
        // Page 9 is written to again: its buffers are dirty once more.
        assert!(!mm.set_page_dirty(pfns[9]));
        fl.note_dirtied(&mut mm, 1);
        let out = fl.step(&mut mm, &mut dev, 1, bg, &knobs);
        assert_eq!(out.iter().map(|o| o.0).collect::<Vec<_>>(), vec![pfns[9]]);
        assert_eq!(fl.rotate, vec![pfns[4]]);
        assert_eq!((mm.dirty.nr_dirty, mm.dirty.nr_writeback), (1, 0));
        assert_eq!(mm.stat.get(mm::VmEvent::NrWritten), 9);
        assert_eq!(mm.stat.get(mm::VmEvent::Pgpgout), 11 * mm::PAGE_SIZE / 1024);
    }

    #[test]
    fn periodic_writeback_writes_only_expired_pages() {
        let (mut mm, _) = dirty_file(10);
        let mut fl = Flusher::default();
        fl.note_dirtied(&mut mm, 0);
        let mut dev = DeviceKind::Ssd.preset();
        let knobs = WritebackKnobs::default();
        let low = Thresholds { thresh: 2000, bg_thresh: 1000 };
        assert!(fl.step(&mut mm, &mut dev, 29_000_000_000, low, &knobs).is_empty());
        assert_eq!(fl.next_wakeup(&Vec::new(), 29_000_000_000, &knobs), Some(34_000_000_000));
        assert_eq!(fl.step(&mut mm, &mut dev, 30_000_000_000, low, &knobs).len(), 10);
        // Reclaim's request writes regardless of age and thresholds.
        let (mut mm, _) = dirty_file(10);
        let mut fl = Flusher::default();
        fl.note_dirtied(&mut mm, 0);
        fl.request_all(&mm);
        assert_eq!(fl.step(&mut mm, &mut dev, 1, low, &knobs).len(), 10);
    }
}
