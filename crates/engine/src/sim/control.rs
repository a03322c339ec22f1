//! Control writes on behalf of a thread: policy controls (MGLRU's `lru_gen`
//! debugfs file and any other a policy declares in the registry), read at
//! the end too, and a group's `memory.reclaim` (mm/memcontrol.c
//! `memory_reclaim()`, v6.12).

use super::Machine;
use crate::program::ControlWrite;
use crate::senpai::SenpaiAction;
use crate::Nanos;
use mm::CgId;
use reclaim::memcg::MemcgReclaim;
use reclaim::policy::ControlOp;
use reclaim::MAX_RECLAIM_RETRIES;

/// A registered control write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum ControlText {
    /// `text` written to the policy control `control`.
    Policy(&'static str, String),
    /// A write to group `cg`'s `memory.reclaim` asking for `pages` pages,
    /// with `swappiness=` if given (`text` as written).
    MemoryReclaim { cg: CgId, pages: u64, swappiness: Option<u32>, text: String },
    /// One tick of senpai controller `senpai` (an index into the machine's
    /// controllers) on group `cg`.
    Senpai { cg: CgId, senpai: usize },
}

/// Parses a `memory.reclaim` write: `SIZE [swappiness=N]` (SIZE with a
/// K/M/G suffix, rounded down to pages; N in 0..=200). Returns (pages, swappiness).
pub(super) fn parse_memory_reclaim(text: &str) -> Result<(u64, Option<u32>), String> {
    let mut words = text.split_whitespace();
    let size = words.next().ok_or("`SIZE [swappiness=N]`, not an empty write")?;
    let pages = knobs::parse_size(size)? / mm::PAGE_SIZE;
    let mut swappiness = None;
    for w in words {
        let v = w.strip_prefix("swappiness=").ok_or_else(|| format!("`swappiness=N` after the size, not `{w}`"))?;
        let n: u32 = v.parse().map_err(|_| format!("swappiness=N with N in 0..=200, not `{v}`"))?;
        if n > 200 {
            return Err(format!("swappiness=N with N in 0..=200, not {n} (swappiness=max is v6.15+, not modelled)"));
        }
        swappiness = Some(n);
    }
    Ok((pages, swappiness))
}

impl Machine {
    /// Runs control write `w` at `now` on behalf of a thread; returns the
    /// writer's time: the reclaim's CPU, and its sleeps, which it adds to `sleep_ns`.
    pub(super) fn control_write(&mut self, w: ControlWrite, now: Nanos) -> Nanos {
        let (cost, file, text, res) = match self.control_texts[w.0 as usize].clone() {
            ControlText::Policy(control, text) => {
                let mut sc = reclaim::ScanControl::new(reclaim::Reclaimer::Direct, u64::MAX);
                sc.now_ns = now;
                let env = self.pageout_env(now);
                let res = self.policy.control(&mut self.mm, control, ControlOp::Write(&text), &mut sc, env);
                let cost = self.work_cost(&sc.work);
                let wait = self.after_reclaim(&sc, now, cost);
                self.sleep_ns += wait;
                let cost = cost + wait;
                (cost, control.to_string(), text, res.map(|_| ()).map_err(|e| e.to_string()))
            }
            ControlText::MemoryReclaim { cg, pages, swappiness, text } => {
                let (cost, res) = self.memory_reclaim(cg, pages, swappiness, now);
                (cost, self.group_file(cg, "memory.reclaim"), text, res.map_err(str::to_string))
            }
            ControlText::Senpai { cg, senpai } => return self.senpai_tick(cg, senpai, now),
        };
        self.control_log.push(format!(
            "{:.3}s {file} {}: {}",
            now as f64 / 1e9,
            text.trim(),
            res.map_or_else(|e| format!("-{e}"), |_| "ok".into())
        ));
        cost
    }

    /// The path of `file` of group `cg`.
    fn group_file(&self, cg: CgId, file: &str) -> String {
        format!("{}/{file}", self.mm.cgroups.get(cg).path.trim_end_matches('/'))
    }

