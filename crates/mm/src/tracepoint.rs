//! Tracepoints: the kernel's reclaim tracepoints (include/trace/events/vmscan.h,
//! pagemap.h, filemap.h) as typed records, plus a few `reclaimsim_` records for
//! what the kernel does not trace (refault distance, evictions, per-page moves).
//!
//! Recording is off unless a [`TraceSink`] is installed in [`Mm::tracer`]; a
//! call site costs one test of that `Option` when it is off ([`Mm::trace`] is
//! inlined and builds its record only inside the test; the recording itself is
//! out of line and cold). The text layout (ftrace's) belongs to the front end:
//! this crate only hands typed records to the sink.

use crate::{FileId, Mm, Pfn, ZoneId};

/// Who runs when a tracepoint fires (ftrace's `task-pid [cpu]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Task {
    /// Workload thread `n` (in the order the threads were added).
    Thread(u32),
    /// Node `n`'s kswapd (`kswapdN`).
    Kswapd(u8),
}

/// A kernel `enum lru_list` value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lru {
    /// `LRU_INACTIVE_ANON` (0).
    InactiveAnon,
    /// `LRU_ACTIVE_ANON` (1).
    ActiveAnon,
    /// `LRU_INACTIVE_FILE` (2).
    InactiveFile,
    /// `LRU_ACTIVE_FILE` (3).
    ActiveFile,
    /// `LRU_UNEVICTABLE` (4).
    Unevictable,
}

impl Lru {
    /// The list of a page of type `file` that is `active` or not.
    pub fn of(file: bool, active: bool) -> Lru {
        match (file, active) {
            (false, false) => Lru::InactiveAnon,
            (false, true) => Lru::ActiveAnon,
            (true, false) => Lru::InactiveFile,
            (true, true) => Lru::ActiveFile,
        }
    }
}

/// `struct reclaim_stat` as `mm_vmscan_lru_shrink_inactive` reports it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShrinkStat {
    /// `nr_dirty`.
    pub dirty: u64,
    /// `nr_writeback`.
    pub writeback: u64,
    /// `nr_congested`.
    pub congested: u64,
    /// `nr_immediate`.
    pub immediate: u64,
    /// `nr_activate[0]`, `nr_activate[1]` (anon, file).
    pub activate: [u64; 2],
    /// `nr_ref_keep`.
    pub ref_keep: u64,
    /// `nr_unmap_fail`.
    pub unmap_fail: u64,
}

/// Why a reclaimer was throttled (`enum vmscan_throttle_state`, as a bit index).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThrottleState {
    /// `VMSCAN_THROTTLE_WRITEBACK`.
    Writeback,
    /// `VMSCAN_THROTTLE_NOPROGRESS`.
    NoProgress,
    /// `VMSCAN_THROTTLE_CONGESTED`.
    Congested,
    /// `VMSCAN_THROTTLE_ISOLATED` (v5.16+ `too_many_isolated()`).
    Isolated,
    /// Before v5.16: `congestion_wait()` (tracepoint `writeback_congestion_wait`).
    CongestionWait,
    /// Before v5.16: `wait_iff_congested()` (tracepoint `writeback_wait_iff_congested`).
    WaitIffCongested,
}

