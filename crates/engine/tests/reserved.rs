//! `memory.reserved`: memory the kernel holds off the LRU from the start comes
//! out of free memory after the watermarks are set, and reclaim starts that
//! much earlier. 1M of RAM = 256 pages; min_free_kbytes = int_sqrt(16 * 1024)
//! = 128 KiB -> min 32 pages, low 40, high 48 (the step is max(32 / 4, 0) = 8).

use mm::{VmEvent, Watermark};

fn machine(reserved: &str, pages: u32) -> engine::Sim {
    let mut b = testkit::builder("v6.2", &[("memory", "1M"), ("swap", "ssd:4M"), ("memory.reserved", reserved)]);
    let region = b.add_anon_region(pages);
    let mut sim = b.build();
    testkit::write_pages(&mut sim, region, 0..pages).unwrap();
    sim.check_invariants();
    sim
}

#[test]
fn reserved_pages_come_out_of_free_memory() {
    let sim = machine("256K", 150);
    assert_eq!(sim.mm().nr_reserved(), 64);
    assert_eq!(sim.mm().nr_free(), 256 - 64 - 150);
    assert_eq!(sim.mm().zones[0].wmark(Watermark::Min), 32, "watermarks from all 256 managed pages");
    assert_eq!(testkit::stat(&sim, VmEvent::Pswpout), 0);
}

#[test]
fn reserved_memory_makes_reclaim_start_earlier() {
    // 180 pages: 76 stay free without a reservation, above every watermark.
    let sim = machine("0", 180);
    assert_eq!((sim.mm().nr_free(), testkit::stat(&sim, VmEvent::Pswpout)), (76, 0));
    // With 64 pages reserved only 12 would stay free, below min: direct reclaim swaps.
    let sim = machine("256K", 180);
    assert!(testkit::stat(&sim, VmEvent::AllocstallNormal) > 0);
    assert!(testkit::stat(&sim, VmEvent::Pswpout) > 0);
    assert!(sim.mm().nr_free() >= 12);
}

#[test]
fn a_reservation_above_the_high_watermark_is_refused() {
    let c = testkit::config("v6.2", &[("memory", "1M"), ("memory.reserved", "832K")]);
    let e = engine::SimBuilder::new(c).err().expect("208 reserved pages leave none above high (48)");
    assert!(e.to_string().contains("memory.reserved 832K leaves no memory above the high watermark"), "{e}");
}

/// `memory.pageblocks` places the kernel's memory zone by zone: on a 16M
/// machine with zones DMA 4M (1024 frames) and DMA32 12M (3072), DMA keeps
/// 1 unmovable block with 100 free frames and 400 free movable ones
/// (1024 - 500 = 524 taken), DMA32 1 reclaimable block with 10 free and 2000
/// free movable (3072 - 2010 = 1062 taken): 1586 reserved in all.
#[test]
fn pageblocks_place_the_kernels_memory_zone_by_zone() {
    let blocks = "dma:unmovable=1/100,reclaimable=0/0,movable=400;dma32:unmovable=0/0,reclaimable=1/10,movable=2000";
    let c = testkit::config(
        "v6.12-classic",
        &[("memory", "16M"), ("zones", "dma:4M,dma32:rest"), ("memory.pageblocks", blocks)],
    );
    let read_back = c.resolved().into_iter().find(|(k, _)| *k == "memory.pageblocks").map(|(_, v)| v);
    assert_eq!(read_back.as_deref(), Some(blocks), "the setting reads back as given");
    let sim = engine::SimBuilder::new(c).unwrap().build();
    assert_eq!(sim.mm().nr_reserved(), 1586);
    assert_eq!((sim.mm().frames.nr_free_in(0), sim.mm().frames.nr_free_in(1)), (500, 2010));
    assert_eq!(sim.mm().frames.nr_free_of(1, mm::Migratetype::Reclaimable), 10);
}

#[test]
fn pageblocks_that_do_not_fit_are_refused() {
    let refused = |settings: &[(&str, &str)]| {
        let mut s = vec![("memory", "16M"), ("zones", "dma:4M,dma32:rest")];
        s.extend_from_slice(settings);
        engine::SimBuilder::new(testkit::config("v6.12-classic", &s)).err().expect("refused").to_string()
    };
    let e = refused(&[("memory.pageblocks", "dma:movable=100"), ("memory.reserved", "1M")]);
    assert!(e.contains("give it or memory.reserved, not both"), "{e}");
    let e = refused(&[("memory.pageblocks", "normal:movable=100")]);
    assert!(e.contains("node 0 has no zone normal"), "{e}");
    let e = refused(&[("memory.pageblocks", "dma:unmovable=3/0,movable=0")]);
    assert!(e.contains("zone dma: 3 unmovable and reclaimable blocks, but the zone has 2"), "{e}");
    let e = refused(&[("memory.pageblocks", "dma:movable=10")]);
    assert!(e.contains("zone dma keeps 10 free frames, not above its high watermark"), "{e}");
    let mut c = testkit::config("v6.12-classic", &[]);
    let e = c.set("memory.pageblocks", "dma:unmovable=1/5").unwrap_err().to_string();
    assert!(e.contains("movable blocks' free frames are missing"), "{e}");
}
