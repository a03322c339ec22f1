//! `cpus=N`: workload threads and kswapd sharing N CPUs.
//!
//! - with as many CPUs as actors, nothing waits and the run is the same as
//!   without a CPU count;
//! - with one CPU, the CPU is never used twice at once: kswapd's CPU time plus
//!   the thread's running time fit in the run's length, and both waited;
//! - threads on one CPU share it fairly.

use engine::{Access, RunReport, SimBuilder};
use simrng::{Sampler, SimRng};
use testkit::Script;

/// Pages of memory (4M).
const MEMORY_PAGES: u32 = 1024;

/// A 4M machine under v6.2 with swap on `swap` and `extra` settings.
fn machine(swap: &str, extra: &[(&str, &str)]) -> SimBuilder {
    let mut settings = vec![("memory", "4M"), ("swap", swap)];
    settings.extend_from_slice(extra);
    testkit::builder("v6.2", &settings)
}

/// `threads` threads, each storing zipf-chosen pages of its own anon region
/// (together 1.5x memory; `n` accesses each), after writing it once.
fn run(swap: &str, extra: &[(&str, &str)], threads: usize, n: usize) -> RunReport {
    let mut b = machine(swap, extra);
    let span = MEMORY_PAGES * 3 / 2 / threads as u32;
    for t in 0..threads {
        let region = b.add_anon_region(span);
        let mut rng = SimRng::new(7, t as u64);
        let pages = Sampler::zipf(span, 0.8, &mut rng);
        let fill = (0..span).map(|page| Access::Mem { region, page, write: true });
        let mut accesses: Vec<Access> = fill.collect();
        accesses.extend((0..n).map(|_| Access::Mem { region, page: pages.sample(&mut rng), write: true }));
        b.add_thread(format!("t{t}"), Box::new(Script::new(accesses)));
    }
    b.build().paranoid().run(&mut |_| {}).unwrap_or_else(|e| panic!("{extra:?}: {e}"))
}

#[test]
fn as_many_cpus_as_actors_change_nothing() {
    // With cpus=2, kswapd takes the CPU the thread leaves while it waits for the
    // SSD; without a CPU count it has a CPU of its own. The per-CPU page lists then
    // differ, which shows once reclaim takes slab pages (the swap cache's tree
    // nodes of v6.3..v6.17), so those are left out here.
    let nodes_off = ("swap_cache_shadow_nodes", "0");
    for swap in ["zram:16M", "ssd:16M"] {
        let free = run(swap, &[nodes_off], 1, 20_000);
        let two = run(swap, &[nodes_off, ("cpus", "2")], 1, 20_000);
        assert!(free.get("pgsteal_kswapd").unwrap() > 0, "{swap}: kswapd must run for the test to mean anything");
        assert_eq!(free.vmstat, two.vmstat, "{swap}");
        assert_eq!(free.virtual_ns, two.virtual_ns, "{swap}");
        assert_eq!(free.threads[0].latency_ns, two.threads[0].latency_ns, "{swap}");
        assert_eq!((two.kswapd_run_delay_ns, two.threads[0].run_delay_ns), (0, 0), "{swap}: nobody waits");
    }
}

#[test]
fn one_cpu_is_never_used_twice_at_once() {
    // zram: the thread never sleeps (swap-ins decompress on its CPU), so it
    // runs for its whole life except while it waits for the CPU.
    let r = run("zram:16M", &[("cpus", "1")], 1, 20_000);
    let t = &r.threads[0];
    let thread_running = t.end_ns - t.run_delay_ns;
    assert!(r.kswapd_cpu_ns > 0 && r.kswapd_run_delay_ns > 0, "kswapd ran and waited: {r:?}");
    assert!(t.run_delay_ns > 0, "the thread waited for kswapd");
    assert!(
        r.kswapd_cpu_ns + thread_running <= r.virtual_ns,
        "kswapd {} + thread {} > run {}",
        r.kswapd_cpu_ns,
        thread_running,
        r.virtual_ns
    );
}

#[test]
fn threads_on_one_cpu_share_it_fairly() {
    for eevdf in ["0", "1"] {
        // Each thread runs for several slices.
        let r = run("zram:64M", &[("cpus", "1"), ("sched.eevdf", eevdf)], 4, 400_000);
        let delays: Vec<u64> = r.threads.iter().map(|t| t.run_delay_ns).collect();
        let (lo, hi) = (*delays.iter().min().unwrap(), *delays.iter().max().unwrap());
        assert!(lo > 0, "eevdf={eevdf}: every thread waited: {delays:?}");
        // Four equal threads: each waits about three quarters of the time the others run.
        assert!(hi <= lo + lo / 4, "eevdf={eevdf}: run delays {delays:?}");
    }
}
