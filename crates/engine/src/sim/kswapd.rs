//! kswapd's life cycle (mm/vmscan.c `kswapd()`, `wakeup_kswapd()`,
//! `kswapd_try_to_sleep()`): asleep, balancing in steps, napping before sleep.

use super::queue::Event;
use super::Machine;
use crate::sched::KSWAPD;
use crate::{Nanos, JIFFY_NS};
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
                self.start_balance(now);
            }
        }
    }

    /// kswapd starts balancing at `at`, once it has a CPU.
    pub(super) fn start_balance(&mut self, at: Nanos) {
        self.kswapd_state = KswapdState::Running;
        self.kswapd_gen += 1;
        self.kswapd.begin(&mut self.mm);
        if self.cpu_wake(KSWAPD, at) {
            self.queue.push(at, Event::Kswapd(self.kswapd_gen));
        }
    }

    /// A kswapd timer fired: run a balance step, or end a nap.
    pub(super) fn kswapd_event(&mut self, now: Nanos) {
        match self.kswapd_state {
            KswapdState::Running => {
                // Back from a throttling sleep: it runs once it has a CPU.
                if !self.cpu_wake(KSWAPD, now) {
                    return;
                }
                let env = self.pageout_env(now);
                let step = self.kswapd.step(&mut self.mm, self.policy.as_mut(), env);
                let cpu = self.work_cost(&step.sc.work).max(self.cfg.cpu.kswapd_pass_ns);
                self.kswapd_cpu_ns += cpu;
                self.kswapd_work.add(&step.sc.work);
                self.psi.busy_stalled(now, now + cpu);
                // The wait is not CPU time, but delays kswapd's next step like it.
                let wait = self.after_reclaim(&step.sc, now, cpu);
                let end = now + cpu + wait;
                if step.sc.nr_reclaimed > 0 {
                    self.stalled_attempts = 0;
                }
                let napping = step.finished && self.kswapd.ready_to_sleep(&self.mm);
                if wait > 0 || napping {
                    self.cpu_sleep(KSWAPD, now + cpu);
                }
                if !step.finished {
                    // A kswapd that lost its CPU is queued again when dispatched.
                    if !self.cpu_preempted(KSWAPD, end) {
                        self.queue.push(end, Event::Kswapd(self.kswapd_gen));
                    }
                } else if napping {
                    self.kswapd_state = KswapdState::Napping;
                    self.queue.push(end + KSWAPD_NAP_NS, Event::Kswapd(self.kswapd_gen));
                } else {
                    self.mm.stat.count(VmEvent::KswapdHighWmarkHitQuickly, 1);
                    self.start_balance(end);
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
}
