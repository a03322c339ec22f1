//! The simulation: machine state, the run loop, and the public `Sim` API.
//!
//! Actors are workload threads, kswapd and device completions. The actor with
//! the smallest virtual time runs next; ties are broken by enqueue order. A
//! thread runs accesses back to back until its clock passes the next queued
//! event, so a resident hit costs no queue operation.
//!
//! The machine is cut by topic, along the kernel's files:
//! - `queue`: the closed set of events, the time-ordered queue, a thread's horizon;
//! - `build`: the machine and its threads from a configuration;
//! - `fault`: the fault path (mm/memory.c, mm/swap_state.c, mm/filemap.c);
//! - `page_alloc`: watermarks, kswapd wakeups, direct reclaim, retry and OOM;
//! - `kswapd`: kswapd's life cycle (wake, balance steps, nap, sleep);
//! - `writeback`: dirty pages, the flusher, reclaim's writes, writeback
//!   completions, reclaim throttling waits;
//! - `reclaim_clock`: the context of one reclaim call and time passing in it;
//! - `memcg_charge`: the memory cgroup's charge and limit-reclaim loop;
//! - `oom`: the processes, the OOM killer and its reaper;
//! - `cpus`: the actors on the CPUs with `cpus=N` (taking a CPU, sleeping,
//!   preemption points, dispatching the next actor);
//! - `lru_batch`, `hooks`, `control` (policy control reads and writes), `report`.
//!
//! Simplifications (listed in docs/model.md):
//! - S-EN1: without `cpus=N`, each thread and kswapd have a CPU of their own
//!   (no run-queue contention); with it, `cpus` schedules them (S-SC1..4).
//! - S-EN2: a faulting page is inserted at once; the thread waits for the read,
//!   but no other actor can see the page locked meanwhile.
//! - S-EN3: a direct reclaimer that frees nothing is throttled until the next
//!   event or one jiffy (`reclaim_throttle(NOPROGRESS)`), then retries.

use crate::config::Config;
use crate::device::Device;
use crate::program::{Access, Step};
use crate::psi::Psi;
use crate::report::{RunReport, Snapshot};
use crate::sched::{thread_actor, Actor, Scheduler};
use crate::swap_ra::SwapReadahead;
use crate::timeseries::Sampler;
use crate::writeback::Flusher;
use crate::Nanos;
use hdrhistogram::Histogram;
use mm::{Mm, RegionId};
use reclaim::policy::ReclaimPolicy;
use reclaim::ReclaimWork;
use std::fmt;

mod build;
mod control;
mod cpus;
mod fault;
mod hooks;
mod kswapd;
mod lru_batch;
mod memcg_charge;
mod oom;
mod page_alloc;
pub use page_alloc::{MemPolicy, Placement};
mod queue;
mod reclaim_clock;
mod report;
mod thread;
mod trace_events;
mod writeback;

use thread::Thread;

use queue::{Event, EventQueue};

/// A run that could not complete.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SimError {
    /// Reclaim could free nothing for too long: the workload needs more memory
    /// than RAM plus swap, and the OOM killer killed nothing.
    OutOfMemory {
        /// Virtual time of the failure.
        at_ns: Nanos,
        /// The thread that could not allocate.
        thread: String,
        /// Why the OOM killer killed nothing.
        killer: &'static str,
    },
    /// The memory cgroup's limit reclaim made no progress `MAX_RECLAIM_RETRIES`
    /// times in a row (the kernel's memcg OOM), and the OOM killer killed nothing.
    MemcgOutOfMemory {
        /// Virtual time of the failure.
        at_ns: Nanos,
        /// The thread whose charge failed.
        thread: String,
        /// Why the OOM killer killed nothing.
        killer: &'static str,
    },
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::OutOfMemory { at_ns, thread, killer } => write!(
                f,
                "out of memory at {:.3} s: thread {thread} could not allocate a page and reclaim made no progress; \
                 the workload needs more than memory + swap (raise `memory` or `swap`); the OOM killer killed nothing: {killer}",
                *at_ns as f64 / 1e9
            ),
            SimError::MemcgOutOfMemory { at_ns, thread, killer } => write!(
                f,
                "memory cgroup out of memory at {:.3} s: thread {thread} could not charge a page and limit reclaim made no progress; \
                 the workload needs more than memcg.limit + swap (raise `memcg.limit` or `swap`, or memcg.swappiness > 0); \
                 the OOM killer killed nothing: {killer}",
                *at_ns as f64 / 1e9
            ),
        }
    }
}

