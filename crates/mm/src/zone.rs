//! Zones and nodes: the machine's memory cut by physical address, with
//! watermarks, `lowmem_reserve` and per-zone counters.
//!
//! A zone is a contiguous run of page frame numbers, so a frame's zone is found
//! from its pfn (the kernel's `page_zonenum` reads it from `page->flags`; here
//! no per-frame byte is spent on it).

use crate::frame::Pfn;

/// Number of zone types (`MAX_NR_ZONES` on x86-64 without `ZONE_DEVICE`).
pub const MAX_NR_ZONES: usize = 4;

/// Zone types, in the kernel's order (the index is the zone index).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum ZoneId {
    /// `ZONE_DMA`: below 16 MiB.
    Dma = 0,
    /// `ZONE_DMA32`: below 4 GiB.
    Dma32 = 1,
    /// `ZONE_NORMAL`.
    Normal = 2,
    /// `ZONE_MOVABLE`: only movable (user) pages; present only when configured.
    Movable = 3,
}

impl ZoneId {
    /// Every zone type, lowest first.
    pub const ALL: [ZoneId; MAX_NR_ZONES] = [ZoneId::Dma, ZoneId::Dma32, ZoneId::Normal, ZoneId::Movable];

    /// The zone's name as used in counter suffixes (`allocstall_normal`).
    pub fn name(self) -> &'static str {
        match self {
            ZoneId::Dma => "dma",
            ZoneId::Dma32 => "dma32",
            ZoneId::Normal => "normal",
            ZoneId::Movable => "movable",
        }
    }

    /// The zone's name as `/proc/zoneinfo` prints it (`DMA32`).
    pub fn label(self) -> &'static str {
        match self {
            ZoneId::Dma => "DMA",
            ZoneId::Dma32 => "DMA32",
            ZoneId::Normal => "Normal",
            ZoneId::Movable => "Movable",
        }
    }

    /// The zone type named `s` (either spelling, any case).
    pub fn parse(s: &str) -> Option<ZoneId> {
        ZoneId::ALL.into_iter().find(|z| z.name().eq_ignore_ascii_case(s))
    }
}

/// Watermark kinds, indexing [`Zone::watermark`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Watermark {
    /// `WMARK_MIN`: below it, allocations enter direct reclaim.
    Min = 0,
    /// `WMARK_LOW`: below it, kswapd is woken.
    Low = 1,
    /// `WMARK_HIGH`: kswapd reclaims until free pages reach it.
    High = 2,
    /// `WMARK_PROMO`: used with NUMA memory tiering only.
    Promo = 3,
}

/// Per-zone counters (each also counted machine-wide in [`crate::VmStat`]);
/// `allocstall_*` and `pgskip_*` count by zone type, machine-wide only, as in the kernel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ZoneStat {
    /// `pgalloc_<zone>`: pages allocated from the zone.
    pub pgalloc: u64,
    /// `numa_hit`: allocations from this zone that were on the node asked for.
    pub numa_hit: u64,
    /// `numa_miss`: allocations from this zone meant for another node.
    pub numa_miss: u64,
    /// `numa_foreign`: allocations meant for this zone's node served by another.
    pub numa_foreign: u64,
    /// `numa_interleave`: interleave-policy allocations placed in this zone.
    pub numa_interleave: u64,
    /// `numa_local`: allocations from this zone by a task running on its node.
    pub numa_local: u64,
    /// `numa_other`: allocations from this zone by a task running elsewhere.
    pub numa_other: u64,
    /// `pgscan_kswapd_<zone>` (before v4.8): pages kswapd scanned on the zone's
    /// inactive lists; counted with per-zone LRU lists only.
    pub pgscan_kswapd: u64,
    /// `pgscan_direct_<zone>` (before v4.8): the same for direct reclaim.
    pub pgscan_direct: u64,
    /// `pgsteal_kswapd_<zone>` (before v4.8): pages kswapd reclaimed from the zone.
    pub pgsteal_kswapd: u64,
    /// `pgsteal_direct_<zone>` (before v4.8): the same for direct reclaim.
    pub pgsteal_direct: u64,
}

