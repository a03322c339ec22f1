//! `reclaimsim trace ...` and `run --trace`: the file side of traces (inputs,
//! scratch spools, atomic outputs, progress); the work is in the `trace` crate.

use crate::runner::{self, usage, RunArgs};
use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use serde_json::{json, Value};
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;
use trace::convert::{self, Format, Options, PagesAs, FORMATS};
use trace::format::{Item, RecordCodec};
use trace::refs::PageIds;
use trace::stats::{Stats, RECORD_KINDS};
use trace::synth::Synth;
use trace::writer::DEFAULT_ZSTD_LEVEL;
use trace::{belady, Header, Record, TraceReader, TraceWriter};

/// Arguments of `trace`.
#[derive(Args, Debug)]
pub struct TraceArgs {
    #[command(subcommand)]
    command: TraceCommand,
}

#[derive(Subcommand, Debug)]
enum TraceCommand {
    /// Convert another format to a reclaimsim trace (formats: lackey, oracle-general, csv, txt, pages, addresses, strace).
    Convert(ConvertArgs),
    /// Run a program under valgrind lackey and write its memory references as a trace.
    Record(RecordArgs),
    /// Counts, footprint, read/write mix, reuse distances and the LRU miss-ratio curve (and Belady's MIN with --opt).
    Stats(StatsArgs),
    /// Write a synthetic trace of any length (hot set + cold range), e.g. to a pipe.
    Synth(SynthArgs),
}

#[derive(Args, Debug)]
struct OutputArgs {
    /// Page size of the output in bytes (addresses and offsets are divided by it).
    #[arg(long, default_value_t = 4096)]
    page_size: u32,
    /// Write the records uncompressed (default: zstd).
    #[arg(long)]
    no_compress: bool,
}

#[derive(Args, Debug)]
struct ConvertArgs {
    /// Input format.
    #[arg(long = "from", value_name = "FORMAT")]
    from: String,
    /// For `--from pages`: the pages are anonymous memory (`anon`) or one file (`file`).
    #[arg(long = "as", default_value = "anon", value_name = "anon|file")]
    pages_as: String,
    #[command(flatten)]
    out: OutputArgs,
    /// Input file (`-` for stdin); gzip and zstd inputs are decompressed.
    input: PathBuf,
    /// Output trace.
    output: PathBuf,
}

#[derive(Args, Debug)]
struct RecordArgs {
    /// Output trace.
    #[arg(short, long)]
    output: PathBuf,
    #[command(flatten)]
    out: OutputArgs,
    /// The program and its arguments.
    #[arg(last = true, required = true)]
    command: Vec<String>,
}

#[derive(Args, Debug)]
struct StatsArgs {
    /// The trace.
    file: PathBuf,
    /// Cache sizes in pages for the miss-ratio curve, comma-separated (default: powers of two up to the footprint).
    #[arg(long, value_delimiter = ',')]
    sizes: Vec<u64>,
    /// Also compute Belady's MIN at each size (one more pass per size, scratch files of 12 bytes per reference).
    #[arg(long)]
    opt: bool,
    /// Write the statistics as JSON to this file.
    #[arg(long, value_name = "OUT")]
    json: Option<PathBuf>,
}

#[derive(Args, Debug)]
struct SynthArgs {
    /// Number of records.
    #[arg(long)]
    records: u64,
    /// Pages of the address space.
    #[arg(long, default_value_t = 65536)]
    pages: u32,
    /// Pages of the hot set.
    #[arg(long, default_value_t = 4096)]
    hot_pages: u32,
    /// Percent of references to the hot set.
    #[arg(long, default_value_t = 90)]
    hot_percent: u32,
    /// Seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Write the records uncompressed (default: zstd).
    #[arg(long)]
    no_compress: bool,
    /// Output trace (`-` for stdout).
    output: PathBuf,
}

