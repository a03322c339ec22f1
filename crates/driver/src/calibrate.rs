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
//!
//! With a file (a block device's pages, `--file`), then, on its first
//! [`FILE_PAGES`] pages through the page cache:
//! 5. a `pwrite` of every page: a write that dirties a new page-cache page
//!    (allocation, copy, dirty accounting);
//! 6. a `pwrite` of every page again: a write to a dirty cached page;
//! 7. a `pread` of every page: a read of a cached page.

use crate::exec::Region;
use crate::pattern::{Op, Pattern};
use crate::trace::Digest;
use std::io;
use std::time::Instant;

/// Pages of the calibration region (16 MiB).
pub const PAGES: u32 = 4096;
/// Resident zipf accesses timed.
pub const OPS: u64 = 200_000;
/// File pages written and read (4 MiB: few enough to stay cached, far
/// below the dirty thresholds of a 256M guest).
pub const FILE_PAGES: u32 = 1024;

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
    /// With a file: a `pwrite` that dirties a new page-cache page, one to a
    /// dirty cached page, and a `pread` of a cached page.
    pub file: Option<FileCosts>,
}

/// A file's costs per page, in nanoseconds (steps 5-7).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FileCosts {
    /// A `pwrite` of a page not in the page cache.
    pub write_new_ns: f64,
    /// A `pwrite` of a dirty cached page.
    pub write_ns: f64,
    /// A `pread` of a cached page.
    pub read_ns: f64,
}

impl Calibration {
    /// The report line (`calibrate KEY=VALUE ...`; `-` where nothing was measured).
    pub fn line(&self) -> String {
        let opt = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.1}"));
        let file = self.file.map_or(String::new(), |f| {
            format!(
                " file_write_new_ns={:.1} file_write_ns={:.1} file_read_ns={:.1}",
                f.write_new_ns, f.write_ns, f.read_ns
            )
        });
        format!(
            "calibrate access_ns={:.1} first_touch_ns={:.1} pageout_ns={} swapin_ns={} pswpout={} pswpin={}{file}",
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

/// Times steps 5-7 on the first [`FILE_PAGES`] pages of the file at `path`.
fn file_costs(path: &std::path::Path) -> io::Result<FileCosts> {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    let mut buf = vec![0u8; PAGE as usize];
    let mut sink = 0u8;
    let mut pass = |write: bool| -> io::Result<f64> {
        let t = Instant::now();
        for page in 0..FILE_PAGES {
            let off = page as u64 * PAGE;
            if write {
                buf[0] = page as u8 | 1;
                f.write_all_at(&buf, off)?;
            } else {
                f.read_exact_at(&mut buf, off)?;
                sink ^= buf[0];
            }
        }
        Ok(t.elapsed().as_nanos() as f64 / FILE_PAGES as f64)
    };
    let (write_new_ns, write_ns, read_ns) = (pass(true)?, pass(true)?, pass(false)?);
    std::hint::black_box(sink);
    Ok(FileCosts { write_new_ns, write_ns, read_ns })
}

/// Bytes of a page.
const PAGE: u64 = 4096;

/// Runs the calibration on `pages` pages with `ops` resident accesses, and
/// on the first pages of the file at `file` when there is one.
pub fn calibrate(pages: u32, ops: u64, file: Option<&std::path::Path>) -> io::Result<Calibration> {
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
    drop(region);
    Ok(Calibration {
        access_ns,
        first_touch_ns,
        pageout_ns: per(pageout, swapped.0),
        swapin_ns: per(swapin, swapped.1),
        swapped,
        file: file.map(file_costs).transpose()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The timings are positive and the line carries every figure; on a host
    /// without swap nothing goes out and the swap figures are `-`.
    #[test]
    fn times_every_step_and_reports_them() {
        let dir = std::env::temp_dir().join(format!("calibrate-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("file");
        std::fs::write(&path, vec![0u8; FILE_PAGES as usize * 4096]).unwrap();
        let c = calibrate(64, 1000, Some(&path)).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(c.access_ns > 0.0 && c.first_touch_ns > 0.0, "{c:?}");
        assert_eq!(c.pageout_ns.is_some(), c.swapped.0 > 0);
        let f = c.file.expect("the file's costs");
        assert!(f.write_new_ns > 0.0 && f.write_ns > 0.0 && f.read_ns > 0.0, "{f:?}");
        let mut c = Calibration {
            access_ns: 2.3,
            first_touch_ns: 900.0,
            pageout_ns: None,
            swapin_ns: Some(1.5),
            swapped: (0, 3),
            file: None,
        };
        assert_eq!(
            c.line(),
            "calibrate access_ns=2.3 first_touch_ns=900.0 pageout_ns=- swapin_ns=1.5 pswpout=0 pswpin=3"
        );
        c.file = Some(FileCosts { write_new_ns: 7000.0, write_ns: 3000.0, read_ns: 2500.0 });
        assert!(c.line().ends_with(" pswpin=3 file_write_new_ns=7000.0 file_write_ns=3000.0 file_read_ns=2500.0"));
    }
}