impl std::error::Error for SimError {}

/// Progress of a run, for display.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    /// Virtual time reached.
    pub virtual_ns: Nanos,
    /// Accesses simulated so far.
    pub accesses: u64,
}

/// Why an access could not complete now.
enum Stall {
    /// Retry the access at this time.
    Retry(Nanos),
    /// The machine is out of memory at this time.
    Oom(Nanos),
    /// A memory cgroup is out of memory at this time (the root: the v1 group).
    MemcgOom(mm::CgId, Nanos),
}

impl Stall {
    /// The OOM's scope and time, if this is an OOM.
    fn oom(&self) -> Option<(oom::Constraint, Nanos)> {
        match *self {
            Stall::Retry(_) => None,
            Stall::Oom(at) => Some((oom::Constraint::Global, at)),
            Stall::MemcgOom(g, at) => Some((oom::Constraint::Memcg(g), at)),
        }
    }
}

/// The run's error for an OOM of scope `c` that `thread` met at `at_ns`,
/// when the OOM killer killed nothing (`killer` says why).
fn oom_error(c: oom::Constraint, at_ns: Nanos, thread: String, killer: &'static str) -> SimError {
    match c {
        oom::Constraint::Global => SimError::OutOfMemory { at_ns, thread, killer },
        oom::Constraint::Memcg(_) => SimError::MemcgOutOfMemory { at_ns, thread, killer },
    }
}

/// The simulated machine without its threads.
struct Machine {
    mm: Mm,
    policy: Box<dyn ReclaimPolicy>,
    /// One kswapd per node, and the generation of the last timer any of them set.
    kswapds: Vec<kswapd::NodeKswapd>,
    kswapd_gen: u64,
    /// Threads' NUMA placement; the highest zone type user pages may use.
    numa: page_alloc::TaskNuma,
    user_class: mm::ZoneId,
    swap_dev: Device,
    fs_dev: Device,
    ra: SwapReadahead,
    /// Per-CPU LRU add batches (whether a page just added is listed yet).
    lru_batches: lru_batch::LruAddBatches,
    cfg: Config,
    queue: EventQueue,
    direct_reclaim_ns: Nanos,
    /// Reclaim work by kswapd and by direct reclaimers (for the CPU-cost breakdown).
    kswapd_work: ReclaimWork,
    direct_work: ReclaimWork,
    /// Latency of each direct reclaim invocation.
    direct_hist: Histogram<u64>,
    /// Pressure stall accounting: the system's, and each group's by
    /// [`mm::CgId`] (empty without a tree; the root's entry is unused).
    psi: Psi,
    cg_psi: Vec<Psi>,
    /// Memory stall of the access in progress beyond direct reclaim (workingset refault reads).
    refault_stall_ns: Nanos,
    /// Control writes programs can issue (control, text), and the outcome of each write.
    control_texts: Vec<control::ControlText>,
    /// Senpai controllers, ticked by their threads' control writes.
    senpais: Vec<crate::senpai::Senpai>,
    control_log: Vec<String>,
    events: u64,
    /// Consecutive throttled allocation attempts without any progress.
    stalled_attempts: u32,
    /// The filesystem device's flusher thread.
    flusher: Flusher,
    /// Time reclaimers (kswapd and direct) slept in reclaim throttling.
    reclaim_throttled_ns: Nanos,
    /// Direct reclaim calls in flight and their threads, by end time (S-TH2).
    isolating: Vec<(u32, reclaim::throttle::InFlight)>,
    /// The memory cgroup holding the workload, if limited.
    memcg: Option<crate::memcg::Memcg>,
    /// Per thread: pages charged while over `memory.high`, not yet paid for
    /// (`current->memcg_nr_pages_over_high`).
    over_high: Vec<u64>,
    /// Periodic state samples (off unless asked for).
    sampler: Sampler,
    /// The CPUs the actors share (`cpus=N`); `None`: each actor has its own (S-EN1).
    sched: Option<Scheduler>,
    /// Of the access in progress, time the thread slept (device waits,
    /// throttling, dirty-page pauses) rather than ran.
    sleep_ns: Nanos,
    /// The thread actor inside a slow access (it wakes kswapd).
    waker: Option<Actor>,
    /// The running thread's slice end: it bounds the thread's horizon.
    cpu_slice_end: Nanos,
    /// Counter snapshots threads asked for (`Step::Snapshot`).
    snapshots: Vec<Snapshot>,
    /// The processes: their regions, threads, `oom_score_adj` and kills.
    procs: oom::Processes,
}

