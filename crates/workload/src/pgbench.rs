//! Seed 000's benchmark: pgbench's TPC-B-like transaction against a database
//! on a filesystem, with postgres's shared buffers in anonymous memory.
//!
//! Simplification S-WL4: one postgres block is one 4 KiB page. The database file holds,
//! in order, the branches, the tellers, the accounts index (root, internal
//! pages, leaves) and the accounts heap; the history table and the WAL are
//! files of their own. Every block goes through the shared buffer pool
//! ([`BufferPool`]): a hit is an access to the buffer's page; a miss evicts a
//! clock-sweep victim (written back with `write()` when dirty), reads the
//! block with `read()` and copies it into the buffer.

use engine::{Access, Program, Step};
use mm::{FileId, RegionId};
use simrng::SimRng;
use std::cell::RefCell;
use std::rc::Rc;

/// postgres's `BM_MAX_USAGE_COUNT`: the clock sweep's usage count saturates here.
const MAX_USAGE: u8 = 5;
/// No block / no buffer.
const NONE: u32 = u32::MAX;

/// Where the tables, indexes and logs live and what one transaction writes.
#[derive(Clone, Copy, Debug)]
pub struct PgLayout {
    /// The database file (branches, tellers, accounts index and heap).
    pub db: FileId,
    /// Pages of the database file.
    pub db_pages: u32,
    /// The history table's file (appended to).
    pub history: FileId,
    /// Pages of the history file.
    pub history_pages: u32,
    /// The WAL, written sequentially and reused circularly (recycled segments).
    pub wal: FileId,
    /// Pages of the WAL.
    pub wal_pages: u32,
    /// The shared buffers, one anonymous region of one page per buffer.
    pub buffers: RegionId,
    /// Number of shared buffers.
    pub nr_buffers: u32,
    /// WAL bytes per transaction.
    pub wal_bytes: u32,
    /// Think/CPU time per transaction outside memory (parsing, planning, client round trips), ns.
    pub cpu_ns: u64,
    /// Leaves of the accounts index as a share of the database, per mille (142 in a pgbench database).
    pub index_permille: u32,
}

impl PgLayout {
    /// Pages of the branches table (TPC-B: one branch row per 100,000 accounts).
    fn branches(&self) -> u32 {
        1
    }

    /// Pages of the tellers table (10 rows per branch, ~1/30000 of the accounts heap).
    fn tellers(&self) -> u32 {
        (self.db_pages / 35_000).max(1)
    }

    /// Leaves of the accounts primary key: `index_permille` of the database
    /// (14.2% in a pgbench database: an int4 btree entry is ~1/6 of an accounts row).
    fn leaves(&self) -> u32 {
        (self.db_pages as u64 * self.index_permille as u64 / 1000).max(1) as u32
    }

    /// Internal pages of the accounts index (fan-out ~300 per page), the root apart.
    fn internal(&self) -> u32 {
        self.leaves().div_ceil(300)
    }

    /// First page of the accounts index (its root).
    fn index_start(&self) -> u32 {
        self.branches() + self.tellers()
    }

    /// First page of the accounts heap.
    fn heap_start(&self) -> u32 {
        self.index_start() + 1 + self.internal() + self.leaves()
    }

    /// Pages of the accounts heap.
    fn heap(&self) -> u32 {
        self.db_pages.saturating_sub(self.heap_start()).max(1)
    }
}

/// postgres's shared buffer pool, shared by every client: block -> buffer
/// mapping, clock sweep with usage counts, dirty bits.
///
/// SIM-CHOICE: blocks are numbered across the database file and then the
/// history file; buffers are never pinned across transactions; there are no
/// checkpoints or background writer: a dirty buffer is written when it is
/// evicted (its `write()` dirties the page cache, which the flusher writes back).
pub struct BufferPool {
    buf_of: Vec<u32>,
    block_of: Vec<u32>,
    usage: Vec<u8>,
    dirty: Vec<bool>,
    hand: u32,
}

