//! A thread program made of phases: sequential sweeps, random accesses, pauses.

use engine::{Access, ControlWrite, Program, Step};
use mm::{FileId, RegionId};
use simrng::Sampler;
use simrng::SimRng;
use std::rc::Rc;

/// What a phase accesses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// Pages of a region, through its page table.
    Mem(RegionId),
    /// Pages of a file, with `read()`.
    File(FileId),
}

/// One phase of a thread.
#[derive(Clone, Debug)]
pub enum Phase {
    /// Do nothing for this many nanoseconds.
    Think(u64),
    /// Touch pages `start..start + len` in order, `passes` times.
    Sweep {
        /// What to touch.
        target: Target,
        /// First page.
        start: u32,
        /// Number of pages.
        len: u32,
        /// How many passes.
        passes: u32,
        /// Stores rather than loads.
        write: bool,
        /// Accesses per page: the first touches it, the rest repeat it
        /// (`Step::Repeat`: a loop over its words, user time); 1 = one access.
        words: u32,
    },
    /// `ops` accesses to pages drawn from `sampler`, times `stride`.
    Random {
        /// What to touch.
        target: Target,
        /// Page popularity (shared by the threads of a workload).
        sampler: Rc<Sampler>,
        /// Multiplier from sampled index to page (1 = every page; 512 = one page per PTE table).
        stride: u32,
        /// Number of accesses.
        ops: u64,
        /// Stores rather than loads.
        write: bool,
        /// Computation before each access, ns (0 = back to back).
        think_ns: u64,
    },
    /// One write to a policy control (`/sys/kernel/debug/lru_gen`).
    Control(ControlWrite),
}

/// A thread that runs its phases in order.
pub struct PhaseProgram {
    phases: Vec<Phase>,
    current: usize,
    /// Position within the current phase (accesses done).
    pos: u64,
    /// The think time before the next access has been taken.
    thought: bool,
    /// The page just touched by a sweep is due its repeats.
    repeat_due: bool,
    rng: SimRng,
}

impl PhaseProgram {
    /// A program running `phases` with random stream `rng`.
    pub fn new(phases: Vec<Phase>, rng: SimRng) -> PhaseProgram {
        PhaseProgram { phases, current: 0, pos: 0, thought: false, repeat_due: false, rng }
    }
}

fn access(target: Target, page: u32, write: bool) -> Access {
    match target {
        Target::Mem(region) => Access::Mem { region, page, write },
        Target::File(file) => Access::FileRead { file, page },
    }
}

impl Program for PhaseProgram {
    #[inline]
    fn next(&mut self) -> Step {
        // Bounded: each iteration either returns or moves to the next phase.
        while let Some(phase) = self.phases.get(self.current) {
            match phase {
                Phase::Think(ns) => {
                    let ns = *ns;
                    self.current += 1;
                    self.pos = 0;
                    return Step::Think(ns);
                }
                &Phase::Sweep { target, start, len, passes, write, words } => {
                    if self.repeat_due {
                        self.repeat_due = false;
                        return Step::Repeat(words - 1);
                    }
                    if self.pos < len as u64 * passes as u64 {
                        let page = start + (self.pos % len as u64) as u32;
                        self.pos += 1;
                        self.repeat_due = words > 1;
                        return Step::Access(access(target, page, write));
                    }
                }
                &Phase::Control(w) => {
                    self.current += 1;
                    self.pos = 0;
                    return Step::Control(w);
                }
                Phase::Random { target, sampler, stride, ops, write, think_ns } => {
                    if self.pos < *ops {
                        if *think_ns > 0 && !self.thought {
                            self.thought = true;
                            return Step::Think(*think_ns);
                        }
                        self.thought = false;
                        self.pos += 1;
                        let page = sampler.sample(&mut self.rng) * stride;
                        return Step::Access(access(*target, page, *write));
                    }
                }
            }
            self.current += 1;
            self.pos = 0;
        }
        Step::Done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_run_in_order() {
        let r = RegionId(0);
        let mut p = PhaseProgram::new(
            vec![
                Phase::Sweep { target: Target::Mem(r), start: 2, len: 2, passes: 2, write: true, words: 1 },
                Phase::Think(5),
                Phase::Sweep { target: Target::File(FileId(1)), start: 0, len: 1, passes: 1, write: false, words: 3 },
            ],
            SimRng::new(0, 0),
        );
        let mut steps = vec![];
        loop {
            let s = p.next();
            steps.push(s);
            if s == Step::Done {
                break;
            }
        }
        let m = |page| Step::Access(Access::Mem { region: r, page, write: true });
        assert_eq!(
            steps,
            vec![
                m(2),
                m(3),
                m(2),
                m(3),
                Step::Think(5),
                Step::Access(Access::FileRead { file: FileId(1), page: 0 }),
                Step::Repeat(2),
                Step::Done
            ]
        );
    }
}
