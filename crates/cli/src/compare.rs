//! `reclaimsim compare`: result documents side by side in mmtests' layout —
//! one column per run, each value with its change against the first run, the
//! vmstat rows under mmtests' names and the ratios mmtests derives from them.

use crate::runner::{write_text_atomic, UsageError};
use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use serde_json::{json, Value};
use std::path::PathBuf;

/// Arguments of `compare`.
#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Result documents written by `run --json` (the first is the baseline).
    #[arg(required = true, num_args = 1..)]
    pub files: Vec<PathBuf>,
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
    /// Comma-separated values: row, then per run value and change.
    Csv,
    /// One JSON object: runs, and rows with values and changes.
    Json,
}

/// How a row's values are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unit {
    Count,
    Percent,
    Rate,
    Seconds,
}

/// One row: mmtests' name and how to compute it from a result document.
struct Row {
    name: &'static str,
    unit: Unit,
    value: fn(&Run) -> Option<f64>,
}

/// A loaded result document.
struct Run {
    label: String,
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
    Row { name: "Elapsed", unit: Unit::Seconds, value: |r| r.elapsed() },
    Row {
        name: "Ops/sec",
        unit: Unit::Rate,
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
        unit: Unit::Rate,
        value: |r| Some(r.c("pgscan_kswapd")? / r.elapsed().filter(|e| *e > 0.0)?),
    },
    Row { name: "Direct efficiency", unit: Unit::Percent, value: |r| r.ratio("pgsteal_direct", "pgscan_direct") },
    Row {
        name: "Direct velocity",
        unit: Unit::Rate,
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
    Row { name: "Sector Reads", unit: Unit::Count, value: |r| r.c("pgpgin").map(|kb| kb * 2.0) },
    Row { name: "Sector Writes", unit: Unit::Count, value: |r| r.c("pgpgout").map(|kb| kb * 2.0) },
];

fn load(path: &PathBuf) -> Result<Run> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
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
    let label =
        path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| path.display().to_string());
    Ok(Run { label, doc })
}

