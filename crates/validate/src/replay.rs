//! The simulator side of `validate`: the driver's dry-mode trace replayed as a
//! workload thread on a machine configured like the host's group.

use driver::pattern::Op;
use driver::trace::Trace;
use engine::{Access, Config, Program, RunReport, SimBuilder, Step};
use mm::{FileId, RegionId};

/// Replays a trace's accesses in order.
pub struct TraceProgram {
    ops: Vec<Op>,
    next: usize,
    region: Option<RegionId>,
    file: Option<FileId>,
}

impl Program for TraceProgram {
    fn next(&mut self) -> Step {
        let Some(&op) = self.ops.get(self.next) else { return Step::Done };
        self.next += 1;
        Step::Access(match op {
            Op::Anon { page, write } => {
                Access::Mem { region: self.region.expect("trace declares anon pages"), page, write }
            }
            Op::File { page } => Access::FileRead { file: self.file.expect("trace declares file pages"), page },
        })
    }
}

/// The machine of a validation run.
#[derive(Clone, Debug)]
pub struct Machine {
    /// Kernel profile.
    pub profile: &'static str,
    /// `memcg.limit` in bytes.
    pub limit_bytes: u64,
    /// `memcg.swappiness`.
    pub swappiness: u32,
    /// Swap device kind (`zram`, `hdd`) and size.
    pub swap_kind: &'static str,
    /// Swap size in bytes.
    pub swap_bytes: u64,
    /// `swap_ra` (kernel, cluster).
    pub swap_ra: &'static str,
    /// `vm.page-cluster`.
    pub page_cluster: u64,
    /// `vma_ra_enabled`.
    pub vma_ra: bool,
    /// `memcg.stats_flush`: charges between the group's statistics flushes.
    pub stats_flush: u64,
    /// `--set KEY=VALUE` overrides from the command line, applied last.
    pub extra: Vec<(String, String)>,
}

impl Machine {
    /// The `--set` settings that reproduce this machine with `reclaimsim run`.
    pub fn settings(&self) -> Vec<(String, String)> {
        // Enough RAM that only the group's limit causes reclaim (the host has GBs free).
        let memory = (self.limit_bytes * 4).max(1 << 30);
        let mut v: Vec<(String, String)> = vec![
            ("memory".into(), engine::config::format_size(memory)),
            ("swap".into(), format!("{}:{}", self.swap_kind, engine::config::format_size(self.swap_bytes))),
            ("memcg.limit".into(), engine::config::format_size(self.limit_bytes)),
            ("memcg.swappiness".into(), self.swappiness.to_string()),
            ("vm.page-cluster".into(), self.page_cluster.to_string()),
            ("vma_ra_enabled".into(), (self.vma_ra as u8).to_string()),
            ("swap_ra".into(), self.swap_ra.to_string()),
            ("memcg.stats_flush".into(), self.stats_flush.to_string()),
        ];
        v.extend(self.extra.iter().cloned());
        v
    }
}

/// Runs `trace` on `machine`; the report carries the memcg's memory.stat.
pub fn simulate(machine: &Machine, trace: Trace) -> Result<RunReport, String> {
    let mut cfg = Config::for_profile(machine.profile).map_err(|e| e.to_string())?;
    for (k, v) in machine.settings() {
        cfg.set(&k, &v).map_err(|e| e.to_string())?;
    }
    let mut b = SimBuilder::new(cfg).map_err(|e| e.to_string())?;
    let region = (trace.anon_pages > 0).then(|| b.add_anon_region(trace.anon_pages));
    let file = (trace.file_pages > 0).then(|| b.add_file(trace.file_pages));
    b.add_thread("driver", Box::new(TraceProgram { ops: trace.ops, next: 0, region, file }));
    b.build().run(&mut |_| {}).map_err(|e| e.to_string())
}