/// Builds a simulation: the machine from a [`Config`], then regions, files and threads.
pub struct SimBuilder {
    m: Machine,
    threads: Vec<Thread>,
    /// The memory cgroup of the regions and files added next.
    cgroup: mm::CgId,
}

/// A ready-to-run simulation.
pub struct Sim {
    m: Machine,
    threads: Vec<Thread>,
    /// Check every invariant at each progress point, not only at the end.
    paranoid: bool,
}

/// SIM-CHOICE: events between two progress reports (and paranoid checks).
const PROGRESS_EVENTS: u64 = 4096;

/// SIM-CHOICE: give up after this many throttled retries (about 4 s of virtual
/// time at one jiffy each) with no page freed anywhere.
const OOM_STALL_LIMIT: u32 = 1000;

impl Sim {
    /// Paranoid mode: every invariant (O(memory)) is checked every
    /// 4096 events of the run (`PROGRESS_EVENTS`), not only once at its end.
    pub fn paranoid(mut self) -> Sim {
        self.paranoid = true;
        self
    }

    /// Runs until every thread is done (or the time limit), calling `progress`
    /// now and then.
    pub fn run(mut self, progress: &mut dyn FnMut(Progress)) -> Result<RunReport, SimError> {
        let limit = if self.m.cfg.time_limit_ns == 0 { Nanos::MAX } else { self.m.cfg.time_limit_ns };
        let mut next_progress = 0u64;
        let mut now = 0;
        while let Some((t, ev)) = self.m.queue.pop() {
            if t > limit {
                break;
            }
            debug_assert!(t >= now, "time went backwards: {t} < {now}");
            now = t;
            self.m.sample_until(t);
            self.m.events += 1;
            match ev {
                Event::Thread(tid) => self.run_thread(tid as usize, now, limit)?,
                Event::Kswapd(gen) => self.m.kswapd_event(gen, now)?,
                Event::WritebackDone(pfn) => self.m.writeback_done(pfn, now),
                Event::Flusher(gen) if gen == self.m.flusher.gen => self.m.flusher_event(now),
                Event::Flusher(_) => {}
                Event::StatsFlush => self.m.stats_flush_event(now),
            }
            if self.m.events >= next_progress {
                next_progress = self.m.events + PROGRESS_EVENTS;
                if self.paranoid {
                    self.m.check_invariants();
                }
                progress(Progress { virtual_ns: now, accesses: self.accesses() });
            }
        }
        // The run ends at the last queued event or thread clock, whichever is later.
        let end = self.threads.iter().map(|t| t.clock).fold(now, Nanos::max).min(limit);
        self.m.sample_until(end);
        // One O(memory) self-check at the end: a broken invariant is a simulator
        // bug, and its numbers must not pass for a result.
        self.m.check_invariants();
        Ok(self.report(end))
    }

