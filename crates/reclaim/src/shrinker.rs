//! Slab shrinkers: how much of a cache one reclaim pass scans.
//!
//! Models `shrink_slab()` / `do_shrink_slab()` (mm/vmscan.c up to v6.6,
//! mm/shrinker.c from v6.7). After each `shrink_node` pass (v3.x: after each
//! zone pass of kswapd and each priority pass of direct reclaim), every
//! shrinker is asked for its freeable objects (`count_objects`) and a scan
//! target is computed from the reclaim pressure; the target plus the work
//! deferred by earlier calls (`nr_deferred`) is scanned in batches
//! (`scan_objects`), each batch counted in `slabs_scanned`. Slab pages freed
//! and page-cache pages dropped on the way count as reclaimed
//! (`reclaim_state->reclaimed_slab`).
//!
//! The target's arithmetic changed over time (`shrinker_scan`):
//!
//! | form | delta | total_scan | deferred afterwards |
//! |---|---|---|---|
//! | `ratio` (v2.6..v4.15) | `(4 * nr_scanned / seeks) * freeable / (lru_pages + 1)` | `nr + delta`, at most `freeable / 2` when `delta < freeable / 4`, at most `2 * freeable` | what the loop left of total_scan (v4.11..v4.15: `nr + delta - scanned`, not modelled) |
//! | `priority` (v4.16) | `(freeable >> priority) * 4 / seeks` | as `ratio` | `nr + delta - scanned`, at least 0 |
//! | `priority-deferred` (v5.13) | as `priority` | `(nr >> priority) + delta`, at most `2 * freeable` | `nr + delta - scanned`, in `[0, 2 * freeable]` |
//!
//! A shrinker with `seeks = 0` (v4.19, `shadow_zero_seeks`) has `delta =
//! freeable / 2`. Before v3.16 (`shrink_small_caches`) the loop ran only while
//! a whole batch remained; since, also while total_scan reaches the cache size.

use crate::control::{Reclaimer, ScanControl};
use crate::policy::ReclaimPolicy;
use crate::shrinker_fs::SuperBlock;
use crate::shrinker_shadow::ShadowNodes;
use crate::shrinker_zswap::ZswapWriteback;
use crate::SWAP_CLUSTER_MAX;
use knobs::{bool_knob, History, Kind, Knob, Version};
use mm::{Mm, ShrinkerId, VmEvent};

/// KERNEL: `SHRINK_BATCH`, the default scan batch.
pub const SHRINK_BATCH: u64 = 128;
/// KERNEL: `DEFAULT_SEEKS`.
pub const DEFAULT_SEEKS: u32 = 2;

/// `do_shrink_slab`'s scan target arithmetic (see the module table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanForm {
    /// v2.6..v4.15: proportional to the LRU pages scanned.
    Ratio,
    /// v4.16 (9092c71bb724, "use sc->priority for slab shrink targets").
    Priority,
    /// v5.13 ("shrink deferred objects proportional to priority").
    PriorityDeferred,
}

impl ScanForm {
    const ALL: [ScanForm; 3] = [ScanForm::Ratio, ScanForm::Priority, ScanForm::PriorityDeferred];
    /// The value's name, as accepted by `--set shrinker_scan=...`.
    pub fn name(self) -> &'static str {
        match self {
            ScanForm::Ratio => "ratio",
            ScanForm::Priority => "priority",
            ScanForm::PriorityDeferred => "priority-deferred",
        }
    }
}

/// `count_shadow_nodes`'s limit on shadow-only tree nodes (`max_nodes`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShadowLimit {
    /// v3.15: node present pages >> 4.
    Present16,
    /// v4.10: file LRU pages >> 3.
    File8,
    /// v4.20 (95f9ab2d596e) with memory cgroups disabled: node present pages >> 3.
    Present8,
    /// v4.20 with memory cgroups (every distribution kernel): each group's
    /// list against the group's own LRU and slab pages >> 3 (S-SL7).
    Lru8,
}

