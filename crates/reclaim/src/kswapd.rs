//! kswapd: the per-node background reclaimer.
//!
//! Models `wakeup_kswapd()`, `balance_pgdat()`, `kswapd_shrink_node()`,
//! `pgdat_balanced()` and `prepare_kswapd_sleep()`, mm/vmscan.c (v6.x), for
//! order-0 allocations. `balance_pgdat` is cut into steps — one iteration of its
//! priority loop, i.e. one `shrink_node` pass, per [`Kswapd::step`] — so that the
//! engine can interleave kswapd with the workload in virtual time.
//!
//! One [`Kswapd`] per node: it balances its node's zones up to the highest
//! zone type it was woken for (`kswapd_highest_zoneidx`, the classzone).
//!
//! Before v4.8 (`lru_layout=zone`) the policy is a
//! [`ZonedPolicy`](crate::zoned::ZonedPolicy), whose `shrink_node` for kswapd
//! is `balance_pgdat`'s loop over the node's unbalanced zones, each with its
//! own lists and, under the flat priority, its own target.
//!
//! v5.0+: a run begun while zones up to its classzone are boosted
//! ([`mm::pageblock`]) first reclaims the boost without swapping or writing
//! (`nr_boost_reclaim`), falls back to normal reclaim if the node is not
//! balanced, and takes the boosts it saw off the zones when it ends.
//!
//! Simplifications: S-KS1: order 0 only (no compaction, no `kswapd_order`;
//! kcompactd's wakeup after a boosted run is only counted, as
//! `compact_daemon_wake`); S-KS3: `laptop_mode` is 0.

use crate::config::DirtyThrottle;
use crate::control::{Reclaimer, ScanControl};
use crate::direct::Untimed;
use crate::pageout::PageoutEnv;
use crate::policy::ReclaimPolicy;
use crate::watermark::{user_classzone, zone_watermark_ok};
use crate::{DEF_PRIORITY, MAX_RECLAIM_RETRIES, SWAP_CLUSTER_MAX};
use mm::{Mm, VmEvent, Watermark, ZoneId};

/// Some zone of the machine is above `mark` for a user page (its reserve
/// against the user classzone included): the test of allocations that must
/// not enter reclaim (readahead).
pub fn watermark_ok(mm: &Mm, mark: Watermark) -> bool {
    let class = user_classzone(mm);
    (0..mm.zones.len()).any(|z| zone_watermark_ok(mm, z, mark, class))
}

/// `pgdat_watermark_boosted()`: some zone of `node` up to `classzone` has a boost.
pub fn watermark_boosted(mm: &Mm, node: u8, classzone: ZoneId) -> bool {
    boosted_zones(mm, node, classzone).next().is_some()
}

/// The populated zones of `node` up to `classzone` with a boost (zone indexes).
fn boosted_zones(mm: &Mm, node: u8, classzone: ZoneId) -> impl Iterator<Item = usize> + '_ {
    (0..mm.zones.len()).filter(move |&i| {
        let z = &mm.zones[i];
        z.node == node && z.managed > 0 && z.id <= classzone && z.watermark_boost > 0
    })
}

/// `pgdat_balanced()` of `node` for `classzone`. From v4.8 (`any_zone`) one
/// populated zone up to the classzone above its high watermark plus its
/// reserve against the classzone is enough; before, every such zone must be
/// above its high watermark (its own classzone: no reserve). A node with no
/// such zone is balanced.
pub fn pgdat_balanced(mm: &Mm, node: u8, classzone: ZoneId, any_zone: bool) -> bool {
    let mut eligible = (0..mm.zones.len()).filter(|&i| {
        let z = &mm.zones[i];
        z.node == node && z.managed > 0 && z.id <= classzone
    });
    if any_zone {
        let mut eligible = eligible.peekable();
        eligible.peek().is_none() || eligible.any(|i| zone_watermark_ok(mm, i, Watermark::High, classzone))
    } else {
        eligible.all(|i| zone_watermark_ok(mm, i, Watermark::High, mm.zones[i].id))
    }
}

