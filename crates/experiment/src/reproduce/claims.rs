//! Rows, tables and the two verdicts every row gets, by one rule:
//!
//! - **direction**: each later column's change from the first column, the
//!   seed's and ours, is classed as up (more than +2%), down (less than -2%) or
//!   level; a change from zero is up or down by its sign. `agrees` when ours
//!   falls in the seed's class in every column (for a level seed change, a
//!   "no change" claim: ours within 2 points of it), `DISAGREES` otherwise; `zero`
//!   when all of ours are zero; `no seed figure` when the seed gives none to
//!   compare; `not modelled (S-xx)` when the model cannot produce the row.
//! - **size**: `within 2x` when, in every column, our change is between half
//!   and twice the seed's (for a seed change under 2%, a "no change" claim:
//!   ours within 2 points of it); `OUTSIDE 2x` otherwise, including changes
//!   from zero (no ratio); not judged where the seed's figures or ours are
//!   all zero (then the row is not within 2x either).
//!
//! A row is a claim when the seed gives a figure for its first column and a
//! later one; a claim is attempted unless it is not modelled.

use serde_json::{json, Value};

/// Below this relative change (2%) a change is level, and a level seed change is a "no change" claim.
pub const LEVEL: f64 = 0.02;

/// One row: the seed's figures per column and ours.
#[derive(Debug, Clone)]
pub struct Metric {
    /// Row name, using the kernel's or mmtests' names (`pswpin`, `ra_hit%`, `ops/s`).
    pub name: String,
    /// The seed's figures per column (`None` where the document gives none).
    pub seed: Vec<Option<f64>>,
    /// Our figures per column (empty when not modelled).
    pub ours: Vec<f64>,
    /// Where the seed's figures are: the quoted seed text or the table they come from.
    pub source: String,
    /// The simplification (docs/simplifications.md) that keeps the model from producing the row.
    pub not_modelled: Option<&'static str>,
}

impl Metric {
    /// A row the model produces.
    pub fn new(name: impl Into<String>, seed: Vec<Option<f64>>, ours: Vec<f64>, source: impl Into<String>) -> Metric {
        Metric { name: name.into(), seed, ours, source: source.into(), not_modelled: None }
    }

    /// A row of the seed the model cannot produce, for the reason `simplification` names.
    pub fn not_modelled(
        name: impl Into<String>,
        seed: Vec<Option<f64>>,
        source: &str,
        simplification: &'static str,
    ) -> Metric {
        Metric { name: name.into(), seed, ours: Vec::new(), source: source.into(), not_modelled: Some(simplification) }
    }

    /// Relative change from the first to the last value, or `None` when the first is zero.
    pub fn change(values: &[f64]) -> Option<f64> {
        let (first, last) = (*values.first()?, *values.last()?);
        (first != 0.0).then(|| (last - first) / first.abs())
    }

    /// The columns the seed gives beside its first: (index, seed first, seed value).
    fn seed_columns(&self) -> Vec<(usize, f64, f64)> {
        let Some(Some(first)) = self.seed.first() else { return Vec::new() };
        self.seed.iter().enumerate().skip(1).filter_map(|(i, v)| v.map(|v| (i, *first, v))).collect()
    }

    /// Whether the seed makes a claim on this row (a first figure and a later one).
    pub fn is_claim(&self) -> bool {
        !self.seed_columns().is_empty()
    }

    /// The direction verdict.
    pub fn direction(&self) -> Direction {
        if let Some(s) = self.not_modelled {
            return Direction::NotModelled(s);
        }
        let cols = self.seed_columns();
        if cols.is_empty() {
            return Direction::NoSeed;
        }
        if self.ours.iter().all(|v| *v == 0.0) {
            return Direction::Zero;
        }
        let first = self.ours[0];
        let agree = cols.iter().all(|&(i, s0, s)| {
            let ours = self.ours.get(i).copied().unwrap_or(0.0);
            match class(s0, s) {
                0 => within_2x(relative(s0, s), relative(first, ours)),
                c => c == class(first, ours),
            }
        });
        if agree {
            Direction::Agrees
        } else {
            Direction::Disagrees
        }
    }

