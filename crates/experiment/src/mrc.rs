//! Miss-ratio curves of the simulated kernel (`reclaimsim mrc`,
//! `reclaimsim.mrc`): one complete run per memory size of the same trace or
//! workloads under any profile, the runs spread over threads (each run is
//! itself single-threaded and deterministic), plus the LRU curve of the same
//! trace from one stack-distance pass for reference.
//!
//! Sampled mode (miniature simulation, Waldspurger et al., USENIX ATC '17,
//! after SHARDS, FAST '15): the trace is filtered once to the references of
//! a spatially hashed sample of its pages ([`trace::sample`]), kept in memory,
//! and each size runs on `rate` times the memory; its faults, refaults and
//! swap-ins divided by the rate estimate the full run's.

use crate::request::{prepare, InputError, Request};
use crate::trace_input::open_trace;
use engine::config::format_size;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Cursor, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use trace::sample;
pub use trace::sample::PageSample;
use trace::stack::StackDistances;
use trace::{TraceReader, TraceWriter};

/// A miss-ratio curve to compute.
#[derive(Clone, Debug)]
pub struct MrcRequest {
    /// Workloads, profile, settings and seed of every run (`memory` is set per point, last).
    pub base: Request,
    /// A trace replayed in every run, if any.
    pub trace: Option<PathBuf>,
    /// Memory sizes in bytes, one run each.
    pub sizes: Vec<u64>,
    /// Sampled mode: only this sample of the trace's pages, on memory scaled by its rate.
    pub sample: Option<PageSample>,
}

/// One point of the curve: what the run at one memory size did.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// The memory size of the point.
    pub memory_bytes: u64,
    /// The memory the run had (scaled by the sample rate in sampled mode).
    pub run_memory_bytes: u64,
    /// References the trace issued (the sampled ones in sampled mode), or
    /// accesses of the workloads without a trace.
    pub refs: u64,
    /// References of the whole trace (`refs` unless sampled).
    pub full_refs: u64,
    /// Pages brought in on demand ([`engine::RunReport::demand_faults`]).
    pub faults: u64,
    /// `workingset_refault_anon + workingset_refault_file`.
    pub refaults: u64,
    /// `pswpin`.
    pub swapins: u64,
    /// The run reached its end (not stopped by `time_limit`).
    pub finished: bool,
    /// What the counts are multiplied by to estimate the full run (1 / sample rate).
    pub scale: f64,
}

impl Point {
    /// Estimated faults per reference of the full run: the estimated faults
    /// over all of the trace's references. (Dividing by the sampled references
    /// instead would weigh the sample's luck with the hottest pages twice.)
    pub fn fault_ratio(&self) -> f64 {
        self.faults as f64 * self.scale / self.full_refs.max(1) as f64
    }

    /// Estimated faults, refaults and swap-ins of the full run (the counts
    /// times [`Point::scale`], rounded).
    pub fn estimates(&self) -> [u64; 3] {
        [self.faults, self.refaults, self.swapins].map(|v| (v as f64 * self.scale).round() as u64)
    }

    /// The point as a JSON object: estimated counts, their ratio, and what the run itself saw.
    pub fn json(&self) -> serde_json::Value {
        let [faults, refaults, swapins] = self.estimates();
        serde_json::json!({
            "memory_bytes": self.memory_bytes,
            "refs": self.full_refs,
            "faults": faults,
            "refaults": refaults,
            "swapins": swapins,
            "fault_ratio": self.fault_ratio(),
            "finished": self.finished,
            "sample_rate": 1.0 / self.scale,
            "run_memory_bytes": self.run_memory_bytes,
            "run_refs": self.refs,
        })
    }
}

/// A trace held in memory, uncompressed, shared by the runs.
type Shared = Arc<[u8]>;

/// A trace held decoded, uncompressed, that every run of a curve replays:
/// decoded once instead of once per size (a zstd trace's decompression was a
/// twentieth of a 20-size curve of LIRS multi1, and about a seventh of one of
/// 10M references), the sample of sampled mode, or a trace on standard input,
/// which can be read only once.
#[derive(Clone)]
pub struct Held {
    copy: Copy,
    /// Names it in errors.
    label: String,
    /// References of the whole trace, in sampled mode.
    full_refs: Option<u64>,
}

