//! Per-CPU page lists (mm/page_alloc.c `struct per_cpu_pages`): each CPU keeps
//! a list of free order-0 pages per zone, refilled from the zone's free lists
//! a batch at a time (`rmqueue_bulk`) and drained back to them in batches
//! once it holds `high` pages (`free_pcppages_bulk`). Pages on these lists are
//! free frames but not in `NR_FREE_PAGES`, so the watermark checks do not
//! count them ([`Mm::zone_free`]).
//!
//! Each CPU's lists hold real frames, one list per migratetype, so a refill
//! takes its frames from the zone's free lists by the allocation's type, and
//! a refill that finds too few falls back to another type's block (stealing
//! and boosting the zone's watermarks) for the frames a single allocation
//! would not have taken yet. The [`crate::FrameTable`] holds the lists:
//! every order-0 allocation and free goes through them, on the CPU the
//! engine last named ([`Mm::pcp_switch`]). Simplifications: S-PCP1 a CPU
//! whose list is empty while its zone's free lists are too takes a frame
//! from another CPU's list (the kernel's allocation fails and drains them
//! later); S-PCP3 a drain empties the freed frame's list first, then the
//! others in type order (v5.14+), for every generation.
//!
//! Three generations ([`PcpForm`]):
//! - `Batch` (v2.6..v5.13): `high = 6 * batch`, or `managed /
//!   vm.percpu_pagelist_fraction`; a full list frees `batch` pages.
//! - `LowMark` (v5.14..v6.6, Mel Gorman's series "Calculate pcp->high based on
//!   zone sizes and active CPUs"): `high` is the zone's low watermark split
//!   over the node's CPUs (or `managed / vm.percpu_pagelist_high_fraction`),
//!   at least `4 * batch`; frees without allocations in between free twice as
//!   many each time (`free_factor`); while kswapd balances the zone
//!   (`ZONE_RECLAIM_ACTIVE`) a list holds at most `4 * batch`.
//! - `Tuned` (v6.7+, Huang Ying's "mm: PCP high auto-tuning"; v6.12's code,
//!   whose `free_count` replaced v6.7's `batch << free_factor`): `high` moves
//!   between `high_min` (as `LowMark`'s high) and `high_max` (an eighth of the
//!   zone split over the CPUs): it grows on refills while the zone is above
//!   its high watermark and shrinks on frees while it is not
//!   (`ZONE_BELOW_HIGH`) or kswapd balances it; refills double while only
//!   allocations happen (`alloc_factor`), frees grow with consecutive frees
//!   (`free_count`). Simplification S-PCP2: `decay_pcp_high()` (vmstat's
//!   once-a-second trim of an idle list) is not modelled.

use std::collections::VecDeque;

use crate::pageblock::{Migratetype, ZoneFree};
use crate::{Mm, Pfn, Watermark, MAX_NR_ZONES, PAGE_SIZE};

/// Which generation of per-CPU lists the kernel has.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PcpForm {
    /// No per-CPU lists: every free page is in the zone's free count.
    #[default]
    Off,
    /// v2.6..v5.13: `high = 6 * batch`, a full list frees `batch` pages.
    Batch,
    /// v5.14..v6.6: `high` from the low watermark and the CPUs.
    LowMark,
    /// v6.7+: `high` auto-tuned between `high_min` and `high_max`.
    Tuned,
}

impl PcpForm {
    /// The form's name in settings (`off`, `batch`, `lowmark`, `tuned`).
    pub fn name(self) -> &'static str {
        match self {
            PcpForm::Off => "off",
            PcpForm::Batch => "batch",
            PcpForm::LowMark => "lowmark",
            PcpForm::Tuned => "tuned",
        }
    }

    /// The form named `s`.
    pub fn parse(s: &str) -> Option<PcpForm> {
        [PcpForm::Off, PcpForm::Batch, PcpForm::LowMark, PcpForm::Tuned].into_iter().find(|f| f.name() == s)
    }
}

