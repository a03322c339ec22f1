//! Issue #23: `run --events`, `explain` and `report` on seed 004's hot/cold
//! scenario (quick scale: 64M memory, pmem swap).
//! See: issues show 23.

mod common;

use common::{arg, ok, read_json, reclaimsim, scratch};
use std::path::Path;

/// Seed 004's hot/cold run under `profile` with its events (and JSON) in `dir`.
fn hotcold(dir: &Path, profile: &str, extra: &[&str]) -> (String, serde_json::Value) {
    let (events, json) = (dir.join(format!("{profile}.events")), dir.join(format!("{profile}.json")));
    let mut args = vec!["run", "-q", "-w", "hotcold", "--profile", profile, "-s", "memory=64M", "-s", "swap=pmem:1G"];
    args.extend(["--timeseries", "10", "--events", arg(&events), "--json", arg(&json)]);
    args.extend(extra);
    ok(&args);
    (std::fs::read_to_string(&events).unwrap(), read_json(&json))
}

/// Lines of event `name` (`task-pid [cpu] flags seconds: name: fields`).
fn lines_of<'a>(text: &'a str, name: &str) -> Vec<&'a str> {
    let tag = format!(": {name}: ");
    text.lines().filter(|l| l.contains(&tag)).collect()
}

fn field(line: &str, key: &str) -> u64 {
    let v = line.split(' ').find_map(|kv| kv.strip_prefix(key).and_then(|v| v.strip_prefix('='))).unwrap();
    v.parse().unwrap_or_else(|_| panic!("{key} in {line}"))
}

#[test]
fn r23_events_add_up_to_the_counters_and_change_nothing() {
    let dir = scratch("events-sums");
    let (text, doc) = hotcold(&dir, "v5.9", &[]);
    let vm = &doc["vmstat"];
    let steal: u64 = lines_of(&text, "mm_vmscan_lru_shrink_inactive").iter().map(|l| field(l, "nr_reclaimed")).sum();
    assert_eq!(steal, vm["pgsteal_kswapd"].as_u64().unwrap() + vm["pgsteal_direct"].as_u64().unwrap());
    assert!(steal > 0);
    // Each round of do_try_to_free_pages counts one allocstall: the call's
    // begin plus its forced-deactivation retry, if any.
    let begins = lines_of(&text, "mm_vmscan_direct_reclaim_begin").len();
    let retries = lines_of(&text, "reclaimsim_direct_reclaim_retry").len();
    assert_eq!((begins + retries) as u64, vm["allocstall_normal"].as_u64().unwrap());
    assert_eq!(begins, lines_of(&text, "mm_vmscan_direct_reclaim_end").len());
    assert!(begins > 0);
    // The profile's kernel picks the layouts: v5.9 named it mm_vmscan_writepage, pfns in decimal.
    let writes = lines_of(&text, "mm_vmscan_writepage");
    assert!(writes.iter().all(|l| !l.contains(" pfn=0x")) && lines_of(&text, "mm_vmscan_write_folio").is_empty());
    let writes = writes.len() as u64;
    assert_eq!(writes, vm["nr_vmscan_write"].as_u64().unwrap());
    // Recording changes no result, and is deterministic.
    let plain = dir.join("plain.json");
    let args = ["run", "-q", "-w", "hotcold", "--profile", "v5.9", "-s", "memory=64M", "-s", "swap=pmem:1G"];
    ok(&[&args[..], &["--timeseries", "10", "--json", arg(&plain)]].concat());
    let strip = |mut v: serde_json::Value| {
        v["sim"].as_object_mut().unwrap().remove("wall_seconds");
        v
    };
    assert_eq!(strip(read_json(&plain)), strip(doc));
    let (again, _) = hotcold(&dir, "v5.9", &[]);
    assert!(again == text, "two recordings of the same run differ");
    assert!(!dir.join("v5.9.events.tmp").exists());
}

