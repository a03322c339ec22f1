//! `reclaimsim.mrc`'s core: the runs of a miss-ratio curve on parallel
//! threads (`experiment::mrc`), with the GIL released.

use crate::BadInput;
use experiment::mrc::{curve, MrcRequest, PageSample};
use experiment::Request;
use pyo3::prelude::*;
use std::path::PathBuf;

/// The miss-ratio curve of `workloads` and/or the trace at `trace` under
/// `profile` with `settings` and `seed`: one run per memory size in `sizes`
/// (bytes) on `jobs` threads; with `sample`, sampled mode at that rate; with
/// `lru` and a trace, the trace's LRU misses at each size. Returns the curve
/// as JSON text (`experiment::mrc::Curve::json`).
#[pyfunction]
#[pyo3(signature = (workloads, profile, settings, seed, sizes, trace=None, sample=None, jobs=1, lru=true))]
#[allow(clippy::too_many_arguments)]
pub fn mrc(
    py: Python<'_>,
    workloads: Vec<String>,
    profile: String,
    settings: Vec<String>,
    seed: u64,
    sizes: Vec<u64>,
    trace: Option<PathBuf>,
    sample: Option<f64>,
    jobs: usize,
    lru: bool,
) -> PyResult<String> {
    let sample = match sample {
        Some(r) => Some(
            PageSample::new(r).ok_or_else(|| BadInput::new_err(format!("sample {r}: expected a rate in (0, 1]")))?,
        ),
        None => None,
    };
    let base = Request { workloads, profile, settings, seed, timeseries_ns: None };
    let req = MrcRequest { base, trace, sizes, sample };
    let curve = py.detach(|| curve(&req, jobs.max(1), lru)).map_err(|e| BadInput::new_err(e.0))?;
    Ok(curve.json().to_string())
}
