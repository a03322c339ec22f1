//! `reclaimsim compare`: result documents side by side in mmtests' layout —
//! one column per kernel (a run, or the mean of several runs with `--runs`),
//! each value with its change against the first column, the vmstat rows under
//! mmtests' names and the ratios mmtests derives from them. With several runs
//! per column, a change is marked `*x%*` when Welch's t-test finds it
//! significant at the 5% level (mmtests' compare-kernels marks it the same way).

mod stats;

use crate::runner::{write_text_atomic, UsageError};
use anyhow::Result;
use clap::{Args, ValueEnum};
use serde_json::{json, Value};
use std::path::PathBuf;

/// Arguments of `compare`.
#[derive(Args, Debug)]
#[command(group(clap::ArgGroup::new("inputs").required(true).multiple(true).args(["files", "runs"])))]
pub struct CompareArgs {
    /// Result documents written by `run --json`, one column each (the first column is the baseline).
    pub files: Vec<PathBuf>,
    /// Several runs of one kernel (e.g. seeds), comma-separated: one column with their mean and
    /// standard deviation; repeat for each kernel (after the single files).
    #[arg(long, value_name = "A.json,B.json,...")]
    pub runs: Vec<String>,
    /// Column labels in order, comma-separated (default: the profiles, else what tells the paths apart).
    #[arg(long, value_delimiter = ',', value_name = "NAME,...")]
    pub labels: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Write the table to this file (atomically) instead of standard output.
    #[arg(long, short, value_name = "OUT")]
    pub output: Option<PathBuf>,
}

/// Output formats of `compare`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// mmtests-style aligned text.
    Text,
    /// A Markdown table.
    Markdown,
    /// Comma-separated values: row, unit, then per column mean, stddev, change and significance.
    Csv,
    /// One JSON object: columns, and rows with means, deviations, changes and significance.
    Json,
}

/// How a row's values are printed, and its unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unit {
    /// Pages or events.
    Count,
    /// Percent.
    Percent,
    /// Per second of simulated time (`what` per second).
    Rate(&'static str),
    /// Seconds.
    Seconds,
    /// 512-byte sectors.
    Sectors,
}

impl Unit {
    fn name(self) -> &'static str {
        match self {
            Unit::Count => "",
            Unit::Percent => "%",
            Unit::Rate(what) => what,
            Unit::Seconds => "s",
            Unit::Sectors => "sectors",
        }
    }
}

/// One row: mmtests' name and how to compute it from a result document.
struct Row {
    name: &'static str,
    unit: Unit,
    value: fn(&Run) -> Option<f64>,
}

/// A loaded result document.
struct Run {
    path: PathBuf,
    doc: Value,
}

impl Run {
    fn c(&self, name: &str) -> Option<f64> {
        self.doc["vmstat"].get(name).and_then(Value::as_f64)
    }
    fn elapsed(&self) -> Option<f64> {
        self.doc["sim"]["virtual_ns"].as_f64().map(|ns| ns / 1e9)
    }
    fn ratio(&self, num: &str, den: &str) -> Option<f64> {
        let d = self.c(den)?;
        (d > 0.0).then(|| self.c(num).unwrap_or(0.0) * 100.0 / d)
    }
    fn sum(&self, a: &str, b: &str) -> Option<f64> {
        Some(self.c(a)? + self.c(b)?)
    }
}

