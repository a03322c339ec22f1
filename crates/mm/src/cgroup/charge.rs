//! Charging pages to the tree: the page-counter step of `try_charge_memcg()`
//! with the per-CPU charge stock (`consume_stock()`, `refill_stock()`,
//! `drain_all_stock()`), the `memory.max` check and margin, and the
//! `memory.high` overage that sets the throttling penalty (mm/memcontrol.c,
//! mm/page_counter.c, v6.12; order-0 pages).
//!
//! A charge is two steps: [`Cgroups::try_charge`] puts the page on the
//! counters (from the stock or with a batch) before the frame is taken, and
//! [`Cgroups::charge_page`] hands that charge to the frame when `Mm::alloc_in`
//! takes it. Pages allocated without a prior `try_charge` (readahead) are
//! charged by `charge_page` alone, without a limit check (S-MC3).

use super::{CgId, Cgroups};

/// KERNEL: `MEMCG_CHARGE_BATCH`: pages put on the counters at once, the rest
/// kept in the CPU's stock.
pub const MEMCG_CHARGE_BATCH: u64 = 64;
/// KERNEL: `MEMCG_DELAY_PRECISION_SHIFT`.
pub const MEMCG_DELAY_PRECISION_SHIFT: u32 = 20;
/// KERNEL: `MEMCG_DELAY_SCALING_SHIFT`.
pub const MEMCG_DELAY_SCALING_SHIFT: u32 = 14;

/// One CPU's stock (`struct memcg_stock_pcp`): pages on one group's counters
/// that no page uses yet.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Stock {
    cg: CgId,
    nr: u64,
}

impl Cgroups {
    /// Makes `cpu` the CPU whose stock charges use (the running thread's).
    pub fn set_cpu(&mut self, cpu: usize) {
        if cpu >= self.stocks.len() {
            self.stocks.resize(cpu + 1, Stock::default());
        }
        self.cpu = cpu;
    }

    /// The counter step of `try_charge_memcg()` for one page of `cg`: take
    /// it from this CPU's stock, else charge a batch of
    /// [`MEMCG_CHARGE_BATCH`] (the rest goes to the stock), else charge the
    /// page alone. Returns the pages put on the counters (0 from the stock),
    /// or the nearest group whose `memory.max` the page would exceed.
    pub fn try_charge(&mut self, cg: CgId) -> Result<u64, CgId> {
        debug_assert!(self.pending.is_none(), "a charged page was not taken");
        if cg == CgId::ROOT {
            // The root has no limit and no stock.
            self.charge(cg, 1);
            self.pending = Some(cg);
            return Ok(1);
        }
        let stock = &mut self.stocks[self.cpu];
        if stock.cg == cg && stock.nr > 0 {
            stock.nr -= 1;
            self.pending = Some(cg);
            return Ok(0);
        }
        for batch in [MEMCG_CHARGE_BATCH, 1] {
            match self.over_max(cg, batch) {
                None => {
                    self.charge(cg, batch);
                    if batch > 1 {
                        self.refill_stock(cg, batch - 1);
                    }
                    self.pending = Some(cg);
                    return Ok(batch);
                }
                Some(over) if batch == 1 => return Err(over),
                Some(_) => {}
            }
        }
        unreachable!("the single-page try returns")
    }

    /// Gives a page of `cg` its charge as its frame is taken: the one
    /// [`Cgroups::try_charge`] made, else one from the stock, else a charge
    /// without a limit check.
    #[inline]
    pub fn charge_page(&mut self, cg: CgId) {
        if self.pending == Some(cg) {
            self.pending = None;
            return;
        }
        let stock = &mut self.stocks[self.cpu];
        if cg != CgId::ROOT && stock.cg == cg && stock.nr > 0 {
            stock.nr -= 1;
            return;
        }
        self.charge(cg, 1);
    }

    /// Takes back the charge of a page whose frame could not be had.
    pub fn cancel_charge(&mut self) {
        if let Some(cg) = self.pending.take() {
            self.uncharge(cg, 1);
        }
    }

    /// `refill_stock()`: `nr` charged pages of `cg` go to this CPU's stock,
    /// which first gives back another group's pages and is drained when it
    /// holds more than a batch.
    fn refill_stock(&mut self, cg: CgId, nr: u64) {
        let old = self.stocks[self.cpu];
        if old.cg != cg {
            self.uncharge(old.cg, old.nr);
            self.stocks[self.cpu] = Stock { cg, nr: 0 };
        }
        let stock = &mut self.stocks[self.cpu];
        stock.nr += nr;
        if stock.nr > MEMCG_CHARGE_BATCH {
            let nr = std::mem::take(&mut stock.nr);
            self.uncharge(cg, nr);
        }
    }

    /// `drain_all_stock()`: gives back the stocked pages of `root`'s subtree
    /// on every CPU; returns how many.
    pub fn drain_all_stock(&mut self, root: CgId) -> u64 {
        let mut drained = 0;
        for i in 0..self.stocks.len() {
            let Stock { cg, nr } = self.stocks[i];
            if nr > 0 && self.is_descendant(cg, root) {
                self.stocks[i].nr = 0;
                self.uncharge(cg, nr);
                drained += nr;
            }
        }
        drained
    }

