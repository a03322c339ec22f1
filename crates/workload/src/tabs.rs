//! A browser with many tabs (the Chrome OS case of seed 002).
//!
//! Each tab is a process with an anonymous heap, a hot part of which it keeps
//! using while visited, and a mapping of the shared browser executable. The
//! user visits tabs with zipf popularity over a most-recently-opened ranking,
//! thinks between visits, and every so often closes the least popular tab and
//! opens a new one, which loads (writes) its whole heap and becomes the most
//! popular. Memory is overcommitted: all heaps together exceed RAM.
//!
//! Simplification S-WL1: a closed tab's process is reused by the next opened
//! tab (the mm model cannot unmap), so its old heap is overwritten rather than
//! freed and faulted anew.

use engine::{Access, Program, Step};
use mm::RegionId;
use simrng::Sampler;
use simrng::SimRng;
use std::rc::Rc;

/// One tab's memory.
#[derive(Clone, Copy, Debug)]
pub struct Tab {
    /// The anonymous heap.
    pub heap: RegionId,
    /// Heap pages.
    pub heap_pages: u32,
    /// The tab's mapping of the shared executable.
    pub exe: RegionId,
}

/// How a tabs thread behaves.
#[derive(Clone, Debug)]
pub struct TabsParams {
    /// Hot pages at the start of each heap.
    pub hot_pages: u32,
    /// Popularity over the executable's pages (shared by all tabs).
    pub exe_sampler: Rc<Sampler>,
    /// Cumulative zipf weights over tab ranks, scaled to 2^32.
    pub rank_cdf: Rc<Vec<u64>>,
    /// Visits in total.
    pub visits: u64,
    /// Accesses per visit.
    pub ops_per_visit: u32,
    /// Think time before each visit, ns.
    pub think_ns: u64,
    /// Close the least popular tab and open a new one every this many visits (0 = never).
    pub churn_every: u64,
    /// Per mille of accesses to the executable.
    pub exe_permille: u32,
    /// Per mille of accesses to the cold part of the heap.
    pub cold_permille: u32,
    /// Per mille of heap accesses that are stores.
    pub write_permille: u32,
    /// Idle time before the browser starts, ns.
    pub start_ns: u64,
}

/// Cumulative zipf(alpha) weights over `n` ranks, scaled to 2^32.
pub fn rank_cdf(n: u32, alpha: f64) -> Vec<u64> {
    let w: Vec<f64> = (1..=n).map(|r| 1.0 / (r as f64).powf(alpha)).collect();
    let sum: f64 = w.iter().sum();
    let mut acc = 0.0;
    w.iter()
        .map(|x| {
            acc += x / sum;
            ((acc * 4_294_967_296.0) as u64).min(1 << 32)
        })
        .collect()
}

/// The thread program.
pub struct TabsProgram {
    tabs: Vec<Tab>,
    /// `rank[i]` = tab at popularity rank i (0 = most popular).
    rank: Vec<usize>,
    p: TabsParams,
    rng: SimRng,
    /// Tabs still to load, and the next page of the first.
    loading: Vec<usize>,
    load_pos: u32,
    visits_done: u64,
    current: usize,
    left_in_visit: u32,
    started: bool,
}

impl TabsProgram {
    /// A browser over `tabs`, all loaded first in order.
    pub fn new(tabs: Vec<Tab>, p: TabsParams, rng: SimRng) -> TabsProgram {
        let n = tabs.len();
        TabsProgram {
            rank: (0..n).collect(),
            loading: (0..n).rev().collect(),
            tabs,
            p,
            rng,
            load_pos: 0,
            visits_done: 0,
            current: 0,
            left_in_visit: 0,
            started: false,
        }
    }

    fn pick_rank(&mut self) -> usize {
        let x = self.rng.next_u64() >> 32;
        self.p.rank_cdf.partition_point(|&c| c <= x).min(self.rank.len() - 1)
    }

