//! The multi-generational LRU (MGLRU, `CONFIG_LRU_GEN`), v6.1 with the v6.14
//! refault/tier rework as a flag.
//!
//! ```text
//!   min_seq                                     max_seq
//!   [ gen 0 ]  [ gen 1 ]  [ gen 2 ]  [ gen 3 ]  <- faults, young PTEs (aging)
//!      |  eviction: sort promoted / protected pages up, isolate the rest
//!      v
//!   shrink_folio_list -> shadow (token = min_seq, refs) -> refault feedback (PID)
//! ```
//!
//! Modules: `gens` (generations and per-page fields), `refs` (tiers),
//! `pid` (refault feedback), `bloom` (walk filters), `aging` (page-table walk,
//! look-around, new generations), `evict` (sort/isolate/reclaim), `refault`
//! (shadow tokens), `shrink` (when to age and how much to scan), `debugfs`
//! (listing and commands).
//!
//! Sources: mm/vmscan.c, mm/workingset.c, mm/swap.c, include/linux/mm_inline.h
//! (v6.1; v6.14 for the rework), spec/reclaim.md section D.
//!
//! One [`Mglru`] is one lruvec: of the machine, of one node
//! ([`Mglru::on_node`], inside a [`NodedPolicy`](crate::policy::noded::NodedPolicy)),
//! or of one group (and node) of a cgroup tree. A node's lruvec ages and
//! evicts that node's pages only; its page-table walk and look-around leave
//! other nodes' pages alone (`get_pfn_folio`'s node check).
//!
//! Simplifications: S-MG1 (walk scheduling and non-leaf accessed bits, see
//! `aging`), S-MG2 (one zone per node, no clean retry, see `evict`), S-MG3:
//! no memcg LRU (groups walked in tree order, S-CG6), `NR_HIST_GENS` = 1,
//! kswapd's `memcgs_need_aging` shortcut is absent. `min_ttl_ms` asks the engine for
//! the OOM killer (`ScanControl::oom`) and counts the invocation.

mod aging;
mod bloom;
pub mod config;
pub mod debugfs;
mod evict;
pub mod gens;
pub mod pid;
mod refault;
pub mod refs;
mod shrink;

pub(crate) use shrink::should_abort_scan;

use crate::config::ReclaimConfig;
use crate::control::{Reclaimer, ScanControl};
use crate::direct::PassTime;
use crate::pageout::PageoutEnv;
use crate::policy::{AccessKind, ControlError, ControlOp, LruSizes, Origin, ReclaimPolicy};
use crate::rmap::Mapping;
use aging::MmStats;
use bloom::Bloom;
use gens::{type_of, LruGen, ANON, FILE, MAX_NR_GENS, MIN_NR_GENS};
use mm::{Frame, Mm, PageFlags, Pfn, Shadow, VmEvent};
use pid::Pid;
use refs::Refs;

/// The MGLRU policy state (one lruvec).
#[derive(Debug)]
pub struct Mglru {
    cfg: ReclaimConfig,
    /// The node whose pages this lruvec holds (`None`: the machine's, one node).
    node: Option<u8>,
    refs: Refs,
    lrugen: LruGen,
    pid: Pid,
    bloom: Bloom,
    mm_stats: MmStats,
    /// Times `min_ttl_ms` found no reclaimable generation (the kernel's OOM kill).
    min_ttl_ooms: u64,
    scratch: Vec<Pfn>,
    young_at: Vec<Mapping>,
    chunk_young: Vec<bool>,
}

impl Mglru {
    /// An empty lruvec under `cfg`.
    pub fn new(cfg: ReclaimConfig) -> Mglru {
        Mglru {
            refs: Refs { rework: cfg.lru_gen.rework_6_14 },
            cfg,
            node: None,
            lrugen: LruGen::new(),
            pid: Pid::default(),
            bloom: Bloom::default(),
            mm_stats: MmStats::default(),
            min_ttl_ooms: 0,
            scratch: Vec::with_capacity(gens::MIN_LRU_BATCH as usize),
            young_at: Vec::new(),
            chunk_young: Vec::new(),
        }
    }

