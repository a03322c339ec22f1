//! `reclaimsim validate` against real kernels (issues #7, #17).
//!
//! The tests that touch a real kernel are opt-in: they change the machine
//! (cgroups, zram, swap, qemu boots, kernel package downloads), and the host
//! path's verdict depends on the machine's load. `RECLAIMSIM_KERNEL_TESTS`
//! turns them on: `qemu` (Debian kernels booted under deterministic qemu),
//! `host` (the running kernel: needs root, the cgroup v1 memory controller and
//! swap), `all` (both), or a comma-separated list; unset or empty, they print
//! why they skip and pass. Where an enabled test's requirements are missing
//! the command refuses with exit code 3 and the test prints the reason and
//! passes. The kernel tests run one at a time (they share zram and the CPUs).

use std::process::Command;
use std::sync::{Mutex, MutexGuard};

/// The environment variable that turns the real-kernel tests on.
const KERNEL_TESTS: &str = "RECLAIMSIM_KERNEL_TESTS";

/// Held by every real-kernel test: never two validations at once.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Which real-kernel test kinds `value` (of [`KERNEL_TESTS`]) turns on: `qemu`, `host`.
fn enabled_kinds(value: &str) -> Result<Vec<&'static str>, String> {
    let mut kinds = Vec::new();
    for word in value.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        match word {
            "qemu" => kinds.push("qemu"),
            "host" => kinds.push("host"),
            "all" => kinds.extend(["qemu", "host"]),
            other => {
                return Err(format!(
                    "{KERNEL_TESTS}={value}: unknown `{other}`; expected qemu, host, all or a comma-separated list"
                ))
            }
        }
    }
    Ok(kinds)
}

/// The lock for a real-kernel test of `kind`, or `None` (with the reason
/// printed) when [`KERNEL_TESTS`] does not turn that kind on.
fn kernel_test(kind: &str) -> Option<MutexGuard<'static, ()>> {
    let value = std::env::var(KERNEL_TESTS).unwrap_or_default();
    let kinds = enabled_kinds(&value).unwrap_or_else(|e| panic!("{e}"));
    if !kinds.contains(&kind) {
        eprintln!("skipped: a {kind} real-kernel test; set {KERNEL_TESTS}={kind} (or all) to run it");
        return None;
    }
    Some(ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner()))
}

#[test]
fn kernel_test_selection() {
    assert_eq!(enabled_kinds(""), Ok(vec![]));
    assert_eq!(enabled_kinds("qemu"), Ok(vec!["qemu"]));
    assert_eq!(enabled_kinds("host"), Ok(vec!["host"]));
    assert_eq!(enabled_kinds("all"), Ok(vec!["qemu", "host"]));
    assert_eq!(enabled_kinds("host, qemu"), Ok(vec!["host", "qemu"]));
    assert!(enabled_kinds("kvm").unwrap_err().contains("unknown `kvm`; expected qemu, host, all"));
}

/// Documented misses (docs/validation.md, "What misses"): at swappiness 200 the
/// little file reclaim left comes from cache-trim episodes that depend on when
/// the kernel flushes the group's statistics; the kernel itself varies up to
/// 126% run to run there. Held within a factor of 3 so that a gross regression
/// (none, or an order of magnitude more) still fails.
const KNOWN_MISSES: &[(&str, &str)] = &[("mixed-sw200", "workingset_refault_file"), ("mixed-sw200", "pgsteal_file")];

fn reclaimsim(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_reclaimsim")).args(args).output().unwrap()
}

/// `validate` exits 0 when every scenario is within tolerance and 1 (after
/// writing its JSON) when one is not, naming the scenarios.
fn assert_exit_matches_verdict(out: &std::process::Output, doc: &serde_json::Value) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let missed: Vec<&str> = doc["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["all_within"] == false)
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    if missed.is_empty() {
        assert!(out.status.success(), "{stderr}");
    } else {
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains(&format!("outside tolerance: {}", missed.join(", "))), "{stderr}");
    }
}

