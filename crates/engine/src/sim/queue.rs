//! Scheduling: the closed set of events and the time-ordered queue.

use crate::Nanos;
use mm::Pfn;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Event {
    Thread(u32),
    /// kswapd timer; stale if the generation does not match.
    Kswapd(u64),
    /// Writeback of a page finished.
    WritebackDone(Pfn),
    /// Flusher wakeup; stale if the generation does not match.
    Flusher(u64),
}

/// Time-ordered event queue; ties are broken by insertion sequence.
#[derive(Default)]
pub(super) struct EventQueue {
    heap: BinaryHeap<Reverse<(Nanos, u64, Event)>>,
    seq: u64,
}

impl EventQueue {
    pub(super) fn push(&mut self, at: Nanos, ev: Event) {
        self.seq += 1;
        self.heap.push(Reverse((at, self.seq, ev)));
    }
    pub(super) fn pop(&mut self) -> Option<(Nanos, Event)> {
        self.heap.pop().map(|Reverse((t, _, e))| (t, e))
    }
    pub(super) fn next_time(&self) -> Nanos {
        self.heap.peek().map_or(Nanos::MAX, |Reverse((t, _, _))| *t)
    }
    /// Removes the writeback completions due at or before `t` and returns
    /// their pages in queue order; every other event keeps its place and tie order.
    pub(super) fn take_writebacks_until(&mut self, t: Nanos) -> Vec<Pfn> {
        let mut done = Vec::new();
        let mut others = Vec::new();
        while let Some(&Reverse(entry)) = self.heap.peek() {
            if entry.0 > t {
                break;
            }
            self.heap.pop();
            match entry.2 {
                Event::WritebackDone(pfn) => done.push(pfn),
                _ => others.push(entry),
            }
        }
        self.heap.extend(others.into_iter().map(Reverse));
        done
    }
}
