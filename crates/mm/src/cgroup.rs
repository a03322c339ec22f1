//! The memory cgroup tree (cgroup v2): groups, their page counters, limits
//! and protection, `memory.events`, and the event counters each group earned.
//!
//! Models `struct mem_cgroup` and `struct page_counter` (mm/memcontrol.c,
//! mm/page_counter.c, v6.12) for order-0 pages. A page belongs to the group
//! of its owner: an anonymous region's group, or a file's group.
//!
//! Simplifications (listed in docs/model.md):
//! - S-CG1: a file's pages are all charged to one group, the group of the
//!   workload that created the file (the kernel charges each page to the
//!   group of the task that first faulted it in).
//! - S-CG2: kernel memory (slab, page tables, the zram pool) is charged to no
//!   group; `memory.current` counts the group's LRU pages and charge stocks.
//! - S-CG3: a group's event counters are those counted while reclaim or a
//!   fault worked for it ([`Cgroups::switch_to`]), not per page.

mod charge;

pub use charge::{
    calculate_overage, high_delay_jiffies, MEMCG_CHARGE_BATCH, MEMCG_DELAY_PRECISION_SHIFT, MEMCG_DELAY_SCALING_SHIFT,
};

use crate::vmstat::{VmEvent, VmStat};
use charge::Stock;

/// A group's index in the tree; [`CgId::ROOT`] is the root group.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CgId(pub u16);

impl CgId {
    /// The root group: every page of a machine without a tree.
    pub const ROOT: CgId = CgId(0);
}

/// KERNEL: `PAGE_COUNTER_MAX`: the value `max` stands for (no limit), in pages.
pub const PAGE_COUNTER_MAX: u64 = u64::MAX / 2;

/// A group's interface files that set limits, in pages (`max` = [`PAGE_COUNTER_MAX`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// `memory.max`: the hard limit; a charge over it reclaims, then OOM-kills.
    pub max: u64,
    /// `memory.high`: over it, the charging task reclaims and is throttled.
    pub high: u64,
    /// `memory.low`: best-effort protection from reclaim.
    pub low: u64,
    /// `memory.min`: hard protection from reclaim.
    pub min: u64,
    /// `memory.swap.max`: the group's swap limit.
    pub swap_max: u64,
    /// `memory.swap.high` (v5.8): over it, the group's charging tasks are throttled.
    pub swap_high: u64,
    /// `memory.oom.group`: the OOM killer kills the whole group at once.
    pub oom_group: bool,
    /// `memory.zswap.max` (v5.19): pages of compressed memory the group may keep in zswap.
    pub zswap_max: u64,
    /// `memory.zswap.writeback` (v6.8): zswap may write the group's entries to the swap device.
    pub zswap_writeback: bool,
}

impl Default for Limits {
    /// A new group's files: no limits, no protection.
    fn default() -> Self {
        Limits {
            max: PAGE_COUNTER_MAX,
            high: PAGE_COUNTER_MAX,
            low: 0,
            min: 0,
            swap_max: PAGE_COUNTER_MAX,
            swap_high: PAGE_COUNTER_MAX,
            oom_group: false,
            zswap_max: PAGE_COUNTER_MAX,
            zswap_writeback: true,
        }
    }
}

/// `memory.events` of one group (this group's own events; the kernel's
/// hierarchical file adds the descendants', see [`Cgroups::events_hier`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemEvents {
    /// `low`: reclaimed despite being under `memory.low` (the retry that ignores it).
    pub low: u64,
    /// `high`: over `memory.high` when a task reclaimed for it.
    pub high: u64,
    /// `max`: a charge hit `memory.max`.
    pub max: u64,
    /// `oom`: the group's OOM was invoked.
    pub oom: u64,
    /// `oom_kill`: tasks killed by the OOM killer in the group.
    pub oom_kill: u64,
    /// `oom_group_kill`: group kills (`memory.oom.group`).
    pub oom_group_kill: u64,
    /// `memory.swap.events` `high` (v5.8): a throttling check found the
    /// group over its `memory.swap.high`.
    pub swap_high: u64,
}