const ROWS: &[Row] = &[
    Row { name: "Elapsed (simulated)", unit: Unit::Seconds, value: |r| r.elapsed() },
    Row {
        name: "Ops/sec",
        unit: Unit::Rate("ops/s"),
        value: |r| Some(r.doc["threads"].as_array()?.iter().filter_map(|t| t["ops_per_sec"].as_f64()).sum()),
    },
    Row {
        name: "Kswapd CPU",
        unit: Unit::Seconds,
        value: |r| r.doc["reclaim"]["kswapd_cpu_ns"].as_f64().map(|ns| ns / 1e9),
    },
    Row {
        name: "Direct reclaim CPU",
        unit: Unit::Seconds,
        value: |r| r.doc["reclaim"]["direct_reclaim_ns"].as_f64().map(|ns| ns / 1e9),
    },
    Row {
        name: "PSI memory some",
        unit: Unit::Seconds,
        value: |r| r.doc["psi"]["memory"]["some"]["total_us"].as_f64().map(|us| us / 1e6),
    },
    Row {
        name: "PSI memory full",
        unit: Unit::Seconds,
        value: |r| r.doc["psi"]["memory"]["full"]["total_us"].as_f64().map(|us| us / 1e6),
    },
    Row { name: "Minor Faults", unit: Unit::Count, value: |r| Some(r.c("pgfault")? - r.c("pgmajfault")?) },
    Row { name: "Major Faults", unit: Unit::Count, value: |r| r.c("pgmajfault") },
    Row { name: "Swap Ins", unit: Unit::Count, value: |r| r.c("pswpin") },
    Row { name: "Swap Outs", unit: Unit::Count, value: |r| r.c("pswpout") },
    Row { name: "Allocation stalls", unit: Unit::Count, value: |r| r.c("allocstall_normal") },
    Row { name: "Direct pages scanned", unit: Unit::Count, value: |r| r.c("pgscan_direct") },
    Row { name: "Kswapd pages scanned", unit: Unit::Count, value: |r| r.c("pgscan_kswapd") },
    Row { name: "Kswapd pages reclaimed", unit: Unit::Count, value: |r| r.c("pgsteal_kswapd") },
    Row { name: "Direct pages reclaimed", unit: Unit::Count, value: |r| r.c("pgsteal_direct") },
    Row { name: "Kswapd efficiency", unit: Unit::Percent, value: |r| r.ratio("pgsteal_kswapd", "pgscan_kswapd") },
    Row {
        name: "Kswapd velocity",
        unit: Unit::Rate("pages/s"),
        value: |r| Some(r.c("pgscan_kswapd")? / r.elapsed().filter(|e| *e > 0.0)?),
    },
    Row { name: "Direct efficiency", unit: Unit::Percent, value: |r| r.ratio("pgsteal_direct", "pgscan_direct") },
    Row {
        name: "Direct velocity",
        unit: Unit::Rate("pages/s"),
        value: |r| Some(r.c("pgscan_direct")? / r.elapsed().filter(|e| *e > 0.0)?),
    },
    Row {
        name: "Percentage direct scans",
        unit: Unit::Percent,
        value: |r| {
            let total = r.sum("pgscan_direct", "pgscan_kswapd")?;
            (total > 0.0).then(|| r.c("pgscan_direct").unwrap_or(0.0) * 100.0 / total)
        },
    },
    Row { name: "Page writes by reclaim", unit: Unit::Count, value: |r| r.c("nr_vmscan_write") },
    Row {
        name: "Page writes file",
        unit: Unit::Count,
        value: |r| Some((r.c("nr_vmscan_write")? - r.c("pswpout")?).max(0.0)),
    },
    Row { name: "Page writes anon", unit: Unit::Count, value: |r| r.c("pswpout") },
    Row { name: "Page reclaim immediate", unit: Unit::Count, value: |r| r.c("nr_vmscan_immediate_reclaim") },
    Row { name: "Page rotated", unit: Unit::Count, value: |r| r.c("pgrotated") },
    Row { name: "Anon scanned", unit: Unit::Count, value: |r| r.c("pgscan_anon") },
    Row { name: "Anon reclaimed", unit: Unit::Count, value: |r| r.c("pgsteal_anon") },
    Row { name: "Anon reclaim efficiency", unit: Unit::Percent, value: |r| r.ratio("pgsteal_anon", "pgscan_anon") },
    Row { name: "File scanned", unit: Unit::Count, value: |r| r.c("pgscan_file") },
    Row { name: "File reclaimed", unit: Unit::Count, value: |r| r.c("pgsteal_file") },
    Row { name: "File reclaim efficiency", unit: Unit::Percent, value: |r| r.ratio("pgsteal_file", "pgscan_file") },
    Row { name: "Anon refault", unit: Unit::Count, value: |r| r.c("workingset_refault_anon") },
    Row { name: "File refault", unit: Unit::Count, value: |r| r.c("workingset_refault_file") },
    Row {
        name: "Total refaults",
        unit: Unit::Count,
        value: |r| r.sum("workingset_refault_anon", "workingset_refault_file"),
    },
    Row { name: "Swap readahead", unit: Unit::Count, value: |r| r.c("swap_ra") },
    Row { name: "Swap readahead hits", unit: Unit::Percent, value: |r| r.ratio("swap_ra_hit", "swap_ra") },
    Row { name: "Sector Reads", unit: Unit::Sectors, value: |r| r.c("pgpgin").map(|kb| kb * 2.0) },
    Row { name: "Sector Writes", unit: Unit::Sectors, value: |r| r.c("pgpgout").map(|kb| kb * 2.0) },
];

