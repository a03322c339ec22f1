//! Writes to MGLRU's debugfs file on behalf of a thread.

use super::Machine;
use crate::program::LruGenWrite;
use crate::Nanos;

impl Machine {
    /// Runs `lru_gen` write `w` at `now` on behalf of a thread; returns its CPU time.
    pub(super) fn lru_gen_write(&mut self, w: LruGenWrite, now: Nanos) -> Nanos {
        let text = self.lru_gen_texts[w.0 as usize].clone();
        let mut sc = reclaim::ScanControl::new(reclaim::Reclaimer::Direct, u64::MAX);
        sc.now_ns = now;
        let env = self.pageout_env(now);
        let res = self.policy.lru_gen_write(&mut self.mm, &text, &mut sc, env);
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
}