#[test]
fn r23_filter_and_size_cap() {
    let dir = scratch("events-filter");
    let (text, _) =
        hotcold(&dir, "v5.9", &["--events-filter", "mm_vmscan_kswapd_*,mm_vmscan_direct_reclaim_begin,t=0.1.."]);
    let events: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert!(!events.is_empty());
    for l in &events {
        let name = l.split(": ").nth(1).unwrap();
        assert!(name.starts_with("mm_vmscan_kswapd_") || name == "mm_vmscan_direct_reclaim_begin", "{l}");
        let stamp: f64 = l.split(": ").next().unwrap().rsplit(' ').next().unwrap().parse().unwrap();
        assert!(stamp >= 0.1, "{l}");
    }
    let (capped, _) = hotcold(&dir, "v5.9", &["--events-max", "20K"]);
    let note = capped.lines().last().unwrap();
    assert!(note.starts_with("# reclaimsim: --events-max 20K reached at "), "{note}");
    assert!(capped.len() - note.len() - 1 <= 20 * 1024);
    let out = reclaimsim(&["run", "-w", "hotcold", "--events", arg(&dir.join("x")), "--events-filter", "mm_bogus"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--events-filter: `mm_bogus` names no event"));
    assert!(!dir.join("x").exists() && !dir.join("x.tmp").exists());
    let out = reclaimsim(&["run", "-w", "hotcold", "--events", arg(&dir.join("x")), "--events-format", "6"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--events-format 6: expected `profile` or a kernel version"));
}

#[test]
fn r23_numa_kswapds_are_named_per_node() {
    let dir = scratch("events-numa");
    let filter = "mm_vmscan_kswapd_*,mm_vmscan_wakeup_kswapd,mm_vmscan_lru_shrink_inactive";
    let (text, _) = hotcold(&dir, "v5.9", &["-s", "numa.nodes=2", "--events-filter", filter]);
    for nid in 0..2u64 {
        let task = format!("kswapd{nid}-{} ", 50 + nid);
        let own: Vec<&str> = text.lines().filter(|l| l.trim_start().starts_with(&task)).collect();
        let wakes = own.iter().filter(|l| l.contains(": mm_vmscan_kswapd_wake: ")).count();
        assert!(wakes > 0, "no wake of {task}");
        // Its own events carry its node; it shrinks only its node's lists.
        assert!(own.iter().all(|l| field(l, "nid") == nid), "{task}");
        let wakeups = lines_of(&text, "mm_vmscan_wakeup_kswapd").into_iter().filter(|l| field(l, "nid") == nid);
        assert!(wakeups.count() > 0, "no wakeup of node {nid}");
    }
}

#[test]
fn r23_explain_names_why_refaults_were_not_activated() {
    let dir = scratch("events-explain");
    let ev57 = dir.join("v5.7.events");
    hotcold(&dir, "v5.7", &["--events-filter", "reclaimsim_*,mm_lru_activate,mm_vmscan_direct_reclaim_*"]);
    let out = ok(&["explain", arg(&ev57), "--top", "1"]);
    // v5.7: anon pages leave no shadow, so a swap-in is no refault to check.
    assert!(out.contains("no shadow left (this kernel keeps none for this page type)"), "{out}");
    assert!(out.contains("no shadow entry was found in its slot, so no refault check ran"), "{out}");
    assert!(out.contains("evicted by kswapd0-50 at priority"), "{out}");
    // Why it was evicted: unused since reclaim's last look, it had nothing to spare it.
    assert!(out.contains("(not used again since reclaim last looked at it or since it was listed"), "{out}");
    let ev59 = dir.join("v5.9.events");
    hotcold(&dir, "v5.9", &["--events-filter", "reclaimsim_*,mm_lru_activate"]);
    let out = ok(&["explain", arg(&ev59), "--top", "1"]);
    // v5.9: the shadow is found and the distance compared with the workingset.
    assert!(out.contains("(its shadow was found: the refault check above decided the list)"), "{out}");
    assert!(out.contains("> workingset size") && out.contains("so it is not activated"), "{out}");
    // Why none is activated here: every refault is of the cold region (r0),
    // whose window comes back every fourth round, far beyond the workingset;
    // hot-2 (r2) is never evicted (reclaim's second look finds it referenced
    // and activates it), so it never refaults.
    let (text, _) = hotcold(&dir, "v5.9", &["--events-filter", "reclaimsim_evict,reclaimsim_refault"]);
    let refaults = lines_of(&text, "reclaimsim_refault");
    assert!(!refaults.is_empty() && refaults.iter().all(|l| l.contains(" page=r0:") && l.contains(" activate=0")));
    assert!(!lines_of(&text, "reclaimsim_evict").iter().any(|l| l.contains(" page=r2:")));
    let bad = reclaimsim(&["explain", arg(&ev59), "--page", "r9:99999999"]);
    assert_eq!(bad.status.code(), Some(2));
}

/// v5.9's anon refaults are activated when their distance fits the workingset.
/// Seed 004's hot/cold run has none (docs/events.md: hot-2 is activated by
/// reclaim's second look before it is ever evicted); the seed's ebizzy row
/// `1-1280-1.3` has them, run as `reproduce seed-004 --quick` runs it (first
/// workload seed): the events' activations equal the counter, and `explain`
/// says why a refault was activated and why the page had been evicted.
#[test]
fn r23_explain_names_why_a_refault_was_activated() {
    let dir = scratch("events-activated");
    let (events, json) = (dir.join("ebizzy.events"), dir.join("ebizzy.json"));
    // seed004.rs at --quick: 1280M / 1024 / 0.59 of 64M, 128 chunk-page reads per page, 56K chunks.
    let w = "ebizzy:size=2.1186x,alpha=1.3,threads=1,ops=4443118,chunk=56K";
    let args = ["run", "-q", "-w", w, "--profile", "v5.9", "-s", "memory=64M", "-s", "swap=pmem:2G"];
    let filter = "reclaimsim_refault,reclaimsim_evict,reclaimsim_lru_add";
    let out = ["--events", arg(&events), "--events-filter", filter, "--json", arg(&json)];
    ok(&[&args[..], &out[..]].concat());
    let text = std::fs::read_to_string(&events).unwrap();
    let activated: Vec<&str> =
        lines_of(&text, "reclaimsim_refault").into_iter().filter(|l| l.ends_with(" activate=1")).collect();
    let counter = read_json(&json)["vmstat"]["workingset_activate_anon"].as_u64().unwrap();
    assert!(counter > 0);
    assert_eq!(activated.len() as u64, counter);
    let page = activated[0].split(' ').find_map(|kv| kv.strip_prefix("page=")).unwrap();
    let out = ok(&["explain", arg(&events), "--page", page]);
    assert!(out.contains("<= workingset size") && out.contains("so it is activated"), "{out}");
    assert!(out.contains("on active_anon (its shadow was found"), "{out}");
    assert!(out.contains("from inactive_anon (not used again since reclaim last looked at it"), "{out}");
    std::fs::remove_file(&events).unwrap();
}

/// `mm_vmscan_throttled` names the node: kswapdN's waits carry N, and a
/// thread's its own node (its allocations' first node).
#[test]
fn r23_throttled_names_the_node() {
    let dir = scratch("events-throttled");
    let events = dir.join("throttled.events");
    let w = "anon:size=1.5x,write=1,pattern=uniform,ops=100000,node=1";
    let args = ["run", "-q", "-w", w, "--profile", "v6.2", "-s", "memory=32M", "-s", "numa.nodes=2"];
    let out = ["-s", "swap=hdd:1G", "--events", arg(&events), "--events-filter", "mm_vmscan_throttled"];
    ok(&[&args[..], &out[..]].concat());
    let text = std::fs::read_to_string(&events).unwrap();
    let lines = lines_of(&text, "mm_vmscan_throttled");
    for (task, nid) in [("kswapd0-50 ", 0), ("kswapd1-51 ", 1), ("anon-0-0-1000 ", 1)] {
        let own: Vec<&&str> = lines.iter().filter(|l| l.trim_start().starts_with(task)).collect();
        assert!(!own.is_empty(), "{task} never waited");
        assert!(own.iter().all(|l| field(l, "nid") == nid), "{task}");
    }
}

/// mmtests' trace-vmscan-postprocess.pl (GPL-2, not shipped: fetch it with
/// scripts/get-trace-vmscan-postprocess.sh) reads a run's events; runs only
/// when `RECLAIMSIM_VMSCAN_POSTPROCESS` names a copy and perl is installed.
#[test]
fn r23_mmtests_postprocess_reads_the_events() {
    let Ok(script) = std::env::var("RECLAIMSIM_VMSCAN_POSTPROCESS") else {
        eprintln!("skipped: RECLAIMSIM_VMSCAN_POSTPROCESS is not set");
        return;
    };
    if std::process::Command::new("perl").arg("-v").output().is_err() {
        eprintln!("skipped: perl not found");
        return;
    }
    let dir = scratch("events-perl");
    let (text, doc) = hotcold(&dir, "v5.9", &["--events-format", "v3.2"]);
    let out = std::process::Command::new("perl")
        .arg(&script)
        // Per process name: the script's per-pid kswapd totals also sum every
        // task that wrote pages.
        .arg("--ignore-pid")
        .stdin(std::fs::File::open(dir.join("v5.9.events")).unwrap())
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{report}");
    assert!(!report.contains("WARNING: Failed to parse"), "{report}");
    let summary = |key: &str| -> u64 {
        let l = report.lines().find(|l| l.starts_with(key)).unwrap_or_else(|| panic!("no `{key}` in {report}"));
        l.split_whitespace().last().unwrap().parse().unwrap()
    };
    let vm = |key: &str| doc["vmstat"][key].as_u64().unwrap();
    // Direct reclaim calls, as the script counts them, are the begin events
    // (allocstall also counts each call's forced-deactivation retry).
    let retries = lines_of(&text, "reclaimsim_direct_reclaim_retry").len() as u64;
    assert_eq!(summary("Direct reclaims:") + retries, vm("allocstall_normal"));
    assert_eq!(summary("Direct reclaim pages scanned:"), vm("pgscan_direct"));
    assert_eq!(summary("Direct reclaim pages reclaimed:"), vm("pgsteal_direct"));
    assert_eq!(summary("Kswapd pages scanned:"), vm("pgscan_kswapd"));
    assert_eq!(summary("Kswapd pages reclaimed:"), vm("pgsteal_kswapd"));
    let writes = summary("Direct reclaim write anon async I/O:") + summary("Kswapd reclaim write anon async I/O:");
    assert_eq!(writes, vm("pswpout"));
    assert_eq!(summary("Wake kswapd requests:"), lines_of(&text, "mm_vmscan_wakeup_kswapd").len() as u64);
    // A wake while kswapd is awake is a re-wakeup to the script.
    let (mut awake, mut wakeups) = (false, 0);
    for l in text.lines().filter(|l| l.contains(": mm_vmscan_kswapd_")) {
        if l.contains("kswapd_wake") {
            wakeups += !awake as u64;
            awake = true;
        } else {
            awake = false;
        }
    }
    assert_eq!(summary("Kswapd wakeups:"), wakeups);
}

/// The report renders in headless chromium when one is installed: the page
/// carries the run's title after its script ran, and its screenshot is not blank.
#[test]
fn r23_report_renders_in_a_browser() {
    let dir = scratch("events-report");
    let (_, doc) = hotcold(&dir, "v5.9", &[]);
    let html = dir.join("report.html");
    ok(&["report", arg(&dir.join("v5.9.json")), "--events", arg(&dir.join("v5.9.events")), "-o", arg(&html)]);
    let page = std::fs::read_to_string(&html).unwrap();
    let title = format!("reclaimsim report: hotcold on v5.9, seed {}", doc["config"]["seed"]);
    assert!(page.contains(&format!("<title>{title}</title>")));
    assert!(page.len() < 5 << 20, "report of {} bytes", page.len());
    let Some(browser) = ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| std::process::Command::new(b).arg("--version").output().is_ok_and(|o| o.status.success()))
    else {
        eprintln!("skipped: no headless browser (chromium) found");
        return;
    };
    let headless = ["--headless", "--no-sandbox", "--disable-gpu", "--window-size=1200,1600"];
    let url = format!("file://{}", html.display());
    let dom = std::process::Command::new(browser).args(headless).args(["--dump-dom", &url]).output().unwrap();
    assert!(String::from_utf8_lossy(&dom.stdout).contains(&title), "the rendered page lacks its title");
    let shot = dir.join("report.png");
    let screenshot = format!("--screenshot={}", shot.display());
    let st = std::process::Command::new(browser).args(headless).args([&screenshot, &url]).output().unwrap();
    assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
    let decoder = png::Decoder::new(std::fs::File::open(&shot).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let px = &buf[..info.buffer_size()];
    let step = info.color_type.samples();
    let dark = px.chunks(step).filter(|p| p.iter().take(3).any(|&c| c < 200)).count();
    let share = dark as f64 / (px.len() / step) as f64;
    assert!(share > 0.005, "the screenshot is blank ({:.4} of its pixels are not white)", share);
}

/// A 10 s simulated run's report, with every event and a sample every
/// millisecond of virtual time, is under 5 MB.
#[test]
fn r23_report_of_a_10s_run_is_under_5mb() {
    let dir = scratch("events-report-10s");
    let (events, json, html) = (dir.join("run.events"), dir.join("run.json"), dir.join("report.html"));
    let args = ["run", "-q", "-w", "anon:size=1.5x,pattern=uniform,ops=300000", "--profile", "v5.9"];
    let out = ["--timeseries", "1", "--events", arg(&events), "--json", arg(&json)];
    ok(&[&args[..], &["-s", "memory=64M", "-s", "swap=ssd:1G"], &out[..]].concat());
    let virtual_ns = read_json(&json)["sim"]["virtual_ns"].as_u64().unwrap();
    assert!(virtual_ns >= 10_000_000_000, "the run took {virtual_ns} ns");
    ok(&["report", arg(&json), "--events", arg(&events), "-o", arg(&html)]);
    std::fs::remove_file(&events).unwrap();
    let size = std::fs::metadata(&html).unwrap().len();
    assert!(size < 5 << 20, "report of {size} bytes");
}

#[test]
fn r23_recording_changes_nothing_on_per_zone_lists() {
    // Before v4.8 the classic LRU has a list set per zone, and a writer's
    // allocations check each zone's dirty share against its LRU sizes: the
    // traced policy must forward every query (the per-zone sizes too) to give the
    // same run (it did not: 241212 pages scanned by kswapd against 240998).
    let dir = scratch("events-zones");
    let (plain, traced, events) = (dir.join("plain.json"), dir.join("traced.json"), dir.join("zones.events"));
    let w = ["-w", "parallelio:size=8x", "-w", "anon:size=40M,pattern=zipf,ops=400000"];
    let m = ["--profile", "v3.9", "-s", "memory=128M", "-s", "zones=dma:16M,dma32:48M,normal:rest"];
    let args = [&["run", "-q"][..], &w, &m].concat();
    ok(&[&args[..], &["--json", arg(&plain)]].concat());
    let filter = ["--events-filter", "mm_vmscan_kswapd_wake"];
    ok(&[&args[..], &["--json", arg(&traced), "--events", arg(&events)], &filter].concat());
    let strip = |mut v: serde_json::Value| {
        v["sim"].as_object_mut().unwrap().remove("wall_seconds");
        v
    };
    let (plain, traced) = (strip(read_json(&plain)), strip(read_json(&traced)));
    assert!(plain["vmstat"]["pgscan_kswapd"].as_u64().unwrap() > 0, "the run reclaims");
    assert_eq!(plain, traced);
}
