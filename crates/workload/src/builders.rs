//! Build functions of the single-pattern workloads (`anon`, `fileloop`,
//! `hotcold`, `vmscale-*`), the seed benchmarks (`ebizzy`, `linpack`,
//! `memcachetest`, `parallelio`, `pgbench`); seed 002's cases are in `cases`.

use crate::ctx::{fill_share, sweep, Ctx};
use crate::ebizzy::{Ebizzy, EbizzyShape};
use crate::iobench::FileCopy;
use crate::memcache::{Items, Leak, MemcacheTest, SlabLayout};
use crate::pgbench::{self, BufferPool, PgClient, PgLayout, Prelude};
use crate::phases::{Phase, Target};
use crate::spec::SpecError;
use simrng::Sampler;
use std::cell::RefCell;
use std::rc::Rc;

pub(crate) fn build_anon(c: &mut Ctx) -> Result<(), SpecError> {
    let pages = c.pages("size")?;
    let pattern = c.choice("pattern", &["idle", "seq", "uniform", "zipf"])?;
    let write = c.int("write", 0, 1)? == 1;
    let threads = c.int("threads", 1, 1024)?;
    let passes = c.int("passes", 0, 1 << 20)? as u32;
    let ops = c.int("ops", 0, u64::MAX >> 1)?;
    let think_ns = c.int("think_ns", 0, 1 << 40)?;
    let sampler = c.sampler(pattern, pages)?;
    let region = c.builder.add_anon_region(pages);
    let t = Target::Mem(region);
    c.spawn(threads, |i| {
        let mut ph = fill_share(t, pages, threads, i);
        match pattern {
            "idle" => {}
            "seq" => ph.push(sweep(t, 0, pages, passes, write)),
            _ => ph.push(Phase::Random { target: t, sampler: sampler.clone(), stride: 1, ops, write, think_ns }),
        }
        ph
    })
}

pub(crate) fn build_ebizzy(c: &mut Ctx) -> Result<(), SpecError> {
    let pages = c.pages("size")?;
    let chunk = c.pages("chunk")?.min(pages);
    let copy = c.int("copy", 0, 1)? == 1;
    let threads = c.int("threads", 1, 1024)?;
    let reads = c.int("ops", 0, u64::MAX >> 1)?;
    let sampler = Rc::new(Sampler::zipf(pages.div_ceil(chunk), c.float("alpha", 0.0, 10.0)?, &mut c.rng(999)));
    let mem = c.builder.add_anon_region(pages);
    let share = pages.div_ceil(threads as u32);
    for t in 0..threads {
        let start = (t as u32).saturating_mul(share).min(pages);
        let copy = copy.then(|| c.builder.add_anon_region(chunk));
        let shape = EbizzyShape { mem, pages, chunk, copy, fill: (start, share.min(pages - start)), reads };
        let program = Box::new(Ebizzy::new(shape, sampler.clone(), c.rng(t)));
        c.add_program_after_start(t, program)?;
    }
    Ok(())
}

pub(crate) fn build_fileloop(c: &mut Ctx) -> Result<(), SpecError> {
    let pages = c.pages("size")?;
    let pattern = c.choice("pattern", &["seq", "uniform", "zipf"])?;
    let threads = c.int("threads", 1, 1024)?;
    let passes = c.int("passes", 0, 1 << 20)? as u32;
    let ops = c.int("ops", 0, u64::MAX >> 1)?;
    let files = c.int("files", 1, 1 << 20)? as u32;
    if files > 1 && pattern != "seq" {
        return Err(c.bad("files", "1 unless pattern=seq"));
    }
    let sampler = c.sampler(pattern, pages)?;
    if files > 1 {
        // Many small files, each opened, read and closed in turn: a dentry and an inode each.
        let each = (pages / files).max(1);
        let targets: Vec<Target> = (0..files).map(|_| Target::File(c.builder.add_file(each))).collect();
        return c.spawn(threads, |_| {
            (0..passes).flat_map(|_| targets.iter().map(|&t| sweep(t, 0, each, 1, false))).collect()
        });
    }
    let t = Target::File(c.builder.add_file(pages));
    c.spawn(threads, |_| match pattern {
        "seq" => vec![sweep(t, 0, pages, passes, false)],
        _ => vec![Phase::Random { target: t, sampler: sampler.clone(), stride: 1, ops, write: false, think_ns: 0 }],
    })
}