impl ShadowLimit {
    const ALL: [ShadowLimit; 4] =
        [ShadowLimit::Present16, ShadowLimit::File8, ShadowLimit::Present8, ShadowLimit::Lru8];
    /// The value's name, as accepted by `--set shadow_nodes_limit=...`.
    pub fn name(self) -> &'static str {
        match self {
            ShadowLimit::Present16 => "present/16",
            ShadowLimit::File8 => "file/8",
            ShadowLimit::Present8 => "present/8",
            ShadowLimit::Lru8 => "lru/8",
        }
    }
}

/// Shrinker knobs and the version flags of their arithmetic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShrinkerConfig {
    /// `shrinker_scan`: the scan target arithmetic.
    pub scan: ScanForm,
    /// `shrink_small_caches` (v3.16): scan a cache smaller than a batch when the target covers it.
    pub small_caches: bool,
    /// `memcg_shrinkers` (v4.0): memory-cgroup limit reclaim runs the shrinkers too.
    pub memcg: bool,
    /// `inode_lru_skips_cached` (v5.16): inodes with page cache stay off the inode LRU.
    pub skip_cached_inodes: bool,
    /// `shadow_zero_seeks` (v4.19): the shadow-node shrinker has `seeks = 0`.
    pub shadow_zero_seeks: bool,
    /// `shadow_nodes_limit`: shadow-only nodes allowed before trimming.
    pub shadow_limit: ShadowLimit,
    /// `vm.vfs_cache_pressure`: dentry/inode counts are scaled by this percentage.
    pub vfs_cache_pressure: u32,
    /// `swap_cache_shadow_nodes` (v6.3..v6.17): the swap cache's tree nodes are on the shadow-node list.
    pub swap_cache_nodes: bool,
}

impl ShrinkerConfig {
    /// Today's behaviour.
    pub const TODAY: ShrinkerConfig = ShrinkerConfig {
        scan: ScanForm::PriorityDeferred,
        small_caches: true,
        memcg: true,
        skip_cached_inodes: true,
        shadow_zero_seeks: true,
        shadow_limit: ShadowLimit::Lru8,
        vfs_cache_pressure: 100,
        // The default profile's (v6.2): the swap cache's nodes join the lists from v6.3.
        swap_cache_nodes: false,
    };
}

impl Default for ShrinkerConfig {
    /// Today's behaviour.
    fn default() -> Self {
        ShrinkerConfig::TODAY
    }
}

const fn v(major: u16, minor: u16) -> Version {
    Version::new(major, minor)
}

/// The shrinker knobs, over the `shrinker` part of the reclaim configuration.
pub const KNOBS: &[Knob<ShrinkerConfig>] = &[
    Knob {
        key: "vm.vfs_cache_pressure",
        help: "dentry and inode cache pressure in percent of the LRU's (kernel default 100)",
        kind: Kind::Integer,
        history: History::Tunable { since: v(2, 6) },
        get: |c| c.vfs_cache_pressure.to_string(),
        set: |c, v| {
            c.vfs_cache_pressure = knobs::parse_u64(v, 0, 10_000)? as u32;
            Ok(())
        },
    },
    Knob {
        key: "shrinker_scan",
        help: "do_shrink_slab target: ratio (LRU scanned/LRU pages, <v4.16), priority (freeable >> priority, v4.16), priority-deferred (deferred work >> priority too, capped, v5.13)",
        kind: Kind::Choice,
        history: History::Forms(&[(v(2, 6), "ratio"), (v(4, 16), "priority"), (v(5, 13), "priority-deferred")]),
        get: |c| c.scan.name().into(),
        set: |c, v| {
            c.scan = ScanForm::ALL.into_iter().find(|f| f.name() == v).ok_or("ratio, priority or priority-deferred")?;
            Ok(())
        },
    },
    bool_knob!(
        "shrink_small_caches",
        small_caches,
        History::since(3, 16),
        "v3.16: a cache smaller than a scan batch is scanned when the target covers it; off: only whole batches"
    ),
    bool_knob!(
        "memcg_shrinkers",
        memcg,
        History::since(4, 0),
        "v4.0: memory-cgroup limit reclaim runs the (memcg-aware) shrinkers; off: only global reclaim does"
    ),
    bool_knob!(
        "inode_lru_skips_cached",
        skip_cached_inodes,
        History::since(5, 16),
        "v5.16: unused inodes with page cache stay off the inode LRU (no inode steals); off: the inode shrinker drops their clean pages (pginodesteal)"
    ),
    bool_knob!(
        "shadow_zero_seeks",
        shadow_zero_seeks,
        History::since(4, 19),
        "v4.19: the shadow-node shrinker has seeks=0 (scans half the excess each call); off: seeks=2"
    ),
    Knob {
        key: "shadow_nodes_limit",
        help: "shadow-only page-cache nodes kept before the shadow shrinker trims: present/16 (v3.15), file/8 (v4.10), lru/8 (v4.20 with memory cgroups: each group's list against its own pages), present/8 (v4.20 with memory cgroups disabled)",
        kind: Kind::Choice,
        history: History::Forms(&[(v(3, 15), "present/16"), (v(4, 10), "file/8"), (v(4, 20), "lru/8")]),
        get: |c| c.shadow_limit.name().into(),
        set: |c, v| {
            c.shadow_limit = ShadowLimit::ALL
                .into_iter()
                .find(|f| f.name() == v)
                .ok_or("present/16, file/8, present/8 or lru/8")?;
            Ok(())
        },
    },
    bool_knob!(
        "swap_cache_shadow_nodes",
        swap_cache_nodes,
        History::Behaviour { since: Some(v(6, 3)), until: Some(v(6, 17)) },
        "v6.3..v6.17: the swap cache's tree nodes (radix_tree_node slab), charged to no group, sit on the root group's shadow-node list and the shadow shrinker trims them (Yang Yang's \"swap_state: update shadow_nodes for anonymous page\", v6.3; from v5.9 the swap cache held shadows but its nodes were never trimmed); v6.18's swap tables hold shadows without nodes"
    ),
];