/// One tracepoint hit. Kernel tracepoints carry the kernel's names; the
/// `Sim*` variants are reclaimsim's own (`reclaimsim_` prefix in text).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tracepoint {
    /// `mm_vmscan_kswapd_sleep`: kswapd goes to sleep.
    KswapdSleep {
        /// Its node.
        nid: u8,
    },
    /// `mm_vmscan_kswapd_wake`: kswapd starts `balance_pgdat`.
    KswapdWake {
        /// Its node.
        nid: u8,
    },
    /// `mm_vmscan_wakeup_kswapd`: an allocation wakes a node's kswapd.
    WakeupKswapd {
        /// The node whose kswapd is woken.
        nid: u8,
        /// The allocation's highest zone (the classzone kswapd balances up to).
        zid: ZoneId,
    },
    /// `mm_vmscan_direct_reclaim_begin` (`memcg`: `mm_vmscan_memcg_reclaim_begin`).
    ReclaimBegin {
        /// Memory-cgroup limit reclaim.
        memcg: bool,
    },
    /// `mm_vmscan_direct_reclaim_end` (`memcg`: `mm_vmscan_memcg_reclaim_end`).
    ReclaimEnd {
        /// Memory-cgroup limit reclaim.
        memcg: bool,
        /// Pages freed by the call.
        nr_reclaimed: u64,
    },
    /// `mm_vmscan_lru_isolate`.
    LruIsolate {
        /// Pages asked for.
        nr_requested: u64,
        /// Pages looked at.
        nr_scanned: u64,
        /// Pages taken off the list.
        nr_taken: u64,
        /// The list.
        lru: Lru,
    },
    /// `mm_vmscan_lru_shrink_inactive`.
    ShrinkInactive {
        /// Pages isolated.
        nr_scanned: u64,
        /// Pages freed.
        nr_reclaimed: u64,
        /// What `shrink_folio_list` met.
        stat: ShrinkStat,
        /// Scan priority.
        priority: i32,
        /// File (else anon) list.
        file: bool,
        /// The node reclaimed (0 when reclaim takes every node's pages).
        nid: u8,
        /// The zone whose lists were shrunk (per-zone lists, before v4.8; else Normal).
        zid: ZoneId,
    },
    /// `mm_vmscan_lru_shrink_active`.
    ShrinkActive {
        /// Pages isolated.
        nr_taken: u64,
        /// Pages put back active.
        nr_active: u64,
        /// Pages deactivated.
        nr_deactivated: u64,
        /// Pages found referenced.
        nr_referenced: u64,
        /// Scan priority.
        priority: i32,
        /// File (else anon) list.
        file: bool,
        /// The node reclaimed (0 when reclaim takes every node's pages).
        nid: u8,
    },
    /// `mm_vmscan_write_folio`: reclaim submits a dirty page for write.
    WriteFolio {
        /// The page.
        pfn: Pfn,
    },
    /// `mm_vmscan_throttled`.
    Throttled {
        /// The node whose reclaim waited (the node shrunk, or for an
        /// allocation that made no progress the first node of its zonelist).
        nid: u8,
        /// The wait's timeout, microseconds.
        usec_timeout: u64,
        /// The time waited, microseconds.
        usec_delayed: u64,
        /// Why.
        reason: ThrottleState,
    },
    /// `mm_lru_insertion`: a new page enters the LRU.
    LruInsertion {
        /// The page.
        pfn: Pfn,
    },
    /// `mm_lru_activate`: an access promotes an inactive page.
    LruActivate {
        /// The page.
        pfn: Pfn,
    },
    /// `mm_filemap_add_to_page_cache`.
    FilemapAdd {
        /// The page.
        pfn: Pfn,
    },
    /// `mm_filemap_delete_from_page_cache`.
    FilemapDelete {
        /// The page.
        pfn: Pfn,
        /// Its file.
        file: FileId,
        /// Its index in the file.
        index: u32,
    },
    /// `reclaimsim_lru_add`: which page a newly listed frame holds, how it came
    /// in, and whether a shadow entry was found in its slot.
    SimLruAdd {
        /// The page.
        pfn: Pfn,
        /// A shadow was found (a refault the policy checks).
        shadow: bool,
        /// How the page came in (`Origin` of the policy, by name).
        origin: &'static str,
    },
    /// `reclaimsim_refault`: the workingset check of a refaulting page.
    SimRefault {
        /// The page.
        pfn: Pfn,
        /// Refault distance (evictions and activations since its eviction).
        distance: u64,
        /// The workingset size the distance was compared with.
        workingset_size: u64,
        /// Which lists make up that size: bit `n` is kernel list `n` (`enum lru_list`).
        workingset_lists: u8,
        /// `PG_workingset` was recorded in the shadow.
        workingset: bool,
        /// The page was activated.
        activated: bool,
    },
    /// `reclaimsim_evict`: reclaim frees a page, leaving a shadow or none.
    SimEvict {
        /// The page (still owned when recorded).
        pfn: Pfn,
        /// Scan priority.
        priority: i32,
        /// The shadow's eviction stamp, if one was left.
        shadow: Option<u64>,
    },
    /// `reclaimsim_lru_move`: reclaim moves one page between active and inactive.
    SimLruMove {
        /// The page.
        pfn: Pfn,
        /// Moved to the active list (else deactivated).
        to_active: bool,
        /// Why, in a word (`referenced`, `deactivate`, `swap_full`...).
        why: &'static str,
    },
    /// `reclaimsim_direct_reclaim_retry`: direct reclaim starts its second
    /// round with forced deactivation (each round counts one `allocstall`).
    SimReclaimRetry,
}

/// Where tracepoint records go.
pub trait TraceSink {
    /// Records `tp`, fired by `task` at virtual time `at_ns`; `mm` is the state
    /// as the tracepoint fires (the page of a per-page record is still owned).
    fn record(&mut self, at_ns: u64, task: Task, mm: &Mm, tp: &Tracepoint);
}

/// The installed sink and the context the engine last set.
pub struct Tracer {
    /// The sink.
    pub sink: Box<dyn TraceSink>,
    /// Virtual time of the running actor.
    pub now_ns: u64,
    /// The running actor.
    pub task: Task,
}

impl std::fmt::Debug for Tracer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tracer").field("now_ns", &self.now_ns).field("task", &self.task).finish()
    }
}