/// How the lists are sized: the form, its sysctl and the machine's CPUs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PcpSetup {
    /// The generation.
    pub form: PcpForm,
    /// `vm.percpu_pagelist_fraction` (`Batch`) or `vm.percpu_pagelist_high_fraction`
    /// (`LowMark`, `Tuned`): 0 = the kernel's default sizing.
    pub fraction: u64,
    /// CPUs of the machine; each node has an equal share (at least one).
    pub cpus: u32,
}

/// KERNEL: `CONFIG_PCP_BATCH_SCALE_MAX` default 5 (mm/Kconfig, v6.7): the
/// most doublings of a refill (`alloc_factor`) and of `free_count`'s cap.
pub const PCP_BATCH_SCALE_MAX: u32 = 5;

/// KERNEL: `zone_batchsize()`, mm/page_alloc.c (v4.19 "double zone's
/// batchsize" .. v6.12): a quarter of the smaller of 1/1024 of the zone and
/// 1 MiB of pages, at least 1, then `rounddown_pow_of_two(b + b/2) - 1`
/// (0 for a zone under 8 MiB; callers take at least 1).
pub fn zone_batchsize(managed: u64) -> u32 {
    let batch = ((managed >> 10).min((1 << 20) / PAGE_SIZE) / 4).max(1);
    let x = batch + batch / 2;
    ((1u64 << (63 - x.leading_zeros())) - 1) as u32
}

/// `(high_min, high_max, batch)` of every CPU's list of a zone of `managed`
/// pages with low watermark `low`, on a node of `node_cpus` CPUs.
///
/// KERNEL: v5.10 `zone_pageset_init()`/`pageset_set_high()`: `high = 6 *
/// batch`, `batch = max(1, zone_batchsize)`; with `percpu_pagelist_fraction`
/// `high = managed / fraction` and `batch = max(1, high / 4)`, at most
/// `PAGE_SHIFT * 8`. v5.14+ `zone_highsize()`: `low` (or `managed /
/// percpu_pagelist_high_fraction`) over the node's CPUs, at least `batch << 2`;
/// v6.7+ `zone_set_pageset_high_and_batch()`: `high_max` is the same with
/// fraction `MIN_PERCPU_PAGELIST_HIGH_FRACTION` (8) unless a fraction is set.
pub fn pcp_sizes(form: PcpForm, fraction: u64, managed: u64, low: u64, node_cpus: u32) -> (u32, u32, u32) {
    let batch = zone_batchsize(managed).max(1);
    let highsize = |fraction: u64| {
        let total = managed.checked_div(fraction).unwrap_or(low);
        ((total / node_cpus.max(1) as u64) as u32).max(batch << 2)
    };
    match form {
        PcpForm::Off => (0, 0, 1),
        PcpForm::Batch if fraction == 0 => (6 * zone_batchsize(managed), 6 * zone_batchsize(managed), batch),
        PcpForm::Batch => {
            let high = (managed / fraction) as u32;
            (high, high, (high / 4).clamp(1, crate::PAGE_SHIFT * 8))
        }
        PcpForm::LowMark => (highsize(fraction), highsize(fraction), batch),
        PcpForm::Tuned if fraction == 0 => (highsize(0), highsize(8), batch),
        PcpForm::Tuned => (highsize(fraction), highsize(fraction), batch),
    }
}

/// One CPU's lists of one zone: a list of free frames per migratetype
/// (`pcp->lists[]`, order 0) and the counters that size them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pcp {
    /// `pcp->high` (`Tuned`: moves between the zone's `high_min` and `high_max`).
    pub high: u32,
    /// `LowMark`: `free_factor` (frees double it); `Tuned`: `free_count`.
    free: u32,
    /// `Tuned`: `alloc_factor` (consecutive refills double the batch).
    alloc_factor: u32,
    /// The free frames, a list per [`Migratetype`]: frees go to the front,
    /// allocations take the front, refills append and drains take the back.
    lists: [VecDeque<Pfn>; 3],
}

impl Pcp {
    /// Pages on the lists (`pcp->count`).
    pub fn count(&self) -> u32 {
        self.lists.iter().map(VecDeque::len).sum::<usize>() as u32
    }

