//! The result document of a run.

use engine::timeseries::COLUMNS;
use engine::{Config, RunReport, Timeseries};
use reclaim::ReclaimWork;
use serde_json::{json, Map, Value};
use workload::WorkloadSpec;

/// What the result document says about the inputs of a run.
#[derive(Clone, Debug)]
pub struct RunInfo {
    /// The machine and kernel configuration.
    pub config: Config,
    /// Workload specifications with every parameter.
    pub workloads: Vec<WorkloadSpec>,
    /// Seed.
    pub seed: u64,
    /// The name of a policy plug-in that replaced the configured `lru`, if any.
    pub plugin: Option<String>,
}

impl RunInfo {
    /// The result document: `config` (enough to re-run), `vmstat`, `threads`
    /// (with `oom_killed` and `oom_killed_ns` on a thread the OOM killer
    /// killed), `reclaim`, `sim`, `memcg_events` with a memory cgroup,
    /// `snapshots` when threads took some, and `timeseries` when the run was sampled.
    /// `wall_seconds` is the only value that is not a function of the inputs.
    pub fn result_json(&self, r: &RunReport, wall_seconds: f64) -> Value {
        let settings = typed_settings(&self.config);
        let memcg: Map<String, Value> = r.memcg.iter().map(|(k, v)| (k.to_string(), json!(v))).collect();
        let named = |v: &[(&str, u64)]| -> Value {
            let m: Map<String, Value> = v.iter().map(|(k, v)| (k.to_string(), json!(v))).collect();
            if m.is_empty() {
                Value::Null
            } else {
                Value::Object(m)
            }
        };
        let section = |keep: fn(&str) -> bool| -> Map<String, Value> {
            r.vmstat.iter().filter(|(k, _)| keep(k)).map(|(k, v)| (k.to_string(), json!(v))).collect()
        };
        let vmstat = section(|k| crate::sections::section_of(k) == crate::sections::Section::Vmstat);
        let meminfo = section(|k| crate::sections::section_of(k) == crate::sections::Section::Meminfo);
        let zoneinfo = section(|k| crate::sections::section_of(k) == crate::sections::Section::Zoneinfo);
        let work = |w: &ReclaimWork| {
            json!({
                "pages_scanned": w.pages_scanned,
                "pages_sorted": w.pages_sorted,
                "pages_freed": w.pages_freed,
                "pages_written": w.pages_written,
                "rmap_walks": w.rmap_walks,
                "rmap_ptes": w.rmap_ptes,
                "walk_mms": w.walk_mms,
                "walk_pmds": w.walk_pmds,
                "walk_ptes": w.walk_ptes,
            })
        };
        let psi_line = |l: &engine::PsiLine| json!({ "avg": l.avg, "avg10": l.avg10, "avg60": l.avg60, "avg300": l.avg300, "total_us": l.total_ns / 1000 });
        let dlat: Map<String, Value> =
            r.direct_reclaim_latency_ns.iter().map(|(p, v)| (format!("p{p}"), json!(v))).collect();
        let threads: Vec<Value> = r
            .threads
            .iter()
            .map(|t| {
                let lat: Map<String, Value> = t
                    .latency_ns
                    .iter()
                    .map(|(p, v)| (format!("p{p}"), json!(v)))
                    .collect();
                let mut thread = json!({
                    "name": t.name,
                    "ops": t.ops,
                    "ops_per_sec": t.ops_per_sec(),
                    "end_ns": t.end_ns,
                    "reclaim_stall_ns": t.reclaim_stall_ns,
                    "run_delay_ns": t.run_delay_ns,
                    "user_time_ns": t.user_time_ns,
                    "system_time_ns": t.system_time_ns,
                    "elapsed_time_ns": t.end_ns,
                    "latency_ns": lat,
                    "latency_mean_ns": t.latency_mean_ns,
                    "txns": t.txns,
                    "first_txn_ns": t.first_txn_ns,
                    "txns_per_sec": t.txns_per_sec(),
                    "txn_latency_ns": t.txn_latency_ns.iter().map(|(p, v)| (format!("p{p}"), json!(v))).collect::<Map<String, Value>>(),
                    "txn_latency_mean_ns": t.txn_latency_mean_ns,
                });
                if let Some(at) = t.oom_killed_ns {
                    thread["oom_killed"] = json!(true);
                    thread["oom_killed_ns"] = json!(at);
                }
                thread
            })
            .collect();
        let mut config = json!({
            "profile": self.config.profile,
            "seed": self.seed,
            "settings": settings,
            "workloads": self.workloads.iter().map(|w| w.to_string()).collect::<Vec<_>>(),
        });
        if let Some(p) = &self.plugin {
            config["plugin"] = json!(p);
        }
        let mut doc = json!({
            "reclaimsim": env!("CARGO_PKG_VERSION"),
            "commit": crate::COMMIT,
            "config": config,
            "vmstat": vmstat,
            "meminfo": meminfo,
            "zoneinfo": zoneinfo,
            "zones": zones_json(r),
            "memcg": if memcg.is_empty() { Value::Null } else { Value::Object(memcg) },
            "zram": named(&r.zram),
            "zswap": named(&r.zswap),
            "threads": threads,
            "cpu": {
                "user_time_ns": r.user_time_ns(),
                "system_time_ns": r.system_time_ns(),
                "elapsed_time_ns": r.virtual_ns,
                "kernel_threads": r.kswapd_cpu_ns_by_node.iter().enumerate()
                    .map(|(n, ns)| json!({ "name": format!("kswapd{n}"), "system_time_ns": ns }))
                    .collect::<Vec<Value>>(),
            },
            "reclaim": {
                "kswapd_cpu_ns": r.kswapd_cpu_ns,
                "kswapd_run_delay_ns": r.kswapd_run_delay_ns,
                "direct_reclaim_ns": r.direct_reclaim_ns,
                "direct_reclaims": r.direct_reclaims,
                "direct_reclaim_latency_ns": dlat,
                "work": { "kswapd": work(&r.kswapd_work), "direct": work(&r.direct_work) },
                "control_writes": r.control_writes,
                "throttled_ns": r.reclaim_throttled_ns,
                "kswapd_efficiency_pct": r.kswapd_efficiency_pct(),
                "kswapd_velocity": r.kswapd_velocity(),
            },
            "psi": { "memory": { "some": psi_line(&r.psi.some), "full": psi_line(&r.psi.full) } },
            "sim": {
                "virtual_ns": r.virtual_ns,
                "events": r.events,
                "accesses": r.accesses,
                "wall_seconds": wall_seconds,
            },
        });
        if !r.memcg_events.is_empty() {
            let events: Map<String, Value> = r.memcg_events.iter().map(|&(k, v)| (k.into(), v.into())).collect();
            doc["memcg_events"] = Value::Object(events);
        }
        if !r.cgroups.is_empty() {
            let groups: Map<String, Value> = r
                .cgroups
                .iter()
                .map(|g| {
                    let obj = |v: &[(&str, u64)]| -> Map<String, Value> {
                        v.iter().map(|&(k, n)| (k.to_string(), n.into())).collect()
                    };
                    let pressure = json!({ "some": psi_line(&g.pressure.some), "full": psi_line(&g.pressure.full) });
                    (g.path.clone(), json!({ "stat": obj(&g.stat), "events": obj(&g.events), "pressure": pressure }))
                })
                .collect();
            doc["cgroups"] = Value::Object(groups);
        }
        if !r.snapshots.is_empty() {
            let snaps = r.snapshots.iter().map(|s| {
                let vmstat: serde_json::Map<String, Value> =
                    s.vmstat.iter().map(|&(k, v)| (k.into(), v.into())).collect();
                json!({ "at_ns": s.at_ns, "vmstat": vmstat })
            });
            doc["snapshots"] = Value::Array(snaps.collect());
        }
        if let Some(ts) = &r.timeseries {
            doc["timeseries"] = timeseries_json(ts);
        }
        doc
    }
}

