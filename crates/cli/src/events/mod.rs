//! `run --events FILE`: the run's tracepoints as ftrace text, streamed to
//! `FILE.tmp` through a buffered writer and renamed to `FILE` when the run
//! ends; filtered by event name and time (`--events-filter`) and capped in
//! size (`--events-max`). The layout of each line is in [`format`]; reading
//! the lines back (for `explain` and `report`) in [`parse`].

pub mod format;
pub mod parse;

use crate::runner::{usage, RunArgs};
use anyhow::{Context, Result};
use clap::Args;
use engine::SimBuilder;
use mm::tracepoint::{Task, TraceSink, Tracepoint};
use mm::Mm;
use std::cell::RefCell;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::rc::Rc;

/// The `--events*` options of `run`.
#[derive(Args, Debug, Clone)]
pub struct EventArgs {
    /// Record the kernel's reclaim tracepoints (and reclaimsim_ events) to FILE
    /// in ftrace's text layout (see docs/events.md).
    #[arg(long = "events", value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Record only some events: comma-separated event names (`NAME*` matches a
    /// prefix) and at most one time range `t=FROM..TO` in seconds (either end may be left out).
    #[arg(long = "events-filter", value_name = "EXPR", requires = "file")]
    pub filter: Option<String>,
    /// Stop recording, with a note in the file, once it reaches SIZE (e.g. 200M).
    #[arg(long = "events-max", value_name = "SIZE", default_value = "1G", requires = "file")]
    pub max: String,
    /// Event layouts: those of the profile's kernel (`profile`), of the
    /// kernel version given (`v5.9`; `v3.2` for mmtests'
    /// trace-vmscan-postprocess.pl), or today's (`v6`).
    #[arg(long = "events-format", value_name = "profile|VERSION", default_value = "profile", requires = "file")]
    pub format: String,
}

/// Which records to keep.
#[derive(Clone, Debug, PartialEq)]
pub struct Filter {
    /// Name patterns (a trailing `*` matches a prefix); empty keeps every name.
    names: Vec<String>,
    /// Time range, ns: from (inclusive), to (exclusive).
    from_ns: u64,
    to_ns: u64,
}

impl Filter {
    /// Keeps everything.
    pub fn all() -> Filter {
        Filter { names: Vec::new(), from_ns: 0, to_ns: u64::MAX }
    }

    /// Parses an `--events-filter` expression; the error names the bad term.
    pub fn parse(expr: &str) -> Result<Filter, String> {
        let mut f = Filter::all();
        let mut ranged = false;
        for term in expr.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            if let Some(range) = term.strip_prefix("t=") {
                if ranged {
                    return Err(format!("`{term}`: only one time range may be given"));
                }
                ranged = true;
                let (from, to) = range
                    .split_once("..")
                    .ok_or_else(|| format!("`{term}`: expected t=FROM..TO in seconds (e.g. t=1.5..3)"))?;
                let secs = |s: &str, default: u64| -> Result<u64, String> {
                    if s.is_empty() {
                        return Ok(default);
                    }
                    match s.parse::<f64>() {
                        Ok(v) if v.is_finite() && v >= 0.0 => Ok((v * 1e9).round() as u64),
                        _ => Err(format!("`{term}`: `{s}` is not a number of seconds")),
                    }
                };
                (f.from_ns, f.to_ns) = (secs(from, 0)?, secs(to, u64::MAX)?);
                if f.from_ns >= f.to_ns {
                    return Err(format!("`{term}`: the range is empty (FROM must be below TO)"));
                }
                continue;
            }
            let known = match term.strip_suffix('*') {
                Some(prefix) => format::EVENT_NAMES.iter().any(|n| n.starts_with(prefix)),
                None => format::EVENT_NAMES.contains(&term),
            };
            if !known {
                return Err(format!(
                    "`{term}` names no event; expected t=FROM..TO or one of {} (a trailing * matches a prefix)",
                    format::EVENT_NAMES.join(", ")
                ));
            }
            f.names.push(term.to_string());
        }
        Ok(f)
    }

    fn keeps(&self, at_ns: u64, name: &str) -> bool {
        at_ns >= self.from_ns
            && at_ns < self.to_ns
            && (self.names.is_empty()
                || self.names.iter().any(|p| p.strip_suffix('*').map_or(p == name, |pre| name.starts_with(pre))))
    }
}

/// The recording state the sink and the front end share.
struct Recorder {
    names: Vec<String>,
    filter: Filter,
    out: BufWriter<File>,
    line: String,
    written: u64,
    max: u64,
    max_text: String,
    layout: format::Layout,
    stopped: bool,
    lines: u64,
    error: Option<std::io::Error>,
}

impl Recorder {
    fn write(&mut self, text: &str) {
        if self.error.is_none() {
            if let Err(e) = self.out.write_all(text.as_bytes()) {
                self.error = Some(e);
            }
        }
        self.written += text.len() as u64;
    }
}

struct Sink(Rc<RefCell<Recorder>>);