impl Mm {
    /// Records the tracepoint `tp` builds, if recording is on. Inlined: when
    /// off, a call costs one test and `tp` never runs.
    #[inline(always)]
    pub fn trace(&mut self, tp: impl FnOnce() -> Tracepoint) {
        if self.tracer.is_some() {
            self.record(tp());
        }
    }

    /// [`Mm::trace`] in code instantiated for recording on (`ON`) or off: a
    /// loop that tests [`Mm::tracing`] once and runs its `ON = false` copy has
    /// no test left at its per-page sites.
    #[inline(always)]
    pub fn trace_if<const ON: bool>(&mut self, tp: impl FnOnce() -> Tracepoint) {
        if ON {
            self.trace(tp);
        }
    }

    /// True while recording (for a call site that records several things).
    #[inline(always)]
    pub fn tracing(&self) -> bool {
        self.tracer.is_some()
    }

    /// Records `tp` at virtual time `at_ns`, which becomes the running actor's clock.
    #[inline(always)]
    pub fn trace_at(&mut self, at_ns: u64, tp: impl FnOnce() -> Tracepoint) {
        if self.tracer.is_some() {
            self.trace_time(at_ns);
            self.record(tp());
        }
    }

    /// Records `tp` as fired by `task` at `at_ns` (another actor than the
    /// running one, as when an allocation wakes kswapd); the context is kept.
    #[inline(always)]
    pub fn trace_as(&mut self, task: Task, at_ns: u64, tp: impl FnOnce() -> Tracepoint) {
        if let Some(t) = self.tracer.as_mut() {
            let saved = (t.task, t.now_ns);
            (t.task, t.now_ns) = (task, at_ns);
            self.record(tp());
            if let Some(t) = self.tracer.as_mut() {
                (t.task, t.now_ns) = saved;
            }
        }
    }

    /// Sets who runs and when, for the records that follow (no-op when off).
    #[inline(always)]
    pub fn trace_context(&mut self, task: Task, now_ns: u64) {
        if let Some(t) = self.tracer.as_mut() {
            t.task = task;
            t.now_ns = now_ns;
        }
    }

    /// Moves the running actor's clock (time passing inside a reclaim call).
    #[inline(always)]
    pub fn trace_time(&mut self, now_ns: u64) {
        if let Some(t) = self.tracer.as_mut() {
            t.now_ns = now_ns;
        }
    }

    #[cold]
    #[inline(never)]
    fn record(&mut self, tp: Tracepoint) {
        let Some(mut t) = self.tracer.take() else { return };
        t.sink.record(t.now_ns, t.task, self, &tp);
        self.tracer = Some(t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::rc::Rc;

    struct Log(Rc<RefCell<Vec<(u64, Task, Tracepoint)>>>);

    impl TraceSink for Log {
        fn record(&mut self, at_ns: u64, task: Task, _mm: &Mm, tp: &Tracepoint) {
            self.0.borrow_mut().push((at_ns, task, *tp));
        }
    }

    #[test]
    fn records_only_when_a_sink_is_installed_with_the_context() {
        let mut mm = Mm::new(4, 0);
        let mut built = 0;
        mm.trace(|| {
            built += 1;
            Tracepoint::KswapdWake { nid: 0 }
        });
        assert_eq!(built, 0, "a record was built with recording off");
        let log = Rc::new(RefCell::new(Vec::new()));
        mm.tracer = Some(Box::new(Tracer { sink: Box::new(Log(log.clone())), now_ns: 0, task: Task::Thread(0) }));
        mm.trace_context(Task::Thread(3), 5);
        mm.trace(|| Tracepoint::WakeupKswapd { nid: 1, zid: ZoneId::Normal });
        mm.trace_as(Task::Kswapd(1), 6, || Tracepoint::KswapdWake { nid: 1 });
        mm.trace_time(9);
        mm.trace(|| Tracepoint::ReclaimBegin { memcg: false });
        mm.trace_at(12, || Tracepoint::ReclaimEnd { memcg: false, nr_reclaimed: 1 });
        mm.trace_if::<false>(|| Tracepoint::SimReclaimRetry);
        mm.trace_if::<true>(|| Tracepoint::KswapdSleep { nid: 0 });
        assert_eq!(
            *log.borrow(),
            vec![
                (5, Task::Thread(3), Tracepoint::WakeupKswapd { nid: 1, zid: ZoneId::Normal }),
                (6, Task::Kswapd(1), Tracepoint::KswapdWake { nid: 1 }),
                (9, Task::Thread(3), Tracepoint::ReclaimBegin { memcg: false }),
                (12, Task::Thread(3), Tracepoint::ReclaimEnd { memcg: false, nr_reclaimed: 1 }),
                (12, Task::Thread(3), Tracepoint::KswapdSleep { nid: 0 }),
            ]
        );
    }
}
