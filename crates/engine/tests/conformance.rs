//! Conformance: every policy in the registry (`reclaim::policy::registry`)
//! goes through the same checks, on the same machine and the same accesses.
//!
//! - accounting: after a mixed anon/file run under memory pressure (kswapd,
//!   direct reclaim, swap and writeback, paranoid checks all along), free +
//!   on LRU lists + zram pool = every page, both types were scanned and
//!   reclaimed, and nothing was reclaimed without being scanned;
//! - lists by type: the policy's anon and file list sizes equal the pages
//!   flagged `PG_lru` of each type, and every mapped page is on a list;
//! - determinism: the same seed gives the same report, another seed another;
//! - OOM: anonymous memory beyond RAM without swap ends in the OOM killer's
//!   kill of the process (its pages reaped from the policy's lists, paranoid
//!   checks after), or with `vm.panic_on_oom=1` in the engine's `OutOfMemory`
//!   result, not a panic or a hang;
//! - refaults: every evicted file page leaves a shadow, and a read of a page
//!   whose slot holds a shadow counts exactly one `workingset_refault_file`;
//! - controls: each declared control can be read; any other name is
//!   `Unsupported` (the trait's default).
//!
//! A new policy gets all of this by its registry line alone.

use engine::{Access, Config, RunReport, Sim, SimBuilder, SimError};
use mm::{CacheEntry, FileId, Mm, PageFlags, RegionId, VmEvent};
use reclaim::pageout::PageoutEnv;
use reclaim::policy::registry::{self, POLICIES};
use reclaim::policy::{ControlError, ControlOp};
use reclaim::{ReclaimConfig, Reclaimer, ScanControl};
use simrng::{Sampler, SimRng};
use testkit::Script;

/// Pages of memory (4M).
const MEMORY_PAGES: u64 = 1024;
/// Pages of the anonymous region and of the file: each 1.5 times memory.
const SPAN: u32 = 1536;

/// A 4M machine under the v6.2 profile with policy `lru` and `swap`.
fn machine(lru: &str, swap: &str) -> SimBuilder {
    testkit::builder("v6.2", &[("lru", lru), ("memory", "4M"), ("swap", swap)])
}

/// Adds an anon region and a file (also mapped) of [`SPAN`] pages each and
/// returns `n` accesses drawn with `seed`: a third each stores or loads to the
/// anon region (zipf), `read()`s of the file and loads through its mapping.
fn mixed(b: &mut SimBuilder, seed: u64, n: usize) -> Vec<Access> {
    let anon = b.add_anon_region(SPAN);
    let file = b.add_file(SPAN);
    let mapped = b.map_file(file, 0, SPAN, false);
    let mut rng = SimRng::new(seed, 0);
    let pages = Sampler::zipf(SPAN, 0.6, &mut rng);
    (0..n)
        .map(|_| {
            let page = pages.sample(&mut rng);
            match rng.below(3) {
                0 => Access::Mem { region: anon, page, write: rng.below(2) == 0 },
                1 => Access::FileRead { file, page },
                _ => Access::Mem { region: mapped, page, write: false },
            }
        })
        .collect()
}

/// The mixed run of `lru` with `seed`, paranoid (invariants checked as it goes).
fn mixed_run(lru: &str, seed: u64) -> RunReport {
    let mut b = machine(lru, "ssd:16M");
    let accesses = mixed(&mut b, seed, 20_000);
    b.add_thread("mixed", Box::new(Script::new(accesses)));
    b.build().paranoid().run(&mut |_| {}).unwrap_or_else(|e| panic!("lru={lru}: {e}"))
}

fn get(r: &RunReport, name: &str) -> u64 {
    r.get(name).unwrap_or_else(|| panic!("no counter {name}"))
}

