//! Page references: records flattened to one global page id per page touched.
//!
//! Address spaces come first, then files: space `s` page `p` is
//! `space_base[s] + p`. A file read or write of `n` pages is `n` references in
//! page order; mmap, munmap and exit touch nothing. The replay (`experiment::replay`)
//! emits exactly this sequence to the engine, so Belady and LRU curves computed
//! over it are directly comparable with a run.

use crate::format::{Event, Header};

/// Maps declared spaces and files to a dense range of global page ids.
#[derive(Clone, Debug)]
pub struct PageIds {
    space_base: Vec<u32>,
    file_base: Vec<u32>,
    total: u32,
}

impl PageIds {
    /// The id layout of a trace (the header's limits keep the total below 2^30).
    pub fn new(h: &Header) -> PageIds {
        let mut next = 0u32;
        let mut bases = |decls: &[crate::format::Decl]| {
            decls
                .iter()
                .map(|d| {
                    let b = next;
                    next += d.pages;
                    b
                })
                .collect::<Vec<_>>()
        };
        let space_base = bases(&h.spaces);
        let file_base = bases(&h.files);
        PageIds { space_base, file_base, total: next }
    }

    /// Number of distinct page ids (all declared pages).
    pub fn total(&self) -> u32 {
        self.total
    }

    /// The references of one event: (first id, number of consecutive ids, write).
    /// The record must have been checked against the header.
    #[inline]
    pub fn of(&self, e: &Event) -> Option<(u32, u32, bool)> {
        match *e {
            Event::Access { space, page, write } => Some((self.space_base[space as usize] + page, 1, write)),
            Event::FileRead { file, page, pages } => Some((self.file_base[file as usize] + page, pages, false)),
            Event::FileWrite { file, page, pages } => Some((self.file_base[file as usize] + page, pages, true)),
            Event::Mmap { .. } | Event::Munmap { .. } | Event::Exit => None,
        }
    }
}