/// The reclaim pressure a shrinker call is sized by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pressure {
    /// `sc->priority`.
    pub priority: i32,
    /// LRU pages scanned by the pass (`ratio` form).
    pub nr_scanned: u64,
    /// Reclaimable LRU pages (`ratio` form's `lru_pages`).
    pub lru_pages: u64,
}

/// What one `scan_objects` call did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Scanned {
    /// Objects freed.
    pub freed: u64,
    /// Page-cache pages dropped on the way (inode steals).
    pub stolen: u64,
}

/// The caller of a shrinker: the node's state and who is reclaiming.
pub struct ShrinkCtx<'a> {
    /// The node.
    pub mm: &'a mut Mm,
    /// The LRU policy (inode steals take pages off its lists).
    pub policy: &'a mut dyn ReclaimPolicy,
    /// The shrinker knobs.
    pub cfg: ShrinkerConfig,
    /// Who reclaims (kswapd or not, for the steal counters).
    pub reclaimer: Reclaimer,
    /// `sc->target_mem_cgroup`: memcg-aware shrinkers shrink the lists of
    /// this group's subtree only (the root: every group's).
    pub target: mm::CgId,
}

/// One registered shrinker (`struct shrinker`).
pub trait Shrinker {
    /// Which `nr_deferred` slot is this shrinker's.
    fn id(&self) -> ShrinkerId;
    /// `seeks`: the cost of recreating an object, relative to a page.
    fn seeks(&self, cfg: &ShrinkerConfig) -> u32;
    /// `batch`: objects per `scan_objects` call.
    fn batch(&self) -> u64;
    /// `count_objects`: freeable objects (zswap's consumes state as it counts).
    fn count(&self, cx: &mut ShrinkCtx) -> u64;
    /// `scan_objects`: scans up to `nr_to_scan` objects.
    fn scan(&self, cx: &mut ShrinkCtx, nr_to_scan: u64) -> Scanned;
    /// True if a scan that freed nothing returns `SHRINK_STOP`, ending the call.
    fn stops_when_idle(&self) -> bool {
        false
    }
}

