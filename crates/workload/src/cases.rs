//! Builders of seed 002's workloads (`tabs`, `pagecache-heavy`, `shared-anon`)
//! and of the `lru-gen` command writer.

use crate::ctx::{fill_share, sweep, Ctx};
use crate::phases::{Phase, Target};
use crate::spec::SpecError;
use crate::tabs::{rank_cdf, Tab, TabsParams, TabsProgram};
use simrng::Sampler;
use std::rc::Rc;

/// `tabs`: browser windows, each with its share of the tabs.
pub(crate) fn build_tabs(c: &mut Ctx) -> Result<(), SpecError> {
    let ntabs = c.int("tabs", 1, 10_000)? as u32;
    let heap = c.pages("heap")?;
    let hot = c.float("hot", 0.0, 1.0)?;
    let exe_pages = c.pages("exe")?;
    let alpha = c.float("alpha", 0.0, 10.0)?;
    let visits = c.int("visits", 0, 1 << 40)?;
    let ops = c.int("ops", 1, 1 << 30)? as u32;
    let think_ns = c.int("think_us", 0, 1 << 40)? * 1000;
    let churn = c.int("churn", 0, 1 << 40)?;
    let threads = c.int("threads", 1, 64)?.min(ntabs as u64);
    let start_ns = c.int("start_ms", 0, 1 << 40)? * 1_000_000;
    let exe_permille = c.int("exec", 0, 1000)? as u32;
    let exe_file = c.builder.add_file(exe_pages);
    // SIM-CHOICE: an executable's pages are used with zipf(1.0) popularity, the
    // hot code contiguous at the start (Chrome links its text with an order file
    // that groups the functions used at startup and while browsing).
    let exe_sampler = Rc::new(Sampler::zipf_in_order(exe_pages, 1.0));
    let hot_pages = ((heap as f64 * hot).round() as u32).clamp(1, heap);
    for t in 0..threads {
        let mine = ntabs / threads as u32 + ((t as u32) < ntabs % threads as u32) as u32;
        let tabs: Vec<Tab> = (0..mine)
            .map(|_| Tab {
                heap: c.builder.add_anon_region(heap),
                heap_pages: heap,
                exe: c.builder.map_file(exe_file, 0, exe_pages, true),
            })
            .collect();
        let params = TabsParams {
            hot_pages,
            exe_sampler: exe_sampler.clone(),
            rank_cdf: Rc::new(rank_cdf(mine, alpha)),
            visits,
            ops_per_visit: ops,
            think_ns,
            churn_every: churn,
            // SIM-CHOICE: 5% of a visit's accesses touch the cold heap, 30% of heap accesses write.
            exe_permille,
            cold_permille: 50,
            write_permille: 300,
            start_ns,
        };
        let program = TabsProgram::new(tabs, params, c.rng(t));
        c.add_program(t, Box::new(program));
    }
    Ok(())
}

/// `pagecache-heavy`: a streamer, a zipf re-reader (through `read()`), an anon thread.
pub(crate) fn build_pagecache_heavy(c: &mut Ctx) -> Result<(), SpecError> {
    let stream = c.pages("stream")?;
    let passes = c.int("passes", 0, 1 << 20)? as u32;
    let reread = c.pages("reread")?;
    let anon = c.pages("anon")?;
    let ops = c.int("ops", 0, u64::MAX >> 1)?;
    let zipf = Rc::new(Sampler::zipf(reread, c.float("alpha", 0.0, 10.0)?, &mut c.rng(998)));
    let (fs, fr, ra) = (c.builder.add_file(stream), c.builder.add_file(reread), c.builder.add_anon_region(anon));
    let (ts, tr, ta) = (Target::File(fs), Target::File(fr), Target::Mem(ra));
    let uniform = Rc::new(Sampler::Uniform(anon));
    c.spawn(3, |t| match t {
        0 => vec![sweep(ts, 0, stream, passes, false)],
        1 => vec![Phase::Random { target: tr, sampler: zipf.clone(), stride: 1, ops, write: false, think_ns: 0 }],
        _ => {
            let mut ph = fill_share(ta, anon, 1, 0);
            ph.push(Phase::Random { target: ta, sampler: uniform.clone(), stride: 1, ops, write: false, think_ns: 0 });
            ph
        }
    })
}

