//! zswap in front of an SSD on a 4M machine, driven by a zipf store workload
//! over 1.5x memory: the counters tie together as in the kernel, the pool
//! stays within its limit, and with zswap off its knobs change nothing.

use engine::{Access, RunReport};
use simrng::{Sampler, SimRng};
use testkit::Script;

/// Pages of memory (4M).
const MEMORY_PAGES: u32 = 1024;

/// One thread writing 1.5x memory once, then storing to zipf-chosen pages `n` times.
fn run(extra: &[(&str, &str)], n: usize) -> RunReport {
    let mut settings = vec![("memory", "4M"), ("swap", "ssd:16M")];
    settings.extend_from_slice(extra);
    let mut b = testkit::builder("v6.12-classic", &settings);
    let span = MEMORY_PAGES * 3 / 2;
    let region = b.add_anon_region(span);
    let mut rng = SimRng::new(11, 0);
    let pages = Sampler::zipf(span, 0.8, &mut rng);
    let mut accesses: Vec<Access> = (0..span).map(|page| Access::Mem { region, page, write: true }).collect();
    accesses.extend((0..n).map(|_| Access::Mem { region, page: pages.sample(&mut rng), write: true }));
    b.add_thread("t".to_string(), Box::new(Script::new(accesses)));
    b.build().paranoid().run(&mut |_| {}).unwrap_or_else(|e| panic!("{extra:?}: {e}"))
}

fn zswap(r: &RunReport, name: &str) -> u64 {
    r.zswap.iter().find(|(n, _)| *n == name).unwrap_or_else(|| panic!("no {name}")).1
}

fn vm(r: &RunReport, name: &str) -> u64 {
    r.get(name).unwrap_or_else(|| panic!("no {name}"))
}

#[test]
fn zswap_knobs_change_nothing_while_it_is_off() {
    let off = run(&[], 20_000);
    let knobs = [("zswap.max_pool_percent", "5"), ("zswap.shrinker_enabled", "1"), ("zswap.exclusive_loads", "0")];
    let set = run(&knobs, 20_000);
    assert!(off.zswap.is_empty() && vm(&off, "pswpout") > 0);
    assert_eq!((off.vmstat, off.virtual_ns), (set.vmstat, set.virtual_ns));
}

#[test]
fn a_small_pool_stores_writes_back_and_keeps_its_limit() {
    // 5% of 1024 pages: the pool may take 51 pages, and accepts again at 45.
    let r = run(&[("zswap.enabled", "1"), ("zswap.max_pool_percent", "5")], 20_000);
    let (zswpout, zswpwb, pswpout) = (vm(&r, "zswpout"), vm(&r, "zswpwb"), vm(&r, "pswpout"));
    assert!(zswpout > 0 && zswpwb > 0 && vm(&r, "zswpin") > 0, "{:?}", r.zswap);
    // Every device write is a refused store or a writeback; a store is refused
    // at the limit (pool_limit_hit), for want of a page, or while the pool
    // shrinks back to the accept threshold (counted nowhere).
    assert!(pswpout >= zswap(&r, "pool_limit_hit") + zswap(&r, "reject_alloc_fail") + zswpwb);
    assert_eq!(zswpwb, zswap(&r, "written_back_pages"));
    // A store is refused from 51 pages on; one store adds at most a 4-page zspage.
    let pool = vm(&r, "nr_zspages");
    assert!(pool > 0 && pool <= 51 + 3, "{pool}");
    assert_eq!(zswap(&r, "pool_total_size"), pool * 4096);
    // Device reads only for what zswap does not hold: fewer than with the SSD
    // alone, though the pool's pages cost faults (a 5% pool is no speed-up here).
    let ssd = run(&[], 20_000);
    assert!(vm(&r, "pswpin") < vm(&ssd, "pswpin") && vm(&r, "pgmajfault") > vm(&ssd, "pgmajfault"));
    assert_eq!(vm(&r, "pswpin") + vm(&r, "zswpin"), vm(&r, "pgmajfault") + vm(&r, "swap_ra"));
}

#[test]
fn the_shrinker_writes_back_under_pressure() {
    let base = [("zswap.enabled", "1"), ("zswap.max_pool_percent", "40")];
    let without = run(&base, 20_000);
    let with = run(&[&base[..], &[("zswap.shrinker_enabled", "1")]].concat(), 20_000);
    // A large pool rarely fills: the shrinker's writebacks come on top.
    assert!(vm(&with, "zswpwb") > vm(&without, "zswpwb"), "{} vs {}", vm(&with, "zswpwb"), vm(&without, "zswpwb"));
    assert!(vm(&with, "nr_zspages") < vm(&without, "nr_zspages"));
}

#[test]
fn the_pool_is_charged_to_the_memory_cgroup() {
    // Unlike zram's pool, zswap's memory is charged to the group of the pages it holds.
    let r = run(&[("zswap.enabled", "1"), ("zswap.max_pool_percent", "10"), ("memcg.limit", "3M")], 20_000);
    let usage = r.memcg.iter().find(|(n, _)| *n == "usage_in_bytes").expect("a group").1;
    assert!(vm(&r, "nr_zspages") > 0 && vm(&r, "zswpout") > 0);
    // Pages on the per-CPU lists are free but outside nr_free_pages. The swap
    // cache's tree nodes (v6.3..v6.17) are slab charged to no group; this run has
    // no files, so all of its slab is theirs.
    let on_pcp: u64 = r.zones.iter().flat_map(|z| &z.pagesets).map(|p| p.count as u64).sum();
    let swap_nodes = vm(&r, "nr_slab_reclaimable");
    assert!(swap_nodes > 0, "the swap cache holds shadows");
    assert_eq!(usage / 4096, MEMORY_PAGES as u64 - vm(&r, "nr_free_pages") - on_pcp - swap_nodes);
}
