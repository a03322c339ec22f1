//! Streaming trace reader: the header, then records one at a time in bounded
//! memory (one record buffer plus the decompressor's window).

use crate::error::{ErrorKind, Location, TraceError};
use crate::format::{read_header, Header, Item, Record, RecordCodec};
use std::io::{BufRead, Read};

enum Body<R: BufRead> {
    Raw(R),
    Zstd(Box<zstd::stream::read::Decoder<'static, R>>),
}

impl<R: BufRead> Read for Body<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Body::Raw(r) => r.read(buf),
            Body::Zstd(d) => d.read(buf),
        }
    }
}

/// Reads a trace: [`TraceReader::open`] parses and checks the header, then
/// [`TraceReader::next_record`] yields validated records until the end record.
pub struct TraceReader<R: BufRead> {
    source: String,
    header: Header,
    codec: RecordCodec,
    body: Body<R>,
    /// Offset of the next record in the (decompressed) stream.
    offset: u64,
    records: u64,
    ended: bool,
}

impl<R: BufRead> TraceReader<R> {
    /// Reads the header from `input`; `source` names the input in errors.
    pub fn open(mut input: R, source: &str) -> Result<TraceReader<R>, TraceError> {
        let (header, len) = read_header(&mut input)
            .map_err(|p| TraceError::new(source, Location::Byte(p.offset), ErrorKind::Malformed, p.message))?;
        let body = if header.compressed {
            let d = zstd::stream::read::Decoder::with_buffer(input)
                .map_err(|e| TraceError::io(source, Location::Byte(len), &e))?;
            Body::Zstd(Box::new(d))
        } else {
            Body::Raw(input)
        };
        Ok(TraceReader {
            source: source.to_string(),
            codec: RecordCodec { timestamps: header.timestamps },
            header,
            body,
            offset: len,
            records: 0,
            ended: false,
        })
    }

    /// The trace's header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Records read so far.
    pub fn records_read(&self) -> u64 {
        self.records
    }

    fn err(&self, kind: ErrorKind, message: String) -> TraceError {
        TraceError::new(&self.source, Location::Byte(self.offset), kind, message)
    }

    /// The next record, `None` after the end record. Errors name the byte
    /// offset of the offending record (in the decompressed stream).
    pub fn next_record(&mut self) -> Result<Option<Record>, TraceError> {
        if self.ended {
            return Ok(None);
        }
        let size = self.codec.size();
        let mut buf = [0u8; 20];
        let got = read_full(&mut self.body, &mut buf[..size])
            .map_err(|e| self.err(ErrorKind::Io, format!("record {}: {e}", self.records)))?;
        if got == 0 {
            return Err(self.err(
                ErrorKind::Malformed,
                format!("trace ends after {} records without an end record: truncated", self.records),
            ));
        }
        if got < size {
            return Err(
                self.err(ErrorKind::Malformed, format!("truncated record {}: {got} of {size} bytes", self.records))
            );
        }
        let item = self
            .codec
            .decode(&buf[..size])
            .map_err(|m| self.err(ErrorKind::Malformed, format!("record {}: {m}", self.records)))?;
        match item {
            Item::Record(r) => {
                self.header
                    .check_record(&r)
                    .map_err(|m| self.err(ErrorKind::Malformed, format!("record {}: {m}", self.records)))?;
                self.offset += size as u64;
                self.records += 1;
                Ok(Some(r))
            }
            Item::End(n) => {
                if n != self.records {
                    return Err(self.err(
                        ErrorKind::Malformed,
                        format!("end record counts {n} records but {} precede it", self.records),
                    ));
                }
                self.offset += size as u64;
                let mut extra = [0u8; 1];
                if read_full(&mut self.body, &mut extra).map_err(|e| self.err(ErrorKind::Io, e.to_string()))? != 0 {
                    return Err(self.err(ErrorKind::Malformed, "data after the end record".into()));
                }
                self.ended = true;
                Ok(None)
            }
        }
    }
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
pub(crate) fn read_full<R: Read + ?Sized>(r: &mut R, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}
