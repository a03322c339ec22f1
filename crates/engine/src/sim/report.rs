//! The run's report: counters, gauges, threads' latencies, reclaim work.

use super::Sim;
use crate::report::{RunReport, ThreadReport, LATENCY_PERCENTILES};
use crate::Nanos;
use hdrhistogram::Histogram;
use mm::{PageFlags, VmEvent, Watermark};

/// A histogram's value at each of [`LATENCY_PERCENTILES`] (100 = its maximum).
pub(super) fn percentiles(h: &Histogram<u64>) -> [(f64, u64); 9] {
    LATENCY_PERCENTILES.map(|p| (p, if p >= 100.0 { h.max() } else { h.value_at_quantile(p / 100.0) }))
}

impl Sim {
    pub(super) fn report(mut self, end: Nanos) -> RunReport {
        let cgroups = self.cgroup_reports(end);
        let mm = &self.m.mm;
        let sizes = self.m.policy.lru_sizes();
        let mut vmstat: Vec<(&'static str, u64)> = Vec::new();
        let count_frames = |bits: u16| mm.frames.used().filter(|(_, f)| f.flags.has(bits)).count() as u64;
        vmstat.push(("nr_free_pages", mm.nr_free()));
        vmstat.push(("nr_zspages", mm.nr_zspages()));
        vmstat.push(("nr_slab_reclaimable", mm.slab.reclaimable_pages()));
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
        vmstat.push(("workingset_nodes", mm.slab.shadow_nodes));
        let t = self.m.dirty_thresholds();
        vmstat.push(("nr_dirty_threshold", t.thresh));
        vmstat.push(("nr_dirty_background_threshold", t.bg_thresh));
        // Watermarks are per zone in /proc/zoneinfo (see `zones`); here the sum over zones.
        for (name, w) in [("wmark_min", Watermark::Min), ("wmark_low", Watermark::Low), ("wmark_high", Watermark::High)]
        {
            vmstat.push((name, mm.zones.iter().map(|z| z.wmark(w)).sum()));
        }
        vmstat.extend(mm.stat.iter());
        let memcg = self.m.memcg_stat(&vmstat);
        let zram = mm.zram.as_ref().map_or_else(Vec::new, |z| {
            let mut v = z.mm_stat().named().to_vec();
            v.push(("failed_writes", z.failed_writes()));
            v
        });
        let zswap = mm.zswap.as_ref().map_or_else(Vec::new, |z| z.named().to_vec());
        let sched = self.m.sched.as_ref();
        let run_delay = |a| sched.map_or(0, |s| s.run_delay(a));
        let access_ns = self.m.cfg.cpu.access_ns;
        let threads = self
            .threads
            .iter_mut()
            .enumerate()
            .map(|(tid, t)| {
                // Resident hits all cost the same: add them in bulk.
                if t.fast_ops > 0 {
                    t.hist.record_n(access_ns.max(1), t.fast_ops).expect("auto-resizing histogram");
                }
                ThreadReport {
                    name: t.name.clone(),
                    ops: t.fast_ops + t.slow_ops,
                    end_ns: if t.done { t.clock } else { end },
                    reclaim_stall_ns: t.reclaim_stall_ns,
                    run_delay_ns: run_delay(crate::sched::thread_actor(tid)),
                    user_time_ns: t.user_time_ns(access_ns),
                    system_time_ns: t.system_time_ns(),
                    latency_ns: percentiles(&t.hist),
                    latency_mean_ns: t.hist.mean(),
                    txns: t.txns.count,
                    first_txn_ns: t.txns.first.unwrap_or(0),
                    txn_latency_ns: percentiles(&t.txns.hist),
                    txn_latency_mean_ns: t.txns.hist.mean(),
                    oom_killed_ns: t.oom_killed_ns,
                }
            })
            .collect();
        let zones = crate::zoneinfo::ZoneReport::of(mm);
        let dh = &self.m.direct_hist;
        RunReport {
            vmstat,
            memcg,
            memcg_events: self.m.memcg.as_ref().map_or_else(Vec::new, crate::memcg::Memcg::memory_events),
            cgroups,
            zram,
            zswap,
            threads,
            virtual_ns: end,
            events: self.m.events,
            accesses: self.accesses(),
            kswapd_cpu_ns: self.m.kswapds.iter().map(|k| k.cpu_ns).sum(),
            kswapd_cpu_ns_by_node: self.m.kswapds.iter().map(|k| k.cpu_ns).collect(),
            kswapd_run_delay_ns: (0..self.m.kswapds.len() as u8)
                .map(|n| run_delay(crate::sched::kswapd_actor(n)))
                .sum(),
            direct_reclaim_ns: self.m.direct_reclaim_ns,
            kswapd_work: self.m.kswapd_work,
            direct_work: self.m.direct_work,
            direct_reclaims: dh.len(),
            direct_reclaim_latency_ns: percentiles(dh),
            psi: self.m.psi.finish(end),
            control_reads: self.m.read_controls(end),
            control_writes: std::mem::take(&mut self.m.control_log),
            reclaim_throttled_ns: self.m.reclaim_throttled_ns,
            timeseries: self.m.sampler.finish(),
            snapshots: std::mem::take(&mut self.m.snapshots),
            zones,
            kswapd_first_wake_ns: self.m.kswapds.iter().map(|k| k.first_wake_ns).collect(),
        }
    }
}

impl Sim {
    /// Each group below the root: usage, its counters and `memory.events`.
    fn cgroup_reports(&mut self, end: Nanos) -> Vec<crate::report::CgroupReport> {
        let mut tree = self.m.mm.cgroups.clone();
        tree.settle(&self.m.mm.stat);
        tree.iter()
            .skip(1)
            .map(|(id, g)| {
                let mut stat =
                    vec![("memory.current", g.usage * mm::PAGE_SIZE), ("memory.peak", g.peak * mm::PAGE_SIZE)];
                if let Some(z) = &self.m.mm.zswap {
                    let (bytes, entries) = tree
                        .subtree(id)
                        .iter()
                        .map(|&d| z.group_stat(d))
                        .fold((0, 0), |(b, n), (db, dn)| (b + db, n + dn));
                    stat.extend([("zswap", bytes), ("zswapped", entries)]);
                }
                let ev = |e| tree.event_hier(id, e);
                // memory.stat counts a group's limit reclaim (memory.max,
                // memory.high, memory.reclaim) as direct reclaim.
                let scan_direct = ev(VmEvent::PgscanAnon) + ev(VmEvent::PgscanFile) - ev(VmEvent::PgscanKswapd);
                let steal_direct = ev(VmEvent::PgstealAnon) + ev(VmEvent::PgstealFile) - ev(VmEvent::PgstealKswapd);
                stat.extend(crate::report::CGROUP_STAT_EVENTS.iter().map(|&e| {
                    let v = match e {
                        VmEvent::PgscanDirect => scan_direct,
                        VmEvent::PgstealDirect => steal_direct,
                        _ => ev(e),
                    };
                    (e.name(), v)
                }));
                crate::report::CgroupReport {
                    path: g.path.clone(),
                    stat,
                    events: tree.events_hier(id).named().to_vec(),
                    pressure: self.m.cg_psi[id.0 as usize].finish(end),
                }
            })
            .collect()
    }
}
