//! Per-phase traces (`validate --phases N`): the kernel's and the simulator's
//! counters at the same access counts, so that a miss in a run's totals shows
//! where the two part (the fill, the first pressure, the steady state).
//!
//! The guest's driver reads `/proc/vmstat` after every `every` accesses (its
//! `phase OPS name value ...` lines); the simulator replays the same trace and
//! takes a counter snapshot at the same accesses (`Step::Snapshot`).

use crate::stat::{self, Stats};
use engine::Snapshot;
use serde_json::{json, Value};

/// The counters each phase shows, before the scenario's own.
const COUNTERS: &[&str] = &[
    "pswpin",
    "pswpout",
    "pgsteal_kswapd",
    "pgsteal_direct",
    "pgscan_kswapd",
    "pgscan_direct",
    "allocstall",
    "pageoutrun",
];

/// The accesses between two phase boundaries for `ops` accesses in `phases`.
pub fn every(ops: usize, phases: u64) -> u64 {
    (ops as u64).div_ceil(phases.max(1)).max(1)
}

/// The driver's phase lines as cumulative deltas from `before`, in order.
pub fn kernel_phases(driver_output: &str, before: &Stats) -> Result<Vec<(u64, Stats)>, String> {
    let mut out = Vec::new();
    for (i, line) in driver_output.lines().enumerate() {
        let Some(rest) = line.strip_prefix("phase ") else { continue };
        let bad = |what: &str| format!("driver output line {}: {what}: `{line}`", i + 1);
        let mut words = rest.split_whitespace();
        let ops = words.next().and_then(|w| w.parse().ok()).ok_or_else(|| bad("expected `phase OPS`"))?;
        let words: Vec<&str> = words.collect();
        if !words.len().is_multiple_of(2) {
            return Err(bad("expected `name value` pairs"));
        }
        let text: String = words.chunks(2).map(|p| format!("{} {}\n", p[0], p[1])).collect();
        let at = stat::parse_stats(&format!("driver phase {ops}"), &text)?;
        out.push((ops, stat::delta(before, &at)));
    }
    Ok(out)
}

/// `name` in `s`, read as the totals are (`allocstall` sums `allocstall_*`).
fn value(s: &Stats, name: &str) -> f64 {
    crate::compare::lookup(s.iter().map(|(n, &v)| (n.as_str(), v)), name)
}

