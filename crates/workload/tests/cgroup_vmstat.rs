//! Where a group's own reclaim is counted in `/proc/vmstat`: not at all
//! before v7.1, in `pgscan_direct`/`pgsteal_direct` from v7.1 ("mm: move
//! pgscan and pgsteal to node stats"), except `memory.reclaim`'s (counted
//! as `_proactive` there, not modelled).

use engine::RunReport;
use workload::WorkloadSpec;

/// `memory.high` squeezing group `web`, and an 8M `memory.reclaim` write to
/// group `pr`, on a machine with room (no global reclaim), under `profile`.
fn run(profile: &str) -> RunReport {
    let settings = [("memory", "256M"), ("swap", "ssd:256M"), ("cgroup.web.memory.high", "16M")];
    let mut b = testkit::builder(profile, &settings);
    let tenants = [
        "anon:size=32M,pattern=zipf,ops=50000,cgroup=web",
        "anon:size=32M,pattern=idle,cgroup=pr",
        "memory-reclaim:target=pr,amount=8M,start_ms=100",
    ];
    for (i, w) in tenants.iter().enumerate() {
        workload::add_workload(&mut b, &WorkloadSpec::parse(w).unwrap(), 1, i as u64).unwrap();
    }
    b.build().run(&mut |_| {}).unwrap()
}

/// `memory.stat` counter `name` of group `path`.
fn stat(r: &RunReport, path: &str, name: &str) -> u64 {
    let g = r.cgroups.iter().find(|g| g.path == path).expect("the group is reported");
    g.stat.iter().find(|(n, _)| *n == name).expect("the counter").1
}

#[test]
fn a_groups_own_reclaim_counts_as_direct_in_vmstat_from_v7_1() {
    for (profile, counted) in [("v6.12-classic", false), ("v7.2-classic", true)] {
        let r = run(profile);
        let (web, pr) = (stat(&r, "web", "pgsteal_direct"), stat(&r, "pr", "pgsteal_direct"));
        assert!(web > 0 && pr >= 2048, "{profile}: both groups reclaimed ({web}, {pr})");
        let global = (r.get("pgsteal_direct").unwrap(), r.get("pgscan_direct").unwrap());
        if counted {
            // memory.high's reclaim only: memory.reclaim's is proactive.
            assert_eq!(global.0, web, "{profile}");
            assert_eq!(global.1, stat(&r, "web", "pgscan_direct"), "{profile}");
        } else {
            assert_eq!(global, (0, 0), "{profile}");
        }
        assert_eq!(r.get("pgscan_kswapd").unwrap() + r.get("allocstall_normal").unwrap_or(0), 0, "{profile}");
    }
}
