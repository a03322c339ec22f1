//! The OOM killer: a machine-wide OOM kills the process with the highest
//! badness and the others go on; `oom_score_adj=-1000` protects; the v1
//! memory group's OOM kills within the group; `vm.panic_on_oom` fails the
//! run instead; MGLRU's `min_ttl_ms` kills from kswapd; the reaper frees the
//! victim's anonymous pages and swap slots and leaves its page cache; a
//! process's memory is freed when its last thread ends.

use engine::{Access, RunReport, SimBuilder, SimError, Step};
use mm::RegionId;
use testkit::Steps;

/// 16M of RAM: 4096 pages.
const RAM: u32 = 4096;

fn writes(region: RegionId, pages: std::ops::Range<u32>) -> impl Iterator<Item = Step> {
    pages.map(move |page| Step::Access(Access::Mem { region, page, write: true }))
}

/// A process of one thread `name` with `oom_score_adj` that writes `pages`
/// pages of its own region after thinking `delay` ns, `passes` times, then
/// thinks `after` ns.
fn process(b: &mut SimBuilder, name: &str, adj: i16, pages: u32, delay: u64, passes: u32, after: u64) {
    b.begin_process(adj).unwrap();
    let r = b.add_anon_region(pages);
    let mut steps = vec![Step::Think(delay)];
    for _ in 0..passes {
        steps.extend(writes(r, 0..pages));
    }
    steps.push(Step::Think(after));
    b.add_thread(name, Box::new(Steps::new(steps)));
}

fn machine(settings: &[(&str, &str)]) -> SimBuilder {
    let mut all = vec![("memory", "16M"), ("swap", "none")];
    all.extend_from_slice(settings);
    testkit::builder("v6.2", &all)
}

fn thread<'a>(r: &'a RunReport, name: &str) -> &'a engine::ThreadReport {
    r.threads.iter().find(|t| t.name == name).unwrap()
}

/// A hog writing twice the RAM and a small process writing 256 pages ten times.
fn hog_and_small(settings: &[(&str, &str)], hog: bool) -> Result<RunReport, SimError> {
    let mut b = machine(settings);
    if hog {
        process(&mut b, "hog", 0, 2 * RAM, 0, 1, 0);
    }
    process(&mut b, "small", 0, 256, 1_000_000, 10, 0);
    b.build().run(&mut |_| {})
}

#[test]
fn the_hog_is_killed_and_the_other_process_finishes_as_alone() {
    let alone = hog_and_small(&[], false).unwrap();
    let r = hog_and_small(&[], true).unwrap();
    let (hog, small) = (thread(&r, "hog"), thread(&r, "small"));
    assert_eq!(r.get("oom_kill"), Some(1));
    let killed = hog.oom_killed_ns.expect("the hog was killed");
    assert!(hog.ops < 2 * RAM as u64 && hog.end_ns >= killed, "{hog:?}");
    assert_eq!(small.oom_killed_ns, None);
    // Without swap nothing of the small process is ever reclaimed: it does
    // exactly what it does alone, and the hog's memory is all given back.
    assert_eq!(small.ops, alone.threads[0].ops);
    assert_eq!(small.ops, 2560);
    for gauge in ["nr_inactive_anon", "nr_active_anon"] {
        assert_eq!(r.get(gauge), alone.get(gauge), "{gauge}");
    }
    // Free pages, those on per-CPU lists included (nr_free_pages leaves them out, as the kernel's).
    let free = |r: &RunReport| {
        r.get("nr_free_pages").unwrap() + r.zones[0].pagesets.iter().map(|p| p.count as u64).sum::<u64>()
    };
    assert_eq!(free(&r), free(&alone));
    // Every write of the hog that completed was a fault of its own.
    assert_eq!(r.get("pgfault").unwrap(), alone.get("pgfault").unwrap() + hog.ops);
}

#[test]
fn an_allocation_that_meets_the_oom_retries_after_the_kill() {
    // The holder fills 3/4 of RAM and sleeps 100 s; the grower starts later
    // and needs half of RAM: its allocation meets the OOM (after about 4 s of
    // throttled retries), the holder (more pages) dies, and the grower's write
    // is retried and completes.
    let mut b = machine(&[]);
    process(&mut b, "holder", 0, 3 * RAM / 4, 0, 1, 100_000_000_000);
    process(&mut b, "grower", 0, RAM / 2, 10_000_000, 1, 0);
    let r = b.build().run(&mut |_| {}).unwrap();
    let (holder, grower) = (thread(&r, "holder"), thread(&r, "grower"));
    assert_eq!(r.get("oom_kill"), Some(1));
    assert!(holder.oom_killed_ns.is_some() && grower.oom_killed_ns.is_none());
    assert_eq!((holder.ops, grower.ops), (3 * RAM as u64 / 4, RAM as u64 / 2));
    // The sleeping holder stops at its next event, when its sleep would end.
    assert_eq!(holder.end_ns, 3 * RAM as u64 / 4 * 1000 + 100_000_000_000);
    assert!(holder.oom_killed_ns.unwrap() < grower.end_ns && grower.end_ns < 10_000_000_000);
}

