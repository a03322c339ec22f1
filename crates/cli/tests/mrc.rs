//! `reclaimsim mrc` (issue #22): a curve's points are the runs at each size,
//! whatever the threads; the reference curves; sampled mode and its error.

mod common;

use common::{arg, ok, reclaimsim};

fn fixture(name: &str) -> String {
    format!("{}/../../tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// CSV rows as maps from column name to value.
fn rows(path: &std::path::Path) -> Vec<std::collections::BTreeMap<String, String>> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    lines.map(|l| head.iter().map(|h| h.to_string()).zip(l.split(',').map(String::from)).collect()).collect()
}

#[test]
fn each_point_is_the_run_at_its_size_on_any_number_of_threads() {
    let d = common::scratch("mrc-lirs");
    let t = d.join("multi1.rtrace");
    ok(&["trace", "convert", "--from", "pages", "--as", "file", &fixture("lirs-multi1.trace.gz"), arg(&t)]);
    let mut curves = Vec::new();
    for jobs in ["1", "3"] {
        let csv = d.join(format!("m{jobs}.csv"));
        let png = d.join(format!("m{jobs}.png"));
        let out = ok(&[
            "mrc",
            "--trace",
            arg(&t),
            "--sizes",
            "256K,1M,2M,512K",
            "--set",
            "swap=none",
            "--opt",
            "--jobs",
            jobs,
            "--csv",
            arg(&csv),
            "--plot",
            arg(&png),
        ]);
        assert!(out.contains("# 4 runs in"), "{out}");
        assert_eq!(&std::fs::read(&png).unwrap()[1..4], b"PNG");
        curves.push(rows(&csv));
    }
    assert_eq!(curves[0], curves[1], "the threads change nothing");
    let c = &curves[0];
    let col = |k: &str| c.iter().map(|r| r[k].parse::<u64>().unwrap()).collect::<Vec<_>>();
    assert_eq!(col("memory_pages"), [64, 256, 512, 128]);
    // Each point is `run --trace` at its size (the 1M one is docs/traces.md's), though
    // the curve's runs replay one uncompressed copy of the zstd trace; Belady's 7,512
    // and LRU's 9,031 at 256 pages.
    assert!(experiment::trace_header(&t).unwrap().compressed);
    for (i, size) in ["256K", "1M", "2M", "512K"].into_iter().enumerate() {
        let j = d.join(format!("run-{size}.json"));
        let memory = format!("memory={size}");
        ok(&["run", "-q", "--trace", arg(&t), "--set", &memory, "--set", "swap=none", "--json", arg(&j)]);
        let run = common::read_json(&j);
        let vm = |k: &str| run["vmstat"][k].as_u64().unwrap();
        assert_eq!(col("faults")[i], run["faults"].as_u64().unwrap(), "{size}");
        assert_eq!(col("refaults")[i], vm("workingset_refault_anon") + vm("workingset_refault_file"), "{size}");
        assert_eq!(col("swapins")[i], vm("pswpin"), "{size}");
    }
    assert_eq!((col("opt_misses")[1], col("lru_misses")[1]), (7512, 9031));
    assert!(col("refs").iter().all(|&r| r == 15_858));
    std::fs::remove_dir_all(&d).unwrap();
}

/// Faults count the allocations of every zone: with the x86-64 layout a
/// machine under 3G has no Normal zone, and `pgalloc_normal` alone was 0.
#[test]
fn faults_count_every_zones_allocations() {
    let d = common::scratch("mrc-zones");
    let t = d.join("multi1.rtrace");
    ok(&["trace", "convert", "--from", "pages", "--as", "file", &fixture("lirs-multi1.trace.gz"), arg(&t)]);
    let csv = d.join("z.csv");
    let zones = ["--set", "swap=none", "--set", "zones=x86_64"];
    ok(&[&["mrc", "--trace", arg(&t), "--sizes", "1M,64M", "--csv", arg(&csv)][..], &zones].concat());
    for (row, size) in rows(&csv).iter().zip(["1M", "64M"]) {
        let j = d.join(format!("{size}.json"));
        let memory = format!("memory={size}");
        ok(&[&["run", "-q", "--trace", arg(&t), "--set", &memory, "--json", arg(&j)][..], &zones].concat());
        let run = common::read_json(&j);
        let vm = |k: &str| run["vmstat"][k].as_u64().unwrap();
        let allocs = vm("pgalloc_dma") + vm("pgalloc_dma32") + vm("pgalloc_normal") + vm("pgalloc_movable");
        assert_eq!(vm("pgalloc_normal"), 0, "{size}: no Normal zone under 3G");
        assert_eq!(run["faults"].as_u64().unwrap(), allocs - vm("swap_ra"), "{size}");
        assert_eq!(row["faults"], run["faults"].to_string(), "{size}");
        assert!(allocs >= 2606, "{size}: every page of multi1 at least once");
    }
    std::fs::remove_dir_all(&d).unwrap();
}

/// The trace is decoded once and held for the sizes' runs: read from standard
/// input (which can be read only once) the curve is the file's, its OPT
/// curve too (`--opt` reads it once more).
#[test]
fn a_trace_on_standard_input_gives_the_files_curve() {
    use std::io::Write;
    let d = common::scratch("mrc-stdin");
    let t = d.join("multi1.rtrace");
    ok(&["trace", "convert", "--from", "pages", "--as", "file", &fixture("lirs-multi1.trace.gz"), arg(&t)]);
    let sizes = ["--sizes", "256K,1M,2M", "--set", "swap=none", "--opt", "--csv"];
    let (from_file, from_stdin) = (d.join("file.csv"), d.join("stdin.csv"));
    ok(&[&["mrc", "--trace", arg(&t)][..], &sizes, &[arg(&from_file)]].concat());
    let mut child = common::command()
        .args([&["mrc", "--trace", "-"][..], &sizes, &[arg(&from_stdin)]].concat())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&std::fs::read(&t).unwrap()).unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(rows(&from_stdin), rows(&from_file));
    assert_eq!(rows(&from_file).len(), 3);
    assert_eq!(rows(&from_stdin)[1]["opt_misses"], "7512");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn workload_curves_count_swap_ins_and_the_lru_pass_needs_a_trace() {
    let d = common::scratch("mrc-workload");
    let csv = d.join("w.csv");
    ok(&[
        "mrc",
        "-w",
        "anon:size=24M,pattern=zipf,alpha=0.8,ops=200000",
        "--set",
        "swap=ssd:64M",
        "--max",
        "32M",
        "--min",
        "8M",
        "--points",
        "3",
        "--csv",
        arg(&csv),
    ]);
    let c = rows(&csv);
    assert_eq!(c.iter().map(|r| r["memory_bytes"].as_str()).collect::<Vec<_>>(), ["8388608", "20971520", "33554432"]);
    let swapins: Vec<u64> = c.iter().map(|r| r["swapins"].parse().unwrap()).collect();
    assert!(swapins[0] > swapins[1] && swapins[2] == 0, "{swapins:?}");
    assert!(!c[0].contains_key("lru_misses"));
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn sampled_curve_is_measured_against_full_runs() {
    let d = common::scratch("mrc-sampled");
    let t = d.join("hot.rtrace");
    ok(&["trace", "synth", "--records", "300000", "--pages", "20000", "--hot-pages", "4000", arg(&t)]);
    let csv = d.join("s.csv");
    let out = ok(&[
        "mrc",
        "--trace",
        arg(&t),
        "--set",
        "swap=ssd:128M",
        "--min",
        "8M",
        "--max",
        "48M",
        "--points",
        "3",
        "--sample",
        "0.1",
        "--verify",
        "--csv",
        arg(&csv),
    ]);
    let line = out.lines().find(|l| l.starts_with("# sampled vs full")).unwrap_or_else(|| panic!("{out}"));
    let mae: f64 = line.split("mean absolute error ").nth(1).unwrap().split(',').next().unwrap().parse().unwrap();
    assert!(mae < 0.05, "{line}");
    for r in rows(&csv) {
        assert_eq!(r["sample_rate"], "0.100000");
        let (est, full) = (r["faults"].parse::<f64>().unwrap(), r["full_faults"].parse::<f64>().unwrap());
        assert!((est / full - 1.0).abs() < 0.2, "{r:?}");
        let (run, memory) = (r["run_memory_bytes"].parse::<i64>().unwrap(), r["memory_bytes"].parse::<i64>().unwrap());
        assert!((run - memory / 10).abs() <= 4096, "{r:?}");
        assert!(r["sampled_refs"].parse::<u64>().unwrap() < 60_000);
    }
    // Bad input: exit 2, saying what was expected.
    for (args, want) in [
        (vec!["--sizes", "1M", "--sample", "0"], "--sample 0: expected a rate in (0, 1]"),
        (vec!["--sizes", "0"], "at least one page"),
        (vec!["--max", "1M", "--points", "300"], "--points 300"),
    ] {
        let out = reclaimsim(&[&["mrc", "--trace", arg(&t)][..], &args].concat());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.code() == Some(2) && err.contains(want), "{args:?}: {err}");
    }
    std::fs::remove_dir_all(&d).unwrap();
}