impl BufferPool {
    /// An empty pool of `buffers` buffers for `blocks` blocks.
    pub fn new(buffers: u32, blocks: u32) -> BufferPool {
        BufferPool {
            buf_of: vec![NONE; blocks as usize],
            block_of: vec![NONE; buffers as usize],
            usage: vec![0; buffers as usize],
            dirty: vec![false; buffers as usize],
            hand: 0,
        }
    }

    /// The clock sweep (`StrategyGetBuffer`): the first free buffer or the
    /// first whose usage count has dropped to zero.
    fn victim(&mut self) -> u32 {
        let n = self.block_of.len() as u32;
        loop {
            let b = self.hand;
            self.hand = (self.hand + 1) % n;
            if self.block_of[b as usize] == NONE || self.usage[b as usize] == 0 {
                return b;
            }
            self.usage[b as usize] -= 1;
        }
    }
}

/// One pgbench client: TPC-B-like transactions back to back.
///
/// A transaction (pgbench's built-in script): look the account up through
/// the accounts index (root, an internal page, a leaf) and update its heap
/// page; update a teller's and a branch's page; append a history row; append
/// the transaction's WAL records (`write()` at the WAL's end). Accounts,
/// tellers and branches are drawn uniformly, as pgbench's `random()`.
///
/// SIM-CHOICE: a transaction's buffer lookups are decided when it begins (one
/// client's transaction does not see another's evictions made meanwhile); the
/// commit's WAL flush (`fsync`) is not waited for: the WAL pages are written
/// back by the flusher like any dirty page.
pub struct PgClient {
    layout: PgLayout,
    pool: Rc<RefCell<BufferPool>>,
    /// History rows appended so far by all clients, and the WAL's end in bytes (shared).
    tail: Rc<RefCell<(u64, u64)>>,
    rng: SimRng,
    txns_left: u64,
    /// Steps of the transaction in progress, next at `pos`.
    steps: Vec<Step>,
    pos: usize,
    /// Written before the transactions: anonymous pages (the idle processes',
    /// by one client) and this client's share of the database file (`pgbench -i`).
    prelude: Prelude,
    prelude_pos: u32,
}

/// What a client writes before its transactions.
#[derive(Clone, Copy, Debug, Default)]
pub struct Prelude {
    /// Anonymous memory to write once: region and pages.
    pub anon: Option<(RegionId, u32)>,
    /// Database pages to write with `write()`: first page and count.
    pub db: (u32, u32),
}

/// History rows per page (a pgbench_history row is ~50 bytes).
const HISTORY_ROWS_PER_PAGE: u64 = 80;

impl PgClient {
    /// A client running `txns` transactions; `prelude` is written once before them.
    pub fn new(
        layout: PgLayout,
        pool: Rc<RefCell<BufferPool>>,
        tail: Rc<RefCell<(u64, u64)>>,
        txns: u64,
        prelude: Prelude,
        rng: SimRng,
    ) -> PgClient {
        PgClient {
            layout,
            pool,
            tail,
            rng,
            txns_left: txns,
            steps: Vec::with_capacity(32),
            pos: 0,
            prelude,
            prelude_pos: 0,
        }
    }