/// Where a held trace is kept.
#[derive(Clone)]
enum Copy {
    /// In memory.
    Memory(Shared),
    /// In a file the caller gave ([`hold_in_file`]), opened anew by each reader.
    File(PathBuf),
}

impl Held {
    /// A reader over the held trace, from its first record.
    fn reader(&self) -> Result<TraceReader<Box<dyn BufRead + Send>>, InputError> {
        let input: Box<dyn BufRead + Send> = match &self.copy {
            Copy::Memory(bytes) => Box::new(Cursor::new(bytes.clone())),
            Copy::File(path) => Box::new(BufReader::with_capacity(
                1 << 16,
                File::open(path).map_err(|e| InputError(format!("{}: {e}", self.label)))?,
            )),
        };
        TraceReader::open(input, &self.label).map_err(|e| InputError(e.to_string()))
    }
}

/// Compressed traces decoded to at most this many bytes are held in memory
/// for a curve's runs; longer ones are streamed by each run from the file, so that
/// the simulator's memory stays bounded by the machines, not by the trace
/// (docs/mrc.md). 64 MiB: about 5.6M references of 12 bytes. SIM-CHOICE.
const IN_MEMORY_MAX: usize = 64 << 20;

/// A `Vec` that refuses to grow past a bound (the in-memory copy's).
struct Capped(Vec<u8>, usize);

impl Write for Capped {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        if self.0.len() + b.len() > self.1 {
            return Err(std::io::Error::other("over the in-memory bound"));
        }
        self.0.extend_from_slice(b);
        Ok(b.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Copies the trace at `path` (`-`: standard input) to `out` uncompressed,
/// record for record; returns `out`.
fn decode_into<W: Write>(path: &Path, out: W) -> Result<W, InputError> {
    let mut reader = open_trace(path)?;
    let bad = |e: trace::TraceError| InputError(e.to_string());
    let mut header = reader.header().clone();
    header.compressed = false;
    let mut w = TraceWriter::new(out, header, 0, &path.display().to_string()).map_err(bad)?;
    while let Some(r) = reader.next_record().map_err(bad)? {
        w.write(&r).map_err(bad)?;
    }
    w.finish().map_err(bad)
}

/// The trace at `path` (`-`: standard input) decoded into memory, if it
/// decodes to at most `limit` bytes.
fn decode(path: &Path, limit: usize) -> Result<Held, InputError> {
    let Capped(bytes, _) = decode_into(path, Capped(Vec::new(), limit))?;
    Ok(Held { copy: Copy::Memory(bytes.into()), label: path.display().to_string(), full_refs: None })
}

/// The whole trace at `path` (`-`: standard input) decoded once into `file`,
/// which `reopen` opens again from its start for each reader: a compressed
/// trace too long to hold in memory is then decompressed once, not once per
/// run, and the memory stays bounded. The caller owns the file (a scratch
/// file); the label of errors is `path`'s.
pub fn hold_in_file(path: &Path, file: File, reopen: PathBuf) -> Result<Held, InputError> {
    let out = decode_into(path, BufWriter::with_capacity(1 << 16, file))?;
    out.into_inner().map_err(|e| InputError(format!("{}: decoding to {}: {e}", path.display(), reopen.display())))?;
    Ok(Held { copy: Copy::File(reopen), label: path.display().to_string(), full_refs: None })
}

/// Runs `f(0..n)` on up to `jobs` threads, each taking the next index; results in index order.
pub fn parallel<T: Send>(n: usize, jobs: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let next = AtomicUsize::new(0);
    let out: Mutex<Vec<Option<T>>> = Mutex::new((0..n).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..jobs.clamp(1, n.max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                let r = f(i);
                out.lock().expect("no worker panics holding the lock")[i] = Some(r);
            });
        }
    });
    out.into_inner().expect("workers joined").into_iter().map(|r| r.expect("every index ran")).collect()
}