#[test]
fn oom_score_adj_min_protects_and_no_candidate_fails_the_run() {
    let run = |holder_adj: i16, grower_adj: i16| {
        let mut b = machine(&[]);
        process(&mut b, "holder", holder_adj, 3 * RAM / 4, 0, 1, 100_000_000_000);
        process(&mut b, "grower", grower_adj, RAM / 2, 10_000_000, 1, 0);
        b.build().run(&mut |_| {})
    };
    // The holder is protected: the grower, smaller, is the only candidate.
    let r = run(-1000, 0).unwrap();
    assert_eq!(r.get("oom_kill"), Some(1));
    assert!(thread(&r, "holder").oom_killed_ns.is_none());
    assert!(thread(&r, "grower").oom_killed_ns.is_some());
    assert_eq!(thread(&r, "holder").ops, 3 * RAM as u64 / 4);
    // +1000 makes the smaller grower the victim of the same OOM.
    let r = run(0, 1000).unwrap();
    assert!(thread(&r, "grower").oom_killed_ns.is_some() && thread(&r, "holder").oom_killed_ns.is_none());
    match run(-1000, -1000) {
        Err(e @ SimError::OutOfMemory { .. }) => assert!(e.to_string().contains("oom_score_adj=-1000"), "{e}"),
        other => panic!("expected OutOfMemory, got {other:?}"),
    }
}

#[test]
fn panic_on_oom_fails_the_run_as_before() {
    match hog_and_small(&[("vm.panic_on_oom", "1")], true) {
        Err(e @ SimError::OutOfMemory { .. }) => assert!(e.to_string().contains("vm.panic_on_oom"), "{e}"),
        other => panic!("expected OutOfMemory, got {other:?}"),
    }
}

/// The hog and the small process in a 8M v1 group on a 64M machine.
fn in_group(panic_on_oom: &str) -> Result<RunReport, SimError> {
    let settings = [("memory", "64M"), ("memcg.limit", "8M"), ("vm.panic_on_oom", panic_on_oom)];
    let mut b = machine(&settings);
    process(&mut b, "hog", 0, 2 * RAM, 0, 1, 0);
    process(&mut b, "small", 0, 256, 1_000_000, 10, 0);
    b.build().run(&mut |_| {})
}

#[test]
fn the_group_oom_kills_within_the_group() {
    // panic_on_oom=1 panics on machine-wide OOMs only: the group's OOM still kills.
    for p in ["0", "1"] {
        let r = in_group(p).unwrap();
        assert!(thread(&r, "hog").oom_killed_ns.is_some(), "{p}");
        assert_eq!(thread(&r, "small").ops, 2560, "{p}");
        assert_eq!(r.get("oom_kill"), Some(1), "{p}");
        let events = |n: &str| r.memcg_events.iter().find(|(k, _)| *k == n).unwrap().1;
        assert!(events("oom") >= 1 && events("max") >= events("oom"), "{:?}", r.memcg_events);
        assert_eq!(events("oom_kill"), 1);
        // The hog's pages went back: the group holds the small process's pages.
        let rss = r.memcg.iter().find(|(k, _)| *k == "rss").unwrap().1;
        assert_eq!(rss, 256 * 4096);
    }
    match in_group("2") {
        Err(e @ SimError::MemcgOutOfMemory { .. }) => assert!(e.to_string().contains("vm.panic_on_oom"), "{e}"),
        other => panic!("expected MemcgOutOfMemory, got {other:?}"),
    }
}

#[test]
fn the_reaper_frees_swap_slots_and_anon_pages() {
    // 8M of swap on the SSD: the hog fills RAM and swap, then dies; every
    // slot comes back. The small process starts after 100 s, on a machine
    // with the hog gone: none of its pages is swapped.
    let mut b = machine(&[("swap", "ssd:8M")]);
    process(&mut b, "hog", 0, 2 * RAM, 0, 1, 0);
    process(&mut b, "small", 0, 256, 100_000_000_000, 10, 0);
    let r = b.build().run(&mut |_| {}).unwrap();
    assert_eq!(r.get("oom_kill"), Some(1));
    assert!(r.get("pswpout").unwrap() > 2000);
    assert_eq!(r.get("nr_swap_free"), Some(2047));
    // Free pages are the buddy's (NR_FREE_PAGES) plus those on the per-CPU lists.
    let on_pcp: u64 = r.zones.iter().flat_map(|z| &z.pagesets).map(|p| p.count as u64).sum();
    assert_eq!(r.get("nr_free_pages").unwrap() + on_pcp + 256, alone_free(&r));
    assert_eq!(thread(&r, "small").ops, 2560);
}

