//! What workload threads do: a stream of steps.

use mm::{FileId, RegionId};

/// One memory access by a thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// A load or store to page `page` of `region` (anonymous or file-mapped):
    /// goes through the page table, sets the accessed bit.
    Mem {
        /// The region.
        region: RegionId,
        /// Page index within the region.
        page: u32,
        /// A store (sets the dirty bit).
        write: bool,
    },
    /// A `read()` of page `page` of `file` through a file descriptor: goes
    /// through the page cache and `folio_mark_accessed`.
    FileRead {
        /// The file.
        file: FileId,
        /// Page index within the file.
        page: u32,
    },
    /// A `write()` of a whole page `page` of `file` through a file descriptor:
    /// dirties the page-cache page (no read needed) and may be throttled by
    /// `balance_dirty_pages`.
    FileWrite {
        /// The file.
        file: FileId,
        /// Page index within the file.
        page: u32,
    },
}

/// A registered write to a policy control (see `SimBuilder::add_control_write`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ControlWrite(pub u32);

/// The next thing a thread does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// One access (one operation of the workload).
    Access(Access),
    /// Compute or sleep for this many nanoseconds without touching memory
    /// (off the CPU with `cpus=N`; neither user nor system time).
    Think(u64),
    /// The page of the thread's last access, this many times more (a loop
    /// storing into every word of the page it just touched, as usemem's):
    /// resident accesses of user time, `cpu.access_ns` each, that are not
    /// operations of their own (S-EN5: the page stays resident meanwhile).
    Repeat(u32),
    /// Write to a policy control (MGLRU's `lru_gen` aging and eviction
    /// requests); the thread is charged the reclaim work's CPU time. If the
    /// running policy lacks the control, the write fails with `ENOENT`.
    Control(ControlWrite),
    /// A transaction (the workload's unit of score, e.g. one TPC-B transaction)
    /// begins: the engine notes the thread's clock.
    TxnBegin,
    /// The transaction begun last ends: its latency goes into the thread's
    /// transaction histogram and it counts as one transaction.
    TxnEnd,
    /// Record the machine's event counters (`/proc/vmstat`'s) now, into the
    /// report's `snapshots`: phases of a run, to set beside a real kernel's.
    Snapshot,
    /// The thread has finished.
    Done,
}

/// A workload thread's behaviour. Deterministic given its construction.
pub trait Program {
    /// The next step.
    fn next(&mut self) -> Step;

    /// Whether [`Program::upcoming`] can name accesses (the engine asks it only then).
    fn has_upcoming(&self) -> bool {
        false
    }

    /// The access `ahead` steps after the next one, if the program knows it
    /// already. A hint only: the engine prefetches what that access will
    /// read; no result depends on it.
    fn upcoming(&self, _ahead: usize) -> Option<Access> {
        None
    }
}