fn fmt_value(v: f64, unit: Unit) -> String {
    match unit {
        Unit::Count => format!("{v:.0}"),
        Unit::Percent => format!("{v:.2}%"),
        Unit::Rate => format!("{v:.3}"),
        Unit::Seconds => format!("{v:.3}"),
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

/// The table: for each row, per run (value, change against the first run).
type Cells = Vec<(&'static Row, Vec<(Option<f64>, Option<f64>)>)>;

fn cells(runs: &[Run]) -> Cells {
    ROWS.iter()
        .map(|row| {
            let values: Vec<Option<f64>> = runs.iter().map(|r| (row.value)(r)).collect();
            let base = values[0];
            (row, values.iter().map(|&v| (v, change(base, v))).collect::<Vec<_>>())
        })
        .filter(|(_, vs)| vs.iter().any(|(v, _)| v.is_some()))
        .collect()
}

fn cell_text(row: &Row, (v, c): (Option<f64>, Option<f64>)) -> String {
    match (v, c) {
        (Some(v), Some(c)) => format!("{} ({:+.2}%)", fmt_value(v, row.unit), c),
        (Some(v), None) => fmt_value(v, row.unit),
        _ => "-".into(),
    }
}

fn render(runs: &[Run], table: &Cells, format: Format) -> String {
    let mut out = String::new();
    match format {
        Format::Text => {
            let widths: Vec<usize> = (0..runs.len())
                .map(|i| {
                    table
                        .iter()
                        .map(|(row, vs)| cell_text(row, vs[i]).len())
                        .chain([runs[i].label.len()])
                        .max()
                        .unwrap_or(8)
                })
                .collect();
            out += &format!("{:<26}", "");
            for (r, w) in runs.iter().zip(&widths) {
                out += &format!(" {:>w$}", r.label, w = w);
            }
            out += "\n";
            for (row, vs) in table {
                out += &format!("{:<26}", row.name);
                for (cell, w) in vs.iter().zip(&widths) {
                    out += &format!(" {:>w$}", cell_text(row, *cell), w = w);
                }
                out += "\n";
            }
        }
        Format::Markdown => {
            out += "| |";
            for r in runs {
                out += &format!(" {} |", r.label);
            }
            out += "\n|---|";
            out += &"---:|".repeat(runs.len());
            out += "\n";
            for (row, vs) in table {
                out += &format!("| {} |", row.name);
                for cell in vs {
                    out += &format!(" {} |", cell_text(row, *cell));
                }
                out += "\n";
            }
        }
        Format::Csv => {
            out += "row";
            for r in runs {
                out += &format!(",{0},{0} change %", r.label);
            }
            out += "\n";
            for (row, vs) in table {
                out += row.name;
                for (v, c) in vs {
                    let f = |x: Option<f64>| x.map(|x| format!("{x}")).unwrap_or_default();
                    out += &format!(",{},{}", f(*v), f(*c));
                }
                out += "\n";
            }
        }
        Format::Json => {
            let rows: Vec<Value> = table
                .iter()
                .map(|(row, vs)| json!({"name": row.name, "values": vs.iter().map(|c| c.0).collect::<Vec<_>>(), "change_pct": vs.iter().map(|c| c.1).collect::<Vec<_>>()}))
                .collect();
            out = serde_json::to_string_pretty(
                &json!({"runs": runs.iter().map(|r| &r.label).collect::<Vec<_>>(), "rows": rows}),
            )
            .expect("JSON values serialise")
                + "\n";
        }
    }
    out
}

/// `reclaimsim compare`.
pub fn compare(args: CompareArgs) -> Result<()> {
    let runs = args.files.iter().map(load).collect::<Result<Vec<_>>>()?;
    let text = render(&runs, &cells(&runs), args.format);
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

    fn run(label: &str, vmstat: Value, ns: u64) -> Run {
        Run {
            label: label.into(),
            doc: json!({"vmstat": vmstat, "sim": {"virtual_ns": ns}, "threads": [], "reclaim": {}}),
        }
    }

    #[test]
    fn derived_rows_and_changes() {
        let a = run(
            "vanilla",
            json!({"pgscan_kswapd": 1000, "pgsteal_kswapd": 350, "pgscan_direct": 0, "pswpin": 200}),
            2_000_000_000,
        );
        let b = run(
            "patched",
            json!({"pgscan_kswapd": 800, "pgsteal_kswapd": 328, "pgscan_direct": 0, "pswpin": 150}),
            2_000_000_000,
        );
        let runs = [a, b];
        let t = cells(&runs);
        let get = |name: &str| t.iter().find(|(r, _)| r.name == name).map(|(_, v)| v.clone()).unwrap();
        assert_eq!(get("Kswapd efficiency"), vec![(Some(35.0), Some(0.0)), (Some(41.0), Some(6.0 * 100.0 / 35.0))]);
        assert_eq!(get("Kswapd velocity"), vec![(Some(500.0), Some(0.0)), (Some(400.0), Some(-20.0))]);
        assert_eq!(get("Swap Ins")[1], (Some(150.0), Some(-25.0)));
        assert_eq!(get("Percentage direct scans")[0], (Some(0.0), Some(0.0)));
        // Rows with no data in any run are left out.
        assert!(t.iter().all(|(r, _)| r.name != "Page rotated"));
        let text = render(&runs, &t, Format::Text);
        assert!(text.contains("Swap Ins") && text.contains("150 (-25.00%)"), "{text}");
        let md = render(&runs, &t, Format::Markdown);
        assert!(md.starts_with("| | vanilla | patched |\n|---|---:|---:|\n"), "{md}");
        let csv = render(&runs, &t, Format::Csv);
        assert!(csv.contains("Swap Ins,200,0,150,-25"), "{csv}");
    }
}
