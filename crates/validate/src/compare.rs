//! Kernel vs simulator: the compared counters, tolerances, and the text,
//! JSON and markdown renderings.

use super::phases::PhaseTable;
use super::replay::Machine;
use super::scenarios::Scenario;
use super::stat::Stats;
use engine::RunReport;
use serde_json::{json, Value};
use std::path::Path;

/// Where a counter is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Source {
    /// The group's `memory.stat`.
    Memcg,
    /// The `/proc/vmstat` delta over the run.
    Vmstat,
    /// A tenant group's `memory.stat` and `memory.events` (`GROUP.COUNTER`).
    Group,
}

/// The counters of the done-when criterion, then informational ones.
const COUNTERS: &[(&str, Source, bool)] = &[
    ("pgmajfault", Source::Memcg, true),
    ("pswpin", Source::Vmstat, true),
    ("pswpout", Source::Vmstat, true),
    ("workingset_refault_anon", Source::Memcg, true),
    ("workingset_refault_file", Source::Memcg, true),
    ("pgsteal_anon", Source::Vmstat, true),
    ("pgsteal_file", Source::Vmstat, true),
    ("pgscan_anon", Source::Vmstat, false),
    ("pgscan_file", Source::Vmstat, false),
    ("workingset_activate_anon", Source::Vmstat, false),
    ("workingset_activate_file", Source::Vmstat, false),
    ("pgfault", Source::Memcg, false),
    ("pgscan_kswapd", Source::Vmstat, false),
    ("pgscan_direct", Source::Vmstat, false),
];

/// Global reclaim (no group): every counter from `/proc/vmstat`; who reclaims
/// (kswapd or the allocating task) is part of the criterion. `allocstall` is
/// the sum of the per-zone `allocstall_*` counters.
const GLOBAL_COUNTERS: &[(&str, Source, bool)] = &[
    ("pgmajfault", Source::Vmstat, true),
    ("pswpin", Source::Vmstat, true),
    ("pswpout", Source::Vmstat, true),
    ("pgsteal_anon", Source::Vmstat, true),
    ("pgsteal_kswapd", Source::Vmstat, true),
    ("pgsteal_direct", Source::Vmstat, true),
    ("pgscan_kswapd", Source::Vmstat, true),
    ("pgscan_direct", Source::Vmstat, true),
    ("allocstall", Source::Vmstat, true),
    ("workingset_refault_anon", Source::Vmstat, false),
    ("workingset_activate_anon", Source::Vmstat, false),
    ("pgscan_anon", Source::Vmstat, false),
    ("pageoutrun", Source::Vmstat, false),
    ("pgfault", Source::Vmstat, false),
    // Pages counted in pgscan but skipped because their zone is above the
    // classzone of the reclaim (kswapd woken for ZONE_DMA by a boosted DMA
    // watermark in the guest; the simulator's one flat zone never skips).
    ("pgskip_dma32", Source::Vmstat, false),
];

/// The compared counters of `scenario`: its scope's, with the scenario's
/// extra counters (from `/proc/vmstat`) in the criterion.
fn counters(scenario: &Scenario) -> Vec<(&'static str, Source, bool)> {
    let mut v = if scenario.global_ram_mb.is_some() { GLOBAL_COUNTERS } else { COUNTERS }.to_vec();
    for &name in scenario.extra {
        let src = if name.contains('.') { Source::Group } else { Source::Vmstat };
        match v.iter_mut().find(|c| c.0 == name) {
            Some(c) => (c.1, c.2) = (src, true),
            None => v.push((name, src, true)),
        }
    }
    v
}

/// `name` in `entries`; `allocstall` sums the `allocstall_*` entries.
pub(crate) fn lookup<'a>(mut entries: impl Iterator<Item = (&'a str, u64)>, name: &str) -> f64 {
    if name == "allocstall" {
        return entries.filter(|(n, _)| n.starts_with("allocstall_")).map(|(_, v)| v).sum::<u64>() as f64;
    }
    entries.find(|(n, _)| *n == name).map_or(0, |(_, v)| v) as f64
}

/// Relative tolerance of the criterion.
pub const REL_TOLERANCE: f64 = 0.10;
/// Below this kernel count, an absolute tolerance applies instead.
pub const SMALL_COUNT: f64 = 1000.0;
/// The absolute tolerance for small counts (10% of [`SMALL_COUNT`]).
pub const ABS_TOLERANCE: f64 = 100.0;

/// Is `sim` within tolerance of `kernel`?
pub fn within(kernel: f64, sim: f64) -> bool {
    let allowed = if kernel < SMALL_COUNT { ABS_TOLERANCE } else { kernel * REL_TOLERANCE };
    (sim - kernel).abs() <= allowed
}

