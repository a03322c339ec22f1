//! Zone watermarks from `vm.min_free_kbytes` and `vm.watermark_scale_factor`.
//!
//! Models `calculate_min_free_kbytes()` and `__setup_per_zone_wmarks()`,
//! mm/page_alloc.c (v6.x). Simplification: one lowmem zone, so the zone's share
//! of `pages_min` is all of it; no watermark boost.

use mm::{Watermark, Zone};

/// KERNEL: `calculate_min_free_kbytes()`: `int_sqrt(16 * lowmem_kbytes)` clamped to [128, 262144].
pub fn default_min_free_kbytes(lowmem_kbytes: u64) -> u64 {
    int_sqrt(16 * lowmem_kbytes).clamp(128, 262_144)
}

/// Integer square root, rounded down (kernel `int_sqrt`).
pub fn int_sqrt(x: u64) -> u64 {
    if x < 2 {
        return x;
    }
    // Newton's method on integers; converges from above in O(log x) steps.
    let mut r = 1u64 << (64 - x.leading_zeros()).div_ceil(2);
    loop {
        let next = (r + x / r) / 2;
        if next >= r {
            return r;
        }
        r = next;
    }
}

/// How far the low and high watermarks sit above min.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WatermarkGap {
    /// Before v4.6: low = min + min/4, high = min + min/2, whatever the zone's size.
    MinFraction,
    /// v4.6 ("scale kswapd watermarks in proportion to memory"): each step is
    /// `max(min/4, managed * vm.watermark_scale_factor / 10000)`.
    Scaled {
        /// `vm.watermark_scale_factor`, in 1/10000 of the zone's pages.
        watermark_scale_factor: u64,
    },
}

/// Sets `zone.watermark` as `__setup_per_zone_wmarks()` does.
///
/// `total_lowmem_managed` is the sum of managed pages over lowmem zones.
pub fn setup_zone_watermarks(zone: &mut Zone, min_free_kbytes: u64, gap: WatermarkGap, total_lowmem_managed: u64) {
    let pages_min = min_free_kbytes >> (mm::PAGE_SHIFT - 10);
    let share = pages_min * zone.managed / total_lowmem_managed.max(1);
    let (low, high, promo) = match gap {
        // KERNEL: v3.x/v4.5 add share >> 2 and share >> 1; no promotion watermark then (set to high).
        WatermarkGap::MinFraction => (share >> 2, share >> 1, share >> 1),
        WatermarkGap::Scaled { watermark_scale_factor } => {
            let d = (share / 4).max(zone.managed * watermark_scale_factor / 10_000);
            (d, 2 * d, 3 * d)
        }
    };
    zone.watermark[Watermark::Min as usize] = share;
    zone.watermark[Watermark::Low as usize] = share + low;
    zone.watermark[Watermark::High as usize] = share + high;
    zone.watermark[Watermark::Promo as usize] = share + promo;
}

#[cfg(test)]
mod tests {
    use super::*;
    use mm::ZoneId;

    #[test]
    fn int_sqrt_floor() {
        for x in [0u64, 1, 2, 3, 4, 15, 16, 17, 99, 100, 1 << 40, u64::MAX] {
            let r = int_sqrt(x);
            assert!(r as u128 * r as u128 <= x as u128, "{x}");
            assert!((r as u128 + 1) * (r as u128 + 1) > x as u128, "{x}");
        }
    }

    /// Hand-checked: 1 GiB of memory, defaults.
    /// lowmem_kbytes = 1048576; int_sqrt(16 * 1048576) = 4096 KiB -> 1024 pages min.
    /// d = max(1024/4 = 256, 262144 * 10 / 10000 = 262) = 262.
    #[test]
    fn one_gib_defaults() {
        let managed = 262_144u64;
        let mfk = default_min_free_kbytes(managed * 4);
        assert_eq!(mfk, 4096);
        let mut z = Zone::new(ZoneId::Normal, managed as u32);
        setup_zone_watermarks(&mut z, mfk, WatermarkGap::Scaled { watermark_scale_factor: 10 }, managed);
        assert_eq!(z.watermark, [1024, 1024 + 262, 1024 + 524, 1024 + 786]);
    }

    /// Small machine: 64 MiB. int_sqrt(16 * 65536) = 1024 KiB -> 256 pages;
    /// d = max(64, 16384 * 10 / 10000 = 16) = 64. Scale factor 1000 (10%) gives d = 1638.
    #[test]
    fn small_machine_and_scale_factor() {
        let managed = 16_384u64;
        let mfk = default_min_free_kbytes(managed * 4);
        assert_eq!(mfk, 1024);
        let mut z = Zone::new(ZoneId::Normal, managed as u32);
        setup_zone_watermarks(&mut z, mfk, WatermarkGap::Scaled { watermark_scale_factor: 10 }, managed);
        assert_eq!(z.watermark, [256, 320, 384, 448]);
        setup_zone_watermarks(&mut z, mfk, WatermarkGap::Scaled { watermark_scale_factor: 1000 }, managed);
        assert_eq!(z.watermark, [256, 256 + 1638, 256 + 2 * 1638, 256 + 3 * 1638]);
    }

    #[test]
    fn min_free_kbytes_clamps() {
        assert_eq!(default_min_free_kbytes(16), 128);
        assert_eq!(default_min_free_kbytes(1 << 40), 262_144);
    }

    /// Hand-checked: 8 GiB, defaults. min_free_kbytes = int_sqrt(16 * 8388608) = 11585 KiB
    /// -> 2896 pages. Before v4.6: low 2896 + 724, high 2896 + 1448. v4.6: the step is
    /// max(724, 2097152 * 10 / 10000 = 2097): low 4993, high 7090.
    #[test]
    fn eight_gib_before_and_after_v4_6() {
        let managed = 2_097_152u64;
        let mfk = default_min_free_kbytes(managed * 4);
        assert_eq!(mfk, 11585);
        let mut z = Zone::new(ZoneId::Normal, managed as u32);
        setup_zone_watermarks(&mut z, mfk, WatermarkGap::MinFraction, managed);
        assert_eq!(z.watermark[..3], [2896, 3620, 4344]);
        setup_zone_watermarks(&mut z, mfk, WatermarkGap::Scaled { watermark_scale_factor: 10 }, managed);
        assert_eq!(z.watermark[..3], [2896, 4993, 7090]);
    }
}
