//! Time passes inside one direct reclaim call (S-DR3): a swap write started
//! at one priority completes while the call walks on, its page rotates to the
//! inactive tail (`folio_rotate_reclaimable`) and a later pass frees it, so the
//! call stops once it has freed `SWAP_CLUSTER_MAX` pages instead of writing
//! the whole inactive list.

use engine::{Access, Sim};
use mm::{RegionId, VmEvent, Watermark};

/// A 1000-page machine with NVMe swap, filled with dirty anonymous pages
/// whose accessed bits are cleared just before the first direct reclaim.
/// Returns the machine, the region and the page whose fault entered reclaim.
fn machine(settings: &[(&str, &str)]) -> (Sim, RegionId, u32) {
    let base = [("memory", "4000K"), ("swap", "nvme:40M"), ("vm.min_free_kbytes", "128")];
    let mut b = testkit::builder("v6.2", &[&base[..], settings].concat());
    let region = b.add_anon_region(2000);
    let mut sim = b.build();
    let min: u64 = sim.mm().zones.iter().map(|z| z.wmark(Watermark::Min)).sum();
    let mut page = 0;
    // Fill memory down to the min watermark: no reclaim yet (kswapd's
    // wakeup is queued but the machine is driven access by access).
    while sim.mm().nr_free() > min {
        sim.access_now(Access::Mem { region, page, write: true }).unwrap();
        page += 1;
    }
    assert_eq!(sim.mm().stat.get(VmEvent::AllocstallNormal), 0);
    // Age every page: reclaim finds them unreferenced.
    testkit::age(&mut sim, region);
    (sim, region, page)
}

/// Counters after the access at `page`: (allocstall, pgscan_direct, pgsteal_direct, pswpout).
fn reclaim_one_fault(sim: &mut Sim, region: RegionId, page: u32) -> [u64; 4] {
    sim.access_now(Access::Mem { region, page, write: true }).unwrap();
    sim.check_invariants();
    [VmEvent::AllocstallNormal, VmEvent::PgscanDirect, VmEvent::PgstealDirect, VmEvent::Pswpout]
        .map(|ev| sim.mm().stat.get(ev))
}

/// 968 resident pages, all on the inactive anon list, none referenced. Each
/// priority pass scans `list >> priority` pages in batches of 32 and writes
/// each page (2.4 us of CPU per page: scan, two rmap PTE checks, pageout);
/// time passes after each batch. The one page of priority 9 is submitted
/// when its batch ends at 2.4 us and completes 20 us (NVMe latency) +
/// 1.46 us (4 KiB at 2.8 GB/s) later, at 23.9 us, before priority 7's batch
/// ends (26.4 us). Each batch first meets the pages that completed before it
/// (rotated to the tail) and frees them: priority 6 frees 1, priority 5 frees
/// 10, priority 4 (59 pages of the 957 left, batches of 32 and 27) frees 14
/// and then 20. The call stops after priority 4 with 45 freed, 1 + 3 + 7 +
/// 15 + 30 + 59 = 115 scanned and 115 - 45 = 70 written.
#[test]
fn a_call_frees_the_pages_whose_writes_completed_during_it() {
    let (mut sim, region, page) = machine(&[]);
    assert_eq!(page, 968);
    assert_eq!(reclaim_one_fault(&mut sim, region, page), [1, 115, 45, 70]);
}

/// The same machine with a 100 ms swap latency: no write completes during
/// the call, which walks every priority down to 0 and writes the whole list
/// (968 pages, 1 + 3 + 7 + 15 + 30 + 60 + 121 + 242 + 484 + 968 = 1931
/// scanned) without freeing a page. The fault is throttled, the writes
/// complete, and a second call frees the rotated clean pages it scans.
#[test]
fn without_completions_a_call_writes_the_whole_list() {
    let (mut sim, region, page) = machine(&[("swap.latency_us", "100000")]);
    let [stalls, scanned, steal, written] = reclaim_one_fault(&mut sim, region, page);
    assert_eq!([stalls, written], [2, page as u64]);
    assert!(steal >= reclaim::SWAP_CLUSTER_MAX, "{steal}");
    assert_eq!(scanned, 1931 + steal, "the second call scans only rotated clean pages");
}
