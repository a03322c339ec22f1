//! memcachetest with memcached's slab layout and the client's leak, through the registry.

use engine::RunReport;
use workload::WorkloadSpec;

fn run(memory: &str, w: &str) -> RunReport {
    let mut b = testkit::builder("v4.6", &[("memory", memory), ("swap", "ssd:64M")]);
    workload::add_workload(&mut b, &WorkloadSpec::parse(w).unwrap(), 1, 0).unwrap();
    b.build().run(&mut |_| {}).unwrap()
}

#[test]
fn items_follow_mmtests_and_the_leak_is_resident_memory() {
    // 16M pool: 16M / 20480 = 819 items of 16K in 17352-byte chunks, 60 to a 1M slab page:
    // 13 full slab pages touch 254 pages each (the last chunk ends 1040225 bytes in),
    // the 14th's 39 items 165 pages: 3467 pages written by the fill.
    let w = "memcachetest:size=16M,value=16384,ops=20000,service_us=1";
    let plain = run("128M", w);
    let t = &plain.threads[0];
    assert_eq!(t.txns, 20000);
    let first_touch = |r: &RunReport| r.get("pgfault").unwrap() - r.get("pgmajfault").unwrap();
    assert_eq!(first_touch(&plain), 13 * 254 + 165);
    // 20000 operations of 4096 bytes each: 20000 more pages, written once (all fit in memory).
    let leaky = run("128M", &format!("{w},leak=4096"));
    assert_eq!(first_touch(&leaky) - first_touch(&plain), 20000);
    assert_eq!(leaky.threads[0].txns, 20000);
}

#[test]
fn bad_memcache_parameters_are_refused() {
    let mut b = testkit::builder("v4.6", &[("memory", "64M")]);
    for (w, key) in [
        ("memcachetest:items=10", "items"),
        ("memcachetest:value=900000", "value"),
        ("memcachetest:value=16384,leak=x", "leak"),
    ] {
        let err = workload::add_workload(&mut b, &WorkloadSpec::parse(w).unwrap(), 1, 0).unwrap_err().to_string();
        assert!(err.contains(key), "{w}: {err}");
    }
}