#[test]
fn every_policy_conserves_pages_under_mixed_pressure() {
    for p in POLICIES {
        let r = mixed_run(p.name, 1);
        let lists: u64 = ["nr_inactive_anon", "nr_active_anon", "nr_inactive_file", "nr_active_file", "nr_unevictable"]
            .iter()
            .map(|n| get(&r, n))
            .sum();
        let (free, pool, slab) = (get(&r, "nr_free_pages"), get(&r, "nr_zspages"), get(&r, "nr_slab_reclaimable"));
        // Free pages on per-CPU lists are not in nr_free_pages (/proc/zoneinfo's pagesets count them).
        let pcp: u64 = r.zones.iter().flat_map(|z| &z.pagesets).map(|p| p.count as u64).sum();
        assert_eq!(
            lists + free + pcp + pool + slab,
            MEMORY_PAGES,
            "{}: lists {lists} + free {free} + per-CPU lists {pcp} + pool {pool} + slab {slab}",
            p.name
        );
        assert_eq!(r.accesses, 20_000, "{}", p.name);
        for ty in ["anon", "file"] {
            let (scan, steal) = (get(&r, &format!("pgscan_{ty}")), get(&r, &format!("pgsteal_{ty}")));
            assert!(steal > 0, "{}: no {ty} page reclaimed under pressure", p.name);
            assert!(steal <= scan, "{}: pgsteal_{ty} {steal} > pgscan_{ty} {scan}", p.name);
        }
        assert!(get(&r, "pswpout") > 0, "{}: anon beyond memory was never swapped", p.name);
    }
}

/// Drives the mixed accesses access by access and keeps the machine.
fn mixed_now(lru: &str, seed: u64, n: usize) -> (Sim, Vec<Access>) {
    let mut b = machine(lru, "ssd:16M");
    let accesses = mixed(&mut b, seed, n);
    let mut sim = b.build();
    for &a in &accesses {
        sim.access_now(a).unwrap_or_else(|e| panic!("lru={lru}: {e}"));
    }
    (sim, accesses)
}

#[test]
fn every_policy_lists_exactly_the_pages_flagged_lru_by_type() {
    for p in POLICIES {
        let (sim, accesses) = mixed_now(p.name, 2, 8_000);
        sim.check_invariants();
        let frames = sim.mm().frames.as_slice();
        let on_lru =
            |anon: bool| frames.iter().filter(|f| f.flags.has(PageFlags::LRU) && f.is_anon() == anon).count() as u64;
        let s = sim.lru_sizes();
        assert!(
            stat_gt0(&sim, VmEvent::PgstealAnon) && stat_gt0(&sim, VmEvent::PgstealFile),
            "{}: no pressure",
            p.name
        );
        assert_eq!(s.inactive_anon + s.active_anon, on_lru(true), "{}: anon lists", p.name);
        assert_eq!(s.inactive_file + s.active_file, on_lru(false), "{}: file lists", p.name);
        assert_eq!(s.unevictable, 0, "{}", p.name);
        // Every page mapped by a PTE is on a list.
        for a in accesses {
            if let Access::Mem { region, page, .. } = a {
                if let Some(pfn) = testkit::pfn(&sim, region, page) {
                    assert!(frames[pfn as usize].flags.has(PageFlags::LRU), "{}: mapped pfn {pfn} off the LRU", p.name);
                }
            }
        }
    }
}

fn stat_gt0(sim: &Sim, ev: VmEvent) -> bool {
    testkit::stat(sim, ev) > 0
}

#[test]
fn every_policy_is_deterministic() {
    for p in POLICIES {
        let a = mixed_run(p.name, 3);
        assert_eq!(a, mixed_run(p.name, 3), "{}: same seed, different report", p.name);
        assert_ne!(a.vmstat, mixed_run(p.name, 4).vmstat, "{}: the seed changes nothing", p.name);
    }
}

