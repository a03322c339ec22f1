//! The reclaim policy interface: one LRU design per implementation.

pub mod classic;
pub mod clock;
pub mod mglru;
pub mod noded;
pub mod registry;

use crate::control::ScanControl;
use crate::direct::PassTime;
use crate::memcg_lru::MemcgLruForm;
use crate::pageout::PageoutEnv;
use mm::{Mm, Pfn, Shadow};

/// How a page came to be inserted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A new anonymous page from a fault (`do_anonymous_page`).
    AnonFault,
    /// An anonymous page read back from swap by a fault.
    SwapIn,
    /// A file page read into the page cache by `read()` (outside a page fault).
    FileRead,
    /// A file page read into the page cache by a fault on a file mapping.
    FileFault,
}

impl Origin {
    /// True if the page is instantiated inside a page fault (`lru_gen_in_fault()`).
    pub fn in_fault(self) -> bool {
        !matches!(self, Origin::FileRead)
    }
}

/// How a page already on the LRU was accessed, in the ways a policy hears of
/// (an access through a page table only sets the PTE's accessed bit, which
/// reclaim finds later).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccessKind {
    /// `folio_mark_accessed()`: a `read()`/`write()` through a file
    /// descriptor, or `get_user_pages(FOLL_TOUCH)`.
    MarkAccessed,
    /// A swap fault found the page in the swap cache (a minor fault).
    SwapCacheHit,
    /// A swap fault just read the page from swap and it is already on the LRU
    /// (its per-CPU add batch was drained): before v5.9 `do_swap_page()`
    /// activated it here. A page still in the batch is not reported, as
    /// `activate_page()` skips pages without `PG_lru`.
    SwapInListed,
}

/// Gauges a policy reports, in pages (`nr_inactive_anon`, ...).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LruSizes {
    /// `nr_inactive_anon`.
    pub inactive_anon: u64,
    /// `nr_active_anon`.
    pub active_anon: u64,
    /// `nr_inactive_file`.
    pub inactive_file: u64,
    /// `nr_active_file`.
    pub active_file: u64,
    /// `nr_unevictable`.
    pub unevictable: u64,
}

impl std::iter::Sum for LruSizes {
    /// The sizes of several lruvecs' lists together.
    fn sum<I: Iterator<Item = LruSizes>>(iter: I) -> LruSizes {
        iter.fold(LruSizes::default(), |a, b| LruSizes {
            inactive_anon: a.inactive_anon + b.inactive_anon,
            active_anon: a.active_anon + b.active_anon,
            inactive_file: a.inactive_file + b.inactive_file,
            active_file: a.active_file + b.active_file,
            unevictable: a.unevictable + b.unevictable,
        })
    }
}

impl LruSizes {
    /// Pages on all lists.
    pub fn total(&self) -> u64 {
        self.inactive_anon + self.active_anon + self.inactive_file + self.active_file + self.unevictable
    }
}

/// One LRU design. Owns ordering and aging state, nothing else: it never
/// allocates frames for workloads, schedules events or touches devices.
pub trait ReclaimPolicy {
    /// The registry name.
    fn name(&self) -> &'static str;

    /// Adds a newly instantiated page to the LRU. `shadow` is the shadow entry
    /// found in its slot, if any (the refault path runs first).
    fn add_page(&mut self, mm: &mut Mm, pfn: Pfn, origin: Origin, shadow: Option<Shadow>);

    /// Page `pfn`, on the LRU, was accessed `via` one of the paths the policy hears of.
    fn on_access(&mut self, mm: &mut Mm, pfn: Pfn, via: AccessKind);

    /// One `shrink_node()` pass at `sc.priority`, advancing `clock` after each
    /// reclaim batch (a policy that does not is timed between passes; kswapd
    /// and callers outside a reclaim call pass [`Untimed`](crate::direct::Untimed)).
    fn shrink_node(&mut self, mm: &mut Mm, sc: &mut ScanControl, env: PageoutEnv, clock: &mut dyn PassTime);

    /// Writeback of a page marked `PG_reclaim` ended: rotate it for quick reclaim
    /// (`folio_rotate_reclaimable`).
    fn rotate_reclaimable(&mut self, mm: &mut Mm, pfn: Pfn);

    /// A page on the LRU is freed outside reclaim: `invalidate_mapping_pages()`
    /// (an inode shrinker dropping a clean, unmapped page) or the unmap of an
    /// OOM-killed process's anonymous page (any list, dirty or not). Take it
    /// off the lists so the caller can free it. False if the policy cannot,
    /// and the page stays. Default: false.
    fn invalidate_page(&mut self, _mm: &mut Mm, _pfn: Pfn) -> bool {
        false
    }

