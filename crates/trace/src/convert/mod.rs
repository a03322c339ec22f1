//! Converters from other trace formats to records of ours.
//!
//! A converter reads its input once, hands each record to a sink as soon as it
//! is parsed, and returns the declarations (address spaces and files with their
//! sizes) at the end, when they are known. Callers spool the records and write
//! the header in front of them ([`crate::writer::TraceWriter`]). Memory is
//! bounded by the number of distinct pages, objects or files, not by the input
//! length. Errors name the input's line (text) or byte offset (binary).

mod lackey;
mod layout;
mod libcachesim;
mod lines;
mod pages;
mod strace;

use crate::error::TraceError;
use crate::format::{Decl, Header, Record};
use std::io::BufRead;

/// An input format `trace convert --from` accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// valgrind `--tool=lackey --trace-mem=yes` output: instruction and data references.
    Lackey,
    /// libCacheSim's oracleGeneral binary block trace.
    OracleGeneral,
    /// libCacheSim-style CSV block trace: `time,obj_id[,size,...]`.
    Csv,
    /// libCacheSim-style text block trace: one object id per line.
    Txt,
    /// One decimal page number per line, optionally followed by ` W` (LIRS traces).
    Pages,
    /// One hex byte address per line (optionally `l`/`s` before, ` W` after).
    Addresses,
    /// strace output of read/pread/write/pwrite/mmap/munmap with open/close/lseek.
    Strace,
}

/// Every format with its name and a one-line description.
pub const FORMATS: &[(Format, &str, &str)] = &[
    (Format::Lackey, "lackey", "valgrind --tool=lackey --trace-mem=yes output (I/L/S/M lines) -> one address space"),
    (
        Format::OracleGeneral,
        "oracle-general",
        "libCacheSim oracleGeneral binary (24-byte records) -> reads of one file",
    ),
    (Format::Csv, "csv", "CSV block trace time,obj_id[,size,...] (libCacheSim column order) -> reads of one file"),
    (Format::Txt, "txt", "one object id per line (libCacheSim txt) -> reads of one file"),
    (Format::Pages, "pages", "one decimal page number per line, optional ` W`; LIRS traces (--as anon|file)"),
    (
        Format::Addresses,
        "addresses",
        "one hex byte address per line (optional l/s before, W after) -> one address space",
    ),
    (
        Format::Strace,
        "strace",
        "strace log of open/read/pread64/write/pwrite64/lseek/mmap/munmap/close -> file page reads/writes",
    ),
];

impl Format {
    /// The format named `name` (see [`FORMATS`]).
    pub fn from_name(name: &str) -> Option<Format> {
        FORMATS.iter().find(|(_, n, _)| *n == name).map(|&(f, _, _)| f)
    }

    /// Whether records of this format carry timestamps.
    pub fn timestamps(self) -> bool {
        matches!(self, Format::OracleGeneral | Format::Csv)
    }
}

/// What `--from pages` page numbers refer to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PagesAs {
    /// Pages of one process's anonymous memory.
    Anon,
    /// Pages of one file, read through a file descriptor.
    File,
}

/// Conversion options.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Page size of the output (addresses and byte offsets are divided by it).
    pub page_size: u32,
    /// For `pages`: anonymous memory or a file.
    pub pages_as: PagesAs,
    /// For `lackey`: skip lines that are not trace lines (the traced program's
    /// own stderr) instead of failing.
    pub skip_foreign_lines: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options { page_size: mm::PAGE_SIZE as u32, pages_as: PagesAs::Anon, skip_foreign_lines: false }
    }
}

/// What a conversion found besides its records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outline {
    /// The header of the converted trace (uncompressed; set `compressed` to write it so).
    pub header: Header,
    /// Input lines or calls skipped, with why.
    pub skipped: Vec<(String, u64)>,
}

/// Receives converted records in order.
pub type Sink<'a> = &'a mut dyn FnMut(&Record) -> Result<(), TraceError>;

/// Converts `input` (named `source` in errors) from `format`, handing records to `sink`.
pub fn convert(
    format: Format,
    input: &mut dyn BufRead,
    source: &str,
    opts: &Options,
    sink: Sink,
) -> Result<Outline, TraceError> {
    let (spaces, files, skipped) = match format {
        Format::Lackey => lackey::convert(input, source, opts, sink)?,
        Format::OracleGeneral => libcachesim::convert_oracle_general(input, source, opts, sink)?,
        Format::Csv => libcachesim::convert_csv(input, source, opts, sink)?,
        Format::Txt => libcachesim::convert_txt(input, source, opts, sink)?,
        Format::Pages => pages::convert_pages(input, source, opts, sink)?,
        Format::Addresses => pages::convert_addresses(input, source, opts, sink)?,
        Format::Strace => strace::convert(input, source, opts, sink)?,
    };
    let header =
        Header { page_size: opts.page_size, timestamps: format.timestamps(), compressed: false, spaces, files };
    Ok(Outline { header, skipped })
}

/// Declarations and skip counts a converter returns.
type Converted = (Vec<Decl>, Vec<Decl>, Vec<(String, u64)>);
