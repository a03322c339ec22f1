//! `reclaimsim bench`: simulation speed on fixed workloads, trace replay and
//! many threads, each measured against a reference in the same run, and
//! memory per frame.

use crate::runner::{execute, prepare};
use anyhow::Result;
use clap::Args;
use std::io::Cursor;
use std::time::Instant;
use trace::format::{Decl, Event, Header, Record};
use trace::synth::Synth;
use trace::{TraceReader, TraceWriter};

/// Arguments of `bench`.
#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Repetitions of each case; the best is reported.
    #[arg(long, default_value_t = 3)]
    pub reps: u32,
}

struct Case {
    name: &'static str,
    settings: &'static [&'static str],
    workloads: &'static [&'static str],
    /// The time includes building the machine (the big-machine case), not only the run.
    with_build: bool,
    /// Copies of the (one) workload, spread round-robin over this many
    /// cgroup v2 groups (0: no `cgroup=` parameter).
    copies: u32,
    groups: u32,
}

const CASES: &[Case] = &[
    Case {
        name: "resident hits (anon seq, fits in memory)",
        settings: &["memory=1G", "swap=ssd:1G"],
        workloads: &["anon:size=0.5x,pattern=seq,passes=200"],
        with_build: false,
        copies: 1,
        groups: 0,
    },
    Case {
        name: "resident hits (anon zipf, fits in memory)",
        settings: &["memory=1G", "swap=ssd:1G"],
        workloads: &["anon:size=0.5x,pattern=zipf,alpha=1.0,ops=50000000"],
        with_build: false,
        copies: 1,
        groups: 0,
    },
    Case {
        name: "thrashing (anon uniform, 1.5x memory, zram)",
        settings: &["memory=256M", "swap=zram:1G"],
        workloads: &["anon:size=1.5x,pattern=uniform,ops=5000000"],
        with_build: false,
        copies: 1,
        groups: 0,
    },
    Case {
        name: "thrashing (file uniform, 2x memory)",
        settings: &["memory=256M", "fs=nvme"],
        workloads: &["fileloop:size=2x,pattern=uniform,ops=5000000"],
        with_build: false,
        copies: 1,
        groups: 0,
    },
    Case {
        name: "big machine: 1T, build + 1G first touched",
        settings: &["memory=1T", "swap=ssd:1G"],
        workloads: &["anon:size=1G,pattern=seq,passes=1"],
        with_build: true,
        copies: 1,
        groups: 0,
    },
    Case {
        name: "many threads: ebizzy 1024 threads x 100 ops",
        settings: &["memory=256M", "swap=ssd:1G"],
        workloads: &["ebizzy:threads=1024,ops=100"],
        with_build: false,
        copies: 1,
        groups: 0,
    },
    Case {
        name: "many threads: ebizzy, 16 threads",
        settings: EBIZZY,
        workloads: &["ebizzy:threads=16,ops=20000"],
        with_build: false,
        copies: 1,
        groups: 0,
    },
    Case {
        name: "many threads: ebizzy, 256 threads",
        settings: EBIZZY,
        workloads: &["ebizzy:threads=256,ops=1250"],
        with_build: false,
        copies: 1,
        groups: 0,
    },
    Case {
        name: "many threads, no reclaim: ebizzy, 16 threads",
        settings: NO_RECLAIM,
        workloads: &["ebizzy:size=1G,threads=16,ops=64000"],
        with_build: false,
        copies: 1,
        groups: 0,
    },
    Case {
        name: "many threads, no reclaim: ebizzy, 256 threads",
        settings: NO_RECLAIM,
        workloads: &["ebizzy:size=1G,threads=256,ops=4000"],
        with_build: false,
        copies: 1,
        groups: 0,
    },
    Case {
        name: "cgroups: 100 anon thrashers, one group",
        settings: CGROUPS,
        workloads: &["anon:size=3M,pattern=uniform,ops=50000"],
        with_build: false,
        copies: 100,
        groups: 1,
    },
    Case {
        name: "cgroups: 100 anon thrashers, 100 groups",
        settings: CGROUPS,
        workloads: &["anon:size=3M,pattern=uniform,ops=50000"],
        with_build: false,
        copies: 100,
        groups: 100,
    },
];

/// The machine of the cgroup cases: 100 x 3M of anon in 256M (1.2x).
const CGROUPS: &[&str] = &["memory=256M", "swap=zram:1G"];

