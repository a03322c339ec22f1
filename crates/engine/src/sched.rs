//! CPU scheduling of the simulated actors (kernel/sched/fair.c): with
//! `cpus=N`, the workload threads and kswapd share N CPUs, so kswapd reclaims
//! only while it holds a CPU, and a thread waits for one when all are taken.
//!
//! The model is the fair class with equal weights: each actor's `vruntime` is
//! the CPU time it used, a woken actor is placed near the queue's minimum, the
//! runnable actor with the smallest `vruntime` runs next, and a running actor
//! gives up its CPU at a preemption point once its slice is used up. Two
//! kernel generations differ in two choices ([`SchedKnobs::eevdf`]):
//! - CFS (before v6.6): slice `sched_latency / nr_running` (at least
//!   `min_granularity`); a sleeper is credited half a latency on wakeup and
//!   preempts the running task when it is `wakeup_granularity` behind it.
//! - EEVDF (v6.6+): slice `base_slice`; a woken task is placed at the average
//!   vruntime with zero lag, and preempts the running task when the running
//!   task is no longer eligible or has used up its slice since it was picked or
//!   its slice was last renewed (the wake-up's `update_curr` renews it, and the
//!   woken task's equal virtual deadline then wins the pick); otherwise the
//!   running task keeps the CPU until its deadline is seen at the next tick.
//!
//! Both decide slice expiry at the scheduler tick, so a slice ends at the first
//! tick after it is used up.
//!
//! Simplifications (docs/simplifications.md):
//! - S-SC1: one run queue for all CPUs (no per-CPU queues, no load balancing,
//!   no migration cost); a woken actor takes the lowest idle CPU.
//! - S-SC2: EEVDF is modelled by its slice, its placement and its wake-up
//!   preemption; a woken actor has zero lag (v6.12's `DELAY_DEQUEUE` spends a
//!   sleeper's negative lag before it leaves the queue; positive lag is dropped),
//!   and the pick is the smallest `vruntime`, not the earliest eligible deadline.
//! - S-SC3: the flusher and device completions use no CPU time.
//! - S-SC4: an actor is preempted only between its steps (a thread between two
//!   accesses, kswapd between two balance steps), as with voluntary preemption.

use crate::{Nanos, JIFFY_NS};
use knobs::{History, Knob, Version};
use std::collections::BTreeSet;

/// The scheduler's knobs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SchedKnobs {
    /// CPUs shared by the actors; 0: every actor has a CPU of its own (S-EN1).
    pub cpus: u64,
    /// EEVDF (v6.6+) rather than CFS.
    pub eevdf: bool,
}

/// The scheduler's settings (`cpus`, `sched.eevdf`).
pub const KNOBS: &[Knob<SchedKnobs>] = &[
    knobs::u64_knob!(
        "cpus",
        cpus,
        0,
        4096,
        History::Model,
        "CPUs the workload threads and kswapd share (0 = each has a CPU of its own: no run-queue contention)"
    ),
    knobs::bool_knob!(
        "sched.eevdf",
        eevdf,
        // KERNEL: 147f3efaa241 "sched/fair: Implement an EEVDF-like scheduling policy" (v6.6).
        History::Behaviour { since: Some(Version::new(6, 6)), until: None },
        "v6.6+: the EEVDF scheduler (0.75 ms base slice, a woken task waits for the running task's slice); off: CFS (6 ms latency shared by the runnable tasks, sleepers preempt); only with cpus > 0"
    ),
];

/// An actor: node `n`'s kswapd is `2n`, workload thread `t` is `2t + 1`
/// (so that neither count needs to be known in advance).
pub type Actor = u32;

/// Who an actor is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ActorKind {
    /// The kswapd of this node.
    Kswapd(u8),
    /// This workload thread.
    Thread(usize),
}

/// The actor of node `node`'s kswapd.
pub fn kswapd_actor(node: u8) -> Actor {
    2 * node as Actor
}

/// The actor of workload thread `tid`.
pub fn thread_actor(tid: usize) -> Actor {
    2 * tid as Actor + 1
}

/// Who actor `a` is.
pub fn actor_kind(a: Actor) -> ActorKind {
    if a.is_multiple_of(2) {
        ActorKind::Kswapd((a / 2) as u8)
    } else {
        ActorKind::Thread((a / 2) as usize)
    }
}