    /// An empty lruvec of node `node` on a machine of several nodes.
    pub fn on_node(cfg: ReclaimConfig, node: u8) -> Mglru {
        Mglru { node: Some(node), ..Mglru::new(cfg) }
    }

    /// The generations (for tests and dumps).
    pub fn lrugen(&self) -> &LruGen {
        &self.lrugen
    }

    /// The PID controller's statistics.
    pub fn pid(&self) -> &Pid {
        &self.pid
    }

    /// The refs model in use.
    pub fn refs_model(&self) -> Refs {
        self.refs
    }

    /// The type the next eviction would scan first at `swappiness` (`isolate_folios`' choice).
    pub fn type_to_scan(&self, swappiness: u32) -> usize {
        if self.refs.rework {
            return if swappiness == 0 { FILE } else { self.pid.type_to_scan_v614(swappiness) };
        }
        match swappiness {
            0 => FILE,
            _ if self.lrugen.min_seq[ANON] < self.lrugen.min_seq[FILE] => ANON,
            1 => FILE,
            200 => ANON,
            s => self.pid.type_to_scan_v61(s).0,
        }
    }

    /// Runs the aging once, as `+ 0 0 max_seq swappiness force_scan` would.
    pub fn age(&mut self, mm: &mut Mm, can_swap: bool, force_scan: bool, sc: &mut ScanControl) -> bool {
        let max_seq = self.lrugen.max_seq;
        self.try_to_inc_max_seq(mm, max_seq, can_swap, force_scan, sc.now_ns, &mut sc.work)
    }

    /// One eviction batch (`evict_folios`) of up to `MAX_LRU_BATCH` pages; returns pages scanned.
    pub fn evict(&mut self, mm: &mut Mm, sc: &mut ScanControl, env: PageoutEnv, swappiness: u32) -> u64 {
        self.evict_folios(mm, sc, env, swappiness, gens::MAX_LRU_BATCH)
    }

    /// `lru_gen_folio_seq()`: the generation a page joins (v6.14 by its
    /// distance from `max_seq`; before, by its flags alone).
    fn folio_seq(&self, f: &Frame, reclaiming: bool) -> u64 {
        let ty = type_of(f);
        let flags = f.flags;
        let waiting = (ty == ANON && !flags.has(PageFlags::SWAPCACHE))
            || (flags.has(PageFlags::RECLAIM) && (flags.has(PageFlags::DIRTY) || flags.has(PageFlags::WRITEBACK)));
        let g = &self.lrugen;
        if self.refs.rework {
            let ws = flags.has(PageFlags::WORKINGSET) as u64;
            let dist = if flags.has(PageFlags::ACTIVE) {
                MIN_NR_GENS - ws
            } else if reclaiming {
                MAX_NR_GENS
            } else if waiting {
                MIN_NR_GENS
            } else {
                MAX_NR_GENS - ws
            };
            (g.max_seq + 1 - dist).max(g.min_seq[ty])
        } else if flags.has(PageFlags::ACTIVE) {
            g.max_seq
        } else if waiting {
            g.min_seq[ty] + 1
        } else {
            g.min_seq[ty]
        }
    }

    /// `lru_gen_add_folio()`: where a page enters (`lru_gen_folio_seq`).
    fn lru_gen_add_folio(&mut self, mm: &mut Mm, pfn: Pfn, reclaiming: bool) {
        let flags = mm.frames[pfn].flags;
        if self.cfg.lru_gen.v6_12 && flags.has(PageFlags::ACTIVE) {
            // v6.12: a page added active starts over (refs and PG_referenced cleared).
            let f = &mut mm.frames[pfn];
            gens::set_refs_counter(f, 0);
            f.flags.clear(PageFlags::REFERENCED);
        }
        let seq = self.folio_seq(&mm.frames[pfn], reclaiming);
        self.lrugen.add(&mut mm.frames, pfn, seq, reclaiming);
    }
}

