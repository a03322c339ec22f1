//! Seed 000's and 003's in-memory store: memcached serving memcachetest's gets
//! and sets, with memcached 1.4's slab layout of items of a given value size
//! and the memory memcachetest's client leaks per operation.

use engine::{Access, Program, Step};
use mm::{RegionId, PAGE_SIZE};
use simrng::SimRng;

/// memcached 1.4's `sizeof(item)` on 64-bit: three pointers, two times, the
/// byte count, refcount, suffix length, flags, class and key length, padded to 8.
const ITEM_HEADER: u64 = 48;
/// The CAS value after the header (`use_cas`, on by default).
const ITEM_CAS: u64 = 8;
/// memcached's slab page (`item_size_max`, 1 MB): memory is taken in these.
pub const SLAB_BYTES: u64 = 1 << 20;
/// The smallest chunk: `sizeof(item)` plus the default `-n 48` (`chunk_size`).
const SMALLEST_CHUNK: u64 = ITEM_HEADER + 48;
/// Chunk sizes grow by the default `-f 1.25`, as quarters.
const FACTOR_QUARTERS: u64 = 5;
/// Chunks are 8-byte aligned (`CHUNK_ALIGN_BYTES`).
const CHUNK_ALIGN: u64 = 8;

/// Decimal digits of `n`.
fn digits(n: u64) -> u64 {
    n.checked_ilog10().map_or(1, |d| d as u64 + 1)
}

/// Where memcached 1.4 (default `-n 48 -f 1.25`, 1 MB slab pages) keeps `items`
/// items of `value` bytes stored under the keys `0`..`items` (memcachetest's keys)
/// with flags 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlabLayout {
    /// Bytes of one item: header, CAS, the key and its NUL, the `" 0 <len>\r\n"`
    /// suffix and the value with its `\r\n`.
    pub item: u64,
    /// The slab class's chunk size: the smallest class that holds the item.
    pub chunk: u64,
    /// Chunks per 1 MB slab page.
    pub per_slab: u64,
    /// Items stored.
    pub items: u64,
}

impl SlabLayout {
    /// The layout of `items` values of `value` bytes; None if an item exceeds
    /// the largest chunk class below a whole slab page.
    pub fn new(value: u64, items: u64) -> Option<SlabLayout> {
        let key = digits(items.saturating_sub(1)) + 1;
        let suffix = " 0 ".len() as u64 + digits(value) + "\r\n".len() as u64;
        let item = ITEM_HEADER + ITEM_CAS + key + suffix + value + 2;
        let mut chunk = SMALLEST_CHUNK;
        loop {
            chunk = chunk.div_ceil(CHUNK_ALIGN) * CHUNK_ALIGN;
            if chunk >= item {
                break;
            }
            // The classes end where the next would exceed a slab page over the factor.
            if chunk * FACTOR_QUARTERS / 4 > SLAB_BYTES * 4 / FACTOR_QUARTERS {
                return None;
            }
            chunk = chunk * FACTOR_QUARTERS / 4;
        }
        Some(SlabLayout { item, chunk, per_slab: SLAB_BYTES / chunk, items })
    }

    /// Pages of the slab pages the items take.
    pub fn pages(&self) -> u64 {
        self.items.div_ceil(self.per_slab) * (SLAB_BYTES / PAGE_SIZE)
    }

    /// The first and last page item `i` spans.
    pub fn span(&self, i: u64) -> (u32, u32) {
        let start = i / self.per_slab * SLAB_BYTES + i % self.per_slab * self.chunk;
        ((start / PAGE_SIZE) as u32, ((start + self.item - 1) / PAGE_SIZE) as u32)
    }
}

/// The store's items: one page each, or memcached's slab layout.
#[derive(Debug, Clone, Copy)]
pub enum Items {
    /// `n` items of one page each (page `i` is item `i`).
    Pages(u32),
    /// Items laid out in slab chunks, spanning the pages their bytes cover.
    Slabs(SlabLayout),
}

impl Items {
    fn count(&self) -> u32 {
        match self {
            Items::Pages(n) => *n,
            Items::Slabs(l) => l.items as u32,
        }
    }

