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