impl MemEvents {
    /// The counters with their `memory.events` names.
    /// `memory.swap.events`' `high` follows as `swap.high`.
    pub fn named(&self) -> [(&'static str, u64); 7] {
        [
            ("low", self.low),
            ("high", self.high),
            ("max", self.max),
            ("oom", self.oom),
            ("oom_kill", self.oom_kill),
            ("oom_group_kill", self.oom_group_kill),
            ("swap.high", self.swap_high),
        ]
    }

    fn add(&mut self, o: &MemEvents) {
        self.low += o.low;
        self.high += o.high;
        self.max += o.max;
        self.oom += o.oom;
        self.oom_kill += o.oom_kill;
        self.oom_group_kill += o.oom_group_kill;
        self.swap_high += o.swap_high;
    }
}

/// One memory cgroup.
#[derive(Clone, Debug)]
pub struct Cgroup {
    /// The path below the root (`/` for the root, `batch`, `svc/db`).
    pub path: String,
    /// The parent group (`None` for the root).
    pub parent: Option<CgId>,
    /// Child groups, in creation order (the order `mem_cgroup_iter` visits them).
    pub children: Vec<CgId>,
    /// Distance from the root.
    pub depth: u32,
    /// The limits set on the group.
    pub limits: Limits,
    /// `memory.current` in pages (hierarchical: the group and its descendants).
    pub usage: u64,
    /// `memory.peak` in pages.
    pub peak: u64,
    /// `memory.swap.current` in slots (hierarchical).
    pub swap_usage: u64,
    /// Effective `memory.min` of the last protection walk (`page_counter.emin`).
    pub emin: u64,
    /// Effective `memory.low` of the last protection walk (`page_counter.elow`).
    pub elow: u64,
    /// The group's own `memory.events`.
    pub events: MemEvents,
    /// Event counters earned by the group itself (S-CG3), by [`VmEvent`].
    stat: Vec<u64>,
}

impl Cgroup {
    fn new(path: String, parent: Option<CgId>, depth: u32) -> Cgroup {
        Cgroup {
            path,
            parent,
            children: Vec::new(),
            depth,
            limits: Limits::default(),
            usage: 0,
            peak: 0,
            swap_usage: 0,
            emin: 0,
            elow: 0,
            events: MemEvents::default(),
            stat: vec![0; VmEvent::ALL.len()],
        }
    }
}

/// The tree: the root and its descendants, and which group counters accrue to now.
#[derive(Clone, Debug)]
pub struct Cgroups {
    groups: Vec<Cgroup>,
    /// False until a group other than the root exists: charging is skipped.
    enabled: bool,
    /// The group event counters accrue to now.
    current: CgId,
    /// The machine's counters when `current` was entered.
    settled: VmStat,
    /// Each CPU's charge stock, and the CPU charging now.
    stocks: Vec<Stock>,
    cpu: usize,
    /// A page charged by [`Cgroups::try_charge`] and not yet taken by its frame.
    pending: Option<CgId>,
}

impl Default for Cgroups {
    /// The root group alone.
    fn default() -> Self {
        Cgroups {
            groups: vec![Cgroup::new("/".into(), None, 0)],
            enabled: false,
            current: CgId::ROOT,
            settled: VmStat::default(),
            stocks: vec![Stock::default()],
            cpu: 0,
            pending: None,
        }
    }
}

impl Cgroups {
    /// True once the tree has a group below the root.
    #[inline]
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// Number of groups, the root included.
    pub fn len(&self) -> usize {
        self.groups.len()
    }

    /// Always false: the root exists.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The group `id`.
    #[inline]
    pub fn get(&self, id: CgId) -> &Cgroup {
        &self.groups[id.0 as usize]
    }

    /// The group `id`, for update.
    #[inline]
    pub fn get_mut(&mut self, id: CgId) -> &mut Cgroup {
        &mut self.groups[id.0 as usize]
    }

    /// Every group with its id, in creation order (parents before children).
    pub fn iter(&self) -> impl Iterator<Item = (CgId, &Cgroup)> {
        self.groups.iter().enumerate().map(|(i, g)| (CgId(i as u16), g))
    }

    /// The group at `path` (`/` or empty: the root; `a/b`), if it exists.
    pub fn find(&self, path: &str) -> Option<CgId> {
        let path = normalize(path);
        self.iter().find(|(_, g)| g.path == path).map(|(id, _)| id)
    }