/// One zone: its place, managed pages, watermarks and reserves, in pages.
#[derive(Clone, Debug)]
pub struct Zone {
    /// Which zone type.
    pub id: ZoneId,
    /// The node it belongs to.
    pub node: u8,
    /// First page frame of the zone.
    pub start_pfn: Pfn,
    /// Pages managed by the buddy allocator.
    pub managed: u64,
    /// `_watermark[]`, indexed by [`Watermark`]; set by the reclaim layer.
    pub watermark: [u64; 4],
    /// `watermark_boost` (v5.0+): pages added to every watermark after a
    /// fallback took another migratetype's frames ([`crate::pageblock`]).
    pub watermark_boost: u64,
    /// `lowmem_reserve[]`: pages kept back from allocations whose highest zone is the index.
    pub lowmem_reserve: [u64; MAX_NR_ZONES],
    /// Event counters of the zone.
    pub stat: ZoneStat,
    /// `NR_ALLOC_BATCH` (v3.12..v4.7 fair zone allocation): pages left in this round.
    pub alloc_batch: i64,
    /// `ZONE_FAIR_DEPLETED`: the batch ran out; the fair pass skips the zone.
    pub fair_depleted: bool,
    /// Before v4.8: reclaim's flags of this zone (with per-zone LRU lists).
    pub reclaim_flags: ZoneFlags,
}

/// The v3.x zone flags reclaim sets when it meets dirty and writeback pages
/// (`ZONE_TAIL_LRU_DIRTY`, `ZONE_WRITEBACK`, `ZONE_CONGESTED`); from v4.8 they
/// are the node's (`PGDAT_*`, [`crate::DirtyState`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ZoneFlags {
    /// `ZONE_TAIL_LRU_DIRTY`: a batch taken from the zone was all unqueued dirty pages.
    pub dirty: bool,
    /// `ZONE_WRITEBACK`: a batch taken from the zone was all under writeback.
    pub writeback: bool,
    /// `ZONE_CONGESTED`: every dirty page of a batch was congested.
    pub congested: bool,
}

impl Zone {
    /// A zone of `managed` pages from `start_pfn` on `node`, with zero watermarks.
    pub fn new(id: ZoneId, node: u8, start_pfn: Pfn, managed: u32) -> Zone {
        Zone {
            id,
            node,
            start_pfn,
            managed: managed as u64,
            watermark: [0; 4],
            watermark_boost: 0,
            lowmem_reserve: [0; MAX_NR_ZONES],
            stat: ZoneStat::default(),
            alloc_batch: 0,
            fair_depleted: false,
            reclaim_flags: ZoneFlags::default(),
        }
    }
    /// `reset_alloc_batches()` for this zone: a new round of `high - low` pages.
    pub fn reset_alloc_batch(&mut self) {
        self.alloc_batch = (self.wmark(Watermark::High) - self.wmark(Watermark::Low)) as i64;
        self.fair_depleted = false;
    }
    /// The value of watermark `w` with the boost (`wmark_pages()`).
    #[inline]
    pub fn wmark(&self, w: Watermark) -> u64 {
        self.watermark[w as usize] + self.watermark_boost
    }
}

/// One zone of a machine layout: its node, type and size in pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ZoneSpan {
    /// Node.
    pub node: u8,
    /// Zone type.
    pub id: ZoneId,
    /// Pages.
    pub pages: u32,
}

/// KERNEL: `LOCAL_DISTANCE`, a node's distance to itself in the SLIT.
pub const LOCAL_DISTANCE: u32 = 10;
/// KERNEL: `REMOTE_DISTANCE`, the default distance between two nodes.
pub const REMOTE_DISTANCE: u32 = 20;

/// KERNEL: x86-64 `MAX_DMA_PFN`: `ZONE_DMA` ends at 16 MiB.
pub const DMA_END_PAGES: u32 = (16 << 20) / 4096;
/// SIM-CHOICE: RAM below 4 GiB ends at 3 GiB (a 1 GiB PCI hole), as on QEMU's
/// `pc` machine with 3.5G or more and many servers; the rest is mapped above
/// 4 GiB, in `ZONE_NORMAL`.
pub const LOWMEM_END_PAGES: u32 = (3 << 30) / 4096;

/// The x86-64 layout of `total` pages of RAM split evenly over `nodes` nodes
/// (the last takes the remainder), in physical address order: RAM below the
/// PCI hole is `ZONE_DMA` up to 16 MiB then `ZONE_DMA32`, RAM above 4 GiB is
/// `ZONE_NORMAL`. Each node gets the zones its range crosses; empty ones are left out.
pub fn x86_64_layout(total: u32, nodes: u8) -> Vec<ZoneSpan> {
    let bounds = [(ZoneId::Dma, DMA_END_PAGES), (ZoneId::Dma32, LOWMEM_END_PAGES), (ZoneId::Normal, u32::MAX)];
    let per_node = total / nodes as u32;
    let mut spans = Vec::new();
    for node in 0..nodes {
        let lo = per_node * node as u32;
        let hi = if node + 1 == nodes { total } else { lo + per_node };
        let mut start = 0;
        for (id, end) in bounds {
            let pages = hi.min(end).saturating_sub(lo.max(start));
            if pages > 0 {
                spans.push(ZoneSpan { node, id, pages });
            }
            start = end;
        }
    }
    spans
}