/// Exiting processes (`exit_when_done`, as validate's drivers): one exits
/// when its last thread ends, and its memory is freed then. "first" writes
/// 3072 pages (12M of the 16M) and ends; "second" starts 1 s later and writes
/// 3072 pages of its own, which fit only because the first's are gone:
/// nothing is reclaimed or swapped. A thread that ends while another of its
/// process runs frees nothing: "late" rewrites the 512 pages "early" wrote,
/// all resident (512 faults in all for them). Without `exit_when_done` the
/// first's pages stay (an idle process) and the second's push them to swap.
#[test]
fn a_process_frees_its_memory_when_its_last_thread_ends() {
    let run = |exits: bool| {
        let mut b = machine(&[("swap", "ssd:8M")]);
        for (name, delay) in [("first", 0), ("second", 1_000_000_000)] {
            process(&mut b, name, 0, 3 * RAM / 4, delay, 1, 0);
            if exits {
                b.exit_when_done();
            }
        }
        b.begin_process(0).unwrap();
        b.exit_when_done();
        let shared = b.add_anon_region(512);
        b.add_thread("early", Box::new(Steps::new(writes(shared, 0..512).collect())));
        let mut late = vec![Step::Think(2_000_000_000)];
        late.extend(writes(shared, 0..512));
        b.add_thread("late", Box::new(Steps::new(late)));
        b.build().run(&mut |_| {}).unwrap()
    };
    assert!(run(false).get("pswpout").unwrap() > 1000, "an idle process's pages are swapped out");
    let r = run(true);
    for counter in ["pswpout", "pgscan_kswapd", "pgscan_direct", "oom_kill"] {
        assert_eq!(r.get(counter), Some(0), "{counter}");
    }
    assert_eq!(r.get("pgfault"), Some(2 * 3072 + 512), "no refault of the shared region");
    assert_eq!(thread(&r, "late").ops, 512);
    // Everything exited: every page is free again, every swap slot too (2047: the first holds the header).
    let on_pcp: u64 = r.zones.iter().flat_map(|z| &z.pagesets).map(|p| p.count as u64).sum();
    assert_eq!(r.get("nr_free_pages").unwrap() + on_pcp, alone_free(&r));
    assert_eq!(r.get("nr_swap_free"), Some(2047));
}

/// Free pages of the machine of `r` with nothing allocated but its kernel reserve.
fn alone_free(r: &RunReport) -> u64 {
    r.zones.iter().map(|z| z.managed).sum::<u64>()
}

#[test]
fn mglru_min_ttl_kills_from_kswapd_and_the_page_cache_stays() {
    // Generations younger than min_ttl_ms: kswapd's first aging asks for the
    // OOM killer, long before memory runs out. The victim's mapped file pages
    // leave its page tables and stay cached.
    let mut b = machine(&[("lru", "mglru"), ("lru_gen.min_ttl_ms", "60000"), ("swap", "ssd:64M")]);
    b.begin_process(0).unwrap();
    let file = b.add_file(64);
    let map = b.map_file(file, 0, 64, false);
    let anon = b.add_anon_region(2 * RAM);
    let reads = (0..64).map(|page| Step::Access(Access::Mem { region: map, page, write: false }));
    let steps: Vec<Step> = reads.chain(writes(anon, 0..2 * RAM)).collect();
    b.add_thread("hog", Box::new(Steps::new(steps)));
    process(&mut b, "small", 0, 256, 1_000_000, 10, 0);
    let r = b.build().run(&mut |_| {}).unwrap();
    assert_eq!(r.get("oom_kill"), Some(1));
    assert!(thread(&r, "hog").oom_killed_ns.is_some());
    assert_eq!(thread(&r, "small").ops, 2560);
    let lru_gen = &r.control_reads.iter().find(|(n, _)| *n == "lru_gen").unwrap().1;
    assert!(lru_gen.contains("min_ttl OOM invocations 1"), "{lru_gen}");
    let file_pages = r.get("nr_inactive_file").unwrap() + r.get("nr_active_file").unwrap();
    assert_eq!(file_pages, 64);
    assert_eq!(r.get("pgfault").unwrap(), thread(&r, "hog").ops + 256);
    assert_eq!(r.get("nr_swap_free"), Some(16383), "every slot is free again");
}

#[test]
fn victims_leave_their_cpu_with_cpus_set() {
    // One CPU shared: the killed hog gives its CPU back, the small process finishes.
    let r = hog_and_small(&[("cpus", "1")], true).unwrap();
    assert_eq!(r.get("oom_kill"), Some(1));
    assert!(thread(&r, "hog").oom_killed_ns.is_some());
    assert_eq!(thread(&r, "small").ops, 2560);
    assert!(thread(&r, "small").run_delay_ns > 0, "the two shared the CPU");
}
