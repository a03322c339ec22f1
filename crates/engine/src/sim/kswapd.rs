//! kswapd's life cycle (mm/vmscan.c `kswapd()`, `wakeup_kswapd()`,
//! `kswapd_try_to_sleep()`): asleep, balancing in steps, napping before sleep.

use super::queue::Event;
use super::Machine;
use crate::{Nanos, JIFFY_NS};
use mm::tracepoint::{Task, Tracepoint};
use mm::VmEvent;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum KswapdState {
    Asleep,
    Running,
    Napping,
}

/// KERNEL: kswapd naps HZ/10 before sleeping (`kswapd_try_to_sleep`).
pub(super) const KSWAPD_NAP_NS: Nanos = JIFFY_NS * crate::HZ / 10;

impl Machine {
    /// `wakeup_kswapd()`.
    pub(super) fn wake_kswapd(&mut self, now: Nanos) {
        match self.kswapd_state {
            KswapdState::Running => {}
            KswapdState::Asleep | KswapdState::Napping => {
                if !self.kswapd.should_wake(&self.mm) {
                    return;
                }
                if self.kswapd_state == KswapdState::Napping {
                    self.mm.stat.count(VmEvent::KswapdLowWmarkHitQuickly, 1);
                }
                self.mm.trace(|| Tracepoint::WakeupKswapd);
                self.start_balance(now);
            }
        }
    }

    pub(super) fn start_balance(&mut self, at: Nanos) {
        self.kswapd_state = KswapdState::Running;
        self.kswapd_gen += 1;
        self.kswapd.begin(&mut self.mm);
        self.mm.trace_as(Task::Kswapd, at, || Tracepoint::KswapdWake);
        self.queue.push(at, Event::Kswapd(self.kswapd_gen));
    }

    /// A kswapd timer fired: run a balance step, or end a nap.
    pub(super) fn kswapd_event(&mut self, now: Nanos) {
        self.mm.trace_context(Task::Kswapd, now);
        match self.kswapd_state {
            KswapdState::Running => {
                let env = self.pageout_env(now);
                let step = self.kswapd.step(&mut self.mm, self.policy.as_mut(), env);
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
                    self.mm.trace(|| Tracepoint::KswapdSleep);
                } else {
                    self.mm.stat.count(VmEvent::KswapdHighWmarkHitQuickly, 1);
                    self.start_balance(now);
                }
            }
            KswapdState::Asleep => unreachable!("kswapd timer while asleep (generation {})", self.kswapd_gen),
        }
    }
}
