//! `reclaimsim report RUN.json [--events FILE] -o report.html`: one
//! self-contained HTML page (no network at view time): the run's time series
//! as SVG charts, its counters, and, from an events file, the event timeline
//! (how often each event fired, in time buckets). The charts are drawn here,
//! so the page shows everything without scripts; a small inline script only
//! toggles series from the legends.

use crate::events::parse::read_all;
use crate::runner::{check_output, usage, write_text_atomic};
use anyhow::{Context, Result};
use clap::Args;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::PathBuf;

/// Arguments of `report`.
#[derive(Args, Debug)]
pub struct ReportArgs {
    /// The result document of a run (`run --json`; `--timeseries MS` adds the charts).
    pub run: PathBuf,
    /// The run's events file (`run --events`), for the event timeline.
    #[arg(long, value_name = "FILE")]
    pub events: Option<PathBuf>,
    /// The HTML file to write.
    #[arg(short = 'o', long = "output", value_name = "HTML")]
    pub output: PathBuf,
}

/// SIM-CHOICE: time buckets of the event timeline.
const BUCKETS: usize = 120;
/// Series colours (one per series of a chart).
const COLOURS: [&str; 6] = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"];
/// The charts: title and the time-series columns drawn in it.
const CHARTS: [(&str, &[&str]); 4] = [
    ("Free memory (pages)", &["nr_free_pages"]),
    ("LRU lists (pages)", &["nr_inactive_anon", "nr_active_anon", "nr_inactive_file", "nr_active_file"]),
    (
        "Refaults and swap-ins (cumulative)",
        &["workingset_refault_anon", "workingset_refault_file", "pswpin", "pgmajfault"],
    ),
    ("Reclaim (cumulative pages)", &["pgscan_kswapd", "pgsteal_kswapd", "pgscan_direct", "pgsteal_direct"]),
];

/// Escapes text for HTML.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// One line chart of `series` (name, points (x, y)) over `x_max`, as inline SVG.
fn line_chart(title: &str, series: &[(&str, Vec<(f64, f64)>)], x_max: f64, x_unit: &str) -> String {
    let (w, h, left, bottom) = (760.0, 220.0, 70.0, 30.0);
    let y_max = series.iter().flat_map(|(_, p)| p.iter().map(|&(_, y)| y)).fold(1.0f64, f64::max);
    let x_max = x_max.max(1e-9);
    let mut s = format!(
        "<figure><figcaption>{}</figcaption><svg class=\"chart\" viewBox=\"0 0 {w} {}\" width=\"{w}\" height=\"{}\">",
        esc(title),
        h + 20.0,
        h + 20.0
    );
    let _ = write!(
        s,
        "<line x1=\"{left}\" y1=\"{0}\" x2=\"{w}\" y2=\"{0}\" stroke=\"#444\"/>\
         <line x1=\"{left}\" y1=\"0\" x2=\"{left}\" y2=\"{0}\" stroke=\"#444\"/>\
         <text x=\"{1}\" y=\"12\" text-anchor=\"end\">{2:.0}</text><text x=\"{1}\" y=\"{0}\" text-anchor=\"end\">0</text>\
         <text x=\"{w}\" y=\"{3}\" text-anchor=\"end\">{4:.3} {x_unit}</text>",
        h - bottom,
        left - 4.0,
        y_max,
        h - 12.0,
        x_max
    );
    for (i, (name, points)) in series.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let mut d = String::new();
        for &(x, y) in points {
            let px = left + (w - left) * x / x_max;
            let py = (h - bottom) * (1.0 - y / y_max);
            let _ = write!(d, "{px:.1},{py:.1} ");
        }
        let _ = write!(
            s,
            "<polyline class=\"s{i}\" fill=\"none\" stroke=\"{colour}\" stroke-width=\"1.5\" points=\"{}\"><title>{}</title></polyline>\
             <text class=\"legend\" data-series=\"s{i}\" x=\"{}\" y=\"{}\" fill=\"{colour}\">{}</text>",
            d.trim_end(),
            esc(name),
            left + 10.0 + 170.0 * i as f64,
            h + 14.0,
            esc(name)
        );
    }
    s.push_str("</svg></figure>\n");
    s
}

