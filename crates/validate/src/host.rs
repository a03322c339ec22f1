//! The real machine side of `validate`: environment checks, the memory cgroup,
//! swap (zram when free, else a swap file), the sparse data file, the 1 ms
//! `memory.stat` poller, kernel counters, and cleanup of everything created,
//! also on SIGINT/SIGTERM/SIGHUP.

use super::stat::{parse_stats, Stats};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The cgroup v1 memory controller mount.
pub const MEMCG_ROOT: &str = "/sys/fs/cgroup/memory";
const ZRAM: &str = "/dev/zram0";
const ZRAM_SYS: &str = "/sys/block/zram0";

/// Set by the signal handler; checked while waiting.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Routes SIGINT, SIGTERM and SIGHUP to a flag so that cleanup runs.
pub fn catch_signals() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: the handler only stores to an atomic (async-signal-safe).
        unsafe { libc::signal(sig, on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t) };
    }
}

/// An error if a signal asked us to stop.
pub fn check_interrupted() -> Result<(), String> {
    if INTERRUPTED.load(Ordering::SeqCst) {
        return Err("interrupted".into());
    }
    Ok(())
}

/// Why validation cannot run here.
pub fn refusal() -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("needs root: it creates a memory cgroup and a swap device".into());
    }
    if !Path::new(MEMCG_ROOT).join("memory.limit_in_bytes").exists() {
        return Some(format!(
            "needs the cgroup v1 memory controller at {MEMCG_ROOT} (cgroup v2 `memory.max` is not supported)"
        ));
    }
    if !Path::new(ZRAM_SYS).exists() && find_tool("mkswap").is_none() {
        return Some("needs swap: no /dev/zram0 and no mkswap to make a swap file".into());
    }
    for tool in ["swapon", "swapoff"] {
        if find_tool(tool).is_none() {
            return Some(format!("needs swap: `{tool}` not found"));
        }
    }
    None
}

fn find_tool(name: &str) -> Option<PathBuf> {
    ["/usr/sbin", "/sbin", "/usr/bin", "/bin"].iter().map(|d| Path::new(d).join(name)).find(|p| p.exists())
}

fn run_tool(name: &str, args: &[&str]) -> Result<(), String> {
    let tool = find_tool(name).ok_or_else(|| format!("`{name}` not found"))?;
    let out = Command::new(&tool).args(args).stdin(Stdio::null()).output().map_err(|e| format!("{name}: {e}"))?;
    if !out.status.success() {
        return Err(format!("{name} {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(())
}

fn read(path: impl AsRef<Path>) -> Result<String, String> {
    fs::read_to_string(path.as_ref()).map_err(|e| format!("{}: {e}", path.as_ref().display()))
}

fn write(path: impl AsRef<Path>, value: &str) -> Result<(), String> {
    fs::write(path.as_ref(), value).map_err(|e| format!("writing `{value}` to {}: {e}", path.as_ref().display()))
}

/// Which swap device validation made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SwapDev {
    /// `/dev/zram0` (synchronous, no readahead).
    Zram,
    /// A swap file of ours on the root filesystem.
    File(PathBuf),
}

impl SwapDev {
    /// The simulator's device kind for it.
    pub fn sim_kind(&self) -> &'static str {
        match self {
            SwapDev::Zram => "zram",
            // A virtual disk: fast, but it reports rotational=1 (see `sim_swap_ra`).
            SwapDev::File(_) => "ssd",
        }
    }

    /// The simulator's `swap_ra`: the kernel's rule for zram (readahead is
    /// bypassed); cluster readahead for the swap file, as the kernel picks for
    /// a rotational disk.
    pub fn sim_swap_ra(&self) -> &'static str {
        match self {
            SwapDev::Zram => "kernel",
            SwapDev::File(_) => "cluster",
        }
    }
}

/// Everything validation created; removed on drop, in reverse order.
pub struct Host {
    /// Our scratch directory (data file, swap file).
    pub dir: PathBuf,
    /// Our swap device, once enabled.
    pub swap: Option<SwapDev>,
    swap_bytes: u64,
    /// The current run's cgroup.
    cgroup: Option<PathBuf>,
}

impl Host {
    /// Creates the scratch directory and enables `swap_bytes` of swap: zram
    /// when free (unless `file_only`), else a swap file.
    pub fn setup(swap_bytes: u64, file_only: bool) -> Result<Host, String> {
        let dir = PathBuf::from(format!("/var/tmp/reclaimsim-validate.{}", std::process::id()));
        fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let mut host = Host { dir, swap: None, swap_bytes, cgroup: None };
        host.enable_swap(file_only)?;
        Ok(host)
    }

    fn zram_free() -> bool {
        let swaps = fs::read_to_string("/proc/swaps").unwrap_or_default();
        let mounts = fs::read_to_string("/proc/mounts").unwrap_or_default();
        Path::new(ZRAM).exists()
            && fs::read_to_string(format!("{ZRAM_SYS}/disksize")).map(|s| s.trim() == "0").unwrap_or(false)
            && !swaps.contains(ZRAM)
            && !mounts.contains(ZRAM)
    }