pub(crate) fn build_hotcold(c: &mut Ctx) -> Result<(), SpecError> {
    let cold = c.pages("cold")?;
    let hot1 = c.pages("hot1")?;
    let hot2 = c.pages("hot2")?;
    let step = c.pages("step")?.min(cold);
    let activate = c.int("activate", 0, 1000)? as u32;
    let rounds = c.int("rounds", 0, 1 << 20)? as u32;
    let (rc, r1, r2) =
        (c.builder.add_anon_region(cold), c.builder.add_anon_region(hot1), c.builder.add_anon_region(hot2));
    let (tc, t1, t2) = (Target::Mem(rc), Target::Mem(r1), Target::Mem(r2));
    c.spawn(1, |_| {
        // Seed 004: 1. allocate cold; 2. allocate hot-1; 3. activate hot-1;
        // 4. allocate hot-2; then 5. access a step of cold, 6. access hot-2, repeat.
        let mut ph = vec![sweep(tc, 0, cold, 1, true), sweep(t1, 0, hot1, 1, true)];
        if activate > 0 {
            ph.push(sweep(t1, 0, hot1, activate, false));
        }
        ph.push(sweep(t2, 0, hot2, 1, true));
        let windows = cold / step;
        for round in 0..rounds {
            let start = (round % windows) * step;
            ph.push(sweep(tc, start, step, 1, false));
            ph.push(sweep(t2, 0, hot2, 1, false));
        }
        ph
    })
}

pub(crate) fn build_memcachetest(c: &mut Ctx) -> Result<(), SpecError> {
    let pool = c.pages("size")?;
    let ops = c.int("ops", 0, u64::MAX >> 1)?;
    let set_pct = c.int("set_pct", 0, 100)? as u32;
    let service_ns = c.int("service_us", 0, 1 << 30)? * 1000;
    let value = c.int("value", 0, 1 << 20)?;
    let leak_bytes = c.int("leak", 0, 1 << 20)?;
    let items = match value {
        0 if c.int("items", 0, 0).is_err() => return Err(c.bad("items", "0 unless value is set")),
        0 => Items::Pages(pool),
        _ => {
            // mmtests' MEMCACHETEST_ITEMS: the pool over the value plus 4096.
            let n = match c.int("items", 0, 1 << 31)? {
                0 => (pool as u64 * mm::PAGE_SIZE / (value + 4096)).max(1),
                n => n,
            };
            let layout = SlabLayout::new(value, n).ok_or_else(|| c.bad("value", "a value that fits a slab page"))?;
            if layout.pages() > 1 << 31 {
                return Err(c.bad("items", "items whose slabs take at most 8T"));
            }
            Items::Slabs(layout)
        }
    };
    let region = c.builder.add_anon_region(match items {
        Items::Pages(n) => n,
        Items::Slabs(l) => l.pages() as u32,
    });
    let leak = (leak_bytes > 0).then(|| Leak {
        region: c.builder.add_anon_region(MemcacheTest::leak_pages(ops, leak_bytes)),
        bytes: leak_bytes,
    });
    let rng = c.rng(0);
    c.spawn_program(Box::new(MemcacheTest::new(region, items, ops, (set_pct, service_ns), leak, rng)))
}

pub(crate) fn build_parallelio(c: &mut Ctx) -> Result<(), SpecError> {
    let pages = c.pages("size")?;
    let src = match c.choice("source", &["zero", "file"])? {
        "file" => Some(c.builder.add_file(pages)),
        _ => None,
    };
    let dst = c.builder.add_file(pages);
    c.spawn_program(Box::new(FileCopy::new(src, dst, pages)))
}

/// One region per process, `total` pages shared out.
fn process_regions(c: &mut Ctx, total: u32, procs: u64) -> Vec<(Target, u32)> {
    let each = (total as u64).div_ceil(procs).max(1) as u32;
    (0..procs).map(|_| (Target::Mem(c.builder.add_anon_region(each)), each)).collect()
}

pub(crate) fn build_vmscale_seq(c: &mut Ctx) -> Result<(), SpecError> {
    let total = c.pages("size")?;
    let procs = c.int("procs", 1, 1024)?;
    let rounds = c.int("rounds", 1, 1 << 20)? as u32;
    let words = c.int("words", 1, 1 << 20)? as u32;
    let regions = process_regions(c, total, procs);
    c.spawn(procs, |i| {
        let (target, len) = regions[i as usize];
        vec![Phase::Sweep { target, start: 0, len, passes: rounds, write: true, words }]
    })
}

