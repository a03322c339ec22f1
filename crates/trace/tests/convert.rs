//! Converters: each format's input becomes the expected records and
//! declarations, survives a write/read round trip, and malformed input is
//! rejected with its line or byte offset.

use trace::convert::{convert, Format, Options, Outline, PagesAs};
use trace::{Decl, Event, Header, Record, TraceReader, TraceWriter};

fn run(format: Format, input: &[u8], opts: Options) -> Result<(Outline, Vec<Record>), String> {
    let mut out = Vec::new();
    let outline = convert(format, &mut &input[..], "in", &opts, &mut |r| {
        out.push(*r);
        Ok(())
    })
    .map_err(|e| e.to_string())?;
    Ok((outline, out))
}

/// Converts, checks the records and declarations, then writes and reads back
/// (raw and zstd) and checks the same records come out.
fn check(
    format: Format,
    input: &str,
    opts: Options,
    spaces: &[(&str, u32)],
    files: &[(&str, u32)],
    expected: &[Event],
) {
    let (outline, recs) = run(format, input.as_bytes(), opts).unwrap();
    let decl = |d: &[(&str, u32)]| d.iter().map(|&(n, p)| Decl { name: n.into(), pages: p }).collect::<Vec<_>>();
    assert_eq!(outline.header.spaces, decl(spaces), "{format:?} spaces");
    assert_eq!(outline.header.files, decl(files), "{format:?} files");
    assert_eq!(recs.iter().map(|r| r.event).collect::<Vec<_>>(), expected, "{format:?} events");
    for compressed in [false, true] {
        let h = Header { compressed, ..outline.header.clone() };
        let mut w = TraceWriter::new(Vec::new(), h, 3, "out").unwrap();
        recs.iter().for_each(|r| w.write(r).unwrap());
        let bytes = w.finish().unwrap();
        let mut rd = TraceReader::open(&bytes[..], "out").unwrap();
        let mut back = Vec::new();
        while let Some(r) = rd.next_record().unwrap() {
            back.push(r);
        }
        assert_eq!(back, recs, "{format:?} round trip, zstd {compressed}");
    }
}

fn acc(page: u32, write: bool) -> Event {
    Event::Access { space: 0, page, write }
}
fn fread(file: u16, page: u32, pages: u32) -> Event {
    Event::FileRead { file, page, pages }
}

#[test]
fn lackey_data_and_instruction_references() {
    let input = "==1== Lackey, an example Valgrind tool\nI  04001b20,3\n L 1ffefff000,8\n S 04001ffe,4\n M 1ffefff008,4\nI  04800000,2\n==1== done\n";
    // 0x4001b20 is page 0x4001 (chunk 0x20, offset 1); 0x1ffefff000 is page 0x1ffefff
    // (chunk 0xfff7f, offset 0x1ff); the store at 0x4001ffe..0x4002001 spans two pages;
    // 0x4800000 is page 0x4800 (chunk 0x24, offset 0).
    let expected =
        [acc(1, false), acc(512 + 511, false), acc(1, true), acc(2, true), acc(512 + 511, true), acc(1024, false)];
    check(Format::Lackey, input, Options::default(), &[("lackey", 1536)], &[], &expected);
    let e = run(Format::Lackey, b"I  04001b20,3\nhello from the program\n", Options::default()).unwrap_err();
    assert!(e.starts_with("in:2: not a lackey line"), "{e}");
    let (o, r) =
        run(Format::Lackey, b"hello\nI  0,1\n", Options { skip_foreign_lines: true, ..Options::default() }).unwrap();
    assert_eq!((r.len(), o.skipped[1].1), (1, 1));
    assert_eq!(
        run(Format::Lackey, b" L zz,8\n", Options::default()).unwrap_err(),
        "in:1: expected hex ADDR,decimal SIZE after the operation:  L zz,8"
    );
    assert_eq!(
        run(Format::Lackey, b" L 10,0\n", Options::default()).unwrap_err(),
        "in:1: reference size 0 bytes is not in 1..=65536"
    );
}

