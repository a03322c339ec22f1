//! The binary trace format, version 1 (specified in docs/trace-format.md).
//!
//! ```text
//! header  magic "RSIMTRC\0" | version u16 | flags u16 | page_size u32 |
//!         n_spaces u32 | n_files u32 | n_spaces + n_files declarations
//! decl    pages u32 | name_len u16 | name (UTF-8)
//! body    fixed-size records, then one end record; zstd-compressed if flags has ZSTD
//! record  kind u8 | reserved u8 (0) | id u16 | page u32 | count u32 [| time_ns u64]
//! ```
//! All integers are little-endian.

use std::io::Read;

/// The first eight bytes of every trace.
pub const MAGIC: [u8; 8] = *b"RSIMTRC\0";
/// The format version this crate reads and writes.
pub const VERSION: u16 = 1;
/// Header flag: the body is one zstd stream.
pub const FLAG_ZSTD: u16 = 1;
/// Header flag: every record carries a `time_ns` field.
pub const FLAG_TIMESTAMPS: u16 = 2;
/// Bytes of the fixed part of the header.
pub const FIXED_HEADER_BYTES: usize = 24;
/// Bytes of a record without a timestamp.
pub const RECORD_BYTES: usize = 12;
/// Bytes a timestamp adds to each record.
pub const TIME_BYTES: usize = 8;
/// SIM-CHOICE: at most this many address spaces plus files (ids are u16).
pub const MAX_DECLS: u32 = 1 << 16;
/// SIM-CHOICE: at most 2^30 pages declared in all (4 TiB of 4 KiB pages); page
/// ids then fit a u32 and per-page tables stay allocatable.
pub const MAX_TOTAL_PAGES: u64 = 1 << 30;
/// SIM-CHOICE: the longest name of a declared space or file, in bytes.
pub const MAX_NAME_BYTES: usize = 4096;

const KIND_READ: u8 = 1;
const KIND_WRITE: u8 = 2;
const KIND_FILE_READ: u8 = 3;
const KIND_FILE_WRITE: u8 = 4;
const KIND_MMAP: u8 = 5;
const KIND_MUNMAP: u8 = 6;
const KIND_EXIT: u8 = 7;
const KIND_END: u8 = 0xff;

/// A declared address space or file: its size in pages and a name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decl {
    /// Name (a process, a path); may be empty.
    pub name: String,
    /// Size in pages: every page index used is below it.
    pub pages: u32,
}

/// A trace's header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// Bytes per page of the page indexes in the records.
    pub page_size: u32,
    /// Records carry timestamps.
    pub timestamps: bool,
    /// The body is zstd-compressed.
    pub compressed: bool,
    /// Anonymous address spaces (process memory), by id.
    pub spaces: Vec<Decl>,
    /// Files, by id.
    pub files: Vec<Decl>,
}

/// One traced event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A load (`write: false`) or store to page `page` of address space `space`.
    Access {
        /// Address space id.
        space: u16,
        /// Page index in the space.
        page: u32,
        /// A store.
        write: bool,
    },
    /// A `read()` of `pages` pages of `file` from page `page`.
    FileRead {
        /// File id.
        file: u16,
        /// First page.
        page: u32,
        /// Number of pages (at least 1).
        pages: u32,
    },
    /// A `write()` of `pages` pages of `file` from page `page`.
    FileWrite {
        /// File id.
        file: u16,
        /// First page.
        page: u32,
        /// Number of pages (at least 1).
        pages: u32,
    },
    /// `mmap()` of `pages` pages of `file` from page `page`.
    Mmap {
        /// File id.
        file: u16,
        /// First page.
        page: u32,
        /// Number of pages (at least 1).
        pages: u32,
    },
    /// `munmap()` of a mapping made by an earlier [`Event::Mmap`].
    Munmap {
        /// File id.
        file: u16,
        /// First page.
        page: u32,
        /// Number of pages (at least 1).
        pages: u32,
    },
    /// The traced program exited.
    Exit,
}

/// An event with its time (0 in traces without timestamps).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    /// What happened.
    pub event: Event,
    /// Nanoseconds since the start of the trace.
    pub time_ns: u64,
}

impl Record {
    /// An event without a timestamp.
    pub fn at0(event: Event) -> Record {
        Record { event, time_ns: 0 }
    }
}

impl Header {
    /// A header for 4 KiB pages with nothing declared, uncompressed, no timestamps.
    pub fn new(spaces: Vec<Decl>, files: Vec<Decl>) -> Header {
        Header { page_size: mm::PAGE_SIZE as u32, timestamps: false, compressed: false, spaces, files }
    }

    /// Bytes of one record in this trace.
    pub fn record_bytes(&self) -> usize {
        RECORD_BYTES + if self.timestamps { TIME_BYTES } else { 0 }
    }

