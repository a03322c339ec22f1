//! Printing a reproduction: the seed's figures beside ours, with the change and
//! whether its direction agrees.

use super::{Expect, Metric, Reproduction};
use serde_json::{json, Value};

/// A figure with as many decimals as it deserves.
pub fn fmt_value(v: f64) -> String {
    if v.abs() >= 1000.0 || v == v.trunc() {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// The relative change from the first to the last value, as `+12.3%`.
pub fn fmt_change(values: &[f64]) -> String {
    match Metric::change(values) {
        Some(c) => format!("{:+.1}%", c * 100.0),
        None => "-".to_string(),
    }
}

/// Prints every table of a reproduction to stdout.
pub fn print_reproduction(r: &Reproduction) {
    for t in &r.tables {
        println!("{}: {}", r.name, t.title);
        let n = t.variants.len();
        let mut header = format!("{:<24}", "");
        for v in &t.variants {
            header += &format!(" {:>12}", format!("seed {v}"));
        }
        header += &format!(" {:>9}", "seed chg");
        for v in &t.variants {
            header += &format!(" {:>12}", v);
        }
        header += &format!(" {:>9}  {}", "ours chg", "direction");
        println!("{header}");
        for m in &t.metrics {
            let mut line = format!("{:<24}", m.name);
            for i in 0..n {
                line +=
                    &format!(" {:>12}", m.seed.get(i).copied().flatten().map(fmt_value).unwrap_or_else(|| "-".into()));
            }
            let seed_vals: Option<Vec<f64>> = m.seed.iter().copied().collect();
            line += &format!(" {:>9}", seed_vals.map(|s| fmt_change(&s)).unwrap_or_else(|| "-".into()));
            for v in &m.ours {
                line += &format!(" {:>12}", fmt_value(*v));
            }
            let want = match m.expect {
                Expect::Lower => "lower".to_string(),
                Expect::Higher => "higher".to_string(),
                Expect::Same(t) => format!("within {:.0}%", t * 100.0),
                Expect::NoWorse(t) => format!("no worse than -{:.0}%", t * 100.0),
            };
            line += &format!(" {:>9}  {} ({})", fmt_change(&m.ours), m.verdict().name(), want);
            println!("{line}");
        }
        for note in &t.notes {
            println!("  note: {note}");
        }
        println!();
    }
}

/// A reproduction as JSON.
pub fn reproduction_json(r: &Reproduction) -> Value {
    json!({
        "seed": r.name,
        "tables": r.tables.iter().map(|t| json!({
            "title": t.title,
            "variants": t.variants,
            "notes": t.notes,
            "metrics": t.metrics.iter().map(|m| json!({
                "name": m.name,
                "seed": m.seed,
                "ours": m.ours,
                "expect": format!("{:?}", m.expect),
                "verdict": m.verdict().name(),
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}
