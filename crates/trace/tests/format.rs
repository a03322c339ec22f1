//! The binary format: round trips, and malformed input rejected with the byte offset.

use proptest::prelude::*;
use trace::format::{FIXED_HEADER_BYTES, MAX_TOTAL_PAGES};
use trace::{Decl, Event, Header, Record, TraceReader, TraceWriter};

fn header(timestamps: bool, compressed: bool) -> Header {
    let mut h = Header::new(
        vec![Decl { name: "proc".into(), pages: 100 }],
        vec![Decl { name: "/data/f".into(), pages: 50 }, Decl { name: String::new(), pages: 7 }],
    );
    h.timestamps = timestamps;
    h.compressed = compressed;
    h
}

fn every_kind() -> Vec<Record> {
    let t = |event, time_ns| Record { event, time_ns };
    vec![
        t(Event::Access { space: 0, page: 0, write: false }, 0),
        t(Event::Access { space: 0, page: 99, write: true }, 10),
        t(Event::FileRead { file: 0, page: 3, pages: 47 }, 20),
        t(Event::FileWrite { file: 1, page: 6, pages: 1 }, 30),
        t(Event::Mmap { file: 0, page: 0, pages: 50 }, 40),
        t(Event::Munmap { file: 0, page: 0, pages: 50 }, 50),
        t(Event::Exit, u64::MAX),
    ]
}

fn write(h: &Header, recs: &[Record]) -> Vec<u8> {
    let mut w = TraceWriter::new(Vec::new(), h.clone(), 3, "mem").unwrap();
    for r in recs {
        w.write(r).unwrap();
    }
    w.finish().unwrap()
}

fn read(bytes: &[u8]) -> Result<(Header, Vec<Record>), trace::TraceError> {
    let mut r = TraceReader::open(bytes, "t.rtrace")?;
    let mut out = Vec::new();
    while let Some(rec) = r.next_record()? {
        out.push(rec);
    }
    Ok((r.header().clone(), out))
}

#[test]
fn every_record_kind_round_trips_raw_and_compressed_with_and_without_timestamps() {
    for (ts, z) in [(false, false), (false, true), (true, false), (true, true)] {
        let h = header(ts, z);
        let recs: Vec<Record> =
            every_kind().into_iter().map(|r| if ts { r } else { Record { time_ns: 0, ..r } }).collect();
        let bytes = write(&h, &recs);
        let (h2, back) = read(&bytes).unwrap();
        assert_eq!((h2, back), (h, recs), "timestamps {ts}, zstd {z}");
    }
}

#[test]
fn raw_layout_is_as_documented() {
    let h = Header::new(vec![Decl { name: "a".into(), pages: 2 }], Vec::new());
    let bytes = write(&h, &[Record::at0(Event::Access { space: 0, page: 1, write: true })]);
    // 24-byte fixed header + one declaration (4 + 2 + 1) + two 12-byte records.
    assert_eq!(bytes.len(), FIXED_HEADER_BYTES + 7 + 24);
    assert_eq!(&bytes[..8], b"RSIMTRC\0");
    assert_eq!(&bytes[31..43], &[2, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0]);
    assert_eq!(&bytes[43..55], &[0xff, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0]);
}

fn err(bytes: &[u8]) -> String {
    read(bytes).unwrap_err().to_string()
}