    /// Total pages declared (spaces and files).
    pub fn total_pages(&self) -> u64 {
        self.spaces.iter().chain(&self.files).map(|d| d.pages as u64).sum()
    }

    /// Encodes the header.
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(FIXED_HEADER_BYTES);
        b.extend_from_slice(&MAGIC);
        b.extend_from_slice(&VERSION.to_le_bytes());
        let flags = if self.compressed { FLAG_ZSTD } else { 0 } | if self.timestamps { FLAG_TIMESTAMPS } else { 0 };
        b.extend_from_slice(&flags.to_le_bytes());
        b.extend_from_slice(&self.page_size.to_le_bytes());
        b.extend_from_slice(&(self.spaces.len() as u32).to_le_bytes());
        b.extend_from_slice(&(self.files.len() as u32).to_le_bytes());
        for d in self.spaces.iter().chain(&self.files) {
            b.extend_from_slice(&d.pages.to_le_bytes());
            b.extend_from_slice(&(d.name.len() as u16).to_le_bytes());
            b.extend_from_slice(d.name.as_bytes());
        }
        b
    }

    /// Checks the limits: page size, declaration count, total pages, name lengths.
    pub fn check_limits(&self) -> Result<(), String> {
        check_page_size(self.page_size)?;
        let decls = self.spaces.len() as u64 + self.files.len() as u64;
        if decls > MAX_DECLS as u64 {
            return Err(format!("{decls} address spaces and files declared; at most {MAX_DECLS}"));
        }
        if self.total_pages() > MAX_TOTAL_PAGES {
            return Err(format!("{} pages declared in all; at most {MAX_TOTAL_PAGES}", self.total_pages()));
        }
        if let Some(d) = self.spaces.iter().chain(&self.files).find(|d| d.name.len() > MAX_NAME_BYTES) {
            return Err(format!("a declared name is {} bytes long; at most {MAX_NAME_BYTES}", d.name.len()));
        }
        Ok(())
    }

    /// Checks that a record refers only to declared spaces, files and pages.
    pub fn check_record(&self, r: &Record) -> Result<(), String> {
        let range = |what: &str, decls: &[Decl], id: u16, page: u32, pages: u32| {
            let d = decls
                .get(id as usize)
                .ok_or_else(|| format!("{what} {id} is not declared ({} declared)", decls.len()))?;
            if pages == 0 {
                return Err(format!("{what} {id}: empty page range at page {page}"));
            }
            match page.checked_add(pages) {
                Some(end) if end <= d.pages => Ok(()),
                _ => Err(format!(
                    "{what} {id}: pages {page}..{} exceed its declared {} pages",
                    page as u64 + pages as u64,
                    d.pages
                )),
            }
        };
        match r.event {
            Event::Access { space, page, .. } => range("address space", &self.spaces, space, page, 1),
            Event::FileRead { file, page, pages }
            | Event::FileWrite { file, page, pages }
            | Event::Mmap { file, page, pages }
            | Event::Munmap { file, page, pages } => range("file", &self.files, file, page, pages),
            Event::Exit => Ok(()),
        }
    }
}

/// Checks a page size: a power of two in 512..=1 GiB.
pub fn check_page_size(page_size: u32) -> Result<(), String> {
    if !page_size.is_power_of_two() || !(512..=(1 << 30)).contains(&page_size) {
        return Err(format!("page size {page_size} is not a power of two in 512..=1G"));
    }
    Ok(())
}

/// Why a header could not be read: the byte offset and what is wrong.
#[derive(Debug, PartialEq, Eq)]
pub struct HeaderProblem {
    /// Byte offset of the offending field (or where the input ended).
    pub offset: u64,
    /// What is wrong.
    pub message: String,
}

struct HeaderInput<'a, R: Read> {
    r: &'a mut R,
    off: u64,
}

impl<R: Read> HeaderInput<'_, R> {
    fn take<const N: usize>(&mut self, what: &str) -> Result<[u8; N], HeaderProblem> {
        let mut b = [0u8; N];
        self.fill(&mut b, what)?;
        Ok(b)
    }
    fn fill(&mut self, b: &mut [u8], what: &str) -> Result<(), HeaderProblem> {
        let mut got = 0;
        while got < b.len() {
            match self.r.read(&mut b[got..]) {
                Ok(0) => {
                    let at = self.off + got as u64;
                    return Err(HeaderProblem {
                        offset: at,
                        message: format!("truncated header: input ends at byte {at} inside {what}"),
                    });
                }
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(HeaderProblem {
                        offset: self.off + got as u64,
                        message: format!("reading {what}: {e}"),
                    })
                }
            }
        }
        self.off += b.len() as u64;
        Ok(())
    }
    fn bad(&self, back: u64, message: String) -> HeaderProblem {
        HeaderProblem { offset: self.off - back, message }
    }
}

