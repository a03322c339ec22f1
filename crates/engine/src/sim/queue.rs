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
    /// The memory cgroups' periodic statistics flush (`memcg.root_stats=periodic`).
    StatsFlush,
}

/// Time-ordered event queue; ties are broken by insertion sequence.
///
/// Writeback completions wait in a heap of their own: a reclaim call collects
/// those due by its clock after every batch (`take_writebacks_until`), which
/// must not cost a pass over every thread's queued event. Popping takes the
/// smaller `(time, sequence)` of the two heads, so the order is the one queue's.
#[derive(Default)]
pub(super) struct EventQueue {
    events: BinaryHeap<Reverse<(Nanos, u64, Event)>>,
    writebacks: BinaryHeap<Reverse<(Nanos, u64, Pfn)>>,
    seq: u64,
}

impl EventQueue {
    pub(super) fn push(&mut self, at: Nanos, ev: Event) {
        self.seq += 1;
        match ev {
            Event::WritebackDone(pfn) => self.writebacks.push(Reverse((at, self.seq, pfn))),
            ev => self.events.push(Reverse((at, self.seq, ev))),
        }
    }

    pub(super) fn pop(&mut self) -> Option<(Nanos, Event)> {
        let event = self.events.peek().map(|Reverse((t, seq, _))| (*t, *seq));
        let writeback = self.writebacks.peek().map(|Reverse((t, seq, _))| (*t, *seq));
        match (event, writeback) {
            (Some(e), Some(w)) if w < e => self.pop_writeback(),
            (Some(_), _) => self.events.pop().map(|Reverse((t, _, e))| (t, e)),
            (None, Some(_)) => self.pop_writeback(),
            (None, None) => None,
        }
    }

    fn pop_writeback(&mut self) -> Option<(Nanos, Event)> {
        self.writebacks.pop().map(|Reverse((t, _, pfn))| (t, Event::WritebackDone(pfn)))
    }

    /// True when no event is queued.
    pub(super) fn is_empty(&self) -> bool {
        self.events.is_empty() && self.writebacks.is_empty()
    }

    pub(super) fn next_time(&self) -> Nanos {
        let event = self.events.peek().map_or(Nanos::MAX, |Reverse((t, _, _))| *t);
        let writeback = self.writebacks.peek().map_or(Nanos::MAX, |Reverse((t, _, _))| *t);
        event.min(writeback)
    }

    /// Removes the writeback completions due at or before `t` and returns
    /// their pages in queue order; every other event keeps its place and tie order.
    pub(super) fn take_writebacks_until(&mut self, t: Nanos) -> Vec<Pfn> {
        let mut done = Vec::new();
        while let Some(&Reverse((at, _, pfn))) = self.writebacks.peek() {
            if at > t {
                break;
            }
            self.writebacks.pop();
            done.push(pfn);
        }
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
        events.min(self.sampler.next_at()).min(self.cpu_slice_end)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_pop_in_time_then_sequence_order_across_both_heaps() {
        let mut q = EventQueue::default();
        q.push(20, Event::Thread(0));
        q.push(10, Event::WritebackDone(7));
        q.push(10, Event::Kswapd(1));
        q.push(20, Event::WritebackDone(8));
        q.push(5, Event::Flusher(1));
        assert_eq!(q.next_time(), 5);
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            [
                (5, Event::Flusher(1)),
                (10, Event::WritebackDone(7)),
                (10, Event::Kswapd(1)),
                (20, Event::Thread(0)),
                (20, Event::WritebackDone(8)),
            ]
        );
    }

    #[test]
    fn writebacks_due_are_taken_without_disturbing_other_events() {
        let mut q = EventQueue::default();
        q.push(1, Event::Thread(0));
        q.push(2, Event::WritebackDone(3));
        q.push(2, Event::Thread(1));
        q.push(4, Event::WritebackDone(1));
        q.push(9, Event::WritebackDone(2));
        assert_eq!(q.take_writebacks_until(4), [3, 1]);
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, [(1, Event::Thread(0)), (2, Event::Thread(1)), (9, Event::WritebackDone(2))]);
    }
}
