//! Replaying a trace on the simulated machine: an [`engine::Program`] that
//! streams records from a [`TraceReader`] as the run consumes them.
//!
//! [`install`] creates one anonymous region per declared address space and
//! one file per declared file. The replay is one thread issuing the trace's
//! page references in order ([`trace::refs`]): an access is one
//! `Access::Mem`, an n-page file read or write is n `Access::FileRead` /
//! `Access::FileWrite` in page order. It can also write each reference's
//! global page id to a tap, the input of Belady's MIN for the same run.
//!
//! Simplifications S-TR1: mmap, munmap and exit records do not change the
//! machine (regions and files exist for the whole run; an exited process's
//! memory is not freed); timestamps are not replayed (the engine's own costs
//! set the pace).

use engine::{Access, Program, SimBuilder, Step};
use mm::{FileId, RegionId};
use std::cell::RefCell;
use std::io::{BufRead, Write};
use std::rc::Rc;
use trace::refs::PageIds;
use trace::{ErrorKind, Event, Header, Location, Record, TraceError, TraceReader};

/// The regions and files a trace's declarations became.
#[derive(Clone, Debug)]
pub struct Installed {
    regions: Vec<RegionId>,
    files: Vec<FileId>,
}

/// Creates the trace's address spaces and files on the machine being built.
/// Fails if the trace's page size is not the simulator's.
pub fn install(b: &mut SimBuilder, h: &Header) -> Result<Installed, String> {
    if h.page_size as u64 != mm::PAGE_SIZE {
        return Err(format!(
            "trace pages are {} bytes but the simulator's are {}; convert with --page-size {}",
            h.page_size,
            mm::PAGE_SIZE,
            mm::PAGE_SIZE
        ));
    }
    Ok(Installed {
        regions: h.spaces.iter().map(|d| b.add_anon_region(d.pages)).collect(),
        files: h.files.iter().map(|d| b.add_file(d.pages)).collect(),
    })
}

/// What a replay saw, readable after the run.
#[derive(Debug, Default)]
pub struct ReplayStatus {
    /// The first bad record or failed tap write (the replay stops there).
    pub error: Option<TraceError>,
    /// Page references issued.
    pub refs: u64,
    /// The trace was read to its end record.
    pub finished: bool,
}

/// A pending file read or write of several pages.
struct Range {
    file: FileId,
    next: u32,
    end: u32,
    write: bool,
    /// Global page id of `next`.
    global: u32,
}

/// The trace-driven program.
pub struct Replay<R: BufRead> {
    reader: TraceReader<R>,
    installed: Installed,
    ids: PageIds,
    range: Option<Range>,
    tap: Option<Box<dyn Write>>,
    /// References issued; published to `status` when the replay is dropped
    /// (with the run, also when `time_limit` stops it first).
    refs: u64,
    status: Rc<RefCell<ReplayStatus>>,
}

impl<R: BufRead> Drop for Replay<R> {
    fn drop(&mut self) {
        self.status.borrow_mut().refs = self.refs;
    }
}

impl<R: BufRead> Replay<R> {
    /// A replay of `reader` onto `installed`; if `tap` is given, each
    /// reference's global page id is written to it (u32 little-endian).
    pub fn new(
        reader: TraceReader<R>,
        installed: Installed,
        tap: Option<Box<dyn Write>>,
    ) -> (Replay<R>, Rc<RefCell<ReplayStatus>>) {
        let status = Rc::new(RefCell::new(ReplayStatus::default()));
        let ids = PageIds::new(reader.header());
        (Replay { reader, installed, ids, range: None, tap, refs: 0, status: status.clone() }, status)
    }

    #[inline(always)]
    fn issue(&mut self, global: u32, a: Access) -> Step {
        if let Some(t) = &mut self.tap {
            if let Err(e) = t.write_all(&global.to_le_bytes()) {
                return self.fail(TraceError::new("page-id spool", Location::Nowhere, ErrorKind::Io, e.to_string()));
            }
        }
        self.refs += 1;
        Step::Access(a)
    }