fn report_stats(vmstat: &[(&'static str, u64)]) -> Stats {
    vmstat.iter().map(|&(n, v)| (n.to_string(), v)).collect()
}

/// Kernel and simulator counters phase by phase.
#[derive(Clone, Debug)]
pub struct PhaseTable {
    /// The accesses at which each phase ends (the last: the run's end).
    pub ends: Vec<u64>,
    /// The counters shown: [`COUNTERS`], then the scenario's own from `/proc/vmstat`,
    /// then those asked for (`--phase-counters`).
    pub counters: Vec<String>,
    /// Per phase, per counter: (kernel, simulator) deltas.
    pub cells: Vec<Vec<(f64, f64)>>,
}

impl PhaseTable {
    /// Sets the kernel run's phases (`kernel`, cumulative, then its `total`)
    /// beside the simulator's snapshots (then its `sim_total`) for a run of
    /// `ops` accesses, on [`COUNTERS`] and the `extra` ones of `/proc/vmstat`
    /// (`GROUP.COUNTER` names are left out, and a counter named twice is shown
    /// once); `None` when their phase counts differ.
    pub fn new(
        extra: &[&str],
        kernel: &[(u64, Stats)],
        total: &Stats,
        ops: u64,
        snapshots: &[Snapshot],
        sim_total: &[(&'static str, u64)],
    ) -> Option<PhaseTable> {
        if kernel.is_empty() || kernel.len() != snapshots.len() {
            return None;
        }
        let mut k: Vec<Stats> = kernel.iter().map(|(_, s)| s.clone()).collect();
        k.push(total.clone());
        let mut s: Vec<Stats> = snapshots.iter().map(|snap| report_stats(&snap.vmstat)).collect();
        s.push(report_stats(sim_total));
        let mut ends: Vec<u64> = kernel.iter().map(|&(n, _)| n).collect();
        ends.push(ops);
        let zero = Stats::new();
        let mut counters: Vec<String> = COUNTERS.iter().map(|c| c.to_string()).collect();
        for c in extra {
            if !c.contains('.') && !counters.iter().any(|have| have == c) {
                counters.push(c.to_string());
            }
        }
        let cells = (0..k.len())
            .map(|i| {
                let (k0, s0) = if i == 0 { (&zero, &zero) } else { (&k[i - 1], &s[i - 1]) };
                counters.iter().map(|c| (value(&k[i], c) - value(k0, c), value(&s[i], c) - value(s0, c))).collect()
            })
            .collect();
        Some(PhaseTable { ends, counters, cells })
    }

    /// The table as text: one row per phase, `kernel/simulator` per counter.
    pub fn text(&self) -> String {
        let mut s = format!("per phase (kernel/simulator) {:>10}", "accesses");
        for c in &self.counters {
            s += &format!(" {c:>17}");
        }
        s.push('\n');
        let mut start = 0;
        for (end, row) in self.ends.iter().zip(&self.cells) {
            s += &format!("{:>39}", format!("{start}..{end}"));
            for (k, sim) in row {
                s += &format!(" {:>17}", format!("{k:.0}/{sim:.0}"));
            }
            s.push('\n');
            start = *end;
        }
        s
    }

    /// The table as JSON: `counters`, and per phase its end and both sides' deltas.
    pub fn json(&self) -> Value {
        let phases: Vec<Value> = self
            .ends
            .iter()
            .zip(&self.cells)
            .map(|(end, row)| {
                json!({
                    "end_ops": end,
                    "kernel": row.iter().map(|c| c.0).collect::<Vec<_>>(),
                    "sim": row.iter().map(|c| c.1).collect::<Vec<_>>(),
                })
            })
            .collect();
        json!({ "counters": self.counters, "phases": phases })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::Snapshot;

    #[test]
    fn phase_lines_parse_into_deltas_and_line_up_with_the_simulator() {
        let before: Stats = [("pswpin".to_string(), 100), ("allocstall_dma32".to_string(), 1)].into();
        let out =
            "ops 30 digest 00ff\nphase 10 pswpin 110 allocstall_dma32 1\nphase 20 pswpin 150 allocstall_dma32 4\n";
        let k = kernel_phases(out, &before).unwrap();
        assert_eq!(k.iter().map(|(n, _)| *n).collect::<Vec<_>>(), [10, 20]);
        assert_eq!((k[1].1["pswpin"], k[1].1["allocstall_dma32"]), (50, 3));
        let total: Stats = [("pswpin".to_string(), 80), ("allocstall_dma32".to_string(), 5)].into();
        let snap = |pswpin, stalls| Snapshot {
            at_ns: 0,
            vmstat: vec![("pswpin", pswpin), ("allocstall_normal", stalls), ("swap_ra", pswpin / 2)],
        };
        let mut snaps = vec![snap(12, 0), snap(40, 2)];
        let sim_total = [("pswpin", 90), ("allocstall_normal", 6), ("swap_ra", 45)];
        // The scenario's own vmstat counters follow; a group's counter and a repeated one do not.
        let t =
            PhaseTable::new(&["swap_ra", "hi.high", "pswpin", "swap_ra"], &k, &total, 30, &snaps, &sim_total).unwrap();
        assert_eq!(t.counters.len(), COUNTERS.len() + 1);
        assert_eq!((t.counters[COUNTERS.len()].as_str(), t.cells[2][COUNTERS.len()]), ("swap_ra", (0.0, 25.0)));
        assert_eq!(t.ends, [10, 20, 30]);
        // pswpin is the first counter, allocstall the seventh: per phase (kernel, simulator).
        let col = |i: usize| t.cells.iter().map(|row| row[i]).collect::<Vec<_>>();
        assert_eq!(col(0), [(10.0, 12.0), (40.0, 28.0), (30.0, 50.0)]);
        assert_eq!(col(6), [(0.0, 0.0), (3.0, 2.0), (2.0, 4.0)]);
        assert!(t.text().contains("10..20"), "{}", t.text());
        snaps.pop();
        assert!(PhaseTable::new(&[], &k, &total, 30, &snaps, &sim_total).is_none(), "phase counts differ");
        assert!(kernel_phases("phase x\n", &before).unwrap_err().contains("expected `phase OPS`"));
    }

    #[test]
    fn every_splits_the_accesses_evenly() {
        assert_eq!((every(100, 4), every(101, 4), every(3, 8)), (25, 26, 1));
    }
}