/// One kernel run's counters.
#[derive(Clone, Debug)]
pub struct KernelRun {
    /// `/proc/vmstat` delta.
    pub vmstat: Stats,
    /// The group's `memory.stat` at the end.
    pub memcg: Stats,
    /// Wall-clock seconds of the driver.
    pub wall_seconds: f64,
    /// `memory.stat` reads by the poller during the run.
    pub polls: u64,
    /// `/sys/block/zram0/mm_stat` after the driver's last access (swap on zram).
    pub zram_mm_stat: Option<String>,
    /// A global run's starting state (`@section start` of the guest); empty otherwise.
    pub start: Stats,
    /// `/proc/vmstat` deltas from the run's start at each phase boundary (`--phases`).
    pub phases: Vec<(u64, Stats)>,
    /// Each tenant group's `memory.stat` and `memory.events` at the end.
    pub groups: std::collections::BTreeMap<String, Stats>,
}

impl KernelRun {
    /// The `snapshot /sys/block/zram0/mm_stat ...` line of the driver's
    /// output; of several drivers' (tenants), the one with the most data
    /// stored (the first field), which the last driver to finish saw.
    pub fn zram_snapshot(driver_output: &str) -> Option<String> {
        let prefix = format!("snapshot {} ", crate::ZRAM_MM_STAT);
        let stored = |s: &String| s.split_whitespace().next().and_then(|w| w.parse::<u64>().ok()).unwrap_or(0);
        driver_output.lines().filter_map(|l| l.strip_prefix(&prefix).map(str::to_string)).max_by_key(stored)
    }
}

impl KernelRun {
    fn get(&self, name: &str, src: Source) -> f64 {
        let (m, name) = match src {
            Source::Memcg => (&self.memcg, name),
            Source::Vmstat => (&self.vmstat, name),
            Source::Group => {
                let (group, counter) = name.split_once('.').expect("GROUP.COUNTER");
                match self.groups.get(group) {
                    Some(m) => (m, counter),
                    None => return 0.0,
                }
            }
        };
        lookup(m.iter().map(|(n, &v)| (n.as_str(), v)), name)
    }
}

/// One counter compared.
#[derive(Clone, Debug)]
pub struct Row {
    /// Counter name.
    pub name: String,
    /// Part of the done-when criterion.
    pub criterion: bool,
    /// Kernel values, one per run.
    pub kernel: Vec<f64>,
    /// Simulator value.
    pub sim: f64,
}

impl Row {
    /// Mean of the kernel runs.
    pub fn kernel_mean(&self) -> f64 {
        self.kernel.iter().sum::<f64>() / self.kernel.len() as f64
    }
    /// (max - min) / mean of the kernel runs, 0 for one run.
    pub fn spread(&self) -> f64 {
        let (lo, hi) = self.kernel.iter().fold((f64::MAX, f64::MIN), |(lo, hi), &v| (lo.min(v), hi.max(v)));
        let m = self.kernel_mean();
        if m > 0.0 {
            (hi - lo) / m
        } else {
            0.0
        }
    }
    /// (sim - kernel) / kernel; `None` when the kernel counted nothing.
    pub fn rel_error(&self) -> Option<f64> {
        let k = self.kernel_mean();
        (k > 0.0).then(|| (self.sim - k) / k)
    }
    /// Within tolerance.
    pub fn ok(&self) -> bool {
        within(self.kernel_mean(), self.sim)
    }
}

/// A scenario's kernel runs beside the simulator's.
pub struct Comparison {
    /// The scenario.
    pub scenario: Scenario,
    machine: Machine,
    runs: Vec<KernelRun>,
    /// The compared counters.
    pub rows: Vec<Row>,
    sim_seconds: f64,
    sim_virtual_s: f64,
    /// Phase by phase, kernel beside simulator (`--phases`).
    phases: Option<PhaseTable>,
}

fn report_value(r: &RunReport, name: &str, src: Source) -> f64 {
    let list = match src {
        Source::Memcg => &r.memcg,
        Source::Vmstat => &r.vmstat,
        Source::Group => {
            let (group, counter) = name.split_once('.').expect("GROUP.COUNTER");
            let Some(g) = r.cgroups.iter().find(|g| g.path == group) else { return 0.0 };
            let get = |name: &str| lookup(g.stat.iter().chain(&g.events).map(|&(n, v)| (n, v)), name);
            // v2 memory.stat's totals over the reclaimers (the simulator counts
            // a group's own reclaim, memory.high's and memory.reclaim's, as direct).
            return match counter {
                "pgscan" | "pgsteal" => get(&format!("{counter}_kswapd")) + get(&format!("{counter}_direct")),
                _ => get(counter),
            };
        }
    };
    lookup(list.iter().map(|&(n, v)| (n, v)), name)
}

