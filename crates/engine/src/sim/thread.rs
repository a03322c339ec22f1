//! A workload thread's state: its program and clock, its operation and
//! transaction statistics, and its CPU time split the way `/usr/bin/time`
//! splits a process's: user time (its own code: resident memory accesses)
//! and system time (the kernel on its behalf: faults, `read()`/`write()`
//! copies, direct and memcg reclaim, zram and zswap compression).

use super::Machine;
use crate::program::{Access, Program};
use crate::sched::thread_actor;
use crate::Nanos;
use hdrhistogram::Histogram;

pub(super) struct Thread {
    pub(super) name: String,
    pub(super) program: Box<dyn Program>,
    pub(super) clock: Nanos,
    /// An access that stalled, with the time it was first attempted.
    pub(super) pending: Option<(Access, Nanos)>,
    pub(super) slow_ops: u64,
    pub(super) fast_ops: u64,
    /// Of the resident accesses, those that were `read()` / `write()` calls:
    /// their CPU is the kernel's copy, system time.
    pub(super) syscall_hits: u64,
    /// The CPU time of those calls (`cpu.file_read_ns` / `cpu.file_write_ns` each).
    pub(super) syscall_hit_ns: Nanos,
    /// Accesses repeated on the page just touched (`Step::Repeat`): user time.
    pub(super) repeats: u64,
    /// CPU time of its slow accesses and control writes (system time).
    pub(super) kernel_cpu_ns: Nanos,
    pub(super) reclaim_stall_ns: Nanos,
    pub(super) hist: Histogram<u64>,
    /// Transactions, for workloads that mark them (boxed: off the hot path).
    pub(super) txns: Box<Txns>,
    pub(super) done: bool,
    /// When the OOM killer killed its process.
    pub(super) oom_killed_ns: Option<Nanos>,
}

/// A thread's transactions: the open one's start, the first one's, count and latencies.
pub(super) struct Txns {
    pub(super) start: Nanos,
    pub(super) first: Option<Nanos>,
    pub(super) count: u64,
    pub(super) hist: Histogram<u64>,
}

/// An empty latency histogram: 3 significant digits, auto-resizing (bounded by the largest latency seen).
fn histogram() -> Histogram<u64> {
    Histogram::new(3).expect("3 significant figures is valid")
}

impl Thread {
    /// A thread that runs `program` from time 0.
    pub(super) fn new(name: String, program: Box<dyn Program>) -> Thread {
        Thread {
            name,
            program,
            clock: 0,
            pending: None,
            slow_ops: 0,
            fast_ops: 0,
            syscall_hits: 0,
            syscall_hit_ns: 0,
            repeats: 0,
            kernel_cpu_ns: 0,
            reclaim_stall_ns: 0,
            hist: histogram(),
            txns: Box::new(Txns { start: 0, first: None, count: 0, hist: histogram() }),
            done: false,
            oom_killed_ns: None,
        }
    }

    /// The thread ends at its clock, by itself or killed at `killed` by the OOM killer.
    pub(super) fn end(&mut self, m: &mut Machine, tid: usize, killed: Option<Nanos>) {
        let (clock, actor) = (self.clock, thread_actor(tid));
        m.psi_of(tid, |p| p.task_end(clock));
        m.cpu_sleep(actor, self.clock);
        self.done = true;
        self.pending = None;
        self.oom_killed_ns = killed;
    }

    /// A resident access `a` (the fast path), counted by the mode its CPU runs in.
    #[inline]
    /// A resident access `a` that took `cost` ns of CPU.
    pub(super) fn count_hit(&mut self, a: Access, cost: Nanos) {
        self.fast_ops += 1;
        if !matches!(a, Access::Mem { .. }) {
            self.syscall_hits += 1;
            self.syscall_hit_ns += cost;
        }
    }

    /// Kernel work that took `elapsed` ns of the thread's time, `slept` of
    /// them asleep (S-SC5: the CPU work, then the sleeps): charges the rest
    /// as system time and returns it.
    pub(super) fn charge_kernel(&mut self, elapsed: Nanos, slept: Nanos) -> Nanos {
        let cpu = elapsed - slept.min(elapsed);
        self.kernel_cpu_ns += cpu;
        cpu
    }

    /// User time: resident memory accesses and their repeats, `access_ns` each.
    pub(super) fn user_time_ns(&self, access_ns: Nanos) -> Nanos {
        (self.fast_ops - self.syscall_hits + self.repeats) * access_ns
    }

    /// System time: the copies of resident `read()`/`write()` calls, then
    /// the CPU of slow accesses and control writes.
    pub(super) fn system_time_ns(&self) -> Nanos {
        self.syscall_hit_ns + self.kernel_cpu_ns
    }
}

impl Txns {
    /// `Step::TxnBegin` (`end` false) or `Step::TxnEnd` at `now`.
    #[cold]
    #[inline(never)]
    pub(super) fn mark(&mut self, end: bool, now: Nanos) {
        if end {
            self.count += 1;
            self.hist.record((now - self.start).max(1)).expect("auto-resizing histogram");
        } else {
            self.start = now;
            self.first.get_or_insert(now);
        }
    }
}
