//! The simulation: machine state, the event loop, and the fault path.
//!
//! Actors are workload threads, kswapd and device completions. The actor with
//! the smallest virtual time runs next; ties are broken by enqueue order. A
//! thread runs accesses back to back until its clock passes the next queued
//! event, so a resident hit costs no queue operation.
//!
//! Simplifications (listed in docs/model.md):
//! - S-EN1: each thread and kswapd have a CPU of their own (no run-queue contention).
//! - S-EN2: a faulting page is inserted at once; the thread waits for the read,
//!   but no other actor can see the page locked meanwhile.
//! - S-EN3: a direct reclaimer that frees nothing is throttled until the next
//!   event or one jiffy (`reclaim_throttle(NOPROGRESS)`), then retries.
//!
//! Dirty pages, the flusher and reclaim throttling waits live in `sim/io.rs`.

mod io;

use crate::config::{Config, ConfigError};
use crate::device::Device;
use crate::program::{Access, LruGenWrite, Program, Step};
use crate::psi::Psi;
use crate::report::{RunReport, ThreadReport, LATENCY_PERCENTILES};
use crate::swap_ra::{RaMode, SwapReadahead};
use crate::timeseries::Sampler;
use crate::writeback::Flusher;
use crate::{Nanos, JIFFY_NS};
use hdrhistogram::Histogram;
use mm::{CacheEntry, FileId, Mm, Owner, PageFlags, Pfn, Pte, RegionId, RegionKind, VmEvent, Watermark};
use reclaim::kswapd::{watermark_ok, Kswapd};
use reclaim::pageout::{free_swap_cache, PageoutEnv};
use reclaim::policy::{Origin, ReclaimPolicy};
use reclaim::{direct, watermark, ReclaimWork};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt;

mod hooks;
mod lru_batch;
mod memcg_charge;
mod reclaim_clock;

