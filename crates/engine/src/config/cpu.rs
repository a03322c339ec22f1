//! CPU time charged for simulated work, and its knobs (`cpu.*`).

use knobs::{History, Knob};
use reclaim::ReclaimWork;

/// CPU time charged for work, in nanoseconds. SIM-CHOICE values, documented in
/// docs/model.md; every one can be overridden with `--set cpu.NAME=NS`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuCosts {
    /// A resident access (user work per operation).
    pub access_ns: u64,
    /// A page fault without I/O (allocate, zero or map, account).
    pub fault_ns: u64,
    /// Reclaim: isolate and examine one page.
    pub reclaim_scan_ns: u64,
    /// Reclaim: check one page-table entry through the reverse map.
    pub rmap_pte_ns: u64,
    /// Reclaim: free one page (unmap accounting, cache removal, shadow).
    pub reclaim_free_ns: u64,
    /// Reclaim: allocate a swap slot and submit one page's write.
    pub pageout_ns: u64,
    /// Minimum CPU time of one kswapd pass.
    pub kswapd_pass_ns: u64,
    /// Reclaim: start one reverse-map walk (anon_vma / i_mmap lock, interval-tree search);
    /// 0 by default so that earlier calibrations keep their timing (seed 002 sets 300).
    pub rmap_walk_ns: u64,
    /// MGLRU: move one page between generation lists (`sort_folio`).
    pub lru_sort_ns: u64,
    /// MGLRU: visit one address space in the page-table walk (mmap lock, upper levels).
    pub walk_mm_ns: u64,
    /// MGLRU: check one non-leaf (PMD) entry in the page-table walk.
    pub walk_pmd_ns: u64,
    /// MGLRU: check one PTE in the page-table walk or look-around (sequential, batched).
    pub walk_pte_ns: u64,
    /// zswap: compress one page into the pool.
    pub zswap_compress_ns: u64,
    /// zswap: decompress one page (a load, or a writeback).
    pub zswap_decompress_ns: u64,
    /// A `read()` of a cached page (`None`: `access_ns`).
    pub file_read_ns: Option<u64>,
    /// A `write()` of a whole dirty cached page (`None`: `access_ns`).
    pub file_write_ns: Option<u64>,
    /// A `write()` that dirties a page: a new page-cache page or a clean
    /// one, the page's allocation included (`None`: `fault_ns`).
    pub file_write_new_ns: Option<u64>,
}

impl CpuCosts {
    /// CPU time of a `read()` of a cached page.
    pub fn file_read(&self) -> u64 {
        self.file_read_ns.unwrap_or(self.access_ns)
    }

    /// CPU time of a `write()` of a dirty cached page.
    pub fn file_write(&self) -> u64 {
        self.file_write_ns.unwrap_or(self.access_ns)
    }

    /// CPU time of a `write()` that dirties a page.
    pub fn file_write_new(&self) -> u64 {
        self.file_write_new_ns.unwrap_or(self.fault_ns)
    }

    /// CPU time of `w`; `sync_write_ns` is the per-page cost of a synchronous
    /// swap device (compression on zram), paid by whoever writes.
    pub fn reclaim_work_ns(&self, w: &ReclaimWork, sync_write_ns: u64) -> u64 {
        w.pages_scanned * self.reclaim_scan_ns
            + w.rmap_walks * self.rmap_walk_ns
            + w.rmap_ptes * self.rmap_pte_ns
            + w.pages_freed * self.reclaim_free_ns
            + w.pages_written * (self.pageout_ns + sync_write_ns)
            + w.pages_sorted * self.lru_sort_ns
            + w.walk_mms * self.walk_mm_ns
            + w.walk_pmds * self.walk_pmd_ns
            + w.walk_ptes * self.walk_pte_ns
            + w.zswap_compressed * self.zswap_compress_ns
            + w.zswap_written_back * self.zswap_decompress_ns
    }
}

