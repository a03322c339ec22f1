//! Seed 004's benchmark: ebizzy's search loop (pick a chunk, copy it into a
//! buffer, look a record up in the copy), with zipf chunk popularity as in the
//! seed's modified ebizzy.

use engine::{Access, Program, Step};
use mm::RegionId;
use simrng::Sampler;
use simrng::SimRng;
use std::rc::Rc;

/// Where one ebizzy thread's memory lives and how much it does.
#[derive(Clone, Copy, Debug)]
pub struct EbizzyShape {
    /// The chunks, one anonymous region (`mem[]` in ebizzy).
    pub mem: RegionId,
    /// Pages in `mem`.
    pub pages: u32,
    /// Pages per chunk (ebizzy `-s`, 512 KiB by default).
    pub chunk: u32,
    /// This thread's copy buffer (`chunk` pages), or `None` to read chunks without copying.
    pub copy: Option<RegionId>,
    /// This thread's share of `mem` to fill first: start page and length.
    pub fill: (u32, u32),
    /// Chunk pages to read in the search loop (a chunk copy reads `chunk` pages).
    pub reads: u64,
}

/// One ebizzy worker thread.
///
/// Simplification S-WL3: ebizzy's `search_mem()` loop at page granularity: a chunk is
/// drawn from the shared popularity distribution, each of its pages is read
/// and stored to the same page of the thread's copy buffer (`memcpy`), then the
/// next chunk. The copy buffer is one region reused by every copy, as glibc's
/// `malloc` reuses the freed block once its dynamic mmap threshold has risen
/// past the chunk size; the binary search touches only the (resident) copy and
/// is not issued. Before the loop the thread writes its share of the chunks
/// (ebizzy's main thread writes them all before starting the workers).
pub struct Ebizzy {
    shape: EbizzyShape,
    sampler: Rc<Sampler>,
    rng: SimRng,
    filled: u32,
    reads_left: u64,
    /// First page of the chunk being copied, its length, and the next page within it.
    chunk_start: u32,
    chunk_len: u32,
    pos: u32,
    /// The store of the page just read is next.
    store_pending: bool,
}

impl Ebizzy {
    /// A thread of the given shape; `sampler` draws chunk indices.
    pub fn new(shape: EbizzyShape, sampler: Rc<Sampler>, rng: SimRng) -> Ebizzy {
        Ebizzy {
            shape,
            sampler,
            rng,
            filled: 0,
            reads_left: shape.reads,
            chunk_start: 0,
            chunk_len: 0,
            pos: 0,
            store_pending: false,
        }
    }
}

impl Program for Ebizzy {
    #[inline]
    fn next(&mut self) -> Step {
        let s = &self.shape;
        if self.filled < s.fill.1 {
            self.filled += 1;
            return Step::Access(Access::Mem { region: s.mem, page: s.fill.0 + self.filled - 1, write: true });
        }
        if self.store_pending {
            self.store_pending = false;
            if let Some(copy) = s.copy {
                return Step::Access(Access::Mem { region: copy, page: self.pos - 1, write: true });
            }
        }
        if self.reads_left == 0 {
            return Step::Done;
        }
        if self.pos >= self.chunk_len {
            self.chunk_start = self.sampler.sample(&mut self.rng) * s.chunk;
            self.chunk_len = s.chunk.min(s.pages - self.chunk_start);
            self.pos = 0;
        }
        let page = self.chunk_start + self.pos;
        self.pos += 1;
        self.reads_left -= 1;
        self.store_pending = s.copy.is_some();
        Step::Access(Access::Mem { region: s.mem, page, write: false })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_then_copies_whole_chunks() {
        let (mem, copy) = (RegionId(0), RegionId(1));
        let shape = EbizzyShape { mem, pages: 5, chunk: 2, copy: Some(copy), fill: (1, 2), reads: 4 };
        // Three chunks (the last one page long); a one-chunk sampler always draws chunk 0.
        let mut p = Ebizzy::new(shape, Rc::new(Sampler::Uniform(1)), SimRng::new(1, 0));
        let m = |region, page, write| Step::Access(Access::Mem { region, page, write });
        let steps: Vec<Step> = std::iter::from_fn(|| Some(p.next())).take(11).collect();
        assert_eq!(
            steps,
            vec![
                m(mem, 1, true),
                m(mem, 2, true),
                m(mem, 0, false),
                m(copy, 0, true),
                m(mem, 1, false),
                m(copy, 1, true),
                m(mem, 0, false),
                m(copy, 0, true),
                m(mem, 1, false),
                m(copy, 1, true),
                Step::Done
            ]
        );
    }

    #[test]
    fn partial_last_chunk_without_copy() {
        let mem = RegionId(0);
        let shape = EbizzyShape { mem, pages: 5, chunk: 2, copy: None, fill: (0, 0), reads: 3 };
        let mut rng = SimRng::new(3, 0);
        // zipf(0) over 3 chunks: every read stays inside the region and chunks are read whole.
        let mut p = Ebizzy::new(shape, Rc::new(Sampler::zipf(3, 0.0, &mut rng)), rng);
        let mut pages = Vec::new();
        loop {
            match p.next() {
                Step::Access(Access::Mem { page, write: false, .. }) => pages.push(page),
                Step::Done => break,
                s => panic!("unexpected {s:?}"),
            }
        }
        assert_eq!(pages.len(), 3);
        assert!(pages.iter().all(|&pg| pg < 5));
        // A chunk starting at an even page continues with the next page unless it is the 1-page last chunk.
        assert!(pages[0] % 2 == 0 && (pages[0] == 4 || pages[1] == pages[0] + 1));
    }
}
