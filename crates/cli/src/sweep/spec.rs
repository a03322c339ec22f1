//! Sweep specifications (TOML) and their expansion into runs.
//!
//! ```toml
//! workloads = ["hotcold", ["ebizzy:threads=4", "fileloop:size=0.5x"]]  # a list = side by side
//! traces = ["lirs/sprite.rtrace"]  # optional: each trace replayed alone, like `run --trace`
//! profiles = ["v5.8", "v5.9"]
//! seeds = [1, 2]
//! timeseries_ms = 100            # optional: sample every run
//! [settings]                     # a list sweeps the key, a single value is fixed
//! memory = ["64M", "128M"]
//! swap = "ssd:256M"
//! ```
//!
//! Runs are the cartesian product (workloads, then traces) x profiles x
//! settings (in key order) x seeds, seeds varying fastest. A trace's path is
//! relative to the specification's folder. A run's id is a hash of its inputs
//! (for a trace: its absolute path and length in bytes), so a finished run is
//! recognised again when the specification grows.

use anyhow::{anyhow, bail, Context, Result};
use serde::Deserialize;
use std::path::Path;

/// A workload entry: one specification, or several run side by side.
#[derive(Deserialize, Clone, Debug)]
#[serde(untagged)]
enum WorkloadItem {
    One(String),
    Together(Vec<String>),
}

/// The file as written.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct SpecFile {
    #[serde(default)]
    workloads: Vec<WorkloadItem>,
    #[serde(default)]
    traces: Vec<String>,
    #[serde(default)]
    profiles: Vec<String>,
    #[serde(default)]
    seeds: Vec<u64>,
    timeseries_ms: Option<f64>,
    #[serde(default)]
    settings: toml::Table,
}

/// One run of a sweep.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSpec {
    /// Position in the sweep's order.
    pub index: usize,
    /// Hash of the inputs, 16 hex digits: the per-run file name.
    pub id: String,
    /// Workload specifications, side by side (none for a trace run).
    pub workloads: Vec<String>,
    /// The trace replayed, an absolute path.
    pub trace: Option<String>,
    /// Kernel profile.
    pub profile: String,
    /// Every setting, fixed and swept, as `KEY=VALUE`, in file order.
    pub settings: Vec<String>,
    /// Values of the swept settings, in the order of [`Sweep::swept`].
    pub swept: Vec<String>,
    /// Seed.
    pub seed: u64,
    /// Sampling interval, if the runs are sampled.
    pub timeseries_ns: Option<u64>,
}

/// An expanded sweep.
#[derive(Debug)]
pub struct Sweep {
    /// Names of the settings with more than one value: the table's columns.
    pub swept: Vec<String>,
    /// Every run, in order.
    pub runs: Vec<RunSpec>,
}

/// A TOML value as a setting value string (`"64M"`, `100`, `true`).
fn setting_value(key: &str, v: &toml::Value) -> Result<String> {
    Ok(match v {
        toml::Value::String(s) => s.clone(),
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::Float(f) => f.to_string(),
        toml::Value::Boolean(b) => (if *b { "1" } else { "0" }).to_string(),
        other => {
            bail!("settings.{key}: expected a string, number or boolean, or a list of them; found {}", other.type_str())
        }
    })
}

/// Settings with dotted keys written unquoted (`vm.swappiness = 60` is a
/// table `vm` in TOML) back as `("vm.swappiness", value)`, in file order.
fn flatten<'a>(prefix: &str, t: &'a toml::Table) -> Vec<(String, &'a toml::Value)> {
    t.iter()
        .flat_map(|(k, v)| match v {
            toml::Value::Table(inner) if !inner.is_empty() => flatten(&format!("{prefix}{k}."), inner),
            _ => vec![(format!("{prefix}{k}"), v)],
        })
        .collect()
}

/// A trace of the sweep: where it is and how long it is.
#[derive(Debug)]
struct Trace {
    path: String,
    bytes: u64,
}

/// `name` relative to the specification's folder, checked to be a readable
/// reclaimsim trace (its header).
fn resolve_trace(spec: &Path, name: &str) -> Result<Trace> {
    let dir = spec.parent().unwrap_or(Path::new(""));
    let full = std::path::absolute(dir.join(name)).with_context(|| format!("trace {name}"))?;
    let bytes = std::fs::metadata(&full).with_context(|| format!("trace {}", full.display()))?.len();
    experiment::trace_header(&full).map_err(|e| anyhow!("trace {e}"))?;
    Ok(Trace { path: full.display().to_string(), bytes })
}

/// 64-bit FNV-1a: a stable hash for run ids.
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