/// The machine of the many-threads cases: both read 320k chunk pages in all.
const EBIZZY: &[&str] = &["memory=256M", "swap=zram:1G"];

/// The machine of the many-threads cases without reclaim: ebizzy's 1G region
/// and the threads' copy buffers fit in it, so the pair measures the engine's
/// cost per thread alone (both read 1,024,000 chunk pages in all).
const NO_RECLAIM: &[&str] = &["memory=4G", "swap=none"];

/// The trace-replay case: 5M one-page file reads, 90% of them to 16k hot pages
/// of 256k (1 GiB), replayed on 256M of memory.
const TRACE_REFS: u64 = 5_000_000;
const TRACE_PAGES: u32 = 1 << 18;
const TRACE_MEMORY_PAGES: u64 = 1 << 16;

/// The trace-replay case's trace, zstd-compressed in memory.
fn bench_trace() -> Result<Vec<u8>> {
    let synth = Synth { records: TRACE_REFS, pages: TRACE_PAGES, hot_pages: 1 << 14, hot_percent: 90, seed: 1 };
    let mut h = Header::new(Vec::new(), vec![Decl { name: "bench".into(), pages: TRACE_PAGES }]);
    h.compressed = true;
    let mut w = TraceWriter::new(Vec::new(), h, trace::writer::DEFAULT_ZSTD_LEVEL, "bench trace")?;
    for r in synth.iter() {
        let Event::Access { page, .. } = r.event else { unreachable!("synth makes accesses") };
        w.write(&Record::at0(Event::FileRead { file: 0, page, pages: 1 }))?;
    }
    Ok(w.finish()?)
}

/// The reference for trace replay: the same trace decoded and fed to a
/// minimal direct-indexed LRU (a doubly-linked list over arrays) of the same
/// capacity. Returns its misses.
fn reference_lru(bytes: &[u8], capacity: u64) -> Result<u64> {
    const NIL: u32 = u32::MAX;
    let mut r = TraceReader::open(bytes, "bench trace")?;
    let n = r.header().total_pages() as usize;
    let (mut prev, mut next, mut resident) = (vec![NIL; n], vec![NIL; n], vec![false; n]);
    let (mut head, mut tail, mut size, mut misses) = (NIL, NIL, 0u64, 0u64);
    while let Some(rec) = r.next_record()? {
        let Event::FileRead { page, .. } = rec.event else { continue };
        let p = page as usize;
        if resident[p] {
            if head == page {
                continue;
            }
            // Unlink.
            next[prev[p] as usize] = next[p];
            if next[p] == NIL {
                tail = prev[p];
            } else {
                prev[next[p] as usize] = prev[p];
            }
        } else {
            misses += 1;
            if size == capacity {
                let t = tail as usize;
                resident[t] = false;
                tail = prev[t];
                if tail == NIL {
                    head = NIL;
                } else {
                    next[tail as usize] = NIL;
                }
            } else {
                size += 1;
            }
            resident[p] = true;
        }
        // Push to the front.
        (prev[p], next[p]) = (NIL, head);
        if head != NIL {
            prev[head as usize] = page;
        }
        head = page;
        if tail == NIL {
            tail = page;
        }
    }
    Ok(misses)
}

/// Times the trace-replay case and its reference; returns (reclaimsim s, reference s, accesses).
fn trace_case(reps: u32) -> Result<(f64, f64, u64)> {
    let bytes = bench_trace()?;
    let (mut sim, mut lru, mut accesses) = (f64::MAX, f64::MAX, 0);
    for _ in 0..reps.max(1) {
        let mut p = prepare("v6.2", &[format!("memory={}K", TRACE_MEMORY_PAGES * 4), "swap=none".into()], &[], 1)?;
        let reader = TraceReader::open(Cursor::new(bytes.clone()), "bench trace")?;
        p.add_trace_from(reader, "bench trace", None).map_err(|e| anyhow::anyhow!(e.0))?;
        let (r, wall) = execute(p, false)?;
        accesses = r.accesses;
        sim = sim.min(wall);
        let t = Instant::now();
        std::hint::black_box(reference_lru(&bytes, TRACE_MEMORY_PAGES)?);
        lru = lru.min(t.elapsed().as_secs_f64());
    }
    Ok((sim, lru, accesses))
}

fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Runs the benchmark cases and prints accesses per second.
pub fn bench(args: BenchArgs) -> Result<()> {
    println!("{:<46} {:>14} {:>10} {:>14}", "case", "accesses", "wall s", "M accesses/s");
    let mut rates = Vec::new();
    let mut scanned = Vec::new();
    for case in CASES {
        let (mut best, mut accesses, mut pages_scanned) = (f64::MAX, 0, 0);
        for _ in 0..args.reps.max(1) {
            let settings: Vec<String> = case.settings.iter().map(|s| s.to_string()).collect();
            let workloads: Vec<String> = match case.groups {
                0 => case.workloads.iter().map(|s| s.to_string()).collect(),
                n => (0..case.copies).map(|i| format!("{},cgroup=g{}", case.workloads[0], i % n)).collect(),
            };
            let started = Instant::now();
            let p = prepare("v6.2", &settings, &workloads, 1)?;
            let build = started.elapsed().as_secs_f64();
            let (r, wall) = execute(p, false)?;
            accesses = r.accesses;
            pages_scanned = r.get("pgscan_kswapd").unwrap_or(0) + r.get("pgscan_direct").unwrap_or(0);
            best = best.min(if case.with_build { build + wall } else { wall });
        }
        println!("{:<46} {:>14} {:>10.3} {:>14.1}", case.name, accesses, best, accesses as f64 / best / 1e6);
        rates.push(accesses as f64 / best);
        scanned.push(pages_scanned);
    }
    let (sim, lru, accesses) = trace_case(args.reps)?;
    let name = "trace replay (5M file reads, hot/cold)";
    println!("{name:<46} {accesses:>14} {sim:>10.3} {:>14.1}", accesses as f64 / sim / 1e6);
    println!("\nreferences measured in this run:");
    println!(
        "  trace replay: the kernel model takes {:.1}x the time of a minimal direct-indexed LRU on the same trace ({lru:.3} s)",
        sim / lru
    );
    let case = |name: &str| CASES.iter().position(|c| c.name == name).expect("a case of the table");
    for (what, pair) in
        [("many threads", "many threads: ebizzy"), ("many threads, no reclaim", "many threads, no reclaim: ebizzy")]
    {
        let (t16, t256) = (case(&format!("{pair}, 16 threads")), case(&format!("{pair}, 256 threads")));
        println!(
            "  {what}: an access costs {:.2}x as much with 256 threads as with 16 (pages scanned by reclaim: {} and {})",
            rates[t16] / rates[t256],
            scanned[t16],
            scanned[t256]
        );
    }
    let frame = std::mem::size_of::<mm::Frame>() + std::mem::size_of::<mm::Pfn>();
    println!(
        "\nsimulator memory per page frame: at most {frame} bytes (frame table {} once used + free-frame stack {} once freed; none for a frame never used)",
        std::mem::size_of::<mm::Frame>(),
        std::mem::size_of::<mm::Pfn>()
    );
    println!(
        "per virtual page: 8 bytes (PTE or page-cache slot); per swap slot: {} bytes (+2 on zram: the stored object's size)",
        std::mem::size_of::<mm::SwapSlot>()
    );
    if let Some(kib) = peak_rss_kib() {
        println!("peak RSS of this process: {} MiB", kib / 1024);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_lru_misses_what_stack_distances_say() {
        let synth = Synth { records: 200_000, pages: 5000, hot_pages: 500, hot_percent: 80, seed: 3 };
        let h = Header::new(Vec::new(), vec![Decl { name: "t".into(), pages: 5000 }]);
        let mut w = TraceWriter::new(Vec::new(), h, 0, "t").unwrap();
        let mut stack = trace::stack::StackDistances::new(5000);
        for r in synth.iter() {
            let Event::Access { page, .. } = r.event else { unreachable!() };
            w.write(&Record::at0(Event::FileRead { file: 0, page, pages: 1 })).unwrap();
            stack.reference(page);
        }
        let bytes = w.finish().unwrap();
        let sizes = [1, 2, 100, 499, 1000, 4999, 6000];
        let want = stack.lru_misses(&sizes);
        let got: Vec<u64> = sizes.iter().map(|&c| reference_lru(&bytes, c).unwrap()).collect();
        assert_eq!(got, want);
    }
}