/// `reclaimsim trace ...`.
pub fn trace(args: TraceArgs) -> Result<()> {
    match args.command {
        TraceCommand::Convert(a) => convert_cmd(a),
        TraceCommand::Record(a) => record_cmd(a),
        TraceCommand::Stats(a) => stats_cmd(a),
        TraceCommand::Synth(a) => synth_cmd(a),
    }
}

/// A trace input error is bad input: exit code 2 with the located message.
fn bad_input(e: trace::TraceError) -> anyhow::Error {
    usage(e.to_string())
}

/// Opens an input for reading (`-` = stdin), decompressing gzip and zstd.
fn open_input(path: &Path) -> Result<(Box<dyn BufRead>, String)> {
    let label = path.display().to_string();
    let raw: Box<dyn Read> = if path == Path::new("-") {
        Box::new(std::io::stdin())
    } else {
        Box::new(File::open(path).map_err(|e| usage(format!("{label}: {e}")))?)
    };
    let mut r = BufReader::with_capacity(1 << 16, raw);
    let head = r.fill_buf().with_context(|| format!("reading {label}"))?;
    let input: Box<dyn BufRead> = if head.starts_with(&[0x1f, 0x8b]) {
        Box::new(BufReader::new(flate2::bufread::MultiGzDecoder::new(r)))
    } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        Box::new(BufReader::new(zstd::stream::read::Decoder::with_buffer(r)?))
    } else {
        Box::new(r)
    };
    Ok((input, label))
}

/// Opens a reclaimsim trace (`-` = stdin); bad input is a usage error.
fn open_trace(path: &Path) -> Result<TraceReader<Box<dyn BufRead + Send>>> {
    experiment::open_trace(path).map_err(|e| usage(e.0))
}

/// A scratch file, unlinked as soon as it is created: no name is left behind
/// however the process ends (SIGINT, SIGPIPE, a crash). It is read back
/// through `/proc/self/fd`, each opening with its own file position.
pub(crate) struct Scratch {
    file: File,
    label: String,
}

impl Scratch {
    /// A new empty scratch file next to `near` (or in the temp directory), and a handle to write it.
    pub(crate) fn new(near: Option<&Path>, tag: &str) -> Result<(Scratch, File)> {
        let (path, file) = Self::create(near, tag)?;
        std::fs::remove_file(&path).with_context(|| format!("unlinking scratch file {}", path.display()))?;
        let label = format!("{} (deleted)", path.display());
        let writer = file.try_clone()?;
        Ok((Scratch { file, label }, writer))
    }

    /// A new reader of the whole scratch file, from its start.
    fn open(&self) -> Result<File> {
        let fd = self.reopen_path();
        File::open(&fd).with_context(|| format!("reopening scratch file {} as {}", self.label, fd.display()))
    }

    /// The name that opens the file again, from its start (`/proc/self/fd/N`,
    /// valid while this handle lives).
    pub(crate) fn reopen_path(&self) -> PathBuf {
        use std::os::fd::AsRawFd;
        PathBuf::from(format!("/proc/self/fd/{}", self.file.as_raw_fd()))
    }

    fn create(near: Option<&Path>, tag: &str) -> Result<(PathBuf, File)> {
        let dir = near
            .and_then(Path::parent)
            .filter(|d| !d.as_os_str().is_empty())
            .map_or_else(std::env::temp_dir, Path::to_path_buf);
        for n in 0..1000 {
            let path = dir.join(format!(".reclaimsim-{}-{n}.{tag}", std::process::id()));
            match std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(&path) {
                Ok(f) => return Ok((path, f)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e).with_context(|| format!("creating scratch file {}", path.display())),
            }
        }
        bail!("no free scratch file name in {}", dir.display())
    }
}

/// Progress on stderr every 200 ms when it is a terminal.
struct Progress {
    on: bool,
    last: Instant,
}