/// Reads a header from `r`, consuming exactly its bytes; returns it with its length.
pub fn read_header<R: Read>(r: &mut R) -> Result<(Header, u64), HeaderProblem> {
    let mut inp = HeaderInput { r, off: 0 };
    let magic: [u8; 8] = inp.take("the magic number")?;
    if magic != MAGIC {
        return Err(inp.bad(8, format!("wrong magic {magic:02x?}: not a reclaimsim trace (expected \"RSIMTRC\\0\")")));
    }
    let version = u16::from_le_bytes(inp.take("the version")?);
    if version != VERSION {
        return Err(inp.bad(2, format!("unsupported version {version}; this build reads version {VERSION}")));
    }
    let flags = u16::from_le_bytes(inp.take("the flags")?);
    if flags & !(FLAG_ZSTD | FLAG_TIMESTAMPS) != 0 {
        return Err(inp.bad(2, format!("unknown header flags {flags:#06x}")));
    }
    let page_size = u32::from_le_bytes(inp.take("the page size")?);
    check_page_size(page_size).map_err(|m| inp.bad(4, m))?;
    let n_spaces = u32::from_le_bytes(inp.take("the address-space count")?);
    let n_files = u32::from_le_bytes(inp.take("the file count")?);
    if n_spaces as u64 + n_files as u64 > MAX_DECLS as u64 {
        return Err(
            inp.bad(8, format!("{n_spaces} address spaces and {n_files} files declared; at most {MAX_DECLS} in all"))
        );
    }
    let mut h = Header {
        page_size,
        timestamps: flags & FLAG_TIMESTAMPS != 0,
        compressed: flags & FLAG_ZSTD != 0,
        spaces: Vec::new(),
        files: Vec::new(),
    };
    let mut total = 0u64;
    for i in 0..n_spaces + n_files {
        let what = format!("declaration {i}");
        let pages = u32::from_le_bytes(inp.take(&what)?);
        total += pages as u64;
        if total > MAX_TOTAL_PAGES {
            return Err(inp.bad(4, format!("{what}: {total} pages declared in all; at most {MAX_TOTAL_PAGES}")));
        }
        let len = u16::from_le_bytes(inp.take(&what)?) as usize;
        if len > MAX_NAME_BYTES {
            return Err(inp.bad(2, format!("{what}: name of {len} bytes; at most {MAX_NAME_BYTES}")));
        }
        let mut name = vec![0u8; len];
        inp.fill(&mut name, &what)?;
        let name = String::from_utf8(name).map_err(|_| inp.bad(len as u64, format!("{what}: name is not UTF-8")))?;
        let d = Decl { name, pages };
        if i < n_spaces {
            h.spaces.push(d)
        } else {
            h.files.push(d)
        }
    }
    Ok((h, inp.off))
}

/// Encodes and decodes the fixed-size records of one trace.
#[derive(Clone, Copy, Debug)]
pub struct RecordCodec {
    /// Records carry timestamps.
    pub timestamps: bool,
}

/// A decoded body item: a record, or the end record with its record count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Item {
    /// An event.
    Record(Record),
    /// The end of the trace; the number of records before it.
    End(u64),
}

impl RecordCodec {
    /// Bytes per record.
    pub fn size(self) -> usize {
        RECORD_BYTES + if self.timestamps { TIME_BYTES } else { 0 }
    }

    fn put(self, out: &mut [u8], kind: u8, id: u16, page: u32, count: u32, time_ns: u64) {
        out[0] = kind;
        out[1] = 0;
        out[2..4].copy_from_slice(&id.to_le_bytes());
        out[4..8].copy_from_slice(&page.to_le_bytes());
        out[8..12].copy_from_slice(&count.to_le_bytes());
        if self.timestamps {
            out[12..20].copy_from_slice(&time_ns.to_le_bytes());
        }
    }

    /// Encodes a record into `out` (exactly [`RecordCodec::size`] bytes).
    pub fn encode(self, r: &Record, out: &mut [u8]) {
        let (kind, id, page, count) = match r.event {
            Event::Access { space, page, write } => (if write { KIND_WRITE } else { KIND_READ }, space, page, 1),
            Event::FileRead { file, page, pages } => (KIND_FILE_READ, file, page, pages),
            Event::FileWrite { file, page, pages } => (KIND_FILE_WRITE, file, page, pages),
            Event::Mmap { file, page, pages } => (KIND_MMAP, file, page, pages),
            Event::Munmap { file, page, pages } => (KIND_MUNMAP, file, page, pages),
            Event::Exit => (KIND_EXIT, 0, 0, 0),
        };
        self.put(out, kind, id, page, count, r.time_ns);
    }

