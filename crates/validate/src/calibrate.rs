//! The guest's CPU costs, measured: one boot per kernel runs `driver
//! calibrate` (crates/driver/src/calibrate.rs) under the same instruction-counted
//! clock as the scenarios, and every scenario of that kernel gives the
//! simulator the figures as settings, as it gives it zram's measured ratio.
//! Nothing here is chosen to make a counter match: the figures are the
//! guest's, and the costs they cannot tell apart keep the simulator's defaults.
//!
//! | measured in the guest | setting |
//! |---|---|
//! | a resident access of the driver's zipf loop | `cpu.access_ns` |
//! | a first touch (fault, zeroing, the loop's store) | `cpu.fault_ns` (the simulator charges a first touch that alone) |
//! | a swap-in fault from zram, less a first touch | `swap.read_cpu_ns` (zram rows) |
//! | `MADV_PAGEOUT` per page, less the simulator's scan, rmap, free and pageout costs | `swap.write_cpu_ns` (zram rows) |
//! | a `pwrite` of a page not cached (null_blk's pages) | `cpu.file_write_new_ns` |
//! | a `pwrite` of a dirty cached page | `cpu.file_write_ns` |
//! | a `pread` of a cached page | `cpu.file_read_ns` |
//!
//! Simplifications: the reclaim of a page is measured as a whole (the split
//! between isolating, unmapping, freeing and compressing keeps the defaults
//! for the first three); the resident access is the zipf loop's, whose
//! sampling costs more than a sequential pattern's next page.

use super::debian::{Family, Kernel};
use super::initramfs::{self, GuestPlan, Payload};
use super::qemu::{self, ScratchDir};
use super::scenarios::Swap;
use super::{console, cpio, Stop, ValidateArgs};
use anyhow::Result;
use engine::config::CpuCosts;
use std::path::Path;

/// Guest RAM of the calibration boot (MiB): room for the 16M region.
const RAM_MB: u64 = 256;
/// The null_blk device whose pages the calibration writes and reads (MiB):
/// room for the driver's 4 MiB.
const FILE_MB: u64 = 16;

/// The guest's costs, nanoseconds per event (the driver's `calibrate` line).
#[derive(Clone, Debug, PartialEq)]
pub struct GuestCosts {
    /// A resident access.
    pub access_ns: f64,
    /// A first touch of an anonymous page.
    pub first_touch_ns: f64,
    /// `MADV_PAGEOUT` per page swapped out to zram.
    pub pageout_ns: f64,
    /// A store to a page on zram, per page swapped in.
    pub swapin_ns: f64,
    /// A `pwrite` of a page not cached, of a dirty cached page, and a `pread`
    /// of a cached page (`None` in calibrations from before the guest timed them).
    pub file: Option<[f64; 3]>,
}

impl GuestCosts {
    /// From the driver's output: its `calibrate KEY=VALUE ...` line, every figure present.
    pub fn parse(driver: &str) -> Result<GuestCosts, String> {
        let line = driver
            .lines()
            .find_map(|l| l.strip_prefix("calibrate "))
            .ok_or_else(|| format!("the calibration's driver output has no `calibrate` line: {}", driver.trim()))?;
        let get = |key: &str| -> Result<f64, String> {
            let v = line
                .split_whitespace()
                .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
                .ok_or_else(|| format!("calibrate line `{line}`: no `{key}=`"))?;
            v.parse().ok().filter(|x: &f64| x.is_finite() && *x > 0.0).ok_or_else(|| {
                format!("calibrate line `{line}`: `{key}={v}` is not a positive number (did anything swap?)")
            })
        };
        let file = match line.contains(" file_") {
            true => Some([get("file_write_new_ns")?, get("file_write_ns")?, get("file_read_ns")?]),
            false => None,
        };
        Ok(GuestCosts {
            access_ns: get("access_ns")?,
            first_touch_ns: get("first_touch_ns")?,
            pageout_ns: get("pageout_ns")?,
            swapin_ns: get("swapin_ns")?,
            file,
        })
    }

    /// The simulator's settings from these costs, given its `cpu` costs (the
    /// profile's) for the parts of a reclaimed page the guest did not time
    /// apart; zram's per-page CPU only where the swap is zram.
    pub fn settings(&self, cpu: &CpuCosts, zram: bool) -> Vec<(String, String)> {
        let ns = |v: f64| (v.round() as u64).max(1).to_string();
        let mut v =
            vec![("cpu.access_ns".to_string(), ns(self.access_ns)), ("cpu.fault_ns".into(), ns(self.first_touch_ns))];
        if zram {
            let reclaim = (cpu.reclaim_scan_ns + cpu.rmap_pte_ns + cpu.reclaim_free_ns + cpu.pageout_ns) as f64;
            v.push(("swap.read_cpu_ns".into(), ns(self.swapin_ns - self.first_touch_ns)));
            v.push(("swap.write_cpu_ns".into(), ns(self.pageout_ns - reclaim)));
        }
        if let Some([write_new, write, read]) = self.file {
            v.push(("cpu.file_write_new_ns".into(), ns(write_new)));
            v.push(("cpu.file_write_ns".into(), ns(write)));
            v.push(("cpu.file_read_ns".into(), ns(read)));
        }
        v
    }
}

