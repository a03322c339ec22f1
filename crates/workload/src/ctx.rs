//! One workload instance being built: its resolved parameters (sizes relative
//! to memory, bounded integers, choices), its random streams, and adding its
//! threads to the machine.

use crate::phases::{Phase, PhaseProgram, Target};
use crate::registry::{Workload, SIZE_HELP};
use crate::spec::SpecError;
use engine::SimBuilder;
use simrng::{Sampler, SimRng};
use std::rc::Rc;

/// Resolved parameters of one workload instance.
pub(crate) struct Ctx<'a> {
    workload: &'static Workload,
    values: Vec<String>,
    pub(crate) builder: &'a mut SimBuilder,
    seed: u64,
    index: u64,
}

impl Ctx<'_> {
    /// The instance `index` of `workload` with parameter `values` (in declaration order).
    pub(crate) fn new<'a>(
        workload: &'static Workload,
        values: Vec<String>,
        builder: &'a mut SimBuilder,
        seed: u64,
        index: u64,
    ) -> Ctx<'a> {
        Ctx { workload, values, builder, seed, index }
    }

    pub(crate) fn raw(&self, key: &str) -> &str {
        let i = self.workload.params.iter().position(|p| p.key == key).expect("workload reads a declared parameter");
        &self.values[i]
    }

    pub(crate) fn bad(&self, key: &str, expected: impl Into<String>) -> SpecError {
        SpecError::BadValue {
            workload: self.workload.name.into(),
            key: key.into(),
            value: self.raw(key).into(),
            expected: expected.into(),
        }
    }

    /// A size in pages.
    pub(crate) fn pages(&self, key: &str) -> Result<u32, SpecError> {
        let v = self.raw(key);
        let mem = self.builder.memory_pages() as f64;
        let pages = if let Some(x) = v.strip_suffix('x') {
            let f: f64 = x.parse().map_err(|_| self.bad(key, SIZE_HELP))?;
            if !(f > 0.0 && f.is_finite()) {
                return Err(self.bad(key, "a positive size"));
            }
            (f * mem).round()
        } else {
            (engine::config::parse_size(v).map_err(|e| self.bad(key, e))? / mm::PAGE_SIZE) as f64
        };
        if pages < 1.0 || pages > (1u64 << 31) as f64 {
            return Err(self.bad(key, "a size between 4K and 8T"));
        }
        Ok(pages as u32)
    }

    pub(crate) fn int(&self, key: &str, lo: u64, hi: u64) -> Result<u64, SpecError> {
        let n: u64 = self.raw(key).parse().map_err(|_| self.bad(key, format!("an integer in {lo}..={hi}")))?;
        if n < lo || n > hi {
            return Err(self.bad(key, format!("an integer in {lo}..={hi}")));
        }
        Ok(n)
    }

    pub(crate) fn float(&self, key: &str, lo: f64, hi: f64) -> Result<f64, SpecError> {
        let x: f64 = self.raw(key).parse().map_err(|_| self.bad(key, format!("a number in {lo}..={hi}")))?;
        if !(lo..=hi).contains(&x) {
            return Err(self.bad(key, format!("a number in {lo}..={hi}")));
        }
        Ok(x)
    }

    pub(crate) fn choice(&self, key: &str, options: &[&'static str]) -> Result<&'static str, SpecError> {
        let v = self.raw(key);
        options
            .iter()
            .copied()
            .find(|o| *o == v)
            .ok_or_else(|| self.bad(key, format!("one of: {}", options.join(", "))))
    }

    pub(crate) fn rng(&self, stream: u64) -> SimRng {
        SimRng::new(self.seed, self.index * 1_000_003 + stream)
    }

    /// Adds `threads` threads; `phases(t)` gives thread `t`'s phases (after the start delay).
    pub(crate) fn spawn(&mut self, threads: u64, mut phases: impl FnMut(u64) -> Vec<Phase>) -> Result<(), SpecError> {
        let start_ns = self.int("start_ms", 0, 1 << 40)? * 1_000_000;
        for t in 0..threads {
            let mut ph = Vec::new();
            if start_ns > 0 {
                ph.push(Phase::Think(start_ns));
            }
            ph.extend(phases(t));
            let name = format!("{}#{}/{}", self.workload.name, self.index, t);
            let program = PhaseProgram::new(ph, self.rng(t));
            self.builder.add_thread(name, Box::new(program));
        }
        Ok(())
    }

    /// Adds thread `t` running `program` (named like [`Ctx::spawn`]'s threads).
    pub(crate) fn add_program(&mut self, t: u64, program: Box<dyn engine::Program>) {
        let name = format!("{}#{}/{}", self.workload.name, self.index, t);
        self.builder.add_thread(name, program);
    }

    /// Adds one thread running `program` after the start delay.
    pub(crate) fn spawn_program(&mut self, program: Box<dyn engine::Program>) -> Result<(), SpecError> {
        self.add_program_after_start(0, program)
    }

    /// Adds thread `t` running `program` after the start delay.
    pub(crate) fn add_program_after_start(
        &mut self,
        t: u64,
        program: Box<dyn engine::Program>,
    ) -> Result<(), SpecError> {
        let start_ns = self.int("start_ms", 0, 1 << 40)? * 1_000_000;
        let program: Box<dyn engine::Program> =
            if start_ns > 0 { Box::new(Delayed { delay: Some(start_ns), inner: program }) } else { program };
        self.add_program(t, program);
        Ok(())
    }

    /// A sampler for `pattern` over `n` pages.
    pub(crate) fn sampler(&self, pattern: &str, n: u32) -> Result<Rc<Sampler>, SpecError> {
        Ok(Rc::new(match pattern {
            "zipf" => Sampler::zipf(n, self.float("alpha", 0.0, 10.0)?, &mut self.rng(999)),
            _ => Sampler::Uniform(n),
        }))
    }
}

/// A program that first thinks for `delay`, then runs `inner`.
struct Delayed {
    delay: Option<u64>,
    inner: Box<dyn engine::Program>,
}

impl engine::Program for Delayed {
    fn next(&mut self) -> engine::Step {
        match self.delay.take() {
            Some(ns) => engine::Step::Think(ns),
            None => self.inner.next(),
        }
    }
}

/// `passes` passes over pages `start..start + len`, one access per page.
pub(crate) fn sweep(target: Target, start: u32, len: u32, passes: u32, write: bool) -> Phase {
    Phase::Sweep { target, start, len, passes, write, words: 1 }
}

/// Thread `i` of `threads` writes its contiguous share of a `pages`-page region once.
pub(crate) fn fill_share(t: Target, pages: u32, threads: u64, i: u64) -> Vec<Phase> {
    let share = pages.div_ceil(threads as u32);
    let start = (i as u32).saturating_mul(share).min(pages);
    let len = share.min(pages - start);
    if len == 0 {
        return Vec::new();
    }
    vec![sweep(t, start, len, 1, true)]
}