/// One node per `per_node` entry, each with the zones listed, in that order.
pub fn uniform_layout(per_node: &[(ZoneId, u32)], nodes: u8) -> Vec<ZoneSpan> {
    (0..nodes).flat_map(|node| per_node.iter().map(move |&(id, pages)| ZoneSpan { node, id, pages })).collect()
}

/// The zonelist of `node` (`build_zonelists`, node order): the node's zones
/// from the highest down, then each other node's the same way, nearest first
/// by `distance[node][other]` (ties: lower node id first). Entries are indices
/// into `zones`.
pub fn build_zonelist(zones: &[Zone], node: u8, distance: &[Vec<u32>]) -> Vec<usize> {
    let nr_nodes = distance.len() as u8;
    let mut order: Vec<u8> = (0..nr_nodes).collect();
    order.sort_by_key(|&n| (n != node, distance[node as usize][n as usize], n));
    let mut list = Vec::new();
    for n in order {
        let mut of_node: Vec<usize> =
            (0..zones.len()).filter(|&i| zones[i].node == n && zones[i].managed > 0).collect();
        of_node.sort_by_key(|&i| std::cmp::Reverse(zones[i].id));
        list.extend(of_node);
    }
    list
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u32 = 1 << 18;

    /// 6 GiB, one node: DMA 4096 pages (16M), DMA32 786432 - 4096 = 782336
    /// (3G - 16M), Normal the 3G above 4 GiB = 786432.
    #[test]
    fn six_gib_x86_64() {
        let l = x86_64_layout(6 * GIB, 1);
        let z = |id, pages| ZoneSpan { node: 0, id, pages };
        assert_eq!(l, [z(ZoneId::Dma, 4096), z(ZoneId::Dma32, 782_336), z(ZoneId::Normal, 786_432)]);
    }

    /// 2 GiB: no Normal zone at all. 8 GiB on two nodes: node 0 has 4G
    /// (DMA, DMA32 to 3G, 1G of Normal), node 1 only Normal.
    #[test]
    fn small_machine_and_two_nodes() {
        let l = x86_64_layout(2 * GIB, 1);
        assert_eq!(
            l.iter().map(|s| (s.id, s.pages)).collect::<Vec<_>>(),
            [(ZoneId::Dma, 4096), (ZoneId::Dma32, 2 * GIB - 4096)]
        );
        let l = x86_64_layout(8 * GIB, 2);
        let got: Vec<_> = l.iter().map(|s| (s.node, s.id, s.pages)).collect();
        assert_eq!(
            got,
            [
                (0, ZoneId::Dma, 4096),
                (0, ZoneId::Dma32, 3 * GIB - 4096),
                (0, ZoneId::Normal, GIB),
                (1, ZoneId::Normal, 4 * GIB)
            ]
        );
        assert_eq!(l.iter().map(|s| s.pages as u64).sum::<u64>(), 8 * GIB as u64);
    }

    /// Two nodes of DMA32 + Normal: node 1's list is its Normal, its DMA32,
    /// then node 0's Normal and DMA32; with three nodes the nearer one comes first.
    #[test]
    fn zonelist_fallback_order() {
        let spans = uniform_layout(&[(ZoneId::Dma32, 10), (ZoneId::Normal, 20)], 2);
        let mut pfn = 0;
        let zones: Vec<Zone> = spans
            .iter()
            .map(|s| {
                pfn += s.pages;
                Zone::new(s.id, s.node, pfn - s.pages, s.pages)
            })
            .collect();
        let d = vec![vec![10, 20], vec![20, 10]];
        assert_eq!(build_zonelist(&zones, 1, &d), [3, 2, 1, 0]);
        assert_eq!(build_zonelist(&zones, 0, &d), [1, 0, 3, 2]);
        let three: Vec<Zone> = (0..3).map(|n| Zone::new(ZoneId::Normal, n, n as u32 * 8, 8)).collect();
        let d3 = vec![vec![10, 30, 20], vec![30, 10, 20], vec![20, 20, 10]];
        assert_eq!(build_zonelist(&three, 0, &d3), [0, 2, 1]);
        assert_eq!(build_zonelist(&three, 2, &d3), [2, 0, 1]);
    }
}