#[test]
fn malformed_binary_input_names_the_byte_offset() {
    let h = Header::new(vec![Decl { name: "a".into(), pages: 10 }], Vec::new());
    let good = write(
        &h,
        &[
            Record::at0(Event::Access { space: 0, page: 1, write: false }),
            Record::at0(Event::Access { space: 0, page: 2, write: false }),
        ],
    );
    let body = FIXED_HEADER_BYTES + 7;

    // Wrong magic.
    let mut b = good.clone();
    b[0] = b'X';
    assert!(err(&b).starts_with("t.rtrace: byte offset 0: wrong magic"), "{}", err(&b));
    // Bad header: unknown version, unknown flags, bad page size.
    let mut b = good.clone();
    b[8] = 9;
    assert_eq!(err(&b), "t.rtrace: byte offset 8: unsupported version 9; this build reads version 1");
    let mut b = good.clone();
    b[10] = 0x80;
    assert_eq!(err(&b), "t.rtrace: byte offset 10: unknown header flags 0x0080");
    let mut b = good.clone();
    b[12..16].copy_from_slice(&1000u32.to_le_bytes());
    assert_eq!(err(&b), "t.rtrace: byte offset 12: page size 1000 is not a power of two in 512..=1G");
    // Truncated header.
    assert_eq!(
        err(&good[..20]),
        "t.rtrace: byte offset 20: truncated header: input ends at byte 20 inside the file count"
    );
    assert_eq!(
        err(&good[..29]),
        "t.rtrace: byte offset 29: truncated header: input ends at byte 29 inside declaration 0"
    );
    // Absurd sizes: too many declarations, too many pages, too long a name.
    let mut b = good.clone();
    b[16..20].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(
        err(&b).starts_with("t.rtrace: byte offset 16: 4294967295 address spaces and 0 files declared; at most 65536"),
        "{}",
        err(&b)
    );
    let mut b = good.clone();
    b[24..28].copy_from_slice(&((MAX_TOTAL_PAGES + 1) as u32).to_le_bytes());
    assert_eq!(
        err(&b),
        format!(
            "t.rtrace: byte offset 24: declaration 0: {} pages declared in all; at most {MAX_TOTAL_PAGES}",
            MAX_TOTAL_PAGES + 1
        )
    );
    let mut b = good.clone();
    b[28..30].copy_from_slice(&60000u16.to_le_bytes());
    assert_eq!(err(&b), "t.rtrace: byte offset 28: declaration 0: name of 60000 bytes; at most 4096");
    // Truncated record, and a trace cut at a record boundary (no end record).
    assert_eq!(
        err(&good[..body + 17]),
        format!("t.rtrace: byte offset {}: truncated record 1: 5 of 12 bytes", body + 12)
    );
    assert_eq!(
        err(&good[..body + 24]),
        format!("t.rtrace: byte offset {}: trace ends after 2 records without an end record: truncated", body + 24)
    );
    // A record outside the declarations, an unknown kind, a wrong end count, trailing data.
    let mut b = good.clone();
    b[body + 12 + 4..body + 12 + 8].copy_from_slice(&10u32.to_le_bytes());
    assert_eq!(
        err(&b),
        format!(
            "t.rtrace: byte offset {}: record 1: address space 0: pages 10..11 exceed its declared 10 pages",
            body + 12
        )
    );
    let mut b = good.clone();
    b[body + 2] = 1;
    assert_eq!(
        err(&b),
        format!("t.rtrace: byte offset {body}: record 0: address space 1 is not declared (1 declared)")
    );
    let mut b = good.clone();
    b[body] = 0x42;
    assert_eq!(err(&b), format!("t.rtrace: byte offset {body}: record 0: unknown record kind 0x42"));
    let mut b = good.clone();
    b[body + 24 + 4] = 3;
    assert_eq!(err(&b), format!("t.rtrace: byte offset {}: end record counts 3 records but 2 precede it", body + 24));
    let mut b = good.clone();
    b.push(0);
    assert_eq!(err(&b), format!("t.rtrace: byte offset {}: data after the end record", body + 36));
}

#[test]
fn truncated_compressed_body_is_an_error_not_a_panic() {
    let mut h = Header::new(vec![Decl { name: "a".into(), pages: 1000 }], Vec::new());
    h.compressed = true;
    let recs: Vec<Record> =
        (0..5000).map(|i| Record::at0(Event::Access { space: 0, page: (i * 7919) % 1000, write: false })).collect();
    let bytes = write(&h, &recs);
    let e = read(&bytes[..bytes.len() - 10]).unwrap_err().to_string();
    assert!(e.starts_with("t.rtrace: byte offset "), "{e}");
}

#[test]
fn writer_rejects_records_outside_the_declarations() {
    let h = Header::new(vec![Decl { name: "a".into(), pages: 4 }], Vec::new());
    let mut w = TraceWriter::new(Vec::new(), h, 3, "out").unwrap();
    let e = w.write(&Record::at0(Event::FileRead { file: 0, page: 0, pages: 1 })).unwrap_err();
    assert_eq!(e.to_string(), "out: record 0: file 0 is not declared (0 declared)");
}

fn arb_record() -> impl Strategy<Value = Record> {
    let ev = prop_oneof![
        (0u16..1, 0u32..100, any::<bool>()).prop_map(|(space, page, write)| Event::Access { space, page, write }),
        (0u16..2, 0u32..7, 1u32..7).prop_map(|(file, page, pages)| Event::FileRead {
            file,
            page: page.min(7 - pages),
            pages
        }),
        (0u16..2, 0u32..7, 1u32..7).prop_map(|(file, page, pages)| Event::FileWrite {
            file,
            page: page.min(7 - pages),
            pages
        }),
        (0u16..2, 0u32..7, 1u32..7).prop_map(|(file, page, pages)| Event::Mmap {
            file,
            page: page.min(7 - pages),
            pages
        }),
        (0u16..2, 0u32..7, 1u32..7).prop_map(|(file, page, pages)| Event::Munmap {
            file,
            page: page.min(7 - pages),
            pages
        }),
        Just(Event::Exit),
    ];
    (ev, any::<u64>()).prop_map(|(event, time_ns)| Record { event, time_ns })
}