impl Default for CpuCosts {
    fn default() -> Self {
        CpuCosts {
            access_ns: 50,
            fault_ns: 1_000,
            reclaim_scan_ns: 100,
            rmap_pte_ns: 150,
            reclaim_free_ns: 250,
            pageout_ns: 2_000,
            kswapd_pass_ns: 1_000,
            rmap_walk_ns: 0,
            lru_sort_ns: 40,
            walk_mm_ns: 500,
            walk_pmd_ns: 10,
            walk_pte_ns: 4,
            zswap_compress_ns: 3_000,
            zswap_decompress_ns: 1_000,
            file_read_ns: None,
            file_write_ns: None,
            file_write_new_ns: None,
        }
    }
}

/// A CPU cost in ns: a model parameter, 0..=10 s.
macro_rules! cpu {
    ($key:literal, $field:ident, $help:literal) => {
        knobs::u64_knob!($key, $field, 0, 10_000_000_000, History::Model, $help)
    };
}

/// A file cost in ns, or `auto` (the cost it defaults to).
macro_rules! file_cpu {
    ($key:literal, $field:ident, $help:literal) => {
        Knob {
            key: $key,
            help: $help,
            kind: knobs::Kind::Text,
            history: History::Model,
            get: |c| c.$field.map_or("auto".into(), |n| n.to_string()),
            set: |c, v| {
                c.$field = if v == "auto" { None } else { Some(knobs::parse_u64(v, 0, 10_000_000_000)?) };
                Ok(())
            },
        }
    };
}

/// Every CPU cost, as `cpu.NAME` settings.
pub const KNOBS: &[Knob<CpuCosts>] = &[
    cpu!("access_ns", access_ns, "CPU time of one resident access (ns)"),
    cpu!("fault_ns", fault_ns, "CPU time of a page fault without IO (ns)"),
    cpu!("reclaim_scan_ns", reclaim_scan_ns, "reclaim CPU per page isolated (ns)"),
    cpu!("rmap_pte_ns", rmap_pte_ns, "reclaim CPU per PTE checked through the rmap (ns)"),
    cpu!("reclaim_free_ns", reclaim_free_ns, "reclaim CPU per page freed (ns)"),
    cpu!("pageout_ns", pageout_ns, "reclaim CPU per page written (ns)"),
    cpu!("kswapd_pass_ns", kswapd_pass_ns, "minimum CPU time of one kswapd pass (ns)"),
    cpu!(
        "rmap_walk_ns",
        rmap_walk_ns,
        "reclaim CPU per reverse-map walk started: lock + VMA interval-tree search (ns)"
    ),
    cpu!("lru_sort_ns", lru_sort_ns, "MGLRU CPU per page moved between generations (ns)"),
    cpu!("walk_mm_ns", walk_mm_ns, "MGLRU CPU per address space visited by the page-table walk (ns)"),
    cpu!("walk_pmd_ns", walk_pmd_ns, "MGLRU CPU per non-leaf entry checked by the walk (ns)"),
    cpu!("walk_pte_ns", walk_pte_ns, "MGLRU CPU per PTE checked by the walk or look-around (ns)"),
    cpu!(
        "zswap_compress_ns",
        zswap_compress_ns,
        "zswap CPU to compress a page into the pool (ns; default 3000, zram's lzo-rle preset)"
    ),
    cpu!(
        "zswap_decompress_ns",
        zswap_decompress_ns,
        "zswap CPU to decompress a page on a load or writeback (ns; default 1000)"
    ),
    file_cpu!("file_read_ns", file_read_ns, "CPU time of a read() of a cached page: syscall and copy (ns, or `auto`: cpu.access_ns)"),
    file_cpu!("file_write_ns", file_write_ns, "CPU time of a write() of a whole dirty cached page (ns, or `auto`: cpu.access_ns)"),
    file_cpu!(
        "file_write_new_ns",
        file_write_new_ns,
        "CPU time of a write() that dirties a page, new to the page cache or clean, its allocation included (ns, or `auto`: cpu.fault_ns)"
    ),
];
