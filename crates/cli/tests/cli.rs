//! The command-line contract of issue #2: output, JSON, exit codes.

mod common;

use common::{read_json, reclaimsim, scratch};

fn run_json(path: &std::path::Path) -> serde_json::Value {
    let out = reclaimsim(&[
        "run",
        "-q",
        "--workload",
        "ebizzy:size=1.2x,ops=100000",
        "--workload",
        "fileloop:size=0.3x,passes=2",
        "--set",
        "memory=8M",
        "--set",
        "swap=ssd:32M",
        "--seed",
        "3",
        "--json",
        common::arg(path),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut v = read_json(path);
    // The only wall-clock field: everything else must be bit-identical.
    v["sim"].as_object_mut().unwrap().remove("wall_seconds").expect("sim.wall_seconds present");
    v
}

#[test]
fn json_document_is_complete_and_deterministic() {
    let dir = scratch("cli");
    let a = run_json(&dir.join("a.json"));
    let b = run_json(&dir.join("b.json"));
    assert_eq!(a, b);
    assert_eq!(a["config"]["settings"]["memory"], "8M");
    assert_eq!(a["config"]["seed"], 3);
    assert!(a["config"]["workloads"][0].as_str().unwrap().starts_with("ebizzy:size=1.2x,alpha=0.7"));
    assert!(a["vmstat"]["pswpout"].as_u64().unwrap() > 0);
    assert!(a["vmstat"]["workingset_refault_file"].is_u64());
    assert_eq!(a["threads"].as_array().unwrap().len(), 2);
    assert!(a["threads"][0]["latency_ns"]["p99"].is_u64());
    assert!(a["sim"]["events"].as_u64().unwrap() > 0);
    assert!(!dir.join("a.json.tmp").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_input_exits_2_with_a_clear_message() {
    for (args, msg) in [
        (vec!["run", "-w", "hotcold", "--set", "vm.swappiness=300"], "bad value `300` for `vm.swappiness`: expected an integer in 0..=200"),
        (vec!["run", "-w", "hotcold", "--set", "bogus=1"], "unknown setting `bogus`"),
        (vec!["run", "-w", "nosuch"], "unknown workload `nosuch`; `reclaimsim workloads` lists them"),
        (vec!["run", "-w", "ebizzy:alpah=1"], "workload `ebizzy` has no parameter `alpah`; valid parameters: size, alpha, chunk, copy, threads, ops, start_ms"),
        (vec!["run", "-w", "ebizzy:size=huge"], "bad value `huge` for `size`"),
        (vec!["run", "-w", "hotcold", "--profile", "v9"], "unknown profile `v9`; did you mean `v3.9`?"),
        (vec!["run", "-w", "hotcold", "--set", "memory=100K"], "too small"),
    ] {
        let out = reclaimsim(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(msg), "{args:?}: {err}");
    }
}

#[test]
fn out_of_memory_kills_or_is_an_error_not_a_hang() {
    let args = ["run", "-w", "anon:size=2x,pattern=idle", "--set", "memory=4M", "--set", "swap=none"];
    let out = reclaimsim(&args);
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("oom_kill 1") && stdout.contains("# oom-killed         anon#0/0 at"), "{stdout}");
    let out = reclaimsim(&[&args[..], &["-q", "--set", "vm.panic_on_oom=1"]].concat());
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("out of memory"));
}

#[test]
fn listings_name_profiles_workloads_and_settings() {
    let p = String::from_utf8(reclaimsim(&["profiles"]).stdout).unwrap();
    for name in ["v5.7", "v5.8", "v5.9", "v6.2", "lru_balance=rotation"] {
        assert!(p.contains(name), "{name}");
    }
    let w = String::from_utf8(reclaimsim(&["workloads"]).stdout).unwrap();
    for name in ["hotcold", "ebizzy", "fileloop", "anon"] {
        assert!(w.contains(name), "{name}");
    }
    let s = String::from_utf8(reclaimsim(&["settings"]).stdout).unwrap();
    assert!(s.contains("vm.watermark_scale_factor"));
}

#[test]
fn lru_gen_commands_and_dump() {
    let args = |profile: &'static str| {
        vec![
            "run",
            "-q",
            "--profile",
            profile,
            "--set",
            "memory=8M",
            "--set",
            "swap=zram:32M",
            "--lru-gen-dump",
            "-w",
            "anon:size=1.5x,pattern=uniform,ops=20000",
            "-w",
            "lru-gen:cmds=+ 0 0 3;- 0 0 9,start_ms=1",
        ]
    };
    let out = reclaimsim(&args("v6.1-mglru"));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // The aging request succeeds; the eviction request names a generation that cannot be evicted yet.
    assert!(text.contains("+ 0 0 3\n- 0 0 9: -EINVAL"), "{text}");
    assert!(text.contains("memcg     0 \n node     0\n"), "{text}");
    let json = std::env::temp_dir().join(format!("reclaimsim-lrugen-{}.json", std::process::id()));
    let mut classic = args("v6.1-classic");
    classic.extend(["--json", json.to_str().unwrap()]);
    let out = reclaimsim(&classic);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("-ENOENT") && text.contains("lru_gen: not available with lru=classic"), "{text}");
    // PSI and the reclaim work breakdown are reported for every design.
    let v = read_json(&json);
    std::fs::remove_file(&json).unwrap();
    let (some, full) = (&v["psi"]["memory"]["some"], &v["psi"]["memory"]["full"]);
    assert!(some["total_us"].as_u64().unwrap() >= full["total_us"].as_u64().unwrap());
    assert!(some["total_us"].as_u64().unwrap() > 0 && some["avg"].as_f64().unwrap() > 0.0);
    assert!(v["reclaim"]["work"]["kswapd"]["rmap_walks"].as_u64().unwrap() > 0);
    assert_eq!(v["reclaim"]["work"]["kswapd"]["walk_ptes"], 0);
    assert!(v["reclaim"]["direct_reclaim_latency_ns"]["p99"].is_u64());
    assert_eq!(v["reclaim"]["control_writes"].as_array().unwrap().len(), 1);
    let out = reclaimsim(&["run", "-w", "lru-gen:cmds=* 0 0 1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("lru_gen command `* 0 0 1`: expected `+` (aging) or `-` (eviction)"));
}