    /// The size verdict (`None` for rows that are not attempted claims, and where the seed's figures or ours are all zero).
    pub fn size(&self) -> Option<Size> {
        if self.not_modelled.is_some() || !self.is_claim() {
            return None;
        }
        if self.ours.iter().all(|v| *v == 0.0) || self.seed.iter().flatten().all(|v| *v == 0.0) {
            return None;
        }
        let first = self.ours[0];
        let within = self.seed_columns().iter().all(|&(i, s0, s)| {
            let ours = self.ours.get(i).copied().unwrap_or(0.0);
            within_2x(relative(s0, s), relative(first, ours))
        });
        Some(if within { Size::Within } else { Size::Outside })
    }
}

/// Relative change from `first` to `last`: 0 when both are zero, infinite from zero.
fn relative(first: f64, last: f64) -> f64 {
    if first == 0.0 {
        if last == 0.0 {
            0.0
        } else {
            f64::INFINITY.copysign(last)
        }
    } else {
        (last - first) / first.abs()
    }
}

/// The class of a change: -1 down, 0 level, 1 up.
fn class(first: f64, last: f64) -> i8 {
    let c = relative(first, last);
    if c > LEVEL {
        1
    } else if c < -LEVEL {
        -1
    } else {
        0
    }
}

/// The size rule: ours within a factor 2 of the seed's change, or within 2 points of a level seed change.
fn within_2x(seed: f64, ours: f64) -> bool {
    if !seed.is_finite() || !ours.is_finite() {
        return false;
    }
    if seed.abs() < LEVEL {
        return (ours - seed).abs() <= LEVEL;
    }
    let ratio = ours / seed;
    (0.5..=2.0).contains(&ratio)
}

/// The direction verdict of a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Ours moves the seed's way in every column.
    Agrees,
    /// Ours moves another way in some column.
    Disagrees,
    /// Ours is zero in every column: the effect does not arise at our scale.
    Zero,
    /// The model cannot produce the row (the simplification that says why).
    NotModelled(&'static str),
    /// The seed gives no figure to compare (a row of ours only).
    NoSeed,
}

impl Direction {
    /// Its name in tables and JSON.
    pub fn name(self) -> String {
        match self {
            Direction::Agrees => "agrees".into(),
            Direction::Disagrees => "DISAGREES".into(),
            Direction::Zero => "zero".into(),
            Direction::NotModelled(s) => format!("not modelled ({s})"),
            Direction::NoSeed => "no seed figure".into(),
        }
    }
}

/// The size verdict of an attempted claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Size {
    /// Within 2x of the seed's change (within 2 points of a level one).
    Within,
    /// Outside.
    Outside,
}

impl Size {
    /// Its name in tables and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Size::Within => "within 2x",
            Size::Outside => "OUTSIDE 2x",
        }
    }
}

/// One table: columns, rows and remarks.
#[derive(Debug, Clone)]
pub struct Table {
    /// What the table shows and at what scale.
    pub title: String,
    /// Column headings.
    pub variants: Vec<String>,
    /// Rows.
    pub metrics: Vec<Metric>,
    /// Remarks printed under the table (scale-down, what differs from the seed's setup).
    pub notes: Vec<String>,
    /// Whether its rows count as the seed's claims (false: another kernel pair shown beside for comparison).
    pub judged: bool,
}

/// A finished reproduction: one or more tables.
#[derive(Debug, Clone)]
pub struct Reproduction {
    /// Seed name, e.g. `seed-004`.
    pub name: &'static str,
    /// Tables in the order the document gives them.
    pub tables: Vec<Table>,
    /// How many of its parameters are fitted (see `params`).
    pub fitted: usize,
}

impl Reproduction {
    /// A reproduction of `name` from its tables (its fitted parameters are counted by `run`).
    pub fn new(name: &'static str, tables: Vec<Table>) -> Reproduction {
        Reproduction { name, tables, fitted: 0 }
    }

