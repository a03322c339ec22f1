//! Zones and their watermarks.

/// Zone types, in the kernel's order (the index is the zone index).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum ZoneId {
    /// `ZONE_NORMAL`.
    Normal = 2,
}

impl ZoneId {
    /// The zone's name as used in counter suffixes (`allocstall_normal`).
    pub fn name(self) -> &'static str {
        match self {
            ZoneId::Normal => "normal",
        }
    }
}

/// Watermark kinds, indexing [`Zone::watermark`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Watermark {
    /// `WMARK_MIN`: below it, allocations enter direct reclaim.
    Min = 0,
    /// `WMARK_LOW`: below it, kswapd is woken.
    Low = 1,
    /// `WMARK_HIGH`: kswapd reclaims until free pages reach it.
    High = 2,
    /// `WMARK_PROMO`: used with NUMA memory tiering only.
    Promo = 3,
}

/// One zone: its managed pages and watermarks, in pages.
#[derive(Clone, Debug)]
pub struct Zone {
    /// Which zone.
    pub id: ZoneId,
    /// Pages managed by the buddy allocator.
    pub managed: u64,
    /// `_watermark[]`, indexed by [`Watermark`]; set by the reclaim layer.
    pub watermark: [u64; 4],
}

impl Zone {
    /// A zone of `managed` pages with zero watermarks.
    pub fn new(id: ZoneId, managed: u32) -> Zone {
        Zone { id, managed: managed as u64, watermark: [0; 4] }
    }
    /// The value of watermark `w` (no boost: S-MM4, fragmentation is not modelled).
    #[inline]
    pub fn wmark(&self, w: Watermark) -> u64 {
        self.watermark[w as usize]
    }
}
