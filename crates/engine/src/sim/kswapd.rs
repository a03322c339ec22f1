//! kswapd's life cycle (mm/vmscan.c `kswapd()`, `wakeup_kswapd()`,
//! `kswapd_try_to_sleep()`), one kswapd per node: asleep, balancing in steps,
//! napping before sleep.

use super::queue::Event;
use super::{Machine, SimError};
use crate::sched::kswapd_actor;
use crate::{Nanos, JIFFY_NS};
use mm::tracepoint::{Task, Tracepoint};
use mm::{VmEvent, ZoneId};
use reclaim::kswapd::Kswapd;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum KswapdState {
    Asleep,
    Running,
    Napping,
}

/// One node's kswapd thread: its reclaim state, where it is in its life
/// cycle, and the generation its pending timer carries.
#[derive(Clone, Debug)]
pub(super) struct NodeKswapd {
    pub(super) k: Kswapd,
    pub(super) state: KswapdState,
    /// The generation of its pending timer (and of its dispatch onto a CPU).
    pub(super) gen: u64,
    /// Time of its first wakeup (for "which node's kswapd ran first").
    pub(super) first_wake_ns: Option<Nanos>,
    /// CPU time of its balance steps: the kernel thread's system time.
    pub(super) cpu_ns: Nanos,
}

impl NodeKswapd {
    pub(super) fn new(k: Kswapd) -> NodeKswapd {
        NodeKswapd { k, state: KswapdState::Asleep, gen: 0, first_wake_ns: None, cpu_ns: 0 }
    }
}

/// KERNEL: kswapd naps HZ/10 before sleeping (`kswapd_try_to_sleep`).
pub(super) const KSWAPD_NAP_NS: Nanos = JIFFY_NS * crate::HZ / 10;

impl Machine {
    /// `wakeup_kswapd()` of `node` for an allocation whose highest zone is `classzone`.
    pub(super) fn wake_kswapd(&mut self, node: u8, classzone: ZoneId, now: Nanos) {
        let n = &mut self.kswapds[node as usize];
        if !n.k.wake_request(&self.mm, classzone) || n.state == KswapdState::Running {
            return;
        }
        if n.state == KswapdState::Napping {
            self.mm.stat.count(VmEvent::KswapdLowWmarkHitQuickly, 1);
        }
        self.mm.trace(|| Tracepoint::WakeupKswapd { nid: node, zid: classzone });
        self.start_balance(node, now);
    }

    /// `node`'s kswapd starts balancing at `at`, once it has a CPU.
    pub(super) fn start_balance(&mut self, node: u8, at: Nanos) {
        self.kswapd_gen += 1;
        let n = &mut self.kswapds[node as usize];
        n.state = KswapdState::Running;
        n.gen = self.kswapd_gen;
        n.first_wake_ns.get_or_insert(at);
        n.k.begin(&mut self.mm);
        // balance_pgdat()'s set_reclaim_active() (v5.14+): the node's lists shrink while it runs.
        self.mm
            .frames
            .pcp
            .set_reclaim_active(self.mm.zones.iter().enumerate().filter(|z| z.1.node == node).map(|z| z.0), true);
        self.mm.trace_as(Task::Kswapd(node), at, || Tracepoint::KswapdWake { nid: node });
        if self.cpu_wake(kswapd_actor(node), at) {
            self.queue.push(at, Event::Kswapd(self.kswapd_gen));
        }
    }

    /// A kswapd timer of generation `gen` fired: run a balance step of its
    /// node, or end a nap; a stale timer does nothing. Fails if the step's
    /// aging asked for the OOM killer and it killed nothing.
    pub(super) fn kswapd_event(&mut self, gen: u64, now: Nanos) -> Result<(), SimError> {
        let Some(node) = self.kswapds.iter().position(|n| n.gen == gen && n.state != KswapdState::Asleep) else {
            return Ok(());
        };
        let node8 = node as u8;
        let actor = kswapd_actor(node8);
        self.mm.trace_context(Task::Kswapd(node8), now);
        match self.kswapds[node].state {
            KswapdState::Running => {
                // Back from a throttling sleep: it runs once it has a CPU.
                if !self.cpu_wake(actor, now) {
                    return Ok(());
                }
                let env = self.pageout_env(now);
                // S-EN1 without `cpus=N`: kswapd's own CPU comes after the threads'.
                self.mm.pcp_switch(self.cpu_index(actor, self.numa.nr_tasks() + node));
                let step = self.kswapds[node].k.step(&mut self.mm, self.policy.as_mut(), env);
                if step.finished {
                    let zones = self.mm.zones.iter().enumerate().filter(|z| z.1.node == node8).map(|z| z.0);
                    self.mm.frames.pcp.set_reclaim_active(zones, false);
                }
                if step.sc.oom {
                    // lru_gen_age_node(): kswapd calls out_of_memory() itself.
                    let c = super::oom::Constraint::Global;
                    self.out_of_memory(c, now).map_err(|why| super::oom_error(c, now, format!("kswapd{node}"), why))?;
                }
                let cpu = self.work_cost(&step.sc.work).max(self.cfg.cpu.kswapd_pass_ns);
                self.kswapds[node].cpu_ns += cpu;
                self.kswapd_work.add(&step.sc.work);
                self.psi.busy_stalled(now, now + cpu);
                // The wait is not CPU time, but delays kswapd's next step like it.
                let wait = self.after_reclaim(&step.sc, now, cpu);
                let end = now + cpu + wait;
                // The pass's kernel pages (zram's pool) may have fallen back and boosted a zone.
                self.wake_for_boosts(end);
                if step.sc.nr_reclaimed > 0 {
                    self.stalled_attempts = 0;
                }
                let napping = step.finished && self.kswapds[node].k.prepare_sleep(&self.mm);
                if wait > 0 || napping {
                    self.cpu_sleep(actor, now + cpu);
                }
                if !step.finished {
                    // A kswapd that lost its CPU is queued again when dispatched.
                    if !self.cpu_preempted(actor, end) {
                        self.queue.push(end, Event::Kswapd(gen));
                    }
                } else if napping {
                    self.kswapds[node].state = KswapdState::Napping;
                    self.queue.push(end + KSWAPD_NAP_NS, Event::Kswapd(gen));
                } else {
                    self.mm.stat.count(VmEvent::KswapdHighWmarkHitQuickly, 1);
                    self.start_balance(node8, end);
                }
            }
            KswapdState::Napping => {
                if self.kswapds[node].k.ready_to_sleep(&self.mm) {
                    self.kswapds[node].state = KswapdState::Asleep;
                    self.mm.trace(|| Tracepoint::KswapdSleep { nid: node8 });
                } else {
                    self.mm.stat.count(VmEvent::KswapdHighWmarkHitQuickly, 1);
                    self.start_balance(node8, now);
                }
            }
            KswapdState::Asleep => unreachable!("found above among the awake"),
        }
        Ok(())
    }
}
