//! Pressure stall information for memory (`/proc/pressure/memory`).
//!
//! KERNEL (kernel/sched/psi.c, Documentation/accounting/psi.rst): `some` is the
//! time during which at least one non-idle task is stalled on memory; `full`
//! the time during which every non-idle task is stalled at once. Memory stalls
//! (`psi_memstall_enter`) are direct reclaim and reclaim throttling in the
//! allocator, kswapd's `balance_pgdat`, and reading back a page that was part
//! of the workingset (`PG_workingset` set on refault).
//!
//! Tasks here are the workload threads (non-idle from their start until they
//! finish, except while they think) and kswapd (non-idle only while running a
//! balance pass, and stalled throughout). Intervals are recorded as +/- steps
//! and swept in time order; steps before the engine's current time can be
//! folded early, because no task records anything in its past.
//!
//! Each memory cgroup below the root has its own accumulator over its
//! threads and its descendants' (`memory.pressure`); the root's file is the
//! system's. Simplification S-PSI1: the kernel computes states per CPU and
//! weights them by non-idle time; here they are computed over all CPUs at once. A task waiting for I/O (not a
//! workingset refault) counts as non-idle and not stalled, so it keeps `full` off.

use crate::Nanos;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Delta {
    at: Nanos,
    stalled: i32,
    nonidle: i32,
}

/// The stall totals of one resource state.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PsiLine {
    /// Share of the run's time in this state, percent (the run-long analogue of `avg10`).
    pub avg: f64,
    /// `/proc/pressure`'s running averages over about 10, 60 and 300 s, percent,
    /// as of the last whole [`PSI_PERIOD_NS`] period of the run (0 in a run shorter than one).
    pub avg10: f64,
    /// The 60 s running average, percent.
    pub avg60: f64,
    /// The 300 s running average, percent.
    pub avg300: f64,
    /// Total stall time, ns (the kernel's `total`, which is in us).
    pub total_ns: u64,
}

/// `some` and `full` for memory.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PsiMemory {
    /// At least one non-idle task stalled.
    pub some: PsiLine,
    /// All non-idle tasks stalled.
    pub full: PsiLine,
}

/// How often the running averages are updated: the kernel's `PSI_FREQ`, 2 s
/// (its extra jiffy left out).
pub const PSI_PERIOD_NS: Nanos = 2_000_000_000;

/// The windows of `avg10`, `avg60` and `avg300`, seconds.
const WINDOWS_S: [f64; 3] = [10.0, 60.0, 300.0];

/// The accumulator.
#[derive(Debug, Default)]
pub struct Psi {
    pending: Vec<Delta>,
    swept_to: Nanos,
    stalled: i32,
    nonidle: i32,
    some_ns: u64,
    full_ns: u64,
    /// `some_ns`/`full_ns` when the current averaging period began.
    period_base: [u64; 2],
    /// Running averages (`some`, `full`) x (10, 60, 300 s), percent.
    avgs: [[f64; 3]; 2],
}

/// Fold pending steps when this many have accumulated.
const FOLD_AT: usize = 1 << 20;

impl Psi {
    fn push(&mut self, at: Nanos, stalled: i32, nonidle: i32) {
        self.pending.push(Delta { at, stalled, nonidle });
    }

    /// A task becomes non-idle at `at` (a thread starts).
    pub fn task_start(&mut self, at: Nanos) {
        self.push(at, 0, 1);
    }

    /// A task becomes idle for good at `at` (a thread finishes).
    pub fn task_end(&mut self, at: Nanos) {
        self.push(at, 0, -1);
    }

    /// A non-idle task sleeps during `[from, to)`.
    pub fn idle(&mut self, from: Nanos, to: Nanos) {
        if to > from {
            self.push(from, 0, -1);
            self.push(to, 0, 1);
        }
    }

    /// A non-idle task is stalled on memory during `[from, to)`.
    pub fn stall(&mut self, from: Nanos, to: Nanos) {
        if to > from {
            self.push(from, 1, 0);
            self.push(to, -1, 0);
        }
    }

    /// An otherwise idle task (kswapd) runs stalled during `[from, to)`.
    pub fn busy_stalled(&mut self, from: Nanos, to: Nanos) {
        if to > from {
            self.push(from, 1, 1);
            self.push(to, -1, -1);
        }
    }

    /// Folds pending steps before `now` if many have accumulated (keeps memory bounded).
    pub fn maybe_fold(&mut self, now: Nanos) {
        if self.pending.len() >= FOLD_AT {
            self.sweep(now);
        }
    }

    /// Sweeps every step strictly before `until` into the totals.
    fn sweep(&mut self, until: Nanos) {
        // The steps arrive almost in time order (runs of ascending times), which
        // the stable sort merges in near-linear time where the unstable one
        // partitions; the order is the same, `Delta`'s order being total.
        self.pending.sort();
        let cut = self.pending.partition_point(|d| d.at < until);
        for i in 0..cut {
            let d = self.pending[i];
            self.account(d.at);
            self.stalled += d.stalled;
            self.nonidle += d.nonidle;
        }
        self.pending.drain(..cut);
    }