    fn accesses(&self) -> u64 {
        self.threads.iter().map(|t| t.fast_ops + t.slow_ops).sum()
    }

    /// Runs thread `tid` (its event fired at `now`) until its clock passes the
    /// next queued event, its slice ends, or it sleeps.
    fn run_thread(&mut self, tid: usize, now: Nanos, limit: Nanos) -> Result<(), SimError> {
        let m = &mut self.m;
        let th = &mut self.threads[tid];
        let actor = thread_actor(tid);
        // A thread dispatched onto a CPU resumes when it gets it.
        th.clock = th.clock.max(now);
        if !m.cpu_enter(actor, th.clock) {
            return Ok(());
        }
        if let Some(at) = m.procs.killed_at(tid) {
            // Killed by the OOM killer while it ran ahead or slept: it ends here.
            th.end(m, tid, Some(at));
            return Ok(());
        }
        let lru_cpu = m.cpu_index(actor, tid);
        let mut horizon = m.horizon_after(th.clock, limit);
        let access_ns = m.cfg.cpu.access_ns;
        // Tested once a slice: the per-access context below tests a local.
        let tracing = m.mm.tracing();
        let hints = th.program.has_upcoming();
        let (mut upcoming, mut step): (fault::Upcoming, usize) = Default::default();
        loop {
            if hints {
                m.prefetch_upcoming(&*th.program, &mut upcoming, step);
                step += 1;
            }
            let (access, started) = match th.pending.take() {
                Some(p) => p,
                None => match th.program.next() {
                    // The resident hit, tested on the fields as the program returned
                    // them (moving the whole access into the pair below first made one
                    // load span two of the program's stores, which the CPU cannot
                    // forward: a stall on every access).
                    Step::Access(Access::Mem { region, page, write }) if m.try_hit_mem(region, page, write) => {
                        th.clock += access_ns;
                        th.count_hit(Access::Mem { region, page, write }, access_ns);
                        if m.must_yield(th.clock, limit, &mut horizon) {
                            break;
                        }
                        continue;
                    }
                    Step::Access(a) => (a, th.clock),
                    Step::Think(ns) => {
                        let at = th.clock;
                        m.psi_of(tid, |p| p.idle(at, at + ns));
                        if m.sched.is_some() {
                            m.cpu_sleep(actor, th.clock);
                            th.clock += ns;
                            break;
                        }
                        th.clock += ns;
                        if m.must_yield(th.clock, limit, &mut horizon) {
                            break;
                        }
                        continue;
                    }
                    Step::Control(w) => {
                        if tracing {
                            m.mm.trace_context(mm::tracepoint::Task::Thread(tid as u32), th.clock);
                        }
                        m.sleep_ns = 0;
                        let cost = m.control_write(w, th.clock);
                        th.charge_kernel(cost, std::mem::take(&mut m.sleep_ns));
                        th.clock += cost;
                        continue;
                    }
                    Step::Repeat(n) => {
                        th.repeats += n as u64;
                        th.clock += n as u64 * access_ns;
                        if m.must_yield(th.clock, limit, &mut horizon) {
                            break;
                        }
                        continue;
                    }
                    Step::Snapshot => {
                        m.snapshots.push(Snapshot { at_ns: th.clock, vmstat: m.mm.stat.iter().collect() });
                        continue;
                    }
                    s @ (Step::TxnBegin | Step::TxnEnd) => {
                        th.txns.mark(s == Step::TxnEnd, th.clock);
                        continue;
                    }
                    Step::Done => {
                        if let Some(p) = m.procs.thread_exit(tid) {
                            m.exit_process(p, th.clock);
                        }
                        th.end(m, tid, None);
                        return Ok(());
                    }
                },
            };
            if m.try_hit(access) {
                let cost = match access {
                    Access::Mem { .. } => access_ns,
                    Access::FileRead { .. } => m.cfg.cpu.file_read(),
                    Access::FileWrite { .. } => m.cfg.cpu.file_write(),
                };
                th.clock += cost;
                th.count_hit(access, cost);
            } else {
                m.events += 1;
                m.lru_batches.set_cpu(lru_cpu);
                m.numa.current = tid;
                if tracing {
                    m.mm.trace_context(mm::tracepoint::Task::Thread(tid as u32), th.clock);
                }
                m.waker = Some(actor);
                m.sleep_ns = 0;
                let result = m.slow_access(access, th.clock);
                m.waker = None;
                let slept = std::mem::take(&mut m.sleep_ns);
                match result {
                    Ok((cost, stall)) => {
                        let (at, until) = (th.clock, th.clock + stall + std::mem::take(&mut m.refault_stall_ns));
                        m.psi_of(tid, |p| p.stall(at, until));
                        // S-SC5: the access's CPU work comes first, then its sleeps.
                        let cpu = th.charge_kernel(cost, slept);
                        let asleep = m.sched.is_some() && slept > 0;
                        if asleep {
                            m.cpu_sleep(actor, th.clock + cpu);
                        }
                        th.clock += cost;
                        th.reclaim_stall_ns += stall;
                        th.slow_ops += 1;
                        th.hist.record(th.clock - started).expect("auto-resizing histogram");
                        if asleep || m.cpu_need_resched(actor) {
                            break;
                        }
                    }
                    Err(Stall::Retry(at)) => {
                        let from = th.clock;
                        m.psi_of(tid, |p| p.stall(from, at));
                        m.refault_stall_ns = 0;
                        // S-SC5: the failed attempt's reclaim runs on the CPU, then the thread sleeps.
                        let cpu = th.charge_kernel(at - from, slept);
                        th.reclaim_stall_ns += at - th.clock;
                        th.pending = Some((access, started));
                        if m.sched.is_some() {
                            m.cpu_sleep(actor, th.clock + cpu);
                            th.clock = at;
                            break;
                        }
                        th.clock = at;
                    }
                    Err(stall) => {
                        let (c, at) = stall.oom().expect("the other stalls are matched above");
                        if let Err(why) = m.out_of_memory(c, at) {
                            return Err(oom_error(c, th.clock, th.name.clone(), why));
                        }
                        let from = th.clock;
                        m.psi_of(tid, |p| p.stall(from, at));
                        m.refault_stall_ns = 0;
                        th.charge_kernel(at - from, slept);
                        th.reclaim_stall_ns += at - th.clock;
                        th.clock = at;
                        if m.procs.killed_at(tid).is_some() {
                            // The allocating thread was the victim: it dies in the fault.
                            th.end(m, tid, Some(at));
                            return Ok(());
                        }
                        // The allocation is retried after the kill.
                        th.pending = Some((access, started));
                    }
                }
                horizon = m.horizon_after(th.clock, limit);
                let fold_to = m.queue.next_time().min(th.clock);
                m.psi.maybe_fold(fold_to);
                m.cg_psi.iter_mut().for_each(|p| p.maybe_fold(fold_to));
            }
            if m.must_yield(th.clock, limit, &mut horizon) {
                break;
            }
        }
        // A thread that lost its CPU is queued again when it is dispatched.
        if !m.cpu_preempted(actor, th.clock) {
            m.queue.push(th.clock, Event::Thread(tid as u32));
        }
        Ok(())
    }