/// `validate all --quick` on the running kernel (opt-in: `RECLAIMSIM_KERNEL_TESTS=host`;
/// its verdict depends on the machine's load, so CI does not run it).
#[test]
fn quick_scenarios_match_the_kernel() {
    let Some(_one) = kernel_test("host") else { return };
    let path = std::env::temp_dir().join(format!("reclaimsim-validate-{}.json", std::process::id()));
    let out = reclaimsim(&["validate", "all", "--quick", "--json", path.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(3) {
        eprintln!("skipped: {}", stderr.trim());
        assert!(stderr.contains("validate cannot run here: needs"), "{stderr}");
        return;
    }
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_exit_matches_verdict(&out, &doc);
    let scenarios = doc["scenarios"].as_array().unwrap();
    assert_eq!(scenarios.len(), 9);
    if doc["host"]["swap"] != "zram" {
        // zram was busy: the swap-file fallback ran; its known differences are in
        // docs/validation.md, so only completion is checked here.
        eprintln!("zram busy: validated on a swap file, tolerances not asserted");
        return;
    }
    let mut misses = Vec::new();
    for s in scenarios {
        let name = s["name"].as_str().unwrap();
        let get = |who: &str, counter: &str| {
            s["counters"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["name"] == counter)
                .map_or(0.0, |c| c[who].as_f64().unwrap())
        };
        for c in s["counters"].as_array().unwrap() {
            let counter = c["name"].as_str().unwrap();
            let (kernel, sim) = (c["kernel_mean"].as_f64().unwrap(), c["sim"].as_f64().unwrap());
            // The documented misses vary 22-126% run to run in the kernel itself: assert
            // only that they stay a small share (under 5%) of the scenario's anon reclaim.
            let small = |who: &str, v: f64| v < 0.05 * get(who, "pgsteal_anon");
            let ok = if KNOWN_MISSES.contains(&(name, counter)) {
                small("kernel_mean", kernel) && small("sim", sim)
            } else {
                c["within"].as_bool().unwrap()
            };
            if c["criterion"].as_bool().unwrap() && !ok {
                misses.push(format!("{name} {counter}: kernel {kernel} sim {sim}"));
            }
        }
        // Limit reclaim only: global reclaim would make the vmstat deltas meaningless.
        let kernel_global: f64 = s["counters"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["name"] == "pgscan_kswapd" || c["name"] == "pgscan_direct")
            .map(|c| c["kernel_mean"].as_f64().unwrap())
            .sum();
        assert_eq!(kernel_global, 0.0, "{name}: the kernel reclaimed globally during validation");
    }
    assert!(misses.is_empty(), "outside tolerance:\n{}", misses.join("\n"));
    // The scenarios exercise what they are named for.
    let sim = |scenario: &str, counter: &str| {
        let s = scenarios.iter().find(|s| s["name"] == scenario).unwrap();
        s["counters"].as_array().unwrap().iter().find(|c| c["name"] == counter).unwrap()["sim"].as_f64().unwrap()
    };
    assert!(sim("anon-seq", "pswpin") > 10_000.0);
    assert!(sim("file-zipf", "workingset_refault_file") > 10_000.0);
    assert_eq!(sim("mixed-sw0", "pswpout"), 0.0);
    assert!(sim("mixed-sw200", "pswpout") > sim("mixed-sw100", "pswpout"));
}

#[test]
fn bad_scenario_is_a_usage_error() {
    let out = reclaimsim(&["validate", "nosuch"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown scenario `nosuch`; scenarios: all, anon-seq,"));
}

#[test]
fn driver_dry_mode_is_deterministic_and_matches_the_pattern() {
    let a = reclaimsim(&["driver", "dry", "mixed:anon=64K,file=64K,ops=100,seed=5"]);
    let b = reclaimsim(&["driver", "dry", "mixed:anon=64K,file=64K,ops=100,seed=5"]);
    assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
    assert_eq!(a.stdout, b.stdout);
    let text = String::from_utf8(a.stdout).unwrap();
    assert!(text.starts_with("reclaimsim-driver-trace 1\npattern mixed:anon=64K,file=64K,ops=100,alpha=0.8,share=50,seed=5,write=1\nanon 16\nfile 16\nops 116\n"));
    assert_eq!(text.lines().count(), 5 + 116 + 1);
}

/// `validate --kernel debian-6.12 --quick` on one scenario: boots the Debian
/// kernel under qemu (opt-in: `RECLAIMSIM_KERNEL_TESTS=qemu`). Skipped (with the
/// reason) where qemu, busybox-static or the kernel package is unavailable.
#[test]
fn debian_kernel_under_qemu_matches_and_leaves_nothing_behind() {
    let Some(_one) = kernel_test("qemu") else { return };
    let path = std::env::temp_dir().join(format!("reclaimsim-validate-qemu-{}.json", std::process::id()));
    let child = Command::new(env!("CARGO_BIN_EXE_reclaimsim"))
        .args([
            "validate",
            "anon-seq",
            "--kernel",
            "debian-6.12",
            "--lru-gen",
            "on",
            "--quick",
            "--fresh",
            "--json",
            path.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(3) {
        eprintln!("skipped: {}", stderr.trim());
        assert!(stderr.contains("validate cannot run here: "), "{stderr}");
        return;
    }
    assert!(out.status.success(), "{stderr}");
    assert!(leftovers(pid).is_empty(), "left behind: {:?}", leftovers(pid));
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(doc["kernel"]["family"], "debian-6.12");
    let s = &doc["scenarios"][0];
    assert_eq!(s["name"], "anon-seq (lru_gen on)");
    assert_eq!(s["sim_profile"], "v6.12-mglru");
    assert_eq!(s["kernel_runs"].as_array().unwrap().len(), 1, "the warm-up run is discarded");
    let counter = |name: &str| s["counters"].as_array().unwrap().iter().find(|c| c["name"] == name).unwrap().clone();
    // 4 passes over 24M with a 16M limit: every page of passes 2-4 is swapped in.
    assert_eq!(counter("pswpin")["kernel_mean"].as_f64().unwrap(), 3.0 * 6144.0);
    for name in ["pswpin", "pswpout", "pgmajfault", "pgsteal_anon"] {
        assert!(counter(name)["within"].as_bool().unwrap(), "{name}: {}", counter(name));
    }
    assert_eq!(counter("pgscan_kswapd")["kernel_mean"].as_f64().unwrap(), 0.0, "limit reclaim only");
    // zram's compression as measured in the guest: orig / compr of mm_stat after the last access.
    let mm_stat: Vec<f64> = s["kernel_runs"][0]["zram_mm_stat"]
        .as_str()
        .expect("the driver read zram's mm_stat")
        .split_whitespace()
        .map(|w| w.parse().unwrap())
        .collect();
    assert!(mm_stat[0] >= 8.0 * 1048576.0, "at least the 8M over the 16M limit is in zram: {mm_stat:?}");
    let setting = |key: &str| {
        s["sim_settings"]
            .as_array()
            .unwrap()
            .iter()
            .rev()
            .find_map(|v| v.as_str()?.strip_prefix(key))
            .map(str::to_string)
    };
    let ratio: f64 = setting("zram.comp_ratio=").expect("comp_ratio set from mm_stat").parse().unwrap();
    assert!((ratio - mm_stat[0] / mm_stat[1]).abs() < 0.01 * ratio, "{ratio} vs {mm_stat:?}");
}

/// The deterministic guest: the same scenario booted twice (`--fresh`: no
/// cached report) gives the same kernel counters, every `/proc/vmstat` delta,
/// `memory.stat` entry and starting state; a memory-group scenario on 6.12 and
/// a global one on 6.1, both with MGLRU (opt-in: `RECLAIMSIM_KERNEL_TESTS=qemu`).
#[test]
fn a_qemu_scenario_booted_twice_gives_identical_counters() {
    let Some(_one) = kernel_test("qemu") else { return };
    let boot = |scenario: &str, kernel: &str, n: u32| {
        let path = std::env::temp_dir().join(format!("reclaimsim-validate-twice-{}-{n}.json", std::process::id()));
        let args = ["validate", scenario, "--kernel", kernel, "--lru-gen", "on", "--quick", "--fresh", "--json"];
        let out = Command::new(env!("CARGO_BIN_EXE_reclaimsim")).args(args).arg(&path).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        if out.status.code() == Some(3) {
            eprintln!("skipped: {}", stderr.trim());
            return None;
        }
        let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_exit_matches_verdict(&out, &doc);
        assert_eq!(doc["scenarios"][0]["cached"], false, "--fresh boots");
        Some(doc["scenarios"][0]["kernel_runs"][0].clone())
    };
    for (scenario, kernel) in [("hotcold", "debian-6.12"), ("global-hotcold", "debian-6.1")] {
        let Some(first) = boot(scenario, kernel, 1) else { return };
        let second = boot(scenario, kernel, 2).expect("the first boot ran");
        assert!(first["vmstat_delta"]["pswpin"].as_u64().unwrap() > 1000, "{scenario} reclaims: {first}");
        for part in ["vmstat_delta", "memory_stat", "start", "polls"] {
            assert_eq!(first[part], second[part], "{scenario} on {kernel}: {part}");
        }
    }
}

/// `validate SCENARIO --kernel debian-6.12 --lru-gen off --quick`: its JSON
/// document, the exit code checked against the verdict; None (with the reason
/// printed) where the machine cannot boot the guest.
fn quick_on_612_classic(scenario: &str) -> Option<serde_json::Value> {
    let path = std::env::temp_dir().join(format!("reclaimsim-validate-{scenario}-{}.json", std::process::id()));
    let args = ["validate", scenario, "--kernel", "debian-6.12", "--lru-gen", "off", "--quick", "--json"];
    let out = Command::new(env!("CARGO_BIN_EXE_reclaimsim")).args(args).arg(&path).output().unwrap();
    if out.status.code() == Some(3) {
        eprintln!("skipped: {}", String::from_utf8_lossy(&out.stderr).trim());
        return None;
    }
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_exit_matches_verdict(&out, &doc);
    Some(doc)
}

/// Global reclaim in a small guest (no memory group): kswapd and direct
/// reclaim both run in the kernel, and the simulator starts from the guest's
/// reported state (opt-in: `RECLAIMSIM_KERNEL_TESTS=qemu`).
#[test]
fn global_reclaim_in_the_guest_runs_kswapd_and_direct_reclaim() {
    let Some(_one) = kernel_test("qemu") else { return };
    let Some(doc) = quick_on_612_classic("global-zipf") else { return };
    let s = &doc["scenarios"][0];
    let kernel = |name: &str| {
        s["counters"].as_array().unwrap().iter().find(|c| c["name"] == name).unwrap()["kernel_mean"].as_f64().unwrap()
    };
    for name in ["pgscan_kswapd", "pgsteal_kswapd", "pgscan_direct", "pgsteal_direct", "allocstall", "pswpout"] {
        assert!(kernel(name) > 0.0, "{name} did not run in the guest: {}", s["counters"]);
    }
    let start = &s["kernel_runs"][0]["start"];
    let settings: Vec<&str> = s["sim_settings"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert!(settings.contains(&format!("vm.min_free_kbytes={}", start["min_free_kbytes"]).as_str()), "{settings:?}");
    assert!(!settings.iter().any(|k| k.starts_with("memcg.")), "{settings:?}");
    // The guest's costs, timed by the calibration boot (validate.md, "The guest's CPU costs").
    for key in ["cpu.access_ns=", "cpu.fault_ns=", "swap.read_cpu_ns=", "swap.write_cpu_ns="] {
        assert!(settings.iter().any(|k| k.starts_with(key)), "{key}: {settings:?}");
    }
    assert!(start["MemFree"].as_u64().unwrap() < start["MemTotal"].as_u64().unwrap());
}

/// Seed 004's hot/cold scenario at its own ratios (issue #23): the kernel's
/// workingset detection activates no refault there, because hot-2 is never
/// evicted; every swap-in is of a cold step, in the kernel as in the
/// simulator (opt-in: `RECLAIMSIM_KERNEL_TESTS=qemu`).
#[test]
fn seed_004s_hotcold_has_no_activated_refault_in_the_kernel() {
    let Some(_one) = kernel_test("qemu") else { return };
    let Some(doc) = quick_on_612_classic("seed004-hotcold") else { return };
    let s = &doc["scenarios"][0];
    let counter = |name: &str, side: &str| {
        s["counters"].as_array().unwrap().iter().find(|c| c["name"] == name).unwrap()[side].as_f64().unwrap()
    };
    // Ten rounds, each swapping in one 7M cold step (1792 pages) and no hot-2 page.
    for side in ["kernel_mean", "sim"] {
        assert_eq!(counter("pswpin", side), 10.0 * 1792.0, "{side}: {}", s["counters"]);
        assert_eq!(counter("workingset_activate_anon", side), 0.0, "{side}: {}", s["counters"]);
    }
}

/// Scratch directories of the validate process `pid` still on disk.
fn leftovers(pid: u32) -> Vec<std::path::PathBuf> {
    let prefix = format!("reclaimsim-guest.{pid}.");
    std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with(&prefix))
        .collect()
}

/// SIGINT while the guest runs: qemu is killed, the scratch directory removed
/// (opt-in: `RECLAIMSIM_KERNEL_TESTS=qemu`).
#[test]
fn interrupted_qemu_validation_cleans_up() {
    let Some(_one) = kernel_test("qemu") else { return };
    let mut child = Command::new(env!("CARGO_BIN_EXE_reclaimsim"))
        .args(["validate", "anon-seq", "--kernel", "debian-6.1", "--lru-gen", "off", "--quick", "--fresh"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    // Wait until a boot is under way (its initramfs written), or the command ended (skipped).
    let started = std::time::Instant::now();
    let booting = loop {
        if leftovers(pid).iter().any(|d| d.join("initramfs.cpio").exists()) {
            break true;
        }
        if child.try_wait().unwrap().is_some() || started.elapsed().as_secs() > 600 {
            break false;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    if !booting {
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        eprintln!("skipped: {}", stderr.trim());
        assert_eq!(out.status.code(), Some(3), "{stderr}");
        return;
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    // SAFETY: signals our own child.
    unsafe { libc::kill(pid as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("interrupted"), "{stderr}");
    assert!(leftovers(pid).is_empty(), "left behind: {:?}", leftovers(pid));
    // No qemu started by it survives.
    let qemus: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| std::fs::read(e.ok()?.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(&format!("reclaimsim-guest.{pid}.")))
        .collect();
    assert!(qemus.is_empty(), "{qemus:?}");
}

#[test]
fn kernel_and_lru_gen_usage_errors() {
    let out = reclaimsim(&["validate", "anon-seq", "--kernel", "debian-4.19"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("--kernel debian-4.19: expected host, debian-5.10, debian-6.1, debian-6.12, debian-7.2"));
    let out = reclaimsim(&["validate", "anon-seq", "--kernel", "debian-5.10", "--lru-gen", "on"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--lru-gen on: debian-5.10 has no MGLRU"));
    let out = reclaimsim(&["validate", "anon-seq", "--lru-gen", "on"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--lru-gen needs --kernel debian-*"));
    // Memory-group mixed rows run on the host only.
    let out = reclaimsim(&["validate", "mixed-sw60", "--kernel", "debian-6.12"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        err.contains(
            "unknown scenario `mixed-sw60`; scenarios: all, anon-seq, anon-zipf, hotcold, seed004-hotcold, file-seq,"
        ),
        "{err}"
    );
    assert!(err.contains("global-mixed-sw60") && err.ends_with("(with debian-6.12)\n"), "{err}");
    let out = reclaimsim(&["validate", "zswap-blk", "--kernel", "debian-6.1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("zswap-blk: needs a kernel of v6.8 or newer"));
    let out = reclaimsim(&["validate", "all", "--kernel", "debian-6.12", "--cached", "--fresh"]);
    assert_eq!(out.status.code(), Some(2), "--cached and --fresh exclude each other");
}