/// Scan target (`delta`) for `freeable` objects under pressure `p`.
pub fn scan_delta(form: ScanForm, seeks: u32, freeable: u64, p: Pressure) -> u64 {
    if seeks == 0 {
        return freeable / 2;
    }
    match form {
        ScanForm::Ratio => {
            // v3.x..v4.15 count a pass that scanned nothing as a batch.
            let nr_scanned = if p.nr_scanned == 0 { SWAP_CLUSTER_MAX } else { p.nr_scanned };
            (4 * nr_scanned / seeks as u64) * freeable / (p.lru_pages + 1)
        }
        ScanForm::Priority | ScanForm::PriorityDeferred => (freeable >> p.priority) * 4 / seeks as u64,
    }
}

/// `do_shrink_slab()`: one shrinker's call; returns what its scans did.
pub fn do_shrink_slab(cx: &mut ShrinkCtx, s: &dyn Shrinker, p: Pressure) -> Scanned {
    let freeable = s.count(cx);
    if freeable == 0 {
        return Scanned::default();
    }
    let form = cx.cfg.scan;
    let nr = std::mem::take(&mut cx.mm.slab.nr_deferred[s.id() as usize]);
    let delta = scan_delta(form, s.seeks(&cx.cfg), freeable, p);
    let mut total_scan = match form {
        ScanForm::PriorityDeferred => ((nr >> p.priority) + delta).min(2 * freeable),
        ScanForm::Ratio | ScanForm::Priority => {
            let mut t = nr + delta;
            // Deferred windup may not empty the cache unless the delta itself is large.
            if delta < freeable / 4 {
                t = t.min(freeable / 2);
            }
            t.min(2 * freeable)
        }
    };
    let batch = s.batch();
    let (mut scanned, mut done) = (0, Scanned::default());
    while total_scan >= batch || (cx.cfg.small_caches && total_scan >= freeable) {
        let nr_to_scan = batch.min(total_scan);
        let r = s.scan(cx, nr_to_scan);
        if r.freed == 0 && s.stops_when_idle() {
            break;
        }
        done.freed += r.freed;
        done.stolen += r.stolen;
        cx.mm.stat.count(VmEvent::SlabsScanned, nr_to_scan);
        total_scan -= nr_to_scan;
        scanned += nr_to_scan;
    }
    cx.mm.slab.nr_deferred[s.id() as usize] = match form {
        ScanForm::Ratio => total_scan,
        ScanForm::Priority => (nr + delta).saturating_sub(scanned),
        ScanForm::PriorityDeferred => (nr + delta).saturating_sub(scanned).min(2 * freeable),
    };
    done
}

/// `shrink_slab()` after a `shrink_node` pass: runs every shrinker under the
/// pass's pressure and counts freed slab pages and dropped page-cache pages
/// as reclaimed. Memory-cgroup limit reclaim runs them only with `memcg_shrinkers`.
pub fn shrink_slab(mm: &mut Mm, policy: &mut dyn ReclaimPolicy, sc: &mut ScanControl, cfg: ShrinkerConfig) {
    if sc.reclaimer.is_cgroup() && !cfg.memcg {
        return;
    }
    let sizes = policy.lru_sizes();
    let anon = if mm.swap.nr_free() > 0 { sizes.inactive_anon + sizes.active_anon } else { 0 };
    let p = Pressure {
        priority: sc.priority,
        nr_scanned: sc.nr_scanned,
        lru_pages: sizes.inactive_file + sizes.active_file + anon,
    };
    let slab_before = mm.slab.reclaimable_pages();
    let mut cx = ShrinkCtx { mm, policy, cfg, reclaimer: sc.reclaimer, target: sc.target_memcg };
    let mut stolen = 0;
    let written_back = cx.mm.zswap.as_ref().map_or(0, |z| z.stat().written_back_pages);
    // Registration order: the workingset shrinker at boot, zswap's at its
    // initcall, the superblock's at mount.
    for s in [&ShadowNodes as &dyn Shrinker, &ZswapWriteback, &SuperBlock] {
        stolen += do_shrink_slab(&mut cx, s, p).stolen;
    }
    sc.work.zswap_written_back += cx.mm.zswap.as_ref().map_or(0, |z| z.stat().written_back_pages) - written_back;
    let freed = slab_before.saturating_sub(cx.mm.slab.reclaimable_pages()) + stolen;
    sc.nr_reclaimed += freed;
    sc.work.pages_freed += freed;
}
