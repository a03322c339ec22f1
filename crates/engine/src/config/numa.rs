//! The machine's zones and NUMA nodes, and their knobs (`zones`, `numa.*`,
//! `vm.lowmem_reserve_ratio`, `kswapd_any_zone_balanced`, the watermark boost).

use knobs::{format_size, parse_size, u64_knob, History, Kind, Knob, Version};
use mm::zone::{self, ZoneSpan, LOCAL_DISTANCE, REMOTE_DISTANCE};
use mm::{BoostForm, ZoneId, MAX_NR_ZONES};

/// How memory is cut into zones on each node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ZoneLayout {
    /// One `ZONE_NORMAL` per node (the default: S-MM1's machine).
    Flat,
    /// As x86-64 places RAM: DMA below 16M, DMA32 to the 3G PCI hole, Normal above 4G.
    X86_64,
    /// The same zones on every node, `(zone, bytes)`; `None` bytes: the rest of the node.
    List(Vec<(ZoneId, Option<u64>)>),
}

/// Where the LRU lists are (`lru_layout`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LruLayout {
    /// Before v4.8: one set of lists per zone, reclaimed zone by zone.
    Zone,
    /// v4.8+: one set per node; reclaim for a lower zone skips higher zones' pages.
    Node,
}

/// KERNEL: the LRU lists moved from the zone to the node in v4.8 (Mel
/// Gorman's "mm, vmscan: move LRU lists to node", 599d0c954f91).
const LRU_LAYOUTS: &[(Version, &str)] = &[(Version::new(2, 6), "zone"), (Version::new(4, 8), "node")];

/// KERNEL: the watermark boost came with v5.0 (Mel Gorman's "mm: reclaim small
/// amounts of memory when an external fragmentation event occurs", 1c30844d2dfe);
/// v6.15's split of the fallback into claim and steal (Johannes Weiner's "mm:
/// page_alloc: don't steal single pages from biggest buddy") boosts only on a claim.
const BOOST_FORMS: &[(Version, &str)] =
    &[(Version::new(2, 6), "none"), (Version::new(5, 0), "fallback"), (Version::new(6, 15), "claim")];

/// The zone and node knobs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NumaKnobs {
    /// `zones`: the layout of each node.
    pub zones: ZoneLayout,
    /// `numa.nodes`: how many nodes share the memory (evenly).
    pub nodes: u8,
    /// `numa.distance`: the SLIT matrix; `None` = 10 local, 20 remote.
    pub distance: Option<Vec<Vec<u32>>>,
    /// `vm.lowmem_reserve_ratio`, per zone type.
    pub lowmem_reserve_ratio: [u64; MAX_NR_ZONES],
    /// v4.8+: a node is balanced for kswapd when any eligible zone is (before: all).
    pub any_zone_balanced: bool,
    /// v3.12..v4.7: the fair zone allocation policy (round robin over the local zones).
    pub fair_zone_alloc: bool,
    /// `lru_layout`: LRU lists per zone (before v4.8) or per node.
    pub lru_layout: LruLayout,
    /// `vm.zone_reclaim_mode`: node reclaim's bits (1 on, 2 write, 4 unmap; 0 off).
    pub zone_reclaim_mode: u64,
    /// `vm.min_unmapped_ratio`: node reclaim runs only above this percent of reclaimable page cache.
    pub min_unmapped_ratio: u64,
    /// `watermark_boost`: which migratetype fallbacks boost the zone's watermarks.
    pub watermark_boost: BoostForm,
    /// `vm.watermark_boost_factor`: the boost's cap, in 1/10000 of the high watermark.
    pub watermark_boost_factor: u64,
    /// `memory.pageblocks`: node 0's zones as a booted kernel left them.
    pub pageblocks: Vec<BootBlocks>,
}

/// One zone of node 0 and its pageblocks at boot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BootBlocks {
    /// The zone (of node 0).
    pub zone: ZoneId,
    /// Its blocks and their free frames.
    pub layout: mm::pageblock::BootLayout,
}

