//! The dry-mode trace: a text file holding exactly the access sequence the
//! driver performs, and a digest of it that real mode prints too.
//!
//! ```text
//! reclaimsim-driver-trace 1
//! pattern anon-zipf:anon=192M,ops=1000000,alpha=0.8,seed=1,write=1
//! anon 49152
//! file 0
//! ops 1049152
//! a 17 w          (store to anon page 17; `r` = load)
//! f 3051          (one-page pread of file page 3051)
//! end 8c1f0e5d2a7b4e10
//! ```
//!
//! `end` carries the FNV-1a 64 digest of the sequence ([`Digest`]).

use crate::pattern::{Op, Pattern};
use std::fmt;
use std::io::{self, BufRead, Write};

/// The first line of a trace.
pub const MAGIC: &str = "reclaimsim-driver-trace 1";

/// FNV-1a 64 over the accesses: kind byte, page (little endian), write byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Digest(pub u64);

impl Default for Digest {
    fn default() -> Self {
        Digest(0xcbf2_9ce4_8422_2325)
    }
}

impl Digest {
    /// Adds one access.
    #[inline]
    pub fn add(&mut self, op: Op) {
        let (kind, page, write) = match op {
            Op::Anon { page, write } => (b'a', page, write as u8),
            Op::File { page, write } => (b'f', page, write as u8),
        };
        for b in [kind].into_iter().chain(page.to_le_bytes()).chain([write]) {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

/// Writes the trace of `p` to `out`; returns its digest.
pub fn write_trace(p: &Pattern, out: &mut dyn Write) -> io::Result<Digest> {
    writeln!(out, "{MAGIC}\npattern {}\nanon {}\nfile {}\nops {}", p.canonical, p.anon_pages, p.file_pages, p.len())?;
    let mut d = Digest::default();
    for op in p.ops() {
        d.add(op);
        match op {
            Op::Anon { page, write } => writeln!(out, "a {page} {}", if write { 'w' } else { 'r' })?,
            Op::File { page, write: false } => writeln!(out, "f {page}")?,
            Op::File { page, write: true } => writeln!(out, "f {page} w")?,
        }
    }
    writeln!(out, "end {d}")?;
    Ok(d)
}

/// A trace read back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trace {
    /// The pattern line.
    pub pattern: String,
    /// Pages of the anonymous region.
    pub anon_pages: u32,
    /// Pages of the file.
    pub file_pages: u32,
    /// The accesses.
    pub ops: Vec<Op>,
    /// The digest recorded in the `end` line (checked against the accesses).
    pub digest: Digest,
}

/// A malformed trace: line number and what was wrong.
#[derive(Debug)]
pub struct TraceError {
    /// 1-based line number (0 = I/O error before any line).
    pub line: u64,
    /// What was wrong.
    pub msg: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.msg)
    }
}

impl std::error::Error for TraceError {}

/// Numbered lines of a trace being read.
struct Lines<'a> {
    lines: io::Lines<&'a mut dyn BufRead>,
    n: u64,
}

impl Lines<'_> {
    fn next(&mut self, what: &str) -> Result<(u64, String), TraceError> {
        self.n += 1;
        match self.lines.next() {
            Some(Ok(l)) => Ok((self.n, l)),
            Some(Err(e)) => Err(TraceError { line: self.n, msg: e.to_string() }),
            None => Err(TraceError { line: self.n, msg: format!("unexpected end of trace, expected {what}") }),
        }
    }

    fn field(&mut self, key: &str) -> Result<(u64, String), TraceError> {
        let (ln, l) = self.next(key)?;
        match l.strip_prefix(key).and_then(|r| r.strip_prefix(' ')) {
            Some(v) => Ok((ln, v.to_string())),
            None => Err(TraceError { line: ln, msg: format!("expected `{key} ...`") }),
        }
    }

    fn number(&mut self, key: &str) -> Result<u64, TraceError> {
        let (ln, v) = self.field(key)?;
        v.parse::<u64>().map_err(|_| TraceError { line: ln, msg: format!("`{v}` is not a number") })
    }
}

