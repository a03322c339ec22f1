//! The table of built-in workloads, their parameters and how each is built.

use crate::cases;
use crate::ebizzy::{Ebizzy, EbizzyShape};
use crate::iobench::{FileCopy, MemcacheTest};
use crate::pgbench::{self, BufferPool, PgClient, PgLayout, Prelude};
use crate::phases::{Phase, PhaseProgram, Target};
use crate::spec::{SpecError, WorkloadSpec};
use engine::SimBuilder;
use simrng::Sampler;
use simrng::SimRng;
use std::cell::RefCell;
use std::rc::Rc;

/// One parameter of a workload.
pub struct Param {
    /// Key.
    pub key: &'static str,
    /// Default value.
    pub default: &'static str,
    /// Meaning and format.
    pub help: &'static str,
}

/// A built-in workload.
pub struct Workload {
    /// Name.
    pub name: &'static str,
    /// What it models.
    pub summary: &'static str,
    /// Parameters with defaults.
    pub params: &'static [Param],
    build: fn(&mut Ctx) -> Result<(), SpecError>,
}

const fn p(key: &'static str, default: &'static str, help: &'static str) -> Param {
    Param { key, default, help }
}

pub(crate) const SIZE_HELP: &str = "size: absolute (96M, 1G) or relative to memory (0.5x)";