    /// Pages held in stocks for exactly `cg`.
    #[cfg(test)]
    fn stocked(&self, cg: CgId) -> u64 {
        self.stocks.iter().filter(|s| s.cg == cg).map(|s| s.nr).sum()
    }

    /// `page_counter_try_charge()`'s check: the nearest of `id` and its
    /// ancestors (the root has no limit) that `n` more pages would put over
    /// `memory.max`, or `None` if the charge fits.
    pub fn over_max(&self, id: CgId, n: u64) -> Option<CgId> {
        self.ancestors(id).find(|&g| self.get(g).parent.is_some() && self.get(g).usage + n > self.get(g).limits.max)
    }

    /// `mem_cgroup_margin()`: pages `id` can still charge before its own `memory.max`.
    pub fn margin(&self, id: CgId) -> u64 {
        let g = self.get(id);
        g.limits.max.saturating_sub(g.usage)
    }

    /// True if `g` is a group below the root that is over its `memory.high`.
    pub fn above_high(&self, g: CgId) -> bool {
        let c = self.get(g);
        c.parent.is_some() && c.usage > c.limits.high
    }

    /// True if `g` is a group below the root that is over its `memory.swap.high` (v5.8).
    pub fn above_swap_high(&self, g: CgId) -> bool {
        let c = self.get(g);
        c.parent.is_some() && c.swap_usage > c.limits.swap_high
    }

    /// True if `id` or an ancestor below the root is over `memory.high` or
    /// `memory.swap.high` (`try_charge_memcg()`: its task then owes reclaim
    /// or a throttling sleep).
    pub fn over_high(&self, id: CgId) -> bool {
        self.ancestors(id).any(|g| self.above_high(g) || self.above_swap_high(g))
    }

    /// `mem_find_max_overage()`: the largest `(usage - high) / high` of `id`
    /// and its ancestors below the root, in 2^-20 units.
    pub fn max_overage(&self, id: CgId) -> u64 {
        self.ancestors(id)
            .filter(|&g| self.get(g).parent.is_some())
            .map(|g| calculate_overage(self.get(g).usage, self.get(g).limits.high))
            .max()
            .unwrap_or(0)
    }

    /// `swap_find_max_overage()` (v5.8): the largest `(swap - swap.high) /
    /// swap.high` of `id` and its ancestors below the root, in 2^-20 units;
    /// each group found over counts `high` in its `memory.swap.events`.
    pub fn swap_max_overage(&mut self, id: CgId) -> u64 {
        let mut max = 0;
        for g in self.ancestors(id).filter(|&g| self.get(g).parent.is_some()).collect::<Vec<_>>() {
            let c = self.get_mut(g);
            let overage = calculate_overage(c.swap_usage, c.limits.swap_high);
            if overage > 0 {
                c.events.swap_high += 1;
            }
            max = max.max(overage);
        }
        max
    }
}

/// `calculate_overage()`: how far `usage` is over `high`, as a fraction of
/// `high` in 2^-20 units (0 when not over).
pub fn calculate_overage(usage: u64, high: u64) -> u64 {
    if usage <= high {
        return 0;
    }
    let high = high.max(1);
    ((usage - high) << MEMCG_DELAY_PRECISION_SHIFT) / high
}