/// `shared-anon`: `procs` processes map one large shared object.
///
/// Simplification S-WL2: the mm model has no shmem, so the shared memory is a
/// shared file mapping: its pages are on the file LRU and are re-read from the
/// filesystem device when evicted, instead of being swapped. The sharing (one
/// PTE per process per page, an rmap walk over every mapper) is the same.
pub(crate) fn build_shared_anon(c: &mut Ctx) -> Result<(), SpecError> {
    let pages = c.pages("size")?;
    let procs = c.int("procs", 1, 4096)?;
    let stride = c.int("stride", 1, 512)? as u32;
    let ops = c.int("ops", 0, u64::MAX >> 1)?;
    let file = c.builder.add_file(pages);
    let maps: Vec<_> = (0..procs).map(|_| c.builder.map_file(file, 0, pages, false)).collect();
    // Every process touches the same pages (offsets multiple of `stride`), uniformly.
    let sampler = Rc::new(Sampler::Uniform(pages.div_ceil(stride)));
    c.spawn(procs, |t| {
        vec![Phase::Random {
            target: Target::Mem(maps[t as usize]),
            sampler: sampler.clone(),
            stride,
            ops,
            write: false,
            think_ns: 0,
        }]
    })
}

/// `lru-gen`: `count` writes of `cmds`, from `start_ms` every `every_ms`.
pub(crate) fn build_lru_gen(c: &mut Ctx) -> Result<(), SpecError> {
    let text = c.raw("cmds").replace(';', "\n");
    let w = c.builder.add_control_write("lru_gen", text).map_err(|e| c.bad("cmds", e))?;
    spawn_writer(c, w)
}

/// `memory-reclaim`: `count` writes of `amount` (with `swappiness=` if set)
/// to the `memory.reclaim` of group `target`, from `start_ms` every `every_ms`.
pub(crate) fn build_memory_reclaim(c: &mut Ctx) -> Result<(), SpecError> {
    let amount = c.raw("amount").to_string();
    let text = match c.raw("swappiness") {
        "" => amount,
        s => format!("{amount} swappiness={s}"),
    };
    let target = c.raw("target").to_string();
    let w = c.builder.add_memory_reclaim_write(&target, text).map_err(|e| c.bad("amount", e))?;
    spawn_writer(c, w)
}

/// `senpai`: the proactive-reclaim controller on group `target`, ticking
/// `count` times, `every_ms` apart (the script's one second).
pub(crate) fn build_senpai(c: &mut Ctx) -> Result<(), SpecError> {
    let mode = match c.choice("mode", &["high", "reclaim"])? {
        "high" => engine::senpai::SenpaiMode::High,
        _ => engine::senpai::SenpaiMode::Reclaim,
    };
    let cfg = engine::senpai::SenpaiConfig {
        mode,
        interval: c.int("interval", 1, 1 << 20)? as u32,
        pressure_us: c.int("pressure_us", 1, 1 << 40)?,
        max_probe: c.float("max_probe", 0.0, 1.0)?,
        max_backoff: c.float("max_backoff", 0.0, 100.0)?,
        coeff_probe: c.float("coeff_probe", 1e-3, 1e6)?,
        coeff_backoff: c.float("coeff_backoff", 1e-3, 1e6)?,
        min_bytes: c.pages("min_size")? as u64 * mm::PAGE_SIZE,
        max_bytes: c.pages("max_size")? as u64 * mm::PAGE_SIZE,
    };
    let target = c.raw("target").to_string();
    let w = c.builder.add_senpai(&target, cfg).map_err(|e| c.bad("target", e))?;
    spawn_writer(c, w)
}

/// One thread that issues control write `w` `count` times, `every_ms` apart.
fn spawn_writer(c: &mut Ctx, w: engine::ControlWrite) -> Result<(), SpecError> {
    let every_ns = c.int("every_ms", 0, 1 << 40)? * 1_000_000;
    let count = c.int("count", 1, 1 << 20)?;
    let mut ph = Vec::new();
    for i in 0..count {
        if i > 0 {
            ph.push(Phase::Think(every_ns));
        }
        ph.push(Phase::Control(w));
    }
    c.spawn(1, |_| ph.clone())
}