fn load(path: &PathBuf) -> Result<Run> {
    let bytes = std::fs::read(path).map_err(|e| UsageError(format!("{}: {e}", path.display())))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        UsageError(format!(
            "{}: byte {}: not UTF-8 text, not a result document",
            path.display(),
            e.utf8_error().valid_up_to()
        ))
    })?;
    let doc: Value = serde_json::from_str(&text).map_err(|e| {
        UsageError(format!("{}: line {}, column {}: not a result document: {e}", path.display(), e.line(), e.column()))
    })?;
    if !doc["vmstat"].is_object() || !doc["sim"].is_object() {
        return Err(UsageError(format!(
            "{}: not a `reclaimsim run --json` document (no `vmstat` or `sim` object)",
            path.display()
        ))
        .into());
    }
    Ok(Run { path: path.clone(), doc })
}

/// One column: the runs of one kernel and its label.
struct Column {
    label: String,
    runs: Vec<Run>,
}

/// Labels that tell the columns apart: the given ones, else the profiles when
/// they differ, else the parts of the first files' paths that differ (the
/// directory in `a/run.json` vs `b/run.json`), numbered if still equal.
fn labels(groups: &[Vec<Run>], given: &[String]) -> Result<Vec<String>> {
    if !given.is_empty() {
        if given.len() != groups.len() {
            return Err(UsageError(format!("--labels: {} labels for {} columns", given.len(), groups.len())).into());
        }
        return Ok(given.to_vec());
    }
    let unique = |ls: &[String]| ls.iter().enumerate().all(|(i, l)| !ls[..i].contains(l));
    let profiles: Vec<String> =
        groups.iter().map(|g| g[0].doc["config"]["profile"].as_str().unwrap_or("").to_string()).collect();
    if unique(&profiles) && profiles.iter().all(|p| !p.is_empty()) {
        return Ok(profiles);
    }
    let parts: Vec<Vec<String>> = groups
        .iter()
        .map(|g| g[0].path.with_extension("").iter().map(|c| c.to_string_lossy().into_owned()).collect())
        .collect();
    let shortest = parts.iter().map(Vec::len).min().unwrap_or(0);
    let same_at = |i: usize| parts.iter().all(|p| p[i] == parts[0][i]);
    let prefix = (0..shortest).take_while(|&i| same_at(i)).count();
    let suffix = (0..shortest - prefix)
        .take_while(|&k| parts.iter().all(|p| p[p.len() - 1 - k] == parts[0][parts[0].len() - 1 - k]))
        .count();
    let mut out: Vec<String> = parts
        .iter()
        .map(|p| {
            let mid = p[prefix..p.len() - suffix].join("/");
            if mid.is_empty() {
                p.last().cloned().unwrap_or_default()
            } else {
                mid
            }
        })
        .collect();
    if !unique(&out) {
        out = out.iter().enumerate().map(|(i, l)| format!("{l}#{}", i + 1)).collect();
    }
    Ok(out)
}

/// One cell: the column's mean over its runs, their standard deviation, the
/// number of runs with a value, the change against the baseline column and
/// the t-test's p-value for it (with at least 2 runs on both sides).
#[derive(Clone, Debug, PartialEq)]
struct Cell {
    mean: Option<f64>,
    sd: f64,
    n: usize,
    change: Option<f64>,
    p: Option<f64>,
}

impl Cell {
    /// mmtests' mark: the change is significant at the 5% level.
    fn significant(&self) -> bool {
        self.p.is_some_and(|p| p < 0.05)
    }
}

