//! A trace replayed as one more thread of a run (`run --trace FILE`, a sweep's
//! `traces`, `reclaimsim.run(trace=...)`): opening it, installing its
//! address spaces and files, and its part of the result document.

use crate::replay::{self, Replay, ReplayStatus};
use crate::request::{InputError, Prepared};
use serde_json::{json, Value};
use std::cell::RefCell;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::rc::Rc;
use trace::{Header, TraceReader};

/// Opens a reclaimsim trace (`-` = standard input); the error names the file
/// and, for a bad header, the byte offset. A compressed trace is decoded on
/// another core, ahead of the replay.
pub fn open_trace(path: &Path) -> Result<TraceReader<Box<dyn BufRead + Send>>, InputError> {
    let (input, label) = open_input(path)?;
    TraceReader::open_prefetched(input, &label).map_err(|e| InputError(e.to_string()))
}

/// The header of a reclaimsim trace (`-` = standard input), read and checked
/// without starting the body's decoder or its read-ahead thread: for callers
/// that need only the declarations. Errors as [`open_trace`]'s.
pub fn trace_header(path: &Path) -> Result<Header, InputError> {
    let (input, label) = open_input(path)?;
    trace::reader::read_header_only(input, &label).map_err(|e| InputError(e.to_string()))
}

/// The file (or standard input) and its name for errors.
fn open_input(path: &Path) -> Result<(Box<dyn BufRead + Send>, String), InputError> {
    let label = path.display().to_string();
    let input: Box<dyn BufRead + Send> = if path == Path::new("-") {
        Box::new(BufReader::with_capacity(1 << 16, std::io::stdin()))
    } else {
        Box::new(BufReader::with_capacity(1 << 16, File::open(path).map_err(|e| InputError(format!("{label}: {e}")))?))
    };
    Ok((input, label))
}

/// A trace being replayed by a prepared run; read it after the run.
pub struct TraceRun {
    file: String,
    header: Header,
    status: Rc<RefCell<ReplayStatus>>,
}

/// What a finished replay did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceOutcome {
    /// Page references issued.
    pub refs: u64,
    /// The trace was read to its end (not stopped by `time_limit`).
    pub finished: bool,
}

impl Prepared {
    /// Adds the trace at `path` as one more thread named `trace`; with `tap`,
    /// each reference's global page id is written to it (Belady's input).
    pub fn add_trace(&mut self, path: &Path, tap: Option<Box<dyn Write>>) -> Result<TraceRun, InputError> {
        self.add_trace_from(open_trace(path)?, &path.display().to_string(), tap)
    }

    /// [`Prepared::add_trace`] for a trace already opened (`file` names it in
    /// errors and in the result document), e.g. one held in memory.
    pub fn add_trace_from<R: BufRead + 'static>(
        &mut self,
        reader: TraceReader<R>,
        file: &str,
        tap: Option<Box<dyn Write>>,
    ) -> Result<TraceRun, InputError> {
        let file = file.to_string();
        let declared = reader.header().total_pages();
        let what = format!("{file} (its header declares {declared} pages)");
        crate::limits::check_fits(&self.info.config, declared, &what, crate::limits::host_memory())?;
        let installed =
            replay::install(&mut self.builder, reader.header()).map_err(|m| InputError(format!("{file}: {m}")))?;
        let header = reader.header().clone();
        let (program, status) = Replay::new(reader, installed, tap);
        self.builder.add_thread("trace", Box::new(program));
        Ok(TraceRun { file, header, status })
    }
}

impl TraceRun {
    /// The trace's header: its address spaces and files.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The outcome, or the trace's first bad record (file and byte offset).
    pub fn outcome(&self) -> Result<TraceOutcome, InputError> {
        let mut s = self.status.borrow_mut();
        if let Some(e) = s.error.take() {
            return Err(InputError(e.to_string()));
        }
        Ok(TraceOutcome { refs: s.refs, finished: s.finished })
    }

    /// The result document's `trace` section.
    pub fn json(&self, o: &TraceOutcome) -> Value {
        json!({ "file": self.file, "refs": o.refs, "finished": o.finished })
    }
}