impl Progress {
    fn new() -> Progress {
        Progress { on: std::io::stderr().is_terminal(), last: Instant::now() }
    }
    fn tick(&mut self, what: impl FnOnce() -> String) {
        if self.on && self.last.elapsed().as_millis() >= 200 {
            self.last = Instant::now();
            eprint!("\r  {:<70}", what());
        }
    }
    fn done(&self) {
        if self.on {
            eprint!("\r{:74}\r", "");
        }
    }
}

/// A producer of records: calls its argument once per record, in order.
type RecordSource<'a> = dyn FnMut(&mut dyn FnMut(&Record) -> Result<()>) -> Result<()> + 'a;

/// Writes `records` under `header` to `out` atomically (temporary file, then rename).
fn write_trace_atomic(out: &Path, mut header: Header, compress: bool, records: &mut RecordSource<'_>) -> Result<()> {
    header.compressed = compress;
    let label = out.display().to_string();
    let to_stdout = out == Path::new("-");
    let tmp = out.with_extension("rtrace.tmp");
    let sink: Box<dyn Write> = if to_stdout {
        Box::new(std::io::stdout().lock())
    } else {
        Box::new(File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?)
    };
    let written = TraceWriter::new(BufWriter::with_capacity(1 << 16, sink), header, DEFAULT_ZSTD_LEVEL, &label)
        .map_err(anyhow::Error::from)
        .and_then(|mut w| {
            records(&mut |r| Ok(w.write(r)?))?;
            Ok(w.finish()?)
        });
    if let Err(e) = written {
        if !to_stdout {
            let _ = std::fs::remove_file(&tmp);
        }
        return Err(e);
    }
    if !to_stdout {
        std::fs::rename(&tmp, out).with_context(|| format!("renaming {} to {}", tmp.display(), out.display()))?;
    }
    Ok(())
}

/// Runs a converter with its records spooled to a scratch file, then writes
/// the trace (header first, now that the declarations are known).
fn convert_spooled(
    format: Format,
    input: &mut dyn BufRead,
    label: &str,
    opts: &Options,
    out: &Path,
    compress: bool,
    progress: &mut Progress,
) -> Result<convert::Outline> {
    let codec = RecordCodec { timestamps: format.timestamps() };
    let (spool, file) = Scratch::new(Some(out), "spool")?;
    let mut w = BufWriter::with_capacity(1 << 16, file);
    let mut buf = [0u8; 20];
    let mut n = 0u64;
    let outline = convert::convert(format, input, label, opts, &mut |r| {
        codec.encode(r, &mut buf[..codec.size()]);
        n += 1;
        progress.tick(|| format!("{n} records"));
        w.write_all(&buf[..codec.size()]).map_err(|e| trace::TraceError::io(&spool.label, trace::Location::Nowhere, &e))
    })
    .map_err(bad_input)?;
    w.flush()?;
    let mut spooled = BufReader::with_capacity(1 << 16, spool.open()?);
    write_trace_atomic(out, outline.header.clone(), compress, &mut |put| {
        for _ in 0..n {
            spooled.read_exact(&mut buf[..codec.size()])?;
            match codec.decode(&buf[..codec.size()]) {
                Ok(Item::Record(r)) => put(&r)?,
                other => bail!("scratch spool {} is corrupt: {other:?}", spool.label),
            }
        }
        Ok(())
    })?;
    progress.done();
    Ok(outline)
}

fn print_outline(o: &convert::Outline, records: &str, out: &Path) {
    let h = &o.header;
    println!(
        "wrote {} ({records}; {} address spaces, {} files, {} pages declared)",
        out.display(),
        h.spaces.len(),
        h.files.len(),
        h.total_pages()
    );
    for (why, n) in o.skipped.iter().filter(|(_, n)| *n > 0) {
        println!("  skipped {n} {why}");
    }
}

