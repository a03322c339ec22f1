//! Scheduling: the closed set of events, the time-ordered queue, and a
//! thread's horizon (how far it runs before the next queued event).

use super::Machine;
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

impl Machine {
    /// A thread's clock passed its horizon at `clock`: takes the samples it
    /// crossed that no other actor is behind, and returns the new horizon
    /// (the next event, the time limit or the next sample).
    pub(super) fn horizon_after(&mut self, clock: Nanos, limit: Nanos) -> Nanos {
        let events = self.queue.next_time().min(limit);
        self.sample_until(clock.saturating_sub(1).min(events));
        events.min(self.sampler.next_at())
    }

    /// The thread at `clock` yields if it passed `*horizon`; on passing, the
    /// horizon is renewed after taking the samples crossed.
    #[inline]
    pub(super) fn must_yield(&mut self, clock: Nanos, limit: Nanos, horizon: &mut Nanos) -> bool {
        if clock <= *horizon {
            return false;
        }
        *horizon = self.horizon_after(clock, limit);
        clock > *horizon
    }
}