    /// The frames on the list of type `mt`, front first.
    pub fn frames(&self, mt: Migratetype) -> impl Iterator<Item = Pfn> + '_ {
        self.lists[mt as usize].iter().copied()
    }
}

/// The lists of one zone, one per CPU.
#[derive(Clone, Debug, Default)]
struct ZonePcp {
    batch: u32,
    high_min: u32,
    high_max: u32,
    /// Pages on all CPUs' lists of this zone.
    total: u32,
    cpus: Vec<Pcp>,
    /// `ZONE_RECLAIM_ACTIVE`: kswapd is balancing the zone's node.
    reclaim_active: bool,
    /// `ZONE_BELOW_HIGH` (v6.7+): an allocation found the zone below its high watermark.
    below_high: bool,
    /// High watermark plus `lowmem_reserve[ZONE_MOVABLE]`: the free count that clears `below_high`.
    clear_mark: u64,
}

/// Refill and drain counts (for tests and reports).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PcpStat {
    /// Refills of an empty list from the zone (`rmqueue_bulk` calls).
    pub refills: u64,
    /// Pages moved to lists by refills.
    pub refilled: u64,
    /// Drains of a list to the zone (`free_pcppages_bulk` calls, `drain_all_pages` included).
    pub drains: u64,
    /// Pages moved back to the zone by drains.
    pub drained: u64,
}

/// Every zone's per-CPU lists (held by the [`crate::FrameTable`], whose
/// order-0 allocations and frees go through them once they are set up).
#[derive(Clone, Debug, Default)]
pub struct PcpLists {
    form: PcpForm,
    zones: Vec<ZonePcp>,
    /// The CPU whose lists take the next frees and allocations.
    cpu: usize,
    /// Refill and drain counts.
    pub stat: PcpStat,
}

impl PcpLists {
    /// The generation in use.
    pub fn form(&self) -> PcpForm {
        self.form
    }

    /// True once the lists are set up: allocations and frees go through them.
    #[inline]
    pub(crate) fn active(&self) -> bool {
        !self.zones.is_empty()
    }

    /// Pages on the lists of zone `zone` (0 without lists).
    #[inline]
    pub fn held(&self, zone: usize) -> u32 {
        self.zones.get(zone).map_or(0, |z| z.total)
    }

    /// The number of CPUs with lists (0 without lists).
    pub fn nr_cpus(&self) -> usize {
        self.zones.first().map_or(0, |z| z.cpus.len())
    }

    /// The lists of `cpu` for zone `zone`, and the zone's `batch`.
    pub fn list(&self, zone: usize, cpu: usize) -> Option<(&Pcp, u32)> {
        let z = self.zones.get(zone)?;
        Some((z.cpus.get(cpu)?, z.batch))
    }

    /// `(high_min, high_max, batch)` of zone `zone`.
    pub fn sizes(&self, zone: usize) -> Option<(u32, u32, u32)> {
        self.zones.get(zone).map(|z| (z.high_min, z.high_max, z.batch))
    }

    /// CPU `cpu` runs next: its lists take the frees and allocations from now on.
    #[inline]
    pub fn switch(&mut self, cpu: usize) {
        if let Some(n) = self.zones.first().map(|z| z.cpus.len()) {
            self.cpu = cpu.min(n - 1);
        }
    }

    /// Sets `ZONE_RECLAIM_ACTIVE` of the zones of `node` (`set_reclaim_active`) or clears it.
    pub fn set_reclaim_active(&mut self, zones: impl Iterator<Item = usize>, on: bool) {
        for z in zones {
            if let Some(z) = self.zones.get_mut(z) {
                z.reclaim_active = on;
            }
        }
    }

    /// An allocation looked at zone `zone` and found it below its high
    /// watermark: `ZONE_BELOW_HIGH` (v6.7+ `get_page_from_freelist`).
    pub fn note_below_high(&mut self, zone: usize) {
        if self.form == PcpForm::Tuned {
            if let Some(z) = self.zones.get_mut(zone) {
                z.below_high = true;
            }
        }
    }