pub(crate) fn build_vmscale_rand(c: &mut Ctx) -> Result<(), SpecError> {
    let total = c.pages("size")?;
    let procs = c.int("procs", 1, 1024)?;
    let ops = c.int("ops", 0, u64::MAX >> 1)?;
    let think_ns = c.int("think_ns", 0, 1 << 40)?;
    let regions = process_regions(c, total, procs);
    c.spawn(procs, |i| {
        let (t, n) = regions[i as usize];
        // SIM-CHOICE: vm-scalability's random case writes without a first
        // sequential fill; the first touch of each page is where it lands.
        vec![Phase::Random { target: t, sampler: Rc::new(Sampler::Uniform(n)), stride: 1, ops, write: true, think_ns }]
    })
}

pub(crate) fn build_linpack(c: &mut Ctx) -> Result<(), SpecError> {
    let pages = c.pages("size")?;
    let nb = c.int("blocks", 1, 256)? as u32;
    let block = pages.div_ceil(nb * nb).max(1);
    let region = c.builder.add_anon_region(block * nb * nb);
    let t = Target::Mem(region);
    c.spawn(1, |_| {
        let at = |i: u32, j: u32| sweep(t, (i * nb + j) * block, block, 1, true);
        // Setup: write the whole matrix once.
        let mut ph = vec![sweep(t, 0, block * nb * nb, 1, true)];
        // Right-looking blocked LU: factor panel k, then update the trailing matrix.
        for k in 0..nb {
            ph.extend((k..nb).map(|i| at(i, k)));
            for j in k + 1..nb {
                ph.push(at(k, j));
                ph.extend((k + 1..nb).map(|i| at(i, j)));
            }
        }
        // Teardown: the solution pass reads the factors back once.
        ph.push(sweep(t, 0, block * nb * nb, 1, false));
        ph
    })
}

pub(crate) fn build_pgbench(c: &mut Ctx) -> Result<(), SpecError> {
    let db_pages = c.pages("db")?;
    let index_permille = (c.float("index", 0.0, 0.9)? * 1000.0).round() as u32;
    let nr_buffers = c.pages("buffers")?;
    let idle = c.pages("idle")?;
    let wal_pages = c.pages("wal")?;
    let wal_bytes = c.int("wal_bytes", 0, 1 << 24)? as u32;
    let cpu_ns = c.int("cpu_us", 0, 1 << 30)? * 1000;
    let clients = c.int("clients", 1, 1024)?;
    let txns = c.int("txns", 0, 1 << 40)?;
    let history_pages = (clients * txns).div_ceil(80).clamp(1, 1 << 31) as u32;
    let idle_region = c.builder.add_anon_region(idle);
    let buffers = c.builder.add_anon_region(nr_buffers);
    let (db, history, wal) =
        (c.builder.add_file(db_pages), c.builder.add_file(history_pages), c.builder.add_file(wal_pages));
    let layout = PgLayout {
        db,
        db_pages,
        history,
        history_pages,
        wal,
        wal_pages,
        buffers,
        nr_buffers,
        wal_bytes,
        cpu_ns,
        index_permille,
    };
    let pool = Rc::new(RefCell::new(BufferPool::new(nr_buffers, pgbench::pool_blocks(&layout))));
    let tail = Rc::new(RefCell::new((0, 0)));
    let init = c.int("init", 0, 1)? == 1;
    let share = db_pages.div_ceil(clients as u32);
    for t in 0..clients {
        // SIM-CHOICE: the idle processes' memory is written once by client 0, and
        // `pgbench -i` is each client writing its share of the database file,
        // before its transactions.
        let start = (t as u32).saturating_mul(share).min(db_pages);
        let db = if init { (start, share.min(db_pages - start)) } else { (0, 0) };
        let prelude = Prelude { anon: (t == 0).then_some((idle_region, idle)), db };
        let client = PgClient::new(layout, pool.clone(), tail.clone(), txns, prelude, c.rng(t));
        c.add_program_after_start(t, Box::new(client))?;
    }
    Ok(())
}