/// The time-series charts of the run's `timeseries`, or a note that it has none.
fn timeseries_section(doc: &Value) -> String {
    let ts = &doc["timeseries"];
    let (Some(cols), Some(rows)) = (ts["columns"].as_array(), ts["rows"].as_array()) else {
        return "<p>This run has no time series (run it with <code>--timeseries MS</code>).</p>\n".into();
    };
    let col = |name: &str| cols.iter().position(|c| c.as_str() == Some(name));
    let x_max = rows.last().and_then(|r| r[0].as_f64()).unwrap_or(0.0) / 1e9;
    let mut out = String::new();
    for (title, names) in CHARTS {
        let series: Vec<(&str, Vec<(f64, f64)>)> = names
            .iter()
            .filter_map(|&n| col(n).map(|c| (n, c)))
            .map(|(n, c)| {
                let pts = rows.iter().map(|r| (r[0].as_f64().unwrap_or(0.0) / 1e9, r[c].as_f64().unwrap_or(0.0)));
                (n, pts.collect())
            })
            .collect();
        if !series.is_empty() {
            out.push_str(&line_chart(title, &series, x_max, "s"));
        }
    }
    out
}

/// A two-column table of the non-zero numbers of object `v` (vmstat, reclaim, PSI).
fn counter_table(caption: &str, v: &Value) -> String {
    let mut rows = String::new();
    let mut flat = Vec::new();
    flatten("", v, &mut flat);
    for (k, n) in flat.iter().filter(|(_, n)| n.as_f64() != Some(0.0)) {
        let _ = write!(rows, "<tr><td>{}</td><td class=\"num\">{}</td></tr>", esc(k), esc(&n.to_string()));
    }
    format!("<table><caption>{}</caption>{rows}</table>\n", esc(caption))
}

fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, Value)>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                flatten(&if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") }, x, out);
            }
        }
        Value::Number(_) => out.push((prefix.to_string(), v.clone())),
        _ => {}
    }
}

/// The event timeline: per event, its count in each of [`BUCKETS`] time buckets.
/// The buckets span the run (`run_ns`) or the events, whichever is longer.
fn timeline_section(events: &[crate::events::parse::Line], run_ns: u64) -> String {
    let end = events.iter().map(|l| l.at_ns).max().unwrap_or(0).max(run_ns).max(1);
    let mut per: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    for l in events {
        let b = ((l.at_ns as u128 * BUCKETS as u128) / (end as u128 + 1)) as usize;
        per.entry(l.event.as_str()).or_insert_with(|| vec![0; BUCKETS])[b] += 1;
    }
    let (row_h, left, w) = (16.0, 260.0, 760.0);
    let bw = (w - left) / BUCKETS as f64;
    let mut s = format!(
        "<figure><figcaption>Event timeline: {} events over {:.3} s (darker: more events in the bucket)</figcaption>\
         <svg viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\">",
        events.len(),
        end as f64 / 1e9,
        h = row_h * per.len() as f64 + 4.0
    );
    for (i, (name, counts)) in per.iter().enumerate() {
        let y = i as f64 * row_h;
        let max = counts.iter().copied().max().unwrap_or(1).max(1) as f64;
        let total: u64 = counts.iter().sum();
        let _ = write!(s, "<text x=\"0\" y=\"{}\">{} ({total})</text>", y + 12.0, esc(name));
        for (b, &n) in counts.iter().enumerate().filter(|(_, &n)| n > 0) {
            let _ = write!(
                s,
                "<rect x=\"{:.1}\" y=\"{y}\" width=\"{:.1}\" height=\"{}\" fill=\"#1f77b4\" fill-opacity=\"{:.2}\"><title>{n}</title></rect>",
                left + b as f64 * bw,
                bw,
                row_h - 2.0,
                0.15 + 0.85 * n as f64 / max
            );
        }
    }
    s.push_str("</svg></figure>\n");
    s
}