/// All built-in workloads, alphabetically.
pub const WORKLOADS: &[Workload] = &[
    Workload {
        name: "anon",
        summary: "one process's anonymous memory: touched once and left idle, or swept / sampled repeatedly",
        params: &[
            p("size", "0.5x", SIZE_HELP),
            p("pattern", "seq", "idle (touch once, then nothing), seq, uniform or zipf"),
            p("alpha", "1.0", "zipf exponent (pattern=zipf)"),
            p("passes", "3", "sweeps over the region (pattern=seq)"),
            p("ops", "1000000", "random accesses per thread (pattern=uniform/zipf)"),
            p("write", "0", "1: accesses after the first touch are stores"),
            p("threads", "1", "threads sharing the region"),
            p("start_ms", "0", "virtual time before the workload starts"),
        ],
        build: build_anon,
    },
    Workload {
        name: "ebizzy",
        summary: "seed 004: threads copying zipf(alpha)-popular chunks of an anon region into their own buffer, after it is filled",
        params: &[
            p("size", "1.5x", SIZE_HELP),
            p("alpha", "0.7", "zipf exponent of chunk popularity: 0.1 ~ uniform, 1.3 = few hot chunks"),
            p("chunk", "512K", "chunk size (ebizzy -s; its default 512K); 4K = page-sized chunks"),
            p("copy", "1", "1: each chunk page read is stored to the thread's copy buffer (memcpy); 0: reads only"),
            p("threads", "1", "threads; each fills its share of the region, then copies chunks from all of it"),
            p("ops", "1000000", "chunk pages read per thread (a chunk copy reads chunk/4K pages)"),
            p("start_ms", "0", "virtual time before the workload starts"),
        ],
        build: build_ebizzy,
    },
    Workload {
        name: "fileloop",
        summary: "reads of a file through a file descriptor: repeated sequential passes, or uniform/zipf",
        params: &[
            p("size", "1.2x", SIZE_HELP),
            p("pattern", "seq", "seq, uniform or zipf"),
            p("alpha", "1.0", "zipf exponent (pattern=zipf)"),
            p("passes", "3", "sequential passes (pattern=seq)"),
            p("ops", "1000000", "random reads per thread (pattern=uniform/zipf)"),
            p("threads", "1", "reader threads"),
            p("start_ms", "0", "virtual time before the workload starts"),
        ],
        build: build_fileloop,
    },
    Workload {
        name: "hotcold",
        summary: "seed 004's scenario: cold memory, hot-1 activated, hot-2, then cold and hot-2 alternately",
        params: &[
            p("cold", "1.83x", "cold region (seed: 512M of ~280M usable)"),
            p("hot1", "0.343x", "hot-1 region, activated early (seed: 96M)"),
            p("hot2", "0.343x", "hot-2 region, re-accessed every round (seed: 96M)"),
            p("step", "0.457x", "cold memory read per round (seed: 128M)"),
            p("activate", "2", "extra passes over hot-1 to activate it"),
            p("rounds", "10", "cold/hot-2 rounds"),
            p("start_ms", "0", "virtual time before the workload starts"),
        ],
        build: build_hotcold,
    },
    Workload {
        name: "linpack",
        summary: "seed 001: blocked LU factorisation of a dense matrix larger than memory (setup, panel and trailing updates)",
        params: &[
            p("size", "1.2x", SIZE_HELP),
            p("blocks", "16", "blocks per matrix side (block-major layout)"),
            p("start_ms", "0", "virtual time before the workload starts"),
        ],
        build: build_linpack,
    },
    Workload {
        name: "lru-gen",
        summary: "writes `+`/`-` commands to /sys/kernel/debug/lru_gen (MGLRU aging and eviction requests) at set times",
        params: &[
            p("cmds", "+ 0 0 3", "commands separated by `;`: `+ 0 0 MAX_GEN [SWAPPINESS [FORCE_SCAN]]`, `- 0 0 MIN_GEN [SWAPPINESS [NR_PAGES]]`"),
            p("start_ms", "0", "virtual time of the first write"),
            p("every_ms", "0", "interval between writes"),
            p("count", "1", "number of writes"),
        ],
        build: cases::build_lru_gen,
    },
    Workload {
        name: "pagecache-heavy",
        summary: "seed 002 review: a file streamed through read(), another re-read with zipf popularity, a small anon workingset",
        params: &[
            p("stream", "2.0x", "file streamed sequentially (SIZE)"),
            p("passes", "2", "passes over the streamed file"),
            p("reread", "0.5x", "file re-read with zipf popularity (SIZE)"),
            p("alpha", "0.9", "zipf exponent of the re-read file"),
            p("anon", "0.15x", "anonymous workingset touched uniformly (SIZE)"),
            p("ops", "1000000", "random accesses of the re-reader and of the anon thread"),
            p("start_ms", "0", "virtual time before the workload starts"),
        ],
        build: cases::build_pagecache_heavy,
    },
    Workload {
        name: "memcachetest",
        summary: "seed 003: memcached-like store in anon memory, filled by sets, then uniform gets/sets; ops/s is the score",
        params: &[
            p("size", "0.4x", SIZE_HELP),
            p("ops", "300000", "operations after the fill"),
            p("set_pct", "10", "percent of operations that are sets (stores)"),
            p("service_us", "40", "CPU time per operation outside memory (request handling), microseconds"),
            p("start_ms", "0", "virtual time before the workload starts"),
        ],
        build: build_memcachetest,
    },
    Workload {
        name: "parallelio",
        summary: "seed 003: mmtests parallelio's background IO: a file of a given size written (from zeroes, or copied from another file)",
        params: &[
            p("size", "1.0x", SIZE_HELP),
            p("source", "zero", "zero (dd from /dev/zero, as mmtests) or file (read a source file page by page)"),
            p("start_ms", "0", "virtual time before the copy starts"),
        ],
        build: build_parallelio,
    },
    Workload {
        name: "pgbench",
        summary: "seed 000: pgbench TPC-B clients (index lookup, account/teller/branch updates, history and WAL appends) through shared buffers in anon memory, beside idle anon; tps and transaction latency are the score",
        params: &[
            p("db", "0.8x", "database file: branches, tellers, accounts index and heap (seed: 5.6G of 7G)"),
            p("index", "0.142", "accounts index leaves as a share of the database (0.142 in a pgbench database)"),
            p("buffers", "0.143x", "shared buffers, anonymous, shared by every client (seed: 1G)"),
            p("idle", "0.15x", "anonymous memory of idle processes, written once by client 0 (seed: a little over 1G)"),
            p("wal", "0.143x", "WAL size, written sequentially and reused (postgres max_wal_size 1G of 7G)"),
            p("wal_bytes", "8600", "WAL bytes per transaction (records plus a full-page image of the account page)"),
            p("cpu_us", "300", "CPU time per transaction outside memory accesses, microseconds"),
            p("clients", "8", "client threads"),
            p("txns", "20000", "transactions per client"),
            p("init", "1", "1: the clients first write the database file (pgbench -i), leaving it in the page cache"),
            p("start_ms", "0", "virtual time before the workload starts"),
        ],
        build: build_pgbench,
    },
    Workload {
        name: "shared-anon",
        summary: "seed 002 review (worst case for page-table walks): one big shared mapping touched by many processes at sparse offsets",
        params: &[
            p("size", "96x", "the shared memory (SIZE); only every `stride`-th page is touched"),
            p("procs", "8", "processes mapping all of it, one thread each"),
            p("stride", "64", "distance between touched pages: 1 = dense, 64 = 8 PTEs per 2 MiB table, 512 = one"),
            p("ops", "200000", "random accesses per process"),
            p("start_ms", "0", "virtual time before the workload starts"),
        ],
        build: cases::build_shared_anon,
    },
    Workload {
        name: "tabs",
        summary: "seed 002: browser tabs (processes with hot/cold anon heaps and a shared executable), zipf tab switching, tabs closing/opening",
        params: &[
            p("tabs", "24", "tabs (processes)"),
            p("heap", "0.09x", "anon heap per tab (SIZE)"),
            p("hot", "0.25", "hot fraction of each heap"),
            p("exe", "0.12x", "shared executable mapped by every tab (SIZE)"),
            p("exec", "300", "per mille of a visit's accesses that run code from the executable"),
            p("alpha", "1.1", "zipf exponent of tab popularity"),
            p("visits", "1500", "tab visits per thread"),
            p("ops", "3000", "accesses per visit"),
            p("think_us", "2000", "think time before each visit"),
            p("churn", "20", "close the least popular tab and open a new one every N visits (0 = never)"),
            p("threads", "2", "browser windows; each has its own share of the tabs"),
            p("start_ms", "0", "virtual time before the workload starts"),
        ],
        build: cases::build_tabs,
    },
    Workload {
        name: "vmscale-rand",
        summary: "seed 001: vm-scalability's random swap case: processes writing random pages of their own regions",
        params: &[
            p("size", "0.94x", "total of all processes' regions (seed: 30G on 32G)"),
            p("procs", "8", "processes, one region each"),
            p("ops", "10000000", "page writes per process"),
            p("think_ns", "0", "computation between writes, ns (bounds the access rate of a resident process)"),
            p("start_ms", "0", "virtual time before the workload starts"),
        ],
        build: build_vmscale_rand,
    },
    Workload {
        name: "vmscale-seq",
        summary: "seed 001: vm-scalability's sequential swap case: processes writing their regions in order, round after round",
        params: &[
            p("size", "1.56x", "total of all processes' regions (seed: 50G on 32G)"),
            p("procs", "4", "processes, one region each"),
            p("rounds", "100", "sequential write passes per process (the first one swaps out)"),
            p("start_ms", "0", "virtual time before the workload starts"),
        ],
        build: build_vmscale_seq,
    },
];