impl Default for NumaKnobs {
    fn default() -> Self {
        NumaKnobs {
            zones: ZoneLayout::Flat,
            nodes: 1,
            distance: None,
            lowmem_reserve_ratio: reclaim::watermark::DEFAULT_LOWMEM_RESERVE_RATIO,
            any_zone_balanced: true,
            fair_zone_alloc: false,
            lru_layout: LruLayout::Node,
            zone_reclaim_mode: 0,
            min_unmapped_ratio: 1,
            watermark_boost: BoostForm::Fallback,
            watermark_boost_factor: mm::pageblock::DEFAULT_BOOST_FACTOR,
            pageblocks: Vec::new(),
        }
    }
}

impl NumaKnobs {
    /// The zones of a machine of `pages` pages, in pfn order, or what is wrong.
    pub fn layout(&self, pages: u32) -> Result<Vec<ZoneSpan>, String> {
        let nodes = self.nodes as u32;
        if pages / nodes < 64 {
            return Err(format!("numa.nodes={nodes}: each node needs at least 64 pages of memory"));
        }
        let mut spans = match &self.zones {
            ZoneLayout::Flat => zone::uniform_layout(&[(ZoneId::Normal, pages / nodes)], self.nodes),
            ZoneLayout::X86_64 => return Ok(zone::x86_64_layout(pages, self.nodes)),
            ZoneLayout::List(list) => {
                let per_node = (pages / nodes) as u64;
                let given: u64 = list.iter().filter_map(|z| z.1).map(|b| b / mm::PAGE_SIZE).sum();
                let rest = per_node.checked_sub(given).filter(|&r| list.iter().any(|z| z.1.is_none()) || r == 0);
                let Some(rest) = rest else {
                    return Err(format!(
                        "zones: the sizes add up to {} per node but each node has {} (end with `rest`)",
                        format_size(given * mm::PAGE_SIZE),
                        format_size(per_node * mm::PAGE_SIZE)
                    ));
                };
                let zones: Vec<_> =
                    list.iter().map(|&(id, b)| (id, b.map_or(rest, |b| b / mm::PAGE_SIZE) as u32)).collect();
                zone::uniform_layout(&zones, self.nodes)
            }
        };
        // The last node takes what does not divide evenly, in its last zone.
        let extra = pages - spans.iter().map(|s| s.pages).sum::<u32>();
        spans.last_mut().expect("a node has a zone").pages += extra;
        Ok(spans)
    }

    /// The distance matrix, checked against the number of nodes.
    pub fn distances(&self) -> Result<Vec<Vec<u32>>, String> {
        let n = self.nodes as usize;
        let Some(d) = &self.distance else {
            return Ok((0..n)
                .map(|a| (0..n).map(|b| if a == b { LOCAL_DISTANCE } else { REMOTE_DISTANCE }).collect())
                .collect());
        };
        if d.len() != n || d.iter().any(|row| row.len() != n) {
            return Err(format!("numa.distance: expected {n} rows of {n} distances for numa.nodes={n}"));
        }
        if (0..n).any(|a| d[a][a] != LOCAL_DISTANCE || (0..n).any(|b| a != b && d[a][b] <= LOCAL_DISTANCE)) {
            return Err("numa.distance: a node's distance to itself is 10, to another node more than 10".into());
        }
        Ok(d.clone())
    }
}

fn parse_zones(v: &str) -> Result<ZoneLayout, String> {
    match v {
        "flat" => return Ok(ZoneLayout::Flat),
        "x86_64" => return Ok(ZoneLayout::X86_64),
        _ => {}
    }
    let expected = "flat, x86_64, or a list of ZONE:SIZE for each node, lowest zone first, the last SIZE may be `rest` (dma:16M,dma32:2G,normal:rest)";
    let mut list: Vec<(ZoneId, Option<u64>)> = Vec::new();
    for item in v.split(',') {
        let (name, size) = item.split_once(':').ok_or_else(|| expected.to_string())?;
        let id = ZoneId::parse(name).ok_or_else(|| format!("`{name}` is not a zone (dma, dma32, normal, movable)"))?;
        if list.last().is_some_and(|&(last, b)| last >= id || b.is_none()) {
            return Err(format!("`{item}`: zones go lowest first, each once, and `rest` only last"));
        }
        let bytes = if size == "rest" { None } else { Some(parse_size(size)?) };
        if bytes.is_some_and(|b| b < mm::PAGE_SIZE) {
            return Err(format!("`{item}`: a zone has at least one page"));
        }
        list.push((id, bytes));
    }
    Ok(ZoneLayout::List(list))
}