impl TraceSink for Sink {
    fn record(&mut self, at_ns: u64, task: Task, mm: &Mm, tp: &Tracepoint) {
        let mut r = self.0.borrow_mut();
        if r.stopped || !r.filter.keeps(at_ns, format::event_name(tp, r.layout)) {
            return;
        }
        let mut line = std::mem::take(&mut r.line);
        line.clear();
        format::write_line(&mut line, at_ns, task, &r.names, mm, tp, r.layout);
        if r.written + line.len() as u64 > r.max {
            r.stopped = true;
            let note = format!(
                "# reclaimsim: --events-max {} reached at {}.{:06} s; recording stopped\n",
                r.max_text,
                at_ns / 1_000_000_000,
                at_ns % 1_000_000_000 / 1000
            );
            r.write(&note);
        } else {
            r.write(&line);
            r.lines += 1;
        }
        r.line = line;
    }
}

/// An events file being recorded; [`EventFile::finish`] puts it in place.
/// Dropped unfinished (the run failed), it removes its temporary file.
pub struct EventFile {
    rec: Rc<RefCell<Recorder>>,
    path: PathBuf,
    tmp: PathBuf,
    done: bool,
}

impl EventFile {
    /// Checks `run`'s `--events*` options, creates `FILE.tmp` with the
    /// header naming the run, and installs the sink in `builder`.
    pub fn install(run: &RunArgs, builder: &mut SimBuilder) -> Result<Option<EventFile>> {
        let args = &run.events;
        let Some(path) = &args.file else { return Ok(None) };
        let mut inputs = run.workloads.clone();
        inputs.extend(run.trace.iter().map(|t| format!("trace {}", t.display())));
        let title = format!("{} on profile {}, seed {}", inputs.join(" + "), run.profile, run.seed);
        crate::runner::check_output(path, "--events")?;
        let filter = match &args.filter {
            Some(expr) => Filter::parse(expr).map_err(|e| usage(format!("--events-filter: {e}")))?,
            None => Filter::all(),
        };
        let layout = match args.format.as_str() {
            "profile" => engine::profile::find(&run.profile).map_or(format::Layout::V6, |p| format::Layout(p.kernel)),
            "v6" => format::Layout::V6,
            v => format::Layout(knobs::Version::parse(v).ok_or_else(|| {
                usage(format!("--events-format {v}: expected `profile` or a kernel version such as v5.9"))
            })?),
        };
        let max = knobs::parse_size(&args.max)
            .map_err(|e| usage(format!("--events-max {}: {e} (expected a size such as 200M)", args.max)))?;
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        let file = File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
        let mut rec = Recorder {
            names: builder.thread_names(),
            filter,
            out: BufWriter::with_capacity(1 << 16, file),
            line: String::new(),
            written: 0,
            max,
            max_text: args.max.clone(),
            layout,
            stopped: false,
            lines: 0,
            error: None,
        };
        rec.write(&header(&title));
        let rec = Rc::new(RefCell::new(rec));
        builder.set_tracer(Box::new(Sink(rec.clone())));
        Ok(Some(EventFile { rec, path: path.clone(), tmp, done: false }))
    }

    /// Flushes the file, renames it into place and says so on stderr.
    pub fn finish(mut self) -> Result<()> {
        self.done = true;
        let mut r = self.rec.borrow_mut();
        let flushed = match r.error.take() {
            Some(e) => Err(e),
            None => r.out.flush(),
        };
        let result = flushed.with_context(|| format!("writing {}", self.tmp.display())).and_then(|()| {
            std::fs::rename(&self.tmp, &self.path)
                .with_context(|| format!("renaming {} to {}", self.tmp.display(), self.path.display()))
        });
        if result.is_err() {
            let _ = std::fs::remove_file(&self.tmp);
        }
        result?;
        let stop = if r.stopped { format!(" (stopped at --events-max {})", r.max_text) } else { String::new() };
        eprintln!("reclaimsim: {} events ({} bytes) written to {}{stop}", r.lines, r.written, self.path.display());
        Ok(())
    }
}

impl Drop for EventFile {
    fn drop(&mut self) {
        if !self.done {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// ftrace's `trace` file header, with the run named.
fn header(title: &str) -> String {
    format!(
        "# tracer: nop\n#\n# reclaimsim {}: {title}\n# events: docs/events.md\n#\n\
         #                TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n\
         #                   | |         |   |||||     |         |\n",
        experiment::VERSION
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_terms_and_errors() {
        let f = Filter::parse("mm_vmscan_kswapd_*, reclaimsim_refault, t=1.5..2").unwrap();
        assert!(f.keeps(1_500_000_000, "mm_vmscan_kswapd_wake"));
        assert!(f.keeps(1_999_999_999, "reclaimsim_refault"));
        assert!(!f.keeps(2_000_000_000, "reclaimsim_refault"));
        assert!(!f.keeps(1_600_000_000, "mm_lru_insertion"));
        assert!(!f.keeps(1_000_000_000, "mm_vmscan_kswapd_sleep"));
        let open = Filter::parse("t=3..").unwrap();
        assert!(open.keeps(u64::MAX - 1, "mm_lru_activate") && !open.keeps(2_999_999_999, "mm_lru_activate"));
        assert!(Filter::parse("mm_vmscan_bogus").unwrap_err().contains("`mm_vmscan_bogus` names no event"));
        assert!(Filter::parse("t=2..1").unwrap_err().contains("range is empty"));
        assert!(Filter::parse("t=a..1").unwrap_err().contains("`a` is not a number"));
        assert!(Filter::parse("t=1..2,t=3..4").unwrap_err().contains("only one time range"));
    }
}