proptest! {
    #[test]
    fn random_traces_round_trip(recs in proptest::collection::vec(arb_record(), 0..200), z in any::<bool>()) {
        let mut h = header(true, z);
        h.files[0].pages = 7;
        let (h2, back) = read(&write(&h, &recs)).unwrap();
        prop_assert_eq!(h2, h);
        prop_assert_eq!(back, recs);
    }

    /// Any byte string is read without panicking (the fuzz target's property, in CI).
    #[test]
    fn arbitrary_bytes_never_panic(mut bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        if bytes.len() >= 8 && bytes[0] % 2 == 0 {
            bytes[..8].copy_from_slice(b"RSIMTRC\0");
        }
        let _ = read(&bytes);
    }
}

#[test]
fn records_straddling_read_blocks_round_trip_and_bad_ones_are_located() {
    use trace::reader::BLOCK_BYTES;
    // 20-byte records: block boundaries fall inside records.
    let h = header(true, false);
    let n = 3 * BLOCK_BYTES / 20 + 7;
    let recs: Vec<Record> =
        (0..n as u64).map(|i| Record { event: every_kind()[(i % 4) as usize].event, time_ns: i }).collect();
    for z in [false, true] {
        let h = Header { compressed: z, ..h.clone() };
        assert_eq!(read(&write(&h, &recs)).unwrap().1, recs, "zstd {z}");
    }
    // The record that straddles the first block boundary, with a page past its space's end.
    let body = h.encode().len();
    let k = BLOCK_BYTES / 20;
    let mut bytes = write(&h, &recs);
    let at = body + k * 20;
    bytes[at..at + 12].copy_from_slice(&[1, 0, 0, 0, 100, 0, 0, 0, 1, 0, 0, 0]);
    assert_eq!(
        err(&bytes),
        format!(
            "t.rtrace: byte offset {at}: record {k}: address space 0: pages 100..101 exceed its declared 100 pages"
        )
    );
}

/// Reads `bytes` with the read-ahead thread decoding the compressed body.
fn read_prefetched(bytes: Vec<u8>) -> Result<Vec<Record>, trace::TraceError> {
    let mut r = TraceReader::open_prefetched(std::io::Cursor::new(bytes), "t.rtrace")?;
    let mut out = Vec::new();
    while let Some(rec) = r.next_record()? {
        out.push(rec);
    }
    Ok(out)
}

#[test]
fn prefetched_reading_gives_the_same_records_and_the_same_errors() {
    use trace::reader::BLOCK_BYTES;
    let h = Header { compressed: true, ..header(true, true) };
    let n = 3 * BLOCK_BYTES / 20 + 7;
    let recs: Vec<Record> =
        (0..n as u64).map(|i| Record { event: every_kind()[(i % 4) as usize].event, time_ns: i }).collect();
    let bytes = write(&h, &recs);
    assert_eq!(read_prefetched(bytes.clone()).unwrap(), recs);
    // A truncated zstd frame fails where the plain reader fails, with the same message.
    let cut = bytes[..bytes.len() - 10].to_vec();
    let plain = read(&cut).unwrap_err().to_string();
    assert_eq!(read_prefetched(cut).unwrap_err().to_string(), plain);
    // An uncompressed trace reads as before (no thread).
    let raw = write(&header(true, false), &recs);
    assert_eq!(read_prefetched(raw).unwrap(), recs);
}

#[test]
fn peeking_ahead_names_later_records_without_reading_them() {
    let h = header(false, false);
    let recs: Vec<Record> = (0..40)
        .map(|i| Record { event: Event::Access { space: 0, page: i, write: i.is_multiple_of(2) }, time_ns: 0 })
        .collect();
    let bytes = write(&h, &recs);
    let mut r = TraceReader::open(&bytes[..], "t.rtrace").unwrap();
    // Nothing is in the block before the first read.
    assert_eq!(r.peek(0), None);
    assert_eq!(r.next_record().unwrap(), Some(recs[0]));
    for i in 1..40 {
        for ahead in 0..45 {
            assert_eq!(r.peek(ahead), recs.get(i + ahead).map(|r| r.event), "record {i} + {ahead}");
        }
        assert_eq!(r.records_read(), i as u64);
        assert_eq!(r.next_valid(), Some(recs[i]));
    }
    // The end record is for the checked path, and it is not counted.
    assert_eq!(r.next_valid(), None);
    assert_eq!(r.next_record().unwrap(), None);
    assert_eq!(r.records_read(), 40);
}

#[test]
fn the_header_alone_is_read_without_the_body_and_bad_headers_are_located() {
    let h = header(true, true);
    let mut bytes = write(&h, &every_kind());
    // A body that no decoder could read (its end cut and garbage added): the header alone is still fine.
    bytes.truncate(bytes.len() - 20);
    bytes.extend_from_slice(b"not zstd at all");
    assert_eq!(trace::reader::read_header_only(&bytes[..], "t.rtrace").unwrap(), h);
    let e = trace::reader::read_header_only(&b"RSTRACE?"[..], "t.rtrace").unwrap_err().to_string();
    assert!(e.starts_with("t.rtrace: byte offset 0: wrong magic"), "{e}");
}