fn convert_cmd(a: ConvertArgs) -> Result<()> {
    let format = Format::from_name(&a.from).ok_or_else(|| {
        usage(format!(
            "unknown format `{}`; valid formats: {}",
            a.from,
            FORMATS.iter().map(|f| f.1).collect::<Vec<_>>().join(", ")
        ))
    })?;
    let pages_as = match a.pages_as.as_str() {
        "anon" => PagesAs::Anon,
        "file" => PagesAs::File,
        other => return Err(usage(format!("--as `{other}`: expected anon or file"))),
    };
    check_page_size(a.out.page_size)?;
    if a.output != Path::new("-") {
        runner::check_output(&a.output, "OUTPUT")?;
    }
    let opts = Options { page_size: a.out.page_size, pages_as, skip_foreign_lines: false };
    let (mut input, label) = open_input(&a.input)?;
    let outline =
        convert_spooled(format, &mut input, &label, &opts, &a.output, !a.out.no_compress, &mut Progress::new())?;
    print_outline(&outline, &format!("from {}", a.from), &a.output);
    Ok(())
}

fn check_page_size(ps: u32) -> Result<()> {
    trace::format::check_page_size(ps).map_err(|m| usage(format!("--page-size: {m}")))
}

fn record_cmd(a: RecordArgs) -> Result<()> {
    check_page_size(a.out.page_size)?;
    let mut child = Command::new("valgrind")
        .args(["--tool=lackey", "--trace-mem=yes", "--log-fd=2"])
        .args(&a.command)
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| usage(format!("cannot run valgrind ({e}); install valgrind to record traces")))?;
    let mut input = BufReader::with_capacity(1 << 16, child.stderr.take().expect("stderr is piped"));
    let opts = Options { page_size: a.out.page_size, pages_as: PagesAs::Anon, skip_foreign_lines: true };
    let mut progress = Progress::new();
    let label = format!("valgrind lackey output of `{}`", a.command.join(" "));
    let result =
        convert_spooled(Format::Lackey, &mut input, &label, &opts, &a.output, !a.out.no_compress, &mut progress);
    let status = child.wait()?;
    let outline = result?;
    print_outline(
        &outline,
        &format!(
            "lackey trace of `{}`, exit status {}",
            a.command.join(" "),
            status.code().map_or("signal".into(), |c| c.to_string())
        ),
        &a.output,
    );
    Ok(())
}

fn synth_cmd(a: SynthArgs) -> Result<()> {
    if a.pages == 0 || a.hot_pages > a.pages || a.hot_percent > 100 {
        return Err(usage("synth: need --pages >= 1, --hot-pages <= --pages and --hot-percent <= 100"));
    }
    if u64::from(a.pages) > trace::format::MAX_TOTAL_PAGES {
        return Err(usage(format!("synth: --pages {}: at most {}", a.pages, trace::format::MAX_TOTAL_PAGES)));
    }
    if a.output != Path::new("-") {
        runner::check_output(&a.output, "OUTPUT")?;
    }
    let s =
        Synth { records: a.records, pages: a.pages, hot_pages: a.hot_pages, hot_percent: a.hot_percent, seed: a.seed };
    write_trace_atomic(&a.output, s.header(), !a.no_compress, &mut |put| {
        for r in s.iter() {
            put(&r)?;
        }
        Ok(())
    })?;
    Ok(())
}

/// Belady's MIN over a spooled page-id sequence of `n` references, at each
/// capacity: one backward pass, then one forward pass per capacity, up to
/// `jobs` of them at a time.
pub(crate) fn belady_from_spool(
    seq: &Scratch,
    n: u64,
    pages: u32,
    capacities: &[u64],
    jobs: usize,
) -> Result<Vec<u64>> {
    let (index, f) = Scratch::new(None, "nextuse")?;
    let mut w = BufWriter::with_capacity(1 << 16, f);
    belady::next_use_index(&mut seq.open()?, n, pages, &mut w)?;
    w.flush()?;
    drop(w);
    experiment::mrc::parallel(capacities.len(), jobs, |i| {
        Ok(belady::min_faults(&mut seq.open()?, &mut index.open()?, n, pages, capacities[i].max(1))?)
    })
    .into_iter()
    .collect()
}