/// KERNEL: defaults of kernel/sched/fair.c, before scaling by the CPU count.
const SCHED_LATENCY_NS: Nanos = 6_000_000;
const MIN_GRANULARITY_NS: Nanos = 750_000;
const WAKEUP_GRANULARITY_NS: Nanos = 1_000_000;
const BASE_SLICE_NS: Nanos = 750_000;

/// The tunables for `cpus` CPUs (`SCHED_TUNABLESCALING_LOG`: times
/// 1 + log2(CPUs), CPUs capped at 8).
#[derive(Clone, Copy, Debug)]
struct Tunables {
    latency: Nanos,
    min_granularity: Nanos,
    wakeup_granularity: Nanos,
    base_slice: Nanos,
}

impl Tunables {
    fn for_cpus(cpus: u64) -> Tunables {
        let factor = 1 + cpus.clamp(1, 8).ilog2() as u64;
        Tunables {
            latency: SCHED_LATENCY_NS * factor,
            min_granularity: MIN_GRANULARITY_NS * factor,
            wakeup_granularity: WAKEUP_GRANULARITY_NS * factor,
            base_slice: BASE_SLICE_NS * factor,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Sleeping,
    Runnable,
    Running { cpu: u32, since: Nanos },
}

#[derive(Clone, Copy, Debug)]
struct Entity {
    vruntime: Nanos,
    state: State,
    /// Time it became runnable (for the wait it is charged).
    queued_at: Nanos,
}

#[derive(Clone, Copy, Debug, Default)]
struct Cpu {
    curr: Option<Actor>,
    /// When the running actor's slice began: its pick, or the tick that renewed it.
    slice_start: Nanos,
    slice_end: Nanos,
    need_resched: bool,
}

/// What a woken actor does now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wake {
    /// It got a CPU and runs from the wake-up time.
    Run,
    /// Every CPU is taken: it waits until it is dispatched.
    Wait,
}

/// The CPUs and the actors' scheduling state.
#[derive(Clone, Debug)]
pub struct Scheduler {
    tunables: Tunables,
    eevdf: bool,
    cpus: Vec<Cpu>,
    entities: Vec<Entity>,
    /// Runnable actors by (vruntime, actor).
    queue: BTreeSet<(Nanos, Actor)>,
    min_vruntime: Nanos,
    /// Time actors spent runnable without a CPU (schedstat's run delay), per actor.
    run_delay: Vec<Nanos>,
}

impl Scheduler {
    /// The scheduler of `knobs`, or `None` when every actor has its own CPU.
    pub fn new(knobs: &SchedKnobs) -> Option<Scheduler> {
        (knobs.cpus > 0).then(|| Scheduler {
            tunables: Tunables::for_cpus(knobs.cpus),
            eevdf: knobs.eevdf,
            cpus: vec![Cpu::default(); knobs.cpus as usize],
            entities: Vec::new(),
            queue: BTreeSet::new(),
            min_vruntime: 0,
            run_delay: Vec::new(),
        })
    }

    fn entity(&mut self, a: Actor) -> &mut Entity {
        let i = a as usize;
        if self.entities.len() <= i {
            let e = Entity { vruntime: self.min_vruntime, state: State::Sleeping, queued_at: 0 };
            self.entities.resize(i + 1, e);
            self.run_delay.resize(i + 1, 0);
        }
        &mut self.entities[i]
    }

    /// The CPU `a` runs on, if it holds one.
    pub fn cpu_of(&self, a: Actor) -> Option<usize> {
        match self.entities.get(a as usize)?.state {
            State::Running { cpu, .. } => Some(cpu as usize),
            _ => None,
        }
    }

    /// When the slice of running actor `a` ends (`Nanos::MAX` if it does not run).
    pub fn slice_end(&self, a: Actor) -> Nanos {
        self.cpu_of(a).map_or(Nanos::MAX, |c| self.cpus[c].slice_end)
    }

    /// Whether running actor `a` must reach a preemption point now.
    pub fn need_resched(&self, a: Actor) -> bool {
        self.cpu_of(a).is_some_and(|c| self.cpus[c].need_resched)
    }

    /// Time `a` spent runnable but waiting for a CPU.
    pub fn run_delay(&self, a: Actor) -> Nanos {
        self.run_delay.get(a as usize).copied().unwrap_or(0)
    }