    /// Performs one access synchronously, outside the event loop: for small
    /// hand-checked scenarios that drive the machine step by step. Device
    /// completions queued by reclaim are processed at once.
    pub fn access_now(&mut self, a: Access) -> Result<(), SimError> {
        if !self.m.try_hit(a) {
            // Bounded by OOM_STALL_LIMIT: every retry counts a stalled attempt.
            loop {
                match self.m.slow_access(a, 0) {
                    Ok(_) => break,
                    Err(Stall::Retry(_)) => self.drain_writeback(),
                    Err(stall) => {
                        let (c, _) = stall.oom().expect("the other stall is matched above");
                        if let Err(why) = self.m.out_of_memory(c, 0) {
                            return Err(oom_error(c, 0, "access_now".into(), why));
                        }
                    }
                }
            }
            self.m.refault_stall_ns = 0;
        }
        self.drain_writeback();
        Ok(())
    }

    /// `get_user_pages(FOLL_TOUCH)` on a resident page: the kernel marks such a
    /// page accessed (`folio_mark_accessed`), which can activate anon pages too.
    /// Returns false if the page is not resident.
    pub fn gup_touch(&mut self, region: RegionId, page: u32) -> bool {
        let Some(pfn) = self.m.mm.regions[region.0 as usize].ptes[page as usize].pfn() else { return false };
        self.m.policy.on_access(&mut self.m.mm, pfn, reclaim::policy::AccessKind::MarkAccessed);
        true
    }