    /// Appends the steps of one access to block `block` (of `file`, page `page`) through the pool.
    fn block(&mut self, block: u32, file: FileId, page: u32, write: bool, new_page: bool) {
        let l = &self.layout;
        let mut pool = self.pool.borrow_mut();
        let mut b = pool.buf_of[block as usize];
        if b == NONE {
            b = pool.victim();
            let old = pool.block_of[b as usize];
            if old != NONE {
                if pool.dirty[b as usize] {
                    let (f, p) = if old < l.db_pages { (l.db, old) } else { (l.history, old - l.db_pages) };
                    self.steps.push(Step::Access(Access::FileWrite { file: f, page: p }));
                }
                pool.buf_of[old as usize] = NONE;
            }
            if !new_page {
                self.steps.push(Step::Access(Access::FileRead { file, page }));
            }
            pool.buf_of[block as usize] = b;
            pool.block_of[b as usize] = block;
            pool.usage[b as usize] = 0;
            pool.dirty[b as usize] = false;
            // Reading the block into the buffer stores to it.
            self.steps.push(Step::Access(Access::Mem { region: l.buffers, page: b, write: true }));
        }
        let u = &mut pool.usage[b as usize];
        *u = (*u + 1).min(MAX_USAGE);
        pool.dirty[b as usize] |= write;
        self.steps.push(Step::Access(Access::Mem { region: l.buffers, page: b, write }));
    }

    /// Builds the next transaction's steps.
    fn transaction(&mut self) {
        self.steps.clear();
        self.pos = 0;
        let l = self.layout;
        self.steps.push(Step::TxnBegin);
        if l.cpu_ns > 0 {
            self.steps.push(Step::Think(l.cpu_ns));
        }
        // The account: index descent, then the heap page (read and updated).
        let heap_page = self.rng.below(l.heap());
        let leaf = (heap_page as u64 * l.leaves() as u64 / l.heap() as u64) as u32;
        let internal = leaf / 300;
        let root = l.index_start();
        self.block(root, l.db, root, false, false);
        self.block(root + 1 + internal, l.db, root + 1 + internal, false, false);
        let leaf_page = root + 1 + l.internal() + leaf;
        self.block(leaf_page, l.db, leaf_page, false, false);
        let heap = l.heap_start() + heap_page;
        self.block(heap, l.db, heap, true, false);
        // Teller and branch.
        let teller = l.branches() + self.rng.below(l.tellers());
        self.block(teller, l.db, teller, true, false);
        let branch = self.rng.below(l.branches());
        self.block(branch, l.db, branch, true, false);
        // History append and WAL.
        let (row, wal_start) = {
            let mut t = self.tail.borrow_mut();
            let v = *t;
            t.0 += 1;
            t.1 += l.wal_bytes as u64;
            v
        };
        let hpage = ((row / HISTORY_ROWS_PER_PAGE) % l.history_pages as u64) as u32;
        self.block(l.db_pages + hpage, l.history, hpage, true, row % HISTORY_ROWS_PER_PAGE == 0);
        let (first, last) = (wal_start / mm::PAGE_SIZE, (wal_start + l.wal_bytes.max(1) as u64 - 1) / mm::PAGE_SIZE);
        for p in first..=last {
            self.steps.push(Step::Access(Access::FileWrite { file: l.wal, page: (p % l.wal_pages as u64) as u32 }));
        }
        self.steps.push(Step::TxnEnd);
    }
}

impl Program for PgClient {
    fn next(&mut self) -> Step {
        let anon = self.prelude.anon.map_or(0, |a| a.1);
        if self.prelude_pos < anon + self.prelude.db.1 {
            self.prelude_pos += 1;
            let i = self.prelude_pos - 1;
            return Step::Access(match self.prelude.anon {
                Some((region, pages)) if i < pages => Access::Mem { region, page: i, write: true },
                _ => Access::FileWrite { file: self.layout.db, page: self.prelude.db.0 + i - anon },
            });
        }
        if self.pos >= self.steps.len() {
            if self.txns_left == 0 {
                return Step::Done;
            }
            self.txns_left -= 1;
            self.transaction();
        }
        self.pos += 1;
        self.steps[self.pos - 1]
    }
}

