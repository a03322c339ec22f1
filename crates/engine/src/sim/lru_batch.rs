//! Per-CPU LRU add batches (the kernel's `lru_add` pagevecs, v5.7..v5.15;
//! folio batches later): a page added to the LRU waits in its CPU's batch, without
//! `PG_lru`, until the batch fills or `lru_add_drain()` empties it.
//!
//! Only the fill level is tracked: the policy lists the page at once (S-CL2).
//! The level answers one question, whether a page just added would already
//! carry `PG_lru`, which decides whether v5.7's `activate_page()` in
//! `do_swap_page()` acts on it (it skips pages still in a batch).
//!
//! Simplification S-EN4: each workload thread runs on its own CPU (S-EN1); the
//! activation batch (`activate_page_pvecs`) is not modelled, so a listed page is
//! activated at once rather than when that second batch fills.

use mm::PAGEVEC_SIZE;

/// The add batches of all CPUs and the CPU whose thread runs now.
#[derive(Debug)]
pub struct LruAddBatches {
    /// Pages waiting in each CPU's batch (always holds the current CPU's).
    fill: Vec<u8>,
    cpu: usize,
}

impl Default for LruAddBatches {
    /// CPU 0 running, its batch empty.
    fn default() -> Self {
        LruAddBatches { fill: vec![0], cpu: 0 }
    }
}

impl LruAddBatches {
    /// The running thread (and so the CPU whose batch is used) is `cpu`.
    pub fn set_cpu(&mut self, cpu: usize) {
        if self.fill.len() <= cpu {
            self.fill.resize(cpu + 1, 0);
        }
        self.cpu = cpu;
    }

    /// The CPU whose thread runs now.
    pub fn cpu(&self) -> usize {
        self.cpu
    }

    /// One page added on the current CPU (`lru_cache_add`). True if it filled
    /// the batch, which is then drained: the page is on its list.
    pub fn add(&mut self) -> bool {
        let fill = &mut self.fill[self.cpu];
        *fill += 1;
        // Adding the batch's last page drains it.
        if *fill as usize == PAGEVEC_SIZE {
            *fill = 0;
            return true;
        }
        false
    }

    /// `lru_add_drain()` on the current CPU: every page added so far is listed.
    pub fn drain(&mut self) {
        self.fill[self.cpu] = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fifteenth_add_drains_per_cpu() {
        let mut b = LruAddBatches::default();
        let listed: Vec<bool> = (0..30).map(|_| b.add()).collect();
        assert_eq!(listed.iter().filter(|&&l| l).count(), 2);
        assert!(listed[14] && listed[29]);
        // CPU 1 has its own batch; a drain on CPU 0 leaves it alone.
        b.set_cpu(1);
        for _ in 0..14 {
            assert!(!b.add());
        }
        b.set_cpu(0);
        assert!(!b.add());
        b.drain();
        b.set_cpu(1);
        assert!(b.add());
        b.set_cpu(0);
        assert!((0..14).all(|_| !b.add()) && b.add());
    }
}