fn stats_cmd(a: StatsArgs) -> Result<()> {
    if a.sizes.contains(&0) {
        return Err(usage("--sizes: a cache holds at least 1 page (0 given)"));
    }
    if let Some(path) = &a.json {
        runner::check_output(path, "--json")?;
    }
    let mut reader = open_trace(&a.file)?;
    let h = reader.header().clone();
    let mut stats = Stats::new(&h);
    let ids = PageIds::new(&h);
    let spool = if a.opt { Some(Scratch::new(None, "pageids")?) } else { None };
    let mut tap = spool.as_ref().map(|(_, f)| BufWriter::with_capacity(1 << 16, f));
    let mut progress = Progress::new();
    while let Some(r) = reader.next_record().map_err(bad_input)? {
        stats.add(&r);
        if let (Some(t), Some((first, n, _))) = (&mut tap, ids.of(&r.event)) {
            for p in first..first + n {
                t.write_all(&p.to_le_bytes())?;
            }
        }
        progress.tick(|| format!("{} records", reader.records_read()));
    }
    progress.done();
    if let Some(t) = &mut tap {
        t.flush()?;
    }
    drop(tap);
    let sizes = if a.sizes.is_empty() { stats.default_sizes() } else { a.sizes.clone() };
    let lru = stats.stack.lru_misses(&sizes);
    let opt = match &spool {
        Some((s, _)) => Some(belady_from_spool(s, stats.refs, ids.total(), &sizes, 1)?),
        None => None,
    };
    let refs = stats.refs.max(1) as f64;
    println!("trace              {}", a.file.display());
    println!(
        "page size          {} bytes; {} address spaces, {} files, {} pages declared; timestamps {}; zstd {}",
        h.page_size,
        h.spaces.len(),
        h.files.len(),
        h.total_pages(),
        h.timestamps,
        h.compressed
    );
    let kinds: Vec<String> =
        RECORD_KINDS.iter().zip(stats.records).filter(|(_, n)| *n > 0).map(|(k, n)| format!("{k} {n}")).collect();
    println!("records            {} ({})", reader.records_read(), kinds.join(", "));
    println!(
        "page references    {} ({:.1}% reads, {:.1}% writes)",
        stats.refs,
        100.0 * (stats.refs - stats.writes) as f64 / refs,
        100.0 * stats.writes as f64 / refs
    );
    println!(
        "distinct pages     {} (footprint {:.1} MiB)",
        stats.distinct_pages(),
        stats.footprint_bytes() as f64 / (1 << 20) as f64
    );
    if let (true, Some((t0, t1))) = (h.timestamps, stats.time_span_ns) {
        println!("time span          {:.3} s", (t1 - t0) as f64 / 1e9);
    }
    println!("reuse distance     (LRU stack distance in pages: references)");
    for (lo, hi, n) in stats.reuse_histogram() {
        println!("  {lo:>10}..{hi:<10} {n:>12} {:>6.2}%", 100.0 * n as f64 / refs);
    }
    println!(
        "  {:>22} {:>12} {:>6.2}%",
        "first touch",
        stats.distinct_pages(),
        100.0 * stats.distinct_pages() as f64 / refs
    );
    println!("miss-ratio curve   (misses of a memory of SIZE pages, first touches included)");
    println!(
        "  {:>12} {:>14} {:>8}{}",
        "size",
        "lru_misses",
        "ratio",
        if opt.is_some() { format!(" {:>14} {:>8}", "opt_misses", "ratio") } else { String::new() }
    );
    for (i, (c, m)) in sizes.iter().zip(&lru).enumerate() {
        let o = opt.as_ref().map_or(String::new(), |o| format!(" {:>14} {:>8.4}", o[i], o[i] as f64 / refs));
        println!("  {c:>12} {m:>14} {:>8.4}{o}", *m as f64 / refs);
    }
    if let Some(path) = &a.json {
        let mut v = json!({
            "trace": a.file.display().to_string(),
            "page_size": h.page_size,
            "records": reader.records_read(),
            "records_by_kind": RECORD_KINDS.iter().zip(stats.records).map(|(k, n)| (k.to_string(), json!(n))).collect::<serde_json::Map<_, _>>(),
            "refs": stats.refs,
            "writes": stats.writes,
            "distinct_pages": stats.distinct_pages(),
            "footprint_bytes": stats.footprint_bytes(),
            "reuse_histogram": stats.reuse_histogram().iter().map(|(lo, hi, n)| json!({"lo": lo, "hi": hi, "refs": n})).collect::<Vec<_>>(),
            "mrc": sizes.iter().zip(&lru).map(|(c, m)| json!({"pages": c, "lru_misses": m})).collect::<Vec<_>>(),
        });
        if let Some(o) = &opt {
            for (i, e) in v["mrc"].as_array_mut().expect("array").iter_mut().enumerate() {
                e["opt_misses"] = json!(o[i]);
            }
        }
        runner::write_json_atomic(path, &v)?;
    }
    Ok(())
}