    /// `a`'s vruntime at `t` (a running actor's includes its current run).
    fn vruntime_at(&self, a: Actor, t: Nanos) -> Nanos {
        let e = &self.entities[a as usize];
        match e.state {
            State::Running { since, .. } => e.vruntime + t.saturating_sub(since),
            _ => e.vruntime,
        }
    }

    /// Advances `min_vruntime` (never backwards) to the smallest vruntime of
    /// the running and queued actors at `t`.
    fn update_min_vruntime(&mut self, t: Nanos) {
        let running = self.cpus.iter().filter_map(|c| c.curr).map(|a| self.vruntime_at(a, t));
        let queued = self.queue.first().map(|&(v, _)| v);
        if let Some(least) = running.chain(queued).min() {
            self.min_vruntime = self.min_vruntime.max(least);
        }
    }

    /// The slice of an actor picked at `t`, ending at the first tick after it is used up.
    fn slice_end_from(&self, t: Nanos) -> Nanos {
        let slice = if self.eevdf {
            self.tunables.base_slice
        } else {
            let busy = self.cpus.iter().filter(|c| c.curr.is_some()).count() + self.queue.len();
            let per_cpu = busy.div_ceil(self.cpus.len()).max(1) as Nanos;
            (self.tunables.latency / per_cpu).max(self.tunables.min_granularity)
        };
        (t + slice).div_ceil(JIFFY_NS) * JIFFY_NS
    }

    /// Puts `a` on CPU `cpu` from `t`.
    fn run_on(&mut self, a: Actor, cpu: usize, t: Nanos) {
        let e = self.entity(a);
        if e.state == State::Runnable {
            let waited = t.saturating_sub(e.queued_at);
            self.run_delay[a as usize] += waited;
        }
        self.entities[a as usize].state = State::Running { cpu: cpu as u32, since: t };
        self.cpus[cpu] = Cpu { curr: Some(a), slice_start: t, slice_end: 0, need_resched: false };
        self.cpus[cpu].slice_end = self.slice_end_from(t);
    }

    fn enqueue(&mut self, a: Actor, t: Nanos) {
        let e = self.entity(a);
        e.state = State::Runnable;
        e.queued_at = t;
        let v = e.vruntime;
        self.queue.insert((v, a));
    }

    /// Stops running actor `a` at `t`: charges its run, frees its CPU.
    fn put_prev(&mut self, a: Actor, t: Nanos) -> usize {
        let cpu = self.cpu_of(a).expect("put_prev of an actor without a CPU");
        self.entities[a as usize].vruntime = self.vruntime_at(a, t);
        self.entities[a as usize].state = State::Sleeping;
        self.cpus[cpu].curr = None;
        cpu
    }

    /// Gives free CPU `cpu` to the first queued actor at `t`, if any.
    fn pick_next(&mut self, cpu: usize, t: Nanos) -> Option<Actor> {
        let (_, next) = self.queue.pop_first()?;
        self.run_on(next, cpu, t);
        Some(next)
    }

    /// Sleeping actor `a` becomes runnable at `t`, woken by `waker` (a running
    /// actor) or by a timer (`None`). It runs at once on an idle CPU, or waits;
    /// a waiting actor may mark the waker's CPU for preemption.
    pub fn wake(&mut self, a: Actor, t: Nanos, waker: Option<Actor>) -> Wake {
        if self.entity(a).state != State::Sleeping {
            return if self.cpu_of(a).is_some() { Wake::Run } else { Wake::Wait };
        }
        self.update_min_vruntime(t);
        let placed = if self.eevdf {
            // KERNEL: place_entity() with zero lag puts it at avg_vruntime() (S-SC2).
            self.avg_vruntime(t)
        } else {
            // CFS: a sleeper is credited half a latency below min_vruntime.
            let credit = self.tunables.latency / 2;
            self.entities[a as usize].vruntime.max(self.min_vruntime.saturating_sub(credit))
        };
        self.entities[a as usize].vruntime = placed;
        if let Some(cpu) = self.cpus.iter().position(|c| c.curr.is_none()) {
            self.run_on(a, cpu, t);
            return Wake::Run;
        }
        self.enqueue(a, t);
        if self.eevdf {
            // The woken task's run queue: the waker's CPU; woken by a timer or a
            // device, the CPU of the running actor furthest ahead (S-SC1: one queue).
            let cpu = waker.and_then(|w| self.cpu_of(w)).or_else(|| self.furthest_ahead_cpu(t));
            if let Some(cpu) = cpu {
                if self.eevdf_wakeup_preempts(cpu, placed, t) {
                    self.cpus[cpu].need_resched = true;
                }
            }
        } else if let Some((w, cpu)) = waker.and_then(|w| Some((w, self.cpu_of(w)?))) {
            if self.vruntime_at(w, t).saturating_sub(placed) > self.tunables.wakeup_granularity {
                self.cpus[cpu].need_resched = true;
            }
        }
        Wake::Wait
    }

