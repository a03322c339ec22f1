//! The actors on the CPUs (`cpus=N`): taking a CPU, sleeping, preemption
//! points and dispatching the next actor, over [`crate::sched::Scheduler`].
//! Without a CPU count every actor runs at once and each call here is a no-op.

use super::queue::Event;
use super::Machine;
use crate::sched::{actor_kind, Actor, ActorKind, Wake};
use crate::Nanos;

impl Machine {
    /// Actor `a` wants a CPU at `t` (woken by the thread running now, if any).
    /// True if it runs from `t`; false if it waits to be dispatched.
    pub(super) fn cpu_wake(&mut self, a: Actor, t: Nanos) -> bool {
        let waker = self.waker;
        match &mut self.sched {
            None => true,
            Some(s) => s.wake(a, t, waker.filter(|&w| w != a)) == Wake::Run,
        }
    }

    /// Thread actor `a` starts or resumes at `t`: true if it holds a CPU, and
    /// then its slice end bounds its horizon.
    pub(super) fn cpu_enter(&mut self, a: Actor, t: Nanos) -> bool {
        if !self.cpu_wake(a, t) {
            return false;
        }
        self.cpu_slice_end = self.sched.as_ref().map_or(Nanos::MAX, |s| s.slice_end(a));
        true
    }

    /// The CPU of running actor `a` (for per-CPU state); `fallback` without CPU counts.
    pub(super) fn cpu_index(&self, a: Actor, fallback: usize) -> usize {
        self.sched.as_ref().and_then(|s| s.cpu_of(a)).unwrap_or(fallback)
    }

    /// Running actor `a` goes to sleep at `t` (waits for I/O, a timer, or ends).
    pub(super) fn cpu_sleep(&mut self, a: Actor, t: Nanos) {
        if let Some(next) = self.sched.as_mut().and_then(|s| s.sleep(a, t)) {
            self.dispatch(next, t);
        }
    }

    /// Whether running actor `a` has a preemption pending.
    pub(super) fn cpu_need_resched(&self, a: Actor) -> bool {
        self.sched.as_ref().is_some_and(|s| s.need_resched(a))
    }

    /// Running actor `a` is at a preemption point at `t`. True if it lost its
    /// CPU (it waits to be dispatched again); false if it keeps running.
    pub(super) fn cpu_preempted(&mut self, a: Actor, t: Nanos) -> bool {
        let Some(s) = &mut self.sched else { return false };
        if s.cpu_of(a).is_none() {
            return false;
        }
        match s.preempt_point(a, t) {
            Some(next) => {
                self.dispatch(next, t);
                true
            }
            None => false,
        }
    }

    /// Actor `a` was given a CPU at `t`: its next event runs it then.
    fn dispatch(&mut self, a: Actor, t: Nanos) {
        let ev = match actor_kind(a) {
            ActorKind::Kswapd(node) => Event::Kswapd(self.kswapds[node as usize].gen),
            ActorKind::Thread(tid) => Event::Thread(tid as u32),
        };
        self.queue.push(t, ev);
    }
}