    /// Its counts.
    pub fn summary(&self) -> Summary {
        let mut s = Summary { fitted_parameters: self.fitted, ..Summary::default() };
        for m in self.tables.iter().filter(|t| t.judged).flat_map(|t| &t.metrics).filter(|m| m.is_claim()) {
            s.claims += 1;
            if m.not_modelled.is_none() {
                s.attempted += 1;
            }
            s.direction_agrees += usize::from(m.direction() == Direction::Agrees);
            s.within_2x += usize::from(m.size() == Some(Size::Within));
        }
        s
    }

    /// Its claims as flat JSON objects.
    pub fn claims_json(&self) -> Vec<Value> {
        let mut out = Vec::new();
        for t in self.tables.iter().filter(|t| t.judged) {
            for m in t.metrics.iter().filter(|m| m.is_claim()) {
                out.push(json!({
                    "seed": self.name,
                    "table": t.title,
                    "row": m.name,
                    "columns": t.variants,
                    "seed_values": m.seed,
                    "ours_values": if m.not_modelled.is_some() { Value::Null } else { json!(m.ours) },
                    "direction": m.direction().name(),
                    "size": m.size().map(Size::name),
                    "source": m.source,
                }));
            }
        }
        out
    }
}

/// The headline claims (docs/seeds.md): seed, the start of the table's title, row.
/// Rows a quick run does not have (seed 004's 8-thread ebizzy) are left out there.
pub const HEADLINES: &[(&str, &str, &str)] = &[
    ("seed-000", "pgbench TPC-B, the series as posted", "total refaults"),
    ("seed-000", "pgbench TPC-B, the series as posted", "tps"),
    ("seed-000", "parallelio, the series as posted", "Hmean memcachetest-4361M"),
    ("seed-001", "vm-scalability", "ra_hit%"),
    ("seed-001", "vm-scalability", "throughput KB/s"),
    ("seed-001", "vm-scalability", "latency.average us"),
    ("seed-002", "tabs", "kswapd CPU s"),
    ("seed-002", "tabs", "refaults (pgmajfault)"),
    ("seed-002", "tabs", "direct reclaim p99 us"),
    ("seed-003", "memcachetest-2385M", "ops/s"),
    ("seed-003", "memcachetest-4055M", "ops/s"),
    ("seed-003", "totals", "Swap Outs"),
    ("seed-003", "totals", "Kswapd efficiency"),
    ("seed-004", "hot/cold", "pswpin"),
    ("seed-004", "ebizzy", "pswpin 1-1280-1.3"),
    ("seed-004", "ebizzy", "pswpin 8-1024-1.3"),
];

impl Reproduction {
    /// Its headline rows, with their tables, in the order of [`HEADLINES`].
    pub fn headlines(&self) -> Vec<(&Table, &Metric)> {
        HEADLINES
            .iter()
            .filter(|(seed, _, _)| *seed == self.name)
            .filter_map(|(_, title, row)| {
                self.tables
                    .iter()
                    .filter(|t| t.title.starts_with(title))
                    .find_map(|t| t.metrics.iter().find(|m| m.name == *row).map(|m| (t, m)))
            })
            .collect()
    }
}

/// Counts over claims.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    /// Rows with a seed claim.
    pub claims: usize,
    /// Of which the model produces.
    pub attempted: usize,
    /// Of which ours agree in direction.
    pub direction_agrees: usize,
    /// Of which ours are within 2x in size.
    pub within_2x: usize,
    /// Parameters fitted to a result rather than taken from a source.
    pub fitted_parameters: usize,
}

impl std::ops::Add for Summary {
    type Output = Summary;

    /// The sum of two summaries.
    fn add(self, o: Summary) -> Summary {
        Summary {
            claims: self.claims + o.claims,
            attempted: self.attempted + o.attempted,
            direction_agrees: self.direction_agrees + o.direction_agrees,
            within_2x: self.within_2x + o.within_2x,
            fitted_parameters: self.fitted_parameters + o.fitted_parameters,
        }
    }
}

impl Summary {
    /// As JSON.
    pub fn json(&self) -> Value {
        json!({
            "claims": self.claims,
            "attempted": self.attempted,
            "direction_agrees": self.direction_agrees,
            "within_2x": self.within_2x,
            "fitted_parameters": self.fitted_parameters,
        })
    }

