//! Policy controls (MGLRU's `lru_gen` debugfs file and any other a policy
//! declares in the registry): writes on behalf of a thread, reads at the end.

use super::Machine;
use crate::program::ControlWrite;
use crate::Nanos;
use reclaim::policy::ControlOp;

impl Machine {
    /// Runs control write `w` at `now` on behalf of a thread; returns its CPU time.
    pub(super) fn control_write(&mut self, w: ControlWrite, now: Nanos) -> Nanos {
        let (control, text) = self.control_texts[w.0 as usize].clone();
        let mut sc = reclaim::ScanControl::new(reclaim::Reclaimer::Direct, u64::MAX);
        sc.now_ns = now;
        let env = self.pageout_env(now);
        let res = self.policy.control(&mut self.mm, control, ControlOp::Write(&text), &mut sc, env);
        let cost = self.work_cost(&sc.work);
        let cost = cost + self.after_reclaim(&sc, now, cost);
        self.control_log.push(format!(
            "{:.3}s {}: {}",
            now as f64 / 1e9,
            text.trim(),
            res.map_or_else(|e| format!("-{e}"), |_| "ok".into())
        ));
        cost
    }

    /// The text of every registered control the running policy has, read at `now`.
    pub(super) fn read_controls(&mut self, now: Nanos) -> Vec<(&'static str, String)> {
        let mut sc = reclaim::ScanControl::new(reclaim::Reclaimer::Direct, 0);
        sc.now_ns = now;
        let env = self.pageout_env(now);
        let (policy, mm) = (&mut self.policy, &mut self.mm);
        reclaim::policy::registry::controls()
            .filter_map(|c| policy.control(mm, c.name, ControlOp::Read, &mut sc, env).ok().map(|t| (c.name, t)))
            .collect()
    }
}
