//! libCacheSim block traces: oracleGeneral binary, CSV and txt.
//!
//! Every object becomes a run of pages of one file, laid out in first-seen
//! order (an object of S bytes takes ceil(S / page size) pages, at least one);
//! each request is a read of the object's pages.
//!
//! oracleGeneral: 24-byte little-endian records `clock_time u32 (s) |
//! obj_id u64 | obj_size u32 | next_access_vtime i64` (the last is ignored: we
//! compute next uses ourselves). CSV: `time,obj_id[,obj_size[,...]]` (time in
//! seconds, libCacheSim's column order 1,2,3; a first line whose obj_id is not
//! a number is a header). txt: one object id per line, one page each.

use super::layout::ObjectPages;
use super::lines::Lines;
use super::{lackey::clip, Converted, Options, Sink};
use crate::error::{ErrorKind, Location, TraceError};
use crate::format::{Decl, Event, Record};
use crate::reader::read_full;
use std::io::BufRead;

const ORACLE_RECORD_BYTES: usize = 24;

fn emit(
    objects: &mut ObjectPages,
    id: u64,
    bytes: u64,
    page_size: u32,
    time_s: u64,
    sink: &mut Sink,
) -> Result<(), String> {
    let (page, pages) = objects.place(id, bytes.div_ceil(page_size as u64))?;
    let time_ns = time_s.checked_mul(1_000_000_000).ok_or_else(|| format!("time {time_s} s overflows nanoseconds"))?;
    sink(&Record { event: Event::FileRead { file: 0, page, pages }, time_ns }).map_err(|e| e.to_string())
}

fn file(objects: ObjectPages, skipped: Vec<(String, u64)>) -> Converted {
    (Vec::new(), vec![Decl { name: "objects".into(), pages: objects.pages() }], skipped)
}

pub(super) fn convert_oracle_general(
    input: &mut dyn BufRead,
    source: &str,
    opts: &Options,
    mut sink: Sink,
) -> Result<Converted, TraceError> {
    let mut objects = ObjectPages::default();
    let mut b = [0u8; ORACLE_RECORD_BYTES];
    let mut offset = 0u64;
    loop {
        let at = Location::Byte(offset);
        let got = read_full(input, &mut b).map_err(|e| TraceError::io(source, at, &e))?;
        if got == 0 {
            break;
        }
        if got < ORACLE_RECORD_BYTES {
            return Err(TraceError::new(
                source,
                at,
                ErrorKind::Malformed,
                format!("truncated oracleGeneral record {}: {got} of {ORACLE_RECORD_BYTES} bytes", offset / 24),
            ));
        }
        let time = u32::from_le_bytes(b[0..4].try_into().expect("4 bytes")) as u64;
        let id = u64::from_le_bytes(b[4..12].try_into().expect("8 bytes"));
        let size = u32::from_le_bytes(b[12..16].try_into().expect("4 bytes")) as u64;
        emit(&mut objects, id, size, opts.page_size, time, &mut sink)
            .map_err(|m| TraceError::new(source, at, ErrorKind::Limit, m))?;
        offset += ORACLE_RECORD_BYTES as u64;
    }
    Ok(file(objects, Vec::new()))
}

pub(super) fn convert_csv(
    input: &mut dyn BufRead,
    source: &str,
    opts: &Options,
    mut sink: Sink,
) -> Result<Converted, TraceError> {
    let mut lines = Lines::new(input, source);
    let mut objects = ObjectPages::default();
    let mut header = 0;
    while let Some((at, line)) = lines.next_line()? {
        if line.trim().is_empty() {
            continue;
        }
        let mut cols = line.split(',').map(str::trim);
        let (time, id, size) = (cols.next().unwrap_or(""), cols.next().unwrap_or(""), cols.next());
        let Ok(id) = id.parse::<u64>() else {
            if at.line == 1 {
                header = 1;
                continue;
            }
            return Err(
                at.error(ErrorKind::Malformed, format!("column 2 (obj_id) is not an unsigned integer: {}", clip(line)))
            );
        };
        let time: u64 = time.parse().map_err(|_| {
            at.error(ErrorKind::Malformed, format!("column 1 (time) is not an unsigned integer: {}", clip(line)))
        })?;
        let size: u64 = match size {
            None | Some("") => opts.page_size as u64,
            Some(s) => s.parse().map_err(|_| {
                at.error(
                    ErrorKind::Malformed,
                    format!("column 3 (obj_size) is not an unsigned integer: {}", clip(line)),
                )
            })?,
        };
        emit(&mut objects, id, size, opts.page_size, time, &mut sink).map_err(|m| at.error(ErrorKind::Limit, m))?;
    }
    Ok(file(objects, vec![("header lines".into(), header)]))
}

pub(super) fn convert_txt(
    input: &mut dyn BufRead,
    source: &str,
    opts: &Options,
    mut sink: Sink,
) -> Result<Converted, TraceError> {
    let mut lines = Lines::new(input, source);
    let mut objects = ObjectPages::default();
    while let Some((at, line)) = lines.next_line()? {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        let id: u64 = t.parse().map_err(|_| {
            at.error(ErrorKind::Malformed, format!("expected one unsigned integer object id: {}", clip(line)))
        })?;
        emit(&mut objects, id, opts.page_size as u64, opts.page_size, 0, &mut sink)
            .map_err(|m| at.error(ErrorKind::Limit, m))?;
    }
    Ok(file(objects, Vec::new()))
}
