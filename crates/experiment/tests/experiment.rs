//! Requests, result documents and time series.

use experiment::{prepare, Request};
use serde_json::Value;

fn request(workloads: &[&str], timeseries_ns: Option<u64>) -> Request {
    Request {
        workloads: workloads.iter().map(|w| w.to_string()).collect(),
        profile: "v6.2".into(),
        settings: vec!["memory=16M".into(), "swap=ssd:64M".into()],
        seed: 3,
        timeseries_ns,
    }
}

fn run(req: &Request) -> Value {
    let p = prepare(req).unwrap();
    let report = p.builder.build().run(&mut |_| {}).unwrap();
    let mut doc = p.info.result_json(&report, 0.0);
    doc["sim"]["wall_seconds"] = Value::Null;
    doc
}

/// Sampling observes the run without changing it, whatever the interval.
#[test]
fn sampling_leaves_the_run_unchanged() {
    let w = ["ebizzy:size=1.5x,ops=60000,threads=2", "fileloop:size=0.5x,pattern=zipf,ops=40000"];
    let plain = run(&request(&w, None));
    assert!(plain.get("timeseries").is_none());
    for interval in [1_000_000, 7_777_777, 250_000_000] {
        let mut sampled = run(&request(&w, Some(interval)));
        let ts = sampled.as_object_mut().unwrap().remove("timeseries").unwrap();
        assert_eq!(sampled, plain, "interval {interval}");
        let rows = ts["rows"].as_array().unwrap();
        let end = plain["sim"]["virtual_ns"].as_u64().unwrap();
        assert_eq!(rows.len() as u64, end / interval, "one row per boundary up to the end");
        let columns = ts["columns"].as_array().unwrap();
        let col = |name: &str| columns.iter().position(|c| c == name).unwrap();
        for (k, row) in rows.iter().enumerate() {
            assert_eq!(row[0].as_u64().unwrap(), (k as u64 + 1) * interval);
        }
        // Cumulative counters never decrease and end at most at the final value.
        for name in ["pswpout", "pgscan_kswapd", "workingset_refault_file"] {
            let values: Vec<u64> = rows.iter().map(|r| r[col(name)].as_u64().unwrap()).collect();
            assert!(values.windows(2).all(|w| w[0] <= w[1]), "{name} decreased");
            assert!(*values.last().unwrap() <= plain["vmstat"][name].as_u64().unwrap());
        }
        // Gauges, the slab and the per-CPU lists account for every page frame
        // (no writeback in flight is off the lists); the slab only grows here,
        // up to its final size, and a list holds fewer pages than its `high`.
        let (frames, slab) = (16 * 256, plain["vmstat"]["nr_slab_reclaimable"].as_u64().unwrap());
        let pagesets = plain["zones"].as_array().unwrap().iter().flat_map(|z| z["pagesets"].as_array().unwrap());
        let pcp_high: u64 = pagesets.map(|p| p["high"].as_u64().unwrap()).sum();
        assert!(pcp_high > 0, "v6.2 has per-CPU lists");
        for row in rows {
            let lru: u64 = (col("nr_free_pages")..=col("nr_active_file")).map(|c| row[c].as_u64().unwrap()).sum();
            assert!((frames - slab - pcp_high..=frames).contains(&lru), "{lru} pages outside the slab's range");
        }
    }
}

#[test]
fn document_describes_the_inputs() {
    let doc = run(&request(&["anon:size=0.5x,ops=1000"], None));
    assert_eq!(doc["config"]["profile"], "v6.2");
    assert_eq!(doc["config"]["seed"], 3);
    assert_eq!(doc["config"]["settings"]["memory"], "16M");
    assert!(doc["config"]["workloads"][0].as_str().unwrap().starts_with("anon:"));
    assert_eq!(doc["threads"].as_array().unwrap().len(), 1);
    assert!(doc["config"].get("plugin").is_none());
}

#[test]
fn bad_requests_are_input_errors() {
    let mut r = request(&["anon"], None);
    r.profile = "v9.9".into();
    assert!(prepare(&r).is_err());
    let mut r = request(&["anon"], None);
    r.settings.push("memory".into());
    assert!(prepare(&r).err().unwrap().0.contains("expected KEY=VALUE"));
    assert!(prepare(&request(&["nosuch"], None)).err().unwrap().0.contains("--workload nosuch"));
    assert!(prepare(&request(&["anon"], Some(0))).is_err());
}
