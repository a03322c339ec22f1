//! Spatially hashed page sampling, the method of SHARDS and of miniature
//! simulations (Waldspurger et al., "Efficient MRC Construction with SHARDS",
//! FAST '15; "Cache Modeling and Optimization using Miniature Simulations",
//! USENIX ATC '17): a page is in the sample when a hash of its id falls below
//! a threshold, so every reference to a sampled page is kept and every
//! reference to another page is dropped. A cache of `rate` times the size fed
//! the sampled references then sees, in expectation, `rate` times the misses
//! of the full cache on the full trace.

use crate::format::{Event, Record};
use crate::refs::PageIds;
use crate::{TraceError, TraceReader, TraceWriter};
use std::io::{BufRead, Write};

/// Which global page ids are in a sample of a given rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageSample {
    threshold: u32,
}

/// Bits of the hash compared with the threshold.
const BITS: u32 = 24;

impl PageSample {
    /// A sample of about `rate` of the pages (0 < rate <= 1), rounded to a
    /// multiple of 2^-24; `None` if the rate is out of range or rounds to 0.
    pub fn new(rate: f64) -> Option<PageSample> {
        if !(rate > 0.0 && rate <= 1.0) {
            return None;
        }
        let threshold = (rate * (1u64 << BITS) as f64).round() as u32;
        (threshold > 0).then_some(PageSample { threshold })
    }

    /// The rate actually sampled (the threshold over 2^24).
    pub fn rate(self) -> f64 {
        self.threshold as f64 / (1u64 << BITS) as f64
    }

    /// The page with this global id is in the sample.
    #[inline]
    pub fn keeps(self, page: u32) -> bool {
        // splitmix64's finalizer: every input bit affects the top bits.
        let mut z = (page as u64).wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        ((z >> (64 - BITS)) as u32) < self.threshold
    }
}

/// Copies the references of `reader` to the sampled pages into `out` (same
/// header): accesses kept whole, file reads and writes split into the
/// one-page records of their sampled pages, mmap, munmap and exit dropped
/// (they reference no page). Returns the references copied and the
/// references of the whole trace.
pub fn filter<R: BufRead, W: Write>(
    reader: &mut TraceReader<R>,
    out: &mut TraceWriter<W>,
    sample: PageSample,
) -> Result<(u64, u64), TraceError> {
    let ids = PageIds::new(reader.header());
    let (mut kept, mut all) = (0, 0);
    while let Some(r) = reader.next_record()? {
        let Some((first, n, _)) = ids.of(&r.event) else { continue };
        all += n as u64;
        match r.event {
            Event::Access { .. } if sample.keeps(first) => {
                out.write(&r)?;
                kept += 1;
            }
            Event::FileRead { file, page, .. } | Event::FileWrite { file, page, .. } => {
                for i in (0..n).filter(|&i| sample.keeps(first + i)) {
                    let event = match r.event {
                        Event::FileRead { .. } => Event::FileRead { file, page: page + i, pages: 1 },
                        _ => Event::FileWrite { file, page: page + i, pages: 1 },
                    };
                    out.write(&Record { event, time_ns: r.time_ns })?;
                    kept += 1;
                }
            }
            _ => {}
        }
    }
    Ok((kept, all))
}

#[cfg(test)]
mod tests {
    use super::PageSample;

    #[test]
    fn keeps_about_the_rate_and_all_at_one() {
        let s = PageSample::new(0.01).unwrap();
        let kept = (0..1_000_000u32).filter(|&p| s.keeps(p)).count();
        assert!((9_500..10_500).contains(&kept), "{kept}");
        let all = PageSample::new(1.0).unwrap();
        assert!((0..10_000u32).all(|p| all.keeps(p)));
        assert_eq!((PageSample::new(0.0), PageSample::new(1.5), PageSample::new(f64::NAN)), (None, None, None));
        assert!((PageSample::new(0.25).unwrap().rate() - 0.25).abs() < 1e-12);
    }

    #[test]
    fn filter_keeps_exactly_the_sampled_pages_references() {
        use crate::format::{Decl, Event, Header, Record};
        use crate::{TraceReader, TraceWriter};
        let h = Header::new(vec![Decl { name: "a".into(), pages: 1000 }], vec![Decl { name: "f".into(), pages: 1000 }]);
        let recs = [
            Event::Access { space: 0, page: 5, write: true },
            Event::FileRead { file: 0, page: 0, pages: 1000 },
            Event::Mmap { file: 0, page: 0, pages: 10 },
            Event::FileWrite { file: 0, page: 100, pages: 300 },
        ];
        let mut w = TraceWriter::new(Vec::new(), h.clone(), 0, "in").unwrap();
        for r in 0..100 {
            for e in recs {
                let e = match e {
                    Event::Access { space, write, .. } => Event::Access { space, page: r * 7 % 1000, write },
                    e => e,
                };
                w.write(&Record::at0(e)).unwrap();
            }
        }
        let bytes = w.finish().unwrap();
        let s = PageSample::new(0.1).unwrap();
        let mut out = TraceWriter::new(Vec::new(), h.clone(), 0, "out").unwrap();
        let (kept, all) = super::filter(&mut TraceReader::open(&bytes[..], "in").unwrap(), &mut out, s).unwrap();
        let small = out.finish().unwrap();
        let ids = crate::refs::PageIds::new(&h);
        let (mut every, mut sampled) = (Vec::new(), Vec::new());
        for (b, v) in [(&bytes, &mut every), (&small, &mut sampled)] {
            let mut r = TraceReader::open(&b[..], "t").unwrap();
            while let Some(rec) = r.next_record().unwrap() {
                if let Some((first, n, write)) = ids.of(&rec.event) {
                    v.extend((first..first + n).map(|p| (p, write)));
                }
            }
        }
        let expect: Vec<(u32, bool)> = every.into_iter().filter(|&(p, _)| s.keeps(p)).collect();
        assert_eq!(sampled, expect);
        assert_eq!((kept, all), (expect.len() as u64, 130_100));
        assert!((11_000..15_000).contains(&kept), "{kept} of 130,100");
    }
}
