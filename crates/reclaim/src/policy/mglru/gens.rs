//! Generations of one lruvec (`struct lru_gen_folio`) and the per-page fields.
//!
//! A page's *logical* generation lives in `Frame::gen` (bits 0-2 hold gen + 1,
//! 0 = not on a generation list; bits 3-4 hold the refs counter). The list a
//! page is *linked* on is `Frame::lru` (= gen * 2 + type). The two differ after
//! the aging promotes a page: as in the kernel, the aging only rewrites the
//! generation number and the size counters, and the eviction moves the page
//! to its list later (`sort_folio`). Invariant, per type t:
//! `min_seq[t] <= seq(linked list) <= seq(logical gen) <= max_seq`.

use mm::{Frame, FrameTable, LruList, Mm, PageFlags, Pfn};

/// KERNEL: `MIN_NR_GENS`.
pub const MIN_NR_GENS: u64 = 2;
/// KERNEL: `MAX_NR_GENS`.
pub const MAX_NR_GENS: u64 = 4;
/// KERNEL: `MAX_NR_TIERS`.
pub const MAX_NR_TIERS: usize = 4;
/// KERNEL: `LRU_REFS_WIDTH` (`MAX_NR_TIERS - 2`).
pub const LRU_REFS_WIDTH: u32 = 2;
/// KERNEL: `MIN_LRU_BATCH` (`BITS_PER_LONG`).
pub const MIN_LRU_BATCH: u64 = 64;
/// KERNEL: `MAX_LRU_BATCH` (`MIN_LRU_BATCH * 64`).
pub const MAX_LRU_BATCH: u64 = MIN_LRU_BATCH * 64;
/// Type index of anon pages (`LRU_GEN_ANON`).
pub const ANON: usize = 0;
/// Type index of file pages (`LRU_GEN_FILE`).
pub const FILE: usize = 1;

const GEN_MASK: u8 = 0b111;
const REFS_SHIFT: u32 = 3;
const REFS_MASK: u8 = 0b11 << REFS_SHIFT;

/// The type index of a page (`folio_is_file_lru`).
#[inline]
pub fn type_of(f: &Frame) -> usize {
    !f.is_anon() as usize
}

/// The logical generation of a page, `None` if it is not on a generation list.
#[inline]
pub fn folio_gen(f: &Frame) -> Option<usize> {
    let g = f.gen & GEN_MASK;
    (g != 0).then(|| (g - 1) as usize)
}

fn set_folio_gen(f: &mut Frame, gen: Option<usize>) {
    f.gen = (f.gen & !GEN_MASK) | gen.map_or(0, |g| g as u8 + 1);
}

/// The refs counter (`LRU_REFS_MASK` bits).
#[inline]
pub fn refs_counter(f: &Frame) -> u8 {
    (f.gen & REFS_MASK) >> REFS_SHIFT
}

/// Sets the refs counter (saturating at the field width).
#[inline]
pub fn set_refs_counter(f: &mut Frame, n: u8) {
    let n = n.min((1 << LRU_REFS_WIDTH) - 1);
    f.gen = (f.gen & !REFS_MASK) | (n << REFS_SHIFT);
}

/// `lru_gen_from_seq()`.
#[inline]
pub fn gen_from_seq(seq: u64) -> usize {
    (seq % MAX_NR_GENS) as usize
}

/// The generations of the one lruvec.
#[derive(Debug)]
pub struct LruGen {
    /// The youngest generation (shared by both types).
    pub max_seq: u64,
    /// The oldest generation of each type.
    pub min_seq: [u64; 2],
    /// Birth time of each generation slot, ns.
    pub timestamps: [u64; MAX_NR_GENS as usize],
    lists: [[LruList; 2]; MAX_NR_GENS as usize],
    nr_pages: [[u64; 2]; MAX_NR_GENS as usize],
}

impl LruGen {
    /// Initial state (`lru_gen_init_lruvec`): `max_seq = MIN_NR_GENS + 1`, `min_seq = 0`.
    pub fn new() -> LruGen {
        LruGen {
            max_seq: MIN_NR_GENS + 1,
            min_seq: [0; 2],
            timestamps: [0; 4],
            lists: Default::default(),
            nr_pages: [[0; 2]; 4],
        }
    }

    /// `get_nr_gens()`: generations of `ty`.
    #[inline]
    pub fn nr_gens(&self, ty: usize) -> u64 {
        self.max_seq - self.min_seq[ty] + 1
    }

    /// Pages whose logical generation is `gen`, of type `ty`.
    #[inline]
    pub fn nr_pages(&self, gen: usize, ty: usize) -> u64 {
        self.nr_pages[gen][ty]
    }

    /// The list pages of generation slot `gen` and type `ty` are linked on.
    #[inline]
    pub fn list(&self, gen: usize, ty: usize) -> &LruList {
        &self.lists[gen][ty]
    }

    /// Total pages on generation lists.
    pub fn total(&self) -> u64 {
        self.nr_pages.iter().flatten().sum()
    }

    /// `lru_gen_is_active()`: the two youngest generations count as active.
    pub fn is_active(&self, gen: usize) -> bool {
        gen == gen_from_seq(self.max_seq) || gen == gen_from_seq(self.max_seq - 1)
    }

