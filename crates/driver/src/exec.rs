//! Real mode: performs a pattern's accesses on real memory and a real file.
//!
//! Everything the run needs (samplers, the mapping, the file descriptor, the
//! read buffer) is set up first; then the process pins itself to a CPU, joins
//! the memory cgroup, and runs the accesses, so that the group is charged for
//! the pattern's pages only.

use crate::pattern::{Op, Pattern, PAGE};
use crate::trace::Digest;
use std::io::{self, Seek, SeekFrom};
use std::os::fd::AsRawFd;
use std::path::PathBuf;

/// Where and how to run.
#[derive(Clone, Debug, Default)]
pub struct RealOpts {
    /// The file the pattern reads (at least `file_pages` pages long).
    pub file: Option<PathBuf>,
    /// A cgroup directory to join (its `cgroup.procs`) before the first access.
    pub cgroup: Option<PathBuf>,
    /// A CPU to pin to.
    pub cpu: Option<usize>,
    /// Files read after the last access while the pattern's pages are still
    /// mapped (`/sys/block/zram0/mm_stat`: what zram holds of them).
    pub snapshot: Vec<PathBuf>,
    /// Every this many accesses, read a file (`/proc/vmstat`): the run's phases.
    pub phases: Option<(u64, PathBuf)>,
    /// Writes made in the run: after `n` accesses, `text` to `path` (a group's
    /// `memory.reclaim`), so that a write falls between the same two accesses
    /// on every kernel and in the simulator.
    pub writes: Vec<Write>,
}

/// A write made after a number of accesses ([`RealOpts::writes`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Write {
    /// Accesses before the write.
    pub after: u64,
    /// The file written.
    pub path: PathBuf,
    /// What is written.
    pub text: String,
}

impl Write {
    /// Parses `N:PATH:TEXT` (`--write`).
    pub fn parse(v: &str) -> Result<Write, String> {
        let bad = || format!("--write {v}: expected N:PATH:TEXT (N accesses before TEXT is written to PATH)");
        let mut it = v.splitn(3, ':');
        let (Some(n), Some(path), Some(text)) = (it.next(), it.next(), it.next()) else { return Err(bad()) };
        let after = n.parse().map_err(|_| bad())?;
        if path.is_empty() {
            return Err(bad());
        }
        Ok(Write { after, path: path.into(), text: text.into() })
    }
}

/// What a real run did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Done {
    /// The digest of the accesses made.
    pub digest: Digest,
    /// Their count.
    pub ops: u64,
    /// The texts of [`RealOpts::snapshot`], read after the last access.
    pub snapshot: Vec<String>,
    /// The text of the phase file after every `n`th access, with the count.
    pub phases: Vec<(u64, String)>,
    /// The outcome of each of [`RealOpts::writes`]: 0, or the OS error number.
    pub writes: Vec<i32>,
}

fn os_err(what: &str) -> io::Error {
    let e = io::Error::last_os_error();
    io::Error::new(e.kind(), format!("{what}: {e}"))
}

/// An anonymous private mapping without huge pages.
pub(crate) struct Region {
    base: *mut u8,
    len: usize,
}

impl Region {
    pub(crate) fn new(pages: u32) -> io::Result<Region> {
        let len = pages as usize * PAGE as usize;
        if len == 0 {
            return Ok(Region { base: std::ptr::null_mut(), len });
        }
        // SAFETY: a fresh anonymous mapping; no existing memory is affected.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(os_err("mmap of the anonymous region"));
        }
        // SAFETY: advice on the mapping just created.
        if unsafe { libc::madvise(base, len, libc::MADV_NOHUGEPAGE) } != 0 {
            return Err(os_err("madvise(MADV_NOHUGEPAGE)"));
        }
        Ok(Region { base: base as *mut u8, len })
    }

    #[inline]
    pub(crate) fn touch(&self, page: u32, write: bool, fill: usize, noise: &mut u64) -> u8 {
        let off = page as usize * PAGE as usize;
        assert!(off < self.len, "anon page {page} outside the region");
        // SAFETY: `off` is inside the mapping (checked above); volatile so the access happens.
        unsafe {
            let p = self.base.add(off);
            if write {
                p.write_volatile((page as u8) | 1);
                // Bytes that do not compress (xorshift64), after the first.
                for i in 1..fill.min(PAGE as usize) {
                    *noise ^= *noise << 13;
                    *noise ^= *noise >> 7;
                    *noise ^= *noise << 17;
                    p.add(i).write_volatile(*noise as u8);
                }
                0
            } else {
                p.read_volatile()
            }
        }
    }
}

