//! `reclaimsim._core`: the Rust core of the `reclaimsim` Python package.
//!
//! Layer: a front end beside the command line. Runs are prepared and their
//! result documents written by the `experiment` crate, exactly as `reclaimsim
//! run --json` does, so the Python result of a run equals the CLI's JSON.
//! A run without a plug-in releases the GIL; a run with a policy plug-in
//! (`plugin.rs`) calls into Python and holds it.
#![deny(missing_docs)]

mod mrc;
mod plugin;
mod reproduce;
mod views;

use experiment::{InputError, Request};
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use std::path::{Path, PathBuf};
use std::time::Instant;

create_exception!(_core, BadInput, PyValueError, "Bad input: unknown profile, setting, workload or value.");
create_exception!(_core, SimulationError, PyRuntimeError, "The run could not complete (out of memory).");

/// Why a run failed, before it becomes a Python exception.
enum Failure {
    Input(InputError),
    Sim(engine::SimError),
}

impl From<Failure> for PyErr {
    fn from(f: Failure) -> PyErr {
        match f {
            Failure::Input(e) => BadInput::new_err(e.0),
            Failure::Sim(e) => SimulationError::new_err(e.to_string()),
        }
    }
}

/// Runs a prepared simulation, with `trace` replaying in it if given;
/// returns the result document as JSON text.
fn execute(p: experiment::Prepared, trace: Option<experiment::TraceRun>) -> Result<String, Failure> {
    let started = Instant::now();
    let report = p.builder.build().run(&mut |_| {}).map_err(Failure::Sim)?;
    let mut doc = p.info.result_json(&report, started.elapsed().as_secs_f64());
    if let Some(t) = trace {
        doc["trace"] = t.json(&t.outcome().map_err(Failure::Input)?);
    }
    Ok(doc.to_string())
}

/// Prepares `req`, adding the trace at `trace` as one more thread if given.
fn prepare(
    req: &Request,
    trace: Option<&Path>,
) -> Result<(experiment::Prepared, Option<experiment::TraceRun>), Failure> {
    let mut p = experiment::prepare(req).map_err(Failure::Input)?;
    let t = trace.map(|path| p.add_trace(path, None)).transpose().map_err(Failure::Input)?;
    Ok((p, t))
}

/// Runs `workloads` side by side under `profile` with `settings` (`KEY=VALUE`
/// strings) and `seed`; samples every `timeseries_ns` of virtual time if given;
/// replays the reclaimsim trace at `trace` as one more thread if given;
/// with `policy`, a Python object with the policy methods replaces the
/// configured reclaim policy. Returns the result document as JSON text.
#[pyfunction]
#[pyo3(signature = (workloads, profile, settings, seed, timeseries_ns=None, policy=None, trace=None))]
#[allow(clippy::too_many_arguments)]
fn run(
    py: Python<'_>,
    workloads: Vec<String>,
    profile: String,
    settings: Vec<String>,
    seed: u64,
    timeseries_ns: Option<u64>,
    policy: Option<Py<PyAny>>,
    trace: Option<PathBuf>,
) -> PyResult<String> {
    let req = Request { workloads, profile, settings, seed, timeseries_ns };
    match policy {
        None => Ok(py.detach(move || prepare(&req, trace.as_deref()).and_then(|(p, t)| execute(p, t)))?),
        Some(obj) => {
            let (mut p, t) = prepare(&req, trace.as_deref())?;
            let (adapter, failed) = plugin::PyPolicy::new(py, obj, &p.info.config.reclaim)?;
            p.info.plugin = Some(adapter.label().to_string());
            p.builder.set_policy(Box::new(adapter));
            let result = execute(p, t);
            // A plug-in's own exception explains the run's end better than what followed it.
            if let Some(e) = failed.take() {
                return Err(e);
            }
            Ok(result?)
        }
    }
}

/// The Python module.
/// The `reclaimsim` command line on `args` (program name first); returns its exit code.
/// The Python package's `reclaimsim` command (`python -m reclaimsim`) calls it.
#[pyfunction]
fn cli(py: Python<'_>, args: Vec<String>) -> u8 {
    py.detach(|| reclaimsim_cli::main_with(args))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(cli, m)?)?;
    m.add_function(wrap_pyfunction!(mrc::mrc, m)?)?;
    m.add_function(wrap_pyfunction!(reproduce::reproduce, m)?)?;
    m.add("BadInput", m.py().get_type::<BadInput>())?;
    m.add("SimulationError", m.py().get_type::<SimulationError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("__commit__", experiment::COMMIT)?;
    Ok(())
}
