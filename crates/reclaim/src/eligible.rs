//! Which pages a reclaim pass may take: `isolate_lru_folios()`'s zone skip
//! (v4.8+ node LRUs: pages of zones above `sc.reclaim_idx` are skipped,
//! counted in `pgskip_*` and moved to the head of their list) and, on a
//! machine of several nodes, the node being reclaimed.
//!
//! Simplification S-MM1 (narrowed): the machine has one set of LRU lists, not
//! one per node; reclaim of one node walks past the other nodes' pages,
//! leaving them where they are, uncounted (the kernel's per-node lists never
//! hold them), but its walk costs time here.

use crate::control::ScanControl;
use mm::{LruList, Mm, PageFlags, Pfn, VmEvent, ZoneId, MAX_NR_ZONES};

/// True if every page of the machine may be taken by `sc` (the fast path).
#[inline]
pub fn all_eligible(mm: &Mm, sc: &ScanControl) -> bool {
    sc.nid.is_none() && mm.zones.iter().all(|z| z.id <= sc.reclaim_idx)
}

/// The part of a machine-wide list of `size` pages that stands for the
/// reclaimed node's own list: `size` times the node's share of managed pages
/// (all of it without a node). Scan targets (`size >> priority`) use it, so
/// each node's kswapd scans as much as it would on its own lists. S-MM1: a
/// zone-limited reclaim's `size` counts the eligible zone types' pages of
/// every node.
pub fn node_share(mm: &Mm, sc: &ScanControl, size: u64) -> u64 {
    let Some(nid) = sc.nid else { return size };
    let node: u64 = mm.zones.iter().filter(|z| z.node == nid).map(|z| z.managed).sum();
    let total: u64 = mm.zones.iter().map(|z| z.managed).sum();
    size * node / total.max(1)
}

/// `isolate_lru_folios()` with the zone and node filter: takes up to
/// `nr_to_scan` eligible pages from the tail of `list` into `out` (clearing
/// `PG_lru`). Returns the pages scanned, skipped ones included (the kernel's
/// `total_scan`, which feeds `pgscan_*`).
pub fn isolate(mm: &mut Mm, list: &mut LruList, nr_to_scan: u64, sc: &mut ScanControl, out: &mut Vec<Pfn>) -> u64 {
    // (end pfn, zone type, on the node reclaimed) of each zone, in pfn order.
    let zones: Vec<(Pfn, ZoneId, bool)> =
        mm.zones.iter().map(|z| (z.start_pfn + z.managed as Pfn, z.id, sc.nid.is_none_or(|n| n == z.node))).collect();
    let frames = mm.frames.slice_mut();
    let (mut scan, mut cursor) = (0, list.tail());
    let mut skipped = Vec::new();
    let mut nr_skipped = [0u64; MAX_NR_ZONES];
    while scan < nr_to_scan {
        let Some(pfn) = cursor else { break };
        let prev = frames[pfn as usize].prev;
        cursor = (prev != mm::NO_PFN).then_some(prev);
        let &(_, id, on_node) = zones.iter().find(|z| pfn < z.0).expect("pfn inside a zone");
        if !on_node {
            continue;
        }
        if id > sc.reclaim_idx {
            nr_skipped[id as usize] += 1;
            skipped.push(pfn);
            continue;
        }
        list.remove(frames, pfn);
        frames[pfn as usize].flags.clear(PageFlags::LRU);
        out.push(pfn);
        scan += 1;
    }
    // The skipped pages go back at the head, the last one met first.
    for &pfn in &skipped {
        list.remove(frames, pfn);
        list.push_head(frames, pfn);
    }
    for id in ZoneId::ALL {
        mm.stat.count(VmEvent::PgskipDma.in_zone(id), nr_skipped[id as usize]);
    }
    let total = scan + skipped.len() as u64;
    sc.work.pages_scanned += total;
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::control::Reclaimer;
    use mm::{Owner, RegionId, ZoneSpan};

    /// Two zones of one node, DMA32 pfns 0..4 and Normal 4..8, all on one list
    /// in pfn order from the head (pfn 7 at the tail). Reclaim for DMA32 asked
    /// for 3 pages walks 7, 6, 5, 4 (Normal: skipped), then takes 3, 2, 1.
    #[test]
    fn zone_skip_counts_pgskip_and_rotates() {
        let spans =
            [ZoneSpan { node: 0, id: ZoneId::Dma32, pages: 4 }, ZoneSpan { node: 0, id: ZoneId::Normal, pages: 4 }];
        let mut mm = Mm::with_layout(&spans, vec![vec![10]], 0);
        let mut list = LruList::default();
        for z in 0..2 {
            for i in 0..4 {
                let pfn = mm.alloc_in(z, Owner::anon(RegionId(0)), z as u32 * 4 + i, PageFlags::LRU).unwrap();
                list.push_tail(mm.frames.slice_mut(), pfn);
            }
        }
        let mut sc = ScanControl::new(Reclaimer::Direct, 32);
        sc.reclaim_idx = ZoneId::Dma32;
        assert!(!all_eligible(&mm, &sc));
        let mut out = Vec::new();
        assert_eq!(isolate(&mut mm, &mut list, 3, &mut sc, &mut out), 7);
        assert_eq!(out, [3, 2, 1]);
        assert_eq!((mm.stat.get(VmEvent::PgskipNormal), mm.stat.get(VmEvent::PgskipDma32)), (4, 0));
        assert_eq!(list.iter(mm.frames.as_slice()).collect::<Vec<_>>(), [4, 5, 6, 7, 0]);
        sc.reclaim_idx = ZoneId::Normal;
        assert!(all_eligible(&mm, &sc));
    }

    /// Two nodes of one Normal zone each: node 1's reclaim leaves node 0's
    /// pages in place, uncounted.
    #[test]
    fn node_filter_leaves_other_nodes_alone() {
        let spans =
            [ZoneSpan { node: 0, id: ZoneId::Normal, pages: 2 }, ZoneSpan { node: 1, id: ZoneId::Normal, pages: 2 }];
        let mut mm = Mm::with_layout(&spans, vec![vec![10, 20], vec![20, 10]], 0);
        let mut list = LruList::default();
        for (z, i) in [(1, 0), (0, 1), (1, 2), (0, 3)] {
            let pfn = mm.alloc_in(z, Owner::anon(RegionId(0)), i, PageFlags::LRU).unwrap();
            list.push_tail(mm.frames.slice_mut(), pfn);
        }
        let mut sc = ScanControl::new(Reclaimer::Kswapd, 32);
        sc.nid = Some(1);
        let mut out = Vec::new();
        assert_eq!(isolate(&mut mm, &mut list, 32, &mut sc, &mut out), 2);
        assert_eq!((out, mm.stat.get(VmEvent::PgskipNormal)), (vec![3, 2], 0));
        // Each node manages half the pages: it stands for half of a list.
        assert_eq!((node_share(&mm, &sc, 10), node_share(&mm, &ScanControl::new(Reclaimer::Kswapd, 1), 10)), (5, 10));
        assert_eq!(list.iter(mm.frames.as_slice()).collect::<Vec<_>>(), [0, 1]);
    }
}