/// Resolved parameters of one workload instance.
pub(crate) struct Ctx<'a> {
    workload: &'static Workload,
    values: Vec<String>,
    pub(crate) builder: &'a mut SimBuilder,
    seed: u64,
    index: u64,
}

impl Ctx<'_> {
    pub(crate) fn raw(&self, key: &str) -> &str {
        let i = self.workload.params.iter().position(|p| p.key == key).expect("workload reads a declared parameter");
        &self.values[i]
    }

    pub(crate) fn bad(&self, key: &str, expected: impl Into<String>) -> SpecError {
        SpecError::BadValue {
            workload: self.workload.name.into(),
            key: key.into(),
            value: self.raw(key).into(),
            expected: expected.into(),
        }
    }

    /// A size in pages.
    pub(crate) fn pages(&self, key: &str) -> Result<u32, SpecError> {
        let v = self.raw(key);
        let mem = self.builder.memory_pages() as f64;
        let pages = if let Some(x) = v.strip_suffix('x') {
            let f: f64 = x.parse().map_err(|_| self.bad(key, SIZE_HELP))?;
            if !(f > 0.0 && f.is_finite()) {
                return Err(self.bad(key, "a positive size"));
            }
            (f * mem).round()
        } else {
            (engine::config::parse_size(v).map_err(|e| self.bad(key, e))? / mm::PAGE_SIZE) as f64
        };
        if pages < 1.0 || pages > (1u64 << 31) as f64 {
            return Err(self.bad(key, "a size between 4K and 8T"));
        }
        Ok(pages as u32)
    }

    pub(crate) fn int(&self, key: &str, lo: u64, hi: u64) -> Result<u64, SpecError> {
        let n: u64 = self.raw(key).parse().map_err(|_| self.bad(key, format!("an integer in {lo}..={hi}")))?;
        if n < lo || n > hi {
            return Err(self.bad(key, format!("an integer in {lo}..={hi}")));
        }
        Ok(n)
    }

    pub(crate) fn float(&self, key: &str, lo: f64, hi: f64) -> Result<f64, SpecError> {
        let x: f64 = self.raw(key).parse().map_err(|_| self.bad(key, format!("a number in {lo}..={hi}")))?;
        if !(lo..=hi).contains(&x) {
            return Err(self.bad(key, format!("a number in {lo}..={hi}")));
        }
        Ok(x)
    }

    pub(crate) fn choice(&self, key: &str, options: &[&'static str]) -> Result<&'static str, SpecError> {
        let v = self.raw(key);
        options
            .iter()
            .copied()
            .find(|o| *o == v)
            .ok_or_else(|| self.bad(key, format!("one of: {}", options.join(", "))))
    }

    pub(crate) fn rng(&self, stream: u64) -> SimRng {
        SimRng::new(self.seed, self.index * 1_000_003 + stream)
    }

    /// Adds `threads` threads; `phases(t)` gives thread `t`'s phases (after the start delay).
    pub(crate) fn spawn(&mut self, threads: u64, mut phases: impl FnMut(u64) -> Vec<Phase>) -> Result<(), SpecError> {
        let start_ns = self.int("start_ms", 0, 1 << 40)? * 1_000_000;
        for t in 0..threads {
            let mut ph = Vec::new();
            if start_ns > 0 {
                ph.push(Phase::Think(start_ns));
            }
            ph.extend(phases(t));
            let name = format!("{}#{}/{}", self.workload.name, self.index, t);
            let program = PhaseProgram::new(ph, self.rng(t));
            self.builder.add_thread(name, Box::new(program));
        }
        Ok(())
    }

    /// Adds thread `t` running `program` (named like [`Ctx::spawn`]'s threads).
    pub(crate) fn add_program(&mut self, t: u64, program: Box<dyn engine::Program>) {
        let name = format!("{}#{}/{}", self.workload.name, self.index, t);
        self.builder.add_thread(name, program);
    }

    /// Adds one thread running `program` after the start delay.
    fn spawn_program(&mut self, program: Box<dyn engine::Program>) -> Result<(), SpecError> {
        self.add_program_after_start(0, program)
    }

    /// Adds thread `t` running `program` after the start delay.
    fn add_program_after_start(&mut self, t: u64, program: Box<dyn engine::Program>) -> Result<(), SpecError> {
        let start_ns = self.int("start_ms", 0, 1 << 40)? * 1_000_000;
        let program: Box<dyn engine::Program> =
            if start_ns > 0 { Box::new(Delayed { delay: Some(start_ns), inner: program }) } else { program };
        self.add_program(t, program);
        Ok(())
    }

    /// A sampler for `pattern` over `n` pages.
    pub(crate) fn sampler(&self, pattern: &str, n: u32) -> Result<Rc<Sampler>, SpecError> {
        Ok(Rc::new(match pattern {
            "zipf" => Sampler::zipf(n, self.float("alpha", 0.0, 10.0)?, &mut self.rng(999)),
            _ => Sampler::Uniform(n),
        }))
    }
}

/// A program that first thinks for `delay`, then runs `inner`.
struct Delayed {
    delay: Option<u64>,
    inner: Box<dyn engine::Program>,
}

impl engine::Program for Delayed {
    fn next(&mut self) -> engine::Step {
        match self.delay.take() {
            Some(ns) => engine::Step::Think(ns),
            None => self.inner.next(),
        }
    }
}

pub(crate) fn sweep(target: Target, start: u32, len: u32, passes: u32, write: bool) -> Phase {
    Phase::Sweep { target, start, len, passes, write }
}

/// Thread `i` of `threads` writes its contiguous share of a `pages`-page region once.
pub(crate) fn fill_share(t: Target, pages: u32, threads: u64, i: u64) -> Vec<Phase> {
    let share = pages.div_ceil(threads as u32);
    let start = (i as u32).saturating_mul(share).min(pages);
    let len = share.min(pages - start);
    if len == 0 {
        return Vec::new();
    }
    vec![sweep(t, start, len, 1, true)]
}

fn build_anon(c: &mut Ctx) -> Result<(), SpecError> {
    let pages = c.pages("size")?;
    let pattern = c.choice("pattern", &["idle", "seq", "uniform", "zipf"])?;
    let write = c.int("write", 0, 1)? == 1;
    let threads = c.int("threads", 1, 1024)?;
    let passes = c.int("passes", 0, 1 << 20)? as u32;
    let ops = c.int("ops", 0, u64::MAX >> 1)?;
    let sampler = c.sampler(pattern, pages)?;
    let region = c.builder.add_anon_region(pages);
    let t = Target::Mem(region);
    c.spawn(threads, |i| {
        let mut ph = fill_share(t, pages, threads, i);
        match pattern {
            "idle" => {}
            "seq" => ph.push(sweep(t, 0, pages, passes, write)),
            _ => ph.push(Phase::Random { target: t, sampler: sampler.clone(), stride: 1, ops, write, think_ns: 0 }),
        }
        ph
    })
}

fn build_ebizzy(c: &mut Ctx) -> Result<(), SpecError> {
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

fn build_fileloop(c: &mut Ctx) -> Result<(), SpecError> {
    let pages = c.pages("size")?;
    let pattern = c.choice("pattern", &["seq", "uniform", "zipf"])?;
    let threads = c.int("threads", 1, 1024)?;
    let passes = c.int("passes", 0, 1 << 20)? as u32;
    let ops = c.int("ops", 0, u64::MAX >> 1)?;
    let sampler = c.sampler(pattern, pages)?;
    let file = c.builder.add_file(pages);
    let t = Target::File(file);
    c.spawn(threads, |_| match pattern {
        "seq" => vec![sweep(t, 0, pages, passes, false)],
        _ => vec![Phase::Random { target: t, sampler: sampler.clone(), stride: 1, ops, write: false, think_ns: 0 }],
    })
}

fn build_hotcold(c: &mut Ctx) -> Result<(), SpecError> {
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

fn build_memcachetest(c: &mut Ctx) -> Result<(), SpecError> {
    let pages = c.pages("size")?;
    let ops = c.int("ops", 0, u64::MAX >> 1)?;
    let set_pct = c.int("set_pct", 0, 100)? as u32;
    let service_ns = c.int("service_us", 0, 1 << 30)? * 1000;
    let region = c.builder.add_anon_region(pages);
    let rng = c.rng(0);
    c.spawn_program(Box::new(MemcacheTest::new(region, pages, ops, set_pct, service_ns, rng)))
}

fn build_parallelio(c: &mut Ctx) -> Result<(), SpecError> {
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

fn build_vmscale_seq(c: &mut Ctx) -> Result<(), SpecError> {
    let total = c.pages("size")?;
    let procs = c.int("procs", 1, 1024)?;
    let rounds = c.int("rounds", 1, 1 << 20)? as u32;
    let regions = process_regions(c, total, procs);
    c.spawn(procs, |i| {
        let (t, n) = regions[i as usize];
        vec![sweep(t, 0, n, rounds, true)]
    })
}

fn build_vmscale_rand(c: &mut Ctx) -> Result<(), SpecError> {
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

fn build_linpack(c: &mut Ctx) -> Result<(), SpecError> {
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

fn build_pgbench(c: &mut Ctx) -> Result<(), SpecError> {
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

/// Adds workload `spec` (the `index`-th of the run) to `builder`. Returns the
/// specification with every parameter resolved, for the run's configuration.
pub fn add_workload(
    builder: &mut SimBuilder,
    spec: &WorkloadSpec,
    seed: u64,
    index: u64,
) -> Result<WorkloadSpec, SpecError> {
    let workload = WORKLOADS.iter().find(|w| w.name == spec.name).ok_or_else(|| SpecError::UnknownWorkload {
        name: spec.name.clone(),
        valid: WORKLOADS.iter().map(|w| w.name).collect(),
    })?;
    let mut values: Vec<String> = workload.params.iter().map(|p| p.default.to_string()).collect();
    for (k, v) in &spec.params {
        let i = workload.params.iter().position(|p| p.key == k).ok_or_else(|| SpecError::UnknownParam {
            workload: workload.name.into(),
            key: k.clone(),
            valid: workload.params.iter().map(|p| p.key).collect(),
        })?;
        values[i] = v.clone();
    }
    let resolved = WorkloadSpec {
        name: workload.name.into(),
        params: workload.params.iter().zip(&values).map(|(p, v)| (p.key.to_string(), v.clone())).collect(),
    };
    let mut ctx = Ctx { workload, values, builder, seed, index };
    (workload.build)(&mut ctx)?;
    Ok(resolved)
}