#[derive(Clone, Copy, Debug)]
struct Balancing {
    priority: i32,
    nr_reclaimed: u64,
    /// Before v3.11: pages reclaimed since the priority loop last started at `DEF_PRIORITY`.
    loop_reclaimed: u64,
    /// `nr_boost_reclaim`: boost pages still to reclaim without swapping or writing.
    boost_reclaim: u64,
}

/// kswapd's reclaim state for one node.
#[derive(Clone, Debug)]
pub struct Kswapd {
    /// `pgdat->kswapd_failures`: balance runs in a row that reclaimed nothing.
    pub failures: u32,
    balancing: Option<Balancing>,
    /// The node.
    pub node: u8,
    /// The classzone of the current (or last) balance run.
    pub classzone: ZoneId,
    /// `pgdat->kswapd_highest_zoneidx`: the highest classzone asked for since the run began.
    pending: Option<ZoneId>,
    /// v4.8+: the node is balanced when any eligible zone is (see [`pgdat_balanced`]).
    any_zone: bool,
    /// Reclaim may only take this node's pages (more than one node).
    only_node: bool,
    /// `zone_boosts[]`: each boosted zone's boost when the run began (zone index, pages).
    zone_boosts: Vec<(usize, u64)>,
}

/// What a [`Kswapd::step`] did.
#[derive(Debug)]
pub struct KswapdStep {
    /// The scan control of the pass (work done, pages submitted for write).
    pub sc: ScanControl,
    /// `balance_pgdat` returned: kswapd goes on to `kswapd_try_to_sleep`.
    pub finished: bool,
}

impl Kswapd {
    /// kswapd of `node` on `mm`, with v4.8+'s any-zone balance test or not.
    pub fn new(mm: &Mm, node: u8, any_zone: bool) -> Kswapd {
        Kswapd {
            failures: 0,
            balancing: None,
            node,
            classzone: user_classzone(mm),
            pending: None,
            any_zone,
            only_node: mm.nodes.len() > 1,
            zone_boosts: Vec::new(),
        }
    }

    /// True while a `balance_pgdat` run is in progress.
    pub fn is_balancing(&self) -> bool {
        self.balancing.is_some()
    }

    fn balanced(&self, mm: &Mm, classzone: ZoneId) -> bool {
        pgdat_balanced(mm, self.node, classzone, self.any_zone)
    }

    /// `wakeup_kswapd()` for an allocation whose highest zone is `classzone`:
    /// raises `kswapd_highest_zoneidx`, then tells whether a sleeping kswapd
    /// should be woken (not hopeless; not balanced for that classzone, or boosted).
    pub fn wake_request(&mut self, mm: &Mm, classzone: ZoneId) -> bool {
        self.pending = Some(self.pending.map_or(classzone, |p| p.max(classzone)));
        self.failures < MAX_RECLAIM_RETRIES
            && (!self.balanced(mm, classzone) || watermark_boosted(mm, self.node, classzone))
    }

    /// `prepare_kswapd_sleep()`: may kswapd go to sleep? (For the classzone of
    /// its last run, or a higher one asked for meanwhile.)
    pub fn ready_to_sleep(&self, mm: &Mm) -> bool {
        let class = self.pending.map_or(self.classzone, |p| p.max(self.classzone));
        self.failures >= MAX_RECLAIM_RETRIES || self.balanced(mm, class)
    }

    /// Starts a `balance_pgdat` run, for the highest classzone asked for.
    pub fn begin(&mut self, mm: &mut Mm) {
        debug_assert!(self.balancing.is_none());
        if let Some(class) = self.pending.take() {
            self.classzone = class;
        }
        mm.stat.count(VmEvent::Pageoutrun, 1);
        let (node, class) = (self.node, self.classzone);
        self.zone_boosts = boosted_zones(mm, node, class).map(|i| (i, mm.zones[i].watermark_boost)).collect();
        let boost_reclaim = self.zone_boosts.iter().map(|b| b.1).sum();
        self.balancing = Some(Balancing { priority: DEF_PRIORITY, nr_reclaimed: 0, loop_reclaimed: 0, boost_reclaim });
    }