    fn drain_writeback(&mut self) {
        let mut other = Vec::new();
        while let Some((t, ev)) = self.m.queue.pop() {
            match ev {
                Event::WritebackDone(pfn) => self.m.writeback_done(pfn, t),
                ev => other.push((t, ev)),
            }
        }
        for (t, ev) in other {
            self.m.queue.push(t, ev);
        }
    }

    /// The memory state (for tests and dumps).
    pub fn mm(&self) -> &Mm {
        &self.m.mm
    }

    /// The memory state, mutable (tests use it to age accessed bits).
    pub fn mm_mut(&mut self) -> &mut Mm {
        &mut self.m.mm
    }

    /// Checks the policy's and the memory state's invariants (O(n)).
    pub fn check_invariants(&self) {
        self.m.check_invariants();
    }

    /// The running policy's list sizes (for tests checking them against the page flags).
    pub fn lru_sizes(&self) -> reclaim::policy::LruSizes {
        self.m.policy.lru_sizes()
    }

    /// Node `node`'s list sizes when the policy keeps an lruvec per node (`None` otherwise).
    pub fn node_lru_sizes(&self, node: u8) -> Option<reclaim::policy::LruSizes> {
        self.m.policy.node_lru_sizes(node)
    }
}

impl Machine {
    /// Applies a PSI record of thread `tid` to the system's accumulator and
    /// to its groups'.
    fn psi_of(&mut self, tid: usize, f: impl Fn(&mut Psi)) {
        f(&mut self.psi);
        self.group_psi_of(tid, f);
    }

    /// Applies a PSI record of thread `tid` to its group's accumulator and
    /// those of the group's ancestors below the root.
    fn group_psi_of(&mut self, tid: usize, f: impl Fn(&mut Psi)) {
        if self.cg_psi.is_empty() {
            return;
        }
        let mut g = self.procs.thread_cg(tid);
        while let Some(parent) = self.mm.cgroups.get(g).parent {
            f(&mut self.cg_psi[g.0 as usize]);
            g = parent;
        }
    }

    fn check_invariants(&self) {
        self.policy.check_invariants(&self.mm);
        let on_lists = self.policy.lru_sizes().total();
        let (free, pool, reserved) = (self.mm.nr_free_frames(), self.mm.nr_zspages(), self.mm.nr_reserved());
        let slab = self.mm.slab.reclaimable_pages();
        assert_eq!(
            free + on_lists + pool + reserved + slab,
            self.mm.frames.len() as u64,
            "page accounting: free {free} + on LRU {on_lists} + zsmalloc pools {pool} + reserved {reserved} + slab {slab} != total"
        );
        self.mm.check_slab();
        self.mm.frames.check_pcp();
        self.check_dirty_gauges();
    }
}