fn oracle(time: u32, id: u64, size: u32) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&time.to_le_bytes());
    b.extend_from_slice(&id.to_le_bytes());
    b.extend_from_slice(&size.to_le_bytes());
    b.extend_from_slice(&(-1i64).to_le_bytes());
    b
}

#[test]
fn oracle_general_objects_become_file_page_runs() {
    let input: Vec<u8> = [oracle(1, 42, 10000), oracle(2, 7, 0), oracle(3, 42, 10000)].concat();
    let (o, recs) = run(Format::OracleGeneral, &input, Options::default()).unwrap();
    assert_eq!(o.header.files, vec![Decl { name: "objects".into(), pages: 4 }]);
    assert!(o.header.timestamps);
    assert_eq!(
        recs,
        vec![
            Record { event: fread(0, 0, 3), time_ns: 1_000_000_000 },
            Record { event: fread(0, 3, 1), time_ns: 2_000_000_000 },
            Record { event: fread(0, 0, 3), time_ns: 3_000_000_000 }
        ]
    );
    let e = run(Format::OracleGeneral, &input[..60], Options::default()).unwrap_err();
    assert_eq!(e, "in: byte offset 48: truncated oracleGeneral record 2: 12 of 24 bytes");
    // Absurd sizes: 4 GiB objects exhaust the page limit at the 1025th.
    let huge: Vec<u8> = (0..1100).flat_map(|i| oracle(0, i, u32::MAX)).collect();
    let e = run(Format::OracleGeneral, &huge, Options::default()).map(|_| ()).unwrap_err();
    assert!(e.starts_with("in: byte offset 24576: objects need more than 1073741824 pages"), "{e}");
}

#[test]
fn csv_and_txt_block_traces() {
    let csv = "time,obj_id,obj_size\n5,100,8192\n6,200\n7,100,8192\n";
    check(
        Format::Csv,
        csv,
        Options::default(),
        &[],
        &[("objects", 3)],
        &[fread(0, 0, 2), fread(0, 2, 1), fread(0, 0, 2)],
    );
    assert_eq!(
        run(Format::Csv, b"1,2,3\n1,x,3\n", Options::default()).unwrap_err(),
        "in:2: column 2 (obj_id) is not an unsigned integer: 1,x,3"
    );
    assert_eq!(
        run(Format::Csv, b"1,2,3\nt,2,3\n", Options::default()).unwrap_err(),
        "in:2: column 1 (time) is not an unsigned integer: t,2,3"
    );
    check(
        Format::Txt,
        "9\n3\n9\n\n3\n",
        Options::default(),
        &[],
        &[("objects", 2)],
        &[fread(0, 0, 1), fread(0, 1, 1), fread(0, 0, 1), fread(0, 1, 1)],
    );
    assert_eq!(
        run(Format::Txt, b"9\n-3\n", Options::default()).unwrap_err(),
        "in:2: expected one unsigned integer object id: -3"
    );
}

#[test]
fn pages_as_anon_or_file_and_lirs_markers() {
    let input = "5\n*\n0 W\n5 R\n\n2\n";
    check(
        Format::Pages,
        input,
        Options::default(),
        &[("pages", 6)],
        &[],
        &[acc(5, false), acc(0, true), acc(5, false), acc(2, false)],
    );
    let file = Options { pages_as: PagesAs::File, ..Options::default() };
    let w = Event::FileWrite { file: 0, page: 0, pages: 1 };
    check(Format::Pages, input, file, &[], &[("pages", 6)], &[fread(0, 5, 1), w, fread(0, 5, 1), fread(0, 2, 1)]);
    assert_eq!(
        run(Format::Pages, b"1\n2 X\n", Options::default()).unwrap_err(),
        "in:2: expected `PAGE` or `PAGE W`: 2 X"
    );
    assert_eq!(
        run(Format::Pages, b"1\n0x10\n", Options::default()).unwrap_err(),
        "in:2: expected a decimal page number: 0x10"
    );
    assert_eq!(
        run(Format::Pages, b"99999999999\n", Options::default()).unwrap_err(),
        "in:1: page 99999999999 is beyond the limit of 1073741824 pages"
    );
}