    /// Whether zone `zone` is marked `ZONE_BELOW_HIGH`.
    pub fn below_high(&self, zone: usize) -> bool {
        self.zones.get(zone).is_some_and(|z| z.below_high)
    }

    /// An order-0 frame of type `mt` for the current CPU from zone `zone`
    /// (`rmqueue_pcplist`): the front of its list, which an empty list first
    /// refills from the zone's free lists (`rmqueue_bulk`: up to the
    /// generation's batch, each frame by `__rmqueue`, fallbacks and their
    /// boosts included). `None` if the list and the zone are empty and no
    /// other list of the zone holds a frame.
    pub(crate) fn take(&mut self, zone: usize, mt: Migratetype, free: &mut ZoneFree, cx: TakeCx) -> Option<Pfn> {
        let (form, cpu) = (self.form, self.cpu);
        let zp = &mut self.zones[zone];
        let batch = zp.batch;
        let p = &mut zp.cpus[cpu];
        p.free >>= 1;
        if p.lists[mt as usize].is_empty() {
            let want = match form {
                PcpForm::Tuned => tuned_refill(p, zp.high_min, zp.high_max, batch, zp.below_high),
                _ => batch,
            };
            let mut n = 0;
            while n < want {
                let Some(pfn) = free.take(mt, cx.frames, cx.form) else { break };
                p.lists[mt as usize].push_back(pfn);
                n += 1;
            }
            if n > 0 {
                zp.total += n;
                self.stat.refills += 1;
                self.stat.refilled += n as u64;
            }
        }
        let p = &mut zp.cpus[cpu];
        let pfn = match p.lists[mt as usize].pop_front() {
            Some(pfn) => pfn,
            // The zone's free lists are empty and this CPU has no frame of
            // the type: take one from another list of the zone (S-PCP1; the
            // kernel's allocation fails here and drains the lists later).
            None => zp.cpus.iter_mut().flat_map(|q| &mut q.lists).find_map(VecDeque::pop_front)?,
        };
        zp.total -= 1;
        Some(pfn)
    }

    /// The frame `pfn` of type `mt`, just freed on the current CPU, goes to
    /// the front of its list in zone `zone` (`free_unref_page_commit`, order
    /// 0); a list at its `high` drains the generation's count back to the
    /// zone (`free_pcppages_bulk`), oldest first.
    pub(crate) fn put(&mut self, zone: usize, pfn: Pfn, mt: Migratetype, free: &mut ZoneFree) {
        let (form, cpu) = (self.form, self.cpu);
        let zp = &mut self.zones[zone];
        let batch = zp.batch;
        let p = &mut zp.cpus[cpu];
        p.lists[mt as usize].push_front(pfn);
        zp.total += 1;
        let n = match form {
            PcpForm::Off => unreachable!("no lists without a form"),
            PcpForm::Batch => (p.count() >= p.high).then_some(batch),
            PcpForm::LowMark => {
                let high = if zp.reclaim_active { p.high.min(batch << 2) } else { p.high };
                (p.count() >= high).then(|| {
                    // nr_pcp_free(): batch doubled per free since the last allocation, within [batch, high - batch].
                    let (lo, hi) = (batch, high.saturating_sub(batch));
                    if high < batch {
                        return 1;
                    }
                    let b = batch.checked_shl(p.free).unwrap_or(u32::MAX);
                    if b < hi {
                        p.free += 1;
                    }
                    b.min(hi).max(lo)
                })
            }
            PcpForm::Tuned => {
                p.alloc_factor >>= 1;
                if p.free < batch << PCP_BATCH_SCALE_MAX {
                    p.free += 1;
                }
                let high = tuned_high(p, zp.high_min, zp.high_max, batch, zp.reclaim_active, zp.below_high);
                (p.count() >= high).then(|| {
                    if high < batch {
                        return 1;
                    }
                    p.free.min(high - batch).max(batch)
                })
            }
        };
        if let Some(n) = n {
            let n = n.min(p.count());
            drain(p, form, mt, n, free);
            zp.total -= n;
            self.stat.drains += 1;
            self.stat.drained += n as u64;
            if zp.below_high && free.nr_free as u64 > zp.clear_mark {
                zp.below_high = false;
            }
        }
    }