    /// The average vruntime at `t` of the running and queued actors (equal
    /// weights), or `min_vruntime` when there are none.
    fn avg_vruntime(&self, t: Nanos) -> Nanos {
        let running = self.cpus.iter().filter_map(|c| c.curr).map(|a| self.vruntime_at(a, t));
        let (sum, n) = running
            .chain(self.queue.iter().map(|&(v, _)| v))
            .fold((0u128, 0u128), |(sum, n), v| (sum + v as u128, n + 1));
        if n == 0 {
            return self.min_vruntime;
        }
        (sum / n) as Nanos
    }

    /// EEVDF on `cpu` at `t`: when the tick that ends the running slice has
    /// passed, the running actor's slice was renewed at each tick since; the
    /// last such tick becomes its slice start.
    fn renew_at_ticks(&mut self, cpu: usize, t: Nanos) {
        if t >= self.cpus[cpu].slice_end {
            let start = t / JIFFY_NS * JIFFY_NS;
            self.cpus[cpu].slice_start = start;
            self.cpus[cpu].slice_end = self.slice_end_from(start);
        }
    }

    /// The busy CPU whose running actor has the largest vruntime at `t`.
    fn furthest_ahead_cpu(&self, t: Nanos) -> Option<usize> {
        (0..self.cpus.len()).filter(|&c| self.cpus[c].curr.is_some()).max_by_key(|&c| {
            let a = self.cpus[c].curr.expect("busy");
            (self.vruntime_at(a, t), std::cmp::Reverse(c))
        })
    }

    /// EEVDF's wake-up check on `cpu` at `t` for an actor just queued at vruntime
    /// `placed` (KERNEL: check_preempt_wakeup_fair() and pick_eevdf() of v6.12).
    /// While the CPU ran alone, each tick past the slice renewed it; the wake-up's
    /// `update_curr` renews it again when the running actor has used up a slice
    /// since, which gives it a virtual deadline equal to the woken actor's, and
    /// the woken one wins the tie. A running actor that is not eligible (ahead of
    /// the average) loses at once. Otherwise its earlier deadline keeps the CPU.
    fn eevdf_wakeup_preempts(&mut self, cpu: usize, placed: Nanos, t: Nanos) -> bool {
        let curr = self.cpus[cpu].curr.expect("a busy CPU");
        self.renew_at_ticks(cpu, t);
        let used = t - self.cpus[cpu].slice_start;
        let eligible = self.vruntime_at(curr, t) <= self.avg_vruntime(t).max(placed);
        !eligible || used >= self.tunables.base_slice
    }

    /// Running actor `a` goes to sleep at `t`; returns the actor dispatched on
    /// its CPU from `t`, if one was waiting.
    pub fn sleep(&mut self, a: Actor, t: Nanos) -> Option<Actor> {
        // KERNEL: the dequeue's update_curr() advances min_vruntime with the run.
        self.update_min_vruntime(t);
        let cpu = self.put_prev(a, t);
        self.pick_next(cpu, t)
    }