fn format_zones(z: &ZoneLayout) -> String {
    match z {
        ZoneLayout::Flat => "flat".into(),
        ZoneLayout::X86_64 => "x86_64".into(),
        ZoneLayout::List(list) => list
            .iter()
            .map(|&(id, b)| format!("{}:{}", id.name(), b.map_or("rest".into(), format_size)))
            .collect::<Vec<_>>()
            .join(","),
    }
}

const PAGEBLOCKS_EXPECTED: &str = "`none`, or per zone ZONE:unmovable=BLOCKS/FREE,reclaimable=BLOCKS/FREE,movable=FREE joined by `;` (dma:unmovable=1/224,movable=3584;dma32:unmovable=12/226,reclaimable=2/848,movable=6678)";

fn parse_pageblocks(v: &str) -> Result<Vec<BootBlocks>, String> {
    if v == "none" {
        return Ok(Vec::new());
    }
    let bad = |what: &str| format!("`{what}`: expected {PAGEBLOCKS_EXPECTED}");
    let mut list: Vec<BootBlocks> = Vec::new();
    for part in v.split(';') {
        let (name, types) = part.split_once(':').ok_or_else(|| bad(part))?;
        let zone =
            ZoneId::parse(name).ok_or_else(|| format!("`{name}` is not a zone (dma, dma32, normal, movable)"))?;
        if list.iter().any(|b| b.zone == zone) {
            return Err(format!("`{part}`: zone {name} is given twice"));
        }
        let mut b = BootBlocks { zone, layout: Default::default() };
        let mut movable = false;
        for item in types.split(',') {
            let (ty, n) = item.split_once('=').ok_or_else(|| bad(item))?;
            let num = |s: &str| knobs::parse_u64(s, 0, u32::MAX as u64).map(|n| n as u32);
            let pair = |s: &str| -> Result<(u32, u32), String> {
                let (blocks, free) = s.split_once('/').ok_or_else(|| bad(item))?;
                Ok((num(blocks)?, num(free)?))
            };
            match ty {
                "unmovable" => b.layout.unmovable = pair(n)?,
                "reclaimable" => b.layout.reclaimable = pair(n)?,
                "movable" => (b.layout.movable_free, movable) = (num(n)?, true),
                _ => return Err(bad(item)),
            }
        }
        if !movable {
            return Err(format!("`{part}`: the movable blocks' free frames are missing (movable=FREE)"));
        }
        list.push(b);
    }
    Ok(list)
}

/// The `memory.pageblocks` value of `list` (`none` when empty).
pub fn format_pageblocks(list: &[BootBlocks]) -> String {
    if list.is_empty() {
        return "none".into();
    }
    let zone = |b: &BootBlocks| {
        let l = &b.layout;
        let (u, r) = (l.unmovable, l.reclaimable);
        format!("{}:unmovable={}/{},reclaimable={}/{},movable={}", b.zone.name(), u.0, u.1, r.0, r.1, l.movable_free)
    };
    list.iter().map(zone).collect::<Vec<_>>().join(";")
}

fn parse_distance(v: &str) -> Result<Option<Vec<Vec<u32>>>, String> {
    if v == "default" {
        return Ok(None);
    }
    let rows = v.split(';').map(|row| row.split(',').map(|d| knobs::parse_u64(d.trim(), 10, 254).map(|d| d as u32)));
    rows.map(|row| row.collect::<Result<Vec<_>, _>>()).collect::<Result<Vec<_>, _>>().map(Some)
}