    fn enable_swap(&mut self, file_only: bool) -> Result<(), String> {
        if !file_only && Self::zram_free() {
            // Claim it first so that a failure below still resets it.
            write(format!("{ZRAM_SYS}/disksize"), &self.swap_bytes.to_string())?;
            self.swap = Some(SwapDev::Zram);
            run_tool("mkswap", &[ZRAM])?;
            run_tool("swapon", &[ZRAM])?;
            return Ok(());
        }
        let path = self.dir.join("swapfile");
        let f = fs::File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        self.swap = Some(SwapDev::File(path.clone()));
        // Swap files must have no holes.
        // SAFETY: allocates blocks of a file we own.
        let rc =
            unsafe { libc::posix_fallocate(std::os::fd::AsRawFd::as_raw_fd(&f), 0, self.swap_bytes as libc::off_t) };
        if rc != 0 {
            return Err(format!("{}: fallocate: {}", path.display(), std::io::Error::from_raw_os_error(rc)));
        }
        let p = path.to_str().expect("our path is UTF-8");
        run_tool("chmod", &["600", p])?;
        run_tool("mkswap", &[p])?;
        run_tool("swapon", &[p])
    }

    /// A fresh memory cgroup `name` with `limit_bytes` and `swappiness`.
    pub fn make_cgroup(&mut self, name: &str, limit_bytes: u64, swappiness: u32) -> Result<PathBuf, String> {
        self.remove_cgroup();
        let cg = Path::new(MEMCG_ROOT).join(name);
        fs::create_dir(&cg).map_err(|e| format!("creating {}: {e}", cg.display()))?;
        self.cgroup = Some(cg.clone());
        write(cg.join("memory.limit_in_bytes"), &limit_bytes.to_string())?;
        write(cg.join("memory.swappiness"), &swappiness.to_string())?;
        Ok(cg)
    }

    /// Removes the current cgroup (its tasks have exited).
    pub fn remove_cgroup(&mut self) {
        if let Some(cg) = self.cgroup.take() {
            // Retry briefly: the last task may still be exiting.
            for _ in 0..200 {
                if fs::remove_dir(&cg).is_ok() || !cg.exists() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            eprintln!("reclaimsim validate: warning: could not remove {}", cg.display());
        }
    }

    /// A new sparse file of `pages` pages: no page cache and no shadow entries
    /// left from an earlier run; reads of its holes need no disk I/O.
    pub fn fresh_file(&self, pages: u32) -> Result<PathBuf, String> {
        let path = self.dir.join("data");
        let f = fs::File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        f.set_len(pages as u64 * 4096).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(path)
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        self.remove_cgroup();
        match self.swap.take() {
            Some(SwapDev::Zram) => {
                let _ = run_tool("swapoff", &[ZRAM]);
                if let Err(e) = write(format!("{ZRAM_SYS}/reset"), "1") {
                    eprintln!("reclaimsim validate: warning: {e}");
                }
            }
            Some(SwapDev::File(p)) => {
                if let Err(e) = run_tool("swapoff", &[p.to_str().unwrap_or_default()]) {
                    eprintln!("reclaimsim validate: warning: {e}");
                }
            }
            None => {}
        }
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// Pins the calling process (and threads it starts later) to `cpu`.
pub fn pin_self(cpu: usize) {
    // SAFETY: a zeroed cpu_set_t is the empty set; CPU_SET writes within it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// Online CPUs.
pub fn nr_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// `/proc/vmstat`, after `vm.stat_refresh` folded the per-CPU deltas in.
pub fn vmstat() -> Result<Stats, String> {
    write("/proc/sys/vm/stat_refresh", "1")?;
    parse_stats("/proc/vmstat", &read("/proc/vmstat")?)
}

/// A group's `memory.stat`.
pub fn memory_stat(cg: &Path) -> Result<Stats, String> {
    let p = cg.join("memory.stat");
    parse_stats(&p.display().to_string(), &read(&p)?)
}

/// A kernel tunable read as a number (`/proc/sys/vm/page-cluster`).
pub fn sysctl(path: &str) -> Result<u64, String> {
    let s = read(path)?;
    s.trim().parse().map_err(|_| format!("{path}: `{}` is not a number", s.trim()))
}

/// Reads `memory.stat` every millisecond until dropped: forces the memcg
/// statistics flushes that reclaim decisions depend on (pitfall 1).
pub struct Poller {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<u64>>,
}

impl Poller {
    /// Starts polling `cg`.
    pub fn start(cg: &Path) -> Poller {
        let stop = Arc::new(AtomicBool::new(false));
        let (flag, path) = (stop.clone(), cg.join("memory.stat"));
        let thread = std::thread::spawn(move || {
            let mut reads = 0;
            while !flag.load(Ordering::Relaxed) {
                if fs::read(&path).is_ok() {
                    reads += 1;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            reads
        });
        Poller { stop, thread: Some(thread) }
    }

    /// Stops polling; returns how many reads were made.
    pub fn stop(mut self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take().map_or(0, |t| t.join().unwrap_or(0))
    }
}

impl Drop for Poller {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Waits for `child`, killing it on a signal. Returns its stdout and whether it
/// succeeded (false: killed, e.g. by the OOM killer).
pub fn wait_child(mut child: Child) -> Result<(String, std::process::ExitStatus), String> {
    loop {
        if INTERRUPTED.load(Ordering::SeqCst) {
            let _ = child.kill();
            let _ = child.wait();
            return Err("interrupted".into());
        }
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(format!("waiting for the driver: {e}")),
        }
    }
    let out = child.wait_with_output().map_err(|e| format!("driver output: {e}"))?;
    Ok((String::from_utf8_lossy(&out.stdout).into_owned(), out.status))
}