    /// The one-line summary quoted in the docs.
    pub fn line(&self) -> String {
        let pct = |n: usize| if self.attempted == 0 { 0.0 } else { n as f64 * 100.0 / self.attempted as f64 };
        format!(
            "{} claims, {} attempted; direction agrees on {} ({:.0}%), within 2x on {} ({:.0}%); {} fitted parameters",
            self.claims,
            self.attempted,
            self.direction_agrees,
            pct(self.direction_agrees),
            self.within_2x,
            pct(self.within_2x),
            self.fitted_parameters
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(seed: &[f64], ours: &[f64]) -> Metric {
        Metric::new("x", seed.iter().map(|v| Some(*v)).collect(), ours.to_vec(), "t")
    }

    #[test]
    fn direction_and_size_follow_one_rule() {
        // +80% against +20%: the right direction but more than twice the size.
        let big = m(&[100.0, 120.0], &[10.0, 18.0]);
        assert_eq!((big.direction(), big.size()), (Direction::Agrees, Some(Size::Outside)));
        let close = m(&[100.0, 120.0], &[10.0, 13.0]);
        assert_eq!((close.direction(), close.size()), (Direction::Agrees, Some(Size::Within)));
        let wrong = m(&[100.0, 50.0], &[10.0, 12.0]);
        assert_eq!((wrong.direction(), wrong.size()), (Direction::Disagrees, Some(Size::Outside)));
        // A "no change" claim (-1.3%): ours within 2 points of it, and level.
        let level = m(&[23117.0, 22815.0], &[100.0, 100.5]);
        assert_eq!((level.direction(), level.size()), (Direction::Agrees, Some(Size::Within)));
        let moved = m(&[23117.0, 22815.0], &[100.0, 103.0]);
        assert_eq!((moved.direction(), moved.size()), (Direction::Disagrees, Some(Size::Outside)));
    }

    #[test]
    fn every_column_is_judged_against_the_first() {
        let prot_wrong = m(&[100.0, 90.0, 80.0], &[100.0, 110.0, 80.0]);
        assert_eq!(prot_wrong.direction(), Direction::Disagrees);
        let both = m(&[100.0, 90.0, 80.0], &[100.0, 88.0, 75.0]);
        assert_eq!((both.direction(), both.size()), (Direction::Agrees, Some(Size::Within)));
    }

    #[test]
    fn zeros_and_missing_figures_never_agree() {
        let zero = m(&[100.0, 50.0], &[0.0, 0.0]);
        assert_eq!((zero.direction(), zero.size()), (Direction::Zero, None));
        let seed_zero = m(&[0.0, 0.0], &[0.0, 0.0]);
        assert_eq!((seed_zero.direction(), seed_zero.size(), seed_zero.is_claim()), (Direction::Zero, None, true));
        let none = Metric::new("x", vec![None, None], vec![1.0, 2.0], "t");
        assert_eq!((none.direction(), none.size(), none.is_claim()), (Direction::NoSeed, None, false));
        let from_zero = m(&[0.0, 850.0], &[0.0, 10.0]);
        assert_eq!((from_zero.direction(), from_zero.size()), (Direction::Agrees, Some(Size::Outside)));
        let nm = Metric::not_modelled("THP splits", vec![Some(24.0), Some(0.0)], "t", "S-MM2");
        assert_eq!((nm.direction().name(), nm.size()), ("not modelled (S-MM2)".to_string(), None));
        let r = Reproduction::new(
            "seed-x",
            vec![Table {
                title: "t".into(),
                variants: vec![],
                metrics: vec![zero, none, nm, close()],
                notes: vec![],
                judged: true,
            }],
        );
        let s = r.summary();
        assert_eq!((s.claims, s.attempted, s.direction_agrees, s.within_2x), (3, 2, 1, 1));
        assert_eq!(r.claims_json().len(), 3);
    }

    fn close() -> Metric {
        m(&[100.0, 120.0], &[10.0, 13.0])
    }
}