    /// Running actor `a` reached a preemption point at `t`. If its slice is
    /// used up or a preemption is pending, the queue's first actor (possibly
    /// `a` itself) gets the CPU. Returns the actor dispatched in `a`'s place,
    /// or `None` if `a` keeps running.
    pub fn preempt_point(&mut self, a: Actor, t: Nanos) -> Option<Actor> {
        let cpu = self.cpu_of(a).expect("preemption point of an actor without a CPU");
        let c = self.cpus[cpu];
        if t < c.slice_end && !c.need_resched {
            return None;
        }
        if self.queue.is_empty() {
            // Alone under EEVDF, the last tick past the slice renewed it; CFS renews from now.
            if self.eevdf {
                self.renew_at_ticks(cpu, t);
            } else {
                self.cpus[cpu].slice_start = t;
                self.cpus[cpu].slice_end = self.slice_end_from(t);
            }
            self.cpus[cpu].need_resched = false;
            return None;
        }
        self.put_prev(a, t);
        self.enqueue(a, t);
        self.update_min_vruntime(t);
        let next = self.pick_next(cpu, t).expect("the queue holds at least the preempted actor");
        (next != a).then_some(next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    fn one_cpu(eevdf: bool) -> Scheduler {
        Scheduler::new(&SchedKnobs { cpus: 1, eevdf }).unwrap()
    }

    #[test]
    fn no_cpus_means_no_scheduler() {
        assert!(Scheduler::new(&SchedKnobs::default()).is_none());
    }

    #[test]
    fn tunables_scale_with_log2_of_cpus_capped_at_eight() {
        // factor 1 + ilog2(n): 1 CPU x1, 2 x2, 4 x3, 8 and more x4.
        assert_eq!(Tunables::for_cpus(1).latency, 6 * MS);
        assert_eq!(Tunables::for_cpus(2).latency, 12 * MS);
        assert_eq!(Tunables::for_cpus(4).min_granularity, 2_250_000);
        assert_eq!(Tunables::for_cpus(64).wakeup_granularity, 4 * MS);
    }

    #[test]
    fn cfs_sleeper_preempts_the_waker_and_shares_the_cpu_by_slices() {
        let mut s = one_cpu(false);
        let t = thread_actor(0);
        assert_eq!(s.wake(t, 0, None), Wake::Run);
        // Alone: the slice is the whole latency (6 ms), ending on a tick (8 ms at HZ=250).
        assert_eq!(s.slice_end(t), 8 * MS);
        // At 10 ms (slice renewed at 8 ms: 8 + 6 -> tick 16 ms) the thread wakes kswapd.
        assert_eq!(s.preempt_point(t, 8 * MS), None);
        assert_eq!(s.slice_end(t), 16 * MS);
        // kswapd (vruntime 0, placed at min_vruntime 10 ms - 3 ms credit = 7 ms) is
        // 3 ms behind the thread: more than the 1 ms wakeup granularity.
        assert_eq!(s.wake(kswapd_actor(0), 10 * MS, Some(t)), Wake::Wait);
        assert!(s.need_resched(t));
        // The thread's next preemption point hands the CPU to kswapd.
        assert_eq!(s.preempt_point(t, 10 * MS + 1000), Some(kswapd_actor(0)));
        assert_eq!(s.cpu_of(t), None);
        // Two runnable: slice 3 ms from 10.001 ms, ending at the 16 ms tick.
        assert_eq!(s.slice_end(kswapd_actor(0)), 16 * MS);
        assert_eq!(s.run_delay(kswapd_actor(0)), 1000);
        // kswapd's slice ends: the thread (vruntime 10.001 ms) is behind kswapd (7 + 5.999 ms).
        assert_eq!(s.preempt_point(kswapd_actor(0), 16 * MS), Some(t));
        assert_eq!(s.run_delay(t), 16 * MS - (10 * MS + 1000));
        // The thread sleeps: kswapd gets the CPU back; then kswapd sleeps, leaving it idle.
        assert_eq!(s.sleep(t, 17 * MS), Some(kswapd_actor(0)));
        assert_eq!(s.sleep(kswapd_actor(0), 18 * MS), None);
    }

    #[test]
    fn eevdf_woken_task_waits_for_the_running_slice() {
        let mut s = one_cpu(true);
        let t = thread_actor(0);
        assert_eq!(s.wake(t, 0, None), Wake::Run);
        // Base slice 0.75 ms: the slice ends at the first tick, 4 ms.
        assert_eq!(s.slice_end(t), 4 * MS);
        // At 0.5 ms the thread has a quarter of a millisecond of its slice left:
        // its deadline (0.75 ms) is before kswapd's (0.5 + 0.75 ms).
        assert_eq!(s.wake(kswapd_actor(0), MS / 2, Some(t)), Wake::Wait);
        assert!(!s.need_resched(t));
        assert_eq!(s.preempt_point(t, 2 * MS), None);
        // At the tick kswapd (vruntime placed at the thread's 0.5 ms) runs.
        assert_eq!(s.preempt_point(t, 4 * MS), Some(kswapd_actor(0)));
    }

    #[test]
    fn eevdf_woken_task_preempts_a_task_past_its_slice() {
        let mut s = one_cpu(true);
        let t = thread_actor(0);
        assert_eq!(s.wake(t, 0, None), Wake::Run);
        // At 1 ms the thread's 0.75 ms slice is used up: the wake-up renews its
        // deadline to 1.75 ms, kswapd's is 1 + 0.75 ms, and the tie goes to kswapd.
        assert_eq!(s.wake(kswapd_actor(0), MS, Some(t)), Wake::Wait);
        assert!(s.need_resched(t));
        assert_eq!(s.preempt_point(t, MS + 1000), Some(kswapd_actor(0)));
    }

    #[test]
    fn eevdf_slice_renewed_at_each_tick_while_alone() {
        let t = thread_actor(0);
        // A preemption point at 9 ms records the renewal at the 8 ms tick; at
        // 9.5 ms the thread has used 1.5 ms of that slice: kswapd preempts.
        let mut s = one_cpu(true);
        assert_eq!(s.wake(t, 0, None), Wake::Run);
        assert_eq!(s.preempt_point(t, 9 * MS), None);
        assert_eq!(s.slice_end(t), 12 * MS);
        assert_eq!(s.wake(kswapd_actor(0), 9 * MS + MS / 2, Some(t)), Wake::Wait);
        assert!(s.need_resched(t));
        // No preemption point since the start: the wake-up itself sees the
        // renewal at the 12 ms tick, and at 12.5 ms half a millisecond is used.
        let mut s = one_cpu(true);
        assert_eq!(s.wake(t, 0, None), Wake::Run);
        assert_eq!(s.wake(kswapd_actor(0), 12 * MS + MS / 2, Some(t)), Wake::Wait);
        assert!(!s.need_resched(t));
    }

    #[test]
    fn eevdf_places_a_woken_actor_at_the_average_with_zero_lag() {
        let (a, b, k) = (thread_actor(0), thread_actor(1), kswapd_actor(0));
        for eevdf in [true, false] {
            let mut s = one_cpu(eevdf);
            assert_eq!(s.wake(k, 0, None), Wake::Run);
            // kswapd runs 20 ms, then sleeps; two threads run and wait.
            assert_eq!(s.sleep(k, 20 * MS), None);
            assert_eq!(s.wake(a, 20 * MS, None), Wake::Run);
            assert_eq!(s.wake(b, 20 * MS, None), Wake::Wait);
            assert_eq!(s.wake(k, 22 * MS, Some(a)), Wake::Wait);
            // kswapd's sleep left min_vruntime at 20 ms, where a and b start.
            // EEVDF: the average of a (22 ms) and b (20 ms); CFS: its own 20 ms.
            let placed = s.entities[k as usize].vruntime;
            if eevdf {
                assert_eq!(placed, (22 * MS + 20 * MS) / 2);
            } else {
                assert_eq!(placed, 20 * MS, "CFS keeps its own vruntime, above min_vruntime - 3 ms");
            }
        }
    }

    #[test]
    fn idle_cpus_run_woken_actors_at_once() {
        let mut s = Scheduler::new(&SchedKnobs { cpus: 2, eevdf: false }).unwrap();
        assert_eq!(s.wake(thread_actor(0), 0, None), Wake::Run);
        assert_eq!(s.wake(kswapd_actor(0), 5, Some(thread_actor(0))), Wake::Run);
        assert_eq!((s.cpu_of(thread_actor(0)), s.cpu_of(kswapd_actor(0))), (Some(0), Some(1)));
        assert_eq!(s.wake(thread_actor(1), 6, None), Wake::Wait);
        // kswapd sleeps: the waiting thread takes its CPU at that time.
        assert_eq!(s.sleep(kswapd_actor(0), 100), Some(thread_actor(1)));
        assert_eq!(s.cpu_of(thread_actor(1)), Some(1));
        assert_eq!(s.run_delay(thread_actor(1)), 94);
    }

    #[test]
    fn waking_a_runnable_or_running_actor_changes_nothing() {
        let mut s = one_cpu(false);
        assert_eq!(s.wake(thread_actor(0), 0, None), Wake::Run);
        assert_eq!(s.wake(thread_actor(0), 5, None), Wake::Run);
        assert_eq!(s.wake(thread_actor(1), 5, None), Wake::Wait);
        assert_eq!(s.wake(thread_actor(1), 6, None), Wake::Wait);
        assert_eq!(s.queue.len(), 1);
    }
}