    /// The group at `path`, creating it and its missing ancestors.
    pub fn create(&mut self, path: &str) -> CgId {
        let path = normalize(path);
        if let Some(id) = self.find(&path) {
            return id;
        }
        let parent = match path.rsplit_once('/') {
            Some((up, _)) => self.create(up),
            None => CgId::ROOT,
        };
        assert!(self.groups.len() < u16::MAX as usize, "too many groups");
        let id = CgId(self.groups.len() as u16);
        let depth = self.get(parent).depth + 1;
        self.groups.push(Cgroup::new(path, Some(parent), depth));
        self.get_mut(parent).children.push(id);
        self.enabled = true;
        id
    }

    /// `id` and its ancestors up to the root, nearest first.
    pub fn ancestors(&self, id: CgId) -> impl Iterator<Item = CgId> + '_ {
        std::iter::successors(Some(id), |&g| self.get(g).parent)
    }

    /// True if `id` is `root` or below it (`mem_cgroup_is_descendant`).
    pub fn is_descendant(&self, id: CgId, root: CgId) -> bool {
        self.ancestors(id).any(|g| g == root)
    }

    /// The subtree of `root` in pre-order (`mem_cgroup_iter`'s order): `root` first.
    pub fn subtree(&self, root: CgId) -> Vec<CgId> {
        let mut out = Vec::new();
        let mut stack = vec![root];
        while let Some(g) = stack.pop() {
            out.push(g);
            stack.extend(self.get(g).children.iter().rev());
        }
        out
    }

    /// `mem_cgroup_iter()` over the whole tree: the group after `prev` in
    /// pre-order, the root after `None`, and `None` after the last group.
    pub fn iter_next(&self, prev: Option<CgId>) -> Option<CgId> {
        let Some(mut g) = prev else { return Some(CgId::ROOT) };
        if let Some(&first) = self.get(g).children.first() {
            return Some(first);
        }
        while let Some(parent) = self.get(g).parent {
            let siblings = &self.get(parent).children;
            let at = siblings.iter().position(|&c| c == g).expect("a child of its parent");
            if let Some(&next) = siblings.get(at + 1) {
                return Some(next);
            }
            g = parent;
        }
        None
    }

    /// `mem_cgroup_zswap_writeback_enabled()`: false if `id` or an ancestor
    /// set `memory.zswap.writeback` to 0.
    pub fn zswap_writeback(&self, id: CgId) -> bool {
        self.ancestors(id).all(|g| self.get(g).limits.zswap_writeback)
    }

    /// `page_counter_charge()`: `n` pages more for `id` and its ancestors.
    #[inline]
    pub fn charge(&mut self, id: CgId, n: u64) {
        let mut g = Some(id);
        while let Some(i) = g {
            let c = self.get_mut(i);
            c.usage += n;
            c.peak = c.peak.max(c.usage);
            g = c.parent;
        }
    }

    /// `page_counter_uncharge()`.
    #[inline]
    pub fn uncharge(&mut self, id: CgId, n: u64) {
        let mut g = Some(id);
        while let Some(i) = g {
            let c = self.get_mut(i);
            c.usage = c.usage.checked_sub(n).expect("uncharging more than the group holds");
            g = c.parent;
        }
    }

    /// Swap slots `id` may still take: the smallest room under `memory.swap.max`
    /// of it and its ancestors ([`PAGE_COUNTER_MAX`] when unlimited).
    pub fn swap_room(&self, id: CgId) -> u64 {
        self.ancestors(id)
            .filter(|&g| self.get(g).parent.is_some())
            .map(|g| self.get(g).limits.swap_max.saturating_sub(self.get(g).swap_usage))
            .min()
            .unwrap_or(PAGE_COUNTER_MAX)
    }

    /// Charges (`+1`) or uncharges (`-1`) one swap slot to `id` and its ancestors.
    pub fn charge_swap(&mut self, id: CgId, delta: i64) {
        let mut g = Some(id);
        while let Some(i) = g {
            let c = self.get_mut(i);
            c.swap_usage = c.swap_usage.checked_add_signed(delta).expect("swap uncharge below zero");
            g = c.parent;
        }
    }