/// `reclaimsim run --trace FILE [--opt]`: the trace as one more thread; with
/// `--opt`, then Belady's MIN over the references it issued, with the
/// machine's memory as capacity.
///
/// MIN is optional rather than computed on another core during the run: its
/// backward pass needs the whole reference sequence, so it can start only
/// when the run has issued the last reference (or after a second decode of
/// the trace on a core that this 2-core machine kind rarely has free), and
/// the spool of 12 bytes per reference is most of its cost either way.
pub fn run_trace(args: &RunArgs) -> Result<()> {
    let path = args.trace.as_ref().expect("run_trace needs --trace");
    let mut p = runner::prepare_request(&runner::request(args)?)?;
    let (spool, tap): (Option<Scratch>, Option<Box<dyn Write>>) = if args.opt {
        let (s, f) = Scratch::new(None, "pageids")?;
        (Some(s), Some(Box::new(BufWriter::with_capacity(1 << 16, f))))
    } else {
        (None, None)
    };
    let trace_run = p.add_trace(path, tap).map_err(|e| usage(e.0))?;
    let ids = PageIds::new(trace_run.header());
    let info = p.info.clone();
    let events = crate::events::EventFile::install(args, &mut p.builder)?;
    let (report, wall) = runner::execute(p, args.paranoid)?;
    if let Some(events) = events {
        events.finish()?;
    }
    let status = trace_run.outcome().map_err(|e| usage(e.0))?;
    let faults = report.demand_faults();
    // Capacity: the run's memory limit in pages: `memcg.limit` when set, else `memory`.
    let config = &info.config;
    let limit = if config.memcg.limit_bytes > 0 {
        config.memcg.limit_bytes.min(config.memory_bytes)
    } else {
        config.memory_bytes
    };
    let capacity = limit / mm::PAGE_SIZE;
    let opt = match &spool {
        Some(s) => Some(belady_from_spool(s, status.refs, ids.total(), &[capacity], 1)?[0]),
        None => None,
    };
    crate::output::print_report(&info, &report, wall, !args.quiet, Some(&path.display().to_string()));
    println!(
        "# trace              {} references, {faults} faults{}",
        status.refs,
        if status.finished { "" } else { " (stopped by time_limit before its end)" }
    );
    if let Some(opt) = opt {
        println!(
            "# faults / optimum   {faults} / {opt} = {:.3} (Belady MIN with {capacity} pages, first touches included)",
            faults as f64 / opt.max(1) as f64
        );
    }
    if let Some(out) = &args.json {
        let mut v: Value = info.result_json(&report, wall);
        v["trace"] = trace_run.json(&status);
        v["faults"] = json!(faults);
        if let Some(opt) = opt {
            v["opt_faults"] = json!(opt);
            v["opt_capacity_pages"] = json!(capacity);
            v["faults_over_opt"] = json!(faults as f64 / opt.max(1) as f64);
        }
        runner::write_json_atomic(out, &v)?;
    }
    Ok(())
}