/// Reads a trace, checking header, page bounds, count and digest.
pub fn read_trace(input: &mut dyn BufRead) -> Result<Trace, TraceError> {
    let mut r = Lines { lines: input.lines(), n: 0 };
    let (_, magic) = r.next("the header")?;
    if magic != MAGIC {
        return Err(TraceError { line: 1, msg: format!("not a driver trace: expected `{MAGIC}`") });
    }
    let pattern = r.field("pattern")?.1;
    let anon_pages = r.number("anon")? as u32;
    let file_pages = r.number("file")? as u32;
    let count = r.number("ops")?;
    let mut ops = Vec::with_capacity(count.min(1 << 28) as usize);
    let mut digest = Digest::default();
    for _ in 0..count {
        let (ln, l) = r.next("an access")?;
        let bad = |msg: &str| TraceError { line: ln, msg: format!("`{l}`: {msg}") };
        let mut it = l.split(' ');
        let (kind, page, rest) = (it.next(), it.next().and_then(|p| p.parse::<u32>().ok()), it.next());
        let op = match (kind, page, rest) {
            (Some("a"), Some(page), Some("w" | "r")) if page < anon_pages => {
                Op::Anon { page, write: rest == Some("w") }
            }
            (Some("f"), Some(page), None | Some("w")) if page < file_pages => Op::File { page, write: rest.is_some() },
            (Some("a" | "f"), Some(_), _) => return Err(bad("page out of range or bad access mode")),
            _ => return Err(bad("expected `a PAGE w|r` or `f PAGE [w]`")),
        };
        digest.add(op);
        ops.push(op);
    }
    let (ln, end) = r.field("end")?;
    if end != digest.to_string() {
        return Err(TraceError { line: ln, msg: format!("digest {end} does not match the accesses ({digest})") });
    }
    Ok(Trace { pattern, anon_pages, file_pages, ops, digest })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_errors() {
        let p = Pattern::parse("mixed:anon=32K,file=16K,ops=40,seed=3").unwrap();
        let mut buf = Vec::new();
        let d = write_trace(&p, &mut buf).unwrap();
        let t = read_trace(&mut &buf[..]).unwrap();
        assert_eq!(t.ops, p.ops().collect::<Vec<_>>());
        assert_eq!((t.anon_pages, t.file_pages, t.digest), (8, 4, d));
        let text = String::from_utf8(buf).unwrap();
        let broken = text.replacen("\nf ", "\nf 99", 1);
        let e = read_trace(&mut broken.as_bytes()).unwrap_err();
        assert!(e.msg.contains("page out of range"), "{e}");
        let truncated: String = text.lines().take(10).map(|l| format!("{l}\n")).collect();
        assert_eq!(read_trace(&mut truncated.as_bytes()).unwrap_err().line, 11);
    }

    #[test]
    fn file_writes_round_trip_and_change_the_digest() {
        let trace = |spec: &str| {
            let mut buf = Vec::new();
            let d = write_trace(&Pattern::parse(spec).unwrap(), &mut buf).unwrap();
            (read_trace(&mut &buf[..]).unwrap(), d, String::from_utf8(buf).unwrap())
        };
        let (w, dw, text) = trace("file-seq:file=16K,passes=1,write=1");
        assert!(text.contains("\nf 0 w\nf 1 w\n"), "{text}");
        assert_eq!(w.ops[3], Op::File { page: 3, write: true });
        let (r, dr, _) = trace("file-seq:file=16K,passes=1");
        assert_eq!(r.ops[3], Op::File { page: 3, write: false });
        assert_ne!(dw, dr, "a write is not a read");
        let bad = text.replacen("f 0 w", "f 0 x", 1);
        assert!(read_trace(&mut bad.as_bytes()).unwrap_err().msg.contains("bad access mode"));
    }
}
