//! Two tenants in a cgroup v2 tree on a squeezed machine: `memory.low`
//! covering the service's working set keeps global reclaim off it.

use engine::RunReport;
use workload::WorkloadSpec;

fn run(low: &str) -> RunReport {
    let settings = [("memory", "64M"), ("swap", "ssd:256M"), ("cgroup.svc.memory.low", low)];
    let mut b = testkit::builder("v6.12-classic", &settings);
    let tenants =
        ["anon:size=24M,pattern=zipf,ops=100000,cgroup=svc", "anon:size=80M,pattern=zipf,ops=100000,cgroup=batch"];
    for (i, w) in tenants.iter().enumerate() {
        workload::add_workload(&mut b, &WorkloadSpec::parse(w).unwrap(), 1, i as u64).unwrap();
    }
    b.build().run(&mut |_| {}).unwrap()
}

/// Virtual time the service's thread took.
fn svc_ns(r: &RunReport) -> u64 {
    r.threads.iter().find(|t| t.name.starts_with("anon#0")).expect("the service's thread").end_ns
}

/// `workingset_refault_anon` of group `path`.
fn refaults(r: &RunReport, path: &str) -> u64 {
    let g = r.cgroups.iter().find(|g| g.path == path).expect("the group is reported");
    g.stat.iter().find(|(n, _)| *n == "workingset_refault_anon").expect("the counter").1
}

#[test]
fn memory_low_keeps_the_services_working_set_resident() {
    let (open, protected) = (run("0"), run("32M"));
    // Unprotected, the service shares the squeeze and waits on swap-ins.
    assert!(open.threads[0].reclaim_stall_ns > 0 || svc_ns(&open) > 2 * svc_ns(&protected));
    // Protected, its pages stay: it runs at least twice as fast, while the
    // batch tenant takes the reclaim.
    assert!(svc_ns(&protected) * 2 < svc_ns(&open), "{} vs {}", svc_ns(&protected), svc_ns(&open));
    assert!(protected.get("pswpin").unwrap() > 0, "the batch tenant still swaps");
    // Issue #21: protected, the service refaults under 10% of the batch tenant;
    // unprotected, in proportion to its size (24M vs 80M) or more.
    assert!(refaults(&protected, "svc") * 10 < refaults(&protected, "batch"));
    assert!(refaults(&open, "svc") * 80 >= refaults(&open, "batch") * 24 / 2);
    // The group totals add up to the machine's.
    let sum = refaults(&open, "svc") + refaults(&open, "batch");
    assert_eq!(sum, open.get("workingset_refault_anon").unwrap());
}