    fn start_visit(&mut self) {
        self.visits_done += 1;
        if self.p.churn_every > 0 && self.visits_done.is_multiple_of(self.p.churn_every) {
            // Close the least popular tab; a new one opens in its place, on top.
            let closed = self.rank.pop().expect("at least one tab");
            self.rank.insert(0, closed);
            self.loading.push(closed);
            self.load_pos = 0;
            self.current = closed;
        } else {
            let r = self.pick_rank();
            self.current = self.rank[r];
        }
        self.left_in_visit = self.p.ops_per_visit;
    }

    fn visit_access(&mut self) -> Access {
        let tab = self.tabs[self.current];
        let roll = self.rng.below(1000);
        if roll < self.p.exe_permille {
            return Access::Mem { region: tab.exe, page: self.p.exe_sampler.sample(&mut self.rng), write: false };
        }
        let cold = tab.heap_pages - self.p.hot_pages;
        let page = if roll < self.p.exe_permille + self.p.cold_permille && cold > 0 {
            self.p.hot_pages + self.rng.below(cold)
        } else {
            self.rng.below(self.p.hot_pages.max(1))
        };
        Access::Mem { region: tab.heap, page, write: self.rng.below(1000) < self.p.write_permille }
    }
}

impl Program for TabsProgram {
    fn next(&mut self) -> Step {
        if !self.started {
            self.started = true;
            if self.p.start_ns > 0 {
                return Step::Think(self.p.start_ns);
            }
        }
        if let Some(&t) = self.loading.last() {
            let tab = self.tabs[t];
            let page = self.load_pos;
            self.load_pos += 1;
            if self.load_pos >= tab.heap_pages {
                self.loading.pop();
                self.load_pos = 0;
            }
            return Step::Access(Access::Mem { region: tab.heap, page, write: true });
        }
        if self.left_in_visit == 0 {
            if self.visits_done >= self.p.visits {
                return Step::Done;
            }
            self.start_visit();
            return Step::Think(self.p.think_ns);
        }
        self.left_in_visit -= 1;
        Step::Access(self.visit_access())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cdf_is_skewed_and_complete() {
        let c = rank_cdf(4, 1.0);
        // weights 1, 1/2, 1/3, 1/4 over 25/12: 0.48, 0.72, 0.88, 1.0
        assert_eq!(c.len(), 4);
        assert_eq!(*c.last().unwrap(), 1 << 32);
        assert!((c[0] as f64 / 4_294_967_296.0 - 0.48).abs() < 1e-6);
    }

    #[test]
    fn loads_every_tab_then_visits_and_churns() {
        let tabs: Vec<Tab> =
            (0..3).map(|i| Tab { heap: RegionId(2 * i), heap_pages: 4, exe: RegionId(2 * i + 1) }).collect();
        let p = TabsParams {
            hot_pages: 2,
            exe_sampler: Rc::new(Sampler::Uniform(8)),
            rank_cdf: Rc::new(rank_cdf(3, 1.0)),
            visits: 4,
            ops_per_visit: 5,
            think_ns: 7,
            churn_every: 2,
            exe_permille: 100,
            cold_permille: 100,
            write_permille: 0,
            start_ns: 0,
        };
        let mut prog = TabsProgram::new(tabs, p, SimRng::new(1, 1));
        let mut loads = 0;
        let mut thinks = 0;
        let mut accesses = 0;
        loop {
            match prog.next() {
                Step::Access(Access::Mem { write: true, .. }) => loads += 1,
                Step::Access(_) => accesses += 1,
                Step::Think(ns) => {
                    assert_eq!(ns, 7);
                    thinks += 1
                }
                Step::Done => break,
                Step::Control(_) | Step::Repeat(_) | Step::TxnBegin | Step::TxnEnd | Step::Snapshot => unreachable!(),
            }
        }
        // 3 tabs x 4 pages at start, 2 churns reload 4 pages each.
        assert_eq!(loads, 12 + 8);
        assert_eq!(thinks, 4);
        assert_eq!(accesses, 4 * 5);
    }
}
