//! Building a machine and its threads from a configuration.

use super::kswapd::NodeKswapd;
use super::page_alloc::Placement;
use super::queue::{Event, EventQueue};
use super::{Machine, Sim, SimBuilder, Thread};
use crate::config::{Config, ConfigError, LruLayout};
use crate::program::{ControlWrite, Program};
use crate::psi::Psi;
use crate::swap_ra::SwapReadahead;
use crate::timeseries::Sampler;
use crate::writeback::Flusher;
use hdrhistogram::Histogram;
use mm::{FileId, Mm, RegionId, Watermark};
use reclaim::kswapd::Kswapd;
use reclaim::{watermark, ReclaimWork};

impl SimBuilder {
    /// A machine configured by `cfg`, with no workload yet.
    pub fn new(mut cfg: Config) -> Result<SimBuilder, ConfigError> {
        cfg.validate()?;
        if cfg.scaled_from_bytes != 0 {
            cfg.reclaim.scale = reclaim::ScaleModel::new(cfg.scaled_from_bytes, cfg.memory_bytes);
        }
        let nr_frames = (cfg.memory_bytes / mm::PAGE_SIZE) as u32;
        let swap_pages = (cfg.swap_bytes / mm::PAGE_SIZE) as u32;
        let bad = |e: String| ConfigError::Inconsistent(e);
        let spans = cfg.numa.layout(nr_frames).map_err(bad)?;
        let mut mm = Mm::with_layout(&spans, cfg.numa.distances().map_err(bad)?, swap_pages);
        mm.frames.set_boost_form(cfg.numa.watermark_boost);
        if cfg.swap_kind == crate::device::DeviceKind::Zram && swap_pages > 0 {
            mm.enable_zram(cfg.zram.pool_config());
        }
        if cfg.zswap.enabled && swap_pages > 0 {
            let (zswap, comp) = cfg.zswap.pool_config(&cfg.zram);
            mm.enable_zswap(zswap, comp);
        }
        // S-SM1: the watermarks are this machine's own under a scale model too.
        let min_free_kbytes =
            cfg.min_free_kbytes.unwrap_or_else(|| watermark::default_min_free_kbytes(cfg.memory_bytes / 1024));
        let managed = nr_frames as u64;
        let gap = if cfg.watermark_scale {
            watermark::WatermarkGap::Scaled { watermark_scale_factor: cfg.watermark_scale_factor }
        } else {
            watermark::WatermarkGap::MinFraction
        };
        watermark::setup_per_zone_wmarks(&mut mm.zones, min_free_kbytes, gap);
        watermark::setup_lowmem_reserve(&mut mm.zones, &cfg.numa.lowmem_reserve_ratio);
        mm.set_kernel_marks();
        let high: u64 = mm.zones.iter().map(|z| z.wmark(Watermark::High)).sum();
        if let Some(z) = mm.zones.iter().find(|z| z.wmark(Watermark::High) >= z.managed) {
            return Err(ConfigError::Inconsistent(format!(
                "watermarks do not fit: high watermark {} pages >= {} pages of memory{} (lower vm.min_free_kbytes or vm.watermark_scale_factor)",
                z.wmark(Watermark::High),
                z.managed,
                if mm.zones.len() > 1 { format!(" in zone {} of node {}", z.id.label(), z.node) } else { String::new() },
            )));
        }
        // Simplification S-MM5: the kernel's own memory is allocated after the watermarks are set from
        // the managed pages, as at boot; it must leave room above the high watermark.
        let reserved = cfg.reserved_bytes.div_ceil(mm::PAGE_SIZE);
        if reserved >= managed - high {
            return Err(ConfigError::Inconsistent(format!(
                "memory.reserved {} leaves no memory above the high watermark ({} pages of {})",
                knobs::format_size(cfg.reserved_bytes),
                high,
                managed
            )));
        }
        assert!(mm.reserve_kernel_pages(reserved as u32), "checked above: {reserved} < {managed} free");
        boot_pageblocks(&mut mm, &cfg)?;
        let entry = reclaim::policy::registry::find(&cfg.lru).expect("lru validated by Config::set");
        if cfg.memcg.limit_bytes != 0 && !cfg.cgroups.groups.is_empty() {
            return Err(bad("memcg.limit (one cgroup v1 group) and cgroup.* (a v2 tree) cannot be combined".into()));
        }
        for (path, limits) in &cfg.cgroups.groups {
            let g = mm.cgroups.create(path);
            mm.cgroups.get_mut(g).limits = *limits;
        }
        // The group's swappiness governs every reclaim of its lruvec (S-MC1).
        let memcg = (cfg.memcg.limit_bytes != 0)
            .then(|| crate::memcg::Memcg::new(cfg.memcg.limit_bytes, cfg.memcg.swappiness, cfg.memcg.stats_flush));
        // The swap cache's shadow entries take tree nodes in the kernels that have them.
        mm.slab.swap_cache_nodes = cfg.reclaim.anon_workingset && cfg.reclaim.shrinker.swap_cache_nodes;
        let mut reclaim_cfg = cfg.reclaim.clone();
        if let Some(m) = &memcg {
            reclaim_cfg.swappiness = m.swappiness;
        }
        // One lruvec per node for the policies that keep per-node state (v4.8+ node LRUs).
        let mut policy = entry.for_nodes(&reclaim_cfg, mm.nodes.len());
        if cfg.numa.lru_layout == LruLayout::Zone && mm.zones.len() > 1 {
            if entry.name == "mglru" {
                return Err(bad("lru_layout=zone (per-zone LRU lists, before v4.8) cannot run lru=mglru (v6.1+): set lru_layout=node or another lru".into()));
            }
            if !cfg.cgroups.groups.is_empty() {
                return Err(bad("lru_layout=zone (per-zone LRU lists, before v4.8) with cgroup.* groups is not modelled (S-ZL6): set lru_layout=node, or zones=flat for one zone".into()));
            }
            // One lruvec per zone, built while every list is empty.
            let lruvecs = (0..mm.zones.len()).map(|_| (entry.build)(&reclaim_cfg)).collect();
            policy = Box::new(reclaim::zoned::ZonedPolicy::new(lruvecs));
        }
        if memcg.as_ref().is_some_and(|m| m.stats_flush > 0) {
            policy.flush_group_stats(&mm);
        }
        let swap_dev = cfg.swap_kind.build(&cfg.swap_params);
        let sched = crate::sched::Scheduler::new(&cfg.sched);
        let kswapds = (0..mm.nodes.len() as u8)
            .map(|n| NodeKswapd::new(Kswapd::new(&mm, n, cfg.numa.any_zone_balanced)))
            .collect();
        let user_class = watermark::user_classzone(&mm);
        Ok(SimBuilder {
            m: Machine {
                mm,
                policy,
                kswapds,
                kswapd_gen: 0,
                numa: Default::default(),
                user_class,
                ra: SwapReadahead::new(cfg.swap_ra, swap_dev.rotational()),
                lru_batches: Default::default(),
                swap_dev,
                fs_dev: cfg.fs_kind.build(&cfg.fs_params),
                cfg,
                queue: EventQueue::default(),
                direct_reclaim_ns: 0,
                kswapd_work: ReclaimWork::default(),
                direct_work: ReclaimWork::default(),
                direct_hist: Histogram::new(3).expect("3 significant figures is valid"),
                psi: Psi::default(),
                cg_psi: Vec::new(),
                refault_stall_ns: 0,
                control_texts: Vec::new(),
                senpais: Vec::new(),
                control_log: Vec::new(),
                events: 0,
                stalled_attempts: 0,
                flusher: Flusher::default(),
                reclaim_throttled_ns: 0,
                isolating: Vec::new(),
                memcg,
                over_high: Vec::new(),
                sampler: Sampler::off(),
                sched,
                sleep_ns: 0,
                waker: None,
                cpu_slice_end: crate::Nanos::MAX,
                snapshots: Vec::new(),
                procs: Default::default(),
            },
            threads: Vec::new(),
            cgroup: mm::CgId::ROOT,
        })
    }