/// A run that could not complete.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SimError {
    /// Reclaim could free nothing for too long: the workload needs more memory
    /// than RAM plus swap.
    OutOfMemory {
        /// Virtual time of the failure.
        at_ns: Nanos,
        /// The thread that could not allocate.
        thread: String,
    },
    /// The memory cgroup's limit reclaim made no progress `MAX_RECLAIM_RETRIES`
    /// times in a row (the kernel's memcg OOM).
    MemcgOutOfMemory {
        /// Virtual time of the failure.
        at_ns: Nanos,
        /// The thread whose charge failed.
        thread: String,
    },
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::OutOfMemory { at_ns, thread } => write!(
                f,
                "out of memory at {:.3} s: thread {thread} could not allocate a page and reclaim made no progress; \
                 the workload needs more than memory + swap (raise `memory` or `swap`)",
                *at_ns as f64 / 1e9
            ),
            SimError::MemcgOutOfMemory { at_ns, thread } => write!(
                f,
                "memory cgroup out of memory at {:.3} s: thread {thread} could not charge a page and limit reclaim made no progress; \
                 the workload needs more than memcg.limit + swap (raise `memcg.limit` or `swap`, or memcg.swappiness > 0)",
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

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    Thread(u32),
    /// kswapd timer; stale if the generation does not match.
    Kswapd(u64),
    /// Writeback of a page finished.
    WritebackDone(Pfn),
    /// Flusher wakeup; stale if the generation does not match.
    Flusher(u64),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum KswapdState {
    Asleep,
    Running,
    Napping,
}

/// Time-ordered event queue; ties are broken by insertion sequence.
#[derive(Default)]
struct EventQueue {
    heap: BinaryHeap<Reverse<(Nanos, u64, Event)>>,
    seq: u64,
}

impl EventQueue {
    fn push(&mut self, at: Nanos, ev: Event) {
        self.seq += 1;
        self.heap.push(Reverse((at, self.seq, ev)));
    }
    fn pop(&mut self) -> Option<(Nanos, Event)> {
        self.heap.pop().map(|Reverse((t, _, e))| (t, e))
    }
    fn next_time(&self) -> Nanos {
        self.heap.peek().map_or(Nanos::MAX, |Reverse((t, _, _))| *t)
    }
    /// Removes the writeback completions due at or before `t` and returns
    /// their pages in queue order; every other event keeps its place and tie order.
    fn take_writebacks_until(&mut self, t: Nanos) -> Vec<Pfn> {
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

/// Why an access could not complete now.
enum Stall {
    /// Retry the access at this time.
    Retry(Nanos),
    Oom,
    /// The memory cgroup is out of memory.
    MemcgOom,
}

/// The simulated machine without its threads.
struct Machine {
    mm: Mm,
    policy: Box<dyn ReclaimPolicy>,
    kswapd: Kswapd,
    kswapd_state: KswapdState,
    kswapd_gen: u64,
    swap_dev: Device,
    fs_dev: Device,
    ra: SwapReadahead,
    /// Per-CPU LRU add batches (whether a page just added is listed yet).
    lru_batches: lru_batch::LruAddBatches,
    cfg: Config,
    env: PageoutEnv,
    queue: EventQueue,
    kswapd_cpu_ns: Nanos,
    direct_reclaim_ns: Nanos,
    /// Reclaim work by kswapd and by direct reclaimers (for the CPU-cost breakdown).
    kswapd_work: ReclaimWork,
    direct_work: ReclaimWork,
    /// Latency of each direct reclaim invocation.
    direct_hist: Histogram<u64>,
    /// Pressure stall accounting.
    psi: Psi,
    /// Memory stall of the access in progress beyond direct reclaim (workingset refault reads).
    refault_stall_ns: Nanos,
    /// Texts of `lru_gen` writes programs can issue, and the outcome of each write.
    lru_gen_texts: Vec<String>,
    lru_gen_log: Vec<String>,
    events: u64,
    /// Consecutive throttled allocation attempts without any progress.
    stalled_attempts: u32,
    /// The filesystem device's flusher thread.
    flusher: Flusher,
    /// Time reclaimers (kswapd and direct) slept in reclaim throttling.
    reclaim_throttled_ns: Nanos,
    /// The memory cgroup holding the workload, if limited.
    memcg: Option<crate::memcg::Memcg>,
    /// Periodic state samples (off unless asked for).
    sampler: Sampler,
}

struct Thread {
    name: String,
    program: Box<dyn Program>,
    clock: Nanos,
    /// An access that stalled, with the time it was first attempted.
    pending: Option<(Access, Nanos)>,
    slow_ops: u64,
    fast_ops: u64,
    reclaim_stall_ns: Nanos,
    hist: Histogram<u64>,
    /// Transactions, for workloads that mark them (boxed: off the hot path).
    txns: Box<Txns>,
    done: bool,
}

/// A thread's transactions: the open one's start, the first one's, count and latencies.
struct Txns {
    start: Nanos,
    first: Option<Nanos>,
    count: u64,
    hist: Histogram<u64>,
}

impl Txns {
    /// `Step::TxnBegin` (`end` false) or `Step::TxnEnd` at `now`.
    #[cold]
    #[inline(never)]
    fn mark(&mut self, end: bool, now: Nanos) {
        if end {
            self.count += 1;
            self.hist.record((now - self.start).max(1)).expect("auto-resizing histogram");
        } else {
            self.start = now;
            self.first.get_or_insert(now);
        }
    }
}

/// Builds a simulation: the machine from a [`Config`], then regions, files and threads.
pub struct SimBuilder {
    m: Machine,
    threads: Vec<Thread>,
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

/// KERNEL: kswapd naps HZ/10 before sleeping (`kswapd_try_to_sleep`).
const KSWAPD_NAP_NS: Nanos = JIFFY_NS * crate::HZ / 10;
/// SIM-CHOICE: give up after this many throttled retries (about 4 s of virtual
/// time at one jiffy each) with no page freed anywhere.
const OOM_STALL_LIMIT: u32 = 1000;

impl SimBuilder {
    /// A machine configured by `cfg`, with no workload yet.
    pub fn new(cfg: Config) -> Result<SimBuilder, ConfigError> {
        cfg.validate()?;
        let nr_frames = (cfg.memory_bytes / mm::PAGE_SIZE) as u32;
        let swap_pages = (cfg.swap_bytes / mm::PAGE_SIZE) as u32;
        let mut mm = Mm::new(nr_frames, swap_pages);
        if cfg.swap_kind == crate::device::DeviceKind::Zram && swap_pages > 0 {
            mm.enable_zram(cfg.zram.pool_config());
        }
        let min_free_kbytes =
            cfg.min_free_kbytes.unwrap_or_else(|| watermark::default_min_free_kbytes(cfg.memory_bytes / 1024));
        let managed = nr_frames as u64;
        for z in &mut mm.zones {
            watermark::setup_zone_watermarks(z, min_free_kbytes, cfg.watermark_scale_factor, managed);
        }
        if mm.zones[0].wmark(Watermark::High) >= managed {
            return Err(ConfigError::Inconsistent(format!(
                "watermarks do not fit: high watermark {} pages >= {} pages of memory (lower vm.min_free_kbytes or vm.watermark_scale_factor)",
                mm.zones[0].wmark(Watermark::High),
                managed
            )));
        }
        let entry = reclaim::policy::registry::find(&cfg.lru).expect("lru validated by Config::set");
        // The group's swappiness governs every reclaim of its lruvec (S-MC1).
        let memcg = (cfg.memcg_limit_bytes != 0)
            .then(|| crate::memcg::Memcg::new(cfg.memcg_limit_bytes, cfg.memcg_swappiness, cfg.memcg_stats_flush));
        let mut reclaim_cfg = cfg.reclaim.clone();
        if let Some(m) = &memcg {
            reclaim_cfg.swappiness = m.swappiness;
        }
        let mut policy = (entry.build)(&reclaim_cfg);
        if memcg.as_ref().is_some_and(|m| m.stats_flush > 0) {
            policy.flush_group_stats(&mm);
        }
        let swap_dev = cfg.swap_kind.build(&cfg.swap_params);
        let env = PageoutEnv { sync_swap: swap_dev.sync, now_ns: 0, fs_congested: false, dirty: cfg.reclaim.dirty };
        Ok(SimBuilder {
            m: Machine {
                mm,
                policy,
                kswapd: Kswapd::default(),
                kswapd_state: KswapdState::Asleep,
                kswapd_gen: 0,
                ra: SwapReadahead::new(cfg.page_cluster, cfg.vma_ra_enabled, swap_dev.rotational(), cfg.swap_ra),
                lru_batches: Default::default(),
                swap_dev,
                fs_dev: cfg.fs_kind.build(&cfg.fs_params),
                cfg,
                env,
                queue: EventQueue::default(),
                kswapd_cpu_ns: 0,
                direct_reclaim_ns: 0,
                kswapd_work: ReclaimWork::default(),
                direct_work: ReclaimWork::default(),
                direct_hist: Histogram::new(3).expect("3 significant figures is valid"),
                psi: Psi::default(),
                refault_stall_ns: 0,
                lru_gen_texts: Vec::new(),
                lru_gen_log: Vec::new(),
                events: 0,
                stalled_attempts: 0,
                flusher: Flusher::default(),
                reclaim_throttled_ns: 0,
                memcg,
                sampler: Sampler::off(),
            },
            threads: Vec::new(),
        })
    }

    /// Pages of RAM.
    pub fn memory_pages(&self) -> u64 {
        self.m.mm.frames.len() as u64
    }

    /// Adds an anonymous region (a process's private memory) of `pages` pages.
    pub fn add_anon_region(&mut self, pages: u32) -> RegionId {
        self.m.mm.add_anon_region(pages)
    }

    /// Adds a file of `pages` pages on the filesystem device.
    pub fn add_file(&mut self, pages: u32) -> FileId {
        self.m.mm.add_file(pages)
    }

    /// Maps `pages` pages of `file` from page `offset`; `exec` marks it `VM_EXEC`.
    pub fn map_file(&mut self, file: FileId, offset: u32, pages: u32, exec: bool) -> RegionId {
        let r = self.m.mm.map_file(file, offset, pages);
        self.m.mm.regions[r.0 as usize].exec = exec;
        r
    }

    /// Registers the text of a `/sys/kernel/debug/lru_gen` write that a program
    /// issues with [`Step::LruGen`].
    pub fn add_lru_gen_write(&mut self, text: impl Into<String>) -> LruGenWrite {
        self.m.lru_gen_texts.push(text.into());
        LruGenWrite(self.m.lru_gen_texts.len() as u32 - 1)
    }

    /// Adds a workload thread.
    pub fn add_thread(&mut self, name: impl Into<String>, program: Box<dyn Program>) {
        let id = self.threads.len() as u32;
        self.m.psi.task_start(0);
        self.threads.push(Thread {
            name: name.into(),
            program,
            clock: 0,
            pending: None,
            slow_ops: 0,
            fast_ops: 0,
            reclaim_stall_ns: 0,
            // 3 significant digits, auto-resizing: bounded by the largest latency seen.
            hist: Histogram::new(3).expect("3 significant figures is valid"),
            txns: Box::new(Txns {
                start: 0,
                first: None,
                count: 0,
                hist: Histogram::new(3).expect("3 significant figures is valid"),
            }),
            done: false,
        });
        self.m.queue.push(0, Event::Thread(id));
    }

    /// Finishes building.
    pub fn build(self) -> Sim {
        Sim { m: self.m, threads: self.threads, paranoid: false }
    }
}

/// A histogram's value at each of [`LATENCY_PERCENTILES`] (100 = its maximum).
fn percentiles(h: &Histogram<u64>) -> [(f64, u64); 9] {
    LATENCY_PERCENTILES.map(|p| (p, if p >= 100.0 { h.max() } else { h.value_at_quantile(p / 100.0) }))
}

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
                Event::Thread(tid) => self.run_thread(tid as usize, limit)?,
                Event::Kswapd(gen) if gen == self.m.kswapd_gen => self.m.kswapd_event(now),
                Event::Kswapd(_) => {}
                Event::WritebackDone(pfn) => self.m.writeback_done(pfn),
                Event::Flusher(gen) if gen == self.m.flusher.gen => self.m.flusher_event(now),
                Event::Flusher(_) => {}
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

    /// Runs thread `tid` until its clock passes the next queued event.
    fn run_thread(&mut self, tid: usize, limit: Nanos) -> Result<(), SimError> {
        let m = &mut self.m;
        let th = &mut self.threads[tid];
        let mut horizon = m.horizon_after(th.clock, limit);
        let access_ns = m.cfg.cpu.access_ns;
        loop {
            let (access, started) = match th.pending.take() {
                Some(p) => p,
                None => match th.program.next() {
                    Step::Access(a) => (a, th.clock),
                    Step::Think(ns) => {
                        m.psi.idle(th.clock, th.clock + ns);
                        th.clock += ns;
                        if m.must_yield(th.clock, limit, &mut horizon) {
                            break;
                        }
                        continue;
                    }
                    Step::LruGen(w) => {
                        th.clock += m.lru_gen_write(w, th.clock);
                        continue;
                    }
                    s @ (Step::TxnBegin | Step::TxnEnd) => {
                        th.txns.mark(s == Step::TxnEnd, th.clock);
                        continue;
                    }
                    Step::Done => {
                        m.psi.task_end(th.clock);
                        th.done = true;
                        return Ok(());
                    }
                },
            };
            if m.try_hit(access) {
                th.clock += access_ns;
                th.fast_ops += 1;
            } else {
                m.events += 1;
                m.lru_batches.set_cpu(tid);
                match m.slow_access(access, th.clock) {
                    Ok((cost, stall)) => {
                        m.psi.stall(th.clock, th.clock + stall + std::mem::take(&mut m.refault_stall_ns));
                        th.clock += cost;
                        th.reclaim_stall_ns += stall;
                        th.slow_ops += 1;
                        th.hist.record(th.clock - started).expect("auto-resizing histogram");
                    }
                    Err(Stall::Retry(at)) => {
                        m.psi.stall(th.clock, at);
                        m.refault_stall_ns = 0;
                        th.reclaim_stall_ns += at - th.clock;
                        th.clock = at;
                        th.pending = Some((access, started));
                    }
                    Err(Stall::Oom) => return Err(SimError::OutOfMemory { at_ns: th.clock, thread: th.name.clone() }),
                    Err(Stall::MemcgOom) => {
                        return Err(SimError::MemcgOutOfMemory { at_ns: th.clock, thread: th.name.clone() })
                    }
                }
                horizon = m.horizon_after(th.clock, limit);
                m.psi.maybe_fold(m.queue.next_time().min(th.clock));
            }
            if m.must_yield(th.clock, limit, &mut horizon) {
                break;
            }
        }
        m.queue.push(th.clock, Event::Thread(tid as u32));
        Ok(())
    }

    fn report(mut self, end: Nanos) -> RunReport {
        let mm = &self.m.mm;
        let sizes = self.m.policy.lru_sizes();
        let mut vmstat: Vec<(&'static str, u64)> = Vec::new();
        let count_frames = |bits: u16| mm.frames.as_slice().iter().filter(|f| f.flags.has(bits)).count() as u64;
        vmstat.push(("nr_free_pages", mm.nr_free()));
        vmstat.push(("nr_zspages", mm.nr_zspages()));
        vmstat.push(("nr_inactive_anon", sizes.inactive_anon));
        vmstat.push(("nr_active_anon", sizes.active_anon));
        vmstat.push(("nr_inactive_file", sizes.inactive_file));
        vmstat.push(("nr_active_file", sizes.active_file));
        vmstat.push(("nr_unevictable", sizes.unevictable));
        vmstat.push(("nr_isolated_anon", 0));
        vmstat.push(("nr_isolated_file", 0));
        vmstat.push(("nr_dirty", mm.dirty.nr_dirty));
        vmstat.push(("nr_writeback", mm.dirty.nr_writeback));
        vmstat.push(("nr_swapcached", count_frames(PageFlags::SWAPCACHE)));
        vmstat.push(("nr_swap_free", mm.swap.nr_free() as u64));
        let t = self.m.dirty_thresholds();
        vmstat.push(("nr_dirty_threshold", t.thresh));
        vmstat.push(("nr_dirty_background_threshold", t.bg_thresh));
        for z in &mm.zones {
            // Watermarks are per zone in /proc/zoneinfo; one zone here.
            vmstat.push(("wmark_min", z.wmark(Watermark::Min)));
            vmstat.push(("wmark_low", z.wmark(Watermark::Low)));
            vmstat.push(("wmark_high", z.wmark(Watermark::High)));
        }
        vmstat.extend(mm.stat.iter());
        let memcg = self.m.memcg_stat(&vmstat);
        let zram = mm.zram.as_ref().map_or_else(Vec::new, |z| {
            let mut v = z.mm_stat().named().to_vec();
            v.push(("failed_writes", z.failed_writes()));
            v
        });
        let threads = self
            .threads
            .iter_mut()
            .map(|t| {
                // Resident hits all cost the same: add them in bulk.
                if t.fast_ops > 0 {
                    t.hist.record_n(self.m.cfg.cpu.access_ns.max(1), t.fast_ops).expect("auto-resizing histogram");
                }
                ThreadReport {
                    name: t.name.clone(),
                    ops: t.fast_ops + t.slow_ops,
                    end_ns: if t.done { t.clock } else { end },
                    reclaim_stall_ns: t.reclaim_stall_ns,
                    latency_ns: percentiles(&t.hist),
                    latency_mean_ns: t.hist.mean(),
                    txns: t.txns.count,
                    first_txn_ns: t.txns.first.unwrap_or(0),
                    txn_latency_ns: percentiles(&t.txns.hist),
                    txn_latency_mean_ns: t.txns.hist.mean(),
                }
            })
            .collect();
        let dh = &self.m.direct_hist;
        RunReport {
            vmstat,
            memcg,
            zram,
            threads,
            virtual_ns: end,
            events: self.m.events,
            accesses: self.accesses(),
            kswapd_cpu_ns: self.m.kswapd_cpu_ns,
            direct_reclaim_ns: self.m.direct_reclaim_ns,
            kswapd_work: self.m.kswapd_work,
            direct_work: self.m.direct_work,
            direct_reclaims: dh.len(),
            direct_reclaim_latency_ns: percentiles(dh),
            psi: self.m.psi.finish(end),
            lru_gen_dump: self.m.policy.lru_gen_dump(end),
            lru_gen_writes: std::mem::take(&mut self.m.lru_gen_log),
            reclaim_throttled_ns: self.m.reclaim_throttled_ns,
            timeseries: self.m.sampler.finish(),
        }
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
                    Err(Stall::Oom) => return Err(SimError::OutOfMemory { at_ns: 0, thread: "access_now".into() }),
                    Err(Stall::MemcgOom) => {
                        return Err(SimError::MemcgOutOfMemory { at_ns: 0, thread: "access_now".into() })
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
        self.m.policy.mark_accessed(&mut self.m.mm, pfn);
        true
    }

    fn drain_writeback(&mut self) {
        let mut other = Vec::new();
        while let Some((t, ev)) = self.m.queue.pop() {
            match ev {
                Event::WritebackDone(pfn) => self.m.writeback_done(pfn),
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
}

impl Machine {
    /// The fast path: an access to a resident page. True if it hit.
    #[inline]
    fn try_hit(&mut self, a: Access) -> bool {
        match a {
            Access::Mem { region, page, write } => {
                let pte = &mut self.mm.regions[region.0 as usize].ptes[page as usize];
                if pte.is_present() {
                    pte.touch(write);
                    return true;
                }
                false
            }
            Access::FileRead { file, page } => {
                if let Some(pfn) = self.mm.files[file.0 as usize].cache[page as usize].pfn() {
                    self.policy.mark_accessed(&mut self.mm, pfn);
                    return true;
                }
                false
            }
            Access::FileWrite { file, page } => {
                // Only a write to an already dirty page needs no dirty accounting.
                match self.mm.files[file.0 as usize].cache[page as usize].pfn() {
                    Some(pfn) if self.mm.frames[pfn].flags.has(PageFlags::DIRTY) => {
                        self.policy.mark_accessed(&mut self.mm, pfn);
                        true
                    }
                    _ => false,
                }
            }
        }
    }

    /// The slow path: faults and page-cache misses. Returns (latency, of which reclaim stall).
    fn slow_access(&mut self, a: Access, now: Nanos) -> Result<(Nanos, Nanos), Stall> {
        match a {
            Access::Mem { region, page, write } => {
                let r = &self.mm.regions[region.0 as usize];
                let pte = r.ptes[page as usize];
                match r.kind {
                    RegionKind::Anon => match pte.swap_slot() {
                        Some(slot) => self.do_swap_page(region, page, slot, write, now),
                        None => self.do_anonymous_page(region, page, write, now),
                    },
                    RegionKind::File { file, offset } => {
                        self.filemap_fault(region, page, file, offset + page, write, now)
                    }
                }
            }
            Access::FileRead { file, page } => self.filemap_read(file, page, now),
            Access::FileWrite { file, page } => self.filemap_write(file, page, now),
        }
    }

    /// `do_anonymous_page()`: a first touch of anonymous memory.
    fn do_anonymous_page(
        &mut self,
        region: RegionId,
        page: u32,
        write: bool,
        now: Nanos,
    ) -> Result<(Nanos, Nanos), Stall> {
        let (pfn, stall) = self.alloc_page(Owner::anon(region), page, PageFlags::SWAPBACKED, now)?;
        self.mm.regions[region.0 as usize].ptes[page as usize] = Pte::present(pfn, write);
        self.lru_add(pfn, Origin::AnonFault, None);
        self.mm.stat.count(VmEvent::Pgfault, 1);
        Ok((stall + self.cfg.cpu.fault_ns, stall))
    }

    /// `do_swap_page()`: a fault on a swapped-out page.
    fn do_swap_page(
        &mut self,
        region: RegionId,
        page: u32,
        slot: u32,
        write: bool,
        now: Nanos,
    ) -> Result<(Nanos, Nanos), Stall> {
        self.mm.stat.count(VmEvent::Pgfault, 1);
        let entry = self.mm.swap.slot(slot).cache;
        if let Some(pfn) = entry.pfn() {
            // Swap-cache hit: a minor fault (`swap_cache_get_folio`).
            let readahead = self.mm.frames[pfn].flags.test_clear(PageFlags::READAHEAD);
            if readahead {
                self.mm.stat.count(VmEvent::SwapRaHit, 1);
            }
            self.ra.on_cache_hit(region.0 as usize, page, readahead);
            self.map_swapped_in(region, page, pfn, write);
            self.policy.on_swap_cache_hit(&mut self.mm, pfn);
            return Ok((self.cfg.cpu.fault_ns, 0));
        }
        let (pfn, stall) = self.alloc_page(Owner::anon(region), page, PageFlags::SWAPBACKED, now)?;
        self.mm.stat.count(VmEvent::Pgmajfault, 1);
        let t = now + stall;
        let (done, listed) = if self.swap_dev.sync {
            // SWP_SYNCHRONOUS_IO: no swap cache, no readahead; the slot is released at once.
            let listed = self.swap_in_page(pfn, slot, false);
            *self.mm.swap.cache_mut(slot) = CacheEntry::EMPTY;
            self.mm.swap_free(slot);
            (self.swap_dev.submit(t, 1, false), listed)
        } else {
            let listed = self.swap_in_page(pfn, slot, true);
            let (mut reads, drained) = self.swapin_readahead(region, page, slot);
            reads.push(slot);
            (self.submit_swap_reads(&mut reads, slot, t), listed || drained)
        };
        self.note_refault_stall(pfn, done - t);
        self.map_swapped_in(region, page, pfn, write);
        if listed {
            self.policy.on_swap_in_listed(&mut self.mm, pfn);
        }
        Ok((done - now + self.cfg.cpu.fault_ns, stall))
    }

    /// Reads swap slot `slot` into frame `pfn`: swap cache insertion (unless
    /// bypassed), refault check on the slot's shadow, LRU insertion, counters.
    /// True if the page is listed at once (its add filled the CPU's batch).
    fn swap_in_page(&mut self, pfn: Pfn, slot: u32, swap_cache: bool) -> bool {
        let shadow = self.mm.swap.slot(slot).cache.as_shadow();
        if swap_cache {
            let f = &mut self.mm.frames[pfn];
            f.flags.set(PageFlags::SWAPCACHE);
            if self.cfg.reclaim.swapin_workingset {
                // `__read_swap_cache_async()` v4.20..v5.9: every read into the swap cache is workingset.
                f.flags.set(PageFlags::WORKINGSET);
            }
            f.swap = slot;
            *self.mm.swap.cache_mut(slot) = CacheEntry::resident(pfn);
        }
        self.mm.stat.count(VmEvent::Pswpin, 1);
        self.mm.stat.count(VmEvent::Pgpgin, mm::PAGE_SIZE / 1024);
        self.lru_add(pfn, Origin::SwapIn, shadow)
    }

    /// `lru_cache_add()` on the running thread's CPU: the policy lists the page;
    /// true if the page would already carry `PG_lru` (its add filled the batch).
    fn lru_add(&mut self, pfn: Pfn, origin: Origin, shadow: Option<mm::Shadow>) -> bool {
        self.policy.add_page(&mut self.mm, pfn, origin, shadow);
        self.lru_batches.add()
    }

    /// `swapin_readahead()` around a fault on `page` of `region` (slot `target`):
    /// reads the window's other swapped-out pages into the swap cache with
    /// `PG_readahead`; returns their slots, and whether the window was wider
    /// than the target, in which case the CPU's add batch was drained.
    fn swapin_readahead(&mut self, region: RegionId, page: u32, target: u32) -> (Vec<u32>, bool) {
        let (candidates, wide): (Vec<u32>, bool) = match self.ra.mode {
            RaMode::Cluster => {
                let window = self.ra.cluster_window(target, self.mm.swap.nr_slots());
                let wide = window.end() > window.start();
                (window.collect(), wide)
            }
            RaMode::Vma => {
                let ptes = &self.mm.regions[region.0 as usize].ptes;
                let window = self.ra.vma_window(region.0 as usize, page, ptes.len() as u32);
                (
                    ptes[window.start as usize..window.end as usize].iter().filter_map(|pte| pte.swap_slot()).collect(),
                    window.len() > 1,
                )
            }
        };
        let mut read = Vec::with_capacity(candidates.len());
        for slot in candidates {
            if slot == target || !self.mm.swap.is_used(slot) || self.mm.swap.slot(slot).cache.pfn().is_some() {
                continue;
            }
            // Simplification S-RA1: readahead pages never enter reclaim; past the min watermark the window stops.
            if !watermark_ok(&self.mm, Watermark::Min) {
                break;
            }
            let s = *self.mm.swap.slot(slot);
            let Some(pfn) = self.mm.frames.alloc(
                Owner::anon(RegionId(s.region)),
                s.index,
                PageFlags::SWAPBACKED | PageFlags::READAHEAD,
            ) else {
                break;
            };
            self.mm.stat.count(VmEvent::PgallocNormal, 1);
            self.mm.stat.count(VmEvent::SwapRa, 1);
            self.swap_in_page(pfn, slot, true);
            read.push(slot);
        }
        if wide {
            // `lru_add_drain()`: push the window's pages onto the LRU now.
            self.lru_batches.drain();
        }
        (read, wide)
    }

    /// Submits swap reads as one request per run of contiguous slots, in slot
    /// order; returns when the run holding `target` completes.
    fn submit_swap_reads(&mut self, slots: &mut [u32], target: u32, at: Nanos) -> Nanos {
        slots.sort_unstable();
        let mut target_done = at;
        for run in slots.chunk_by(|a, b| b == &(a + 1)) {
            let done = self.swap_dev.submit_at(at, run[0] as u64, run.len() as u64, false);
            if run.contains(&target) {
                target_done = done;
            }
        }
        target_done
    }

    /// Maps a swapped-in page; frees its swap slot on a write fault or when swap
    /// is more than half full (`should_try_to_free_swap`).
    fn map_swapped_in(&mut self, region: RegionId, page: u32, pfn: Pfn, write: bool) {
        self.mm.regions[region.0 as usize].ptes[page as usize] = Pte::present(pfn, write);
        let flags = self.mm.frames[pfn].flags;
        if flags.has(PageFlags::SWAPCACHE) && !flags.has(PageFlags::WRITEBACK) && (write || self.mm.swap.is_half_full())
        {
            free_swap_cache(&mut self.mm, pfn);
        }
    }

    /// Reads page `index` of `file` into the page cache; returns the frame and
    /// (latency, stall). Runs the refault check on a shadow entry.
    fn read_file_page(
        &mut self,
        file: FileId,
        index: u32,
        origin: Origin,
        now: Nanos,
    ) -> Result<(Pfn, Nanos, Nanos), Stall> {
        let window = self.readahead_window(file, index);
        let (pfn, stall) = self.alloc_page(Owner::file(file), index, 0, now)?;
        let slot = &mut self.mm.files[file.0 as usize].cache[index as usize];
        let shadow = slot.as_shadow();
        *slot = CacheEntry::resident(pfn);
        self.lru_add(pfn, origin, shadow);
        self.mm.stat.count(VmEvent::Pgpgin, mm::PAGE_SIZE / 1024);
        self.read_ahead(file, index, window, now + stall);
        let pos = ((file.0 as u64) << 32) | index as u64;
        let done = self.fs_dev.submit_at(now + stall, pos, window as u64, false);
        self.note_refault_stall(pfn, done - now - stall);
        Ok((pfn, done - now, stall))
    }

    /// `filemap_read()`: a `read()` that missed the page cache.
    fn filemap_read(&mut self, file: FileId, index: u32, now: Nanos) -> Result<(Nanos, Nanos), Stall> {
        let (pfn, latency, stall) = self.read_file_page(file, index, Origin::FileRead, now)?;
        self.policy.mark_accessed(&mut self.mm, pfn);
        Ok((latency + self.cfg.cpu.access_ns, stall))
    }

    /// `filemap_fault()`: a fault on a file mapping.
    fn filemap_fault(
        &mut self,
        region: RegionId,
        page: u32,
        file: FileId,
        index: u32,
        write: bool,
        now: Nanos,
    ) -> Result<(Nanos, Nanos), Stall> {
        self.mm.stat.count(VmEvent::Pgfault, 1);
        let (pfn, latency, stall) = match self.mm.files[file.0 as usize].cache[index as usize].pfn() {
            Some(pfn) => (pfn, 0, 0),
            None => {
                let r = self.read_file_page(file, index, Origin::FileFault, now)?;
                self.mm.stat.count(VmEvent::Pgmajfault, 1);
                r
            }
        };
        self.mm.regions[region.0 as usize].ptes[page as usize] = Pte::present(pfn, write);
        // do_shared_fault(): a write fault dirties the page at once (S-WB3).
        let pause = if write { self.dirty_page(pfn, now + latency) } else { 0 };
        Ok((latency + self.cfg.cpu.fault_ns + pause, stall))
    }

    /// The page allocator's order-0 path: fast path at the low watermark, kswapd
    /// wakeup, min watermark, then direct reclaim. Returns (frame, stall).
    fn alloc_page(&mut self, owner: Owner, index: u32, flags: u16, now: Nanos) -> Result<(Pfn, Nanos), Stall> {
        // Simplification S-MC5: the group is charged before the frame is taken.
        let memcg_stall = self.memcg_charge(now)?;
        let (pfn, stall) = self.alloc_frame(owner, index, flags, now + memcg_stall)?;
        Ok((pfn, memcg_stall + stall))
    }

    /// The page allocator proper: watermarks, kswapd, direct reclaim.
    fn alloc_frame(&mut self, owner: Owner, index: u32, flags: u16, now: Nanos) -> Result<(Pfn, Nanos), Stall> {
        if !watermark_ok(&self.mm, Watermark::Low) {
            self.wake_kswapd(now);
        }
        let mut stall = 0;
        if !watermark_ok(&self.mm, Watermark::Min) {
            self.env.now_ns = now;
            self.env.fs_congested = self.fs_dev.congested(now);
            // Reclaim drains this CPU's add batch first (`lru_add_drain()` in shrink_*_list).
            self.lru_batches.drain();
            let env = self.env;
            let sc = self.timed_reclaim(now, |mm, policy, clock| direct::try_to_free_pages(mm, policy, env, clock));
            stall = self.work_cost(&sc.work);
            self.direct_reclaim_ns += stall;
            self.direct_work.add(&sc.work);
            stall += self.after_reclaim(&sc, now, stall);
            self.direct_hist.record(stall.max(1)).expect("auto-resizing histogram");
            if sc.nr_reclaimed > 0 {
                self.kswapd.failures = 0;
                self.stalled_attempts = 0;
            } else if self.mm.nr_free() == 0 || !watermark_ok(&self.mm, Watermark::Min) {
                return Err(self.throttle(now + stall));
            }
        }
        let pfn = match self.mm.frames.alloc(owner, index, flags) {
            Some(pfn) => pfn,
            None => return Err(self.throttle(now + stall)),
        };
        self.mm.stat.count(VmEvent::PgallocNormal, 1);
        Ok((pfn, stall))
    }

    /// S-EN3: an allocation that reclaim could not satisfy waits until something
    /// can change (the next event, at most one jiffy), then retries; after
    /// `OOM_STALL_LIMIT` such waits in a row without progress it fails.
    fn throttle(&mut self, at: Nanos) -> Stall {
        // Writes in flight will free pages: waiting for them is not a failure.
        if self.mm.dirty.nr_writeback == 0 {
            self.stalled_attempts += 1;
        }
        if self.stalled_attempts > OOM_STALL_LIMIT {
            return Stall::Oom;
        }
        Stall::Retry((at + JIFFY_NS).min(self.queue.next_time().max(at + 1)))
    }

    /// CPU time for reclaim work.
    fn work_cost(&self, w: &ReclaimWork) -> Nanos {
        reclaim_clock::reclaim_cost(&self.cfg.cpu, &self.swap_dev, w)
    }

    /// A read of a page that was part of the workingset is a memory stall
    /// (`psi_memstall_enter` in the swap and page-cache read paths).
    fn note_refault_stall(&mut self, pfn: Pfn, io_ns: Nanos) {
        if self.mm.frames[pfn].flags.has(PageFlags::WORKINGSET) {
            self.refault_stall_ns += io_ns;
        }
    }

    /// Runs `lru_gen` write `w` at `now` on behalf of a thread; returns its CPU time.
    fn lru_gen_write(&mut self, w: LruGenWrite, now: Nanos) -> Nanos {
        let text = self.lru_gen_texts[w.0 as usize].clone();
        let mut sc = reclaim::ScanControl::new(reclaim::Reclaimer::Direct, u64::MAX);
        sc.now_ns = now;
        self.env.now_ns = now;
        let res = self.policy.lru_gen_write(&mut self.mm, &text, &mut sc, self.env);
        let cost = self.work_cost(&sc.work);
        let cost = cost + self.after_reclaim(&sc, now, cost);
        self.lru_gen_log.push(format!(
            "{:.3}s {}: {}",
            now as f64 / 1e9,
            text.trim(),
            res.map_or_else(|e| format!("-{e}"), |()| "ok".into())
        ));
        cost
    }

    /// `wakeup_kswapd()`.
    fn wake_kswapd(&mut self, now: Nanos) {
        match self.kswapd_state {
            KswapdState::Running => {}
            KswapdState::Asleep | KswapdState::Napping => {
                if !self.kswapd.should_wake(&self.mm) {
                    return;
                }
                if self.kswapd_state == KswapdState::Napping {
                    self.mm.stat.count(VmEvent::KswapdLowWmarkHitQuickly, 1);
                }
                self.start_balance(now);
            }
        }
    }

    fn start_balance(&mut self, at: Nanos) {
        self.kswapd_state = KswapdState::Running;
        self.kswapd_gen += 1;
        self.kswapd.begin(&mut self.mm);
        self.queue.push(at, Event::Kswapd(self.kswapd_gen));
    }

    /// A kswapd timer fired: run a balance step, or end a nap.
    fn kswapd_event(&mut self, now: Nanos) {
        match self.kswapd_state {
            KswapdState::Running => {
                self.env.now_ns = now;
                self.env.fs_congested = self.fs_dev.congested(now);
                let step = self.kswapd.step(&mut self.mm, self.policy.as_mut(), self.env);
                let mut cost = self.work_cost(&step.sc.work).max(self.cfg.cpu.kswapd_pass_ns);
                self.kswapd_cpu_ns += cost;
                self.kswapd_work.add(&step.sc.work);
                self.psi.busy_stalled(now, now + cost);
                // The wait is not CPU time, but delays kswapd's next step like it.
                cost += self.after_reclaim(&step.sc, now, cost);
                if step.sc.nr_reclaimed > 0 {
                    self.stalled_attempts = 0;
                }
                if !step.finished {
                    self.queue.push(now + cost, Event::Kswapd(self.kswapd_gen));
                } else if self.kswapd.ready_to_sleep(&self.mm) {
                    self.kswapd_state = KswapdState::Napping;
                    self.queue.push(now + cost + KSWAPD_NAP_NS, Event::Kswapd(self.kswapd_gen));
                } else {
                    self.mm.stat.count(VmEvent::KswapdHighWmarkHitQuickly, 1);
                    self.start_balance(now + cost);
                }
            }
            KswapdState::Napping => {
                if self.kswapd.ready_to_sleep(&self.mm) {
                    self.kswapd_state = KswapdState::Asleep;
                } else {
                    self.mm.stat.count(VmEvent::KswapdHighWmarkHitQuickly, 1);
                    self.start_balance(now);
                }
            }
            KswapdState::Asleep => unreachable!("kswapd timer while asleep (generation {})", self.kswapd_gen),
        }
    }

    fn check_invariants(&self) {
        self.policy.check_invariants(&self.mm);
        let on_lists = self.policy.lru_sizes().total();
        let (free, pool) = (self.mm.nr_free(), self.mm.nr_zspages());
        assert_eq!(
            free + on_lists + pool,
            self.mm.frames.len() as u64,
            "page accounting: free {free} + on LRU {on_lists} + zram pool {pool} != total"
        );
        self.check_dirty_gauges();
    }
}