impl Region {
    /// `madvise(MADV_PAGEOUT)` of the whole region: reclaim its pages now (v5.4+).
    pub(crate) fn pageout(&self) -> io::Result<()> {
        // SAFETY: advice on the mapping this value owns.
        if self.len > 0 && unsafe { libc::madvise(self.base as *mut libc::c_void, self.len, libc::MADV_PAGEOUT) } != 0 {
            return Err(os_err("madvise(MADV_PAGEOUT)"));
        }
        Ok(())
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        if self.len > 0 {
            // SAFETY: unmaps exactly the mapping this value owns.
            unsafe { libc::munmap(self.base as *mut libc::c_void, self.len) };
        }
    }
}

fn pin_to(cpu: usize) -> io::Result<()> {
    // SAFETY: a zeroed cpu_set_t is the empty set; CPU_SET writes within it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(os_err(&format!("sched_setaffinity to CPU {cpu}")));
        }
    }
    Ok(())
}

/// Runs `p` for real.
pub fn run_real(p: &Pattern, opts: &RealOpts) -> io::Result<Done> {
    let region = Region::new(p.anon_pages)?;
    let file = match (&opts.file, p.file_pages) {
        (_, 0) => None,
        (None, _) => {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "the pattern reads a file: give --file PATH"))
        }
        (Some(path), pages) => {
            let mut f = std::fs::OpenOptions::new()
                .read(true)
                .write(p.writes_file())
                .open(path)
                .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
            // The end, not the metadata's length: a block device (the guest's null_blk) has length 0 there.
            let len = f.seek(SeekFrom::End(0))?;
            if len < pages as u64 * PAGE {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("{}: {len} bytes, the pattern needs {}", path.display(), pages as u64 * PAGE),
                ));
            }
            // One-page reads without readahead (the root disk's read_ahead_kb is large).
            // SAFETY: advice on an open descriptor.
            let rc = unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_RANDOM) };
            if rc != 0 {
                return Err(io::Error::from_raw_os_error(rc));
            }
            Some(f)
        }
    };
    let mut buf = vec![1u8; PAGE as usize];
    if let Some(cpu) = opts.cpu {
        pin_to(cpu)?;
    }
    if let Some(cg) = &opts.cgroup {
        let procs = cg.join("cgroup.procs");
        std::fs::write(&procs, std::process::id().to_string())
            .map_err(|e| io::Error::new(e.kind(), format!("joining {}: {e}", procs.display())))?;
    }
    let mut digest = Digest::default();
    let mut n = 0u64;
    let mut sink = 0u8;
    let mut noise = 0x9e37_79b9_7f4a_7c15u64;
    let mut phases = Vec::new();
    let read = |path: &PathBuf| {
        std::fs::read_to_string(path).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))
    };
    let mut writes = vec![None; opts.writes.len()];
    for op in p.ops() {
        write_due(&opts.writes, n, &mut writes);
        if let Some((every, path)) = &opts.phases {
            if n > 0 && n.is_multiple_of(*every) {
                phases.push((n, read(path)?));
            }
        }
        digest.add(op);
        n += 1;
        match op {
            Op::Anon { page, write } => sink ^= region.touch(page, write, p.fill as usize, &mut noise),
            Op::File { page, write } => {
                let f = file.as_ref().expect("file opened for a pattern with file pages");
                let (fd, off) = (f.as_raw_fd(), (page as u64 * PAGE) as libc::off_t);
                let got = if write {
                    buf[0] = page as u8 | 1;
                    // SAFETY: writes one page from a buffer of one page.
                    unsafe { libc::pwrite(fd, buf.as_ptr() as *const libc::c_void, PAGE as usize, off) }
                } else {
                    // SAFETY: reads at most one page into a buffer of one page.
                    unsafe { libc::pread(fd, buf.as_mut_ptr() as *mut libc::c_void, PAGE as usize, off) }
                };
                if got != PAGE as isize {
                    return Err(os_err(&format!("{} of file page {page}", if write { "pwrite" } else { "pread" })));
                }
                sink ^= buf[0];
            }
        }
    }
    std::hint::black_box(sink);
    write_due(&opts.writes, n, &mut writes);
    let snapshot = opts.snapshot.iter().map(read).collect::<io::Result<Vec<String>>>()?;
    drop(region);
    let writes = writes.into_iter().map(|w| w.unwrap_or(libc::ERANGE)).collect();
    Ok(Done { digest, ops: n, snapshot, phases, writes })
}