    /// Pages of RAM.
    pub fn memory_pages(&self) -> u64 {
        self.m.mm.frames.len() as u64
    }

    /// Starts a process with `oom_score_adj` (-1000..=1000; -1000: the OOM
    /// killer never kills it): the regions and threads added from now on are
    /// its. Before the first call they belong to one process with adjustment 0.
    pub fn begin_process(&mut self, oom_score_adj: i16) -> Result<(), String> {
        if !(crate::oom::OOM_SCORE_ADJ_MIN..=crate::oom::OOM_SCORE_ADJ_MAX).contains(&oom_score_adj) {
            return Err(format!("oom_score_adj {oom_score_adj}: expected -1000..=1000"));
        }
        self.m.procs.begin(oom_score_adj);
        Ok(())
    }

    /// The current process exits when its last thread ends: its memory is
    /// unmapped then (`exit_mmap`). Without it a process whose threads have
    /// ended keeps its memory to the end of the run (S-OOM1).
    pub fn exit_when_done(&mut self) {
        self.m.procs.exit_when_done();
    }

    /// Adds an anonymous region (private memory of the current process) of `pages` pages.
    pub fn add_anon_region(&mut self, pages: u32) -> RegionId {
        let r = self.m.mm.add_anon_region(pages);
        self.m.mm.regions[r.0 as usize].cg = self.cgroup;
        self.m.procs.add_region(r);
        r
    }

