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
    /// The result document: `config` (enough to re-run), `vmstat`, `threads`,
    /// `reclaim`, `sim`, and `timeseries` when the run was sampled.
    /// `wall_seconds` is the only value that is not a function of the inputs.
    pub fn result_json(&self, r: &RunReport, wall_seconds: f64) -> Value {
        let settings: Map<String, Value> =
            self.config.resolved().into_iter().map(|(k, v)| (k.to_string(), Value::String(v))).collect();
        let memcg: Map<String, Value> = r.memcg.iter().map(|(k, v)| (k.to_string(), json!(v))).collect();
        let zram: Map<String, Value> = r.zram.iter().map(|(k, v)| (k.to_string(), json!(v))).collect();
        let vmstat: Map<String, Value> = r.vmstat.iter().map(|(k, v)| (k.to_string(), json!(v))).collect();
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
        let psi_line = |l: &engine::PsiLine| json!({ "avg": l.avg, "total_us": l.total_ns / 1000 });
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
                json!({
                    "name": t.name,
                    "ops": t.ops,
                    "ops_per_sec": t.ops_per_sec(),
                    "end_ns": t.end_ns,
                    "reclaim_stall_ns": t.reclaim_stall_ns,
                    "latency_ns": lat,
                    "latency_mean_ns": t.latency_mean_ns,
                    "txns": t.txns,
                    "first_txn_ns": t.first_txn_ns,
                    "txns_per_sec": t.txns_per_sec(),
                    "txn_latency_ns": t.txn_latency_ns.iter().map(|(p, v)| (format!("p{p}"), json!(v))).collect::<Map<String, Value>>(),
                    "txn_latency_mean_ns": t.txn_latency_mean_ns,
                })
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
            "config": config,
            "vmstat": vmstat,
            "memcg": if memcg.is_empty() { Value::Null } else { Value::Object(memcg) },
            "zram": if zram.is_empty() { Value::Null } else { Value::Object(zram) },
            "threads": threads,
            "reclaim": {
                "kswapd_cpu_ns": r.kswapd_cpu_ns,
                "direct_reclaim_ns": r.direct_reclaim_ns,
                "direct_reclaims": r.direct_reclaims,
                "direct_reclaim_latency_ns": dlat,
                "work": { "kswapd": work(&r.kswapd_work), "direct": work(&r.direct_work) },
                "lru_gen_writes": r.control_writes,
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
