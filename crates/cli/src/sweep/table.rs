//! The sweep's table: one row per run, built from the per-run result files.
//!
//! Columns: `index`, `run` (id), `workloads`, `trace` (its path, or empty),
//! `profile`, one per swept
//! setting, `seed`, `status` (done, failed, missing), `error`, the run's
//! totals (`virtual_ns`, `events`, `accesses`, `ops` and `ops_per_sec`
//! summed over threads, `reclaim_stall_ns` summed, `latency_p50_ns`,
//! `latency_p99_ns` and `latency_max_ns` of the worst thread,
//! `kswapd_cpu_ns`, `direct_reclaim_ns`), then every `/proc/vmstat` counter.
//! Wall-clock time is left out: the table is a function of the inputs.

use super::spec::Sweep;
use anyhow::{Context, Result};
use serde_json::Value;
use std::path::Path;

/// Runs by status, as found when the table was written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Runs with a result.
    pub done: usize,
    /// Runs whose last attempt failed.
    pub failed: usize,
    /// Runs neither done nor failed (an interrupted sweep).
    pub missing: usize,
}

/// A CSV field, quoted when it holds a separator, quote or line break.
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// A JSON number or string as table text.
fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        v => v.to_string(),
    }
}

/// The totals columns of a finished run, by name.
fn totals(doc: &Value) -> Vec<(&'static str, Value)> {
    let threads = doc["threads"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    let sum_u = |k: &str| Value::from(threads.iter().filter_map(|t| t[k].as_u64()).sum::<u64>());
    let max_lat = |p: &str| Value::from(threads.iter().filter_map(|t| t["latency_ns"][p].as_u64()).max().unwrap_or(0));
    vec![
        ("virtual_ns", doc["sim"]["virtual_ns"].clone()),
        ("events", doc["sim"]["events"].clone()),
        ("accesses", doc["sim"]["accesses"].clone()),
        ("ops", sum_u("ops")),
        ("ops_per_sec", Value::from(threads.iter().filter_map(|t| t["ops_per_sec"].as_f64()).sum::<f64>())),
        ("reclaim_stall_ns", sum_u("reclaim_stall_ns")),
        ("latency_p50_ns", max_lat("p50")),
        ("latency_p99_ns", max_lat("p99")),
        ("latency_max_ns", max_lat("p100")),
        ("kswapd_cpu_ns", doc["reclaim"]["kswapd_cpu_ns"].clone()),
        ("direct_reclaim_ns", doc["reclaim"]["direct_reclaim_ns"].clone()),
    ]
}

/// Reads a file, treating absence as `None`.
fn read_optional(path: &Path) -> Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(s) => Ok(Some(s)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

/// Builds the table text from `runs_dir` (`ID.json`, `ID.error`).
pub fn build(sweep: &Sweep, runs_dir: &Path) -> Result<(String, Counts)> {
    let mut counts = Counts::default();
    let mut rows: Vec<(Vec<String>, Option<Value>)> = Vec::new();
    for r in &sweep.runs {
        let json = runs_dir.join(format!("{}.json", r.id));
        let doc = match read_optional(&json)? {
            Some(t) => Some(
                serde_json::from_str::<Value>(&t)
                    .with_context(|| format!("{}: not a result document", json.display()))?,
            ),
            None => None,
        };
        let error = if doc.is_some() { None } else { read_optional(&runs_dir.join(format!("{}.error", r.id)))? };
        let status = match (&doc, &error) {
            (Some(_), _) => {
                counts.done += 1;
                "done"
            }
            (None, Some(_)) => {
                counts.failed += 1;
                "failed"
            }
            (None, None) => {
                counts.missing += 1;
                "missing"
            }
        };
        let mut row = vec![
            r.index.to_string(),
            r.id.clone(),
            r.workloads.join(" + "),
            r.trace.clone().unwrap_or_default(),
            r.profile.clone(),
        ];
        row.extend(r.swept.iter().cloned());
        let first_line =
            error.as_deref().and_then(|e| e.lines().rev().find(|l| !l.trim().is_empty())).unwrap_or("").trim();
        row.extend([r.seed.to_string(), status.to_string(), first_line.to_string()]);
        rows.push((row, doc));
    }
    // vmstat columns: every counter any finished run reports, in report order.
    let mut vmstat: Vec<String> = Vec::new();
    for (_, doc) in &rows {
        if let Some(m) = doc.as_ref().and_then(|d| d["vmstat"].as_object()) {
            for k in m.keys() {
                if !vmstat.contains(k) {
                    vmstat.push(k.clone());
                }
            }
        }
    }
    let total_names: Vec<&str> = totals(&Value::Null).into_iter().map(|(k, _)| k).collect();
    let mut header: Vec<String> = ["index", "run", "workloads", "trace", "profile"].map(String::from).to_vec();
    header.extend(sweep.swept.iter().cloned());
    header.extend(["seed", "status", "error"].map(String::from));
    header.extend(total_names.iter().map(|s| s.to_string()));
    header.extend(vmstat.iter().cloned());
    let mut out = header.iter().map(|h| field(h)).collect::<Vec<_>>().join(",") + "\n";
    for (mut row, doc) in rows {
        match &doc {
            Some(d) => {
                row.extend(totals(d).iter().map(|(_, v)| text(v)));
                row.extend(vmstat.iter().map(|k| text(&d["vmstat"][k])));
            }
            None => row.extend(std::iter::repeat_n(String::new(), total_names.len() + vmstat.len())),
        }
        out += &(row.iter().map(|f| field(f)).collect::<Vec<_>>().join(",") + "\n");
    }
    Ok((out, counts))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_quoted_only_when_needed() {
        assert_eq!(field("ebizzy"), "ebizzy");
        assert_eq!(field("ebizzy:threads=8,alpha=1.3"), "\"ebizzy:threads=8,alpha=1.3\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }

    #[test]
    fn rows_follow_the_result_files() {
        let dir = std::env::temp_dir().join(format!("reclaimsim-table-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let sweep = super::super::spec::parse(
            Path::new("t.toml"),
            "workloads = [\"anon\"]\nseeds = [1, 2, 3]\n[settings]\nmemory = [\"16M\"]\n",
        )
        .unwrap();
        let doc = r#"{"sim": {"virtual_ns": 5, "events": 6, "accesses": 7}, "reclaim": {"kswapd_cpu_ns": 1, "direct_reclaim_ns": 2},
            "threads": [{"ops": 3, "ops_per_sec": 1.5, "reclaim_stall_ns": 4, "latency_ns": {"p50": 10, "p99": 20, "p100": 30}},
                        {"ops": 1, "ops_per_sec": 0.25, "reclaim_stall_ns": 1, "latency_ns": {"p50": 11, "p99": 19, "p100": 31}}],
            "vmstat": {"nr_free_pages": 9, "pswpin": 8}}"#;
        std::fs::write(dir.join(format!("{}.json", sweep.runs[0].id)), doc).unwrap();
        std::fs::write(dir.join(format!("{}.error", sweep.runs[1].id)), "reclaimsim: error: out of memory\n").unwrap();
        let (csv, counts) = build(&sweep, &dir).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(counts, Counts { done: 1, failed: 1, missing: 1 });
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines[0], "index,run,workloads,trace,profile,seed,status,error,virtual_ns,events,accesses,ops,ops_per_sec,reclaim_stall_ns,latency_p50_ns,latency_p99_ns,latency_max_ns,kswapd_cpu_ns,direct_reclaim_ns,nr_free_pages,pswpin");
        assert_eq!(lines[1], format!("0,{},anon,,v6.2,1,done,,5,6,7,4,1.75,5,11,20,31,1,2,9,8", sweep.runs[0].id));
        assert_eq!(
            lines[2],
            format!("1,{},anon,,v6.2,2,failed,reclaimsim: error: out of memory,,,,,,,,,,,,,", sweep.runs[1].id)
        );
        assert!(lines[3].contains(",3,missing,"));
    }
}