impl Comparison {
    /// Compares `runs` with the simulator's `report`; the phase table (where the
    /// runs have phases) shows `phase_counters` after the scenario's own counters.
    pub fn new(
        scenario: Scenario,
        machine: Machine,
        runs: Vec<KernelRun>,
        report: RunReport,
        sim_seconds: f64,
        phase_counters: &[String],
    ) -> Comparison {
        // The scenario's counters, then the asked-for ones not among them, for information.
        let own = counters(&scenario);
        let asked = phase_counters.iter().map(String::as_str).filter(|n| !own.iter().any(|c| c.0 == *n));
        let rows = own
            .iter()
            .copied()
            .chain(asked.map(|n| (n, Source::Vmstat, false)))
            .map(|(name, src, criterion)| Row {
                name: name.to_string(),
                criterion,
                kernel: runs.iter().map(|r| r.get(name, src)).collect(),
                sim: report_value(&report, name, src),
            })
            .collect();
        let extra: Vec<&str> =
            scenario.extra.iter().copied().chain(phase_counters.iter().map(String::as_str)).collect();
        let phases = runs.first().and_then(|r| {
            PhaseTable::new(&extra, &r.phases, &r.vmstat, report.accesses, &report.snapshots, &report.vmstat)
        });
        Comparison {
            scenario,
            machine,
            runs,
            rows,
            sim_seconds,
            sim_virtual_s: report.threads.iter().map(|t| t.end_ns).max().unwrap_or(0) as f64 / 1e9,
            phases,
        }
    }

    /// Every criterion counter within tolerance.
    pub fn all_within(&self) -> bool {
        self.rows.iter().filter(|r| r.criterion).all(Row::ok)
    }

    /// The side-by-side table.
    pub fn text(&self) -> String {
        let sc = &self.scenario;
        let wall: f64 = self.runs.iter().map(|r| r.wall_seconds).sum::<f64>() / self.runs.len() as f64;
        let scope = match sc.global_ram_mb {
            Some(mb) => format!("global reclaim in {mb}M of RAM"),
            None => format!("limit {}", engine::config::format_size(sc.limit_bytes)),
        };
        let mut s = format!(
            "\n== {}  ({}; {scope}, swappiness {}, swap {}; kernel {} run(s) {wall:.2} s each, simulator {:.2} s)\n",
            sc.name,
            sc.pattern,
            sc.swappiness,
            self.machine.swap_kind,
            self.runs.len(),
            self.sim_seconds
        );
        s += &format!(
            "{:<26} {:>12} {:>8} {:>12} {:>9}  {}\n",
            "counter", "kernel", "spread", "simulator", "error", "within"
        );
        for r in &self.rows {
            let err = r.rel_error().map_or("-".into(), |e| format!("{:+.1}%", e * 100.0));
            let verdict = if !r.criterion {
                "(info)"
            } else if r.ok() {
                "yes"
            } else {
                "NO"
            };
            s += &format!(
                "{:<26} {:>12.0} {:>7.1}% {:>12.0} {:>9}  {verdict}\n",
                r.name,
                r.kernel_mean(),
                r.spread() * 100.0,
                r.sim,
                err
            );
        }
        if let Some(p) = &self.phases {
            s += &p.text();
        }
        s
    }

    /// The numbers as JSON.
    pub fn json(&self) -> Value {
        let sc = &self.scenario;
        json!({
            "name": sc.name,
            "pattern": sc.pattern,
            "limit_bytes": sc.limit_bytes,
            "swappiness": sc.swappiness,
            "sim_settings": self.machine.settings().into_iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>(),
            "sim_profile": self.machine.profile,
            "sim_wall_seconds": self.sim_seconds,
            "sim_virtual_seconds": self.sim_virtual_s,
            "kernel_runs": self.runs.iter().map(|r| json!({"wall_seconds": r.wall_seconds, "polls": r.polls, "vmstat_delta": r.vmstat, "memory_stat": r.memcg, "zram_mm_stat": r.zram_mm_stat, "start": r.start})).collect::<Vec<_>>(),
            "counters": self.rows.iter().map(|r| json!({
                "name": r.name, "criterion": r.criterion, "kernel": r.kernel, "kernel_mean": r.kernel_mean(),
                "kernel_spread": r.spread(), "sim": r.sim, "rel_error": r.rel_error(), "within": r.ok(),
            })).collect::<Vec<_>>(),
            "all_within": self.all_within(),
            "phases": self.phases.as_ref().map(PhaseTable::json),
        })
    }
}