    fn span(&self, i: u32) -> (u32, u32) {
        match self {
            Items::Pages(_) => (i, i),
            Items::Slabs(l) => l.span(i as u64),
        }
    }
}

/// Memory the client never frees, `bytes` per operation, written as it grows
/// (memcachetest's per-pass latency arrays, cleared by `calloc`).
#[derive(Debug, Clone, Copy)]
pub struct Leak {
    /// Its region, large enough for every operation's bytes.
    pub region: RegionId,
    /// Bytes per operation.
    pub bytes: u64,
}

/// A key-value store in anonymous memory serving gets and sets.
///
/// SIM-CHOICE: memcached's item memory is one anonymous region, filled by
/// sets first (memcachetest's populate); then each operation picks an item
/// uniformly (memcachetest's `random() % items`) and, after `service_ns` of
/// CPU (request parsing, networking), reads (get) or writes (set) every page
/// the item spans. A set writes the item in place: memcached stores it in the
/// chunk the previous set freed, itself a uniformly drawn item's, so the pages
/// touched are alike. Each operation is a transaction; operations per second
/// after the fill are the score, as memcachetest reports it.
pub struct MemcacheTest {
    region: RegionId,
    items: Items,
    ops: u64,
    set_pct: u32,
    service_ns: u64,
    rng: SimRng,
    leak: Option<Leak>,
    filled: u32,
    done: u64,
    /// The next operation's CPU time has been spent.
    served: bool,
    /// Pages of the current item still to touch: (next, last, write).
    pending: Option<(u32, u32, bool)>,
    /// The current operation's transaction is open.
    in_txn: bool,
    /// Leaked bytes not yet on a page of their own, and leak pages written.
    leak_bytes: u64,
    leak_pages: u32,
}

impl MemcacheTest {
    /// A store of `items` in `region` serving `ops` operations, `set_pct`% of them sets.
    pub fn new(
        region: RegionId,
        items: Items,
        ops: u64,
        (set_pct, service_ns): (u32, u64),
        leak: Option<Leak>,
        rng: SimRng,
    ) -> MemcacheTest {
        MemcacheTest {
            region,
            items,
            ops,
            set_pct,
            service_ns,
            rng,
            leak,
            filled: 0,
            done: 0,
            served: false,
            pending: None,
            in_txn: false,
            leak_bytes: 0,
            leak_pages: 0,
        }
    }

    /// Pages of the leak region `ops` operations of `bytes` each write.
    pub fn leak_pages(ops: u64, bytes: u64) -> u32 {
        (ops.saturating_mul(bytes).div_ceil(PAGE_SIZE)).clamp(1, 1 << 31) as u32
    }

    fn touch(&mut self) -> Step {
        let (page, last, write) = self.pending.expect("an item is being touched");
        self.pending = (page < last).then_some((page + 1, last, write));
        Step::Access(Access::Mem { region: self.region, page, write })
    }
}

impl Program for MemcacheTest {
    fn next(&mut self) -> Step {
        if self.pending.is_some() {
            return self.touch();
        }
        if self.filled < self.items.count() {
            let (first, last) = self.items.span(self.filled);
            self.filled += 1;
            self.pending = Some((first, last, true));
            return self.touch();
        }
        if let Some(leak) = self.leak.filter(|_| self.in_txn) {
            if self.leak_bytes >= PAGE_SIZE {
                self.leak_bytes -= PAGE_SIZE;
                self.leak_pages += 1;
                return Step::Access(Access::Mem { region: leak.region, page: self.leak_pages - 1, write: true });
            }
        }
        if self.in_txn {
            self.in_txn = false;
            return Step::TxnEnd;
        }
        if self.done >= self.ops {
            return Step::Done;
        }
        if !self.served && self.service_ns > 0 {
            self.served = true;
            return Step::Think(self.service_ns);
        }
        self.served = false;
        self.done += 1;
        self.in_txn = true;
        self.leak_bytes += self.leak.map_or(0, |l| l.bytes);
        let item = self.rng.below(self.items.count());
        let write = self.rng.below(100) < self.set_pct;
        let (first, last) = self.items.span(item);
        self.pending = Some((first, last, write));
        Step::TxnBegin
    }
}

#[cfg(test)]
mod tests;