    /// Adds a file of `pages` pages on the filesystem device, charged to the current group.
    pub fn add_file(&mut self, pages: u32) -> FileId {
        let f = self.m.mm.add_file(pages);
        self.m.mm.files[f.0 as usize].cg = self.cgroup;
        f
    }

    /// Puts what is added from now on (regions, files) in the memory cgroup
    /// at `path` (`/`: the root), creating it and its ancestors.
    pub fn set_cgroup(&mut self, path: &str) -> Result<(), String> {
        if self.m.memcg.is_some() && path != "/" {
            return Err("a group of the cgroup v2 tree; memcg.limit puts every page in one v1 group".into());
        }
        // The root (`/`, or an empty path) is every kernel's; a group needs the v2 tree.
        if !path.trim_matches('/').is_empty() {
            self.require_file("memory.max").map_err(|e| format!("a profile with cgroup v2 memory groups ({e})"))?;
        }
        self.cgroup = self.m.mm.cgroups.create(path);
        Ok(())
    }

    /// Fails unless the profile's kernel has cgroup file `file` (S-CG7's check;
    /// a profile name no table knows passes).
    fn require_file(&self, file: &str) -> Result<(), String> {
        let Some(p) = crate::profile::find(&self.m.cfg.profile) else { return Ok(()) };
        crate::config::cgroup::require(file, p.kernel, p.name)
    }

    /// Maps `pages` pages of `file` from page `offset` into the current
    /// process; `exec` marks it `VM_EXEC`.
    pub fn map_file(&mut self, file: FileId, offset: u32, pages: u32, exec: bool) -> RegionId {
        let r = self.m.mm.map_file(file, offset, pages);
        self.m.mm.regions[r.0 as usize].cg = self.cgroup;
        self.m.mm.regions[r.0 as usize].exec = exec;
        self.m.procs.add_region(r);
        r
    }

    /// Registers a write of `text` to policy control `control` that a program
    /// issues with [`Step::Control`](crate::program::Step::Control); fails if no
    /// registered policy has that control or the text breaks its syntax.
    pub fn add_control_write(&mut self, control: &str, text: impl Into<String>) -> Result<ControlWrite, String> {
        let (spec, text) = (reclaim::policy::registry::control(control)?, text.into());
        (spec.check)(&text)?;
        self.m.control_texts.push(super::control::ControlText::Policy(spec.name, text));
        Ok(ControlWrite(self.m.control_texts.len() as u32 - 1))
    }

    /// Registers a write of `text` (`SIZE [swappiness=N]`) to the
    /// `memory.reclaim` file of the group at `path` (`/`: the root), which a
    /// program issues with [`Step::Control`](crate::program::Step::Control);
    /// fails if the text breaks the file's syntax or a v1 group is configured.
    pub fn add_memory_reclaim_write(&mut self, path: &str, text: impl Into<String>) -> Result<ControlWrite, String> {
        if self.m.memcg.is_some() {
            return Err("a cgroup v2 tree: memory.reclaim is a v2 file, and memcg.limit configures a v1 group".into());
        }
        let text = text.into();
        let (pages, swappiness) = super::control::parse_memory_reclaim(&text)?;
        self.require_file("memory.reclaim")?;
        if swappiness.is_some() {
            self.require_file("memory.reclaim swappiness=")?;
        }
        let cg = self.m.mm.cgroups.create(path);
        self.m.control_texts.push(super::control::ControlText::MemoryReclaim { cg, pages, swappiness, text });
        Ok(ControlWrite(self.m.control_texts.len() as u32 - 1))
    }

    /// Adds a workload thread to the current process.
    pub fn add_thread(&mut self, name: impl Into<String>, program: Box<dyn Program>) {
        let id = self.threads.len() as u32;
        self.m.psi.task_start(0);
        self.m.numa.add_task();
        self.m.procs.add_thread(self.cgroup);
        self.threads.push(Thread::new(name.into(), program));
        self.m.queue.push(0, Event::Thread(id));
    }

    /// Places the threads added from now on: the node they run on and their
    /// memory policy. Fails if the machine has no such node.
    pub fn set_placement(&mut self, p: Placement) -> Result<(), String> {
        let nodes = self.m.mm.nodes.len();
        if p.node as usize >= nodes {
            return Err(format!("a node of the machine, 0..={} (numa.nodes={nodes})", nodes - 1));
        }
        self.m.numa.next = p;
        Ok(())
    }