/// `{"interval_ns": N, "columns": [...], "rows": [[...], ...]}`.
fn timeseries_json(ts: &Timeseries) -> Value {
    json!({ "interval_ns": ts.interval_ns, "columns": COLUMNS, "rows": ts.rows })
}

/// The resolved settings with JSON types: integers and decimals as numbers,
/// switches as booleans, sizes and names as strings; a device parameter left
/// at its kind's preset shows the preset's number (or `"preset"` where that
/// number cannot be set back, as zram's bandwidth of 0).
fn typed_settings(config: &Config) -> Map<String, Value> {
    let mut m: Map<String, Value> = config
        .resolved()
        .into_iter()
        .map(|(k, v)| {
            let v = if v == "preset" { preset_value(config, k).unwrap_or(v) } else { v };
            (k.to_string(), typed(config, k, v))
        })
        .collect();
    // The cgroup tree's files, as `--set` keys (sizes as strings, like `memory`).
    m.extend(config.cgroups.resolved().into_iter().map(|(k, v)| (k, Value::String(v))));
    m
}

/// `v` as a JSON number or boolean when it reads back as the same setting.
fn typed(config: &Config, key: &str, v: String) -> Value {
    // A switch accepts `on`; nothing else does.
    if (v == "0" || v == "1") && config.clone().set(key, "on").is_ok() {
        return Value::Bool(v == "1");
    }
    if let Ok(n) = v.parse::<u64>() {
        return json!(n);
    }
    match v.parse::<f64>() {
        Ok(x) if x.is_finite() && v.bytes().all(|b| b.is_ascii_digit() || b == b'.') => json!(x),
        _ => Value::String(v),
    }
}

