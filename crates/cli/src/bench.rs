//! `reclaimsim bench`: simulation speed on fixed workloads, and memory per frame.

use crate::runner::{execute, prepare};
use anyhow::Result;
use clap::Args;

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
}

const CASES: &[Case] = &[
    Case {
        name: "resident hits (anon seq, fits in memory)",
        settings: &["memory=1G", "swap=ssd:1G"],
        workloads: &["anon:size=0.5x,pattern=seq,passes=200"],
    },
    Case {
        name: "resident hits (anon zipf, fits in memory)",
        settings: &["memory=1G", "swap=ssd:1G"],
        workloads: &["anon:size=0.5x,pattern=zipf,alpha=1.0,ops=50000000"],
    },
    Case {
        name: "thrashing (anon uniform, 1.5x memory, zram)",
        settings: &["memory=256M", "swap=zram:1G"],
        workloads: &["anon:size=1.5x,pattern=uniform,ops=5000000"],
    },
    Case {
        name: "thrashing (file uniform, 2x memory)",
        settings: &["memory=256M", "fs=nvme"],
        workloads: &["fileloop:size=2x,pattern=uniform,ops=5000000"],
    },
];

fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Runs the benchmark cases and prints accesses per second.
pub fn bench(args: BenchArgs) -> Result<()> {
    println!("{:<46} {:>14} {:>10} {:>14}", "case", "accesses", "wall s", "M accesses/s");
    for case in CASES {
        let mut best = f64::MAX;
        let mut accesses = 0;
        for _ in 0..args.reps.max(1) {
            let settings: Vec<String> = case.settings.iter().map(|s| s.to_string()).collect();
            let workloads: Vec<String> = case.workloads.iter().map(|s| s.to_string()).collect();
            let p = prepare("v6.2", &settings, &workloads, 1)?;
            let (r, wall) = execute(p, false)?;
            accesses = r.accesses;
            best = best.min(wall);
        }
        println!("{:<46} {:>14} {:>10.3} {:>14.1}", case.name, accesses, best, accesses as f64 / best / 1e6);
    }
    let frame = std::mem::size_of::<mm::Frame>() + std::mem::size_of::<mm::Pfn>();
    println!(
        "\nsimulator memory per page frame: {frame} bytes (frame table {} + free list {})",
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
