//! Seed 003's benchmarks: a memcached-like in-memory store (`memcachetest`)
//! and a large file copy in the background (mmtests' `parallelio`).

use engine::{Access, Program, Step};
use mm::{FileId, RegionId};
use simrng::SimRng;

/// A key-value store in anonymous memory serving gets and sets.
///
/// SIM-CHOICE: memcached's item memory is one anonymous region of the working
/// set's size, filled by sets first; then each operation touches one page drawn
/// uniformly (memcachetest picks keys uniformly) after `service_ns` of CPU
/// (request parsing, networking), a set storing to it. Operations per second is
/// the score, as memcachetest reports it.
pub struct MemcacheTest {
    region: RegionId,
    pages: u32,
    ops: u64,
    set_pct: u32,
    service_ns: u64,
    rng: SimRng,
    filled: u32,
    done: u64,
    /// The next operation's CPU time has been spent; its access is next.
    served: bool,
}

impl MemcacheTest {
    /// A store of `pages` pages in `region` serving `ops` operations, `set_pct`% of them sets.
    pub fn new(region: RegionId, pages: u32, ops: u64, set_pct: u32, service_ns: u64, rng: SimRng) -> MemcacheTest {
        MemcacheTest { region, pages, ops, set_pct, service_ns, rng, filled: 0, done: 0, served: false }
    }
}

impl Program for MemcacheTest {
    fn next(&mut self) -> Step {
        if self.filled < self.pages {
            self.filled += 1;
            return Step::Access(Access::Mem { region: self.region, page: self.filled - 1, write: true });
        }
        if self.done >= self.ops {
            return Step::Done;
        }
        if !self.served && self.service_ns > 0 {
            self.served = true;
            return Step::Think(self.service_ns);
        }
        self.served = false;
        self.done += 1;
        let page = self.rng.below(self.pages);
        let write = self.rng.below(100) < self.set_pct;
        Step::Access(Access::Mem { region: self.region, page, write })
    }
}

/// A file copy: for every page in order, reads page `i` of `src` with
/// `read()` (when there is a source; mmtests' parallelio writes from
/// `/dev/zero`) and writes page `i` of `dst` with `write()`.
pub struct FileCopy {
    src: Option<FileId>,
    dst: FileId,
    pages: u32,
    next: u64,
}

impl FileCopy {
    /// Copies `pages` pages of `src` (or zeroes) to `dst`.
    pub fn new(src: Option<FileId>, dst: FileId, pages: u32) -> FileCopy {
        FileCopy { src, dst, pages, next: 0 }
    }
}

impl Program for FileCopy {
    fn next(&mut self) -> Step {
        let per_page = 1 + self.src.is_some() as u64;
        if self.next >= per_page * self.pages as u64 {
            return Step::Done;
        }
        let page = (self.next / per_page) as u32;
        let read = per_page == 2 && self.next.is_multiple_of(2);
        self.next += 1;
        Step::Access(match self.src {
            Some(src) if read => Access::FileRead { file: src, page },
            _ => Access::FileWrite { file: self.dst, page },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn steps(p: &mut dyn Program) -> Vec<Step> {
        let mut v = Vec::new();
        loop {
            let s = p.next();
            v.push(s);
            if s == Step::Done {
                return v;
            }
        }
    }

    #[test]
    fn copy_alternates_read_and_write() {
        let (a, b) = (FileId(0), FileId(1));
        assert_eq!(
            steps(&mut FileCopy::new(None, b, 2)),
            vec![
                Step::Access(Access::FileWrite { file: b, page: 0 }),
                Step::Access(Access::FileWrite { file: b, page: 1 }),
                Step::Done
            ]
        );
        assert_eq!(
            steps(&mut FileCopy::new(Some(a), b, 2)),
            vec![
                Step::Access(Access::FileRead { file: a, page: 0 }),
                Step::Access(Access::FileWrite { file: b, page: 0 }),
                Step::Access(Access::FileRead { file: a, page: 1 }),
                Step::Access(Access::FileWrite { file: b, page: 1 }),
                Step::Done
            ]
        );
    }

    #[test]
    fn memcache_fills_then_serves_with_service_time() {
        let r = RegionId(0);
        let s = steps(&mut MemcacheTest::new(r, 2, 3, 100, 7, SimRng::new(1, 0)));
        assert_eq!(
            s[..2],
            [
                Step::Access(Access::Mem { region: r, page: 0, write: true }),
                Step::Access(Access::Mem { region: r, page: 1, write: true })
            ]
        );
        assert_eq!(s.len(), 2 + 3 * 2 + 1);
        assert!(s[2..8]
            .chunks(2)
            .all(|c| c[0] == Step::Think(7) && matches!(c[1], Step::Access(Access::Mem { write: true, .. }))));
        let gets = steps(&mut MemcacheTest::new(r, 4, 50, 0, 0, SimRng::new(1, 0)));
        assert!(gets[4..54].iter().all(|s| matches!(s, Step::Access(Access::Mem { write: false, .. }))));
    }
}