    /// Registers a senpai controller on the group at `path` (`/`: the
    /// root); each [`Step::Control`](crate::program::Step::Control) with
    /// the returned write is one of its once-a-second ticks.
    pub fn add_senpai(&mut self, path: &str, cfg: crate::senpai::SenpaiConfig) -> Result<ControlWrite, String> {
        if self.m.memcg.is_some() {
            return Err("a cgroup v2 tree: senpai drives memory.high / memory.reclaim, v2 files".into());
        }
        if cfg.interval == 0 || cfg.pressure_us == 0 {
            return Err("an interval of at least one tick and a pressure target above 0".into());
        }
        self.require_file("memory.pressure")?;
        if cfg.mode == crate::senpai::SenpaiMode::Reclaim {
            self.require_file("memory.reclaim")?;
        }
        let cg = self.m.mm.cgroups.create(path);
        self.m.senpais.push(crate::senpai::Senpai::new(cfg));
        self.m.control_texts.push(super::control::ControlText::Senpai { cg, senpai: self.m.senpais.len() - 1 });
        Ok(ControlWrite(self.m.control_texts.len() as u32 - 1))
    }

    /// Finishes building: the per-CPU page lists are sized for the CPUs,
    /// `cpus` of them, or with `cpus=0` one per thread and one per kswapd
    /// (S-EN1: every actor has a CPU of its own).
    pub fn build(mut self) -> Sim {
        if self.m.mm.cgroups.enabled() {
            // One lruvec per group (and node), built while every list is still empty.
            assert_eq!(self.m.policy.lru_sizes().total(), 0, "pages listed before the tree's lruvecs exist");
            let entry = reclaim::policy::registry::find(&self.m.cfg.lru).expect("lru validated by Config::set");
            let (cfg, nodes) = (&self.m.cfg.reclaim, self.m.mm.nodes.len());
            let lruvecs = (0..self.m.mm.cgroups.len()).map(|_| entry.for_nodes(cfg, nodes)).collect();
            self.m.policy = Box::new(reclaim::tree::TreePolicy::new(lruvecs, self.m.cfg.cgroups.recursive_prot, nodes));
            // Each group's memory.pressure counts its threads and its descendants'.
            self.m.cg_psi = (0..self.m.mm.cgroups.len()).map(|_| Psi::default()).collect();
            for tid in 0..self.threads.len() {
                self.m.group_psi_of(tid, |p| p.task_start(0));
            }
        }
        if self.m.mm.tracing() {
            self.m.policy = super::trace_events::traced(self.m.policy);
        }
        // Global reclaim reads the root group's statistics as the flusher left them.
        let groupless = self.m.memcg.is_none() && !self.m.mm.cgroups.enabled();
        if groupless && self.m.cfg.memcg.root_stats == crate::memcg::RootStats::Periodic {
            self.m.policy.flush_group_stats(&self.m.mm);
            self.m.queue.push(crate::memcg::STATS_FLUSH_NS, Event::StatsFlush);
        }
        let cpus = match self.m.cfg.sched.cpus {
            0 => (self.threads.len() + self.m.kswapds.len()) as u32,
            n => n as u32,
        };
        let setup = self.m.cfg.pcp.setup(cpus).expect("checked by Config::validate");
        self.m.mm.setup_pcp(setup);
        Sim { m: self.m, threads: self.threads, paranoid: false }
    }
}

/// `memory.pageblocks`: node 0's zones laid out as the booted kernel left
/// them, the kernel's frames taken; each zone must keep room above its high
/// watermark.
fn boot_pageblocks(mm: &mut Mm, cfg: &Config) -> Result<(), ConfigError> {
    let bad = |e: String| ConfigError::Inconsistent(format!("memory.pageblocks: {e}"));
    if !cfg.numa.pageblocks.is_empty() && cfg.reserved_bytes != 0 {
        return Err(bad("give it or memory.reserved, not both (it places the kernel's memory itself)".into()));
    }
    for b in &cfg.numa.pageblocks {
        let z = mm
            .zones
            .iter()
            .position(|z| z.node == 0 && z.id == b.zone)
            .ok_or_else(|| bad(format!("node 0 has no zone {} (see `zones`)", b.zone.name())))?;
        mm.boot_layout(z, &b.layout).map_err(|e| bad(format!("zone {}: {e}", b.zone.name())))?;
        let (free, high) = (mm.frames.nr_free_in(z) as u64, mm.zones[z].wmark(Watermark::High));
        if free <= high {
            return Err(bad(format!(
                "zone {} keeps {free} free frames, not above its high watermark {high}",
                b.zone.name()
            )));
        }
    }
    Ok(())
}
