//! A reproduction as text (the seed's figures beside ours, the changes and
//! both verdicts) and as JSON (tables, flat claims, summaries).

use super::claims::{Reproduction, Summary};
use serde_json::{json, Value};
use std::fmt::Write;

/// A figure with as many decimals as it deserves.
pub fn fmt_value(v: f64) -> String {
    if v.abs() >= 1000.0 || v == v.trunc() {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// The relative change from the first to the last value, as `+12.3%` (`-` from zero).
pub fn fmt_change(values: &[f64]) -> String {
    match super::Metric::change(values) {
        Some(c) => format!("{:+.1}%", c * 100.0),
        None => "-".to_string(),
    }
}

/// The change of the seed's figures, first to last (`-` where one is missing).
pub fn fmt_seed_change(seed: &[Option<f64>]) -> String {
    match (seed.first().copied().flatten(), seed.last().copied().flatten()) {
        (Some(a), Some(b)) => fmt_change(&[a, b]),
        _ => "-".into(),
    }
}

/// Said under a table whose rows are not counted.
pub const NOT_JUDGED: &str =
    "shown for comparison: the seed's claims are counted on the table of the kernels it measured";

/// Every table of a reproduction as text, with its summary line.
pub fn render(r: &Reproduction) -> String {
    let mut out = String::new();
    for t in &r.tables {
        let _ = writeln!(out, "{}: {}", r.name, t.title);
        let n = t.variants.len();
        let mut header = format!("{:<26}", "");
        for v in &t.variants {
            header += &format!(" {:>12}", format!("seed {v}"));
        }
        header += &format!(" {:>9}", "seed chg");
        for v in &t.variants {
            header += &format!(" {:>12}", v);
        }
        let _ = writeln!(out, "{header} {:>9}  direction / size", "ours chg");
        for m in &t.metrics {
            let mut line = format!("{:<26}", m.name);
            for i in 0..n {
                let v = m.seed.get(i).copied().flatten();
                line += &format!(" {:>12}", v.map(fmt_value).unwrap_or_else(|| "-".into()));
            }
            line += &format!(" {:>9}", fmt_seed_change(&m.seed));
            for i in 0..n {
                line += &format!(" {:>12}", m.ours.get(i).map(|v| fmt_value(*v)).unwrap_or_else(|| "-".into()));
            }
            let ours = if m.ours.is_empty() { "-".into() } else { fmt_change(&m.ours) };
            line += &format!(" {ours:>9}  {}", m.direction().name());
            if let Some(s) = m.size() {
                line += &format!(" / {}", s.name());
            }
            let _ = writeln!(out, "{line}");
        }
        for note in &t.notes {
            let _ = writeln!(out, "  note: {note}");
        }
        if !t.judged {
            let _ = writeln!(out, "  note: {NOT_JUDGED}");
        }
        let _ = writeln!(out);
    }
    let _ = writeln!(out, "{}: {}", r.name, r.summary().line());
    for (t, m) in r.headlines() {
        let size = m.size().map_or("-", |s| s.name());
        let (seed, ours) = (fmt_seed_change(&m.seed), fmt_change(&m.ours));
        let _ = writeln!(
            out,
            "  headline {} ({}): seed {seed}, ours {ours}: {} / {size}",
            m.name,
            short(&t.title),
            m.direction().name()
        );
    }
    let _ = writeln!(out);
    out
}

/// A table's title up to its first colon or parenthesis.
fn short(title: &str) -> &str {
    title.split([':', '(']).next().unwrap_or(title).trim()
}

/// A reproduction's headline rows as JSON.
fn headlines_json(r: &Reproduction) -> Vec<Value> {
    r.headlines()
        .iter()
        .map(|(t, m)| {
            json!({
                "table": t.title,
                "row": m.name,
                "seed_change": fmt_seed_change(&m.seed),
                "ours_change": fmt_change(&m.ours),
                "direction": m.direction().name(),
                "size": m.size().map(|s| s.name()),
            })
        })
        .collect()
}

/// One reproduction's tables as JSON.
fn tables_json(r: &Reproduction) -> Value {
    json!({
        "seed": r.name,
        "summary": r.summary().json(),
        "headlines": headlines_json(r),
        "tables": r.tables.iter().map(|t| json!({
            "title": t.title,
            "judged": t.judged,
            "variants": t.variants,
            "notes": t.notes,
            "metrics": t.metrics.iter().map(|m| json!({
                "name": m.name,
                "seed": m.seed,
                "ours": m.ours,
                "direction": m.direction().name(),
                "size": m.size().map(|s| s.name()),
                "source": m.source,
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

/// The overall summary of several reproductions.
pub fn overall(reproductions: &[Reproduction]) -> Summary {
    reproductions.iter().map(Reproduction::summary).fold(Summary::default(), |a, b| a + b)
}

/// The document `reproduce --json` writes: `seeds` (tables per seed), the flat
/// `claims` list, and `summary` per seed and `overall`.
pub fn reproductions_json(reproductions: &[Reproduction]) -> Value {
    let mut summary = serde_json::Map::new();
    for r in reproductions {
        summary.insert(r.name.to_string(), r.summary().json());
    }
    summary.insert("overall".into(), overall(reproductions).json());
    json!({
        "seeds": reproductions.iter().map(tables_json).collect::<Vec<_>>(),
        "claims": reproductions.iter().flat_map(Reproduction::claims_json).collect::<Vec<_>>(),
        "summary": summary,
    })
}
