//! Per-thread CPU time, as `/usr/bin/time` splits it:
//!
//! - on a tiny machine that never reclaims, the user and system time of a
//!   thread are exactly the costs of what it did, hand-counted: resident
//!   memory accesses and their repeats are user time, faults and the copies of
//!   `read()` are system time, device waits and think time are neither;
//! - under memory pressure, whatever the CPU count, the threads' and kswapd's
//!   CPU time fit in the CPUs the run had (each actor its own without `cpus`),
//!   and no thread has more CPU time than its elapsed time.

use engine::Program;
use engine::{Access, RunReport, SimBuilder, Step};
use simrng::{Sampler, SimRng};
use testkit::Steps;

/// CPU costs set explicitly, so that the test does not follow the defaults.
const ACCESS_NS: u64 = 40;
const FAULT_NS: u64 = 900;

#[test]
fn a_threads_user_and_system_time_are_its_accesses_and_its_kernel_work() {
    let mut b = testkit::builder(
        "v6.2",
        &[("memory", "16M"), ("swap", "none"), ("cpu.access_ns", "40"), ("cpu.fault_ns", "900"), ("fs", "ssd")],
    );
    let region = b.add_anon_region(8);
    let file = b.add_file(4);
    let store = |page| Step::Access(Access::Mem { region, page, write: true });
    let read = |page| Step::Access(Access::FileRead { file, page });
    let steps = vec![
        // Three first touches: three faults (system).
        store(0),
        store(1),
        store(2),
        // Five resident stores (user), then 100 repeats of the last one (user).
        store(0),
        store(1),
        store(2),
        store(1),
        store(0),
        Step::Repeat(100),
        // A page-cache miss: the thread sleeps on the read, then copies (system);
        // a hit: the copy only (system).
        read(3),
        read(3),
        // Thinking is neither.
        Step::Think(1_000_000),
    ];
    b.add_thread("t", Box::new(Steps::new(steps)));
    let r = b.build().run(&mut |_| {}).unwrap();
    let t = &r.threads[0];
    assert_eq!(r.get("pgscan_kswapd").unwrap() + r.get("pgscan_direct").unwrap(), 0, "no reclaim");
    assert_eq!(t.user_time_ns, (5 + 100) * ACCESS_NS);
    assert_eq!(t.system_time_ns, 3 * FAULT_NS + 2 * ACCESS_NS);
    // The rest of its time it slept: the read and the think.
    let read_wait = t.end_ns - t.user_time_ns - t.system_time_ns - 1_000_000;
    assert!(read_wait > 10_000, "an SSD read takes tens of us: {read_wait} ns");
    assert_eq!(t.ops, 10, "repeats are not operations");
    assert_eq!((r.user_time_ns(), r.system_time_ns()), (t.user_time_ns, t.system_time_ns));
    assert_eq!(r.kswapd_cpu_ns_by_node, vec![0]);
}

/// The page cache's own costs (`cpu.file_*`, measured in the guest by
/// validate's calibration): a `read()` costs `file_read_ns`, miss or hit; a
/// `write()` that dirties a page new to the cache `file_write_new_ns`; one to
/// the page, now dirty, `file_write_ns`. All system time.
#[test]
fn reads_and_writes_cost_the_page_caches_own_figures() {
    let costs = [("cpu.file_read_ns", "2000"), ("cpu.file_write_ns", "700"), ("cpu.file_write_new_ns", "5000")];
    let mut settings = vec![("memory", "16M"), ("swap", "none"), ("cpu.access_ns", "40"), ("fs", "ssd")];
    settings.extend(costs);
    let mut b = testkit::builder("v6.2", &settings);
    let file = b.add_file(4);
    let read = |page| Step::Access(Access::FileRead { file, page });
    let write = |page| Step::Access(Access::FileWrite { file, page });
    b.add_thread("t", Box::new(Steps::new(vec![read(3), read(3), write(2), write(2)])));
    let r = b.build().run(&mut |_| {}).unwrap();
    let t = &r.threads[0];
    assert_eq!((t.user_time_ns, t.system_time_ns), (0, 2000 + 2000 + 5000 + 700));
}

