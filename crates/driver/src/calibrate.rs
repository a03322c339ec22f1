//! Calibration: the CPU time of the driver's own work on the machine it runs
//! on, timed with the monotonic clock. In the validation guest (qemu
//! `-icount`: one nanosecond per instruction) the figures are deterministic
//! and are the guest's costs, which `validate` gives to the simulator as
//! measured settings (`cpu.access_ns`, `cpu.fault_ns`, zram's CPU per page).
//!
//! On a region of its own, the driver times, in order:
//! 1. the first stores of an `anon-zipf` pattern (one to every page): a first
//!    touch each (fault, zeroing, accounting) with the driver's own per-access work;
//! 2. the pattern's zipf accesses, all resident: a resident access each;
//! 3. `madvise(MADV_PAGEOUT)` of the region: reclaim of each page, its
//!    compression into zram included, counted by `pswpout`;
//! 4. a store to every page again: a swap-in each (`pswpin`).

use crate::exec::Region;
use crate::pattern::{Op, Pattern};
use crate::trace::Digest;
use std::io;
use std::time::Instant;

/// Pages of the calibration region (16 MiB).
pub const PAGES: u32 = 4096;
/// Resident zipf accesses timed.
pub const OPS: u64 = 200_000;

/// What the calibration measured, in nanoseconds per event.
#[derive(Clone, Debug, PartialEq)]
pub struct Calibration {
    /// A resident access of the pattern loop.
    pub access_ns: f64,
    /// A first touch of an anonymous page (the pattern loop's store included).
    pub first_touch_ns: f64,
    /// `MADV_PAGEOUT` per page swapped out (`None`: nothing went out, no swap).
    pub pageout_ns: Option<f64>,
    /// A store to a swapped-out page, per page swapped in (`None`: none was).
    pub swapin_ns: Option<f64>,
    /// Pages swapped out and in (`pswpout`, `pswpin` deltas).
    pub swapped: (u64, u64),
}

impl Calibration {
    /// The report line (`calibrate KEY=VALUE ...`; `-` where nothing was measured).
    pub fn line(&self) -> String {
        let opt = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.1}"));
        format!(
            "calibrate access_ns={:.1} first_touch_ns={:.1} pageout_ns={} swapin_ns={} pswpout={} pswpin={}",
            self.access_ns,
            self.first_touch_ns,
            opt(self.pageout_ns),
            opt(self.swapin_ns),
            self.swapped.0,
            self.swapped.1
        )
    }
}

/// `pswpout` and `pswpin` from `/proc/vmstat` (0 where the file or line is missing).
fn swap_counts() -> (u64, u64) {
    let text = std::fs::read_to_string("/proc/vmstat").unwrap_or_default();
    let get =
        |key: &str| text.lines().find_map(|l| l.strip_prefix(key)?.strip_prefix(' ')?.trim().parse().ok()).unwrap_or(0);
    (get("pswpout"), get("pswpin"))
}

/// Runs the calibration on `pages` pages with `ops` resident accesses.
pub fn calibrate(pages: u32, ops: u64) -> io::Result<Calibration> {
    let p = Pattern::parse(&format!("anon-zipf:anon={}K,ops={ops},alpha=0.8,seed=1", pages as u64 * 4))
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
    let region = Region::new(pages)?;
    let (mut digest, mut sink, mut noise) = (Digest::default(), 0u8, 1u64);
    let mut marks = [Instant::now(); 2];
    for (i, op) in p.ops().enumerate() {
        if i as u64 == pages as u64 {
            marks[1] = Instant::now();
        }
        digest.add(op);
        if let Op::Anon { page, write } = op {
            sink ^= region.touch(page, write, 0, &mut noise);
        }
    }
    let end = Instant::now();
    std::hint::black_box((sink, digest));
    let first_touch_ns = (marks[1] - marks[0]).as_nanos() as f64 / pages as f64;
    let access_ns = (end - marks[1]).as_nanos() as f64 / ops.max(1) as f64;
    let (out0, in0) = swap_counts();
    let t = Instant::now();
    region.pageout()?;
    let pageout = t.elapsed().as_nanos() as f64;
    let (out1, _) = swap_counts();
    let t = Instant::now();
    for page in 0..pages {
        sink ^= region.touch(page, true, 0, &mut noise);
    }
    let swapin = t.elapsed().as_nanos() as f64;
    std::hint::black_box(sink);
    let (_, in1) = swap_counts();
    let swapped = (out1 - out0, in1 - in0);
    let per = |t: f64, n: u64| (n > 0).then(|| t / n as f64);
    Ok(Calibration {
        access_ns,
        first_touch_ns,
        pageout_ns: per(pageout, swapped.0),
        swapin_ns: per(swapin, swapped.1),
        swapped,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The timings are positive and the line carries every figure; on a host
    /// without swap nothing goes out and the swap figures are `-`.
    #[test]
    fn times_every_step_and_reports_them() {
        let c = calibrate(64, 1000).unwrap();
        assert!(c.access_ns > 0.0 && c.first_touch_ns > 0.0, "{c:?}");
        assert_eq!(c.pageout_ns.is_some(), c.swapped.0 > 0);
        let line = Calibration {
            access_ns: 2.3,
            first_touch_ns: 900.0,
            pageout_ns: None,
            swapin_ns: Some(1.5),
            swapped: (0, 3),
        }
        .line();
        assert_eq!(line, "calibrate access_ns=2.3 first_touch_ns=900.0 pageout_ns=- swapin_ns=1.5 pswpout=0 pswpin=3");
    }
}
