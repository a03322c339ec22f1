//! Per-zone LRU lists before v4.8 (`lru_layout=zone`, issue #16): the
//! profiles' layout, what is refused, and `write()` allocations spread over
//! the zones by their dirty limits (`zone_dirty_ok`).

use engine::{Access, RunReport, SimBuilder};

/// v3.9 and v4.6 had per-zone lists, v4.8+ per-node ones; a machine of
/// several zones refuses per-zone lists with cgroup groups or MGLRU.
#[test]
fn layout_by_profile_and_refusals() {
    for (profile, layout) in [("v3.9", "zone"), ("v3.11", "zone"), ("v4.6", "zone"), ("v5.7", "node"), ("v6.2", "node")]
    {
        let expected = if layout == "zone" { engine::config::LruLayout::Zone } else { engine::config::LruLayout::Node };
        assert_eq!(testkit::config(profile, &[]).numa.lru_layout, expected, "{profile}");
    }
    let zones = ("zones", "dma32:32M,normal:rest");
    let refused = |profile: &str, extra: (&str, &str)| {
        let c = testkit::config(profile, &[("memory", "64M"), zones, extra]);
        SimBuilder::new(c).err().map(|e| e.to_string()).unwrap_or_default()
    };
    // (v4.6: v3.9 had no cgroup v2 tree at all, refused by its version check.)
    assert!(refused("v4.6", ("cgroup.a.memory.low", "8M")).contains("lru_layout=zone"));
    assert!(refused("v3.9", ("cgroup.a.memory.low", "8M")).contains("memory.max is v4.5+"));
    assert!(refused("v3.9", ("lru", "mglru")).contains("cannot run lru=mglru"));
    assert_eq!(refused("v3.9", ("lru_layout", "node")), "", "node lists take any policy");
    let flat = testkit::config("v4.6", &[("memory", "64M"), ("cgroup.a.memory.low", "8M")]);
    assert!(SimBuilder::new(flat).is_ok(), "one zone: per-zone lists are per-node lists");
}

/// A writer of `pages` pages of a fresh file through `write()` on a 64M v3.9
/// machine of DMA32 32M and Normal 32M, without swap.
fn writer(layout: &str, pages: u32) -> RunReport {
    let mut b = testkit::builder(
        "v3.9",
        &[("memory", "64M"), ("zones", "dma32:32M,normal:rest"), ("lru_layout", layout), ("swap", "none")],
    );
    let file = b.add_file(pages);
    let writes = (0..pages).map(|page| Access::FileWrite { file, page }).collect();
    b.add_thread("writer", Box::new(testkit::Script::new(writes)));
    b.build().run(&mut |_| {}).unwrap()
}

/// 4096 pages (16M) written: Normal (8192 pages, its low watermark far below)
/// could take them all, and does with node lists. With per-zone lists a
/// `write()` allocation passes over a zone whose dirty and writeback pages
/// exceed 20% of its dirtyable memory (free above its high watermark, plus
/// its file pages: about 8000 pages, a limit near 1600): DMA32 takes a share
/// whenever Normal is at its limit (the flusher, started at the background
/// threshold, cleans pages meanwhile, so Normal takes more than its limit
/// over the run). The per-zone counters stay at zero: nothing was reclaimed.
#[test]
fn write_allocations_spread_over_the_zones_by_their_dirty_limits() {
    let pgalloc = |r: &RunReport, zone: &str| r.zones.iter().find(|z| z.name == zone).unwrap().stat.pgalloc;
    let node = writer("node", 4096);
    assert_eq!(pgalloc(&node, "DMA32"), 0);
    let zone = writer("zone", 4096);
    let (dma32, normal) = (pgalloc(&zone, "DMA32"), pgalloc(&zone, "Normal"));
    assert!(dma32 >= 500 && normal + dma32 == 4096, "Normal took {normal}, DMA32 {dma32}");
    assert!(zone.zones.iter().all(|z| z.stat.pgscan_kswapd + z.stat.pgscan_direct == 0));
}