impl ReclaimPolicy for Mglru {
    fn name(&self) -> &'static str {
        "mglru"
    }

    fn add_page(&mut self, mm: &mut Mm, pfn: Pfn, origin: Origin, shadow: Option<Shadow>) {
        if let Some(s) = shadow {
            self.refault(mm, pfn, s, origin.in_fault());
        }
        // folio_add_lru(): pages instantiated inside a fault start active.
        if origin.in_fault() {
            mm.frames[pfn].flags.set(PageFlags::ACTIVE);
        }
        self.lru_gen_add_folio(mm, pfn, false);
    }

    fn on_access(&mut self, mm: &mut Mm, pfn: Pfn, via: AccessKind) {
        match via {
            AccessKind::MarkAccessed => self.refs.inc(&mut mm.frames[pfn]),
            // The page is listed already; mapping it sets its accessed bit.
            AccessKind::SwapCacheHit | AccessKind::SwapInListed => {}
        }
    }

    fn shrink_node(&mut self, mm: &mut Mm, sc: &mut ScanControl, env: PageoutEnv, clock: &mut dyn PassTime) {
        sc.nr = Default::default();
        // lru_gen_shrink_node() skips reclaim that may not write or unmap.
        if sc.reclaimer == Reclaimer::Direct && (!sc.may_unmap || !sc.may_writepage) {
            return;
        }
        // Root reclaim of the node's own lruvec (in a tree the memcg LRU's walk sets it for the node).
        if !sc.reclaimer.is_cgroup() && !mm.cgroups.enabled() {
            self.set_initial_priority(mm, sc, self.lru_sizes());
        }
        self.shrink_lruvec(mm, sc, env, clock);
    }

    fn rotate_reclaimable(&mut self, mm: &mut Mm, pfn: Pfn) {
        let flags = mm.frames[pfn].flags;
        if flags.has(PageFlags::LRU) && !flags.has(PageFlags::DIRTY) && !flags.has(PageFlags::UNEVICTABLE) {
            self.lrugen.del(&mut mm.frames, pfn);
            mm.frames[pfn].flags.clear(PageFlags::ACTIVE);
            self.lru_gen_add_folio(mm, pfn, true);
            mm.stat.count(VmEvent::Pgrotated, 1);
        }
    }

    fn invalidate_page(&mut self, mm: &mut Mm, pfn: Pfn) -> bool {
        self.lrugen.del(&mut mm.frames, pfn);
        true
    }

    fn age_node(&mut self, mm: &mut Mm, sc: &mut ScanControl) {
        Mglru::age_node(self, mm, sc);
    }

    fn lru_sizes(&self) -> LruSizes {
        let mut s = LruSizes::default();
        for gen in 0..MAX_NR_GENS as usize {
            let (anon, file) = (self.lrugen.nr_pages(gen, ANON), self.lrugen.nr_pages(gen, FILE));
            if self.lrugen.is_active(gen) {
                s.active_anon += anon;
                s.active_file += file;
            } else {
                s.inactive_anon += anon;
                s.inactive_file += file;
            }
        }
        s
    }

    fn check_invariants(&self, mm: &Mm) {
        self.lrugen.check(mm);
    }

    fn memcg_lru(&self) -> crate::memcg_lru::MemcgLruForm {
        self.cfg.lru_gen.memcg_lru
    }

    fn lruvec_is_sizable(&self, mm: &Mm, sc: &ScanControl) -> bool {
        self.is_sizable(mm, sc)
    }

    fn set_initial_priority(&self, mm: &Mm, sc: &mut ScanControl, sizes: LruSizes) {
        shrink::set_initial_priority(self.cfg.lru_gen.initial_priority, mm, sc, sizes);
    }

    fn control(
        &mut self,
        mm: &mut Mm,
        name: &str,
        op: ControlOp<'_>,
        sc: &mut ScanControl,
        env: PageoutEnv,
    ) -> Result<String, ControlError> {
        match (name, op) {
            (debugfs::LRU_GEN, ControlOp::Read) => Ok(self.dump(sc.now_ns)),
            (debugfs::LRU_GEN, ControlOp::Write(text)) => {
                self.write(mm, text, sc, env).map(|()| String::new()).map_err(ControlError::Refused)
            }
            _ => Err(ControlError::Unsupported),
        }
    }
}