    /// `mem_cgroup_calculate_protection()` / `page_counter_calculate_protection()`:
    /// sets `id`'s effective `memory.min`/`memory.low` for a reclaim aimed at
    /// `root`. Must run top-down (a parent before its children), as the walk does.
    pub fn calculate_protection(&mut self, root: CgId, id: CgId, recursive: bool) {
        if root == id {
            return;
        }
        let g = self.get(id);
        let usage = g.usage;
        if usage == 0 {
            return;
        }
        let parent = g.parent.expect("only the root has no parent, and it is the top of every walk");
        let (min, low) = (g.limits.min, g.limits.low);
        if parent == root {
            let g = self.get_mut(id);
            (g.emin, g.elow) = (min, low);
            return;
        }
        let p = self.get(parent);
        let (children_min, children_low) = p.children.iter().fold((0, 0), |(m, l), &c| {
            let c = self.get(c);
            (m + c.usage.min(c.limits.min), l + c.usage.min(c.limits.low))
        });
        let emin = effective_protection(usage, p.usage, min, p.emin, children_min, recursive);
        let elow = effective_protection(usage, p.usage, low, p.elow, children_low, recursive);
        let g = self.get_mut(id);
        (g.emin, g.elow) = (emin, elow);
    }

    /// `mem_cgroup_below_min()`: `id` is fully protected from a reclaim aimed at `root`.
    pub fn below_min(&self, root: CgId, id: CgId) -> bool {
        root != id && self.get(id).usage <= self.get(id).emin
    }

    /// `mem_cgroup_below_low()`: `id` is under its effective `memory.low`.
    pub fn below_low(&self, root: CgId, id: CgId) -> bool {
        root != id && self.get(id).usage <= self.get(id).elow
    }

    /// `mem_cgroup_protection()`: `(emin, elow)` of `id` for a reclaim aimed at `root`.
    pub fn protection(&self, root: CgId, id: CgId) -> (u64, u64) {
        if root == id {
            return (0, 0);
        }
        (self.get(id).emin, self.get(id).elow)
    }

    /// The group event counters accrue to now.
    #[inline]
    pub fn current(&self) -> CgId {
        self.current
    }

    /// Makes `id` the group event counters accrue to, settling what the
    /// machine counted since the last switch to the group left (S-CG3).
    #[inline]
    pub fn switch_to(&mut self, id: CgId, vm: &VmStat) {
        if id != self.current {
            self.settle(vm);
            self.current = id;
        }
    }

    /// Credits the counts since the last settle to the current group.
    pub fn settle(&mut self, vm: &VmStat) {
        let cur = self.current.0 as usize;
        for (i, &e) in VmEvent::ALL.iter().enumerate() {
            self.groups[cur].stat[i] += vm.get(e) - self.settled.get(e);
        }
        self.settled = vm.clone();
    }

    /// Event `ev` counted for `id` and its descendants (as `memory.stat` shows
    /// it), as of the last [`Cgroups::settle`].
    pub fn event_hier(&self, id: CgId, ev: VmEvent) -> u64 {
        self.subtree(id).iter().map(|&g| self.get(g).stat[ev as usize]).sum()
    }

    /// `memory.events` of `id`: its own and its descendants' events.
    pub fn events_hier(&self, id: CgId) -> MemEvents {
        let mut e = MemEvents::default();
        for g in self.subtree(id) {
            e.add(&self.get(g).events);
        }
        e
    }
}

/// A group path without leading, trailing or doubled slashes (`/` is the root).
fn normalize(path: &str) -> String {
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    if parts.is_empty() {
        "/".into()
    } else {
        parts.join("/")
    }
}