/// The markdown tables of the criterion counters, one per set of compared
/// counters (memory-group and global scenarios, each with their extra
/// counters), in order of first appearance: one row per scenario, cells
/// `kernel / simulator (error)`, misses in bold; then the count of cells within.
pub fn markdown(results: &[&Comparison], command: &str, setup: &str) -> String {
    let mut s = format!("Generated by `{command}` ({setup}).\n");
    s += "Cells: kernel mean / simulator (relative error); **bold** = outside ±10% (±100 below 1000).\n";
    let mut sets: Vec<Vec<(&str, Source, bool)>> = Vec::new();
    for c in results {
        let set = counters(&c.scenario);
        if !sets.contains(&set) {
            sets.push(set);
        }
    }
    for set in &sets {
        let part: Vec<&Comparison> = results.iter().copied().filter(|c| counters(&c.scenario) == *set).collect();
        s += &format!("\n{}", table(&part, set));
    }
    let cells: Vec<&Row> = results.iter().flat_map(|c| c.rows.iter().filter(|r| r.criterion)).collect();
    s += &format!("\nCells within: {} of {}.\n", cells.iter().filter(|r| r.ok()).count(), cells.len());
    s
}

/// One markdown table of `results`, all compared on `counters`.
fn table(results: &[&Comparison], counters: &[(&str, Source, bool)]) -> String {
    let names: Vec<&str> = counters.iter().filter(|c| c.2).map(|c| c.0).collect();
    let mut s = format!("| scenario | {} | all within |\n", names.join(" | "));
    s += &format!("|---|{}---|\n", "---|".repeat(names.len()));
    for c in results {
        let cells: Vec<String> = c
            .rows
            .iter()
            .filter(|r| r.criterion)
            .map(|r| {
                let e = r.rel_error().map_or(String::new(), |e| format!(" ({:+.1}%)", e * 100.0));
                let cell = format!("{:.0} / {:.0}{e}", r.kernel_mean(), r.sim);
                if r.ok() {
                    cell
                } else {
                    format!("**{cell}**")
                }
            })
            .collect();
        s += &format!(
            "| {} | {} | {} |\n",
            c.scenario.name,
            cells.join(" | "),
            if c.all_within() { "yes" } else { "no" }
        );
    }
    s
}

/// Replaces the text between the `validate:begin/end` markers of `path`
/// (`validate:KERNEL:begin/end` for a guest kernel, `section` != `host`).
pub fn rewrite_doc(path: &Path, section: &str, table: &str) -> Result<(), String> {
    let tag = if section == "host" { String::new() } else { format!("{section}:") };
    let (begin, end) = (format!("<!-- validate:{tag}begin -->"), format!("<!-- validate:{tag}end -->"));
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let (Some(b), Some(e)) = (text.find(&begin), text.find(&end)) else {
        return Err(format!("{}: no `{begin}` ... `{end}` section to rewrite", path.display()));
    };
    if e < b {
        return Err(format!("{}: `{end}` comes before `{begin}`", path.display()));
    }
    let new = format!("{}{begin}\n{table}{}", &text[..b], &text[e..]);
    crate::write_atomic(path, new.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tolerance_is_relative_above_1000_and_absolute_below() {
        assert!(within(10_000.0, 10_999.0));
        assert!(!within(10_000.0, 11_001.0));
        assert!(within(500.0, 600.0));
        assert!(!within(500.0, 601.0));
        assert!(within(0.0, 100.0));
        assert!(!within(1000.0, 1101.0));
    }

    #[test]
    fn the_fullest_zram_snapshot_of_several_drivers() {
        let out = "snapshot /sys/block/zram0/mm_stat 100 5 0 0 0 0\nops 1\nsnapshot /sys/block/zram0/mm_stat 9000 90 0 0 0 0\nsnapshot /sys/block/zram0/mm_stat 800 8 0 0 0 0\n";
        assert_eq!(KernelRun::zram_snapshot(out).as_deref(), Some("9000 90 0 0 0 0"));
        assert_eq!(KernelRun::zram_snapshot("ops 1\n"), None);
    }

    #[test]
    fn spread_and_error() {
        let r = Row { name: "pswpin".into(), criterion: true, kernel: vec![900.0, 1100.0], sim: 1200.0 };
        assert_eq!(r.kernel_mean(), 1000.0);
        assert!((r.spread() - 0.2).abs() < 1e-12);
        assert!((r.rel_error().unwrap() - 0.2).abs() < 1e-12);
        assert!(!r.ok());
    }
}