/// The zone and node knobs.
pub const KNOBS: &[Knob<NumaKnobs>] = &[
    Knob {
        key: "lru_layout",
        help: "where the LRU lists are: zone (before v4.8: one set per zone; direct reclaim shrinks the zonelist's zones in turn, kswapd each unbalanced zone up to the highest, per-zone dirty limits for write() allocations, per-zone pgscan/pgsteal counters) or node (v4.8+); zone takes effect on a machine of more than one zone, with lru=classic or clock and no cgroup.*",
        kind: Kind::Choice,
        history: History::Forms(LRU_LAYOUTS),
        get: |n| match n.lru_layout {
            LruLayout::Zone => "zone".into(),
            LruLayout::Node => "node".into(),
        },
        set: |n, v| {
            n.lru_layout = match v {
                "zone" => LruLayout::Zone,
                "node" => LruLayout::Node,
                _ => return Err("zone or node".into()),
            };
            Ok(())
        },
    },
    Knob {
        key: "zones",
        help: "zones of each node: flat (one Normal zone, the default), x86_64 (DMA below 16M, DMA32 up to a PCI hole at 3G, Normal above 4G), or ZONE:SIZE,... lowest first with the last SIZE `rest` (dma:16M,dma32:2G,normal:rest,movable:1G)",
        kind: Kind::Text,
        history: History::Model,
        get: |n| format_zones(&n.zones),
        set: |n, v| {
            n.zones = parse_zones(v)?;
            Ok(())
        },
    },
    Knob {
        key: "memory.pageblocks",
        help: "node 0's zones as a booted kernel left them (its /proc/pagetypeinfo): per zone the unmovable and reclaimable pageblocks (at the zone's end) with their free frames, and the movable blocks' free frames; every other frame of the zone is the kernel's from the start, as with memory.reserved (which it replaces): `none` (default) or ZONE:unmovable=BLOCKS/FREE,reclaimable=BLOCKS/FREE,movable=FREE;ZONE:...",
        kind: Kind::Text,
        history: History::Model,
        get: |n| format_pageblocks(&n.pageblocks),
        set: |n, v| {
            n.pageblocks = parse_pageblocks(v)?;
            Ok(())
        },
    },
    u64_knob!(
        "numa.nodes",
        nodes,
        1,
        64,
        History::Model,
        "NUMA nodes sharing memory evenly, 1..=64 (default 1); each has its zones, kswapd and zonelist"
    ),
    Knob {
        key: "numa.distance",
        help: "node distances (SLIT): `default` (10 local, 20 remote) or rows of numa.nodes distances, `10,21;21,10`",
        kind: Kind::Text,
        history: History::Model,
        get: |n| match &n.distance {
            None => "default".into(),
            Some(d) => d
                .iter()
                .map(|row| row.iter().map(u32::to_string).collect::<Vec<_>>().join(","))
                .collect::<Vec<_>>()
                .join(";"),
        },
        set: |n, v| {
            n.distance = parse_distance(v)?;
            Ok(())
        },
    },
    Knob {
        key: "vm.lowmem_reserve_ratio",
        help: "zone reserves against allocations that could use higher zones: one ratio per zone type DMA DMA32 Normal Movable (0 = none), default `256 256 32 0`",
        kind: Kind::Text,
        history: History::Tunable { since: Version::new(2, 6) },
        get: |n| n.lowmem_reserve_ratio.map(|r| r.to_string()).join(" "),
        set: |n, v| {
            let r: Vec<u64> =
                v.split_whitespace().map(|x| knobs::parse_u64(x, 0, 1 << 31)).collect::<Result<_, _>>()?;
            n.lowmem_reserve_ratio = r.try_into().map_err(|_| "four ratios: DMA DMA32 Normal Movable".to_string())?;
            Ok(())
        },
    },
    knobs::bool_knob!(
        "kswapd_any_zone_balanced",
        any_zone_balanced,
        // KERNEL: v4.8's node-based balance_pgdat (the node-LRU series): one balanced eligible
        // zone ends kswapd's run; v3.x pgdat_balanced() wanted every zone balanced for order 0.
        History::since(4, 8),
        "v4.8+: kswapd's node is balanced when any zone up to its classzone is above high + lowmem_reserve; off (before v4.8, order 0): every such zone above its high watermark"
    ),
    Knob {
        key: "watermark_boost",
        help: "the watermark boost (S-MM4 narrowed): none (before v5.0); fallback (v5.0..v6.14): an allocation that takes a page of another migratetype's pageblock, short of a whole free block, raises its zone's watermarks by a pageblock (512 pages, up to vm.watermark_boost_factor of the high watermark) and wakes kswapd, which then reclaims without swapping or writing until it freed the boost; claim (v6.15+): only a try to claim a whole block boosts",
        kind: Kind::Choice,
        history: History::Forms(BOOST_FORMS),
        get: |n| {
            match n.watermark_boost {
                BoostForm::None => "none",
                BoostForm::Fallback => "fallback",
                BoostForm::Claim => "claim",
            }
            .into()
        },
        set: |n, v| {
            n.watermark_boost = match v {
                "none" => BoostForm::None,
                "fallback" => BoostForm::Fallback,
                "claim" => BoostForm::Claim,
                _ => return Err("none, fallback or claim".into()),
            };
            Ok(())
        },
    },
    u64_knob!(
        "vm.watermark_boost_factor",
        watermark_boost_factor,
        0,
        1 << 31,
        History::Tunable { since: Version::new(5, 0) },
        "the watermark boost's cap in 1/10000 of a zone's high watermark (default 15000; 0 = no boost)"
    ),
    u64_knob!(
        "vm.zone_reclaim_mode",
        zone_reclaim_mode,
        0,
        7,
        History::Tunable { since: Version::new(2, 6) },
        "node reclaim (`node_reclaim()`, `zone_reclaim()` before v4.8): 1 = a zone of the task's own node below its low watermark is reclaimed (from priority 4 until a page is freed) before the allocation falls back to another node; + 2 it may write dirty pages, + 4 unmap mapped ones; 0 (the default) = fall back at once"
    ),
    u64_knob!(
        "vm.min_unmapped_ratio",
        min_unmapped_ratio,
        0,
        100,
        History::Tunable { since: Version::new(2, 6) },
        "node reclaim runs only while the node's reclaimable page cache is above this percent of its pages (default 1)"
    ),
    knobs::bool_knob!(
        "fair_zone_alloc",
        fair_zone_alloc,
        // KERNEL: 81c0a2bb515f "mm: page_alloc: fair zone allocator policy" (v3.12), removed by
        // e6cbd7f2efb4 with the node LRUs (v4.8).
        History::Behaviour { since: Some(Version::new(3, 12)), until: Some(Version::new(4, 7)) },
        "v3.12..v4.7: the fast path first takes pages round robin from the local node's zones, each zone `high - low` pages per round (NR_ALLOC_BATCH), before the plain zonelist order"
    ),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Config;

    #[test]
    fn layouts_and_errors() {
        let mut c = Config::default();
        c.set("zones", "dma32:64M,normal:rest").unwrap();
        c.set("numa.nodes", "2").unwrap();
        // 256M over two nodes: 128M each, 64M of it DMA32; 16384 + 16384 pages per node.
        let l = c.numa.layout(65_536).unwrap();
        assert_eq!(
            l.iter().map(|s| (s.node, s.id, s.pages)).collect::<Vec<_>>(),
            [
                (0, ZoneId::Dma32, 16_384),
                (0, ZoneId::Normal, 16_384),
                (1, ZoneId::Dma32, 16_384),
                (1, ZoneId::Normal, 16_384)
            ]
        );
        assert_eq!(format_zones(&c.numa.zones), "dma32:64M,normal:rest");
        assert!(c.set("zones", "normal:1G,dma32:rest").is_err());
        assert!(c.set("zones", "dma32:1G,normal:rest,movable:1G").is_err());
        assert!(c.set("zones", "highmem:1G").is_err());
        c.set("zones", "dma32:64M,normal:32M").unwrap();
        assert!(c.numa.layout(65_536).unwrap_err().contains("add up to 96M"));
        c.set("numa.distance", "10,21;21,10").unwrap();
        assert_eq!(c.numa.distances().unwrap(), [vec![10, 21], vec![21, 10]]);
        c.set("numa.distance", "10,21;21,11").unwrap();
        assert!(c.numa.distances().is_err());
        c.set("numa.distance", "10,21,21;21,10,21;21,21,10").unwrap();
        assert!(c.numa.distances().unwrap_err().contains("2 rows"));
        c.set("vm.lowmem_reserve_ratio", "256 256 32 0").unwrap();
        assert!(c.set("vm.lowmem_reserve_ratio", "256 32").is_err());
    }
}
