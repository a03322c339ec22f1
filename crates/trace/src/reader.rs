//! Streaming trace reader: the header, then records one at a time in bounded
//! memory (one block of decoded bytes plus the decompressor's window).
//!
//! The body is read in blocks of [`BLOCK_BYTES`] and records are decoded
//! straight out of the block: one call into the decompressor per block, not
//! per record, and a fast path for well-formed accesses and file I/O
//! ([`RecordCodec::decode_valid`]); anything else takes the checked path,
//! which names what is wrong.

use crate::error::{ErrorKind, Location, TraceError};
use crate::format::{read_header, Event, Header, Item, Record, RecordCodec};
use crate::prefetch::Prefetch;
use std::io::{BufRead, Read};

/// SIM-CHOICE: bytes of decoded trace read at a time (about 13k-22k records).
pub const BLOCK_BYTES: usize = 1 << 18;

enum Body<R: BufRead> {
    Raw(R),
    Zstd(Box<zstd::stream::read::Decoder<'static, R>>),
    /// A zstd body decoded by a read-ahead thread ([`TraceReader::open_prefetched`]).
    Prefetch(Prefetch),
}

impl<R: BufRead> Read for Body<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Body::Raw(r) => r.read(buf),
            Body::Zstd(d) => d.read(buf),
            Body::Prefetch(p) => p.read(buf),
        }
    }
}

/// Reads a trace: [`TraceReader::open`] parses and checks the header, then
/// [`TraceReader::next_record`] yields validated records until the end record.
pub struct TraceReader<R: BufRead> {
    source: String,
    header: Header,
    codec: RecordCodec,
    /// Declared pages of each address space and file (the fast path's bounds).
    space_pages: Vec<u32>,
    file_pages: Vec<u32>,
    body: Body<R>,
    /// Decoded bytes; `block[pos..len]` are not yet consumed.
    block: Vec<u8>,
    pos: usize,
    len: usize,
    /// The body has no more bytes.
    eof: bool,
    /// A read error met after some bytes of a block: reported when the records
    /// before it have been consumed.
    deferred: Option<std::io::Error>,
    /// Offset in the (decompressed) stream of `block[0]`: the next record's
    /// offset is `base + pos`, and as all records have one size the count
    /// read so far follows from it (nothing to count per record).
    base: u64,
    /// The header's length: where the first record starts.
    header_len: u64,
    ended: bool,
}

impl<R: BufRead> TraceReader<R> {
    /// Reads the header from `input`; `source` names the input in errors.
    pub fn open(input: R, source: &str) -> Result<TraceReader<R>, TraceError> {
        Self::open_with(input, source, |d| Ok(Body::Zstd(Box::new(d))))
    }