    /// Runs one iteration of `balance_pgdat`'s priority loop.
    ///
    /// With `kswapd_flat_priority` (v3.11+) a pass reclaims towards the high
    /// watermark and priority drops when scanning fell short or nothing was
    /// reclaimed, down to 1. Without it (v3.9) a pass scans its whole budget
    /// (`nr_to_reclaim = ULONG_MAX`), priority drops until 32 pages have been
    /// reclaimed since the loop started, then the loop restarts at
    /// `DEF_PRIORITY` (`goto loop_again`); at priority 0 the run ends.
    pub fn step(&mut self, mm: &mut Mm, policy: &mut dyn ReclaimPolicy, env: PageoutEnv) -> KswapdStep {
        let mut sc = ScanControl::new(Reclaimer::Kswapd, 0);
        sc.priority = self.balancing.as_ref().expect("kswapd step outside balance_pgdat").priority;
        sc.now_ns = env.now_ns;
        sc.reclaim_idx = self.classzone;
        sc.nid = self.only_node.then_some(self.node);
        let balanced = self.balanced(mm, self.classzone);
        let b = self.balancing.as_mut().expect("balancing above");
        if !balanced && b.boost_reclaim > 0 {
            // Not balanced: the boost waits, normal reclaim starts over (`goto restart`).
            b.boost_reclaim = 0;
            b.priority = DEF_PRIORITY;
            sc.priority = DEF_PRIORITY;
        }
        let boosted = b.boost_reclaim > 0;
        if balanced && !boosted {
            // Balanced: forget the dirty/writeback/congested node flags (and the zones' before v4.8).
            mm.dirty.clear_flags();
            let node = self.node;
            mm.zones.iter_mut().filter(|z| z.node == node).for_each(|z| z.reclaim_flags = Default::default());
            return self.finish(mm, policy, sc);
        }
        // A boosted pass neither swaps nor writes: it is to relieve, not to issue I/O.
        sc.may_swap = !boosted;
        sc.may_writepage = !boosted;
        policy.age_node(mm, &mut sc);
        let flat = env.dirty.kswapd_flat_priority;
        // kswapd_shrink_node(): reclaim up to the eligible zones' high watermarks, at least a batch each.
        sc.nr_to_reclaim = if flat {
            let eligible = mm.zones.iter().filter(|z| z.node == self.node && z.managed > 0 && z.id <= self.classzone);
            eligible.map(|z| z.wmark(Watermark::High).max(SWAP_CLUSTER_MAX)).sum()
        } else {
            u64::MAX
        };
        sc.nr_scanned = 0;
        policy.shrink_node(mm, &mut sc, env, &mut Untimed);
        crate::shrinker::shrink_slab(mm, policy, &mut sc, env.shrinker);
        if env.dirty.throttle == DirtyThrottle::Stall {
            // v3.11 kswapd_shrink_zone(): the writeback flag is re-learnt every pass.
            mm.dirty.pgdat_writeback = false;
        }
        let reclaimed = sc.nr_reclaimed;
        if reclaimed > 0 {
            self.failures = 0;
        }
        let b = self.balancing.as_mut().expect("balancing above");
        // MGLRU's set_initial_priority() may have started the pass lower: the loop goes on from there.
        b.priority = sc.priority;
        b.nr_reclaimed += reclaimed;
        if sc.throttle.is_some() {
            // S-TH1: the pass is repeated at this priority after the wait.
            return KswapdStep { sc, finished: false };
        }
        if flat {
            // A boosted run's priority stops at DEF_PRIORITY - 2 (no writeback below it).
            let capped = boosted && b.priority == DEF_PRIORITY - 2;
            let raise_priority = !capped && sc.nr_scanned < sc.nr_to_reclaim;
            b.boost_reclaim -= b.boost_reclaim.min(reclaimed);
            if b.boost_reclaim > 0 && reclaimed == 0 {
                // No progress for the boost: the run ends rather than loop.
                return self.finish(mm, policy, sc);
            }
            if raise_priority || reclaimed == 0 {
                b.priority -= 1;
            }
            if b.priority < 1 {
                return self.finish(mm, policy, sc);
            }
        } else {
            b.loop_reclaimed += reclaimed;
            if b.loop_reclaimed >= SWAP_CLUSTER_MAX {
                b.priority = DEF_PRIORITY;
                b.loop_reclaimed = 0;
            } else {
                b.priority -= 1;
                if b.priority < 0 {
                    return self.finish(mm, policy, sc);
                }
            }
        }
        KswapdStep { sc, finished: false }
    }

