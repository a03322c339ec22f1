//! `reclaimsim.reproduce`: a seed reproduction run through the `experiment`
//! crate's tables, as `reclaimsim reproduce SEED --json` writes it.

use crate::BadInput;
use experiment::reproduce::{self as repro, Options};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

/// Runs the reproduction `seed` (`seed-000` ... `seed-004`, or `all`) and
/// returns its document as JSON text: `seeds` (tables), `claims` and `summary`.
/// `jobs` runs at a time (default: the cores); results do not depend on it.
#[pyfunction]
#[pyo3(signature = (seed, quick=false, rng_seed=1, jobs=None))]
pub fn reproduce(py: Python<'_>, seed: String, quick: bool, rng_seed: u64, jobs: Option<usize>) -> PyResult<String> {
    let entries: Vec<&repro::Entry> = if seed == "all" {
        repro::ENTRIES.iter().collect()
    } else {
        let names: Vec<&str> = repro::ENTRIES.iter().map(|e| e.name).collect();
        vec![repro::find(&seed).ok_or_else(|| {
            BadInput::new_err(format!("unknown seed `{seed}`; expected one of: all, {}", names.join(", ")))
        })?]
    };
    if jobs == Some(0) {
        return Err(BadInput::new_err("jobs=0: expected at least 1"));
    }
    let jobs = jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let opts = Options { rng_seed, quick, jobs, sample: false };
    py.detach(move || {
        let done: Result<Vec<_>, _> = entries.iter().map(|e| repro::run(e, &opts, &|_| {}).map(|(r, _)| r)).collect();
        done.map(|all| repro::reproductions_json(&all).to_string())
            .map_err(|e| PyRuntimeError::new_err(format!("{e:#}")))
    })
}
