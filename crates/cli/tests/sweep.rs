//! `reclaimsim sweep`: local processes, the table, and resuming after a kill.

mod common;

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SPEC: &str = r#"
workloads = ["anon:size=1.4x,pattern=uniform,ops=150000"]
profiles = ["v5.8", "v6.2"]
seeds = [1, 2]
[settings]
memory = ["16M", "24M"]
swap = "ssd:64M"
"#;

fn dir(name: &str) -> PathBuf {
    common::scratch(&format!("sweep-{name}"))
}

fn sweep(spec: &Path, extra: &[&str]) -> std::process::Output {
    common::command().arg("sweep").arg(spec).args(extra).env_remove("RECLAIMSIM_PYTHON").output().unwrap()
}

/// Finished runs: file name -> inode (a rewritten file gets a new inode).
fn finished(runs: &Path) -> BTreeMap<String, u64> {
    std::fs::read_dir(runs)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.metadata().unwrap().ino()))
        .collect()
}

#[test]
fn sweep_runs_the_product_and_writes_the_table() {
    let d = dir("table");
    let spec = d.join("s.toml");
    std::fs::write(&spec, SPEC).unwrap();
    let out = sweep(&spec, &["--jobs", "2"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("8 runs, 0 already done, 8 to run on 2 local processes"), "{stderr}");
    assert!(stderr.contains("sweep: 8/8 done, 0 running, 0 failed"), "{stderr}");
    let csv = std::fs::read_to_string(d.join("s.out/table.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 9);
    assert!(
        lines[0].starts_with("index,run,workloads,trace,profile,memory,seed,status,error,virtual_ns,"),
        "{}",
        lines[0]
    );
    // Row 5 = second profile, first memory, second seed; its values are the run's JSON.
    let row = lines[6];
    assert!(row.starts_with("5,"), "{row}");
    assert!(row.contains(",\"anon:size=1.4x,pattern=uniform,ops=150000\",,v6.2,16M,2,done,,"), "{row}");
    let id = row.split(',').nth(1).unwrap();
    let doc = common::read_json(&d.join("s.out/runs").join(format!("{id}.json")));
    assert_eq!(doc["config"]["profile"], "v6.2");
    assert_eq!(doc["config"]["seed"], 2);
    assert_eq!(doc["config"]["settings"]["memory"], "16M");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn an_interrupted_sweep_resumes_without_redoing_finished_runs() {
    let d = dir("resume");
    let spec = d.join("s.toml");
    std::fs::write(&spec, SPEC).unwrap();
    let runs = d.join("s.out/runs");
    let mut child = common::command()
        .arg("sweep")
        .arg(&spec)
        .args(["--jobs", "1"])
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !runs.exists() || finished(&runs).len() < 2 {
        assert!(started.elapsed() < Duration::from_secs(60), "no run finished in time");
        std::thread::sleep(Duration::from_millis(10));
    }
    // Kill the sweep and its running child, as Ctrl-C or a lost machine would.
    let killed = Command::new("kill").args(["-KILL", "--", &format!("-{}", child.id())]).status().unwrap();
    assert!(killed.success());
    child.wait().unwrap();
    let before = finished(&runs);
    assert!((2..8).contains(&before.len()), "{} runs finished before the kill", before.len());
    let out = sweep(&spec, &["--jobs", "2"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("8 runs, {} already done, {} to run", before.len(), 8 - before.len())),
        "{stderr}"
    );
    let after = finished(&runs);
    assert_eq!(after.len(), 8);
    for (name, ino) in &before {
        assert_eq!(after[name], *ino, "{name} was run again");
    }
    let csv = std::fs::read_to_string(d.join("s.out/table.csv")).unwrap();
    assert_eq!(csv.lines().filter(|l| l.contains(",done,")).count(), 8);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn failed_runs_are_recorded_and_retried() {
    let d = dir("fail");
    let spec = d.join("s.toml");
    std::fs::write(&spec, "workloads = [\"anon:size=2x,passes=1\", \"anon:size=0.5x,passes=1\"]\n[settings]\nmemory = \"16M\"\nswap = \"ssd:4M\"\nvm.panic_on_oom = 1\n").unwrap();
    let out = sweep(&spec, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("1 done, 1 failed, 0 missing"), "{stderr}");
    let csv = std::fs::read_to_string(d.join("s.out/table.csv")).unwrap();
    let failed = csv.lines().find(|l| l.contains(",failed,")).unwrap();
    assert!(failed.contains("out of memory"), "{failed}");
    let again = sweep(&spec, &[]);
    assert!(String::from_utf8_lossy(&again.stderr).contains("2 runs, 1 already done, 1 to run"));
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn traces_are_a_dimension_of_the_sweep() {
    let d = dir("trace");
    let trace = d.join("hot.rtrace");
    let synth = common::command()
        .args(["trace", "synth", "--records", "20000", "--pages", "6000", "--hot-pages", "1000"])
        .arg(&trace)
        .output()
        .unwrap();
    assert!(synth.status.success(), "{}", String::from_utf8_lossy(&synth.stderr));
    let spec = d.join("s.toml");
    // The trace's path is relative to the specification's folder.
    std::fs::write(&spec, "workloads = [\"anon:size=0.5x,passes=1\"]\ntraces = [\"hot.rtrace\"]\nprofiles = [\"v5.8\", \"v6.2\"]\n[settings]\nmemory = \"16M\"\nswap = \"ssd:64M\"\n").unwrap();
    let out = sweep(&spec, &["--jobs", "2"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("4 runs, 0 already done"), "{stderr}");
    let csv = std::fs::read_to_string(d.join("s.out/table.csv")).unwrap();
    let abs = std::path::absolute(&trace).unwrap().display().to_string();
    let rows: Vec<&str> = csv.lines().filter(|l| l.contains(&format!(",,{abs},"))).collect();
    assert_eq!(rows.len(), 2, "{csv}");
    assert!(rows[0].starts_with("2,") && rows[0].contains(",v5.8,1,done,,"), "{}", rows[0]);
    // The trace run's document is `run --trace`'s: the trace section and its faults (no optimum without --opt).
    let id = rows[1].split(',').nth(1).unwrap();
    let doc = common::read_json(&d.join("s.out/runs").join(format!("{id}.json")));
    assert_eq!(doc["trace"]["file"], abs.as_str());
    assert_eq!(doc["trace"]["refs"], 20000);
    assert!(doc["faults"].as_u64().unwrap() >= 1000, "{}", doc["faults"]);
    assert!(doc.get("opt_faults").is_none());
    // A missing trace is an error naming the specification's line.
    std::fs::write(&spec, "traces = [\"nope.rtrace\"]\n").unwrap();
    let bad = sweep(&spec, &[]);
    assert_eq!(bad.status.code(), Some(2));
    let msg = String::from_utf8_lossy(&bad.stderr);
    assert!(msg.contains("s.toml line 1") && msg.contains("nope.rtrace"), "{msg}");
    std::fs::remove_dir_all(&d).unwrap();
}
