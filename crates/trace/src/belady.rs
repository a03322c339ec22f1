//! Belady's MIN: the fewest page faults any replacement policy can have for a
//! reference sequence and a memory of `capacity` pages (first touches included).
//!
//! On a fault with memory full, MIN evicts the resident page whose next use is
//! farthest in the future (never used again counts as farthest). That needs
//! each reference's next use, which is known only by looking ahead; we compute
//! it in one backward pass over the sequence ([`next_use_index`]), writing the
//! next-use times in reverse order (the "reversed next-use index"), then
//! simulate MIN in one forward pass ([`min_faults`]) that reads the sequence
//! forwards and the index backwards.
//!
//! Memory: the backward pass keeps one u64 per page id (the last time seen),
//! the forward pass one u64 per page id plus a heap of O(capacity) entries;
//! neither depends on the sequence length. The sequence (4 bytes per
//! reference) and the index (8 bytes per reference) live in caller-supplied
//! storage, a file for long traces.

use std::collections::BinaryHeap;
use std::io::{self, Cursor, Read, Seek, SeekFrom, Write};

/// A next use that never comes.
pub const NEVER: u64 = u64::MAX;

/// SIM-CHOICE: items per block when reading storage backwards (512 KiB of u64).
const BLOCK_ITEMS: u64 = 1 << 16;

/// Reads fixed-size little-endian items from the end of a seekable store to its start.
struct Backward<'a, S: Read + Seek, const N: usize> {
    s: &'a mut S,
    /// Items not yet loaded, counted from the start.
    left: u64,
    buf: Vec<u8>,
    /// Items of `buf` not yet returned.
    in_buf: usize,
}

impl<'a, S: Read + Seek, const N: usize> Backward<'a, S, N> {
    fn new(s: &'a mut S, items: u64) -> Backward<'a, S, N> {
        Backward { s, left: items, buf: Vec::new(), in_buf: 0 }
    }

    fn next(&mut self) -> io::Result<Option<[u8; N]>> {
        if self.in_buf == 0 {
            if self.left == 0 {
                return Ok(None);
            }
            let take = self.left.min(BLOCK_ITEMS);
            self.left -= take;
            self.s.seek(SeekFrom::Start(self.left * N as u64))?;
            self.buf.resize(take as usize * N, 0);
            self.s.read_exact(&mut self.buf)?;
            self.in_buf = take as usize;
        }
        self.in_buf -= 1;
        let o = self.in_buf * N;
        Ok(Some(self.buf[o..o + N].try_into().expect("N bytes")))
    }
}

/// The backward pass: for each of the `n` page ids in `seq` (u32 little-endian),
/// the index of its next reference (or [`NEVER`]), written to `out` as u64
/// little-endian in reverse order (entry 0 is the last reference's).
pub fn next_use_index<S: Read + Seek, W: Write>(seq: &mut S, n: u64, pages: u32, out: &mut W) -> io::Result<()> {
    let mut last = vec![NEVER; pages as usize];
    let mut back = Backward::<S, 4>::new(seq, n);
    let mut i = n;
    while let Some(b) = back.next()? {
        i -= 1;
        let p = u32::from_le_bytes(b) as usize;
        let slot = last.get_mut(p).ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidData, format!("page id {p} at reference {i} is out of range"))
        })?;
        out.write_all(&slot.to_le_bytes())?;
        *slot = i;
    }
    Ok(())
}

/// The forward pass: faults of MIN with `capacity` pages on the `n` page ids of
/// `seq`, given the reversed next-use index from [`next_use_index`].
pub fn min_faults<R: Read, S: Read + Seek>(
    seq: &mut R,
    rev_next: &mut S,
    n: u64,
    pages: u32,
    capacity: u64,
) -> io::Result<u64> {
    assert!(capacity > 0, "MIN needs a capacity of at least one page");
    // Next use of each resident page; 0 = not resident (a next use is always > 0).
    let mut next_of = vec![0u64; pages as usize];
    // Max-heap of (next use, page); entries whose next use no longer matches are stale.
    let mut heap: BinaryHeap<(u64, u32)> = BinaryHeap::new();
    let mut resident = 0u64;
    let mut faults = 0u64;
    let mut next = Backward::<S, 8>::new(rev_next, n);
    let mut seq = io::BufReader::with_capacity(1 << 16, seq);
    let mut b = [0u8; 4];
    for i in 0..n {
        seq.read_exact(&mut b)?;
        let p = u32::from_le_bytes(b);
        let nu = u64::from_le_bytes(next.next()?.ok_or_else(|| {
            io::Error::new(io::ErrorKind::UnexpectedEof, format!("next-use index ends at reference {i}"))
        })?);
        let slot = next_of.get(p as usize).copied().ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidData, format!("page id {p} at reference {i} is out of range"))
        })?;
        if slot == 0 {
            faults += 1;
            if resident == capacity {
                loop {
                    let (k, q) = heap.pop().expect("a full memory has a valid heap entry");
                    if next_of[q as usize] == k {
                        next_of[q as usize] = 0;
                        break;
                    }
                }
            } else {
                resident += 1;
            }
        }
        next_of[p as usize] = nu;
        heap.push((nu, p));
        // Drop stale entries when they outnumber the live ones, keeping memory O(capacity).
        if heap.len() as u64 > 2 * capacity + 1024 {
            heap.retain(|&(k, q)| next_of[q as usize] == k);
        }
    }
    Ok(faults)
}

/// MIN faults for an in-memory sequence at each capacity (for small traces and tests).
pub fn min_faults_in_memory(ids: &[u32], pages: u32, capacities: &[u64]) -> Vec<u64> {
    let seq: Vec<u8> = ids.iter().flat_map(|p| p.to_le_bytes()).collect();
    let mut index = Vec::with_capacity(ids.len() * 8);
    next_use_index(&mut Cursor::new(&seq), ids.len() as u64, pages, &mut index)
        .expect("in-memory I/O and ids in range");
    capacities
        .iter()
        .map(|&c| {
            min_faults(&mut Cursor::new(&seq), &mut Cursor::new(&index), ids.len() as u64, pages, c)
                .expect("in-memory I/O and ids in range")
        })
        .collect()
}
