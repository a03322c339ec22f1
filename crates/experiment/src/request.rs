//! Run requests and their resolution into a simulation.

use crate::document::RunInfo;
use crate::{limits, suggest};
use engine::config::{format_size, SETTINGS};
use engine::{Config, Nanos, SimBuilder};
use std::fmt;
use workload::WorkloadSpec;

/// What to run, as the command line's `run` arguments spell it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Request {
    /// Workload specifications, `NAME[:key=value,...]`, run side by side.
    pub workloads: Vec<String>,
    /// Kernel profile name.
    pub profile: String,
    /// Settings as `KEY=VALUE`, applied in order over the profile.
    pub settings: Vec<String>,
    /// Random seed of the workloads.
    pub seed: u64,
    /// Sample the machine every this many ns of virtual time.
    pub timeseries_ns: Option<Nanos>,
}

/// Bad input in a request: an unknown profile, setting, workload or value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputError(pub String);

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InputError {}

/// A resolved request: what the result document will say, and the machine
/// with its workloads, ready to build.
pub struct Prepared {
    /// Configuration and workloads with every value resolved.
    pub info: RunInfo,
    /// The machine with its threads; [`SimBuilder::build`] makes the simulation.
    pub builder: SimBuilder,
}

/// Resolves `req`: the profile, then each setting in order, then each workload
/// (the `i`-th with stream `i` of the seed).
pub fn prepare(req: &Request) -> Result<Prepared, InputError> {
    let err = |m: String| InputError(m);
    if engine::profile::find(&req.profile).is_none() {
        let names = engine::profile::PROFILES.iter().map(|p| p.name);
        return Err(err(format!(
            "--profile: {}",
            suggest::unknown("profile", &req.profile, names, "reclaimsim profiles")
        )));
    }
    let mut config = Config::for_profile(&req.profile).map_err(|e| err(e.to_string()))?;
    for s in &req.settings {
        let (k, v) = s.split_once('=').ok_or_else(|| err(format!("--set `{s}`: expected KEY=VALUE")))?;
        let key = k.trim();
        if !key.starts_with("cgroup.") && !SETTINGS.iter().any(|st| st.key == key) {
            let keys = SETTINGS.iter().map(|st| st.key);
            return Err(err(format!("--set {s}: {}", suggest::unknown("setting", key, keys, "reclaimsim settings"))));
        }
        config.set(key, v.trim()).map_err(|e| err(format!("--set {s}: {e}")))?;
    }
    if req.timeseries_ns == Some(0) {
        return Err(err("timeseries interval must be positive".into()));
    }
    limits::check_devices(&config)?;
    config.validate().map_err(|e| err(e.to_string()))?;
    let what = format!("memory={} swap={}", format_size(config.memory_bytes), format_size(config.swap_bytes));
    limits::check_fits(&config, 0, &what, limits::host_memory())?;
    for w in &req.workloads {
        let name = w.split_once(':').map_or(w.as_str(), |(n, _)| n).trim();
        if !workload::WORKLOADS.iter().any(|d| d.name == name) {
            let names = workload::WORKLOADS.iter().map(|d| d.name);
            return Err(err(format!(
                "--workload {w}: {}",
                suggest::unknown("workload", name, names, "reclaimsim workloads")
            )));
        }
    }
    let mut builder = SimBuilder::new(config.clone()).map_err(|e| err(e.to_string()))?;
    let mut resolved = Vec::new();
    for (i, w) in req.workloads.iter().enumerate() {
        let spec = WorkloadSpec::parse(w).map_err(|e| err(format!("--workload {w}: {e}")))?;
        resolved.push(
            workload::add_workload(&mut builder, &spec, req.seed, i as u64)
                .map_err(|e| err(format!("--workload {w}: {e}")))?,
        );
    }
    if let Some(ns) = req.timeseries_ns {
        builder.sample_every(ns);
    }
    Ok(Prepared { info: RunInfo { config, workloads: resolved, seed: req.seed, plugin: None }, builder })
}