/// The number a device parameter has under its kind's preset, in the setting's unit,
/// when setting it explicitly gives a configuration that validates.
fn preset_value(config: &Config, key: &str) -> Option<String> {
    let (dev, param) = key.split_once('.')?;
    let d = match dev {
        "swap" => config.swap_kind.build(&config.swap_params),
        "fs" => config.fs_kind.build(&config.fs_params),
        _ => return None,
    };
    let n = match param {
        "latency_us" => d.latency_ns / 1000,
        "seek_us" => d.seek_ns / 1000,
        "bandwidth_mbps" => d.bytes_per_sec / 1_000_000,
        "channels" => d.channels() as u64,
        "read_cpu_ns" => d.read_cpu_ns,
        "write_cpu_ns" => d.write_cpu_ns,
        _ => return None,
    };
    let mut c = config.clone();
    (c.set(key, &n.to_string()).is_ok() && c.validate().is_ok()).then(|| n.to_string())
}

/// `zones`: each zone's node, name, managed pages, watermarks, free pages at
/// the end, reserves and counters; and each node's first kswapd wakeup.
fn zones_json(r: &RunReport) -> Value {
    let zones: Vec<Value> = r
        .zones
        .iter()
        .map(|z| {
            json!({
                "node": z.node,
                "name": z.name,
                "managed": z.managed,
                "min": z.min,
                "low": z.low,
                "high": z.high,
                "free": z.free,
                "lowmem_reserve": z.lowmem_reserve,
                "pagesets": z.pagesets.iter().map(|p| json!({"count": p.count, "high": p.high, "batch": p.batch})).collect::<Vec<_>>(),
                "pgalloc": z.stat.pgalloc,
                "numa_hit": z.stat.numa_hit,
                "numa_miss": z.stat.numa_miss,
                "numa_foreign": z.stat.numa_foreign,
                "numa_interleave": z.stat.numa_interleave,
                "numa_local": z.stat.numa_local,
                "numa_other": z.stat.numa_other,
                "pgscan_kswapd": z.stat.pgscan_kswapd,
                "pgscan_direct": z.stat.pgscan_direct,
                "pgsteal_kswapd": z.stat.pgsteal_kswapd,
                "pgsteal_direct": z.stat.pgsteal_direct,
                "kswapd_first_wake_ns": r.kswapd_first_wake_ns.get(z.node as usize).copied().flatten(),
            })
        })
        .collect();
    Value::Array(zones)
}