    fn finish(&mut self, mm: &mut Mm, policy: &mut dyn ReclaimPolicy, sc: ScanControl) -> KswapdStep {
        let b = self.balancing.take().expect("finishing a balance run that did not start");
        if b.nr_reclaimed == 0 && !self.balanced(mm, self.classzone) {
            self.failures += 1;
        }
        if !self.zone_boosts.is_empty() {
            // The boosts seen at the start are taken off; kcompactd is woken to defragment.
            for &(z, boost) in &self.zone_boosts {
                mm.zones[z].watermark_boost -= mm.zones[z].watermark_boost.min(boost);
            }
            self.zone_boosts.clear();
            mm.stat.count(VmEvent::CompactDaemonWake, 1);
        }
        policy.snapshot_refaults(mm);
        KswapdStep { sc, finished: true }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::watermark::{setup_lowmem_reserve, setup_per_zone_wmarks, WatermarkGap, DEFAULT_LOWMEM_RESERVE_RATIO};
    use mm::{Owner, ZoneSpan};

    /// DMA32 and Normal of 4096 pages each; min_free_kbytes 1024 = 256 pages,
    /// 128 per zone; step max(32, 4) = 32: min 128, low 160, high 192. DMA32's
    /// reserve against Normal is 4096 / 256 = 16. Normal is filled to 100 free
    /// pages; DMA32 is all free (4096 > 192 + 16).
    fn machine() -> Mm {
        let spans = [
            ZoneSpan { node: 0, id: ZoneId::Dma32, pages: 4096 },
            ZoneSpan { node: 0, id: ZoneId::Normal, pages: 4096 },
        ];
        let mut mm = Mm::with_layout(&spans, vec![vec![10]], 0);
        setup_per_zone_wmarks(&mut mm.zones, 1024, WatermarkGap::Scaled { watermark_scale_factor: 10 });
        setup_lowmem_reserve(&mut mm.zones, &DEFAULT_LOWMEM_RESERVE_RATIO);
        assert_eq!((mm.zones[1].watermark[..3].to_vec(), mm.zones[0].lowmem_reserve[2]), (vec![128, 160, 192], 16));
        for _ in 0..3996 {
            mm.alloc_in(1, Owner::KERNEL, 0, 0).unwrap();
        }
        mm
    }

    /// v4.8+: the balanced DMA32 zone makes the node balanced for a Normal
    /// allocation: no wakeup. Before v4.8 Normal must be balanced too: woken.
    /// A DMA32 allocation needs only DMA32: no wakeup either way, but the
    /// classzone of the run is the highest asked for (Normal).
    #[test]
    fn woken_for_the_right_classzone() {
        let mm = machine();
        let mut any = Kswapd::new(&mm, 0, true);
        assert!(!any.wake_request(&mm, ZoneId::Normal));
        let mut mm = mm;
        let mut all = Kswapd::new(&mm, 0, false);
        assert!(all.wake_request(&mm, ZoneId::Normal));
        assert!(!all.wake_request(&mm, ZoneId::Dma32));
        all.begin(&mut mm);
        assert_eq!(all.classzone, ZoneId::Normal);
        assert!(!all.ready_to_sleep(&mm));
        let mut k = Kswapd::new(&mm, 0, false);
        k.wake_request(&mm, ZoneId::Dma32);
        k.begin(&mut mm);
        assert_eq!(k.classzone, ZoneId::Dma32);
        assert!(k.ready_to_sleep(&mm), "DMA32 alone is balanced");
        any.begin(&mut mm);
        assert!(any.ready_to_sleep(&mm));
    }
}