    /// The access a trace record asks for (its first page), if the record is one.
    #[inline(always)]
    fn access_of(&self, e: Event) -> Option<Access> {
        match e {
            Event::Access { space, page, write } => {
                Some(Access::Mem { region: *self.installed.regions.get(space as usize)?, page, write })
            }
            Event::FileRead { file, page, .. } => {
                Some(Access::FileRead { file: *self.installed.files.get(file as usize)?, page })
            }
            Event::FileWrite { file, page, .. } => {
                Some(Access::FileWrite { file: *self.installed.files.get(file as usize)?, page })
            }
            Event::Mmap { .. } | Event::Munmap { .. } | Event::Exit => None,
        }
    }

    #[cold]
    fn fail(&mut self, e: TraceError) -> Step {
        self.status.borrow_mut().error.get_or_insert(e);
        Step::Done
    }
}

impl<R: BufRead> Program for Replay<R> {
    fn has_upcoming(&self) -> bool {
        true
    }

    /// The first page of the record `ahead` records on, if it is already in
    /// the reader's block (a multi-page range in progress is not counted).
    fn upcoming(&self, ahead: usize) -> Option<Access> {
        self.access_of(self.reader.peek(ahead)?)
    }

    fn next(&mut self) -> Step {
        // The common case: a checked one-page record, nothing pending, no tap.
        if self.range.is_none() && self.tap.is_none() {
            if let Some(rec) = self.reader.next_valid() {
                match rec.event {
                    Event::Access { .. } | Event::FileRead { pages: 1, .. } | Event::FileWrite { pages: 1, .. } => {
                        if let Some(a) = self.access_of(rec.event) {
                            self.refs += 1;
                            return Step::Access(a);
                        }
                    }
                    _ => {}
                }
                if let Some(step) = self.step_of(rec) {
                    return step;
                }
            }
        }
        self.next_slow()
    }
}

impl<R: BufRead> Replay<R> {
    /// [`Program::next`] in general: ranges in progress, the tap, the end and errors.
    #[inline(never)]
    fn next_slow(&mut self) -> Step {
        loop {
            if let Some(r) = &mut self.range {
                if r.next < r.end {
                    let (file, page, global) = (r.file, r.next, r.global);
                    r.next += 1;
                    r.global += 1;
                    let a = if r.write { Access::FileWrite { file, page } } else { Access::FileRead { file, page } };
                    return self.issue(global, a);
                }
                self.range = None;
            }
            let rec = match self.reader.next_record() {
                Ok(Some(r)) => r,
                Ok(None) => {
                    if let Some(t) = &mut self.tap {
                        if let Err(e) = t.flush() {
                            return self.fail(TraceError::new(
                                "page-id spool",
                                Location::Nowhere,
                                ErrorKind::Io,
                                e.to_string(),
                            ));
                        }
                    }
                    self.status.borrow_mut().finished = true;
                    return Step::Done;
                }
                Err(e) => return self.fail(e),
            };
            if let Some(step) = self.step_of(rec) {
                return step;
            }
        }
    }

    /// The step of a checked record: its first access (a range of several
    /// pages is left for the next calls), or `None` for a record that touches nothing.
    fn step_of(&mut self, rec: Record) -> Option<Step> {
        match rec.event {
            Event::Access { space, page, write } => {
                let global = self.ids.of(&rec.event).expect("accesses reference pages").0;
                Some(self.issue(global, Access::Mem { region: self.installed.regions[space as usize], page, write }))
            }
            Event::FileRead { file, page, pages } | Event::FileWrite { file, page, pages } => {
                let (global, _, write) = self.ids.of(&rec.event).expect("file I/O references pages");
                let file = self.installed.files[file as usize];
                if pages == 1 {
                    let a = if write { Access::FileWrite { file, page } } else { Access::FileRead { file, page } };
                    return Some(self.issue(global, a));
                }
                self.range = Some(Range { file, next: page, end: page + pages, write, global });
                Some(self.next_slow())
            }
            // S-TR1: no effect on the machine.
            Event::Mmap { .. } | Event::Munmap { .. } | Event::Exit => None,
        }
    }
}