/// Makes the writes of `writes` due after `n` accesses and not made yet,
/// noting each outcome in `done` (a write past the last access fails with `ERANGE`).
fn write_due(writes: &[Write], n: u64, done: &mut [Option<i32>]) {
    for (w, d) in writes.iter().zip(done.iter_mut()) {
        if w.after == n && d.is_none() {
            *d = Some(std::fs::write(&w.path, &w.text).map_or_else(|e| e.raw_os_error().unwrap_or(libc::EIO), |()| 0));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_real_run_digests_its_accesses_and_reads_the_snapshot_after_them() {
        let p = Pattern::parse("anon-seq:anon=64K,passes=2").unwrap();
        let path = std::env::temp_dir().join(format!("reclaimsim-driver-snapshot-{}", std::process::id()));
        std::fs::write(&path, "1 2 3\n").unwrap();
        let done =
            run_real(&p, &RealOpts { snapshot: vec![path.clone(), path.clone()], ..RealOpts::default() }).unwrap();
        std::fs::remove_file(&path).unwrap();
        let mut want = Digest::default();
        p.ops().for_each(|op| want.add(op));
        assert_eq!((done.digest, done.ops), (want, 32));
        assert_eq!(done.snapshot, ["1 2 3\n", "1 2 3\n"]);
        assert!(run_real(&p, &RealOpts::default()).unwrap().snapshot.is_empty());
        let missing = RealOpts { snapshot: vec!["/nonexistent/mm_stat".into()], ..RealOpts::default() };
        assert!(run_real(&p, &missing).unwrap_err().to_string().starts_with("/nonexistent/mm_stat: "));
    }

    #[test]
    fn fill_writes_bytes_that_do_not_compress() {
        // Sixteen stores, one page each: page 0's bytes after the first are noise.
        let p = Pattern::parse("anon-zipf:anon=4K,ops=15,fill=4096").unwrap();
        assert_eq!(p.fill, 4096);
        let region = Region::new(1).unwrap();
        let mut noise = 1u64;
        region.touch(0, true, p.fill as usize, &mut noise);
        // SAFETY: the region's one page.
        let page = unsafe { std::slice::from_raw_parts(region.base, PAGE as usize) };
        let distinct: std::collections::BTreeSet<u8> = page.iter().copied().collect();
        assert!(distinct.len() > 200, "{} distinct byte values", distinct.len());
        region.touch(0, true, 0, &mut noise);
        assert_eq!(Pattern::parse("anon-zipf:anon=4K").unwrap().fill, 0);
    }

    #[test]
    fn file_writes_reach_the_file() {
        let path = std::env::temp_dir().join(format!("reclaimsim-driver-write-{}", std::process::id()));
        std::fs::write(&path, vec![0u8; 4 * PAGE as usize]).unwrap();
        let p = Pattern::parse("file-seq:file=16K,passes=1,write=1").unwrap();
        let done = run_real(&p, &RealOpts { file: Some(path.clone()), ..RealOpts::default() }).unwrap();
        let data = std::fs::read(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(done.ops, 4);
        // Each page starts with its own index, odd.
        assert_eq!([data[0], data[PAGE as usize], data[3 * PAGE as usize]], [1, 1, 3]);
    }

    #[test]
    fn writes_are_made_after_their_access_count() {
        // Four pages: a write after 2 accesses lands before the third, one after 4 at the end.
        let p = Pattern::parse("anon-seq:anon=16K,passes=1").unwrap();
        let dir = std::env::temp_dir().join(format!("reclaimsim-driver-writes-at-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let w = |after: u64, name: &str| Write { after, path: dir.join(name), text: format!("{after}") };
        let log = dir.join("log");
        std::fs::write(&log, "").unwrap();
        let opts = RealOpts {
            writes: vec![w(2, "log"), w(4, "end"), w(5, "past"), w(0, "missing/x")],
            phases: Some((1, log)),
            ..RealOpts::default()
        };
        let done = run_real(&p, &opts).unwrap();
        // Phases are read after accesses 1, 2 and 3: the write after 2 comes before the read after 2.
        let seen: Vec<(u64, &str)> = done.phases.iter().map(|(n, t)| (*n, t.as_str())).collect();
        assert_eq!(seen, [(1, ""), (2, "2"), (3, "2")]);
        assert_eq!(done.writes, [0, 0, libc::ERANGE, libc::ENOENT]);
        assert_eq!(std::fs::read_to_string(dir.join("end")).unwrap(), "4");
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(Write::parse("5:/sys/fs/cgroup/pr/memory.reclaim:8M swappiness=0").unwrap().text, "8M swappiness=0");
        assert!(Write::parse("x:/p:1").unwrap_err().contains("expected N:PATH:TEXT"));
        assert!(Write::parse("5:/p").is_err() && Write::parse("5::1").is_err());
    }

    #[test]
    fn phases_read_the_file_after_every_nth_access() {
        // 32 accesses, every 10th: after the 10th, 20th and 30th (none at the start or end).
        let p = Pattern::parse("anon-seq:anon=64K,passes=2").unwrap();
        let path = std::env::temp_dir().join(format!("reclaimsim-driver-phase-{}", std::process::id()));
        std::fs::write(&path, "pswpin 7\n").unwrap();
        let done = run_real(&p, &RealOpts { phases: Some((10, path.clone())), ..RealOpts::default() }).unwrap();
        std::fs::remove_file(&path).unwrap();
        let at: Vec<u64> = done.phases.iter().map(|(n, _)| *n).collect();
        assert_eq!(at, [10, 20, 30]);
        assert!(done.phases.iter().all(|(_, text)| text == "pswpin 7\n"));
    }
}
