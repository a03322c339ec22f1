//! The shared test harness: a machine builder (a profile plus settings), a
//! scripted thread, and the small scenario steps hand-checked tests drive a
//! machine with (write or touch a range of pages, age a region's accessed
//! bits, count resident pages).
//!
//! Layer: a dev-dependency of the crates' tests, above `engine`. Every helper
//! panics with the bad key or value on bad input: tests pass literals.
#![deny(missing_docs)]

use engine::{Access, Config, Program, Sim, SimBuilder, SimError, Step};
use mm::{Pfn, RegionId, VmEvent};
use std::ops::Range;

/// The configuration of `profile` with `settings` (`key`, `value`) applied in order.
pub fn config(profile: &str, settings: &[(&str, &str)]) -> Config {
    let mut c = Config::for_profile(profile).unwrap_or_else(|e| panic!("profile {profile}: {e}"));
    for &(k, v) in settings {
        c.set(k, v).unwrap_or_else(|e| panic!("{k}={v}: {e}"));
    }
    c
}

/// A machine builder for `profile` with `settings`.
pub fn builder(profile: &str, settings: &[(&str, &str)]) -> SimBuilder {
    SimBuilder::new(config(profile, settings)).unwrap_or_else(|e| panic!("{profile} {settings:?}: {e}"))
}

/// A thread issuing a fixed list of accesses, then done.
pub struct Script(std::vec::IntoIter<Access>);

impl Script {
    /// A thread that performs `accesses` in order.
    pub fn new(accesses: Vec<Access>) -> Script {
        Script(accesses.into_iter())
    }
}

impl Program for Script {
    fn next(&mut self) -> Step {
        self.0.next().map_or(Step::Done, Step::Access)
    }
}

/// A thread running a fixed list of steps, then done.
pub struct Steps(std::vec::IntoIter<Step>);

impl Steps {
    /// A thread that takes `steps` in order.
    pub fn new(steps: Vec<Step>) -> Steps {
        Steps(steps.into_iter())
    }
}

impl Program for Steps {
    fn next(&mut self) -> Step {
        self.0.next().unwrap_or(Step::Done)
    }
}

/// Writes `pages` of `region` in order, access by access; stops at the first
/// failed access and returns its error.
pub fn write_pages(sim: &mut Sim, region: RegionId, pages: Range<u32>) -> Result<(), SimError> {
    pages.into_iter().try_for_each(|page| sim.access_now(Access::Mem { region, page, write: true }))
}

/// Accesses `pages` of `region` in order (stores if `write`); panics on an error.
pub fn touch(sim: &mut Sim, region: RegionId, pages: Range<u32>, write: bool) {
    for page in pages {
        sim.access_now(Access::Mem { region, page, write }).unwrap_or_else(|e| panic!("page {page}: {e}"));
    }
}

/// Clears the accessed bit of every PTE of `region`, as if reclaim had just looked at them.
pub fn age(sim: &mut Sim, region: RegionId) {
    for pte in &mut sim.mm_mut().regions[region.0 as usize].ptes {
        pte.test_clear_young();
    }
}

/// The frame mapped at `page` of `region`, if resident.
pub fn pfn(sim: &Sim, region: RegionId, page: u32) -> Option<Pfn> {
    sim.mm().regions[region.0 as usize].ptes[page as usize].pfn()
}

/// How many of `pages` of `region` are resident.
pub fn resident(sim: &Sim, region: RegionId, pages: Range<u32>) -> usize {
    pages.filter(|&p| pfn(sim, region, p).is_some()).count()
}

/// Counter `ev` of the machine.
pub fn stat(sim: &Sim, ev: VmEvent) -> u64 {
    sim.mm().stat.get(ev)
}
