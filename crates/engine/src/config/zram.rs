//! The zram swap device's compressed store and its knobs (`zram.*`).

use knobs::{format_fixed, format_size, parse_fixed, parse_size, History, Kind, Knob};

/// The zram swap device's compressed store: how pages compress, and `mem_limit`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ZramKnobs {
    /// `zram.comp_ratio` x 100: a stored page's size over its compressed size.
    pub comp_ratio_x100: u64,
    /// `zram.same_filled_pct` in parts per million: pages that are one repeated word.
    pub same_ppm: u64,
    /// `/sys/block/zram0/mem_limit`, bytes (0 = none).
    pub mem_limit_bytes: u64,
}

/// SOURCE: lzo-rle, the kernel's default zram compressor since v5.1, compresses
/// a desktop memory image 2.68:1 (lz4 2.58, zstd 3.96) in the Linux Reviews zram
/// benchmark, and swapped pages 2.74:1 (lz4 2.63) in a fio-on-zram test by
/// u/VenditatioDelendaEst (both tabulated at https://news.cgast.org/news/31091).
pub const DEFAULT_ZRAM_RATIO_X100: u64 = 270;

impl Default for ZramKnobs {
    fn default() -> Self {
        ZramKnobs { comp_ratio_x100: DEFAULT_ZRAM_RATIO_X100, same_ppm: 0, mem_limit_bytes: 0 }
    }
}

impl ZramKnobs {
    /// The pool's parameters: the compressed length of a page (rounded to a
    /// byte) and `mem_limit` in pages (`PAGE_ALIGN(limit) >> PAGE_SHIFT`).
    pub fn pool_config(&self) -> mm::ZramConfig {
        let comp_len = (mm::PAGE_SIZE * 100 + self.comp_ratio_x100 / 2) / self.comp_ratio_x100;
        mm::ZramConfig {
            comp_len: comp_len.clamp(1, mm::PAGE_SIZE) as u32,
            same_ppm: self.same_ppm as u32,
            limit_pages: self.mem_limit_bytes.div_ceil(mm::PAGE_SIZE),
        }
    }
}

/// The zram knobs.
pub const KNOBS: &[Knob<ZramKnobs>] = &[
    Knob {
        key: "comp_ratio",
        help: "uncompressed over compressed size of a stored page (orig_data_size / compr_data_size), 1..=4096 (default 2.7: lzo-rle; lz4 ~2.6, zstd ~3.4-4)",
        kind: Kind::Decimal,
        history: History::Model,
        get: |z| format_fixed(z.comp_ratio_x100, 2),
        set: |z, v| {
            z.comp_ratio_x100 = parse_fixed(v, 2, 100, 409_600)?;
            Ok(())
        },
    },
    Knob {
        key: "same_filled_pct",
        help: "percent of stored pages that are one repeated word (zero pages): kept in the slot table, no pool memory (default 0)",
        kind: Kind::Decimal,
        history: History::Model,
        get: |z| format_fixed(z.same_ppm, 4),
        set: |z, v| {
            z.same_ppm = parse_fixed(v, 4, 0, 1_000_000)?;
            Ok(())
        },
    },
    Knob {
        key: "mem_limit",
        help: "/sys/block/zram0/mem_limit: most RAM the compressed pool may take (size), or `none`; writes beyond it fail and the page stays",
        kind: Kind::Text,
        history: History::Tunable { since: knobs::Version::new(3, 18) },
        get: |z| if z.mem_limit_bytes == 0 { "none".into() } else { format_size(z.mem_limit_bytes) },
        set: |z, v| {
            z.mem_limit_bytes = if v == "none" { 0 } else { parse_size(v)? };
            Ok(())
        },
    },
];

#[cfg(test)]
mod tests {
    use crate::Config;

    #[test]
    fn zram_knobs_give_the_pool_parameters() {
        let mut c = Config::default();
        // 4096 / 2.7 = 1517.04 bytes.
        assert_eq!(c.zram.pool_config(), mm::ZramConfig { comp_len: 1517, same_ppm: 0, limit_pages: 0 });
        c.set("zram.comp_ratio", "3").unwrap();
        c.set("zram.same_filled_pct", "12.5").unwrap();
        c.set("zram.mem_limit", "4097").unwrap();
        assert_eq!(c.zram.pool_config(), mm::ZramConfig { comp_len: 1365, same_ppm: 125_000, limit_pages: 2 });
        c.set("zram.comp_ratio", "1").unwrap();
        assert_eq!(c.zram.pool_config().comp_len, 4096);
        assert!(c.set("zram.comp_ratio", "0.9").is_err());
    }
}