/// The sampled trace: the references of `reader`'s trace to the pages `s`
/// keeps, held in memory uncompressed with the number of references of the
/// whole trace.
fn sample_of<R: BufRead>(mut reader: TraceReader<R>, of: &str, s: PageSample) -> Result<Held, InputError> {
    let label = format!("{of} (sampled)");
    let bad = |e: trace::TraceError| InputError(e.to_string());
    let mut header = reader.header().clone();
    header.compressed = false;
    let mut w = TraceWriter::new(Vec::new(), header, 0, &label).map_err(bad)?;
    let (_, all) = sample::filter(&mut reader, &mut w, s).map_err(bad)?;
    Ok(Held { copy: Copy::Memory(w.finish().map_err(bad)?.into()), label, full_refs: Some(all) })
}

/// A computed curve.
pub struct Curve {
    /// One point per size; a run that failed (out of memory) is its error.
    pub points: Vec<Result<Point, String>>,
    /// The trace's LRU misses at each size, if asked for: exact from one
    /// stack-distance pass over the trace, or in sampled mode estimated from
    /// the sample's stack distances (SHARDS: distances and misses divided by
    /// the rate).
    pub lru: Option<Vec<u64>>,
}

impl Curve {
    /// The curve as JSON: `points`, each with `lru_misses` when computed, or
    /// `error` for a run that failed.
    pub fn json(&self) -> serde_json::Value {
        let points: Vec<serde_json::Value> = self
            .points
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let mut v = p.as_ref().map_or_else(|e| serde_json::json!({ "error": e }), Point::json);
                if let Some(lru) = &self.lru {
                    v["lru_misses"] = lru[i].into();
                }
                v
            })
            .collect();
        serde_json::json!({ "points": points })
    }
}

/// One job of [`curve`]: a run, or the LRU pass.
enum Done {
    Point(Result<Point, String>),
    Lru(Result<Vec<u64>, InputError>),
}

/// Computes the points of `req` (and with `lru` a trace's LRU curve) on up to
/// `jobs` threads. Bad input (checked on the first point before any run
/// starts) is an error; a run that fails (out of memory) is an error in its
/// own point.
pub fn curve(req: &MrcRequest, jobs: usize, lru: bool) -> Result<Curve, InputError> {
    curve_of(req, None, jobs, lru)
}

/// [`curve`], replaying `full` (the whole of `req`'s trace, [`hold_in_file`])
/// instead of opening the trace again when given.
pub fn curve_of(req: &MrcRequest, full: Option<&Held>, jobs: usize, lru: bool) -> Result<Curve, InputError> {
    if req.sizes.is_empty() {
        return Err(InputError("no memory sizes given".into()));
    }
    if req.sample.is_some() && req.trace.is_none() {
        return Err(InputError("sampled mode needs a trace (workloads make their references inside the run)".into()));
    }
    let held = match (full, &req.trace, req.sample) {
        (Some(f), _, Some(s)) => Some(sample_of(f.reader()?, &f.label, s)?),
        (Some(f), _, None) => Some(f.clone()),
        (None, Some(t), Some(s)) => Some(sample_of(open_trace(t)?, &t.display().to_string(), s)?),
        // Standard input can be read only once: held whatever its size.
        (None, Some(t), None) if t == Path::new("-") => Some(decode(t, usize::MAX)?),
        // An uncompressed file is read as fast as a copy in memory.
        (None, Some(t), None) if crate::trace_header(t).is_ok_and(|h| h.compressed) => decode(t, IN_MEMORY_MAX).ok(),
        (None, _, _) => None,
    };
    drop(point_run(req, req.sizes[0], held.as_ref())?);
    let pages: Vec<u64> = req.sizes.iter().map(|s| s / mm::PAGE_SIZE).collect();
    // The LRU pass is job 0: in full mode it is the longest.
    let lru_job = usize::from(lru && req.trace.is_some());
    let mut done = parallel(req.sizes.len() + lru_job, jobs, |i| match (i < lru_job, &req.trace, &held) {
        (true, _, Some(m)) => {
            // In sampled mode, SHARDS' estimate: the sample's misses on memory scaled by the rate.
            let rate = req.sample.map_or(1.0, |s| s.rate());
            let small: Vec<u64> = pages.iter().map(|&p| (p as f64 * rate).round() as u64).collect();
            Done::Lru(
                lru_curve_of(m, &small, None)
                    .map(|l| l.misses.iter().map(|&m| (m as f64 / rate).round() as u64).collect()),
            )
        }
        (true, Some(path), None) => Done::Lru(lru_curve(path, &pages, None).map(|l| l.misses)),
        _ => {
            Done::Point(point_run(req, req.sizes[i - lru_job], held.as_ref()).map_err(|e| e.0).and_then(PointRun::run))
        }
    });
    let lru = match (lru_job, done.first_mut()) {
        (1, Some(Done::Lru(r))) => Some(std::mem::replace(r, Ok(Vec::new()))?),
        _ => None,
    };
    let points = done
        .into_iter()
        .filter_map(|d| match d {
            Done::Point(p) => Some(p),
            Done::Lru(_) => None,
        })
        .collect();
    Ok(Curve { points, lru })
}