#[test]
fn every_policy_runs_out_of_memory_cleanly_without_swap() {
    for p in POLICIES {
        let hog = |panic_on_oom: &str| {
            let c = testkit::config("v6.2", &[("lru", p.name), ("memory", "4M"), ("vm.panic_on_oom", panic_on_oom)]);
            let mut b = SimBuilder::new(Config { swap_bytes: 0, ..c }).unwrap();
            let region: RegionId = b.add_anon_region(2 * MEMORY_PAGES as u32);
            let writes = (0..2 * MEMORY_PAGES as u32).map(|page| Access::Mem { region, page, write: true }).collect();
            b.add_thread("hog", Box::new(Script::new(writes)));
            b.build().paranoid().run(&mut |_| {})
        };
        let r = hog("0").unwrap_or_else(|e| panic!("{}: {e}", p.name));
        assert!(r.threads[0].oom_killed_ns.is_some(), "{}", p.name);
        assert_eq!(r.get("oom_kill"), Some(1), "{}", p.name);
        // Every page is back: free, or on a per-CPU list (not in nr_free_pages, as in the kernel).
        let listed: u64 = r.zones.iter().flat_map(|z| &z.pagesets).map(|p| p.count as u64).sum();
        assert_eq!(r.get("nr_free_pages").map(|n| n + listed), Some(MEMORY_PAGES), "{}: every page is back", p.name);
        match hog("1") {
            Err(SimError::OutOfMemory { thread, .. }) => assert_eq!(thread, "hog", "{}", p.name),
            other => panic!("{}: expected OutOfMemory, got {other:?}", p.name),
        }
    }
}

/// The state of page `page` of `file`: resident, shadow or empty.
fn slot(sim: &Sim, file: FileId, page: u32) -> CacheEntry {
    sim.mm().files[file.0 as usize].cache[page as usize]
}

#[test]
fn every_policy_leaves_shadows_and_counts_refaults() {
    for p in POLICIES {
        let mut b = machine(p.name, "none");
        let file = b.add_file(2 * MEMORY_PAGES as u32);
        let mut sim = b.build();
        let pages = 0..2 * MEMORY_PAGES as u32;
        for page in pages.clone() {
            sim.access_now(Access::FileRead { file, page }).unwrap();
        }
        // Each page read once is resident or, evicted, left a shadow.
        let shadows = pages.clone().filter(|&pg| slot(&sim, file, pg).as_shadow().is_some()).count() as u64;
        assert!(pages
            .clone()
            .all(|pg| slot(&sim, file, pg).pfn().is_some() != slot(&sim, file, pg).as_shadow().is_some()));
        assert_eq!(shadows, testkit::stat(&sim, VmEvent::PgstealFile), "{}: one shadow per evicted page", p.name);
        assert!(shadows > 0, "{}", p.name);
        // Reading everything again: each read that finds a shadow is one refault.
        let mut expected = 0;
        for page in pages.clone() {
            expected += slot(&sim, file, page).as_shadow().is_some() as u64;
            sim.access_now(Access::FileRead { file, page }).unwrap();
        }
        assert!(expected > 0, "{}", p.name);
        assert_eq!(testkit::stat(&sim, VmEvent::WorkingsetRefaultFile), expected, "{}", p.name);
        assert_eq!(testkit::stat(&sim, VmEvent::WorkingsetRefaultAnon), 0, "{}", p.name);
        sim.check_invariants();
    }
}

#[test]
fn every_policy_answers_its_controls_and_refuses_others() {
    let env = PageoutEnv {
        sync_swap: true,
        now_ns: 0,
        fs_congested: false,
        dirty: reclaim::DirtyConfig::TODAY,
        shrinker: reclaim::ShrinkerConfig::TODAY,
    };
    for p in POLICIES {
        let mut policy = (p.build)(&ReclaimConfig::default());
        let mut mm = Mm::new(64, 0);
        let mut sc = ScanControl::new(Reclaimer::Direct, 0);
        let mut read = |name: &str| policy.control(&mut mm, name, ControlOp::Read, &mut sc, env);
        for c in registry::controls() {
            let declared = p.controls.iter().any(|d| d.name == c.name);
            match read(c.name) {
                Ok(_) => assert!(declared, "{} answers undeclared control {}", p.name, c.name),
                Err(e) => {
                    assert!(!declared, "{} cannot read its control {}: {e}", p.name, c.name);
                    assert_eq!(e, ControlError::Unsupported, "{}", p.name);
                }
            }
        }
        assert_eq!(read("no-such-control"), Err(ControlError::Unsupported), "{}", p.name);
        assert_eq!(ControlError::Unsupported.to_string(), "ENOENT");
    }
}
