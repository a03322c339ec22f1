//! One deterministic boot under qemu (software emulation): the kernel with our
//! initramfs, the kernel log on the first serial port, the guest's report on
//! the second. The scratch directory is removed and qemu killed whatever
//! happens (error, timeout, SIGINT/SIGTERM/SIGHUP, or our own death).

use super::host;
use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The emulator.
pub const QEMU: &str = "qemu-system-x86_64";

/// `QEMU` on `PATH`.
pub fn find_qemu() -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| std::env::split_paths(&paths).map(|d| d.join(QEMU)).find(|p| p.is_file()))
}

/// A scratch directory removed on drop.
pub struct ScratchDir(pub PathBuf);

impl ScratchDir {
    /// Creates `$TMPDIR/reclaimsim-guest.PID.NAME`.
    pub fn new(name: &str) -> Result<ScratchDir, String> {
        let p = std::env::temp_dir().join(format!("reclaimsim-guest.{}.{name}", std::process::id()));
        fs::create_dir_all(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        Ok(ScratchDir(p))
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// Guest RAM of a memory-group scenario: room for the initramfs (the driver
/// binary is ~26 MB) and the group's limit, so that only the group's limit
/// causes reclaim. A global scenario sets its own, small enough for kswapd and
/// direct reclaim to run.
pub const GUEST_MB: u64 = 512;
/// KERNEL: the command line. `nokaslr norandmaps` and the qemu flags below make
/// runs bit-identical; the console is quiet so the log stays small.
const APPEND: &str =
    "console=ttyS0 panic=-1 nokaslr norandmaps quiet loglevel=1 transparent_hugepage=never rdinit=/init";

/// The guest's CPUs: one, so that the instruction-counted clock is deterministic.
pub const CPUS: u64 = 1;

/// The qemu arguments of a boot with `memory_mb` of RAM (TCG, one CPU,
/// instruction-counted clock, fixed RTC, no devices but two serial ports).
pub fn qemu_args(image: &Path, initrd: &Path, console: &Path, report: &Path, memory_mb: u64) -> Vec<String> {
    let s = |p: &Path| p.to_string_lossy().into_owned();
    [
        "-accel",
        "tcg",
        "-smp",
        &CPUS.to_string(),
        "-m",
        &format!("{memory_mb}M"),
        "-icount",
        "shift=0,sleep=off",
        "-rtc",
        "base=2024-01-01T00:00:00,clock=vm",
        "-nodefaults",
        "-display",
        "none",
        "-no-reboot",
        "-kernel",
        &s(image),
        "-initrd",
        &s(initrd),
        "-append",
        APPEND,
        "-serial",
        &format!("file:{}", s(console)),
        "-serial",
        &format!("file:{}", s(report)),
    ]
    .iter()
    .map(|a| a.to_string())
    .collect()
}

/// Boots `image` with the initramfs bytes `cpio` and `memory_mb` of RAM;
/// returns the report port's text. `timeout` bounds the host time.
pub fn boot(
    qemu: &Path,
    image: &Path,
    cpio: &[u8],
    memory_mb: u64,
    scratch: &ScratchDir,
    timeout: Duration,
) -> Result<String, String> {
    let (initrd, console, report) =
        (scratch.0.join("initramfs.cpio"), scratch.0.join("console.log"), scratch.0.join("report.log"));
    fs::write(&initrd, cpio).map_err(|e| format!("{}: {e}", initrd.display()))?;
    let stderr = fs::File::create(scratch.0.join("qemu.stderr")).map_err(|e| e.to_string())?;
    let mut cmd = Command::new(qemu);
    cmd.args(qemu_args(image, &initrd, &console, &report, memory_mb))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr);
    // SAFETY: prctl in the forked child before exec; async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            // qemu dies with us, even if we are killed without cleanup.
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    let mut child = cmd.spawn().map_err(|e| format!("{}: {e}", qemu.display()))?;
    let started = Instant::now();
    let status = loop {
        if let Err(e) = host::check_interrupted() {
            let _ = child.kill();
            let _ = child.wait();
            return Err(e);
        }
        if started.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("the guest did not power off within {} s{}", timeout.as_secs(), log_tail(&console)));
        }
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(format!("waiting for qemu: {e}")),
        }
    };
    if !status.success() {
        let err = fs::read_to_string(scratch.0.join("qemu.stderr")).unwrap_or_default();
        return Err(format!("qemu failed ({status}): {}{}", err.trim(), log_tail(&console)));
    }
    let text = fs::read_to_string(&report).map_err(|e| format!("{}: {e}", report.display()))?;
    if let Some(line) = text.lines().find(|l| l.starts_with("@fail")) {
        return Err(format!("guest set-up failed: {}{}", line.trim_start_matches("@fail").trim(), log_tail(&console)));
    }
    Ok(text)
}

/// The last lines of the kernel log, for error messages.
fn log_tail(console: &Path) -> String {
    let text = fs::read_to_string(console).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let tail = lines[lines.len().saturating_sub(15)..].join("\n");
    if tail.is_empty() {
        String::new()
    } else {
        format!("\nkernel log (last lines):\n{tail}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_flags_are_present() {
        let a = qemu_args(
            Path::new("/k/vmlinuz"),
            Path::new("/t/i.cpio"),
            Path::new("/t/c.log"),
            Path::new("/t/r.log"),
            256,
        );
        let after = |flag: &str| {
            a.iter().position(|x| x == flag).map(|i| a[i + 1].as_str()).unwrap_or_else(|| panic!("no {flag}"))
        };
        assert_eq!(after("-icount"), "shift=0,sleep=off");
        assert_eq!(after("-smp"), "1");
        assert_eq!(after("-m"), "256M");
        assert_eq!(after("-accel"), "tcg");
        assert!(after("-rtc").ends_with("clock=vm"));
        assert!(after("-append").contains("nokaslr norandmaps"));
        assert_eq!(a.iter().filter(|x| *x == "-serial").count(), 2);
        assert!(a.contains(&"file:/t/r.log".to_string()));
    }

    #[test]
    fn scratch_dir_is_removed_on_drop() {
        let d = ScratchDir::new("test").unwrap();
        let p = d.0.clone();
        fs::write(p.join("x"), "y").unwrap();
        drop(d);
        assert!(!p.exists());
    }
}
