//! `trace stats`: counts, footprint, read/write mix, reuse distances and the
//! LRU miss-ratio curve, in one streaming pass (memory O(declared pages)).

use crate::format::{Event, Header, Record};
use crate::refs::PageIds;
use crate::stack::StackDistances;

/// Accumulates statistics over a trace's records.
pub struct Stats {
    ids: PageIds,
    page_size: u64,
    /// Records by kind: access, file read, file write, mmap, munmap, exit.
    pub records: [u64; 6],
    /// Page references (an n-page file read or write counts n).
    pub refs: u64,
    /// References that write (stores and file writes).
    pub writes: u64,
    /// Timestamp of the first and last record (traces with timestamps).
    pub time_span_ns: Option<(u64, u64)>,
    /// Stack distances of the references.
    pub stack: StackDistances,
}

/// Names of [`Stats::records`] entries.
pub const RECORD_KINDS: [&str; 6] = ["access", "file_read", "file_write", "mmap", "munmap", "exit"];

impl Stats {
    /// Empty statistics for a trace with this header.
    pub fn new(h: &Header) -> Stats {
        let ids = PageIds::new(h);
        let stack = StackDistances::new(ids.total());
        Stats { ids, page_size: h.page_size as u64, records: [0; 6], refs: 0, writes: 0, time_span_ns: None, stack }
    }

    /// Adds one (validated) record.
    #[inline]
    pub fn add(&mut self, r: &Record) {
        let k = match r.event {
            Event::Access { .. } => 0,
            Event::FileRead { .. } => 1,
            Event::FileWrite { .. } => 2,
            Event::Mmap { .. } => 3,
            Event::Munmap { .. } => 4,
            Event::Exit => 5,
        };
        self.records[k] += 1;
        self.time_span_ns = Some(self.time_span_ns.map_or((r.time_ns, r.time_ns), |(a, _)| (a, r.time_ns)));
        if let Some((first, n, write)) = self.ids.of(&r.event) {
            self.refs += n as u64;
            if write {
                self.writes += n as u64;
            }
            for p in first..first + n {
                self.stack.reference(p);
            }
        }
    }

    /// Distinct pages referenced.
    pub fn distinct_pages(&self) -> u64 {
        self.stack.cold()
    }

    /// Bytes of the distinct pages referenced.
    pub fn footprint_bytes(&self) -> u64 {
        self.distinct_pages() * self.page_size
    }

    /// Reuse distances in power-of-two buckets: `(lo, hi, references)` for
    /// distances `lo..=hi`; first touches are not included (they are the
    /// distinct pages).
    pub fn reuse_histogram(&self) -> Vec<(u64, u64, u64)> {
        let h = self.stack.histogram();
        let mut out = Vec::new();
        let mut lo = 1u64;
        while (lo as usize) < h.len() {
            let hi = (lo * 2 - 1).min(h.len() as u64 - 1);
            let n: u64 = h[lo as usize..=hi as usize].iter().sum();
            if n > 0 {
                out.push((lo, hi, n));
            }
            lo *= 2;
        }
        out
    }

    /// Default cache sizes for a miss-ratio curve: powers of two from 16 pages
    /// up to the footprint, and the footprint itself.
    pub fn default_sizes(&self) -> Vec<u64> {
        let mut s: Vec<u64> = (4..40).map(|k| 1u64 << k).take_while(|&c| c < self.distinct_pages()).collect();
        s.push(self.distinct_pages().max(1));
        s
    }
}
