//! Memory-cgroup limit reclaim: a charging task frees pages of a group over
//! its limit (`memory.max`, `memory.high`, or the v1 `memory.limit_in_bytes`).
//!
//! Models `try_to_free_mem_cgroup_pages()`, mm/vmscan.c (v6.x): a scan control
//! aimed at the group (`target_mem_cgroup`: only its subtree is walked, and
//! protection is relative to it) with
//! `nr_to_reclaim = max(nr_pages, SWAP_CLUSTER_MAX)`, `may_unmap`,
//! `may_swap` from the caller, then the same priority loop as direct reclaim
//! (`do_try_to_free_pages`) without the `allocstall` count. Counters: the scan
//! and steal totals by type (`pgscan_anon/file`, `pgsteal_anon/file`) are
//! counted; `pgscan/pgsteal_kswapd/direct` and `pgrefill` are not, except
//! `pgscan/pgsteal_direct` from v7.1 for a limit's reclaim (`vmstat_direct`).
//!
//! Simplification S-MC1: the v1 group (the root here) holds every page of
//! the machine, so its lruvec is the node's lruvec.
//! Simplification S-MC7: every policy is driven through `shrink_node`; MGLRU's
//! memcg path (`lru_gen_shrink_lruvec` for a target group) is not modelled
//! separately (in a cgroup v2 tree its move of a group that aged to the young
//! generation of the memcg LRU is, in `tree.rs`), and only the classic LRU is
//! validated against a kernel.

use crate::control::{Reclaimer, ScanControl};
use crate::direct::{do_try_to_free_pages, PassTime};
use crate::pageout::PageoutEnv;
use crate::policy::ReclaimPolicy;
use crate::SWAP_CLUSTER_MAX;
use mm::{CgId, Mm};

/// What one `try_to_free_mem_cgroup_pages()` call asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemcgReclaim {
    /// The group over its limit, or written to (`sc->target_mem_cgroup`).
    pub target: CgId,
    /// Pages wanted (at least `SWAP_CLUSTER_MAX` are asked for).
    pub nr_pages: u64,
    /// `MEMCG_RECLAIM_MAY_SWAP`.
    pub may_swap: bool,
    /// `memory.reclaim`'s `swappiness=`, in place of the configured one.
    pub swappiness: Option<u32>,
    /// The scans and steals count in `/proc/vmstat`'s `pgscan/pgsteal_direct`
    /// (v7.1+ for a limit's reclaim; memory.reclaim's count as `_proactive`).
    pub vmstat_direct: bool,
}

impl MemcgReclaim {
    /// A charge's reclaim of `nr_pages` in `target`, swapping allowed, counted
    /// in `/proc/vmstat` if `vmstat_direct`.
    pub fn charge(target: CgId, nr_pages: u64, vmstat_direct: bool) -> MemcgReclaim {
        MemcgReclaim { target, nr_pages, may_swap: true, swappiness: None, vmstat_direct }
    }
}

/// Reclaims as `req` asks (a charge that would exceed `req.target`'s limit,
/// or a `memory.reclaim` write); returns the scan control with what it did
/// (`nr_reclaimed`, pageouts, work). `clock` lets time pass between its
/// priority passes, as in direct reclaim.
pub fn try_to_free_mem_cgroup_pages(
    mm: &mut Mm,
    policy: &mut dyn ReclaimPolicy,
    env: PageoutEnv,
    req: MemcgReclaim,
    clock: &mut dyn PassTime,
) -> ScanControl {
    let mut sc = ScanControl::new(Reclaimer::Memcg, req.nr_pages.max(SWAP_CLUSTER_MAX));
    // KERNEL: may_writepage = !laptop_mode; laptop mode is off.
    sc.may_writepage = true;
    sc.may_unmap = true;
    sc.may_swap = req.may_swap;
    sc.target_memcg = req.target;
    sc.proactive_swappiness = req.swappiness;
    sc.cgroup_vmstat = req.vmstat_direct;
    do_try_to_free_pages(mm, policy, env, &mut sc, clock);
    sc
}