/// Change against the baseline in mmtests' sign convention: plain relative change.
fn change(base: Option<f64>, v: Option<f64>) -> Option<f64> {
    let (b, v) = (base?, v?);
    if b == 0.0 {
        return (v == 0.0).then_some(0.0);
    }
    Some((v - b) * 100.0 / b.abs())
}

/// The table: for each row, one cell per column.
type Cells = Vec<(&'static Row, Vec<Cell>)>;

fn cells(columns: &[Column]) -> Cells {
    ROWS.iter()
        .map(|row| {
            let values: Vec<Vec<f64>> =
                columns.iter().map(|c| c.runs.iter().filter_map(|r| (row.value)(r)).collect()).collect();
            let means: Vec<Option<f64>> = values.iter().map(|v| (!v.is_empty()).then(|| stats::mean_sd(v).0)).collect();
            let cells: Vec<Cell> = values
                .iter()
                .zip(&means)
                .map(|(v, &mean)| Cell {
                    mean,
                    sd: if v.is_empty() { 0.0 } else { stats::mean_sd(v).1 },
                    n: v.len(),
                    change: change(means[0], mean),
                    p: stats::welch_p(&values[0], v),
                })
                .collect();
            (row, cells)
        })
        .filter(|(_, cs)| cs.iter().any(|c| c.mean.is_some()))
        .collect()
}

fn fmt_value(v: f64, unit: Unit) -> String {
    match unit {
        Unit::Count | Unit::Sectors => format!("{v:.0}"),
        Unit::Percent => format!("{v:.2}"),
        Unit::Rate(_) | Unit::Seconds => format!("{v:.3}"),
    }
}

/// The value part of a cell: mean, and `±sd` when the column has several runs.
fn value_text(row: &Row, c: &Cell, several: bool) -> String {
    match c.mean {
        Some(m) if several => format!("{} ±{}", fmt_value(m, row.unit), fmt_value(c.sd, row.unit)),
        Some(m) => fmt_value(m, row.unit),
        None => "-".into(),
    }
}

/// The change part, always 11 characters: `(  -25.00%)`, `*  -25.00%*` when
/// significant, `(      n/a)` without a baseline value to compare with.
fn change_text(c: &Cell) -> String {
    match (c.mean, c.change) {
        (Some(_), Some(ch)) if c.significant() => format!("*{ch:>+8.2}%*"),
        (Some(_), Some(ch)) => format!("({ch:>+8.2}%)"),
        _ => format!("({:>9})", "n/a"),
    }
}

fn render(columns: &[Column], table: &Cells, format: Format) -> String {
    let several: Vec<bool> = columns.iter().map(|c| c.runs.len() > 1).collect();
    let mut out = String::new();
    match format {
        Format::Text => {
            let name_w = table.iter().map(|(r, _)| r.name.len()).max().unwrap_or(0).max(8);
            let unit_w = table.iter().map(|(r, _)| r.unit.name().len()).max().unwrap_or(0).max(4);
            let widths: Vec<usize> = (0..columns.len())
                .map(|i| table.iter().map(|(row, cs)| value_text(row, &cs[i], several[i]).len()).max().unwrap_or(1))
                .collect();
            out += &format!("{:<name_w$} {:<unit_w$}", "", "unit");
            for (c, w) in columns.iter().zip(&widths) {
                let n = if c.runs.len() > 1 { format!(" (n={})", c.runs.len()) } else { String::new() };
                out += &format!("  {:>w$}", format!("{}{n}", c.label), w = w + 12);
            }
            out += "\n";
            for (row, cs) in table {
                out += &format!("{:<name_w$} {:<unit_w$}", row.name, row.unit.name());
                for (i, (c, w)) in cs.iter().zip(&widths).enumerate() {
                    out += &format!("  {:>w$} {}", value_text(row, c, several[i]), change_text(c), w = w);
                }
                out += "\n";
            }
            if several.iter().any(|s| *s) {
                out += "mean ±sample standard deviation; *x%*: Welch's t-test p < 0.05 against the first column\n";
            }
        }
        Format::Markdown => {
            out += "| | unit |";
            for c in columns {
                out += &format!(" {} |", c.label);
            }
            out += "\n|---|---|";
            out += &"---:|".repeat(columns.len());
            out += "\n";
            for (row, cs) in table {
                out += &format!("| {} | {} |", row.name, row.unit.name());
                for (i, c) in cs.iter().enumerate() {
                    out += &format!(" {} {} |", value_text(row, c, several[i]), change_text(c).replace('*', "\\*"));
                }
                out += "\n";
            }
        }
        Format::Csv => {
            out += "row,unit";
            for c in columns {
                out += &format!(",{0},{0} stddev,{0} change %,{0} significant", c.label);
            }
            out += "\n";
            for (row, cs) in table {
                out += &format!("{},{}", row.name, row.unit.name());
                for c in cs {
                    let f = |x: Option<f64>| x.map(|x| format!("{x}")).unwrap_or_default();
                    out += &format!(",{},{},{},{}", f(c.mean), c.sd, f(c.change), c.significant());
                }
                out += "\n";
            }
        }
        Format::Json => {
            let rows: Vec<Value> = table
                .iter()
                .map(|(row, cs)| {
                    json!({
                        "name": row.name,
                        "unit": row.unit.name(),
                        "values": cs.iter().map(|c| c.mean).collect::<Vec<_>>(),
                        "stddev": cs.iter().map(|c| c.sd).collect::<Vec<_>>(),
                        "runs": cs.iter().map(|c| c.n).collect::<Vec<_>>(),
                        "change_pct": cs.iter().map(|c| c.change).collect::<Vec<_>>(),
                        "p_value": cs.iter().map(|c| c.p).collect::<Vec<_>>(),
                    })
                })
                .collect();
            let cols: Vec<Value> = columns
                .iter()
                .map(|c| json!({"label": c.label, "files": c.runs.iter().map(|r| r.path.display().to_string()).collect::<Vec<_>>()}))
                .collect();
            out = serde_json::to_string_pretty(&json!({"columns": cols, "rows": rows})).expect("JSON values serialise")
                + "\n";
        }
    }
    out
}

/// `reclaimsim compare`.
pub fn compare(args: CompareArgs) -> Result<()> {
    if let Some(path) = &args.output {
        crate::runner::check_output(path, "--output")?;
    }
    let mut groups: Vec<Vec<Run>> = args.files.iter().map(|f| Ok(vec![load(f)?])).collect::<Result<_>>()?;
    for list in &args.runs {
        let runs: Vec<Run> =
            list.split(',').filter(|f| !f.is_empty()).map(|f| load(&PathBuf::from(f))).collect::<Result<_>>()?;
        if runs.is_empty() {
            return Err(UsageError(format!("--runs `{list}`: expected comma-separated result documents")).into());
        }
        groups.push(runs);
    }
    let labels = labels(&groups, &args.labels)?;
    let columns: Vec<Column> = groups.into_iter().zip(labels).map(|(runs, label)| Column { label, runs }).collect();
    let text = render(&columns, &cells(&columns), args.format);
    match &args.output {
        Some(path) => write_text_atomic(path, &text),
        None => {
            print!("{text}");
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(path: &str, profile: &str, vmstat: Value, ns: u64) -> Run {
        Run {
            path: path.into(),
            doc: json!({"config": {"profile": profile}, "vmstat": vmstat, "sim": {"virtual_ns": ns}, "threads": [], "reclaim": {}}),
        }
    }

    fn single(runs: Vec<Run>, labels: &[&str]) -> Vec<Column> {
        runs.into_iter().zip(labels).map(|(r, l)| Column { label: l.to_string(), runs: vec![r] }).collect()
    }

    #[test]
    fn derived_rows_and_changes() {
        let a = run(
            "a.json",
            "v5.7",
            json!({"pgscan_kswapd": 1000, "pgsteal_kswapd": 350, "pgscan_direct": 0, "pswpin": 200}),
            2_000_000_000,
        );
        let b = run(
            "b.json",
            "v5.9",
            json!({"pgscan_kswapd": 800, "pgsteal_kswapd": 328, "pgscan_direct": 0, "pswpin": 150}),
            2_000_000_000,
        );
        let cols = single(vec![a, b], &["vanilla", "patched"]);
        let t = cells(&cols);
        let get = |name: &str| t.iter().find(|(r, _)| r.name == name).map(|(_, v)| v.clone()).unwrap();
        let pair = |c: &Vec<Cell>| c.iter().map(|c| (c.mean, c.change)).collect::<Vec<_>>();
        assert_eq!(
            pair(&get("Kswapd efficiency")),
            vec![(Some(35.0), Some(0.0)), (Some(41.0), Some(6.0 * 100.0 / 35.0))]
        );
        assert_eq!(pair(&get("Kswapd velocity")), vec![(Some(500.0), Some(0.0)), (Some(400.0), Some(-20.0))]);
        assert_eq!(pair(&get("Swap Ins"))[1], (Some(150.0), Some(-25.0)));
        assert_eq!(pair(&get("Percentage direct scans"))[0], (Some(0.0), Some(0.0)));
        // Rows with no data in any run are left out.
        assert!(t.iter().all(|(r, _)| r.name != "Page rotated"));
        let text = render(&cols, &t, Format::Text);
        assert!(text.contains("Swap Ins") && text.contains("150 (  -25.00%)"), "{text}");
        assert!(text.contains("Kswapd velocity") && text.contains("pages/s"), "{text}");
        let md = render(&cols, &t, Format::Markdown);
        assert!(md.starts_with("| | unit | vanilla | patched |\n|---|---|---:|---:|\n"), "{md}");
        let csv = render(&cols, &t, Format::Csv);
        assert!(csv.contains("Swap Ins,,200,0,0,false,150,0,-25,false"), "{csv}");
    }

    #[test]
    fn zero_baseline_rows_stay_aligned() {
        let a = run("a.json", "v5.7", json!({"pswpin": 0, "pswpout": 1000}), 1_000_000_000);
        let b = run("b.json", "v5.9", json!({"pswpin": 7, "pswpout": 999}), 1_000_000_000);
        let cols = single(vec![a, b], &["v5.7", "v5.9"]);
        let text = render(&cols, &cells(&cols), Format::Text);
        let line = |name: &str| text.lines().find(|l| l.starts_with(name)).unwrap().to_string();
        // The change column ends at the same place whether the baseline was 0 or not.
        assert_eq!(line("Swap Ins").len(), line("Swap Outs").len(), "{text}");
        assert!(line("Swap Ins").ends_with("(      n/a)"), "{text}");
    }

    #[test]
    fn labels_tell_columns_apart() {
        let same = |p: &str| vec![run(p, "v6.2", json!({}), 1)];
        let groups = vec![same("a/run.json"), same("b/run.json")];
        assert_eq!(labels(&groups, &[]).unwrap(), ["a", "b"]);
        let groups = vec![vec![run("x/run.json", "v5.7", json!({}), 1)], vec![run("x/run.json", "v5.9", json!({}), 1)]];
        assert_eq!(labels(&groups, &[]).unwrap(), ["v5.7", "v5.9"]);
        let groups = vec![same("r.json"), same("r.json")];
        assert_eq!(labels(&groups, &[]).unwrap(), ["r#1", "r#2"]);
        assert!(labels(&groups, &["only-one".into()]).is_err());
    }

    #[test]
    fn several_runs_give_mean_deviation_and_a_significance_mark() {
        let col = |label: &str, swapins: &[u64]| Column {
            label: label.into(),
            runs: swapins.iter().map(|&n| run("r.json", label, json!({"pswpin": n}), 1_000_000_000)).collect(),
        };
        let cols = vec![col("base", &[100, 102, 98]), col("patch", &[150, 149, 151]), col("same", &[99, 103, 98])];
        let t = cells(&cols);
        let swap = &t.iter().find(|(r, _)| r.name == "Swap Ins").unwrap().1;
        assert_eq!((swap[0].mean, swap[0].sd, swap[0].n), (Some(100.0), 2.0, 3));
        assert!(swap[1].significant() && !swap[2].significant(), "{swap:?}");
        let text = render(&cols, &t, Format::Text);
        assert!(text.contains("150 ±1 *  +50.00%*"), "{text}");
        assert!(text.contains("base (n=3)"), "{text}");
    }
}
