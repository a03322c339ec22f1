//! Intrusive doubly-linked LRU lists threaded through the frame table.
//!
//! The head holds the most recently added page; reclaim scans from the tail.
//! All operations are O(1) and allocate nothing.

use crate::frame::{Frame, Pfn, NO_PFN};

/// One list: head, tail and length. The links live in the frames themselves.
#[derive(Clone, Copy, Debug)]
pub struct LruList {
    head: Pfn,
    tail: Pfn,
    len: u64,
}

impl Default for LruList {
    fn default() -> Self {
        LruList { head: NO_PFN, tail: NO_PFN, len: 0 }
    }
}

impl LruList {
    /// Number of pages on the list.
    #[inline]
    pub fn len(&self) -> u64 {
        self.len
    }
    /// True if the list is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The page at the tail (oldest), if any.
    #[inline]
    pub fn tail(&self) -> Option<Pfn> {
        (self.tail != NO_PFN).then_some(self.tail)
    }
    /// The page at the head (newest), if any.
    #[inline]
    pub fn head(&self) -> Option<Pfn> {
        (self.head != NO_PFN).then_some(self.head)
    }

    /// Adds `pfn` at the head.
    #[inline]
    pub fn push_head(&mut self, frames: &mut [Frame], pfn: Pfn) {
        let old = self.head;
        {
            let f = &mut frames[pfn as usize];
            f.prev = NO_PFN;
            f.next = old;
        }
        if old == NO_PFN {
            self.tail = pfn;
        } else {
            frames[old as usize].prev = pfn;
        }
        self.head = pfn;
        self.len += 1;
    }

    /// Adds `pfn` at the tail.
    #[inline]
    pub fn push_tail(&mut self, frames: &mut [Frame], pfn: Pfn) {
        let old = self.tail;
        {
            let f = &mut frames[pfn as usize];
            f.next = NO_PFN;
            f.prev = old;
        }
        if old == NO_PFN {
            self.head = pfn;
        } else {
            frames[old as usize].next = pfn;
        }
        self.tail = pfn;
        self.len += 1;
    }

    /// Unlinks `pfn`, which must be on this list.
    #[inline]
    pub fn remove(&mut self, frames: &mut [Frame], pfn: Pfn) {
        let (prev, next) = {
            let f = &frames[pfn as usize];
            (f.prev, f.next)
        };
        if prev == NO_PFN {
            debug_assert_eq!(self.head, pfn, "pfn {pfn} is not on this list");
            self.head = next;
        } else {
            frames[prev as usize].next = next;
        }
        if next == NO_PFN {
            debug_assert_eq!(self.tail, pfn, "pfn {pfn} is not on this list");
            self.tail = prev;
        } else {
            frames[next as usize].prev = prev;
        }
        let f = &mut frames[pfn as usize];
        f.prev = NO_PFN;
        f.next = NO_PFN;
        debug_assert!(self.len > 0);
        self.len -= 1;
    }

    /// Removes and returns the tail page.
    #[inline]
    pub fn pop_tail(&mut self, frames: &mut [Frame]) -> Option<Pfn> {
        let t = self.tail()?;
        self.remove(frames, t);
        Some(t)
    }

    /// Pages from head to tail (O(n); for tests, dumps and invariant checks).
    pub fn iter<'a>(&self, frames: &'a [Frame]) -> impl Iterator<Item = Pfn> + 'a {
        let mut cur = self.head;
        std::iter::from_fn(move || {
            (cur != NO_PFN).then(|| {
                let p = cur;
                cur = frames[p as usize].next;
                p
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::FrameTable;

    #[test]
    fn push_remove_order() {
        let mut t = FrameTable::new(4);
        let mut l = LruList::default();
        let fr = t.slice_mut();
        l.push_head(fr, 0);
        l.push_head(fr, 1);
        l.push_tail(fr, 2);
        assert_eq!(l.iter(fr).collect::<Vec<_>>(), vec![1, 0, 2]);
        l.remove(fr, 0);
        assert_eq!(l.iter(fr).collect::<Vec<_>>(), vec![1, 2]);
        assert_eq!(l.pop_tail(fr), Some(2));
        assert_eq!(l.pop_tail(fr), Some(1));
        assert_eq!(l.pop_tail(fr), None);
        assert!(l.is_empty());
    }
}