    /// Encodes the end record carrying the number of records.
    pub fn encode_end(self, records: u64, out: &mut [u8]) {
        self.put(out, KIND_END, 0, records as u32, (records >> 32) as u32, 0);
    }

    /// The fast path of decoding: an access, file read or file write that is
    /// well formed and within its declaration's pages (`space_pages[id]`,
    /// `file_pages[id]`). `None` for anything else, which [`RecordCodec::decode`]
    /// and [`Header::check_record`] then accept or explain.
    #[inline]
    pub fn decode_valid(self, b: &[u8], space_pages: &[u32], file_pages: &[u32]) -> Option<Record> {
        let f: &[u8; RECORD_BYTES] = b.get(..RECORD_BYTES)?.try_into().ok()?;
        let id = u16::from_le_bytes([f[2], f[3]]);
        let page = u32::from_le_bytes([f[4], f[5], f[6], f[7]]);
        let count = u32::from_le_bytes([f[8], f[9], f[10], f[11]]);
        if f[1] != 0 {
            return None;
        }
        let event = match f[0] {
            KIND_READ | KIND_WRITE if count == 1 && page < *space_pages.get(id as usize)? => {
                Event::Access { space: id, page, write: f[0] == KIND_WRITE }
            }
            KIND_FILE_READ | KIND_FILE_WRITE
                if count > 0 && page.checked_add(count)? <= *file_pages.get(id as usize)? =>
            {
                if f[0] == KIND_FILE_READ {
                    Event::FileRead { file: id, page, pages: count }
                } else {
                    Event::FileWrite { file: id, page, pages: count }
                }
            }
            _ => return None,
        };
        let time_ns = if self.timestamps {
            u64::from_le_bytes(b.get(RECORD_BYTES..RECORD_BYTES + TIME_BYTES)?.try_into().ok()?)
        } else {
            0
        };
        Some(Record { event, time_ns })
    }

    /// The page a record refers to first, from its kind, id and page fields
    /// alone, unchecked (a hint for prefetching, never for the run): an
    /// access, or a one-page file read or write; `None` for other kinds.
    #[inline(always)]
    pub fn decode_hint(b: &[u8]) -> Option<Event> {
        let f: &[u8; 8] = b.get(..8)?.try_into().ok()?;
        let id = u16::from_le_bytes([f[2], f[3]]);
        let page = u32::from_le_bytes([f[4], f[5], f[6], f[7]]);
        match f[0] {
            KIND_READ | KIND_WRITE => Some(Event::Access { space: id, page, write: f[0] == KIND_WRITE }),
            KIND_FILE_READ => Some(Event::FileRead { file: id, page, pages: 1 }),
            KIND_FILE_WRITE => Some(Event::FileWrite { file: id, page, pages: 1 }),
            _ => None,
        }
    }

    /// Decodes one record; the error says which field is wrong.
    pub fn decode(self, b: &[u8]) -> Result<Item, String> {
        if b[1] != 0 {
            return Err(format!("reserved byte is {:#04x}, must be 0", b[1]));
        }
        let id = u16::from_le_bytes([b[2], b[3]]);
        let page = u32::from_le_bytes([b[4], b[5], b[6], b[7]]);
        let count = u32::from_le_bytes([b[8], b[9], b[10], b[11]]);
        let time_ns = if self.timestamps { u64::from_le_bytes(b[12..20].try_into().expect("8 bytes")) } else { 0 };
        let one = |e: Event| {
            if count != 1 {
                return Err(format!("access record with count {count}, must be 1"));
            }
            Ok(e)
        };
        let event = match b[0] {
            KIND_READ => one(Event::Access { space: id, page, write: false })?,
            KIND_WRITE => one(Event::Access { space: id, page, write: true })?,
            KIND_FILE_READ => Event::FileRead { file: id, page, pages: count },
            KIND_FILE_WRITE => Event::FileWrite { file: id, page, pages: count },
            KIND_MMAP => Event::Mmap { file: id, page, pages: count },
            KIND_MUNMAP => Event::Munmap { file: id, page, pages: count },
            KIND_EXIT if id == 0 && page == 0 && count == 0 => Event::Exit,
            KIND_EXIT => return Err("exit record with nonzero fields".into()),
            KIND_END if id == 0 && time_ns == 0 => return Ok(Item::End(page as u64 | (count as u64) << 32)),
            KIND_END => return Err("end record with nonzero fields".into()),
            k => return Err(format!("unknown record kind {k:#04x}")),
        };
        Ok(Item::Record(Record { event, time_ns }))
    }
}