    /// `drain_all_pages(NULL)`: every CPU's lists go back to their zones.
    pub(crate) fn drain_all(&mut self, free: &mut [ZoneFree]) {
        for (zp, free) in self.zones.iter_mut().zip(free) {
            for p in zp.cpus.iter_mut().filter(|p| p.count() > 0) {
                self.stat.drains += 1;
                self.stat.drained += p.count() as u64;
                let n = p.count();
                drain(p, PcpForm::LowMark, Migratetype::Unmovable, n, free);
            }
            zp.total = 0;
        }
    }

    /// Checks that each zone's total is the sum of its lists and every listed
    /// frame free and in its zone.
    pub(crate) fn check(&self, frames: &[crate::Frame], free: &[ZoneFree]) {
        for (z, (zp, zf)) in self.zones.iter().zip(free).enumerate() {
            let sum: u32 = zp.cpus.iter().map(|p| p.count()).sum();
            assert_eq!(sum, zp.total, "zone {z}: per-CPU lists hold {sum} pages but the total says {}", zp.total);
            for (cpu, p) in zp.cpus.iter().enumerate() {
                for &pfn in p.lists.iter().flatten() {
                    assert!((zf.start..zf.end).contains(&pfn), "zone {z} cpu {cpu}: pfn {pfn} of another zone");
                    assert!(frames[pfn as usize].owner == crate::Owner::NONE, "zone {z} cpu {cpu}: pfn {pfn} owned");
                }
            }
        }
    }
}

/// What a refill's `__rmqueue` reads besides the zone's free lists.
#[derive(Clone, Copy)]
pub(crate) struct TakeCx<'a> {
    /// The frame table (a claim counts a block's LRU pages).
    pub frames: &'a [crate::Frame],
    /// Which fallbacks raise a boost.
    pub form: crate::BoostForm,
}

/// Moves `n` frames of `p`'s lists back to the zone, each list's oldest
/// first (`free_pcppages_bulk`). `Batch` (before v5.14): round-robin from
/// the movable list, one frame per list and one more for each empty list
/// passed, the last non-empty list giving all that is left; from v5.14 the
/// list of type `first` (the frame just freed) until it is empty, then the
/// next types in turn (S-PCP3: v6.0's single pass, also for v5.14..v5.19,
/// which still went round-robin over the lists of every order).
fn drain(p: &mut Pcp, form: PcpForm, first: Migratetype, n: u32, free: &mut ZoneFree) {
    debug_assert!(n <= p.count(), "a drain takes no more than the lists hold");
    let (mut left, mut t, mut batch_free) = (n, if form == PcpForm::Batch { 0 } else { first as usize + 2 }, 0u32);
    while left > 0 {
        loop {
            batch_free += 1;
            t = (t + 1) % 3;
            if !p.lists[t].is_empty() {
                break;
            }
        }
        if form != PcpForm::Batch || batch_free == 3 {
            batch_free = left;
        }
        while left > 0 && batch_free > 0 {
            let Some(pfn) = p.lists[t].pop_back() else { break };
            free.put(pfn);
            left -= 1;
            batch_free -= 1;
        }
    }
}

/// v6.7+ `nr_pcp_high()` for an order-0 free: clamps and tunes `p.high`,
/// returns the count at which the list is drained.
fn tuned_high(p: &mut Pcp, high_min: u32, high_max: u32, batch: u32, reclaim: bool, below_high: bool) -> u32 {
    let mut high = p.high.clamp(high_min, high_max);
    p.high = high;
    if high == 0 {
        return 0;
    }
    let free = p.free.max(batch);
    if reclaim {
        p.high = high.saturating_sub(free).max(high_min);
        return (batch << 2).min(p.high);
    }
    if high_min == high_max {
        return high;
    }
    if below_high {
        p.high = high.saturating_sub(free).max(high_min);
        high = p.count().max(high_min);
    } else if p.count() >= high {
        let need = p.free + batch;
        if p.high < need {
            p.high = need.clamp(high_min, high_max);
        }
    }
    high
}

