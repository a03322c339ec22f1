//! zswap's shrinker (`zswap_shrinker_count`, `zswap_shrinker_scan`,
//! mm/zswap.c, v6.8; the v6.11 form): under memory pressure it writes the
//! oldest compressed entries back to the swap device, fewer the better the
//! pool compresses and the more pages recently had to be read from the device.
//! Off unless `zswap.shrinker_enabled` (the pool itself is [`mm::Zswap`]).

use crate::shrinker::{Scanned, ShrinkCtx, Shrinker, ShrinkerConfig, DEFAULT_SEEKS, SHRINK_BATCH};
use mm::ShrinkerId;

/// The zswap writeback shrinker.
pub struct ZswapWriteback;

impl Shrinker for ZswapWriteback {
    fn id(&self) -> ShrinkerId {
        ShrinkerId::Zswap
    }

    fn seeks(&self, _cfg: &ShrinkerConfig) -> u32 {
        DEFAULT_SEEKS
    }

    fn batch(&self) -> u64 {
        SHRINK_BATCH
    }

    fn count(&self, cx: &mut ShrinkCtx) -> u64 {
        cx.mm.zswap_shrinker_count()
    }

    fn scan(&self, cx: &mut ShrinkCtx, nr_to_scan: u64) -> Scanned {
        Scanned { freed: cx.mm.zswap_shrinker_scan(nr_to_scan), stolen: 0 }
    }

    /// A walk that wrote nothing back (every entry it saw was referenced) returns `SHRINK_STOP`.
    fn stops_when_idle(&self) -> bool {
        true
    }
}
