//! Shared parts of workingset detection: shadow packing and refault distance.
//!
//! ```text
//!   evicted pages            resident pages
//!   (shadow entries)   <-- inactive list <-- active list
//!   ........... | ............................ |
//!      eviction E          nonresident_age now N
//! ```
//!
//! When a page is evicted, the policy stores a *shadow* in its slot recording the
//! lruvec's non-resident age at that moment (E). The age counter advances on every
//! eviction and activation. When the page faults back in, `N - E` is how many
//! pages were evicted or activated while it was out: its *refault distance*. Had
//! memory been larger by that distance, the page would have stayed resident; so
//! if the distance is within what the other lists hold (the workingset size the
//! policy computes), activating the refaulting page costs the workingset nothing
//! it would not have lost anyway, and it is activated.
//!
//! In words: a refault is a sign of thrashing when the page was evicted only
//! recently, measured in pages of reclaim activity, not in time.
//!
//! Implementation: a shadow is one 62-bit word — the workingset bit, a 16-bit
//! memcg id and a 45-bit eviction timestamp (one node: no node bits). Where we
//! differ: `bucket_order` is 0 (the kernel's is 0 below 2^36 pages of RAM too).

use mm::Shadow;

const WS_BITS: u32 = 1;
const MEMCG_BITS: u32 = 16;
/// Bits left for the eviction timestamp.
pub const EVICTION_BITS: u32 = 62 - WS_BITS - MEMCG_BITS;
/// Mask applied to timestamps and distances (the kernel's `EVICTION_MASK`).
pub const EVICTION_MASK: u64 = (1 << EVICTION_BITS) - 1;

/// The unpacked contents of a shadow entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShadowInfo {
    /// Non-resident age of the lruvec at eviction (masked).
    pub eviction: u64,
    /// Id of the memcg whose lruvec evicted the page (0 = root).
    pub memcg: u16,
    /// `PG_workingset` at eviction.
    pub workingset: bool,
}

/// Packs a shadow entry (`pack_shadow`).
pub fn pack_shadow(info: ShadowInfo) -> Shadow {
    let v = ((info.eviction & EVICTION_MASK) << (MEMCG_BITS + WS_BITS))
        | ((info.memcg as u64) << WS_BITS)
        | info.workingset as u64;
    Shadow(v)
}

/// Unpacks a shadow entry (`unpack_shadow`).
pub fn unpack_shadow(s: Shadow) -> ShadowInfo {
    ShadowInfo {
        eviction: s.0 >> (MEMCG_BITS + WS_BITS),
        memcg: ((s.0 >> WS_BITS) & ((1 << MEMCG_BITS) - 1)) as u16,
        workingset: s.0 & 1 != 0,
    }
}

/// Refault distance: evictions and activations since the eviction, modulo the timestamp width.
pub fn refault_distance(nonresident_age: u64, eviction: u64) -> u64 {
    nonresident_age.wrapping_sub(eviction) & EVICTION_MASK
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shadow_round_trip() {
        for info in [
            ShadowInfo { eviction: 0, memcg: 0, workingset: false },
            ShadowInfo { eviction: EVICTION_MASK, memcg: u16::MAX, workingset: true },
            ShadowInfo { eviction: 123_456, memcg: 7, workingset: true },
        ] {
            let s = pack_shadow(info);
            assert!(s.0 <= Shadow::MAX);
            assert_eq!(unpack_shadow(s), info);
        }
    }

    #[test]
    fn distance_wraps() {
        assert_eq!(refault_distance(10, 4), 6);
        assert_eq!(refault_distance(2, EVICTION_MASK), 3);
    }
}
