//! Time series of a reproduction's headline runs, for the report's charts.
//!
//! When a report is asked for, the first batch of variants a reproduction runs
//! (the runs behind its first, headline table) is sampled every [`SAMPLE_NS`]
//! of virtual time; later batches run unsampled (see `Ctx::run_variants`).
//! Sampling does not change a run's results (the engine's samples only read state).

use engine::{Nanos, Timeseries};

/// Virtual time between samples: 10 ms (charts thin them to a few hundred points).
pub const SAMPLE_NS: Nanos = 10_000_000;

/// One sampled run of a variant.
#[derive(Debug, Clone)]
pub struct SampledRun {
    /// The variant's column heading.
    pub label: String,
    /// The kernel it ran: the profile, then its settings (`v6.2 vma_ra_enabled=0`).
    pub kernel: String,
    /// Its workload specifications (runs with the same ones form a chart).
    pub workloads: Vec<String>,
    /// The samples.
    pub series: Timeseries,
}

/// The runs grouped by workloads (one experiment under each variant), in first-seen order.
pub fn groups(runs: &[SampledRun]) -> Vec<Vec<&SampledRun>> {
    let mut out: Vec<Vec<&SampledRun>> = Vec::new();
    for r in runs {
        match out.iter_mut().find(|g| g[0].workloads == r.workloads) {
            Some(g) => g.push(r),
            None => out.push(vec![r]),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(label: &str, workload: &str) -> SampledRun {
        SampledRun {
            label: label.into(),
            kernel: String::new(),
            workloads: vec![workload.into()],
            series: Timeseries { interval_ns: 1, rows: Vec::new() },
        }
    }

    #[test]
    fn runs_of_one_experiment_share_a_group() {
        let runs = [run("v1/a", "x"), run("v2/a", "x"), run("v1/b", "y"), run("v2/b", "y")];
        let g = groups(&runs);
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].iter().map(|r| r.label.as_str()).collect::<Vec<_>>(), ["v1/a", "v2/a"]);
        assert_eq!(g[1][1].label, "v2/b");
    }
}