/// The run's title from its result document.
fn title(doc: &Value) -> String {
    let c = &doc["config"];
    let workloads: Vec<&str> = c["workloads"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    let names: Vec<&str> = workloads.iter().map(|w| w.split(':').next().unwrap_or(w)).collect();
    format!(
        "reclaimsim report: {} on {}, seed {}",
        if names.is_empty() { "trace".to_string() } else { names.join(" + ") },
        c["profile"].as_str().unwrap_or("?"),
        c["seed"]
    )
}

/// The whole page.
fn render(doc: &Value, events: Option<&[crate::events::parse::Line]>) -> String {
    let t = esc(&title(doc));
    let settings = &doc["config"]["settings"];
    let mut body = format!(
        "<h1>{t}</h1><p>reclaimsim {} (commit {}); memory {}, swap {}, lru {}; {:.3} s simulated.</p>\n",
        esc(doc["reclaimsim"].as_str().unwrap_or("?")),
        esc(doc["commit"].as_str().unwrap_or("?")),
        esc(settings["memory"].as_str().unwrap_or("?")),
        esc(settings["swap"].as_str().unwrap_or("?")),
        esc(settings["lru"].as_str().unwrap_or("?")),
        doc["sim"]["virtual_ns"].as_f64().unwrap_or(0.0) / 1e9
    );
    body.push_str("<h2>Time series</h2>\n");
    body.push_str(&timeseries_section(doc));
    if let Some(ev) = events {
        body.push_str("<h2>Events</h2>\n");
        body.push_str(&timeline_section(ev, doc["sim"]["virtual_ns"].as_u64().unwrap_or(0)));
    }
    body.push_str("<h2>Counters</h2><div class=\"tables\">\n");
    body.push_str(&counter_table("/proc/vmstat", &doc["vmstat"]));
    body.push_str(&counter_table("reclaim", &doc["reclaim"]));
    body.push_str(&counter_table("pressure (PSI)", &doc["psi"]));
    body.push_str("</div>\n");
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{t}</title><style>{STYLE}</style></head>\
         <body>\n{body}<script>{SCRIPT}</script></body></html>\n"
    )
}

const STYLE: &str = "body{font-family:sans-serif;margin:1.5em;color:#222;background:#fff}svg{font-size:11px}\
figure{margin:1em 0}figcaption{font-weight:bold}.legend{cursor:pointer}.off{opacity:.15}\
.tables{display:flex;flex-wrap:wrap;gap:2em;align-items:flex-start}table{border-collapse:collapse;font-size:12px}\
caption{font-weight:bold;text-align:left}td{padding:1px 8px;border-bottom:1px solid #eee}.num{text-align:right}";

/// Clicking a legend entry hides or shows its series.
const SCRIPT: &str = "document.querySelectorAll('.legend').forEach(function(l){l.addEventListener('click',function(){\
var s=l.closest('svg').querySelector('polyline.'+l.dataset.series);s.classList.toggle('off');l.classList.toggle('off');});});";

/// `reclaimsim report`.
pub fn run(args: ReportArgs) -> Result<()> {
    check_output(&args.output, "-o")?;
    let label = args.run.display().to_string();
    let text = std::fs::read_to_string(&args.run).with_context(|| format!("reading {label}"))?;
    let doc: Value = serde_json::from_str(&text).map_err(|e| {
        usage(format!("{label}: line {}, column {}: {e} (expected a run's --json document)", e.line(), e.column()))
    })?;
    if !doc["vmstat"].is_object() {
        return Err(usage(format!("{label}: no `vmstat` object: expected the --json document of `reclaimsim run`")));
    }
    let events = match &args.events {
        Some(p) => {
            let label = p.display().to_string();
            let f = std::fs::File::open(p).with_context(|| format!("opening {label}"))?;
            Some(read_all(std::io::BufReader::new(f), &label).map_err(|e| usage(format!("{e:#}")))?)
        }
        None => None,
    };
    write_text_atomic(&args.output, &render(&doc, events.as_deref()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_has_title_charts_counters_and_timeline() {
        let doc: Value = serde_json::json!({
            "reclaimsim": "0.1.0", "commit": "abc",
            "config": {"profile": "v5.9", "seed": 4, "workloads": ["hotcold:cold=1.83x"], "settings": {"memory": "64M"}},
            "sim": {"virtual_ns": 2e9},
            "timeseries": {"columns": ["time_ns", "nr_free_pages"], "rows": [[0, 10], [1000000000, 5]]},
            "vmstat": {"pswpin": 7, "pswpout": 0}, "reclaim": {}, "psi": {}
        });
        let ev = crate::events::parse::read_all(
            "k-50 [000] ..... 1.000000: mm_vmscan_kswapd_wake: nid=0 order=0\n".as_bytes(),
            "test",
        )
        .unwrap();
        let html = render(&doc, Some(&ev));
        assert!(html.contains("<title>reclaimsim report: hotcold on v5.9, seed 4</title>"), "{html}");
        assert!(html.contains("<polyline class=\"s0\""), "no chart");
        assert!(html.contains("<td>pswpin</td><td class=\"num\">7</td>") && !html.contains("pswpout"));
        assert!(html.contains("mm_vmscan_kswapd_wake (1)"));
        assert!(!html.contains("http"), "the page must not reach the network");
    }
}
