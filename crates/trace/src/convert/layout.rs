//! Dense page numbering for sparse inputs: byte addresses and object ids.

use crate::format::MAX_TOTAL_PAGES;
use std::collections::BTreeMap;

/// SIM-CHOICE: addresses are grouped in 2 MiB chunks (512 pages of 4 KiB);
/// chunks are numbered in first-touch order, so pages keep their neighbours
/// within a chunk while a sparse 64-bit address space becomes a dense region.
pub const CHUNK_PAGES: u64 = 512;

/// Maps byte addresses to dense page indexes of one address space.
pub struct AddressPages {
    shift: u32,
    chunks: BTreeMap<u64, u32>,
    last: Option<(u64, u32)>,
}

impl AddressPages {
    /// For pages of `page_size` bytes (a power of two).
    pub fn new(page_size: u32) -> AddressPages {
        AddressPages { shift: page_size.trailing_zeros(), chunks: BTreeMap::new(), last: None }
    }

    /// The page-number range `first..=last` of bytes `addr..addr+len`.
    pub fn page_span(&self, addr: u64, len: u64) -> (u64, u64) {
        (addr >> self.shift, addr.saturating_add(len.max(1) - 1) >> self.shift)
    }

    /// The dense page index of virtual page number `vpn`; `Err` with the limit
    /// message if the address space would exceed the page limit.
    #[inline]
    pub fn page(&mut self, vpn: u64) -> Result<u32, String> {
        let chunk = vpn / CHUNK_PAGES;
        let idx = match self.last {
            Some((c, i)) if c == chunk => i,
            _ => {
                let n = self.chunks.len() as u32;
                let i = *self.chunks.entry(chunk).or_insert(n);
                if (i as u64 + 1) * CHUNK_PAGES > MAX_TOTAL_PAGES {
                    return Err(format!(
                        "more than {} distinct 2 MiB chunks of addresses; at most {MAX_TOTAL_PAGES} pages",
                        MAX_TOTAL_PAGES / CHUNK_PAGES
                    ));
                }
                self.last = Some((chunk, i));
                i
            }
        };
        Ok((idx as u64 * CHUNK_PAGES + vpn % CHUNK_PAGES) as u32)
    }

    /// Pages of the dense address space (whole chunks).
    pub fn pages(&self) -> u32 {
        (self.chunks.len() as u64 * CHUNK_PAGES) as u32
    }
}

/// Lays objects out back to back in one file, in first-seen order; an object
/// keeps the page count it had when first seen.
#[derive(Default)]
pub struct ObjectPages {
    objects: BTreeMap<u64, (u32, u32)>,
    next: u64,
}

impl ObjectPages {
    /// The (first page, pages) of object `id` of `pages` pages; `Err` past the page limit.
    pub fn place(&mut self, id: u64, pages: u64) -> Result<(u32, u32), String> {
        if let Some(&p) = self.objects.get(&id) {
            return Ok(p);
        }
        let pages = pages.max(1);
        if self.next + pages > MAX_TOTAL_PAGES {
            return Err(format!("objects need more than {MAX_TOTAL_PAGES} pages (object {id} has {pages})"));
        }
        let p = (self.next as u32, pages as u32);
        self.next += pages;
        self.objects.insert(id, p);
        Ok(p)
    }

    /// Pages used by all objects.
    pub fn pages(&self) -> u32 {
        self.next as u32
    }
}