/// A prepared run of one point.
struct PointRun {
    prepared: crate::Prepared,
    trace: Option<crate::TraceRun>,
    memory_bytes: u64,
    run_memory_bytes: u64,
    scale: f64,
    /// References of the whole trace, in sampled mode.
    full_refs: Option<u64>,
}

/// Prepares the run of `req` at `memory` bytes. In sampled mode the memory,
/// `vm.min_free_kbytes` (the full size's, set or the kernel's default) and
/// `memory.reserved` are all scaled by the rate, so that the watermarks keep
/// the same share of memory as in the full run: at 1% of a few hundred MiB
/// the kernel's default minimum would otherwise hold several times the
/// share of memory free and inflate the faults. The run is a scale model of
/// the full size (`memory.scaled_from`), so its inactive lists keep the full
/// run's share too. Watermark boosting is off in the sample
/// (`watermark_boost=none`): a boost is at least a pageblock (2 MiB, not
/// scalable), which is a quarter of a sampled machine of 8 MiB but 0.5% of
/// the 400 MiB one it stands for, so each boost made the sample reclaim far
/// more than its share (docs/mrc.md: faults 11% high at rate 0.04 on 8-16 MiB
/// samples, 1-4% without boosting).
fn point_run(req: &MrcRequest, memory: u64, held: Option<&Held>) -> Result<PointRun, InputError> {
    let page = mm::PAGE_SIZE;
    let mut r = req.base.clone();
    let (run_memory, scale) = match req.sample {
        Some(s) => {
            let scaled = |b: u64| ((b as f64 * s.rate() / page as f64).round() as u64) * page;
            let run_memory = scaled(memory).max(page);
            r.settings.push(format!("memory={}K", memory / 1024));
            let full = prepare(&r)?.info.config;
            let min_free =
                full.min_free_kbytes.unwrap_or_else(|| reclaim::watermark::default_min_free_kbytes(memory / 1024));
            r.settings.push(format!("vm.min_free_kbytes={}", ((min_free as f64 * s.rate()).round() as u64).max(1)));
            r.settings.push(format!("memory.reserved={}K", scaled(full.reserved_bytes) / 1024));
            r.settings.push(format!("memory.scaled_from={}K", memory / 1024));
            // S-MRC1: no watermark boosting in the sample.
            r.settings.push("watermark_boost=none".into());
            (run_memory, 1.0 / s.rate())
        }
        None => (memory / page * page, 1.0),
    };
    r.settings.push(format!("memory={}K", run_memory / 1024));
    let mut p = prepare(&r).map_err(|e| match req.sample {
        Some(s) => InputError(format!("{} (sampled mode: memory {} x rate {})", e.0, format_size(memory), s.rate())),
        None => e,
    })?;
    let trace = match (&req.trace, held) {
        (Some(_), Some(m)) => Some(p.add_trace_from(m.reader()?, &m.label, None)?),
        (Some(path), None) => Some(p.add_trace(path, None)?),
        (None, _) => None,
    };
    let full_refs = held.and_then(|m| m.full_refs);
    Ok(PointRun { prepared: p, trace, memory_bytes: memory, run_memory_bytes: run_memory, scale, full_refs })
}