/// `calculate_high_delay()`: the throttling penalty in jiffies (at `hz`
/// ticks per second) for a task that charged `nr_pages` while its groups are
/// `max_overage` over `memory.high`, before the 2 s cap.
pub fn high_delay_jiffies(nr_pages: u64, max_overage: u64, hz: u64) -> u64 {
    if max_overage == 0 {
        return 0;
    }
    let per_batch = (max_overage as u128 * max_overage as u128 * hz as u128)
        >> (MEMCG_DELAY_PRECISION_SHIFT + MEMCG_DELAY_SCALING_SHIFT);
    (per_batch * nr_pages as u128 / MEMCG_CHARGE_BATCH as u128).min(u64::MAX as u128) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_are_hierarchical_and_max_names_the_nearest_group_over() {
        let mut t = Cgroups::default();
        let b = t.create("a/b");
        let a = t.find("a").unwrap();
        t.get_mut(a).limits.max = 10;
        t.get_mut(b).limits.max = 6;
        t.charge(b, 6);
        assert_eq!((t.get(a).usage, t.get(CgId::ROOT).usage), (6, 6));
        assert_eq!(t.over_max(b, 1), Some(b));
        t.get_mut(b).limits.max = 100;
        t.charge(a, 4);
        assert_eq!(t.over_max(b, 1), Some(a), "the parent's limit binds the child");
        t.uncharge(b, 6);
        assert_eq!(t.over_max(b, 1), None);
        assert_eq!(t.get(b).peak, 6);
    }

    #[test]
    fn a_batch_fills_the_stock_then_single_pages_up_to_the_limit() {
        let mut t = Cgroups::default();
        let g = t.create("g");
        t.get_mut(g).limits.max = 100;
        // The first page charges a batch: 64 on the counter, 63 in the stock.
        assert_eq!(t.try_charge(g), Ok(64));
        t.charge_page(g);
        assert_eq!((t.get(g).usage, t.stocked(g)), (64, 63));
        // The next 63 come from the stock without touching the counter.
        for _ in 0..63 {
            assert_eq!(t.try_charge(g), Ok(0));
            t.charge_page(g);
        }
        assert_eq!((t.get(g).usage, t.stocked(g)), (64, 0));
        // 64 + 64 > 100: single pages up to the limit, then the limit.
        for _ in 64..100 {
            assert_eq!(t.try_charge(g), Ok(1));
            t.charge_page(g);
        }
        assert_eq!(t.try_charge(g), Err(g));
        assert_eq!(t.margin(g), 0);
    }

    #[test]
    fn another_group_on_the_cpu_drains_the_stock_and_drain_all_gives_back() {
        let mut t = Cgroups::default();
        let a = t.create("a");
        let b = t.create("b");
        t.set_cpu(1);
        assert_eq!(t.try_charge(a), Ok(64));
        t.charge_page(a);
        assert_eq!(t.get(a).usage, 64);
        // b's batch on the same CPU gives a's 63 stocked pages back.
        assert_eq!(t.try_charge(b), Ok(64));
        t.charge_page(b);
        assert_eq!((t.get(a).usage, t.get(b).usage), (1, 64));
        // A failed allocation takes its charge back.
        assert_eq!(t.try_charge(b), Ok(0));
        t.cancel_charge();
        assert_eq!((t.get(b).usage, t.stocked(b)), (63, 62));
        // Another CPU's stock is its own; drain_all empties b's everywhere.
        t.set_cpu(0);
        assert_eq!(t.try_charge(b), Ok(64));
        t.charge_page(b);
        assert_eq!(t.drain_all_stock(CgId::ROOT), 62 + 63);
        assert_eq!(t.get(b).usage, 2);
        // Readahead pages without a try_charge are charged one by one.
        t.charge_page(a);
        assert_eq!(t.get(a).usage, 2);
    }

    #[test]
    fn overage_and_delay_match_the_kernels_table() {
        // memory.high 100M, usage 101M: the kernel's comment gives 6 jiffies
        // per MEMCG_CHARGE_BATCH at HZ=1000; 110M gives 639.
        let high = 100 << 8; // pages
        assert_eq!(high_delay_jiffies(64, calculate_overage(101 << 8, high), 1000), 6);
        assert_eq!(high_delay_jiffies(64, calculate_overage(110 << 8, high), 1000), 639);
        // A quarter batch pays a quarter; nothing over high pays nothing.
        assert_eq!(high_delay_jiffies(16, calculate_overage(110 << 8, high), 1000), 159);
        assert_eq!(high_delay_jiffies(64, calculate_overage(high, high), 1000), 0);
    }

    #[test]
    fn high_names_every_group_over_it() {
        let mut t = Cgroups::default();
        let b = t.create("a/b");
        let a = t.find("a").unwrap();
        assert!(!t.over_high(b));
        t.get_mut(a).limits.high = 5;
        t.get_mut(b).limits.high = 3;
        t.charge(b, 4);
        assert!(t.above_high(b) && !t.above_high(a));
        t.charge(b, 2);
        assert!(t.above_high(b) && t.above_high(a) && !t.above_high(CgId::ROOT));
        assert!(t.over_high(b));
        assert_eq!(t.max_overage(b), calculate_overage(6, 3));
    }

    /// v5.8 `memory.swap.high`: b (swap.high 100 slots) holds 150 slots, a
    /// (swap.high 400) the same 150. Only b is over: overage 50 / 100 =
    /// 2^19 in 2^-20 units, one `swap.high` event per look, none for a; at
    /// HZ 250 a batch of 64 pages then owes (2^19)^2 * 250 >> (20 + 14) = 4000
    /// jiffies (the caller caps it at 2 s). Its memory alone is under no
    /// high, but the task owes the check all the same (`over_high`).
    #[test]
    fn swap_high_throttles_by_the_swap_overage_and_counts_its_events() {
        let mut t = Cgroups::default();
        let b = t.create("a/b");
        let a = t.find("a").unwrap();
        t.get_mut(a).limits.swap_high = 400;
        t.get_mut(b).limits.swap_high = 100;
        t.charge_swap(b, 100);
        assert!(!t.over_high(b), "at swap.high is not over it");
        assert_eq!(t.swap_max_overage(b), 0);
        t.charge_swap(b, 50);
        assert!(t.over_high(b) && t.above_swap_high(b) && !t.above_swap_high(a));
        assert_eq!(t.swap_max_overage(b), 1 << 19);
        assert_eq!(t.swap_max_overage(b), 1 << 19);
        assert_eq!((t.get(b).events.swap_high, t.get(a).events.swap_high), (2, 0));
        assert_eq!(t.max_overage(b), 0, "memory.high is not involved");
        assert_eq!(high_delay_jiffies(64, 1 << 19, 250), 4000);
    }
}
