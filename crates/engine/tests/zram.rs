//! zram's compressed pool on small machines driven access by access: pool pages
//! follow zsmalloc's packing exactly, come out of free memory, and go back when
//! slots are freed. 1M of RAM (256 pages), every page written once.
//!
//! With `zram.comp_ratio=3` a page compresses to 1365 bytes; with the 8-byte
//! handle the object lands in the 1376-byte class, 11 objects per 4-page zspage,
//! so `n` stored pages hold `ceil(n / 11) * 4` pool pages.

use engine::{Access, RunReport, Sim, SimError};
use mm::VmEvent;

fn machine(settings: &[(&str, &str)], pages: u32) -> (Sim, mm::RegionId, Result<(), SimError>) {
    let base = [("memory", "1M"), ("swap", "zram:16M"), ("zram.comp_ratio", "3")];
    let mut b = testkit::builder("v6.2", &[&base[..], settings].concat());
    let region = b.add_anon_region(pages);
    let mut sim = b.build();
    let r = testkit::write_pages(&mut sim, region, 0..pages);
    (sim, region, r)
}

fn zram(rep: &RunReport, name: &str) -> u64 {
    rep.zram.iter().find(|(n, _)| *n == name).unwrap_or_else(|| panic!("no {name}")).1
}

fn stored(sim: &Sim) -> u64 {
    (sim.mm().swap.total() - sim.mm().swap.nr_free()) as u64
}

#[test]
fn pool_pages_follow_the_stored_pages_exactly() {
    let (sim, _, r) = machine(&[], 400);
    r.unwrap();
    sim.check_invariants();
    let n = stored(&sim);
    assert_eq!(n, sim.mm().stat.get(VmEvent::Pswpout), "every page written once, none read back");
    let pool = n.div_ceil(11) * 4;
    assert_eq!(sim.mm().nr_zspages(), pool);
    let rep = sim.run(&mut |_| {}).unwrap();
    assert_eq!(rep.get("nr_zspages"), Some(pool));
    assert_eq!(
        [
            zram(&rep, "orig_data_size"),
            zram(&rep, "compr_data_size"),
            zram(&rep, "mem_used_total"),
            zram(&rep, "same_pages"),
            zram(&rep, "failed_writes")
        ],
        [n * 4096, n * 1365, pool * 4096, 0, 0]
    );
    // The pool is charged as zsmalloc allocates it: page faults plus pool pages.
    assert_eq!(rep.get("pgalloc_normal"), Some(400 + zram(&rep, "mem_used_max") / 4096));
}

#[test]
fn reclaim_frees_more_because_the_pool_takes_memory() {
    let (zram_sim, _, r) = machine(&[], 400);
    r.unwrap();
    let (pmem_sim, _, r) = machine(&[("swap", "pmem:16M")], 400);
    r.unwrap();
    let (z, p) = (zram_sim.mm(), pmem_sim.mm());
    let steal = |m: &mm::Mm| m.stat.get(VmEvent::PgstealDirect) + m.stat.get(VmEvent::PgstealKswapd);
    // Resident pages plus pool pages fit in the same RAM: fewer pages stay resident.
    let resident = |s: &Sim| 400 - stored(s);
    assert!(resident(&zram_sim) + z.nr_zspages() <= 256 && resident(&zram_sim) < resident(&pmem_sim));
    assert!(steal(z) > steal(p), "zram {} pmem {}", steal(z), steal(p));
    assert_eq!(p.nr_zspages(), 0);
}

#[test]
fn reading_back_frees_the_slots_and_their_objects() {
    let (mut sim, region, r) = machine(&[], 400);
    r.unwrap();
    let before = stored(&sim);
    // Read back the first 20 pages (swapped out first): the swap-in bypass frees each slot.
    for page in 0..20 {
        sim.access_now(Access::Mem { region, page, write: false }).unwrap();
    }
    sim.check_invariants();
    let (ins, outs) = (sim.mm().stat.get(VmEvent::Pswpin), sim.mm().stat.get(VmEvent::Pswpout));
    assert_eq!(ins, 20);
    assert!(before <= outs);
    assert_eq!(stored(&sim), outs - ins);
    assert_eq!(sim.mm().nr_zspages(), stored(&sim).div_ceil(11) * 4);
}

#[test]
fn same_filled_pages_take_no_pool() {
    let (sim, _, r) = machine(&[("zram.same_filled_pct", "100")], 400);
    r.unwrap();
    let n = stored(&sim);
    assert_eq!(sim.mm().nr_zspages(), 0);
    let rep = sim.run(&mut |_| {}).unwrap();
    assert_eq!(
        [zram(&rep, "same_pages"), zram(&rep, "orig_data_size"), zram(&rep, "compr_data_size")],
        [n, n * 4096, 0]
    );
}

#[test]
fn mem_limit_refuses_writes_and_keeps_the_pages() {
    // 32K = 8 pages: two zspages, 22 objects. Writes beyond fail; the pages stay dirty in
    // the swap cache, memory runs out, and the run fails as the kernel would OOM.
    let (sim, _, r) = machine(&[("zram.mem_limit", "32K")], 400);
    assert!(matches!(r, Err(SimError::OutOfMemory { .. })), "{r:?}");
    assert_eq!(sim.mm().nr_zspages(), 8);
    let rep = sim.run(&mut |_| {}).unwrap();
    assert_eq!(zram(&rep, "orig_data_size"), 22 * 4096);
    assert_eq!(zram(&rep, "mem_limit"), 32 * 1024);
    assert_eq!(zram(&rep, "mem_used_max"), 12 * 4096, "the third zspage is allocated, then given back");
    assert!(zram(&rep, "failed_writes") > 0);
}
