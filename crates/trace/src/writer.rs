//! Streaming trace writer: the header, records as they come, the end record.

use crate::error::{ErrorKind, Location, TraceError};
use crate::format::{Header, Record, RecordCodec};
use std::io::Write;

/// SIM-CHOICE: zstd level 3 (the library's default): fast, about 10x on page traces.
pub const DEFAULT_ZSTD_LEVEL: i32 = 3;

enum Body<W: Write> {
    Raw(W),
    Zstd(zstd::stream::write::Encoder<'static, W>),
}

/// Writes a trace; records are checked against the header as they are written.
pub struct TraceWriter<W: Write> {
    header: Header,
    codec: RecordCodec,
    body: Body<W>,
    records: u64,
    sink: String,
}

impl<W: Write> TraceWriter<W> {
    /// Writes `header` to `out`; the body is zstd-compressed at `level` if
    /// `header.compressed`. `sink` names the output in errors.
    pub fn new(mut out: W, header: Header, level: i32, sink: &str) -> Result<TraceWriter<W>, TraceError> {
        let io = |e: std::io::Error| TraceError::io(sink, Location::Byte(0), &e);
        header.check_limits().map_err(|m| TraceError::new(sink, Location::Nowhere, ErrorKind::Limit, m))?;
        out.write_all(&header.encode()).map_err(io)?;
        let body = if header.compressed {
            Body::Zstd(zstd::stream::write::Encoder::new(out, level).map_err(io)?)
        } else {
            Body::Raw(out)
        };
        Ok(TraceWriter {
            codec: RecordCodec { timestamps: header.timestamps },
            header,
            body,
            records: 0,
            sink: sink.to_string(),
        })
    }

    fn put(&mut self, b: &[u8]) -> Result<(), TraceError> {
        let r = match &mut self.body {
            Body::Raw(w) => w.write_all(b),
            Body::Zstd(w) => w.write_all(b),
        };
        r.map_err(|e| {
            TraceError::new(&self.sink, Location::Nowhere, ErrorKind::Io, format!("record {}: {e}", self.records))
        })
    }

    /// Appends one record.
    pub fn write(&mut self, r: &Record) -> Result<(), TraceError> {
        self.header.check_record(r).map_err(|m| {
            TraceError::new(
                &self.sink,
                Location::Nowhere,
                ErrorKind::Malformed,
                format!("record {}: {m}", self.records),
            )
        })?;
        let mut buf = [0u8; 20];
        let n = self.codec.size();
        self.codec.encode(r, &mut buf[..n]);
        self.put(&buf[..n])?;
        self.records += 1;
        Ok(())
    }

    /// Writes the end record, finishes compression and returns the output.
    pub fn finish(mut self) -> Result<W, TraceError> {
        let mut buf = [0u8; 20];
        let n = self.codec.size();
        self.codec.encode_end(self.records, &mut buf[..n]);
        self.put(&buf[..n])?;
        let io = |e: std::io::Error| TraceError::io(&self.sink, Location::Nowhere, &e);
        let mut out = match self.body {
            Body::Raw(w) => w,
            Body::Zstd(w) => w.finish().map_err(io)?,
        };
        out.flush().map_err(io)?;
        Ok(out)
    }
}