    /// One tick of senpai controller `i` on group `cg` at `now`: reads the
    /// group's pressure and size, and applies what the controller decides
    /// (logged with the pressure it acted on). Returns the writer's time.
    fn senpai_tick(&mut self, cg: CgId, i: usize, now: Nanos) -> Nanos {
        let psi = if cg == CgId::ROOT { &mut self.psi } else { &mut self.cg_psi[cg.0 as usize] };
        let total_us = psi.some_total_at(now) / 1000;
        let g = self.mm.cgroups.get(cg);
        let bytes = |pages: u64| pages.saturating_mul(mm::PAGE_SIZE);
        let high = if g.limits.high >= mm::cgroup::PAGE_COUNTER_MAX { u64::MAX } else { bytes(g.limits.high) };
        let current = bytes(g.usage);
        let (cost, file, text, res) = match self.senpais[i].tick(total_us, current, high) {
            SenpaiAction::Wait => return 0,
            SenpaiAction::SetHigh(b) => {
                (self.memory_high_write(cg, b / mm::PAGE_SIZE, now), "memory.high", b.to_string(), Ok(()))
            }
            SenpaiAction::Reclaim(b) => {
                let (cost, res) = self.memory_reclaim(cg, b / mm::PAGE_SIZE, None, now);
                (cost, "memory.reclaim", b.to_string(), res)
            }
        };
        let why = self.senpais[i].last_adjust.map_or("start".to_string(), |(share, integral)| {
            format!("pressure {integral} us per interval, adjust {:+.2}%", share * 100.0)
        });
        self.control_log.push(format!(
            "{:.3}s senpai {}: {text} ({why}; memory.current {current}): {}",
            now as f64 / 1e9,
            self.group_file(cg, file),
            res.map_or_else(|e| format!("-{e}"), |_| "ok".into())
        ));
        cost
    }

    /// A write of `pages` to group `cg`'s `memory.high` (`memory_high_write()`):
    /// the new limit, then reclaim down to it (the stocks drained first)
    /// until it holds or 16 tries free nothing. Returns the writer's time.
    fn memory_high_write(&mut self, cg: CgId, pages: u64, now: Nanos) -> Nanos {
        self.mm.cgroups.get_mut(cg).limits.high = pages;
        self.mm.cgroups.drain_all_stock(cg);
        let (mut retries, mut t) = (MAX_RECLAIM_RETRIES, 0);
        loop {
            let usage = self.mm.cgroups.get(cg).usage;
            if usage <= pages {
                return t;
            }
            let (reclaimed, cost) = self.memcg_reclaim(self.limit_reclaim(cg, usage - pages), now + t);
            t += cost;
            if reclaimed == 0 {
                if retries == 0 {
                    return t;
                }
                retries -= 1;
            }
        }
    }

    /// `memory_reclaim()`: reclaims `nr_to_reclaim` pages from `cg`'s
    /// subtree in batches of a quarter of what is left, giving up with
    /// `EAGAIN` after `MAX_RECLAIM_RETRIES` batches that freed nothing.
    /// Returns the writer's time (reclaim CPU and throttling) and the outcome.
    fn memory_reclaim(
        &mut self,
        cg: CgId,
        nr_to_reclaim: u64,
        swappiness: Option<u32>,
        now: Nanos,
    ) -> (Nanos, Result<(), &'static str>) {
        let mut retries = MAX_RECLAIM_RETRIES;
        let (mut nr_reclaimed, mut t) = (0, 0);
        while nr_reclaimed < nr_to_reclaim {
            let batch = (nr_to_reclaim - nr_reclaimed) / 4;
            // KERNEL: v7.1+ counts memory.reclaim as pgscan/pgsteal_proactive (not modelled), not _direct.
            let req = MemcgReclaim { target: cg, nr_pages: batch, may_swap: true, swappiness, vmstat_direct: false };
            let (reclaimed, cost) = self.memcg_reclaim(req, now + t);
            t += cost;
            if reclaimed == 0 {
                if retries == 0 {
                    return (t, Err("EAGAIN"));
                }
                retries -= 1;
            }
            nr_reclaimed += reclaimed;
        }
        (t, Ok(()))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_reclaim_writes_parse_as_the_kernel_reads_them() {
        assert_eq!(parse_memory_reclaim("1G"), Ok((1 << 18, None)));
        assert_eq!(parse_memory_reclaim(" 10M swappiness=0\n"), Ok((2560, Some(0))));
        assert_eq!(parse_memory_reclaim("5000"), Ok((1, None)), "bytes round down to pages");
        assert!(parse_memory_reclaim("").unwrap_err().contains("SIZE"));
        assert!(parse_memory_reclaim("1G swappiness=201").unwrap_err().contains("0..=200"));
        assert!(parse_memory_reclaim("1G swap=1").unwrap_err().contains("swappiness=N"));
    }
}