/// The line (1-based) of `key`'s assignment in `text`, for error messages.
fn line_of(text: &str, key: &str) -> Option<usize> {
    text.lines()
        .position(|l| {
            let l = l.trim_start();
            let name = l.split('=').next().unwrap_or("").trim().trim_matches('"');
            l.contains('=') && name == key
        })
        .map(|i| i + 1)
}

/// Parses a specification (`text`, read from `path`) and expands it.
pub fn parse(path: &Path, text: &str) -> Result<Sweep> {
    let spec: SpecFile = toml::from_str(text).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    let at = |key: &str| match line_of(text, key) {
        Some(n) => format!("{} line {n}", path.display()),
        None => path.display().to_string(),
    };
    if spec.workloads.is_empty() && spec.traces.is_empty() {
        bail!("{}: no `workloads` and no `traces`: give at least one workload or trace", at("workloads"));
    }
    let workloads: Vec<Vec<String>> = spec
        .workloads
        .iter()
        .map(|w| match w {
            WorkloadItem::One(s) => vec![s.clone()],
            WorkloadItem::Together(v) => v.clone(),
        })
        .collect();
    if workloads.iter().any(|w| w.is_empty()) {
        bail!("{}: a workload entry is an empty list", at("workloads"));
    }
    let traces = spec
        .traces
        .iter()
        .map(|t| resolve_trace(path, t).map_err(|e| anyhow!("{}: {e}", at("traces"))))
        .collect::<Result<Vec<_>>>()?;
    // The first dimension: each workload entry, then each trace (alone).
    let entries: Vec<(Vec<String>, Option<&Trace>)> =
        workloads.iter().map(|w| (w.clone(), None)).chain(traces.iter().map(|t| (Vec::new(), Some(t)))).collect();
    let profiles =
        if spec.profiles.is_empty() { vec![engine::Config::default().profile.to_string()] } else { spec.profiles };
    let seeds = if spec.seeds.is_empty() { vec![1] } else { spec.seeds };
    let timeseries_ns = match spec.timeseries_ms {
        Some(ms) if ms.is_finite() && ms > 0.0 => Some((ms * 1e6).round().max(1.0) as u64),
        Some(ms) => bail!("{}: timeseries_ms = {ms}: expected a positive number of milliseconds", at("timeseries_ms")),
        None => None,
    };
    // Each setting: its values; one value = fixed.
    let mut dims: Vec<(String, Vec<String>)> = Vec::new();
    for (key, v) in flatten("", &spec.settings) {
        let key = key.as_str();
        let values = match v {
            toml::Value::Array(a) if a.is_empty() => bail!("{}: settings.{key} is an empty list", at(key)),
            toml::Value::Array(a) => a.iter().map(|x| setting_value(key, x)).collect::<Result<Vec<_>>>(),
            x => setting_value(key, x).map(|s| vec![s]),
        }
        .with_context(|| at(key))?;
        dims.push((key.to_string(), values));
    }
    let swept: Vec<String> = dims.iter().filter(|(_, v)| v.len() > 1).map(|(k, _)| k.clone()).collect();
    // Validate every profile/settings combination and every workload before running anything.
    for profile in &profiles {
        engine::Config::for_profile(profile).map_err(|e| anyhow!("{}: {e}", at("profiles")))?;
    }
    for (key, values) in &dims {
        for v in values {
            let mut c = engine::Config::default();
            c.set(key, v).map_err(|e| anyhow!("{}: settings.{key} = {v:?}: {e}", at(key)))?;
        }
    }
    let combos = dims.iter().fold(vec![Vec::<(usize, usize)>::new()], |acc, (_, values)| {
        let d = acc.first().map_or(0, |c| c.len());
        acc.iter().flat_map(|c| (0..values.len()).map(move |i| c.iter().copied().chain([(d, i)]).collect())).collect()
    });
    let mut runs = Vec::new();
    for (w, trace) in &entries {
        for profile in &profiles {
            for combo in &combos {
                let settings: Vec<String> =
                    combo.iter().map(|&(d, i)| format!("{}={}", dims[d].0, dims[d].1[i])).collect();
                let swept_values: Vec<String> =
                    combo.iter().filter(|&&(d, _)| dims[d].1.len() > 1).map(|&(d, i)| dims[d].1[i].clone()).collect();
                for &seed in &seeds {
                    let mut key = format!(
                        "{}\x1f{profile}\x1f{}\x1f{seed}\x1f{timeseries_ns:?}",
                        w.join("\x1e"),
                        settings.join("\x1e")
                    );
                    if let Some(t) = trace {
                        key.push_str(&format!("\x1ftrace={}\x1e{}", t.path, t.bytes));
                    }
                    runs.push(RunSpec {
                        index: runs.len(),
                        id: format!("{:016x}", fnv1a(&key)),
                        workloads: w.clone(),
                        trace: trace.map(|t| t.path.clone()),
                        profile: profile.clone(),
                        settings: settings.clone(),
                        swept: swept_values.clone(),
                        seed,
                        timeseries_ns,
                    });
                }
            }
        }
    }
    // Every workload entry, fully: names, parameters and their values (with its first run's machine).
    for w in &workloads {
        let r = runs.iter().find(|r| &r.workloads == w).expect("every workload entry has runs");
        let req = experiment::Request {
            workloads: w.clone(),
            profile: r.profile.clone(),
            settings: r.settings.clone(),
            seed: r.seed,
            timeseries_ns: None,
        };
        experiment::prepare(&req).map_err(|e| anyhow!("{}: {e}", at("workloads")))?;
    }
    let mut ids: Vec<&str> = runs.iter().map(|r| r.id.as_str()).collect();
    ids.sort_unstable();
    if let Some(w) = ids.windows(2).find(|w| w[0] == w[1]) {
        bail!("{}: two runs have the same inputs (run id {}): remove the repeated value", path.display(), w[0]);
    }
    Ok(Sweep { swept, runs })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(text: &str) -> Result<Sweep> {
        parse(Path::new("s.toml"), text)
    }

    #[test]
    fn expands_the_cartesian_product_seeds_fastest() {
        let s = parse_str(
            "workloads = [\"anon\", [\"anon\", \"fileloop\"]]\nprofiles = [\"v5.8\", \"v5.9\"]\nseeds = [1, 2]\n\
             [settings]\nmemory = [\"16M\", \"32M\"]\nswap = \"ssd:64M\"\nvm.swappiness = [60, 100]\n",
        )
        .unwrap();
        assert_eq!(s.swept, ["memory", "vm.swappiness"]);
        assert_eq!(s.runs.len(), 2 * 2 * 2 * 2 * 2);
        let r = &s.runs[0];
        assert_eq!((r.workloads.clone(), r.profile.as_str(), r.seed), (vec!["anon".to_string()], "v5.8", 1));
        assert_eq!(r.settings, ["memory=16M", "swap=ssd:64M", "vm.swappiness=60"]);
        assert_eq!(r.swept, ["16M", "60"]);
        assert_eq!(s.runs[1].seed, 2);
        assert_eq!(s.runs[2].swept, ["16M", "100"]);
        assert_eq!(s.runs[4].swept, ["32M", "60"]);
        assert_eq!(s.runs[8].profile, "v5.9");
        assert_eq!(s.runs[16].workloads, ["anon", "fileloop"]);
        assert!(s.runs.iter().enumerate().all(|(i, r)| r.index == i && r.id.len() == 16));
    }

    #[test]
    fn ids_depend_on_inputs_not_on_position() {
        let a = parse_str("workloads = [\"anon\"]\nseeds = [1, 2]\n").unwrap();
        let b = parse_str("workloads = [\"anon\"]\nseeds = [2, 5]\n").unwrap();
        assert_eq!(a.runs[1].id, b.runs[0].id);
        assert_ne!(a.runs[0].id, a.runs[1].id);
        let c = parse_str("workloads = [\"anon\"]\nseeds = [2]\ntimeseries_ms = 10\n").unwrap();
        assert_ne!(c.runs[0].id, b.runs[0].id);
    }

    #[test]
    fn bad_specs_name_the_place() {
        let e = |t: &str| format!("{:#}", parse_str(t).unwrap_err());
        assert!(e("workloads = [\"anon\"]\nprofile = [\"v5.8\"]\n").contains("unknown field `profile`"));
        assert!(e("workloads = [\"anon\"]\n[settings]\nmemory = [\"lots\"]\n")
            .contains("s.toml line 3: settings.memory = \"lots\""));
        assert!(
            e("workloads = [\"nosuch:x=1,\"]\n").contains("s.toml line 1: --workload nosuch:x=1,: unknown workload")
        );
        assert!(e("workloads = []\n").contains("no `workloads` and no `traces`"));
        assert!(e("workloads = [\"anon\"]\nprofiles = [\"v1.0\"]\n").contains("s.toml line 2"));
        assert!(e("workloads = [\"anon\"]\nseeds = [1, 1]\n").contains("same inputs"));
        assert!(e("workloads = \"anon\"\n").contains("line 1"));
        assert!(
            e("workloads = [\"anon\"]\n[settings]\nmemory = [{}]\n").contains("expected a string, number or boolean")
        );
    }
}