    /// Links `pfn` on generation `seq`'s list (head, or tail when `tail`), sets
    /// `PG_lru`, clears `PG_active` (never kept on a generation list).
    pub fn add(&mut self, frames: &mut FrameTable, pfn: Pfn, seq: u64, tail: bool) {
        let gen = gen_from_seq(seq);
        let f = &mut frames[pfn];
        debug_assert!(folio_gen(f).is_none() && !f.flags.has(PageFlags::LRU), "pfn {pfn} added twice");
        let ty = type_of(f);
        set_folio_gen(f, Some(gen));
        f.flags.set(PageFlags::LRU);
        f.flags.clear(PageFlags::ACTIVE);
        f.lru = (gen * 2 + ty) as u8;
        self.nr_pages[gen][ty] += 1;
        let list = &mut self.lists[gen][ty];
        if tail {
            list.push_tail(frames.slice_mut(), pfn);
        } else {
            list.push_head(frames.slice_mut(), pfn);
        }
    }

    /// Unlinks `pfn` (`lru_gen_del_folio`), clears `PG_lru`; returns its logical generation.
    pub fn del(&mut self, frames: &mut FrameTable, pfn: Pfn) -> usize {
        let f = &mut frames[pfn];
        let gen = folio_gen(f).expect("deleting a page that is on no generation list");
        let ty = type_of(f);
        let linked = f.lru as usize;
        set_folio_gen(f, None);
        f.flags.clear(PageFlags::LRU);
        self.nr_pages[gen][ty] -= 1;
        self.lists[linked / 2][linked % 2].remove(frames.slice_mut(), pfn);
        gen
    }

    /// Rewrites the logical generation of a listed page (sizes follow, the link stays).
    pub fn set_gen(&mut self, frames: &mut FrameTable, pfn: Pfn, new_gen: usize) {
        let f = &mut frames[pfn];
        let old = folio_gen(f).expect("page on no generation list");
        let ty = type_of(f);
        set_folio_gen(f, Some(new_gen));
        self.nr_pages[old][ty] -= 1;
        self.nr_pages[new_gen][ty] += 1;
    }

    /// Relinks a listed page on the list of its logical generation (head or tail).
    pub fn relink(&mut self, frames: &mut FrameTable, pfn: Pfn, tail: bool) {
        let f = &frames[pfn];
        let gen = folio_gen(f).expect("page on no generation list");
        let ty = type_of(f);
        let linked = f.lru as usize;
        let frames = frames.slice_mut();
        self.lists[linked / 2][linked % 2].remove(frames, pfn);
        frames[pfn as usize].lru = (gen * 2 + ty) as u8;
        if tail {
            self.lists[gen][ty].push_tail(frames, pfn);
        } else {
            self.lists[gen][ty].push_head(frames, pfn);
        }
    }

    /// The seq of generation slot `gen` of type `ty`, if it lies in `[min_seq, max_seq]`.
    pub fn seq_of(&self, gen: usize, ty: usize) -> Option<u64> {
        (self.min_seq[ty]..=self.max_seq).find(|&s| gen_from_seq(s) == gen)
    }

    /// Checks the generation bounds, list links and sizes against `mm` (O(n)).
    pub fn check(&self, mm: &Mm) {
        let frames = mm.frames.as_slice();
        let mut logical = [[0u64; 2]; 4];
        for ty in [ANON, FILE] {
            let n = self.nr_gens(ty);
            assert!(
                (MIN_NR_GENS..=MAX_NR_GENS).contains(&n),
                "type {ty}: {n} generations (max_seq {}, min_seq {})",
                self.max_seq,
                self.min_seq[ty]
            );
            for gen in 0..MAX_NR_GENS as usize {
                let list = &self.lists[gen][ty];
                let mut linked = 0;
                for pfn in list.iter(frames) {
                    let f = &frames[pfn as usize];
                    assert!(
                        f.flags.has(PageFlags::LRU) && !f.flags.has(PageFlags::ACTIVE),
                        "pfn {pfn}: bad flags {:?} on a gen list",
                        f.flags
                    );
                    assert_eq!(type_of(f), ty, "pfn {pfn} on the wrong type's list");
                    assert_eq!(f.lru as usize, gen * 2 + ty, "pfn {pfn}: lru field disagrees with its list");
                    let g = folio_gen(f).expect("listed page without a generation");
                    let link_seq = self.seq_of(gen, ty).unwrap_or_else(|| {
                        panic!("pfn {pfn} linked on gen {gen} outside [{}, {}]", self.min_seq[ty], self.max_seq)
                    });
                    let seq = self.seq_of(g, ty).unwrap_or_else(|| {
                        panic!("pfn {pfn} in gen {g} outside [{}, {}]", self.min_seq[ty], self.max_seq)
                    });
                    assert!(link_seq <= seq, "pfn {pfn}: linked on seq {link_seq} but belongs to older seq {seq}");
                    logical[g][ty] += 1;
                    linked += 1;
                }
                assert_eq!(linked, list.len(), "gen {gen} type {ty}: length {} but {linked} linked", list.len());
            }
        }
        assert_eq!(logical, self.nr_pages, "generation sizes disagree with the pages");
    }
}

impl Default for LruGen {
    fn default() -> Self {
        LruGen::new()
    }
}