#[test]
fn addresses_plain_and_spec_forms() {
    let input = "0x1000\n1fff W\ns 0x7fff0000 3\nl 0x2000 1\n";
    // Pages 1, 1, 0x7fff0 (chunk 0x3ff, offset 0x1f0 -> second chunk), 2.
    check(
        Format::Addresses,
        input,
        Options::default(),
        &[("addresses", 1024)],
        &[],
        &[acc(1, false), acc(1, true), acc(512 + 0x1f0, true), acc(2, false)],
    );
    assert_eq!(
        run(Format::Addresses, b"0x10\nzz\n", Options::default()).unwrap_err(),
        "in:2: expected `ADDR`, `ADDR W` or `l|s ADDR [N]` with ADDR in hex: zz"
    );
}

#[test]
fn strace_follows_descriptors_offsets_and_mappings() {
    let input = r#"1234  openat(AT_FDCWD, "/data/a, b", O_RDONLY|O_CLOEXEC) = 3
1234  read(3, "\x7fELF\"\x02"..., 5000) = 5000
1234  read(3, "", 4096) = 0
1234  pread64(3, "..."..., 100, 12288) = 100
1234  lseek(3, 0, SEEK_SET) = 0
1234  read(3, 0x7ffd, 10) = 10
1234  write(1, "hi\n", 3) = 3
1234  openat(AT_FDCWD, "/tmp/out", O_WRONLY|O_CREAT, 0644) = 4
1234  pwrite64(4, "x", 1, 4096) = 1
1234  openat(AT_FDCWD, "/nope", O_RDONLY) = -1 ENOENT (No such file or directory)
1234  mmap(NULL, 8192, PROT_READ, MAP_PRIVATE, 3, 4096) = 0x7f0000000000
1234  mmap(NULL, 4096, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7f0000100000
1234  munmap(0x7f0000000000, 8192) = 0
1234  close(3) = 0
1234  read(3, "", 1) = 0
[pid  1235] 12:34:56.789012 close(4) = 0
1700000000.123456 read(4, "", 1) = 1
1234  --- SIGCHLD {si_signo=SIGCHLD} ---
1234  exit_group(0) = ?
1234  +++ exited with 0 +++
"#;
    let expected = [
        fread(0, 0, 2),
        fread(0, 3, 1),
        fread(0, 0, 1),
        Event::FileWrite { file: 1, page: 1, pages: 1 },
        Event::Mmap { file: 0, page: 1, pages: 2 },
        Event::Munmap { file: 0, page: 1, pages: 2 },
        Event::Exit,
    ];
    check(Format::Strace, input, Options::default(), &[], &[("/data/a, b", 4), ("/tmp/out", 2)], &expected);
    assert_eq!(
        run(Format::Strace, b"read(3, \"abc, 10) = 3\n", Options::default()).unwrap_err(),
        "in:1: unbalanced parentheses or quotes in the arguments: read(3, \"abc, 10) = 3"
    );
    assert_eq!(
        run(Format::Strace, b"open(\"/a\", O_RDONLY) = 3\nread(3, \"\", 4096)\n", Options::default()).unwrap_err(),
        "in:2: expected ` = RESULT` after the arguments: read(3, \"\", 4096)"
    );
    assert_eq!(
        run(Format::Strace, b"this is not strace\n", Options::default()).unwrap_err(),
        "in:1: expected NAME(ARGS) = RESULT: this is not strace"
    );
    assert_eq!(
        run(Format::Strace, b"open(\"/a\", 0) = 3\npread64(3, \"\", 1) = 1\n", Options::default()).unwrap_err(),
        "in:2: pread64: expected an offset as the 4th argument"
    );
}

#[test]
fn text_inputs_must_be_utf8_and_lines_bounded() {
    assert_eq!(run(Format::Pages, b"1\n\xff\xfe\n", Options::default()).unwrap_err(), "in:2: line is not UTF-8 text");
    let long = vec![b'1'; (1 << 20) + 10];
    assert_eq!(run(Format::Pages, &long, Options::default()).unwrap_err(), "in:1: line longer than 1048576 bytes");
}