    fn open_with(
        mut input: R,
        source: &str,
        zstd_body: impl FnOnce(zstd::stream::read::Decoder<'static, R>) -> std::io::Result<Body<R>>,
    ) -> Result<TraceReader<R>, TraceError> {
        let (header, len) = read_header(&mut input)
            .map_err(|p| TraceError::new(source, Location::Byte(p.offset), ErrorKind::Malformed, p.message))?;
        let body = if header.compressed {
            zstd::stream::read::Decoder::with_buffer(input)
                .and_then(zstd_body)
                .map_err(|e| TraceError::io(source, Location::Byte(len), &e))?
        } else {
            Body::Raw(input)
        };
        Ok(TraceReader {
            source: source.to_string(),
            codec: RecordCodec { timestamps: header.timestamps },
            space_pages: header.spaces.iter().map(|d| d.pages).collect(),
            file_pages: header.files.iter().map(|d| d.pages).collect(),
            header,
            body,
            block: vec![0; BLOCK_BYTES],
            pos: 0,
            len: 0,
            eof: false,
            deferred: None,
            base: len,
            header_len: len,
            ended: false,
        })
    }

    /// The trace's header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Records read so far.
    pub fn records_read(&self) -> u64 {
        // The end record, once read, is not a record.
        (self.offset() - self.header_len) / self.codec.size() as u64 - self.ended as u64
    }

    /// Offset of the next record in the (decompressed) stream.
    fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    fn err(&self, kind: ErrorKind, message: String) -> TraceError {
        TraceError::new(&self.source, Location::Byte(self.offset()), kind, message)
    }

    /// Moves the unconsumed bytes to the front of the block and fills the rest
    /// from the body, until the block is full or the body ends.
    fn refill(&mut self) -> Result<(), TraceError> {
        if let Some(e) = self.deferred.take() {
            return Err(self.err(ErrorKind::Io, format!("record {}: {e}", self.records_read())));
        }
        self.base += self.pos as u64;
        self.block.copy_within(self.pos..self.len, 0);
        self.len -= self.pos;
        self.pos = 0;
        while !self.eof && self.len < self.block.len() {
            match self.body.read(&mut self.block[self.len..]) {
                Ok(0) => self.eof = true,
                Ok(n) => self.len += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if self.len > 0 => {
                    self.deferred = Some(e);
                    break;
                }
                Err(e) => return Err(self.err(ErrorKind::Io, format!("record {}: {e}", self.records_read()))),
            }
        }
        Ok(())
    }

    /// The next record, `None` after the end record. Errors name the byte
    /// offset of the offending record (in the decompressed stream).
    #[inline(always)]
    pub fn next_record(&mut self) -> Result<Option<Record>, TraceError> {
        match self.next_valid() {
            Some(r) => Ok(Some(r)),
            None => self.next_record_checked(),
        }
    }

    /// The next record if it takes the fast path (whole in the block and
    /// well formed, [`RecordCodec::decode_valid`]); `None` leaves it unread
    /// for [`TraceReader::next_record`], which says what else it is.
    #[inline(always)]
    pub fn next_valid(&mut self) -> Option<Record> {
        let size = self.codec.size();
        let b = self.block[..self.len].get(self.pos..self.pos + size)?;
        let r = self.codec.decode_valid(b, &self.space_pages, &self.file_pages)?;
        self.pos += size;
        Some(r)
    }

    /// The first page that the record `ahead` records after the next one
    /// refers to, if that record is in the current block, without reading it
    /// or checking it ([`RecordCodec::decode_hint`]: a hint for prefetching).
    #[inline(always)]
    pub fn peek(&self, ahead: usize) -> Option<Event> {
        let at = self.pos + ahead * self.codec.size();
        RecordCodec::decode_hint(self.block[..self.len].get(at..)?)
    }

    /// The general path: block boundaries, the end record, and bad records.
    #[cold]
    #[inline(never)]
    fn next_record_checked(&mut self) -> Result<Option<Record>, TraceError> {
        if self.ended {
            return Ok(None);
        }
        let size = self.codec.size();
        if self.len - self.pos < size {
            self.refill()?;
        }
        let got = (self.len - self.pos).min(size);
        let records = self.records_read();
        if got == 0 {
            return Err(self.err(
                ErrorKind::Malformed,
                format!("trace ends after {records} records without an end record: truncated"),
            ));
        }
        if got < size {
            return Err(self.err(ErrorKind::Malformed, format!("truncated record {records}: {got} of {size} bytes")));
        }
        let item = self
            .codec
            .decode(&self.block[self.pos..self.pos + size])
            .map_err(|m| self.err(ErrorKind::Malformed, format!("record {records}: {m}")))?;
        match item {
            Item::Record(r) => {
                self.header
                    .check_record(&r)
                    .map_err(|m| self.err(ErrorKind::Malformed, format!("record {records}: {m}")))?;
                self.pos += size;
                Ok(Some(r))
            }
            Item::End(n) => {
                if n != records {
                    return Err(self
                        .err(ErrorKind::Malformed, format!("end record counts {n} records but {records} precede it")));
                }
                self.pos += size;
                if self.pos == self.len {
                    self.refill()?;
                }
                if self.pos < self.len {
                    return Err(self.err(ErrorKind::Malformed, "data after the end record".into()));
                }
                self.ended = true;
                Ok(None)
            }
        }
    }
}

impl<R: BufRead + Send + 'static> TraceReader<R> {
    /// [`TraceReader::open`], with a compressed body decoded on another core
    /// by a read-ahead thread (same records, same errors; less wall time).
    pub fn open_prefetched(input: R, source: &str) -> Result<TraceReader<R>, TraceError> {
        Self::open_with(input, source, |d| Ok(Body::Prefetch(Prefetch::new(d, BLOCK_BYTES)?)))
    }
}

/// Reads and checks only the header of a trace from `input` (`source` names
/// it in errors), with no decoder for the body: for callers that need only
/// its declarations.
pub fn read_header_only<R: BufRead>(mut input: R, source: &str) -> Result<Header, TraceError> {
    read_header(&mut input)
        .map(|(header, _)| header)
        .map_err(|p| TraceError::new(source, Location::Byte(p.offset), ErrorKind::Malformed, p.message))
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