/// `threads` threads storing zipf-chosen pages of their own regions (1.5x of
/// a 4M machine together), with `settings`.
fn thrash(settings: &[(&str, &str)], threads: usize) -> RunReport {
    let mut all = vec![("memory", "4M")];
    all.extend_from_slice(settings);
    let mut b: SimBuilder = testkit::builder("v6.2", &all);
    let span = 1024 * 3 / 2 / threads as u32;
    for t in 0..threads {
        let region = b.add_anon_region(span);
        let mut rng = SimRng::new(11, t as u64);
        let pages = Sampler::zipf(span, 0.8, &mut rng);
        let mut steps: Vec<Step> =
            (0..span).map(|page| Step::Access(Access::Mem { region, page, write: true })).collect();
        for i in 0..6_000u32 {
            steps.push(Step::Access(Access::Mem { region, page: pages.sample(&mut rng), write: i % 3 == 0 }));
            if i % 7 == 0 {
                steps.push(Step::Repeat(i % 50));
            }
        }
        b.add_thread(format!("t{t}"), Box::new(Steps::new(steps)));
    }
    b.build().paranoid().run(&mut |_| {}).unwrap_or_else(|e| panic!("{settings:?}: {e}"))
}

#[test]
fn cpu_time_fits_in_the_cpus_and_each_thread_in_its_elapsed_time() {
    for swap in ["ssd:16M", "zram:16M", "hdd:16M"] {
        for (cpus, threads) in [(None, 3), (Some(1), 3), (Some(2), 5)] {
            let mut settings = vec![("swap", swap)];
            let n = cpus.map(|c: u32| c.to_string());
            if let Some(n) = &n {
                settings.push(("cpus", n));
            }
            let r = thrash(&settings, threads);
            let case = format!("{swap}, cpus {cpus:?}, {threads} threads");
            assert!(r.get("pgsteal_direct").unwrap() + r.get("pgsteal_kswapd").unwrap() > 0, "{case}: no reclaim");
            for t in &r.threads {
                assert!(t.system_time_ns > 0 && t.user_time_ns > 0, "{case}: {t:?}");
                assert!(t.user_time_ns + t.system_time_ns <= t.end_ns, "{case}: {t:?}");
            }
            // Without a CPU count every thread and kswapd have their own.
            let cpus = cpus.map_or(threads as u64 + 1, u64::from);
            let used = r.user_time_ns() + r.system_time_ns() + r.kswapd_cpu_ns;
            assert!(used <= cpus * r.virtual_ns, "{case}: {used} ns of CPU in {} ns on {cpus} CPUs", r.virtual_ns);
            assert!(r.kswapd_cpu_ns <= r.virtual_ns, "{case}");
        }
    }
}

#[test]
fn a_direct_reclaimer_that_must_retry_holds_the_cpu_for_its_reclaim() {
    // One CPU, a thread nearly always ready to run beside one that
    // direct-reclaims onto a slow swap device and retries: the CPU is busy to
    // the end, so CPU time charged for a failed attempt's reclaim while the
    // other thread held the CPU would not fit in the run. The reclaimer holds
    // the CPU for that work, then sleeps (S-SC5).
    let mut b = testkit::builder("v6.2", &[("memory", "4M"), ("swap", "hdd:16M"), ("cpus", "1")]);
    let big = b.add_anon_region(2048);
    let writes =
        (0..3).flat_map(|_| (0..2048).map(move |page| Step::Access(Access::Mem { region: big, page, write: true })));
    b.add_thread("reclaimer", Box::new(Steps::new(writes.collect())));
    let small = b.add_anon_region(4);
    b.add_thread("spinner", Box::new(Spinner { region: small, left: 100_000_000 }));
    let r = b.build().run(&mut |_| {}).unwrap();
    assert!(r.get("allocstall_normal").unwrap() > 0, "direct reclaim ran");
    // The spinner (5 s of reads) outlives the reclaimer: the CPU is busy to the end.
    let spinner_end = r.threads[1].end_ns;
    assert_eq!(spinner_end, r.virtual_ns);
    let used = r.user_time_ns() + r.system_time_ns() + r.kswapd_cpu_ns;
    assert!(used <= r.virtual_ns, "{used} ns of CPU in {} ns (the spinner ran until {spinner_end})", r.virtual_ns);
}

/// A thread reading the 4 pages of `region` in turn, `left` times.
struct Spinner {
    region: mm::RegionId,
    left: u32,
}

impl Program for Spinner {
    fn next(&mut self) -> Step {
        if self.left == 0 {
            return Step::Done;
        }
        self.left -= 1;
        Step::Access(Access::Mem { region: self.region, page: self.left % 4, write: false })
    }
}
