//! The reclaim clock as one lruvec of a policy of several lruvecs sees it
//! while it is shrunk ([`tree::TreePolicy`](crate::tree::TreePolicy): one per
//! memory group; [`zoned::ZonedPolicy`](crate::zoned::ZonedPolicy): one per zone).
//!
//! Writeback that ends while the lruvec is shrunk rotates its own pages at
//! once; other lruvecs' pages are kept in [`RoutedClock::pending`] for the
//! caller to rotate when the pass returns (no other lruvec is scanned meanwhile).

use crate::control::ScanControl;
use crate::direct::PassTime;
use crate::pageout::PageoutEnv;
use crate::policy::{AccessKind, LruSizes, Origin, ReclaimPolicy};
use mm::{Mm, Pfn, Shadow};

/// The caller's clock, routed for one lruvec: `mine` tells its pages.
pub(crate) struct RoutedClock<'a, F: Fn(&Mm, Pfn) -> bool> {
    /// The caller's clock.
    pub(crate) inner: &'a mut dyn PassTime,
    /// True for a page of the lruvec being shrunk.
    pub(crate) mine: F,
    /// Pages of other lruvecs whose writeback ended meanwhile.
    pub(crate) pending: Vec<Pfn>,
}

impl<'a, F: Fn(&Mm, Pfn) -> bool> RoutedClock<'a, F> {
    /// A routed clock over `inner` for the lruvec whose pages `mine` tells.
    pub(crate) fn new(inner: &'a mut dyn PassTime, mine: F) -> Self {
        RoutedClock { inner, mine, pending: Vec::new() }
    }
}

impl<F: Fn(&Mm, Pfn) -> bool> PassTime for RoutedClock<'_, F> {
    fn pass_time(&mut self, mm: &mut Mm, policy: &mut dyn ReclaimPolicy, sc: &mut ScanControl) {
        let mut router = Router { own: policy, mine: &self.mine, pending: &mut self.pending };
        self.inner.pass_time(mm, &mut router, sc);
    }
}

/// The lruvec being shrunk, standing in for the whole policy while time passes.
struct Router<'a, F: Fn(&Mm, Pfn) -> bool> {
    own: &'a mut dyn ReclaimPolicy,
    mine: &'a F,
    pending: &'a mut Vec<Pfn>,
}

impl<F: Fn(&Mm, Pfn) -> bool> ReclaimPolicy for Router<'_, F> {
    fn name(&self) -> &'static str {
        self.own.name()
    }
    fn add_page(&mut self, mm: &mut Mm, pfn: Pfn, origin: Origin, shadow: Option<Shadow>) {
        self.own.add_page(mm, pfn, origin, shadow);
    }
    fn on_access(&mut self, mm: &mut Mm, pfn: Pfn, via: AccessKind) {
        self.own.on_access(mm, pfn, via);
    }
    fn shrink_node(&mut self, mm: &mut Mm, sc: &mut ScanControl, env: PageoutEnv, clock: &mut dyn PassTime) {
        self.own.shrink_node(mm, sc, env, clock);
    }
    fn rotate_reclaimable(&mut self, mm: &mut Mm, pfn: Pfn) {
        if (self.mine)(mm, pfn) {
            self.own.rotate_reclaimable(mm, pfn);
        } else {
            self.pending.push(pfn);
        }
    }
    fn age_node(&mut self, mm: &mut Mm, sc: &mut ScanControl) {
        self.own.age_node(mm, sc);
    }
    fn lru_sizes(&self) -> LruSizes {
        self.own.lru_sizes()
    }
    fn check_invariants(&self, mm: &Mm) {
        self.own.check_invariants(mm);
    }
}

/// The [`ReclaimPolicy`] methods of a policy of several lruvecs
/// ([`TreePolicy`](crate::tree::TreePolicy), [`ZonedPolicy`](crate::zoned::ZonedPolicy))
/// that only hand a page's call to its own lruvec (`self.of(mm, pfn)`) or
/// a call to every lruvec (`self.lruvecs`): expanded inside each `impl ReclaimPolicy`.
macro_rules! forward_to_lruvecs {
    () => {
        fn name(&self) -> &'static str {
            self.lruvecs[0].name()
        }

        fn add_page(
            &mut self,
            mm: &mut ::mm::Mm,
            pfn: ::mm::Pfn,
            origin: $crate::policy::Origin,
            shadow: Option<::mm::Shadow>,
        ) {
            self.of(mm, pfn).add_page(mm, pfn, origin, shadow);
        }

        fn on_access(&mut self, mm: &mut ::mm::Mm, pfn: ::mm::Pfn, via: $crate::policy::AccessKind) {
            self.of(mm, pfn).on_access(mm, pfn, via);
        }

        fn rotate_reclaimable(&mut self, mm: &mut ::mm::Mm, pfn: ::mm::Pfn) {
            self.of(mm, pfn).rotate_reclaimable(mm, pfn);
        }

        fn invalidate_page(&mut self, mm: &mut ::mm::Mm, pfn: ::mm::Pfn) -> bool {
            self.of(mm, pfn).invalidate_page(mm, pfn)
        }

        fn snapshot_refaults(&mut self, mm: &::mm::Mm) {
            self.lruvecs.iter_mut().for_each(|l| l.snapshot_refaults(mm));
        }

        fn lru_sizes(&self) -> $crate::policy::LruSizes {
            self.lruvecs.iter().map(|l| l.lru_sizes()).sum()
        }
    };
}
pub(crate) use forward_to_lruvecs;
