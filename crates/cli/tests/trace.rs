//! The trace commands of issue #6: convert, stats, record, synth, and
//! `run --trace` with `opt_faults`, on fixtures in tests/fixtures.

mod common;

use common::{arg, ok, read_json, reclaimsim};
use std::path::PathBuf;
use std::process::Command;

fn fixture(name: &str) -> String {
    format!("{}/../../tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn scratch(test: &str) -> PathBuf {
    common::scratch(&format!("trace-{test}"))
}

#[test]
fn lirs_trace_runs_with_opt_faults() {
    let d = scratch("lirs");
    let t = d.join("multi1.rtrace");
    let out = ok(&["trace", "convert", "--from", "pages", "--as", "file", &fixture("lirs-multi1.trace.gz"), arg(&t)]);
    assert!(out.contains("0 address spaces, 1 files, 2606 pages declared"), "{out}");
    // `run --trace` of the trace with these settings, its document written to `j`.
    let run = |settings: &[&str], j: &std::path::Path| {
        ok(&[&["run", "-q", "--trace", arg(&t)][..], settings, &["--json", arg(j)]].concat())
    };
    let mut docs = Vec::new();
    for name in ["a.json", "b.json"] {
        let j = d.join(name);
        let out = run(&["--opt", "--set", "memory=1M", "--set", "swap=none"], &j);
        assert!(out.contains("# faults / optimum"), "{out}");
        let mut v = read_json(&j);
        v["sim"].as_object_mut().unwrap().remove("wall_seconds");
        docs.push(v);
    }
    assert_eq!(docs[0], docs[1], "same inputs, same document");
    let v = &docs[0];
    // Belady MIN at 256 pages, cross-checked against a scan-ahead MIN in crates/trace/tests/optimum.rs.
    assert_eq!(v["opt_faults"], 7512);
    assert_eq!(v["opt_capacity_pages"], 256);
    // With a memory cgroup limit, the optimum is computed at the limit.
    let j = d.join("memcg.json");
    run(&["--opt", "--set", "memory=2M", "--set", "memcg.limit=1M", "--set", "swap=none"], &j);
    let m = read_json(&j);
    assert_eq!((m["opt_capacity_pages"].as_u64(), m["opt_faults"].as_u64()), (Some(256), Some(7512)));
    assert_eq!(v["trace"]["refs"], 15_858);
    let faults = v["faults"].as_u64().unwrap();
    assert_eq!(v["vmstat"]["swap_ra"], 0, "no swap: no readahead");
    assert_eq!(faults, v["vmstat"]["pgalloc_normal"].as_u64().unwrap());
    // No policy beats the optimum; every page read is one page-cache miss here.
    assert!((7512..=15_858).contains(&faults), "{faults}");
    assert_eq!(faults * 4, v["vmstat"]["pgpgin"].as_u64().unwrap());
    assert!((v["faults_over_opt"].as_f64().unwrap() - faults as f64 / 7512.0).abs() < 1e-12);
    // Without --opt: the same run and faults, no optimum.
    let j = d.join("noopt.json");
    let out = run(&["--set", "memory=1M", "--set", "swap=none"], &j);
    assert!(!out.contains("optimum") && out.contains(&format!("15858 references, {faults} faults")), "{out}");
    let mut n = read_json(&j);
    n["sim"].as_object_mut().unwrap().remove("wall_seconds");
    for k in ["opt_faults", "opt_capacity_pages", "faults_over_opt"] {
        assert!(n.get(k).is_none(), "{k} without --opt");
        docs[0].as_object_mut().unwrap().remove(k);
    }
    assert_eq!(n, docs[0]);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn lackey_fixture_of_a_real_program_has_its_counters() {
    let d = scratch("lackey");
    let j = d.join("stats.json");
    let fx = fixture("lackey-sort.rtrace");
    let out = ok(&["trace", "stats", &fx, "--sizes", "16,64,256", "--opt", "--json", arg(&j)]);
    assert!(out.contains("records            495627 (access 495627)"), "{out}");
    let v = read_json(&j);
    assert_eq!(v["records"], 495_627);
    assert_eq!(v["refs"], 495_627);
    assert_eq!(v["writes"], 41_158);
    assert_eq!(v["distinct_pages"], 237);
    assert_eq!(v["footprint_bytes"], 237 * 4096);
    let mrc = v["mrc"].as_array().unwrap();
    let lru: Vec<u64> = mrc.iter().map(|e| e["lru_misses"].as_u64().unwrap()).collect();
    let opt: Vec<u64> = mrc.iter().map(|e| e["opt_misses"].as_u64().unwrap()).collect();
    assert_eq!(lru, [8520, 644, 237]);
    assert_eq!(opt, [4756, 416, 237]);
    // On the machine: a 64-page memory, the optimum at the same size (swap on pmem:
    // zram's pool would take part of the 64 pages).
    let r = d.join("run.json");
    ok(&["run", "-q", "--trace", &fx, "--opt", "--set", "memory=256K", "--set", "swap=pmem:16M", "--json", arg(&r)]);
    let v = read_json(&r);
    assert_eq!(v["opt_faults"], 416);
    assert!(v["faults"].as_u64().unwrap() >= 416);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn synthetic_trace_through_stdin() {
    let d = scratch("synth");
    let t = d.join("synth.rtrace");
    ok(&["trace", "synth", "--records", "20000", "--pages", "512", "--hot-pages", "64", arg(&t)]);
    let out = common::command()
        .args(["run", "-q", "--trace", "-", "--set", "memory=1M"])
        .stdin(std::fs::File::open(&t).unwrap())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && text.contains("# trace              20000 references"), "{text}");
    // Stopped by time_limit: the references issued until then are counted.
    let j = d.join("stopped.json");
    let out = ok(&["run", "-q", "--trace", arg(&t), "--set", "memory=1M", "--set", "time_limit=50", "--json", arg(&j)]);
    assert!(out.contains("(stopped by time_limit before its end)"), "{out}");
    let v = read_json(&j);
    let refs = v["trace"]["refs"].as_u64().unwrap();
    assert!(v["trace"]["finished"] == false && (1..20000).contains(&refs), "{}", v["trace"]);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn record_runs_a_program_under_lackey() {
    let d = scratch("record");
    let t = d.join("true.rtrace");
    let out = reclaimsim(&["trace", "record", "-o", arg(&t), "--", "/bin/true"]);
    if Command::new("valgrind").arg("--version").output().is_err() {
        assert_eq!(out.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&out.stderr).contains("install valgrind to record traces"));
        return;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && text.contains("lackey trace of `/bin/true`, exit status 0"), "{text}");
    let stats = ok(&["trace", "stats", arg(&t)]);
    let refs: u64 = stats
        .lines()
        .find_map(|l| l.strip_prefix("page references    "))
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(refs > 10_000, "a dynamically linked program touches more than this: {refs}");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn bad_trace_input_exits_2_naming_the_line_or_offset() {
    let d = scratch("bad");
    let bad = d.join("bad.txt");
    std::fs::write(&bad, "1\n2\nthree\n").unwrap();
    let t = d.join("out.rtrace");
    let out = reclaimsim(&["trace", "convert", "--from", "pages", arg(&bad), arg(&t)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("bad.txt:3: expected a decimal page number: three"));
    assert!(!t.exists(), "no output on failure");
    let out = reclaimsim(&["trace", "convert", "--from", "nosuch", arg(&bad), arg(&t)]);
    assert!(String::from_utf8_lossy(&out.stderr).contains(
        "unknown format `nosuch`; valid formats: lackey, oracle-general, csv, txt, pages, addresses, strace"
    ));
    let out = reclaimsim(&["run", "--trace", arg(&bad)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("bad.txt: byte offset 0: wrong magic"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::remove_dir_all(&d).unwrap();
}