/// `effective_protection()` (mm/page_counter.c): a group's share of its
/// parent's effective protection: its own claim when the siblings' claims fit,
/// a proportional cut when they overcommit, and with `memory_recursiveprot` a
/// share of the unclaimed rest in proportion to its unprotected usage.
fn effective_protection(
    usage: u64,
    parent_usage: u64,
    setting: u64,
    parent_effective: u64,
    siblings_protected: u64,
    recursive: bool,
) -> u64 {
    let protected = usage.min(setting);
    if siblings_protected > parent_effective {
        return (protected as u128 * parent_effective as u128 / siblings_protected as u128) as u64;
    }
    let mut ep = protected;
    if recursive && parent_effective > siblings_protected && parent_usage > siblings_protected && usage > protected {
        let unclaimed = (parent_effective - siblings_protected) as u128 * (usage - protected) as u128
            / (parent_usage - siblings_protected) as u128;
        ep += unclaimed as u64;
    }
    ep
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_create_ancestors_and_walk_in_pre_order() {
        let mut t = Cgroups::default();
        assert!(!t.enabled());
        let b = t.create("/a/b/");
        let c = t.create("a/c");
        let d = t.create("d");
        let a = t.find("a").unwrap();
        assert_eq!(t.get(b).path, "a/b");
        assert_eq!(t.find("/"), Some(CgId::ROOT));
        assert_eq!(t.subtree(CgId::ROOT), vec![CgId::ROOT, a, b, c, d]);
        assert_eq!(t.ancestors(c).collect::<Vec<_>>(), vec![c, a, CgId::ROOT]);
        assert!(t.enabled());
        // mem_cgroup_iter() from the start: the same order, then None, then round again.
        let walk: Vec<_> = std::iter::successors(t.iter_next(None), |&g| t.iter_next(Some(g))).collect();
        assert_eq!(walk, t.subtree(CgId::ROOT));
        assert_eq!(t.iter_next(Some(d)), None);
    }

    #[test]
    fn zswap_writeback_off_anywhere_above_turns_it_off_below() {
        let mut t = Cgroups::default();
        let a = t.create("a");
        let b = t.create("a/b");
        let c = t.create("c");
        t.get_mut(a).limits.zswap_writeback = false;
        assert_eq!([a, b, c, CgId::ROOT].map(|g| t.zswap_writeback(g)), [false, false, true, true]);
    }

    #[test]
    fn protection_splits_an_overcommitted_parent_by_usage() {
        let mut t = Cgroups::default();
        let p = t.create("p");
        let x = t.create("p/x");
        let y = t.create("p/y");
        t.get_mut(p).limits.low = 100;
        t.get_mut(x).limits.low = 100;
        t.get_mut(y).limits.low = 100;
        t.charge(x, 60);
        t.charge(y, 90);
        for g in t.subtree(CgId::ROOT) {
            t.calculate_protection(CgId::ROOT, g, false);
        }
        assert_eq!(t.get(p).elow, 100, "a top-level group gets its own setting");
        // Siblings claim 60 + 90 = 150 > 100: shares in proportion to what they use.
        assert_eq!((t.get(x).elow, t.get(y).elow), (40, 60));
        assert!(!t.below_low(CgId::ROOT, x));
        t.uncharge(y, 60);
        for g in t.subtree(CgId::ROOT) {
            t.calculate_protection(CgId::ROOT, g, false);
        }
        assert_eq!((t.get(x).elow, t.get(y).elow), (60, 30));
        assert!(t.below_low(CgId::ROOT, x));
        assert!(!t.below_low(x, x), "the reclaim target itself is never protected");
    }

    #[test]
    fn recursive_protection_hands_the_unclaimed_rest_out_by_usage() {
        let mut t = Cgroups::default();
        let p = t.create("p");
        let x = t.create("p/x");
        let y = t.create("p/y");
        t.get_mut(p).limits.low = 100;
        t.charge(x, 30);
        t.charge(y, 10);
        for g in t.subtree(CgId::ROOT) {
            t.calculate_protection(CgId::ROOT, g, true);
        }
        // Nothing claimed below p: its 100 go out in proportion to usage (30:10 of 40).
        assert_eq!((t.get(x).elow, t.get(y).elow), (75, 25));
    }

    #[test]
    fn counters_accrue_to_the_current_group() {
        let mut t = Cgroups::default();
        let a = t.create("a");
        let mut vm = VmStat::default();
        vm.count(VmEvent::Pgfault, 3);
        t.switch_to(a, &vm);
        vm.count(VmEvent::Pgfault, 5);
        t.switch_to(CgId::ROOT, &vm);
        vm.count(VmEvent::Pgfault, 1);
        t.settle(&vm);
        assert_eq!(t.event_hier(a, VmEvent::Pgfault), 5);
        assert_eq!(t.event_hier(CgId::ROOT, VmEvent::Pgfault), 9);
    }
}