/// v6.7+ `nr_pcp_alloc()` for order 0: the pages an empty list takes from the zone.
fn tuned_refill(p: &mut Pcp, high_min: u32, high_max: u32, base: u32, below_high: bool) -> u32 {
    let mut high = p.high.clamp(high_min, high_max);
    p.high = high;
    if high < base {
        return 1;
    }
    let mut batch = base.checked_shl(p.alloc_factor).unwrap_or(u32::MAX);
    if high_min != high_max && !below_high {
        high = (high + batch).min(high_max);
        p.high = high;
    }
    let max_alloc = high.saturating_sub(p.count() + base).max(base);
    if batch <= max_alloc && p.alloc_factor < PCP_BATCH_SCALE_MAX {
        p.alloc_factor += 1;
    }
    batch = batch.min(max_alloc);
    if batch > 1 {
        batch.max(2)
    } else {
        batch
    }
}

impl Mm {
    /// Sets up the per-CPU lists of every zone (empty, any frames listed
    /// before going back to the zones) from the zones' sizes and low
    /// watermarks; `PcpForm::Off` removes them.
    pub fn setup_pcp(&mut self, s: PcpSetup) {
        self.frames.drain_pcp();
        let nodes = self.nodes.len().max(1) as u32;
        let node_cpus = (s.cpus / nodes).max(1);
        let zones = if s.form == PcpForm::Off {
            Vec::new()
        } else {
            self.zones
                .iter()
                .map(|z| {
                    let (high_min, high_max, batch) =
                        pcp_sizes(s.form, s.fraction, z.managed, z.wmark(Watermark::Low), node_cpus);
                    let init = Pcp { high: high_min, ..Pcp::default() };
                    ZonePcp {
                        batch,
                        high_min,
                        high_max,
                        cpus: vec![init; s.cpus.max(1) as usize],
                        clear_mark: z.wmark(Watermark::High) + z.lowmem_reserve[MAX_NR_ZONES - 1],
                        ..ZonePcp::default()
                    }
                })
                .collect()
        };
        self.frames.pcp = PcpLists { form: s.form, zones, cpu: 0, stat: PcpStat::default() };
    }

    /// CPU `cpu` runs next: its lists take the frees and allocations from now on.
    #[inline]
    pub fn pcp_switch(&mut self, cpu: usize) {
        self.frames.pcp.switch(cpu);
    }