    /// kswapd's per-pass aging hook (`kswapd_age_node`).
    fn age_node(&mut self, mm: &mut Mm, sc: &mut ScanControl);

    /// `snapshot_refaults()`: end of a reclaim cycle. Default: nothing (a
    /// policy that compares refaults across cycles keeps its snapshot here).
    fn snapshot_refaults(&mut self, _mm: &Mm) {}

    /// A memory group's statistics flush (`cgroup_rstat_flush`): from the first
    /// call on, decisions read the group's statistics as of the last flush
    /// instead of exact values. Policies that read no group statistics ignore it.
    fn flush_group_stats(&mut self, _mm: &Mm) {}

    /// Sizes of the LRU lists.
    fn lru_sizes(&self) -> LruSizes;

    /// Sizes of the LRU lists of zone `zone` (an index into `Mm::zones`) when
    /// the policy keeps lists per zone (before v4.8); `None` when its lists
    /// hold every zone's pages. Default: `None`.
    fn zone_lru_sizes(&self, _zone: usize) -> Option<LruSizes> {
        None
    }

    /// Sizes of the LRU lists of node `node` when the policy keeps an lruvec
    /// per node ([`noded::NodedPolicy`]); `None` when its lists hold every
    /// node's pages. Default: `None`.
    fn node_lru_sizes(&self, _node: u8) -> Option<LruSizes> {
        None
    }

    /// Checks every internal invariant against `mm`; O(n), for tests and `--paranoid`.
    fn check_invariants(&self, mm: &Mm);

    /// The memcg LRU this design's global reclaim walks over a cgroup tree
    /// (MGLRU from v6.3, [`crate::memcg_lru`]). Default: `Off` (tree order).
    fn memcg_lru(&self) -> MemcgLruForm {
        MemcgLruForm::Off
    }

    /// `set_initial_priority()`: lowers the starting `sc.priority` of a root
    /// reclaim of one node whose lists have `sizes` (MGLRU from v6.3).
    /// Default: nothing.
    fn set_initial_priority(&self, _mm: &Mm, _sc: &mut ScanControl, _sizes: LruSizes) {}

    /// `lruvec_is_sizable()`: the lruvec (of node `sc.nid`) holds enough
    /// evictable pages for a scan at `sc.priority` to be worth it; asked by
    /// the memcg LRU's walk only. Default: true.
    fn lruvec_is_sizable(&self, _mm: &Mm, _sc: &ScanControl) -> bool {
        true
    }

    /// A request to the policy's control `name`: an interface of one design
    /// beyond this trait, like MGLRU's `lru_gen` debugfs file. [`ControlOp::Read`]
    /// returns the control's text as of `sc.now_ns`; [`ControlOp::Write`] runs
    /// the commands written (work done goes to `sc`) and returns an empty text.
    /// A policy lists its controls, with their syntax check, in its registry
    /// entry ([`registry::PolicyEntry::controls`]).
    ///
    /// Default: every name is [`ControlError::Unsupported`] (the kernel's
    /// `ENOENT`: the file does not exist).
    fn control(
        &mut self,
        _mm: &mut Mm,
        _name: &str,
        _op: ControlOp<'_>,
        _sc: &mut ScanControl,
        _env: PageoutEnv,
    ) -> Result<String, ControlError> {
        Err(ControlError::Unsupported)
    }
}

/// What a caller does with a policy control ([`ReclaimPolicy::control`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ControlOp<'a> {
    /// Read the control's text (a debugfs listing).
    Read,
    /// Write these commands to it.
    Write(&'a str),
}

/// Why a control request failed; displayed as the kernel's errno name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ControlError {
    /// The running policy has no control of that name (`ENOENT`).
    Unsupported,
    /// The policy refused the request, with the kernel's errno name (`EINVAL`, `ERANGE`).
    Refused(&'static str),
}

impl std::fmt::Display for ControlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ControlError::Unsupported => "ENOENT",
            ControlError::Refused(errno) => errno,
        })
    }
}

impl std::error::Error for ControlError {}

/// A policy control's declaration: its name and the syntax of what may be
/// written to it, checked before a run (a write is validated even when the
/// running policy lacks the control, which then fails with `ENOENT`).
#[derive(Debug)]
pub struct ControlSpec {
    /// The control's name (`lru_gen`).
    pub name: &'static str,
    /// One-line description.
    pub summary: &'static str,
    /// Checks the text of a write; the error names the bad piece.
    pub check: fn(&str) -> Result<(), String>,
}