/// Blocks the pool must map: the database file's pages, then the history file's.
pub fn pool_blocks(layout: &PgLayout) -> u32 {
    layout.db_pages + layout.history_pages
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout() -> PgLayout {
        PgLayout {
            db: FileId(0),
            db_pages: 1000,
            history: FileId(1),
            history_pages: 10,
            wal: FileId(2),
            wal_pages: 4,
            buffers: RegionId(0),
            nr_buffers: 8,
            wal_bytes: 6000,
            cpu_ns: 0,
            index_permille: 142,
        }
    }

    fn run_txn(c: &mut PgClient) -> Vec<Step> {
        let mut v = vec![c.next()];
        while *v.last().unwrap() != Step::TxnEnd {
            v.push(c.next());
        }
        v
    }

    #[test]
    fn layout_partitions_the_database() {
        let l = layout();
        assert_eq!((l.branches(), l.tellers(), l.leaves(), l.internal()), (1, 1, 142, 1));
        assert_eq!(l.index_start(), 2);
        assert_eq!(l.heap_start(), 2 + 1 + 1 + 142);
        assert_eq!(l.heap_start() + l.heap(), 1000);
    }

    #[test]
    fn first_transaction_misses_then_hot_blocks_hit() {
        let l = layout();
        let pool = Rc::new(RefCell::new(BufferPool::new(l.nr_buffers, pool_blocks(&l))));
        let tail = Rc::new(RefCell::new((0, 0)));
        let mut c = PgClient::new(l, pool.clone(), tail.clone(), 2, Prelude::default(), SimRng::new(1, 0));
        let t1 = run_txn(&mut c);
        let reads = |t: &[Step]| t.iter().filter(|s| matches!(s, Step::Access(Access::FileRead { .. }))).count();
        let wal = |t: &[Step]| {
            t.iter().filter(|s| matches!(s, Step::Access(Access::FileWrite { file: FileId(2), .. }))).count()
        };
        // Root, internal, leaf, heap, teller, branch read from the file; the new history page is not.
        assert_eq!(reads(&t1), 6);
        // 6000 WAL bytes from offset 0 cover pages 0 and 1.
        assert_eq!(wal(&t1), 2);
        assert_eq!(t1[0], Step::TxnBegin);
        let t2 = run_txn(&mut c);
        // Root, internal (one for 142 leaves), teller, branch and the history page are buffered now.
        assert!(reads(&t2) <= 2, "{t2:?}");
        // 6000..12000 covers pages 1 and 2.
        assert_eq!(wal(&t2), 2);
        assert_eq!(*tail.borrow(), (2, 12_000));
        assert_eq!(c.next(), Step::Done);
    }

    #[test]
    fn prelude_writes_anon_then_the_database_share() {
        let l = layout();
        let pool = Rc::new(RefCell::new(BufferPool::new(l.nr_buffers, pool_blocks(&l))));
        let prelude = Prelude { anon: Some((RegionId(5), 2)), db: (10, 2) };
        let mut c = PgClient::new(l, pool, Rc::new(RefCell::new((0, 0))), 0, prelude, SimRng::new(1, 0));
        let steps: Vec<Step> = std::iter::from_fn(|| Some(c.next())).take(5).collect();
        let m = |page| Step::Access(Access::Mem { region: RegionId(5), page, write: true });
        let w = |page| Step::Access(Access::FileWrite { file: FileId(0), page });
        assert_eq!(steps, vec![m(0), m(1), w(10), w(11), Step::Done]);
    }

    #[test]
    fn dirty_victims_are_written_back() {
        let mut l = layout();
        l.nr_buffers = 3;
        let pool = Rc::new(RefCell::new(BufferPool::new(l.nr_buffers, pool_blocks(&l))));
        let mut c = PgClient::new(l, pool, Rc::new(RefCell::new((0, 0))), 1, Prelude::default(), SimRng::new(1, 0));
        let t = run_txn(&mut c);
        // Seven blocks through three buffers: the dirty heap, teller and branch
        // blocks are among the evicted, so some database page is written.
        assert!(t.iter().any(|s| matches!(s, Step::Access(Access::FileWrite { file: FileId(0), .. }))), "{t:?}");
    }
}