/// The calibration boot's plan: global, zram swap, lru_gen off where the kernel has it.
fn plan(family: &Family, kernel: &Kernel) -> GuestPlan {
    GuestPlan {
        pattern: String::new(),
        limit_bytes: 0,
        global_ram_mb: Some(RAM_MB),
        swappiness: 60,
        swap_bytes: super::guest::SWAP_BYTES,
        swap: Swap::Zram,
        data_mb: Some(FILE_MB),
        zswap_pool_pct: None,
        tenants: Vec::new(),
        lru_gen: family.mglru.is_some().then_some(false),
        runs: 2,
        modules: kernel.modules.iter().chain(&kernel.nullb_modules).map(|m| super::guest::file_name(m)).collect(),
        phase_every: 0,
        calibrate: true,
    }
}

/// The guest's costs on `kernel`: from its cached calibration report, or
/// from a boot (not with `--cached`: then `None`, and the simulator keeps its
/// defaults). The second run is used (the first warms up, as everywhere).
pub fn guest_costs(
    args: &ValidateArgs,
    family: &Family,
    kernel: &Kernel,
    payload: &Payload,
    qemu_exe: &Path,
) -> Result<Option<GuestCosts>> {
    let plan = plan(family, kernel);
    let key = super::guest::run_key(&kernel.package, &plan, driver::trace::Digest::default());
    let cached = kernel.dir.join("runs").join(format!("calibrate-{key}.txt"));
    let text = match std::fs::read_to_string(&cached) {
        Ok(text) if !args.fresh => text,
        _ if args.cached => {
            eprintln!(
                "reclaimsim validate: no cached calibration of {}: the simulator keeps its default CPU costs",
                kernel.package
            );
            return Ok(None);
        }
        _ => {
            let archive = cpio::archive(&initramfs::entries(&plan, payload).map_err(anyhow::Error::msg)?);
            let scratch = ScratchDir::new("calibrate").map_err(anyhow::Error::msg)?;
            let text = qemu::boot(qemu_exe, &kernel.image, &archive, RAM_MB, &scratch, super::guest::BOOT_TIMEOUT)
                .map_err(|e| anyhow::anyhow!("calibration boot: {e}"))?;
            std::fs::create_dir_all(kernel.dir.join("runs"))?;
            super::write_atomic(&cached, text.as_bytes()).map_err(anyhow::Error::msg)?;
            text
        }
    };
    let report = console::parse(&text).map_err(anyhow::Error::msg)?;
    let run = report.runs.get(1).filter(|r| report.done && r.status == 0).ok_or_else(|| {
        Stop::Refused(format!("{}: the calibration boot did not finish its two runs", cached.display()))
    })?;
    let costs = GuestCosts::parse(&run.driver).map_err(|e| anyhow::anyhow!("{}: {e}", cached.display()))?;
    eprintln!("reclaimsim validate: the guest's costs (calibration, {}): {costs:?}", cached.display());
    Ok(Some(costs))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// By hand, with the default costs (scan 100 + rmap 150 + free 250 +
    /// pageout 2000 = 2500 ns a reclaimed page): access 212.4 -> 212; first
    /// touch 3050.6 -> 3051; zram read 9100 - 3050.6 = 6049.4 -> 6049; zram
    /// write 31000 - 2500 = 28500. Without zram only the first two.
    #[test]
    fn settings_from_the_guest_line() {
        let out = "calibrate access_ns=212.4 first_touch_ns=3050.6 pageout_ns=31000.0 swapin_ns=9100.0 pswpout=4096 pswpin=4096\n";
        let c = GuestCosts::parse(out).unwrap();
        let s = c.settings(&CpuCosts::default(), true);
        let want = [
            ("cpu.access_ns", "212"),
            ("cpu.fault_ns", "3051"),
            ("swap.read_cpu_ns", "6049"),
            ("swap.write_cpu_ns", "28500"),
        ];
        assert_eq!(s, want.map(|(k, v)| (k.to_string(), v.to_string())));
        assert_eq!(c.settings(&CpuCosts::default(), false).len(), 2);
        // A calibration with the file's costs gives them too.
        let c = GuestCosts::parse(&format!(
            "{} file_write_new_ns=9800.4 file_write_ns=4100.6 file_read_ns=3900.0",
            out.trim()
        ))
        .unwrap();
        assert_eq!(c.file, Some([9800.4, 4100.6, 3900.0]));
        let s = c.settings(&CpuCosts::default(), false);
        let want = [("cpu.file_write_new_ns", "9800"), ("cpu.file_write_ns", "4101"), ("cpu.file_read_ns", "3900")];
        assert_eq!(&s[2..], &want.map(|(k, v)| (k.to_string(), v.to_string())));
    }

    /// A run that swapped nothing, or no line at all, is an error naming what is missing.
    #[test]
    fn a_run_without_swap_is_refused() {
        let e =
            GuestCosts::parse("calibrate access_ns=1.0 first_touch_ns=2.0 pageout_ns=- swapin_ns=- pswpout=0 pswpin=0")
                .unwrap_err();
        assert!(e.contains("`pageout_ns=-` is not a positive number"), "{e}");
        assert!(GuestCosts::parse("ops 3 digest 1").unwrap_err().contains("no `calibrate` line"));
    }
}