impl PointRun {
    fn run(self) -> Result<Point, String> {
        let limit = format!("memory={}", format_size(self.run_memory_bytes));
        let time_limit = self.prepared.info.config.time_limit_ns;
        let report = self.prepared.builder.build().run(&mut |_| {}).map_err(|e| format!("{limit}: {e}"))?;
        let get = |k: &str| report.get(k).unwrap_or(0);
        let (refs, finished) = match &self.trace {
            Some(t) => {
                let o = t.outcome().map_err(|e| e.0)?;
                (o.refs, o.finished)
            }
            None => (report.accesses, time_limit == 0 || report.virtual_ns < time_limit),
        };
        Ok(Point {
            memory_bytes: self.memory_bytes,
            run_memory_bytes: self.run_memory_bytes,
            refs,
            full_refs: self.full_refs.unwrap_or(refs),
            faults: report.demand_faults(),
            refaults: get("workingset_refault_anon") + get("workingset_refault_file"),
            swapins: get("pswpin"),
            finished,
            scale: self.scale,
        })
    }
}

/// A trace's LRU reference curve ([`lru_curve`]).
pub struct LruCurve {
    /// Misses of an LRU memory of each size asked for.
    pub misses: Vec<u64>,
    /// Page references of the trace.
    pub refs: u64,
    /// Pages the trace declares (the range of its global page ids).
    pub pages: u32,
}

/// The LRU reference curve of a trace from one stack-distance pass: misses of
/// an LRU memory of each size in `pages`; with `tap`, each reference's global
/// page id is also written to it (Belady's input).
pub fn lru_curve(path: &Path, pages: &[u64], tap: Option<&mut dyn Write>) -> Result<LruCurve, InputError> {
    lru_misses(open_trace(path)?, pages, tap)
}

/// [`lru_curve`] of a held trace.
pub fn lru_curve_of(held: &Held, pages: &[u64], tap: Option<&mut dyn Write>) -> Result<LruCurve, InputError> {
    lru_misses(held.reader()?, pages, tap)
}

/// [`lru_curve`] of an opened trace.
fn lru_misses<R: BufRead>(
    mut reader: TraceReader<R>,
    pages: &[u64],
    mut tap: Option<&mut dyn Write>,
) -> Result<LruCurve, InputError> {
    let ids = trace::refs::PageIds::new(reader.header());
    let mut stack = StackDistances::new(ids.total());
    let mut refs = 0u64;
    let io = |e: std::io::Error| InputError(format!("page-id spool: {e}"));
    while let Some(r) = reader.next_record().map_err(|e| InputError(e.to_string()))? {
        if let Some((first, n, _)) = ids.of(&r.event) {
            for p in first..first + n {
                stack.reference(p);
                if let Some(t) = tap.as_mut() {
                    t.write_all(&p.to_le_bytes()).map_err(io)?;
                }
            }
            refs += n as u64;
        }
    }
    if let Some(t) = tap.as_mut() {
        t.flush().map_err(io)?;
    }
    Ok(LruCurve { misses: stack.lru_misses(pages), refs, pages: ids.total() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use trace::format::{Decl, Event, Header, Record};

    /// A zstd trace decoded into memory holds the same records, uncompressed;
    /// over the bound it is not held (the runs read the file).
    #[test]
    fn a_trace_is_held_decoded_record_for_record_within_the_bound() {
        let path = std::env::temp_dir().join(format!("reclaimsim-mrc-held-{}.rtrace", std::process::id()));
        let mut h = Header::new(vec![Decl { name: "a".into(), pages: 64 }], vec![Decl { name: "f".into(), pages: 64 }]);
        h.compressed = true;
        let records: Vec<Record> = (0..5000u32)
            .map(|i| match i % 3 {
                0 => Record::at0(Event::Access { space: 0, page: i % 64, write: i % 2 == 0 }),
                1 => Record::at0(Event::FileRead { file: 0, page: i % 60, pages: 1 + i % 4 }),
                _ => Record::at0(Event::FileWrite { file: 0, page: i % 64, pages: 1 }),
            })
            .collect();
        let mut w = TraceWriter::new(Vec::new(), h, 3, "t").unwrap();
        records.iter().for_each(|r| w.write(r).unwrap());
        std::fs::write(&path, w.finish().unwrap()).unwrap();
        let held = decode(&path, 1 << 20).expect("held");
        let mut r = held.reader().unwrap();
        assert!(!r.header().compressed);
        let mut back = Vec::new();
        while let Some(rec) = r.next_record().unwrap() {
            back.push(rec);
        }
        assert_eq!(back, records);
        assert!(decode(&path, 1000).is_err(), "over the bound");
        std::fs::remove_file(&path).unwrap();
    }
}