    /// Charges the current state from `swept_to` up to `t`, closing every
    /// averaging period that ends on the way.
    fn account(&mut self, t: Nanos) {
        loop {
            let period_end = (self.swept_to / PSI_PERIOD_NS + 1) * PSI_PERIOD_NS;
            if period_end > t {
                break;
            }
            self.charge(period_end);
            self.close_period();
        }
        self.charge(t);
    }

    /// Folds the period that just ended into the running averages, each decayed
    /// by `e^(-period/window)` (the kernel keeps these factors in fixed point).
    fn close_period(&mut self) {
        let totals = [self.some_ns, self.full_ns];
        for (i, avgs) in self.avgs.iter_mut().enumerate() {
            let pct = (totals[i] - self.period_base[i]) as f64 * 100.0 / PSI_PERIOD_NS as f64;
            for (avg, window) in avgs.iter_mut().zip(WINDOWS_S) {
                let decay = (-(PSI_PERIOD_NS as f64 / 1e9) / window).exp();
                *avg = *avg * decay + pct * (1.0 - decay);
            }
        }
        self.period_base = totals;
    }

    /// Charges the current state from `swept_to` up to `t` (within one period).
    fn charge(&mut self, t: Nanos) {
        let span = t.saturating_sub(self.swept_to);
        if span > 0 && self.stalled > 0 {
            self.some_ns += span;
            if self.stalled >= self.nonidle {
                self.full_ns += span;
            }
        }
        self.swept_to = self.swept_to.max(t);
    }

    /// The `some` total in ns up to `now`: every step before `now` is
    /// folded, so no task may record a step before `now` afterwards.
    pub fn some_total_at(&mut self, now: Nanos) -> u64 {
        self.sweep(now);
        self.account(now);
        self.some_ns
    }

    /// The totals over `[0, end)`.
    pub fn finish(&mut self, end: Nanos) -> PsiMemory {
        self.sweep(end);
        self.account(end);
        let pct = |ns: u64| if end == 0 { 0.0 } else { ns as f64 * 100.0 / end as f64 };
        let line = |total: u64, [avg10, avg60, avg300]: [f64; 3]| PsiLine {
            avg: pct(total),
            avg10,
            avg60,
            avg300,
            total_ns: total,
        };
        PsiMemory { some: line(self.some_ns, self.avgs[0]), full: line(self.full_ns, self.avgs[1]) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn some_and_full_by_hand() {
        // Two threads over [0, 100). A stalls [10, 30); B stalls [20, 40) and
        // sleeps [60, 80); kswapd runs [50, 70).
        let mut p = Psi::default();
        p.task_start(0);
        p.task_start(0);
        p.stall(10, 30);
        p.stall(20, 40);
        p.idle(60, 80);
        p.busy_stalled(50, 70);
        p.task_end(100);
        p.task_end(100);
        let m = p.finish(100);
        // some: [10, 40) and [50, 70) = 50. full: [20, 30) both stalled = 10;
        // [60, 70): B idle, kswapd stalled, A running -> not full.
        assert_eq!(m.some.total_ns, 50);
        assert_eq!(m.full.total_ns, 10);
        assert_eq!(m.some.avg, 50.0);
    }

    #[test]
    fn lone_thread_stall_is_full_and_folding_is_exact() {
        let mut a = Psi::default();
        let mut b = Psi::default();
        for p in [&mut a, &mut b] {
            p.task_start(0);
            p.stall(5, 15);
        }
        b.sweep(10);
        for p in [&mut a, &mut b] {
            p.stall(20, 25);
            p.task_end(30);
        }
        let (ma, mb) = (a.finish(40), b.finish(40));
        assert_eq!(ma, mb);
        assert_eq!((ma.some.total_ns, ma.full.total_ns), (15, 15));
        // Shorter than one averaging period: the running averages are still 0.
        assert_eq!((ma.some.avg10, ma.some.avg60, ma.some.avg300), (0.0, 0.0, 0.0));
    }

    #[test]
    fn running_averages_follow_the_kernels_decay() {
        // Stalled throughout for 10 s = 5 periods: avg10 = 100 * (1 - e^(-2/10 * 5)).
        let mut p = Psi::default();
        p.task_start(0);
        p.stall(0, 10 * PSI_PERIOD_NS / 2);
        let m = p.finish(10 * PSI_PERIOD_NS / 2);
        let expect = |w: f64| 100.0 * (1.0 - (-10.0f64 / w).exp());
        assert!((m.some.avg10 - expect(10.0)).abs() < 1e-9, "{m:?}");
        assert!((m.some.avg60 - expect(60.0)).abs() < 1e-9, "{m:?}");
        assert!((m.some.avg300 - expect(300.0)).abs() < 1e-9, "{m:?}");
        // Then 20 s idle: avg10 decays by e^(-2) from there (folded in one sweep).
        let mut q = Psi::default();
        q.task_start(0);
        q.stall(0, 5 * PSI_PERIOD_NS);
        let m = q.finish(15 * PSI_PERIOD_NS);
        assert!((m.some.avg10 - expect(10.0) * (-2.0f64).exp()).abs() < 1e-9, "{m:?}");
    }
}