    /// `drain_all_pages(NULL)`: the lists' frames return to the zones' free lists.
    pub fn drain_all_pages(&mut self) {
        self.frames.drain_pcp();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Owner;

    /// KERNEL arithmetic, by hand: 256M of one zone (65536 pages): 65536 >> 10
    /// = 64, / 4 = 16, 16 + 8 = 24 -> 16 - 1 = 15. 1G: 256 / 4 = 64, 96 -> 63.
    /// 8G: capped at 1M = 256 pages -> 63. 4M (1024 pages): 1 / 4 = 0 -> 1,
    /// 1 + 0 -> 1 - 1 = 0.
    #[test]
    fn batch_sizes() {
        assert_eq!(zone_batchsize(65_536), 15);
        assert_eq!(zone_batchsize(262_144), 63);
        assert_eq!(zone_batchsize(2_097_152), 63);
        assert_eq!(zone_batchsize(1024), 0);
    }

    /// The 6.12 guest's zone (flat: 54448 managed, low 577) on one CPU:
    /// batch 15 (54448 >> 10 = 53, / 4 = 13, 13 + 6 = 19 -> 15); 5.10: high
    /// 6 * 15 = 90; 5.14: high = low = 577; 6.7: high_max = 54448 / 8 = 6806;
    /// two CPUs halve both; a fraction of 100 gives 544.
    #[test]
    fn high_per_generation() {
        assert_eq!(pcp_sizes(PcpForm::Batch, 0, 54_448, 577, 1), (90, 90, 15));
        assert_eq!(pcp_sizes(PcpForm::Batch, 100, 54_448, 577, 1), (544, 544, 96));
        assert_eq!(pcp_sizes(PcpForm::LowMark, 0, 54_448, 577, 1), (577, 577, 15));
        assert_eq!(pcp_sizes(PcpForm::LowMark, 0, 54_448, 577, 2), (288, 288, 15));
        assert_eq!(pcp_sizes(PcpForm::Tuned, 0, 54_448, 577, 1), (577, 6806, 15));
        assert_eq!(pcp_sizes(PcpForm::Tuned, 100, 54_448, 577, 2), (272, 272, 15));
        // A small low watermark: at least 4 * batch.
        assert_eq!(pcp_sizes(PcpForm::LowMark, 0, 54_448, 40, 1), (60, 60, 15));
    }

    fn machine(form: PcpForm) -> Mm {
        // 4096 pages: batch = 4096 >> 10 = 4, / 4 = 1 -> 1 + 0 = 1 -> 0, so batch 1; use a larger zone.
        let mut mm = Mm::new(16_384, 0);
        // 16384 >> 10 = 16, / 4 = 4, 4 + 2 = 6 -> 4 - 1 = 3.
        mm.zones[0].watermark = [40, 50, 60, 60];
        mm.setup_pcp(PcpSetup { form, fraction: 0, cpus: 1 });
        mm
    }

    /// 5.10: the first allocation refills 3 pages (batch), so the zone's free
    /// count drops by 3 for 1 frame taken; 18 frees (high = 6 * 3) later the
    /// list reaches 18 + 2 = 20 >= 18 at the 16th free and drains 3.
    #[test]
    fn batch_refill_and_drain_counts() {
        let mut mm = machine(PcpForm::Batch);
        assert_eq!(mm.frames.pcp.sizes(0), Some((18, 18, 3)));
        let a = mm.alloc_in(0, Owner::KERNEL, 0, 0).unwrap();
        assert_eq!(mm.frames.pcp.stat, PcpStat { refills: 1, refilled: 3, drains: 0, drained: 0 });
        assert_eq!((mm.zone_free(0), mm.nr_free(), mm.frames.nr_free()), (16_381, 16_381, 16_383));
        let pfns: Vec<_> = (0..20).map(|_| mm.frames.alloc_in(0, Owner::KERNEL, 0, 0).unwrap()).collect();
        // 2 from the list, then refills of 3: 6 refills more (18 pages) for the other 18.
        assert_eq!(mm.frames.pcp.stat.refills, 7);
        assert_eq!(mm.frames.pcp.list(0, 0).unwrap().0.count(), 0);
        for pfn in pfns.into_iter().chain([a]) {
            mm.frames.free(pfn);
        }
        // 21 frees: the list reaches 18 (drain 3 -> 15), then 16, 17, 18 (drain 3 -> 15).
        assert_eq!((mm.frames.pcp.stat.drains, mm.frames.pcp.stat.drained), (2, 6));
        assert_eq!(mm.frames.pcp.held(0), 15);
        assert_eq!(mm.zone_free(0), 16_384 - 15);
        assert_eq!(mm.nr_free(), 16_384 - 15);
        mm.frames.check_pcp();
        mm.drain_all_pages();
        assert_eq!((mm.zone_free(0), mm.frames.pcp.held(0)), (16_384, 0));
    }

    /// 5.14: high = max(low 50, 4 * 3) = 50. 201 allocations take 67 refills
    /// of 3 and leave the list empty. Frees: at 50 the list frees
    /// batch << free_factor within [3, 50 - 3]: 3 (-> 47), and after 3 more
    /// frees 6 (-> 44). While kswapd balances, the list drains at 4 * 3 = 12:
    /// 3 << 2 = 12 clamped to [3, 12 - 3] frees 9.
    #[test]
    fn lowmark_free_factor_and_reclaim_cap() {
        let mut mm = machine(PcpForm::LowMark);
        assert_eq!(mm.frames.pcp.sizes(0), Some((50, 50, 3)));
        let pfns: Vec<_> = (0..201).map(|_| mm.frames.alloc_in(0, Owner::KERNEL, 0, 0).unwrap()).collect();
        assert_eq!((mm.frames.pcp.stat.refills, mm.frames.pcp.held(0)), (67, 0));
        for &pfn in &pfns[..50] {
            mm.frames.free(pfn);
        }
        assert_eq!((mm.frames.pcp.held(0), mm.frames.pcp.stat.drained), (47, 3));
        for &pfn in &pfns[50..53] {
            mm.frames.free(pfn);
        }
        assert_eq!((mm.frames.pcp.held(0), mm.frames.pcp.stat.drained), (44, 9));
        mm.frames.pcp.set_reclaim_active(0..1, true);
        mm.frames.free(pfns[53]);
        assert_eq!(mm.frames.pcp.held(0), 36);
        mm.frames.check_pcp();
    }

    /// 6.7+: refills grow high by the batch and double the batch while the
    /// zone is above its high watermark: 3, 6, 12, ... (high_max = 16384 / 8 = 2048).
    #[test]
    fn tuned_refills_double() {
        let mut mm = machine(PcpForm::Tuned);
        assert_eq!(mm.frames.pcp.sizes(0), Some((50, 2048, 3)));
        let mut refilled = Vec::new();
        for _ in 0..4 {
            let before = mm.frames.pcp.stat.refilled;
            let mut taken = 0;
            while mm.frames.pcp.stat.refilled == before || mm.frames.pcp.list(0, 0).unwrap().0.count() > 0 {
                mm.frames.alloc_in(0, Owner::KERNEL, 0, 0).unwrap();
                taken += 1;
            }
            refilled.push(taken);
        }
        assert_eq!(refilled, [3, 6, 12, 24]);
        assert_eq!(mm.frames.pcp.list(0, 0).unwrap().0.high, 50 + 3 + 6 + 12 + 24);
        mm.frames.pcp.note_below_high(0);
        assert!(mm.frames.pcp.below_high(0));
    }

    /// The refill is what falls back: a zone whose movable blocks keep 2
    /// free frames beside an unmovable block with 100 (a booted DMA zone) is
    /// refilled 3 frames (v5.10, batch 3) by its first allocation, the third
    /// stolen from the unmovable block with a boost (v5.0..v6.14: every
    /// fallback below a whole block). Without lists the same allocation takes
    /// a movable frame and nothing falls back.
    #[test]
    fn a_refill_steals_from_the_unmovable_block_and_boosts() {
        let layout = crate::pageblock::BootLayout { unmovable: (1, 100), reclaimable: (0, 0), movable_free: 2 };
        for form in [PcpForm::Off, PcpForm::Batch] {
            let mut mm = Mm::new(16_384, 0);
            mm.zones[0].watermark = [40, 50, 60, 60];
            mm.boot_layout(0, &layout).unwrap();
            mm.frames.set_boost_form(crate::BoostForm::Fallback);
            mm.setup_pcp(PcpSetup { form, fraction: 0, cpus: 1 });
            let pfn = mm.alloc_in(0, Owner::anon(crate::RegionId(0)), 0, 0).unwrap();
            assert_eq!(mm.frames.type_of(pfn), Migratetype::Movable);
            let unmovable_free = mm.frames.nr_free_of(0, Migratetype::Unmovable);
            let boosts = mm.frames.take_boosts(0);
            match form {
                PcpForm::Off => assert_eq!((unmovable_free, boosts, mm.zone_free(0)), (100, 0, 101)),
                _ => {
                    assert_eq!((unmovable_free, boosts, mm.zone_free(0)), (99, 1, 99));
                    let (p, _) = mm.frames.pcp.list(0, 0).unwrap();
                    let listed: Vec<_> = p.frames(Migratetype::Movable).map(|f| mm.frames.type_of(f)).collect();
                    assert_eq!(listed, [Migratetype::Movable, Migratetype::Unmovable]);
                    assert_eq!(mm.frames.pcp.stat, PcpStat { refills: 1, refilled: 3, drains: 0, drained: 0 });
                }
            }
            mm.frames.check_pcp();
        }
    }
}
